/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/bench_exec.c: reading a job's benchmark, expanding
 * its arguments, and driving runs of programs that replay real captured
 * outputs of Debian's dpdk-testpmd and dpdk-test 22.11 (tests/bench/, run
 * by tests/agent/fakebench/): stdin held for the measured interval, a
 * test stopped after N result lines, a failed test, a timeout, a program
 * that dies early, a cancelled job.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench_exec.h"
#include "json.h"

static cJSON *parse(const char *text)
{
	struct pg_err err = PG_ERR_INIT;
	cJSON *j = NULL;

	assert_int_equal(pg_json_parse(text, strlen(text), &j, &err), 0);
	return j;
}

static int def_of(const char *text, struct bench_def *d, struct pg_err *err)
{
	cJSON *j = parse(text);
	int rc = bench_def_from_json(j, d, err);

	cJSON_Delete(j);
	return rc;
}

#define TESTPMD_DEF(extra) \
	"{\"name\":\"testpmd_io\",\"program\":\"fake-testpmd\"," \
	"\"args\":[\"--file-prefix={file_prefix}\",\"--dir={build_dir}\",\"{{x}}\"]," \
	"\"env\":{\"FAKE_CAPTURE\":\"@CAP@\"},\"stdin\":\"hold\",\"duration_s\":1," \
	"\"parser\":\"testpmd\",\"gate\":[\"fwd.rx_pps\"],\"timeout_s\":30" extra "}"

static void test_def_from_json(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct bench_def d;

	(void)state;
	assert_int_equal(def_of(TESTPMD_DEF(""), &d, &err), 0);
	assert_string_equal(d.name, "testpmd_io");
	assert_true(d.stdin_hold);
	assert_int_equal(d.duration_s, 1);
	assert_string_equal(d.args[2], "{{x}}");
	assert_null(d.args[3]);
	assert_string_equal(d.env[0], "FAKE_CAPTURE=@CAP@");
	assert_false(d.subset);
	assert_int_equal(d.warmup_runs, 0);
	bench_def_release(&d);
	assert_int_equal(def_of(TESTPMD_DEF(",\"warmup_runs\":2"), &d, &err), 0);
	assert_int_equal(d.warmup_runs, 2);
	bench_def_release(&d);
	assert_int_equal(def_of(TESTPMD_DEF(",\"warmup_runs\":11"), &d, &err), -1);
	assert_non_null(strstr(err.msg, "warmup_runs"));

	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"app/test/dpdk-test\",\"args\":[],"
				"\"parser\":\"mempool_perf\",\"gate\":[\"mempool.*\"],"
				"\"timeout_s\":60,\"mode\":\"subset\",\"subset\":{\"time_s\":1}}",
				&d, &err), 0);
	assert_true(d.subset);
	assert_false(d.stdin_hold);
	assert_non_null(d.subset_json);
	bench_def_release(&d);

	/* Each fault named. */
	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"../../bin/sh\",\"args\":[],"
				"\"parser\":\"testpmd\",\"gate\":[\"x\"],\"timeout_s\":5}", &d, &err), -1);
	assert_non_null(strstr(err.msg, "benchmark mp: field 'program'"));
	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"/bin/sh\",\"args\":[],"
				"\"parser\":\"testpmd\",\"gate\":[\"x\"],\"timeout_s\":5}", &d, &err), -1);
	assert_non_null(strstr(err.msg, "field 'program'"));
	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"a\",\"args\":[],"
				"\"parser\":\"perl\",\"gate\":[\"x\"],\"timeout_s\":5}", &d, &err), -1);
	assert_non_null(strstr(err.msg, "unknown parser 'perl'"));
	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"a\",\"args\":[],\"stdin\":\"hold\","
				"\"parser\":\"testpmd\",\"gate\":[\"x\"],\"timeout_s\":5}", &d, &err), -1);
	assert_non_null(strstr(err.msg, "required with stdin 'hold'"));
	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"a\",\"args\":[],\"stdin\":\"hold\","
				"\"duration_s\":5,\"parser\":\"testpmd\",\"gate\":[\"x\"],"
				"\"timeout_s\":5}", &d, &err), -1);
	assert_non_null(strstr(err.msg, "not less than timeout_s"));
	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"a\",\"args\":[],"
				"\"parser\":\"mempool_perf\",\"gate\":[\"x\"],\"timeout_s\":5}",
				&d, &err), -1);
	assert_non_null(strstr(err.msg, "field 'subset': required"));
	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"a\",\"args\":[1],"
				"\"parser\":\"testpmd\",\"gate\":[\"x\"],\"timeout_s\":5}", &d, &err), -1);
	assert_non_null(strstr(err.msg, "field 'args[0]'"));
	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"a\",\"args\":[],\"env\":{\"A=B\":\"1\"},"
				"\"parser\":\"testpmd\",\"gate\":[\"x\"],\"timeout_s\":5}", &d, &err), -1);
	assert_non_null(strstr(err.msg, "bad variable name 'A=B'"));
	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"a\",\"args\":[],"
				"\"parser\":\"testpmd\",\"gate\":[],\"timeout_s\":5}", &d, &err), -1);
	assert_non_null(strstr(err.msg, "field 'gate': empty"));
}

static void test_expand_arg(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	char *s = NULL;

	(void)state;
	assert_int_equal(bench_expand_arg("--file-prefix={file_prefix}", "pg1", "/b", &s, &err), 0);
	assert_string_equal(s, "--file-prefix=pg1");
	free(s);
	assert_int_equal(bench_expand_arg("{build_dir}/x{{y}}{file_prefix}", "p", "/b", &s, &err), 0);
	assert_string_equal(s, "/b/x{y}p");
	free(s);
	assert_int_equal(bench_expand_arg("plain", "p", "/b", &s, &err), 0);
	assert_string_equal(s, "plain");
	free(s);
	assert_int_equal(bench_expand_arg("{lcores}", "p", "/b", &s, &err), -1);
	assert_non_null(strstr(err.msg, "unknown placeholder"));
	assert_int_equal(bench_expand_arg("a}b", "p", "/b", &s, &err), -1);
}

/* A run of a def whose env FAKE_CAPTURE names a capture under tests/bench. */
struct fixture {
	char dir[PATH_MAX];
	char log[PATH_MAX];
	char capture[PATH_MAX];
	int stop_after_calls;	/* stopped() turns true after this many calls; 0 never */
	int calls;
};

static bool fx_stopped(void *arg)
{
	struct fixture *f = arg;

	return f->stop_after_calls && ++f->calls >= f->stop_after_calls;
}

static int run(struct fixture *f, const char *def_json, const char *capture,
	       const char *const *env_extra, int stop_after, struct bench_run_result *r)
{
	struct pg_err err = PG_ERR_INIT;
	struct bench_run_spec s;
	struct bench_def d;
	char cwd[1024];
	char *text = strdup(def_json), *p;
	int rc;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(f->dir, sizeof(f->dir), "%s/tests/agent/fakebench", cwd);
	snprintf(f->capture, sizeof(f->capture), "%s/tests/bench/%s", cwd, capture);
	snprintf(f->log, sizeof(f->log), "/tmp/pg-test-bench-exec.%ld.log", (long)getpid());
	unlink(f->log);
	/* Put the capture's path in place of @CAP@. */
	p = strstr(text, "@CAP@");
	assert_non_null(p);
	{
		char buf[8192];

		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(p - text), text, f->capture, p + 5);
		free(text);
		text = strdup(buf);
	}
	if (def_of(text, &d, &err) < 0)
		fail_msg("%s: %s", text, err.msg);
	free(text);
	memset(&s, 0, sizeof(s));
	s.def = &d;
	s.build_dir = f->dir;
	s.file_prefix = "pgtest";
	s.log_path = f->log;
	s.env_extra = env_extra;
	s.stop_after_lines = stop_after;
	s.stopped = fx_stopped;
	s.arg = f;
	rc = bench_run_once(&s, r, &err);
	bench_def_release(&d);
	return rc;
}

static const struct bench_sample *find(const struct bench_run_result *r, const char *key)
{
	return bench_output_find(&r->out, key);
}

static void test_testpmd_hold(void **state)
{
	struct fixture f = { .stop_after_calls = 0 };
	struct bench_run_result r;
	const struct bench_sample *rx, *pps;

	(void)state;
	assert_int_equal(run(&f, TESTPMD_DEF(""), "testpmd/cap-io.in", NULL, 0, &r), 0);
	assert_true(r.ok);
	assert_non_null(strstr(r.detail, "testpmd_io: ok, 7 results"));
	/* The forwarding time is the held interval, give or take a poll. */
	assert_true(r.fwd_seconds >= 1.0 && r.fwd_seconds < 5.0);
	rx = find(&r, "fwd.rx_packets");
	pps = find(&r, "fwd.rx_pps");
	assert_non_null(rx);
	assert_non_null(pps);
	assert_true(rx->value == 13518016);
	assert_true(pps->value > 13518016 / 5.0 && pps->value <= 13518016 / 1.0);
	assert_true(pps->value * r.fwd_seconds > 13518016 * 0.999 &&
		    pps->value * r.fwd_seconds < 13518016 * 1.001);
	bench_run_result_release(&r);
	/* The run's output went to the log file. */
	{
		FILE *fp = fopen(f.log, "r");
		char line[256];
		bool bye = false;

		assert_non_null(fp);
		while (fgets(line, sizeof(line), fp))
			bye |= strncmp(line, "Bye...", 6) == 0;
		fclose(fp);
		assert_true(bye);
		unlink(f.log);
	}
}

static void test_testpmd_dies_early(void **state)
{
	struct fixture f = { .stop_after_calls = 0 };
	const char *env[] = { "FAKE_NOWAIT=1", NULL };
	struct bench_run_result r;

	(void)state;
	assert_int_equal(run(&f, TESTPMD_DEF(""), "testpmd/cap-io.in", env, 0, &r), 0);
	assert_false(r.ok);
	assert_non_null(strstr(r.detail, "no result in its output (exited 1)"));
	bench_run_result_release(&r);
	unlink(f.log);

	/* An EAL failure (real capture with -m 16): its error in the detail. */
	assert_int_equal(run(&f, TESTPMD_DEF(""), "testpmd/cap-m16.in", env, 0, &r), 0);
	assert_false(r.ok);
	assert_non_null(strstr(r.detail, "first error: "));
	bench_run_result_release(&r);
	unlink(f.log);
}

#define MEMPOOL_DEF(extra) \
	"{\"name\":\"mp\",\"program\":\"fake-dpdk-test\",\"args\":[]," \
	"\"env\":{\"FAKE_CAPTURE\":\"@CAP@\"},\"parser\":\"mempool_perf\"," \
	"\"gate\":[\"mempool.*\"],\"mode\":\"full\"" extra "}"

static void test_mempool_stop_after_lines(void **state)
{
	struct fixture f = { .stop_after_calls = 0 };
	const char *env[] = { "FAKE_HANG=1", "FAKE_DELAY=0.05", NULL };
	struct bench_run_result r;

	(void)state;
	/* The capture has 7 result lines and the fake then hangs, as the real
	 * test would for an hour: stopped after 3, what was printed kept. */
	assert_int_equal(run(&f, MEMPOOL_DEF(",\"timeout_s\":60"), "mempool/cap-2211.in", env,
			     3, &r), 0);
	assert_true(r.ok);
	assert_true(r.out.n >= 3 && r.out.n <= 7);
	assert_non_null(strstr(r.detail, "stopped after the requested result lines"));
	assert_non_null(find(&r, "mempool.nocache.cores1.keep32.get1.put1.const0"));
	bench_run_result_release(&r);
	unlink(f.log);

	/* Ended by itself: all 7. */
	assert_int_equal(run(&f, MEMPOOL_DEF(",\"timeout_s\":60"), "mempool/cap-2211.in", NULL,
			     0, &r), 0);
	assert_true(r.ok);
	assert_int_equal(r.out.n, 7);
	bench_run_result_release(&r);
	unlink(f.log);
}

static void test_mempool_failures(void **state)
{
	struct fixture f = { .stop_after_calls = 0 };
	const char *failed[] = { "FAKE_RC=255", NULL };
	const char *hang[] = { "FAKE_HANG=1", NULL };
	struct bench_run_result r;

	(void)state;
	assert_int_equal(run(&f, MEMPOOL_DEF(",\"timeout_s\":60"), "mempool/cap-2211-m16.in",
			     failed, 0, &r), 0);
	assert_false(r.ok);
	assert_non_null(strstr(r.detail, "the test reported failure (exited 255)"));
	bench_run_result_release(&r);
	unlink(f.log);

	assert_int_equal(run(&f, MEMPOOL_DEF(",\"timeout_s\":1"), "mempool/cap-2211.in", hang, 0,
			     &r), 0);
	assert_false(r.ok);
	assert_false(r.stopped);
	assert_non_null(strstr(r.detail, "timed out"));
	assert_int_equal(r.out.n, 7);
	bench_run_result_release(&r);
	unlink(f.log);

	/* The job is cancelled while the test runs. */
	f.stop_after_calls = 5;
	assert_int_equal(run(&f, MEMPOOL_DEF(",\"timeout_s\":60"), "mempool/cap-2211.in", hang,
			     0, &r), 0);
	assert_false(r.ok);
	assert_true(r.stopped);
	bench_run_result_release(&r);
	unlink(f.log);
}

static void test_missing_program(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct bench_run_result r;
	struct bench_run_spec s;
	struct bench_def d;

	(void)state;
	assert_int_equal(def_of("{\"name\":\"mp\",\"program\":\"app/test/dpdk-test\",\"args\":[],"
				"\"parser\":\"mempool_perf\",\"gate\":[\"x\"],\"timeout_s\":5,"
				"\"mode\":\"full\"}", &d, &err), 0);
	memset(&s, 0, sizeof(s));
	s.def = &d;
	s.build_dir = "/nonexistent-build";
	s.file_prefix = "p";
	s.log_path = "/tmp/pg-test-bench-exec-missing.log";
	assert_int_equal(bench_run_once(&s, &r, &err), -1);
	assert_non_null(strstr(err.msg, "benchmark mp: spawn '/nonexistent-build/app/test/dpdk-test'"));
	bench_def_release(&d);
	unlink(s.log_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_def_from_json),
		cmocka_unit_test(test_expand_arg),
		cmocka_unit_test(test_testpmd_hold),
		cmocka_unit_test(test_testpmd_dies_early),
		cmocka_unit_test(test_mempool_stop_after_lines),
		cmocka_unit_test(test_mempool_failures),
		cmocka_unit_test(test_missing_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
