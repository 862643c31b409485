/*
 * check.h - the independent plan checker.
 *
 * Re-evaluates a plan from the graph alone, with code separate from the DP's
 * cost path: every node in exactly one stage, stages in an order that no edge
 * goes against (contiguity), d divides N, degrees allowed by the options,
 * devices within K, memory within M for y = ceil(suffix sum of d / d), and
 * the TPS.  Fills each stage's load, memory and y and the plan's tps,
 * devices_used and sum_d.
 */
#ifndef PIPER_CHECK_H
#define PIPER_CHECK_H

#include "piper/error.h"
#include "piper/graph.h"
#include "piper/plan.h"
#include "piper/problem.h"

/* Returns PP_OK if the plan is valid; PP_ERR_INTERNAL with a message naming
 * the first violation otherwise.  Memory may exceed M by a relative 1e-9
 * (the knapsack tracks memory by subtraction). */
pp_status pp_check_plan(const pp_graph *g, const pp_problem *p, pp_plan *plan, pp_error *err);

/* Checks the plan (pp_check_plan) and that its TPS equals optimum to a
 * relative 1e-9.  Returns PP_ERR_INTERNAL, saying what disagrees, if not. */
pp_status pp_check_plan_optimum(const pp_graph *g, const pp_problem *p, pp_plan *plan, double optimum,
                                pp_error *err);

#endif /* PIPER_CHECK_H */
