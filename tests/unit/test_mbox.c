/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for patches/mbox.c: git mailsplit's separator test, the
 * real mboxes in tests/mail/ (git format-patch --stdout, --pretty=mboxrd,
 * a public-inbox mboxrd), unescaping, bare messages, CRLF, the callback
 * contract and a large input.
 */
#include <errno.h>
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
#include "mbox.h"

#define FIXTURES "tests/mail"
#define MAX_MSGS 16

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char chunk[65536];
	size_t n;

	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(pg_buf_add(&b, chunk, n), 0);
	fclose(f);
	assert_int_equal(pg_buf_grow(&b, 0), 0);
	return pg_buf_detach(&b, len);
}

/* What the callback saw: copies of the messages. */
struct seen {
	size_t n;
	char *msg[MAX_MSGS];
	size_t len[MAX_MSGS];
	int stop_at;		/* return `stop_rc` on this message (1-based) */
	int stop_rc;
	struct pg_err *err;	/* filled by the callback when stopping with -1 */
};

static int collect(const char *msg, size_t len, void *arg)
{
	struct seen *s = arg;

	if (s->n < MAX_MSGS) {
		s->msg[s->n] = malloc(len + 1);
		assert_non_null(s->msg[s->n]);
		memcpy(s->msg[s->n], msg, len);
		s->msg[s->n][len] = '\0';
		s->len[s->n] = len;
	}
	s->n++;
	if (s->stop_at && (int)s->n == s->stop_at) {
		if (s->stop_rc < 0 && s->err)
			pg_err_set(s->err, PG_EDB, "store is gone");
		return s->stop_rc;
	}
	return 0;
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n && i < MAX_MSGS; i++)
		free(s->msg[i]);
	memset(s, 0, sizeof(*s));
}

static ssize_t split(const char *buf, size_t len, enum pg_mbox_format fmt, struct seen *s)
{
	struct pg_err err = PG_ERR_INIT;
	ssize_t n = pg_mbox_split(buf, len, fmt, collect, s, &err);

	if (n < 0)
		fail_msg("split failed: %s", err.msg);
	assert_int_equal((size_t)n, s->n);
	return n;
}

static void test_is_from_line(void **state)
{
	static const struct {
		const char *line;
		bool from;
	} cases[] = {
		{ "From 7b15b7c836cbba81863e2f5e37eb58e8c45f4554 Mon Sep 17 00:00:00 2001", true },
		{ "From mboxrd@z Thu Jan  1 00:00:00 1970", true },
		{ "From patchwork Wed Jan 10 12:00:00 2024\r", true },
		{ "From alice@example.com  Tue Jan  2 09:05:00 2024", true },
		{ "From a b c 1:23:45 2024", true },
		{ "From xyz 12:34:56 91", true },
		{ "From x 12:34:56 91", false },	/* 18 bytes: too short */
		{ "From xyz 12:34:56 90", false },	/* years up to 90: no */
		{ "From x 12:34:56 -2024", false },
		{ "From here on, every new ring helper gets a test in this file.", false },
		{ "From the meeting at 10:30 we agreed", false },
		{ "From: Alice Dev <alice@example.com>", false },
		{ ">From mboxrd@z Thu Jan  1 00:00:00 1970", false },
		{ "from mboxrd@z Thu Jan  1 00:00:00 1970", false },
		{ "From x 12:34:5", false },
		{ "From xxxxxxxxxxx 12:34:5", false },
		{ "From :::::::::::::::", false },
		{ "From 12345678901234", false },
		{ "From 1:2", false },
		{ "", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (pg_mbox_is_from_line(cases[i].line, strlen(cases[i].line)) != cases[i].from)
			fail_msg("'%s' should %sbe a From line", cases[i].line,
				 cases[i].from ? "" : "not ");
}

/* The series mbox: four messages, the same ones as series-v2-N.eml, the
 * unescaped "From here on" line kept inside the third. */
static void test_series_mbox(void **state)
{
	size_t len;
	char *mbox = read_file(FIXTURES "/series-v2.mbox", &len);
	struct seen s = { 0 };

	(void)state;
	assert_non_null(strstr(mbox, "\nFrom here on, every new ring helper"));
	assert_int_equal(split(mbox, len, PG_MBOX_MBOXO, &s), 4);
	for (size_t i = 0; i < 4; i++) {
		char path[64], *eml, *nl;
		size_t elen;
		struct pg_mail a, b;
		struct pg_err err = PG_ERR_INIT;

		snprintf(path, sizeof(path), FIXTURES "/series-v2-%zu.eml", i);
		eml = read_file(path, &elen);
		/* the .eml is the same message with its "From " line */
		nl = strchr(eml, '\n');
		assert_non_null(nl);
		assert_true(s.len[i] >= elen - (size_t)(nl + 1 - eml));
		assert_memory_equal(s.msg[i], nl + 1, elen - (size_t)(nl + 1 - eml));
		assert_int_equal(pg_mail_parse(&a, s.msg[i], s.len[i], &err), 0);
		assert_int_equal(pg_mail_parse(&b, eml, elen, &err), 0);
		assert_string_equal(a.message_id, b.message_id);
		assert_string_equal(a.message, b.message);
		assert_int_equal(a.diff_len, b.diff_len);
		pg_mail_free(&a);
		pg_mail_free(&b);
		free(eml);
	}
	assert_non_null(strstr(s.msg[2], "\nFrom here on, every new ring helper gets a test"));
	assert_null(strstr(s.msg[0], "\nFrom e581e400"));
	seen_free(&s);
	free(mbox);
}

static void test_git_mboxrd(void **state)
{
	size_t len;
	char *mbox = read_file(FIXTURES "/git-mboxrd.mbox", &len);
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(split(mbox, len, PG_MBOX_MBOXRD, &s), 2);
	assert_non_null(strstr(s.msg[0], "\n\nFrom the body of a commit message, mbox"));
	assert_non_null(strstr(s.msg[0], "\n>From here, quoted, this one gets two.\n"));
	assert_null(strstr(s.msg[0], ">>From"));
	assert_non_null(strstr(s.msg[1], "Subject: [PATCH 2/2] ring: second mboxrd message\n"));
	seen_free(&s);

	/* read as mboxo the escapes stay */
	assert_int_equal(split(mbox, len, PG_MBOX_MBOXO, &s), 2);
	assert_non_null(strstr(s.msg[0], "\n>From the body"));
	assert_non_null(strstr(s.msg[0], "\n>>From here, quoted"));
	seen_free(&s);
	free(mbox);
}

static void test_publicinbox_mboxrd(void **state)
{
	size_t len;
	char *mbox = read_file(FIXTURES "/publicinbox.mbox", &len);
	struct seen s = { 0 };
	struct pg_mail m;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(split(mbox, len, PG_MBOX_MBOXRD, &s), 3);
	assert_non_null(strstr(s.msg[0], "\n\nFrom the archive: this line read"));
	assert_non_null(strstr(s.msg[0], "\n>From a quote: this one read \">From a quote\".\n"));
	assert_non_null(strstr(s.msg[0], "\n>>From deeper: this one read \">>From deeper\".\n"));
	assert_non_null(strstr(s.msg[0], "\n> From, with a space"));
	assert_non_null(strstr(s.msg[0], "\n>Fromage is not"));
	/* the empty line before the next separator stays with the message */
	assert_memory_equal(s.msg[0] + s.len[0] - 3, ".\n\n", 3);
	assert_memory_equal(s.msg[1], "Message-ID: <pi-2@example.com>\n", 31);
	assert_non_null(strstr(s.msg[1], "\n\nFrom here on, the archive escapes"));
	/* the last one has no final newline */
	assert_memory_equal(s.msg[2] + s.len[2] - 11, "at the end.", 11);
	for (size_t i = 0; i < 3; i++) {
		char want[32];

		assert_int_equal(pg_mail_parse(&m, s.msg[i], s.len[i], &err), 0);
		snprintf(want, sizeof(want), "pi-%zu@example.com", i + 1);
		assert_string_equal(m.message_id, want);
		pg_mail_free(&m);
	}
	seen_free(&s);
	free(mbox);
}

static void test_bare_and_empty(void **state)
{
	static const char bare[] = "\n\n  Message-ID: <b@x>\nSubject: s\n\n"
				   ">From a bare mboxrd message\n"
				   "From x Mon Sep 17 00:00:00 2001\n";
	static const char adjacent[] = "From a Mon Sep 17 00:00:00 2001\n"
				       "From b Mon Sep 17 00:00:00 2001\nX: y\n";
	static const char last[] = "From a Mon Sep 17 00:00:00 2001\nA: 1\n"
				   "From b Mon Sep 17 00:00:00 2001";
	struct seen s = { 0 };
	size_t len;
	char *eml = read_file(FIXTURES "/empty-body.eml", &len);

	(void)state;
	assert_int_equal(split("", 0, PG_MBOX_MBOXO, &s), 0);
	assert_int_equal(split(" \n\r\n\t", 5, PG_MBOX_MBOXRD, &s), 0);

	/* a single message without a From line: handed over whole */
	assert_int_equal(split(eml, len, PG_MBOX_MBOXO, &s), 1);
	assert_int_equal(s.len[0], len);
	assert_memory_equal(s.msg[0], eml, len);
	seen_free(&s);

	/* a bare file never splits (git mailsplit), but is unescaped; the
	 * leading white space is skipped */
	assert_int_equal(split(bare, sizeof(bare) - 1, PG_MBOX_MBOXRD, &s), 1);
	assert_string_equal(s.msg[0], "Message-ID: <b@x>\nSubject: s\n\n"
			    "From a bare mboxrd message\n"
			    "From x Mon Sep 17 00:00:00 2001\n");
	seen_free(&s);

	/* adjacent separators: an empty message between them */
	assert_int_equal(split(adjacent, sizeof(adjacent) - 1, PG_MBOX_MBOXO, &s), 2);
	assert_int_equal(s.len[0], 0);
	assert_string_equal(s.msg[1], "X: y\n");
	seen_free(&s);

	/* a separator as the last line, without a newline */
	assert_int_equal(split(last, sizeof(last) - 1, PG_MBOX_MBOXO, &s), 2);
	assert_string_equal(s.msg[0], "A: 1\n");
	assert_int_equal(s.len[1], 0);
	seen_free(&s);
	free(eml);
}

static void test_crlf_mbox(void **state)
{
	size_t len;
	char *mbox = read_file(FIXTURES "/series-v2.mbox", &len);
	struct pg_buf crlf = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct seen lf = { 0 }, cr = { 0 };

	(void)state;
	for (size_t i = 0; i < len; i++) {
		if (mbox[i] == '\n')
			assert_int_equal(pg_buf_addch(&crlf, '\r'), 0);
		assert_int_equal(pg_buf_addch(&crlf, mbox[i]), 0);
	}
	assert_int_equal(split(mbox, len, PG_MBOX_MBOXO, &lf), 4);
	assert_int_equal(split(crlf.data, crlf.len, PG_MBOX_MBOXRD, &cr), 4);
	for (size_t i = 0; i < 4; i++) {
		struct pg_mail a, b;
		struct pg_err err = PG_ERR_INIT;
		struct pg_buf da = PG_BUF_INIT(PG_BUF_NOLIMIT), db = PG_BUF_INIT(PG_BUF_NOLIMIT);

		assert_non_null(memchr(cr.msg[i], '\r', cr.len[i]));
		assert_int_equal(pg_mail_parse(&a, lf.msg[i], lf.len[i], &err), 0);
		assert_int_equal(pg_mail_parse(&b, cr.msg[i], cr.len[i], &err), 0);
		assert_int_equal(pg_mail_dump(&a, &da), 0);
		assert_int_equal(pg_mail_dump(&b, &db), 0);
		assert_string_equal(da.data, db.data);
		pg_buf_release(&da);
		pg_buf_release(&db);
		pg_mail_free(&a);
		pg_mail_free(&b);
	}
	seen_free(&lf);
	seen_free(&cr);
	pg_buf_release(&crlf);
	free(mbox);
}

static void test_callback_stops(void **state)
{
	size_t len;
	char *mbox = read_file(FIXTURES "/series-v2.mbox", &len);
	struct pg_err err = PG_ERR_INIT;
	struct seen s = { 0 };

	(void)state;
	/* a positive return stops quietly */
	s.stop_at = 2;
	s.stop_rc = 1;
	assert_int_equal(pg_mbox_split(mbox, len, PG_MBOX_MBOXO, collect, &s, &err), 2);
	assert_int_equal(err.code, PG_OK);
	seen_free(&s);

	/* -1 stops with an error the split fills in ... */
	s.stop_at = 3;
	s.stop_rc = -1;
	assert_int_equal(pg_mbox_split(mbox, len, PG_MBOX_MBOXO, collect, &s, &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_string_equal(err.msg, "mbox: stopped by the callback at message 3");
	assert_int_equal(s.n, 3);
	seen_free(&s);

	/* ... unless the callback said why */
	pg_err_clear(&err);
	s.stop_at = 1;
	s.stop_rc = -1;
	s.err = &err;
	assert_int_equal(pg_mbox_split(mbox, len, PG_MBOX_MBOXO, collect, &s, &err), -1);
	assert_int_equal(err.code, PG_EDB);
	assert_string_equal(err.msg, "store is gone");
	seen_free(&s);

	/* a bare message stopped too */
	s.stop_at = 1;
	s.stop_rc = -1;
	assert_int_equal(pg_mbox_split("X: y\n", 5, PG_MBOX_MBOXO, collect, &s, NULL), -1);
	seen_free(&s);
	free(mbox);
}

static int count_only(const char *msg, size_t len, void *arg)
{
	size_t *total = arg;

	(void)msg;
	*total += len;
	return 0;
}

/* Large input: the split must still be right (its speed is the
 * benchmarks' business, not a test's). */
static void test_large_input(void **state)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_err err = PG_ERR_INIT;
	size_t total = 0;

	(void)state;
	/* 50,000 messages, every body line an escaped From */
	for (int i = 0; i < 50000; i++)
		assert_int_equal(pg_buf_printf(&b, "From mboxrd@z Thu Jan  1 00:00:00 1970\n"
					       "Message-ID: <%d@x>\n\n>From a\n>>From b\n"
					       "From here on\n\n", i), 0);
	/* and one 5 MB line with colons and digits, no newline */
	while (b.len < 10 * 1000 * 1000)
		assert_int_equal(pg_buf_adds(&b, "From 1:2:3 4:5:6 "), 0);
	assert_int_equal(pg_mbox_split(b.data, b.len, PG_MBOX_MBOXRD, count_only, &total,
				       &err), 50000);
	assert_true(total > 5 * 1000 * 1000);
	pg_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_from_line),
		cmocka_unit_test(test_series_mbox),
		cmocka_unit_test(test_git_mboxrd),
		cmocka_unit_test(test_publicinbox_mboxrd),
		cmocka_unit_test(test_bare_and_empty),
		cmocka_unit_test(test_crlf_mbox),
		cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_large_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
