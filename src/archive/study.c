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

pp_status pp_archive_read_summary(const char *path, pp_archive_summary *s, pp_error *err) {
  memset(s, 0, sizeof *s);
  pp_archive *a = NULL;
  /* the whole archive is checked, not only the attributes shown: a study
   * must not list a result from a damaged file */
  pp_status st = pp_archive_open(path, &a, err);
  if (st) return st;
  ar_quiet_state q;
  ar_quiet(&q);
  hid_t file = ar_archive_file(a);
  const pp_problem *p = pp_archive_problem(a);
  long long feasible = 0, used = 0, stages = 0;
  char input[4200];
  if ((st = ar_attr_get_int(file, path, "/plan", "feasible", 0, 1, &feasible, err)) ||
      (st = ar_attr_get_double(file, path, "/plan", "tps", &s->tps, err)) ||
      (st = ar_attr_get_int(file, path, "/plan", "devices_used", 0, p->devices, &used, err)) ||
      (st = ar_attr_get_int(file, path, "/plan", "stages", 0, INT32_MAX, &stages, err)) ||
      (st = ar_attr_get_double(file, path, "/run", "seconds_before_write", &s->seconds, err)) ||
      (st = ar_attr_get_string(file, path, "/problem", "input_path", input, sizeof input, err)))
    goto done;
  snprintf(s->input, sizeof s->input, "%s", input);
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
  s->feasible = (int)feasible;
  s->devices_used = (int)used;
  s->stages = (int)stages;
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
