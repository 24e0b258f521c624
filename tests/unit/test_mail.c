/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for patches/mail*.c: golden dumps of the real mails in
 * tests/mail/ (NAME.eml -> NAME.ok), then headers, RFC 2047, addresses,
 * DMARC, MIME, the mailinfo split, bounds and large inputs.
 *
 * PG_UPDATE_GOLDEN=1 rewrites the .ok files instead of comparing; read
 * every changed one against its .eml before keeping it.
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

#include "goldenfx.h"

#define FIXTURES "tests/mail"

/* The golden text of a mail: pg_mail_dump() or the error. */
static char *golden_text(const char *buf, size_t len, void *ctx)
{
	struct pg_buf out = PG_BUF_INIT(1 << 20);
	struct pg_err err = PG_ERR_INIT;
	struct pg_mail m;

	(void)ctx;
	if (pg_mail_parse(&m, buf, len, &err) < 0) {
		assert_int_equal(pg_buf_printf(&out, "error: %s\nerror_code: %s\n", err.msg,
					       pg_errcode_name(err.code)), 0);
	} else {
		assert_int_equal(pg_mail_dump(&m, &out), 0);
	}
	pg_mail_free(&m);
	assert_int_equal(pg_buf_grow(&out, 0), 0);
	return pg_buf_detach(&out, NULL);
}

static void test_golden(void **state)
{
	(void)state;
	assert_true(gold_dir(FIXTURES, ".eml", golden_text, NULL) >= 20);
}

/* ---- helpers for hand-written mails --------------------------------------- */

static void parse_ok(struct pg_mail *m, const char *text)
{
	struct pg_err err = PG_ERR_INIT;

	if (pg_mail_parse(m, text, strlen(text), &err) < 0)
		fail_msg("parse failed: %s", err.msg);
}

static void parse_fails(const char *text, size_t len, enum pg_errcode code,
			const char *msg)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_mail m;

	assert_int_equal(pg_mail_parse(&m, text, len, &err), -1);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg))
		fail_msg("error '%s' does not say '%s'", err.msg, msg);
	/* emptied: freeing again is harmless */
	assert_null(m.message_id);
	assert_int_equal(m.nheaders, 0);
	pg_mail_free(&m);
}

#define HDRS "Message-ID: <t@example.com>\nFrom: T <t@example.com>\n" \
	"Date: Mon, 1 Jan 2024 00:00:00 +0000\n"

static void test_crlf_same_as_lf(void **state)
{
	size_t lf_len, crlf_len;
	char *lf = gold_read_file(FIXTURES "/single.eml", &lf_len);
	char *crlf = gold_read_file(FIXTURES "/crlf.eml", &crlf_len);
	struct pg_mail a, b;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf da = PG_BUF_INIT(PG_BUF_NOLIMIT), db = PG_BUF_INIT(PG_BUF_NOLIMIT);

	(void)state;
	assert_non_null(lf);
	assert_non_null(crlf);
	assert_true(crlf_len > lf_len);
	assert_non_null(memchr(crlf, '\r', crlf_len));
	assert_int_equal(pg_mail_parse(&a, lf, lf_len, &err), 0);
	assert_int_equal(pg_mail_parse(&b, crlf, crlf_len, &err), 0);
	assert_int_equal(pg_mail_dump(&a, &da), 0);
	assert_int_equal(pg_mail_dump(&b, &db), 0);
	assert_string_equal(da.data, db.data);
	assert_int_equal(a.body_len, b.body_len);
	assert_memory_equal(a.body, b.body, a.body_len);
	assert_int_equal(a.diff_len, b.diff_len);
	assert_memory_equal(a.diff, b.diff, a.diff_len);
	assert_string_equal(a.message, b.message);
	assert_string_equal(a.notes, b.notes);
	assert_null(memchr(b.diff, '\r', b.diff_len));
	pg_buf_release(&da);
	pg_buf_release(&db);
	pg_mail_free(&a);
	pg_mail_free(&b);
	free(lf);
	free(crlf);
}

static void test_fixture_details(void **state)
{
	size_t len;
	char *buf;
	struct pg_mail m;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	/* base-commit: stays after the diff, in the body and the diff */
	buf = gold_read_file(FIXTURES "/base-commit.eml", &len);
	assert_non_null(buf);
	assert_int_equal(pg_mail_parse(&m, buf, len, &err), 0);
	assert_non_null(strstr(m.body, "\nbase-commit: 7b15b7c836cbba81863e2f5e37eb58e8c45f4554\n"));
	assert_non_null(strstr(m.diff, "\nbase-commit: "));
	assert_null(strstr(m.diff, "2.39.2"));
	assert_null(strstr(m.diff, "\n-- \n"));
	assert_non_null(strstr(m.message, "Fixes: 0123456789ab (\"ring: initial import\")\n"));
	assert_null(strstr(m.message, "---"));
	assert_string_equal(m.notes, " lib/ring/rte_ring.c | 2 +-\n"
			    " 1 file changed, 1 insertion(+), 1 deletion(-)\n\n");
	pg_mail_free(&m);
	free(buf);

	/* the in-body "From here on," line is in the message, not a header */
	buf = gold_read_file(FIXTURES "/series-v2-2.eml", &len);
	assert_non_null(buf);
	assert_int_equal(pg_mail_parse(&m, buf, len, &err), 0);
	assert_non_null(strstr(m.message, "\nFrom here on, every new ring helper"));
	assert_int_equal(m.flags & PG_MAIL_INBODY_FROM, 0);
	assert_string_equal(pg_mail_header(&m, "list-id"),
			    "DPDK patches and discussions <dev.dpdk.org>");
	assert_string_equal(pg_mail_header(&m, "REFERENCES"),
			    "<20231220093000.4711-1-alice@example.com>\t"
			    "<cover.1704067200.git.alice@example.com>");
	pg_mail_free(&m);
	free(buf);

	/* a whole format-patch file as a base64 attachment, latin-1 text */
	buf = gold_read_file(FIXTURES "/nested-base64.eml", &len);
	assert_non_null(buf);
	assert_int_equal(pg_mail_parse(&m, buf, len, &err), 0);
	assert_string_equal(m.from_name, "M\xc3\xbcller, J\xc3\xb6rg");
	assert_non_null(strstr(m.body, "Gr\xc3\xbc\xc3\x9f" "e,\nJ\xc3\xb6rg\n"));
	assert_null(strstr(m.body, "<html>"));
	assert_memory_equal(m.diff, "diff --git a/lib/ring/rte_ring.c", 32);
	assert_null(strstr(m.diff, "Signed-off-by"));
	pg_mail_free(&m);
	free(buf);
}

/* ---- headers ---------------------------------------------------------------- */

static void test_headers_folding_and_lookup(void **state)
{
	struct pg_mail m;

	(void)state;
	parse_ok(&m, "message-id:\n <fold@example.com>\n"
		 "X-Foo: one\n"
		 "SUBJECT : old style\n   folded\n\ttwice\n"
		 "x-foo: two\n"
		 "From: T <t@example.com>\n"
		 "\n"
		 "body\n");
	assert_string_equal(m.message_id, "fold@example.com");
	assert_int_equal(m.nheaders, 5);
	assert_string_equal(m.headers[2].name, "SUBJECT");
	assert_string_equal(m.headers[2].value, "old style   folded\ttwice");
	/* tabs and runs from folding: one line, spaces */
	assert_string_equal(m.subject, "old style   folded twice");
	assert_string_equal(pg_mail_header(&m, "x-FOO"), "one");
	assert_string_equal(pg_mail_header_nth(&m, "X-Foo", 1), "two");
	assert_null(pg_mail_header_nth(&m, "X-Foo", 2));
	assert_null(pg_mail_header(&m, "X-Bar"));
	assert_string_equal(m.body, "body\n");
	assert_int_equal(m.body_len, 5);
	pg_mail_free(&m);
}

static void test_envelope_and_blank_lines(void **state)
{
	struct pg_mail m;

	(void)state;
	parse_ok(&m, "\n\nFrom 0123 Mon Sep 17 00:00:00 2001\n" HDRS "Subject: s\n\nhi\n");
	assert_string_equal(m.message_id, "t@example.com");
	assert_string_equal(m.subject, "s");
	pg_mail_free(&m);
	/* an obsolete "From :" field is a field, not an envelope */
	parse_ok(&m, "From : Old <old@example.com>\nMessage-ID: <o@x>\n\n");
	assert_string_equal(m.from_addr, "old@example.com");
	assert_string_equal(m.from_name, "Old");
	pg_mail_free(&m);
}

static void test_rejections(void **state)
{
	static const char nul_hdr[] = "Message-ID: <a@b>\nSubject: x\0y\n\nbody\n";
	struct pg_mail_opts o = PG_MAIL_OPTS_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_mail m;
	struct pg_buf many = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char *big;

	(void)state;
	parse_fails("", 0, PG_EINVAL, "empty mail");
	parse_fails("\n \n\t\n", 5, PG_EINVAL, "empty mail");
	parse_fails("hello world\n", 12, PG_EINVAL,
		    "no header section (line 1 is not a header field)");
	parse_fails("\n\nhello: x\nworld\n", 17, PG_EINVAL,
		    "header section is not valid (line 4: not a header field)");
	parse_fails(" continued: x\n", 14, PG_EINVAL, "no header section (line 1");
	parse_fails(nul_hdr, sizeof(nul_hdr) - 1, PG_EINVAL,
		    "header section is not valid (line 2: NUL byte)");
	parse_fails("Subject: x\n\nbody\n", 17, PG_EINVAL, "no Message-ID header");
	parse_fails("Message-ID:  \nSubject: x\n\n", 26, PG_EINVAL,
		    "Message-ID header is empty");
	parse_fails("Message-ID: <>\n\n", 16, PG_EINVAL, "Message-ID header is empty");

	/* the default size bound, checked before anything is copied */
	big = calloc(1, PG_MAIL_MAX_SIZE + 1);
	assert_non_null(big);
	parse_fails(big, PG_MAIL_MAX_SIZE + 1, PG_ETOOBIG, "mail larger than 33554432 bytes");
	free(big);

	o.max_size = 64;
	assert_int_equal(pg_mail_parse_opts(&m, HDRS "\nbody\n", 65, &o, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_string_equal(err.msg, "mail larger than 64 bytes (65 bytes)");

	o.max_size = 0;
	o.max_headers = 3;
	assert_int_equal(pg_buf_adds(&many, HDRS), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(pg_buf_printf(&many, "X-N: %d\n", i), 0);
	assert_int_equal(pg_mail_parse_opts(&m, many.data, many.len, &o, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_string_equal(err.msg, "more than 3 header fields");
	o.max_headers = 0;
	assert_int_equal(pg_mail_parse_opts(&m, many.data, many.len, &o, &err), 0);
	assert_int_equal(m.nheaders, 8);
	pg_mail_free(&m);
	pg_buf_release(&many);

	/* the header bound counts the whole section, folded lines too */
	o.max_header_bytes = 100;
	{
		static const char folded[] = "Message-ID: <l@x>\n"
			"X-Long: 0123456789\n 0123456789\n 0123456789\n 0123456789\n"
			" 0123456789\n 0123456789\n 0123456789\n\nbody\n";

		assert_int_equal(pg_mail_parse_opts(&m, folded, sizeof(folded) - 1, &o, &err), -1);
		assert_int_equal(err.code, PG_ETOOBIG);
		assert_string_equal(err.msg, "header section larger than 100 bytes");
		o.max_header_bytes = 200;
		assert_int_equal(pg_mail_parse_opts(&m, folded, sizeof(folded) - 1, &o, &err), 0);
		assert_string_equal(m.body, "body\n");
	}
	pg_mail_free(&m);
	pg_mail_free(NULL);
}

static void test_msgids(void **state)
{
	struct pg_mail m;

	(void)state;
	parse_ok(&m, "Message-ID: bare-id@example.com\n"
		 "In-Reply-To: Message from Ann <ann@example.com> of Mon (comment <not@this>)\n"
		 " <real@example.com>\n"
		 "References: <a@x> <b@x>\n\t<c\n @x> <> junk <d@x\n\n");
	assert_string_equal(m.message_id, "bare-id@example.com");
	/* the first <...> wins, as in patchwork; comments are skipped */
	assert_string_equal(m.in_reply_to, "ann@example.com");
	assert_int_equal(m.nreferences, 3);
	assert_string_equal(m.references[0], "a@x");
	assert_string_equal(m.references[1], "b@x");
	assert_string_equal(m.references[2], "c@x");
	assert_string_equal(m.subject, "");
	assert_string_equal(m.from_name, "");
	assert_string_equal(m.from_addr, "");
	assert_string_equal(m.list_id, "");
	pg_mail_free(&m);

	parse_ok(&m, "Message-ID: (a comment) < spaced@example.com >\nIn-Reply-To: <x@y> <z@y>\n\n");
	assert_string_equal(m.message_id, "spaced@example.com");
	assert_string_equal(m.in_reply_to, "x@y");
	assert_int_equal(m.nreferences, 0);
	pg_mail_free(&m);
}

/* ---- RFC 2047 ------------------------------------------------------------------ */

static void decode_is(const char *in, const char *want, unsigned int want_flags)
{
	struct pg_buf out = PG_BUF_INIT(4096);
	unsigned int flags = 0;

	assert_int_equal(pg_mail_decode_header(in, strlen(in), &out, &flags), 0);
	if (strcmp(pg_buf_str(&out), want))
		fail_msg("decode '%s': got '%s', want '%s'", in, pg_buf_str(&out), want);
	assert_int_equal(flags, want_flags);
	pg_buf_release(&out);
}

static void test_rfc2047(void **state)
{
	(void)state;
	decode_is("plain text", "plain text", 0);
	decode_is("=?utf-8?q?caf=C3=A9_au_lait?=", "caf\xc3\xa9 au lait", 0);
	decode_is("=?UTF-8?B?Y2Fmw6k=?=", "caf\xc3\xa9", 0);
	/* adjacent words: the white space (folding included) between goes */
	decode_is("=?utf-8?q?a?= =?utf-8?q?b?=\n\t =?utf-8?q?c?=", "abc", 0);
	/* between a word and text it stays */
	decode_is("x =?utf-8?q?a?= y =?utf-8?q?b?=  z", "x a y b  z", 0);
	/* git splits UTF-8 over words at any byte */
	decode_is("=?UTF-8?q?Br=C3?= =?UTF-8?q?=B8rup?=", "Br\xc3\xb8rup", 0);
	decode_is("=?iso-8859-1?q?J=F6rg?=", "J\xc3\xb6rg", 0);
	decode_is("=?ISO-8859-1?B?R3L832U=?=", "Gr\xc3\xbc\xc3\x9f" "e", 0);
	decode_is("=?windows-1252?q?=80_=93x=94?=", "\xe2\x82\xac \xe2\x80\x9cx\xe2\x80\x9d", 0);
	decode_is("=?us-ascii*en?q?lang?=", "lang", 0);
	/* tiny and broken base64: what decodes, decodes */
	decode_is("=?utf-8?b?QQ?=", "A", 0);
	decode_is("=?utf-8?b?Q?=", "", 0);
	decode_is("=?utf-8?b?" "?=", "", 0);
	decode_is("=?utf-8?b?QUJD!!RA==?=", "ABCD", 0);
	/* a charset we do not convert: raw bytes and a flag */
	decode_is("=?koi8-r?b?6dfBzg==?=", "\xe9\xd7\xc1\xce", PG_MAIL_RAW_CHARSET);
	/* not encoded words: copied */
	decode_is("=?utf-8?x?abc?=", "=?utf-8?x?abc?=", 0);
	decode_is("=?utf-8?q?no end", "=?utf-8?q?no end", 0);
	decode_is("=??q?a?=", "=??q?a?=", 0);
	decode_is("a=?b", "a=?b", 0);
	decode_is("=?utf-8?q?bad=ZZhex?=", "bad=ZZhex", 0);
	/* control characters become spaces, NULs go */
	decode_is("=?utf-8?q?a=0Ab=09c=00d?=", "a b cd", 0);
	decode_is("tab\there", "tab here", 0);
}

/* A value cut short by out's bound leaves out as it was: before, the raw
 * bytes appended so far stayed, NUL and control bytes included
 * (fuzz_mail_header). */
static void test_rfc2047_full(void **state)
{
	static const char in[] = "a\0b\x01c =?utf-8?q?long_enough_to_overflow?= tail";
	struct pg_buf out = PG_BUF_INIT(12);

	(void)state;
	assert_int_equal(pg_buf_adds(&out, "keep"), 0);
	errno = 0;
	assert_int_equal(pg_mail_decode_header(in, sizeof(in) - 1, &out, NULL), -1);
	assert_int_equal(errno, E2BIG);
	assert_int_equal(out.len, 4);
	assert_string_equal(pg_buf_str(&out), "keep");
	pg_buf_release(&out);
}

/* ---- addresses and DMARC --------------------------------------------------------- */

static void from_is(const char *from, const char *name, const char *addr)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_mail m;

	assert_int_equal(pg_buf_printf(&b, "Message-ID: <f@x>\nFrom: %s\n\n", from), 0);
	parse_ok(&m, b.data);
	if (strcmp(m.from_name, name) || strcmp(m.from_addr, addr))
		fail_msg("From: %s -> '%s' '%s', want '%s' '%s'", from, m.from_name,
			 m.from_addr, name, addr);
	assert_int_equal(m.flags & PG_MAIL_DMARC, 0);
	pg_mail_free(&m);
	pg_buf_release(&b);
}

static void test_from_forms(void **state)
{
	(void)state;
	from_is("Alice Dev <alice@example.com>", "Alice Dev", "alice@example.com");
	from_is("alice@example.com", "", "alice@example.com");
	from_is("<alice@example.com>", "", "alice@example.com");
	from_is("alice@example.com (Alice  Dev)", "Alice Dev", "alice@example.com");
	from_is("\"Dev, Alice \\\"A\\\"\" <alice@example.com>", "Dev, Alice \"A\"",
		"alice@example.com");
	from_is("\"=?utf-8?q?J=C3=B6rg?=\" <j@example.de>", "J\xc3\xb6rg", "j@example.de");
	from_is("=?utf-8?q?J=C3=B6rg?= =?utf-8?q?_M?= <j@example.de>", "J\xc3\xb6rg M",
		"j@example.de");
	from_is("Alice (work) <alice@example.com>, Bob <bob@example.com>", "Alice",
		"alice@example.com");
	from_is("Carol Rider via somebody <carol@example.com>", "Carol Rider via somebody",
		"carol@example.com");
}

static void test_dmarc(void **state)
{
	struct pg_mail m;

	(void)state;
	/* Google Groups: the original sender in X-Original-From */
	parse_ok(&m, "Message-ID: <g@x>\n"
		 "From: 'Alice Dev' via ring-dev <ring-dev@googlegroups.com>\n"
		 "X-Original-From: Alice Dev <alice@example.com>\n"
		 "Reply-To: Alice Dev <alice@example.com>\n\n");
	assert_string_equal(m.from_name, "Alice Dev");
	assert_string_equal(m.from_addr, "alice@example.com");
	assert_int_equal(m.flags & PG_MAIL_DMARC, PG_MAIL_DMARC);
	assert_string_equal(m.author_addr, "alice@example.com");
	pg_mail_free(&m);

	/* the list address without "via", author in a nameless Reply-To */
	parse_ok(&m, "Message-ID: <l@x>\n"
		 "From: Alice Dev <DEV@dpdk.org>\n"
		 "Reply-To: alice@example.com\n"
		 "List-Id: DPDK patches and discussions <dev.dpdk.org>\n\n");
	assert_string_equal(m.from_name, "Alice Dev");
	assert_string_equal(m.from_addr, "alice@example.com");
	assert_int_equal(m.flags & PG_MAIL_DMARC, PG_MAIL_DMARC);
	pg_mail_free(&m);

	/* "'Name' via group" and a nameless X-Original-From: quotes go */
	parse_ok(&m, "Message-ID: <q@x>\n"
		 "From: 'Alice Dev' via ring-dev <ring-dev@googlegroups.com>\n"
		 "X-Original-From: alice@example.com\n\n");
	assert_string_equal(m.from_name, "Alice Dev");
	assert_string_equal(m.from_addr, "alice@example.com");
	pg_mail_free(&m);

	/* rewritten, but nobody says who wrote it: unchanged, no flag */
	parse_ok(&m, "Message-ID: <n@x>\n"
		 "From: Alice Dev via dev <dev@dpdk.org>\n"
		 "Reply-To: dev@dpdk.org\n"
		 "List-Post: <mailto:dev@dpdk.org>\n\n");
	assert_string_equal(m.from_name, "Alice Dev via dev");
	assert_string_equal(m.from_addr, "dev@dpdk.org");
	assert_int_equal(m.flags & PG_MAIL_DMARC, 0);
	pg_mail_free(&m);

	/* an ordinary From: with a Reply-To elsewhere is left alone */
	parse_ok(&m, "Message-ID: <o@x>\n"
		 "From: Alice Dev <alice@example.com>\n"
		 "Reply-To: Team <team@example.com>\n"
		 "List-Post: <mailto:dev@dpdk.org>\n"
		 "List-Id: <dev.dpdk.org>\n\n");
	assert_string_equal(m.from_addr, "alice@example.com");
	assert_int_equal(m.flags & PG_MAIL_DMARC, 0);
	assert_string_equal(m.list_id, "dev.dpdk.org");
	pg_mail_free(&m);
}

static void test_date_and_reply(void **state)
{
	static const struct {
		const char *subject;
		bool reply;
	} cases[] = {
		{ "Re: [PATCH] x", true },
		{ "RE: x", true },
		{ "  re: x", true },
		{ "Aw: [PATCH] x", true },
		{ "AW: [PATCH] x", true },
		{ "Fwd: x", true },
		{ "FW: x", true },
		{ "SV: x", true },
		{ "Antw: x", true },
		{ "ABC: [PATCH] x", true },	/* b4: \w{2,3}: then [ */
		{ "ABC: x", false },
		{ "[EXT] Re: [PATCH] foo", false },
		{ "Re [PATCH] x", false },
		{ "[PATCH] Re: x", false },
		{ "Regression: x", false },
		{ "", false },
	};
	struct pg_mail m;

	(void)state;
	parse_ok(&m, "Message-ID: <d@x>\nDate: not a date\n\n");
	assert_int_equal(m.date_ms, 0);
	assert_int_equal(m.flags & PG_MAIL_NO_DATE, PG_MAIL_NO_DATE);
	pg_mail_free(&m);
	parse_ok(&m, "Message-ID: <d@x>\nDate: Mon, 30 Nov 2026 04:30:00\n +0100 (CET)\n\n");
	assert_int_equal(m.date_ms, 1796009400000LL);
	assert_int_equal(m.flags, 0);
	pg_mail_free(&m);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);

		assert_int_equal(pg_buf_printf(&b, HDRS "Subject: %s\n\n", cases[i].subject), 0);
		parse_ok(&m, b.data);
		if (m.is_reply != cases[i].reply)
			fail_msg("'%s': is_reply %d", cases[i].subject, m.is_reply);
		pg_mail_free(&m);
		pg_buf_release(&b);
	}
}

/* ---- MIME --------------------------------------------------------------------------- */

#define DIFF_A "diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-x\n+y\n"
#define DIFF_B "diff --git a/b.c b/b.c\n--- a/b.c\n+++ b/b.c\n@@ -1 +1 @@\n-x\n+y\n"

static void test_mime_attachments(void **state)
{
	struct pg_mail m;

	(void)state;
	parse_ok(&m, HDRS
		 "Content-Type: multipart/mixed; boundary=XX\n\n"
		 "preamble\n"
		 "--XX\n"
		 "Content-Type: text/plain; charset=utf-8\n"
		 "Content-Transfer-Encoding: base64\n\n"
		 "bWVzc2FnZQoKLS0tCm5vdGUK\n"	/* "message\n\n---\nnote\n" */
		 "--XX\n"
		 "Content-Type: text/plain; name=\"one.diff\"\n\n"
		 DIFF_A
		 "--XX\n"
		 "Content-Type: application/octet-stream\n"
		 "Content-Disposition: attachment; filename*=utf-8''two%2Epatch\n"
		 "Content-Transfer-Encoding: quoted-printable\n\n"
		 "diff --git a/b.c b/b.c\n--- a/b.c\n+++ b/b.c\n@@ -1 +1 @@\n-x\n+=\ny\n"
		 "--XX\n"
		 "Content-Type: application/octet-stream; name=\"blob.bin\"\n\n"
		 DIFF_A
		 "--XX\n"
		 "Content-Type: message/rfc822\n\n"
		 "Message-ID: <inner@x>\n\n" DIFF_A
		 "--XX\n"
		 "Content-Type: text/x-diff\n\n"
		 DIFF_A
		 "--XX--\n"
		 "epilogue " DIFF_B);
	assert_string_equal(m.body, "message\n\n---\nnote\n");
	assert_string_equal(m.message, "message\n");
	assert_string_equal(m.notes, "note\n");
	assert_string_equal(m.diff, DIFF_A DIFF_B DIFF_A);
	assert_int_equal(m.nfiles, 2);
	assert_string_equal(m.files[0], "a.c");
	assert_string_equal(m.files[1], "b.c");
	assert_true(m.has_patch);
	assert_int_equal(m.flags, 0);
	pg_mail_free(&m);
}

static void test_mime_alternative_and_broken(void **state)
{
	struct pg_mail m;
	struct pg_buf deep = PG_BUF_INIT(PG_BUF_NOLIMIT);

	(void)state;
	/* the text/plain of an alternative, not the html; qp soft breaks */
	parse_ok(&m, HDRS
		 "Content-Type: multipart/alternative; boundary=\"b 1\"\n\n"
		 "--b 1\n"
		 "Content-Type: text/html\n\n<p>html</p>\n"
		 "--b 1  \n"
		 "Content-Type: text/plain; charset=iso-8859-1\n"
		 "Content-Transfer-Encoding: quoted-printable\n\n"
		 "soft=\nbreak =E9t=E9 =\t\nend=3D\n"
		 "--b 1--\n");
	assert_string_equal(m.body, "softbreak \xc3\xa9t\xc3\xa9 end=");
	assert_int_equal(m.flags, 0);
	pg_mail_free(&m);

	/* a multipart without a boundary parameter is read as text */
	parse_ok(&m, HDRS "Content-Type: multipart/mixed\n\nmsg\n---\n" DIFF_A);
	assert_int_equal(m.flags & PG_MAIL_MIME_BROKEN, PG_MAIL_MIME_BROKEN);
	assert_string_equal(m.diff, DIFF_A);
	pg_mail_free(&m);

	/* nesting beyond PG_MAIL_MAX_DEPTH: skipped, flagged, no crash */
	assert_int_equal(pg_buf_adds(&deep, HDRS), 0);
	for (int i = 0; i < PG_MAIL_MAX_DEPTH + 4; i++)
		assert_int_equal(pg_buf_printf(&deep, "Content-Type: multipart/mixed; boundary=b%d\n\n"
					       "--b%d\n", i, i), 0);
	assert_int_equal(pg_buf_adds(&deep, "Content-Type: text/plain\n\ndeep\n"), 0);
	parse_ok(&m, deep.data);
	assert_int_equal(m.flags & PG_MAIL_MIME_BROKEN, PG_MAIL_MIME_BROKEN);
	assert_string_equal(m.body, "");
	pg_mail_free(&m);
	pg_buf_release(&deep);

	/* a tiny base64 body */
	parse_ok(&m, HDRS "Content-Transfer-Encoding: base64\n\nQQ\n");
	assert_string_equal(m.body, "A");
	pg_mail_free(&m);

	/* unknown charset body: kept raw, flagged */
	parse_ok(&m, HDRS "Content-Type: text/plain; charset=\"koi8-r\"\n\n\xe9\xd7\n");
	assert_string_equal(m.body, "\xe9\xd7\n");
	assert_int_equal(m.flags, PG_MAIL_RAW_CHARSET);
	pg_mail_free(&m);
}

/* ---- the mailinfo split ---------------------------------------------------------------- */

static void test_split(void **state)
{
	struct pg_mail m;

	(void)state;
	/* in-body headers, "---" with trailing space, a notes section */
	parse_ok(&m, HDRS "Subject: [PATCH] x\n\n"
		 "\n"
		 "From: =?utf-8?q?J=C3=B6rg?= <j@example.de>\n"
		 "Subject: real subject\n"
		 "Date: Mon, 1 Jan 2024 00:00:00 +0000\n"
		 "\n"
		 "Title line\n\nBody.\n\nSigned-off-by: J <j@example.de>\n  \n"
		 "---  \n"
		 "v2: changed\n\n"
		 " a.c | 2 +-\n\n"
		 DIFF_A
		 "-- \n2.39.2\n\n");
	assert_string_equal(m.message, "Title line\n\nBody.\n\nSigned-off-by: J <j@example.de>\n");
	assert_string_equal(m.notes, "v2: changed\n\n a.c | 2 +-\n\n");
	assert_string_equal(m.diff, DIFF_A);
	assert_string_equal(m.author_name, "J\xc3\xb6rg");
	assert_string_equal(m.author_addr, "j@example.de");
	assert_string_equal(m.from_addr, "t@example.com");
	assert_string_equal(m.inbody_subject, "real subject");
	assert_int_equal(m.flags, PG_MAIL_INBODY_FROM);
	pg_mail_free(&m);

	/* no "---": the message ends at the diff */
	parse_ok(&m, HDRS "\nmsg\n" DIFF_A);
	assert_string_equal(m.message, "msg\n");
	assert_string_equal(m.notes, "");
	assert_string_equal(m.diff, DIFF_A);
	pg_mail_free(&m);

	/* "Index:" ends the message; a plain unified diff is still a diff */
	parse_ok(&m, HDRS "\nmsg\nIndex: a.c\n=====\n--- a.c\n+++ a.c\n@@ -1 +1 @@\n-x\n+y\n");
	assert_string_equal(m.message, "msg\n");
	assert_string_equal(m.diff, "--- a.c\n+++ a.c\n@@ -1 +1 @@\n-x\n+y\n");
	assert_int_equal(m.nfiles, 0);
	assert_true(m.has_patch);
	pg_mail_free(&m);

	/* "---" then no diff at all: notes run to the end */
	parse_ok(&m, HDRS "\nmsg\n---\njust notes\n");
	assert_string_equal(m.notes, "just notes\n");
	assert_false(m.has_patch);
	assert_string_equal(m.diff, "");
	pg_mail_free(&m);

	/* a removed line "- " at the end is no signature */
	parse_ok(&m, HDRS "\nmsg\n---\ndiff --git a/r.md b/r.md\n--- a/r.md\n+++ b/r.md\n"
		 "@@ -1,2 +1 @@\n x\n-- \n");
	assert_string_equal(m.diff, "diff --git a/r.md b/r.md\n--- a/r.md\n+++ b/r.md\n"
			    "@@ -1,2 +1 @@\n x\n-- \n");
	pg_mail_free(&m);

	/* a cover letter: no break, the signature leaves the message */
	parse_ok(&m, HDRS "\nBlurb.\n\nAlice (1):\n  x: y\n\n a | 1 +\n\n-- \n2.39.2\n\n");
	assert_string_equal(m.message, "Blurb.\n\nAlice (1):\n  x: y\n\n a | 1 +\n");
	assert_false(m.has_patch);
	pg_mail_free(&m);
}

static void test_files(void **state)
{
	struct pg_mail m;

	(void)state;
	parse_ok(&m, HDRS "\nmsg\n---\n"
		 "diff --git a/dir/with space.c b/dir/with space.c\n"
		 "index 1..2 100644\n--- a/dir/with space.c\n+++ b/dir/with space.c\n"
		 "@@ -1 +1 @@\n-x\n+y\n"
		 "diff --git \"a/t\\303\\251st\\tx\" \"b/t\\303\\251st\\tx\"\n"
		 "new file mode 100644\n--- /dev/null\n+++ \"b/t\\303\\251st\\tx\"\n"
		 "@@ -0,0 +1 @@\n+y\n"
		 "diff --git a/old name.c b/new name.c\n"
		 "similarity index 90%\nrename from old name.c\nrename to new name.c\n"
		 "diff --git a/gone.c b/gone.c\n"
		 "deleted file mode 100644\n--- a/gone.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
		 "diff --git a/x.bin b/y.bin\ncopy from x.bin\ncopy to y.bin\nGIT binary patch\n"
		 "literal 0\nHcmV?d00001\n\n"
		 "diff --git a/dir/with space.c b/dir/with space.c\n"
		 "--- a/dir/with space.c\n+++ b/dir/with space.c\n@@ -1 +1 @@\n-y\n+z\n");
	assert_int_equal(m.nfiles, 7);
	assert_string_equal(m.files[0], "dir/with space.c");
	assert_string_equal(m.files[1], "t\xc3\xa9st\tx");
	assert_string_equal(m.files[2], "old name.c");
	assert_string_equal(m.files[3], "new name.c");
	assert_string_equal(m.files[4], "gone.c");
	assert_string_equal(m.files[5], "x.bin");
	assert_string_equal(m.files[6], "y.bin");
	pg_mail_free(&m);
}

static void test_dump_escapes(void **state)
{
	struct pg_buf out = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_mail m;

	(void)state;
	parse_ok(&m, "Message-ID: <e@x>\nSubject: =?koi8-r?q?=E9?= a\\b \xc3\xa9\n\n"
		 "x\n---\n" DIFF_A);
	assert_int_equal(pg_mail_dump(&m, &out), 0);
	assert_non_null(strstr(out.data, "\nsubject: \\xe9 a\\\\b \xc3\xa9\n"));
	assert_non_null(strstr(out.data, "\nflags: no-date raw-charset\n"));
	assert_non_null(strstr(out.data, "\ndate: 0\n"));
	assert_non_null(strstr(out.data, "\nfiles: 1\nfile: a.c\n"));
	pg_mail_free(&m);
	pg_buf_release(&out);
}

/* ---- large inputs ------------------------------------------------------------------------ */

/* Parse text, which must succeed.  How long it takes is measured by the
 * benchmarks, not asserted here; a quadratic step would show there. */
static void parse_large(const struct pg_buf *b, struct pg_mail *m)
{
	struct pg_err err = PG_ERR_INIT;

	if (pg_mail_parse(m, b->data, b->len, &err) < 0)
		fail_msg("parse of %zu bytes failed: %s", b->len, err.msg);
}

static void test_large_inputs(void **state)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_mail m;

	(void)state;
	/* 10 MB of diff, a file per hunk */
	assert_int_equal(pg_buf_adds(&b, HDRS "Subject: big\n\nmsg\n---\n"), 0);
	for (int i = 0; b.len < 10 * 1000 * 1000; i++)
		assert_int_equal(pg_buf_printf(&b, "diff --git a/f%d.c b/f%d.c\n--- a/f%d.c\n"
					       "+++ b/f%d.c\n@@ -1 +1 @@\n-x\n+y\n",
					       i, i, i, i), 0);
	parse_large(&b, &m);
	assert_true(m.nfiles > 100000);
	assert_true(m.diff_len > 9 * 1000 * 1000);
	pg_mail_free(&m);

	/* a subject full of encoded-word starts without an end */
	pg_buf_reset(&b);
	assert_int_equal(pg_buf_adds(&b, HDRS "Subject: "), 0);
	while (b.len < 200 * 1000)
		assert_int_equal(pg_buf_adds(&b, "=?x?q?a"), 0);
	assert_int_equal(pg_buf_adds(&b, "\n\n"), 0);
	parse_large(&b, &m);
	assert_true(strlen(m.subject) > 190 * 1000);
	pg_mail_free(&m);

	/* the same with an end: one word, decoded */
	b.len -= 2;
	assert_int_equal(pg_buf_adds(&b, "?=\n\n"), 0);
	parse_large(&b, &m);
	pg_mail_free(&m);

	/* 10 MB of tiny MIME parts */
	pg_buf_reset(&b);
	assert_int_equal(pg_buf_adds(&b, HDRS "Content-Type: multipart/mixed; boundary=b\n\n"), 0);
	while (b.len < 10 * 1000 * 1000)
		assert_int_equal(pg_buf_adds(&b, "--b\n\nx\n"), 0);
	parse_large(&b, &m);
	assert_string_equal(m.body, "x");
	assert_int_equal(m.flags & PG_MAIL_MIME_BROKEN, PG_MAIL_MIME_BROKEN);
	pg_mail_free(&m);

	/* 10 MB of "From"/"Date" looking body lines and no break */
	pg_buf_reset(&b);
	assert_int_equal(pg_buf_adds(&b, HDRS "\n"), 0);
	while (b.len < 10 * 1000 * 1000)
		assert_int_equal(pg_buf_adds(&b, "Date: x\nFrom: y\n-- \n"), 0);
	parse_large(&b, &m);
	pg_mail_free(&m);
	pg_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_crlf_same_as_lf),
		cmocka_unit_test(test_fixture_details),
		cmocka_unit_test(test_headers_folding_and_lookup),
		cmocka_unit_test(test_envelope_and_blank_lines),
		cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_msgids),
		cmocka_unit_test(test_rfc2047),
		cmocka_unit_test(test_rfc2047_full),
		cmocka_unit_test(test_from_forms),
		cmocka_unit_test(test_dmarc),
		cmocka_unit_test(test_date_and_reply),
		cmocka_unit_test(test_mime_attachments),
		cmocka_unit_test(test_mime_alternative_and_broken),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_dump_escapes),
		cmocka_unit_test(test_large_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
