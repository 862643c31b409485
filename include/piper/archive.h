/*
 * archive.h - the HDF5 solution archive and the checkpoint file.
 *
 * The only module that includes <hdf5.h>.  Layout (see README):
 *   /problem   attributes: devices, memory, bandwidth, microbatches, no_dp,
 *              no_tp, no_recompute, knapsack, planner, input_path, input_sha256,
 *              identity; dataset input_json (the input file verbatim)
 *   /graph     node_id, node_name, edge_source, edge_dest, edge_cost
 *   /downsets  members [count x nodes] (uint8), size [count]
 *   /dp        the exact DP tables as staircases (each working rank
 *              writes a contiguous block of tables, balanced by bytes):
 *              table_first_row [count+1], table_first_step [count+1],
 *              row_k [rows], row_first_step [rows], step_s [steps],
 *              step_value [steps] (+inf = infeasible); attributes devices,
 *              max_s; chunked, deflated; absent for the equi planner
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

/* A digest identifying (input bytes, parameters): SHA-256 as 64 hex digits
 * and a NUL in hex[65].  Local (no I/O, not collective); never fails. */
void pp_archive_identity(const pp_graph *g, const pp_problem *p, char hex[65]);

/* Writes the archive to a unique temporary file beside path and replaces
 * path with it when complete (pp_file_temp / pp_file_commit).  Collective
 * over d (parallel HDF5, MPI-IO); with d NULL or a d without MPI
 * (pp_dist_comm_handle NULL), written by this process alone through HDF5's
 * serial driver.  On failure on any rank
 * (PP_ERR_IO naming the file, the failing step and HDF5's or the system's
 * reason, e.g. "No space left on device"; the same status on every rank) no
 * temporary file remains and any existing file at path is untouched.
 * Measures its own time into *seconds (may be NULL). */
pp_status pp_archive_write(pp_dist *d, const char *path, const pp_archive_content *c, double *seconds,
                           pp_error *err);

/* An archive opened for reading (single process). */
typedef struct pp_archive pp_archive;

/* Opens an archive and validates all of it before use: every dataset and
 * attribute for class, shape and size (declared sizes against the bytes the
 * file holds, so a small file cannot cause a large allocation), /problem
 * within piper's limits and matching its stored identity and input digest,
 * the graph parsed from the stored input, the downsets equal to its
 * enumeration, every /dp table for the DP's invariants (pp_stairs_valid),
 * /dp's attributes and /curve against /problem and the tables, and /plan
 * through the checker.  An equi archive has neither downsets nor tables
 * (pp_archive_downsets and pp_archive_dp return NULL; its /plan is checked
 * for validity only).  PP_ERR_INPUT "<path>: not a valid piper archive:
 * <dataset>: <why>" (or naming the file if missing or not HDF5).  The
 * file is first read and checked the same way in a child process
 * (pp_isolated_run): if that child dies of a signal (Debian 12's HDF5 1.10.8
 * faults inside its own parsing of some damaged files), the result is
 * PP_ERR_INPUT "<path>: not a valid piper archive: reading it crashed a
 * child process ..." and this process never parses the file.  Single
 * process, no MPI; *out is new (pp_archive_close). */
pp_status pp_archive_open(const char *path, pp_archive **out, pp_error *err);
/* Frees the archive and everything it holds (NULL is a no-op). */
void pp_archive_close(pp_archive *a);

/* The parts read by pp_archive_open, owned by the archive (valid until
 * pp_archive_close); downsets and dp are NULL for an equi archive.  Never
 * fail; single process. */
const pp_graph *pp_archive_graph(const pp_archive *a);
const pp_problem *pp_archive_problem(const pp_archive *a);
const pp_downsets *pp_archive_downsets(const pp_archive *a);
pp_dp *pp_archive_dp(pp_archive *a);
/* The path the archive was opened from (for messages). */
const char *pp_archive_path(const pp_archive *a);

/* Reads the stored plan (/plan) into a new pp_plan (*out, caller frees
 * with pp_plan_free), checking shapes, degrees, node ids and TMPC names.
 * PP_OK, or PP_ERR_INPUT naming the dataset (*out NULL).  Single process. */
pp_status pp_archive_read_plan(const pp_archive *a, pp_plan **out, pp_error *err);

/* Summary of an archive for study tables: the archive is opened and
 * checked whole (pp_archive_open), then the attributes listed read.
 * PP_ERR_INPUT naming the dataset or attribute. */
typedef struct pp_archive_summary {
  char input[512];
  int devices, microbatches;
  double memory, bandwidth;
  int no_dp, no_tp, no_recompute;
  pp_planner planner;
  int zero;               /* --zero level (0: none) */
  int devices_per_node;   /* G of the two-level network (0: one level) */
  double intra_bandwidth; /* bytes/s per device inside a node (0: one level) */
  int schedule, uniform;  /* pp_schedule and --uniform */
  int feasible;
  double tps;
  int devices_used, stages;
  int downsets;
  double seconds;
} pp_archive_summary;

/* Fills *s for the archive at path (opened, checked whole and closed
 * again).  PP_OK, or PP_ERR_INPUT / PP_ERR_IO naming the file and dataset
 * (s is then unspecified).  Single process. */
pp_status pp_archive_read_summary(const char *path, pp_archive_summary *s, pp_error *err);

/* Writes a study table (/study, one dataset per column, one row per
 * archive) to path, replaced atomically like an archive; single process.
 * files[i] names rows[i]'s archive.  PP_ERR_IO / PP_ERR_USAGE as
 * pp_archive_write. */
pp_status pp_archive_write_study(const char *path, const pp_archive_summary *rows, const char *const *files,
                                 int n, pp_error *err);

/* What an existing file holds, judged by its signature and its top-level
 * groups only (nothing is checked further): not HDF5 (or unreadable), an
 * archive (/problem), a study table (/study) or some other HDF5 file (also
 * a file on which the HDF5 library faults: looked at in a child process
 * first, as pp_archive_open does).  Never fails; single process. */
typedef enum pp_file_kind {
  PP_FILE_NOT_HDF5,
  PP_FILE_ARCHIVE,
  PP_FILE_STUDY,
  PP_FILE_OTHER_HDF5
} pp_file_kind;
pp_file_kind pp_archive_file_kind(const char *path);

/* Reads the study table at path (as pp_archive_write_study writes it) into
 * *rows (n_rows of them; caller frees with free()), every column checked:
 * present, one-dimensional, all of one length, integers and flags in range,
 * flags and schedule names known.  The archive column is not returned.
 * PP_OK, or PP_ERR_INPUT naming the file and dataset (*rows NULL), also
 * for a table of no rows (an empty study).  Read in a child process first,
 * like pp_archive_open.  Single process. */
pp_status pp_archive_read_study(const char *path, pp_archive_summary **rows, int *n_rows, pp_error *err);

/* Checkpoints (written by rank 0 alone, read by rank 0 alone; not
 * collective): the tables of layers 1..layers_done (which must be set in
 * dp) and the run identity.  Written and replaced atomically like an
 * archive.  PP_OK, or PP_ERR_IO naming the file and HDF5's or the system's
 * reason (nothing left behind, an existing checkpoint at path untouched). */
pp_status pp_checkpoint_write(const char *path, const char *identity, const pp_downsets *ds, const pp_dp *dp,
                              int layers_done, pp_error *err);

/* Reads a checkpoint into packed tables (pp_stairs_pack format, for a
 * broadcast) after checking everything in it: its identity (the run's),
 * layers_done within the layers of ds, the downset count of ds, and the
 * tables: those of downsets 1 .. layer_start[layers_done + 1] - 1 each
 * exactly once, each a valid complete table for p of the kind that dp
 * (the run's DP, created for p; its tables are not read) keeps
 * (pp_dp_table_valid: 2bw's staircases or the synchronous schedules'
 * Pareto rows).
 * *buf is new (caller frees).  PP_ERR_INPUT "<path>: not a valid piper
 * checkpoint: <dataset or attribute>: <why>", or naming the foreign
 * identity.  Like pp_archive_open, the file is read in a child process
 * first, and a child that dies of a signal gives PP_ERR_INPUT "... reading it
 * crashed a child process ...".  Single process (rank 0 alone: the child
 * uses no MPI). */
pp_status pp_checkpoint_read(const char *path, const char *identity, const pp_downsets *ds,
                             const pp_problem *p, const pp_dp *dp, int *layers_done, char **buf, size_t *len,
                             pp_error *err);

#endif /* PIPER_ARCHIVE_H */
