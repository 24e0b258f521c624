/* SPDX-License-Identifier: MIT */
/* The built-in runner: the protocol end to end, with no work inside. */
#include "agent_runner.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "buf.h"
#include "fmt.h"
#include "jobspec.h"
#include "json.h"
#include "proc.h"
#include "timeutil.h"

#define BUILTIN_POLL_MS 100

cJSON *agent_fingerprint_host(const struct agent_facts *facts, const char *runner)
{
	cJSON *o = agent_facts_to_json(facts);

	if (!o)
		return NULL;
	if (!cJSON_AddStringToObject(o, "runner", runner)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/*
 * "builtin_spawn": wait by running `sleep SECONDS` as a child, in its own
 * process group with run->stopped() as its cancel callback, the way the
 * DPDK runner runs builds and benchmarks: tests see that a stopped job
 * leaves no process behind.  0 done, 1 stopped, -1 (err).
 */
static int builtin_spawn_wait(const struct agent_run *run, double seconds, struct pg_err *err)
{
	struct pg_proc p = PG_PROC_INIT;
	char arg[32], desc[PG_PROC_DESC_MAX];
	const char *argv[] = { "sleep", arg, NULL };
	int rc = -1;

	if (pg_fmt(arg, sizeof(arg), "%.3f", seconds) < 0)
		return pg_err_set(err, PG_EINVAL, "built-in runner: bad builtin_seconds");
	p.argv = argv;
	p.tail_max = 1024;
	p.cancel_cb = run->stopped;
	p.cancel_arg = run->arg;
	p.kill_grace_ms = 1000;
	if (pg_proc_run(&p, err) < 0) {
		pg_err_prefix(err, "built-in runner");
		goto out;
	}
	if (p.cancelled) {
		rc = 1;
		goto out;
	}
	if (!pg_proc_succeeded(&p)) {
		pg_err_set(err, PG_EIO, "built-in runner: sleep %s: %s: %s", arg,
			   pg_proc_describe(&p, desc, sizeof(desc)), pg_buf_str(&p.tail));
		goto out;
	}
	rc = 0;
out:
	pg_proc_release(&p);
	return rc;
}

/* The job's series mbox, when it names one ("series"."mbox_url"): fetched
 * through run->fetch and told in the log by size and SHA-256.  0, or -1
 * (err) when the fetch fails, as the DPDK runner would fail. */
static int builtin_fetch(const struct agent_run *run, struct pg_err *err)
{
	const char *url = cJSON_GetStringValue(pg_json_path(run->job->json,
							    JS_SERIES "." JS_SERIES_MBOX_URL));
	struct pg_buf mbox = PG_BUF_INIT(AGENT_BUILTIN_MBOX_MAX);
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	char line[256], hex[2 * EVP_MAX_MD_SIZE + 1] = "";
	int rc = -1;

	if (!url)
		return 0;
	if (run->fetch(run->arg, url, &mbox, err) < 0) {
		pg_err_prefix(err, "built-in runner: series mbox");
		goto out;
	}
	if (EVP_Digest(mbox.data ? mbox.data : "", mbox.len, d, &dlen, EVP_sha256(), NULL) != 1) {
		pg_err_set(err, PG_EIO, "built-in runner: SHA-256 failed");
		goto out;
	}
	for (unsigned int i = 0; i < dlen; i++)
		pg_fmt_cut(hex + 2 * i, sizeof(hex) - 2 * i, "%02x", d[i]);
	if (pg_fmt(line, sizeof(line), "series mbox: %zu bytes, sha256 %s (not applied)\n",
		   mbox.len, hex) < 0) {
		pg_err_set(err, PG_EINVAL, "built-in runner: log line too long");
		goto out;
	}
	run->log(run->arg, "run", line, strlen(line));
	rc = 0;
out:
	pg_buf_release(&mbox);
	return rc;
}

int agent_runner_builtin(const struct agent_run *run, struct agent_result *res,
			 struct pg_err *err)
{
	struct pg_buf log = PG_BUF_INIT(4096);
	double seconds = AGENT_BUILTIN_SECONDS_DEFAULT;
	int64_t start, total_ms, elapsed;
	bool spawn = false;
	int rc = -1, wrc;

	if (pg_json_get_double(run->job->json, "builtin_seconds", false, 0,
			       AGENT_BUILTIN_SECONDS_MAX, &seconds, err) < 0 ||
	    pg_json_get_bool(run->job->json, "builtin_spawn", false, &spawn, err) < 0) {
		pg_err_prefix(err, "built-in runner: job");
		goto out;
	}
	total_ms = (int64_t)(seconds * 1000.0);
	run->progress(run->arg, "run", 0);
	if (pg_buf_printf(&log, "perfgate-agent %s built-in runner on %s (%s, %s)\n"
			  "job %lld attempt %lld: nothing is built or measured; "
			  "waiting %.1f s in place of the work\n",
			  PG_VERSION, run->facts->hostname, run->facts->cpu.model,
			  run->facts->arch, (long long)run->job->id,
			  (long long)run->job->attempt, seconds) < 0) {
		pg_err_set(err, PG_ENOMEM, "built-in runner: out of memory");
		goto out;
	}
	run->log(run->arg, "run", log.data, log.len);
	/* A job of a series: its mbox fetched as the DPDK runner fetches it
	 * (nothing applied), so that the protocol's fetch is exercised. */
	if (builtin_fetch(run, err) < 0)
		goto out;

	if (spawn) {
		wrc = builtin_spawn_wait(run, seconds, err);
		if (wrc != 0) {
			rc = wrc;
			goto out;
		}
	}
	start = pg_time_mono_ms();
	while (!spawn && (elapsed = pg_time_mono_ms() - start) < total_ms) {
		if (run->stopped(run->arg)) {
			rc = 1;
			goto out;
		}
		run->progress(run->arg, "run", (int)(elapsed * 100 / total_ms));
		pg_sleep_ms(total_ms - elapsed < BUILTIN_POLL_MS ? total_ms - elapsed
								 : BUILTIN_POLL_MS, NULL);
	}
	if (run->stopped(run->arg)) {
		rc = 1;
		goto out;
	}
	run->progress(run->arg, "run", 100);
	res->fingerprint = agent_fingerprint_host(run->facts, "built-in");
	if (!res->fingerprint ||
	    agent_result_set(res, AGENT_OUTCOME_OK, "%s", AGENT_BUILTIN_DETAIL) < 0) {
		pg_err_set(err, PG_ENOMEM, "built-in runner: out of memory");
		goto out;
	}
	rc = 0;
out:
	pg_buf_release(&log);
	return rc;
}
