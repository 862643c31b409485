/*
 * test_knapsack.c - unit tests of the TMPC knapsack of a stage (src/core/stage.c): the greedy heuristic
 * of the reference on hand-made instances (order of swaps, ties), exact
 * mode, and random instances against reference implementations.
 *
 * Graphs are described with the helpers of testutil.h and loaded through the
 * public JSON loader.  Expected values are worked out by hand in the comments.
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include "stage.h"

typedef struct kt {
  double time, mem;
} kt;

/* One stage of m isolated nodes (t = 1, d = 1, no parameters): a TMPC's
 * contribution is its time exactly and its memory mem (A = 0).  Returns the
 * stage cost; choice (if not NULL) receives the chosen TMPCs. */
static double knap(int m, const int *counts, const kt (*tm)[3], double M, pp_knapsack_mode mode,
                   int *choice) {
  tu_spec *s = tu_spec_new(m);
  s->memory = M;
  s->devices = 1;
  s->microbatches = 1;
  for (int i = 0; i < m; i++)
    for (int l = 0; l < counts[i]; l++) {
      char id[16];
      snprintf(id, sizeof id, "c%d", l);
      tu_tmpc_add(s, i, 1, id, tm[i][l].time, 0, 0, tm[i][l].mem);
    }
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  p.knapsack = mode;
  pp_stage_eval *ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  uint64_t c = (1ull << m) - 1;
  pp_stage_set(ev, &c);
  double r = pp_stage_cost(ev, 0, 0, 1);
  int ch[TU_MAX_NODES];
  double r2 = pp_stage_choose(ev, 0, 0, 1, ch);
  cr_assert(tu_close(r, r2, 0), "memoised cost %.17g, chosen cost %.17g", r, r2);
  if (choice) memcpy(choice, ch, sizeof(int) * (size_t)m);
  if (!isinf(r)) {
    double mem = 0, t = 0;
    for (int i = 0; i < m; i++) mem += tm[i][ch[i]].mem, t += tm[i][ch[i]].time;
    cr_assert_leq(mem, M, "the chosen TMPCs need %g > M = %g", mem, M);
    cr_assert(tu_close(t, r, 1e-12), "chosen TMPCs cost %.17g, reported %.17g", t, r);
  }
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
  return r;
}

#define CHOICE_IS(ch, ...)                                                                          \
  do {                                                                                              \
    int want_[] = {__VA_ARGS__};                                                                    \
    for (size_t i_ = 0; i_ < sizeof want_ / sizeof want_[0]; i_++)                                  \
      cr_assert_eq((ch)[i_], want_[i_], "node %zu: TMPC %d, expected %d", i_, (ch)[i_], want_[i_]); \
  } while (0)

Test(knapsack, all_fastest_fits) {
  const kt tm[2][3] = {{{3, 10}, {5, 4}}, {{2, 8}, {4, 1}}};
  int cnt[2] = {2, 2}, ch[2];
  for (int mode = 0; mode < 2; mode++) {
    NEAR(knap(2, cnt, tm, 18, mode, ch), 5.0);
    CHOICE_IS(ch, 0, 0);
  }
  /* equal times: the first is the fastest even if the second is smaller */
  const kt tie[1][3] = {{{5, 10}, {5, 1}}};
  int one = 2;
  NEAR(knap(1, &one, tie, 100, PP_KNAPSACK_GREEDY, ch), 5.0);
  CHOICE_IS(ch, 0);
  /* the fastest listed second */
  const kt second[1][3] = {{{9, 1}, {5, 10}}};
  NEAR(knap(1, &one, second, 100, PP_KNAPSACK_GREEDY, ch), 5.0);
  CHOICE_IS(ch, 1);
}

Test(knapsack, all_smallest_does_not_fit) {
  const kt tm[2][3] = {{{3, 10}, {5, 4}}, {{2, 8}, {4, 1}}};
  int cnt[2] = {2, 2};
  for (int mode = 0; mode < 2; mode++) {
    cr_assert(isinf(knap(2, cnt, tm, 4.999, mode, NULL)), "mode %d", mode);
    /* exactly the all-smallest memory fits */
    NEAR(knap(2, cnt, tm, 5, mode, NULL), 9.0);
  }
}

Test(knapsack, swaps_in_order_of_cost_per_byte) {
  /* Fastest everywhere: 60 bytes, M = 50: shave 10.  Swaps (extra s / byte):
   *   node 0: +4 s for 8 B (0.5), node 1: +3 for 3 (1), node 2: +10 for 12 (0.833)
   * The greedy takes node 0 (2 B left), then node 2: 14 + 10 + 20 = 44.
   * The optimum takes nodes 0 and 1 (11 B): 14 + 13 + 10 = 37. */
  const kt tm[3][3] = {{{10, 20}, {14, 12}}, {{10, 20}, {13, 17}}, {{10, 20}, {20, 8}}};
  int cnt[3] = {2, 2, 2}, ch[3];
  NEAR(knap(3, cnt, tm, 50, PP_KNAPSACK_GREEDY, ch), 44.0);
  CHOICE_IS(ch, 1, 0, 1);
  NEAR(knap(3, cnt, tm, 50, PP_KNAPSACK_EXACT, ch), 37.0);
  CHOICE_IS(ch, 1, 1, 0);
  /* shaving exactly the first swap's saving stops there */
  NEAR(knap(3, cnt, tm, 52, PP_KNAPSACK_GREEDY, ch), 34.0);
  CHOICE_IS(ch, 1, 0, 0);
}

Test(knapsack, ties_go_to_the_lower_node) {
  /* equal keys 0.5: node 0 +3 s for 6 B, node 1 +2 s for 4 B; shave 3.
   * Ties by node: node 0 goes first and suffices: 13 + 10 = 23, although
   * swapping node 1 alone (22) is better: the exact mode finds it. */
  const kt tm[2][3] = {{{10, 20}, {13, 14}}, {{10, 20}, {12, 16}}};
  int cnt[2] = {2, 2}, ch[2];
  NEAR(knap(2, cnt, tm, 37, PP_KNAPSACK_GREEDY, ch), 23.0);
  CHOICE_IS(ch, 1, 0);
  NEAR(knap(2, cnt, tm, 37, PP_KNAPSACK_EXACT, ch), 22.0);
  CHOICE_IS(ch, 0, 1);
  /* mirrored: node 0 now has the cheap swap, still first */
  const kt mir[2][3] = {{{10, 20}, {12, 16}}, {{10, 20}, {13, 14}}};
  NEAR(knap(2, cnt, mir, 37, PP_KNAPSACK_GREEDY, ch), 22.0);
  CHOICE_IS(ch, 1, 0);
}

Test(knapsack, ties_go_to_the_lower_tmpc) {
  /* three TMPCs: fast (10, 20), a (14, 12) key 4/8, b (12, 16) key 2/4.
   * Equal keys: TMPC a (index 1) first; it saves 8 >= 3: cost 14 + 10. */
  const kt tm[2][3] = {{{10, 20}, {14, 12}, {12, 16}}, {{10, 20}}};
  int cnt[2] = {3, 1}, ch[2];
  NEAR(knap(2, cnt, tm, 37, PP_KNAPSACK_GREEDY, ch), 24.0);
  CHOICE_IS(ch, 1, 0);
  NEAR(knap(2, cnt, tm, 37, PP_KNAPSACK_EXACT, ch), 22.0);
  CHOICE_IS(ch, 2, 0);
}

Test(knapsack, exact_mode_respects_memory_on_every_node) {
  /* node 0: (3 s, 10 B), (5 s, 4 B); node 1: (2 s, 8 B), (4 s, 1 B); M = 5.
   * Only the all-smallest choice fits: 5 + 4 = 9 s.  Any answer below 9
   * needs more than M bytes. */
  tu_spec *s = tu_spec_new(2);
  s->memory = 5;
  s->devices = 1;
  s->microbatches = 1;
  tu_tmpc_add(s, 0, 1, "c0", 3, 0, 0, 10);
  tu_tmpc_add(s, 0, 1, "c1", 5, 0, 0, 4);
  tu_tmpc_add(s, 1, 1, "c0", 2, 0, 0, 8);
  tu_tmpc_add(s, 1, 1, "c1", 4, 0, 0, 1);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  p.knapsack = PP_KNAPSACK_EXACT;
  pp_stage_eval *ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
  uint64_t c = 3;
  pp_stage_set(ev, &c);
  int ch[2] = {-1, -1};
  double got = pp_stage_choose(ev, 0, 0, 1, ch);
  double mem = (ch[0] == 0 ? 10 : 4) + (ch[1] == 0 ? 8 : 1);
  cr_assert(got == 9.0 && ch[0] == 1 && ch[1] == 1,
            "exact knapsack: cost %g with TMPCs (%d, %d) needing %g bytes > M = 5; expected 9 with (1, 1). "
            "The branch and bound never checks the memory of the last node's choice",
            got, ch[0], ch[1], mem);
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

Test(knapsack, y_changes_the_instance) {
  /* fast: 10 s, A = 5; small: 12 s, A = 1, B = 4; M = 12 */
  tu_spec *s = tu_spec_new(1);
  s->memory = 12;
  s->devices = 16;
  s->microbatches = 16;
  tu_tmpc_add(s, 0, 1, "fast", 10, 0, 5, 0);
  tu_tmpc_add(s, 0, 1, "small", 12, 0, 1, 4);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  double want[] = {0, 10, 10, 12, 12, 12, 12, 12, 12, INFINITY, INFINITY};
  for (int mode = 0; mode < 2; mode++) {
    p.knapsack = mode;
    pp_stage_eval *ev = pp_stage_eval_new(g, &p, PP_STAGE_CACHE_BYTES);
    uint64_t c = 1;
    pp_stage_set(ev, &c);
    for (int y = 1; y <= 10; y++)
      cr_assert(tu_close(pp_stage_cost(ev, 0, 0, y), want[y], 1e-12), "mode %d y %d: %g", mode, y,
                pp_stage_cost(ev, 0, 0, y));
    pp_stage_eval_free(ev);
  }
  pp_graph_free(g);
  free(s);
}

/* The best over every combination (exhaustive). */
static double ref_exact(int m, const int *count, double c[][3], double w[][3], double M) {
  int idx[TU_MAX_NODES] = {0};
  double best = INFINITY;
  for (;;) {
    double cost = 0, mem = 0;
    for (int i = 0; i < m; i++) cost += c[i][idx[i]], mem += w[i][idx[i]];
    if (mem <= M && cost < best) best = cost;
    int i = 0;
    while (i < m && ++idx[i] == count[i]) idx[i++] = 0;
    if (i == m) break;
  }
  return best;
}

Test(knapsack, random_instances_against_references) {
  /* Random stages of isolated nodes with 1-3 TMPCs: the exact mode must
   * equal exhaustive search; the greedy must equal the reference's greedy
   * (instances with <= 2 TMPCs per node, where the reference defines it). */
  tu_rng r = {777};
  int n_inst = 0, n_feasible = 0, n_greedy_worse = 0;
  for (int it = 0; it < 400; it++) {
    int m = tu_int(&r, 1, 7), two_max = it % 2;
    int cnt[TU_MAX_NODES];
    kt tm[TU_MAX_NODES][3];
    double c[TU_MAX_NODES][3], w[TU_MAX_NODES][3];
    double total_max = 0;
    for (int i = 0; i < m; i++) {
      cnt[i] = tu_int(&r, 1, two_max ? 2 : 3);
      double mx = 0;
      for (int l = 0; l < cnt[i]; l++) {
        tm[i][l].time = tu_int(&r, 1, 50);
        tm[i][l].mem = tu_int(&r, 1, 40);
        c[i][l] = tm[i][l].time;
        w[i][l] = tm[i][l].mem;
        if (w[i][l] > mx) mx = w[i][l];
      }
      total_max += mx;
    }
    double M = tu_int(&r, 1 + (int)(total_max / 3), (int)total_max);
    double want = ref_exact(m, cnt, c, w, M);
    double got = knap(m, cnt, (const kt(*)[3])tm, M, PP_KNAPSACK_EXACT, NULL);
    cr_assert(tu_close(got, want, 1e-12), "instance %d: exact mode %.17g, exhaustive %.17g", it, got, want);
    n_inst++;
    n_feasible += !isinf(want);
    if (two_max) {
      int H[TU_MAX_NODES];
      double gw = tu_ref_greedy(m, cnt, c, w, M, H);
      double gg = knap(m, cnt, (const kt(*)[3])tm, M, PP_KNAPSACK_GREEDY, NULL);
      cr_assert(tu_close(gg, gw, 1e-12), "instance %d: greedy mode %.17g, reference greedy %.17g", it, gg,
                gw);
      cr_assert(isinf(gw) == isinf(want), "instance %d: greedy and exact disagree on feasibility", it);
      n_greedy_worse += gw > want * (1 + 1e-12);
    }
  }
  cr_log_info("knapsack: %d instances, %d feasible, greedy above the optimum on %d", n_inst, n_feasible,
              n_greedy_worse);
  cr_assert_gt(n_feasible, n_inst / 4);
  cr_assert_gt(n_greedy_worse, 0, "the random set never separates greedy from exact");
}
