/*
 * shorthand.c - framework-shaped plans from (P, T, D); see
 * include/piper/shorthand.h for the split rule.
 */
#include "piper/shorthand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A topological order: Kahn's algorithm, always taking the smallest ready
 * index (input order for a graph listed in order).  O(n^2), fine for the
 * layer graphs this is used on. */
static void topo_order(const pp_graph *g, int *ord) {
  int n = g->n_nodes, *indeg = pp_xcalloc((size_t)n + 1, sizeof(int));
  char *done = pp_xcalloc((size_t)n + 1, 1);
  for (int v = 0; v < n; v++) indeg[v] = g->nodes[v].in_deg;
  for (int k = 0; k < n; k++) {
    int v = 0;
    while (v < n - 1 && (done[v] || indeg[v] > 0)) v++;
    done[v] = 1;
    ord[k] = v;
    for (int e = 0; e < g->nodes[v].out_deg; e++) indeg[g->edges[g->nodes[v].out_edges[e]].dst]--;
  }
  free(indeg);
  free(done);
}

/* Block number of a node named "block.<i>[.<part>]", else -1. */
static int block_number(const pp_graph *g, int v) {
  const char *name = g->nodes[v].name;
  if (!name || strncmp(name, "block.", 6) != 0) return -1;
  char *end;
  long b = strtol(name + 6, &end, 10);
  if (end == name + 6 || b < 0 || b > 100000000 || (*end != '\0' && *end != '.')) return -1;
  return (int)b;
}

/* unit[k] for ord[k]: the blocks (units 1..U, and 0 / U+1 before and after)
 * or every node its own unit.  Returns U and sets *blocks. */
static int units_of(const pp_graph *g, const int *ord, int *unit, int *blocks) {
  int n = g->n_nodes, u = 0, last = -1, seen_block = 0, after = 0;
  for (int k = 0; k < n; k++) {
    int b = block_number(g, ord[k]);
    if (b >= 0 && after) return *blocks = 0, 0; /* a block after a non-block tail: not a chain of blocks */
    if (b >= 0) {
      if (b != last) u++;
      last = b;
      seen_block = 1;
    } else if (seen_block) {
      after = 1;
    }
    unit[k] = b >= 0 ? u : (seen_block ? -2 : -1);
  }
  *blocks = seen_block;
  if (!seen_block) return 0;
  for (int k = 0; k < n; k++) unit[k] = unit[k] == -1 ? 1 : unit[k] == -2 ? u : unit[k];
  return u;
}

static int pick_tmpc(const pp_graph *g, int v, int t, int recompute) {
  const pp_tmpc_list *l = pp_graph_tmpcs(g, v, t);
  if (!l) return 0;
  for (int k = 0; k < l->count; k++)
    if (l->tmpcs[k].is_recompute == (recompute != 0)) return k;
  return 0;
}

pp_status pp_plan_shorthand(const pp_graph *g, const pp_shorthand *s, pp_plan **out, char *how, size_t n,
                            pp_error *err) {
  *out = NULL;
  if (s->pp < 1 || s->tp < 1 || s->dp < 1)
    return pp_error_set(err, PP_ERR_USAGE, "--pp, --tp and --dp must be >= 1");
  const int nv = s->chunks > 1 ? s->chunks : 1;
  if ((long long)s->pp * nv > g->n_nodes)
    return pp_error_set(err, PP_ERR_USAGE,
                        "--pp %d x --virtual-stages %d: more stages than the graph's %d nodes", s->pp, nv,
                        g->n_nodes);
  const int ns = s->pp * nv; /* stages of the plan */
  int nn = g->n_nodes, blocks = 0;
  int *ord = pp_xmalloc(sizeof(int) * ((size_t)nn + 1)), *unit = pp_xmalloc(sizeof(int) * ((size_t)nn + 1));
  topo_order(g, ord);
  int u = units_of(g, ord, unit, &blocks);
  if (!blocks) {
    u = nn;
    for (int k = 0; k < nn; k++) unit[k] = k + 1;
  }
  if (ns > u) {
    free(ord);
    free(unit);
    return pp_error_set(err, PP_ERR_USAGE, "--pp %d%s: the graph has only %d %s to split", s->pp,
                        nv > 1 ? " x --virtual-stages" : "", u, blocks ? "transformer blocks" : "layers");
  }
  pp_plan *plan = pp_plan_new(ns);
  int base = u / ns, rem = u % ns;
  /* stage of unit x (1-based): the first rem stages hold base + 1 units */
  int *stage_of_unit = pp_xmalloc(sizeof(int) * ((size_t)u + 2));
  for (int i = 0, x = 1; i < ns; i++)
    for (int c = 0; c < base + (i < rem); c++) stage_of_unit[x++] = i;
  for (int i = 0; i < ns; i++) {
    plan->stages[i].d = s->dp;
    plan->stages[i].t = s->tp;
    plan->stages[i].nodes = pp_xmalloc(sizeof(int) * ((size_t)nn + 1));
    plan->stages[i].tmpc = pp_xmalloc(sizeof(int) * ((size_t)nn + 1));
  }
  /* nodes ascending within a stage (plan.h) */
  int *stage_of = pp_xmalloc(sizeof(int) * ((size_t)nn + 1));
  for (int k = 0; k < nn; k++) stage_of[ord[k]] = stage_of_unit[unit[k]];
  for (int v = 0; v < nn; v++) {
    pp_plan_stage *st = &plan->stages[stage_of[v]];
    st->nodes[st->n_nodes] = v;
    st->tmpc[st->n_nodes++] = pick_tmpc(g, v, s->tp, s->recompute);
  }
  int l = snprintf(how, n, "%d %s over %d %s, %d per %s", u, blocks ? "transformer blocks" : "layers", ns,
                   nv > 1 ? "chunks (virtual stages)" : "stages", base, nv > 1 ? "chunk" : "stage");
  if (rem && l >= 0 && (size_t)l < n) l += snprintf(how + l, n - (size_t)l, " (the first %d one more)", rem);
  if (blocks && ns > 1 && l >= 0 && (size_t)l < n)
    snprintf(how + l, n - (size_t)l,
             "; the nodes before the first block on stage 1, after the last on stage %d", ns);
  free(stage_of);
  free(stage_of_unit);
  free(ord);
  free(unit);
  *out = plan;
  return PP_OK;
}
