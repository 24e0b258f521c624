/* SPDX-License-Identifier: MIT */
/*
 * The check outbox's delivery pass: order, cancellation, the Patchwork
 * patch id, claim, look for a lost one, post, record (see outbox.h).
 */
#include "outbox.h"
#include "outbox_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "log.h"
#include "series.h"
#include "timeutil.h"

/* ---- pure parts ------------------------------------------------------ */

bool outbox_check_may_exist(long status, bool reached)
{
	if (!reached)
		return false;
	/* No answer: lost after the POST went out.  A 5xx: Patchwork's own
	 * 500 after its INSERT is rare, but a proxy's 502 or 504 in front of
	 * it says exactly that the answer was lost.  Any other answer says
	 * nothing was created (a 201 is not a failure). */
	return status == 0 || status >= 500;
}

enum outbox_outcome outbox_check_outcome(int rc, enum pg_errcode code)
{
	if (rc >= 0)
		return OUTBOX_DELIVERED;
	return pg_pw_retryable(code) ? OUTBOX_RETRY : OUTBOX_FAILED;
}

int64_t outbox_retry_delay_s(unsigned int attempts, int64_t max_backoff_s,
			     int64_t retry_after_ms, uint64_t *rand)
{
	int64_t ms, s, after;

	if (max_backoff_s < 1)
		max_backoff_s = 1;
	ms = pg_backoff_ms(attempts ? attempts - 1 : 0, 1000, max_backoff_s * 1000, rand);
	s = (ms + 999) / 1000;
	if (s < 1)
		s = 1;
	if (retry_after_ms > 0) {
		after = (retry_after_ms + 999) / 1000;
		if (after > OUTBOX_RETRY_AFTER_MAX_S)
			after = OUTBOX_RETRY_AFTER_MAX_S;
		if (after > s)
			s = after;
	}
	return s;
}

int64_t outbox_claim_next_s(int64_t now_s, unsigned int attempts, int64_t post_timeout_s,
			    int64_t max_backoff_s, uint64_t *rand)
{
	return now_s + (post_timeout_s > 0 ? post_timeout_s : 0) +
	       outbox_retry_delay_s(attempts, max_backoff_s, -1, rand);
}

/* ---- rows ------------------------------------------------------------ */

struct check_row {
	int64_t id, run_id, patch_id, pw_patch_id, created_at;
	unsigned int attempts;
	bool maybe_posted;	/* an earlier try may have created the check */
	enum pg_pw_check_state state;
	char *context, *state_name, *description, *target_url, *msgid;
};

static void check_row_release(struct check_row *r)
{
	free(r->context);
	free(r->state_name);
	free(r->description);
	free(r->target_url);
	free(r->msgid);
	memset(r, 0, sizeof(*r));
}

/*
 * The due rows, oldest first, skipping any that has an older queued row of
 * the same patch and context (it goes after that one).  Read whole and the
 * statement finalized before any network call, so that no read
 * transaction stays open meanwhile.
 */
static int due_checks(struct store *st, int64_t now_s, struct check_row *rows, size_t *n,
		      struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc = -1, step;

	*n = 0;
	if (store_prepare(st, &q,
			  "SELECT c.id, c.run_id, c.patch_id, c.context, c.state, c.description,"
			  " c.target_url, c.attempts, c.created_at, p.pw_patch_id, m.msgid,"
			  " c.maybe_posted"
			  " FROM check_outbox c JOIN patches p ON p.id = c.patch_id"
			  " JOIN messages m ON m.id = p.message_id"
			  " WHERE c.delivery = 'queued' AND c.next_try <= ?1"
			  " AND NOT EXISTS (SELECT 1 FROM check_outbox o"
			  "  WHERE o.patch_id = c.patch_id AND o.context = c.context"
			  "  AND o.delivery = 'queued' AND o.id < c.id)"
			  " ORDER BY c.id LIMIT ?2", "read due checks", err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(now_s), STORE_INT(OUTBOX_BATCH)),
		       "read due checks", err) < 0)
		goto out;
	while ((step = store_step(q, "read due checks", err)) == 1) {
		struct check_row *r = &rows[*n];

		memset(r, 0, sizeof(*r));
		(*n)++;
		r->id = sqlite3_column_int64(q, 0);
		r->run_id = sqlite3_column_int64(q, 1);
		r->patch_id = sqlite3_column_int64(q, 2);
		r->attempts = (unsigned int)sqlite3_column_int64(q, 7);
		r->created_at = sqlite3_column_int64(q, 8);
		r->pw_patch_id = sqlite3_column_int64(q, 9);
		r->maybe_posted = sqlite3_column_int64(q, 11) != 0;
		if (outbox_col_dup(q, 3, &r->context, err) < 0 ||
		    outbox_col_dup(q, 4, &r->state_name, err) < 0 ||
		    outbox_col_dup(q, 5, &r->description, err) < 0 ||
		    outbox_col_dup(q, 6, &r->target_url, err) < 0 ||
		    outbox_col_dup(q, 10, &r->msgid, err) < 0)
			goto out;
		/* The schema's CHECK keeps the state one of the four. */
		if (!r->state_name || pg_pw_check_state_parse(r->state_name, &r->state) < 0) {
			pg_err_set(err, PG_EDB, "check_outbox row %" PRId64 ": state '%s'", r->id,
				   r->state_name ? r->state_name : "(null)");
			goto out;
		}
	}
	rc = step < 0 ? -1 : 0;
out:
	sqlite3_finalize(q);
	return rc;
}

/* Queued pending rows whose run already has a final row for the same
 * patch and context: pointless to post, and harmful after the final. */
#define PENDING_SUPERSEDED \
	"delivery = 'queued' AND state = 'pending' AND EXISTS (" \
	" SELECT 1 FROM check_outbox f WHERE f.run_id = check_outbox.run_id" \
	" AND f.patch_id = check_outbox.patch_id" \
	" AND f.context = check_outbox.context AND f.state <> 'pending'" \
	" AND f.delivery <> 'cancelled')"

static int cancel_pending(struct outbox *ob, struct pg_err *err)
{
	int64_t changes = 0, any = 0;

	/* Looked at first without a transaction: this runs every second, and
	 * a write transaction would take the store's one write lock each time. */
	if (store_query_int(ob->st, "look for superseded pending checks",
			    "SELECT EXISTS (SELECT 1 FROM check_outbox WHERE " PENDING_SUPERSEDED ")",
			    NULL, 0, &any, err) < 0)
		return -1;
	if (!any)
		return 0;
	if (outbox_tx_run(ob->st, "cancel superseded pending checks",
			  "UPDATE check_outbox SET delivery = 'cancelled',"
			  " response = 'not posted: the final check of the same run came first'"
			  " WHERE " PENDING_SUPERSEDED,
			  NULL, 0, &changes, err) < 0)
		return -1;
	if (changes) {
		pg_log_info(OUTBOX_LOG, "checks: %" PRId64 " pending check%s cancelled: their run's "
			    "final check is queued", changes, changes == 1 ? "" : "s");
		ob->stats.checks_cancelled += (unsigned long)changes;
	}
	return 0;
}

/*
 * The newest Patchwork check id that a sent row of this patch and context
 * (other than this row) was settled with; 0 when none is known.  A check
 * found by the lookup must be newer than it to be this row's.
 */
static int settled_check_id(struct store *st, const struct check_row *r, int64_t *out,
			    struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc = -1, step;

	*out = 0;
	if (store_prepare(st, &q, "SELECT response FROM check_outbox WHERE patch_id = ?1"
			  " AND context = ?2 AND id <> ?3 AND delivery = 'sent'",
			  "read settled checks", err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(r->patch_id), STORE_TEXT(r->context),
				     STORE_INT(r->id)), "read settled checks", err) < 0)
		goto out;
	while ((step = store_step(q, "read settled checks", err)) == 1) {
		const char *text = (const char *)sqlite3_column_text(q, 0);
		struct pg_err perr = PG_ERR_INIT;
		cJSON *root = NULL;
		int64_t id = 0;

		/* The answer's body: Patchwork's check, or {"id": N} written by
		 * a lookup.  Unreadable: that check's id is unknown. */
		if (text && pg_json_parse(text, strlen(text), &root, &perr) == 0 &&
		    pg_json_get_int(root, "id", true, 1, INT64_MAX, &id, &perr) > 0 && id > *out)
			*out = id;
		cJSON_Delete(root);
	}
	rc = step < 0 ? -1 : 0;
out:
	sqlite3_finalize(q);
	return rc;
}

/* ---- settling a row --------------------------------------------------- */

static int record_sent(struct outbox *ob, const struct check_row *r, long code,
		       const char *response, struct pg_err *err)
{
	char cut[OUTBOX_RESPONSE_MAX + 1];
	int64_t now = outbox_now_s();

	outbox_response_cut(response, strlen(response), cut, sizeof(cut));
	return outbox_tx_run(ob->st, "record a sent check",
			     "UPDATE check_outbox SET delivery = 'sent', sent_at = ?2,"
			     " response_code = ?3, response = ?4 WHERE id = ?1"
			     " AND delivery = 'queued'",
			     STORE_ARGS(STORE_INT(r->id), STORE_INT(now), STORE_INT(code),
					STORE_TEXT(cut)), NULL, err);
}

static int record_retry(struct outbox *ob, const struct check_row *r, long code,
			const char *response, int64_t retry_after_ms, int64_t extra_s,
			bool maybe_posted,
			int64_t *delay, struct pg_err *err)
{
	char cut[OUTBOX_RESPONSE_MAX + 1];
	int64_t now = outbox_now_s();

	*delay = extra_s + outbox_retry_delay_s(r->attempts + 1, ob->max_backoff_s,
						retry_after_ms, &ob->rand);
	outbox_response_cut(response, strlen(response), cut, sizeof(cut));
	return outbox_tx_run(ob->st, "record a check to retry",
			     "UPDATE check_outbox SET next_try = ?2, response_code = ?3,"
			     " response = ?4, maybe_posted = ?5 WHERE id = ?1 AND delivery = 'queued'",
			     STORE_ARGS(STORE_INT(r->id), STORE_INT(now + *delay),
					code ? STORE_INT(code) : STORE_NULL, STORE_TEXT(cut),
					STORE_INT(maybe_posted ? 1 : 0)),
			     NULL, err);
}

static int record_failed(struct outbox *ob, const struct check_row *r, long code,
			 const char *response, bool maybe_posted, struct pg_err *err)
{
	char cut[OUTBOX_RESPONSE_MAX + 1];

	outbox_response_cut(response, strlen(response), cut, sizeof(cut));
	return outbox_tx_run(ob->st, "record a failed check",
			     "UPDATE check_outbox SET delivery = 'failed', response_code = ?2,"
			     " response = ?3, maybe_posted = ?4 WHERE id = ?1 AND delivery = 'queued'",
			     STORE_ARGS(STORE_INT(r->id), code ? STORE_INT(code) : STORE_NULL,
					STORE_TEXT(cut), STORE_INT(maybe_posted ? 1 : 0)), NULL, err);
}

/* What a row is, for log lines. */
static void row_name(const struct check_row *r, char *out, size_t outlen)
{
	pg_fmt_cut(out, outlen, "check %" PRId64 " (run %" PRId64 ", %s %s, Patchwork patch %"
		   PRId64 ")", r->id, r->run_id, r->context, r->state_name, r->pw_patch_id);
}

/* A try that can be retried: record it (with whether the check may
 * exist now), count it, say so.  extra_s: seconds to wait on top of the
 * backoff. */
static int try_again(struct outbox *ob, const struct check_row *r, long code,
		     const char *response, int64_t retry_after_ms, int64_t extra_s,
		     bool maybe_posted,
		     const char *why, struct pg_err *err)
{
	char name[512];
	int64_t delay = 0;

	if (record_retry(ob, r, code, response, retry_after_ms, extra_s, maybe_posted, &delay,
			 err) < 0)
		return -1;
	ob->stats.checks_retried++;
	row_name(r, name, sizeof(name));
	pg_log_warn(OUTBOX_LOG, "%s: try %u: %s; next try in %" PRId64 " s%s", name,
		    r->attempts + 1, why, delay,
		    maybe_posted ? " (looked for first: it may have been created)" : "");
	return 0;
}

/* A try not to repeat as is: record it (with whether the check may exist,
 * for an admin's retry), count it, say so. */
static int give_up(struct outbox *ob, const struct check_row *r, long code,
		   const char *response, bool maybe_posted, const char *why,
		   struct pg_err *err)
{
	char name[512];

	if (record_failed(ob, r, code, response, maybe_posted, err) < 0)
		return -1;
	ob->stats.checks_failed++;
	row_name(r, name, sizeof(name));
	pg_log_error(OUTBOX_LOG, "%s: %s; not retried (`perfgate-controller outbox retry check "
		     "%" PRId64 "` queues it again)", name, why, r->id);
	return 0;
}

/* ---- the Patchwork patch id ------------------------------------------ */

/*
 * Make sure r->pw_patch_id is known: look the patch up by Message-ID and
 * record it in patches.  Returns 1 when known, 0 when the row waits (its
 * new next_try and reason recorded, or ended 'failed' after
 * OUTBOX_LOOKUP_GIVE_UP_S), -1 on a store error.
 */
static int patch_id_known(struct outbox *ob, struct check_row *r, struct pg_err *err)
{
	struct pg_err nerr = PG_ERR_INIT;
	char why[PG_ERR_MSG_MAX + 600];
	int64_t id = 0, now, wait;
	int rc;

	if (r->pw_patch_id > 0)
		return 1;
	if (!r->msgid) {
		return give_up(ob, r, 0, "the patch has no Message-ID to find it on Patchwork by",
			       r->maybe_posted, "no Message-ID", err) < 0 ? -1 : 0;
	}
	rc = pg_pw_find_patch(ob->pw, r->msgid, &id, &nerr);
	if (rc == 1) {
		if (series_patch_set_pw_id(ob->st, r->patch_id, id, err) < 0)
			return -1;
		pg_log_info(OUTBOX_LOG, "patch <%s> is Patchwork patch %" PRId64, r->msgid, id);
		r->pw_patch_id = id;
		return 1;
	}
	now = outbox_now_s();
	if (rc == 0)
		pg_fmt_cut(why, sizeof(why), "waiting: patch <%.400s> is not on Patchwork yet",
			   r->msgid);
	else
		pg_fmt_cut(why, sizeof(why), "waiting: looking up patch <%.400s> on Patchwork: %s",
			   r->msgid, nerr.msg);
	if (now - r->created_at >= OUTBOX_LOOKUP_GIVE_UP_S) {
		pg_fmt_cut(why, sizeof(why), "patch <%.400s> was not found on Patchwork in %d days",
			   r->msgid, OUTBOX_LOOKUP_GIVE_UP_S / 86400);
		return give_up(ob, r, 0, why, r->maybe_posted, why, err) < 0 ? -1 : 0;
	}
	wait = ob->max_backoff_s < OUTBOX_LOOKUP_WAIT_MAX_S ? ob->max_backoff_s :
	       OUTBOX_LOOKUP_WAIT_MAX_S;
	if (outbox_tx_run(ob->st, "record a check waiting for its patch",
			  "UPDATE check_outbox SET next_try = ?2, response_code = NULL,"
			  " response = ?3 WHERE id = ?1 AND delivery = 'queued'",
			  STORE_ARGS(STORE_INT(r->id), STORE_INT(now + wait), STORE_TEXT(why)),
			  NULL, err) < 0)
		return -1;
	ob->stats.checks_waiting++;
	if (rc < 0)
		pg_log_warn(OUTBOX_LOG, "check %" PRId64 ": %s", r->id, why);
	else
		pg_log_debug(OUTBOX_LOG, "check %" PRId64 ": %s", r->id, why);
	return 0;
}

/* ---- one row ------------------------------------------------------------ */

/* The body to keep for a try: Patchwork's answer when there was one, else
 * our error. */
static const char *answer_text(const struct pg_pw_check_result *res, const struct pg_err *e)
{
	return res->status && res->body.len ? pg_buf_str(&res->body) : e->msg;
}

/*
 * After a try whose answer may have been lost: is the check there?
 * Returns 1 when it is (the row recorded sent), 0 when it is not and a POST
 * should follow, 2 when the lookup failed (the row recorded), -1 on a
 * store error.
 */
static int find_lost(struct outbox *ob, const struct check_row *r, struct pg_err *err)
{
	struct pg_err nerr = PG_ERR_INIT;
	char body[64], name[512];
	int64_t found = 0, settled = 0;
	int rc;

	rc = pg_pw_find_check(ob->pw, r->pw_patch_id, r->state, r->context, r->description,
			      r->target_url, (r->created_at - OUTBOX_FIND_MARGIN_S) * 1000, &found,
			      &nerr);
	if (rc < 0) {
		/* Still unknown whether the earlier try created it. */
		if (outbox_check_outcome(rc, nerr.code) == OUTBOX_RETRY)
			rc = try_again(ob, r, 0, nerr.msg, -1, 0, true, nerr.msg, err);
		else
			rc = give_up(ob, r, 0, nerr.msg, true, nerr.msg, err);
		return rc < 0 ? -1 : 2;
	}
	if (rc == 0)
		return 0;
	if (settled_check_id(ob->st, r, &settled, err) < 0)
		return -1;
	/* Ids only grow, and rows of a patch and context go in order: an
	 * identical check no newer than one an earlier row was settled with
	 * is that row's (a recheck), not this one's. */
	if (found <= settled)
		return 0;
	if (pg_fmt(body, sizeof(body), "{\"id\":%" PRId64 ",\"found\":true}", found) < 0)
		return pg_err_set(err, PG_EINVAL, "check %" PRId64 ": response too long", r->id);
	if (record_sent(ob, r, 200, body, err) < 0)
		return -1;
	ob->stats.checks_found++;
	row_name(r, name, sizeof(name));
	pg_log_info(OUTBOX_LOG, "%s: already on Patchwork as check %" PRId64 " (the answer to an "
		    "earlier try was lost): not posted again", name, found);
	return 1;
}

static int deliver(struct outbox *ob, struct check_row *r, struct pg_err *err)
{
	struct pg_pw_check_result res = PG_PW_CHECK_RESULT_INIT;
	struct pg_err nerr = PG_ERR_INIT;
	char name[512], why[PG_ERR_MSG_MAX + 64];
	int64_t changes = 0, claim_next;
	int rc = -1, found;

	rc = patch_id_known(ob, r, err);
	if (rc <= 0)
		goto out;
	/* Claim: from now on the row says a POST may have happened
	 * (maybe_posted: a crash during it makes the next try look first),
	 * and a crash during it does not make the next start look up and
	 * post while that POST may still be making its check. */
	claim_next = outbox_claim_next_s(outbox_now_s(), r->attempts + 1, ob->post_timeout_s,
					 ob->max_backoff_s, &ob->rand);
	rc = -1;
	if (outbox_tx_run(ob->st, "claim a check",
			  "UPDATE check_outbox SET attempts = attempts + 1, next_try = ?2,"
			  " maybe_posted = 1 WHERE id = ?1 AND delivery = 'queued' AND attempts = ?3",
			  STORE_ARGS(STORE_INT(r->id), STORE_INT(claim_next),
				     STORE_INT(r->attempts)), &changes, err) < 0)
		goto out;
	if (changes == 0) {
		rc = 0;		/* changed under us (an admin): next pass */
		goto out;
	}
	/* Only after a try whose answer was lost: one refused at connect
	 * (an outage) cannot have posted, and a lookup then is wasted. */
	if (r->maybe_posted) {
		found = find_lost(ob, r, err);
		if (found != 0) {
			rc = found < 0 ? -1 : 0;
			goto out;
		}
	}
	row_name(r, name, sizeof(name));
	if (pg_pw_post_check(ob->pw, r->pw_patch_id, r->state, r->context, r->description,
			     r->target_url, &res, &nerr) == 0) {
		char body[64];

		if (pg_fmt(body, sizeof(body), "{\"id\":%" PRId64 "}", res.check_id) < 0) {
			pg_err_set(err, PG_EINVAL, "check %" PRId64 ": response too long", r->id);
			goto out;
		}
		rc = record_sent(ob, r, res.status, res.body.len ? pg_buf_str(&res.body) : body,
				 err);
		if (rc == 0) {
			ob->stats.checks_sent++;
			pg_log_info(OUTBOX_LOG, "%s: posted as check %" PRId64 " (try %u)", name,
				    res.check_id, r->attempts + 1);
		}
		goto out;
	}
	pg_fmt_cut(why, sizeof(why), "%s", nerr.msg);
	/* A POST that timed out may still be making its check: the lookup
	 * that comes first in the next try waits as long again, so that it
	 * sees the check of a server as slow as that. */
	if (outbox_check_outcome(-1, nerr.code) == OUTBOX_RETRY)
		rc = try_again(ob, r, res.status, answer_text(&res, &nerr), res.retry_after_ms,
			       nerr.code == PG_ETIMEOUT ? ob->post_timeout_s : 0,
			       outbox_check_may_exist(res.status, res.reached), why, err);
	else
		rc = give_up(ob, r, res.status, answer_text(&res, &nerr),
			     outbox_check_may_exist(res.status, res.reached), why, err);
out:
	pg_pw_check_result_release(&res);
	return rc;
}

int outbox_checks_pass(struct outbox *ob, int64_t now_s, struct pg_err *err)
{
	struct check_row *rows = NULL;
	size_t n = 0;
	int rc = -1;

	if (!ob->pw)
		return 0;
	if (!now_s)
		now_s = outbox_now_s();
	rows = calloc(OUTBOX_BATCH, sizeof(*rows));
	if (!rows)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	if (cancel_pending(ob, err) < 0 || due_checks(ob->st, now_s, rows, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (ob->stop && atomic_load(ob->stop))
			break;
		if (deliver(ob, &rows[i], err) < 0)
			goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		check_row_release(&rows[i]);
	free(rows);
	if (rc)
		pg_err_prefix(err, "check outbox");
	return rc;
}
