/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/report_mail*.c: golden messages of the reports
 * in tests/mail_report/ (NAME.in, JSON -> NAME.ok, the exact bytes with
 * CRLF line ends, or "error: ..." for a refused input), each message read
 * back with the project's own mail parser, and the pieces: subject,
 * Message-ID, patch URL, mailboxes, recipients, encoded words, folding,
 * quoted-printable, bounds.
 *
 * PG_UPDATE_GOLDEN=1 rewrites the .ok files instead of comparing; read
 * every changed one against its .in before keeping it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "err.h"
#include "mail.h"
#include "report_mail.h"
#include "sanitize.h"

#include "goldenfx.h"

#define FIXTURES "tests/mail_report"

/* Every line ends in CRLF; header lines are at most 78 characters unless
 * they hold one word only (after the field name); body lines at most 998. */
static void check_lines(const char *msg, size_t len)
{
	bool in_header = true;
	size_t start = 0;

	for (size_t i = 0; i < len; i++) {
		size_t n;

		if (msg[i] == '\r') {
			assert_true(i + 1 < len && msg[i + 1] == '\n');
			continue;
		}
		if (msg[i] != '\n')
			continue;
		assert_true(i > 0 && msg[i - 1] == '\r');
		n = i - 1 - start;
		if (n == 0)
			in_header = false;
		if (in_header && n > 78) {
			/* one token: no space after the first one (the fold point) */
			const char *sp = memchr(msg + start + 1, ' ', n - 1);

			if (sp && memchr(sp + 1, ' ', (size_t)(msg + i - 1 - sp - 1)))
				fail_msg("header line over 78 with a fold point: %.*s", (int)n,
					 msg + start);
		}
		assert_true(n <= 998);
		start = i + 1;
	}
	assert_int_equal(start, len);	/* ends with CRLF */
}

/* Read the message back with patches/mail.c and compare with the input. */
static void check_parsed(const struct report_mail *r, const char *msg, size_t len)
{
	struct pg_buf subj = PG_BUF_INIT(1 << 16);
	struct pg_err err = PG_ERR_INIT;
	struct pg_mail m;
	char head[256];

	assert_int_equal(report_mail_subject(r->subject, r->status, r->patch_id, &subj, &err), 0);
	if (pg_mail_parse(&m, msg, len, &err) < 0)
		fail_msg("the message does not parse: %s", err.msg);
	assert_string_equal(m.subject, pg_buf_str(&subj));
	assert_string_equal(m.message_id, r->msgid);
	if (report_mail_msgid_ok(r->patch_msgid)) {
		assert_string_equal(m.in_reply_to, r->patch_msgid);
		assert_int_equal(m.nreferences, 1);
		assert_string_equal(m.references[0], r->patch_msgid);
	} else {
		/* Not one we can write back: the report goes unthreaded. */
		assert_true(!m.in_reply_to || !*m.in_reply_to);
		assert_int_equal(m.nreferences, 0);
	}
	assert_string_equal(m.from_addr, r->from.addr);
	if (r->from.name && *r->from.name)
		assert_string_equal(m.from_name, r->from.name);
	/* The parser gives the body with LF line ends. */
	assert_memory_equal(m.body, "Test-Label: ", 12);
	snprintf(head, sizeof(head), "\nTest-Status: %s\n", report_status_name(r->status));
	assert_non_null(strstr(m.body, head));
	snprintf(head, sizeof(head), "\n_%s_\n", r->description);
	assert_non_null(strstr(m.body, head));
	if (r->patch_url && *r->patch_url) {
		snprintf(head, sizeof(head), "\n%s\n\n_", r->patch_url);
		assert_non_null(strstr(m.body, head));
	}
	pg_mail_free(&m);
	pg_buf_release(&subj);
}

/* The message, or the error; *(int *)errors counts the errors. */
static char *golden_text(const char *json, size_t len, void *errors)
{
	struct pg_buf out = PG_BUF_INIT(REPORT_MAIL_MAX);
	struct pg_err err = PG_ERR_INIT;
	struct report_mail_input in;

	if (report_mail_input_parse(&in, json, len, &err) < 0 ||
	    report_mail_format(&in.r, &out, &err) < 0) {
		pg_buf_reset(&out);
		assert_int_equal(pg_buf_printf(&out, "error: %s\nerror_code: %s\n", err.msg,
					       pg_errcode_name(err.code)), 0);
		(*(int *)errors)++;
	} else {
		check_lines(out.data, out.len);
		check_parsed(&in.r, out.data, out.len);
	}
	report_mail_input_free(&in);
	assert_int_equal(pg_buf_grow(&out, 0), 0);
	return pg_buf_detach(&out, NULL);
}

static void test_golden(void **state)
{
	int errors = 0;

	(void)state;
	assert_true(gold_dir(FIXTURES, ".in", golden_text, &errors) >= 15);
	assert_true(errors >= 5);
}

/* ---- pieces ------------------------------------------------------------- */

static void subject_is(const char *in, enum report_status st, int64_t id, const char *want)
{
	struct pg_buf b = PG_BUF_INIT(1 << 16);
	struct pg_err err = PG_ERR_INIT;

	assert_int_equal(report_mail_subject(in, st, id, &b, &err), 0);
	assert_string_equal(pg_buf_str(&b), want);
	pg_buf_release(&b);
}

static void test_subject(void **state)
{
	struct pg_buf b = PG_BUF_INIT(1 << 16);
	struct pg_err err = PG_ERR_INIT;
	char *big;

	(void)state;
	subject_is("[dpdk-dev] [PATCH v3 2/5] net/ice: fix foo", REPORT_SUCCESS, 139808,
		   "|SUCCESS| pw139808 [PATCH v3 2/5] net/ice: fix foo");
	/* Only the first tag goes, wherever it is (sed without g). */
	subject_is("Re: [dpdk-dev] x [dpdk-dev] y", REPORT_FAILURE, 1,
		   "|FAILURE| pw1 Re: x [dpdk-dev] y");
	/* echo $title: white space runs collapse first, then sed matches. */
	subject_is(" [dpdk-dev]\t\t[PATCH]  a\n b ", REPORT_WARNING, 2,
		   "|WARNING| pw2 [PATCH] a b");
	subject_is("[dpdk-dev][PATCH] x", REPORT_WARNING, 2, "|WARNING| pw2 [dpdk-dev][PATCH] x");
	subject_is("[DPDK-DEV] x", REPORT_WARNING, 2, "|WARNING| pw2 [DPDK-DEV] x");
	subject_is("[PATCH] x", REPORT_FAILURE, 0, "|FAILURE| pw? [PATCH] x");
	subject_is("", REPORT_FAILURE, -3, "|FAILURE| pw?");
	subject_is(NULL, REPORT_SUCCESS, 9, "|SUCCESS| pw9");
	/* Other controls are shown, not obeyed nor made spaces; C1, bidi
	 * and invalid UTF-8 too (lib/sanitize.h). */
	subject_is("a\x01" "b\x7f" "c", REPORT_SUCCESS, 9, "|SUCCESS| pw9 a\\x01b\\x7fc");
	subject_is("\x1b[2J\x07x \xc2\x9b" "1m \x9b \xe2\x80\xae" "fdp.exe\xe2\x81\xa6 \xc0\xaf",
		   REPORT_FAILURE, 3, "|FAILURE| pw3 \\x1b[2J\\x07x \\u009b1m \xef\xbf\xbd "
		   "\\u202efdp.exe\\u2066 \xef\xbf\xbd\xef\xbf\xbd");

	big = malloc(REPORT_MAIL_SUBJECT_MAX + 2);
	assert_non_null(big);
	memset(big, 'x', REPORT_MAIL_SUBJECT_MAX + 1);
	big[REPORT_MAIL_SUBJECT_MAX + 1] = '\0';
	assert_int_equal(report_mail_subject(big, REPORT_SUCCESS, 1, &b, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	big[REPORT_MAIL_SUBJECT_MAX] = '\0';
	assert_int_equal(report_mail_subject(big, REPORT_SUCCESS, 1, &b, &err), 0);
	free(big);
	pg_buf_release(&b);
}

static void test_status(void **state)
{
	enum report_status s = REPORT_SUCCESS;
	enum report_cc_author c = REPORT_CC_AUTHOR_NEVER;

	(void)state;
	assert_int_equal(report_status_from_check("fail", &s), 0);
	assert_int_equal(s, REPORT_FAILURE);
	assert_string_equal(report_status_name(s), "FAILURE");
	assert_int_equal(report_status_from_check("warning", &s), 0);
	assert_string_equal(report_status_name(s), "WARNING");
	assert_int_equal(report_status_from_check("success", &s), 0);
	assert_string_equal(report_status_name(s), "SUCCESS");
	assert_int_equal(report_status_from_check("pending", &s), -1);
	assert_int_equal(report_status_from_check("FAILURE", &s), -1);
	assert_int_equal(report_status_from_check(NULL, &s), -1);
	assert_int_equal(report_cc_author_parse("failure", &c), 0);
	assert_int_equal(c, REPORT_CC_AUTHOR_FAILURE);
	assert_int_equal(report_cc_author_parse("always", &c), 0);
	assert_string_equal(report_cc_author_name(c), "always");
	assert_int_equal(report_cc_author_parse("never", &c), 0);
	assert_string_equal(report_cc_author_name(c), "never");
	assert_int_equal(report_cc_author_parse("fail", &c), -1);
}

static void test_msgid(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	char out[600], small[20];

	(void)state;
	assert_int_equal(report_mail_msgid(42, "perfgate-intel-Performance", "lab.example.org",
					   out, sizeof(out), &err),
			 (int)strlen("perfgate.r42.perfgate-intel-Performance@lab.example.org"));
	assert_string_equal(out, "perfgate.r42.perfgate-intel-Performance@lab.example.org");
	/* the same inputs, the same id */
	assert_true(report_mail_msgid(42, "perfgate-intel-Performance", "lab.example.org",
				      small, sizeof(small), &err) < 0);
	assert_string_equal(small, "");
	assert_int_equal(report_mail_msgid(0, "a", "b.c", out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_msgid(1, "a b", "b.c", out, sizeof(out), &err), -1);
	assert_non_null(strstr(err.msg, "slug"));
	assert_int_equal(report_mail_msgid(1, "a.b", "b.c", out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_msgid(1, "", "b.c", out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_msgid(1, "a", "b..c", out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_msgid(1, "a", ".c", out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_msgid(1, "a", "c.", out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_msgid(1, "a", "x_y.org", out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_msgid(1, "a", NULL, out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_msgid(INT64_MAX, "a", "localhost", out, sizeof(out), &err),
			 (int)strlen("perfgate.r9223372036854775807.a@localhost"));
	assert_string_equal(report_mail_addr_domain("a@b.org"), "b.org");
	assert_string_equal(report_mail_addr_domain("\"x@y\"@b.org"), "b.org");
	assert_null(report_mail_addr_domain("a@"));
	assert_null(report_mail_addr_domain("ab"));
	assert_null(report_mail_addr_domain(NULL));
}

static void test_patch_url(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	char out[64], tiny[10];

	(void)state;
	assert_int_equal(report_mail_patch_url("http://patches.dpdk.org/patch/{id}/", 139808, out,
					       sizeof(out), &err), 37);
	assert_string_equal(out, "http://patches.dpdk.org/patch/139808/");
	assert_int_equal(report_mail_patch_url("x/{id}/{id}", 7, out, sizeof(out), &err), 5);
	assert_string_equal(out, "x/7/7");
	assert_int_equal(report_mail_patch_url("http://x/", 7, out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_patch_url("http://x/{ID}", 7, out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_patch_url("http://x/{id", 7, out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_patch_url("http://x /{id}", 7, out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_patch_url("http://x/{id}", 0, out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_patch_url(NULL, 1, out, sizeof(out), &err), -1);
	assert_int_equal(report_mail_patch_url("http://x/{id}", 123456, tiny, sizeof(tiny), &err),
			 -1);
	assert_string_equal(tiny, "");
}

static void mailbox_is(const char *in, const char *name, const char *addr)
{
	struct pg_err err = PG_ERR_INIT;
	char *n = NULL, *a = NULL;

	if (report_mail_parse_mailbox(in, &n, &a, &err) < 0)
		fail_msg("'%s': %s", in, err.msg);
	if (name)
		assert_string_equal(n, name);
	else
		assert_null(n);
	assert_string_equal(a, addr);
	free(n);
	free(a);
}

static void mailbox_bad(const char *in)
{
	struct pg_err err = PG_ERR_INIT;
	char *n = (char *)1, *a = (char *)1;

	assert_int_equal(report_mail_parse_mailbox(in, &n, &a, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_null(n);
	assert_null(a);
}

static void test_mailbox(void **state)
{
	(void)state;
	mailbox_is("test-report@dpdk.org", NULL, "test-report@dpdk.org");
	mailbox_is("  a.b+c@x-y.example.org  ", NULL, "a.b+c@x-y.example.org");
	mailbox_is("perfgate <perfgate@lab.example.org>", "perfgate", "perfgate@lab.example.org");
	mailbox_is("Morten Brørup <mb@smartsharesystems.com>", "Morten Brørup",
		   "mb@smartsharesystems.com");
	mailbox_is("\"Doe, \\\"J\\\"\" <j@d.org>", "Doe, \"J\"", "j@d.org");
	mailbox_is("<j@d.org>", NULL, "j@d.org");
	mailbox_is("\"\" <j@d.org>", NULL, "j@d.org");
	mailbox_is("x@[127.0.0.1]", NULL, "x@[127.0.0.1]");
	mailbox_bad("perfgate");
	mailbox_bad("perfgate <perfgate>");
	mailbox_bad("a <b@c.org");
	mailbox_bad("a <b@c.org> x");
	mailbox_bad("a b@c.org");
	mailbox_bad(".a@c.org");
	mailbox_bad("a..b@c.org");
	mailbox_bad("a@c..org");
	mailbox_bad("a@-");
	mailbox_bad("a@c.org\r\nBcc: x@y.org");
	mailbox_bad("");
	mailbox_bad(NULL);
	assert_true(report_mail_addr_ok("a@b"));
	assert_false(report_mail_addr_ok("a@b_c"));
	assert_false(report_mail_addr_ok("a\"b@c"));
	assert_false(report_mail_addr_ok("a(b)@c"));
	assert_false(report_mail_addr_ok("é@c.org"));
}

static void base_report(struct report_mail *r)
{
	memset(r, 0, sizeof(*r));
	r->from.addr = "perfgate@lab.example.org";
	r->to.addr = "test-report@dpdk.org";
	r->author.name = "A. Author";
	r->author.addr = "author@example.org";
	r->patch_msgid = "p@example.org";
	r->patch_id = 5;
	r->patch_url = "http://patches.dpdk.org/patch/5/";
	r->subject = "[PATCH] x";
	r->label = "perfgate-demo-Performance";
	r->status = REPORT_FAILURE;
	r->description = "Performance Testing FAIL";
	r->msgid = "m@lab.example.org";
	r->date_ms = 1796013000000LL;
}

static void test_recipients(void **state)
{
	static const struct { enum report_cc_author policy; enum report_status st; bool cc; } m[] = {
		{ REPORT_CC_AUTHOR_FAILURE, REPORT_SUCCESS, false },
		{ REPORT_CC_AUTHOR_FAILURE, REPORT_WARNING, true },
		{ REPORT_CC_AUTHOR_FAILURE, REPORT_FAILURE, true },
		{ REPORT_CC_AUTHOR_NEVER, REPORT_FAILURE, false },
		{ REPORT_CC_AUTHOR_NEVER, REPORT_SUCCESS, false },
		{ REPORT_CC_AUTHOR_ALWAYS, REPORT_SUCCESS, true },
		{ REPORT_CC_AUTHOR_ALWAYS, REPORT_WARNING, true },
	};
	struct report_mail_addr cc[3] = {
		{ NULL, "x@lab.example.org" }, { "Dup", "X@LAB.example.org" },
		{ NULL, "Test-Report@dpdk.org" },
	};
	struct pg_buf out = PG_BUF_INIT(1 << 20);
	struct pg_err err = PG_ERR_INIT;
	struct report_mail r;
	const char *rcpt[8];

	(void)state;
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		base_report(&r);
		r.cc_author = m[i].policy;
		r.status = m[i].st;
		assert_int_equal(report_mail_cc_author(&r), m[i].cc);
		assert_int_equal(report_mail_rcpts(&r, rcpt, 8), m[i].cc ? 2 : 1);
		assert_string_equal(rcpt[0], "test-report@dpdk.org");
		if (m[i].cc)
			assert_string_equal(rcpt[1], "author@example.org");
		pg_buf_reset(&out);
		assert_int_equal(report_mail_format(&r, &out, &err), 0);
		assert_int_equal(strstr(out.data, "\r\nCc: A. Author <author@example.org>\r\n") ||
				 strstr(out.data, "\r\nCc: \"A. Author\" <author@example.org>\r\n"),
				 m[i].cc);
		assert_int_equal(strstr(out.data, "\r\nCc:") != NULL, m[i].cc);
	}
	/* No author: nobody to copy. */
	base_report(&r);
	r.author.addr = NULL;
	assert_false(report_mail_cc_author(&r));
	r.author.addr = "";
	assert_false(report_mail_cc_author(&r));
	/* Duplicates (without case) go once; the order is To, Cc, author. */
	base_report(&r);
	r.cc = cc;
	r.n_cc = 3;
	assert_int_equal(report_mail_rcpts(&r, rcpt, 8), 3);
	assert_string_equal(rcpt[0], "test-report@dpdk.org");
	assert_string_equal(rcpt[1], "x@lab.example.org");
	assert_string_equal(rcpt[2], "author@example.org");
	assert_int_equal(report_mail_rcpts(&r, rcpt, 1), 3);	/* counted, not stored */
	pg_buf_reset(&out);
	assert_int_equal(report_mail_format(&r, &out, &err), 0);
	assert_non_null(strstr(out.data, "\r\nCc: x@lab.example.org, \"A. Author\" "
				  "<author@example.org>\r\n"));
	/* The author already in the Cc list is not added again. */
	cc[1].addr = "AUTHOR@example.org";
	assert_false(report_mail_cc_author(&r));
	assert_int_equal(report_mail_rcpts(&r, rcpt, 8), 3);
	pg_buf_release(&out);
}

/* Decode one Q encoded word's text into out; returns its length. */
static size_t q_decode(const char *s, size_t n, char *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '_') {
			out[k++] = ' ';
		} else if (s[i] == '=' && i + 2 < n) {
			unsigned int v;

			assert_int_equal(sscanf(s + i + 1, "%2x", &v), 1);
			out[k++] = (char)v;
			i += 2;
		} else {
			out[k++] = s[i];
		}
	}
	return k;
}

/* Each encoded word is at most 75 characters and holds whole UTF-8
 * characters only (it decodes to valid UTF-8 on its own). */
static void check_encoded_words(const char *msg)
{
	const char *p = msg;
	int words = 0;

	while ((p = strstr(p, "=?UTF-8?Q?"))) {
		const char *e = strstr(p + 10, "?=");
		char dec[128];
		size_t n;

		assert_non_null(e);
		assert_true(e + 2 - p <= 75);
		n = q_decode(p + 10, (size_t)(e - p - 10), dec);
		for (size_t i = 0; i < n;) {
			unsigned char c = (unsigned char)dec[i];
			size_t cl = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;

			assert_true(c < 0x80 || c >= 0xc2);
			assert_true(i + cl <= n);
			for (size_t j = 1; j < cl; j++)
				assert_int_equal((unsigned char)dec[i + j] & 0xc0, 0x80);
			i += cl;
		}
		words++;
		p = e + 2;
	}
	assert_true(words > 0);
}

static void test_encoded_words(void **state)
{
	struct pg_buf out = PG_BUF_INIT(1 << 20), subj = PG_BUF_INIT(1 << 16);
	struct pg_err err = PG_ERR_INIT;
	struct report_mail r;
	struct pg_mail m;
	char long_subject[1600];
	size_t k = 0;

	(void)state;
	/* 3- and 4-byte characters in runs long enough to need many words. */
	k += (size_t)snprintf(long_subject + k, sizeof(long_subject) - k, "[PATCH] ");
	for (int i = 0; i < 40; i++)
		k += (size_t)snprintf(long_subject + k, sizeof(long_subject) - k, "%s",
				      i % 3 == 0 ? "日本語 " : i % 3 == 1 ? "😀x " : "ascii ");
	base_report(&r);
	r.subject = long_subject;
	r.author.name = "Ñ日😀 \"quoted\", (comment) ø";
	r.from.name = "=?UTF-8?Q?looks_encoded?=";
	r.status = REPORT_WARNING;
	assert_int_equal(report_mail_format(&r, &out, &err), 0);
	check_lines(out.data, out.len);
	check_encoded_words(out.data);
	assert_int_equal(pg_mail_parse(&m, out.data, out.len, &err), 0);
	assert_int_equal(report_mail_subject(r.subject, r.status, r.patch_id, &subj, &err), 0);
	assert_string_equal(m.subject, pg_buf_str(&subj));
	assert_string_equal(m.from_name, r.from.name);
	pg_mail_free(&m);
	/* The author's name in Cc: decoded back by the parser as a From. */
	pg_buf_reset(&out);
	r.from = r.author;
	assert_int_equal(report_mail_format(&r, &out, &err), 0);
	assert_int_equal(pg_mail_parse(&m, out.data, out.len, &err), 0);
	assert_string_equal(m.from_name, "Ñ日😀 \"quoted\", (comment) ø");
	pg_mail_free(&m);
	/* A 1500-byte ASCII word cannot stay whole on a line: it is encoded
	 * and still decodes to itself; a 200-byte one stays as it is. */
	memset(long_subject, 'w', 1500);
	long_subject[1500] = '\0';
	pg_buf_reset(&out);
	pg_buf_reset(&subj);
	r.subject = long_subject;
	assert_int_equal(report_mail_format(&r, &out, &err), 0);
	check_lines(out.data, out.len);
	check_encoded_words(out.data);
	assert_int_equal(pg_mail_parse(&m, out.data, out.len, &err), 0);
	assert_int_equal(report_mail_subject(r.subject, r.status, r.patch_id, &subj, &err), 0);
	assert_string_equal(m.subject, pg_buf_str(&subj));
	pg_mail_free(&m);
	long_subject[200] = '\0';
	pg_buf_reset(&out);
	assert_int_equal(report_mail_format(&r, &out, &err), 0);
	assert_non_null(strstr(out.data, "\r\n ") && strstr(out.data, long_subject));
	pg_buf_release(&out);
	pg_buf_release(&subj);
}

static void test_body_encodings(void **state)
{
	struct pg_buf out = PG_BUF_INIT(REPORT_MAIL_MAX);
	struct pg_err err = PG_ERR_INIT;
	struct report_mail r;
	struct pg_mail m;
	char *table;
	size_t n = 5000;

	(void)state;
	base_report(&r);
	r.table = "plain ASCII\n";
	assert_int_equal(report_mail_format(&r, &out, &err), 0);
	assert_non_null(strstr(out.data, "\r\nContent-Transfer-Encoding: 7bit\r\n\r\n"
				  "Test-Label: perfgate-demo-Performance\r\n"
				  "Test-Status: FAILURE\r\n"
				  "http://patches.dpdk.org/patch/5/\r\n\r\n"
				  "_Performance Testing FAIL_\r\n\r\n"
				  "plain ASCII\r\n"));
	assert_int_equal(out.data[out.len - 1], '\n');
	assert_int_equal(out.data[out.len - 3], 'I');	/* one line end, no blank tail */

	pg_buf_reset(&out);
	r.reproduce = "café\n";
	assert_int_equal(report_mail_format(&r, &out, &err), 0);
	assert_non_null(strstr(out.data, "\r\nContent-Transfer-Encoding: 8bit\r\n"));
	assert_non_null(strstr(out.data, "plain ASCII\r\n\r\ncafé\r\n"));

	/* A 5000-byte line: quoted-printable, and it decodes back exactly. */
	table = malloc(n + 64);
	assert_non_null(table);
	for (size_t i = 0; i < n; i++)
		table[i] = (char)(' ' + i % 95);
	memcpy(table + n, " \t\nnext =line= ü \n", 20);
	pg_buf_reset(&out);
	r.table = table;
	r.reproduce = NULL;
	assert_int_equal(report_mail_format(&r, &out, &err), 0);
	assert_non_null(strstr(out.data, "\r\nContent-Transfer-Encoding: quoted-printable\r\n"));
	check_lines(out.data, out.len);
	for (const char *p = strstr(out.data, "\r\n\r\n") + 4; *p;) {
		const char *e = strstr(p, "\r\n");

		assert_non_null(e);
		assert_true(e - p <= 76);
		p = e + 2;
	}
	assert_int_equal(pg_mail_parse(&m, out.data, out.len, &err), 0);
	{
		const char *t = strstr(m.body, "\n\n_Performance Testing FAIL_\n\n");

		assert_non_null(t);
		t += strlen("\n\n_Performance Testing FAIL_\n\n");
		assert_int_equal(strlen(t), n + strlen(table + n));
		assert_memory_equal(t, table, n);
		assert_string_equal(t + n, " \t\nnext =line= ü \n");
	}
	pg_mail_free(&m);
	free(table);
	pg_buf_release(&out);
}

static void format_fails(const struct report_mail *r, enum pg_errcode code, const char *msg)
{
	struct pg_buf out = PG_BUF_INIT(1 << 20);
	struct pg_err err = PG_ERR_INIT;

	assert_int_equal(report_mail_format(r, &out, &err), -1);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg))
		fail_msg("error '%s' does not say '%s'", err.msg, msg);
	pg_buf_release(&out);
}

static void test_invalid(void **state)
{
	struct report_mail_addr cc[REPORT_MAIL_CC_MAX + 1];
	struct pg_buf small = PG_BUF_INIT(100);
	struct pg_err err = PG_ERR_INIT;
	struct report_mail r;

	(void)state;
	base_report(&r);
	r.from.addr = NULL;
	format_fails(&r, PG_EINVAL, "from: no address");
	base_report(&r);
	r.to.addr = "x";
	format_fails(&r, PG_EINVAL, "to: 'x' is not an address");
	base_report(&r);
	r.author.addr = "a@b@";
	format_fails(&r, PG_EINVAL, "author:");
	base_report(&r);
	r.msgid = "a\r\nBcc: x@y";
	format_fails(&r, PG_EINVAL, "msgid:");
	base_report(&r);
	r.description = "";
	format_fails(&r, PG_EINVAL, "description:");
	base_report(&r);
	r.description = "tab\there";
	format_fails(&r, PG_EINVAL, "description:");
	base_report(&r);
	r.label = NULL;
	format_fails(&r, PG_EINVAL, "label:");
	base_report(&r);
	r.label = "a:b";
	format_fails(&r, PG_EINVAL, "label: 'a:b'");
	base_report(&r);
	r.patch_url = "http://x/ y";
	format_fails(&r, PG_EINVAL, "patch_url:");
	base_report(&r);
	r.status = (enum report_status)7;
	format_fails(&r, PG_EINVAL, "status:");
	base_report(&r);
	r.date_ms = INT64_MAX;
	format_fails(&r, PG_EINVAL, "date:");
	base_report(&r);
	for (size_t i = 0; i <= REPORT_MAIL_CC_MAX; i++) {
		cc[i].name = NULL;
		cc[i].addr = "c@example.org";
	}
	r.cc = cc;
	r.n_cc = REPORT_MAIL_CC_MAX + 1;
	format_fails(&r, PG_EINVAL, "cc:");
	r.n_cc = 1;
	cc[0].addr = "bad";
	format_fails(&r, PG_EINVAL, "cc[0]:");
	/* A buffer too small: PG_ETOOBIG, not a crash or a cut message. */
	base_report(&r);
	assert_int_equal(report_mail_format(&r, &small, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	format_fails(NULL, PG_EINVAL, "no report");
	pg_buf_release(&small);
}

/* The same input gives the same bytes (a resend is the same mail). */
/* A patch whose mail is hostile still gets its report, and the report
 * carries none of its controls: every byte is printable ASCII, CR LF or
 * (in the 8bit body) valid UTF-8 without C1 or bidi characters. */
static void test_hostile(void **state)
{
	static const char *const ids[] = {
		"evil\x1b[2J\x07@example.org", "a b@c", "<x@y>", "\xc3\xa9@example.org", NULL,
	};
	struct pg_buf out = PG_BUF_INIT(1 << 20);
	struct pg_err err = PG_ERR_INIT;
	struct report_mail r;

	(void)state;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		const char *body;

		base_report(&r);
		r.patch_msgid = ids[i];
		r.subject = "[PATCH] \x1b]0;owned\x07 \xc2\x9b" "2J \x9b \xe2\x80\xae" "gpj.exe";
		r.author.name = "Eve \xe2\x81\xa6\x1b[31m\xc2\x85";
		r.table = "key\x1b[2J \xe2\x80\xae\tok\r\nnext \x9b\n";
		pg_buf_reset(&out);
		if (report_mail_format(&r, &out, &err) < 0)
			fail_msg("patch_msgid %zu: %s", i, err.msg);
		check_lines(out.data, out.len);
		check_parsed(&r, out.data, out.len);
		assert_null(strstr(out.data, "In-Reply-To:"));
		assert_null(strstr(out.data, "References:"));
		body = strstr(out.data, "\r\n\r\n");
		assert_non_null(body);
		/* Headers: ASCII only, the escapes inside encoded words. */
		for (const char *p = out.data; p < body; p++)
			if (!((*p >= ' ' && *p <= '~') || *p == '\r' || *p == '\n'))
				fail_msg("raw byte 0x%02x in a header", (unsigned char)*p);
		assert_true(pg_sanitize_is_clean(body, out.len - (size_t)(body - out.data),
						 PG_SAN_BLOCK));
		assert_non_null(strstr(body, "key\\x1b[2J \\u202e\tok\r\nnext \xef\xbf\xbd\r\n"));
		assert_non_null(strstr(out.data, "Subject: |FAILURE| pw5 [PATCH] \\x1b]0;owned\\x07"));
	}
	pg_buf_release(&out);
}

/* An alert: "[perfgate] " and its subject, made safe; no head lines a
 * bot could take for a check; no Cc of an author; threading left out. */
static void test_alert(void **state)
{
	struct pg_buf out = PG_BUF_INIT(1 << 20);
	struct pg_err err = PG_ERR_INIT;
	struct report_mail r;
	static char unfolded[1 << 16];
	const char *body;

	(void)state;
	base_report(&r);
	r.alert = true;
	r.cc_author = REPORT_CC_AUTHOR_NEVER;
	r.patch_msgid = NULL;
	r.patch_url = NULL;
	r.subject = "main-branch regression: dpdk/main k -8.1% at 1c0a3e7b9d2f (mempool:\x1b[31m red)";
	r.description = "Performance regression on a main branch";
	r.table = "Commit: 1c0a3e7b9d2f\n";
	assert_int_equal(report_mail_format(&r, &out, &err), 0);
	check_lines(out.data, out.len);
	/* The header unfolded. */
	for (size_t i = 0, o = 0; i <= out.len; i++)
		if (!(i + 2 < out.len && out.data[i] == '\r' && out.data[i + 1] == '\n' &&
		      out.data[i + 2] == ' '))
			unfolded[o++] = out.data[i];
		else
			i++;
	assert_non_null(strstr(unfolded, "Subject: [perfgate] main-branch regression: dpdk/main k "
			       "-8.1% at 1c0a3e7b9d2f (mempool:\\x1b[31m red)\r\n"));
	assert_null(strstr(out.data, "Cc:"));
	assert_null(strstr(out.data, "In-Reply-To:"));
	body = strstr(out.data, "\r\n\r\n");
	assert_non_null(body);
	assert_int_equal(strncmp(body, "\r\n\r\n_Performance regression on a main branch_\r\n"
				 "\r\nCommit: 1c0a3e7b9d2f\r\n", 71), 0);
	assert_null(strstr(out.data, "Test-Label"));
	assert_null(strstr(out.data, "Test-Status"));
	/* An alert needs a subject of its own. */
	r.subject = "";
	pg_buf_reset(&out);
	assert_int_equal(report_mail_format(&r, &out, &err), -1);
	assert_non_null(strstr(err.msg, "subject"));
	pg_buf_release(&out);
}

static void test_deterministic(void **state)
{
	struct pg_buf a = PG_BUF_INIT(1 << 20), b = PG_BUF_INIT(1 << 20);
	struct pg_err err = PG_ERR_INIT;
	struct report_mail r;

	(void)state;
	base_report(&r);
	r.table = "t\n";
	assert_int_equal(report_mail_format(&r, &a, &err), 0);
	assert_int_equal(report_mail_format(&r, &b, &err), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	assert_non_null(strstr(a.data, "\r\nDate: Mon, 30 Nov 2026 04:30:00 +0000\r\n"));
	pg_buf_release(&a);
	pg_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_subject),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_msgid),
		cmocka_unit_test(test_patch_url),
		cmocka_unit_test(test_mailbox),
		cmocka_unit_test(test_recipients),
		cmocka_unit_test(test_encoded_words),
		cmocka_unit_test(test_body_encodings),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_alert),
		cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
