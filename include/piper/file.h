/*
 * file.h - replacing a file atomically, and checking beforehand that it can
 * be.
 *
 * Every file piper writes (archives, checkpoints, study tables, generated
 * graphs, a sweep's plan texts) is written under a unique temporary name in the target's own
 * folder (.NAME.partial-XXXXXX, made with mkstemp, so concurrent writers
 * never share one), synced, renamed over the target and the folder synced:
 * a reader sees the old file or the complete new one, never a part, and a
 * failed write leaves the old file untouched.  Not collective; no global
 * state.  Messages name the file and the system error.
 */
#ifndef PIPER_FILE_H
#define PIPER_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "piper/error.h"

/* Largest path handled (longer ones are refused with PP_ERR_USAGE). */
#define PP_PATH_MAX 4096

/* Creates a new, empty, uniquely named temporary file for path in path's
 * folder and writes its name to tmp[PP_PATH_MAX].  If fd is not NULL the
 * file stays open there (the caller writes and closes it); else it is closed
 * (for writers that open by name, such as HDF5).  Fails with PP_ERR_USAGE if
 * path is too long, names a folder or its folder is missing, PP_ERR_IO if the
 * folder is not writable. */
pp_status pp_file_temp(const char *path, char tmp[PP_PATH_MAX], int *fd, pp_error *err);

/* Makes the complete temporary file tmp the file path: fsync(tmp), rename
 * over path, fsync of the folder.  On failure tmp is removed and path is
 * untouched; PP_ERR_IO naming path and the system error. */
pp_status pp_file_commit(const char *tmp, const char *path, pp_error *err);

/* Writes the file path atomically with a stream writer: a temporary file
 * (pp_file_temp) opened as a stream, write(f, ctx, err) on it, then
 * flushed, synced, closed and committed (pp_file_commit, without a second
 * sync).  Returns write's failure,
 * or pp_file_temp's, or PP_ERR_IO naming path when the stream cannot be
 * opened, flushed or closed; on any failure the temporary file is removed
 * and path keeps its bytes.  ctx belongs to the caller. */
pp_status pp_file_write(const char *path, pp_status (*write)(FILE *f, void *ctx, pp_error *err), void *ctx,
                        pp_error *err);

/* Removes a temporary file that will not be committed (ignores errors;
 * accepts "" as nothing to do). */
void pp_file_discard(const char *tmp);

/* Checks, without changing anything visible, that path could be replaced:
 * creates and removes a temporary file beside it (pp_file_temp).  For
 * checking an output location before long work. */
pp_status pp_file_probe(const char *path, pp_error *err);

/* 1 if the file system holding path's folder has less than bytes free
 * (or cannot say), else 0.  For adding "No space left on device" to a
 * message when a library reports only that a write failed. */
int pp_file_space_short(const char *path, double bytes);

#endif /* PIPER_FILE_H */
