/*
 * commands.h - the subcommands of the piper program, as library entry points.
 *
 * Each takes its arguments (argv[0] is the subcommand name), the standard
 * output and log streams, and returns the process exit code.  main.c only
 * sets up the process (MPI) and dispatches.
 */
#ifndef PIPER_COMMANDS_H
#define PIPER_COMMANDS_H

#include <stdio.h>

#include "piper/dist.h"

/* What main read from the environment (the one place that reads it). */
typedef struct pp_cmd_env {
  int debug_dist;   /* PIPER_DEBUG_DIST set: every rank logs its DP statistics */
  const char *path; /* PATH (where plot looks for rsvg-convert), or NULL if unset */
  /* the message layer and the store of the launcher's job data that MPI
   * started with (OMPI_MCA_pml, PMIX_MCA_gds: the user's, or the defaults
   * of pp_dist_init_process), or NULL if unset */
  const char *mpi_pml, *pmix_gds;
} pp_cmd_env;

/* `piper plan`: plan one input.  Collective over all ranks of the run. */
int pp_cmd_plan(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log);

/* `piper show`: print a stored plan, rebuild one for another budget, or
 * print the device curve.  Rank 0 works; other ranks return at once. */
int pp_cmd_show(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log);

/* `piper eval`: evaluate one given plan or framework configuration with
 * the independent checker.  Rank 0 works; other ranks return at once. */
int pp_cmd_eval(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log);

/* `piper plot`: SVG (and PNG) pictures of archives and study tables.  Rank
 * 0 works; other ranks return at once. */
int pp_cmd_plot(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log);

/* `piper collect`: one table from many archives.  Rank 0 works. */
int pp_cmd_collect(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log);

/* `piper sweep`: every row of a grid in one run.  Collective over all
 * ranks (each group of rows runs on a team of them). */
int pp_cmd_sweep(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log);

#endif /* PIPER_COMMANDS_H */
