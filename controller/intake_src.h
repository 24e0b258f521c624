/* SPDX-License-Identifier: MIT */
#ifndef CTL_INTAKE_SRC_H
#define CTL_INTAKE_SRC_H

/*
 * The source drivers of intake: each reads one source from its cursors
 * and feeds intake_message() in batches, each batch one transaction with
 * the cursor's move.  `stop` (may be NULL) is polled between batches, so
 * that the daemon stops promptly on SIGTERM without losing a batch.
 */

#include <signal.h>
#include <stdint.h>

#include "err.h"
#include "intake.h"

struct intake_src {
	const char *name;		/* the source's unique name */
	const char *location;		/* path or URL */
	const char *mirror_dir;		/* where a remote archive is mirrored */
	int batch;			/* messages per transaction */
	/* Patchwork only */
	const char *pw_project;
	int64_t since_ms;		/* where a new source starts (0: a day ago) */
	int timeout_s;			/* each request, > 0 (0: the client's default) */
};

/* A public-inbox archive (v1 or v2, local or remote). */
int intake_inbox(struct intake *in, const struct intake_src *src,
		 const volatile sig_atomic_t *stop, struct pg_err *err);

/* An mbox file (mboxo or mboxrd, as git mailsplit splits them); the
 * position of a message is its byte offset in the file. */
int intake_mbox(struct intake *in, const struct intake_src *src,
		const volatile sig_atomic_t *stop, struct pg_err *err);

/* A Patchwork project's events (series-completed, comments). */
int intake_patchwork(struct intake *in, const struct intake_src *src,
		     const volatile sig_atomic_t *stop, struct pg_err *err);

#endif
