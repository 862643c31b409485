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
 * With v >= 2 chunks a row holds only what it adds (dp_vstage.c): the
 * table at budget k is the union of its rows up to k, and every entry is
 * fresh.
 *
 * This file holds the recurrence (the candidates of a downset's rows); the
 * rows' sorting, pruning and building are in dp_front_rows.c, the optimum
 * and the plan reconstruction in dp_front_plan.c, v >= 2 in dp_vstage.c.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_front.h"
#include "piper/bitset.h"

typedef pp__fent fent;
typedef pp__fvec fvec;

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
    f->ev = pp_stage_eval_new(dp->g, &f->qv, pp__dp_stage_cache_bytes(dp->pairs));
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
  f->stage_pmax = pp_xmalloc(sizeof(double) * (size_t)(f->nt + 1));
  dp->front = f; /* the screens read it */
  f->scr = pp__dpf_screen_new(dp, 0);
  if (f->v == 1) f->built = pp__fidx_new(pp__dpf_classes(f), dp->S);
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
  free(f->spare.row_k);
  free(f->spare.row_start);
  free(f->spare.e);
  pp__fidx_free(f->built);
  free(f->stage_pmax);
  pp__dpf_screen_free(f->scr);
  free(f->cell_n);
  free(f->cell_A);
  free(f->cell_H);
  free(f->rmin);
  free(f->need);
  free(f->ti_on);
  free(f->lfloor);
  free(f->js);
  pp__dpf_chain_free(f->chain);
  pp__dpf_whole_free(f->whole, f->n_whole);
  free(f->wrow);
  free(f);
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
    if (!f->scr) continue;
    const double *pm = pp__dpf_screen_pmax(f->scr);
    P = 0.0;
    for (int i = 0; i < m; i++) P += pm[nodes[i] * f->nt + ti];
    f->stage_pmax[ti] = P;
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
  const double r = pp__dpf_resync(dp, ti, di, P);
  return d * (l - r) / N;
}

/* Where extend_row's candidates land and the screens' bounds for them
 * (dp_front_screen.c): grid row kr of nk, W = S + 1, lb <= the stage's
 * load at every y and alb <= its a; on = 0 without the screens. */
typedef struct land_at {
  int on, kr, nk, W;
  double lb, alb;
  int id, c; /* the downset I and the degree pair ti nd + di */
  double rb; /* >= the stage's r: alb = d (lb - rb) / N */
  double rr; /* the stage's r when it does not depend on the TMPC choice, else NaN (see extend_pair) */
} land_at;

/* Extends the entries of row r of tj (those its budget adds), or with
 * whole the whole row's nw entries, by the current stage at (ti, di) into
 * the candidates of budget k. */
static void extend_row(pp_dp *dp, int j, const pp_stairs *tj, int r, const fent *whole, int nw, int ti,
                       int di, const land_at *at, fvec *out) {
  pp__dp_front *f = dp->front;
  const int d = f->dv[di], S = dp->S, cls = f->uniform ? ti * f->nd + di : 0;
  int len;
  const double *row = pp_stage_cost_row(dp->ev, ti, di, &len);
  const int n = whole ? nw : pp__dpf_row_entries(f, tj, r);
  const double N = dp->p->microbatches, rr = at->rr;
  /* Within one (class, s) the row's entries rise in A and fall in H.  Once
   * an entry's extension is bound by the stage (A + l >= H + a), every
   * later one of that (class, s) extends to a candidate with A' and H' no
   * smaller (H' >= A + l rises with A), which that one dominates: the cut
   * skips them (the crossing the 2bw kernel binary-searches).  When a and l
   * do not fall as y grows (r fixed, or y fixed with gpipe), the same holds
   * for every later entry with A no smaller at any larger s (y no smaller):
   * the cut keeps the least A of the bound entries (cut_a).  All of a
   * call's candidates are of class cls, so their dominance spans s. */
  const int across = !isnan(rr) || f->a0 || f->gpipe;
  int cut_cls = INT_MIN, cut_s = -1;
  double cut_a = INFINITY;
  int ly = -1; /* the entry screen's bounds at y = ly */
  double lby = at->lb, alby = at->alb;
  for (int q = 0; q < n; q++) {
    const fent e = whole ? whole[q] : pp__dpf_entry(f, tj, r, q);
    if (e.H == INFINITY || e.s + d > S || (f->uniform && j != 0 && e.cls != cls)) continue;
    if (e.A >= cut_a || (e.s == cut_s && e.cls == cut_cls)) continue;
    const int y = pp__dpf_y_of(dp, e.s, d);
    if (at->on) { /* the entry's corner (dp_front_screen.c): all its candidates covered */
      const double c1 = e.H + at->alb, c2 = e.A + at->lb;
      if (pp__dpf_covered(f, at->W, at->kr, e.s + d, e.A + at->alb, c1 > c2 ? c1 : c2)) continue;
      if (y != ly) { /* raised to the memory-aware bound at y, a bound of the load there */
        const double G = pp__dpf_lag_bound(dp, at->id, j, at->c, y);
        ly = y;
        lby = G > at->lb ? G : at->lb;
        alby = G > at->lb ? d * (lby - at->rb) / N : at->alb;
      }
      if (lby == INFINITY) continue; /* nothing fits at y: the cost below would be infinite */
      const double g1 = e.H + alby, g2 = e.A + lby;
      if (lby > at->lb && pp__dpf_covered(f, at->W, at->kr, e.s + d, e.A + alby, g1 > g2 ? g1 : g2)) continue;
    }
    const double l = y < len && !isnan(row[y]) ? row[y] : pp_stage_cost(dp->ev, ti, di, y);
    if (l == INFINITY) continue;
    const double a = f->a0 ? 0.0 : !isnan(rr) ? d * (l - rr) / N : pp__dpf_stage_a(dp, ti, di, y, l);
    const double h1 = e.H + a, h2 = e.A + l;
    const fent x = {cls, e.s + d, e.A + a, h1 > h2 ? h1 : h2};
    if (at->on) {
      if (!pp__dpf_covered(f, at->W, at->kr, x.s, x.A, x.H)) {
        pp__dpf_push(f, out, x);
        pp__dpf_flood(f, at->W, at->nk, at->kr, &x);
      }
    } else {
      pp__dpf_push(f, out, x);
    }
    if (h2 >= h1) {
      cut_cls = e.cls;
      cut_s = e.s;
      if (across && e.A < cut_a) cut_a = e.A;
    }
  }
}

/* The row corners of tj into f->rmin: per row the least s, A and H over
 * its entries with a finite H (s = INT_MAX if none), the entries
 * extend_row visits. */
static void row_corners(pp__dp_front *f, const pp_stairs *tj) {
  if (tj->n_rows > f->rmin_cap) {
    free(f->rmin);
    f->rmin_cap = tj->n_rows;
    f->rmin = pp_xmalloc(sizeof(fent) * (size_t)f->rmin_cap);
  }
  for (int r = 0; r < tj->n_rows; r++) {
    fent m = {0, INT_MAX, INFINITY, INFINITY};
    for (int q = 0, n = pp__dpf_row_entries(f, tj, r); q < n; q++) {
      const fent e = pp__dpf_entry(f, tj, r, q);
      if (e.H == INFINITY) continue;
      m.s = e.s < m.s ? e.s : m.s;
      m.A = e.A < m.A ? e.A : m.A;
      m.H = e.H < m.H ? e.H : m.H;
    }
    f->rmin[r] = m;
  }
}

/* The candidates of J for the stage set (ti, di), into rows k0..k1; with
 * the screens only the degree pairs f->need holds and the rows whose
 * corner is not covered (dp_front_screen.c). */
static void extend_pair(pp_dp *dp, int id, int j, const pp__fjmin *jm, int k0, int k1) {
  pp__dp_front *f = dp->front;
  const pp_stairs *tj = dp->tab[j];
  const double N = dp->p->microbatches;
  if (f->scr) row_corners(f, tj);
  for (int ti = 0; ti < f->nt; ti++) {
    if (!pp_stage_supports(dp->ev, ti)) continue;
    for (int di = 0; di < f->nd; di++) {
      const int d = f->dv[di], td = f->tv[ti] * d;
      if (td > k1) break;
      /* r of the stage when it does not depend on the TMPC choice: stage_a's
       * arithmetic, once for all of J's rows (its divisions stalled
       * extend_row when it was done per row) */
      const double rr = pp__dpf_resync_fixed(dp, ti, di);
      land_at at = {f->scr != NULL, 0, k1 - k0 + 1, dp->S + 1, 0.0, 0.0, id, ti * f->nd + di, 0.0, rr};
      if (at.on) {
        if (!f->need[ti * f->nd + di]) continue;
        /* the (t, d) screen: the pair's corner with the stage's own bounds */
        const double lb = pp_stage_lower_bound(dp->ev, ti, di), lf = f->lfloor[ti * f->nd + di];
        at.lb = lb > lf ? lb : lf;
        const double rb = pp__dpf_resync(dp, ti, di, f->stage_pmax[ti]);
        at.alb = d * (at.lb - rb) / N;
        at.rb = rb;
        const int kl = jm->k + td > k0 ? jm->k + td : k0;
        const double h1 = jm->H + at.alb, h2 = jm->A + at.lb;
        if (pp__dpf_covered(f, at.W, kl - k0, jm->s + d, jm->A + at.alb, h1 > h2 ? h1 : h2)) continue;
      }
      for (int r = pp__dp_first_landing_row(tj, td, k0); r < tj->n_rows; r++) {
        const int k = pp__dp_landing(tj, r, td, k0, k1);
        if (k > k1) break;
        if (k < 0) continue;
        /* the first row to land, at k0 > 0, extends J's whole row there
         * (every entry of a budget no larger lands at k0); the others what
         * they add */
        const int only_fresh = !pp__dpf_lands_whole(tj, r, td, k0, k1);
        at.kr = k - k0;
        if (at.on && only_fresh) {
          /* the row's corner: every fresh entry's corner (see extend_row)
           * is at an s, A and H no smaller, so a grid entry that covers
           * this one covers them all */
          const fent *m = &f->rmin[r];
          if (m->s == INT_MAX || m->s + d > dp->S) continue;
          const double h1 = m->H + at.alb, h2 = m->A + at.lb;
          if (pp__dpf_covered(f, at.W, at.kr, m->s + d, m->A + at.alb, h1 > h2 ? h1 : h2)) continue;
        }
        const fent *whole = NULL;
        const int nw = only_fresh ? 0 : pp__dpf_whole_at(dp, j, r, &whole);
        extend_row(dp, j, tj, r, whole, nw, ti, di, &at, &f->cand[k - k0]);
      }
    }
  }
}

/* Asks for the first lines of t's block (pp_stairs_flat_write: its
 * arrays from v to fresh, one after the other) ahead of their use. */
static void prefetch_table(const pp_stairs *t) {
  const char *a = (const char *)t->v, *b = (const char *)t->fresh + 64;
  if (b - a > 4096) b = a + 4096;
  for (const char *p = a; p < b; p += 64) __builtin_prefetch(p);
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
  if (!f->js) f->js = pp_xmalloc(sizeof(int) * (size_t)(dp->ds->count + 1));
  if (f->v > 1) {
    pp__dpv_rows(dp, id, k0, k1);
    return pp__dpf_build_rows(dp, k0, k1);
  }
  const uint64_t *bi = pp_downset_bits(ds, id);
  const int end = ds->layer_start[ds->size[id]];
  if (f->scr) pp__dpf_screen_begin(dp, k0, k1);
  int nj = 0;
  for (int j = 0; j < end; j++)
    if (pp_bits_subset(pp_downset_bits(ds, j), bi, ds->words)) f->js[nj++] = j;
  if (pp__dpf_chain_fits(dp, nj, k1)) return pp__dpf_chain_rows(dp, id, k0, k1, f->js, nj);
  for (int x = 0; x < nj; x++) {
    /* with the screens the largest J first (dp_front_screen.c); any order
     * gives the same rows */
    const int j = f->scr ? f->js[nj - 1 - x] : f->js[x];
    const uint64_t *bj = pp_downset_bits(ds, j);
    if (f->scr && x + 4 < nj) prefetch_table(dp->tab[f->js[nj - 5 - x]]);
    pp__fjmin jm = {0, 0, 0.0, 0.0};
    if (f->scr) {
      jm = pp__dpf_jmin(dp, j);
      if (jm.k == INT_MAX || !pp__dpf_screen_pair(dp, id, j, &jm, k0, k1, f->need)) continue;
      for (int ti = 0; ti < f->nt; ti++) {
        f->ti_on[ti] = 0;
        for (int di = 0; di < f->nd; di++) f->ti_on[ti] |= f->need[ti * f->nd + di];
      }
    }
    pp__dp_set_stage(dp, dp->ev, bi, bj, f->scr ? f->ti_on : NULL);
    pp__dpf_set_stage_p(dp);
    extend_pair(dp, id, j, &jm, k0, k1);
  }
  return pp__dpf_build_rows(dp, k0, k1);
}

double pp__dpf_row_slots_max(const pp_dp *dp) {
  const pp__dp_front *f = dp->front;
  if (f->v > 1) return pp__dpv_row_slots_max(dp);
  /* entries per row: per class and s a front of (A, H); 64 per (class, s)
   * is far beyond what the inputs produce */
  return (double)f->E * (dp->S + 1) * 64.0 * (f->uniform ? (double)f->nt * f->nd : 1.0);
}

/* The scratch of v = 1 without --uniform beyond the tables (rows per
 * table): with the screens (dp_front_screen.c, same rule) their
 * grid, per-downset floor sums and corners and the memory-aware sums of
 * dp_small_lag.c (at most 256 MB, else none are kept); else the
 * budget-ordered kernel (dp_front_chain.c): each table's row corners (24
 * bytes per row), the s bits, the summaries of one downset's subsets (at most 8M
 * doubles, the rule of pp__dpf_chain_fits, which bounds their number), and
 * its row extensions (16 bytes each, one per subset, degree pair and row,
 * about half the budgets a pair can land at).  Calibrated on BERT-32 at
 * K = 128 and 2048 (at most 0.26 M and 4.2 M extensions).  The keyframes
 * of the k-range seams (dp_front_whole.c) hold about as much as the tables
 * they are made of, on the ranks that use them. */
static double front_scratch_bytes(const pp_graph *g, const pp_problem *p, const pp_downsets *ds,
                                  double rows) {
  const int K = p->devices, S = pp_problem_max_s(p);
  double nc = 0.0, nt = 0.0, y_slots = 0.0, sum_per_j = 0.0, landings = 0.0;
  for (int i = 0; i < g->n_degrees; i++) {
    const int t = g->degrees[i];
    if (!pp_problem_allows_t(p, t)) continue;
    nt += 1.0;
    for (int d = 1; d <= p->microbatches && (long long)d * t <= K; d++) {
      if (p->microbatches % d != 0 || !pp_problem_allows_d(p, d)) continue;
      nc += 1.0;
      y_slots += (S + d - 1) / d;
      sum_per_j += 2.0 * (p->schedule == PP_SCHEDULE_GPIPE ? 1 : (S - d) / d + 3);
      landings += K + 1.0 - (double)d * t;
    }
  }
  const double count = ds->count;
  if ((double)(K + 1) * (S + 1) <= 4096.0 && ds->count >= 256) {
    double lag = count * y_slots * 3 * 12.0;
    if (lag > 256e6) lag = 0.0;
    return (K + 1.0) * (S + 1.0) * (4.0 + 16.0 * PP__FCELL) + count * (nc * 32.0 + nt * 4.0 + 32.0) + lag;
  }
  const double max_sum = 8.0 * 1024 * 1024,
               nj = sum_per_j > 0 && max_sum / sum_per_j < count ? floor(max_sum / sum_per_j) : count;
  return count * rows * 24.0 + count * ((S + 64) / 64) * 8.0 + fmin(max_sum, sum_per_j * count) * 8.0 +
         nj * landings / 2.0 * 16.0;
}

double pp__dpf_bytes_estimate(const pp_graph *g, const pp_problem *p, const pp_downsets *ds) {
  if (p->schedule == PP_SCHEDULE_2BW && !p->uniform) return -1.0;
  /* Entries per table, calibrated on the peak RSS of BERT-large, BERT-32
   * and a generated GPT-76B (README, "Memory"): rows at every budget 0..K,
   * each a Pareto set of about 96 (s, A, H) entries without --uniform and
   * about 1.5 per (t, d) class with --uniform.  With v chunks an entry of
   * class (t, d, p) and chunk count q is in the row of budget p t d only
   * (dp_vstage.c), and a downset of n_I of the n nodes holds only the q
   * that can still make p v chunks (q <= n_I, p v - q <= n - n_I), about
   * 1 entry each.
   * An entry has E = 2 or 3 slots of s (4 bytes) and a value (8), and a
   * fresh index (4). */
  const int K = p->devices, v = pp_problem_chunks(p), E = p->uniform ? 3 : 2, n = g->n_nodes;
  const double entry = 12.0 * E + 4.0;
  double classes = 0.0, total = 0.0;
  unsigned char *lands = pp_xcalloc((size_t)K + 1, 1); /* budgets p t d where some class lands */
  for (int i = 0; i < g->n_degrees; i++) {
    const int t = g->degrees[i];
    if (!pp_problem_allows_t(p, t)) continue;
    for (int d = 1; d <= p->microbatches && (long long)d * t <= K; d++) {
      if (p->microbatches % d != 0 || !pp_problem_allows_d(p, d)) continue;
      classes += 1.0;
      for (int P = 1; v > 1 && (long long)P * d * t <= K && P * v <= n; P++) {
        lands[P * d * t] = 1;
        for (int id = 0; id < ds->count; id++) {
          const int nI = ds->size[id], hi = nI < P * v ? nI : P * v;
          const int lo = P * v - (n - nI) > 0 ? P * v - (n - nI) : 0;
          if (hi >= lo) total += (hi - lo + 1.0) * entry;
        }
      }
    }
  }
  double rows = 1.0; /* with v chunks: a row at budget 0 and one per budget where a class lands */
  for (int k = 1; k <= K; k++) rows += lands[k];
  free(lands);
  double whole = total; /* the tables with every row whole */
  if (v == 1) {
    /* A row stores only what it adds to the row before (see the file
     * header): about 4 sqrt(K + 1) whole rows' worth per table without
     * --uniform, sqrt(K + 1) with it (calibrated: BERT-32 at K = 256 and
     * 2048 under 1f1b hold 1.1x and 0.9x of it, Llama 3.1 405B on 1,024
     * and 4,096 devices 0.18x and 0.27x; BERT-32 --uniform at K = 256
     * 0.27x (2bw) and 0.63x (1f1b)). */
    rows = K + 1.0;
    const double per_row = p->uniform ? 1.5 * classes : 96.0;
    whole = ds->count * rows * per_row * entry;
    total = ds->count * (p->uniform ? 1.0 : 4.0) * sqrt(rows) * per_row * entry;
  }
  const double scratch = v == 1 && !p->uniform ? front_scratch_bytes(g, p, ds, rows) : 0.0;
  /* row indices, the candidates of one table (about one table of whole rows) and, with v = 1, the
   * keyframes of the k-range seams (about as much as the tables) and the nodes of the entries of
   * the rows built (dp_front_dom.c: S + 1 of 16 bytes per class) */
  const double built = v == 1 ? (p->uniform ? classes : 1.0) * (pp_problem_max_s(p) + 1.0) * 16.0 : 0.0;
  return (v == 1 ? 2.0 : 1.0) * total + ds->count * (rows * 8.0 + 128.0) +
         whole / ds->count * (double)sizeof(pp__fent) / entry + scratch + built;
}
