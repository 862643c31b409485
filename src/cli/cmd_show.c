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

/* The options that the archive cannot serve: budgets beyond its own, or
 * a bound on the sum of d without tables (an equi archive). */
static pp_status check_show_args(const pp_show_args *args, pp_archive *a, int s_bound, pp_error *err) {
  const int devices = pp_archive_problem(a)->devices;
  if (args->devices > devices)
    return pp_error_set(err, PP_ERR_USAGE, "--devices %lld: the archive holds budgets up to %d only",
                        args->devices, devices);
  if ((s_bound >= 0 || args->curve_dp_sum) && !pp_archive_dp(a))
    return pp_error_set(
        err, PP_ERR_USAGE,
        "%s: an equi archive holds no tables; --dp-sum and --curve-dp-sum need a piper archive",
        args->archive);
  return PP_OK;
}

/* --curve: the best TPS for every budget 1..K (within s_bound if >= 0). */
static pp_status print_curve(FILE *out, pp_archive *a, int s_bound, pp_error *err) {
  const int K = pp_archive_problem(a)->devices;
  double *curve = pp_xmalloc(sizeof(double) * (size_t)K);
  pp_status st = pp_cli_archived_curve(a, s_bound, curve, err);
  if (!st) {
    fprintf(out, "devices,tps\n");
    for (int k = 1; k <= K; k++) print_tps(out, k, curve[k - 1]);
  }
  free(curve);
  return st;
}

/* The plan to show in *plan (owned by the caller), checked against the
 * tables' optimum: rebuilt from /dp for --devices or --dp-sum (prob->devices
 * set to the budget), else the archived /plan.  PP_ERR_INPUT names the
 * dataset at fault. */
static pp_status shown_plan(const pp_show_args *args, pp_archive *a, pp_problem *prob, int s_bound,
                            pp_plan **plan, pp_error *err) {
  double optimum = INFINITY;
  pp_status st;
  if (args->devices > 0 || s_bound >= 0) {
    if (args->devices > 0) prob->devices = (int)args->devices;
    /* the tables passed every check on opening; if no plan can still be
     * rebuilt from them, or the checker refuses it, the file is at fault */
    pp_error e2 = {0};
    if (pp_cli_archived_optimum(a, prob->devices, s_bound, &optimum, plan, &e2))
      return pp_error_set(err, PP_ERR_INPUT,
                          "%s: not a valid piper archive: /dp: no plan for %d devices "
                          "reaches the tables' optimum (%s)",
                          args->archive, prob->devices, e2.msg);
  } else {
    if ((st = pp_archive_read_plan(a, plan, err))) return st;
    if ((st = pp_cli_archived_optimum(a, prob->devices, -1, &optimum, NULL, err))) return st;
  }
  pp_plan *pl = *plan;
  if (pl->feasible && (st = pp_check_plan_optimum(pp_archive_graph(a), prob, pl, optimum, err))) {
    pp_error e2 = *err;
    return pp_error_set(err, PP_ERR_INPUT, "%s: not a valid piper archive: %s: %s", args->archive,
                        args->devices > 0 ? "/dp" : "/plan", e2.msg);
  }
  if (pl->feasible && s_bound >= 0 && pl->sum_d > s_bound)
    return pp_error_set(err, PP_ERR_INTERNAL,
                        "%s: the rebuilt plan's sum of d %d exceeds --dp-sum %d (a bug)", args->archive,
                        pl->sum_d, s_bound);
  return PP_OK;
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
  pp_problem prob = *pp_archive_problem(a);
  const int s_bound = (int)args.dp_sum; /* < 0: none */
  if ((st = check_show_args(&args, a, s_bound, &err))) goto done;
  if (args.curve_dp_sum) {
    print_curve_s(out, a, args.devices > 0 ? (int)args.devices : prob.devices);
    goto done;
  }
  if (args.curve) {
    st = print_curve(out, a, s_bound, &err);
    goto done;
  }
  if ((st = shown_plan(&args, a, &prob, s_bound, &plan, &err))) goto done;
  pp_run_info info = {.input = args.archive,
                      .downsets = pp_archive_downsets(a) ? pp_archive_downsets(a)->count : 0,
                      .pairs = 0,
                      .seconds = pp_now() - t0,
                      .ranks = 1};
  pp_report(out, args.format == PP_FORMAT_JSON, pp_archive_graph(a), &prob, plan, &info);
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

/* The summaries of the archives that can be read, packed at the front of
 * rows (their paths in files); the others are reported on log.  Returns
 * how many were read. */
static int read_summaries(const pp_collect_args *args, pp_archive_summary *rows, const char **files,
                          FILE *log) {
  int good = 0;
  for (int i = 0; i < args->n_files; i++) {
    pp_error err = {0};
    if (pp_archive_read_summary(args->files[i], &rows[good], &err)) {
      fprintf(log, "piper collect: skipping %s\n", err.msg);
      continue;
    }
    files[good++] = args->files[i];
  }
  return good;
}

static void print_collect_header(FILE *out, int csv) {
  if (csv)
    fprintf(out,
            "archive,input,devices,memory_bytes,bandwidth_bytes_per_s,microbatches,flags,feasible,tps,"
            "devices_used,stages,zero,devices_per_node,intra_node_bandwidth_bytes_per_s,schedule,uniform\n");
  else
    fprintf(out, "%-40s %8s %10s %12s %6s %-14s %18s %8s %6s %4s %-16s %-12s\n", "archive", "devices",
            "memory", "bandwidth", "N", "flags", "tps (s/sample)", "used", "stages", "zero",
            "node (G, intra)", "schedule");
}

/* One row of the table for the archive at path with summary r. */
static void print_collect_row(FILE *out, int csv, const char *path, const pp_archive_summary *r) {
  char flags[64];
  snprintf(flags, sizeof flags, "%s%s%s%s", r->planner == PP_PLANNER_EQUI ? "equi," : "",
           r->no_dp ? "no-dp," : "", r->no_tp ? "no-tp," : "", r->no_recompute ? "no-recompute," : "");
  size_t l = strlen(flags);
  if (l)
    flags[l - 1] = '\0';
  else
    snprintf(flags, sizeof flags, "none");
  if (csv) {
    csv_field(out, path);
    csv_field(out, r->input);
    fprintf(out, "%d,%.17g,%.17g,%d,", r->devices, r->memory, r->bandwidth, r->microbatches);
    csv_field(out, flags);
    fprintf(out, "%d,", r->feasible);
    if (r->feasible) fprintf(out, "%.17g", r->tps);
    fprintf(out, ",%d,%d,%d,%d,%.17g,%s,%d\n", r->devices_used, r->stages, r->zero, r->devices_per_node,
            r->intra_bandwidth, pp_schedule_name((pp_schedule)r->schedule), r->uniform);
    return;
  }
  char m[32], b[32];
  fprintf(out, "%-40s %8d %10s %12s %6d %-14s ", path, r->devices, pp_format_bytes(r->memory, m, sizeof m),
          pp_format_bytes(r->bandwidth, b, sizeof b), r->microbatches, flags);
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
  const int csv = args.format == PP_FORMAT_CSV, n = args.n_files;
  pp_archive_summary *rows = pp_xcalloc((size_t)n, sizeof *rows);
  const char **files = pp_xcalloc((size_t)n, sizeof *files);
  const int good = read_summaries(&args, rows, files, log), skipped = n - good;
  int rc = PP_EXIT_OK;
  if (good == 0) {
    fprintf(log, "piper collect: no readable archive among %d\n", n);
    rc = PP_EXIT_INVALID;
    goto done;
  }
  print_collect_header(out, csv);
  for (int i = 0; i < good; i++) print_collect_row(out, csv, files[i], &rows[i]);
  if (args.study) {
    pp_error err = {0};
    if (pp_archive_write_study(args.study, rows, files, good, &err)) {
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
