/*
 * cmd_plot.c - `piper plot`: pictures of archives and study tables as
 * self-contained SVG files (svg.h), and PNG copies when rsvg-convert is
 * installed.  Rank 0 works; other ranks return at once.
 *
 *   curve.svg          throughput against the device budget, every archive
 *                      overlaid, with a legend (e.g. Piper, its ablations and
 *                      equi, as in the Piper paper's Fig. 2);
 *   plan-<stem>.svg    one per archive: the stages in pipeline order with
 *                      d x t, load against the bottleneck, memory against the
 *                      limit, and how many layers recompute;
 *   study-<stem>.svg   one per study table of `piper collect` (the HDF5 file
 *                      of --out or the CSV of --format csv; the file's
 *                      contents decide, not its name, except that a CSV
 *                      table is named *.csv): a heatmap of samples/s over
 *                      two of its columns, with the best plan's stages and
 *                      devices in each cell; --study NAME draws the same
 *                      from the archives given (plot_study.c).
 *
 * This file holds the command, the output folder (plot.h) and the pictures
 * of archives.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archived.h"
#include "cli.h"
#include "commands.h"
#include "piper/check.h"
#include "piper/units.h"
#include "plot.h"
#include "svg.h"

#define PLOT_MAX_FILES PP_PLOT_MAX_FILES

/* ---- output files ---- */

/* The stem of path: its base name without the extension. */
void pp_plot_stem_of(const char *path, char *out, size_t n) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  const char *dot = strrchr(b, '.');
  int len = dot && dot > b ? (int)(dot - b) : (int)strlen(b);
  snprintf(out, n, "%.*s", len, b);
}

/* 1 if a folder of the search path (PATH, as main read it) holds an
 * executable rsvg-convert. */
static int have_converter(const char *path) {
  if (!path) return 0;
  char dir[4096];
  for (const char *p = path; *p;) {
    const char *c = strchr(p, ':');
    size_t len = c ? (size_t)(c - p) : strlen(p);
    snprintf(dir, sizeof dir, "%.*s/rsvg-convert", (int)len, p);
    if (access(dir, X_OK) == 0) return 1;
    if (!c) break;
    p = c + 1;
  }
  return 0;
}

/* Renders svg to png with rsvg-convert; 0 on success. */
static int to_png(const char *svg, const char *png) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execlp("rsvg-convert", "rsvg-convert", "-o", png, svg, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Opens DIR/name for writing. */
FILE *pp_plot_open(const pp_plot_out *o, const char *name, char *path, size_t n, pp_error *err) {
  snprintf(path, n, "%s/%s", o->dir, name);
  FILE *f = fopen(path, "w");
  if (!f) pp_error_set(err, PP_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  return f;
}

/* Closes f (checking the writes), converts to PNG and lists both. */
pp_status pp_plot_close(const pp_plot_out *o, FILE *f, const char *path, pp_error *err) {
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return pp_error_set(err, PP_ERR_IO, "%s: writing failed", path);
  fprintf(o->list, "%s\n", path);
  if (o->png) {
    char png[4200];
    snprintf(png, sizeof png, "%.*s.png", (int)(strlen(path) - 4), path);
    if (to_png(path, png) == 0)
      fprintf(o->list, "%s\n", png);
    else
      fprintf(o->log, "piper plot: warning: rsvg-convert could not render %s\n", path);
  }
  return PP_OK;
}

/* ---- axes ---- */

/* A "nice" step for about n ticks over [0, hi]. */
static double nice_step(double hi, int n) {
  double raw = hi / n, p = pow(10, floor(log10(raw))), m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

typedef struct frame {
  double x0, y0, w, h; /* plot area */
  double xmax_log2;    /* x axis: log2 k from 0 */
  double ymax;
} frame;

static double fx(const frame *fr, double k) { return fr->x0 + fr->w * log2(k) / fr->xmax_log2; }
static double fy(const frame *fr, double v) { return fr->y0 + fr->h - fr->h * v / fr->ymax; }

static void draw_axes(pp_svg *s, const frame *fr, const char *xlabel, const char *ylabel) {
  char b[64];
  pp_svg_rect(s, fr->x0, fr->y0, fr->w, fr->h, "none", "#444444");
  for (int e = 0; e <= (int)fr->xmax_log2; e++) {
    double x = fx(fr, pow(2, e));
    pp_svg_line(s, x, fr->y0 + fr->h, x, fr->y0 + fr->h + 5, "#444444", 1, 0);
    pp_svg_line(s, x, fr->y0, x, fr->y0 + fr->h, "#e5e5e5", 1, 0);
    snprintf(b, sizeof b, "%.0f", pow(2, e));
    pp_svg_text(s, x, fr->y0 + fr->h + 18, "middle", 11, 0, 0, "#222222", b);
  }
  double step = nice_step(fr->ymax, 5);
  for (double v = 0; v <= fr->ymax * (1 + 1e-9); v += step) {
    double y = fy(fr, v);
    pp_svg_line(s, fr->x0 - 5, y, fr->x0, y, "#444444", 1, 0);
    if (v > 0) pp_svg_line(s, fr->x0, y, fr->x0 + fr->w, y, "#e5e5e5", 1, 0);
    pp_svg_text(s, fr->x0 - 8, y + 4, "end", 11, 0, 0, "#222222", pp_svg_num(v, b, sizeof b));
  }
  pp_svg_text(s, fr->x0 + fr->w / 2, fr->y0 + fr->h + 40, "middle", 13, 0, 0, "#000000", xlabel);
  pp_svg_text(s, fr->x0 - 55, fr->y0 + fr->h / 2, "middle", 13, -90, 0, "#000000", ylabel);
}

/* ---- archives ---- */

typedef struct arch {
  const char *path;
  pp_archive *a;
  double *curve; /* [K] TPS */
  char label[160];
} arch;

/* "stem: planner, flags" for the legend. */
static void label_of(const char *path, const pp_problem *p, char *out, size_t n) {
  char stem[128];
  pp_plot_stem_of(path, stem, sizeof stem);
  snprintf(out, n, "%s (%s%s%s%s)", stem, p->planner == PP_PLANNER_EQUI ? "equi" : "piper",
           p->no_dp ? ", no DP" : "", p->no_tp ? ", no TP" : "", p->no_recompute ? ", no recompute" : "");
}

static pp_status plot_curve(const pp_plot_out *o, arch *as, int n, pp_error *err) {
  char path[4200];
  FILE *f = pp_plot_open(o, "curve.svg", path, sizeof path, err);
  if (!f) return PP_ERR_IO;
  int kmax = 1;
  double ymax = 0;
  for (int i = 0; i < n; i++) {
    int K = pp_archive_problem(as[i].a)->devices;
    if (K > kmax) kmax = K;
    for (int k = 0; k < K; k++)
      if (isfinite(as[i].curve[k]) && as[i].curve[k] > 0 && 1 / as[i].curve[k] > ymax)
        ymax = 1 / as[i].curve[k];
  }
  if (ymax <= 0) ymax = 1;
  const double legend_h = 18.0 * n + 10;
  pp_svg s;
  pp_svg_begin(&s, f, 820, 470 + legend_h, "throughput against the device budget");
  pp_svg_text(&s, 410, 26, "middle", 15, 0, 1, "#000000",
              "Best throughput for every device budget (higher is better)");
  frame fr = {90, 45, 700, 360, log2(kmax > 1 ? kmax : 2), ymax * 1.05};
  draw_axes(&s, &fr, "device budget k (devices, log scale)", "throughput (samples/s)");
  for (int i = 0; i < n; i++) {
    int K = pp_archive_problem(as[i].a)->devices;
    double *x = pp_xmalloc(sizeof(double) * (size_t)K), *y = pp_xmalloc(sizeof(double) * (size_t)K);
    for (int k = 1; k <= K; k++) {
      double v = as[i].curve[k - 1];
      x[k - 1] = fx(&fr, k);
      y[k - 1] = isfinite(v) && v > 0 ? fy(&fr, 1 / v) : NAN;
    }
    pp_svg_polyline(&s, x, y, K, pp_svg_color(i), 2);
    free(x);
    free(y);
    double ly = 470 + 18.0 * i;
    pp_svg_line(&s, 100, ly - 4, 130, ly - 4, pp_svg_color(i), 3, 0);
    pp_svg_text(&s, 138, ly, "start", 12, 0, 0, "#000000", as[i].label);
  }
  pp_svg_text(&s, 90, 470 + 18.0 * n + 4, "start", 10, 0, 0, "#555555",
              "gaps: no feasible plan for that budget; throughput = 1 / time per sample");
  pp_svg_end(&s);
  return pp_plot_close(o, f, path, err);
}

/* The layers of a stage, compactly: "0-9" or "3,5-7". */
static void stage_ids(const pp_graph *g, const pp_plan_stage *st, char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < st->n_nodes && len + 24 < n;) {
    int j = i;
    while (j + 1 < st->n_nodes && g->nodes[st->nodes[j + 1]].orig_id == g->nodes[st->nodes[j]].orig_id + 1)
      j++;
    len += (size_t)snprintf(out + len, n - len, "%s%lld", len ? "," : "", g->nodes[st->nodes[i]].orig_id);
    if (j > i) len += (size_t)snprintf(out + len, n - len, "-%lld", g->nodes[st->nodes[j]].orig_id);
    i = j + 1;
  }
  if (strlen(out) > 22) snprintf(out + 19, n - 19, "...");
}

static void plan_header(pp_svg *s, const char *path, const pp_problem *p, const pp_plan *plan) {
  char t[512], mem[32];
  snprintf(t, sizeof t, "Plan of %s (%s planner)", path, p->planner == PP_PLANNER_EQUI ? "equi" : "piper");
  pp_svg_text(s, 20, 26, "start", 15, 0, 1, "#000000", t);
  if (plan->feasible)
    snprintf(t, sizeof t,
             "%d stages, %d of %d devices, %s per device; time per sample %.6g s (%.4g samples/s); "
             "first stage receives the input",
             plan->n_stages, plan->devices_used, p->devices, pp_format_bytes(p->memory, mem, sizeof mem),
             plan->tps, 1 / plan->tps);
  else
    snprintf(t, sizeof t, "no feasible plan on %d devices with %s per device", p->devices,
             pp_format_bytes(p->memory, mem, sizeof mem));
  pp_svg_text(s, 20, 46, "start", 12, 0, 0, "#333333", t);
}

static pp_status plot_plan(const pp_plot_out *o, const arch *ar, pp_error *err) {
  const pp_graph *g = pp_archive_graph(ar->a);
  pp_problem p = *pp_archive_problem(ar->a);
  pp_plan *plan = NULL;
  pp_status st = pp_archive_read_plan(ar->a, &plan, err);
  if (st) return st;
  if (plan->feasible && (st = pp_check_plan(g, &p, plan, err))) {
    pp_error_prefix(err, ar->path);
    pp_plan_free(plan);
    return PP_ERR_INPUT;
  }
  char stem[128], name[200], path[4200];
  pp_plot_stem_of(ar->path, stem, sizeof stem);
  snprintf(name, sizeof name, "plan-%s.svg", stem);
  FILE *f = pp_plot_open(o, name, path, sizeof path, err);
  if (!f) {
    pp_plan_free(plan);
    return PP_ERR_IO;
  }
  const double row = 30, top = 100, lx = 330, lw = 260, mx = 640, mw = 200;
  pp_svg s;
  pp_svg_begin(&s, f, 960, top + row * plan->n_stages + 60, "plan");
  plan_header(&s, ar->path, &p, plan);
  pp_svg_text(&s, 20, top - 14, "start", 12, 0, 1, "#000000", "stage: layers (count)");
  pp_svg_text(&s, 250, top - 14, "middle", 12, 0, 1, "#000000", "d x t");
  pp_svg_text(&s, lx, top - 14, "start", 12, 0, 1, "#000000", "load (s/sample) vs bottleneck");
  pp_svg_text(&s, mx, top - 14, "start", 12, 0, 1, "#000000", "memory vs limit");
  pp_svg_text(&s, 940, top - 14, "end", 12, 0, 1, "#000000", "recompute");
  for (int i = 0; i < plan->n_stages; i++) {
    const pp_plan_stage *sg = &plan->stages[i];
    const double y = top + row * i;
    char t[160], ids[64], m1[32], m2[32];
    int rec = 0;
    for (int j = 0; j < sg->n_nodes; j++)
      rec += pp_graph_tmpcs(g, sg->nodes[j], sg->t)->tmpcs[sg->tmpc[j]].is_recompute;
    if (i % 2) pp_svg_rect(&s, 10, y - 2, 940, row, "#f4f6fa", NULL);
    stage_ids(g, sg, ids, sizeof ids);
    snprintf(t, sizeof t, "%d: %s (%d)", i + 1, ids, sg->n_nodes);
    pp_svg_text(&s, 20, y + 17, "start", 12, 0, 0, "#000000", t);
    snprintf(t, sizeof t, "%d x %d = %d", sg->d, sg->t, sg->d * sg->t);
    pp_svg_text(&s, 250, y + 17, "middle", 12, 0, 0, "#000000", t);
    const double frac = plan->tps > 0 ? sg->load / plan->tps : 0;
    pp_svg_rect(&s, lx, y + 5, lw, 16, "#e8e8e8", NULL);
    pp_svg_rect(&s, lx, y + 5, lw * frac, 16, frac > 1 - 1e-9 ? "#D55E00" : "#0072B2", NULL);
    snprintf(t, sizeof t, "%.4g", sg->load);
    pp_svg_text(&s, lx + lw + 6, y + 17, "start", 10, 0, 0, "#333333", t);
    const double mf = p.memory > 0 ? fmin(sg->memory / p.memory, 1) : 0;
    pp_svg_rect(&s, mx, y + 5, mw, 16, "#e8e8e8", NULL);
    pp_svg_rect(&s, mx, y + 5, mw * mf, 16, "#009E73", NULL);
    snprintf(t, sizeof t, "%s / %s", pp_format_bytes(sg->memory, m1, sizeof m1),
             pp_format_bytes(p.memory, m2, sizeof m2));
    pp_svg_text(&s, mx + 4, y + 17, "start", 10, 0, 0, "#000000", t);
    snprintf(t, sizeof t, "%d of %d", rec, sg->n_nodes);
    pp_svg_text(&s, 940, y + 17, "end", 12, 0, 0, rec ? "#CC79A7" : "#333333", t);
  }
  const double by = top + row * plan->n_stages + 24;
  pp_svg_line(&s, lx + lw, top, lx + lw, by - 14, "#000000", 1, 1);
  pp_svg_text(&s, 20, by + 10, "start", 10, 0, 0, "#555555",
              "orange: the bottleneck stage (its load is the time per sample); dashed: the bottleneck; "
              "memory per device with y = ceil(sum of d from this stage on / d) microbatches in flight");
  pp_svg_end(&s);
  pp_plan_free(plan);
  return pp_plot_close(o, f, path, err);
}

/* ---- the command ---- */

/* What a file given to plot is: an archive, a study table of collect
 * (HDF5 or CSV), or neither (an error naming the file). */
typedef enum plot_kind { K_ARCHIVE, K_H5_STUDY, K_CSV_STUDY } plot_kind;

static pp_status kind_of(const char *path, plot_kind *k, pp_error *err) {
  switch (pp_archive_file_kind(path)) {
  case PP_FILE_ARCHIVE:
    *k = K_ARCHIVE;
    return PP_OK;
  case PP_FILE_STUDY:
    *k = K_H5_STUDY;
    return PP_OK;
  case PP_FILE_OTHER_HDF5:
    return pp_error_set(err, PP_ERR_INPUT,
                        "%s: an HDF5 file that is neither a piper archive (no /problem) nor a study table "
                        "(no /study, as `piper collect --out` writes)",
                        path);
  case PP_FILE_NOT_HDF5:
    break;
  }
  size_t n = strlen(path);
  if (n > 4 && strcmp(path + n - 4, ".csv") == 0) {
    *k = K_CSV_STUDY;
    return PP_OK;
  }
  /* the archive reader says why: missing, unreadable or not HDF5 */
  pp_archive *a = NULL;
  pp_status st = pp_archive_open(path, &a, err);
  pp_archive_close(a);
  if (!st) st = pp_error_set(err, PP_ERR_INPUT, "%s: not a piper archive or study table", path);
  if (st == PP_ERR_INPUT && strstr(err->msg, "not an HDF5 file"))
    pp_error_set(err, PP_ERR_INPUT,
                 "%s: not an HDF5 file: neither a piper archive nor a study table (HDF5 from `piper collect "
                 "--out`, or CSV from `piper collect --format csv`, named *.csv)",
                 path);
  return st;
}

int pp_cmd_plot(pp_dist *d, const pp_cmd_env *env, int argc, char **argv, FILE *out, FILE *log) {
  if (pp_dist_rank(d) != 0) return PP_EXIT_OK;
  pp_error err = {0};
  pp_plot_args args;
  arch as[PLOT_MAX_FILES];
  int na = 0;
  pp_status st = pp_cli_parse_plot(argc, argv, &args, &err);
  if (st) goto done;
  if (args.help) {
    pp_cli_help_plot(out);
    return PP_EXIT_OK;
  }
  struct stat sb;
  if (stat(args.out_dir, &sb) != 0 && mkdir(args.out_dir, 0777) != 0) {
    st = pp_error_set(&err, PP_ERR_IO, "--out-dir %s: cannot create: %s", args.out_dir, strerror(errno));
    goto done;
  }
  pp_plot_out o = {args.out_dir, !args.no_png && have_converter(env->path), out, log};
  plot_kind kinds[PLOT_MAX_FILES];
  for (int i = 0; i < args.n_files; i++)
    if ((st = kind_of(args.files[i], &kinds[i], &err))) goto done;
  for (int i = 0; i < args.n_files; i++) {
    if (kinds[i] != K_ARCHIVE) continue;
    arch *a = &as[na];
    memset(a, 0, sizeof *a);
    a->path = args.files[i];
    if ((st = pp_archive_open(a->path, &a->a, &err))) goto done;
    na++;
    const pp_problem *p = pp_archive_problem(a->a);
    a->curve = pp_xmalloc(sizeof(double) * (size_t)p->devices);
    if ((st = pp_cli_archived_curve(a->a, -1, a->curve, &err))) goto done;
    label_of(a->path, p, a->label, sizeof a->label);
  }
  if (na > 0 && (st = plot_curve(&o, as, na, &err))) goto done;
  for (int i = 0; i < na; i++)
    if ((st = plot_plan(&o, &as[i], &err))) goto done;
  for (int i = 0; i < args.n_files; i++)
    if ((kinds[i] == K_CSV_STUDY && (st = pp_plot_csv_study(&o, args.files[i], args.x, args.y, &err))) ||
        (kinds[i] == K_H5_STUDY && (st = pp_plot_h5_study(&o, args.files[i], args.x, args.y, &err))))
      goto done;
  if (args.study) {
    const char *paths[PP_PLOT_MAX_FILES];
    for (int i = 0; i < na; i++) paths[i] = as[i].path;
    if ((st = pp_plot_archive_study(&o, paths, na, args.study, args.x, args.y, &err))) goto done;
  }
done:
  if (st) fprintf(log, "piper plot: error: %s\n", err.msg);
  for (int i = 0; i < na; i++) {
    free(as[i].curve);
    pp_archive_close(as[i].a);
  }
  return pp_status_exit_code(st);
}
