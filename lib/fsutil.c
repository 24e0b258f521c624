/* SPDX-License-Identifier: MIT */
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * From the deepest directory up, not from the root down: when the parent
 * exists (nearly always), one mkdir() does it.  Each mkdir() locks its
 * parent directory, so walking from the root made every caller in every
 * thread take the lock of "/" and of each directory on the way (the
 * API's log appenders did, for every chunk).
 */
int pg_mkdir_p(const char *path, mode_t mode, struct pg_err *err)
{
	struct stat st;
	size_t len = strlen(path);

	if (len == 0 || len >= PATH_MAX)
		return pg_err_set(err, PG_EINVAL, "mkdir '%s': bad path length", path);
	if (mkdir(path, mode) == 0)
		return 0;
	if (errno == ENOENT) {
		if (pg_mkdir_parent(path, mode, err) < 0)
			return -1;
		if (mkdir(path, mode) == 0)
			return 0;
	}
	if (errno != EEXIST)
		return pg_err_errno(err, "mkdir '%s'", path);
	if (stat(path, &st) < 0)
		return pg_err_errno(err, "mkdir '%s'", path);
	if (!S_ISDIR(st.st_mode))
		return pg_err_set(err, PG_EINVAL, "mkdir '%s': exists and is not a directory", path);
	return 0;
}

int pg_mkdir_parent(const char *path, mode_t mode, struct pg_err *err)
{
	char tmp[PATH_MAX];
	char *slash;
	size_t len = strlen(path);

	if (len >= sizeof(tmp))
		return pg_err_set(err, PG_EINVAL, "mkdir for '%s': path too long", path);
	memcpy(tmp, path, len + 1);
	slash = strrchr(tmp, '/');
	if (!slash || slash == tmp)
		return 0;
	*slash = '\0';
	return pg_mkdir_p(tmp, mode, err);
}

int pg_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int fsync_dir_of(const char *path, struct pg_err *err)
{
	char dir[PATH_MAX];
	char *slash;
	int fd, rc = 0;
	size_t len = strlen(path);

	if (len >= sizeof(dir))
		return pg_err_set(err, PG_EINVAL, "fsync dir of '%s': path too long", path);
	memcpy(dir, path, len + 1);
	slash = strrchr(dir, '/');
	if (!slash)
		memcpy(dir, ".", 2);
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return pg_err_errno(err, "open directory '%s'", dir);
	if (fsync(fd) < 0)
		rc = pg_err_errno(err, "fsync directory '%s'", dir);
	close(fd);
	return rc;
}

int pg_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode,
			 struct pg_err *err)
{
	char tmp[PATH_MAX];
	int fd = -1, rc = -1, n;

	n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return pg_err_set(err, PG_EINVAL, "write '%s': path too long", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return pg_err_errno(err, "create '%s'", tmp);
	if (pg_write_all(fd, data, len) < 0) {
		pg_err_errno(err, "write '%s'", tmp);
		goto out;
	}
	if (fsync(fd) < 0) {
		pg_err_errno(err, "fsync '%s'", tmp);
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		pg_err_errno(err, "close '%s'", tmp);
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		pg_err_errno(err, "rename '%s' to '%s'", tmp, path);
		goto out;
	}
	rc = fsync_dir_of(path, err);
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	return rc;
}

int pg_read_fd(int fd, const char *name, struct pg_buf *b, struct pg_err *err)
{
	char chunk[65536];
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return pg_err_errno(err, "read '%s'", name);
		}
		if (pg_buf_add(b, chunk, (size_t)n) < 0) {
			if (errno == E2BIG)
				return pg_err_set(err, PG_ETOOBIG, "'%s': larger than %zu bytes",
						  name, b->max);
			return pg_err_errno(err, "read '%s'", name);
		}
	}
	return 0;
}

int pg_read_file(const char *path, struct pg_buf *b, struct pg_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return pg_err_errno(err, "open '%s'", path);
	rc = pg_read_fd(fd, path, b, err);
	close(fd);
	return rc;
}

int pg_read_file_under(const char *root, const char *rel, struct pg_buf *b,
		       struct pg_err *err)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s%s", root, rel);

	if (n < 0 || (size_t)n >= sizeof(path))
		return pg_err_set(err, PG_EINVAL, "%s%s: path too long", root, rel);
	pg_buf_reset(b);
	return pg_read_file(path, b, err);
}
