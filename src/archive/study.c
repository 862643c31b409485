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

#include "archive_h5.h"

pp_status pp_archive_read_summary(const char *path, pp_archive_summary *s, pp_error *err) {
  memset(s, 0, sizeof *s);
  hid_t file = ar_open_for_reading(path, err);
  if (file < 0) return PP_ERR_INPUT;
  pp_problem p;
  pp_status st = ar_read_problem(file, path, &p, err);
  long long feasible = 0, used = 0, stages = 0, count = 0;
  double before = 0;
  if (!st && (ar_read_attr(file, "/plan", "feasible", H5T_NATIVE_LLONG, &feasible) ||
              ar_read_attr(file, "/plan", "tps", H5T_NATIVE_DOUBLE, &s->tps) ||
              ar_read_attr(file, "/plan", "devices_used", H5T_NATIVE_LLONG, &used) ||
              ar_read_attr(file, "/plan", "stages", H5T_NATIVE_LLONG, &stages) ||
              ar_read_attr(file, "/downsets", "count", H5T_NATIVE_LLONG, &count) ||
              ar_read_attr(file, "/run", "seconds_before_write", H5T_NATIVE_DOUBLE, &before) ||
              ar_read_attr_string(file, "/problem", "input_path", s->input, sizeof s->input)))
    st = ar_bad(err, path, "/plan, /downsets or /run attributes are missing");
  if (!st) {
    s->devices = p.devices;
    s->microbatches = p.microbatches;
    s->memory = p.memory;
    s->bandwidth = p.bandwidth;
    s->no_dp = p.no_dp;
    s->no_tp = p.no_tp;
    s->no_recompute = p.no_recompute;
    s->planner = p.planner;
    s->feasible = (int)feasible;
    s->devices_used = (int)used;
    s->stages = (int)stages;
    s->downsets = (int)count;
    s->seconds = before;
  }
  H5Fclose(file);
  return st;
}

pp_status pp_archive_write_study(const char *path, const pp_archive_summary *rows, const char *const *files,
                                 int n, pp_error *err) {
  char tmp[4096];
  ar_temp_path(path, tmp, sizeof tmp);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return pp_error_set(err, PP_ERR_IO, "%s: cannot create", tmp);
  writer w = {.file = file, .dxpl = H5P_DEFAULT, .rank = 0, .size = 1, .err = err};
  pp_status st = PP_OK;
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
#undef ICOL
#undef DCOL
    free(iv);
    free(dv);
    free(sv);
    free(flags);
  }
  H5Gclose(grp);
done:
  if (H5Fclose(file) < 0 && !st) st = pp_error_set(err, PP_ERR_IO, "%s: closing failed", tmp);
  if (!st && rename(tmp, path) != 0)
    st = pp_error_set(err, PP_ERR_IO, "%s: cannot rename into place: %s", path, strerror(errno));
  if (st) unlink(tmp);
  return st;
}
