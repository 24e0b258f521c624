/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/hostgate.c: the host class read from a job spec,
 * CPU lists, each requirement met and unmet (the message names the fact,
 * what the host has and what the class requires), the hugepage check on
 * fake /proc and /sys trees, and the max_load wait on a fake clock and a
 * scripted load source (no sleeping, no timing).
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fsutil.h"
#include "hostgate.h"
#include "rmtreefx.h"

static void test_class_from_spec(void **state)
{
	const char *text =
		"{\"host_class\": \"intel\", \"host\": {\"labels\": {\"vendor\": \"intel\"},"
		" \"lcores\": \"2-5\", \"memory_mb\": 2048, \"hugepages\": true,"
		" \"numa_node\": 1, \"max_load\": 1.5, \"max_load_wait_s\": 120,"
		" \"require\": {\"governor\": \"performance\", \"smt\": \"off\","
		" \"isolated_cpus\": true}}}";
	struct pg_err err = PG_ERR_INIT;
	struct hostgate_class c;
	cJSON *j = cJSON_Parse(text), *bare = cJSON_Parse("{\"host_class\": \"demo\"}");
	cJSON *bad = cJSON_Parse("{\"host\": {\"lcores\": \"0-1\", \"memory_mb\": 64,"
				 " \"max_load\": \"high\"}}");

	(void)state;
	assert_non_null(j);
	assert_int_equal(hostgate_class_from_spec(j, &c, &err), 0);
	assert_string_equal(c.name, "intel");
	assert_string_equal(c.lcores, "2-5");
	assert_int_equal(c.memory_mb, 2048);
	assert_true(c.hugepages);
	assert_int_equal(c.numa_node, 1);
	assert_true(c.has_max_load && c.max_load == 1.5);
	assert_int_equal(c.max_load_wait_s, 120);
	assert_string_equal(c.governor, "performance");
	assert_null(c.turbo);
	assert_string_equal(c.smt, "off");
	assert_true(c.isolated_cpus);
	assert_false(c.nohz_full);

	/* no host object: nothing asked */
	assert_int_equal(hostgate_class_from_spec(bare, &c, &err), 0);
	assert_null(c.lcores);
	assert_false(c.has_max_load || c.hugepages || c.isolated_cpus);
	assert_null(c.governor);

	assert_int_equal(hostgate_class_from_spec(bad, &c, &err), -1);
	assert_non_null(strstr(err.msg, "max_load"));
	cJSON_Delete(j);
	cJSON_Delete(bare);
	cJSON_Delete(bad);
}

static void test_cpulist(void **state)
{
	bool set[HOSTGATE_MAX_CPUS];

	(void)state;
	assert_int_equal(hostgate_cpulist_parse("2-5,8", set), 5);
	assert_true(set[2] && set[5] && set[8] && !set[6] && !set[1]);
	assert_int_equal(hostgate_cpulist_parse("", set), 0);
	assert_int_equal(hostgate_cpulist_parse("1-3\n", set), 3);
	assert_int_equal(hostgate_cpulist_parse("2-", set), -1);
	assert_int_equal(hostgate_cpulist_parse("5-2", set), -1);
	assert_int_equal(hostgate_cpulist_parse("a", set), -1);
	assert_int_equal(hostgate_cpulist_parse("9999", set), -1);
	assert_int_equal(hostgate_cpus_within("2-5", "1-7"), 1);
	assert_int_equal(hostgate_cpus_within("2-5", "2-4"), 0);
	assert_int_equal(hostgate_cpus_within("2-5", ""), 0);
	assert_int_equal(hostgate_cpus_within("2-", "2-5"), -1);
}

/* A tuned lab host's facts. */
static void lab_host(struct hostcheck *h)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->governor, sizeof(h->governor), "%s", "performance");
	snprintf(h->turbo, sizeof(h->turbo), "%s", "off");
	snprintf(h->smt, sizeof(h->smt), "%s", "off");
	snprintf(h->isolated, sizeof(h->isolated), "%s", "2-7");
	snprintf(h->nohz_full, sizeof(h->nohz_full), "%s", "2-7");
}

static void lab_class(struct hostgate_class *c)
{
	memset(c, 0, sizeof(*c));
	c->name = "intel";
	c->lcores = "2-5";
	c->memory_mb = 2048;
	c->numa_node = -1;
	c->governor = "performance";
	c->turbo = "off";
	c->smt = "off";
	c->isolated_cpus = true;
	c->nohz_full = true;
}

static void test_require(void **state)
{
	struct hostcheck h;
	struct hostgate_class c;
	char msg[HOSTGATE_MSG_MAX];

	(void)state;
	lab_host(&h);
	lab_class(&c);
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");

	snprintf(h.governor, sizeof(h.governor), "%s", "powersave");
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "host does not meet host class intel: governor is powersave, "
			    "the class requires performance");
	snprintf(h.governor, sizeof(h.governor), "%s", "none");	/* a VM without cpufreq */
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "host does not meet host class intel: governor is none, "
			    "the class requires performance");
	lab_host(&h);

	snprintf(h.turbo, sizeof(h.turbo), "%s", "on");
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "host does not meet host class intel: turbo is on, the class "
			    "requires off");
	snprintf(h.turbo, sizeof(h.turbo), "%s", "unknown");
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "turbo is unknown"));
	lab_host(&h);

	snprintf(h.smt, sizeof(h.smt), "%s", "on");
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "host does not meet host class intel: smt is on, the class "
			    "requires off");
	/* off is met by every way of having no siblings */
	snprintf(h.smt, sizeof(h.smt), "%s", "notsupported");
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 0);
	snprintf(h.smt, sizeof(h.smt), "%s", "forceoff");
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 0);
	c.smt = "on";
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "smt is forceoff, the class requires on"));
	lab_class(&c);
	lab_host(&h);

	snprintf(h.isolated, sizeof(h.isolated), "%s", "2-4");
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "host does not meet host class intel: isolated_cpus is '2-4', "
			    "the class requires its lcores 2-5 in it");
	h.isolated[0] = '\0';
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "isolated_cpus is '(none)'"));
	c.isolated_cpus = false;	/* not required: not judged */
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 0);
	lab_host(&h);
	lab_class(&c);

	snprintf(h.nohz_full, sizeof(h.nohz_full), "%s", "6-7");
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "host does not meet host class intel: nohz_full is '6-7', "
			    "the class requires its lcores 2-5 in it");

	/* a class that requires nothing is met by any host, this VM's too */
	memset(&h, 0, sizeof(h));
	snprintf(h.governor, sizeof(h.governor), "%s", "none");
	snprintf(h.turbo, sizeof(h.turbo), "%s", "unknown");
	snprintf(h.smt, sizeof(h.smt), "%s", "unknown");
	memset(&c, 0, sizeof(c));
	c.name = "demo";
	c.lcores = "0-1";
	assert_int_equal(hostgate_require_check(&h, &c, msg, sizeof(msg)), 0);
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

#define MOUNTS_1G "sysfs /sys sysfs rw 0 0\n" \
	"hugetlbfs /dev/hugepages hugetlbfs rw,relatime,gid=998,mode=1770,pagesize=1024M 0 0\n"
#define NODE0_1G "sys/devices/system/node/node0/hugepages/hugepages-1048576kB/free_hugepages"

static void test_hugepages(void **state)
{
	char root[] = "/tmp/pg-hostgate-XXXXXX";
	struct hostgate_class c;
	struct hostgate_huge hp;
	char msg[HOSTGATE_MSG_MAX];

	(void)state;
	assert_non_null(mkdtemp(root));
	lab_class(&c);
	c.hugepages = true;
	c.numa_node = 0;

	/* not mounted */
	put(root, "proc/mounts", "sysfs /sys sysfs rw 0 0\n");
	assert_int_equal(hostgate_hugepages_check(root, &c, &hp, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "hugepages: /dev/hugepages is not mounted; host class intel "
			    "needs 2048 MB of hugepages there");
	/* mounted, but not hugetlbfs */
	put(root, "proc/mounts", "tmpfs /dev/hugepages tmpfs rw 0 0\n");
	assert_int_equal(hostgate_hugepages_check(root, &c, &hp, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "hugepages: /dev/hugepages is tmpfs, not hugetlbfs");

	/* 1 GB pages on node 0: one free is not enough, two are */
	put(root, "proc/mounts", MOUNTS_1G);
	put(root, NODE0_1G, "1\n");
	assert_int_equal(hostgate_hugepages_check(root, &c, &hp, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "hugepages: 1 free page of 1048576 kB on node 0 (1024 MB), host "
			    "class intel needs 2048 MB");
	put(root, NODE0_1G, "2\n");
	assert_int_equal(hostgate_hugepages_check(root, &c, &hp, msg, sizeof(msg)), 0);
	assert_int_equal(hp.page_kb, 1048576);
	assert_int_equal(hp.free_pages, 2);
	assert_int_equal(hp.node, 0);

	/* node 1 has no 1 GB pages at all */
	c.numa_node = 1;
	assert_int_equal(hostgate_hugepages_check(root, &c, &hp, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "hugepages: no 1048576 kB pages on node 1"));

	/* no pagesize= option: the default size of meminfo, all nodes */
	c.numa_node = -1;
	put(root, "proc/mounts", "hugetlbfs /dev/hugepages hugetlbfs rw,relatime 0 0\n");
	put(root, "proc/meminfo", "MemTotal: 100 kB\nHugePages_Total: 2048\n"
	    "HugePages_Free: 1000\nHugepagesize: 2048 kB\n");
	put(root, "sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "1000\n");
	assert_int_equal(hostgate_hugepages_check(root, &c, &hp, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "hugepages: 1000 free pages of 2048 kB (2000 MB), host class "
			    "intel needs 2048 MB");
	put(root, "sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "1024\n");
	assert_int_equal(hostgate_hugepages_check(root, &c, &hp, msg, sizeof(msg)), 0);
	assert_int_equal(hp.page_kb, 2048);
	assert_int_equal(hp.free_pages, 1024);

	/* a class without hugepages is not checked (this VM's demo) */
	c.hugepages = false;
	assert_int_equal(hostgate_hugepages_check("/nonexistent", &c, &hp, msg, sizeof(msg)), 0);
	assert_int_equal(fx_rm_tree(root), 0);
}

/* A scripted load source on a fake clock: poll i reads load[i] and
 * busy[i] (the last values repeat) and takes read_ms; sleeps advance the
 * clock. */
struct fake_src {
	int64_t now;
	const double *load, *busy;
	unsigned int n, i;
	unsigned int read_ms;
	unsigned int sleeps;
	int64_t slept_ms;
	int stop_after_sleeps;	/* 0: never */
	int fail_at;		/* poll number that fails, 0: none */
};

static int fake_read(void *arg, double *load1, double *busy, struct pg_err *err)
{
	struct fake_src *f = arg;
	unsigned int k = f->i < f->n ? f->i : f->n - 1;

	if (f->fail_at && (int)f->i + 1 == f->fail_at)
		return pg_err_set(err, PG_EIO, "load check: /proc/loadavg: gone");
	*load1 = f->load[k];
	*busy = f->busy[k];
	f->i++;
	f->now += f->read_ms;
	return 0;
}

static int64_t fake_now(void *arg)
{
	return ((struct fake_src *)arg)->now;
}

static int fake_sleep(void *arg, unsigned int ms)
{
	struct fake_src *f = arg;

	f->now += ms;
	f->slept_ms += ms;
	f->sleeps++;
	return f->stop_after_sleeps && (int)f->sleeps >= f->stop_after_sleeps;
}

static void fake_init(struct fake_src *f, struct hostgate_load_src *src, const double *load,
		      const double *busy, unsigned int n)
{
	memset(f, 0, sizeof(*f));
	f->now = 1000000;
	f->load = load;
	f->busy = busy;
	f->n = n;
	f->read_ms = 250;
	src->read = fake_read;
	src->now_ms = fake_now;
	src->sleep_ms = fake_sleep;
	src->arg = f;
}

static void test_wait_load(void **state)
{
	static const double calm_load[] = { 0.3 }, calm_busy[] = { 0.01 };
	static const double load[] = { 3.2, 2.5, 1.8, 0.9 }, busy[] = { 0.9, 0.5, 0.1, 0.05 };
	static const double never[] = { 3.2 }, low[] = { 0.5 }, hot[] = { 0.4 };
	struct pg_err err = PG_ERR_INIT;
	struct hostgate_load_src src;
	struct hostgate_load_wait w;
	struct fake_src f;
	char msg[HOSTGATE_MSG_MAX];

	(void)state;
	/* calm at once: one poll, no wait */
	fake_init(&f, &src, calm_load, calm_busy, 1);
	assert_int_equal(hostgate_wait_load(&src, 1.0, 0.125, 5000, 300000, &w, &err), 0);
	assert_true(w.calm);
	assert_int_equal(w.polls, 1);
	assert_int_equal(w.waited_ms, 0);
	assert_int_equal(f.sleeps, 0);

	/* calms down at the 4th poll: 3 sleeps of 5 s, 4 reads of 250 ms */
	fake_init(&f, &src, load, busy, 4);
	assert_int_equal(hostgate_wait_load(&src, 1.0, 0.125, 5000, 300000, &w, &err), 0);
	assert_true(w.calm);
	assert_int_equal(w.polls, 4);
	assert_int_equal(f.sleeps, 3);
	assert_int_equal(w.waited_ms, 3 * 5000 + 3 * 250);
	assert_true(w.load1 == 0.9);

	/* never calms down: stops at the bound, the last sleep cut to fit */
	fake_init(&f, &src, never, calm_busy, 1);
	assert_int_equal(hostgate_wait_load(&src, 1.0, 0.125, 5000, 300000, &w, &err), 0);
	assert_false(w.calm);
	assert_int_equal(w.waited_ms, 300000 + 250);	/* the last read after the bound */
	assert_int_equal(f.slept_ms + (int64_t)(w.polls - 1) * 250, w.waited_ms);
	hostgate_load_reason(&w, 1.0, 0.25, 2, 4, msg, sizeof(msg));
	assert_string_equal(msg, "host busy: load 3.20 over max_load 1 for 300 s before run 4");

	/* the load is fine, but other work runs now */
	fake_init(&f, &src, low, hot, 1);
	assert_int_equal(hostgate_wait_load(&src, 1.0, 0.125, 5000, 60000, &w, &err), 0);
	assert_false(w.calm);
	assert_int_equal(w.waited_ms, 60000 + 250);
	hostgate_load_reason(&w, 1.0, 0.25, 2, 1, msg, sizeof(msg));
	assert_string_equal(msg, "host busy: 0.80 CPU of other work over the limit 0.25 for 60 s "
			    "before run 1 (load 0.50 within max_load 1)");

	/* stopped while waiting */
	fake_init(&f, &src, never, calm_busy, 1);
	f.stop_after_sleeps = 2;
	assert_int_equal(hostgate_wait_load(&src, 1.0, 0.125, 5000, 300000, &w, &err), 1);
	assert_int_equal(w.polls, 2);

	/* a read that fails */
	fake_init(&f, &src, never, calm_busy, 1);
	f.fail_at = 3;
	assert_int_equal(hostgate_wait_load(&src, 1.0, 0.125, 5000, 300000, &w, &err), -1);
	assert_string_equal(err.msg, "load check: /proc/loadavg: gone");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_from_spec),
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_require),
		cmocka_unit_test(test_hugepages),
		cmocka_unit_test(test_wait_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
