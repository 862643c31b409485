/*
 * table_flat.c - a staircase table in one position-independent block (see
 * include/piper/table.h): offsets instead of pointers, so that processes
 * mapping shared memory at different addresses can all read it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "piper/error.h"
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

size_t pp_stairs_flat_scratch_ints(const pp_stairs *t, int skip) {
  return HEAD_INTS + 2 * (pp_stairs_flat_counts(t, skip).rows + 1);
}

/* The spans of one piece: the header (made in scratch) if first, the
 * piece's steps, budgets and fresh indices straight from t, and its row
 * offsets rebased into the whole table's arrays (made in scratch), with
 * the end marks if last (the last piece's rows end the table's, so they
 * follow its offsets). */
int pp_stairs_flat_spans(const pp_stairs *t, int skip, void *block, int k_first, int k_last,
                         pp_flat_counts all, pp_flat_counts before, int first, int last, int *scratch,
                         pp_span *out) {
  int n = 0;
  if (first) {
    const int head[HEAD_INTS] = {k_first, k_last, (int)all.rows, (int)all.steps, (int)all.fresh, 0, 0, 0};
    memcpy(scratch, head, sizeof head);
    out[n++] = (pp_span){scratch, block, sizeof head};
  }
  pp_stairs c;
  carve(block, &c, all.rows, all.steps);
  const pp_flat_counts mine = pp_stairs_flat_counts(t, skip);
  const int s0 = t->row_start[skip], f0 = t->fresh_start[skip];
  int *rs = scratch + HEAD_INTS, *fs = rs + mine.rows + 1;
  for (size_t r = 0; r < mine.rows; r++) { /* offsets into the whole table's arrays */
    rs[r] = (int)before.steps + t->row_start[skip + (int)r] - s0;
    fs[r] = (int)before.fresh + t->fresh_start[skip + (int)r] - f0;
  }
  const size_t marks = last ? 1 : 0;
  rs[mine.rows] = (int)all.steps;
  fs[mine.rows] = (int)all.fresh;
  const pp_span each[] = {
      {t->v + s0, c.v + before.steps, sizeof(double) * mine.steps},
      {t->s + s0, c.s + before.steps, sizeof(int) * mine.steps},
      {t->row_k + skip, c.row_k + before.rows, sizeof(int) * mine.rows},
      {t->fresh + f0, c.fresh + before.fresh, sizeof(int) * mine.fresh},
      {rs, c.row_start + before.rows, sizeof(int) * (mine.rows + marks)},
      {fs, c.fresh_start + before.rows, sizeof(int) * (mine.rows + marks)},
  };
  for (size_t i = 0; i < sizeof each / sizeof each[0]; i++)
    if (each[i].n > 0) out[n++] = each[i];
  return n;
}

void pp_stairs_flat_write_rows(const pp_stairs *t, int skip, void *block, int k_first, int k_last,
                               pp_flat_counts all, pp_flat_counts before, int first, int last) {
  int small[1024]; /* (tables of up to 507 rows: most) */
  const size_t need = pp_stairs_flat_scratch_ints(t, skip);
  int *scratch = need <= sizeof small / sizeof small[0] ? small : pp_xmalloc(sizeof(int) * need);
  pp_span spans[PP_FLAT_SPANS];
  const int n =
      pp_stairs_flat_spans(t, skip, block, k_first, k_last, all, before, first, last, scratch, spans);
  pp_pages_copy(spans, n, 0);
  if (scratch != small) free(scratch);
}

void pp_stairs_flat_write(const pp_stairs *t, void *block) {
  const pp_flat_counts all = pp_stairs_flat_counts(t, 0), none = {0, 0, 0};
  pp_stairs_flat_write_rows(t, 0, block, t->k_first, t->k_last, all, none, 1, 1);
}

size_t pp_stairs_flat_view(const void *block, pp_stairs *view) {
  int32_t head[HEAD_INTS];
  memcpy(head, block, sizeof head);
  memset(view, 0, sizeof *view);
  view->k_first = head[0];
  view->k_last = head[1];
  view->n_rows = head[2];
  carve((char *)block, view, (size_t)head[2], (size_t)head[3]);
  return flat_size((size_t)head[2], (size_t)head[3], (size_t)head[4]);
}
