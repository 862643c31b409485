/*
 * dp_front_rows.c - the rows of the Pareto-row tables (see dp_front.c for
 * the objective and the entries): sorting and pruning entries to the ones
 * no other dominates, the candidates collected per budget, building a table's
 * rows from them (each row with the one before: the prefix over k; with v
 * chunks each row alone, see dp_vstage.c), the fresh index, joining k-range
 * parts, restricting to a smaller K or S, and the validity check of a table
 * read back.  Private to src/core.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_front.h"
#include "piper/bitset.h"

typedef pp__fent fent;
typedef pp__fvec fvec;

int pp__dpf_cmp(const void *x, const void *y) {
  const fent *a = x, *b = y;
  if (a->cls != b->cls) return a->cls < b->cls ? -1 : 1;
  if (a->s != b->s) return a->s < b->s ? -1 : 1;
  if (a->A != b->A) return a->A < b->A ? -1 : 1;
  if (a->H != b->H) return a->H < b->H ? -1 : 1;
  return 0;
}

void pp__dpf_grow(fent **p, int *cap, int need) {
  if (need <= *cap) return;
  int c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  *p = pp_xrealloc(*p, sizeof(fent) * (size_t)c);
  *cap = c;
}

/* pp__dpf_cmp(x, y) < 0, inline. */
static inline int fless(const fent *x, const fent *y) {
  if (x->cls != y->cls) return x->cls < y->cls;
  if (x->s != y->s) return x->s < y->s;
  if (x->A != y->A) return x->A < y->A;
  return x->H < y->H;
}

/* Merges the sorted a[na] and b[nb] into out[na + nb]. */
static void merge(const fent *a, int na, const fent *b, int nb, fent *out) {
  int i = 0, j = 0, o = 0;
  while (i < na && j < nb) out[o++] = fless(&b[j], &a[i]) ? b[j++] : a[i++];
  while (i < na) out[o++] = a[i++];
  while (j < nb) out[o++] = b[j++];
}

/* Sorts e[n] in pp__dpf_cmp order (entries that compare equal are equal):
 * insertion sort of runs of 16, then merges through f->tmp. */
static void sort_entries(pp__dp_front *f, fent *e, int n) {
  enum { RUN = 16 };
  for (int lo = 0; lo < n; lo += RUN) {
    const int hi = lo + RUN < n ? lo + RUN : n;
    for (int i = lo + 1; i < hi; i++) {
      const fent x = e[i];
      int j = i;
      for (; j > lo && fless(&x, &e[j - 1]); j--) e[j] = e[j - 1];
      e[j] = x;
    }
  }
  if (n <= RUN) return;
  pp__dpf_grow(&f->tmp, &f->tmp_cap, n);
  fent *src = e, *dst = f->tmp;
  for (int w = RUN; w < n; w *= 2) {
    for (int lo = 0; lo < n; lo += 2 * w) {
      const int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      merge(src + lo, mid - lo, src + mid, hi - mid, dst + lo);
    }
    fent *x = src;
    src = dst;
    dst = x;
  }
  if (src != e) memcpy(e, src, sizeof(fent) * (size_t)n);
}

/* The sweep of pp__dpf_prune over the entries src[n], already sorted: the
 * ones kept go to dst in order (dst may be src); returns their count. */
static int sweep(pp__dp_front *f, const fent *src, int n, fent *dst);

int pp__dpf_prune(pp__dp_front *f, fent *e, int n) {
  sort_entries(f, e, n);
  return sweep(f, e, n, e);
}

static int sweep(pp__dp_front *f, const fent *src, int n, fent *dst) {
  pp__dpf_grow(&f->front, &f->front_cap, n + 1);
  fent *fr = f->front; /* A ascending, H strictly descending */
  int out = 0, fn = 0, cls = INT_MIN, s = INT_MIN;
  for (int i = 0; i < n; i++) {
    const fent x = src[i];
    if (x.H == INFINITY) continue;
    if (x.cls != cls || (f->v > 1 && x.s != s)) { /* with virtual stages s (chunks) must be equal */
      fn = 0;
      cls = x.cls;
      s = x.s;
    }
    int lo = 0, hi = fn; /* pos = the number of front points with A <= x.A */
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (fr[mid].A <= x.A)
        lo = mid + 1;
      else
        hi = mid;
    }
    const int pos = lo;
    if (pos > 0 && fr[pos - 1].H <= x.H) continue;
    /* (the front's A are distinct: an entry with x's A comes just before pos) */
    fn = pp__dpf_front_put(fr, fn, pos > 0 && fr[pos - 1].A == x.A ? pos - 1 : pos, x);
    dst[out++] = x;
  }
  return out;
}

/* Sorts and prunes v's entries: sorts those after its sorted, pruned
 * prefix and merges (the same order as sorting them all). */
static void vec_prune(pp__dp_front *f, fvec *v) {
  const int p = v->sorted, m = v->n - p;
  sort_entries(f, v->e + p, m);
  if (p > 0 && m > 0) {
    pp__dpf_grow(&f->tmp, &f->tmp_cap, v->n);
    merge(v->e, p, v->e + p, m, f->tmp);
    memcpy(v->e, f->tmp, sizeof(fent) * (size_t)v->n);
  }
  v->n = sweep(f, v->e, v->n, v->e);
  v->sorted = v->n;
}

void pp__dpf_push(pp__dp_front *f, fvec *v, fent x) {
  if (v->n == v->cap) {
    if (v->cap >= 64) vec_prune(f, v);
    if (v->n >= v->cap / 2) pp__dpf_grow(&v->e, &v->cap, v->cap < 64 ? 64 : 2 * v->cap);
  }
  v->e[v->n++] = x;
}

/* Decodes row r into buf (sentinel dropped); returns the count. */
static int decode_row(pp__dp_front *f, const pp_stairs *t, int r, fent **buf, int *cap) {
  const int n = pp__dpf_row_entries(f, t, r);
  pp__dpf_grow(buf, cap, n + 1);
  int m = 0;
  for (int i = 0; i < n; i++) {
    fent e = pp__dpf_entry(f, t, r, i);
    if (e.H != INFINITY) (*buf)[m++] = e;
  }
  return m;
}

/* The entries of row[n] (sorted) that before[nb] (sorted) lacks, in order,
 * into out; returns their count. */
static int fresh_of(const fent *row, int n, const fent *before, int nb, fent *out) {
  int m = 0, q = 0;
  for (int i = 0; i < n; i++) {
    while (q < nb && fless(&before[q], &row[i])) q++;
    if (q < nb && pp__dpf_cmp(&before[q], &row[i]) == 0) continue;
    out[m++] = row[i];
  }
  return m;
}

/* w becomes the whole row of w and the sorted, pruned x[nx] (their union
 * pruned: the same sweep over the same order as sorting it); the entries
 * it has that it had not go to added (room for w->n + nx entries; NULL:
 * not wanted), and their count is returned. */
static int whole_merge(pp__dp_front *f, pp__fwhole_row *w, const fent *x, int nx, fent *added) {
  pp__dpf_grow(&f->tmp, &f->tmp_cap, w->n + nx + 1);
  merge(w->e, w->n, x, nx, f->tmp);
  pp__dpf_grow(&w->spare, &w->spare_cap, w->n + nx + 1);
  const int m = sweep(f, f->tmp, w->n + nx, w->spare),
            a = added ? fresh_of(w->spare, m, w->e, w->n, added) : 0;
  fent *e = w->e;
  const int cap = w->cap;
  w->e = w->spare;
  w->cap = w->spare_cap;
  w->spare = e;
  w->spare_cap = cap;
  w->n = m;
  return a;
}

static void whole_free(pp__fwhole_row *w) {
  free(w->e);
  free(w->spare);
}

/* Appends rows to a staircase being built (rows[k] = e[n]), skipping a row
 * equal to the previous one (pp__fbuild, dp_front.h). */
typedef pp__fbuild fbuild;

/* A builder with no row, with the buffers f kept (none to begin with). */
static fbuild fb_begin(pp__dp_front *f) {
  fbuild b = f->spare;
  f->spare = (fbuild){0};
  b.n_rows = b.n = 0;
  return b;
}

/* Room for a row of up to n entries after b's rows: where to write it
 * before fb_add (the address moves b->e). */
static fent *fb_room(fbuild *b, int n) {
  if (b->n_rows + 1 >= b->cap_rows) {
    b->cap_rows = b->cap_rows ? 2 * b->cap_rows : 64;
    b->row_k = pp_xrealloc(b->row_k, sizeof(int) * (size_t)b->cap_rows);
    b->row_start = pp_xrealloc(b->row_start, sizeof(int) * (size_t)b->cap_rows);
  }
  pp__dpf_grow(&b->e, &b->cap, b->n + n + 1);
  return b->e + b->n;
}

/* Adds the row of n entries written at fb_room's address as row k, unless
 * it equals the row before. */
static void fb_add(fbuild *b, int k, int n) {
  if (b->n_rows > 0) {
    const int st = b->row_start[b->n_rows - 1];
    if (b->n - st == n && memcmp(b->e + st, b->e + b->n, sizeof(fent) * (size_t)n) == 0) return;
  }
  b->row_k[b->n_rows] = k;
  b->row_start[b->n_rows++] = b->n;
  b->n += n;
}

/* Adds e[n] as row k (e not within b). */
static void fb_row(fbuild *b, int k, const fent *e, int n) {
  fent *at = fb_room(b, n);
  if (n > 0) memcpy(at, e, sizeof(fent) * (size_t)n);
  fb_add(b, k, n);
}

/* The staircase of the rows built (consumes b; f keeps its buffers). */
static pp_stairs *fb_finish(pp__dp_front *f, fbuild *b, int k_first, int k_last) {
  int slots = 0;
  for (int r = 0; r < b->n_rows; r++) {
    const int n = (r + 1 < b->n_rows ? b->row_start[r + 1] : b->n) - b->row_start[r];
    slots += f->E * (n > 0 ? n : 1);
  }
  pp_stairs *t = pp_stairs_new(k_first, k_last, b->n_rows, slots);
  int x = 0;
  for (int r = 0; r < b->n_rows; r++) {
    const int a = b->row_start[r], n = (r + 1 < b->n_rows ? b->row_start[r + 1] : b->n) - a;
    t->row_k[r] = b->row_k[r];
    t->row_start[r] = x;
    static const fent sentinel = {-1, 0, INFINITY, INFINITY};
    for (int i = 0; i < (n > 0 ? n : 1); i++) {
      const fent *e = n > 0 ? &b->e[a + i] : &sentinel;
      for (int q = 0; q < f->E; q++) t->s[x + q] = e->s;
      t->v[x] = e->A;
      t->v[x + 1] = e->H;
      if (f->E > 2) t->v[x + 2] = e->cls;
      x += f->E;
    }
  }
  t->row_start[b->n_rows] = x;
  free(f->spare.row_k);
  free(f->spare.row_start);
  free(f->spare.e);
  f->spare = *b;
  return t;
}

pp_stairs *pp__dpf_restrict(const pp_dp *dp, const pp_stairs *t, int k_last, int S) {
  pp__dp_front *f = dp->front;
  fbuild b = fb_begin(f);
  fent *buf = NULL;
  int cap = 0;
  for (int r = 0; r < t->n_rows && t->row_k[r] <= k_last; r++) {
    const int n = decode_row(f, t, r, &buf, &cap);
    int m = 0;
    for (int i = 0; i < n; i++)
      if (f->v > 1 ? pp__dpv_sum_d(dp, &buf[i]) <= S : buf[i].s <= S) buf[m++] = buf[i];
    if (r > 0 && m == 0) continue; /* a row that adds nothing (or no chunk lands) is no row */
    fb_row(&b, t->row_k[r], buf, m);
  }
  free(buf);
  return fb_finish(f, &b, t->k_first, k_last);
}

pp_stairs *pp__dpf_zero(const pp_dp *dp) {
  fbuild b = fb_begin(dp->front);
  const fent z = {-1, 0, 0.0, 0.0};
  fb_row(&b, 0, &z, 1);
  pp_stairs *t = fb_finish(dp->front, &b, 0, dp->K);
  pp__dpf_index(dp, t);
  return t;
}

void pp__dpf_index(const pp_dp *dp, pp_stairs *t) {
  const pp__dp_front *f = dp->front;
  free(t->fresh_start);
  free(t->fresh);
  t->fresh_start = pp_xmalloc(sizeof(int) * (size_t)(t->n_rows + 1));
  t->fresh = pp_xmalloc(sizeof(int) * (size_t)(t->row_start[t->n_rows] / f->E + 1));
  int x = 0;
  for (int r = 0; r < t->n_rows; r++) {
    t->fresh_start[r] = x;
    /* a row holds only what its budget adds (dp_front.c, dp_vstage.c): all are new */
    for (int i = 0, n = pp__dpf_row_entries(f, t, r); i < n; i++) t->fresh[x++] = i;
  }
  t->fresh_start[t->n_rows] = x;
}

void pp__dpf_build_row(pp_dp *dp, pp__fbuild *b, int k, int k0) {
  pp__dp_front *f = dp->front;
  fvec *v = &f->cand[k - k0];
  if (v->n == 0 && k > k0) return; /* the same row as k - 1 */
  vec_prune(f, v);
  if (f->v > 1) { /* the row holds its own budget's entries only (dp_vstage.c) */
    fb_row(b, k, v->e, v->n);
    return;
  }
  /* the row stores the new candidates, sorted and pruned, that no entry of
   * the rows before dominates (so none of the whole row before: see
   * dp_front_dom.c); what the sweep of their merge with the whole row would
   * add to it */
  if (b->n_rows == 0) pp__fidx_clear(f->built);
  fent *row = fb_room(b, v->n);
  int added = 0;
  for (int i = 0; i < v->n; i++)
    if (!pp__fidx_covers(f->built, &v->e[i])) row[added++] = v->e[i];
  for (int i = 0; i < added; i++) pp__fidx_add(f->built, &row[i]);
  if (added > 0 || b->n_rows == 0) fb_add(b, k, added);
}

void pp__dpf_build_begin(pp_dp *dp, pp__fbuild *b) { *b = fb_begin(dp->front); }

pp_stairs *pp__dpf_build_finish(pp_dp *dp, pp__fbuild *b, int k0, int k1) {
  return fb_finish(dp->front, b, k0, k1);
}

/* The rows k0..k1 from the candidates landing at each budget, each row
 * with the previous one (the prefix over k). */
pp_stairs *pp__dpf_build_rows(pp_dp *dp, int k0, int k1) {
  fbuild b = fb_begin(dp->front);
  for (int k = k0; k <= k1; k++) pp__dpf_build_row(dp, &b, k, k0);
  return fb_finish(dp->front, &b, k0, k1);
}

pp_stairs *pp__dpf_join(const pp_dp *dp, pp_stairs *const *parts, int n_parts) {
  pp__dp_front *f = dp->front;
  fbuild b = fb_begin(f);
  if (f->v > 1) { /* rows of their own budgets' entries: the parts' rows in turn, a later part's
                   * empty first row (no entry lands at its first budget) left out */
    for (int p = 0; p < n_parts; p++)
      for (int r = 0; r < parts[p]->n_rows; r++) {
        const int n = decode_row(f, parts[p], r, &f->row_a, &f->row_cap);
        if (n > 0 || (p == 0 && r == 0)) fb_row(&b, parts[p]->row_k[r], f->row_a, n);
      }
    return fb_finish(f, &b, parts[0]->k_first, parts[n_parts - 1]->k_last);
  }
  /* Each row stores what it adds to the whole row before it.  The whole
   * row of the parts joined so far is kept (whole); a later part's rows
   * make its own whole row (own), merged into the joined one, until the
   * merge keeps none of the joined one (the part's own whole row then is
   * the joined one, as its later rows dominate it: they are taken as they
   * are). */
  pp__fwhole_row whole = {0}, own = {0};
  for (int p = 0; p < n_parts; p++) {
    const pp_stairs *t = parts[p];
    int absorbed = p == 0;
    own.n = 0;
    for (int r = 0; r < t->n_rows; r++) {
      const int n = decode_row(f, t, r, &f->row_a, &f->row_cap);
      if (!absorbed) {
        whole_merge(f, &own, f->row_a, n, NULL);
        const int added = whole_merge(f, &whole, own.e, own.n, fb_room(&b, whole.n + own.n));
        absorbed = whole.n == own.n && memcmp(whole.e, own.e, sizeof(fent) * (size_t)own.n) == 0;
        if (added > 0 || b.n_rows == 0) fb_add(&b, t->row_k[r], added);
        continue;
      }
      if (n > 0 || b.n_rows == 0) fb_row(&b, t->row_k[r], f->row_a, n);
      if (p + 1 < n_parts) whole_merge(f, &whole, f->row_a, n, NULL); /* for the next part */
    }
  }
  whole_free(&whole);
  whole_free(&own);
  return fb_finish(f, &b, parts[0]->k_first, parts[n_parts - 1]->k_last);
}

int pp__dpf_rows_add(const pp_dp *dp) { return dp->front->v == 1; }

pp_stairs *pp__dpf_tail(const pp_dp *dp, const pp_stairs *t) {
  pp__dp_front *f = dp->front;
  fbuild b = fb_begin(f);
  const int n = pp__dpf_whole_row(f, t, t->n_rows - 1, &f->row_a, &f->row_cap);
  fb_row(&b, t->k_last, f->row_a, n);
  return fb_finish(f, &b, t->k_last, t->k_last);
}

/* NULL if every row of the v = 1 table t after the first holds entries,
 * each of which the whole row before it lacks and keeps when merged with
 * it (what pp__dpf_build_row stores), else why not (a static string).
 * The rows are sorted and pruned (checked before), so that holds if and
 * only if no entry of a row is dominated by (or equals) an entry of the
 * whole row before it, that is of any row before it: an entry the whole
 * row lacks is dominated by one it holds.  Asked of the entries of the
 * rows before (dp_front_dom.c) rather than by merging every row into the
 * whole row. */
static const char *rows_not_added(pp__dp_front *f, const pp_stairs *t, int S) {
  pp__fidx *d = pp__fidx_new(pp__dpf_classes(f), S);
  const char *w = NULL;
  for (int r = 0; r < t->n_rows && !w; r++) {
    const int n = decode_row(f, t, r, &f->row_a, &f->row_cap);
    if (r > 0 && n == 0) w = "a row after the first adds no entry";
    for (int i = 0; i < n && !w; i++)
      if (pp__fidx_covers(d, &f->row_a[i]))
        w = "a row repeats or loses entries of the rows before it (older versions of piper wrote every row "
            "whole: plan again)";
    for (int i = 0; i < n && !w; i++) pp__fidx_add(d, &f->row_a[i]);
  }
  pp__fidx_free(d);
  return w;
}

int pp__dpf_valid(const pp_dp *dp, int id, const pp_stairs *t, const char **why) {
  pp__dp_front *f = dp->front;
  const char *w = NULL;
  const int s_top = f->v > 1 ? dp->g->n_nodes : dp->S; /* with virtual stages s counts chunks */
  /* classes: ti nd + di, with v chunks ((p - 1) nt + ti) nd + di for p v <= n; -1 the empty one */
  const double n_cls = (double)f->nt * f->nd * (f->v > 1 ? dp->g->n_nodes / f->v : 1);
  if (t->k_first != 0 || t->k_last != dp->K || t->n_rows < 1 || t->n_rows > dp->K + 1 || t->row_k[0] != 0 ||
      t->row_start[0] != 0)
    w = "its rows do not cover the budgets 0..K";
  for (int r = 0; !w && r < t->n_rows; r++) {
    const int a = t->row_start[r], b = t->row_start[r + 1];
    if (r > 0 && (t->row_k[r] <= t->row_k[r - 1] || t->row_k[r] > dp->K))
      w = "its rows are not at rising budgets k within 0..K";
    else if (b <= a || (b - a) % f->E != 0)
      w = "a row has no entry or a partial one";
    for (int x = a; !w && x < b; x += f->E) {
      for (int q = 0; q < f->E && !w; q++)
        if (t->s[x + q] != t->s[x] || t->s[x] < 0 || t->s[x] > s_top || isnan(t->v[x + q]))
          w = "an entry has s outside 0..S or a NaN";
      if (!w && f->E > 2 && !(t->v[x + 2] >= -1 && t->v[x + 2] < n_cls && t->v[x + 2] == floor(t->v[x + 2])))
        w = "an entry's class is not one of the problem's (t, d) or (t, d, p)";
      if (!w && x > a) {
        fent p = pp__dpf_entry(f, t, r, (x - a) / f->E - 1), e = pp__dpf_entry(f, t, r, (x - a) / f->E);
        if (pp__dpf_cmp(&p, &e) >= 0) w = "a row's entries are not in order";
      }
    }
    if (!w) { /* pruning a row must keep it */
      const int n = decode_row(f, t, r, &f->row_a, &f->row_cap), m = pp__dpf_prune(f, f->row_a, n);
      if (m != n) w = "a row holds dominated entries";
    }
  }
  if (!w && id == 0 &&
      (t->n_rows != 1 || pp__dpf_row_entries(f, t, 0) != 1 || pp__dpf_entry(f, t, 0, 0).H != 0))
    w = "the empty downset's table is not zero";
  if (!w && id != 0 && f->v > 1) w = pp__dpv_rows_wrong(dp, id, t);
  if (!w && id != 0 && f->v == 1) w = rows_not_added(f, t, dp->S);
  if (why) *why = w;
  return w == NULL;
}
