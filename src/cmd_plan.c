/*
 * cmd_plan.c - `piper plan`: load, enumerate, solve, rebuild, check, report.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "piper/check.h"
#include "piper/cli.h"
#include "piper/commands.h"
#include "piper/dp.h"
#include "piper/downsets.h"
#include "piper/graph.h"
#include "piper/progress.h"
#include "piper/report.h"

static double default_memory_use(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || size <= 0) return 0;
  return 0.8 * (double)pages * (double)size;
}

int pp_cmd_plan(int argc, char **argv, FILE *out, FILE *log) {
  pp_error err = {0};
  pp_plan_args args;
  pp_graph *g = NULL;
  pp_downsets *ds = NULL;
  pp_dp *dp = NULL;
  pp_plan *plan = NULL;
  pp_status st;
  double t0 = pp_now();

  if ((st = pp_cli_parse_plan(argc, argv, &args, &err))) goto done;
  if (args.help) {
    pp_cli_help_plan(out);
    return PP_EXIT_OK;
  }
  if (args.version) {
    fprintf(out, "piper %s\n", PIPER_VERSION);
    return PP_EXIT_OK;
  }
  if ((st = pp_graph_load_file(args.input, log, &g, &err))) goto done;
  pp_problem prob;
  if ((st = pp_cli_make_problem(&args, g, &prob, &err))) goto done;
  if ((st = pp_downsets_enumerate(g, args.max_downsets, &ds, &err))) goto done;
  double limit = args.max_memory_use > 0 ? args.max_memory_use : default_memory_use();
  if ((st = pp_dp_create(g, &prob, ds, limit, &dp, &err))) goto done;
  pp_progress pr;
  pp_progress_init(&pr, args.quiet ? NULL : log);
  if ((st = pp_dp_solve(dp, pp_progress_update, &pr, &err))) goto done;
  pp_progress_done(&pr);
  double opt = pp_dp_optimum(dp, prob.devices);
  if ((st = pp_dp_reconstruct(dp, prob.devices, &plan, &err))) goto done;
  if (plan->feasible) {
    if ((st = pp_check_plan(g, &prob, plan, &err))) {
      pp_error_prefix(&err, "the plan found fails the independent check (this is a bug)");
      goto done;
    }
    if (fabs(plan->tps - opt) > 1e-9 * fabs(opt)) {
      st = pp_error_set(&err, PP_ERR_INTERNAL,
                        "the checker's TPS %.17g differs from the DP optimum %.17g (this is a bug)", plan->tps, opt);
      goto done;
    }
  }
  long long pairs = 0;
  {
    const double *w = pp_dp_work(dp);
    (void)w;
    pairs = pp_downsets_count_pairs(ds, NULL);
  }
  pp_run_info info = {.input = args.input, .downsets = ds->count, .pairs = pairs, .seconds = pp_now() - t0,
                      .ranks = 1};
  if (args.format == PP_FORMAT_JSON)
    pp_report_json(out, g, &prob, plan, &info);
  else
    pp_report_text(out, g, &prob, plan, &info);
  st = plan->feasible ? PP_OK : PP_ERR_INFEASIBLE;
done:
  if (st && st != PP_ERR_INFEASIBLE) fprintf(log, "piper: error: %s\n", err.msg);
  pp_plan_free(plan);
  pp_dp_free(dp);
  pp_downsets_free(ds);
  pp_graph_free(g);
  return pp_status_exit_code(st);
}
