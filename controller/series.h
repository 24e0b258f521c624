/* SPDX-License-Identifier: MIT */
#ifndef CTL_SERIES_H
#define CTL_SERIES_H

/*
 * Series assembly, the way a maintainer sees a series (after Patchwork's
 * find_series and the reference's recommended algorithm):
 *
 *  - A patch "[PATCH vV x/n]" or a cover "0/n" belongs to the series that
 *    its own Message-ID or one of its In-Reply-To/References ids (closest
 *    first) is indexed under (series_refs), with the same project,
 *    submitter, version and total.  Without such a thread link, an
 *    incomplete series of the same submitter, version and total sent within
 *    20 minutes is taken (unthreaded sends).  A patch without an x/n marker
 *    is a series of one.
 *  - A series that already has patch x (or a cover) gets a sibling series
 *    instead: that is a resend.
 *  - A series is complete when patches 1..n are all there (the cover is
 *    optional).  On completion, older versions of it (same submitter and
 *    title lineage, or threaded below one of its messages) are superseded;
 *    a series completed after a newer version of itself is superseded at once.
 *  - Depends-on: and base-commit: trailers are recorded with the series.
 *    The series' base commit is its cover letter's base-commit, else the
 *    one of its lowest-numbered patch that carries one (git format-patch
 *    --base writes it once: in the cover letter, or after a patch's diff
 *    without one); SERIES_BASE_COMMIT_SQL is that rule for every reader.
 *  - A reply carrying "Recheck-request: ctx, ..." naming contexts of ours
 *    becomes a recheck request on the series of the message it replies to.
 *
 * Ownership: this module is the only writer of series, series_refs,
 * series_deps and patches, and the only place that resolves a Depends-on
 * (intake when the mail arrives, the planner when it waits for one); the
 * others read them, or call the functions below.
 *
 * All functions run inside the caller's transaction (or, for one
 * statement, none).
 */

#include <stdint.h>

#include "err.h"
#include "store.h"
#include "intake.h"
#include "mail.h"
#include "subject.h"
#include "trailers.h"

/* The series' base commit (NULL when none), as an SQL expression over a
 * series row aliased "s". */
#define SERIES_BASE_COMMIT_SQL \
	"coalesce(nullif(s.base_commit, ''), (SELECT bp.base_commit FROM patches bp" \
	" WHERE bp.series_id = s.id AND coalesce(bp.base_commit, '') <> ''" \
	" ORDER BY bp.number LIMIT 1))"

struct series_mail {
	int64_t message_row;		/* messages.id */
	const struct pg_mail *mail;
	const struct pg_subject *subject;
	const struct pg_trailers *trailers;
	int64_t date_s;			/* the mail's Date:, or the time received */
	int64_t pw_patch_id;		/* 0 when unknown */
	int64_t pw_series_id;
};

/* Place a patch mail.  Returns 0 or -1 (store error). */
int series_add_patch(struct intake *in, const struct series_mail *sm, struct pg_err *err);

/* Place a cover letter (0/n). */
int series_add_cover(struct intake *in, const struct series_mail *sm, struct pg_err *err);

/* Record a recheck request carried by a reply, if it names our contexts
 * and the message it answers belongs to a series. */
int series_add_reply(struct intake *in, const struct series_mail *sm, struct pg_err *err);

/* Record the recheck request of trailers `tr` on a series, keeping only
 * the contexts that are ours; `origin` is "mail", "patchwork" or "api". */
int series_recheck(struct intake *in, int64_t series_id, const char *origin, const char *msgid,
		   const char *requester, const struct pg_trailers *tr, struct pg_err *err);

/* The series that message `msgid` is a patch or the cover of, or 0. */
int series_of_msgid(struct intake *in, const char *msgid, int64_t *series_id,
		    struct pg_err *err);

/*
 * The series a Depends-on names, for series owner of project: kind
 * "msgid" (a patch's or cover's Message-ID, without '<' '>'), "series" or
 * "patch" (Patchwork ids, ref in decimal).  *dep is owner when the
 * reference names the series itself (its own patch, cover or Patchwork
 * id: the caller ignores it); else the newest other series with that
 * patch, cover or Patchwork id, or, for a Message-ID, the earliest series
 * whose thread refers to it (a later series may list an earlier one's
 * ids); 0 when none is known yet.  Returns 0 or -1 (a store error).
 */
int series_dep_resolve(struct store *st, const char *project, int64_t owner, const char *kind,
		       const char *ref, int64_t *dep, struct pg_err *err);

/* Record that the Depends-on (kind, ref) of series owner, unresolved so
 * far, is series dep (not owner).  Returns 0 or -1. */
int series_dep_record(struct store *st, int64_t owner, const char *kind, const char *ref,
		      int64_t dep, struct pg_err *err);

/* Patchwork's ids of a mail seen again through Patchwork after an archive
 * brought it (or the other way round): the patch with Message-ID msgid in
 * series_id and the series itself get them where they have none yet;
 * 0 leaves one alone.  Returns 0 or -1. */
int series_remember_pw_ids(struct store *st, int64_t series_id, const char *msgid,
			   int64_t pw_patch_id, int64_t pw_series_id, struct pg_err *err);

/* The Patchwork id of patch row patch_id, found by its Message-ID (the
 * outbox's lookup), where it has none yet.  Returns 0 or -1. */
int series_patch_set_pw_id(struct store *st, int64_t patch_id, int64_t pw_patch_id,
			   struct pg_err *err);

/* Mark the incomplete series of project received before now - after_s as
 * stale (once); *marked gets how many.  Returns 0 or -1. */
int series_mark_stale(struct store *st, const char *project, int64_t now, int64_t after_s,
		      int64_t *marked, struct pg_err *err);

#endif
