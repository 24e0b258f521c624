/* SPDX-License-Identifier: MIT */
/* The controller API's endpoints, as the agent calls them. */
#include "agent_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"

#define PATH_LEN 256

bool agent_stage_ok(const char *stage)
{
	size_t n = strlen(stage);

	return n > 0 && n < AGENT_STAGE_MAX &&
	       strspn(stage, "abcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* POST a cJSON body (not consumed). */
static enum agent_answer proto_post_json(struct agent_conn *c, const char *path,
					 const cJSON *body, long timeout_ms,
					 const struct agent_stop *stop,
					 struct pg_http_response *resp, struct pg_err *err)
{
	enum agent_answer ans;
	char *text = pg_json_print(body, false);

	if (!text) {
		pg_err_set(err, PG_ENOMEM, "POST %s: out of memory", path);
		return AGENT_ANS_RETRY;
	}
	ans = agent_conn_post(c, path, "application/json", text, strlen(text), timeout_ms,
			      stop, resp, err);
	free(text);
	return ans;
}

/* Parse a 2xx answer's body as a JSON object; REFUSED when it is not. */
static enum agent_answer proto_answer_object(const char *path,
					     const struct pg_http_response *resp,
					     cJSON **root, struct pg_err *err)
{
	if (pg_json_parse(pg_buf_str(&resp->body), resp->body.len, root, err) < 0) {
		pg_err_prefix(err, "POST %s: HTTP %ld answer", path, resp->status);
		return AGENT_ANS_REFUSED;
	}
	if (!cJSON_IsObject(*root)) {
		pg_err_set(err, PG_EINVAL, "POST %s: HTTP %ld answer is %s, not an object", path,
			   resp->status, pg_json_type_name(*root));
		cJSON_Delete(*root);
		*root = NULL;
		return AGENT_ANS_REFUSED;
	}
	return AGENT_ANS_OK;
}

enum agent_answer agent_proto_register(struct agent_conn *c, const cJSON *labels,
				       const cJSON *facts, long timeout_ms,
				       const struct agent_stop *stop, char *name,
				       size_t name_len, struct pg_http_response *resp,
				       struct pg_err *err)
{
	static const char path[] = "/api/v1/agents/register";
	cJSON *body = cJSON_CreateObject(), *root = NULL;
	enum agent_answer ans = AGENT_ANS_RETRY;
	const char *agent = NULL;

	if (!body || !cJSON_AddItemToObject(body, "labels", cJSON_Duplicate(labels, 1)) ||
	    !cJSON_AddItemToObject(body, "facts", cJSON_Duplicate(facts, 1))) {
		pg_err_set(err, PG_ENOMEM, "POST %s: out of memory", path);
		goto out;
	}
	ans = proto_post_json(c, path, body, timeout_ms, stop, resp, err);
	if (ans != AGENT_ANS_OK)
		goto out;
	ans = proto_answer_object(path, resp, &root, err);
	if (ans != AGENT_ANS_OK)
		goto out;
	if (pg_json_get_string(root, "agent", true, &agent, err) < 0) {
		pg_err_prefix(err, "POST %s: answer", path);
		ans = AGENT_ANS_REFUSED;
		goto out;
	}
	if (pg_fmt(name, name_len, "%s", agent) < 0) {
		pg_err_set(err, PG_EINVAL, "POST %s: answer: agent name too long (%zu bytes)", path,
			   strlen(agent));
		ans = AGENT_ANS_REFUSED;
	}
out:
	cJSON_Delete(body);
	cJSON_Delete(root);
	return ans;
}

enum agent_answer agent_proto_lease(struct agent_conn *c, int wait_s, long timeout_ms,
				    const struct agent_stop *stop, cJSON **job,
				    struct pg_http_response *resp, struct pg_err *err)
{
	static const char path[] = "/api/v1/lease";
	enum agent_answer ans;
	cJSON *root = NULL, *item;
	char body[64];

	*job = NULL;
	if (pg_fmt(body, sizeof(body), "{\"wait_s\":%d}", wait_s) < 0) {
		pg_err_set(err, PG_EINVAL, "POST %s: body too long", path);
		return AGENT_ANS_REFUSED;
	}
	ans = agent_conn_post(c, path, "application/json", body, strlen(body), timeout_ms,
			      stop, resp, err);
	if (ans != AGENT_ANS_OK || resp->status == 204)
		return ans;
	if (resp->status != 200) {
		pg_err_set(err, PG_EINVAL, "POST %s: HTTP %ld is neither 200 nor 204", path,
			   resp->status);
		return AGENT_ANS_REFUSED;
	}
	ans = proto_answer_object(path, resp, &root, err);
	if (ans != AGENT_ANS_OK)
		return ans;
	item = cJSON_DetachItemFromObjectCaseSensitive(root, "job");
	cJSON_Delete(root);
	if (!cJSON_IsObject(item)) {
		pg_err_set(err, PG_EINVAL, "POST %s: HTTP 200 answer: field 'job': %s",
			   path, item ? "not an object" : "missing");
		cJSON_Delete(item);
		return AGENT_ANS_REFUSED;
	}
	*job = item;
	return AGENT_ANS_OK;
}

enum agent_answer agent_proto_heartbeat(struct agent_conn *c, int64_t job_id,
					int64_t attempt, const char *stage, int progress,
					long timeout_ms, const struct agent_stop *stop,
					bool *cancel, struct pg_http_response *resp,
					struct pg_err *err)
{
	char path[PATH_LEN];
	cJSON *body = cJSON_CreateObject(), *root = NULL;
	enum agent_answer ans = AGENT_ANS_RETRY;

	*cancel = false;
	if (pg_fmt(path, sizeof(path), "/api/v1/jobs/%lld/heartbeat", (long long)job_id) < 0) {
		pg_err_set(err, PG_EINVAL, "heartbeat: path too long");
		ans = AGENT_ANS_REFUSED;
		goto out;
	}
	if (!body || !cJSON_AddNumberToObject(body, "attempt", (double)attempt) ||
	    !cJSON_AddStringToObject(body, "stage", stage) ||
	    !cJSON_AddNumberToObject(body, "progress", progress)) {
		pg_err_set(err, PG_ENOMEM, "POST %s: out of memory", path);
		goto out;
	}
	ans = proto_post_json(c, path, body, timeout_ms, stop, resp, err);
	if (ans != AGENT_ANS_OK)
		goto out;
	ans = proto_answer_object(path, resp, &root, err);
	if (ans != AGENT_ANS_OK)
		goto out;
	if (pg_json_get_bool(root, "cancel", true, cancel, err) < 0) {
		pg_err_prefix(err, "POST %s: answer", path);
		ans = AGENT_ANS_REFUSED;
	}
out:
	cJSON_Delete(body);
	cJSON_Delete(root);
	return ans;
}

enum agent_answer agent_proto_log(struct agent_conn *c, int64_t job_id, int64_t attempt,
				  const char *stage, int64_t offset, const char *text,
				  size_t len, long timeout_ms, const struct agent_stop *stop,
				  int64_t *bytes, struct pg_http_response *resp,
				  struct pg_err *err)
{
	struct pg_err jerr = PG_ERR_INIT;
	char path[PATH_LEN];
	enum agent_answer ans;
	cJSON *root = NULL;
	int64_t n = -1;

	*bytes = -1;
	if (!agent_stage_ok(stage)) {
		pg_err_set(err, PG_EINVAL, "log upload: bad stage name '%s'", stage);
		return AGENT_ANS_REFUSED;
	}
	if ((offset >= 0 ?
	     pg_fmt(path, sizeof(path), "/api/v1/jobs/%lld/logs?attempt=%lld&stage=%s&offset=%lld",
		    (long long)job_id, (long long)attempt, stage, (long long)offset) :
	     pg_fmt(path, sizeof(path), "/api/v1/jobs/%lld/logs?attempt=%lld&stage=%s",
		    (long long)job_id, (long long)attempt, stage)) < 0) {
		pg_err_set(err, PG_EINVAL, "log upload: path too long");
		return AGENT_ANS_REFUSED;
	}
	ans = agent_conn_post(c, path, "text/plain; charset=utf-8", text, len, timeout_ms,
			      stop, resp, err);
	if (ans != AGENT_ANS_OK)
		return ans;
	/* The size is a hint for the next chunk's offset: an answer without
	 * it still acknowledges this one. */
	if (proto_answer_object(path, resp, &root, &jerr) == AGENT_ANS_OK &&
	    pg_json_get_int(root, "bytes", true, 0, INT64_MAX, &n, &jerr) > 0)
		*bytes = n;
	cJSON_Delete(root);
	return AGENT_ANS_OK;
}

enum agent_answer agent_proto_result(struct agent_conn *c, int64_t job_id, int64_t attempt,
				     const char *body, size_t len, long timeout_ms,
				     const struct agent_stop *stop, char *status,
				     size_t status_len, struct pg_http_response *resp,
				     struct pg_err *err)
{
	char path[PATH_LEN];
	enum agent_answer ans;
	const char *s = NULL;
	cJSON *root = NULL;

	(void)attempt;	/* it is in the body; the path names the job only */
	status[0] = '\0';
	if (pg_fmt(path, sizeof(path), "/api/v1/jobs/%lld/result", (long long)job_id) < 0) {
		pg_err_set(err, PG_EINVAL, "result upload: path too long");
		return AGENT_ANS_REFUSED;
	}
	ans = agent_conn_post(c, path, "application/json", body, len, timeout_ms, stop, resp,
			      err);
	if (ans != AGENT_ANS_OK)
		return ans;
	ans = proto_answer_object(path, resp, &root, err);
	if (ans != AGENT_ANS_OK)
		return ans;
	if (pg_json_get_string(root, "status", true, &s, err) < 0) {
		pg_err_prefix(err, "POST %s: answer", path);
		ans = AGENT_ANS_REFUSED;
	} else if (resp->status != 200 || (strcmp(s, "recorded") != 0 &&
					   strcmp(s, "duplicate") != 0 &&
					   strcmp(s, "acknowledged") != 0)) {
		pg_err_set(err, PG_EINVAL, "POST %s: HTTP %ld answer: unexpected status '%s'",
			   path, resp->status, s);
		ans = AGENT_ANS_REFUSED;
	} else {
		/* One of the three words, for the caller's log: a short buffer
		 * cuts it rather than refuse a result the controller kept. */
		pg_fmt_cut(status, status_len, "%s", s);
	}
	cJSON_Delete(root);
	return ans;
}

int agent_proto_mbox_path(const char *url, char *path, size_t size, struct pg_err *err)
{
	const char *p = url;
	static const char prefix[] = "/api/v1/series/";

	if (strncmp(p, "http://", 7) == 0 || strncmp(p, "https://", 8) == 0) {
		p = strchr(p + (p[4] == 's' ? 8 : 7), '/');
		if (!p)
			p = "";
	}
	if (strncmp(p, prefix, sizeof(prefix) - 1) != 0 || strstr(p, "..") ||
	    strcspn(p, " \t\r\n") != strlen(p))
		return pg_err_set(err, PG_EINVAL, "mbox URL '%.128s' is not a series mbox of the "
				  "controller (/api/v1/series/ID/mbox)", url);
	if (strlen(p) >= size)
		return pg_err_set(err, PG_EINVAL, "mbox URL '%.128s': too long", url);
	memcpy(path, p, strlen(p) + 1);
	return 0;
}

enum agent_answer agent_proto_mbox(struct agent_conn *c, const char *url, size_t max,
				   long timeout_ms, const struct agent_stop *stop,
				   struct pg_http_response *resp, struct pg_err *err)
{
	char path[PATH_LEN];

	if (agent_proto_mbox_path(url, path, sizeof(path), err) < 0)
		return AGENT_ANS_REFUSED;
	return agent_conn_request(c, "GET", path, NULL, NULL, 0, max, timeout_ms, stop, resp,
				  err);
}
