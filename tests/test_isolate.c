/* The child-process runner: a function's result, its failure, its crash
 * by a signal and its exit before returning each come back as what became
 * of the child, and the caller's memory is untouched by what the child did. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "piper/isolate.h"

static int returns(void *arg) {
  int *v = arg;
  *v = 42; /* the child's copy only */
  return *v == 42 ? 0 : 1;
}

static int fails(void *arg) {
  (void)arg;
  fprintf(stderr, "this goes to /dev/null\n");
  return 7;
}

/* SIGABRT rather than SIGSEGV: AddressSanitizer turns a SEGV into a report
 * and exit status 1, but leaves SIGABRT alone. */
static int crashes(void *arg) {
  (void)arg;
  signal(SIGABRT, SIG_DFL);
  raise(SIGABRT);
  return 0;
}

/* How AddressSanitizer ends a process on a memory error it caught: a report,
 * then exit status 1, no signal. */
static int exits_inside(void *arg) {
  (void)arg;
  _exit(1);
}

/* An exit with status 0 from inside fn is no return either (_exit: the
 * child is a copy of the test's own process, whose exit handlers must not
 * run twice). */
static int exits_zero_inside(void *arg) {
  (void)arg;
  _exit(0);
}

Test(isolate, ok_and_memory_untouched) {
  int v = 1, sig = -1;
  cr_assert_eq(pp_isolated_run(returns, &v, &sig), PP_ISOLATED_OK);
  cr_assert_eq(v, 1);
  cr_assert_eq(sig, 0);
}

Test(isolate, failure) {
  int sig = -1;
  cr_assert_eq(pp_isolated_run(fails, NULL, &sig), PP_ISOLATED_FAILED);
  cr_assert_eq(sig, 0);
}

Test(isolate, crash_by_signal) {
  int sig = 0;
  cr_assert_eq(pp_isolated_run(crashes, NULL, &sig), PP_ISOLATED_CRASHED);
  cr_assert_eq(sig, SIGABRT);
  cr_assert_eq(pp_isolated_run(crashes, NULL, NULL), PP_ISOLATED_CRASHED);
}

Test(isolate, exit_before_returning) {
  int sig = -1;
  cr_assert_eq(pp_isolated_run(exits_inside, NULL, &sig), PP_ISOLATED_CRASHED);
  cr_assert_eq(sig, 0);
  sig = -1;
  cr_assert_eq(pp_isolated_run(exits_zero_inside, NULL, &sig), PP_ISOLATED_CRASHED);
  cr_assert_eq(sig, 0);
}
