/*
 * file.c - atomic file replacement (see include/piper/file.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "piper/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Splits path into its folder ("." if none) and base name. */
static int split(const char *path, char *dir, size_t dn, const char **base) {
  const char *slash = strrchr(path, '/');
  *base = slash ? slash + 1 : path;
  int n;
  if (!slash)
    n = snprintf(dir, dn, ".");
  else if (slash == path)
    n = snprintf(dir, dn, "/");
  else
    n = snprintf(dir, dn, "%.*s", (int)(slash - path), path);
  return n < 0 || (size_t)n >= dn ? -1 : 0;
}

pp_status pp_file_temp(const char *path, char tmp[PP_PATH_MAX], int *fd, pp_error *err) {
  char dir[PP_PATH_MAX];
  const char *base;
  struct stat sb;
  tmp[0] = '\0';
  if (fd) *fd = -1;
  if (!path[0] || split(path, dir, sizeof dir, &base) != 0 || strlen(path) + 20 >= PP_PATH_MAX)
    return pp_error_set(err, PP_ERR_USAGE, "%s: the path is empty or too long", path);
  if (!base[0] || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)))
    return pp_error_set(err, PP_ERR_USAGE, "%s is a folder; give a file name", path);
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return pp_error_set(err, PP_ERR_USAGE, "%s: the folder %s does not exist", path, dir);
  const int here = strcmp(dir, ".") == 0, root = strcmp(dir, "/") == 0;
  snprintf(tmp, PP_PATH_MAX, "%s%s.%s.partial-XXXXXX", here ? "" : dir, here || root ? "" : "/", base);
  int f = mkstemp(tmp);
  if (f < 0) {
    int e = errno;
    tmp[0] = '\0';
    return pp_error_set(err, PP_ERR_IO, "%s: cannot create a file in the folder %s: %s", path, dir,
                        strerror(e));
  }
  /* mkstemp creates the file private (0600); give it the mode a plain
   * creation would (0666 less the umask) */
  mode_t mask = umask(0);
  umask(mask);
  fchmod(f, 0666 & ~mask);
  if (fd)
    *fd = f;
  else
    close(f);
  return PP_OK;
}

static int fsync_path(const char *p, int flags) {
  int f = open(p, flags);
  if (f < 0) return -1;
  int rc = fsync(f);
  /* folders of some file systems cannot be synced: not an error */
  if (rc != 0 && (errno == EINVAL || errno == EBADF) && (flags & O_DIRECTORY)) rc = 0;
  close(f);
  return rc;
}

/* pp_file_commit, with tmp's bytes already on disk if synced. */
static pp_status commit(const char *tmp, const char *path, int synced, pp_error *err) {
  char dir[PP_PATH_MAX];
  const char *base;
  split(path, dir, sizeof dir, &base);
  const char *step = "syncing";
  int ok = synced || fsync_path(tmp, O_RDONLY) == 0;
  if (ok) {
    step = "renaming into place";
    ok = rename(tmp, path) == 0;
  }
  if (!ok) {
    int e = errno;
    unlink(tmp);
    return pp_error_set(err, PP_ERR_IO, "%s: %s failed: %s", path, step, strerror(e));
  }
  if (fsync_path(dir, O_RDONLY | O_DIRECTORY) != 0)
    return pp_error_set(err, PP_ERR_IO, "%s: syncing the folder %s failed: %s", path, dir, strerror(errno));
  return PP_OK;
}

pp_status pp_file_commit(const char *tmp, const char *path, pp_error *err) {
  return commit(tmp, path, 0, err);
}

pp_status pp_file_write(const char *path, pp_status (*write)(FILE *f, void *ctx, pp_error *err), void *ctx,
                        pp_error *err) {
  char tmp[PP_PATH_MAX];
  int fd = -1;
  pp_status st = pp_file_temp(path, tmp, &fd, err);
  if (st) return st;
  FILE *f = fdopen(fd, "w"); /* the contents, committed to path when complete */
  if (!f) {
    st = pp_error_set(err, PP_ERR_IO, "%s: %s", tmp, strerror(errno));
    close(fd);
    pp_file_discard(tmp);
    return st;
  }
  st = write(f, ctx, err);
  if (fflush(f) != 0 && !st) st = pp_error_set(err, PP_ERR_IO, "%s: %s", path, strerror(errno));
  /* synced through the stream's own descriptor: no second open */
  if (!st && fsync(fd) != 0)
    st = pp_error_set(err, PP_ERR_IO, "%s: syncing failed: %s", path, strerror(errno));
  if (fclose(f) != 0 && !st) st = pp_error_set(err, PP_ERR_IO, "%s: %s", path, strerror(errno));
  if (st) {
    pp_file_discard(tmp);
    return st;
  }
  return commit(tmp, path, 1, err);
}

void pp_file_discard(const char *tmp) {
  if (tmp && tmp[0]) unlink(tmp);
}

pp_status pp_file_probe(const char *path, pp_error *err) {
  char tmp[PP_PATH_MAX];
  pp_status st = pp_file_temp(path, tmp, NULL, err);
  if (!st) pp_file_discard(tmp);
  return st;
}

int pp_file_space_short(const char *path, double bytes) {
  char dir[PP_PATH_MAX];
  const char *base;
  struct statvfs vs;
  if (split(path, dir, sizeof dir, &base) != 0 || statvfs(dir, &vs) != 0) return 1;
  return (double)vs.f_bavail * (double)vs.f_frsize < bytes;
}
