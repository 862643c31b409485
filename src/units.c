/*
 * units.c - numbers with units: parsing and printing.
 */
#include "piper/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
  const char *suffix;
  double factor;
} units[] = {
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"KB", 1e3},     {"MB", 1e6},        {"GB", 1e9},           {"TB", 1e12},
    {"B", 1.0},      {"", 1.0},
};

pp_status pp_parse_size(const char *text, int per_second, const char *what, double *out, pp_error *err) {
  if (!text || !*text) return pp_error_set(err, PP_ERR_USAGE, "%s: empty value", what);
  errno = 0;
  char *end;
  double v = strtod(text, &end);
  if (end == text || errno == ERANGE || !isfinite(v) || isspace((unsigned char)text[0]))
    return pp_error_set(err, PP_ERR_USAGE, "%s: '%s' is not a number", what, text);
  const char *rest = end;
  while (*rest == ' ') rest++;
  char unit[32];
  size_t ul = strlen(rest);
  if (per_second && ul >= 2 && strcmp(rest + ul - 2, "/s") == 0) ul -= 2;
  if (ul >= sizeof unit) return pp_error_set(err, PP_ERR_USAGE, "%s: unknown unit in '%s'", what, text);
  memcpy(unit, rest, ul);
  unit[ul] = '\0';
  double factor = -1;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcmp(unit, units[i].suffix) == 0) factor = units[i].factor;
  if (factor < 0)
    return pp_error_set(err, PP_ERR_USAGE,
                        "%s: unknown unit '%s' in '%s' (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB%s)", what, unit,
                        text, per_second ? ", optionally followed by /s" : "");
  v *= factor;
  if (!isfinite(v) || !(v > 0)) return pp_error_set(err, PP_ERR_USAGE, "%s: must be > 0, got '%s'", what, text);
  *out = v;
  return PP_OK;
}

pp_status pp_parse_int(const char *text, long long lo, long long hi, const char *what, long long *out,
                       pp_error *err) {
  if (!text || !*text) return pp_error_set(err, PP_ERR_USAGE, "%s: empty value", what);
  errno = 0;
  char *end;
  long long v = strtoll(text, &end, 10);
  if (*end || errno == ERANGE || isspace((unsigned char)text[0]))
    return pp_error_set(err, PP_ERR_USAGE, "%s: '%s' is not an integer", what, text);
  if (v < lo || v > hi)
    return pp_error_set(err, PP_ERR_USAGE, "%s: must be between %lld and %lld, got %lld", what, lo, hi, v);
  *out = v;
  return PP_OK;
}

const char *pp_format_bytes(double bytes, char *buf, unsigned long n) {
  static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  double v = bytes;
  while (fabs(v) >= 1024.0 && u < 5) {
    v /= 1024.0;
    u++;
  }
  if (u == 0 || fabs(v - round(v)) < 0.005)
    snprintf(buf, n, "%.0f %s", v, names[u]);
  else
    snprintf(buf, n, "%.2f %s", v, names[u]);
  return buf;
}
