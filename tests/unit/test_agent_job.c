/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/agent_job.c and agent/agent_runner.c: a lease's job
 * fields, the result body (the bytes spooled and re-sent), and the
 * built-in runner through its hooks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent_job.h"
#include "agent_runner.h"
#include "timeutil.h"

static int parse(const char *text, struct agent_job *job, struct pg_err *err)
{
	cJSON *j = cJSON_Parse(text);

	assert_non_null(j);
	return agent_job_parse(j, job, err);
}

static void test_job_parse(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct agent_job job;

	(void)state;
	assert_int_equal(parse("{\"id\": 41, \"attempt\": 2, \"lease_s\": 90, \"heartbeat_s\": 15, "
			       "\"tree\": \"dpdk\"}", &job, &err), 0);
	assert_int_equal(job.id, 41);
	assert_int_equal(job.attempt, 2);
	assert_int_equal(job.lease_s, 90);
	assert_int_equal(job.heartbeat_s, 15);
	assert_string_equal(cJSON_GetObjectItem(job.json, "tree")->valuestring, "dpdk");
	agent_job_release(&job);

	/* heartbeat_s: a third of the lease when absent, else the default. */
	assert_int_equal(parse("{\"id\": 1, \"attempt\": 1, \"lease_s\": 60}", &job, &err), 0);
	assert_int_equal(job.heartbeat_s, 20);
	agent_job_release(&job);
	assert_int_equal(parse("{\"id\": 1, \"attempt\": 1}", &job, &err), 0);
	assert_int_equal(job.heartbeat_s, AGENT_HEARTBEAT_S_DEFAULT);
	agent_job_release(&job);
	assert_int_equal(parse("{\"id\": 1, \"attempt\": 1, \"heartbeat_s\": 86400}", &job, &err), 0);
	assert_int_equal(job.heartbeat_s, AGENT_HEARTBEAT_S_MAX);
	agent_job_release(&job);

	/* Errors name the field; what was readable stays for the report. */
	assert_int_equal(parse("{\"id\": 7, \"attempt\": 3, \"heartbeat_s\": \"10\"}", &job, &err), -1);
	assert_string_equal(err.msg, "job: field 'heartbeat_s': expected an integer, got a string");
	assert_int_equal(job.id, 7);
	assert_int_equal(job.attempt, 3);
	agent_job_release(&job);
	assert_int_equal(parse("{\"id\": 7}", &job, &err), -1);
	assert_string_equal(err.msg, "job: field 'attempt': missing");
	assert_int_equal(job.id, 7);
	assert_int_equal(job.attempt, 0);
	agent_job_release(&job);
	assert_int_equal(parse("{\"id\": 0, \"attempt\": 1}", &job, &err), -1);
	assert_string_equal(err.msg, "job: field 'id': 0 is out of range [1, 9007199254740992]");
	agent_job_release(&job);
	assert_int_equal(parse("{\"id\": 1.5, \"attempt\": 1}", &job, &err), -1);
	agent_job_release(&job);
	assert_int_equal(parse("[1]", &job, &err), -1);
	assert_string_equal(err.msg, "job: not an object");
	agent_job_release(&job);
}

static void test_result_body(void **state)
{
	struct agent_result r = AGENT_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	char *body;

	(void)state;
	/* No outcome yet: refused. */
	assert_null(agent_result_body(1, &r, &err));
	assert_non_null(strstr(err.msg, "unknown outcome"));
	assert_int_equal(agent_result_set(&r, AGENT_OUTCOME_OK, "built %d of %d", 2, 2), 0);
	body = agent_result_body(3, &r, &err);
	assert_string_equal(body, "{\"attempt\":3,\"outcome\":\"ok\",\"detail\":\"built 2 of 2\","
			    "\"fingerprint\":{},\"samples\":[]}");
	free(body);
	/* The same result gives the same bytes: a re-upload is a duplicate. */
	r.fingerprint = cJSON_Parse("{\"model\":\"ARM Neoverse-N1\",\"kernel\":\"6.1.0\"}");
	r.samples = cJSON_Parse("[{\"side\":\"base\",\"benchmark\":\"mempool\",\"metric\":\"rate\","
				"\"repetition\":1,\"value\":1.5e9,\"unit\":\"ops/s\"}]");
	{
		char *a = agent_result_body(3, &r, &err), *b = agent_result_body(3, &r, &err);

		assert_string_equal(a, b);
		assert_non_null(strstr(a, "\"samples\":[{\"side\":\"base\""));
		assert_non_null(strstr(a, "\"fingerprint\":{\"model\":\"ARM Neoverse-N1\""));
		free(a);
		free(b);
	}
	for (const char *const *o = (const char *const[]){ "ok", "apply-failure",
		"base-build-failure", "patched-build-failure", "bench-failure", "infra-error",
		NULL }; *o; o++)
		assert_true(agent_outcome_ok(*o));
	assert_false(agent_outcome_ok("fail"));
	assert_false(agent_outcome_ok(NULL));
	r.outcome = "fail";
	assert_null(agent_result_body(3, &r, &err));
	agent_result_release(&r);
	assert_null(r.detail);
}

/* What the daemon's hooks saw. */
struct hooks {
	int stop_after_polls;	/* < 0: never */
	int polls;
	int progress_calls;
	int last_progress;
	int progress_went_down;
	char stage[64];
	int logs;
	char log[512];
};

static bool h_stopped(void *arg)
{
	struct hooks *h = arg;

	h->polls++;
	return h->stop_after_polls >= 0 && h->polls > h->stop_after_polls;
}

static void h_progress(void *arg, const char *stage, int pct)
{
	struct hooks *h = arg;

	if (pct < h->last_progress)
		h->progress_went_down = 1;
	h->last_progress = pct;
	h->progress_calls++;
	snprintf(h->stage, sizeof(h->stage), "%s", stage);
}

static void h_log(void *arg, const char *stage, const char *text, size_t len)
{
	struct hooks *h = arg;

	(void)stage;
	h->logs++;
	snprintf(h->log, sizeof(h->log), "%.*s", (int)len, text);
}

static int run_builtin(const char *job_text, struct hooks *h, struct agent_result *res,
		       struct pg_err *err)
{
	struct agent_facts facts;
	struct agent_job job;
	struct agent_run run;
	int rc;

	memset(&facts, 0, sizeof(facts));
	snprintf(facts.hostname, sizeof(facts.hostname), "lab-1");
	snprintf(facts.cpu.model, sizeof(facts.cpu.model), "ARM Neoverse-N1");
	snprintf(facts.cpu.vendor, sizeof(facts.cpu.vendor), "arm");
	snprintf(facts.arch, sizeof(facts.arch), "aarch64");
	assert_int_equal(parse(job_text, &job, err), 0);
	memset(&run, 0, sizeof(run));
	run.job = &job;
	run.facts = &facts;
	run.work_dir = "/nonexistent";
	run.stopped = h_stopped;
	run.progress = h_progress;
	run.log = h_log;
	run.arg = h;
	rc = agent_runner_builtin(&run, res, err);
	agent_job_release(&job);
	return rc;
}

static void test_builtin_runner(void **state)
{
	struct agent_result res = AGENT_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct hooks h;
	int64_t t0;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.stop_after_polls = -1;
	t0 = pg_time_mono_ms();
	assert_int_equal(run_builtin("{\"id\": 4, \"attempt\": 1, \"builtin_seconds\": 0.35}", &h,
				     &res, &err), 0);
	assert_true(pg_time_mono_ms() - t0 >= 350);
	assert_string_equal(res.outcome, AGENT_OUTCOME_OK);
	assert_string_equal(res.detail, AGENT_BUILTIN_DETAIL);
	/* Never a made-up number. */
	assert_null(res.samples);
	assert_string_equal(cJSON_GetObjectItem(res.fingerprint, "runner")->valuestring, "built-in");
	assert_string_equal(cJSON_GetObjectItem(res.fingerprint, "model")->valuestring,
			    "ARM Neoverse-N1");
	assert_string_equal(h.stage, "run");
	assert_int_equal(h.last_progress, 100);
	assert_false(h.progress_went_down);
	assert_true(h.polls >= 3);
	assert_int_equal(h.logs, 1);
	assert_non_null(strstr(h.log, "job 4 attempt 1: nothing is built or measured"));
	agent_result_release(&res);

	/* Stopped (cancel, or a second SIGTERM): ends within a poll, no result. */
	memset(&h, 0, sizeof(h));
	h.stop_after_polls = 2;
	t0 = pg_time_mono_ms();
	assert_int_equal(run_builtin("{\"id\": 4, \"attempt\": 1, \"builtin_seconds\": 60}", &h,
				     &res, &err), 1);
	assert_true(pg_time_mono_ms() - t0 < 1000);
	assert_null(res.outcome);

	/* A malformed builtin_seconds fails the job (the daemon reports
	 * infra-error with this message). */
	memset(&h, 0, sizeof(h));
	h.stop_after_polls = -1;
	assert_int_equal(run_builtin("{\"id\": 4, \"attempt\": 1, \"builtin_seconds\": -1}", &h,
				     &res, &err), -1);
	assert_string_equal(err.msg, "built-in runner: job: field 'builtin_seconds': -1 is out of "
			    "range [0, 86400]");
	assert_int_equal(h.logs, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_parse),
		cmocka_unit_test(test_result_body),
		cmocka_unit_test(test_builtin_runner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
