/*
 * graph.c - the model graph: ownership, structural checks and lookups.
 * Parsing lives in graph_json.c (the only file that knows JSON).
 */
#include "piper/graph.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pp_graph_free(pp_graph *g) {
  if (!g) return;
  for (int v = 0; v < g->n_nodes; v++) {
    pp_node *n = &g->nodes[v];
    for (int i = 0; i < n->n_lists; i++) {
      for (int l = 0; l < n->lists[i].count; l++) {
        pp_tmpc *m = &n->lists[i].tmpcs[l];
        free(m->id);
        free(m->sync_fw);
        free(m->sync_bw);
      }
      free(n->lists[i].tmpcs);
    }
    free(n->lists);
    free(n->name);
    free(n->in_edges);
    free(n->out_edges);
  }
  free(g->nodes);
  free(g->edges);
  free(g->degrees);
  free(g->source_path);
  free(g->source_text);
  free(g);
}

static int cmp_edge_pair(const void *a, const void *b) {
  const pp_edge *x = *(const pp_edge *const *)a, *y = *(const pp_edge *const *)b;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  return 0;
}

/* Called when Kahn's algorithm left nodes over (indeg[v] > 0).  Each such
 * node has a predecessor that is also left over, so walking backwards
 * n_nodes steps from one of them ends on a cycle; the message lists it. */
static pp_status report_cycle(const pp_graph *g, const int *indeg, pp_error *err) {
  int n = g->n_nodes;
  int *pstart = pp_xcalloc((size_t)n + 1, sizeof *pstart); /* preds of v: pred[pstart[v] .. pstart[v+1]-1] */
  int *fill = pp_xmalloc(sizeof *fill * (size_t)n);
  int *pred = pp_xmalloc(sizeof *pred * (size_t)(g->n_edges + 1));
  int *cycle = pp_xmalloc(sizeof *cycle * (size_t)n);
  for (int e = 0; e < g->n_edges; e++) pstart[g->edges[e].dst + 1]++;
  for (int v = 0; v < n; v++) {
    pstart[v + 1] += pstart[v];
    fill[v] = pstart[v];
  }
  for (int e = 0; e < g->n_edges; e++) pred[fill[g->edges[e].dst]++] = g->edges[e].src;
  int v = 0;
  while (indeg[v] == 0) v++;
  for (int step = 0; step < n; step++) {
    int next = -1;
    for (int i = pstart[v]; i < pstart[v + 1] && next < 0; i++)
      if (indeg[pred[i]] > 0) next = pred[i];
    assert(next >= 0);
    v = next;
  }
  /* v is on a cycle: walk backwards once round it */
  int len = 0, w = v;
  do {
    cycle[len++] = w;
    int next = -1;
    for (int i = pstart[w]; i < pstart[w + 1] && next < 0; i++)
      if (indeg[pred[i]] > 0) next = pred[i];
    w = next;
  } while (w != v && len < n);
  /* In edge direction the cycle is cycle[len-1] -> ... -> cycle[0] -> cycle[len-1];
   * print it from its first node in input order, at most 13 nodes. */
  int first = 0;
  for (int i = 1; i < len; i++)
    if (cycle[i] < cycle[first]) first = i;
  char msg[PP_ERROR_MSG_MAX / 2];
  size_t o = 0;
  for (int k = 0; k <= len; k++) {
    int node = cycle[((first - k) % len + len) % len];
    if (k == 13 && k < len) {
      o += (size_t)snprintf(msg + o, sizeof msg - o, " -> ...");
      node = cycle[first];
      k = len;
    }
    o += (size_t)snprintf(msg + o, sizeof msg - o, "%s%lld", k == 0 ? "" : " -> ", g->nodes[node].orig_id);
  }
  pp_status st = pp_error_set(err, PP_ERR_INPUT, "edges: the graph has a cycle: %s", msg);
  free(pstart);
  free(fill);
  free(pred);
  free(cycle);
  return st;
}

pp_status pp_graph_check_structure(const pp_graph *g, pp_error *err) {
  if (g->n_nodes <= 0) return pp_error_set(err, PP_ERR_INPUT, "nodes: the graph has no nodes");
  for (int e = 0; e < g->n_edges; e++) {
    const pp_edge *ed = &g->edges[e];
    if (ed->src < 0 || ed->src >= g->n_nodes || ed->dst < 0 || ed->dst >= g->n_nodes)
      return pp_error_set(err, PP_ERR_INPUT, "edges[%d]: endpoint is not a node", e);
    if (ed->src == ed->dst)
      return pp_error_set(err, PP_ERR_INPUT, "edges[%d]: self-loop on node %lld", e,
                          g->nodes[ed->src].orig_id);
  }
  /* duplicates: sort pointers by (src, dst) */
  const pp_edge **sorted = pp_xmalloc(sizeof *sorted * (size_t)(g->n_edges + 1));
  for (int e = 0; e < g->n_edges; e++) sorted[e] = &g->edges[e];
  qsort(sorted, (size_t)g->n_edges, sizeof *sorted, cmp_edge_pair);
  for (int e = 1; e < g->n_edges; e++) {
    if (cmp_edge_pair(&sorted[e - 1], &sorted[e]) == 0) {
      int a = (int)(sorted[e - 1] - g->edges), b = (int)(sorted[e] - g->edges);
      if (a > b) {
        int t = a;
        a = b;
        b = t;
      }
      pp_status st = pp_error_set(err, PP_ERR_INPUT, "edges[%d]: duplicates edges[%d] (%lld -> %lld)", b, a,
                                  g->nodes[sorted[e]->src].orig_id, g->nodes[sorted[e]->dst].orig_id);
      free(sorted);
      return st;
    }
  }
  free(sorted);
  /* Acyclicity: Kahn's algorithm on adjacency built here from the edge
   * list alone, so the check does not depend on the nodes' in/out lists.
   * The out-neighbours of v are succ[start[v] .. start[v + 1] - 1]. */
  int *indeg = pp_xcalloc((size_t)g->n_nodes, sizeof *indeg);
  int *start = pp_xcalloc((size_t)g->n_nodes + 1, sizeof *start);
  int *fill = pp_xmalloc(sizeof *fill * (size_t)g->n_nodes);
  int *succ = pp_xmalloc(sizeof *succ * (size_t)(g->n_edges + 1));
  int *queue = pp_xmalloc(sizeof *queue * (size_t)g->n_nodes);
  for (int e = 0; e < g->n_edges; e++) {
    indeg[g->edges[e].dst]++;
    start[g->edges[e].src + 1]++;
  }
  for (int v = 0; v < g->n_nodes; v++) {
    start[v + 1] += start[v];
    fill[v] = start[v];
  }
  for (int e = 0; e < g->n_edges; e++) succ[fill[g->edges[e].src]++] = g->edges[e].dst;
  int head = 0, tail = 0;
  for (int v = 0; v < g->n_nodes; v++)
    if (indeg[v] == 0) queue[tail++] = v;
  while (head < tail) {
    int v = queue[head++];
    for (int i = start[v]; i < start[v + 1]; i++)
      if (--indeg[succ[i]] == 0) queue[tail++] = succ[i];
  }
  pp_status st = PP_OK;
  if (tail < g->n_nodes) st = report_cycle(g, indeg, err);
  free(indeg);
  free(start);
  free(fill);
  free(succ);
  free(queue);
  return st;
}

void pp_graph_input_sha256(const pp_graph *g, char hex[65]) {
  pp_sha256 c = g->source_sha;
  pp_sha256_final_hex(&c, hex);
}

const pp_tmpc_list *pp_graph_tmpcs(const pp_graph *g, int v, int t) {
  assert(g && v >= 0 && v < g->n_nodes);
  const pp_node *n = &g->nodes[v];
  for (int i = 0; i < n->n_lists; i++)
    if (n->lists[i].t == t) return &n->lists[i];
  return NULL;
}

const char *pp_graph_node_label(const pp_graph *g, int v, char *buf, size_t n) {
  assert(g && v >= 0 && v < g->n_nodes && buf && n > 0);
  const pp_node *nd = &g->nodes[v];
  if (nd->name && nd->name[0])
    snprintf(buf, n, "%s", nd->name);
  else
    snprintf(buf, n, "%lld", nd->orig_id);
  return buf;
}

int pp_zero_parts(int zero) {
  return (zero >= 1 ? PP_PART_OPTIMIZER : 0) | (zero >= 2 ? PP_PART_GRADIENT : 0) |
         (zero >= 3 ? PP_PART_WEIGHT : 0);
}

static const char *file_of(const pp_graph *g) { return g->source_path ? g->source_path : "<input>"; }

pp_status pp_graph_check_zero(const pp_graph *g, int zero, pp_error *err) {
  static const struct {
    int bit;
    const char *name;
  } parts[] = {{PP_PART_OPTIMIZER, "optimizerBytes"},
               {PP_PART_GRADIENT, "gradientBytes"},
               {PP_PART_WEIGHT, "weightBytes"}};
  const int need = pp_zero_parts(zero);
  for (int v = 0; v < g->n_nodes; v++)
    for (int i = 0; i < g->nodes[v].n_lists; i++) {
      const pp_tmpc_list *l = &g->nodes[v].lists[i];
      for (int k = 0; k < l->count; k++) {
        const int missing = need & ~l->tmpcs[k].parts;
        if (!missing) continue;
        int j = 0;
        while (!(missing & parts[j].bit)) j++;
        return pp_error_set(err, PP_ERR_INPUT,
                            "%s: nodes[%d].TMPCs[\"%d\"][%d]: missing %s, which --zero %d needs (a TMPC "
                            "must give optimizerBytes for --zero 1, also gradientBytes for 2, also "
                            "weightBytes for 3; `piper gen --memory-parts` writes all three)",
                            file_of(g), v, l->t, k, parts[j].name, zero);
      }
    }
  return PP_OK;
}

pp_status pp_graph_check_node_size(const pp_graph *g, long long devices_per_node, const char *origin,
                                   pp_error *err) {
  for (int v = 0; v < g->n_nodes; v++)
    for (int i = 0; i < g->nodes[v].n_lists; i++) {
      const pp_tmpc_list *l = &g->nodes[v].lists[i];
      if (l->count > 0 && l->t > devices_per_node)
        return pp_error_set(err, PP_ERR_INPUT,
                            "%s: nodes[%d].TMPCs[\"%d\"]: tensor-parallel degree %d exceeds %s = %lld (a "
                            "tensor-parallel group must fit in one node)",
                            file_of(g), v, l->t, l->t, origin, devices_per_node);
    }
  return PP_OK;
}
