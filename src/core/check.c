/*
 * check.c - independent verification of a plan (see include/piper/check.h).
 * Deliberately shares no code with stage.c or dp.c: the arithmetic is
 * written from the model's definition, stage by stage, and the schedules'
 * batch times from their formulas (README, "Schedules").
 */
#include "piper/check.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every node in exactly one non-empty stage, no edge going backwards.
 * stage_of[n] is filled.  PP_ERR_INPUT naming the first problem. */
static pp_status check_structure(const pp_graph *g, const pp_plan *plan, int *stage_of, pp_error *err) {
  const int n = g->n_nodes;
  for (int v = 0; v < n; v++) stage_of[v] = -1;
  if (plan->n_stages < 1) return pp_error_set(err, PP_ERR_INPUT, "plan has no stages");
  for (int i = 0; i < plan->n_stages; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    if (s->n_nodes < 1) return pp_error_set(err, PP_ERR_INPUT, "stage %d is empty", i);
    for (int j = 0; j < s->n_nodes; j++) {
      int v = s->nodes[j];
      if (v < 0 || v >= n || stage_of[v] != -1)
        return pp_error_set(err, PP_ERR_INPUT, "stage %d: node index %d is out of range or repeated", i, v);
      stage_of[v] = i;
    }
    if (s->d < 1)
      return pp_error_set(err, PP_ERR_INPUT, "stage %d: data-parallel degree %d is not allowed", i, s->d);
    if (s->t < 1)
      return pp_error_set(err, PP_ERR_INPUT, "stage %d: tensor-parallel degree %d is not allowed", i, s->t);
  }
  for (int v = 0; v < n; v++)
    if (stage_of[v] < 0)
      return pp_error_set(err, PP_ERR_INPUT, "node %lld is in no stage", g->nodes[v].orig_id);
  for (int e = 0; e < g->n_edges; e++)
    if (stage_of[g->edges[e].src] > stage_of[g->edges[e].dst])
      return pp_error_set(err, PP_ERR_INPUT, "edge %lld -> %lld goes backwards (stage %d -> %d)",
                          g->nodes[g->edges[e].src].orig_id, g->nodes[g->edges[e].dst].orig_id,
                          stage_of[g->edges[e].src], stage_of[g->edges[e].dst]);
  return PP_OK;
}

/* Microbatches whose activations stage i keeps (README, "Schedules"):
 * 2bw and 1f1b: Piper's y = ceil(suffix sum of d / d); gpipe: m = N / d
 * (also with v chunks: the breadth-first looped schedule runs every
 * forward first, Lamy-Poirier 2023, Sec. 3); interleaved 1F1B (v >= 2) on
 * device group j of p: ceil(W / v) per chunk, W = min(v*m, 2(p-j-1) +
 * (v-1)p + 1), Megatron-LM's warm-up count plus the microbatch in progress
 * (Narayanan et al. 2021, Sec. 2.2.2). */
static int in_flight(const pp_problem *p, int suffix, int d, int group, int groups) {
  const int v = pp_problem_chunks(p), m = p->microbatches / d;
  if (p->schedule == PP_SCHEDULE_GPIPE) return m > 0 ? m : 1;
  if (v > 1) {
    long long w = 2LL * (groups - group - 1) + (long long)(v - 1) * groups + 1;
    if (w > (long long)v * m) w = (long long)v * m;
    return (int)((w + v - 1) / v);
  }
  return (suffix + d - 1) / d;
}

/* Seconds to synchronise P parameter bytes over d replicas of t devices
 * once per batch, from the model: a ring all-reduce moving 4 (d-1)/d P per
 * device at B (the reference); on a two-level network (G devices per node,
 * stages on nodes of their own) at Bi inside a node when d t <= G, else
 * hierarchical over n = ceil(d/g) nodes of g = floor(G/t) replicas:
 * 4 (g-1)/g P at Bi plus 4 (n-1)/n P/g at B; ZeRO-3 moves 1.5 times as much
 * (Rajbhandari et al. 2020, Sec. 7). */
static double sync_seconds(const pp_problem *p, double P, int d, int t) {
  double sec;
  const int G = p->devices_per_node;
  if (d <= 1) {
    sec = 0.0;
  } else if (G <= 0) {
    sec = 4.0 * (d - 1) / d * P / p->bandwidth;
  } else if ((long long)d * t <= G) {
    sec = 4.0 * (d - 1) / d * P / p->intra_bandwidth;
  } else {
    const int g = G / t > 0 ? G / t : 1, nodes = (d + g - 1) / g;
    sec = 4.0 * (g - 1) / g * P / p->intra_bandwidth + 4.0 * (nodes - 1) / nodes * (P / g) / p->bandwidth;
  }
  return p->zero == 3 ? 1.5 * sec : sec;
}

/* Bytes of TMPC m per device at data-parallel degree d: A y + B, where ZeRO
 * stage z keeps 1/d of the optimizer state (z >= 1), of the gradients
 * (z >= 2) and of the weights (z = 3) of B. */
static double tmpc_memory(const pp_tmpc *m, int zero, int d, int y) {
  if (zero == 0) return m->mem_a * y + m->mem_b;
  double shard = m->optimizer_bytes;
  if (zero >= 2) shard += m->gradient_bytes;
  if (zero >= 3) shard += m->weight_bytes;
  const double rest = m->mem_b > shard ? m->mem_b - shard : 0.0;
  return m->mem_a * y + (rest + shard / d);
}

/* Load, microbatch time, sync and memory (for y) of stage s, written from
 * the model: T/d + [E/d + 4(d-1)P/(dN)]/B per node (the sync term as
 * sync_seconds).  PP_ERR_INPUT if a node lacks the TMPC or it is not
 * allowed. */
static pp_status stage_costs(const pp_graph *g, const pp_problem *p, int i, pp_plan_stage *s, int y,
                             char *in_stage, pp_error *err) {
  const int n = g->n_nodes, d = s->d;
  memset(in_stage, 0, (size_t)n);
  for (int j = 0; j < s->n_nodes; j++) in_stage[s->nodes[j]] = 1;
  double compute = 0.0, edge_bytes = 0.0, resync_bytes = 0.0, memory = 0.0, params = 0.0;
  for (int j = 0; j < s->n_nodes; j++) {
    int v = s->nodes[j];
    const pp_tmpc_list *list = pp_graph_tmpcs(g, v, s->t);
    if (!list || !s->tmpc || s->tmpc[j] < 0 || s->tmpc[j] >= list->count)
      return pp_error_set(err, PP_ERR_INPUT, "stage %d: node %lld has no TMPC %d for t = %d", i,
                          g->nodes[v].orig_id, s->tmpc ? s->tmpc[j] : -1, s->t);
    const pp_tmpc *m = &list->tmpcs[s->tmpc[j]];
    if (p->no_recompute && m->is_recompute)
      return pp_error_set(err, PP_ERR_INPUT, "stage %d: node %lld recomputes activations", i,
                          g->nodes[v].orig_id);
    const pp_node *nd = &g->nodes[v];
    compute += m->time_per_sample;
    for (int k = 0; k < nd->in_deg; k++) {
      const pp_edge *e = &g->edges[nd->in_edges[k]];
      if (!in_stage[e->src]) edge_bytes += 2 * (e->cost + m->sync_fw[k]);
    }
    for (int k = 0; k < nd->out_deg; k++) {
      const pp_edge *e = &g->edges[nd->out_edges[k]];
      if (!in_stage[e->dst]) edge_bytes += 2 * (e->cost + m->sync_bw[k]);
    }
    resync_bytes += 4.0 * (d - 1) * m->parameter_size / d / p->microbatches;
    params += m->parameter_size;
    memory += tmpc_memory(m, p->zero, d, y);
  }
  s->y = y;
  s->memory = memory;
  /* one replica, one microbatch: the load without its sync term, times d */
  s->mb_time = edge_bytes / p->bandwidth + compute;
  if (p->zero != 3 && p->devices_per_node <= 0) {
    s->load = (edge_bytes / d + resync_bytes) / p->bandwidth + compute / d;
    s->sync_time = resync_bytes * p->microbatches / p->bandwidth;
  } else {
    s->sync_time = sync_seconds(p, params, d, s->t);
    s->load = edge_bytes / d / p->bandwidth + s->sync_time / p->microbatches + compute / d;
  }
  return PP_OK;
}

/* The batch time of a synchronous schedule over the stages (chunks) c:
 *   T = (1/v) sum_c t_c + max_c [ (m_c v - 1) t_c + v sync_c ]
 * with t_c the chunk's microbatch time, sync_c its gradient sync, m_c =
 * N / d_c.  v = 1: T = sum_i t_i + max_i [(m_i - 1) t_i + sync_i], i.e.
 * (m + p - 1) t + sync for p equal stages (Narayanan et al. 2021, Sec. 2.2;
 * Zheng et al. 2022 (Alpa), Sec. 5.2, Eq. 2).  v >= 2: every device runs v
 * chunk slots per microbatch, each as long as the slowest chunk; for p v
 * equal chunks of t / v this is (m + (p - 1) / v) t + sync, the interleaved
 * schedule's bubble (p - 1) / (v m) (Narayanan et al. 2021, Sec. 2.2.2). */
static double sync_batch_time(const pp_problem *p, const pp_plan *plan) {
  const int v = pp_problem_chunks(p);
  double sum = 0.0, worst = 0.0;
  for (int i = 0; i < plan->n_stages; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    sum += s->mb_time;
    const double m = (double)(p->microbatches / s->d);
    const double x = (m * v - 1.0) * s->mb_time + v * s->sync_time;
    if (x > worst) worst = x;
  }
  return sum / v + worst;
}

pp_status pp_check_evaluate(const pp_graph *g, const pp_problem *p, pp_plan *plan, pp_error *err) {
  assert(g && p && plan);
  const int n = g->n_nodes, v = pp_problem_chunks(p);
  int *stage_of = pp_xmalloc(sizeof(int) * (size_t)n + 1);
  char *in_stage = pp_xmalloc((size_t)n + 1);
  pp_status st = check_structure(g, plan, stage_of, err);
  if (st) goto done;
  if (v > 1 && (p->schedule == PP_SCHEDULE_2BW || plan->n_stages % v != 0)) {
    st = pp_error_set(
        err, PP_ERR_INPUT,
        "virtual stages need the 1f1b or gpipe schedule and a stage count (%d) divisible by v = %d",
        plan->n_stages, v);
    goto done;
  }
  const int groups = plan->n_stages / v;
  int devices = 0, sum_d = 0;
  for (int i = 0; i < plan->n_stages; i++) {
    plan->stages[i].device_group = i % groups;
    sum_d += i < groups ? plan->stages[i].d : 0;
    devices += i < groups ? plan->stages[i].d * plan->stages[i].t : 0;
  }
  int suffix = sum_d;
  double max_load = 0.0;
  for (int i = 0; i < plan->n_stages; i++) {
    pp_plan_stage *s = &plan->stages[i];
    const int y = in_flight(p, suffix, s->d, i % groups, groups);
    if (v == 1) suffix -= s->d;
    if ((st = stage_costs(g, p, i, s, y, in_stage, err))) goto done;
    if (s->load > max_load) max_load = s->load;
  }
  double max_device_load = max_load; /* a device's work per sample: its chunks' loads */
  if (v > 1) {                       /* a device holds every chunk of its group */
    max_device_load = 0.0;
    for (int j = 0; j < groups; j++) {
      double mem = 0.0, load = 0.0;
      for (int i = j; i < plan->n_stages; i += groups) mem += plan->stages[i].memory;
      for (int i = j; i < plan->n_stages; i += groups) load += plan->stages[i].load;
      for (int i = j; i < plan->n_stages; i += groups) plan->stages[i].memory = mem;
      if (load > max_device_load) max_device_load = load;
    }
  }
  const double N = p->microbatches;
  if (p->schedule == PP_SCHEDULE_2BW) {
    plan->tps = max_load;
    plan->batch_time = N * max_load;
    plan->bubble = 0.0;
  } else {
    plan->batch_time = sync_batch_time(p, plan);
    plan->tps = plan->batch_time / N;
    plan->bubble = max_device_load > 0 ? plan->batch_time / (N * max_device_load) - 1.0 : 0.0;
  }
  plan->devices_used = devices;
  plan->sum_d = sum_d;
done:
  free(stage_of);
  free(in_stage);
  return st;
}

/* Records one violation (the count goes on past the kept ones). */
static void violation(pp_check_report *r, pp_violation_kind kind, int stage, long long node, double amount,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void violation(pp_check_report *r, pp_violation_kind kind, int stage, long long node, double amount,
                      const char *fmt, ...) {
  if (r->count < PP_CHECK_MAX_VIOLATIONS) {
    pp_violation *x = &r->v[r->count];
    x->kind = kind;
    x->stage = stage;
    x->node = node;
    x->amount = amount;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->what, sizeof x->what, fmt, ap);
    va_end(ap);
  }
  r->count++;
}

/* A node of stage s without a TMPC list for s->t: its index in s, else -1;
 * *missing counts them. */
static int first_without_t(const pp_graph *g, const pp_plan_stage *s, int *missing) {
  int first = -1;
  *missing = 0;
  for (int j = 0; j < s->n_nodes; j++)
    if (s->nodes[j] >= 0 && s->nodes[j] < g->n_nodes && !pp_graph_tmpcs(g, s->nodes[j], s->t)) {
      if (first < 0) first = j;
      ++*missing;
    }
  return first;
}

/* The degree rules, before evaluating (a forbidden t may lack TMPCs).
 * Returns 1 if every stage's t is usable (allowed and offered). */
static int check_degrees(const pp_graph *g, const pp_problem *p, const pp_plan *plan, pp_check_report *r) {
  int usable = 1;
  for (int i = 0; i < plan->n_stages; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    if (s->d >= 1 && p->microbatches % s->d != 0)
      violation(r, PP_VIOLATION_DIVIDES, i, -1, s->d,
                "stage %d: data-parallel degree %d is not allowed (it does not divide N = %d)", i, s->d,
                p->microbatches);
    else if (!pp_problem_allows_d(p, s->d))
      violation(r, PP_VIOLATION_DEGREE, i, -1, s->d, "stage %d: data-parallel degree %d is not allowed", i,
                s->d);
    int missing = 0, j = s->t >= 1 ? first_without_t(g, s, &missing) : -1;
    if (!pp_problem_allows_t(p, s->t)) {
      violation(r, PP_VIOLATION_DEGREE, i, -1, s->t, "stage %d: tensor-parallel degree %d is not allowed", i,
                s->t);
      usable = 0;
    } else if (j >= 0) {
      char more[48] = "";
      if (missing > 1) snprintf(more, sizeof more, " (nor do %d more nodes)", missing - 1);
      violation(r, PP_VIOLATION_DEGREE, i, g->nodes[s->nodes[j]].orig_id, s->t,
                "stage %d: node %lld has no TMPC %d for t = %d%s", i, g->nodes[s->nodes[j]].orig_id,
                s->tmpc ? s->tmpc[j] : 0, s->t, more);
      usable = 0;
    }
    if ((p->uniform || pp_problem_chunks(p) > 1) && (s->d != plan->stages[0].d || s->t != plan->stages[0].t))
      violation(r, PP_VIOLATION_UNIFORM, i, -1, 0,
                "stage %d: (d, t) = (%d, %d) differs from stage 0's (%d, %d)", i, s->d, s->t,
                plan->stages[0].d, plan->stages[0].t);
  }
  return usable;
}

/* Recomputation, devices and memory of an evaluated plan. */
static void check_limits(const pp_graph *g, const pp_problem *p, const pp_plan *plan, pp_check_report *r) {
  for (int i = 0; p->no_recompute && i < plan->n_stages; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    for (int j = 0; j < s->n_nodes; j++)
      if (pp_graph_tmpcs(g, s->nodes[j], s->t)->tmpcs[s->tmpc[j]].is_recompute) {
        violation(r, PP_VIOLATION_RECOMPUTE, i, g->nodes[s->nodes[j]].orig_id, 0,
                  "stage %d: node %lld recomputes activations", i, g->nodes[s->nodes[j]].orig_id);
        break;
      }
  }
  if (plan->devices_used > p->devices)
    violation(r, PP_VIOLATION_DEVICES, -1, -1, plan->devices_used - p->devices,
              "plan uses %d devices, more than %d", plan->devices_used, p->devices);
  for (int i = 0; i < plan->n_stages; i++)
    if (plan->stages[i].memory > p->memory * (1 + 1e-9))
      violation(r, PP_VIOLATION_MEMORY, i, -1, plan->stages[i].memory - p->memory,
                "stage %d needs %.17g bytes per device, more than %.17g", i, plan->stages[i].memory,
                p->memory);
}

/* devices_used and sum_d without evaluating (a t is unusable). */
static void count_devices(const pp_problem *p, pp_plan *plan) {
  const int groups = plan->n_stages / pp_problem_chunks(p) > 0 ? plan->n_stages / pp_problem_chunks(p) : 1;
  plan->devices_used = plan->sum_d = 0;
  for (int i = 0; i < groups && i < plan->n_stages; i++) {
    plan->devices_used += plan->stages[i].d * plan->stages[i].t;
    plan->sum_d += plan->stages[i].d;
  }
  plan->tps = plan->batch_time = plan->bubble = NAN;
  for (int i = 0; i < plan->n_stages; i++) plan->stages[i].load = plan->stages[i].memory = NAN;
}

pp_status pp_check_plan_report(const pp_graph *g, const pp_problem *p, pp_plan *plan, pp_check_report *r,
                               pp_error *err) {
  assert(g && p && plan && r);
  r->count = 0;
  plan->feasible = 0;
  if (plan->n_stages < 1) return pp_error_set(err, PP_ERR_INPUT, "plan has no stages");
  /* the no_recompute rule is judged here, not as a structural error */
  pp_problem q = *p;
  q.no_recompute = 0;
  if (!check_degrees(g, p, plan, r)) {
    int *stage_of = pp_xmalloc(sizeof(int) * (size_t)g->n_nodes + 1);
    pp_status st = check_structure(g, plan, stage_of, err);
    free(stage_of);
    if (!st) count_devices(p, plan);
    if (!st && plan->devices_used > p->devices)
      violation(r, PP_VIOLATION_DEVICES, -1, -1, plan->devices_used - p->devices,
                "plan uses %d devices, more than %d", plan->devices_used, p->devices);
    return st;
  }
  pp_status st = pp_check_evaluate(g, &q, plan, err);
  if (st) return st;
  check_limits(g, p, plan, r);
  plan->feasible = r->count == 0;
  return PP_OK;
}

pp_status pp_check_plan(const pp_graph *g, const pp_problem *p, pp_plan *plan, pp_error *err) {
  pp_check_report *r = pp_xmalloc(sizeof *r);
  pp_status st = pp_check_plan_report(g, p, plan, r, err);
  if (!st && r->count > 0) st = pp_error_set(err, PP_ERR_INTERNAL, "%s", r->v[0].what);
  free(r);
  if (st) { /* after a search, any violation is a bug */
    plan->feasible = 0;
    if (err) err->code = PP_ERR_INTERNAL;
    return PP_ERR_INTERNAL;
  }
  return PP_OK;
}

pp_status pp_check_plan_optimum(const pp_graph *g, const pp_problem *p, pp_plan *plan, double optimum,
                                pp_error *err) {
  pp_status st = pp_check_plan(g, p, plan, err);
  if (st) {
    pp_error_prefix(err, "the plan fails the independent check (this is a bug)");
    return st;
  }
  if (fabs(plan->tps - optimum) > 1e-9 * fabs(optimum))
    return pp_error_set(
        err, PP_ERR_INTERNAL,
        "the checker's TPS %.17g differs from the optimum %.17g of the tables (this is a bug)", plan->tps,
        optimum);
  return PP_OK;
}
