/*
 * grid.h - the grid files of `piper sweep` and jobs/sweep.sbatch: one
 * planning problem per row (see docs/slurm.md for the format).
 *
 * A grid is tab-separated text: a header naming the columns in any order
 * (input devices memory bandwidth microbatches flags [name]), then one row
 * per plan; blank lines and lines starting with '#' are ignored.  A row that
 * is wrong does not stop the others: it is kept with its message.
 */
#ifndef PIPER_GRID_H
#define PIPER_GRID_H

#include "piper/error.h"

/* One row of a grid. */
typedef struct pp_grid_row {
  int line;    /* 1-based line number in the grid file */
  int index;   /* row number from 0 in file order (valid or not) */
  char *input; /* the model graph, resolved against the grid's folder */
  char *name;  /* the archive's name without .h5 */
  long long devices, microbatches;
  double memory, bandwidth;
  int no_dp, no_tp, no_recompute;
  int zero;             /* flags zero1..zero3: plan --zero N (0 = none) */
  const char *schedule; /* flags 1f1b / gpipe: plan --schedule (NULL = the default, 2bw; static storage) */
  char error[512];      /* "" if the row is valid, else "FILE:LINE: what is wrong" */
} pp_grid_row;

typedef struct pp_grid {
  char *path;
  int n_rows;
  pp_grid_row *rows; /* [n_rows], in file order */
} pp_grid;

/* Reads the grid at path.  A header problem (unknown, missing or repeated
 * column, no header, no rows) is PP_ERR_INPUT with "FILE:LINE: ..." in err
 * and *out = NULL; problems of single rows are recorded in their error
 * field and the call succeeds.  *out is new (free with pp_grid_free). */
pp_status pp_grid_read(const char *path, pp_grid **out, pp_error *err);

void pp_grid_free(pp_grid *g);

/* Number of rows with an error. */
int pp_grid_bad_rows(const pp_grid *g);

#endif /* PIPER_GRID_H */
