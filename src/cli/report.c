/*
 * report.c - plan output: text table and JSON (written by hand, so that
 * only the input module depends on a JSON library).
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/units.h"

void pp_json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    switch (*c) {
    case '"':
      fputs("\\\"", out);
      break;
    case '\\':
      fputs("\\\\", out);
      break;
    case '\n':
      fputs("\\n", out);
      break;
    case '\r':
      fputs("\\r", out);
      break;
    case '\t':
      fputs("\\t", out);
      break;
    default:
      if (*c < 0x20)
        fprintf(out, "\\u%04x", *c);
      else
        fputc(*c, out);
    }
  }
  fputc('"', out);
}

pp_throughput pp_throughput_of(const pp_graph *g, double tps, int devices_used) {
  pp_throughput r = {0, 0, 0};
  if (!(tps > 0) || !isfinite(tps)) return r;
  r.tokens_per_second = g->tokens_per_sample / tps;
  if (devices_used > 0) r.model_flops_per_device = g->flops_per_sample / tps / devices_used;
  if (g->peak_flops > 0) r.mfu = r.model_flops_per_device / g->peak_flops;
  return r;
}

static void json_number_or_null(FILE *out, const char *key, double v) {
  fprintf(out, ", \"%s\": ", key);
  if (v > 0)
    fprintf(out, "%.17g", v);
  else
    fputs("null", out);
}

void pp_report_throughput(FILE *out, int json, const pp_graph *g, double tps, int devices_used) {
  pp_throughput r = pp_throughput_of(g, tps, devices_used);
  if (!(g->tokens_per_sample > 0 || g->flops_per_sample > 0)) return;
  if (json) {
    json_number_or_null(out, "tokens_per_second", r.tokens_per_second);
    json_number_or_null(out, "model_flops_per_second_per_device", r.model_flops_per_device);
    json_number_or_null(out, "mfu", r.mfu);
    return;
  }
  const char *sep = "";
  if (r.tokens_per_second > 0) {
    fprintf(out, "tokens/s: %.6g (%.6g per device)", r.tokens_per_second,
            devices_used > 0 ? r.tokens_per_second / devices_used : 0.0);
    sep = "; ";
  }
  if (r.model_flops_per_device > 0) {
    fprintf(out, "%smodel TFLOP/s per device: %.4g", sep, r.model_flops_per_device / 1e12);
    if (r.mfu > 0) fprintf(out, " (MFU %.1f%% of %.4g TFLOP/s)", 100 * r.mfu, g->peak_flops / 1e12);
  }
  fputc('\n', out);
}

void pp_explain_infeasible(const pp_graph *g, const pp_problem *p, char *buf, size_t n) {
  char mem[32], need[32];
  pp_format_bytes(p->memory, mem, sizeof mem);
  for (int v = 0; v < g->n_nodes; v++) {
    const pp_node *nd = &g->nodes[v];
    double best = INFINITY;
    int any = 0;
    for (int i = 0; i < nd->n_lists; i++) {
      const pp_tmpc_list *l = &nd->lists[i];
      if (!pp_problem_allows_t(p, l->t)) continue;
      for (int k = 0; k < l->count; k++) {
        if (p->no_recompute && l->tmpcs[k].is_recompute) continue;
        any = 1;
        double m = l->tmpcs[k].mem_a + l->tmpcs[k].mem_b;
        if (m < best) best = m;
      }
    }
    char label[128];
    pp_graph_node_label(g, v, label, sizeof label);
    if (!any) {
      snprintf(buf, n,
               "layer %lld (%s) has no usable TMPC for any tensor-parallel degree allowed (at most %d%s)",
               nd->orig_id, label, p->devices, p->no_tp ? ", and only t = 1 with --no-tp" : "");
      return;
    }
    if (best > p->memory) {
      snprintf(
          buf, n,
          "even one layer per stage does not fit in %s: layer %lld (%s) alone needs at least %s per device",
          mem, nd->orig_id, label, pp_format_bytes(best, need, sizeof need));
      return;
    }
  }
  if (p->planner == PP_PLANNER_EQUI) {
    snprintf(buf, n,
             "no equi candidate on at most %d devices fits in %s per device: with equal stages, one d and t "
             "and recomputation everywhere or nowhere, some stage is over the limit; the piper planner may "
             "still find a plan",
             p->devices, mem);
    return;
  }
  snprintf(buf, n,
           "no pipeline on at most %d devices fits in %s per device: every split leaves some stage over the "
           "limit once its microbatches in flight are counted; try more devices or more memory",
           p->devices, mem);
}

/* Prints the original ids of a stage compactly: "3-7, 9, 12-15". */
static void print_ids(FILE *out, const pp_graph *g, const pp_plan_stage *s, int width) {
  char buf[256];
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < s->n_nodes && len < sizeof buf - 32;) {
    int j = i;
    while (j + 1 < s->n_nodes && g->nodes[s->nodes[j + 1]].orig_id == g->nodes[s->nodes[j]].orig_id + 1) j++;
    long long a = g->nodes[s->nodes[i]].orig_id, b = g->nodes[s->nodes[j]].orig_id;
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%lld", len ? "," : "", a);
    if (j > i) len += (size_t)snprintf(buf + len, sizeof buf - len, "-%lld", b);
    i = j + 1;
  }
  if ((int)strlen(buf) > width) {
    buf[width - 3] = '.';
    buf[width - 2] = '.';
    buf[width - 1] = '\0';
  }
  fprintf(out, "%-*s", width, buf);
}

void pp_report_stages(FILE *out, const pp_graph *g, const pp_problem *p, const pp_plan *plan) {
  fprintf(out, "%5s  %-24s %6s %5s %5s %8s %10s %16s  %s\n", "stage", "layers (ids)", "count", "d", "t",
          "devices", "recompute", "load (s/sample)", "memory / limit");
  for (int i = 0; i < plan->n_stages; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    int rec = 0;
    for (int j = 0; j < s->n_nodes; j++) {
      const pp_tmpc_list *l = pp_graph_tmpcs(g, s->nodes[j], s->t);
      rec += l && s->tmpc[j] < l->count && l->tmpcs[s->tmpc[j]].is_recompute;
    }
    char m1[32], m2[32];
    fprintf(out, "%5d  ", i + 1);
    print_ids(out, g, s, 24);
    fprintf(out, " %6d %5d %5d %8d %10d %16.6g  %s / %s\n", s->n_nodes, s->d, s->t, s->d * s->t, rec, s->load,
            pp_format_bytes(s->memory, m1, sizeof m1), pp_format_bytes(p->memory, m2, sizeof m2));
  }
}

/* One line counting the TMPC ids the plan uses, first-use order, when some
 * id is neither "vanilla" nor "activation recomp" (generated layer variants;
 * a plan of the Piper format's two ids prints as it always did). */
static void report_tmpc_ids(FILE *out, const pp_graph *g, const pp_plan *plan) {
  enum { MAX_IDS = 16 };
  const char *ids[MAX_IDS];
  int count[MAX_IDS], n = 0, other = 0;
  for (int i = 0; i < plan->n_stages; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    for (int j = 0; j < s->n_nodes; j++) {
      const pp_tmpc_list *l = pp_graph_tmpcs(g, s->nodes[j], s->t);
      if (!l || s->tmpc[j] >= l->count) continue;
      const char *id = l->tmpcs[s->tmpc[j]].id;
      if (strcmp(id, "vanilla") != 0 && strcmp(id, PP_RECOMPUTE_TMPC_ID) != 0) other = 1;
      int k = 0;
      while (k < n && strcmp(ids[k], id) != 0) k++;
      if (k == n && n < MAX_IDS) {
        ids[n] = id;
        count[n++] = 0;
      }
      if (k < n) count[k]++;
    }
  }
  if (!other) return;
  fprintf(out, "TMPCs used:");
  for (int k = 0; k < n; k++) fprintf(out, "%s %s x%d", k ? "," : "", ids[k], count[k]);
  fputc('\n', out);
}

void pp_report_text(FILE *out, const pp_graph *g, const pp_problem *p, const pp_plan *plan,
                    const pp_run_info *info) {
  char mem[32], bw[32];
  fprintf(out, "input: %s (%d layers, %d edges)\n", info->input, g->n_nodes, g->n_edges);
  fprintf(out, "budget: %d devices, %s per device, %d microbatches per batch, %s/s%s%s%s%s\n", p->devices,
          pp_format_bytes(p->memory, mem, sizeof mem), p->microbatches,
          pp_format_bytes(p->bandwidth, bw, sizeof bw), p->no_dp ? ", no data parallelism" : "",
          p->no_tp ? ", no tensor parallelism" : "", p->no_recompute ? ", no activation recomputation" : "",
          p->knapsack == PP_KNAPSACK_EXACT ? ", exact knapsack" : "");
  if (p->zero || p->devices_per_node) {
    char ib[32];
    fprintf(out, "model:");
    if (p->zero) fprintf(out, " ZeRO stage %d%s", p->zero, p->devices_per_node ? ";" : "");
    if (p->devices_per_node)
      fprintf(out, " %d devices per node, %s/s per device inside a node (stages on nodes of their own)",
              p->devices_per_node, pp_format_bytes(p->intra_bandwidth, ib, sizeof ib));
    fprintf(out, "\n");
  }
  if (p->planner == PP_PLANNER_EQUI)
    fprintf(out, "search: equi baseline (PipeDream-2BW-like), equal stages of one d and t, %.2f s",
            info->seconds);
  else
    fprintf(out, "search: %d downsets, %lld downset pairs, %.2f s", info->downsets, info->pairs,
            info->seconds);
  if (info->ranks > 1) {
    char ex[32];
    fprintf(out, " on %d ranks, %s exchanged", info->ranks,
            pp_format_bytes(info->bytes_exchanged, ex, sizeof ex));
  }
  if (info->peak_rss > 0) {
    char rss[32];
    fprintf(out, ", peak memory %s per rank", pp_format_bytes(info->peak_rss, rss, sizeof rss));
  }
  fprintf(out, "\n");
  if (info->archive) fprintf(out, "archive: %s (written in %.2f s)\n", info->archive, info->write_seconds);
  fprintf(out, "\n");
  if (!plan || !plan->feasible) {
    char why[1024];
    pp_explain_infeasible(g, p, why, sizeof why);
    fprintf(out, "no feasible plan: %s\n", why);
    return;
  }
  pp_report_stages(out, g, p, plan);
  report_tmpc_ids(out, g, plan);
  fprintf(out, "\ntime per sample: %.12g s (%.6g samples/s)\n", plan->tps, 1.0 / plan->tps);
  if (p->schedule != PP_SCHEDULE_2BW || p->uniform) /* the 2bw default prints as it always did */
    fprintf(out, "schedule: %s%s; time per batch %.12g s, bubble %.4g%% of the 2bw time\n",
            pp_schedule_name(p->schedule), p->uniform ? ", uniform (d, t)" : "", plan->batch_time,
            100 * plan->bubble);
  if (pp_problem_chunks(p) > 1)
    fprintf(
        out, "virtual stages: %d chunks per device group, %d groups; stage i runs on group (i - 1) mod %d\n",
        pp_problem_chunks(p), plan->n_stages / pp_problem_chunks(p), plan->n_stages / pp_problem_chunks(p));
  fprintf(out, "devices used: %d of %d; sum of data-parallel degrees: %d; stages: %d\n", plan->devices_used,
          p->devices, plan->sum_d, plan->n_stages);
  pp_report_throughput(out, 0, g, plan->tps, plan->devices_used);
}

void pp_report_json_stages(FILE *out, const pp_graph *g, const pp_plan *plan) {
  for (int i = 0; i < plan->n_stages; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    fprintf(out, "%s{\"nodes\": [", i ? ", " : "");
    for (int j = 0; j < s->n_nodes; j++) fprintf(out, "%s%lld", j ? ", " : "", g->nodes[s->nodes[j]].orig_id);
    fprintf(out, "], \"d\": %d, \"t\": %d, \"tmpc\": {", s->d, s->t);
    for (int j = 0; j < s->n_nodes; j++) {
      const pp_tmpc_list *l = pp_graph_tmpcs(g, s->nodes[j], s->t);
      fprintf(out, "%s\"%lld\": ", j ? ", " : "", g->nodes[s->nodes[j]].orig_id);
      pp_json_string(out, l && s->tmpc[j] < l->count ? l->tmpcs[s->tmpc[j]].id : "");
    }
    fputs("}, \"load\": ", out);
    if (isfinite(s->load))
      fprintf(out, "%.17g", s->load);
    else
      fputs("null", out);
    fprintf(out, ", \"memory_bytes\": %.17g}", s->memory);
  }
}

void pp_report_json(FILE *out, const pp_graph *g, const pp_problem *p, const pp_plan *plan,
                    const pp_run_info *info) {
  int feasible = plan && plan->feasible;
  fprintf(out, "{\"feasible\": %s, ", feasible ? "true" : "false");
  if (p->planner == PP_PLANNER_EQUI) fputs("\"planner\": \"equi\", ", out);
  if (p->schedule != PP_SCHEDULE_2BW || p->uniform) {
    fprintf(out, "\"schedule\": \"%s\", \"uniform\": %s, ", pp_schedule_name(p->schedule),
            p->uniform ? "true" : "false");
    if (feasible) fprintf(out, "\"batch_time\": %.17g, \"bubble\": %.17g, ", plan->batch_time, plan->bubble);
  }
  /* the sharding and network model, when used (a Piper-model report prints as it always did) */
  if (p->zero) fprintf(out, "\"zero\": %d, ", p->zero);
  if (p->devices_per_node)
    fprintf(out, "\"devices_per_node\": %d, \"intra_node_bandwidth\": %.17g, \"bandwidth\": %.17g, ",
            p->devices_per_node, p->intra_bandwidth, p->bandwidth);
  fputs("\"tps\": ", out);
  if (feasible)
    fprintf(out, "%.17g", plan->tps);
  else
    fputs("null", out);
  fprintf(out, ", \"devices_used\": %d, \"sum_dp_degrees\": %d", feasible ? plan->devices_used : 0,
          feasible ? plan->sum_d : 0);
  pp_report_throughput(out, 1, g, feasible ? plan->tps : 0, feasible ? plan->devices_used : 0);
  fputs(", \"stages\": [", out);
  if (feasible) pp_report_json_stages(out, g, plan);
  fprintf(out,
          "], \"downsets\": %d, \"seconds\": %.6f, \"ranks\": %d, \"bytes_exchanged\": %.0f, "
          "\"peak_rss_bytes\": %.0f",
          info->downsets, info->seconds, info->ranks, info->bytes_exchanged, info->peak_rss);
  if (info->archive) {
    fputs(", \"archive\": ", out);
    pp_json_string(out, info->archive);
    fprintf(out, ", \"archive_seconds\": %.6f", info->write_seconds);
  }
  if (!feasible) {
    char why[1024];
    pp_explain_infeasible(g, p, why, sizeof why);
    fputs(", \"reason\": ", out);
    pp_json_string(out, why);
  }
  fputs("}\n", out);
}

void pp_report(FILE *out, int json, const pp_graph *g, const pp_problem *p, const pp_plan *plan,
               const pp_run_info *info) {
  if (json)
    pp_report_json(out, g, p, plan, info);
  else
    pp_report_text(out, g, p, plan, info);
}
