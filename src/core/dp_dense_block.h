/*
 * dp_dense_block.h - private to dp_dense.c and dp_dense_block.c: the dense
 * block the kernel writes its candidates into, and its closure.
 */
#ifndef PIPER_CORE_DP_DENSE_BLOCK_H
#define PIPER_CORE_DP_DENSE_BLOCK_H

#include "dp_impl.h"
#include "table_build.h"

/* The kernel's scratch, kept across calls.  The cells are +INFINITY
 * between calls: a call writes only within the spans it records and
 * resets them while it reads them (pp__dk_close). */
struct pp__dp_dense {
  double *cells; /* [cap_cells] */
  size_t cap_cells;
  int *span; /* [2 * cap_rows]: per block row the cells written, lo..hi (lo > hi: none) */
  int cap_rows;
  double *R;            /* [S + 1]: the closed row before the current one */
  int *ps, *ns;         /* [S + 1]: the previous and the new row's steps */
  double *pv, *nv;      /* [S + 1] */
  pp__stairs_build out; /* the table being built */
};

/* dp's scratch (dp->dk, made on first use and kept), ready for a block of nk
 * rows of width W: cells nk x W all +INFINITY, every row's span empty.
 * Aborts through pp_xmalloc when memory runs out. */
pp__dp_dense *pp__dk_scratch(pp_dp *dp, int nk, int W);

/* Resets to +INFINITY the cells written in the block's nk rows (their spans),
 * for a call abandoned by a stop. */
void pp__dk_reset(pp__dp_dense *dk, int nk, int W);

/* The table (owned by the caller) of the block's rows k0..k1 of width S + 1:
 * row k is the prefix minimum in k and s of the cells, a row equal to the one
 * before is not stored; computed from the written spans only, and the cells
 * read are reset to +INFINITY, so the scratch is ready for the next call. */
pp_stairs *pp__dk_close(pp__dp_dense *dk, int k0, int k1, int S);

#endif
