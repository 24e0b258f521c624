/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the verdict pass (controller/verdict_pass.c and its
 * files): jobs run through the real scheduler (lease, result with samples)
 * in a store in a temporary directory, then the pass decides.  Clear
 * regression, noise, inconclusive with its pinned follow-up, follow-ups
 * given up or failed, build and apply failures, two build modes, a job
 * cancelled, idempotence, history and a change point, `run show`.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "buf.h"
#include "ctl_config.h"
#include "err.h"
#include "hostnoise.h"
#include "profile.h"
#include "sched.h"
#include "store.h"
#include "verdict_pass.h"

#include "storefx.h"

#define T0 1764476400		/* 2025-11-30T04:20:00Z */
#define LEASE 60
#define MAX_ATTEMPTS 3
#define BASE0 "0123456789abcdef0123456789abcdef01234567"
#define KEY_NC "mempool.nocache.cores1.keep128.get32.put32.const0"
#define KEY_C "mempool.cache.cores1.keep128.get32.put32.const0"

static const char profile_json[] =
	"{\"trees\": {\"dpdk\": {\"url\": \"https://dpdk.org/git/dpdk\", \"default_branch\": \"main\","
	"   \"branches\": [\"main\", \"next\"]}},\n"
	" \"default_tree\": \"dpdk\",\n"
	" \"host_classes\": {\"lab\": {\"labels\": {\"pool\": \"lab\"}, \"lcores\": \"0-1\","
	"   \"memory_mb\": 1024, \"hugepages\": false}},\n"
	" \"build_modes\": {\"release\": {\"buildtype\": \"release\"},"
	"   \"debug\": {\"buildtype\": \"debugoptimized\"}},\n"
	" \"benchmarks\": {\"mp\": {\"program\": \"app/test/dpdk-test\","
	"   \"args\": [\"-l\", \"{lcores}\", \"{mem_args}\", \"--file-prefix={file_prefix}\"],"
	"   \"env\": {\"DPDK_TEST\": \"mempool_perf_autotest\"}, \"parser\": \"mempool_perf\","
	"   \"gate\": [\"mempool.nocache.*\"], \"timeout_s\": 60, \"mode\": \"subset\","
	"   \"subset\": {\"cores\": [1], \"cache\": [0, 512], \"bulk\": [32], \"keep\": [128],"
	"   \"time_s\": 1}}},\n"
	" \"contexts\": {"
	"   \"perf-one\": {\"host_class\": \"lab\", \"build_modes\": [\"release\"],"
	"     \"benchmarks\": [\"mp\"], \"repetitions\": 5},"
	"   \"perf-two\": {\"host_class\": \"lab\", \"build_modes\": [\"release\", \"debug\"],"
	"     \"benchmarks\": [\"mp\"], \"repetitions\": 5, \"post_to\": \"all_patches\"}}}\n";

struct fx {
	char dir[256];
	char db[300];
	struct store *st;
	struct profile_set ps;
	struct ctl_config cfg;
	int64_t series, patch[2];
	int64_t lab1, lab2;
	struct pg_buf report;
	struct verdict_pass_stats stats;
	int64_t pin_wait_s;
};

/* ---- fixture ------------------------------------------------------------ */

static int64_t add_agent(struct fx *f, const char *name, const char *tok)
{
	const char *keys[] = { "pool" }, *values[] = { "lab" };
	struct sched_labels l = { keys, values, 1 };
	struct pg_err err = PG_ERR_INIT;
	int64_t id = 0;

	if (sched_agent_add(f->st, name, &l, tok, T0, &id, &err) < 0)
		fail_msg("add agent: %s", err.msg);
	return id;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	sfx_open(f->dir, sizeof(f->dir), f->db, sizeof(f->db), &f->st, "vpass");
	sfx_profiles(&f->ps, f->dir, profile_json);
	sfx_mail_config(&f->cfg, f->dir, f->db, true);
	pg_buf_init(&f->report, PG_BUF_NOLIMIT);
	f->pin_wait_s = 900;
	/* A series of two patches by Alice. */
	f->series = sfx_add_alice_series(f->st, 2, "mempool: faster", "mempool", 100, f->patch);
	f->lab1 = add_agent(f, "lab-1", "1111111111111111111111111111111111111111111111111111111111111111");
	f->lab2 = add_agent(f, "lab-2", "2222222222222222222222222222222222222222222222222222222222222222");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	store_close(f->st);
	profile_set_free(&f->ps);
	ctl_config_free(&f->cfg);
	pg_buf_release(&f->report);
	sfx_rm_dir(f->dir);
	free(f);
	return 0;
}

/* ---- building blocks ---------------------------------------------------- */

/* A run of the series on tree dpdk, with a pending check per context on
 * the last patch, as the planner queues them. */
static int64_t add_run(struct fx *f, const char *branch, const char *base, int64_t at)
{
	int64_t run = sfx_add_run(f->st, f->series, "new", branch, base, at);

	for (int c = 0; c < 2; c++)
		sfx_add_pending(f->st, f->series, run, f->patch[1], c ? "perf-two" : "perf-one",
				"https://ci.example.org/series/1", at);
	return run;
}

/* A job with the spec the planner would write (the parts the verdict
 * reads, and enough for the reproduce text). */
static int64_t add_job(struct fx *f, int64_t run, const char *ctx, const char *mode, int reps,
		       int max_reps, int64_t at)
{
	char spec[2048];

	snprintf(spec, sizeof(spec),
		 "{\"format\":1,\"run\":%lld,\"context\":\"%s\",\"host_class\":\"lab\","
		 "\"build_mode\":\"%s\",\"tree\":{\"name\":\"dpdk\",\"url\":\"https://dpdk.org/git/dpdk\","
		 "\"branch\":\"main\",\"base_commit\":\"%s\"},"
		 "\"series\":{\"id\":%lld,\"mbox_url\":\"https://ci.example.org/api/v1/series/%lld/mbox\"},"
		 "\"depends_on\":[],\"build\":{\"buildtype\":\"release\","
		 "\"meson_options\":{\"tests\":\"true\",\"enable_drivers\":\"mempool/ring,net/null\"}},"
		 "\"benchmarks\":[{\"name\":\"mp\",\"program\":\"app/test/dpdk-test\","
		 "\"args\":[\"-l\",\"0-1\",\"--no-huge\",\"-m\",\"1024\",\"--file-prefix={file_prefix}\"],"
		 "\"env\":{\"DPDK_TEST\":\"mempool_perf_autotest\"},\"stdin\":\"null\","
		 "\"parser\":\"mempool_perf\",\"gate\":[\"mempool.nocache.*\"],\"timeout_s\":60}],"
		 "\"repetitions\":%d,\"max_repetitions\":%d,\"threshold_pct\":5,\"alpha\":0.05,"
		 "\"noise_limit_pct\":5}",
		 (long long)run, ctx, mode, BASE0, (long long)f->series, (long long)f->series, reps,
		 max_reps);
	sfx_sql(f->st, "INSERT INTO jobs (run_id, context, host_class, build_mode, spec,"
		" created_at) VALUES (?1, ?2, 'lab', ?3, ?4, ?5)",
		STORE_ARGS(STORE_INT(run), STORE_TEXT(ctx), STORE_TEXT(mode), STORE_TEXT(spec),
			   STORE_INT(at)));
	return store_last_id(f->st);
}

/* Lease for agent, which must get job (0: nothing); returns the attempt. */
static int64_t lease(struct fx *f, int64_t agent, int64_t job, int64_t now)
{
	struct pg_err err = PG_ERR_INIT;
	struct sched_lease l;
	int64_t attempt;
	int rc = sched_lease(f->st, agent, &f->ps, now, LEASE, &l, &err);

	if (rc < 0)
		fail_msg("lease: %s", err.msg);
	assert_int_equal(l.job_id, job);
	attempt = l.attempt;
	sched_lease_release(&l);
	return attempt;
}

/* Samples of metric: base[i] and patched[i] for i < n, repetitions from
 * rep0, appended to s (which has room). */
static size_t samples(struct sched_sample *s, size_t at, const char *metric,
		      const double *base, const double *patched, int n, int rep0)
{
	for (int i = 0; i < n; i++) {
		s[at++] = (struct sched_sample){ "base", "mp", metric, rep0 + i, base[i], "obj/s" };
		s[at++] = (struct sched_sample){ "patched", "mp", metric, rep0 + i, patched[i],
						 "obj/s" };
	}
	return at;
}

static void result(struct fx *f, int64_t agent, int64_t job, int64_t attempt,
		   const char *outcome, const struct sched_sample *s, size_t n, int64_t now)
{
	char digest[65];
	struct sched_result_in res = {
		.outcome = outcome, .detail = outcome, .samples = s, .n_samples = n,
		.digest_hex = digest,
	};
	enum sched_result_status st;
	struct pg_err err = PG_ERR_INIT;

	snprintf(digest, sizeof(digest), "%064llx", (unsigned long long)(job * 1000 + attempt));
	if (sched_result(f->st, agent, job, attempt, &res, now, MAX_ATTEMPTS, &st, &err) < 0)
		fail_msg("result: %s", err.msg);
	assert_int_equal(st, SCHED_RESULT_RECORDED);
}

/* Lease job to agent and deliver a result at now. */
static void run_job(struct fx *f, int64_t agent, int64_t job, const char *outcome,
		    const struct sched_sample *s, size_t n, int64_t now)
{
	result(f, agent, job, lease(f, agent, job, now), outcome, s, n, now);
}

/* One pass at now; its counts in f->stats, its lines in f->report. */
static void pass(struct fx *f, int64_t now)
{
	struct pg_err err = PG_ERR_INIT;
	struct verdict_pass vp;

	pg_buf_reset(&f->report);
	verdict_pass_init(&vp, f->st, &f->ps);
	vp.mail = &f->cfg.mail;
	vp.now_s = now;
	vp.pin_wait_s = f->pin_wait_s;
	vp.report = &f->report;
	if (verdict_pass_run(&vp, &err) < 0)
		fail_msg("pass: %s", err.msg);
	f->stats = vp.stats;
	if (vp.stats.errors)
		fail_msg("pass had errors:\n%s", pg_buf_str(&f->report));
}

/* Every row of the tables the pass writes, as text. */
static char *snapshot(struct fx *f)
{
	static const char *const tables[] = {
		"SELECT * FROM verdicts ORDER BY id", "SELECT * FROM check_outbox ORDER BY id",
		"SELECT * FROM email_outbox ORDER BY id", "SELECT * FROM history ORDER BY id",
		"SELECT * FROM change_points ORDER BY id", "SELECT * FROM jobs ORDER BY id",
		"SELECT * FROM runs ORDER BY id",
	};

	return sfx_snapshot(f->st, tables, sizeof(tables) / sizeof(tables[0]));
}

/* A second pass decides nothing and changes nothing. */
static void assert_idempotent(struct fx *f, int64_t now)
{
	char *before = snapshot(f), *after;

	pass(f, now);
	after = snapshot(f);
	assert_string_equal(before, after);
	assert_int_equal(f->stats.jobs_decided + f->stats.followups + f->stats.contexts_decided +
			 f->stats.checks_queued + f->stats.mails_queued + f->stats.history_rows +
			 f->stats.given_up + f->stats.runs_done, 0);
	assert_string_equal(pg_buf_str(&f->report), "");
	free(before);
	free(after);
}

static void assert_text(struct fx *f, const char *q, int64_t id, const char *want)
{
	char got[4096];

	sfx_text(f->st, q, id, got, sizeof(got));
	assert_string_equal(got, want);
}

/* The final check of (run, context) that the pass queued: "state|desc". */
static void assert_check(struct fx *f, int64_t run, const char *ctx, const char *want)
{
	char got[1024];
	struct pg_err err = PG_ERR_INIT;
	sqlite3_stmt *stmt = NULL;

	if (store_prepare(f->st, &stmt, "SELECT state || '|' || description || '|' || patch_id"
			  " FROM check_outbox WHERE run_id = ?1 AND context = ?2"
			  " AND state <> 'pending'", "test", &err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(run), STORE_TEXT(ctx)), "test", &err) < 0 ||
	    store_step(stmt, "test", &err) != 1)
		fail_msg("no final check of run %lld %s: %s", (long long)run, ctx, err.msg);
	snprintf(got, sizeof(got), "%s", (const char *)sqlite3_column_text(stmt, 0));
	assert_int_equal(store_step(stmt, "test", &err), 0);
	sqlite3_finalize(stmt);
	assert_string_equal(got, want);
}

/* Six runs a side: a regression found in pairs needs six (verdict.h). */
static const double base6[] = { 100.0e6, 100.4e6, 99.7e6, 100.2e6, 99.9e6, 100.1e6 };
static const double slow6[] = { 90.0e6, 89.8e6, 90.3e6, 89.9e6, 90.2e6, 90.1e6 };	/* -10 % */
/* A follow-up's three more runs of each side. */
static const double base3b[] = { 100.1e6, 99.8e6, 100.3e6 };
static const double slow3b[] = { 89.7e6, 90.4e6, 90.05e6 };
static const double same6[] = { 100.1e6, 99.8e6, 100.3e6, 99.95e6, 100.05e6, 100.0e6 };

/* ---- tests -------------------------------------------------------------- */

/* A clear regression of a gated key: the job and the context fail, the
 * check says which key, the mail carries the table, the run is done. */
static void test_regression_fails(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[40];
	int64_t run = add_run(f, "main", BASE0, T0), job;
	char buf[512];
	size_t n;

	job = add_job(f, run, "perf-one", "release", 6, 18, T0);
	n = samples(s, 0, KEY_NC, base6, slow6, 6, 0);
	n = samples(s, n, KEY_C, base6, same6, 6, 0);
	run_job(f, f->lab1, job, "ok", s, n, T0 + 100);
	pass(f, T0 + 101);
	assert_int_equal(f->stats.jobs_decided, 1);
	assert_int_equal(f->stats.contexts_decided, 1);
	assert_int_equal(f->stats.checks_queued, 1);
	assert_int_equal(f->stats.mails_queued, 1);
	assert_int_equal(f->stats.runs_done, 1);
	assert_int_equal(f->stats.history_rows, 2);
	/* Key rows: the gated regression, the ungated key a pass. */
	assert_text(f, "SELECT group_concat(metric || '=' || state || ' ' || n_base || '/' ||"
		    " n_patched || ' ' || printf('%.2f', effect), '; ') FROM (SELECT * FROM verdicts"
		    " WHERE job_id = ?1 AND metric IS NOT NULL ORDER BY metric)", job,
		    KEY_C "=pass 6/6 0.00; " KEY_NC "=regression 6/6 -10.00");
	snprintf(buf, sizeof(buf), "fail|%s: -10.0%% (95%% CI -10.6%%..-9.4%%, p=0.031) on release",
		 KEY_NC);
	assert_text(f, "SELECT state || '|' || description FROM verdicts WHERE job_id = ?1"
		    " AND metric IS NULL", job, buf);
	snprintf(buf, sizeof(buf), "fail|Performance Testing FAIL: %s: -10.0%% (95%% CI "
		 "-10.6%%..-9.4%%, p=0.031) on release|%lld", KEY_NC, (long long)f->patch[1]);
	assert_check(f, run, "perf-one", buf);
	assert_text(f, "SELECT state FROM verdicts WHERE run_id = ?1 AND job_id IS NULL", run,
		    "fail");
	assert_text(f, "SELECT state || ' ' || finished_at FROM runs WHERE id = ?1", run,
		    "done 1764476501");
	/* The mail: the status, the description, the table and the commands. */
	sfx_text(f->st, "SELECT subject FROM email_outbox WHERE run_id = ?1", run, buf,
		 sizeof(buf));
	assert_string_equal(buf, "|FAILURE| pw102 [PATCH 2/2] mempool: step 2");
	{
		char body[16384];

		sfx_text(f->st, "SELECT body FROM email_outbox WHERE run_id = ?1", run, body,
			 sizeof(body));
		assert_non_null(strstr(body, "Test-Status: FAILURE\r\n"));
		assert_non_null(strstr(body, "release on lab-1, 6 runs per side: fail: "));
		assert_non_null(strstr(body, "benchmark  key "));
		assert_non_null(strstr(body, "mp         " KEY_NC "  6/6   100050000   90050000"
					     "  -10000000  -10.0%  -10.6%..-9.4%  0.031  0.9%"
					     "  regression\r\n"));
		assert_non_null(strstr(body, "\r\nci: the change's confidence interval at 1 - "
					     "alpha"));
		assert_non_null(strstr(body, "\r\nchange, p: median of the patched/base ratios of runs"
					     " done back to back, Wilcoxon signed-rank test\r\n"));
		assert_non_null(strstr(body, "(no-change)\r\n"));
		assert_non_null(strstr(body, "git -C base checkout --detach " BASE0 "\r\n"));
		assert_non_null(strstr(body, "curl -sS https://ci.example.org/api/v1/series/1/mbox |"
					     " git -C patched am --patch-format=mboxrd\r\n"));
		assert_non_null(strstr(body, "meson setup --buildtype=release -Dtests=true"
					     " -Denable_drivers=mempool/ring,net/null"
					     " \"$side/build\" \"$side\""));
		assert_non_null(strstr(body, "for run in $(seq 6); do for side in base patched; do"));
		assert_non_null(strstr(body, "DPDK_TEST=mempool_perf_autotest \"$side/build/app/test/"
					     "dpdk-test\" -l 0-1 --no-huge -m 1024"
					     " --file-prefix=perfgate </dev/null\r\n"));
	}
	/* History: the base side's medians at the base commit. */
	assert_text(f, "SELECT group_concat(host || ' ' || branch || ' ' || build_mode || ' ' ||"
		    " commit_oid || ' ' || value || ' ' || samples, '; ') FROM history"
		    " WHERE job_id = ?1", job,
		    "lab-1 main release " BASE0 " 100050000.0 6; lab-1 main release " BASE0
		    " 100050000.0 6");
	assert_non_null(strstr(pg_buf_str(&f->report), "context perf-one of run 1: fail: "));
	assert_non_null(strstr(pg_buf_str(&f->report), "run 1: done\n"));
	assert_idempotent(f, T0 + 200);
}

/* Noise only: success, with the worst gated key named. */
static void test_noise_passes(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t job = add_job(f, run, "perf-one", "release", 6, 18, T0);
	char want[256];

	/* 6 pairs: the fewest whose 95 % interval can exclude -5 % */
	run_job(f, f->lab1, job, "ok", s, samples(s, 0, KEY_NC, base6, same6, 6, 0), T0 + 100);
	pass(f, T0 + 101);
	snprintf(want, sizeof(want), "success|Performance Testing PASS (1 key excludes -5%%; "
		 "worst %s +0.0%%, CI -0.6%%..+0.6%% on release)|%lld", KEY_NC,
		 (long long)f->patch[1]);
	assert_check(f, run, "perf-one", want);
	assert_text(f, "SELECT state FROM verdicts WHERE job_id = ?1 AND metric IS NOT NULL", job,
		    "pass");
	/* A success does not copy the author. */
	assert_text(f, "SELECT cc_addrs || '|' FROM email_outbox WHERE run_id = ?1", run, "|");
	assert_idempotent(f, T0 + 200);
}

/* Pairs are the runs of the same repetition, not of the same index: the
 * host slows down from run to run and the patched side's repetition 0
 * crashed.  Paired by repetition the ratios are 0.901 to 0.906 (-9.65 %, 6
 * pairs, exact p = 2/64); by index they would be near 1, and the unpaired
 * medians say -6.2 %. */
static void test_pairs_by_repetition(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t job = add_job(f, run, "perf-one", "release", 7, 21, T0);
	double v[7];
	size_t n = 0;

	for (int r = 0; r < 7; r++) {
		v[r] = 100e6 + 10e6 * r;
		s[n++] = (struct sched_sample){ "base", "mp", KEY_NC, r, v[r], "obj/s" };
		if (r > 0)
			s[n++] = (struct sched_sample){ "patched", "mp", KEY_NC, r,
							(0.9 + 0.001 * r) * v[r], "obj/s" };
	}
	run_job(f, f->lab1, job, "bench-failure", s, n, T0 + 100);
	pass(f, T0 + 101);
	assert_text(f, "SELECT state || ' ' || n_base || '/' || n_patched || ' ' ||"
		    " printf('%.2f %.4f', effect, p) FROM verdicts WHERE job_id = ?1"
		    " AND metric IS NOT NULL", job, "regression 7/6 -9.65 0.0313");
	assert_text(f, "SELECT state || '|' || description FROM verdicts WHERE job_id = ?1"
		    " AND metric IS NULL", job, "fail|" KEY_NC ": -9.7% (95% CI -9.9%..-9.4%, p=0.031) on release");
}

/* 3 pairs cannot reach p < 0.05: a follow-up on the same agent, with
 * the numbering continued; the other agent cannot take it; the pinned
 * agent takes it before older work; after its samples the job fails. */
static void test_inconclusive_followup(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t job = add_job(f, run, "perf-one", "release", 3, 9, T0);
	int64_t other, attempt;
	char spec[4096], want[256];

	run_job(f, f->lab1, job, "ok", s, samples(s, 0, KEY_NC, base6, slow6, 3, 0), T0 + 100);
	/* Older unpinned work of another run, queued meanwhile. */
	other = add_job(f, add_run(f, "main", BASE0, T0 - 50), "perf-one", "release", 5, 15,
			T0 - 50);
	pass(f, T0 + 101);
	assert_int_equal(f->stats.followups, 1);
	assert_int_equal(f->stats.jobs_decided, 0);
	assert_int_equal(f->stats.checks_queued, 0);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM verdicts", NULL, 0), 0);
	assert_text(f, "SELECT state || ' ' || pin_agent_id || ' ' || coalesce(outcome, '-') ||"
		    " ' ' || coalesce(agent_id, '-') || ' ' || priority FROM jobs WHERE id = ?1", job,
		    "queued 1 - - 1");
	sfx_text(f->st, "SELECT spec FROM jobs WHERE id = ?1", job, spec, sizeof(spec));
	assert_non_null(strstr(spec, "\"round\":1,\"repetition_base\":3,\"repetitions\":3,"
				     "\"pin_agent\":\"lab-1\""));
	snprintf(want, sizeof(want), "follow-up round 1: 3 more runs per side on lab-1 (%s: "
		 "-10.0%%, no 95%% interval from 3 runs on release, 3 more runs)", KEY_NC);
	assert_text(f, "SELECT outcome_detail FROM jobs WHERE id = ?1", job, want);
	assert_non_null(strstr(pg_buf_str(&f->report), ": pending: follow-up round 1"));
	/* lab-2 gets the older job, never the pinned one; lab-1 gets the
	 * pinned one first although the other is older. */
	assert_int_equal(lease(f, f->lab1, job, T0 + 110), 2);
	assert_int_equal(lease(f, f->lab2, other, T0 + 111), 1);
	/* Nothing to decide while the follow-up runs. */
	pass(f, T0 + 120);
	assert_int_equal(f->stats.followups + f->stats.jobs_decided, 0);
	attempt = 2;
	result(f, f->lab1, job, attempt, "ok", s, samples(s, 0, KEY_NC, base3b, slow3b, 3, 3),
	       T0 + 200);
	pass(f, T0 + 201);
	assert_int_equal(f->stats.jobs_decided, 1);
	/* 6 + 6 runs: p = 2/C(12,6) = 0.0022 */
	assert_text(f, "SELECT n_base || '/' || n_patched || ' ' || printf('%.4f', p) || ' ' || state"
		    " FROM verdicts WHERE job_id = ?1 AND metric IS NOT NULL", job,
		    "6/6 0.0313 regression");
	assert_text(f, "SELECT n_base || ' ' || state FROM verdicts WHERE job_id = ?1"
		    " AND metric IS NULL", job, "6 fail");
	assert_text(f, "SELECT coalesce(pin_agent_id, 'unpinned') FROM jobs WHERE id = ?1", job,
		    "unpinned");
	assert_text(f, "SELECT samples FROM history WHERE job_id = ?1", job, "6");
	snprintf(want, sizeof(want), "fail|Performance Testing FAIL: %s: -10.1%% (95%% CI "
		 "-10.6%%..-9.4%%, p=0.031) on release|%lld", KEY_NC, (long long)f->patch[1]);
	assert_check(f, run, "perf-one", want);
	assert_idempotent(f, T0 + 300);
}

/* A follow-up whose agent is disabled, or not seen for pin_wait_s: given
 * up, judged at the cap: a warning "inconclusive". */
static void test_followup_given_up(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t job = add_job(f, run, "perf-one", "release", 3, 9, T0);
	char want[256];

	run_job(f, f->lab1, job, "ok", s, samples(s, 0, KEY_NC, base6, slow6, 3, 0), T0 + 100);
	sfx_sql(f->st, "UPDATE agents SET last_seen = ?1", STORE_ARGS(STORE_INT(T0 + 100)));
	pass(f, T0 + 101);
	assert_int_equal(f->stats.followups, 1);
	/* Seen recently enough: it waits. */
	pass(f, T0 + 100 + 900);
	assert_int_equal(f->stats.given_up, 0);
	assert_text(f, "SELECT state FROM jobs WHERE id = ?1", job, "queued");
	/* Not seen for longer than pin_wait_s: given up. */
	pass(f, T0 + 100 + 901);
	assert_int_equal(f->stats.given_up, 1);
	assert_int_equal(f->stats.jobs_decided, 1);
	assert_text(f, "SELECT state || ' ' || outcome || ' ' || outcome_detail || ' ' ||"
		    " coalesce(pin_agent_id, '-') FROM jobs WHERE id = ?1", job,
		    "done ok agent lab-1 not seen since 2025-11-30T04:21:40Z -");
	snprintf(want, sizeof(want), "warning|Performance Testing WARNING: inconclusive %s: "
		 "-10.0%%, no 95%% interval from 3 runs on release|%lld", KEY_NC,
		 (long long)f->patch[1]);
	assert_check(f, run, "perf-one", want);
	assert_text(f, "SELECT state FROM verdicts WHERE job_id = ?1 AND metric IS NOT NULL", job,
		    "inconclusive");
	assert_idempotent(f, T0 + 3000);
}

static void test_followup_agent_disabled(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t job = add_job(f, run, "perf-one", "release", 3, 9, T0);

	run_job(f, f->lab1, job, "ok", s, samples(s, 0, KEY_NC, base6, slow6, 3, 0), T0 + 100);
	sfx_sql(f->st, "UPDATE agents SET last_seen = ?1", STORE_ARGS(STORE_INT(T0 + 100)));
	pass(f, T0 + 101);
	assert_int_equal(f->stats.followups, 1);
	sfx_sql(f->st, "UPDATE agents SET enabled = 0 WHERE name = 'lab-1'", NULL, 0);
	pass(f, T0 + 102);
	assert_int_equal(f->stats.given_up, 1);
	assert_text(f, "SELECT outcome_detail FROM jobs WHERE id = ?1", job,
		    "agent lab-1 is disabled");
	assert_text(f, "SELECT state FROM verdicts WHERE run_id = ?1 AND job_id IS NULL", run,
		    "warning");
	/* An agent disabled before the first decision: no follow-up at all. */
	run = add_run(f, "main", BASE0, T0 + 200);
	job = add_job(f, run, "perf-one", "release", 3, 9, T0 + 200);
	run_job(f, f->lab2, job, "ok", s, samples(s, 0, KEY_NC, base6, slow6, 3, 0), T0 + 300);
	sfx_sql(f->st, "UPDATE agents SET enabled = 0 WHERE name = 'lab-2'", NULL, 0);
	pass(f, T0 + 301);
	assert_int_equal(f->stats.followups, 0);
	assert_int_equal(f->stats.jobs_decided, 1);
	assert_text(f, "SELECT state FROM verdicts WHERE job_id = ?1 AND metric IS NULL", job,
		    "warning");
}

/* The follow-up's attempts all expire: the scheduler gives up
 * (infra-error); the verdict is the earlier round's, at the cap. */
static void test_followup_infra_error(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	struct pg_err err = PG_ERR_INIT;
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t job = add_job(f, run, "perf-one", "release", 3, 9, T0);
	int64_t now = T0 + 100;

	run_job(f, f->lab1, job, "ok", s, samples(s, 0, KEY_NC, base6, slow6, 3, 0), now);
	pass(f, now + 1);
	assert_int_equal(f->stats.followups, 1);
	/* attempts 2 and 3 expire: max_attempts is 3, the job gives up */
	for (int64_t a = 2; a <= 3; a++) {
		sfx_sql(f->st, "UPDATE agents SET last_seen = ?1", STORE_ARGS(STORE_INT(now)));
		assert_int_equal(lease(f, f->lab1, job, now), a);
		now += LEASE + 1;
		assert_int_equal(sched_expire(f->st, now, MAX_ATTEMPTS, NULL, NULL, &err), 0);
	}
	assert_text(f, "SELECT state FROM jobs WHERE id = ?1", job, "infra-error");
	pass(f, now);
	assert_int_equal(f->stats.jobs_decided, 1);
	assert_text(f, "SELECT state || '|' || description FROM verdicts WHERE job_id = ?1"
		    " AND metric IS NULL", job,
		    "warning|inconclusive " KEY_NC ": -10.0%, no 95% interval from 3 runs on "
		    "release");
	assert_idempotent(f, now + 10);
}

/* The patched side did not build: fail "build failure"; the series did
 * not apply: warning "apply patch failure"; no samples, no history. */
static void test_build_and_apply_failures(void **state)
{
	struct fx *f = *state;
	int64_t r1 = add_run(f, "main", BASE0, T0), r2 = add_run(f, "main", BASE0, T0 + 1);
	int64_t j1 = add_job(f, r1, "perf-one", "release", 5, 15, T0);
	int64_t j2 = add_job(f, r2, "perf-one", "release", 5, 15, T0 + 1);
	char want[128];

	run_job(f, f->lab1, j1, "patched-build-failure", NULL, 0, T0 + 100);
	run_job(f, f->lab1, j2, "apply-failure", NULL, 0, T0 + 101);
	pass(f, T0 + 102);
	assert_int_equal(f->stats.jobs_decided, 2);
	assert_int_equal(f->stats.contexts_decided, 2);
	assert_int_equal(f->stats.history_rows, 0);
	snprintf(want, sizeof(want), "fail|build failure|%lld", (long long)f->patch[1]);
	assert_check(f, r1, "perf-one", want);
	snprintf(want, sizeof(want), "warning|apply patch failure|%lld", (long long)f->patch[1]);
	assert_check(f, r2, "perf-one", want);
	assert_text(f, "SELECT description FROM verdicts WHERE job_id = ?1 AND metric IS NULL", j1,
		    "build failure on release");
	assert_idempotent(f, T0 + 200);
}

/* Every patch already in the tree: the agent measured nothing and said so
 * in its fingerprint.  A warning that says NOT TESTED and why, not "no
 * gated result"; and, as for a cancelled run, no report mail. */
static void test_already_applied(void **state)
{
	struct fx *f = *state;
	int64_t r1 = add_run(f, "main", BASE0, T0), r2 = add_run(f, "main", BASE0, T0 + 1);
	int64_t j1 = add_job(f, r1, "perf-one", "release", 5, 15, T0);
	int64_t j2 = add_job(f, r2, "perf-one", "release", 5, 15, T0 + 1);
	struct sched_result_in res = {
		.outcome = "ok", .detail = "every patch of the series is already applied",
		.fingerprint_json = "{\"apply\": {\"already\": 1, \"all_already\": true}}",
		.digest_hex = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	enum sched_result_status st;
	struct pg_err err = PG_ERR_INIT;
	char want[160];

	if (sched_result(f->st, f->lab1, j1, lease(f, f->lab1, j1, T0 + 50), &res, T0 + 100,
			 MAX_ATTEMPTS, &st, &err) < 0)
		fail_msg("result: %s", err.msg);
	/* The same without the flag: ok with nothing measured. */
	res.fingerprint_json = "{\"apply\": {\"already\": 0, \"all_already\": false}}";
	res.digest_hex = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	if (sched_result(f->st, f->lab1, j2, lease(f, f->lab1, j2, T0 + 101), &res, T0 + 102,
			 MAX_ATTEMPTS, &st, &err) < 0)
		fail_msg("result: %s", err.msg);
	pass(f, T0 + 103);
	snprintf(want, sizeof(want), "warning|Performance Testing NOT TESTED: every patch is "
		 "already applied: nothing to measure|%lld", (long long)f->patch[1]);
	assert_check(f, r1, "perf-one", want);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM email_outbox WHERE run_id = ?1",
				 STORE_ARGS(STORE_INT(r1))), 0);
	snprintf(want, sizeof(want), "warning|Performance Testing WARNING: no gated result to "
		 "compare on release|%lld", (long long)f->patch[1]);
	assert_check(f, r2, "perf-one", want);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM email_outbox WHERE run_id = ?1",
				 STORE_ARGS(STORE_INT(r2))), 1);
	assert_idempotent(f, T0 + 200);
}

/* A job the scheduler gave up on: a warning naming the host. */
static void test_infra_error(void **state)
{
	struct fx *f = *state;
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t job = add_job(f, run, "perf-one", "release", 5, 15, T0);
	int64_t now = T0;

	for (int64_t a = 1; a <= MAX_ATTEMPTS; a++, now++)
		result(f, f->lab2, job, lease(f, f->lab2, job, now), "infra-error", NULL, 0, now);
	pass(f, now);
	assert_text(f, "SELECT state || '|' || description FROM verdicts WHERE run_id = ?1"
		    " AND job_id IS NULL", run,
		    "warning|Performance Testing WARNING: infrastructure error on release (host lab-2)");
}

/* Two build modes: nothing is posted until both are decided; the
 * regressing mode speaks for the context; the mail has both tables; with
 * post_to all_patches the check goes where the pending one went. */
static void test_two_build_modes(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t rel = add_job(f, run, "perf-two", "release", 6, 18, T0);
	int64_t dbg = add_job(f, run, "perf-two", "debug", 6, 18, T0 + 1);
	char want[256], body[16384];

	run_job(f, f->lab1, rel, "ok", s, samples(s, 0, KEY_NC, base6, same6, 6, 0), T0 + 100);
	pass(f, T0 + 101);
	assert_int_equal(f->stats.jobs_decided, 1);
	assert_int_equal(f->stats.contexts_decided, 0);
	assert_text(f, "SELECT count(*) FROM check_outbox WHERE state <> 'pending'", 0, "0");
	assert_text(f, "SELECT state FROM runs WHERE id = ?1", run, "planned");
	run_job(f, f->lab2, dbg, "ok", s, samples(s, 0, KEY_NC, base6, slow6, 6, 0), T0 + 200);
	pass(f, T0 + 201);
	assert_int_equal(f->stats.jobs_decided, 1);
	assert_int_equal(f->stats.contexts_decided, 1);
	snprintf(want, sizeof(want), "fail|Performance Testing FAIL: %s: -10.0%% (95%% CI "
		 "-10.6%%..-9.4%%, p=0.031) on debug|%lld", KEY_NC, (long long)f->patch[1]);
	assert_check(f, run, "perf-two", want);
	sfx_text(f->st, "SELECT body FROM email_outbox WHERE run_id = ?1", run, body, sizeof(body));
	assert_non_null(strstr(body, "release on lab-1, 6 runs per side: success: 1 key excludes -5%; worst "));
	assert_non_null(strstr(body, "debug on lab-2, 6 runs per side: fail: "));
	assert_non_null(strstr(body, "# run 1, job 2: debug on lab-2; dpdk main at " BASE0));
	assert_text(f, "SELECT state FROM runs WHERE id = ?1", run, "done");
	assert_idempotent(f, T0 + 300);
}

/* A job cancelled after the other was decided: the context is decided on
 * the one left, by the pass's last step. */
static void test_cancelled_job(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	struct pg_err err = PG_ERR_INIT;
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t rel = add_job(f, run, "perf-two", "release", 6, 18, T0);
	int64_t dbg = add_job(f, run, "perf-two", "debug", 6, 18, T0 + 1);

	run_job(f, f->lab1, rel, "ok", s, samples(s, 0, KEY_NC, base6, same6, 6, 0), T0 + 100);
	pass(f, T0 + 101);
	assert_int_equal(f->stats.contexts_decided, 0);
	assert_int_equal(sched_cancel_job(f->st, dbg, "admin", T0 + 150, NULL, &err), 0);
	pass(f, T0 + 151);
	assert_int_equal(f->stats.contexts_decided, 1);
	assert_int_equal(f->stats.runs_done, 1);
	assert_text(f, "SELECT state FROM verdicts WHERE run_id = ?1 AND job_id IS NULL", run,
		    "success");
	assert_idempotent(f, T0 + 200);
}

/* The history of main at 15 base commits, the last 5 10 % slower: a
 * change point between the 10th and 11th commit, found when the 15th is
 * measured, once; the same on another branch: none. */
static void test_history_change_point(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	char oid[41], want[256];
	int64_t now = T0;

	for (int branch = 0; branch < 2; branch++) {
		for (int c = 0; c < 15; c++) {
			double b[6], p[6];
			int64_t run, job;

			snprintf(oid, sizeof(oid), "%040d", c);
			for (int i = 0; i < 6; i++) {
				b[i] = (c < 10 ? 100.0e6 : 90.0e6) + c * 1000.0 + i * 5000.0;
				p[i] = b[i];
			}
			run = add_run(f, branch ? "next" : "main", oid, now);
			job = add_job(f, run, "perf-one", "release", 6, 18, now);
			run_job(f, f->lab1, job, "ok", s, samples(s, 0, KEY_NC, b, p, 6, 0), now + 10);
			pass(f, now + 11);
			assert_int_equal(f->stats.history_rows, 1);
			assert_int_equal(f->stats.change_points, !branch && c == 14);
			now += 100;
		}
	}
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM history", NULL, 0), 30);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM change_points", NULL, 0), 1);
	snprintf(want, sizeof(want), "lab-1 dpdk main release mp %s %040d %040d -10.0 suspected",
		 KEY_NC, 9, 10);
	assert_text(f, "SELECT host || ' ' || tree || ' ' || branch || ' ' || build_mode || ' ' ||"
		    " benchmark || ' ' || metric || ' ' || commit_before || ' ' || commit_after ||"
		    " ' ' || printf('%.1f', effect) || ' ' || state FROM change_points", 0, want);
	assert_true(sfx_int(f->st, "SELECT p < 0.001 FROM change_points", NULL, 0));
}

/* The lease honours the pin: only the pinned agent, first. */
static void test_pin_lease(void **state)
{
	struct fx *f = *state;
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t a = add_job(f, run, "perf-one", "release", 5, 15, T0);
	int64_t b = add_job(f, run, "perf-two", "release", 5, 15, T0 + 1);

	sfx_sql(f->st, "UPDATE jobs SET pin_agent_id = ?1 WHERE id = ?2",
		STORE_ARGS(STORE_INT(f->lab2), STORE_INT(b)));
	/* lab-1 skips b (pinned to lab-2) and gets a; then nothing. */
	assert_int_equal(lease(f, f->lab1, a, T0 + 10), 1);
	/* a job of lab-1's done, the queue holds only b: lab-1 gets none */
	result(f, f->lab1, a, 1, "ok", NULL, 0, T0 + 11);
	lease(f, f->lab1, 0, T0 + 12);
	assert_int_equal(lease(f, f->lab2, b, T0 + 13), 1);
}

/* A follow-up cancelled with its run loses its pin (and its verdict is
 * not decided: the run is cancelled). */
static void test_cancelled_followup(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	struct pg_err err = PG_ERR_INIT;
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t job = add_job(f, run, "perf-one", "release", 3, 9, T0);

	run_job(f, f->lab1, job, "ok", s, samples(s, 0, KEY_NC, base6, slow6, 3, 0), T0 + 100);
	pass(f, T0 + 101);
	assert_int_equal(f->stats.followups, 1);
	assert_int_equal(sched_cancel_run(f->st, run, "superseded by series 2", T0 + 102, NULL,
					  &err), 0);
	pass(f, T0 + 103);
	assert_text(f, "SELECT state || ' ' || coalesce(pin_agent_id, '-') FROM jobs WHERE id = ?1",
		    job, "cancelled -");
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM verdicts", NULL, 0), 0);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM check_outbox"
				 " WHERE state <> 'pending'", NULL, 0), 0);
}

/* `run show`: the stored verdicts, the table, the commands. */
static void test_run_show(void **state)
{
	struct fx *f = *state;
	struct sched_sample s[20];
	struct pg_buf out = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_err err = PG_ERR_INIT;
	int64_t run = add_run(f, "main", BASE0, T0);
	int64_t rel = add_job(f, run, "perf-two", "release", 3, 9, T0);
	const char *o;

	add_job(f, run, "perf-two", "debug", 5, 15, T0 + 1);
	run_job(f, f->lab1, rel, "ok", s, samples(s, 0, KEY_NC, base6, slow6, 3, 0), T0 + 100);
	pass(f, T0 + 101);
	assert_int_equal(verdict_run_show(f->st, &f->ps, run, &out, &err), 0);
	o = pg_buf_str(&out);
	assert_non_null(strstr(o, "run 1: series 1 \"mempool: faster\" v1 (new), dpdk main at "
				  BASE0 ": planned\n"));
	assert_non_null(strstr(o, "\ncontext perf-two: undecided\n"));
	assert_non_null(strstr(o, "\njob 1: queued, follow-up round 1 pinned to lab-1; verdict "
				  "none yet\nrelease on lab-1, 3 runs per side: pending: "));
	assert_non_null(strstr(o, "\njob 2: queued; verdict none yet\n(no results yet)\n"));
	assert_non_null(strstr(o, "\n# run 1, job 2: debug on (not run yet); dpdk main at "));
	assert_non_null(strstr(o, "  3/3   "));
	assert_non_null(strstr(o, "\nTo reproduce by hand:\n\n# run 1, job 1: release on lab-1"));
	assert_int_equal(verdict_run_show(f->st, &f->ps, 99, &out, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	pg_buf_release(&out);
}

/* The commands quote what the shell would split or expand; {build_dir}
 * becomes the side's build directory, doubled braces single. */
static void test_reproduce_quoting(void **state)
{
	struct fx *f = *state;
	struct pg_buf out = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_err err = PG_ERR_INIT;
	int64_t run = add_run(f, "main", BASE0, T0);
	const char *o;

	sfx_sql(f->st, "INSERT INTO jobs (run_id, context, host_class, build_mode, spec,"
		" created_at) VALUES (?1, 'perf-one', 'lab', 'release', ?2, 1)",
		STORE_ARGS(STORE_INT(run), STORE_TEXT(
		    "{\"tree\":{\"url\":\"/srv/git/dpdk tree\"},\"repetitions\":2,"
		    "\"build\":{\"buildtype\":\"debug\",\"meson_options\":{\"x\":\"a b\"},"
		    "\"c_args\":\"-DFOO -O1\"},"
		    "\"benchmarks\":[{\"name\":\"tp\",\"program\":\"app/dpdk-testpmd\","
		    "\"stdin\":\"hold\",\"duration_s\":7,\"env\":{\"V\":\"it's\"},"
		    "\"args\":[\"--vdev=net_pcap0,rx_pcap={build_dir}/in \\\"$x\\\".pcap\","
		    "\"{{literal}}\",\"--file-prefix={file_prefix}\"]}]}")));
	assert_int_equal(verdict_run_show(f->st, &f->ps, run, &out, &err), 0);
	o = pg_buf_str(&out);
	assert_non_null(strstr(o, "\ngit clone '/srv/git/dpdk tree' base\n"));
	assert_non_null(strstr(o, "meson setup --buildtype=debug '-Dx=a b' '-Dc_args=-DFOO -O1'"
				  " \"$side/build\" \"$side\""));
	assert_non_null(strstr(o, "for run in $(seq 2); do for side in base patched; do\n"
				  "\tsleep 7 | 'V=it'\\''s' \"$side/build/app/dpdk-testpmd\""
				  " \"--vdev=net_pcap0,rx_pcap=$PWD/$side/build/in \\\"\\$x\\\".pcap\""
				  " '{literal}' --file-prefix=perfgate\ndone; done\n"));
	pg_buf_release(&out);
}

/* ---- a host's noise ----------------------------------------------------- */

/* A baseline run of commit `base` on main, as the planner makes one. */
static int64_t add_baseline_run(struct fx *f, const char *base, int64_t at)
{
	sfx_sql(f->st, "INSERT INTO runs (series_id, reason, tree, branch, base_commit, created_at,"
		" trigger) VALUES (NULL, 'baseline', 'dpdk', 'main', ?1, ?2, 'head')",
		STORE_ARGS(STORE_TEXT(base), STORE_INT(at)));
	return store_last_id(f->st);
}

/* A job of run measured by agent: two pairs, patched/base exp(+d), exp(-d). */
static void noise_job(struct fx *f, int64_t agent, int64_t run, double d, int64_t at)
{
	const double base[2] = { 100.0e6, 100.0e6 };
	const double patched[2] = { 100.0e6 * exp(d), 100.0e6 * exp(-d) };
	struct sched_sample s[4];
	size_t n = samples(s, 0, KEY_NC, base, patched, 2, 1);

	run_job(f, agent, add_job(f, run, "perf-one", "release", 2, 2, at), "ok", s, n, at);
}

/*
 * hostnoise_read() pools the host's own latest HOSTNOISE_JOBS baseline
 * jobs, and nothing else: not older baselines, not patch runs, not another
 * host's baselines, not a baseline still running.  Its query walks the
 * agent's attempts newest first (schema step 11); this pins what it reads.
 */
static void test_host_noise_latest_baselines(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	struct hostnoise_key *k = NULL;
	char base[41];
	size_t n = 0;
	int64_t at = T0;

	/* Five old baselines of lab-1, wide; then 20 narrow ones, with a
	 * patch run of lab-1 and a baseline of lab-2 between them. */
	for (int i = 0; i < 5 + HOSTNOISE_JOBS; i++) {
		snprintf(base, sizeof(base), "%040x", i + 1);
		noise_job(f, f->lab1, add_baseline_run(f, base, at), i < 5 ? 0.2 : 0.01, at);
		at += 60;
		if (i % 7 == 0) {
			noise_job(f, f->lab1, add_run(f, "main", BASE0, at), 0.3, at);
			noise_job(f, f->lab2, add_baseline_run(f, base, at), 0.05, at);
			at += 60;
		}
	}
	/* A baseline of lab-1 leased, no result yet. */
	lease(f, f->lab1, add_job(f, add_baseline_run(f, BASE0, at), "perf-one", "release", 2, 2,
				  at), at);

	if (hostnoise_read(f->st, &f->ps, "lab-1", &k, &n, &err) < 0)
		fail_msg("host noise: %s", err.msg);
	assert_int_equal(n, 1);
	assert_string_equal(k[0].build_mode, "release");
	assert_string_equal(k[0].metric, KEY_NC);
	assert_string_equal(k[0].context, "perf-one");
	assert_int_equal(k[0].n_jobs, HOSTNOISE_JOBS);
	assert_int_equal(k[0].n_pairs, 2 * HOSTNOISE_JOBS);
	/* Every log ratio is +-0.01: MAD 0.01, sigma 1.4826 %. */
	assert_true(fabs(k[0].sigma_pct - 1.4826) < 1e-3);
	snprintf(base, sizeof(base), "%040x", 5 + HOSTNOISE_JOBS);
	assert_string_equal(k[0].last_commit, base);
	free(k);

	/* lab-2: its own four baselines (i = 0, 7, 14, 21), sigma from 0.05. */
	k = NULL;
	if (hostnoise_read(f->st, &f->ps, "lab-2", &k, &n, &err) < 0)
		fail_msg("host noise: %s", err.msg);
	assert_int_equal(n, 1);
	assert_int_equal(k[0].n_jobs, 4);
	assert_int_equal(k[0].n_pairs, 8);
	assert_true(fabs(k[0].sigma_pct - 100 * 1.4826 * 0.05) < 1e-2);
	free(k);

	/* An agent that ran no baseline: nothing. */
	k = NULL;
	if (hostnoise_read(f->st, &f->ps, "nobody", &k, &n, &err) < 0)
		fail_msg("host noise: %s", err.msg);
	assert_int_equal(n, 0);
	free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_regression_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_noise_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pairs_by_repetition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inconclusive_followup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_followup_given_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_followup_agent_disabled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_followup_infra_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_and_apply_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_already_applied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_infra_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_build_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancelled_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history_change_point, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pin_lease, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancelled_followup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_show, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reproduce_quoting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_noise_latest_baselines, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
