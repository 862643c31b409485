/*
 * test_wide.c - the sweep kernel (src/core/dp_wide.c) against the other 2bw
 * kernels, table by table.
 *
 * The planner gives the sweep only the tables of more than 2^24 cells
 * (pp__dpw_use), far beyond what a unit test can check exhaustively, so
 * here it is forced on (dp->wide) for small random DAGs, chains and wide
 * graphs of 8-12 nodes, 4 to 256 microbatches, with and without ZeRO,
 * memories that rule out many (y, t, d) (the profiles then stop at the
 * memory bound: see add_pair),
 * and every table of every downset is computed
 *   - by the kernel the planner picks (the small-block or dense one: the
 *     reference),
 *   - by the sweep, whole and in two k ranges joined,
 * and must be the same: the same rows and steps (exact doubles), so the
 * same value at every (k, s).  The bits of the sweep's step index are
 * exercised by S = min(N, K) up to 192.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "dp_impl.h"
#include "testutil.h"

/* A random 2bw instance of kind 0 (random DAG), 1 (chain) or 2 (wide). */
static tu_spec *make_instance(int it, int kind, pp_problem *p) {
  tu_rng r = {0x3a1d5eedull + (uint64_t)it * 7919 + (uint64_t)kind * 1000003};
  double need, sum_max;
  tu_spec *s = tu_random_kind(&r, kind, &need, &sum_max);
  static const int Ns[] = {4, 6, 8, 12, 16, 24, 150, 256};
  s->microbatches = Ns[tu_int(&r, 0, 7)];
  static const int Ks[] = {8, 16, 24, 32};
  /* (S = min(N, K) > 128 for N = 150, 256: runs of more than 64 positions
   * lowered at once) */
  s->devices = s->microbatches > 100 ? 192 : Ks[tu_int(&r, 0, 3)];
  s->memory = floor(need * (1.0 + 0.5 * tu_unit(&r)) + tu_unit(&r) * 0.6 * sum_max);
  *p = tu_problem(s);
  p->zero = tu_int(&r, 0, 2) == 0 ? tu_int(&r, 1, 3) : 0;
  return s;
}

/* Every table of dp, downset by downset (in id order, sub-downsets first),
 * each in parts k-ranges joined (parts 1 or 2). */
static void solve(pp_dp *dp, const pp_downsets *ds, int parts) {
  const int K = dp->K;
  for (int id = 1; id < ds->count; id++) {
    pp_stairs *t;
    if (parts == 1 || K < 1) {
      t = pp_dp_compute_rows(dp, id, 0, K);
    } else {
      pp_stairs *half[2] = {pp_dp_compute_rows(dp, id, 0, K / 2), pp_dp_compute_rows(dp, id, K / 2 + 1, K)};
      cr_assert(half[0] && half[1]);
      t = pp_stairs_join(half, 2);
      pp_stairs_free(half[0]);
      pp_stairs_free(half[1]);
    }
    cr_assert_not_null(t);
    pp_dp_set_table(dp, id, t);
  }
}

/* The tables of downset id in a (reference) and b are the same: the same
 * rows (budgets) and steps (positions and values, a step only where the
 * value falls), so the same value at every (k, s). */
static void assert_same_table(const pp_dp *a, const pp_dp *b, int id, const char *what) {
  const pp_stairs *x = pp_dp_table(a, id), *y = pp_dp_table(b, id);
  cr_assert_eq(x->n_rows, y->n_rows, "%s: downset %d: %d rows vs %d", what, id, x->n_rows, y->n_rows);
  for (int r = 0; r < x->n_rows; r++) {
    cr_assert_eq(x->row_k[r], y->row_k[r], "%s: downset %d, row %d", what, id, r);
    const int n = x->row_start[r + 1] - x->row_start[r], m = y->row_start[r + 1] - y->row_start[r];
    cr_assert_eq(n, m, "%s: downset %d, k %d: %d steps vs %d", what, id, x->row_k[r], n, m);
    for (int i = 0; i < n; i++) {
      const int p = x->row_start[r] + i, q = y->row_start[r] + i;
      cr_assert(x->s[p] == y->s[q] && x->v[p] == y->v[q],
                "%s: downset %d, k %d, step %d: (%d, %.17g) vs (%d, %.17g)", what, id, x->row_k[r], i,
                x->s[p], x->v[p], y->s[q], y->v[q]);
    }
  }
  for (int k = 0; k <= a->K; k++)
    for (int s = 0; s <= a->S; s++) {
      const double u = pp_stairs_value(x, k, s), w = pp_stairs_value(y, k, s);
      cr_assert(u == w, "%s: downset %d (k %d, s %d): %.17g vs %.17g", what, id, k, s, u, w);
    }
}

Test(wide, sweep_tables_equal_the_other_kernels, .timeout = 600) {
  const int per_kind = getenv("PIPER_SANITIZED") ? 4 : 16;
  int infinite = 0, cells = 0;
  for (int kind = 0; kind < 3; kind++)
    for (int it = 0; it < per_kind; it++) {
      pp_problem p;
      tu_spec *s = make_instance(it, kind, &p);
      tu_dps c = tu_dps_make(s, &p, 3);
      const pp_downsets *ds = c.ds;
      pp_dp *ref = c.dp[0], *whole = c.dp[1], *halves = c.dp[2];
      cr_assert(!ref->front && !ref->wide, "a 2bw DP of a small table");
      whole->wide = halves->wide = 1;
      solve(ref, ds, 1);
      solve(whole, ds, 1);
      solve(halves, ds, 2);
      char what[120];
      for (int id = 1; id < ds->count; id++) {
        snprintf(what, sizeof what, "kind %d, instance %d (K %d, N %d, zero %d), whole", kind, it, p.devices,
                 p.microbatches, p.zero);
        assert_same_table(ref, whole, id, what);
        snprintf(what, sizeof what, "kind %d, instance %d (K %d, N %d, zero %d), two k ranges", kind, it,
                 p.devices, p.microbatches, p.zero);
        assert_same_table(ref, halves, id, what);
      }
      /* how often the memory bound cut the tables (the instances must reach it) */
      const pp_stairs *top = pp_dp_table(ref, ds->count - 1);
      for (int k = 0; k <= p.devices; k++, cells++) infinite += pp_stairs_value(top, k, ref->S) == INFINITY;
      tu_dps_free(&c);
      free(s);
    }
  cr_assert(infinite > 0 && infinite < cells, "the memories must rule out some plans and not all: %d of %d",
            infinite, cells);
}
