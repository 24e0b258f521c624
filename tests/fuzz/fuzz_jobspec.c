/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the job the agent leases (lib/jobspec.h), read as
 * the agent reads it before it runs anything: the protocol fields
 * (agent_job_parse()), the runner's check of the spec
 * (agent_runner_dpdk_check_spec()), the host class (hostgate.h) and each
 * benchmark (bench_def_from_json()).  The controller writes the spec, but
 * to the agent it is outside input.  When the first byte is odd, the rest
 * is a CPU list for hostgate_cpulist_parse() instead.  Any bytes must be
 * read or refused with an error, never a sanitizer report, and what is
 * read must be within the bounds the header promises.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "agent_job.h"
#include "bench_exec.h"
#include "err.h"
#include "hostgate.h"
#include "jobspec.h"
#include "json.h"
#include "log.h"
#include "runner_dpdk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	pg_log_set_levels("error");
	return 0;
}

static void refused(int rc, const struct pg_err *err)
{
	if (rc != -1 || err->code == PG_OK || !err->msg[0])
		abort();
}

static void cpulist(const uint8_t *p, size_t n)
{
	static bool set[HOSTGATE_MAX_CPUS];
	char *s = malloc(n + 1);
	int count, seen = 0;

	if (!s)
		abort();
	memcpy(s, p, n);
	s[n] = '\0';
	count = hostgate_cpulist_parse(s, set);
	if (count >= 0) {
		for (size_t i = 0; i < HOSTGATE_MAX_CPUS; i++)
			seen += set[i];
		if (seen != count)
			abort();
		if (hostgate_cpus_within(s, s) != 1)
			abort();
	} else if (count != -1 || hostgate_cpus_within(s, "0") != -1) {
		abort();
	}
	free(s);
}

static void benchmarks(const cJSON *spec)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(spec, JS_BENCHMARKS), *o;

	if (!cJSON_IsArray(arr))
		return;
	cJSON_ArrayForEach(o, arr) {
		struct bench_def d;
		struct pg_err err = PG_ERR_INIT;
		int rc;

		memset(&d, 0, sizeof(d));
		rc = bench_def_from_json(o, &d, &err);
		if (rc == 0) {
			if (!d.name || !d.program || !d.args || !d.env || !d.parser)
				abort();
			if (d.duration_s < 0 || d.warmup_runs < 0 || d.stop_after_lines < 0 ||
			    d.n_frame_sizes > PROFILE_MAX_FRAME_SIZES)
				abort();
		} else {
			refused(rc, &err);
		}
		bench_def_release(&d);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_job job;
	struct hostgate_class hc;
	struct pg_err err = PG_ERR_INIT;
	cJSON *spec = NULL, *copy;
	int rc;

	if (!size)
		return 0;
	if (data[0] & 1) {
		cpulist(data + 1, size - 1);
		return 0;
	}
	if (pg_json_parse((const char *)data + 1, size - 1, &spec, &err) != 0)
		return 0;
	copy = cJSON_Duplicate(spec, true);
	if (!copy)
		abort();
	memset(&job, 0, sizeof(job));
	rc = agent_job_parse(copy, &job, &err);
	if (rc == 0) {
		if (job.id < 1 || job.attempt < 1 || job.id > (1LL << 53) ||
		    job.attempt > (1LL << 53) || job.heartbeat_s < 1 ||
		    job.heartbeat_s > AGENT_HEARTBEAT_S_MAX || job.lease_s < 0 ||
		    job.lease_s > 86400)
			abort();
	} else {
		refused(rc, &err);
	}
	agent_job_release(&job);
	err = (struct pg_err)PG_ERR_INIT;
	rc = agent_runner_dpdk_check_spec(spec, &err);
	if (rc != 0)
		refused(rc, &err);
	memset(&hc, 0, sizeof(hc));
	err = (struct pg_err)PG_ERR_INIT;
	rc = hostgate_class_from_spec(spec, &hc, &err);
	if (rc == 0) {
		if (hc.memory_mb < 0 || hc.numa_node < -1)
			abort();
	} else {
		refused(rc, &err);
	}
	benchmarks(spec);
	cJSON_Delete(spec);
	return 0;
}
