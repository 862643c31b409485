/*
 * layer_install.c - the received parts of a layer joined into whole tables
 * (see include/piper/layer.h).  Pure.
 */
#include <stdlib.h>

#include "piper/layer.h"

/* A received part: the table of one k-range of one downset. */
typedef struct part {
  int id;
  pp_stairs *t;
} part;

static int cmp_part(const void *x, const void *y) {
  const part *a = x, *b = y;
  if (a->id != b->id) return (a->id > b->id) - (a->id < b->id);
  return (a->t->k_first > b->t->k_first) - (a->t->k_first < b->t->k_first);
}

static void free_parts(part *parts, int from, int n) {
  for (int i = from; i < n; i++) pp_stairs_free(parts[i].t);
  free(parts);
}

/* The id of the record at r, which is left in place; -1 if its header is bad. */
static int peek_id(const pp_unpack *r) {
  pp_unpack c = *r;
  int id;
  return pp_stairs_skip(&c, &id) ? -1 : id;
}

/* Unpacks every part in buf[len] that names a downset in [lo, hi) (and
 * skips those of [a, b) outside it); returns their number in *n_out and the
 * array, or NULL (with the error set). */
static part *unpack_parts(const char *buf, size_t len, int a, int b, int lo, int hi, int *n_out,
                          pp_status bad_code, const char *what, pp_error *err) {
  pp_unpack r;
  pp_unpack_init(&r, buf, len);
  part *parts = NULL;
  int n = 0, cap = 0;
  while (pp_unpack_left(&r) > 0) {
    int id = peek_id(&r);
    if (id >= a && id < b && (id < lo || id >= hi) && !pp_stairs_skip(&r, &id)) continue;
    pp_stairs *t = pp_stairs_unpack(&r, &id);
    if (!t || id < a || id >= b) {
      pp_stairs_free(t);
      free_parts(parts, 0, n);
      if (t)
        pp_error_set(err, bad_code, "%s: a table names downset %d, outside %d..%d", what, id, a, b - 1);
      else
        pp_error_set(err, bad_code, "%s: malformed table data at byte %zu of %zu", what, r.pos, len);
      return NULL;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      parts = pp_xrealloc(parts, sizeof *parts * (size_t)cap);
    }
    parts[n++] = (part){id, t};
  }
  *n_out = n;
  return parts ? parts : pp_xmalloc(sizeof *parts);
}

/* 1 if parts[i..j) (one downset, sorted by k_first) cover 0..K once. */
static int covers(const part *parts, int i, int j, int K) {
  if (parts[i].t->k_first != 0 || parts[j - 1].t->k_last != K) return 0;
  for (int x = i + 1; x < j; x++)
    if (parts[x].t->k_first != parts[x - 1].t->k_last + 1) return 0;
  return 1;
}

pp_status pp_layer_install(const char *buf, size_t len, int a, int b, int K, const pp_dp *join_dp,
                           pp_table_sink sink, void *user, pp_status bad_code, const char *what,
                           pp_error *err) {
  return pp_layer_install_range(buf, len, a, b, a, b, K, join_dp, sink, user, bad_code, what, err);
}

void pp_layer_install_cuts(const char *buf, size_t len, int a, int b, int parts, int *cut) {
  double *bytes = pp_xcalloc((size_t)(b - a) + 1, sizeof(double)), total = 0;
  pp_unpack r;
  pp_unpack_init(&r, buf, len);
  while (pp_unpack_left(&r) > 0) {
    const size_t at = r.pos;
    int id;
    if (pp_stairs_skip(&r, &id)) break;
    if (id < a || id >= b) continue;
    bytes[id - a] += (double)(r.pos - at);
    total += (double)(r.pos - at);
  }
  /* range i ends at the first downset whose running sum reaches (i + 1) / parts of all */
  double run = 0;
  int id = a;
  cut[0] = a;
  for (int i = 0; i < parts; i++) {
    const double goal = total * (i + 1) / parts;
    while (id < b && (i == parts - 1 || run + bytes[id - a] / 2 < goal)) run += bytes[id++ - a];
    cut[i + 1] = id;
  }
  free(bytes);
}

pp_status pp_layer_install_range(const char *buf, size_t len, int a, int b, int lo, int hi, int K,
                                 const pp_dp *join_dp, pp_table_sink sink, void *user, pp_status bad_code,
                                 const char *what, pp_error *err) {
  int n = 0;
  part *parts = unpack_parts(buf, len, a, b, lo, hi, &n, bad_code, what, err);
  if (!parts) return bad_code;
  qsort(parts, (size_t)n, sizeof *parts, cmp_part);
  int expect = lo;
  for (int i = 0; i < n;) {
    const int id = parts[i].id;
    int j = i;
    while (j < n && parts[j].id == id) j++;
    if (id != expect || !covers(parts, i, j, K)) {
      free_parts(parts, i, n);
      if (id != expect) return pp_error_set(err, bad_code, "%s: no table for downset %d", what, expect);
      return pp_error_set(err, bad_code, "%s: the tables of downset %d do not cover k = 0..%d once", what, id,
                          K);
    }
    pp_stairs *full = parts[i].t;
    if (j - i > 1) {
      pp_stairs **group = pp_xmalloc(sizeof *group * (size_t)(j - i));
      for (int x = i; x < j; x++) group[x - i] = parts[x].t;
      full = join_dp ? pp_dp_join(join_dp, group, j - i) : pp_stairs_join(group, j - i);
      for (int x = i; x < j; x++) pp_stairs_free(parts[x].t);
      free(group);
    }
    pp_status st = sink(user, id, full, err);
    if (st) {
      free_parts(parts, j, n);
      return st;
    }
    expect = id + 1;
    i = j;
  }
  free(parts);
  if (expect != hi) return pp_error_set(err, bad_code, "%s: no table for downset %d", what, expect);
  return PP_OK;
}

pp_status pp_layer_sink_dp(void *user, int id, pp_stairs *table, pp_error *err) {
  (void)err;
  pp_dp_set_table(user, id, table);
  return PP_OK;
}
