/*
 * plan.h - a parallelization plan: the stages of a pipeline, in order.
 */
#ifndef PIPER_PLAN_H
#define PIPER_PLAN_H

#include "piper/pack.h"

typedef struct pp_plan_stage {
  int n_nodes;
  int *nodes;    /* [n_nodes] node indices, ascending */
  int *tmpc;     /* [n_nodes] index into the node's TMPC list for degree t */
  int d, t;      /* data- and tensor-parallel degrees */
  double load;   /* time per sample of this stage (filled by the checker) */
  double memory; /* bytes per device (filled by the checker) */
  int y;         /* microbatches in flight used for memory (checker) */
  /* Filled by the checker (pp_check_evaluate) for every schedule: */
  double mb_time; /* t_i: one replica's time for one microbatch, d * (load - sync_time / N) */
  double
      sync_time; /* data-parallel gradient synchronisation per batch, N * (the load's 4(d-1)P/(dNB) term) */
  int device_group; /* the devices this stage runs on: 0.. (stage index, or index mod p with virtual stages) */
} pp_plan_stage;

typedef struct pp_plan {
  int feasible;
  double tps;        /* time per sample under the schedule (2bw: max stage load); +INFINITY if infeasible */
  double batch_time; /* time per batch of N microbatches (checker); 2bw: N * tps */
  double bubble;     /* batch_time / (N * max stage load) - 1: the fill and drain (checker); 0 for 2bw */
  int devices_used;  /* sum of d * t */
  int sum_d;         /* sum of d */
  int n_stages;
  pp_plan_stage *stages; /* [n_stages], first pipeline stage first */
} pp_plan;

/* Allocates an empty (infeasible) plan with room for n stages (n_stages
 * set to n, each stage zeroed).  Caller frees with pp_plan_free; allocation
 * failure is fatal.  Pure, like everything here (no I/O, not collective). */
pp_plan *pp_plan_new(int n_stages);

/* Frees a plan; accepts NULL. */
void pp_plan_free(pp_plan *plan);

/* Appends the plan to w (every field, stages in order); never fails. */
void pp_plan_pack(const pp_plan *plan, pp_pack *w);

/* Reads a plan written by pp_plan_pack whose stages name nodes below
 * n_nodes.  Returns a new plan (caller frees), or NULL if the bytes are
 * short or out of range (r is then bad); counts are checked against the
 * bytes left before anything is allocated. */
pp_plan *pp_plan_unpack(pp_unpack *r, int n_nodes);

#endif /* PIPER_PLAN_H */
