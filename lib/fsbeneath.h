/* SPDX-License-Identifier: MIT */
#ifndef PG_FSBENEATH_H
#define PG_FSBENEATH_H

/*
 * Files BENEATH a directory, never through a symbolic link.
 *
 * The agent runs as root and reads or rewrites files of trees made from
 * strangers' patches (a patch can turn a file, or a directory on the way
 * to it, into a symbolic link) and of build directories written by
 * sandboxed code.  Every path opened here is `root` + "/" + `rel`, where:
 *   - root is the agent's own path (a slot, a build directory): only its
 *     last component must not be a symbolic link (the directories above
 *     it are the host's configuration and may be); no trailing "/";
 *   - rel is relative ("VERSION", "app/test/test_mempool_perf.c"): no
 *     leading "/", no empty component ("a//b", a trailing "/"), no "." or
 *     ".."; no component of it may be a symbolic link, the last included.
 *
 * On Linux 5.6 and later this is openat2(2) with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: the kernel walks the path.
 * Where openat2 is missing (ENOSYS: an older kernel, or a seccomp filter
 * that does not know it; EPERM from some filters) the same rules hold by
 * a walk in user space: each directory opened with openat(O_DIRECTORY |
 * O_NOFOLLOW) from the one before, the last component with O_NOFOLLOW.
 *
 * Errors name the whole path.  A symbolic link is PG_EINVAL with
 * "'ROOT/REL' is a symbolic link: refused" (the last component) or
 * "'ROOT/REL' goes through a symbolic link ('app/test'): refused"; a
 * missing component is PG_ENOTFOUND ("'ROOT/REL': no such file or
 * directory"); a bad rel is PG_EINVAL; anything else PG_EIO with errno's
 * text.
 */

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "buf.h"
#include "err.h"

/*
 * Open root/rel as openat(2) would with flags (O_CLOEXEC and O_NOFOLLOW
 * are always added) and mode (used with O_CREAT only), under the rules
 * above.  Returns the file descriptor, or -1 with err.
 */
int pg_open_beneath(const char *root, const char *rel, int flags, mode_t mode,
		    struct pg_err *err);

/*
 * Append the regular file root/rel to b, bounded by b->max (PG_ETOOBIG
 * beyond, naming the file).  It is opened with O_NONBLOCK so that a FIFO
 * or a device never blocks, then checked with fstat(2): anything but a
 * regular file is PG_EINVAL ("'ROOT/REL' is not a regular file").  st, when
 * not NULL, gets the file's fstat() (its mode, for a rewrite).  Returns 0 or
 * -1; b may hold part of the file after an error.
 */
int pg_read_file_beneath(const char *root, const char *rel, struct pg_buf *b,
			 struct stat *st, struct pg_err *err);

/*
 * lstat(2) of root/rel under the rules above: *st describes rel's last
 * component itself (a symbolic link there is refused, as is one on the
 * way).  Returns 0, or -1 (PG_ENOTFOUND when it does not exist).
 */
int pg_stat_beneath(const char *root, const char *rel, struct stat *st, struct pg_err *err);

/*
 * Replace root/rel with len bytes of data, atomically and beneath: the
 * parent directory is opened under the rules above, a temporary file
 * ".NAME.pg-tmp.PID" created in it with O_CREAT | O_EXCL | O_NOFOLLOW
 * (a leftover of that name is removed first: unlinkat never follows a
 * link), written, given mode & 0777 exactly (no umask; never set-id bits)
 * and, when the agent is root, the owner and group of the parent
 * directory (a slot owned by the sandbox user stays replaceable by it),
 * fsync'd, renamed over NAME within the same directory (a symbolic link
 * at NAME is replaced, never followed) and the directory fsync'd.  After
 * a crash the file holds the old or the new contents.  Returns 0 or -1;
 * on failure the temporary file is removed and NAME is untouched.
 */
int pg_write_file_beneath_atomic(const char *root, const char *rel, const void *data,
				 size_t len, mode_t mode, struct pg_err *err);

/* Which implementation pg_open_beneath() uses.  For tests: the default is
 * PG_BENEATH_AUTO (openat2, then the walk when the kernel lacks it). */
enum pg_beneath_impl {
	PG_BENEATH_AUTO,
	PG_BENEATH_OPENAT2,	/* openat2 only: ENOSYS is an error */
	PG_BENEATH_WALK,	/* the user-space walk only */
};

/* Set the implementation for the whole process; returns the one before. */
enum pg_beneath_impl pg_beneath_set_impl(enum pg_beneath_impl impl);

#endif
