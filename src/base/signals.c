/*
 * signals.c - recording stop requests from SIGTERM, SIGUSR1, SIGHUP and SIGINT.
 */
#define _POSIX_C_SOURCE 200809L
#include "piper/signals.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t stop_signal = 0;

static void on_signal(int sig) { stop_signal = sig; }

void pp_signals_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  /* a closed terminal or Ctrl-C: the same orderly stop, so that no
   * temporary file is left behind and the work so far is kept */
  sigaction(SIGHUP, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
}

int pp_stop_requested(int *sig) {
  if (sig) *sig = stop_signal;
  return stop_signal != 0;
}
