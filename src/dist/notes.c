/*
 * notes.c - small point-to-point messages to rank 0 (see dist.h): how far
 * groups of ranks that work apart (e.g. `piper sweep`'s teams) have come,
 * so that rank 0 can report progress over all of them.
 */
#include <mpi.h>

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

double pp_dist_note_wait(pp_dist *d) {
  const MPI_Comm *comm = pp_dist_comm_handle(d);
  double value = 0;
  if (!comm || pp_dist_rank(d) != 0) return value;
  MPI_Recv(&value, 1, MPI_DOUBLE, MPI_ANY_SOURCE, NOTE_TAG, *comm, MPI_STATUS_IGNORE);
  return value;
}
