/*
 * dp_small_lag.c - memory-aware lower bounds on a stage's load for the
 * small-block kernel (dp_small.c), from per-downset sums.
 *
 * The load of a stage C at degrees (t, d) and y is the load of a choice of
 * one TMPC per node whose memory fits: sum_v m_v(y) <= M.  For any
 * lambda >= 0 such a choice x has
 *     sum_v c_v(x_v) >= sum_v [c_v(x_v) + lambda (m_v(x_v) - M / |C|)]
 *                    >= sum_v min_l [c_vl + lambda m_vl(y)] - lambda M,
 * the Lagrangian relaxation of the memory constraint (Fisher 1981, "The
 * Lagrangian relaxation method for solving integer programming problems",
 * Management Science 27(1)), where c_vl is a floor of TMPC l's share of the
 * load (pp_stage_node_tmpcs: the edge term, at least 0, left out).  The
 * inner sum splits over the nodes, so with G_X = the sum over the nodes of
 * downset X, the bound for C = I \ J is G_I - G_J - lambda M.  A few lambda
 * per (t, d, y), picked from the nodes' own exchange rates of load for
 * memory, are stored per downset.
 *
 * What the knapsack returns must be the load of a choice that fits (up to
 * its 1e-9 bytes of slack): the exact branch and bound's, and the greedy's
 * while every node has at most two usable TMPCs (with more, its swaps
 * may end in a choice that does not fit; then no bound is kept for t).
 */
#include <math.h>
#include <stdlib.h>

#include "dp_small_lag.h"
#include "piper/bitset.h"

#define LAG_TMPC_CAP 64

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The lambdas of (ti, di, y): quantiles of the nodes' rates (extra load per
 * byte saved by their smallest TMPC over their fastest), or 0. */
static void pick_lambdas(const pp_stage_eval *ev, int n, int ti, int di, int y, double *lam,
                         double *scratch) {
  double l[LAG_TMPC_CAP], a[LAG_TMPC_CAP], b[LAG_TMPC_CAP];
  int nr = 0;
  for (int v = 0; v < n; v++) {
    const int L = pp_stage_node_tmpcs(ev, v, ti, di, l, a, b, LAG_TMPC_CAP);
    if (L < 2 || L > LAG_TMPC_CAP) continue;
    int f = 0, s = 0;
    for (int x = 1; x < L; x++) {
      if (l[x] < l[f]) f = x;
      if (a[x] * y + b[x] < a[s] * y + b[s]) s = x;
    }
    const double saved = (a[f] * y + b[f]) - (a[s] * y + b[s]);
    if (saved > 0 && l[s] >= l[f]) scratch[nr++] = (l[s] - l[f]) / saved;
  }
  for (int q = 0; q < PP_LAG_N - 1; q++) lam[q] = 0.0;
  if (nr == 0) return;
  qsort(scratch, (size_t)nr, sizeof(double), cmp_double);
  for (int q = 0; q < PP_LAG_N - 1; q++) lam[q] = scratch[(size_t)((double)(nr - 1) * (q + 1) / PP_LAG_N)];
}

/* out[id * len + k] = the sum of node[v * len + k] over the nodes v of
 * downset id.  A downset X but the empty one is a smaller downset X \ {v}
 * plus a node v of X with no predecessor in X, found by lookup; its sums
 * are the smaller one's plus v's (from scratch if the lookup fails). */
static void sum_downsets(const pp_graph *g, const pp_downsets *ds, const double *node, size_t len,
                         double *out) {
  const int n = g->n_nodes;
  int *po = pp_xcalloc((size_t)n + 2, sizeof(int)), *pr = pp_xmalloc(sizeof(int) * ((size_t)g->n_edges + 1));
  for (int e = 0; e < g->n_edges; e++) po[g->edges[e].dst + 2]++;
  for (int v = 0; v < n; v++) po[v + 2] += po[v + 1];
  for (int e = 0; e < g->n_edges; e++) pr[po[g->edges[e].dst + 1]++] = g->edges[e].src;
  uint64_t *tmp = pp_xmalloc(sizeof(uint64_t) * ((size_t)ds->words + 1));
  for (int id = 0; id < ds->count; id++) {
    double *s = out + (size_t)id * len;
    const uint64_t *bits = pp_downset_bits(ds, id);
    int v = -1;
    for (int w = 0; w < ds->words && v < 0; w++)
      for (uint64_t x = bits[w]; x && v < 0; x &= x - 1) {
        const int u = w * 64 + __builtin_ctzll(x);
        int free_ = 1;
        for (int k = po[u]; k < po[u + 1] && free_; k++) free_ = !pp_bit_get(bits, pr[k]);
        if (free_) v = u;
      }
    int from = -1;
    if (v >= 0) {
      for (int w = 0; w < ds->words; w++) tmp[w] = bits[w];
      pp_bit_clear(tmp, v);
      from = pp_downsets_find(ds, tmp);
    }
    if (from >= 0 && from < id) {
      const double *a = out + (size_t)from * len, *b = node + (size_t)v * len;
      for (size_t k = 0; k < len; k++) s[k] = a[k] + b[k];
      continue;
    }
    for (int w = 0; w < ds->words; w++)
      for (uint64_t x = bits[w]; x; x &= x - 1) {
        const double *b = node + (size_t)(w * 64 + __builtin_ctzll(x)) * len;
        for (size_t k = 0; k < len; k++) s[k] += b[k];
      }
  }
  free(tmp);
  free(po);
  free(pr);
}

/* 1 if y is a point of the grid of y: every y up to 8, then those with at
 * most three significant bits (10, 12, 14, 16, 20, 24, ...). */
static int on_grid(int y) {
  if (y <= 8) return 1;
  int top = 31 - __builtin_clz((unsigned)y);
  return (y & ((1 << (top - 2)) - 1)) == 0;
}

/* Per tensor-parallel degree index (nt of them, array owned by the caller)
 * 1 if no bound may be given for it: a node has more TMPCs than the cap, the
 * greedy knapsack may end in a choice that does not fit, or a TMPC's memory
 * falls as y grows. */
static unsigned char *no_bound_degrees(const pp_stage_eval *ev, const pp_problem *p, int n, int nt) {
  unsigned char *bad = pp_xcalloc((size_t)nt + 1, 1);
  double l[LAG_TMPC_CAP], a[LAG_TMPC_CAP], b[LAG_TMPC_CAP];
  for (int ti = 0; ti < nt; ti++)
    for (int v = 0; v < n; v++) {
      const int L = pp_stage_node_tmpcs(ev, v, ti, 0, l, a, b, LAG_TMPC_CAP);
      if (L > LAG_TMPC_CAP || (L > 2 && p->knapsack == PP_KNAPSACK_GREEDY)) bad[ti] = 1;
      for (int x = 0; x < L && x < LAG_TMPC_CAP; x++)
        if (!(a[x] >= 0)) bad[ti] = 1;
    }
  return bad;
}

pp__lag *pp__lag_new(const pp_stage_eval *ev, const pp_graph *g, const pp_problem *p, const pp_downsets *ds,
                     int S, const int *c_ti, const int *c_di, int nc, double max_bytes) {
  const int *tv, *dv;
  const int nt = pp_stage_n_degrees(ev, &tv);
  pp_stage_n_dp(ev, &dv);
  const int n = ds->n_nodes;
  pp__lag *lg = pp_xcalloc(1, sizeof *lg);
  lg->nc = nc;
  lg->ymax = pp_xmalloc(sizeof(int) * (size_t)(nc + 1));
  lg->yo = pp_xmalloc(sizeof(int) * (size_t)(nc + 1));
  int per = 0, nmap = 0;
  for (int c = 0; c < nc; c++) {
    lg->ymax[c] = (S + dv[c_di[c]] - 1) / dv[c_di[c]]; /* y = 1 .. ceil(S / d) */
    lg->yo[c] = nmap;
    nmap += lg->ymax[c] + 1;
    for (int y = 1; y <= lg->ymax[c]; y++) per += on_grid(y);
  }
  lg->per = per;
  if ((double)per * PP_LAG_N * 12.0 * (double)ds->count > max_bytes) {
    pp__lag_free(lg);
    return NULL;
  }
  lg->slot = pp_xmalloc(sizeof(int) * ((size_t)nmap + 1));
  int *gy = pp_xmalloc(sizeof(int) * ((size_t)per + 1)), *gc = pp_xmalloc(sizeof(int) * ((size_t)per + 1));
  for (int c = 0, k = 0; c < nc; c++) {
    lg->slot[lg->yo[c]] = -1;
    for (int y = 1; y <= lg->ymax[c]; y++) {
      if (on_grid(y)) {
        gy[k] = y;
        gc[k++] = c;
      }
      lg->slot[lg->yo[c] + y] = k - 1; /* the largest grid point <= y */
    }
  }
  unsigned char *bad = no_bound_degrees(ev, p, n, nt);
  double l[LAG_TMPC_CAP], a[LAG_TMPC_CAP], b[LAG_TMPC_CAP];
  lg->lam = pp_xcalloc((size_t)per * PP_LAG_N + 1, sizeof(double));
  double *scratch = pp_xmalloc(sizeof(double) * ((size_t)n + 1));
  for (int k = 0; k < per; k++)
    if (bad[c_ti[gc[k]]])
      lg->lam[(size_t)k * PP_LAG_N] = -1.0; /* no bound */
    else
      pick_lambdas(ev, n, c_ti[gc[k]], c_di[gc[k]], gy[k], lg->lam + (size_t)k * PP_LAG_N, scratch);
  free(scratch);
  free(bad);
  /* per node its terms min_l [c_l + lambda m_l(y)], and min_l m_l(y) last */
  double *node = pp_xcalloc((size_t)n * (size_t)per * PP_LAG_N + 1, sizeof(double));
  for (int v = 0; v < n; v++)
    for (int k = 0; k < per; k++) {
      const int c = gc[k], y = gy[k];
      const int L = pp_stage_node_tmpcs(ev, v, c_ti[c], c_di[c], l, a, b, LAG_TMPC_CAP);
      if (L == 0) continue; /* 0: a stage holding v is screened out before */
      for (int q = 0; q < PP_LAG_N; q++) {
        const double la = lg->lam[(size_t)k * PP_LAG_N + (size_t)q];
        double best = INFINITY;
        for (int x = 0; x < L && x < LAG_TMPC_CAP; x++) {
          const double t = q == PP_LAG_N - 1 ? a[x] * y + b[x] : l[x] + la * (a[x] * y + b[x]);
          best = t < best ? t : best;
        }
        node[((size_t)v * (size_t)per + (size_t)k) * PP_LAG_N + (size_t)q] = best;
      }
    }
  free(gy);
  free(gc);
  lg->sum = pp_xcalloc((size_t)ds->count * (size_t)per * PP_LAG_N + 1, sizeof(double));
  sum_downsets(g, ds, node, (size_t)per * PP_LAG_N, lg->sum);
  free(node);
  const size_t ns = (size_t)ds->count * (size_t)per * PP_LAG_N;
  lg->sum_up = pp_xmalloc(sizeof(float) * (ns + 1));
  for (size_t x = 0; x < ns; x++) lg->sum_up[x] = pp__float_up(lg->sum[x]);
  lg->M = p->memory * (1 + 1e-9) + 1e-6;
  return lg;
}

void pp__lag_free(pp__lag *lg) {
  if (!lg) return;
  free(lg->ymax);
  free(lg->yo);
  free(lg->slot);
  free(lg->lam);
  free(lg->sum);
  free(lg->sum_up);
  free(lg);
}
