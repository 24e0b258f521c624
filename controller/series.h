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
 *  - A reply carrying "Recheck-request: ctx, ..." naming contexts of ours
 *    becomes a recheck request on the series of the message it replies to.
 *
 * All functions run inside the caller's transaction.
 */

#include <stdint.h>

#include "err.h"
#include "intake.h"
#include "mail.h"
#include "subject.h"
#include "trailers.h"

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

#endif
