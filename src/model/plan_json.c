/*
 * plan_json.c - reads a plan report ("stages" of `piper plan --format json`)
 * back into a pp_plan for a graph, and maps plans between graphs by id.
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "piper/plan_io.h"

typedef struct id_index {
  long long id;
  int index;
} id_index;

static int cmp_id(const void *a, const void *b) {
  long long x = ((const id_index *)a)->id, y = ((const id_index *)b)->id;
  return (x > y) - (x < y);
}

/* Sorted (id, index) pairs of g's nodes; caller frees. */
static id_index *index_ids(const pp_graph *g) {
  id_index *ix = pp_xmalloc(sizeof *ix * ((size_t)g->n_nodes + 1));
  for (int v = 0; v < g->n_nodes; v++) ix[v] = (id_index){g->nodes[v].orig_id, v};
  qsort(ix, (size_t)g->n_nodes, sizeof *ix, cmp_id);
  return ix;
}

static int find_node(const id_index *ix, int n, long long id) {
  id_index key = {id, -1};
  const id_index *hit = bsearch(&key, ix, (size_t)n, sizeof *ix, cmp_id);
  return hit ? hit->index : -1;
}

/* TMPC index of the TMPC called id of node v for degree t: 0 if the node
 * offers no list for t (the checker reports it), -1 if the id is unknown. */
static int find_tmpc(const pp_graph *g, int v, int t, const char *id) {
  const pp_tmpc_list *l = pp_graph_tmpcs(g, v, t);
  if (!l) return 0;
  for (int k = 0; k < l->count; k++)
    if (strcmp(l->tmpcs[k].id, id) == 0) return k;
  return -1;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Sorts a stage's nodes ascending, keeping each TMPC index with its node. */
static void sort_stage(pp_plan_stage *s) {
  int *pairs = pp_xmalloc(sizeof(int) * 2 * ((size_t)s->n_nodes + 1));
  for (int j = 0; j < s->n_nodes; j++) {
    pairs[2 * j] = s->nodes[j];
    pairs[2 * j + 1] = s->tmpc[j];
  }
  qsort(pairs, (size_t)s->n_nodes, 2 * sizeof(int), cmp_int);
  for (int j = 0; j < s->n_nodes; j++) {
    s->nodes[j] = pairs[2 * j];
    s->tmpc[j] = pairs[2 * j + 1];
  }
  free(pairs);
}

typedef struct reader {
  const char *file;
  const pp_graph *g;
  id_index *ix;
  char *seen; /* [n_nodes]: node already in a stage */
  pp_error *err;
} reader;

static pp_status bad(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static pp_status bad(reader *r, const char *fmt, ...) {
  char what[PP_ERROR_MSG_MAX / 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return pp_error_set(r->err, PP_ERR_INPUT, "%s: %s", r->file, what);
}

static pp_status get_degree(reader *r, const json_t *js, int i, const char *key, int *out) {
  json_t *j = json_object_get(js, key);
  if (!json_is_integer(j) || json_integer_value(j) < 1 || json_integer_value(j) > 100000000)
    return bad(r, "stages[%d].%s: must be an integer >= 1", i, key);
  *out = (int)json_integer_value(j);
  return PP_OK;
}

static pp_status read_stage(reader *r, const json_t *js, int i, pp_plan_stage *s) {
  if (!json_is_object(js)) return bad(r, "stages[%d]: must be an object", i);
  pp_status st;
  if ((st = get_degree(r, js, i, "d", &s->d)) || (st = get_degree(r, js, i, "t", &s->t))) return st;
  const json_t *nodes = json_object_get(js, "nodes"), *tmpc = json_object_get(js, "tmpc");
  if (!json_is_array(nodes) || json_array_size(nodes) == 0)
    return bad(r, "stages[%d].nodes: must be a non-empty array of node ids", i);
  if (!json_is_object(tmpc)) return bad(r, "stages[%d].tmpc: must be an object {node id: TMPC id}", i);
  size_t n = json_array_size(nodes);
  if (n > (size_t)r->g->n_nodes) return bad(r, "stages[%d].nodes: more ids than the graph has nodes", i);
  s->n_nodes = (int)n;
  s->nodes = pp_xmalloc(sizeof(int) * n);
  s->tmpc = pp_xmalloc(sizeof(int) * n);
  for (size_t j = 0; j < n; j++) {
    const json_t *id = json_array_get(nodes, j);
    if (!json_is_integer(id)) return bad(r, "stages[%d].nodes[%zu]: must be an integer node id", i, j);
    long long oid = json_integer_value(id);
    int v = find_node(r->ix, r->g->n_nodes, oid);
    if (v < 0) return bad(r, "stages[%d].nodes[%zu]: node %lld is not in the graph", i, j, oid);
    if (r->seen[v]) return bad(r, "stages[%d].nodes[%zu]: node %lld is already in a stage", i, j, oid);
    r->seen[v] = 1;
    char key[32];
    snprintf(key, sizeof key, "%lld", oid);
    const json_t *name = json_object_get(tmpc, key);
    if (!json_is_string(name)) return bad(r, "stages[%d].tmpc[\"%s\"]: missing (a TMPC id string)", i, key);
    int k = find_tmpc(r->g, v, s->t, json_string_value(name));
    if (k < 0)
      return bad(r, "stages[%d].tmpc[\"%s\"]: node %lld has no TMPC \"%s\" for t = %d", i, key, oid,
                 json_string_value(name), s->t);
    s->nodes[j] = v;
    s->tmpc[j] = k;
  }
  sort_stage(s);
  return PP_OK;
}

static pp_status read_plan(reader *r, const json_t *root, pp_plan **out) {
  if (!json_is_object(root)) return bad(r, "the top level must be an object with \"stages\"");
  const json_t *stages = json_object_get(root, "stages");
  if (!json_is_array(stages)) return bad(r, "stages: missing or not an array");
  size_t n = json_array_size(stages);
  if (n == 0) return bad(r, "stages: empty (the report is of an infeasible plan?)");
  if (n > (size_t)r->g->n_nodes) return bad(r, "stages: more stages than the graph has nodes");
  pp_plan *plan = pp_plan_new((int)n);
  for (size_t i = 0; i < n; i++) {
    pp_status st = read_stage(r, json_array_get(stages, i), (int)i, &plan->stages[i]);
    if (st) {
      pp_plan_free(plan);
      return st;
    }
  }
  for (int v = 0; v < r->g->n_nodes; v++)
    if (!r->seen[v]) {
      pp_plan_free(plan);
      return bad(r, "stages: node %lld of the graph is in no stage", r->g->nodes[v].orig_id);
    }
  *out = plan;
  return PP_OK;
}

pp_status pp_plan_load_json(const char *path, const pp_graph *g, pp_plan **out, pp_error *err) {
  *out = NULL;
  int is_stdin = strcmp(path, "-") == 0;
  reader r = {.file = is_stdin ? "<stdin>" : path, .g = g, .err = err};
  json_error_t jerr;
  json_t *root = is_stdin ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &jerr)
                          : json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) {
    if (jerr.line < 0) return bad(&r, "cannot read: %s", jerr.text);
    return bad(&r, "line %d, column %d: invalid JSON: %s", jerr.line, jerr.column, jerr.text);
  }
  r.ix = index_ids(g);
  r.seen = pp_xcalloc((size_t)g->n_nodes + 1, 1);
  pp_status st = read_plan(&r, root, out);
  free(r.ix);
  free(r.seen);
  json_decref(root);
  return st;
}

pp_status pp_plan_remap(const pp_graph *from, const pp_plan *in, const pp_graph *to, const char *where,
                        pp_plan **out, pp_error *err) {
  *out = NULL;
  id_index *ix = index_ids(to);
  pp_plan *plan = pp_plan_new(in->n_stages);
  pp_status st = PP_OK;
  for (int i = 0; i < in->n_stages && !st; i++) {
    const pp_plan_stage *a = &in->stages[i];
    pp_plan_stage *b = &plan->stages[i];
    b->d = a->d;
    b->t = a->t;
    b->n_nodes = a->n_nodes;
    b->nodes = pp_xmalloc(sizeof(int) * ((size_t)a->n_nodes + 1));
    b->tmpc = pp_xmalloc(sizeof(int) * ((size_t)a->n_nodes + 1));
    for (int j = 0; j < a->n_nodes && !st; j++) {
      long long oid = from->nodes[a->nodes[j]].orig_id;
      const pp_tmpc_list *l = pp_graph_tmpcs(from, a->nodes[j], a->t);
      const char *tid = l && a->tmpc[j] >= 0 && a->tmpc[j] < l->count ? l->tmpcs[a->tmpc[j]].id : "";
      int v = find_node(ix, to->n_nodes, oid);
      int k = v < 0 ? -1 : find_tmpc(to, v, a->t, tid);
      if (v < 0)
        st = pp_error_set(err, PP_ERR_INPUT, "%s: stage %d: node %lld is not in the input", where, i, oid);
      else if (k < 0)
        st = pp_error_set(err, PP_ERR_INPUT,
                          "%s: stage %d: node %lld has no TMPC \"%s\" for t = %d in the input", where, i, oid,
                          tid, a->t);
      else {
        b->nodes[j] = v;
        b->tmpc[j] = k;
      }
    }
    if (!st) sort_stage(b);
  }
  free(ix);
  if (st) {
    pp_plan_free(plan);
    return st;
  }
  *out = plan;
  return PP_OK;
}
