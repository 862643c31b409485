/*
 * fabric.c - the fabric-device probe (see include/piper/fabric.h).
 */
#include "piper/fabric.h"

#include <dirent.h>
#include <string.h>

/* 1 if dir has an entry (not "." or "..") whose name begins with one of
 * the n prefixes (any entry if n == 0). */
static int has_entry(const char *dir, const char *const *prefixes, int n) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int found = 0;
  for (const struct dirent *e; !found && (e = readdir(d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    found = n == 0;
    for (int i = 0; i < n && !found; i++) found = strncmp(e->d_name, prefixes[i], strlen(prefixes[i])) == 0;
  }
  closedir(d);
  return found;
}

int pp_fabric_visible(const char *rdma_class, const char *dev) {
  static const char *const nodes[] = {"hfi1", "ipath", "cxi", "kgni"};
  return has_entry(rdma_class, NULL, 0) || has_entry(dev, nodes, (int)(sizeof nodes / sizeof nodes[0]));
}
