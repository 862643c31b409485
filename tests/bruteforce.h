/*
 * bruteforce.h - what the exhaustive-search tests (test_bruteforce.c,
 * test_bruteforce_sched.c) share: a stage's TMPC options read from the
 * instance description (tu_spec, never the loaded graph or planner code),
 * the exact knapsack by trying every combination, and the check of the DP's
 * reconstructed plan against its optimum.
 */
#ifndef PIPER_TESTS_BRUTEFORCE_H
#define PIPER_TESTS_BRUTEFORCE_H

#include "dp_front.h"
#include "testutil.h"

#define BF_NODES_MAX 8 /* nodes of an instance (bit masks of int) */

/* The TMPC list of node v for degree t in s, or NULL. */
static inline const tu_list *bf_list_of(const tu_spec *s, int v, int t) {
  const tu_node *nd = &s->nodes[v];
  for (int i = 0; i < nd->n_lists; i++)
    if (nd->lists[i].t == t) return &nd->lists[i];
  return NULL;
}

/* The options of the stage of the nodes in mask at (t, d, y) under p: for
 * its m-th node, cnt[m] usable TMPCs with load c[m][k] (communication with
 * the nodes outside the stage, gradient synchronisation, compute) and
 * memory w[m][k] = A*y + the bytes kept.  *param is the stage's parameter
 * bytes (a node's first usable TMPC counts; its TMPCs for one t share
 * them).  Returns m, or -1 if a node has no usable TMPC for t. */
static inline int bf_stage_options(const tu_spec *s, const pp_problem *p, int mask, int t, int d, int y,
                                   double c[][3], double w[][3], int *cnt, double *param) {
  const double N = s->microbatches, B = p->bandwidth;
  int m = 0;
  *param = 0;
  for (int v = 0; v < s->n; v++) {
    if (!(mask >> v & 1)) continue;
    const tu_list *l = bf_list_of(s, v, t);
    cnt[m] = 0;
    for (int k = 0; l && k < l->count; k++) {
      const tu_tmpc *x = &l->tm[k];
      if (p->no_recompute && strcmp(x->id, PP_RECOMPUTE_TMPC_ID) == 0) continue;
      double E = 0;
      for (int e = 0; e < s->n_edges; e++)
        if (s->dst[e] == v && !(mask >> s->src[e] & 1)) E += 2 * (s->cost[e] + x->fw[s->src[e]]);
      for (int e = 0; e < s->n_edges; e++)
        if (s->src[e] == v && !(mask >> s->dst[e] & 1)) E += 2 * (s->cost[e] + x->bw[s->dst[e]]);
      if (p->zero == 0 && p->devices_per_node == 0) { /* the reference's expression, to the bit */
        double comm = E / d + 4 * (d - 1) * x->param / d / N;
        c[m][cnt[m]] = comm / B + x->time / d;
      } else { /* the same with ZeRO and the two-level network */
        c[m][cnt[m]] = E / d / B + tu_sync_seconds(p, x->param, d, t) / N + x->time / d;
      }
      w[m][cnt[m]] = x->mem_a * y + tu_keep_bytes(p, x, d);
      if (cnt[m] == 0) *param += x->param;
      cnt[m]++;
    }
    if (cnt[m] == 0) return -1;
    m++;
  }
  return m;
}

/* The least total load over every combination of one option per node whose
 * memory fits in M; +INFINITY if none does. */
static inline double bf_exact_knapsack(int m, const int *cnt, double c[][3], double w[][3], double M) {
  double r = INFINITY;
  int idx[BF_NODES_MAX] = {0};
  for (;;) {
    double cost = 0, mem = 0;
    for (int i = 0; i < m; i++) cost += c[i][idx[i]], mem += w[i][idx[i]];
    if (mem <= M && cost < r) r = cost;
    int i = 0;
    while (i < m && ++idx[i] == cnt[i]) idx[i++] = 0;
    if (i == m) return r;
  }
}

/* The DP's optimum for p->devices (every table of dp set), after checking
 * the plan it reconstructs: no plan for an infeasible optimum, else a plan
 * that passes pp_check_plan with that TPS and stays within K devices and N
 * microbatches.  *plan_ok says whether it did; msg[n_msg] why not. */
static inline double bf_check_dp_plan(const pp_graph *g, const pp_problem *p, pp_dp *dp, int *plan_ok,
                                      char *msg, size_t n_msg) {
  pp_plan *plan = NULL;
  pp_error err = {0};
  const double opt = pp_dp_optimum(dp, p->devices);
  *plan_ok = 0;
  if (pp_dp_reconstruct(dp, p->devices, &plan, &err)) {
    snprintf(msg, n_msg, "reconstruction failed: %s", err.msg);
  } else if (isinf(opt)) {
    *plan_ok = !plan->feasible && plan->n_stages == 0;
    if (!*plan_ok) snprintf(msg, n_msg, "infeasible optimum with a plan of %d stages", plan->n_stages);
  } else if (!plan->feasible) {
    snprintf(msg, n_msg, "finite optimum but no plan");
  } else if (pp_check_plan(g, p, plan, &err)) {
    snprintf(msg, n_msg, "the plan fails the check: %s", err.msg);
  } else if (!tu_close(plan->tps, opt, 1e-9)) {
    snprintf(msg, n_msg, "checked TPS %.17g differs from the optimum %.17g", plan->tps, opt);
  } else if (plan->devices_used > p->devices || plan->sum_d > p->microbatches) {
    snprintf(msg, n_msg, "plan uses %d devices and a sum of d of %d", plan->devices_used, plan->sum_d);
  } else {
    *plan_ok = 1;
  }
  pp_plan_free(plan);
  return opt;
}

/* How bf_run_dp runs the DP: BF_SPLIT computes every table in two ranges
 * of k and joins them (as two ranks do); BF_SPLIT_EACH (with BF_SPLIT) in
 * one range per budget, so that every k0 > 0 starts a part, also below
 * rows of J that land across it; BF_SCREENS turns the Pareto rows' screens
 * on although the DAG is below their size rule (a run that returns NAN
 * with "screens do not apply" if they cannot be). */
enum { BF_SPLIT = 1, BF_SCREENS = 2, BF_SPLIT_EACH = 4 };

/* The DP through the library without assertions, run as mode (BF_* flags,
 * 0 = serial) says: the optimum, and whether the reconstructed plan passes
 * bf_check_dp_plan (*plan_ok; msg says why not, or why the planner failed:
 * then NAN). */
static inline double bf_run_dp(const tu_spec *s, const pp_problem *p, int mode, int *plan_ok, char *msg,
                               size_t n_msg) {
  const int split = mode & BF_SPLIT;
  pp_graph *g = tu_load(s);
  pp_downsets *ds = NULL;
  pp_dp *dp = NULL;
  pp_error err = {0};
  double opt = NAN;
  *plan_ok = 0;
  msg[0] = 0;
  if (pp_downsets_enumerate(g, 1000000, &ds, &err) || pp_dp_create(g, p, ds, 0, &dp, &err)) {
    snprintf(msg, n_msg, "planner failed: %s", err.msg);
    goto done;
  }
  if ((mode & BF_SCREENS) && !pp__dpf_force_screens(dp)) {
    snprintf(msg, n_msg, "screens do not apply");
    goto done;
  }
  if (!split && pp_dp_solve(dp, NULL, NULL, &err)) {
    snprintf(msg, n_msg, "planner failed: %s", err.msg);
    goto done;
  }
  if (split) {
    const int K = p->devices, a = K / 2;
    for (int id = 1; id < ds->count; id++) {
      pp_stairs *parts[65];
      int n = 0;
      if ((mode & BF_SPLIT_EACH) && K < 65)
        for (int k = 0; k <= K; k++) parts[n++] = pp_dp_compute_rows(dp, id, k, k);
      else {
        parts[n++] = pp_dp_compute_rows(dp, id, 0, a);
        parts[n++] = pp_dp_compute_rows(dp, id, a + 1, K);
      }
      pp_dp_set_table(dp, id, pp_dp_join(dp, parts, n));
      for (int x = 0; x < n; x++) pp_stairs_free(parts[x]);
    }
  }
  opt = bf_check_dp_plan(g, p, dp, plan_ok, msg, n_msg);
done:
  pp_dp_free(dp);
  pp_downsets_free(ds);
  pp_graph_free(g);
  return opt;
}

/* The end of a random instance whose nodes are made: sync maps, bandwidth,
 * N, K in 1..max_devices, a memory from "barely the largest node" (need) to
 * "everything several times" (sum_max), then *p with at most one of no-dp,
 * no-tp, no-recompute.  Draws from r in a fixed order, so an instance
 * number always gives the same instance. */
static inline void bf_finish_instance(tu_spec *s, tu_rng *r, double need, double sum_max, int max_devices,
                                      pp_problem *p) {
  tu_random_sync(s, r, 200);
  s->bandwidth = 50 * tu_int(r, 1, 40);
  static const int Ns[] = {1, 2, 3, 4, 4, 6, 8, 12};
  s->microbatches = Ns[tu_int(r, 0, 7)];
  s->devices = tu_int(r, 1, max_devices);
  s->memory = floor(need * (0.9 + 0.2 * tu_unit(r)) + tu_unit(r) * tu_unit(r) * 2.5 * sum_max);
  if (s->memory < 1) s->memory = 1;
  *p = tu_problem(s);
  int f = tu_int(r, 0, 9);
  p->no_dp = f == 0;
  p->no_tp = f == 1;
  p->no_recompute = f == 2;
}

#endif /* PIPER_TESTS_BRUTEFORCE_H */
