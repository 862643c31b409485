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

/* Unpacks every part in buf[len] that names a downset in [a, b); returns
 * their number in *n_out and the array, or NULL (with the error set). */
static part *unpack_parts(const char *buf, size_t len, int a, int b, int *n_out, pp_status bad_code,
                          const char *what, pp_error *err) {
  pp_unpack r;
  pp_unpack_init(&r, buf, len);
  part *parts = NULL;
  int n = 0, cap = 0;
  while (pp_unpack_left(&r) > 0) {
    int id;
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
  int n = 0;
  part *parts = unpack_parts(buf, len, a, b, &n, bad_code, what, err);
  if (!parts) return bad_code;
  qsort(parts, (size_t)n, sizeof *parts, cmp_part);
  int expect = a;
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
  if (expect != b) return pp_error_set(err, bad_code, "%s: no table for downset %d", what, expect);
  return PP_OK;
}

pp_status pp_layer_sink_dp(void *user, int id, pp_stairs *table, pp_error *err) {
  (void)err;
  pp_dp_set_table(user, id, table);
  return PP_OK;
}
