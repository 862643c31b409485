/*
 * layer_install.c - the received parts of a layer joined into whole tables
 * (see include/piper/layer.h): the parts found by their headers, checked
 * to cover each downset's budgets once, and joined, either by one
 * installer (pp_layer_install) or side by side by several, each making the
 * pieces of its range of parts (pp_layer_piece).  Pure.
 */
#include <stdlib.h>

#include "piper/layer.h"

static int cmp_part(const void *x, const void *y) {
  const pp_layer_part *a = x, *b = y;
  if (a->id != b->id) return (a->id > b->id) - (a->id < b->id);
  return (a->k_first > b->k_first) - (a->k_first < b->k_first);
}

int pp_layer_part_index(const pp_layer_part *parts, int n, int id, int k_first) {
  const pp_layer_part key = {.id = id, .k_first = k_first};
  const pp_layer_part *p = n > 0 ? bsearch(&key, parts, (size_t)n, sizeof *parts, cmp_part) : NULL;
  return p ? (int)(p - parts) : -1;
}

/* 1 if parts[i..j) (one downset, sorted by k_first) cover 0..K once. */
static int covers(const pp_layer_part *parts, int i, int j, int K) {
  if (parts[i].k_first != 0 || parts[j - 1].k_last != K) return 0;
  for (int x = i + 1; x < j; x++)
    if (parts[x].k_first != parts[x - 1].k_last + 1) return 0;
  return 1;
}

/* Reads the header of the record at r into *p (r advances past the
 * record); -1 if it is bad. */
static int read_part(pp_unpack *r, pp_layer_part *p) {
  const size_t at = r->pos;
  pp_unpack c = *r;
  int id;
  if (pp_stairs_skip(r, &id)) return -1;
  int32_t head[3]; /* id, k_first, k_last: checked by pp_stairs_skip */
  for (int i = 0; i < 3; i++) pp_unpack_i32(&c, &head[i]);
  *p = (pp_layer_part){id, head[1], head[2], at, r->pos - at};
  return 0;
}

pp_layer_part *pp_layer_parts(const char *buf, size_t len, int a, int b, int K, int *n_out,
                              pp_status bad_code, const char *what, pp_error *err) {
  pp_unpack r;
  pp_unpack_init(&r, buf, len);
  pp_layer_part *parts = NULL;
  int n = 0, cap = 0;
  while (pp_unpack_left(&r) > 0) {
    pp_layer_part p;
    if (read_part(&r, &p) || p.id < a || p.id >= b) {
      free(parts);
      if (r.bad)
        pp_error_set(err, bad_code, "%s: malformed table data at byte %zu of %zu", what, r.pos, len);
      else
        pp_error_set(err, bad_code, "%s: a table names downset %d, outside %d..%d", what, p.id, a, b - 1);
      return NULL;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      parts = pp_xrealloc(parts, sizeof *parts * (size_t)cap);
    }
    parts[n++] = p;
  }
  if (!parts) parts = pp_xmalloc(sizeof *parts);
  qsort(parts, (size_t)n, sizeof *parts, cmp_part);
  int expect = a;
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && parts[j].id == parts[i].id) j++;
    if (parts[i].id != expect || !covers(parts, i, j, K)) {
      if (parts[i].id != expect)
        pp_error_set(err, bad_code, "%s: no table for downset %d", what, expect);
      else
        pp_error_set(err, bad_code, "%s: the tables of downset %d do not cover k = 0..%d once", what,
                     parts[i].id, K);
      free(parts);
      return NULL;
    }
    expect = parts[i].id + 1;
    i = j;
  }
  if (expect != b) {
    free(parts);
    pp_error_set(err, bad_code, "%s: no table for downset %d", what, expect);
    return NULL;
  }
  *n_out = n;
  return parts;
}

void pp_layer_part_cuts(const pp_layer_part *parts, int n, int P, int *cut) {
  double total = 0, run = 0;
  for (int i = 0; i < n; i++) total += (double)parts[i].bytes;
  /* range q ends at the first part whose running sum reaches (q + 1) / P of all */
  int i = 0;
  cut[0] = 0;
  for (int q = 0; q < P; q++) {
    const double goal = total * (q + 1) / P;
    while (i < n && (q == P - 1 || run + (double)parts[i].bytes / 2 < goal)) run += (double)parts[i++].bytes;
    cut[q + 1] = i;
  }
}

/* Unpacks the whole record of part p, or only its whole last row
 * (pp_dp_unpack_tail of dp). */
static pp_stairs *unpack_part(const char *buf, const pp_layer_part *p, int last_row_only, const pp_dp *dp) {
  pp_unpack r;
  pp_unpack_init(&r, buf + p->at, p->bytes);
  int id;
  pp_stairs *t = last_row_only ? pp_dp_unpack_tail(dp, &r, &id) : pp_stairs_unpack(&r, &id);
  if (t && (!pp_unpack_done(&r) || id != p->id)) {
    pp_stairs_free(t);
    return NULL;
  }
  return t;
}

pp_stairs *pp_layer_piece_of(const char *buf, const pp_layer_part *parts, int i, pp_stairs *part,
                             const pp_dp *join_dp, int *skip, pp_status bad_code, const char *what,
                             pp_error *err) {
  pp_stairs *seam = NULL;
  int first = i;
  while (first > 0 && parts[first - 1].id == parts[i].id) first--;
  for (int x = first; part && x < i; x++) { /* the seam before part i */
    pp_stairs *tail = unpack_part(buf, &parts[x], 1, join_dp),
              *next = tail ? pp_dp_seam(join_dp, seam, tail) : NULL;
    pp_stairs_free(tail);
    pp_stairs_free(seam);
    seam = next;
    if (!seam) {
      pp_stairs_free(part);
      part = NULL;
    }
  }
  if (!part) {
    pp_stairs_free(seam);
    pp_error_set(err, bad_code, "%s: malformed table data for downset %d", what, parts[i].id);
    return NULL;
  }
  if (!seam) {
    *skip = 0;
    pp_dp_index_table(join_dp, part);
    return part;
  }
  pp_stairs *piece = pp_dp_segment(join_dp, seam, part, skip);
  pp_stairs_free(seam);
  return piece;
}

pp_stairs *pp_layer_piece(const char *buf, const pp_layer_part *parts, int i, const pp_dp *join_dp, int *skip,
                          pp_status bad_code, const char *what, pp_error *err) {
  return pp_layer_piece_of(buf, parts, i, unpack_part(buf, &parts[i], 0, NULL), join_dp, skip, bad_code, what,
                           err);
}

pp_status pp_layer_install(const char *buf, size_t len, int a, int b, int K, const pp_dp *join_dp,
                           pp_table_sink sink, void *user, pp_status bad_code, const char *what,
                           pp_error *err) {
  int n = 0;
  pp_layer_part *parts = pp_layer_parts(buf, len, a, b, K, &n, bad_code, what, err);
  if (!parts) return bad_code;
  pp_stairs **group = pp_xmalloc(sizeof *group * (size_t)(n + 1));
  pp_status st = PP_OK;
  for (int i = 0; i < n && !st;) {
    int j = i;
    while (j < n && parts[j].id == parts[i].id) j++;
    int got = 0;
    for (; i + got < j; got++)
      if (!(group[got] = unpack_part(buf, &parts[i + got], 0, NULL))) break;
    if (i + got < j) {
      st = pp_error_set(err, bad_code, "%s: malformed table data for downset %d", what, parts[i].id);
    } else if (got == 1) {
      st = sink(user, parts[i].id, group[0], err);
      got = 0; /* the sink took it */
    } else {
      st = sink(user, parts[i].id, pp_dp_join(join_dp, group, got), err);
    }
    for (int x = 0; x < got; x++) pp_stairs_free(group[x]);
    i = j;
  }
  free(group);
  free(parts);
  return st;
}

pp_status pp_layer_sink_dp(void *user, int id, pp_stairs *table, pp_error *err) {
  (void)err;
  pp_dp_set_table(user, id, table);
  return PP_OK;
}
