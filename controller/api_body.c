/* SPDX-License-Identifier: MIT */
/*
 * Request bodies: the parsed operation (struct api_op) and the JSON field
 * readers the endpoints' parsers share (api_agent.c, api_admin.c).  Pure
 * functions over a buffer, run on the HTTP threads.
 */
#include "api_int.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

void api_op_reset(struct api_op *op)
{
	memset(op, 0, sizeof(*op));
	op->progress = -1;
	op->offset = -1;
}

void api_op_release(struct api_op *op)
{
	cJSON_Delete(op->doc);
	free(op->keys);
	free(op->values);
	free(op->facts);
	free(op->samples);
	free(op->fingerprint);
	free(op->contexts);
	api_op_reset(op);
}

int api_parse_object(const char *body, size_t len, cJSON **doc, struct pg_err *err)
{
	*doc = NULL;
	if (len == 0) {
		*doc = cJSON_CreateObject();
		return *doc ? 0 : pg_err_set(err, PG_ENOMEM, "out of memory");
	}
	if (pg_json_parse(body, len, doc, err) < 0) {
		pg_err_prefix(err, "request body");
		return -1;
	}
	if (!cJSON_IsObject(*doc)) {
		pg_err_set(err, PG_EINVAL, "request body: expected a JSON object, got %s",
			   pg_json_type_name(*doc));
		cJSON_Delete(*doc);
		*doc = NULL;
		return -1;
	}
	return 0;
}

int api_get_string_or_null(const cJSON *o, const char *key, const char **out,
			   struct pg_err *err)
{
	if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key)))
		return 0;
	return pg_json_get_string(o, key, false, out, err);
}
