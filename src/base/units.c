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

static const struct {
  const char *suffix;
  double factor;
} units[] = {
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"KB", 1e3},     {"MB", 1e6},        {"GB", 1e9},           {"TB", 1e12},
    {"B", 1.0},      {"", 1.0},
};

/* A number as people write it on a command line: optional sign, digits with
 * at most one '.', optional exponent.  Returns the length of that prefix of
 * s, or 0 if s does not start with one.  strtod alone would also take "inf",
 * "nan", hexadecimal and leading blanks. */
static size_t number_prefix(const char *s) {
  size_t i = 0, digits = 0;
  if (s[i] == '+' || s[i] == '-') i++;
  while (isdigit((unsigned char)s[i])) i++, digits++;
  if (s[i] == '.') {
    i++;
    while (isdigit((unsigned char)s[i])) i++, digits++;
  }
  if (digits == 0) return 0;
  if (s[i] == 'e' || s[i] == 'E') {
    size_t j = i + 1;
    if (s[j] == '+' || s[j] == '-') j++;
    if (isdigit((unsigned char)s[j])) {
      while (isdigit((unsigned char)s[j])) j++;
      i = j;
    }
  }
  return i;
}

pp_status pp_parse_size(const char *text, int per_second, const char *what, double *out, pp_error *err) {
  if (!text || !*text) return pp_error_set(err, PP_ERR_USAGE, "%s: empty value", what);
  size_t nlen = number_prefix(text);
  if (nlen == 0) return pp_error_set(err, PP_ERR_USAGE, "%s: '%s' is not a number", what, text);
  char num[64];
  if (nlen >= sizeof num) return pp_error_set(err, PP_ERR_USAGE, "%s: '%s' has too many digits", what, text);
  memcpy(num, text, nlen);
  num[nlen] = '\0';
  errno = 0;
  char *end;
  double v = strtod(num, &end);
  if (end != num + nlen) return pp_error_set(err, PP_ERR_USAGE, "%s: '%s' is not a number", what, text);
  if (errno == ERANGE && fabs(v) > 1)
    return pp_error_set(err, PP_ERR_USAGE, "%s: '%s' is too large", what, text);
  const char *rest = text + nlen;
  while (*rest == ' ') rest++;
  char unit[32];
  size_t ul = strlen(rest);
  if (per_second && ul >= 2 && strcmp(rest + ul - 2, "/s") == 0) ul -= 2;
  double factor = -1;
  if (ul < sizeof unit) {
    memcpy(unit, rest, ul);
    unit[ul] = '\0';
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strcmp(unit, units[i].suffix) == 0) factor = units[i].factor;
  }
  if (factor < 0)
    return pp_error_set(err, PP_ERR_USAGE,
                        "%s: unknown unit in '%s' (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB%s)", what,
                        text, per_second ? ", optionally followed by /s" : "");
  v *= factor;
  if (!(v > 0)) return pp_error_set(err, PP_ERR_USAGE, "%s: must be > 0, got '%s'", what, text);
  if (!isfinite(v)) return pp_error_set(err, PP_ERR_USAGE, "%s: '%s' is too large", what, text);
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
