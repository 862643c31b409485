/*
 * plan_equi.h - `piper plan --planner equi`: the baseline's run, check,
 * archive and report (private to the cli layer).
 */
#ifndef PIPER_CLI_PLAN_EQUI_H
#define PIPER_CLI_PLAN_EQUI_H

#include <stdio.h>

#include "cli.h"
#include "piper/dist.h"
#include "piper/graph.h"
#include "piper/plan.h"
#include "piper/problem.h"

/* Runs the equi baseline (piper/equi.h) on every rank (it is cheap and
 * deterministic), verifies its plan with the independent checker, writes
 * the archive to `archive` unless it is empty (collective: /downsets empty,
 * no /dp, /curve from the same search) and prints the report on rank 0.
 * t0 is the start time of the command.  Returns PP_OK, PP_ERR_INFEASIBLE
 * when no candidate fits, or the failure with err set.  Collective. */
/* The part shared with `piper sweep --planner equi`: runs the baseline on
 * every rank, checks its plan, and writes the archive to `archive` unless it
 * is empty (write time in *write_seconds).  Returns PP_OK and the plan in
 * *out (caller frees; feasible = 0 when no candidate fits), or the agreed
 * failure with *out NULL.  Collective. */
pp_status pp_plan_equi_archive(pp_dist *d, const pp_graph *g, const pp_problem *p, const char *archive,
                               double t0, pp_plan **out, double *write_seconds, pp_error *err);

pp_status pp_plan_run_equi(pp_dist *d, const pp_plan_args *args, const pp_graph *g, const pp_problem *p,
                           const char *archive, double t0, FILE *out, FILE *log, pp_error *err);

#endif /* PIPER_CLI_PLAN_EQUI_H */
