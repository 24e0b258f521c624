/* SPDX-License-Identifier: MIT */
/*
 * lib/token.h: the first non-blank line of a token file, its bounds and
 * its characters, and errors that name the setting and the file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "token.h"

static void test_token_read(void **state)
{
	static const struct {
		const char *text;
		size_t min, outlen;
		const char *want;	/* NULL: an error containing err_has */
		const char *err_has;
	} cases[] = {
		{ "abc\n", 1, 9, "abc", NULL },
		{ "abc", 1, 9, "abc", NULL },
		{ " \t\r\n\n  abc \t\r\nsecond line\n", 1, 9, "abc", NULL },
		{ "0123456789abcdef\n", 16, 64, "0123456789abcdef", NULL },
		{ "0123456789abcde\n", 16, 64, NULL, "at least 16 characters" },
		{ "0123456789", 1, 9, NULL, "at most 8 characters" },
		{ "", 1, 9, NULL, "empty" },
		{ " \n\t\n", 1, 9, NULL, "empty" },
		{ "a b\n", 1, 9, NULL, "printable ASCII without spaces" },
		{ "ab\x7f\n", 1, 9, NULL, "printable ASCII without spaces" },
		{ "ab\xc3\xa9\n", 1, 9, NULL, "printable ASCII without spaces" },
	};
	struct pg_err err = PG_ERR_INIT;
	char path[] = "/tmp/pg-test-token.XXXXXX", out[64];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		assert_int_equal(pg_write_file_atomic(path, cases[i].text, strlen(cases[i].text),
						      0600, &err), 0);
		pg_err_clear(&err);
		rc = pg_token_read(path, "x.token_file", cases[i].min, PG_TOKEN_WARN_SHARED, out,
				   cases[i].outlen, &err);
		if (cases[i].want) {
			assert_int_equal(rc, 0);
			assert_string_equal(out, cases[i].want);
			continue;
		}
		assert_int_equal(rc, -1);
		assert_int_equal(err.code, PG_EINVAL);
		assert_string_equal(out, "");
		assert_non_null(strstr(err.msg, "x.token_file"));
		assert_non_null(strstr(err.msg, path));
		assert_non_null(strstr(err.msg, cases[i].err_has));
	}
	unlink(path);
	assert_int_equal(pg_token_read(path, "x.token_file", 1, 0, out, sizeof(out), &err), -1);
	assert_non_null(strstr(err.msg, "x.token_file"));
	assert_non_null(strstr(err.msg, path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
