/*
 * equi.h - the "equi" baseline: the PipeDream-2BW-like planner the Piper
 * paper compares against (Tarnawski et al., NeurIPS 2021, Sec. 5 and Fig. 1;
 * PipeDream-2BW: Narayanan et al., ICML 2021).
 *
 * With transformer layers (nodes named "ParallelTransformerLayer"): the
 * transformer layers, in topological order, are split into stages of equal
 * size (the last stages one layer larger when it does not divide); the nodes
 * before them join the first stage and the nodes after them the last stage,
 * or, as a second family, each of the two groups forms a stage of its own.
 * Without transformer layers every node, in topological order, is split the
 * same way.  Every stage gets the same d (dividing N) and the same t, and
 * every layer uses its "vanilla" TMPC or every layer its "activation
 * recomp" one.  The best candidate (smallest TPS, the first one on ties, in
 * the order of the public reference code's runPipeDream2BWPlanner and
 * runPipeDream2BWPlannerNonTransformer) is the plan.
 *
 * The ablation switches of pp_problem restrict the search: no_dp gives d = 1,
 * no_tp t = 1, no_recompute only the vanilla TMPCs.
 *
 * Pure computation (no MPI, no I/O); not collective.
 */
#ifndef PIPER_EQUI_H
#define PIPER_EQUI_H

#include "piper/error.h"
#include "piper/graph.h"
#include "piper/plan.h"
#include "piper/problem.h"

/* The TMPC ids the baseline uses (the reference's naming). */
#define PP_EQUI_VANILLA_ID "vanilla"

/* The node name that marks a transformer layer in the paper's inputs. */
#define PP_EQUI_TRANSFORMER_NAME "ParallelTransformerLayer"

/* Runs the baseline for the budget p->devices.  On success returns PP_OK and
 * *out is a new plan (caller frees with pp_plan_free): feasible with its
 * stages, d, t and TMPCs set and tps the baseline's time per sample, or
 * feasible = 0 with no stages when no candidate fits in memory.  The load,
 * memory and y of the stages are left for the checker to fill.  If curve is
 * not NULL it must hold p->devices doubles: curve[k - 1] is set to the
 * baseline's TPS for a budget of k devices (+INFINITY if infeasible), for
 * every k = 1..p->devices, from the same search.  Returns PP_ERR_INPUT (and
 * *out = NULL) when the graph has transformer layers but some other node is
 * connected to none of them through the others (the reference would not
 * terminate). */
pp_status pp_equi_solve(const pp_graph *g, const pp_problem *p, pp_plan **out, double *curve, pp_error *err);

#endif /* PIPER_EQUI_H */
