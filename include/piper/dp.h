/*
 * dp.h - the dynamic programme over downsets.
 *
 * dp[I][k][s] = the best max-load of the downset I on at most k devices with a
 * sum of data-parallel degrees of at most s (the 2bw schedule).  For the
 * synchronous schedules and uniform plans a table row holds instead the
 * Pareto set of (s, sum of a, partial objective) entries (src/core/dp_front.c);
 * the tables are then read only through this module (pp_dp_optimum,
 * pp_dp_reconstruct, pp_dp_join), never with pp_stairs_value.  It is computed downset by
 * downset in order of size: the rows of I depend only on the rows of strict
 * subsets J, through stages I \ J placed in front of J's stages.  The work on
 * one downset can be split by ranges of k (pp_dp_compute_rows) and the parts
 * joined (pp_stairs_join); the layer driver (include/piper/layer.h) does
 * that for one process (pp_dp_solve) or many (src/dist).
 *
 * Pure computation: no MPI, no I/O, so nothing here is collective; the
 * distributed driver is pp_dist_solve (include/piper/dist.h).  Not
 * thread-safe (one workspace).  Allocation failure is fatal (pp_xmalloc), so
 * functions without a status never fail on valid arguments (asserted).
 */
#ifndef PIPER_DP_H
#define PIPER_DP_H

#include "piper/downsets.h"
#include "piper/error.h"
#include "piper/graph.h"
#include "piper/plan.h"
#include "piper/problem.h"
#include "piper/table.h"

typedef struct pp_dp pp_dp;

/* Creates the DP state for (g, p, ds); all three must outlive it.  The
 * table of the empty downset is set.  Returns PP_OK and *out (caller frees
 * with pp_dp_free), or PP_ERR_LIMIT if the estimated memory exceeds
 * mem_limit bytes (0: no limit), with the estimate in err, and *out NULL
 * (the tables themselves are held to mem_limit too: pp_dp_check_held);
 * PP_ERR_INTERRUPTED if a stop is requested while it counts the pairs
 * (pp_downsets_count_pairs). */
pp_status pp_dp_create(const pp_graph *g, const pp_problem *p, const pp_downsets *ds, double mem_limit,
                       pp_dp **out, pp_error *err);
/* Frees the DP state and every table set in it (NULL is a no-op); not g, p
 * or ds. */
void pp_dp_free(pp_dp *dp);

/* Computes dp[id][k][*] for k in [k0, k1] (0 <= k0 <= k1 <= K) from the
 * tables of all strict subsets of downset id, which must be set.  Returns a
 * new partial table (caller frees with pp_stairs_free) with prefix minima
 * applied within [k0, k1]; NULL only when the poll of pp_dp_set_poll asked
 * to stop during the computation (the rows are then abandoned). */
pp_stairs *pp_dp_compute_rows(pp_dp *dp, int id, int k0, int k1);

/* Sets the function pp_dp_compute_rows calls now and then (between the
 * sub-downsets it relaxes from, for the 2bw tables) to learn whether to
 * abandon the rows: poll(user) != 0 means stop.  NULL (the default): never
 * abandon.  Not thread-safe with a running computation. */
void pp_dp_set_poll(pp_dp *dp, int (*poll)(void *user), void *user);

/* Joins the parts of one downset's table computed over consecutive k
 * ranges (in order, starting at 0) into a new table (caller owns; no fresh
 * index); does not take ownership of the parts.  dp NULL: 2bw tables.
 * Built from the two steps below, which let several processes join the
 * parts of one table side by side:
 *   - every row of part p is final once merged with the seam, the table's
 *     final row at budget parts[p]->k_first - 1 (the parts' rows hold
 *     prefix minima within their own k range, pp_dp_compute_rows);
 *   - the seams follow from the parts' last rows alone: seam 1 is part 0's
 *     last row, seam p + 1 merges part p's last row with seam p.
 * With virtual stages (rows of their own budget's entries, dp_vstage.c) no
 * row merges with another: the parts' rows follow one another, a later
 * part's empty first row left out, and the seams, still made the same way,
 * change nothing. */
pp_stairs *pp_dp_join(const pp_dp *dp, pp_stairs *const *parts, int n_parts);

/* The whole last row of table t (a part of a downset's table, or all of
 * it): a new one-row table over [t->k_last, t->k_last] (caller frees).  For
 * 2bw tables (dp NULL accepted) and interleaved ones, t's last row
 * (pp_stairs_last_row); for the other Pareto-row tables, whose rows hold
 * only what they add to the row before (src/core/dp_front.c), the union of
 * t's rows pruned.  What the joins of k-range parts carry from one part to
 * the next.  Pure. */
pp_stairs *pp_dp_tail(const pp_dp *dp, const pp_stairs *t);

/* Appends pp_dp_tail(dp, t) to w as pp_stairs_pack_tail(t) would append
 * t's last row (the header of t's budgets, one row).  Pure. */
void pp_dp_pack_tail(const pp_dp *dp, const pp_stairs *t, int id, pp_pack *w);

/* Reads one table written by pp_stairs_pack or pp_dp_pack_tail and returns
 * its whole last row as pp_dp_tail would (caller frees), setting *id; NULL
 * if the bytes are bad (r is then bad).  For 2bw and interleaved tables
 * only the last row is read (pp_stairs_unpack_last).  Pure. */
pp_stairs *pp_dp_unpack_tail(const pp_dp *dp, pp_unpack *r, int *id);

/* The seam after a part: tail is its whole last row (pp_dp_tail or
 * pp_dp_unpack_tail, over [k, k]), seam the seam before it (NULL for
 * the first part) at a budget below k.  Returns a new one-row table over
 * [k, k]: the downset's final row at budget k (caller frees).  dp NULL: 2bw
 * tables.  Pure. */
pp_stairs *pp_dp_seam(const pp_dp *dp, const pp_stairs *seam, const pp_stairs *tail);

/* The final rows of a part that does not start at k = 0, given the seam
 * before it (seam->k_last = part->k_first - 1), indexed (pp_dp_index_table;
 * dp NULL: 2bw tables): the returned table's rows from *skip on are the
 * downset's table over part's budgets.  Takes part: when the seam lowers
 * none of its rows (2bw tables), part itself, indexed as following the
 * seam, with *skip = 0, or, if its row 0 equals the seam's row, indexed
 * with *skip = 1 (that row is the seam's, dropped as equal); else part is
 * freed and the result is a new table
 * over seam->k_last..part->k_last whose row 0 is the seam's row and whose
 * other rows are the part's rows merged with it, rows equal to the one
 * before dropped (*skip = 1).  Caller frees the result; seam is not taken.
 * Pure. */
pp_stairs *pp_dp_segment(const pp_dp *dp, const pp_stairs *seam, pp_stairs *part, int *skip);

/* 1 if t is a well-formed complete table for downset id of this DP (read
 * from a file): for 2bw, pp_stairs_valid and a zero empty-downset table; for
 * Pareto rows, budgets 0..K in rising rows, entries with s in 0..S, sorted,
 * not dominated within a row, the empty downset's entry zero.  Else 0 and
 * *why (if why) says what is wrong (static string). */
int pp_dp_table_valid(const pp_dp *dp, int id, const pp_stairs *t, const char **why);

/* The most steps a row of a table of this DP may hold: S + 1 for 2bw, more
 * for Pareto rows (several entries per s, a few slots each). */
double pp_dp_row_steps_max(const pp_dp *dp);

/* Builds (or rebuilds) the index a complete table of this DP needs before
 * it is read by pp_dp_compute_rows: the fresh steps of each row
 * (pp_stairs_index_fresh, or the Pareto rows' own).  dp NULL: a 2bw
 * table. */
void pp_dp_index_table(const pp_dp *dp, pp_stairs *table);

/* Sets (takes ownership of) the complete table of downset id: it is
 * indexed (pp_dp_index_table), copied into dp's own memory and freed. */
void pp_dp_set_table(pp_dp *dp, int id, pp_stairs *table);

/* Sets the table of downset id to a view of a block written by
 * pp_stairs_flat_write (from a complete, indexed table) that lives outside
 * dp, e.g. in memory shared by the processes of a node.  Nothing is copied;
 * the block must stay unchanged until dp is freed. */
void pp_dp_view_table(pp_dp *dp, int id, const void *block);

/* The table of downset id (0 <= id < ds->count), or NULL if none is set
 * yet.  Owned by dp (valid until it is replaced or dp freed). */
const pp_stairs *pp_dp_table(const pp_dp *dp, int id);

/* PP_OK while the table blocks set so far (pp_dp_set_table's and
 * pp_dp_view_table's, each block counted once) hold no more than the
 * memory limit given to pp_dp_create (none if it was 0).  Otherwise
 * PP_ERR_LIMIT, the message naming the bytes held after layer `layer` of
 * n_layers, the limit and pp_dp_create's estimate: that estimate is made
 * before the start and can fall short, so the layer driver checks the
 * tables themselves after every layer (pp_layer_run).  Not collective:
 * processes holding the same tables decide alike. */
pp_status pp_dp_check_held(const pp_dp *dp, int layer, int n_layers, pp_error *err);

/* Bytes of table blocks dp keeps in its own memory (pp_dp_set_table; not
 * the views of pp_dp_view_table), for memory reports. */
double pp_dp_own_bytes(const pp_dp *dp);

/* Progress reporting: called after each downset with the fraction of the
 * estimated work done (0..1) and the current layer (1..n_layers); user is
 * the pointer given with it. */
typedef void (*pp_progress_fn)(void *user, int layer, int n_layers, double fraction);

/* Estimated relative work of each downset (for progress and load balance):
 * proportional to its number of sub-downsets.  Array owned by dp. */
const double *pp_dp_work(const pp_dp *dp);

/* The number of (downset, strict sub-downset) pairs: the DP's transitions.
 * Computed by pp_dp_create; never fails. */
long long pp_dp_pairs(const pp_dp *dp);

/* Runs the whole DP in this process: pp_layer_run (include/piper/layer.h)
 * with the single-participant comm, the path of a one-rank `piper plan`.
 * Returns PP_OK (every table set), or PP_ERR_INTERRUPTED after a layer if
 * a stop was requested (pp_stop_requested; the tables of the layers done
 * are set, the rest not), with err saying so. */
pp_status pp_dp_solve(pp_dp *dp, pp_progress_fn progress, void *user, pp_error *err);

/* The optimum for budget k <= K over every s (+INFINITY if infeasible):
 * the time per sample under the problem's schedule. */
double pp_dp_optimum(const pp_dp *dp, int k);

/* The optimum for budget k <= K with a sum of data-parallel degrees of at
 * most s (s >= 0; values above S = min(N, K) mean S). */
double pp_dp_optimum_s(const pp_dp *dp, int k, int s);

/* Rebuilds the optimal plan for budget k from the tables (every table must be
 * set).  Tie-breaking is deterministic.  *out is a new plan (caller frees);
 * infeasible optimum gives a plan with feasible = 0 and no stages.  Returns
 * PP_ERR_INTERNAL if no step can be found (a bug). */
pp_status pp_dp_reconstruct(pp_dp *dp, int k, pp_plan **out, pp_error *err);

/* The same with the sum of data-parallel degrees bounded by s (as in
 * pp_dp_optimum_s): the plan of pp_dp_optimum_s(dp, k, s). */
pp_status pp_dp_reconstruct_s(pp_dp *dp, int k, int s, pp_plan **out, pp_error *err);

/* A DP state for a smaller budget of the same problem: p must equal dp's
 * problem except for p->devices <= dp's (p, like dp's graph and downsets,
 * must outlive the result).  Holds every table of dp that is set, cut to the
 * budgets 0..p->devices (pp_stairs_restrict; Pareto rows entry by entry, pp__dpf_restrict), which are exactly the tables a
 * DP for p computes: what `piper sweep` archives for the rows it answers
 * from one DP at their largest budget.  For reading (pp_dp_table,
 * pp_dp_optimum) and archiving only: not for pp_dp_compute_rows or
 * pp_dp_reconstruct.  Caller frees with pp_dp_free. */
pp_dp *pp_dp_restrict(const pp_dp *dp, const pp_problem *p);

#endif /* PIPER_DP_H */
