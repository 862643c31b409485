/*
 * progress.h - progress lines on standard error for long runs.
 *
 * On a terminal: one line rewritten in place (layer i/L, percent of the
 * estimated work, elapsed, ETA).  Elsewhere (batch logs): a plain line every
 * 5% of the work or every 30 seconds, whichever comes first.
 */
#ifndef PIPER_PROGRESS_H
#define PIPER_PROGRESS_H

#include <stdio.h>

typedef struct pp_progress {
  FILE *out; /* NULL: silent */
  int tty;
  double start;     /* monotonic seconds at start */
  double last_time; /* when the last line was printed */
  double last_frac;
  int printed;
  const char *unit; /* what the first count counts; NULL: "layer" */
} pp_progress;

/* Monotonic clock in seconds. */
double pp_now(void);

/* CPU time of the calling thread in seconds (for comparing the work of
 * ranks that share cores, where wall time is noise). */
double pp_cpu_now(void);

/* Starts reporting to out (NULL to stay silent); pr is the caller's and
 * holds nothing to free.  Local to this process: only rank 0 reports. */
void pp_progress_init(pp_progress *pr, FILE *out);

/* Reports progress; signature matches pp_progress_fn (user = pp_progress*). */
void pp_progress_update(void *user, int layer, int n_layers, double fraction);

/* Ends the updating line, if any. */
void pp_progress_done(pp_progress *pr);

#endif /* PIPER_PROGRESS_H */
