/*
 * table_build.h - a staircase table (include/piper/table.h) built row by
 * row in rising budget k, then copied into a table of exactly its size.
 * The one builder of the tables the DP kernels and table.c make.  Private
 * to src/core.
 */
#ifndef PIPER_TABLE_BUILD_H
#define PIPER_TABLE_BUILD_H

#include <stddef.h>
#include <string.h>

#include "piper/table.h"

/* 1 if the rows (sa[na], va[na]) and (sb[nb], vb[nb]) have the same steps,
 * bit for bit (so -0.0 and 0.0 differ, and a NaN equals its own copy). */
static inline int pp__rows_equal(const int *sa, const double *va, int na, const int *sb, const double *vb,
                                 int nb) {
  return na == nb && memcmp(sa, sb, sizeof(int) * (size_t)na) == 0 &&
         memcmp(va, vb, sizeof(double) * (size_t)na) == 0;
}

/* The rows appended so far: row r has budget row_k[r] and the steps
 * s[row_start[r]..], v[...] up to the next row's start (n_steps for the
 * last).  Zero-initialised is empty; pp__sb_table empties it and keeps its
 * memory, so one builder serves many tables. */
typedef struct pp__stairs_build {
  int *row_k, *row_start; /* [cap_rows] */
  int *s;                 /* [cap_steps] */
  double *v;              /* [cap_steps] */
  int n_rows, cap_rows;
  size_t n_steps, cap_steps;
} pp__stairs_build;

/* Starts row k (larger than the last row's) with room for n more steps,
 * to be appended with pp__sb_step (at most n of them).  Aborts through
 * pp_xrealloc when out of memory. */
void pp__sb_row_begin(pp__stairs_build *b, int k, size_t n);

/* Appends the step (s, v) to the row begun last (room reserved). */
static inline void pp__sb_step(pp__stairs_build *b, int s, double v) {
  b->s[b->n_steps] = s;
  b->v[b->n_steps++] = v;
}

/* Appends row k with the steps s[n], v[n] (copied). */
void pp__sb_row(pp__stairs_build *b, int k, const int *s, const double *v, int n);

/* 1 if there is a last row and its steps are exactly s[n], v[n]. */
int pp__sb_same_as_last(const pp__stairs_build *b, const int *s, const double *v, int n);

/* A new table of budgets k_first..k_last holding the rows appended (the
 * caller owns it: pp_stairs_free); b is left empty, its memory kept. */
pp_stairs *pp__sb_table(pp__stairs_build *b, int k_first, int k_last);

/* Frees b's memory (b is then empty; b may be empty already). */
void pp__sb_free(pp__stairs_build *b);

#endif /* PIPER_TABLE_BUILD_H */
