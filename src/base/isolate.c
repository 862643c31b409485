/*
 * isolate.c - a function run in a child process (see include/piper/isolate.h).
 */
#define _GNU_SOURCE /* pipe2 */
#include "piper/isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

pp_isolated pp_isolated_run(int (*fn)(void *arg), void *arg, int *signal_out) {
  if (signal_out) *signal_out = 0;
  /* The child writes one byte once fn has returned: a child that ends
   * without it ended inside fn (a signal, or an exit such as a sanitizer's
   * report), whatever its exit status. */
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return PP_ISOLATED_NOFORK;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return PP_ISOLATED_NOFORK;
  }
  if (pid == 0) {
    close(fds[0]);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
      if (null > STDERR_FILENO) close(null);
    }
    const char returned = fn(arg) == 0 ? 'y' : 'n';
    _exit(write(fds[1], &returned, 1) == 1 ? 0 : 1);
  }
  close(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      close(fds[0]);
      return PP_ISOLATED_FAILED;
    }
  char returned = 0;
  while (read(fds[0], &returned, 1) < 0 && errno == EINTR) {}
  close(fds[0]);
  if (WIFSIGNALED(status)) {
    if (signal_out) *signal_out = WTERMSIG(status);
    return PP_ISOLATED_CRASHED;
  }
  /* no byte: ended inside fn (*signal_out 0) */
  return returned == 'y' ? PP_ISOLATED_OK : returned == 'n' ? PP_ISOLATED_FAILED : PP_ISOLATED_CRASHED;
}
