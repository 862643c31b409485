/*
 * cmd_eval.c - `piper eval`: evaluate one given plan (from a plan report,
 * an archive, or framework sizes) with the independent checker, the same
 * code that verifies every plan `plan` prints, and list every violation.
 * Runs on rank 0; other ranks return at once.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "piper/archive.h"
#include "piper/check.h"
#include "piper/plan_io.h"
#include "piper/shorthand.h"
#include "piper/units.h"
#include "report.h"

/* 1 if the file starts with the HDF5 signature (Sec. II.A of the HDF5 file
 * format specification: \211HDF\r\n\032\n). */
static int is_hdf5(const char *path) {
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char head[8];
  if (strcmp(path, "-") == 0) return 0;
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t got = fread(head, 1, sizeof head, f);
  fclose(f);
  return got == sizeof head && memcmp(head, sig, sizeof sig) == 0;
}

/* The archive's stored plan, mapped onto g by node and TMPC id. */
static pp_status plan_from_archive(const char *path, const pp_graph *g, pp_plan **out, pp_error *err) {
  pp_archive *a = NULL;
  pp_plan *stored = NULL;
  pp_status st = pp_archive_open(path, &a, err);
  if (!st) st = pp_archive_read_plan(a, &stored, err);
  if (!st && !stored->feasible)
    st = pp_error_set(err, PP_ERR_INPUT, "%s: the archive holds no feasible plan to evaluate", path);
  if (!st) st = pp_plan_remap(pp_archive_graph(a), stored, g, path, out, err);
  pp_plan_free(stored);
  pp_archive_close(a);
  return st;
}

static pp_status build_plan(const pp_eval_args *a, const pp_graph *g, pp_plan **plan, char *how, size_t n,
                            pp_error *err) {
  if (a->plan_file) {
    snprintf(how, n, "%s", a->plan_file);
    if (is_hdf5(a->plan_file)) return plan_from_archive(a->plan_file, g, plan, err);
    return pp_plan_load_json(a->plan_file, g, plan, err);
  }
  pp_shorthand s = {(int)a->pp, (int)a->tp, (int)a->dp, a->recompute, (int)a->budget.virtual_stages};
  char split[256];
  pp_status st = pp_plan_shorthand(g, &s, plan, split, sizeof split, err);
  if (!st)
    snprintf(how, n, "--pp %lld --tp %lld --dp %lld --recompute %s%s: %s", a->pp, a->tp, a->dp,
             a->recompute ? "all" : "none", s.chunks > 1 ? " (interleaved)" : "", split);
  return st;
}

/* The violation in plain words, stages numbered from 1 as in the table. */
static void describe(const pp_violation *v, const pp_problem *p, const pp_plan *plan, char *buf, size_t n) {
  char b1[32], b2[32], b3[32];
  const char *tail = strstr(v->what, ": ");
  switch (v->kind) {
  case PP_VIOLATION_MEMORY:
    snprintf(buf, n, "memory over the limit at stage %d by %s (needs %s per device, the limit is %s)",
             v->stage + 1, pp_format_bytes(v->amount, b1, sizeof b1),
             pp_format_bytes(plan->stages[v->stage].memory, b2, sizeof b2),
             pp_format_bytes(p->memory, b3, sizeof b3));
    return;
  case PP_VIOLATION_DEVICES:
    snprintf(buf, n, "devices over the budget: the plan uses %d devices, %d more than K = %d",
             plan->devices_used, (int)v->amount, p->devices);
    return;
  case PP_VIOLATION_DIVIDES:
    snprintf(buf, n, "stage %d: d = %d does not divide the %d microbatches per batch", v->stage + 1,
             (int)v->amount, p->microbatches);
    return;
  case PP_VIOLATION_DEGREE:
    if (v->node >= 0) {
      const char *more = strstr(v->what, " (nor do");
      snprintf(buf, n, "stage %d: t = %d is a degree the input does not offer for node %lld%s", v->stage + 1,
               (int)v->amount, v->node, more ? more : "");
      return;
    }
    /* fall through */
  case PP_VIOLATION_UNIFORM:
  case PP_VIOLATION_RECOMPUTE:
    snprintf(buf, n, "stage %d: %s", v->stage + 1, tail ? tail + 2 : v->what);
    return;
  }
  snprintf(buf, n, "%s", v->what);
}

static const char *kind_name(pp_violation_kind k) {
  static const char *const names[] = {"memory", "devices", "divides", "degree", "uniform", "recompute"};
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "other";
}

/* Facts derived from the checked plan. */
typedef struct eval_summary {
  double batch_seconds;   /* one batch of N microbatches */
  double bubble_fraction; /* share of the batch time in pipeline fill and drain */
  int bottleneck;         /* 0-based stage with the largest load, -1 if undefined */
} eval_summary;

/* Batch time and bubble as the checker computed them for the schedule
 * (2bw: N x TPS and no bubble). */
static eval_summary summarise(const pp_plan *plan) {
  eval_summary e = {plan->batch_time, plan->bubble, -1};
  double worst = -INFINITY;
  for (int i = 0; i < plan->n_stages; i++)
    if (plan->stages[i].load > worst) {
      worst = plan->stages[i].load;
      e.bottleneck = i;
    }
  return e;
}

static void report_text(FILE *out, const pp_eval_args *a, const pp_graph *g, const pp_problem *p,
                        const pp_plan *plan, const pp_check_report *r, const char *how) {
  char mem[32], bw[32], line[512];
  fprintf(out, "input: %s (%d layers, %d edges)\n", a->budget.input, g->n_nodes, g->n_edges);
  fprintf(out, "budget: %d devices, %s per device, %d microbatches per batch, %s/s; schedule %s%s\n",
          p->devices, pp_format_bytes(p->memory, mem, sizeof mem), p->microbatches,
          pp_format_bytes(p->bandwidth, bw, sizeof bw), pp_schedule_name(p->schedule),
          pp_problem_chunks(p) > 1 ? " interleaved" : "");
  fprintf(out, "plan: %s\n\n", how);
  pp_report_stages(out, g, p, plan);
  eval_summary e = summarise(plan);
  if (isfinite(plan->tps)) {
    fprintf(out, "\ntime per sample: %.12g s (%.6g samples/s)\n", plan->tps, 1.0 / plan->tps);
    fprintf(out, "time per batch: %.12g s (%d microbatches); bubble fraction %.4g\n", e.batch_seconds,
            p->microbatches, e.bubble_fraction);
    fprintf(out, "bottleneck: stage %d (%.6g s/sample)\n", e.bottleneck + 1, plan->stages[e.bottleneck].load);
  } else {
    fprintf(out, "\ntime per sample: undefined (a stage uses a degree the input does not offer)\n");
  }
  fprintf(out, "devices used: %d of %d; sum of data-parallel degrees: %d; stages: %d\n", plan->devices_used,
          p->devices, plan->sum_d, plan->n_stages);
  pp_report_throughput(out, 0, g, plan->tps, plan->devices_used);
  if (r->count == 0) {
    fprintf(out, "feasible: yes, no violations\n");
    return;
  }
  fprintf(out, "feasible: no, %d violation%s:\n", r->count, r->count == 1 ? "" : "s");
  for (int i = 0; i < r->count && i < PP_CHECK_MAX_VIOLATIONS; i++) {
    describe(&r->v[i], p, plan, line, sizeof line);
    fprintf(out, "  - %s\n", line);
  }
  if (r->count > PP_CHECK_MAX_VIOLATIONS)
    fprintf(out, "  - ... and %d more\n", r->count - PP_CHECK_MAX_VIOLATIONS);
}

static void json_num(FILE *out, const char *key, double v) {
  fprintf(out, ", \"%s\": ", key);
  if (isfinite(v))
    fprintf(out, "%.17g", v);
  else
    fputs("null", out);
}

static void report_json(FILE *out, const pp_graph *g, const pp_problem *p, const pp_plan *plan,
                        const pp_check_report *r, const char *how) {
  eval_summary e = summarise(plan);
  char line[512];
  fprintf(out, "{\"feasible\": %s", r->count == 0 ? "true" : "false");
  json_num(out, "tps", plan->tps);
  json_num(out, "samples_per_second", 1.0 / plan->tps);
  json_num(out, "batch_seconds", e.batch_seconds);
  json_num(out, "bubble_fraction", isfinite(plan->tps) ? e.bubble_fraction : NAN);
  fprintf(out, ", \"bottleneck_stage\": %d", isfinite(plan->tps) ? e.bottleneck + 1 : 0);
  fprintf(out, ", \"schedule\": \"%s\", \"virtual_stages\": %d", pp_schedule_name(p->schedule),
          pp_problem_chunks(p));
  fprintf(out, ", \"devices_used\": %d, \"devices\": %d, \"sum_dp_degrees\": %d, \"microbatches\": %d",
          plan->devices_used, p->devices, plan->sum_d, p->microbatches);
  json_num(out, "memory_limit_bytes", p->memory);
  pp_report_throughput(out, 1, g, plan->tps, plan->devices_used);
  fputs(", \"plan\": ", out);
  pp_json_string(out, how);
  fputs(", \"stages\": [", out);
  pp_report_json_stages(out, g, plan);
  fputs("], \"violations\": [", out);
  for (int i = 0; i < r->count && i < PP_CHECK_MAX_VIOLATIONS; i++) {
    describe(&r->v[i], p, plan, line, sizeof line);
    fprintf(out, "%s{\"kind\": \"%s\", \"stage\": %d", i ? ", " : "", kind_name(r->v[i].kind),
            r->v[i].stage >= 0 ? r->v[i].stage + 1 : 0);
    json_num(out, "amount", r->v[i].amount);
    fputs(", \"message\": ", out);
    pp_json_string(out, line);
    fputc('}', out);
  }
  fprintf(out, "], \"violation_count\": %d}\n", r->count);
}

int pp_cmd_eval(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log) {
  (void)env;
  if (pp_dist_rank(d) != 0) return PP_EXIT_OK;
  pp_error err = {0};
  pp_eval_args args;
  pp_graph *g = NULL;
  pp_plan *plan = NULL;
  pp_check_report *r = NULL;
  char how[512] = "";
  pp_status st;
  if ((st = pp_cli_parse_eval(argc, argv, &args, &err))) goto done;
  if (args.budget.help) {
    pp_cli_help_eval(out);
    return PP_EXIT_OK;
  }
  if ((st = pp_graph_load_file(args.budget.input, log, &g, &err))) goto done;
  pp_problem prob;
  if ((st = pp_cli_make_problem(&args.budget, g, &prob, &err))) goto done;
  if ((st = build_plan(&args, g, &plan, how, sizeof how, &err))) goto done;
  r = pp_xmalloc(sizeof *r);
  if ((st = pp_check_plan_report(g, &prob, plan, r, &err))) {
    pp_error_prefix(&err, args.plan_file ? args.plan_file : "the plan");
    st = PP_ERR_INPUT;
    goto done;
  }
  if (args.budget.format == PP_FORMAT_JSON)
    report_json(out, g, &prob, plan, r, how);
  else
    report_text(out, &args, g, &prob, plan, r, how);
  st = r->count == 0 ? PP_OK : PP_ERR_INFEASIBLE;
done:
  if (st && st != PP_ERR_INFEASIBLE) fprintf(log, "piper: error: %s\n", err.msg);
  free(r);
  pp_plan_free(plan);
  pp_graph_free(g);
  return pp_status_exit_code(st);
}
