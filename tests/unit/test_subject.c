/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for patches/subject.c: the golden cases in tests/subject/
 * (one subject per line of cases.in, its dump on the same line of
 * cases.ok), then the edges: empty, only prefixes, unterminated and deeply
 * nested brackets, very long and non-ASCII titles.
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
#include "subject.h"

/* Parse s and return its dump in a static buffer (tests only). */
static const char *dump(const char *s)
{
	static char line[4 * PG_SUBJECT_TITLE_MAX + 512];
	struct pg_buf b = PG_BUF_INIT(sizeof(line) - 1);
	struct pg_subject sub;

	assert_int_equal(pg_subject_parse(s, &sub), 0);
	assert_int_equal(pg_subject_dump(&sub, &b), 0);
	memcpy(line, pg_buf_str(&b), b.len + 1);
	pg_buf_release(&b);
	return line;
}

static void chomp(char *s, ssize_t *n)
{
	while (*n > 0 && (s[*n - 1] == '\n' || s[*n - 1] == '\r'))
		s[--*n] = '\0';
}

static void test_golden_cases(void **state)
{
	FILE *in = fopen("tests/subject/cases.in", "r");
	FILE *ok = fopen("tests/subject/cases.ok", "r");
	char *subj = NULL, *want = NULL;
	size_t subj_size = 0, want_size = 0;
	ssize_t n, m;
	int lineno = 0, bad = 0;

	(void)state;
	assert_non_null(in);
	assert_non_null(ok);
	while ((n = getline(&subj, &subj_size, in)) >= 0) {
		lineno++;
		m = getline(&want, &want_size, ok);
		if (m < 0) {
			print_error("cases.ok ends before cases.in line %d\n", lineno);
			bad++;
			break;
		}
		chomp(subj, &n);
		chomp(want, &m);
		if (strcmp(dump(subj), want)) {
			print_error("cases.in:%d: %s\n  got:  %s\n  want: %s\n", lineno, subj,
				    dump(subj), want);
			bad++;
		}
	}
	if (getline(&want, &want_size, ok) >= 0) {
		print_error("cases.ok has more lines than cases.in (%d)\n", lineno);
		bad++;
	}
	free(subj);
	free(want);
	fclose(in);
	fclose(ok);
	assert_true(lineno >= 50);
	assert_int_equal(bad, 0);
}

static void test_empty(void **state)
{
	struct pg_subject s;

	(void)state;
	assert_int_equal(pg_subject_parse("", &s), 0);
	assert_false(s.is_patch);
	assert_false(s.is_reply);
	assert_false(s.is_cover);
	assert_int_equal(s.version, 1);
	assert_int_equal(s.number, 0);
	assert_int_equal(s.total, 0);
	assert_int_equal(s.ntags, 0);
	assert_string_equal(s.title, "");
	assert_string_equal(s.key, "");

	assert_int_equal(pg_subject_parse("   \t  ", &s), 0);
	assert_string_equal(s.title, "");

	memset(&s, 0x5a, sizeof(s));
	assert_int_equal(pg_subject_parse(NULL, &s), -1);
	assert_false(s.is_patch);
	assert_int_equal(s.version, 1);
	assert_string_equal(s.title, "");
	assert_int_equal(pg_subject_parse("x", NULL), -1);
}

static void test_only_prefixes(void **state)
{
	struct pg_subject s;

	(void)state;
	assert_int_equal(pg_subject_parse("Re: [dpdk-dev] [PATCH v2 3/5]", &s), 0);
	assert_true(s.is_patch);
	assert_true(s.is_reply);
	assert_int_equal(s.version, 2);
	assert_int_equal(s.number, 3);
	assert_int_equal(s.total, 5);
	assert_int_equal(s.ntags, 1);
	assert_string_equal(s.tags[0], "dpdk-dev");
	assert_string_equal(s.title, "");
	assert_string_equal(s.key, "");

	assert_int_equal(pg_subject_parse("[]", &s), 0);
	assert_false(s.is_patch);
	assert_string_equal(s.title, "");
}

static void test_unterminated_bracket(void **state)
{
	struct pg_subject s;

	(void)state;
	assert_int_equal(pg_subject_parse("[PATCH v2 net/x: fix", &s), 0);
	assert_false(s.is_patch);
	assert_false(s.has_version);
	assert_string_equal(s.title, "[PATCH v2 net/x: fix");

	/* A closed group first, then an open one: the open one is title. */
	assert_int_equal(pg_subject_parse("[PATCH] [RFC net/x: fix", &s), 0);
	assert_true(s.is_patch);
	assert_false(s.is_rfc);
	assert_string_equal(s.title, "[RFC net/x: fix");

	assert_int_equal(pg_subject_parse("[", &s), 0);
	assert_string_equal(s.title, "[");
	assert_int_equal(pg_subject_parse("]", &s), 0);
	assert_string_equal(s.title, "]");
}

static void test_nested_brackets(void **state)
{
	char subj[1024];
	struct pg_subject s;
	size_t n = 0;
	int i;

	(void)state;
	/* 100 levels deep, balanced: one group, inner brackets flattened. */
	for (i = 0; i < 100; i++)
		subj[n++] = '[';
	memcpy(subj + n, "PATCH v4 2/7", 12);
	n += 12;
	for (i = 0; i < 100; i++)
		subj[n++] = ']';
	memcpy(subj + n, " net/x: deep", 13);
	assert_int_equal(pg_subject_parse(subj, &s), 0);
	assert_true(s.is_patch);
	assert_int_equal(s.version, 4);
	assert_int_equal(s.number, 2);
	assert_int_equal(s.total, 7);
	assert_string_equal(s.title, "net/x: deep");

	/* 100 opened, 99 closed: unterminated, so all of it is title. */
	subj[199 + 12] = ' ';
	assert_int_equal(pg_subject_parse(subj, &s), 0);
	assert_false(s.is_patch);
	assert_int_equal(strncmp(s.title, "[[[[", 4), 0);

	/* 100 groups in a row: tags bounded, the rest still parsed. */
	n = 0;
	for (i = 0; i < 100; i++) {
		int w = snprintf(subj + n, sizeof(subj) - n, "[t%d]", i);

		assert_true(w > 0 && (size_t)w < sizeof(subj) - n);
		n += (size_t)w;
	}
	assert_true(n + 20 < sizeof(subj));
	memcpy(subj + n, "[PATCH v3] x", 13);
	assert_int_equal(pg_subject_parse(subj, &s), 0);
	assert_true(s.is_patch);
	assert_int_equal(s.version, 3);
	assert_int_equal(s.ntags, PG_SUBJECT_TAGS_MAX);
	assert_true(s.tags_dropped);
	assert_string_equal(s.tags[0], "t0");
	assert_string_equal(s.title, "x");
}

static void test_long_subject(void **state)
{
	size_t len = 200000, i;
	char *subj = malloc(len + 1);
	struct pg_subject s;

	(void)state;
	assert_non_null(subj);
	memcpy(subj, "[PATCH v2 1/2] ", 15);
	for (i = 15; i < len; i++)
		subj[i] = i % 7 ? 'A' : ' ';
	subj[len] = '\0';
	assert_int_equal(pg_subject_parse(subj, &s), 0);
	assert_true(s.title_truncated);
	assert_int_equal(s.version, 2);
	assert_true(strlen(s.title) <= PG_SUBJECT_TITLE_MAX - 1);
	assert_true(strlen(s.title) > PG_SUBJECT_TITLE_MAX - 10);
	assert_int_not_equal(s.title[strlen(s.title) - 1], ' ');
	assert_int_equal(s.key[0], 'a');
	assert_int_equal(strlen(s.key), strlen(s.title));
	free(subj);
}

/* A title cut in the middle of multi-byte characters stays valid UTF-8. */
static void test_long_utf8_cut(void **state)
{
	static const char *const chars[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x90\xa7" };
	char subj[4096];
	struct pg_subject s;
	size_t c, n, clen;

	(void)state;
	for (c = 0; c < 3; c++) {
		clen = strlen(chars[c]);
		n = 0;
		memcpy(subj, "[PATCH] x", 9);
		n = 9;
		while (n + clen < sizeof(subj) - 1) {
			memcpy(subj + n, chars[c], clen);
			n += clen;
		}
		subj[n] = '\0';
		assert_int_equal(pg_subject_parse(subj, &s), 0);
		assert_true(s.title_truncated);
		n = strlen(s.title);
		assert_true(n <= PG_SUBJECT_TITLE_MAX - 1);
		assert_true(n > PG_SUBJECT_TITLE_MAX - 1 - clen);
		/* "x" then whole characters only. */
		assert_int_equal((n - 1) % clen, 0);
		assert_memory_equal(s.title + n - clen, chars[c], clen);
	}
}

static void test_non_ascii_title(void **state)
{
	struct pg_subject s;

	(void)state;
	assert_int_equal(pg_subject_parse("[PATCH v2] net/mlx5: fix \xe2\x80\x9cquoted\xe2\x80\x9d "
					  "T\xc3\x9cV \xe2\x80\x94 \xc3\xbcn\xc3\xaf" "c\xc3\xb8" "d\xc3\xa9",
					  &s), 0);
	assert_string_equal(s.title, "net/mlx5: fix \xe2\x80\x9cquoted\xe2\x80\x9d "
			    "T\xc3\x9cV \xe2\x80\x94 \xc3\xbcn\xc3\xaf" "c\xc3\xb8" "d\xc3\xa9");
	/* Only ASCII is lowercased: U+00DC stays as it is. */
	assert_string_equal(s.key, "net/mlx5: fix \xe2\x80\x9cquoted\xe2\x80\x9d "
			    "t\xc3\x9cv \xe2\x80\x94 \xc3\xbcn\xc3\xaf" "c\xc3\xb8" "d\xc3\xa9");

	/* Invalid UTF-8 passes through untouched rather than being judged. */
	assert_int_equal(pg_subject_parse("[PATCH] \xff\xfe bad", &s), 0);
	assert_string_equal(s.title, "\xff\xfe bad");
}

static void test_control_characters(void **state)
{
	struct pg_subject s;

	(void)state;
	assert_int_equal(pg_subject_parse("[PATCH\tv2]\x01net/x:\x1b[31m fix\x7f\r\n", &s), 0);
	assert_int_equal(s.version, 2);
	assert_string_equal(s.title, "net/x: [31m fix");
}

static void test_series_key(void **state)
{
	struct pg_subject a, b;
	char out[8];

	(void)state;
	assert_int_equal(pg_subject_parse("[PATCH v2 1/3] Net/X: fix  foo", &a), 0);
	assert_int_equal(pg_subject_parse("[PATCH 1/3] net/x: fix foo (v1)", &b), 0);
	assert_string_equal(a.key, b.key);
	assert_string_equal(a.key, "net/x: fix foo");

	assert_int_equal(pg_subject_series_key("  A  (v12)  B ", out, sizeof(out)), 3);
	assert_string_equal(out, "a b");
	assert_int_equal(pg_subject_series_key("abcdefghijk", out, sizeof(out)), 7);
	assert_string_equal(out, "abcdefg");
	/* "(v0)" and "(vx)" are not version markers. */
	assert_int_equal(pg_subject_series_key("(v0)(vx)", out, sizeof(out)), 7);
	assert_string_equal(out, "(v0)(vx");
	assert_int_equal(pg_subject_series_key("x", out, 0), -1);
	assert_int_equal(pg_subject_series_key(NULL, out, sizeof(out)), -1);
}

static void test_reply_forms(void **state)
{
	struct pg_subject s;

	(void)state;
	assert_int_equal(pg_subject_parse("re: RE: Aw: fwd: [PATCH] x", &s), 0);
	assert_true(s.is_reply);
	assert_string_equal(s.title, "x");
	/* "Re" without colon counts only before a bracket group. */
	assert_int_equal(pg_subject_parse("Re [PATCH] x", &s), 0);
	assert_true(s.is_reply);
	assert_int_equal(pg_subject_parse("Rebase the tree", &s), 0);
	assert_false(s.is_reply);
	assert_int_equal(pg_subject_parse("Reply: [PATCH] x", &s), 0);
	assert_false(s.is_reply);
	assert_false(s.is_patch);
}

static void test_test_report(void **state)
{
	struct pg_subject s;

	(void)state;
	assert_int_equal(pg_subject_parse("|FAILURE| pw139808 [PATCH v3 2/5] net/ice: fix", &s), 0);
	assert_true(s.is_test_report);
	assert_int_equal(s.report, PG_SUBJECT_REPORT_FAILURE);
	assert_int_equal(s.report_pwid, 139808);
	assert_int_equal(s.report_pwid_last, 139808);
	assert_int_equal(s.number, 2);
	assert_string_equal(s.title, "net/ice: fix");
	assert_string_equal(pg_subject_report_name(s.report), "FAILURE");
	assert_string_equal(pg_subject_report_name(PG_SUBJECT_REPORT_NONE), "-");

	/* Not an id: kept in the title. */
	assert_int_equal(pg_subject_parse("|success| pwned [PATCH] x", &s), 0);
	assert_true(s.is_test_report);
	assert_int_equal(s.report, PG_SUBJECT_REPORT_SUCCESS);
	assert_int_equal(s.report_pwid, 0);
	assert_string_equal(s.title, "pwned [PATCH] x");

	/* The marker only counts before the bracket groups. */
	assert_int_equal(pg_subject_parse("[PATCH] |SUCCESS| pw1 x", &s), 0);
	assert_false(s.is_test_report);
	assert_int_equal(pg_subject_parse("|SUCCESS|", &s), 0);
	assert_true(s.is_test_report);
	assert_string_equal(s.title, "");
	/* An id over 18 digits is not taken. */
	assert_int_equal(pg_subject_parse("|SUCCESS| pw1234567890123456789 x", &s), 0);
	assert_int_equal(s.report_pwid, 0);
}

static void test_dump_bounded(void **state)
{
	struct pg_buf b = PG_BUF_INIT(16);
	struct pg_subject s;

	(void)state;
	assert_int_equal(pg_subject_parse("[PATCH] a title longer than the buffer", &s), 0);
	assert_int_equal(pg_subject_dump(&s, &b), -1);
	assert_true(b.len <= 16);
	pg_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_cases),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_only_prefixes),
		cmocka_unit_test(test_unterminated_bracket),
		cmocka_unit_test(test_nested_brackets),
		cmocka_unit_test(test_long_subject),
		cmocka_unit_test(test_long_utf8_cut),
		cmocka_unit_test(test_non_ascii_title),
		cmocka_unit_test(test_control_characters),
		cmocka_unit_test(test_series_key),
		cmocka_unit_test(test_reply_forms),
		cmocka_unit_test(test_test_report),
		cmocka_unit_test(test_dump_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
