/*
 * progress.c - progress reporting (see include/piper/progress.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "piper/progress.h"

#include <time.h>
#include <unistd.h>

double pp_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double pp_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void pp_progress_init(pp_progress *pr, FILE *out) {
  pr->out = out;
  pr->tty = out ? isatty(fileno(out)) : 0;
  pr->start = pr->last_time = pp_now();
  pr->last_frac = 0;
  pr->printed = 0;
  pr->unit = NULL;
}

static void fmt_time(double s, char *buf, size_t n) {
  if (s < 60)
    snprintf(buf, n, "%.0fs", s);
  else if (s < 3600)
    snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
  else
    snprintf(buf, n, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

void pp_progress_update(void *user, int layer, int n_layers, double fraction) {
  pp_progress *pr = user;
  if (!pr || !pr->out) return;
  double now = pp_now();
  int due = pr->tty ? (now - pr->last_time >= 0.2 || fraction >= 1.0)
                    : (fraction - pr->last_frac >= 0.05 || now - pr->last_time >= 30.0 || fraction >= 1.0);
  if (!due || (fraction >= 1.0 && pr->last_frac >= 1.0)) return;
  double el = now - pr->start;
  char e[32], eta[32];
  fmt_time(el, e, sizeof e);
  if (fraction > 0.001)
    fmt_time(el / fraction - el, eta, sizeof eta);
  else
    snprintf(eta, sizeof eta, "?");
  if (pr->tty)
    fprintf(pr->out, "\r\033[Kpiper: %s %d/%d, %5.1f%% of the work, elapsed %s, ETA %s",
            pr->unit ? pr->unit : "layer", layer, n_layers, 100 * fraction, e, eta);
  else
    fprintf(pr->out, "piper: %s %d/%d, %.1f%% of the work, elapsed %s, ETA %s\n",
            pr->unit ? pr->unit : "layer", layer, n_layers, 100 * fraction, e, eta);
  fflush(pr->out);
  pr->printed = 1;
  pr->last_time = now;
  pr->last_frac = fraction;
}

void pp_progress_done(pp_progress *pr) {
  if (pr && pr->out && pr->tty && pr->printed) {
    fputc('\n', pr->out);
    fflush(pr->out);
  }
}
