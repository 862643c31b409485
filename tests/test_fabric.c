/*
 * test_fabric.c - the fabric-device probe on directories made by the test.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "piper/fabric.h"

/* A fresh directory with rdma/ and dev/ inside; returns its path. */
static char *make_tree(char *root, size_t n) {
  snprintf(root, n, "/tmp/piper-fabric-XXXXXX");
  cr_assert_not_null(mkdtemp(root));
  char p[256];
  snprintf(p, sizeof p, "%s/rdma", root);
  cr_assert_eq(mkdir(p, 0700), 0);
  snprintf(p, sizeof p, "%s/dev", root);
  cr_assert_eq(mkdir(p, 0700), 0);
  return root;
}

static void touch(const char *root, const char *rel) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", root, rel);
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f, "%s", p);
  fclose(f);
}

static int visible(const char *root) {
  char r[256], d[256];
  snprintf(r, sizeof r, "%s/rdma", root);
  snprintf(d, sizeof d, "%s/dev", root);
  return pp_fabric_visible(r, d);
}

static void remove_tree(const char *root) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  cr_assert_eq(system(cmd), 0);
}

Test(fabric, none_when_empty_or_missing) {
  char root[64];
  make_tree(root, sizeof root);
  touch(root, "dev/null");
  touch(root, "dev/tty0");
  touch(root, "dev/hfi"); /* a prefix of a fabric name is not one */
  cr_expect_eq(visible(root), 0);
  cr_expect_eq(pp_fabric_visible("/nonexistent/piper/rdma", "/nonexistent/piper/dev"), 0);
  remove_tree(root);
}

Test(fabric, rdma_device_counts) {
  char root[64];
  make_tree(root, sizeof root);
  touch(root, "rdma/mlx5_0");
  cr_expect_eq(visible(root), 1);
  remove_tree(root);
}

Test(fabric, device_nodes_count) {
  static const char *const names[] = {"dev/hfi1_0", "dev/ipath", "dev/cxi0", "dev/kgni0"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char root[64];
    make_tree(root, sizeof root);
    touch(root, "dev/null");
    touch(root, names[i]);
    cr_expect_eq(visible(root), 1, "%s", names[i]);
    remove_tree(root);
  }
}
