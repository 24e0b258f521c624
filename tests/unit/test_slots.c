/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/slots.c: the stable series of a branch, slot names
 * (what changes them and what does not), the index's round trip and its
 * malformed forms, the LRU choice (never the slot in use), slot_plan()'s
 * reuse, adoption of a pre-slot work directory and eviction, and
 * slot_acquire() and the size report on a scratch work directory.
 */
#include <fcntl.h>
#include <limits.h>
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

#include "build.h"
#include "err.h"
#include "fsutil.h"
#include "json.h"
#include "rmtreefx.h"
#include "slots.h"

static cJSON *parse(const char *text)
{
	struct pg_err err = PG_ERR_INIT;
	cJSON *j = NULL;

	assert_int_equal(pg_json_parse(text, strlen(text), &j, &err), 0);
	return j;
}

static void test_series(void **state)
{
	static const char *const cases[][2] = {
		{ "22.11", "22.11" }, { "v22.11", "22.11" }, { "22.11.5", "22.11" },
		{ "v23.11.2-rc1", "23.11" }, { "25.11", "25.11" }, { "main", "main" },
		{ "next-net", "next-net" }, { "22.11-staging", "22.11-staging" },
		{ "22", "22" }, { "22.", "22." }, { "v", "v" }, { "releases/22.11", "releases/22.11" },
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(slot_series(cases[i][0], out, sizeof(out)), 0);
		assert_string_equal(out, cases[i][1]);
	}
	assert_int_equal(slot_series("", out, sizeof(out)), -1);
	assert_int_equal(slot_series(NULL, out, sizeof(out)), -1);
	assert_int_equal(slot_series("a-rather-long-branch", out, 8), -1);
}

static void name_of(const char *branch, const char *mode, const char *build, char *out)
{
	struct pg_err err = PG_ERR_INIT;
	cJSON *b = parse(build);

	assert_int_equal(slot_name("dpdk", branch, mode, b, out, WS_NAME_MAX + 1, &err), 0);
	assert_true(ws_name_ok(out));
	assert_true(strlen(out) <= SLOTS_NAME_MAX);
	cJSON_Delete(b);
}

static void test_name(void **state)
{
	static const char *rel = "{\"buildtype\": \"release\", \"meson_options\": "
				 "{\"platform\": \"native\", \"tests\": \"true\"}}";
	char a[WS_NAME_MAX + 1], b[WS_NAME_MAX + 1], long_mode[80];
	struct pg_err err = PG_ERR_INIT;
	cJSON *bad;

	(void)state;
	name_of("22.11", "release", rel, a);
	assert_int_equal(strncmp(a, "22.11.release.", 14), 0);
	assert_int_equal(strlen(a), 14 + 12);
	/* A point release of the same series, options in another order: the
	 * same slot. */
	name_of("v22.11.5", "release", "{\"buildtype\": \"release\", \"meson_options\": "
		"{\"tests\": \"true\", \"platform\": \"native\"}}", b);
	assert_string_equal(a, b);
	/* Another series, build mode, option value, option, c_args: another. */
	name_of("23.11", "release", rel, b);
	assert_string_not_equal(a, b);
	name_of("22.11", "debug", rel, b);
	assert_string_not_equal(a, b);
	name_of("22.11", "release", "{\"buildtype\": \"release\", \"meson_options\": "
		"{\"platform\": \"generic\", \"tests\": \"true\"}}", b);
	assert_string_not_equal(a, b);
	name_of("22.11", "release", "{\"buildtype\": \"release\", \"meson_options\": "
		"{\"platform\": \"native\", \"tests\": \"true\", \"max_lcores\": \"128\"}}", b);
	assert_string_not_equal(a, b);
	name_of("22.11", "release", "{\"buildtype\": \"release\", \"c_args\": \"-DX\", "
		"\"meson_options\": {\"platform\": \"native\", \"tests\": \"true\"}}", b);
	assert_string_not_equal(a, b);
	/* An empty c_args is no c_args (build.h passes it empty anyway). */
	name_of("22.11", "release", "{\"buildtype\": \"release\", \"c_args\": \"\", "
		"\"meson_options\": {\"platform\": \"native\", \"tests\": \"true\"}}", b);
	assert_string_equal(a, b);
	/* Odd characters and long names still give a valid name. */
	name_of("user/topic branch", "release", rel, b);
	assert_int_equal(strncmp(b, "user_topic_branch.release.", 26), 0);
	memset(long_mode, 'm', sizeof(long_mode) - 1);
	long_mode[sizeof(long_mode) - 1] = '\0';
	name_of("-weird-but-long-branch-name-beyond-the-cut", long_mode, rel, b);
	assert_int_equal(b[0], '_');
	/* A build object without a buildtype, or with a number option. */
	bad = parse("{\"meson_options\": {}}");
	assert_int_equal(slot_name("dpdk", "main", "release", bad, a, sizeof(a), &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	cJSON_Delete(bad);
	bad = parse("{\"buildtype\": \"release\", \"meson_options\": {\"max_lcores\": 128}}");
	err = (struct pg_err)PG_ERR_INIT;
	assert_int_equal(slot_name("dpdk", "main", "release", bad, a, sizeof(a), &err), -1);
	assert_non_null(strstr(err.msg, "max_lcores"));
	cJSON_Delete(bad);
}

static void add(struct slot_index *ix, const char *tree, const char *name, uint64_t last)
{
	struct slot_entry *e;

	ix->v = realloc(ix->v, (ix->n + 1) * sizeof(*ix->v));
	assert_non_null(ix->v);
	e = &ix->v[ix->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->tree, sizeof(e->tree), "%s", tree);
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->dir, sizeof(e->dir), "%s", name);
	e->last_use = last;
	if (last > ix->seq)
		ix->seq = last;
}

static void test_lru(void **state)
{
	struct slot_index ix = { 0 };

	(void)state;
	assert_int_equal(slot_lru_victim(&ix, -1), -1);
	add(&ix, "dpdk", "a", 5);
	assert_int_equal(slot_lru_victim(&ix, 0), -1);	/* only the one in use */
	assert_int_equal(slot_lru_victim(&ix, -1), 0);
	add(&ix, "dpdk", "b", 2);
	add(&ix, "dpdk", "c", 9);
	assert_int_equal(slot_lru_victim(&ix, -1), 1);
	assert_int_equal(slot_lru_victim(&ix, 1), 0);	/* "b" in use: the next oldest */
	slot_index_release(&ix);
}

static void test_plan(void **state)
{
	struct slot_index ix = { 0 };
	struct slot_use u;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	/* A work directory from before slots: the first slot of the mode
	 * adopts its directories, the next one of that mode is new. */
	assert_int_equal(slot_plan(&ix, "dpdk", "main.release.1", "release", true, 2, 100, &u,
				   &err), 0);
	assert_string_equal(u.state, "adopted");
	assert_string_equal(u.dir, "release");
	assert_int_equal(u.n_slots, 1);
	slot_use_release(&u);
	assert_int_equal(slot_plan(&ix, "dpdk", "22.11.release.2", "release", true, 2, 101, &u,
				   &err), 0);
	assert_string_equal(u.state, "new");
	assert_string_equal(u.dir, "22.11.release.2");
	assert_int_equal(u.n_evicted, 0);
	slot_use_release(&u);
	/* Reused: main becomes the most recent. */
	assert_int_equal(slot_plan(&ix, "dpdk", "main.release.1", "release", true, 2, 102, &u,
				   &err), 0);
	assert_string_equal(u.state, "reused");
	assert_string_equal(u.dir, "release");
	slot_use_release(&u);
	/* A third one evicts the least recently used, 22.11. */
	assert_int_equal(slot_plan(&ix, "dpdk", "23.11.release.3", "release", false, 2, 103, &u,
				   &err), 0);
	assert_string_equal(u.state, "new");
	assert_int_equal(u.n_evicted, 1);
	assert_string_equal(u.evicted[0].name, "22.11.release.2");
	assert_int_equal(u.n_slots, 2);
	assert_int_equal(ix.n, 2);
	slot_use_release(&u);
	/* The same name in another tree is another slot. */
	assert_int_equal(slot_plan(&ix, "dpdk-stable", "23.11.release.3", NULL, false, 2, 104,
				   &u, &err), 0);
	assert_string_equal(u.state, "new");
	assert_int_equal(u.n_evicted, 1);
	assert_string_equal(u.evicted[0].name, "main.release.1");
	assert_string_equal(u.evicted[0].dir, "release");
	slot_use_release(&u);
	/* A bound of 1 (lowered in the configuration): everything else goes,
	 * never the slot in use, even when it is the oldest. */
	ix.v[0].last_use = 0;	/* dpdk/23.11 oldest */
	assert_int_equal(slot_plan(&ix, "dpdk", "23.11.release.3", NULL, false, 1, 105, &u,
				   &err), 0);
	assert_string_equal(u.state, "reused");
	assert_int_equal(u.n_evicted, 1);
	assert_string_equal(u.evicted[0].tree, "dpdk-stable");
	assert_int_equal(ix.n, 1);
	assert_string_equal(ix.v[0].name, "23.11.release.3");
	assert_int_equal(ix.v[0].last_use, ix.seq);
	assert_int_equal(ix.v[0].used_at, 105);
	slot_use_release(&u);
	/* Bad arguments. */
	assert_int_equal(slot_plan(&ix, "dpdk", "../x", NULL, false, 1, 0, &u, &err), -1);
	assert_int_equal(slot_plan(&ix, "dpdk", "x", NULL, false, 0, 0, &u, &err), -1);
	slot_index_release(&ix);
}

static void test_index(void **state)
{
	static const char *const bad[] = {
		"[]", "{}", "{\"format\": 2, \"seq\": 1, \"slots\": []}",
		"{\"format\": 1, \"seq\": 1, \"slots\": [{\"tree\": \"dpdk\"}]}",
		"{\"format\": 1, \"seq\": 1, \"slots\": [{\"tree\": \"dpdk\", \"name\": \"a\", "
		"\"dir\": \"../a\", \"last_use\": 1}]}",
		"{\"format\": 1, \"seq\": 1, \"slots\": [{\"tree\": \"dpdk\", \"name\": \"a\", "
		"\"dir\": \"a\", \"last_use\": 7}]}",
		"not json",
	};
	struct slot_index ix = { 0 }, back = { 0 };
	struct pg_err err = PG_ERR_INIT;
	cJSON *j;
	char *text;

	(void)state;
	add(&ix, "dpdk", "main.release.abc", 3);
	add(&ix, "dpdk", "22.11.release.def", 4);
	snprintf(ix.v[0].dir, sizeof(ix.v[0].dir), "release");
	ix.v[1].used_at = 1700000000;
	j = slot_index_to_json(&ix);
	assert_non_null(j);
	text = pg_json_print(j, false);
	assert_non_null(text);
	assert_int_equal(slot_index_parse(text, strlen(text), &back, &err), 0);
	assert_int_equal(back.n, 2);
	assert_int_equal(back.seq, 4);
	assert_string_equal(back.v[0].dir, "release");
	assert_string_equal(back.v[1].name, "22.11.release.def");
	assert_int_equal(back.v[1].used_at, 1700000000);
	free(text);
	cJSON_Delete(j);
	slot_index_release(&back);
	slot_index_release(&ix);
	assert_int_equal(slot_index_parse("", 0, &back, &err), 0);
	assert_int_equal(back.n, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = (struct pg_err)PG_ERR_INIT;
		assert_int_equal(slot_index_parse(bad[i], strlen(bad[i]), &back, &err), -1);
		assert_non_null(strstr(err.msg, "build slot index"));
		assert_null(back.v);
	}
}

/* A file of `kb` KiB of written (allocated) bytes. */
static void write_kb(const char *path, size_t kb)
{
	char block[1024];
	int fd;

	memset(block, 'x', sizeof(block));
	assert_int_equal(pg_mkdir_parent(path, 0755, &(struct pg_err)PG_ERR_INIT), 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (size_t i = 0; i < kb; i++)
		assert_int_equal(write(fd, block, sizeof(block)), (ssize_t)sizeof(block));
	assert_int_equal(fsync(fd), 0);
	close(fd);
}

static void test_acquire(void **state)
{
	char work[] = "/tmp/pg-test-slots-XXXXXX", path[PATH_MAX], other[] =
		"/tmp/pg-test-slots-out-XXXXXX";
	struct pg_err err = PG_ERR_INIT;
	struct slot_use u;
	struct stat st;
	uint64_t bytes = 0, before;
	bool complete = false;

	(void)state;
	assert_non_null(mkdtemp(work));
	assert_non_null(mkdtemp(other));
	/* A work directory from before slots, with a warm build. */
	snprintf(path, sizeof(path), "%s/slots/dpdk/release-base/build/lib.o", work);
	write_kb(path, 64);
	snprintf(path, sizeof(path), "%s/slots/dpdk/release-patched/build/lib.o", work);
	write_kb(path, 64);
	assert_int_equal(slot_acquire(work, "dpdk", "main.release.aaa", "release", 2, &u, &err), 0);
	assert_string_equal(u.state, "adopted");
	assert_string_equal(u.dir, "release");
	slot_use_release(&u);
	/* The size counts both sides, not what a link points to. */
	snprintf(path, sizeof(path), "%s/big", other);
	write_kb(path, 512);
	snprintf(path, sizeof(path), "%s/slots/dpdk/release-base/link", work);
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(slot_total_size(work, &bytes, &complete, &err), 0);
	assert_true(complete);
	assert_true(bytes >= 128 * 1024);
	assert_true(bytes < 512 * 1024);
	before = bytes;
	/* Two new slots with a bound of 2: the adopted one goes (both sides),
	 * not what its link pointed to. */
	assert_int_equal(slot_acquire(work, "dpdk", "22.11.release.bbb", "release", 2, &u, &err),
			 0);
	assert_string_equal(u.state, "new");
	slot_use_release(&u);
	snprintf(path, sizeof(path), "%s/slots/dpdk/22.11.release.bbb-base/build/x.o", work);
	write_kb(path, 8);
	assert_int_equal(slot_acquire(work, "dpdk", "23.11.release.ccc", "release", 2, &u, &err),
			 0);
	assert_int_equal(u.n_evicted, 1);
	assert_string_equal(u.evicted[0].dir, "release");
	slot_use_release(&u);
	snprintf(path, sizeof(path), "%s/slots/dpdk/release-base", work);
	assert_int_equal(lstat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/slots/dpdk/release-patched", work);
	assert_int_equal(lstat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/big", other);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(slot_total_size(work, &bytes, &complete, &err), 0);
	assert_true(bytes < before);
	/* The index persisted: 22.11 is found again. */
	assert_int_equal(slot_acquire(work, "dpdk", "22.11.release.bbb", "release", 2, &u, &err),
			 0);
	assert_string_equal(u.state, "reused");
	slot_use_release(&u);
	/* An unreadable index is set aside and a new one begun. */
	snprintf(path, sizeof(path), "%s/slots/index.json", work);
	write_kb(path, 1);
	assert_int_equal(slot_acquire(work, "dpdk", "22.11.release.bbb", "release", 2, &u, &err),
			 0);
	assert_string_equal(u.state, "new");
	slot_use_release(&u);
	snprintf(path, sizeof(path), "%s/slots/index.json.bad", work);
	assert_int_equal(lstat(path, &st), 0);
	/* A size of WORK/slots that is itself a link is refused. */
	assert_int_equal(fx_rm_tree(work), 0);
	assert_int_equal(mkdir(work, 0755), 0);
	snprintf(path, sizeof(path), "%s/slots", work);
	assert_int_equal(symlink(other, path), 0);
	err = (struct pg_err)PG_ERR_INIT;
	assert_int_equal(slot_total_size(work, &bytes, &complete, &err), -1);
	assert_non_null(strstr(err.msg, "symbolic link"));
	assert_int_equal(fx_rm_tree(work), 0);
	assert_int_equal(fx_rm_tree(other), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_lru),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_acquire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
