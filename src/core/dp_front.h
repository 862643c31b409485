/*
 * dp_front.h - the Pareto-row kernel's state and helpers shared by
 * dp_front.c (the recurrence, one chunk per device group), dp_front_rows.c
 * (entries and rows), dp_front_plan.c (optimum, reconstruction) and
 * dp_vstage.c (v chunks per device group, interleaved schedules).  Private
 * to src/core.
 */
#ifndef PIPER_DP_FRONT_H
#define PIPER_DP_FRONT_H

#include <math.h>
#include <string.h>

#include "dp_impl.h"

/* One entry of a row: class, s (sum of d; with virtual stages the number of
 * chunks placed), the additive part A and the partial objective H. */
typedef struct pp__fent {
  int cls, s;
  double A, H;
} pp__fent;

/* Entries a cell of the screens' grid (dp_front_screen.c) holds at most. */
enum { PP__FCELL = 24 };

typedef struct pp__fscreen pp__fscreen;
typedef struct pp__fchain pp__fchain;
typedef struct pp__fwhole pp__fwhole;
typedef struct pp__fidx pp__fidx;

typedef struct pp__fvec {
  pp__fent *e;
  int n, cap;
  int sorted; /* e[0, sorted) is sorted and pruned */
} pp__fvec;

/* A whole row kept up to date while rows that hold only what they add are
 * read or made in order (dp_front_rows.c): e[n], sorted and pruned; spare
 * is the buffer of the next one. */
typedef struct pp__fwhole_row {
  pp__fent *e, *spare;
  int n, cap, spare_cap;
} pp__fwhole_row;

/* A table being built row by row (dp_front_rows.c): the rows so far
 * (with v = 1 their entries are also in pp__dp_front.built).  Started by
 * pp__dpf_build_begin. */
typedef struct pp__fbuild {
  int *row_k, *row_start, n_rows, cap_rows;
  pp__fent *e;
  int n, cap;
} pp__fbuild;

struct pp__dp_front {
  int E;                  /* slots per entry */
  int uniform, gpipe, a0; /* a0: a = 0 (2bw) */
  int v;                  /* model chunks per device group (1: dp_front.c, >= 2: dp_vstage.c) */
  int nt, nd;
  const int *tv, *dv;
  pp_stage_eval *ev; /* the chunks' costs: dp->ev, or with v >= 2 one at memory M / v (owned) */
  pp_problem qv;     /* the problem of an owned ev */
  double *node_p;    /* [n_nodes * nt]: parameter bytes of the node's usable TMPCs if all equal, else NaN */
  double *stage_p;   /* [nt]: their sum over the current stage (NaN if any differs) */
  pp__fvec *cand;    /* [cand_n]: candidates per budget of the rows being computed */
  int cand_n;
  pp__fent *front; /* 2-D front scratch of prune */
  int front_cap;
  pp__fent *row_a, *row_b; /* decode scratch */
  int row_cap;
  pp__fent *tmp; /* sort and merge scratch */
  int tmp_cap;
  double *stage_pmax; /* [nt]: the stage's sum of its nodes' largest parameter bytes */
  /* The screens (dp_front_screen.c): on for v = 1 without --uniform and
   * (K + 1)(S + 1) <= 4096 and 256 downsets or more; the grid's cell (k - k0) (S + 1) + s for the
   * rows being computed. */
  pp__fscreen *scr;
  int *cell_n;             /* entries per cell */
  double *cell_A, *cell_H; /* [cells * PP__FCELL]: A ascending, H descending */
  size_t grid_cap;
  pp__fent *rmin; /* [rmin_cap]: per row of the current J the least s, A and H of its fresh entries */
  int rmin_cap;
  unsigned char *need;  /* [nt * nd]: the pair screen's verdict per degree pair (ti nd + di) */
  unsigned char *ti_on; /* [nt]: some di of ti needed */
  double *lfloor;       /* [nt * nd]: the pair's load floor per degree pair */
  int *js;              /* [count]: scratch, the subsets J of a downset */
  pp__fchain *chain;    /* the budget-ordered kernel's state (dp_front_chain.c), made on first use */
  pp__fwhole *whole;    /* [n_whole = count]: the tables' keyframes (dp_front_whole.c), made on first use */
  int n_whole;
  pp__fent *
      wrow; /* the whole row pp__dpf_whole_at returned last: row wrow_r of table wrow_j, of values wrow_key */
  int wrow_cap, wrow_n, wrow_j, wrow_r;
  const double *wrow_key;
  /* the buffers of the last table built, for the next one: a large table's
   * rows are not built in freshly mapped pages every time */
  pp__fbuild spare;
  /* with v = 1: the entries of the rows built so far of the table being
   * built (emptied at its first row), which decide what a row stores and
   * screen the budget-ordered kernel's candidates */
  pp__fidx *built;
};

/* Entries and rows (dp_front_rows.c). */
void pp__dpf_grow(pp__fent **p, int *cap, int need);
/* Order of a row's entries: class, s, A, H (qsort-style). */
int pp__dpf_cmp(const void *x, const void *y);
/* Sorts e[n] and keeps, in order, the entries no other one dominates (same
 * class, A and H <= and s <= (with v >= 2 s equal); of equal entries the
 * first); drops the sentinel.  Returns the count kept. */
int pp__dpf_prune(pp__dp_front *f, pp__fent *e, int n);
/* Adds candidate x to v (pruned from time to time). */
void pp__dpf_push(pp__dp_front *f, pp__fvec *v, pp__fent x);
/* The rows k0..k1 of a table from f->cand[k - k0] (each row with the one
 * before it); a new table owned by the caller. */
pp_stairs *pp__dpf_build_rows(pp_dp *dp, int k0, int k1);
/* Row k (k0 <= k, rows k0..k - 1 added before, in order) from
 * f->cand[k - k0] and the row before it; with no candidate at k > k0 the
 * row stays the one before (nothing is added). */
void pp__dpf_build_row(pp_dp *dp, pp__fbuild *b, int k, int k0);
/* Starts b with no row (with the buffers of the last table finished). */
void pp__dpf_build_begin(pp_dp *dp, pp__fbuild *b);
/* The table of the rows added (b consumed); owned by the caller. */
pp_stairs *pp__dpf_build_finish(pp_dp *dp, pp__fbuild *b, int k0, int k1);
/* The whole row of budget row_k[r] of a v = 1 table t (the union of its
 * rows 0..r pruned: see dp_front.c) into *buf (grown as needed, sorted,
 * sentinel dropped); returns its entry count. */
int pp__dpf_whole_row(pp__dp_front *f, const pp_stairs *t, int r, pp__fent **buf, int *cap);

/* The entries of rows of a v = 1 table so far (dp_front_dom.c), of the
 * classes -1 .. n_cls - 1 and s in 0..S.  pp__fidx_new makes an empty
 * one (freed by pp__fidx_free, NULL accepted); pp__fidx_clear empties it;
 * pp__fidx_empty says whether it holds none; pp__fidx_covers returns 1 if
 * an entry added is no larger than e in s, A and H within e's class (an
 * equal one included), else 0; pp__fidx_add adds e.  An entry outside the
 * classes or 0..S is covered by none and not added.  Pure. */
pp__fidx *pp__fidx_new(int n_cls, int S);
void pp__fidx_free(pp__fidx *x);
void pp__fidx_clear(pp__fidx *x);
int pp__fidx_empty(const pp__fidx *x);
int pp__fidx_covers(const pp__fidx *x, const pp__fent *e);
void pp__fidx_add(pp__fidx *x, const pp__fent *e);

/* The recurrence's stage terms (dp_front.c). */
void pp__dpf_set_stage_p(pp_dp *dp);
double pp__dpf_stage_a(pp_dp *dp, int ti, int di, int y, double l);
/* r, the stage's data-parallel resynchronisation per sample at (ti, di)
 * for P parameter bytes: the resync term 4 (d - 1) P / (d N B) times the
 * factor of ZeRO and the network (pp_stage_resync_factor, derived in
 * stage_pre.c).  One expression for the recurrence and its screens, so
 * that their bounds and the costs agree bit for bit. */
static inline double pp__dpf_resync(const pp_dp *dp, int ti, int di, double P) {
  const pp__dp_front *f = dp->front;
  const int d = f->dv[di];
  const double N = dp->p->microbatches;
  return 4.0 * (d - 1) * P / d / N / dp->p->bandwidth * pp_stage_resync_factor(f->ev, ti, di);
}

/* r of the current stage (pp__dpf_set_stage_p) at (ti, di) when it does not
 * depend on the TMPC choice (the stage's nodes have one parameter size
 * each for t), else NaN; NaN with a = 0 (2bw) too. */
static inline double pp__dpf_resync_fixed(const pp_dp *dp, int ti, int di) {
  const pp__dp_front *f = dp->front;
  const double P = f->stage_p[ti];
  return f->a0 || isnan(P) ? NAN : pp__dpf_resync(dp, ti, di, P);
}

/* Microbatches in flight for a stage of degree d with x = the sum of d
 * behind it: with gpipe m = N / d, else ceil(x / d) + 1. */
static inline int pp__dpf_y_of(const pp_dp *dp, int x, int d) {
  return dp->front->gpipe ? dp->p->microbatches / d : pp__dp_y_at(NULL, x, d);
}

/* The whole row r of the v = 1 table of downset j (dp_front_whole.c): its
 * entry count, the entries (sorted, pruned, no sentinel) in *out, valid
 * until the next call.  What a k-range part that starts at k0 > 0 extends
 * of J's first row landing in it (pp__dp_only_fresh 0, r > 0); the later
 * rows land with what they store.  pp__dpf_whole_free frees the keyframes
 * of count tables (NULL accepted). */
int pp__dpf_whole_at(const pp_dp *dp, int j, int r, const pp__fent **out);
/* 1 if row r of table t, landing in the rows k0..k1 for a stage of td
 * devices, extends J's whole row (pp__dpf_whole_at) rather than what it
 * stores: the first row to land at k0 > 0 (row 0 is whole already). */
static inline int pp__dpf_lands_whole(const pp_stairs *t, int r, int td, int k0, int k1) {
  return r > 0 && !pp__dp_only_fresh(t, r, td, k0, k1);
}
void pp__dpf_whole_free(pp__fwhole *w, int count);
/* The keyframes kept of table j (0 if none yet); for tests. */
int pp__dpf_whole_keyframes(const pp_dp *dp, int j);

/* Puts x into the front fr[fn] (entries with A ascending and H strictly
 * descending, none of which dominates x) at pos, the number of its entries
 * with A < x.A, in place of the entries from pos on whose H is no smaller
 * than x's: those x dominates (A and H no smaller).  fr has room for
 * fn + 1 entries; returns the front's new size. */
static inline int pp__dpf_front_put(pp__fent *fr, int fn, int pos, pp__fent x) {
  int b = pos;
  while (b < fn && fr[b].H >= x.H) b++;
  memmove(fr + pos + 1, fr + b, sizeof *fr * (size_t)(fn - b));
  fr[pos] = x;
  return fn + 1 - (b - pos);
}

/* The classes of v = 1 entries: 0 .. n - 1 (the empty downset's is -1):
 * the (t, d) of the last stage with --uniform, else one. */
static inline int pp__dpf_classes(const pp__dp_front *f) { return f->uniform ? f->nt * f->nd : 1; }

/* Entries of row r of t: count, and decoding entry i. */
static inline int pp__dpf_row_entries(const pp__dp_front *f, const pp_stairs *t, int r) {
  return (t->row_start[r + 1] - t->row_start[r]) / f->E;
}
static inline pp__fent pp__dpf_entry(const pp__dp_front *f, const pp_stairs *t, int r, int i) {
  const int x = t->row_start[r] + f->E * i;
  pp__fent e = {f->E > 2 ? (int)t->v[x + 2] : 0, t->s[x], t->v[x], t->v[x + 1]};
  return e;
}

/* The screens (dp_front_screen.c).  pp__dpf_screen_new: the state for dp,
 * or NULL when the screens are off (see pp__dp_front.scr); with force the
 * size rule (where they pay) is waived, not the rule of where they are
 * exact (v = 1, not uniform); freed by pp__dpf_screen_free (NULL accepted).
 * pp__dpf_screen_begin empties the grid for the rows k0..k1. */
pp__fscreen *pp__dpf_screen_new(pp_dp *dp, int force);
/* Turns the screens on for a Pareto-row dp of any size (the brute-force
 * tests' small DAGs are below the size rule), before any table is
 * computed: returns 1 if they are on, 0 where they do not apply (2bw max
 * tables, uniform, v > 1).  Not collective; for tests. */
int pp__dpf_force_screens(pp_dp *dp);
void pp__dpf_screen_free(pp__fscreen *sc);
void pp__dpf_screen_begin(pp_dp *dp, int k0, int k1);
/* [n_nodes * nt]: each node's largest parameter bytes per degree index. */
const double *pp__dpf_screen_pmax(const pp__fscreen *sc);
/* What the pair screen knows of J's table: no finite entry below budget k
 * (INT_MAX: none at all) and none with s, A or H below these. */
typedef struct pp__fjmin {
  int k, s;
  double A, H;
} pp__fjmin;
pp__fjmin pp__dpf_jmin(const pp_dp *dp, int j);
/* The pair screen for the stage I \ J before it is summarised: need[ti nd
 * + di] = 1 for the degree pairs whose candidates may not all be covered
 * (see the argument in dp_front_screen.c); returns 1 if any. */
int pp__dpf_screen_pair(pp_dp *dp, int id, int j, const pp__fjmin *jm, int k0, int k1, unsigned char *need);
/* A value no larger than the load of the stage I \ J (downsets id, j) at
 * degree pair c = ti nd + di and any y' >= y: the memory-aware bound of
 * dp_small_lag.c, -INFINITY where it has none, +INFINITY if nothing fits. */
double pp__dpf_lag_bound(const pp_dp *dp, int id, int j, int c, int y);
/* Records candidate x collected at budget k0 + kr in the grid. */
void pp__dpf_flood(pp__dp_front *f, int W, int nk, int kr, const pp__fent *x);
/* 1 if the grid cell (kr, s) holds an entry with A and H no larger. */
static inline int pp__dpf_covered(const pp__dp_front *f, int W, int kr, int s, double A, double H) {
  const size_t c = (size_t)kr * (size_t)W + (size_t)s;
  const double *a = f->cell_A + c * PP__FCELL, *h = f->cell_H + c * PP__FCELL;
  for (int i = 0, n = f->cell_n[c]; i < n && a[i] <= A; i++)
    if (h[i] <= H) return 1;
  return 0;
}

/* The budget-ordered kernel (dp_front_chain.c).  pp__dpf_chain_fits: 1 if
 * it takes the rows up to k1 of a downset with nj subsets (v = 1, not
 * uniform, the screens off, its summaries within 64 MB).
 * pp__dpf_chain_rows: rows k0..k1 of downset id from its subsets js[nj], as
 * pp__dpf_rows computes them (a new table owned by the caller).
 * pp__dpf_chain_free accepts NULL. */
int pp__dpf_chain_fits(const pp_dp *dp, int nj, int k1);
pp_stairs *pp__dpf_chain_rows(pp_dp *dp, int id, int k0, int k1, const int *js, int nj);
void pp__dpf_chain_free(pp__fchain *ch);

/* The interleaved kernel (dp_vstage.c), used by dp_front.c when v >= 2.
 * Its tables' rows hold only the entries that land at their own budget
 * (see dp_vstage.c): the table at budget k is the union of its rows up to
 * k.  pp__dpv_rows_wrong: NULL if every row of t (the table of downset id,
 * not the empty one) keeps that rule and every entry's chunk count fits its
 * downset and class, else why not (a static string). */
void pp__dpv_rows(pp_dp *dp, int id, int k0, int k1);
const char *pp__dpv_rows_wrong(const pp_dp *dp, int id, const pp_stairs *t);
int pp__dpv_step_back(pp_dp *dp, int *cur, pp__fent *e, pp_plan_stage *st);
int pp__dpv_complete(const pp_dp *dp, const pp__fent *e, int s_max);
long long pp__dpv_sum_d(const pp_dp *dp, const pp__fent *e); /* p d of e's class (0: the empty entry) */
double pp__dpv_row_slots_max(const pp_dp *dp);

#endif /* PIPER_DP_FRONT_H */
