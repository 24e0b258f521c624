/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the lines run-one reads from the controller over
 * SSH (agent/agent_line.h, lib/runone.h): agent_line_parse() and
 * agent_line_job() on any bytes must parse or fail cleanly with an error,
 * without a sanitizer report, and what parses must keep to its contract.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent_line.h"
#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_line_in m = AGENT_LINE_IN_INIT;
	struct pg_err err = PG_ERR_INIT;
	cJSON *job;

	if (agent_line_parse((const char *)data, size, 4096, &m, &err) < 0) {
		if (err.code == PG_OK)
			abort();
	} else {
		switch (m.type) {
		case AGENT_LINE_ACK:
			if (m.job_id < 1 || m.attempt < 1 || (strcmp(m.status, "recorded") &&
			    strcmp(m.status, "duplicate") && strcmp(m.status, "acknowledged")))
				abort();
			break;
		case AGENT_LINE_REJECT:
			if (m.job_id < 1 || m.attempt < 1 || m.http_status < 400 ||
			    m.http_status > 599)
				abort();
			break;
		case AGENT_LINE_MBOX:
			if (m.has_data ? m.data.len > 4096 : !m.text)
				abort();
			break;
		default:
			break;
		}
	}
	agent_line_in_release(&m);
	pg_err_clear(&err);
	job = agent_line_job((const char *)data, size, &err);
	if (job ? !cJSON_IsObject(job) : err.code == PG_OK)
		abort();
	cJSON_Delete(job);
	return 0;
}
