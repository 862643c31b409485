/*
 * table.c - staircase storage of DP tables (see include/piper/table.h).
 */
#include "piper/table.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/error.h"
#include "table_build.h"

pp_stairs *pp_stairs_new(int k_first, int k_last, int n_rows, int n_steps) {
  assert(k_first >= 0 && n_rows >= 0 && n_steps >= 0);
  pp_stairs *t = pp_xcalloc(1, sizeof *t);
  t->k_first = k_first;
  t->k_last = k_last;
  t->n_rows = n_rows;
  t->row_k = pp_xmalloc(sizeof(int) * (size_t)(n_rows + 1));
  t->row_start = pp_xmalloc(sizeof(int) * (size_t)(n_rows + 1));
  t->s = pp_xmalloc(sizeof(int) * (size_t)(n_steps + 1));
  t->v = pp_xmalloc(sizeof(double) * (size_t)(n_steps + 1));
  return t;
}

void pp_stairs_free(pp_stairs *t) {
  if (!t) return;
  free(t->row_k);
  free(t->row_start);
  free(t->s);
  free(t->v);
  free(t->fresh_start);
  free(t->fresh);
  free(t);
}

/* The fresh steps of the row s[a..a_end), v[a..a_end) over the row before it,
 * ps[pn], pv[pn] (pn = 0: none, every step is fresh), as indices relative to
 * a into out; returns their number. */
static int fresh_of(const int *s, const double *v, int a, int a_end, const int *ps, const double *pv, int pn,
                    int *out) {
  int n = 0;
  if (pn == 0) {
    for (int j = a; j < a_end; j++) out[n++] = j - a;
    return n;
  }
  int pj = 0; /* walk the previous row alongside */
  for (int j = a; j < a_end; j++) {
    while (pj + 1 < pn && ps[pj + 1] <= s[j]) pj++;
    const double prev = ps[pj] <= s[j] ? pv[pj] : INFINITY;
    if (v[j] < prev) out[n++] = j - a;
  }
  return n;
}

/* pp_stairs_index_fresh, row 0 taken over ps[pn], pv[pn]. */
static void index_fresh(pp_stairs *t, const int *ps, const double *pv, int pn) {
  free(t->fresh_start);
  free(t->fresh);
  t->fresh_start = pp_xmalloc(sizeof(int) * (size_t)(t->n_rows + 1));
  t->fresh = pp_xmalloc(sizeof(int) * (size_t)(t->row_start[t->n_rows] + 1));
  int n = 0;
  for (int r = 0; r < t->n_rows; r++) {
    t->fresh_start[r] = n;
    const int a = t->row_start[r], a_end = t->row_start[r + 1];
    if (r == 0)
      n += fresh_of(t->s, t->v, a, a_end, ps, pv, pn, t->fresh + n);
    else
      n += fresh_of(t->s, t->v, a, a_end, t->s + t->row_start[r - 1], t->v + t->row_start[r - 1],
                    a - t->row_start[r - 1], t->fresh + n);
  }
  t->fresh_start[t->n_rows] = n;
}

void pp_stairs_index_fresh(pp_stairs *t) { index_fresh(t, NULL, NULL, 0); }

void pp_stairs_index_fresh_after(pp_stairs *t, const pp_stairs *before) {
  const int last = before->n_rows - 1, a = before->row_start[last];
  index_fresh(t, before->s + a, before->v + a, before->row_start[last + 1] - a);
}

size_t pp_stairs_bytes(const pp_stairs *t) {
  size_t fresh = t->fresh_start ? sizeof(int) * (size_t)(t->n_rows + 1 + t->fresh_start[t->n_rows]) : 0;
  return sizeof *t + sizeof(int) * 2 * (size_t)(t->n_rows + 1) +
         (sizeof(int) + sizeof(double)) * (size_t)(t->row_start[t->n_rows] + 1) + fresh;
}

/* Appends row k (steps s[n], v[n]) unless it equals the previous row. */
static void b_row(pp__stairs_build *b, int k, const int *s, const double *v, int n) {
  if (!pp__sb_same_as_last(b, s, v, n)) pp__sb_row(b, k, s, v, n);
}

/* The table built, with b's memory freed. */
static pp_stairs *b_done(pp__stairs_build *b, int k_first, int k_last) {
  pp_stairs *t = pp__sb_table(b, k_first, k_last);
  pp__sb_free(b);
  return t;
}

pp_stairs *pp_stairs_from_dense(double *dense, int k_first, int k_last, int S) {
  assert(dense && 0 <= k_first && k_first <= k_last && S >= 0);
  const size_t W = (size_t)S + 1;
  int *s = pp_xmalloc(sizeof(int) * W);
  double *v = pp_xmalloc(sizeof(double) * W);
  pp__stairs_build b = {0};
  for (int k = k_first; k <= k_last; k++) {
    double *row = dense + (size_t)(k - k_first) * W;
    if (k > k_first) {
      const double *prev = row - W;
      for (size_t j = 0; j < W; j++)
        if (prev[j] < row[j]) row[j] = prev[j];
    }
    int n = 0;
    for (size_t j = 0; j < W; j++) {
      if (j > 0 && row[j - 1] < row[j]) row[j] = row[j - 1];
      if (n == 0 || row[j] < v[n - 1]) {
        s[n] = (int)j;
        v[n] = row[j];
        n++;
      }
    }
    b_row(&b, k, s, v, n);
  }
  free(s);
  free(v);
  return b_done(&b, k_first, k_last);
}

pp_stairs *pp_stairs_zero(int K) {
  pp_stairs *t = pp_stairs_new(0, K, 1, 1);
  t->row_k[0] = 0;
  t->row_start[0] = 0;
  t->row_start[1] = 1;
  t->s[0] = 0;
  t->v[0] = 0.0;
  pp_stairs_index_fresh(t);
  return t;
}

int pp_stairs_row(const pp_stairs *t, int k) {
  assert(t);
  int lo = 0, hi = t->n_rows - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (t->row_k[mid] <= k)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

double pp_stairs_value(const pp_stairs *t, int k, int s) {
  assert(t && s >= 0);
  if (k < t->k_first) return INFINITY;
  if (k > t->k_last) k = t->k_last;
  int r = pp_stairs_row(t, k);
  int lo = t->row_start[r], hi = t->row_start[r + 1] - 1;
  if (s < t->s[lo]) return INFINITY;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (t->s[mid] <= s)
      lo = mid;
    else
      hi = mid - 1;
  }
  return t->v[lo];
}

/* Merges two staircase rows by pointwise minimum into s/v (capacity na+nb). */
static int merge_min(const int *sa, const double *va, int na, const int *sb, const double *vb, int nb, int *s,
                     double *v) {
  int i = 0, j = 0, n = 0;
  double ca = INFINITY, cb = INFINITY;
  while (i < na || j < nb) {
    int next;
    if (j >= nb || (i < na && sa[i] <= sb[j]))
      next = sa[i];
    else
      next = sb[j];
    while (i < na && sa[i] == next) ca = va[i++];
    while (j < nb && sb[j] == next) cb = vb[j++];
    double m = ca < cb ? ca : cb;
    if (n == 0 || m < v[n - 1]) {
      s[n] = next;
      v[n] = m;
      n++;
    }
  }
  return n;
}

int pp_stairs_absorbs(const pp_stairs *t, const pp_stairs *before) {
  const int last = before->n_rows - 1, b = before->row_start[last], nb = before->row_start[last + 1] - b,
            n = t->row_start[1];
  int *ms = pp_xmalloc(sizeof(int) * (size_t)(n + nb));
  double *mv = pp_xmalloc(sizeof(double) * (size_t)(n + nb));
  const int mn = merge_min(t->s, t->v, n, before->s + b, before->v + b, nb, ms, mv);
  const int kept = pp__rows_equal(ms, mv, mn, t->s, t->v, n),
            same = pp__rows_equal(t->s, t->v, n, before->s + b, before->v + b, nb);
  free(ms);
  free(mv);
  return !kept ? 0 : same ? 2 : 1;
}

pp_stairs *pp_stairs_join(pp_stairs *const *parts, int n_parts) {
  assert(parts && n_parts >= 1);
  pp__stairs_build b = {0};
  int cap = 16;
  int *ps = pp_xmalloc(sizeof(int) * (size_t)cap), *ms = pp_xmalloc(sizeof(int) * (size_t)cap);
  double *pv = pp_xmalloc(sizeof(double) * (size_t)cap), *mv = pp_xmalloc(sizeof(double) * (size_t)cap);
  int pn = 0; /* previous (final) row */
  for (int p = 0; p < n_parts; p++) {
    const pp_stairs *t = parts[p];
    /* once a row of the part is not lowered by the row before it, its
     * later rows, no higher (the prefix within the part), are not either */
    int absorbed = 0;
    for (int r = 0; r < t->n_rows; r++) {
      int st = t->row_start[r], n = t->row_start[r + 1] - st;
      if (pn + n > cap) {
        while (pn + n > cap) cap *= 2;
        ps = pp_xrealloc(ps, sizeof(int) * (size_t)cap);
        ms = pp_xrealloc(ms, sizeof(int) * (size_t)cap);
        pv = pp_xrealloc(pv, sizeof(double) * (size_t)cap);
        mv = pp_xrealloc(mv, sizeof(double) * (size_t)cap);
      }
      if (absorbed) {
        b_row(&b, t->row_k[r], t->s + st, t->v + st, n);
        if (r + 1 == t->n_rows) { /* the final row, for the next part */
          memcpy(ps, t->s + st, sizeof(int) * (size_t)n);
          memcpy(pv, t->v + st, sizeof(double) * (size_t)n);
          pn = n;
        }
        continue;
      }
      int mn = merge_min(t->s + st, t->v + st, n, ps, pv, pn, ms, mv);
      absorbed = pp__rows_equal(ms, mv, mn, t->s + st, t->v + st, n);
      b_row(&b, t->row_k[r], ms, mv, mn);
      memcpy(ps, ms, sizeof(int) * (size_t)mn);
      memcpy(pv, mv, sizeof(double) * (size_t)mn);
      pn = mn;
    }
  }
  free(ps);
  free(ms);
  free(pv);
  free(mv);
  return b_done(&b, parts[0]->k_first, parts[n_parts - 1]->k_last);
}

pp_stairs *pp_stairs_last_row(const pp_stairs *t) {
  assert(t && t->n_rows >= 1);
  const int a = t->row_start[t->n_rows - 1], n = t->row_start[t->n_rows] - a;
  pp_stairs *r = pp_stairs_new(t->k_last, t->k_last, 1, n);
  r->row_k[0] = t->k_last;
  r->row_start[0] = 0;
  r->row_start[1] = n;
  memcpy(r->s, t->s + a, sizeof(int) * (size_t)n);
  memcpy(r->v, t->v + a, sizeof(double) * (size_t)n);
  return r;
}

pp_stairs *pp_stairs_concat(const pp_stairs *const *pieces, const int *skip, int n, int k_first, int k_last) {
  assert(pieces && skip && n >= 1);
  int rows = 0, steps = 0;
  for (int i = 0; i < n; i++) {
    rows += pieces[i]->n_rows - skip[i];
    steps += pieces[i]->row_start[pieces[i]->n_rows] - pieces[i]->row_start[skip[i]];
  }
  pp_stairs *c = pp_stairs_new(k_first, k_last, rows, steps);
  int r = 0, x = 0;
  for (int i = 0; i < n; i++) {
    const pp_stairs *t = pieces[i];
    const int s0 = t->row_start[skip[i]], m = t->row_start[t->n_rows] - s0;
    for (int q = skip[i]; q < t->n_rows; q++, r++) {
      c->row_k[r] = t->row_k[q];
      c->row_start[r] = x + t->row_start[q] - s0;
    }
    memcpy(c->s + x, t->s + s0, sizeof(int) * (size_t)m);
    memcpy(c->v + x, t->v + s0, sizeof(double) * (size_t)m);
    x += m;
  }
  c->row_start[rows] = steps;
  return c;
}

pp_stairs *pp_stairs_restrict(const pp_stairs *t, int k_last, int S) {
  assert(t && k_last >= t->k_first && S >= 0);
  int rows = 0, steps = 0;
  for (int r = 0; r < t->n_rows && t->row_k[r] <= k_last; r++) {
    rows++;
    for (int j = t->row_start[r]; j < t->row_start[r + 1] && t->s[j] <= S; j++) steps++;
  }
  pp_stairs *c = pp_stairs_new(t->k_first, k_last, rows, steps);
  int n = 0, m = 0;
  for (int r = 0; r < rows; r++) {
    int a = t->row_start[r], len = 0;
    while (a + len < t->row_start[r + 1] && t->s[a + len] <= S) len++;
    /* a row that the cut in s made equal to the previous one merges with it */
    if (n > 0 && pp__rows_equal(t->s + a, t->v + a, len, c->s + c->row_start[n - 1],
                                c->v + c->row_start[n - 1], m - c->row_start[n - 1]))
      continue;
    c->row_k[n] = t->row_k[r];
    c->row_start[n] = m;
    memcpy(c->s + m, t->s + a, sizeof(int) * (size_t)len);
    memcpy(c->v + m, t->v + a, sizeof(double) * (size_t)len);
    m += len;
    n++;
  }
  c->n_rows = n;
  c->row_start[n] = m;
  return c;
}

/* 1 if row b's step function lies nowhere above row a's: both are step
 * functions (steps at rising s, checked before), so one walk over the union
 * of their step positions compares them everywhere. */
static int row_below(const pp_stairs *t, int a, int b) {
  int i = t->row_start[a], j = t->row_start[b];
  const int ie = t->row_start[a + 1], je = t->row_start[b + 1];
  double va = INFINITY, vb = INFINITY; /* the rows' values at s (+inf before their first step) */
  while (i < ie || j < je) {
    const int s = j >= je || (i < ie && t->s[i] < t->s[j]) ? t->s[i] : t->s[j];
    if (i < ie && t->s[i] == s) va = t->v[i++];
    if (j < je && t->s[j] == s) vb = t->v[j++];
    if (vb > va) return 0;
  }
  return 1;
}

int pp_stairs_valid(const pp_stairs *t, int K, int S, const char **why) {
  const char *w = NULL;
  if (t->k_first != 0 || t->k_last != K)
    w = "it does not cover the budgets 0..K";
  else if (t->n_rows < 1 || t->n_rows > K + 1 || t->row_k[0] != 0 || t->row_start[0] != 0)
    w = "its rows do not start at k = 0";
  for (int r = 0; !w && r < t->n_rows; r++) {
    int a = t->row_start[r], b = t->row_start[r + 1];
    if (r > 0 && (t->row_k[r] <= t->row_k[r - 1] || t->row_k[r] > K))
      w = "its rows are not at rising budgets k within 0..K";
    else if (b <= a || b > t->row_start[t->n_rows] || b - a > S + 1)
      w = "a row has no steps or more than S + 1";
    else if (t->s[a] != 0)
      w = "a row does not start at s = 0";
    for (int j = a; !w && j < b; j++) {
      if (t->s[j] > S || (j > a && t->s[j] <= t->s[j - 1]))
        w = "its steps are not at rising s within 0..S";
      else if (isnan(t->v[j]) || t->v[j] < 0 || (j > a && !(t->v[j] < t->v[j - 1])))
        w = "its values are not non-negative, finite or +inf, and falling in s";
    }
    if (!w && r > 0 && !row_below(t, r - 1, r)) w = "its values rise with k";
  }
  if (why) *why = w;
  return w == NULL;
}
