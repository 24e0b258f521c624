/* SPDX-License-Identifier: MIT */
#ifndef PG_FSUTIL_H
#define PG_FSUTIL_H

/* File-system helpers for state that must survive a crash. */

#include <stddef.h>
#include <sys/types.h>

#include "buf.h"
#include "err.h"

/* Create `path` and its missing parents with `mode` (like mkdir -p).
 * An existing directory is fine; an existing non-directory is an error. */
int pg_mkdir_p(const char *path, mode_t mode, struct pg_err *err);

/* Make the parent directory of the file `path` (mkdir -p of its dirname). */
int pg_mkdir_parent(const char *path, mode_t mode, struct pg_err *err);

/* Write all len bytes of data to fd, again after a short write or EINTR.
 * Returns 0, or -1 with errno set (the caller names the file); what was
 * written before an error stays written. */
int pg_write_all(int fd, const void *data, size_t len);

/* Append what the open fd reads until end of file to b, bounded by b->max
 * (PG_ETOOBIG beyond); name is the file's name for messages.  Returns 0
 * or -1. */
int pg_read_fd(int fd, const char *name, struct pg_buf *b, struct pg_err *err);

/* Append the whole file `path` to b, bounded by b->max (PG_ETOOBIG
 * beyond, naming the file).  Returns 0 or -1. */
int pg_read_file(const char *path, struct pg_buf *b, struct pg_err *err);

/* Empty b, then read root + rel into it as pg_read_file() does: root is a
 * prefix ("" for the real /proc and /sys; tests point it at a fake tree),
 * rel starts with "/".  PG_EINVAL when the path is too long. */
int pg_read_file_under(const char *root, const char *rel, struct pg_buf *b,
		       struct pg_err *err);

/* Replace `path` with `len` bytes atomically: write a temporary file in the
 * same directory, fsync it, rename it over `path`, fsync the directory.
 * After a crash the file holds either the old or the new contents. */
int pg_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode,
			 struct pg_err *err);

#endif
