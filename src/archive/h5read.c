/*
 * h5read.c - the HDF5 reading helpers shared by the archive, checkpoint and
 * study-table readers (see archive_h5.h).
 *
 * Files are hostile until proven otherwise: every dataset and attribute is
 * checked for its type class, rank, shape and size against what piper
 * writes, and every declared size against the bytes the file really holds,
 * before a single byte is allocated for it or read.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "archive_h5.h"
#include "piper/isolate.h"
#include "piper/pages.h"

/* Bytes a deflated chunk may hold beyond the chunk's own (deflate's worst
 * case adds 5 bytes per 16 KiB block and a few more; HDF5 stores a chunk
 * that does not shrink as it is instead). */
#define CHUNK_SLACK ((size_t)1 << 16)

pp_status ar_bad(pp_error *err, const char *path, const char *where, const char *fmt, ...) {
  char why[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return pp_error_set(err, PP_ERR_INPUT, "%s: not a valid piper archive: %s: %s", path, where, why);
}

pp_status ar_crashed(pp_error *err, const char *path, int sig) {
  char how[128] = "it exited before the read returned, e.g. on a memory error a checker caught";
  if (sig) snprintf(how, sizeof how, "signal %d, %s", sig, strsignal(sig));
  return pp_error_set(err, PP_ERR_INPUT,
                      "%s: not a valid piper archive: reading it crashed a child process (%s): the file is "
                      "damaged in a way the HDF5 library cannot parse safely",
                      path, how);
}

pp_status ar_probe(int (*fn)(void *arg), void *arg, const char *path, pp_error *err) {
  int sig = 0;
  if (pp_isolated_run(fn, arg, &sig) == PP_ISOLATED_CRASHED) return ar_crashed(err, path, sig);
  return PP_OK;
}

/* Walks HDF5's error stack: keeps the description of the innermost error
 * (the one closest to the system call, e.g. "... errno = 28, error message
 * = 'No space left on device' ..."). */
static herr_t keep_innermost(unsigned n, const H5E_error2_t *e, void *user) {
  char *out = user;
  if (n == 0 && e->desc) snprintf(out, 512, "%s", e->desc);
  return 0;
}

void ar_h5_reason(char *out, size_t n) {
  char inner[512] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, inner);
  for (char *c = inner; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' '; /* one-line messages */
  snprintf(out, n, "%s", inner[0] ? inner : "no detail from HDF5");
}

void ar_quiet(ar_quiet_state *q) {
  q->func = NULL;
  q->data = NULL;
  H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void ar_unquiet(const ar_quiet_state *q) { H5Eset_auto2(H5E_DEFAULT, q->func, q->data); }

/* Memory type and element size for a kind (strings: width bytes). */
static hid_t kind_type(ar_kind kind, size_t width) {
  switch (kind) {
  case AR_U8:
    return H5Tcopy(H5T_NATIVE_UCHAR);
  case AR_I32:
    return H5Tcopy(H5T_NATIVE_INT);
  case AR_I64:
    return H5Tcopy(H5T_NATIVE_LLONG);
  case AR_F64:
    return H5Tcopy(H5T_NATIVE_DOUBLE);
  case AR_STR:
    return ar_string_type(width);
  }
  return H5I_INVALID_HID;
}

static const char *kind_name(ar_kind kind) {
  return kind == AR_F64 ? "floating-point" : kind == AR_STR ? "fixed-length string" : "integer";
}

/* Checks a file type against a kind: "" if it fits, else why not. */
static const char *type_mismatch(hid_t ft, ar_kind kind, size_t max_width) {
  H5T_class_t cls = H5Tget_class(ft);
  size_t sz = H5Tget_size(ft);
  if (kind == AR_STR) {
    if (cls != H5T_STRING || H5Tis_variable_str(ft) != 0) return "not a fixed-length string";
    if (sz < 1 || sz > max_width) return "string width out of range";
    return "";
  }
  if (kind == AR_F64) return cls == H5T_FLOAT && (sz == 4 || sz == 8) ? "" : "not a 4- or 8-byte float";
  return cls == H5T_INTEGER && (sz == 1 || sz == 2 || sz == 4 || sz == 8) ? "" : "not an integer";
}

/* The storage checks of a dataset of `logical` bytes (creation properties
 * dcpl): only deflate as a filter; chunks at most 16 MiB; every chunk
 * present (no fill values, which piper never writes); and no more bytes
 * declared than the file holds (uncompressed) or than deflate's largest
 * ratio (about 1032:1) allows. */
static const char *storage_mismatch(hid_t file, hid_t ds, hid_t dcpl, hid_t sp, int rank, const hsize_t *dims,
                                    size_t elem, hsize_t logical) {
  const char *why = "";
  int nf = H5Pget_nfilters(dcpl);
  for (int i = 0; i < nf && !why[0]; i++) {
    unsigned flags = 0;
    size_t nv = 0;
    H5Z_filter_t f = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nv, NULL, 0, NULL, NULL);
    if (f != H5Z_FILTER_DEFLATE) why = "a filter other than deflate";
  }
  H5D_layout_t layout = H5Pget_layout(dcpl);
  hsize_t fsize = 0, storage = H5Dget_storage_size(ds);
  H5Fget_filesize(file, &fsize);
  if (!why[0] && layout == H5D_CHUNKED) {
    hsize_t chunk[H5S_MAX_RANK] = {0};
    int cr = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
    double bytes = (double)elem, expect = 1;
    for (int i = 0; i < cr; i++) bytes *= (double)chunk[i];
    for (int i = 0; i < rank && i < cr; i++)
      expect *= chunk[i] ? ceil((double)dims[i] / (double)chunk[i]) : INFINITY;
    hsize_t have = 0;
    if (cr != rank || bytes > 16.0 * 1024 * 1024)
      why = "chunks of more than 16 MiB";
    else if (logical > 0 && (H5Dget_num_chunks(ds, sp, &have) < 0 || (double)have != expect))
      why = "chunks missing (only fill values)";
  } else if (!why[0] && layout != H5D_CONTIGUOUS && layout != H5D_COMPACT) {
    why = "an unsupported storage layout";
  }
  if (!why[0] && logical > 0) {
    if (storage > fsize)
      why = "more bytes stored than the file holds";
    else if (nf == 0 && storage < logical)
      why = "declares more bytes than the file stores for it";
    else if (nf > 0 && (double)logical > 1100.0 * (double)storage + 65536.0)
      why = "declares more bytes than its compressed storage can hold";
  }
  return why;
}

pp_status ar_open_ds(hid_t file, const char *path, const char *name, ar_kind kind, int rank, hsize_t cols,
                     hsize_t max_rows, ar_ds *d, pp_error *err) {
  memset(d, 0, sizeof *d);
  d->ds = d->sp = d->mt = H5I_INVALID_HID;
  d->path = path;
  d->name = name;
  d->rank = rank;
  hid_t ft = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
  pp_status st = PP_OK;
  const char *why;
  /* negative: HDF5 could not parse a group on the way */
  const htri_t there = H5Lexists(file, name, H5P_DEFAULT);
  if (there <= 0 || (d->ds = H5Dopen2(file, name, H5P_DEFAULT)) < 0) {
    st = ar_bad(err, path, name, there == 0 ? "missing" : "unreadable (HDF5 cannot open it as a dataset)");
    goto done;
  }
  ft = H5Dget_type(d->ds);
  d->sp = H5Dget_space(d->ds);
  if (ft < 0 || d->sp < 0) {
    st = ar_bad(err, path, name, "unreadable type or shape");
    goto done;
  }
  if ((why = type_mismatch(ft, kind, rank == 0 ? ((size_t)1 << 30) : NAME_WIDTH_MAX))[0]) {
    st = ar_bad(err, path, name, "expected %s data, found %s", kind_name(kind), why);
    goto done;
  }
  hsize_t dims[H5S_MAX_RANK] = {1};
  H5S_class_t sc = H5Sget_simple_extent_type(d->sp);
  int nd = sc == H5S_SIMPLE ? H5Sget_simple_extent_ndims(d->sp) : sc == H5S_SCALAR ? 0 : -1;
  if (nd != rank) {
    st = rank == 0 ? ar_bad(err, path, name, "expected a single value")
                   : ar_bad(err, path, name, "expected a %d-dimensional array", rank);
    goto done;
  }
  if (rank > 0) H5Sget_simple_extent_dims(d->sp, dims, NULL);
  if (rank == 2 && dims[1] != cols) {
    st = ar_bad(err, path, name, "expected %llu columns, found %llu", (unsigned long long)cols,
                (unsigned long long)dims[1]);
    goto done;
  }
  if (dims[0] > max_rows) {
    st = ar_bad(err, path, name, "%llu rows, more than the %llu possible", (unsigned long long)dims[0],
                (unsigned long long)max_rows);
    goto done;
  }
  size_t fsz = H5Tget_size(ft);
  d->width = kind == AR_STR ? fsz : 0;
  d->cols = rank == 2 ? dims[1] : 1;
  /* rows x cols (dims[1] <= cols was checked, rows <= max_rows) */
  hsize_t npoints = dims[0] * d->cols;
  if ((dcpl = H5Dget_create_plist(d->ds)) < 0) {
    st = ar_bad(err, path, name, "unreadable creation properties");
    goto done;
  }
  if ((why = storage_mismatch(file, d->ds, dcpl, d->sp, rank, dims, fsz, npoints * fsz))[0]) {
    st = ar_bad(err, path, name, "%s", why);
    goto done;
  }
  d->mt = kind_type(kind, d->width);
  d->elem = d->mt >= 0 ? H5Tget_size(d->mt) : 0;
  if (d->mt < 0 || (npoints > 0 && npoints > (hsize_t)(SIZE_MAX / 2) / d->elem)) {
    st = ar_bad(err, path, name, "too large");
    goto done;
  }
  d->rows = dims[0];
  d->n = npoints;
  hsize_t chunk[H5S_MAX_RANK] = {0};
  if (rank > 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, rank, chunk) == rank)
    d->chunk_rows = chunk[0];
  d->filters = H5Pget_nfilters(dcpl); /* (each of them deflate: storage_mismatch) */
  d->native = H5Tequal(ft, d->mt) > 0;
done:
  if (dcpl >= 0) H5Pclose(dcpl);
  if (ft >= 0) H5Tclose(ft);
  if (st) ar_close_ds(d);
  return st;
}

pp_status ar_read_rows(ar_ds *d, hsize_t first, hsize_t count, void *buf, pp_error *err) {
  if (count == 0) return PP_OK;
  hid_t ms = H5I_INVALID_HID, fs = H5S_ALL;
  herr_t r = -1;
  if (d->rank == 0 || (first == 0 && count == d->rows)) {
    r = H5Dread(d->ds, d->mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  } else {
    hsize_t start[2] = {first, 0}, cnt[2] = {count, d->cols}, m = count * d->cols;
    fs = H5Scopy(d->sp);
    ms = H5Screate_simple(1, &m, NULL);
    if (fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0)
      r = H5Dread(d->ds, d->mt, ms, fs, H5P_DEFAULT, buf);
    if (fs >= 0) H5Sclose(fs);
    if (ms >= 0) H5Sclose(ms);
  }
  if (r >= 0) return PP_OK;
  char why[512];
  ar_h5_reason(why, sizeof why);
  return ar_bad(err, d->path, d->name, "cannot be read (%s)", why);
}

void ar_close_ds(ar_ds *d) {
  if (d->mt >= 0) H5Tclose(d->mt);
  if (d->sp >= 0) H5Sclose(d->sp);
  if (d->ds >= 0) H5Dclose(d->ds);
  d->ds = d->sp = d->mt = H5I_INVALID_HID;
}

pp_status ar_read_ds(hid_t file, const char *path, const char *name, ar_kind kind, int rank, hsize_t cols,
                     hsize_t max_rows, ar_data *out, pp_error *err) {
  memset(out, 0, sizeof *out);
  ar_ds d;
  pp_status st = ar_open_ds(file, path, name, kind, rank, cols, max_rows, &d, err);
  if (st) return st;
  out->buf = pp_xcalloc((size_t)d.n + 1, d.elem);
  out->rows = (size_t)d.rows;
  out->n = (size_t)d.n;
  out->width = d.width;
  if ((st = ar_read_rows(&d, 0, d.rows, out->buf, err))) {
    free(out->buf);
    memset(out, 0, sizeof *out);
  }
  ar_close_ds(&d);
  return st;
}

pp_status ar_seq_open(hid_t file, const char *path, const char *name, ar_kind kind, hsize_t max_rows,
                      int probe, ar_seq *s, pp_error *err) {
  memset(s, 0, sizeof *s);
  pp_status st = ar_open_ds(file, path, name, kind, 1, 0, max_rows, &s->d, err);
  if (st) return st;
  s->probe = probe;
  /* chunks read raw and inflated here: chunked, at most the deflate
   * filter, stored as the native type they are read as */
  s->direct = s->d.chunk_rows > 0 && s->d.native && s->d.filters <= 1;
  s->deflated = s->d.filters == 1;
  /* whole chunks, about 2 MiB: each chunk is read and inflated once */
  const hsize_t unit = s->d.chunk_rows ? s->d.chunk_rows : 1;
  s->piece = ar_piece_elems(unit, s->d.elem, 1);
  if (!s->direct && s->piece > s->d.rows) s->piece = s->d.rows ? s->d.rows : 1;
  if (s->direct && s->piece > s->d.rows) s->piece = (s->d.rows + unit - 1) / unit * unit;
  s->buf = pp_xmalloc_huge((size_t)(s->piece ? s->piece : 1) * s->d.elem);
  if (s->direct) s->raw = pp_xmalloc((size_t)unit * s->d.elem + CHUNK_SLACK);
  return PP_OK;
}

/* Reads the chunks of elements [first, first + n) (first on a chunk
 * boundary) into s->buf, whole, inflating the deflated ones here (zlib)
 * instead of through HDF5's filter, which grows its output a doubling at a
 * time; a probe reads them and inflates nothing. */
static pp_status read_direct(ar_seq *s, hsize_t first, hsize_t n, pp_error *err) {
  const hsize_t unit = s->d.chunk_rows;
  const size_t bytes = (size_t)unit * s->d.elem;
  for (hsize_t c = first; c < first + n; c += unit) {
    hsize_t off[1] = {c}, stored = 0;
    uint32_t mask = 0;
    const int raw = !s->deflated;
    if (H5Dget_chunk_storage_size(s->d.ds, off, &stored) < 0 || stored > bytes + CHUNK_SLACK ||
        H5Dread_chunk(s->d.ds, H5P_DEFAULT, off, &mask, s->raw) < 0) {
      char why[512];
      ar_h5_reason(why, sizeof why);
      return ar_bad(err, s->d.path, s->d.name, "the chunk at element %llu cannot be read (%s)",
                    (unsigned long long)c, stored > bytes + CHUNK_SLACK ? "larger than a chunk can be" : why);
    }
    if (s->probe) continue;
    char *to = s->buf + (size_t)(c - first) * s->d.elem;
    uLongf got = (uLongf)bytes;
    if (raw || (mask & 1)) { /* stored as it is (deflate skipped for this chunk) */
      if (stored != bytes)
        return ar_bad(err, s->d.path, s->d.name, "the chunk at element %llu holds %llu bytes, not %zu",
                      (unsigned long long)c, (unsigned long long)stored, bytes);
      memcpy(to, s->raw, bytes);
    } else if (uncompress((Bytef *)to, &got, (const Bytef *)s->raw, (uLong)stored) != Z_OK || got != bytes) {
      return ar_bad(err, s->d.path, s->d.name, "the chunk at element %llu does not inflate to %zu bytes",
                    (unsigned long long)c, bytes);
    }
  }
  return PP_OK;
}

pp_status ar_seq_take(ar_seq *s, hsize_t first, hsize_t count, void *out, pp_error *err) {
  char *o = out;
  while (count > 0) {
    if (first < s->first || first >= s->first + s->n) {
      s->first = first / s->piece * s->piece;
      s->n = s->d.rows - s->first < s->piece ? s->d.rows - s->first : s->piece;
      pp_status st =
          s->direct ? read_direct(s, s->first, s->n, err) : ar_read_rows(&s->d, s->first, s->n, s->buf, err);
      if (st) {
        s->n = 0;
        return st;
      }
    }
    hsize_t m = s->first + s->n - first < count ? s->first + s->n - first : count;
    if (o) {
      memcpy(o, s->buf + (size_t)(first - s->first) * s->d.elem, (size_t)m * s->d.elem);
      o += (size_t)m * s->d.elem;
    }
    first += m;
    count -= m;
  }
  return PP_OK;
}

void ar_seq_close(ar_seq *s) {
  ar_close_ds(&s->d);
  free(s->buf);
  free(s->raw);
  s->buf = s->raw = NULL;
}

/* "OBJ attribute NAME", for messages (a temporary: valid until the end of
 * the full expression that uses it). */
typedef struct attr_where {
  char s[300];
} attr_where;

static attr_where where_of(const char *obj, const char *name) {
  attr_where w;
  snprintf(w.s, sizeof w.s, "%s attribute %s", obj, name);
  return w;
}

/* Whether HDF5 says obj has no attribute name.  An optional attribute is
 * taken as absent only then: when HDF5 cannot tell (a header it cannot
 * parse), the reader goes on to read it and reports it unreadable. */
static int attr_absent(hid_t file, const char *obj, const char *name) {
  return H5Aexists_by_name(file, obj, name, H5P_DEFAULT) == 0;
}

/* Opens attribute name of obj and checks it is a scalar of the kind. */
static hid_t open_attr(hid_t file, const char *path, const char *obj, const char *name, ar_kind kind,
                       size_t max_width, size_t *width, pp_error *err) {
  const attr_where w = where_of(obj, name);
  const char *where = w.s;
  const htri_t obj_there = strcmp(obj, "/") == 0 ? 1 : H5Lexists(file, obj, H5P_DEFAULT);
  if (obj_there <= 0) {
    ar_bad(err, path, where, obj_there == 0 ? "missing" : "unreadable (HDF5 cannot parse its group)");
    return H5I_INVALID_HID;
  }
  /* negative: HDF5 could not parse the messages of obj's header */
  const htri_t there = H5Aexists_by_name(file, obj, name, H5P_DEFAULT);
  hid_t a = there > 0 ? H5Aopen_by_name(file, obj, name, H5P_DEFAULT, H5P_DEFAULT) : H5I_INVALID_HID;
  if (a < 0) {
    ar_bad(err, path, where, there == 0 ? "missing" : "unreadable (HDF5 cannot parse it)");
    return H5I_INVALID_HID;
  }
  hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
  const char *why = ft < 0 || sp < 0 ? "unreadable" : type_mismatch(ft, kind, max_width);
  if (!why[0] && H5Sget_simple_extent_type(sp) != H5S_SCALAR) why = "not a single value";
  if (width) *width = ft >= 0 ? H5Tget_size(ft) : 0;
  if (ft >= 0) H5Tclose(ft);
  if (sp >= 0) H5Sclose(sp);
  if (why[0]) {
    ar_bad(err, path, where, "expected a %s, found %s", kind_name(kind), why);
    H5Aclose(a);
    return H5I_INVALID_HID;
  }
  return a;
}

pp_status ar_attr_get_int(hid_t file, const char *path, const char *obj, const char *name, long long lo,
                          long long hi, long long *v, pp_error *err) {
  *v = 0;
  hid_t a = open_attr(file, path, obj, name, AR_I64, 0, NULL, err);
  if (a < 0) return PP_ERR_INPUT;
  int rc = H5Aread(a, H5T_NATIVE_LLONG, v);
  H5Aclose(a);
  if (rc < 0) return ar_bad(err, path, where_of(obj, name).s, "cannot be read");
  if (*v < lo || *v > hi)
    return ar_bad(err, path, where_of(obj, name).s, "%lld is outside %lld..%lld", *v, lo, hi);
  return PP_OK;
}

pp_status ar_attr_get_double(hid_t file, const char *path, const char *obj, const char *name, double *v,
                             pp_error *err) {
  *v = 0;
  hid_t a = open_attr(file, path, obj, name, AR_F64, 0, NULL, err);
  if (a < 0) return PP_ERR_INPUT;
  int rc = H5Aread(a, H5T_NATIVE_DOUBLE, v);
  H5Aclose(a);
  if (rc < 0) return ar_bad(err, path, where_of(obj, name).s, "cannot be read");
  return PP_OK;
}

pp_status ar_attr_get_string(hid_t file, const char *path, const char *obj, const char *name, char *out,
                             size_t n, pp_error *err) {
  out[0] = '\0';
  size_t width = 0;
  hid_t a = open_attr(file, path, obj, name, AR_STR, n - 1, &width, err);
  if (a < 0) return PP_ERR_INPUT;
  hid_t mt = ar_string_type(width);
  char *buf = pp_xcalloc(width + 1, 1);
  int rc = mt >= 0 ? H5Aread(a, mt, buf) : -1;
  if (rc >= 0) snprintf(out, n, "%s", buf);
  free(buf);
  if (mt >= 0) H5Tclose(mt);
  H5Aclose(a);
  if (rc < 0) return ar_bad(err, path, where_of(obj, name).s, "cannot be read");
  return PP_OK;
}

hid_t ar_open_for_reading(const char *path, pp_error *err) {
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
  if (file < 0) {
    char why[512];
    ar_h5_reason(why, sizeof why);
    pp_error_set(err, PP_ERR_INPUT, "%s: cannot open as HDF5 (truncated or damaged? %s)", path, why);
  }
  return file;
}

hid_t ar_open_quiet(const char *path, ar_quiet_state *q, pp_error *err) {
  ar_quiet(q);
  hid_t file = ar_open_for_reading(path, err);
  if (file < 0) ar_unquiet(q);
  return file;
}

pp_status ar_read_problem(hid_t file, const char *path, pp_problem *p, pp_error *err) {
  long long dev, mb, ndp, ntp, nrc;
  char knap[32];
  pp_status st;
  memset(p, 0, sizeof *p);
  const char *g = "/problem";
  if ((st = ar_attr_get_int(file, path, g, "devices", 1, PP_MAX_DEVICES, &dev, err)) ||
      (st = ar_attr_get_int(file, path, g, "microbatches", 1, PP_MAX_MICROBATCHES, &mb, err)) ||
      (st = ar_attr_get_double(file, path, g, "memory", &p->memory, err)) ||
      (st = ar_attr_get_double(file, path, g, "bandwidth", &p->bandwidth, err)) ||
      (st = ar_attr_get_int(file, path, g, "no_dp", 0, 1, &ndp, err)) ||
      (st = ar_attr_get_int(file, path, g, "no_tp", 0, 1, &ntp, err)) ||
      (st = ar_attr_get_int(file, path, g, "no_recompute", 0, 1, &nrc, err)) ||
      (st = ar_attr_get_string(file, path, g, "knapsack", knap, sizeof knap, err)))
    return st;
  if (!(p->memory > 0) || !isfinite(p->memory))
    return ar_bad(err, path, "/problem attribute memory", "%g is not a positive number of bytes", p->memory);
  if (!(p->bandwidth > 0) || !isfinite(p->bandwidth))
    return ar_bad(err, path, "/problem attribute bandwidth", "%g is not a positive rate", p->bandwidth);
  if (strcmp(knap, "exact") != 0 && strcmp(knap, "greedy") != 0)
    return ar_bad(err, path, "/problem attribute knapsack", "'%s' is neither exact nor greedy", knap);
  char planner[32] = "piper"; /* absent in archives older than the attribute */
  if (!attr_absent(file, g, "planner") &&
      (st = ar_attr_get_string(file, path, g, "planner", planner, sizeof planner, err)))
    return st;
  if (strcmp(planner, "piper") != 0 && strcmp(planner, "equi") != 0)
    return ar_bad(err, path, "/problem attribute planner", "'%s' is neither piper nor equi", planner);
  p->planner = strcmp(planner, "equi") == 0 ? PP_PLANNER_EQUI : PP_PLANNER_PIPER;
  char sched[32] = "2bw"; /* schedule, uniform, virtual_stages: absent in older archives (2bw) */
  long long uni = 0, vs = 1;
  if (!attr_absent(file, g, "schedule") &&
      (st = ar_attr_get_string(file, path, g, "schedule", sched, sizeof sched, err)))
    return st;
  if (pp_schedule_from_name(sched, &p->schedule) != 0)
    return ar_bad(err, path, "/problem attribute schedule", "'%s' is not 2bw, 1f1b or gpipe", sched);
  if ((!attr_absent(file, g, "uniform") &&
       (st = ar_attr_get_int(file, path, g, "uniform", 0, 1, &uni, err))) ||
      (!attr_absent(file, g, "virtual_stages") &&
       (st = ar_attr_get_int(file, path, g, "virtual_stages", 1, 1024, &vs, err))))
    return st;
  p->uniform = (int)uni;
  p->virtual_stages = (int)vs;
  p->devices = (int)dev;
  p->microbatches = (int)mb;
  p->no_dp = ndp != 0;
  p->no_tp = ntp != 0;
  p->no_recompute = nrc != 0;
  p->knapsack = strcmp(knap, "exact") == 0 ? PP_KNAPSACK_EXACT : PP_KNAPSACK_GREEDY;
  /* optional: ZeRO stage and two-level network (absent = the Piper model) */
  long long zero = 0, gpn = 0;
  if (!attr_absent(file, g, "zero") && (st = ar_attr_get_int(file, path, g, "zero", 0, 3, &zero, err)))
    return st;
  if (!attr_absent(file, g, "devices_per_node")) {
    if ((st = ar_attr_get_int(file, path, g, "devices_per_node", 1, PP_MAX_DEVICES, &gpn, err)) ||
        (st = ar_attr_get_double(file, path, g, "intra_bandwidth", &p->intra_bandwidth, err)))
      return st;
    if (!(p->intra_bandwidth > 0) || !isfinite(p->intra_bandwidth))
      return ar_bad(err, path, "/problem attribute intra_bandwidth", "%g is not a positive rate",
                    p->intra_bandwidth);
  }
  p->zero = (int)zero;
  p->devices_per_node = (int)gpn;
  return PP_OK;
}
