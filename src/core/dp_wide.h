/*
 * dp_wide.h - the 2bw kernel for large tables (dp_wide.c): a sweep over
 * the budgets k that holds one row of the new table instead of a dense
 * (K + 1) x (S + 1) block.  Private to src/core (dp.c selects it).
 */
#ifndef PIPER_DP_WIDE_H
#define PIPER_DP_WIDE_H

#include "dp_impl.h"

/* 1 if the 2bw tables of a problem with budget K and S = min(N, K) are
 * computed by the sweep (their dense block would exceed 2^24 cells, 128 MiB:
 * below that the dense kernel of dp.c is faster, its memory access being
 * sequential per pair). */
int pp__dpw_use(int K, int S);

/* Bytes the sweep allocates for one downset at most (besides the table it
 * returns), for downsets of at most max_subsets strict sub-downsets under
 * (g, p): pp_dp_create's estimate. */
double pp__dpw_bytes(const pp_graph *g, const pp_problem *p, long long max_subsets);

/* The rows k0..k1 of downset id, exactly as the dense kernel of dp.c
 * computes them (a new table; caller frees), or NULL on a stop.  Its
 * buffers are dp->ws's, made on the first call. */
pp_stairs *pp__dpw_rows(pp_dp *dp, int id, int k0, int k1);

/* Frees the buffers of pp__dpw_rows (ws may be NULL). */
void pp__dpw_scratch_free(pp__dpw_scratch *ws);

#endif /* PIPER_DP_WIDE_H */
