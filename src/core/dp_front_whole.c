/*
 * dp_front_whole.c - whole rows of the v = 1 Pareto-row tables at any
 * budget, for the k-range seams of the kernels.
 *
 * A table's row stores only the entries its budget adds to the whole row
 * before it (dp_front.c), so the whole row r is the union of rows 0..r,
 * pruned.  A k-range part that starts at k0 > 0 extends, for each stage
 * of td devices, the whole row of J at k0 - td (every entry of a budget no
 * larger lands at k0), and only the added entries of J's later rows.
 * Extending the union instead would be exact too, but its dominated
 * entries are most of it (BERT-32 at K = 2048 under 1f1b on 2 ranks took
 * 10x the time).  So each table used at a seam gets keyframes, made on
 * first use and kept with the table's address: whole rows at some rows,
 * one whenever the entries added since the last one reach the size of the
 * whole row (so the keyframes hold about as many entries as the table,
 * and a whole row is a keyframe plus at most about as many added entries,
 * pruned).  Private to src/core.
 */
#include <stdlib.h>
#include <string.h>

#include "dp_front.h"

typedef pp__fent fent;

/* The keyframes of one table: whole rows at rows kr[q], entries
 * e[start[q] .. start[q + 1]). */
struct pp__fwhole {
  const double *key; /* the table's values they were made from */
  int *kr, *start, n;
  fent *e;
};

void pp__dpf_whole_free(pp__fwhole *w, int count) {
  for (int i = 0; w && i < count; i++) {
    free(w[i].kr);
    free(w[i].start);
    free(w[i].e);
  }
  free(w);
}

/* Appends the entries of rows a..b of t to buf[*n] (grown), sentinels
 * left out. */
static void append_rows(const pp__dp_front *f, const pp_stairs *t, int a, int b, fent **buf, int *cap,
                        int *n) {
  int m = 0;
  for (int r = a; r <= b; r++) m += pp__dpf_row_entries(f, t, r);
  pp__dpf_grow(buf, cap, *n + m + 1);
  for (int r = a; r <= b; r++)
    for (int i = 0, c = pp__dpf_row_entries(f, t, r); i < c; i++) {
      const fent e = pp__dpf_entry(f, t, r, i);
      if (e.H != INFINITY) (*buf)[(*n)++] = e;
    }
}

int pp__dpf_whole_row(pp__dp_front *f, const pp_stairs *t, int r, fent **buf, int *cap) {
  int n = 0;
  append_rows(f, t, 0, r, buf, cap, &n);
  return pp__dpf_prune(f, *buf, n);
}

/* Makes the keyframes of table j. */
static void build(const pp_dp *dp, int j, pp__fwhole *w) {
  pp__dp_front *f = dp->front;
  const pp_stairs *t = dp->tab[j];
  w->n = 0;
  int cap_k = 16, cap_e = 0, used = 0;
  w->kr = pp_xrealloc(w->kr, sizeof(int) * (size_t)cap_k);
  w->start = pp_xrealloc(w->start, sizeof(int) * (size_t)(cap_k + 1));
  free(w->e);
  w->e = NULL;
  fent *cur = NULL; /* the whole row so far, then the rows added since */
  int cur_cap = 0, whole = 0, n = 0;
  for (int r = 0; r < t->n_rows; r++) {
    append_rows(f, t, r, r, &cur, &cur_cap, &n);
    if (r > 0 && r + 1 < t->n_rows && n - whole < (whole > 64 ? whole : 64)) continue;
    whole = n = pp__dpf_prune(f, cur, n); /* (sorted and pruned: the whole row r) */
    if (w->n == cap_k) {
      cap_k *= 2;
      w->kr = pp_xrealloc(w->kr, sizeof(int) * (size_t)cap_k);
      w->start = pp_xrealloc(w->start, sizeof(int) * (size_t)(cap_k + 1));
    }
    pp__dpf_grow(&w->e, &cap_e, used + n + 1);
    memcpy(w->e + used, cur, sizeof(fent) * (size_t)n);
    w->kr[w->n] = r;
    w->start[w->n++] = used;
    used += n;
  }
  w->start[w->n] = used;
  free(cur);
  w->key = t->v;
}

int pp__dpf_whole_at(const pp_dp *dp, int j, int r, const fent **out) {
  pp__dp_front *f = dp->front;
  const pp_stairs *t = dp->tab[j];
  if (f->wrow_key == t->v && f->wrow_j == j && f->wrow_r == r) { /* the same again (another stage) */
    *out = f->wrow;
    return f->wrow_n;
  }
  if (!f->whole) {
    f->whole = pp_xcalloc((size_t)dp->ds->count, sizeof *f->whole);
    f->n_whole = dp->ds->count;
  }
  pp__fwhole *w = &f->whole[j];
  if (w->key != t->v) build(dp, j, w);
  int lo = 0, hi = w->n - 1; /* the last keyframe at a row <= r (the first is row 0) */
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (w->kr[mid] <= r)
      lo = mid;
    else
      hi = mid - 1;
  }
  int n = w->start[lo + 1] - w->start[lo];
  pp__dpf_grow(&f->wrow, &f->wrow_cap, n + 1);
  memcpy(f->wrow, w->e + w->start[lo], sizeof(fent) * (size_t)n);
  if (w->kr[lo] < r) {
    append_rows(f, t, w->kr[lo] + 1, r, &f->wrow, &f->wrow_cap, &n);
    n = pp__dpf_prune(f, f->wrow, n);
  }
  *out = f->wrow;
  f->wrow_key = t->v;
  f->wrow_j = j;
  f->wrow_r = r;
  f->wrow_n = n;
  return n;
}

int pp__dpf_whole_keyframes(const pp_dp *dp, int j) {
  const pp__dp_front *f = dp->front;
  return f->whole && f->whole[j].key == dp->tab[j]->v ? f->whole[j].n : 0;
}
