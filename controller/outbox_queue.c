/* SPDX-License-Identifier: MIT */
/*
 * Queueing final checks and report mails in the caller's transaction (see
 * outbox.h), and the helpers the outbox's files share.
 */
#include "outbox.h"
#include "outbox_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "report_mail.h"
#include "sanitize.h"
#include "text.h"
#include "timeutil.h"
#include "vec.h"

int outbox_tx_run(struct store *st, const char *what, const char *sql,
		  const struct store_arg *args, size_t nargs, int64_t *changes,
		  struct pg_err *err)
{
	if (store_begin(st, err) < 0)
		return -1;
	if (store_run(st, what, sql, args, nargs, err) < 0) {
		store_rollback(st);
		return -1;
	}
	if (changes)
		*changes = store_changes(st);
	if (store_commit(st, err) < 0) {
		store_rollback(st);
		return -1;
	}
	return 0;
}

int64_t outbox_now_s(void)
{
	return pg_time_wall_ms() / 1000;
}

int outbox_col_dup(sqlite3_stmt *q, int col, char **out, struct pg_err *err)
{
	const unsigned char *s = sqlite3_column_text(q, col);

	*out = NULL;
	if (!s)
		return 0;
	*out = strdup((const char *)s);
	if (!*out)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	return 0;
}

void outbox_response_cut(const char *text, size_t len, char *out, size_t outlen)
{
	size_t n = len;

	if (!outlen)
		return;
	if (n > OUTBOX_RESPONSE_MAX)
		n = OUTBOX_RESPONSE_MAX;
	if (n > outlen - 1)
		n = outlen - 1;
	/* Do not end inside a UTF-8 sequence. */
	if (n < len)
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	memcpy(out, text, n);
	out[n] = '\0';
}

/* ---- checks -------------------------------------------------------- */

/* What pg_pw_post_check() would refuse, refused here before it is queued:
 * a row that can never be posted is better not written. */
static int check_args_ok(const char *context, const char *state, const char *description,
			 const char *target_url, struct pg_err *err)
{
	enum pg_pw_check_state s;

	if (!state || pg_pw_check_state_parse(state, &s) < 0)
		return pg_err_set(err, PG_EINVAL, "check state '%s' is not pending, success, "
				  "warning or fail", state ? state : "(null)");
	if (!context || !pg_pw_slug_valid(context))
		return pg_err_set(err, PG_EINVAL, "check context '%.300s' is not a slug (letters, "
				  "digits, '-' and '_')", context ? context : "(null)");
	if (description && strlen(description) > PG_PW_DESCRIPTION_MAX)
		return pg_err_set(err, PG_EINVAL, "check description over %d bytes",
				  PG_PW_DESCRIPTION_MAX);
	if (target_url && *target_url) {
		if (strlen(target_url) > PG_PW_TARGET_URL_MAX)
			return pg_err_set(err, PG_EINVAL, "check target URL over %d characters",
					  PG_PW_TARGET_URL_MAX);
		if (strncmp(target_url, "http://", 7) != 0 &&
		    strncmp(target_url, "https://", 8) != 0)
			return pg_err_set(err, PG_EINVAL, "check target URL '%s' is not http(s)",
					  target_url);
		for (const char *p = target_url; *p; p++)
			if ((unsigned char)*p <= ' ' || *p == 0x7f)
				return pg_err_set(err, PG_EINVAL, "check target URL '%s' has a space "
						  "or a control character", target_url);
	}
	return 0;
}

/* Append id to a growing array. */
static int ids_push(int64_t **v, size_t *n, size_t *cap, int64_t id, struct pg_err *err)
{
	if (PG_GROW(*v, *cap, *n + 1) < 0)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	(*v)[(*n)++] = id;
	return 0;
}

/* The patches the run's pending check of this context went to, and its
 * target URL (the first one set). */
static int pending_patches(struct store *st, int64_t run_id, const char *context,
			   int64_t **ids, size_t *n, size_t *cap, char **url, struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc = -1, step;

	if (store_prepare_cached(st, &q, "SELECT patch_id, target_url FROM check_outbox"
				 " WHERE run_id = ?1 AND context = ?2 AND state = 'pending'"
				 " ORDER BY patch_id", "read pending checks", err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(run_id), STORE_TEXT(context)),
		       "read pending checks", err) < 0)
		goto out;
	while ((step = store_step(q, "read pending checks", err)) == 1) {
		if (ids_push(ids, n, cap, sqlite3_column_int64(q, 0), err) < 0)
			goto out;
		if (!*url && outbox_col_dup(q, 1, url, err) < 0)
			goto out;
	}
	rc = step < 0 ? -1 : 0;
out:
	store_done(st, q);
	return rc;
}

/* The series' last patch, or all of them, by number. */
static int series_patches(struct store *st, int64_t series_id, bool all, int64_t **ids,
			  size_t *n, size_t *cap, struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc = -1, step;

	if (store_prepare_cached(st, &q, all ?
				 "SELECT id FROM patches WHERE series_id = ?1 ORDER BY number" :
				 "SELECT id FROM patches WHERE series_id = ?1"
				 " ORDER BY number DESC LIMIT 1",
				 "read series patches", err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(series_id)), "read series patches", err) < 0)
		goto out;
	while ((step = store_step(q, "read series patches", err)) == 1)
		if (ids_push(ids, n, cap, sqlite3_column_int64(q, 0), err) < 0)
			goto out;
	rc = step < 0 ? -1 : 0;
out:
	store_done(st, q);
	return rc;
}

int outbox_queue_check_tx(struct store *st, int64_t run_id, const char *context,
			  const char *state, const char *description, const char *target_url,
			  enum profile_post_to post_to, int64_t now_s, unsigned int *queued,
			  struct pg_err *err)
{
	int64_t series_id = 0, *ids = NULL;
	size_t n = 0, cap = 0;
	char *pending_url = NULL;
	const char *url;
	int rc = -1;

	if (queued)
		*queued = 0;
	if (check_args_ok(context, state, description, target_url, err) < 0)
		goto out;
	if (store_query_int(st, "read run", "SELECT series_id FROM runs WHERE id = ?1",
			    STORE_ARGS(STORE_INT(run_id)), &series_id, err) < 0) {
		if (err && err->code == PG_ENOTFOUND)
			pg_err_set(err, PG_ENOTFOUND, "queue check: no run %" PRId64, run_id);
		goto out;
	}
	if (pending_patches(st, run_id, context, &ids, &n, &cap, &pending_url, err) < 0)
		goto out;
	if (n == 0 && series_patches(st, series_id, post_to == PROFILE_POST_ALL_PATCHES, &ids,
				     &n, &cap, err) < 0)
		goto out;
	if (n == 0) {
		pg_err_set(err, PG_ENOTFOUND, "queue check: series %" PRId64 " of run %" PRId64
			   " has no patches", series_id, run_id);
		goto out;
	}
	url = target_url ? target_url : pending_url;
	for (size_t i = 0; i < n; i++) {
		if (store_run(st, "queue check",
			      "INSERT INTO check_outbox (series_id, run_id, patch_id, context, state,"
			      " description, target_url, delivery, next_try, created_at)"
			      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued', ?8, ?8)"
			      " ON CONFLICT (run_id, patch_id, context, state) DO NOTHING",
			      STORE_ARGS(STORE_INT(series_id), STORE_INT(run_id), STORE_INT(ids[i]),
					 STORE_TEXT(context), STORE_TEXT(state),
					 STORE_TEXT(description ? description : ""),
					 url && *url ? STORE_TEXT(url) : STORE_NULL,
					 STORE_INT(now_s)), err) < 0)
			goto out;
		if (queued)
			*queued += (unsigned int)store_changes(st);
	}
	rc = 0;
out:
	free(ids);
	free(pending_url);
	return rc;
}

/* ---- contexts that were cancelled ------------------------------------ */

#define NOT_TESTED "Performance Testing NOT TESTED: "

int outbox_settle_cancelled_tx(struct store *st, int64_t series_id, int64_t run_id,
			       const char *why, int64_t now_s, unsigned int *queued,
			       struct pg_err *err)
{
	static const char what[] = "list cancelled contexts";
	struct { int64_t run; char *ctx; } *list = NULL;
	char desc[PG_PW_DESCRIPTION_MAX + 1];
	size_t n = 0, cap = 0, room = sizeof(desc) - sizeof(NOT_TESTED), len;
	sqlite3_stmt *q = NULL;
	int rc = -1, step;

	if (queued)
		*queued = 0;
	if (!why || !*why || (series_id <= 0 && run_id <= 0)) {
		pg_err_set(err, PG_EINVAL, "settle cancelled checks: no reason, or no series or run");
		goto out;
	}
	/* The reason cut at a character boundary (it is UTF-8 or ASCII). */
	len = strlen(why);
	if (len > room) {
		len = room;
		while (len > 0 && ((unsigned char)why[len] & 0xc0) == 0x80)
			len--;
	}
	memcpy(desc, NOT_TESTED, sizeof(NOT_TESTED) - 1);
	memcpy(desc + sizeof(NOT_TESTED) - 1, why, len);
	desc[sizeof(NOT_TESTED) - 1 + len] = '\0';
	if (store_prepare_cached(st, &q,
				 "SELECT DISTINCT c.run_id, c.context FROM check_outbox c"
				 " WHERE (?1 <= 0 OR c.series_id = ?1)"
				 " AND (?2 <= 0 OR c.run_id = ?2)"
				 " AND c.state = 'pending' AND c.delivery <> 'cancelled'"
				 " AND NOT EXISTS (SELECT 1 FROM check_outbox f"
				 "  WHERE f.run_id = c.run_id"
				 "  AND f.context = c.context AND f.state <> 'pending')"
				 " AND (EXISTS (SELECT 1 FROM runs r WHERE r.id = c.run_id"
				 "  AND r.state = 'cancelled')"
				 " OR NOT EXISTS (SELECT 1 FROM jobs j WHERE j.run_id = c.run_id"
				 "  AND j.context = c.context AND j.state <> 'cancelled'))"
				 " ORDER BY c.run_id, c.context", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(series_id), STORE_INT(run_id)), what, err) < 0)
		goto out;
	while ((step = store_step(q, what, err)) == 1) {
		if (PG_GROW(list, cap, n + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
			goto out;
		}
		list[n].run = sqlite3_column_int64(q, 0);
		if (outbox_col_dup(q, 1, &list[n].ctx, err) < 0)
			goto out;
		n++;
	}
	if (step < 0)
		goto out;
	store_done(st, q);
	q = NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned int k = 0;

		if (outbox_queue_check_tx(st, list[i].run, list[i].ctx, "warning", desc, NULL,
					  PROFILE_POST_LAST_PATCH, now_s, &k, err) < 0)
			goto out;
		if (queued)
			*queued += k;
	}
	rc = 0;
out:
	store_done(st, q);
	for (size_t i = 0; i < n; i++)
		free(list[i].ctx);
	free(list);
	if (rc)
		pg_err_prefix(err, "settle the checks of cancelled jobs");
	return rc;
}

/* ---- mails ----------------------------------------------------------- */

/* The series' last patch as the mail needs it. */
struct mail_patch {
	int64_t series_id;
	int64_t pw_patch_id;	/* 0: unknown */
	char *subject, *msgid, *from_name, *from_addr;
};

static void mail_patch_release(struct mail_patch *p)
{
	free(p->subject);
	free(p->msgid);
	free(p->from_name);
	free(p->from_addr);
	memset(p, 0, sizeof(*p));
}

static int mail_patch_read(struct store *st, int64_t run_id, struct mail_patch *p,
			   struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc = -1, step;

	memset(p, 0, sizeof(*p));
	if (store_prepare_cached(st, &q, "SELECT r.series_id, p.pw_patch_id, p.subject, m.msgid,"
				 " m.from_name, m.from_addr FROM runs r"
				 " JOIN patches p ON p.series_id = r.series_id"
				 " JOIN messages m ON m.id = p.message_id"
				 " WHERE r.id = ?1 ORDER BY p.number DESC LIMIT 1",
				 "read the patch of a report", err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(run_id)), "read the patch of a report", err) < 0)
		goto out;
	step = store_step(q, "read the patch of a report", err);
	if (step < 0)
		goto out;
	if (step == 0) {
		pg_err_set(err, PG_ENOTFOUND, "queue mail: no run %" PRId64 " with patches", run_id);
		goto out;
	}
	p->series_id = sqlite3_column_int64(q, 0);
	p->pw_patch_id = sqlite3_column_int64(q, 1);
	if (outbox_col_dup(q, 2, &p->subject, err) < 0 ||
	    outbox_col_dup(q, 3, &p->msgid, err) < 0 ||
	    outbox_col_dup(q, 4, &p->from_name, err) < 0 ||
	    outbox_col_dup(q, 5, &p->from_addr, err) < 0)
		goto out;
	if (!p->msgid) {
		pg_err_set(err, PG_EINVAL, "queue mail: the last patch of run %" PRId64 " has no "
			   "Message-ID", run_id);
		goto out;
	}
	rc = 0;
out:
	store_done(st, q);
	return rc;
}

int outbox_queue_mail_tx(struct store *st, const struct ctl_mail *mail, int64_t run_id,
			 const char *context, const char *state, const char *description,
			 const char *table, const char *reproduce, int64_t now_ms,
			 unsigned int *queued, struct pg_err *err)
{
	struct pg_buf msg = PG_BUF_INIT(REPORT_MAIL_MAX);
	struct pg_buf subject = PG_BUF_INIT(REPORT_MAIL_SUBJECT_MAX * PG_SAN_GROWTH + 64);
	char *cut_subject = NULL;
	char msgid[REPORT_MAIL_MSGID_MAX + 1], url[REPORT_MAIL_URL_MAX + 1];
	struct mail_patch p;
	struct report_mail r;
	enum report_status status;
	bool cc;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	if (queued)
		*queued = 0;
	if (!mail || !mail->enabled)
		return 0;
	if (!state || report_status_from_check(state, &status) < 0) {
		pg_err_set(err, PG_EINVAL, "queue mail: state '%s' is not success, warning or fail",
			   state ? state : "(null)");
		goto out;
	}
	if (!context || !pg_pw_slug_valid(context)) {
		pg_err_set(err, PG_EINVAL, "queue mail: context '%.300s' is not a slug",
			   context ? context : "(null)");
		goto out;
	}
	if (mail_patch_read(st, run_id, &p, err) < 0)
		goto out;
	if (report_mail_msgid(run_id, context, report_mail_addr_domain(mail->from_addr), msgid,
			      sizeof(msgid), err) < 0)
		goto out;
	memset(&r, 0, sizeof(r));
	r.from.name = mail->from_name;
	r.from.addr = mail->from_addr;
	r.to.name = mail->to_name;
	r.to.addr = mail->to_addr;
	/* An author address the formatter would refuse is left out, not a
	 * reason to lose the report. */
	if (p.from_addr && report_mail_addr_ok(p.from_addr)) {
		if (!p.from_name || strlen(p.from_name) <= REPORT_MAIL_NAME_MAX)
			r.author.name = p.from_name;
		r.author.addr = p.from_addr;
	}
	r.cc_author = mail->cc_author_on;
	r.patch_msgid = p.msgid;
	r.patch_id = p.pw_patch_id;
	if (p.pw_patch_id > 0) {
		if (report_mail_patch_url(mail->patch_url_template, p.pw_patch_id, url, sizeof(url),
					  err) < 0)
			goto out;
		r.patch_url = url;
	}
	r.subject = p.subject ? p.subject : "";
	/* Nor is a subject too long to send: it is cut, at a character. */
	if (strlen(r.subject) > REPORT_MAIL_SUBJECT_MAX) {
		cut_subject = strndup(r.subject, pg_utf8_cut(r.subject, REPORT_MAIL_SUBJECT_MAX));
		if (!cut_subject) {
			pg_err_set(err, PG_ENOMEM, "queue mail: out of memory");
			goto out;
		}
		r.subject = cut_subject;
	}
	r.label = context;
	r.status = status;
	r.description = description;
	r.table = table;
	r.reproduce = reproduce;
	r.msgid = msgid;
	r.date_ms = now_ms;
	if (report_mail_format(&r, &msg, err) < 0 ||
	    report_mail_subject(r.subject, status, r.patch_id, &subject, err) < 0) {
		pg_err_prefix(err, "queue mail of run %" PRId64 ", %s", run_id, context);
		goto out;
	}
	cc = report_mail_cc_author(&r);
	if (store_run(st, "queue mail",
		      "INSERT INTO email_outbox (series_id, run_id, context, msgid, in_reply_to,"
		      " to_addrs, cc_addrs, subject, body, delivery, next_try, created_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'queued', ?10, ?10)"
		      " ON CONFLICT DO NOTHING",
		      STORE_ARGS(STORE_INT(p.series_id), STORE_INT(run_id), STORE_TEXT(context),
				 STORE_TEXT(msgid), STORE_TEXT(p.msgid), STORE_TEXT(mail->to_addr),
				 STORE_TEXT(cc ? p.from_addr : ""), STORE_TEXT(pg_buf_str(&subject)),
				 STORE_TEXT(pg_buf_str(&msg)), STORE_INT(now_ms / 1000)), err) < 0)
		goto out;
	if (queued)
		*queued = (unsigned int)store_changes(st);
	rc = 0;
out:
	mail_patch_release(&p);
	pg_buf_release(&msg);
	pg_buf_release(&subject);
	free(cut_subject);
	return rc;
}

int outbox_alert_queued(struct store *st, int64_t cp_id, bool *queued, struct pg_err *err)
{
	int64_t n = 0;

	*queued = false;
	if (store_query_int(st, "read alert mail",
			    "SELECT count(*) FROM email_outbox WHERE change_point_id = ?1",
			    STORE_ARGS(STORE_INT(cp_id)), &n, err) < 0)
		return -1;
	*queued = n > 0;
	return 0;
}

int outbox_queue_alert_tx(struct store *st, const struct ctl_mail *mail,
			  const struct outbox_alert *a, int64_t now_ms, unsigned int *queued,
			  struct pg_err *err)
{
	static const char label[] = "perfgate-main-alert";
	struct pg_buf msg = PG_BUF_INIT(REPORT_MAIL_MAX);
	struct pg_buf subject = PG_BUF_INIT(REPORT_MAIL_SUBJECT_MAX * PG_SAN_GROWTH + 64);
	char msgid[REPORT_MAIL_MSGID_MAX + 1];
	const char *domain;
	struct report_mail r;
	int rc = -1;

	if (queued)
		*queued = 0;
	if (!mail || !mail->enabled)
		return 0;
	if (!a || a->change_point_id <= 0 || !a->to_addr || !a->subject) {
		pg_err_set(err, PG_EINVAL, "queue alert: no change point, address or subject");
		goto out;
	}
	domain = report_mail_addr_domain(mail->from_addr);
	if (!domain || pg_fmt(msgid, sizeof(msgid), "perfgate.cp%" PRId64 ".alert@%s",
			      a->change_point_id, domain) < 0 || !report_mail_msgid_ok(msgid)) {
		pg_err_set(err, PG_EINVAL, "queue alert: no Message-ID from the From address '%s'",
			   mail->from_addr ? mail->from_addr : "");
		goto out;
	}
	memset(&r, 0, sizeof(r));
	r.alert = true;
	r.from.name = mail->from_name;
	r.from.addr = mail->from_addr;
	r.to.name = a->to_name;
	r.to.addr = a->to_addr;
	r.cc_author = REPORT_CC_AUTHOR_NEVER;
	r.subject = a->subject;
	r.label = label;
	r.status = REPORT_FAILURE;
	r.description = a->description;
	r.table = a->table;
	r.reproduce = a->reproduce;
	r.msgid = msgid;
	r.date_ms = now_ms;
	if (report_mail_format(&r, &msg, err) < 0) {
		pg_err_prefix(err, "queue alert of change point %" PRId64, a->change_point_id);
		goto out;
	}
	/* The Subject field as formatted, for the outbox's list. */
	if (pg_buf_printf(&subject, "[perfgate] %s", a->subject) < 0) {
		pg_err_set(err, PG_ENOMEM, "queue alert: subject too long");
		goto out;
	}
	if (store_run(st, "queue alert mail",
		      "INSERT INTO email_outbox (change_point_id, context, msgid, to_addrs,"
		      " subject, body, delivery, next_try, created_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7, ?7)"
		      " ON CONFLICT DO NOTHING",
		      STORE_ARGS(STORE_INT(a->change_point_id), STORE_TEXT(label), STORE_TEXT(msgid),
				 STORE_TEXT(a->to_addr), STORE_TEXT(pg_buf_str(&subject)),
				 STORE_TEXT(pg_buf_str(&msg)), STORE_INT(now_ms / 1000)), err) < 0)
		goto out;
	if (queued)
		*queued = (unsigned int)store_changes(st);
	rc = 0;
out:
	pg_buf_release(&msg);
	pg_buf_release(&subject);
	return rc;
}
