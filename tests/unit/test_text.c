/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/text.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "text.h"

static void test_hexval(void **state)
{
	(void)state;
	assert_int_equal(pg_hexval('0'), 0);
	assert_int_equal(pg_hexval('9'), 9);
	assert_int_equal(pg_hexval('a'), 10);
	assert_int_equal(pg_hexval('F'), 15);
	assert_int_equal(pg_hexval('g'), -1);
	assert_int_equal(pg_hexval(' '), -1);
	assert_int_equal(pg_hexval(0xc3), -1);
}

static void test_utf8_cut(void **state)
{
	/* "aé€😀" = 61 | c3 a9 | e2 82 ac | f0 9f 98 80 */
	const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";

	(void)state;
	assert_int_equal(pg_utf8_cut(s, 0), 0);
	assert_int_equal(pg_utf8_cut(s, 1), 1);
	assert_int_equal(pg_utf8_cut(s, 2), 1);	/* half of é */
	assert_int_equal(pg_utf8_cut(s, 3), 3);
	assert_int_equal(pg_utf8_cut(s, 4), 3);	/* a third of € */
	assert_int_equal(pg_utf8_cut(s, 5), 3);
	assert_int_equal(pg_utf8_cut(s, 6), 6);
	assert_int_equal(pg_utf8_cut(s, 9), 6);	/* 3/4 of the emoji */
	assert_int_equal(pg_utf8_cut(s, 10), 10);
	/* Invalid bytes are not cut further. */
	assert_int_equal(pg_utf8_cut("ab\x80\x80\x80\x80", 6), 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hexval),
		cmocka_unit_test(test_utf8_cut),
	};
	return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
