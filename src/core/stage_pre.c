/*
 * stage_pre.c - the per-graph part of the stage cost model: the degrees in
 * use, the usable TMPCs of every (node, t), their numbers, edge weights and
 * per-d terms, and per (node, t) the facts about dominance that pp_stage_set
 * reads.  Nothing here depends on the stage.
 */
#define PIPER_STAGE_MODULE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stage_int.h"

static const pp_tmpc *usable(const pp_graph *g, const stage_pre *pre, int v, int ti, int l) {
  const pp_tmpc_list *list = pp_graph_tmpcs(g, v, pre->tv[ti]);
  return &list->tmpcs[pre->use_idx[pre->use_off[v * pre->nt + ti] + l]];
}

static int fastest(const pp_graph *g, const stage_pre *pre, int v, int ti, int L, const double *E) {
  for (int l = 0; l < L; l++) {
    const pp_tmpc *x = usable(g, pre, v, ti, l);
    int dom = 1;
    for (int o = 0; o < L && dom; o++) {
      if (o == l) continue;
      const pp_tmpc *y = usable(g, pre, v, ti, o);
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

int pp__stage_fastest_for_all_d(const pp_stage_eval *ev, int v, int ti, int L, const double *E) {
  return fastest(ev->g, &ev->pre, v, ti, L, E);
}

/* The tensor-parallel degrees (those of the graph that the problem allows)
 * and the data-parallel ones (the allowed ones, ascending). */
static void degrees(stage_pre *pre, const pp_graph *g, const pp_problem *p) {
  pre->tv = pp_xmalloc(sizeof(int) * (size_t)(g->n_degrees + 1));
  for (int i = 0; i < g->n_degrees; i++) {
    int t = g->degrees[i];
    if (!pp_problem_allows_t(p, t)) continue;
    pre->tv[pre->nt++] = t;
  }
  pre->dv = pp_xmalloc(sizeof(int) * 64);
  int cap = 64;
  for (int d = 1; d <= pre->S; d++) {
    if (!pp_problem_allows_d(p, d)) continue;
    if (pre->nd == cap) pre->dv = pp_xrealloc(pre->dv, sizeof(int) * (size_t)(cap *= 2));
    pre->dv[pre->nd++] = d;
  }
}

/* The usable TMPCs per (node, ti): all but the recomputing ones under
 * no_recompute. */
static void usable_lists(stage_pre *pre, const pp_graph *g, const pp_problem *p) {
  const int n = g->n_nodes, nt = pre->nt;
  int total = 0;
  pre->use_off = pp_xmalloc(sizeof(int) * ((size_t)n * (size_t)nt + 1));
  for (int v = 0; v < n; v++)
    for (int ti = 0; ti < nt; ti++) {
      const pp_tmpc_list *list = pp_graph_tmpcs(g, v, pre->tv[ti]);
      if (list) total += list->count;
    }
  pre->use_idx = pp_xmalloc(sizeof(int) * (size_t)(total + 1));
  pre->max_per_ti = 0;
  for (int ti = 0; ti < nt; ti++) {
    int this_ti = 0;
    for (int v = 0; v < n; v++) {
      const pp_tmpc_list *list = pp_graph_tmpcs(g, v, pre->tv[ti]);
      if (list) this_ti += list->count;
    }
    if (this_ti > pre->max_per_ti) pre->max_per_ti = this_ti;
  }
  int k = 0;
  for (int v = 0; v < n; v++)
    for (int ti = 0; ti < nt; ti++) {
      pre->use_off[v * nt + ti] = k;
      const pp_tmpc_list *list = pp_graph_tmpcs(g, v, pre->tv[ti]);
      for (int l = 0; list && l < list->count; l++)
        if (!(p->no_recompute && list->tmpcs[l].is_recompute)) pre->use_idx[k++] = l;
    }
  pre->use_off[n * nt] = k;
}

/* The factor of the resync term 4 (d-1) P / (d N B) for degrees (t, d).
 * ZeRO stages 1 and 2 move the all-reduce's volume (a reduce-scatter of the
 * gradients and an all-gather of the updated parameters), stage 3 adds the
 * parameter all-gather of the backward pass: 1.5 times (Rajbhandari et al.
 * 2020, Sec. 7).  On a two-level network each stage starts on a node of its
 * own and takes consecutive devices, t per replica, floor(G/t) replicas per
 * node: with d t <= G the all-reduce runs inside a node (at the intra-node
 * bandwidth Bi); otherwise it is hierarchical over n = ceil(d / g) nodes of
 * g = floor(G/t) replicas: a reduce-scatter inside each node, an all-reduce
 * of 1/g of the bytes across the nodes (every device at B), an all-gather
 * inside the node (Jia et al. 2018, "Highly scalable deep learning training
 * system with mixed-precision"; ring volumes 2(x-1)/x of the data per step,
 * Patarasuk and Yuan 2009): time 4 (g-1)/g P/Bi + 4 (n-1)/n P/(g B) for
 * the reference's 4 (d-1)/d P/B. */
static double resync_factor(const pp_problem *p, int t, int d) {
  const double f = p->zero == 3 ? 1.5 : 1.0;
  const int G = p->devices_per_node;
  if (G <= 0 || d <= 1) return f;
  const double B = p->bandwidth, Bi = p->intra_bandwidth;
  if ((long long)d * t <= G) return f * (B / Bi);
  const int g = G / t > 0 ? G / t : 1, n = (d + g - 1) / g;
  const double flat = 4.0 * (d - 1) / d;
  const double hier = 4.0 * (g - 1) / g * (B / Bi) + 4.0 * (n - 1) / n / g;
  return f * (hier / flat);
}

/* The bytes of m that ZeRO stage zero shards over the replicas. */
static double sharded_bytes(const pp_tmpc *m, int zero) {
  return (zero >= 1 ? m->optimizer_bytes : 0.0) + (zero >= 2 ? m->gradient_bytes : 0.0) +
         (zero >= 3 ? m->weight_bytes : 0.0);
}

/* Per usable TMPC u of node v: its numbers, per-d terms and edge weights
 * (written from w[*wq] on). */
static void tmpc_terms(stage_pre *pre, const pp_graph *g, const pp_problem *p, int v, int ti, size_t *wq) {
  const pp_node *nd_ = &g->nodes[v];
  const int nd = pre->nd;
  const double N = (double)p->microbatches;
  const int u0 = pre->use_off[v * pre->nt + ti], L = pre->use_off[v * pre->nt + ti + 1] - u0;
  for (int l = 0; l < L; l++) {
    const int u = u0 + l;
    const pp_tmpc *m = usable(g, pre, v, ti, l);
    pre->un[u].t = m->time_per_sample;
    pre->un[u].p = m->parameter_size;
    pre->un[u].a = m->mem_a;
    pre->un[u].b = m->mem_b;
    for (int di = 0; di < nd; di++) {
      const int d = pre->dv[di];
      pre->u_rs[(size_t)u * (size_t)nd + (size_t)di] =
          4 * (d - 1) * m->parameter_size / d / N * pre->rs_f[ti * nd + di];
      pre->u_cp[(size_t)u * (size_t)nd + (size_t)di] = m->time_per_sample / d;
    }
    if (pre->zero) {
      const double z = sharded_bytes(m, pre->zero), bz = m->mem_b - z > 0 ? m->mem_b - z : 0.0;
      pre->u_z[u] = z;
      pre->u_bz[u] = bz;
      for (int di = 0; di < nd; di++) pre->u_mb[(size_t)u * (size_t)nd + (size_t)di] = bz + z / pre->dv[di];
    }
    pre->w_off[u] = (int)*wq;
    for (int j = 0; j < nd_->in_deg; j++)
      pre->w[(*wq)++] = 2 * (g->edges[nd_->in_edges[j]].cost + m->sync_fw[j]);
    for (int j = 0; j < nd_->out_deg; j++)
      pre->w[(*wq)++] = 2 * (g->edges[nd_->out_edges[j]].cost + m->sync_bw[j]);
  }
}

/* Under ZeRO, B depends on d: the smallest TMPC must be smallest in A and
 * in both parts of B (so at every d), and the bounds of vt_zero. */
static void zero_facts(stage_pre *pre, int v, int ti, int u0, int L) {
  vt_info *vi = &pre->vt[(size_t)v * (size_t)pre->nt + (size_t)ti];
  vt_zero *vz = &pre->vz[(size_t)v * (size_t)pre->nt + (size_t)ti];
  int lw = -1;
  for (int l = 0; l < L && lw < 0; l++) {
    int dom = 1;
    for (int o = 0; o < L; o++)
      if (!(pre->un[u0 + l].a <= pre->un[u0 + o].a && pre->u_bz[u0 + l] <= pre->u_bz[u0 + o] &&
            pre->u_z[u0 + l] <= pre->u_z[u0 + o]))
        dom = 0;
    if (dom) lw = l;
  }
  vi->low = lw;
  vz->minbz = vz->minz = INFINITY;
  for (int l = 0; l < L; l++) {
    if (pre->u_bz[u0 + l] < vz->minbz) vz->minbz = pre->u_bz[u0 + l];
    if (pre->u_z[u0 + l] < vz->minz) vz->minz = pre->u_z[u0 + l];
  }
}

/* The facts about (v, ti) that pp_stage_set reads; zero[] holds zeros. */
static void node_facts(stage_pre *pre, const pp_graph *g, int v, int ti, const double *zero) {
  const pp_node *nd_ = &g->nodes[v];
  const int deg = nd_->in_deg + nd_->out_deg;
  const int u0 = pre->use_off[v * pre->nt + ti], L = pre->use_off[v * pre->nt + ti + 1] - u0;
  int sync_uniform = 1, p_equal = 1;
  double ma = INFINITY, mb = INFINITY;
  for (int l = 0; l < L; l++) {
    const int u = u0 + l;
    if (memcmp(pre->w + pre->w_off[u], pre->w + pre->w_off[u0], sizeof(double) * (size_t)deg) != 0)
      sync_uniform = 0;
    if (pre->un[u].p != pre->un[u0].p) p_equal = 0;
    if (pre->un[u].a < ma) ma = pre->un[u].a;
    if (pre->un[u].b < mb) mb = pre->un[u].b;
  }
  vt_info *vi = &pre->vt[(size_t)v * (size_t)pre->nt + (size_t)ti];
  vi->u0 = u0;
  vi->L = L;
  vi->nb0 = pre->nb_off[v];
  vi->deg = deg;
  vi->flags = (sync_uniform ? VT_SYNC_UNIFORM : 0) | (p_equal ? VT_P_EQUAL : 0);
  vi->mina = ma;
  vi->minb = mb;
  /* with equal edge bytes for all TMPCs, the fastest does not depend on the
   * stage */
  vi->fast = sync_uniform && L > 0 ? fastest(g, pre, v, ti, L, zero) : -1;
  int lw = -1;
  for (int l = 0; l < L && lw < 0; l++) {
    int dom = 1;
    for (int o = 0; o < L; o++)
      if (!(pre->un[u0 + l].a <= pre->un[u0 + o].a && pre->un[u0 + l].b <= pre->un[u0 + o].b)) dom = 0;
    if (dom) lw = l;
  }
  vi->low = lw;
  if (pre->zero) zero_facts(pre, v, ti, u0, L);
}

void pp__stage_pre_init(stage_pre *pre, const pp_graph *g, const pp_problem *p) {
  memset(pre, 0, sizeof *pre);
  pre->S = pp_problem_max_s(p);
  degrees(pre, g, p);
  usable_lists(pre, g, p);
  const int n = g->n_nodes, nt = pre->nt, nd = pre->nd;
  const int n_use = pre->use_off[n * nt];
  pre->un = pp_xmalloc(sizeof(tmpc_num) * (size_t)(n_use + 1));
  pre->u_rs = pp_xmalloc(sizeof(double) * ((size_t)n_use * (size_t)nd + 1));
  pre->u_cp = pp_xmalloc(sizeof(double) * ((size_t)n_use * (size_t)nd + 1));
  pre->w_off = pp_xmalloc(sizeof(int) * (size_t)(n_use + 1));
  size_t nw = 0;
  for (int v = 0; v < n; v++)
    nw += (size_t)(g->nodes[v].in_deg + g->nodes[v].out_deg) *
          (size_t)(pre->use_off[(v + 1) * nt] - pre->use_off[v * nt]);
  pre->w = pp_xmalloc(sizeof(double) * (nw + 1));
  pre->nb_off = pp_xmalloc(sizeof(int) * (size_t)(n + 1));
  pre->nb = pp_xmalloc(sizeof(int) * (size_t)(2 * g->n_edges + 1));
  int q = 0;
  for (int v = 0; v < n; v++) {
    const pp_node *nd_ = &g->nodes[v];
    pre->nb_off[v] = q;
    for (int j = 0; j < nd_->in_deg; j++) pre->nb[q++] = g->edges[nd_->in_edges[j]].src;
    for (int j = 0; j < nd_->out_deg; j++) pre->nb[q++] = g->edges[nd_->out_edges[j]].dst;
  }
  pre->nb_off[n] = q;
  pre->vt = pp_xcalloc((size_t)n * (size_t)nt + 1, sizeof(vt_info));
  pre->rs_f = pp_xmalloc(sizeof(double) * ((size_t)nt * (size_t)nd + 1));
  for (int ti = 0; ti < nt; ti++)
    for (int di = 0; di < nd; di++) pre->rs_f[ti * nd + di] = resync_factor(p, pre->tv[ti], pre->dv[di]);
  pre->zero = p->zero;
  if (pre->zero) {
    pre->u_z = pp_xmalloc(sizeof(double) * (size_t)(n_use + 1));
    pre->u_bz = pp_xmalloc(sizeof(double) * (size_t)(n_use + 1));
    pre->u_mb = pp_xmalloc(sizeof(double) * ((size_t)n_use * (size_t)nd + 1));
    pre->vz = pp_xcalloc((size_t)n * (size_t)nt + 1, sizeof(vt_zero));
  }
  double *zero = pp_xcalloc((size_t)n_use + 1, sizeof(double));
  size_t wq = 0;
  for (int v = 0; v < n; v++)
    for (int ti = 0; ti < nt; ti++) {
      tmpc_terms(pre, g, p, v, ti, &wq);
      node_facts(pre, g, v, ti, zero);
    }
  free(zero);
}

void pp__stage_pre_free(stage_pre *pre) {
  free(pre->tv);
  free(pre->dv);
  free(pre->use_off);
  free(pre->use_idx);
  free(pre->un);
  free(pre->w_off);
  free(pre->w);
  free(pre->u_rs);
  free(pre->u_cp);
  free(pre->nb_off);
  free(pre->nb);
  free(pre->vt);
  free(pre->rs_f);
  free(pre->u_z);
  free(pre->u_bz);
  free(pre->u_mb);
  free(pre->vz);
}
