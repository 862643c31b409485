/*
 * test_dp.c - unit tests of the dynamic programme (src/core/dp.c) on tiny graphs with hand-computed
 * optima, over split device ranges, and random plans through the checker.
 *
 * Graphs are described with the helpers of testutil.h and loaded through the
 * public JSON loader.  Expected values are worked out by hand in the comments.
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include "piper/table.h"

static double plan_opt(const tu_spec *s, pp_problem p, pp_plan **plan_out) {
  pp_graph *g = tu_load(s);
  tu_outcome o = tu_plan(g, &p, "tiny");
  if (plan_out)
    *plan_out = o.plan;
  else
    pp_plan_free(o.plan);
  pp_graph_free(g);
  return o.optimum;
}

Test(dp, single_node_data_parallel) {
  /* 8 s per sample, 1000 B of parameters, B = 1000 B/s, N = K = 4:
   *   d = 1: 8;  d = 2: 4 + 4*1*1000/2/4/1000 = 4.5;  d = 4: 2 + 0.75 = 2.75 */
  tu_spec *s = tu_spec_new(1);
  s->devices = 4;
  s->microbatches = 4;
  tu_tmpc_add(s, 0, 1, "vanilla", 8, 1000, 0, 1);
  pp_problem p = tu_problem(s);
  pp_plan *plan;
  NEAR(plan_opt(s, p, &plan), 2.75);
  cr_assert_eq(plan->n_stages, 1);
  cr_assert_eq(plan->stages[0].d, 4);
  pp_plan_free(plan);
  p.devices = 3; /* d = 3 does not divide 4 */
  NEAR(plan_opt(s, p, NULL), 4.5);
  p.devices = 4;
  p.no_dp = 1;
  NEAR(plan_opt(s, p, NULL), 8.0);
  free(s);
}

Test(dp, two_node_chain) {
  /* a -> b, 1 byte per sample, B = 1 B/s; times 6 and 2; no parameters.
   * Memory 5 bytes each (B-term), M = 8: a stage holds one node. N = 4, so
   * the sum of d is at most min(N, K).
   *   K = 2: a | b with d = 1: a 6 + 2*1 = 8, b 2 + 2 = 4 -> 8
   *   K = 3: a with d = 2: 3 + 2/2 = 4, b 4 -> 4 */
  tu_spec *s = tu_spec_new(2);
  s->bandwidth = 1;
  s->microbatches = 4;
  s->memory = 8;
  tu_edge(s, 0, 1, 1);
  tu_tmpc_add(s, 0, 1, "vanilla", 6, 0, 0, 5);
  tu_tmpc_add(s, 1, 1, "vanilla", 2, 0, 0, 5);
  pp_problem p = tu_problem(s);
  p.devices = 1;
  cr_assert(isinf(plan_opt(s, p, NULL)), "one device cannot hold both nodes");
  p.devices = 2;
  pp_plan *plan;
  NEAR(plan_opt(s, p, &plan), 8.0);
  cr_assert_eq(plan->n_stages, 2);
  cr_assert_eq(plan->stages[0].nodes[0], 0, "a comes first");
  pp_plan_free(plan);
  p.devices = 3;
  NEAR(plan_opt(s, p, &plan), 4.0);
  cr_assert_eq(plan->stages[0].d, 2);
  cr_assert_eq(plan->stages[1].d, 1);
  pp_plan_free(plan);
  /* with room for both, one stage of d = 2: 8/2 = 4 on 2 devices */
  p.memory = 10;
  p.devices = 2;
  NEAR(plan_opt(s, p, NULL), 4.0);
  /* N = 2 bounds the sum of d by 2: a (d = 2) | b (d = 1) is not allowed */
  p.memory = 8;
  p.devices = 3;
  p.microbatches = 2;
  NEAR(plan_opt(s, p, NULL), 8.0);
  free(s);
}

Test(dp, memory_depends_on_the_suffix_sum) {
  /* a -> b, no communication; memory A = 1 per microbatch in flight, M = 2.
   * N = 4.  Two stages of d = 1: the first has y = 2 (fits), the second 1.
   * a with d = 2 and b with d = 2: a y = ceil(4/2) = 2 fits.
   * a d = 1, b d = 2 (K = 3): a has y = 3: 3 > 2 does not fit.
   * times: a 4, b 4.  K = 2: 4.  K = 4: 2 (both halves d = 2).
   * K = 3: a d = 2, b d = 1: a y = ceil(3/2) = 2 fits: max(2, 4) = 4;
   *        a d = 1, b d = 2 would be max(4, 2) = 4 anyway. */
  tu_spec *s = tu_spec_new(2);
  s->microbatches = 4;
  s->memory = 2;
  tu_edge(s, 0, 1, 0);
  tu_tmpc_add(s, 0, 1, "vanilla", 4, 0, 1, 0);
  tu_tmpc_add(s, 1, 1, "vanilla", 4, 0, 1, 0);
  pp_problem p = tu_problem(s);
  p.devices = 2;
  NEAR(plan_opt(s, p, NULL), 4.0);
  p.devices = 4;
  NEAR(plan_opt(s, p, NULL), 2.0);
  /* M = 1: only y = 1 fits.  A single stage holds 2 bytes; in two stages
   * the first has y = ceil((d_a + d_b) / d_a) >= 2: infeasible. */
  p.memory = 1;
  cr_assert(isinf(plan_opt(s, p, NULL)));
  free(s);
}

Test(dp, tensor_parallel_stage) {
  /* one node: t = 1 10 s, t = 2 4 s; K = 2, N = 1 */
  tu_spec *s = tu_spec_new(1);
  s->devices = 2;
  s->microbatches = 1;
  tu_tmpc_add(s, 0, 1, "vanilla", 10, 0, 0, 1);
  tu_tmpc_add(s, 0, 2, "vanilla", 4, 0, 0, 1);
  pp_problem p = tu_problem(s);
  pp_plan *plan;
  NEAR(plan_opt(s, p, &plan), 4.0);
  cr_assert_eq(plan->stages[0].t, 2);
  cr_assert_eq(plan->devices_used, 2);
  pp_plan_free(plan);
  p.no_tp = 1;
  NEAR(plan_opt(s, p, NULL), 10.0);
  p.no_tp = 0;
  p.devices = 1;
  NEAR(plan_opt(s, p, NULL), 10.0);
  free(s);
}

Test(dp, diamond_partitions) {
  /* diamond 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 with times 1, 2, 3, 4 and free
   * communication, N = 4 and no data parallelism.  K = 1: 10.  K = 2: the
   * best prefix is {0,1,2} (6 | 4) -> 6.  K = 3: {0,2} | {1} | {3} -> 4
   * (node 3 alone is 4). */
  tu_spec *s = tu_spec_new(4);
  s->microbatches = 4;
  const int e[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  for (int i = 0; i < 4; i++) tu_edge(s, e[i][0], e[i][1], 0);
  for (int v = 0; v < 4; v++) tu_tmpc_add(s, v, 1, "vanilla", v + 1, 0, 0, 1);
  pp_problem p = tu_problem(s);
  p.no_dp = 1;
  double want[] = {0, 10, 6, 4, 4};
  for (int K = 1; K <= 4; K++) {
    p.devices = K;
    double got = plan_opt(s, p, NULL);
    cr_assert(tu_close(got, want[K], 1e-12), "K = %d: %g, expected %g", K, got, want[K]);
  }
  /* memory forbids more than 2 nodes per stage (B = 1 each, M = 2):
   * K = 2 cannot work (two stages of <= 2 nodes: {0,1}|{2,3} 3|7 or
   * {0,2}|{1,3} 4|6) -> 6 */
  p.memory = 2;
  p.devices = 2;
  NEAR(plan_opt(s, p, NULL), 6.0);
  p.memory = 1; /* one node per stage: needs 4 devices */
  p.devices = 3;
  cr_assert(isinf(plan_opt(s, p, NULL)));
  p.devices = 4;
  NEAR(plan_opt(s, p, NULL), 4.0);
  /* N = 3 allows at most 3 stages */
  p.microbatches = 3;
  cr_assert(isinf(plan_opt(s, p, NULL)));
  /* N = 1: a single stage whatever K */
  p.memory = 1e9;
  p.microbatches = 1;
  NEAR(plan_opt(s, p, NULL), 10.0);
  free(s);
}

Test(dp, infeasible_plan_is_empty) {
  tu_spec *s = tu_spec_new(2);
  s->memory = 1;
  tu_edge(s, 0, 1, 1);
  tu_tmpc_add(s, 0, 1, "vanilla", 1, 0, 0, 2);
  tu_tmpc_add(s, 1, 1, "vanilla", 1, 0, 0, 2);
  pp_problem p = tu_problem(s);
  pp_plan *plan;
  cr_assert(isinf(plan_opt(s, p, &plan)));
  cr_assert_eq(plan->feasible, 0);
  cr_assert_eq(plan->n_stages, 0);
  pp_plan_free(plan);
  free(s);
}

/* A random graph for DP tests: n nodes, 1-2 TMPCs for t = 1 and sometimes
 * t = 2, random edges, costs, sync, memories. */
static tu_spec *random_spec(tu_rng *r, int n) {
  tu_spec *s = tu_spec_new(n);
  tu_random_edges(s, r, 0.2 + 0.6 * tu_unit(r));
  double total = 0;
  for (int v = 0; v < n; v++) {
    int nl = tu_int(r, 1, 2);
    for (int li = 0; li < nl; li++) {
      int t = li == 0 ? 1 : 2, cnt = tu_int(r, 1, 2);
      for (int l = 0; l < cnt; l++) {
        double mb = tu_int(r, 1, 60);
        tu_tmpc_add(s, v, t, l == 1 ? PP_RECOMPUTE_TMPC_ID : "vanilla", tu_int(r, 1, 100) / (double)t,
                    tu_int(r, 0, 2000), tu_int(r, 0, 20), mb);
        total += mb;
      }
    }
  }
  tu_random_sync(s, r, 100);
  s->bandwidth = 100 * tu_int(r, 1, 20);
  s->microbatches = tu_int(r, 1, 12);
  s->devices = tu_int(r, 1, 12);
  s->memory = tu_int(r, 20, 40 + (int)total);
  return s;
}

/* Runs the DP twice: once with pp_dp_solve, once with every downset's rows
 * computed in the given number of k-ranges and joined.  The tables must be
 * the same. */
static void split_vs_whole(const tu_spec *s, pp_problem p, int n_parts, tu_rng *r, const char *label) {
  pp_graph *g = tu_load(s);
  pp_downsets *ds = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_downsets_enumerate(g, 1000000, &ds, &err), PP_OK);
  pp_dp *whole = NULL, *split = NULL;
  cr_assert_eq(pp_dp_create(g, &p, ds, 0, &whole, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(pp_dp_create(g, &p, ds, 0, &split, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(pp_dp_solve(whole, NULL, NULL, &err), PP_OK);
  const int K = p.devices, S = pp_problem_max_s(&p);
  if (n_parts > K + 1) n_parts = K + 1;
  for (int id = 1; id < ds->count; id++) {
    int cuts[10];
    cuts[0] = 0;
    for (int q = 1; q < n_parts; q++) cuts[q] = tu_int(r, cuts[q - 1] + 1, K - (n_parts - 1 - q));
    cuts[n_parts] = K + 1;
    pp_stairs *parts[10];
    for (int q = 0; q < n_parts; q++) parts[q] = pp_dp_compute_rows(split, id, cuts[q], cuts[q + 1] - 1);
    pp_stairs *joined = pp_stairs_join(parts, n_parts);
    for (int q = 0; q < n_parts; q++) pp_stairs_free(parts[q]);
    char what[160];
    snprintf(what, sizeof what, "%s: downset %d of %d, %d parts", label, id, ds->count, n_parts);
    assert_same_stairs(pp_dp_table(whole, id), joined, S, what);
    pp_dp_set_table(split, id, joined);
  }
  cr_assert(tu_close(pp_dp_optimum(whole, K), pp_dp_optimum(split, K), 0), "%s", label);
  pp_dp_free(whole);
  pp_dp_free(split);
  pp_downsets_free(ds);
  pp_graph_free(g);
}

Test(dp, split_k_ranges_tiny) {
  /* the diamond with K = 6, N = 6, in 2..4 parts */
  tu_spec *s = tu_spec_new(4);
  s->microbatches = 6;
  s->devices = 6;
  const int e[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  for (int i = 0; i < 4; i++) tu_edge(s, e[i][0], e[i][1], 10 * (i + 1));
  for (int v = 0; v < 4; v++) {
    tu_tmpc_add(s, v, 1, "vanilla", v + 1, 100, 1, 1);
    tu_tmpc_add(s, v, 2, "vanilla", (v + 1) * 0.6, 50, 1, 1);
  }
  s->memory = 5;
  tu_rng r = {5};
  for (int parts = 1; parts <= 4; parts++) split_vs_whole(s, tu_problem(s), parts, &r, "diamond");
  free(s);
}

Test(dp, split_k_ranges_random, .timeout = 300) {
  tu_rng r = {2024};
  for (int it = 0; it < 120; it++) {
    tu_spec *s = random_spec(&r, tu_int(&r, 1, 7));
    pp_problem p = tu_problem(s);
    p.knapsack = it % 3 == 0 ? PP_KNAPSACK_EXACT : PP_KNAPSACK_GREEDY;
    char label[64];
    snprintf(label, sizeof label, "random instance %d", it);
    split_vs_whole(s, p, tu_int(&r, 2, 5), &r, label);
    free(s);
  }
}

Test(dp, random_plans_pass_the_checker) {
  tu_rng r = {31337};
  int feasible = 0;
  for (int it = 0; it < 150; it++) {
    tu_spec *s = random_spec(&r, tu_int(&r, 1, 8));
    pp_problem p = tu_problem(s);
    p.knapsack = it % 2 ? PP_KNAPSACK_EXACT : PP_KNAPSACK_GREEDY;
    p.no_dp = it % 7 == 3;
    p.no_tp = it % 7 == 4;
    p.no_recompute = it % 7 == 5;
    pp_graph *g = tu_load(s);
    char label[64];
    snprintf(label, sizeof label, "random instance %d", it);
    tu_outcome o = tu_plan(g, &p, label);
    feasible += o.plan->feasible;
    /* a budget below K never does better */
    pp_plan_free(o.plan);
    pp_graph_free(g);
    free(s);
  }
  cr_log_info("dp: %d of 150 random instances feasible", feasible);
  cr_assert_gt(feasible, 30);
}

/* pp_dp_create refuses, under mem_limit, a DP whose tables would not fit;
 * the estimate counts the stage cache (stage.h) that a DP of 2^20 pairs or
 * more gets.  13 independent nodes: 2^13 = 8192 downsets, 3^13 = 1.59 M
 * pairs (I, J).  The first refusal (a limit of one byte) names the tables'
 * estimate; a limit 1 MB above it still refuses, as the 4 MiB cache does
 * not fit, and one 5 MB above it does not. */
Test(dp, memory_estimate_counts_the_stage_cache) {
  tu_spec *s = tu_spec_new(13);
  for (int v = 0; v < 13; v++) tu_tmpc_add(s, v, 1, "vanilla", 1, 0, 0, 1);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  pp_downsets *ds = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_downsets_enumerate(g, 1000000, &ds, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(ds->count, 8192);
  pp_dp *dp = NULL;
  cr_assert_eq(pp_dp_create(g, &p, ds, 1, &dp, &err), PP_ERR_LIMIT);
  const char *at = strstr(err.msg, "about ");
  cr_assert_not_null(at, "%s", err.msg);
  const double tables = atof(at + 6) * 1e9;
  cr_assert(tables > 1e6 && tables < 2e7, "%s", err.msg);
  err = (pp_error){0};
  cr_assert_eq(pp_dp_create(g, &p, ds, tables + 1e6, &dp, &err), PP_ERR_LIMIT, "the cache is not counted");
  cr_assert_not_null(strstr(err.msg, "--max-memory-use"), "%s", err.msg);
  cr_assert_eq(pp_dp_create(g, &p, ds, tables + 5e6, &dp, &err), PP_OK, "%s", err.msg);
  pp_dp_free(dp);
  pp_downsets_free(ds);
  pp_graph_free(g);
  free(s);
}
