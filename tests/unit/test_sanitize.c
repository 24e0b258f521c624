/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/sanitize.c and the JSON helpers built on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "sanitize.h"

#define FFFD "\xef\xbf\xbd"

/* Sanitise len bytes of s in mode and compare with want (a C string). */
static void check_len(const char *s, size_t len, enum pg_san_mode mode, const char *want)
{
	struct pg_buf b = PG_BUF_INIT(1 << 20);

	assert_int_equal(pg_sanitize(&b, s, len, mode), 0);
	assert_string_equal(pg_buf_str(&b), want);
	assert_int_equal(b.len, strlen(want));
	/* Clean exactly when nothing changed, and the output is clean. */
	assert_int_equal(pg_sanitize_is_clean(s, len, mode),
			 len == strlen(want) && memcmp(s, want, len) == 0);
	assert_true(pg_sanitize_is_clean(b.data, b.len, mode));
	pg_buf_release(&b);
}

static void check(const char *s, enum pg_san_mode mode, const char *want)
{
	check_len(s, strlen(s), mode, want);
}

static void check_json(const char *s, const char *want)
{
	struct pg_buf b = PG_BUF_INIT(1 << 20);

	assert_int_equal(pg_sanitize_json(&b, s, strlen(s)), 0);
	assert_string_equal(pg_buf_str(&b), want);
	pg_buf_release(&b);
}

static void test_plain(void **state)
{
	(void)state;
	check("", PG_SAN_LINE, "");
	check("[PATCH v2 1/3] mempool: fix \\n in a printf", PG_SAN_LINE,
	      "[PATCH v2 1/3] mempool: fix \\n in a printf");
	/* Valid UTF-8 of every length stays: é € 😀 and U+FFFD itself. */
	check("Morten Br\xc3\xb8rup \xe2\x82\xac \xf0\x9f\x98\x80 " FFFD, PG_SAN_LINE,
	      "Morten Br\xc3\xb8rup \xe2\x82\xac \xf0\x9f\x98\x80 " FFFD);
	/* The last code points before and after the escaped ranges. */
	check("\xc2\xa0 \xe2\x80\xa9x", PG_SAN_LINE, "\xc2\xa0 \\u2029x");
	check("\xe2\x80\xa9\xe2\x80\xaf \xe2\x81\xa5\xe2\x81\xaa", PG_SAN_LINE,
	      "\\u2029\xe2\x80\xaf \xe2\x81\xa5\xe2\x81\xaa");
}

static void test_c0_del(void **state)
{
	(void)state;
	/* ESC [2J clears a terminal; BEL rings. */
	check("a\x1b[2J\x07z", PG_SAN_LINE, "a\\x1b[2J\\x07z");
	check("del\x7f", PG_SAN_LINE, "del\\x7f");
	check_len("nul\0x", 5, PG_SAN_LINE, "nul\\x00x");
	check("\x01\x1f", PG_SAN_BLOCK, "\\x01\\x1f");
}

static void test_modes(void **state)
{
	(void)state;
	/* One line: a forged log line stays on the line it is in. */
	check("GET /x\r\n2026-01-01 info api: forged\t!", PG_SAN_LINE,
	      "GET /x\\x0d\\x0a2026-01-01 info api: forged\\x09!");
	/* A block keeps LF, TAB and CRLF, not a lone CR. */
	check("line 1\n\tline 2\r\nover\rwrite\r", PG_SAN_BLOCK,
	      "line 1\n\tline 2\r\nover\\x0dwrite\\x0d");
}

static void test_c1(void **state)
{
	(void)state;
	/* U+0080, U+0085 (NEL), U+009B (CSI), U+009F as UTF-8. */
	check("a\xc2\x80 \xc2\x85 \xc2\x9b" "2J \xc2\x9fz", PG_SAN_LINE,
	      "a\\u0080 \\u0085 \\u009b2J \\u009fz");
	/* Raw 0x9b (CSI in 8-bit terminals) is not UTF-8. */
	check("x\x9b" "2Jy", PG_SAN_LINE, "x" FFFD "2Jy");
	check("\x80\x9f", PG_SAN_BLOCK, FFFD FFFD);
}

static void test_bidi(void **state)
{
	(void)state;
	/* RLO "evil" PDF: "the file exe.txt" shows as "txt.exe". */
	check("fix \xe2\x80\xae" "txt.exe\xe2\x80\xac done", PG_SAN_LINE,
	      "fix \\u202etxt.exe\\u202c done");
	check("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xad", PG_SAN_BLOCK, "\\u202a\\u202b\\u202d");
	check("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", PG_SAN_LINE,
	      "\\u2066\\u2067\\u2068\\u2069");
	check("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", PG_SAN_LINE, "\\u200e\\u200f\\u061c");
	check("a\xe2\x80\xa8" "b", PG_SAN_BLOCK, "a\\u2028b");
	assert_true(pg_sanitize_cp_unsafe(0x202e, PG_SAN_BLOCK));
	assert_false(pg_sanitize_cp_unsafe(0x200d, PG_SAN_LINE));	/* ZWJ: emoji */
	assert_false(pg_sanitize_cp_unsafe('\n', PG_SAN_BLOCK));
	assert_true(pg_sanitize_cp_unsafe('\n', PG_SAN_LINE));
}

static void test_invalid(void **state)
{
	(void)state;
	/* Stray continuation bytes and bytes never in UTF-8: one each. */
	check("a\x80\xbf" "b\xfe\xff", PG_SAN_LINE, "a" FFFD FFFD "b" FFFD FFFD);
	/* Lead bytes above U+10FFFF's. */
	check("\xf5\x80\x80\x80", PG_SAN_LINE, FFFD FFFD FFFD FFFD);
	check("\xf4\x90\x80\x80", PG_SAN_LINE, FFFD FFFD FFFD FFFD);
	/* U+10FFFF itself is valid. */
	check("\xf4\x8f\xbf\xbf", PG_SAN_LINE, "\xf4\x8f\xbf\xbf");
	/* A lead byte followed by something that does not continue it. */
	check("\xc3(", PG_SAN_LINE, FFFD "(");
	check("\xe2\x82(", PG_SAN_LINE, FFFD "(");
}

static void test_overlong(void **state)
{
	(void)state;
	/* '/' as two, three and four bytes; NUL as two (Java's "modified
	 * UTF-8"); ESC as two: none may sneak through as the character. */
	check("\xc0\xaf", PG_SAN_LINE, FFFD FFFD);
	check("\xe0\x80\xaf", PG_SAN_LINE, FFFD FFFD FFFD);
	check("\xf0\x80\x80\xaf", PG_SAN_LINE, FFFD FFFD FFFD FFFD);
	check("\xc0\x80", PG_SAN_LINE, FFFD FFFD);
	check("\xc1\x9b", PG_SAN_LINE, FFFD FFFD);
	/* The smallest three- and four-byte forms are fine. */
	check("\xe0\xa0\x80\xf0\x90\x80\x80", PG_SAN_LINE, "\xe0\xa0\x80\xf0\x90\x80\x80");
}

static void test_surrogates(void **state)
{
	(void)state;
	/* U+D800 and U+DFFF (CESU-8), and a pair. */
	check("\xed\xa0\x80", PG_SAN_LINE, FFFD FFFD FFFD);
	check("\xed\xbf\xbf", PG_SAN_LINE, FFFD FFFD FFFD);
	check("\xed\xa0\xbd\xed\xb8\x80", PG_SAN_LINE, FFFD FFFD FFFD FFFD FFFD FFFD);
	/* U+D7FF, just below, is valid. */
	check("\xed\x9f\xbf", PG_SAN_LINE, "\xed\x9f\xbf");
}

static void test_truncated(void **state)
{
	(void)state;
	/* A sequence cut by the end of the input: one U+FFFD for what is
	 * there (the maximal subpart). */
	check("ab\xc3", PG_SAN_LINE, "ab" FFFD);
	check("ab\xe2\x82", PG_SAN_LINE, "ab" FFFD);
	check("ab\xf0\x9f\x98", PG_SAN_LINE, "ab" FFFD);
	/* Cut by a length inside the string, not by a NUL. */
	check_len("\xe2\x82\xac", 2, PG_SAN_LINE, FFFD);
}

static void test_decode(void **state)
{
	int32_t cp;

	(void)state;
	assert_int_equal(pg_utf8_decode("A", 1, &cp), 1);
	assert_int_equal(cp, 'A');
	assert_int_equal(pg_utf8_decode("\xe2\x80\xae", 3, &cp), 3);
	assert_int_equal(cp, 0x202e);
	assert_int_equal(pg_utf8_decode("\xf0\x9f\x98\x80", 4, &cp), 4);
	assert_int_equal(cp, 0x1f600);
	assert_int_equal(pg_utf8_decode("\xf0\x9f\x98", 3, &cp), 3);
	assert_int_equal(cp, -1);
	assert_int_equal(pg_utf8_decode("\xed\xa0\x80", 3, &cp), 1);
	assert_int_equal(cp, -1);
}

static void test_long(void **state)
{
	/* 64 KiB of every byte value in turn: the output is clean, and a
	 * buffer too small fails with a character-aligned prefix. */
	size_t n = 65536;
	char *s = malloc(n);
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT), small = PG_BUF_INIT(1001);

	(void)state;
	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		s[i] = (char)(i * 7 + (i >> 8));
	assert_int_equal(pg_sanitize(&b, s, n, PG_SAN_LINE), 0);
	assert_true(b.len >= n / 2 && b.len <= n * PG_SAN_GROWTH);
	assert_true(pg_sanitize_is_clean(b.data, b.len, PG_SAN_LINE));
	assert_int_equal(pg_sanitize(&small, s, n, PG_SAN_BLOCK), -1);
	assert_true(small.len <= 1001);
	assert_true(pg_sanitize_is_clean(small.data, small.len, PG_SAN_BLOCK));
	pg_buf_release(&b);
	pg_buf_release(&small);
	/* A long clean line comes out as it went in. */
	memset(s, 'x', n - 1);
	s[n - 1] = '\0';
	{
		char *d = pg_sanitize_dup(s, PG_SAN_LINE);

		assert_non_null(d);
		assert_string_equal(d, s);
		free(d);
	}
	free(s);
}

static void test_dup(void **state)
{
	char *d;

	(void)state;
	d = pg_sanitize_dup(NULL, PG_SAN_LINE);
	assert_non_null(d);
	assert_string_equal(d, "");
	free(d);
	d = pg_sanitize_dup("<id\x1b]0;pwned\x07@evil>", PG_SAN_LINE);
	assert_string_equal(d, "<id\\x1b]0;pwned\\x07@evil>");
	free(d);
}

static void test_json_doc(void **state)
{
	(void)state;
	/* Structure and ASCII escapes untouched; C1, bidi, DEL escaped;
	 * invalid bytes \ufffd; pretty-printing white space kept. */
	check_json("{\n\t\"a\": \"x\\u001b\\\"\"\r\n}", "{\n\t\"a\": \"x\\u001b\\\"\"\r\n}");
	check_json("[\"\xc2\x9b" "2J\xe2\x80\xae\x7f\"]", "[\"\\u009b2J\\u202e\\u007f\"]");
	check_json("[\"\x9b\xc3\xa9\xed\xa0\x80\xc3\"]",
		   "[\"\\ufffd\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd\"]");
	check_json("[\"\x01\"]", "[\"\\u0001\"]");
}

static void test_json_print_safe(void **state)
{
	/* What cJSON makes of a hostile string is valid JSON, valid UTF-8,
	 * and parses back to the sanitised reading of the same text. */
	cJSON *o = cJSON_CreateObject(), *back = NULL;
	struct pg_err err = PG_ERR_INIT;
	char *text;

	(void)state;
	assert_non_null(cJSON_AddStringToObject(o, "subject",
						"\x1b[2J\xc2\x85\xe2\x80\xae\x9b\xc0\xaf ok \xc3\xa9"));
	text = pg_json_print_safe(o, false);
	assert_non_null(text);
	assert_string_equal(text, "{\"subject\":\"\\u001b[2J\\u0085\\u202e\\ufffd\\ufffd\\ufffd"
			    " ok \xc3\xa9\"}");
	assert_int_equal(pg_json_parse(text, strlen(text), &back, &err), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(back, "subject")),
			    "\x1b[2J\xc2\x85\xe2\x80\xae" FFFD FFFD FFFD " ok \xc3\xa9");
	free(text);
	cJSON_Delete(back);
	cJSON_Delete(o);
	/* A clean document is cJSON's own text, pretty-printing included. */
	o = cJSON_CreateObject();
	assert_non_null(cJSON_AddStringToObject(o, "name", "Br\xc3\xb8rup\ttab"));
	text = pg_json_print_safe(o, true);
	assert_string_equal(text, "{\n\t\"name\":\t\"Br\xc3\xb8rup\\ttab\"\n}");
	free(text);
	cJSON_Delete(o);
}

static void test_json_sanitize_strings(void **state)
{
	cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray();

	(void)state;
	assert_non_null(cJSON_AddStringToObject(o, "title", "a\nb\xe2\x80\xae"));
	assert_non_null(cJSON_AddStringToObject(o, "k\x1b", "v"));
	assert_non_null(cJSON_AddNumberToObject(o, "n", 3));
	cJSON_AddItemToArray(arr, cJSON_CreateString("\x9b"));
	cJSON_AddItemToObject(o, "list", arr);
	/* A constant key that needs a copy stops being constant. */
	cJSON_AddItemToObjectCS(o, "const\x07", cJSON_CreateString("c"));
	assert_int_equal(pg_json_sanitize_strings(o, PG_SAN_LINE), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "title")),
			    "a\\x0ab\\u202e");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "k\\x1b")), "v");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(arr, 0)), FFFD);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "const\\x07")), "c");
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "n")), 3);
	cJSON_Delete(o);	/* frees the replaced keys without a leak (ASan) */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_c0_del),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_c1),
		cmocka_unit_test(test_bidi),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_overlong),
		cmocka_unit_test(test_surrogates),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_dup),
		cmocka_unit_test(test_json_doc),
		cmocka_unit_test(test_json_print_safe),
		cmocka_unit_test(test_json_sanitize_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
