/*
 * check.h - the independent plan checker.
 *
 * Re-evaluates a plan from the graph alone, with code separate from the DP's
 * cost path: every node in exactly one stage, stages in an order that no edge
 * goes against (contiguity), d divides N, degrees allowed by the options,
 * devices within K, memory within M for the schedule's microbatches in
 * flight, and the time per sample under the problem's schedule.  Fills each
 * stage's load, memory, y, mb_time, sync_time and device_group and the
 * plan's tps, batch_time, bubble, devices_used and sum_d.
 *
 * Schedules (README, "Schedules"): with l_i the stage's load per sample,
 * t_i = d_i (l_i - sync_i / N) its time for one microbatch on one replica,
 * sync_i its gradient synchronisation per batch and m_i = N / d_i:
 *   2bw:        tps = max_i l_i (Piper's objective), batch = N tps
 *   1f1b/gpipe: batch = sum_i t_i + max_i [(m_i - 1) t_i + sync_i], tps = batch / N
 *   v virtual stages (uniform, 1f1b): the n = p v stages are chunks, stage c
 *     on device group c mod p; batch = (1/v) sum_c t_c + max_j [(m - 1/v)
 *     D_j + sync_j], D_j and sync_j summed over group j's chunks.
 * bubble = batch / (N max_j L_j) - 1 with L_j the load per sample of device
 * group j (its stage, or the sum of its chunks), (p - 1) / (v m) for equal
 * stages without sync.  Memory per device: sum over its stages of A y + B with
 * y = ceil(suffix sum of d / d) (2bw, 1f1b), m (gpipe) or the interleaved
 * warm-up count (check.c, in_flight).
 */
#ifndef PIPER_CHECK_H
#define PIPER_CHECK_H

#include "piper/error.h"
#include "piper/graph.h"
#include "piper/plan.h"
#include "piper/problem.h"

/* Evaluates plan under p (schedule, virtual stages) without judging the
 * budgets: fills the fields listed above (memory per device, so with
 * virtual stages the sum over the device group).  Does not look at d | N,
 * degree options, uniformity, K or M: the caller compares the fields with
 * p (pp_check_plan does).  Returns PP_OK, or PP_ERR_INPUT naming the first
 * structural problem (a node in no or two stages, an edge going backwards,
 * a missing or forbidden TMPC, degrees < 1, virtual stages with another
 * schedule than 1f1b or a stage count not divisible by v); then the fields
 * are partly filled.  Pure; the plan stays owned by the caller. */
pp_status pp_check_evaluate(const pp_graph *g, const pp_problem *p, pp_plan *plan, pp_error *err);

/* The kinds of rule a plan can break that leave its cost defined or at
 * least describable (pp_check_plan_report). */
typedef enum pp_violation_kind {
  PP_VIOLATION_MEMORY = 0, /* a device of a stage needs more than M bytes (amount: bytes over) */
  PP_VIOLATION_DEVICES,    /* the plan uses more than K devices (amount: devices over) */
  PP_VIOLATION_DIVIDES,    /* a stage's d does not divide N (amount: d) */
  PP_VIOLATION_DEGREE,     /* a degree the options or the input do not offer (amount: the degree) */
  PP_VIOLATION_UNIFORM,    /* (d, t) differs from stage 0's under uniform / virtual stages */
  PP_VIOLATION_RECOMPUTE   /* recomputation under no_recompute */
} pp_violation_kind;

typedef struct pp_violation {
  pp_violation_kind kind;
  int stage;      /* 0-based stage index, -1 for the whole plan */
  long long node; /* id of the node concerned, -1 for none */
  double amount;  /* see pp_violation_kind */
  char what[240]; /* the checker's message (stages 0-based) */
} pp_violation;

#define PP_CHECK_MAX_VIOLATIONS 32

/* Every violation found; count may exceed the PP_CHECK_MAX_VIOLATIONS kept. */
typedef struct pp_check_report {
  int count;
  pp_violation v[PP_CHECK_MAX_VIOLATIONS];
} pp_check_report;

/* Judges a plan against every rule and lists each violation instead of
 * stopping at the first (what `piper eval` reports; pp_check_plan is this
 * plus "the first violation is an error").  Degrees first: a d that is not
 * allowed (d | N, d <= min(N, K), no_dp), a t that is not allowed (no_tp,
 * t <= K) or that some node of the stage has no TMPC list for, and
 * uniformity; then, if every t is usable, pp_check_evaluate fills the plan
 * and devices <= K and memory <= M per stage are judged.  If a t is not
 * usable the plan is not evaluated: tps, batch_time and the stage loads are
 * NaN and devices_used / sum_d are still counted.  plan->feasible is 1
 * exactly when r->count is 0.  Returns PP_OK, or the error of
 * pp_check_evaluate (PP_ERR_INPUT) for a structurally broken plan, with r
 * incomplete.  Pure. */
pp_status pp_check_plan_report(const pp_graph *g, const pp_problem *p, pp_plan *plan, pp_check_report *r,
                               pp_error *err);

/* Returns PP_OK if the plan is valid; PP_ERR_INTERNAL with a message naming
 * the first violation otherwise (budgets: d | N, the degree options, the same
 * (d, t) everywhere if p->uniform or virtual stages, devices <= K, memory).
 * Sets plan->feasible.  Memory may exceed M by a relative 1e-9
 * (the knapsack tracks memory by subtraction). */
pp_status pp_check_plan(const pp_graph *g, const pp_problem *p, pp_plan *plan, pp_error *err);

/* Checks the plan (pp_check_plan) and that its TPS equals optimum to a
 * relative 1e-9.  Returns PP_ERR_INTERNAL, saying what disagrees, if not. */
pp_status pp_check_plan_optimum(const pp_graph *g, const pp_problem *p, pp_plan *plan, double optimum,
                                pp_error *err);

#endif /* PIPER_CHECK_H */
