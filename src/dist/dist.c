/*
 * dist.c - MPI start-up and shut-down (the fatal path included), the
 * communicator wrapper and its working ranks, and the small collectives
 * the other modules use: the status agreement, the one broadcast
 * (pp_dist_from_root), reductions and the name gather (see
 * include/piper/dist.h).  The layer driver over MPI is in dist_solve.c, the
 * node-shared tables in dist_tables.c, the input's broadcast in
 * dist_input.c, the notes to rank 0 in notes.c.  Only src/dist calls MPI.
 */
#define _POSIX_C_SOURCE 200809L
#include "piper/dist.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "dist_internal.h"
#include "piper/fabric.h"
#include "piper/nodelay.h"

static int mpi_running(void) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  if (init) MPI_Finalized(&fin);
  return init && !fin;
}

/* Open MPI 4.1 opens every message layer it has before it picks one.  Two
 * of them serve fabrics only: "cm" (PSM, PSM2, OFI) loads and probes their
 * libraries, 0.2 s of the 0.23 s MPI_Init took here (Debian's Open MPI 4.1,
 * a host without such a device), and "ucx" starts UCX, installs its memory
 * hooks and then declines every transport of such a host (self, tcp, sysv,
 * posix, cma: "did not match transport list" with
 * OMPI_MCA_pml_ucx_verbose=3).  Both step aside for "ob1", the layer over
 * Open MPI's own transports (OMPI_MCA_btl).  Where no fabric device is
 * visible and the user chose neither the message layer (OMPI_MCA_pml) nor
 * its transports (OMPI_MCA_mtl), "ob1" is named before MPI starts: the
 * layer chosen is the same, and a plan of BERT-32 at K = 64 under mpiexec
 * took 9 ms less on 1 and on 2 ranks than with only "cm" left out (medians
 * of 20 interleaved runs).  Other MPIs ignore the variable. */
static void skip_unused_fabric_probe(void) {
  if (getenv("OMPI_MCA_pml") || getenv("OMPI_MCA_mtl")) return;
  if (pp_fabric_visible("/sys/class/infiniband", "/dev")) return;
  (void)setenv("OMPI_MCA_pml", "ob1", 0);
}

/* Under mpiexec, Open MPI 4.1's launcher serves the job's data to its
 * processes through PMIx 4.2, by default from a store in shared memory
 * (PMIx's "ds21") that it builds when the first process of the job asks:
 * two files of 4 MiB in its session folder under /tmp, mapped and written
 * (strace here: 13 ms after each is mapped before the launcher's next
 * system call, /tmp on an ext4 disk), while that process waits in
 * MPI_Init.  A process that asks for the store in its own memory instead
 * ("hash", always there) gets the same data in the reply, and the
 * launcher builds no files for it: a plan of BERT-32 at K = 64 (N = 512)
 * under mpiexec took 0.155 s against 0.188 s on one rank and 0.18 s
 * against 0.22 s on two (bench/results-startup.txt).  The shared store
 * saves memory where hundreds of processes share a node; a user who
 * wants it back sets PMIX_MCA_gds, which is then left alone. */
static void keep_pmix_store_in_process(void) { (void)setenv("PMIX_MCA_gds", "hash", 0); }

int pp_dist_init_process(int *argc, char ***argv, int use_mpi) {
  if (!use_mpi) return 0;
  skip_unused_fabric_probe();
  keep_pmix_store_in_process();
#ifdef PR_SET_TIMERSLACK
  /* The waits sleep 20 us at a time (pp_dist_wait_quietly); Linux lets a
   * sleep end up to the timer slack late, 50 us by default: nanosleep of
   * 20 us took 79 us here, 26 us with a slack of 1 us. */
  (void)prctl(PR_SET_TIMERSLACK, 1000UL);
#endif
  int provided;
  return MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS ? 0 : -1;
}

void pp_dist_abort_all(int code) {
  if (mpi_running()) MPI_Abort(MPI_COMM_WORLD, code);
  _exit(code);
}

/* Open MPI 4.1 talks to its launcher through PMIx 4.2 over a loopback TCP
 * socket without TCP_NODELAY.  MPI_Finalize sends it a few short messages
 * in a row: the second waits (Nagle's algorithm) for the acknowledgement of
 * the first, which the launcher delays, and the last one's answer comes
 * 40 ms later (strace here: 45 ms of MPI_Finalize, of which 41 ms waiting
 * for that answer; with the option set, 3 ms).  Before MPI_Finalize the
 * process's TCP sockets get the option: messages only leave sooner, and a
 * process without TCP sockets is left as it was. */
void pp_dist_finalize_process(void) {
  if (!mpi_running()) return;
  (void)pp_tcp_nodelay_all("/proc/self/fd");
  MPI_Finalize();
}

void pp_dist_wait_quietly(MPI_Request *req) {
  int done = 0;
  /* most waits within a layer are short (the other ranks are a step
   * behind): polled for 0.5 ms, they end without a sleep's late wake-up;
   * then short sleeps for up to 5 ms (a wait between two ranks' shares of
   * a layer), longer ones after that (a rank idle while the others work) */
  const double start = MPI_Wtime();
  do {
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return;
  } while (MPI_Wtime() < start + 5e-4);
  long ns = 20000;
  for (;;) {
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    if (ns < 250000 && MPI_Wtime() > start + 5e-3) ns *= 2;
  }
}

/* The one process of a run without MPI: every collective is local. */
static pp_dist *serial(void) {
  pp_dist *d = pp_xcalloc(1, sizeof *d);
  d->comm = d->wcomm = MPI_COMM_NULL;
  d->size = d->workers = 1;
  return d;
}

static pp_dist *wrap(MPI_Comm comm, int all_ranks_work) {
  if (!mpi_running()) return serial();
  pp_dist *d = pp_xcalloc(1, sizeof *d);
  d->comm = comm;
  MPI_Comm_rank(comm, &d->rank);
  MPI_Comm_size(comm, &d->size);
  MPI_Comm node;
  int local = 0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  d->all_work = all_ranks_work;
  int mine = all_ranks_work || cores < 1 || local < cores;
  int *flags = pp_xmalloc(sizeof(int) * (size_t)d->size);
  MPI_Allgather(&mine, 1, MPI_INT, flags, 1, MPI_INT, comm);
  d->worker = -1;
  for (int r = 0; r < d->size; r++)
    if (flags[r]) {
      if (r == d->rank) d->worker = d->workers;
      d->workers++;
    }
  free(flags);
  MPI_Comm_split(comm, mine ? 0 : MPI_UNDEFINED, d->rank, &d->wcomm);
  return d;
}

pp_dist *pp_dist_world(int all_ranks_work) { return wrap(MPI_COMM_WORLD, all_ranks_work); }

pp_dist *pp_dist_split(pp_dist *d, int color, int key) {
  if (d->comm == MPI_COMM_NULL) return serial();
  MPI_Comm sub;
  MPI_Comm_split(d->comm, color, key, &sub);
  pp_dist *s = wrap(sub, d->all_work);
  s->node_group = d->node_group;
  s->mpi_windows = d->mpi_windows;
  s->owned = 1;
  return s;
}

void pp_dist_free(pp_dist *d) {
  if (!d) return;
  pp_dist_release_tables(d);
  if (d->wcomm != MPI_COMM_NULL) MPI_Comm_free(&d->wcomm);
  if (d->owned) MPI_Comm_free(&d->comm);
  free(d);
}
void pp_dist_emulate_node_size(pp_dist *d, int n) { d->node_group = n > 0 ? n : 0; }
void pp_dist_use_mpi_windows(pp_dist *d, int on) { d->mpi_windows = on != 0; }
int pp_dist_rank(const pp_dist *d) { return d->rank; }
int pp_dist_workers(const pp_dist *d) { return d->workers; }
int pp_dist_worker(const pp_dist *d) { return d->worker; }
int pp_dist_size(const pp_dist *d) { return d->size; }
const void *pp_dist_comm_handle(const pp_dist *d) {
  return d->comm == MPI_COMM_NULL || d->size == 1 ? NULL : &d->comm;
}

pp_status pp_dist_agree_on(MPI_Comm comm, int me, pp_status local, pp_error *err) {
  int n = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &n);
  if (n == 1) return local; /* alone: nothing to combine */
  int mine = local == PP_OK ? INT_MAX : me, first;
  MPI_Request req; /* non-blocking, so that a rank that arrives early sleeps */
  MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm, &req);
  pp_dist_wait_quietly(&req);
  if (first == INT_MAX) return PP_OK;
  pp_error e;
  memset(&e, 0, sizeof e);
  if (me == first && err) e = *err;
  e.code = local;
  MPI_Bcast(&e, (int)sizeof e, MPI_BYTE, first, comm);
  if (err) *err = e;
  return e.code;
}

pp_status pp_dist_agree(pp_dist *d, pp_status local, pp_error *err) {
  return pp_dist_agree_on(d->comm, d->rank, local, err);
}

/* Rank 0's buffer (*buf, *len) is sent to every rank; on the others *buf
 * is a new allocation (caller frees) and *len set.  Collective; its only
 * user is send_from_root. */
static void bcast_bytes(pp_dist *d, char **buf, size_t *len) {
  if (d->size == 1) return;
  unsigned long long n = d->rank == 0 ? (unsigned long long)*len : 0;
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, d->comm);
  if (d->rank != 0) {
    *buf = pp_xmalloc((size_t)n + 1);
    *len = (size_t)n;
  }
  for (unsigned long long off = 0; off < n;) {
    int chunk = n - off > (1u << 30) ? (1 << 30) : (int)(n - off);
    MPI_Bcast(*buf + off, chunk, MPI_BYTE, 0, d->comm);
    off += (unsigned long long)chunk;
  }
}

/* pp_dist_from_root and pp_dist_to_all: rank 0 consumes its own bytes too
 * when root_too. */
static pp_status send_from_root(pp_dist *d, pp_dist_produce_fn produce, pp_dist_consume_fn consume,
                                void *user, int root_too, pp_error *err) {
  pp_pack out;
  pp_pack_init(&out);
  pp_status st = d->rank == 0 ? produce(user, d->size > 1 ? &out : NULL, err) : PP_OK;
  if ((st = pp_dist_agree(d, st, err)) || d->size == 1) {
    pp_pack_free(&out);
    return st;
  }
  char *buf = out.buf;
  size_t len = out.len;
  bcast_bytes(d, &buf, &len);
  if (d->rank != 0 || root_too) {
    pp_unpack in;
    pp_unpack_init(&in, buf, len);
    st = consume(user, &in, err);
  }
  if (d->rank != 0) free(buf);
  pp_pack_free(&out);
  return pp_dist_agree(d, st, err);
}

pp_status pp_dist_from_root(pp_dist *d, pp_dist_produce_fn produce, pp_dist_consume_fn consume, void *user,
                            pp_error *err) {
  return send_from_root(d, produce, consume, user, 0, err);
}

pp_status pp_dist_to_all(pp_dist *d, pp_dist_produce_fn produce, pp_dist_consume_fn consume, void *user,
                         pp_error *err) {
  return send_from_root(d, produce, consume, user, 1, err);
}

double pp_dist_sum(pp_dist *d, double x) {
  if (d->size == 1) return x;
  double y;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, d->comm);
  return y;
}

double pp_dist_max(pp_dist *d, double x) {
  if (d->size == 1) return x;
  double y;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, d->comm);
  return y;
}

char *pp_dist_allgather_names(pp_dist *d, const char *mine, int width) {
  char *one = pp_xcalloc((size_t)width, 1);
  snprintf(one, (size_t)width, "%s", mine);
  char *all = pp_xcalloc((size_t)width * (size_t)d->size, 1);
  if (d->size == 1) {
    memcpy(all, one, (size_t)width);
    free(one);
    return all;
  }
  MPI_Allgather(one, width, MPI_CHAR, all, width, MPI_CHAR, d->comm);
  free(one);
  return all;
}
