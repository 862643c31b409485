/*
 * checkpoint.c - the checkpoint file: the tables of the layers done so far
 * and the run identity, written and read by rank 0 alone (see
 * include/piper/archive.h).
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

/* ---- checkpoints ---- */

pp_status pp_checkpoint_write(const char *path, const char *identity, const pp_downsets *ds, const pp_dp *dp,
                              int layers_done, pp_error *err) {
  char tmp[4096];
  ar_temp_path(path, tmp, sizeof tmp);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int end = ds->layer_start[layers_done + 1];
  for (int id = 1; id < end; id++) pp_stairs_pack(pp_dp_table(dp, id), id, &buf, &len, &cap);
  pp_status st = PP_OK;
  hid_t file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) {
    free(buf);
    return pp_error_set(err, PP_ERR_IO, "%s: cannot create the checkpoint", tmp);
  }
  writer w = {.file = file, .dxpl = H5P_DEFAULT, .rank = 0, .size = 1, .err = err};
  hsize_t dims[1] = {(hsize_t)len};
  if ((st = ar_attr_string(&w, file, "identity", identity)) ||
      (st = ar_attr_int(&w, file, "layers_done", layers_done)) ||
      (st = ar_attr_int(&w, file, "downsets", ds->count)) ||
      (st = ar_write_small(&w, file, "tables", H5T_NATIVE_UCHAR, 1, dims, buf)))
    goto done;
done:
  if (H5Fclose(file) < 0 && !st) st = pp_error_set(err, PP_ERR_IO, "%s: closing failed", tmp);
  free(buf);
  if (!st && rename(tmp, path) != 0)
    st = pp_error_set(err, PP_ERR_IO, "%s: cannot rename the checkpoint into place: %s", path,
                      strerror(errno));
  if (st) unlink(tmp);
  return st;
}

pp_status pp_checkpoint_read(const char *path, const char *identity, int *layers_done, char **buf,
                             size_t *len, pp_error *err) {
  *buf = NULL;
  *len = 0;
  hid_t file = ar_open_for_reading(path, err);
  if (file < 0) return PP_ERR_INPUT;
  char ident[128];
  long long layers = 0;
  pp_status st = PP_OK;
  if (ar_read_attr_string(file, "/", "identity", ident, sizeof ident) ||
      ar_read_attr(file, "/", "layers_done", H5T_NATIVE_LLONG, &layers)) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: not a valid piper checkpoint (attributes missing)", path);
  } else if (strcmp(ident, identity) != 0) {
    st = pp_error_set(
        err, PP_ERR_INPUT,
        "%s: the checkpoint belongs to another input or other parameters (identity %.12s..., this "
        "run %.12s...); remove it or run without --resume",
        path, ident, identity);
  } else {
    void *data = NULL;
    size_t n = 0;
    st = ar_read_all(file, path, "/tables", H5T_NATIVE_UCHAR, &data, &n, err);
    if (!st) {
      *buf = data;
      *len = n;
      *layers_done = (int)layers;
    }
  }
  H5Fclose(file);
  return st;
}
