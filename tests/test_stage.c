/*
 * test_stage.c - unit tests of the stage cost model (src/core/stage.c): hand-computed loads, sync
 * times, the degrees in use, tensor-parallel choice, memory against y, and
 * --no-recompute.
 *
 * Graphs are described with the helpers of testutil.h and loaded through the
 * public JSON loader.  Expected values are worked out by hand in the comments.
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include "stage.h"

static int index_of(const int *v, int n, int x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return i;
  return -1;
}

static uint64_t set_of(int a, int b, int c) {
  uint64_t m = 0;
  if (a >= 0) m |= 1ull << a;
  if (b >= 0) m |= 1ull << b;
  if (c >= 0) m |= 1ull << c;
  return m;
}

/* Edges 0 -> 1 (100 bytes), 1 -> 2 (200), 0 -> 2 (50); B = 1000 B/s, N = 4.
 * t = 1 TMPCs (time, parameters; sync bytes):
 *   node 0: 3 s, 400 B; bw to 1: 7, bw to 2: 9
 *   node 1: 5 s, 800 B; fw from 0: 11, bw to 2: 13
 *   node 2: 2 s, 0 B;   fw from 1: 17, fw from 0: 19
 * t = 2 TMPCs (node 2 has none):
 *   node 0: 1.5 s, 200 B; bw 3 (to 1), 4 (to 2)
 *   node 1: 2.5 s, 400 B; fw 5, bw 6 */
static tu_spec *stage_spec(void) {
  tu_spec *s = tu_spec_new(3);
  s->bandwidth = 1000;
  s->microbatches = 4;
  s->devices = 8;
  s->memory = 1e9;
  tu_edge(s, 0, 1, 100);
  tu_edge(s, 1, 2, 200);
  tu_edge(s, 0, 2, 50);
  tu_tmpc *m = tu_tmpc_add(s, 0, 1, "vanilla", 3, 400, 0, 10);
  m->bw[1] = 7, m->bw[2] = 9;
  m = tu_tmpc_add(s, 1, 1, "vanilla", 5, 800, 0, 10);
  m->fw[0] = 11, m->bw[2] = 13;
  m = tu_tmpc_add(s, 2, 1, "vanilla", 2, 0, 0, 10);
  m->fw[1] = 17, m->fw[0] = 19;
  m = tu_tmpc_add(s, 0, 2, "vanilla", 1.5, 200, 0, 10);
  m->bw[1] = 3, m->bw[2] = 4;
  m = tu_tmpc_add(s, 1, 2, "vanilla", 2.5, 400, 0, 10);
  m->fw[0] = 5, m->bw[2] = 6;
  return s;
}

Test(stage, hand_computed_loads) {
  tu_spec *s = stage_spec();
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  pp_stage_eval *ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  const int *tv, *dv;
  int nt = pp_stage_n_degrees(ev, &tv), nd = pp_stage_n_dp(ev, &dv);
  cr_assert_eq(nt, 2);
  cr_assert_eq(tv[0], 1);
  cr_assert_eq(tv[1], 2);
  cr_assert_eq(nd, 3, "divisors of N = 4 up to S = 4");
  cr_assert_eq(dv[0], 1);
  cr_assert_eq(dv[1], 2);
  cr_assert_eq(dv[2], 4);

  /* {1}: E = 2(100 + 11) + 2(200 + 13) = 648 */
  uint64_t c = set_of(1, -1, -1);
  pp_stage_set(ev, &c);
  const int *nodes;
  cr_assert_eq(pp_stage_nodes(ev, &nodes), 1);
  cr_assert_eq(nodes[0], 1);
  cr_assert(pp_stage_supports(ev, 0));
  NEAR(pp_stage_cost(ev, 0, 0, 1), 648.0 / 1000 + 5);
  /* d = 2: (648/2 + 4*1*800/2/4)/1000 + 5/2 = 0.724 + 2.5 */
  NEAR(pp_stage_cost(ev, 0, 1, 1), 3.224);
  /* d = 4: (162 + 4*3*800/4/4)/1000 + 1.25 = 0.762 + 1.25 */
  NEAR(pp_stage_cost(ev, 0, 2, 1), 2.012);
  /* t = 2, d = 1: E = 2(100 + 5) + 2(200 + 6) = 622 */
  NEAR(pp_stage_cost(ev, 1, 0, 1), 0.622 + 2.5);
  /* lower bound never above the cost */
  for (int ti = 0; ti < nt; ti++)
    for (int di = 0; di < nd; di++)
      cr_assert_leq(pp_stage_lower_bound(ev, ti, di), pp_stage_cost(ev, ti, di, 1), "ti %d di %d", ti, di);

  /* {0,1}: the inner edge 0 -> 1 is free; 0 -> 2 costs 2(50 + 9) = 118 at
   * node 0, 1 -> 2 costs 2(200 + 13) = 426 at node 1. */
  c = set_of(0, 1, -1);
  pp_stage_set(ev, &c);
  cr_assert_eq(pp_stage_nodes(ev, &nodes), 2);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 0.544 + 8);
  /* d = 2: node 0 (59 + 4*400/2/4)/1000 + 1.5 = 1.759;
   *        node 1 (213 + 400)/1000 + 2.5 = 3.113 */
  NEAR(pp_stage_cost(ev, 0, 1, 1), 1.759 + 3.113);
  /* t = 2, d = 1: 2(50 + 4) + 2(200 + 6) = 520 */
  cr_assert(pp_stage_supports(ev, 1));
  NEAR(pp_stage_cost(ev, 1, 0, 1), 0.52 + 4);
  /* t = 2, d = 2: node 0 (54 + 4*200/2/4)/1000 + 0.75 = 0.904;
   *               node 1 (206 + 4*400/2/4)/1000 + 1.25 = 1.656 */
  NEAR(pp_stage_cost(ev, 1, 1, 1), 0.904 + 1.656);

  /* {2}: fw 2(200 + 17) + 2(50 + 19) = 572; t = 2 unsupported (node 2) */
  c = set_of(2, -1, -1);
  pp_stage_set(ev, &c);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 0.572 + 2);
  cr_assert_not(pp_stage_supports(ev, 1), "node 2 has no TMPC for t = 2");
  cr_assert(isinf(pp_stage_cost(ev, 1, 0, 1)));
  cr_assert(isinf(pp_stage_cost(ev, 1, 2, 3)));

  /* {1,2}: unsupported for t = 2 because of node 2 alone */
  c = set_of(1, 2, -1);
  pp_stage_set(ev, &c);
  cr_assert(pp_stage_supports(ev, 0));
  cr_assert_not(pp_stage_supports(ev, 1));
  /* t = 1, d = 1: node 1 fw 2(100+11) = 222; node 2 fw from 0 2(50+19) = 138 */
  NEAR(pp_stage_cost(ev, 0, 0, 1), 0.36 + 7);

  /* everything: no crossing edge; d = 4 resync 300 + 600 + 0 bytes */
  c = set_of(0, 1, 2);
  pp_stage_set(ev, &c);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 10.0);
  NEAR(pp_stage_cost(ev, 0, 2, 1), 0.9 + 2.5);
  /* y does not change the load when everything fits */
  NEAR(pp_stage_cost(ev, 0, 2, 4), 0.9 + 2.5);
  int choice[3] = {-1, -1, -1};
  NEAR(pp_stage_choose(ev, 0, 2, 1, choice), 0.9 + 2.5);
  for (int i = 0; i < 3; i++) cr_assert_eq(choice[i], 0);

  /* a set again after others: memo must not leak between stages */
  c = set_of(1, -1, -1);
  pp_stage_set(ev, &c);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 5.648);

  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

Test(stage, sync_times_follow_the_chosen_tmpc) {
  /* Node 1 has two TMPCs that differ only in sync bytes and memory: the
   * chosen one's sync values must be the ones charged. */
  tu_spec *s = tu_spec_new(2);
  s->bandwidth = 10;
  s->microbatches = 1;
  s->devices = 1;
  s->memory = 100;
  tu_edge(s, 0, 1, 5);
  tu_tmpc_add(s, 0, 1, "vanilla", 1, 0, 0, 1)->bw[1] = 0;
  tu_tmpc *a = tu_tmpc_add(s, 1, 1, "big", 1, 0, 0, 90);
  a->fw[0] = 10; /* 2(5 + 10) = 30 bytes -> 3 s */
  tu_tmpc *b = tu_tmpc_add(s, 1, 1, "small", 1, 0, 0, 50);
  b->fw[0] = 20; /* 2(5 + 20) = 50 bytes -> 5 s */
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  pp_stage_eval *ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  uint64_t c = 2;
  pp_stage_set(ev, &c);
  int ch = -1;
  NEAR(pp_stage_cost(ev, 0, 0, 1), 4.0);
  NEAR(pp_stage_choose(ev, 0, 0, 1, &ch), 4.0);
  cr_assert_eq(ch, 0);
  pp_stage_eval_free(ev);
  p.memory = 60; /* only "small" fits */
  ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  pp_stage_set(ev, &c);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 6.0);
  NEAR(pp_stage_choose(ev, 0, 0, 1, &ch), 6.0);
  cr_assert_eq(ch, 1);
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

Test(stage, degrees_in_use) {
  tu_spec *s = stage_spec();
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  const int *tv, *dv;
  /* N = 12, K = 8: S = 8, divisors of 12 up to 8 */
  p.microbatches = 12;
  pp_stage_eval *ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  int nd = pp_stage_n_dp(ev, &dv);
  int want[] = {1, 2, 3, 4, 6};
  cr_assert_eq(nd, 5);
  for (int i = 0; i < 5; i++) cr_assert_eq(dv[i], want[i]);
  pp_stage_eval_free(ev);
  /* K = 1: t = 2 does not fit on one device, only d = 1 */
  p.devices = 1;
  ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  cr_assert_eq(pp_stage_n_degrees(ev, &tv), 1);
  cr_assert_eq(tv[0], 1);
  cr_assert_eq(pp_stage_n_dp(ev, &dv), 1);
  pp_stage_eval_free(ev);
  /* no DP / no TP */
  p.devices = 8;
  p.no_dp = 1;
  ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  cr_assert_eq(pp_stage_n_dp(ev, &dv), 1);
  cr_assert_eq(dv[0], 1);
  cr_assert_eq(pp_stage_n_degrees(ev, &tv), 2);
  pp_stage_eval_free(ev);
  p.no_dp = 0;
  p.no_tp = 1;
  ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  cr_assert_eq(pp_stage_n_degrees(ev, &tv), 1);
  cr_assert_eq(tv[0], 1);
  cr_assert_eq(pp_stage_n_dp(ev, &dv), 5);
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

Test(stage, tensor_parallel_choice_and_empty_lists) {
  /* node 0 has t = 1 and t = 4; node 1 has t = 1 and an empty t = 4 list */
  tu_spec *s = tu_spec_new(2);
  s->devices = 8;
  s->microbatches = 1;
  tu_tmpc_add(s, 0, 1, "vanilla", 10, 0, 0, 1);
  tu_tmpc_add(s, 0, 4, "vanilla", 3, 0, 0, 1);
  tu_tmpc_add(s, 1, 1, "vanilla", 6, 0, 0, 1);
  tu_list_empty(s, 1, 4);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  pp_stage_eval *ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  const int *tv;
  cr_assert_eq(pp_stage_n_degrees(ev, &tv), 2);
  int t4 = index_of(tv, 2, 4);
  cr_assert_geq(t4, 0);
  uint64_t c = 1;
  pp_stage_set(ev, &c);
  cr_assert(pp_stage_supports(ev, t4));
  NEAR(pp_stage_cost(ev, t4, 0, 1), 3.0);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 10.0);
  c = 3;
  pp_stage_set(ev, &c);
  cr_assert_not(pp_stage_supports(ev, t4), "an empty list does not support t = 4");
  cr_assert(isinf(pp_stage_cost(ev, t4, 0, 1)));
  NEAR(pp_stage_cost(ev, 0, 0, 1), 16.0);
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

Test(stage, memory_grows_with_y) {
  /* one node, one TMPC with A = 10, B = 5 and M = 30: y = 1, 2 fit
   * (15, 25 bytes), y = 3 does not (35) nor any larger y. */
  tu_spec *s = tu_spec_new(1);
  s->memory = 30;
  s->devices = 8;
  s->microbatches = 8;
  tu_tmpc_add(s, 0, 1, "vanilla", 2, 0, 10, 5);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  for (int mode = 0; mode < 2; mode++) {
    p.knapsack = mode ? PP_KNAPSACK_EXACT : PP_KNAPSACK_GREEDY;
    pp_stage_eval *ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
    uint64_t c = 1;
    pp_stage_set(ev, &c);
    NEAR(pp_stage_cost(ev, 0, 0, 1), 2.0);
    NEAR(pp_stage_cost(ev, 0, 0, 2), 2.0);
    cr_assert(isinf(pp_stage_cost(ev, 0, 0, 3)), "mode %d", mode);
    cr_assert(isinf(pp_stage_cost(ev, 0, 0, 8)), "mode %d", mode);
    cr_assert(isinf(pp_stage_cost(ev, 0, 0, 50)), "mode %d: y beyond the memo", mode);
    int ch;
    cr_assert(isinf(pp_stage_choose(ev, 0, 0, 3, &ch)));
    pp_stage_eval_free(ev);
  }
  pp_graph_free(g);
  free(s);
}

Test(stage, no_recompute_filters_tmpcs) {
  /* node 0: [activation recomp (slow, small), vanilla (fast, big)];
   * node 1: only activation recomp. */
  tu_spec *s = tu_spec_new(2);
  s->memory = 50;
  s->devices = 1;
  s->microbatches = 1;
  tu_tmpc_add(s, 0, 1, PP_RECOMPUTE_TMPC_ID, 7, 0, 0, 10);
  tu_tmpc_add(s, 0, 1, "vanilla", 4, 0, 0, 40);
  tu_tmpc_add(s, 1, 1, PP_RECOMPUTE_TMPC_ID, 1, 0, 0, 1);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  uint64_t c0 = 1, c1 = 2;
  int ch = -1;
  /* with recompute allowed: vanilla fits (40 <= 50) */
  pp_stage_eval *ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  pp_stage_set(ev, &c0);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 4.0);
  p.memory = 30; /* vanilla no longer fits: recompute */
  pp_stage_eval_free(ev);
  ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  pp_stage_set(ev, &c0);
  NEAR(pp_stage_choose(ev, 0, 0, 1, &ch), 7.0);
  cr_assert_eq(ch, 0);
  pp_stage_eval_free(ev);
  /* no recompute: only vanilla, which does not fit at 30 but does at 50 */
  p.no_recompute = 1;
  ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  pp_stage_set(ev, &c0);
  cr_assert(pp_stage_supports(ev, 0));
  cr_assert(isinf(pp_stage_cost(ev, 0, 0, 1)));
  pp_stage_set(ev, &c1);
  cr_assert_not(pp_stage_supports(ev, 0), "a node with only recompute TMPCs is unusable");
  pp_stage_eval_free(ev);
  p.memory = 50;
  ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  pp_stage_set(ev, &c0);
  NEAR(pp_stage_choose(ev, 0, 0, 1, &ch), 4.0);
  cr_assert_eq(ch, 1, "choice indexes the full TMPC list");
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

/* Compares every cost, bound and choice of the current stage in a and b,
 * asking them in a shuffled order of (ti, di, y); now and then a span of
 * a's costs (pp_stage_cost_span) against b's one by one, and b's costs
 * past a's bound (pp_stage_inf_from). */
static void assert_same_stage(pp_stage_eval *a, pp_stage_eval *b, tu_rng *r, const char *what) {
  const int *tv, *dv;
  const int nt = pp_stage_n_degrees(a, &tv), nd = pp_stage_n_dp(a, &dv);
  int asks[2 * 4 * 8 * 20][3], na = 0;
  for (int ti = 0; ti < nt; ti++)
    for (int di = 0; di < nd; di++)
      for (int y = 0; y <= 18 && na < (int)(sizeof asks / sizeof asks[0]); y++) {
        asks[na][0] = ti, asks[na][1] = di, asks[na][2] = y;
        na++;
      }
  for (int i = na - 1; i > 0; i--) {
    const int j = tu_int(r, 0, i);
    for (int x = 0; x < 3; x++) {
      const int t = asks[i][x];
      asks[i][x] = asks[j][x];
      asks[j][x] = t;
    }
  }
  for (int ti = 0; ti < nt; ti++)
    cr_assert_eq(pp_stage_supports(a, ti), pp_stage_supports(b, ti), "%s", what);
  for (int k = 0; k < na; k++) {
    const int ti = asks[k][0], di = asks[k][1], y = asks[k][2];
    if (tu_int(r, 0, 3) == 0) /* bounds before and after the memo row is set */
      cr_assert_eq(pp_stage_lower_bound(a, ti, di), pp_stage_lower_bound(b, ti, di), "%s", what);
    const double ca = pp_stage_cost(a, ti, di, y), cb = pp_stage_cost(b, ti, di, y);
    cr_assert(ca == cb || (isnan(ca) && isnan(cb)), "%s: cost(%d, %d, %d) %.17g against %.17g", what, ti, di,
              y, ca, cb);
    if (tu_int(r, 0, 5) == 0) { /* a span of a's costs (before or after its memo row is set) */
      const int lo = tu_int(r, 0, 18), hi = tu_int(r, lo, 18);
      double span[19];
      pp_stage_cost_span(a, ti, di, lo, hi, span);
      for (int u = lo; u <= hi; u++) {
        const double c = pp_stage_cost(b, ti, di, u);
        cr_assert(span[u - lo] == c, "%s: span cost(%d, %d, %d) %.17g against %.17g", what, ti, di, u,
                  span[u - lo], c);
      }
      /* (the bound may differ between a and b: a knapsack that finds a y
       * infeasible lowers it) */
      const int from = pp_stage_inf_from(a, ti, di);
      for (int u = from > 0 ? from : 1; u <= 18; u++)
        cr_assert(pp_stage_cost(b, ti, di, u) == INFINITY, "%s: cost(%d, %d, %d) past the bound %d", what, ti,
                  di, u, from);
    }
    if (tu_int(r, 0, 7) == 0) {
      int ch_a[TU_MAX_NODES], ch_b[TU_MAX_NODES];
      cr_assert_eq(pp_stage_choose(a, ti, di, y, ch_a), pp_stage_choose(b, ti, di, y, ch_b), "%s", what);
      const int *nodes;
      const int m = pp_stage_nodes(a, &nodes);
      cr_assert_eq(m, pp_stage_nodes(b, &nodes), "%s", what);
      if (ca < INFINITY)
        for (int i = 0; i < m; i++) cr_assert_eq(ch_a[i], ch_b[i], "%s: choice of stage node %d", what, i);
    }
  }
}

Test(stage, cached_stages_cost_what_fresh_ones_do) {
  /* Random graphs and stages set up again and again, with a cache of a
   * few slots (so that stages come back from it, some after eviction)
   * against one of a single slot (nothing kept): every answer the same to
   * the last bit, for both knapsacks, ZeRO off and on, and for set-ups
   * that summarise only some tensor degrees. */
  for (int it = 0; it < 24; it++) {
    tu_rng r = {0xcac4e5ull + (uint64_t)it * 104729};
    const int n = tu_int(&r, 6, 10);
    tu_spec *s = tu_spec_new(n);
    tu_random_edges(s, &r, 0.3);
    double need, sum_max;
    tu_random_tmpcs(s, &r, 0.3, &need, &sum_max);
    tu_random_sync(s, &r, 200);
    if (it % 3 == 2) tu_add_parts(s, &r);
    s->bandwidth = 50 * tu_int(&r, 1, 40);
    s->microbatches = 16;
    s->devices = 16;
    s->memory = floor(need * (1.0 + 0.5 * tu_unit(&r)) + tu_unit(&r) * 0.6 * sum_max);
    pp_graph *g = tu_load(s);
    pp_problem p = tu_problem(s);
    p.knapsack = it % 2 ? PP_KNAPSACK_GREEDY : PP_KNAPSACK_EXACT;
    if (it % 3 == 2) p.zero = 1 + it % 3;
    pp_stage_eval *cached = pp_stage_eval_new(g, &p, 24 * 1024), *fresh = pp_stage_eval_new(g, &p, 0);
    const int *tv;
    const int nt = pp_stage_n_degrees(cached, &tv);
    uint64_t pool[6];
    for (int x = 0; x < 6; x++) pool[x] = (tu_next(&r) & ((1ull << n) - 1)) | 1ull << tu_int(&r, 0, n - 1);
    for (int round = 0; round < 40; round++) {
      const uint64_t c = pool[tu_int(&r, 0, 5)];
      unsigned char on[8] = {0};
      const int some = tu_int(&r, 0, 2) == 0;
      for (int ti = 0; ti < nt; ti++) on[ti] = !some || tu_int(&r, 0, 1);
      pp_stage_set_some(cached, &c, some ? on : NULL);
      pp_stage_set_some(fresh, &c, some ? on : NULL);
      char what[96];
      snprintf(what, sizeof what, "instance %d, round %d, stage %#llx", it, round, (unsigned long long)c);
      assert_same_stage(cached, fresh, &r, what);
    }
    pp_stage_eval_free(cached);
    pp_stage_eval_free(fresh);
    pp_graph_free(g);
    free(s);
  }
}
