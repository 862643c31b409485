/*
 * table.h - the DP table of one downset, stored as a staircase.
 *
 * dp[I][k][s] (best max-load of I with at most k devices and a sum of
 * data-parallel degrees at most s) is non-increasing in k and in s.  For each
 * k the row s -> value is a step function: it is stored as its steps (s, v)
 * with s ascending and v strictly decreasing, the first step at s = 0.
 * Consecutive k with identical rows share one row: the table keeps the
 * distinct rows and the first k of each.  This is exact and small.
 *
 * Pure: no I/O, no communication (nothing here is collective).  A table
 * returned is new and owned by the caller (pp_stairs_free); allocation
 * failure is fatal (pp_xmalloc), so only the functions that read untrusted
 * bytes (pp_stairs_valid, pp_stairs_unpack) report failures.
 */
#ifndef PIPER_TABLE_H
#define PIPER_TABLE_H

#include <stddef.h>

#include "piper/pack.h"
#include "piper/pages.h"

typedef struct pp_stairs {
  int k_first, k_last; /* the device budgets covered, inclusive */
  int n_rows;          /* distinct rows */
  int *row_k;          /* [n_rows] first k of each row, ascending, row_k[0] = k_first */
  int *row_start;      /* [n_rows + 1] offsets into s and v */
  int *s;              /* [row_start[n_rows]] step positions */
  double *v;           /* [row_start[n_rows]] step values */
  /* Derived index (pp_stairs_index_fresh): the steps of each row whose value
   * is below the previous row's value at the same s, i.e. what the row adds
   * over its predecessor.  fresh_start[n_rows + 1] offsets into fresh. */
  int *fresh_start;
  int *fresh; /* step indices relative to the row's first step */
} pp_stairs;

/* Builds a staircase from a dense block dense[(k - k_first) * (S + 1) + s]
 * for k in [k_first, k_last], s in [0, S].  Applies prefix minima in s and in
 * k (within the block) first, in place.  Returns a new staircase (free with
 * pp_stairs_free). */
pp_stairs *pp_stairs_from_dense(double *dense, int k_first, int k_last, int S);

/* The staircase of the empty downset: 0 everywhere for k in [0, K]. */
pp_stairs *pp_stairs_zero(int K);

/* Joins parts covering consecutive k ranges (in order, starting at 0) into
 * one table over [0, last], applying the prefix minimum in k across part
 * boundaries.  Does not take ownership of the parts. */
pp_stairs *pp_stairs_join(pp_stairs *const *parts, int n_parts);

/* Index of the row that holds budget k (k_first <= k <= k_last): binary
 * search over row_k (k below row_k[0] gives row 0). */
int pp_stairs_row(const pp_stairs *t, int k);

/* dp value at (k, s), s >= 0: +INFINITY (infeasible) for k < k_first or s
 * below the row's first step; k above k_last reads row k_last, s beyond the
 * last step the last step's value. */
double pp_stairs_value(const pp_stairs *t, int k, int s);

/* Builds (or rebuilds) the fresh-step index of t, replacing (and freeing)
 * any previous one. */
void pp_stairs_index_fresh(pp_stairs *t);

/* The same, t's row 0 taken as following the last row of before (its fresh
 * steps are those below that row): the index t's rows have within a table
 * that holds before's last row just ahead of them. */
void pp_stairs_index_fresh_after(pp_stairs *t, const pp_stairs *before);

/* Whether t's rows stay as they are when t follows the last row of before
 * in one table (pp_stairs_join): 1 if t's row 0 is no higher at any s (so
 * neither are its later rows) and differs from that row; 2 if t's row 0
 * equals that row (the join drops it as equal and keeps the later rows as
 * they are); 0 if before's row lowers t's row 0.  Pure. */
int pp_stairs_absorbs(const pp_stairs *t, const pp_stairs *before);

/* Total bytes held (for memory accounting). */
size_t pp_stairs_bytes(const pp_stairs *t);

/* The table of the same downset for the budgets k_first..k_last and sums
 * s <= S (k_last <= t->k_last): t's rows up to k_last with their steps up to
 * S, rows that became equal merged.  Exact: dp[I][k][s] for those k and s
 * does not depend on the largest budget.  Returns a new table (caller
 * frees); its fresh index is not built. */
pp_stairs *pp_stairs_restrict(const pp_stairs *t, int k_last, int S);

/* A new table for budgets k_first..k_last with room for n_rows rows and
 * n_steps steps, its arrays uninitialised for the caller to fill (e.g. when
 * unpacking a received table).  Caller frees with pp_stairs_free; aborts
 * only if memory runs out (pp_xmalloc). */
pp_stairs *pp_stairs_new(int k_first, int k_last, int n_rows, int n_steps);

/* Frees t and its arrays (NULL is a no-op). */
void pp_stairs_free(pp_stairs *t);

/* 1 if t is a complete table as the DP builds it for budgets up to K and
 * degree sums up to S: k_first = 0, k_last = K; rows at rising k from 0;
 * row offsets rising from 0, each row 1..S + 1 steps at rising s from 0
 * within 0..S; values non-negative, not NaN, strictly falling in s and not
 * rising in k.  Else 0 and *why (if not NULL) says which rule fails (a
 * static string).  For tables read from files; the arrays s and v must hold
 * row_start[n_rows] steps.  Pure. */
int pp_stairs_valid(const pp_stairs *t, int K, int S, const char **why);

/* A table in one position-independent block, for memory that several
 * processes map at different addresses: pp_stairs_flat_bytes(t) bytes (a
 * multiple of 64), written by pp_stairs_flat_write at an 8-byte aligned
 * block.  t must have its fresh index (pp_stairs_index_fresh).
 * pp_stairs_flat_view points a header at such a block and returns the
 * block's bytes (pp_stairs_flat_bytes of its table): nothing is copied, the
 * view must not be freed with pp_stairs_free and the block must outlive
 * it. */
size_t pp_stairs_flat_bytes(const pp_stairs *t);
void pp_stairs_flat_write(const pp_stairs *t, void *block);
size_t pp_stairs_flat_view(const void *block, pp_stairs *view);

/* A flat block can also be written in pieces, by several writers at once
 * (e.g. the ranks of a node, each holding some of a table's rows): piece i
 * is the rows of a table t_i from row skip_i on, indexed, the pieces in
 * rising k and together the whole table.  pp_stairs_flat_counts gives the
 * sizes of a piece; their sums over the pieces (all) give the block's size
 * (pp_stairs_flat_size) and, over the pieces before one (before), where it
 * goes.  pp_stairs_flat_write_rows writes one piece into the block: the
 * header too if first (the piece from k_first), the end marks too if last;
 * pieces touch disjoint bytes.  The block is then the one
 * pp_stairs_flat_write writes for the whole table. */
typedef struct pp_flat_counts {
  size_t rows, steps, fresh;
} pp_flat_counts;
pp_flat_counts pp_stairs_flat_counts(const pp_stairs *t, int skip);
size_t pp_stairs_flat_size(pp_flat_counts all);
void pp_stairs_flat_write_rows(const pp_stairs *t, int skip, void *block, int k_first, int k_last,
                               pp_flat_counts all, pp_flat_counts before, int first, int last);

/* The same write as copies to be made (pp_pages_copy), for a writer that
 * copies several pieces at once or not with memcpy: pp_stairs_flat_spans
 * puts into out (room for PP_FLAT_SPANS) the spans that write the piece
 * into block, returns their number, and makes the header and the row
 * offsets in scratch (pp_stairs_flat_scratch_ints(t, skip) ints), which
 * must outlive the copy, as must t.  Copied, they write exactly the bytes
 * pp_stairs_flat_write_rows writes.  Writes only scratch. */
#define PP_FLAT_SPANS 7
size_t pp_stairs_flat_scratch_ints(const pp_stairs *t, int skip);
int pp_stairs_flat_spans(const pp_stairs *t, int skip, void *block, int k_first, int k_last,
                         pp_flat_counts all, pp_flat_counts before, int first, int last, int *scratch,
                         pp_span *out);

/* The last row of t alone: a new one-row table over the budgets
 * t->k_last..t->k_last (no fresh index; caller frees).  What the joins of
 * k-range parts carry from one part to the next (pp_dp_seam). */
pp_stairs *pp_stairs_last_row(const pp_stairs *t);

/* One table over k_first..k_last from pieces in rising k: the rows of
 * pieces[i] from row skip[i] on, in order (no row is merged or dropped:
 * each piece's first row kept must differ from the row before it).  A new
 * table without fresh index (caller frees); does not take the pieces. */
pp_stairs *pp_stairs_concat(const pp_stairs *const *pieces, const int *skip, int n, int k_first, int k_last);

/* Appends table t, tagged with a downset id, to w: int32 id, k_first,
 * k_last, n_rows; int64 steps; then row_k[n_rows], row_start[n_rows + 1],
 * s[steps], v[steps].  The format of the exchange and of checkpoints. */
void pp_stairs_pack(const pp_stairs *t, int id, pp_pack *w);

/* Appends to w, in pp_stairs_pack's format, what the joins of k-range
 * parts need of table t (a part of downset id): its budgets k_first..k_last
 * in the header and its last row as the only one (at k_first).  Read back,
 * pp_stairs_unpack_last gives what it gives of pp_stairs_pack's record of
 * t; pp_stairs_unpack gives a one-row table over t's budgets.  What ranks
 * that share memory exchange instead of their whole parts (see
 * include/piper/layer.h, pp_layer_comm.keep). */
void pp_stairs_pack_tail(const pp_stairs *t, int id, pp_pack *w);

/* Reads one table written by pp_stairs_pack.  Returns a new table (caller
 * frees; no fresh index) and sets *id, or NULL if the bytes are short or
 * are inconsistent (budgets ascending, each row non-empty, step positions
 * s >= 0, offsets consistent); r is then
 * bad.  Nothing is allocated before the sizes are checked against the
 * bytes left. */
pp_stairs *pp_stairs_unpack(pp_unpack *r, int *id);

/* Skips one table written by pp_stairs_pack, reading only its header:
 * sets *id and returns 0, or -1 if the header is bad or the bytes are
 * short (r is then bad).  The arrays are not checked (pp_stairs_unpack
 * does that).  Allocates nothing. */
int pp_stairs_skip(pp_unpack *r, int *id);

/* Reads only the last row of one table written by pp_stairs_pack (the
 * rest is skipped): returns it as pp_stairs_last_row would of the whole
 * table (caller frees) and sets *id, or NULL if the bytes are short or the
 * header, the row's offsets or its step positions are bad (r is then bad).
 * Allocates nothing before the sizes are checked. */
pp_stairs *pp_stairs_unpack_last(pp_unpack *r, int *id);

#endif /* PIPER_TABLE_H */
