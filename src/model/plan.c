/*
 * plan.c - ownership of pp_plan.
 */
#include "piper/plan.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "piper/error.h"

pp_plan *pp_plan_new(int n_stages) {
  pp_plan *p = pp_xcalloc(1, sizeof *p);
  p->tps = INFINITY;
  p->n_stages = n_stages;
  p->stages = pp_xcalloc((size_t)n_stages + 1, sizeof *p->stages);
  return p;
}

void pp_plan_free(pp_plan *plan) {
  if (!plan) return;
  for (int i = 0; i < plan->n_stages; i++) {
    free(plan->stages[i].nodes);
    free(plan->stages[i].tmpc);
  }
  free(plan->stages);
  free(plan);
}

void pp_plan_pack(const pp_plan *plan, pp_pack *w) {
  pp_pack_i32(w, plan->feasible);
  pp_pack_i32(w, plan->devices_used);
  pp_pack_i32(w, plan->sum_d);
  pp_pack_i32(w, plan->n_stages);
  pp_pack_f64(w, plan->tps);
  for (int i = 0; i < plan->n_stages; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    pp_pack_i32(w, s->n_nodes);
    pp_pack_i32(w, s->d);
    pp_pack_i32(w, s->t);
    pp_pack_i32(w, s->y);
    pp_pack_f64(w, s->load);
    pp_pack_f64(w, s->memory);
    pp_pack_ints(w, s->nodes, (size_t)s->n_nodes);
    pp_pack_ints(w, s->tmpc, (size_t)s->n_nodes);
  }
}

pp_plan *pp_plan_unpack(pp_unpack *r, int n_nodes) {
  int feasible, used, sum_d, n_stages;
  double tps;
  if (pp_unpack_int_in(r, 0, 1, &feasible) || pp_unpack_int_in(r, 0, INT_MAX, &used) ||
      pp_unpack_int_in(r, 0, INT_MAX, &sum_d) || pp_unpack_int_in(r, 0, n_nodes, &n_stages) ||
      pp_unpack_f64(r, &tps))
    return NULL;
  pp_plan *p = pp_plan_new(n_stages);
  p->feasible = feasible;
  p->devices_used = used;
  p->sum_d = sum_d;
  p->tps = tps;
  for (int i = 0; i < n_stages; i++) {
    pp_plan_stage *s = &p->stages[i];
    if (pp_unpack_int_in(r, 0, n_nodes, &s->n_nodes) || pp_unpack_int_in(r, 0, INT_MAX, &s->d) ||
        pp_unpack_int_in(r, 0, INT_MAX, &s->t) || pp_unpack_int_in(r, 0, INT_MAX, &s->y) ||
        pp_unpack_f64(r, &s->load) || pp_unpack_f64(r, &s->memory) ||
        !pp_unpack_has(r, 2 * (size_t)s->n_nodes, sizeof(int)))
      break;
    s->nodes = pp_xmalloc(sizeof(int) * ((size_t)s->n_nodes + 1));
    s->tmpc = pp_xmalloc(sizeof(int) * ((size_t)s->n_nodes + 1));
    pp_unpack_ints(r, s->nodes, (size_t)s->n_nodes);
    pp_unpack_ints(r, s->tmpc, (size_t)s->n_nodes);
    for (int j = 0; j < s->n_nodes; j++)
      if (s->nodes[j] < 0 || s->nodes[j] >= n_nodes || s->tmpc[j] < 0) r->bad = 1;
  }
  if (!pp_unpack_ok(r)) {
    pp_plan_free(p);
    return NULL;
  }
  return p;
}
