/*
 * error.c - status codes, error messages and checked allocation.
 */
#define _POSIX_C_SOURCE 200809L
#include "piper/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pp_status pp_error_set(pp_error *err, pp_status code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return code;
}

void pp_error_prefix(pp_error *err, const char *prefix) {
  if (!err || !prefix) return;
  char tmp[PP_ERROR_MSG_MAX];
  size_t n = strlen(prefix);
  if (n > sizeof tmp - 3) n = sizeof tmp - 3;
  memcpy(tmp, prefix, n);
  tmp[n] = ':';
  tmp[n + 1] = ' ';
  size_t rest = strlen(err->msg);
  if (rest > sizeof tmp - n - 3) rest = sizeof tmp - n - 3;
  memcpy(tmp + n + 2, err->msg, rest);
  tmp[n + 2 + rest] = '\0';
  memcpy(err->msg, tmp, sizeof tmp);
}

const char *pp_status_str(pp_status code) {
  switch (code) {
  case PP_OK:
    return "ok";
  case PP_ERR_USAGE:
    return "usage error";
  case PP_ERR_INPUT:
    return "invalid input";
  case PP_ERR_LIMIT:
    return "limit exceeded";
  case PP_ERR_IO:
    return "I/O error";
  case PP_ERR_INFEASIBLE:
    return "no feasible plan";
  case PP_ERR_INTERNAL:
    return "internal error";
  case PP_ERR_INTERRUPTED:
    return "interrupted";
  }
  return "unknown error";
}

int pp_status_exit_code(pp_status code) {
  switch (code) {
  case PP_OK:
    return PP_EXIT_OK;
  case PP_ERR_USAGE:
  case PP_ERR_INPUT:
    return PP_EXIT_INVALID;
  case PP_ERR_INFEASIBLE:
    return PP_EXIT_INFEASIBLE;
  case PP_ERR_INTERRUPTED:
    return PP_EXIT_TEMPFAIL;
  default:
    return PP_EXIT_FAILURE;
  }
}

/* The process-wide fatal hook (set once by main, like the signal flag: a
 * failed allocation deep in a helper has no caller to report to). */
static void (*fatal_hook)(int code) = NULL;

void pp_set_fatal_hook(void (*hook)(int code)) { fatal_hook = hook; }

static void *oom(size_t n) {
  fprintf(stderr, "piper: fatal: out of memory allocating %zu bytes\n", n);
  fflush(stderr);
  if (fatal_hook) fatal_hook(PP_EXIT_FAILURE);
  _exit(PP_EXIT_FAILURE);
}

void pp_fatal_out_of_memory(size_t n) { oom(n); }

void *pp_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  return p ? p : oom(n);
}

void *pp_xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  return p ? p : oom(count * size);
}

void *pp_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  return q ? q : oom(n);
}

char *pp_xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = pp_xmalloc(n);
  memcpy(p, s, n);
  return p;
}
