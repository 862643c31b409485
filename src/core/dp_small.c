/*
 * dp_small.c - the 2bw kernel (see dp.c) for small dense blocks, where the
 * tables are small and the pairs (I, J) many (GNMT: 17,914 downsets, 15.5M
 * pairs, 17 x 17 cells per table at K = 16).
 *
 * Nearly every candidate there is useless: the final table is the prefix
 * minimum in k and s of the dense block, so a candidate matters only if it
 * is below every cell (k2 <= k, s2 <= s) up to its landing cell.  This
 * kernel keeps the block closed under that prefix minimum while it fills it
 * (a write that lowers cell (k, s) to v floods v into the cells k2 >= k,
 * s2 >= s that are larger), so one cell is the true envelope of its whole
 * quadrant and every screen compares a lower bound with it.  The final
 * table is unchanged: the minimum is exact and independent of order, and
 * pp_stairs_from_dense takes the same prefix minimum again.
 *   Except while the first sub-downset that proposes anything is relaxed:
 * its candidates (J = I without one node, whose table is the largest) fall
 * on a block of +INFINITY, where every flood runs to the block's end and
 * the next, lower candidate rewrites most of it (GNMT at K = 128: 8.4G
 * cells written by these floods, 14 times each block, of 9.3G in all).
 * So the block starts open: those candidates are written into their own
 * cells only, and the block is closed once after that sub-downset
 * (close_block).  The screens stay sound on an open block, only weaker:
 * each compares a candidate with a cell at or before its landing cell, and
 * a cell holds a candidate written (or +INFINITY), so the final table is
 * no larger than that cell from there on in k and s either way.
 *
 * Screens, cheapest first:
 *   pair   before the stage is summarised, from J's reach record and
 *          lower bounds on the stage's load from per-downset sums (I's
 *          minus J's): per-node floors, and the memory-aware bounds of
 *          dp_small_lag.c (Lagrangian relaxation of the memory limit, and
 *          the smallest memory of the stage's nodes);
 *   (t, d) from the stage's all-fastest lower bound;
 *   row    and step, as in dp.c.
 */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "dp_small.h"
#include "piper/bitset.h"

void pp__dp_small_free(pp__dp_small *sm) {
  if (!sm) return;
  free(sm->c_ti);
  free(sm->c_di);
  free(sm->sum);
  free(sm->l_up);
  free(sm->ab_up);
  free(sm->unsup);
  free(sm->at);
  free(sm->cs);
  free(sm->cr);
  free(sm->alive);
  free(sm->work);
  free(sm->need);
  free(sm->ti_on);
  free(sm->js);
  free(sm->without);
  free(sm->succ_off);
  free(sm->succ);
  free(sm->frontier);
  pp__lag_free(sm->lag);
  free(sm);
}

/* Builds the subset index of subsets_of if it is small (at most 2^27
 * bits) and every downset is closed under successors (the argument of
 * subsets_of needs it; sets read from elsewhere are not assumed to be). */
static void subset_index_new(pp__dp_small *sm, const pp_graph *g, const pp_downsets *ds) {
  const int n = g->n_nodes;
  if ((double)n * (double)ds->count > (double)(1 << 27)) return;
  sm->succ_off = pp_xcalloc((size_t)n + 2, sizeof(int));
  sm->succ = pp_xmalloc(sizeof(int) * ((size_t)g->n_edges + 1));
  for (int e = 0; e < g->n_edges; e++) sm->succ_off[g->edges[e].src + 2]++;
  for (int v = 0; v < n; v++) sm->succ_off[v + 2] += sm->succ_off[v + 1];
  for (int e = 0; e < g->n_edges; e++) sm->succ[sm->succ_off[g->edges[e].src + 1]++] = g->edges[e].dst;
  for (int id = 0; id < ds->count; id++) {
    const uint64_t *b = pp_downset_bits(ds, id);
    for (int v = 0; v < n; v++) {
      if (!pp_bit_get(b, v)) continue;
      for (int x = sm->succ_off[v]; x < sm->succ_off[v + 1]; x++)
        if (!pp_bit_get(b, sm->succ[x])) {
          free(sm->succ_off);
          free(sm->succ);
          sm->succ_off = sm->succ = NULL;
          return;
        }
    }
  }
  sm->idw = (ds->count + 63) / 64;
  sm->without = pp_xmalloc(sizeof(uint64_t) * (size_t)n * (size_t)sm->idw + 1);
  for (size_t x = 0; x < (size_t)n * (size_t)sm->idw; x++) sm->without[x] = ~(uint64_t)0;
  for (int id = 0; id < ds->count; id++) {
    const uint64_t *b = pp_downset_bits(ds, id);
    for (int w = 0; w < ds->words; w++)
      for (uint64_t x = b[w]; x; x &= x - 1) {
        const int v = w * 64 + __builtin_ctzll(x);
        sm->without[(size_t)v * (size_t)sm->idw + (size_t)(id >> 6)] &= ~((uint64_t)1 << (id & 63));
      }
  }
  sm->frontier = pp_xmalloc(sizeof(int) * ((size_t)n + 1));
}

static pp__dp_small *small_new(const pp_dp *dp) {
  const pp_downsets *ds = dp->ds;
  const int *tv, *dv;
  const int nt = pp_stage_n_degrees(dp->ev, &tv), nd = pp_stage_n_dp(dp->ev, &dv);
  const int n = dp->g->n_nodes;
  pp__dp_small *sm = pp_xcalloc(1, sizeof *sm);
  sm->nt = nt;
  sm->c_ti = pp_xmalloc(sizeof(int) * (size_t)(nt * nd + 1));
  sm->c_di = pp_xmalloc(sizeof(int) * (size_t)(nt * nd + 1));
  for (int ti = 0; ti < nt; ti++)
    for (int di = 0; di < nd && tv[ti] * dv[di] <= dp->K; di++) {
      sm->c_ti[sm->nc] = ti;
      sm->c_di[sm->nc++] = di;
    }
  const int nc = sm->nc;
  pp__dps_floor3 *floor = pp_xmalloc(sizeof(pp__dps_floor3) * (size_t)(n * nc + 1));
  for (int v = 0; v < n; v++)
    for (int c = 0; c < nc; c++) {
      pp__dps_floor3 *f = &floor[v * nc + c];
      f->l = pp_stage_node_floor(dp->ev, v, sm->c_ti[c], sm->c_di[c]);
      pp_stage_node_mem_floor(dp->ev, v, sm->c_ti[c], sm->c_di[c], &f->a, &f->b);
    }
  sm->sum = pp_xcalloc((size_t)ds->count * (size_t)nc + 1, sizeof(pp__dps_floor3));
  sm->unsup = pp_xcalloc((size_t)ds->count * (size_t)nt + 1, sizeof(int));
  for (int id = 0; id < ds->count; id++) {
    pp__dps_floor3 *s = sm->sum + (size_t)id * (size_t)nc;
    int *u = sm->unsup + (size_t)id * (size_t)nt;
    const uint64_t *b = pp_downset_bits(ds, id);
    for (int w = 0; w < ds->words; w++)
      for (uint64_t x = b[w]; x; x &= x - 1) {
        const int v = w * 64 + __builtin_ctzll(x);
        for (int c = 0; c < nc; c++) {
          const pp__dps_floor3 *f = &floor[v * nc + c];
          if (f->l == INFINITY) {
            u[sm->c_ti[c]] += sm->c_di[c] == 0;
          } else {
            s[c].l += f->l;
            s[c].a += f->a;
            s[c].b += f->b;
          }
        }
      }
  }
  free(floor);
  sm->l_up = pp_xmalloc(sizeof(float) * ((size_t)ds->count * (size_t)nc + 1));
  sm->ab_up = pp_xmalloc(sizeof(pp__dps_floor2f) * ((size_t)ds->count * (size_t)nc + 1));
  for (size_t x = 0; x < (size_t)ds->count * (size_t)nc; x++) {
    sm->l_up[x] = pp__float_up(sm->sum[x].l);
    sm->ab_up[x] = (pp__dps_floor2f){pp__float_up(sm->sum[x].a), pp__float_up(sm->sum[x].b)};
  }
  sm->at = pp_xmalloc(sizeof(pp__dps_corner_at) * (size_t)ds->count);
  for (int id = 0; id < ds->count; id++) sm->at[id] = (pp__dps_corner_at){-1, 0};
  sm->need = pp_xmalloc((size_t)sm->nc + 1);
  sm->ti_on = pp_xmalloc((size_t)nt + 1);
  sm->js = pp_xmalloc(sizeof(int) * (size_t)ds->count);
  sm->alive = pp_xmalloc(sizeof(int) * ((size_t)(dp->K + 1) * (size_t)(dp->S + 1) + 1));
  sm->work = pp_xmalloc(sizeof(int) * ((size_t)(dp->K + 1) * (size_t)(dp->S + 1) + 1));
  subset_index_new(sm, dp->g, ds);
  sm->lag = pp__lag_new(dp->ev, dp->g, dp->p, ds, dp->S, sm->c_ti, sm->c_di, nc, 256e6);
  return sm;
}

void pp__dp_small_forget(pp__dp_small *sm, int id) {
  if (sm) sm->at[id] = (pp__dps_corner_at){-1, 0};
}

/* The corners of table id (made on first use). */
const pp__dps_corner *pp__dps_corners(const pp_dp *dp, pp__dp_small *sm, int id, int *n) {
  pp__dps_corner_at *at = &sm->at[id];
  if (at->off < 0) {
    const pp_stairs *t = dp->tab[id];
    const int m = t->fresh_start[t->n_rows];
    if (sm->cs_n + m > sm->cs_cap) {
      sm->cs_cap = 2 * (sm->cs_n + m) + 1024;
      sm->cs = pp_xrealloc(sm->cs, sizeof(pp__dps_corner) * (size_t)sm->cs_cap);
      sm->cr = pp_xrealloc(sm->cr, sizeof(int) * (size_t)sm->cs_cap);
    }
    at->off = sm->cs_n;
    for (int r = 0; r < t->n_rows; r++)
      for (int x = t->fresh_start[r]; x < t->fresh_start[r + 1]; x++) {
        const int j = t->row_start[r] + t->fresh[x];
        if (t->v[j] == INFINITY) continue;
        sm->cr[sm->cs_n] = r;
        sm->cs[sm->cs_n++] = (pp__dps_corner){t->v[j], t->row_k[r], t->s[j]};
      }
    at->n = sm->cs_n - at->off;
  }
  *n = at->n;
  return sm->cs + at->off;
}

/* Lowers cell (k, s) of the closed block (rows k..nk-1 relative, W cells
 * each) to v and floods v into the quadrant k2 >= k, s2 >= s: a row stops
 * at its first cell already <= v (the later ones are no larger), and the
 * rows stop at the first whose cell s is already <= v (the later rows are
 * pointwise no larger).  The block stays closed: the minimum of two closed
 * functions is closed.
 *   The cells a row lowers are s .. e - 1, and e is no larger than the row
 * above's (its cells from there on are no larger than those above, which
 * are <= v): the end is found from the first row's by stepping back, and
 * the cells in between are filled without tests. */
static inline void lower(double *dense, int W, int k, int nk, int s, double v) {
  double *row = dense + (size_t)k * (size_t)W;
  if (k >= nk || row[s] <= v) return;
  int e = s + 1;
  while (e < W && row[e] > v) e++;
  for (;;) {
    for (int x = s; x < e; x++) row[x] = v;
    if (++k >= nk) return;
    row += W;
    if (row[s] <= v) return;
    while (row[e - 1] <= v) e--; /* stops at s at the latest: row[s] > v */
  }
}

/* Writes v into cell (k, s) of the block of nk rows: lower(), or in an
 * open block (see the top) into that cell alone. */
static inline void put(double *dense, int W, int k, int nk, int s, double v, int open) {
  if (open) {
    if (k >= nk) return;
    double *c = dense + (size_t)k * (size_t)W + (size_t)s;
    if (v < *c) *c = v;
  } else {
    lower(dense, W, k, nk, s, v);
  }
}

/* Closes the block of nk rows of W cells under the prefix minimum in k and
 * s (each cell the minimum of its quadrant k2 <= k, s2 <= s). */
static void close_block(double *dense, int W, int nk) {
  for (int k = 0; k < nk; k++) {
    double *row = dense + (size_t)k * (size_t)W;
    const double *up = k > 0 ? row - W : NULL;
    double m = INFINITY;
    for (int s = 0; s < W; s++) {
      double c = row[s];
      if (up && up[s] < c) c = up[s];
      if (m < c) c = m;
      row[s] = m = c;
    }
  }
}

/* What relax_small needs about one (t, d) of the current stage. */
typedef struct small_at {
  int ti, di, d, nk; /* nk: rows of the block */
  int open;          /* 1: the block is open (see the top): each write to its own cell */
  double lb;
  const double *row; /* the memo over y, or NULL until the first relaxed row */
  const int *yof;    /* [S + 1] or NULL */
} small_at;

/* B of stage sa at the step f (its memo row is set), in the form
 * pp__dp_crossing takes. */
static inline double crossing_cost(pp_dp *dp, void *at, int f) {
  const small_at *sa = at;
  const int y = pp__dp_y_at(sa->yof, f, sa->d);
  return !isnan(sa->row[y]) ? sa->row[y] : pp_stage_cost(dp->ev, sa->ti, sa->di, y);
}

/* dp.c's relax_row with writes through lower(): the row's steps f[n], a[n]
 * propose max(a_j, B(ceil(f_j / d) + 1)) at s = f_j + d of block row kr;
 * with only_fresh, only the steps fresh[n_fresh] (the others repeat the
 * previous row, whose candidates the closed block already holds at this
 * budget). */
static void relax_small(pp_dp *dp, small_at *sa, double *dense, int kr, const int *f, const double *a, int n,
                        const int *fresh, int n_fresh, int only_fresh) {
  const int S = dp->S, W = S + 1, d = sa->d, nk = sa->nk;
  const double lb = sa->lb;
  if (!sa->row) {
    int len;
    sa->row = pp_stage_cost_row(dp->ev, sa->ti, sa->di, &len);
  }
  const int u = pp__dp_crossing(dp, crossing_cost, sa, d, lb, f, a, n, fresh, n_fresh, only_fresh);
  if (u == PP__DP_NO_CROSSING) return;
  double *out = dense + (size_t)kr * (size_t)W;
  if (only_fresh) {
    int x = 0;
    for (; x < n_fresh && fresh[x] <= u; x++) {
      const int j = fresh[x];
      if (a[j] < out[f[j] + d]) put(dense, W, kr, nk, f[j] + d, a[j], sa->open);
    }
    if (!(x < n_fresh && fresh[x] == u + 1)) return;
  } else {
    for (int j = 0; j <= u; j++)
      if (a[j] < out[f[j] + d]) put(dense, W, kr, nk, f[j] + d, a[j], sa->open);
  }
  if (u + 1 < n && f[u + 1] + d <= S) {
    const int s = f[u + 1] + d;
    if (out[s] > lb) {
      const double b = crossing_cost(dp, sa, f[u + 1]);
      if (b < out[s]) put(dense, W, kr, nk, s, b, sa->open);
    }
  }
}

/* 1 if some candidate of row r (budget kr of the block) could lower the
 * closed block: the candidate of step j is at least max(a_j, lb) and lands
 * at s = f_j + d, whose cell bounds every later one of the quadrant; the
 * first step's cell against the row's smallest bound decides most rows. */
static int row_may_help(const pp_stairs *tj, int r, const double *out, int d, int S, double lb,
                        int landed_before) {
  const int st = tj->row_start[r], n = tj->row_start[r + 1] - st;
  const int *f = tj->s + st;
  const double *a = tj->v + st;
  const double rb = lb > a[n - 1] ? lb : a[n - 1];
  if (f[0] + d > S || out[f[0] + d] <= rb) return 0;
  const int fs = tj->fresh_start[r];
  const int *fresh = tj->fresh + fs;
  const int m = landed_before ? tj->fresh_start[r + 1] - fs : n;
  for (int x = 0; x < m; x++) {
    const int jx = landed_before ? fresh[x] : x;
    if (f[jx] + d > S) return 0;
    if (out[f[jx] + d] > (a[jx] > lb ? a[jx] : lb)) return 1;
  }
  return 0;
}

/* The rows of J's table for the stage sa, into the block of budgets k0..k1. */
static void relax_table(pp_dp *dp, small_at *sa, const pp_stairs *tj, int td, double *dense, int k0, int k1) {
  const int W = dp->S + 1;
  int prev_landed = 0;
  for (int r = 0; r < tj->n_rows; r++) {
    const int k = pp__dp_landing(tj, r, td, k0, k1);
    if (k > k1) break;
    if (k < 0) {
      prev_landed = 0;
      continue;
    }
    const int landed_before = prev_landed;
    prev_landed = 1;
    const double *out = dense + (size_t)(k - k0) * (size_t)W;
    if (!row_may_help(tj, r, out, sa->d, dp->S, sa->lb, landed_before)) continue;
    const int st = tj->row_start[r], fs = tj->fresh_start[r];
    relax_small(dp, sa, dense, k - k0, tj->s + st, tj->v + st, tj->row_start[r + 1] - st, tj->fresh + fs,
                tj->fresh_start[r + 1] - fs, landed_before);
  }
}

/* With k0 = 0 every row of J lands in the block or beyond it, and every row
 * after the first follows a landed row, so it proposes from its fresh steps
 * alone: its corners.  The rows to relax are then those with a corner (of
 * the list[n], in row order) that passes the screen of
 * pp__dps_alive_corners (dp_small_screen.c) at (t, d) with the stage's
 * bound; the others' proposals cannot lower the block.
 *   The list is the alive corners at the first (t, d) of a t; it loses
 * those that land beyond the block or on a cell no larger than their own
 * value, which fail at every later d of the t as well (their landing cell
 * moves further in k and s, where the closed block is no larger, and the
 * block only falls).  Returns the corners kept, at the front of list. */
static int relax_corner_rows(pp_dp *dp, small_at *sa, const pp_stairs *tj, int td, const pp__dps_corner *cs,
                             const int *cr, int *list, int n, double *dense, int k1) {
  const int W = dp->S + 1, d = sa->d;
  int last = -1, kept = 0;
  for (int x = 0; x < n; x++) {
    const pp__dps_corner *q = &cs[list[x]];
    const int k = q->k + td;
    if (k > k1 || q->f + d > dp->S) continue;
    const double cell = dense[(size_t)k * (size_t)W + (size_t)(q->f + d)];
    if (cell <= q->a) continue;
    list[kept++] = list[x];
    if (cr[list[x]] == last || cell <= sa->lb) continue;
    const int r = last = cr[list[x]], st = tj->row_start[r], fs = tj->fresh_start[r];
    relax_small(dp, sa, dense, k, tj->s + st, tj->v + st, tj->row_start[r + 1] - st, tj->fresh + fs,
                tj->fresh_start[r + 1] - fs, r > 0);
  }
  return kept;
}

int pp__dp_small_fits(const pp_dp *dp, int k0, int k1) {
  return (double)(k1 - k0 + 1) * (double)(dp->S + 1) <= 65536.0;
}

/* The candidates of the pair (id, j) for the degree pairs need[c] set,
 * after the stage-free screens, into the block (open: see the top). */
static void relax_pair(pp_dp *dp, const pp__dp_small *sm, int id, int j, const unsigned char *need,
                       const pp__dps_corner *cs, int na, double *dense, int k0, int k1, int open) {
  const pp_downsets *ds = dp->ds;
  const uint64_t *bi = pp_downset_bits(ds, id), *bj = pp_downset_bits(ds, j);
  const int *tv, *dv;
  pp_stage_n_degrees(dp->ev, &tv);
  pp_stage_n_dp(dp->ev, &dv);
  const int W = dp->S + 1;
  unsigned char *ti_on = sm->ti_on;
  for (int ti = 0; ti < sm->nt; ti++) ti_on[ti] = 0;
  for (int c = 0; c < sm->nc; c++) ti_on[sm->c_ti[c]] |= need[c];
  pp__dp_set_stage(dp, dp->ev, bi, bj, ti_on);
  const pp__dp_reach *rj = &dp->reach[j];
  /* relax_corner_rows's list, for t = tv[list_ti] (sm->work: the pair
   * screens are done with it); the degree pairs of one t come in a run,
   * d ascending */
  int *list = sm->work, n = -1, list_ti = -1;
  for (int c = 0; c < sm->nc; c++) {
    const int ti = sm->c_ti[c], di = sm->c_di[c], d = dv[di], td = tv[ti] * d;
    if (!need[c] || !pp_stage_supports(dp->ev, ti)) continue;
    /* (t, d) screen: as the pair screen with the stage's own lower bound
     * (the all-fastest load) at J's earliest landing cell */
    const double lb = pp_stage_lower_bound(dp->ev, ti, di);
    const int kc = rj->k + td > k0 ? rj->k + td : k0;
    if (kc > k1 || rj->s + d > dp->S) continue;
    if (dense[(size_t)(kc - k0) * (size_t)W + (size_t)(rj->s + d)] <= (lb > rj->a ? lb : rj->a)) continue;
    /* any lower bound serves relax_small: its crossing test compares with
     * the cost itself */
    const double li = sm->sum[(size_t)id * (size_t)sm->nc + (size_t)c].l;
    const double L = (li - sm->l_up[(size_t)j * (size_t)sm->nc + (size_t)c]) - 1e-9 * li;
    small_at sa = {ti,   di,
                   d,    k1 - k0 + 1,
                   open, lb > L ? lb : L,
                   NULL, dp->yof ? dp->yof + (size_t)di * (size_t)W : NULL};
    if (k0 == 0) {
      if (ti != list_ti) {
        for (int x = 0; x < na; x++) list[x] = sm->alive[x];
        n = na;
        list_ti = ti;
      }
      n = relax_corner_rows(dp, &sa, dp->tab[j], td, cs, sm->cr + (cs - sm->cs), list, n, dense, k1);
    } else
      relax_table(dp, &sa, dp->tab[j], td, dense, k0, k1);
  }
}

/* The strict sub-downsets J of I = id that can reach budget k1 (reach.k <
 * k1), largest index first, into sm->js; returns their number.
 *   With the index: let F be the nodes outside I all of whose successors
 * are in I.  A downset J (closed under successors) is a subset of I iff it
 * holds no node of F: if J held some v outside I, following successors
 * outside I from v ends (the graph is acyclic) at a node of F, which J
 * holds as it holds every successor of its nodes.  So the subsets are the
 * AND of without[v] over v in F, cut to the smaller layers. */
static int subsets_of(const pp_dp *dp, pp__dp_small *sm, int id, int k1) {
  const pp_downsets *ds = dp->ds;
  const uint64_t *bi = pp_downset_bits(ds, id);
  const int end = ds->layer_start[ds->size[id]];
  int nj = 0;
  if (!sm->without) {
    for (int j = end - 1; j >= 0; j--)
      if (dp->reach[j].k < k1 && pp_bits_subset(pp_downset_bits(ds, j), bi, ds->words)) sm->js[nj++] = j;
    return nj;
  }
  int nf = 0;
  for (int v = 0; v < ds->n_nodes; v++) {
    if (pp_bit_get(bi, v)) continue;
    int in = 1;
    for (int x = sm->succ_off[v]; x < sm->succ_off[v + 1] && in; x++) in = pp_bit_get(bi, sm->succ[x]);
    if (in) sm->frontier[nf++] = v;
  }
  for (int w = (end - 1) >> 6; w >= 0; w--) {
    uint64_t m = w < (end >> 6) ? ~(uint64_t)0 : ((uint64_t)1 << (end & 63)) - 1;
    for (int x = 0; x < nf && m; x++) m &= sm->without[(size_t)sm->frontier[x] * (size_t)sm->idw + (size_t)w];
    while (m) {
      const int b = 63 - __builtin_clzll(m);
      m &= ~((uint64_t)1 << b);
      const int j = w * 64 + b;
      if (dp->reach[j].k < k1) sm->js[nj++] = j;
    }
  }
  return nj;
}

/* Asks the cache for the lines of the n bytes at p. */
static inline void prefetch_range(const void *p, size_t n) {
  const char *c = p;
  for (size_t b = 0; b < n; b += 64) __builtin_prefetch(c + b);
  if (n) __builtin_prefetch(c + n - 1);
}

/* Asks the cache for what every pair's screens read of J = jp: its corners
 * (at[jp] was asked for before) and its floor load sums (fewer pairs read
 * the others).  Prefetches only: no effect on the result. */
static void prefetch_j(const pp__dp_small *sm, int jp) {
  const pp__dps_corner_at *at = &sm->at[jp];
  if (at->off >= 0) prefetch_range(sm->cs + at->off, sizeof(pp__dps_corner) * (size_t)at->n);
  prefetch_range(sm->l_up + (size_t)jp * (size_t)sm->nc, sizeof(float) * (size_t)sm->nc);
}

pp_stairs *pp__dp_small_rows(pp_dp *dp, int id, int k0, int k1) {
  const int W = dp->S + 1, nk = k1 - k0 + 1;
  if (!dp->small) { dp->small = small_new(dp); }
  pp__dp_small *sm = dp->small;
  const size_t need = (size_t)nk * (size_t)W;
  if (need > dp->dense_cap) {
    free(dp->dense);
    dp->dense = pp_xmalloc(sizeof(double) * need);
    dp->dense_cap = need;
  }
  double *dense = dp->dense;
  for (size_t i = 0; i < need; i++) dense[i] = INFINITY;
  unsigned char *needc = sm->need;
  /* The largest J first: their stages are small and their values close to
   * I's, so the block nears its final values early and the screens bite
   * sooner.  Any order gives the same minimum.  The subsets are listed
   * first so that their corners and sums can be fetched ahead. */
  const int nj = subsets_of(dp, sm, id, k1);
  int open = 1; /* until the first sub-downset that proposes anything (see the top) */
  for (int x = 0; x < nj; x++) {
    if (x + 12 < nj) __builtin_prefetch(sm->at + sm->js[x + 12]);
    if (x + 6 < nj) prefetch_j(sm, sm->js[x + 6]);
    /* a stop (pp_dp_set_poll), looked at every 64 subsets: the rows are abandoned */
    if (x % 64 == 63 && dp->poll && dp->poll(dp->poll_user)) return NULL;
    const int j = sm->js[x];
    const pp__dps_corner *cs;
    pp__dps_low low;
    const int na = pp__dps_alive_corners(dp, sm, j, dense, k0, k1, &cs, &low);
    if (na == 0) continue;
    int any = 0;
    for (int c0 = 0, c1; c0 < sm->nc; c0 = c1) {
      for (c1 = c0 + 1; c1 < sm->nc && sm->c_ti[c1] == sm->c_ti[c0];) c1++;
      pp__dps_pair_ti_screens(dp, sm, id, j, c0, c1, cs, na, &low, dense, k0, k1, sm->work, needc);
      for (int c = c0; c < c1; c++) any |= needc[c];
    }
    if (!any) continue;
    relax_pair(dp, sm, id, j, needc, cs, na, dense, k0, k1, open);
    if (open) close_block(dense, W, nk);
    open = 0;
  }
  return pp_stairs_from_dense(dense, k0, k1, dp->S);
}
