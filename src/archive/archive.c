/*
 * archive.c - the HDF5 archive and checkpoints (see include/piper/archive.h).
 *
 * The only file that includes <hdf5.h>.  The archive is written with
 * parallel HDF5 over the run's communicator: every rank creates the same
 * objects (collective metadata) and writes, collectively, the hyperslabs it
 * owns: each rank the DP tables it computed, rank 0 everything small.  The
 * file is written under a temporary name and renamed when complete.
 * Each function has one exit label that releases every handle it opened.
 */
#define _POSIX_C_SOURCE 200809L
#include "piper/archive.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "piper/bitset.h"
#include "piper/progress.h"
#include "piper/sha256.h"

#define NAME_WIDTH_MAX 4096

/* ---- identity ---- */

void pp_archive_identity(const pp_graph *g, const pp_problem *p, char hex[65]) {
  pp_sha256 c;
  pp_sha256_init(&c);
  pp_sha256_update(&c, g->source_text, g->source_len);
  char params[512];
  snprintf(params, sizeof params,
           "\n--piper-parameters devices=%d memory=%.17g microbatches=%d bandwidth=%.17g "
           "no_dp=%d no_tp=%d no_recompute=%d knapsack=%d",
           p->devices, p->memory, p->microbatches, p->bandwidth, p->no_dp, p->no_tp, p->no_recompute,
           (int)p->knapsack);
  pp_sha256_update(&c, params, strlen(params));
  pp_sha256_final_hex(&c, hex);
}

static void sha_hex(const char *data, size_t n, char hex[65]) {
  pp_sha256 c;
  pp_sha256_init(&c);
  pp_sha256_update(&c, data, n);
  pp_sha256_final_hex(&c, hex);
}

/* ---- writing ---- */

typedef struct writer {
  hid_t file;
  hid_t dxpl;
  pp_dist *d; /* NULL when writing alone */
  int rank, size;
  pp_error *err;
} writer;

static pp_status h5fail(pp_error *err, const char *what) {
  return pp_error_set(err, PP_ERR_IO, "HDF5: %s failed", what);
}

static pp_status attr_write(writer *w, hid_t loc, const char *name, hid_t type, const void *value) {
  hid_t space = H5Screate(H5S_SCALAR), attr = H5I_INVALID_HID;
  pp_status st = PP_OK;
  if (space < 0) {
    st = h5fail(w->err, "H5Screate");
    goto done;
  }
  attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (attr < 0 || H5Awrite(attr, type, value) < 0)
    st = pp_error_set(w->err, PP_ERR_IO, "HDF5: writing attribute %s", name);
done:
  if (attr >= 0) H5Aclose(attr);
  if (space >= 0) H5Sclose(space);
  return st;
}

static pp_status attr_int(writer *w, hid_t loc, const char *name, long long v) {
  return attr_write(w, loc, name, H5T_NATIVE_LLONG, &v);
}

static pp_status attr_double(writer *w, hid_t loc, const char *name, double v) {
  return attr_write(w, loc, name, H5T_NATIVE_DOUBLE, &v);
}

static pp_status attr_string(writer *w, hid_t loc, const char *name, const char *v) {
  hid_t type = H5Tcopy(H5T_C_S1);
  if (type < 0) return h5fail(w->err, "H5Tcopy");
  H5Tset_size(type, strlen(v) + 1);
  H5Tset_strpad(type, H5T_STR_NULLTERM);
  pp_status st = attr_write(w, loc, name, type, v);
  H5Tclose(type);
  return st;
}

/* Writes a dataset of dims[0] x (ndims == 2 ? dims[1] : 1) elements; this
 * rank writes rows [starts[i], starts[i] + counts[i]) from buf (packed in
 * that order).  Collective: every rank calls it, with n_ranges = 0 if it
 * writes nothing. */
static pp_status write_ds(writer *w, hid_t loc, const char *name, hid_t type, int ndims, const hsize_t *dims,
                          int n_ranges, const hsize_t *starts, const hsize_t *counts, const void *buf,
                          int compress) {
  hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, ds = H5I_INVALID_HID;
  pp_status st = PP_OK;
  hsize_t maxdims[2] = {dims[0], ndims == 2 ? dims[1] : 1};
  if (dims[0] == 0) maxdims[0] = H5S_UNLIMITED;
  fspace = H5Screate_simple(ndims, dims, maxdims);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (fspace < 0 || dcpl < 0) {
    st = h5fail(w->err, "creating a dataspace");
    goto done;
  }
  size_t row_bytes = H5Tget_size(type) * (ndims == 2 ? (size_t)dims[1] : 1);
  hsize_t chunk[2] = {dims[0], ndims == 2 ? dims[1] : 1};
  hsize_t per_chunk = row_bytes ? (hsize_t)(1u << 20) / row_bytes : 1;
  if (per_chunk < 1) per_chunk = 1;
  if (chunk[0] > per_chunk) chunk[0] = per_chunk;
  if (chunk[0] == 0) chunk[0] = 1;
  if (ndims == 2 && chunk[1] == 0) chunk[1] = 1;
  if (H5Pset_chunk(dcpl, ndims, chunk) < 0) {
    st = h5fail(w->err, "H5Pset_chunk");
    goto done;
  }
  /* every element is written: no fill values first */
  if (H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0) {
    st = h5fail(w->err, "H5Pset_fill_time");
    goto done;
  }
  if (compress && dims[0] * row_bytes > 65536 && (H5Pset_deflate(dcpl, 1) < 0)) {
    st = h5fail(w->err, "setting compression");
    goto done;
  }
  ds = H5Dcreate2(loc, name, type, fspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (ds < 0) {
    st = pp_error_set(w->err, PP_ERR_IO, "HDF5: creating dataset %s", name);
    goto done;
  }
  hsize_t total = 0;
  if (H5Sselect_none(fspace) < 0) {
    st = h5fail(w->err, "H5Sselect_none");
    goto done;
  }
  for (int i = 0; i < n_ranges; i++) {
    if (counts[i] == 0) continue;
    hsize_t start[2] = {starts[i], 0}, count[2] = {counts[i], ndims == 2 ? dims[1] : 1};
    if (H5Sselect_hyperslab(fspace, H5S_SELECT_OR, start, NULL, count, NULL) < 0) {
      st = h5fail(w->err, "selecting a hyperslab");
      goto done;
    }
    total += counts[i] * (ndims == 2 ? dims[1] : 1);
  }
  hsize_t mdims = total;
  mspace = H5Screate_simple(1, &mdims, NULL);
  if (mspace < 0) {
    st = h5fail(w->err, "creating a memory dataspace");
    goto done;
  }
  if (total == 0) H5Sselect_none(mspace);
  if (H5Dwrite(ds, type, mspace, fspace, w->dxpl, total ? buf : NULL) < 0)
    st = pp_error_set(w->err, PP_ERR_IO, "HDF5: writing dataset %s", name);
done:
  if (ds >= 0) H5Dclose(ds);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (mspace >= 0) H5Sclose(mspace);
  if (fspace >= 0) H5Sclose(fspace);
  return st;
}

/* A dataset written whole by rank 0. */
static pp_status write_small(writer *w, hid_t loc, const char *name, hid_t type, int ndims,
                             const hsize_t *dims, const void *buf) {
  hsize_t start = 0, count = dims[0];
  return write_ds(w, loc, name, type, ndims, dims, w->rank == 0 ? 1 : 0, &start, &count, buf, 1);
}

static hid_t string_type(size_t width) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t >= 0) {
    H5Tset_size(t, width ? width : 1);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
  }
  return t;
}

/* Fixed-width string dataset from n strings (NULL counts as ""). */
static pp_status write_strings(writer *w, hid_t loc, const char *name, const char *const *strs, int n) {
  size_t width = 1;
  for (int i = 0; i < n; i++)
    if (strs[i] && strlen(strs[i]) > width) width = strlen(strs[i]);
  if (width > NAME_WIDTH_MAX) width = NAME_WIDTH_MAX;
  char *buf = pp_xcalloc((size_t)n + 1, width);
  for (int i = 0; i < n; i++)
    if (strs[i]) strncpy(buf + (size_t)i * width, strs[i], width);
  hid_t t = string_type(width);
  hsize_t dims[1] = {(hsize_t)n};
  pp_status st = t < 0 ? h5fail(w->err, "H5Tcopy") : write_small(w, loc, name, t, 1, dims, buf);
  if (t >= 0) H5Tclose(t);
  free(buf);
  return st;
}

static hid_t group(writer *w, const char *name) {
  hid_t g = H5Gcreate2(w->file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) pp_error_set(w->err, PP_ERR_IO, "HDF5: creating group %s", name);
  return g;
}

static pp_status write_problem(writer *w, const pp_archive_content *c) {
  const pp_problem *p = c->p;
  const pp_graph *g = c->g;
  hid_t grp = group(w, "/problem");
  if (grp < 0) return PP_ERR_IO;
  char sha[65], ident[65];
  sha_hex(g->source_text, g->source_len, sha);
  pp_archive_identity(g, p, ident);
  pp_status st = PP_OK;
  if ((st = attr_int(w, grp, "devices", p->devices)) || (st = attr_double(w, grp, "memory", p->memory)) ||
      (st = attr_double(w, grp, "bandwidth", p->bandwidth)) ||
      (st = attr_int(w, grp, "microbatches", p->microbatches)) ||
      (st = attr_int(w, grp, "no_dp", p->no_dp)) || (st = attr_int(w, grp, "no_tp", p->no_tp)) ||
      (st = attr_int(w, grp, "no_recompute", p->no_recompute)) ||
      (st = attr_string(w, grp, "knapsack", p->knapsack == PP_KNAPSACK_EXACT ? "exact" : "greedy")) ||
      (st = attr_string(w, grp, "input_path", g->source_path ? g->source_path : "")) ||
      (st = attr_string(w, grp, "input_sha256", sha)) || (st = attr_string(w, grp, "identity", ident)))
    goto done;
  {
    hid_t t = string_type(g->source_len + 1);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t ds = H5Dcreate2(grp, "input_json", t, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (ds < 0) {
      st = h5fail(w->err, "creating input_json");
    } else {
      hid_t ms = H5Screate(H5S_SCALAR);
      if (w->rank != 0) {
        H5Sselect_none(ms);
        H5Sselect_none(space);
      }
      char *buf = pp_xcalloc(g->source_len + 2, 1);
      memcpy(buf, g->source_text, g->source_len);
      if (H5Dwrite(ds, t, ms, space, w->dxpl, buf) < 0) st = h5fail(w->err, "writing input_json");
      free(buf);
      H5Sclose(ms);
      H5Dclose(ds);
    }
    H5Sclose(space);
    H5Tclose(t);
  }
done:
  H5Gclose(grp);
  return st;
}

static pp_status write_graph(writer *w, const pp_graph *g) {
  hid_t grp = group(w, "/graph");
  if (grp < 0) return PP_ERR_IO;
  pp_status st = PP_OK;
  long long *ids = pp_xmalloc(sizeof(long long) * (size_t)(g->n_nodes + g->n_edges + 1));
  const char **names = pp_xmalloc(sizeof(char *) * (size_t)(g->n_nodes + 1));
  double *cost = pp_xmalloc(sizeof(double) * (size_t)(g->n_edges + 1));
  for (int v = 0; v < g->n_nodes; v++) {
    ids[v] = g->nodes[v].orig_id;
    names[v] = g->nodes[v].name;
  }
  hsize_t nd[1] = {(hsize_t)g->n_nodes}, ne[1] = {(hsize_t)g->n_edges};
  if ((st = write_small(w, grp, "node_id", H5T_NATIVE_LLONG, 1, nd, ids))) goto done;
  if ((st = write_strings(w, grp, "node_name", names, g->n_nodes))) goto done;
  for (int e = 0; e < g->n_edges; e++) ids[e] = g->nodes[g->edges[e].src].orig_id;
  if ((st = write_small(w, grp, "edge_source", H5T_NATIVE_LLONG, 1, ne, ids))) goto done;
  for (int e = 0; e < g->n_edges; e++) ids[e] = g->nodes[g->edges[e].dst].orig_id;
  if ((st = write_small(w, grp, "edge_dest", H5T_NATIVE_LLONG, 1, ne, ids))) goto done;
  for (int e = 0; e < g->n_edges; e++) cost[e] = g->edges[e].cost;
  st = write_small(w, grp, "edge_cost", H5T_NATIVE_DOUBLE, 1, ne, cost);
done:
  free(ids);
  free(names);
  free(cost);
  H5Gclose(grp);
  return st;
}

static pp_status write_downsets(writer *w, const pp_downsets *ds) {
  hid_t grp = group(w, "/downsets");
  if (grp < 0) return PP_ERR_IO;
  unsigned char *m = pp_xmalloc((size_t)ds->count * (size_t)ds->n_nodes + 1);
  for (int i = 0; i < ds->count; i++)
    for (int v = 0; v < ds->n_nodes; v++)
      m[(size_t)i * (size_t)ds->n_nodes + (size_t)v] = (unsigned char)pp_bit_get(pp_downset_bits(ds, i), v);
  hsize_t dims[2] = {(hsize_t)ds->count, (hsize_t)ds->n_nodes}, n[1] = {(hsize_t)ds->count};
  pp_status st = write_small(w, grp, "members", H5T_NATIVE_UCHAR, 2, dims, m);
  if (!st) st = write_small(w, grp, "size", H5T_NATIVE_INT, 1, n, ds->size);
  if (!st) st = attr_int(w, grp, "count", ds->count);
  free(m);
  H5Gclose(grp);
  return st;
}

/* The tables.  Only working ranks hold them (see pp_dist_worker): rank 0
 * sends every rank the layout, and each working rank writes one contiguous
 * block of tables, the blocks balanced by bytes, so that each selection is a
 * single hyperslab (fragmented selections made collective writes much
 * slower). */
static pp_status write_dp(writer *w, const pp_archive_content *c) {
  const pp_downsets *ds = c->ds;
  const int n = ds->count;
  hid_t grp = group(w, "/dp");
  if (grp < 0) return PP_ERR_IO;
  pp_status st = PP_OK;
  long long *first_row = pp_xmalloc(sizeof(long long) * (size_t)(2 * n + 2));
  long long *first_step = first_row + n + 1;
  if (w->rank == 0) {
    first_row[0] = first_step[0] = 0;
    for (int i = 0; i < n; i++) {
      const pp_stairs *t = pp_dp_table(c->dp, i);
      first_row[i + 1] = first_row[i] + t->n_rows;
      first_step[i + 1] = first_step[i] + t->row_start[t->n_rows];
    }
  }
  if (w->d && pp_dist_size(w->d) > 1) {
    char *buf = (char *)first_row;
    size_t len = sizeof(long long) * (size_t)(2 * n + 2);
    pp_dist_bcast_bytes(w->d, &buf, &len);
    if (w->rank != 0) {
      memcpy(first_row, buf, sizeof(long long) * (size_t)(2 * n + 2));
      free(buf);
    }
  }
  int lo = 0, hi = 0;
  const int P = w->d ? pp_dist_workers(w->d) : 1, me = w->d ? pp_dist_worker(w->d) : 0;
  if (me >= 0) {
    double total = 12.0 * (double)(first_step[n] + first_row[n]), acc = 0;
    for (int i = 0; i < n; i++) {
      double bytes = 12.0 * (double)(first_step[i + 1] - first_step[i] + first_row[i + 1] - first_row[i]);
      int r = total > 0 ? (int)((acc + bytes / 2) / total * P) : 0;
      acc += bytes;
      if (r >= P) r = P - 1;
      if (r < me) lo = i + 1;
      if (r <= me) hi = i + 1;
    }
  }
  /* this rank's ranges (merged when adjacent) and packed buffers */
  hsize_t *rs = pp_xmalloc(sizeof(hsize_t) * (size_t)(n + 1)),
          *rc = pp_xmalloc(sizeof(hsize_t) * (size_t)(n + 1));
  hsize_t *ss = pp_xmalloc(sizeof(hsize_t) * (size_t)(n + 1)),
          *sc = pp_xmalloc(sizeof(hsize_t) * (size_t)(n + 1));
  int nr = 0;
  size_t my_rows = 0, my_steps = 0;
  for (int i = 0; i < n; i++) {
    if (i < lo || i >= hi) continue;
    hsize_t r0 = (hsize_t)first_row[i], r1 = (hsize_t)first_row[i + 1];
    hsize_t s0 = (hsize_t)first_step[i], s1 = (hsize_t)first_step[i + 1];
    if (nr > 0 && rs[nr - 1] + rc[nr - 1] == r0 && ss[nr - 1] + sc[nr - 1] == s0) {
      rc[nr - 1] += r1 - r0;
      sc[nr - 1] += s1 - s0;
    } else {
      rs[nr] = r0;
      rc[nr] = r1 - r0;
      ss[nr] = s0;
      sc[nr] = s1 - s0;
      nr++;
    }
    my_rows += r1 - r0;
    my_steps += s1 - s0;
  }
  int *row_k = pp_xmalloc(sizeof(int) * (my_rows + 1));
  long long *row_step = pp_xmalloc(sizeof(long long) * (my_rows + 1));
  int *step_s = pp_xmalloc(sizeof(int) * (my_steps + 1));
  double *step_v = pp_xmalloc(sizeof(double) * (my_steps + 1));
  size_t a = 0, b = 0;
  for (int i = 0; i < n; i++) {
    if (i < lo || i >= hi) continue;
    const pp_stairs *t = pp_dp_table(c->dp, i);
    for (int r = 0; r < t->n_rows; r++) {
      row_k[a] = t->row_k[r];
      row_step[a++] = first_step[i] + t->row_start[r];
    }
    int steps = t->row_start[t->n_rows];
    memcpy(step_s + b, t->s, sizeof(int) * (size_t)steps);
    memcpy(step_v + b, t->v, sizeof(double) * (size_t)steps);
    b += (size_t)steps;
  }
  hsize_t dn[1] = {(hsize_t)n + 1}, dr[1] = {(hsize_t)first_row[n]}, dsd[1] = {(hsize_t)first_step[n]};
  if ((st = write_small(w, grp, "table_first_row", H5T_NATIVE_LLONG, 1, dn, first_row))) goto done;
  if ((st = write_small(w, grp, "table_first_step", H5T_NATIVE_LLONG, 1, dn, first_step))) goto done;
  if ((st = write_ds(w, grp, "row_k", H5T_NATIVE_INT, 1, dr, nr, rs, rc, row_k, 1))) goto done;
  if ((st = write_ds(w, grp, "row_first_step", H5T_NATIVE_LLONG, 1, dr, nr, rs, rc, row_step, 1))) goto done;
  if ((st = write_ds(w, grp, "step_s", H5T_NATIVE_INT, 1, dsd, nr, ss, sc, step_s, 1))) goto done;
  if ((st = write_ds(w, grp, "step_value", H5T_NATIVE_DOUBLE, 1, dsd, nr, ss, sc, step_v, 1))) goto done;
  if ((st = attr_int(w, grp, "devices", c->p->devices))) goto done;
  st = attr_int(w, grp, "max_s", pp_problem_max_s(c->p));
done:
  free(first_row);
  free(rs);
  free(rc);
  free(ss);
  free(sc);
  free(row_k);
  free(row_step);
  free(step_s);
  free(step_v);
  H5Gclose(grp);
  return st;
}

static pp_status write_plan(writer *w, const pp_graph *g, const pp_problem *p, const pp_plan *plan) {
  hid_t grp = group(w, "/plan");
  if (grp < 0) return PP_ERR_IO;
  pp_status st = PP_OK;
  int ns = plan && plan->feasible ? plan->n_stages : 0, total = 0;
  for (int i = 0; i < ns; i++) total += plan->stages[i].n_nodes;
  int *sd = pp_xmalloc(sizeof(int) * (size_t)(ns + 1) * 6);
  int *st_t = sd + ns + 1, *sdev = st_t + ns + 1, *sy = sdev + ns + 1, *sfirst = sy + ns + 1;
  double *load = pp_xmalloc(sizeof(double) * (size_t)(2 * ns + 2)), *mem = load + ns + 1;
  long long *nid = pp_xmalloc(sizeof(long long) * (size_t)(total + 1));
  int *nstage = pp_xmalloc(sizeof(int) * (size_t)(total + 1));
  const char **ntm = pp_xmalloc(sizeof(char *) * (size_t)(total + 1));
  int x = 0;
  for (int i = 0; i < ns; i++) {
    const pp_plan_stage *s = &plan->stages[i];
    sd[i] = s->d;
    st_t[i] = s->t;
    sdev[i] = s->d * s->t;
    sy[i] = s->y;
    sfirst[i] = x;
    load[i] = s->load;
    mem[i] = s->memory;
    for (int j = 0; j < s->n_nodes; j++) {
      nid[x] = g->nodes[s->nodes[j]].orig_id;
      nstage[x] = i;
      ntm[x] = pp_graph_tmpcs(g, s->nodes[j], s->t)->tmpcs[s->tmpc[j]].id;
      x++;
    }
  }
  sfirst[ns] = x;
  hsize_t dsn[1] = {(hsize_t)ns}, dsn1[1] = {(hsize_t)ns + 1}, dn[1] = {(hsize_t)total};
  if ((st = attr_int(w, grp, "feasible", ns > 0)) ||
      (st = attr_double(w, grp, "tps", ns ? plan->tps : INFINITY)) ||
      (st = attr_int(w, grp, "devices_used", ns ? plan->devices_used : 0)) ||
      (st = attr_int(w, grp, "sum_dp_degrees", ns ? plan->sum_d : 0)) ||
      (st = attr_int(w, grp, "stages", ns)) || (st = attr_int(w, grp, "budget", p->devices)))
    goto done;
  if ((st = write_small(w, grp, "stage_d", H5T_NATIVE_INT, 1, dsn, sd)) ||
      (st = write_small(w, grp, "stage_t", H5T_NATIVE_INT, 1, dsn, st_t)) ||
      (st = write_small(w, grp, "stage_devices", H5T_NATIVE_INT, 1, dsn, sdev)) ||
      (st = write_small(w, grp, "stage_y", H5T_NATIVE_INT, 1, dsn, sy)) ||
      (st = write_small(w, grp, "stage_load", H5T_NATIVE_DOUBLE, 1, dsn, load)) ||
      (st = write_small(w, grp, "stage_memory", H5T_NATIVE_DOUBLE, 1, dsn, mem)) ||
      (st = write_small(w, grp, "stage_first_node", H5T_NATIVE_INT, 1, dsn1, sfirst)) ||
      (st = write_small(w, grp, "node_id", H5T_NATIVE_LLONG, 1, dn, nid)) ||
      (st = write_small(w, grp, "node_stage", H5T_NATIVE_INT, 1, dn, nstage)))
    goto done;
  st = write_strings(w, grp, "node_tmpc", ntm, total);
done:
  free(sd);
  free(load);
  free(nid);
  free(nstage);
  free(ntm);
  H5Gclose(grp);
  return st;
}

static pp_status write_curve(writer *w, const pp_archive_content *c) {
  hid_t grp = group(w, "/curve");
  if (grp < 0) return PP_ERR_IO;
  int K = c->p->devices;
  int *k = pp_xmalloc(sizeof(int) * (size_t)K);
  double *tps = pp_xmalloc(sizeof(double) * (size_t)K);
  for (int i = 0; i < K; i++) {
    k[i] = i + 1;
    tps[i] = w->rank == 0 ? pp_dp_optimum(c->dp, i + 1) : 0; /* rank 0 writes it */
  }
  hsize_t dims[1] = {(hsize_t)K};
  pp_status st = write_small(w, grp, "k", H5T_NATIVE_INT, 1, dims, k);
  if (!st) st = write_small(w, grp, "tps", H5T_NATIVE_DOUBLE, 1, dims, tps);
  free(k);
  free(tps);
  H5Gclose(grp);
  return st;
}

static pp_status write_run(writer *w, const pp_run_record *r) {
  hid_t grp = group(w, "/run");
  if (grp < 0) return PP_ERR_IO;
  pp_status st;
  if ((st = attr_int(w, grp, "ranks", r->ranks)) || (st = attr_string(w, grp, "version", PIPER_VERSION)) ||
      (st = attr_double(w, grp, "seconds_enumerate", r->seconds_enumerate)) ||
      (st = attr_double(w, grp, "seconds_dp", r->seconds_dp)) ||
      (st = attr_double(w, grp, "seconds_exchange", r->seconds_exchange)) ||
      (st = attr_double(w, grp, "seconds_before_write", r->seconds_total)) ||
      (st = attr_double(w, grp, "bytes_exchanged", r->bytes_exchanged)) ||
      (st = attr_double(w, grp, "peak_rss_bytes", r->peak_rss_bytes)) ||
      (st = attr_int(w, grp, "resumed", r->resumed)))
    goto done;
  {
    const char **names = pp_xmalloc(sizeof(char *) * (size_t)(r->ranks + 1));
    for (int i = 0; i < r->ranks; i++) names[i] = r->hostnames + (size_t)i * (size_t)r->host_width;
    st = write_strings(w, grp, "hostnames", names, r->ranks);
    free(names);
  }
done:
  H5Gclose(grp);
  return st;
}

static void temp_path(const char *path, char *out, size_t n) {
  const char *slash = strrchr(path, '/');
  if (slash)
    snprintf(out, n, "%.*s/.%s.partial", (int)(slash - path), path, slash + 1);
  else
    snprintf(out, n, ".%s.partial", path);
}

pp_status pp_archive_write(pp_dist *d, const char *path, const pp_archive_content *c, double *seconds,
                           pp_error *err) {
  double t0 = pp_now();
  char tmp[4096];
  temp_path(path, tmp, sizeof tmp);
  hid_t fapl = H5I_INVALID_HID, dxpl = H5I_INVALID_HID, file = H5I_INVALID_HID;
  pp_status st = PP_OK;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  fapl = H5Pcreate(H5P_FILE_ACCESS);
  dxpl = H5Pcreate(H5P_DATASET_XFER);
  if (fapl < 0 || dxpl < 0 ||
      H5Pset_fapl_mpio(fapl, *(const MPI_Comm *)pp_dist_comm_handle(d), MPI_INFO_NULL) < 0 ||
      H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0) {
    st = h5fail(err, "setting up parallel I/O");
    goto agree;
  }
  file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (file < 0) st = pp_error_set(err, PP_ERR_IO, "%s: cannot create the archive (HDF5 create failed)", tmp);
agree:
  if ((st = pp_dist_agree(d, st, err))) goto done;
  {
    writer w = {
        .file = file, .dxpl = dxpl, .d = d, .rank = pp_dist_rank(d), .size = pp_dist_size(d), .err = err};
    /* Every step is collective; stop at the first failure on any rank. */
    if ((st = pp_dist_agree(d, write_problem(&w, c), err))) goto done;
    if ((st = pp_dist_agree(d, write_graph(&w, c->g), err))) goto done;
    if ((st = pp_dist_agree(d, write_downsets(&w, c->ds), err))) goto done;
    if ((st = pp_dist_agree(d, write_dp(&w, c), err))) goto done;
    if ((st = pp_dist_agree(d, write_plan(&w, c->g, c->p, c->plan), err))) goto done;
    if ((st = pp_dist_agree(d, write_curve(&w, c), err))) goto done;
    if ((st = pp_dist_agree(d, write_run(&w, &c->run), err))) goto done;
    /* the write time so far (all but the final close), the same on every rank */
    double so_far = pp_dist_max(d, pp_now() - t0);
    hid_t run = H5Gopen2(file, "/run", H5P_DEFAULT);
    st = run < 0 ? h5fail(err, "reopening /run") : attr_double(&w, run, "seconds_write", so_far);
    if (run >= 0) H5Gclose(run);
    if ((st = pp_dist_agree(d, st, err))) goto done;
  }
done:
  if (file >= 0 && H5Fclose(file) < 0 && !st) st = pp_error_set(err, PP_ERR_IO, "%s: closing failed", tmp);
  file = H5I_INVALID_HID;
  if (fapl >= 0) H5Pclose(fapl);
  if (dxpl >= 0) H5Pclose(dxpl);
  st = pp_dist_agree(d, st, err);
  if (pp_dist_rank(d) == 0) {
    if (st == PP_OK && rename(tmp, path) != 0)
      st = pp_error_set(err, PP_ERR_IO, "%s: cannot rename the finished archive into place: %s", path,
                        strerror(errno));
    if (st != PP_OK) unlink(tmp);
  }
  st = pp_dist_agree(d, st, err);
  if (seconds) *seconds = pp_now() - t0;
  return st;
}

/* ---- reading ---- */

struct pp_archive {
  pp_graph *g;
  pp_problem p;
  pp_downsets *ds;
  pp_dp *dp;
  hid_t file;
};

static pp_status bad(pp_error *err, const char *path, const char *what) {
  return pp_error_set(err, PP_ERR_INPUT, "%s: not a valid piper archive: %s", path, what);
}

/* Reads a whole 1-D or 2-D dataset of native type into a new buffer;
 * *n = element count.  PP_ERR_INPUT names what is missing. */
static pp_status read_all(hid_t file, const char *fpath, const char *name, hid_t type, void **buf, size_t *n,
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
    st = bad(err, fpath, name);
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

static int read_attr(hid_t file, const char *obj, const char *name, hid_t type, void *out) {
  hid_t a = H5Aopen_by_name(file, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) return -1;
  int rc = H5Aread(a, type, out) < 0 ? -1 : 0;
  H5Aclose(a);
  return rc;
}

static int read_attr_string(hid_t file, const char *obj, const char *name, char *out, size_t n) {
  hid_t a = H5Aopen_by_name(file, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t ft = H5Aget_type(a);
  size_t sz = ft >= 0 ? H5Tget_size(ft) : 0;
  int rc = -1;
  if (sz > 0) {
    char *buf = pp_xcalloc(sz + 1, 1);
    hid_t mt = string_type(sz);
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

static hid_t open_for_reading(const char *path, pp_error *err) {
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

static pp_status read_problem(hid_t file, const char *path, pp_problem *p, pp_error *err) {
  long long dev, mb, ndp, ntp, nrc;
  char knap[32];
  memset(p, 0, sizeof *p);
  if (read_attr(file, "/problem", "devices", H5T_NATIVE_LLONG, &dev) ||
      read_attr(file, "/problem", "microbatches", H5T_NATIVE_LLONG, &mb) ||
      read_attr(file, "/problem", "memory", H5T_NATIVE_DOUBLE, &p->memory) ||
      read_attr(file, "/problem", "bandwidth", H5T_NATIVE_DOUBLE, &p->bandwidth) ||
      read_attr(file, "/problem", "no_dp", H5T_NATIVE_LLONG, &ndp) ||
      read_attr(file, "/problem", "no_tp", H5T_NATIVE_LLONG, &ntp) ||
      read_attr(file, "/problem", "no_recompute", H5T_NATIVE_LLONG, &nrc) ||
      read_attr_string(file, "/problem", "knapsack", knap, sizeof knap))
    return bad(err, path, "/problem attributes are missing");
  if (dev < 1 || dev > PP_MAX_DEVICES || mb < 1 || mb > PP_MAX_MICROBATCHES || !(p->memory > 0) ||
      !(p->bandwidth > 0))
    return bad(err, path, "/problem attributes are out of range");
  p->devices = (int)dev;
  p->microbatches = (int)mb;
  p->no_dp = ndp != 0;
  p->no_tp = ntp != 0;
  p->no_recompute = nrc != 0;
  p->knapsack = strcmp(knap, "exact") == 0 ? PP_KNAPSACK_EXACT : PP_KNAPSACK_GREEDY;
  return PP_OK;
}

static pp_status read_input(hid_t file, const char *path, pp_graph **g, pp_error *err) {
  hid_t ds = H5Dopen2(file, "/problem/input_json", H5P_DEFAULT);
  if (ds < 0) return bad(err, path, "/problem/input_json is missing");
  hid_t ft = H5Dget_type(ds);
  size_t sz = ft >= 0 ? H5Tget_size(ft) : 0;
  pp_status st = PP_OK;
  char *buf = pp_xcalloc(sz + 1, 1);
  if (sz == 0 || H5Dread(ds, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: cannot read /problem/input_json (truncated or damaged?)", path);
  } else {
    char name[4200];
    snprintf(name, sizeof name, "%s:/problem/input_json", path);
    st = pp_graph_load_buffer(name, buf, strnlen(buf, sz), NULL, g, err);
  }
  free(buf);
  if (ft >= 0) H5Tclose(ft);
  H5Dclose(ds);
  return st;
}

/* Rebuilds every table from /dp. */
static pp_status read_tables(hid_t file, const char *path, pp_archive *a, pp_error *err) {
  void *fr = NULL, *fs = NULL, *rk = NULL, *rf = NULL, *ss = NULL, *sv = NULL;
  size_t nfr, nfs, nrk, nrf, nss, nsv;
  pp_status st;
  if ((st = read_all(file, path, "/dp/table_first_row", H5T_NATIVE_LLONG, &fr, &nfr, err)) ||
      (st = read_all(file, path, "/dp/table_first_step", H5T_NATIVE_LLONG, &fs, &nfs, err)) ||
      (st = read_all(file, path, "/dp/row_k", H5T_NATIVE_INT, &rk, &nrk, err)) ||
      (st = read_all(file, path, "/dp/row_first_step", H5T_NATIVE_LLONG, &rf, &nrf, err)) ||
      (st = read_all(file, path, "/dp/step_s", H5T_NATIVE_INT, &ss, &nss, err)) ||
      (st = read_all(file, path, "/dp/step_value", H5T_NATIVE_DOUBLE, &sv, &nsv, err)))
    goto done;
  const long long *first_row = fr, *first_step = fs, *row_step = rf;
  const int *row_k = rk, *step_s = ss;
  const double *step_v = sv;
  int n = a->ds->count, K = a->p.devices, S = pp_problem_max_s(&a->p);
  if (nfr != (size_t)n + 1 || nfs != (size_t)n + 1 || nrk != nrf || nss != nsv || first_row[0] != 0 ||
      first_step[0] != 0 || (size_t)first_row[n] != nrk || (size_t)first_step[n] != nss) {
    st = bad(err, path, "/dp datasets have inconsistent sizes");
    goto done;
  }
  for (int i = 0; i < n; i++) {
    long long r0 = first_row[i], r1 = first_row[i + 1], s0 = first_step[i], s1 = first_step[i + 1];
    if (r1 <= r0 || s1 <= s0 || s1 - s0 > (long long)(K + 1) * (S + 1)) {
      st = bad(err, path, "/dp table offsets are out of range");
      goto done;
    }
    pp_stairs *t = pp_stairs_new(0, K, (int)(r1 - r0), (int)(s1 - s0));
    int okay = 1;
    for (long long r = r0; r < r1 && okay; r++) {
      t->row_k[r - r0] = row_k[r];
      long long st0 = row_step[r] - s0, st1 = (r + 1 < r1 ? row_step[r + 1] : s1) - s0;
      t->row_start[r - r0] = (int)st0;
      okay = st0 >= 0 && st1 > st0 && st1 <= s1 - s0 && row_k[r] >= 0 && row_k[r] <= K &&
             (r == r0 ? row_k[r] == 0 : row_k[r] > row_k[r - 1]);
    }
    t->row_start[r1 - r0] = (int)(s1 - s0);
    for (long long x = s0; x < s1 && okay; x++) {
      t->s[x - s0] = step_s[x];
      t->v[x - s0] = step_v[x];
      okay = step_s[x] >= 0 && step_s[x] <= S && !isnan(step_v[x]);
    }
    if (!okay) {
      pp_stairs_free(t);
      st = bad(err, path, "/dp tables are damaged");
      goto done;
    }
    pp_dp_set_table(a->dp, i, t);
  }
done:
  free(fr);
  free(fs);
  free(rk);
  free(rf);
  free(ss);
  free(sv);
  return st;
}

pp_status pp_archive_open(const char *path, pp_archive **out, pp_error *err) {
  *out = NULL;
  pp_archive *a = pp_xcalloc(1, sizeof *a);
  a->file = open_for_reading(path, err);
  pp_status st = PP_ERR_INPUT;
  void *members = NULL;
  if (a->file < 0) goto done;
  if ((st = read_problem(a->file, path, &a->p, err))) goto done;
  if ((st = read_input(a->file, path, &a->g, err))) goto done;
  size_t nm;
  if ((st = read_all(a->file, path, "/downsets/members", H5T_NATIVE_UCHAR, &members, &nm, err))) goto done;
  {
    int n = a->g->n_nodes, words = pp_bits_words(n);
    size_t count = n ? nm / (size_t)n : 0;
    if (n == 0 || nm % (size_t)n || count < 2 || count > 100000000) {
      st = bad(err, path, "/downsets/members has the wrong shape");
      goto done;
    }
    uint64_t *bits = pp_xcalloc(count * (size_t)words + 1, sizeof(uint64_t));
    const unsigned char *m = members;
    for (size_t i = 0; i < count; i++)
      for (int v = 0; v < n; v++)
        if (m[i * (size_t)n + (size_t)v]) pp_bit_set(bits + i * (size_t)words, v);
    st = pp_downsets_from_bits(n, (int)count, bits, &a->ds, err);
    free(bits);
    if (st) {
      st = bad(err, path, "/downsets are inconsistent");
      goto done;
    }
  }
  if ((st = pp_dp_create(a->g, &a->p, a->ds, 0, &a->dp, err))) goto done;
  st = read_tables(a->file, path, a, err);
done:
  free(members);
  if (st) {
    pp_archive_close(a);
    return st;
  }
  *out = a;
  return PP_OK;
}

void pp_archive_close(pp_archive *a) {
  if (!a) return;
  pp_dp_free(a->dp);
  pp_downsets_free(a->ds);
  pp_graph_free(a->g);
  if (a->file >= 0) H5Fclose(a->file);
  free(a);
}

const pp_graph *pp_archive_graph(const pp_archive *a) { return a->g; }
const pp_problem *pp_archive_problem(const pp_archive *a) { return &a->p; }
const pp_downsets *pp_archive_downsets(const pp_archive *a) { return a->ds; }
pp_dp *pp_archive_dp(pp_archive *a) { return a->dp; }

pp_status pp_archive_read_plan(const pp_archive *a, pp_plan **out, pp_error *err) {
  *out = NULL;
  long long feasible = 0;
  const char *path = a->g->source_path;
  if (read_attr(a->file, "/plan", "feasible", H5T_NATIVE_LLONG, &feasible))
    return bad(err, path, "/plan is missing");
  if (!feasible) {
    *out = pp_plan_new(0);
    return PP_OK;
  }
  void *d = NULL, *t = NULL, *first = NULL, *nid = NULL, *tm = NULL;
  size_t nd, nt, nf, nn, ntm;
  pp_status st;
  pp_plan *plan = NULL;
  hid_t tmt = H5I_INVALID_HID;
  if ((st = read_all(a->file, path, "/plan/stage_d", H5T_NATIVE_INT, &d, &nd, err)) ||
      (st = read_all(a->file, path, "/plan/stage_t", H5T_NATIVE_INT, &t, &nt, err)) ||
      (st = read_all(a->file, path, "/plan/stage_first_node", H5T_NATIVE_INT, &first, &nf, err)) ||
      (st = read_all(a->file, path, "/plan/node_id", H5T_NATIVE_LLONG, &nid, &nn, err)))
    goto done;
  {
    hid_t ds = H5Dopen2(a->file, "/plan/node_tmpc", H5P_DEFAULT);
    hid_t ft = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    size_t w = ft >= 0 ? H5Tget_size(ft) : 0;
    if (ft >= 0) H5Tclose(ft);
    if (ds >= 0) H5Dclose(ds);
    if (w == 0) {
      st = bad(err, path, "/plan/node_tmpc is missing");
      goto done;
    }
    tmt = string_type(w);
    if ((st = read_all(a->file, path, "/plan/node_tmpc", tmt, &tm, &ntm, err))) goto done;
    if (nd != nt || nf != nd + 1 || ntm != nn || nd == 0) {
      st = bad(err, path, "/plan datasets disagree");
      goto done;
    }
    const int *sd = d, *stt = t, *sf = first;
    const long long *ids = nid;
    plan = pp_plan_new((int)nd);
    plan->feasible = 1;
    for (size_t i = 0; i < nd; i++) {
      pp_plan_stage *s = &plan->stages[i];
      if (sf[i] < 0 || sf[i + 1] <= sf[i] || (size_t)sf[i + 1] > nn) {
        st = bad(err, path, "/plan stage bounds");
        goto done;
      }
      s->d = sd[i];
      s->t = stt[i];
      s->n_nodes = sf[i + 1] - sf[i];
      s->nodes = pp_xmalloc(sizeof(int) * (size_t)s->n_nodes);
      s->tmpc = pp_xmalloc(sizeof(int) * (size_t)s->n_nodes);
      for (int j = 0; j < s->n_nodes; j++) {
        size_t x = (size_t)sf[i] + (size_t)j;
        int v = -1;
        for (int u = 0; u < a->g->n_nodes && v < 0; u++)
          if (a->g->nodes[u].orig_id == ids[x]) v = u;
        const pp_tmpc_list *l = v >= 0 ? pp_graph_tmpcs(a->g, v, s->t) : NULL;
        int k = -1;
        char name[NAME_WIDTH_MAX + 1];
        memcpy(name, (char *)tm + x * w, w);
        name[w] = '\0';
        for (int q = 0; l && q < l->count && k < 0; q++)
          if (strcmp(l->tmpcs[q].id, name) == 0) k = q;
        if (k < 0) {
          st = bad(err, path, "/plan names a node or TMPC the graph does not have");
          goto done;
        }
        s->nodes[j] = v;
        s->tmpc[j] = k;
      }
    }
  }
done:
  if (tmt >= 0) H5Tclose(tmt);
  free(d);
  free(t);
  free(first);
  free(nid);
  free(tm);
  if (st) {
    pp_plan_free(plan);
    return st;
  }
  *out = plan;
  return PP_OK;
}

pp_status pp_archive_read_summary(const char *path, pp_archive_summary *s, pp_error *err) {
  memset(s, 0, sizeof *s);
  hid_t file = open_for_reading(path, err);
  if (file < 0) return PP_ERR_INPUT;
  pp_problem p;
  pp_status st = read_problem(file, path, &p, err);
  long long feasible = 0, used = 0, stages = 0, count = 0;
  double before = 0;
  if (!st && (read_attr(file, "/plan", "feasible", H5T_NATIVE_LLONG, &feasible) ||
              read_attr(file, "/plan", "tps", H5T_NATIVE_DOUBLE, &s->tps) ||
              read_attr(file, "/plan", "devices_used", H5T_NATIVE_LLONG, &used) ||
              read_attr(file, "/plan", "stages", H5T_NATIVE_LLONG, &stages) ||
              read_attr(file, "/downsets", "count", H5T_NATIVE_LLONG, &count) ||
              read_attr(file, "/run", "seconds_before_write", H5T_NATIVE_DOUBLE, &before) ||
              read_attr_string(file, "/problem", "input_path", s->input, sizeof s->input)))
    st = bad(err, path, "/plan, /downsets or /run attributes are missing");
  if (!st) {
    s->devices = p.devices;
    s->microbatches = p.microbatches;
    s->memory = p.memory;
    s->bandwidth = p.bandwidth;
    s->no_dp = p.no_dp;
    s->no_tp = p.no_tp;
    s->no_recompute = p.no_recompute;
    s->feasible = (int)feasible;
    s->devices_used = (int)used;
    s->stages = (int)stages;
    s->downsets = (int)count;
    s->seconds = before;
  }
  H5Fclose(file);
  return st;
}

/* ---- checkpoints ---- */

pp_status pp_checkpoint_write(const char *path, const char *identity, const pp_downsets *ds, const pp_dp *dp,
                              int layers_done, pp_error *err) {
  char tmp[4096];
  temp_path(path, tmp, sizeof tmp);
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
  if ((st = attr_string(&w, file, "identity", identity)) ||
      (st = attr_int(&w, file, "layers_done", layers_done)) ||
      (st = attr_int(&w, file, "downsets", ds->count)) ||
      (st = write_small(&w, file, "tables", H5T_NATIVE_UCHAR, 1, dims, buf)))
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
  hid_t file = open_for_reading(path, err);
  if (file < 0) return PP_ERR_INPUT;
  char ident[128];
  long long layers = 0;
  pp_status st = PP_OK;
  if (read_attr_string(file, "/", "identity", ident, sizeof ident) ||
      read_attr(file, "/", "layers_done", H5T_NATIVE_LLONG, &layers)) {
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
    st = read_all(file, path, "/tables", H5T_NATIVE_UCHAR, &data, &n, err);
    if (!st) {
      *buf = data;
      *len = n;
      *layers_done = (int)layers;
    }
  }
  H5Fclose(file);
  return st;
}

pp_status pp_archive_write_study(const char *path, const pp_archive_summary *rows, const char *const *files,
                                 int n, pp_error *err) {
  char tmp[4096];
  temp_path(path, tmp, sizeof tmp);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return pp_error_set(err, PP_ERR_IO, "%s: cannot create", tmp);
  writer w = {.file = file, .dxpl = H5P_DEFAULT, .rank = 0, .size = 1, .err = err};
  pp_status st = PP_OK;
  hid_t grp = group(&w, "/study");
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
#define ICOL(name, expr)                                                     \
  do {                                                                       \
    for (int i = 0; i < n; i++) iv[i] = (expr);                              \
    if (!st) st = write_small(&w, grp, name, H5T_NATIVE_LLONG, 1, dims, iv); \
  } while (0)
#define DCOL(name, expr)                                                      \
  do {                                                                        \
    for (int i = 0; i < n; i++) dv[i] = (expr);                               \
    if (!st) st = write_small(&w, grp, name, H5T_NATIVE_DOUBLE, 1, dims, dv); \
  } while (0)
    for (int i = 0; i < n; i++) sv[i] = files[i];
    if (!st) st = write_strings(&w, grp, "archive", sv, n);
    for (int i = 0; i < n; i++) sv[i] = rows[i].input;
    if (!st) st = write_strings(&w, grp, "input", sv, n);
    ICOL("devices", rows[i].devices);
    DCOL("memory", rows[i].memory);
    DCOL("bandwidth", rows[i].bandwidth);
    ICOL("microbatches", rows[i].microbatches);
    for (int i = 0; i < n; i++) {
      char *f = flags + (size_t)i * 48;
      snprintf(f, 48, "%s%s%s%s", rows[i].no_dp ? "no-dp," : "", rows[i].no_tp ? "no-tp," : "",
               rows[i].no_recompute ? "no-recompute," : "", "");
      size_t l = strlen(f);
      if (l)
        f[l - 1] = '\0';
      else
        snprintf(f, 48, "none");
      sv[i] = f;
    }
    if (!st) st = write_strings(&w, grp, "flags", sv, n);
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
