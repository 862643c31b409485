/*
 * problem.h - the parameters of one planning problem: the budgets and the
 * model options that apply on top of a graph.
 */
#ifndef PIPER_PROBLEM_H
#define PIPER_PROBLEM_H

#include "piper/graph.h"

typedef enum pp_knapsack_mode {
  PP_KNAPSACK_GREEDY = 0, /* the reference's greedy heuristic (default) */
  PP_KNAPSACK_EXACT = 1   /* exact branch and bound (exponential worst case) */
} pp_knapsack_mode;

typedef struct pp_problem {
  int devices;      /* K: at most this many devices */
  double memory;    /* M: bytes per device */
  int microbatches; /* N: microbatches per batch */
  double bandwidth; /* B: bytes per second */
  int no_dp;        /* only d = 1 */
  int no_tp;        /* only t = 1 */
  int no_recompute; /* TMPCs with id "activation recomp" are unusable */
  pp_knapsack_mode knapsack;
} pp_problem;

/* Largest device count we accept: tables grow with K. */
#define PP_MAX_DEVICES      1000000
#define PP_MAX_MICROBATCHES 100000000

/* The bound on the sum of data-parallel degrees: S = min(N, K). */
static inline int pp_problem_max_s(const pp_problem *p) {
  return p->microbatches < p->devices ? p->microbatches : p->devices;
}

#endif /* PIPER_PROBLEM_H */
