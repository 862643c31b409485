/*
 * dist_solve.c - the layer driver (include/piper/layer.h) over MPI: the
 * exchange of one layer's packed tables among the working ranks, and the
 * agreement that keeps them in step (see include/piper/dist.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_internal.h"
#include "piper/signals.h"

/* The MPI side of pp_layer_comm, over the working ranks' communicator. */
typedef struct mpi_layer {
  pp_dist *d;
  long long *info; /* [3 * workers] bytes, stop flag, microseconds */
  long long *got;  /* [6 * workers] the same, the k-range computed and CPU microseconds */
  int K;
  pp_dist_claim *claim; /* the node's shared counters and stop flag, from the second layer on */
  int keep;             /* one node: each rank places its own parts (pp_layer_comm.keep) */
  int n_layers;
} mpi_layer;

/* The node's window is created at the first claim, in the second layer
 * computed (the driver deals the first one statically): every rank of the
 * node claims at least once per layer, so all reach the collective
 * creation. */
static long long mpi_claim(void *self, int layer, int segment, long long len, int back) {
  mpi_layer *m = self;
  if (!m->claim) m->claim = pp_dist_claim_new(m->d, m->n_layers);
  return pp_dist_claim_take(m->claim, layer, segment, len, back);
}

static int mpi_poll(void *self) {
  mpi_layer *m = self;
  return m->claim ? pp_dist_claim_stop(m->claim) : pp_stop_requested(NULL);
}

static int serial_poll(void *self) { return pp_stop_requested(NULL); }

/* Sizes, stop flags and times first, among all working ranks; then the
 * bytes, to the node leaders (pp_dist_tables_gather).  Every working rank
 * sees the same sizes, so all take the same decision on the 2 GiB limit of
 * one all-gather. */
static pp_status mpi_exchange(void *self, int layer, const pp_layer_report *mine, const char *buf, size_t len,
                              pp_layer_report *all, const char **rbuf, size_t *rlen, pp_error *err) {
  mpi_layer *m = self;
  const pp_dist *d = m->d;
  long long my[6] = {mine->bytes, mine->stop, (long long)(mine->seconds * 1e6),
                     mine->k_lo,  mine->k_hi, (long long)(mine->cpu * 1e6)};
  MPI_Request req;
  MPI_Iallgather(my, 6, MPI_LONG_LONG, m->got, 6, MPI_LONG_LONG, d->wcomm, &req);
  int done = 0; /* (while the others finish their shares, the window's next pages are mapped in) */
  MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  while (!done && pp_dist_tables_prefault(m->d)) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  if (!done) pp_dist_wait_quietly(&req);
  long long sum = 0;
  for (int r = 0; r < d->workers; r++) {
    for (int f = 0; f < 3; f++) m->info[3 * r + f] = m->got[6 * r + f];
    const long long n = m->info[3 * r];
    if (n > INT_MAX || sum + n > INT_MAX)
      return pp_error_set(err, PP_ERR_LIMIT,
                          "layer %d exchanges more than 2 GiB; this many ranks x tables is not supported",
                          layer);
    sum += n;
    all[r] = (pp_layer_report){n,
                               (int)m->info[3 * r + 1],
                               (double)m->info[3 * r + 2] * 1e-6,
                               (int)m->got[6 * r + 3],
                               (int)m->got[6 * r + 4],
                               (double)m->got[6 * r + 5] * 1e-6};
  }
  pp_dist_tables_gather(m->d, m->info, buf, len, rbuf, rlen);
  return PP_OK;
}

static pp_status mpi_install(void *self, pp_dp *dp, int a, int b, const char *rbuf, size_t rlen,
                             pp_layer_kept *kept, int n_kept, int layer, pp_error *err) {
  mpi_layer *m = self;
  char what[48];
  snprintf(what, sizeof what, "layer %d", layer);
  if (m->keep)
    return pp_dist_tables_install_kept(m->d, dp, a, b, m->K, rbuf, rlen, kept, n_kept, PP_ERR_INTERNAL, what,
                                       err);
  return pp_dist_tables_install(m->d, dp, a, b, m->K, rbuf, rlen, PP_ERR_INTERNAL, what, err);
}

static pp_status mpi_agree(void *self, pp_status local, pp_error *err) {
  mpi_layer *m = self;
  return pp_dist_agree_on(m->d->wcomm, m->d->worker, local, err);
}

pp_status pp_dist_solve(pp_dist *d, pp_dp *dp, const pp_graph *g, const pp_problem *p, const pp_downsets *ds,
                        int first_layer, pp_progress_fn progress, void *progress_user,
                        pp_layer_done_fn layer_done, void *layer_user, pp_dist_stats *stats, pp_error *err) {
  memset(stats, 0, sizeof *stats);
  stats->layers_done = first_layer - 1;
  pp_status st = PP_OK;
  if (d->worker >= 0) { /* the others skip the layers and wait (asleep) below */
    const size_t W = (size_t)d->workers;
    mpi_layer m = {.d = d,
                   .info = pp_xmalloc(sizeof(long long) * 3 * W),
                   .got = pp_xmalloc(sizeof(long long) * 6 * W),
                   .K = p->devices};
    pp_layer_comm comm = pp_layer_serial(); /* one working rank: the serial solve */
    if (d->workers > 1) {
      /* the nodes split each layer deterministically; within a node the
       * ranks take the node's items from a shared counter */
      int node_size, n_nodes;
      const int *node_of;
      pp_dist_tables_node(pp_dist_tables_of(d), &node_size, &node_of, &n_nodes);
      m.n_layers = ds->n_layers;
      /* on one node every part's table is computed by a rank that maps the
       * node's window: it writes its own parts there, and the others need
       * only their tails; across nodes the leaders carry whole parts */
      m.keep = n_nodes == 1;
      comm = (pp_layer_comm){.parts = d->workers,
                             .me = d->worker,
                             .claim = mpi_claim,
                             .groups = n_nodes,
                             .group = node_of[d->worker],
                             .members = node_size,
                             .group_of = node_of,
                             .keep = m.keep,
                             .exchange = mpi_exchange,
                             .install = mpi_install,
                             .agree = mpi_agree,
                             .self = &m};
    }
    const pp_layer_hooks hooks = {.progress = d->rank == 0 ? progress : NULL,
                                  .progress_user = progress_user,
                                  .fine = d->size == 1,
                                  .poll = d->workers > 1 ? mpi_poll : serial_poll,
                                  .poll_user = &m,
                                  .layer_done = layer_done,
                                  .layer_user = layer_user};
    st = pp_layer_run(dp, g, p, ds, first_layer, &comm, &hooks, stats, err);
    pp_dist_claim_free(m.claim);
    free(m.info);
    free(m.got);
  }
  /* Everyone meets here: the working ranks after the same last layer (the
   * driver agreed on every layer's status among them), the others having
   * slept meanwhile; then all learn how it ended. */
  if (d->size > 1) {
    MPI_Request req;
    MPI_Ibarrier(d->comm, &req);
    pp_dist_wait_quietly(&req);
  }
  return pp_dist_agree_on(d->comm, d->rank, st, err);
}

pp_status pp_dist_install(pp_dist *d, pp_dp *dp, int a, int b, int K, const char *buf, size_t len,
                          pp_status bad_code, const char *what, pp_error *err) {
  pp_status st = PP_OK;
  if (d->worker >= 0 && d->workers > 1)
    st = pp_dist_tables_install(d, dp, a, b, K, buf, len, bad_code, what, err);
  else if (d->worker >= 0)
    st = pp_layer_install(buf, len, a, b, K, dp, pp_layer_sink_dp, dp, bad_code, what, err);
  return pp_dist_agree(d, st, err);
}
