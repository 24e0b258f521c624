/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/outbox*.c: the pure parts (retry delays, what
 * a try came to, removing a Cc, a refused address), queueing final checks
 * and report mails in a temporary store, the order and cancellation rules
 * of a delivery pass (against a Patchwork that cannot be reached, so that
 * every try fails the same way and only the rules show), and the admin
 * functions.  The delivery itself, against the fake Patchwork and a real
 * SMTP server, is tests/integration/t_checks.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "ctl_config.h"
#include "err.h"
#include "http.h"
#include "outbox.h"
#include "report_mail.h"
#include "store.h"
#include "timeutil.h"

#include "storefx.h"

#define CTX "perfgate-demo-Performance"
#define URL "http://ci.test:8080/series/1"
#define BASE "0123456789012345678901234567890123456789"

struct fx {
	char dir[256], db[300];
	struct store *st;
	int64_t series, run1, run2, patch[3];
};

/* ---- fixture ------------------------------------------------------------ */

static int64_t count(struct fx *f, const char *text)
{
	return sfx_int(f->st, text, NULL, 0);
}

/* A series of three patches by Alice (Patchwork ids 11, 12, 13 unless
 * no_pw), and two runs of it. */
static void add_series(struct fx *f, bool no_pw)
{
	f->series = sfx_add_alice_series(f->st, 3, "lib: x", "lib", no_pw ? -1 : 10, f->patch);
	f->run1 = sfx_add_run(f->st, f->series, "new", "main", BASE, 1);
	f->run2 = sfx_add_run(f->st, f->series, "new", "main", BASE, 1);
}

/* A pending row as the planner queues it (on the last patch). */
static void add_pending(struct fx *f, int64_t run, int64_t patch)
{
	sfx_add_pending(f->st, f->series, run, patch, CTX, URL, 100);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	sfx_open(f->dir, sizeof(f->dir), f->db, sizeof(f->db), &f->st, "outbox");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	store_close(f->st);
	sfx_rm_dir(f->dir);
	free(f);
	return 0;
}

/* ---- pure parts ----------------------------------------------------------- */

static void test_retry_delay(void **state)
{
	uint64_t rnd = 42;

	(void)state;
	/* Without jitter: the cap, doubling from 1 s up to max_backoff_s. */
	assert_int_equal(outbox_retry_delay_s(1, 900, -1, NULL), 1);
	assert_int_equal(outbox_retry_delay_s(2, 900, -1, NULL), 2);
	assert_int_equal(outbox_retry_delay_s(5, 900, -1, NULL), 16);
	assert_int_equal(outbox_retry_delay_s(10, 900, -1, NULL), 512);
	assert_int_equal(outbox_retry_delay_s(11, 900, -1, NULL), 900);
	assert_int_equal(outbox_retry_delay_s(4000000000u, 900, -1, NULL), 900);
	assert_int_equal(outbox_retry_delay_s(0, 900, -1, NULL), 1);
	assert_int_equal(outbox_retry_delay_s(3, 0, -1, NULL), 1);
	/* With jitter: within [1, cap], and not always the same. */
	{
		int64_t lo = INT64_MAX, hi = 0;

		for (int i = 0; i < 2000; i++) {
			int64_t d = outbox_retry_delay_s(8, 60, -1, &rnd);

			assert_true(d >= 1 && d <= 60);
			lo = d < lo ? d : lo;
			hi = d > hi ? d : hi;
		}
		assert_true(lo <= 5);
		assert_true(hi >= 55);
	}
	/* Retry-After is a floor, rounded up, capped. */
	assert_int_equal(outbox_retry_delay_s(1, 2, 7500, &rnd), 8);
	assert_int_equal(outbox_retry_delay_s(1, 2, 24 * 3600 * 1000LL, &rnd),
			 OUTBOX_RETRY_AFTER_MAX_S);
	assert_int_equal(outbox_retry_delay_s(1, 900, 0, NULL), 1);
}

/* A try cut short by a crash: not due before its POST could have ended
 * (the timeout) and the retry delay after it, as a timeout in-process. */
static void test_claim_next(void **state)
{
	uint64_t rnd = 7;

	(void)state;
	assert_int_equal(outbox_claim_next_s(1000, 1, 30, 900, NULL), 1000 + 30 + 1);
	assert_int_equal(outbox_claim_next_s(1000, 5, 30, 900, NULL), 1000 + 30 + 16);
	assert_int_equal(outbox_claim_next_s(1000, 1, 0, 900, NULL), 1001);
	assert_int_equal(outbox_claim_next_s(1000, 1, -5, 900, NULL), 1001);
	for (int i = 0; i < 1000; i++) {
		int64_t t = outbox_claim_next_s(1000, 8, 3, 2, &rnd);

		assert_true(t >= 1000 + 3 + 1 && t <= 1000 + 3 + 2);
	}
}

static void test_check_outcome(void **state)
{
	(void)state;
	assert_int_equal(outbox_check_outcome(0, PG_OK), OUTBOX_DELIVERED);
	assert_int_equal(outbox_check_outcome(1, PG_OK), OUTBOX_DELIVERED);
	assert_int_equal(outbox_check_outcome(-1, PG_EIO), OUTBOX_RETRY);
	assert_int_equal(outbox_check_outcome(-1, PG_ETIMEOUT), OUTBOX_RETRY);
	assert_int_equal(outbox_check_outcome(-1, PG_EINVAL), OUTBOX_FAILED);
	assert_int_equal(outbox_check_outcome(-1, PG_ENOTFOUND), OUTBOX_FAILED);
	assert_int_equal(outbox_check_outcome(-1, PG_ECONFLICT), OUTBOX_FAILED);
}

/* After which failed POST the next try looks the check up first. */
static void test_check_may_exist(void **state)
{
	(void)state;
	/* Refused at connect: nothing posted, whatever else. */
	assert_false(outbox_check_may_exist(0, false));
	/* Sent, no answer (timeout, reset, empty reply): maybe. */
	assert_true(outbox_check_may_exist(0, true));
	/* A 5xx: a proxy's 502/504 does not know; Patchwork's 500 rarely. */
	assert_true(outbox_check_may_exist(500, true));
	assert_true(outbox_check_may_exist(502, true));
	assert_true(outbox_check_may_exist(503, true));
	assert_true(outbox_check_may_exist(504, true));
	/* Any other answer: not created. */
	assert_false(outbox_check_may_exist(400, true));
	assert_false(outbox_check_may_exist(403, true));
	assert_false(outbox_check_may_exist(408, true));
	assert_false(outbox_check_may_exist(429, true));
}

/* Removing the Cc of a formatted report gives the report formatted
 * without it, byte for byte (a long display name folds the Cc field). */
static void test_strip_cc(void **state)
{
	struct report_mail r;
	struct pg_buf with = PG_BUF_INIT(1 << 20), without = PG_BUF_INIT(1 << 20);
	struct pg_buf out = PG_BUF_INIT(1 << 20);
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.from.name = "perfgate";
	r.from.addr = "perfgate@lab.example.org";
	r.to.addr = "test-report@dpdk.org";
	r.author.name = "Morten Brørup, with a display name long enough to fold the field";
	r.author.addr = "mb@smartsharesystems.com";
	r.cc_author = REPORT_CC_AUTHOR_ALWAYS;
	r.patch_msgid = "p3@example.com";
	r.patch_id = 13;
	r.patch_url = "http://patches.dpdk.org/patch/13/";
	r.subject = "[PATCH 3/3] lib: step 3";
	r.label = CTX;
	r.status = REPORT_FAILURE;
	r.description = "Performance Testing FAIL";
	r.table = "Cc: a body line that looks like a header stays\n";
	r.msgid = "perfgate.r1." CTX "@lab.example.org";
	assert_int_equal(report_mail_format(&r, &with, &err), 0);
	r.cc_author = REPORT_CC_AUTHOR_NEVER;
	assert_int_equal(report_mail_format(&r, &without, &err), 0);
	assert_non_null(strstr(pg_buf_str(&with), "\r\nCc: "));
	assert_non_null(strstr(pg_buf_str(&with), "\r\n =?UTF-8?"));	/* folded */
	assert_int_equal(outbox_mail_strip_cc(with.data, with.len, &out, &err), 1);
	assert_int_equal(out.len, without.len);
	assert_memory_equal(out.data, without.data, out.len);
	assert_non_null(strstr(pg_buf_str(&out), "Cc: a body line"));
	/* No Cc: unchanged. */
	pg_buf_reset(&out);
	assert_int_equal(outbox_mail_strip_cc(without.data, without.len, &out, &err), 0);
	assert_int_equal(out.len, without.len);
	assert_memory_equal(out.data, without.data, out.len);
	/* LF line ends and a field name in another case. */
	pg_buf_reset(&out);
	assert_int_equal(outbox_mail_strip_cc("To: a@x\ncC: b@y,\n c@z\nSubject: s\n\nCc: body\n",
					      44, &out, &err), 1);
	assert_string_equal(pg_buf_str(&out), "To: a@x\nSubject: s\n\nCc: body\n");
	/* No end of the header section. */
	pg_buf_reset(&out);
	assert_int_equal(outbox_mail_strip_cc("To: a@x\r\nCc: b@y\r\n", 18, &out, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_buf_release(&with);
	pg_buf_release(&without);
	pg_buf_release(&out);
}

static void test_mail_refused(void **state)
{
	struct smtp_result res;

	(void)state;
	memset(&res, 0, sizeof(res));
	snprintf(res.reply, sizeof(res.reply),
		 "550 5.1.1 <Alice@Example.com>: Recipient address rejected");
	assert_true(outbox_mail_refused(&res, "", "alice@example.com"));
	assert_false(outbox_mail_refused(&res, "", "lice@example.com"));
	assert_false(outbox_mail_refused(&res, "", "alice@example.co"));
	assert_false(outbox_mail_refused(&res, "", "bob@example.com"));
	assert_false(outbox_mail_refused(&res, "", ""));
	res.reply[0] = '\0';
	assert_true(outbox_mail_refused(&res, "RCPT failed: 550 (server said: alice@example.com "
					"unknown)", "alice@example.com"));
	assert_false(outbox_mail_refused(NULL, NULL, "alice@example.com"));
}

/* ---- queueing ------------------------------------------------------------ */

static void test_queue_check(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	unsigned int n = 99;

	add_series(f, false);
	add_pending(f, f->run1, f->patch[2]);
	/* Where the pending check went, with its target URL. */
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(outbox_queue_check_tx(f->st, f->run1, CTX, "success",
					       "Performance Testing PASS", NULL,
					       PROFILE_POST_ALL_PATCHES, 200, &n, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(count(f, "SELECT count(*) FROM check_outbox WHERE state = 'success'"
			       " AND patch_id = (SELECT max(id) FROM patches) AND target_url = '"
			       URL "' AND delivery = 'queued' AND next_try = 200"
			       " AND created_at = 200 AND attempts = 0"), 1);
	/* Once per run, patch, context and state. */
	assert_int_equal(outbox_queue_check_tx(f->st, f->run1, CTX, "success", "again", NULL,
					       PROFILE_POST_LAST_PATCH, 201, &n, &err), 0);
	assert_int_equal(n, 0);
	/* A run without a pending check: by post_to, with the URL given. */
	assert_int_equal(outbox_queue_check_tx(f->st, f->run2, CTX, "fail", "x",
					       "https://ci.test/series/1", PROFILE_POST_ALL_PATCHES,
					       300, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(outbox_queue_check_tx(f->st, f->run2, CTX, "warning", "x", "",
					       PROFILE_POST_LAST_PATCH, 300, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(count(f, "SELECT count(*) FROM check_outbox WHERE state = 'warning'"
			       " AND target_url IS NULL AND patch_id = (SELECT max(id) FROM patches)"),
			 1);
	/* Refused before anything is written. */
	assert_int_equal(outbox_queue_check_tx(f->st, f->run2, "ci/perf", "fail", "x", NULL,
					       PROFILE_POST_LAST_PATCH, 300, &n, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(outbox_queue_check_tx(f->st, f->run2, CTX, "failure", "x", NULL,
					       PROFILE_POST_LAST_PATCH, 300, &n, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(outbox_queue_check_tx(f->st, f->run2, CTX, "fail", "x",
					       "ftp://ci.test/x", PROFILE_POST_LAST_PATCH, 300, &n,
					       &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(outbox_queue_check_tx(f->st, 9999, CTX, "fail", "x", NULL,
					       PROFILE_POST_LAST_PATCH, 300, &n, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_int_equal(count(f, "SELECT count(*) FROM check_outbox"), 6);
}

/* A job of run, context CTX, in state (cancelled jobs get why). */
static void add_job(struct fx *f, int64_t run, const char *mode, const char *state)
{
	sfx_sql(f->st, "INSERT INTO jobs (run_id, context, host_class, build_mode, state,"
		" outcome_detail, created_at) VALUES (?1, '" CTX "', 'demo', ?2, ?3,"
		" 'superseded by series 2', 100)",
		STORE_ARGS(STORE_INT(run), STORE_TEXT(mode), STORE_TEXT(state)));
}

/* Contexts whose jobs were all cancelled end with a warning where their
 * pending check went; others are left to their verdict. */
static void test_settle_cancelled(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char why[2000], desc[PG_PW_DESCRIPTION_MAX + 1];
	unsigned int n = 99;

	add_series(f, false);
	add_pending(f, f->run1, f->patch[2]);
	add_pending(f, f->run2, f->patch[2]);
	add_job(f, f->run1, "release", "cancelled");
	add_job(f, f->run1, "debug", "cancelled");
	add_job(f, f->run2, "release", "cancelled");
	add_job(f, f->run2, "debug", "queued");	/* run 2 still has work */
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(outbox_settle_cancelled_tx(f->st, f->series, 0, "superseded by series 2",
						    300, &n, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(count(f, "SELECT count(*) FROM check_outbox WHERE run_id = 1"
			       " AND state = 'warning' AND description = 'Performance Testing"
			       " NOT TESTED: superseded by series 2' AND target_url = '" URL "'"
			       " AND patch_id = (SELECT max(id) FROM patches) AND delivery = 'queued'"
			       " AND created_at = 300"), 1);
	assert_int_equal(count(f, "SELECT count(*) FROM check_outbox WHERE run_id = 2"
			       " AND state <> 'pending'"), 0);
	/* Once only. */
	assert_int_equal(outbox_settle_cancelled_tx(f->st, f->series, 0, "again", 301, &n, &err),
			 0);
	assert_int_equal(n, 0);
	/* Run 2's last job cancelled: settled by run, the long reason cut to
	 * Patchwork's limit at a character boundary. */
	sfx_sql(f->st, "UPDATE jobs SET state = 'cancelled' WHERE run_id = ?1",
		STORE_ARGS(STORE_INT(f->run2)));
	memset(why, 'x', sizeof(why));
	memcpy(why + PG_PW_DESCRIPTION_MAX - 40, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8);
	why[sizeof(why) - 1] = '\0';
	for (size_t i = 0; i < 7; i++) {
		/* Shift the two-byte characters across the cut (the 992nd
		 * byte of the reason is the second half of one). */
		memmove(why + 1, why, sizeof(why) - 2);
		why[0] = 'y';
	}
	assert_int_equal(outbox_settle_cancelled_tx(f->st, 0, f->run2, why, 302, &n, &err), 0);
	assert_int_equal(n, 1);
	sfx_text(f->st, "SELECT description FROM check_outbox WHERE id = ?1",
		 store_last_id(f->st), desc, sizeof(desc));
	assert_int_equal(strlen(desc), PG_PW_DESCRIPTION_MAX - 1);
	assert_int_equal((unsigned char)desc[strlen(desc) - 1], 'x');
	assert_int_equal(strncmp(desc, "Performance Testing NOT TESTED: yyyyyyyx", 40), 0);
	/* A context with a final already, or without a pending check, or a
	 * pending check that was cancelled: nothing. */
	assert_int_equal(outbox_settle_cancelled_tx(f->st, f->series, f->run2, "x", 303, &n, &err),
			 0);
	assert_int_equal(n, 0);
	/* No reason, no scope: refused. */
	assert_int_equal(outbox_settle_cancelled_tx(f->st, f->series, 0, "", 303, &n, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(outbox_settle_cancelled_tx(f->st, 0, 0, "x", 303, &n, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
}

static void test_queue_mail(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	struct ctl_config cfg;
	unsigned int n = 99;
	sqlite3_stmt *q;

	add_series(f, false);
	sfx_mail_config(&cfg, f->dir, f->db, true);
	assert_int_equal(outbox_queue_mail_tx(f->st, &cfg.mail, f->run1, CTX, "fail",
					      "Performance Testing FAIL", "the table\n", NULL,
					      1796013000000LL, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(outbox_queue_mail_tx(f->st, &cfg.mail, f->run1, CTX, "fail", "again",
					      NULL, NULL, 1796013000000LL, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(outbox_queue_mail_tx(f->st, &cfg.mail, f->run2, CTX, "success",
					      "Performance Testing PASS", NULL, NULL,
					      1796013000000LL, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_prepare(f->st, &q, "SELECT msgid, in_reply_to, to_addrs, cc_addrs,"
				       " subject, body FROM email_outbox ORDER BY id", "read", &err),
			 0);
	assert_int_equal(store_step(q, "read", &err), 1);
	assert_string_equal((const char *)sqlite3_column_text(q, 0),
			    "perfgate.r1." CTX "@lab.example.org");
	assert_string_equal((const char *)sqlite3_column_text(q, 1), "p3@example.com");
	assert_string_equal((const char *)sqlite3_column_text(q, 2), "test-report@dpdk.org");
	assert_string_equal((const char *)sqlite3_column_text(q, 3), "alice@example.com");
	assert_string_equal((const char *)sqlite3_column_text(q, 4),
			    "|FAILURE| pw13 [PATCH 3/3] lib: step 3");
	assert_non_null(strstr((const char *)sqlite3_column_text(q, 5),
			       "\r\n\r\nTest-Label: " CTX "\r\nTest-Status: FAILURE\r\n"
			       "http://patches.dpdk.org/patch/13/\r\n"));
	assert_non_null(strstr((const char *)sqlite3_column_text(q, 5), "\r\nCc: Alice Dev"));
	/* SUCCESS: the author is not copied (cc_author_on "failure"). */
	assert_int_equal(store_step(q, "read", &err), 1);
	assert_string_equal((const char *)sqlite3_column_text(q, 3), "");
	assert_null(strstr((const char *)sqlite3_column_text(q, 5), "\r\nCc:"));
	sqlite3_finalize(q);
	/* Refused: pending has no report; a context that is not a slug. */
	assert_int_equal(outbox_queue_mail_tx(f->st, &cfg.mail, f->run1, CTX, "pending", "x",
					      NULL, NULL, 1, &n, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(outbox_queue_mail_tx(f->st, &cfg.mail, f->run1, "a/b", "fail", "x",
					      NULL, NULL, 1, &n, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(outbox_queue_mail_tx(f->st, &cfg.mail, 9999, CTX, "fail", "x",
					      NULL, NULL, 1, &n, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	ctl_config_free(&cfg);
	/* Mail not enabled: nothing is queued, and that is not an error. */
	sfx_mail_config(&cfg, f->dir, f->db, false);
	sfx_sql(f->st, "DELETE FROM email_outbox", NULL, 0);
	assert_int_equal(outbox_queue_mail_tx(f->st, &cfg.mail, f->run1, CTX, "fail", "x",
					      NULL, NULL, 1, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(count(f, "SELECT count(*) FROM email_outbox"), 0);
	ctl_config_free(&cfg);
}

/* ---- a pass: order and cancellation ---------------------------------------- */

/* A client for a Patchwork that refuses every connection: each try fails
 * at once, the same retryable way. */
static struct pg_pw_client *unreachable(void)
{
	struct pg_pw_opts o = PG_PW_OPTS_INIT;
	struct pg_pw_client *c = NULL;
	struct pg_err err = PG_ERR_INIT;

	o.base_url = "http://127.0.0.1:1/api/1.3";
	o.project = "dpdk";
	o.token = "04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a";
	o.timeout_ms = 2000;
	o.connect_timeout_ms = 1000;
	if (pg_pw_client_new(&o, &c, &err) < 0)
		fail_msg("%s", err.msg);
	return c;
}

static int64_t row_int(struct fx *f, const char *col, int64_t id)
{
	char text[200];
	struct pg_err err = PG_ERR_INIT;
	int64_t v = -1;

	snprintf(text, sizeof(text), "SELECT %s FROM check_outbox WHERE id = ?1", col);
	if (store_query_int(f->st, "row", text, STORE_ARGS(STORE_INT(id)), &v, &err) < 0)
		fail_msg("%s", err.msg);
	return v;
}

static bool row_is(struct fx *f, int64_t id, const char *delivery)
{
	char text[200];
	struct pg_err err = PG_ERR_INIT;
	int64_t v = 0;

	snprintf(text, sizeof(text), "SELECT delivery = '%s' FROM check_outbox WHERE id = ?1",
		 delivery);
	if (store_query_int(f->st, "row", text, STORE_ARGS(STORE_INT(id)), &v, &err) < 0)
		fail_msg("%s", err.msg);
	return v == 1;
}

static void test_pass_order(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	struct outbox ob;
	int64_t pend1, fin1, pend2, other;
	unsigned int n;

	add_series(f, false);
	add_pending(f, f->run1, f->patch[2]);
	pend1 = store_last_id(f->st);
	assert_int_equal(outbox_queue_check_tx(f->st, f->run1, CTX, "success", "PASS", NULL,
					       PROFILE_POST_LAST_PATCH, 100, &n, &err), 0);
	fin1 = store_last_id(f->st);
	add_pending(f, f->run2, f->patch[2]);	/* a recheck's, after run 1's final */
	pend2 = store_last_id(f->st);
	/* Another context on the same patch is not held back. */
	sfx_sql(f->st, "INSERT INTO check_outbox (series_id, run_id, patch_id, context, state,"
		" description, delivery, next_try, created_at) VALUES (?1, ?2, ?3, 'other-ctx',"
		" 'pending', 'x', 'queued', 0, 100)",
		STORE_ARGS(STORE_INT(f->series), STORE_INT(f->run2), STORE_INT(f->patch[2])));
	other = store_last_id(f->st);

	memset(&ob, 0, sizeof(ob));
	ob.st = f->st;
	ob.pw = unreachable();
	ob.max_backoff_s = 60;
	ob.rand = 1;
	assert_int_equal(outbox_checks_pass(&ob, 1000, &err), 0);
	/* Run 1's pending check is pointless now; its final is tried. */
	assert_true(row_is(f, pend1, "cancelled"));
	assert_int_equal(ob.stats.checks_cancelled, 1);
	assert_true(row_is(f, fin1, "queued"));
	assert_int_equal(row_int(f, "attempts", fin1), 1);
	assert_true(row_int(f, "next_try", fin1) > 1000);
	assert_int_equal(row_int(f, "response_code IS NULL AND response LIKE 'POST http://"
				 "127.0.0.1:1/api/1.3/patches/13/checks/: %'", fin1), 1);
	/* Run 2's pending check waits behind it, untouched; the other
	 * context goes. */
	assert_true(row_is(f, pend2, "queued"));
	assert_int_equal(row_int(f, "attempts", pend2), 0);
	assert_int_equal(row_int(f, "attempts", other), 1);
	assert_int_equal(ob.stats.checks_retried, 2);
	/* Not due yet: a pass at the same time leaves everything as is. */
	assert_int_equal(outbox_checks_pass(&ob, 1000, &err), 0);
	assert_int_equal(row_int(f, "attempts", fin1), 1);
	assert_int_equal(row_int(f, "attempts", pend2), 0);
	/* Refused at connect: nothing can have been posted, so the next
	 * try posts again at once, no lookup first. */
	assert_int_equal(row_int(f, "maybe_posted", fin1), 0);
	sfx_sql(f->st, "UPDATE check_outbox SET next_try = 0 WHERE id = ?1",
		STORE_ARGS(STORE_INT(fin1)));
	assert_int_equal(outbox_checks_pass(&ob, 1000, &err), 0);
	assert_int_equal(row_int(f, "attempts", fin1), 2);
	assert_int_equal(row_int(f, "maybe_posted", fin1), 0);
	assert_int_equal(row_int(f, "response LIKE 'POST http://127.0.0.1:1/%'", fin1), 1);
	/* A try that may have posted (its answer lost) is looked up first,
	 * and stays unsure while the lookup fails. */
	sfx_sql(f->st, "UPDATE check_outbox SET next_try = 0, maybe_posted = 1 WHERE id = ?1",
		STORE_ARGS(STORE_INT(fin1)));
	assert_int_equal(outbox_checks_pass(&ob, 1000, &err), 0);
	assert_int_equal(row_int(f, "attempts", fin1), 3);
	assert_int_equal(row_int(f, "maybe_posted", fin1), 1);
	assert_int_equal(row_int(f, "response LIKE 'GET http://127.0.0.1:1/api/1.3/patches/13/"
				 "checks/?%'", fin1), 1);
	/* Once the final is settled, run 2's pending check goes. */
	sfx_sql(f->st, "UPDATE check_outbox SET delivery = 'sent', sent_at = 1 WHERE id = ?1",
		STORE_ARGS(STORE_INT(fin1)));
	assert_int_equal(outbox_checks_pass(&ob, 1000, &err), 0);
	assert_int_equal(row_int(f, "attempts", pend2), 1);
	pg_pw_client_free(ob.pw);
}

/* A client of a server that takes connections and never answers (a
 * listening socket nobody accepts on): every request times out after 1 s.
 * *fd gets the socket, to close. */
static struct pg_pw_client *silent(int *fd)
{
	struct pg_pw_opts o = PG_PW_OPTS_INIT;
	struct pg_pw_client *c = NULL;
	struct pg_err err = PG_ERR_INIT;
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	char url[64];

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(*fd >= 0);
	assert_int_equal(bind(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(*fd, 8), 0);
	assert_int_equal(getsockname(*fd, (struct sockaddr *)&a, &alen), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/1.3", (unsigned)ntohs(a.sin_port));
	o.base_url = url;
	o.project = "dpdk";
	o.token = "04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a";
	o.timeout_ms = 1000;
	o.connect_timeout_ms = 1000;
	if (pg_pw_client_new(&o, &c, &err) < 0)
		fail_msg("%s", err.msg);
	return c;
}

/* A POST that timed out may still be making its check at Patchwork: the
 * next try (a lookup first) waits the POST's timeout on top of the
 * backoff; a refused connection (nothing sent) waits the backoff alone. */
static void test_pass_timeout(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	struct outbox ob;
	int64_t row, before;
	unsigned int n;
	int fd;

	add_series(f, false);
	assert_int_equal(outbox_queue_check_tx(f->st, f->run1, CTX, "success", "PASS", NULL,
					       PROFILE_POST_LAST_PATCH, 100, &n, &err), 0);
	row = store_last_id(f->st);
	memset(&ob, 0, sizeof(ob));
	ob.st = f->st;
	ob.pw = silent(&fd);
	ob.max_backoff_s = 2;
	ob.post_timeout_s = 50;
	ob.rand = 1;
	before = time(NULL);
	assert_int_equal(outbox_checks_pass(&ob, 1000, &err), 0);
	assert_true(row_is(f, row, "queued"));
	assert_int_equal(row_int(f, "attempts", row), 1);
	assert_int_equal(row_int(f, "response LIKE '%timed out%'", row), 1);
	assert_true(row_int(f, "next_try", row) >= before + 1 + 50 + 1);
	pg_pw_client_free(ob.pw);
	close(fd);
	/* Refused: the backoff (at most 2 s) alone. */
	sfx_sql(f->st, "UPDATE check_outbox SET next_try = 0", NULL, 0);
	ob.pw = unreachable();
	before = time(NULL);
	assert_int_equal(outbox_checks_pass(&ob, 1000, &err), 0);
	assert_int_equal(row_int(f, "attempts", row), 2);
	assert_true(row_int(f, "next_try", row) <= time(NULL) + 2);
	pg_pw_client_free(ob.pw);
}

/* A patch Patchwork's id is not known for: looked up, and the row waits
 * with the reason, no try counted. */
static void test_pass_lookup(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	struct outbox ob;
	int64_t row;

	add_series(f, true);
	add_pending(f, f->run1, f->patch[2]);
	row = store_last_id(f->st);
	sfx_sql(f->st, "UPDATE check_outbox SET created_at = ?1",
		STORE_ARGS(STORE_INT(time(NULL))));
	memset(&ob, 0, sizeof(ob));
	ob.st = f->st;
	ob.pw = unreachable();
	ob.max_backoff_s = 5;
	assert_int_equal(outbox_checks_pass(&ob, 1000, &err), 0);
	assert_true(row_is(f, row, "queued"));
	assert_int_equal(row_int(f, "attempts", row), 0);
	assert_int_equal(row_int(f, "response LIKE 'waiting: looking up patch <p3@example.com>"
				 " on Patchwork: %'", row), 1);
	assert_int_equal(ob.stats.checks_waiting, 1);
	/* After two days it is given up. */
	sfx_sql(f->st, "UPDATE check_outbox SET created_at = 0, next_try = 0", NULL, 0);
	assert_int_equal(outbox_checks_pass(&ob, 1000, &err), 0);
	assert_true(row_is(f, row, "failed"));
	assert_int_equal(row_int(f, "response LIKE 'patch <p3@example.com> was not found on "
				 "Patchwork in 2 days'", row), 1);
	pg_pw_client_free(ob.pw);
}

/* ---- administration ------------------------------------------------------ */

static void test_list_retry(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	cJSON *arr = NULL;
	int64_t row;

	add_series(f, false);
	add_pending(f, f->run1, f->patch[2]);
	row = store_last_id(f->st);
	sfx_sql(f->st, "UPDATE check_outbox SET delivery = 'failed', response_code = 403,"
		" response = '{\"detail\":\"no\"}', next_try = 5, attempts = 1", NULL, 0);
	assert_int_equal(outbox_list(f->st, false, &arr, &err), 0);
	assert_int_equal(cJSON_GetArraySize(arr), 1);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0),
								     "delivery")), "failed");
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0),
								  "pw_patch")), 13);
	cJSON_Delete(arr);
	assert_int_equal(outbox_retry(f->st, "check", row, 777, &err), 0);
	assert_true(row_is(f, row, "queued"));
	assert_int_equal(row_int(f, "next_try", row), 777);
	assert_int_equal(row_int(f, "attempts", row), 1);	/* kept */
	sfx_sql(f->st, "UPDATE check_outbox SET delivery = 'sent', sent_at = 1", NULL, 0);
	assert_int_equal(outbox_retry(f->st, "check", row, 777, &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_int_equal(outbox_retry(f->st, "check", row + 1, 777, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_int_equal(outbox_retry(f->st, "mail", 1, 777, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_int_equal(outbox_retry(f->st, "sms", 1, 777, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	/* Sent rows are listed with --all only. */
	assert_int_equal(outbox_list(f->st, false, &arr, &err), 0);
	assert_int_equal(cJSON_GetArraySize(arr), 0);
	cJSON_Delete(arr);
	assert_int_equal(outbox_list(f->st, true, &arr, &err), 0);
	assert_int_equal(cJSON_GetArraySize(arr), 1);
	cJSON_Delete(arr);
}

static int group_setup(void **state)
{
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	return pg_http_global_init(&err);
}

static int group_teardown(void **state)
{
	(void)state;
	pg_http_global_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_delay),
		cmocka_unit_test(test_claim_next),
		cmocka_unit_test(test_check_outcome),
		cmocka_unit_test(test_check_may_exist),
		cmocka_unit_test(test_strip_cc),
		cmocka_unit_test(test_mail_refused),
		cmocka_unit_test_setup_teardown(test_queue_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settle_cancelled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_mail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pass_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pass_lookup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pass_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_retry, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
