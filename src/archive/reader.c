/*
 * reader.c - opening an archive and reading its graph, problem, downsets,
 * tables and plan back (see include/piper/archive.h).  Single process.
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

struct pp_archive {
  pp_graph *g;
  pp_problem p;
  pp_downsets *ds;
  pp_dp *dp;
  hid_t file;
};

static pp_status read_input(hid_t file, const char *path, pp_graph **g, pp_error *err) {
  hid_t ds = H5Dopen2(file, "/problem/input_json", H5P_DEFAULT);
  if (ds < 0) return ar_bad(err, path, "/problem/input_json is missing");
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
  if ((st = ar_read_all(file, path, "/dp/table_first_row", H5T_NATIVE_LLONG, &fr, &nfr, err)) ||
      (st = ar_read_all(file, path, "/dp/table_first_step", H5T_NATIVE_LLONG, &fs, &nfs, err)) ||
      (st = ar_read_all(file, path, "/dp/row_k", H5T_NATIVE_INT, &rk, &nrk, err)) ||
      (st = ar_read_all(file, path, "/dp/row_first_step", H5T_NATIVE_LLONG, &rf, &nrf, err)) ||
      (st = ar_read_all(file, path, "/dp/step_s", H5T_NATIVE_INT, &ss, &nss, err)) ||
      (st = ar_read_all(file, path, "/dp/step_value", H5T_NATIVE_DOUBLE, &sv, &nsv, err)))
    goto done;
  const long long *first_row = fr, *first_step = fs, *row_step = rf;
  const int *row_k = rk, *step_s = ss;
  const double *step_v = sv;
  int n = a->ds->count, K = a->p.devices, S = pp_problem_max_s(&a->p);
  if (nfr != (size_t)n + 1 || nfs != (size_t)n + 1 || nrk != nrf || nss != nsv || first_row[0] != 0 ||
      first_step[0] != 0 || (size_t)first_row[n] != nrk || (size_t)first_step[n] != nss) {
    st = ar_bad(err, path, "/dp datasets have inconsistent sizes");
    goto done;
  }
  for (int i = 0; i < n; i++) {
    long long r0 = first_row[i], r1 = first_row[i + 1], s0 = first_step[i], s1 = first_step[i + 1];
    if (r1 <= r0 || s1 <= s0 || s1 - s0 > (long long)(K + 1) * (S + 1)) {
      st = ar_bad(err, path, "/dp table offsets are out of range");
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
      st = ar_bad(err, path, "/dp tables are damaged");
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
  a->file = ar_open_for_reading(path, err);
  pp_status st = PP_ERR_INPUT;
  void *members = NULL;
  if (a->file < 0) goto done;
  if ((st = ar_read_problem(a->file, path, &a->p, err))) goto done;
  if ((st = read_input(a->file, path, &a->g, err))) goto done;
  if (a->p.planner == PP_PLANNER_EQUI) goto done; /* no downsets, no tables */
  size_t nm;
  if ((st = ar_read_all(a->file, path, "/downsets/members", H5T_NATIVE_UCHAR, &members, &nm, err))) goto done;
  {
    int n = a->g->n_nodes, words = pp_bits_words(n);
    size_t count = n ? nm / (size_t)n : 0;
    if (n == 0 || nm % (size_t)n || count < 2 || count > 100000000) {
      st = ar_bad(err, path, "/downsets/members has the wrong shape");
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
      st = ar_bad(err, path, "/downsets are inconsistent");
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
  if (ar_read_attr(a->file, "/plan", "feasible", H5T_NATIVE_LLONG, &feasible))
    return ar_bad(err, path, "/plan is missing");
  if (!feasible) {
    *out = pp_plan_new(0);
    return PP_OK;
  }
  void *d = NULL, *t = NULL, *first = NULL, *nid = NULL, *tm = NULL;
  size_t nd, nt, nf, nn, ntm;
  pp_status st;
  pp_plan *plan = NULL;
  hid_t tmt = H5I_INVALID_HID;
  if ((st = ar_read_all(a->file, path, "/plan/stage_d", H5T_NATIVE_INT, &d, &nd, err)) ||
      (st = ar_read_all(a->file, path, "/plan/stage_t", H5T_NATIVE_INT, &t, &nt, err)) ||
      (st = ar_read_all(a->file, path, "/plan/stage_first_node", H5T_NATIVE_INT, &first, &nf, err)) ||
      (st = ar_read_all(a->file, path, "/plan/node_id", H5T_NATIVE_LLONG, &nid, &nn, err)))
    goto done;
  {
    hid_t ds = H5Dopen2(a->file, "/plan/node_tmpc", H5P_DEFAULT);
    hid_t ft = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    size_t w = ft >= 0 ? H5Tget_size(ft) : 0;
    if (ft >= 0) H5Tclose(ft);
    if (ds >= 0) H5Dclose(ds);
    if (w == 0) {
      st = ar_bad(err, path, "/plan/node_tmpc is missing");
      goto done;
    }
    tmt = ar_string_type(w);
    if ((st = ar_read_all(a->file, path, "/plan/node_tmpc", tmt, &tm, &ntm, err))) goto done;
    if (nd != nt || nf != nd + 1 || ntm != nn || nd == 0) {
      st = ar_bad(err, path, "/plan datasets disagree");
      goto done;
    }
    const int *sd = d, *stt = t, *sf = first;
    const long long *ids = nid;
    plan = pp_plan_new((int)nd);
    plan->feasible = 1;
    for (size_t i = 0; i < nd; i++) {
      pp_plan_stage *s = &plan->stages[i];
      if (sf[i] < 0 || sf[i + 1] <= sf[i] || (size_t)sf[i + 1] > nn) {
        st = ar_bad(err, path, "/plan stage bounds");
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
          st = ar_bad(err, path, "/plan names a node or TMPC the graph does not have");
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
