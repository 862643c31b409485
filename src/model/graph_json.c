/*
 * graph_json.c - reads the public Piper JSON format into a pp_graph.
 *
 * With graph_json_get.c (typed reads of values, messages) and graph_load.c
 * (the bytes, from a buffer, a file or standard input) the only files that
 * include <jansson.h>.  Every error names the file and, for syntax errors
 * (graph_load.c), the line and column; for semantic errors, the JSON path
 * of the offending value (e.g. nodes[3].TMPCs["2"][1].memoryUsageA).
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_json.h"
#include "piper/problem.h"

static int cmp_ll(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return x < y ? -1 : x > y;
}

/* Node index for an original id, or -1. */
static int node_index(const parser *p, long long id) {
  int lo = 0, hi = p->g->n_nodes - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (p->sorted_ids[mid] == id) return p->sorted_idx[mid];
    if (p->sorted_ids[mid] < id)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* A neighbour of the node being parsed and the position of its edge in the
 * node's in- or out-edge list. */
typedef struct nb_slot {
  int node;
  int slot;
} nb_slot;

static int cmp_nb_slot(const void *a, const void *b) {
  const nb_slot *x = a, *y = b;
  return (x->node > y->node) - (x->node < y->node);
}

/* Reads the sync map obj.key of node v (fw: syncTimeFw, keyed by
 * in-neighbours; else syncTimeBw, keyed by out-neighbours) into a new array
 * *out aligned with the node's in_edges (or out_edges).  Every neighbour
 * must appear exactly once and nothing else.  The caller owns *out. */
static pp_status parse_sync(parser *p, const json_t *obj, const char *key, const char *path, int v, int fw,
                            double **out) {
  char full[PATH_MAX_LEN];
  snprintf(full, sizeof full, "%s.%s", path, key);
  const pp_graph *g = p->g;
  const pp_node *n = &g->nodes[v];
  int deg = fw ? n->in_deg : n->out_deg;
  const int *elist = fw ? n->in_edges : n->out_edges;
  json_t *j = json_object_get(obj, key);
  if (!j) return pp_json_fail(p, full, "missing");
  if (!json_is_object(j)) return pp_json_fail(p, full, "must be an object, got %s", pp_json_type_name(j));
  pp_status st = PP_OK;
  double *arr = pp_xmalloc(sizeof *arr * (size_t)(deg + 1));
  nb_slot *slots = pp_xmalloc(sizeof *slots * (size_t)(deg + 1)); /* sorted by node: lookup in log(deg) */
  for (int i = 0; i < deg; i++) {
    const pp_edge *e = &g->edges[elist[i]];
    arr[i] = NAN;
    slots[i] = (nb_slot){.node = fw ? e->src : e->dst, .slot = i};
  }
  qsort(slots, (size_t)deg, sizeof *slots, cmp_nb_slot);
  const char *k;
  json_t *val;
  json_object_foreach(j, k, val) {
    char kp[PATH_MAX_LEN];
    pp_json_key_path(kp, sizeof kp, full, k);
    long long id;
    if (pp_json_key_int(k, LLONG_MIN, LLONG_MAX, &id) != 0) {
      st = pp_json_fail(p, kp, "key must be a node id: a decimal integer without leading zeros");
      goto done;
    }
    nb_slot want = {.node = node_index(p, id), .slot = -1};
    const nb_slot *hit =
        want.node >= 0 ? bsearch(&want, slots, (size_t)deg, sizeof *slots, cmp_nb_slot) : NULL;
    if (!hit) {
      st = pp_json_fail(p, kp, "node %lld is not an %s of node %lld (there is no edge %lld -> %lld)", id,
                        fw ? "in-neighbour" : "out-neighbour", n->orig_id, fw ? id : n->orig_id,
                        fw ? n->orig_id : id);
      goto done;
    }
    if (!isnan(arr[hit->slot])) { /* unreachable with canonical keys; kept as a guard */
      st = pp_json_fail(p, kp, "node %lld is given twice", id);
      goto done;
    }
    if (!json_is_number(val)) {
      st = pp_json_fail(p, kp, "must be a number, got %s", pp_json_type_name(val));
      goto done;
    }
    double x = json_number_value(val);
    if (!isfinite(x) || x < 0) {
      st = pp_json_fail(p, kp, "must be a finite number >= 0, got %s", pp_json_show(x).s);
      goto done;
    }
    arr[hit->slot] = x;
  }
  for (int i = 0; i < deg; i++) {
    if (isnan(arr[i])) {
      const pp_edge *e = &g->edges[elist[i]];
      long long other = g->nodes[fw ? e->src : e->dst].orig_id;
      st = pp_json_fail(p, full, "missing the %s %lld (edge %lld -> %lld)",
                        fw ? "in-neighbour" : "out-neighbour", other, fw ? other : n->orig_id,
                        fw ? n->orig_id : other);
      goto done;
    }
  }
done:
  free(slots);
  if (st) {
    free(arr);
    return st;
  }
  *out = arr;
  return PP_OK;
}

static pp_status parse_tmpc(parser *p, const json_t *j, const char *path, int v, pp_tmpc *m) {
  if (!json_is_object(j)) return pp_json_fail(p, path, "must be an object, got %s", pp_json_type_name(j));
  char ip[PATH_MAX_LEN];
  snprintf(ip, sizeof ip, "%s.id", path);
  json_t *id = json_object_get(j, "id");
  if (!id) return pp_json_fail(p, ip, "missing");
  if (!json_is_string(id)) return pp_json_fail(p, ip, "must be a string, got %s", pp_json_type_name(id));
  if (json_string_length(id) == 0) return pp_json_fail(p, ip, "must not be empty");
  if (strlen(json_string_value(id)) != json_string_length(id))
    return pp_json_fail(p, ip, "must not contain NUL");
  m->id = pp_xstrdup(json_string_value(id));
  m->is_recompute = strcmp(m->id, PP_RECOMPUTE_TMPC_ID) == 0;
  pp_status st;
  if ((st = pp_json_number(p, j, "timePerSample", path, 0, &m->time_per_sample))) return st;
  if ((st = pp_json_number(p, j, "parameterSize", path, 0, &m->parameter_size))) return st;
  if ((st = pp_json_number(p, j, "memoryUsageA", path, 0, &m->mem_a))) return st;
  if ((st = pp_json_number(p, j, "memoryUsageB", path, 0, &m->mem_b))) return st;
  if ((st = parse_sync(p, j, "syncTimeFw", path, v, 1, &m->sync_fw))) return st;
  if ((st = parse_sync(p, j, "syncTimeBw", path, v, 0, &m->sync_bw))) return st;
  /* the parameter-dependent parts of memoryUsageB, for ZeRO */
  const struct {
    const char *key;
    double *val;
    int bit;
  } parts[] = {{"weightBytes", &m->weight_bytes, PP_PART_WEIGHT},
               {"gradientBytes", &m->gradient_bytes, PP_PART_GRADIENT},
               {"optimizerBytes", &m->optimizer_bytes, PP_PART_OPTIMIZER}};
  for (int i = 0; i < 3; i++) {
    int present;
    if ((st = pp_json_optional_number(p, j, parts[i].key, path, 0, parts[i].val, &present))) return st;
    if (present) m->parts |= parts[i].bit;
  }
  const double sum = m->weight_bytes + m->gradient_bytes + m->optimizer_bytes;
  if (sum > m->mem_b * (1 + 1e-9))
    return pp_json_fail(
        p, path,
        "weightBytes + gradientBytes + optimizerBytes = %s exceed memoryUsageB = %s (they are "
        "parts of it)",
        pp_json_show(sum).s, pp_json_show(m->mem_b).s);
  return PP_OK;
}

static int cmp_list_t(const void *a, const void *b) {
  const pp_tmpc_list *x = a, *y = b;
  return (x->t > y->t) - (x->t < y->t);
}

static pp_status parse_tmpcs(parser *p, const json_t *node, int v, const char *path) {
  char tp[PATH_MAX_LEN];
  snprintf(tp, sizeof tp, "%s.TMPCs", path);
  json_t *j = json_object_get(node, "TMPCs");
  if (!j) return pp_json_fail(p, tp, "missing");
  if (!json_is_object(j)) return pp_json_fail(p, tp, "must be an object, got %s", pp_json_type_name(j));
  pp_node *n = &p->g->nodes[v];
  n->lists = pp_xcalloc(json_object_size(j) + 1, sizeof *n->lists);
  const char *k;
  json_t *arr;
  json_object_foreach(j, k, arr) {
    char kp[PATH_MAX_LEN];
    pp_json_key_path(kp, sizeof kp, tp, k);
    long long t;
    if (pp_json_key_int(k, 1, PP_MAX_DEVICES, &t) != 0)
      return pp_json_fail(
          p, kp, "key must be a tensor-parallel degree: an integer from 1 to %d without leading zeros",
          PP_MAX_DEVICES);
    if (!json_is_array(arr))
      return pp_json_fail(p, kp, "must be an array of TMPCs, got %s", pp_json_type_name(arr));
    pp_tmpc_list *list = &n->lists[n->n_lists++];
    list->t = (int)t;
    list->tmpcs = pp_xcalloc(json_array_size(arr) + 1, sizeof *list->tmpcs);
    size_t i;
    json_t *m;
    json_array_foreach(arr, i, m) {
      char mp[PATH_MAX_LEN];
      snprintf(mp, sizeof mp, "%s[%zu]", kp, i);
      pp_tmpc *tm = &list->tmpcs[list->count++];
      pp_status st = parse_tmpc(p, m, mp, v, tm);
      if (st) return st;
      for (int o = 0; o < list->count - 1; o++)
        if (strcmp(list->tmpcs[o].id, tm->id) == 0)
          return pp_json_fail(p, mp, "duplicate TMPC id \"%.80s\" (also at index %d)", tm->id, o);
    }
  }
  qsort(n->lists, (size_t)n->n_lists, sizeof *n->lists, cmp_list_t);
  for (int i = 1; i < n->n_lists; i++)
    if (n->lists[i].t == n->lists[i - 1].t)
      return pp_json_fail(p, tp, "tensor-parallel degree %d given twice", n->lists[i].t);
  const pp_tmpc_list *one = pp_graph_tmpcs(p->g, v, 1);
  if ((!one || one->count == 0) && p->warn)
    fprintf(p->warn, "piper: warning: %s: %s: node %lld has no TMPC for tensor-parallel degree 1\n", p->file,
            path, n->orig_id);
  return PP_OK;
}

static pp_status parse_top(parser *p, const json_t *root) {
  pp_graph *g = p->g;
  pp_status st;
  long long ll;
  if ((st = pp_json_number(p, root, "maxMemoryPerDevice", "", 1, &g->max_memory))) return st;
  if ((st = pp_json_int(p, root, "maxDevices", "", 1, PP_MAX_DEVICES, &ll))) return st;
  g->max_devices = ll;
  if ((st = pp_json_number(p, root, "bandwidth", "", 1, &g->bandwidth))) return st;
  const char *mbs = json_object_get(root, "mbsInBatch") ? "mbsInBatch" : "maxBatchSize";
  if (!json_object_get(root, mbs))
    return pp_json_fail(p, "mbsInBatch", "missing (nor is its alias maxBatchSize given)");
  if ((st = pp_json_int(p, root, mbs, "", 1, PP_MAX_MICROBATCHES, &ll))) return st;
  g->microbatches = ll;
  /* Optional throughput facts (0 = not given): model FLOPs and tokens of
   * one sample, peak FLOP/s of one device. */
  static const char *const optional[3] = {"flopsPerSample", "tokensPerSample", "peakFlops"};
  double *dst[3] = {&g->flops_per_sample, &g->tokens_per_sample, &g->peak_flops};
  for (int i = 0; i < 3; i++)
    if (json_object_get(root, optional[i]) && (st = pp_json_number(p, root, optional[i], "", 1, dst[i])))
      return st;
  /* optional two-level network */
  const int has_g = json_object_get(root, "devicesPerNode") != NULL;
  const int has_bi = json_object_get(root, "intraNodeBandwidth") != NULL;
  if (has_g && (st = pp_json_int(p, root, "devicesPerNode", "", 1, PP_MAX_DEVICES, &g->devices_per_node)))
    return st;
  if (has_bi && (st = pp_json_number(p, root, "intraNodeBandwidth", "", 1, &g->intra_bandwidth))) return st;
  if (has_g && !has_bi) return pp_json_fail(p, "intraNodeBandwidth", "missing (devicesPerNode needs it)");
  if (has_bi && !has_g) return pp_json_fail(p, "devicesPerNode", "missing (intraNodeBandwidth needs it)");
  return PP_OK;
}

/* root's member key as an array of at most max elements (at least one
 * unless may_be_empty). */
static pp_status get_array(parser *p, const json_t *root, const char *key, size_t max, int may_be_empty,
                           json_t **out) {
  json_t *a = json_object_get(root, key);
  if (!a) return pp_json_fail(p, key, "missing");
  if (!json_is_array(a)) return pp_json_fail(p, key, "must be an array, got %s", pp_json_type_name(a));
  if (!may_be_empty && json_array_size(a) == 0) return pp_json_fail(p, key, "must not be empty");
  if (json_array_size(a) > max) return pp_json_fail(p, key, "too many %s (more than %zu)", key, max);
  *out = a;
  return PP_OK;
}

/* The ids and names of the nodes, in input order. */
static pp_status parse_nodes(parser *p, const json_t *nodes) {
  pp_graph *g = p->g;
  g->n_nodes = (int)json_array_size(nodes);
  g->nodes = pp_xcalloc((size_t)g->n_nodes, sizeof *g->nodes);
  size_t i;
  json_t *nd;
  pp_status st;
  json_array_foreach(nodes, i, nd) {
    char path[PATH_MAX_LEN];
    snprintf(path, sizeof path, "nodes[%zu]", i);
    if (!json_is_object(nd)) return pp_json_fail(p, path, "must be an object, got %s", pp_json_type_name(nd));
    long long id;
    if ((st = pp_json_int(p, nd, "id", path, LLONG_MIN, LLONG_MAX, &id))) return st;
    g->nodes[i].orig_id = id;
    json_t *name = json_object_get(nd, "name");
    if (name && !json_is_string(name) && !json_is_null(name)) {
      char np[PATH_MAX_LEN];
      snprintf(np, sizeof np, "%s.name", path);
      return pp_json_fail(p, np, "must be a string, got %s", pp_json_type_name(name));
    }
    if (name && json_is_string(name)) g->nodes[i].name = pp_xstrdup(json_string_value(name));
  }
  return PP_OK;
}

/* The sorted ids and their node indices (for node_index); a duplicate id
 * fails naming its second node and its first. */
static pp_status index_ids(parser *p) {
  const pp_graph *g = p->g;
  p->sorted_ids = pp_xmalloc(sizeof *p->sorted_ids * (size_t)g->n_nodes);
  p->sorted_idx = pp_xmalloc(sizeof *p->sorted_idx * (size_t)g->n_nodes);
  for (int v = 0; v < g->n_nodes; v++) p->sorted_ids[v] = g->nodes[v].orig_id;
  qsort(p->sorted_ids, (size_t)g->n_nodes, sizeof *p->sorted_ids, cmp_ll);
  for (int v = 1; v < g->n_nodes; v++) {
    if (p->sorted_ids[v] == p->sorted_ids[v - 1]) {
      int first = -1, second = -1;
      for (int w = 0; w < g->n_nodes; w++)
        if (g->nodes[w].orig_id == p->sorted_ids[v]) {
          if (first < 0)
            first = w;
          else if (second < 0)
            second = w;
        }
      char path[64];
      snprintf(path, sizeof path, "nodes[%d].id", second);
      return pp_json_fail(p, path, "duplicate node id %lld (also nodes[%d])", p->sorted_ids[v], first);
    }
  }
  for (int v = 0; v < g->n_nodes; v++) {
    int lo = 0, hi = g->n_nodes - 1;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (p->sorted_ids[mid] < g->nodes[v].orig_id)
        lo = mid + 1;
      else
        hi = mid;
    }
    p->sorted_idx[lo] = v;
  }
  return PP_OK;
}

/* The edges, their ends as node indices, in input order. */
static pp_status parse_edges(parser *p, const json_t *edges) {
  pp_graph *g = p->g;
  g->n_edges = (int)json_array_size(edges);
  g->edges = pp_xcalloc((size_t)g->n_edges + 1, sizeof *g->edges);
  size_t i;
  json_t *ed;
  pp_status st;
  json_array_foreach(edges, i, ed) {
    char path[PATH_MAX_LEN];
    snprintf(path, sizeof path, "edges[%zu]", i);
    if (!json_is_object(ed)) return pp_json_fail(p, path, "must be an object, got %s", pp_json_type_name(ed));
    long long s, d;
    if ((st = pp_json_int(p, ed, "sourceId", path, LLONG_MIN, LLONG_MAX, &s))) return st;
    if ((st = pp_json_int(p, ed, "destId", path, LLONG_MIN, LLONG_MAX, &d))) return st;
    if ((st = pp_json_number(p, ed, "communicationCost", path, 0, &g->edges[i].cost))) return st;
    int si = node_index(p, s), di = node_index(p, d);
    if (si < 0) return pp_json_fail(p, path, "sourceId %lld is not the id of any node", s);
    if (di < 0) return pp_json_fail(p, path, "destId %lld is not the id of any node", d);
    g->edges[i].src = si;
    g->edges[i].dst = di;
  }
  return PP_OK;
}

/* Adjacency lists in input edge order. */
static void build_adjacency(pp_graph *g) {
  for (int e = 0; e < g->n_edges; e++) {
    g->nodes[g->edges[e].src].out_deg++;
    g->nodes[g->edges[e].dst].in_deg++;
  }
  for (int v = 0; v < g->n_nodes; v++) {
    g->nodes[v].in_edges = pp_xmalloc(sizeof(int) * (size_t)(g->nodes[v].in_deg + 1));
    g->nodes[v].out_edges = pp_xmalloc(sizeof(int) * (size_t)(g->nodes[v].out_deg + 1));
    g->nodes[v].in_deg = g->nodes[v].out_deg = 0;
  }
  for (int e = 0; e < g->n_edges; e++) {
    pp_node *s = &g->nodes[g->edges[e].src], *d = &g->nodes[g->edges[e].dst];
    s->out_edges[s->out_deg++] = e;
    d->in_edges[d->in_deg++] = e;
  }
}

static pp_status parse_nodes_and_edges(parser *p, const json_t *root) {
  pp_graph *g = p->g;
  json_t *nodes, *edges;
  pp_status st;
  if ((st = get_array(p, root, "nodes", 1000000, 0, &nodes))) return st;
  if ((st = get_array(p, root, "edges", 100000000, 1, &edges))) return st;
  if ((st = parse_nodes(p, nodes))) return st;
  if ((st = index_ids(p))) return st;
  if ((st = parse_edges(p, edges))) return st;
  build_adjacency(g);
  pp_error inner = {0};
  if ((st = pp_graph_check_structure(g, &inner)))
    return pp_error_set(p->err, st, "%s: %s", p->file, inner.msg);
  size_t i;
  json_t *nd;
  json_array_foreach(nodes, i, nd) {
    char path[PATH_MAX_LEN];
    snprintf(path, sizeof path, "nodes[%zu]", i);
    if ((st = parse_tmpcs(p, nd, (int)i, path))) return st;
  }
  return PP_OK;
}

static void collect_degrees(pp_graph *g) {
  int cap = 8, n = 0;
  int *deg = pp_xmalloc(sizeof *deg * (size_t)cap);
  for (int v = 0; v < g->n_nodes; v++)
    for (int i = 0; i < g->nodes[v].n_lists; i++) {
      int t = g->nodes[v].lists[i].t, seen = 0;
      for (int j = 0; j < n; j++) seen |= deg[j] == t;
      if (seen) continue;
      if (n == cap) deg = pp_xrealloc(deg, sizeof *deg * (size_t)(cap *= 2));
      deg[n++] = t;
    }
  for (int a = 1; a < n; a++)
    for (int b = a; b > 0 && deg[b - 1] > deg[b]; b--) {
      int t = deg[b];
      deg[b] = deg[b - 1];
      deg[b - 1] = t;
    }
  g->degrees = deg;
  g->n_degrees = n;
}

pp_status pp_json_build_graph(const char *name, const json_t *root, FILE *warn, pp_graph **out,
                              pp_error *err) {
  parser p = {.file = name, .err = err, .warn = warn};
  p.g = pp_xcalloc(1, sizeof *p.g);
  pp_status st = PP_OK;
  if (!json_is_object(root)) {
    st = pp_json_fail(&p, "", "the top level must be an object, got %s", pp_json_type_name(root));
    goto done;
  }
  if ((st = parse_top(&p, root))) goto done;
  if ((st = parse_nodes_and_edges(&p, root))) goto done;
  collect_degrees(p.g);
  p.g->source_path = pp_xstrdup(name);
  if (p.g->devices_per_node > 0 &&
      (st = pp_graph_check_node_size(p.g, p.g->devices_per_node, "devicesPerNode", err)))
    goto done;
done:
  free(p.sorted_ids);
  free(p.sorted_idx);
  if (st) {
    pp_graph_free(p.g);
    return st;
  }
  *out = p.g;
  return PP_OK;
}
