/*
 * test_front_rows.c - the rows of the v = 1 Pareto-row tables hold only
 * what each adds to the whole row before it (src/core/dp_front.c), and the
 * whole rows that a k-range part starting at k0 > 0 extends come from
 * keyframes (src/core/dp_front_whole.c).
 *
 * On random chains and DAGs whose tables are long enough for several
 * keyframes, under 1f1b, gpipe and --uniform 1f1b, for every table:
 *   - every row after the first adds entries, none of which the whole row
 *     before holds, and the merge keeps them all (pp_dp_table_valid);
 *   - pp__dpf_whole_at gives at every row, asked in rising, falling and
 *     scattered order, exactly the union of the rows up to it pruned
 *     (pp__dpf_whole_row), entry by entry;
 *   - the table's whole last row (pp_dp_tail) is that of its last row.
 * The test fails if no table of the family made two keyframes (the
 * instances would no longer reach the keyframes' merge path).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "dp_front.h"
#include "dp_impl.h"
#include "testutil.h"

static tu_spec *make_instance(int it, int kind, pp_problem *p) {
  tu_rng r = {0xf2e5a0ull + (uint64_t)it * 7919 + (uint64_t)kind * 1000003};
  double need, sum_max;
  tu_spec *s = tu_random_kind(&r, kind, &need, &sum_max);
  static const int Ns[] = {32, 64, 128};
  s->microbatches = Ns[tu_int(&r, 0, 2)];
  static const int Ks[] = {64, 96, 128};
  s->devices = Ks[tu_int(&r, 0, 2)];
  s->memory = floor(need * (1.0 + 0.5 * tu_unit(&r)) + tu_unit(&r) * 0.6 * sum_max);
  *p = tu_problem(s);
  return s;
}

/* Entries a[n] and b[m] are equal. */
static void assert_same_entries(const pp__fent *a, int n, const pp__fent *b, int m, int id, int r,
                                const char *what) {
  cr_assert_eq(n, m, "%s: downset %d, row %d: %d entries vs %d", what, id, r, n, m);
  for (int i = 0; i < n; i++)
    cr_assert(a[i].cls == b[i].cls && a[i].s == b[i].s && a[i].A == b[i].A && a[i].H == b[i].H,
              "%s: downset %d, row %d, entry %d: (%d, %d, %.17g, %.17g) vs (%d, %d, %.17g, %.17g)", what, id,
              r, i, a[i].cls, a[i].s, a[i].A, a[i].H, b[i].cls, b[i].s, b[i].A, b[i].H);
}

/* Checks every table of dp; returns the most keyframes a table made. */
static int check_tables(pp_dp *dp, const char *what) {
  pp__dp_front *f = dp->front;
  pp__fent *ref = NULL;
  int cap = 0, most = 0;
  for (int id = 1; id < dp->ds->count; id++) {
    const pp_stairs *t = pp_dp_table(dp, id);
    const char *why = NULL;
    cr_assert(pp_dp_table_valid(dp, id, t, &why), "%s: downset %d: %s", what, id, why);
    const int R = t->n_rows;
    for (int pass = 0; pass < 3; pass++)
      for (int q = 0; q < R; q++) {
        const int r = pass == 0 ? q : pass == 1 ? R - 1 - q : (int)(((long long)q * 7919) % R);
        const pp__fent *got;
        const int m = pp__dpf_whole_at(dp, id, r, &got), n = pp__dpf_whole_row(f, t, r, &ref, &cap);
        assert_same_entries(ref, n, got, m, id, r, what);
      }
    pp_stairs *tail = pp_dp_tail(dp, t);
    const int n = pp__dpf_whole_row(f, t, R - 1, &ref, &cap);
    cr_assert_eq(tail->n_rows, 1, "%s: downset %d: the tail has %d rows", what, id, tail->n_rows);
    cr_assert_eq(tail->k_last, t->k_last, "%s: downset %d: the tail's budget", what, id);
    pp__fent *tr = NULL;
    int tcap = 0;
    const int m = pp__dpf_whole_row(f, tail, 0, &tr, &tcap);
    assert_same_entries(ref, n, tr, m, id, R - 1, what);
    free(tr);
    pp_stairs_free(tail);
    const int kf = pp__dpf_whole_keyframes(dp, id);
    if (kf > most) most = kf;
  }
  free(ref);
  return most;
}

static void run_family(pp_schedule sched, int uniform) {
  const int instances = getenv("PIPER_SANITIZED") ? 6 : 24;
  int most = 0;
  for (int it = 0; it < instances; it++) {
    pp_problem p;
    tu_spec *s = make_instance(it, it % 3, &p);
    p.schedule = sched;
    p.uniform = uniform;
    pp_graph *g = tu_load(s);
    pp_downsets *ds = NULL;
    pp_error err = {0};
    cr_assert_eq(pp_downsets_enumerate(g, 1000000, &ds, &err), PP_OK, "%s", err.msg);
    pp_dp *dp = NULL;
    cr_assert_eq(pp_dp_create(g, &p, ds, 0, &dp, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_dp_solve(dp, NULL, NULL, &err), PP_OK, "%s", err.msg);
    char what[64];
    snprintf(what, sizeof what, "instance %d (K %d, N %d)", it, p.devices, p.microbatches);
    const int kf = check_tables(dp, what);
    if (kf > most) most = kf;
    pp_dp_free(dp);
    pp_downsets_free(ds);
    pp_graph_free(g);
    free(s);
  }
  cr_assert(most >= 2, "no table made two keyframes (most %d): the instances are too small", most);
}

Test(front_rows, one_f_one_b, .timeout = 600) { run_family(PP_SCHEDULE_1F1B, 0); }
Test(front_rows, gpipe, .timeout = 600) { run_family(PP_SCHEDULE_GPIPE, 0); }
Test(front_rows, uniform_1f1b, .timeout = 600) { run_family(PP_SCHEDULE_1F1B, 1); }
