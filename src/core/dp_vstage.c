/*
 * dp_vstage.c - the Pareto-row DP for uniform plans with v >= 2 model
 * chunks per device group (--virtual-stages: Megatron-LM's interleaved 1F1B,
 * Narayanan et al. 2021, Sec. 2.2.2; with gpipe the breadth-first looped
 * schedule, Lamy-Poirier 2023, Sec. 3).
 *
 * A plan is p device groups of t*d devices each and p*v chunks (stages) in
 * pipeline order, chunk c on group c mod p, every chunk with the same (t, d).
 * The model (README, "Virtual stages"; src/core/check.c evaluates it with
 * its own code):
 *   - chunk c keeps y_c microbatches' activations: with 1f1b ceil(W / v),
 *     W = min(v m, 2 (p - j - 1) + (v - 1) p + 1) on group j (Megatron-LM's
 *     warm-up count plus the microbatch in progress), with gpipe m = N / d;
 *   - a device's memory is the sum over its v chunks; the search keeps every
 *     chunk within M / v (its TMPCs are the knapsack's at that limit), so
 *     the sum is within M;
 *   - batch time T = (1/v) sum_c t_c + max_c [(m v - 1) t_c + v sync_c]: the
 *     steady state runs v chunk slots per microbatch on every device, each
 *     as long as the slowest chunk, and the fill and drain take (1/v) of the
 *     chunks' times.  For p*v equal chunks of t / v it is (m + (p - 1) / v) t
 *     plus the sync, Megatron-LM's bubble (p - 1) / (v m).
 * Per sample: F = sum_c a_c / v + max_c (v l_c - a_c), with l_c the chunk's
 * load and a_c = d (l_c - r_c) / N as in dp_front.c.  So an entry is the
 * (A, H) of dp_front.c with the additive part a / v and the term v l - a,
 * plus what the chunk's y needs: the class (t, d, p) and s = the number of
 * chunks placed behind it (chunk index c = p v - 1 - s).  Entries dominate
 * only at equal (class, s).  The devices p t d are known from the class:
 * an entry lands in the row of budget p t d, and no entry of another budget
 * ever dominates it.  So a row holds only the entries that land at its own
 * budget, and the table at budget k is the union of the rows up to k (the
 * prefix over k of the other tables, without its copies: R07's model of
 * ../shared/validation at K = 384 planned in 46 MB instead of 1.81 GB,
 * bench/results-vstage.txt); the rows k0..k1 are
 * computed from the classes with p t d in that range, the k-range split
 * distributes them as for the other tables, and parts join by following
 * one another (dp_front_rows.c).
 */
#include <math.h>
#include <stdlib.h>

#include "dp_front.h"
#include "piper/bitset.h"

/* (t, d, p) of a class: cls = ((p - 1) nt + ti) nd + di. */
static inline int cls_of(const pp__dp_front *f, int P, int ti, int di) {
  return ((P - 1) * f->nt + ti) * f->nd + di;
}
static inline void cls_split(const pp__dp_front *f, int cls, int *P, int *ti, int *di) {
  *di = cls % f->nd;
  *ti = cls / f->nd % f->nt;
  *P = cls / (f->nd * f->nt) + 1;
}

/* Microbatches in flight for the chunk with s chunks behind it in a
 * pipeline of P groups at degree d (the checker's in_flight). */
static int chunk_y(const pp_dp *dp, int P, int s, int d) {
  const pp__dp_front *f = dp->front;
  const int v = f->v, m = dp->p->microbatches / d;
  if (f->gpipe) return m > 0 ? m : 1;
  const int c = P * v - 1 - s, j = c % P;
  long long w = 2LL * (P - j - 1) + (long long)(v - 1) * P + 1;
  if (w > (long long)v * m) w = (long long)v * m;
  return (int)((w + v - 1) / v);
}

/* 1 if an entry with s chunks behind, extended by one chunk at downset I
 * (nI of n nodes), can still become a whole pipeline of P v chunks. */
static inline int completable(int s, int P, int v, int nI, int n) {
  const int left = P * v - s - 1; /* chunks still to place in front */
  return nI == n ? left == 0 : left >= 1 && left <= n - nI;
}

/* Index of the first entry of class cls in row r of t (entries are sorted
 * by class first). */
static int first_of_class(const pp__dp_front *f, const pp_stairs *t, int r, int cls) {
  int lo = 0, hi = pp__dpf_row_entries(f, t, r);
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (pp__dpf_entry(f, t, r, mid).cls < cls)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The entry made by putting the current chunk (load l at y) in front of x. */
static pp__fent extend(pp_dp *dp, int cls, const pp__fent *x, int ti, int di, int y, double l, int *bound) {
  const double v = dp->front->v, a = pp__dpf_stage_a(dp, ti, di, y, l);
  const double alpha = a / v, lam = alpha + (v * l - a);
  const double h1 = x->H + alpha, h2 = x->A + lam;
  *bound = h2 >= h1;
  pp__fent e = {cls, x->s + 1, x->A + alpha, h1 > h2 ? h1 : h2};
  return e;
}

/* The entries of J's table (id j) that the chunk I \ J at class (P, ti, di)
 * extends: [*lo, *hi) of row *r, or the empty downset's one entry. */
static void class_range(const pp_dp *dp, int j, int cls, int P, int td, int *r, int *lo, int *hi) {
  const pp__dp_front *f = dp->front;
  const pp_stairs *tj = dp->tab[j];
  *r = pp_stairs_row(tj, P * td);
  if (j == 0) {
    *lo = 0;
    *hi = 1;
    return;
  }
  if (tj->row_k[*r] != P * td) { /* no entry of J lands at the class's budget */
    *lo = *hi = 0;
    return;
  }
  *lo = first_of_class(f, tj, *r, cls);
  *hi = first_of_class(f, tj, *r, cls + 1);
}

void pp__dpv_rows(pp_dp *dp, int id, int k0, int k1) {
  pp__dp_front *f = dp->front;
  const pp_downsets *ds = dp->ds;
  const int n = dp->g->n_nodes, nI = ds->size[id], v = f->v;
  const uint64_t *bi = pp_downset_bits(ds, id);
  const int end = ds->layer_start[nI];
  for (int j = 0; j < end; j++) {
    const uint64_t *bj = pp_downset_bits(ds, j);
    if (!pp_bits_subset(bj, bi, ds->words)) continue;
    pp__dp_set_stage(dp, f->ev, bi, bj, NULL);
    pp__dpf_set_stage_p(dp);
    const pp_stairs *tj = dp->tab[j];
    for (int ti = 0; ti < f->nt; ti++) {
      if (!pp_stage_supports(f->ev, ti)) continue;
      for (int di = 0; di < f->nd; di++) {
        const int d = f->dv[di], td = f->tv[ti] * d;
        if (td > k1) break;
        for (int P = (k0 + td - 1) / td > 1 ? (k0 + td - 1) / td : 1; P * td <= k1 && P * v <= n; P++) {
          const int cls = cls_of(f, P, ti, di);
          int r, lo, hi;
          class_range(dp, j, cls, P, td, &r, &lo, &hi);
          int cut_s = -1; /* as in dp_front.c: past the crossing A + lambda >= H + alpha of
                           * one s, the later entries of that s extend to dominated ones */
          for (int q = lo; q < hi; q++) {
            const pp__fent x = pp__dpf_entry(f, tj, r, q);
            if (x.H == INFINITY || x.s == cut_s || !completable(x.s, P, v, nI, n)) continue;
            const int y = chunk_y(dp, P, x.s, d);
            const double l = pp_stage_cost(f->ev, ti, di, y);
            if (l == INFINITY) continue;
            int bound;
            pp__dpf_push(f, &f->cand[P * td - k0], extend(dp, cls, &x, ti, di, y, l, &bound));
            if (bound) cut_s = x.s;
          }
        }
      }
    }
  }
}

int pp__dpv_step_back(pp_dp *dp, int *cur, pp__fent *e, pp_plan_stage *st) {
  pp__dp_front *f = dp->front;
  const pp_downsets *ds = dp->ds;
  int P, ti, di;
  cls_split(f, e->cls, &P, &ti, &di);
  const int d = f->dv[di], td = f->tv[ti] * d;
  const uint64_t *bi = pp_downset_bits(ds, *cur);
  const int end = ds->layer_start[ds->size[*cur]];
  for (int j = 0; j < end; j++) {
    const uint64_t *bj = pp_downset_bits(ds, j);
    if (!pp_bits_subset(bj, bi, ds->words) || (j == 0) != (e->s == 1)) continue;
    pp__dp_set_stage(dp, f->ev, bi, bj, NULL);
    pp__dpf_set_stage_p(dp);
    if (!pp_stage_supports(f->ev, ti)) continue;
    int r, lo, hi;
    class_range(dp, j, e->cls, P, td, &r, &lo, &hi);
    for (int q = lo; q < hi; q++) {
      const pp__fent x = pp__dpf_entry(f, dp->tab[j], r, q);
      if (x.H == INFINITY || x.s != e->s - 1) continue;
      const int y = chunk_y(dp, P, x.s, d);
      const double l = pp_stage_cost(f->ev, ti, di, y);
      if (l == INFINITY) continue;
      int bound;
      const pp__fent z = extend(dp, e->cls, &x, ti, di, y, l, &bound);
      if (z.A != e->A || z.H != e->H) continue;
      pp__dp_record_stage(f->ev, ti, di, y, f->tv[ti], d, l, st);
      *cur = j;
      *e = x;
      return 1;
    }
  }
  return 0;
}

int pp__dpv_complete(const pp_dp *dp, const pp__fent *e, int s_max) {
  if (e->cls < 0) return 0;
  int P, ti, di;
  cls_split(dp->front, e->cls, &P, &ti, &di);
  return e->s == P * dp->front->v && (long long)P * dp->front->dv[di] <= s_max;
}

long long pp__dpv_sum_d(const pp_dp *dp, const pp__fent *e) {
  if (e->cls < 0) return 0;
  int P, ti, di;
  cls_split(dp->front, e->cls, &P, &ti, &di);
  return (long long)P * dp->front->dv[di];
}

const char *pp__dpv_rows_wrong(const pp_dp *dp, int id, const pp_stairs *t) {
  const pp__dp_front *f = dp->front;
  const int nodes = dp->g->n_nodes, nI = dp->ds->size[id];
  for (int r = 0; r < t->n_rows; r++) {
    const int n = pp__dpf_row_entries(f, t, r);
    if (r == 0 && (n != 1 || pp__dpf_entry(f, t, 0, 0).H != INFINITY))
      return "its first row holds entries (no chunk lands at budget 0)";
    for (int i = 0; r > 0 && i < n; i++) {
      const pp__fent e = pp__dpf_entry(f, t, r, i);
      int P, ti, di;
      if (e.H == INFINITY || e.cls < 0) return "a row after the first holds no chunk's entry";
      cls_split(f, e.cls, &P, &ti, &di);
      if ((long long)P * f->tv[ti] * f->dv[di] != t->row_k[r])
        return "an entry is not in the row of its budget p t d (older versions of piper wrote every "
               "row whole: plan again)";
      /* what pp__dpv_rows keeps: at least one node per chunk, and made
       * from an entry of s - 1 chunks that could still complete */
      if (e.s < 1 || e.s > nI || !completable(e.s - 1, P, f->v, nI, nodes))
        return "an entry's chunk count s does not fit its downset and its class (t, d, p)";
    }
  }
  return NULL;
}

double pp__dpv_row_slots_max(const pp_dp *dp) {
  const pp__dp_front *f = dp->front;
  /* per class (t, d, p) and chunk count a front of (A, H); 64 per front is
   * far beyond what the inputs produce */
  const double n = dp->g->n_nodes + 1.0;
  return (double)f->E * f->nt * f->nd * n * n * 64.0;
}
