/*
 * test_bruteforce_sched.c - the DP under the synchronous schedules and
 * uniform plans against an exhaustive search over every plan of small random
 * graphs.
 *
 * The search is written from the documented objective (README, "Schedules")
 * and reads only the instance description: every ordered partition of the
 * nodes into stages that no edge goes against, every (d, t) per stage (one
 * (d, t) for all stages with --uniform) with d | N, sum of d <= N and
 * sum of d*t <= K, and per stage the least-load TMPC choice by trying every
 * combination (the exact knapsack) within memory A*y + B, y = ceil(suffix sum
 * of d / d) (2bw, 1f1b) or N/d (gpipe).  A complete plan scores
 *   2bw:        max_i l_i
 *   1f1b/gpipe: [sum_i t_i + max_i ((N/d_i - 1) t_i + sync_i)] / N,
 * t_i = d_i l_i - sync_i d_i / N, sync_i = N 4(d_i-1)P_i/(d_i N)/B.  A node's
 * TMPCs for one t share their parameter bytes (the documented condition for
 * exactness).  The DP's optimum must equal the search's (same feasibility),
 * its plan must pass pp_check_plan with that TPS, and the tables computed in
 * two k ranges and joined (as the distributed driver does) must give the
 * same optimum bit for bit.
 */
#define _POSIX_C_SOURCE 200809L
#include "bruteforce.h"

#define BF_MAX_N 7
#define BF_MAX_D 8
#define BF_MAX_Y 13
#define N_INST   1000

typedef struct bf {
  const tu_spec *s;
  pp_problem p;
  int n;
  int succ[BF_MAX_N];
  int nt, tv[2], nd, dv[BF_MAX_D];
  double *memo;       /* [128][2][BF_MAX_D][BF_MAX_Y + 1] load, NaN = unknown */
  double *pmem;       /* same layout: the stage's parameter bytes */
  int fix_ti, fix_di; /* uniform: the one (t, d) in use, else -1 */
  int v, groups;      /* virtual stages: v chunks on each of the groups */
  double best;
} bf;

static size_t memo_at(int mask, int ti, int di, int y) {
  return (((size_t)mask * 2 + (size_t)ti) * BF_MAX_D + (size_t)di) * (BF_MAX_Y + 1) + (size_t)y;
}

/* Least load of stage mask at (t, d, y) over every TMPC combination within
 * memory; +INF if none.  *param = the stage's parameter bytes. */
static double stage_cost(bf *b, int mask, int ti, int di, int y, double *param) {
  const size_t at = memo_at(mask, ti, di, y);
  if (isnan(b->memo[at])) {
    double c[BF_MAX_N][3], w[BF_MAX_N][3];
    int cnt[BF_MAX_N];
    const int m = bf_stage_options(b->s, &b->p, mask, b->tv[ti], b->dv[di], y, c, w, cnt, &b->pmem[at]);
    b->memo[at] = m < 0 ? INFINITY : bf_exact_knapsack(m, cnt, c, w, b->p.memory);
  }
  *param = b->pmem[at];
  return b->memo[at];
}

/* The score of a partial plan (the stages after the ones still to choose):
 * sum of t, max of (m - 1) t + sync, max load.  Adding stages never lowers
 * it, so it bounds the search. */
static double score(const bf *b, double sum_t, double worst, double max_l) {
  return b->p.schedule == PP_SCHEDULE_2BW ? max_l : (sum_t + worst) / b->s->microbatches;
}

static void search(bf *b, int rem, int after, int used, double sum_t, double worst, double max_l) {
  if (rem == 0) {
    double f = score(b, sum_t, worst, max_l);
    if (f < b->best) b->best = f;
    return;
  }
  const double N = b->s->microbatches, B = b->p.bandwidth;
  for (int L = rem; L; L = (L - 1) & rem) {
    int closed = 1;
    for (int v = 0; v < b->n && closed; v++)
      if ((L >> v & 1) && (b->succ[v] & rem & ~L)) closed = 0;
    if (!closed) continue;
    for (int ti = 0; ti < b->nt; ti++)
      for (int di = 0; di < b->nd; di++) {
        if (b->fix_ti >= 0 && (ti != b->fix_ti || di != b->fix_di)) continue;
        const int d = b->dv[di], t = b->tv[ti];
        if (used + d * t > b->p.devices || after + d > b->p.microbatches) continue;
        const int y = b->p.schedule == PP_SCHEDULE_GPIPE ? b->s->microbatches / d : (after + d + d - 1) / d;
        double P;
        const double l = stage_cost(b, L, ti, di, y, &P);
        if (l == INFINITY) continue;
        const double sync = b->p.zero || b->p.devices_per_node
                                ? tu_sync_seconds(&b->p, P, d, t)
                                : N * (4 * (d - 1) * P / d / N) / B; /* per batch */
        const double tm = d * (l - sync / N);
        const double x = (N / d - 1) * tm + sync;
        const double s2 = sum_t + tm, w2 = x > worst ? x : worst, l2 = l > max_l ? l : max_l;
        if (score(b, s2, w2, l2) >= b->best * (1 + 1e-12)) continue;
        search(b, rem & ~L, after + d, used + d * t, s2, w2, l2);
      }
  }
}

/* Virtual stages: the chunk at position q from the end (chunk index c =
 * groups v - 1 - q, on group c mod groups) and all in front of it, from
 * the nodes rem, with the score parts of the chunks behind it. */
static void vsearch(bf *b, int rem, int q, double sum_t, double worst) {
  const int n_chunks = b->groups * b->v;
  if (q == n_chunks || rem == 0) {
    if (q == n_chunks && rem == 0) {
      const double f = (sum_t / b->v + worst) / b->s->microbatches;
      if (f < b->best) b->best = f;
    }
    return;
  }
  if (__builtin_popcount((unsigned)rem) < n_chunks - q) return;
  const double N = b->s->microbatches, B = b->p.bandwidth;
  const int d = b->dv[b->fix_di], t = b->tv[b->fix_ti], m = b->s->microbatches / d;
  const int c = n_chunks - 1 - q, j = c % b->groups;
  int y = m; /* gpipe: every microbatch; 1f1b: Megatron-LM's warm-up count + 1, per chunk */
  if (b->p.schedule == PP_SCHEDULE_1F1B) {
    int w = 2 * (b->groups - j - 1) + (b->v - 1) * b->groups + 1;
    if (w > b->v * m) w = b->v * m;
    y = (w + b->v - 1) / b->v;
  }
  for (int L = rem; L; L = (L - 1) & rem) {
    int closed = 1;
    for (int x = 0; x < b->n && closed; x++)
      if ((L >> x & 1) && (b->succ[x] & rem & ~L)) closed = 0;
    if (!closed) continue;
    double P;
    const double l = stage_cost(b, L, b->fix_ti, b->fix_di, y, &P);
    if (l == INFINITY) continue;
    const double sync = b->p.zero || b->p.devices_per_node ? tu_sync_seconds(&b->p, P, d, t)
                                                           : N * (4 * (d - 1) * P / d / N) / B;
    const double tm = d * (l - sync / N);
    const double x = ((double)m * b->v - 1) * tm + b->v * sync;
    const double s2 = sum_t + tm, w2 = x > worst ? x : worst;
    if ((s2 / b->v + w2) / N >= b->best * (1 + 1e-12)) continue;
    vsearch(b, rem & ~L, q + 1, s2, w2);
  }
}

static double brute(const tu_spec *s, const pp_problem *p, double *memo, double *pmem) {
  bf b;
  memset(&b, 0, sizeof b);
  b.s = s;
  b.p = *p;
  b.n = s->n;
  b.memo = memo;
  b.pmem = pmem;
  for (size_t i = 0; i < memo_at(128, 0, 0, 0); i++) memo[i] = NAN;
  for (int e = 0; e < s->n_edges; e++) b.succ[s->src[e]] |= 1 << s->dst[e];
  b.tv[b.nt++] = 1;
  if (!p->no_tp) b.tv[b.nt++] = 2;
  for (int d = 1; d <= p->devices && d <= s->microbatches; d++)
    if (s->microbatches % d == 0 && (d == 1 || !p->no_dp)) b.dv[b.nd++] = d;
  b.best = INFINITY;
  b.v = pp_problem_chunks(p);
  if (b.v > 1) { /* every chunk within M / v (README, "Virtual stages") */
    b.p.memory = p->memory / b.v;
    for (b.fix_ti = 0; b.fix_ti < b.nt; b.fix_ti++)
      for (b.fix_di = 0; b.fix_di < b.nd; b.fix_di++) {
        const int dt = b.dv[b.fix_di] * b.tv[b.fix_ti];
        for (b.groups = 1; b.groups * dt <= p->devices && b.groups * b.dv[b.fix_di] <= s->microbatches &&
                           b.groups * b.v <= s->n;
             b.groups++) {
          for (size_t i = 0; i < memo_at(128, 0, 0, 0); i++) memo[i] = NAN; /* y depends on the groups */
          vsearch(&b, (1 << s->n) - 1, 0, 0, 0);
        }
      }
  } else if (!p->uniform) {
    b.fix_ti = b.fix_di = -1;
    search(&b, (1 << s->n) - 1, 0, 0, 0, 0, 0);
  } else {
    for (b.fix_ti = 0; b.fix_ti < b.nt; b.fix_ti++)
      for (b.fix_di = 0; b.fix_di < b.nd; b.fix_di++) search(&b, (1 << s->n) - 1, 0, 0, 0, 0, 0);
  }
  return b.best;
}

/* A random instance; a node's TMPCs for one t share their parameter bytes. */
static tu_spec *make_instance(int it, pp_problem *p) {
  tu_rng r = {0xabcd0000ull + (uint64_t)it * 104729};
  int n = tu_int(&r, 2, BF_MAX_N);
  tu_spec *s = tu_spec_new(n);
  tu_random_edges(s, &r, n <= 4 ? 0.3 + 0.5 * tu_unit(&r) : 0.5 + 0.4 * tu_unit(&r));
  double need, sum_max;
  tu_random_tmpcs(s, &r, 0.4, &need, &sum_max);
  bf_finish_instance(s, &r, need, sum_max, n <= 5 ? 10 : 7, p);
  p->knapsack = PP_KNAPSACK_EXACT;
  return s;
}

static void run_family_with_v(pp_schedule sched, int uniform, int zero, int gpn, int v) {
  double *memo = malloc(sizeof(double) * memo_at(128, 0, 0, 0));
  double *pmem = malloc(sizeof(double) * memo_at(128, 0, 0, 0));
  int feasible = 0, infeasible = 0, bad = 0;
  char first[4096] = "";
  for (int it = 0; it < N_INST; it++) {
    pp_problem p;
    tu_spec *s = make_instance(it, &p);
    p.schedule = sched;
    p.uniform = uniform;
    p.virtual_stages = v;
    if (v > 1) p.memory *= v; /* each chunk gets about the memory of a stage of the other families */
    if (zero || gpn) {
      tu_rng r = {0xabcd0000ull + (uint64_t)it * 31337};
      tu_add_parts(s, &r);
      p.zero = zero;
      p.devices_per_node = gpn;
      p.intra_bandwidth = gpn ? p.bandwidth * (2 + tu_int(&r, 0, 8)) : 0;
    }
    double want = brute(s, &p, memo, pmem);
    int ok, ok2;
    char msg[2600], msg2[2600];
    double got = bf_run_dp(s, &p, 0, &ok, msg, sizeof msg);
    double got2 = bf_run_dp(s, &p, BF_SPLIT, &ok2, msg2, sizeof msg2);
    /* the Pareto rows' screens, which the size rule keeps off for DAGs this
     * small, forced on, serially, split and split per budget (every k0 > 0
     * starts a part); and the budget-ordered kernel split per budget: the
     * same optimum */
    if (!uniform && v == 1) {
      static const int modes[] = {BF_SCREENS, BF_SCREENS | BF_SPLIT, BF_SCREENS | BF_SPLIT | BF_SPLIT_EACH,
                                  BF_SPLIT | BF_SPLIT_EACH};
      for (int mi = 0; mi < 4 && ok && ok2; mi++) {
        const int mode = modes[mi];
        int ok3;
        char msg3[2600];
        const double got3 = bf_run_dp(s, &p, mode, &ok3, msg3, sizeof msg3);
        if (!ok3 || !(got3 == got || (isnan(got) && isnan(got3)))) {
          ok2 = 0;
          snprintf(msg2, sizeof msg2, "%s (%s): %.17g; %s",
                   mode & BF_SCREENS ? "with the screens forced on" : "screens as by size",
                   mode & BF_SPLIT_EACH ? "split per budget"
                   : mode & BF_SPLIT    ? "split"
                                        : "serial",
                   got3, msg3);
        }
      }
    }
    if (isinf(want))
      infeasible++;
    else
      feasible++;
    if (!ok || !ok2 || !tu_close(got, want, 1e-9) || !(got2 == got || (isnan(got) && isnan(got2)))) {
      if (!bad)
        snprintf(first, sizeof first,
                 "instance %d (%d nodes, K %d, N %d, M %.17g): DP %.17g, split %.17g, "
                 "exhaustive %.17g; %s %s",
                 it, s->n, p.devices, p.microbatches, p.memory, got, got2, want, msg, msg2);
      bad++;
    }
    free(s);
  }
  free(memo);
  free(pmem);
  printf("bruteforce %s%s (zero %d, devices per node %d, virtual stages %d): %d instances, %d feasible, %d "
         "infeasible; %d disagree\n",
         pp_schedule_name(sched), uniform ? " uniform" : "", zero, gpn, v, N_INST, feasible, infeasible, bad);
  cr_assert_eq(bad, 0, "%s%s: %d of %d instances disagree; first: %s", pp_schedule_name(sched),
               uniform ? " uniform" : "", bad, N_INST, first);
  cr_assert_geq(feasible, N_INST / 3, "too few feasible instances (%d)", feasible);
  cr_assert_geq(infeasible, N_INST / 50, "too few infeasible instances (%d)", infeasible);
}

static void run_family_with(pp_schedule sched, int uniform, int zero, int gpn) {
  run_family_with_v(sched, uniform, zero, gpn, 1);
}

static void run_family(pp_schedule sched, int uniform) { run_family_with(sched, uniform, 0, 0); }

Test(bruteforce_sched, one_f_one_b, .timeout = 600) { run_family(PP_SCHEDULE_1F1B, 0); }
Test(bruteforce_sched, gpipe, .timeout = 600) { run_family(PP_SCHEDULE_GPIPE, 0); }
Test(bruteforce_sched, uniform_2bw, .timeout = 600) { run_family(PP_SCHEDULE_2BW, 1); }
Test(bruteforce_sched, uniform_1f1b, .timeout = 600) { run_family(PP_SCHEDULE_1F1B, 1); }
Test(bruteforce_sched, uniform_gpipe, .timeout = 600) { run_family(PP_SCHEDULE_GPIPE, 1); }

/* ZeRO stages with and without a two-level network under the synchronous
 * schedules and uniform plans. */
Test(bruteforce_sched, one_f_one_b_zero1_two_level, .timeout = 600) {
  run_family_with(PP_SCHEDULE_1F1B, 0, 1, 2);
}
Test(bruteforce_sched, one_f_one_b_zero3, .timeout = 600) { run_family_with(PP_SCHEDULE_1F1B, 0, 3, 0); }
Test(bruteforce_sched, gpipe_zero2_two_level, .timeout = 600) { run_family_with(PP_SCHEDULE_GPIPE, 0, 2, 4); }
Test(bruteforce_sched, uniform_2bw_zero3_two_level, .timeout = 600) {
  run_family_with(PP_SCHEDULE_2BW, 1, 3, 2);
}

/* Virtual stages (v chunks per device group, uniform) under both
 * synchronous schedules, and with ZeRO on a two-level network. */
Test(bruteforce_sched, virtual2_1f1b, .timeout = 600) { run_family_with_v(PP_SCHEDULE_1F1B, 1, 0, 0, 2); }
Test(bruteforce_sched, virtual3_1f1b, .timeout = 600) { run_family_with_v(PP_SCHEDULE_1F1B, 1, 0, 0, 3); }
Test(bruteforce_sched, virtual2_gpipe, .timeout = 600) { run_family_with_v(PP_SCHEDULE_GPIPE, 1, 0, 0, 2); }
Test(bruteforce_sched, virtual3_gpipe, .timeout = 600) { run_family_with_v(PP_SCHEDULE_GPIPE, 1, 0, 0, 3); }
Test(bruteforce_sched, virtual2_1f1b_zero3_two_level, .timeout = 600) {
  run_family_with_v(PP_SCHEDULE_1F1B, 1, 3, 2, 2);
}
