/*
 * writer.c - the collective archive writer (see include/piper/archive.h).
 *
 * The archive is written with parallel HDF5 over the run's communicator
 * (or HDF5's serial driver when the run has one rank or no MPI): every rank
 * creates the same objects (collective metadata) and writes, collectively,
 * the hyperslabs it owns: each working rank one contiguous block of DP
 * tables (every working rank can read every table), rank 0 everything
 * small; ranks that do not work write nothing but take part in the
 * collective calls.  What rank 0 alone knows (the temporary name, the
 * layout of /dp) reaches the others through pp_dist_from_root.  The file is
 * written under a temporary name and renamed when complete.  Each function
 * has one exit label that releases every handle it opened.
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

#include "piper/bitset.h"
#include "piper/progress.h"
#include "piper/sha256.h"

/* ---- identity ---- */

void pp_archive_identity(const pp_graph *g, const pp_problem *p, char hex[65]) {
  pp_sha256 c = g->source_sha; /* the input's bytes, hashed once when it was read */
  char params[512];
  snprintf(params, sizeof params,
           "\n--piper-parameters devices=%d memory=%.17g microbatches=%d bandwidth=%.17g "
           "no_dp=%d no_tp=%d no_recompute=%d knapsack=%d",
           p->devices, p->memory, p->microbatches, p->bandwidth, p->no_dp, p->no_tp, p->no_recompute,
           (int)p->knapsack);
  pp_sha256_update(&c, params, strlen(params));
  if (p->planner == PP_PLANNER_EQUI) pp_sha256_update(&c, " planner=equi", 13);
  if (p->schedule != PP_SCHEDULE_2BW || p->uniform || pp_problem_chunks(p) > 1) { /* 2bw keeps its identity */
    snprintf(params, sizeof params, " schedule=%s uniform=%d virtual_stages=%d",
             pp_schedule_name(p->schedule), p->uniform, pp_problem_chunks(p));
    pp_sha256_update(&c, params, strlen(params));
  }
  if (p->zero || p->devices_per_node) { /* absent in the Piper model: its identities stay as they were */
    snprintf(params, sizeof params, " zero=%d devices_per_node=%d intra_bandwidth=%.17g", p->zero,
             p->devices_per_node, p->intra_bandwidth);
    pp_sha256_update(&c, params, strlen(params));
  }
  pp_sha256_final_hex(&c, hex);
}

/* /problem/input_json: the input verbatim, one scalar string, written by
 * rank 0 (the others select nothing). */
static pp_status write_input(writer *w, hid_t grp, const pp_graph *g) {
  hid_t t = ar_string_type(g->source_len + 1), space = H5Screate(H5S_SCALAR), ms = H5Screate(H5S_SCALAR);
  hid_t ds = H5I_INVALID_HID;
  pp_status st = PP_OK;
  if (t < 0 || space < 0 || ms < 0 || (w->rank != 0 && (H5Sselect_none(ms) < 0 || H5Sselect_none(space) < 0)))
    st = ar_fail(w, "preparing input_json");
  else if ((ds = H5Dcreate2(grp, "input_json", t, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
    st = ar_fail(w, "creating input_json");
  if (!st) {
    char *buf = pp_xcalloc(g->source_len + 2, 1);
    memcpy(buf, g->source_text, g->source_len);
    if (H5Dwrite(ds, t, ms, space, w->dxpl, buf) < 0) st = ar_fail(w, "writing input_json");
    free(buf);
  }
  if (ds >= 0 && H5Dclose(ds) < 0 && !st) st = ar_fail(w, "closing input_json");
  if (ms >= 0) H5Sclose(ms);
  if (space >= 0) H5Sclose(space);
  if (t >= 0) H5Tclose(t);
  return st;
}

static pp_status write_problem(writer *w, const pp_archive_content *c) {
  const pp_problem *p = c->p;
  const pp_graph *g = c->g;
  hid_t grp = ar_group(w, "/problem");
  if (grp < 0) return PP_ERR_IO;
  char sha[65], ident[65];
  pp_graph_input_sha256(g, sha);
  pp_archive_identity(g, p, ident);
  pp_status st = PP_OK;
  if ((st = ar_attr_int(w, grp, "devices", p->devices)) ||
      (st = ar_attr_double(w, grp, "memory", p->memory)) ||
      (st = ar_attr_double(w, grp, "bandwidth", p->bandwidth)) ||
      (st = ar_attr_int(w, grp, "microbatches", p->microbatches)) ||
      (st = ar_attr_int(w, grp, "no_dp", p->no_dp)) || (st = ar_attr_int(w, grp, "no_tp", p->no_tp)) ||
      (st = ar_attr_int(w, grp, "no_recompute", p->no_recompute)) ||
      (st = ar_attr_string(w, grp, "knapsack", p->knapsack == PP_KNAPSACK_EXACT ? "exact" : "greedy")) ||
      (st = ar_attr_string(w, grp, "planner", p->planner == PP_PLANNER_EQUI ? "equi" : "piper")) ||
      (st = ar_attr_string(w, grp, "schedule", pp_schedule_name(p->schedule))) ||
      (st = ar_attr_int(w, grp, "uniform", p->uniform)) ||
      (st = ar_attr_int(w, grp, "virtual_stages", pp_problem_chunks(p))) ||
      (st = ar_attr_string(w, grp, "input_path", g->source_path ? g->source_path : "")) ||
      (st = ar_attr_string(w, grp, "input_sha256", sha)) || (st = ar_attr_string(w, grp, "identity", ident)))
    goto done;
  /* ZeRO and the two-level network only when used */
  if (p->zero && (st = ar_attr_int(w, grp, "zero", p->zero))) goto done;
  if (p->devices_per_node && ((st = ar_attr_int(w, grp, "devices_per_node", p->devices_per_node)) ||
                              (st = ar_attr_double(w, grp, "intra_bandwidth", p->intra_bandwidth))))
    goto done;
  st = write_input(w, grp, g);
done:
  return ar_group_close(w, grp, st);
}

static pp_status write_graph(writer *w, const pp_graph *g) {
  hid_t grp = ar_group(w, "/graph");
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
  if ((st = ar_write_small(w, grp, "node_id", H5T_NATIVE_LLONG, 1, nd, ids))) goto done;
  if ((st = ar_write_strings(w, grp, "node_name", names, g->n_nodes))) goto done;
  for (int e = 0; e < g->n_edges; e++) ids[e] = g->nodes[g->edges[e].src].orig_id;
  if ((st = ar_write_small(w, grp, "edge_source", H5T_NATIVE_LLONG, 1, ne, ids))) goto done;
  for (int e = 0; e < g->n_edges; e++) ids[e] = g->nodes[g->edges[e].dst].orig_id;
  if ((st = ar_write_small(w, grp, "edge_dest", H5T_NATIVE_LLONG, 1, ne, ids))) goto done;
  for (int e = 0; e < g->n_edges; e++) cost[e] = g->edges[e].cost;
  st = ar_write_small(w, grp, "edge_cost", H5T_NATIVE_DOUBLE, 1, ne, cost);
done:
  free(ids);
  free(names);
  free(cost);
  return ar_group_close(w, grp, st);
}

static pp_status write_downsets(writer *w, const pp_downsets *ds) {
  hid_t grp = ar_group(w, "/downsets");
  if (grp < 0) return PP_ERR_IO;
  if (!ds) /* a planner without downsets (equi) */
    return ar_group_close(w, grp, ar_attr_int(w, grp, "count", 0));
  unsigned char *m = pp_xmalloc((size_t)ds->count * (size_t)ds->n_nodes + 1);
  for (int i = 0; i < ds->count; i++)
    for (int v = 0; v < ds->n_nodes; v++)
      m[(size_t)i * (size_t)ds->n_nodes + (size_t)v] = (unsigned char)pp_bit_get(pp_downset_bits(ds, i), v);
  hsize_t dims[2] = {(hsize_t)ds->count, (hsize_t)ds->n_nodes}, n[1] = {(hsize_t)ds->count};
  pp_status st = ar_write_small(w, grp, "members", H5T_NATIVE_UCHAR, 2, dims, m);
  if (!st) st = ar_write_small(w, grp, "size", H5T_NATIVE_INT, 1, n, ds->size);
  if (!st) st = ar_attr_int(w, grp, "count", ds->count);
  free(m);
  return ar_group_close(w, grp, st);
}

/* The layout of /dp: first_row[0..n] and first_step[0..n] (one array of
 * 2n + 2), made by rank 0 from its tables and sent to every rank. */
typedef struct layout_job {
  const pp_dp *dp;
  int n;
  long long *first_row;
} layout_job;

static pp_status layout_produce(void *user, pp_pack *out, pp_error *err) {
  (void)err;
  layout_job *j = user;
  long long *first_row = j->first_row, *first_step = first_row + j->n + 1;
  first_row[0] = first_step[0] = 0;
  for (int i = 0; i < j->n; i++) {
    const pp_stairs *t = pp_dp_table(j->dp, i);
    first_row[i + 1] = first_row[i] + t->n_rows;
    first_step[i + 1] = first_step[i] + t->row_start[t->n_rows];
  }
  if (out) pp_pack_bytes(out, first_row, sizeof(long long) * (size_t)(2 * j->n + 2));
  return PP_OK;
}

static pp_status layout_consume(void *user, pp_unpack *in, pp_error *err) {
  layout_job *j = user;
  if (pp_unpack_bytes(in, j->first_row, sizeof(long long) * (size_t)(2 * j->n + 2)) || !pp_unpack_done(in))
    return pp_error_set(err, PP_ERR_INTERNAL, "the /dp layout received from rank 0 is malformed");
  return PP_OK;
}

/* The block of tables [*lo, *hi) that working rank me of P writes: the
 * blocks consecutive and balanced by bytes (12 per row and per step). */
static void my_block(const long long *first_row, const long long *first_step, int n, int P, int me, int *lo,
                     int *hi) {
  *lo = *hi = 0;
  if (me < 0) return;
  double total = 12.0 * (double)(first_step[n] + first_row[n]), acc = 0;
  for (int i = 0; i < n; i++) {
    double bytes = 12.0 * (double)(first_step[i + 1] - first_step[i] + first_row[i + 1] - first_row[i]);
    int r = total > 0 ? (int)((acc + bytes / 2) / total * P) : 0;
    acc += bytes;
    if (r >= P) r = P - 1;
    if (r < me) *lo = i + 1;
    if (r <= me) *hi = i + 1;
  }
}

/* What ar_write_stream asks of /dp's row and step datasets: one field of
 * the tables [lo, hi) of dp, laid out by first_row/first_step. */
enum dp_field { ROW_K, ROW_FIRST_STEP, STEP_S, STEP_VALUE };
typedef struct dp_source {
  const pp_dp *dp;
  const long long *first_row, *first_step;
  enum dp_field field;
  int lo, hi;
} dp_source;

static void fill_dp(void *user, hsize_t first, hsize_t n, void *buf) {
  dp_source *src = user;
  const long long *at = src->field <= ROW_FIRST_STEP ? src->first_row : src->first_step;
  int i = src->lo, hi = src->hi; /* the last table of [lo, hi) that starts at or before first */
  while (hi - i > 1) {
    int mid = i + (hi - i) / 2;
    if ((hsize_t)at[mid] <= first)
      i = mid;
    else
      hi = mid;
  }
  for (hsize_t e = first, out = 0; e < first + n; i++) {
    if ((hsize_t)at[i + 1] <= e) continue; /* a table without rows or steps */
    const pp_stairs *t = pp_dp_table(src->dp, i);
    const hsize_t end = (hsize_t)at[i + 1] < first + n ? (hsize_t)at[i + 1] : first + n;
    const size_t x = (size_t)(e - (hsize_t)at[i]), m = (size_t)(end - e);
    switch (src->field) {
    case ROW_K:
      memcpy((int *)buf + out, t->row_k + x, sizeof(int) * m);
      break;
    case ROW_FIRST_STEP:
      for (size_t j = 0; j < m; j++) ((long long *)buf)[out + j] = src->first_step[i] + t->row_start[x + j];
      break;
    case STEP_S:
      memcpy((int *)buf + out, t->s + x, sizeof(int) * m);
      break;
    case STEP_VALUE:
      memcpy((double *)buf + out, t->v + x, sizeof(double) * m);
      break;
    }
    e = end;
    out += m;
  }
}

/* Writes one of /dp's row or step datasets: this rank's part is the rows or
 * steps of its tables [lo, hi), copied from them a piece at a time. */
static pp_status write_field(writer *w, hid_t grp, const char *name, hid_t type, dp_source *src,
                             enum dp_field field, int n) {
  const long long *at = field <= ROW_FIRST_STEP ? src->first_row : src->first_step;
  const int lo = src->lo, hi = src->hi;
  src->field = field;
  return ar_write_stream(w, grp, name, type, (hsize_t)at[n], (hsize_t)at[lo], (hsize_t)(at[hi] - at[lo]),
                         fill_dp, src);
}

/* The tables.  Only working ranks hold them (see pp_dist_worker): rank 0
 * sends every rank the layout (pp_dist_from_root), and each working rank
 * writes one contiguous block of tables, the blocks balanced by bytes, so
 * that each selection is a single hyperslab (fragmented selections made
 * collective writes much slower), streamed from the tables in pieces of a
 * few chunks (a copy of a rank's part whole would double its memory). */
static pp_status write_dp(writer *w, const pp_archive_content *c) {
  const pp_downsets *ds = c->ds;
  const int n = ds->count;
  hid_t grp = ar_group(w, "/dp");
  if (grp < 0) return PP_ERR_IO;
  long long *first_row = pp_xmalloc(sizeof(long long) * (size_t)(2 * n + 2));
  long long *first_step = first_row + n + 1;
  layout_job lj = {c->dp, n, first_row};
  pp_status st = w->d ? pp_dist_from_root(w->d, layout_produce, layout_consume, &lj, w->err)
                      : layout_produce(&lj, NULL, w->err);
  if (st) { /* agreed: every rank leaves here */
    free(first_row);
    return ar_group_close(w, grp, st);
  }
  int lo, hi;
  const int P = w->d ? pp_dist_workers(w->d) : 1, me = w->d ? pp_dist_worker(w->d) : 0;
  my_block(first_row, first_step, n, P, me, &lo, &hi);
  dp_source src = {c->dp, first_row, first_step, ROW_K, lo, hi};
  hsize_t dn[1] = {(hsize_t)n + 1};
  if ((st = ar_write_small(w, grp, "table_first_row", H5T_NATIVE_LLONG, 1, dn, first_row)) ||
      (st = ar_write_small(w, grp, "table_first_step", H5T_NATIVE_LLONG, 1, dn, first_step)) ||
      (st = write_field(w, grp, "row_k", H5T_NATIVE_INT, &src, ROW_K, n)) ||
      (st = write_field(w, grp, "row_first_step", H5T_NATIVE_LLONG, &src, ROW_FIRST_STEP, n)) ||
      (st = write_field(w, grp, "step_s", H5T_NATIVE_INT, &src, STEP_S, n)) ||
      (st = write_field(w, grp, "step_value", H5T_NATIVE_DOUBLE, &src, STEP_VALUE, n)) ||
      (st = ar_attr_int(w, grp, "devices", c->p->devices)))
    goto done;
  st = ar_attr_int(w, grp, "max_s", pp_problem_max_s(c->p));
done:
  free(first_row);
  return ar_group_close(w, grp, st);
}

static pp_status write_plan(writer *w, const pp_graph *g, const pp_problem *p, const pp_plan *plan) {
  hid_t grp = ar_group(w, "/plan");
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
  if ((st = ar_attr_int(w, grp, "feasible", ns > 0)) ||
      (st = ar_attr_double(w, grp, "tps", ns ? plan->tps : INFINITY)) ||
      (st = ar_attr_int(w, grp, "devices_used", ns ? plan->devices_used : 0)) ||
      (st = ar_attr_int(w, grp, "sum_dp_degrees", ns ? plan->sum_d : 0)) ||
      (st = ar_attr_int(w, grp, "stages", ns)) || (st = ar_attr_int(w, grp, "budget", p->devices)))
    goto done;
  if ((st = ar_write_small(w, grp, "stage_d", H5T_NATIVE_INT, 1, dsn, sd)) ||
      (st = ar_write_small(w, grp, "stage_t", H5T_NATIVE_INT, 1, dsn, st_t)) ||
      (st = ar_write_small(w, grp, "stage_devices", H5T_NATIVE_INT, 1, dsn, sdev)) ||
      (st = ar_write_small(w, grp, "stage_y", H5T_NATIVE_INT, 1, dsn, sy)) ||
      (st = ar_write_small(w, grp, "stage_load", H5T_NATIVE_DOUBLE, 1, dsn, load)) ||
      (st = ar_write_small(w, grp, "stage_memory", H5T_NATIVE_DOUBLE, 1, dsn, mem)) ||
      (st = ar_write_small(w, grp, "stage_first_node", H5T_NATIVE_INT, 1, dsn1, sfirst)) ||
      (st = ar_write_small(w, grp, "node_id", H5T_NATIVE_LLONG, 1, dn, nid)) ||
      (st = ar_write_small(w, grp, "node_stage", H5T_NATIVE_INT, 1, dn, nstage)))
    goto done;
  st = ar_write_strings(w, grp, "node_tmpc", ntm, total);
done:
  free(sd);
  free(load);
  free(nid);
  free(nstage);
  free(ntm);
  return ar_group_close(w, grp, st);
}

static pp_status write_curve(writer *w, const pp_archive_content *c) {
  hid_t grp = ar_group(w, "/curve");
  if (grp < 0) return PP_ERR_IO;
  int K = c->p->devices;
  int *k = pp_xmalloc(sizeof(int) * (size_t)K);
  double *tps = pp_xmalloc(sizeof(double) * (size_t)K);
  for (int i = 0; i < K; i++) {
    k[i] = i + 1;
    tps[i] = w->rank != 0 ? 0 : c->dp ? pp_dp_optimum(c->dp, i + 1) : c->curve[i]; /* rank 0 writes it */
  }
  hsize_t dims[1] = {(hsize_t)K};
  pp_status st = ar_write_small(w, grp, "k", H5T_NATIVE_INT, 1, dims, k);
  if (!st) st = ar_write_small(w, grp, "tps", H5T_NATIVE_DOUBLE, 1, dims, tps);
  free(k);
  free(tps);
  return ar_group_close(w, grp, st);
}

static pp_status write_run(writer *w, const pp_run_record *r) {
  hid_t grp = ar_group(w, "/run");
  if (grp < 0) return PP_ERR_IO;
  pp_status st;
  if ((st = ar_attr_int(w, grp, "ranks", r->ranks)) ||
      (st = ar_attr_string(w, grp, "version", PIPER_VERSION)) ||
      (st = ar_attr_double(w, grp, "seconds_enumerate", r->seconds_enumerate)) ||
      (st = ar_attr_double(w, grp, "seconds_dp", r->seconds_dp)) ||
      (st = ar_attr_double(w, grp, "seconds_exchange", r->seconds_exchange)) ||
      (st = ar_attr_double(w, grp, "seconds_before_write", r->seconds_total)) ||
      (st = ar_attr_double(w, grp, "bytes_exchanged", r->bytes_exchanged)) ||
      (st = ar_attr_double(w, grp, "peak_rss_bytes", r->peak_rss_bytes)) ||
      (st = ar_attr_int(w, grp, "resumed", r->resumed)))
    goto done;
  {
    const char **names = pp_xmalloc(sizeof(char *) * (size_t)(r->ranks + 1));
    for (int i = 0; i < r->ranks; i++) names[i] = r->hostnames + (size_t)i * (size_t)r->host_width;
    st = ar_write_strings(w, grp, "hostnames", names, r->ranks);
    free(names);
  }
done:
  return ar_group_close(w, grp, st);
}

pp_status pp_archive_write(pp_dist *d, const char *path, const pp_archive_content *c, double *seconds,
                           pp_error *err) {
  double t0 = pp_now();
  char tmp[PP_PATH_MAX];
  ar_quiet_state q;
  ar_quiet(&q);
  writer w;
  pp_status st = ar_create(&w, d, path, tmp, err);
  if (st) goto out;
  /* Every step is collective; stop at the first failure on any rank. */
  if ((st = ar_agree(&w, write_problem(&w, c))) || (st = ar_agree(&w, write_graph(&w, c->g))) ||
      (st = ar_agree(&w, write_downsets(&w, c->ds))) || (c->dp && (st = ar_agree(&w, write_dp(&w, c)))) ||
      (st = ar_agree(&w, write_plan(&w, c->g, c->p, c->plan))) || (st = ar_agree(&w, write_curve(&w, c))) ||
      (st = ar_agree(&w, write_run(&w, &c->run))))
    goto done;
  {
    /* the write time so far (all but the final close), the same on every rank */
    double so_far = pp_now() - t0;
    if (d) so_far = pp_dist_max(d, so_far);
    hid_t run = H5Gopen2(w.file, "/run", H5P_DEFAULT);
    st = run < 0 ? ar_fail(&w, "reopening /run") : ar_attr_double(&w, run, "seconds_write", so_far);
    if (run >= 0 && H5Gclose(run) < 0 && !st) st = ar_fail(&w, "closing /run");
  }
done:
  st = ar_close(&w, st, tmp);
out:
  ar_unquiet(&q);
  if (seconds) *seconds = pp_now() - t0;
  return st;
}
