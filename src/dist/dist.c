/*
 * dist.c - the distributed DP over MPI (see include/piper/dist.h).
 *
 * The only file that calls MPI.  Per layer of equal-size downsets:
 *   1. split the layer's work into items (downset, k-range) by estimated
 *      cost: across downsets when the layer is wide, inside each downset by
 *      ranges of the device budget k when it is narrow (chain-like graphs);
 *   2. every rank computes its items with pp_dp_compute_rows (pure);
 *   3. the parts are exchanged with MPI_Allgatherv and joined in k order,
 *      so every rank holds identical tables whatever the number of ranks.
 */
#define _POSIX_C_SOURCE 200809L
#include "piper/dist.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "piper/bitset.h"
#include "piper/progress.h"
#include "piper/signals.h"

struct pp_dist {
  MPI_Comm comm;
  int rank, size;
  /* Ranks that take DP work: on each node, as many as it has cores (more
   * would only contend for them); all ranks hold the tables and write. */
  int workers;    /* number of working ranks */
  int worker;     /* this rank's index among them, or -1 */
  MPI_Comm wcomm; /* the working ranks (MPI_COMM_NULL elsewhere) */
  int owned;      /* comm was created by pp_dist_split and is freed with d */
  int all_work;   /* every rank works (pp_dist_world's all_ranks_work) */
};

static int mpi_running(void) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  if (init) MPI_Finalized(&fin);
  return init && !fin;
}

int pp_dist_init_process(int *argc, char ***argv, int use_mpi) {
  if (!use_mpi) return 0;
  int provided;
  return MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS ? 0 : -1;
}

void pp_dist_abort_all(int code) {
  if (mpi_running()) MPI_Abort(MPI_COMM_WORLD, code);
  _exit(code);
}

void pp_dist_finalize_process(void) {
  if (mpi_running()) MPI_Finalize();
}

/* Waits for a non-blocking collective without spinning: a rank that
 * finished its share of a layer early sleeps (up to 1 ms at a time)
 * instead of burning a core that another rank could use. */
static void wait_quietly(MPI_Request *req) {
  int done = 0;
  long ns = 20000;
  for (;;) {
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    if (ns < 1000000) ns *= 2;
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
  s->owned = 1;
  return s;
}

void pp_dist_free(pp_dist *d) {
  if (!d) return;
  if (d->wcomm != MPI_COMM_NULL) MPI_Comm_free(&d->wcomm);
  if (d->owned) MPI_Comm_free(&d->comm);
  free(d);
}
int pp_dist_rank(const pp_dist *d) { return d->rank; }
int pp_dist_workers(const pp_dist *d) { return d->workers; }
int pp_dist_worker(const pp_dist *d) { return d->worker; }
int pp_dist_size(const pp_dist *d) { return d->size; }
const void *pp_dist_comm_handle(const pp_dist *d) {
  return d->comm == MPI_COMM_NULL || d->size == 1 ? NULL : &d->comm;
}

/* pp_dist_agree over any communicator (me = this process's rank in it). */
static pp_status agree_on(MPI_Comm comm, int me, pp_status local, pp_error *err) {
  int n = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &n);
  if (n == 1) return local; /* alone: nothing to combine */
  int mine = local == PP_OK ? INT_MAX : me, first;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
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
  return agree_on(d->comm, d->rank, local, err);
}

void pp_dist_bcast_bytes(pp_dist *d, char **buf, size_t *len) {
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

pp_status pp_dist_load_graph(pp_dist *d, const char *path, FILE *warn, pp_graph **out, pp_error *err) {
  *out = NULL;
  pp_graph *g = NULL;
  pp_status st = PP_OK;
  if (d->rank == 0) st = pp_graph_load_file(path, warn, &g, err);
  if ((st = pp_dist_agree(d, st, err))) {
    pp_graph_free(g);
    return st;
  }
  if (d->size == 1) {
    *out = g;
    return PP_OK;
  }
  char *buf = d->rank == 0 ? g->source_text : NULL;
  size_t len = d->rank == 0 ? g->source_len : 0;
  pp_dist_bcast_bytes(d, &buf, &len);
  if (d->rank != 0) {
    st = pp_graph_load_buffer(path, buf, len, NULL, &g, err);
    free(buf);
  }
  if ((st = pp_dist_agree(d, st, err))) {
    pp_graph_free(g);
    return st;
  }
  *out = g;
  return PP_OK;
}

pp_status pp_dist_downsets(pp_dist *d, const pp_graph *g, long long max_count, pp_downsets **out,
                           pp_error *err) {
  *out = NULL;
  pp_downsets *ds = NULL;
  pp_status st = PP_OK;
  if (d->rank == 0) st = pp_downsets_enumerate(g, max_count, &ds, err);
  if ((st = pp_dist_agree(d, st, err))) {
    pp_downsets_free(ds);
    return st;
  }
  if (d->size == 1) {
    *out = ds;
    return PP_OK;
  }
  char *buf = d->rank == 0 ? (char *)ds->bits : NULL;
  size_t len = d->rank == 0 ? sizeof(uint64_t) * (size_t)ds->count * (size_t)ds->words : 0;
  pp_dist_bcast_bytes(d, &buf, &len);
  if (d->rank != 0) {
    int words = pp_bits_words(g->n_nodes);
    st = pp_downsets_from_bits(g->n_nodes, (int)(len / sizeof(uint64_t) / (size_t)words),
                               (const uint64_t *)buf, &ds, err);
    free(buf);
  }
  if ((st = pp_dist_agree(d, st, err))) {
    pp_downsets_free(ds);
    return st;
  }
  *out = ds;
  return PP_OK;
}

/* ---- table serialisation ---- */

void pp_bytes_put(char **buf, size_t *len, size_t *cap, const void *p, size_t n) {
  if (*len + n > *cap) {
    while (*len + n > *cap) *cap = *cap ? *cap * 2 : 4096;
    *buf = pp_xrealloc(*buf, *cap);
  }
  memcpy(*buf + *len, p, n);
  *len += n;
}

void pp_bytes_get(const char *buf, size_t *pos, void *out, size_t n) {
  memcpy(out, buf + *pos, n);
  *pos += n;
}

void pp_stairs_pack(const pp_stairs *t, int id, char **buf, size_t *len, size_t *cap) {
  int32_t head[4] = {id, t->k_first, t->k_last, t->n_rows};
  int64_t steps = t->row_start[t->n_rows];
  pp_bytes_put(buf, len, cap, head, sizeof head);
  pp_bytes_put(buf, len, cap, &steps, sizeof steps);
  pp_bytes_put(buf, len, cap, t->row_k, sizeof(int) * (size_t)t->n_rows);
  pp_bytes_put(buf, len, cap, t->row_start, sizeof(int) * (size_t)(t->n_rows + 1));
  pp_bytes_put(buf, len, cap, t->s, sizeof(int) * (size_t)steps);
  pp_bytes_put(buf, len, cap, t->v, sizeof(double) * (size_t)steps);
}

pp_stairs *pp_stairs_unpack(const char *buf, size_t len, size_t *pos, int *id) {
  int32_t head[4];
  int64_t steps;
  if (*pos + sizeof head + sizeof steps > len) return NULL;
  memcpy(head, buf + *pos, sizeof head);
  memcpy(&steps, buf + *pos + sizeof head, sizeof steps);
  size_t p = *pos + sizeof head + sizeof steps;
  if (head[3] < 1 || steps < 1 || steps > INT_MAX || head[1] > head[2]) return NULL;
  size_t need = sizeof(int) * (size_t)(2 * head[3] + 1) + (sizeof(int) + sizeof(double)) * (size_t)steps;
  if (p + need > len) return NULL;
  pp_stairs *t = pp_stairs_new(head[1], head[2], head[3], (int)steps);
  memcpy(t->row_k, buf + p, sizeof(int) * (size_t)head[3]);
  p += sizeof(int) * (size_t)head[3];
  memcpy(t->row_start, buf + p, sizeof(int) * (size_t)(head[3] + 1));
  p += sizeof(int) * (size_t)(head[3] + 1);
  memcpy(t->s, buf + p, sizeof(int) * (size_t)steps);
  p += sizeof(int) * (size_t)steps;
  memcpy(t->v, buf + p, sizeof(double) * (size_t)steps);
  p += sizeof(double) * (size_t)steps;
  *pos = p;
  *id = head[0];
  if (t->row_start[0] != 0 || t->row_start[t->n_rows] != steps || t->row_k[0] != t->k_first) {
    pp_stairs_free(t);
    return NULL;
  }
  return t;
}

/* ---- work split ---- */

typedef struct item {
  int id, k0, k1;
} item;

/* Initial estimate of the relative work of budget k: the number of (t, d)
 * that fit in k, plus one for the row itself.  Returns weights w[K + 1]. */
static double *k_work_weights(const pp_graph *g, const pp_problem *p) {
  int K = p->devices, S = pp_problem_max_s(p);
  double *cnt = pp_xcalloc((size_t)K + 2, sizeof(double));
  for (int i = 0; i < g->n_degrees; i++) {
    int t = g->degrees[i];
    if (!pp_problem_allows_t(p, t)) continue;
    for (int dd = 1; dd <= S && (long long)dd * t <= K; dd++) {
      if (!pp_problem_allows_d(p, dd)) continue;
      cnt[dd * t] += 1;
    }
  }
  double *w = pp_xcalloc((size_t)K + 2, sizeof(double));
  double running = 0;
  for (int k = 0; k <= K; k++) {
    running += cnt[k];
    w[k] = running + 1;
  }
  free(cnt);
  return w;
}

/* prefix[k + 1] = sum of w[k'] over k' <= k. */
static void k_prefix(const double *w, int K, double *prefix) {
  prefix[0] = 0;
  for (int k = 0; k <= K; k++) prefix[k + 1] = prefix[k] + w[k];
}

/* After a narrow layer, rescales the weights of each rank's k-range so that
 * their sum matches the time the rank measured: the next layer's ranges
 * then even out the measured cost (the tables do not depend on the split). */
static void k_rebalance(double *w, const double *prefix, const int *k_lo, const int *k_hi,
                        const double *seconds, int P) {
  double total_w = 0, total_t = 0;
  for (int r = 0; r < P; r++) {
    if (k_lo[r] > k_hi[r]) continue;
    total_w += prefix[k_hi[r] + 1] - prefix[k_lo[r]];
    total_t += seconds[r];
  }
  if (total_t <= 0.01 || total_w <= 0) return; /* too short to measure */
  for (int r = 0; r < P; r++) {
    if (k_lo[r] > k_hi[r]) continue;
    double wr = prefix[k_hi[r] + 1] - prefix[k_lo[r]];
    double f = wr > 0 ? (seconds[r] / total_t) / (wr / total_w) : 1;
    if (f < 0.05) f = 0.05;
    if (f > 20) f = 20;
    for (int k = k_lo[r]; k <= k_hi[r]; k++) w[k] *= f;
  }
}

typedef struct weighted {
  int id;
  double w;
} weighted;

/* Heaviest first; equal weights by id. */
static int cmp_weighted(const void *x, const void *y) {
  const weighted *a = x, *b = y;
  if (a->w != b->w) return a->w < b->w ? 1 : -1;
  return (a->id > b->id) - (a->id < b->id);
}

/* Items of rank r for one layer [a, b). */
static int split_layer(const pp_dist *d, const pp_problem *p, const double *work, const double *kprefix,
                       int a, int b, item *out, int *k_lo, int *k_hi) {
  int P = d->workers, n = 0, K = p->devices;
  if (k_lo)
    for (int r = 0; r < P; r++) {
      k_lo[r] = 1;
      k_hi[r] = 0;
    }
  if (b - a >= 2 * P || P == 1) {
    /* wide layer: whole downsets, largest estimated work first, each to the
     * least-loaded rank (ties to the lower id and rank: deterministic) */
    int m = b - a;
    weighted *order = pp_xmalloc(sizeof *order * (size_t)m);
    double *load = pp_xcalloc((size_t)P, sizeof(double));
    for (int i = 0; i < m; i++) order[i] = (weighted){a + i, work[a + i]};
    qsort(order, (size_t)m, sizeof *order, cmp_weighted);
    for (int i = 0; i < m; i++) {
      int best = 0;
      for (int r = 1; r < P; r++)
        if (load[r] < load[best]) best = r;
      load[best] += order[i].w + 1;
      if (best == d->worker) out[n++] = (item){order[i].id, 0, K};
    }
    free(order);
    free(load);
    return n;
  }
  /* narrow layer: every downset split into P ranges of equal k-work */
  double total = kprefix[K + 1];
  int k0 = 0;
  for (int r = 0; r < P; r++) {
    int k1 = K;
    if (r < P - 1) {
      double goal = total * (r + 1) / P;
      int lo = k0, hi = K;
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (kprefix[mid + 1] >= goal)
          hi = mid;
        else
          lo = mid + 1;
      }
      k1 = lo;
    }
    if (k_lo) {
      k_lo[r] = k0;
      k_hi[r] = k1;
    }
    if (r == d->worker && k0 <= k1)
      for (int id = a; id < b; id++) out[n++] = (item){id, k0, k1};
    k0 = k1 + 1;
    if (k0 > K) break;
  }
  return n;
}

/* A received part: the table of one k-range of one downset. */
typedef struct part {
  int id;
  pp_stairs *t;
} part;

static int cmp_part(const void *x, const void *y) {
  const part *a = x, *b = y;
  if (a->id != b->id) return (a->id > b->id) - (a->id < b->id);
  return (a->t->k_first > b->t->k_first) - (a->t->k_first < b->t->k_first);
}

pp_status pp_dist_solve(pp_dist *d, pp_dp *dp, const pp_graph *g, const pp_problem *p, const pp_downsets *ds,
                        int first_layer, pp_progress_fn progress, void *progress_user,
                        pp_layer_done_fn layer_done, void *layer_user, pp_dist_stats *stats, pp_error *err) {
  const double *work = pp_dp_work(dp);
  double *kw = k_work_weights(g, p);
  double *kprefix = pp_xmalloc(sizeof(double) * ((size_t)p->devices + 2));
  int *k_lo = pp_xmalloc(sizeof(int) * (size_t)d->size), *k_hi = pp_xmalloc(sizeof(int) * (size_t)d->size);
  double *secs = pp_xmalloc(sizeof(double) * (size_t)d->size);
  item *items = pp_xmalloc(sizeof(item) * (size_t)(ds->count + 1));
  int *counts = pp_xmalloc(sizeof(int) * (size_t)d->size),
      *displs = pp_xmalloc(sizeof(int) * (size_t)d->size);
  long long *info = pp_xmalloc(sizeof(long long) * 3 * (size_t)d->size);
  part *parts = NULL;
  int parts_cap = 0;
  char *sbuf = NULL, *rbuf = NULL;
  size_t scap = 0, rcap = 0;
  pp_status st = PP_OK;
  double total = 0, done = 0;
  memset(stats, 0, sizeof *stats);
  for (int i = 1; i < ds->count; i++) total += work[i];
  for (int i = 1; i < ds->layer_start[first_layer] && i < ds->count; i++) done += work[i];
  stats->layers_done = first_layer - 1;
  /* Ranks that do not work skip the layers and wait (asleep) below. */
  for (int layer = first_layer; d->worker >= 0 && layer < ds->n_layers; layer++) {
    int a = ds->layer_start[layer], b = ds->layer_start[layer + 1];
    if (a == b) continue;
    if ((size_t)(b - a) * (size_t)d->size > (size_t)ds->count + 1) {
      free(items);
      items = pp_xmalloc(sizeof(item) * (size_t)(b - a) * (size_t)d->size);
    }
    k_prefix(kw, p->devices, kprefix);
    int n = split_layer(d, p, work, kprefix, a, b, items, k_lo, k_hi);
    /* compute */
    double t0 = pp_now();
    size_t slen = 0;
    double mine = 0;
    for (int i = 0; i < n; i++) {
      pp_stairs *t = pp_dp_compute_rows(dp, items[i].id, items[i].k0, items[i].k1);
      pp_stairs_pack(t, items[i].id, &sbuf, &slen, &scap);
      pp_stairs_free(t);
      if (progress && d->rank == 0 && d->size == 1) {
        mine += work[items[i].id];
        progress(progress_user, layer, ds->n_layers - 1, total > 0 ? (done + mine) / total : 1);
      }
    }
    double t1 = pp_now();
    stats->compute_seconds += t1 - t0;
    /* exchange: sizes and stop flags, then the bytes */
    long long my[3] = {(long long)slen, pp_stop_requested(NULL), (long long)((t1 - t0) * 1e6)};
    MPI_Request req;
    if (d->workers == 1) {
      memcpy(info, my, sizeof my);
    } else {
      MPI_Iallgather(my, 3, MPI_LONG_LONG, info, 3, MPI_LONG_LONG, d->wcomm, &req);
      wait_quietly(&req);
    }
    long long sum = 0;
    int stop = 0;
    for (int r = 0; r < d->workers; r++) {
      if (info[3 * r] > INT_MAX || sum + info[3 * r] > INT_MAX) {
        st = pp_error_set(err, PP_ERR_LIMIT,
                          "layer %d exchanges more than 2 GiB; this many ranks x tables is "
                          "not supported",
                          layer);
        goto done;
      }
      counts[r] = (int)info[3 * r];
      displs[r] = (int)sum;
      sum += info[3 * r];
      stop |= info[3 * r + 1] != 0;
    }
    for (int w = 0; w < d->workers; w++) secs[w] = (double)info[3 * w + 2] * 1e-6;
    if (k_lo[0] <= k_hi[0] && d->workers > 1) k_rebalance(kw, kprefix, k_lo, k_hi, secs, d->workers);
    if ((size_t)sum > rcap) {
      free(rbuf);
      rcap = (size_t)sum + 1;
      rbuf = pp_xmalloc(rcap);
    }
    if (d->workers == 1) {
      memcpy(rbuf, sbuf, slen);
    } else {
      MPI_Iallgatherv(sbuf, (int)slen, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, d->wcomm, &req);
      wait_quietly(&req);
    }
    stats->bytes_sent += (double)slen;
    stats->bytes_received += (double)sum - (double)slen;
    /* unpack, group by downset, join in k order (ranks that do not work
     * keep no tables) */
    int n_parts = 0;
    size_t pos = 0;
    while (d->worker >= 0 && pos < (size_t)sum) {
      int id;
      pp_stairs *t = pp_stairs_unpack(rbuf, (size_t)sum, &pos, &id);
      if (!t || id < a || id >= b) {
        pp_stairs_free(t);
        st = pp_error_set(err, PP_ERR_INTERNAL, "malformed table received in layer %d", layer);
        goto done;
      }
      if (n_parts == parts_cap) {
        parts_cap = parts_cap ? 2 * parts_cap : 64;
        parts = pp_xrealloc(parts, sizeof *parts * (size_t)parts_cap);
      }
      parts[n_parts].id = id;
      parts[n_parts].t = t;
      n_parts++;
    }
    qsort(parts, (size_t)n_parts, sizeof *parts, cmp_part);
    for (int i = 0; i < n_parts;) {
      int id = parts[i].id, j = i;
      while (j < n_parts && parts[j].id == id) j++;
      pp_stairs *full = parts[i].t;
      if (j - i > 1) {
        pp_stairs **group = pp_xmalloc(sizeof *group * (size_t)(j - i));
        for (int x = i; x < j; x++) group[x - i] = parts[x].t;
        full = pp_dp_join(dp, group, j - i);
        for (int x = i; x < j; x++) pp_stairs_free(parts[x].t);
        free(group);
      }
      if (full->k_first != 0 || full->k_last != p->devices) {
        pp_stairs_free(full);
        for (int x = j; x < n_parts; x++) pp_stairs_free(parts[x].t);
        st = pp_error_set(err, PP_ERR_INTERNAL, "downset %d: received tables do not cover k = 0..%d", id,
                          p->devices);
        goto done;
      }
      pp_dp_set_table(dp, id, full);
      i = j;
    }
    for (int id = a; id < b; id++) done += work[id];
    stats->exchange_seconds += pp_now() - t1;
    stats->layers_done = layer;
    if (progress && d->rank == 0)
      progress(progress_user, layer, ds->n_layers - 1, total > 0 ? done / total : 1);
    if (layer_done) {
      pp_error e2 = {0};
      st = layer_done(layer_user, layer, stop, &e2);
      if ((st = agree_on(d->wcomm, d->worker, st, &e2))) {
        if (err) *err = e2;
        goto done;
      }
    }
    /* after the last layer there is nothing left to checkpoint: the run
     * finishes and writes its archive instead of stopping */
    if (stop && layer < ds->n_layers - 1) {
      int sig = 0;
      pp_stop_requested(&sig);
      st = pp_error_set(err, PP_ERR_INTERRUPTED, "stopped by a signal after layer %d of %d", layer,
                        ds->n_layers - 1);
      goto done;
    }
  }
done:
  free(kw);
  free(k_lo);
  free(k_hi);
  free(secs);
  free(kprefix);
  free(items);
  free(counts);
  free(displs);
  free(info);
  free(parts);
  free(sbuf);
  free(rbuf);
  /* Everyone meets here: the working ranks after their last layer, the
   * others having slept meanwhile; then all learn how it ended. */
  if (d->size > 1) {
    MPI_Request req;
    MPI_Ibarrier(d->comm, &req);
    wait_quietly(&req);
  }
  return agree_on(d->comm, d->rank, st, err);
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
