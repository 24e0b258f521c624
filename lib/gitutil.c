/* SPDX-License-Identifier: MIT */
#include "gitutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt.h"
#include "fsutil.h"
#include "log.h"
#include "timeutil.h"

#define GIT_PROGRESS_INTERVAL_MS 1000

/* ---- the process ------------------------------------------------------ */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_rc;

static void global_init_once(void)
{
	global_rc = git_libgit2_init();
}

int pg_git_global_init(struct pg_err *err)
{
	if (pthread_once(&global_once, global_init_once) != 0)
		return pg_err_set(err, PG_EIO, "initialise libgit2: pthread_once failed");
	if (global_rc < 0)
		return pg_git_fail(err, PG_EIO, global_rc, "initialise libgit2");
	return 0;
}

int pg_git_fail(struct pg_err *err, enum pg_errcode code, int rc, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	pg_vfmt_cut(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (e && e->message)
		return pg_err_set(err, code, "%s: %s", what, e->message);
	return pg_err_set(err, code, "%s: libgit2 error %d", what, rc);
}

void pg_git_progress_start(struct pg_git_progress *p, const char *component,
			   int64_t timeout_ms)
{
	memset(p, 0, sizeof(*p));
	p->component = component;
	p->start_ms = pg_time_mono_ms();
	p->last_log_ms = p->start_ms;
	p->deadline_ms = p->start_ms + timeout_ms;
}

void pg_git_progress_label(struct pg_git_progress *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pg_vfmt_cut(p->label, sizeof(p->label), fmt, ap);
	va_end(ap);
	memset(&p->last, 0, sizeof(p->last));
}

bool pg_git_progress_expired(struct pg_git_progress *p)
{
	if (pg_time_mono_ms() < p->deadline_ms)
		return false;
	p->timed_out = true;
	return true;
}

int pg_git_on_transfer(const git_indexer_progress *st, void *payload)
{
	struct pg_git_progress *p = payload;
	int64_t now = pg_time_mono_ms();

	p->last = *st;
	if (now - p->last_log_ms >= GIT_PROGRESS_INTERVAL_MS) {
		p->last_log_ms = now;
		pg_log_info(p->component, "%s: received %u/%u objects (%zu KiB), indexed %u/%u deltas",
			    p->label, st->received_objects, st->total_objects,
			    st->received_bytes / 1024, st->indexed_deltas, st->total_deltas);
	}
	return pg_git_progress_expired(p) ? GIT_EUSER : 0;
}

int pg_git_on_sideband(const char *str, int len, void *payload)
{
	struct pg_git_progress *p = payload;
	int64_t now = pg_time_mono_ms();

	/* "Counting objects:  11% (1/9)\r..." arrives in chunks that are
	 * not line-aligned: log a sample, the chunk's last complete status,
	 * at debug level. */
	if (now - p->last_side_ms >= GIT_PROGRESS_INTERVAL_MS && len > 0 &&
	    pg_log_enabled(PG_LOG_DEBUG, p->component)) {
		int end = len, start;

		while (end > 0 && (str[end - 1] == '\r' || str[end - 1] == '\n'))
			end--;
		for (start = end; start > 0 && str[start - 1] != '\r' && str[start - 1] != '\n';
		     start--)
			;
		p->last_side_ms = now;
		if (end > start)
			pg_log_debug(p->component, "%s: remote: %.*s", p->label, end - start,
				     str + start);
	}
	return pg_git_progress_expired(p) ? GIT_EUSER : 0;
}

int pg_git_mirror_open(git_repository **repo, const char *path, const char *component,
		       const char *what, struct pg_err *err)
{
	struct stat st;
	int rc;

	if (stat(path, &st) == 0) {
		rc = git_repository_open_ext(repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH |
					     GIT_REPOSITORY_OPEN_BARE, NULL);
		if (rc == 0)
			return 0;
		if (rc != GIT_ENOTFOUND || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			return pg_git_fail(err, PG_EIO, rc, "open mirror '%s'", path);
		git_error_clear();
		pg_log_warn(component, "%s: %s is not a repository (cut short?): initialising it",
			    what, path);
	} else if (errno != ENOENT) {
		return pg_err_errno(err, "mirror '%s'", path);
	} else if (pg_mkdir_parent(path, 0755, err) < 0) {
		return -1;
	}
	rc = git_repository_init(repo, path, 1);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "create mirror '%s'", path);
	pg_log_info(component, "%s: created mirror %s", what, path);
	return 0;
}
