/*
 * dp_dense_block.h - private to dp_dense.c and dp_dense_block.c: the dense
 * block the kernel writes its candidates into, and its closure.
 */
#ifndef PIPER_CORE_DP_DENSE_BLOCK_H
#define PIPER_CORE_DP_DENSE_BLOCK_H

#include "dp_impl.h"
#include "table_build.h"

/* What the dense kernel's screens read about one row of a sub-downset's
 * table (see dp_dense.c, row_recs): the step just before its first fresh
 * step (pf = -1 if that is step 0), its first and last fresh steps (-1 if
 * the row has none), their values, and the least first fresh step of this
 * row and the later ones. */
typedef struct pp__dk_row_rec {
  int pf, lf, ff;
  double pa, la;
  int ffmin;
} pp__dk_row_rec;

/* The row records of one table, kept while the table is the one of its
 * downset (of: its row array, which a replaced table does not share). */
typedef struct pp__dk_recs {
  const int *of;
  pp__dk_row_rec *rec; /* [the table's n_rows] */
} pp__dk_recs;

/* The kernel's scratch, kept across calls.  The cells of the first
 * filled_rows rows are +INFINITY between calls: a call writes only within
 * the spans it records and resets them while it reads them (pp__dk_close);
 * the rows after them have not been touched yet. */
struct pp__dp_dense {
  double *cells; /* [cap_rows * (S + 1)] */
  int *span;     /* [2 * cap_rows]: per block row the cells written, lo..hi (lo > hi: none) */
  int cap_rows, filled_rows;
  double *R;            /* [S + 1]: the closed row before the current one */
  int *ps, *ns;         /* [S + 1]: the previous and the new row's steps */
  double *pv, *nv;      /* [S + 1] */
  pp__stairs_build out; /* the table being built */
  /* [n_recs] per downset id, its table's row records, made when a pair
   * first reads the table and kept (a table is read by every downset
   * above it): at most 32 bytes per table row, against the 12 of each of
   * the row's steps in the table itself */
  pp__dk_recs *recs;
  int n_recs;
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
