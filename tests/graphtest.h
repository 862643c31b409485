/*
 * graphtest.h - what the graph loader's unit tests (test_graph.c,
 * test_graph_errors.c) share: the JSON pieces they build inputs from and
 * the load helpers that assert success or the expected message.
 */
#ifndef PIPER_TESTS_GRAPHTEST_H
#define PIPER_TESTS_GRAPHTEST_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "piper/graph.h"

/* Top-level values shared by the graphs below. */
#define TOP "\"maxMemoryPerDevice\": 1e9, \"maxDevices\": 4, \"bandwidth\": 2.5e10, \"mbsInBatch\": 8"
/* A TMPC with id ID and the given sync maps (JSON object text). */
#define TMPC(ID, FW, BW)                                                                          \
  "{\"id\": \"" ID "\", \"timePerSample\": 0.5, \"parameterSize\": 1000, \"memoryUsageA\": 100, " \
  "\"memoryUsageB\": 10, \"syncTimeFw\": " FW ", \"syncTimeBw\": " BW "}"

/* Loads text (named "mem.json"); warnings go to warn. */
static inline pp_status load(const char *text, FILE *warn, pp_graph **g, pp_error *err) {
  return pp_graph_load_buffer("mem.json", text, strlen(text), warn, g, err);
}

static inline pp_graph *load_ok(const char *text, FILE *warn) {
  pp_graph *g = NULL;
  pp_error err = {0};
  pp_status st = load(text, warn, &g, &err);
  cr_assert_eq(st, PP_OK, "load failed: %s", err.msg);
  cr_assert_not_null(g);
  return g;
}

/* Asserts that text is refused with PP_ERR_INPUT and a message that names
 * the file and contains sub. */
static inline void load_bad(const char *text, const char *sub) {
  pp_graph *g = (pp_graph *)&g; /* must be reset to NULL */
  pp_error err = {0};
  pp_status st = load(text, NULL, &g, &err);
  cr_assert_eq(st, PP_ERR_INPUT, "accepted, expected an error containing '%s'", sub);
  cr_assert_null(g);
  cr_assert_eq(err.code, PP_ERR_INPUT);
  cr_assert(strncmp(err.msg, "mem.json: ", 10) == 0, "message does not name the file: %s", err.msg);
  cr_assert(strstr(err.msg, sub), "message '%s' lacks '%s'", err.msg, sub);
}

/* "{" + top + a graph of one node with one TMPC into buf. */
static inline const char *one_node(char *buf, size_t n, const char *top) {
  snprintf(buf, n, "{%s%s", top,
           ", \"nodes\": [{\"id\": 1, \"TMPCs\": {\"1\": [" TMPC("v", "{}", "{}") "]}}], \"edges\": []}");
  return buf;
}

#endif /* PIPER_TESTS_GRAPHTEST_H */
