/*
 * sweep.h - what the two files of `piper sweep` share (private to the cli
 * layer): the groups of rows, the sweep's state, and the steps before the
 * run (sweep_layout.c: which rows are done, the groups, their teams).
 */
#ifndef PIPER_CLI_SWEEP_H
#define PIPER_CLI_SWEEP_H

#include <stdio.h>

#include "cli.h"
#include "grid.h"
#include "piper/dist.h"
#include "piper/progress.h"

/* Rows answered by one DP. */
typedef struct group {
  int *rows;     /* pending rows (valid, not done before), file order */
  int n;         /* their count */
  int kmax_row;  /* the pending row with the largest budget (the first such) */
  double weight; /* estimated work, for dealing groups to teams and progress */
  int team;
} group;

/* Outcomes, counted by team leaders and summed over ranks at the end. */
enum { N_OK, N_INFEASIBLE, N_BEFORE, N_BAD, N_FAILED, N_COUNTS };

typedef struct sweep {
  const pp_sweep_args *a;
  pp_grid *grid;
  unsigned char *done; /* [rows] NAME.txt existed at the start */
  group *groups;
  int n_groups;
  int teams, team;
  pp_dist *world, *t; /* t: this rank's team (world itself with one team) */
  FILE *out, *log;    /* log: NULL on ranks that do not report */
  pp_progress pr;     /* world rank 0 */
  double total_w, done_w, cur_w;
  int rows_total, rows_done, finals;
  double counts[N_COUNTS];
  int stopped;
  double mem_limit;
  /* the last group's input, kept for the next group of the same file, so
   * that consecutive groups of one input read and enumerate it once: its
   * path as the grid gives it, graph and downsets (NULL until enumerated) */
  char *in_path;
  struct pp_graph *in_g;
  struct pp_downsets *in_ds;
} sweep;

/* DIR/NAME SUFFIX of a row's file into buf[n]. */
void pp_sweep_out_path(const sweep *s, const char *name, const char *suffix, char *buf, size_t n);

/* World rank 0 makes the output folder, finds the rows already done
 * (NAME.txt exists) and reports the bad rows; every rank receives the done
 * flags (s->done, pp_dist_from_root).  PP_OK or the agreed failure.
 * Collective over s->world. */
pp_status pp_sweep_survey(sweep *s, pp_error *err);

/* The groups over every valid row (numbered the same on every rerun, for
 * --part), keeping the rows not done before and this part's groups.  Local
 * (every rank computes the same). */
void pp_sweep_make_groups(sweep *s);

/* Teams of ranks and the groups dealt to them: largest estimated work
 * first, each to the least-loaded team.  Local (the same on every rank). */
void pp_sweep_deal_groups(sweep *s);

#endif /* PIPER_CLI_SWEEP_H */
