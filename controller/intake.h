/* SPDX-License-Identifier: MIT */
#ifndef CTL_INTAKE_H
#define CTL_INTAKE_H

/*
 * Intake: every raw message from every source goes through
 * intake_message(), which stores it (accepted, or rejected with the
 * reason), classifies it, and assembles patches into series (series.c).
 * Sources (public-inbox archives, mbox files, Patchwork) call it inside a
 * transaction that also moves their cursor, so that a crash loses nothing
 * and duplicates nothing: what was read and where reading stopped commit
 * together.
 *
 * Ownership: intake (intake.c, and intake_patchwork.c for source_events)
 * is the only writer of sources, source_cursors, messages and
 * source_events; series, patches and recheck requests are written through
 * series.h and recheck.h.
 */

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "store.h"

#define INTAKE_MAX_REASONS 16

struct intake_reason {
	char text[160];
	unsigned long count;
};

struct intake_stats {
	unsigned long read;		/* messages offered */
	unsigned long accepted;		/* stored and parsed */
	unsigned long duplicates;	/* already stored (same source and Message-ID or position) */
	unsigned long rejected;		/* stored as rejected, with a reason */
	unsigned long patches;		/* patch mails placed in a series */
	unsigned long covers;
	unsigned long replies;
	unsigned long reports;		/* test reports (|SUCCESS| pw...): ignored */
	unsigned long other;
	unsigned long rechecks;		/* recheck requests recorded */
	unsigned long deleted;		/* purged from an archive (kept in the store) */
	unsigned long series_created;
	unsigned long series_completed;
	unsigned long series_superseded;
	unsigned long series_stale;	/* reported as never completed */
	struct intake_reason reasons[INTAKE_MAX_REASONS];
	size_t n_reasons;
};

struct intake {
	struct store *st;
	const char *project;		/* e.g. "dpdk" */
	const char *const *contexts;	/* ours, for Recheck-request */
	size_t n_contexts;
	size_t max_message;		/* bytes; larger mails are rejected */
	struct intake_stats stats;
};

/* Where a message came from: the source row and the position in it
 * (e.g. "0:<commit>" for a public-inbox epoch, "12345" for a byte offset
 * of an mbox, "pw:patch:77" for Patchwork). */
struct intake_origin {
	int64_t source_id;
	const char *position;
	int64_t pw_patch_id;		/* 0 when not from Patchwork */
	int64_t pw_series_id;
};

/*
 * Take one raw message.  Must run inside a store transaction (the caller's
 * batch).  A malformed mail is not an error: it is stored as rejected and
 * counted.  Returns 0, or -1 when the store failed (the caller rolls back
 * its batch and keeps its cursor).
 */
int intake_message(struct intake *in, const struct intake_origin *from,
		   const char *raw, size_t len, struct pg_err *err);

/*
 * Find or create the source named `name` (kind "public-inbox", "mbox" or
 * "patchwork") and return its row id.  Runs its own statement; call it
 * outside a batch.
 */
int intake_source(struct intake *in, const char *name, const char *kind,
		  const char *location, int64_t *id, struct pg_err *err);

/* Read a source cursor ("" when none yet) into out[outlen]. */
int intake_cursor_get(struct intake *in, int64_t source_id, const char *scope,
		      char *out, size_t outlen, struct pg_err *err);

/* Set a source cursor; inside the batch's transaction. */
int intake_cursor_set(struct intake *in, int64_t source_id, const char *scope,
		      const char *position, struct pg_err *err);

/* Mark incomplete series first received more than `after_s` seconds
 * before `now` as stale (reported once), counting them. */
int intake_mark_stale(struct intake *in, int64_t now, int64_t after_s, struct pg_err *err);

/* Count a rejection reason (grouped by text, first INTAKE_MAX_REASONS). */
void intake_count_reason(struct intake_stats *s, const char *reason);

/* Append the human summary of a pass to out. */
int intake_stats_print(const struct intake_stats *s, struct pg_buf *out);

#endif
