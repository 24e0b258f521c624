/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/fmt.c: a text that fits, one that does not (an error
 * for pg_fmt, a visible cut at a character boundary for pg_fmt_cut). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fmt.h"

static void test_fmt(void **state)
{
	char b[8];

	(void)state;
	assert_int_equal(pg_fmt(b, sizeof(b), "%s-%d", "ab", 42), 5);
	assert_string_equal(b, "ab-42");
	assert_int_equal(pg_fmt(b, sizeof(b), "%s", "1234567"), 7);
	errno = 0;
	assert_int_equal(pg_fmt(b, sizeof(b), "%s", "12345678"), -1);
	assert_int_equal(errno, E2BIG);
	assert_int_equal(strlen(b), 7);
	assert_int_equal(pg_fmt(b, 1, "%s", ""), 0);
	assert_string_equal(b, "");
}

static void test_fmt_cut(void **state)
{
	char b[10], tiny[3];

	(void)state;
	assert_int_equal(pg_fmt_cut(b, sizeof(b), "%s", "short"), 5);
	assert_string_equal(b, "short");
	assert_int_equal(pg_fmt_cut(b, sizeof(b), "%s", "123456789"), 9);
	assert_string_equal(b, "123456789");
	assert_int_equal(pg_fmt_cut(b, sizeof(b), "%s", "1234567890"), 9);
	assert_string_equal(b, "123456...");
	/* "é" is two bytes: a cut never splits it. */
	assert_int_equal(pg_fmt_cut(b, sizeof(b), "%s", "1234\xc3\xa9xxxxx"), 9);
	assert_string_equal(b, "1234\xc3\xa9...");
	assert_int_equal(pg_fmt_cut(b, sizeof(b), "%s", "12345\xc3\xa9xxxx"), 8);
	assert_string_equal(b, "12345...");
	assert_int_equal(pg_fmt_cut(tiny, sizeof(tiny), "%s", "abcdef"), 2);
	assert_string_equal(tiny, "ab");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_fmt_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
