/* SPDX-License-Identifier: MIT */
/* A leased job's protocol fields, and the result body. */
#include "agent_job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jobspec.h"
#include "json.h"

#define AGENT_ID_MAX 9007199254740992LL
#define AGENT_LEASE_S_MAX 86400

int agent_job_parse(cJSON *json, struct agent_job *job, struct pg_err *err)
{
	int64_t id = 0, attempt = 0, lease_s = 0, hb = 0;

	memset(job, 0, sizeof(*job));
	job->json = json;
	if (!cJSON_IsObject(json))
		return pg_err_set(err, PG_EINVAL, "job: not an object");
	if (pg_json_get_int(json, JS_LEASE_JOB, true, 1, AGENT_ID_MAX, &id, err) < 0)
		goto bad;
	job->id = id;
	if (pg_json_get_int(json, JS_LEASE_ATTEMPT, true, 1, AGENT_ID_MAX, &attempt, err) < 0)
		goto bad;
	job->attempt = attempt;
	if (pg_json_get_int(json, JS_LEASE_S, false, 1, AGENT_LEASE_S_MAX, &lease_s, err) < 0 ||
	    pg_json_get_int(json, JS_LEASE_HEARTBEAT_S, false, 1, AGENT_LEASE_S_MAX, &hb, err) < 0)
		goto bad;
	job->lease_s = lease_s;
	if (hb == 0)
		hb = lease_s >= 3 ? lease_s / 3 : AGENT_HEARTBEAT_S_DEFAULT;
	job->heartbeat_s = hb > AGENT_HEARTBEAT_S_MAX ? AGENT_HEARTBEAT_S_MAX : hb;
	return 0;
bad:
	pg_err_prefix(err, "job");
	return -1;
}

void agent_job_release(struct agent_job *job)
{
	cJSON_Delete(job->json);
	memset(job, 0, sizeof(*job));
}

static const char *const agent_outcomes[] = {
	AGENT_OUTCOME_OK, AGENT_OUTCOME_APPLY, AGENT_OUTCOME_BASE_BUILD,
	AGENT_OUTCOME_PATCHED_BUILD, AGENT_OUTCOME_BENCH, AGENT_OUTCOME_INFRA,
};

bool agent_outcome_ok(const char *outcome)
{
	for (size_t i = 0; outcome && i < sizeof(agent_outcomes) / sizeof(agent_outcomes[0]); i++)
		if (strcmp(outcome, agent_outcomes[i]) == 0)
			return true;
	return false;
}

int agent_result_set(struct agent_result *r, const char *outcome, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		pg_buf_release(&b);
		return -1;
	}
	free(r->detail);
	r->detail = pg_buf_detach(&b, NULL);
	r->outcome = outcome;
	return r->detail ? 0 : -1;
}

void agent_result_release(struct agent_result *r)
{
	free(r->detail);
	cJSON_Delete(r->fingerprint);
	cJSON_Delete(r->samples);
	memset(r, 0, sizeof(*r));
}

char *agent_result_body(int64_t attempt, const struct agent_result *r, struct pg_err *err)
{
	cJSON *o = NULL, *fp, *samples;
	char *text = NULL;

	if (!agent_outcome_ok(r->outcome)) {
		pg_err_set(err, PG_EINVAL, "result: unknown outcome '%s'",
			   r->outcome ? r->outcome : "(none)");
		return NULL;
	}
	o = cJSON_CreateObject();
	fp = r->fingerprint ? cJSON_Duplicate(r->fingerprint, 1) : cJSON_CreateObject();
	samples = r->samples ? cJSON_Duplicate(r->samples, 1) : cJSON_CreateArray();
	if (!o || !cJSON_AddNumberToObject(o, "attempt", (double)attempt) ||
	    !cJSON_AddStringToObject(o, "outcome", r->outcome) ||
	    !cJSON_AddStringToObject(o, "detail", r->detail ? r->detail : "") ||
	    !cJSON_AddItemToObject(o, "fingerprint", fp)) {
		cJSON_Delete(fp);
		cJSON_Delete(samples);
		goto out;
	}
	if (!cJSON_AddItemToObject(o, "samples", samples)) {
		cJSON_Delete(samples);
		goto out;
	}
	text = pg_json_print(o, false);
out:
	if (!text)
		pg_err_set(err, PG_ENOMEM, "result: out of memory");
	cJSON_Delete(o);
	return text;
}
