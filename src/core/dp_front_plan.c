/*
 * dp_front_plan.c - answers from the Pareto-row tables (dp_front.c): the
 * optimum at a budget k and bound on s, and the plan behind it, found by
 * stepping back from the full downset to the empty one through the entries
 * that produce each entry exactly.  Private to src/core.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "dp_front.h"
#include "piper/bitset.h"

typedef pp__fent fent;
typedef pp__fvec fvec;

/* The best whole plan's entry of the full downset within budget k and
 * s_max: the least H, ties to the first in pp__dpf_cmp order (H infinite if
 * none).  The table at k is the union of its rows up to k (dp_front.c,
 * dp_vstage.c); with v = 1 an entry of it that the whole row at k lacks is
 * dominated by one of that row, with s and H no larger and first in that
 * order, so the answer is the whole row's. */
static fent best_entry(const pp_dp *dp, int k, int s_max) {
  const pp__dp_front *f = dp->front;
  const pp_stairs *t = dp->tab[dp->ds->count - 1];
  const int last = pp_stairs_row(t, k);
  fent best = {0, 0, INFINITY, INFINITY};
  for (int r = 0; r <= last; r++)
    for (int i = 0, n = pp__dpf_row_entries(f, t, r); i < n; i++) {
      const fent e = pp__dpf_entry(f, t, r, i);
      if ((e.H < best.H || (e.H == best.H && e.H < INFINITY && pp__dpf_cmp(&e, &best) < 0)) &&
          (f->v > 1 ? pp__dpv_complete(dp, &e, s_max) : e.s <= s_max))
        best = e;
    }
  return best;
}

double pp__dpf_optimum(const pp_dp *dp, int k, int s_max) { return best_entry(dp, k, s_max).H; }

/* 1 if row r of t holds entry e. */
static int row_has(const pp__dp_front *f, const pp_stairs *t, int r, const fent *e) {
  const int n = pp__dpf_row_entries(f, t, r);
  for (int i = 0; i < n; i++) {
    fent o = pp__dpf_entry(f, t, r, i);
    if (pp__dpf_cmp(&o, e) == 0) return 1;
  }
  return 0;
}

/* 1 if an entry of rows 0..r of t other than x dominates x (x is then not
 * in the whole row r: see dp_front.c). */
static int dominated(const pp__dp_front *f, const pp_stairs *t, int r, const fent *x) {
  for (int q = 0; q <= r; q++)
    for (int i = 0, n = pp__dpf_row_entries(f, t, q); i < n; i++) {
      const fent o = pp__dpf_entry(f, t, q, i);
      if (o.cls == x->cls && o.s <= x->s && o.A <= x->A && o.H <= x->H && pp__dpf_cmp(&o, x) != 0) return 1;
    }
  return 0;
}

/* Finds the stage in front of entry *e of downset cur at budget k: J, (ti,
 * di) and J's entry that produce *e exactly, the first such entry of J's
 * whole row in pp__dpf_cmp order; fills st and moves *cur, *k, *e to J.
 * Returns 1 if found. */
static int step_back(pp_dp *dp, int *cur, int *k, fent *e, pp_plan_stage *st) {
  pp__dp_front *f = dp->front;
  const pp_downsets *ds = dp->ds;
  const pp_stairs *tc = dp->tab[*cur];
  int r = pp_stairs_row(tc, *k); /* the row that added e: its budget */
  while (r >= 0 && !row_has(f, tc, r, e)) r--;
  if (r < 0) return 0;
  const int kf = tc->row_k[r];
  const uint64_t *bi = pp_downset_bits(ds, *cur);
  const int end = ds->layer_start[ds->size[*cur]];
  for (int j = 0; j < end; j++) {
    const uint64_t *bj = pp_downset_bits(ds, j);
    if (!pp_bits_subset(bj, bi, ds->words)) continue;
    pp__dp_set_stage(dp, dp->ev, bi, bj, NULL);
    pp__dpf_set_stage_p(dp);
    const pp_stairs *tj = dp->tab[j];
    for (int ti = 0; ti < f->nt; ti++) {
      if (!pp_stage_supports(dp->ev, ti)) continue;
      for (int di = 0; di < f->nd; di++) {
        const int d = f->dv[di], td = f->tv[ti] * d, cls = f->uniform ? ti * f->nd + di : 0;
        if (td > kf || d > e->s) break;
        if (cls != e->cls) continue;
        /* J's table at kf - td: the union of its rows up to there; of the
         * entries that fit, the first of its whole row */
        const int rj = pp_stairs_row(tj, kf - td);
        fent best = {0, 0, INFINITY, INFINITY};
        for (int q = 0; q <= rj; q++)
          for (int i = 0, n = pp__dpf_row_entries(f, tj, q); i < n; i++) {
            const fent x = pp__dpf_entry(f, tj, q, i);
            if (x.H == INFINITY || x.s != e->s - d || (f->uniform && j != 0 && x.cls != cls)) continue;
            if (best.H != INFINITY && pp__dpf_cmp(&x, &best) >= 0) continue;
            const int y = pp__dpf_y_of(dp, x.s, d);
            const double l = pp_stage_cost(dp->ev, ti, di, y);
            if (l == INFINITY) continue;
            const double a = pp__dpf_stage_a(dp, ti, di, y, l);
            const double h1 = x.H + a, h2 = x.A + l;
            if (x.A + a != e->A || (h1 > h2 ? h1 : h2) != e->H || dominated(f, tj, rj, &x)) continue;
            best = x;
          }
        if (best.H == INFINITY) continue;
        const int y = pp__dpf_y_of(dp, best.s, d);
        const double l = pp_stage_cost(dp->ev, ti, di, y);
        pp__dp_record_stage(dp->ev, ti, di, y, f->tv[ti], d, l, st);
        *cur = j;
        *k = kf - td;
        *e = best;
        return 1;
      }
    }
  }
  return 0;
}

pp_status pp__dpf_reconstruct(pp_dp *dp, int k, int s_max, pp_plan **out, pp_error *err) {
  const pp__dp_front *f = dp->front;
  int cur = dp->ds->count - 1;
  fent e = best_entry(dp, k, s_max);
  pp_plan *plan = pp_plan_new(dp->g->n_nodes);
  plan->n_stages = 0;
  *out = plan;
  if (e.H == INFINITY) return PP_OK;
  while (cur != 0) {
    pp_plan_stage *st = &plan->stages[plan->n_stages];
    if (f->v > 1 ? !pp__dpv_step_back(dp, &cur, &e, st) : !step_back(dp, &cur, &k, &e, st)) {
      pp_plan_free(plan);
      *out = NULL;
      return pp_error_set(err, PP_ERR_INTERNAL,
                          "plan reconstruction found no step at downset %d (k=%d, s=%d)", cur, k, e.s);
    }
    plan->n_stages++;
  }
  plan->feasible = 1;
  return PP_OK;
}
