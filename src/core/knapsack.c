/*
 * knapsack.c - the TMPC choice of one stage for given (t, d, y): the
 * reference's greedy (per d), the same greedy shared over every d when the
 * choice cannot depend on d, and an exact branch and bound.
 *
 * The arithmetic follows the reference planner expression by expression
 * (same order of operations, same summation order per node) so that optima
 * agree to the last bits.
 *
 * When every node's TMPCs hold the same parameter bytes, a TMPC's extra load
 * over the fastest one is (dE/B + dT)/d: the greedy's order of swaps, hence
 * its choice, is the same for every d.  It is then found once per y, with
 * d-free keys, and each d's load follows from the chosen TMPCs' sums.  A
 * choice that rests on two keys too close to order reliably for every d is
 * not shared: those y fall back to one greedy per d, as in the reference.
 */
#define PIPER_STAGE_MODULE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stage_int.h"

/* Fills c/ma/mb and the fastest choice for (ti, di). */
static void prepare(pp_stage_eval *ev, int ti, int di) {
  if (ev->kn.prep_ti == ti && ev->kn.prep_di == di) return;
  const int *eoff = ev->cur.eoff + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  const double *E = ev->cur.E + (size_t)ti * ev->cur.e_stride;
  const int d = ev->pre.dv[di], nd = ev->pre.nd;
  const double B = ev->p->bandwidth;
  for (int i = 0; i < ev->cur.m; i++) {
    const int u0 = ev->pre.use_off[ev->cur.nodes[i] * ev->pre.nt + ti];
    int best = eoff[i];
    for (int k = eoff[i]; k < eoff[i + 1]; k++) {
      const size_t u = (size_t)(u0 + k - eoff[i]);
      const double resync = ev->pre.u_rs[u * (size_t)nd + (size_t)di];
      const double comm = E[k] / d + resync;
      const double compute = ev->pre.u_cp[u * (size_t)nd + (size_t)di];
      ev->kn.c[k] = comm / B + compute;
      ev->kn.ma[k] = ev->pre.un[u].a;
      ev->kn.mb[k] = ev->pre.zero ? ev->pre.u_mb[u * (size_t)nd + (size_t)di] : ev->pre.un[u].b;
      if (ev->kn.c[best] > ev->kn.c[k]) best = k;
    }
    ev->kn.fast[i] = best;
  }
  ev->kn.prep_ti = ti;
  ev->kn.prep_di = di;
}

/* The order in which the greedy applies swaps: by key, then node, then TMPC
 * (a total order, as the reference's sort of (key, i, l) tuples). */
static inline int swap_before(const swap *x, const swap *y) {
  /* positions l grow with the node i, so (i, l) orders as l alone */
  return x->key < y->key || (x->key == y->key && x->l < y->l);
}

static void sift_down(swap *h, int n, int i) {
  swap x = h[i];
  for (;;) {
    int c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && swap_before(&h[c + 1], &h[c])) c++;
    if (!swap_before(&h[c], &x)) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

/* The reference's greedy: all-fastest if it fits; infeasible if the
 * all-smallest does not; else cheapest swaps per byte until it fits. */
static double greedy(pp_stage_eval *ev, int ti, int y) {
  const int *eoff = ev->cur.eoff + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  const double M = ev->p->memory;
  const int m = ev->cur.m;
  for (int k = 0; k < eoff[m]; k++) ev->kn.mem[k] = ev->kn.ma[k] * y + ev->kn.mb[k];
  double mem_fast = 0.0;
  for (int i = 0; i < m; i++) mem_fast += ev->kn.mem[ev->kn.fast[i]];
  for (int i = 0; i < m; i++) ev->kn.H[i] = ev->kn.fast[i];
  if (mem_fast <= M) {
    double r = 0.0;
    for (int i = 0; i < m; i++) r += ev->kn.c[ev->kn.fast[i]];
    return r;
  }
  double mem_low = 0.0;
  for (int i = 0; i < m; i++) {
    int lo = eoff[i];
    for (int k = eoff[i] + 1; k < eoff[i + 1]; k++)
      if (ev->kn.mem[lo] > ev->kn.mem[k]) lo = k;
    mem_low += ev->kn.mem[lo];
  }
  if (mem_low > M) {
    int *yinf = pp__stage_yinf(ev, ti, ev->kn.prep_di);
    if (y < *yinf) *yinf = y; /* mem_low is monotone in y */
    return INFINITY;
  }
  double shave = mem_fast - M;
  int ns = 0;
  for (int i = 0; i < m; i++)
    for (int k = eoff[i]; k < eoff[i + 1]; k++) {
      double saving = ev->kn.mem[ev->kn.H[i]] - ev->kn.mem[k];
      if (saving > 1e-9) {
        ev->kn.sorter[ns].key = (ev->kn.c[k] - ev->kn.c[ev->kn.H[i]]) / saving;
        ev->kn.sorter[ns].i = i;
        ev->kn.sorter[ns].l = k;
        ns++;
      }
    }
  /* Apply swaps in sorted order until the stage fits; a heap yields that
   * order without sorting the swaps that are never applied. */
  swap *h = ev->kn.sorter;
  for (int i = ns / 2 - 1; i >= 0; i--) sift_down(h, ns, i);
  while (ns > 0) {
    int i = h[0].i, k = h[0].l;
    h[0] = h[--ns];
    sift_down(h, ns, 0);
    shave -= ev->kn.mem[ev->kn.H[i]] - ev->kn.mem[k];
    ev->kn.H[i] = k;
    if (shave < 1e-9) break;
  }
  double r = 0.0;
  for (int i = 0; i < m; i++) r += ev->kn.c[ev->kn.H[i]];
  return r;
}

/* Sets up the shared greedy for ti and the current stage (once per stage):
 * per node the fastest TMPC's A and B, per position A and B, and the swaps
 * that can save memory at some y (not larger in both A and B than the
 * fastest), with their d-free extra loads (dE/B + dT; the load at d is that
 * over d since dP = 0).  A swap is marked unclear if its extra load is so
 * small against the load itself that rounding could reorder it at some d. */
static void shared_prepare(pp_stage_eval *ev, int ti) {
  if (ev->sh.dc_stamp[ti] == ev->gen) return;
  const size_t n1 = (size_t)(ev->g->n_nodes + 1);
  const int *eoff = ev->cur.eoff + (size_t)ti * n1;
  const int *fk = ev->cur.fk + (size_t)ti * n1;
  const double *E = ev->cur.E + (size_t)ti * ev->cur.e_stride;
  shared_ws *ws = &ev->sh.ws[ti];
  const double B = ev->p->bandwidth, N = (double)ev->p->microbatches;
  int nc = 0;
  for (int i = 0; i < ev->cur.m; i++) {
    const int u0 = ev->pre.use_off[ev->cur.nodes[i] * ev->pre.nt + ti] - eoff[i];
    const int f = fk[i], uf = u0 + f;
    ws->fa[i] = ev->pre.un[uf].a;
    ws->fb[i] = ev->pre.un[uf].b;
    for (int k = eoff[i]; k < eoff[i + 1]; k++) {
      const int u = u0 + k;
      ws->pa[k] = ev->pre.un[u].a;
      ws->pb[k] = ev->pre.un[u].b;
      if (k == f || (ev->pre.un[u].a >= ev->pre.un[uf].a && ev->pre.un[u].b >= ev->pre.un[uf].b)) continue;
      const double x = (E[k] - E[f]) / B + (ev->pre.un[u].t - ev->pre.un[uf].t);
      const double scale = E[k] / B + ev->pre.un[u].t + 4.0 * ev->pre.S * ev->pre.un[u].p / N / B;
      ws->c_i[nc] = i;
      ws->c_k[nc] = k;
      ws->c_dc[nc] = x;
      ws->c_bad[nc] = x != 0.0 && x < 1e-6 * scale;
      nc++;
    }
  }
  ws->nc = nc;
  ev->sh.dc_stamp[ti] = ev->gen;
}

/* 1 if the swaps x then y (x before y) might be applied in the other order
 * at some d, which would change the choice by more than rounding. */
static int swaps_unclear(const shared_ws *ws, const double *sv, const swap *x, const swap *y) {
  const int cx = x->c, cy = y->c;
  if (ws->c_bad[cx] || ws->c_bad[cy]) return 1;
  if (y->key > x->key * (1 + 1e-9)) return 0;
  if (x->key == 0.0 && y->key == 0.0) return 0; /* equal loads: a tie at every d */
  /* the same key, saving and extra load: either choice costs the same */
  return !(x->key == y->key && sv[cx] == sv[cy] && ws->c_dc[cx] == ws->c_dc[cy]);
}

/* Applies swap x in the shared greedy: the memory still to shave and the
 * sums of T, E, P of the chosen TMPCs. */
static inline void apply_swap(const pp_stage_eval *ev, int ti, const int *eoff, const int *fk,
                              const double *E, const swap *x, const double *sv, int *H, double *shave,
                              double *st, double *se, double *sp) {
  const int i = x->i, k = x->l, f = fk[i];
  const int u0 = ev->pre.use_off[ev->cur.nodes[i] * ev->pre.nt + ti] - eoff[i];
  *shave -= sv[x->c];
  *st += ev->pre.un[u0 + k].t - ev->pre.un[u0 + f].t;
  *se += E[k] - E[f];
  *sp += ev->pre.un[u0 + k].p - ev->pre.un[u0 + f].p;
  if (H) H[i] = k;
}

/* The greedy with d-free keys at y for a shared ti (stage_int.h).  Stores
 * the state of y and the sums of T, E, P over the chosen TMPCs. */
int pp__knap_shared_greedy(pp_stage_eval *ev, int ti, int y, int *H) {
  const size_t n1 = (size_t)(ev->g->n_nodes + 1);
  const int *eoff = ev->cur.eoff + (size_t)ti * n1;
  const int *fk = ev->cur.fk + (size_t)ti * n1;
  const double *E = ev->cur.E + (size_t)ti * ev->cur.e_stride;
  const double M = ev->p->memory;
  const int m = ev->cur.m;
  const size_t slot = (size_t)ti * (size_t)ev->sh.ys_len + (size_t)y;
  shared_prepare(ev, ti);
  const shared_ws *ws = &ev->sh.ws[ti];
  const double *fa = ws->fa, *fb = ws->fb, *pa = ws->pa, *pb = ws->pb;
  double mem_fast = 0.0, mem_low = 0.0;
  for (int i = 0; i < m; i++) {
    mem_fast += fa[i] * y + fb[i];
    double ml = pa[eoff[i]] * y + pb[eoff[i]];
    for (int k = eoff[i] + 1; k < eoff[i + 1]; k++) {
      const double mk = pa[k] * y + pb[k];
      ml = ml > mk ? mk : ml;
    }
    mem_low += ml;
  }
  if (H)
    for (int i = 0; i < m; i++) H[i] = fk[i];
  double st = ev->cur.ts[ti].sum_t, se = ev->cur.ts[ti].sum_e, sp = ev->cur.ts[ti].sum_p;
  int state = YS_SUMS;
  if (mem_fast <= M) {
    /* all-fastest */
  } else if (mem_low > M) {
    state = YS_INFEASIBLE;
    if (y < ev->cur.ts[ti].yinf) ev->cur.ts[ti].yinf = y; /* mem_low is monotone in y */
  } else {
    double *sv = ev->kn.mem; /* savings by swap */
    swap *h = ev->kn.sorter;
    int ns = 0;
    for (int c = 0; c < ws->nc; c++) {
      const int i = ws->c_i[c], k = ws->c_k[c];
      const double saving = (fa[i] * y + fb[i]) - (pa[k] * y + pb[k]);
      sv[c] = saving;
      if (saving > 1e-9) {
        h[ns].key = ws->c_dc[c] / saving;
        h[ns].i = i;
        h[ns].l = k;
        h[ns].c = c;
        ns++;
      }
    }
    double shave = mem_fast - M;
    swap last = {0, -1, -1, -1};
    for (int i = ns / 2 - 1; i >= 0; i--) sift_down(h, ns, i);
    while (ns > 0) {
      if (last.i >= 0 && swaps_unclear(ws, sv, &last, &h[0])) state = YS_PER_D;
      last = h[0];
      h[0] = h[--ns];
      sift_down(h, ns, 0);
      apply_swap(ev, ti, eoff, fk, E, &last, sv, H, &shave, &st, &se, &sp);
      if (shave < 1e-9) break;
    }
    if (ns > 0 && last.i >= 0 && swaps_unclear(ws, sv, &last, &h[0])) state = YS_PER_D;
  }
  ev->sh.ys_state[slot] = (unsigned char)state;
  ev->sh.ys_t[slot] = st;
  ev->sh.ys_e[slot] = se;
  ev->sh.ys_p[slot] = sp;
  return state;
}

/* Exact: depth-first branch and bound over nodes in order; the first
 * optimum found in lexicographic order of choices is kept. */
static void bnb(pp_stage_eval *ev, const int *eoff, int i, double cost, double mem, double *best) {
  if (i == ev->cur.m) {
    if (cost < *best && mem <= ev->p->memory) {
      *best = cost;
      memcpy(ev->kn.H, ev->kn.cur, sizeof(int) * (size_t)ev->cur.m);
    }
    return;
  }
  if (cost + ev->kn.suf_c[i] >= *best) return;
  if (mem + ev->kn.suf_mem[i] > ev->p->memory) return;
  for (int k = eoff[i]; k < eoff[i + 1]; k++) {
    ev->kn.cur[i] = k;
    bnb(ev, eoff, i + 1, cost + ev->kn.c[k], mem + ev->kn.mem[k], best);
  }
}

static double exact(pp_stage_eval *ev, int ti, int y) {
  const int *eoff = ev->cur.eoff + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  const int m = ev->cur.m;
  for (int k = 0; k < eoff[m]; k++) ev->kn.mem[k] = ev->kn.ma[k] * y + ev->kn.mb[k];
  ev->kn.suf_c[m] = 0.0;
  ev->kn.suf_mem[m] = 0.0;
  for (int i = m - 1; i >= 0; i--) {
    double bc = INFINITY, bm = INFINITY;
    for (int k = eoff[i]; k < eoff[i + 1]; k++) {
      if (ev->kn.c[k] < bc) bc = ev->kn.c[k];
      if (ev->kn.mem[k] < bm) bm = ev->kn.mem[k];
    }
    ev->kn.suf_c[i] = ev->kn.suf_c[i + 1] + bc;
    ev->kn.suf_mem[i] = ev->kn.suf_mem[i + 1] + bm;
  }
  double best = INFINITY;
  bnb(ev, eoff, 0, 0.0, 0.0, &best);
  if (best == INFINITY) return INFINITY;
  /* report the sum in node order, like the greedy */
  double r = 0.0;
  for (int i = 0; i < m; i++) r += ev->kn.c[ev->kn.H[i]];
  return r;
}

double pp__knap_solve(pp_stage_eval *ev, int ti, int di, int y) {
  prepare(ev, ti, di);
  return ev->p->knapsack == PP_KNAPSACK_EXACT ? exact(ev, ti, y) : greedy(ev, ti, y);
}

void pp__knap_alloc(pp_stage_eval *ev) {
  const int n = ev->g->n_nodes;
  const size_t nt1 = (size_t)ev->pre.nt + 1, es = ev->cur.e_stride;
  shared_cache *sh = &ev->sh;
  sh->ws = pp_xcalloc(nt1, sizeof(shared_ws));
  for (int ti = 0; ti < ev->pre.nt; ti++) {
    shared_ws *ws = &sh->ws[ti];
    ws->fa = pp_xmalloc(sizeof(double) * (size_t)(n + 1));
    ws->fb = pp_xmalloc(sizeof(double) * (size_t)(n + 1));
    ws->pa = pp_xmalloc(sizeof(double) * es);
    ws->pb = pp_xmalloc(sizeof(double) * es);
    ws->c_i = pp_xmalloc(sizeof(int) * es);
    ws->c_k = pp_xmalloc(sizeof(int) * es);
    ws->c_dc = pp_xmalloc(sizeof(double) * es);
    ws->c_bad = pp_xmalloc(es);
  }
  sh->dc_stamp = pp_xcalloc(nt1, sizeof(uint32_t));
  sh->ys_len = ev->pre.S + 2; /* the results per y live in the cache slots */
  knap_ws *kn = &ev->kn;
  kn->c = pp_xmalloc(sizeof(double) * es);
  kn->ma = pp_xmalloc(sizeof(double) * es);
  kn->mb = pp_xmalloc(sizeof(double) * es);
  kn->mem = pp_xmalloc(sizeof(double) * es);
  kn->sorter = pp_xmalloc(sizeof(swap) * es);
  kn->fast = pp_xmalloc(sizeof(int) * (size_t)(n + 1));
  kn->H = pp_xmalloc(sizeof(int) * (size_t)(n + 1));
  kn->cur = pp_xmalloc(sizeof(int) * (size_t)(n + 1));
  kn->suf_c = pp_xmalloc(sizeof(double) * (size_t)(n + 2));
  kn->suf_mem = pp_xmalloc(sizeof(double) * (size_t)(n + 2));
  kn->prep_ti = kn->prep_di = -1;
}

void pp__knap_free(pp_stage_eval *ev) {
  shared_cache *sh = &ev->sh;
  for (int ti = 0; sh->ws && ti < ev->pre.nt; ti++) {
    shared_ws *ws = &sh->ws[ti];
    free(ws->fa);
    free(ws->fb);
    free(ws->pa);
    free(ws->pb);
    free(ws->c_i);
    free(ws->c_k);
    free(ws->c_dc);
    free(ws->c_bad);
  }
  free(sh->ws);
  free(sh->dc_stamp);
  knap_ws *kn = &ev->kn;
  free(kn->c);
  free(kn->ma);
  free(kn->mb);
  free(kn->mem);
  free(kn->sorter);
  free(kn->fast);
  free(kn->H);
  free(kn->cur);
  free(kn->suf_c);
  free(kn->suf_mem);
}
