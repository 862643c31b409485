/*
 * dp_dense_block.c - the dense block of dp_dense.c: its scratch, kept
 * across calls, and the closure of the written cells into a table.
 */
#include "dp_dense_block.h"

#include <math.h>
#include <stdlib.h>

#include "piper/pages.h"

void pp__dp_dense_free(pp__dp_dense *dk) {
  if (!dk) return;
  free(dk->cells);
  free(dk->span);
  free(dk->R);
  free(dk->ps);
  free(dk->ns);
  free(dk->pv);
  free(dk->nv);
  pp__sb_free(&dk->out);
  for (int i = 0; i < dk->n_recs; i++) free(dk->recs[i].rec);
  free(dk->recs);
  free(dk);
}

/* dp's scratch, ready for a block of nk rows of width W. */
pp__dp_dense *pp__dk_scratch(pp_dp *dp, int nk, int W) {
  if (!dp->dk) {
    dp->dk = pp_xcalloc(1, sizeof *dp->dk);
    dp->dk->R = pp_xmalloc(sizeof(double) * (size_t)W);
    dp->dk->ps = pp_xmalloc(sizeof(int) * (size_t)W);
    dp->dk->ns = pp_xmalloc(sizeof(int) * (size_t)W);
    dp->dk->pv = pp_xmalloc(sizeof(double) * (size_t)W);
    dp->dk->nv = pp_xmalloc(sizeof(double) * (size_t)W);
  }
  pp__dp_dense *dk = dp->dk;
  if (nk > dk->cap_rows) {
    /* room for every budget at once: the k-ranges of the blocks vary (the
     * split among ranks follows their measured times), and the rows are
     * filled only when first used (a rank computing a part of the budgets
     * touches only that many rows); on huge pages where the system allows
     * (BERT-32 at K = 2048: 31.5 MB, 7,700 page faults of 3 us each on
     * small pages here, and a rank whose k-range grows faults in the rows
     * it had not used, within one layer's compute) */
    const int rows = nk > dp->K + 1 ? nk : dp->K + 1;
    free(dk->span);
    dk->span = pp_xmalloc(sizeof(int) * 2 * (size_t)rows);
    free(dk->cells);
    dk->cells = pp_xmalloc_huge(sizeof(double) * (size_t)rows * (size_t)W);
    dk->cap_rows = rows;
    dk->filled_rows = 0;
  }
  for (size_t i = (size_t)dk->filled_rows * (size_t)W; i < (size_t)nk * (size_t)W; i++)
    dk->cells[i] = INFINITY;
  if (nk > dk->filled_rows) dk->filled_rows = nk;
  for (int k = 0; k < nk; k++) {
    dk->span[2 * k] = W;
    dk->span[2 * k + 1] = -1;
  }
  return dk;
}

/* Resets the cells written in the block's nk rows (a stop abandons them). */
void pp__dk_reset(pp__dp_dense *dk, int nk, int W) {
  for (int k = 0; k < nk; k++)
    for (int x = dk->span[2 * k]; x <= dk->span[2 * k + 1]; x++)
      dk->cells[(size_t)k * (size_t)W + (size_t)x] = INFINITY;
}

/* The table of the block's rows k0..k1: what pp_stairs_from_dense makes of
 * the cells (row k is the prefix minimum in k and s of the cells; a row
 * equal to the one before is not stored), computed from the written spans
 * only.  R holds the closed row k - 1 (+INFINITY before k0).  Row k differs
 * from it only from its span's lo on: within the span R[s] becomes
 * min(R[s], cell, R[s - 1]), after it min(R[s], R[s - 1]) until R[s] is no
 * larger than R[s - 1] (then the rest is unchanged too, R being
 * non-increasing).  The steps (s = 0 and every s with R[s] < R[s - 1]) are
 * the previous row's below lo and beyond the last changed cell, and those
 * found by a scan in between.  The cells read are reset to +INFINITY. */
pp_stairs *pp__dk_close(pp__dp_dense *dk, int k0, int k1, int S) {
  const int W = S + 1;
  double *R = dk->R;
  for (int x = 0; x < W; x++) R[x] = INFINITY;
  int pn = 1;
  dk->ps[0] = 0;
  dk->pv[0] = INFINITY;
  for (int k = k0; k <= k1; k++) {
    const int lo = dk->span[2 * (k - k0)], hi = dk->span[2 * (k - k0) + 1];
    double *row = dk->cells + (size_t)(k - k0) * (size_t)W;
    int changed = 0, stop = lo;
    if (lo <= hi) {
      double m = lo > 0 ? R[lo - 1] : INFINITY;
      for (int x = lo; x <= hi; x++) {
        double c = row[x];
        row[x] = INFINITY;
        if (R[x] < c) c = R[x];
        if (m < c) c = m;
        if (c != R[x]) {
          R[x] = c;
          changed = 1;
        }
        m = c;
      }
      for (stop = hi + 1; stop < W && m < R[stop]; stop++) {
        R[stop] = m;
        changed = 1;
      }
    }
    if (!changed && k > k0) continue;
    int n = 0, q = 0;
    for (; q < pn && dk->ps[q] < lo; q++, n++) {
      dk->ns[n] = dk->ps[q];
      dk->nv[n] = dk->pv[q];
    }
    const int end = stop < W ? stop : W - 1;
    for (int x = lo; x <= end; x++)
      if (x == 0 || R[x] < R[x - 1]) {
        dk->ns[n] = x;
        dk->nv[n++] = R[x];
      }
    for (; q < pn && dk->ps[q] <= end; q++) {}
    for (; q < pn; q++, n++) {
      dk->ns[n] = dk->ps[q];
      dk->nv[n] = dk->pv[q];
    }
    pp__sb_row(&dk->out, k, dk->ns, dk->nv, n);
    int *ts = dk->ps;
    double *tv = dk->pv;
    dk->ps = dk->ns;
    dk->pv = dk->nv;
    dk->ns = ts;
    dk->nv = tv;
    pn = n;
  }
  return pp__sb_table(&dk->out, k0, k1);
}
