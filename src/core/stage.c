/*
 * stage.c - stage cost and the per-stage TMPC knapsack.
 *
 * The arithmetic follows the reference planner expression by expression (same
 * order of operations, same summation order per node) so that optima agree to
 * the last bits; see include/piper/stage.h for the model.
 *
 * The costs of one stage are asked for many (t, d, y).  Three regions of y
 * need no knapsack: up to yf the all-fastest choice fits (its sums give the
 * load for every d), from yinf on not even the smallest TMPCs fit.  In
 * between, when every node's TMPCs hold the same parameter bytes, a TMPC's
 * extra load over the fastest one is (dE/B + dT)/d: the greedy's order of
 * swaps, hence its choice, is the same for every d.  It is then found once per
 * y, with d-free keys, and each d's load follows from the chosen TMPCs' sums.
 * A choice that rests on two keys too close to order reliably for every d is
 * not shared: those y fall back to one greedy per d, as in the reference.
 */
#include "stage.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/bitset.h"

typedef struct swap {
  double key;
  int i, l; /* node and position */
  int c;    /* index of the swap in the shared greedy's list */
} swap;

/* Per ti, the shared greedy's view of the current stage (shared_prepare). */
typedef struct shared_ws {
  double *fa, *fb;      /* [n_nodes]: A, B of each node's fastest TMPC */
  double *pa, *pb;      /* [positions]: A, B */
  int nc;               /* swaps that can save memory */
  int *c_i, *c_k;       /* [nc]: node and position */
  double *c_dc;         /* [nc]: d-free extra load */
  unsigned char *c_bad; /* [nc]: too small to order reliably */
} shared_ws;

/* The numbers of one usable TMPC. */
typedef struct tmpc_num {
  double t, p, a, b; /* time per sample, parameter bytes, memory A and B */
} tmpc_num;

/* Per (node, ti): what pp_stage_set reads, in one place. */
typedef struct vt_info {
  int u0, L;         /* first usable TMPC index and count */
  int nb0, deg;      /* neighbours nb[nb0 .. nb0 + deg) */
  int fast, low;     /* fixed fastest (sync times equal) and smallest TMPC, or -1 */
  int flags;         /* VT_* */
  double mina, minb; /* smallest A and B */
} vt_info;

/* Per-y state of the shared greedy. */
enum { YS_SUMS = 1, YS_INFEASIBLE = 2, YS_PER_D = 3 };

/* Flags per (node, ti). */
enum { VT_SYNC_UNIFORM = 1, VT_P_EQUAL = 2 };

struct pp_stage_eval {
  const pp_graph *g;
  const pp_problem *p;
  int S;
  int nt, nd;
  int *tv, *dv; /* [nt], [nd] */
  int *use_off; /* [n_nodes * nt + 1] into use_idx */
  int *use_idx; /* usable TMPC positions within the node's list */
  /* Per usable TMPC u (indexed like use_idx): its numbers, its edge weights
   * 2 (c + sync) (in-edges then out-edges: w[w_off[u] ..]), and per d index
   * its resync and compute terms 4 (d-1) P / d / N and T / d. */
  tmpc_num *un; /* [n_use] */
  int *w_off;
  double *w;
  double *u_rs, *u_cp; /* [n_use * nd] */
  /* Per node: neighbours, in-edge sources then out-edge targets. */
  int *nb_off, *nb;
  /* Per (node, ti): flags, the TMPC fastest for every d when the sync times
   * are the same for all TMPCs (-1 if none), the smallest-memory one (-1 if
   * none), the smallest A and B. */
  vt_info *vt; /* [n_nodes * nt] */
  /* current stage */
  int words;
  int m;
  int *nodes;     /* [n_nodes] */
  int *supported; /* [nt] */
  int *eoff;      /* [nt * (n_nodes + 1)]: per ti, offsets of node i's TMPCs */
  double *E;      /* [nt * e_stride]: crossing edge bytes per (i, l) */
  int *fk;        /* [nt * (n_nodes + 1)]: the uniformly fastest position per node */
  /* Per ti, when every node has one TMPC that is fastest for every d
   * (uniform_fast) and one that is smallest for every y (uniform_low), the
   * all-fastest and all-smallest cases need only these sums. */
  int *uniform_fast, *uniform_low;                                   /* [nt] */
  double *sum_t, *sum_e, *sum_p, *sum_fa, *sum_fb, *sum_la, *sum_lb; /* [nt] */
  double *min_a, *min_b; /* [nt]: sums over nodes of the smallest A and B */
  int *shared;           /* [nt]: the greedy choice is shared over d */
  int *yf, *yinf;        /* [nt]: all-fastest fits for y <= yf; infeasible for y >= yinf */
  size_t e_stride;
  /* shared greedy: d-free extra loads (per ti, computed on first use) and
   * the per-y results */
  shared_ws *ws;      /* [nt] */
  uint32_t *dc_stamp; /* [nt]: stamp of ws */
  int ys_len;         /* S + 2 */
  uint32_t *ys_stamp; /* [nt * ys_len] */
  unsigned char *ys_state;
  double *ys_t, *ys_e, *ys_p;
  /* prepared (ti, di) */
  int prep_ti, prep_di;
  double *c, *ma, *mb; /* [per-ti usable count] */
  int *fast, *low, *H; /* [n_nodes] */
  swap *sorter;
  /* exact mode scratch */
  double *suf_c, *suf_mem, *mem;
  int *cur;
  /* memo: per (ti, di) a row over y, NaN where not known yet */
  double *memo;
  uint32_t *row_stamp; /* [nt * nd] */
  double *row_lb;      /* [nt * nd]: pp_stage_lower_bound, set with the row */
  size_t *memo_off;    /* [nt * nd] */
  size_t memo_total;
  int *memo_len; /* [nt * nd] */
  uint32_t gen;
};

static const pp_tmpc *usable(const pp_stage_eval *ev, int v, int ti, int l) {
  const pp_tmpc_list *list = pp_graph_tmpcs(ev->g, v, ev->tv[ti]);
  return &list->tmpcs[ev->use_idx[ev->use_off[v * ev->nt + ti] + l]];
}

/* The dominance tests of pp_stage_set for one node: the first TMPC no slower
 * than any other in compute, edge bytes and parameters and clearly faster
 * than any earlier one (ties go to the first); E[l] are its edge bytes. */
static int fastest_for_all_d(const pp_stage_eval *ev, int v, int ti, int L, const double *E) {
  for (int l = 0; l < L; l++) {
    const pp_tmpc *x = usable(ev, v, ti, l);
    int dom = 1;
    for (int o = 0; o < L && dom; o++) {
      if (o == l) continue;
      const pp_tmpc *y = usable(ev, v, ti, o);
      double ex = E[l], ey = E[o];
      if (!(x->time_per_sample <= y->time_per_sample && ex <= ey && x->parameter_size <= y->parameter_size))
        dom = 0;
      else if (o < l && !(x->time_per_sample * (1 + 1e-12) < y->time_per_sample || ex * (1 + 1e-12) < ey))
        dom = 0;
    }
    if (dom) return l;
  }
  return -1;
}

/* Fills the per-TMPC and per-(node, ti) tables that do not depend on the
 * stage. */
static void precompute(pp_stage_eval *ev) {
  const pp_graph *g = ev->g;
  const int n = g->n_nodes, nt = ev->nt, nd = ev->nd;
  const int n_use = ev->use_off[n * nt];
  const double N = (double)ev->p->microbatches;
  ev->un = pp_xmalloc(sizeof(tmpc_num) * (size_t)(n_use + 1));
  ev->u_rs = pp_xmalloc(sizeof(double) * ((size_t)n_use * (size_t)nd + 1));
  ev->u_cp = pp_xmalloc(sizeof(double) * ((size_t)n_use * (size_t)nd + 1));
  ev->w_off = pp_xmalloc(sizeof(int) * (size_t)(n_use + 1));
  size_t nw = 0;
  for (int v = 0; v < n; v++)
    nw += (size_t)(g->nodes[v].in_deg + g->nodes[v].out_deg) *
          (size_t)(ev->use_off[(v + 1) * nt] - ev->use_off[v * nt]);
  ev->w = pp_xmalloc(sizeof(double) * (nw + 1));
  ev->nb_off = pp_xmalloc(sizeof(int) * (size_t)(n + 1));
  ev->nb = pp_xmalloc(sizeof(int) * (size_t)(2 * g->n_edges + 1));
  int q = 0;
  for (int v = 0; v < n; v++) {
    const pp_node *nd_ = &g->nodes[v];
    ev->nb_off[v] = q;
    for (int j = 0; j < nd_->in_deg; j++) ev->nb[q++] = g->edges[nd_->in_edges[j]].src;
    for (int j = 0; j < nd_->out_deg; j++) ev->nb[q++] = g->edges[nd_->out_edges[j]].dst;
  }
  ev->nb_off[n] = q;
  ev->vt = pp_xcalloc((size_t)n * (size_t)nt + 1, sizeof(vt_info));
  double *zero = pp_xcalloc((size_t)n_use + 1, sizeof(double));
  size_t wq = 0;
  for (int v = 0; v < n; v++) {
    const pp_node *nd_ = &g->nodes[v];
    const int deg = nd_->in_deg + nd_->out_deg;
    for (int ti = 0; ti < nt; ti++) {
      const int u0 = ev->use_off[v * nt + ti], L = ev->use_off[v * nt + ti + 1] - u0;
      for (int l = 0; l < L; l++) {
        const int u = u0 + l;
        const pp_tmpc *m = usable(ev, v, ti, l);
        ev->un[u].t = m->time_per_sample;
        ev->un[u].p = m->parameter_size;
        ev->un[u].a = m->mem_a;
        ev->un[u].b = m->mem_b;
        for (int di = 0; di < nd; di++) {
          const int d = ev->dv[di];
          ev->u_rs[(size_t)u * (size_t)nd + (size_t)di] = 4 * (d - 1) * m->parameter_size / d / N;
          ev->u_cp[(size_t)u * (size_t)nd + (size_t)di] = m->time_per_sample / d;
        }
        ev->w_off[u] = (int)wq;
        for (int j = 0; j < nd_->in_deg; j++)
          ev->w[wq++] = 2 * (g->edges[nd_->in_edges[j]].cost + m->sync_fw[j]);
        for (int j = 0; j < nd_->out_deg; j++)
          ev->w[wq++] = 2 * (g->edges[nd_->out_edges[j]].cost + m->sync_bw[j]);
      }
      const size_t vt = (size_t)v * (size_t)nt + (size_t)ti;
      int sync_uniform = 1, p_equal = 1;
      double ma = INFINITY, mb = INFINITY;
      for (int l = 0; l < L; l++) {
        const int u = u0 + l;
        if (memcmp(ev->w + ev->w_off[u], ev->w + ev->w_off[u0], sizeof(double) * (size_t)deg) != 0)
          sync_uniform = 0;
        if (ev->un[u].p != ev->un[u0].p) p_equal = 0;
        if (ev->un[u].a < ma) ma = ev->un[u].a;
        if (ev->un[u].b < mb) mb = ev->un[u].b;
      }
      vt_info *vi = &ev->vt[vt];
      vi->u0 = u0;
      vi->L = L;
      vi->nb0 = ev->nb_off[v];
      vi->deg = deg;
      vi->flags = (sync_uniform ? VT_SYNC_UNIFORM : 0) | (p_equal ? VT_P_EQUAL : 0);
      vi->mina = ma;
      vi->minb = mb;
      /* with equal edge bytes for all TMPCs, the fastest does not depend on
       * the stage */
      vi->fast = sync_uniform && L > 0 ? fastest_for_all_d(ev, v, ti, L, zero) : -1;
      int lw = -1;
      for (int l = 0; l < L && lw < 0; l++) {
        int dom = 1;
        for (int o = 0; o < L; o++)
          if (!(ev->un[u0 + l].a <= ev->un[u0 + o].a && ev->un[u0 + l].b <= ev->un[u0 + o].b)) dom = 0;
        if (dom) lw = l;
      }
      vi->low = lw;
    }
  }
  free(zero);
}

pp_stage_eval *pp_stage_eval_new(const pp_graph *g, const pp_problem *p) {
  pp_stage_eval *ev = pp_xcalloc(1, sizeof *ev);
  ev->g = g;
  ev->p = p;
  ev->S = pp_problem_max_s(p);
  /* tensor-parallel degrees: those of the graph that the problem allows */
  ev->tv = pp_xmalloc(sizeof(int) * (size_t)(g->n_degrees + 1));
  for (int i = 0; i < g->n_degrees; i++) {
    int t = g->degrees[i];
    if (!pp_problem_allows_t(p, t)) continue;
    ev->tv[ev->nt++] = t;
  }
  /* data-parallel degrees: the allowed ones, ascending */
  ev->dv = pp_xmalloc(sizeof(int) * 64);
  int cap = 64;
  for (int d = 1; d <= ev->S; d++) {
    if (!pp_problem_allows_d(p, d)) continue;
    if (ev->nd == cap) ev->dv = pp_xrealloc(ev->dv, sizeof(int) * (size_t)(cap *= 2));
    ev->dv[ev->nd++] = d;
  }
  /* usable TMPCs per (node, ti) */
  int n = g->n_nodes, total = 0;
  ev->use_off = pp_xmalloc(sizeof(int) * ((size_t)n * (size_t)ev->nt + 1));
  for (int v = 0; v < n; v++)
    for (int ti = 0; ti < ev->nt; ti++) {
      const pp_tmpc_list *list = pp_graph_tmpcs(g, v, ev->tv[ti]);
      if (list) total += list->count;
    }
  ev->use_idx = pp_xmalloc(sizeof(int) * (size_t)(total + 1));
  int k = 0, max_per_ti = 0;
  for (int ti = 0; ti < ev->nt; ti++) {
    int this_ti = 0;
    for (int v = 0; v < n; v++) {
      const pp_tmpc_list *list = pp_graph_tmpcs(g, v, ev->tv[ti]);
      if (list) this_ti += list->count;
    }
    if (this_ti > max_per_ti) max_per_ti = this_ti;
  }
  for (int v = 0; v < n; v++)
    for (int ti = 0; ti < ev->nt; ti++) {
      ev->use_off[v * ev->nt + ti] = k;
      const pp_tmpc_list *list = pp_graph_tmpcs(g, v, ev->tv[ti]);
      for (int l = 0; list && l < list->count; l++)
        if (!(p->no_recompute && list->tmpcs[l].is_recompute)) ev->use_idx[k++] = l;
    }
  ev->use_off[n * ev->nt] = k;
  precompute(ev);
  /* stage scratch */
  const size_t nt1 = (size_t)ev->nt + 1;
  ev->words = pp_bits_words(n);
  ev->nodes = pp_xmalloc(sizeof(int) * (size_t)n);
  ev->supported = pp_xcalloc(nt1, sizeof(int));
  ev->uniform_fast = pp_xcalloc(nt1, sizeof(int));
  ev->uniform_low = pp_xcalloc(nt1, sizeof(int));
  ev->shared = pp_xcalloc(nt1, sizeof(int));
  ev->yf = pp_xcalloc(nt1, sizeof(int));
  ev->yinf = pp_xcalloc(nt1, sizeof(int));
  double **sums[] = {&ev->sum_t,  &ev->sum_e,  &ev->sum_p, &ev->sum_fa, &ev->sum_fb,
                     &ev->sum_la, &ev->sum_lb, &ev->min_a, &ev->min_b};
  for (size_t i = 0; i < sizeof sums / sizeof sums[0]; i++) *sums[i] = pp_xcalloc(nt1, sizeof(double));
  ev->eoff = pp_xmalloc(sizeof(int) * nt1 * (size_t)(n + 1));
  ev->fk = pp_xmalloc(sizeof(int) * nt1 * (size_t)(n + 1));
  ev->e_stride = (size_t)max_per_ti + 1;
  ev->E = pp_xmalloc(sizeof(double) * ev->e_stride * nt1);
  ev->ws = pp_xcalloc(nt1, sizeof(shared_ws));
  for (int ti = 0; ti < ev->nt; ti++) {
    shared_ws *ws = &ev->ws[ti];
    ws->fa = pp_xmalloc(sizeof(double) * (size_t)(n + 1));
    ws->fb = pp_xmalloc(sizeof(double) * (size_t)(n + 1));
    ws->pa = pp_xmalloc(sizeof(double) * ev->e_stride);
    ws->pb = pp_xmalloc(sizeof(double) * ev->e_stride);
    ws->c_i = pp_xmalloc(sizeof(int) * ev->e_stride);
    ws->c_k = pp_xmalloc(sizeof(int) * ev->e_stride);
    ws->c_dc = pp_xmalloc(sizeof(double) * ev->e_stride);
    ws->c_bad = pp_xmalloc(ev->e_stride);
  }
  ev->dc_stamp = pp_xcalloc(nt1, sizeof(uint32_t));
  ev->ys_len = ev->S + 2;
  const size_t ys = (size_t)ev->ys_len * nt1;
  ev->ys_stamp = pp_xcalloc(ys, sizeof(uint32_t));
  ev->ys_state = pp_xcalloc(ys, 1);
  ev->ys_t = pp_xmalloc(sizeof(double) * ys);
  ev->ys_e = pp_xmalloc(sizeof(double) * ys);
  ev->ys_p = pp_xmalloc(sizeof(double) * ys);
  ev->c = pp_xmalloc(sizeof(double) * ev->e_stride);
  ev->ma = pp_xmalloc(sizeof(double) * ev->e_stride);
  ev->mb = pp_xmalloc(sizeof(double) * ev->e_stride);
  ev->mem = pp_xmalloc(sizeof(double) * ev->e_stride);
  ev->sorter = pp_xmalloc(sizeof(swap) * ev->e_stride);
  ev->fast = pp_xmalloc(sizeof(int) * (size_t)(n + 1));
  ev->low = pp_xmalloc(sizeof(int) * (size_t)(n + 1));
  ev->H = pp_xmalloc(sizeof(int) * (size_t)(n + 1));
  ev->cur = pp_xmalloc(sizeof(int) * (size_t)(n + 1));
  ev->suf_c = pp_xmalloc(sizeof(double) * (size_t)(n + 2));
  ev->suf_mem = pp_xmalloc(sizeof(double) * (size_t)(n + 2));
  /* memo: y in 0..S/d+1 for every (ti, di) */
  ev->memo_off = pp_xmalloc(sizeof(size_t) * (size_t)(ev->nt * ev->nd + 1));
  ev->memo_len = pp_xmalloc(sizeof(int) * (size_t)(ev->nt * ev->nd + 1));
  ev->row_stamp = pp_xcalloc((size_t)(ev->nt * ev->nd + 1), sizeof(uint32_t));
  ev->row_lb = pp_xcalloc((size_t)(ev->nt * ev->nd + 1), sizeof(double));
  size_t off = 0;
  for (int ti = 0; ti < ev->nt; ti++)
    for (int di = 0; di < ev->nd; di++) {
      ev->memo_off[ti * ev->nd + di] = off;
      ev->memo_len[ti * ev->nd + di] = ev->S / ev->dv[di] + 2;
      off += (size_t)ev->S / (size_t)ev->dv[di] + 2;
    }
  ev->memo_total = off + 1;
  ev->memo = pp_xmalloc(sizeof(double) * (off + 1));
  ev->gen = 1;
  ev->prep_ti = ev->prep_di = -1;
  return ev;
}

void pp_stage_eval_free(pp_stage_eval *ev) {
  if (!ev) return;
  free(ev->tv);
  free(ev->dv);
  free(ev->use_off);
  free(ev->use_idx);
  free(ev->un);
  free(ev->w_off);
  free(ev->w);
  free(ev->u_rs);
  free(ev->u_cp);
  free(ev->nb_off);
  free(ev->nb);
  free(ev->vt);
  free(ev->uniform_fast);
  free(ev->uniform_low);
  free(ev->shared);
  free(ev->yf);
  free(ev->yinf);
  free(ev->sum_t);
  free(ev->sum_e);
  free(ev->sum_p);
  free(ev->sum_fa);
  free(ev->sum_fb);
  free(ev->sum_la);
  free(ev->sum_lb);
  free(ev->min_a);
  free(ev->min_b);
  free(ev->nodes);
  free(ev->supported);
  free(ev->eoff);
  free(ev->fk);
  free(ev->E);
  for (int ti = 0; ti < ev->nt; ti++) {
    shared_ws *ws = &ev->ws[ti];
    free(ws->fa);
    free(ws->fb);
    free(ws->pa);
    free(ws->pb);
    free(ws->c_i);
    free(ws->c_k);
    free(ws->c_dc);
    free(ws->c_bad);
  }
  free(ev->ws);
  free(ev->dc_stamp);
  free(ev->ys_stamp);
  free(ev->ys_state);
  free(ev->ys_t);
  free(ev->ys_e);
  free(ev->ys_p);
  free(ev->c);
  free(ev->ma);
  free(ev->mb);
  free(ev->mem);
  free(ev->sorter);
  free(ev->fast);
  free(ev->low);
  free(ev->H);
  free(ev->cur);
  free(ev->suf_c);
  free(ev->suf_mem);
  free(ev->memo_off);
  free(ev->memo_len);
  free(ev->memo);
  free(ev->row_stamp);
  free(ev->row_lb);
  free(ev);
}

int pp_stage_n_degrees(const pp_stage_eval *ev, const int **t_values) {
  *t_values = ev->tv;
  return ev->nt;
}

int pp_stage_n_dp(const pp_stage_eval *ev, const int **d_values) {
  *d_values = ev->dv;
  return ev->nd;
}

int pp_stage_nodes(const pp_stage_eval *ev, const int **nodes) {
  *nodes = ev->nodes;
  return ev->m;
}

/* The tests of pp_stage_cost that need no knapsack, as functions of y. */
static int fast_fits(const pp_stage_eval *ev, int ti, int y) {
  return ev->uniform_fast[ti] && ev->sum_fa[ti] * y + ev->sum_fb[ti] <= ev->p->memory;
}

static int low_exceeds(const pp_stage_eval *ev, int ti, int y) {
  const double M = ev->p->memory;
  return (ev->uniform_low[ti] && ev->sum_la[ti] * y + ev->sum_lb[ti] > M) ||
         ev->min_a[ti] * y + ev->min_b[ti] > M * (1 + 1e-12);
}

/* Both tests are monotone in y (A, B >= 0 and rounding is monotone): binary
 * searches give the last y that fits all-fastest and the first y ruled out. */
static void find_thresholds(pp_stage_eval *ev, int ti) {
  const int ymax = ev->S + 1;
  int lo = 0, hi = ymax; /* fast_fits holds at lo (or lo = 0), fails above hi */
  if (!fast_fits(ev, ti, 1)) {
    hi = 0;
  } else {
    lo = 1;
    while (lo < hi) {
      int mid = lo + (hi - lo + 1) / 2;
      if (fast_fits(ev, ti, mid))
        lo = mid;
      else
        hi = mid - 1;
    }
  }
  ev->yf[ti] = hi;
  lo = 1;
  hi = ymax + 1; /* low_exceeds fails below lo, holds at hi (or hi = ymax + 1) */
  if (low_exceeds(ev, ti, 1)) {
    hi = 1;
  } else {
    while (lo + 1 < hi) {
      int mid = lo + (hi - lo) / 2;
      if (low_exceeds(ev, ti, mid))
        hi = mid;
      else
        lo = mid;
    }
  }
  ev->yinf[ti] = hi <= ymax ? hi : INT_MAX; /* unknown beyond ymax */
}

void pp_stage_set(pp_stage_eval *ev, const uint64_t *c) {
  const pp_graph *g = ev->g;
  const int nt = ev->nt;
  ev->m = 0;
  for (int w = 0; w < ev->words; w++)
    for (uint64_t x = c[w]; x; x &= x - 1) ev->nodes[ev->m++] = w * 64 + __builtin_ctzll(x);
  if (++ev->gen == 0) {
    memset(ev->row_stamp, 0, sizeof(uint32_t) * (size_t)(ev->nt * ev->nd + 1));
    memset(ev->ys_stamp, 0, sizeof(uint32_t) * (size_t)ev->ys_len * (size_t)(nt + 1));
    memset(ev->dc_stamp, 0, sizeof(uint32_t) * (size_t)(nt + 1));
    ev->gen = 1;
  }
  ev->prep_ti = ev->prep_di = -1;
  for (int ti = 0; ti < nt; ti++) {
    int *eoff = ev->eoff + (size_t)ti * (size_t)(g->n_nodes + 1);
    int *fk = ev->fk + (size_t)ti * (size_t)(g->n_nodes + 1);
    double *E = ev->E + (size_t)ti * ev->e_stride;
    int ok = 1, k = 0, ufast = 1, ulow = 1, p_equal = 1;
    double st = 0, se = 0, sp = 0, sfa = 0, sfb = 0, sla = 0, slb = 0, mina = 0, minb = 0;
    for (int i = 0; i < ev->m; i++) {
      const int v = ev->nodes[i];
      const vt_info *vi = &ev->vt[(size_t)v * (size_t)nt + (size_t)ti];
      const int u0 = vi->u0, L = vi->L;
      eoff[i] = k;
      if (L == 0) {
        ok = 0;
        break;
      }
      const int *nb = ev->nb + vi->nb0, deg = vi->deg;
      int f;
      if (vi->flags & VT_SYNC_UNIFORM) {
        const double *w = ev->w + ev->w_off[u0];
        double e = 0.0;
        for (int j = 0; j < deg; j++) e += pp_bit_get(c, nb[j]) ? 0.0 : w[j];
        for (int l = 0; l < L; l++) E[k + l] = e;
        f = vi->fast;
      } else {
        for (int l = 0; l < L; l++) {
          const double *w = ev->w + ev->w_off[u0 + l];
          double e = 0.0;
          for (int j = 0; j < deg; j++) e += pp_bit_get(c, nb[j]) ? 0.0 : w[j];
          E[k + l] = e;
        }
        f = ufast ? fastest_for_all_d(ev, v, ti, L, E + k) : -1;
      }
      if (!(vi->flags & VT_P_EQUAL)) p_equal = 0;
      mina += vi->mina;
      minb += vi->minb;
      if (f < 0) {
        ufast = 0;
      } else {
        const tmpc_num *x = &ev->un[u0 + f];
        fk[i] = k + f;
        st += x->t;
        se += E[k + f];
        sp += x->p;
        sfa += x->a;
        sfb += x->b;
      }
      const int lw = vi->low;
      if (lw < 0) {
        ulow = 0;
      } else {
        sla += ev->un[u0 + lw].a;
        slb += ev->un[u0 + lw].b;
      }
      k += L;
    }
    eoff[ev->m] = k;
    ev->supported[ti] = ok;
    ev->uniform_fast[ti] = ok && ufast;
    ev->uniform_low[ti] = ok && ulow;
    ev->shared[ti] = ok && ufast && p_equal && ev->p->knapsack == PP_KNAPSACK_GREEDY;
    ev->sum_t[ti] = st;
    ev->sum_e[ti] = se;
    ev->sum_p[ti] = sp;
    ev->sum_fa[ti] = sfa;
    ev->sum_fb[ti] = sfb;
    ev->sum_la[ti] = sla;
    ev->sum_lb[ti] = slb;
    ev->min_a[ti] = mina;
    ev->min_b[ti] = minb;
    if (ok) find_thresholds(ev, ti);
  }
}

int pp_stage_supports(const pp_stage_eval *ev, int ti) { return ev->supported[ti]; }

/* Fills c/ma/mb and the fastest choice for (ti, di). */
static void prepare(pp_stage_eval *ev, int ti, int di) {
  if (ev->prep_ti == ti && ev->prep_di == di) return;
  const int *eoff = ev->eoff + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  const double *E = ev->E + (size_t)ti * ev->e_stride;
  const int d = ev->dv[di], nd = ev->nd;
  const double B = ev->p->bandwidth;
  for (int i = 0; i < ev->m; i++) {
    const int u0 = ev->use_off[ev->nodes[i] * ev->nt + ti];
    int best = eoff[i];
    for (int k = eoff[i]; k < eoff[i + 1]; k++) {
      const size_t u = (size_t)(u0 + k - eoff[i]);
      const double resync = ev->u_rs[u * (size_t)nd + (size_t)di];
      const double comm = E[k] / d + resync;
      const double compute = ev->u_cp[u * (size_t)nd + (size_t)di];
      ev->c[k] = comm / B + compute;
      ev->ma[k] = ev->un[u].a;
      ev->mb[k] = ev->un[u].b;
      if (ev->c[best] > ev->c[k]) best = k;
    }
    ev->fast[i] = best;
  }
  ev->prep_ti = ti;
  ev->prep_di = di;
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
  const int *eoff = ev->eoff + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  const double M = ev->p->memory;
  const int m = ev->m;
  for (int k = 0; k < eoff[m]; k++) ev->mem[k] = ev->ma[k] * y + ev->mb[k];
  double mem_fast = 0.0;
  for (int i = 0; i < m; i++) mem_fast += ev->mem[ev->fast[i]];
  for (int i = 0; i < m; i++) ev->H[i] = ev->fast[i];
  if (mem_fast <= M) {
    double r = 0.0;
    for (int i = 0; i < m; i++) r += ev->c[ev->fast[i]];
    return r;
  }
  double mem_low = 0.0;
  for (int i = 0; i < m; i++) {
    int lo = eoff[i];
    for (int k = eoff[i] + 1; k < eoff[i + 1]; k++)
      if (ev->mem[lo] > ev->mem[k]) lo = k;
    mem_low += ev->mem[lo];
  }
  if (mem_low > M) {
    if (y < ev->yinf[ti]) ev->yinf[ti] = y; /* mem_low is monotone in y */
    return INFINITY;
  }
  double shave = mem_fast - M;
  int ns = 0;
  for (int i = 0; i < m; i++)
    for (int k = eoff[i]; k < eoff[i + 1]; k++) {
      double saving = ev->mem[ev->H[i]] - ev->mem[k];
      if (saving > 1e-9) {
        ev->sorter[ns].key = (ev->c[k] - ev->c[ev->H[i]]) / saving;
        ev->sorter[ns].i = i;
        ev->sorter[ns].l = k;
        ns++;
      }
    }
  /* Apply swaps in sorted order until the stage fits; a heap yields that
   * order without sorting the swaps that are never applied. */
  swap *h = ev->sorter;
  for (int i = ns / 2 - 1; i >= 0; i--) sift_down(h, ns, i);
  while (ns > 0) {
    int i = h[0].i, k = h[0].l;
    h[0] = h[--ns];
    sift_down(h, ns, 0);
    shave -= ev->mem[ev->H[i]] - ev->mem[k];
    ev->H[i] = k;
    if (shave < 1e-9) break;
  }
  double r = 0.0;
  for (int i = 0; i < m; i++) r += ev->c[ev->H[i]];
  return r;
}

/* Sets up the shared greedy for ti and the current stage (once per stage):
 * per node the fastest TMPC's A and B, per position A and B, and the swaps
 * that can save memory at some y (not larger in both A and B than the
 * fastest), with their d-free extra loads (dE/B + dT; the load at d is that
 * over d since dP = 0).  A swap is marked unclear if its extra load is so
 * small against the load itself that rounding could reorder it at some d. */
static void shared_prepare(pp_stage_eval *ev, int ti) {
  if (ev->dc_stamp[ti] == ev->gen) return;
  const size_t n1 = (size_t)(ev->g->n_nodes + 1);
  const int *eoff = ev->eoff + (size_t)ti * n1;
  const int *fk = ev->fk + (size_t)ti * n1;
  const double *E = ev->E + (size_t)ti * ev->e_stride;
  shared_ws *ws = &ev->ws[ti];
  const double B = ev->p->bandwidth, N = (double)ev->p->microbatches;
  int nc = 0;
  for (int i = 0; i < ev->m; i++) {
    const int u0 = ev->use_off[ev->nodes[i] * ev->nt + ti] - eoff[i];
    const int f = fk[i], uf = u0 + f;
    ws->fa[i] = ev->un[uf].a;
    ws->fb[i] = ev->un[uf].b;
    for (int k = eoff[i]; k < eoff[i + 1]; k++) {
      const int u = u0 + k;
      ws->pa[k] = ev->un[u].a;
      ws->pb[k] = ev->un[u].b;
      if (k == f || (ev->un[u].a >= ev->un[uf].a && ev->un[u].b >= ev->un[uf].b)) continue;
      const double x = (E[k] - E[f]) / B + (ev->un[u].t - ev->un[uf].t);
      const double scale = E[k] / B + ev->un[u].t + 4.0 * ev->S * ev->un[u].p / N / B;
      ws->c_i[nc] = i;
      ws->c_k[nc] = k;
      ws->c_dc[nc] = x;
      ws->c_bad[nc] = x != 0.0 && x < 1e-6 * scale;
      nc++;
    }
  }
  ws->nc = nc;
  ev->dc_stamp[ti] = ev->gen;
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
  const int u0 = ev->use_off[ev->nodes[i] * ev->nt + ti] - eoff[i];
  *shave -= sv[x->c];
  *st += ev->un[u0 + k].t - ev->un[u0 + f].t;
  *se += E[k] - E[f];
  *sp += ev->un[u0 + k].p - ev->un[u0 + f].p;
  if (H) H[i] = k;
}

/* The greedy with d-free keys at y for a shared ti.  Stores the state of y
 * (and the sums of T, E, P over the chosen TMPCs) and, if H is not NULL,
 * writes the chosen position per node to H. */
static int shared_greedy(pp_stage_eval *ev, int ti, int y, int *H) {
  const size_t n1 = (size_t)(ev->g->n_nodes + 1);
  const int *eoff = ev->eoff + (size_t)ti * n1;
  const int *fk = ev->fk + (size_t)ti * n1;
  const double *E = ev->E + (size_t)ti * ev->e_stride;
  const double M = ev->p->memory;
  const int m = ev->m;
  const size_t slot = (size_t)ti * (size_t)ev->ys_len + (size_t)y;
  shared_prepare(ev, ti);
  const shared_ws *ws = &ev->ws[ti];
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
  double st = ev->sum_t[ti], se = ev->sum_e[ti], sp = ev->sum_p[ti];
  int state = YS_SUMS;
  if (mem_fast <= M) {
    /* all-fastest */
  } else if (mem_low > M) {
    state = YS_INFEASIBLE;
    if (y < ev->yinf[ti]) ev->yinf[ti] = y; /* mem_low is monotone in y */
  } else {
    double *sv = ev->mem; /* savings by swap */
    swap *h = ev->sorter;
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
  ev->ys_stamp[slot] = ev->gen;
  ev->ys_state[slot] = (unsigned char)state;
  ev->ys_t[slot] = st;
  ev->ys_e[slot] = se;
  ev->ys_p[slot] = sp;
  return state;
}

/* Exact: depth-first branch and bound over nodes in order; the first
 * optimum found in lexicographic order of choices is kept. */
static void bnb(pp_stage_eval *ev, const int *eoff, int i, double cost, double mem, double *best) {
  if (i == ev->m) {
    if (cost < *best && mem <= ev->p->memory) {
      *best = cost;
      memcpy(ev->H, ev->cur, sizeof(int) * (size_t)ev->m);
    }
    return;
  }
  if (cost + ev->suf_c[i] >= *best) return;
  if (mem + ev->suf_mem[i] > ev->p->memory) return;
  for (int k = eoff[i]; k < eoff[i + 1]; k++) {
    ev->cur[i] = k;
    bnb(ev, eoff, i + 1, cost + ev->c[k], mem + ev->mem[k], best);
  }
}

static double exact(pp_stage_eval *ev, int ti, int y) {
  const int *eoff = ev->eoff + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  const int m = ev->m;
  for (int k = 0; k < eoff[m]; k++) ev->mem[k] = ev->ma[k] * y + ev->mb[k];
  ev->suf_c[m] = 0.0;
  ev->suf_mem[m] = 0.0;
  for (int i = m - 1; i >= 0; i--) {
    double bc = INFINITY, bm = INFINITY;
    for (int k = eoff[i]; k < eoff[i + 1]; k++) {
      if (ev->c[k] < bc) bc = ev->c[k];
      if (ev->mem[k] < bm) bm = ev->mem[k];
    }
    ev->suf_c[i] = ev->suf_c[i + 1] + bc;
    ev->suf_mem[i] = ev->suf_mem[i + 1] + bm;
  }
  double best = INFINITY;
  bnb(ev, eoff, 0, 0.0, 0.0, &best);
  if (best == INFINITY) return INFINITY;
  /* report the sum in node order, like the greedy */
  double r = 0.0;
  for (int i = 0; i < m; i++) r += ev->c[ev->H[i]];
  return r;
}

static double solve(pp_stage_eval *ev, int ti, int di, int y) {
  prepare(ev, ti, di);
  return ev->p->knapsack == PP_KNAPSACK_EXACT ? exact(ev, ti, y) : greedy(ev, ti, y);
}

/* The load of TMPCs with sums st, se, sp of T, E, P at degree d. */
static double load_of_sums(const pp_stage_eval *ev, int d, double st, double se, double sp) {
  const double comm = se / d + 4 * (d - 1) * sp / d / (double)ev->p->microbatches;
  return comm / ev->p->bandwidth + st / d;
}

/* The cost without the memo. */
static double compute_cost(pp_stage_eval *ev, int ti, int di, int y) {
  if (y <= ev->yf[ti]) return load_of_sums(ev, ev->dv[di], ev->sum_t[ti], ev->sum_e[ti], ev->sum_p[ti]);
  if (y >= ev->yinf[ti]) return INFINITY;
  if (ev->shared[ti] && y < ev->ys_len) {
    const size_t slot = (size_t)ti * (size_t)ev->ys_len + (size_t)y;
    int state = ev->ys_stamp[slot] == ev->gen ? ev->ys_state[slot] : shared_greedy(ev, ti, y, NULL);
    if (state == YS_INFEASIBLE) return INFINITY;
    if (state == YS_SUMS) return load_of_sums(ev, ev->dv[di], ev->ys_t[slot], ev->ys_e[slot], ev->ys_p[slot]);
  }
  return solve(ev, ti, di, y);
}

/* The memo row of (ti, di), set up for the current stage: the regions that
 * need no knapsack filled in, NaN elsewhere. */
static double *memo_row(pp_stage_eval *ev, int ti, int di) {
  const int r = ti * ev->nd + di;
  double *row = ev->memo + ev->memo_off[r];
  if (ev->row_stamp[r] == ev->gen) return row;
  const int len = ev->memo_len[r];
  const int a = ev->yf[ti] < len - 1 ? ev->yf[ti] : len - 1;
  const int b = ev->yinf[ti] < len ? ev->yinf[ti] : len;
  row[0] = INFINITY;
  const double fast =
      ev->uniform_fast[ti] ? load_of_sums(ev, ev->dv[di], ev->sum_t[ti], ev->sum_e[ti], ev->sum_p[ti]) : 0.0;
  ev->row_lb[r] = fast * (1 - 1e-12);
  for (int y = 1; y <= a; y++) row[y] = fast;
  for (int y = a + 1; y < b; y++) row[y] = NAN;
  for (int y = b > a + 1 ? b : a + 1; y < len; y++) row[y] = INFINITY;
  ev->row_stamp[r] = ev->gen;
  return row;
}

double pp_stage_cost(pp_stage_eval *ev, int ti, int di, int y) {
  if (!ev->supported[ti] || y < 1) return INFINITY;
  double *row = memo_row(ev, ti, di);
  const int len = ev->memo_len[ti * ev->nd + di];
  if (y < len && !isnan(row[y])) return row[y];
  const double r = compute_cost(ev, ti, di, y);
  if (y < len) row[y] = r;
  return r;
}

const double *pp_stage_cost_row(pp_stage_eval *ev, int ti, int di, int *len) {
  *len = ev->memo_len[ti * ev->nd + di];
  return memo_row(ev, ti, di);
}

double pp_stage_lower_bound(const pp_stage_eval *ev, int ti, int di) {
  if (!ev->supported[ti]) return INFINITY;
  if (!ev->uniform_fast[ti]) return 0.0;
  if (ev->row_stamp[ti * ev->nd + di] == ev->gen) return ev->row_lb[ti * ev->nd + di];
  return load_of_sums(ev, ev->dv[di], ev->sum_t[ti], ev->sum_e[ti], ev->sum_p[ti]) * (1 - 1e-12);
}

double pp_stage_choose(pp_stage_eval *ev, int ti, int di, int y, int *choice) {
  if (!ev->supported[ti] || y < 1) return INFINITY;
  const double r = pp_stage_cost(ev, ti, di, y);
  if (r == INFINITY) return r;
  const int *eoff = ev->eoff + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  const int *fk = ev->fk + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  if (y <= ev->yf[ti]) {
    for (int i = 0; i < ev->m; i++) ev->H[i] = fk[i];
  } else if (!(ev->shared[ti] && y < ev->ys_len && shared_greedy(ev, ti, y, ev->H) == YS_SUMS)) {
    solve(ev, ti, di, y);
  }
  for (int i = 0; i < ev->m; i++)
    choice[i] = ev->use_idx[ev->use_off[ev->nodes[i] * ev->nt + ti] + (ev->H[i] - eoff[i])];
  return r;
}
