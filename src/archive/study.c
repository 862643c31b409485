/*
 * study.c - study tables: the summary of one archive and the table of many
 * (see include/piper/archive.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdint.h>

#include "archive_h5.h"
#include "piper/isolate.h"

pp_status ar_summary_attrs(hid_t file, const char *path, int devices, pp_archive_summary *s, pp_error *err) {
  long long feasible = 0, used = 0, stages = 0;
  char input[4200];
  pp_status st;
  if ((st = ar_attr_get_int(file, path, "/plan", "feasible", 0, 1, &feasible, err)) ||
      (st = ar_attr_get_double(file, path, "/plan", "tps", &s->tps, err)) ||
      (st = ar_attr_get_int(file, path, "/plan", "devices_used", 0, devices, &used, err)) ||
      (st = ar_attr_get_int(file, path, "/plan", "stages", 0, INT32_MAX, &stages, err)) ||
      (st = ar_attr_get_double(file, path, "/run", "seconds_before_write", &s->seconds, err)) ||
      (st = ar_attr_get_string(file, path, "/problem", "input_path", input, sizeof input, err)))
    return st;
  snprintf(s->input, sizeof s->input, "%s", input);
  s->feasible = (int)feasible;
  s->devices_used = (int)used;
  s->stages = (int)stages;
  return PP_OK;
}

pp_status pp_archive_read_summary(const char *path, pp_archive_summary *s, pp_error *err) {
  memset(s, 0, sizeof *s);
  pp_archive *a = NULL;
  /* the whole archive is checked, not only the attributes shown: a study
   * must not list a result from a damaged file */
  pp_status st = pp_archive_open(path, &a, err);
  if (st) return st;
  ar_quiet_state q;
  ar_quiet(&q);
  const pp_problem *p = pp_archive_problem(a);
  if ((st = ar_summary_attrs(ar_archive_file(a), path, p->devices, s, err))) goto done;
  s->devices = p->devices;
  s->microbatches = p->microbatches;
  s->memory = p->memory;
  s->bandwidth = p->bandwidth;
  s->no_dp = p->no_dp;
  s->no_tp = p->no_tp;
  s->no_recompute = p->no_recompute;
  s->planner = p->planner;
  s->zero = p->zero;
  s->devices_per_node = p->devices_per_node;
  s->intra_bandwidth = p->devices_per_node ? p->intra_bandwidth : 0.0;
  s->schedule = (int)p->schedule;
  s->uniform = p->uniform;
  s->downsets = pp_archive_downsets(a) ? pp_archive_downsets(a)->count : 0;
done:
  ar_unquiet(&q);
  pp_archive_close(a);
  return st;
}

pp_status pp_archive_write_study(const char *path, const pp_archive_summary *rows, const char *const *files,
                                 int n, pp_error *err) {
  char tmp[PP_PATH_MAX];
  ar_quiet_state q;
  ar_quiet(&q);
  writer w;
  pp_status st = ar_create(&w, NULL, path, tmp, err);
  if (st) {
    ar_unquiet(&q);
    return st;
  }
  hid_t grp = ar_group(&w, "/study");
  if (grp < 0) {
    st = PP_ERR_IO;
    goto done;
  }
  {
    long long *iv = pp_xmalloc(sizeof(long long) * (size_t)(n + 1));
    double *dv = pp_xmalloc(sizeof(double) * (size_t)(n + 1));
    const char **sv = pp_xmalloc(sizeof(char *) * (size_t)(n + 1));
    char *flags = pp_xcalloc((size_t)n + 1, 48);
    hsize_t dims[1] = {(hsize_t)n};
#define ICOL(name, expr)                                                        \
  do {                                                                          \
    for (int i = 0; i < n; i++) iv[i] = (expr);                                 \
    if (!st) st = ar_write_small(&w, grp, name, H5T_NATIVE_LLONG, 1, dims, iv); \
  } while (0)
#define DCOL(name, expr)                                                         \
  do {                                                                           \
    for (int i = 0; i < n; i++) dv[i] = (expr);                                  \
    if (!st) st = ar_write_small(&w, grp, name, H5T_NATIVE_DOUBLE, 1, dims, dv); \
  } while (0)
    for (int i = 0; i < n; i++) sv[i] = files[i];
    if (!st) st = ar_write_strings(&w, grp, "archive", sv, n);
    for (int i = 0; i < n; i++) sv[i] = rows[i].input;
    if (!st) st = ar_write_strings(&w, grp, "input", sv, n);
    ICOL("devices", rows[i].devices);
    DCOL("memory", rows[i].memory);
    DCOL("bandwidth", rows[i].bandwidth);
    ICOL("microbatches", rows[i].microbatches);
    for (int i = 0; i < n; i++) {
      char *f = flags + (size_t)i * 48;
      snprintf(f, 48, "%s%s%s%s", rows[i].planner == PP_PLANNER_EQUI ? "equi," : "",
               rows[i].no_dp ? "no-dp," : "", rows[i].no_tp ? "no-tp," : "",
               rows[i].no_recompute ? "no-recompute," : "");
      size_t l = strlen(f);
      if (l)
        f[l - 1] = '\0';
      else
        snprintf(f, 48, "none");
      sv[i] = f;
    }
    if (!st) st = ar_write_strings(&w, grp, "flags", sv, n);
    ICOL("feasible", rows[i].feasible);
    DCOL("tps", rows[i].feasible ? rows[i].tps : INFINITY);
    ICOL("devices_used", rows[i].devices_used);
    ICOL("stages", rows[i].stages);
    ICOL("downsets", rows[i].downsets);
    DCOL("seconds", rows[i].seconds);
    ICOL("zero", rows[i].zero);
    ICOL("devices_per_node", rows[i].devices_per_node);
    DCOL("intra_node_bandwidth", rows[i].intra_bandwidth);
    for (int i = 0; i < n; i++) sv[i] = pp_schedule_name((pp_schedule)rows[i].schedule);
    if (!st) st = ar_write_strings(&w, grp, "schedule", sv, n);
    ICOL("uniform", rows[i].uniform);
#undef ICOL
#undef DCOL
    free(iv);
    free(dv);
    free(sv);
    free(flags);
  }
  st = ar_group_close(&w, grp, st);
done:
  st = ar_close(&w, st, tmp);
  ar_unquiet(&q);
  return st;
}

static pp_file_kind kind_here(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return PP_FILE_NOT_HDF5;
  fclose(f);
  ar_quiet_state q;
  ar_quiet(&q);
  pp_file_kind kind = PP_FILE_NOT_HDF5;
  hid_t file = H5Fis_hdf5(path) > 0 ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : H5I_INVALID_HID;
  if (file >= 0) {
    kind = H5Lexists(file, "/problem", H5P_DEFAULT) > 0 ? PP_FILE_ARCHIVE
           : H5Lexists(file, "/study", H5P_DEFAULT) > 0 ? PP_FILE_STUDY
                                                        : PP_FILE_OTHER_HDF5;
    H5Fclose(file);
  }
  ar_unquiet(&q);
  return kind;
}

/* kind_here in a child process: succeeds if the file could be looked at. */
static int kind_probe(void *path) {
  (void)kind_here(path);
  return 0;
}

pp_file_kind pp_archive_file_kind(const char *path) {
  /* a file on which HDF5 itself faults is no file piper can use */
  if (pp_isolated_run(kind_probe, (void *)path, NULL) == PP_ISOLATED_CRASHED) return PP_FILE_OTHER_HDF5;
  return kind_here(path);
}

/* The readers' messages say "not a valid piper archive"; this file is a
 * study table. */
static pp_status as_study_error(pp_error *err, pp_status st) {
  const char *from = ": not a valid piper archive: ";
  char *at = err ? strstr(err->msg, from) : NULL;
  if (at) {
    char rest[sizeof err->msg];
    snprintf(rest, sizeof rest, "%s", at + strlen(from));
    snprintf(at, sizeof err->msg - (size_t)(at - err->msg), ": not a valid study table: %s", rest);
  }
  return st;
}

#define STUDY_MAX_ROWS 1000000

/* Column name of /study read whole: one-dimensional, n rows (the first
 * column read sets n). */
static pp_status study_col(hid_t file, const char *path, const char *name, ar_kind kind, long long *n,
                           ar_data *d, pp_error *err) {
  char full[64];
  snprintf(full, sizeof full, "/study/%s", name);
  pp_status st = ar_read_ds(file, path, full, kind, 1, 0, STUDY_MAX_ROWS, d, err);
  if (st) return st;
  if (*n < 0) *n = (long long)d->rows;
  if ((long long)d->rows != *n) {
    free(d->buf);
    d->buf = NULL;
    return ar_bad(err, path, full, "%zu rows, the other columns have %lld", d->rows, *n);
  }
  return PP_OK;
}

/* The flags column ("none" or e.g. "equi,no-dp") into r. */
static int study_flags(const char *s, pp_archive_summary *r) {
  if (strcmp(s, "none") == 0) return 0;
  char buf[64];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (strcmp(tok, "equi") == 0)
      r->planner = PP_PLANNER_EQUI;
    else if (strcmp(tok, "no-dp") == 0)
      r->no_dp = 1;
    else if (strcmp(tok, "no-tp") == 0)
      r->no_tp = 1;
    else if (strcmp(tok, "no-recompute") == 0)
      r->no_recompute = 1;
    else
      return -1;
  }
  return 0;
}

enum {
  SC_DEVICES,
  SC_MICRO,
  SC_FEASIBLE,
  SC_USED,
  SC_STAGES,
  SC_DOWNSETS,
  SC_ZERO,
  SC_DPN,
  SC_UNIFORM,
  N_SC
};
enum { SD_MEMORY, SD_BANDWIDTH, SD_TPS, SD_SECONDS, SD_INTRA, N_SD };
enum { SS_INPUT, SS_FLAGS, SS_SCHEDULE, N_SS };

static const char *const sc_name[N_SC] = {"devices",      "microbatches",     "feasible",
                                          "devices_used", "stages",           "downsets",
                                          "zero",         "devices_per_node", "uniform"};
static const char *const sd_name[N_SD] = {"memory", "bandwidth", "tps", "seconds", "intra_node_bandwidth"};
static const char *const ss_name[N_SS] = {"input", "flags", "schedule"};

/* Row i of the columns read into r; PP_OK, or PP_ERR_INPUT naming the
 * dataset and row. */
static pp_status study_row(const char *path, ar_data *ic, ar_data *dc, ar_data *sc, size_t i,
                           pp_archive_summary *r, pp_error *err) {
  static const long long lo[N_SC] = {1, 1, 0, 0, 0, 0, 0, 0, 0};
  static const long long hi[N_SC] = {PP_MAX_DEVICES,
                                     PP_MAX_MICROBATCHES,
                                     1,
                                     PP_MAX_DEVICES,
                                     PP_MAX_DEVICES,
                                     INT32_MAX,
                                     3,
                                     PP_MAX_DEVICES,
                                     1};
  int iv[N_SC];
  for (int c = 0; c < N_SC; c++) {
    long long v = ((const long long *)ic[c].buf)[i];
    char where[64];
    snprintf(where, sizeof where, "/study/%s", sc_name[c]);
    if (v < lo[c] || v > hi[c])
      return ar_bad(err, path, where, "row %zu: %lld is not within [%lld, %lld]", i + 1, v, lo[c], hi[c]);
    iv[c] = (int)v;
  }
  memset(r, 0, sizeof *r);
  r->devices = iv[SC_DEVICES];
  r->microbatches = iv[SC_MICRO];
  r->feasible = iv[SC_FEASIBLE];
  r->devices_used = iv[SC_USED];
  r->stages = iv[SC_STAGES];
  r->downsets = iv[SC_DOWNSETS];
  r->zero = iv[SC_ZERO];
  r->devices_per_node = iv[SC_DPN];
  r->uniform = iv[SC_UNIFORM];
  r->memory = ((const double *)dc[SD_MEMORY].buf)[i];
  r->bandwidth = ((const double *)dc[SD_BANDWIDTH].buf)[i];
  r->tps = ((const double *)dc[SD_TPS].buf)[i];
  r->seconds = ((const double *)dc[SD_SECONDS].buf)[i];
  r->intra_bandwidth = ((const double *)dc[SD_INTRA].buf)[i];
  if (!(r->memory > 0) || !isfinite(r->memory) || !(r->bandwidth > 0) || !isfinite(r->bandwidth))
    return ar_bad(err, path, "/study/memory, bandwidth", "row %zu: not positive numbers", i + 1);
  if (r->feasible && !(r->tps > 0 && isfinite(r->tps)))
    return ar_bad(err, path, "/study/tps", "row %zu: a feasible row without a positive time", i + 1);
  const char *s[N_SS];
  for (int c = 0; c < N_SS; c++) s[c] = (const char *)sc[c].buf + i * sc[c].width;
  snprintf(r->input, sizeof r->input, "%.*s", (int)sc[SS_INPUT].width, s[SS_INPUT]);
  char f[64];
  snprintf(f, sizeof f, "%.*s", (int)sc[SS_FLAGS].width, s[SS_FLAGS]);
  if (study_flags(f, r)) return ar_bad(err, path, "/study/flags", "row %zu: unknown flags '%s'", i + 1, f);
  snprintf(f, sizeof f, "%.*s", (int)sc[SS_SCHEDULE].width, s[SS_SCHEDULE]);
  pp_schedule sched;
  if (pp_schedule_from_name(f, &sched))
    return ar_bad(err, path, "/study/schedule", "row %zu: unknown schedule '%s'", i + 1, f);
  r->schedule = (int)sched;
  return PP_OK;
}

static pp_status read_study_here(const char *path, pp_archive_summary **rows, int *n_rows, pp_error *err) {
  *rows = NULL;
  *n_rows = 0;
  pp_error e = {0};
  if (!err) err = &e;
  ar_quiet_state q;
  hid_t file = ar_open_quiet(path, &q, err);
  if (file < 0) return PP_ERR_INPUT;
  ar_data ic[N_SC] = {{0}}, dc[N_SD] = {{0}}, sc[N_SS] = {{0}};
  long long n = -1;
  pp_status st = PP_OK;
  if (H5Lexists(file, "/study", H5P_DEFAULT) <= 0) st = ar_bad(err, path, "/study", "missing");
  for (int c = 0; c < N_SC && !st; c++) st = study_col(file, path, sc_name[c], AR_I64, &n, &ic[c], err);
  for (int c = 0; c < N_SD && !st; c++) st = study_col(file, path, sd_name[c], AR_F64, &n, &dc[c], err);
  for (int c = 0; c < N_SS && !st; c++) st = study_col(file, path, ss_name[c], AR_STR, &n, &sc[c], err);
  if (!st && n == 0) st = ar_bad(err, path, "/study", "no rows (an empty study: no archive was collected)");
  pp_archive_summary *r = NULL;
  if (!st) {
    r = pp_xcalloc((size_t)n, sizeof *r);
    for (long long i = 0; i < n && !st; i++) st = study_row(path, ic, dc, sc, (size_t)i, &r[i], err);
  }
  for (int c = 0; c < N_SC; c++) free(ic[c].buf);
  for (int c = 0; c < N_SD; c++) free(dc[c].buf);
  for (int c = 0; c < N_SS; c++) free(sc[c].buf);
  H5Fclose(file);
  ar_unquiet(&q);
  if (st) {
    free(r);
    return as_study_error(err, st);
  }
  *rows = r;
  *n_rows = (int)n;
  return PP_OK;
}

static int read_study_probe(void *path) {
  pp_archive_summary *rows = NULL;
  int n = 0;
  pp_error e = {0};
  pp_status st = read_study_here(path, &rows, &n, &e);
  free(rows);
  return st != PP_OK;
}

pp_status pp_archive_read_study(const char *path, pp_archive_summary **rows, int *n_rows, pp_error *err) {
  *rows = NULL;
  *n_rows = 0;
  pp_error e = {0};
  pp_status st = ar_probe(read_study_probe, (void *)path, path, err ? err : &e);
  if (st) return as_study_error(err, st);
  return read_study_here(path, rows, n_rows, err);
}
