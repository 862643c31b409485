/*
 * graph_load.c - reading an input graph: from a buffer, a file or standard
 * input, within the size limits, syntax errors named by line and column;
 * the document is turned into a graph by graph_json.c, and the graph keeps
 * the input's bytes and their SHA-256 state (keep_source, below; see
 * include/piper/graph.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph_json.h"

/* Turns a jansson parse error into our message: file, line, column, reason.
 * jansson names its own flag for a \u0000 in a string; say it plainly. */
static pp_status syntax_error(const char *name, const json_error_t *jerr, pp_error *err) {
  const char *text = jerr->text;
  if (strstr(text, "JSON_ALLOW_NUL")) text = "NUL characters (\\u0000) are not allowed in strings";
  return pp_error_set(err, PP_ERR_INPUT, "%s: line %d, column %d: invalid JSON: %s", name, jerr->line,
                      jerr->column, text);
}

/* Gives g the input's bytes text[len] (NUL-terminated; g owns them) and the
 * SHA-256 state after them, which digests of the input and archive
 * identities continue from a copy of (pp_archive_identity: a sweep writes
 * many archives of one input). */
static void keep_source(pp_graph *g, char *text, size_t len) {
  g->source_text = text;
  g->source_len = len;
  pp_sha256_init(&g->source_sha);
  pp_sha256_update(&g->source_sha, text, len);
}

pp_status pp_graph_load_buffer(const char *name, const char *buf, size_t len, FILE *warn, pp_graph **out,
                               pp_error *err) {
  *out = NULL;
  json_error_t jerr;
  json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) return syntax_error(name, &jerr, err);
  pp_status st = pp_json_build_graph(name, root, warn, out, err);
  json_decref(root);
  if (st) return st;
  char *text = pp_xmalloc(len + 1);
  memcpy(text, buf, len);
  text[len] = '\0';
  keep_source(*out, text, len);
  return PP_OK;
}

/* State of the reader that feeds jansson from a stream and keeps a copy of
 * every byte (the graph stores its source text).  Reading stops at the first
 * syntax error, so /dev/zero or a giant garbage file fails at once. */
typedef struct reader {
  FILE *f;
  char *buf; /* [len] bytes read so far; capacity cap */
  size_t len, cap;
  int read_errno; /* errno of a failed read, else 0 */
  int too_big;    /* the input exceeded PP_GRAPH_MAX_INPUT_BYTES */
} reader;

static size_t reader_get(void *dst, size_t n, void *arg) {
  reader *r = arg;
  if (r->read_errno || r->too_big) return (size_t)-1;
  size_t got = fread(dst, 1, n, r->f);
  if (got == 0) {
    if (ferror(r->f)) {
      r->read_errno = errno ? errno : EIO;
      return (size_t)-1;
    }
    return 0;
  }
  if (got > PP_GRAPH_MAX_INPUT_BYTES - r->len) {
    r->too_big = 1;
    return (size_t)-1;
  }
  if (r->len + got + 1 > r->cap) {
    while (r->len + got + 1 > r->cap) r->cap *= 2;
    r->buf = pp_xrealloc(r->buf, r->cap);
  }
  memcpy(r->buf + r->len, dst, got);
  r->len += got;
  return got;
}

pp_status pp_graph_load_file(const char *path, FILE *warn, pp_graph **out, pp_error *err) {
  *out = NULL;
  int is_stdin = strcmp(path, "-") == 0;
  const char *name = is_stdin ? "<stdin>" : path;
  reader r = {.f = NULL, .buf = NULL, .len = 0, .cap = 1 << 16};
  json_t *root = NULL;
  pp_status st = PP_OK;
  errno = 0;
  r.f = is_stdin ? stdin : fopen(path, "rb");
  if (!r.f) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: cannot open: %s", name, strerror(errno));
    goto done;
  }
  r.buf = pp_xmalloc(r.cap);
  json_error_t jerr;
  errno = 0;
  root = json_load_callback(reader_get, &r, JSON_REJECT_DUPLICATES, &jerr);
  if (r.read_errno) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: cannot read: %s", name, strerror(r.read_errno));
    goto done;
  }
  if (r.too_big) {
    st = pp_error_set(err, PP_ERR_INPUT, "%s: larger than %lld bytes: not a model graph", name,
                      (long long)PP_GRAPH_MAX_INPUT_BYTES);
    goto done;
  }
  if (!root) {
    /* jansson reads a NUL byte as the end of a stream: say what it was */
    const char *nul = memchr(r.buf, '\0', r.len);
    if (nul && (long long)(nul - r.buf) <= (long long)jerr.position)
      st = pp_error_set(err, PP_ERR_INPUT, "%s: line %d, column %d: invalid JSON: NUL byte at offset %zu",
                        name, jerr.line, jerr.column, (size_t)(nul - r.buf));
    else
      st = syntax_error(name, &jerr, err);
    goto done;
  }
  if ((st = pp_json_build_graph(name, root, warn, out, err))) goto done;
  r.buf[r.len] = '\0';
  keep_source(*out, r.buf, r.len);
  r.buf = NULL;
done:
  json_decref(root);
  free(r.buf);
  if (r.f && !is_stdin) fclose(r.f);
  return st;
}

int pp_graph_read_plain(const char *path, char **buf, size_t *len) {
  if (strcmp(path, "-") == 0) return 0;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 0 ||
      (unsigned long long)sb.st_size > PP_GRAPH_PLAIN_BYTES) {
    close(fd);
    return 0;
  }
  const size_t n = (size_t)sb.st_size;
  char *b = pp_xmalloc(n + 1), extra;
  size_t got = 0;
  int whole = 0;
  for (;;) {
    if (got == n) { /* the end must be where fstat put it: one more read finds nothing */
      const ssize_t r = read(fd, &extra, 1);
      if (r < 0 && errno == EINTR) continue;
      whole = r == 0;
      break;
    }
    const ssize_t r = read(fd, b + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (!whole || memchr(b, '\0', n)) {
    free(b);
    return 0;
  }
  b[n] = '\0';
  *buf = b;
  *len = n;
  return 1;
}
