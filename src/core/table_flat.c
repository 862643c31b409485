/*
 * table_flat.c - a staircase table in one position-independent block (see
 * include/piper/table.h): offsets instead of pointers, so that processes
 * mapping shared memory at different addresses can all read it.
 */
#include <stdint.h>
#include <string.h>

#include "piper/table.h"

/* Block layout: int32 head[8] = {k_first, k_last, n_rows, n_steps, n_fresh},
 * then v[n_steps + 1], row_k[n_rows + 1], row_start[n_rows + 1],
 * fresh_start[n_rows + 1], s[n_steps + 1], fresh[n_fresh + 1] (the doubles
 * first, so that every array is aligned), the whole rounded up to 64. */
#define HEAD_INTS 8

static size_t flat_size(size_t rows, size_t steps, size_t n_fresh) {
  const size_t b = sizeof(int32_t) * HEAD_INTS + sizeof(double) * (steps + 1) +
                   sizeof(int) * (3 * (rows + 1) + (steps + 1) + (n_fresh + 1));
  return (b + 63) & ~(size_t)63;
}

size_t pp_stairs_flat_bytes(const pp_stairs *t) {
  return flat_size((size_t)t->n_rows, (size_t)t->row_start[t->n_rows], (size_t)t->fresh_start[t->n_rows]);
}

/* Points view's arrays into block (laid out as above). */
static void carve(char *block, pp_stairs *view, size_t rows, size_t steps) {
  char *p = block + sizeof(int32_t) * HEAD_INTS;
  view->v = (double *)p;
  p += sizeof(double) * (steps + 1);
  view->row_k = (int *)p;
  p += sizeof(int) * (rows + 1);
  view->row_start = (int *)p;
  p += sizeof(int) * (rows + 1);
  view->fresh_start = (int *)p;
  p += sizeof(int) * (rows + 1);
  view->s = (int *)p;
  p += sizeof(int) * (steps + 1);
  view->fresh = (int *)p;
}

pp_flat_counts pp_stairs_flat_counts(const pp_stairs *t, int skip) {
  const int n = t->n_rows;
  return (pp_flat_counts){(size_t)(n - skip), (size_t)(t->row_start[n] - t->row_start[skip]),
                          (size_t)(t->fresh_start[n] - t->fresh_start[skip])};
}

size_t pp_stairs_flat_size(pp_flat_counts all) { return flat_size(all.rows, all.steps, all.fresh); }

void pp_stairs_flat_write_rows(const pp_stairs *t, int skip, void *block, int k_first, int k_last,
                               pp_flat_counts all, pp_flat_counts before, int first, int last) {
  if (first) {
    int32_t head[HEAD_INTS] = {k_first, k_last, (int32_t)all.rows, (int32_t)all.steps, (int32_t)all.fresh, 0,
                               0,       0};
    memcpy(block, head, sizeof head);
  }
  pp_stairs c;
  carve(block, &c, all.rows, all.steps);
  const pp_flat_counts mine = pp_stairs_flat_counts(t, skip);
  const int s0 = t->row_start[skip], f0 = t->fresh_start[skip];
  memcpy(c.v + before.steps, t->v + s0, sizeof(double) * mine.steps);
  memcpy(c.s + before.steps, t->s + s0, sizeof(int) * mine.steps);
  memcpy(c.row_k + before.rows, t->row_k + skip, sizeof(int) * mine.rows);
  memcpy(c.fresh + before.fresh, t->fresh + f0, sizeof(int) * mine.fresh);
  for (size_t r = 0; r < mine.rows; r++) { /* offsets into the whole table's arrays */
    c.row_start[before.rows + r] = (int)before.steps + t->row_start[skip + (int)r] - s0;
    c.fresh_start[before.rows + r] = (int)before.fresh + t->fresh_start[skip + (int)r] - f0;
  }
  if (last) {
    c.row_start[all.rows] = (int)all.steps;
    c.fresh_start[all.rows] = (int)all.fresh;
  }
}

void pp_stairs_flat_write(const pp_stairs *t, void *block) {
  const pp_flat_counts all = pp_stairs_flat_counts(t, 0), none = {0, 0, 0};
  pp_stairs_flat_write_rows(t, 0, block, t->k_first, t->k_last, all, none, 1, 1);
}

void pp_stairs_flat_view(const void *block, pp_stairs *view) {
  int32_t head[HEAD_INTS];
  memcpy(head, block, sizeof head);
  memset(view, 0, sizeof *view);
  view->k_first = head[0];
  view->k_last = head[1];
  view->n_rows = head[2];
  carve((char *)block, view, (size_t)head[2], (size_t)head[3]);
}
