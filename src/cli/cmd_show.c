/*
 * cmd_show.c - `piper show` (a plan or the device curve from an archive)
 * and `piper collect` (one table from the archives of a study).  Both run on
 * rank 0 only; other ranks return at once.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/archive.h"
#include "piper/check.h"
#include "archived.h"
#include "cli.h"
#include "commands.h"
#include "piper/progress.h"
#include "report.h"
#include "piper/units.h"

static void print_tps(FILE *out, int x, double v) {
  if (isinf(v))
    fprintf(out, "%d,inf\n", x);
  else
    fprintf(out, "%d,%.17g\n", x, v);
}

/* --curve-dp-sum: the best TPS at budget k for every bound s = 1..min(N, k)
 * on the sum of data-parallel degrees (the Piper paper's Fig. 2, right). */
static void print_curve_s(FILE *out, pp_archive *a, int k) {
  const pp_problem *p = pp_archive_problem(a);
  const int S = p->microbatches < k ? p->microbatches : k;
  fprintf(out, "dp_sum,tps\n");
  for (int s = 1; s <= S; s++) print_tps(out, s, pp_dp_optimum_s(pp_archive_dp(a), k, s));
}

int pp_cmd_show(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log) {
  if (pp_dist_rank(d) != 0) return PP_EXIT_OK;
  pp_error err = {0};
  pp_show_args args;
  pp_archive *a = NULL;
  pp_plan *plan = NULL;
  pp_status st;
  double t0 = pp_now();
  if ((st = pp_cli_parse_show(argc, argv, &args, &err))) goto done;
  if (args.help) {
    pp_cli_help_show(out);
    return PP_EXIT_OK;
  }
  if ((st = pp_archive_open(args.archive, &a, &err))) goto done;
  const pp_graph *g = pp_archive_graph(a);
  pp_problem prob = *pp_archive_problem(a);
  const int s_bound = (int)args.dp_sum; /* < 0: none */
  if (args.devices > prob.devices) {
    st = pp_error_set(&err, PP_ERR_USAGE, "--devices %lld: the archive holds budgets up to %d only",
                      args.devices, prob.devices);
    goto done;
  }
  if ((s_bound >= 0 || args.curve_dp_sum) && !pp_archive_dp(a)) {
    st = pp_error_set(&err, PP_ERR_USAGE,
                      "%s: an equi archive holds no tables; --dp-sum and --curve-dp-sum need a piper archive",
                      args.archive);
    goto done;
  }
  if (args.curve_dp_sum) {
    print_curve_s(out, a, args.devices > 0 ? (int)args.devices : prob.devices);
    goto done;
  }
  if (args.curve) {
    double *curve = pp_xmalloc(sizeof(double) * (size_t)prob.devices);
    if ((st = pp_cli_archived_curve(a, s_bound, curve, &err))) {
      free(curve);
      goto done;
    }
    fprintf(out, "devices,tps\n");
    for (int k = 1; k <= prob.devices; k++) print_tps(out, k, curve[k - 1]);
    free(curve);
    goto done;
  }
  double optimum = INFINITY;
  if (args.devices > 0 || s_bound >= 0) {
    if (args.devices > 0) prob.devices = (int)args.devices;
    /* the tables passed every check on opening; if no plan can still be
     * rebuilt from them, or the checker refuses it, the file is at fault */
    pp_error e2 = {0};
    if (pp_cli_archived_optimum(a, prob.devices, s_bound, &optimum, &plan, &e2)) {
      st = pp_error_set(&err, PP_ERR_INPUT,
                        "%s: not a valid piper archive: /dp: no plan for %d devices "
                        "reaches the tables' optimum (%s)",
                        args.archive, prob.devices, e2.msg);
      goto done;
    }
  } else {
    if ((st = pp_archive_read_plan(a, &plan, &err))) goto done;
    if ((st = pp_cli_archived_optimum(a, prob.devices, -1, &optimum, NULL, &err))) goto done;
  }
  if (plan->feasible && (st = pp_check_plan_optimum(g, &prob, plan, optimum, &err))) {
    pp_error e2 = err;
    st = pp_error_set(&err, PP_ERR_INPUT, "%s: not a valid piper archive: %s: %s", args.archive,
                      args.devices > 0 ? "/dp" : "/plan", e2.msg);
    goto done;
  }
  if (plan->feasible && s_bound >= 0 && plan->sum_d > s_bound) {
    st = pp_error_set(&err, PP_ERR_INTERNAL, "%s: the rebuilt plan's sum of d %d exceeds --dp-sum %d (a bug)",
                      args.archive, plan->sum_d, s_bound);
    goto done;
  }
  pp_run_info info = {.input = args.archive,
                      .downsets = pp_archive_downsets(a) ? pp_archive_downsets(a)->count : 0,
                      .pairs = 0,
                      .seconds = pp_now() - t0,
                      .ranks = 1};
  pp_report(out, args.format == PP_FORMAT_JSON, g, &prob, plan, &info);
  st = plan->feasible ? PP_OK : PP_ERR_INFEASIBLE;
done:
  if (st && st != PP_ERR_INFEASIBLE) fprintf(log, "piper: error: %s\n", err.msg);
  pp_plan_free(plan);
  pp_archive_close(a);
  return pp_status_exit_code(st);
}

/* Writes s and a comma as one CSV field: in double quotes, quotes doubled,
 * if it holds a comma, a quote or a line break (RFC 4180, section 2). */
static void csv_field(FILE *out, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    fprintf(out, "%s,", s);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputs("\",", out);
}

int pp_cmd_collect(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log) {
  if (pp_dist_rank(d) != 0) return PP_EXIT_OK;
  pp_collect_args args;
  pp_error perr = {0};
  if (pp_cli_parse_collect(argc, argv, &args, &perr)) {
    fprintf(log, "piper collect: %s (try 'piper collect --help')\n", perr.msg);
    free(args.files);
    return PP_EXIT_INVALID;
  }
  if (args.help) {
    pp_cli_help_collect(out);
    free(args.files);
    return PP_EXIT_OK;
  }
  const char *study = args.study;
  int csv = args.format == PP_FORMAT_CSV;
  int n = args.n_files;
  pp_archive_summary *rows = pp_xcalloc((size_t)n, sizeof *rows);
  const char **files = pp_xcalloc((size_t)n, sizeof *files);
  int good = 0, skipped = 0;
  for (int i = 0; i < n; i++) {
    pp_error err = {0};
    if (pp_archive_read_summary(args.files[i], &rows[good], &err)) {
      fprintf(log, "piper collect: skipping %s\n", err.msg);
      skipped++;
      continue;
    }
    files[good++] = args.files[i];
  }
  int rc = PP_EXIT_OK;
  if (good == 0) {
    fprintf(log, "piper collect: no readable archive among %d\n", n);
    rc = PP_EXIT_INVALID;
    goto done;
  }
  if (csv)
    fprintf(out,
            "archive,input,devices,memory_bytes,bandwidth_bytes_per_s,microbatches,flags,feasible,tps,"
            "devices_used,stages,zero,devices_per_node,intra_node_bandwidth_bytes_per_s,schedule,uniform\n");
  else
    fprintf(out, "%-40s %8s %10s %12s %6s %-14s %18s %8s %6s %4s %-16s %-12s\n", "archive", "devices",
            "memory", "bandwidth", "N", "flags", "tps (s/sample)", "used", "stages", "zero",
            "node (G, intra)", "schedule");
  for (int i = 0; i < good; i++) {
    const pp_archive_summary *r = &rows[i];
    char flags[64];
    snprintf(flags, sizeof flags, "%s%s%s%s", r->planner == PP_PLANNER_EQUI ? "equi," : "",
             r->no_dp ? "no-dp," : "", r->no_tp ? "no-tp," : "", r->no_recompute ? "no-recompute," : "");
    size_t l = strlen(flags);
    if (l)
      flags[l - 1] = '\0';
    else
      snprintf(flags, sizeof flags, "none");
    if (csv) {
      csv_field(out, files[i]);
      csv_field(out, r->input);
      fprintf(out, "%d,%.17g,%.17g,%d,", r->devices, r->memory, r->bandwidth, r->microbatches);
      csv_field(out, flags);
      fprintf(out, "%d,", r->feasible);
      if (r->feasible) fprintf(out, "%.17g", r->tps);
      fprintf(out, ",%d,%d,%d,%d,%.17g,%s,%d\n", r->devices_used, r->stages, r->zero, r->devices_per_node,
              r->intra_bandwidth, pp_schedule_name((pp_schedule)r->schedule), r->uniform);
    } else {
      char m[32], b[32];
      fprintf(out, "%-40s %8d %10s %12s %6d %-14s ", files[i], r->devices,
              pp_format_bytes(r->memory, m, sizeof m), pp_format_bytes(r->bandwidth, b, sizeof b),
              r->microbatches, flags);
      if (r->feasible)
        fprintf(out, "%18.12g", r->tps);
      else
        fprintf(out, "%18s", "infeasible");
      char node[48] = "-", ib[32];
      if (r->devices_per_node)
        snprintf(node, sizeof node, "%d, %s/s", r->devices_per_node,
                 pp_format_bytes(r->intra_bandwidth, ib, sizeof ib));
      fprintf(out, " %8d %6d %4d %-16s %s%s\n", r->devices_used, r->stages, r->zero, node,
              pp_schedule_name((pp_schedule)r->schedule), r->uniform ? ",uniform" : "");
    }
  }
  if (study) {
    pp_error err = {0};
    if (pp_archive_write_study(study, rows, files, good, &err)) {
      fprintf(log, "piper collect: error: %s\n", err.msg);
      rc = PP_EXIT_FAILURE;
    }
  }
  if (skipped) fprintf(log, "piper collect: %d of %d archives skipped\n", skipped, n);
done:
  free(rows);
  free(files);
  free(args.files);
  return rc;
}
