/*
 * test_downsets.c - unit tests of downset enumeration (src/core/downsets.c): counts against brute force on
 * chains, diamonds, bipartite layers and random graphs; the structural
 * promises of pp_downsets; pair counts; the limit error.
 *
 * Graphs are described with the helpers of testutil.h and loaded through the
 * public JSON loader.  Expected values are worked out by hand in the comments.
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <signal.h>
#include <string.h>

#include "piper/bitset.h"
#include "piper/signals.h"

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

/* Random graphs, narrow and wide, against the brute force (pairs_of); 13
 * independent nodes (the whole set has more maximal elements than the
 * count's inclusion-exclusion takes, so its subsets are tested one by one)
 * against the closed form, also as downsets received from another rank
 * (pp_downsets_from_bits). */
Test(downsets, count_pairs_on_random_graphs) {
  tu_rng r = {2024};
  int edges[64][2];
  for (int it = 0; it < 60; it++) {
    const int n = tu_int(&r, 1, 12), density = tu_int(&r, 0, 4);
    int n_edges = 0;
    for (int a = 0; a < n && n_edges < 64; a++)
      for (int b = a + 1; b < n && n_edges < 64; b++)
        if (tu_int(&r, 0, 9) < density) {
          edges[n_edges][0] = a;
          edges[n_edges][1] = b;
          n_edges++;
        }
    cr_assert_geq(pairs_of(n, (const int(*)[2])edges, n_edges, NULL, 0), 0);
  }
  pp_graph *g = graph_of(13, NULL, 0);
  pp_downsets *ds = enumerate_ok(g), *copy = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_downsets_from_bits(13, ds->count, ds->bits, &copy, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(pp_downsets_count_pairs(copy, NULL), pp_downsets_count_pairs(ds, NULL));
  /* the sum over I of 2^|I| - 1 */
  cr_assert_eq(pp_downsets_count_pairs(ds, NULL), 1594323 - 8192, "3^13 - 2^13");
  pp_downsets_free(copy);
  pp_downsets_free(ds);
  pp_graph_free(g);
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

/* A stop request (SIGINT here) ends the enumeration with PP_ERR_INTERRUPTED
 * and the pair count with -1.  Criterion runs each test in its own process,
 * so the raised flag stays in this one. */
Test(downsets, stop_request_ends_enumeration_and_pair_count) {
  /* a chain of 2000 nodes: 2001 downsets, 2*10^6 subset tests (the flag
   * is read after 2^20); 40 independent nodes: 2^40 downsets, the flag
   * read after 2^20 / 40 of them */
  const int n = 2000, words = pp_bits_words(n);
  uint64_t *bits = calloc((size_t)(n + 1) * (size_t)words, sizeof *bits);
  for (int i = 1; i <= n; i++) /* the suffix of the last i nodes */
    for (int v = n - i; v < n; v++) pp_bit_set(bits + (size_t)i * (size_t)words, v);
  pp_downsets *ds = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_downsets_from_bits(n, n + 1, bits, &ds, &err), PP_OK, "%s", err.msg);
  free(bits);
  pp_graph w = {0}; /* the enumeration reads only the nodes and edges */
  w.n_nodes = 40;
  pp_signals_install();
  raise(SIGINT);
  pp_downsets *again = NULL;
  cr_assert_eq(pp_downsets_enumerate(&w, 100000000, &again, &err), PP_ERR_INTERRUPTED);
  cr_assert_null(again);
  cr_assert(strstr(err.msg, "stopped by signal") != NULL, "%s", err.msg);
  cr_assert_eq(pp_downsets_count_pairs(ds, NULL), -1);
  pp_downsets_free(ds);
}
