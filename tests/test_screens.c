/*
 * test_screens.c - the exact screens against the plain kernels, table by
 * table, on DAGs with many downsets.
 *
 * The screens of the Pareto-row DP (pair screen, entry screen, grid, the
 * memory-aware Lagrangian raise of their bounds) and the split of a
 * downset's table into k ranges must never change a table: they only skip
 * work that cannot add a non-dominated entry.  A wrong skip may leave the
 * optimum of a small DAG intact (the exhaustive-search tests) and yet drop
 * an entry that only matters in a large table, e.g. the entries of the
 * first row of a k-range part that starts below a row of J landing across
 * k0.  So here every table of every downset (every budget k, every entry
 * (s, A, H)) of random DAGs, chains and wide graphs of 8-12 nodes is
 * computed
 *   - with the screens off (the budget-ordered kernel, the reference),
 *   - with the screens forced on, serially, in two k ranges joined, and in
 *     one range per budget joined (every k0 > 0 starts a part),
 * and the tables must be equal entry by entry (exact doubles).  For the
 * first instances the parts themselves are compared too (each one-budget
 * part and the upper half, screens on against off): the join restores
 * entries that a part lacks but an earlier part proposed, so a screen that
 * wrongly skips such entries shows only in the parts.  The 2bw tables are
 * compared between serial and split runs, value by value at every (k, s).
 * Under sanitizers (PIPER_SANITIZED set) fewer instances run.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "dp_front.h"
#include "dp_impl.h"
#include "testutil.h"

enum { MODE_OFF, MODE_ON, MODE_ON_HALVES, MODE_ON_EACH, N_MODES };

static const char *mode_name[N_MODES] = {"screens off", "screens on", "screens on, two k ranges",
                                         "screens on, one range per budget"};

/* A random instance of kind 0 (random DAG), 1 (chain) or 2 (wide: few
 * edges); a node's TMPCs for one t share their parameter bytes. */
static tu_spec *make_instance(int it, int kind, pp_schedule sched, pp_problem *p) {
  tu_rng r = {0x5c4ee45ull + (uint64_t)it * 7919 + (uint64_t)kind * 1000003};
  double need, sum_max;
  tu_spec *s = tu_random_kind(&r, kind, &need, &sum_max);
  static const int Ns[] = {4, 6, 8, 12, 16};
  s->microbatches = Ns[tu_int(&r, 0, 4)];
  static const int Ks[] = {16, 24, 32, 64};
  s->devices = Ks[tu_int(&r, 0, 3)];
  s->memory = floor(need * (1.0 + 0.5 * tu_unit(&r)) + tu_unit(&r) * 0.6 * sum_max);
  *p = tu_problem(s);
  p->schedule = sched;
  p->knapsack = PP_KNAPSACK_EXACT;
  return s;
}

/* Every table of (g, p) computed as mode says; returns the DP (caller
 * frees), or NULL if the screens cannot be forced on. */
static pp_dp *run_tables(const pp_graph *g, const pp_problem *p, const pp_downsets *ds, int mode) {
  pp_dp *dp = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_dp_create(g, p, ds, 0, &dp, &err), PP_OK, "%s", err.msg);
  if (dp->front) {
    if (mode == MODE_OFF) {
      pp__dpf_screen_free(dp->front->scr);
      dp->front->scr = NULL;
    } else if (!pp__dpf_force_screens(dp)) {
      pp_dp_free(dp);
      return NULL;
    }
  }
  const int K = p->devices;
  pp_stairs *parts[65];
  cr_assert(K + 1 <= (int)(sizeof parts / sizeof parts[0]), "K %d: too many one-budget parts", K);
  for (int id = 1; id < ds->count; id++) {
    int n = 0;
    if (mode == MODE_ON_EACH)
      for (int k = 0; k <= K; k++) parts[n++] = pp_dp_compute_rows(dp, id, k, k);
    else if (mode == MODE_ON_HALVES) {
      parts[n++] = pp_dp_compute_rows(dp, id, 0, K / 2);
      parts[n++] = pp_dp_compute_rows(dp, id, K / 2 + 1, K);
    } else {
      parts[n++] = pp_dp_compute_rows(dp, id, 0, K);
    }
    pp_dp_set_table(dp, id, pp_dp_join(dp, parts, n));
    for (int x = 0; x < n; x++) pp_stairs_free(parts[x]);
  }
  return dp;
}

/* Pareto-row stairs x (reference) and y are equal: every row's budget and
 * every entry. */
static void assert_same_rows(const pp__dp_front *f, const pp_stairs *x, const pp_stairs *y, int id,
                             const char *what) {
  cr_assert_eq(x->n_rows, y->n_rows, "%s: downset %d: %d rows vs %d", what, id, x->n_rows, y->n_rows);
  for (int r = 0; r < x->n_rows; r++) {
    cr_assert_eq(x->row_k[r], y->row_k[r], "%s: downset %d row %d", what, id, r);
    const int n = pp__dpf_row_entries(f, x, r), m = pp__dpf_row_entries(f, y, r);
    cr_assert_eq(n, m, "%s: downset %d, k %d: %d entries vs %d", what, id, x->row_k[r], n, m);
    for (int i = 0; i < n; i++) {
      const pp__fent e = pp__dpf_entry(f, x, r, i), h = pp__dpf_entry(f, y, r, i);
      cr_assert(e.cls == h.cls && e.s == h.s && e.A == h.A && e.H == h.H,
                "%s: downset %d, k %d, entry %d: (%d, %d, %.17g, %.17g) vs (%d, %d, %.17g, %.17g)", what, id,
                x->row_k[r], i, e.cls, e.s, e.A, e.H, h.cls, h.s, h.A, h.H);
    }
  }
}

/* Tables a (reference) and b of downset id are equal: every row's budget
 * and every entry (Pareto rows), or every value (2bw). */
static void assert_same_table(const pp_dp *a, const pp_dp *b, int id, const char *what) {
  const pp_stairs *x = pp_dp_table(a, id), *y = pp_dp_table(b, id);
  cr_assert(x && y, "%s: downset %d has no table", what, id);
  if (a->front) {
    assert_same_rows(a->front, x, y, id, what);
    return;
  }
  for (int k = 0; k <= a->K; k++)
    for (int s = 0; s <= a->S; s++) {
      const double u = pp_stairs_value(x, k, s), w = pp_stairs_value(y, k, s);
      cr_assert(u == w, "%s: downset %d (k %d, s %d): %.17g vs %.17g", what, id, k, s, u, w);
    }
}

/* Every part of a k range, not only the joined table, is the same with the
 * screens on (dp) as off (ref): a screen may skip only what cannot change
 * the part's own rows.  (The join merges each part's first row with the
 * full row of the budget before, so a screen that drops entries proposed
 * at an earlier budget too would leave every joined table intact and show
 * only here.)  Both DPs hold equal tables for every downset already. */
static void assert_same_parts(pp_dp *ref, pp_dp *dp, const pp_downsets *ds, const char *what) {
  const int K = ref->K;
  for (int id = 1; id < ds->count; id++)
    for (int k0 = 0; k0 <= K + 1; k0++) { /* one budget each, then the upper half */
      const int lo = k0 <= K ? k0 : K / 2 + 1, hi = k0 <= K ? k0 : K;
      pp_stairs *a = pp_dp_compute_rows(ref, id, lo, hi), *b = pp_dp_compute_rows(dp, id, lo, hi);
      char part[200];
      snprintf(part, sizeof part, "%s, part %d..%d", what, lo, hi);
      assert_same_rows(ref->front, a, b, id, part);
      pp_stairs_free(a);
      pp_stairs_free(b);
    }
}

static void run_family(pp_schedule sched) {
  const int n_inst = getenv("PIPER_SANITIZED") ? 2 : getenv("TS_N") ? atoi(getenv("TS_N")) : 6;
  int compared = 0;
  for (int kind = 0; kind < 3; kind++)
    for (int it = 0; it < n_inst; it++) {
      pp_problem p;
      tu_spec *s = make_instance(it, kind, sched, &p);
      pp_graph *g = tu_load(s);
      pp_downsets *ds = NULL;
      pp_error err = {0};
      cr_assert_eq(pp_downsets_enumerate(g, 1000000, &ds, &err), PP_OK, "%s", err.msg);
      pp_dp *ref = run_tables(g, &p, ds, MODE_OFF);
      for (int mode = MODE_ON; mode < N_MODES; mode++) {
        pp_dp *dp = run_tables(g, &p, ds, mode);
        if (!dp) continue;
        char what[160];
        snprintf(what, sizeof what, "%s kind %d instance %d (%d nodes, %d downsets, K %d, N %d, M %g), %s",
                 pp_schedule_name(sched), kind, it, s->n, ds->count, p.devices, p.microbatches, p.memory,
                 mode_name[mode]);
        for (int id = 0; id < ds->count; id++) assert_same_table(ref, dp, id, what);
        if (ref->front && mode == MODE_ON && it < (getenv("PIPER_SANITIZED") ? 1 : 3))
          assert_same_parts(ref, dp, ds, what);
        compared++;
        pp_dp_free(dp);
      }
      pp_dp_free(ref);
      pp_downsets_free(ds);
      pp_graph_free(g);
      free(s);
    }
  cr_assert_gt(compared, 0);
}

Test(screens, one_f_one_b, .timeout = 600) { run_family(PP_SCHEDULE_1F1B); }
Test(screens, gpipe, .timeout = 600) { run_family(PP_SCHEDULE_GPIPE); }
Test(screens, two_bw, .timeout = 600) { run_family(PP_SCHEDULE_2BW); }
