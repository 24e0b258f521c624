/* SPDX-License-Identifier: MIT */
#ifndef AGENT_JOB_H
#define AGENT_JOB_H

/*
 * A leased job as the agent holds it, and the result it sends back.
 *
 * The lease answer's "job" object carries the protocol fields ("id",
 * "attempt", "lease_s", "heartbeat_s", "lease_expires", ...) next to the
 * job spec ("tree", "series", "build", "benchmarks", "repetitions", ...).
 * This module reads the protocol fields; the spec is the runner's.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define AGENT_HEARTBEAT_S_DEFAULT 10
#define AGENT_HEARTBEAT_S_MAX 3600

struct agent_job {
	int64_t id;		/* 0 when the job has none */
	int64_t attempt;	/* 0 when the job has none */
	int64_t lease_s;	/* 0 when not given */
	/* Seconds between heartbeats: the job's "heartbeat_s", else a
	 * third of "lease_s", else AGENT_HEARTBEAT_S_DEFAULT; always in
	 * [1, AGENT_HEARTBEAT_S_MAX]. */
	int64_t heartbeat_s;
	cJSON *json;		/* the whole "job" object, owned */
};

/*
 * Take the lease's "job" object (ownership passes to job, also on
 * failure) and read its protocol fields: "id" and "attempt" integers in
 * [1, 2^53] (required), "lease_s" and "heartbeat_s" integers in [1, 86400]
 * (optional).  Returns 0, or -1 with err naming the field; job->id and
 * job->attempt are still set when they were readable, so that the caller
 * can tell the controller which attempt it could not run.
 */
int agent_job_parse(cJSON *json, struct agent_job *job, struct pg_err *err);

void agent_job_release(struct agent_job *job);

/* The outcomes the controller accepts. */
#define AGENT_OUTCOME_OK "ok"
#define AGENT_OUTCOME_APPLY "apply-failure"
#define AGENT_OUTCOME_BASE_BUILD "base-build-failure"
#define AGENT_OUTCOME_PATCHED_BUILD "patched-build-failure"
#define AGENT_OUTCOME_BENCH "bench-failure"
#define AGENT_OUTCOME_INFRA "infra-error"

bool agent_outcome_ok(const char *outcome);

/* What a runner produced.  Owned by the struct; release with
 * agent_result_release(). */
struct agent_result {
	const char *outcome;	/* one of AGENT_OUTCOME_*; NULL until set */
	char *detail;		/* malloc'd, may be NULL */
	cJSON *fingerprint;	/* an object, or NULL for {} */
	cJSON *samples;		/* an array of {"side", "benchmark", "metric",
				 * "repetition", "value", "unit"}, or NULL for [] */
};

#define AGENT_RESULT_INIT { NULL, NULL, NULL, NULL }

/* Set outcome and a formatted detail (replacing earlier ones).  Returns 0,
 * or -1 when out of memory. */
int agent_result_set(struct agent_result *r, const char *outcome, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void agent_result_release(struct agent_result *r);

/*
 * The body of POST /jobs/ID/result: {"attempt", "outcome", "detail",
 * "fingerprint", "samples"}, compact.  These are the bytes spooled and
 * sent on every retry, so that the controller's per-attempt digest sees
 * the same result each time.  Returns malloc'd text, or NULL with err
 * (unknown outcome, out of memory).
 */
char *agent_result_body(int64_t attempt, const struct agent_result *r, struct pg_err *err);

#endif
