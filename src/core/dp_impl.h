/*
 * dp_impl.h - the DP state shared by dp.c (Piper's max-load tables) and
 * dp_front.c (Pareto rows for the synchronous schedules and uniform plans).
 * Private to src/core.
 */
#ifndef PIPER_DP_IMPL_H
#define PIPER_DP_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "piper/dp.h"
#include "stage.h"

typedef struct pp__dp_front pp__dp_front;
typedef struct pp__dp_small pp__dp_small;
typedef struct pp__dpw_scratch pp__dpw_scratch;
typedef struct pp__dp_dense pp__dp_dense;

/* What bounds every candidate that a table J offers (dp.c, set with each
 * table): no finite value below budget k, none at s below s (on any row:
 * the last row is pointwise smallest), none below a (the last row's last
 * step).  k = INT_MAX if the table holds no finite value. */
typedef struct pp__dp_reach {
  int k, s;
  double a;
} pp__dp_reach;

struct pp_dp {
  const pp_graph *g;
  const pp_problem *p;
  const pp_downsets *ds;
  int K, S;
  pp_stairs **tab; /* [count], NULL until computed */
  double *work;    /* [count] estimated work */
  pp_stage_eval *ev;
  uint64_t *cbits;  /* [words] scratch */
  double *dense;    /* scratch rows */
  size_t dense_cap; /* doubles */
  int *choice;      /* [n_nodes] scratch */
  int *yof;         /* [nd * (S + 1)]: ceil(f / d) + 1 per (d index, f), or NULL if large */
  /* Tables are copied, each into one block (pp_stairs_flat_write), into an
   * arena of large chunks in the order they are set, or live in memory
   * outside dp (pp_dp_view_table); either way tab[id] = &views[id].  The
   * scan over the subsets J of I then reads memory mostly forward. */
  pp_stairs *views;    /* [count] */
  pp__dp_reach *reach; /* [count], for the 2bw tables */
  char **chunks;
  int n_chunks, cap_chunks;
  size_t chunk_used, chunk_size, chunk_mapped; /* bytes of the newest chunk used, allocated, mapped in */
  double own_bytes;                            /* table blocks written into the arena */
  double held_bytes;                           /* every table block set, own or viewed (pp_dp_check_held) */
  double mem_limit, estimate;                  /* pp_dp_create's limit (0: none) and its estimate */
  long long pairs;                             /* number of (downset, strict sub-downset) pairs */
  pp__dp_front *front; /* Pareto rows (dp_front.c), or NULL for the 2bw max-load tables */
  pp__dp_small *small; /* the small-block kernel's per-downset bounds (dp_small.c), made on first use */
  pp__dp_dense *dk;    /* dp_dense.c's scratch, made on first use */
  int wide;            /* 2bw tables computed by the sweep of dp_wide.c (large K x S) */
  pp__dpw_scratch *ws; /* dp_wide.c's buffers, made on first use and kept from one downset to the next */
  int (*poll)(void *); /* pp_dp_set_poll: nonzero = abandon pp_dp_compute_rows, or NULL */
  void *poll_user;
};

/* The 2bw kernel for small dense blocks (dp_small.c): pp__dp_small_fits says
 * whether rows k0..k1 take it; pp__dp_small_rows computes them exactly as
 * pp_dp_compute_rows does. */
int pp__dp_small_fits(const pp_dp *dp, int k0, int k1);
pp_stairs *pp__dp_small_rows(pp_dp *dp, int id, int k0, int k1);
void pp__dp_small_free(pp__dp_small *sm);
/* Drops what dp_small.c derived from table id (it is being replaced). */
void pp__dp_small_forget(pp__dp_small *sm, int id);

/* The 2bw kernel for dense blocks of other sizes (dp_dense.c): rows k0..k1
 * of downset id, as pp_dp_compute_rows returns them (NULL on a stop). */
pp_stairs *pp__dp_dense_rows(pp_dp *dp, int id, int k0, int k1);
void pp__dp_dense_free(pp__dp_dense *dk);

/* The front kernel (dp_front.c).  pp__dpf_new returns NULL when the problem
 * is the 2bw default without --uniform (dp.c's tables apply). */
pp__dp_front *pp__dpf_new(pp_dp *dp);
void pp__dpf_free(pp__dp_front *f);
pp_stairs *pp__dpf_zero(const pp_dp *dp);
/* Table t of dp cut to budgets <= k_last and entries with s <= S, as
 * pp_dp_restrict needs it (a new table, built like the DP's own rows). */
pp_stairs *pp__dpf_restrict(const pp_dp *dp, const pp_stairs *t, int k_last, int S);
pp_stairs *pp__dpf_rows(pp_dp *dp, int id, int k0, int k1);
pp_stairs *pp__dpf_join(const pp_dp *dp, pp_stairs *const *parts, int n_parts);
/* 1 if dp's tables are Pareto rows that hold only what each budget adds
 * (v = 1: dp_front.c), whose whole rows are unions of rows. */
int pp__dpf_rows_add(const pp_dp *dp);
/* The whole last row of such a table t (the union of its rows pruned) as a
 * one-row table over [k_last, k_last]. */
pp_stairs *pp__dpf_tail(const pp_dp *dp, const pp_stairs *t);
void pp__dpf_index(const pp_dp *dp, pp_stairs *t);
int pp__dpf_valid(const pp_dp *dp, int id, const pp_stairs *t, const char **why);
double pp__dpf_row_slots_max(const pp_dp *dp);
double pp__dpf_optimum(const pp_dp *dp, int k, int s_max);
pp_status pp__dpf_reconstruct(pp_dp *dp, int k, int s_max, pp_plan **out, pp_error *err);
/* Estimated bytes of the Pareto-row tables for (g, p, ds) (see its comment),
 * or -1 for the 2bw default (dp.c's estimate applies). */
double pp__dpf_bytes_estimate(const pp_graph *g, const pp_problem *p, const pp_downsets *ds);

/* The microbatches in flight y = ceil(f / d) + 1 of a stage of degree d
 * with the sum f behind it: yof[f] (dp->yof's row of d) if there, else
 * computed.  For the 2bw kernels (dp_dense.c, dp_small.c, dp_wide.c). */
static inline int pp__dp_y_at(const int *yof, int f, int d) {
  return yof ? yof[f] : f / d + (f % d != 0) + 1;
}

/* Row helpers shared by the 2bw kernel (dp.c) and the Pareto-row kernel (dp_front.c). */
/* The budget in [k0, k1] at which row r of table t is relaxed for a stage
 * of t*d = td devices: the first k' + td over the row's budgets k', clipped
 * to k0; -1 if none falls in [k0, k1] (then k1 < first, or the row ends
 * before k0 - td).  Only the first matters: later ones repeat it and are
 * reached by the prefix minimum in k. */
static inline int pp__dp_landing(const pp_stairs *t, int r, int td, int k0, int k1) {
  int a = t->row_k[r];
  int b = r + 1 < t->n_rows ? t->row_k[r + 1] - 1 : t->k_last;
  int k = a + td > k0 ? a + td : k0;
  if (k > k1 || k - td > b) return k > k1 ? k1 + 1 : -1;
  return k;
}

/* First row whose first budget is >= k (n_rows if none). */
static inline int pp__dp_first_row_from(const pp_stairs *t, int k) {
  int lo = 0, hi = t->n_rows;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (t->row_k[mid] >= k)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* The first row of table t that may land in [k0, k1] for a stage of td
 * devices: the last row starting below k0 - td (or row 0); the rows before
 * it end below k0 - td and never land. */
static inline int pp__dp_first_landing_row(const pp_stairs *t, int td, int k0) {
  const int r = pp__dp_first_row_from(t, k0 - td) - 1;
  return r < 0 ? 0 : r;
}

/* 1 if row r of t is relaxed for its fresh steps only: its predecessor lands
 * in [k0, k1] too (at a budget no larger), so its other steps were proposed
 * there. */
static inline int pp__dp_only_fresh(const pp_stairs *t, int r, int td, int k0, int k1) {
  return r > 0 && pp__dp_landing(t, r - 1, td, k0, k1) >= 0;
}

/* What pp__dp_crossing returns when no step of the row can matter. */
#define PP__DP_NO_CROSSING (-2)

/* The crossing of one row of J's table for a stage of d devices: the row's
 * steps f[n], a[n] propose max(a_j, B) at s = f_j + d, and pred(j) =
 * "f_j + d <= S, a_j > lb and a_j > cost(dp, at, f_j)" (B at that step) holds
 * on a prefix of the steps.  Returns the last step u where it holds (-1 if
 * none).  With only_fresh, only the steps fresh[n_fresh] (ascending indices)
 * are relaxed: the search starts from the first of them, and
 * PP__DP_NO_CROSSING is returned when none can matter (no fresh step, or
 * pred fails at both the first fresh step and the one before it, so that
 * u + 1 is not fresh).  cost is a static inline function of the caller,
 * so the compiler resolves the call. */
static inline int pp__dp_crossing(pp_dp *dp, double (*cost)(pp_dp *, void *, int), void *at, int d, double lb,
                                  const int *f, const double *a, int n, const int *fresh, int n_fresh,
                                  int only_fresh) {
  const int S = dp->S;
#define PP__PRED(j) (f[j] + d <= S && a[j] > lb && a[j] > cost(dp, at, f[j]))
  int lo = 0, hi = n - 1, u = -1;
  if (only_fresh) {
    if (n_fresh == 0) return PP__DP_NO_CROSSING;
    const int jf = fresh[0];
    if (!PP__PRED(jf)) {
      /* u < jf: the only fresh step that can matter is u + 1 == jf */
      if (jf > 0 && !PP__PRED(jf - 1)) return PP__DP_NO_CROSSING;
      lo = hi + 1;
      u = jf - 1;
    } else {
      lo = jf + 1;
      u = jf;
    }
  }
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    if (PP__PRED(mid)) {
      u = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
#undef PP__PRED
  return u;
}

/* Records ev's current stage in st: its nodes, their TMPCs as
 * pp_stage_choose picks them at (ti, di, y), the degrees t and d, and load
 * (dp.c).  st's node arrays are allocated here (freed with the plan). */
void pp__dp_record_stage(pp_stage_eval *ev, int ti, int di, int y, int t, int d, double load,
                         pp_plan_stage *st);

/* The stage cache's budget (stage.h) for a DP of n_pairs pairs (I, J).
 * Stages come back only where downsets have many sub-downsets (GNMT:
 * 15.5 M pairs, each stage set up 14-16 times); in a chain every pair has a
 * stage of its own, and a short run would only pay the first touches of
 * the slots' pages (BERT-32 at K = 64: 0.04 -> 0.05 s;
 * bench/results-stage-repeats.txt). */
static inline size_t pp__dp_stage_cache_bytes(long long n_pairs) {
  return n_pairs >= (1LL << 20) ? PP_STAGE_CACHE_BYTES : 0;
}

/* Sets ev's current stage to I \ J, the downsets with bits bi and bj,
 * through dp's scratch bits, summarising only the tensor degrees with
 * ti_on[ti] set (all if ti_on is NULL; see pp_stage_set_some). */
static inline void pp__dp_set_stage(pp_dp *dp, pp_stage_eval *ev, const uint64_t *bi, const uint64_t *bj,
                                    const unsigned char *ti_on) {
  for (int w = 0; w < dp->ds->words; w++) dp->cbits[w] = bi[w] & ~bj[w];
  pp_stage_set_some(ev, dp->cbits, ti_on);
}

#endif /* PIPER_DP_IMPL_H */
