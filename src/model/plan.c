/*
 * plan.c - ownership of pp_plan.
 */
#include "piper/plan.h"

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
