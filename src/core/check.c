/*
 * check.c - independent verification of a plan (see include/piper/check.h).
 * Deliberately shares no code with stage.c: the arithmetic is written from
 * the model's definition, stage by stage.
 */
#include "piper/check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

pp_status pp_check_plan(const pp_graph *g, const pp_problem *p, pp_plan *plan, pp_error *err) {
  const int n = g->n_nodes;
  int *stage_of = pp_xmalloc(sizeof(int) * (size_t)n);
  char *in_stage = pp_xmalloc((size_t)n + 1);
  pp_status st = PP_OK;
  for (int v = 0; v < n; v++) stage_of[v] = -1;
  int devices = 0, sum_d = 0;
  if (plan->n_stages < 1) {
    st = pp_error_set(err, PP_ERR_INTERNAL, "plan has no stages");
    goto done;
  }
  for (int i = 0; i < plan->n_stages; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    if (s->n_nodes < 1) {
      st = pp_error_set(err, PP_ERR_INTERNAL, "stage %d is empty", i);
      goto done;
    }
    for (int j = 0; j < s->n_nodes; j++) {
      int v = s->nodes[j];
      if (v < 0 || v >= n || stage_of[v] != -1) {
        st = pp_error_set(err, PP_ERR_INTERNAL, "stage %d: node index %d is out of range or repeated", i, v);
        goto done;
      }
      stage_of[v] = i;
    }
    if (!pp_problem_allows_d(p, s->d)) {
      st = pp_error_set(err, PP_ERR_INTERNAL, "stage %d: data-parallel degree %d is not allowed", i, s->d);
      goto done;
    }
    if (!pp_problem_allows_t(p, s->t)) {
      st = pp_error_set(err, PP_ERR_INTERNAL, "stage %d: tensor-parallel degree %d is not allowed", i, s->t);
      goto done;
    }
    devices += s->d * s->t;
    sum_d += s->d;
  }
  for (int v = 0; v < n; v++)
    if (stage_of[v] < 0) {
      st = pp_error_set(err, PP_ERR_INTERNAL, "node %lld is in no stage", g->nodes[v].orig_id);
      goto done;
    }
  for (int e = 0; e < g->n_edges; e++)
    if (stage_of[g->edges[e].src] > stage_of[g->edges[e].dst]) {
      st = pp_error_set(err, PP_ERR_INTERNAL, "edge %lld -> %lld goes backwards (stage %d -> %d)",
                        g->nodes[g->edges[e].src].orig_id, g->nodes[g->edges[e].dst].orig_id,
                        stage_of[g->edges[e].src], stage_of[g->edges[e].dst]);
      goto done;
    }
  if (devices > p->devices) {
    st = pp_error_set(err, PP_ERR_INTERNAL, "plan uses %d devices, more than %d", devices, p->devices);
    goto done;
  }
  double tps = 0.0;
  int suffix = sum_d;
  for (int i = 0; i < plan->n_stages; i++) {
    pp_plan_stage *s = &plan->stages[i];
    const int d = s->d;
    const int y = (suffix + d - 1) / d;
    suffix -= d;
    memset(in_stage, 0, (size_t)n);
    for (int j = 0; j < s->n_nodes; j++) in_stage[s->nodes[j]] = 1;
    double compute = 0.0, edge_bytes = 0.0, resync_bytes = 0.0, memory = 0.0;
    for (int j = 0; j < s->n_nodes; j++) {
      int v = s->nodes[j];
      const pp_tmpc_list *list = pp_graph_tmpcs(g, v, s->t);
      if (!list || s->tmpc[j] < 0 || s->tmpc[j] >= list->count) {
        st = pp_error_set(err, PP_ERR_INTERNAL, "stage %d: node %lld has no TMPC %d for t = %d", i,
                          g->nodes[v].orig_id, s->tmpc[j], s->t);
        goto done;
      }
      const pp_tmpc *m = &list->tmpcs[s->tmpc[j]];
      if (p->no_recompute && m->is_recompute) {
        st = pp_error_set(err, PP_ERR_INTERNAL, "stage %d: node %lld recomputes activations", i,
                          g->nodes[v].orig_id);
        goto done;
      }
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
    if (memory > p->memory * (1 + 1e-9)) {
      st = pp_error_set(err, PP_ERR_INTERNAL, "stage %d needs %.17g bytes per device, more than %.17g", i,
                        memory, p->memory);
      goto done;
    }
    s->y = y;
    s->memory = memory;
    s->load = (edge_bytes / d + resync_bytes) / p->bandwidth + compute / d;
    if (s->load > tps) tps = s->load;
  }
  plan->tps = tps;
  plan->devices_used = devices;
  plan->sum_d = sum_d;
  plan->feasible = 1;
done:
  free(stage_of);
  free(in_stage);
  return st;
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
