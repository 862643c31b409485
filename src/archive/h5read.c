/*
 * h5read.c - the HDF5 reading helpers shared by the archive, checkpoint and
 * study-table readers (see archive_h5.h).
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

pp_status ar_bad(pp_error *err, const char *path, const char *what) {
  return pp_error_set(err, PP_ERR_INPUT, "%s: not a valid piper archive: %s", path, what);
}

/* Reads a whole 1-D or 2-D dataset of native type into a new buffer;
 * *n = element count.  PP_ERR_INPUT names what is missing. */
pp_status ar_read_all(hid_t file, const char *fpath, const char *name, hid_t type, void **buf, size_t *n,
                      pp_error *err) {
  *buf = NULL;
  hid_t ds = H5Dopen2(file, name, H5P_DEFAULT), sp = H5I_INVALID_HID;
  pp_status st = PP_OK;
  if (ds < 0) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: not a valid piper archive: %s is missing", fpath, name);
    goto done;
  }
  sp = H5Dget_space(ds);
  hssize_t count = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  if (count < 0) {
    st = ar_bad(err, fpath, name);
    goto done;
  }
  *n = (size_t)count;
  *buf = pp_xmalloc(H5Tget_size(type) * ((size_t)count + 1));
  if (count > 0 && H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, *buf) < 0) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: cannot read %s (truncated or damaged file?)", fpath, name);
    free(*buf);
    *buf = NULL;
  }
done:
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  return st;
}

int ar_read_attr(hid_t file, const char *obj, const char *name, hid_t type, void *out) {
  hid_t a = H5Aopen_by_name(file, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) return -1;
  int rc = H5Aread(a, type, out) < 0 ? -1 : 0;
  H5Aclose(a);
  return rc;
}

int ar_read_attr_string(hid_t file, const char *obj, const char *name, char *out, size_t n) {
  hid_t a = H5Aopen_by_name(file, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t ft = H5Aget_type(a);
  size_t sz = ft >= 0 ? H5Tget_size(ft) : 0;
  int rc = -1;
  if (sz > 0) {
    char *buf = pp_xcalloc(sz + 1, 1);
    hid_t mt = ar_string_type(sz);
    H5Tset_strpad(mt, H5T_STR_NULLTERM);
    if (H5Aread(a, mt, buf) >= 0) {
      snprintf(out, n, "%s", buf);
      rc = 0;
    }
    H5Tclose(mt);
    free(buf);
  }
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(a);
  return rc;
}

hid_t ar_open_for_reading(const char *path, pp_error *err) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  FILE *f = fopen(path, "rb");
  if (!f) {
    pp_error_set(err, PP_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    return H5I_INVALID_HID;
  }
  fclose(f);
  if (H5Fis_hdf5(path) <= 0) {
    pp_error_set(err, PP_ERR_INPUT, "%s: not an HDF5 file (or damaged beyond reading)", path);
    return H5I_INVALID_HID;
  }
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) pp_error_set(err, PP_ERR_INPUT, "%s: cannot open as HDF5 (truncated or damaged?)", path);
  return file;
}

pp_status ar_read_problem(hid_t file, const char *path, pp_problem *p, pp_error *err) {
  long long dev, mb, ndp, ntp, nrc;
  char knap[32];
  memset(p, 0, sizeof *p);
  if (ar_read_attr(file, "/problem", "devices", H5T_NATIVE_LLONG, &dev) ||
      ar_read_attr(file, "/problem", "microbatches", H5T_NATIVE_LLONG, &mb) ||
      ar_read_attr(file, "/problem", "memory", H5T_NATIVE_DOUBLE, &p->memory) ||
      ar_read_attr(file, "/problem", "bandwidth", H5T_NATIVE_DOUBLE, &p->bandwidth) ||
      ar_read_attr(file, "/problem", "no_dp", H5T_NATIVE_LLONG, &ndp) ||
      ar_read_attr(file, "/problem", "no_tp", H5T_NATIVE_LLONG, &ntp) ||
      ar_read_attr(file, "/problem", "no_recompute", H5T_NATIVE_LLONG, &nrc) ||
      ar_read_attr_string(file, "/problem", "knapsack", knap, sizeof knap))
    return ar_bad(err, path, "/problem attributes are missing");
  char planner[32] = "piper"; /* absent in archives older than the attribute */
  if (ar_read_attr_string(file, "/problem", "planner", planner, sizeof planner) == 0 &&
      strcmp(planner, "piper") != 0 && strcmp(planner, "equi") != 0)
    return ar_bad(err, path, "/problem attribute planner is neither piper nor equi");
  p->planner = strcmp(planner, "equi") == 0 ? PP_PLANNER_EQUI : PP_PLANNER_PIPER;
  if (dev < 1 || dev > PP_MAX_DEVICES || mb < 1 || mb > PP_MAX_MICROBATCHES || !(p->memory > 0) ||
      !(p->bandwidth > 0))
    return ar_bad(err, path, "/problem attributes are out of range");
  p->devices = (int)dev;
  p->microbatches = (int)mb;
  p->no_dp = ndp != 0;
  p->no_tp = ntp != 0;
  p->no_recompute = nrc != 0;
  p->knapsack = strcmp(knap, "exact") == 0 ? PP_KNAPSACK_EXACT : PP_KNAPSACK_GREEDY;
  return PP_OK;
}
