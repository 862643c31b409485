/*
 * notes.c - small point-to-point messages to rank 0 (see dist.h): how far
 * groups of ranks that work apart (e.g. `piper sweep`'s teams) have come,
 * so that rank 0 can report progress over all of them.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <time.h>

#include "piper/dist.h"

#define NOTE_TAG 7301

void pp_dist_note_send(pp_dist *d, double value) {
  const MPI_Comm *comm = pp_dist_comm_handle(d);
  if (!comm || pp_dist_rank(d) == 0) return;
  MPI_Send(&value, 1, MPI_DOUBLE, 0, NOTE_TAG, *comm);
}

int pp_dist_note_poll(pp_dist *d, double *value) {
  const MPI_Comm *comm = pp_dist_comm_handle(d);
  if (!comm || pp_dist_rank(d) != 0) return 0;
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, NOTE_TAG, *comm, &flag, &status);
  if (!flag) return 0;
  MPI_Recv(value, 1, MPI_DOUBLE, status.MPI_SOURCE, NOTE_TAG, *comm, MPI_STATUS_IGNORE);
  return 1;
}

/* Sleeps 1 ms: waiting ranks must not spin on a core that a working rank
 * could use (blocking MPI calls busy-poll in Open MPI). */
static void nap(void) {
  struct timespec ts = {0, 1000000};
  nanosleep(&ts, NULL);
}

double pp_dist_note_wait(pp_dist *d) {
  double value = 0;
  if (!pp_dist_comm_handle(d) || pp_dist_rank(d) != 0) return value;
  while (!pp_dist_note_poll(d, &value)) nap();
  return value;
}

void pp_dist_wait_all(pp_dist *d) {
  const MPI_Comm *comm = pp_dist_comm_handle(d);
  if (!comm || pp_dist_size(d) == 1) return;
  MPI_Request req;
  MPI_Ibarrier(*comm, &req);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    nap();
  }
}
