/* SPDX-License-Identifier: MIT */
/* Files beneath a directory, never through a symbolic link (fsbeneath.h). */

/* O_PATH, and nothing else GNU. */
#define _GNU_SOURCE
#include "fsbeneath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "fsutil.h"

#define MAX_DEPTH 256	/* components in rel; PATH_MAX bounds it anyway */

static enum pg_beneath_impl beneath_impl = PG_BENEATH_AUTO;

enum pg_beneath_impl pg_beneath_set_impl(enum pg_beneath_impl impl)
{
	enum pg_beneath_impl old = beneath_impl;

	beneath_impl = impl;
	return old;
}

/* rel is relative and every component is a plain name. */
static int check_rel(const char *root, const char *rel, struct pg_err *err)
{
	const char *p = rel, *end;
	size_t len = strlen(rel);

	if (len == 0 || len >= PATH_MAX)
		return pg_err_set(err, PG_EINVAL, "'%s': bad relative path length (%zu)", root, len);
	if (rel[0] == '/')
		return pg_err_set(err, PG_EINVAL, "'%s': '%s' is absolute, not beneath it", root, rel);
	for (;;) {
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		if (end == p)
			return pg_err_set(err, PG_EINVAL, "'%s/%s': empty path component", root, rel);
		if ((end - p == 1 && p[0] == '.') || (end - p == 2 && p[0] == '.' && p[1] == '.'))
			return pg_err_set(err, PG_EINVAL, "'%s/%s': '%.*s' component refused", root,
					  rel, (int)(end - p), p);
		if (end - p > NAME_MAX)
			return pg_err_set(err, PG_EINVAL, "'%s/%s': component longer than %d bytes",
					  root, rel, NAME_MAX);
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/*
 * After a refused open: which component of rel is a symbolic link, for
 * the message only (the refusal itself came from the kernel).  Returns
 * the length of the prefix of rel that ends in the link, or 0 when none
 * is one (any more).
 */
static size_t find_link(int rootfd, const char *rel)
{
	char prefix[PATH_MAX];
	size_t len = strlen(rel), i = 0;
	struct stat st;

	if (len >= sizeof(prefix))
		return 0;
	while (i < len) {
		const char *slash = strchr(rel + i, '/');

		i = slash ? (size_t)(slash - rel) : len;
		memcpy(prefix, rel, i);
		prefix[i] = '\0';
		/* Earlier components were not links, so only the last of the
		 * prefix can be one: fstatat never follows it. */
		if (fstatat(rootfd, prefix, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 0;
		if (S_ISLNK(st.st_mode))
			return i;
		i++;
	}
	return 0;
}

/* The message for a failed open of root/rel (errno as it failed).  rel
 * is `shown` or a prefix of it (the parent of a file to write): messages
 * speak of root/shown. */
static int open_failed(int rootfd, const char *root, const char *rel, const char *shown,
		       struct pg_err *err)
{
	int saved = errno;
	size_t at;

	if (saved == ENOENT)
		return pg_err_set(err, PG_ENOTFOUND, "'%s/%s': no such file or directory", root,
				  shown);
	at = find_link(rootfd, rel);
	if (at == strlen(shown))
		return pg_err_set(err, PG_EINVAL, "'%s/%s' is a symbolic link: refused", root, shown);
	if (at > 0)
		return pg_err_set(err, PG_EINVAL, "'%s/%s' goes through a symbolic link ('%.*s'): "
				  "refused", root, shown, (int)at, rel);
	/* ELOOP: RESOLVE_NO_SYMLINKS met a link; EXDEV: RESOLVE_BENEATH
	 * stopped an escape.  Either way a link we can no longer see. */
	if (saved == ELOOP || saved == EXDEV)
		return pg_err_set(err, PG_EINVAL, "'%s/%s' goes through a symbolic link: refused",
				  root, shown);
	errno = saved;
	return pg_err_errno(err, "open '%s/%s'", root, shown);
}

static int open_openat2(int rootfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = (unsigned long long)(unsigned int)flags;
	/* openat2 refuses a mode without O_CREAT or O_TMPFILE. */
	how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
}

/* The walk for kernels without openat2: one component at a time, none
 * followed.  check_rel() ruled out ".." and empty names. */
static int open_walk(int rootfd, const char *rel, int flags, mode_t mode)
{
	char name[NAME_MAX + 1];
	const char *p = rel, *slash;
	int dfd = rootfd, fd, saved;

	while ((slash = strchr(p, '/')) != NULL) {
		size_t n = (size_t)(slash - p);
		int sub;

		memcpy(name, p, n);
		name[n] = '\0';
		sub = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		saved = errno;
		if (dfd != rootfd)
			close(dfd);
		if (sub < 0) {
			errno = saved;
			return -1;
		}
		dfd = sub;
		p = slash + 1;
	}
	fd = openat(dfd, p, flags, mode);
	saved = errno;
	if (dfd != rootfd)
		close(dfd);
	errno = saved;
	return fd;
}

/* Open rel beneath the open directory rootfd (root names it; messages
 * speak of root/shown, see open_failed()). */
static int open_at(int rootfd, const char *root, const char *rel, const char *shown,
		   int flags, mode_t mode, struct pg_err *err)
{
	struct stat st;
	int fd = -1;

	if (check_rel(root, rel, err) < 0)
		return -1;
	flags |= O_NOFOLLOW | O_CLOEXEC;
	if (beneath_impl != PG_BENEATH_WALK) {
		fd = open_openat2(rootfd, rel, flags, mode);
		/* ENOSYS: no openat2 in this kernel; EPERM: a seccomp filter
		 * that refuses what it does not know.  The walk is as strict. */
		if (fd < 0 && beneath_impl == PG_BENEATH_AUTO && (errno == ENOSYS || errno == EPERM))
			fd = open_walk(rootfd, rel, flags, mode);
	} else {
		fd = open_walk(rootfd, rel, flags, mode);
	}
	if (fd < 0)
		return open_failed(rootfd, root, rel, shown, err);
	/* O_PATH | O_NOFOLLOW opens a link itself rather than refusing it. */
	if (flags & O_PATH) {
		if (fstat(fd, &st) < 0) {
			pg_err_errno(err, "stat '%s/%s'", root, shown);
			close(fd);
			return -1;
		}
		if (S_ISLNK(st.st_mode)) {
			close(fd);
			return pg_err_set(err, PG_EINVAL, "'%s/%s' %s: refused", root, shown,
					  rel == shown ? "is a symbolic link" :
					  "goes through a symbolic link");
		}
	}
	return fd;
}

/* The root directory itself: its last component must not be a link. */
static int open_root(const char *root, int flags, struct pg_err *err)
{
	struct stat st;
	size_t len = strlen(root);
	int fd;

	/* A trailing "/" would make the kernel follow a link despite
	 * O_NOFOLLOW. */
	if (len == 0 || (len > 1 && root[len - 1] == '/'))
		return pg_err_set(err, PG_EINVAL, "'%s': a root must not be empty or end in '/'",
				  root);
	fd = open(root, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		return pg_err_set(err, PG_ENOTFOUND, "'%s': no such directory", root);
	if (lstat(root, &st) == 0 && S_ISLNK(st.st_mode))
		return pg_err_set(err, PG_EINVAL, "'%s' is a symbolic link: refused", root);
	return pg_err_errno(err, "open directory '%s'", root);
}

int pg_open_beneath(const char *root, const char *rel, int flags, mode_t mode,
		    struct pg_err *err)
{
	int rootfd = open_root(root, O_PATH, err), fd;

	if (rootfd < 0)
		return -1;
	fd = open_at(rootfd, root, rel, rel, flags, mode, err);
	close(rootfd);
	return fd;
}

int pg_stat_beneath(const char *root, const char *rel, struct stat *st, struct pg_err *err)
{
	int fd = pg_open_beneath(root, rel, O_PATH, 0, err), rc = 0;

	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0)
		rc = pg_err_errno(err, "stat '%s/%s'", root, rel);
	close(fd);
	return rc;
}

int pg_read_file_beneath(const char *root, const char *rel, struct pg_buf *b,
			 struct stat *st, struct pg_err *err)
{
	char name[PATH_MAX];
	struct stat own;
	int fd, rc = -1, n;

	n = snprintf(name, sizeof(name), "%s/%s", root, rel);
	if (n < 0 || (size_t)n >= sizeof(name))
		return pg_err_set(err, PG_EINVAL, "'%s': path too long", root);
	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = pg_open_beneath(root, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, err);
	if (fd < 0)
		return -1;
	if (!st)
		st = &own;
	if (fstat(fd, st) < 0) {
		pg_err_errno(err, "stat '%s'", name);
		goto out;
	}
	if (!S_ISREG(st->st_mode)) {
		pg_err_set(err, PG_EINVAL, "'%s' is not a regular file", name);
		goto out;
	}
	rc = pg_read_fd(fd, name, b, err);
out:
	close(fd);
	return rc;
}

int pg_write_file_beneath_atomic(const char *root, const char *rel, const void *data,
				 size_t len, mode_t mode, struct pg_err *err)
{
	char parent[PATH_MAX], tmp[NAME_MAX + 1], shown[PATH_MAX];
	const char *name = strrchr(rel, '/');
	struct stat dst;
	bool created = false;
	int rootfd = -1, dfd = -1, fd = -1, rc = -1, n;

	if (check_rel(root, rel, err) < 0)
		return -1;
	n = snprintf(shown, sizeof(shown), "%s/%s", root, rel);
	if (n < 0 || (size_t)n >= sizeof(shown))
		return pg_err_set(err, PG_EINVAL, "'%s': path too long", root);
	if (name) {
		memcpy(parent, rel, (size_t)(name - rel));
		parent[name - rel] = '\0';
		name++;
		rootfd = open_root(root, O_PATH, err);
		if (rootfd < 0)
			goto out;
		dfd = open_at(rootfd, root, parent, rel, O_RDONLY | O_DIRECTORY, 0, err);
	} else {
		name = rel;
		dfd = open_root(root, O_RDONLY, err);
	}
	if (dfd < 0)
		goto out;
	n = snprintf(tmp, sizeof(tmp), ".%s.pg-tmp.%ld", name, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		pg_err_set(err, PG_EINVAL, "'%s': name too long for a temporary file", shown);
		goto out;
	}
	if (fstat(dfd, &dst) < 0) {
		pg_err_errno(err, "stat the directory of '%s'", shown);
		goto out;
	}
	/* A leftover of a run that died (or anything planted there):
	 * unlinkat removes the name itself, never what a link points to. */
	if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT) {
		pg_err_errno(err, "remove the leftover '%s' beside '%s'", tmp, shown);
		goto out;
	}
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		pg_err_errno(err, "create '%s' beside '%s'", tmp, shown);
		goto out;
	}
	created = true;
	if (pg_write_all(fd, data, len) < 0) {
		pg_err_errno(err, "write '%s'", tmp);
		goto out;
	}
	/* The owner first: fchown by root would clear set-id bits after. */
	if (geteuid() == 0 && fchown(fd, dst.st_uid, dst.st_gid) < 0) {
		pg_err_errno(err, "chown '%s' beside '%s'", tmp, shown);
		goto out;
	}
	if (fchmod(fd, mode & 0777) < 0) {
		pg_err_errno(err, "chmod '%s' beside '%s'", tmp, shown);
		goto out;
	}
	if (fsync(fd) < 0) {
		pg_err_errno(err, "fsync '%s' beside '%s'", tmp, shown);
		goto out;
	}
	n = close(fd);
	fd = -1;
	if (n < 0) {
		pg_err_errno(err, "close '%s' beside '%s'", tmp, shown);
		goto out;
	}
	if (renameat(dfd, tmp, dfd, name) < 0) {
		pg_err_errno(err, "rename '%s' to '%s'", tmp, shown);
		goto out;
	}
	created = false;
	if (fsync(dfd) < 0) {
		pg_err_errno(err, "fsync the directory of '%s'", shown);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (created)
		(void)unlinkat(dfd, tmp, 0);
	if (dfd >= 0)
		close(dfd);
	if (rootfd >= 0)
		close(rootfd);
	return rc;
}
