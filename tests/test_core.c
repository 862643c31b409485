/*
 * test_core.c - unit tests of the planner core, module by module: downset
 * enumeration (downsets.c), the stage cost model and the TMPC knapsack
 * (stage.c), DP table staircases (table.c), the dynamic programme on tiny
 * graphs with hand-computed optima and over split device ranges (dp.c), and
 * the independent plan checker (check.c).
 *
 * Graphs are described with the helpers of testutil.h and loaded through the
 * public JSON loader.  Expected values are worked out by hand in the comments.
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include "piper/bitset.h"
#include "stage.h"
#include "piper/table.h"

/* ------------------------------------------------------------------------ */
/* Downsets                                                                 */
/* ------------------------------------------------------------------------ */

/* A graph with n nodes (one cheap TMPC each) and the given edges. */
static pp_graph *graph_of(int n, const int (*edges)[2], int n_edges) {
  tu_spec *s = tu_spec_new(n);
  for (int v = 0; v < n; v++) tu_tmpc_add(s, v, 1, "vanilla", 1, 0, 0, 1);
  for (int e = 0; e < n_edges; e++) tu_edge(s, edges[e][0], edges[e][1], 1);
  pp_graph *g = tu_load(s);
  free(s);
  return g;
}

static pp_downsets *enumerate_ok(const pp_graph *g) {
  pp_downsets *ds = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_downsets_enumerate(g, 100000000, &ds, &err), PP_OK, "%s", err.msg);
  cr_assert_not_null(ds);
  return ds;
}

/* Number of successor-closed subsets of g, by trying every subset. */
static int brute_downset_count(const pp_graph *g) {
  cr_assert(g->n_nodes <= 20);
  int count = 0;
  for (uint32_t m = 0; m < (1u << g->n_nodes); m++) {
    int ok = 1;
    for (int e = 0; e < g->n_edges && ok; e++)
      if ((m >> g->edges[e].src & 1) && !(m >> g->edges[e].dst & 1)) ok = 0;
    count += ok;
  }
  return count;
}

/* Checks every structural promise of pp_downsets: empty first, full last,
 * sorted by size with correct layer boundaries, closed under successors, no
 * repeats, each found at its own index. */
static void check_downsets(const pp_graph *g, const pp_downsets *ds) {
  const int n = g->n_nodes;
  cr_assert_eq(ds->n_nodes, n);
  cr_assert_eq(ds->n_layers, n + 1);
  cr_assert_eq(pp_bits_count(pp_downset_bits(ds, 0), ds->words), 0, "index 0 is not the empty set");
  cr_assert_eq(pp_bits_count(pp_downset_bits(ds, ds->count - 1), ds->words), n,
               "last index is not the full set");
  cr_assert_eq(ds->layer_start[0], 0);
  cr_assert_eq(ds->layer_start[n + 1], ds->count);
  for (int L = 0; L <= n; L++) cr_assert(ds->layer_start[L] <= ds->layer_start[L + 1], "layer %d", L);
  for (int i = 0; i < ds->count; i++) {
    const uint64_t *b = pp_downset_bits(ds, i);
    int sz = pp_bits_count(b, ds->words);
    cr_assert_eq(ds->size[i], sz, "downset %d: size %d, %d bits", i, ds->size[i], sz);
    cr_assert(i == 0 || ds->size[i - 1] <= sz, "downsets not sorted by size at %d", i);
    cr_assert(ds->layer_start[sz] <= i && i < ds->layer_start[sz + 1],
              "downset %d of size %d outside its layer", i, sz);
    for (int e = 0; e < g->n_edges; e++)
      cr_assert(!pp_bit_get(b, g->edges[e].src) || pp_bit_get(b, g->edges[e].dst),
                "downset %d holds %d but not its successor %d", i, g->edges[e].src, g->edges[e].dst);
    cr_assert_eq(pp_downsets_find(ds, b), i, "downset %d is found at %d (repeat?)", i,
                 pp_downsets_find(ds, b));
  }
}

static int count_of(int n, const int (*edges)[2], int n_edges) {
  pp_graph *g = graph_of(n, edges, n_edges);
  pp_downsets *ds = enumerate_ok(g);
  check_downsets(g, ds);
  int c = ds->count;
  pp_downsets_free(ds);
  pp_graph_free(g);
  return c;
}

Test(downsets, chain_has_n_plus_one) {
  int e[16][2];
  for (int n = 1; n <= 12; n++) {
    for (int i = 0; i + 1 < n; i++) e[i][0] = i, e[i][1] = i + 1;
    cr_assert_eq(count_of(n, e, n - 1), n + 1, "chain of %d", n);
  }
  /* the same chain written against node order: n-1 -> ... -> 0 */
  for (int i = 0; i < 7; i++) e[i][0] = i + 1, e[i][1] = i;
  cr_assert_eq(count_of(8, e, 7), 9);
}

Test(downsets, two_chains_multiply) {
  int e[16][2];
  for (int a = 1; a <= 5; a++)
    for (int b = 1; b <= 5; b++) {
      int k = 0;
      for (int i = 0; i + 1 < a; i++) e[k][0] = i, e[k][1] = i + 1, k++;
      for (int i = 0; i + 1 < b; i++) e[k][0] = a + i + 1, e[k][1] = a + i, k++; /* reversed numbering */
      cr_assert_eq(count_of(a + b, e, k), (a + 1) * (b + 1), "chains of %d and %d", a, b);
    }
}

Test(downsets, diamond) {
  /* 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3: {}, {3}, {1,3}, {2,3}, {1,2,3}, all */
  const int e[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  pp_graph *g = graph_of(4, e, 4);
  pp_downsets *ds = enumerate_ok(g);
  check_downsets(g, ds);
  cr_assert_eq(ds->count, 6);
  int per_size[5] = {0};
  for (int i = 0; i < ds->count; i++) per_size[ds->size[i]]++;
  int want[5] = {1, 1, 2, 1, 1};
  for (int s = 0; s <= 4; s++) {
    cr_assert_eq(per_size[s], want[s], "size %d", s);
    cr_assert_eq(ds->layer_start[s + 1] - ds->layer_start[s], want[s], "layer %d", s);
  }
  uint64_t b = (1u << 1) | (1u << 3);
  cr_assert_geq(pp_downsets_find(ds, &b), 0, "{1,3} not found");
  cr_assert_eq(ds->size[pp_downsets_find(ds, &b)], 2);
  b = (1u << 1) | (1u << 2); /* not closed: misses 3 */
  cr_assert_eq(pp_downsets_find(ds, &b), -1);
  b = 1u; /* {0} misses its successors */
  cr_assert_eq(pp_downsets_find(ds, &b), -1);
  pp_downsets_free(ds);
  pp_graph_free(g);
}

Test(downsets, isolated_nodes_power_of_two) {
  for (int n = 1; n <= 12; n++) cr_assert_eq(count_of(n, NULL, 0), 1 << n, "%d isolated nodes", n);
}

Test(downsets, complete_bipartite_layer) {
  /* every one of a sources -> every one of b sinks: a proper subset of the
   * sinks (2^b - 1 choices) with no source, or all sinks with any subset of
   * the sources (2^a choices). */
  int e[64][2];
  for (int a = 1; a <= 4; a++)
    for (int b = 1; b <= 4; b++) {
      int k = 0;
      for (int i = 0; i < a; i++)
        for (int j = 0; j < b; j++) e[k][0] = b + i, e[k][1] = j, k++; /* sinks numbered first */
      cr_assert_eq(count_of(a + b, e, k), (1 << b) - 1 + (1 << a), "K(%d,%d)", a, b);
    }
}

Test(downsets, random_graphs_match_brute_force) {
  tu_rng r = {12345};
  for (int it = 0; it < 150; it++) {
    int n = tu_int(&r, 1, 13);
    tu_spec *s = tu_spec_new(n);
    for (int v = 0; v < n; v++) tu_tmpc_add(s, v, 1, "vanilla", 1, 0, 0, 1);
    tu_random_edges(s, &r, tu_unit(&r));
    pp_graph *g = tu_load(s);
    pp_downsets *ds = enumerate_ok(g);
    check_downsets(g, ds);
    cr_assert_eq(ds->count, brute_downset_count(g), "instance %d: %d nodes, %d edges", it, n, s->n_edges);
    /* a rebuild from the bits gives the same layers and lookups */
    pp_downsets *copy = NULL;
    pp_error err = {0};
    cr_assert_eq(pp_downsets_from_bits(n, ds->count, ds->bits, &copy, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(copy->count, ds->count);
    for (int L = 0; L <= n + 1; L++) cr_assert_eq(copy->layer_start[L], ds->layer_start[L], "layer %d", L);
    for (int i = 0; i < ds->count; i++) cr_assert_eq(pp_downsets_find(copy, pp_downset_bits(ds, i)), i);
    pp_downsets_free(copy);
    pp_downsets_free(ds);
    pp_graph_free(g);
    free(s);
  }
}

/* counts[i] = proper sub-downsets of downset i, total = their sum. */
static long long pairs_of(int n, const int (*edges)[2], int n_edges, int expect_by_size[][2], int n_expect) {
  pp_graph *g = graph_of(n, edges, n_edges);
  pp_downsets *ds = enumerate_ok(g);
  long long *counts = calloc((size_t)ds->count, sizeof *counts);
  long long total = pp_downsets_count_pairs(ds, counts);
  long long sum = 0;
  for (int i = 0; i < ds->count; i++) {
    sum += counts[i];
    /* independent count */
    long long c = 0;
    for (int j = 0; j < ds->count; j++)
      if (j != i && pp_bits_subset(pp_downset_bits(ds, j), pp_downset_bits(ds, i), ds->words)) c++;
    cr_assert_eq(counts[i], c, "downset %d: %lld sub-downsets, expected %lld", i, counts[i], c);
    for (int x = 0; x < n_expect; x++)
      if (expect_by_size[x][0] == (int)pp_downset_bits(ds, i)[0])
        cr_assert_eq(counts[i], expect_by_size[x][1]);
  }
  cr_assert_eq(total, sum);
  cr_assert_eq(pp_downsets_count_pairs(ds, NULL), total, "NULL counts changes the total");
  free(counts);
  pp_downsets_free(ds);
  pp_graph_free(g);
  return total;
}

Test(downsets, count_pairs_by_hand) {
  /* chain 0 -> 1 -> 2: downsets {}, {2}, {1,2}, {0,1,2} have 0, 1, 2, 3 */
  const int chain[][2] = {{0, 1}, {1, 2}};
  int ce[][2] = {{0, 0}, {4, 1}, {6, 2}, {7, 3}};
  cr_assert_eq(pairs_of(3, chain, 2, ce, 4), 6);
  /* diamond: {} 0, {3} 1, {1,3} 2, {2,3} 2, {1,2,3} 4, all 5 */
  const int dia[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  int de[][2] = {{0, 0}, {8, 1}, {10, 2}, {12, 2}, {14, 4}, {15, 5}};
  cr_assert_eq(pairs_of(4, dia, 4, de, 6), 14);
  /* two isolated nodes: {} 0, {0} 1, {1} 1, {0,1} 3 */
  int ie[][2] = {{0, 0}, {1, 1}, {2, 1}, {3, 3}};
  cr_assert_eq(pairs_of(2, NULL, 0, ie, 4), 5);
  /* three isolated nodes: sum over subsets of (2^|I| - 1) = 27 - 8 = 19 */
  cr_assert_eq(pairs_of(3, NULL, 0, NULL, 0), 19);
}

Test(downsets, limit_error_message) {
  pp_graph *g = graph_of(5, NULL, 0); /* 32 downsets */
  pp_downsets *ds = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_downsets_enumerate(g, 32, &ds, &err), PP_OK, "exactly the limit must pass: %s", err.msg);
  cr_assert_eq(ds->count, 32);
  pp_downsets_free(ds);
  ds = (pp_downsets *)&ds;
  pp_status st = pp_downsets_enumerate(g, 31, &ds, &err);
  cr_assert_eq(st, PP_ERR_LIMIT);
  cr_assert_eq(err.code, PP_ERR_LIMIT);
  cr_assert_null(ds, "output not reset on failure");
  cr_assert(strstr(err.msg, "more than 31 downsets"), "message: %s", err.msg);
  cr_assert(strstr(err.msg, "--max-downsets"), "message does not name the option: %s", err.msg);
  st = pp_downsets_enumerate(g, 10, &ds, &err);
  cr_assert_eq(st, PP_ERR_LIMIT);
  cr_assert(strstr(err.msg, "more than 10 downsets"), "message: %s", err.msg);
  pp_graph_free(g);
}

/* ------------------------------------------------------------------------ */
/* Stage cost                                                               */
/* ------------------------------------------------------------------------ */

static int index_of(const int *v, int n, int x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return i;
  return -1;
}

static uint64_t set_of(int a, int b, int c) {
  uint64_t m = 0;
  if (a >= 0) m |= 1ull << a;
  if (b >= 0) m |= 1ull << b;
  if (c >= 0) m |= 1ull << c;
  return m;
}

/* Edges 0 -> 1 (100 bytes), 1 -> 2 (200), 0 -> 2 (50); B = 1000 B/s, N = 4.
 * t = 1 TMPCs (time, parameters; sync bytes):
 *   node 0: 3 s, 400 B; bw to 1: 7, bw to 2: 9
 *   node 1: 5 s, 800 B; fw from 0: 11, bw to 2: 13
 *   node 2: 2 s, 0 B;   fw from 1: 17, fw from 0: 19
 * t = 2 TMPCs (node 2 has none):
 *   node 0: 1.5 s, 200 B; bw 3 (to 1), 4 (to 2)
 *   node 1: 2.5 s, 400 B; fw 5, bw 6 */
static tu_spec *stage_spec(void) {
  tu_spec *s = tu_spec_new(3);
  s->bandwidth = 1000;
  s->microbatches = 4;
  s->devices = 8;
  s->memory = 1e9;
  tu_edge(s, 0, 1, 100);
  tu_edge(s, 1, 2, 200);
  tu_edge(s, 0, 2, 50);
  tu_tmpc *m = tu_tmpc_add(s, 0, 1, "vanilla", 3, 400, 0, 10);
  m->bw[1] = 7, m->bw[2] = 9;
  m = tu_tmpc_add(s, 1, 1, "vanilla", 5, 800, 0, 10);
  m->fw[0] = 11, m->bw[2] = 13;
  m = tu_tmpc_add(s, 2, 1, "vanilla", 2, 0, 0, 10);
  m->fw[1] = 17, m->fw[0] = 19;
  m = tu_tmpc_add(s, 0, 2, "vanilla", 1.5, 200, 0, 10);
  m->bw[1] = 3, m->bw[2] = 4;
  m = tu_tmpc_add(s, 1, 2, "vanilla", 2.5, 400, 0, 10);
  m->fw[0] = 5, m->bw[2] = 6;
  return s;
}

#define NEAR(got, want) \
  cr_assert(tu_close((got), (want), 1e-12), "%s = %.17g, expected %.17g", #got, (got), (want))

Test(stage, hand_computed_loads) {
  tu_spec *s = stage_spec();
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  pp_stage_eval *ev = pp_stage_eval_new(g, &p);
  const int *tv, *dv;
  int nt = pp_stage_n_degrees(ev, &tv), nd = pp_stage_n_dp(ev, &dv);
  cr_assert_eq(nt, 2);
  cr_assert_eq(tv[0], 1);
  cr_assert_eq(tv[1], 2);
  cr_assert_eq(nd, 3, "divisors of N = 4 up to S = 4");
  cr_assert_eq(dv[0], 1);
  cr_assert_eq(dv[1], 2);
  cr_assert_eq(dv[2], 4);

  /* {1}: E = 2(100 + 11) + 2(200 + 13) = 648 */
  uint64_t c = set_of(1, -1, -1);
  pp_stage_set(ev, &c);
  const int *nodes;
  cr_assert_eq(pp_stage_nodes(ev, &nodes), 1);
  cr_assert_eq(nodes[0], 1);
  cr_assert(pp_stage_supports(ev, 0));
  NEAR(pp_stage_cost(ev, 0, 0, 1), 648.0 / 1000 + 5);
  /* d = 2: (648/2 + 4*1*800/2/4)/1000 + 5/2 = 0.724 + 2.5 */
  NEAR(pp_stage_cost(ev, 0, 1, 1), 3.224);
  /* d = 4: (162 + 4*3*800/4/4)/1000 + 1.25 = 0.762 + 1.25 */
  NEAR(pp_stage_cost(ev, 0, 2, 1), 2.012);
  /* t = 2, d = 1: E = 2(100 + 5) + 2(200 + 6) = 622 */
  NEAR(pp_stage_cost(ev, 1, 0, 1), 0.622 + 2.5);
  /* lower bound never above the cost */
  for (int ti = 0; ti < nt; ti++)
    for (int di = 0; di < nd; di++)
      cr_assert_leq(pp_stage_lower_bound(ev, ti, di), pp_stage_cost(ev, ti, di, 1), "ti %d di %d", ti, di);

  /* {0,1}: the inner edge 0 -> 1 is free; 0 -> 2 costs 2(50 + 9) = 118 at
   * node 0, 1 -> 2 costs 2(200 + 13) = 426 at node 1. */
  c = set_of(0, 1, -1);
  pp_stage_set(ev, &c);
  cr_assert_eq(pp_stage_nodes(ev, &nodes), 2);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 0.544 + 8);
  /* d = 2: node 0 (59 + 4*400/2/4)/1000 + 1.5 = 1.759;
   *        node 1 (213 + 400)/1000 + 2.5 = 3.113 */
  NEAR(pp_stage_cost(ev, 0, 1, 1), 1.759 + 3.113);
  /* t = 2, d = 1: 2(50 + 4) + 2(200 + 6) = 520 */
  cr_assert(pp_stage_supports(ev, 1));
  NEAR(pp_stage_cost(ev, 1, 0, 1), 0.52 + 4);
  /* t = 2, d = 2: node 0 (54 + 4*200/2/4)/1000 + 0.75 = 0.904;
   *               node 1 (206 + 4*400/2/4)/1000 + 1.25 = 1.656 */
  NEAR(pp_stage_cost(ev, 1, 1, 1), 0.904 + 1.656);

  /* {2}: fw 2(200 + 17) + 2(50 + 19) = 572; t = 2 unsupported (node 2) */
  c = set_of(2, -1, -1);
  pp_stage_set(ev, &c);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 0.572 + 2);
  cr_assert_not(pp_stage_supports(ev, 1), "node 2 has no TMPC for t = 2");
  cr_assert(isinf(pp_stage_cost(ev, 1, 0, 1)));
  cr_assert(isinf(pp_stage_cost(ev, 1, 2, 3)));

  /* {1,2}: unsupported for t = 2 because of node 2 alone */
  c = set_of(1, 2, -1);
  pp_stage_set(ev, &c);
  cr_assert(pp_stage_supports(ev, 0));
  cr_assert_not(pp_stage_supports(ev, 1));
  /* t = 1, d = 1: node 1 fw 2(100+11) = 222; node 2 fw from 0 2(50+19) = 138 */
  NEAR(pp_stage_cost(ev, 0, 0, 1), 0.36 + 7);

  /* everything: no crossing edge; d = 4 resync 300 + 600 + 0 bytes */
  c = set_of(0, 1, 2);
  pp_stage_set(ev, &c);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 10.0);
  NEAR(pp_stage_cost(ev, 0, 2, 1), 0.9 + 2.5);
  /* y does not change the load when everything fits */
  NEAR(pp_stage_cost(ev, 0, 2, 4), 0.9 + 2.5);
  int choice[3] = {-1, -1, -1};
  NEAR(pp_stage_choose(ev, 0, 2, 1, choice), 0.9 + 2.5);
  for (int i = 0; i < 3; i++) cr_assert_eq(choice[i], 0);

  /* a set again after others: memo must not leak between stages */
  c = set_of(1, -1, -1);
  pp_stage_set(ev, &c);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 5.648);

  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

Test(stage, sync_times_follow_the_chosen_tmpc) {
  /* Node 1 has two TMPCs that differ only in sync bytes and memory: the
   * chosen one's sync values must be the ones charged. */
  tu_spec *s = tu_spec_new(2);
  s->bandwidth = 10;
  s->microbatches = 1;
  s->devices = 1;
  s->memory = 100;
  tu_edge(s, 0, 1, 5);
  tu_tmpc_add(s, 0, 1, "vanilla", 1, 0, 0, 1)->bw[1] = 0;
  tu_tmpc *a = tu_tmpc_add(s, 1, 1, "big", 1, 0, 0, 90);
  a->fw[0] = 10; /* 2(5 + 10) = 30 bytes -> 3 s */
  tu_tmpc *b = tu_tmpc_add(s, 1, 1, "small", 1, 0, 0, 50);
  b->fw[0] = 20; /* 2(5 + 20) = 50 bytes -> 5 s */
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  pp_stage_eval *ev = pp_stage_eval_new(g, &p);
  uint64_t c = 2;
  pp_stage_set(ev, &c);
  int ch = -1;
  NEAR(pp_stage_cost(ev, 0, 0, 1), 4.0);
  NEAR(pp_stage_choose(ev, 0, 0, 1, &ch), 4.0);
  cr_assert_eq(ch, 0);
  pp_stage_eval_free(ev);
  p.memory = 60; /* only "small" fits */
  ev = pp_stage_eval_new(g, &p);
  pp_stage_set(ev, &c);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 6.0);
  NEAR(pp_stage_choose(ev, 0, 0, 1, &ch), 6.0);
  cr_assert_eq(ch, 1);
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

Test(stage, degrees_in_use) {
  tu_spec *s = stage_spec();
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  const int *tv, *dv;
  /* N = 12, K = 8: S = 8, divisors of 12 up to 8 */
  p.microbatches = 12;
  pp_stage_eval *ev = pp_stage_eval_new(g, &p);
  int nd = pp_stage_n_dp(ev, &dv);
  int want[] = {1, 2, 3, 4, 6};
  cr_assert_eq(nd, 5);
  for (int i = 0; i < 5; i++) cr_assert_eq(dv[i], want[i]);
  pp_stage_eval_free(ev);
  /* K = 1: t = 2 does not fit on one device, only d = 1 */
  p.devices = 1;
  ev = pp_stage_eval_new(g, &p);
  cr_assert_eq(pp_stage_n_degrees(ev, &tv), 1);
  cr_assert_eq(tv[0], 1);
  cr_assert_eq(pp_stage_n_dp(ev, &dv), 1);
  pp_stage_eval_free(ev);
  /* no DP / no TP */
  p.devices = 8;
  p.no_dp = 1;
  ev = pp_stage_eval_new(g, &p);
  cr_assert_eq(pp_stage_n_dp(ev, &dv), 1);
  cr_assert_eq(dv[0], 1);
  cr_assert_eq(pp_stage_n_degrees(ev, &tv), 2);
  pp_stage_eval_free(ev);
  p.no_dp = 0;
  p.no_tp = 1;
  ev = pp_stage_eval_new(g, &p);
  cr_assert_eq(pp_stage_n_degrees(ev, &tv), 1);
  cr_assert_eq(tv[0], 1);
  cr_assert_eq(pp_stage_n_dp(ev, &dv), 5);
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

Test(stage, tensor_parallel_choice_and_empty_lists) {
  /* node 0 has t = 1 and t = 4; node 1 has t = 1 and an empty t = 4 list */
  tu_spec *s = tu_spec_new(2);
  s->devices = 8;
  s->microbatches = 1;
  tu_tmpc_add(s, 0, 1, "vanilla", 10, 0, 0, 1);
  tu_tmpc_add(s, 0, 4, "vanilla", 3, 0, 0, 1);
  tu_tmpc_add(s, 1, 1, "vanilla", 6, 0, 0, 1);
  tu_list_empty(s, 1, 4);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  pp_stage_eval *ev = pp_stage_eval_new(g, &p);
  const int *tv;
  cr_assert_eq(pp_stage_n_degrees(ev, &tv), 2);
  int t4 = index_of(tv, 2, 4);
  cr_assert_geq(t4, 0);
  uint64_t c = 1;
  pp_stage_set(ev, &c);
  cr_assert(pp_stage_supports(ev, t4));
  NEAR(pp_stage_cost(ev, t4, 0, 1), 3.0);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 10.0);
  c = 3;
  pp_stage_set(ev, &c);
  cr_assert_not(pp_stage_supports(ev, t4), "an empty list does not support t = 4");
  cr_assert(isinf(pp_stage_cost(ev, t4, 0, 1)));
  NEAR(pp_stage_cost(ev, 0, 0, 1), 16.0);
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

Test(stage, memory_grows_with_y) {
  /* one node, one TMPC with A = 10, B = 5 and M = 30: y = 1, 2 fit
   * (15, 25 bytes), y = 3 does not (35) nor any larger y. */
  tu_spec *s = tu_spec_new(1);
  s->memory = 30;
  s->devices = 8;
  s->microbatches = 8;
  tu_tmpc_add(s, 0, 1, "vanilla", 2, 0, 10, 5);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  for (int mode = 0; mode < 2; mode++) {
    p.knapsack = mode ? PP_KNAPSACK_EXACT : PP_KNAPSACK_GREEDY;
    pp_stage_eval *ev = pp_stage_eval_new(g, &p);
    uint64_t c = 1;
    pp_stage_set(ev, &c);
    NEAR(pp_stage_cost(ev, 0, 0, 1), 2.0);
    NEAR(pp_stage_cost(ev, 0, 0, 2), 2.0);
    cr_assert(isinf(pp_stage_cost(ev, 0, 0, 3)), "mode %d", mode);
    cr_assert(isinf(pp_stage_cost(ev, 0, 0, 8)), "mode %d", mode);
    cr_assert(isinf(pp_stage_cost(ev, 0, 0, 50)), "mode %d: y beyond the memo", mode);
    int ch;
    cr_assert(isinf(pp_stage_choose(ev, 0, 0, 3, &ch)));
    pp_stage_eval_free(ev);
  }
  pp_graph_free(g);
  free(s);
}

Test(stage, no_recompute_filters_tmpcs) {
  /* node 0: [activation recomp (slow, small), vanilla (fast, big)];
   * node 1: only activation recomp. */
  tu_spec *s = tu_spec_new(2);
  s->memory = 50;
  s->devices = 1;
  s->microbatches = 1;
  tu_tmpc_add(s, 0, 1, PP_RECOMPUTE_TMPC_ID, 7, 0, 0, 10);
  tu_tmpc_add(s, 0, 1, "vanilla", 4, 0, 0, 40);
  tu_tmpc_add(s, 1, 1, PP_RECOMPUTE_TMPC_ID, 1, 0, 0, 1);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  uint64_t c0 = 1, c1 = 2;
  int ch = -1;
  /* with recompute allowed: vanilla fits (40 <= 50) */
  pp_stage_eval *ev = pp_stage_eval_new(g, &p);
  pp_stage_set(ev, &c0);
  NEAR(pp_stage_cost(ev, 0, 0, 1), 4.0);
  p.memory = 30; /* vanilla no longer fits: recompute */
  pp_stage_eval_free(ev);
  ev = pp_stage_eval_new(g, &p);
  pp_stage_set(ev, &c0);
  NEAR(pp_stage_choose(ev, 0, 0, 1, &ch), 7.0);
  cr_assert_eq(ch, 0);
  pp_stage_eval_free(ev);
  /* no recompute: only vanilla, which does not fit at 30 but does at 50 */
  p.no_recompute = 1;
  ev = pp_stage_eval_new(g, &p);
  pp_stage_set(ev, &c0);
  cr_assert(pp_stage_supports(ev, 0));
  cr_assert(isinf(pp_stage_cost(ev, 0, 0, 1)));
  pp_stage_set(ev, &c1);
  cr_assert_not(pp_stage_supports(ev, 0), "a node with only recompute TMPCs is unusable");
  pp_stage_eval_free(ev);
  p.memory = 50;
  ev = pp_stage_eval_new(g, &p);
  pp_stage_set(ev, &c0);
  NEAR(pp_stage_choose(ev, 0, 0, 1, &ch), 4.0);
  cr_assert_eq(ch, 1, "choice indexes the full TMPC list");
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

/* ------------------------------------------------------------------------ */
/* Knapsack                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct kt {
  double time, mem;
} kt;

/* One stage of m isolated nodes (t = 1, d = 1, no parameters): a TMPC's
 * contribution is its time exactly and its memory mem (A = 0).  Returns the
 * stage cost; choice (if not NULL) receives the chosen TMPCs. */
static double knap(int m, const int *counts, const kt (*tm)[3], double M, pp_knapsack_mode mode,
                   int *choice) {
  tu_spec *s = tu_spec_new(m);
  s->memory = M;
  s->devices = 1;
  s->microbatches = 1;
  for (int i = 0; i < m; i++)
    for (int l = 0; l < counts[i]; l++) {
      char id[16];
      snprintf(id, sizeof id, "c%d", l);
      tu_tmpc_add(s, i, 1, id, tm[i][l].time, 0, 0, tm[i][l].mem);
    }
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  p.knapsack = mode;
  pp_stage_eval *ev = pp_stage_eval_new(g, &p);
  uint64_t c = (1ull << m) - 1;
  pp_stage_set(ev, &c);
  double r = pp_stage_cost(ev, 0, 0, 1);
  int ch[TU_MAX_NODES];
  double r2 = pp_stage_choose(ev, 0, 0, 1, ch);
  cr_assert(tu_close(r, r2, 0), "memoised cost %.17g, chosen cost %.17g", r, r2);
  if (choice) memcpy(choice, ch, sizeof(int) * (size_t)m);
  if (!isinf(r)) {
    double mem = 0, t = 0;
    for (int i = 0; i < m; i++) mem += tm[i][ch[i]].mem, t += tm[i][ch[i]].time;
    cr_assert_leq(mem, M, "the chosen TMPCs need %g > M = %g", mem, M);
    cr_assert(tu_close(t, r, 1e-12), "chosen TMPCs cost %.17g, reported %.17g", t, r);
  }
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
  return r;
}

#define CHOICE_IS(ch, ...)                                                                          \
  do {                                                                                              \
    int want_[] = {__VA_ARGS__};                                                                    \
    for (size_t i_ = 0; i_ < sizeof want_ / sizeof want_[0]; i_++)                                  \
      cr_assert_eq((ch)[i_], want_[i_], "node %zu: TMPC %d, expected %d", i_, (ch)[i_], want_[i_]); \
  } while (0)

Test(knapsack, all_fastest_fits) {
  const kt tm[2][3] = {{{3, 10}, {5, 4}}, {{2, 8}, {4, 1}}};
  int cnt[2] = {2, 2}, ch[2];
  for (int mode = 0; mode < 2; mode++) {
    NEAR(knap(2, cnt, tm, 18, mode, ch), 5.0);
    CHOICE_IS(ch, 0, 0);
  }
  /* equal times: the first is the fastest even if the second is smaller */
  const kt tie[1][3] = {{{5, 10}, {5, 1}}};
  int one = 2;
  NEAR(knap(1, &one, tie, 100, PP_KNAPSACK_GREEDY, ch), 5.0);
  CHOICE_IS(ch, 0);
  /* the fastest listed second */
  const kt second[1][3] = {{{9, 1}, {5, 10}}};
  NEAR(knap(1, &one, second, 100, PP_KNAPSACK_GREEDY, ch), 5.0);
  CHOICE_IS(ch, 1);
}

Test(knapsack, all_smallest_does_not_fit) {
  const kt tm[2][3] = {{{3, 10}, {5, 4}}, {{2, 8}, {4, 1}}};
  int cnt[2] = {2, 2};
  for (int mode = 0; mode < 2; mode++) {
    cr_assert(isinf(knap(2, cnt, tm, 4.999, mode, NULL)), "mode %d", mode);
    /* exactly the all-smallest memory fits */
    NEAR(knap(2, cnt, tm, 5, mode, NULL), 9.0);
  }
}

Test(knapsack, swaps_in_order_of_cost_per_byte) {
  /* Fastest everywhere: 60 bytes, M = 50: shave 10.  Swaps (extra s / byte):
   *   node 0: +4 s for 8 B (0.5), node 1: +3 for 3 (1), node 2: +10 for 12 (0.833)
   * The greedy takes node 0 (2 B left), then node 2: 14 + 10 + 20 = 44.
   * The optimum takes nodes 0 and 1 (11 B): 14 + 13 + 10 = 37. */
  const kt tm[3][3] = {{{10, 20}, {14, 12}}, {{10, 20}, {13, 17}}, {{10, 20}, {20, 8}}};
  int cnt[3] = {2, 2, 2}, ch[3];
  NEAR(knap(3, cnt, tm, 50, PP_KNAPSACK_GREEDY, ch), 44.0);
  CHOICE_IS(ch, 1, 0, 1);
  NEAR(knap(3, cnt, tm, 50, PP_KNAPSACK_EXACT, ch), 37.0);
  CHOICE_IS(ch, 1, 1, 0);
  /* shaving exactly the first swap's saving stops there */
  NEAR(knap(3, cnt, tm, 52, PP_KNAPSACK_GREEDY, ch), 34.0);
  CHOICE_IS(ch, 1, 0, 0);
}

Test(knapsack, ties_go_to_the_lower_node) {
  /* equal keys 0.5: node 0 +3 s for 6 B, node 1 +2 s for 4 B; shave 3.
   * Ties by node: node 0 goes first and suffices: 13 + 10 = 23, although
   * swapping node 1 alone (22) is better: the exact mode finds it. */
  const kt tm[2][3] = {{{10, 20}, {13, 14}}, {{10, 20}, {12, 16}}};
  int cnt[2] = {2, 2}, ch[2];
  NEAR(knap(2, cnt, tm, 37, PP_KNAPSACK_GREEDY, ch), 23.0);
  CHOICE_IS(ch, 1, 0);
  NEAR(knap(2, cnt, tm, 37, PP_KNAPSACK_EXACT, ch), 22.0);
  CHOICE_IS(ch, 0, 1);
  /* mirrored: node 0 now has the cheap swap, still first */
  const kt mir[2][3] = {{{10, 20}, {12, 16}}, {{10, 20}, {13, 14}}};
  NEAR(knap(2, cnt, mir, 37, PP_KNAPSACK_GREEDY, ch), 22.0);
  CHOICE_IS(ch, 1, 0);
}

Test(knapsack, ties_go_to_the_lower_tmpc) {
  /* three TMPCs: fast (10, 20), a (14, 12) key 4/8, b (12, 16) key 2/4.
   * Equal keys: TMPC a (index 1) first; it saves 8 >= 3: cost 14 + 10. */
  const kt tm[2][3] = {{{10, 20}, {14, 12}, {12, 16}}, {{10, 20}}};
  int cnt[2] = {3, 1}, ch[2];
  NEAR(knap(2, cnt, tm, 37, PP_KNAPSACK_GREEDY, ch), 24.0);
  CHOICE_IS(ch, 1, 0);
  NEAR(knap(2, cnt, tm, 37, PP_KNAPSACK_EXACT, ch), 22.0);
  CHOICE_IS(ch, 2, 0);
}

Test(knapsack, exact_mode_respects_memory_on_every_node) {
  /* node 0: (3 s, 10 B), (5 s, 4 B); node 1: (2 s, 8 B), (4 s, 1 B); M = 5.
   * Only the all-smallest choice fits: 5 + 4 = 9 s.  Any answer below 9
   * needs more than M bytes. */
  tu_spec *s = tu_spec_new(2);
  s->memory = 5;
  s->devices = 1;
  s->microbatches = 1;
  tu_tmpc_add(s, 0, 1, "c0", 3, 0, 0, 10);
  tu_tmpc_add(s, 0, 1, "c1", 5, 0, 0, 4);
  tu_tmpc_add(s, 1, 1, "c0", 2, 0, 0, 8);
  tu_tmpc_add(s, 1, 1, "c1", 4, 0, 0, 1);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  p.knapsack = PP_KNAPSACK_EXACT;
  pp_stage_eval *ev = pp_stage_eval_new(g, &p);
  uint64_t c = 3;
  pp_stage_set(ev, &c);
  int ch[2] = {-1, -1};
  double got = pp_stage_choose(ev, 0, 0, 1, ch);
  double mem = (ch[0] == 0 ? 10 : 4) + (ch[1] == 0 ? 8 : 1);
  cr_assert(got == 9.0 && ch[0] == 1 && ch[1] == 1,
            "exact knapsack: cost %g with TMPCs (%d, %d) needing %g bytes > M = 5; expected 9 with (1, 1). "
            "The branch and bound never checks the memory of the last node's choice",
            got, ch[0], ch[1], mem);
  pp_stage_eval_free(ev);
  pp_graph_free(g);
  free(s);
}

Test(knapsack, y_changes_the_instance) {
  /* fast: 10 s, A = 5; small: 12 s, A = 1, B = 4; M = 12 */
  tu_spec *s = tu_spec_new(1);
  s->memory = 12;
  s->devices = 16;
  s->microbatches = 16;
  tu_tmpc_add(s, 0, 1, "fast", 10, 0, 5, 0);
  tu_tmpc_add(s, 0, 1, "small", 12, 0, 1, 4);
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  double want[] = {0, 10, 10, 12, 12, 12, 12, 12, 12, INFINITY, INFINITY};
  for (int mode = 0; mode < 2; mode++) {
    p.knapsack = mode;
    pp_stage_eval *ev = pp_stage_eval_new(g, &p);
    uint64_t c = 1;
    pp_stage_set(ev, &c);
    for (int y = 1; y <= 10; y++)
      cr_assert(tu_close(pp_stage_cost(ev, 0, 0, y), want[y], 1e-12), "mode %d y %d: %g", mode, y,
                pp_stage_cost(ev, 0, 0, y));
    pp_stage_eval_free(ev);
  }
  pp_graph_free(g);
  free(s);
}

/* The best over every combination (exhaustive). */
static double ref_exact(int m, const int *count, double c[][3], double w[][3], double M) {
  int idx[TU_MAX_NODES] = {0};
  double best = INFINITY;
  for (;;) {
    double cost = 0, mem = 0;
    for (int i = 0; i < m; i++) cost += c[i][idx[i]], mem += w[i][idx[i]];
    if (mem <= M && cost < best) best = cost;
    int i = 0;
    while (i < m && ++idx[i] == count[i]) idx[i++] = 0;
    if (i == m) break;
  }
  return best;
}

Test(knapsack, random_instances_against_references) {
  /* Random stages of isolated nodes with 1-3 TMPCs: the exact mode must
   * equal exhaustive search; the greedy must equal the reference's greedy
   * (instances with <= 2 TMPCs per node, where the reference defines it). */
  tu_rng r = {777};
  int n_inst = 0, n_feasible = 0, n_greedy_worse = 0;
  for (int it = 0; it < 400; it++) {
    int m = tu_int(&r, 1, 7), two_max = it % 2;
    int cnt[TU_MAX_NODES];
    kt tm[TU_MAX_NODES][3];
    double c[TU_MAX_NODES][3], w[TU_MAX_NODES][3];
    double total_max = 0;
    for (int i = 0; i < m; i++) {
      cnt[i] = tu_int(&r, 1, two_max ? 2 : 3);
      double mx = 0;
      for (int l = 0; l < cnt[i]; l++) {
        tm[i][l].time = tu_int(&r, 1, 50);
        tm[i][l].mem = tu_int(&r, 1, 40);
        c[i][l] = tm[i][l].time;
        w[i][l] = tm[i][l].mem;
        if (w[i][l] > mx) mx = w[i][l];
      }
      total_max += mx;
    }
    double M = tu_int(&r, 1 + (int)(total_max / 3), (int)total_max);
    double want = ref_exact(m, cnt, c, w, M);
    double got = knap(m, cnt, (const kt(*)[3])tm, M, PP_KNAPSACK_EXACT, NULL);
    cr_assert(tu_close(got, want, 1e-12), "instance %d: exact mode %.17g, exhaustive %.17g", it, got, want);
    n_inst++;
    n_feasible += !isinf(want);
    if (two_max) {
      int H[TU_MAX_NODES];
      double gw = tu_ref_greedy(m, cnt, c, w, M, H);
      double gg = knap(m, cnt, (const kt(*)[3])tm, M, PP_KNAPSACK_GREEDY, NULL);
      cr_assert(tu_close(gg, gw, 1e-12), "instance %d: greedy mode %.17g, reference greedy %.17g", it, gg,
                gw);
      cr_assert(isinf(gw) == isinf(want), "instance %d: greedy and exact disagree on feasibility", it);
      n_greedy_worse += gw > want * (1 + 1e-12);
    }
  }
  cr_log_info("knapsack: %d instances, %d feasible, greedy above the optimum on %d", n_inst, n_feasible,
              n_greedy_worse);
  cr_assert_gt(n_feasible, n_inst / 4);
  cr_assert_gt(n_greedy_worse, 0, "the random set never separates greedy from exact");
}

/* ------------------------------------------------------------------------ */
/* Staircase tables                                                         */
/* ------------------------------------------------------------------------ */

/* Dense value with prefix minima in s and k applied (the table's meaning). */
static double dense_min(const double *raw, int K, int S, int k, int s) {
  (void)K;
  double v = INFINITY;
  for (int kk = 0; kk <= k; kk++)
    for (int ss = 0; ss <= s; ss++)
      if (raw[kk * (S + 1) + ss] < v) v = raw[kk * (S + 1) + ss];
  return v;
}

Test(table, from_dense_by_hand) {
  const double I = INFINITY;
  /* k = 0..3, s = 0..3 */
  double raw[16] = {I, I, I, I, /* k 0 */
                    I, 5, 7, 3, /* k 1 -> I 5 5 3 */
                    I, 6, 4, 4, /* k 2 -> I 5 4 3 */
                    I, 9, 9, 9 /* k 3 -> same as k 2 */};
  double dense[16];
  memcpy(dense, raw, sizeof raw);
  pp_stairs *t = pp_stairs_from_dense(dense, 0, 3, 3);
  cr_assert_eq(t->k_first, 0);
  cr_assert_eq(t->k_last, 3);
  cr_assert_eq(t->n_rows, 3, "rows k = 2 and k = 3 are equal and must share one");
  cr_assert_eq(t->row_k[0], 0);
  cr_assert_eq(t->row_k[1], 1);
  cr_assert_eq(t->row_k[2], 2);
  /* steps: row 0 (0, I); row 1 (0, I) (1, 5) (3, 3); row 2 (0, I) (1, 5) (2, 4) (3, 3) */
  int n0 = t->row_start[1] - t->row_start[0], n1 = t->row_start[2] - t->row_start[1],
      n2 = t->row_start[3] - t->row_start[2];
  cr_assert_eq(n0, 1);
  cr_assert_eq(n1, 3);
  cr_assert_eq(n2, 4);
  int s1[] = {0, 1, 3}, s2[] = {0, 1, 2, 3};
  double v1[] = {I, 5, 3}, v2[] = {I, 5, 4, 3};
  for (int j = 0; j < 3; j++) {
    cr_assert_eq(t->s[t->row_start[1] + j], s1[j]);
    cr_assert_eq(t->v[t->row_start[1] + j], v1[j]);
  }
  for (int j = 0; j < 4; j++) {
    cr_assert_eq(t->s[t->row_start[2] + j], s2[j]);
    cr_assert_eq(t->v[t->row_start[2] + j], v2[j]);
  }
  for (int k = 0; k <= 3; k++)
    for (int s = 0; s <= 3; s++) {
      double want = dense_min(raw, 3, 3, k, s), got = pp_stairs_value(t, k, s);
      cr_assert(want == got, "(%d, %d): %g, expected %g", k, s, got, want);
      /* the dense block holds the prefix minima afterwards */
      cr_assert(dense[k * 4 + s] == want, "dense (%d, %d) = %g", k, s, dense[k * 4 + s]);
    }
  cr_assert_eq(pp_stairs_row(t, 3), 2);
  cr_assert_eq(pp_stairs_row(t, 1), 1);
  /* beyond the covered budgets and sums */
  cr_assert(pp_stairs_value(t, 7, 3) == 3.0, "k above k_last clamps");
  cr_assert(pp_stairs_value(t, 2, 99) == 3.0, "s above the last step keeps its value");
  pp_stairs_free(t);
}

Test(table, zero_table) {
  pp_stairs *z = pp_stairs_zero(5);
  for (int k = 0; k <= 5; k++)
    for (int s = 0; s <= 5; s++) cr_assert(pp_stairs_value(z, k, s) == 0.0);
  cr_assert_eq(z->n_rows, 1);
  pp_stairs_free(z);
}

/* Equal as staircases: same rows, same steps. */
static void assert_same_stairs(const pp_stairs *a, const pp_stairs *b, int S, const char *what) {
  cr_assert_eq(a->k_first, b->k_first, "%s", what);
  cr_assert_eq(a->k_last, b->k_last, "%s", what);
  for (int k = a->k_first; k <= a->k_last; k++)
    for (int s = 0; s <= S; s++) {
      double x = pp_stairs_value(a, k, s), y = pp_stairs_value(b, k, s);
      cr_assert(x == y, "%s: (%d, %d): %.17g vs %.17g", what, k, s, x, y);
    }
  cr_assert_eq(a->n_rows, b->n_rows, "%s: %d rows vs %d", what, a->n_rows, b->n_rows);
  for (int r = 0; r <= a->n_rows; r++) cr_assert_eq(a->row_start[r], b->row_start[r], "%s: row %d", what, r);
  for (int r = 0; r < a->n_rows; r++) cr_assert_eq(a->row_k[r], b->row_k[r], "%s: row %d", what, r);
  for (int j = 0; j < a->row_start[a->n_rows]; j++) {
    cr_assert_eq(a->s[j], b->s[j], "%s: step %d", what, j);
    cr_assert(a->v[j] == b->v[j], "%s: step %d", what, j);
  }
}

Test(table, join_equals_single_range) {
  tu_rng r = {99};
  for (int it = 0; it < 300; it++) {
    int K = tu_int(&r, 0, 20), S = tu_int(&r, 0, 9);
    size_t W = (size_t)S + 1;
    double *raw = malloc(sizeof(double) * (size_t)(K + 1) * W),
           *dense = malloc(sizeof(double) * (size_t)(K + 1) * W);
    for (size_t i = 0; i < (size_t)(K + 1) * W; i++)
      raw[i] = tu_int(&r, 0, 3) == 0 ? INFINITY : (double)tu_int(&r, 1, it % 3 == 0 ? 4 : 60);
    memcpy(dense, raw, sizeof(double) * (size_t)(K + 1) * W);
    pp_stairs *whole = pp_stairs_from_dense(dense, 0, K, S);
    for (int k = 0; k <= K; k++)
      for (int s = 0; s <= S; s++)
        cr_assert(pp_stairs_value(whole, k, s) == dense_min(raw, K, S, k, s), "it %d (%d, %d)", it, k, s);
    /* random cut points */
    int n_parts = tu_int(&r, 1, K + 1 < 6 ? K + 1 : 6);
    int cuts[8];
    cuts[0] = 0;
    for (int p = 1; p < n_parts; p++) cuts[p] = tu_int(&r, cuts[p - 1] + 1, K - (n_parts - 1 - p));
    cuts[n_parts] = K + 1;
    pp_stairs *parts[8];
    for (int p = 0; p < n_parts; p++) {
      memcpy(dense, raw, sizeof(double) * (size_t)(K + 1) * W);
      parts[p] = pp_stairs_from_dense(dense + (size_t)cuts[p] * W, cuts[p], cuts[p + 1] - 1, S);
    }
    pp_stairs *joined = pp_stairs_join(parts, n_parts);
    char what[64];
    snprintf(what, sizeof what, "it %d, %d parts", it, n_parts);
    assert_same_stairs(whole, joined, S, what);
    for (int p = 0; p < n_parts; p++) pp_stairs_free(parts[p]);
    pp_stairs_free(joined);
    pp_stairs_free(whole);
    free(raw);
    free(dense);
  }
}

/* ------------------------------------------------------------------------ */
/* Dynamic programme                                                        */
/* ------------------------------------------------------------------------ */

static double plan_opt(const tu_spec *s, pp_problem p, pp_plan **plan_out) {
  pp_graph *g = tu_load(s);
  tu_outcome o = tu_plan(g, &p, "tiny");
  if (plan_out)
    *plan_out = o.plan;
  else
    pp_plan_free(o.plan);
  pp_graph_free(g);
  return o.optimum;
}

Test(dp, single_node_data_parallel) {
  /* 8 s per sample, 1000 B of parameters, B = 1000 B/s, N = K = 4:
   *   d = 1: 8;  d = 2: 4 + 4*1*1000/2/4/1000 = 4.5;  d = 4: 2 + 0.75 = 2.75 */
  tu_spec *s = tu_spec_new(1);
  s->devices = 4;
  s->microbatches = 4;
  tu_tmpc_add(s, 0, 1, "vanilla", 8, 1000, 0, 1);
  pp_problem p = tu_problem(s);
  pp_plan *plan;
  NEAR(plan_opt(s, p, &plan), 2.75);
  cr_assert_eq(plan->n_stages, 1);
  cr_assert_eq(plan->stages[0].d, 4);
  pp_plan_free(plan);
  p.devices = 3; /* d = 3 does not divide 4 */
  NEAR(plan_opt(s, p, NULL), 4.5);
  p.devices = 4;
  p.no_dp = 1;
  NEAR(plan_opt(s, p, NULL), 8.0);
  free(s);
}

Test(dp, two_node_chain) {
  /* a -> b, 1 byte per sample, B = 1 B/s; times 6 and 2; no parameters.
   * Memory 5 bytes each (B-term), M = 8: a stage holds one node. N = 4, so
   * the sum of d is at most min(N, K).
   *   K = 2: a | b with d = 1: a 6 + 2*1 = 8, b 2 + 2 = 4 -> 8
   *   K = 3: a with d = 2: 3 + 2/2 = 4, b 4 -> 4 */
  tu_spec *s = tu_spec_new(2);
  s->bandwidth = 1;
  s->microbatches = 4;
  s->memory = 8;
  tu_edge(s, 0, 1, 1);
  tu_tmpc_add(s, 0, 1, "vanilla", 6, 0, 0, 5);
  tu_tmpc_add(s, 1, 1, "vanilla", 2, 0, 0, 5);
  pp_problem p = tu_problem(s);
  p.devices = 1;
  cr_assert(isinf(plan_opt(s, p, NULL)), "one device cannot hold both nodes");
  p.devices = 2;
  pp_plan *plan;
  NEAR(plan_opt(s, p, &plan), 8.0);
  cr_assert_eq(plan->n_stages, 2);
  cr_assert_eq(plan->stages[0].nodes[0], 0, "a comes first");
  pp_plan_free(plan);
  p.devices = 3;
  NEAR(plan_opt(s, p, &plan), 4.0);
  cr_assert_eq(plan->stages[0].d, 2);
  cr_assert_eq(plan->stages[1].d, 1);
  pp_plan_free(plan);
  /* with room for both, one stage of d = 2: 8/2 = 4 on 2 devices */
  p.memory = 10;
  p.devices = 2;
  NEAR(plan_opt(s, p, NULL), 4.0);
  /* N = 2 bounds the sum of d by 2: a (d = 2) | b (d = 1) is not allowed */
  p.memory = 8;
  p.devices = 3;
  p.microbatches = 2;
  NEAR(plan_opt(s, p, NULL), 8.0);
  free(s);
}

Test(dp, memory_depends_on_the_suffix_sum) {
  /* a -> b, no communication; memory A = 1 per microbatch in flight, M = 2.
   * N = 4.  Two stages of d = 1: the first has y = 2 (fits), the second 1.
   * a with d = 2 and b with d = 2: a y = ceil(4/2) = 2 fits.
   * a d = 1, b d = 2 (K = 3): a has y = 3: 3 > 2 does not fit.
   * times: a 4, b 4.  K = 2: 4.  K = 4: 2 (both halves d = 2).
   * K = 3: a d = 2, b d = 1: a y = ceil(3/2) = 2 fits: max(2, 4) = 4;
   *        a d = 1, b d = 2 would be max(4, 2) = 4 anyway. */
  tu_spec *s = tu_spec_new(2);
  s->microbatches = 4;
  s->memory = 2;
  tu_edge(s, 0, 1, 0);
  tu_tmpc_add(s, 0, 1, "vanilla", 4, 0, 1, 0);
  tu_tmpc_add(s, 1, 1, "vanilla", 4, 0, 1, 0);
  pp_problem p = tu_problem(s);
  p.devices = 2;
  NEAR(plan_opt(s, p, NULL), 4.0);
  p.devices = 4;
  NEAR(plan_opt(s, p, NULL), 2.0);
  /* M = 1: only y = 1 fits.  A single stage holds 2 bytes; in two stages
   * the first has y = ceil((d_a + d_b) / d_a) >= 2: infeasible. */
  p.memory = 1;
  cr_assert(isinf(plan_opt(s, p, NULL)));
  free(s);
}

Test(dp, tensor_parallel_stage) {
  /* one node: t = 1 10 s, t = 2 4 s; K = 2, N = 1 */
  tu_spec *s = tu_spec_new(1);
  s->devices = 2;
  s->microbatches = 1;
  tu_tmpc_add(s, 0, 1, "vanilla", 10, 0, 0, 1);
  tu_tmpc_add(s, 0, 2, "vanilla", 4, 0, 0, 1);
  pp_problem p = tu_problem(s);
  pp_plan *plan;
  NEAR(plan_opt(s, p, &plan), 4.0);
  cr_assert_eq(plan->stages[0].t, 2);
  cr_assert_eq(plan->devices_used, 2);
  pp_plan_free(plan);
  p.no_tp = 1;
  NEAR(plan_opt(s, p, NULL), 10.0);
  p.no_tp = 0;
  p.devices = 1;
  NEAR(plan_opt(s, p, NULL), 10.0);
  free(s);
}

Test(dp, diamond_partitions) {
  /* diamond 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 with times 1, 2, 3, 4 and free
   * communication, N = 4 and no data parallelism.  K = 1: 10.  K = 2: the
   * best prefix is {0,1,2} (6 | 4) -> 6.  K = 3: {0,2} | {1} | {3} -> 4
   * (node 3 alone is 4). */
  tu_spec *s = tu_spec_new(4);
  s->microbatches = 4;
  const int e[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  for (int i = 0; i < 4; i++) tu_edge(s, e[i][0], e[i][1], 0);
  for (int v = 0; v < 4; v++) tu_tmpc_add(s, v, 1, "vanilla", v + 1, 0, 0, 1);
  pp_problem p = tu_problem(s);
  p.no_dp = 1;
  double want[] = {0, 10, 6, 4, 4};
  for (int K = 1; K <= 4; K++) {
    p.devices = K;
    double got = plan_opt(s, p, NULL);
    cr_assert(tu_close(got, want[K], 1e-12), "K = %d: %g, expected %g", K, got, want[K]);
  }
  /* memory forbids more than 2 nodes per stage (B = 1 each, M = 2):
   * K = 2 cannot work (two stages of <= 2 nodes: {0,1}|{2,3} 3|7 or
   * {0,2}|{1,3} 4|6) -> 6 */
  p.memory = 2;
  p.devices = 2;
  NEAR(plan_opt(s, p, NULL), 6.0);
  p.memory = 1; /* one node per stage: needs 4 devices */
  p.devices = 3;
  cr_assert(isinf(plan_opt(s, p, NULL)));
  p.devices = 4;
  NEAR(plan_opt(s, p, NULL), 4.0);
  /* N = 3 allows at most 3 stages */
  p.microbatches = 3;
  cr_assert(isinf(plan_opt(s, p, NULL)));
  /* N = 1: a single stage whatever K */
  p.memory = 1e9;
  p.microbatches = 1;
  NEAR(plan_opt(s, p, NULL), 10.0);
  free(s);
}

Test(dp, infeasible_plan_is_empty) {
  tu_spec *s = tu_spec_new(2);
  s->memory = 1;
  tu_edge(s, 0, 1, 1);
  tu_tmpc_add(s, 0, 1, "vanilla", 1, 0, 0, 2);
  tu_tmpc_add(s, 1, 1, "vanilla", 1, 0, 0, 2);
  pp_problem p = tu_problem(s);
  pp_plan *plan;
  cr_assert(isinf(plan_opt(s, p, &plan)));
  cr_assert_eq(plan->feasible, 0);
  cr_assert_eq(plan->n_stages, 0);
  pp_plan_free(plan);
  free(s);
}

/* A random graph for DP tests: n nodes, 1-2 TMPCs for t = 1 and sometimes
 * t = 2, random edges, costs, sync, memories. */
static tu_spec *random_spec(tu_rng *r, int n) {
  tu_spec *s = tu_spec_new(n);
  tu_random_edges(s, r, 0.2 + 0.6 * tu_unit(r));
  double total = 0;
  for (int v = 0; v < n; v++) {
    int nl = tu_int(r, 1, 2);
    for (int li = 0; li < nl; li++) {
      int t = li == 0 ? 1 : 2, cnt = tu_int(r, 1, 2);
      for (int l = 0; l < cnt; l++) {
        double mb = tu_int(r, 1, 60);
        tu_tmpc_add(s, v, t, l == 1 ? PP_RECOMPUTE_TMPC_ID : "vanilla", tu_int(r, 1, 100) / (double)t,
                    tu_int(r, 0, 2000), tu_int(r, 0, 20), mb);
        total += mb;
      }
    }
  }
  tu_random_sync(s, r, 100);
  s->bandwidth = 100 * tu_int(r, 1, 20);
  s->microbatches = tu_int(r, 1, 12);
  s->devices = tu_int(r, 1, 12);
  s->memory = tu_int(r, 20, 40 + (int)total);
  return s;
}

/* Runs the DP twice: once with pp_dp_solve, once with every downset's rows
 * computed in the given number of k-ranges and joined.  The tables must be
 * the same. */
static void split_vs_whole(const tu_spec *s, pp_problem p, int n_parts, tu_rng *r, const char *label) {
  pp_graph *g = tu_load(s);
  pp_downsets *ds = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_downsets_enumerate(g, 1000000, &ds, &err), PP_OK);
  pp_dp *whole = NULL, *split = NULL;
  cr_assert_eq(pp_dp_create(g, &p, ds, 0, &whole, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(pp_dp_create(g, &p, ds, 0, &split, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(pp_dp_solve(whole, NULL, NULL, &err), PP_OK);
  const int K = p.devices, S = pp_problem_max_s(&p);
  if (n_parts > K + 1) n_parts = K + 1;
  for (int id = 1; id < ds->count; id++) {
    int cuts[10];
    cuts[0] = 0;
    for (int q = 1; q < n_parts; q++) cuts[q] = tu_int(r, cuts[q - 1] + 1, K - (n_parts - 1 - q));
    cuts[n_parts] = K + 1;
    pp_stairs *parts[10];
    for (int q = 0; q < n_parts; q++) parts[q] = pp_dp_compute_rows(split, id, cuts[q], cuts[q + 1] - 1);
    pp_stairs *joined = pp_stairs_join(parts, n_parts);
    for (int q = 0; q < n_parts; q++) pp_stairs_free(parts[q]);
    char what[160];
    snprintf(what, sizeof what, "%s: downset %d of %d, %d parts", label, id, ds->count, n_parts);
    assert_same_stairs(pp_dp_table(whole, id), joined, S, what);
    pp_dp_set_table(split, id, joined);
  }
  cr_assert(tu_close(pp_dp_optimum(whole, K), pp_dp_optimum(split, K), 0), "%s", label);
  pp_dp_free(whole);
  pp_dp_free(split);
  pp_downsets_free(ds);
  pp_graph_free(g);
}

Test(dp, split_k_ranges_tiny) {
  /* the diamond with K = 6, N = 6, in 2..4 parts */
  tu_spec *s = tu_spec_new(4);
  s->microbatches = 6;
  s->devices = 6;
  const int e[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  for (int i = 0; i < 4; i++) tu_edge(s, e[i][0], e[i][1], 10 * (i + 1));
  for (int v = 0; v < 4; v++) {
    tu_tmpc_add(s, v, 1, "vanilla", v + 1, 100, 1, 1);
    tu_tmpc_add(s, v, 2, "vanilla", (v + 1) * 0.6, 50, 1, 1);
  }
  s->memory = 5;
  tu_rng r = {5};
  for (int parts = 1; parts <= 4; parts++) split_vs_whole(s, tu_problem(s), parts, &r, "diamond");
  free(s);
}

Test(dp, split_k_ranges_random, .timeout = 300) {
  tu_rng r = {2024};
  for (int it = 0; it < 120; it++) {
    tu_spec *s = random_spec(&r, tu_int(&r, 1, 7));
    pp_problem p = tu_problem(s);
    p.knapsack = it % 3 == 0 ? PP_KNAPSACK_EXACT : PP_KNAPSACK_GREEDY;
    char label[64];
    snprintf(label, sizeof label, "random instance %d", it);
    split_vs_whole(s, p, tu_int(&r, 2, 5), &r, label);
    free(s);
  }
}

Test(dp, random_plans_pass_the_checker) {
  tu_rng r = {31337};
  int feasible = 0;
  for (int it = 0; it < 150; it++) {
    tu_spec *s = random_spec(&r, tu_int(&r, 1, 8));
    pp_problem p = tu_problem(s);
    p.knapsack = it % 2 ? PP_KNAPSACK_EXACT : PP_KNAPSACK_GREEDY;
    p.no_dp = it % 7 == 3;
    p.no_tp = it % 7 == 4;
    p.no_recompute = it % 7 == 5;
    pp_graph *g = tu_load(s);
    char label[64];
    snprintf(label, sizeof label, "random instance %d", it);
    tu_outcome o = tu_plan(g, &p, label);
    feasible += o.plan->feasible;
    /* a budget below K never does better */
    pp_plan_free(o.plan);
    pp_graph_free(g);
    free(s);
  }
  cr_log_info("dp: %d of 150 random instances feasible", feasible);
  cr_assert_gt(feasible, 30);
}

/* ------------------------------------------------------------------------ */
/* Plan checker                                                             */
/* ------------------------------------------------------------------------ */

/* Chain 0 -> 1 -> 2 (10 bytes each edge, B = 10); every node has t = 1
 * [vanilla: 1 s, A = 10; activation recomp: 2 s, A = 1] and node 0 also has
 * t = 2 [vanilla: 0.5 s, A = 5].  N = 4, K = 4, M = 100. */
static tu_spec *check_spec(void) {
  tu_spec *s = tu_spec_new(3);
  s->bandwidth = 10;
  s->microbatches = 4;
  s->devices = 4;
  s->memory = 100;
  tu_edge(s, 0, 1, 10);
  tu_edge(s, 1, 2, 10);
  for (int v = 0; v < 3; v++) {
    tu_tmpc_add(s, v, 1, "vanilla", 1, 0, 10, 0);
    tu_tmpc_add(s, v, 1, PP_RECOMPUTE_TMPC_ID, 2, 0, 1, 0);
  }
  tu_tmpc_add(s, 0, 2, "vanilla", 0.5, 0, 5, 0);
  return s;
}

typedef struct stage_desc {
  int n;
  int nodes[3], tmpc[3];
  int d, t;
} stage_desc;

static pp_plan *make_plan(int n_stages, const stage_desc *sd) {
  pp_plan *plan = pp_plan_new(n_stages);
  for (int i = 0; i < n_stages; i++) {
    pp_plan_stage *st = &plan->stages[i];
    st->n_nodes = sd[i].n;
    st->nodes = malloc(sizeof(int) * 3);
    st->tmpc = malloc(sizeof(int) * 3);
    memcpy(st->nodes, sd[i].nodes, sizeof(int) * 3);
    memcpy(st->tmpc, sd[i].tmpc, sizeof(int) * 3);
    st->d = sd[i].d;
    st->t = sd[i].t;
  }
  return plan;
}

/* Checks the plan and expects a failure whose message contains sub. */
static void check_rejects(const pp_problem *p, int n_stages, const stage_desc *sd, const char *sub) {
  tu_spec *s = check_spec();
  pp_graph *g = tu_load(s);
  pp_plan *plan = make_plan(n_stages, sd);
  pp_error err = {0};
  pp_status st = pp_check_plan(g, p, plan, &err);
  cr_assert_neq(st, PP_OK, "accepted, expected '%s'", sub);
  cr_assert(strstr(err.msg, sub), "message '%s' lacks '%s'", err.msg, sub);
  pp_plan_free(plan);
  pp_graph_free(g);
  free(s);
}

Test(check, accepts_valid_plans) {
  tu_spec *s = check_spec();
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  pp_error err = {0};
  /* {0} d = 2 | {1,2} d = 1 recompute on node 2:
   *   stage 0: y = ceil(3/2) = 2, memory 20; load (2*10/2)/10 + 1/2 = 1.5
   *   stage 1: y = 1, memory 10 + 1 = 11; load (2*10)/10 + 3 = 5 */
  stage_desc sd[] = {{1, {0}, {0}, 2, 1}, {2, {1, 2}, {0, 1}, 1, 1}};
  pp_plan *plan = make_plan(2, sd);
  cr_assert_eq(pp_check_plan(g, &p, plan, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(plan->feasible, 1);
  cr_assert_eq(plan->devices_used, 3);
  cr_assert_eq(plan->sum_d, 3);
  cr_assert_eq(plan->stages[0].y, 2);
  cr_assert_eq(plan->stages[1].y, 1);
  NEAR(plan->stages[0].memory, 20.0);
  NEAR(plan->stages[1].memory, 11.0);
  NEAR(plan->stages[0].load, 1.5);
  NEAR(plan->stages[1].load, 5.0);
  NEAR(plan->tps, 5.0);
  pp_plan_free(plan);
  /* one stage with t = 2 is not possible (nodes 1, 2 lack it); node 0
   * alone with t = 2, d = 1 then {1,2}: 3 devices */
  stage_desc sd2[] = {{1, {0}, {0}, 1, 2}, {2, {1, 2}, {0, 0}, 1, 1}};
  plan = make_plan(2, sd2);
  cr_assert_eq(pp_check_plan(g, &p, plan, &err), PP_OK, "%s", err.msg);
  NEAR(plan->stages[0].load, 2.0 + 0.5);
  NEAR(plan->stages[0].memory, 10.0);
  pp_plan_free(plan);
  /* memory exactly at M is fine: {0,1,2} d = 1 vanilla: 30 bytes */
  p.memory = 30;
  stage_desc sd3[] = {{3, {0, 1, 2}, {0, 0, 0}, 1, 1}};
  plan = make_plan(1, sd3);
  cr_assert_eq(pp_check_plan(g, &p, plan, &err), PP_OK, "%s", err.msg);
  NEAR(plan->tps, 3.0);
  pp_plan_free(plan);
  pp_graph_free(g);
  free(s);
}

Test(check, rejects_each_violation) {
  tu_spec *s = check_spec();
  pp_problem p = tu_problem(s);
  free(s);
  {
    stage_desc sd[] = {{2, {0, 1}, {0, 0}, 1, 1}, {2, {1, 2}, {0, 0}, 1, 1}};
    check_rejects(&p, 2, sd, "repeated");
  }
  {
    stage_desc sd[] = {{1, {0}, {0}, 1, 1}, {1, {1}, {0}, 1, 1}};
    check_rejects(&p, 2, sd, "is in no stage");
  }
  {
    stage_desc sd[] = {{2, {1, 2}, {0, 0}, 1, 1}, {1, {0}, {0}, 1, 1}};
    check_rejects(&p, 2, sd, "goes backwards");
  }
  {
    stage_desc sd[] = {{1, {0}, {0}, 3, 1}, {2, {1, 2}, {0, 0}, 1, 1}};
    check_rejects(&p, 2, sd, "data-parallel degree 3 is not allowed");
  }
  {
    stage_desc sd[] = {{1, {0}, {0}, 4, 1}, {2, {1, 2}, {0, 0}, 1, 1}};
    check_rejects(&p, 2, sd, "uses 5 devices, more than 4");
  }
  {
    /* {0} d = 1 before {1,2} d = 1: y = 2, vanilla 20 bytes > 15 */
    pp_problem q = p;
    q.memory = 15;
    stage_desc sd[] = {{1, {0}, {0}, 1, 1}, {2, {1, 2}, {1, 1}, 1, 1}};
    check_rejects(&q, 2, sd, "bytes per device, more than");
  }
  {
    pp_problem q = p;
    q.no_dp = 1;
    stage_desc sd[] = {{3, {0, 1, 2}, {0, 0, 0}, 2, 1}};
    check_rejects(&q, 1, sd, "data-parallel degree 2 is not allowed");
  }
  {
    pp_problem q = p;
    q.no_tp = 1;
    stage_desc sd[] = {{1, {0}, {0}, 1, 2}, {2, {1, 2}, {0, 0}, 1, 1}};
    check_rejects(&q, 2, sd, "tensor-parallel degree 2 is not allowed");
  }
  {
    pp_problem q = p;
    q.no_recompute = 1;
    stage_desc sd[] = {{3, {0, 1, 2}, {0, 1, 0}, 1, 1}};
    check_rejects(&q, 1, sd, "recomputes activations");
  }
  {
    /* node 1 has no TMPC for t = 2; a TMPC index past the list */
    stage_desc sd[] = {{3, {0, 1, 2}, {0, 0, 0}, 1, 2}};
    check_rejects(&p, 1, sd, "has no TMPC 0 for t = 2");
    stage_desc sd2[] = {{3, {0, 1, 2}, {0, 2, 0}, 1, 1}};
    check_rejects(&p, 1, sd2, "has no TMPC 2 for t = 1");
  }
  {
    stage_desc sd[] = {{1, {7}, {0}, 1, 1}};
    check_rejects(&p, 1, sd, "out of range");
  }
  {
    stage_desc sd[] = {{3, {0, 1, 2}, {0, 0, 0}, 0, 1}};
    check_rejects(&p, 1, sd, "data-parallel degree 0 is not allowed");
  }
}

Test(check, memory_uses_the_suffix_sum) {
  /* {0} d = 2 | {1} d = 1 | {2} d = 1: suffix sums 4, 2, 1 -> y = 2, 2, 1.
   * With M = 19 stage 0 (A = 10, y = 2: 20) is over; recompute (A = 1) fits. */
  tu_spec *s = check_spec();
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  p.memory = 19;
  pp_error err = {0};
  stage_desc sd[] = {{1, {0}, {0}, 2, 1}, {1, {1}, {1}, 1, 1}, {1, {2}, {0}, 1, 1}};
  pp_plan *plan = make_plan(3, sd);
  cr_assert_neq(pp_check_plan(g, &p, plan, &err), PP_OK);
  cr_assert(strstr(err.msg, "stage 0"), "%s", err.msg);
  pp_plan_free(plan);
  sd[0].tmpc[0] = 1;
  plan = make_plan(3, sd);
  cr_assert_eq(pp_check_plan(g, &p, plan, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(plan->stages[0].y, 2);
  cr_assert_eq(plan->stages[1].y, 2);
  cr_assert_eq(plan->stages[2].y, 1);
  pp_plan_free(plan);
  pp_graph_free(g);
  free(s);
}

/* Three one-node stages, d = t = 1 (B = 10, edges of 10 bytes): microbatch
 * times 3, 5, 3 (compute 1 plus 20 or 40 bytes over the cuts).  N = 4.
 * 1f1b: 11 + (4 - 1) * 5 = 26 per batch, 6.5 per sample, bubble 26/20 - 1;
 * gpipe keeps m = 4 microbatches (memory 40), 1f1b Piper's y = 3, 2, 1. */
Test(check, synchronous_schedules) {
  tu_spec *s = check_spec();
  pp_graph *g = tu_load(s);
  pp_problem p = tu_problem(s);
  pp_error err = {0};
  stage_desc sd[] = {{1, {0}, {0}, 1, 1}, {1, {1}, {0}, 1, 1}, {1, {2}, {0}, 1, 1}};
  pp_plan *plan = make_plan(3, sd);
  cr_assert_eq(pp_check_plan(g, &p, plan, &err), PP_OK, "%s", err.msg);
  cr_assert_float_eq(plan->tps, 5.0, 1e-12);
  cr_assert_float_eq(plan->bubble, 0.0, 1e-12);
  p.schedule = PP_SCHEDULE_1F1B;
  cr_assert_eq(pp_check_plan(g, &p, plan, &err), PP_OK, "%s", err.msg);
  cr_assert_float_eq(plan->batch_time, 26.0, 1e-12);
  cr_assert_float_eq(plan->tps, 6.5, 1e-12);
  cr_assert_float_eq(plan->bubble, 0.3, 1e-12);
  cr_assert_float_eq(plan->stages[0].memory, 30.0, 1e-12);
  cr_assert_float_eq(plan->stages[1].mb_time, 5.0, 1e-12);
  p.schedule = PP_SCHEDULE_GPIPE;
  cr_assert_eq(pp_check_plan(g, &p, plan, &err), PP_OK, "%s", err.msg);
  cr_assert_float_eq(plan->stages[2].memory, 40.0, 1e-12);
  cr_assert_float_eq(plan->batch_time, 26.0, 1e-12);
  /* interleaved with v = 3 on one device group: chunk c on group 0,
   * batch = (1/3) 11 + (4 - 1/3) 11 = 44; W = 2(1-0-1) + (3-1) 1 + 1 = 3, so y = 1
   * per chunk and the device holds 3 * 10 */
  p.schedule = PP_SCHEDULE_1F1B;
  p.uniform = 1;
  p.virtual_stages = 3;
  cr_assert_eq(pp_check_plan(g, &p, plan, &err), PP_OK, "%s", err.msg);
  cr_assert_float_eq(plan->batch_time, 44.0, 1e-12);
  cr_assert_eq(plan->devices_used, 1);
  cr_assert_float_eq(plan->stages[1].memory, 30.0, 1e-12);
  p.virtual_stages = 2; /* 3 stages do not split into chunks of 2 */
  cr_assert_neq(pp_check_plan(g, &p, plan, &err), PP_OK);
  pp_plan_free(plan);
  pp_graph_free(g);
  free(s);
}
