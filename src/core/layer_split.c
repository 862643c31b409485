/*
 * layer_split.c - division of one layer's work among the participants (see
 * include/piper/layer.h).  Pure and deterministic: every participant
 * computes the same division from the same inputs.
 */
#include <stdlib.h>

#include "piper/layer.h"

/* The least CPU time (seconds, summed over a group's members) of a layer
 * that pp_layer_split_learn learns from: below it the times are mostly
 * noise.  (BERT-32 at K = 2048 on 2 ranks: its first 15 layers take
 * 0.6-9 ms each and one rank twice as long as the other before they are
 * learned from.) */
#define LEARN_MIN_CPU 0.002

struct pp_layer_split {
  int P, K;
  double *w;      /* [K + 1] estimated relative work of budget k */
  double *prefix; /* [K + 2] prefix[k + 1] = sum of w[k'] over k' <= k */
  int *k_lo;      /* [P] each participant's k-range in the last narrow layer */
  int *k_hi;      /* (k_lo > k_hi: empty or wide layer) */
  int narrow;
};

/* Initial estimate of the relative work of budget k: the number of degree
 * pairs (t, d) with t * d <= k, plus one for the row itself. */
static void k_work_weights(const pp_graph *g, const pp_problem *p, double *w) {
  const int K = p->devices, S = pp_problem_max_s(p);
  double *cnt = pp_xcalloc((size_t)K + 2, sizeof(double));
  for (int i = 0; i < g->n_degrees; i++) {
    const int t = g->degrees[i];
    if (!pp_problem_allows_t(p, t)) continue;
    for (int dd = 1; dd <= S && (long long)dd * t <= K; dd++) {
      if (!pp_problem_allows_d(p, dd)) continue;
      cnt[dd * t] += 1;
    }
  }
  double running = 0;
  for (int k = 0; k <= K; k++) {
    running += cnt[k];
    w[k] = running + 1;
  }
  free(cnt);
}

pp_layer_split *pp_layer_split_new(const pp_graph *g, const pp_problem *p, int P) {
  pp_layer_split *s = pp_xcalloc(1, sizeof *s);
  s->P = P;
  s->K = p->devices;
  s->w = pp_xmalloc(sizeof(double) * ((size_t)s->K + 2));
  s->prefix = pp_xmalloc(sizeof(double) * ((size_t)s->K + 2));
  s->k_lo = pp_xmalloc(sizeof(int) * (size_t)P);
  s->k_hi = pp_xmalloc(sizeof(int) * (size_t)P);
  k_work_weights(g, p, s->w);
  return s;
}

void pp_layer_split_free(pp_layer_split *s) {
  if (!s) return;
  free(s->w);
  free(s->prefix);
  free(s->k_lo);
  free(s->k_hi);
  free(s);
}

int pp_layer_split_narrow(const pp_layer_split *s) { return s->narrow; }

/* An item with its estimated work, for ordering. */
typedef struct weighted_item {
  pp_layer_item it;
  double w;
} weighted_item;

/* Heaviest first; ties by id, then k0. */
static int cmp_weighted_item(const void *x, const void *y) {
  const weighted_item *a = x, *b = y;
  if (a->w != b->w) return a->w < b->w ? 1 : -1;
  if (a->it.id != b->it.id) return (a->it.id > b->it.id) - (a->it.id < b->it.id);
  return (a->it.k0 > b->it.k0) - (a->it.k0 < b->it.k0);
}

/* The first k in [k0, k1] whose prefix reaches goal (k1 if none). */
static int k_reaching(const double *prefix, int k0, int k1, double goal) {
  int lo = k0, hi = k1;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (prefix[mid + 1] >= goal)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* By id, then k0. */
static int cmp_item_id_k(const void *x, const void *y) {
  const pp_layer_item *a = x, *b = y;
  if (a->id != b->id) return (a->id > b->id) - (a->id < b->id);
  return (a->k0 > b->k0) - (a->k0 < b->k0);
}

/* Wide layer: whole downsets, largest estimated work first, each to the
 * least-loaded participant (ties to the lower id and participant); each
 * participant's in id order. */
static int split_wide(const pp_layer_split *s, const double *work, int a, int b, int me, pp_layer_item *out) {
  const int m = b - a, P = s->P;
  int n = 0;
  weighted_item *order = pp_xmalloc(sizeof *order * (size_t)m);
  double *load = pp_xcalloc((size_t)P, sizeof(double));
  for (int i = 0; i < m; i++) order[i] = (weighted_item){{a + i, 0, s->K}, work[a + i]};
  qsort(order, (size_t)m, sizeof *order, cmp_weighted_item);
  for (int i = 0; i < m; i++) {
    int best = 0;
    for (int r = 1; r < P; r++)
      if (load[r] < load[best]) best = r;
    load[best] += order[i].w + 1;
    if (best == me) out[n++] = order[i].it;
  }
  /* computed in id order: neighbouring downsets share stages, which the
   * stage cache then finds (GNMT at K = 8 on one rank: 3.2% fewer
   * instructions than heaviest first) */
  qsort(out, (size_t)n, sizeof *out, cmp_item_id_k);
  free(order);
  free(load);
  return n;
}

/* Narrow layer: budgets 0..K cut into P consecutive ranges of equal
 * estimated work; participant r computes range r of every downset. */
static int split_narrow(pp_layer_split *s, int a, int b, int me, pp_layer_item *out) {
  const int P = s->P, K = s->K;
  const double *prefix = s->prefix;
  int n = 0, k0 = 0;
  for (int r = 0; r < P; r++) {
    s->k_lo[r] = 1;
    s->k_hi[r] = 0;
  }
  for (int r = 0; r < P && k0 <= K; r++) {
    const int k1 = r < P - 1 ? k_reaching(prefix, k0, K, prefix[K + 1] * (r + 1) / P) : K;
    s->k_lo[r] = k0;
    s->k_hi[r] = k1;
    if (r == me)
      for (int id = a; id < b; id++) out[n++] = (pp_layer_item){id, k0, k1};
    k0 = k1 + 1;
  }
  return n;
}

int pp_layer_split_items(pp_layer_split *s, const double *work, int a, int b, int me, pp_layer_item *out) {
  s->prefix[0] = 0;
  for (int k = 0; k <= s->K; k++) s->prefix[k + 1] = s->prefix[k] + s->w[k];
  s->narrow = !(b - a >= 2 * s->P || s->P == 1);
  if (!s->narrow) return split_wide(s, work, a, b, me, out);
  return split_narrow(s, a, b, me, out);
}

void pp_layer_split_rebalance(pp_layer_split *s, const double *seconds) {
  if (!s->narrow || s->P < 2) return;
  const int P = s->P;
  double total_w = 0, total_t = 0;
  for (int r = 0; r < P; r++) {
    if (s->k_lo[r] > s->k_hi[r]) continue;
    total_w += s->prefix[s->k_hi[r] + 1] - s->prefix[s->k_lo[r]];
    total_t += seconds[r];
  }
  if (total_t <= 0.01 || total_w <= 0) return; /* too short to measure */
  for (int r = 0; r < P; r++) {
    if (s->k_lo[r] > s->k_hi[r]) continue;
    const double wr = s->prefix[s->k_hi[r] + 1] - s->prefix[s->k_lo[r]];
    double f = wr > 0 ? (seconds[r] / total_t) / (wr / total_w) : 1;
    if (f < 0.05) f = 0.05;
    if (f > 20) f = 20;
    for (int k = s->k_lo[r]; k <= s->k_hi[r]; k++) s->w[k] *= f;
  }
}

/* Whether the reports of group g (members q with group_of[q] == g) each
 * name a k-range, pairwise disjoint; their number in *n. */
static int group_ranges_apart(const pp_layer_report *rep, int parts, const int *group_of, int g, int *n) {
  *n = 0;
  for (int q = 0; q < parts; q++) {
    if ((group_of ? group_of[q] : 0) != g) continue;
    if (rep[q].k_lo > rep[q].k_hi) return 0;
    for (int o = 0; o < q; o++)
      if ((group_of ? group_of[o] : 0) == g && rep[o].k_lo <= rep[q].k_hi && rep[q].k_lo <= rep[o].k_hi)
        return 0;
    (*n)++;
  }
  return 1;
}

void pp_layer_split_learn(pp_layer_split *s, const pp_layer_report *rep, int parts, const int *group_of) {
  for (int q = 0; q < parts; q++) {
    const int g = group_of ? group_of[q] : 0;
    int first = 1, n = 0;
    for (int o = 0; o < q && first; o++) first = (group_of ? group_of[o] : 0) != g;
    if (!first || !group_ranges_apart(rep, parts, group_of, g, &n) || n < 2) continue;
    double total_w = 0, total_t = 0;
    for (int o = q; o < parts; o++)
      if ((group_of ? group_of[o] : 0) == g) {
        total_w += s->prefix[rep[o].k_hi + 1] - s->prefix[rep[o].k_lo];
        total_t += rep[o].cpu;
      }
    if (total_t <= LEARN_MIN_CPU || total_w <= 0) continue; /* too short to measure */
    double before = 0, after = 0;
    for (int o = q; o < parts; o++) {
      if ((group_of ? group_of[o] : 0) != g) continue;
      const double wr = s->prefix[rep[o].k_hi + 1] - s->prefix[rep[o].k_lo];
      double f = wr > 0 ? (rep[o].cpu / total_t) / (wr / total_w) : 1;
      if (f < 0.05) f = 0.05;
      if (f > 20) f = 20;
      for (int k = rep[o].k_lo; k <= rep[o].k_hi; k++) {
        before += s->w[k];
        s->w[k] *= f;
        after += s->w[k];
      }
    }
    for (int o = q; o < parts && after > 0; o++) /* the group's sum kept (the clamps) */
      if ((group_of ? group_of[o] : 0) == g)
        for (int k = rep[o].k_lo; k <= rep[o].k_hi; k++) s->w[k] *= before / after;
  }
}

/* Estimated work of an item: its downset's, times the share of its k-range. */
static double item_work(const pp_layer_split *s, const double *work, pp_layer_item it) {
  const double all = s->prefix[s->K + 1];
  return all > 0 ? work[it.id] * (s->prefix[it.k1 + 1] - s->prefix[it.k0]) / all : work[it.id];
}

/* The largest load when m members take the items wi[n] (heaviest first) in
 * turn, each the next one when it is the least loaded (list scheduling in
 * decreasing order, Graham 1969); load[m] is scratch. */
static double makespan(const weighted_item *wi, int n, int m, double *load) {
  double most = 0;
  for (int r = 0; r < m; r++) load[r] = 0;
  for (int i = 0; i < n; i++) {
    int best = 0;
    for (int r = 1; r < m; r++)
      if (load[r] < load[best]) best = r;
    load[best] += wi[i].w;
    if (load[best] > most) most = load[best];
  }
  return most;
}

/* Cuts the heaviest item of wi[n] that spans more than one budget in two
 * consecutive k-ranges (the second at wi[n]): the first of estimated work
 * `share` if the item has more, else halves; 0 if none can be cut. */
static int cut_heaviest(const pp_layer_split *s, const double *work, weighted_item *wi, int n, double share) {
  for (int i = 0; i < n; i++) {
    const pp_layer_item it = wi[i].it;
    if (it.k0 >= it.k1) continue;
    const double *prefix = s->prefix, span = prefix[it.k1 + 1] - prefix[it.k0];
    const double f = wi[i].w > share && share > 0 ? share / wi[i].w : 0.5;
    int mid = k_reaching(prefix, it.k0, it.k1, prefix[it.k0] + span * f);
    if (mid >= it.k1) mid = it.k1 - 1;
    const pp_layer_item lo = {it.id, it.k0, mid}, hi = {it.id, mid + 1, it.k1};
    wi[i] = (weighted_item){lo, item_work(s, work, lo)};
    wi[n] = (weighted_item){hi, item_work(s, work, hi)};
    return 1;
  }
  return 0;
}

/* Weighted items by id, then k0. */
static int cmp_id_k(const void *x, const void *y) {
  return cmp_item_id_k(&((const weighted_item *)x)->it, &((const weighted_item *)y)->it);
}

/* Every cut costs the kernel another pass over the downset's sub-downsets
 * (measured: BERT-32 at K = 2048, 8 k-ranges per downset instead of 1 took
 * 29% more instructions), so the group's items are cut only as far as its
 * members need to share them out: while there are fewer items than members,
 * or list scheduling of the estimates ends more than 5% above an even share
 * (and the list is shorter than 4 * members), the heaviest item is cut, an
 * even share off it if it holds more, else in halves. */
int pp_layer_split_shared(pp_layer_split *s, const double *work, int a, int b, int group, int members,
                          pp_layer_item *out, int *seg) {
  int n = pp_layer_split_items(s, work, a, b, group, out);
  const int cap = 4 * members;
  weighted_item *wi = pp_xmalloc(sizeof *wi * ((size_t)n + (size_t)cap + 1));
  double *load = pp_xmalloc(sizeof *load * (size_t)members);
  double total = 0;
  for (int i = 0; i < n; i++) {
    wi[i] = (weighted_item){out[i], item_work(s, work, out[i])};
    total += wi[i].w;
  }
  qsort(wi, (size_t)n, sizeof *wi, cmp_weighted_item);
  int several = 0; /* several downsets: their estimates may be far off each other */
  for (int i = 1; i < n; i++) several |= out[i].id != out[0].id;
  const int least = several ? 3 * members : members;
  while (members > 1 && n < cap) {
    if (n >= least && makespan(wi, n, members, load) <= 1.05 * total / members) break;
    if (!cut_heaviest(s, work, wi, n, total / members)) break;
    n++;
    qsort(wi, (size_t)n, sizeof *wi, cmp_weighted_item);
  }
  /* in id order, cut where the estimated work reaches each member's share:
   * item i goes to the segment of the middle of its work */
  qsort(wi, (size_t)n, sizeof *wi, cmp_id_k);
  total = 0;
  for (int i = 0; i < n; i++) total += wi[i].w;
  double before = 0;
  int j = 0;
  seg[0] = 0;
  for (int i = 0; i < n; i++) {
    out[i] = wi[i].it;
    int at = total > 0 ? (int)((before + wi[i].w / 2) / total * members) : i * members / n;
    if (at >= members) at = members - 1;
    while (j < at) seg[++j] = i;
    before += wi[i].w;
  }
  while (j < members) seg[++j] = n;
  /* a short list (the layer's few downsets, cut): each segment heaviest
   * first, so that what is left for a member that helps from its back is
   * the light items, and no member starts a heavy one last (BERT-32 at
   * K = 2048 on 2 ranks, layer 34: the top k-range of downset 34, half its
   * work and 0.034 s, came last, after 0.023 s of its other two) */
  for (int g = 0; n <= cap && g < members; g++) {
    qsort(wi + seg[g], (size_t)(seg[g + 1] - seg[g]), sizeof *wi, cmp_weighted_item);
    for (int i = seg[g]; i < seg[g + 1]; i++) out[i] = wi[i].it;
  }
  free(wi);
  free(load);
  return n;
}
