/*
 * plot_study.c - the study heatmaps of `piper plot`: study-<stem>.svg, the
 * best samples/s over two columns of a study table, with the best plan's
 * stages and devices in each cell.  The table comes from a CSV of `piper
 * collect --format csv`, the HDF5 table of `collect --out`, or the archives
 * of --study NAME; one renderer (draw_study) draws all three.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper/archive.h"
#include "piper/units.h"
#include "plot.h"
#include "svg.h"
#include "table_csv.h"

static void axis_value(const char *col, double v, char *out, size_t n) {
  if (strstr(col, "memory") || strstr(col, "bandwidth"))
    pp_format_bytes(v, out, n);
  else
    snprintf(out, n, "%.6g", v);
}

/* Sorted distinct values of column c; returns the count. */
static int distinct(const pp_csv *t, int c, double *vals) {
  int n = 0;
  for (int r = 0; r < t->n_rows; r++) {
    double v = t->num[(size_t)r * (size_t)t->n_cols + (size_t)c];
    int i = 0;
    while (i < n && vals[i] < v) i++;
    if (i < n && vals[i] == v) continue;
    memmove(vals + i + 1, vals + i, sizeof(double) * (size_t)(n - i));
    vals[i] = v;
    n++;
  }
  return n;
}

static int index_of(const double *vals, int n, double v) {
  for (int i = 0; i < n; i++)
    if (vals[i] == v) return i;
  return -1;
}

/* White to dark blue. */
static void heat(double f, char *out, size_t n) {
  const double a[3] = {247, 251, 255}, b[3] = {8, 48, 107};
  snprintf(out, n, "#%02x%02x%02x", (int)(a[0] + (b[0] - a[0]) * f), (int)(a[1] + (b[1] - a[1]) * f),
           (int)(a[2] + (b[2] - a[2]) * f));
}

/* The heatmap's cells: the distinct values of the two columns and, per
 * cell (j * nx + i for y value j and x value i), the best feasible row. */
typedef struct study_grid {
  int cx, cy, ct, cf, cs, cu; /* columns: x, y, tps, feasible, stages, devices_used */
  int nx, ny;
  double *xs, *ys;   /* sorted distinct values of columns cx and cy */
  double *best;      /* per cell: the smallest feasible tps, INFINITY if none */
  int *bi;           /* per cell: the row shown (the best, else the first), -1 if none */
  double vmin, vmax; /* range of 1 / best over the feasible cells */
} study_grid;

static void grid_free(study_grid *gr) {
  free(gr->xs);
  free(gr->ys);
  free(gr->best);
  free(gr->bi);
}

/* Fills *gr (zeroed by the caller; grid_free frees it, also after a
 * failure) from table t over xcol and ycol; PP_ERR_INPUT names tpath and a
 * column missing or not numeric. */
static pp_status grid_of(const pp_csv *t, const char *tpath, const char *xcol, const char *ycol,
                         study_grid *gr, pp_error *err) {
  pp_status st;
  if ((st = pp_csv_numeric_column(t, tpath, xcol, &gr->cx, err)) ||
      (st = pp_csv_numeric_column(t, tpath, ycol, &gr->cy, err)) ||
      (st = pp_csv_numeric_column(t, tpath, "tps", &gr->ct, err)) ||
      (st = pp_csv_numeric_column(t, tpath, "feasible", &gr->cf, err)) ||
      (st = pp_csv_numeric_column(t, tpath, "stages", &gr->cs, err)) ||
      (st = pp_csv_numeric_column(t, tpath, "devices_used", &gr->cu, err)))
    return st;
  gr->xs = pp_xmalloc(sizeof(double) * (size_t)t->n_rows);
  gr->ys = pp_xmalloc(sizeof(double) * (size_t)t->n_rows);
  const int nx = gr->nx = distinct(t, gr->cx, gr->xs), ny = gr->ny = distinct(t, gr->cy, gr->ys);
  double *best = gr->best = pp_xmalloc(sizeof(double) * (size_t)(nx * ny));
  int *bi = gr->bi = pp_xmalloc(sizeof(int) * (size_t)(nx * ny));
  gr->vmin = INFINITY;
  gr->vmax = 0;
  for (int i = 0; i < nx * ny; i++) best[i] = INFINITY, bi[i] = -1;
  for (int r = 0; r < t->n_rows; r++) {
    const double *row = t->num + (size_t)r * (size_t)t->n_cols;
    int cell = index_of(gr->ys, ny, row[gr->cy]) * nx + index_of(gr->xs, nx, row[gr->cx]);
    if (bi[cell] < 0) bi[cell] = r;
    if (row[gr->cf] != 0 && row[gr->ct] > 0 && row[gr->ct] < best[cell]) {
      best[cell] = row[gr->ct];
      bi[cell] = r;
    }
  }
  for (int i = 0; i < nx * ny; i++)
    if (isfinite(best[i])) {
      gr->vmin = fmin(gr->vmin, 1 / best[i]);
      gr->vmax = fmax(gr->vmax, 1 / best[i]);
    }
  return PP_OK;
}

/* The layout of the heatmap: cell size and the top left of the grid. */
static const double cw = 120, ch = 48, x0 = 130, y0 = 90;

/* Cell (i, j) of the grid with its top left at (x, y). */
static void draw_cell(pp_svg *s, const pp_csv *t, const study_grid *gr, int i, int j, double x, double y) {
  const int cell = j * gr->nx + i;
  char col[16], a[64], b[64];
  if (gr->bi[cell] < 0) {
    pp_svg_rect(s, x, y, cw, ch, "#ffffff", "#cccccc");
    pp_svg_text(s, x + cw / 2, y + ch / 2 + 4, "middle", 11, 0, 0, "#999999", "not in the table");
    return;
  }
  if (!isfinite(gr->best[cell])) {
    pp_svg_rect(s, x, y, cw, ch, "#d9d9d9", "#ffffff");
    pp_svg_text(s, x + cw / 2, y + ch / 2 + 4, "middle", 11, 0, 0, "#333333", "infeasible");
    return;
  }
  const double vmin = gr->vmin, vmax = gr->vmax;
  const double v = 1 / gr->best[cell], fr = vmax > vmin ? (v - vmin) / (vmax - vmin) : 1;
  heat(0.15 + 0.85 * fr, col, sizeof col);
  pp_svg_rect(s, x, y, cw, ch, col, "#ffffff");
  const char *ink = fr > 0.5 ? "#ffffff" : "#000000";
  const double *row = t->num + (size_t)gr->bi[cell] * (size_t)t->n_cols;
  snprintf(a, sizeof a, "%.4g /s", v);
  snprintf(b, sizeof b, "%.0f stages, %.0f dev", row[gr->cs], row[gr->cu]);
  pp_svg_text(s, x + cw / 2, y + 20, "middle", 12, 0, 1, ink, a);
  pp_svg_text(s, x + cw / 2, y + 36, "middle", 10, 0, 0, ink, b);
}

/* The values under and beside the grid, and the two column names. */
static void draw_grid_axes(pp_svg *s, const study_grid *gr, const char *xcol, const char *ycol) {
  const int nx = gr->nx, ny = gr->ny;
  for (int i = 0; i < nx; i++) {
    char v[32];
    axis_value(xcol, gr->xs[i], v, sizeof v);
    pp_svg_text(s, x0 + cw * i + cw / 2, y0 + ch * ny + 18, "middle", 11, 0, 0, "#222222", v);
  }
  for (int j = 0; j < ny; j++) {
    char v[32];
    axis_value(ycol, gr->ys[j], v, sizeof v);
    pp_svg_text(s, x0 - 8, y0 + ch * (ny - 1 - j) + ch / 2 + 4, "end", 11, 0, 0, "#222222", v);
  }
  pp_svg_text(s, x0 + cw * nx / 2, y0 + ch * ny + 42, "middle", 13, 0, 0, "#000000", xcol);
  pp_svg_text(s, 24, y0 + ch * ny / 2, "middle", 13, -90, 0, "#000000", ycol);
}

/* study-STEM.svg from table t (tpath names it in messages). */
static pp_status draw_study(const pp_plot_out *o, const pp_csv *t, const char *tpath, const char *stem,
                            const char *xcol, const char *ycol, pp_error *err) {
  study_grid gr = {0};
  pp_status st = grid_of(t, tpath, xcol, ycol, &gr, err);
  if (st) goto done;
  const int nx = gr.nx, ny = gr.ny;
  char name[200], path[4200];
  snprintf(name, sizeof name, "study-%s.svg", stem);
  FILE *f = pp_plot_open(o, name, path, sizeof path, err);
  if (!f) {
    st = PP_ERR_IO;
    goto done;
  }
  pp_svg s;
  pp_svg_begin(&s, f, fmax(760, x0 + cw * nx + 40), fmax(300, y0 + ch * ny + 90), "study heatmap");
  char tt[512];
  snprintf(tt, sizeof tt, "%s: best throughput (samples/s) by %s and %s", tpath, xcol, ycol);
  pp_svg_text(&s, 20, 26, "start", 15, 0, 1, "#000000", tt);
  pp_svg_text(&s, 20, 46, "start", 11, 0, 0, "#333333",
              "each cell: samples/s, then the best plan's stages and devices used; darker is faster");
  for (int j = 0; j < ny; j++)
    for (int i = 0; i < nx; i++) draw_cell(&s, t, &gr, i, j, x0 + cw * i, y0 + ch * (ny - 1 - j));
  draw_grid_axes(&s, &gr, xcol, ycol);
  pp_svg_end(&s);
  st = pp_plot_close(o, f, path, err);
done:
  grid_free(&gr);
  return st;
}

pp_status pp_plot_csv_study(const pp_plot_out *o, const char *tpath, const char *xcol, const char *ycol,
                            pp_error *err) {
  pp_csv *t = NULL;
  pp_status st = pp_csv_read(tpath, &t, err);
  if (st) return st;
  char stem[128];
  pp_plot_stem_of(tpath, stem, sizeof stem);
  st = draw_study(o, t, tpath, stem, xcol, ycol, err);
  pp_csv_free(t);
  return st;
}

/* The numeric columns of collect's table (same names as its CSV). */
static const char *const study_cols[] = {"devices",
                                         "memory_bytes",
                                         "bandwidth_bytes_per_s",
                                         "microbatches",
                                         "feasible",
                                         "tps",
                                         "devices_used",
                                         "stages",
                                         "zero",
                                         "devices_per_node",
                                         "intra_node_bandwidth_bytes_per_s",
                                         "uniform"};
#define N_STUDY_COLS ((int)(sizeof study_cols / sizeof study_cols[0]))

/* The heatmap of study rows (collect's table: from archives or from the
 * HDF5 table collect --out writes), drawn by draw_study from the table of
 * the columns collect's CSV has, under the same names. */
static pp_status draw_summaries(const pp_plot_out *o, const pp_archive_summary *rs, int n, const char *what,
                                const char *stem, const char *xcol, const char *ycol, pp_error *err) {
  pp_csv t = {.n_cols = N_STUDY_COLS, .n_rows = n, .names = (char **)study_cols};
  t.num = pp_xmalloc(sizeof(double) * (size_t)(n * N_STUDY_COLS + 1));
  for (int i = 0; i < n; i++) {
    const pp_archive_summary *r = &rs[i];
    const double row[N_STUDY_COLS] = {r->devices,          r->memory,          r->bandwidth,
                                      r->microbatches,     r->feasible,        r->feasible ? r->tps : NAN,
                                      r->devices_used,     r->stages,          r->zero,
                                      r->devices_per_node, r->intra_bandwidth, r->uniform};
    memcpy(t.num + (size_t)i * N_STUDY_COLS, row, sizeof row);
  }
  pp_status st = draw_study(o, &t, what, stem, xcol, ycol, err);
  free(t.num);
  return st;
}

/* study-NAME.svg of the archives given: each read and checked whole with
 * the archive reader (pp_archive_read_summary), as `collect` reads them. */
pp_status pp_plot_archive_study(const pp_plot_out *o, const char *const *paths, int n, const char *name,
                                const char *xcol, const char *ycol, pp_error *err) {
  char what[200];
  snprintf(what, sizeof what, "--study %s (%d archives)", name, n);
  if (n == 0) return pp_error_set(err, PP_ERR_USAGE, "%s: no archives given", what);
  pp_archive_summary *rs = pp_xcalloc((size_t)n, sizeof *rs);
  pp_status st = PP_OK;
  for (int i = 0; i < n && !st; i++) st = pp_archive_read_summary(paths[i], &rs[i], err);
  if (!st) st = draw_summaries(o, rs, n, what, name, xcol, ycol, err);
  free(rs);
  return st;
}

/* study-STEM.svg of the HDF5 study table at path (`piper collect --out`). */
pp_status pp_plot_h5_study(const pp_plot_out *o, const char *path, const char *xcol, const char *ycol,
                           pp_error *err) {
  pp_archive_summary *rs = NULL;
  int n = 0;
  pp_status st = pp_archive_read_study(path, &rs, &n, err);
  if (st) return st;
  char stem[128];
  pp_plot_stem_of(path, stem, sizeof stem);
  st = draw_summaries(o, rs, n, path, stem, xcol, ycol, err);
  free(rs);
  return st;
}
