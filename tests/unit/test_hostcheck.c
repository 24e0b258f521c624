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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loadavg),
		cmocka_unit_test(test_hugepages),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_gather_lab_host),
		cmocka_unit_test(test_gather_this_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
