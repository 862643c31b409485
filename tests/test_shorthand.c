/*
 * test_shorthand.c - the framework shorthand's layer split (Megatron-LM's
 * even split of the transformer blocks, embedding first, head last) and the
 * checker's list of every violation, on hand-made graphs.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "piper/check.h"
#include "piper/graph.h"
#include "piper/shorthand.h"

/* A chain of n nodes named names[i] (NULL: unnamed), each with TMPCs
 * "vanilla" (time 1, A = 10) and "activation recomp" (time 1.5, A = 1) for
 * t = 1 only; memory B = 1 per node. */
static pp_graph *chain(int n, const char *const *names) {
  char buf[8192];
  size_t len = (size_t)snprintf(buf, sizeof buf,
                                "{\"maxMemoryPerDevice\": 1000, \"maxDevices\": 8, \"bandwidth\": 1, "
                                "\"mbsInBatch\": 4, \"nodes\": [");
  for (int i = 0; i < n; i++) {
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s{\"id\": %d, ", i ? ", " : "", 100 + i);
    if (names && names[i])
      len += (size_t)snprintf(buf + len, sizeof buf - len, "\"name\": \"%s\", ", names[i]);
    char fw[32] = "{}", bw[32] = "{}";
    if (i > 0) snprintf(fw, sizeof fw, "{\"%d\": 0}", 99 + i);
    if (i + 1 < n) snprintf(bw, sizeof bw, "{\"%d\": 0}", 101 + i);
    len += (size_t)snprintf(
        buf + len, sizeof buf - len,
        "\"TMPCs\": {\"1\": [{\"id\": \"vanilla\", \"timePerSample\": 1, \"parameterSize\": 0, "
        "\"memoryUsageA\": 10, \"memoryUsageB\": 1, \"syncTimeFw\": %s, \"syncTimeBw\": %s}, "
        "{\"id\": \"activation recomp\", \"timePerSample\": 1.5, \"parameterSize\": 0, "
        "\"memoryUsageA\": 1, \"memoryUsageB\": 1, \"syncTimeFw\": %s, \"syncTimeBw\": %s}]}}",
        fw, bw, fw, bw);
  }
  len += (size_t)snprintf(buf + len, sizeof buf - len, "], \"edges\": [");
  for (int i = 0; i + 1 < n; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "%s{\"sourceId\": %d, \"destId\": %d, \"communicationCost\": 0}", i ? ", " : "",
                            100 + i, 101 + i);
  snprintf(buf + len, sizeof buf - len, "]}");
  pp_graph *g = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_graph_load_buffer("chain", buf, strlen(buf), NULL, &g, &err), PP_OK, "%s", err.msg);
  return g;
}

static const char *const gpt[] = {"embedding", "block.0",    "block.1", "block.2",
                                  "block.3",   "final_norm", "head"};

/* Expects stage i of plan to hold nodes first..last (indices). */
static void expect_stage(const pp_plan *p, int i, int first, int last) {
  const pp_plan_stage *s = &p->stages[i];
  cr_expect_eq(s->n_nodes, last - first + 1, "stage %d: %d nodes", i, s->n_nodes);
  for (int j = 0; j < s->n_nodes && j <= last - first; j++)
    cr_expect_eq(s->nodes[j], first + j, "stage %d", i);
}

Test(shorthand, megatron_split_of_blocks) {
  pp_graph *g = chain(7, gpt);
  pp_error err = {0};
  char how[256];
  pp_plan *p = NULL;
  pp_shorthand s = {.pp = 2, .tp = 1, .dp = 2, .recompute = 0};
  cr_assert_eq(pp_plan_shorthand(g, &s, &p, how, sizeof how, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(p->n_stages, 2);
  expect_stage(p, 0, 0, 2); /* embedding, block.0, block.1 */
  expect_stage(p, 1, 3, 6); /* block.2, block.3, final_norm, head */
  cr_expect_eq(p->stages[0].d, 2);
  cr_expect_eq(p->stages[1].t, 1);
  cr_expect(strstr(how, "4 transformer blocks over 2 stages, 2 per stage"), "%s", how);
  pp_plan_free(p);
  /* 4 blocks over 3 stages: the first stage takes one more */
  s.pp = 3;
  cr_assert_eq(pp_plan_shorthand(g, &s, &p, how, sizeof how, &err), PP_OK, "%s", err.msg);
  expect_stage(p, 0, 0, 2);
  expect_stage(p, 1, 3, 3);
  expect_stage(p, 2, 4, 6);
  pp_plan_free(p);
  /* interleaved: 2 x 2 chunks of one block each */
  s.pp = 2;
  s.chunks = 2;
  cr_assert_eq(pp_plan_shorthand(g, &s, &p, how, sizeof how, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(p->n_stages, 4);
  expect_stage(p, 0, 0, 1);
  expect_stage(p, 3, 4, 6);
  pp_plan_free(p);
  /* more stages than blocks */
  s.pp = 5;
  s.chunks = 1;
  cr_expect_eq(pp_plan_shorthand(g, &s, &p, how, sizeof how, &err), PP_ERR_USAGE);
  cr_expect(strstr(err.msg, "only 4 transformer blocks"), "%s", err.msg);
  pp_graph_free(g);
}

Test(shorthand, recompute_choice_and_unnamed_graphs) {
  pp_graph *g = chain(5, NULL);
  pp_error err = {0};
  char how[256];
  pp_plan *p = NULL;
  pp_shorthand s = {.pp = 2, .tp = 1, .dp = 1, .recompute = 1};
  cr_assert_eq(pp_plan_shorthand(g, &s, &p, how, sizeof how, &err), PP_OK, "%s", err.msg);
  expect_stage(p, 0, 0, 2); /* 5 nodes: 3 + 2 */
  expect_stage(p, 1, 3, 4);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < p->stages[i].n_nodes; j++) cr_expect_eq(p->stages[i].tmpc[j], 1);
  cr_expect(strstr(how, "5 layers over 2 stages"), "%s", how);
  pp_plan_free(p);
  s.recompute = 0;
  cr_assert_eq(pp_plan_shorthand(g, &s, &p, how, sizeof how, &err), PP_OK, "%s", err.msg);
  cr_expect_eq(p->stages[0].tmpc[0], 0);
  pp_plan_free(p);
  pp_graph_free(g);
}

Test(shorthand, checker_lists_every_violation) {
  pp_graph *g = chain(7, gpt);
  pp_error err = {0};
  char how[256];
  pp_plan *p = NULL;
  /* d = 3 does not divide N = 4; 2 x 3 x 2 = 12 devices > 8; memory: y = 2
   * on stage 0 (3 nodes: 3 x (10 x 2 + 1) = 63) and y = 1 on stage 1 (4 x 11
   * = 44), over M = 40 on both */
  pp_shorthand s = {.pp = 2, .tp = 2, .dp = 3, .recompute = 0};
  cr_assert_eq(pp_plan_shorthand(g, &s, &p, how, sizeof how, &err), PP_OK, "%s", err.msg);
  pp_problem prob = {.devices = 8, .memory = 40, .microbatches = 4, .bandwidth = 1};
  pp_check_report r;
  /* t = 2 is not offered: the degree is reported and nothing is evaluated */
  cr_assert_eq(pp_check_plan_report(g, &prob, p, &r, &err), PP_OK, "%s", err.msg);
  int kinds[6] = {0};
  for (int i = 0; i < r.count; i++) kinds[r.v[i].kind]++;
  cr_expect_eq(kinds[PP_VIOLATION_DIVIDES], 2);
  cr_expect_eq(kinds[PP_VIOLATION_DEGREE], 2);
  cr_expect_eq(kinds[PP_VIOLATION_DEVICES], 1);
  cr_expect(isnan(p->tps));
  cr_expect_eq(p->feasible, 0);
  pp_plan_free(p);
  s.tp = 1;
  s.dp = 3;
  prob.devices = 4;
  cr_assert_eq(pp_plan_shorthand(g, &s, &p, how, sizeof how, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(pp_check_plan_report(g, &prob, p, &r, &err), PP_OK, "%s", err.msg);
  cr_expect_eq(r.count, 5, "%d violations", r.count); /* 2 x divides, devices 6 > 4, memory on both */
  for (int i = 0; i < 6; i++) kinds[i] = 0;
  for (int i = 0; i < r.count; i++) kinds[r.v[i].kind]++;
  cr_expect_eq(kinds[PP_VIOLATION_DIVIDES], 2);
  cr_expect_eq(kinds[PP_VIOLATION_DEVICES], 1);
  cr_expect_eq(kinds[PP_VIOLATION_MEMORY], 2);
  cr_expect_eq(r.v[3].stage, 0);
  cr_expect_eq(r.v[3].amount, 3 * 21.0 - 40);
  cr_expect(isfinite(p->tps));
  /* pp_check_plan reports the first as an error */
  cr_expect_neq(pp_check_plan(g, &prob, p, &err), PP_OK);
  pp_plan_free(p);
  pp_graph_free(g);
}
