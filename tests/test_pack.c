/*
 * test_pack.c - the bounds-checked packing module (include/piper/pack.h)
 * and the plan's packed form (pp_plan_pack).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/pack.h"
#include "piper/plan.h"

Test(pack, values_round_trip) {
  pp_pack w;
  pp_pack_init(&w);
  const int ints[3] = {-1, 0, INT_MAX};
  const double dbl[2] = {0.25, INFINITY};
  pp_pack_i32(&w, -7);
  pp_pack_i64(&w, (int64_t)1 << 40);
  pp_pack_f64(&w, 3.5);
  pp_pack_ints(&w, ints, 3);
  pp_pack_doubles(&w, dbl, 2);
  for (int i = 0; i < 5000; i++) pp_pack_i32(&w, i); /* growth */
  pp_unpack r;
  pp_unpack_init(&r, w.buf, w.len);
  int32_t a;
  int64_t b;
  double c;
  int iv[3];
  double dv[2];
  cr_assert_eq(pp_unpack_i32(&r, &a), 0);
  cr_assert_eq(a, -7);
  cr_assert_eq(pp_unpack_i64(&r, &b), 0);
  cr_assert_eq(b, (int64_t)1 << 40);
  cr_assert_eq(pp_unpack_f64(&r, &c), 0);
  cr_assert(c == 3.5);
  cr_assert_eq(pp_unpack_ints(&r, iv, 3), 0);
  cr_assert(memcmp(iv, ints, sizeof ints) == 0);
  cr_assert_eq(pp_unpack_doubles(&r, dv, 2), 0);
  cr_assert(dv[0] == 0.25 && isinf(dv[1]));
  for (int i = 0; i < 5000; i++) {
    int x;
    cr_assert_eq(pp_unpack_int_in(&r, 0, 4999, &x), 0);
    cr_assert_eq(x, i);
  }
  cr_assert(pp_unpack_done(&r));
  size_t len;
  char *buf = pp_pack_take(&w, &len);
  cr_assert_eq(w.buf, NULL);
  cr_assert_eq(w.len, 0);
  free(buf);
}

Test(pack, short_reads_fail_and_stay_failed) {
  const char bytes[6] = {1, 0, 0, 0, 2, 0};
  pp_unpack r;
  pp_unpack_init(&r, bytes, sizeof bytes);
  int32_t a;
  cr_assert_eq(pp_unpack_i32(&r, &a), 0);
  cr_assert_eq(pp_unpack_i32(&r, &a), -1); /* 2 bytes left */
  cr_assert_eq(a, 0);
  cr_assert(!pp_unpack_ok(&r));
  cr_assert_eq(pp_unpack_left(&r), 0);
  char one;
  cr_assert_eq(pp_unpack_bytes(&r, &one, 1), -1); /* stays bad */
  cr_assert_null(pp_unpack_skip(&r, 0));
}

Test(pack, ranges_and_counts_are_checked_before_use) {
  pp_pack w = {0};
  pp_pack_i32(&w, 10);
  pp_unpack r;
  pp_unpack_init(&r, w.buf, w.len);
  int x;
  cr_assert_eq(pp_unpack_int_in(&r, 0, 9, &x), -1);
  cr_assert_eq(x, 0);
  cr_assert(!pp_unpack_ok(&r));
  pp_unpack_init(&r, w.buf, w.len);
  cr_assert_eq(pp_unpack_has(&r, 1, 4), 1);
  cr_assert_eq(pp_unpack_has(&r, 2, 4), 0);
  pp_unpack_init(&r, w.buf, w.len);
  cr_assert_eq(pp_unpack_has(&r, SIZE_MAX, 8), 0); /* no overflow */
  pp_unpack_init(&r, w.buf, w.len);
  int many[4];
  cr_assert_eq(pp_unpack_ints(&r, many, 4), -1);
  pp_unpack_init(&r, NULL, 100); /* no buffer: nothing to read */
  cr_assert_eq(pp_unpack_left(&r), 0);
  pp_pack_free(&w);
}

static pp_plan *sample_plan(void) {
  pp_plan *p = pp_plan_new(2);
  p->feasible = 1;
  p->tps = 0.125;
  p->devices_used = 6;
  p->sum_d = 3;
  for (int i = 0; i < 2; i++) {
    pp_plan_stage *s = &p->stages[i];
    s->n_nodes = 2 + i;
    s->nodes = malloc(sizeof(int) * (size_t)s->n_nodes);
    s->tmpc = malloc(sizeof(int) * (size_t)s->n_nodes);
    for (int j = 0; j < s->n_nodes; j++) {
      s->nodes[j] = 2 * i + j;
      s->tmpc[j] = j % 2;
    }
    s->d = 1 + i;
    s->t = 2;
    s->y = 3;
    s->load = 0.1 * (i + 1);
    s->memory = 1e9;
  }
  return p;
}

Test(pack, plan_round_trip_and_truncations_fail) {
  pp_plan *p = sample_plan();
  pp_pack w = {0};
  pp_plan_pack(p, &w);
  pp_unpack r;
  pp_unpack_init(&r, w.buf, w.len);
  pp_plan *q = pp_plan_unpack(&r, 5);
  cr_assert_not_null(q);
  cr_assert(pp_unpack_done(&r));
  cr_assert_eq(q->n_stages, 2);
  cr_assert(q->tps == 0.125 && q->feasible == 1 && q->devices_used == 6 && q->sum_d == 3);
  for (int i = 0; i < 2; i++) {
    cr_assert_eq(q->stages[i].n_nodes, p->stages[i].n_nodes);
    cr_assert(memcmp(q->stages[i].nodes, p->stages[i].nodes, sizeof(int) * (size_t)q->stages[i].n_nodes) ==
              0);
    cr_assert(memcmp(q->stages[i].tmpc, p->stages[i].tmpc, sizeof(int) * (size_t)q->stages[i].n_nodes) == 0);
    cr_assert(q->stages[i].load == p->stages[i].load && q->stages[i].memory == 1e9);
    cr_assert(q->stages[i].d == p->stages[i].d && q->stages[i].t == 2 && q->stages[i].y == 3);
  }
  pp_plan_free(q);
  for (size_t cut = 0; cut < w.len; cut++) {
    pp_unpack_init(&r, w.buf, cut);
    cr_assert_null(pp_plan_unpack(&r, 5), "%zu of %zu bytes accepted", cut, w.len);
  }
  pp_unpack_init(&r, w.buf, w.len); /* node 4 is not below 4 nodes */
  cr_assert_null(pp_plan_unpack(&r, 4));
  pp_pack_free(&w);
  pp_plan_free(p);
}
