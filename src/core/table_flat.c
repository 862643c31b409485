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

void pp_stairs_flat_write(const pp_stairs *t, void *block) {
  const size_t rows = (size_t)t->n_rows, steps = (size_t)t->row_start[t->n_rows];
  const size_t n_fresh = (size_t)t->fresh_start[t->n_rows];
  int32_t head[HEAD_INTS] = {t->k_first, t->k_last, t->n_rows, (int32_t)steps, (int32_t)n_fresh, 0, 0, 0};
  memcpy(block, head, sizeof head);
  pp_stairs c;
  carve(block, &c, rows, steps);
  memcpy(c.v, t->v, sizeof(double) * steps);
  memcpy(c.row_k, t->row_k, sizeof(int) * rows);
  memcpy(c.row_start, t->row_start, sizeof(int) * (rows + 1));
  memcpy(c.fresh_start, t->fresh_start, sizeof(int) * (rows + 1));
  memcpy(c.s, t->s, sizeof(int) * steps);
  memcpy(c.fresh, t->fresh, sizeof(int) * n_fresh);
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
