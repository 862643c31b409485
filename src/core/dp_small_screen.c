/*
 * dp_small_screen.c - the pair screens of the small-block 2bw kernel
 * (dp_small.c): which degree pairs of a pair (I, J) may propose a
 * candidate that lowers the block, decided before the stage is summarised.
 */
#include <limits.h>
#include <math.h>

#include "dp_small.h"

/* The pair screens, before the stage is summarised.  Every candidate of the
 * pair (I, J) comes from a step of J's table, and every step is dominated by
 * a corner (k, f, a) of J (a fresh step, or recursively the step of an
 * earlier row that a non-fresh one repeats: no larger budget, position and
 * value): its candidate at degrees (t, d) is at least max(a, load) and lands
 * at budget >= max(k + t*d, k0) and s >= f + d, where the closed block
 * holds no more than at the corner's own landing cell.  So if the block
 * there is <= max(a, bound on the load), neither the corner nor any step
 * it dominates can lower the final table.
 *   J side: t*d >= 1 and d >= 1 and the load >= 0, whatever the stage;
 *   (t, d): the load is at least the sum of its nodes' floors (I's sum
 *           minus J's, lowered by a margin far above the rounding of
 *           either sum); and the load is infinite if even the sums of the
 *           nodes' smallest memory terms A y + B exceed the memory at
 *           y = ceil(f / d) + 1 (which only grows for the steps that the
 *           corner dominates); and the load is at least pp__lag_bound at
 *           that y (a bound for every larger y too), infinite if the
 *           stage's smallest memory exceeds the limit there.
 * pp__dps_alive_corners keeps the corners that pass the first into
 * sm->alive and returns their number. */
int pp__dps_alive_corners(const pp_dp *dp, pp__dp_small *sm, int j, const double *dense, int k0, int k1,
                          const pp__dps_corner **cs, pp__dps_low *low) {
  int n, na = 0;
  *cs = pp__dps_corners(dp, sm, j, &n);
  const int W = dp->S + 1;
  pp__dps_low lo = {INT_MAX, INT_MAX, INFINITY};
  /* without branches on the data: a corner out of the block reads cell 0
   * and is dropped by ok; the index is written always, kept by na */
  for (int x = 0; x < n; x++) {
    const pp__dps_corner *c = &(*cs)[x];
    const int kc = c->k + 1 > k0 ? c->k + 1 : k0;
    const int ok = (kc <= k1) & (c->f + 1 <= dp->S);
    const size_t cell = ok ? (size_t)(kc - k0) * (size_t)W + (size_t)(c->f + 1) : 0;
    const int keep = ok & (dense[cell] > c->a);
    sm->alive[na] = x;
    na += keep;
    lo.k = keep && c->k < lo.k ? c->k : lo.k;
    lo.f = keep && c->f < lo.f ? c->f : lo.f;
    lo.a = keep && c->a < lo.a ? c->a : lo.a;
  }
  *low = lo;
  return na;
}

/* The smallest y in [lo, hi] with A y + B > M (the memory screen's own
 * expression, monotone in y for A >= 0), or hi + 1 if none. */
static int first_y_over(double A, double B, double M, int lo, int hi) {
  if (lo > hi) return hi + 1;
  if (!(A > 0)) return B > M ? lo : hi + 1;
  const double g = (M - B) / A; /* about the last y that fits */
  int y = g < lo ? lo : g >= hi ? hi + 1 : (int)g + 1;
  while (y > lo && A * (y - 1) + B > M) y--;
  while (y <= hi && !(A * y + B > M)) y++;
  return y;
}

/* The (t, d) screen above for the degree pairs c_lo .. c_hi - 1 of sm, which
 * share one t and grow in d: need[c] = 1 if some alive corner passes at c.
 * It first tries the screen on the corner (low.k, low.f, low.a) made of the
 * alive corners' smallest budget, position and value: each alive pp__dps_corner
 * lands at a budget and position no smaller, where the closed block is no
 * larger, its y is no smaller (so its memory floor no smaller) and its
 * value no smaller, so if that corner fails, all do.
 *   The corners are then tried from a list (work, scratch) that starts as
 * the na alive ones and loses, at each degree pair, those that land beyond
 * the block or on a cell no larger than their own value: at a later pair
 * (larger t*d and d) they land further still, on a cell no larger.  The
 * memory test is a cut in the position: y = ceil(f / d) + 1 grows with f,
 * so with y_over the first y whose memory floor exceeds the limit, a pp__dps_corner
 * passes it iff f <= (y_over - 2) d. */
void pp__dps_pair_ti_screens(const pp_dp *dp, const pp__dp_small *sm, int id, int j, int c_lo, int c_hi,
                             const pp__dps_corner *cs, int na, const pp__dps_low *low, const double *dense,
                             int k0, int k1, int *work, unsigned char *need) {
  const int *tv, *dv;
  pp_stage_n_degrees(dp->ev, &tv);
  pp_stage_n_dp(dp->ev, &dv);
  const int W = dp->S + 1, nc = sm->nc, ti = sm->c_ti[c_lo];
  if (sm->unsup[(size_t)id * (size_t)sm->nt + (size_t)ti] !=
      sm->unsup[(size_t)j * (size_t)sm->nt + (size_t)ti]) {
    /* a node of the stage has no TMPC for t: every candidate is infinite */
    for (int c = c_lo; c < c_hi; c++) need[c] = 0;
    return;
  }
  int n = -1; /* work not filled yet */
  for (int c = c_lo; c < c_hi; c++) need[c] = 0;
  for (int c = c_lo; c < c_hi; c++) {
    const int d = dv[sm->c_di[c]], td = tv[ti] * d;
    const int k_low = low->k + td > k0 ? low->k + td : k0;
    if (k_low > k1 || low->f + d > dp->S) break; /* so for every later c */
    const pp__dps_floor3 *fi = &sm->sum[(size_t)id * (size_t)nc + (size_t)c];
    const double L = (fi->l - sm->l_up[(size_t)j * (size_t)nc + (size_t)c]) - 1e-9 * fi->l;
    const double top = dense[(size_t)(k_low - k0) * (size_t)W + (size_t)(low->f + d)];
    if (top <= (low->a > L ? low->a : L)) continue;
    const pp__dps_floor2f *fj = &sm->ab_up[(size_t)j * (size_t)nc + (size_t)c];
    double A = (fi->a - fj->a) - 1e-9 * fi->a;
    const double B = (fi->b - fj->b) - 1e-9 * fi->b, M = dp->p->memory * (1 + 1e-9);
    if (A < 0) A = 0;
    const int *yof = dp->yof ? dp->yof + (size_t)sm->c_di[c] * (size_t)W : NULL;
    const int y_low = pp__dp_y_at(yof, low->f, d), y_max = pp__dp_y_at(yof, dp->S - d, d);
    if (A * y_low + B > M) continue;
    const int y_over = first_y_over(A, B, M, y_low + 1, y_max);
    const int f_mem = y_over > y_max ? dp->S : (y_over - 2) * d;
    const int k_cap = k1 - td, f_cap = dp->S - d;
    if (n < 0) {
      for (int x = 0; x < na; x++) work[x] = sm->alive[x];
      n = na;
    }
    int kept = 0, y_last = 0;
    double G = 0;
    for (int x = 0; x < n; x++) {
      const int at = work[x];
      const pp__dps_corner *q = &cs[at];
      if (q->k > k_cap || q->f > f_cap) continue; /* dropped: beyond the block */
      if (q->f > f_mem) {
        work[kept++] = at;
        continue;
      }
      const double cell =
          dense[(size_t)(q->k + td - k0 > 0 ? q->k + td - k0 : 0) * (size_t)W + (size_t)(q->f + d)];
      if (cell <= q->a) continue; /* dropped: on a cell no larger than its value */
      work[kept++] = at;
      if (cell <= L) continue;
      /* the memory-aware bound, looked up only now (its sums are large) */
      const int y = pp__dp_y_at(yof, q->f, d);
      if (y != y_last) {
        G = pp__lag_bound(sm->lag, id, j, c, y);
        y_last = y;
      }
      if (cell > G) {
        need[c] = 1;
        for (x++; x < n; x++) work[kept++] = work[x];
        break;
      }
    }
    n = kept;
  }
}
