/*
 * plot.h - the parts of `piper plot` shared by its two files: the output
 * folder (cmd_plot.c) and the study heatmaps (plot_study.c).
 */
#ifndef PIPER_PLOT_H
#define PIPER_PLOT_H

#include <stdio.h>

#include "piper/error.h"

/* Where the pictures go and what is said about them. */
typedef struct pp_plot_out {
  const char *dir; /* the folder of --out-dir */
  int png;         /* 1: also a PNG copy of each SVG (rsvg-convert) */
  FILE *list;      /* every file written, one path a line */
  FILE *log;       /* warnings */
} pp_plot_out;

/* The stem of path (its base name without the extension) into out[n]. */
void pp_plot_stem_of(const char *path, char *out, size_t n);

/* Opens DIR/name for writing, its path in path[n]; NULL with PP_ERR_IO in
 * err if it cannot be created.  The caller closes it with pp_plot_close. */
FILE *pp_plot_open(const pp_plot_out *o, const char *name, char *path, size_t n, pp_error *err);

/* Closes f (opened as path by pp_plot_open), checking its writes
 * (PP_ERR_IO), then lists it and its PNG copy on o->list; a PNG that
 * cannot be rendered is a warning on o->log, not a failure. */
pp_status pp_plot_close(const pp_plot_out *o, FILE *f, const char *path, pp_error *err);

/* study-STEM.svg of the CSV study table at path (`piper collect --format
 * csv`), a heatmap of the best samples/s over columns xcol and ycol.
 * PP_ERR_INPUT names the file and the column at fault; PP_ERR_IO. */
pp_status pp_plot_csv_study(const pp_plot_out *o, const char *path, const char *xcol, const char *ycol,
                            pp_error *err);

/* study-STEM.svg of the HDF5 study table at path (`piper collect --out`);
 * failures as pp_plot_csv_study and pp_archive_read_study. */
pp_status pp_plot_h5_study(const pp_plot_out *o, const char *path, const char *xcol, const char *ycol,
                           pp_error *err);

/* study-NAME.svg of the n archives at paths, each read and checked whole
 * (pp_archive_read_summary), as `collect` reads them; PP_ERR_USAGE if n is
 * 0, else the first archive's failure. */
pp_status pp_plot_archive_study(const pp_plot_out *o, const char *const *paths, int n, const char *name,
                                const char *xcol, const char *ycol, pp_error *err);

#endif /* PIPER_PLOT_H */
