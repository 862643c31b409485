/*
 * test_restrict.c - pp_dp_restrict, which `piper sweep` uses to archive each
 * row of a group with the group's tables cut to the row's budget: on small
 * random graphs, under every schedule (the 2bw tables and the Pareto rows of
 * 1f1b / gpipe), the cut tables give at every k the optimum a DP run at the
 * row's own budget gives, to rounding (a DP with a smaller S may sum the same
 * terms in another order; the archive reader checks /curve against the
 * archived tables themselves).
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

/* A random instance with up to 7 nodes, 1-3 TMPCs per (node, t). */
static tu_spec *instance(int it, pp_problem *p) {
  tu_rng r = {0x5eed0000ull + (uint64_t)it * 7919};
  int n = tu_int(&r, 2, 7);
  tu_spec *s = tu_spec_new(n);
  tu_random_edges(s, &r, 0.5);
  double sum = 0;
  for (int v = 0; v < n; v++) {
    int base = tu_int(&r, 5, 100);
    for (int t = 1; t <= 2; t++) {
      int cnt = tu_int(&r, 1, 3);
      double param = tu_int(&r, 0, 3000);
      for (int l = 0; l < cnt; l++) {
        double a = tu_int(&r, 0, 12) / (l + 1.0), b = tu_int(&r, 1, 50) / (l + 1.0);
        tu_tmpc_add(s, v, t,
                    l == 0   ? "vanilla"
                    : l == 1 ? PP_RECOMPUTE_TMPC_ID
                             : "other",
                    base * (1.0 + 0.3 * l) / t, param, a, b);
        sum += a + b;
      }
    }
  }
  tu_random_sync(s, &r, 40);
  s->devices = tu_int(&r, 4, 10);
  s->microbatches = tu_int(&r, 2, 12);
  s->memory = sum * (0.2 + 0.5 * tu_unit(&r));
  s->bandwidth = 50 + tu_int(&r, 0, 200);
  *p = tu_problem(s);
  return s;
}

static pp_dp *solve(const pp_graph *g, const pp_problem *p, const pp_downsets *ds) {
  pp_dp *dp = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_dp_create(g, p, ds, 0, &dp, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(pp_dp_solve(dp, NULL, NULL, &err), PP_OK, "%s", err.msg);
  return dp;
}

static void family(pp_schedule sched) {
  int compared = 0;
  for (int it = 0; it < 150; it++) {
    pp_problem p;
    tu_spec *s = instance(it, &p);
    p.schedule = sched;
    pp_graph *g = tu_load(s);
    pp_downsets *ds = NULL;
    pp_error err = {0};
    cr_assert_eq(pp_downsets_enumerate(g, 1000000, &ds, &err), PP_OK, "%s", err.msg);
    pp_dp *big = solve(g, &p, ds);
    for (int kr = 1; kr <= p.devices; kr++) {
      pp_problem q = p;
      q.devices = kr;
      pp_dp *own = solve(g, &q, ds), *cut = pp_dp_restrict(big, &q);
      for (int k = 1; k <= kr; k++) {
        double want = pp_dp_optimum(own, k), got = pp_dp_optimum(cut, k);
        cr_assert(tu_close(got, want, 1e-12),
                  "instance %d, %s, K = %d cut to %d: optimum at k = %d is %.17g, a DP at %d gives %.17g", it,
                  pp_schedule_name(sched), p.devices, kr, k, got, kr, want);
        compared += want < INFINITY;
      }
      pp_dp_free(cut);
      pp_dp_free(own);
    }
    pp_dp_free(big);
    pp_downsets_free(ds);
    pp_graph_free(g);
    free(s);
  }
  cr_assert(compared > 200, "only %d finite optima compared", compared);
}

Test(restrict, the_2bw_tables) { family(PP_SCHEDULE_2BW); }
Test(restrict, pareto_rows_1f1b) { family(PP_SCHEDULE_1F1B); }
Test(restrict, pareto_rows_gpipe) { family(PP_SCHEDULE_GPIPE); }
