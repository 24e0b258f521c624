/* SPDX-License-Identifier: MIT */
#ifndef CTL_OUTBOX_H
#define CTL_OUTBOX_H

/*
 * The outboxes (DESIGN.md section 2.7): Patchwork checks (check_outbox)
 * and test-report mails (email_outbox) that must reach the outside exactly
 * once, whatever the network does and however often the controller is
 * killed.  The outbox (outbox_*.c) is the only writer of both tables: the
 * planner queues its pending checks, the verdict its final ones, a cancel
 * its NOT TESTED ones, all through the *_tx functions below.  Rows are queued in the transaction of the state change they
 * report (the planner's 'pending' rows, the verdict's final ones); a
 * delivery pass, run by the daemon in its own thread with its own store
 * connection (ctl_outbox.h), takes the rows that are due and delivers
 * them.
 *
 * A row's life: delivery 'queued' (with attempts, next_try, and the last
 * answer in response_code/response), then 'sent' (sent_at, and the answer
 * that settled it), 'failed' (an answer that retrying as is cannot change:
 * a 4xx, a refused mail; kept with its answer for an admin, who may queue
 * it again with outbox_retry()), or 'cancelled' (a pending check made
 * pointless by the final check of the same run before it was delivered).
 *
 * Exactly once, for checks.  Patchwork has no idempotency key: a POST
 * whose answer is lost (timeout, dropped connection, a kill -9 between
 * the 201 and our commit) may have created the check.  So:
 *  1. Before each try the row is claimed in its own transaction:
 *     attempts + 1, maybe_posted = 1 and next_try moved to the retry time,
 *     so that a crash during the network call leaves a row that says "a
 *     POST may have happened" and is not retried at once.  The try's end
 *     records whether the check may exist (outbox_check_may_exist()):
 *     not after a POST refused at connect or answered other than 5xx;
 *     still after an answer lost once the request went out, a 5xx, or a
 *     failed lookup.
 *  2. A try of a row with maybe_posted set first looks
 *     for an identical check already there: pg_pw_find_check() with the
 *     same state, context, description and target URL, dated at or after
 *     created_at - OUTBOX_FIND_MARGIN_S (the margin covers the two
 *     clocks), by checks.username when configured.  Found, and newer than
 *     every check an earlier row of the same patch and context was
 *     settled with (Patchwork's ids only grow, and rows of one patch and
 *     context are delivered in order, below): the row is sent, without a
 *     POST.  A recheck posts the same text again under the same context,
 *     and that earlier check is not mistaken for this one.
 *  3. Only then POST; only a 201 marks the row sent (with the check's id
 *     in response, the answer's body).  The network call happens outside
 *     any transaction; each change of a row is its own transaction.
 *
 * Outcomes of a try: 201 (or found) -> 'sent'.  No answer, a timeout, a
 * 5xx, 408 or 429 -> stays 'queued', next_try = now + a delay drawn with
 * full jitter from [0, min(max_backoff_s, 2^(attempts-1) s)] (at least
 * 1 s, and at least Retry-After, up to OUTBOX_RETRY_AFTER_MAX_S); the
 * answer or error is recorded.  Any other 4xx (400 a field Patchwork
 * refuses, 403 a token without rights, 404 no such patch, 409) -> 'failed'
 * with the status and the body, logged as an error, never retried by
 * itself.
 *
 * Order.  Rows are taken by id.  A row waits while an older row of the same
 * patch and context is still queued, so that a pending check never lands
 * after the final one (Patchwork shows the newest check per user and
 * context).  A queued 'pending' row is cancelled once a final row (success,
 * warning, fail) of the same run, patch and context exists.
 *
 * Patchwork's patch id.  patches.pw_patch_id is set when the patch came
 * through Patchwork intake.  A patch without one (read from a mailing-list
 * archive or an mbox) is looked up by its Message-ID in the configured
 * project (pg_pw_find_patch(), API 1.2 and later) and the id recorded in
 * patches.  Not there yet: the row waits, due again after
 * min(max_backoff_s, OUTBOX_LOOKUP_WAIT_MAX_S), its response saying why;
 * attempts are not counted (nothing was posted).  A patch Patchwork still
 * does not know OUTBOX_LOOKUP_GIVE_UP_S after the row was queued ends the
 * row as 'failed'.  The report mail does not depend on it (its subject
 * says "pw?" when the id is unknown when the mail is queued).
 *
 * Mails.  Claimed like checks, then smtp_send() to To and Cc (the patch's
 * author, when the mail section's cc_author_on says so).  Sent -> 'sent'
 * with the server's reply.  Transient (no connection, a timeout, a 4xx)
 * -> retried with the same backoff.  Permanent with the author's address
 * refused (libcurl aborts the whole mail on any refused recipient): the
 * row is rewritten without the Cc (its Cc header field removed, cc_addrs
 * emptied, in one transaction) and sent again at once, once.  Other
 * permanent failures -> 'failed'.  SMTP has no way to ask whether a mail
 * arrived, so a kill between the server's 250 and the commit sends the
 * mail again on restart: the same bytes with the same Message-ID, which
 * archives and readers take as one mail.
 *
 * Threads: every function takes the store connection of its caller's
 * thread (store.h); a struct outbox belongs to one thread.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "ctl_config.h"
#include "err.h"
#include "patchwork.h"
#include "profile.h"
#include "smtp.h"
#include "store.h"

/* Clock margin of the lookup before a re-post: checks dated from
 * created_at - this count. */
#define OUTBOX_FIND_MARGIN_S 900
/* The longest Retry-After honoured (a longer one waits this long). */
#define OUTBOX_RETRY_AFTER_MAX_S 3600
/* The longest wait between two lookups of a patch Patchwork does not
 * know yet, and when to give up on it. */
#define OUTBOX_LOOKUP_WAIT_MAX_S 300
#define OUTBOX_LOOKUP_GIVE_UP_S (2 * 86400)
/* Rows taken by one pass of each outbox; the rest wait for the next. */
#define OUTBOX_BATCH 64
/* Bytes of an answer or error kept in a row's response. */
#define OUTBOX_RESPONSE_MAX 4096

/* ------------------------------------------------------------------ */
/* Queueing (inside the caller's transaction)                          */

/*
 * Queue the final check of a context of a run, in the transaction the
 * caller holds (store_begin() done; the caller commits), so that the
 * verdict and its check commit together.
 *
 * state: "success", "warning" or "fail" ("pending" is accepted too);
 * context: a Patchwork slug; description: at most PG_PW_DESCRIPTION_MAX
 * bytes (NULL: ""); target_url: NULL for the target URL of the run's
 * pending check of this context (when there is one), else an http(s) URL
 * of at most PG_PW_TARGET_URL_MAX characters.
 *
 * Patches: those the run's pending check of this context was queued on,
 * so that the final check lands where the pending one did; when the run
 * has none, the series' last patch, or every patch with post_to
 * PROFILE_POST_ALL_PATCHES.  One row per patch, due at once; a row that
 * exists already (same run, patch, context and state) is left as it is.
 *
 * *queued (may be NULL) gets the number of rows added.  Returns 0, or -1
 * with err: PG_EINVAL for a bad argument (nothing queued), PG_ENOTFOUND
 * for no such run or a series without patches, a store error.
 */
int outbox_queue_check_tx(struct store *st, int64_t run_id, const char *context,
			  const char *state, const char *description, const char *target_url,
			  enum profile_post_to post_to, int64_t now_s, unsigned int *queued,
			  struct pg_err *err);

/*
 * The final check of a context that will never be decided: its run was
 * cancelled (the series superseded by a newer version: no verdict is made
 * for a cancelled run, even of jobs already done), or every job of it was
 * (an administrator's cancel).  In the caller's transaction (the one that
 * cancelled the jobs), so that no pending check stays pending forever.
 *
 * For each context of series_id (or of any series when it is 0), of run
 * run_id only when it is > 0 (one of the two must be given), that
 * has a pending row not cancelled, no final row, and a cancelled run or
 * no job other than cancelled ones: a "warning" row, "Performance Testing NOT TESTED: why"
 * (why cut at a character boundary to fit PG_PW_DESCRIPTION_MAX), on the
 * patches and with the target URL of the pending check, as
 * outbox_queue_check_tx() queues it.  A pending row not delivered yet is
 * then cancelled by the delivery pass, as for any final row, so Patchwork
 * sees either nothing but the warning or the pending check and then the
 * warning.  No mail: nothing was tested.
 *
 * *queued (may be NULL) gets the number of rows added.  Returns 0, or -1
 * with err (PG_EINVAL for an empty why, a store error).
 */
int outbox_settle_cancelled_tx(struct store *st, int64_t series_id, int64_t run_id,
			       const char *why, int64_t now_s, unsigned int *queued,
			       struct pg_err *err);

/*
 * Queue the test-report mail of a context of a run, in the caller's
 * transaction (as above).  Nothing is queued (0) when mail is not enabled.
 *
 * The mail answers the series' last patch (In-Reply-To, its subject, its
 * author as Cc per mail->cc_author_on, its Patchwork id when known, else
 * "pw?" and no URL line), From and To from the mail section, its
 * Message-ID report_mail_msgid(run, context, the From domain) and Date
 * now_ms.  It is formatted now (report_mail_format()) and stored whole in
 * email_outbox.body, so that every try sends the same bytes.
 *
 * state: "success", "warning" or "fail"; description: one line of
 * printable ASCII ("Performance Testing PASS"); table, reproduce: the
 * report's texts, or NULL.  A mail for (run, context) that exists already
 * is left as it is.  *queued (may be NULL) gets 0 or 1.  Returns 0, or -1
 * with err: PG_EINVAL (a bad argument, or what report_mail_format()
 * refuses), PG_ENOTFOUND (no such run), a store error.
 */
int outbox_queue_mail_tx(struct store *st, const struct ctl_mail *mail, int64_t run_id,
			 const char *context, const char *state, const char *description,
			 const char *table, const char *reproduce, int64_t now_ms,
			 unsigned int *queued, struct pg_err *err);

/*
 * An alert mail: a main-branch regression located at one commit
 * (controller/alerts.h), to the address of the baseline section.  One
 * per change point (email_outbox.change_point_id is UNIQUE), delivered as
 * report mails are, no Cc.  Message-ID "perfgate.cpID.alert@DOMAIN" (the
 * From domain): a resend after a crash is the same mail.
 */
struct outbox_alert {
	int64_t change_point_id;	/* > 0 */
	const char *to_name;		/* NULL: none */
	const char *to_addr;		/* required */
	const char *subject;		/* required: after "[perfgate] " */
	const char *description;	/* required: one line of printable ASCII */
	const char *table;		/* the body's texts, or NULL */
	const char *reproduce;
};

/*
 * Queue a's mail in the caller's transaction; nothing (0) when mail is not
 * enabled or the change point has its mail already.  *queued (may be
 * NULL) gets 0 or 1.  Returns 0, or -1 with err: PG_EINVAL (a bad
 * argument or what report_mail_format() refuses), a store error
 * (PG_ECONFLICT: no such change point).
 */
int outbox_queue_alert_tx(struct store *st, const struct ctl_mail *mail,
			  const struct outbox_alert *a, int64_t now_ms, unsigned int *queued,
			  struct pg_err *err);

/* Whether change point cp_id has its alert mail queued (in any state). */
int outbox_alert_queued(struct store *st, int64_t cp_id, bool *queued, struct pg_err *err);

/* ------------------------------------------------------------------ */
/* Delivery                                                            */

struct outbox_stats {
	unsigned long checks_sent;	/* 201 */
	unsigned long checks_found;	/* already there: sent without a POST */
	unsigned long checks_retried;	/* tries that will be retried */
	unsigned long checks_failed;	/* rows ended 'failed' */
	unsigned long checks_cancelled;	/* pending rows made pointless */
	unsigned long checks_waiting;	/* lookups: the patch not on Patchwork yet */
	unsigned long mails_sent;
	unsigned long mails_retried;
	unsigned long mails_failed;
	unsigned long mails_uncc;	/* resent without the refused author's Cc */
};

/*
 * A delivery context.  Set the fields, then call the passes.  Pointers are
 * borrowed.
 */
struct outbox {
	struct store *st;		/* this thread's connection */
	struct pg_pw_client *pw;	/* with project and token; NULL: no checks */
	const struct ctl_mail *mail;	/* NULL or not enabled: no mails */
	const char *smtp_password;	/* with mail->username */
	int64_t max_backoff_s;		/* >= 1 */
	/* checks' timeout_s (>= 0): a claimed try is not due again before
	 * it (outbox_claim_next_s()), and a POST that timed out is tried
	 * again (a lookup first) that much later on top of the backoff, so
	 * that a check Patchwork was still making is found, not made twice */
	int64_t post_timeout_s;
	uint64_t rand;			/* jitter state: seed it (any value) */
	/* Checked between rows: a pass returns early when it is set. */
	const atomic_bool *stop;
	struct outbox_stats stats;	/* added to by each pass */
};

/*
 * One pass over the check outbox: cancel pending rows made pointless,
 * then deliver up to OUTBOX_BATCH due rows, as described above.  now_s is
 * the time that decides what is due (0: the wall clock); times written are
 * the wall clock's.  A row that cannot be delivered now is not a failure
 * of the pass.  Returns 0, or -1 when the store failed (the pass stops; the
 * rows stay as they were or as far as they got, each consistent).
 */
int outbox_checks_pass(struct outbox *ob, int64_t now_s, struct pg_err *err);

/* One pass over the mail outbox, the same way.  Returns 0 or -1. */
int outbox_mail_pass(struct outbox *ob, int64_t now_s, struct pg_err *err);

/* ------------------------------------------------------------------ */
/* Pure parts (exposed for the unit tests)                             */

/* What a try came to. */
enum outbox_outcome {
	OUTBOX_DELIVERED,
	OUTBOX_RETRY,		/* no answer, timeout, 5xx, 408, 429 */
	OUTBOX_FAILED,		/* every other refusal: do not retry as is */
};

/* The outcome of a pg_pw_post_check() or pg_pw_find_check() that returned
 * rc (-1: failed with code). */
enum outbox_outcome outbox_check_outcome(int rc, enum pg_errcode code);

/*
 * Whether a failed check POST may have created the check all the same, so
 * that the next try must look it up before posting: status is the HTTP
 * status (0: no answer), reached false when the request certainly never
 * reached Patchwork (pg_pw_check_result.reached: refused at connect).
 * True without an answer after the request went out, and for a 5xx (a
 * proxy's 502/504 answers for a request whose fate it does not know).
 */
bool outbox_check_may_exist(long status, bool reached);

/*
 * Seconds until the next try after `attempts` tries (>= 1): full jitter
 * over [0, min(max_backoff_s, 2^(attempts-1))] rounded up, at least 1;
 * at least retry_after_ms (when > 0) rounded up, capped at
 * OUTBOX_RETRY_AFTER_MAX_S.  rand as pg_backoff_ms() (NULL: the cap).
 */
int64_t outbox_retry_delay_s(unsigned int attempts, int64_t max_backoff_s,
			     int64_t retry_after_ms, uint64_t *rand);

/*
 * When a check row claimed for its attempts-th try (>= 1) at now_s becomes
 * due again should this process die during the try: after post_timeout_s
 * (a POST cut short by a crash may still be worked on by Patchwork until
 * the client would have given up on it) plus the retry delay, as a try that
 * timed out in this process waits.  Sooner, the lookup that precedes the
 * next try could miss the check the abandoned POST is making, and post it
 * twice.  rand as outbox_retry_delay_s().
 */
int64_t outbox_claim_next_s(int64_t now_s, unsigned int attempts, int64_t post_timeout_s,
			    int64_t max_backoff_s, uint64_t *rand);

/*
 * The message msg[0..len) without its Cc header field (folded lines
 * included; the body and every other field byte for byte).  Appends to
 * out.  Returns 1 when a Cc field was removed, 0 when there was none (out
 * gets the message unchanged), -1 on a message without a header section
 * end (PG_EINVAL) or when out is full.
 */
int outbox_mail_strip_cc(const char *msg, size_t len, struct pg_buf *out, struct pg_err *err);

/* Whether a failed send refused this (Cc) address: the server's reply or
 * the error names it (compared without case). */
bool outbox_mail_refused(const struct smtp_result *res, const char *errmsg, const char *addr);

/* ------------------------------------------------------------------ */
/* Administration                                                      */

/*
 * The rows of both outboxes as a JSON array (caller frees), oldest first:
 * {"kind": "check"|"mail", "id", "run", "series", "context", "state" (of a
 * check) or "subject" (of a mail), "patch", "pw_patch" (checks), "delivery",
 * "attempts", "next_try", "sent_at", "response_code", "response",
 * "created_at"}.  all: every row; otherwise only those not yet settled
 * (queued) or failed.  Returns 0 or -1.
 */
int outbox_list(struct store *st, bool all, cJSON **out, struct pg_err *err);

/*
 * Queue a row again, due now: kind "check" or "mail", a row that is
 * 'failed', 'cancelled' or still 'queued' (then only made due now).  Its
 * attempts and maybe_posted are kept, so a check that may have been posted
 * is looked for before it is posted again.  Returns 0, or -1 with PG_ENOTFOUND (no such
 * row), PG_ECONFLICT (the row was sent), PG_EINVAL (kind).
 */
int outbox_retry(struct store *st, const char *kind, int64_t id, int64_t now_s,
		 struct pg_err *err);

#endif
