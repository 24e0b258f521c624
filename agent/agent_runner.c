/* SPDX-License-Identifier: MIT */
/* The built-in runner: the protocol end to end, with no work inside. */
#include "agent_runner.h"

#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "json.h"
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

int agent_runner_builtin(const struct agent_run *run, struct agent_result *res,
			 struct pg_err *err)
{
	struct pg_buf log = PG_BUF_INIT(4096);
	double seconds = AGENT_BUILTIN_SECONDS_DEFAULT;
	int64_t start, total_ms, elapsed;
	int rc = -1;

	if (pg_json_get_double(run->job->json, "builtin_seconds", false, 0,
			       AGENT_BUILTIN_SECONDS_MAX, &seconds, err) < 0) {
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

	start = pg_time_mono_ms();
	while ((elapsed = pg_time_mono_ms() - start) < total_ms) {
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
