/*
 * graph.c - the model graph: ownership, structural checks and lookups.
 * Parsing lives in graph_json.c (the only file that knows JSON).
 */
#include "piper/graph.h"

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
      if (a > b) { int t = a; a = b; b = t; }
      pp_status st = pp_error_set(err, PP_ERR_INPUT, "edges[%d]: duplicates edges[%d] (%lld -> %lld)", b, a,
                                  g->nodes[sorted[e]->src].orig_id, g->nodes[sorted[e]->dst].orig_id);
      free(sorted);
      return st;
    }
  }
  free(sorted);
  /* acyclicity: Kahn's algorithm */
  int *indeg = pp_xcalloc((size_t)g->n_nodes, sizeof *indeg);
  int *queue = pp_xmalloc(sizeof *queue * (size_t)g->n_nodes);
  for (int e = 0; e < g->n_edges; e++) indeg[g->edges[e].dst]++;
  int head = 0, tail = 0;
  for (int v = 0; v < g->n_nodes; v++)
    if (indeg[v] == 0) queue[tail++] = v;
  while (head < tail) {
    int v = queue[head++];
    const pp_node *n = &g->nodes[v];
    for (int i = 0; i < n->out_deg; i++) {
      int w = g->edges[n->out_edges[i]].dst;
      if (--indeg[w] == 0) queue[tail++] = w;
    }
  }
  pp_status st = PP_OK;
  if (tail < g->n_nodes) {
    int culprit = -1;
    for (int v = 0; v < g->n_nodes && culprit < 0; v++)
      if (indeg[v] > 0) culprit = v;
    st = pp_error_set(err, PP_ERR_INPUT, "edges: the graph has a cycle (through node %lld)",
                      g->nodes[culprit].orig_id);
  }
  free(indeg);
  free(queue);
  return st;
}

const pp_tmpc_list *pp_graph_tmpcs(const pp_graph *g, int v, int t) {
  const pp_node *n = &g->nodes[v];
  for (int i = 0; i < n->n_lists; i++)
    if (n->lists[i].t == t) return &n->lists[i];
  return NULL;
}

const char *pp_graph_node_label(const pp_graph *g, int v, char *buf, size_t n) {
  const pp_node *nd = &g->nodes[v];
  if (nd->name && nd->name[0])
    snprintf(buf, n, "%s", nd->name);
  else
    snprintf(buf, n, "%lld", nd->orig_id);
  return buf;
}
