/*
 * stage.h - the cost of one pipeline stage (the reference's cost model).
 *
 * A stage is a set C of nodes run with data-parallel degree d, tensor-parallel
 * degree t, and one TMPC per node.  Its load (time per sample) is the sum over
 * its nodes of the chosen TMPCs' contributions
 *     T/d + [E/d + 4(d-1)P/(dN)] / B
 * where E sums 2(c(u,v) + sync) over the node's edges that cross C's boundary.
 * Its memory is the sum of A*y + B over its nodes, y = ceil(s/d) with s the
 * sum of data-parallel degrees of this stage and all later ones.  For given
 * (C, t, d, y) the TMPCs are chosen by a knapsack solver: the reference's
 * greedy heuristic or an exact branch and bound.
 *
 * A pp_stage_eval is a reusable workspace (not thread-safe): set a stage
 * with pp_stage_set, then ask for costs.  Everything is pure computation.
 */
#ifndef PIPER_STAGE_H
#define PIPER_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "piper/graph.h"
#include "piper/problem.h"

typedef struct pp_stage_eval pp_stage_eval;

/* The planner's budget for a workspace's cache of recent stages. */
#define PP_STAGE_CACHE_BYTES ((size_t)4 << 20)

/* Creates a workspace for graph g under problem p (both must outlive it),
 * keeping the summaries and costs of recent stages in about cache_bytes
 * (PP_STAGE_CACHE_BYTES in the planner; any budget gives the same costs,
 * and one too small for two stages keeps only the current one).  Never
 * fails except by aborting on out-of-memory. */
pp_stage_eval *pp_stage_eval_new(const pp_graph *g, const pp_problem *p, size_t cache_bytes);
void pp_stage_eval_free(pp_stage_eval *ev);

/* The tensor-parallel degrees in use (ascending) and the data-parallel
 * degrees in use (the divisors of N up to min(N, K), ascending; only 1 with
 * no_dp).  Arrays are owned by the workspace. */
int pp_stage_n_degrees(const pp_stage_eval *ev, const int **t_values);
int pp_stage_n_dp(const pp_stage_eval *ev, const int **d_values);

/* Sets the current stage to the node set c (bits over the graph's nodes,
 * non-empty).  Costs asked from now on are the new stage's (those of a
 * stage still in the cache come back without being computed again). */
void pp_stage_set(pp_stage_eval *ev, const uint64_t *c);

/* The same for the degree indices ti with ti_on[ti] set (all if ti_on is
 * NULL): the others are left unsummarised and read as unsupported. */
void pp_stage_set_some(pp_stage_eval *ev, const uint64_t *c, const unsigned char *ti_on);

/* 1 if every node of the current stage has a usable TMPC for degree index ti. */
int pp_stage_supports(const pp_stage_eval *ev, int ti);

/* The minimal load of the current stage with degree indices (ti, di) and
 * y >= 1 under the knapsack mode, memoised; +INFINITY if nothing fits. */
double pp_stage_cost(pp_stage_eval *ev, int ti, int di, int y);

/* The memo of pp_stage_cost for (ti, di) and the current stage, as an array
 * over y of *len entries: row[y] is pp_stage_cost(ev, ti, di, y), or NaN
 * where not computed yet (call pp_stage_cost, which fills it in).  Valid
 * until the next pp_stage_set; owned by the workspace.  For inner loops
 * that ask many y. */
const double *pp_stage_cost_row(pp_stage_eval *ev, int ti, int di, int *len);

/* A y from which pp_stage_cost(ev, ti, di, y) is +INFINITY, there and at
 * every larger y: the first one the memory bound rules out (the stage's
 * smallest memory exceeds the limit), or a smaller one a knapsack has
 * found infeasible; INT_MAX if none up to S + 1 is known; 1 if the stage
 * does not support ti.  Needs no memo row.  Lets a caller that copies
 * costs over a range of y stop there. */
int pp_stage_inf_from(pp_stage_eval *ev, int ti, int di);

/* pp_stage_cost(ev, ti, di, y) for every y in ylo..yhi into out[y - ylo]
 * (out holds yhi - ylo + 1).  The y that need no knapsack (the all-fastest
 * choice fits, or the memory bound rules y out) cost no memo row; the
 * others go through pp_stage_cost.  For callers that copy costs over a
 * range of y (the memo row alone would be set up over every y to S). */
void pp_stage_cost_span(pp_stage_eval *ev, int ti, int di, int ylo, int yhi, double *out);

/* A value no larger than pp_stage_cost(ev, ti, di, y) for every y, found
 * in constant time (the all-fastest load, slightly lowered; 0 if unknown). */
double pp_stage_lower_bound(const pp_stage_eval *ev, int ti, int di);

/* A value no larger than node v's share of the load of any stage that
 * holds v at degree indices (ti, di), for any y: over v's usable TMPCs the
 * smallest compute and resync terms T/d + 4(d-1)P/(dN)/B (the edge term is
 * at least 0); +INFINITY if v has no usable TMPC for ti.  Independent of
 * the current stage. */
double pp_stage_node_floor(const pp_stage_eval *ev, int v, int ti, int di);

/* Lower bounds on node v's memory terms at degree indices (ti, di): the
 * smallest A and the smallest B over its usable TMPCs (under ZeRO the
 * smallest unsharded and sharded parts of B, the latter over d), so any
 * stage holding v needs at least the sums of *a * y + *b over its nodes;
 * +INFINITY if v has no usable TMPC for ti.  Independent of the stage. */
void pp_stage_node_mem_floor(const pp_stage_eval *ev, int v, int ti, int di, double *a, double *b);

/* Node v's usable TMPCs at degree indices (ti, di), the first cap of them
 * written in order: load[l] the floor of its share of any stage's load
 * (T/d + 4(d-1)P/(dN)/B with its resync factor; the edge term, at least 0,
 * left out), a[l] and b[l] its memory terms A and B at d (so its memory is
 * a[l] * y + b[l]).  Returns the number of usable TMPCs (0 if none).
 * Independent of the current stage. */
int pp_stage_node_tmpcs(const pp_stage_eval *ev, int v, int ti, int di, double *load, double *a, double *b,
                        int cap);

/* Recomputes the same value without the memo and writes the chosen TMPC
 * for every stage node (index into the node's full TMPC list for that t,
 * ascending node order) to choice[m], m = number of stage nodes. */
double pp_stage_choose(pp_stage_eval *ev, int ti, int di, int y, int *choice);

/* The factor by which ZeRO-3 and a two-level network scale the resync term
 * 4 (d-1) P / (d N B) at degree indices (ti, di): 1 in the Piper model. */
double pp_stage_resync_factor(const pp_stage_eval *ev, int ti, int di);

/* Number of nodes in the current stage and their indices (ascending). */
int pp_stage_nodes(const pp_stage_eval *ev, const int **nodes);

#endif /* PIPER_STAGE_H */
