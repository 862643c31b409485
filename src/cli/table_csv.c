/*
 * table_csv.c - the study table reader (see table_csv.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "table_csv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CSV_MAX_COLS 64
#define CSV_MAX_ROWS 1000000

/* Splits line (modified) at commas into at most CSV_MAX_COLS fields; a
 * field in double quotes may hold commas, and "" inside it stands for one
 * quote (RFC 4180, as `piper collect` writes paths; no line breaks inside a
 * field).  -1 for too many fields or an unterminated quote. */
static int split(char *line, char **f) {
  int n = 0;
  line[strcspn(line, "\r\n")] = '\0';
  for (char *p = line;; n++) {
    if (n == CSV_MAX_COLS) return -1;
    f[n] = p;
    if (*p == '"') {
      char *w = p;
      for (p++;; p++) {
        if (*p == '\0') return -1;
        if (*p == '"' && p[1] == '"') {
          *w++ = '"';
          p++;
        } else if (*p == '"') {
          p++;
          break;
        } else {
          *w++ = *p;
        }
      }
      *w = '\0';
      if (*p == '\0') return n + 1;
      if (*p != ',') return -1;
      p++;
      continue;
    }
    char *c = strchr(p, ',');
    if (!c) return n + 1;
    *c = '\0';
    p = c + 1;
  }
}

static double number(const char *s) {
  if (strcmp(s, "inf") == 0) return INFINITY;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  return (*s && !*end && errno == 0) ? v : NAN;
}

pp_status pp_csv_read(const char *path, pp_csv **out, pp_error *err) {
  *out = NULL;
  FILE *fp = fopen(path, "r");
  if (!fp) return pp_error_set(err, PP_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
  pp_csv *t = pp_xcalloc(1, sizeof *t);
  char *line = NULL, *f[CSV_MAX_COLS];
  size_t cap = 0;
  size_t rows_cap = 0;
  pp_status st = PP_OK;
  long lineno = 1;
  if (getline(&line, &cap, fp) < 0 || (t->n_cols = split(line, f)) < 2) {
    st = pp_error_set(err, PP_ERR_INPUT,
                      "%s: line 1: expected a header of comma-separated column names "
                      "(the output of `piper collect --format csv`)",
                      path);
    goto done;
  }
  t->names = pp_xcalloc((size_t)t->n_cols, sizeof(char *));
  for (int i = 0; i < t->n_cols; i++) t->names[i] = pp_xstrdup(f[i]);
  while (getline(&line, &cap, fp) >= 0) {
    lineno++;
    if (line[0] == '\n' || line[0] == '\0') continue;
    int n = split(line, f);
    if (n != t->n_cols) {
      st = pp_error_set(err, PP_ERR_INPUT, "%s: line %ld: %d fields, the header has %d", path, lineno, n,
                        t->n_cols);
      goto done;
    }
    if (t->n_rows == CSV_MAX_ROWS) {
      st = pp_error_set(err, PP_ERR_INPUT, "%s: more than %d rows", path, CSV_MAX_ROWS);
      goto done;
    }
    if ((size_t)t->n_rows == rows_cap) {
      rows_cap = rows_cap ? 2 * rows_cap : 64;
      t->num = pp_xrealloc(t->num, sizeof(double) * rows_cap * (size_t)t->n_cols);
    }
    for (int i = 0; i < n; i++) t->num[(size_t)t->n_rows * (size_t)t->n_cols + (size_t)i] = number(f[i]);
    t->n_rows++;
  }
  if (ferror(fp))
    st = pp_error_set(err, PP_ERR_INPUT, "%s: read error", path);
  else if (t->n_rows == 0)
    st = pp_error_set(err, PP_ERR_INPUT,
                      "%s: the study table has no rows (an empty study: no archive was collected)", path);
done:
  free(line);
  fclose(fp);
  if (st) {
    pp_csv_free(t);
    return st;
  }
  *out = t;
  return PP_OK;
}

pp_status pp_csv_numeric_column(const pp_csv *t, const char *path, const char *name, int *col,
                                pp_error *err) {
  for (int c = 0; c < t->n_cols; c++) {
    if (strcmp(t->names[c], name) != 0) continue;
    for (int r = 0; r < t->n_rows; r++) {
      double v = t->num[(size_t)r * (size_t)t->n_cols + (size_t)c];
      /* an infeasible row has an empty tps: read as +inf */
      if (isnan(v) && strcmp(name, "tps") != 0)
        return pp_error_set(err, PP_ERR_INPUT, "%s: row %d: column '%s' is not a number", path, r + 1, name);
    }
    *col = c;
    return PP_OK;
  }
  char list[1024];
  size_t len = 0;
  list[0] = '\0';
  for (int c = 0; c < t->n_cols && len + 80 < sizeof list; c++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", c ? ", " : "", t->names[c]);
  return pp_error_set(err, PP_ERR_INPUT, "%s: the table has no column '%s' (columns: %s)", path, name, list);
}

void pp_csv_free(pp_csv *t) {
  if (!t) return;
  for (int i = 0; t->names && i < t->n_cols; i++) free(t->names[i]);
  free(t->names);
  free(t->num);
  free(t);
}
