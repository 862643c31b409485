/*
 * archive.h - the HDF5 solution archive and the checkpoint file.
 *
 * The only module that includes <hdf5.h>.  Layout (see README):
 *   /problem   attributes: devices, memory, bandwidth, microbatches, no_dp,
 *              no_tp, no_recompute, knapsack, planner, input_path, input_sha256,
 *              identity; dataset input_json (the input file verbatim)
 *   /graph     node_id, node_name, edge_source, edge_dest, edge_cost
 *   /downsets  members [count x nodes] (uint8), size [count]
 *   /dp        the exact DP tables as staircases (each rank writes a
 *              contiguous block of tables, balanced by bytes): table_first_row [count+1],
 *              row_k [rows], row_first_step [rows+1], step_s [steps],
 *              step_value [steps] (+inf = infeasible); chunked, deflated
 *   /plan      the optimal plan: per stage d, t, devices, load, memory, y,
 *              first_node; per node (in stage order) node_id, node_stage,
 *              node_tmpc; attributes feasible, tps, devices_used, sum_d
 *   /curve     k [K], tps [K]: the best time per sample for every budget
 *   /run       ranks, hostnames, seconds per phase (enumerate, dp, exchange,
 *              write), bytes exchanged, peak memory, version
 */
#ifndef PIPER_ARCHIVE_H
#define PIPER_ARCHIVE_H

#include "piper/dist.h"
#include "piper/dp.h"
#include "piper/downsets.h"
#include "piper/error.h"
#include "piper/graph.h"
#include "piper/plan.h"
#include "piper/problem.h"

/* Facts about the run stored under /run. */
typedef struct pp_run_record {
  int ranks;
  const char *hostnames; /* ranks x host_width bytes, NUL-padded */
  int host_width;
  double seconds_enumerate, seconds_dp, seconds_exchange, seconds_total;
  double bytes_exchanged;
  double peak_rss_bytes; /* largest over ranks */
  int resumed;           /* 1 if continued from a checkpoint */
} pp_run_record;

/* Everything an archive holds, as the writer receives it. */
typedef struct pp_archive_content {
  const pp_graph *g;
  const pp_problem *p;
  const pp_downsets *ds;
  const pp_dp *dp;     /* every table set; NULL for a planner without tables (equi) */
  const double *curve; /* [p->devices] best TPS per budget, used when dp is NULL */
  const pp_plan *plan; /* checked plan for budget p->devices */
  pp_run_record run;
} pp_archive_content;

/* A digest identifying (input bytes, parameters): hex[65]. */
void pp_archive_identity(const pp_graph *g, const pp_problem *p, char hex[65]);

/* Collective over d: writes the archive to a temporary file next to path
 * and renames it over path on success (rank 0).  On failure the temporary
 * file is removed and any existing file at path is untouched.  Measures its
 * own time into *seconds (may be NULL). */
pp_status pp_archive_write(pp_dist *d, const char *path, const pp_archive_content *c, double *seconds,
                           pp_error *err);

/* An archive opened for reading (single process). */
typedef struct pp_archive pp_archive;

/* Opens and validates an archive: graph (from the stored input), problem,
 * downsets and every table (an equi archive has neither downsets nor tables:
 * pp_archive_downsets and pp_archive_dp return NULL).  PP_ERR_INPUT with a clear message if the file
 * is missing, not HDF5, truncated or inconsistent. */
pp_status pp_archive_open(const char *path, pp_archive **out, pp_error *err);
void pp_archive_close(pp_archive *a);

const pp_graph *pp_archive_graph(const pp_archive *a);
const pp_problem *pp_archive_problem(const pp_archive *a);
const pp_downsets *pp_archive_downsets(const pp_archive *a);
pp_dp *pp_archive_dp(pp_archive *a);

/* Reads the stored plan (/plan) into a new pp_plan (caller frees). */
pp_status pp_archive_read_plan(const pp_archive *a, pp_plan **out, pp_error *err);

/* Summary of an archive for study tables (reads attributes only). */
typedef struct pp_archive_summary {
  char input[512];
  int devices, microbatches;
  double memory, bandwidth;
  int no_dp, no_tp, no_recompute;
  pp_planner planner;
  int feasible;
  double tps;
  int devices_used, stages;
  int downsets;
  double seconds;
} pp_archive_summary;

pp_status pp_archive_read_summary(const char *path, pp_archive_summary *s, pp_error *err);

/* Writes a study table (/study, one dataset per column, one row per
 * archive) to path via a temporary file.  files[i] names rows[i]'s archive. */
pp_status pp_archive_write_study(const char *path, const pp_archive_summary *rows, const char *const *files,
                                 int n, pp_error *err);

/* Checkpoints (written by rank 0 alone, read by rank 0 alone): the tables of
 * layers 1..layers_done and the run identity. */
pp_status pp_checkpoint_write(const char *path, const char *identity, const pp_downsets *ds, const pp_dp *dp,
                              int layers_done, pp_error *err);

/* Reads a checkpoint into packed tables (pp_stairs_pack format, for a
 * broadcast) after checking its identity.  *buf is new (caller frees). */
pp_status pp_checkpoint_read(const char *path, const char *identity, int *layers_done, char **buf,
                             size_t *len, pp_error *err);

#endif /* PIPER_ARCHIVE_H */
