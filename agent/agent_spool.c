/* SPDX-License-Identifier: MIT */
/* The agent's spool directory: jobs held and results not yet acknowledged. */
#include "agent_spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt.h"
#include "fsutil.h"
#include "timeutil.h"
#include "vec.h"

/* The largest id or attempt: what a JSON number holds exactly. */
#define AGENT_SPOOL_ID_MAX 9007199254740992LL
/* How often a waiting open tries the lock again. */
#define SPOOL_LOCK_POLL_MS 50

static const char *spool_prefix(enum agent_spool_kind kind)
{
	return kind == AGENT_SPOOL_JOB ? "job-" : "result-";
}

static int spool_name(enum agent_spool_kind kind, int64_t job_id, int64_t attempt,
		      char *out, size_t outlen)
{
	return pg_fmt(out, outlen, "%s%lld-%lld.json", spool_prefix(kind), (long long)job_id,
		      (long long)attempt) < 0 ? -1 : 0;
}

static int spool_path(const char *dir, const char *name, char *out, size_t outlen,
		      struct pg_err *err)
{
	if (pg_fmt(out, outlen, "%s/%s", dir, name) < 0)
		return pg_err_set(err, PG_EINVAL, "spool '%s': path too long", dir);
	return 0;
}

static int spool_file(const struct agent_spool *sp, enum agent_spool_kind kind,
		      int64_t job_id, int64_t attempt, char *out, size_t outlen,
		      struct pg_err *err)
{
	char name[AGENT_SPOOL_NAME_MAX];

	if (spool_name(kind, job_id, attempt, name, sizeof(name)) < 0)
		return pg_err_set(err, PG_EINVAL, "spool: bad job %lld attempt %lld",
				  (long long)job_id, (long long)attempt);
	return spool_path(sp->dir, name, out, outlen, err);
}

/* A decimal number 1..AGENT_SPOOL_ID_MAX without leading zeros, ending at
 * `stop`; advances *p past it. */
static int spool_number(const char **p, char stop, int64_t *out)
{
	const char *s = *p;
	int64_t v = 0;

	if (*s < '1' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > AGENT_SPOOL_ID_MAX)
			return -1;
	}
	if (*s != stop)
		return -1;
	*p = s + 1;
	*out = v;
	return 0;
}

int agent_spool_parse_name(const char *name, enum agent_spool_kind *kind, int64_t *job_id,
			   int64_t *attempt)
{
	enum agent_spool_kind k;
	const char *p;
	int64_t id, att;

	if (strncmp(name, "job-", 4) == 0) {
		k = AGENT_SPOOL_JOB;
		p = name + 4;
	} else if (strncmp(name, "result-", 7) == 0) {
		k = AGENT_SPOOL_RESULT;
		p = name + 7;
	} else {
		return -1;
	}
	if (spool_number(&p, '-', &id) < 0 || spool_number(&p, '.', &att) < 0 ||
	    strcmp(p, "json") != 0)
		return -1;
	*kind = k;
	*job_id = id;
	*attempt = att;
	return 0;
}

/* A temporary of pg_write_file_atomic(): "job-..." or "result-..."
 * followed by ".json.tmp.PID". */
static int spool_is_tmp(const char *name)
{
	const char *t = strstr(name, ".json.tmp.");

	return t && (strncmp(name, "job-", 4) == 0 || strncmp(name, "result-", 7) == 0) &&
	       t[10] && strspn(t + 10, "0123456789") == strlen(t + 10);
}

static int spool_clean_tmp(const char *dir, unsigned int *removed, struct pg_err *err)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = -1;

	if (!d)
		return pg_err_errno(err, "spool: open directory '%s'", dir);
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (!spool_is_tmp(de->d_name))
			continue;
		if (spool_path(dir, de->d_name, path, sizeof(path), err) < 0)
			goto out;
		if (unlink(path) < 0 && errno != ENOENT) {
			pg_err_errno(err, "spool: remove leftover '%s'", path);
			goto out;
		}
		(*removed)++;
	}
	if (errno) {
		pg_err_errno(err, "spool: read directory '%s'", dir);
		goto out;
	}
	rc = 0;
out:
	closedir(d);
	return rc;
}

void agent_spool_close(struct agent_spool *sp)
{
	if (sp->lock_fd >= 0)
		close(sp->lock_fd);	/* releases the flock */
	sp->lock_fd = -1;
	free(sp->dir);
	free(sp->rejected_dir);
	sp->dir = NULL;
	sp->rejected_dir = NULL;
}

/* Take the flock, trying every SPOOL_LOCK_POLL_MS until wait_ms passed. */
static int spool_lock(int fd, const char *dir, const char *path, int64_t wait_ms,
		      struct pg_err *err)
{
	int64_t deadline = pg_time_mono_ms() + wait_ms;

	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return pg_err_errno(err, "spool: lock '%s'", path);
		if (errno == EWOULDBLOCK && pg_time_mono_ms() >= deadline)
			return pg_err_set(err, PG_ECONFLICT,
					  "spool '%s' is in use by another agent process", dir);
		pg_sleep_ms(SPOOL_LOCK_POLL_MS, NULL);
	}
}

int agent_spool_open(struct agent_spool *sp, const char *dir, unsigned int *removed_tmp,
		     struct pg_err *err)
{
	return agent_spool_open_wait(sp, dir, 0, removed_tmp, err);
}

int agent_spool_open_wait(struct agent_spool *sp, const char *dir, int64_t wait_ms,
			  unsigned int *removed_tmp, struct pg_err *err)
{
	char path[PATH_MAX];
	unsigned int removed = 0;

	memset(sp, 0, sizeof(*sp));
	sp->lock_fd = -1;
	sp->dir = strdup(dir);
	if (!sp->dir)
		goto nomem;
	if (spool_path(dir, "rejected", path, sizeof(path), err) < 0)
		goto fail;
	sp->rejected_dir = strdup(path);
	if (!sp->rejected_dir)
		goto nomem;
	if (pg_mkdir_p(sp->rejected_dir, 0750, err) < 0)
		goto fail;
	if (spool_path(dir, "lock", path, sizeof(path), err) < 0)
		goto fail;
	sp->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (sp->lock_fd < 0) {
		pg_err_errno(err, "spool: open '%s'", path);
		goto fail;
	}
	if (spool_lock(sp->lock_fd, dir, path, wait_ms, err) < 0)
		goto fail;
	if (spool_clean_tmp(sp->dir, &removed, err) < 0 ||
	    spool_clean_tmp(sp->rejected_dir, &removed, err) < 0)
		goto fail;
	if (removed_tmp)
		*removed_tmp = removed;
	return 0;
nomem:
	pg_err_set(err, PG_ENOMEM, "out of memory");
fail:
	agent_spool_close(sp);
	return -1;
}

int agent_spool_write(const struct agent_spool *sp, enum agent_spool_kind kind,
		      int64_t job_id, int64_t attempt, const void *data, size_t len,
		      struct pg_err *err)
{
	char path[PATH_MAX];

	if (spool_file(sp, kind, job_id, attempt, path, sizeof(path), err) < 0)
		return -1;
	return pg_write_file_atomic(path, data, len, 0640, err);
}

int agent_spool_read(const struct agent_spool *sp, enum agent_spool_kind kind,
		     int64_t job_id, int64_t attempt, struct pg_buf *b, struct pg_err *err)
{
	char path[PATH_MAX];
	struct stat st;

	if (spool_file(sp, kind, job_id, attempt, path, sizeof(path), err) < 0)
		return -1;
	if (stat(path, &st) < 0 && errno == ENOENT)
		return pg_err_set(err, PG_ENOTFOUND, "spool: '%s' does not exist", path);
	return pg_read_file(path, b, err);
}

int agent_spool_remove(const struct agent_spool *sp, enum agent_spool_kind kind,
		       int64_t job_id, int64_t attempt, struct pg_err *err)
{
	char path[PATH_MAX];

	if (spool_file(sp, kind, job_id, attempt, path, sizeof(path), err) < 0)
		return -1;
	if (unlink(path) < 0 && errno != ENOENT)
		return pg_err_errno(err, "spool: remove '%s'", path);
	return 0;
}

bool agent_spool_exists(const struct agent_spool *sp, enum agent_spool_kind kind,
			int64_t job_id, int64_t attempt)
{
	char path[PATH_MAX];
	struct stat st;

	if (spool_file(sp, kind, job_id, attempt, path, sizeof(path), NULL) < 0)
		return false;
	return stat(path, &st) == 0;
}

static int spool_entry_cmp(const void *a, const void *b)
{
	const struct agent_spool_entry *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	if (x->job_id != y->job_id)
		return x->job_id < y->job_id ? -1 : 1;
	if (x->attempt != y->attempt)
		return x->attempt < y->attempt ? -1 : 1;
	return 0;
}

int agent_spool_list(const struct agent_spool *sp, enum agent_spool_kind kind,
		     struct agent_spool_entry **out, size_t *n, struct pg_err *err)
{
	struct agent_spool_entry *v = NULL, e;
	size_t len = 0, alloc = 0;
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int rc = -1;

	*out = NULL;
	*n = 0;
	d = opendir(sp->dir);
	if (!d)
		return pg_err_errno(err, "spool: open directory '%s'", sp->dir);
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		memset(&e, 0, sizeof(e));
		if (agent_spool_parse_name(de->d_name, &e.kind, &e.job_id, &e.attempt) < 0 ||
		    e.kind != kind || strlen(de->d_name) >= sizeof(e.name))
			continue;
		if (spool_path(sp->dir, de->d_name, path, sizeof(path), err) < 0)
			goto out;
		if (stat(path, &st) < 0) {
			if (errno == ENOENT)
				continue;	/* removed since readdir() */
			pg_err_errno(err, "spool: stat '%s'", path);
			goto out;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		e.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		memcpy(e.name, de->d_name, strlen(de->d_name) + 1);
		if (PG_GROW(v, alloc, len + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
		v[len++] = e;
	}
	if (errno) {
		pg_err_errno(err, "spool: read directory '%s'", sp->dir);
		goto out;
	}
	if (len)
		qsort(v, len, sizeof(*v), spool_entry_cmp);
	*out = v;
	*n = len;
	v = NULL;
	rc = 0;
out:
	free(v);
	closedir(d);
	return rc;
}

int agent_spool_reject(const struct agent_spool *sp, int64_t job_id, int64_t attempt,
		       long status, const char *answer, struct pg_err *err)
{
	char name[AGENT_SPOOL_NAME_MAX], from[PATH_MAX], to[PATH_MAX], ans[PATH_MAX];
	struct pg_buf text = PG_BUF_INIT(PG_BUF_NOLIMIT);
	int rc = -1;

	if (spool_name(AGENT_SPOOL_RESULT, job_id, attempt, name, sizeof(name)) < 0)
		return pg_err_set(err, PG_EINVAL, "spool: bad job %lld attempt %lld",
				  (long long)job_id, (long long)attempt);
	if (spool_path(sp->dir, name, from, sizeof(from), err) < 0 ||
	    spool_path(sp->rejected_dir, name, to, sizeof(to), err) < 0)
		return -1;
	/* "result-1-2.json" -> "result-1-2.answer" */
	if (pg_fmt(ans, sizeof(ans), "%.*s.answer", (int)(strlen(to) - 5), to) < 0)
		return pg_err_set(err, PG_EINVAL, "spool '%s': path too long", sp->dir);
	/* The answer first: a crash in between leaves the result in the
	 * spool, to be uploaded (and refused) again, and the answer written
	 * then replaces this one; never a rejected result without its
	 * answer. */
	if (pg_buf_printf(&text, "HTTP %ld\n%s\n", status, answer ? answer : "") < 0) {
		pg_buf_err(&text, err, "spool: the controller's answer");
		goto out;
	}
	if (pg_write_file_atomic(ans, text.data, text.len, 0640, err) < 0)
		goto out;
	if (rename(from, to) < 0) {
		pg_err_errno(err, "spool: move '%s' to '%s'", from, to);
		unlink(ans);
		goto out;
	}
	rc = 0;
out:
	pg_buf_release(&text);
	return rc;
}
