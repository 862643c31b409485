/*
 * plan_equi.c - `piper plan --planner equi` (see plan_equi.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "plan_equi.h"

#include <stdlib.h>
#include <unistd.h>

#include "piper/archive.h"
#include "piper/check.h"
#include "piper/equi.h"
#include "piper/progress.h"
#include "report.h"

pp_status pp_plan_equi_archive(pp_dist *d, const pp_graph *g, const pp_problem *p, const char *archive,
                               double t0, pp_plan **out, double *write_seconds, pp_error *err) {
  double *curve = pp_xmalloc(sizeof(double) * (size_t)p->devices);
  pp_plan *plan = NULL;
  char *hosts = NULL;
  double t_solve = pp_now();
  *out = NULL;
  *write_seconds = 0;
  pp_status st = pp_equi_solve(g, p, &plan, curve, err);
  t_solve = pp_now() - t_solve;
  if (!st && plan->feasible) {
    const double tps = plan->tps;
    st = pp_check_plan_optimum(g, p, plan, tps, err);
  }
  if ((st = pp_dist_agree(d, st, err))) goto done;
  if (archive[0]) {
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    hosts = pp_dist_allgather_names(d, host, 64);
    pp_archive_content c = {.g = g, .p = p, .ds = NULL, .dp = NULL, .curve = curve, .plan = plan};
    c.run = (pp_run_record){.ranks = pp_dist_size(d),
                            .hostnames = hosts,
                            .host_width = 64,
                            .seconds_dp = t_solve,
                            .seconds_total = pp_now() - t0};
    if ((st = pp_archive_write(d, archive, &c, write_seconds, err))) goto done;
  }
  *out = plan;
  plan = NULL;
done:
  free(hosts);
  free(curve);
  pp_plan_free(plan);
  return st;
}

pp_status pp_plan_run_equi(pp_dist *d, const pp_plan_args *args, const pp_graph *g, const pp_problem *p,
                           const char *archive, double t0, FILE *out, FILE *log, pp_error *err) {
  const int root = pp_dist_rank(d) == 0;
  pp_plan *plan = NULL;
  double t_write = 0;
  pp_status st = pp_plan_equi_archive(d, g, p, archive, t0, &plan, &t_write, err);
  if (st) return st;
  if (root && archive[0] && !args->quiet)
    fprintf(log, "piper: archive %s written in %.2f s\n", archive, t_write);
  if (root) {
    pp_run_info info = {.input = args->input,
                        .seconds = pp_now() - t0,
                        .ranks = pp_dist_size(d),
                        .archive = archive[0] ? archive : NULL,
                        .write_seconds = t_write};
    pp_report(out, args->format == PP_FORMAT_JSON, g, p, plan, &info);
  }
  st = plan->feasible ? PP_OK : PP_ERR_INFEASIBLE;
  pp_plan_free(plan);
  return st;
}
