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

void pp_stairs_pack_tail(const pp_stairs *t, int id, pp_pack *w) {
  const int last = t->n_rows - 1, lo = t->row_start[last], n = t->row_start[last + 1] - lo;
  const int row_start[2] = {0, n};
  pp_pack_i32(w, id);
  pp_pack_i32(w, t->k_first);
  pp_pack_i32(w, t->k_last);
  pp_pack_i32(w, 1);
  pp_pack_i64(w, n);
  pp_pack_ints(w, &t->k_first, 1);
  pp_pack_ints(w, row_start, 2);
  pp_pack_ints(w, t->s + lo, (size_t)n);
  pp_pack_doubles(w, t->v + lo, (size_t)n);
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

/* The header of a record written by pp_stairs_pack. */
typedef struct pack_head {
  int k_first, k_last, n_rows;
  int64_t steps;
} pack_head;

/* Reads the header of the record at r into *id and *h: 0, or -1 (r is
 * then bad) if a field is out of range or the bytes are short. */
static int read_head(pp_unpack *r, int *id, pack_head *h) {
  *id = -1;
  if (pp_unpack_int_in(r, INT_MIN, INT_MAX, id) || pp_unpack_int_in(r, 0, INT_MAX, &h->k_first) ||
      pp_unpack_int_in(r, h->k_first, INT_MAX, &h->k_last) ||
      pp_unpack_int_in(r, 1, INT_MAX - 1, &h->n_rows) || pp_unpack_i64(r, &h->steps) || h->steps < 1 ||
      h->steps > INT_MAX) {
    r->bad = 1;
    return -1;
  }
  return 0;
}

/* The bytes of a record's arrays after its header: row_k, row_start (one
 * more) and the steps' s and v. */
static size_t body_bytes(const pack_head *h) {
  return (size_t)h->n_rows * 2 * sizeof(int) + sizeof(int) +
         (size_t)h->steps * (sizeof(int) + sizeof(double));
}

int pp_stairs_skip(pp_unpack *r, int *id) {
  pack_head h;
  if (read_head(r, id, &h)) return -1;
  return pp_unpack_skip(r, body_bytes(&h)) ? 0 : -1;
}

pp_stairs *pp_stairs_unpack(pp_unpack *r, int *id) {
  pack_head h;
  if (read_head(r, id, &h)) return NULL;
  /* the arrays must be in the bytes left before anything is allocated */
  const int n_rows = h.n_rows;
  const int64_t steps = h.steps;
  if (!pp_unpack_has(r, (size_t)n_rows, 2 * sizeof(int)) ||
      !pp_unpack_has(r, (size_t)steps, sizeof(int) + sizeof(double)) || body_bytes(&h) > pp_unpack_left(r)) {
    r->bad = 1;
    return NULL;
  }
  pp_stairs *t = pp_stairs_new(h.k_first, h.k_last, n_rows, (int)steps);
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

pp_stairs *pp_stairs_unpack_last(pp_unpack *r, int *id) {
  pack_head h;
  if (read_head(r, id, &h)) return NULL;
  const int n_rows = h.n_rows;
  const int64_t steps = h.steps;
  int lo = -1, hi = -1;
  if (body_bytes(&h) > pp_unpack_left(r) || !pp_unpack_skip(r, sizeof(int) * (2 * (size_t)n_rows - 1)) ||
      pp_unpack_int_in(r, 0, (int)steps - 1, &lo) || pp_unpack_int_in(r, (int)steps, (int)steps, &hi)) {
    r->bad = 1;
    return NULL;
  }
  /* the last row: s[lo..hi) and v[lo..hi) of the arrays s[steps], v[steps] */
  const int n = hi - lo;
  pp_stairs *t = pp_stairs_new(h.k_last, h.k_last, 1, n);
  t->row_k[0] = h.k_last;
  t->row_start[0] = 0;
  t->row_start[1] = n;
  pp_unpack_skip(r, sizeof(int) * (size_t)lo);
  pp_unpack_ints(r, t->s, (size_t)n);
  pp_unpack_skip(r, sizeof(double) * (size_t)lo);
  pp_unpack_doubles(r, t->v, (size_t)n);
  int ok = pp_unpack_ok(r);
  for (int j = 0; ok && j < n; j++) ok = t->s[j] >= 0;
  if (!ok) {
    r->bad = 1;
    pp_stairs_free(t);
    return NULL;
  }
  return t;
}
