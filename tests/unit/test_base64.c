/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for lib/base64.c: the RFC 4648 vectors, round trips of every
 * length around the padding cases and of binary bytes, the buffer's cap,
 * and text that is not base64 (wrong length, characters outside the
 * alphabet, padding in the middle).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base64.h"
#include "buf.h"

static void test_vectors(void **state)
{
	static const char *const vec[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		struct pg_buf e = PG_BUF_INIT(1024), d = PG_BUF_INIT(1024);

		assert_int_equal(pg_base64_encode(vec[i][0], strlen(vec[i][0]), &e, &err), 0);
		assert_string_equal(pg_buf_str(&e), vec[i][1]);
		assert_int_equal(pg_base64_decode(vec[i][1], strlen(vec[i][1]), &d, &err), 0);
		assert_int_equal(d.len, strlen(vec[i][0]));
		assert_memory_equal(pg_buf_str(&d), vec[i][0], d.len);
		pg_buf_release(&e);
		pg_buf_release(&d);
	}
}

static void test_round_trip(void **state)
{
	unsigned char bytes[1030];
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 131 + 7);	/* NULs and high bytes too */
	for (size_t n = 0; n < sizeof(bytes); n += (n < 10 ? 1 : 97)) {
		struct pg_buf e = PG_BUF_INIT(4096), d = PG_BUF_INIT(4096);

		assert_int_equal(pg_base64_encode(bytes, n, &e, &err), 0);
		assert_int_equal(e.len, (n + 2) / 3 * 4);
		assert_int_equal(pg_base64_decode(e.data, e.len, &d, &err), 0);
		assert_int_equal(d.len, n);
		if (n)
			assert_memory_equal(d.data, bytes, n);
		pg_buf_release(&e);
		pg_buf_release(&d);
	}
}

static void test_invalid(void **state)
{
	static const char *const bad[] = {
		"Zg=", "Zm9", "Z", "Zm9v\n", "Zm9v Zm9v", "Zm9v*m9v", "Zg==Zm9v", "Z===",
		"=Zm9", "Zm=v", "Zm9v\0Zm9",
	};
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pg_buf d = PG_BUF_INIT(1024);
		size_t len = i + 1 == sizeof(bad) / sizeof(bad[0]) ? 8 : strlen(bad[i]);

		pg_err_clear(&err);
		if (pg_base64_decode(bad[i], len, &d, &err) == 0) {
			print_error("'%s' decoded as base64\n", bad[i]);
			fail();
		}
		assert_int_equal(err.code, PG_EINVAL);
		pg_buf_release(&d);
	}
}

static void test_cap(void **state)
{
	struct pg_buf e = PG_BUF_INIT(7), d = PG_BUF_INIT(5);
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	/* "foobar" encodes to 8 characters, one over the cap. */
	assert_int_equal(pg_base64_encode("foobar", 6, &e, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	/* ... and decodes to 6 bytes, over a cap of 5. */
	assert_int_equal(pg_base64_decode("Zm9vYmFy", 8, &d, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	/* Appends: what was there stays. */
	pg_buf_release(&d);
	pg_buf_init(&d, 64);
	assert_int_equal(pg_buf_adds(&d, "x:"), 0);
	assert_int_equal(pg_base64_decode("Zm9v", 4, &d, &err), 0);
	assert_string_equal(pg_buf_str(&d), "x:foo");
	pg_buf_release(&e);
	pg_buf_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
