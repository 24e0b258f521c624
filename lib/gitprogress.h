/* SPDX-License-Identifier: MIT */
#ifndef PG_GITPROGRESS_H
#define PG_GITPROGRESS_H

/*
 * Progress logging and a deadline for libgit2 transfers (the archive
 * mirrors and the tree mirrors fetch the same way).  libgit2 1.5 has no
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

#endif
