/*
 * layer.c - the one layer-by-layer driver of the DP (see
 * include/piper/layer.h): split, compute, exchange, install, agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "piper/layer.h"
#include "piper/progress.h"

static pp_status serial_exchange(void *self, int layer, const pp_layer_report *mine, const char *buf,
                                 size_t len, pp_layer_report *all, const char **rbuf, size_t *rlen,
                                 pp_error *err) {
  all[0] = *mine;
  *rbuf = buf;
  *rlen = len;
  return PP_OK;
}

static pp_status serial_agree(void *self, pp_status local, pp_error *err) { return local; }

pp_layer_comm pp_layer_serial(void) {
  return (pp_layer_comm){.parts = 1, .me = 0, .keep = 1, .exchange = serial_exchange, .agree = serial_agree};
}

static pp_status default_install(pp_dp *dp, int a, int b, int K, const char *rbuf, size_t rlen, int layer,
                                 pp_error *err) {
  char what[48];
  snprintf(what, sizeof what, "layer %d", layer);
  return pp_layer_install(rbuf, rlen, a, b, K, dp, pp_layer_sink_dp, dp, PP_ERR_INTERNAL, what, err);
}

/* State of one run, shared by the steps below. */
typedef struct run {
  pp_dp *dp;
  const pp_downsets *ds;
  const pp_layer_comm *c;
  const pp_layer_hooks *h;
  pp_layer_stats *stats;
  int K;
  double total, done; /* estimated work: all, and of the layers installed */
  pp_pack send;
  pp_layer_kept *kept; /* with comm->keep: the parts computed in this layer */
  int n_kept;
  pp_layer_item *items;
  pp_layer_report *reports;
  int first;  /* the first non-empty layer of the run */
  int *seg;   /* with claims: [members + 1] the segments of the layer's list (pp_layer_split_shared) */
  int member; /* with claims: this participant's index among its group's members */
  pp_layer_split *own; /* with claims: the split among the participants, for that layer */
} run;

/* Kept parts in downset order, each downset's in k order. */
static int cmp_kept(const void *x, const void *y) {
  const pp_layer_item *a = &((const pp_layer_kept *)x)->it, *b = &((const pp_layer_kept *)y)->it;
  if (a->id != b->id) return (a->id > b->id) - (a->id < b->id);
  return (a->k0 > b->k0) - (a->k0 < b->k0);
}

/* The install of a participant that keeps its parts and has no install of
 * its own (one participant, pp_layer_serial): every downset a..b-1 is
 * among its parts, as k-ranges that tile 0..K; a whole table is set as it
 * is (no round trip through packed bytes), parts are joined first. */
static pp_status install_kept(run *r, int a, int b, int layer, pp_error *err) {
  qsort(r->kept, (size_t)r->n_kept, sizeof *r->kept, cmp_kept);
  pp_stairs **group = pp_xmalloc(sizeof *group * ((size_t)r->n_kept + 1));
  pp_status st = PP_OK;
  int i = 0;
  for (int id = a; id < b && !st; id++) {
    int j = i;
    while (j < r->n_kept && r->kept[j].it.id == id &&
           r->kept[j].it.k0 == (j > i ? r->kept[j - 1].it.k1 + 1 : 0))
      j++;
    if (j == i || r->kept[j - 1].it.k1 != r->K) {
      st = pp_error_set(err, PP_ERR_INTERNAL, "layer %d: the parts computed do not tile downset %d", layer,
                        id);
      break;
    }
    for (int x = i; x < j; x++) group[x - i] = r->kept[x].table;
    pp_dp_set_table(r->dp, id, j - i == 1 ? group[0] : pp_dp_join(r->dp, group, j - i));
    if (j - i == 1) r->kept[i].table = NULL; /* taken; joined parts are freed by drop_kept */
    i = j;
  }
  if (!st && i != r->n_kept)
    st = pp_error_set(err, PP_ERR_INTERNAL, "layer %d: parts computed beyond its downsets", layer);
  free(group);
  return st;
}

/* Frees the kept parts that the install did not take. */
static void drop_kept(run *r) {
  for (int i = 0; i < r->n_kept; i++) pp_stairs_free(r->kept[i].table);
  r->n_kept = 0;
}

/* Where a participant takes a shared layer's items from: segment seg, from
 * its front or (back = 1) its back; tried counts the segments it found
 * empty. */
typedef struct taker {
  int seg, back, tried;
} taker;

/* The next item of a shared layer for this participant (pp_layer_comm.
 * claim): from the front of its own segment, then from the backs of the
 * others in turn (segments seg[members + 1] of the list); -1 once all are
 * empty. */
static long long take(const pp_layer_comm *c, int layer, const int *seg, taker *t) {
  while (t->tried < c->members) {
    const long long len = seg[t->seg + 1] - seg[t->seg];
    const long long at = len > 0 ? c->claim(c->self, layer, t->seg, len, t->back) : -1;
    if (at >= 0 && at < len) return t->back ? seg[t->seg + 1] - 1 - at : seg[t->seg] + at;
    t->seg = (t->seg + 1) % c->members;
    t->back = 1;
    t->tried++;
  }
  return -1;
}

/* The next item index of this participant in the layer (after i; -1 or
 * at least n when there is none). */
static long long next_item(run *r, int shared, int layer, long long i, taker *t) {
  return shared ? take(r->c, layer, r->seg, t) : i + 1;
}

static int poll_stop(const run *r) { return r->h->poll && r->h->poll(r->h->poll_user); }

/* Computes and packs (or, with keep, keeps) this participant's items (its own share, or the ones
 * it claims of its group's); returns its report.  A stop request while
 * items remain abandons them (report.stop = 2). */
static pp_layer_report compute(run *r, pp_layer_split *split, int layer, int a, int b) {
  const double *work = pp_dp_work(r->dp);
  const pp_layer_comm *c = r->c;
  const int shared = c->claim && layer != r->first; /* (the first layer: each its own share) */
  const int n = shared ? pp_layer_split_shared(split, work, a, b, c->group, c->members, r->items, r->seg)
                       : pp_layer_split_items(c->claim ? r->own : split, work, a, b, c->me, r->items);
  taker tk = {r->member, 0, 0};
  const double t0 = pp_now(), c0 = pp_cpu_now();
  double mine = 0;
  int abandoned = 0, id = -1, several = 0, k_lo = 1, k_hi = 0, k_rows = 0;
  r->send.len = 0;
  for (long long i = next_item(r, shared, layer, -1, &tk); i >= 0 && i < n;
       i = next_item(r, shared, layer, i, &tk)) {
    const pp_layer_item *it = &r->items[i];
    /* the k-range reported (see pp_layer_split_learn) */
    several |= id >= 0 && id != it->id;
    if (id < 0 || it->k0 < k_lo) k_lo = it->k0;
    if (id < 0 || it->k1 > k_hi) k_hi = it->k1;
    k_rows += it->k1 - it->k0 + 1;
    id = it->id;
    pp_stairs *t = poll_stop(r) ? NULL : pp_dp_compute_rows(r->dp, it->id, it->k0, it->k1);
    if (!t) { /* a stop request: the layer is abandoned */
      abandoned = 1;
      break;
    }
    if (c->keep) {
      pp_dp_pack_tail(r->dp, t, it->id, &r->send);
      r->kept[r->n_kept++] = (pp_layer_kept){*it, t};
    } else {
      pp_stairs_pack(t, it->id, &r->send);
      pp_stairs_free(t);
    }
    if (r->h->progress && r->h->fine) {
      mine += work[it->id];
      r->h->progress(r->h->progress_user, layer, r->ds->n_layers - 1,
                     r->total > 0 ? (r->done + mine) / r->total : 1);
    }
  }
  const double secs = pp_now() - t0;
  r->stats->compute_seconds += secs;
  if (several || k_rows != k_hi - k_lo + 1) k_lo = 1, k_hi = 0; /* several downsets, or not one range */
  return (pp_layer_report){(long long)r->send.len, abandoned ? 2 : poll_stop(r), secs, k_lo, k_hi,
                           pp_cpu_now() - c0};
}

/* A layer that a participant abandoned: nothing is installed; the layers
 * before it are complete (layer_done with stopping = 1, e.g. a checkpoint). */
static pp_status abandon_layer(run *r, int layer, pp_error *err) {
  pp_status st = PP_OK;
  if (r->h->layer_done) st = r->h->layer_done(r->h->layer_user, layer - 1, 1, err);
  if ((st = r->c->agree(r->c->self, st, err))) return st;
  if (layer - 1 < 1)
    return pp_error_set(err, PP_ERR_INTERRUPTED, "stopped by a signal during layer %d of %d (abandoned)",
                        layer, r->ds->n_layers - 1);
  return pp_error_set(err, PP_ERR_INTERRUPTED,
                      "stopped by a signal during layer %d of %d (abandoned; layers 1-%d are complete)",
                      layer, r->ds->n_layers - 1, layer - 1);
}

/* One layer after the compute: exchange, install, progress, layer_done,
 * agreement.  Sets *stop if a participant asked to stop. */
static pp_status finish_layer(run *r, pp_layer_split *split, int layer, int a, int b,
                              const pp_layer_report *mine, int *stop, pp_error *err) {
  const pp_layer_comm *c = r->c;
  const double t1 = pp_now();
  const char *rbuf = NULL;
  size_t rlen = 0;
  pp_status st = c->exchange(c->self, layer, mine, r->send.buf, r->send.len, r->reports, &rbuf, &rlen, err);
  if (st) { /* the same on every participant */
    drop_kept(r);
    return st;
  }
  double *secs = pp_xcalloc((size_t)c->parts, sizeof(double));
  int abandoned = 0;
  *stop = 0;
  for (int q = 0; q < c->parts; q++) {
    *stop |= r->reports[q].stop != 0;
    abandoned |= r->reports[q].stop == 2;
    secs[c->claim ? c->group_of[q] : q] += r->reports[q].seconds; /* per group: its members' time */
  }
  pp_layer_split_rebalance(split, secs);
  if (c->claim && layer != r->first) pp_layer_split_learn(split, r->reports, c->parts, c->group_of);
  free(secs);
  if (abandoned) {
    drop_kept(r);
    return abandon_layer(r, layer, err);
  }
  r->stats->bytes_sent += (double)r->send.len;
  r->stats->bytes_received += (double)rlen - (double)r->send.len;
  const double t2 = pp_now();
  if (c->install)
    st = c->install(c->self, r->dp, a, b, rbuf, rlen, r->kept, r->n_kept, layer, err);
  else if (c->keep)
    st = install_kept(r, a, b, layer, err);
  else
    st = default_install(r->dp, a, b, r->K, rbuf, rlen, layer, err);
  drop_kept(r);
  r->stats->install_seconds += pp_now() - t2;
  if (!st) st = pp_dp_check_held(r->dp, layer, r->ds->n_layers - 1, err);
  for (int id = a; id < b; id++) r->done += pp_dp_work(r->dp)[id];
  r->stats->exchange_seconds += pp_now() - t1;
  if (!st) r->stats->layers_done = layer;
  if (!st && r->h->progress)
    r->h->progress(r->h->progress_user, layer, r->ds->n_layers - 1, r->total > 0 ? r->done / r->total : 1);
  if (!st && r->h->layer_done) st = r->h->layer_done(r->h->layer_user, layer, *stop, err);
  /* Every layer ends in an agreement, so that a failure on one participant
   * (install, checkpoint) makes all leave in this layer, none waiting in
   * the next exchange. */
  return c->agree(c->self, st, err);
}

pp_status pp_layer_run(pp_dp *dp, const pp_graph *g, const pp_problem *p, const pp_downsets *ds,
                       int first_layer, const pp_layer_comm *comm, const pp_layer_hooks *hooks,
                       pp_layer_stats *stats, pp_error *err) {
  pp_layer_stats local_stats;
  const pp_layer_hooks no_hooks = {0};
  run r = {.dp = dp, .ds = ds, .c = comm, .h = hooks ? hooks : &no_hooks, .K = p->devices};
  r.stats = stats ? stats : &local_stats;
  memset(r.stats, 0, sizeof *r.stats);
  const double *work = pp_dp_work(dp);
  for (int i = 1; i < ds->count; i++) r.total += work[i];
  for (int i = 1; i < ds->layer_start[first_layer] && i < ds->count; i++) r.done += work[i];
  r.stats->layers_done = first_layer - 1;
  int widest = 1;
  for (int l = first_layer; l < ds->n_layers; l++)
    if (ds->layer_start[l + 1] - ds->layer_start[l] > widest)
      widest = ds->layer_start[l + 1] - ds->layer_start[l];
  const size_t most = (size_t)widest + 4 * (size_t)(comm->claim ? comm->members : 1);
  r.items = pp_xmalloc(sizeof *r.items * most);
  r.kept = comm->keep ? pp_xmalloc(sizeof *r.kept * most) : NULL;
  r.reports = pp_xmalloc(sizeof *r.reports * (size_t)comm->parts);
  pp_pack_init(&r.send);
  pp_layer_split *split = pp_layer_split_new(g, p, comm->claim ? comm->groups : comm->parts);
  pp_dp_set_poll(dp, r.h->poll, r.h->poll_user);
  r.own = comm->claim ? pp_layer_split_new(g, p, comm->parts) : NULL;
  r.seg = comm->claim ? pp_xcalloc((size_t)comm->members + 1, sizeof(int)) : NULL;
  for (int q = 0; comm->claim && q < comm->me; q++) r.member += comm->group_of[q] == comm->group;
  r.first = first_layer;
  while (r.first < ds->n_layers && ds->layer_start[r.first] == ds->layer_start[r.first + 1]) r.first++;
  pp_status st = PP_OK;
  for (int layer = first_layer; layer < ds->n_layers; layer++) {
    const int a = ds->layer_start[layer], b = ds->layer_start[layer + 1];
    if (a == b) continue;
    const pp_layer_report mine = compute(&r, split, layer, a, b);
    int stop = 0;
    if ((st = finish_layer(&r, split, layer, a, b, &mine, &stop, err))) break;
    /* after the last layer there is nothing left to checkpoint: the run
     * finishes and writes its archive instead of stopping */
    if (stop && layer < ds->n_layers - 1) {
      st = pp_error_set(err, PP_ERR_INTERRUPTED, "stopped by a signal after layer %d of %d", layer,
                        ds->n_layers - 1);
      break;
    }
  }
  pp_dp_set_poll(dp, NULL, NULL);
  pp_layer_split_free(split);
  pp_layer_split_free(r.own);
  free(r.seg);
  pp_pack_free(&r.send);
  drop_kept(&r);
  free(r.kept);
  free(r.items);
  free(r.reports);
  return st;
}
