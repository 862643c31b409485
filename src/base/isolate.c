/*
 * isolate.c - a function run in a child process (see include/piper/isolate.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "piper/isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

pp_isolated pp_isolated_run(int (*fn)(void *arg), void *arg, int *signal_out) {
  if (signal_out) *signal_out = 0;
  pid_t pid = fork();
  if (pid < 0) return PP_ISOLATED_NOFORK;
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
      if (null > STDERR_FILENO) close(null);
    }
    _exit(fn(arg) == 0 ? 0 : 1);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return PP_ISOLATED_FAILED;
  if (WIFSIGNALED(status)) {
    if (signal_out) *signal_out = WTERMSIG(status);
    return PP_ISOLATED_CRASHED;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? PP_ISOLATED_OK : PP_ISOLATED_FAILED;
}
