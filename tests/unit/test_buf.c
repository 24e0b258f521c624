/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/buf.c: growth, the size cap, detach and consume. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"

static void test_append_and_grow(void **state)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);

	(void)state;
	assert_string_equal(pg_buf_str(&b), "");
	for (int i = 0; i < 1000; i++)
		assert_int_equal(pg_buf_printf(&b, "%03d,", i), 0);
	assert_int_equal(b.len, 4000);
	assert_memory_equal(b.data, "000,001,002,", 12);
	assert_string_equal(b.data + 3996, "999,");
	assert_true(b.alloc > b.len);
	pg_buf_release(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
}

static void test_cap_refuses_and_keeps_contents(void **state)
{
	struct pg_buf b = PG_BUF_INIT(8);

	(void)state;
	assert_int_equal(pg_buf_adds(&b, "12345678"), 0);
	errno = 0;
	assert_int_equal(pg_buf_addch(&b, '9'), -1);
	assert_int_equal(errno, E2BIG);
	assert_string_equal(pg_buf_str(&b), "12345678");
	errno = 0;
	pg_buf_reset(&b);
	assert_int_equal(pg_buf_printf(&b, "%s", "too long text"), -1);
	assert_int_equal(errno, E2BIG);
	assert_int_equal(b.len, 0);
	pg_buf_release(&b);
}

static void test_binary_and_consume(void **state)
{
	struct pg_buf b = PG_BUF_INIT(1024);
	const char bin[] = { 'a', '\0', 'b', '\0', 'c' };

	(void)state;
	assert_int_equal(pg_buf_add(&b, bin, sizeof(bin)), 0);
	assert_int_equal(b.len, 5);
	assert_int_equal(b.data[5], '\0');
	pg_buf_consume(&b, 2);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "b\0c", 3);
	pg_buf_consume(&b, 99);
	assert_int_equal(b.len, 0);
	pg_buf_release(&b);
}

static void test_detach(void **state)
{
	struct pg_buf b = PG_BUF_INIT(64);
	size_t len = 99;
	char *s;

	(void)state;
	s = pg_buf_detach(&b, &len);
	assert_non_null(s);
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	free(s);
	assert_int_equal(pg_buf_adds(&b, "hello"), 0);
	s = pg_buf_detach(&b, &len);
	assert_string_equal(s, "hello");
	assert_int_equal(len, 5);
	assert_null(b.data);
	free(s);
}

/* A failed append reported as the rest of perfgate reports errors. */
static void test_buf_err(void **state)
{
	struct pg_buf b = PG_BUF_INIT(8);
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(pg_buf_adds(&b, "123456789"), -1);
	assert_int_equal(pg_buf_err(&b, &err, "field '%s'", "name"), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_string_equal(err.msg, "field 'name': over the 8-byte limit");
	errno = ENOMEM;
	assert_int_equal(pg_buf_err(&b, &err, "x"), -1);
	assert_int_equal(err.code, PG_ENOMEM);
	assert_string_equal(err.msg, "x: out of memory");
	pg_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_err),
		cmocka_unit_test(test_append_and_grow),
		cmocka_unit_test(test_cap_refuses_and_keeps_contents),
		cmocka_unit_test(test_binary_and_consume),
		cmocka_unit_test(test_detach),
	};
	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
