/*
 * dp_dense.c - the 2bw kernel (see dp.c) for dense blocks too large for
 * dp_small.c and small enough not to need dp_wide.c's sweep (BERT-32 at
 * K = 2048: 2049 x 1921 cells, 35 downsets in a chain, 595 pairs).
 *
 * The transition for a pair (I, J), degrees (t, d) and a row of J's table
 * (budget k', steps (f_j, a_j)) proposes, for budget k = k' + t*d and
 * s = f_j + d, the value max(a_j, B(ceil(s/d))), where B(y) is the stage cost
 * of I \ J.  a_j falls with j and B rises with s, so only the steps up to the
 * crossing matter: the steps before it contribute a_j, the first one after it
 * contributes B.  A binary search finds the crossing (as in the reference).
 * Rows of J that repeat for several k' contribute only at their first k'.
 * Every candidate is written into a dense block of rows k0..k1, and
 * pp_stairs_from_dense takes its prefix minimum in k and s.
 *
 * Here the pairs are few and the candidates many (BERT-32 at K = 2048: 50 M
 * row and degree visits, 5.4 M rows relaxed, 17 M candidates, 7.5 M of them
 * written), and nearly all of them are beaten by a candidate of the same
 * pair at smaller degrees: see relax_row.  The writes land all over a block
 * far larger than the cache: they wait in a pending list (see pend).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "dp_impl.h"
#include "piper/bitset.h"
#include "dp_dense_block.h"

/* What relax_row needs about the stage at degree indices (ti, di): d, the
 * constant-time lower bound on its cost, its memo row over y and, if the
 * table fits, y = ceil(f / d) + 1 for every f in 0..S. */
typedef struct stage_at {
  int ti, di, d;
  double lb;
  const double *row; /* NULL until first used */
  const int *yof;    /* [S + 1] or NULL */
  /* The least step position found past the crossing on a row of J so far
   * (INT_MAX if none): the crossing's predicate a > B (with f + d <= S and
   * a > lb) fails there, and so at every position f >= g of every later
   * row, whose value at f is no larger while B(f) is the same. */
  int g;
} stage_at;

/* B of stage sa at the step f, i.e. at y = ceil(f / d) + 1 (y lies within
 * the memo row whenever f + d <= S). */
static inline double cost_at(pp_dp *dp, stage_at *sa, int f) {
  if (!sa->row) {
    int len;
    sa->row = pp_stage_cost_row(dp->ev, sa->ti, sa->di, &len);
  }
  const int y = pp__dp_y_at(sa->yof, f, sa->d);
  const double c = sa->row[y];
  return !isnan(c) ? c : pp_stage_cost(dp->ev, sa->ti, sa->di, y);
}

/* cost_at in the form pp__dp_crossing takes. */
static inline double crossing_cost(pp_dp *dp, void *sa, int f) { return cost_at(dp, sa, f); }

/* 1 if P(f) <= v, P the smaller of the stage costs at f of the dominating
 * degrees pa and pb (either may be NULL; P = +INFINITY if both are): the
 * candidate v from step f is dominated (see relax_row). */
static inline int dominated(pp_dp *dp, stage_at *pa, stage_at *pb, int f, double v) {
  return (pa && cost_at(dp, pa, f) <= v) || (pb && cost_at(dp, pb, f) <= v);
}

/* Widens the span sp = {lo, hi} of the cells written in a row to hold s. */
static inline void span_add(int *sp, int s) {
  sp[0] = s < sp[0] ? s : sp[0];
  sp[1] = s > sp[1] ? s : sp[1];
}

/* The first of the steps 0..u whose a_j is not dominated (P(f_j) > a_j,
 * see relax_row; they follow the dominated ones), or u + 1 if none. */
static int first_undominated(pp_dp *dp, stage_at *pa, stage_at *pb, const int *f, const double *a, int u) {
  if (u < 0 || dominated(dp, pa, pb, f[u], a[u])) return u + 1;
  int l = 0, h = u;
  while (l < h) {
    const int mid = (l + h) / 2;
    if (!dominated(dp, pa, pb, f[mid], a[mid]))
      h = mid;
    else
      l = mid + 1;
  }
  return l;
}

/* Candidates on their way into the block: the cells of a block row are
 * scattered over a block far larger than the cache, so reading each before
 * writing it stalls the kernel on one miss after another.  The writes are
 * kept here and applied in a batch (pend_flush), whose independent misses
 * overlap. */
#define PEND_CAP 4096
typedef struct pend {
  double *cell[PEND_CAP];
  double v[PEND_CAP];
  int n;
} pend;

/* Lowers every pending cell to its value and empties the list. */
static void pend_flush(pend *p) {
  for (int x = 0; x < p->n; x++) {
    double *c = p->cell[x];
    const double v = p->v[x];
    *c = v < *c ? v : *c;
  }
  p->n = 0;
}

/* Where relax_row writes: the block row out (block row index kk) and its
 * span sp (see span_add), the pending writes, and a coarse copy of the
 * block closed under the prefix minimum: grid[kg * gs + sg] is at least the
 * minimum over the cells written so far (pending ones included) at
 * k - k0 <= kg * GRID, s <= sg * GRID, i.e. the closed block at that
 * point.  A candidate v at (k, s) that is no smaller than the grid point at
 * or before it cannot lower the final table (the prefix minimum of the
 * cells written: their closure at (k, s) is at most that point's), so it is
 * not written; one that is written lowers the grid points at or after it
 * (grid_flood).  The grid (about 120 KB at K = 2048, N = 1920) stays in
 * cache where the block's cells do not. */
#define GRID_SHIFT 4
typedef struct sink {
  double *out;
  int *sp;
  double *grid;
  pend *pd;
  int kk, gk, gs;
} sink;

/* The grid point at or before cell (kk, s) of the block. */
static inline double grid_at(const sink *o, int kk, int s) {
  return o->grid[(size_t)(kk >> GRID_SHIFT) * (size_t)o->gs + (size_t)(s >> GRID_SHIFT)];
}

/* Lowers to v the grid points after cell (o->kk, s) that are larger.  The
 * grid is non-increasing in both directions, so a row stops at its first
 * point <= v and the flood at a row whose first point is. */
static void grid_flood(sink *o, int s, double v) {
  const int sg0 = (s + (1 << GRID_SHIFT) - 1) >> GRID_SHIFT;
  if (sg0 >= o->gs) return;
  for (int kg = (o->kk + (1 << GRID_SHIFT) - 1) >> GRID_SHIFT; kg < o->gk; kg++) {
    double *row = o->grid + (size_t)kg * (size_t)o->gs;
    if (!(v < row[sg0])) return;
    for (int sg = sg0; sg < o->gs && v < row[sg]; sg++) row[sg] = v;
  }
}

/* Writes candidate v at s of the sink's row if it can lower the final
 * table (see sink). */
static inline void put(sink *o, int s, double v) {
  if (!(v < grid_at(o, o->kk, s))) return;
  pend *p = o->pd;
  if (p->n == PEND_CAP) pend_flush(p);
  p->cell[p->n] = o->out + s;
  p->v[p->n++] = v;
  span_add(o->sp, s);
  grid_flood(o, s, v);
}

/* The candidate B(f_{u+1}) of the crossing step u + 1 (the first step
 * where relax_row's predicate fails), if it lands within S, lowers out and
 * is not dominated (see relax_row). */
static inline void crossing_write(pp_dp *dp, stage_at *sa, stage_at *pa, stage_at *pb, const int *f, int n,
                                  int u, sink *o) {
  if (u + 1 < n && f[u + 1] + sa->d <= dp->S) {
    const int s = f[u + 1] + sa->d;
    const double b = cost_at(dp, sa, f[u + 1]);
    if (b < grid_at(o, o->kk, s) && !dominated(dp, pa, pb, f[u + 1], b)) put(o, s, b);
  }
}

/* Proposes the candidates of one row of J's table for the stage sa into
 * out[s], s = 0..S, widening sp (see span_add) by what it writes.  The
 * row's steps are f[n], a[n], its fresh ones fresh[n_fresh] (indices into
 * f/a, ascending); a row whose predecessor lands too is relaxed for those
 * alone (relax_fresh): the others repeat the previous row, whose
 * candidates reach this budget through the prefix minimum in k.
 *
 * Dominance screen.  pa and pb are the same pair at degrees (t', d') with
 * t'd' <= td, d' <= d and (t', d') != (t, d) (a smaller t with the same d,
 * the same t with the next smaller d), or NULL.  The candidate of (t, d)
 * from J's cell (k', f_j) is v = max(a_j, B(ceil(f_j/d) + 1)) >= a_j at
 * (k' + td, f_j + d); the one of (t', d') from the same cell is
 * max(a_j, B'(ceil(f_j/d') + 1)) at (k' + t'd', f_j + d'), a cell no later
 * in k or s and earlier in one of them.  If B' there is <= v, that candidate
 * is <= v and the final table (the prefix minimum over all candidates) is
 * <= v at the landing cell of v already: v is skipped.  (If k' + t'd' < k0,
 * J's cell (k0 - t'd', f_j) holds at most a_j and lands at k0 by the
 * clipping of pp__dp_landing, with a step f <= f_j: with B' non-decreasing
 * in y, which the binary search relies on too, its candidate is <= v.)
 * Dominated candidates are dominated by strictly earlier ones, so the
 * argument is well founded.  For the steps before the crossing v = a_j;
 * there the test P(f_j) <= a_j (P = the smaller of B' over pa, pb) holds
 * on a prefix of the steps (P rises with f_j, a_j falls), found by a
 * binary search, so only the steps after that prefix are written.  (For
 * the fresh steps relax_fresh takes the prefix from the dominating degrees'
 * own crossings instead, which cost no stage costs.) */
static int relax_fresh(pp_dp *dp, stage_at *sa, stage_at *pa, stage_at *pb, const int *f, const double *a,
                       int n, const int *fresh, int n_fresh, int x_from, sink *o);

static void relax_row(pp_dp *dp, stage_at *sa, stage_at *pa, stage_at *pb, const int *f, const double *a,
                      int n, const int *fresh, int n_fresh, sink *o) {
  const int d = sa->d;
  /* pred(j): step j lands within S and the stage is cheaper than a[j] there;
   * true for a prefix of the steps.  u = the last step where it holds. */
  const int u = pp__dp_crossing(dp, crossing_cost, sa, d, sa->lb, f, a, n, fresh, n_fresh, 0);
  const int j0 = first_undominated(dp, pa, pb, f, a, u);
  for (int j = j0; j <= u; j++) put(o, f[j] + d, a[j]);
  crossing_write(dp, sa, pa, pb, f, n, u, o);
}

/* relax_row for the fresh steps fresh[n_fresh] only, of which those before
 * x_from are dominated (see relax_row): the caller knows them from the
 * dominating degrees' own crossings on this row (at a fresh step x <= their
 * xu, a_x > B' >= P there).  Returns xu, the last fresh step (index into
 * fresh) where the crossing's predicate holds, or -1 if none or not
 * searched (when it is below x_from).
 *   The predicate of the crossing search holds on a prefix of all steps,
 * so on a prefix of the fresh ones too: the search runs over the fresh
 * list, from x_from on.  The crossing step u + 1 is fresh iff it is the
 * fresh step after xu, i.e. iff the predicate holds at the step just
 * before that one.  A crossing write at a fresh step before x_from is
 * dominated (its B is >= its a, which is > P there), so if the predicate
 * fails at fresh[x_from], only a crossing write there can matter. */
static int relax_fresh(pp_dp *dp, stage_at *sa, stage_at *pa, stage_at *pb, const int *f, const double *a,
                       int n, const int *fresh, int n_fresh, int x_from, sink *o) {
  const int S = dp->S, d = sa->d;
  const double lb = sa->lb;
  if (x_from >= n_fresh) return -1; /* (a crossing write at a fresh step is dominated too) */
#define PRED(j) (f[j] < sa->g && f[j] + d <= S && a[j] > lb && a[j] > cost_at(dp, sa, f[j]))
  int lo = 0, hi = n_fresh - 1, xu = -1;
  if (x_from > 0) { /* the search starts at x_from */
    const int jx = fresh[x_from];
    if (!PRED(jx)) { /* only a crossing write at jx itself can matter; xu goes unreported */
      if (f[jx] < sa->g) sa->g = f[jx];
      if (PRED(jx - 1)) crossing_write(dp, sa, pa, pb, f, n, jx - 1, o);
      return -1;
    }
    lo = x_from + 1;
    xu = x_from;
  }
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (PRED(fresh[mid])) {
      xu = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  int cross = 0; /* the crossing step u + 1 is fresh[xu + 1] */
  if (xu + 1 < n_fresh) {
    const int jc = fresh[xu + 1];
    if (f[jc] < sa->g) sa->g = f[jc];
    cross = jc == 0 || (xu >= 0 && fresh[xu] == jc - 1) || PRED(jc - 1);
  }
#undef PRED
  for (int x = x_from; x <= xu; x++) put(o, f[fresh[x]] + d, a[fresh[x]]);
  if (cross) crossing_write(dp, sa, pa, pb, f, n, xu + 1 < n_fresh ? fresh[xu + 1] - 1 : n, o);
  return xu;
}

/* The row records (pp__dk_row_rec) of table tj into rec[n_rows]; what the
 * screens of relax_pair_rows read about each row. */
static void row_recs(const pp_stairs *tj, pp__dk_row_rec *rec) {
  for (int r = 0; r < tj->n_rows; r++) {
    const int st = tj->row_start[r], fs = tj->fresh_start[r], nf = tj->fresh_start[r + 1] - fs;
    pp__dk_row_rec q = {-1, -1, -1, INFINITY, INFINITY, INT_MAX};
    if (nf > 0) {
      const int jf = tj->fresh[fs], jl = tj->fresh[fs + nf - 1];
      if (jf > 0) {
        q.pf = tj->s[st + jf - 1];
        q.pa = tj->v[st + jf - 1];
      }
      q.lf = tj->s[st + jl];
      q.ff = tj->s[st + jf];
      q.la = tj->v[st + jl];
    }
    rec[r] = q;
  }
  int m = INT_MAX;
  for (int r = tj->n_rows - 1; r >= 0; r--) {
    if (rec[r].lf >= 0 && rec[r].ff < m) m = rec[r].ff;
    rec[r].ffmin = m;
  }
}

/* The row records of downset j's table tj, from dk's cache (made on the
 * first call for this table: it serves every pair (I, j) and every block). */
static const pp__dk_row_rec *recs_of(pp__dp_dense *dk, int n_ids, int j, const pp_stairs *tj) {
  if (!dk->recs) {
    dk->recs = pp_xcalloc((size_t)n_ids, sizeof *dk->recs);
    dk->n_recs = n_ids;
  }
  pp__dk_recs *c = &dk->recs[j];
  if (c->of != tj->row_start) {
    free(c->rec);
    c->rec = pp_xmalloc(sizeof *c->rec * ((size_t)tj->n_rows + 1));
    c->of = tj->row_start;
    row_recs(tj, c->rec);
  }
  return c->rec;
}

/* Per-kernel state across the pairs of one block. */
typedef struct dense_run {
  pp_dp *dp;
  pp__dp_dense *dk;
  double *dense;
  int k0, k1, W;
  stage_at *sa;              /* [nt * nd] */
  const pp__dk_row_rec *rec; /* the current J's row records (recs_of) */
  unsigned char *td_on;      /* [nt * nd] scratch */
  /* per degree pair the crossing xu that relax_fresh returned on the row
   * of stamp xu_stamp (the rows visited are stamped 1, 2, ... in turn) */
  int *xu_at;
  long long *xu_stamp, stamp;
  double *grid; /* see sink */
  pend *pd;     /* see sink; flushed before the block is closed */
  int gk, gs;
  const int *tv, *dv;
  int nt, nd;
  /* the degree indices ti the current stage supports, ascending, and for
   * each the stages of the one before it at d index 0, or NULL (the
   * dominating degrees pa of relax_row) */
  int *t_live, n_live;
  stage_at **pa_of; /* [nt] */
  int *di_from;     /* [nt] scratch of relax_pair_rows */
} dense_run;

/* The screens of relax_pair_rows for row r (whose predecessor landed) at the
 * stage sa with dominating degrees pa, pb: 1 if the row may propose a
 * candidate that is not dominated.  Only the fresh steps are relaxed (see
 * relax_row).  None matters if the step before the first fresh one is past
 * the crossing (then the crossing step is not fresh either), as relax_row
 * finds too.  None lowers the final table if the last fresh step jl (within
 * S) is dominated: P(f_jl) <= a_jl (see relax_row) holds then for every
 * step j <= jl, so every fresh a_j written is dominated, and so is a
 * crossing write at a fresh step j = u + 1 <= jl, whose value
 * B(f_j) >= a_j (pred fails at j) is >= P(f_j). */
static inline int row_live(pp_dp *dp, const pp__dk_row_rec *q, stage_at *sa, stage_at *pa, stage_at *pb) {
  if (q->lf < 0) return 0;
  if (q->pf >= 0 &&
      !(q->pf < sa->g && q->pf + sa->d <= dp->S && q->pa > sa->lb && q->pa > cost_at(dp, sa, q->pf))) {
    if (q->pf < sa->g) sa->g = q->pf;
    return 0;
  }
  return !(q->lf + sa->d <= dp->S && dominated(dp, pa, pb, q->lf, q->la));
}

/* The grid point of run at or before cell (kk, s) of the block. */
static inline double grid_at_run(const dense_run *run, int kk, int s) {
  return run->grid[(size_t)(kk >> GRID_SHIFT) * (size_t)run->gs + (size_t)(s >> GRID_SHIFT)];
}

/* The sink of run at block row kk (see sink). */
static sink sink_at(const dense_run *run, int kk) {
  return (sink){run->dense + (size_t)kk * (size_t)run->W,
                run->dk->span + 2 * kk,
                run->grid,
                run->pd,
                kk,
                run->gk,
                run->gs};
}

/* A block that starts above budget 0 (k0 > 0): for each (t, d) with
 * td <= k0 the row of J that holds budget k0 - td lands at k0, clipped
 * (pp__dp_landing), and proposes every step (relax_row).  Those rows are
 * relaxed here, before the rows in order (relax_pair_rows), whose loop
 * over the degrees then only skips a row landing at k0 or below instead
 * of looking for its clipped landing.  The order does not change the
 * table: a candidate is dropped only where one written, or the grid, is
 * no larger (see sink and relax_row).  (BERT-32 at K = 2048, callgrind,
 * bench/probe_rank_instructions.sh: 3.9% fewer instructions summed over
 * two ranks, and 3.6% fewer on one rank, whose blocks all start at 0 and
 * so only run the loop without the clipped case.) */
static void relax_clipped_rows(dense_run *run, const pp_stairs *tj, const unsigned char *td_on) {
  pp_dp *dp = run->dp;
  const int k0 = run->k0, k1 = run->k1, nd = run->nd;
  sink o = sink_at(run, 0);
  for (int x = 0; x < run->n_live; x++) {
    const int ti = run->t_live[x];
    stage_at *pa = run->pa_of[ti];
    for (int di = 0; di < nd; di++) {
      const int td = run->tv[ti] * run->dv[di];
      if (td > k0) break; /* so for every larger d: no row is clipped */
      if (!td_on[ti * nd + di]) continue;
      const int r = pp_stairs_row(tj, k0 - td);
      if (pp__dp_landing(tj, r, td, k0, k1) != k0) continue;
      stage_at *sa = &run->sa[ti * nd + di];
      const int st = tj->row_start[r], fs = tj->fresh_start[r];
      relax_row(dp, sa, pa ? pa + di : NULL, di > 0 ? sa - 1 : NULL, tj->s + st, tj->v + st,
                tj->row_start[r + 1] - st, tj->fresh + fs, tj->fresh_start[r + 1] - fs, &o);
    }
  }
}

/* Every candidate of the pair (id, j) into the block: J's rows in order,
 * each for every (t, d), so that a row's steps are read from cache while
 * they are relaxed for all degrees.  Row r lands for (t, d) at
 * pp__dp_landing; if its predecessor lands too, only its fresh steps are
 * relaxed (see relax_row), and then (k' = its first budget) it lands at
 * k' + td itself, unclipped, as it does for every larger td.  With k0 = 0
 * every row lands until k' + td passes k1.  td_on[ti nd + di] is cleared
 * for a degree pair found done with J (see the lower-bound test below). */
static void relax_pair_rows(dense_run *run, const pp_stairs *tj, unsigned char *td_on, int td_max) {
  pp_dp *dp = run->dp;
  const int S = dp->S, k0 = run->k0, k1 = run->k1, nd = run->nd;
  if (k0 > 0) relax_clipped_rows(run, tj, td_on);
  for (int r = pp__dp_first_landing_row(tj, td_max, k0); r < tj->n_rows; r++) {
    const pp__dk_row_rec *q = &run->rec[r];
    /* a later row with nothing fresh proposes nothing here: above k0 only
     * its fresh steps are relaxed, and at k0 it is a clipped row (relaxed
     * already by relax_clipped_rows) */
    if (r > 0 && q->lf < 0) continue;
    const int st = tj->row_start[r], n = tj->row_start[r + 1] - st, kr = tj->row_k[r];
    if (kr + 1 > k1) break; /* every row from here lands beyond k1 */
    const int fs = tj->fresh_start[r];
    const int *fresh = tj->fresh + fs, n_fresh = tj->fresh_start[r + 1] - fs;
    if (r + 1 < tj->n_rows) { /* the next row's fresh steps, read while this row is relaxed */
      const int st1 = tj->row_start[r + 1], f0 = tj->fresh_start[r + 1], f1 = tj->fresh_start[r + 2];
      if (f1 > f0) {
        const int j0 = st1 + tj->fresh[f0], j1 = st1 + tj->fresh[f1 - 1];
        for (int j = j0; j <= j1; j += 16) __builtin_prefetch(tj->s + j);
        for (int j = j0; j <= j1; j += 8) __builtin_prefetch(tj->v + j);
      }
    }
    const long long stamp = ++run->stamp; /* this row's crossings in xu_at (see relax_fresh) */
    /* The row ends at budget kb: it lands only for td >= k0 - kb (see
     * pp__dp_landing), so with k0 > 0 each t starts at the first such d,
     * di_from[ti].  kb rises with r, so di_from only falls: it is walked
     * down from the last row's, nd steps per J at most. */
    const int td_need = k0 - (r + 1 < tj->n_rows ? tj->row_k[r + 1] - 1 : tj->k_last);
    /* Degrees (t, d) at di >= nd_live propose nothing for this row (see
     * the grid test below); nd_live only falls. */
    int nd_live = nd;
    for (int x = 0; x < run->n_live; x++) {
      const int ti = run->t_live[x], t = run->tv[ti];
      stage_at *pa = run->pa_of[ti];
      int di0 = run->di_from[ti];
      while (di0 > 0 && (long long)t * run->dv[di0 - 1] >= td_need) di0--;
      run->di_from[ti] = di0;
      for (int di = di0; di < nd_live; di++) {
        const int d = run->dv[di], td = run->tv[ti] * d;
        int k = kr + td, fresh_only = r > 0;
        if (k > k1) break; /* so for every larger d */
        if (!td_on[ti * nd + di]) continue;
        /* a row landing at k0 or below is the clipped one, relaxed first
         * (relax_clipped_rows), or lands nowhere; above k0 its predecessor,
         * ending at kr - 1, lands at kr - 1 + td >= k0 too */
        if (k <= k0) continue;
        if (fresh_only && q->lf < 0) continue;
        stage_at *sa = &run->sa[ti * nd + di], *pb = di > 0 ? sa - 1 : NULL, *pad = pa ? pa + di : NULL;
        /* Every write of a row relaxed for its fresh steps is at least
         * max(lb, a of its last fresh step) at a step >= its first fresh
         * step + d (see relax_fresh): none if that is beyond S or the grid
         * point there holds no more (see sink).  This test reads only the
         * grid, which stays in cache, so it goes before row_live's stage
         * costs.  If the grid point is even <= a of the last fresh step,
         * the test holds for every later degree of the row too: t and d
         * ascend, so their cells (k + t'd' - td, ff + d' - d) come no
         * earlier, and the grid falls in k and s and only falls as writes
         * land. */
        if (fresh_only) {
          if (q->ff + d > S) {
            nd_live = di;
            break;
          }
          const double g = grid_at_run(run, k - k0, q->ff + d);
          if (g <= q->la) {
            nd_live = di;
            break;
          }
          if (g <= sa->lb) {
            /* The same holds for every later row of J with a fresh step:
             * it lands no earlier in k, at a step no earlier than ffmin,
             * so if the grid point there holds no more than lb either, the
             * degree pair is done with this J (the grid only falls).  This
             * turns most of these tests into one read of td_on. */
            if (grid_at_run(run, k - k0, q->ffmin + d) <= sa->lb) td_on[ti * nd + di] = 0;
            continue;
          }
          if (!row_live(dp, q, sa, pad, pb)) continue;
        }
        sink o = sink_at(run, k - k0);
        if (!fresh_only) {
          relax_row(dp, sa, pad, pb, tj->s + st, tj->v + st, n, fresh, n_fresh, &o);
          continue;
        }
        /* the fresh steps up to a dominating degree's crossing on this row
         * are dominated (see relax_fresh) */
        const int c = ti * nd + di, c_pa = pad ? (int)(pad - run->sa) : -1;
        int x_from = 0;
        if (c_pa >= 0 && run->xu_stamp[c_pa] == stamp) x_from = run->xu_at[c_pa] + 1;
        if (pb && run->xu_stamp[c - 1] == stamp && run->xu_at[c - 1] + 1 > x_from)
          x_from = run->xu_at[c - 1] + 1;
        run->xu_at[c] = relax_fresh(dp, sa, pad, pb, tj->s + st, tj->v + st, n, fresh, n_fresh, x_from, &o);
        run->xu_stamp[c] = stamp;
      }
    }
  }
}

/* Every candidate of the pair (id, j) into the block. */
static void relax_pair(dense_run *run, int j) {
  pp_dp *dp = run->dp;
  const pp__dp_reach *rj = &dp->reach[j];
  const pp_stairs *tj = dp->tab[j];
  const int S = dp->S, W = run->W, k0 = run->k0, k1 = run->k1, nd = run->nd;
  for (int ti = 0; ti < run->nt; ti++)
    for (int di = 0; di < nd; di++)
      run->sa[ti * nd + di] = (stage_at){ti,          di,
                                         run->dv[di], pp_stage_lower_bound(dp->ev, ti, di),
                                         NULL,        dp->yof ? dp->yof + (size_t)di * (size_t)W : NULL,
                                         INT_MAX};
  run->rec = recs_of(run->dk, dp->ds->count, j, tj);
  /* the supported t, each with the stages of the one before it (the
   * dominating degrees pa of relax_row) */
  stage_at *prev = NULL;
  run->n_live = 0;
  for (int ti = 0; ti < run->nt; ti++) {
    run->di_from[ti] = nd;
    if (!pp_stage_supports(dp->ev, ti)) continue;
    run->t_live[run->n_live++] = ti;
    run->pa_of[ti] = prev;
    prev = &run->sa[ti * nd];
  }
  /* (t, d) whose every candidate lands at k >= kc = max(rj->k + td, k0),
   * s >= rj->s + d with a value >= max(lb, rj->a): none lowers the final
   * table if the cell there holds no more already */
  int td_max = 0;
  for (int ti = 0; ti < run->nt; ti++)
    for (int di = 0; di < nd; di++) {
      const int d = run->dv[di], td = run->tv[ti] * d, kc = rj->k + td > k0 ? rj->k + td : k0;
      const double lb = run->sa[ti * nd + di].lb;
      const int on =
          kc <= k1 && rj->s + d <= S &&
          !(run->dense[(size_t)(kc - k0) * (size_t)W + (size_t)(rj->s + d)] <= (lb > rj->a ? lb : rj->a));
      run->td_on[ti * nd + di] = (unsigned char)on;
      if (on && td > td_max) td_max = td;
    }
  if (td_max > 0) relax_pair_rows(run, tj, run->td_on, td_max);
}

pp_stairs *pp__dp_dense_rows(pp_dp *dp, int id, int k0, int k1) {
  const pp_downsets *ds = dp->ds;
  const int W = dp->S + 1, nk = k1 - k0 + 1;
  pp__dp_dense *dk = pp__dk_scratch(dp, nk, W);
  dense_run run = {.dp = dp, .dk = dk, .dense = dk->cells, .k0 = k0, .k1 = k1, .W = W};
  run.nt = pp_stage_n_degrees(dp->ev, &run.tv);
  run.nd = pp_stage_n_dp(dp->ev, &run.dv);
  run.sa = pp_xmalloc(sizeof(stage_at) * (size_t)(run.nt * run.nd + 1));
  run.td_on = pp_xmalloc((size_t)(run.nt * run.nd + 1));
  run.xu_at = pp_xmalloc(sizeof(int) * (size_t)(run.nt * run.nd + 1));
  run.xu_stamp = pp_xcalloc((size_t)(run.nt * run.nd + 1), sizeof(long long));
  run.t_live = pp_xmalloc(sizeof(int) * (size_t)(run.nt + 1));
  run.pa_of = pp_xmalloc(sizeof(stage_at *) * (size_t)(run.nt + 1));
  run.di_from = pp_xmalloc(sizeof(int) * (size_t)(run.nt + 1));
  run.gk = ((nk - 1) >> GRID_SHIFT) + 1;
  run.gs = ((W - 1) >> GRID_SHIFT) + 1;
  run.grid = pp_xmalloc(sizeof(double) * (size_t)run.gk * (size_t)run.gs);
  run.pd = pp_xmalloc(sizeof(pend));
  run.pd->n = 0;
  for (size_t x = 0; x < (size_t)run.gk * (size_t)run.gs; x++) run.grid[x] = INFINITY;
  const uint64_t *bi = pp_downset_bits(ds, id);
  const int end = ds->layer_start[ds->size[id]];
  int stopped = 0;
  for (int j = 0; j < end; j++) {
    if (dp->reach[j].k >= k1) continue; /* every candidate lands beyond k1 */
    const uint64_t *bj = pp_downset_bits(ds, j);
    if (!pp_bits_subset(bj, bi, ds->words)) continue;
    stopped = dp->poll && dp->poll(dp->poll_user); /* a stop: the rows are abandoned */
    if (stopped) break;
    pp__dp_set_stage(dp, dp->ev, bi, bj, NULL);
    relax_pair(&run, j);
  }
  free(run.sa);
  free(run.td_on);
  free(run.xu_at);
  free(run.xu_stamp);
  free(run.t_live);
  free(run.pa_of);
  free(run.di_from);
  free(run.grid);
  if (!stopped) pend_flush(run.pd);
  free(run.pd);
  if (stopped) {
    pp__dk_reset(dk, nk, W);
    return NULL;
  }
  return pp__dk_close(dk, k0, k1, dp->S);
}
