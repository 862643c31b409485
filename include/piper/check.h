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
 * bubble = batch / (N max_i l_i) - 1, (p - 1) / (v m) for equal stages
 * without sync.  Memory per device: sum over its stages of A y + B with
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
