/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/agent_facts.c: the /proc parsers on captured and
 * hand-made files (tests/agent/, see its README), CPU lists, the labels
 * filled from facts, and gathering from a fake /proc and /sys tree.
 *
 * PG_UPDATE_GOLDEN=1 rewrites the .ok files from what the parsers say
 * (then read the diff before keeping it).
 */
#include <dirent.h>
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

#include "agent_facts.h"
#include "buf.h"
#include "fsutil.h"
#include "json.h"

typedef void (*render_fn)(const struct pg_buf *in, struct pg_buf *out);

static void render_cpuinfo(const struct pg_buf *in, struct pg_buf *out)
{
	struct pg_err err = PG_ERR_INIT;
	struct agent_cpuinfo ci;

	if (agent_cpuinfo_parse(pg_buf_str(in), in->len, &ci, &err) < 0) {
		assert_int_equal(pg_buf_printf(out, "error: %s\n", err.msg), 0);
		return;
	}
	assert_int_equal(pg_buf_printf(out, "vendor=%s\nmodel=%s\nmicrocode=%s\nprocessors=%u\n"
				       "implementer=%s\npart=%s\n", ci.vendor, ci.model,
				       ci.microcode, ci.processors, ci.implementer, ci.part), 0);
}

static void render_meminfo(const struct pg_buf *in, struct pg_buf *out)
{
	struct pg_err err = PG_ERR_INIT;
	uint64_t kb = 0;

	if (agent_meminfo_total_kb(pg_buf_str(in), in->len, &kb, &err) < 0)
		assert_int_equal(pg_buf_printf(out, "error: %s\n", err.msg), 0);
	else
		assert_int_equal(pg_buf_printf(out, "mem_total_kb=%llu\n",
					       (unsigned long long)kb), 0);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every DIR/NAME.in rendered equals DIR/NAME.ok; returns how many. */
static int run_golden(const char *dir, render_fn render)
{
	struct pg_err err = PG_ERR_INIT;
	const char *update = getenv("PG_UPDATE_GOLDEN");
	char *names[64];
	size_t n = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len > 3 && strcmp(de->d_name + len - 3, ".in") == 0) {
			assert_true(n < 64);
			names[n++] = strndup(de->d_name, len - 3);
		}
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	for (size_t i = 0; i < n; i++) {
		struct pg_buf in = PG_BUF_INIT(1 << 22), want = PG_BUF_INIT(1 << 20);
		struct pg_buf got = PG_BUF_INIT(1 << 20);
		char path[512];

		snprintf(path, sizeof(path), "%s/%s.in", dir, names[i]);
		assert_int_equal(pg_read_file(path, &in, &err), 0);
		render(&in, &got);
		snprintf(path, sizeof(path), "%s/%s.ok", dir, names[i]);
		if (update && strcmp(update, "1") == 0)
			assert_int_equal(pg_write_file_atomic(path, got.data, got.len, 0644, &err), 0);
		assert_int_equal(pg_read_file(path, &want, &err), 0);
		if (strcmp(pg_buf_str(&want), pg_buf_str(&got)) != 0) {
			print_error("%s/%s: expected\n%sgot\n%s", dir, names[i], pg_buf_str(&want),
				    pg_buf_str(&got));
			fail();
		}
		pg_buf_release(&in);
		pg_buf_release(&want);
		pg_buf_release(&got);
		free(names[i]);
	}
	return (int)n;
}

static void test_cpuinfo_golden(void **state)
{
	(void)state;
	assert_true(run_golden("tests/agent/cpuinfo", render_cpuinfo) >= 10);
}

static void test_meminfo_golden(void **state)
{
	(void)state;
	assert_true(run_golden("tests/agent/meminfo", render_meminfo) >= 4);
}

/* The first CPU's values win; lines without a colon or with a huge key
 * are skipped; no NUL terminator is needed. */
static void test_cpuinfo_edges(void **state)
{
	static const char text[] = "garbage line\n"
		"vendor_id : AuthenticAMD\n"
		"model name\t:   AMD   EPYC   7763 64-Core Processor   \n"
		"processor : 0\n"
		"vendor_id : GenuineIntel\n"
		"model name : second\n"
		"processor : 1";
	struct pg_err err = PG_ERR_INIT;
	struct agent_cpuinfo ci;
	char big[600];

	(void)state;
	assert_int_equal(agent_cpuinfo_parse(text, sizeof(text) - 1, &ci, &err), 0);
	assert_string_equal(ci.vendor, "amd");
	assert_string_equal(ci.model, "AMD EPYC 7763 64-Core Processor");
	assert_int_equal(ci.processors, 2);
	/* Cut in the middle: only what is inside len counts. */
	assert_int_equal(agent_cpuinfo_parse(text, 13, &ci, &err), -1);
	/* A model name longer than the field is cut, not overflowed. */
	memset(big, 'x', sizeof(big));
	memcpy(big, "processor : 0\nmodel name : ", 27);
	assert_int_equal(agent_cpuinfo_parse(big, sizeof(big), &ci, &err), 0);
	assert_int_equal(strlen(ci.model), AGENT_FACT_MAX - 1);
}

static void test_cpulist(void **state)
{
	static const struct {
		const char *in;
		int want;
	} cases[] = {
		{ "0\n", 1 }, { "0-1\n", 2 }, { "0-3,8,10-11\n", 7 }, { "5", 1 },
		{ "0-63", 64 }, { "", -1 }, { "\n", -1 }, { "3-1", -1 }, { "0,", -1 },
		{ ",0", -1 }, { "0-", -1 }, { "a", -1 }, { "0 1", -1 }, { "0-99999999", -1 },
		{ "-1", -1 },
	};
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = agent_cpulist_count(cases[i].in, strlen(cases[i].in), &err);

		if (got != cases[i].want) {
			print_error("cpulist '%s': got %d, expected %d\n", cases[i].in, got,
				    cases[i].want);
			fail();
		}
	}
	assert_non_null(strstr(err.msg, "CPU list"));
}

static void test_labels(void **state)
{
	const char *keys[] = { "pool", "vendor" }, *values[] = { "demo", "intel" };
	struct agent_facts f;
	cJSON *l;

	(void)state;
	memset(&f, 0, sizeof(f));
	snprintf(f.cpu.vendor, sizeof(f.cpu.vendor), "amd");
	snprintf(f.arch, sizeof(f.arch), "x86_64");
	/* A configured vendor wins; arch comes from the facts. */
	l = agent_labels_json(keys, values, 2, &f);
	assert_non_null(l);
	assert_string_equal(cJSON_GetObjectItem(l, "vendor")->valuestring, "intel");
	assert_string_equal(cJSON_GetObjectItem(l, "arch")->valuestring, "x86_64");
	assert_string_equal(cJSON_GetObjectItem(l, "pool")->valuestring, "demo");
	assert_int_equal(cJSON_GetArraySize(l), 3);
	cJSON_Delete(l);
	/* Nothing configured: both from the facts. */
	l = agent_labels_json(NULL, NULL, 0, &f);
	assert_string_equal(cJSON_GetObjectItem(l, "vendor")->valuestring, "amd");
	assert_int_equal(cJSON_GetArraySize(l), 2);
	cJSON_Delete(l);
	/* An unknown vendor is not made a label. */
	snprintf(f.cpu.vendor, sizeof(f.cpu.vendor), "unknown");
	l = agent_labels_json(NULL, NULL, 0, &f);
	assert_null(cJSON_GetObjectItem(l, "vendor"));
	assert_int_equal(cJSON_GetArraySize(l), 1);
	cJSON_Delete(l);
	/* No facts at all. */
	l = agent_labels_json(keys, values, 1, NULL);
	assert_int_equal(cJSON_GetArraySize(l), 1);
	cJSON_Delete(l);
}

static void put(const char *root, const char *rel, const char *text)
{
	struct pg_err err = PG_ERR_INIT;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(pg_mkdir_parent(path, 0755, &err), 0);
	assert_int_equal(pg_write_file_atomic(path, text, strlen(text), 0644, &err), 0);
}

/* A fake root with an aarch64 /proc and a two-node /sys. */
static void test_gather_fake_root(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf cpu = PG_BUF_INIT(1 << 20);
	char root[] = "/tmp/pg-test-facts.XXXXXX", cmd[600];
	struct agent_facts f;
	cJSON *j;

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_int_equal(pg_read_file("tests/agent/cpuinfo/aarch64-neoverse-n1.in", &cpu, &err), 0);
	put(root, "proc/cpuinfo", cpu.data);
	put(root, "proc/meminfo", "MemTotal:       263834412 kB\nMemFree: 1 kB\n");
	put(root, "sys/devices/system/cpu/online", "0-79\n");
	put(root, "sys/devices/system/node/node0/cpulist", "0-39\n");
	put(root, "sys/devices/system/node/node1/cpulist", "40-79\n");
	put(root, "sys/devices/system/node/possible", "0-1\n");
	assert_int_equal(agent_facts_gather(&f, root, &err), 0);
	assert_string_equal(f.cpu.vendor, "arm");
	assert_string_equal(f.cpu.model, "ARM Neoverse-N1");
	assert_int_equal(f.cores, 80);
	assert_int_equal(f.numa_nodes, 2);
	assert_int_equal(f.memory_kb, 263834412ULL);
	j = agent_facts_to_json(&f);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "model")->valuestring, "ARM Neoverse-N1");
	assert_int_equal(cJSON_GetObjectItem(j, "numa_nodes")->valueint, 2);
	assert_null(cJSON_GetObjectItem(j, "microcode"));
	assert_non_null(cJSON_GetObjectItem(j, "kernel"));
	cJSON_Delete(j);

	/* Without /sys (a container): cores from sysconf, one node. */
	snprintf(cmd, sizeof(cmd), "%s/sys", root);
	assert_int_equal(pg_mkdir_p(cmd, 0755, &err), 0);
	snprintf(cmd, sizeof(cmd), "%s/sys/devices/system/cpu/online", root);
	assert_int_equal(unlink(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/sys/devices/system/node/node0/cpulist", root);
	assert_int_equal(unlink(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/sys/devices/system/node/node1/cpulist", root);
	assert_int_equal(unlink(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/sys/devices/system/node/node0", root);
	assert_int_equal(rmdir(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/sys/devices/system/node/node1", root);
	assert_int_equal(rmdir(cmd), 0);
	assert_int_equal(agent_facts_gather(&f, root, &err), 0);
	assert_int_equal(f.numa_nodes, 1);
	assert_int_equal(f.cores, (unsigned int)sysconf(_SC_NPROCESSORS_ONLN));

	/* A missing /proc file is an error naming it. */
	snprintf(cmd, sizeof(cmd), "%s/proc/meminfo", root);
	assert_int_equal(unlink(cmd), 0);
	assert_int_equal(agent_facts_gather(&f, root, &err), -1);
	assert_non_null(strstr(err.msg, "proc/meminfo"));

	snprintf(cmd, sizeof(cmd), "%s/proc/cpuinfo", root);
	unlink(cmd);
	snprintf(cmd, sizeof(cmd), "%s/sys/devices/system/node/possible", root);
	unlink(cmd);
	pg_buf_release(&cpu);
	/* The tree is small: remove it leaf to root. */
	{
		static const char *const dirs[] = {
			"sys/devices/system/node", "sys/devices/system/cpu", "sys/devices/system",
			"sys/devices", "sys", "proc", "",
		};

		for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			snprintf(cmd, sizeof(cmd), "%s/%s", root, dirs[i]);
			assert_int_equal(rmdir(cmd), 0);
		}
	}
}

/* This host: whatever it is, the facts are complete and consistent. */
static void test_gather_this_host(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct agent_facts f;

	(void)state;
	assert_int_equal(agent_facts_gather(&f, NULL, &err), 0);
	assert_true(f.cores >= 1);
	assert_true(f.numa_nodes >= 1);
	assert_true(f.memory_kb > 0);
	assert_true(f.hostname[0] && f.arch[0] && f.kernel[0] && f.cpu.vendor[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpuinfo_golden),
		cmocka_unit_test(test_meminfo_golden),
		cmocka_unit_test(test_cpuinfo_edges),
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_gather_fake_root),
		cmocka_unit_test(test_gather_this_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
