/*
 * test_nodelay.c - TCP_NODELAY reaches the process's TCP sockets on
 * loopback (listening, connecting and accepted) and nothing else.
 */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "piper/nodelay.h"

/* TCP_NODELAY of fd: 0 or 1, or -1 if fd has no such option. */
static int nodelay_of(int fd) {
  int on = 0;
  socklen_t len = sizeof on;
  if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &len) != 0) return -1;
  return on != 0;
}

Test(nodelay, sets_the_tcp_sockets_on_loopback_only) {
  const int lis = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert_geq(lis, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (bind(lis, (struct sockaddr *)&a, sizeof a) != 0 || listen(lis, 1) != 0 ||
      getsockname(lis, (struct sockaddr *)&a, &alen) != 0) {
    close(lis);
    cr_skip_test("no TCP on loopback here");
  }
  const int cli = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert_eq(connect(cli, (struct sockaddr *)&a, sizeof a), 0);
  const int acc = accept(lis, NULL, NULL);
  cr_assert_geq(acc, 0);
  int unix_pair[2], pipe_fds[2];
  cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, unix_pair), 0);
  cr_assert_eq(pipe(pipe_fds), 0);
  const int udp = socket(AF_INET, SOCK_DGRAM, 0);
  cr_assert_eq(nodelay_of(cli), 0, "a new TCP socket waits (Nagle's algorithm) by default");

  cr_assert_eq(pp_tcp_nodelay_all("/proc/self/fd"), 3); /* lis, cli, acc */
  cr_expect_eq(nodelay_of(lis), 1);
  cr_expect_eq(nodelay_of(cli), 1);
  cr_expect_eq(nodelay_of(acc), 1);
  cr_expect_eq(nodelay_of(unix_pair[0]), -1);
  cr_expect_eq(nodelay_of(pipe_fds[0]), -1);
  cr_expect_eq(nodelay_of(udp), -1);
  /* the sockets still carry data */
  cr_assert_eq(write(cli, "ok", 2), 2);
  char buf[2];
  cr_assert_eq(read(acc, buf, 2), 2);
  cr_expect_eq(buf[0], 'o');
  const int fds[] = {lis, cli, acc, unix_pair[0], unix_pair[1], pipe_fds[0], pipe_fds[1], udp};
  for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) close(fds[i]);
}

Test(nodelay, ignores_names_that_are_not_descriptors) {
  char dir[] = "/tmp/piper-nodelay-XXXXXX";
  cr_assert_neq(mkdtemp(dir), NULL);
  cr_expect_eq(pp_tcp_nodelay_all(dir), 0, "an empty listing sets nothing");
  /* a TCP socket that the listing names only in forms that are not numbers */
  const int tcp = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert_geq(tcp, 0);
  char name[32], path[96];
  const char *forms[] = {"%dx", "x%d", "-%d", " %d", ""};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    snprintf(name, sizeof name, forms[i], tcp);
    snprintf(path, sizeof path, "%s/%s%s", dir, name, *forms[i] ? "" : "none");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fclose(f);
  }
  cr_expect_eq(pp_tcp_nodelay_all(dir), 0);
  cr_expect_eq(nodelay_of(tcp), 0);
  snprintf(path, sizeof path, "%s/%d", dir, tcp); /* now by its number */
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fclose(f);
  cr_expect_eq(pp_tcp_nodelay_all(dir), 1);
  cr_expect_eq(nodelay_of(tcp), 1);
  close(tcp);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
  cr_expect_eq(pp_tcp_nodelay_all("/nonexistent/piper/fd"), -1);
}
