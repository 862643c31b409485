/*
 * graph_json_get.c - typed reads of JSON values for the input reader
 * (graph_json.c): numbers, integers and integer keys with their range
 * rules, and the messages that name the file and the JSON path of the
 * offending value.  Pure apart from jansson: no I/O.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "graph_json.h"

pp_status pp_json_fail(parser *p, const char *path, const char *fmt, ...) {
  char what[PP_ERROR_MSG_MAX / 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return pp_error_set(p->err, PP_ERR_INPUT, "%s: %s%s%s", p->file, path, path[0] ? ": " : "", what);
}

num_text pp_json_show(double v) {
  num_text t;
  for (int prec = 6; prec <= 17; prec++) {
    snprintf(t.s, sizeof t.s, "%.*g", prec, v);
    if (strtod(t.s, NULL) == v) break;
  }
  return t;
}

const char *pp_json_type_name(const json_t *j) {
  switch (json_typeof(j)) {
  case JSON_OBJECT:
    return "an object";
  case JSON_ARRAY:
    return "an array";
  case JSON_STRING:
    return "a string";
  case JSON_INTEGER:
    return "an integer";
  case JSON_REAL:
    return "a number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "a boolean";
  case JSON_NULL:
    return "null";
  }
  return "something else";
}

/* Reads a finite number >= 0 (or > 0 when positive) at obj.key. */
pp_status pp_json_number(parser *p, const json_t *obj, const char *key, const char *path, int positive,
                         double *out) {
  char full[PATH_MAX_LEN];
  snprintf(full, sizeof full, "%s%s%s", path, path[0] ? "." : "", key);
  json_t *j = json_object_get(obj, key);
  if (!j) return pp_json_fail(p, full, "missing");
  if (!json_is_number(j)) return pp_json_fail(p, full, "must be a number, got %s", pp_json_type_name(j));
  double v = json_number_value(j);
  if (!isfinite(v)) return pp_json_fail(p, full, "must be finite");
  if (positive && !(v > 0)) return pp_json_fail(p, full, "must be > 0, got %s", pp_json_show(v).s);
  if (v < 0) return pp_json_fail(p, full, "must be >= 0, got %s", pp_json_show(v).s);
  *out = v;
  return PP_OK;
}

/* Reads an optional finite number >= 0 at obj.key: PP_OK with *present = 0
 * when the key is absent. */
pp_status pp_json_optional_number(parser *p, const json_t *obj, const char *key, const char *path,
                                  int positive, double *out, int *present) {
  *present = json_object_get(obj, key) != NULL;
  return *present ? pp_json_number(p, obj, key, path, positive, out) : PP_OK;
}

/* Reads an integer in [lo, hi] at obj.key (integral reals accepted). */
pp_status pp_json_int(parser *p, const json_t *obj, const char *key, const char *path, long long lo,
                      long long hi, long long *out) {
  char full[PATH_MAX_LEN];
  snprintf(full, sizeof full, "%s%s%s", path, path[0] ? "." : "", key);
  json_t *j = json_object_get(obj, key);
  if (!j) return pp_json_fail(p, full, "missing");
  long long v;
  if (json_is_integer(j)) {
    v = json_integer_value(j);
  } else if (json_is_real(j)) {
    double d = json_real_value(j);
    if (!(d == floor(d)) || d < -9e18 || d > 9e18)
      return pp_json_fail(p, full, "must be an integer, got %s", pp_json_show(d).s);
    v = (long long)d;
  } else {
    return pp_json_fail(p, full, "must be an integer, got %s", pp_json_type_name(j));
  }
  if (v < lo || v > hi) return pp_json_fail(p, full, "must be between %lld and %lld, got %lld", lo, hi, v);
  *out = v;
  return PP_OK;
}

/* Parses an object key that must be a decimal integer written the canonical
 * way ("2", "17", "-3"; not "02", "+2", "-0", " 2" or "2.0") and lie in
 * [lo, hi].  Returns 0 and sets *out on success, -1 otherwise. */
int pp_json_key_int(const char *s, long long lo, long long hi, long long *out) {
  const char *q = s;
  if (*q == '-') q++;
  if (*q < '0' || *q > '9') return -1;
  if (q[0] == '0' && (q[1] != '\0' || q != s)) return -1; /* "0" only: no "01", no "-0" */
  for (const char *c = q; *c; c++)
    if (*c < '0' || *c > '9') return -1;
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

/* Writes path["key"] into buf (of size n), with the key quoted the way JSON
 * would write it and cut after 40 characters, so a hostile key can neither
 * overflow the message nor put control characters on the terminal. */
void pp_json_key_path(char *buf, size_t n, const char *path, const char *key) {
  char q[256];
  size_t o = 0;
  int shown = 0;
  for (const unsigned char *c = (const unsigned char *)key; *c && o < sizeof q - 8; c++) {
    if (shown++ == 40) {
      memcpy(q + o, "...", 3);
      o += 3;
      break;
    }
    if (*c == '"' || *c == '\\') {
      q[o++] = '\\';
      q[o++] = (char)*c;
    } else if (*c < 0x20 || *c == 0x7f) {
      o += (size_t)snprintf(q + o, sizeof q - o, "\\u%04x", *c);
    } else {
      q[o++] = (char)*c;
    }
  }
  q[o] = '\0';
  snprintf(buf, n, "%s[\"%s\"]", path, q);
}
