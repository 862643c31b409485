/*
 * archived.c - optima and curves of an opened archive, for show and plot
 * (see archived.h).
 */
#include "archived.h"

#include <math.h>

#include "piper/equi.h"

/* The best TPS for budget k (<= the archive's K) and a sum of data-parallel
 * degrees of at most s (s < 0: no bound beyond min(N, k)): from the tables, or
 * for an equi archive (no bound on s allowed) by rerunning the baseline (it
 * keeps no tables; it is cheap).  With plan != NULL also the optimal plan
 * (caller frees). */
pp_status pp_cli_archived_optimum(pp_archive *a, int k, int s, double *tps, pp_plan **plan, pp_error *err) {
  pp_problem p = *pp_archive_problem(a);
  p.devices = k;
  if (s >= 0) {
    *tps = pp_dp_optimum_s(pp_archive_dp(a), k, s);
    return plan ? pp_dp_reconstruct_s(pp_archive_dp(a), k, s, plan, err) : PP_OK;
  }
  if (p.planner == PP_PLANNER_EQUI) {
    pp_plan *pl = NULL;
    pp_status st = pp_equi_solve(pp_archive_graph(a), &p, &pl, NULL, err);
    if (st) return st;
    *tps = pl->feasible ? pl->tps : INFINITY;
    if (plan)
      *plan = pl;
    else
      pp_plan_free(pl);
    return PP_OK;
  }
  *tps = pp_dp_optimum(pp_archive_dp(a), k);
  return plan ? pp_dp_reconstruct(pp_archive_dp(a), k, plan, err) : PP_OK;
}

/* The best TPS for every budget k = 1..K into curve[K] (sum of d at most s
 * if s >= 0). */
pp_status pp_cli_archived_curve(pp_archive *a, int s, double *curve, pp_error *err) {
  const pp_problem *p = pp_archive_problem(a);
  if (s < 0 && p->planner == PP_PLANNER_EQUI) {
    pp_plan *pl = NULL;
    pp_status st = pp_equi_solve(pp_archive_graph(a), p, &pl, curve, err);
    pp_plan_free(pl);
    return st;
  }
  for (int k = 1; k <= p->devices; k++)
    curve[k - 1] = s < 0 ? pp_dp_optimum(pp_archive_dp(a), k) : pp_dp_optimum_s(pp_archive_dp(a), k, s);
  return PP_OK;
}
