/*
 * dp_front_dom.c - the entries of the rows of a v = 1 table so far, asked
 * whether one of them is no larger than a given entry (dp_front.h): for
 * the rows being built (what a row stores is what the rows before it do
 * not dominate), the screen of the budget-ordered kernel, and the check of
 * a table read back.
 *
 * A row of such a table stores the entries its budget adds to the whole
 * row before it (dp_front.c): those that no entry of the whole row before
 * dominates, in the sense of the sweep of pp__dpf_prune (same class, s, A
 * and H no larger; an equal entry counts), that is (by transitivity) no
 * entry of the rows before.  Merging every row into the whole row costs
 * the whole row's size per row: on Llama 3.1 405B under 1F1B at 4,096
 * devices the last tables' whole rows reach 14,000 to 15,000 entries (one
 * class, about 480 values of s) over 600-900 rows; the merges took 40% of
 * the plan's samples and 90% of `piper show`'s (with this index: 12.96 ->
 * 5.22 s and 4.84 -> 0.68 s, bench/results-schedules.txt and
 * bench/results-show.txt).  Here the entries are kept in
 * a Fenwick tree over s = 0..S per class (Fenwick, "A new data structure
 * for cumulative frequency tables", 1994), each node holding the staircase
 * of its entries in (A, H): A rising, H strictly falling, those no other
 * entry of the node dominates in both.  An entry is dominated by one
 * added if and only if the staircase of some node over s values no larger
 * than its own holds a point with A and H no larger; a query and an
 * insertion visit O(log S) nodes.  A class's nodes are made when it gets
 * its first entry: S + 1 of 16 bytes, and each entry is in at most
 * log2(S + 1) + 1 staircases.  Private to src/core.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dp_front.h"

typedef pp__fent fent;

/* One point of a staircase. */
typedef struct point {
  double A, H;
} point;

/* The staircase of a node. */
typedef struct stair {
  point *p;
  int n, cap;
} stair;

/* The number of points of st with A <= a. */
static int points_upto(const stair *st, double a) {
  int lo = 0, hi = st->n;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (st->p[mid].A <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* 1 if a point of st has A <= a and H <= h (the last with A <= a has the
 * least H of them). */
static int stair_covers(const stair *st, double a, double h) {
  const int i = points_upto(st, a);
  return i > 0 && st->p[i - 1].H <= h;
}

/* Adds (a, h) to st unless a point covers it; drops the points it covers
 * (A >= a and H >= h: after those with A < a, a run while H >= h). */
static void stair_add(stair *st, double a, double h) {
  const int i = points_upto(st, a);
  if (i > 0 && st->p[i - 1].H <= h) return; /* covered (stair_covers) */
  /* the first point with A >= a: the points' A are distinct (of two with
   * the same A, the one with the smaller H covers the other) */
  const int lo = i > 0 && st->p[i - 1].A == a ? i - 1 : i;
  int b = lo;
  while (b < st->n && st->p[b].H >= h) b++;
  if (b == lo) { /* nothing dropped: room for one more */
    if (st->n == st->cap) {
      st->cap = st->cap ? 2 * st->cap : 4;
      st->p = pp_xrealloc(st->p, sizeof *st->p * (size_t)st->cap);
    }
    memmove(st->p + lo + 1, st->p + lo, sizeof *st->p * (size_t)(st->n - lo));
    st->n++;
  } else if (b > lo + 1) {
    memmove(st->p + lo + 1, st->p + b, sizeof *st->p * (size_t)(st->n - b));
    st->n -= b - lo - 1;
  }
  st->p[lo] = (point){a, h};
}

struct pp__fidx {
  int S, n_cls;      /* classes -1 .. n_cls - 1 */
  stair **cls_nodes; /* [n_cls + 1]: class c's S + 1 nodes at c + 1, NULL until its first entry */
  int *touched;      /* (class + 1) (S + 1) + node of the nodes holding points, n_touched of them */
  int n_touched, cap_touched, n;
};

pp__fidx *pp__fidx_new(int n_cls, int S) {
  pp__fidx *x = pp_xcalloc(1, sizeof *x);
  x->S = S;
  x->n_cls = n_cls;
  x->cls_nodes = pp_xcalloc((size_t)n_cls + 1, sizeof *x->cls_nodes);
  return x;
}

void pp__fidx_free(pp__fidx *x) {
  if (!x) return;
  for (int c = 0; c <= x->n_cls; c++)
    for (int i = 0; x->cls_nodes[c] && i <= x->S; i++) free(x->cls_nodes[c][i].p);
  for (int c = 0; c <= x->n_cls; c++) free(x->cls_nodes[c]);
  free(x->cls_nodes);
  free(x->touched);
  free(x);
}

void pp__fidx_clear(pp__fidx *x) {
  const int W = x->S + 1;
  for (int i = 0; i < x->n_touched; i++) x->cls_nodes[x->touched[i] / W][x->touched[i] % W].n = 0;
  x->n_touched = 0;
  x->n = 0;
}

int pp__fidx_empty(const pp__fidx *x) { return x->n == 0; }

int pp__fidx_covers(const pp__fidx *x, const fent *e) {
  if (e->cls < -1 || e->cls >= x->n_cls || e->s < 0 || e->s > x->S) return 0;
  const stair *nodes = x->cls_nodes[e->cls + 1];
  if (!nodes) return 0;
  /* the nodes over s' = 0..s, the widest range first (most entries are
   * dominated, most often by one of the entries of smallest s) */
  int at[32], n = 0;
  for (int i = e->s + 1; i > 0; i -= i & -i) at[n++] = i - 1;
  while (n > 0) {
    const stair *st = &nodes[at[--n]];
    if (st->n > 0 && stair_covers(st, e->A, e->H)) return 1;
  }
  return 0;
}

void pp__fidx_add(pp__fidx *x, const fent *e) {
  if (e->cls < -1 || e->cls >= x->n_cls || e->s < 0 || e->s > x->S) return;
  const int W = x->S + 1;
  stair **nodes = &x->cls_nodes[e->cls + 1];
  if (!*nodes) *nodes = pp_xcalloc((size_t)W, sizeof **nodes);
  for (int i = e->s + 1; i <= W; i += i & -i) { /* the nodes over ranges of s holding s */
    stair *st = &(*nodes)[i - 1];
    if (st->n == 0) {
      if (x->n_touched == x->cap_touched) {
        x->cap_touched = x->cap_touched ? 2 * x->cap_touched : 64;
        x->touched = pp_xrealloc(x->touched, sizeof(int) * (size_t)x->cap_touched);
      }
      x->touched[x->n_touched++] = (e->cls + 1) * W + i - 1;
    }
    stair_add(st, e->A, e->H);
  }
  x->n++;
}
