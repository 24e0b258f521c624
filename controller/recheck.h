/* SPDX-License-Identifier: MIT */
#ifndef CTL_RECHECK_H
#define CTL_RECHECK_H

/*
 * Recheck requests (recheck_requests): a "Recheck-request:" reply on the
 * list or Patchwork, or an administrator's POST /api/v1/series/ID/recheck,
 * asking for some contexts of a series to be tested again, optionally on
 * another branch.  This module is the only writer of the table: intake
 * (series.c) and the API add requests, the planner lists the pending ones
 * and marks each planned or ignored.
 *
 * A request's life: 'pending' (created_at), then 'planned' (its runs
 * exist; reason lists the contexts it named that no longer exist, or says
 * that the series' first run answers it) or
 * 'ignored' (reason says why: the series is superseded, or none of its
 * contexts exist).  A mail's request is recorded once per (series,
 * Message-ID); an API request every time.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "store.h"

/* A request to record. */
struct recheck_new {
	int64_t series_id;
	const char *origin;		/* "mail", "patchwork" or "api" */
	const char *msgid;		/* the requesting mail, NULL for the API */
	const char *requester;		/* its From address, or "admin" */
	const char *contexts;		/* names, comma-separated, non-empty */
	const char *rebase;		/* a branch, or NULL */
};

/*
 * Record a pending request at now.  *id gets its id, or 0 when the same
 * mail's request is there already (nothing recorded).  Returns 0, or -1:
 * PG_EINVAL for a missing field, or a store error.  One statement: in the
 * caller's transaction when there is one.
 */
int recheck_add(struct store *st, const struct recheck_new *r, int64_t now, int64_t *id,
		struct pg_err *err);

/* A pending request as the planner takes it. */
struct recheck {
	int64_t id;
	int64_t series_id;
	char *contexts;
	char *rebase;			/* NULL: no rebase */
};

/* The pending requests, oldest first, into *out (free with
 * recheck_list_free()).  Returns 0 or -1. */
int recheck_list_pending(struct store *st, struct recheck **out, size_t *n, struct pg_err *err);
void recheck_list_free(struct recheck *v, size_t n);

/* Whether request id is still pending (*pending).  Returns 0 or -1. */
int recheck_is_pending(struct store *st, int64_t id, bool *pending, struct pg_err *err);

/*
 * End a pending request: planned (reason: the contexts it named that are
 * gone, or NULL) or ignored (reason required).  *changed (may be NULL):
 * whether it was still pending.  Returns 0, or -1: PG_EINVAL, or a store
 * error.
 */
int recheck_mark_planned(struct store *st, int64_t id, const char *reason, bool *changed,
			 struct pg_err *err);
int recheck_mark_ignored(struct store *st, int64_t id, const char *reason, bool *changed,
			 struct pg_err *err);

/*
 * The series' first run (run_id; the first of them when its contexts
 * span trees) was just planned: every request still pending on series_id
 * is older than it, and that run tests every context on the base a plain
 * recheck would repeat, so it answers them (planned,
 * reason "answered by the series' first run (run N)"); a new store
 * reading a day of history would otherwise plan a first run and a recheck
 * run in one pass, two pending checks of one context.  A request with a
 * rebase branch asks for another base and stays pending.  *n (may be
 * NULL): how many were answered.  Returns 0 or -1 (a store error).  One
 * statement: call it in the transaction that adds the run.
 */
int recheck_answer_by_first_run(struct store *st, int64_t series_id, int64_t run_id,
				int64_t *n, struct pg_err *err);

#endif
