/*
 * test_bruteforce.c - the dynamic programme against an exhaustive search over
 * every plan of small random graphs.
 *
 * The search is written from the model (reference-semantics notes) and reads
 * the instance description (tu_spec), not the loaded graph or any planner
 * code: every ordered partition of the nodes into stages that no edge goes
 * against, every (d, t) per stage with d | N, sum of d <= N and
 * sum of d*t <= K, and for each stage the best TMPC choice with memory
 * A*y + B, y = ceil(suffix sum of d / d).  The stages' TMPC choices are
 * independent, so each stage's best choice is found once per (stage, t, d, y)
 * by trying every combination (exact mode) or by the reference's greedy.
 *
 * Exact mode: the DP's optimum must equal the search's, with the same
 * feasibility, and the reconstructed plan must pass pp_check_plan with that
 * TPS.  Greedy mode: the reconstructed plan must pass the check and can
 * never beat the exact optimum; where it differs from the search with greedy
 * stage costs, the instance must show a stage whose greedy cost falls as y
 * grows (the reference's DP assumes it never does), else the test fails.
 */
#define _POSIX_C_SOURCE 200809L
#include "bruteforce.h"

#define BF_MAX_N    8
#define BF_MAX_D    8
#define BF_MAX_Y    13
#define N_RANDOM    1000 /* random instances; then hand-made ones */
#define N_INSTANCES (N_RANDOM + 768)

/* One instance with the exhaustive search's state. */
typedef struct bf {
  const tu_spec *s;
  pp_problem p;
  int n, S;
  int succ[BF_MAX_N]; /* successor masks */
  int nt, tv[2], nd, dv[BF_MAX_D];
  int greedy;   /* stage costs by the reference's greedy */
  double *memo; /* [256][2][BF_MAX_D][BF_MAX_Y + 1], NaN = unknown */
  double best;
  long long leaves;
} bf;

static size_t memo_at(int mask, int ti, int di, int y) {
  return (((size_t)mask * 2 + (size_t)ti) * BF_MAX_D + (size_t)di) * (BF_MAX_Y + 1) + (size_t)y;
}

/* Best load of stage mask with degrees (t, d) and y, by the mode; +INF if no
 * choice fits or some node has no usable TMPC for t. */
static double stage_cost(bf *b, int mask, int ti, int di, int y) {
  double *slot = &b->memo[memo_at(mask, ti, di, y)];
  if (!isnan(*slot)) return *slot;
  double c[BF_MAX_N][3], w[BF_MAX_N][3], param;
  int cnt[BF_MAX_N], H[BF_MAX_N];
  const int m = bf_stage_options(b->s, &b->p, mask, b->tv[ti], b->dv[di], y, c, w, cnt, &param);
  if (m < 0)
    *slot = INFINITY;
  else if (b->greedy)
    *slot = tu_ref_greedy(m, cnt, c, w, b->p.memory, H);
  else
    *slot = bf_exact_knapsack(m, cnt, c, w, b->p.memory);
  return *slot;
}

/* Chooses the last stage of the nodes in rem (successor-closed within rem),
 * given the stages after it: their sum of d (after), devices (used) and max
 * load (cur). */
static void search(bf *b, int rem, int after, int used, double cur) {
  if (rem == 0) {
    b->leaves++;
    if (cur < b->best) b->best = cur;
    return;
  }
  for (int L = rem; L; L = (L - 1) & rem) {
    int closed = 1;
    for (int v = 0; v < b->n && closed; v++)
      if ((L >> v & 1) && (b->succ[v] & rem & ~L)) closed = 0;
    if (!closed) continue;
    for (int ti = 0; ti < b->nt; ti++)
      for (int di = 0; di < b->nd; di++) {
        const int d = b->dv[di], t = b->tv[ti];
        if (used + d * t > b->p.devices || after + d > b->p.microbatches) continue;
        const int y = (after + d + d - 1) / d;
        double c = stage_cost(b, L, ti, di, y);
        double m = c > cur ? c : cur;
        if (m >= b->best) continue;
        search(b, rem & ~L, after + d, used + d * t, m);
      }
  }
}

/* The optimum over every plan (+INF if none), and the number of complete
 * plans the search reached. */
static double brute(const tu_spec *s, const pp_problem *p, int greedy, long long *leaves, double *memo) {
  bf b;
  memset(&b, 0, sizeof b);
  b.s = s;
  b.p = *p;
  b.n = s->n;
  b.greedy = greedy;
  b.memo = memo;
  for (size_t i = 0; i < memo_at(256, 0, 0, 0); i++) memo[i] = NAN;
  for (int e = 0; e < s->n_edges; e++) b.succ[s->src[e]] |= 1 << s->dst[e];
  b.tv[b.nt++] = 1;
  if (!p->no_tp) b.tv[b.nt++] = 2;
  for (int d = 1; d <= p->devices && d <= s->microbatches; d++)
    if (s->microbatches % d == 0 && (d == 1 || !p->no_dp)) b.dv[b.nd++] = d;
  b.best = INFINITY;
  search(&b, (1 << s->n) - 1, 0, 0, 0.0);
  if (leaves) *leaves = b.leaves;
  return b.best;
}

/* 1 if some stage's greedy cost is lower at a larger y (same t, d), for y up
 * to what the sum of d allows. */
static int greedy_not_monotone(const tu_spec *s, const pp_problem *p, double *memo, char *why, size_t n_why) {
  bf b;
  memset(&b, 0, sizeof b);
  b.s = s;
  b.p = *p;
  b.n = s->n;
  b.greedy = 1;
  b.memo = memo;
  for (size_t i = 0; i < memo_at(256, 0, 0, 0); i++) memo[i] = NAN;
  b.tv[b.nt++] = 1;
  if (!p->no_tp) b.tv[b.nt++] = 2;
  for (int d = 1; d <= p->devices && d <= s->microbatches; d++)
    if (s->microbatches % d == 0 && (d == 1 || !p->no_dp)) b.dv[b.nd++] = d;
  const int S = s->microbatches < p->devices ? s->microbatches : p->devices;
  for (int mask = 1; mask < (1 << s->n); mask++)
    for (int ti = 0; ti < b.nt; ti++)
      for (int di = 0; di < b.nd; di++) {
        int ymax = (S + b.dv[di] - 1) / b.dv[di];
        for (int y = 1; y < ymax; y++) {
          double a = stage_cost(&b, mask, ti, di, y), c = stage_cost(&b, mask, ti, di, y + 1);
          if (c < a * (1 - 1e-12)) {
            snprintf(why, n_why, "stage mask 0x%x, t = %d, d = %d: greedy %.17g at y = %d, %.17g at y = %d",
                     mask, b.tv[ti], b.dv[di], a, y, c, y + 1);
            return 1;
          }
        }
      }
  return 0;
}

/* A hand-made instance where the greedy's stage cost falls as y grows:
 * stage {0,1} must shave memory; node 0's swap costs 10 s for 100 B (key
 * 0.1), node 1's costs 1 s for 6y B (key 1/(6y)).  With M = 103 the greedy
 * takes node 0's swap at y = 1 (30 s) but node 1's at y >= 2 (21 s).  Node 2
 * (after both) and node 3 (before both) allow pipelines in which {0,1} sees
 * y = 1, 2 or 3. */
static tu_spec *non_monotone_instance(int variant, pp_problem *p) {
  tu_spec *s = tu_spec_new(4);
  tu_edge(s, 0, 2, 0);
  tu_edge(s, 1, 2, 0);
  tu_edge(s, 3, 0, 0);
  tu_edge(s, 3, 1, 0);
  tu_tmpc_add(s, 0, 1, "vanilla", 10, 0, 0, 100);
  tu_tmpc_add(s, 0, 1, PP_RECOMPUTE_TMPC_ID, 20, 0, 0, 0);
  tu_tmpc_add(s, 1, 1, "vanilla", 10, 0, 6, 0);
  tu_tmpc_add(s, 1, 1, PP_RECOMPUTE_TMPC_ID, 11, 0, 0, 0);
  tu_tmpc_add(s, 2, 1, "vanilla", 3 + 9 * (variant % 4), 0, 0, 1);
  tu_tmpc_add(s, 3, 1, "vanilla", 2 + 8 * (variant / 4 % 4), 0, 0, 1);
  s->memory = 103 + variant / 16 % 3;
  s->microbatches = 1 + variant / 48 % 4;
  s->devices = 1 + variant / 192 % 4;
  *p = tu_problem(s);
  return s;
}

/* Instance it of the fixed family (deterministic in it). */
static tu_spec *make_instance(int it, pp_problem *p) {
  if (it >= N_RANDOM) return non_monotone_instance(it - N_RANDOM, p);
  tu_rng r = {0x5eed0000ull + (uint64_t)it * 7919};
  int n = it < 20 ? 2 + it % 3 : tu_int(&r, 2, BF_MAX_N);
  tu_spec *s = tu_spec_new(n);
  /* denser graphs for more nodes keep the number of plans small */
  double pe = n <= 5 ? 0.2 + 0.6 * tu_unit(&r) : 0.45 + 0.45 * tu_unit(&r);
  tu_random_edges(s, &r, pe);
  double need = 0, sum_max = 0;
  for (int v = 0; v < n; v++) {
    int base = tu_int(&r, 5, 100);
    double vmin = INFINITY, vmax = 0;
    for (int t = 1; t <= 2; t++) {
      if (t == 2 && tu_unit(&r) < 0.4) continue;
      int cnt = tu_int(&r, 1, 2);
      for (int l = 0; l < cnt; l++) {
        double a = tu_int(&r, 0, 12), b = tu_int(&r, 1, 50);
        double time = l == 0 ? base / (t == 1 ? 1.0 : 1.0 + tu_unit(&r)) : base * (1.1 + tu_unit(&r));
        if (l == 1) { /* the second TMPC saves memory at a cost */
          a = floor(a / 3);
          b = floor(b / 2) + 1;
        }
        tu_tmpc_add(s, v, t, l == 0 ? "vanilla" : PP_RECOMPUTE_TMPC_ID, time, tu_int(&r, 0, 3000), a, b);
        double w = a + b;
        if (w < vmin) vmin = w;
        if (w > vmax) vmax = w;
      }
    }
    need = fmax(need, vmin);
    sum_max += vmax;
  }
  bf_finish_instance(s, &r, need, sum_max, n <= 6 ? 12 : 8, p);
  return s;
}

Test(bruteforce, exact_mode_matches_exhaustive_search, .timeout = 600) {
  double *memo = malloc(sizeof(double) * memo_at(256, 0, 0, 0));
  int feasible = 0, infeasible = 0, bad = 0;
  long long leaves = 0;
  char first[4096] = "";
  for (int it = 0; it < N_INSTANCES; it++) {
    pp_problem p;
    tu_spec *s = make_instance(it, &p);
    p.knapsack = PP_KNAPSACK_EXACT;
    long long lv = 0;
    double want = brute(s, &p, 0, &lv, memo);
    leaves += lv;
    int ok;
    char msg[2600];
    double got = bf_run_dp(s, &p, 0, &ok, msg, sizeof msg);
    if (isinf(want))
      infeasible++;
    else
      feasible++;
    if (!ok || !tu_close(got, want, 1e-9)) {
      if (!bad)
        snprintf(first, sizeof first,
                 "instance %d (%d nodes, %d edges, K %d, N %d, M %.17g%s%s%s): DP %.17g, "
                 "exhaustive %.17g; %s",
                 it, s->n, s->n_edges, p.devices, p.microbatches, p.memory, p.no_dp ? ", no DP" : "",
                 p.no_tp ? ", no TP" : "", p.no_recompute ? ", no recompute" : "", got, want, msg);
      bad++;
    }
    free(s);
  }
  free(memo);
  cr_log_info(
      "bruteforce exact: %d instances, %d feasible, %d infeasible, %lld complete plans reached; %d disagree",
      N_INSTANCES, feasible, infeasible, leaves, bad);
  printf("bruteforce exact: %d instances, %d feasible, %d infeasible, %lld complete plans reached; %d "
         "disagree\n",
         N_INSTANCES, feasible, infeasible, leaves, bad);
  cr_assert_eq(bad, 0, "%d of %d instances disagree; first: %s", bad, N_INSTANCES, first);
  cr_assert_geq(feasible, N_INSTANCES / 2, "too few feasible instances (%d)", feasible);
  cr_assert_geq(infeasible, N_INSTANCES / 20, "too few infeasible instances (%d)", infeasible);
}

Test(bruteforce, greedy_mode_matches_search_with_greedy_stages, .timeout = 600) {
  double *memo = malloc(sizeof(double) * memo_at(256, 0, 0, 0));
  int feasible = 0, infeasible = 0, bad = 0, explained = 0, above_exact = 0, non_monotone = 0;
  char first[4096] = "", first_explained[4096] = "";
  for (int it = 0; it < N_INSTANCES; it++) {
    pp_problem p;
    tu_spec *s = make_instance(it, &p);
    p.knapsack = PP_KNAPSACK_GREEDY;
    double want = brute(s, &p, 1, NULL, memo);
    double exact = brute(s, &p, 0, NULL, memo);
    int ok;
    char msg[2600];
    double got = bf_run_dp(s, &p, 0, &ok, msg, sizeof msg);
    if (isinf(want))
      infeasible++;
    else
      feasible++;
    char head[512];
    snprintf(head, sizeof head,
             "instance %d (%d nodes, %d edges, K %d, N %d, M %.17g%s%s%s): DP %.17g, "
             "exhaustive with greedy stages %.17g, exact optimum %.17g",
             it, s->n, s->n_edges, p.devices, p.microbatches, p.memory, p.no_dp ? ", no DP" : "",
             p.no_tp ? ", no TP" : "", p.no_recompute ? ", no recompute" : "", got, want, exact);
    if (!ok || got < exact * (1 - 1e-9) || isinf(got) != isinf(exact)) {
      /* a checked plan can never beat the exact optimum, and the greedy is
       * feasible exactly when some choice fits */
      if (!bad) snprintf(first, sizeof first, "%s; %s", head, ok ? "DP below the exact optimum" : msg);
      bad++;
    } else if (!tu_close(got, want, 1e-9)) {
      char why[512];
      if (greedy_not_monotone(s, &p, memo, why, sizeof why)) {
        if (!explained) snprintf(first_explained, sizeof first_explained, "%s; %s", head, why);
        explained++;
      } else {
        if (!bad) snprintf(first, sizeof first, "%s; every stage's greedy cost is non-decreasing in y", head);
        bad++;
      }
    }
    if (!isinf(got) && got > exact * (1 + 1e-9)) above_exact++;
    char why[512];
    non_monotone += greedy_not_monotone(s, &p, memo, why, sizeof why);
    free(s);
  }
  free(memo);
  cr_log_info(
      "bruteforce greedy: %d instances, %d feasible, %d infeasible; DP above the exact optimum on %d; "
      "%d differ from the search with greedy stages where the greedy cost falls as y grows",
      N_INSTANCES, feasible, infeasible, above_exact, explained);
  printf("bruteforce greedy: %d instances, %d feasible, %d infeasible; DP above exact on %d; a greedy stage "
         "cost "
         "falling as y grows in %d; %d explained differences, %d unexplained\n",
         N_INSTANCES, feasible, infeasible, above_exact, non_monotone, explained, bad);
  if (explained) printf("first explained difference: %s\n", first_explained);
  cr_assert_eq(bad, 0, "%d of %d instances disagree; first: %s", bad, N_INSTANCES, first);
}

/* Every ZeRO stage, with and without a two-level network (G = 2 or 4,
 * intra-node bandwidth 2-10x B), on the random instances and in both
 * knapsack modes: exact mode equals the exhaustive search; greedy mode's plan
 * passes the checker, never beats the exact optimum, and equals the search
 * with greedy stages unless a greedy stage cost falls as y grows. */
Test(bruteforce, zero_and_two_level_network, .timeout = 900) {
  double *memo = malloc(sizeof(double) * memo_at(256, 0, 0, 0));
  int runs = 0, feasible = 0, bad = 0, explained = 0, sharded_wins = 0;
  char first[4096] = "";
  for (int it = 0; it < 300; it++) {
    pp_problem p0;
    tu_spec *s = make_instance(it, &p0);
    tu_rng r = {0xfeed0000ull + (uint64_t)it * 104729};
    tu_add_parts(s, &r);
    for (int net = 0; net < 3; net++)
      for (int zero = 0; zero <= 3; zero++) {
        pp_problem p = p0;
        p.zero = zero;
        p.devices_per_node = net == 0 ? 0 : 2 * net;
        p.intra_bandwidth = net == 0 ? 0 : p.bandwidth * (2 + tu_int(&r, 0, 8));
        for (int mode = 0; mode < 2; mode++) {
          p.knapsack = mode ? PP_KNAPSACK_GREEDY : PP_KNAPSACK_EXACT;
          const double exact = brute(s, &p, 0, NULL, memo);
          const double want = mode ? brute(s, &p, 1, NULL, memo) : exact;
          int ok;
          char msg[2600];
          const double got = bf_run_dp(s, &p, 0, &ok, msg, sizeof msg);
          runs++;
          feasible += !isinf(got);
          if (zero > 0 && mode == 0 && p0.no_dp == 0) {
            pp_problem q = p;
            q.zero = 0;
            if (exact < brute(s, &q, 0, NULL, memo) * (1 - 1e-9)) sharded_wins++;
          }
          int fail = !ok || got < exact * (1 - 1e-9) || isinf(got) != isinf(exact);
          char why[512] = "";
          if (!fail && !tu_close(got, want, 1e-9)) {
            if (mode && greedy_not_monotone(s, &p, memo, why, sizeof why))
              explained++;
            else
              fail = 1;
          }
          if (fail && !bad++)
            snprintf(first, sizeof first,
                     "instance %d (%d nodes, K %d, N %d, M %.17g, zero %d, G %d, Bi %.17g, %s): DP %.17g, "
                     "search %.17g, exact %.17g; %s",
                     it, s->n, p.devices, p.microbatches, p.memory, zero, p.devices_per_node,
                     p.intra_bandwidth, mode ? "greedy" : "exact", got, want, exact, msg);
        }
      }
    free(s);
  }
  free(memo);
  printf(
      "bruteforce zero/network: %d runs, %d feasible, %d where sharding beats zero 0 (exact), %d explained "
      "greedy differences, %d disagree\n",
      runs, feasible, sharded_wins, explained, bad);
  cr_assert_eq(bad, 0, "%d of %d runs disagree; first: %s", bad, runs, first);
  cr_assert_geq(sharded_wins, 20, "sharding changed too few optima (%d)", sharded_wins);
}
