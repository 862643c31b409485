/*
 * stage.c - stage cost and the per-stage TMPC knapsack.
 *
 * The arithmetic follows the reference planner expression by expression (same
 * order of operations, same summation order) so that optima agree to the last
 * bits; see include/piper/stage.h for the model.
 */
#include "piper/stage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/bitset.h"

typedef struct swap {
  double key;
  int i, l;
} swap;

struct pp_stage_eval {
  const pp_graph *g;
  const pp_problem *p;
  int S;
  int nt, nd;
  int *tv, *dv;          /* [nt], [nd] */
  int *use_off;          /* [n_nodes * nt + 1] into use_idx */
  int *use_idx;          /* usable TMPC positions within the node's list */
  /* current stage */
  int words;
  uint64_t *cbits;       /* [words] */
  int m;
  int *nodes;            /* [n_nodes] */
  int *supported;        /* [nt] */
  int *eoff;             /* [nt * (n_nodes + 1)]: per ti, offsets of node i's TMPCs */
  double *E;             /* [nt * total usable]: crossing edge bytes per (i, l) */
  /* Per ti, when every node has one TMPC that is fastest for every d
   * (uniform_fast) and one that is smallest for every y (uniform_low), the
   * all-fastest and all-smallest cases need only these sums. */
  int *uniform_fast, *uniform_low;          /* [nt] */
  double *sum_t, *sum_e, *sum_p, *sum_fa, *sum_fb, *sum_la, *sum_lb; /* [nt] */
  double *min_a, *min_b; /* [nt]: sums over nodes of the smallest A and B */
  size_t e_stride;
  /* prepared (ti, di) */
  int prep_ti, prep_di;
  double *c, *ma, *mb;   /* [per-ti usable count] */
  int *fast, *low, *H;   /* [n_nodes] */
  swap *sorter;
  /* exact mode scratch */
  double *suf_c, *suf_mem, *mem;
  int *cur;
  /* memo */
  double *memo;
  uint32_t *stamp;
  size_t *memo_off;      /* [nt * nd] */
  size_t memo_total;
  int *memo_len;         /* [nt * nd] */
  uint32_t gen;
};

static const pp_tmpc *usable(const pp_stage_eval *ev, int v, int ti, int l) {
  const pp_tmpc_list *list = pp_graph_tmpcs(ev->g, v, ev->tv[ti]);
  return &list->tmpcs[ev->use_idx[ev->use_off[v * ev->nt + ti] + l]];
}

pp_stage_eval *pp_stage_eval_new(const pp_graph *g, const pp_problem *p) {
  pp_stage_eval *ev = pp_xcalloc(1, sizeof *ev);
  ev->g = g;
  ev->p = p;
  ev->S = pp_problem_max_s(p);
  /* tensor-parallel degrees: those in the graph, <= K, only 1 with no_tp */
  ev->tv = pp_xmalloc(sizeof(int) * (size_t)(g->n_degrees + 1));
  for (int i = 0; i < g->n_degrees; i++) {
    int t = g->degrees[i];
    if (t > p->devices || (p->no_tp && t != 1)) continue;
    ev->tv[ev->nt++] = t;
  }
  /* data-parallel degrees: divisors of N up to S */
  ev->dv = pp_xmalloc(sizeof(int) * 64);
  int cap = 64;
  for (int d = 1; d <= ev->S; d++) {
    if (p->microbatches % d) continue;
    if (p->no_dp && d > 1) break;
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
  /* stage scratch */
  ev->words = pp_bits_words(n);
  ev->cbits = pp_xcalloc((size_t)ev->words, sizeof(uint64_t));
  ev->nodes = pp_xmalloc(sizeof(int) * (size_t)n);
  ev->supported = pp_xcalloc((size_t)ev->nt + 1, sizeof(int));
  ev->uniform_fast = pp_xcalloc((size_t)ev->nt + 1, sizeof(int));
  ev->uniform_low = pp_xcalloc((size_t)ev->nt + 1, sizeof(int));
  double **sums[] = {&ev->sum_t, &ev->sum_e, &ev->sum_p, &ev->sum_fa, &ev->sum_fb, &ev->sum_la, &ev->sum_lb,
                     &ev->min_a, &ev->min_b};
  for (size_t i = 0; i < sizeof sums / sizeof sums[0]; i++) *sums[i] = pp_xcalloc((size_t)ev->nt + 1, sizeof(double));
  ev->eoff = pp_xmalloc(sizeof(int) * (size_t)(ev->nt + 1) * (size_t)(n + 1));
  ev->e_stride = (size_t)max_per_ti + 1;
  ev->E = pp_xmalloc(sizeof(double) * ev->e_stride * (size_t)(ev->nt + 1));
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
  /* memo: y in 1..ceil(S/d) for every (ti, di) */
  ev->memo_off = pp_xmalloc(sizeof(size_t) * (size_t)(ev->nt * ev->nd + 1));
  ev->memo_len = pp_xmalloc(sizeof(int) * (size_t)(ev->nt * ev->nd + 1));
  size_t off = 0;
  for (int ti = 0; ti < ev->nt; ti++)
    for (int di = 0; di < ev->nd; di++) {
      ev->memo_off[ti * ev->nd + di] = off;
      ev->memo_len[ti * ev->nd + di] = ev->S / ev->dv[di] + 2;
      off += (size_t)ev->S / (size_t)ev->dv[di] + 2;
    }
  ev->memo_total = off + 1;
  ev->memo = pp_xmalloc(sizeof(double) * (off + 1));
  ev->stamp = pp_xcalloc(off + 1, sizeof(uint32_t));
  ev->gen = 1;
  ev->prep_ti = ev->prep_di = -1;
  return ev;
}

void pp_stage_eval_free(pp_stage_eval *ev) {
  if (!ev) return;
  free(ev->tv); free(ev->dv); free(ev->use_off); free(ev->use_idx);
  free(ev->uniform_fast); free(ev->uniform_low);
  free(ev->sum_t); free(ev->sum_e); free(ev->sum_p); free(ev->sum_fa); free(ev->sum_fb); free(ev->sum_la);
  free(ev->sum_lb); free(ev->min_a); free(ev->min_b);
  free(ev->cbits); free(ev->nodes); free(ev->supported); free(ev->eoff); free(ev->E);
  free(ev->c); free(ev->ma); free(ev->mb); free(ev->mem); free(ev->sorter);
  free(ev->fast); free(ev->low); free(ev->H); free(ev->cur); free(ev->suf_c); free(ev->suf_mem);
  free(ev->memo_off); free(ev->memo_len); free(ev->memo); free(ev->stamp);
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

void pp_stage_set(pp_stage_eval *ev, const uint64_t *c) {
  const pp_graph *g = ev->g;
  memcpy(ev->cbits, c, sizeof(uint64_t) * (size_t)ev->words);
  ev->m = 0;
  for (int w = 0; w < ev->words; w++)
    for (uint64_t x = c[w]; x; x &= x - 1) ev->nodes[ev->m++] = w * 64 + __builtin_ctzll(x);
  if (++ev->gen == 0) {
    memset(ev->stamp, 0, sizeof(uint32_t) * ev->memo_total);
    ev->gen = 1;
  }
  ev->prep_ti = ev->prep_di = -1;
  for (int ti = 0; ti < ev->nt; ti++) {
    int *eoff = ev->eoff + (size_t)ti * (size_t)(g->n_nodes + 1);
    double *E = ev->E + (size_t)ti * ev->e_stride;
    int ok = 1, k = 0, ufast = 1, ulow = 1;
    double st = 0, se = 0, sp = 0, sfa = 0, sfb = 0, sla = 0, slb = 0, mina = 0, minb = 0;
    for (int i = 0; i < ev->m; i++) {
      int v = ev->nodes[i];
      const pp_node *nd = &g->nodes[v];
      int L = ev->use_off[v * ev->nt + ti + 1] - ev->use_off[v * ev->nt + ti];
      eoff[i] = k;
      if (L == 0) {
        ok = 0;
        break;
      }
      for (int l = 0; l < L; l++) {
        const pp_tmpc *m = usable(ev, v, ti, l);
        double e = 0.0;
        for (int j = 0; j < nd->in_deg; j++) {
          const pp_edge *ed = &g->edges[nd->in_edges[j]];
          if (!pp_bit_get(c, ed->src)) e += 2 * (ed->cost + m->sync_fw[j]);
        }
        for (int j = 0; j < nd->out_deg; j++) {
          const pp_edge *ed = &g->edges[nd->out_edges[j]];
          if (!pp_bit_get(c, ed->dst)) e += 2 * (ed->cost + m->sync_bw[j]);
        }
        E[k++] = e;
      }
      /* A TMPC fastest for every d: no slower in compute, edge bytes and
       * parameters than any other, and clearly faster than any earlier one
       * (ties go to the first).  One smallest for every y: no larger in A
       * and B than any other. */
      int f = -1, lw = -1;
      double ma = INFINITY, mb = INFINITY;
      for (int l = 0; l < L; l++) {
        const pp_tmpc *x = usable(ev, v, ti, l);
        if (x->mem_a < ma) ma = x->mem_a;
        if (x->mem_b < mb) mb = x->mem_b;
      }
      mina += ma;
      minb += mb;
      for (int l = 0; l < L && (ufast || ulow); l++) {
        const pp_tmpc *x = usable(ev, v, ti, l);
        int dom_f = 1, dom_l = 1;
        for (int o = 0; o < L; o++) {
          if (o == l) continue;
          const pp_tmpc *y = usable(ev, v, ti, o);
          double ex = E[k - L + l], ey = E[k - L + o];
          if (!(x->time_per_sample <= y->time_per_sample && ex <= ey && x->parameter_size <= y->parameter_size))
            dom_f = 0;
          else if (o < l && !(x->time_per_sample * (1 + 1e-12) < y->time_per_sample ||
                              ex * (1 + 1e-12) < ey))
            dom_f = 0;
          if (!(x->mem_a <= y->mem_a && x->mem_b <= y->mem_b)) dom_l = 0;
        }
        if (dom_f && f < 0) f = l;
        if (dom_l && lw < 0) lw = l;
      }
      if (f < 0) {
        ufast = 0;
      } else {
        const pp_tmpc *x = usable(ev, v, ti, f);
        st += x->time_per_sample;
        se += E[k - L + f];
        sp += x->parameter_size;
        sfa += x->mem_a;
        sfb += x->mem_b;
      }
      if (lw < 0) {
        ulow = 0;
      } else {
        sla += usable(ev, v, ti, lw)->mem_a;
        slb += usable(ev, v, ti, lw)->mem_b;
      }
    }
    eoff[ev->m] = k;
    ev->supported[ti] = ok;
    ev->uniform_fast[ti] = ok && ufast;
    ev->uniform_low[ti] = ok && ulow;
    ev->sum_t[ti] = st;
    ev->sum_e[ti] = se;
    ev->sum_p[ti] = sp;
    ev->sum_fa[ti] = sfa;
    ev->sum_fb[ti] = sfb;
    ev->sum_la[ti] = sla;
    ev->sum_lb[ti] = slb;
    ev->min_a[ti] = mina;
    ev->min_b[ti] = minb;
  }
}

int pp_stage_supports(const pp_stage_eval *ev, int ti) { return ev->supported[ti]; }

/* Fills c/ma/mb and the fastest choice for (ti, di). */
static void prepare(pp_stage_eval *ev, int ti, int di) {
  if (ev->prep_ti == ti && ev->prep_di == di) return;
  const int *eoff = ev->eoff + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  const double *E = ev->E + (size_t)ti * ev->e_stride;
  const int d = ev->dv[di];
  const double N = (double)ev->p->microbatches, B = ev->p->bandwidth;
  for (int i = 0; i < ev->m; i++) {
    int v = ev->nodes[i];
    int best = eoff[i];
    for (int k = eoff[i]; k < eoff[i + 1]; k++) {
      const pp_tmpc *m = usable(ev, v, ti, k - eoff[i]);
      const double resync = 4 * (d - 1) * m->parameter_size / d / N;
      const double comm = E[k] / d + resync;
      const double compute = m->time_per_sample / d;
      ev->c[k] = comm / B + compute;
      ev->ma[k] = m->mem_a;
      ev->mb[k] = m->mem_b;
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
  if (x->key != y->key) return x->key < y->key;
  if (x->i != y->i) return x->i < y->i;
  return x->l < y->l;
}

static void sift_down(swap *h, int n, int i) {
  for (;;) {
    int c = 2 * i + 1;
    if (c >= n) return;
    if (c + 1 < n && swap_before(&h[c + 1], &h[c])) c++;
    if (!swap_before(&h[c], &h[i])) return;
    swap t = h[c];
    h[c] = h[i];
    h[i] = t;
    i = c;
  }
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
  if (mem_low > M) return INFINITY;
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

double pp_stage_cost(pp_stage_eval *ev, int ti, int di, int y) {
  if (!ev->supported[ti] || y < 1) return INFINITY;
  size_t slot = ev->memo_off[ti * ev->nd + di] + (size_t)y;
  if (y < ev->memo_len[ti * ev->nd + di] && ev->stamp[slot] == ev->gen) return ev->memo[slot];
  double r;
  const double M = ev->p->memory;
  if (ev->uniform_fast[ti] && ev->sum_fa[ti] * y + ev->sum_fb[ti] <= M) {
    const int d = ev->dv[di];
    const double comm = ev->sum_e[ti] / d + 4 * (d - 1) * ev->sum_p[ti] / d / (double)ev->p->microbatches;
    r = comm / ev->p->bandwidth + ev->sum_t[ti] / d;
  } else if ((ev->uniform_low[ti] && ev->sum_la[ti] * y + ev->sum_lb[ti] > M) ||
             ev->min_a[ti] * y + ev->min_b[ti] > M * (1 + 1e-12)) {
    /* even the smallest TMPC of every node does not fit (the second test
     * is a lower bound on that memory: smallest A and smallest B apart) */
    r = INFINITY;
  } else {
    r = solve(ev, ti, di, y);
  }
  if (y < ev->memo_len[ti * ev->nd + di]) {
    ev->stamp[slot] = ev->gen;
    ev->memo[slot] = r;
  }
  return r;
}

double pp_stage_lower_bound(const pp_stage_eval *ev, int ti, int di) {
  if (!ev->supported[ti]) return INFINITY;
  if (!ev->uniform_fast[ti]) return 0.0;
  const int d = ev->dv[di];
  const double comm = ev->sum_e[ti] / d + 4 * (d - 1) * ev->sum_p[ti] / d / (double)ev->p->microbatches;
  return (comm / ev->p->bandwidth + ev->sum_t[ti] / d) * (1 - 1e-12);
}

double pp_stage_choose(pp_stage_eval *ev, int ti, int di, int y, int *choice) {
  if (!ev->supported[ti] || y < 1) return INFINITY;
  double r = solve(ev, ti, di, y);
  if (r == INFINITY) return r;
  const int *eoff = ev->eoff + (size_t)ti * (size_t)(ev->g->n_nodes + 1);
  for (int i = 0; i < ev->m; i++)
    choice[i] = ev->use_idx[ev->use_off[ev->nodes[i] * ev->nt + ti] + (ev->H[i] - eoff[i])];
  return r;
}
