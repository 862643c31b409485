/*
 * table_pack.c - a staircase table to and from packed bytes (see
 * include/piper/table.h and include/piper/pack.h).
 */
#include <limits.h>
#include <stdint.h>

#include "piper/table.h"

void pp_stairs_pack(const pp_stairs *t, int id, pp_pack *w) {
  const int64_t steps = t->row_start[t->n_rows];
  pp_pack_i32(w, id);
  pp_pack_i32(w, t->k_first);
  pp_pack_i32(w, t->k_last);
  pp_pack_i32(w, t->n_rows);
  pp_pack_i64(w, steps);
  pp_pack_ints(w, t->row_k, (size_t)t->n_rows);
  pp_pack_ints(w, t->row_start, (size_t)t->n_rows + 1);
  pp_pack_ints(w, t->s, (size_t)steps);
  pp_pack_doubles(w, t->v, (size_t)steps);
}

/* 1 if the arrays of t are consistent: rows at ascending budgets in
 * [k_first, k_last] from k_first, offsets from 0 to the step count with
 * every row non-empty, step positions s >= 0 (their order is the DP's
 * business: the Pareto rows of dp_front.c order entries by class first;
 * pp_dp_table_valid checks a table read from a file in full). */
static int well_formed(const pp_stairs *t, int64_t steps) {
  if (t->row_k[0] != t->k_first || t->row_start[0] != 0 || t->row_start[t->n_rows] != steps) return 0;
  for (int r = 0; r < t->n_rows; r++) {
    if (r > 0 && t->row_k[r] <= t->row_k[r - 1]) return 0;
    if (t->row_k[r] > t->k_last) return 0;
    const int a = t->row_start[r], b = t->row_start[r + 1];
    if (b <= a || b > steps) return 0;
    for (int j = a; j < b; j++)
      if (t->s[j] < 0) return 0;
  }
  return 1;
}

int pp_stairs_skip(pp_unpack *r, int *id) {
  int k_first, k_last, n_rows;
  int64_t steps;
  *id = -1;
  if (pp_unpack_int_in(r, INT_MIN, INT_MAX, id) || pp_unpack_int_in(r, 0, INT_MAX, &k_first) ||
      pp_unpack_int_in(r, k_first, INT_MAX, &k_last) || pp_unpack_int_in(r, 1, INT_MAX - 1, &n_rows) ||
      pp_unpack_i64(r, &steps) || steps < 1 || steps > INT_MAX) {
    r->bad = 1;
    return -1;
  }
  const size_t n =
      (size_t)n_rows * 2 * sizeof(int) + sizeof(int) + (size_t)steps * (sizeof(int) + sizeof(double));
  return pp_unpack_skip(r, n) ? 0 : -1;
}

pp_stairs *pp_stairs_unpack(pp_unpack *r, int *id) {
  int k_first, k_last, n_rows;
  int64_t steps;
  *id = -1;
  if (pp_unpack_int_in(r, INT_MIN, INT_MAX, id) || pp_unpack_int_in(r, 0, INT_MAX, &k_first) ||
      pp_unpack_int_in(r, k_first, INT_MAX, &k_last) || pp_unpack_int_in(r, 1, INT_MAX - 1, &n_rows) ||
      pp_unpack_i64(r, &steps))
    return NULL;
  /* the arrays must be in the bytes left before anything is allocated */
  const size_t per_row = 2 * sizeof(int), per_step = sizeof(int) + sizeof(double);
  if (steps < 1 || steps > INT_MAX || !pp_unpack_has(r, (size_t)n_rows, per_row) ||
      !pp_unpack_has(r, (size_t)steps, per_step) ||
      (size_t)n_rows * per_row + sizeof(int) + (size_t)steps * per_step > pp_unpack_left(r)) {
    r->bad = 1;
    return NULL;
  }
  pp_stairs *t = pp_stairs_new(k_first, k_last, n_rows, (int)steps);
  pp_unpack_ints(r, t->row_k, (size_t)n_rows);
  pp_unpack_ints(r, t->row_start, (size_t)n_rows + 1);
  pp_unpack_ints(r, t->s, (size_t)steps);
  pp_unpack_doubles(r, t->v, (size_t)steps);
  if (!pp_unpack_ok(r) || !well_formed(t, steps)) {
    r->bad = 1;
    pp_stairs_free(t);
    return NULL;
  }
  return t;
}
