/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/text.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <limits.h>

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

static void test_parse(void **state)
{
	long long v = 7;
	int64_t id = 7;

	(void)state;
	assert_int_equal(pg_parse_ll("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(pg_parse_ll("-5", -10, 10, &v), 0);
	assert_int_equal(v, -5);
	v = 7;
	assert_int_equal(pg_parse_ll("101", 0, 100, &v), -1);
	assert_int_equal(pg_parse_ll("-1", 0, 100, &v), -1);
	assert_int_equal(pg_parse_ll("", 0, 100, &v), -1);
	assert_int_equal(pg_parse_ll(NULL, 0, 100, &v), -1);
	assert_int_equal(pg_parse_ll("12x", 0, 100, &v), -1);
	assert_int_equal(pg_parse_ll("99999999999999999999", 0, LLONG_MAX, &v), -1);
	assert_int_equal(v, 7);
	assert_int_equal(pg_parse_id("9223372036854775807", &id), 0);
	assert_true(id == INT64_MAX);
	id = 7;
	assert_int_equal(pg_parse_id("0", &id), -1);
	assert_int_equal(pg_parse_id("-3", &id), -1);
	assert_int_equal(pg_parse_id("abc", &id), -1);
	assert_true(id == 7);
}

static void test_parse_double(void **state)
{
	double d = 7;

	(void)state;
	assert_int_equal(pg_parse_double("5", 0, 100, &d), 0);
	assert_true(d == 5);
	assert_int_equal(pg_parse_double("0.05", 0, 0.5, &d), 0);
	assert_true(d == 0.05);
	d = 7;
	/* (min, max]: min itself is out, max in. */
	assert_int_equal(pg_parse_double("0", 0, 100, &d), -1);
	assert_int_equal(pg_parse_double("100", 0, 100, &d), 0);
	d = 7;
	assert_int_equal(pg_parse_double("100.5", 0, 100, &d), -1);
	assert_int_equal(pg_parse_double("", 0, 100, &d), -1);
	assert_int_equal(pg_parse_double(NULL, 0, 100, &d), -1);
	assert_int_equal(pg_parse_double("5x", 0, 100, &d), -1);
	assert_int_equal(pg_parse_double("nan", 0, 100, &d), -1);
	assert_int_equal(pg_parse_double("1e999", 0, 1e300, &d), -1);
	assert_true(d == 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hexval),
		cmocka_unit_test(test_utf8_cut),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_double),
	};
	return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
