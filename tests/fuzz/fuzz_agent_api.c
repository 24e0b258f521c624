/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the bodies the controller's API reads from agents
 * and operators (controller/api_int.h): register, lease, heartbeat,
 * result, cancel and recheck bodies, and the query of a log upload.  The
 * first byte picks which; the rest is the body (for the query: attempt,
 * stage and offset separated by NUL bytes).  Any bytes must parse or be
 * refused with an error, never a sanitizer report, and what parses must
 * be within the bounds the store relies on.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api_auth.h"
#include "api_int.h"
#include "err.h"
#include "json.h"
#include "profile.h"
#include "sched.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The repository's profiles: the contexts a recheck may name. */
static struct profile_set profiles;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct pg_err err = PG_ERR_INIT;

	if (profile_set_load_dir(&profiles, PG_SRCDIR "/profiles", &err) != 0 ||
	    profiles.n_contexts == 0)
		abort();
	return 0;
}

/* "a,b": each a context of the profiles, none twice. */
static void check_contexts(const char *list)
{
	char *copy = strdup(list), *save = NULL, *name;
	size_t n = 0;

	if (!copy || !*copy)
		abort();
	for (name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		if (!profile_find_context(&profiles, name))
			abort();
		n++;
	}
	if (n == 0 || n > profiles.n_contexts)
		abort();
	free(copy);
}

static void refused(int rc, const struct pg_err *err)
{
	if (rc != -1 || err->code == PG_OK || !err->msg[0])
		abort();
}

static void json_ok(const char *s, size_t max)
{
	cJSON *j = NULL;

	if (!s)
		return;
	if (strlen(s) > max || pg_json_parse(s, strlen(s), &j, NULL) != 0 || !cJSON_IsObject(j))
		abort();
	cJSON_Delete(j);
}

static void check_register(const struct api_op *op)
{
	if (op->n_labels > SCHED_MAX_LABELS || (op->n_labels && !op->has_labels))
		abort();
	for (size_t i = 0; i < op->n_labels; i++)
		if (!op->keys[i] || !op->values[i])
			abort();
	json_ok(op->facts, SCHED_FACTS_MAX);
}

static void check_result(const struct api_op *op, const char *body, size_t len)
{
	struct api_op again;
	struct pg_err err = PG_ERR_INIT;

	if (op->attempt < 1 || op->attempt > INT32_MAX || !op->res.outcome)
		abort();
	if (op->res.detail && strlen(op->res.detail) > SCHED_TEXT_MAX)
		abort();
	if (op->res.n_samples > SCHED_MAX_SAMPLES || (op->res.n_samples && !op->res.samples))
		abort();
	for (size_t i = 0; i < op->res.n_samples; i++) {
		const struct sched_sample *s = &op->res.samples[i];

		if (strcmp(s->side, "base") && strcmp(s->side, "patched"))
			abort();
		if (!s->benchmark || !s->metric || s->repetition < 0)
			abort();
	}
	json_ok(op->res.fingerprint_json, SCHED_FINGERPRINT_MAX);
	if (strlen(op->digest) != API_SHA256_HEX)
		abort();
	for (size_t i = 0; i < API_SHA256_HEX; i++)
		if (!isxdigit((unsigned char)op->digest[i]))
			abort();
	/* The same bytes, the same digest: how a retried upload is known. */
	memset(&again, 0, sizeof(again));
	if (api_parse_result(body, len, &again, &err) != 0 || strcmp(again.digest, op->digest))
		abort();
	api_op_release(&again);
}

static void logs_query(const char *p, size_t n, struct api_op *op)
{
	struct pg_err err = PG_ERR_INIT;
	char *s = malloc(n + 2), *stage, *offset;
	int rc;

	if (!s)
		abort();
	memcpy(s, p, n);
	s[n] = s[n + 1] = '\0';
	stage = s + strlen(s) + 1;
	offset = stage <= s + n ? stage + strlen(stage) + 1 : NULL;
	if (offset && offset > s + n)
		offset = NULL;
	rc = api_parse_logs_query(s, stage, offset, op, &err);
	if (rc != 0) {
		refused(rc, &err);
	} else {
		if (op->attempt < 1 || op->offset < -1 || op->offset > API_LOG_MAX_BYTES ||
		    !op->log_stage[0] || op->log_stage[0] == '.' ||
		    strlen(op->log_stage) > API_STAGE_MAX || strcmp(op->log_stage, stage))
			abort();
		for (const char *c = op->log_stage; *c; c++)
			if (!isalnum((unsigned char)*c) && !strchr("_.-", *c))
				abort();
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_op op;
	struct pg_err err = PG_ERR_INIT;
	const char *body = (const char *)data + 1;
	size_t len;
	int rc;

	if (!size)
		return 0;
	len = size - 1;
	memset(&op, 0, sizeof(op));
	api_op_reset(&op);
	switch (data[0] % 7) {
	case 0:
		rc = api_parse_register(body, len, &op, &err);
		if (rc == 0)
			check_register(&op);
		break;
	case 1:
		rc = api_parse_lease(body, len, &op, &err);
		if (rc == 0 && (op.wait_s < 0 || op.wait_s > API_WAIT_MAX_S))
			abort();
		break;
	case 2:
		rc = api_parse_heartbeat(body, len, &op, &err);
		if (rc == 0 && (op.attempt < 1 || op.progress < -1 || op.progress > 100))
			abort();
		break;
	case 3:
		rc = api_parse_result(body, len, &op, &err);
		if (rc == 0)
			check_result(&op, body, len);
		break;
	case 4:
		rc = api_parse_cancel(body, len, &op, &err);
		if (rc == 0 && op.reason && (!*op.reason || strlen(op.reason) > SCHED_TEXT_MAX))
			abort();
		break;
	case 5:
		rc = api_parse_recheck(body, len, &profiles, &op, &err);
		if (rc == 0)
			check_contexts(op.contexts);
		break;
	default:
		logs_query(body, len, &op);
		rc = 0;
		break;
	}
	if (rc != 0)
		refused(rc, &err);
	api_op_release(&op);
	return 0;
}
