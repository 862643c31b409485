/*
 * stage.c - the current stage: its per-degree summary, the thresholds in y
 * that need no knapsack, and the memo of costs per (t, d, y).
 *
 * The costs of one stage are asked for many (t, d, y).  Three regions of y
 * need no knapsack: up to yf the all-fastest choice fits (its sums give the
 * load for every d), from yinf on not even the smallest TMPCs fit.  In
 * between, knapsack.c chooses the TMPCs.  The per-graph tables come from
 * stage_pre.c; see stage.h for the model.
 *
 * The summary, the memo rows and the shared greedy's results of a stage
 * live in its slot of the cache (stage_cache.c): a stage set up again soon
 * after brings them back, and its per-position scratch is rebuilt only if
 * a cost not in the memo is asked (need_summary).
 */
#define PIPER_STAGE_MODULE
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/bitset.h"
#include "stage_int.h"

/* The memo's layout: y in 0..S/d+1 for every (ti, di) (the rows
 * themselves are in the cache slots). */
static void memo_layout(pp_stage_eval *ev) {
  const int nt = ev->pre.nt, nd = ev->pre.nd, S = ev->pre.S;
  stage_memo *mo = &ev->memo;
  mo->off = pp_xmalloc(sizeof(size_t) * (size_t)(nt * nd + 1));
  mo->len = pp_xmalloc(sizeof(int) * (size_t)(nt * nd + 1));
  size_t off = 0;
  for (int ti = 0; ti < nt; ti++)
    for (int di = 0; di < nd; di++) {
      mo->off[ti * nd + di] = off;
      mo->len[ti * nd + di] = S / ev->pre.dv[di] + 2;
      off += (size_t)S / (size_t)ev->pre.dv[di] + 2;
    }
  mo->total = off + 1;
}

pp_stage_eval *pp_stage_eval_new(const pp_graph *g, const pp_problem *p, size_t cache_bytes) {
  pp_stage_eval *ev = pp_xcalloc(1, sizeof *ev);
  ev->g = g;
  ev->p = p;
  pp__stage_pre_init(&ev->pre, g, p);
  const int n = g->n_nodes;
  const size_t nt1 = (size_t)ev->pre.nt + 1;
  stage_cur *cur = &ev->cur;
  cur->words = pp_bits_words(n);
  cur->nodes = pp_xmalloc(sizeof(int) * (size_t)n);
  cur->bits = pp_xcalloc((size_t)cur->words + 1, sizeof(uint64_t));
  cur->on = pp_xcalloc(nt1, 1);
  cur->sum_gen = pp_xcalloc(nt1, sizeof(uint32_t));
  cur->eoff = pp_xmalloc(sizeof(int) * nt1 * (size_t)(n + 1));
  cur->fk = pp_xmalloc(sizeof(int) * nt1 * (size_t)(n + 1));
  cur->e_stride = (size_t)ev->pre.max_per_ti + 1;
  cur->E = pp_xmalloc(sizeof(double) * cur->e_stride * nt1);
  pp__knap_alloc(ev);
  memo_layout(ev);
  pp__stage_cache_alloc(ev, cache_bytes);
  ev->gen = 1;
  return ev;
}

void pp_stage_eval_free(pp_stage_eval *ev) {
  if (!ev) return;
  pp__knap_free(ev);
  pp__stage_cache_free(ev);
  free(ev->cur.nodes);
  free(ev->cur.bits);
  free(ev->cur.on);
  free(ev->cur.sum_gen);
  free(ev->cur.eoff);
  free(ev->cur.fk);
  free(ev->cur.E);
  free(ev->memo.off);
  free(ev->memo.len);
  pp__stage_pre_free(&ev->pre);
  free(ev);
}

int pp_stage_n_degrees(const pp_stage_eval *ev, const int **t_values) {
  *t_values = ev->pre.tv;
  return ev->pre.nt;
}

int pp_stage_n_dp(const pp_stage_eval *ev, const int **d_values) {
  *d_values = ev->pre.dv;
  return ev->pre.nd;
}

double pp_stage_resync_factor(const pp_stage_eval *ev, int ti, int di) {
  return ev->pre.rs_f[ti * ev->pre.nd + di];
}

int pp_stage_nodes(const pp_stage_eval *ev, const int **nodes) {
  *nodes = ev->cur.nodes;
  return ev->cur.m;
}

/* B of the all-fastest and the all-smallest choice and a lower bound on
 * the smallest B, at degree index di (-1: the Piper model, where B does not
 * depend on d). */
static double fast_b(const stage_ti *ts, const stage_pre *pre, int di) {
  return di < 0 ? ts->sum_fb : ts->sum_fbz + ts->sum_fz / pre->dv[di];
}
static double low_b(const stage_ti *ts, const stage_pre *pre, int di) {
  return di < 0 ? ts->sum_lb : ts->sum_lbz + ts->sum_lz / pre->dv[di];
}
static double min_b(const stage_ti *ts, const stage_pre *pre, int di) {
  return di < 0 ? ts->min_b : ts->min_bz + ts->min_z / pre->dv[di];
}

/* The tests of pp_stage_cost that need no knapsack, as functions of y. */
static int fast_fits(const pp_stage_eval *ev, int ti, int di, int y) {
  const stage_ti *ts = &ev->cur.ts[ti];
  return ts->uniform_fast && ts->sum_fa * y + fast_b(ts, &ev->pre, di) <= ev->p->memory;
}

static int low_exceeds(const pp_stage_eval *ev, int ti, int di, int y) {
  const double M = ev->p->memory;
  const stage_ti *ts = &ev->cur.ts[ti];
  return (ts->uniform_low && ts->sum_la * y + low_b(ts, &ev->pre, di) > M) ||
         ts->min_a * y + min_b(ts, &ev->pre, di) > M * (1 + 1e-12);
}

/* Both tests are monotone in y (A, B >= 0 and rounding is monotone): binary
 * searches give the last y that fits all-fastest (*yf) and the first y ruled
 * out (*yinf), for degree index di (-1: the same for every d). */
static void find_thresholds(pp_stage_eval *ev, int ti, int di, int *yf, int *yinf) {
  const int ymax = ev->pre.S + 1;
  int lo = 0, hi = ymax; /* fast_fits holds at lo (or lo = 0), fails above hi */
  if (!fast_fits(ev, ti, di, 1)) {
    hi = 0;
  } else {
    lo = 1;
    while (lo < hi) {
      int mid = lo + (hi - lo + 1) / 2;
      if (fast_fits(ev, ti, di, mid))
        lo = mid;
      else
        hi = mid - 1;
    }
  }
  *yf = hi;
  lo = 1;
  hi = ymax + 1; /* low_exceeds fails below lo, holds at hi (or hi = ymax + 1) */
  if (low_exceeds(ev, ti, di, 1)) {
    hi = 1;
  } else {
    while (lo + 1 < hi) {
      int mid = lo + (hi - lo) / 2;
      if (low_exceeds(ev, ti, di, mid))
        hi = mid;
      else
        lo = mid;
    }
  }
  *yinf = hi <= ymax ? hi : INT_MAX; /* unknown beyond ymax */
}

/* The last y at which the all-fastest choice fits for (ti, di). */
static inline int y_fast(const pp_stage_eval *ev, int ti, int di) {
  return ev->pre.zero ? ev->cur.yfd[ti * ev->pre.nd + di] : ev->cur.ts[ti].yf;
}

/* Under ZeRO, the sums of the parts of B over the stage's nodes for ti
 * (fk: the fastest positions, valid when uniform_fast). */
static void zero_sums(pp_stage_eval *ev, int ti, const int *eoff, const int *fk) {
  stage_ti *ts = &ev->cur.ts[ti];
  const int nt = ev->pre.nt;
  ts->sum_fbz = ts->sum_fz = ts->sum_lbz = ts->sum_lz = ts->min_bz = ts->min_z = 0.0;
  for (int i = 0; i < ev->cur.m; i++) {
    const size_t vt = (size_t)ev->cur.nodes[i] * (size_t)nt + (size_t)ti;
    const int u0 = ev->pre.vt[vt].u0, lw = ev->pre.vt[vt].low;
    if (ts->uniform_fast) {
      const int u = u0 + fk[i] - eoff[i];
      ts->sum_fbz += ev->pre.u_bz[u];
      ts->sum_fz += ev->pre.u_z[u];
    }
    if (ts->uniform_low) {
      ts->sum_lbz += ev->pre.u_bz[u0 + lw];
      ts->sum_lz += ev->pre.u_z[u0 + lw];
    }
    ts->min_bz += ev->pre.vz[vt].minbz;
    ts->min_z += ev->pre.vz[vt].minz;
  }
}

/* The edge bytes E[0..L) of node v's L positions for ti in the stage c
 * (edges to nodes outside it), and v's fastest position for every d, or
 * -1 if there is none or find_fast is 0. */
static inline int node_edges(const pp_stage_eval *ev, const uint64_t *c, const vt_info *vi, int v, int ti,
                             int find_fast, double *E) {
  const int u0 = vi->u0, L = vi->L, *nb = ev->pre.nb + vi->nb0, deg = vi->deg;
  if (vi->flags & VT_SYNC_UNIFORM) {
    const double *w = ev->pre.w + ev->pre.w_off[u0];
    double e = 0.0;
    for (int j = 0; j < deg; j++) e += pp_bit_get(c, nb[j]) ? 0.0 : w[j];
    for (int l = 0; l < L; l++) E[l] = e;
    return vi->fast;
  }
  for (int l = 0; l < L; l++) {
    const double *w = ev->pre.w + ev->pre.w_off[u0 + l];
    double e = 0.0;
    for (int j = 0; j < deg; j++) e += pp_bit_get(c, nb[j]) ? 0.0 : w[j];
    E[l] = e;
  }
  return find_fast ? pp__stage_fastest_for_all_d(ev, v, ti, L, E) : -1;
}

/* The sums of a stage summary, gathered over its nodes. */
typedef struct stage_sums {
  double t, e, p, fa, fb; /* the all-fastest choice: time, edge bytes, parameters, A, B */
  double la, lb;          /* the all-lowest choice: A, B */
  double mina, minb;      /* the smallest A and B */
} stage_sums;

/* The summary of the current stage for ti: edge bytes per position, the
 * uniformly fastest positions, the sums and (with thresholds) the
 * thresholds in y. */
static void summarise(pp_stage_eval *ev, int ti, int thresholds) {
  const pp_graph *g = ev->g;
  const uint64_t *c = ev->cur.bits;
  ev->cur.sum_gen[ti] = ev->gen;
  const int nt = ev->pre.nt;
  int *eoff = ev->cur.eoff + (size_t)ti * (size_t)(g->n_nodes + 1);
  int *fk = ev->cur.fk + (size_t)ti * (size_t)(g->n_nodes + 1);
  double *E = ev->cur.E + (size_t)ti * ev->cur.e_stride;
  int ok = 1, k = 0, ufast = 1, ulow = 1, p_equal = 1, few = 1;
  stage_sums s = {0};
  for (int i = 0; i < ev->cur.m; i++) {
    const int v = ev->cur.nodes[i];
    const vt_info *vi = &ev->pre.vt[(size_t)v * (size_t)nt + (size_t)ti];
    const int u0 = vi->u0, L = vi->L;
    eoff[i] = k;
    if (L == 0) {
      ok = 0;
      break;
    }
    const int f = node_edges(ev, c, vi, v, ti, ufast, E + k);
    if (!(vi->flags & VT_P_EQUAL)) p_equal = 0;
    if (L > 2) few = 0;
    s.mina += vi->mina;
    s.minb += vi->minb;
    if (f < 0) {
      ufast = 0;
    } else {
      const tmpc_num *x = &ev->pre.un[u0 + f];
      fk[i] = k + f;
      s.t += x->t;
      s.e += E[k + f];
      s.p += x->p;
      s.fa += x->a;
      s.fb += x->b;
    }
    const int lw = vi->low;
    if (lw < 0) {
      ulow = 0;
    } else {
      s.la += ev->pre.un[u0 + lw].a;
      s.lb += ev->pre.un[u0 + lw].b;
    }
    k += L;
  }
  eoff[ev->cur.m] = k;
  stage_ti *ts = &ev->cur.ts[ti];
  ts->supported = ok;
  ts->uniform_fast = ok && ufast;
  ts->uniform_low = ok && ulow;
  /* the shared greedy counts every swap against the fastest TMPC, which is
   * the per-d greedy's count only while a node has at most two TMPCs */
  ts->shared = ok && ufast && p_equal && few && ev->p->knapsack == PP_KNAPSACK_GREEDY;
  ts->sum_t = s.t;
  ts->sum_e = s.e;
  ts->sum_p = s.p;
  ts->sum_fa = s.fa;
  ts->sum_fb = s.fb;
  ts->sum_la = s.la;
  ts->sum_lb = s.lb;
  ts->min_a = s.mina;
  ts->min_b = s.minb;
  if (!ok) return;
  if (ev->pre.zero) {
    ts->shared = 0; /* memory depends on d: no choice shared over d */
    zero_sums(ev, ti, eoff, fk);
  } else if (thresholds) {
    find_thresholds(ev, ti, -1, &ts->yf, &ts->yinf);
  }
}

void pp_stage_set(pp_stage_eval *ev, const uint64_t *c) { pp_stage_set_some(ev, c, NULL); }

void pp_stage_set_some(pp_stage_eval *ev, const uint64_t *c, const unsigned char *ti_on) {
  const int nt = ev->pre.nt;
  stage_cur *cur = &ev->cur;
  cur->m = 0;
  for (int w = 0; w < cur->words; w++) {
    cur->bits[w] = c[w];
    for (uint64_t x = c[w]; x; x &= x - 1) cur->nodes[cur->m++] = w * 64 + __builtin_ctzll(x);
  }
  if (++ev->gen == 0) {
    memset(ev->sh.dc_stamp, 0, sizeof(uint32_t) * (size_t)(nt + 1));
    memset(cur->sum_gen, 0, sizeof(uint32_t) * (size_t)(nt + 1));
    ev->gen = 1;
  }
  ev->kn.prep_ti = ev->kn.prep_di = -1;
  pp__stage_cache_enter(ev, c);
  for (int ti = 0; ti < nt; ti++) {
    cur->on[ti] = !ti_on || ti_on[ti];
    if (cur->on[ti] && !cur->done[ti]) {
      summarise(ev, ti, 1);
      cur->done[ti] = 1;
    }
  }
}

/* 1 if ti was asked for by the last set-up and the stage supports it (its
 * summary is then in the slot). */
static inline int live(const pp_stage_eval *ev, int ti) { return ev->cur.on[ti] && ev->cur.ts[ti].supported; }

/* Rebuilds the per-position scratch of ti for the current stage if its
 * summary came from the cache.  The sums come out as they were; the
 * thresholds, which a knapsack may have lowered since, are kept. */
static void need_summary(pp_stage_eval *ev, int ti) {
  if (ev->cur.sum_gen[ti] != ev->gen) summarise(ev, ti, 0);
}

int pp_stage_supports(const pp_stage_eval *ev, int ti) { return live(ev, ti); }

/* The load of TMPCs with sums st, se, sp of T, E, P at degrees (ti, di). */
static double load_of_sums(const pp_stage_eval *ev, int ti, int di, double st, double se, double sp) {
  const int d = ev->pre.dv[di];
  const double comm =
      se / d + 4 * (d - 1) * sp / d / (double)ev->p->microbatches * ev->pre.rs_f[ti * ev->pre.nd + di];
  return comm / ev->p->bandwidth + st / d;
}

/* The load of the all-fastest choice, or 0 if there is none (no y has
 * it then: y_fast is 0). */
static double fast_load(const pp_stage_eval *ev, int ti, int di) {
  const stage_ti *ts = &ev->cur.ts[ti];
  return ts->uniform_fast ? load_of_sums(ev, ti, di, ts->sum_t, ts->sum_e, ts->sum_p) : 0.0;
}

/* The thresholds of (ti, di) for the current stage: the last y at which
 * the all-fastest choice fits (*yf) and the first y the memory bound rules
 * out (*yinf).  Under ZeRO they depend on d and are found at the first
 * call for the stage. */
static void thresholds(pp_stage_eval *ev, int ti, int di, int *yf, int *yinf) {
  const int r = ti * ev->pre.nd + di;
  if (ev->pre.zero && ev->memo.ok[r] == MEMO_NONE) {
    find_thresholds(ev, ti, di, &ev->cur.yfd[r], &ev->cur.yinfd[r]);
    ev->memo.ok[r] = MEMO_THRESHOLDS;
  }
  *yf = y_fast(ev, ti, di);
  *yinf = *pp__stage_yinf(ev, ti, di);
}

/* The cost without the memo. */
static double compute_cost(pp_stage_eval *ev, int ti, int di, int y) {
  if (y <= y_fast(ev, ti, di)) return fast_load(ev, ti, di);
  if (y >= *pp__stage_yinf(ev, ti, di)) return INFINITY;
  if (ev->cur.ts[ti].shared && y < ev->sh.ys_len) {
    const size_t slot = (size_t)ti * (size_t)ev->sh.ys_len + (size_t)y;
    int state = ev->sh.ys_state[slot];
    if (!state) {
      need_summary(ev, ti);
      state = pp__knap_shared_greedy(ev, ti, y, NULL);
    }
    if (state == YS_INFEASIBLE) return INFINITY;
    if (state == YS_SUMS)
      return load_of_sums(ev, ti, di, ev->sh.ys_t[slot], ev->sh.ys_e[slot], ev->sh.ys_p[slot]);
  }
  need_summary(ev, ti);
  return pp__knap_solve(ev, ti, di, y);
}

/* The memo row of (ti, di), set up for the current stage: the regions that
 * need no knapsack filled in, NaN elsewhere. */
static double *memo_row(pp_stage_eval *ev, int ti, int di) {
  const int r = ti * ev->pre.nd + di;
  double *row = ev->memo.val + ev->memo.off[r];
  if (ev->memo.ok[r] == MEMO_ROW) return row;
  const int len = ev->memo.len[r];
  int yf, yinf;
  thresholds(ev, ti, di, &yf, &yinf);
  const int a = yf < len - 1 ? yf : len - 1;
  const int b = yinf < len ? yinf : len;
  row[0] = INFINITY;
  const double fast = fast_load(ev, ti, di);
  ev->memo.lb[r] = fast * (1 - 1e-12);
  for (int y = 1; y <= a; y++) row[y] = fast;
  for (int y = a + 1; y < b; y++) row[y] = NAN;
  for (int y = b > a + 1 ? b : a + 1; y < len; y++) row[y] = INFINITY;
  ev->memo.ok[r] = MEMO_ROW;
  return row;
}

double pp_stage_cost(pp_stage_eval *ev, int ti, int di, int y) {
  if (!live(ev, ti) || y < 1) return INFINITY;
  double *row = memo_row(ev, ti, di);
  const int len = ev->memo.len[ti * ev->pre.nd + di];
  if (y < len && !isnan(row[y])) return row[y];
  const double r = compute_cost(ev, ti, di, y);
  if (y < len) row[y] = r;
  return r;
}

const double *pp_stage_cost_row(pp_stage_eval *ev, int ti, int di, int *len) {
  *len = ev->memo.len[ti * ev->pre.nd + di];
  return memo_row(ev, ti, di);
}

int pp_stage_inf_from(pp_stage_eval *ev, int ti, int di) {
  if (!live(ev, ti)) return 1;
  int yf, yinf;
  thresholds(ev, ti, di, &yf, &yinf);
  return yinf;
}

void pp_stage_cost_span(pp_stage_eval *ev, int ti, int di, int ylo, int yhi, double *out) {
  if (!live(ev, ti)) {
    for (int y = ylo; y <= yhi; y++) out[y - ylo] = INFINITY;
    return;
  }
  const int r = ti * ev->pre.nd + di;
  if (ev->memo.ok[r] == MEMO_ROW) { /* the row is there: read it */
    const double *row = ev->memo.val + ev->memo.off[r];
    const int len = ev->memo.len[r];
    for (int y = ylo; y <= yhi; y++) {
      const double c = y >= 1 && y < len ? row[y] : NAN;
      out[y - ylo] = !isnan(c) ? c : pp_stage_cost(ev, ti, di, y);
    }
    return;
  }
  /* memo_row's regions, in its order, without writing the row; a y between
   * them sets the row up through pp_stage_cost */
  int yf, yinf;
  thresholds(ev, ti, di, &yf, &yinf);
  const double fast = fast_load(ev, ti, di);
  for (int y = ylo; y <= yhi; y++)
    out[y - ylo] = y < 1 ? INFINITY : y <= yf ? fast : y >= yinf ? INFINITY : pp_stage_cost(ev, ti, di, y);
}

double pp_stage_lower_bound(const pp_stage_eval *ev, int ti, int di) {
  if (!live(ev, ti)) return INFINITY;
  const int r = ti * ev->pre.nd + di;
  return ev->memo.ok[r] == MEMO_ROW ? ev->memo.lb[r] : fast_load(ev, ti, di) * (1 - 1e-12);
}

double pp_stage_node_floor(const pp_stage_eval *ev, int v, int ti, int di) {
  const stage_pre *pre = &ev->pre;
  const size_t nd = (size_t)pre->nd;
  const int u0 = pre->use_off[v * pre->nt + ti], u1 = pre->use_off[v * pre->nt + ti + 1];
  double best = INFINITY;
  for (int u = u0; u < u1; u++) {
    const double c =
        pre->u_rs[(size_t)u * nd + (size_t)di] / ev->p->bandwidth + pre->u_cp[(size_t)u * nd + (size_t)di];
    if (c < best) best = c;
  }
  return best;
}

void pp_stage_node_mem_floor(const pp_stage_eval *ev, int v, int ti, int di, double *a, double *b) {
  const size_t vt = (size_t)v * (size_t)ev->pre.nt + (size_t)ti;
  const vt_info *vi = &ev->pre.vt[vt];
  if (vi->L == 0) {
    *a = *b = INFINITY;
    return;
  }
  *a = vi->mina;
  *b = ev->pre.zero ? ev->pre.vz[vt].minbz + ev->pre.vz[vt].minz / ev->pre.dv[di] : vi->minb;
}

int pp_stage_node_tmpcs(const pp_stage_eval *ev, int v, int ti, int di, double *load, double *a, double *b,
                        int cap) {
  const stage_pre *pre = &ev->pre;
  const size_t nd = (size_t)pre->nd;
  const int u0 = pre->use_off[v * pre->nt + ti], u1 = pre->use_off[v * pre->nt + ti + 1];
  for (int u = u0; u < u1 && u - u0 < cap; u++) {
    load[u - u0] =
        pre->u_rs[(size_t)u * nd + (size_t)di] / ev->p->bandwidth + pre->u_cp[(size_t)u * nd + (size_t)di];
    a[u - u0] = pre->un[u].a;
    b[u - u0] = pre->zero ? pre->u_mb[(size_t)u * nd + (size_t)di] : pre->un[u].b;
  }
  return u1 - u0;
}

double pp_stage_choose(pp_stage_eval *ev, int ti, int di, int y, int *choice) {
  if (!live(ev, ti) || y < 1) return INFINITY;
  const double r = pp_stage_cost(ev, ti, di, y);
  if (r == INFINITY) return r;
  need_summary(ev, ti);
  const int *eoff = ev->cur.eoff + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  const int *fk = ev->cur.fk + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  if (y <= y_fast(ev, ti, di)) {
    for (int i = 0; i < ev->cur.m; i++) ev->kn.H[i] = fk[i];
  } else if (!(ev->cur.ts[ti].shared && y < ev->sh.ys_len &&
               pp__knap_shared_greedy(ev, ti, y, ev->kn.H) == YS_SUMS)) {
    pp__knap_solve(ev, ti, di, y);
  }
  for (int i = 0; i < ev->cur.m; i++)
    choice[i] =
        ev->pre.use_idx[ev->pre.use_off[ev->cur.nodes[i] * ev->pre.nt + ti] + (ev->kn.H[i] - eoff[i])];
  return r;
}
