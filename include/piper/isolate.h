/*
 * isolate.h - running a function in a child process, so that a fault in it
 * (for example inside a foreign library parsing a damaged file) ends the
 * child and not the caller.
 *
 * Used to read files from others: HDF5 1.10 has faults of its own on some
 * damaged files that no check before the call can exclude, so readers first
 * read the file in a child and read it themselves only if the child's read
 * returned.  Not collective; no global state; POSIX fork() and a pipe.
 */
#ifndef PIPER_ISOLATE_H
#define PIPER_ISOLATE_H

/* What became of the child. */
typedef enum pp_isolated {
  PP_ISOLATED_OK,      /* fn returned 0 */
  PP_ISOLATED_FAILED,  /* fn returned non-zero */
  PP_ISOLATED_CRASHED, /* the child ended before fn returned: a signal (*signal_out), or an exit
                        * inside fn (*signal_out 0), e.g. a sanitizer's report (exit status 1) */
  PP_ISOLATED_NOFORK   /* no child could be made: the caller decides (fn did not run) */
} pp_isolated;

/* Runs fn(arg) in a child process made by fork(), with its standard output
 * and error sent to /dev/null, and waits for it (retrying on EINTR).  The
 * child ends with _exit: it flushes no stdio buffer of the caller and runs no
 * atexit handler; nothing fn changes in memory reaches the caller.  Returns
 * what became of the child; *signal_out (if not NULL) is the signal that
 * ended it for PP_ISOLATED_CRASHED, else 0.  PP_ISOLATED_NOFORK also when
 * no pipe could be made.  Never fails otherwise.  Call it
 * from a single-threaded process, or where fn uses no lock another thread
 * may hold; fn must not use MPI. */
pp_isolated pp_isolated_run(int (*fn)(void *arg), void *arg, int *signal_out);

#endif /* PIPER_ISOLATE_H */
