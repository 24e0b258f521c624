/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the profile loader: every broken fixture gives exactly its
 * expected message, the shipped profiles load with the content a DPDK lab
 * needs, their normalised printout matches the golden files and loads to
 * itself, and the helpers (tree selection, label matching, meson options
 * per version, argument expansion) do what profile.h says.
 *
 * Run from the repository root.  PG_UPDATE_GOLDEN=1 rewrites the golden
 * files from the current output (inspect the diff before committing).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "buf.h"
#include "json.h"
#include "profile.h"

#define BROKEN_DIR "tests/profiles/broken"
#define GOLDEN_DIR "tests/profiles/golden"

static char *read_text(const char *path)
{
	struct pg_buf b = PG_BUF_INIT(4 * 1024 * 1024);
	char chunk[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		assert_int_equal(pg_buf_add(&b, chunk, (size_t)n), 0);
	assert_true(n == 0);
	close(fd);
	return pg_buf_detach(&b, NULL);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void load_ok(struct profile_set *ps, const char *const *paths, size_t n)
{
	struct pg_err err = PG_ERR_INIT;

	if (profile_set_load(ps, paths, n, &err) < 0)
		fail_msg("load failed: %s", err.msg);
}

/* No entries (a loaded empty file still counts in n_files). */
static void assert_empty(const struct profile_set *ps)
{
	assert_int_equal(ps->n_trees, 0);
	assert_int_equal(ps->n_tree_rules, 0);
	assert_int_equal(ps->n_host_classes, 0);
	assert_int_equal(ps->n_build_modes, 0);
	assert_int_equal(ps->n_benchmarks, 0);
	assert_int_equal(ps->n_contexts, 0);
	assert_null(ps->default_tree);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each NAME.json (with NAME.2.json after it when that exists) must fail
 * with exactly the message in NAME.err. */
static void test_broken_fixtures(void **state)
{
	char *names[256];
	size_t n = 0, checked = 0;
	struct dirent *de;
	DIR *d = opendir(BROKEN_DIR);

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0 &&
		    !(len > 7 && strcmp(de->d_name + len - 7, ".2.json") == 0)) {
			assert_true(n < 256);
			names[n] = strndup(de->d_name, len - 5);
			assert_non_null(names[n]);
			n++;
		}
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct pg_err err = PG_ERR_INIT;
		struct profile_set ps;
		char json[512], json2[512], errfile[512];
		const char *paths[2] = { json, json2 };
		size_t np = 1;
		char *want;
		size_t wl;

		snprintf(json, sizeof(json), BROKEN_DIR "/%s.json", names[i]);
		snprintf(json2, sizeof(json2), BROKEN_DIR "/%s.2.json", names[i]);
		snprintf(errfile, sizeof(errfile), BROKEN_DIR "/%s.err", names[i]);
		if (access(json2, F_OK) == 0)
			np = 2;
		want = read_text(errfile);
		wl = strlen(want);
		while (wl && want[wl - 1] == '\n')
			want[--wl] = '\0';
		if (profile_set_load(&ps, paths, np, &err) == 0)
			fail_msg("%s: loaded, expected: %s", json, want);
		if (strcmp(err.msg, want) != 0)
			fail_msg("%s:\n  got:  %s\n  want: %s", json, err.msg, want);
		assert_int_not_equal(err.code, PG_OK);
		assert_empty(&ps);
		assert_int_equal(ps.n_files, 0);
		profile_set_free(&ps);	/* safe after a failed load */
		free(want);
		free(names[i]);
		checked++;
	}
	assert_true(checked >= 15);
}

static void test_dpdk_profile_content(void **state)
{
	const char *paths[] = { "profiles/dpdk.json" };
	const char *keys[] = { "vendor", "arch" };
	const char *values[] = { "intel", "x86_64" };
	const struct profile_context *ctx;
	const struct profile_host_class *hc;
	const struct profile_benchmark *mp, *tp;
	const struct profile_tree *stable;
	struct profile_set ps;

	(void)state;
	load_ok(&ps, paths, 1);
	assert_int_equal(ps.n_contexts, 4);
	assert_string_equal(ps.default_tree, "dpdk");

	ctx = profile_find_context(&ps, "perfgate-intel-Performance");
	assert_non_null(ctx);
	hc = profile_find_host_class(&ps, ctx->host_class);
	assert_non_null(hc);
	assert_string_equal(hc->name, "intel");
	assert_int_equal(hc->n_labels, 2);
	assert_string_equal(hc->labels[0].key, "arch");	/* sorted by key */
	assert_string_equal(hc->labels[0].value, "x86_64");
	assert_string_equal(hc->labels[1].key, "vendor");
	assert_string_equal(hc->labels[1].value, "intel");
	assert_true(profile_host_class_matches(hc, keys, values, 2));
	assert_true(hc->hugepages);
	assert_int_equal(hc->n_lcores, 4);
	assert_int_equal(hc->lcore_ids[0], 2);	/* core 0 stays with the system */
	assert_int_equal(hc->lcore_ids[3], 5);
	assert_true(hc->memory_mb >= 4 * 300);	/* 24.11+ mempool_perf per lcore */

	/* The defaults, filled in. */
	assert_int_equal(ctx->repetitions, 6);
	assert_int_equal(ctx->max_repetitions, 18);
	assert_true(ctx->threshold_pct == 5.0);
	assert_true(ctx->alpha == 0.05);
	assert_true(ctx->noise_limit_pct == 5.0);
	assert_int_equal(ctx->post_to, PROFILE_POST_LAST_PATCH);
	assert_string_equal(ctx->default_tree, "dpdk");
	assert_int_equal(ctx->n_build_modes, 2);
	assert_int_equal(ctx->n_benchmarks, 2);
	assert_int_equal(ctx->n_trees, 3);

	for (size_t i = 0; i < ps.n_contexts; i++) {
		const struct profile_context *c = &ps.contexts[i];

		assert_non_null(profile_find_host_class(&ps, c->host_class));
		assert_non_null(profile_find_build_mode(&ps, "release"));
		assert_non_null(profile_find_build_mode(&ps, "debugoptimized"));
	}
	assert_string_equal(profile_find_host_class(&ps, "amd")->labels[1].value, "amd");
	assert_string_equal(profile_find_host_class(&ps, "arm")->labels[0].value, "aarch64");

	stable = profile_find_tree(&ps, "dpdk-stable");
	assert_non_null(stable);
	assert_string_equal(stable->default_branch, "22.11");
	assert_true(stable->n_branches >= 3);

	mp = profile_find_benchmark(&ps, "mempool_perf");
	assert_non_null(mp);
	assert_string_equal(mp->program, "app/test/dpdk-test");
	assert_int_equal(mp->parser, PROFILE_PARSER_MEMPOOL_PERF);
	assert_int_equal(mp->mode, PROFILE_MODE_SUBSET);
	assert_true(mp->has_subset);
	assert_string_equal(mp->env[0].key, "DPDK_TEST");
	assert_string_equal(mp->env[0].value, "mempool_perf_autotest");
	assert_true(profile_gate_matches(mp, "mempool.nocache.cores1.keep128.get32.put32.const0"));
	assert_true(profile_gate_matches(mp, "mempool.cache.cores1.keep128.get1.put1.const0"));
	assert_false(profile_gate_matches(mp, "mempool.cache.cores2.keep128.get1.put1.const0"));

	tp = profile_find_benchmark(&ps, "testpmd_io");
	assert_non_null(tp);
	assert_string_equal(tp->program, "app/dpdk-testpmd");
	assert_int_equal(tp->parser, PROFILE_PARSER_TESTPMD);
	assert_int_equal(tp->stdin_mode, PROFILE_STDIN_HOLD);
	assert_true(tp->duration_s > 0 && tp->duration_s < tp->timeout_s);
	assert_true(profile_gate_matches(tp, "fwd.rx_pps"));

	assert_null(profile_find_context(&ps, "perfgate-demo-Performance"));
	assert_null(profile_find_tree(&ps, "nope"));
	profile_set_free(&ps);
	assert_empty(&ps);
}

/* Every ARM server's labels, as the agent fills them from MIDR's
 * implementer (agent_facts.h), match dpdk.json's arm class, and no x86
 * class; an x86 host does not match it. */
static void test_arm_vendors_match(void **state)
{
	static const char *const vendors[] = {
		"arm", "hisilicon", "ampere", "nvidia", "cavium", "qualcomm", "marvell", "phytium",
		"fujitsu",
	};
	const char *paths[] = { "profiles/dpdk.json" };
	const char *keys[] = { "vendor", "arch" };
	const struct profile_host_class *arm, *intel, *amd;
	struct profile_set ps;

	(void)state;
	load_ok(&ps, paths, 1);
	arm = profile_find_host_class(&ps, "arm");
	intel = profile_find_host_class(&ps, "intel");
	amd = profile_find_host_class(&ps, "amd");
	assert_non_null(arm);
	assert_non_null(intel);
	assert_non_null(amd);
	for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++) {
		const char *values[] = { vendors[i], "aarch64" };

		if (!profile_host_class_matches(arm, keys, values, 2))
			fail_msg("an aarch64 host of vendor %s matches no arm class", vendors[i]);
		assert_false(profile_host_class_matches(intel, keys, values, 2));
		assert_false(profile_host_class_matches(amd, keys, values, 2));
	}
	{
		const char *values[] = { "intel", "x86_64" };

		assert_false(profile_host_class_matches(arm, keys, values, 2));
		assert_true(profile_host_class_matches(intel, keys, values, 2));
	}
	profile_set_free(&ps);
}

static void test_select_tree(void **state)
{
	const char *paths[] = { "profiles/dpdk.json" };
	const char *net[] = { "drivers/net/ice/ice_rxtx.c", "doc/guides/nics/ice.rst" };
	const char *mixed[] = { "drivers/net/ice/ice_rxtx.c", "lib/eal/common/eal_common_options.c" };
	const char *eal[] = { "lib/eal/linux/eal.c" };
	const char *t2211[] = { "22.11" };
	const char *t2411[] = { "v2", "24.11" };
	const char *rfc[] = { "RFC" };
	const struct profile_context *ctx;
	const char *tree, *branch;
	struct profile_set ps;

	(void)state;
	load_ok(&ps, paths, 1);

	/* A backport goes to its stable branch, even when it touches drivers/net. */
	assert_int_equal(profile_select_tree(&ps, net, 2, t2211, 1, &tree, &branch), 0);
	assert_string_equal(tree, "dpdk-stable");
	assert_string_equal(branch, "22.11");
	assert_int_equal(profile_select_tree(&ps, eal, 1, t2411, 2, &tree, &branch), 0);
	assert_string_equal(tree, "dpdk-stable");
	assert_string_equal(branch, "24.11");

	/* Only net files: next-net. */
	assert_int_equal(profile_select_tree(&ps, net, 2, rfc, 1, &tree, &branch), 0);
	assert_string_equal(tree, "dpdk-next-net");
	assert_string_equal(branch, "main");
	assert_int_equal(profile_select_tree(&ps, net, 1, NULL, 0, &tree, &branch), 0);
	assert_string_equal(tree, "dpdk-next-net");

	/* Anything else: main. */
	assert_int_equal(profile_select_tree(&ps, mixed, 2, NULL, 0, &tree, &branch), 0);
	assert_string_equal(tree, "dpdk");
	assert_string_equal(branch, "main");
	assert_int_equal(profile_select_tree(&ps, eal, 1, NULL, 0, &tree, &branch), 0);
	assert_string_equal(tree, "dpdk");
	assert_int_equal(profile_select_tree(&ps, NULL, 0, NULL, 0, &tree, &branch), 0);
	assert_string_equal(tree, "dpdk");

	ctx = profile_find_context(&ps, "perfgate-arm-Performance");
	assert_non_null(ctx);
	assert_int_equal(profile_context_select_tree(&ps, ctx, net, 2, NULL, 0, &tree, &branch), 0);
	assert_string_equal(tree, "dpdk-next-net");
	assert_int_equal(profile_context_select_tree(&ps, ctx, eal, 1, t2211, 1, &tree, &branch), 0);
	assert_string_equal(tree, "dpdk-stable");
	profile_set_free(&ps);
}

static void test_host_class_matches(void **state)
{
	const char *paths[] = { "profiles/dpdk.json" };
	const char *k3[] = { "host", "arch", "vendor" };
	const char *v3[] = { "lab-07", "x86_64", "intel" };
	const char *vamd[] = { "lab-08", "x86_64", "amd" };
	const char *k1[] = { "vendor" };
	const char *v1[] = { "intel" };
	const struct profile_host_class *intel, *amd;
	struct profile_set ps;

	(void)state;
	load_ok(&ps, paths, 1);
	intel = profile_find_host_class(&ps, "intel");
	amd = profile_find_host_class(&ps, "amd");
	assert_non_null(intel);
	assert_non_null(amd);
	assert_true(profile_host_class_matches(intel, k3, v3, 3));	/* extra labels are fine */
	assert_false(profile_host_class_matches(amd, k3, v3, 3));
	assert_true(profile_host_class_matches(amd, k3, vamd, 3));
	assert_false(profile_host_class_matches(intel, k1, v1, 1));	/* arch missing */
	assert_false(profile_host_class_matches(intel, NULL, NULL, 0));
	profile_set_free(&ps);
}

static void test_both_profiles(void **state)
{
	const char *order1[] = { "profiles/dpdk.json", "profiles/demo.json" };
	const char *order2[] = { "profiles/demo.json", "profiles/dpdk.json" };
	const char *net[] = { "drivers/net/null/rte_eth_null.c" };
	const char *const *orders[] = { order1, order2 };
	const char *tree, *branch;

	(void)state;
	for (size_t o = 0; o < 2; o++) {
		const struct profile_context *demo, *intel;
		const struct profile_host_class *hc;
		struct profile_set ps;

		load_ok(&ps, orders[o], 2);
		assert_int_equal(ps.n_contexts, 5);
		assert_int_equal(ps.n_files, 2);
		/* The first file's default_tree is the catalogue's. */
		assert_string_equal(ps.default_tree, o == 0 ? "dpdk" : "dpdk-demo");

		demo = profile_find_context(&ps, "perfgate-demo-Performance");
		intel = profile_find_context(&ps, "perfgate-intel-Performance");
		assert_non_null(demo);
		assert_non_null(intel);
		assert_string_equal(demo->default_tree, "dpdk-demo");
		assert_string_equal(intel->default_tree, "dpdk");
		assert_int_equal(demo->repetitions, 3);
		assert_int_equal(demo->max_repetitions, 9);

		/* dpdk.json's rules never send the demo context elsewhere. */
		assert_int_equal(profile_context_select_tree(&ps, demo, net, 1, NULL, 0, &tree,
							     &branch), 0);
		assert_string_equal(tree, "dpdk-demo");
		assert_string_equal(branch, "main");
		assert_int_equal(profile_context_select_tree(&ps, intel, net, 1, NULL, 0, &tree,
							     &branch), 0);
		assert_string_equal(tree, "dpdk-next-net");

		hc = profile_find_host_class(&ps, demo->host_class);
		assert_non_null(hc);
		assert_false(hc->hugepages);
		assert_int_equal(hc->n_lcores, 2);
		assert_string_equal(hc->labels[0].key, "pool");
		assert_string_equal(hc->labels[0].value, "demo");
		profile_set_free(&ps);
	}
}

static char *print_set(const struct profile_set *ps)
{
	cJSON *j = profile_set_to_json(ps);
	char *text, *out;
	size_t len;

	assert_non_null(j);
	text = pg_json_print(j, true);
	assert_non_null(text);
	cJSON_Delete(j);
	len = strlen(text);
	out = malloc(len + 2);
	assert_non_null(out);
	memcpy(out, text, len);
	memcpy(out + len, "\n", 2);
	free(text);
	return out;
}

static void check_golden(const char *name)
{
	char src[256], golden[256], tmp[] = "/tmp/pg-profile-XXXXXX";
	const char *p1[] = { src };
	const char *p2[] = { tmp };
	struct profile_set ps;
	char *out, *want, *again;
	int fd;

	snprintf(src, sizeof(src), "profiles/%s.json", name);
	snprintf(golden, sizeof(golden), GOLDEN_DIR "/%s.json.ok", name);
	load_ok(&ps, p1, 1);
	out = print_set(&ps);
	profile_set_free(&ps);
	if (getenv("PG_UPDATE_GOLDEN"))
		write_text(golden, out);
	want = read_text(golden);
	if (strcmp(out, want) != 0)
		fail_msg("%s differs from %s (PG_UPDATE_GOLDEN=1 rewrites it)", src, golden);

	/* The printout is itself a profile that loads to the same printout. */
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	write_text(tmp, out);
	load_ok(&ps, p2, 1);
	again = print_set(&ps);
	profile_set_free(&ps);
	unlink(tmp);
	assert_string_equal(again, out);
	free(again);
	free(out);
	free(want);
}

static void test_golden_dpdk(void **state)
{
	(void)state;
	check_golden("dpdk");
}

static void test_golden_demo(void **state)
{
	(void)state;
	check_golden("demo");
}

static void test_load_dir(void **state)
{
	char dir[] = "/tmp/pg-profiles-XXXXXX", path[512];
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	const char *tree, *branch;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* b.json refers to a.json's tree and host class: references cross files. */
	snprintf(path, sizeof(path), "%s/b.json", dir);
	write_text(path, "{\"build_modes\": {\"r\": {\"buildtype\": \"release\"}},"
		   " \"benchmarks\": {\"t\": {\"program\": \"app/dpdk-testpmd\","
		   " \"parser\": \"testpmd\", \"gate\": [\"fwd.*\"], \"timeout_s\": 60}},"
		   " \"contexts\": {\"c\": {\"host_class\": \"h\", \"build_modes\": [\"r\"],"
		   " \"benchmarks\": [\"t\"]}}}");
	snprintf(path, sizeof(path), "%s/a.json", dir);
	write_text(path, "{\"trees\": {\"x\": {\"url\": \"file:///srv/x.git\","
		   " \"default_branch\": \"main\"}}, \"default_tree\": \"x\","
		   " \"host_classes\": {\"h\": {\"labels\": {\"pool\": \"p\"}, \"lcores\": \"1,3\","
		   " \"memory_mb\": 512, \"hugepages\": false}}}");
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	write_text(path, "not a profile");
	snprintf(path, sizeof(path), "%s/.hidden.json", dir);
	write_text(path, "not JSON either");

	assert_int_equal(profile_set_load_dir(&ps, dir, &err), 0);
	assert_int_equal(ps.n_files, 2);
	assert_non_null(strstr(ps.files[0].path, "/a.json"));
	assert_non_null(strstr(ps.files[1].path, "/b.json"));
	assert_string_equal(ps.contexts[0].default_tree, "x");
	assert_int_equal(ps.contexts[0].n_trees, 1);
	assert_int_equal(ps.host_classes[0].n_lcores, 2);
	assert_int_equal(ps.host_classes[0].lcore_ids[1], 3);
	assert_int_equal(profile_select_tree(&ps, NULL, 0, NULL, 0, &tree, &branch), 0);
	assert_string_equal(tree, "x");
	profile_set_free(&ps);

	/* Without the host class in a.json, b.json's reference fails. */
	snprintf(path, sizeof(path), "%s/a.json", dir);
	write_text(path, "{\"trees\": {\"x\": {\"url\": \"file:///srv/x.git\","
		   " \"default_branch\": \"main\"}}, \"default_tree\": \"x\"}");
	assert_int_equal(profile_set_load_dir(&ps, dir, &err), -1);
	assert_non_null(strstr(err.msg, "/b.json: contexts.c.host_class: unknown host class 'h'"));
	assert_empty(&ps);
	assert_int_equal(ps.n_files, 0);

	unlink(path);
	snprintf(path, sizeof(path), "%s/b.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/.hidden.json", dir);
	unlink(path);
	assert_int_equal(profile_set_load_dir(&ps, dir, &err), 0);	/* empty is fine */
	assert_empty(&ps);
	assert_int_equal(ps.n_files, 0);
	profile_set_free(&ps);
	rmdir(dir);

	assert_int_equal(profile_set_load_dir(&ps, dir, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_non_null(strstr(err.msg, "cannot open directory"));
}

static void test_file_errors(void **state)
{
	const char *missing[] = { "tests/profiles/no-such-file.json" };
	char tmp[] = "/tmp/pg-big-XXXXXX";
	const char *big[] = { tmp };
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	char want[256], *text;
	int fd;

	(void)state;
	assert_int_equal(profile_set_load(&ps, missing, 1, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_string_equal(err.msg, "tests/profiles/no-such-file.json: cannot open: "
			    "No such file or directory");

	/* One byte over the limit, and valid JSON but for that. */
	text = malloc(PROFILE_MAX_FILE_SIZE + 2);
	assert_non_null(text);
	memset(text, ' ', PROFILE_MAX_FILE_SIZE + 1);
	text[0] = '{';
	text[PROFILE_MAX_FILE_SIZE] = '}';
	text[PROFILE_MAX_FILE_SIZE + 1] = '\0';
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	write_text(tmp, text);
	assert_int_equal(profile_set_load(&ps, big, 1, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	snprintf(want, sizeof(want), "%s: larger than %d bytes", tmp, PROFILE_MAX_FILE_SIZE);
	assert_string_equal(err.msg, want);
	assert_empty(&ps);
	assert_int_equal(ps.n_files, 0);

	/* At the limit it loads (an empty catalogue). */
	text[PROFILE_MAX_FILE_SIZE - 1] = '}';
	text[PROFILE_MAX_FILE_SIZE] = '\0';
	write_text(tmp, text);
	assert_int_equal(profile_set_load(&ps, big, 1, &err), 0);
	assert_empty(&ps);
	profile_set_free(&ps);
	unlink(tmp);
	free(text);

	assert_int_equal(profile_set_load(&ps, NULL, 0, &err), 0);
	assert_empty(&ps);
	assert_null(profile_find_context(&ps, "x"));
	profile_set_free(&ps);
	profile_set_free(NULL);
}

static void test_build_mode_options(void **state)
{
	const char *paths[] = { "profiles/dpdk.json" };
	const struct profile_build_mode *bm;
	struct pg_err err = PG_ERR_INIT;
	const struct profile_kv **kv;
	struct profile_set ps;
	unsigned major, minor;
	size_t n;

	(void)state;
	load_ok(&ps, paths, 1);
	bm = profile_find_build_mode(&ps, "release");
	assert_non_null(bm);
	assert_string_equal(bm->buildtype, "release");
	assert_string_equal(profile_find_build_mode(&ps, "debugoptimized")->buildtype,
			    "debugoptimized");

	/* 21.11: no enable_apps (it does not exist yet). */
	assert_int_equal(profile_build_mode_options(bm, 21, 11, &kv, &n, &err), 0);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++)
		assert_true(strncmp(kv[i]->key, "enable_apps", 11) != 0);
	free(kv);

	assert_int_equal(profile_parse_version("22.11.11", &major, &minor), 0);
	assert_int_equal(profile_build_mode_options(bm, major, minor, &kv, &n, &err), 0);
	assert_int_equal(n, 8);
	assert_string_equal(kv[0]->key, "default_library");	/* sorted */
	assert_string_equal(kv[1]->key, "developer_mode");
	assert_string_equal(kv[1]->value, "disabled");
	assert_string_equal(kv[2]->key, "disable_libs");
	assert_non_null(strstr(kv[2]->value, "vhost"));
	assert_string_equal(kv[3]->key, "enable_apps");
	assert_string_equal(kv[3]->value, "test-pmd");
	free(kv);

	assert_int_equal(profile_build_mode_options(bm, 23, 11, &kv, &n, &err), 0);
	assert_int_equal(n, 8);
	assert_string_equal(kv[2]->value, "*");
	assert_string_equal(kv[3]->value, "test,test-pmd");
	free(kv);

	assert_int_equal(profile_parse_version("24.11.0-rc0", &major, &minor), 0);
	assert_int_equal(major, 24);
	assert_int_equal(minor, 11);
	assert_int_equal(profile_build_mode_options(bm, major, minor, &kv, &n, &err), 0);
	assert_int_equal(n, 9);
	assert_string_equal(kv[2]->key, "disable_libs");
	assert_string_equal(kv[2]->value, "");
	assert_string_equal(kv[6]->key, "enable_libs");
	assert_string_equal(kv[6]->value, "timer,lpm,ptr_compress");
	assert_string_equal(kv[8]->key, "tests");
	free(kv);

	assert_int_equal(profile_parse_version("main", &major, &minor), -1);
	assert_int_equal(profile_parse_version("22", &major, &minor), -1);
	assert_int_equal(profile_parse_version("22.", &major, &minor), -1);
	profile_set_free(&ps);
}

/* A host class's meson_options over a build mode's (lib/profile.h,
 * "Per-class build options"): the class decides the target, and a class
 * without options builds what the build mode says. */
static void test_class_build_options(void **state)
{
	const char *paths[] = { "profiles/dpdk.json", "profiles/demo.json" };
	const struct profile_build_mode *bm;
	const struct profile_host_class *arm, *intel, *demo;
	struct pg_err err = PG_ERR_INIT;
	const struct profile_kv **kv, **base;
	struct profile_set ps;
	size_t n, nb;

	(void)state;
	load_ok(&ps, paths, 2);
	bm = profile_find_build_mode(&ps, "release");
	arm = profile_find_host_class(&ps, "arm");
	intel = profile_find_host_class(&ps, "intel");
	demo = profile_find_host_class(&ps, "demo");
	assert_non_null(bm);
	assert_non_null(arm);
	assert_non_null(intel);
	assert_non_null(demo);
	assert_int_equal(profile_build_mode_options(bm, 24, 11, &base, &nb, &err), 0);

	/* arm: platform generic and max_lcores added, sorted in. */
	assert_int_equal(profile_build_options(bm, arm, 24, 11, &kv, &n, &err), 0);
	assert_int_equal(n, nb + 2);
	for (size_t i = 0; i + 1 < n; i++)
		assert_true(strcmp(kv[i]->key, kv[i + 1]->key) < 0);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(kv[i]->key, "platform") == 0)
			assert_string_equal(kv[i]->value, "generic");
		if (strcmp(kv[i]->key, "max_lcores") == 0)
			assert_string_equal(kv[i]->value, "128");
		assert_string_not_equal(kv[i]->key, "cpu_instruction_set");
	}
	free(kv);
	/* intel: the ISA instead. */
	assert_int_equal(profile_build_options(bm, intel, 24, 11, &kv, &n, &err), 0);
	assert_int_equal(n, nb + 2);
	assert_string_equal(kv[0]->key, "cpu_instruction_set");
	assert_string_equal(kv[0]->value, "x86-64-v3");
	free(kv);
	/* No class, or a class without options: the build mode's alone. */
	assert_int_equal(profile_build_options(bm, NULL, 24, 11, &kv, &n, &err), 0);
	assert_int_equal(n, nb);
	free(kv);
	assert_int_equal(demo->n_meson_options, 0);
	bm = profile_find_build_mode(&ps, "demo-release");
	assert_non_null(bm);
	free(base);
	assert_int_equal(profile_build_mode_options(bm, 22, 11, &base, &nb, &err), 0);
	assert_int_equal(profile_build_options(bm, demo, 22, 11, &kv, &n, &err), 0);
	assert_int_equal(n, nb);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(kv[i]->key, base[i]->key);
		assert_string_equal(kv[i]->value, base[i]->value);
		if (strcmp(kv[i]->key, "platform") == 0)
			assert_string_equal(kv[i]->value, "native");
	}
	free(kv);
	free(base);
	profile_set_free(&ps);

	/* The class's value wins over the build mode's. */
	{
		static const char text[] =
			"{\"host_classes\": {\"x\": {\"labels\": {\"a\": \"b\"}, "
			"\"lcores\": \"0-1\", \"memory_mb\": 64, \"hugepages\": false, "
			"\"meson_options\": {\"platform\": \"generic\"}}}, "
			"\"build_modes\": {\"m\": {\"buildtype\": \"release\", "
			"\"meson_options\": {\"platform\": \"native\", \"tests\": \"true\"}}}}";
		char path[] = "/tmp/pg-profile-class-XXXXXX";
		const char *one[] = { path };
		int fd = mkstemp(path);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
		close(fd);
		load_ok(&ps, one, 1);
		assert_int_equal(profile_build_options(profile_find_build_mode(&ps, "m"),
						       profile_find_host_class(&ps, "x"), 0, 0,
						       &kv, &n, &err), 0);
		assert_int_equal(n, 2);
		assert_string_equal(kv[0]->key, "platform");
		assert_string_equal(kv[0]->value, "generic");
		assert_string_equal(kv[1]->key, "tests");
		free(kv);
		profile_set_free(&ps);
		unlink(path);
	}
}

static void test_benchmark_argv(void **state)
{
	const char *paths[] = { "profiles/dpdk.json", "profiles/demo.json" };
	const struct profile_run_vars vars = { "pg-42-base", "/work/build", NULL };
	const struct profile_run_vars novars = { NULL, NULL, NULL };
	const struct profile_benchmark *tp;
	struct profile_host_class hc;
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	char **argv;
	size_t argc;

	(void)state;
	load_ok(&ps, paths, 2);
	tp = profile_find_benchmark(&ps, "testpmd_io");
	assert_non_null(tp);
	assert_int_equal(profile_benchmark_argv(tp, profile_find_host_class(&ps, "intel"), &vars,
						&argv, &argc, &err), 0);
	assert_int_equal(argc, 15);
	assert_string_equal(argv[0], "-l");
	assert_string_equal(argv[1], "2-5");
	/* hugepages on numa_node 0: the memory from that node */
	assert_string_equal(argv[2], "--socket-mem");
	assert_string_equal(argv[3], "2048");
	assert_string_equal(argv[6], "--file-prefix=pg-42-base");
	assert_string_equal(argv[11], "--");
	assert_null(argv[argc]);
	profile_argv_free(argv, argc);

	/* on node 2, nothing from nodes 0 and 1; without a node, -m */
	hc = *profile_find_host_class(&ps, "intel");
	hc.numa_node = 2;
	assert_int_equal(profile_benchmark_argv(tp, &hc, &vars, &argv, &argc, &err), 0);
	assert_string_equal(argv[2], "--socket-mem");
	assert_string_equal(argv[3], "0,0,2048");
	profile_argv_free(argv, argc);
	hc.numa_node = -1;
	assert_int_equal(profile_benchmark_argv(tp, &hc, &vars, &argv, &argc, &err), 0);
	assert_int_equal(argc, 15);
	assert_string_equal(argv[2], "-m");
	assert_string_equal(argv[3], "2048");
	profile_argv_free(argv, argc);

	assert_int_equal(profile_benchmark_argv(tp, profile_find_host_class(&ps, "demo"), &vars,
						&argv, &argc, &err), 0);
	assert_int_equal(argc, 16);
	assert_string_equal(argv[1], "0-1");
	assert_string_equal(argv[2], "--no-huge");
	assert_string_equal(argv[3], "-m");
	assert_string_equal(argv[4], "1024");
	profile_argv_free(argv, argc);

	assert_int_equal(profile_benchmark_argv(tp, profile_find_host_class(&ps, "demo"),
						&novars, &argv, &argc, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_string_equal(err.msg, "benchmark 'testpmd_io': args[5] needs {file_prefix}, "
			    "which the run did not provide");
	assert_null(argv);
	profile_set_free(&ps);
}

/* The quiet-host fields as loaded: dpdk.json's lab classes require a
 * tuned host; demo.json's class requires nothing (this VM runs it). */
static void test_host_require(void **state)
{
	const char *paths[] = { "profiles/dpdk.json", "profiles/demo.json" };
	const struct profile_host_class *hc;
	struct profile_set ps;

	(void)state;
	load_ok(&ps, paths, 2);
	hc = profile_find_host_class(&ps, "intel");
	assert_true(hc->has_max_load && hc->max_load == 5.0);
	assert_int_equal(hc->max_load_wait_s, PROFILE_MAX_LOAD_WAIT_S);
	assert_true(hc->has_require);
	assert_string_equal(hc->require.governor, "performance");
	assert_string_equal(hc->require.turbo, "off");
	assert_string_equal(hc->require.smt, "off");
	assert_true(hc->require.isolated_cpus && hc->require.nohz_full);
	hc = profile_find_host_class(&ps, "arm");
	assert_null(hc->require.turbo);
	hc = profile_find_host_class(&ps, "demo");
	assert_false(hc->has_max_load || hc->has_require);
	assert_null(hc->require.governor);
	assert_false(hc->require.isolated_cpus);
	profile_set_free(&ps);
}

static void expect_argv(char **argv, size_t argc, const char *const *want)
{
	size_t n = 0;

	while (want[n])
		n++;
	for (size_t i = 0; i < argc && i < n; i++)
		assert_string_equal(argv[i], want[i]);
	assert_int_equal(argc, n);
	assert_null(argv[argc]);
}

/* A "fwd" benchmark: the class's ports before "--", fwd's arguments after. */
static void test_fwd_argv(void **state)
{
	static const char *const want_pci[] = {
		"-l", "2-5", "--socket-mem", "2048", "--no-telemetry", "--file-prefix=pg-42-base",
		"-a", "0000:3b:00.0", "-a", "0000:3b:00.1", "--",
		"--forward-mode=io", "--rxq=1", "--txq=1", "--rxd=1024", "--txd=1024",
		"--nb-cores=2", "--txpkts=512", "--record-core-cycles", "--tx-first", NULL
	};
	static const char *const want_vdev[] = {
		"-l", "0-1", "--no-huge", "-m", "256", "--vdev=net_ring0", "--no-pci", "--",
		"--total-num-mbufs=4096", "--forward-mode=txonly", "--rxq=2", "--txq=2",
		"--rxd=256", "--txd=512", "--nb-cores=1", "--txpkts=64", "--record-core-cycles",
		"--port-topology=loop", NULL
	};
	static const char vdev_profile[] =
		"{\"host_classes\": {\"virt\": {\"labels\": {\"a\": \"b\"}, \"lcores\": \"0-1\", "
		"\"memory_mb\": 256, \"hugepages\": false, \"ports\": [{\"vdev\": \"net_ring0\"}]}},"
		"\"benchmarks\": {\"tx\": {\"program\": \"app/dpdk-testpmd\", \"args\": [\"-l\", "
		"\"{lcores}\", \"{mem_args}\", \"--\", \"--total-num-mbufs=4096\"], \"fwd\": "
		"{\"mode\": \"txonly\", \"rxd\": 256, \"queues\": 2}, \"stdin\": \"hold\", "
		"\"duration_s\": 2, \"parser\": \"testpmd\", \"gate\": [\"fwd.size64.tx_pps\", "
		"\"port0.size64.*\"], \"timeout_s\": 30}}}\n";
	const char *paths[] = { "profiles/dpdk.json" };
	struct profile_run_vars vars = { "pg-42-base", "/work/build", "512" };
	const struct profile_benchmark *tp;
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	char tmp[] = "/tmp/pg-fwd-XXXXXX", **argv;
	const char *tpath = tmp;
	size_t argc;
	int fd;

	(void)state;
	load_ok(&ps, paths, 1);
	tp = profile_find_benchmark(&ps, "testpmd_ports");
	assert_non_null(tp);
	assert_true(tp->has_fwd);
	assert_int_equal(tp->fwd.n_frame_sizes, 3);
	assert_int_equal(profile_benchmark_argv(tp, profile_find_host_class(&ps, "intel-e810"),
						&vars, &argv, &argc, &err), 0);
	expect_argv(argv, argc, want_pci);
	profile_argv_free(argv, argc);
	vars.frame_size = NULL;
	assert_int_equal(profile_benchmark_argv(tp, profile_find_host_class(&ps, "intel-e810"),
						&vars, &argv, &argc, &err), -1);
	assert_string_equal(err.msg, "benchmark 'testpmd_ports': fwd needs a frame size, which "
			    "the run did not provide");
	assert_null(argv);
	profile_set_free(&ps);

	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, vdev_profile, sizeof(vdev_profile) - 1),
			 (ssize_t)sizeof(vdev_profile) - 1);
	close(fd);
	load_ok(&ps, &tpath, 1);
	unlink(tmp);
	vars.frame_size = "64";
	tp = profile_find_benchmark(&ps, "tx");
	assert_int_equal(profile_benchmark_argv(tp, profile_find_host_class(&ps, "virt"), &vars,
						&argv, &argc, &err), 0);
	expect_argv(argv, argc, want_vdev);
	profile_argv_free(argv, argc);
	profile_set_free(&ps);
}

static void test_fwd_key(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(profile_fwd_key(64, "fwd.rx_pps", out, sizeof(out)), 0);
	assert_string_equal(out, "fwd.size64.rx_pps");
	assert_int_equal(profile_fwd_key(1518, "port1.tx_bps", out, sizeof(out)), 0);
	assert_string_equal(out, "port1.size1518.tx_bps");
	assert_int_equal(profile_fwd_key(64, "nodot", out, sizeof(out)), -1);
	assert_int_equal(profile_fwd_key(64, "fwd.rx_pps", out, 10), -1);
	assert_false(profile_key_higher_is_better("fwd.size64.cycles_per_pkt"));
	assert_false(profile_key_higher_is_better("fwd.size1518.rx_dropped"));
	assert_true(profile_key_higher_is_better("fwd.size64.rx_pps"));
	assert_string_equal(profile_fwd_mode_name(PROFILE_FWD_MACSWAP), "macswap");
}

static void test_arg_check(void **state)
{
	char msg[128];
	bool dur = false;

	(void)state;
	assert_int_equal(profile_arg_check("--x={{literal}}", &dur, msg, sizeof(msg)), 0);
	assert_false(dur);
	assert_int_equal(profile_arg_check("--time={duration_s}s", &dur, msg, sizeof(msg)), 0);
	assert_true(dur);
	assert_int_equal(profile_arg_check("{build_dir}/x{file_prefix}", NULL, msg, sizeof(msg)),
			 0);
	assert_int_equal(profile_arg_check("--x={lcores", NULL, msg, sizeof(msg)), -1);
	assert_string_equal(msg, "unterminated placeholder '{lcores'");
	assert_int_equal(profile_arg_check("a}b", NULL, msg, sizeof(msg)), -1);
	assert_string_equal(msg, "'}' without '{' (write '}}' for a brace)");
	assert_int_equal(profile_arg_check("{}", NULL, msg, sizeof(msg)), -1);
	assert_string_equal(msg, "unknown placeholder '{}'");
}

static void test_key_direction(void **state)
{
	(void)state;
	assert_true(profile_key_higher_is_better("fwd.rx_pps"));
	assert_true(profile_key_higher_is_better("mempool.nocache.cores1.keep128.get32.put32.const0"));
	assert_false(profile_key_higher_is_better("fwd.cycles_per_pkt"));
	assert_false(profile_key_higher_is_better("fwd.rx_dropped"));
	assert_string_equal(profile_parser_name(PROFILE_PARSER_TESTPMD), "testpmd");
	assert_string_equal(profile_stdin_name(PROFILE_STDIN_HOLD), "hold");
	assert_string_equal(profile_mode_name(PROFILE_MODE_FULL), "full");
	assert_string_equal(profile_post_to_name(PROFILE_POST_ALL_PATCHES), "all_patches");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_broken_fixtures),
		cmocka_unit_test(test_host_require),
		cmocka_unit_test(test_dpdk_profile_content),
		cmocka_unit_test(test_arm_vendors_match),
		cmocka_unit_test(test_select_tree),
		cmocka_unit_test(test_host_class_matches),
		cmocka_unit_test(test_both_profiles),
		cmocka_unit_test(test_golden_dpdk),
		cmocka_unit_test(test_golden_demo),
		cmocka_unit_test(test_load_dir),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_build_mode_options),
		cmocka_unit_test(test_class_build_options),
		cmocka_unit_test(test_benchmark_argv),
		cmocka_unit_test(test_fwd_argv),
		cmocka_unit_test(test_fwd_key),
		cmocka_unit_test(test_arg_check),
		cmocka_unit_test(test_key_direction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
