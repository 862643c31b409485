/*
 * archive_h5.h - private to the archive layer: the HDF5 helpers shared by
 * the archive writer (writer.c), its reader (reader.c), checkpoints
 * (checkpoint.c) and study tables (study.c).  Writing helpers live in
 * h5write.c, reading helpers in h5read.c.
 *
 * Every helper that returns a pp_status fills err with a message naming the
 * file and the dataset or attribute; none prints.  None is collective except
 * where it says so (the dataset writers, when w->d has several ranks).
 */
#ifndef PIPER_ARCHIVE_H5_H
#define PIPER_ARCHIVE_H5_H

#include <hdf5.h>

#include "piper/archive.h"

/* Widest string piper writes into a fixed-width string dataset. */
#define NAME_WIDTH_MAX 4096

/* ---- writing (h5write.c) ---- */

/* An open file being written: by every rank of d collectively (dxpl set up
 * for collective MPI-IO), or by one process alone (d NULL, dxpl H5P_DEFAULT). */
typedef struct writer {
  hid_t file;
  hid_t dxpl;
  pp_dist *d; /* NULL when writing alone */
  int rank, size;
  pp_error *err;
} writer;

/* PP_ERR_IO "HDF5: <what> failed". */
pp_status ar_fail(pp_error *err, const char *what);

/* Scalar attributes on loc: a long long, a double, a NUL-terminated string. */
pp_status ar_attr_int(writer *w, hid_t loc, const char *name, long long v);
pp_status ar_attr_double(writer *w, hid_t loc, const char *name, double v);
pp_status ar_attr_string(writer *w, hid_t loc, const char *name, const char *v);

/* Writes a chunked dataset of dims[0] x (ndims == 2 ? dims[1] : 1) elements;
 * this rank writes rows [starts[i], starts[i] + counts[i]) from buf (packed
 * in that order).  Collective over w->d: every rank calls it, with
 * n_ranges = 0 if it writes nothing.  Deflates large datasets if compress. */
pp_status ar_write_ds(writer *w, hid_t loc, const char *name, hid_t type, int ndims, const hsize_t *dims,
                      int n_ranges, const hsize_t *starts, const hsize_t *counts, const void *buf,
                      int compress);

/* A dataset written whole by rank 0 (collective like ar_write_ds). */
pp_status ar_write_small(writer *w, hid_t loc, const char *name, hid_t type, int ndims, const hsize_t *dims,
                         const void *buf);

/* A new fixed-width, NUL-padded string type (caller closes); < 0 on failure. */
hid_t ar_string_type(size_t width);

/* A fixed-width string dataset of n strings (NULL counts as "") written by
 * rank 0; strings are cut at NAME_WIDTH_MAX bytes. */
pp_status ar_write_strings(writer *w, hid_t loc, const char *name, const char *const *strs, int n);

/* Creates group name (caller closes); < 0 with err set on failure. */
hid_t ar_group(writer *w, const char *name);

/* The temporary name of path: .NAME.partial in the same folder. */
void ar_temp_path(const char *path, char *out, size_t n);

/* ---- reading (h5read.c) ---- */

/* PP_ERR_INPUT "<path>: not a valid piper archive: <what>". */
pp_status ar_bad(pp_error *err, const char *path, const char *what);

/* Reads a whole 1-D or 2-D dataset as the native type into a new buffer
 * (*buf, caller frees); *n = element count. */
pp_status ar_read_all(hid_t file, const char *fpath, const char *name, hid_t type, void **buf, size_t *n,
                      pp_error *err);

/* Reads an attribute of obj; 0 on success, -1 if missing or unreadable. */
int ar_read_attr(hid_t file, const char *obj, const char *name, hid_t type, void *out);
int ar_read_attr_string(hid_t file, const char *obj, const char *name, char *out, size_t n);

/* Opens path read-only (< 0 with err set if missing or not HDF5). */
hid_t ar_open_for_reading(const char *path, pp_error *err);

/* Reads /problem's attributes into *p (range-checked). */
pp_status ar_read_problem(hid_t file, const char *path, pp_problem *p, pp_error *err);

#endif /* PIPER_ARCHIVE_H5_H */
