/*
 * nodelay.c - TCP_NODELAY on the process's TCP sockets (see
 * include/piper/nodelay.h).
 */
#define _DEFAULT_SOURCE
#include "piper/nodelay.h"

#include <dirent.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>

int pp_tcp_nodelay_all(const char *fd_dir) {
  DIR *d = opendir(fd_dir);
  if (!d) return -1;
  const int own = dirfd(d);
  int n = 0;
  for (const struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char *end;
    const long fd = strtol(e->d_name, &end, 10);
    if (*end || fd > INT_MAX || fd == own) continue;
    /* the option exists on TCP sockets only: the query fails on the rest */
    int on;
    socklen_t len = sizeof on;
    if (getsockopt((int)fd, IPPROTO_TCP, TCP_NODELAY, &on, &len) != 0) continue;
    on = 1;
    n += setsockopt((int)fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) == 0;
  }
  closedir(d);
  return n;
}
