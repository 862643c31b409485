/*
 * testutil.h - helpers shared by the planner-core tests: a small in-memory
 * description of a graph that is turned into Piper JSON text and loaded
 * through the public loader, a deterministic random generator, random DAGs,
 * and a "plan it end to end" helper.
 *
 * Header-only (everything static); include it from one test file each.
 * Needs _POSIX_C_SOURCE >= 200809L before any system header (open_memstream).
 */
#ifndef PIPER_TESTUTIL_H
#define PIPER_TESTUTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "piper/check.h"
#include "piper/dp.h"
#include "piper/downsets.h"
#include "piper/graph.h"
#include "piper/plan.h"
#include "piper/problem.h"
#include "piper/table.h"

#define TU_MAX_NODES 16
#define TU_MAX_LISTS 4
#define TU_MAX_TMPCS 3
#define TU_MAX_EDGES 120

/* One TMPC; fw[u] / bw[w] are the sync bytes for the edge u -> v / v -> w
 * (indexed by node index; only entries of real edges are written). */
typedef struct tu_tmpc {
  char id[32];
  double time, param, mem_a, mem_b;
  double fw[TU_MAX_NODES], bw[TU_MAX_NODES];
  int has_parts; /* write weightBytes, gradientBytes, optimizerBytes */
  double weight, gradient, optimizer;
} tu_tmpc;

typedef struct tu_list {
  int t;
  int count;
  tu_tmpc tm[TU_MAX_TMPCS];
} tu_list;

typedef struct tu_node {
  int n_lists;
  tu_list lists[TU_MAX_LISTS];
} tu_node;

/* A whole graph.  Node i gets the input id tu_node_id(i), deliberately not
 * in increasing order, so that numbering by position is exercised. */
typedef struct tu_spec {
  int n;
  tu_node nodes[TU_MAX_NODES];
  int n_edges;
  int src[TU_MAX_EDGES], dst[TU_MAX_EDGES];
  double cost[TU_MAX_EDGES];
  double memory, bandwidth;
  int devices, microbatches;
} tu_spec;

static inline long long tu_node_id(int i) { return 40 + (i * 7) % TU_MAX_NODES; }

/* A new spec with n nodes and no TMPCs or edges (caller frees with free()). */
static inline tu_spec *tu_spec_new(int n) {
  cr_assert(n >= 1 && n <= TU_MAX_NODES);
  tu_spec *s = calloc(1, sizeof *s);
  cr_assert_not_null(s);
  s->n = n;
  s->memory = 1e12;
  s->bandwidth = 1e3;
  s->devices = 4;
  s->microbatches = 4;
  return s;
}

static inline void tu_edge(tu_spec *s, int u, int v, double cost) {
  cr_assert(s->n_edges < TU_MAX_EDGES && u != v && u >= 0 && v >= 0 && u < s->n && v < s->n);
  s->src[s->n_edges] = u;
  s->dst[s->n_edges] = v;
  s->cost[s->n_edges] = cost;
  s->n_edges++;
}

/* Adds a TMPC for node v and degree t (creating the list); sync values 0. */
static inline tu_tmpc *tu_tmpc_add(tu_spec *s, int v, int t, const char *id, double time, double param,
                                   double mem_a, double mem_b) {
  tu_node *nd = &s->nodes[v];
  tu_list *l = NULL;
  for (int i = 0; i < nd->n_lists; i++)
    if (nd->lists[i].t == t) l = &nd->lists[i];
  if (!l) {
    cr_assert(nd->n_lists < TU_MAX_LISTS);
    l = &nd->lists[nd->n_lists++];
    l->t = t;
  }
  cr_assert(l->count < TU_MAX_TMPCS);
  tu_tmpc *m = &l->tm[l->count++];
  memset(m, 0, sizeof *m);
  snprintf(m->id, sizeof m->id, "%s", id);
  m->time = time;
  m->param = param;
  m->mem_a = mem_a;
  m->mem_b = mem_b;
  return m;
}

/* Adds an empty list for (v, t) (a degree the node "has" with no TMPC). */
static inline void tu_list_empty(tu_spec *s, int v, int t) {
  tu_node *nd = &s->nodes[v];
  cr_assert(nd->n_lists < TU_MAX_LISTS);
  nd->lists[nd->n_lists].t = t;
  nd->lists[nd->n_lists].count = 0;
  nd->n_lists++;
}

/* The spec as Piper JSON (caller frees). */
static inline char *tu_json(const tu_spec *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cr_assert_not_null(f);
  fprintf(f,
          "{\"maxMemoryPerDevice\": %.17g, \"maxDevices\": %d, \"bandwidth\": %.17g, \"mbsInBatch\": %d,\n",
          s->memory, s->devices, s->bandwidth, s->microbatches);
  fprintf(f, " \"nodes\": [\n");
  for (int v = 0; v < s->n; v++) {
    const tu_node *nd = &s->nodes[v];
    fprintf(f, "  {\"id\": %lld, \"name\": \"n%d\", \"TMPCs\": {", tu_node_id(v), v);
    for (int li = 0; li < nd->n_lists; li++) {
      const tu_list *l = &nd->lists[li];
      fprintf(f, "%s\"%d\": [", li ? ", " : "", l->t);
      for (int k = 0; k < l->count; k++) {
        const tu_tmpc *m = &l->tm[k];
        fprintf(
            f,
            "%s{\"id\": \"%s\", \"timePerSample\": %.17g, \"parameterSize\": %.17g, \"memoryUsageA\": %.17g, "
            "\"memoryUsageB\": %.17g, \"syncTimeFw\": {",
            k ? ", " : "", m->id, m->time, m->param, m->mem_a, m->mem_b);
        int first = 1;
        for (int e = 0; e < s->n_edges; e++)
          if (s->dst[e] == v) {
            fprintf(f, "%s\"%lld\": %.17g", first ? "" : ", ", tu_node_id(s->src[e]), m->fw[s->src[e]]);
            first = 0;
          }
        fprintf(f, "}, \"syncTimeBw\": {");
        first = 1;
        for (int e = 0; e < s->n_edges; e++)
          if (s->src[e] == v) {
            fprintf(f, "%s\"%lld\": %.17g", first ? "" : ", ", tu_node_id(s->dst[e]), m->bw[s->dst[e]]);
            first = 0;
          }
        fprintf(f, "}");
        if (m->has_parts)
          fprintf(f, ", \"weightBytes\": %.17g, \"gradientBytes\": %.17g, \"optimizerBytes\": %.17g",
                  m->weight, m->gradient, m->optimizer);
        fprintf(f, "}");
      }
      fprintf(f, "]");
    }
    fprintf(f, "}}%s\n", v + 1 < s->n ? "," : "");
  }
  fprintf(f, " ],\n \"edges\": [\n");
  for (int e = 0; e < s->n_edges; e++)
    fprintf(f, "  {\"sourceId\": %lld, \"destId\": %lld, \"communicationCost\": %.17g}%s\n",
            tu_node_id(s->src[e]), tu_node_id(s->dst[e]), s->cost[e], e + 1 < s->n_edges ? "," : "");
  fprintf(f, " ]}\n");
  cr_assert_eq(fclose(f), 0);
  return buf;
}

/* Loads the spec through the public loader; asserts success. */
static inline pp_graph *tu_load(const tu_spec *s) {
  char *text = tu_json(s);
  pp_graph *g = NULL;
  pp_error err = {0};
  pp_status st = pp_graph_load_buffer("test.json", text, strlen(text), NULL, &g, &err);
  cr_assert_eq(st, PP_OK, "loading a generated graph failed: %s\n%s", err.msg, text);
  free(text);
  return g;
}

/* The problem given by the spec's top-level values (greedy knapsack). */
static inline pp_problem tu_problem(const tu_spec *s) {
  pp_problem p;
  memset(&p, 0, sizeof p);
  p.devices = s->devices;
  p.memory = s->memory;
  p.microbatches = s->microbatches;
  p.bandwidth = s->bandwidth;
  p.knapsack = PP_KNAPSACK_GREEDY;
  return p;
}

/* splitmix64: deterministic, seedable. */
typedef struct tu_rng {
  uint64_t x;
} tu_rng;

static inline uint64_t tu_next(tu_rng *r) {
  uint64_t z = (r->x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static inline int tu_int(tu_rng *r, int lo, int hi) {
  return lo + (int)(tu_next(r) % (uint64_t)(hi - lo + 1));
}

/* Uniform double in [0, 1). */
static inline double tu_unit(tu_rng *r) { return (double)(tu_next(r) >> 11) * (1.0 / 9007199254740992.0); }

/* Random edges over n nodes: u -> v only for perm-order(u) < perm-order(v)
 * (a random topological order, so edges go both ways in node numbering),
 * each with probability p_edge; random costs. */
static inline void tu_random_edges(tu_spec *s, tu_rng *r, double p_edge) {
  int perm[TU_MAX_NODES];
  for (int i = 0; i < s->n; i++) perm[i] = i;
  for (int i = s->n - 1; i > 0; i--) {
    int j = tu_int(r, 0, i), x = perm[i];
    perm[i] = perm[j];
    perm[j] = x;
  }
  for (int a = 0; a < s->n; a++)
    for (int b = a + 1; b < s->n; b++)
      if (tu_unit(r) < p_edge) tu_edge(s, perm[a], perm[b], (double)tu_int(r, 0, 400));
}

/* Random TMPCs for every node of s: for t = 1 and (unless skipped with
 * probability p_skip_t2) t = 2, one or two TMPCs ("vanilla" and possibly a
 * recomputing one with smaller activations and a longer time) sharing the
 * parameter bytes of that t.  *need gets the largest over nodes of a
 * node's smallest memory (a + b), *sum_max the sum of their largest. */
static inline void tu_random_tmpcs(tu_spec *s, tu_rng *r, double p_skip_t2, double *need, double *sum_max) {
  *need = 0;
  *sum_max = 0;
  for (int v = 0; v < s->n; v++) {
    const int base = tu_int(r, 5, 100);
    double vmin = INFINITY, vmax = 0;
    for (int t = 1; t <= 2; t++) {
      if (t == 2 && tu_unit(r) < p_skip_t2) continue;
      const int cnt = tu_int(r, 1, 2);
      const double param = tu_int(r, 0, 3000);
      for (int l = 0; l < cnt; l++) {
        double a = tu_int(r, 0, 12), b = tu_int(r, 1, 50);
        const double time = l == 0 ? base / (t == 1 ? 1.0 : 1.0 + tu_unit(r)) : base * (1.1 + tu_unit(r));
        if (l == 1) {
          a = floor(a / 3);
          b = floor(b / 2) + 1;
        }
        tu_tmpc_add(s, v, t, l == 0 ? "vanilla" : PP_RECOMPUTE_TMPC_ID, time, param, a, b);
        vmin = fmin(vmin, a + b);
        vmax = fmax(vmax, a + b);
      }
    }
    *need = fmax(*need, vmin);
    *sum_max += vmax;
  }
}

/* Fills every TMPC's sync maps with random values for the spec's edges. */
static inline void tu_random_sync(tu_spec *s, tu_rng *r, int max_sync) {
  for (int v = 0; v < s->n; v++)
    for (int li = 0; li < s->nodes[v].n_lists; li++)
      for (int k = 0; k < s->nodes[v].lists[li].count; k++) {
        tu_tmpc *m = &s->nodes[v].lists[li].tm[k];
        for (int e = 0; e < s->n_edges; e++) {
          if (s->dst[e] == v) m->fw[s->src[e]] = (double)tu_int(r, 0, max_sync);
          if (s->src[e] == v) m->bw[s->dst[e]] = (double)tu_int(r, 0, max_sync);
        }
      }
}

/* A random graph of kind 0 (random DAG of 8-10 nodes), 1 (chain of 8-12)
 * or 2 (wide: 8-10 nodes, few edges), with random TMPCs (tu_random_tmpcs,
 * *need and *sum_max as there), sync maps and bandwidth; the caller sets
 * N, K and the memory (caller frees with free()). */
static inline tu_spec *tu_random_kind(tu_rng *r, int kind, double *need, double *sum_max) {
  const int n = tu_int(r, 8, kind == 1 ? 12 : 10);
  tu_spec *s = tu_spec_new(n);
  if (kind == 1)
    for (int v = 0; v + 1 < n; v++) tu_edge(s, v, v + 1, (double)tu_int(r, 0, 400));
  else
    tu_random_edges(s, r, kind == 0 ? 0.25 + 0.2 * tu_unit(r) : 0.08);
  tu_random_tmpcs(s, r, 0.3, need, sum_max);
  tu_random_sync(s, r, 200);
  s->bandwidth = 50 * tu_int(r, 1, 40);
  return s;
}

/* A graph loaded from a spec, its downsets and up to 3 DPs on them. */
typedef struct tu_dps {
  pp_graph *g;
  pp_downsets *ds;
  pp_dp *dp[3];
  int n;
} tu_dps;

/* Loads s, enumerates its downsets and makes n (1..3) DPs of (graph, p)
 * on them (tables of the empty downset only); asserts every step.  Free
 * with tu_dps_free; s and p are not kept. */
static inline tu_dps tu_dps_make(const tu_spec *s, const pp_problem *p, int n) {
  tu_dps d = {tu_load(s), NULL, {NULL, NULL, NULL}, n};
  pp_error err = {0};
  cr_assert(n >= 1 && n <= 3);
  cr_assert_eq(pp_downsets_enumerate(d.g, 1000000, &d.ds, &err), PP_OK, "%s", err.msg);
  for (int i = 0; i < n; i++)
    cr_assert_eq(pp_dp_create(d.g, p, d.ds, 0, &d.dp[i], &err), PP_OK, "%s", err.msg);
  return d;
}

/* Frees the DPs, the downsets and the graph of d. */
static inline void tu_dps_free(tu_dps *d) {
  for (int i = 0; i < d->n; i++) pp_dp_free(d->dp[i]);
  pp_downsets_free(d->ds);
  pp_graph_free(d->g);
}

/* The result of planning one problem end to end through the library. */
typedef struct tu_outcome {
  double optimum; /* pp_dp_optimum(K); +INFINITY when infeasible */
  pp_plan *plan;  /* reconstructed (and checked if feasible); caller frees */
  int downsets;
} tu_outcome;

/* Enumerates, solves, reconstructs and checks; asserts that every step
 * succeeds, that a feasible plan passes pp_check_plan and that its TPS is
 * the optimum (relative 1e-9).  label names the instance in messages. */
static inline tu_outcome tu_plan(const pp_graph *g, const pp_problem *p, const char *label) {
  tu_outcome o = {INFINITY, NULL, 0};
  pp_error err = {0};
  pp_downsets *ds = NULL;
  pp_dp *dp = NULL;
  cr_assert_eq(pp_downsets_enumerate(g, 10000000, &ds, &err), PP_OK, "%s: %s", label, err.msg);
  o.downsets = ds->count;
  cr_assert_eq(pp_dp_create(g, p, ds, 0, &dp, &err), PP_OK, "%s: %s", label, err.msg);
  cr_assert_eq(pp_dp_solve(dp, NULL, NULL, &err), PP_OK, "%s: %s", label, err.msg);
  o.optimum = pp_dp_optimum(dp, p->devices);
  cr_assert_eq(pp_dp_reconstruct(dp, p->devices, &o.plan, &err), PP_OK, "%s: reconstruct: %s", label,
               err.msg);
  cr_assert_not_null(o.plan);
  if (o.optimum == INFINITY) {
    cr_assert_eq(o.plan->feasible, 0, "%s: infeasible optimum but a feasible plan", label);
    cr_assert_eq(o.plan->n_stages, 0, "%s: infeasible optimum but %d stages", label, o.plan->n_stages);
  } else {
    cr_assert(o.plan->feasible, "%s: finite optimum %.17g but no plan", label, o.optimum);
    pp_status st = pp_check_plan(g, p, o.plan, &err);
    cr_assert_eq(st, PP_OK, "%s: the reconstructed plan fails the check: %s", label, err.msg);
    cr_assert(fabs(o.plan->tps - o.optimum) <= 1e-9 * fabs(o.optimum),
              "%s: checked TPS %.17g differs from the DP optimum %.17g", label, o.plan->tps, o.optimum);
    cr_assert(o.plan->devices_used <= p->devices, "%s: plan uses %d devices > K = %d", label,
              o.plan->devices_used, p->devices);
  }
  pp_dp_free(dp);
  pp_downsets_free(ds);
  return o;
}

/* Relative closeness (both infinite counts as equal). */
static inline int tu_close(double a, double b, double rel) {
  if (isinf(a) || isinf(b)) return isinf(a) && isinf(b);
  return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

/* Equal as stored: same budgets, same rows, same steps. */
static inline void assert_same_steps(const pp_stairs *a, const pp_stairs *b, const char *what) {
  cr_assert_eq(a->k_first, b->k_first, "%s", what);
  cr_assert_eq(a->k_last, b->k_last, "%s", what);
  cr_assert_eq(a->n_rows, b->n_rows, "%s: %d rows vs %d", what, a->n_rows, b->n_rows);
  for (int r = 0; r <= a->n_rows; r++) cr_assert_eq(a->row_start[r], b->row_start[r], "%s: row %d", what, r);
  for (int r = 0; r < a->n_rows; r++) cr_assert_eq(a->row_k[r], b->row_k[r], "%s: row %d", what, r);
  for (int j = 0; j < a->row_start[a->n_rows]; j++) {
    cr_assert_eq(a->s[j], b->s[j], "%s: step %d", what, j);
    cr_assert(a->v[j] == b->v[j], "%s: step %d", what, j);
  }
}

/* Equal as staircases: the same value at every (k, s <= S) (reported
 * first, by position), then the same rows and steps. */
static inline void assert_same_stairs(const pp_stairs *a, const pp_stairs *b, int S, const char *what) {
  cr_assert_eq(a->k_first, b->k_first, "%s", what);
  cr_assert_eq(a->k_last, b->k_last, "%s", what);
  for (int k = a->k_first; k <= a->k_last; k++)
    for (int s = 0; s <= S; s++) {
      double x = pp_stairs_value(a, k, s), y = pp_stairs_value(b, k, s);
      cr_assert(x == y, "%s: (%d, %d): %.17g vs %.17g", what, k, s, x, y);
    }
  assert_same_steps(a, b, what);
}

/* Asserts got == want to 1e-12 relative, printing both. */
#define NEAR(got, want) \
  cr_assert(tu_close((got), (want), 1e-12), "%s = %.17g, expected %.17g", #got, (got), (want))

/* The reference's greedy knapsack (reference-semantics notes, section 6) on
 * contributions c and memories w (both [m][count], count <= 3), budget M;
 * H[m] receives the choice.  Written from the notes, independently of
 * src/core/knapsack.c.  Returns +INFINITY if even the smallest TMPCs do not fit. */
static inline double tu_ref_greedy(int m, const int *count, double c[][3], double w[][3], double M, int *H) {
  double mem_fast = 0, mem_low = 0;
  for (int i = 0; i < m; i++) {
    int f = 0, lo = 0;
    for (int l = 1; l < count[i]; l++) {
      if (c[i][f] > c[i][l]) f = l;
      if (w[i][lo] > w[i][l]) lo = l;
    }
    H[i] = f;
    mem_fast += w[i][f];
    mem_low += w[i][lo];
  }
  if (mem_fast > M) {
    if (mem_low > M) return INFINITY;
    struct {
      double key;
      int i, l;
    } sw[TU_MAX_NODES * 3], tmp;
    int n = 0;
    for (int i = 0; i < m; i++)
      for (int l = 0; l < count[i]; l++) {
        double saving = w[i][H[i]] - w[i][l];
        if (saving > 1e-9) {
          sw[n].key = (c[i][l] - c[i][H[i]]) / saving;
          sw[n].i = i;
          sw[n].l = l;
          n++;
        }
      }
    for (int a = 1; a < n; a++) /* insertion sort by (key, i, l) */
      for (int b = a; b > 0; b--) {
        int less = sw[b].key < sw[b - 1].key ||
                   (sw[b].key == sw[b - 1].key &&
                    (sw[b].i < sw[b - 1].i || (sw[b].i == sw[b - 1].i && sw[b].l < sw[b - 1].l)));
        if (!less) break;
        tmp = sw[b], sw[b] = sw[b - 1], sw[b - 1] = tmp;
      }
    double shave = mem_fast - M;
    for (int x = 0; x < n; x++) {
      shave -= w[sw[x].i][H[sw[x].i]] - w[sw[x].i][sw[x].l];
      H[sw[x].i] = sw[x].l;
      if (shave < 1e-9) break;
    }
  }
  double r = 0;
  for (int i = 0; i < m; i++) r += c[i][H[i]];
  return r;
}

/* The brute forces' own model of ZeRO and the two-level network. */

/* Seconds per batch to synchronise P bytes over d replicas of t devices:
 * 4 (d-1)/d P at B; on a two-level network inside a node (Bi) when d t <= G,
 * else 4 (g-1)/g P at Bi plus 4 (n-1)/n P/g at B, g = floor(G/t) replicas
 * per node, n = ceil(d/g) nodes; ZeRO-3: 1.5 times. */
static inline double tu_sync_seconds(const pp_problem *p, double P, int d, int t) {
  double r = 0;
  if (d > 1 && p->devices_per_node == 0) r = 4.0 * (d - 1) / d * P / p->bandwidth;
  if (d > 1 && p->devices_per_node > 0) {
    const int G = p->devices_per_node, g = G / t, n = (d + g - 1) / g;
    r = d * t <= G ? 4.0 * (d - 1) / d * P / p->intra_bandwidth
                   : 4.0 * (g - 1) / g * P / p->intra_bandwidth + 4.0 * (n - 1) / n * P / g / p->bandwidth;
  }
  return p->zero == 3 ? 1.5 * r : r;
}

/* The B a replica keeps at degree d under the ZeRO stage. */
static inline double tu_keep_bytes(const pp_problem *p, const tu_tmpc *x, int d) {
  const double z =
      (p->zero >= 1 ? x->optimizer : 0) + (p->zero >= 2 ? x->gradient : 0) + (p->zero >= 3 ? x->weight : 0);
  return p->zero ? (x->mem_b - z) + z / d : x->mem_b;
}

/* Gives every TMPC of s weight, gradient and optimizer parts of its B
 * (integers, summing to at most B), with the optimizer state the largest
 * part more often than not, as in mixed-precision Adam. */
static inline void tu_add_parts(tu_spec *s, tu_rng *r) {
  for (int v = 0; v < s->n; v++)
    for (int li = 0; li < s->nodes[v].n_lists; li++)
      for (int k = 0; k < s->nodes[v].lists[li].count; k++) {
        tu_tmpc *m = &s->nodes[v].lists[li].tm[k];
        m->has_parts = 1;
        m->optimizer = floor(m->mem_b * 0.7 * tu_unit(r));
        m->gradient = floor((m->mem_b - m->optimizer) * 0.6 * tu_unit(r));
        m->weight = floor((m->mem_b - m->optimizer - m->gradient) * tu_unit(r));
      }
}

#endif /* PIPER_TESTUTIL_H */
