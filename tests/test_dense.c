/*
 * test_dense.c - the dense 2bw kernel (src/core/dp_dense.c) against the
 * small-block kernel (src/core/dp_small.c), part by part.
 *
 * The planner gives the dense kernel only blocks of more than 65,536 cells
 * (pp__dp_small_fits), so the parity tests on BERT-32 are the only ones
 * that reach it through the planner.  Here it is called directly on small
 * random DAGs, chains and wide graphs of 8-12 nodes, with budgets and
 * microbatches that span several of its grid cells (16 x 16), and every
 * downset's table is computed
 *   - by the small-block kernel over all budgets (the reference),
 *   - by the dense kernel in 1 to 4 k-ranges cut at random, each range
 *     compared with the small-block kernel's over the same range (a part
 *     that starts above budget 0 relaxes the rows of J clipped to its
 *     first budget before the others: a wrong skip there shows in the
 *     part, even where the join would restore it), then joined,
 * and the tables must hold the same value at every (k, s), exactly, and
 * the same rows and steps (assert_same_stairs).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "dp_impl.h"
#include "testutil.h"

/* A random 2bw instance of kind 0 (random DAG), 1 (chain) or 2 (wide). */
static tu_spec *make_instance(int it, int kind, pp_problem *p) {
  tu_rng r = {0xde45e5ull + (uint64_t)it * 7919 + (uint64_t)kind * 1000003};
  double need, sum_max;
  tu_spec *s = tu_random_kind(&r, kind, &need, &sum_max);
  static const int Ns[] = {6, 12, 24, 48, 96};
  static const int Ks[] = {24, 40, 64, 96};
  s->microbatches = Ns[tu_int(&r, 0, 4)];
  s->devices = Ks[tu_int(&r, 0, 3)];
  s->memory = floor(need * (1.0 + 0.5 * tu_unit(&r)) + tu_unit(&r) * 0.6 * sum_max);
  *p = tu_problem(s);
  return s;
}

/* Every table of instance `it` of `kind` (make_instance), by the dense
 * kernel in random k-range parts, checked against the small-block kernel
 * part by part and joined; returns the number of parts that start above
 * budget 0. */
static int check_instance(int kind, int it) {
  pp_problem p;
  tu_spec *s = make_instance(it, kind, &p);
  tu_dps c = tu_dps_make(s, &p, 2);
  const pp_downsets *ds = c.ds;
  pp_dp *ref = c.dp[0], *dense = c.dp[1];
  cr_assert(!ref->front && !ref->wide, "a 2bw DP of a small table");
  const int K = p.devices, S = ref->S;
  tu_rng r = {0x9a7e5ull + (uint64_t)it * 31 + (uint64_t)kind};
  int upper_parts = 0;
  for (int id = 1; id < ds->count; id++) {
    const int n_parts = tu_int(&r, 1, 4);
    int cuts[5] = {0};
    for (int q = 1; q < n_parts; q++) cuts[q] = tu_int(&r, cuts[q - 1] + 1, K - (n_parts - 1 - q));
    cuts[n_parts] = K + 1;
    pp_stairs *parts[4];
    char what[160];
    for (int q = 0; q < n_parts; q++) {
      const int k0 = cuts[q], k1 = cuts[q + 1] - 1;
      parts[q] = pp__dp_dense_rows(dense, id, k0, k1);
      pp_stairs *want = pp__dp_small_rows(ref, id, k0, k1);
      snprintf(what, sizeof what, "kind %d, instance %d (K %d, N %d), downset %d, part %d..%d", kind, it, K,
               p.microbatches, id, k0, k1);
      assert_same_stairs(want, parts[q], S, what);
      pp_stairs_free(want);
      upper_parts += k0 > 0;
    }
    pp_stairs *joined = pp_stairs_join(parts, n_parts);
    for (int q = 0; q < n_parts; q++) pp_stairs_free(parts[q]);
    pp_dp_set_table(ref, id, pp__dp_small_rows(ref, id, 0, K));
    snprintf(what, sizeof what, "kind %d, instance %d (K %d, N %d), downset %d, %d parts joined", kind, it, K,
             p.microbatches, id, n_parts);
    assert_same_stairs(pp_dp_table(ref, id), joined, S, what);
    pp_dp_set_table(dense, id, joined);
  }
  tu_dps_free(&c);
  free(s);
  return upper_parts;
}

Test(dense, parts_equal_the_small_block_kernels, .timeout = 600) {
  const int per_kind = getenv("PIPER_SANITIZED") ? 3 : 10;
  int upper_parts = 0;
  for (int n = 0; n < 3 * per_kind; n++) upper_parts += check_instance(n % 3, n / 3);
  cr_assert(upper_parts > 100, "parts that start above budget 0: %d", upper_parts);
}
