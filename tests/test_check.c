/*
 * test_check.c - unit tests of the independent plan checker (src/core/check.c): valid plans accepted,
 * each violation rejected with its message, memory with the suffix sum,
 * and the synchronous schedules.
 *
 * Graphs are described with the helpers of testutil.h and loaded through the
 * public JSON loader.  Expected values are worked out by hand in the comments.
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

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
   * batch = (1/3) 11 + (4 * 3 - 1) 5 = 176/3 (v slots per microbatch, each
   * as long as the slowest chunk); W = 2(1-0-1) + (3-1) 1 + 1 = 3, so y = 1
   * per chunk and the device holds 3 * 10 */
  p.schedule = PP_SCHEDULE_1F1B;
  p.uniform = 1;
  p.virtual_stages = 3;
  cr_assert_eq(pp_check_plan(g, &p, plan, &err), PP_OK, "%s", err.msg);
  cr_assert_float_eq(plan->batch_time, 176.0 / 3, 1e-12);
  cr_assert_eq(plan->devices_used, 1);
  cr_assert_float_eq(plan->stages[1].memory, 30.0, 1e-12);
  p.virtual_stages = 2; /* 3 stages do not split into chunks of 2 */
  cr_assert_neq(pp_check_plan(g, &p, plan, &err), PP_OK);
  pp_plan_free(plan);
  pp_graph_free(g);
  free(s);
}
