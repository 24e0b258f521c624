/* SPDX-License-Identifier: MIT */
/*
 * The mail outbox's delivery pass: claim, send over SMTP, record; a
 * refused author's Cc is dropped and the mail sent again (see outbox.h).
 */
#include "outbox.h"
#include "outbox_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fmt.h"
#include "log.h"

/* ---- pure parts ------------------------------------------------------ */

/* The end of the header field that starts at p (after its folded lines),
 * within msg[0..end). */
static size_t field_end(const char *msg, size_t p, size_t end)
{
	for (;;) {
		const char *nl = memchr(msg + p, '\n', end - p);

		if (!nl)
			return end;
		p = (size_t)(nl - msg) + 1;
		if (p >= end || (msg[p] != ' ' && msg[p] != '\t'))
			return p;
	}
}

int outbox_mail_strip_cc(const char *msg, size_t len, struct pg_buf *out, struct pg_err *err)
{
	size_t p = 0, head_end, e;
	const char *sep = NULL;
	int removed = 0;

	/* The header section ends at the first empty line. */
	for (size_t i = 0; i + 1 < len; i++)
		if (msg[i] == '\n' && (msg[i + 1] == '\n' ||
				       (msg[i + 1] == '\r' && i + 2 < len && msg[i + 2] == '\n'))) {
			sep = msg + i + 1;
			break;
		}
	if (!sep)
		return pg_err_set(err, PG_EINVAL, "mail: no end of the header section");
	head_end = (size_t)(sep - msg);
	while (p < head_end) {
		e = field_end(msg, p, head_end);
		if (e - p >= 3 && strncasecmp(msg + p, "Cc:", 3) == 0) {
			removed = 1;
		} else if (pg_buf_add(out, msg + p, e - p) < 0) {
			goto full;
		}
		p = e;
	}
	if (pg_buf_add(out, msg + head_end, len - head_end) < 0)
		goto full;
	return removed;
full:
	return pg_err_set(err, PG_ETOOBIG, "mail: out of room removing the Cc");
}

bool outbox_mail_refused(const struct smtp_result *res, const char *errmsg, const char *addr)
{
	size_t n = addr ? strlen(addr) : 0;
	const char *texts[2] = { res ? res->reply : NULL, errmsg };

	if (!n)
		return false;
	for (size_t t = 0; t < 2; t++) {
		const char *s = texts[t];

		for (; s && *s; s++)
			if (strncasecmp(s, addr, n) == 0 &&
			    (s == texts[t] || !(isalnum((unsigned char)s[-1]) || s[-1] == '.')) &&
			    !(isalnum((unsigned char)s[n]) || s[n] == '.'))
				return true;
	}
	return false;
}

/* ---- rows ------------------------------------------------------------ */

struct mail_row {
	int64_t id, run_id;
	unsigned int attempts;
	char *context, *msgid, *to_addrs, *cc_addrs, *body;
};

static void mail_row_release(struct mail_row *r)
{
	free(r->context);
	free(r->msgid);
	free(r->to_addrs);
	free(r->cc_addrs);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* The ids of the due rows, oldest first (the rows are read one at a time:
 * a mail may be megabytes). */
static int due_mails(struct store *st, int64_t now_s, int64_t *ids, size_t *n,
		     struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc = -1, step;

	*n = 0;
	if (store_prepare(st, &q, "SELECT id FROM email_outbox WHERE delivery = 'queued'"
			  " AND next_try <= ?1 ORDER BY id LIMIT ?2", "read due mails", err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(now_s), STORE_INT(OUTBOX_BATCH)),
		       "read due mails", err) < 0)
		goto out;
	while ((step = store_step(q, "read due mails", err)) == 1)
		ids[(*n)++] = sqlite3_column_int64(q, 0);
	rc = step < 0 ? -1 : 0;
out:
	sqlite3_finalize(q);
	return rc;
}

/* Returns 1 with the row read, 0 when it is no longer queued, -1. */
static int mail_read(struct store *st, int64_t id, struct mail_row *r, struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc = -1, step;

	memset(r, 0, sizeof(*r));
	if (store_prepare(st, &q, "SELECT run_id, attempts, context, msgid, to_addrs, cc_addrs,"
			  " body FROM email_outbox WHERE id = ?1 AND delivery = 'queued'",
			  "read a mail", err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(id)), "read a mail", err) < 0)
		goto out;
	step = store_step(q, "read a mail", err);
	if (step <= 0) {
		rc = step;
		goto out;
	}
	r->id = id;
	r->run_id = sqlite3_column_int64(q, 0);
	r->attempts = (unsigned int)sqlite3_column_int64(q, 1);
	if (outbox_col_dup(q, 2, &r->context, err) < 0 ||
	    outbox_col_dup(q, 3, &r->msgid, err) < 0 ||
	    outbox_col_dup(q, 4, &r->to_addrs, err) < 0 ||
	    outbox_col_dup(q, 5, &r->cc_addrs, err) < 0 ||
	    outbox_col_dup(q, 6, &r->body, err) < 0)
		goto out;
	if (!r->body || !r->to_addrs) {
		pg_err_set(err, PG_EDB, "email_outbox row %" PRId64 ": no body or recipient", id);
		goto out;
	}
	rc = 1;
out:
	sqlite3_finalize(q);
	return rc;
}

/* Split a comma-separated address list in place into rcpt[] from *n.
 * Returns 0, or -1 when there are more than SMTP_RCPT_MAX. */
static int split_addrs(char *list, const char **rcpt, size_t *n)
{
	char *p = list;

	while (p && *p) {
		char *comma = strchr(p, ','), *e;

		if (comma)
			*comma = '\0';
		while (*p == ' ')
			p++;
		e = p + strlen(p);
		while (e > p && e[-1] == ' ')
			*--e = '\0';
		if (*p) {
			if (*n >= SMTP_RCPT_MAX)
				return -1;
			rcpt[(*n)++] = p;
		}
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

/* ---- one mail ---------------------------------------------------------- */

static void smtp_options(const struct outbox *ob, struct smtp_opts *o)
{
	struct smtp_opts init = SMTP_OPTS_INIT;
	long timeout = (long)ob->mail->timeout_s * 1000;

	*o = init;
	o->url = ob->mail->smtp_url;
	o->starttls = ob->mail->starttls;
	o->username = ob->mail->username;
	o->password = ob->smtp_password;
	o->ca_file = ob->mail->ca_file;
	o->timeout_ms = timeout;
	if (o->connect_timeout_ms > timeout)
		o->connect_timeout_ms = timeout;
}

/* Send r->body to its recipients.  Returns smtp_send()'s result. */
static int send_row(const struct outbox *ob, const struct mail_row *r, struct smtp_result *res,
		    struct pg_err *nerr)
{
	const char *rcpt[2 * SMTP_RCPT_MAX];
	char *to = strdup(r->to_addrs), *cc = strdup(r->cc_addrs ? r->cc_addrs : "");
	struct smtp_opts o;
	size_t n = 0;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	res->outcome = SMTP_TRANSIENT;
	if (!to || !cc) {
		pg_err_set(nerr, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (split_addrs(to, rcpt, &n) < 0 || split_addrs(cc, rcpt, &n) < 0) {
		res->outcome = SMTP_PERMANENT;
		pg_err_set(nerr, PG_EINVAL, "more than %d recipients", SMTP_RCPT_MAX);
		goto out;
	}
	smtp_options(ob, &o);
	rc = smtp_send(&o, ob->mail->from_addr, rcpt, n, r->body, strlen(r->body), res, nerr);
out:
	free(to);
	free(cc);
	return rc;
}

static int record(struct outbox *ob, const struct mail_row *r, const char *delivery,
		  int64_t next_try, const char *response, struct pg_err *err)
{
	char cut[OUTBOX_RESPONSE_MAX + 1];
	int64_t now = outbox_now_s();

	outbox_response_cut(response, strlen(response), cut, sizeof(cut));
	return outbox_tx_run(ob->st, "record a mail",
			     "UPDATE email_outbox SET delivery = ?2, next_try = ?3,"
			     " sent_at = CASE WHEN ?2 = 'sent' THEN ?4 ELSE sent_at END,"
			     " response = ?5 WHERE id = ?1 AND delivery = 'queued'",
			     STORE_ARGS(STORE_INT(r->id), STORE_TEXT(delivery),
					STORE_INT(next_try ? next_try : now), STORE_INT(now),
					STORE_TEXT(cut)), NULL, err);
}

/* The author refused: rewrite the row without its Cc, in one transaction,
 * so that every later try sends the same smaller mail.  Returns 0 or -1. */
static int drop_cc(struct outbox *ob, struct mail_row *r, const char *why, struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(strlen(r->body) + 1);
	char note[OUTBOX_RESPONSE_MAX + 1];
	int rc = -1;

	if (outbox_mail_strip_cc(r->body, strlen(r->body), &b, err) < 0)
		goto out;
	pg_fmt_cut(note, sizeof(note), "Cc %s refused, sent again without it: %s", r->cc_addrs,
		   why);
	if (outbox_tx_run(ob->st, "drop a refused Cc",
			  "UPDATE email_outbox SET body = ?2, cc_addrs = '', response = ?3"
			  " WHERE id = ?1 AND delivery = 'queued'",
			  STORE_ARGS(STORE_INT(r->id), STORE_TEXT(pg_buf_str(&b)), STORE_TEXT(note)),
			  NULL, err) < 0)
		goto out;
	free(r->body);
	r->body = pg_buf_detach(&b, NULL);
	r->cc_addrs[0] = '\0';
	rc = r->body ? 0 : pg_err_set(err, PG_ENOMEM, "out of memory");
out:
	pg_buf_release(&b);
	return rc;
}

static int deliver(struct outbox *ob, struct mail_row *r, struct pg_err *err)
{
	struct pg_err nerr = PG_ERR_INIT;
	struct smtp_result res;
	int64_t changes = 0, delay;
	bool uncc = false;

	delay = outbox_retry_delay_s(r->attempts + 1, ob->max_backoff_s, -1, &ob->rand);
	if (outbox_tx_run(ob->st, "claim a mail",
			  "UPDATE email_outbox SET attempts = attempts + 1, next_try = ?2"
			  " WHERE id = ?1 AND delivery = 'queued' AND attempts = ?3",
			  STORE_ARGS(STORE_INT(r->id), STORE_INT(outbox_now_s() + delay),
				     STORE_INT(r->attempts)), &changes, err) < 0)
		return -1;
	if (changes == 0)
		return 0;
	for (;;) {
		if (send_row(ob, r, &res, &nerr) == 0) {
			if (record(ob, r, "sent", 0, res.reply, err) < 0)
				return -1;
			ob->stats.mails_sent++;
			pg_log_info(OUTBOX_LOG, "mail %" PRId64 " (run %" PRId64 ", %s) sent: <%s> "
				    "(%s)", r->id, r->run_id, r->context, r->msgid, res.reply);
			return 0;
		}
		if (res.outcome == SMTP_TRANSIENT) {
			delay = outbox_retry_delay_s(r->attempts + 1, ob->max_backoff_s, -1,
						     &ob->rand);
			if (record(ob, r, "queued", outbox_now_s() + delay, nerr.msg, err) < 0)
				return -1;
			ob->stats.mails_retried++;
			pg_log_warn(OUTBOX_LOG, "mail %" PRId64 ": try %u: %s; next try in %" PRId64
				    " s", r->id, r->attempts + 1, nerr.msg, delay);
			return 0;
		}
		/* Once: a report that reaches the list without the author
		 * beats none. */
		if (!uncc && r->cc_addrs && r->cc_addrs[0] &&
		    outbox_mail_refused(&res, nerr.msg, r->cc_addrs)) {
			pg_log_warn(OUTBOX_LOG, "mail %" PRId64 ": %s: sending it again without the "
				    "Cc to %s", r->id, nerr.msg, r->cc_addrs);
			if (drop_cc(ob, r, nerr.msg, err) < 0)
				return -1;
			ob->stats.mails_uncc++;
			uncc = true;
			continue;
		}
		if (record(ob, r, "failed", 0, nerr.msg, err) < 0)
			return -1;
		ob->stats.mails_failed++;
		pg_log_error(OUTBOX_LOG, "mail %" PRId64 " (run %" PRId64 ", %s): %s; not retried "
			     "(`perfgate-controller outbox retry mail %" PRId64 "` queues it again)",
			     r->id, r->run_id, r->context, nerr.msg, r->id);
		return 0;
	}
}

int outbox_mail_pass(struct outbox *ob, int64_t now_s, struct pg_err *err)
{
	int64_t ids[OUTBOX_BATCH];
	struct mail_row r;
	size_t n = 0;
	int rc = -1, got;

	memset(&r, 0, sizeof(r));
	if (!ob->mail || !ob->mail->enabled)
		return 0;
	if (!now_s)
		now_s = outbox_now_s();
	if (due_mails(ob->st, now_s, ids, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (ob->stop && atomic_load(ob->stop))
			break;
		got = mail_read(ob->st, ids[i], &r, err);
		if (got < 0)
			goto out;
		if (got > 0 && deliver(ob, &r, err) < 0)
			goto out;
		mail_row_release(&r);
	}
	rc = 0;
out:
	mail_row_release(&r);
	if (rc)
		pg_err_prefix(err, "mail outbox");
	return rc;
}
