/*
 * h5write.c - the HDF5 writing helpers shared by the archive, checkpoint and
 * study-table writers (see archive_h5.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdarg.h>

#include "archive_h5.h"
#include "piper/file.h"
#include "piper/pages.h"

pp_status ar_fail(writer *w, const char *fmt, ...) {
  char what[512], why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  ar_h5_reason(why, sizeof why);
  /* MPI-IO reports a full disk in its own words, if at all: say it plainly */
  int full = strstr(why, strerror(ENOSPC)) == NULL && pp_file_space_short(w->path, 1 << 20);
  return pp_error_set(w->err, PP_ERR_IO, "%s: writing failed: %s (%s)%s%s", w->path, what, why,
                      full ? ": " : "", full ? strerror(ENOSPC) : "");
}

static pp_status attr_write(writer *w, hid_t loc, const char *name, hid_t type, const void *value) {
  hid_t space = H5Screate(H5S_SCALAR), attr = H5I_INVALID_HID;
  pp_status st = PP_OK;
  if (space < 0) {
    st = ar_fail(w, "H5Screate");
    goto done;
  }
  attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (attr < 0 || H5Awrite(attr, type, value) < 0) st = ar_fail(w, "writing attribute %s", name);
done:
  if (attr >= 0) H5Aclose(attr);
  if (space >= 0) H5Sclose(space);
  return st;
}

pp_status ar_attr_int(writer *w, hid_t loc, const char *name, long long v) {
  return attr_write(w, loc, name, H5T_NATIVE_LLONG, &v);
}

pp_status ar_attr_double(writer *w, hid_t loc, const char *name, double v) {
  return attr_write(w, loc, name, H5T_NATIVE_DOUBLE, &v);
}

pp_status ar_attr_string(writer *w, hid_t loc, const char *name, const char *v) {
  hid_t type = H5Tcopy(H5T_C_S1);
  if (type < 0) return ar_fail(w, "H5Tcopy");
  pp_status st = H5Tset_size(type, strlen(v) + 1) < 0 || H5Tset_strpad(type, H5T_STR_NULLTERM) < 0
                     ? ar_fail(w, "making a string type")
                     : attr_write(w, loc, name, type, v);
  H5Tclose(type);
  return st;
}

/* The rows of a chunk of a dataset of dims[0] x (ndims == 2 ? dims[1] : 1)
 * elements of type: about 1 MiB, at most the whole, at least one row. */
static hsize_t chunk_rows_of(hid_t type, int ndims, const hsize_t *dims) {
  size_t row_bytes = H5Tget_size(type) * (ndims == 2 ? (size_t)dims[1] : 1);
  hsize_t per_chunk = row_bytes ? (hsize_t)(1u << 20) / row_bytes : 1;
  if (per_chunk < 1) per_chunk = 1;
  return dims[0] == 0 ? 1 : dims[0] < per_chunk ? dims[0] : per_chunk;
}

/* Creates dataset name in loc: dims[0] x (ndims == 2 ? dims[1] : 1)
 * elements of type, no fill values (every element is written).  Up to
 * 64 KiB (and not empty) it is contiguous: a chunked one needs a chunk
 * index, and an archive of a small graph, whose datasets are nearly all
 * that small, takes 28% less room without them (bench/bench_sweep.sh).
 * Larger ones are in chunks of chunk_rows_of rows, deflated at level 1 if
 * compress.  Returns the dataset, or < 0 after ar_fail. */
static hid_t ds_create(writer *w, hid_t loc, const char *name, hid_t type, int ndims, const hsize_t *dims,
                       int compress) {
  hid_t fspace = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, ds = H5I_INVALID_HID;
  hsize_t maxdims[2] = {dims[0], ndims == 2 ? dims[1] : 1};
  if (dims[0] == 0) maxdims[0] = H5S_UNLIMITED;
  fspace = H5Screate_simple(ndims, dims, maxdims);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (fspace < 0 || dcpl < 0) {
    ar_fail(w, "creating a dataspace");
    goto done;
  }
  size_t row_bytes = H5Tget_size(type) * (ndims == 2 ? (size_t)dims[1] : 1);
  hsize_t chunk[2] = {chunk_rows_of(type, ndims, dims), ndims == 2 ? dims[1] : 1};
  if (ndims == 2 && chunk[1] == 0) chunk[1] = 1;
  const int small = dims[0] > 0 && dims[0] * row_bytes <= 65536;
  if (small ? H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 : H5Pset_chunk(dcpl, ndims, chunk) < 0) {
    ar_fail(w, "setting the storage layout");
    goto done;
  }
  if (H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0) {
    ar_fail(w, "H5Pset_fill_time");
    goto done;
  }
  if (compress && dims[0] * row_bytes > 65536 && (H5Pset_deflate(dcpl, 1) < 0)) {
    ar_fail(w, "setting compression");
    goto done;
  }
  ds = H5Dcreate2(loc, name, type, fspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (ds < 0) ar_fail(w, "creating dataset %s", name);
done:
  if (dcpl >= 0) H5Pclose(dcpl);
  if (fspace >= 0) H5Sclose(fspace);
  return ds;
}

/* One H5Dwrite into ds (of ndims dimensions, cols columns if 2) of rows
 * [starts[i], starts[i] + counts[i]) from buf, packed in that order; with
 * no rows it writes nothing but still takes part (collective). */
static pp_status ds_write_rows(writer *w, hid_t ds, const char *name, hid_t type, int ndims, hsize_t cols,
                               int n_ranges, const hsize_t *starts, const hsize_t *counts, const void *buf) {
  hid_t fspace = H5Dget_space(ds), mspace = H5I_INVALID_HID;
  pp_status st = PP_OK;
  if (fspace < 0 || H5Sselect_none(fspace) < 0) {
    st = ar_fail(w, "selecting in dataset %s", name);
    goto done;
  }
  hsize_t total = 0;
  for (int i = 0; i < n_ranges; i++) {
    if (counts[i] == 0) continue;
    hsize_t start[2] = {starts[i], 0}, count[2] = {counts[i], ndims == 2 ? cols : 1};
    if (H5Sselect_hyperslab(fspace, H5S_SELECT_OR, start, NULL, count, NULL) < 0) {
      st = ar_fail(w, "selecting a hyperslab");
      goto done;
    }
    total += counts[i] * (ndims == 2 ? cols : 1);
  }
  hsize_t mdims = total;
  mspace = H5Screate_simple(1, &mdims, NULL);
  if (mspace < 0 || (total == 0 && H5Sselect_none(mspace) < 0)) {
    st = ar_fail(w, "creating a memory dataspace");
    goto done;
  }
  if (H5Dwrite(ds, type, mspace, fspace, w->dxpl, total ? buf : NULL) < 0)
    st = ar_fail(w, "writing dataset %s", name);
done:
  if (mspace >= 0) H5Sclose(mspace);
  if (fspace >= 0) H5Sclose(fspace);
  return st;
}

pp_status ar_write_ds(writer *w, hid_t loc, const char *name, hid_t type, int ndims, const hsize_t *dims,
                      int n_ranges, const hsize_t *starts, const hsize_t *counts, const void *buf,
                      int compress) {
  hid_t ds = ds_create(w, loc, name, type, ndims, dims, compress);
  if (ds < 0) return PP_ERR_IO;
  pp_status st =
      ds_write_rows(w, ds, name, type, ndims, ndims == 2 ? dims[1] : 1, n_ranges, starts, counts, buf);
  if (H5Dclose(ds) < 0 && !st) st = ar_fail(w, "closing dataset %s", name);
  return st;
}

pp_status ar_write_stream(writer *w, hid_t loc, const char *name, hid_t type, hsize_t n, hsize_t start,
                          hsize_t count, ar_fill_fn fill, void *user) {
  /* The first call writes the partial chunks at both ends of this rank's
   * part (which it may share with the ranks before and after it, writing
   * theirs in the same call), the others the whole chunks between, about
   * 2 MiB a call; every chunk is filtered and placed once.  The number of
   * calls is agreed first, so that a rank that fails still makes them all. */
  const hsize_t dims[1] = {n}, chunk = chunk_rows_of(type, 1, dims), end = start + count;
  const size_t elem = H5Tget_size(type);
  const hsize_t piece = ar_piece_elems(chunk, elem, 2);
  hsize_t head = (start + chunk - 1) / chunk * chunk, tail = end / chunk * chunk;
  if (head > end) head = end;
  if (tail < head) tail = head;
  hsize_t calls = 1 + (tail - head + piece - 1) / piece;
  if (w->d) calls = (hsize_t)pp_dist_max(w->d, (double)calls);
  hid_t ds = ds_create(w, loc, name, type, 1, dims, 1);
  if (ds < 0) return PP_ERR_IO;
  char *buf = pp_xmalloc_huge(piece * elem);
  hsize_t starts[2] = {start, tail}, counts[2] = {head - start, end - tail};
  if (counts[0]) fill(user, starts[0], counts[0], buf);
  if (counts[1]) fill(user, starts[1], counts[1], buf + counts[0] * elem);
  pp_status st = ds_write_rows(w, ds, name, type, 1, 1, 2, starts, counts, buf);
  for (hsize_t i = 1, at = head; i < calls; i++) {
    hsize_t c = tail - at < piece ? tail - at : piece;
    if (c) fill(user, at, c, buf);
    pp_status sti = ds_write_rows(w, ds, name, type, 1, 1, c ? 1 : 0, &at, &c, buf);
    if (!st) st = sti;
    at += c;
  }
  free(buf);
  if (H5Dclose(ds) < 0 && !st) st = ar_fail(w, "closing dataset %s", name);
  return st;
}

/* A dataset written whole by rank 0. */
pp_status ar_write_small(writer *w, hid_t loc, const char *name, hid_t type, int ndims, const hsize_t *dims,
                         const void *buf) {
  hsize_t start = 0, count = dims[0];
  return ar_write_ds(w, loc, name, type, ndims, dims, w->rank == 0 ? 1 : 0, &start, &count, buf, 1);
}

hid_t ar_string_type(size_t width) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t >= 0 && (H5Tset_size(t, width ? width : 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0)) {
    H5Tclose(t);
    t = H5I_INVALID_HID;
  }
  return t;
}

/* Fixed-width string dataset from n strings (NULL counts as ""). */
pp_status ar_write_strings(writer *w, hid_t loc, const char *name, const char *const *strs, int n) {
  size_t width = 1;
  for (int i = 0; i < n; i++)
    if (strs[i] && strlen(strs[i]) > width) width = strlen(strs[i]);
  if (width > NAME_WIDTH_MAX) width = NAME_WIDTH_MAX;
  char *buf = pp_xcalloc((size_t)n + 1, width);
  for (int i = 0; i < n; i++)
    if (strs[i]) strncpy(buf + (size_t)i * width, strs[i], width);
  hid_t t = ar_string_type(width);
  hsize_t dims[1] = {(hsize_t)n};
  pp_status st = t < 0 ? ar_fail(w, "H5Tcopy") : ar_write_small(w, loc, name, t, 1, dims, buf);
  if (t >= 0) H5Tclose(t);
  free(buf);
  return st;
}

pp_status ar_group_close(writer *w, hid_t g, pp_status st) {
  if (H5Gclose(g) < 0 && !st) st = ar_fail(w, "closing a group");
  return st;
}

hid_t ar_group(writer *w, const char *name) {
  hid_t g = H5Gcreate2(w->file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) ar_fail(w, "creating group %s", name);
  return g;
}

/* pp_dist_agree, or the status itself when writing alone. */
pp_status ar_agree(writer *w, pp_status st) { return w->d ? pp_dist_agree(w->d, st, w->err) : st; }

/* The temporary file's name, chosen by rank 0 (pp_file_temp creates it)
 * and sent to every rank. */
typedef struct temp_job {
  const char *path;
  char *tmp; /* PP_PATH_MAX bytes */
} temp_job;

static pp_status temp_produce(void *user, pp_pack *out, pp_error *err) {
  temp_job *j = user;
  pp_status st = pp_file_temp(j->path, j->tmp, NULL, err);
  if (!st && out) pp_pack_bytes(out, j->tmp, strlen(j->tmp) + 1);
  return st;
}

static pp_status temp_consume(void *user, pp_unpack *in, pp_error *err) {
  temp_job *j = user;
  const size_t len = pp_unpack_left(in);
  const char *name = pp_unpack_skip(in, len);
  if (!name || len == 0 || len > PP_PATH_MAX || name[len - 1] != '\0')
    return pp_error_set(err, PP_ERR_INTERNAL, "the temporary name received from rank 0 is malformed");
  memcpy(j->tmp, name, len);
  return PP_OK;
}

pp_status ar_create(writer *w, pp_dist *d, const char *path, char tmp[PP_PATH_MAX], pp_error *err) {
  *w = (writer){.file = H5I_INVALID_HID,
                .dxpl = H5P_DEFAULT,
                .d = d,
                .rank = d ? pp_dist_rank(d) : 0,
                .size = d ? pp_dist_size(d) : 1,
                .path = path,
                .err = err};
  tmp[0] = '\0';
  temp_job tj = {path, tmp};
  pp_status st =
      d ? pp_dist_from_root(d, temp_produce, temp_consume, &tj, err) : temp_produce(&tj, NULL, err);
  if (st) return st; /* agreed */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  /* a dist without MPI (no launcher started the process) has no
   * communicator: the serial driver then writes the same file */
  const MPI_Comm *comm = d ? pp_dist_comm_handle(d) : NULL;
  if (comm) {
    w->dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (fapl < 0 || w->dxpl < 0 || H5Pset_fapl_mpio(fapl, *comm, MPI_INFO_NULL) < 0 ||
        H5Pset_dxpl_mpio(w->dxpl, H5FD_MPIO_COLLECTIVE) < 0)
      st = ar_fail(w, "setting up parallel I/O");
  } else if (fapl < 0 || H5Pset_fapl_sec2(fapl) < 0) {
    st = ar_fail(w, "setting up file access");
  }
  if (!st && (w->file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
    st = ar_fail(w, "creating %s", tmp);
  if (fapl >= 0) H5Pclose(fapl);
  if ((st = ar_agree(w, st))) ar_close(w, st, tmp);
  return st;
}

pp_status ar_close(writer *w, pp_status st, const char *tmp) {
  /* flush first, so that the close itself has (almost) nothing left to
   * write and cannot fail on one rank only */
  if (!st && w->file >= 0 && H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) st = ar_fail(w, "flushing");
  st = ar_agree(w, st);
  if (st && w->rank == 0 && tmp[0] && truncate(tmp, 0) != 0) {
    /* nothing more to free; the close below may still fail */
  }
  /* every rank closes together; after a failure the file was truncated by
   * rank 0 so that what HDF5 still flushes finds room even on a full disk */
  st = ar_agree(w, st);
  if (w->file >= 0 && H5Fclose(w->file) < 0 && !st) st = ar_fail(w, "closing");
  w->file = H5I_INVALID_HID;
  if (w->dxpl != H5P_DEFAULT && w->dxpl >= 0) H5Pclose(w->dxpl);
  w->dxpl = H5P_DEFAULT;
  st = ar_agree(w, st);
  if (w->rank == 0 && tmp[0]) {
    if (!st)
      st = pp_file_commit(tmp, w->path, w->err);
    else
      pp_file_discard(tmp);
  }
  return ar_agree(w, st);
}
