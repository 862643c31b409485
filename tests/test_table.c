/*
 * test_table.c - unit tests of the DP table staircases (src/core/table.c): building from a dense
 * table, the zero table, and joins of split device ranges.
 *
 * Graphs are described with the helpers of testutil.h and loaded through the
 * public JSON loader.  Expected values are worked out by hand in the comments.
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include "piper/table.h"

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
