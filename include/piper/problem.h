/*
 * problem.h - the parameters of one planning problem: the budgets and the
 * model options that apply on top of a graph.
 */
#ifndef PIPER_PROBLEM_H
#define PIPER_PROBLEM_H

#include "piper/graph.h"

typedef enum pp_knapsack_mode {
  PP_KNAPSACK_GREEDY = 0, /* the reference's greedy heuristic (default) */
  PP_KNAPSACK_EXACT = 1   /* exact branch and bound (exponential worst case) */
} pp_knapsack_mode;

/* The pipeline schedule, which sets the objective and the activations kept
 * in flight (README, "Schedules"). */
typedef enum pp_schedule {
  PP_SCHEDULE_2BW = 0, /* PipeDream-2BW, no flush: time per sample = slowest stage (Piper's model, default) */
  PP_SCHEDULE_1F1B = 1, /* synchronous 1F1B with a flush per batch (PipeDream-Flush / Megatron-LM) */
  PP_SCHEDULE_GPIPE =
      2 /* synchronous, all forwards then all backwards (GPipe): all m microbatches in flight */
} pp_schedule;

typedef enum pp_planner {
  PP_PLANNER_PIPER = 0, /* the Piper DP (default) */
  PP_PLANNER_EQUI = 1   /* the PipeDream-2BW-like baseline (piper/equi.h) */
} pp_planner;

typedef struct pp_problem {
  int devices;      /* K: at most this many devices */
  double memory;    /* M: bytes per device */
  int microbatches; /* N: microbatches per batch */
  double bandwidth; /* B: bytes per second */
  int no_dp;        /* only d = 1 */
  int no_tp;        /* only t = 1 */
  int no_recompute; /* TMPCs with id "activation recomp" are unusable */
  pp_knapsack_mode knapsack;
  pp_schedule schedule; /* default (0) PP_SCHEDULE_2BW */
  int uniform;          /* every stage has the same (d, t) (framework-shaped plans) */
  int virtual_stages;   /* v model chunks per device (interleaved 1F1B, uniform only); 0 or 1 = none */
  pp_planner planner;
  /* ZeRO stage (Rajbhandari et al. 2020): 0 = every replica holds all
   * weights, gradients and optimizer state (the Piper model); 1, 2, 3 shard
   * the optimizer state, also the gradients, also the weights over d. */
  int zero;
  /* Two-level network: devices per node G (0 = one level: every transfer
   * at bandwidth) and the per-device bandwidth inside a node. */
  int devices_per_node;
  double intra_bandwidth;
} pp_problem;

/* Largest device count we accept: tables grow with K. */
#define PP_MAX_DEVICES      1000000
#define PP_MAX_MICROBATCHES 100000000

/* The bound on the sum of data-parallel degrees: S = min(N, K). */
static inline int pp_problem_max_s(const pp_problem *p) {
  return p->microbatches < p->devices ? p->microbatches : p->devices;
}

/* The allowed-degree rule, the one copy of it (stage evaluation, the work
 * split, the checker and the infeasibility report all call these).  A
 * tensor-parallel degree t (of a TMPC list in the graph) is allowed if
 * 1 <= t <= K, and only t = 1 with no_tp.  A data-parallel degree d is
 * allowed if 1 <= d <= S, d divides N (every replica gets whole
 * microbatches), and only d = 1 with no_dp.  Pure; return 1 or 0. */
static inline int pp_problem_allows_t(const pp_problem *p, int t) {
  return t >= 1 && t <= p->devices && (!p->no_tp || t == 1);
}
static inline int pp_problem_allows_d(const pp_problem *p, int d) {
  return d >= 1 && d <= pp_problem_max_s(p) && p->microbatches % d == 0 && (!p->no_dp || d == 1);
}

/* v, the model chunks per device: 1 unless virtual stages are set. */
static inline int pp_problem_chunks(const pp_problem *p) {
  return p->virtual_stages > 1 ? p->virtual_stages : 1;
}

/* The name of a schedule ("2bw", "1f1b", "gpipe"); static string. */
static inline const char *pp_schedule_name(pp_schedule s) {
  return s == PP_SCHEDULE_1F1B ? "1f1b" : s == PP_SCHEDULE_GPIPE ? "gpipe" : "2bw";
}

/* Sets *out to the schedule named name ("2bw", "1f1b", "gpipe"); returns 0,
 * or -1 (and leaves *out) for any other name. */
static inline int pp_schedule_from_name(const char *name, pp_schedule *out) {
  static const pp_schedule all[] = {PP_SCHEDULE_2BW, PP_SCHEDULE_1F1B, PP_SCHEDULE_GPIPE};
  for (int i = 0; i < 3; i++) {
    const char *a = pp_schedule_name(all[i]), *b = name;
    while (*a && *a == *b) a++, b++;
    if (*a == 0 && *b == 0) {
      *out = all[i];
      return 0;
    }
  }
  return -1;
}

#endif /* PIPER_PROBLEM_H */
