/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/harness*.c, the mempool_perf subset harness:
 *  - golden rewrites: every tests/harness/NAME.CASE.json applied to
 *    NAME.in gives NAME.CASE.ok (the rewritten text, "not recognised: ..."
 *    or "error: ..."), and each rewrite restores to NAME.in, is a fixed
 *    point, and comes out the same from a text rewritten for another
 *    subset (see tests/harness/make-fixtures.sh for where NAME.in come
 *    from);
 *  - the subset from JSON, its errors, lines, keys and estimate, the keys
 *    checked against real output of the rewritten 22.11.11 test
 *    (tests/harness/2211.*.run);
 *  - layouts the rewrite must refuse (returns 1), made by editing the
 *    real 22.11.11 file in memory;
 *  - the file functions on a temporary tree (mtime kept when unchanged).
 *
 * PG_UPDATE_GOLDEN=1 rewrites the .ok files (read the diff before keeping).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "buf.h"
#include "fsutil.h"
#include "harness.h"
#include "json.h"
#include "rmtreefx.h"

#define FIXTURES "tests/harness"
#define DEMO "{\"cores\": [1], \"cache\": [0, 512], \"bulk\": [32], \"keep\": [128], " \
	"\"time_s\": 1}"

static void read_fixture(const char *name, struct pg_buf *b)
{
	struct pg_err err = PG_ERR_INIT;
	char path[512];

	assert_true(snprintf(path, sizeof(path), FIXTURES "/%s", name) < (int)sizeof(path));
	pg_buf_reset(b);
	if (pg_read_file(path, b, &err) < 0)
		fail_msg("%s", err.msg);
}

/* Parse JSON text into a subset; returns what harness_subset_from_json does. */
static int subset_of(const char *json, struct harness_subset *s, struct pg_err *err)
{
	cJSON *j = NULL;
	int rc;

	if (pg_json_parse(json, strlen(json), &j, err) < 0)
		fail_msg("bad JSON in a test: %s", err->msg);
	rc = harness_subset_from_json(j, s, err);
	cJSON_Delete(j);
	return rc;
}

static void demo_subset(struct harness_subset *s)
{
	struct pg_err err = PG_ERR_INIT;

	assert_int_equal(subset_of(DEMO, s, &err), 0);
}

/* ------------------------------------------------------------------ */
/* Golden rewrites */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What a rewrite gives, as the .ok files hold it. */
static int render(const struct pg_buf *in, const struct harness_subset *s, struct pg_buf *got)
{
	struct pg_err err = PG_ERR_INIT;
	int rc = harness_mempool_rewrite(in->data, in->len, s, got, &err);

	if (rc > 0)
		assert_int_equal(pg_buf_printf(got, "not recognised: %s\n", err.msg), 0);
	else if (rc < 0)
		assert_int_equal(pg_buf_printf(got, "error: %s\n", err.msg), 0);
	return rc;
}

/* The properties every successful rewrite has. */
static void check_rewrite_laws(const char *name, const struct pg_buf *in,
			       const struct harness_subset *s, const struct pg_buf *out)
{
	struct pg_buf b = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE);
	struct pg_buf c = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE);
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset demo;

	assert_false(harness_mempool_is_applied(in->data, in->len));
	assert_true(harness_mempool_is_applied(out->data, out->len));
	/* Undone exactly. */
	assert_int_equal(harness_mempool_restore(out->data, out->len, &b, &err), 0);
	if (b.len != in->len || memcmp(b.data, in->data, in->len) != 0)
		fail_msg("%s: restoring the rewrite does not give the input back", name);
	/* A fixed point: the second application changes no byte. */
	pg_buf_reset(&b);
	assert_int_equal(harness_mempool_rewrite(out->data, out->len, s, &b, &err), 0);
	if (b.len != out->len || memcmp(b.data, out->data, out->len) != 0)
		fail_msg("%s: rewriting twice changes the text", name);
	/* Over a rewrite for another subset: as if applied to upstream. */
	demo_subset(&demo);
	demo.time_s = 7;
	pg_buf_reset(&b);
	assert_int_equal(harness_mempool_rewrite(in->data, in->len, &demo, &b, &err), 0);
	assert_int_equal(harness_mempool_rewrite(b.data, b.len, s, &c, &err), 0);
	if (c.len != out->len || memcmp(c.data, out->data, out->len) != 0)
		fail_msg("%s: rewriting a rewritten text differs", name);
	pg_buf_release(&b);
	pg_buf_release(&c);
}

static void test_golden(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	const char *update = getenv("PG_UPDATE_GOLDEN");
	char *names[64];
	size_t n = 0, ok = 0, refused = 0;
	struct dirent *de;
	DIR *d = opendir(FIXTURES);

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0) {
			assert_true(n < 64);
			names[n++] = strndup(de->d_name, len - 5);
		}
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	for (size_t i = 0; i < n; i++) {
		struct pg_buf in = PG_BUF_INIT(HARNESS_MAX_SOURCE), js = PG_BUF_INIT(4096);
		struct pg_buf want = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE);
		struct pg_buf got = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE);
		struct harness_subset s;
		char path[512], src[256];
		const char *dot = strchr(names[i], '.');
		int rc;

		assert_non_null(dot);
		snprintf(src, sizeof(src), "%.*s.in", (int)(dot - names[i]), names[i]);
		read_fixture(src, &in);
		snprintf(path, sizeof(path), "%s.json", names[i]);
		read_fixture(path, &js);
		if (subset_of(js.data, &s, &err) < 0)
			fail_msg("%s.json: %s", names[i], err.msg);
		rc = render(&in, &s, &got);
		snprintf(path, sizeof(path), FIXTURES "/%s.ok", names[i]);
		if (update && strcmp(update, "1") == 0)
			assert_int_equal(pg_write_file_atomic(path, got.data, got.len, 0644, &err), 0);
		assert_int_equal(pg_read_file(path, &want, &err), 0);
		if (strcmp(pg_buf_str(&want), pg_buf_str(&got)) != 0) {
			print_error("%s: expected\n%sgot\n%s", path, pg_buf_str(&want),
				    pg_buf_str(&got));
			fail();
		}
		if (rc == 0) {
			check_rewrite_laws(names[i], &in, &s, &got);
			ok++;
		} else {
			refused++;
		}
		pg_buf_release(&in);
		pg_buf_release(&js);
		pg_buf_release(&want);
		pg_buf_release(&got);
		free(names[i]);
	}
	/* Both kinds, so that a harness that refuses or accepts all fails. */
	assert_true(ok >= 7);
	assert_true(refused >= 4);
}

/* What the demo rewrite of 22.11.11 changes, said directly. */
static void test_demo_content(void **state)
{
	struct pg_buf in = PG_BUF_INIT(HARNESS_MAX_SOURCE), out = PG_BUF_INIT(1 << 21);
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset s;
	const char *t;

	(void)state;
	demo_subset(&s);
	read_fixture("2211.in", &in);
	assert_int_equal(harness_mempool_rewrite(in.data, in.len, &s, &out, &err), 0);
	t = pg_buf_str(&out);
	assert_non_null(strstr(t, "#else /* perfgate-harness: subset cores=1 cache=0,512 bulk=32 "
			       "keep=128 constant_n=0 time_s=1 */\n#define TIME_S 1\n"));
	assert_non_null(strstr(t, "static const unsigned int bulk_tab[] = { 32 };"));
	assert_non_null(strstr(t, "static const unsigned int keep_tab[] = { 128 };"));
	assert_non_null(strstr(t, "static const int constant_tab[] = { 0 };"));
	assert_non_null(strstr(t, "\tprintf(\"start performance test (without cache)\\n\");\n"
			       "\tif (do_one_mempool_test(mp_nocache, 1) < 0)\n\t\tgoto err;\n"
			       "\tprintf(\"start performance test (with cache)\\n\");\n"
			       "\tif (do_one_mempool_test(mp_cache, 1) < 0)\n\t\tgoto err;\n"
			       "\trte_mempool_list_dump(stdout);\n#endif /* perfgate-harness */\n"));
	/* One core only: no lcore check. */
	assert_null(strstr(t, "not enough lcores"));
	/* launch_cores(), which prints the result lines, is untouched. */
	assert_non_null(strstr(t, "\"n_put_bulk=%u n_keep=%u constant_n=%u \""));
	pg_buf_release(&in);
	pg_buf_release(&out);
}

/* ------------------------------------------------------------------ */
/* The subset */

static void expect_subset_error(const char *json, const char *msg)
{
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset s;

	if (subset_of(json, &s, &err) != -1)
		fail_msg("%s: accepted", json);
	assert_int_equal(err.code, PG_EINVAL);
	if (!strstr(err.msg, msg))
		fail_msg("%s: message '%s' lacks '%s'", json, err.msg, msg);
}

static void test_subset_json(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf b = PG_BUF_INIT(1024);
	struct harness_subset s;

	(void)state;
	/* NULL and {} are the profile's defaults. */
	assert_int_equal(harness_subset_from_json(NULL, &s, &err), 0);
	assert_int_equal(harness_subset_describe(&s, &b), 0);
	assert_string_equal(pg_buf_str(&b), "cores=1 cache=0,512 bulk=32 keep=128 constant_n=0 "
			    "time_s=1");
	assert_int_equal(subset_of("{}", &s, &err), 0);
	pg_buf_reset(&b);
	assert_int_equal(harness_subset_describe(&s, &b), 0);
	assert_string_equal(pg_buf_str(&b), "cores=1 cache=0,512 bulk=32 keep=128 constant_n=0 "
			    "time_s=1");
	/* Lists come out sorted; absent members keep the defaults. */
	assert_int_equal(subset_of("{\"cores\": [4, 1, 2], \"cache\": [512], \"bulk\": [8, 1],"
				   " \"constant_n\": [1, 0], \"time_s\": 60}", &s, &err), 0);
	pg_buf_reset(&b);
	assert_int_equal(harness_subset_describe(&s, &b), 0);
	assert_string_equal(pg_buf_str(&b), "cores=1,2,4 cache=512 bulk=1,8 keep=128 "
			    "constant_n=0,1 time_s=60");

	expect_subset_error("[]", "subset: expected an object, got an array");
	expect_subset_error("{\"core\": [1]}", "subset: field 'core': unknown field");
	expect_subset_error("{\"cores\": 1}", "subset.cores: expected an array, got a number");
	expect_subset_error("{\"bulk\": []}", "subset.bulk: must not be empty");
	expect_subset_error("{\"keep\": [128, \"x\"]}", "subset.keep[1]: expected an integer, "
			    "got a string");
	expect_subset_error("{\"cores\": [0]}", "subset.cores[0]: 0 is out of range [1, 1024]");
	expect_subset_error("{\"bulk\": [600]}", "subset.bulk[0]: 600 is out of range [1, 512]");
	expect_subset_error("{\"keep\": [40000]}", "subset.keep[0]: 40000 is out of range");
	expect_subset_error("{\"bulk\": [1.5]}", "subset.bulk[0]: 1.5 is not an integer");
	expect_subset_error("{\"cores\": [1, 2, 1]}", "subset.cores[2]: 1 is listed twice");
	expect_subset_error("{\"cache\": [256]}", "subset.cache: 256 is not 0 (the pool without "
			    "cache) or 512");
	expect_subset_error("{\"cache\": [0, 512, 0]}", "subset.cache: has more than 2 items");
	expect_subset_error("{\"constant_n\": [2]}", "subset.constant_n[0]: 2 is out of range "
			    "[0, 1]");
	expect_subset_error("{\"bulk\": [64], \"keep\": [32]}", "subset.keep: 32 is less than "
			    "bulk 64");
	expect_subset_error("{\"bulk\": [32], \"keep\": [100]}", "subset.keep: 100 is not a "
			    "multiple of bulk 32");
	expect_subset_error("{\"time_s\": 0}", "subset: field 'time_s'");
	expect_subset_error("{\"time_s\": 61}", "subset: field 'time_s'");
	expect_subset_error("{\"time_s\": \"1\"}", "subset: field 'time_s'");
	expect_subset_error("{\"cores\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}",
			    "subset.cores: has more than 16 items");
	/* 16 x 2 x 4 x 4 x 2 = 1024 configurations is the most. */
	assert_int_equal(subset_of("{\"cores\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"
				   " \"bulk\": [1, 2, 4, 8], \"keep\": [64, 128, 256, 512],"
				   " \"constant_n\": [0, 1]}", &s, &err), 0);
	assert_int_equal(harness_subset_lines(&s), 1024);
	expect_subset_error("{\"cores\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"
			    " \"bulk\": [1, 2, 4, 8], \"keep\": [64, 128, 256, 512, 1024],"
			    " \"constant_n\": [0, 1]}", "subset: selects 1280 configurations; at "
			    "most 1024");
	/* A failed parse leaves s alone. */
	assert_int_equal(s.n_cores, 16);
	pg_buf_release(&b);
}

/* The keys of the result lines of a captured run, in order: the section
 * header names the pool, the line's key=value pairs the rest. */
static size_t run_keys(const char *text, char keys[][128], size_t max)
{
	const char *section = NULL, *p = text;
	size_t n = 0;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[512];
		unsigned cache, cores, get, put, keep, cn = 0;

		assert_true(len < sizeof(line));
		memcpy(line, p, len);
		line[len] = '\0';
		if (strcmp(line, "start performance test (without cache)") == 0)
			section = "nocache";
		else if (strcmp(line, "start performance test (with cache)") == 0)
			section = "cache";
		else if (strncmp(line, "start performance test", 22) == 0)
			fail_msg("a section the subset does not run: %s", line);
		if (strncmp(line, "mempool_autotest ", 17) == 0) {
			assert_non_null(section);
			assert_true(sscanf(line, "mempool_autotest cache=%u cores=%u n_get_bulk=%u "
					   "n_put_bulk=%u n_keep=%u constant_n=%u", &cache, &cores,
					   &get, &put, &keep, &cn) >= 5);
			assert_non_null(strstr(line, " rate_persec="));
			assert_int_equal(cache, strcmp(section, "cache") == 0 ? 512 : 0);
			assert_true(n < max);
			snprintf(keys[n++], 128, "mempool.%s.cores%u.keep%u.get%u.put%u.const%u",
				 section, cores, keep, get, put, cn);
		}
		p += len + (eol ? 1 : 0);
	}
	return n;
}

static void check_run(const char *subset_file, const char *run_file)
{
	struct pg_buf js = PG_BUF_INIT(4096), run = PG_BUF_INIT(1 << 20);
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset s;
	static char keys[64][128];
	char key[128];
	size_t n;

	read_fixture(subset_file, &js);
	read_fixture(run_file, &run);
	assert_int_equal(subset_of(js.data, &s, &err), 0);
	n = run_keys(run.data, keys, 64);
	assert_int_equal(n, harness_subset_lines(&s));
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(harness_subset_key(&s, i, key, sizeof(key)), 0);
		assert_string_equal(key, keys[i]);
	}
	assert_int_equal(harness_subset_key(&s, n, key, sizeof(key)), -1);
	assert_non_null(strstr(run.data, "\nTest OK\n"));
	pg_buf_release(&js);
	pg_buf_release(&run);
}

/* Lines, keys and their order against real runs of the rewritten test. */
static void test_subset_plan(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset s;
	char key[128];

	(void)state;
	check_run("2211.demo.json", "2211.demo.run");
	check_run("2211.wide.json", "2211.wide.run");
	demo_subset(&s);
	assert_int_equal(harness_subset_lines(&s), 2);
	assert_int_equal(harness_subset_estimate_s(&s), 2 + HARNESS_SETUP_S);
	assert_int_equal(subset_of("{\"cores\": [1, 2], \"bulk\": [1, 32], \"keep\": [32, 512],"
				   " \"constant_n\": [0, 1], \"time_s\": 5}", &s, &err), 0);
	assert_int_equal(harness_subset_lines(&s), 32);
	assert_int_equal(harness_subset_estimate_s(&s), 160 + HARNESS_SETUP_S);
	/* A buffer too small is an error, not a cut key. */
	assert_int_equal(harness_subset_key(&s, 0, key, 10), -1);
}

/* ------------------------------------------------------------------ */
/* Layouts refused */

/* The 22.11.11 text with `old` (found exactly once) replaced by `new`. */
static void edited(const struct pg_buf *in, const char *old, const char *new, struct pg_buf *out)
{
	const char *p = strstr(in->data, old);

	assert_non_null(p);
	assert_null(strstr(p + 1, old));
	pg_buf_reset(out);
	assert_int_equal(pg_buf_add(out, in->data, (size_t)(p - in->data)), 0);
	assert_int_equal(pg_buf_adds(out, new), 0);
	assert_int_equal(pg_buf_adds(out, p + strlen(old)), 0);
}

static void expect_refused(const struct pg_buf *text, const char *why)
{
	struct pg_buf out = PG_BUF_INIT(1 << 21);
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset s;

	demo_subset(&s);
	assert_int_equal(harness_mempool_rewrite(text->data, text->len, &s, &out, &err), 1);
	assert_int_equal(out.len, 0);
	if (!strstr(err.msg, "layout not recognised") || !strstr(err.msg, why))
		fail_msg("message '%s' lacks '%s'", err.msg, why);
	pg_buf_release(&out);
}

static void test_not_recognised(void **state)
{
	struct pg_buf in = PG_BUF_INIT(HARNESS_MAX_SOURCE), t = PG_BUF_INIT(1 << 21);

	(void)state;
	read_fixture("2211.in", &in);
	/* A patch that changes the tables (as 24.11 did). */
	edited(&in, "unsigned int keep_tab[] = { 32, 128, 512, 0 };",
	       "unsigned int keep_tab[] = { 32, 128, 512, 2048, 0 };", &t);
	expect_refused(&t, "keep {32,128,512,2048,0}");
	/* TIME_S under a condition, defined twice. */
	edited(&in, "#define TIME_S 5\n", "#ifdef X\n#define TIME_S 1\n#else\n#define TIME_S 5\n"
	       "#endif\n", &t);
	expect_refused(&t, "TIME_S is not #defined exactly once");
	edited(&in, "#define TIME_S 5\n", "#define TIME_S (5)\n", &t);
	expect_refused(&t, "TIME_S is not #defined to a number");
	edited(&in, "#define TIME_S 5\n", "", &t);
	expect_refused(&t, "TIME_S is not #defined exactly once");
	/* do_one_mempool_test() doing something the subset's would not. */
	edited(&in, "\t\t\t\tn_keep = *keep_ptr;\n", "\t\t\t\tn_keep = *keep_ptr;\n"
	       "\t\t\t\trte_delay_us(10);\n", &t);
	expect_refused(&t, "do_one_mempool_test() uses 'rte_delay_us'");
	edited(&in, "do_one_mempool_test(struct rte_mempool *mp, unsigned int cores)\n{",
	       "do_one_mempool_test(struct rte_mempool *mp, unsigned int cores, int x)\n{", &t);
	expect_refused(&t, "has other parameters");
	/* A new section, or a section without its max-cores run. */
	edited(&in, "\trte_mempool_list_dump(stdout);\n\n\tret = 0;",
	       "\tprintf(\"start performance test (with cache 256)\\n\");\n"
	       "\trte_mempool_list_dump(stdout);\n\n\tret = 0;", &t);
	expect_refused(&t, "the section block is not the four known sections");
	edited(&in, "\tif (do_one_mempool_test(mp_cache, rte_lcore_count()) < 0)\n\t\tgoto err;\n",
	       "", &t);
	expect_refused(&t, "the section block is not the four known sections");
	/* The result line's format changed (as in 25.07: padded values). */
	edited(&in, "\"n_put_bulk=%u n_keep=%u constant_n=%u \"",
	       "\"n_put_bulk=%3u n_keep=%5u constant_n=%u \"", &t);
	expect_refused(&t, "launch_cores() does not print the known result format");
	/* Not C we can read. */
	edited(&in, "REGISTER_TEST_COMMAND(mempool_perf_autotest, test_mempool_perf);\n",
	       "REGISTER_TEST_COMMAND(mempool_perf_autotest, test_mempool_perf);\n/* open\n", &t);
	expect_refused(&t, "unterminated comment");
	edited(&in, "printf(\"per-lcore test returned -1\\n\");",
	       "printf(\"per-lcore test returned -1\\n);", &t);
	expect_refused(&t, "unterminated string");
	pg_buf_reset(&t);
	expect_refused(&t, "TIME_S is not #defined exactly once");
	pg_buf_release(&in);
	pg_buf_release(&t);
}

/* Every cut of the real file is either still recognised (a cut after the
 * last anchor) or refused; none reads out of bounds (run under ASan). */
static void test_truncated(void **state)
{
	struct pg_buf in = PG_BUF_INIT(HARNESS_MAX_SOURCE), out = PG_BUF_INIT(1 << 21);
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset s;
	size_t recognised = 0;

	(void)state;
	demo_subset(&s);
	read_fixture("2211.in", &in);
	for (size_t len = 0; len < in.len; len += 7) {
		/* A copy of exactly len bytes, so that ASan sees any overread. */
		char *cut = malloc(len ? len : 1);
		int rc;

		assert_non_null(cut);
		memcpy(cut, in.data, len);
		pg_buf_reset(&out);
		rc = harness_mempool_rewrite(cut, len, &s, &out, &err);
		assert_true(rc == 0 || rc == 1);
		recognised += rc == 0;
		free(cut);
	}
	/* Only cuts after the section block's last line can still pass. */
	assert_true(recognised > 0 && recognised < 60);
	pg_buf_release(&in);
	pg_buf_release(&out);
}

/* ------------------------------------------------------------------ */
/* Markers, errors */

static void test_markers(void **state)
{
	struct pg_buf in = PG_BUF_INIT(HARNESS_MAX_SOURCE), out = PG_BUF_INIT(1 << 21);
	struct pg_buf t = PG_BUF_INIT(1 << 21), small = PG_BUF_INIT(100);
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset s;

	(void)state;
	demo_subset(&s);
	read_fixture("2211.in", &in);
	/* Restoring an upstream text gives it back unchanged. */
	assert_int_equal(harness_mempool_restore(in.data, in.len, &t, &err), 0);
	assert_int_equal(t.len, in.len);
	assert_memory_equal(t.data, in.data, in.len);
	assert_int_equal(harness_mempool_rewrite(in.data, in.len, &s, &out, &err), 0);
	/* A block whose #endif is gone cannot be undone: an error, not a guess. */
	edited(&out, "rte_mempool_list_dump(stdout);\n#endif /* perfgate-harness */\n",
	       "rte_mempool_list_dump(stdout);\n", &t);
	pg_buf_reset(&small);
	assert_int_equal(harness_mempool_restore(t.data, t.len, &small, &err), -1);
	assert_non_null(strstr(err.msg, "is not closed; restore the file from git"));
	assert_int_equal(harness_mempool_rewrite(t.data, t.len, &s, &small, &err), -1);
	/* A marker outside a block. */
	edited(&in, "#define N 65536\n", "#define N 65536 /* perfgate-harness */\n", &t);
	assert_int_equal(harness_mempool_restore(t.data, t.len, &small, &err), -1);
	assert_non_null(strstr(err.msg, "markers outside a block"));
	/* out's cap holds. */
	assert_int_equal(harness_mempool_rewrite(in.data, in.len, &s, &small, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_int_equal(small.len, 0);
	pg_buf_release(&in);
	pg_buf_release(&out);
	pg_buf_release(&t);
	pg_buf_release(&small);
}

/* ------------------------------------------------------------------ */
/* Files */

static void set_old_mtime(const char *path)
{
	struct timespec ts[2] = { { 946684800, 0 }, { 946684800, 0 } };	/* 2000-01-01 */

	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static time_t mtime_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mtime;
}

static void test_files(void **state)
{
	struct pg_buf in = PG_BUF_INIT(HARNESS_MAX_SOURCE), want = PG_BUF_INIT(1 << 21);
	struct pg_buf got = PG_BUF_INIT(1 << 21);
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset s;
	char root[] = "/tmp/pg-test-harness.XXXXXX", path[256], dir[256];
	bool applied, restored;
	struct stat st;

	(void)state;
	demo_subset(&s);
	assert_non_null(mkdtemp(root));
	/* No test file: an error naming it. */
	assert_int_equal(harness_apply_file(root, &s, &applied, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "app/test/test_mempool_perf.c: no such file"));
	assert_false(applied);

	snprintf(dir, sizeof(dir), "%s/app/test", root);
	snprintf(path, sizeof(path), "%s/" HARNESS_TEST_PATH, root);
	assert_int_equal(pg_mkdir_p(dir, 0755, &err), 0);
	read_fixture("2211.in", &in);
	assert_int_equal(pg_write_file_atomic(path, in.data, in.len, 0640, &err), 0);
	set_old_mtime(path);
	assert_int_equal(harness_apply_file(root, &s, &applied, &err), 0);
	assert_true(applied);
	read_fixture("2211.demo.ok", &want);
	assert_int_equal(pg_read_file(path, &got, &err), 0);
	assert_string_equal(got.data, want.data);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_true(st.st_mtime != 946684800);
	/* Again with the same subset: nothing written, the mtime stays. */
	set_old_mtime(path);
	assert_int_equal(harness_apply_file(root, &s, &applied, &err), 0);
	assert_true(applied);
	assert_int_equal(mtime_of(path), 946684800);
	/* Another subset: written. */
	s.time_s = 3;
	assert_int_equal(harness_apply_file(root, &s, &applied, &err), 0);
	assert_true(mtime_of(path) != 946684800);
	/* Mode full: back to upstream, once. */
	assert_int_equal(harness_restore_file(root, &restored, &err), 0);
	assert_true(restored);
	pg_buf_reset(&got);
	assert_int_equal(pg_read_file(path, &got, &err), 0);
	assert_int_equal(got.len, in.len);
	assert_memory_equal(got.data, in.data, in.len);
	set_old_mtime(path);
	assert_int_equal(harness_restore_file(root, &restored, &err), 0);
	assert_false(restored);
	assert_int_equal(mtime_of(path), 946684800);
	/* A layout it does not know: file untouched, the reason in err. */
	assert_int_equal(pg_write_file_atomic(path, "int x;\n", 7, 0644, &err), 0);
	set_old_mtime(path);
	assert_int_equal(harness_apply_file(root, &s, &applied, &err), 0);
	assert_false(applied);
	assert_non_null(strstr(err.msg, "layout not recognised"));
	assert_int_equal(mtime_of(path), 946684800);
	/* A subset this version cannot run: an error, file untouched. */
	assert_int_equal(pg_write_file_atomic(path, in.data, in.len, 0644, &err), 0);
	s.keep[0] = 1024;
	set_old_mtime(path);
	assert_int_equal(harness_apply_file(root, &s, &applied, &err), -1);
	assert_false(applied);
	assert_non_null(strstr(err.msg, "exceeds this version's MAX_KEEP 512"));
	assert_int_equal(mtime_of(path), 946684800);

	assert_int_equal(fx_rm_tree(root), 0);
	pg_buf_release(&in);
	pg_buf_release(&want);
	pg_buf_release(&got);
}

/* Every name in dir, with its size, as one string (to see that nothing
 * in it changed). */
static void dir_state(const char *dir, char *out, size_t size)
{
	DIR *d = opendir(dir);
	size_t len = 0;
	struct stat st;
	char path[512];

	assert_non_null(d);
	out[0] = '\0';
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || strcmp(e->d_name, "..") == 0))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		assert_int_equal(lstat(path, &st), 0);
		len += (size_t)snprintf(out + len, size - len, "%s:%lld:%o ", e->d_name,
					(long long)st.st_size, (unsigned)st.st_mode);
		assert_true(len < size);
	}
	closedir(d);
}

/*
 * A patch that turns app/test (or the test file) into a link to a
 * directory outside the slot: the agent, as root, must neither read nor
 * replace what the link points to.  The outside file is one the harness
 * would rewrite, so that only the refusal keeps it unchanged.
 */
static void test_files_links(void **state)
{
	struct pg_buf in = PG_BUF_INIT(HARNESS_MAX_SOURCE), got = PG_BUF_INIT(1 << 21);
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset s;
	char top[] = "/tmp/pg-test-harness-link.XXXXXX";
	char root[64], outside[64], path[256], before[2048], after[2048];
	bool applied = true, restored = true;

	(void)state;
	demo_subset(&s);
	assert_non_null(mkdtemp(top));
	snprintf(root, sizeof(root), "%s/slot", top);
	snprintf(outside, sizeof(outside), "%s/etc", top);
	assert_int_equal(pg_mkdir_p(outside, 0755, &err), 0);
	read_fixture("2211.in", &in);
	snprintf(path, sizeof(path), "%s/test_mempool_perf.c", outside);
	assert_int_equal(pg_write_file_atomic(path, in.data, in.len, 0644, &err), 0);
	snprintf(path, sizeof(path), "%s/app", root);
	assert_int_equal(pg_mkdir_p(path, 0755, &err), 0);
	snprintf(path, sizeof(path), "%s/app/test", root);
	assert_int_equal(symlink(outside, path), 0);
	dir_state(outside, before, sizeof(before));

	assert_int_equal(harness_apply_file(root, &s, &applied, &err), -1);
	assert_false(applied);
	assert_int_equal(err.code, PG_EINVAL);
	if (!strstr(err.msg, "app/test/test_mempool_perf.c' goes through a symbolic link "
		    "('app/test'): refused"))
		fail_msg("%s", err.msg);
	assert_int_equal(harness_restore_file(root, &restored, &err), -1);
	assert_false(restored);
	assert_non_null(strstr(err.msg, "goes through a symbolic link ('app/test')"));
	dir_state(outside, after, sizeof(after));
	assert_string_equal(after, before);
	snprintf(path, sizeof(path), "%s/test_mempool_perf.c", outside);
	assert_int_equal(pg_read_file(path, &got, &err), 0);
	assert_int_equal(got.len, in.len);
	assert_memory_equal(got.data, in.data, in.len);

	/* The file itself a link (app/test a real directory). */
	snprintf(path, sizeof(path), "%s/app/test", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/app/test/test_mempool_perf.c", root);
	{
		char target[128];

		snprintf(target, sizeof(target), "%s/test_mempool_perf.c", outside);
		assert_int_equal(symlink(target, path), 0);
	}
	assert_int_equal(harness_apply_file(root, &s, &applied, &err), -1);
	assert_false(applied);
	assert_non_null(strstr(err.msg, "test_mempool_perf.c' is a symbolic link: refused"));
	dir_state(outside, after, sizeof(after));
	assert_string_equal(after, before);

	assert_int_equal(fx_rm_tree(top), 0);
	pg_buf_release(&in);
	pg_buf_release(&got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_demo_content),
		cmocka_unit_test(test_subset_json),
		cmocka_unit_test(test_subset_plan),
		cmocka_unit_test(test_not_recognised),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_markers),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_files_links),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
