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
#include "piper/file.h"

/* Widest string piper writes into a fixed-width string dataset. */
#define NAME_WIDTH_MAX 4096

/* The elements a piece of a chunked 1-D dataset is written or read in:
 * whole chunks of chunk elements of elem bytes, about 2 MiB, at least
 * min_chunks of them (ar_write_stream, ar_seq_open). */
static inline hsize_t ar_piece_elems(hsize_t chunk, size_t elem, hsize_t min_chunks) {
  const hsize_t per = ((hsize_t)2 << 20) / ((hsize_t)elem * chunk);
  return chunk * (per > min_chunks ? per : min_chunks);
}

/* ---- writing (h5write.c) ---- */

/* An open file being written: by every rank of d collectively (dxpl set up
 * for collective MPI-IO), or by one process alone (d NULL, dxpl H5P_DEFAULT). */
typedef struct writer {
  hid_t file;
  hid_t dxpl;
  pp_dist *d; /* NULL when writing alone */
  int rank, size;
  const char *path; /* the file being replaced, for messages */
  pp_error *err;
} writer;

/* Creates a temporary file for path (pp_file_temp; its name in tmp) and
 * opens it for writing into *w: with d, by every rank of d collectively
 * through MPI-IO (rank 0 makes the name and sends it); with d NULL, or a d
 * without MPI (pp_dist_comm_handle NULL), by this process alone through
 * HDF5's serial (sec2) driver.  On failure nothing is
 * left behind.  Collective over d. */
pp_status ar_create(writer *w, pp_dist *d, const char *path, char tmp[PP_PATH_MAX], pp_error *err);

/* Ends a write begun by ar_create: if st and every rank's status are
 * PP_OK, flushes, closes and commits tmp as w->path (pp_file_commit);
 * otherwise truncates tmp (freeing a full disk), closes and removes it,
 * leaving any old w->path untouched.  Returns the agreed status (the first
 * failure's message on every rank).  Collective over w->d. */
pp_status ar_close(writer *w, pp_status st, const char *tmp);

/* pp_dist_agree over w->d, or st itself when writing alone. */
pp_status ar_agree(writer *w, pp_status st);

/* PP_ERR_IO "<path>: writing failed: <what> (<HDF5's innermost error>)",
 * adding "No space left on device" when the folder's file system is full. */
pp_status ar_fail(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Scalar attributes on loc: a long long, a double, a NUL-terminated string. */
pp_status ar_attr_int(writer *w, hid_t loc, const char *name, long long v);
pp_status ar_attr_double(writer *w, hid_t loc, const char *name, double v);
pp_status ar_attr_string(writer *w, hid_t loc, const char *name, const char *v);

/* Writes a dataset of dims[0] x (ndims == 2 ? dims[1] : 1) elements
 * (contiguous up to 64 KiB, chunked above);
 * this rank writes rows [starts[i], starts[i] + counts[i]) from buf (packed
 * in that order).  Collective over w->d: every rank calls it, with
 * n_ranges = 0 if it writes nothing.  Deflates large datasets if compress. */
pp_status ar_write_ds(writer *w, hid_t loc, const char *name, hid_t type, int ndims, const hsize_t *dims,
                      int n_ranges, const hsize_t *starts, const hsize_t *counts, const void *buf,
                      int compress);

/* Fills buf with elements [first, first + n) of a dataset being written by
 * ar_write_stream (file coordinates, inside the caller's part; in no
 * particular order). */
typedef void (*ar_fill_fn)(void *user, hsize_t first, hsize_t n, void *buf);

/* Writes a 1-D dataset of n elements of type (layout and compression as
 * ar_write_ds); this rank writes elements [start, start +
 * count), which fill produces a piece at a time into a buffer of about
 * 2 MiB, so that no rank holds its part whole.  Each chunk is written by
 * one H5Dwrite call, by all the ranks whose parts share it.  Collective
 * over w->d: every rank calls it (count 0 if it writes nothing), and all
 * make as many H5Dwrite calls, the most any rank needs. */
pp_status ar_write_stream(writer *w, hid_t loc, const char *name, hid_t type, hsize_t n, hsize_t start,
                          hsize_t count, ar_fill_fn fill, void *user);

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

/* Closes group g; returns st, or the failure to close if st was PP_OK. */
pp_status ar_group_close(writer *w, hid_t g, pp_status st);

/* ---- reading (h5read.c) ---- */

/* PP_ERR_INPUT "<path>: not a valid piper archive: <where>: <why>"; where
 * names the dataset or attribute. */
pp_status ar_bad(pp_error *err, const char *path, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* PP_ERR_INPUT "<path>: not a valid piper archive: reading it crashed a
 * child process ..." for a file whose read in a child (pp_isolated_run)
 * died of signal sig, or (sig 0) exited before it returned. */
pp_status ar_crashed(pp_error *err, const char *path, int sig);

/* The first half of every reader's entry point: runs fn(arg), a whole read
 * of path whose result is ignored, in a child process (pp_isolated_run).
 * PP_OK if the child's read returned, well or not (the caller then reads
 * path in this process), or no child could be made; else (PP_ISOLATED_
 * CRASHED) ar_crashed's PP_ERR_INPUT in err (not NULL). */
pp_status ar_probe(int (*fn)(void *arg), void *arg, const char *path, pp_error *err);

/* The innermost message on HDF5's error stack of this thread (e.g. the
 * system error of a failed write), or "no detail from HDF5". */
void ar_h5_reason(char *out, size_t n);

/* HDF5 prints its error stack by default; the entry points of this layer
 * turn that off while they run (ar_quiet) and restore the caller's setting
 * when they return (ar_unquiet), carrying the stack into their messages
 * instead (ar_h5_reason). */
typedef struct ar_quiet_state {
  H5E_auto2_t func;
  void *data;
} ar_quiet_state;
void ar_quiet(ar_quiet_state *q);
void ar_unquiet(const ar_quiet_state *q);

/* Element kinds of datasets and attributes as piper writes them. */
typedef enum ar_kind { AR_U8, AR_I32, AR_I64, AR_F64, AR_STR } ar_kind;

/* A dataset read whole: buf (caller frees) holds n elements of the kind's
 * native type (strings: width bytes each, NUL-padded), rows = dims[0]. */
typedef struct ar_data {
  void *buf;
  size_t n, rows, width;
} ar_data;

/* Reads dataset name after checking everything about it first: present, a
 * dataset of the kind (integers of 1-8 bytes, 4/8-byte floats, fixed-length
 * strings of 1..NAME_WIDTH_MAX bytes, or up to 1 GiB for a scalar), rank 0
 * (a scalar), 1 or 2 as given (rank 2: cols columns), at most max_rows rows, deflate the only filter, chunks of at most
 * 16 MiB all present, and no more bytes declared than the file stores
 * (compressed: at most deflate's ratio).  So a read never allocates more
 * than about 1,100 times the file's size.  PP_ERR_INPUT via ar_bad else. */
pp_status ar_read_ds(hid_t file, const char *path, const char *name, ar_kind kind, int rank, hsize_t cols,
                     hsize_t max_rows, ar_data *out, pp_error *err);

/* A dataset opened and checked as ar_read_ds does, for reading in parts:
 * rows of cols elements (1 for rank 0 and 1), n elements in all, read as
 * the kind's native type of elem bytes; chunk_rows the rows of a chunk
 * (0 if not chunked); filters the number of its filters (each deflate);
 * native 1 if the file stores it as the type it is read as. */
typedef struct ar_ds {
  hid_t ds, sp, mt;
  int rank, filters, native;
  hsize_t rows, cols, n, chunk_rows;
  size_t elem, width;
  const char *path, *name; /* for messages; not owned */
} ar_ds;

/* Opens dataset name with every check of ar_read_ds, reading nothing.
 * On success the caller closes d with ar_close_ds (also harmless on a d
 * that failed to open).  PP_ERR_INPUT via ar_bad else. */
pp_status ar_open_ds(hid_t file, const char *path, const char *name, ar_kind kind, int rank, hsize_t cols,
                     hsize_t max_rows, ar_ds *d, pp_error *err);

/* Reads rows [first, first + count) of d (first + count <= d->rows) into
 * buf (count * d->cols elements); nothing for count 0.  PP_ERR_INPUT
 * naming the dataset if HDF5 cannot read them. */
pp_status ar_read_rows(ar_ds *d, hsize_t first, hsize_t count, void *buf, pp_error *err);
void ar_close_ds(ar_ds *d);

/* A 1-D dataset read a piece at a time (whole chunks, about 2 MiB), so
 * that a reader takes what it needs in order without holding the whole
 * dataset: s->d.rows elements.  Where the file stores the chunks as the
 * native type, deflated or not, they are read raw and inflated here
 * (direct). */
typedef struct ar_seq {
  ar_ds d;
  char *buf;            /* the piece read last */
  hsize_t first, n;     /* its elements */
  hsize_t piece;        /* elements per piece */
  int direct, deflated; /* chunks read raw (H5Dread_chunk); deflate is their filter */
  int probe;            /* read the chunks, decode nothing (takes pass out NULL) */
  char *raw;            /* direct: one stored chunk */
} ar_seq;

/* Opens a 1-D dataset of the kind and at most max_rows elements as
 * ar_open_ds does; with probe, takes only read the file (every HDF5 call a
 * reader makes, in the same order) and must pass out NULL.  The caller
 * closes s with ar_seq_close (also on failure). */
pp_status ar_seq_open(hid_t file, const char *path, const char *name, ar_kind kind, hsize_t max_rows,
                      int probe, ar_seq *s, pp_error *err);

/* Copies elements [first, first + count) (first + count <= s->d.rows) to
 * out (out NULL: only reads them); reads the pieces holding them that are
 * not the last one read, so
 * that taking the elements in order reads each piece once.  PP_ERR_INPUT
 * naming the dataset if HDF5 cannot read them. */
pp_status ar_seq_take(ar_seq *s, hsize_t first, hsize_t count, void *out, pp_error *err);
void ar_seq_close(ar_seq *s);

/* Scalar attributes of obj: an integer within [lo, hi], a float, a
 * fixed-length string shorter than n bytes (copied NUL-terminated into
 * out).  PP_ERR_INPUT via ar_bad naming "<obj> attribute <name>" if missing,
 * of another class or shape, too long or out of range. */
pp_status ar_attr_get_int(hid_t file, const char *path, const char *obj, const char *name, long long lo,
                          long long hi, long long *v, pp_error *err);
pp_status ar_attr_get_double(hid_t file, const char *path, const char *obj, const char *name, double *v,
                             pp_error *err);
pp_status ar_attr_get_string(hid_t file, const char *path, const char *obj, const char *name, char *out,
                             size_t n, pp_error *err);

/* Opens path read-only (< 0 with err set, PP_ERR_INPUT, if missing or not
 * HDF5). */
hid_t ar_open_for_reading(const char *path, pp_error *err);

/* ar_quiet(q), then ar_open_for_reading: on success the caller closes the
 * file and calls ar_unquiet(q); on failure (< 0, err set) the setting is
 * already restored. */
hid_t ar_open_quiet(const char *path, ar_quiet_state *q, pp_error *err);

/* The HDF5 file of an open archive (reader.c; owned by the archive). */
hid_t ar_archive_file(const pp_archive *a);

/* Reads /problem's attributes into *p: devices and microbatches within
 * piper's limits, memory and bandwidth positive and finite, flags 0 or 1,
 * knapsack exact or greedy. */
pp_status ar_read_problem(hid_t file, const char *path, pp_problem *p, pp_error *err);

/* Reads the attributes of a study's row that the tables do not give (study.c):
 * /plan's feasible, tps, devices_used (at most devices) and stages, /run's
 * seconds_before_write, /problem's input_path, into those fields of *s (the
 * others untouched).  PP_ERR_INPUT via ar_bad naming the attribute.  The
 * child that reads an archive first (pp_archive_open) makes these reads
 * too, so that a file that crashes HDF5 there ends the child. */
pp_status ar_summary_attrs(hid_t file, const char *path, int devices, pp_archive_summary *s, pp_error *err);

#endif /* PIPER_ARCHIVE_H5_H */
