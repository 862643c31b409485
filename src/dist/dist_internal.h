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
  int workers;                   /* number of working ranks */
  int worker;                    /* this rank's index among them, or -1 */
  MPI_Comm wcomm;                /* the working ranks (MPI_COMM_NULL elsewhere) */
  int owned;                     /* comm was created by pp_dist_split and is freed with d */
  int all_work;                  /* every rank works (pp_dist_world's all_ranks_work) */
  struct pp_dist_tables *tables; /* the node's shared tables, once created */
  int node_group;                /* > 0: treat each node as nodes of this many working ranks (tests) */
  int mpi_windows;               /* keep the shared tables in MPI windows only (tests) */
};

/* The shared tables of the working ranks (dist_tables.c). */
typedef struct pp_dist_tables pp_dist_tables;

/* Collective over the working ranks on the first call: this rank's node
 * store (created then, empty). */
pp_dist_tables *pp_dist_tables_of(pp_dist *d);

/* Collective over the working ranks: the exchange of one layer.  info[3w]
 * holds the bytes of working rank w (all <= INT_MAX in total); buf[len]
 * are this rank's.  On every working rank, *rbuf[*rlen] become every
 * working rank's bytes (valid until the next call; owned by the node's
 * store). */
void pp_dist_tables_gather(pp_dist *d, const long long *info, const char *buf, size_t len, const char **rbuf,
                           size_t *rlen);

/* Collective over the working ranks: the ranks of each node share the
 * join of the parts in buf[len] (the same bytes on every rank of the node)
 * by ranges of downsets, each writing its tables of downsets a..b-1 into
 * the node's shared memory; every rank of the node then views them all in
 * its dp.  Returns the node's agreed status (pp_layer_install's failures:
 * the lowest failing rank's). */
pp_status pp_dist_tables_install(pp_dist *d, pp_dp *dp, int a, int b, int K, const char *buf, size_t len,
                                 pp_status bad_code, const char *what, pp_error *err);

/* pp_dist_tables_install when the working ranks are one node and each
 * kept the parts it computed (pp_layer_comm.keep): buf[len] holds every
 * part's tail (pp_stairs_pack_tail, the same bytes on every rank), kept
 * this rank's parts (their tables are taken: set to NULL).  Collective
 * over the working ranks (one node); the same status as
 * pp_dist_tables_install. */
pp_status pp_dist_tables_install_kept(pp_dist *d, pp_dp *dp, int a, int b, int K, const char *buf, size_t len,
                                      pp_layer_kept *kept, int n_kept, pp_status bad_code, const char *what,
                                      pp_error *err);

/* Maps in (pp_map_in) the next 64 KB of the node's newest window that the
 * coming layers will write (up to twice the last layer's bytes, at least
 * 8 MB, past what is used), for a rank that would otherwise wait: returns
 * 1 if it did, 0 if there is nothing left to map in or it failed.  The
 * pages' contents are untouched.  Not collective. */
int pp_dist_tables_prefault(pp_dist *d);

/* The communicator of this rank's node (the working ranks that share its
 * tables; emulated nodes included), its size, the node index of every
 * working rank (node_of[workers], valid while t lives) and the number of
 * nodes.  Not collective. */
MPI_Comm pp_dist_tables_node(pp_dist_tables *t, int *node_size, const int **node_of, int *n_nodes);

/* Collective over node: an MPI window of shared memory of `bytes` bytes
 * (displacement unit `unit`), all held by the node's rank 0 and locked for
 * passive access (MPI_Win_lock_all); returns its address in this process.
 * A window that cannot be made (e.g. /dev/shm full, or ulimit -v) is the
 * documented out-of-memory exit (pp_fatal_out_of_memory), not MPI's
 * abort.  The caller unlocks (MPI_Win_unlock_all) and frees it
 * (MPI_Win_free, collective over node).  For the node's tables (where a
 * block of pp_shared_pages cannot be shared) and its claim counters. */
void *pp_dist_node_window(MPI_Comm node, size_t bytes, int unit, MPI_Win *win);

/* Work shared within a node (dist_claim.c): a small shared-memory window
 * per node with a stop flag and counters per layer and segment of its list
 * (pp_layer_split_shared), from which the node's ranks take the layer's
 * items. */
typedef struct pp_dist_claim pp_dist_claim;

/* Collective over the working ranks: the node's window, with counters for
 * layers 0..n_layers - 1 and segments 0..node_size - 1 (one per working
 * rank of the node, pp_dist_tables_node), all zero.  Free with
 * pp_dist_claim_free (collective over the working ranks). */
pp_dist_claim *pp_dist_claim_new(pp_dist *d, int n_layers);
void pp_dist_claim_free(pp_dist_claim *c);

/* Takes one item of segment `segment` (of len items) of the layer's list
 * on this node (atomic compare-and-swap on the node's counters of that
 * segment), from its front (back = 0) or its back (back = 1): returns its
 * position counted from that end, or -1 once the segment's items are all
 * taken (or there is no such layer or segment).  Not collective. */
long long pp_dist_claim_take(pp_dist_claim *c, int layer, int segment, long long len, int back);

/* 1 if a stop was requested in this process (pp_stop_requested) or by
 * another rank of the node (which then set the node's flag; this call sets
 * it on a request of its own).  Not collective. */
int pp_dist_claim_stop(pp_dist_claim *c);

/* Waits for a non-blocking collective with little spinning: it polls for
 * 0.5 ms (most waits inside a layer are that short), then a rank that
 * finished its share of a layer early sleeps instead of burning a core that
 * another rank could use: 20 us at a time for the first 5 ms (a wait for
 * the other ranks' shares, whose end a longer sleep would miss by up to
 * its length), then doubling up to 0.25 ms (a rank idle for longer). */
void pp_dist_wait_quietly(MPI_Request *req);

/* pp_dist_agree over any communicator (me = this process's rank in it;
 * MPI_COMM_NULL or one rank: returns local).  Collective over comm. */
pp_status pp_dist_agree_on(MPI_Comm comm, int me, pp_status local, pp_error *err);

#endif /* PIPER_DIST_INTERNAL_H */
