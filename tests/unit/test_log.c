/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/log.c: levels, per-component overrides, line format. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

/* Run fn with stderr sent to a file; return what was written (malloc'd). */
static char *capture_stderr(void (*fn)(void))
{
	char path[] = "/tmp/pg-test-log.XXXXXX";
	int fd = mkstemp(path), saved;
	char *text = calloc(1, 8192);
	ssize_t n;

	assert_true(fd >= 0);
	assert_non_null(text);
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	fn();
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	n = pread(fd, text, 8191, 0);
	assert_true(n >= 0);
	close(fd);
	unlink(path);
	return text;
}

static void emit_some(void)
{
	pg_log_error("store", "disk %s", "full");
	pg_log_info("store", "opened");
	pg_log_debug("store", "detail");
	pg_log_debug("http", "hidden");
	pg_log_warn("http", "slow");
}

static void test_levels_and_overrides(void **state)
{
	char *out;

	(void)state;
	pg_log_init("perfgate-test");
	assert_int_equal(pg_log_set_levels("warn,store=debug"), 0);
	assert_true(pg_log_enabled(PG_LOG_DEBUG, "store"));
	assert_false(pg_log_enabled(PG_LOG_INFO, "http"));
	out = capture_stderr(emit_some);
	assert_non_null(strstr(out, " perfgate-test["));
	assert_non_null(strstr(out, "] error store: disk full\n"));
	assert_non_null(strstr(out, "] info store: opened\n"));
	assert_non_null(strstr(out, "] debug store: detail\n"));
	assert_null(strstr(out, "hidden"));
	assert_non_null(strstr(out, "] warn http: slow\n"));
	/* Lines start with an ISO 8601 UTC time stamp with milliseconds. */
	assert_int_equal(out[4], '-');
	assert_int_equal(out[10], 'T');
	assert_int_equal(out[23], 'Z');
	free(out);
	assert_int_equal(pg_log_set_levels("info"), 0);
}

static void test_bad_specs_change_nothing(void **state)
{
	(void)state;
	assert_int_equal(pg_log_set_levels("error"), 0);
	assert_int_equal(pg_log_set_levels("loud"), -1);
	assert_int_equal(pg_log_set_levels("info,store=loud"), -1);
	assert_int_equal(pg_log_set_levels("info,,x=debug"), -1);
	assert_int_equal(pg_log_set_levels("info,=debug"), -1);
	assert_false(pg_log_enabled(PG_LOG_WARN, "store"));
	assert_int_equal(pg_log_level_parse("warning"), PG_LOG_WARN);
	assert_int_equal(pg_log_set_levels("info"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels_and_overrides),
		cmocka_unit_test(test_bad_specs_change_nothing),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
