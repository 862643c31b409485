/*
 * grid.c - reading the grid files of `piper sweep` (see grid.h).  The rules
 * are those of jobs/lib/grid.sh, which validates the same files for
 * jobs/sweep.sbatch --check: the same columns, values, flags and names.
 */
#define _DEFAULT_SOURCE /* realpath */
#include "grid.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "piper/problem.h"
#include "piper/units.h"

enum { C_INPUT, C_DEVICES, C_MEMORY, C_BANDWIDTH, C_MICRO, C_FLAGS, C_NAME, N_COLS };
static const char *const col_names[N_COLS] = {"input",        "devices", "memory", "bandwidth",
                                              "microbatches", "flags",   "name"};

#define MAX_FIELDS 64

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = pp_xmalloc(n);
  memcpy(c, s, n);
  return c;
}

/* Splits line in place at tabs, keeping empty fields; returns the count
 * (at most MAX_FIELDS + 1, meaning "too many"). */
static int split_tabs(char *line, char **f) {
  int n = 0;
  for (char *p = line;; p++) {
    if (n <= MAX_FIELDS) f[n] = p;
    p = strchr(p, '\t');
    n++;
    if (!p) break;
    *p = '\0';
  }
  return n;
}

static void row_error(const pp_grid *g, pp_grid_row *r, const char *fmt, ...) {
  if (r->error[0]) return; /* the first problem of a row is enough */
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(r->error, sizeof r->error, "%s:%d: %s", g->path, r->line, msg);
}

static int valid_name(const char *s) {
  if (!*s || !(isalnum((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '.' || *s == '_' || *s == '-')) return 0;
  return 1;
}

/* row%03d-<stem>-k<K>-m<memory>-n<N>-bw<bandwidth, /s as ps><-nodp...>, the
 * characters outside [A-Za-z0-9._-] replaced by '_' (as grid.sh does). */
static char *make_name(int index, const char *input, char **f, const int *col) {
  const char *stem = strrchr(input, '/');
  stem = stem ? stem + 1 : input;
  size_t sl = strlen(stem);
  if (sl > 5 && strcmp(stem + sl - 5, ".json") == 0) sl -= 5;
  char bw[128], flags[128] = "";
  snprintf(bw, sizeof bw, "%s", f[col[C_BANDWIDTH]]);
  size_t bl = strlen(bw);
  if (bl >= 2 && strcmp(bw + bl - 2, "/s") == 0) snprintf(bw + bl - 2, sizeof bw - (bl - 2), "ps");
  if (strcmp(f[col[C_FLAGS]], "none") != 0) {
    size_t n = 0;
    flags[n++] = '-';
    for (const char *p = f[col[C_FLAGS]]; *p && n + 2 < sizeof flags; p++) {
      if (strncmp(p, "no-", 3) == 0) {
        flags[n++] = 'n';
        flags[n++] = 'o';
        p += 2;
      } else {
        flags[n++] = *p == ',' ? '-' : *p;
      }
    }
    flags[n] = '\0';
  }
  char buf[1024];
  snprintf(buf, sizeof buf, "row%03d-%.*s-k%s-m%s-n%s-bw%s%s", index, (int)sl, stem, f[col[C_DEVICES]],
           f[col[C_MEMORY]], f[col[C_MICRO]], bw, flags);
  for (char *p = buf; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-')) *p = '_';
  return xstrdup(buf);
}

static void parse_flags(const pp_grid *g, pp_grid_row *r, const char *v) {
  if (strcmp(v, "none") == 0) return;
  size_t n = strlen(v);
  if (n == 0 || v[0] == ',' || v[n - 1] == ',' || strstr(v, ",,")) {
    row_error(g, r, "flags: '%s' has an empty entry (use none, or e.g. no-dp,no-tp)", v);
    return;
  }
  for (const char *p = v; *p;) {
    size_t len = strcspn(p, ",");
    if (len == 5 && strncmp(p, "no-dp", 5) == 0)
      r->no_dp = 1;
    else if (len == 5 && strncmp(p, "no-tp", 5) == 0)
      r->no_tp = 1;
    else if (len == 12 && strncmp(p, "no-recompute", 12) == 0)
      r->no_recompute = 1;
    else if (len == 5 && strncmp(p, "zero", 4) == 0 && p[4] >= '1' && p[4] <= '3')
      r->zero = p[4] - '0';
    else if (len == 4 && strncmp(p, "1f1b", 4) == 0)
      r->schedule = "1f1b";
    else if (len == 5 && strncmp(p, "gpipe", 5) == 0)
      r->schedule = "gpipe";
    else
      row_error(g, r,
                "flags: unknown flag '%.*s' (expected none, or a comma list of no-dp, no-tp, no-recompute, "
                "zero1, zero2, zero3, 1f1b, gpipe)",
                (int)len, p);
    p += len;
    if (*p == ',') p++;
  }
}

/* Fills r from the fields of its line. */
static void parse_row(const pp_grid *g, const char *dir, pp_grid_row *r, char **f, const int *col) {
  pp_error e = {0};
  const char *in = f[col[C_INPUT]];
  if (!*in) {
    row_error(g, r, "input: empty");
  } else {
    size_t n = strlen(dir) + strlen(in) + 2;
    r->input = pp_xmalloc(n);
    if (in[0] == '/')
      snprintf(r->input, n, "%s", in);
    else
      snprintf(r->input, n, "%s/%s", dir, in);
    char *real = realpath(r->input, NULL);
    if (!real || access(real, R_OK) != 0) {
      row_error(g, r, "input: '%s' not found", r->input);
    } else {
      free(r->input);
      r->input = real; /* one spelling per file: rows are grouped by it */
      real = NULL;
    }
    free(real);
  }
  if (pp_parse_int(f[col[C_DEVICES]], 1, PP_MAX_DEVICES, "devices", &r->devices, &e) ||
      pp_parse_size(f[col[C_MEMORY]], 0, "memory", &r->memory, &e) ||
      pp_parse_size(f[col[C_BANDWIDTH]], 1, "bandwidth", &r->bandwidth, &e) ||
      pp_parse_int(f[col[C_MICRO]], 1, PP_MAX_MICROBATCHES, "microbatches", &r->microbatches, &e))
    row_error(g, r, "%s", e.msg);
  parse_flags(g, r, f[col[C_FLAGS]]);
  const char *name = col[C_NAME] >= 0 ? f[col[C_NAME]] : "";
  if (*name) {
    if (!valid_name(name))
      row_error(g, r, "name: '%s' is not a file name of letters, digits, '.', '_' and '-'", name);
    r->name = xstrdup(name);
  } else {
    r->name = make_name(r->index, in, f, col); /* from the path as written, as grid.sh does */
  }
}

/* Reads the header fields into col[]; returns 0 or sets err. */
static pp_status parse_header(const char *path, int line, char **f, int n, int *col, pp_error *err) {
  for (int c = 0; c < N_COLS; c++) col[c] = -1;
  if (n > MAX_FIELDS) return pp_error_set(err, PP_ERR_INPUT, "%s:%d: header: too many columns", path, line);
  for (int i = 0; i < n; i++) {
    int c = 0;
    while (c < N_COLS && strcmp(f[i], col_names[c]) != 0) c++;
    if (c == N_COLS)
      return pp_error_set(err, PP_ERR_INPUT,
                          "%s:%d: header: unknown column '%s' (expected tab-separated: input devices memory "
                          "bandwidth microbatches flags [name])",
                          path, line, f[i]);
    if (col[c] >= 0)
      return pp_error_set(err, PP_ERR_INPUT, "%s:%d: header: column '%s' appears twice", path, line, f[i]);
    col[c] = i;
  }
  for (int c = 0; c < C_NAME; c++)
    if (col[c] < 0)
      return pp_error_set(err, PP_ERR_INPUT,
                          "%s:%d: header: missing column '%s' (expected tab-separated: input devices memory "
                          "bandwidth microbatches flags [name])",
                          path, line, col_names[c]);
  return PP_OK;
}

/* Marks rows whose name an earlier row already has. */
static void check_names(pp_grid *g) {
  for (int i = 1; i < g->n_rows; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(g->rows[i].name, g->rows[j].name) == 0) {
        row_error(g, &g->rows[i], "name: '%s' is also the name of the row on line %d", g->rows[i].name,
                  g->rows[j].line);
        break;
      }
}

pp_status pp_grid_read(const char *path, pp_grid **out, pp_error *err) {
  *out = NULL;
  FILE *in = fopen(path, "r");
  if (!in) return pp_error_set(err, PP_ERR_INPUT, "%s: cannot open the grid: %s", path, strerror(errno));
  pp_grid *g = pp_xcalloc(1, sizeof *g);
  g->path = xstrdup(path);
  char *dir = xstrdup(path), *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(dir, 2, ".");
  char *line = NULL, *f[MAX_FIELDS + 1];
  size_t cap = 0;
  int n = 0, col[N_COLS], header = 0, rows_cap = 0, n_cols = 0;
  pp_status st = PP_OK;
  while (getline(&line, &cap, in) >= 0) {
    n++;
    size_t len = strcspn(line, "\r\n");
    line[len] = '\0';
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '\0' || *p == '#') continue;
    int nf = split_tabs(line, f);
    if (!header) {
      if ((st = parse_header(path, n, f, nf, col, err))) goto done;
      header = n;
      n_cols = nf;
      continue;
    }
    if (g->n_rows == rows_cap) {
      rows_cap = rows_cap ? 2 * rows_cap : 64;
      g->rows = pp_xrealloc(g->rows, sizeof *g->rows * (size_t)rows_cap);
    }
    pp_grid_row *r = &g->rows[g->n_rows];
    memset(r, 0, sizeof *r);
    r->line = n;
    r->index = g->n_rows++;
    if (nf != n_cols) {
      row_error(g, r, "expected %d tab-separated fields like the header, found %d", n_cols, nf);
      char name[32];
      snprintf(name, sizeof name, "row%03d", r->index);
      r->name = xstrdup(name);
      continue;
    }
    parse_row(g, dir, r, f, col);
  }
  if (ferror(in)) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: read error: %s", path, strerror(errno));
  } else if (!header) {
    st = pp_error_set(err, PP_ERR_INPUT,
                      "%s:1: empty grid: expected a header line (input devices memory bandwidth microbatches "
                      "flags [name])",
                      path);
  } else if (g->n_rows == 0) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s:%d: no rows after the header", path, n);
  }
  if (!st) check_names(g);
done:
  free(line);
  free(dir);
  fclose(in);
  if (st) {
    pp_grid_free(g);
    return st;
  }
  *out = g;
  return PP_OK;
}

void pp_grid_free(pp_grid *g) {
  if (!g) return;
  for (int i = 0; i < g->n_rows; i++) {
    free(g->rows[i].input);
    free(g->rows[i].name);
  }
  free(g->rows);
  free(g->path);
  free(g);
}

int pp_grid_bad_rows(const pp_grid *g) {
  int n = 0;
  for (int i = 0; i < g->n_rows; i++) n += g->rows[i].error[0] != '\0';
  return n;
}
