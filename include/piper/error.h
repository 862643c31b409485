/*
 * error.h - status codes and error messages shared by every module.
 *
 * Functions that can fail return a pp_status and, when given a non-NULL
 * pp_error, fill it with a one-line human-readable message at the place the
 * failure happened.  The message is printed once, at the top (by rank 0).
 */
#ifndef PIPER_ERROR_H
#define PIPER_ERROR_H

#include <stddef.h>

typedef enum pp_status {
  PP_OK = 0,
  PP_ERR_USAGE,      /* bad command line */
  PP_ERR_INPUT,      /* invalid input file or archive */
  PP_ERR_LIMIT,      /* a configured limit (downsets, memory estimate) exceeded */
  PP_ERR_IO,         /* reading or writing a file failed */
  PP_ERR_INFEASIBLE, /* no plan satisfies the constraints */
  PP_ERR_INTERNAL,   /* a broken invariant: a bug */
  PP_ERR_INTERRUPTED /* stopped by a signal after a checkpoint */
} pp_status;

/* Process exit codes, documented in --help and README. */
enum {
  PP_EXIT_OK = 0,
  PP_EXIT_FAILURE = 1,
  PP_EXIT_INVALID = 2,
  PP_EXIT_INFEASIBLE = 3,
  PP_EXIT_TEMPFAIL = 75
};

#define PP_ERROR_MSG_MAX 2048

typedef struct pp_error {
  pp_status code;
  char msg[PP_ERROR_MSG_MAX];
} pp_error;

/* Sets err (if not NULL) to code and a printf-style message; returns code. */
pp_status pp_error_set(pp_error *err, pp_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "prefix: " to the message already in err (if not NULL). */
void pp_error_prefix(pp_error *err, const char *prefix);

/* Returns a static name for a status ("invalid input", ...). */
const char *pp_status_str(pp_status code);

/* Maps a status to the documented process exit code. */
int pp_status_exit_code(pp_status code);

/* The one fatal path: on a failed pp_x* allocation piper prints "piper:
 * fatal: out of memory allocating N bytes", calls hook(PP_EXIT_FAILURE) if
 * one is set (main sets pp_dist_abort_all, which ends every rank through
 * MPI_Abort), and otherwise exits with PP_EXIT_FAILURE (1).  Process-wide;
 * set once at start. */
void pp_set_fatal_hook(void (*hook)(int code));

/* malloc/calloc/realloc that end the process loudly on failure (exit status
 * 1, see pp_set_fatal_hook): used only where an allocation failure cannot be
 * reported (small bookkeeping). */
void *pp_xmalloc(size_t n);
void *pp_xcalloc(size_t count, size_t size);
void *pp_xrealloc(void *p, size_t n);
char *pp_xstrdup(const char *s);

/* The same fatal path for an allocation of n bytes that failed elsewhere
 * (e.g. an MPI shared-memory window); does not return. */
void pp_fatal_out_of_memory(size_t n);

#endif /* PIPER_ERROR_H */
