/*
 * dp_small.h - the state of the small-block 2bw kernel (dp_small.c) and
 * its pair screens (dp_small_screen.c).  Private to src/core.
 */
#ifndef PIPER_DP_SMALL_H
#define PIPER_DP_SMALL_H

#include "dp_impl.h"
#include "dp_small_lag.h"

/* Per-downset sums of the node floors (pp_stage_node_floor) for every
 * degree pair (t, d) with t*d <= K, and per (downset, t) the number of
 * nodes with no usable TMPC for t (their floor is infinite, left out of
 * the sums). */
/* Sums over a downset's nodes of their floors at one degree pair: load
 * (pp_stage_node_floor) and memory A and B (pp_stage_node_mem_floor). */
typedef struct pp__dps_floor3 {
  double l, a, b;
} pp__dps_floor3;
/* The memory sums rounded up to floats (pp__float_up), for J's side. */
typedef struct pp__dps_floor2f {
  float a, b;
} pp__dps_floor2f;

/* A fresh step of a table: row budget k, position f, value a (exact); its
 * row is apart (pp__dp_small.cr): 16 bytes per corner for the screens. */
typedef struct pp__dps_corner {
  double a;
  int k, f;
} pp__dps_corner;

/* Where the corners of a downset are: cs[off .. off + n), off = -1 if not
 * made yet. */
typedef struct pp__dps_corner_at {
  int off, n;
} pp__dps_corner_at;

struct pp__dp_small {
  int nc;                 /* degree pairs */
  int *c_ti, *c_di;       /* [nc], in (ti, di) order */
  pp__dps_floor3 *sum;    /* [count * nc] */
  float *l_up;            /* [count * nc]: sum's l rounded up, read as J's */
  pp__dps_floor2f *ab_up; /* [count * nc]: sum's a and b rounded up, read as J's */
  int *unsup;             /* [count * nt] */
  int nt;
  /* per downset its table's corners (the fresh steps of every row), made
   * on first use: cs[at[id].off .. at[id].off + at[id].n), the rows of
   * each in cr at the same index */
  pp__dps_corner_at *at;
  pp__dps_corner *cs;
  int *cr;
  int cs_n, cs_cap;
  int *alive;           /* scratch: indices of corners */
  int *work;            /* scratch: indices of corners (pp__dps_pair_ti_screens) */
  unsigned char *need;  /* scratch: [nc] */
  unsigned char *ti_on; /* scratch: [nt] */
  int *js;              /* scratch: [count] */
  /* The subset index (see subsets_of), or NULL: without[v * idw + w] bit b
   * set iff node v is not in downset 64 w + b; per node its successors
   * succ[succ_off[v] .. succ_off[v + 1]); frontier is scratch [n_nodes]. */
  uint64_t *without;
  int idw, *succ_off, *succ, *frontier;
  pp__lag *lag; /* memory-aware bounds (dp_small_lag.c), or NULL */
};

/* The smallest budget, position and value over the alive corners. */
typedef struct pp__dps_low {
  int k, f;
  double a;
} pp__dps_low;

/* The corners of table id, *n of them (made on first use, kept in sm until
 * pp__dp_small_forget(sm, id)); dp_small.c. */
const pp__dps_corner *pp__dps_corners(const pp_dp *dp, pp__dp_small *sm, int id, int *n);

/* The pair screens (dp_small_screen.c).  pp__dps_alive_corners: J's
 * corners (*cs) that pass the J-side screen against the closed block of
 * budgets k0..k1, listed in sm->alive; returns their number and their
 * smallest budget, position and value in *low.  pp__dps_pair_ti_screens:
 * need[c] for the degree pairs c_lo..c_hi - 1 of one t (work: scratch for
 * na indices). */
int pp__dps_alive_corners(const pp_dp *dp, pp__dp_small *sm, int j, const double *dense, int k0, int k1,
                          const pp__dps_corner **cs, pp__dps_low *low);
void pp__dps_pair_ti_screens(const pp_dp *dp, const pp__dp_small *sm, int id, int j, int c_lo, int c_hi,
                             const pp__dps_corner *cs, int na, const pp__dps_low *low, const double *dense,
                             int k0, int k1, int *work, unsigned char *need);

#endif
