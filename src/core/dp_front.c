/*
 * dp_front.c - the DP for the synchronous schedules (1f1b, gpipe) and for
 * uniform plans: Pareto rows instead of one max-load value per (k, s).
 *
 * Objective (README, "Schedules"; include/piper/check.h).  Per sample,
 *     F = sum_i a_i + max_i g_i,   a_i = d_i (l_i - r_i) / N,   g_i = l_i - a_i,
 * with l_i the stage's load per sample and r_i its gradient-sync term: F is
 * the batch time sum_i t_i + max_i [(m_i - 1) t_i + sync_i] divided by N
 * (t_i = d_i (l_i - r_i) one replica's microbatch time, m_i = N / d_i,
 * sync_i = N r_i), which is (m + p - 1) t + sync for p equal stages
 * (Narayanan et al. 2021, Sec. 2.2; Alpa, Zheng et al. 2022, Sec. 5.2, Eq. 2).
 *
 * A partial plan (the stages of a downset J: the tail of the pipeline) is
 * summarised by (s, A, H): its sum of d, A = its sum of a, and H = its own F.
 * Putting a stage (l, a) in front gives
 *     A' = A + a,   H' = max(H + a, A + l).
 * For every completion, (A1, H1) is at least as good as (A2, H2) iff A1 <= A2
 * and H1 <= H2 (a later g: max(H1 - A1, g) + A1 <= max(H2 - A2, g) + A2 for
 * all g).  So each table row (I, k) keeps the entries (s, A, H) of budget
 * <= k that no other such entry dominates in all three: the max and the sum
 * are kept as a Pareto set per table entry instead of enumerating bounds on
 * the max as Alpa does; it is exact and runs over the same downsets, pairs
 * and budgets as the 2bw tables.  The stage's TMPCs are the knapsack's
 * (least load l); when a node's TMPCs carry the same parameter bytes (r
 * fixed) that choice minimises a and g together.
 *
 * --uniform: an entry also carries the class (t, d) of its stages; entries of
 * different classes never dominate each other and a stage extends only the
 * entries of its class (the empty downset's entry extends to every class).
 * 2bw with --uniform: a = 0, so A = 0 and H = max l (Piper's objective).
 *
 * Storage: a pp_stairs whose rows list their entries in (class, s, A, H)
 * order, E slots per entry (2, or 3 with classes): s[E i + x] = s, v[E i] = A,
 * v[E i + 1] = H, v[E i + 2] = class.  A row with no entry holds the sentinel
 * (s 0, A inf, H inf).  fresh lists (in entries) what a row adds over the
 * previous one; only those are extended at a later budget, as in dp.c.
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

/* Sorts e[n] and keeps, in order, the entries no other one dominates
 * (same class, s, A, H all <=; of equal entries the first).  Drops the
 * sentinel.  Returns the count kept. */
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

/* The sweep of pp__dpf_prune over entries already sorted. */
static int sweep(pp__dp_front *f, fent *e, int n);

int pp__dpf_prune(pp__dp_front *f, fent *e, int n) {
  sort_entries(f, e, n);
  return sweep(f, e, n);
}

static int sweep(pp__dp_front *f, fent *e, int n) {
  pp__dpf_grow(&f->front, &f->front_cap, n + 1);
  fent *fr = f->front; /* A ascending, H strictly descending */
  int out = 0, fn = 0, cls = INT_MIN, s = INT_MIN;
  for (int i = 0; i < n; i++) {
    const fent x = e[i];
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
    int pos = lo;
    if (pos > 0 && fr[pos - 1].H <= x.H) continue;
    int a = pos > 0 && fr[pos - 1].A == x.A ? pos - 1 : pos, b = pos;
    while (b < fn && fr[b].H >= x.H) b++;
    memmove(fr + a + 1, fr + b, sizeof(fent) * (size_t)(fn - b));
    fr[a] = x;
    fn += 1 - (b - a);
    e[out++] = x;
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
  v->n = sweep(f, v->e, v->n);
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

/* Appends rows to a staircase being built (rows[k] = e[n]), skipping a row
 * equal to the previous one. */
typedef struct fbuild {
  int *row_k, *row_start, n_rows, cap_rows;
  fent *e;
  int n, cap;
} fbuild;

static void fb_row(fbuild *b, int k, const fent *e, int n) {
  if (b->n_rows > 0) {
    const int st = b->row_start[b->n_rows - 1];
    if (b->n - st == n && memcmp(b->e + st, e, sizeof(fent) * (size_t)n) == 0) return;
  }
  if (b->n_rows + 1 >= b->cap_rows) {
    b->cap_rows = b->cap_rows ? 2 * b->cap_rows : 64;
    b->row_k = pp_xrealloc(b->row_k, sizeof(int) * (size_t)b->cap_rows);
    b->row_start = pp_xrealloc(b->row_start, sizeof(int) * (size_t)b->cap_rows);
  }
  pp__dpf_grow(&b->e, &b->cap, b->n + n + 1);
  if (n > 0) memcpy(b->e + b->n, e, sizeof(fent) * (size_t)n);
  b->row_k[b->n_rows] = k;
  b->row_start[b->n_rows++] = b->n;
  b->n += n;
}

/* The staircase of the rows built (consumes b). */
static pp_stairs *fb_finish(const pp__dp_front *f, fbuild *b, int k_first, int k_last) {
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
  free(b->row_k);
  free(b->row_start);
  free(b->e);
  return t;
}

pp_stairs *pp__dpf_restrict(const pp_dp *dp, const pp_stairs *t, int k_last, int S) {
  pp__dp_front *f = dp->front; /* decode_row only reads f */
  fbuild b = {0};
  fent *buf = NULL;
  int cap = 0;
  for (int r = 0; r < t->n_rows && t->row_k[r] <= k_last; r++) {
    const int n = decode_row(f, t, r, &buf, &cap);
    int m = 0;
    for (int i = 0; i < n; i++)
      if (f->v > 1 ? pp__dpv_sum_d(dp, &buf[i]) <= S : buf[i].s <= S) buf[m++] = buf[i];
    fb_row(&b, t->row_k[r], buf, m);
  }
  free(buf);
  return fb_finish(f, &b, t->k_first, k_last);
}

pp__dp_front *pp__dpf_new(pp_dp *dp) {
  const pp_problem *p = dp->p;
  if (p->schedule == PP_SCHEDULE_2BW && !p->uniform) return NULL;
  pp__dp_front *f = pp_xcalloc(1, sizeof *f);
  f->uniform = p->uniform != 0;
  f->E = f->uniform ? 3 : 2;
  f->gpipe = p->schedule == PP_SCHEDULE_GPIPE;
  f->a0 = p->schedule == PP_SCHEDULE_2BW;
  f->v = pp_problem_chunks(p);
  f->ev = dp->ev;
  if (f->v > 1) { /* each of a device's v chunks within M / v (README, "Virtual stages") */
    f->qv = *p;
    f->qv.memory = p->memory / f->v;
    f->ev = pp_stage_eval_new(dp->g, &f->qv);
  }
  f->nt = pp_stage_n_degrees(f->ev, &f->tv);
  f->nd = pp_stage_n_dp(f->ev, &f->dv);
  const pp_graph *g = dp->g;
  f->node_p = pp_xmalloc(sizeof(double) * (size_t)(g->n_nodes * f->nt + 1));
  f->stage_p = pp_xmalloc(sizeof(double) * (size_t)(f->nt + 1));
  for (int v = 0; v < g->n_nodes; v++)
    for (int ti = 0; ti < f->nt; ti++) {
      const pp_tmpc_list *l = pp_graph_tmpcs(g, v, f->tv[ti]);
      double P = 0.0;
      int seen = 0;
      for (int x = 0; l && x < l->count; x++) {
        const pp_tmpc *m = &l->tmpcs[x];
        if (p->no_recompute && m->is_recompute) continue;
        if (seen && m->parameter_size != P) P = NAN;
        if (!seen) P = m->parameter_size;
        seen = 1;
      }
      f->node_p[v * f->nt + ti] = P;
    }
  return f;
}

void pp__dpf_free(pp__dp_front *f) {
  if (!f) return;
  if (f->v > 1) pp_stage_eval_free(f->ev);
  for (int i = 0; i < f->cand_n; i++) free(f->cand[i].e);
  free(f->cand);
  free(f->node_p);
  free(f->stage_p);
  free(f->front);
  free(f->row_a);
  free(f->row_b);
  free(f->tmp);
  free(f);
}

pp_stairs *pp__dpf_zero(const pp_dp *dp) {
  fbuild b = {0};
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
    const int n = pp__dpf_row_entries(f, t, r), pn = r > 0 ? pp__dpf_row_entries(f, t, r - 1) : 0;
    int q = 0;
    for (int i = 0; i < n; i++) {
      const fent e = pp__dpf_entry(f, t, r, i);
      while (q < pn) {
        fent o = pp__dpf_entry(f, t, r - 1, q);
        if (pp__dpf_cmp(&o, &e) >= 0) break;
        q++;
      }
      fent o;
      if (q < pn && (o = pp__dpf_entry(f, t, r - 1, q), pp__dpf_cmp(&o, &e) == 0)) continue;
      t->fresh[x++] = i;
    }
  }
  t->fresh_start[t->n_rows] = x;
}

/* The current stage's parameter bytes per ti (NaN where a node's TMPCs
 * differ). */
void pp__dpf_set_stage_p(pp_dp *dp) {
  pp__dp_front *f = dp->front;
  const int *nodes;
  const int m = pp_stage_nodes(f->ev, &nodes);
  for (int ti = 0; ti < f->nt; ti++) {
    double P = 0.0;
    for (int i = 0; i < m; i++) P += f->node_p[nodes[i] * f->nt + ti];
    f->stage_p[ti] = P;
  }
}

/* a = d (l - r) / N for the current stage at (ti, di, y) with load l; r
 * from the TMPCs' parameter bytes (the knapsack's choice where they differ). */
double pp__dpf_stage_a(pp_dp *dp, int ti, int di, int y, double l) {
  const pp__dp_front *f = dp->front;
  if (f->a0) return 0.0;
  const int d = f->dv[di];
  const double N = dp->p->microbatches;
  double P = f->stage_p[ti];
  if (isnan(P)) {
    const int *nodes;
    const int m = pp_stage_nodes(f->ev, &nodes);
    pp_stage_choose(f->ev, ti, di, y, dp->choice);
    P = 0.0;
    for (int i = 0; i < m; i++)
      P += pp_graph_tmpcs(dp->g, nodes[i], f->tv[ti])->tmpcs[dp->choice[i]].parameter_size;
  }
  const double r = 4.0 * (d - 1) * P / d / N / dp->p->bandwidth * pp_stage_resync_factor(f->ev, ti, di);
  return d * (l - r) / N;
}

static inline int y_of(const pp_dp *dp, int x, int d) {
  return dp->front->gpipe ? dp->p->microbatches / d : x / d + (x % d != 0) + 1;
}

/* Extends the entries of row r of tj (all, or only the fresh ones) by the
 * current stage at (ti, di) into the candidates of budget k. */
static void extend_row(pp_dp *dp, int j, const pp_stairs *tj, int r, int only_fresh, int ti, int di,
                       fvec *out) {
  pp__dp_front *f = dp->front;
  const int d = f->dv[di], S = dp->S, cls = f->uniform ? ti * f->nd + di : 0;
  int len;
  const double *row = pp_stage_cost_row(dp->ev, ti, di, &len);
  const int n = only_fresh ? tj->fresh_start[r + 1] - tj->fresh_start[r] : pp__dpf_row_entries(f, tj, r);
  const int *fresh = tj->fresh + tj->fresh_start[r];
  /* r of the stage when it does not depend on the TMPC choice (stage_a's
   * arithmetic, once per call) */
  const double N = dp->p->microbatches, P = f->stage_p[ti];
  const double rr = f->a0 || isnan(P) ? NAN
                                      : 4.0 * (d - 1) * P / d / N / dp->p->bandwidth *
                                            pp_stage_resync_factor(f->ev, ti, di);
  /* Within one (class, s) the row's entries rise in A and fall in H.  Once
   * an entry's extension is bound by the stage (A + l >= H + a), every
   * later one of that (class, s) extends to a candidate with A' and H' no
   * smaller (H' >= A + l rises with A), which that one dominates: the cut
   * skips them (the crossing the 2bw kernel binary-searches). */
  int cut_cls = INT_MIN, cut_s = -1;
  for (int q = 0; q < n; q++) {
    const fent e = pp__dpf_entry(f, tj, r, only_fresh ? fresh[q] : q);
    if (e.H == INFINITY || e.s + d > S || (f->uniform && j != 0 && e.cls != cls)) continue;
    if (e.s == cut_s && e.cls == cut_cls) continue;
    const int y = y_of(dp, e.s, d);
    const double l = y < len && !isnan(row[y]) ? row[y] : pp_stage_cost(dp->ev, ti, di, y);
    if (l == INFINITY) continue;
    const double a = f->a0 ? 0.0 : !isnan(rr) ? d * (l - rr) / N : pp__dpf_stage_a(dp, ti, di, y, l);
    const double h1 = e.H + a, h2 = e.A + l;
    pp__dpf_push(f, out, (fent){cls, e.s + d, e.A + a, h1 > h2 ? h1 : h2});
    if (h2 >= h1) {
      cut_cls = e.cls;
      cut_s = e.s;
    }
  }
}

pp_stairs *pp__dpf_rows(pp_dp *dp, int id, int k0, int k1) {
  pp__dp_front *f = dp->front;
  const pp_downsets *ds = dp->ds;
  const int nk = k1 - k0 + 1;
  if (nk > f->cand_n) {
    f->cand = pp_xrealloc(f->cand, sizeof(fvec) * (size_t)nk);
    memset(f->cand + f->cand_n, 0, sizeof(fvec) * (size_t)(nk - f->cand_n));
    f->cand_n = nk;
  }
  for (int i = 0; i < nk; i++) f->cand[i].n = f->cand[i].sorted = 0;
  if (f->v > 1) {
    pp__dpv_rows(dp, id, k0, k1);
    return pp__dpf_build_rows(dp, k0, k1);
  }
  const uint64_t *bi = pp_downset_bits(ds, id);
  const int end = ds->layer_start[ds->size[id]];
  for (int j = 0; j < end; j++) {
    const uint64_t *bj = pp_downset_bits(ds, j);
    if (!pp_bits_subset(bj, bi, ds->words)) continue;
    for (int w = 0; w < ds->words; w++) dp->cbits[w] = bi[w] & ~bj[w];
    pp_stage_set(dp->ev, dp->cbits);
    pp__dpf_set_stage_p(dp);
    const pp_stairs *tj = dp->tab[j];
    for (int ti = 0; ti < f->nt; ti++) {
      if (!pp_stage_supports(dp->ev, ti)) continue;
      for (int di = 0; di < f->nd; di++) {
        const int td = f->tv[ti] * f->dv[di];
        if (td > k1) break;
        for (int r = pp__dp_first_row_from(tj, k0 - td) - 1 < 0 ? 0 : pp__dp_first_row_from(tj, k0 - td) - 1;
             r < tj->n_rows; r++) {
          const int k = pp__dp_landing(tj, r, td, k0, k1);
          if (k > k1) break;
          if (k < 0) continue;
          const int only_fresh = r > 0 && pp__dp_landing(tj, r - 1, td, k0, k1) >= 0;
          extend_row(dp, j, tj, r, only_fresh, ti, di, &f->cand[k - k0]);
        }
      }
    }
  }
  return pp__dpf_build_rows(dp, k0, k1);
}

/* The rows k0..k1 from the candidates landing at each budget, each row
 * with the previous one (the prefix over k). */
pp_stairs *pp__dpf_build_rows(pp_dp *dp, int k0, int k1) {
  pp__dp_front *f = dp->front;
  fbuild b = {0};
  const fent *prev = NULL;
  int prev_n = 0;
  for (int k = k0; k <= k1; k++) {
    fvec *v = &f->cand[k - k0];
    if (v->n == 0 && k > k0) continue; /* the same row as k - 1 */
    /* the new candidates sorted and pruned, merged with the (sorted) row
     * before: the same sweep over the same order as sorting the union */
    vec_prune(f, v);
    const int n_new = v->n;
    pp__dpf_grow(&f->tmp, &f->tmp_cap, n_new + prev_n + 1);
    merge(prev, prev_n, v->e, n_new, f->tmp);
    pp__dpf_grow(&v->e, &v->cap, n_new + prev_n + 1);
    memcpy(v->e, f->tmp, sizeof(fent) * (size_t)(n_new + prev_n));
    v->n = sweep(f, v->e, n_new + prev_n);
    fb_row(&b, k, v->e, v->n);
    prev = v->e;
    prev_n = v->n;
  }
  return fb_finish(f, &b, k0, k1);
}

pp_stairs *pp__dpf_join(const pp_dp *dp, pp_stairs *const *parts, int n_parts) {
  pp__dp_front *f = dp->front;
  fbuild b = {0};
  for (int p = 0; p < n_parts; p++) {
    const pp_stairs *t = parts[p];
    for (int r = 0; r < t->n_rows; r++) {
      int n = decode_row(f, t, r, &f->row_a, &f->row_cap);
      if (p > 0) { /* with the full row of the budget before: the prefix over the earlier parts */
        const int st = b.row_start[b.n_rows - 1], last = b.n - st;
        pp__dpf_grow(&f->row_a, &f->row_cap, n + last + 1);
        if (last > 0) memcpy(f->row_a + n, b.e + st, sizeof(fent) * (size_t)last);
        n = pp__dpf_prune(f, f->row_a, n + last);
      }
      fb_row(&b, t->row_k[r], f->row_a, n);
    }
  }
  return fb_finish(f, &b, parts[0]->k_first, parts[n_parts - 1]->k_last);
}

double pp__dpf_optimum(const pp_dp *dp, int k, int s_max) {
  const pp__dp_front *f = dp->front;
  const pp_stairs *t = dp->tab[dp->ds->count - 1];
  const int r = pp_stairs_row(t, k), n = pp__dpf_row_entries(f, t, r);
  double best = INFINITY;
  for (int i = 0; i < n; i++) {
    const fent e = pp__dpf_entry(f, t, r, i);
    if (e.H < best && (f->v > 1 ? pp__dpv_complete(dp, &e, s_max) : e.s <= s_max)) best = e.H;
  }
  return best;
}

double pp__dpf_row_slots_max(const pp_dp *dp) {
  const pp__dp_front *f = dp->front;
  if (f->v > 1) return pp__dpv_row_slots_max(dp);
  /* entries per row: per class and s a front of (A, H); 64 per (class, s)
   * is far beyond what the inputs produce */
  return (double)f->E * (dp->S + 1) * 64.0 * (f->uniform ? (double)f->nt * f->nd : 1.0);
}

int pp__dpf_valid(const pp_dp *dp, int id, const pp_stairs *t, const char **why) {
  pp__dp_front *f = dp->front;
  const char *w = NULL;
  const int s_top = f->v > 1 ? dp->g->n_nodes : dp->S; /* with virtual stages s counts chunks */
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
  if (why) *why = w;
  return w == NULL;
}

/* 1 if row r of t holds entry e. */
static int row_has(const pp__dp_front *f, const pp_stairs *t, int r, const fent *e) {
  const int n = pp__dpf_row_entries(f, t, r);
  for (int i = 0; i < n; i++) {
    fent o = pp__dpf_entry(f, t, r, i);
    if (pp__dpf_cmp(&o, e) == 0) return 1;
  }
  return 0;
}

/* Finds the stage in front of entry *e of downset cur at budget k: J, (ti,
 * di) and J's entry that produce *e exactly; fills st and moves *cur, *k, *e
 * to J.  Returns 1 if found. */
static int step_back(pp_dp *dp, int *cur, int *k, fent *e, pp_plan_stage *st) {
  pp__dp_front *f = dp->front;
  const pp_downsets *ds = dp->ds;
  const pp_stairs *tc = dp->tab[*cur];
  int r = pp_stairs_row(tc, *k);
  while (r > 0 && row_has(f, tc, r - 1, e)) r--;
  const int kf = tc->row_k[r];
  const uint64_t *bi = pp_downset_bits(ds, *cur);
  const int end = ds->layer_start[ds->size[*cur]];
  for (int j = 0; j < end; j++) {
    const uint64_t *bj = pp_downset_bits(ds, j);
    if (!pp_bits_subset(bj, bi, ds->words)) continue;
    for (int w = 0; w < ds->words; w++) dp->cbits[w] = bi[w] & ~bj[w];
    pp_stage_set(dp->ev, dp->cbits);
    pp__dpf_set_stage_p(dp);
    const pp_stairs *tj = dp->tab[j];
    for (int ti = 0; ti < f->nt; ti++) {
      if (!pp_stage_supports(dp->ev, ti)) continue;
      for (int di = 0; di < f->nd; di++) {
        const int d = f->dv[di], td = f->tv[ti] * d, cls = f->uniform ? ti * f->nd + di : 0;
        if (td > kf || d > e->s) break;
        if (cls != e->cls) continue;
        const int rj = pp_stairs_row(tj, kf - td), n = pp__dpf_row_entries(f, tj, rj);
        for (int q = 0; q < n; q++) {
          const fent x = pp__dpf_entry(f, tj, rj, q);
          if (x.H == INFINITY || x.s != e->s - d || (f->uniform && j != 0 && x.cls != cls)) continue;
          const int y = y_of(dp, x.s, d);
          const double l = pp_stage_cost(dp->ev, ti, di, y);
          if (l == INFINITY) continue;
          const double a = pp__dpf_stage_a(dp, ti, di, y, l);
          const double h1 = x.H + a, h2 = x.A + l;
          if (x.A + a != e->A || (h1 > h2 ? h1 : h2) != e->H) continue;
          const int *nodes;
          st->n_nodes = pp_stage_nodes(dp->ev, &nodes);
          st->nodes = pp_xmalloc(sizeof(int) * (size_t)st->n_nodes);
          st->tmpc = pp_xmalloc(sizeof(int) * (size_t)st->n_nodes);
          memcpy(st->nodes, nodes, sizeof(int) * (size_t)st->n_nodes);
          pp_stage_choose(dp->ev, ti, di, y, st->tmpc);
          st->d = d;
          st->t = f->tv[ti];
          st->load = l;
          *cur = j;
          *k = kf - td;
          *e = x;
          return 1;
        }
      }
    }
  }
  return 0;
}

pp_status pp__dpf_reconstruct(pp_dp *dp, int k, int s_max, pp_plan **out, pp_error *err) {
  const pp__dp_front *f = dp->front;
  int cur = dp->ds->count - 1;
  const pp_stairs *t = dp->tab[cur];
  const int r = pp_stairs_row(t, k), n = pp__dpf_row_entries(f, t, r);
  fent e = {0, 0, INFINITY, INFINITY};
  for (int i = 0; i < n; i++) {
    fent x = pp__dpf_entry(f, t, r, i);
    if (x.H < e.H && (f->v > 1 ? pp__dpv_complete(dp, &x, s_max) : x.s <= s_max)) e = x;
  }
  pp_plan *plan = pp_plan_new(dp->g->n_nodes);
  plan->n_stages = 0;
  *out = plan;
  if (e.H == INFINITY) return PP_OK;
  while (cur != 0) {
    pp_plan_stage *st = &plan->stages[plan->n_stages];
    if (f->v > 1 ? !pp__dpv_step_back(dp, &cur, &e, st) : !step_back(dp, &cur, &k, &e, st)) {
      pp_plan_free(plan);
      *out = NULL;
      return pp_error_set(err, PP_ERR_INTERNAL,
                          "plan reconstruction found no step at downset %d (k=%d, s=%d)", cur, k, e.s);
    }
    plan->n_stages++;
  }
  plan->feasible = 1;
  return PP_OK;
}

double pp__dpf_bytes_estimate(const pp_graph *g, const pp_problem *p, const pp_downsets *ds) {
  if (p->schedule == PP_SCHEDULE_2BW && !p->uniform) return -1.0;
  /* Entries per table, calibrated on the peak RSS of BERT-large, BERT-32
   * and a generated GPT-76B (README, "Memory"): rows at every budget 0..K,
   * each a Pareto set of about 96 (s, A, H) entries without --uniform and
   * about 1.5 per (t, d) class with --uniform.  With v chunks an entry of
   * class (t, d, p) and chunk count q is in every row from budget p t d on,
   * and a downset of n_I of the n nodes holds only the q that can still
   * make p v chunks (q <= n_I, p v - q <= n - n_I), about 1 entry each.
   * An entry has E = 2 or 3 slots of s (4 bytes) and a value (8), and a
   * fresh index (4). */
  const int K = p->devices, v = pp_problem_chunks(p), E = p->uniform ? 3 : 2, n = g->n_nodes;
  const double entry = 12.0 * E + 4.0;
  double classes = 0.0, total = 0.0;
  int *rows_from = pp_xcalloc((size_t)K + 2, sizeof(int)); /* distinct class budgets >= k */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < g->n_degrees; i++) {
      const int t = g->degrees[i];
      if (!pp_problem_allows_t(p, t)) continue;
      for (int d = 1; d <= p->microbatches && (long long)d * t <= K; d++) {
        if (p->microbatches % d != 0 || !pp_problem_allows_d(p, d)) continue;
        classes += pass == 0;
        for (int P = 1; v > 1 && (long long)P * d * t <= K && P * v <= n; P++) {
          if (pass == 0) {
            rows_from[P * d * t] = 1;
            continue;
          }
          for (int id = 0; id < ds->count; id++) {
            const int nI = ds->size[id], hi = nI < P * v ? nI : P * v;
            const int lo = P * v - (n - nI) > 0 ? P * v - (n - nI) : 0;
            if (hi >= lo) total += (hi - lo + 1.0) * rows_from[P * d * t] * entry;
          }
        }
      }
      if (pass == 0 && i == g->n_degrees - 1)
        for (int k = K; k >= 0; k--) rows_from[k] += rows_from[k + 1];
    }
  if (g->n_degrees == 0) /* not reached for a loaded graph */
    classes = 0.0;
  const double rows = v > 1 ? rows_from[0] + 1.0 : K + 1.0;
  free(rows_from);
  if (v == 1) total = ds->count * rows * (p->uniform ? 1.5 * classes : 96.0) * entry;
  /* row indices, and the candidates of one table (about one table's worth) */
  return total + ds->count * (rows * 8.0 + 128.0) + total / ds->count * (double)sizeof(pp__fent) / entry;
}
