/*
 * checkpoint.c - the checkpoint file: the tables of the layers done so far
 * and the run identity, written and read by rank 0 alone (see
 * include/piper/archive.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdint.h>

#include "archive_h5.h"

/* ---- checkpoints ---- */

pp_status pp_checkpoint_write(const char *path, const char *identity, const pp_downsets *ds, const pp_dp *dp,
                              int layers_done, pp_error *err) {
  pp_pack tables;
  pp_pack_init(&tables);
  int end = ds->layer_start[layers_done + 1];
  for (int id = 1; id < end; id++) pp_stairs_pack(pp_dp_table(dp, id), id, &tables);
  size_t len;
  char *buf = pp_pack_take(&tables, &len);
  char tmp[PP_PATH_MAX];
  ar_quiet_state q;
  ar_quiet(&q);
  writer w;
  pp_status st = ar_create(&w, NULL, path, tmp, err);
  if (!st) {
    hsize_t dims[1] = {(hsize_t)len};
    if ((st = ar_attr_string(&w, w.file, "identity", identity)) ||
        (st = ar_attr_int(&w, w.file, "layers_done", layers_done)) ||
        (st = ar_attr_int(&w, w.file, "downsets", ds->count)) ||
        (st = ar_write_small(&w, w.file, "tables", H5T_NATIVE_UCHAR, 1, dims, buf))) {}
    st = ar_close(&w, st, tmp);
  }
  ar_unquiet(&q);
  free(buf);
  return st;
}

/* "not a valid piper archive" in a message about a checkpoint. */
static pp_status as_checkpoint(pp_status st, pp_error *err) {
  const char *a = "not a valid piper archive";
  char *at = err ? strstr(err->msg, a) : NULL;
  if (at) {
    char rest[PP_ERROR_MSG_MAX];
    snprintf(rest, sizeof rest, "%s", at + strlen(a));
    snprintf(at, sizeof err->msg - (size_t)(at - err->msg), "not a valid piper checkpoint%s", rest);
  }
  return st;
}

/* Checks the packed tables: downsets 1 .. end - 1 each exactly once, each a
 * complete valid table for K of the kind dp keeps (pp_dp_table_valid: 2bw's
 * staircases, or the Pareto rows of the synchronous schedules), peeking at
 * each header before the table is unpacked, so that no count read from the
 * file is trusted. */
static pp_status check_tables(const char *path, const char *buf, size_t len, int end, int K, const pp_dp *dp,
                              pp_error *err) {
  const double row_max = pp_dp_row_steps_max(dp);
  char *seen = pp_xcalloc((size_t)end + 1, 1);
  pp_unpack r;
  pp_unpack_init(&r, buf, len);
  int got = 0;
  pp_status st = PP_OK;
  while (pp_unpack_left(&r) > 0 && !st) {
    const size_t pos = r.pos;
    int32_t head[4];
    int64_t steps = 0;
    if (len - pos < sizeof head + sizeof steps) {
      st = ar_bad(err, path, "/tables", "ends inside a table header");
      break;
    }
    memcpy(head, buf + pos, sizeof head);
    memcpy(&steps, buf + pos + sizeof head, sizeof steps);
    if (head[0] < 1 || head[0] >= end || head[1] != 0 || head[2] != K || head[3] < 1 || head[3] > K + 1 ||
        steps < head[3] || steps > INT_MAX || (double)steps > (double)head[3] * row_max) {
      st = ar_bad(err, path, "/tables", "table %d: header out of range (downset %d, k %d..%d, %d rows)", got,
                  head[0], head[1], head[2], head[3]);
      break;
    }
    int id;
    const char *why = NULL;
    pp_stairs *t = pp_stairs_unpack(&r, &id);
    if (!t || !pp_dp_table_valid(dp, id, t, &why))
      st = ar_bad(err, path, "/tables", "table %d (downset %d): %s", got, head[0],
                  t ? why : "truncated or malformed");
    else if (seen[id])
      st = ar_bad(err, path, "/tables", "downset %d appears twice", id);
    else
      seen[id] = 1;
    got++;
    pp_stairs_free(t);
  }
  if (!st && got != end - 1)
    st = ar_bad(err, path, "/tables", "holds %d tables, the layers done need %d", got, end - 1);
  free(seen);
  return st;
}

static pp_status read_here(const char *path, const char *identity, const pp_downsets *ds, const pp_problem *p,
                           const pp_dp *dp, int *layers_done, char **buf, size_t *len, pp_error *err) {
  *buf = NULL;
  *len = 0;
  *layers_done = 0;
  ar_quiet_state q;
  hid_t file = ar_open_quiet(path, &q, err);
  if (file < 0) return PP_ERR_INPUT;
  char ident[128];
  long long layers = 0, count = 0;
  ar_data tables = {0};
  pp_status st;
  if ((st = ar_attr_get_string(file, path, "/", "identity", ident, sizeof ident, err))) goto done;
  if (strcmp(ident, identity) != 0) {
    st = pp_error_set(
        err, PP_ERR_INPUT,
        "%s: the checkpoint belongs to another input or other parameters (identity %.12s..., this "
        "run %.12s...); remove it or run without --resume",
        path, ident, identity);
    goto done;
  }
  if ((st = ar_attr_get_int(file, path, "/", "layers_done", 0, ds->n_layers - 1, &layers, err)) ||
      (st = ar_attr_get_int(file, path, "/", "downsets", ds->count, ds->count, &count, err)) ||
      (st = ar_read_ds(file, path, "/tables", AR_U8, 1, 0, (hsize_t)1 << 40, &tables, err)))
    goto done;
  st = check_tables(path, tables.buf, tables.n, ds->layer_start[layers + 1], p->devices, dp, err);
  if (!st) {
    *buf = tables.buf;
    *len = tables.n;
    *layers_done = (int)layers;
    tables.buf = NULL;
  }
done:
  free(tables.buf);
  H5Fclose(file);
  ar_unquiet(&q);
  return as_checkpoint(st, err);
}

/* The arguments of read_here, for its run in a child process. */
typedef struct probe_args {
  const char *path, *identity;
  const pp_downsets *ds;
  const pp_problem *p;
  const pp_dp *dp;
} probe_args;

static int read_probe(void *user) {
  const probe_args *a = user;
  int layers;
  char *buf = NULL;
  size_t len;
  pp_error e = {0};
  pp_status st = read_here(a->path, a->identity, a->ds, a->p, a->dp, &layers, &buf, &len, &e);
  free(buf);
  return st != PP_OK;
}

pp_status pp_checkpoint_read(const char *path, const char *identity, const pp_downsets *ds,
                             const pp_problem *p, const pp_dp *dp, int *layers_done, char **buf, size_t *len,
                             pp_error *err) {
  *buf = NULL;
  *len = 0;
  *layers_done = 0;
  probe_args a = {path, identity, ds, p, dp};
  pp_status st = ar_probe(read_probe, &a, path, err);
  if (st) return as_checkpoint(st, err);
  return read_here(path, identity, ds, p, dp, layers_done, buf, len, err);
}
