/*
 * plan_steps.h - steps of planning shared by `piper plan` and `piper sweep`.
 */
#ifndef PIPER_PLAN_STEPS_H
#define PIPER_PLAN_STEPS_H

#include <stdio.h>

#include "piper/dist.h"
#include "piper/downsets.h"
#include "piper/dp.h"
#include "piper/error.h"
#include "piper/plan.h"

/* Collective: sends rank 0's plan (of a graph of n_nodes nodes) to every
 * rank (pp_dist_from_root, pp_plan_pack); *plan is replaced on the others
 * (the old one freed).  Returns the agreed status: PP_ERR_INTERNAL if the
 * bytes received do not make a plan. */
pp_status pp_plan_share(pp_dist *d, pp_plan **plan, int n_nodes, pp_error *err);

/* State of the per-layer checkpoint callback pp_plan_on_layer. */
typedef struct pp_ckpt_state {
  pp_dist *d;
  const char *path; /* NULL: no checkpoints */
  const char *identity;
  const pp_downsets *ds;
  const pp_dp *dp;
  double every; /* seconds between checkpoints; 0 = every layer */
  double last;  /* pp_now() of the last checkpoint (or the start) */
  FILE *warn;   /* where a failed periodic checkpoint is reported (may be NULL) */
} pp_ckpt_state;

/* A pp_layer_done_fn (user = pp_ckpt_state *): rank 0 writes a checkpoint
 * after a layer when `every` seconds have passed or the run is stopping,
 * except after the last layer (the archive follows).  A periodic checkpoint
 * that cannot be written is reported on warn and the run goes on (nothing
 * is left behind); only when stopping is the failure returned. */
pp_status pp_plan_on_layer(void *user, int layer, int stopping, pp_error *err);

/* Collective: if rank 0 finds a checkpoint at path, checks that it belongs
 * to identity, sends its tables to every rank and installs them in dp
 * (pp_dist_install); returns
 * the first layer still to compute in *first_layer (1 without a
 * checkpoint, saying so on log unless it is NULL).  PP_ERR_INPUT for a damaged or foreign
 * checkpoint. */
pp_status pp_plan_resume(pp_dist *d, const char *path, const char *identity, const pp_problem *p, pp_dp *dp,
                         const pp_downsets *ds, FILE *log, int *first_layer, pp_error *err);

/* Without --max-memory-use the downsets may take at most this many bytes
 * (their bitsets grow with the nodes: 12 KiB each at 100,000 nodes), so a
 * very wide input is refused in seconds instead of filling the machine;
 * the DP tables keep the 80%-of-RAM default. */
#define PP_DOWNSETS_DEFAULT_BYTES (1024.0 * 1024.0 * 1024.0)

/* Collective: pp_dist_downsets within max_count downsets and, for their
 * bytes, given (--max-memory-use) if > 0, else the smaller of fallback
 * (the default memory limit) and PP_DOWNSETS_DEFAULT_BYTES; a limit
 * message then says that default.  Same results and ownership as
 * pp_dist_downsets (PP_ERR_LIMIT, PP_ERR_INTERRUPTED on a stop request). */
pp_status pp_plan_downsets(pp_dist *d, const pp_graph *g, long long max_count, double given, double fallback,
                           pp_downsets **out, pp_error *err);

#endif /* PIPER_PLAN_STEPS_H */
