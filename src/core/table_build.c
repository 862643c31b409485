/*
 * table_build.c - the row-by-row builder of staircase tables (see
 * table_build.h).
 */
#include "table_build.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "piper/error.h"

void pp__sb_row_begin(pp__stairs_build *b, int k, size_t n) {
  assert(b->n_rows == 0 || k > b->row_k[b->n_rows - 1]);
  if (b->n_rows + 1 >= b->cap_rows) {
    b->cap_rows = b->cap_rows ? 2 * b->cap_rows : 64;
    b->row_k = pp_xrealloc(b->row_k, sizeof(int) * (size_t)b->cap_rows);
    b->row_start = pp_xrealloc(b->row_start, sizeof(int) * (size_t)b->cap_rows);
  }
  if (b->n_steps + n > b->cap_steps) {
    while (b->n_steps + n > b->cap_steps) b->cap_steps = b->cap_steps ? 2 * b->cap_steps : 4096;
    b->s = pp_xrealloc(b->s, sizeof(int) * b->cap_steps);
    b->v = pp_xrealloc(b->v, sizeof(double) * b->cap_steps);
  }
  b->row_k[b->n_rows] = k;
  b->row_start[b->n_rows++] = (int)b->n_steps;
}

void pp__sb_row(pp__stairs_build *b, int k, const int *s, const double *v, int n) {
  pp__sb_row_begin(b, k, (size_t)n);
  if (n > 0) {
    memcpy(b->s + b->n_steps, s, sizeof(int) * (size_t)n);
    memcpy(b->v + b->n_steps, v, sizeof(double) * (size_t)n);
  }
  b->n_steps += (size_t)n;
}

int pp__sb_same_as_last(const pp__stairs_build *b, const int *s, const double *v, int n) {
  if (b->n_rows == 0) return 0;
  const size_t st = (size_t)b->row_start[b->n_rows - 1];
  return pp__rows_equal(b->s + st, b->v + st, (int)(b->n_steps - st), s, v, n);
}

pp_stairs *pp__sb_table(pp__stairs_build *b, int k_first, int k_last) {
  pp_stairs *t = pp_stairs_new(k_first, k_last, b->n_rows, (int)b->n_steps);
  if (b->n_rows > 0) {
    memcpy(t->row_k, b->row_k, sizeof(int) * (size_t)b->n_rows);
    memcpy(t->row_start, b->row_start, sizeof(int) * (size_t)b->n_rows);
  }
  t->row_start[b->n_rows] = (int)b->n_steps;
  if (b->n_steps > 0) {
    memcpy(t->s, b->s, sizeof(int) * b->n_steps);
    memcpy(t->v, b->v, sizeof(double) * b->n_steps);
  }
  b->n_rows = 0;
  b->n_steps = 0;
  return t;
}

void pp__sb_free(pp__stairs_build *b) {
  free(b->row_k);
  free(b->row_start);
  free(b->s);
  free(b->v);
  *b = (pp__stairs_build){0};
}
