/*
 * test_equi.c - the equi baseline (piper/equi.h) against an exhaustive
 * search over its candidates on small random graphs, and against the DP.
 *
 * The search is written from the baseline's definition, not from equi.c: a
 * head (nodes before the transformer layers), a chain of transformer layers
 * and a tail; for every number of stages, the transformer layers split into
 * runs of equal length (the last m % stages runs one longer), head and tail
 * joined to the first and last runs or in stages of their own; every d | N
 * and t with stages * d * t <= K and every "recompute everywhere or nowhere"
 * choice, each plan scored by the independent checker with memory <= M.  The
 * baseline must find that minimum with the same feasibility, its plan must
 * pass the checker, and the DP with the exact knapsack (whose search contains
 * every candidate) must never be worse.  Graphs without transformer layers
 * (chains, where the topological order is unique) are checked the same way.
 */
#define _POSIX_C_SOURCE 200809L
#include "piper/equi.h"

#include "testutil.h"

#define N_RANDOM 400

/* A random instance: roles head[0..nh), tr[0..m), tail[0..nt) mapped to
 * node indices by a random permutation. */
typedef struct inst {
  tu_spec *s;
  int nh, m, nt;
  int head[3], tr[8], tail[3];
  int plain; /* no transformer names: the whole chain is split */
} inst;

static void add_tmpcs(tu_spec *s, tu_rng *r, int v) {
  for (int t = 1; t <= 2; t++) {
    double time = 1 + tu_int(r, 0, 50), a = tu_int(r, 10, 100), b = tu_int(r, 0, 200);
    if (tu_int(r, 0, 3) == 0) tu_tmpc_add(s, v, t, "other", time * 0.5, tu_int(r, 0, 500), a * 0.1, b);
    tu_tmpc_add(s, v, t, "vanilla", time / t, tu_int(r, 0, 500), a / t, b / t);
    tu_tmpc_add(s, v, t, PP_RECOMPUTE_TMPC_ID, time * 1.3 / t, tu_int(r, 0, 500), a * 0.2 / t, b / t);
  }
}

static inst make_inst(tu_rng *r, int plain) {
  inst in;
  memset(&in, 0, sizeof in);
  in.plain = plain;
  in.nh = tu_int(r, 0, 2);
  in.m = tu_int(r, 1, 6);
  in.nt = tu_int(r, 0, 2);
  int n = in.nh + in.m + in.nt, perm[TU_MAX_NODES];
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = tu_int(r, 0, i), x = perm[i];
    perm[i] = perm[j];
    perm[j] = x;
  }
  in.s = tu_spec_new(n);
  int chain[TU_MAX_NODES], c = 0;
  for (int i = 0; i < in.nh; i++, c++) chain[c] = in.head[i] = perm[c];
  for (int i = 0; i < in.m; i++, c++) chain[c] = in.tr[i] = perm[c];
  for (int i = 0; i < in.nt; i++, c++) chain[c] = in.tail[i] = perm[c];
  for (int i = 0; i + 1 < n; i++) tu_edge(in.s, chain[i], chain[i + 1], tu_int(r, 0, 300));
  for (int v = 0; v < n; v++) add_tmpcs(in.s, r, v);
  tu_random_sync(in.s, r, 50);
  in.s->devices = tu_int(r, 1, 8);
  static const int Ns[] = {1, 2, 3, 4, 6, 8};
  in.s->microbatches = Ns[tu_int(r, 0, 5)];
  in.s->memory = tu_int(r, 100, 2500);
  in.s->bandwidth = 10 + tu_int(r, 0, 100);
  return in;
}

/* Loads the instance with the transformer nodes named as the baseline
 * expects. */
static pp_graph *load(const inst *in) {
  char *text = tu_json(in->s);
  for (int i = 0; !in->plain && i < in->m; i++) {
    char from[32];
    snprintf(from, sizeof from, "\"name\": \"n%d\"", in->tr[i]);
    char *at = strstr(text, from);
    cr_assert_not_null(at);
    size_t len = strlen(text), fl = strlen(from);
    const char *to = "\"name\": \"" PP_EQUI_TRANSFORMER_NAME "\"";
    char *out = malloc(len + strlen(to) + 1);
    memcpy(out, text, (size_t)(at - text));
    strcpy(out + (at - text), to);
    strcat(out, at + fl);
    free(text);
    text = out;
  }
  pp_graph *g = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_graph_load_buffer("equi.json", text, strlen(text), NULL, &g, &err), PP_OK, "%s", err.msg);
  free(text);
  return g;
}

static int index_of(const pp_graph *g, int v, int t, const char *id) {
  const pp_tmpc_list *l = pp_graph_tmpcs(g, v, t);
  for (int i = 0; l && i < l->count; i++)
    if (strcmp(l->tmpcs[i].id, id) == 0) return i;
  return -1;
}

/* The TPS of stages given as node lists, by the checker (+INF if invalid
 * or over memory). */
static double score(const pp_graph *g, const pp_problem *p, int S, int counts[], int nodes[][TU_MAX_NODES],
                    int d, int t, int rec) {
  pp_plan *plan = pp_plan_new(S);
  for (int i = 0; i < S; i++) {
    pp_plan_stage *st = &plan->stages[i];
    st->n_nodes = counts[i];
    st->nodes = malloc(sizeof(int) * TU_MAX_NODES);
    st->tmpc = malloc(sizeof(int) * TU_MAX_NODES);
    for (int j = 0; j < counts[i]; j++) {
      st->nodes[j] = nodes[i][j];
      st->tmpc[j] = index_of(g, nodes[i][j], t, rec ? PP_RECOMPUTE_TMPC_ID : "vanilla");
    }
    st->d = d;
    st->t = t;
  }
  pp_error err = {0};
  double r = INFINITY;
  if (pp_check_plan(g, p, plan, &err) == PP_OK) {
    r = plan->tps;
    for (int i = 0; i < S; i++)
      if (plan->stages[i].memory > p->memory) r = INFINITY;
  }
  pp_plan_free(plan);
  return r;
}

/* The minimum over every candidate of the baseline. */
static double brute(const inst *in, const pp_graph *g, const pp_problem *p) {
  double best = INFINITY;
  const int *items = in->tr;
  int m = in->m, all[TU_MAX_NODES];
  if (in->plain) { /* the whole chain */
    m = 0;
    for (int i = 0; i < in->nh; i++) all[m++] = in->head[i];
    for (int i = 0; i < in->m; i++) all[m++] = in->tr[i];
    for (int i = 0; i < in->nt; i++) all[m++] = in->tail[i];
    items = all;
  }
  for (int sep = 0; sep <= (in->plain ? 0 : 1); sep++) {
    if (sep && (in->nh == 0 || in->nt == 0)) continue;
    for (int S = 1 + 2 * sep; S <= p->devices && S <= m + 2 * sep; S++) {
      int counts[TU_MAX_NODES] = {0}, nodes[TU_MAX_NODES][TU_MAX_NODES];
      const int runs = S - 2 * sep, per = m / runs, larger = m % runs;
      int next = 0;
      for (int r = 0; r < runs; r++) {
        int st = r + sep, len = per + (r >= runs - larger);
        for (int j = 0; j < len; j++) nodes[st][counts[st]++] = items[next++];
      }
      if (!in->plain) {
        for (int i = 0; i < in->nh; i++) nodes[0][counts[0]++] = in->head[i];
        for (int i = 0; i < in->nt; i++) nodes[S - 1][counts[S - 1]++] = in->tail[i];
      }
      for (int d = 1; d <= p->microbatches; d++) {
        if (p->microbatches % d || S * d > p->devices || S * d > p->microbatches || (p->no_dp && d > 1))
          continue;
        for (int t = 1; t <= (p->no_tp ? 1 : 2); t++) {
          if (S * d * t > p->devices) continue;
          for (int rec = 0; rec <= (p->no_recompute ? 0 : 1); rec++) {
            double v = score(g, p, S, counts, nodes, d, t, rec);
            if (v < best) best = v;
          }
        }
      }
    }
  }
  return best;
}

static void check_instance(int seed, int plain) {
  tu_rng r = {(uint64_t)seed * 7919u + (uint64_t)plain};
  inst in = make_inst(&r, plain);
  pp_graph *g = load(&in);
  pp_problem p = tu_problem(in.s);
  p.no_dp = tu_int(&r, 0, 5) == 0;
  p.no_tp = tu_int(&r, 0, 5) == 0;
  p.no_recompute = tu_int(&r, 0, 5) == 0;
  pp_plan *plan = NULL;
  pp_error err = {0};
  double *curve = malloc(sizeof(double) * (size_t)p.devices);
  cr_assert_eq(pp_equi_solve(g, &p, &plan, curve, &err), PP_OK, "seed %d: %s", seed, err.msg);
  double want = brute(&in, g, &p);
  double got = plan->feasible ? plan->tps : INFINITY;
  cr_assert(isinf(want) == isinf(got), "seed %d%s: feasibility differs: equi %g, search %g", seed,
            plain ? " (plain)" : "", got, want);
  if (!isinf(want)) {
    cr_assert(fabs(got - want) <= 1e-12 * want, "seed %d: equi %.17g, search %.17g", seed, got, want);
    cr_assert_eq(pp_check_plan_optimum(g, &p, plan, got, &err), PP_OK, "seed %d: %s", seed, err.msg);
  }
  /* the curve: each budget's value is the baseline run at that budget */
  for (int k = 1; k <= p.devices; k++) {
    pp_problem q = p;
    q.devices = k;
    pp_plan *pk = NULL;
    cr_assert_eq(pp_equi_solve(g, &q, &pk, NULL, &err), PP_OK);
    double v = pk->feasible ? pk->tps : INFINITY;
    cr_assert(v == curve[k - 1] || fabs(v - curve[k - 1]) <= 1e-12 * v, "seed %d: curve at k = %d: %g vs %g",
              seed, k, curve[k - 1], v);
    pp_plan_free(pk);
  }
  /* the DP's exact optimum can only be better */
  p.knapsack = PP_KNAPSACK_EXACT;
  tu_outcome o = tu_plan(g, &p, "equi instance");
  cr_assert(o.optimum <= got * (1 + 1e-9), "seed %d: DP %.17g worse than equi %.17g", seed, o.optimum, got);
  pp_plan_free(o.plan);
  pp_plan_free(plan);
  free(curve);
  pp_graph_free(g);
  free(in.s);
}

Test(equi, random_transformer_graphs) {
  for (int seed = 1; seed <= N_RANDOM; seed++) check_instance(seed, 0);
}

Test(equi, random_plain_chains) {
  for (int seed = 1; seed <= N_RANDOM; seed++) check_instance(seed, 1);
}

/* A node attached to nothing cannot be placed: a clear input error. */
Test(equi, unplaceable_node) {
  tu_spec *s = tu_spec_new(3);
  for (int v = 0; v < 3; v++) tu_tmpc_add(s, v, 1, "vanilla", 1, 0, 1, 1);
  tu_edge(s, 0, 1, 1);
  inst in;
  memset(&in, 0, sizeof in);
  in.s = s;
  in.m = 2;
  in.tr[0] = 0;
  in.tr[1] = 1;
  pp_graph *g = load(&in);
  pp_problem p = tu_problem(s);
  pp_plan *plan = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_equi_solve(g, &p, &plan, NULL, &err), PP_ERR_INPUT);
  cr_assert_null(plan);
  cr_assert(strstr(err.msg, "cannot place node") != NULL, "%s", err.msg);
  pp_graph_free(g);
  free(s);
}

/* A hand-checked case: head -> T -> T -> tail on 4 devices, N = 4, 100
 * bytes: one stage cannot hold the 4 x 30 fixed bytes; two stages {0,1},
 * {2,3} with d = 2 (sum of d 4 <= N) load (10 + 10) / 2 = 10 each; three
 * stages (head and tail apart, d = 1) tie at 10 but come later. */
Test(equi, hand_case) {
  tu_spec *s = tu_spec_new(4);
  for (int v = 0; v < 4; v++) {
    tu_tmpc_add(s, v, 1, "vanilla", 10, 0, 1, 30);
    tu_tmpc_add(s, v, 1, PP_RECOMPUTE_TMPC_ID, 13, 0, 0.5, 30);
  }
  tu_edge(s, 0, 1, 0);
  tu_edge(s, 1, 2, 0);
  tu_edge(s, 2, 3, 0);
  s->devices = 4;
  s->microbatches = 4;
  s->memory = 100;
  inst in;
  memset(&in, 0, sizeof in);
  in.s = s;
  in.m = 2;
  in.tr[0] = 1;
  in.tr[1] = 2;
  pp_graph *g = load(&in);
  pp_problem p = tu_problem(s);
  pp_plan *plan = NULL;
  pp_error err = {0};
  cr_assert_eq(pp_equi_solve(g, &p, &plan, NULL, &err), PP_OK);
  cr_assert_eq(plan->n_stages, 2);
  cr_assert_eq(plan->stages[0].d, 2);
  cr_assert_float_eq(plan->tps, 10.0, 1e-12);
  cr_assert_eq(plan->stages[0].nodes[0], 0);
  cr_assert_eq(plan->stages[0].nodes[1], 1);
  pp_plan_free(plan);
  pp_graph_free(g);
  free(s);
}
