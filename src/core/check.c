/*
 * check.c - independent verification of a plan (see include/piper/check.h).
 * Deliberately shares no code with stage.c or dp.c: the arithmetic is
 * written from the model's definition, stage by stage, and the schedules'
 * batch times from their formulas (README, "Schedules").
 */
#include "piper/check.h"

#include <math.h>
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
 * 2bw and 1f1b: Piper's y = ceil(suffix sum of d / d); gpipe: m = N / d;
 * interleaved 1F1B (v >= 2) on device group j of p: ceil(W / v) per chunk,
 * W = min(v*m, 2(p-j-1) + (v-1)p + 1), Megatron-LM's warm-up count plus the
 * microbatch in progress (Narayanan et al. 2021, Sec. 2.2.2). */
static int in_flight(const pp_problem *p, int suffix, int d, int group, int groups) {
  const int v = pp_problem_chunks(p), m = p->microbatches / d;
  if (v > 1) {
    long long w = 2LL * (groups - group - 1) + (long long)(v - 1) * groups + 1;
    if (w > (long long)v * m) w = (long long)v * m;
    return (int)((w + v - 1) / v);
  }
  if (p->schedule == PP_SCHEDULE_GPIPE) return m > 0 ? m : 1;
  return (suffix + d - 1) / d;
}

/* Load, microbatch time, sync and memory (for y) of stage s, written from
 * the model: T/d + [E/d + 4(d-1)P/(dN)]/B per node.  PP_ERR_INPUT if a node
 * lacks the TMPC or it is not allowed. */
static pp_status stage_costs(const pp_graph *g, const pp_problem *p, int i, pp_plan_stage *s, int y,
                             char *in_stage, pp_error *err) {
  const int n = g->n_nodes, d = s->d;
  memset(in_stage, 0, (size_t)n);
  for (int j = 0; j < s->n_nodes; j++) in_stage[s->nodes[j]] = 1;
  double compute = 0.0, edge_bytes = 0.0, resync_bytes = 0.0, memory = 0.0;
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
    memory += m->mem_a * y + m->mem_b;
  }
  s->y = y;
  s->memory = memory;
  s->load = (edge_bytes / d + resync_bytes) / p->bandwidth + compute / d;
  /* one replica, one microbatch: the load without its sync term, times d */
  s->mb_time = edge_bytes / p->bandwidth + compute;
  s->sync_time = resync_bytes * p->microbatches / p->bandwidth;
  return PP_OK;
}

/* The batch time of a synchronous schedule over the device groups:
 *   T = (1/v) sum_c t_c + max_j [ (m_j - 1/v) D_j + sync_j ]
 * with t_c the stages' microbatch times, D_j and sync_j the sums over the
 * stages of group j, m_j = N / d_j.  v = 1: T = sum_i t_i + max_i [(m_i - 1)
 * t_i + sync_i], i.e. (m + p - 1) t + sync for p equal stages (Narayanan et
 * al. 2021, Sec. 2.2; Zheng et al. 2022 (Alpa), Sec. 5.2, Eq. 2). */
static double sync_batch_time(const pp_problem *p, const pp_plan *plan, int groups) {
  const int v = pp_problem_chunks(p);
  double sum = 0.0, worst = 0.0;
  for (int i = 0; i < plan->n_stages; i++) sum += plan->stages[i].mb_time;
  for (int j = 0; j < groups; j++) {
    double D = 0.0, sync = 0.0;
    int d = 1;
    for (int i = j; i < plan->n_stages; i += groups) {
      D += plan->stages[i].mb_time;
      sync += plan->stages[i].sync_time;
      d = plan->stages[i].d;
    }
    const double m = (double)(p->microbatches / d);
    const double x = (m - 1.0 / v) * D + sync;
    if (x > worst) worst = x;
  }
  return sum / v + worst;
}

pp_status pp_check_evaluate(const pp_graph *g, const pp_problem *p, pp_plan *plan, pp_error *err) {
  const int n = g->n_nodes, v = pp_problem_chunks(p);
  int *stage_of = pp_xmalloc(sizeof(int) * (size_t)n + 1);
  char *in_stage = pp_xmalloc((size_t)n + 1);
  pp_status st = check_structure(g, plan, stage_of, err);
  if (st) goto done;
  if (v > 1 && (p->schedule != PP_SCHEDULE_1F1B || plan->n_stages % v != 0)) {
    st = pp_error_set(err, PP_ERR_INPUT,
                      "virtual stages need the 1f1b schedule and a stage count (%d) divisible by v = %d",
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
  if (v > 1) /* a device holds every chunk of its group */
    for (int j = 0; j < groups; j++) {
      double mem = 0.0;
      for (int i = j; i < plan->n_stages; i += groups) mem += plan->stages[i].memory;
      for (int i = j; i < plan->n_stages; i += groups) plan->stages[i].memory = mem;
    }
  const double N = p->microbatches;
  if (p->schedule == PP_SCHEDULE_2BW) {
    plan->tps = max_load;
    plan->batch_time = N * max_load;
    plan->bubble = 0.0;
  } else {
    plan->batch_time = sync_batch_time(p, plan, groups);
    plan->tps = plan->batch_time / N;
    plan->bubble = max_load > 0 ? plan->batch_time / (N * max_load) - 1.0 : 0.0;
  }
  plan->devices_used = devices;
  plan->sum_d = sum_d;
done:
  free(stage_of);
  free(in_stage);
  return st;
}

/* The degree options, before evaluating (a forbidden t may lack TMPCs):
 * PP_ERR_INFEASIBLE naming the first violation. */
static pp_status check_degrees(const pp_problem *p, const pp_plan *plan, pp_error *err) {
  for (int i = 0; i < plan->n_stages; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    if (!pp_problem_allows_d(p, s->d))
      return pp_error_set(err, PP_ERR_INFEASIBLE, "stage %d: data-parallel degree %d is not allowed", i,
                          s->d);
    if (!pp_problem_allows_t(p, s->t))
      return pp_error_set(err, PP_ERR_INFEASIBLE, "stage %d: tensor-parallel degree %d is not allowed", i,
                          s->t);
    if ((p->uniform || pp_problem_chunks(p) > 1) && (s->d != plan->stages[0].d || s->t != plan->stages[0].t))
      return pp_error_set(err, PP_ERR_INFEASIBLE,
                          "stage %d: (d, t) = (%d, %d) differs from stage 0's (%d, %d)", i, s->d, s->t,
                          plan->stages[0].d, plan->stages[0].t);
  }
  return PP_OK;
}

/* Devices and memory of an evaluated plan: PP_ERR_INFEASIBLE naming the
 * first violation. */
static pp_status check_limits(const pp_problem *p, const pp_plan *plan, pp_error *err) {
  if (plan->devices_used > p->devices)
    return pp_error_set(err, PP_ERR_INFEASIBLE, "plan uses %d devices, more than %d", plan->devices_used,
                        p->devices);
  for (int i = 0; i < plan->n_stages; i++)
    if (plan->stages[i].memory > p->memory * (1 + 1e-9))
      return pp_error_set(err, PP_ERR_INFEASIBLE, "stage %d needs %.17g bytes per device, more than %.17g", i,
                          plan->stages[i].memory, p->memory);
  return PP_OK;
}

pp_status pp_check_plan(const pp_graph *g, const pp_problem *p, pp_plan *plan, pp_error *err) {
  pp_status st = plan->n_stages < 1 ? pp_error_set(err, PP_ERR_INPUT, "plan has no stages")
                                    : check_degrees(p, plan, err);
  if (!st) st = pp_check_evaluate(g, p, plan, err);
  if (!st) st = check_limits(p, plan, err);
  if (st) { /* after a search, any violation is a bug */
    plan->feasible = 0;
    if (err) err->code = PP_ERR_INTERNAL;
    return PP_ERR_INTERNAL;
  }
  plan->feasible = 1;
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
