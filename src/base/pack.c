/*
 * pack.c - bounds-checked packing (see include/piper/pack.h).
 */
#include "piper/pack.h"

#include <stdlib.h>
#include <string.h>

#include "piper/error.h"

_Static_assert(sizeof(int) == 4, "piper's packed format assumes 32-bit int");

void pp_pack_init(pp_pack *w) { memset(w, 0, sizeof *w); }

void pp_pack_free(pp_pack *w) {
  free(w->buf);
  pp_pack_init(w);
}

void pp_pack_bytes(pp_pack *w, const void *p, size_t n) {
  if (n == 0) return;
  if (n > w->cap - w->len) {
    size_t cap = w->cap ? w->cap : 4096;
    while (n > cap - w->len) cap *= 2;
    w->buf = pp_xrealloc(w->buf, cap);
    w->cap = cap;
  }
  memcpy(w->buf + w->len, p, n);
  w->len += n;
}

void pp_pack_i32(pp_pack *w, int32_t v) { pp_pack_bytes(w, &v, sizeof v); }
void pp_pack_i64(pp_pack *w, int64_t v) { pp_pack_bytes(w, &v, sizeof v); }
void pp_pack_f64(pp_pack *w, double v) { pp_pack_bytes(w, &v, sizeof v); }
void pp_pack_ints(pp_pack *w, const int *v, size_t n) { pp_pack_bytes(w, v, sizeof(int) * n); }
void pp_pack_doubles(pp_pack *w, const double *v, size_t n) { pp_pack_bytes(w, v, sizeof(double) * n); }

char *pp_pack_take(pp_pack *w, size_t *len) {
  char *b = w->buf;
  *len = w->len;
  pp_pack_init(w);
  return b;
}

void pp_unpack_init(pp_unpack *r, const void *buf, size_t len) {
  r->buf = buf;
  r->len = buf ? len : 0;
  r->pos = 0;
  r->bad = 0;
}

size_t pp_unpack_left(const pp_unpack *r) { return r->bad ? 0 : r->len - r->pos; }
int pp_unpack_ok(const pp_unpack *r) { return !r->bad; }
int pp_unpack_done(const pp_unpack *r) { return !r->bad && r->pos == r->len; }

const void *pp_unpack_skip(pp_unpack *r, size_t n) {
  if (r->bad || n > r->len - r->pos) {
    r->bad = 1;
    return NULL;
  }
  const void *p = r->buf + r->pos;
  r->pos += n;
  return p;
}

int pp_unpack_bytes(pp_unpack *r, void *out, size_t n) {
  const void *p = pp_unpack_skip(r, n);
  if (!p) {
    if (n) memset(out, 0, n);
    return -1;
  }
  if (n) memcpy(out, p, n);
  return 0;
}

int pp_unpack_i32(pp_unpack *r, int32_t *v) { return pp_unpack_bytes(r, v, sizeof *v); }
int pp_unpack_i64(pp_unpack *r, int64_t *v) { return pp_unpack_bytes(r, v, sizeof *v); }
int pp_unpack_f64(pp_unpack *r, double *v) { return pp_unpack_bytes(r, v, sizeof *v); }

int pp_unpack_int_in(pp_unpack *r, int32_t lo, int32_t hi, int *v) {
  int32_t x;
  if (pp_unpack_i32(r, &x) || x < lo || x > hi) {
    r->bad = 1;
    *v = lo;
    return -1;
  }
  *v = x;
  return 0;
}

int pp_unpack_has(pp_unpack *r, size_t n, size_t size) {
  if (r->bad || (size && n > (r->len - r->pos) / size)) {
    r->bad = 1;
    return 0;
  }
  return 1;
}

int pp_unpack_ints(pp_unpack *r, int *v, size_t n) {
  if (!pp_unpack_has(r, n, sizeof(int))) return -1;
  return pp_unpack_bytes(r, v, sizeof(int) * n);
}

int pp_unpack_doubles(pp_unpack *r, double *v, size_t n) {
  if (!pp_unpack_has(r, n, sizeof(double))) return -1;
  return pp_unpack_bytes(r, v, sizeof(double) * n);
}
