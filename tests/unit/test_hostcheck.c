/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/hostcheck.c: the /proc parsers on real and
 * malformed text, busy arithmetic, and gathering from a fake lab host
 * (performance governor, turbo off, SMT off, isolated CPUs, hugepages)
 * and from this machine's real /proc and /sys.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fsutil.h"
#include "hostcheck.h"
#include "rmtreefx.h"

static void test_loadavg(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	double a, b, c;
	const char *ok = "2.04 0.98 0.85 7/110 7797\n";

	(void)state;
	assert_int_equal(hostcheck_parse_loadavg(ok, strlen(ok), &a, &b, &c, &err), 0);
	assert_true(a == 2.04 && b == 0.98 && c == 0.85);
	assert_int_equal(hostcheck_parse_loadavg("1.0 x 2.0 1/1 1", 15, &a, &b, &c, &err), -1);
	assert_non_null(strstr(err.msg, "malformed"));
	assert_int_equal(hostcheck_parse_loadavg("", 0, &a, &b, &c, &err), -1);
	assert_int_equal(hostcheck_parse_loadavg("-1 0 0 1/1 1", 12, &a, &b, &c, &err), -1);
}

static void test_hugepages(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	uint64_t t, f, k;
	const char *lab = "MemTotal:       263834412 kB\nHugePages_Total:    1024\n"
			  "HugePages_Free:      1000\nHugePages_Rsvd:        0\n"
			  "Hugepagesize:       2048 kB\n";
	const char *none = "MemTotal:       263834412 kB\n";
	const char *bad = "HugePages_Total:  lots\n";

	(void)state;
	assert_int_equal(hostcheck_parse_hugepages(lab, strlen(lab), &t, &f, &k, &err), 0);
	assert_true(t == 1024 && f == 1000 && k == 2048);
	assert_int_equal(hostcheck_parse_hugepages(none, strlen(none), &t, &f, &k, &err), 0);
	assert_true(t == 0 && f == 0 && k == 0);
	assert_int_equal(hostcheck_parse_hugepages(bad, strlen(bad), &t, &f, &k, &err), -1);
	assert_non_null(strstr(err.msg, "HugePages_Total"));
}

static void test_stat(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	uint64_t t, i;
	/* A real first line (Linux 6.1, 2 vCPUs). */
	const char *s = "cpu  2255 34 2290 22625563 6290 127 456 0 0 0\ncpu0 1 2 3 4\n";
	const char *old = "cpu  10 0 10 80\n";

	(void)state;
	assert_int_equal(hostcheck_parse_stat(s, strlen(s), &t, &i, &err), 0);
	assert_true(t == 2255 + 34 + 2290 + 22625563 + 6290 + 127 + 456);
	assert_true(i == 22625563 + 6290);
	assert_int_equal(hostcheck_parse_stat(old, strlen(old), &t, &i, &err), 0);
	assert_true(t == 100 && i == 80);
	assert_int_equal(hostcheck_parse_stat("cpu0 1 2 3 4\n", 13, &t, &i, &err), -1);
	assert_int_equal(hostcheck_parse_stat("cpu  1 2\n", 9, &t, &i, &err), -1);
	assert_int_equal(hostcheck_parse_stat("cpu  1 2 x 4\n", 13, &t, &i, &err), -1);

	assert_true(hostcheck_busy_share(100, 80, 200, 130) == 0.5);
	assert_true(hostcheck_busy_share(100, 80, 100, 80) == 0);
	assert_true(hostcheck_busy_share(100, 80, 200, 180) == 0);
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	struct pg_err err = PG_ERR_INIT;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	assert_int_equal(pg_mkdir_p(dir, 0755, &err), 0);
	assert_int_equal(pg_write_file_atomic(path, text, strlen(text), 0644, &err), 0);
}

static void rm_rf(const char *root)
{
	assert_int_equal(fx_rm_tree(root), 0);
}

/* A tuned lab host: what the fingerprint must say about it. */
static void test_gather_lab_host(void **state)
{
	char root[] = "/tmp/pg-test-hostcheck.XXXXXX";
	struct pg_err err = PG_ERR_INIT;
	struct hostcheck h;
	cJSON *j;
	char *txt;

	(void)state;
	assert_non_null(mkdtemp(root));
	put(root, "proc/loadavg", "0.03 0.05 0.01 1/900 4242\n");
	put(root, "proc/meminfo", "MemTotal: 1 kB\nHugePages_Total:    8\nHugePages_Free:       8\n"
	    "Hugepagesize:    1048576 kB\n");
	put(root, "proc/stat", "cpu  1 0 1 98 0 0 0 0 0 0\n");
	put(root, "sys/devices/system/cpu/online", "0-3,8-11\n");
	put(root, "sys/devices/system/cpu/isolated", "2-3,10-11\n");
	put(root, "sys/devices/system/cpu/nohz_full", "2-3,10-11\n");
	put(root, "sys/devices/system/cpu/smt/control", "off\n");
	put(root, "sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
	put(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
	put(root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");

	assert_int_equal(hostcheck_gather(&h, root, 0, &err), 0);
	assert_string_equal(h.governor, "performance");
	assert_string_equal(h.turbo, "off");
	assert_string_equal(h.smt, "off");
	assert_string_equal(h.isolated, "2-3,10-11");
	assert_string_equal(h.nohz_full, "2-3,10-11");
	assert_int_equal(h.cpus, 8);
	assert_true(h.hugepages_total == 8 && h.hugepage_kb == 1048576);
	assert_false(h.busy);
	assert_true(h.busy_share < 0);

	/* One CPU on another governor, and a load above half a CPU each. */
	put(root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n");
	put(root, "proc/loadavg", "4.50 3.00 1.00 9/900 4242\n");
	assert_int_equal(hostcheck_gather(&h, root, 0, &err), 0);
	assert_non_null(strstr(h.governor, "mixed: "));
	assert_non_null(strstr(h.governor, "performance"));
	assert_non_null(strstr(h.governor, "powersave"));
	assert_true(h.busy);
	assert_non_null(strstr(h.warning, "load average 4.50 on 8 CPUs"));

	j = hostcheck_to_json(&h);
	assert_non_null(j);
	txt = cJSON_PrintUnformatted(j);
	assert_non_null(strstr(txt, "\"turbo\":\"off\""));
	assert_non_null(strstr(txt, "\"busy\":true"));
	assert_non_null(strstr(txt, "\"warning\":\"host busy"));
	free(txt);
	cJSON_Delete(j);

	/* A VM: nothing under cpufreq or smt. */
	rm_rf(root);
	put(root, "proc/loadavg", "0.00 0.00 0.00 1/9 1\n");
	put(root, "proc/meminfo", "MemTotal: 1 kB\n");
	assert_int_equal(hostcheck_gather(&h, root, 0, &err), 0);
	assert_string_equal(h.governor, "none");
	assert_string_equal(h.turbo, "unknown");
	assert_string_equal(h.smt, "unknown");
	assert_string_equal(h.isolated, "");

	/* No /proc/loadavg: not a host to measure on. */
	rm_rf(root);
	put(root, "proc/meminfo", "MemTotal: 1 kB\n");
	assert_int_equal(hostcheck_gather(&h, root, 0, &err), -1);
	assert_non_null(strstr(err.msg, "/proc/loadavg"));
	rm_rf(root);
}

/* This machine, sampled: the numbers are whatever they are, but they are
 * read and in range. */
static void test_gather_this_host(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct hostcheck h;

	(void)state;
	assert_int_equal(hostcheck_gather(&h, NULL, 200, &err), 0);
	assert_true(h.busy_share >= 0 && h.busy_share <= 1);
	assert_true(h.cpus >= 1);
	assert_true(h.load1 >= 0);
	hostcheck_compiler("cc", h.compiler, sizeof(h.compiler));
	assert_true(strncmp(h.compiler, "cc (", 4) == 0 && strchr(h.compiler, '.'));
	hostcheck_compiler("/nonexistent/cc", h.compiler, sizeof(h.compiler));
	assert_string_equal(h.compiler, "");
}

/* A scripted sampler: the shares in turn, then the last one for ever;
 * fails at index fail_at (when >= 0). */
struct script {
	const double *shares;
	int n, next, fail_at, stop_after;
	unsigned int ms_seen;
};

static int script_sample(void *arg, unsigned int ms, double *share, struct pg_err *err)
{
	struct script *s = arg;
	int i = s->next < s->n ? s->next : s->n - 1;

	s->ms_seen = ms;
	if (s->next++ == s->fail_at)
		return pg_err_set(err, PG_EIO, "scripted failure"), -1;
	*share = s->shares[i];
	return 0;
}

static bool script_stopped(void *arg)
{
	struct script *s = arg;

	return s->stop_after >= 0 && s->next >= s->stop_after;
}

/* The quiet check: quiet at once, quiet after waiting, busy past the
 * bound (measured anyway), stopped while waiting, a failing sample. */
static void test_wait_quiet(void **state)
{
	static const double quiet[] = { 0.01 };
	static const double settles[] = { 0.6, 0.5, 0.05 };
	static const double busy[] = { 0.9 };
	struct script s = { quiet, 1, 0, -1, -1, 0 };
	struct hostcheck_quiet q;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(hostcheck_wait_quiet(script_sample, &s, 250, 10000, 0.125,
					      script_stopped, &s, &q, &err), 0);
	assert_true(q.quiet);
	assert_int_equal(q.samples, 1);
	assert_int_equal(q.waited_ms, 0);
	assert_int_equal(s.ms_seen, 250);

	s = (struct script){ settles, 3, 0, -1, -1, 0 };
	assert_int_equal(hostcheck_wait_quiet(script_sample, &s, 250, 10000, 0.125,
					      script_stopped, &s, &q, &err), 0);
	assert_true(q.quiet);
	assert_int_equal(q.samples, 3);
	assert_int_equal(q.waited_ms, 500);
	assert_float_equal(q.share, 0.05, 1e-12);

	/* Never quiet: 1 s of waiting at 250 ms a sample is 4 more samples,
	 * then the run goes ahead, marked busy. */
	s = (struct script){ busy, 1, 0, -1, -1, 0 };
	assert_int_equal(hostcheck_wait_quiet(script_sample, &s, 250, 1000, 0.125,
					      script_stopped, &s, &q, &err), 0);
	assert_false(q.quiet);
	assert_int_equal(q.samples, 5);
	assert_int_equal(q.waited_ms, 1000);
	assert_float_equal(q.share, 0.9, 1e-12);

	/* No budget left: one sample, no wait. */
	s = (struct script){ busy, 1, 0, -1, -1, 0 };
	assert_int_equal(hostcheck_wait_quiet(script_sample, &s, 250, 0, 0.125, NULL, NULL, &q,
					      &err), 0);
	assert_false(q.quiet);
	assert_int_equal(q.samples, 1);
	assert_int_equal(q.waited_ms, 0);

	/* Cancelled while waiting. */
	s = (struct script){ busy, 1, 0, -1, 2, 0 };
	assert_int_equal(hostcheck_wait_quiet(script_sample, &s, 250, 10000, 0.125,
					      script_stopped, &s, &q, &err), 1);
	assert_int_equal(s.next, 2);

	/* A sample that fails is the check's error. */
	s = (struct script){ settles, 3, 0, 1, -1, 0 };
	assert_int_equal(hostcheck_wait_quiet(script_sample, &s, 250, 10000, 0.125, NULL, NULL,
					      &q, &err), -1);
	assert_non_null(strstr(err.msg, "scripted failure"));
}

/* hostcheck_sample_busy on a fake /proc/stat: no time passes between the
 * two readings of a file that does not change (0), and a missing file is
 * an error that names it. */
static void test_sample_busy_fake(void **state)
{
	char root[] = "/tmp/pg-test-hostcheck.XXXXXX";
	struct pg_err err = PG_ERR_INIT;
	double share = -1;

	(void)state;
	assert_non_null(mkdtemp(root));
	put(root, "proc/stat", "cpu  10 0 10 80 0 0 0 0 0 0\n");
	assert_int_equal(hostcheck_sample_busy(root, 1, &share, &err), 0);
	assert_float_equal(share, 0, 1e-12);
	rm_rf(root);
	assert_int_equal(hostcheck_sample_busy(root, 1, &share, &err), -1);
	assert_non_null(strstr(err.msg, "/proc/stat"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loadavg),
		cmocka_unit_test(test_hugepages),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_gather_lab_host),
		cmocka_unit_test(test_gather_this_host),
		cmocka_unit_test(test_wait_quiet),
		cmocka_unit_test(test_sample_busy_fake),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
