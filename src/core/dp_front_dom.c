/*
 * dp_front_dom.c - whether the rows before an entry of a v = 1 table
 * already hold one no larger (dp_front.h), for the check of a table read
 * from an archive or a checkpoint.
 *
 * A row of such a table stores the entries its budget adds to the whole
 * row before it (dp_front.c): none of them may be dominated, in the sense
 * of the sweep of pp__dpf_prune (same class, s, A and H no larger; an
 * equal entry counts), by an entry of the whole row before, that is (by
 * transitivity) by any entry of the rows before.  Merging every row into
 * the whole row costs the whole row's size per row: on Llama 3.1 405B
 * under 1F1B at 4,096 devices the last tables' whole rows reach 14,000 to
 * 15,000 entries (one class, about 480 values of s) over 600-900 rows, and
 * `piper show` took 4.8 s (26.9 s at 16,384 devices: bench/bench_show.sh).
 * Here the entries are kept in a Fenwick tree over s per class (Fenwick,
 * "A new data structure for cumulative frequency tables", 1994), over the
 * s values the table uses, each node holding the staircase of its entries
 * in (A, H): A rising, H strictly falling, those no other entry of the
 * node dominates in both.  An entry is dominated by an inserted one if and
 * only if the staircase of some node over s values no larger than its own
 * holds a point with A and H no larger; a query and an insertion visit
 * O(log) nodes.  The index follows the table's size whatever the problem's
 * bounds: a key per entry, a node per key, and each entry in at most
 * log2(keys of its class) + 1 staircases.  Private to src/core.
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

/* A key: a class and an s value the table uses. */
typedef struct key {
  int cls, s;
} key;

struct pp__fdom {
  key *keys; /* [n_keys] the distinct (class, s) of the table, sorted */
  int n_keys;
  stair *nodes; /* [n_keys]: node i of a class's tree at its keys' offset + i - 1 */
};

static int key_cmp(const void *x, const void *y) {
  const key *a = x, *b = y;
  if (a->cls != b->cls) return (a->cls > b->cls) - (a->cls < b->cls);
  return (a->s > b->s) - (a->s < b->s);
}

/* The first index in keys[lo..hi) not below (cls, s). */
static int key_lower(const key *keys, int lo, int hi, int cls, int s) {
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (keys[mid].cls < cls || (keys[mid].cls == cls && keys[mid].s < s))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

pp__fdom *pp__fdom_new(pp__dp_front *f, const pp_stairs *t) {
  pp__fdom *d = pp_xcalloc(1, sizeof *d);
  int n = 0;
  for (int r = 0; r < t->n_rows; r++) n += pp__dpf_row_entries(f, t, r);
  d->keys = pp_xmalloc(sizeof *d->keys * ((size_t)n + 1));
  for (int r = 0, x = 0; r < t->n_rows; r++)
    for (int i = 0, c = pp__dpf_row_entries(f, t, r); i < c; i++, x++) {
      const fent e = pp__dpf_entry(f, t, r, i);
      d->keys[x] = (key){e.cls, e.s};
    }
  qsort(d->keys, (size_t)n, sizeof *d->keys, key_cmp);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (m == 0 || key_cmp(&d->keys[m - 1], &d->keys[i]) != 0) d->keys[m++] = d->keys[i];
  d->n_keys = m;
  d->nodes = pp_xcalloc((size_t)m + 1, sizeof *d->nodes);
  return d;
}

void pp__fdom_free(pp__fdom *d) {
  if (!d) return;
  for (int i = 0; i < d->n_keys; i++) free(d->nodes[i].p);
  free(d->nodes);
  free(d->keys);
  free(d);
}

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
  if (stair_covers(st, a, h)) return;
  int lo = 0, hi = st->n; /* the first point with A >= a */
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (st->p[mid].A < a)
      lo = mid + 1;
    else
      hi = mid;
  }
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

/* The keys of class cls: [*lo, return value). */
static int class_keys(const pp__fdom *d, int cls, int *lo) {
  *lo = key_lower(d->keys, 0, d->n_keys, cls, INT_MIN);
  return key_lower(d->keys, *lo, d->n_keys, cls + 1, INT_MIN);
}

int pp__fdom_covers(const pp__fdom *d, const fent *x) {
  int lo;
  const int hi = class_keys(d, x->cls, &lo), at = key_lower(d->keys, lo, hi, x->cls, x->s);
  /* the tree's nodes 1..p cover the class's s values no larger than x's */
  const int p = at - lo + (at < hi && d->keys[at].s == x->s);
  for (int i = p; i > 0; i -= i & -i)
    if (stair_covers(&d->nodes[lo + i - 1], x->A, x->H)) return 1;
  return 0;
}

void pp__fdom_add(pp__fdom *d, const fent *x) {
  int lo;
  const int hi = class_keys(d, x->cls, &lo), at = key_lower(d->keys, lo, hi, x->cls, x->s);
  if (at == hi || d->keys[at].s != x->s) return; /* (not an entry of the table: no key) */
  for (int i = at - lo + 1; i <= hi - lo; i += i & -i) stair_add(&d->nodes[lo + i - 1], x->A, x->H);
}
