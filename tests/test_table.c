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

/* Value of row r of t at s (the last step at or before s; +INFINITY if none). */
static double row_value(const pp_stairs *t, int r, int s) {
  double v = INFINITY;
  for (int j = t->row_start[r]; j < t->row_start[r + 1] && t->s[j] <= s; j++) v = t->v[j];
  return v;
}

/* A table over k0..k1 (k0 >= 1) behind a one-row table at k0 - 1: its index
 * made after that row (also over an index made after another row) lists as
 * row 0's fresh steps exactly those below that row, the other rows' as
 * pp_stairs_index_fresh does; and
 * pp_stairs_absorbs says whether the join of the two leaves t's rows as
 * they are (pp_stairs_join), or all but row 0, dropped as equal to the row
 * ahead. */
Test(table, index_after_a_row_and_absorption) {
  tu_rng r = {7};
  int n_absorbed = 0, n_dropped = 0, n_not = 0;
  for (int it = 0; it < 400; it++) {
    const int k0 = tu_int(&r, 1, 5), k1 = k0 + tu_int(&r, 0, 8), S = tu_int(&r, 0, 9);
    const size_t W = (size_t)S + 1, cells = (size_t)(k1 - k0 + 1) * W;
    double *raw = malloc(sizeof(double) * cells), *dense = malloc(sizeof(double) * cells);
    double row[10], row2[10];
    for (size_t i = 0; i < cells; i++) raw[i] = tu_int(&r, 0, 3) == 0 ? INFINITY : (double)tu_int(&r, 1, 30);
    for (size_t x = 0; x < W; x++) {
      row[x] = tu_int(&r, 0, 2) == 0 ? INFINITY : (double)tu_int(&r, it % 2 ? 1 : 20, 40);
      if (it % 5 == 0) row[x] = raw[x]; /* the row ahead equals t's row 0: not absorbed */
      row2[x] = tu_int(&r, 0, 2) == 0 ? INFINITY : (double)tu_int(&r, 1, 40);
    }
    pp_stairs *before = pp_stairs_from_dense(row, k0 - 1, k0 - 1, S),
              *other = pp_stairs_from_dense(row2, k0 - 1, k0 - 1, S), *t[4];
    for (int c = 0; c < 4; c++) {
      memcpy(dense, raw, sizeof(double) * cells);
      t[c] = pp_stairs_from_dense(dense, k0, k1, S);
    }
    pp_stairs_index_fresh_after(t[0], before);
    pp_stairs_index_fresh(t[1]);
    pp_stairs_index_fresh_after(t[1], before); /* over pp_stairs_index_fresh's */
    pp_stairs_index_fresh_after(t[2], other);
    pp_stairs_index_fresh_after(t[2], before); /* over the index after another row */
    pp_stairs_index_fresh(t[3]);
    for (int c = 0; c < 3; c++) {
      const pp_stairs *x = t[c];
      int n = 0;
      for (int j = x->row_start[0]; j < x->row_start[1]; j++)
        if (x->v[j] < row_value(before, 0, x->s[j])) {
          cr_assert_lt(x->fresh_start[0] + n, x->fresh_start[1], "it %d copy %d: row 0 misses a step", it, c);
          cr_assert_eq(x->fresh[x->fresh_start[0] + n], j, "it %d copy %d", it, c);
          n++;
        }
      cr_assert_eq(x->fresh_start[1] - x->fresh_start[0], n, "it %d copy %d: row 0", it, c);
      for (int q = 1; q <= x->n_rows; q++)
        cr_assert_eq(x->fresh_start[q] - x->fresh_start[1], t[3]->fresh_start[q] - t[3]->fresh_start[1]);
      for (int j = x->fresh_start[1]; j < x->fresh_start[x->n_rows]; j++)
        cr_assert_eq(x->fresh[j], t[3]->fresh[j - x->fresh_start[1] + t[3]->fresh_start[1]], "it %d copy %d",
                     it, c);
    }
    pp_stairs *two[2] = {before, t[3]}, *joined = pp_stairs_join(two, 2);
    int kept = joined->n_rows == t[3]->n_rows + 1 &&
               joined->row_start[joined->n_rows] - joined->row_start[1] == t[3]->row_start[t[3]->n_rows];
    for (int q = 0; kept && q < t[3]->n_rows; q++) {
      kept &= joined->row_k[q + 1] == t[3]->row_k[q] && joined->row_start[q + 2] - joined->row_start[q + 1] ==
                                                            t[3]->row_start[q + 1] - t[3]->row_start[q];
      for (int j = t[3]->row_start[q]; kept && j < t[3]->row_start[q + 1]; j++) {
        const int jj = j - t[3]->row_start[q] + joined->row_start[q + 1];
        kept &= joined->s[jj] == t[3]->s[j] && joined->v[jj] == t[3]->v[j];
      }
    }
    /* or t's row 0 is before's row, dropped, and its later rows follow as they are */
    int dropped = !kept && joined->n_rows == t[3]->n_rows &&
                  joined->row_start[joined->n_rows] - joined->row_start[1] ==
                      t[3]->row_start[t[3]->n_rows] - t[3]->row_start[1];
    for (int j = 0; dropped && j < joined->row_start[1]; j++)
      dropped &= joined->s[j] == t[3]->s[j] && joined->v[j] == t[3]->v[j]; /* (row 0: before's row) */
    for (int q = 1; dropped && q < t[3]->n_rows; q++) {
      dropped &= joined->row_k[q] == t[3]->row_k[q] && joined->row_start[q + 1] - joined->row_start[q] ==
                                                           t[3]->row_start[q + 1] - t[3]->row_start[q];
      for (int j = t[3]->row_start[q]; dropped && j < t[3]->row_start[q + 1]; j++)
        dropped &= joined->s[j - t[3]->row_start[q] + joined->row_start[q]] == t[3]->s[j] &&
                   joined->v[j - t[3]->row_start[q] + joined->row_start[q]] == t[3]->v[j];
    }
    cr_assert_eq(pp_stairs_absorbs(t[3], before), kept ? 1 : dropped ? 2 : 0, "it %d", it);
    n_absorbed += kept;
    n_dropped += dropped;
    n_not += !kept && !dropped;
    pp_stairs_free(joined);
    for (int c = 0; c < 4; c++) pp_stairs_free(t[c]);
    pp_stairs_free(before);
    pp_stairs_free(other);
    free(raw);
    free(dense);
  }
  cr_assert(n_absorbed > 20 && n_dropped > 20 && n_not > 20, "%d absorbed, %d with row 0 dropped, %d not",
            n_absorbed, n_dropped, n_not);
}
