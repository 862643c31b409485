/*
 * equi.c - the PipeDream-2BW-like "equi" baseline of the Piper paper (see
 * include/piper/equi.h).
 *
 * The candidates and their order follow the public reference code
 * (msr-fiddle/piper, algo.cpp: runPipeDream2BWPlanner with non-transformer
 * nodes also tried in stages of their own, and
 * runPipeDream2BWPlannerNonTransformer), and each candidate is scored the way
 * its getTPSForResult scores a plan: per stage, compute / d + (boundary edge
 * bytes / d + data-parallel resync bytes) / B, memory with
 * y = ceil(suffix sum of d / d), which with one d everywhere is the number of
 * stages from this one to the last.  Where the reference would place an
 * empty stage (a non-transformer group that is empty) or abort (a node
 * without the TMPC a candidate asks for, an edge going backwards), the
 * candidate is skipped.
 */
#include "piper/equi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One division of the nodes into stages, in pipeline order. */
typedef struct layout {
  int n_stages;
  int *order;    /* [n] nodes, stage by stage, each stage in the reference's order */
  int *first;    /* [n_stages + 1] start of each stage in order */
  int *stage_of; /* [n] stage of each node */
} layout;

/* The nodes in the reference's topological order (Kahn's algorithm with a
 * stack, sources pushed in node order, successors in edge order). */
static void topo_order(const pp_graph *g, int *out) {
  const int n = g->n_nodes;
  int *indeg = pp_xmalloc(sizeof(int) * (size_t)n + 1), *stack = pp_xmalloc(sizeof(int) * (size_t)n + 1);
  int top = 0, cnt = 0;
  for (int v = 0; v < n; v++) {
    indeg[v] = g->nodes[v].in_deg;
    if (indeg[v] == 0) stack[top++] = v;
  }
  while (top > 0) {
    int v = stack[--top];
    out[cnt++] = v;
    for (int k = 0; k < g->nodes[v].out_deg; k++) {
      int w = g->edges[g->nodes[v].out_edges[k]].dst;
      if (--indeg[w] == 0) stack[top++] = w;
    }
  }
  free(indeg);
  free(stack);
}

/* The groups of the transformer planner. */
typedef struct groups {
  int n_tr, n_init, n_final;
  int *tr;    /* transformer layers in topological order */
  int *init;  /* nodes before them, in the order found */
  int *final; /* nodes after them */
} groups;

enum { CLS_NONE = 0, CLS_INIT, CLS_TR, CLS_FINAL };

/* Classifies the other nodes as the reference does: repeated passes over the
 * edges; u joins the initial nodes when it feeds an initial or transformer
 * node, v the final ones when it is fed by a transformer or final node. */
static pp_status classify(const pp_graph *g, const int *topo, groups *gr, pp_error *err) {
  const int n = g->n_nodes;
  char *cls = pp_xcalloc((size_t)n + 1, 1);
  gr->tr = pp_xmalloc(sizeof(int) * (size_t)n + 1);
  gr->init = pp_xmalloc(sizeof(int) * (size_t)n + 1);
  gr->final = pp_xmalloc(sizeof(int) * (size_t)n + 1);
  gr->n_tr = gr->n_init = gr->n_final = 0;
  for (int i = 0; i < n; i++) {
    const char *name = g->nodes[topo[i]].name;
    if (name && strcmp(name, PP_EQUI_TRANSFORMER_NAME) == 0) {
      cls[topo[i]] = CLS_TR;
      gr->tr[gr->n_tr++] = topo[i];
    }
  }
  pp_status st = PP_OK;
  while (gr->n_tr > 0 && gr->n_tr + gr->n_init + gr->n_final < n) {
    int added = 0;
    for (int e = 0; e < g->n_edges; e++) {
      int u = g->edges[e].src, v = g->edges[e].dst;
      if (cls[u] == CLS_NONE && (cls[v] == CLS_INIT || cls[v] == CLS_TR)) {
        cls[u] = CLS_INIT;
        gr->init[gr->n_init++] = u;
        added++;
      }
      if (cls[v] == CLS_NONE && (cls[u] == CLS_TR || cls[u] == CLS_FINAL)) {
        cls[v] = CLS_FINAL;
        gr->final[gr->n_final++] = v;
        added++;
      }
    }
    if (!added) {
      int v = 0;
      while (cls[v] != CLS_NONE) v++;
      st = pp_error_set(err, PP_ERR_INPUT,
                        "%s: the equi planner cannot place node %lld: it is connected to no %s layer "
                        "through the other nodes",
                        g->source_path ? g->source_path : "input", g->nodes[v].orig_id,
                        PP_EQUI_TRANSFORMER_NAME);
      break;
    }
  }
  free(cls);
  return st;
}

static void layout_alloc(layout *L, int n, int n_stages) {
  L->n_stages = n_stages;
  L->order = pp_xmalloc(sizeof(int) * (size_t)n + 1);
  L->first = pp_xmalloc(sizeof(int) * (size_t)(n_stages + 1));
  L->stage_of = pp_xmalloc(sizeof(int) * (size_t)n + 1);
}

static void layout_free(layout *L) {
  free(L->order);
  free(L->first);
  free(L->stage_of);
  memset(L, 0, sizeof *L);
}

/* Splits items[0..m) into `parts` consecutive runs from stage `from` on, the
 * last m % parts runs one longer; appends to L->order at *pos. */
static void split_equally(layout *L, const int *items, int m, int from, int parts, int *pos,
                          const int *extra_first, int n_first, const int *extra_last, int n_last) {
  const int per = m / parts, larger = m % parts;
  int next = 0;
  for (int st = from; st < from + parts; st++) {
    L->first[st] = *pos;
    int count = per + (st >= from + parts - larger);
    for (int i = 0; i < count; i++) L->order[(*pos)++] = items[next++];
    if (st == 0)
      for (int i = 0; i < n_first; i++) L->order[(*pos)++] = extra_first[i];
    if (st == L->n_stages - 1)
      for (int i = 0; i < n_last; i++) L->order[(*pos)++] = extra_last[i];
  }
}

/* Fills stage_of and returns 1 if no edge goes backwards. */
static int layout_finish(const pp_graph *g, layout *L) {
  L->first[L->n_stages] = g->n_nodes;
  for (int s = 0; s < L->n_stages; s++)
    for (int j = L->first[s]; j < L->first[s + 1]; j++) L->stage_of[L->order[j]] = s;
  for (int e = 0; e < g->n_edges; e++)
    if (L->stage_of[g->edges[e].src] > L->stage_of[g->edges[e].dst]) return 0;
  return 1;
}

/* The transformer layout with `stages` stages, the initial and final nodes
 * in stages of their own when sep.  Returns 0 (L unset) if not usable. */
static int build_transformer(const pp_graph *g, const groups *gr, int sep, int stages, layout *L) {
  if (sep && (gr->n_init == 0 || gr->n_final == 0)) return 0;
  layout_alloc(L, g->n_nodes, stages);
  int pos = 0;
  if (sep) {
    L->first[0] = 0;
    for (int i = 0; i < gr->n_init; i++) L->order[pos++] = gr->init[i];
    split_equally(L, gr->tr, gr->n_tr, 1, stages - 2, &pos, NULL, 0, NULL, 0);
    L->first[stages - 1] = pos;
    for (int i = 0; i < gr->n_final; i++) L->order[pos++] = gr->final[i];
  } else {
    split_equally(L, gr->tr, gr->n_tr, 0, stages, &pos, gr->init, gr->n_init, gr->final, gr->n_final);
  }
  if (!layout_finish(g, L)) {
    layout_free(L);
    return 0;
  }
  return 1;
}

/* The layout of the non-transformer planner: all nodes split equally. */
static int build_plain(const pp_graph *g, const int *topo, int stages, layout *L) {
  layout_alloc(L, g->n_nodes, stages);
  int pos = 0;
  split_equally(L, topo, g->n_nodes, 0, stages, &pos, NULL, 0, NULL, 0);
  if (!layout_finish(g, L)) {
    layout_free(L);
    return 0;
  }
  return 1;
}

/* Index of node v's TMPC for degree t with the vanilla or the recompute id,
 * or -1 if it has none. */
static int tmpc_index(const pp_graph *g, int v, int t, int rec) {
  const pp_tmpc_list *l = pp_graph_tmpcs(g, v, t);
  const char *id = rec ? PP_RECOMPUTE_TMPC_ID : PP_EQUI_VANILLA_ID;
  for (int i = 0; l && i < l->count; i++)
    if (strcmp(l->tmpcs[i].id, id) == 0) return i;
  return -1;
}

/* The TPS of the candidate (L, d, t, rec), +INFINITY if a stage exceeds the
 * memory or a node lacks the TMPC.  Arithmetic in the reference's order. */
static double score(const pp_graph *g, const pp_problem *p, const layout *L, int d, int t, int rec) {
  double tps = 0.0;
  for (int s = 0; s < L->n_stages; s++) {
    const int y = L->n_stages - s;
    double compute = 0.0, edge = 0.0, resync = 0.0, memory = 0.0;
    for (int j = L->first[s]; j < L->first[s + 1]; j++) {
      const int v = L->order[j];
      const int idx = tmpc_index(g, v, t, rec);
      if (idx < 0) return INFINITY;
      const pp_tmpc *m = &pp_graph_tmpcs(g, v, t)->tmpcs[idx];
      const pp_node *nd = &g->nodes[v];
      compute += m->time_per_sample;
      for (int k = 0; k < nd->in_deg; k++) {
        const pp_edge *e = &g->edges[nd->in_edges[k]];
        if (L->stage_of[e->src] != s) edge += 2 * (e->cost + m->sync_fw[k]);
      }
      for (int k = 0; k < nd->out_deg; k++) {
        const pp_edge *e = &g->edges[nd->out_edges[k]];
        if (L->stage_of[e->dst] != s) edge += 2 * (e->cost + m->sync_bw[k]);
      }
      resync += 4.0 * (d - 1) * m->parameter_size / d / p->microbatches;
      memory += m->mem_a * y + m->mem_b;
    }
    if (memory > p->memory) return INFINITY;
    const double load = (edge / d + resync) / p->bandwidth + compute / d;
    if (load > tps) tps = load;
  }
  return tps;
}

/* The best candidate so far. */
typedef struct best {
  double tps;
  int sep, stages, d, t, rec;
} best;

/* Tries every (d, t, recompute) on one layout, in the reference's order. */
static void try_layout(const pp_graph *g, const pp_problem *p, const layout *L, int sep, best *b,
                       double *curve) {
  const int K = p->devices, N = p->microbatches, stages = L->n_stages;
  const int dmax = K < N ? K : N;
  for (int d = 1; stages * d <= dmax; d++) {
    if (N % d != 0) continue;
    if (p->no_dp && d > 1) break;
    for (int t = 1; (long long)stages * d * t <= K; t++) {
      if (t > 1) {
        if (p->no_tp) break;
        if (!pp_graph_tmpcs(g, 0, t)) continue;
      }
      for (int rec = 0; rec <= 1; rec++) {
        if (rec && p->no_recompute) continue;
        double tps = score(g, p, L, d, t, rec);
        int devices = stages * d * t;
        if (curve && tps < curve[devices - 1]) curve[devices - 1] = tps;
        if (tps < b->tps) *b = (best){tps, sep, stages, d, t, rec};
      }
    }
  }
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The plan of candidate b on layout L. */
static pp_plan *make_plan(const pp_graph *g, const layout *L, const best *b) {
  pp_plan *plan = pp_plan_new(L->n_stages);
  for (int s = 0; s < L->n_stages; s++) {
    pp_plan_stage *st = &plan->stages[s];
    st->n_nodes = L->first[s + 1] - L->first[s];
    st->nodes = pp_xmalloc(sizeof(int) * (size_t)st->n_nodes + 1);
    st->tmpc = pp_xmalloc(sizeof(int) * (size_t)st->n_nodes + 1);
    memcpy(st->nodes, L->order + L->first[s], sizeof(int) * (size_t)st->n_nodes);
    qsort(st->nodes, (size_t)st->n_nodes, sizeof(int), cmp_int);
    for (int j = 0; j < st->n_nodes; j++) st->tmpc[j] = tmpc_index(g, st->nodes[j], b->t, b->rec);
    st->d = b->d;
    st->t = b->t;
  }
  plan->feasible = 1;
  plan->tps = b->tps;
  plan->devices_used = L->n_stages * b->d * b->t;
  plan->sum_d = L->n_stages * b->d;
  return plan;
}

pp_status pp_equi_solve(const pp_graph *g, const pp_problem *p, pp_plan **out, double *curve, pp_error *err) {
  const int n = g->n_nodes, K = p->devices;
  int *topo = pp_xmalloc(sizeof(int) * (size_t)n + 1);
  groups gr = {0};
  best b = {INFINITY, 0, 0, 0, 0, 0};
  layout L = {0};
  *out = NULL;
  topo_order(g, topo);
  pp_status st = classify(g, topo, &gr, err);
  if (st) goto done;
  if (curve)
    for (int k = 0; k < K; k++) curve[k] = INFINITY;
  if (gr.n_tr > 0) {
    for (int sep = 0; sep <= 1; sep++)
      for (int stages = 1 + 2 * sep; stages <= K && stages <= gr.n_tr + 2 * sep; stages++) {
        if (!build_transformer(g, &gr, sep, stages, &L)) continue;
        try_layout(g, p, &L, sep, &b, curve);
        layout_free(&L);
      }
  } else {
    /* more stages than nodes would only add empty stages, which never help */
    for (int stages = 1; stages <= K && stages <= n; stages++) {
      if (!build_plain(g, topo, stages, &L)) continue;
      try_layout(g, p, &L, 0, &b, curve);
      layout_free(&L);
    }
  }
  if (curve)
    for (int k = 1; k < K; k++)
      if (curve[k - 1] < curve[k]) curve[k] = curve[k - 1];
  if (isinf(b.tps)) {
    *out = pp_plan_new(0);
    goto done;
  }
  if (gr.n_tr > 0)
    build_transformer(g, &gr, b.sep, b.stages, &L);
  else
    build_plain(g, topo, b.stages, &L);
  *out = make_plan(g, &L, &b);
  layout_free(&L);
done:
  free(topo);
  free(gr.tr);
  free(gr.init);
  free(gr.final);
  return st;
}
