/*
 * dist_internal.h - what the files of src/dist share: the communicator
 * wrapper and the MPI helpers.  Private to src/dist.
 */
#ifndef PIPER_DIST_INTERNAL_H
#define PIPER_DIST_INTERNAL_H

#include <mpi.h>

#include "piper/dist.h"

struct pp_dist {
  MPI_Comm comm;
  int rank, size;
  /* Ranks that take DP work: on each node, as many as it has cores (more
   * would only contend for them).  Only they hold the tables. */
  int workers;    /* number of working ranks */
  int worker;     /* this rank's index among them, or -1 */
  MPI_Comm wcomm; /* the working ranks (MPI_COMM_NULL elsewhere) */
  int owned;      /* comm was created by pp_dist_split and is freed with d */
  int all_work;   /* every rank works (pp_dist_world's all_ranks_work) */
};

/* Waits for a non-blocking collective without spinning: a rank that
 * finished its share of a layer early sleeps (up to 1 ms at a time)
 * instead of burning a core that another rank could use. */
void pp_dist_wait_quietly(MPI_Request *req);

/* pp_dist_agree over any communicator (me = this process's rank in it;
 * MPI_COMM_NULL or one rank: returns local).  Collective over comm. */
pp_status pp_dist_agree_on(MPI_Comm comm, int me, pp_status local, pp_error *err);

#endif /* PIPER_DIST_INTERNAL_H */
