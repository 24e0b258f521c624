/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/planner.c: a temporary store with series
 * inserted as intake leaves them (and, in one test, made by real intake of
 * the tests/intake corpus), real local git trees, and the profile
 * tests/planner/profile.json (two contexts on two host classes, two build
 * modes, two benchmarks, a stable-tag rule and a path rule).  Checked:
 * runs with their tree, branch and base commit (branch tip, an existing
 * base-commit, one that is not there), the job spec (parsed back with
 * cJSON), version-gated meson options, pending checks in the outbox,
 * priorities, idempotence, rechecks (contexts, previous base, rebase,
 * ignored ones), supersession cancelling jobs, Depends-on waiting and
 * resolving and giving up, and a missing tree or branch skipped, counted
 * and retried.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"
#include "fsutil.h"
#include "intake.h"
#include "jobspec.h"
#include "json.h"
#include "log.h"
#include "planner.h"
#include "profile.h"
#include "runner_dpdk.h"
#include "series.h"
#include "store.h"
#include "trees.h"

#include "../planner/testgit.h"

#define PROFILE_TEMPLATE "tests/planner/profile.json"
#define NOW 1767225600		/* 2026-01-01T00:00:00Z: the planner's pinned clock */
#define URL "http://ci.test:8080/"
#define INTEL "perfgate-intel-Performance"
#define DEMO "perfgate-demo-Performance"

struct fx {
	char dir[512];
	char dpdk[1024], nn[1024], mirrors[1024], db[1024], profile[1024];
	char c1[41], c2[41], s1[41], n1[41];	/* main c1 <- c2; 22.11 c1 <- s1; next-net n1 */
	struct store *st;
	struct profile_set ps;
	struct planner pl;
	int64_t source_id;
	int seq;
};

/* ---- fixture ------------------------------------------------------------ */

static void write_profile(struct fx *f)
{
	struct pg_buf in = PG_BUF_INIT(1024 * 1024), out = PG_BUF_INIT(1024 * 1024);
	struct pg_err err = PG_ERR_INIT;
	const char *s, *at;

	if (pg_read_file(PROFILE_TEMPLATE, &in, &err) < 0)
		fail_msg("%s", err.msg);
	for (s = pg_buf_str(&in); (at = strstr(s, "@ROOT@")) != NULL; s = at + 6) {
		assert_int_equal(pg_buf_add(&out, s, (size_t)(at - s)), 0);
		assert_int_equal(pg_buf_adds(&out, f->dir), 0);
	}
	assert_int_equal(pg_buf_adds(&out, s), 0);
	if (pg_write_file_atomic(f->profile, out.data, out.len, 0644, &err) < 0)
		fail_msg("%s", err.msg);
	pg_buf_release(&in);
	pg_buf_release(&out);
}

static void load_profile(struct fx *f)
{
	struct pg_err err = PG_ERR_INIT;
	const char *paths[] = { f->profile };

	if (profile_set_load(&f->ps, paths, 1, &err) < 0)
		fail_msg("%s", err.msg);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct pg_err err = PG_ERR_INIT;
	const char *tmp = getenv("TMPDIR");

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/pg-test-planner.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	tg_set_home(f->dir);
	snprintf(f->dpdk, sizeof(f->dpdk), "%s/dpdk", f->dir);
	snprintf(f->nn, sizeof(f->nn), "%s/next-net", f->dir);
	snprintf(f->mirrors, sizeof(f->mirrors), "%s/mirrors", f->dir);
	snprintf(f->db, sizeof(f->db), "%s/store.db", f->dir);
	snprintf(f->profile, sizeof(f->profile), "%s/profile.json", f->dir);

	tg_init(f->dpdk, "main");
	tg_commit(f->dpdk, "VERSION", "22.11.0\n", "version: 22.11.0", f->c1);
	tg_git(f->dpdk, "branch", "22.11");
	tg_commit(f->dpdk, "VERSION", "23.11.0\n", "version: 23.11.0", f->c2);
	tg_git(f->dpdk, "checkout", "-q", "22.11");
	tg_commit(f->dpdk, "VERSION", "22.11.1\n", "version: 22.11.1", f->s1);
	tg_git(f->dpdk, "checkout", "-q", "main");
	tg_init(f->nn, "main");
	tg_commit(f->nn, "VERSION", "24.03.0-rc0\n", "next-net", f->n1);

	write_profile(f);
	load_profile(f);
	if (store_open(&f->st, f->db, &err) < 0)
		fail_msg("%s", err.msg);
	if (store_run(f->st, "source", "INSERT INTO sources (name, kind, location, project,"
		      " created_at) VALUES ('test', 'mbox', 'test.mbox', 'dpdk', 0)", NULL, 0,
		      &err) < 0)
		fail_msg("%s", err.msg);
	f->source_id = store_last_id(f->st);
	planner_init(&f->pl, f->st, &f->ps, f->mirrors, URL);
	f->pl.now_s = NOW;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	store_close(f->st);
	profile_set_free(&f->ps);
	tg_rm_rf(f->dir);
	free(f);
	return 0;
}

/* ---- store helpers -------------------------------------------------------- */

static void run_sql(struct fx *f, const char *sql, const struct store_arg *args, size_t n)
{
	struct pg_err err = PG_ERR_INIT;

	if (store_run(f->st, "test", sql, args, n, &err) < 0)
		fail_msg("%s: %s", sql, err.msg);
}

static int64_t q_int(struct fx *f, const char *sql, const struct store_arg *args, size_t n)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t v = -1;

	if (store_query_int(f->st, "test", sql, args, n, &v, &err) < 0)
		fail_msg("%s: %s", sql, err.msg);
	return v;
}

/* The first column of the first row as text into out ("" for NULL). */
static void q_text(struct fx *f, const char *sql, const struct store_arg *args, size_t n,
		   char *out, size_t outlen)
{
	struct pg_err err = PG_ERR_INIT;
	sqlite3_stmt *stmt = NULL;
	const char *s;

	if (store_prepare(f->st, &stmt, sql, "test", &err) < 0 ||
	    store_bind(stmt, args, n, "test", &err) < 0 || store_step(stmt, "test", &err) != 1)
		fail_msg("%s: %s", sql, err.msg[0] ? err.msg : "no row");
	s = (const char *)sqlite3_column_text(stmt, 0);
	assert_true((size_t)snprintf(out, outlen, "%s", s ? s : "") < outlen);
	sqlite3_finalize(stmt);
}

static int64_t add_patch(struct fx *f, int64_t series, int number, const char *files,
			 const char *base)
{
	char msgid[64], pos[32];

	f->seq++;
	snprintf(msgid, sizeof(msgid), "s%lld-p%d.%d@test", (long long)series, number, f->seq);
	snprintf(pos, sizeof(pos), "%d", f->seq);
	run_sql(f, "INSERT INTO messages (source_id, position, msgid, subject, kind, raw_size,"
		" raw, state, received_at) VALUES (?1, ?2, ?3, 'patch', 'patch', 1, ?4,"
		" 'accepted', 0)",
		STORE_ARGS(STORE_INT(f->source_id), STORE_TEXT(pos), STORE_TEXT(msgid),
			   STORE_BLOB("x", 1)));
	run_sql(f, "INSERT INTO patches (series_id, number, message_id, subject, files,"
		" base_commit) VALUES (?1, ?2, ?3, 'patch', ?4, ?5)",
		STORE_ARGS(STORE_INT(series), STORE_INT(number), STORE_INT(store_last_id(f->st)),
			   STORE_TEXT(files), STORE_TEXT(base)));
	return store_last_id(f->st);
}

/* A series of `total` patches of which the first `present` are there
 * (complete when all are), each touching `files`. */
static int64_t add_series(struct fx *f, const char *title, int total, int present,
			  const char *tags, const char *base, const char *files)
{
	bool complete = present == total;
	int64_t id;

	run_sql(f, "INSERT INTO series (project, root_msgid, total, title, tags, submitter_addr,"
		" state, received_at, completed_at, base_commit)"
		" VALUES ('dpdk', ?1, ?2, ?3, ?4, 'ada@example.org', ?5, ?6, ?7, ?8)",
		STORE_ARGS(STORE_TEXT(title), STORE_INT(total), STORE_TEXT(title),
			   STORE_TEXT(tags ? tags : ""),
			   STORE_TEXT(complete ? "complete" : "incomplete"), STORE_INT(NOW - 600),
			   complete ? STORE_INT(NOW - 60) : STORE_NULL, STORE_TEXT(base)));
	id = store_last_id(f->st);
	for (int i = 1; i <= present; i++)
		add_patch(f, id, i, files, NULL);
	return id;
}

static void complete_series(struct fx *f, int64_t id, int64_t completed_at)
{
	run_sql(f, "UPDATE series SET state = 'complete', completed_at = ?1 WHERE id = ?2",
		STORE_ARGS(STORE_INT(completed_at), STORE_INT(id)));
}

static int64_t add_recheck(struct fx *f, int64_t series, const char *contexts,
			   const char *rebase)
{
	char msgid[64];

	f->seq++;
	snprintf(msgid, sizeof(msgid), "recheck.%d@test", f->seq);
	run_sql(f, "INSERT INTO recheck_requests (series_id, origin, msgid, requester, contexts,"
		" rebase_branch, created_at) VALUES (?1, 'mail', ?2, 'bob@example.org', ?3, ?4, ?5)",
		STORE_ARGS(STORE_INT(series), STORE_TEXT(msgid), STORE_TEXT(contexts),
			   STORE_TEXT(rebase), STORE_INT(NOW - 10 + f->seq)));
	return store_last_id(f->st);
}

static void pass(struct fx *f)
{
	struct pg_err err = PG_ERR_INIT;

	if (planner_run(&f->pl, &err) < 0)
		fail_msg("planner_run: %s", err.msg);
}

static int64_t count_where(struct fx *f, const char *sql, int64_t id)
{
	return q_int(f, sql, STORE_ARGS(STORE_INT(id)));
}

static int64_t run_of(struct fx *f, int64_t series, const char *tree)
{
	return q_int(f, "SELECT coalesce(max(id), 0) FROM runs WHERE series_id = ?1 AND tree = ?2",
		     STORE_ARGS(STORE_INT(series), STORE_TEXT(tree)));
}

static void run_field(struct fx *f, int64_t run, const char *col, char *out, size_t len)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "SELECT %s FROM runs WHERE id = ?1", col);
	q_text(f, sql, STORE_ARGS(STORE_INT(run)), out, len);
}

/* The parsed spec of the job of run/context/build mode. */
static cJSON *job_spec(struct fx *f, int64_t run, const char *ctx, const char *mode)
{
	struct pg_err err = PG_ERR_INIT;
	char text[64 * 1024];
	cJSON *spec = NULL;

	q_text(f, "SELECT spec FROM jobs WHERE run_id = ?1 AND context = ?2 AND build_mode = ?3",
	       STORE_ARGS(STORE_INT(run), STORE_TEXT(ctx), STORE_TEXT(mode)), text, sizeof(text));
	if (pg_json_parse(text, strlen(text), &spec, &err) < 0)
		fail_msg("spec: %s: %s", err.msg, text);
	return spec;
}

static const cJSON *get(const cJSON *o, const char *path)
{
	char key[64];

	/* "a.b.c" */
	while (o && *path) {
		size_t len = strcspn(path, ".");

		assert_true(len < sizeof(key));
		memcpy(key, path, len);
		key[len] = '\0';
		o = cJSON_GetObjectItemCaseSensitive(o, key);
		path += len + (path[len] == '.');
	}
	if (!o)
		fail_msg("no %s in the spec", path);
	return o;
}

static const char *get_str(const cJSON *o, const char *path)
{
	const cJSON *v = get(o, path);

	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static double get_num(const cJSON *o, const char *path)
{
	const cJSON *v = get(o, path);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static bool has(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key) != NULL;
}

static void assert_strings(const cJSON *arr, const char *const *want, size_t n)
{
	const cJSON *it;
	size_t i = 0;

	assert_true(cJSON_IsArray(arr));
	assert_int_equal(cJSON_GetArraySize(arr), n);
	cJSON_ArrayForEach(it, arr) {
		assert_true(cJSON_IsString(it));
		assert_string_equal(it->valuestring, want[i]);
		i++;
	}
}

static bool note_has(const cJSON *spec, const char *needle)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, get(spec, "notes"))
		if (cJSON_IsString(it) && strstr(it->valuestring, needle))
			return true;
	return false;
}

/* ---- tests -------------------------------------------------------------- */

static void test_new_series(void **state)
{
	struct fx *f = *state;
	const char *intel_args[] = {
		"-l", "2-5", "--socket-mem", "2048", "--file-prefix={file_prefix}",
		"--log-level={{lib.eal}}:info", "-d", "{build_dir}/drivers"
	};
	const char *demo_args[] = {
		"-l", "0-1", "--no-huge", "-m", "1024", "--file-prefix={file_prefix}",
		"--log-level={{lib.eal}}:info", "-d", "{build_dir}/drivers"
	};
	const char *pmd_args[] = {
		"-l", "2-5", "--socket-mem", "2048", "--file-prefix={file_prefix}", "--vdev", "net_null0",
		"--", "--forward-mode=io", "--record-core-cycles"
	};
	const char *gate[] = { "mempool.nocache.*" };
	char text[256], want[128];
	int64_t s, run, p1, p2;
	const cJSON *b, *sub;
	cJSON *spec;

	s = add_series(f, "mempool: speed up bulk get", 2, 2, "", NULL,
		       "lib/mempool/rte_mempool.c\nlib/mempool/rte_mempool.h");
	p1 = q_int(f, "SELECT id FROM patches WHERE series_id = ?1 AND number = 1",
		   STORE_ARGS(STORE_INT(s)));
	p2 = q_int(f, "SELECT id FROM patches WHERE series_id = ?1 AND number = 2",
		   STORE_ARGS(STORE_INT(s)));
	pass(f);
	assert_int_equal(f->pl.stats.series_planned, 1);
	assert_int_equal(f->pl.stats.runs_created, 1);
	assert_int_equal(f->pl.stats.jobs_created, 3);
	assert_int_equal(f->pl.stats.checks_queued, 3);
	assert_int_equal(f->pl.stats.trees_synced, 1);	/* next-net was not needed */
	assert_int_equal(f->pl.stats.errors, 0);

	run = run_of(f, s, "dpdk");
	assert_true(run > 0);
	run_field(f, run, "branch", text, sizeof(text));
	assert_string_equal(text, "main");
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c2);
	run_field(f, run, "reason", text, sizeof(text));
	assert_string_equal(text, "new");
	run_field(f, run, "state", text, sizeof(text));
	assert_string_equal(text, "planned");
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE series_id = ?1", s), 1);
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE run_id = ?1 AND state ="
				     " 'queued' AND priority = 10 AND created_at = 1767225600", run), 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM jobs WHERE run_id = ?1 AND context = ?2"
			       " AND host_class = 'intel'",
			       STORE_ARGS(STORE_INT(run), STORE_TEXT(INTEL))), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM jobs WHERE run_id = ?1 AND context = ?2"
			       " AND host_class = 'demo' AND build_mode = 'release'",
			       STORE_ARGS(STORE_INT(run), STORE_TEXT(DEMO))), 1);

	/* The intel release job's spec, field by field. */
	spec = job_spec(f, run, INTEL, "release");
	assert_int_equal(get_num(spec, "format"), PLANNER_SPEC_FORMAT);
	assert_int_equal(get_num(spec, "run"), run);
	assert_string_equal(get_str(spec, "reason"), "new");
	assert_string_equal(get_str(spec, "context"), INTEL);
	assert_string_equal(get_str(spec, "host_class"), "intel");
	assert_string_equal(get_str(spec, "build_mode"), "release");
	assert_string_equal(get_str(spec, "tree.name"), "dpdk");
	assert_string_equal(get_str(spec, "tree.url"), f->dpdk);
	assert_string_equal(get_str(spec, "tree.branch"), "main");
	assert_string_equal(get_str(spec, "tree.base_commit"), f->c2);
	assert_string_equal(get_str(spec, "tree.base_source"), "branch-tip");
	assert_string_equal(get_str(spec, "tree.version"), "23.11.0");
	assert_int_equal(get_num(spec, "series.id"), s);
	assert_string_equal(get_str(spec, "series.title"), "mempool: speed up bulk get");
	assert_int_equal(get_num(spec, "series.version"), 1);
	assert_int_equal(get_num(spec, "series.patches"), 2);
	snprintf(want, sizeof(want), "http://ci.test:8080/api/v1/series/%lld/mbox", (long long)s);
	assert_string_equal(get_str(spec, "series.mbox_url"), want);
	assert_int_equal(cJSON_GetArraySize(get(spec, "depends_on")), 0);
	/* 23.11 and later: the gated options, the later value winning. */
	assert_string_equal(get_str(spec, "build.buildtype"), "release");
	assert_string_equal(get_str(spec, "build.meson_options.tests"), "true");
	assert_string_equal(get_str(spec, "build.meson_options.platform"), "native");
	assert_string_equal(get_str(spec, "build.meson_options.enable_apps"), "test,test-pmd");
	/* And the host class's options over the build mode's. */
	assert_string_equal(get_str(spec, "build.meson_options.max_lcores"), "128");
	assert_int_equal(cJSON_GetArraySize(get(spec, "build.meson_options")), 4);
	assert_false(has(get(spec, "build"), "c_args"));
	assert_string_equal(get_str(spec, "host.labels.vendor"), "intel");
	assert_string_equal(get_str(spec, "host.labels.arch"), "x86_64");
	assert_string_equal(get_str(spec, "host.lcores"), "2-5");
	assert_int_equal(get_num(spec, "host.memory_mb"), 2048);
	assert_true(cJSON_IsTrue(get(spec, "host.hugepages")));
	assert_int_equal(get_num(spec, "host.numa_node"), 0);
	/* The class's quiet-host gating and requirements reach the agent. */
	assert_true(get_num(spec, "host.max_load") == 1.5);
	assert_int_equal(get_num(spec, "host.max_load_wait_s"), 120);
	assert_string_equal(get_str(spec, "host.require.governor"), "performance");
	assert_string_equal(get_str(spec, "host.require.smt"), "off");
	assert_true(cJSON_IsTrue(get(spec, "host.require.isolated_cpus")));
	assert_false(has(get(spec, "host.require"), "turbo"));
	assert_false(has(get(spec, "host.require"), "nohz_full"));
	assert_int_equal(cJSON_GetArraySize(get(spec, "benchmarks")), 2);
	b = cJSON_GetArrayItem(get(spec, "benchmarks"), 0);
	assert_string_equal(get_str(b, "name"), "mempool");
	assert_string_equal(get_str(b, "program"), "app/test/dpdk-test");
	assert_strings(get(b, "args"), intel_args, 8);
	assert_string_equal(get_str(b, "env.DPDK_TEST"), "mempool_perf_autotest");
	assert_string_equal(get_str(b, "stdin"), "null");
	assert_false(has(b, "duration_s"));
	assert_string_equal(get_str(b, "parser"), "mempool_perf");
	assert_strings(get(b, "gate"), gate, 1);
	assert_int_equal(get_num(b, "timeout_s"), 120);
	assert_false(has(b, "stop_after_lines"));
	assert_int_equal(get_num(b, "warmup_runs"), 2);
	assert_string_equal(get_str(b, "mode"), "subset");
	sub = get(b, "subset");
	assert_int_equal(cJSON_GetArraySize(get(sub, "cache")), 2);
	assert_int_equal(cJSON_GetArrayItem(get(sub, "cache"), 1)->valueint, 512);
	assert_int_equal(cJSON_GetArrayItem(get(sub, "bulk"), 0)->valueint, 32);
	assert_int_equal(cJSON_GetArrayItem(get(sub, "keep"), 0)->valueint, 128);
	assert_int_equal(cJSON_GetArrayItem(get(sub, "constant_n"), 0)->valueint, 0);
	assert_int_equal(get_num(sub, "time_s"), 1);
	b = cJSON_GetArrayItem(get(spec, "benchmarks"), 1);
	assert_string_equal(get_str(b, "name"), "testpmd");
	assert_strings(get(b, "args"), pmd_args, 10);
	assert_string_equal(get_str(b, "stdin"), "hold");
	assert_int_equal(get_num(b, "duration_s"), 5);
	assert_false(has(b, "warmup_runs"));
	assert_string_equal(get_str(b, "parser"), "testpmd");
	assert_false(has(b, "mode"));
	assert_false(has(b, "subset"));
	assert_int_equal(cJSON_GetArraySize(get(b, "env")), 0);
	assert_int_equal(get_num(spec, "repetitions"), 6);
	assert_int_equal(get_num(spec, "max_repetitions"), 18);
	assert_true(get_num(spec, "threshold_pct") == 5.0);
	assert_true(get_num(spec, "alpha") == 0.05);
	assert_true(get_num(spec, "noise_limit_pct") == 5.0);
	assert_int_equal(cJSON_GetArraySize(get(spec, "notes")), 0);
	cJSON_Delete(spec);

	spec = job_spec(f, run, INTEL, "debug");
	assert_string_equal(get_str(spec, "build.buildtype"), "debugoptimized");
	assert_string_equal(get_str(spec, "build.c_args"), "-DRTE_LIBRTE_MEMPOOL_DEBUG");
	assert_int_equal(cJSON_GetArraySize(get(spec, "build.meson_options")), 3);
	assert_string_equal(get_str(spec, "build.meson_options.platform"), "native");
	cJSON_Delete(spec);

	spec = job_spec(f, run, DEMO, "release");
	assert_string_equal(get_str(spec, "host.lcores"), "0-1");
	assert_false(cJSON_IsTrue(get(spec, "host.hugepages")));
	assert_false(has(get(spec, "host"), "max_load"));
	assert_false(has(get(spec, "host"), "max_load_wait_s"));
	assert_false(has(get(spec, "host"), "require"));
	assert_false(has(get(spec, "host"), "numa_node"));
	assert_int_equal(cJSON_GetArraySize(get(spec, "benchmarks")), 1);
	assert_strings(get(cJSON_GetArrayItem(get(spec, "benchmarks"), 0), "args"), demo_args, 9);
	assert_int_equal(get_num(spec, "repetitions"), 3);
	assert_true(get_num(spec, "threshold_pct") == 10.0);
	/* A class without options: the build mode's alone. */
	assert_false(has(get(spec, "build.meson_options"), "max_lcores"));
	assert_int_equal(cJSON_GetArraySize(get(spec, "build.meson_options")), 3);
	cJSON_Delete(spec);

	/* Pending checks: intel posts on every patch, demo on the last. */
	assert_int_equal(count_where(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1", run),
			 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1"
			       " AND context = ?2 AND patch_id IN (?3, ?4)",
			       STORE_ARGS(STORE_INT(run), STORE_TEXT(INTEL), STORE_INT(p1),
					  STORE_INT(p2))), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1"
			       " AND context = ?2 AND patch_id = ?3",
			       STORE_ARGS(STORE_INT(run), STORE_TEXT(DEMO), STORE_INT(p2))), 1);
	snprintf(want, sizeof(want), "http://ci.test:8080/series/%lld", (long long)s);
	assert_int_equal(q_int(f, "SELECT count(*) FROM check_outbox WHERE series_id = ?1"
			       " AND state = 'pending' AND delivery = 'queued' AND next_try = ?2"
			       " AND description = ?3 AND target_url = ?4 AND attempts = 0",
			       STORE_ARGS(STORE_INT(s), STORE_INT(NOW),
					  STORE_TEXT(PLANNER_PENDING_TEXT), STORE_TEXT(want))), 3);

	/* Idempotent: a second pass plans nothing. */
	pass(f);
	assert_int_equal(f->pl.stats.runs_created, 0);
	assert_int_equal(f->pl.stats.jobs_created, 0);
	assert_int_equal(f->pl.stats.checks_queued, 0);
	assert_int_equal(f->pl.stats.trees_synced, 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM jobs", NULL, 0), 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM check_outbox", NULL, 0), 3);
}

static void test_base_commit(void **state)
{
	struct fx *f = *state;
	const char *lib = "lib/eal/common/eal_common_options.c";
	int64_t found, absent, bad, patch1, patch2, run;
	char text[64];
	cJSON *spec;

	found = add_series(f, "eal: found base", 1, 1, "", f->c1, lib);
	absent = add_series(f, "eal: absent base", 1, 1, "",
			    "0123456789abcdef0123456789abcdef01234567", lib);
	bad = add_series(f, "eal: abbreviated base", 1, 1, "", "0123abc", lib);
	/* No cover letter: patch 1's trailer counts. */
	patch1 = add_series(f, "eal: patch base", 2, 0, "", NULL, lib);
	add_patch(f, patch1, 1, lib, f->c1);
	add_patch(f, patch1, 2, lib, NULL);
	complete_series(f, patch1, NOW - 30);
	/* Nor on patch 1: the first patch that carries one. */
	patch2 = add_series(f, "eal: last patch base", 2, 0, "", NULL, lib);
	add_patch(f, patch2, 1, lib, NULL);
	add_patch(f, patch2, 2, lib, f->c1);
	complete_series(f, patch2, NOW - 30);
	pass(f);
	assert_int_equal(f->pl.stats.runs_created, 5);
	assert_int_equal(f->pl.stats.errors, 0);

	run = run_of(f, found, "dpdk");
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c1);
	spec = job_spec(f, run, INTEL, "release");
	assert_string_equal(get_str(spec, "tree.base_source"), "base-commit");
	assert_string_equal(get_str(spec, "tree.branch"), "main");
	assert_string_equal(get_str(spec, "tree.version"), "22.11.0");
	/* Before 23.11: the gated options are left out; the class's platform
	 * wins over the build mode's "generic". */
	assert_string_equal(get_str(spec, "build.meson_options.platform"), "native");
	assert_false(has(get(spec, "build.meson_options"), "enable_apps"));
	assert_int_equal(cJSON_GetArraySize(get(spec, "notes")), 0);
	/* One-patch series go first. */
	assert_int_equal(count_where(f, "SELECT min(priority) FROM jobs WHERE run_id = ?1", run),
			 PLANNER_PRIORITY_SERIES + PLANNER_PRIORITY_SMALL);
	cJSON_Delete(spec);

	run = run_of(f, absent, "dpdk");
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c2);
	spec = job_spec(f, run, DEMO, "release");
	assert_string_equal(get_str(spec, "tree.base_source"), "branch-tip");
	assert_true(note_has(spec, "base-commit 0123456789abcdef0123456789abcdef01234567 is not "
			     "in tree dpdk: tested on the tip of main"));
	cJSON_Delete(spec);

	run = run_of(f, bad, "dpdk");
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c2);
	spec = job_spec(f, run, DEMO, "release");
	assert_true(note_has(spec, "'0123abc' is not a full commit id"));
	cJSON_Delete(spec);

	run = run_of(f, patch1, "dpdk");
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c1);
	assert_int_equal(count_where(f, "SELECT max(priority) FROM jobs WHERE run_id = ?1", run),
			 PLANNER_PRIORITY_SERIES);
	run = run_of(f, patch2, "dpdk");
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c1);
	spec = job_spec(f, run, DEMO, "release");
	assert_string_equal(get_str(spec, "tree.base_source"), "base-commit");
	cJSON_Delete(spec);
}

static void test_stable_tag_and_path_rule(void **state)
{
	struct fx *f = *state;
	int64_t stable, net, run, net_run, dpdk_run;
	char text[64];
	cJSON *spec;

	stable = add_series(f, "mempool: fix stats", 1, 1, "22.11", NULL,
			    "lib/mempool/rte_mempool.c");
	net = add_series(f, "net/null: fix tx burst", 3, 3, "", NULL,
			 "drivers/net/null/rte_eth_null.c");
	pass(f);
	assert_int_equal(f->pl.stats.series_planned, 2);
	assert_int_equal(f->pl.stats.runs_created, 3);
	assert_int_equal(f->pl.stats.trees_synced, 2);

	/* A stable tag: both contexts on dpdk 22.11, one run. */
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE series_id = ?1", stable),
			 1);
	run = run_of(f, stable, "dpdk");
	run_field(f, run, "branch", text, sizeof(text));
	assert_string_equal(text, "22.11");
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->s1);
	spec = job_spec(f, run, INTEL, "release");
	assert_string_equal(get_str(spec, "tree.version"), "22.11.1");
	assert_false(has(get(spec, "build.meson_options"), "enable_apps"));
	cJSON_Delete(spec);
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE run_id = ?1", run), 3);

	/* Only net drivers: intel goes to next-net, demo (dpdk only) to
	 * main: two runs, each with its own contexts' jobs and checks. */
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE series_id = ?1", net), 2);
	net_run = run_of(f, net, "dpdk-next-net");
	dpdk_run = run_of(f, net, "dpdk");
	assert_true(net_run > 0 && dpdk_run > 0);
	run_field(f, net_run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->n1);
	run_field(f, dpdk_run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM jobs WHERE run_id = ?1 AND context = ?2",
			       STORE_ARGS(STORE_INT(net_run), STORE_TEXT(INTEL))), 2);
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE run_id = ?1", net_run), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM jobs WHERE run_id = ?1 AND context = ?2",
			       STORE_ARGS(STORE_INT(dpdk_run), STORE_TEXT(DEMO))), 1);
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE run_id = ?1", dpdk_run), 1);
	assert_int_equal(count_where(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1",
				     net_run), 3);
	assert_int_equal(count_where(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1",
				     dpdk_run), 1);
	spec = job_spec(f, net_run, INTEL, "release");
	assert_string_equal(get_str(spec, "tree.name"), "dpdk-next-net");
	assert_string_equal(get_str(spec, "tree.url"), f->nn);
	assert_string_equal(get_str(spec, "tree.version"), "24.03.0-rc0");
	assert_string_equal(get_str(spec, "build.meson_options.enable_apps"), "test,test-pmd");
	cJSON_Delete(spec);
}

static void test_recheck(void **state)
{
	struct fx *f = *state;
	int64_t s, first, r0, r1, r2, r3, r4, r5, r6, run;
	char c3[41], text[256], want[128];
	cJSON *spec;

	s = add_series(f, "mempool: speed up bulk get", 2, 2, "", NULL, "lib/mempool/x.c");
	/* A request older than the series' first run (a new store reading a
	 * day of history) is answered by that run: one run, one pending
	 * check per context and patch. */
	r0 = add_recheck(f, s, DEMO, NULL);
	pass(f);
	assert_int_equal(f->pl.stats.series_planned, 1);
	assert_int_equal(f->pl.stats.rechecks_planned, 0);
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE series_id = ?1", s), 1);
	first = q_int(f, "SELECT min(id) FROM runs WHERE series_id = ?1 AND reason = 'new'",
		      STORE_ARGS(STORE_INT(s)));
	run_field(f, first, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM check_outbox c JOIN runs r ON"
			       " r.id = c.run_id WHERE r.series_id = ?1 AND c.context = ?2",
			       STORE_ARGS(STORE_INT(s), STORE_TEXT(DEMO))),
			 count_where(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1 AND"
				     " context = '" DEMO "'", first));
	q_text(f, "SELECT state || ':' || coalesce(reason, '') FROM recheck_requests WHERE id = ?1",
	       STORE_ARGS(STORE_INT(r0)), text, sizeof(text));
	snprintf(want, sizeof(want), "planned:answered by the series' first run (run %lld)",
		 (long long)first);
	assert_string_equal(text, want);
	pass(f);
	assert_int_equal(f->pl.stats.runs_created, 0);

	/* A request after the first run gets its own run. */
	r1 = add_recheck(f, s, DEMO ",other-lab-testing", NULL);
	pass(f);
	assert_int_equal(f->pl.stats.rechecks_planned, 1);

	/* main moves on; a plain recheck repeats the same base, only for
	 * the context it names, ahead of new work. */
	tg_commit(f->dpdk, "lib/eal.c", "int eal;\n", "eal: more", c3);
	run = q_int(f, "SELECT id FROM runs WHERE recheck_id = ?1", STORE_ARGS(STORE_INT(r1)));
	run_field(f, run, "reason", text, sizeof(text));
	assert_string_equal(text, "recheck");
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c2);
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE run_id = ?1", run), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM jobs WHERE run_id = ?1 AND context = ?2"
			       " AND priority = ?3",
			       STORE_ARGS(STORE_INT(run), STORE_TEXT(DEMO),
					  STORE_INT(PLANNER_PRIORITY_SERIES + PLANNER_PRIORITY_RECHECK))), 1);
	assert_int_equal(count_where(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1", run),
			 1);
	q_text(f, "SELECT state || ':' || coalesce(reason, '') FROM recheck_requests WHERE id = ?1",
	       STORE_ARGS(STORE_INT(r1)), text, sizeof(text));
	assert_string_equal(text, "planned:contexts not in the profiles: other-lab-testing");
	spec = job_spec(f, run, DEMO, "release");
	assert_string_equal(get_str(spec, "reason"), "recheck");
	assert_string_equal(get_str(spec, "tree.base_source"), "previous-run");
	cJSON_Delete(spec);

	r2 = add_recheck(f, s, INTEL, NULL);
	r3 = add_recheck(f, s, DEMO, "main");
	r4 = add_recheck(f, s, INTEL "," DEMO, "22.11");
	r5 = add_recheck(f, s, "other-lab-testing", NULL);
	r6 = add_recheck(f, s, DEMO, "no-such-branch");
	pass(f);
	assert_int_equal(f->pl.stats.rechecks_planned, 3);
	assert_int_equal(f->pl.stats.rechecks_ignored, 2);
	assert_int_equal(f->pl.stats.errors, 0);

	run = q_int(f, "SELECT id FROM runs WHERE recheck_id = ?1", STORE_ARGS(STORE_INT(r2)));
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM jobs WHERE run_id = ?1 AND context = ?2",
			       STORE_ARGS(STORE_INT(run), STORE_TEXT(INTEL))), 2);
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE run_id = ?1", run), 2);

	/* rebase=main: the tip of main now. */
	run = q_int(f, "SELECT id FROM runs WHERE recheck_id = ?1", STORE_ARGS(STORE_INT(r3)));
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, c3);
	spec = job_spec(f, run, DEMO, "release");
	assert_string_equal(get_str(spec, "tree.base_source"), "rebase");
	assert_string_equal(get_str(spec, "tree.branch"), "main");
	cJSON_Delete(spec);

	/* rebase=22.11 moves the run to that branch. */
	run = q_int(f, "SELECT id FROM runs WHERE recheck_id = ?1", STORE_ARGS(STORE_INT(r4)));
	run_field(f, run, "branch", text, sizeof(text));
	assert_string_equal(text, "22.11");
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->s1);
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE run_id = ?1", run), 3);

	q_text(f, "SELECT state || ':' || reason FROM recheck_requests WHERE id = ?1",
	       STORE_ARGS(STORE_INT(r5)), text, sizeof(text));
	assert_string_equal(text, "ignored:none of its contexts (other-lab-testing) exists in the "
			    "profiles");
	q_text(f, "SELECT state || ':' || reason FROM recheck_requests WHERE id = ?1",
	       STORE_ARGS(STORE_INT(r6)), text, sizeof(text));
	assert_non_null(strstr(text, "ignored:rebase branch 'no-such-branch'"));
	assert_int_equal(q_int(f, "SELECT count(*) FROM runs WHERE recheck_id IN (?1, ?2)",
			       STORE_ARGS(STORE_INT(r5), STORE_INT(r6))), 0);

	/* Nothing twice. */
	pass(f);
	assert_int_equal(f->pl.stats.runs_created, 0);
	assert_int_equal(f->pl.stats.rechecks_planned, 0);
	assert_int_equal(f->pl.stats.rechecks_ignored, 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM recheck_requests WHERE state = 'pending'",
			       NULL, 0), 0);
}

/* A request with a rebase branch asks for another base than the first
 * run's: older than that run or not, it gets a run of its own. */
static void test_recheck_rebase_before_first_run(void **state)
{
	struct fx *f = *state;
	int64_t s, r;
	char text[128];

	s = add_series(f, "mempool: speed up bulk put", 1, 1, "", NULL, "lib/mempool/x.c");
	r = add_recheck(f, s, DEMO, "22.11");
	pass(f);
	assert_int_equal(f->pl.stats.errors, 0);
	assert_int_equal(f->pl.stats.series_planned, 1);
	assert_int_equal(f->pl.stats.rechecks_planned, 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM runs WHERE recheck_id = ?1 AND branch ="
			       " '22.11'", STORE_ARGS(STORE_INT(r))), 1);
	q_text(f, "SELECT state || ':' || coalesce(reason, '') FROM recheck_requests WHERE id = ?1",
	       STORE_ARGS(STORE_INT(r)), text, sizeof(text));
	assert_string_equal(text, "planned:");
}

static void test_superseded(void **state)
{
	struct fx *f = *state;
	int64_t v1, v2, run, leased, done, queued, r;
	char text[128], want[64];

	v1 = add_series(f, "mempool: speed up bulk get", 2, 2, "", NULL, "lib/mempool/x.c");
	pass(f);
	run = run_of(f, v1, "dpdk");
	leased = q_int(f, "SELECT id FROM jobs WHERE run_id = ?1 AND context = ?2 AND build_mode ="
		       " 'release'", STORE_ARGS(STORE_INT(run), STORE_TEXT(INTEL)));
	done = q_int(f, "SELECT id FROM jobs WHERE run_id = ?1 AND context = ?2 AND build_mode ="
		     " 'debug'", STORE_ARGS(STORE_INT(run), STORE_TEXT(INTEL)));
	queued = q_int(f, "SELECT id FROM jobs WHERE run_id = ?1 AND context = ?2",
		       STORE_ARGS(STORE_INT(run), STORE_TEXT(DEMO)));
	/* As the scheduler would leave them: one leased, one finished. */
	run_sql(f, "UPDATE jobs SET state = 'leased', attempt = 1, lease_expires = ?2 WHERE id = ?1",
		STORE_ARGS(STORE_INT(leased), STORE_INT(NOW + 300)));
	run_sql(f, "INSERT INTO attempts (job_id, attempt, started_at) VALUES (?1, 1, ?2)",
		STORE_ARGS(STORE_INT(leased), STORE_INT(NOW)));
	run_sql(f, "UPDATE jobs SET state = 'done', attempt = 1, outcome = 'ok' WHERE id = ?1",
		STORE_ARGS(STORE_INT(done)));
	/* A recheck that arrives for the old version is ignored. */
	r = add_recheck(f, v1, DEMO, NULL);

	v2 = add_series(f, "mempool: speed up bulk get", 2, 2, "", NULL, "lib/mempool/x.c");
	run_sql(f, "UPDATE series SET state = 'superseded' WHERE id = ?1", STORE_ARGS(STORE_INT(v1)));
	run_sql(f, "UPDATE series SET supersedes_id = ?1, version = 2 WHERE id = ?2",
		STORE_ARGS(STORE_INT(v1), STORE_INT(v2)));
	pass(f);
	assert_int_equal(f->pl.stats.jobs_cancelled, 2);
	assert_int_equal(f->pl.stats.series_planned, 1);
	assert_int_equal(f->pl.stats.rechecks_ignored, 1);
	snprintf(want, sizeof(want), "superseded by series %lld", (long long)v2);
	q_text(f, "SELECT state || ':' || outcome_detail FROM jobs WHERE id = ?1",
	       STORE_ARGS(STORE_INT(leased)), text, sizeof(text));
	assert_string_equal(text + strlen("cancelled:"), want);
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE id = ?1 AND state ="
				     " 'cancelled' AND finished_at = 1767225600", queued), 1);
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE id = ?1 AND state = 'done'"
				     " AND outcome_detail IS NULL", done), 1);
	q_text(f, "SELECT outcome || ':' || reason FROM attempts WHERE job_id = ?1 AND ended_at"
	       " = 1767225600", STORE_ARGS(STORE_INT(leased)), text, sizeof(text));
	assert_string_equal(text + strlen("cancelled:"), want);
	run_field(f, run, "state", text, sizeof(text));
	assert_string_equal(text, "cancelled");
	/* No verdict comes for a cancelled run: each pending check (intel's
	 * on both patches, demo's on the last) gets its final warning, saying
	 * why, on the same patch with the same target URL. */
	snprintf(want, sizeof(want), "Performance Testing NOT TESTED: superseded by series %lld",
		 (long long)v2);
	assert_int_equal(count_where(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1"
				     " AND state = 'pending'", run), 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM check_outbox f JOIN check_outbox p"
			       " ON p.run_id = f.run_id AND p.context = f.context"
			       " AND p.patch_id = f.patch_id AND p.state = 'pending'"
			       " AND p.target_url IS f.target_url"
			       " WHERE f.run_id = ?1 AND f.state = 'warning' AND f.description = ?2",
			       STORE_ARGS(STORE_INT(run), STORE_TEXT(want))), 3);
	assert_int_equal(count_where(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1",
				     run), 6);
	q_text(f, "SELECT state || ':' || reason FROM recheck_requests WHERE id = ?1",
	       STORE_ARGS(STORE_INT(r)), text, sizeof(text));
	assert_string_equal(text, "ignored:the series was superseded");
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE series_id = ?1", v2), 1);

	pass(f);
	assert_int_equal(f->pl.stats.jobs_cancelled, 0);
	assert_int_equal(f->pl.stats.runs_created, 0);
}

static void add_dep(struct fx *f, int64_t series, const char *kind, const char *ref,
		    int64_t dep)
{
	run_sql(f, "INSERT INTO series_deps (series_id, kind, ref, dep_series_id)"
		" VALUES (?1, ?2, ?3, ?4)",
		STORE_ARGS(STORE_INT(series), STORE_TEXT(kind), STORE_TEXT(ref),
			   dep ? STORE_INT(dep) : STORE_NULL));
}

static void assert_dep(const cJSON *spec, int i, int64_t series, const char *kind,
		       const char *ref, bool missing)
{
	const cJSON *d = cJSON_GetArrayItem(get(spec, "depends_on"), i);
	char want[128];

	assert_non_null(d);
	assert_string_equal(get_str(d, "kind"), kind);
	assert_string_equal(get_str(d, "ref"), ref);
	assert_true(cJSON_IsBool(get(d, "missing")));
	assert_int_equal(cJSON_IsTrue(get(d, "missing")), missing);
	if (series)
		assert_int_equal(get_num(d, "series"), series);
	else
		assert_true(cJSON_IsNull(get(d, "series")));
	if (series && !missing) {
		snprintf(want, sizeof(want), "http://ci.test:8080/api/v1/series/%lld/mbox",
			 (long long)series);
		assert_string_equal(get_str(d, "mbox_url"), want);
	} else {
		assert_true(cJSON_IsNull(get(d, "mbox_url")));
	}
}

static void test_depends_on(void **state)
{
	struct fx *f = *state;
	int64_t a, b, c, d, e, h, msgdep, run;
	char msgid[64], ref[32];
	cJSON *spec;

	/* B depends on A, which is still incomplete: B waits. */
	a = add_series(f, "lib: helper", 2, 1, "", NULL, "lib/a.c");
	b = add_series(f, "lib: user of helper", 1, 1, "", NULL, "lib/b.c");
	add_dep(f, b, "series", "100", a);
	/* H depends on B: it waits for A through B. */
	h = add_series(f, "lib: user of user", 1, 1, "", NULL, "lib/h.c");
	add_dep(f, h, "patch", "200", b);
	/* C depends on a series never seen (yet). */
	c = add_series(f, "lib: needs 555", 1, 1, "", NULL, "lib/c.c");
	add_dep(f, c, "series", "555", 0);
	/* E depends on a Message-ID not seen yet either. */
	e = add_series(f, "lib: needs a mail", 1, 1, "", NULL, "lib/e.c");
	add_dep(f, e, "msgid", "later.1@test", 0);
	pass(f);
	assert_int_equal(f->pl.stats.series_waiting, 4);
	assert_int_equal(f->pl.stats.runs_created, 0);
	assert_int_equal(f->pl.stats.errors, 0);

	/* A completes; 555 arrives; the mail arrives as a patch of msgdep. */
	add_patch(f, a, 2, "lib/a.c", NULL);
	complete_series(f, a, NOW - 5);
	d = add_series(f, "lib: series 555", 1, 1, "", NULL, "lib/d.c");
	run_sql(f, "UPDATE series SET pw_series_id = 555 WHERE id = ?1", STORE_ARGS(STORE_INT(d)));
	msgdep = add_series(f, "lib: the mail", 2, 1, "", NULL, "lib/m.c");
	q_text(f, "SELECT m.msgid FROM patches p JOIN messages m ON m.id = p.message_id"
	       " WHERE p.series_id = ?1", STORE_ARGS(STORE_INT(msgdep)), msgid, sizeof(msgid));
	run_sql(f, "UPDATE series_deps SET ref = ?1 WHERE series_id = ?2",
		STORE_ARGS(STORE_TEXT(msgid), STORE_INT(e)));
	pass(f);
	/* A, B, H, C, D planned; E found its dependency, incomplete: waits. */
	assert_int_equal(f->pl.stats.series_planned, 5);
	assert_int_equal(f->pl.stats.series_waiting, 1);
	assert_int_equal(f->pl.stats.deps_resolved, 2);
	assert_int_equal(count_where(f, "SELECT dep_series_id FROM series_deps WHERE series_id = ?1",
				     c), d);
	assert_int_equal(count_where(f, "SELECT dep_series_id FROM series_deps WHERE series_id = ?1",
				     e), msgdep);

	run = run_of(f, b, "dpdk");
	spec = job_spec(f, run, INTEL, "release");
	assert_int_equal(cJSON_GetArraySize(get(spec, "depends_on")), 1);
	assert_dep(spec, 0, a, "series", "100", false);
	cJSON_Delete(spec);
	/* Transitive, in the order to apply: A, then B. */
	run = run_of(f, h, "dpdk");
	spec = job_spec(f, run, DEMO, "release");
	assert_int_equal(cJSON_GetArraySize(get(spec, "depends_on")), 2);
	assert_dep(spec, 0, a, "series", "100", false);
	assert_dep(spec, 1, b, "patch", "200", false);
	cJSON_Delete(spec);
	run = run_of(f, c, "dpdk");
	spec = job_spec(f, run, DEMO, "release");
	assert_dep(spec, 0, d, "series", "555", false);
	cJSON_Delete(spec);

	/* Past the wait: planned without what is still missing, and said. */
	f->pl.dep_timeout_s = 30;
	snprintf(ref, sizeof(ref), "%d", 999);
	{
		int64_t g = add_series(f, "lib: needs 999", 1, 1, "", NULL, "lib/g.c");

		add_dep(f, g, "patch", ref, 0);
		pass(f);
		assert_int_equal(f->pl.stats.series_planned, 2);	/* E and G */
		assert_int_equal(f->pl.stats.deps_missing, 2);
		run = run_of(f, g, "dpdk");
		spec = job_spec(f, run, DEMO, "release");
		assert_dep(spec, 0, 0, "patch", "999", true);
		assert_true(note_has(spec, "Depends-on patch-999 was never seen: tested without it"));
		cJSON_Delete(spec);
	}
	run = run_of(f, e, "dpdk");
	spec = job_spec(f, run, DEMO, "release");
	assert_dep(spec, 0, msgdep, "msgid", msgid, true);
	assert_true(note_has(spec, "never completed: tested without it"));
	cJSON_Delete(spec);
}

static void test_missing_tree_and_branch(void **state)
{
	struct fx *f = *state;
	int64_t net, lib, stable;
	char away[1100], text[64];

	/* next-net is unreachable; 22.11 is gone from dpdk. */
	snprintf(away, sizeof(away), "%s.away", f->nn);
	assert_int_equal(rename(f->nn, away), 0);
	tg_git(f->dpdk, "branch", "-m", "22.11", "22.11-moved");
	net = add_series(f, "net/null: fix", 1, 1, "", NULL, "drivers/net/null/null.c");
	stable = add_series(f, "mempool: backport", 1, 1, "22.11", NULL, "lib/mempool/x.c");
	lib = add_series(f, "eal: fix", 1, 1, "", NULL, "lib/eal/x.c");
	pass(f);
	/* Both skipped as a whole (no half plan), the pass went on. */
	assert_int_equal(f->pl.stats.errors, 2);
	assert_int_equal(f->pl.stats.series_planned, 1);
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE series_id = ?1", net), 0);
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE series_id = ?1", stable),
			 0);
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE series_id = ?1", lib), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM check_outbox WHERE series_id IN (?1, ?2)",
			       STORE_ARGS(STORE_INT(net), STORE_INT(stable))), 0);

	/* Retried next pass, and planned once the tree is back. */
	pass(f);
	assert_int_equal(f->pl.stats.errors, 2);
	assert_int_equal(rename(away, f->nn), 0);
	tg_git(f->dpdk, "branch", "-m", "22.11-moved", "22.11");
	pass(f);
	assert_int_equal(f->pl.stats.errors, 0);
	assert_int_equal(f->pl.stats.series_planned, 2);
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE series_id = ?1", net), 2);
	run_field(f, run_of(f, stable, "dpdk"), "base_commit", text, sizeof(text));
	assert_string_equal(text, f->s1);
}

/* A mirror left with a corrupt loose ref (a disk fault under the state
 * directory) is fetched again by the next pass, which plans as usual. */
static void test_damaged_mirror_repaired(void **state)
{
	struct fx *f = *state;
	char ref[1100], c3[41], text[64];
	int64_t one, two;
	FILE *fp;

	one = add_series(f, "eal: fix", 1, 1, "", NULL, "lib/eal/x.c");
	pass(f);
	assert_int_equal(f->pl.stats.errors, 0);
	run_field(f, run_of(f, one, "dpdk"), "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c2);

	snprintf(ref, sizeof(ref), "%s/dpdk.git/refs/heads/main", f->mirrors);
	fp = fopen(ref, "w");
	assert_non_null(fp);
	assert_true(fputs("\x01\x02 not a ref\n", fp) >= 0);
	assert_int_equal(fclose(fp), 0);
	tg_commit(f->dpdk, "lib/eal/y.c", "int y;\n", "eal: add y", c3);
	two = add_series(f, "eal: fix more", 1, 1, "", NULL, "lib/eal/x.c");
	pass(f);
	assert_int_equal(f->pl.stats.errors, 0);
	assert_int_equal(f->pl.stats.series_planned, 1);
	run_field(f, run_of(f, two, "dpdk"), "base_commit", text, sizeof(text));
	assert_string_equal(text, c3);
}

static void test_stats_print(void **state)
{
	struct planner_stats s;
	struct pg_buf out = PG_BUF_INIT(4096);

	(void)state;
	memset(&s, 0, sizeof(s));
	s.runs_created = 2;
	s.jobs_created = 6;
	s.errors = 1;
	assert_int_equal(planner_stats_print(&s, &out), 0);
	assert_non_null(strstr(pg_buf_str(&out), "runs=2 jobs=6 "));
	assert_non_null(strstr(pg_buf_str(&out), "errors=1\n"));
	pg_buf_release(&out);
}

/* ---- baselines ------------------------------------------------------------ */

static int64_t baseline(struct fx *f, const char *tree, const char *branch, const char *commit,
			const char *ctx, const char *trigger, struct pg_err *err)
{
	struct planner_baseline_req rq = {
		.tree = tree, .branch = branch, .commit = commit, .context = ctx, .trigger = trigger,
	};
	int64_t run = -1;

	if (planner_baseline(&f->pl, &rq, &run, err) < 0)
		return -1;
	return run;
}

/* Every job done, as if agents had run them. */
static void finish_all(struct fx *f)
{
	run_sql(f, "UPDATE jobs SET state = 'done', outcome = 'ok' WHERE state = 'queued'", NULL, 0);
}

/* A baseline asked for by hand: the branch head or a commit named, no
 * series, no check; the same (context, branch) is not queued twice; what
 * cannot be measured is refused by name. */
static void test_baseline_manual(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char text[128];
	int64_t run, run2;
	cJSON *spec;

	run = baseline(f, "dpdk", "main", NULL, NULL, "manual", &err);
	if (run <= 0)
		fail_msg("baseline: %lld %s", (long long)run, err.msg);
	assert_int_equal(f->pl.stats.baselines_planned, 1);
	assert_int_equal(f->pl.stats.jobs_created, 3);
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE id = ?1 AND series_id IS"
				     " NULL AND reason = 'baseline' AND trigger = 'manual'"
				     " AND state = 'planned'", run), 1);
	run_field(f, run, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->c2);
	/* Both contexts that test dpdk, each build mode, below every series. */
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE run_id = ?1 AND state ="
				     " 'queued' AND priority = 0", run), 3);
	assert_int_equal(count_where(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1", run),
			 0);
	spec = job_spec(f, run, INTEL, "release");
	assert_string_equal(get_str(spec, "reason"), "baseline");
	assert_string_equal(get_str(spec, "baseline.trigger"), "manual");
	assert_false(has(spec, "series"));
	assert_int_equal(cJSON_GetArraySize(get(spec, "depends_on")), 0);
	assert_string_equal(get_str(spec, "tree.base_source"), "branch-tip");
	assert_string_equal(get_str(spec, "tree.version"), "23.11.0");
	assert_string_equal(get_str(spec, "build.meson_options.enable_apps"), "test,test-pmd");
	/* No follow-up for a baseline: its one round gives an interval. */
	assert_int_equal(get_num(spec, "repetitions"), 6);
	/* The context's baseline_benchmarks, not its benchmarks. */
	assert_int_equal(cJSON_GetArraySize(get(spec, "benchmarks")), 1);
	assert_string_equal(get_str(cJSON_GetArrayItem(get(spec, "benchmarks"), 0), "name"),
			    "testpmd");
	if (agent_runner_dpdk_check_spec(spec, &err) < 0)
		fail_msg("the runner refuses a baseline spec: %s", err.msg);
	cJSON_Delete(spec);

	/* Waiting already: nothing more for those contexts. */
	assert_int_equal(baseline(f, "dpdk", "main", NULL, NULL, "manual", &err), 0);
	assert_int_equal(baseline(f, "dpdk", "main", f->c1, DEMO, "manual", &err), 0);
	assert_int_equal(f->pl.stats.baselines_planned, 0);
	/* Another branch is another queue. */
	run2 = baseline(f, "dpdk", "22.11", NULL, DEMO, "manual", &err);
	assert_true(run2 > run);
	run_field(f, run2, "base_commit", text, sizeof(text));
	assert_string_equal(text, f->s1);

	/* Once done, a commit named, on one context. */
	finish_all(f);
	run2 = baseline(f, "dpdk", "main", f->c1, DEMO, "manual", &err);
	assert_true(run2 > 0);
	assert_int_equal(count_where(f, "SELECT count(*) FROM jobs WHERE run_id = ?1", run2), 1);
	spec = job_spec(f, run2, DEMO, "release");
	/* Without baseline_benchmarks: the context's benchmarks. */
	assert_int_equal(cJSON_GetArraySize(get(spec, "benchmarks")), 1);
	assert_string_equal(get_str(cJSON_GetArrayItem(get(spec, "benchmarks"), 0), "name"),
			    "mempool");
	assert_string_equal(get_str(spec, "tree.base_commit"), f->c1);
	assert_string_equal(get_str(spec, "tree.base_source"), "commit");
	assert_string_equal(get_str(spec, "tree.version"), "22.11.0");
	cJSON_Delete(spec);

	/* Refused, by name. */
	assert_int_equal(baseline(f, "nope", "main", NULL, NULL, "manual", &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no tree 'nope'"));
	assert_int_equal(baseline(f, "dpdk", "23.11", NULL, NULL, "manual", &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "'23.11' is not a branch of tree dpdk"));
	assert_int_equal(baseline(f, "dpdk-next-net", "main", NULL, DEMO, "manual", &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "does not test tree dpdk-next-net"));
	assert_int_equal(baseline(f, "dpdk", "main", NULL, "nope", "manual", &err), -1);
	assert_non_null(strstr(err.msg, "no context 'nope'"));
	assert_int_equal(baseline(f, "dpdk", "main", "0000000000000000000000000000000000000000",
				  NULL, "manual", &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "is not in tree dpdk"));
	assert_int_equal(baseline(f, "dpdk", "main", "abc123", NULL, "manual", &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "not a full commit id"));
}

/* The scheduled baselines: every (context, branch) once at first; nothing
 * while one waits or before the interval; again after it ("interval");
 * at once when a head moves ("head"), for that branch only. */
static void test_baselines_due(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char head[41];

	memset(&f->pl.stats, 0, sizeof(f->pl.stats));
	if (planner_baselines_due(&f->pl, 86400, &err) < 0)
		fail_msg("%s", err.msg);
	/* dpdk main and 22.11 (intel x 2 modes + demo), next-net main (intel). */
	assert_int_equal(f->pl.stats.baselines_planned, 3);
	assert_int_equal(f->pl.stats.jobs_created, 8);
	assert_int_equal(f->pl.stats.errors, 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM runs WHERE reason = 'baseline' AND"
			       " trigger = 'head'", NULL, 0), 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM runs r WHERE tree = 'dpdk' AND branch ="
			       " '22.11' AND base_commit = ?1", STORE_ARGS(STORE_TEXT(f->s1))), 1);

	memset(&f->pl.stats, 0, sizeof(f->pl.stats));
	assert_int_equal(planner_baselines_due(&f->pl, 86400, &err), 0);
	assert_int_equal(f->pl.stats.baselines_planned, 0);	/* waiting */
	finish_all(f);
	f->pl.now_s = NOW + 3600;
	assert_int_equal(planner_baselines_due(&f->pl, 86400, &err), 0);
	assert_int_equal(f->pl.stats.baselines_planned, 0);	/* measured an hour ago */

	f->pl.now_s = NOW + 86400;
	assert_int_equal(planner_baselines_due(&f->pl, 86400, &err), 0);
	assert_int_equal(f->pl.stats.baselines_planned, 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM runs WHERE reason = 'baseline' AND"
			       " trigger = 'interval'", NULL, 0), 3);
	finish_all(f);

	tg_commit(f->dpdk, "VERSION", "23.11.1\n", "version: 23.11.1", head);
	f->pl.now_s = NOW + 86400 + 60;
	memset(&f->pl.stats, 0, sizeof(f->pl.stats));
	assert_int_equal(planner_baselines_due(&f->pl, 86400, &err), 0);
	assert_int_equal(f->pl.stats.baselines_planned, 1);
	assert_int_equal(f->pl.stats.jobs_created, 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM runs WHERE reason = 'baseline' AND"
			       " trigger = 'head' AND branch = 'main' AND tree = 'dpdk' AND"
			       " base_commit = ?1", STORE_ARGS(STORE_TEXT(head))), 1);
	/* Patch jobs still go first: a series planned now outranks them. */
	add_series(f, "mempool: after baselines", 2, 2, "", NULL, "lib/mempool/rte_mempool.c");
	pass(f);
	assert_true(q_int(f, "SELECT min(j.priority) FROM jobs j JOIN runs r ON r.id = j.run_id"
			  " WHERE r.series_id IS NOT NULL", NULL, 0) >
		    q_int(f, "SELECT max(j.priority) FROM jobs j JOIN runs r ON r.id = j.run_id"
			  " WHERE r.reason = 'baseline'", NULL, 0));
}

/* ---- real intake ---------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int64_t series_titled(struct fx *f, const char *title, const char *state)
{
	return q_int(f, "SELECT coalesce(max(id), 0) FROM series WHERE title = ?1 AND state = ?2",
		     STORE_ARGS(STORE_TEXT(title), STORE_TEXT(state)));
}

static void test_real_intake(void **state)
{
	struct fx *f = *state;
	const char *argv[] = { "sh", "tests/intake/make-corpus.sh", NULL, NULL };
	const char *contexts[] = { INTEL, DEMO };
	struct pg_proc p = PG_PROC_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct intake in;
	char corpus[1100], path[2300], *names[64];
	size_t n = 0;
	struct dirent *de;
	int64_t src, v2, single, stable, dep, run, complete;
	DIR *dir;
	cJSON *spec;

	snprintf(corpus, sizeof(corpus), "%s/corpus", f->dir);
	argv[2] = corpus;
	p.argv = argv;
	p.timeout_ms = 120 * 1000;
	if (pg_proc_run(&p, &err) < 0 || !pg_proc_succeeded(&p))
		fail_msg("make-corpus.sh: %s %s", err.msg, pg_buf_str(&p.tail));
	pg_proc_release(&p);

	memset(&in, 0, sizeof(in));
	in.st = f->st;
	in.project = "dpdk";
	in.contexts = contexts;
	in.n_contexts = 2;
	in.max_message = 4 * 1024 * 1024;
	if (intake_source(&in, "corpus", "mbox", corpus, &src, &err) < 0)
		fail_msg("%s", err.msg);
	dir = opendir(corpus);
	assert_non_null(dir);
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.' && n < 64)
			assert_non_null(names[n++] = strdup(de->d_name));
	closedir(dir);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		struct pg_buf raw = PG_BUF_INIT(4 * 1024 * 1024);
		struct intake_origin from = { src, names[i], 0, 0 };

		snprintf(path, sizeof(path), "%s/%s", corpus, names[i]);
		if (pg_read_file(path, &raw, &err) < 0 || store_begin(f->st, &err) < 0 ||
		    intake_message(&in, &from, raw.data, raw.len, &err) < 0 ||
		    store_commit(f->st, &err) < 0)
			fail_msg("intake %s: %s", names[i], err.msg);
		pg_buf_release(&raw);
		free(names[i]);
	}

	/* Complete: v2 (v1 was superseded), the single patch, the RFC, the
	 * stable backport, the out-of-order series, the From_ line one, the
	 * broken-but-valid mails, and the one with Depends-on: series-100. */
	complete = q_int(f, "SELECT count(*) FROM series WHERE state = 'complete'", NULL, 0);
	assert_true(complete >= 7);
	f->pl.now_s = 0;	/* intake stamps completion with the real clock */
	pass(f);
	assert_int_equal(f->pl.stats.errors, 0);
	/* All but the one that waits for series-100; the single patch
	 * (net/null) gets two runs; v2's Recheck-request came before its
	 * first run, which answers it: no second run. */
	assert_int_equal(f->pl.stats.series_waiting, 1);
	assert_int_equal(f->pl.stats.series_planned, complete - 1);
	assert_int_equal(f->pl.stats.rechecks_planned, 0);
	assert_int_equal(f->pl.stats.runs_created, complete - 1 + 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM runs r JOIN series s ON s.id = r.series_id"
			       " WHERE s.state <> 'complete'", NULL, 0), 0);

	v2 = series_titled(f, "mempool: speed up bulk get", "complete");
	assert_true(v2 > 0);
	run = q_int(f, "SELECT id FROM runs WHERE series_id = ?1 AND reason = 'new'",
		    STORE_ARGS(STORE_INT(v2)));
	assert_int_equal(count_where(f, "SELECT count(*) FROM check_outbox WHERE run_id = ?1", run),
			 3 + 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM runs WHERE series_id = ?1 AND reason ="
			       " 'recheck'", STORE_ARGS(STORE_INT(v2))), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM recheck_requests WHERE series_id = ?1"
			       " AND state = 'planned' AND reason LIKE 'answered by the series''"
			       " first run (run %'", STORE_ARGS(STORE_INT(v2))), 1);
	spec = job_spec(f, run, INTEL, "release");
	assert_int_equal(get_num(spec, "series.patches"), 3);
	assert_int_equal(get_num(spec, "series.version"), 2);
	cJSON_Delete(spec);

	single = series_titled(f, "net/null: fix tx burst", "complete");
	assert_true(run_of(f, single, "dpdk-next-net") > 0);
	assert_true(run_of(f, single, "dpdk") > 0);
	assert_int_equal(count_where(f, "SELECT min(j.priority) FROM jobs j JOIN runs r ON"
				     " r.id = j.run_id WHERE r.series_id = ?1", single),
			 PLANNER_PRIORITY_SERIES + PLANNER_PRIORITY_SMALL);
	stable = series_titled(f, "mempool: fix stats", "complete");
	run = run_of(f, stable, "dpdk");
	spec = job_spec(f, run, DEMO, "release");
	assert_string_equal(get_str(spec, "tree.branch"), "22.11");
	cJSON_Delete(spec);

	/* The dependency's wait ends; its base-commit is not in our tree. */
	dep = series_titled(f, "mempool: use the new helper", "complete");
	assert_int_equal(count_where(f, "SELECT count(*) FROM runs WHERE series_id = ?1", dep), 0);
	f->pl.dep_timeout_s = 0;
	pass(f);
	assert_int_equal(f->pl.stats.series_planned, 1);
	spec = job_spec(f, run_of(f, dep, "dpdk"), DEMO, "release");
	assert_dep(spec, 0, 0, "series", "100", true);
	assert_true(note_has(spec, "is not in tree dpdk: tested on the tip of main"));
	cJSON_Delete(spec);
}

/* The one resolver of Depends-on (series.c), as intake and the planner
 * both use it: a series' own ids name itself, a Patchwork id the series
 * that has it, a Message-ID only threaded below a series the
 * earliest such series; unknown or malformed references nothing. */
static void test_dep_resolve(void **state)
{
	struct fx *f = *state;
	int64_t s1 = add_series(f, "a", 1, 1, NULL, NULL, "lib/a.c");
	int64_t s2 = add_series(f, "b", 1, 1, NULL, NULL, "lib/b.c");
	int64_t s3 = add_series(f, "c", 1, 1, NULL, NULL, "lib/c.c");
	struct pg_err err = PG_ERR_INIT;
	char own[128];
	int64_t dep = -1;

	run_sql(f, "UPDATE series SET pw_series_id = 77 WHERE id = ?1", STORE_ARGS(STORE_INT(s2)));
	run_sql(f, "UPDATE patches SET pw_patch_id = 900 + series_id", NULL, 0);
	run_sql(f, "INSERT INTO series_refs (series_id, msgid) VALUES (?1, 'up@test'),"
		" (?2, 'up@test')", STORE_ARGS(STORE_INT(s2), STORE_INT(s1)));
	q_text(f, "SELECT m.msgid FROM patches p JOIN messages m ON m.id = p.message_id"
	       " WHERE p.series_id = ?1", STORE_ARGS(STORE_INT(s3)), own, sizeof(own));

	assert_int_equal(series_dep_resolve(f->st, "dpdk", s3, "msgid", own, &dep, &err), 0);
	assert_int_equal(dep, s3);
	assert_int_equal(series_dep_resolve(f->st, "dpdk", s1, "msgid", own, &dep, &err), 0);
	assert_int_equal(dep, s3);
	assert_int_equal(series_dep_resolve(f->st, "dpdk", s3, "series", "77", &dep, &err), 0);
	assert_int_equal(dep, s2);
	assert_int_equal(series_dep_resolve(f->st, "dpdk", s2, "series", "77", &dep, &err), 0);
	assert_int_equal(dep, s2);	/* itself */
	{
		char ref[32];

		snprintf(ref, sizeof(ref), "%lld", (long long)(900 + s2));
		assert_int_equal(series_dep_resolve(f->st, "dpdk", s1, "patch", ref, &dep, &err),
				 0);
		assert_int_equal(dep, s2);
	}
	assert_int_equal(series_dep_resolve(f->st, "dpdk", s3, "msgid", "up@test", &dep, &err), 0);
	assert_int_equal(dep, s1);
	assert_int_equal(series_dep_resolve(f->st, "dpdk", s1, "msgid", "up@test", &dep, &err), 0);
	assert_int_equal(dep, s2);
	assert_int_equal(series_dep_resolve(f->st, "other", s3, "series", "77", &dep, &err), 0);
	assert_int_equal(dep, 0);
	assert_int_equal(series_dep_resolve(f->st, "dpdk", s3, "series", "77x", &dep, &err), 0);
	assert_int_equal(dep, 0);
	assert_int_equal(series_dep_resolve(f->st, "dpdk", s3, "msgid", "nobody@test", &dep, &err),
			 0);
	assert_int_equal(dep, 0);

	/* Recorded once, never as the series itself. */
	run_sql(f, "INSERT INTO series_deps (series_id, kind, ref) VALUES (?1, 'series', '77')",
		STORE_ARGS(STORE_INT(s3)));
	assert_int_equal(series_dep_record(f->st, s3, "series", "77", s3, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(series_dep_record(f->st, s3, "series", "77", s2, &err), 0);
	assert_int_equal(series_dep_record(f->st, s3, "series", "77", s1, &err), 0);
	assert_int_equal(q_int(f, "SELECT dep_series_id FROM series_deps WHERE series_id = ?1",
			       STORE_ARGS(STORE_INT(s3))), s2);
}

/* One definition of the job spec (lib/jobspec.h): every job the planner
 * writes is one the agent's DPDK runner reads as it would before running
 * it, with the values the planner meant; a spec without a field the
 * runner needs is refused, naming it. */
static void test_spec_read_back(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	int64_t s, n = 0;
	sqlite3_stmt *stmt = NULL;
	char base[64], url[128];

	s = add_series(f, "mempool: read it back", 1, 1, "", NULL, "lib/mempool/rte_mempool.c");
	pass(f);
	assert_int_equal(f->pl.stats.errors, 0);
	assert_int_equal(sqlite3_prepare_v2(store_db(f->st),
					    "SELECT j.spec, r.base_commit FROM jobs j JOIN runs r"
					    " ON r.id = j.run_id WHERE r.series_id = ?1", -1, &stmt,
					    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_bind_int64(stmt, 1, s), SQLITE_OK);
	snprintf(url, sizeof(url), "/api/v1/series/%lld/mbox", (long long)s);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(stmt, 0);
		const cJSON *tree, *series;
		cJSON *spec = NULL;
		const char *mbox;

		snprintf(base, sizeof(base), "%s", (const char *)sqlite3_column_text(stmt, 1));
		if (pg_json_parse(text, strlen(text), &spec, &err) < 0)
			fail_msg("spec: %s", err.msg);
		if (agent_runner_dpdk_check_spec(spec, &err) < 0)
			fail_msg("the runner refuses the planner's spec: %s", err.msg);
		assert_int_equal((int)cJSON_GetObjectItemCaseSensitive(spec, JS_FORMAT)->valuedouble,
				 JOBSPEC_FORMAT_VERSION);
		tree = cJSON_GetObjectItemCaseSensitive(spec, JS_TREE);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(tree, JS_TREE_BASE_COMMIT)
				    ->valuestring, base);
		series = cJSON_GetObjectItemCaseSensitive(spec, JS_SERIES);
		mbox = cJSON_GetObjectItemCaseSensitive(series, JS_SERIES_MBOX_URL)->valuestring;
		assert_true(strlen(mbox) > strlen(url) &&
			    !strcmp(mbox + strlen(mbox) - strlen(url), url));
		/* Without a field the runner needs: refused, by name. */
		cJSON_DeleteItemFromObjectCaseSensitive((cJSON *)tree, JS_TREE_BASE_COMMIT);
		assert_int_equal(agent_runner_dpdk_check_spec(spec, &err), -1);
		assert_non_null(strstr(err.msg, JS_TREE_BASE_COMMIT));
		cJSON_Delete(spec);
		n++;
	}
	sqlite3_finalize(stmt);
	assert_true(n >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_series, setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stable_tag_and_path_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recheck, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recheck_rebase_before_first_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_superseded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_depends_on, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dep_resolve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_tree_and_branch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_mirror_repaired, setup, teardown),
		cmocka_unit_test(test_stats_print),
		cmocka_unit_test_setup_teardown(test_baseline_manual, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baselines_due, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_intake, setup, teardown),
	};

	pg_log_set_levels(getenv("PG_TEST_LOG") ? getenv("PG_TEST_LOG") : "error");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
