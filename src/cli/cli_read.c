/*
 * cli_read.c - the options of the commands that read archives and study
 * tables: `show`, `collect` and `plot` (one table each drives getopt_long,
 * through pp_cli_getopt, and --help).
 */
#include <string.h>

#include "cli.h"
#include "piper/problem.h"
#include "piper/units.h"

typedef pp_cli_option opt_doc;

enum {
  R_DEVICES = 3000,
  R_CURVE,
  R_DPSUM,
  R_CURVE_S,
  R_FORMAT,
  R_OUT,
  R_OUTDIR,
  R_X,
  R_Y,
  R_NOPNG,
  R_STUDY,
  R_HELP
};

#define N_OPTS(a) ((int)(sizeof a / sizeof a[0]))

static const opt_doc show_opts[] = {
    {"devices", 1, R_DEVICES, "K",
     "rebuild the optimal plan for a budget of K devices from the stored tables"},
    {"curve", 0, R_CURVE, NULL, "print the best TPS for every budget k = 1..K (CSV)"},
    {"dp-sum", 1, R_DPSUM, "S",
     "bound the sum of data-parallel degrees by S (the plan, or with --curve every budget)"},
    {"curve-dp-sum", 0, R_CURVE_S, NULL,
     "print the best TPS for every bound s = 1..min(N, K) on the sum of d (CSV; K = --devices or stored)"},
    {"format", 1, R_FORMAT, "FMT", "output: text (default) or json"},
    {"help", 0, R_HELP, NULL, "show this help"},
};

static const opt_doc plot_opts[] = {
    {"out-dir", 1, R_OUTDIR, "DIR", "write the pictures into DIR (created if missing; default .)"},
    {"x", 1, R_X, "COLUMN",
     "heatmap columns across: a numeric column of collect's CSV, for every kind of table (default devices)"},
    {"y", 1, R_Y, "COLUMN", "heatmap rows (default memory_bytes)"},
    {"study", 1, R_STUDY, "NAME",
     "also draw study-NAME.svg: the archives given as one study (their summaries, as collect tabulates "
     "them)"},
    {"no-png", 0, R_NOPNG, NULL, "SVG only, even where rsvg-convert is installed"},
    {"help", 0, R_HELP, NULL, "show this help"},
};

void pp_cli_help_show(FILE *out) {
  fprintf(out, "usage: piper show FILE.h5 [options]\n\nOptions:\n");
  pp_cli_print_options(out, show_opts, N_OPTS(show_opts));
  pp_cli_print_exit_codes(out);
}

void pp_cli_help_plot(FILE *out) {
  fprintf(out,
          "usage: piper plot ARCHIVE.h5|STUDY.h5|TABLE.csv... [--out-dir DIR] [options]\n\n"
          "Draws self-contained SVG pictures (and PNG copies when rsvg-convert is installed):\n"
          "  curve.svg          throughput (samples/s) against the device budget, all archives overlaid\n"
          "  plan-STEM.svg      per archive: the stages in pipeline order with d x t, load against the\n"
          "                     bottleneck, memory against the limit, and the layers that recompute\n"
          "  study-STEM.svg     per study table of `piper collect` (the HDF5 file of --out, or the CSV\n"
          "                     of --format csv): a heatmap of the best samples/s over two columns,\n"
          "                     with the best plan's shape per cell\n"
          "  study-NAME.svg     with --study NAME: the same heatmap of the archives given, read directly\n"
          "Every picture file written is listed on standard output.\n\n"
          "Options:\n");
  pp_cli_print_options(out, plot_opts, N_OPTS(plot_opts));
  fprintf(out, "\nExit codes: 0 pictures written, 1 writing failed, 2 bad usage, a file that is neither\n"
               "an archive nor a study table, an empty study or a column the table lacks.\n");
}

static pp_status show_handler(void *ap, int id, const char *v, pp_error *err) {
  pp_show_args *a = ap;
  switch (id) {
  case R_DEVICES:
    return pp_parse_int(v, 1, PP_MAX_DEVICES, "--devices", &a->devices, err);
  case R_CURVE:
    a->curve = 1;
    return PP_OK;
  case R_DPSUM:
    return pp_parse_int(v, 1, PP_MAX_MICROBATCHES, "--dp-sum", &a->dp_sum, err);
  case R_CURVE_S:
    a->curve_dp_sum = 1;
    return PP_OK;
  case R_FORMAT:
    return pp_cli_parse_format(v, PP_FORMAT_JSON, &a->format, err);
  }
  return pp_cli_help_or_unknown(id, R_HELP, &a->help, err);
}

pp_status pp_cli_parse_show(int argc, char **argv, pp_show_args *a, pp_error *err) {
  memset(a, 0, sizeof *a);
  a->devices = -1;
  a->dp_sum = -1;
  const char *pos[1];
  int n_pos;
  pp_status st =
      pp_cli_getopt(argc, argv, show_opts, N_OPTS(show_opts), "h", show_handler, a, pos, 1, &n_pos, err);
  if (st) return st;
  if (a->help) return PP_OK;
  if (n_pos != 1)
    return pp_error_set(err, PP_ERR_USAGE, "missing the archive file (try 'piper show --help')");
  a->archive = pos[0];
  if (a->curve && a->devices >= 0) return pp_error_set(err, PP_ERR_USAGE, "--curve and --devices contradict");
  if (a->curve_dp_sum && (a->curve || a->dp_sum >= 0))
    return pp_error_set(err, PP_ERR_USAGE, "--curve-dp-sum contradicts --curve and --dp-sum");
  return PP_OK;
}

static const opt_doc collect_opts[] = {
    {"out", 1, R_OUT, "STUDY.h5", "also write the table to an HDF5 file (/study, one dataset per column)"},
    {"format", 1, R_FORMAT, "FMT", "standard output: text (default) or csv"},
    {"help", 0, R_HELP, NULL, "show this help"},
};

void pp_cli_help_collect(FILE *out) {
  fprintf(out,
          "usage: piper collect FILE.h5... [--out STUDY.h5] [--format text|csv]\n\n"
          "Gathers the parameters and results of many archives (e.g. one sweep) into one table:\n"
          "input, devices, memory, bandwidth, microbatches, flags, feasible, tps, devices_used, stages.\n"
          "Damaged or missing archives are skipped and reported on standard error.\n\n"
          "Options:\n");
  pp_cli_print_options(out, collect_opts, N_OPTS(collect_opts));
  fprintf(out, "\nExit codes: 0 at least one archive read (some may be skipped), 1 writing failed,\n"
               "2 usage error or no readable archive.\n");
}

static pp_status collect_handler(void *ap, int id, const char *v, pp_error *err) {
  pp_collect_args *a = ap;
  switch (id) {
  case R_OUT:
    a->study = v;
    return PP_OK;
  case R_FORMAT:
    return pp_cli_parse_format(v, PP_FORMAT_CSV, &a->format, err);
  }
  return pp_cli_help_or_unknown(id, R_HELP, &a->help, err);
}

static pp_status plot_handler(void *ap, int id, const char *v, pp_error *err) {
  pp_plot_args *a = ap;
  switch (id) {
  case R_OUTDIR:
    a->out_dir = v;
    return PP_OK;
  case R_X:
    a->x = v;
    return PP_OK;
  case R_Y:
    a->y = v;
    return PP_OK;
  case R_NOPNG:
    a->no_png = 1;
    return PP_OK;
  case R_STUDY:
    if (!v[0] || strchr(v, '/'))
      return pp_error_set(err, PP_ERR_USAGE, "--study: expected a name without '/', got '%s'", v);
    a->study = v;
    return PP_OK;
  }
  return pp_cli_help_or_unknown(id, R_HELP, &a->help, err);
}

pp_status pp_cli_parse_collect(int argc, char **argv, pp_collect_args *a, pp_error *err) {
  memset(a, 0, sizeof *a);
  a->files = pp_xcalloc((size_t)argc + 1, sizeof *a->files);
  pp_status st = pp_cli_getopt(argc, argv, collect_opts, N_OPTS(collect_opts), "h", collect_handler, a,
                               a->files, argc, &a->n_files, err);
  if (st || a->help) return st;
  if (a->n_files < 1) return pp_error_set(err, PP_ERR_USAGE, "no archives given");
  return PP_OK;
}

pp_status pp_cli_parse_plot(int argc, char **argv, pp_plot_args *a, pp_error *err) {
  memset(a, 0, sizeof *a);
  a->out_dir = ".";
  a->x = "devices";
  a->y = "memory_bytes";
  pp_status st = pp_cli_getopt(argc, argv, plot_opts, N_OPTS(plot_opts), "h", plot_handler, a, a->files,
                               PP_PLOT_MAX_FILES, &a->n_files, err);
  if (st) return st;
  if (a->help) return PP_OK;
  if (a->n_files < 1)
    return pp_error_set(err, PP_ERR_USAGE, "no archive or table given (try 'piper plot --help')");
  return PP_OK;
}
