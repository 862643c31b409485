/*
 * signals.h - graceful stop on SIGTERM / SIGUSR1 (and SIGHUP, SIGINT).
 *
 * Batch systems send SIGTERM (preemption) or a chosen signal such as SIGUSR1
 * shortly before a time limit.  The handler only records the request; the
 * DP driver checks it at the end of each layer, checkpoints and stops.
 * (The flag is the one piece of process-wide mutable state: a signal
 * handler has nowhere else to write.)
 */
#ifndef PIPER_SIGNALS_H
#define PIPER_SIGNALS_H

/* Installs the handlers for SIGTERM, SIGUSR1, SIGHUP and SIGINT (main calls
 * it for plan and sweep before MPI starts, so that a signal during start-up
 * is a stop request too). */
void pp_signals_install(void);

/* 1 if a stop was requested since start, else 0; the signal number via sig. */
int pp_stop_requested(int *sig);

#endif /* PIPER_SIGNALS_H */
