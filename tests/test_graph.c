/*
 * test_graph.c - unit tests of the graph loader (graph_json.c) and the
 * structural checks (graph.c): what a valid file turns into, warnings, the
 * checks on graphs built by hand, and files.  The messages of invalid
 * files: test_graph_errors.c.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphtest.h"
#include "piper/graph.h"

/* Diamond 7 -> 3, 7 -> 5, 3 -> 9, 5 -> 9 (node order 7, 3, 5, 9; edge
 * order as written).  Sync values encode the neighbour: fw = 100 + id of
 * the in-neighbour, bw = 200 + id of the out-neighbour, so alignment with
 * the edge lists can be checked.  Node 9's t = 1 list is empty. */
static const char *diamond =
    "{" TOP ", \"name\": \"ignored\", \"nodes\": [\n"
    " {\"id\": 7, \"name\": \"embed\", \"TMPCs\": {\"2\": [" TMPC(
        "vanilla", "{}",
        "{\"5\": 205, \"3\": 203}") "],\n"
                                    "   \"1\": [" TMPC("vanilla", "{}", "{\"3\": 203, \"5\": 205}") ", " TMPC(
                                        "activation recomp", "{}",
                                        "{\"3\": 203, \"5\": 205}") "]}},\n"
                                                                    " {\"id\": 3, \"TMPCs\": {\"1\": [" TMPC(
                                                                        "vanilla", "{\"7\": 107}",
                                                                        "{\"9\": 209}") "]}},\n"
                                                                                        " {\"id\": 5, "
                                                                                        "\"name\": null, "
                                                                                        "\"TMPCs\": {\"1\": "
                                                                                        "[" TMPC(
                                                                                            "vanilla",
                                                                                            "{\"7\": "
                                                                                            "107}",
                                                                                            "{\"9\": "
                                                                                            "209}") "]}}"
                                                                                                    ",\n"
                                                                                                    " {"
                                                                                                    "\"i"
                                                                                                    "d\""
                                                                                                    ": "
                                                                                                    "9, "
                                                                                                    "\"n"
                                                                                                    "ame"
                                                                                                    "\":"
                                                                                                    " \""
                                                                                                    "hea"
                                                                                                    "d\""
                                                                                                    ", "
                                                                                                    "\"T"
                                                                                                    "MPC"
                                                                                                    "s\""
                                                                                                    ": "
                                                                                                    "{\""
                                                                                                    "1\""
                                                                                                    ": "
                                                                                                    "[],"
                                                                                                    " \""
                                                                                                    "4\""
                                                                                                    ": "
                                                                                                    "[" TMPC(
                                                                                                        "x",
                                                                                                        "{\"5"
                                                                                                        "\": "
                                                                                                        "105,"
                                                                                                        " \"3"
                                                                                                        "\": "
                                                                                                        "103"
                                                                                                        "}",
                                                                                                        "{}") "]}}\n"
                                                                                                              "], \"edges\": [\n"
                                                                                                              " {\"sourceId\": 7, \"destId\": 3, \"communicationCost\": 11},\n"
                                                                                                              " {\"sourceId\": 7, \"destId\": 5, \"communicationCost\": 12},\n"
                                                                                                              " {\"sourceId\": 5, \"destId\": 9, \"communicationCost\": 13},\n"
                                                                                                              " {\"sourceId\": 3, \"destId\": 9, \"communicationCost\": 14.5}\n"
                                                                                                              "]}\n";

Test(load, diamond_structure) {
  pp_graph *g = load_ok(diamond, NULL);
  cr_assert_eq(g->n_nodes, 4);
  cr_assert_eq(g->n_edges, 4);
  long long ids[] = {7, 3, 5, 9};
  for (int v = 0; v < 4; v++) cr_assert_eq(g->nodes[v].orig_id, ids[v]);
  cr_assert_str_eq(g->nodes[0].name, "embed");
  cr_assert_null(g->nodes[1].name);
  cr_assert_null(g->nodes[2].name);
  cr_assert_str_eq(g->nodes[3].name, "head");
  cr_assert_eq(g->max_memory, 1e9);
  cr_assert_eq(g->max_devices, 4);
  cr_assert_eq(g->bandwidth, 2.5e10);
  cr_assert_eq(g->microbatches, 8);
  /* edges keep input order and map ids to indices */
  int src[] = {0, 0, 2, 1}, dst[] = {1, 2, 3, 3};
  double cost[] = {11, 12, 13, 14.5};
  for (int e = 0; e < 4; e++) {
    cr_assert_eq(g->edges[e].src, src[e], "edge %d", e);
    cr_assert_eq(g->edges[e].dst, dst[e], "edge %d", e);
    cr_assert_eq(g->edges[e].cost, cost[e], "edge %d", e);
  }
  /* adjacency in input edge order */
  cr_assert_eq(g->nodes[0].in_deg, 0);
  cr_assert_eq(g->nodes[0].out_deg, 2);
  cr_assert_eq(g->nodes[0].out_edges[0], 0);
  cr_assert_eq(g->nodes[0].out_edges[1], 1);
  cr_assert_eq(g->nodes[3].in_deg, 2);
  cr_assert_eq(g->nodes[3].in_edges[0], 2);
  cr_assert_eq(g->nodes[3].in_edges[1], 3);
  cr_assert_eq(g->nodes[3].out_deg, 0);
  /* degrees that occur anywhere, ascending */
  cr_assert_eq(g->n_degrees, 3);
  cr_assert_eq(g->degrees[0], 1);
  cr_assert_eq(g->degrees[1], 2);
  cr_assert_eq(g->degrees[2], 4);
  cr_assert_str_eq(g->source_path, "mem.json");
  cr_assert_eq(g->source_len, strlen(diamond));
  cr_assert_str_eq(g->source_text, diamond);
  pp_graph_free(g);
}

Test(load, diamond_tmpcs) {
  pp_graph *g = load_ok(diamond, NULL);
  const pp_node *n = &g->nodes[0];
  cr_assert_eq(n->n_lists, 2);
  cr_assert_eq(n->lists[0].t, 1, "lists are sorted by t");
  cr_assert_eq(n->lists[1].t, 2);
  const pp_tmpc_list *l1 = pp_graph_tmpcs(g, 0, 1);
  cr_assert_eq(l1, &n->lists[0]);
  cr_assert_null(pp_graph_tmpcs(g, 0, 4));
  cr_assert_eq(l1->count, 2);
  cr_assert_str_eq(l1->tmpcs[0].id, "vanilla");
  cr_assert_eq(l1->tmpcs[0].is_recompute, 0);
  cr_assert_str_eq(l1->tmpcs[1].id, PP_RECOMPUTE_TMPC_ID);
  cr_assert_eq(l1->tmpcs[1].is_recompute, 1);
  const pp_tmpc *m = &l1->tmpcs[0];
  cr_assert_eq(m->time_per_sample, 0.5);
  cr_assert_eq(m->parameter_size, 1000);
  cr_assert_eq(m->mem_a, 100);
  cr_assert_eq(m->mem_b, 10);
  const pp_tmpc_list *empty = pp_graph_tmpcs(g, 3, 1);
  cr_assert_not_null(empty);
  cr_assert_eq(empty->count, 0);
  pp_graph_free(g);
}

/* Every sync array entry i must belong to edge in_edges[i] / out_edges[i],
 * whatever the key order in the file. */
Test(load, sync_arrays_follow_edge_lists) {
  pp_graph *g = load_ok(diamond, NULL);
  int checked = 0;
  for (int v = 0; v < g->n_nodes; v++) {
    const pp_node *n = &g->nodes[v];
    for (int l = 0; l < n->n_lists; l++)
      for (int k = 0; k < n->lists[l].count; k++) {
        const pp_tmpc *m = &n->lists[l].tmpcs[k];
        for (int i = 0; i < n->in_deg; i++) {
          long long from = g->nodes[g->edges[n->in_edges[i]].src].orig_id;
          cr_assert_eq(m->sync_fw[i], 100.0 + (double)from, "node %lld fw[%d]", n->orig_id, i);
          checked++;
        }
        for (int i = 0; i < n->out_deg; i++) {
          long long to = g->nodes[g->edges[n->out_edges[i]].dst].orig_id;
          cr_assert_eq(m->sync_bw[i], 200.0 + (double)to, "node %lld bw[%d]", n->orig_id, i);
          checked++;
        }
      }
  }
  cr_assert_eq(checked, 4 + 2 + 2 + 2 + 2);
  pp_graph_free(g);
}

Test(load, node_labels) {
  pp_graph *g = load_ok(diamond, NULL);
  char buf[32];
  cr_assert_str_eq(pp_graph_node_label(g, 0, buf, sizeof buf), "embed");
  cr_assert_str_eq(pp_graph_node_label(g, 1, buf, sizeof buf), "3");
  char tiny[3];
  cr_assert_str_eq(pp_graph_node_label(g, 3, tiny, sizeof tiny), "he");
  pp_graph_free(g);
}

/* Reads back what was written to f. */
static char *slurp(FILE *f) {
  long n = ftell(f);
  cr_assert(n >= 0);
  char *s = calloc((size_t)n + 1, 1);
  rewind(f);
  cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
  return s;
}

Test(load, warning_for_node_without_t1) {
  FILE *w = tmpfile();
  cr_assert_not_null(w);
  pp_graph *g = load_ok(diamond, w);
  char *text = slurp(w);
  cr_assert(strstr(text, "warning: mem.json: nodes[3]: node 9 has no TMPC for tensor-parallel degree 1"),
            "warning: %s", text);
  cr_assert_eq(strstr(text, "nodes[0]"), NULL, "only node 9 lacks t = 1: %s", text);
  free(text);
  fclose(w);
  pp_graph_free(g);
}

Test(load, warning_for_node_without_any_tmpc) {
  static const char *text = "{" TOP ", \"nodes\": [{\"id\": 1, \"TMPCs\": {}}], \"edges\": []}";
  FILE *w = tmpfile();
  cr_assert_not_null(w);
  pp_graph *g = load_ok(text, w);
  cr_assert_eq(g->nodes[0].n_lists, 0);
  cr_assert_eq(g->n_degrees, 0);
  char *out = slurp(w);
  cr_assert(strstr(out, "node 1 has no TMPC for tensor-parallel degree 1"), "warning: %s", out);
  free(out);
  fclose(w);
  pp_graph_free(g);
  /* no stream: no warning, no crash */
  g = load_ok(text, NULL);
  pp_graph_free(g);
}

Test(load, max_batch_size_alias) {
  char buf[1024];
  pp_graph *g = load_ok(
      one_node(buf, sizeof buf,
               "\"maxMemoryPerDevice\": 1, \"maxDevices\": 1, \"bandwidth\": 1, \"maxBatchSize\": 96"),
      NULL);
  cr_assert_eq(g->microbatches, 96);
  pp_graph_free(g);
  /* mbsInBatch wins when both are given */
  g = load_ok(one_node(buf, sizeof buf,
                       "\"maxMemoryPerDevice\": 1, \"maxDevices\": 1, \"bandwidth\": 1, \"mbsInBatch\": 3, "
                       "\"maxBatchSize\": 96"),
              NULL);
  cr_assert_eq(g->microbatches, 3);
  pp_graph_free(g);
  load_bad(one_node(buf, sizeof buf, "\"maxMemoryPerDevice\": 1, \"maxDevices\": 1, \"bandwidth\": 1"),
           "mbsInBatch: missing (nor is its alias maxBatchSize given)");
  load_bad(one_node(buf, sizeof buf,
                    "\"maxMemoryPerDevice\": 1, \"maxDevices\": 1, \"bandwidth\": 1, \"maxBatchSize\": -2"),
           "maxBatchSize: must be between 1 and 100000000, got -2");
}

Test(load, integral_reals_and_extreme_ids) {
  static const char *text =
      "{\"maxMemoryPerDevice\": 5, \"maxDevices\": 2.0, \"bandwidth\": 1, \"mbsInBatch\": 4e0, \"nodes\": [\n"
      " {\"id\": 9223372036854775807, \"TMPCs\": {\"1\": [" TMPC(
          "v", "{}",
          "{\"-9223372036854775808\": 1}") "]}},\n"
                                           " {\"id\": -9223372036854775808, \"TMPCs\": {\"1\": [" TMPC(
                                               "v", "{\"9223372036854775807\": 2}",
                                               "{}") "]}}\n"
                                                     "], \"edges\": [{\"sourceId\": 9223372036854775807, "
                                                     "\"destId\": -9223372036854775808, "
                                                     "\"communicationCost\": 0}]}";
  pp_graph *g = load_ok(text, NULL);
  cr_assert_eq(g->max_devices, 2);
  cr_assert_eq(g->microbatches, 4);
  cr_assert_eq(g->nodes[0].orig_id, LLONG_MAX);
  cr_assert_eq(g->nodes[1].orig_id, LLONG_MIN);
  cr_assert_eq(g->nodes[0].lists[0].tmpcs[0].sync_bw[0], 1);
  cr_assert_eq(g->nodes[1].lists[0].tmpcs[0].sync_fw[0], 2);
  pp_graph_free(g);
}

/* --- pp_graph_check_structure on graphs built by hand --- */

/* A graph of n nodes (ids 10, 11, ...) and the given edges, with no
 * adjacency lists: the check must not need them. */
static pp_graph make(int n, int m, const int (*e)[2]) {
  static pp_node nodes[16];
  static pp_edge edges[16];
  memset(nodes, 0, sizeof nodes);
  for (int v = 0; v < n; v++) nodes[v].orig_id = 10 + v;
  for (int i = 0; i < m; i++) edges[i] = (pp_edge){.src = e[i][0], .dst = e[i][1], .cost = 0};
  pp_graph g = {.n_nodes = n, .nodes = nodes, .n_edges = m, .edges = edges};
  return g;
}

static void structure_bad(pp_graph g, const char *sub) {
  pp_error err = {0};
  cr_assert_eq(pp_graph_check_structure(&g, &err), PP_ERR_INPUT, "accepted; expected '%s'", sub);
  cr_assert(strstr(err.msg, sub), "message '%s' lacks '%s'", err.msg, sub);
}

Test(structure, hand_built_graphs) {
  pp_error err = {0};
  static const int chain[][2] = {{0, 1}, {1, 2}, {0, 2}};
  pp_graph g = make(3, 3, chain);
  cr_assert_eq(pp_graph_check_structure(&g, &err), PP_OK, "%s", err.msg);
  g = make(2, 0, NULL);
  cr_assert_eq(pp_graph_check_structure(&g, &err), PP_OK, "%s", err.msg);
  structure_bad(make(0, 0, NULL), "nodes: the graph has no nodes");
  static const int out_of_range[][2] = {{0, 1}, {1, 5}};
  structure_bad(make(3, 2, out_of_range), "edges[1]: endpoint is not a node");
  static const int negative[][2] = {{-1, 1}};
  structure_bad(make(3, 1, negative), "edges[0]: endpoint is not a node");
  static const int loop[][2] = {{0, 1}, {2, 2}};
  structure_bad(make(3, 2, loop), "edges[1]: self-loop on node 12");
  static const int dup[][2] = {{1, 2}, {0, 1}, {1, 2}};
  structure_bad(make(3, 3, dup), "edges[2]: duplicates edges[0] (11 -> 12)");
  /* a cycle 1 -> 2 -> 3 -> 1 with a tail 0 -> 1 and a node 4 after it:
   * the message lists the cycle, not the nodes merely downstream of it */
  static const int cyc[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 4}};
  structure_bad(make(5, 5, cyc), "edges: the graph has a cycle: 11 -> 12 -> 13 -> 11");
  static const int two[][2] = {{3, 2}, {2, 3}};
  structure_bad(make(4, 2, two), "the graph has a cycle: ");
}

Test(structure, long_cycle_message_is_cut) {
  pp_graph g = {0};
  int n = 5000;
  g.n_nodes = g.n_edges = n;
  g.nodes = calloc((size_t)n, sizeof *g.nodes);
  g.edges = calloc((size_t)n, sizeof *g.edges);
  for (int v = 0; v < n; v++) {
    g.nodes[v].orig_id = v;
    g.edges[v] = (pp_edge){.src = v, .dst = (v + 1) % n};
  }
  pp_error err = {0};
  cr_assert_eq(pp_graph_check_structure(&g, &err), PP_ERR_INPUT);
  cr_assert(strstr(err.msg, "the graph has a cycle: "), "%s", err.msg);
  cr_assert(strstr(err.msg, " -> ..."), "%s", err.msg);
  cr_assert(strlen(err.msg) < 300, "%s", err.msg);
  free(g.nodes);
  free(g.edges);
}

/* --- files --- */

Test(files, missing_and_folder) {
  pp_graph *g = (pp_graph *)&g;
  pp_error err = {0};
  cr_assert_eq(pp_graph_load_file(PIPER_SOURCE_DIR "/no/such/file.json", NULL, &g, &err), PP_ERR_INPUT);
  cr_assert_null(g);
  cr_assert(strstr(err.msg, "/no/such/file.json: cannot open: No such file or directory"), "%s", err.msg);
  cr_assert_eq(pp_graph_load_file(PIPER_SOURCE_DIR, NULL, &g, &err), PP_ERR_INPUT);
  cr_assert(strstr(err.msg, PIPER_SOURCE_DIR ": cannot read: Is a directory"), "%s", err.msg);
}

Test(files, corpus_file_reports_its_path) {
  const char *path = PIPER_SOURCE_DIR "/tests/bad-inputs/tmpc-memory-a-negative.json";
  pp_graph *g = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_graph_load_file(path, NULL, &g, &err), PP_ERR_INPUT);
  cr_assert(strstr(err.msg, path), "%s", err.msg);
  cr_assert(strstr(err.msg, "nodes[3].TMPCs[\"2\"][1].memoryUsageA: must be >= 0, got -5"), "%s", err.msg);
}

Test(files, reference_input_round_trips) {
  const char *path = PIPER_SHARED_DIR "/piper-inputs/bert32a100.json";
  FILE *f = fopen(path, "rb");
  if (!f) cr_skip_test("%s is not available", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fclose(f);
  pp_graph *g = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_graph_load_file(path, NULL, &g, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(g->source_len, (size_t)size);
  cr_assert_eq(strlen(g->source_text), (size_t)size);
  cr_assert_str_eq(g->source_path, path);
  cr_assert(g->n_nodes > 1);
  cr_assert_eq(g->n_degrees > 0, 1);
  /* loading the same bytes from a buffer gives the same graph */
  pp_graph *h = NULL;
  cr_assert_eq(pp_graph_load_buffer(path, g->source_text, g->source_len, NULL, &h, &err), PP_OK, "%s",
               err.msg);
  cr_assert_eq(h->n_nodes, g->n_nodes);
  cr_assert_eq(h->n_edges, g->n_edges);
  /* the input's SHA-256 (sha256sum of the file), kept from either way of reading it */
  char hex[65], hex_h[65];
  pp_graph_input_sha256(g, hex);
  pp_graph_input_sha256(h, hex_h);
  cr_assert_str_eq(hex, "cc126436a4c238ec14cad466d176a178e9a9aad1e187f1d2a3cdb8b8d5ab1d1a");
  cr_assert_str_eq(hex_h, hex);
  for (int v = 0; v < g->n_nodes; v++) {
    cr_assert_eq(h->nodes[v].orig_id, g->nodes[v].orig_id);
    cr_assert_eq(h->nodes[v].n_lists, g->nodes[v].n_lists);
  }
  pp_graph_free(h);
  pp_graph_free(g);
}

Test(graph, free_accepts_null) { pp_graph_free(NULL); }

/* A hub with many in-neighbours, its sync keys in reverse order: loads fast
 * (no quadratic lookup) and every value lands on its own edge. */
Test(load, hub_with_many_in_edges, .timeout = 30) {
  int n = 20000;
  size_t cap = (size_t)n * 400 + 4096, o = 0;
  char *t = malloc(cap);
  cr_assert_not_null(t);
  o += (size_t)snprintf(t + o, cap - o, "{" TOP ", \"nodes\": [");
  for (int v = 0; v < n; v++)
    o += (size_t)snprintf(t + o, cap - o,
                          "{\"id\": %d, \"TMPCs\": {\"1\": [" TMPC("v", "{}", "{\"%d\": 0}") "]}},", v, n);
  o += (size_t)snprintf(t + o, cap - o,
                        "{\"id\": %d, \"TMPCs\": {\"1\": [{\"id\": \"v\", \"timePerSample\": 1, "
                        "\"parameterSize\": 1, \"memoryUsageA\": 1, \"memoryUsageB\": 1, \"syncTimeBw\": {}, "
                        "\"syncTimeFw\": {",
                        n);
  for (int v = n - 1; v >= 0; v--) o += (size_t)snprintf(t + o, cap - o, "\"%d\": %d%s", v, v, v ? ", " : "");
  o += (size_t)snprintf(t + o, cap - o, "}}]}}], \"edges\": [");
  for (int v = 0; v < n; v++)
    o += (size_t)snprintf(t + o, cap - o, "{\"sourceId\": %d, \"destId\": %d, \"communicationCost\": 1}%s", v,
                          n, v < n - 1 ? ", " : "");
  o += (size_t)snprintf(t + o, cap - o, "]}");
  cr_assert(o < cap);
  pp_graph *g = load_ok(t, NULL);
  const pp_node *hub = &g->nodes[n];
  cr_assert_eq(hub->in_deg, n);
  const pp_tmpc *m = &hub->lists[0].tmpcs[0];
  for (int i = 0; i < n; i++)
    cr_assert_eq(m->sync_fw[i], (double)g->nodes[g->edges[hub->in_edges[i]].src].orig_id, "slot %d", i);
  pp_graph_free(g);
  free(t);
}
