/*
 * dp_front_screen.c - screens for the Pareto-row kernel (dp_front.c) on
 * small dense blocks, where the pairs (I, J) are many and the rows short
 * (GNMT: 17,914 downsets, 15.5M pairs, budgets and s up to 16 at K = 16).
 *
 * A candidate (s, A, H) landing at budget k can be left out when an entry
 * x already collected at a budget <= k has s, A and H no larger: the row
 * of every budget >= k holds x or an entry that dominates x, and the rows
 * are the entries no other one dominates (dominance is transitive; of two
 * equal entries one is kept), so the tables do not change.  The grid holds
 * per (k, s) two collected entries of budget <= k and s' <= s (the least in
 * the order (H, A) and the least in (A, H)), closed under that prefix as it
 * fills (pp__dpf_flood, as dp_small.c's block), and a lower-bound corner of
 * a set of candidates is tested against the cell of the least budget and s
 * they can land at.  The order of J does not change the rows (the pruned
 * set of all candidates is independent of it), only how early the grid
 * fills: the largest J first, as in dp_small.c.
 *
 * Bounds.  A stage (l, a) in front of entry (s, A, H) of J gives
 * (s + d, A + a, max(H + a, A + l)) with a = d (l - r) / N.  With l >= lb
 * and r <= rb (floating-point values), a >= alb = d (lb - rb) / N
 * evaluated the same way (rounding is monotone), and every candidate from
 * an entry with s, A, H no smaller than (s0, A0, H0) is no smaller than
 * (s0 + d, A0 + alb, max(H0 + alb, A0 + lb)) in all three.  The least
 * s, A and H over J's rows bound every entry of J (they are those of its
 * whole last row: every earlier entry is in it or dominated by one of it),
 * and its first finite row's budget bounds every landing.
 *   pair   lb: the sum of the stage's node floors (pp_stage_node_floor; I's
 *          sum minus J's, lowered by 1e-9 of I's, far above the rounding of
 *          either sum); rb: from the nodes' largest parameter bytes (raised
 *          the same way); the load is infinite if even the nodes' smallest
 *          memory terms A y + B exceed the memory at J's least y (y does not
 *          fall as s grows; with gpipe it is fixed);
 *   (t, d) after the stage is summarised: lb also its all-fastest bound,
 *          rb from the stage's own sum of the largest parameter bytes;
 *   row    the corner of a row's entries (their least s, A and H:
 *          every one of them is no smaller in all three), before the row
 *          is read (dp_front.c's extend_pair);
 *   entry  the same corner per entry of a row, before its cost is asked.
 * Memory-aware.  Both the pair and the entry screens then raise lb to the
 * Lagrangian bound of dp_small_lag.c at the entry's y (I's sums minus J's,
 * a value no larger than the knapsack's load at that y and every larger
 * one; +INFINITY when even the smallest memory exceeds the limit, where
 * the cost is infinite too).  The pair screen takes it at J's least s
 * (every entry of J has s and so y no smaller).  rb stays the same, so a
 * >= d (lb - rb) / N still holds with the raised lb.
 * Private to src/core.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_front.h"
#include "dp_small_lag.h"

/* Sums over a downset's nodes at one degree pair: load floor, memory
 * floors A and B, largest parameter bytes. */
typedef struct floor4 {
  double l, a, b, p;
} floor4;

struct pp__fscreen {
  int nc;       /* nt * nd degree pairs, c = ti nd + di */
  floor4 *sum;  /* [count * nc] */
  int *unsup;   /* [count * nt]: nodes with no usable TMPC for t */
  double *pmax; /* [n_nodes * nt]: a node's largest parameter bytes */
  /* pp__dpf_jmin per downset, made on first use and kept with the address
   * of the table's values it was made from (a table of a downset, once
   * final, is read as J only; the key catches one set anew) */
  pp__fjmin *jmin;
  const double **jkey;
  pp__lag *lag; /* memory-aware bounds (dp_small_lag.c), c = ti nd + di; or NULL */
};

void pp__dpf_screen_free(pp__fscreen *sc) {
  if (!sc) return;
  free(sc->sum);
  free(sc->unsup);
  free(sc->pmax);
  free(sc->jmin);
  free(sc->jkey);
  pp__lag_free(sc->lag);
  free(sc);
}

/* The largest parameter bytes of node v's TMPCs for degree index ti (the
 * usable ones are among them). */
static double node_pmax(const pp_dp *dp, int v, int ti) {
  const pp__dp_front *f = dp->front;
  const pp_tmpc_list *l = pp_graph_tmpcs(dp->g, v, f->tv[ti]);
  double P = 0.0;
  for (int x = 0; l && x < l->count; x++) {
    const pp_tmpc *m = &l->tmpcs[x];
    if (dp->p->no_recompute && m->is_recompute) continue;
    if (m->parameter_size > P) P = m->parameter_size;
  }
  return P;
}

pp__fscreen *pp__dpf_screen_new(pp_dp *dp, int force) {
  const pp__dp_front *f = dp->front;
  /* where they pay: many pairs with short rows (GNMT: 17,914 downsets); on
   * a chain (BERT-32: 33 downsets) the rows are long, the pairs few, and
   * the flood costs more than it saves (measured) */
  if (f->uniform || f->v > 1) return NULL;
  if (!force && ((double)(dp->K + 1) * (double)(dp->S + 1) > 4096.0 || dp->ds->count < 256)) return NULL;
  const pp_downsets *ds = dp->ds;
  const int n = dp->g->n_nodes, nt = f->nt, nd = f->nd, nc = nt * nd;
  pp__fscreen *sc = pp_xcalloc(1, sizeof *sc);
  sc->nc = nc;
  sc->pmax = pp_xmalloc(sizeof(double) * (size_t)(n * nt + 1));
  floor4 *fl = pp_xmalloc(sizeof(floor4) * (size_t)(n * nc + 1));
  for (int v = 0; v < n; v++)
    for (int ti = 0; ti < nt; ti++) {
      sc->pmax[v * nt + ti] = node_pmax(dp, v, ti);
      for (int di = 0; di < nd; di++) {
        floor4 *x = &fl[v * nc + ti * nd + di];
        x->l = pp_stage_node_floor(f->ev, v, ti, di);
        pp_stage_node_mem_floor(f->ev, v, ti, di, &x->a, &x->b);
        x->p = sc->pmax[v * nt + ti];
      }
    }
  sc->sum = pp_xcalloc((size_t)ds->count * (size_t)nc + 1, sizeof(floor4));
  sc->unsup = pp_xcalloc((size_t)ds->count * (size_t)nt + 1, sizeof(int));
  for (int id = 0; id < ds->count; id++) {
    floor4 *s = sc->sum + (size_t)id * (size_t)nc;
    int *u = sc->unsup + (size_t)id * (size_t)nt;
    const uint64_t *b = pp_downset_bits(ds, id);
    for (int w = 0; w < ds->words; w++)
      for (uint64_t x = b[w]; x; x &= x - 1) {
        const int v = w * 64 + __builtin_ctzll(x);
        for (int c = 0; c < nc; c++) {
          const floor4 *q = &fl[v * nc + c];
          if (q->l == INFINITY) {
            u[c / nd] += c % nd == 0;
          } else {
            s[c].l += q->l;
            s[c].a += q->a;
            s[c].b += q->b;
            s[c].p += q->p;
          }
        }
      }
  }
  free(fl);
  sc->jmin = pp_xmalloc(sizeof(pp__fjmin) * (size_t)ds->count);
  sc->jkey = pp_xcalloc((size_t)ds->count, sizeof(const double *));
  pp__dp_front *fw = dp->front;
  fw->need = pp_xcalloc((size_t)nc + 1, 1);
  fw->ti_on = pp_xcalloc((size_t)nt + 1, 1);
  fw->lfloor = pp_xcalloc((size_t)nc + 1, sizeof(double));
  int *c_ti = pp_xmalloc(sizeof(int) * (size_t)(nc + 1)), *c_di = pp_xmalloc(sizeof(int) * (size_t)(nc + 1));
  for (int c = 0; c < nc; c++) {
    c_ti[c] = c / nd;
    c_di[c] = c % nd;
  }
  sc->lag = pp__lag_new(f->ev, dp->g, dp->p, ds, dp->S, c_ti, c_di, nc, 256e6);
  free(c_ti);
  free(c_di);
  return sc;
}

const double *pp__dpf_screen_pmax(const pp__fscreen *sc) { return sc->pmax; }

void pp__dpf_screen_begin(pp_dp *dp, int k0, int k1) {
  pp__dp_front *f = dp->front;
  const size_t need = (size_t)(k1 - k0 + 1) * (size_t)(dp->S + 1);
  if (need > f->grid_cap) {
    free(f->cell_n);
    free(f->cell_A);
    free(f->cell_H);
    f->cell_n = pp_xmalloc(sizeof(int) * need);
    f->cell_A = pp_xmalloc(sizeof(double) * need * PP__FCELL);
    f->cell_H = pp_xmalloc(sizeof(double) * need * PP__FCELL);
    f->grid_cap = need;
  }
  memset(f->cell_n, 0, sizeof(int) * need);
}

pp__fjmin pp__dpf_jmin(const pp_dp *dp, int j) {
  const pp__dp_front *f = dp->front;
  const pp_stairs *t = dp->tab[j];
  if (f->scr->jkey[j] == t->v) return f->scr->jmin[j];
  pp__fjmin m = {INT_MAX, INT_MAX, INFINITY, INFINITY};
  const int last = t->n_rows - 1;
  for (int r = 0; r <= last; r++) /* the union of the rows: the table at its last budget */
    for (int i = 0, n = pp__dpf_row_entries(f, t, r); i < n; i++) {
      const pp__fent e = pp__dpf_entry(f, t, r, i);
      if (e.H == INFINITY) continue;
      if (e.s < m.s) m.s = e.s;
      if (e.A < m.A) m.A = e.A;
      if (e.H < m.H) m.H = e.H;
    }
  for (int r = 0; m.H != INFINITY && r <= last; r++) /* a row holds the sentinel only when empty */
    if (pp__dpf_entry(f, t, r, 0).H != INFINITY) {
      m.k = t->row_k[r];
      break;
    }
  f->scr->jmin[j] = m;
  f->scr->jkey[j] = t->v;
  return m;
}

double pp__dpf_lag_bound(const pp_dp *dp, int id, int j, int c, int y) {
  return pp__lag_bound(dp->front->scr->lag, id, j, c, y);
}

/* 1 if some entry of table tj, at the budget its row lands at for a
 * stage of td devices and degree d (pair c of downsets id and j), has a
 * corner that the grid does not cover: the bounds lb and rb (a >= d (lb -
 * rb) / N), lb raised to the memory-aware bound at the entry's y (a bound
 * at every larger y too, so also for the stage's load at that y).  The
 * entries are those extend_row would extend (a row after one that landed
 * extends what it adds, the first to land at k0 > 0 J's whole row). */
static int entries_may_help(const pp_dp *dp, int id, int j, int c, int td, int d, int k0, int k1, double lb,
                            double rb) {
  const pp__dp_front *f = dp->front;
  const pp_stairs *tj = dp->tab[j];
  const int W = dp->S + 1;
  const double N = dp->p->microbatches;
  int ly = -1;
  const double alb0 = d * (lb - rb) / N;
  double lby = lb, alb = alb0;
  for (int r = pp__dp_first_landing_row(tj, td, k0); r < tj->n_rows; r++) {
    const int k = pp__dp_landing(tj, r, td, k0, k1);
    if (k > k1) break;
    if (k < 0) continue;
    const pp__fent *whole = NULL; /* the first row to land at k0 > 0: J's whole row (dp_front.c) */
    const int n = pp__dpf_lands_whole(tj, r, td, k0, k1) ? pp__dpf_whole_at(dp, j, r, &whole)
                                                         : pp__dpf_row_entries(f, tj, r);
    for (int q = 0; q < n; q++) {
      const pp__fent e = whole ? whole[q] : pp__dpf_entry(f, tj, r, q);
      if (e.H == INFINITY || e.s + d > dp->S) continue;
      /* first with lb alone, then (its lookup is a random read) raised */
      const double h1 = e.H + alb0, h2 = e.A + lb;
      if (pp__dpf_covered(f, W, k - k0, e.s + d, e.A + alb0, h1 > h2 ? h1 : h2)) continue;
      const int y = pp__dpf_y_of(dp, e.s, d);
      if (y != ly) {
        const double G = pp__dpf_lag_bound(dp, id, j, c, y);
        ly = y;
        lby = G > lb ? G : lb;
        alb = d * (lby - rb) / N;
      }
      if (lby == INFINITY) continue; /* nothing fits at y */
      const double g1 = e.H + alb, g2 = e.A + lby;
      if (!pp__dpf_covered(f, W, k - k0, e.s + d, e.A + alb, g1 > g2 ? g1 : g2)) return 1;
    }
  }
  return 0;
}

int pp__dpf_screen_pair(pp_dp *dp, int id, int j, const pp__fjmin *jm, int k0, int k1, unsigned char *need) {
  pp__dp_front *f = dp->front;
  const pp__fscreen *sc = f->scr;
  const int nd = f->nd, nc = sc->nc, W = dp->S + 1;
  const double N = dp->p->microbatches, M = dp->p->memory * (1 + 1e-9);
  const floor4 *si = sc->sum + (size_t)id * (size_t)nc, *sj = sc->sum + (size_t)j * (size_t)nc;
  int any = 0;
  for (int ti = 0; ti < f->nt; ti++) {
    const int ui = sc->unsup[(size_t)id * (size_t)f->nt + (size_t)ti];
    const int uj = sc->unsup[(size_t)j * (size_t)f->nt + (size_t)ti];
    for (int di = 0; di < nd; di++) {
      const int c = ti * nd + di, d = f->dv[di], td = f->tv[ti] * d;
      need[c] = 0;
      if (ui != uj) continue; /* a node of the stage has no TMPC for t */
      const int kl = jm->k + td > k0 ? jm->k + td : k0;
      if (kl > k1 || jm->s + d > dp->S) continue;
      const floor4 *fi = &si[c], *fj = &sj[c];
      double A = (fi->a - fj->a) - 1e-9 * fi->a;
      if (A < 0) A = 0;
      const double B = (fi->b - fj->b) - 1e-9 * fi->b;
      if (A * pp__dpf_y_of(dp, jm->s, d) + B > M) continue; /* nothing fits */
      double lb = (fi->l - fj->l) - 1e-9 * fi->l;
      const double P = (fi->p - fj->p) + 1e-9 * fi->p;
      const double rb = pp__dpf_resync(dp, ti, di, P);
      const double alb = d * (lb - rb) / N, h1 = jm->H + alb, h2 = jm->A + lb;
      if (pp__dpf_covered(f, W, kl - k0, jm->s + d, jm->A + alb, h1 > h2 ? h1 : h2)) continue;
      /* every entry of J has s >= jm->s, so y >= y0: the memory-aware bound
       * at y0 bounds the load at each of them */
      const double G = pp__dpf_lag_bound(dp, id, j, c, pp__dpf_y_of(dp, jm->s, d));
      if (G == INFINITY) continue;
      if (G > lb) lb = G;
      if (!entries_may_help(dp, id, j, c, td, d, k0, k1, lb, rb)) continue;
      need[c] = 1;
      f->lfloor[c] = lb;
      any = 1;
    }
  }
  return any;
}

/* Adds x to cell c's front unless an entry of it has A and H no larger
 * (then returns 0); drops the entries x dominates.  A full cell is left as
 * it is and also returns 0 (any subset of the collected entries serves the
 * screens; the flood stops there). */
static int cell_add(pp__dp_front *f, size_t c, const pp__fent *x) {
  double *a = f->cell_A + c * PP__FCELL, *h = f->cell_H + c * PP__FCELL;
  const int n = f->cell_n[c];
  int pos = 0; /* the entries with A <= x's */
  while (pos < n && a[pos] <= x->A) pos++;
  if (pos > 0 && h[pos - 1] <= x->H) return 0;
  int lo = pos, hi = pos; /* [lo, hi): the entries x dominates (H falls as A rises) */
  while (lo > 0 && a[lo - 1] == x->A) lo--;
  while (hi < n && h[hi] >= x->H) hi++;
  if (lo == hi && n == PP__FCELL) return 0;
  memmove(a + lo + 1, a + hi, sizeof(double) * (size_t)(n - hi));
  memmove(h + lo + 1, h + hi, sizeof(double) * (size_t)(n - hi));
  a[lo] = x->A;
  h[lo] = x->H;
  f->cell_n[c] = n + 1 - (hi - lo);
  return 1;
}

/* A cell's front stands for every entry collected at its budget or below
 * with its s or below; x enters the cells of its quadrant.  Cells nest
 * (each holds what the cells before it in k and s hold, or entries that
 * dominate it), so a row stops at its first cell that x does not enter and
 * the rows stop at the first whose cell s it does not enter; a full cell
 * stops it: that only weakens the screens. */
void pp__dpf_flood(pp__dp_front *f, int W, int nk, int kr, const pp__fent *x) {
  for (int k = kr; k < nk; k++) {
    const size_t row = (size_t)k * (size_t)W;
    if (!cell_add(f, row + (size_t)x->s, x)) break;
    for (int s = x->s + 1; s < W && cell_add(f, row + (size_t)s, x); s++) {}
  }
}

int pp__dpf_force_screens(pp_dp *dp) {
  pp__dp_front *f = dp->front;
  if (!f) return 0;
  if (!f->scr) f->scr = pp__dpf_screen_new(dp, 1);
  return f->scr != NULL;
}
