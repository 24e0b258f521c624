/* SPDX-License-Identifier: MIT */
#ifndef PG_GITUTIL_H
#define PG_GITUTIL_H

/*
 * What the libgit2 users (the archive reader, the tree mirrors) share:
 * errors with libgit2's message, and progress logging and a deadline for
 * transfers.  libgit2 1.5 has no
 * socket timeouts, so the deadline is enforced from its callbacks: a
 * negative return aborts the transfer.
 *
 * Embed a struct pg_git_progress as the FIRST member of the struct passed
 * as the callbacks' payload, and set transfer_progress and
 * sideband_progress to the functions below.
 */

#include <stdbool.h>
#include <stdint.h>

#include <git2.h>

#include "err.h"

/*
 * Initialise libgit2 for the process (git_libgit2_init(), once; it is
 * never shut down).  Every user of libgit2 calls it first (opening an
 * archive or a mirror, applying a series), so a program only needs to
 * call it itself to be sure that it happens before its threads start.
 * Thread-safe.  Returns 0, or -1 with PG_EIO when libgit2 cannot
 * initialise.
 */
int pg_git_global_init(struct pg_err *err);

/* Set err to "WHAT: libgit2's last message" (WHAT a printf format) with
 * the given code; git_error_last() may be NULL in 1.5 (after a callback
 * abort, for one), then the bare return code rc is named.  Returns -1. */
int pg_git_fail(struct pg_err *err, enum pg_errcode code, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

struct pg_git_progress {
	const char *component;		/* log component */
	char label[256];		/* e.g. "fetch https://..." in log lines */
	int64_t start_ms;
	int64_t deadline_ms;
	int64_t last_log_ms;
	int64_t last_side_ms;
	bool timed_out;
	git_indexer_progress last;	/* the latest counts */
};

/* Start the clock: the transfer must end within timeout_ms. */
void pg_git_progress_start(struct pg_git_progress *p, const char *component,
			   int64_t timeout_ms);

/* Name what is transferred now (printf format), for the log lines; resets
 * the counts. */
void pg_git_progress_label(struct pg_git_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* True (and timed_out set) once the deadline has passed. */
bool pg_git_progress_expired(struct pg_git_progress *p);

/* libgit2 callbacks: log received objects at most once a second, and the
 * remote's status lines at debug level; abort past the deadline. */
int pg_git_on_transfer(const git_indexer_progress *st, void *payload);
int pg_git_on_sideband(const char *str, int len, void *payload);

/*
 * Open the bare mirror at path, or create it (and its missing parents)
 * when nothing is there.  A directory that is there but not a repository
 * and belongs to us is a creation a crash cut short: it is initialised
 * again, as git init does (libgit2 1.5 also says GIT_ENOTFOUND for a
 * repository of another user, which is not ours to initialise).  `what`
 * names the mirror in log lines ("tree dpdk", "mirror").  Returns 0, or -1
 * with err naming the path.
 */
int pg_git_mirror_open(git_repository **repo, const char *path, const char *component,
		       const char *what, struct pg_err *err);

#endif
