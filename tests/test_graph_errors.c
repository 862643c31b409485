/*
 * test_graph_errors.c - unit tests of the graph loader (graph_json.c) on
 * invalid files: the message every kind of invalid file gets (syntax,
 * top-level values, nodes, TMPCs, sync maps, edges), and the file read at
 * once, whose buffer gets the verdict of the stream.
 */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graphtest.h"
#include "piper/graph.h"

/* --- errors --- */

Test(errors, syntax_has_line_and_column) {
  load_bad("{\n  \"maxDevices\": ,\n}", "mem.json: line 2, column 17: invalid JSON: unexpected token");
  load_bad("", "line 1, column 0: invalid JSON");
  load_bad("{\"a\": 1, \"a\": 2}", "duplicate object key");
  load_bad("{\"a\": \"x\\u0000y\"}", "NUL characters (\\u0000) are not allowed in strings");
  load_bad("{\"a\": 1e400}", "real number overflow");
  load_bad("{\"a\": 123456789012345678901234567890}", "too big integer");
  load_bad("[1, 2]", "mem.json: the top level must be an object, got an array");
  load_bad("{\"a\": 1} {}", "end of file expected");
}

Test(errors, nul_byte_and_garbage_in_buffer) {
  static const char text[] = "{\"a\": 1,\0 \"b\": 2}";
  pp_graph *g = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_graph_load_buffer("mem.json", text, sizeof text - 1, NULL, &g, &err), PP_ERR_INPUT);
  cr_assert_null(g);
  cr_assert(strstr(err.msg, "mem.json: line 1, column"), "%s", err.msg);
  char garbage[4096];
  unsigned x = 1;
  for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (char)((x = x * 1103515245u + 12345u) >> 16);
  cr_assert_eq(pp_graph_load_buffer("mem.json", garbage, sizeof garbage, NULL, &g, &err), PP_ERR_INPUT);
  cr_assert(strstr(err.msg, "invalid JSON"), "%s", err.msg);
}

Test(errors, deep_nesting) {
  size_t n = 1 << 20;
  char *deep = malloc(n);
  cr_assert_not_null(deep);
  memset(deep, '[', n);
  pp_graph *g = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_graph_load_buffer("deep.json", deep, n, NULL, &g, &err), PP_ERR_INPUT);
  cr_assert(strstr(err.msg, "deep.json: line 1, column 2049: invalid JSON: maximum parsing depth reached"),
            "%s", err.msg);
  free(deep);
}

Test(errors, top_level_values) {
  char buf[2048];
  load_bad(one_node(buf, sizeof buf, "\"maxDevices\": 1, \"bandwidth\": 1, \"mbsInBatch\": 1"),
           "maxMemoryPerDevice: missing");
  load_bad(one_node(buf, sizeof buf,
                    "\"maxMemoryPerDevice\": 0, \"maxDevices\": 1, \"bandwidth\": 1, \"mbsInBatch\": 1"),
           "maxMemoryPerDevice: must be > 0, got 0");
  load_bad(
      one_node(buf, sizeof buf,
               "\"maxMemoryPerDevice\": \"8GiB\", \"maxDevices\": 1, \"bandwidth\": 1, \"mbsInBatch\": 1"),
      "maxMemoryPerDevice: must be a number, got a string");
  load_bad(one_node(buf, sizeof buf,
                    "\"maxMemoryPerDevice\": 1, \"maxDevices\": 1.5, \"bandwidth\": 1, \"mbsInBatch\": 1"),
           "maxDevices: must be an integer, got 1.5");
  load_bad(one_node(buf, sizeof buf,
                    "\"maxMemoryPerDevice\": 1, \"maxDevices\": 0, \"bandwidth\": 1, \"mbsInBatch\": 1"),
           "maxDevices: must be between 1 and 1000000, got 0");
  load_bad(one_node(buf, sizeof buf,
                    "\"maxMemoryPerDevice\": 1, \"maxDevices\": 1e300, \"bandwidth\": 1, \"mbsInBatch\": 1"),
           "maxDevices: must be an integer, got 1e+300");
  load_bad(one_node(buf, sizeof buf,
                    "\"maxMemoryPerDevice\": 1, \"maxDevices\": 1, \"bandwidth\": -2, \"mbsInBatch\": 1"),
           "bandwidth: must be > 0, got -2");
  load_bad(one_node(buf, sizeof buf,
                    "\"maxMemoryPerDevice\": 1, \"maxDevices\": 1, \"bandwidth\": 1, \"mbsInBatch\": false"),
           "mbsInBatch: must be an integer, got a boolean");
  load_bad("{" TOP ", \"edges\": []}", "nodes: missing");
  load_bad("{" TOP ", \"nodes\": [], \"edges\": []}", "nodes: must not be empty");
  load_bad("{" TOP ", \"nodes\": {}, \"edges\": []}", "nodes: must be an array, got an object");
  load_bad("{" TOP ", \"nodes\": [{\"id\": 1, \"TMPCs\": {}}]}", "edges: missing");
  load_bad("{" TOP ", \"nodes\": [{\"id\": 1, \"TMPCs\": {}}], \"edges\": null}",
           "edges: must be an array, got null");
}

/* Node 1 -> node 2 with TMPC lists given as text. */
static const char *pair(char *buf, size_t n, const char *tmpcs1, const char *tmpcs2) {
  snprintf(buf, n,
           "{" TOP ", \"nodes\": [{\"id\": 1, \"TMPCs\": %s}, {\"id\": 2, \"TMPCs\": %s}], "
           "\"edges\": [{\"sourceId\": 1, \"destId\": 2, \"communicationCost\": 1}]}",
           tmpcs1, tmpcs2);
  return buf;
}

#define OK1 "{\"1\": [" TMPC("v", "{}", "{\"2\": 0}") "]}"
#define OK2 "{\"1\": [" TMPC("v", "{\"1\": 0}", "{}") "]}"

Test(errors, nodes) {
  char buf[4096];
  cr_assert_not_null(pair(buf, sizeof buf, OK1, OK2));
  pp_graph_free(load_ok(buf, NULL));
  load_bad("{" TOP ", \"nodes\": [3], \"edges\": []}", "nodes[0]: must be an object, got an integer");
  load_bad("{" TOP ", \"nodes\": [{\"TMPCs\": {}}], \"edges\": []}", "nodes[0].id: missing");
  load_bad("{" TOP ", \"nodes\": [{\"id\": \"1\", \"TMPCs\": {}}], \"edges\": []}",
           "nodes[0].id: must be an integer, got a string");
  load_bad("{" TOP ", \"nodes\": [{\"id\": 1, \"name\": [], \"TMPCs\": {}}], \"edges\": []}",
           "nodes[0].name: must be a string, got an array");
  load_bad(
      "{" TOP
      ", \"nodes\": [{\"id\": 1, \"TMPCs\": {}}, {\"id\": 2, \"TMPCs\": {}}, {\"id\": 1, \"TMPCs\": {}}], "
      "\"edges\": []}",
      "nodes[2].id: duplicate node id 1 (also nodes[0])");
  load_bad("{" TOP ", \"nodes\": [{\"id\": 1}], \"edges\": []}", "nodes[0].TMPCs: missing");
  load_bad("{" TOP ", \"nodes\": [{\"id\": 1, \"TMPCs\": []}], \"edges\": []}",
           "nodes[0].TMPCs: must be an object, got an array");
}

Test(errors, t_keys) {
  const char *bad[] = {
      "0", "-1", "x", "1.5", "01", "+1", "", " 1", "1 ", "1000001", "99999999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char tm[512], buf[4096], want[128];
    snprintf(tm, sizeof tm, "{\"%s\": []}", bad[i]);
    snprintf(want, sizeof want, "nodes[1].TMPCs[\"%s\"]: key must be a tensor-parallel degree", bad[i]);
    load_bad(pair(buf, sizeof buf, OK1, tm), want);
  }
  char buf[4096];
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": {}}"),
           "nodes[1].TMPCs[\"1\"]: must be an array of TMPCs, got an object");
}

Test(errors, hostile_keys_are_escaped_and_cut) {
  char buf[4096];
  load_bad(pair(buf, sizeof buf, OK1, "{\"a\\\"b\\n\": []}"),
           "nodes[1].TMPCs[\"a\\\"b\\u000a\"]: key must be");
  char key[300], tm[400];
  memset(key, '9', sizeof key - 1);
  key[sizeof key - 1] = '\0';
  snprintf(tm, sizeof tm, "{\"%s\": []}", key);
  load_bad(pair(buf, sizeof buf, OK1, tm),
           "nodes[1].TMPCs[\"9999999999999999999999999999999999999999...\"]: key");
}

Test(errors, tmpcs) {
  char buf[4096];
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [7]}"),
           "nodes[1].TMPCs[\"1\"][0]: must be an object, got an integer");
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [{\"timePerSample\": 1}]}"),
           "nodes[1].TMPCs[\"1\"][0].id: missing");
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [" TMPC("", "{\"1\": 0}", "{}") "]}"),
           "nodes[1].TMPCs[\"1\"][0].id: must not be empty");
  load_bad(pair(buf, sizeof buf, OK1, "{\"3\": [{\"id\": 5}]}"),
           "nodes[1].TMPCs[\"3\"][0].id: must be a string, got an integer");
  load_bad(pair(buf, sizeof buf, OK1,
                "{\"1\": [" TMPC("v", "{\"1\": 0}", "{}") ", " TMPC("v", "{\"1\": 0}", "{}") "]}"),
           "nodes[1].TMPCs[\"1\"][1]: duplicate TMPC id \"v\" (also at index 0)");
  load_bad(pair(buf, sizeof buf,
                "{\"2\": [{\"id\": \"v\", \"timePerSample\": 1, \"parameterSize\": 1, \"memoryUsageA\": -5, "
                "\"memoryUsageB\": 0, \"syncTimeFw\": {}, \"syncTimeBw\": {\"2\": 0}}]}",
                OK2),
           "nodes[0].TMPCs[\"2\"][0].memoryUsageA: must be >= 0, got -5");
  load_bad(
      pair(buf, sizeof buf,
           "{\"1\": [{\"id\": \"v\", \"timePerSample\": \"1\", \"parameterSize\": 1, \"memoryUsageA\": 1, "
           "\"memoryUsageB\": 0, \"syncTimeFw\": {}, \"syncTimeBw\": {\"2\": 0}}]}",
           OK2),
      "nodes[0].TMPCs[\"1\"][0].timePerSample: must be a number, got a string");
  load_bad(pair(buf, sizeof buf,
                "{\"1\": [{\"id\": \"v\", \"timePerSample\": 1, \"parameterSize\": 1, \"memoryUsageA\": 1, "
                "\"syncTimeFw\": {}, \"syncTimeBw\": {\"2\": 0}}]}",
                OK2),
           "nodes[0].TMPCs[\"1\"][0].memoryUsageB: missing");
}

Test(errors, sync_maps) {
  char buf[4096];
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [" TMPC("v", "{}", "{}") "]}"),
           "nodes[1].TMPCs[\"1\"][0].syncTimeFw: missing the in-neighbour 1 (edge 1 -> 2)");
  load_bad(pair(buf, sizeof buf, "{\"1\": [" TMPC("v", "{}", "{}") "]}", OK2),
           "nodes[0].TMPCs[\"1\"][0].syncTimeBw: missing the out-neighbour 2 (edge 1 -> 2)");
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [" TMPC("v", "{\"1\": 0, \"2\": 0}", "{}") "]}"),
           "nodes[1].TMPCs[\"1\"][0].syncTimeFw[\"2\"]: node 2 is not an in-neighbour of node 2");
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [" TMPC("v", "{\"1\": 0}", "{\"77\": 0}") "]}"),
           "nodes[1].TMPCs[\"1\"][0].syncTimeBw[\"77\"]: node 77 is not an out-neighbour of node 2");
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [" TMPC("v", "{\"one\": 0}", "{}") "]}"),
           "syncTimeFw[\"one\"]: key must be a node id");
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [" TMPC("v", "{\"01\": 0}", "{}") "]}"),
           "syncTimeFw[\"01\"]: key must be a node id: a decimal integer without leading zeros");
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [" TMPC("v", "{\"1\": \"0\"}", "{}") "]}"),
           "syncTimeFw[\"1\"]: must be a number, got a string");
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [" TMPC("v", "{\"1\": -0.25}", "{}") "]}"),
           "syncTimeFw[\"1\"]: must be a finite number >= 0, got -0.25");
  load_bad(pair(buf, sizeof buf, OK1, "{\"1\": [" TMPC("v", "[]", "{}") "]}"),
           "nodes[1].TMPCs[\"1\"][0].syncTimeFw: must be an object, got an array");
  load_bad(pair(buf, sizeof buf, OK1,
                "{\"1\": [{\"id\": \"v\", \"timePerSample\": 1, \"parameterSize\": 1, \"memoryUsageA\": 1, "
                "\"memoryUsageB\": 0, \"syncTimeFw\": {\"1\": 0}}]}"),
           "nodes[1].TMPCs[\"1\"][0].syncTimeBw: missing");
}

/* Three nodes 1, 2, 3 (no TMPCs) with the given edges. */
static const char *edges3(char *buf, size_t n, const char *edges) {
  snprintf(
      buf, n,
      "{" TOP
      ", \"nodes\": [{\"id\": 1, \"TMPCs\": {}}, {\"id\": 2, \"TMPCs\": {}}, {\"id\": 3, \"TMPCs\": {}}],"
      " \"edges\": [%s]}",
      edges);
  return buf;
}

#define E(S, D) "{\"sourceId\": " #S ", \"destId\": " #D ", \"communicationCost\": 1}"

Test(errors, edges) {
  char buf[4096];
  load_bad(edges3(buf, sizeof buf, "1"), "edges[0]: must be an object, got an integer");
  load_bad(edges3(buf, sizeof buf, E(1, 2) ", {\"destId\": 3, \"communicationCost\": 1}"),
           "edges[1].sourceId: missing");
  load_bad(edges3(buf, sizeof buf, "{\"sourceId\": 1, \"destId\": \"2\", \"communicationCost\": 1}"),
           "edges[0].destId: must be an integer, got a string");
  load_bad(edges3(buf, sizeof buf, "{\"sourceId\": 1, \"destId\": 2}"),
           "edges[0].communicationCost: missing");
  load_bad(edges3(buf, sizeof buf, "{\"sourceId\": 1, \"destId\": 2, \"communicationCost\": -1}"),
           "edges[0].communicationCost: must be >= 0, got -1");
  load_bad(edges3(buf, sizeof buf, E(1, 2) ", " E(4, 2)), "edges[1]: sourceId 4 is not the id of any node");
  load_bad(edges3(buf, sizeof buf, E(1, 0)), "edges[0]: destId 0 is not the id of any node");
  load_bad(edges3(buf, sizeof buf, E(1, 2) ", " E(2, 3) ", " E(1, 2)),
           "edges[2]: duplicates edges[0] (1 -> 2)");
  load_bad(edges3(buf, sizeof buf, E(1, 2) ", " E(3, 3)), "edges[1]: self-loop on node 3");
  load_bad(edges3(buf, sizeof buf, E(1, 2) ", " E(2, 3) ", " E(3, 1)), "edges: the graph has a cycle: ");
  load_bad(edges3(buf, sizeof buf, E(1, 2) ", " E(2, 3) ", " E(3, 2)),
           "edges: the graph has a cycle: 2 -> 3 -> 2");
}

/* --- the file read at once (pp_graph_read_plain) --- */

/* Writes n bytes of text to a new file under dir; returns its path (static). */
static const char *put_file(const char *dir, const char *name, const char *text, size_t n) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "%s", path);
  cr_assert_eq(fwrite(text, 1, n, f), n);
  fclose(f);
  return path;
}

Test(plain, read_at_once_only_regular_files_without_nul) {
  char dir[] = "/tmp/piper-plain-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char *buf = NULL;
  size_t len = 0;
  const char *ok = put_file(dir, "ok.json", "{\"a\": 1}", 8);
  cr_assert_eq(pp_graph_read_plain(ok, &buf, &len), 1);
  cr_assert_eq(len, 8);
  cr_assert_str_eq(buf, "{\"a\": 1}");
  free(buf);
  const char *empty = put_file(dir, "empty.json", "", 0);
  cr_assert_eq(pp_graph_read_plain(empty, &buf, &len), 1);
  cr_assert_eq(len, 0);
  free(buf);
  buf = NULL;
  cr_assert_eq(pp_graph_read_plain(put_file(dir, "nul.json", "{}\0x", 4), &buf, &len), 0);
  cr_assert_eq(pp_graph_read_plain(dir, &buf, &len), 0, "a folder");
  cr_assert_eq(pp_graph_read_plain("-", &buf, &len), 0, "standard input");
  char missing[600];
  snprintf(missing, sizeof missing, "%s/missing.json", dir);
  cr_assert_eq(pp_graph_read_plain(missing, &buf, &len), 0);
  char fifo[600];
  snprintf(fifo, sizeof fifo, "%s/fifo.json", dir);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  int keep = open(fifo, O_RDWR | O_NONBLOCK); /* (so that opening it to read does not block) */
  cr_assert_eq(pp_graph_read_plain(fifo, &buf, &len), 0, "a pipe");
  close(keep);
  char big[600];
  snprintf(big, sizeof big, "%s/big.json", dir);
  FILE *f = fopen(big, "wb");
  cr_assert_not_null(f);
  fputc('{', f);
  cr_assert_eq(fseek(f, (long)PP_GRAPH_PLAIN_BYTES, SEEK_SET), 0); /* sparse: one byte beyond the limit */
  fputc('}', f);
  fclose(f);
  cr_assert_eq(pp_graph_read_plain(big, &buf, &len), 0, "larger than PP_GRAPH_PLAIN_BYTES");
  cr_assert_null(buf);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

/* What rank 0 reads at once and every rank parses must get the verdict and
 * message the file gets as a stream (one rank): every file of the invalid
 * corpus and every shipped input. */
static int same_verdict_in(const char *dir) {
  DIR *dd = opendir(dir);
  cr_assert_not_null(dd, "%s", dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(dd));) {
    const size_t l = strlen(e->d_name);
    if (l < 5 || strcmp(e->d_name + l - 5, ".json") != 0) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    char *buf;
    size_t len;
    if (!pp_graph_read_plain(path, &buf, &len)) { /* only for a NUL byte: streamed at every rank count */
      FILE *f = fopen(path, "rb");
      int c, nul = 0;
      while (f && !nul && (c = fgetc(f)) != EOF) nul = c == 0;
      if (f) fclose(f);
      cr_assert(nul, "%s: not read at once, and holds no NUL byte", path);
      continue;
    }
    pp_graph *a = NULL, *b = NULL;
    pp_error ea = {0}, eb = {0};
    const pp_status sa = pp_graph_load_file(path, NULL, &a, &ea),
                    sb = pp_graph_load_buffer(path, buf, len, NULL, &b, &eb);
    cr_assert_eq(sa, sb, "%s: %s / %s", path, ea.msg, eb.msg);
    if (sa)
      cr_assert_str_eq(ea.msg, eb.msg, "%s", path);
    else
      cr_assert(a->source_len == b->source_len && memcmp(a->source_text, b->source_text, len) == 0, "%s",
                path);
    pp_graph_free(a);
    pp_graph_free(b);
    free(buf);
    n++;
  }
  closedir(dd);
  return n;
}

Test(plain, a_buffer_gets_the_verdict_of_the_stream) {
  cr_assert_geq(same_verdict_in(PIPER_SOURCE_DIR "/tests/bad-inputs"), 45);
  cr_assert_geq(same_verdict_in(PIPER_SOURCE_DIR "/inputs"), 5);
}
