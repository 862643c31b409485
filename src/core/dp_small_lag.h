/*
 * dp_small_lag.h - memory-aware lower bounds on a stage's load from
 * per-downset sums (dp_small_lag.c), for the small-block kernel.  Private
 * to src/core.
 */
#ifndef PIPER_DP_SMALL_LAG_H
#define PIPER_DP_SMALL_LAG_H

#include <math.h>
#include <stddef.h>

#include "piper/downsets.h"
#include "piper/problem.h"
#include "stage.h"

#define PP_LAG_N 3 /* multipliers per (t, d, y) */

/* x rounded up to a float (+INFINITY above the floats' range): I's sum
 * minus J's rounded up is no larger than the exact difference, so every
 * lower bound made of such differences stays one. */
static inline float pp__float_up(double x) {
  float f = (float)x;
  if ((double)f < x) f = nextafterf(f, INFINITY);
  return f;
}

typedef struct pp__lag {
  int nc, per;    /* degree pairs; slots per downset */
  int *ymax;      /* [nc]: the largest y of degree pair c, ceil(S / d) */
  int *yo, *slot; /* slot[yo[c] + y]: the slot of (c, y0), y0 the largest
                   * point <= y of a grid of y (bounds hold for every y >= y0) */
  double *lam;    /* [per * PP_LAG_N]; lam[slot * PP_LAG_N] < 0: no bound there */
  double *sum;    /* [count * per * PP_LAG_N]: per downset the sums G */
  float *sum_up;  /* sum rounded up to floats: the subtrahend J's side, half
                   * the bytes of the randomly read sums */
  double M;       /* the memory, raised by the knapsack's slack */
} pp__lag;

/* The bounds for the degree pairs c = (c_ti[c], c_di[c]) of ev (for graph
 * g under problem p) over the downsets ds, or NULL if their sums would take more than max_bytes. */
pp__lag *pp__lag_new(const pp_stage_eval *ev, const pp_graph *g, const pp_problem *p, const pp_downsets *ds,
                     int S, const int *c_ti, const int *c_di, int nc, double max_bytes);
void pp__lag_free(pp__lag *lg);

/* A value no larger than the load of the stage I \ J (downsets i, j with J
 * a subset of I) at degree pair c and any y' >= y, or -INFINITY (no bound). */
static inline double pp__lag_bound(const pp__lag *lg, int i, int j, int c, int y) {
  if (!lg || y < 1 || y > lg->ymax[c]) return -INFINITY;
  const size_t slot = (size_t)lg->slot[lg->yo[c] + y] * PP_LAG_N;
  const double *lam = lg->lam + slot;
  if (lam[0] < 0) return -INFINITY;
  const double *gi = lg->sum + (size_t)i * (size_t)lg->per * PP_LAG_N + slot;
  const float *gj = lg->sum_up + (size_t)j * (size_t)lg->per * PP_LAG_N + slot;
  /* the smallest memory of the stage's nodes: nothing fits above M */
  const double mi = gi[PP_LAG_N - 1], mj = gj[PP_LAG_N - 1];
  if ((mi - mj) - 1e-9 * (mi + mj) > lg->M) return INFINITY;
  double best = -INFINITY;
  for (int q = 0; q < PP_LAG_N - 1; q++) {
    const double lm = lam[q] * lg->M;
    const double v = (gi[q] - gj[q]) - lm - 1e-9 * (fabs(gi[q]) + fabs(gj[q]) + lm);
    best = v > best ? v : best;
  }
  return best;
}

#endif /* PIPER_DP_SMALL_LAG_H */
