/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/sched.c, the scheduler core: agents, label
 * matching, one job per host, the lease order and its fairness guarantee,
 * heartbeats, expiry, idempotent results, late work and cancellation.
 * Each test gets a real store in a temporary directory; series, runs and
 * jobs are inserted directly, as the planner would; the clock is the
 * `now` passed in.
 */
#include <errno.h>
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
#include "err.h"
#include "profile.h"
#include "sched.h"
#include "store.h"

#include "storefx.h"

#define T0 1764476400		/* 2025-11-30T04:20:00Z */
#define LEASE 60
#define MAX_ATTEMPTS 3

/* Host classes as a lab would write them; nic is an extra label. */
static const char profile_json[] =
	"{\n"
	"  \"host_classes\": {\n"
	"    \"intel\": {\"labels\": {\"vendor\": \"intel\", \"arch\": \"x86_64\"},\n"
	"              \"lcores\": \"2-5\", \"memory_mb\": 2048, \"hugepages\": true},\n"
	"    \"amd\": {\"labels\": {\"vendor\": \"amd\", \"arch\": \"x86_64\"},\n"
	"            \"lcores\": \"4-7\", \"memory_mb\": 2048, \"hugepages\": true},\n"
	"    \"arm\": {\"labels\": {\"vendor\": \"arm\", \"arch\": \"aarch64\"},\n"
	"            \"lcores\": \"2-5\", \"memory_mb\": 2048, \"hugepages\": true},\n"
	"    \"intel-e810\": {\"labels\": {\"vendor\": \"intel\", \"arch\": \"x86_64\",\n"
	"                                \"nic\": \"e810\"},\n"
	"                   \"lcores\": \"2-5\", \"memory_mb\": 2048, \"hugepages\": true}\n"
	"  }\n"
	"}\n";

struct fx {
	char dir[256];
	char db[300];
	struct store *st;
	struct profile_set ps;
	int64_t next_msgid;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	sfx_open(f->dir, sizeof(f->dir), f->db, sizeof(f->db), &f->st, "sched");
	sfx_profiles(&f->ps, f->dir, profile_json);
	sfx_sql(f->st, "INSERT INTO sources (name, kind, location, project, created_at)"
		" VALUES ('dpdk-dev', 'mbox', '/dev/null', 'dpdk', ?1)",
		STORE_ARGS(STORE_INT(T0)));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	store_close(f->st);
	profile_set_free(&f->ps);
	sfx_rm_dir(f->dir);
	free(f);
	return 0;
}

/* ---- building blocks ---------------------------------------------------- */

static int64_t count_rows(struct fx *f, const char *table_sql)
{
	return sfx_int(f->st, table_sql, NULL, 0);
}

/* Every row of the tables the scheduler writes, as text: a snapshot that
 * must not move when a call says it changed nothing. */
static char *snapshot(struct fx *f)
{
	static const char *const tables[] = {
		"SELECT * FROM jobs ORDER BY id", "SELECT * FROM attempts ORDER BY id",
		"SELECT * FROM results ORDER BY job_id, attempt",
		"SELECT * FROM samples ORDER BY job_id, attempt, side, benchmark, metric, repetition",
		"SELECT * FROM runs ORDER BY id",
		"SELECT id, name, labels, facts, enabled, last_seen FROM agents ORDER BY id",
	};

	return sfx_snapshot(f->st, tables, sizeof(tables) / sizeof(tables[0]));
}

/* A complete series of `total` patches received at `at`. */
static int64_t add_series(struct fx *f, int total, int64_t at)
{
	char root[64];

	snprintf(root, sizeof(root), "s%lld@example.org", (long long)++f->next_msgid);
	sfx_sql(f->st, "INSERT INTO series (project, root_msgid, total, title, submitter_addr,"
		" state, received_at, completed_at) VALUES ('dpdk', ?1, ?2, 'net: a change',"
		" 'dev@example.org', 'complete', ?3, ?3)",
		STORE_ARGS(STORE_TEXT(root), STORE_INT(total), STORE_INT(at)));
	return store_last_id(f->st);
}

static int64_t add_run(struct fx *f, int64_t series_id, const char *reason, int64_t at)
{
	return sfx_add_run(f->st, series_id, reason, "main",
			   "0123456789abcdef0123456789abcdef01234567", at);
}

static int64_t add_job_p(struct fx *f, int64_t run_id, const char *context, const char *host_class,
			 int64_t at, int64_t priority)
{
	char spec[256];

	snprintf(spec, sizeof(spec), "{\"context\":\"%s\",\"host_class\":\"%s\",\"repetitions\":5}",
		 context, host_class);
	sfx_sql(f->st, "INSERT INTO jobs (run_id, context, host_class, build_mode, spec, priority,"
		" created_at) VALUES (?1, ?2, ?3, 'release', ?4, ?5, ?6)",
		STORE_ARGS(STORE_INT(run_id), STORE_TEXT(context), STORE_TEXT(host_class),
			   STORE_TEXT(spec), STORE_INT(priority), STORE_INT(at)));
	return store_last_id(f->st);
}

static int64_t add_job(struct fx *f, int64_t run_id, const char *context, const char *host_class,
		       int64_t at)
{
	return add_job_p(f, run_id, context, host_class, at, 0);
}

/* A series with one run of n jobs of one host class, created one second
 * apart from `at`; returns the run and the first job id in *first. */
static int64_t add_workload(struct fx *f, int total, const char *reason, const char *host_class,
			    int n, int64_t at, int64_t *first)
{
	int64_t run = add_run(f, add_series(f, total, at), reason, at);

	if (first)
		*first = 0;	/* n == 0: no job (and no "maybe uninitialized") */
	for (int i = 0; i < n; i++) {
		char ctx[32];
		int64_t id;

		snprintf(ctx, sizeof(ctx), "perf-%d", i);
		id = add_job(f, run, ctx, host_class, at + i);
		if (i == 0 && first)
			*first = id;
	}
	return run;
}

/* A token hash derived from the name: 64 hex digits, distinct per name. */
static void token_of(const char *name, char out[65])
{
	uint64_t h = 1469598103934665603ULL;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (int i = 0; i < 4; i++) {
		snprintf(out + 16 * i, 17, "%016llx", (unsigned long long)h);
		h = h * 6364136223846793005ULL + 1442695040888963407ULL;
	}
}

static int64_t add_agent_labels(struct fx *f, const char *name, const char *const *keys,
				const char *const *values, size_t n)
{
	struct sched_labels l = { keys, values, n };
	struct pg_err err = PG_ERR_INIT;
	char tok[65];
	int64_t id = 0;

	token_of(name, tok);
	if (sched_agent_add(f->st, name, &l, tok, T0, &id, &err) < 0)
		fail_msg("add agent: %s", err.msg);
	assert_true(id > 0);
	return id;
}

static int64_t add_agent(struct fx *f, const char *name, const char *vendor, const char *arch)
{
	const char *keys[] = { "vendor", "arch" };
	const char *values[] = { vendor, arch };

	return add_agent_labels(f, name, keys, values, 2);
}

/* Lease for agent; returns the job id or 0. */
static int64_t lease(struct fx *f, int64_t agent, int64_t now, struct sched_lease *out)
{
	struct sched_lease l;
	struct pg_err err = PG_ERR_INIT;
	int rc = sched_lease(f->st, agent, &f->ps, now, LEASE, &l, &err);
	int64_t id;

	if (rc < 0)
		fail_msg("lease: %s", err.msg);
	assert_int_equal(rc, l.job_id ? 1 : 0);
	id = l.job_id;
	if (out)
		*out = l;
	else
		sched_lease_release(&l);
	return id;
}

static const struct sched_sample two_samples[] = {
	{ "base", "mempool", "mempool.cache.cores1", 0, 1.0e9, "obj/s" },
	{ "patched", "mempool", "mempool.cache.cores1", 0, 0.98e9, "obj/s" },
};

static enum sched_result_status result_rc(struct fx *f, int64_t agent, int64_t job,
					  int64_t attempt, const char *outcome, const char *digest,
					  int64_t now, int expect_rc, enum pg_errcode expect_code)
{
	struct sched_result_in res = {
		.outcome = outcome,
		.detail = "finished",
		.fingerprint_json = "{\"cpu\": \"Xeon\", \"microcode\": \"0x2b\"}",
		.samples = two_samples,
		.n_samples = 2,
		.digest_hex = digest,
	};
	enum sched_result_status status = SCHED_RESULT_FAILED;
	struct pg_err err = PG_ERR_INIT;
	int rc = sched_result(f->st, agent, job, attempt, &res, now, MAX_ATTEMPTS, &status, &err);

	if (rc != expect_rc)
		fail_msg("result: rc %d, expected %d: %s", rc, expect_rc, err.msg);
	if (rc < 0)
		assert_int_equal(err.code, expect_code);
	return status;
}

#define DIGEST_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define DIGEST_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static void finish(struct fx *f, int64_t agent, int64_t job, int64_t attempt, int64_t now)
{
	assert_int_equal(result_rc(f, agent, job, attempt, "ok", DIGEST_A, now, 0, PG_OK),
			 SCHED_RESULT_RECORDED);
}

static int heartbeat(struct fx *f, int64_t agent, int64_t job, int64_t attempt,
		     const char *stage, int progress, int64_t now, bool *cancel,
		     enum pg_errcode *code)
{
	struct pg_err err = PG_ERR_INIT;
	bool c = false;
	int rc = sched_heartbeat(f->st, agent, job, attempt, stage, progress, now, LEASE, &c, &err);

	if (cancel)
		*cancel = c;
	if (code)
		*code = err.code;
	return rc;
}

static void job_state(struct fx *f, int64_t job, char *out, size_t outsz)
{
	sfx_text(f->st, "SELECT state FROM jobs WHERE id = ?1", job, out, outsz);
}

static void assert_state(struct fx *f, int64_t job, const char *want)
{
	char s[32];

	job_state(f, job, s, sizeof(s));
	assert_string_equal(s, want);
}

static void expire(struct fx *f, int64_t now, int64_t max, int64_t want_requeued,
		   int64_t want_failed)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t rq = -1, fl = -1;

	if (sched_expire(f->st, now, max, &rq, &fl, &err) < 0)
		fail_msg("expire: %s", err.msg);
	assert_int_equal(rq, want_requeued);
	assert_int_equal(fl, want_failed);
}

/* ---- agents -------------------------------------------------------------- */

static void test_agent_add_and_lookup(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	struct sched_agent a;
	char tok[65], upper[65], text[256];
	int64_t id, id2 = 0;

	id = add_agent(f, "lab-intel-1", "intel", "x86_64");
	sfx_text(f->st, "SELECT labels FROM agents WHERE id = ?1", id, text, sizeof(text));
	assert_string_equal(text, "{\"vendor\":\"intel\",\"arch\":\"x86_64\"}");
	sfx_text(f->st, "SELECT transport FROM agents WHERE id = ?1", id, text, sizeof(text));
	assert_string_equal(text, "http");

	/* The same name, or the same token, is refused. */
	token_of("other", tok);
	assert_int_equal(sched_agent_add(f->st, "lab-intel-1", NULL, tok, T0, &id2, &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_non_null(strstr(err.msg, "already exists"));
	token_of("lab-intel-1", tok);
	assert_int_equal(sched_agent_add(f->st, "lab-intel-2", NULL, tok, T0, &id2, &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);

	/* Bad names, labels and hashes. */
	assert_int_equal(sched_agent_add(f->st, "bad name", NULL, NULL, T0, &id2, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(sched_agent_add(f->st, "x", NULL, "abc", T0, &id2, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	{
		const char *keys[] = { "vendor", "vendor" };
		const char *values[] = { "intel", "amd" };
		struct sched_labels l = { keys, values, 2 };

		assert_int_equal(sched_agent_add(f->st, "dup-label", &l, NULL, T0, &id2, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		assert_non_null(strstr(err.msg, "given twice"));
	}
	{
		const char *keys[] = { "vendor" };
		const char *values[] = { "in\ntel" };
		struct sched_labels l = { keys, values, 1 };

		assert_int_equal(sched_agent_add(f->st, "ctl-label", &l, NULL, T0, &id2, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
	}
	assert_int_equal(count_rows(f, "SELECT count(*) FROM agents"), 1);

	/* An SSH host has no token. */
	assert_int_equal(sched_agent_add(f->st, "ssh-host", NULL, NULL, T0, &id2, &err), 0);
	sfx_text(f->st, "SELECT transport || ',' || coalesce(token_hash, 'none') FROM agents"
		 " WHERE id = ?1", id2, text, sizeof(text));
	assert_string_equal(text, "ssh,none");

	/* Lookup by token, in either case. */
	token_of("lab-intel-1", tok);
	for (int i = 0; i < 65; i++)
		upper[i] = (tok[i] >= 'a' && tok[i] <= 'f') ? (char)(tok[i] - 32) : tok[i];
	assert_int_equal(sched_agent_by_token(f->st, upper, &a, &err), 1);
	assert_int_equal(a.id, id);
	assert_string_equal(a.name, "lab-intel-1");
	assert_true(a.enabled);
	assert_int_equal(a.last_seen, 0);
	token_of("nobody", tok);
	assert_int_equal(sched_agent_by_token(f->st, tok, &a, &err), 0);
	assert_int_equal(a.id, 0);
	assert_int_equal(sched_agent_by_token(f->st, "xyz", &a, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);

	/* Seen: moves forward only. */
	assert_int_equal(sched_agent_seen(f->st, id, T0 + 10, &err), 0);
	assert_int_equal(sched_agent_seen(f->st, id, T0 + 5, &err), 0);
	assert_int_equal(sfx_int(f->st, "SELECT last_seen FROM agents WHERE id = ?1",
				 STORE_ARGS(STORE_INT(id))), T0 + 10);
	assert_int_equal(sched_agent_seen(f->st, 999, T0, &err), 0);
}

static void test_agent_update(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	const char *keys[] = { "vendor", "arch", "nic" };
	const char *values[] = { "intel", "x86_64", "e810" };
	struct sched_labels l = { keys, values, 3 };
	char text[256], *before;
	int64_t id = add_agent(f, "lab-1", "amd", "x86_64");

	assert_int_equal(sched_agent_update(f->st, id, &l,
					    "{ \"cores\": 16, \"kernel\": \"6.1.0\" }",
					    T0 + 30, &err), 0);
	sfx_text(f->st, "SELECT labels FROM agents WHERE id = ?1", id, text, sizeof(text));
	assert_string_equal(text, "{\"vendor\":\"intel\",\"arch\":\"x86_64\",\"nic\":\"e810\"}");
	sfx_text(f->st, "SELECT facts FROM agents WHERE id = ?1", id, text, sizeof(text));
	assert_string_equal(text, "{\"cores\":16,\"kernel\":\"6.1.0\"}");
	assert_int_equal(sfx_int(f->st, "SELECT last_seen FROM agents WHERE id = ?1",
				 STORE_ARGS(STORE_INT(id))), T0 + 30);

	/* NULL keeps what is stored. */
	assert_int_equal(sched_agent_update(f->st, id, NULL, NULL, T0 + 40, &err), 0);
	sfx_text(f->st, "SELECT labels FROM agents WHERE id = ?1", id, text, sizeof(text));
	assert_string_equal(text, "{\"vendor\":\"intel\",\"arch\":\"x86_64\",\"nic\":\"e810\"}");

	/* Refused, with nothing changed. */
	before = snapshot(f);
	assert_int_equal(sched_agent_update(f->st, id, NULL, "[1, 2]", T0 + 50, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "expected an object"));
	assert_int_equal(sched_agent_update(f->st, id, NULL, "{\"a\": ", T0 + 50, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(sched_agent_update(f->st, 999, NULL, "{}", T0 + 50, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	{
		char *after = snapshot(f);

		assert_string_equal(before, after);
		free(after);
	}
	free(before);
}

/* ---- leases -------------------------------------------------------------- */

static void test_lease_fields(void **state)
{
	struct fx *f = *state;
	struct sched_lease l;
	int64_t agent = add_agent(f, "intel-1", "intel", "x86_64");
	int64_t series = add_series(f, 3, T0);
	int64_t run = add_run(f, series, "new", T0);
	int64_t job = add_job(f, run, "perfgate-intel-Performance", "intel", T0);
	char text[256];

	assert_int_equal(lease(f, agent, T0 + 100, &l), job);
	assert_int_equal(l.attempt, 1);
	assert_int_equal(l.lease_expires, T0 + 100 + LEASE);
	assert_int_equal(l.run_id, run);
	assert_int_equal(l.series_id, series);
	assert_string_equal(l.context, "perfgate-intel-Performance");
	assert_string_equal(l.host_class, "intel");
	assert_string_equal(l.build_mode, "release");
	assert_string_equal(l.spec, "{\"context\":\"perfgate-intel-Performance\","
			    "\"host_class\":\"intel\",\"repetitions\":5}");
	sched_lease_release(&l);
	assert_null(l.spec);
	sched_lease_release(&l);

	sfx_text(f->st, "SELECT state || ',' || attempt || ',' || agent_id || ',' || lease_expires"
		 " || ',' || started_at FROM jobs WHERE id = ?1", job, text, sizeof(text));
	{
		char want[128];

		snprintf(want, sizeof(want), "leased,1,%lld,%lld,%lld", (long long)agent,
			 (long long)(T0 + 100 + LEASE), (long long)(T0 + 100));
		assert_string_equal(text, want);
	}
	sfx_text(f->st, "SELECT job_id || ',' || attempt || ',' || agent_id || ',' || started_at"
		 " || ',' || coalesce(ended_at, 'open') FROM attempts WHERE job_id = ?1", job,
		 text, sizeof(text));
	{
		char want[128];

		snprintf(want, sizeof(want), "%lld,1,%lld,%lld,open", (long long)job,
			 (long long)agent, (long long)(T0 + 100));
		assert_string_equal(text, want);
	}
}

static void test_lease_bad_input(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	struct sched_lease l;

	assert_int_equal(sched_lease(f->st, 0, &f->ps, T0, LEASE, &l, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(sched_lease(f->st, 1, &f->ps, T0, 0, &l, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(sched_lease(f->st, 42, &f->ps, T0, LEASE, &l, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_int_equal(l.job_id, 0);
	assert_null(l.spec);
}

static void test_lease_matches_labels(void **state)
{
	struct fx *f = *state;
	int64_t run = add_run(f, add_series(f, 2, T0), "new", T0);
	int64_t intel = add_agent(f, "intel-1", "intel", "x86_64");
	int64_t amd = add_agent(f, "amd-1", "amd", "x86_64");
	int64_t arm = add_agent(f, "arm-1", "arm", "aarch64");
	int64_t half, nic, now = T0 + 100;
	const char *hk[] = { "vendor" };
	const char *hv[] = { "intel" };
	const char *nk[] = { "arch", "vendor", "nic", "rack" };
	const char *nv[] = { "x86_64", "intel", "e810", "r12" };
	const char *classes[] = { "intel", "amd", "arm", "intel-e810", "riscv" };
	int64_t got_intel = 0, got_amd = 0, got_arm = 0, got_nic = 0;

	/* Two jobs per class, and one of a class no profile knows. */
	for (int c = 0; c < 5; c++)
		for (int m = 0; m < 2; m++) {
			char ctx[32];

			snprintf(ctx, sizeof(ctx), "perf-%s-%d", classes[c], m);
			add_job(f, run, ctx, classes[c], T0 + c * 2 + m);
		}
	/* Only vendor=intel: no class has only that label. */
	half = add_agent_labels(f, "half", hk, hv, 1);
	assert_int_equal(lease(f, half, now, NULL), 0);
	/* Extra labels do not matter; this one matches intel and intel-e810. */
	nic = add_agent_labels(f, "nic-1", nk, nv, 4);

	for (int round = 0; round < 4; round++) {
		int64_t agents[] = { intel, amd, arm, nic };
		int64_t *got[] = { &got_intel, &got_amd, &got_arm, &got_nic };

		for (int i = 0; i < 4; i++) {
			struct sched_lease l;
			int64_t job = lease(f, agents[i], now, &l);

			if (!job)
				continue;
			(*got[i])++;
			if (agents[i] == amd)
				assert_string_equal(l.host_class, "amd");
			else if (agents[i] == arm)
				assert_string_equal(l.host_class, "arm");
			else if (agents[i] == intel)
				assert_string_equal(l.host_class, "intel");
			else
				assert_true(!strcmp(l.host_class, "intel") ||
					    !strcmp(l.host_class, "intel-e810"));
			sched_lease_release(&l);
			finish(f, agents[i], job, 1, now + 1);
		}
		now += 10;
	}
	assert_int_equal(got_amd, 2);
	assert_int_equal(got_arm, 2);
	assert_int_equal(got_intel + got_nic, 4);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM jobs j JOIN agents a"
				 " ON a.id = j.agent_id WHERE j.host_class = 'intel-e810'"
				 " AND a.name <> 'nic-1'", NULL, 0), 0);
	/* The unknown class is never leased. */
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM jobs WHERE state = 'queued'", NULL,
				 0), 2);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM jobs WHERE state = 'queued'"
				 " AND host_class = 'riscv'", NULL, 0), 2);
}

static void test_lease_one_job_per_agent(void **state)
{
	struct fx *f = *state;
	struct sched_lease l;
	int64_t first;
	int64_t agent = add_agent(f, "intel-1", "intel", "x86_64");
	int64_t other = add_agent(f, "intel-2", "intel", "x86_64");
	struct pg_err err = PG_ERR_INIT;

	add_workload(f, 5, "new", "intel", 3, T0, &first);
	assert_int_equal(lease(f, agent, T0 + 10, NULL), first);
	assert_int_equal(lease(f, agent, T0 + 11, &l), 0);
	assert_int_equal(l.held_job_id, first);
	assert_null(l.spec);
	/* Running (after a heartbeat) holds the host as well. */
	assert_int_equal(heartbeat(f, agent, first, 1, "build", 10, T0 + 12, NULL, NULL), 0);
	assert_int_equal(lease(f, agent, T0 + 13, &l), 0);
	assert_int_equal(l.held_job_id, first);
	/* Another host gets the next job; the index backs the rule. */
	assert_int_equal(lease(f, other, T0 + 13, NULL), first + 1);
	assert_int_equal(store_run(f->st, "second job",
				   "UPDATE jobs SET state = 'leased', attempt = 1, agent_id = ?1,"
				   " lease_expires = ?2 WHERE id = ?3",
				   STORE_ARGS(STORE_INT(agent), STORE_INT(T0 + 100),
					      STORE_INT(first + 2)), &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	/* Free again once the result is in. */
	finish(f, agent, first, 1, T0 + 20);
	assert_int_equal(lease(f, agent, T0 + 21, NULL), first + 2);

	/* A disabled agent gets nothing. */
	finish(f, agent, first + 2, 1, T0 + 22);
	add_workload(f, 5, "new", "intel", 1, T0 + 30, NULL);
	sfx_sql(f->st, "UPDATE agents SET enabled = 0 WHERE id = ?1", STORE_ARGS(STORE_INT(agent)));
	assert_int_equal(lease(f, agent, T0 + 40, &l), 0);
	assert_int_equal(l.held_job_id, 0);
}

static void test_lease_oldest_first(void **state)
{
	struct fx *f = *state;
	int64_t agent = add_agent(f, "intel-1", "intel", "x86_64");
	int64_t a = add_run(f, add_series(f, 4, T0), "new", T0);
	int64_t b = add_run(f, add_series(f, 4, T0 + 5), "new", T0 + 5);
	int64_t a1, a2, b1, b2, held, urgent;
	int64_t now = T0 + 100;

	/* Run b's first job is older than run a's second. */
	a1 = add_job(f, a, "c1", "intel", T0);
	b1 = add_job(f, b, "c1", "intel", T0 + 5);
	a2 = add_job(f, a, "c2", "intel", T0 + 6);
	b2 = add_job(f, b, "c2", "intel", T0 + 7);
	/* Held (the planner's hook) and explicitly urgent. */
	held = add_job_p(f, a, "c3", "intel", T0 - 100, SCHED_PRIORITY_HELD);
	urgent = add_job_p(f, b, "c3", "intel", T0 + 50, 5);

	/* Explicit priority first (urgent: b served 1); then the less served
	 * run (a1: a served 1); at equal service the older job (b1 before a2:
	 * b served 2); a2; b2. */
	int64_t want[] = { urgent, a1, b1, a2, b2 };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(lease(f, agent, now, NULL), want[i]);
		finish(f, agent, want[i], 1, now + 1);
		now += 10;
	}
	/* The held job waits until the planner releases it. */
	assert_int_equal(lease(f, agent, now, NULL), 0);
	sfx_sql(f->st, "UPDATE jobs SET priority = 0 WHERE id = ?1", STORE_ARGS(STORE_INT(held)));
	assert_int_equal(lease(f, agent, now, NULL), held);
}

/*
 * The guarantee in sched.h: a recheck or a one-patch series none of whose
 * jobs of the class was leased yet gets the next lease of a matching
 * agent, whatever an older 30-job series has queued; and a competing run
 * X takes at most served_R - served_X + 1 leases ahead of run R.
 */
static void test_fair_recheck_not_starved(void **state)
{
	struct fx *f = *state;
	int64_t agent = add_agent(f, "intel-1", "intel", "x86_64");
	int64_t big_first, recheck_job, small_job, mid_first;
	int64_t big = add_workload(f, 30, "new", "intel", 30, T0, &big_first);
	int64_t now = T0 + 100;
	int64_t n_big = 0;

	/* Three of the big series' jobs run one after the other. */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(lease(f, agent, now, NULL), big_first + i);
		finish(f, agent, big_first + i, 1, now + 1);
		now += 10;
		n_big++;
	}
	/* A recheck of another series is queued: it is the very next lease. */
	add_workload(f, 30, "recheck", "intel", 1, now, &recheck_job);
	assert_int_equal(lease(f, agent, now + 1, NULL), recheck_job);
	finish(f, agent, recheck_job, 1, now + 2);
	now += 10;
	/* So is a one-patch series. */
	add_workload(f, 1, "new", "intel", 1, now, &small_job);
	assert_int_equal(lease(f, agent, now + 1, NULL), small_job);
	finish(f, agent, small_job, 1, now + 2);
	now += 10;
	/* A 3-patch series with 3 jobs, while big has been served 3 times:
	 * mid takes at most 3 - 0 + 1 leases ahead of big's next job, and
	 * here all 3 of its jobs (served 0, 1, 2 < 3) go first. */
	add_workload(f, 3, "new", "intel", 3, now, &mid_first);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(lease(f, agent, now + 1, NULL), mid_first + i);
		finish(f, agent, mid_first + i, 1, now + 2);
		now += 10;
	}
	/* Then big resumes where it left off, oldest first. */
	for (int i = 3; i < 30; i++) {
		assert_int_equal(lease(f, agent, now, NULL), big_first + i);
		finish(f, agent, big_first + i, 1, now + 1);
		now += 10;
		n_big++;
	}
	assert_int_equal(n_big, 30);
	assert_int_equal(lease(f, agent, now, NULL), 0);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM jobs WHERE run_id = ?1"
				 " AND state = 'done'", STORE_ARGS(STORE_INT(big))), 30);
}

/* Several hosts, all busy with the big series when a recheck arrives; and
 * a recheck queued before anything was leased. */
static void test_fair_many_agents(void **state)
{
	struct fx *f = *state;
	int64_t agents[4], big_first, recheck_job, early_recheck;
	int64_t now = T0 + 100;

	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "intel-%d", i);
		agents[i] = add_agent(f, name, "intel", "x86_64");
	}
	add_workload(f, 30, "new", "intel", 30, T0, &big_first);
	/* Queued after all 30 but before any lease: boosted at equal
	 * service, so it goes first. */
	add_workload(f, 2, "recheck", "intel", 1, T0 + 50, &early_recheck);
	assert_int_equal(lease(f, agents[0], now, NULL), early_recheck);
	for (int i = 1; i < 4; i++)
		assert_int_equal(lease(f, agents[i], now, NULL), big_first + i - 1);
	/* Every host busy; a recheck arrives; the first host to free up
	 * takes it, not big's fourth job. */
	add_workload(f, 30, "recheck", "intel", 1, now + 5, &recheck_job);
	finish(f, agents[2], big_first + 1, 1, now + 20);
	assert_int_equal(lease(f, agents[2], now + 21, NULL), recheck_job);
	finish(f, agents[0], early_recheck, 1, now + 22);
	assert_int_equal(lease(f, agents[0], now + 23, NULL), big_first + 3);
}

/* ---- heartbeats ---------------------------------------------------------- */

static void test_heartbeat(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-1", "intel", "x86_64");
	int64_t b = add_agent(f, "intel-2", "intel", "x86_64");
	int64_t job;
	enum pg_errcode code;
	bool cancel = true;
	char text[128], *before;

	add_workload(f, 2, "new", "intel", 2, T0, &job);
	assert_int_equal(lease(f, a, T0 + 100, NULL), job);

	assert_int_equal(heartbeat(f, a, job, 1, "build-base", 5, T0 + 120, &cancel, NULL), 0);
	assert_false(cancel);
	sfx_text(f->st, "SELECT state || ',' || lease_expires || ',' || stage || ',' || progress"
		 " || ',' || stage_at FROM jobs WHERE id = ?1", job, text, sizeof(text));
	{
		char want[128];

		snprintf(want, sizeof(want), "running,%lld,build-base,5,%lld",
			 (long long)(T0 + 120 + LEASE), (long long)(T0 + 120));
		assert_string_equal(text, want);
	}
	/* Same stage: stage_at stays; unknown progress is NULL; no stage keeps
	 * the stored one. */
	assert_int_equal(heartbeat(f, a, job, 1, "build-base", -1, T0 + 130, NULL, NULL), 0);
	assert_int_equal(heartbeat(f, a, job, 1, NULL, 40, T0 + 140, NULL, NULL), 0);
	sfx_text(f->st, "SELECT stage || ',' || progress || ',' || stage_at || ',' || lease_expires"
		 " FROM jobs WHERE id = ?1", job, text, sizeof(text));
	{
		char want[128];

		snprintf(want, sizeof(want), "build-base,40,%lld,%lld", (long long)(T0 + 120),
			 (long long)(T0 + 140 + LEASE));
		assert_string_equal(text, want);
	}
	/* Renewals of a running job leave state out of their UPDATE: the
	 * indexes still find it, the expiry sweep's at its new time. */
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM jobs INDEXED BY jobs_lease_expiry"
				 " WHERE state IN ('leased', 'running') AND lease_expires = ?1",
				 STORE_ARGS(STORE_INT(T0 + 140 + LEASE))), 1);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM jobs INDEXED BY jobs_state"
				 " WHERE state = 'running' AND id = ?1", STORE_ARGS(STORE_INT(job))),
			 1);
	sfx_text(f->st, "SELECT group_concat(integrity_check) FROM pragma_integrity_check"
		 " WHERE ?1 > 0", job, text, sizeof(text));
	assert_string_equal(text, "ok");
	assert_int_equal(heartbeat(f, a, job, 1, "bench", 60, T0 + 150, NULL, NULL), 0);
	assert_int_equal(sfx_int(f->st, "SELECT stage_at FROM jobs WHERE id = ?1",
				 STORE_ARGS(STORE_INT(job))), T0 + 150);

	/* Refusals change nothing. */
	before = snapshot(f);
	assert_int_equal(heartbeat(f, b, job, 1, "bench", 60, T0 + 160, NULL, &code), -1);
	assert_int_equal(code, PG_ECONFLICT);
	assert_int_equal(heartbeat(f, a, job, 2, "bench", 60, T0 + 160, NULL, &code), -1);
	assert_int_equal(code, PG_ECONFLICT);
	assert_int_equal(heartbeat(f, a, job + 1, 1, "bench", 60, T0 + 160, NULL, &code), -1);
	assert_int_equal(code, PG_ECONFLICT);
	assert_int_equal(heartbeat(f, a, 9999, 1, "bench", 60, T0 + 160, NULL, &code), -1);
	assert_int_equal(code, PG_ENOTFOUND);
	assert_int_equal(heartbeat(f, a, job, 1, "bench", 101, T0 + 160, NULL, &code), -1);
	assert_int_equal(code, PG_EINVAL);
	assert_int_equal(heartbeat(f, a, job, 1, "a\tb", 1, T0 + 160, NULL, &code), -1);
	assert_int_equal(code, PG_EINVAL);
	{
		char *after = snapshot(f);

		assert_string_equal(before, after);
		free(after);
	}
	free(before);

	/* A finished job takes no heartbeat. */
	finish(f, a, job, 1, T0 + 170);
	assert_int_equal(heartbeat(f, a, job, 1, "bench", 60, T0 + 180, NULL, &code), -1);
	assert_int_equal(code, PG_ECONFLICT);
}

/* ---- expiry -------------------------------------------------------------- */

static void test_expire_requeue_then_give_up(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t b = add_agent(f, "intel-b", "intel", "x86_64");
	int64_t job, now = T0 + 1000;
	char text[1024];

	add_workload(f, 2, "new", "intel", 1, T0, &job);
	assert_int_equal(lease(f, a, now, NULL), job);
	assert_int_equal(heartbeat(f, a, job, 1, "build", 10, now + 30, NULL, NULL), 0);
	/* Not yet: the lease runs to now + 90 inclusive. */
	expire(f, now + 90, 2, 0, 0);
	assert_state(f, job, "running");
	expire(f, now + 91, 2, 1, 0);
	assert_state(f, job, "queued");
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM jobs WHERE id = ?1"
				 " AND agent_id IS NULL AND lease_expires IS NULL AND attempt = 1",
				 STORE_ARGS(STORE_INT(job))), 1);
	sfx_text(f->st, "SELECT outcome || ',' || ended_at || ',' || reason FROM attempts"
		 " WHERE job_id = ?1 AND attempt = 1", job, text, sizeof(text));
	{
		char want[256];

		snprintf(want, sizeof(want),
			 "expired,%lld,lease expired at 2025-11-30T04:38:10Z"
			 " (no heartbeat from agent intel-a)", (long long)(now + 91));
		assert_string_equal(text, want);
	}
	sfx_text(f->st, "SELECT outcome_detail FROM jobs WHERE id = ?1", job, text, sizeof(text));
	assert_string_equal(text, "attempt 1: lease expired at 2025-11-30T04:38:10Z"
			    " (no heartbeat from agent intel-a)");
	/* The agent that held it is free again, and another takes the job
	 * as attempt 2. */
	assert_int_equal(lease(f, b, now + 100, NULL), job);
	assert_int_equal(sfx_int(f->st, "SELECT attempt FROM jobs WHERE id = ?1",
				 STORE_ARGS(STORE_INT(job))), 2);
	/* At the limit it ends as an infrastructure error. */
	expire(f, now + 200, 2, 0, 1);
	assert_state(f, job, "infra-error");
	sfx_text(f->st, "SELECT outcome FROM jobs WHERE id = ?1", job, text, sizeof(text));
	assert_string_equal(text, "infra-error");
	sfx_text(f->st, "SELECT outcome_detail FROM jobs WHERE id = ?1", job, text, sizeof(text));
	assert_string_equal(text,
			    "gave up after 2 attempts:"
			    " attempt 1 on agent intel-a: expired: lease expired at"
			    " 2025-11-30T04:38:10Z (no heartbeat from agent intel-a);"
			    " attempt 2 on agent intel-b: expired: lease expired at"
			    " 2025-11-30T04:39:20Z (no heartbeat from agent intel-b)");
	assert_int_equal(sfx_int(f->st, "SELECT finished_at FROM jobs WHERE id = ?1",
				 STORE_ARGS(STORE_INT(job))), now + 200);
	assert_int_equal(lease(f, a, now + 300, NULL), 0);
	/* A second sweep finds nothing. */
	expire(f, now + 400, 2, 0, 0);
	{
		struct pg_err err = PG_ERR_INIT;

		assert_int_equal(sched_expire(f->st, now, 0, NULL, NULL, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
	}
}

/* ---- results ------------------------------------------------------------- */

static void test_result_idempotent(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t b = add_agent(f, "intel-b", "intel", "x86_64");
	int64_t job, now = T0 + 1000;
	char text[256], *before, *after;

	add_workload(f, 2, "new", "intel", 2, T0, &job);
	assert_int_equal(lease(f, a, now, NULL), job);
	assert_int_equal(heartbeat(f, a, job, 1, "bench", 90, now + 10, NULL, NULL), 0);

	/* Bad input is refused before anything is looked at. */
	before = snapshot(f);
	{
		struct sched_sample dup[] = { two_samples[0], two_samples[0] };
		struct sched_sample nan_sample[] = { two_samples[0] };
		struct sched_sample bad_side[] = { two_samples[0] };
		struct sched_result_in res = {
			.outcome = "ok", .samples = dup, .n_samples = 2, .digest_hex = DIGEST_A,
		};
		enum sched_result_status st;
		struct pg_err err = PG_ERR_INIT;

		assert_int_equal(sched_result(f->st, a, job, 1, &res, now, 3, &st, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		assert_non_null(strstr(err.msg, "repeats"));
		assert_int_equal(st, SCHED_RESULT_FAILED);
		nan_sample[0].value = NAN;
		res.samples = nan_sample;
		res.n_samples = 1;
		assert_int_equal(sched_result(f->st, a, job, 1, &res, now, 3, &st, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		bad_side[0].side = "left";
		res.samples = bad_side;
		assert_int_equal(sched_result(f->st, a, job, 1, &res, now, 3, &st, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		res.samples = two_samples;
		res.n_samples = 2;
		res.outcome = "success";
		assert_int_equal(sched_result(f->st, a, job, 1, &res, now, 3, &st, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		res.outcome = "ok";
		res.fingerprint_json = "\"cpu\"";
		assert_int_equal(sched_result(f->st, a, job, 1, &res, now, 3, &st, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		res.fingerprint_json = NULL;
		res.digest_hex = "not hex";
		assert_int_equal(sched_result(f->st, a, job, 1, &res, now, 3, &st, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		res.digest_hex = DIGEST_A;
		assert_int_equal(sched_result(f->st, a, 9999, 1, &res, now, 3, &st, &err), -1);
		assert_int_equal(err.code, PG_ENOTFOUND);
		assert_int_equal(st, SCHED_RESULT_FAILED);
		/* Another agent, or an attempt that never was. */
		assert_int_equal(sched_result(f->st, b, job, 1, &res, now, 3, &st, &err), -1);
		assert_int_equal(err.code, PG_ECONFLICT);
		assert_int_equal(st, SCHED_RESULT_CONFLICT);
		assert_int_equal(sched_result(f->st, a, job, 2, &res, now, 3, &st, &err), -1);
		assert_int_equal(err.code, PG_ECONFLICT);
	}
	after = snapshot(f);
	assert_string_equal(before, after);
	free(before);
	free(after);

	/* The first result is recorded. */
	finish(f, a, job, 1, now + 20);
	assert_state(f, job, "done");
	sfx_text(f->st, "SELECT outcome || ',' || outcome_detail || ',' || finished_at || ','"
		 " || agent_id || ',' || coalesce(lease_expires, 'none') FROM jobs WHERE id = ?1",
		 job, text, sizeof(text));
	{
		char want[128];

		snprintf(want, sizeof(want), "ok,finished,%lld,%lld,none", (long long)(now + 20),
			 (long long)a);
		assert_string_equal(text, want);
	}
	sfx_text(f->st, "SELECT outcome || ',' || ended_at FROM attempts WHERE job_id = ?1", job,
		 text, sizeof(text));
	{
		char want[64];

		snprintf(want, sizeof(want), "ok,%lld", (long long)(now + 20));
		assert_string_equal(text, want);
	}
	sfx_text(f->st, "SELECT fingerprint || ' ' || digest FROM results WHERE job_id = ?1", job,
		 text, sizeof(text));
	assert_string_equal(text, "{\"cpu\":\"Xeon\",\"microcode\":\"0x2b\"} " DIGEST_A);
	assert_int_equal(count_rows(f, "SELECT count(*) FROM results"), 1);
	assert_int_equal(count_rows(f, "SELECT count(*) FROM samples"), 2);
	sfx_text(f->st, "SELECT group_concat(side || '=' || value || unit, ' ') FROM samples"
		 " WHERE job_id = ?1", job, text, sizeof(text));
	assert_string_equal(text, "base=1000000000.0obj/s patched=980000000.0obj/s");

	/* The same upload again: a duplicate; another body: a conflict. Both
	 * change nothing. */
	before = snapshot(f);
	assert_int_equal(result_rc(f, a, job, 1, "ok", DIGEST_A, now + 30, 0, PG_OK),
			 SCHED_RESULT_DUPLICATE);
	assert_int_equal(result_rc(f, a, job, 1, "ok",
				   "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
				   now + 31, 0, PG_OK), SCHED_RESULT_DUPLICATE);
	assert_int_equal(result_rc(f, a, job, 1, "bench-failure", DIGEST_B, now + 32, -1,
				   PG_ECONFLICT), SCHED_RESULT_CONFLICT);
	assert_int_equal(result_rc(f, b, job, 1, "ok", DIGEST_A, now + 33, -1, PG_ECONFLICT),
			 SCHED_RESULT_CONFLICT);
	after = snapshot(f);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

/* An agent-reported infra-error requeues like an expiry, up to the limit. */
static void test_result_infra_error_requeues(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t b = add_agent(f, "intel-b", "intel", "x86_64");
	int64_t c = add_agent(f, "intel-c", "intel", "x86_64");
	int64_t job, now = T0 + 1000;
	char text[1024];

	add_workload(f, 2, "new", "intel", 1, T0, &job);
	for (int i = 0; i < 3; i++) {
		int64_t agent = i == 0 ? a : i == 1 ? b : c;

		assert_int_equal(lease(f, agent, now, NULL), job);
		assert_int_equal(result_rc(f, agent, job, i + 1, "infra-error", DIGEST_A, now + 5,
					   0, PG_OK), SCHED_RESULT_RECORDED);
		now += 10;
		if (i < 2) {
			assert_state(f, job, "queued");
			sfx_text(f->st, "SELECT outcome_detail FROM jobs WHERE id = ?1", job, text,
				 sizeof(text));
			assert_non_null(strstr(text, "reported infra-error: finished"));
		}
	}
	assert_state(f, job, "infra-error");
	sfx_text(f->st, "SELECT outcome_detail FROM jobs WHERE id = ?1", job, text, sizeof(text));
	assert_string_equal(text, "gave up after 3 attempts:"
			    " attempt 1 on agent intel-a: infra-error: finished;"
			    " attempt 2 on agent intel-b: infra-error: finished;"
			    " attempt 3 on agent intel-c: infra-error: finished");
	assert_int_equal(count_rows(f, "SELECT count(*) FROM results"), 3);
	/* A retried upload of the first attempt is still a duplicate. */
	assert_int_equal(result_rc(f, a, job, 1, "infra-error", DIGEST_A, now, 0, PG_OK),
			 SCHED_RESULT_DUPLICATE);
}

/*
 * Late work (sched.h): the holder of an expired attempt that nobody
 * leased since may still deliver; once someone else leased the job, the
 * new attempt owns it.
 */
static void test_result_after_expiry(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t b = add_agent(f, "intel-b", "intel", "x86_64");
	int64_t job1, job2, now = T0 + 1000;
	char text[512], *before, *after;
	enum pg_errcode code;

	add_workload(f, 2, "new", "intel", 1, T0, &job1);
	assert_int_equal(lease(f, a, now, NULL), job1);
	expire(f, now + LEASE + 1, MAX_ATTEMPTS, 1, 0);
	assert_state(f, job1, "queued");
	/* Not leased again yet: the result counts. */
	assert_int_equal(result_rc(f, a, job1, 1, "ok", DIGEST_A, now + 70, 0, PG_OK),
			 SCHED_RESULT_RECORDED);
	assert_state(f, job1, "done");
	assert_int_equal(sfx_int(f->st, "SELECT agent_id FROM jobs WHERE id = ?1",
				 STORE_ARGS(STORE_INT(job1))), a);
	sfx_text(f->st, "SELECT outcome || ': ' || reason FROM attempts WHERE job_id = ?1", job1,
		 text, sizeof(text));
	assert_string_equal(text, "ok: lease expired at 2025-11-30T04:37:40Z (no heartbeat from"
			    " agent intel-a); result arrived at 2025-11-30T04:37:50Z");
	assert_int_equal(lease(f, b, now + 80, NULL), 0);
	assert_int_equal(count_rows(f, "SELECT count(*) FROM results"), 1);

	/* Leased again by b before a's result arrives: a's result and
	 * heartbeats are refused, b's result is the only one. */
	now += 1000;
	add_workload(f, 2, "new", "intel", 1, now, &job2);
	assert_int_equal(lease(f, a, now, NULL), job2);
	expire(f, now + LEASE + 1, MAX_ATTEMPTS, 1, 0);
	assert_int_equal(lease(f, b, now + 70, NULL), job2);
	before = snapshot(f);
	assert_int_equal(result_rc(f, a, job2, 1, "ok", DIGEST_A, now + 80, -1, PG_ECONFLICT),
			 SCHED_RESULT_CONFLICT);
	assert_int_equal(heartbeat(f, a, job2, 1, "bench", 50, now + 80, NULL, &code), -1);
	assert_int_equal(code, PG_ECONFLICT);
	after = snapshot(f);
	assert_string_equal(before, after);
	free(before);
	free(after);
	finish(f, b, job2, 2, now + 90);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM results WHERE job_id = ?1",
				 STORE_ARGS(STORE_INT(job2))), 1);
	assert_int_equal(sfx_int(f->st, "SELECT attempt FROM results WHERE job_id = ?1",
				 STORE_ARGS(STORE_INT(job2))), 2);

	/* A job given up after its last attempt expired still takes that
	 * attempt's result. */
	now += 1000;
	{
		int64_t job3;

		add_workload(f, 2, "new", "intel", 1, now, &job3);
		assert_int_equal(lease(f, a, now, NULL), job3);
		expire(f, now + LEASE + 1, 1, 0, 1);
		assert_state(f, job3, "infra-error");
		finish(f, a, job3, 1, now + 100);
		assert_state(f, job3, "done");
		sfx_text(f->st, "SELECT outcome || ',' || coalesce(outcome_detail, '') FROM jobs"
			 " WHERE id = ?1", job3, text, sizeof(text));
		assert_string_equal(text, "ok,finished");
	}
}

/* A heartbeat from the holder of an expired, unclaimed attempt takes the
 * lease back (a controller that was down longer than a lease). */
static void test_heartbeat_takes_lease_back(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t b = add_agent(f, "intel-b", "intel", "x86_64");
	int64_t job, other, now = T0 + 1000;
	bool cancel = true;
	char text[512];

	add_workload(f, 2, "new", "intel", 2, T0, &job);
	other = job + 1;
	assert_int_equal(lease(f, a, now, NULL), job);
	expire(f, now + LEASE + 1, MAX_ATTEMPTS, 1, 0);
	assert_int_equal(heartbeat(f, a, job, 1, "bench", 70, now + 70, &cancel, NULL), 0);
	assert_false(cancel);
	assert_state(f, job, "running");
	sfx_text(f->st, "SELECT agent_id || ',' || attempt || ',' || lease_expires || ','"
		 " || coalesce(outcome_detail, 'none') FROM jobs WHERE id = ?1", job, text,
		 sizeof(text));
	{
		char want[128];

		snprintf(want, sizeof(want), "%lld,1,%lld,none", (long long)a,
			 (long long)(now + 70 + LEASE));
		assert_string_equal(text, want);
	}
	sfx_text(f->st, "SELECT coalesce(ended_at, 'open') || ',' || coalesce(outcome, 'none')"
		 " || ',' || reason FROM attempts WHERE job_id = ?1", job, text, sizeof(text));
	assert_string_equal(text, "open,none,lease expired at 2025-11-30T04:37:40Z (no heartbeat"
			    " from agent intel-a); taken back by a heartbeat at 2025-11-30T04:37:50Z");
	/* b gets the other job, not this one. */
	assert_int_equal(lease(f, b, now + 71, NULL), other);
	finish(f, a, job, 1, now + 80);
	finish(f, b, other, 1, now + 81);
	assert_int_equal(count_rows(f, "SELECT count(*) FROM attempts"), 2);

	/* Also after the sweep gave up on it. */
	{
		int64_t job3;

		now += 1000;
		add_workload(f, 2, "new", "intel", 1, now, &job3);
		assert_int_equal(lease(f, a, now, NULL), job3);
		expire(f, now + LEASE + 1, 1, 0, 1);
		assert_int_equal(heartbeat(f, a, job3, 1, NULL, -1, now + 70, NULL, NULL), 0);
		assert_state(f, job3, "running");
		sfx_text(f->st, "SELECT coalesce(outcome, 'none') || ','"
			 " || coalesce(finished_at, 'none') FROM jobs WHERE id = ?1", job3, text,
			 sizeof(text));
		assert_string_equal(text, "none,none");
	}
}

/* ---- cancellation -------------------------------------------------------- */

static void cancel_ok(struct fx *f, int which, int64_t id, int64_t now, int64_t want_queued,
		      int64_t want_active)
{
	struct sched_cancel_count c = { -1, -1, -1 };
	struct pg_err err = PG_ERR_INIT;
	int rc = which == 0 ? sched_cancel_job(f->st, id, "superseded by v2", now, &c, &err) :
		 which == 1 ? sched_cancel_run(f->st, id, "superseded by v2", now, &c, &err) :
		 sched_cancel_series(f->st, id, "superseded by v2", now, &c, &err);

	if (rc < 0)
		fail_msg("cancel: %s", err.msg);
	assert_int_equal(c.queued, want_queued);
	assert_int_equal(c.active, want_active);
	/* A job's cancel names its run, for the checks it may settle. */
	if (which == 0)
		assert_int_equal(c.run_id, sfx_int(f->st, "SELECT run_id FROM jobs WHERE id = ?1",
						   STORE_ARGS(STORE_INT(id))));
	else
		assert_int_equal(c.run_id, 0);
}

static void test_cancel_job(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t job, now = T0 + 1000;
	struct pg_err err = PG_ERR_INIT;
	struct sched_cancel_count c;
	bool cancel = false;
	char text[256], *before, *after;

	add_workload(f, 2, "new", "intel", 3, T0, &job);
	/* A queued job: cancelled at once, never leased. */
	cancel_ok(f, 0, job, now, 1, 0);
	assert_state(f, job, "cancelled");
	sfx_text(f->st, "SELECT outcome_detail || ',' || finished_at || ','"
		 " || coalesce(outcome, 'none') FROM jobs WHERE id = ?1", job, text, sizeof(text));
	{
		char want[128];

		snprintf(want, sizeof(want), "superseded by v2,%lld,none", (long long)now);
		assert_string_equal(text, want);
	}
	assert_int_equal(lease(f, a, now + 1, NULL), job + 1);

	/* A running job: cancelled too; the next heartbeat says so and renews
	 * nothing. */
	assert_int_equal(heartbeat(f, a, job + 1, 1, "bench", 50, now + 10, NULL, NULL), 0);
	cancel_ok(f, 0, job + 1, now + 20, 0, 1);
	assert_state(f, job + 1, "cancelled");
	sfx_text(f->st, "SELECT outcome || ',' || ended_at || ',' || reason FROM attempts"
		 " WHERE job_id = ?1", job + 1, text, sizeof(text));
	{
		char want[128];

		snprintf(want, sizeof(want), "cancelled,%lld,superseded by v2", (long long)(now + 20));
		assert_string_equal(text, want);
	}
	before = snapshot(f);
	assert_int_equal(heartbeat(f, a, job + 1, 1, "bench", 60, now + 30, &cancel, NULL), 0);
	assert_true(cancel);
	after = snapshot(f);
	assert_string_equal(before, after);
	free(before);
	free(after);
	assert_int_equal(sfx_int(f->st, "SELECT lease_expires IS NULL FROM jobs WHERE id = ?1",
				 STORE_ARGS(STORE_INT(job + 1))), 1);
	/* Cancelling again, or a finished job, does nothing. */
	cancel_ok(f, 0, job + 1, now + 40, 0, 0);

	/* The result the agent had spooled is acknowledged and kept, the job
	 * stays cancelled; its retry is a duplicate. */
	assert_int_equal(result_rc(f, a, job + 1, 1, "ok", DIGEST_A, now + 50, 0, PG_OK),
			 SCHED_RESULT_ACKNOWLEDGED);
	assert_state(f, job + 1, "cancelled");
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM results WHERE job_id = ?1",
				 STORE_ARGS(STORE_INT(job + 1))), 1);
	assert_int_equal(result_rc(f, a, job + 1, 1, "ok", DIGEST_A, now + 51, 0, PG_OK),
			 SCHED_RESULT_DUPLICATE);

	/* The host is free for the next job. */
	assert_int_equal(lease(f, a, now + 60, NULL), job + 2);

	assert_int_equal(sched_cancel_job(f->st, 9999, "x", now, &c, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_int_equal(sched_cancel_job(f->st, job, "", now, &c, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
}

static void test_cancel_run_and_series(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t b = add_agent(f, "amd-b", "amd", "x86_64");
	int64_t series = add_series(f, 5, T0);
	int64_t run1 = add_run(f, series, "new", T0);
	int64_t run2 = add_run(f, series, "recheck", T0 + 10);
	int64_t other_run = add_run(f, add_series(f, 5, T0), "new", T0);
	int64_t done_job, running_job, now = T0 + 1000;
	struct pg_err err = PG_ERR_INIT;
	struct sched_cancel_count c;
	bool cancel = false;
	char text[64];

	done_job = add_job(f, run1, "c1", "intel", T0);
	add_job(f, run1, "c2", "intel", T0 + 1);
	running_job = add_job(f, run2, "c1", "amd", T0 + 10);
	add_job(f, run2, "c2", "amd", T0 + 11);
	add_job(f, other_run, "c1", "arm", T0);
	assert_int_equal(lease(f, a, now, NULL), done_job);
	finish(f, a, done_job, 1, now + 1);
	assert_int_equal(lease(f, b, now, NULL), running_job);

	cancel_ok(f, 2, series, now + 5, 2, 1);
	assert_state(f, done_job, "done");
	sfx_text(f->st, "SELECT group_concat(state, ',') FROM (SELECT state FROM runs"
		 " WHERE series_id = ?1 ORDER BY id)", series, text, sizeof(text));
	assert_string_equal(text, "cancelled,cancelled");
	sfx_text(f->st, "SELECT state FROM runs WHERE id = ?1", other_run, text, sizeof(text));
	assert_string_equal(text, "planned");
	assert_int_equal(heartbeat(f, b, running_job, 1, "bench", 1, now + 6, &cancel, NULL), 0);
	assert_true(cancel);
	assert_int_equal(lease(f, a, now + 7, NULL), 0);

	/* A run on its own, and the in-transaction variant for the planner. */
	cancel_ok(f, 1, other_run, now + 8, 1, 0);
	assert_int_equal(sched_cancel_run(f->st, 9999, "x", now, &c, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_int_equal(sched_cancel_series(f->st, 9999, "x", now, &c, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	{
		int64_t s2 = add_series(f, 5, T0 + 20);
		int64_t r2 = add_run(f, s2, "new", T0 + 20);

		add_job(f, r2, "c1", "intel", T0 + 20);
		assert_int_equal(store_begin(f->st, &err), 0);
		assert_int_equal(sched_cancel_series_tx(f->st, s2, "superseded", now + 9, &c, &err), 0);
		assert_int_equal(c.queued, 1);
		store_rollback(f->st);
		assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM jobs WHERE run_id = ?1"
					 " AND state = 'queued'", STORE_ARGS(STORE_INT(r2))), 1);
	}
}

/* ---- figures ------------------------------------------------------------- */

static void test_stats(void **state)
{
	struct fx *f = *state;
	int64_t agents[3], job, now = T0 + 1000;
	struct pg_err err = PG_ERR_INIT;
	struct sched_stats s;

	agents[0] = add_agent(f, "intel-a", "intel", "x86_64");
	agents[1] = add_agent(f, "intel-b", "intel", "x86_64");
	agents[2] = add_agent(f, "intel-c", "intel", "x86_64");
	sfx_sql(f->st, "UPDATE agents SET enabled = 0 WHERE id = ?1",
		STORE_ARGS(STORE_INT(agents[2])));
	{
		int64_t run = add_workload(f, 9, "new", "intel", 6, T0, &job);

		add_job_p(f, run, "held", "intel", T0, SCHED_PRIORITY_HELD);
	}
	assert_int_equal(sched_queue_stats(f->st, now, 60, &s, &err), 0);
	assert_int_equal(s.queued, 7);
	assert_int_equal(s.held, 1);
	assert_int_equal(s.agents, 3);
	assert_int_equal(s.agents_enabled, 2);
	assert_int_equal(s.agents_online, 0);

	/* One done, one cancelled, one running, one leased, one given up. */
	assert_int_equal(lease(f, agents[0], now, NULL), job);
	finish(f, agents[0], job, 1, now + 1);
	cancel_ok(f, 0, job + 1, now + 2, 1, 0);
	assert_int_equal(lease(f, agents[0], now + 3, NULL), job + 2);
	assert_int_equal(lease(f, agents[1], now + 3, NULL), job + 3);
	expire(f, now + 100, 1, 0, 2);
	assert_int_equal(lease(f, agents[0], now + 110, NULL), job + 4);
	assert_int_equal(heartbeat(f, agents[0], job + 4, 1, "build", 1, now + 111, NULL, NULL), 0);
	assert_int_equal(lease(f, agents[1], now + 112, NULL), job + 5);
	assert_int_equal(sched_agent_seen(f->st, agents[0], now + 100, &err), 0);
	assert_int_equal(sched_agent_seen(f->st, agents[1], now + 20, &err), 0);

	assert_int_equal(sched_queue_stats(f->st, now + 120, 60, &s, &err), 0);
	assert_int_equal(s.queued, 1);
	assert_int_equal(s.held, 1);
	assert_int_equal(s.leased, 1);
	assert_int_equal(s.running, 1);
	assert_int_equal(s.done, 1);
	assert_int_equal(s.cancelled, 1);
	assert_int_equal(s.infra_error, 2);
	assert_int_equal(s.agents, 3);
	assert_int_equal(s.agents_online, 1);
	assert_int_equal(s.agents_busy, 2);
	assert_int_equal(sched_queue_stats(f->st, now + 120, -1, &s, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
}

/* ---- the scenarios, at the scheduler's level --------------------- */

/* kill -9 of an agent mid-job: no heartbeat, the lease expires, another
 * agent finishes the job; exactly one result. */
static void test_agent_killed_mid_job(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t b = add_agent(f, "intel-b", "intel", "x86_64");
	int64_t job, now = T0 + 1000;

	add_workload(f, 2, "new", "intel", 1, T0, &job);
	assert_int_equal(lease(f, a, now, NULL), job);
	assert_int_equal(heartbeat(f, a, job, 1, "build", 10, now + 20, NULL, NULL), 0);
	/* a dies here.  b finds nothing until the sweep. */
	assert_int_equal(lease(f, b, now + 30, NULL), 0);
	expire(f, now + 70, MAX_ATTEMPTS, 0, 0);
	expire(f, now + 81, MAX_ATTEMPTS, 1, 0);
	assert_int_equal(lease(f, b, now + 90, NULL), job);
	assert_int_equal(heartbeat(f, b, job, 2, "bench", 50, now + 100, NULL, NULL), 0);
	finish(f, b, job, 2, now + 110);
	assert_state(f, job, "done");
	assert_int_equal(count_rows(f, "SELECT count(*) FROM results"), 1);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM attempts WHERE job_id = ?1"
				 " AND outcome = 'expired'", STORE_ARGS(STORE_INT(job))), 1);
}

/* kill -9 of the controller mid-run: the store is reopened after longer
 * than a lease, the sweep requeues everything, and every agent's spooled
 * result arrives (some twice, as retries do): each recorded once. */
static void test_controller_restart(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	int64_t agents[3], jobs[3], first, now = T0 + 1000;
	const char *classes[] = { "intel", "amd", "arm" };
	const char *vendors[] = { "intel", "amd", "arm" };
	const char *arches[] = { "x86_64", "x86_64", "aarch64" };
	int64_t run = add_run(f, add_series(f, 3, T0), "new", T0);

	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "%s-1", vendors[i]);
		agents[i] = add_agent(f, name, vendors[i], arches[i]);
		jobs[i] = add_job(f, run, "perf", classes[i], T0 + i);
	}
	first = add_job(f, run, "perf-2", "intel", T0 + 10);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(lease(f, agents[i], now, NULL), jobs[i]);
		assert_int_equal(heartbeat(f, agents[i], jobs[i], 1, "bench", 50, now + 10, NULL,
					   NULL), 0);
	}
	/* The controller dies without closing anything. */
	store_close(f->st);
	f->st = NULL;
	now += 600;
	if (store_open(&f->st, f->db, &err) < 0)
		fail_msg("reopen: %s", err.msg);
	expire(f, now, MAX_ATTEMPTS, 3, 0);
	/* Agent 0 heartbeats first and takes its lease back; the others
	 * deliver straight away, agent 1 twice. */
	assert_int_equal(heartbeat(f, agents[0], jobs[0], 1, "bench", 90, now + 1, NULL, NULL), 0);
	for (int i = 0; i < 3; i++)
		finish(f, agents[i], jobs[i], 1, now + 2);
	assert_int_equal(result_rc(f, agents[1], jobs[1], 1, "ok", DIGEST_A, now + 3, 0, PG_OK),
			 SCHED_RESULT_DUPLICATE);
	for (int i = 0; i < 3; i++) {
		assert_state(f, jobs[i], "done");
		assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM results WHERE job_id = ?1",
					 STORE_ARGS(STORE_INT(jobs[i]))), 1);
	}
	/* Nothing was leased twice; the remaining job is still there. */
	assert_int_equal(count_rows(f, "SELECT count(*) FROM attempts"), 3);
	assert_int_equal(lease(f, agents[0], now + 4, NULL), first);
}

/*
 * The API's writer runs a batch of requests in one transaction, each under
 * a savepoint: requests see each other's changes, one that fails undoes
 * only itself, and nothing holds before the commit.
 */
static void test_batch_in_one_transaction(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t b = add_agent(f, "intel-b", "intel", "x86_64");
	struct pg_err err = PG_ERR_INIT;
	struct sched_lease la, lb, again;
	int64_t job;
	bool cancel = true;

	add_workload(f, 2, "new", "intel", 2, T0, &job);
	assert_int_equal(store_begin(f->st, &err), 0);
	/* Two leases in one transaction: two jobs, one each. */
	assert_int_equal(store_savepoint(f->st, &err), 0);
	assert_int_equal(sched_lease_tx(f->st, a, &f->ps, T0 + 10, LEASE, &la, &err), 1);
	assert_int_equal(store_release(f->st, &err), 0);
	assert_int_equal(store_savepoint(f->st, &err), 0);
	assert_int_equal(sched_lease_tx(f->st, b, &f->ps, T0 + 10, LEASE, &lb, &err), 1);
	assert_int_equal(store_release(f->st, &err), 0);
	assert_int_not_equal(la.job_id, lb.job_id);
	/* And a's second lease sees its first: it holds a job. */
	assert_int_equal(store_savepoint(f->st, &err), 0);
	assert_int_equal(sched_lease_tx(f->st, a, &f->ps, T0 + 11, LEASE, &again, &err), 0);
	assert_int_equal(again.held_job_id, la.job_id);
	assert_int_equal(store_release(f->st, &err), 0);
	/* b's heartbeat for a's job fails and is rolled back to its
	 * savepoint; a's heartbeat after it stands. */
	assert_int_equal(store_savepoint(f->st, &err), 0);
	assert_int_equal(sched_heartbeat_tx(f->st, b, la.job_id, 1, "build", 5, T0 + 12, LEASE,
					    &cancel, &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_int_equal(store_rollback_to(f->st, &err), 0);
	assert_true(store_in_tx(f->st));
	/* A result that fails at its second sample, after writing the
	 * results row and the first one: rolled back to its savepoint. */
	assert_int_equal(store_savepoint(f->st, &err), 0);
	{
		const struct sched_sample twice[] = {
			{ "base", "mempool", "rate", 0, 1.0, "Mops" },
			{ "base", "mempool", "rate", 0, 2.0, "Mops" },
		};
		const struct sched_result_in res = {
			.outcome = "ok", .samples = twice, .n_samples = 2,
			.digest_hex = "00112233445566778899aabbccddeeff",
		};
		enum sched_result_status status;

		assert_int_equal(sched_result_tx(f->st, a, la.job_id, 1, &res, T0 + 12,
						 MAX_ATTEMPTS, &status, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM results", NULL, 0), 1);
	}
	assert_int_equal(store_rollback_to(f->st, &err), 0);
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM results", NULL, 0), 0);
	assert_int_equal(store_savepoint(f->st, &err), 0);
	assert_int_equal(sched_heartbeat_tx(f->st, a, la.job_id, 1, "build", 5, T0 + 12, LEASE,
					    &cancel, &err), 0);
	assert_false(cancel);
	assert_int_equal(store_release(f->st, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_state(f, la.job_id, "running");
	assert_state(f, lb.job_id, "leased");
	assert_int_equal(sfx_int(f->st, "SELECT lease_expires FROM jobs WHERE id = ?1",
				 STORE_ARGS(STORE_INT(la.job_id))), T0 + 12 + LEASE);

	/* A batch rolled back leaves nothing: the lease did not happen. */
	add_workload(f, 2, "new", "intel", 1, T0 + 20, NULL);
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_savepoint(f->st, &err), 0);
	assert_int_equal(sched_result_tx(f->st, a, la.job_id, 1,
					 &(struct sched_result_in){ .outcome = "ok",
						 .digest_hex = "00112233445566778899aabbccddeeff" },
					 T0 + 30, MAX_ATTEMPTS, &(enum sched_result_status){ 0 },
					 &err), 0);
	assert_int_equal(store_release(f->st, &err), 0);
	store_rollback(f->st);
	assert_false(store_in_tx(f->st));
	assert_state(f, la.job_id, "running");
	assert_int_equal(sfx_int(f->st, "SELECT count(*) FROM results", NULL, 0), 0);
	sched_lease_release(&la);
	sched_lease_release(&lb);
	sched_lease_release(&again);
}

/* ---- runs and rounds (sched_plan.c) -------------------------------------- */

/* The planner's and the verdict pass's transitions, as they make them: a
 * run and its job created in one transaction, the job's follow-up round
 * pinned to its host, a follow-up given up, the run finished. */
static void test_runs_and_rounds(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t b = add_agent(f, "intel-b", "intel", "x86_64");
	int64_t series = add_series(f, 1, T0), run = 0, job = 0, other = 0, bad = -1;
	struct sched_run_new rn = {
		.series_id = series, .reason = "new", .tree = "main", .branch = "main",
		.base_commit = "0123456789abcdef0123456789abcdef01234567",
	};
	struct pg_err err = PG_ERR_INIT;
	bool changed = true;
	char text[256];

	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(sched_run_add_tx(f->st, &rn, T0, &run, &err), 0);
	assert_int_equal(sched_job_add_tx(f->st, run, "c1", "intel", "release",
					  "{\"repetitions\":5}", 0, T0, &job, &err), 0);
	assert_int_equal(sched_job_add_tx(f->st, run, "c2", "intel", "release",
					  "{\"repetitions\":5}", 0, T0 + 1, &other, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_true(run > 0 && job > 0 && other == job + 1);
	sfx_text(f->st, "SELECT state || ',' || reason || ',' || coalesce(recheck_id, 'none')"
		 " FROM runs WHERE id = ?1", run, text, sizeof(text));
	assert_string_equal(text, "planned,new,none");
	assert_state(f, job, "queued");
	/* Bad input is refused and writes nothing. */
	rn.base_commit = NULL;
	assert_int_equal(sched_run_add_tx(f->st, &rn, T0, &bad, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(bad, 0);
	assert_int_equal(sched_job_add_tx(f->st, 0, "c1", "intel", "release", "{}", 0, T0, NULL,
					  &err), -1);
	assert_int_equal(count_rows(f, "SELECT count(*) FROM jobs"), 2);

	/* A job that is not done cannot get a follow-up round. */
	assert_int_equal(sched_job_requeue_pinned_tx(f->st, job, "{}", a, "round 2", true, &err),
			 -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_int_equal(lease(f, a, T0 + 10, NULL), job);
	finish(f, a, job, 1, T0 + 20);
	assert_state(f, job, "done");
	assert_int_equal(sched_job_requeue_pinned_tx(f->st, job, "{\"round\":2}", a,
						     "follow-up round 2", true, &err), 0);
	sfx_text(f->st, "SELECT state || ',' || priority || ',' || pin_agent_id || ',' ||"
		 " coalesce(agent_id, 'none') || ',' || outcome_detail || ',' || spec"
		 " FROM jobs WHERE id = ?1", job, text, sizeof(text));
	{
		char want[128];

		snprintf(want, sizeof(want), "queued,1,%lld,none,follow-up round 2,{\"round\":2}",
			 (long long)a);
		assert_string_equal(text, want);
	}
	/* Pinned: the other host takes the other job, not the follow-up,
	 * although the follow-up now goes first. */
	assert_int_equal(lease(f, b, T0 + 30, NULL), other);
	assert_int_equal(lease(f, a, T0 + 31, NULL), job);
	finish(f, a, job, 2, T0 + 40);
	/* A later round keeps the priority its first follow-up got. */
	assert_int_equal(sched_job_requeue_pinned_tx(f->st, job, "{\"round\":3}", a, NULL, false,
						     &err), 0);
	assert_int_equal(sfx_int(f->st, "SELECT priority FROM jobs WHERE id = ?1",
				 STORE_ARGS(STORE_INT(job))), 1);
	/* Given up: done as it stands, unpinned; a second give-up changes
	 * nothing. */
	assert_int_equal(sched_job_give_up_tx(f->st, job, "ok", "agent intel-a is disabled",
					      T0 + 50, &changed, &err), 0);
	assert_true(changed);
	sfx_text(f->st, "SELECT state || ',' || outcome || ',' || outcome_detail || ',' ||"
		 " finished_at || ',' || coalesce(pin_agent_id, 'none') FROM jobs WHERE id = ?1",
		 job, text, sizeof(text));
	{
		char want[128];

		snprintf(want, sizeof(want), "done,ok,agent intel-a is disabled,%lld,none",
			 (long long)(T0 + 50));
		assert_string_equal(text, want);
	}
	assert_int_equal(sched_job_give_up_tx(f->st, job, "ok", "again", T0 + 51, &changed,
					      &err), 0);
	assert_false(changed);

	/* The run ends once; a cancelled run is never finished. */
	assert_int_equal(sched_run_finish_tx(f->st, run, T0 + 60, &changed, &err), 0);
	assert_true(changed);
	assert_int_equal(sched_run_finish_tx(f->st, run, T0 + 61, &changed, &err), 0);
	assert_false(changed);
	sfx_text(f->st, "SELECT state || ',' || finished_at FROM runs WHERE id = ?1", run, text,
		 sizeof(text));
	{
		char want[64];

		snprintf(want, sizeof(want), "done,%lld", (long long)(T0 + 60));
		assert_string_equal(text, want);
	}
	run = add_run(f, series, "recheck", T0 + 70);
	assert_int_equal(sched_cancel_run(f->st, run, "superseded", T0 + 71, NULL, &err), 0);
	assert_int_equal(sched_run_finish_tx(f->st, run, T0 + 72, &changed, &err), 0);
	assert_false(changed);
}

/* The pins of cancelled jobs go; a live job's pin stays until cleared. */
static void test_unpin_and_enable(void **state)
{
	struct fx *f = *state;
	int64_t a = add_agent(f, "intel-a", "intel", "x86_64");
	int64_t run = add_run(f, add_series(f, 2, T0), "new", T0);
	int64_t j1 = add_job(f, run, "c1", "intel", T0), j2 = add_job(f, run, "c2", "intel", T0);
	struct pg_err err = PG_ERR_INIT;

	sfx_sql(f->st, "UPDATE jobs SET pin_agent_id = ?1", STORE_ARGS(STORE_INT(a)));
	assert_int_equal(sched_cancel_job(f->st, j1, "cancelled by admin", T0 + 1, NULL, &err), 0);
	assert_int_equal(sched_job_unpin(f->st, 0, &err), 0);
	assert_int_equal(count_rows(f, "SELECT count(*) FROM jobs WHERE pin_agent_id IS NULL"), 1);
	assert_int_equal(sfx_int(f->st, "SELECT pin_agent_id FROM jobs WHERE id = ?1",
				 STORE_ARGS(STORE_INT(j2))), a);
	assert_int_equal(sched_job_unpin(f->st, j2, &err), 0);
	assert_int_equal(count_rows(f, "SELECT count(*) FROM jobs WHERE pin_agent_id IS NULL"), 2);

	/* A disabled agent leases nothing; enabled again, it does. */
	assert_int_equal(sched_agent_enable(f->st, "intel-a", false, &err), 0);
	assert_int_equal(count_rows(f, "SELECT enabled FROM agents WHERE name = 'intel-a'"), 0);
	assert_int_equal(sched_agent_enable(f->st, "intel-a", true, &err), 0);
	assert_int_equal(lease(f, a, T0 + 2, NULL), j2);
	assert_int_equal(sched_agent_enable(f->st, "no-such", true, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_agent_add_and_lookup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent_update, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_matches_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_one_job_per_agent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_oldest_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fair_recheck_not_starved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fair_many_agents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heartbeat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expire_requeue_then_give_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_result_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_result_infra_error_requeues, setup, teardown),
		cmocka_unit_test_setup_teardown(test_result_after_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heartbeat_takes_lease_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_run_and_series, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent_killed_mid_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_controller_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_in_one_transaction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs_and_rounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unpin_and_enable, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
