/*
 * reader.c - opening an archive and reading its graph, problem, downsets,
 * tables and plan back (see include/piper/archive.h).  Single process.
 *
 * Nothing in the file is trusted: every dataset is checked for class, shape
 * and size before it is read (ar_read_ds), every table for the invariants
 * of the DP (pp_dp_table_valid: staircases or Pareto rows, by the
 * problem's schedule), and the parts against each other: the
 * identity and digest against the stored input, the downsets against a
 * fresh enumeration of its graph, /dp's attributes and /curve against
 * /problem and the tables, and /plan against the checker.
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
#include "piper/check.h"

struct pp_archive {
  pp_graph *g;
  pp_problem p;
  pp_downsets *ds;
  pp_dp *dp;
  hid_t file;
  char *path;
  /* 1 while a child process reads the file for pp_archive_open's probe:
   * every dataset and attribute the check reads is read, but nothing is
   * built from /dp and nothing is checked against its tables. */
  int probe;
};

/* The stored input (a scalar fixed-length string), parsed as piper parses
 * its input, then checked against the stored digests. */
static pp_status read_input(hid_t file, const char *path, const pp_problem *p, pp_graph **g, pp_error *err) {
  ar_data in;
  pp_status st = ar_read_ds(file, path, "/problem/input_json", AR_STR, 0, 0, 1, &in, err);
  if (st) return st;
  char name[4300], sha[65], want[80], ident[65], want_ident[80], input_path[PP_PATH_MAX + 100];
  /* the JSON reader's messages then read "<path>: not a valid piper
   * archive: /problem/input_json: line L, column C: ..." */
  snprintf(name, sizeof name, "%s: not a valid piper archive: /problem/input_json", path);
  size_t len = strnlen(in.buf, in.width);
  st = pp_graph_load_buffer(name, in.buf, len, NULL, g, err);
  if (!st) st = ar_attr_get_string(file, path, "/problem", "input_sha256", want, sizeof want, err);
  if (!st) st = ar_attr_get_string(file, path, "/problem", "identity", want_ident, sizeof want_ident, err);
  if (!st) st = ar_attr_get_string(file, path, "/problem", "input_path", input_path, sizeof input_path, err);
  if (!st) {
    pp_graph_input_sha256(*g, sha);
    pp_archive_identity(*g, p, ident);
    if (strcmp(sha, want) != 0)
      st = ar_bad(err, path, "/problem/input_json",
                  "its SHA-256 differs from /problem attribute input_sha256");
    else if (strcmp(ident, want_ident) != 0)
      st = ar_bad(err, path, "/problem",
                  "the attributes do not match the identity the archive was written with");
  }
  free(in.buf);
  return st;
}

/* /downsets/members must list exactly the downsets of the graph, in the
 * order piper enumerates them (which is rebuilt here). */
static pp_status read_downsets(hid_t file, const char *path, pp_archive *a, pp_error *err) {
  long long count;
  pp_status st = ar_attr_get_int(file, path, "/downsets", "count", 2, 1LL << 30, &count, err);
  if (st) return st;
  ar_data m;
  int n = a->g->n_nodes;
  if ((st = ar_read_ds(file, path, "/downsets/members", AR_U8, 2, (hsize_t)n, (hsize_t)count, &m, err)))
    return st;
  if (m.rows != (size_t)count) {
    free(m.buf);
    return ar_bad(err, path, "/downsets/members", "%zu rows, /downsets attribute count says %lld", m.rows,
                  count);
  }
  pp_error e2 = {0};
  if (pp_downsets_enumerate(a->g, count, &a->ds, &e2) || a->ds->count != (int)count) {
    free(m.buf);
    return ar_bad(err, path, "/downsets", "the graph has another number of downsets than %lld", count);
  }
  const unsigned char *bits = m.buf;
  for (size_t i = 0; i < (size_t)count && !st; i++)
    for (int v = 0; v < n && !st; v++)
      if ((bits[i * (size_t)n + (size_t)v] != 0) != pp_bit_get(pp_downset_bits(a->ds, (int)i), v))
        st = ar_bad(err, path, "/downsets/members", "row %zu is not the downset piper enumerates there", i);
  free(m.buf);
  return st;
}

/* /dp being read: the tables' offsets whole, their rows and steps a piece
 * at a time (ar_seq), in table order. */
typedef struct dp_reader {
  ar_data first_row, first_step;
  ar_seq seq[4]; /* row_k, row_first_step, step_s, step_value */
  int opened;
  long long *row_step; /* scratch: one table's row_first_step */
} dp_reader;

enum { ROW_K, ROW_STEP, STEP_S, STEP_V };

static void dp_reader_free(dp_reader *x) {
  free(x->first_row.buf);
  free(x->first_step.buf);
  for (int i = 0; i < x->opened; i++) ar_seq_close(&x->seq[i]);
  free(x->row_step);
}

/* Opens /dp's arrays and checks their offsets: tables of 1..K + 1 rows and
 * 1..(K + 1)(S + 1) steps each, ending where the arrays end. */
static pp_status dp_reader_open(hid_t file, const char *path, int n, int K, int S, double row_max, int probe,
                                dp_reader *x, pp_error *err) {
  memset(x, 0, sizeof *x);
  const double rows_max = (double)n * (K + 1), steps_max = rows_max * row_max;
  const hsize_t rmax = (hsize_t)fmin(rows_max, 1e15), smax = (hsize_t)fmin(steps_max, 1e15);
  static const char *const names[4] = {"/dp/row_k", "/dp/row_first_step", "/dp/step_s", "/dp/step_value"};
  static const ar_kind kinds[4] = {AR_I32, AR_I64, AR_I32, AR_F64};
  pp_status st;
  if ((st =
           ar_read_ds(file, path, "/dp/table_first_row", AR_I64, 1, 0, (hsize_t)n + 1, &x->first_row, err)) ||
      (st =
           ar_read_ds(file, path, "/dp/table_first_step", AR_I64, 1, 0, (hsize_t)n + 1, &x->first_step, err)))
    return st;
  for (; x->opened < 4; x->opened++)
    if ((st = ar_seq_open(file, path, names[x->opened], kinds[x->opened], x->opened < 2 ? rmax : smax, probe,
                          &x->seq[x->opened], err)))
      return st;
  const long long *fr = x->first_row.buf, *fs = x->first_step.buf;
  const hsize_t rows = x->seq[ROW_K].d.rows, steps = x->seq[STEP_S].d.rows;
  if (x->first_row.n != (size_t)n + 1 || x->first_step.n != (size_t)n + 1)
    return ar_bad(err, path, "/dp/table_first_row", "expected %d + 1 offsets (one per downset)", n);
  if (x->seq[ROW_STEP].d.rows != rows || x->seq[STEP_V].d.rows != steps)
    return ar_bad(err, path, "/dp", "row_k and row_first_step, or step_s and step_value, differ in length");
  if (fr[0] != 0 || fs[0] != 0 || fr[n] != (long long)rows || fs[n] != (long long)steps)
    return ar_bad(err, path, "/dp/table_first_row", "the offsets do not span the rows and steps");
  for (int i = 0; i < n; i++) {
    long long dr = fr[i + 1] - fr[i], dsx = fs[i + 1] - fs[i];
    if (dr < 1 || dr > K + 1 || dsx < dr || (double)dsx > (double)dr * row_max)
      return ar_bad(err, path, "/dp/table_first_row",
                    "table %d has %lld rows and %lld steps (K = %d, S = %d)", i, dr, dsx, K, S);
  }
  x->row_step = pp_xmalloc(sizeof(long long) * (size_t)(K + 2));
  return PP_OK;
}

/* Table i of /dp as a staircase in *out (the offsets checked by
 * dp_reader_open), or an error naming what is wrong. */
static pp_status table_of(const pp_dp *dp, dp_reader *x, int i, int K, const char *path, pp_stairs **out,
                          pp_error *err) {
  *out = NULL;
  const long long *fr = x->first_row.buf, *fs = x->first_step.buf, *rs = x->row_step;
  const long long r0 = fr[i], r1 = fr[i + 1], s0 = fs[i], s1 = fs[i + 1];
  pp_stairs *t = pp_stairs_new(0, K, (int)(r1 - r0), (int)(s1 - s0));
  const char *why = NULL;
  pp_status st;
  if ((st = ar_seq_take(&x->seq[ROW_K], (hsize_t)r0, (hsize_t)(r1 - r0), t->row_k, err)) ||
      (st = ar_seq_take(&x->seq[ROW_STEP], (hsize_t)r0, (hsize_t)(r1 - r0), x->row_step, err)) ||
      (st = ar_seq_take(&x->seq[STEP_S], (hsize_t)s0, (hsize_t)(s1 - s0), t->s, err)) ||
      (st = ar_seq_take(&x->seq[STEP_V], (hsize_t)s0, (hsize_t)(s1 - s0), t->v, err)))
    goto done;
  for (long long r = 0; r < r1 - r0 && !why; r++) {
    long long off = rs[r] - s0, next = (r + 1 < r1 - r0 ? rs[r + 1] : s1) - s0;
    if (off < 0 || next <= off || next > s1 - s0)
      why = "its row offsets (row_first_step) are out of order or out of range";
    t->row_start[r] = (int)off;
  }
  t->row_start[r1 - r0] = (int)(s1 - s0);
  if (!why && t->row_start[0] != 0) why = "its first row does not start at its first step";
  if (!why) pp_dp_table_valid(dp, i, t, &why);
  if (why) st = ar_bad(err, path, "/dp", "table %d: %s", i, why);
done:
  if (st)
    pp_stairs_free(t);
  else
    *out = t;
  return st;
}

/* Rebuilds every table from /dp, checking each; for a probe, reads the
 * tables' rows and steps in the same order and keeps none. */
static pp_status read_tables(hid_t file, const char *path, pp_archive *a, pp_error *err) {
  const int n = a->ds->count, K = a->p.devices, S = pp_problem_max_s(&a->p);
  long long dev, max_s;
  pp_status st;
  if ((st = ar_attr_get_int(file, path, "/dp", "devices", K, K, &dev, err)) ||
      (st = ar_attr_get_int(file, path, "/dp", "max_s", S, S, &max_s, err)))
    return st;
  dp_reader x;
  if ((st = dp_reader_open(file, path, n, K, S, pp_dp_row_steps_max(a->dp), a->probe, &x, err))) goto done;
  const long long *fr = x.first_row.buf, *fs = x.first_step.buf;
  for (int i = 0; i < n && !st; i++) {
    pp_stairs *t;
    if (a->probe) {
      for (int f = 0; f < 4 && !st; f++) {
        const long long *at = f < STEP_S ? fr : fs;
        st = ar_seq_take(&x.seq[f], (hsize_t)at[i], (hsize_t)(at[i + 1] - at[i]), NULL, err);
      }
    } else if (!(st = table_of(a->dp, &x, i, K, path, &t, err))) {
      pp_dp_set_table(a->dp, i, t);
    }
  }
done:
  dp_reader_free(&x);
  return st;
}

/* /curve must hold k = 1..K and the optimum of each k, as the tables say. */
static pp_status read_curve(hid_t file, const char *path, pp_archive *a, pp_error *err) {
  const int K = a->p.devices;
  ar_data k = {0}, tps = {0};
  pp_status st;
  if ((st = ar_read_ds(file, path, "/curve/k", AR_I32, 1, 0, (hsize_t)K, &k, err)) ||
      (st = ar_read_ds(file, path, "/curve/tps", AR_F64, 1, 0, (hsize_t)K, &tps, err)))
    goto done;
  if (k.n != (size_t)K || tps.n != (size_t)K) {
    st = ar_bad(err, path, "/curve", "%zu budgets in k and %zu in tps, /problem attribute devices says %d",
                k.n, tps.n, K);
    goto done;
  }
  for (int i = 0; i < K && !st && !a->probe; i++) {
    double want = pp_dp_optimum(a->dp, i + 1), got = ((const double *)tps.buf)[i];
    if (((const int *)k.buf)[i] != i + 1)
      st = ar_bad(err, path, "/curve/k", "entry %d is not %d", i, i + 1);
    else if (!(got == want))
      st = ar_bad(err, path, "/curve/tps", "the value for k = %d is not the optimum of the tables in /dp",
                  i + 1);
  }
done:
  free(k.buf);
  free(tps.buf);
  return st;
}

/* /plan's attributes against the tables, and its datasets through the
 * checker: the stored plan must be a valid plan with the optimum's TPS (to
 * the checker's relative 1e-9: the stored tps is the checker's own). */
static pp_status check_plan(pp_archive *a, pp_error *err) {
  const char *path = a->path;
  /* equi keeps no tables: its plan is checked for validity and its own tps */
  const int equi = a->p.planner == PP_PLANNER_EQUI;
  long long feasible, budget, stages;
  double tps;
  pp_status st;
  if ((st = ar_attr_get_int(a->file, path, "/plan", "feasible", 0, 1, &feasible, err)) ||
      (st = ar_attr_get_int(a->file, path, "/plan", "budget", a->p.devices, a->p.devices, &budget, err)) ||
      (st = ar_attr_get_int(a->file, path, "/plan", "stages", 0, a->g->n_nodes, &stages, err)) ||
      (st = ar_attr_get_double(a->file, path, "/plan", "tps", &tps, err)))
    return st;
  if (a->probe) { /* the datasets only */
    pp_plan *plan = NULL;
    st = pp_archive_read_plan(a, &plan, err);
    pp_plan_free(plan);
    return st;
  }
  const double opt = equi ? (feasible ? tps : INFINITY) : pp_dp_optimum(a->dp, a->p.devices);
  if (feasible != (isfinite(opt) ? 1 : 0) || (feasible && !(fabs(tps - opt) <= 1e-9 * opt)))
    return ar_bad(err, path, "/plan", "attributes feasible and tps disagree with the tables in /dp");
  pp_plan *plan = NULL;
  if ((st = pp_archive_read_plan(a, &plan, err))) return st;
  if (plan->feasible && plan->n_stages != stages)
    st = ar_bad(err, path, "/plan", "attribute stages is %lld, the datasets hold %d", stages, plan->n_stages);
  pp_error e2 = {0};
  if (!st && plan->feasible && pp_check_plan_optimum(a->g, &a->p, plan, opt, &e2))
    st = ar_bad(err, path, "/plan", "%s", e2.msg);
  pp_plan_free(plan);
  return st;
}

static pp_status open_here(const char *path, int probe, pp_archive **out, pp_error *err) {
  *out = NULL;
  ar_quiet_state q;
  ar_quiet(&q);
  pp_archive *a = pp_xcalloc(1, sizeof *a);
  a->path = pp_xstrdup(path);
  a->probe = probe;
  a->file = ar_open_for_reading(path, err);
  pp_status st = PP_ERR_INPUT;
  if (a->file < 0) goto done;
  if ((st = ar_read_problem(a->file, path, &a->p, err))) goto done;
  if ((st = read_input(a->file, path, &a->p, &a->g, err))) goto done;
  if (a->p.planner == PP_PLANNER_EQUI) { /* no downsets, no tables */
    st = check_plan(a, err);
    goto done;
  }
  if ((st = read_downsets(a->file, path, a, err))) goto done;
  if ((st = pp_dp_create(a->g, &a->p, a->ds, 0, &a->dp, err))) goto done;
  if ((st = read_tables(a->file, path, a, err))) goto done;
  if ((st = read_curve(a->file, path, a, err))) goto done;
  st = check_plan(a, err);
done:
  if (probe && !st) { /* and what a study's summary reads next (its status is the reader's to give) */
    pp_archive_summary s;
    pp_error e = {0};
    (void)ar_summary_attrs(a->file, path, a->p.devices, &s, &e);
  }
  ar_unquiet(&q);
  if (st) {
    pp_archive_close(a);
    return st;
  }
  *out = a;
  return PP_OK;
}

/* Every read of the check, in a child process (pp_isolated_run). */
static int open_probe(void *path) {
  pp_archive *a = NULL;
  pp_error e = {0};
  pp_status st = open_here(path, 1, &a, &e);
  pp_archive_close(a);
  return st != PP_OK;
}

pp_status pp_archive_open(const char *path, pp_archive **out, pp_error *err) {
  *out = NULL;
  pp_status st = ar_probe(open_probe, (void *)path, path, err);
  if (st) return st;
  return open_here(path, 0, out, err);
}

void pp_archive_close(pp_archive *a) {
  if (!a) return;
  pp_dp_free(a->dp);
  pp_downsets_free(a->ds);
  pp_graph_free(a->g);
  if (a->file >= 0) H5Fclose(a->file);
  free(a->path);
  free(a);
}

const pp_graph *pp_archive_graph(const pp_archive *a) { return a->g; }
const pp_problem *pp_archive_problem(const pp_archive *a) { return &a->p; }
const pp_downsets *pp_archive_downsets(const pp_archive *a) { return a->ds; }
pp_dp *pp_archive_dp(pp_archive *a) { return a->dp; }
const char *pp_archive_path(const pp_archive *a) { return a->path; }
hid_t ar_archive_file(const pp_archive *a) { return a->file; }

/* The datasets of /plan, checked for shape. */
typedef struct plan_arrays {
  ar_data d, t, first, id, tmpc;
} plan_arrays;

static pp_status read_plan_arrays(const pp_archive *a, plan_arrays *x, pp_error *err) {
  memset(x, 0, sizeof *x);
  const hsize_t n = (hsize_t)a->g->n_nodes;
  const char *path = a->path;
  pp_status st;
  if ((st = ar_read_ds(a->file, path, "/plan/stage_d", AR_I32, 1, 0, n, &x->d, err)) ||
      (st = ar_read_ds(a->file, path, "/plan/stage_t", AR_I32, 1, 0, n, &x->t, err)) ||
      (st = ar_read_ds(a->file, path, "/plan/stage_first_node", AR_I32, 1, 0, n + 1, &x->first, err)) ||
      (st = ar_read_ds(a->file, path, "/plan/node_id", AR_I64, 1, 0, n, &x->id, err)) ||
      (st = ar_read_ds(a->file, path, "/plan/node_tmpc", AR_STR, 1, 0, n, &x->tmpc, err)))
    return st;
  if (x->d.n != x->t.n || x->first.n != x->d.n + 1 || x->tmpc.n != x->id.n || x->d.n == 0 || x->id.n != n)
    return ar_bad(err, path, "/plan",
                  "stage_d, stage_t, stage_first_node, node_id and node_tmpc disagree in "
                  "length or do not cover the %d nodes once",
                  a->g->n_nodes);
  return PP_OK;
}

static void plan_arrays_free(plan_arrays *x) {
  free(x->d.buf);
  free(x->t.buf);
  free(x->first.buf);
  free(x->id.buf);
  free(x->tmpc.buf);
}

/* Node index of an original id, or -1. */
static int node_of(const pp_graph *g, long long id) {
  for (int u = 0; u < g->n_nodes; u++)
    if (g->nodes[u].orig_id == id) return u;
  return -1;
}

/* Fills stage i of plan from the arrays. */
static pp_status plan_stage(const pp_archive *a, const plan_arrays *x, size_t i, pp_plan_stage *s,
                            pp_error *err) {
  const int *sd = x->d.buf, *stt = x->t.buf, *sf = x->first.buf;
  const long long *ids = x->id.buf;
  const size_t w = x->tmpc.width;
  if (sf[i] < 0 || sf[i + 1] <= sf[i] || (size_t)sf[i + 1] > x->id.n || (i == 0 && sf[0] != 0))
    return ar_bad(err, a->path, "/plan/stage_first_node", "stage %zu's node range is out of order", i);
  if (sd[i] < 1 || sd[i] > a->p.devices || stt[i] < 1 || stt[i] > a->p.devices)
    return ar_bad(err, a->path, "/plan/stage_d", "stage %zu's degrees are outside 1..%d", i, a->p.devices);
  s->d = sd[i];
  s->t = stt[i];
  s->n_nodes = sf[i + 1] - sf[i];
  s->nodes = pp_xmalloc(sizeof(int) * (size_t)s->n_nodes);
  s->tmpc = pp_xmalloc(sizeof(int) * (size_t)s->n_nodes);
  for (int j = 0; j < s->n_nodes; j++) {
    size_t at = (size_t)sf[i] + (size_t)j;
    int v = node_of(a->g, ids[at]);
    const pp_tmpc_list *l = v >= 0 ? pp_graph_tmpcs(a->g, v, s->t) : NULL;
    char name[NAME_WIDTH_MAX + 1];
    memcpy(name, (const char *)x->tmpc.buf + at * w, w);
    name[w] = '\0';
    int k = -1;
    for (int q = 0; l && q < l->count && k < 0; q++)
      if (strcmp(l->tmpcs[q].id, name) == 0) k = q;
    if (k < 0)
      return ar_bad(err, a->path, "/plan/node_tmpc", "entry %zu names a node or TMPC the graph does not have",
                    at);
    s->nodes[j] = v;
    s->tmpc[j] = k;
  }
  return PP_OK;
}

pp_status pp_archive_read_plan(const pp_archive *a, pp_plan **out, pp_error *err) {
  *out = NULL;
  long long feasible = 0;
  pp_status st = ar_attr_get_int(a->file, a->path, "/plan", "feasible", 0, 1, &feasible, err);
  if (st) return st;
  if (!feasible) {
    *out = pp_plan_new(0);
    return PP_OK;
  }
  ar_quiet_state q;
  ar_quiet(&q);
  plan_arrays x;
  pp_plan *plan = NULL;
  if ((st = read_plan_arrays(a, &x, err))) goto done;
  plan = pp_plan_new((int)x.d.n);
  plan->feasible = 1;
  for (size_t i = 0; i < x.d.n && !st; i++) st = plan_stage(a, &x, i, &plan->stages[i], err);
  if (!st && ((const int *)x.first.buf)[x.d.n] != (int)x.id.n)
    st = ar_bad(err, a->path, "/plan/stage_first_node", "the last stage does not end at the last node");
done:
  plan_arrays_free(&x);
  ar_unquiet(&q);
  if (st) {
    pp_plan_free(plan);
    return st;
  }
  *out = plan;
  return PP_OK;
}
