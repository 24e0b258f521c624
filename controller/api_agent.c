/* SPDX-License-Identifier: MIT */
/*
 * The agent endpoints: register, lease, heartbeat, logs, result.  Bodies
 * are parsed and validated on the HTTP threads (api_parse_*, pure); the
 * changes run on the writer thread (api_agent_run(), api_lease_try())
 * through the scheduler's *_tx functions, inside the writer's batch
 * transaction (api_worker.c); what they log and count waits for its
 * commit (api_note(), r->count_*).
 */
#include "api_int.h"
#include "api_view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt.h"
#include "fsutil.h"
#include "jobspec.h"
#include "json.h"
#include "log.h"

/* ---- parsing --------------------------------------------------------- */

/* An optional object member printed compactly into *out (malloc'd), at
 * most max bytes; null reads as absent. */
static int api_get_json_object(const cJSON *o, const char *key, size_t max, char **out,
			       struct pg_err *err)
{
	const cJSON *v = NULL;
	int rc;

	if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key)))
		return 0;
	rc = pg_json_get_object(o, key, false, &v, err);
	if (rc <= 0)
		return rc;
	*out = pg_json_print(v, false);
	if (!*out)
		return pg_err_set(err, PG_ENOMEM, "field '%s': out of memory", key);
	if (strlen(*out) > max)
		return pg_err_set(err, PG_EINVAL, "field '%s': more than %zu bytes", key, max);
	return 1;
}

int api_parse_register(const char *body, size_t len, struct api_op *op, struct pg_err *err)
{
	const cJSON *labels = NULL, *item;
	size_t n, i = 0;
	int rc;

	api_op_reset(op);
	if (api_parse_object(body, len, &op->doc, err) < 0)
		return -1;
	rc = pg_json_get_object(op->doc, "labels", false, &labels, err);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		n = (size_t)cJSON_GetArraySize(labels);
		if (n > SCHED_MAX_LABELS)
			return pg_err_set(err, PG_EINVAL, "field 'labels': %zu labels, at most %d", n,
					  SCHED_MAX_LABELS);
		op->keys = calloc(n ? n : 1, sizeof(*op->keys));
		op->values = calloc(n ? n : 1, sizeof(*op->values));
		if (!op->keys || !op->values)
			return pg_err_set(err, PG_ENOMEM, "field 'labels': out of memory");
		cJSON_ArrayForEach(item, labels) {
			if (!cJSON_IsString(item) || !item->valuestring)
				return pg_err_set(err, PG_EINVAL,
						  "field 'labels.%.64s': expected a string, got %s",
						  item->string, pg_json_type_name(item));
			op->keys[i] = item->string;
			op->values[i] = item->valuestring;
			i++;
		}
		op->n_labels = i;
		op->has_labels = true;
	}
	return api_get_json_object(op->doc, "facts", SCHED_FACTS_MAX, &op->facts, err) < 0 ? -1
											    : 0;
}

/* A longer wait is served as API_WAIT_MAX_S: the agent polls again after
 * a 204 anyway, and a connection held longer gains nothing. */
int api_parse_lease(const char *body, size_t len, struct api_op *op, struct pg_err *err)
{
	api_op_reset(op);
	if (api_parse_object(body, len, &op->doc, err) < 0 ||
	    pg_json_get_int(op->doc, "wait_s", false, 0, INT32_MAX, &op->wait_s, err) < 0)
		return -1;
	if (op->wait_s > API_WAIT_MAX_S)
		op->wait_s = API_WAIT_MAX_S;
	return 0;
}

int api_parse_heartbeat(const char *body, size_t len, struct api_op *op, struct pg_err *err)
{
	int64_t progress = -1;

	api_op_reset(op);
	if (api_parse_object(body, len, &op->doc, err) < 0 ||
	    pg_json_get_int(op->doc, "attempt", true, 1, INT32_MAX, &op->attempt, err) < 0 ||
	    api_get_string_or_null(op->doc, "stage", &op->stage, err) < 0)
		return -1;
	if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(op->doc, "progress")) &&
	    pg_json_get_int(op->doc, "progress", false, 0, 100, &progress, err) < 0)
		return -1;
	op->progress = (int)progress;
	return 0;
}

int api_parse_logs_query(const char *attempt, const char *stage, const char *offset,
			 struct api_op *op, struct pg_err *err)
{
	api_op_reset(op);
	if (!attempt)
		return pg_err_set(err, PG_EINVAL, "query parameter 'attempt': missing");
	if (api_parse_uint(attempt, 1, INT32_MAX, &op->attempt) < 0)
		return pg_err_set(err, PG_EINVAL, "query parameter 'attempt': '%.64s' is not an "
				  "attempt number (1 or more)", attempt);
	if (!stage)
		return pg_err_set(err, PG_EINVAL, "query parameter 'stage': missing");
	if (!api_is_stage(stage, strlen(stage)))
		return pg_err_set(err, PG_EINVAL, "query parameter 'stage': '%.80s' must be 1 to "
				  "%d of [A-Za-z0-9_.-], not starting with '.'", stage,
				  API_STAGE_MAX);
	if (pg_fmt(op->log_stage, sizeof(op->log_stage), "%s", stage) < 0)
		return pg_err_set(err, PG_EINVAL, "query parameter 'stage': too long");
	if (offset && api_parse_uint(offset, 0, API_LOG_MAX_BYTES, &op->offset) < 0)
		return pg_err_set(err, PG_EINVAL, "query parameter 'offset': '%.64s' is not a "
				  "byte offset", offset);
	return 0;
}

static int api_parse_sample(const cJSON *o, struct sched_sample *s, struct pg_err *err)
{
	if (!cJSON_IsObject(o))
		return pg_err_set(err, PG_EINVAL, "expected an object, got %s",
				  pg_json_type_name(o));
	if (pg_json_get_string(o, "side", true, &s->side, err) < 0 ||
	    pg_json_get_string(o, "benchmark", true, &s->benchmark, err) < 0 ||
	    pg_json_get_string(o, "metric", true, &s->metric, err) < 0 ||
	    pg_json_get_int(o, "repetition", true, 0, INT32_MAX, &s->repetition, err) < 0 ||
	    pg_json_get_double(o, "value", true, -1.7976931348623157e308, 1.7976931348623157e308,
			       &s->value, err) < 0 ||
	    api_get_string_or_null(o, "unit", &s->unit, err) < 0)
		return -1;
	if (strcmp(s->side, "base") != 0 && strcmp(s->side, "patched") != 0)
		return pg_err_set(err, PG_EINVAL, "field 'side': '%.32s' is not base or patched",
				  s->side);
	return 0;
}

int api_parse_result(const char *body, size_t len, struct api_op *op, struct pg_err *err)
{
	const cJSON *samples = NULL, *item;
	size_t n = 0, i = 0;
	int rc;

	api_op_reset(op);
	if (api_parse_object(body, len, &op->doc, err) < 0 ||
	    pg_json_get_int(op->doc, "attempt", true, 1, INT32_MAX, &op->attempt, err) < 0 ||
	    pg_json_get_string(op->doc, "outcome", true, &op->res.outcome, err) < 0 ||
	    api_get_string_or_null(op->doc, "detail", &op->res.detail, err) < 0 ||
	    api_get_json_object(op->doc, "fingerprint", SCHED_FINGERPRINT_MAX, &op->fingerprint,
				err) < 0)
		return -1;
	if (op->res.detail && strlen(op->res.detail) > SCHED_TEXT_MAX)
		return pg_err_set(err, PG_EINVAL, "field 'detail': more than %d bytes",
				  SCHED_TEXT_MAX);
	if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(op->doc, "samples"))) {
		rc = pg_json_get_array(op->doc, "samples", false, &samples, err);
		if (rc < 0)
			return -1;
		n = rc > 0 ? (size_t)cJSON_GetArraySize(samples) : 0;
	}
	if (n > SCHED_MAX_SAMPLES)
		return pg_err_set(err, PG_EINVAL, "field 'samples': %zu samples, at most %d", n,
				  SCHED_MAX_SAMPLES);
	if (n) {
		op->samples = calloc(n, sizeof(*op->samples));
		if (!op->samples)
			return pg_err_set(err, PG_ENOMEM, "field 'samples': out of memory");
		cJSON_ArrayForEach(item, samples) {
			if (api_parse_sample(item, &op->samples[i], err) < 0) {
				pg_err_prefix(err, "field 'samples[%zu]'", i);
				return -1;
			}
			i++;
		}
	}
	/* The digest tells a retried upload (the same bytes) from a
	 * different result for the same attempt. */
	if (api_sha256_hex(body, len, op->digest, err) < 0)
		return -1;
	op->res.fingerprint_json = op->fingerprint;
	op->res.samples = op->samples;
	op->res.n_samples = n;
	op->res.digest_hex = op->digest;
	return 0;
}

/* ---- lease ------------------------------------------------------------ */

/* Set o[key] = v, replacing what is there; consumes v. */
static bool api_set(cJSON *o, const char *key, cJSON *v)
{
	if (!v)
		return false;
	if (cJSON_GetObjectItemCaseSensitive(o, key)) {
		if (cJSON_ReplaceItemInObjectCaseSensitive(o, key, v))
			return true;
	} else if (cJSON_AddItemToObject(o, key, v)) {
		return true;
	}
	cJSON_Delete(v);
	return false;
}

/*
 * The job as the agent gets it: jobs.spec (the planner's job format) with
 * the lease's facts set over it, and "series" completed with its id and
 * mbox URL when the spec lacks them (a baseline has none: left so).
 */
static cJSON *api_lease_job(const struct api_server *srv, const struct sched_lease *l,
			    int64_t lease_s)
{
	struct pg_err err = PG_ERR_INIT;
	cJSON *job = NULL, *series;
	char url[2048];
	bool ok;

	if (l->spec && *l->spec && pg_json_parse(l->spec, strlen(l->spec), &job, &err) == 0 &&
	    !cJSON_IsObject(job)) {
		cJSON_Delete(job);
		job = NULL;
		pg_err_set(&err, PG_EINVAL, "not a JSON object");
	}
	if (!job) {
		if (l->spec && *l->spec)
			pg_log_warn("api", "job %lld: its spec does not parse (%s): sent without it",
				    (long long)l->job_id, err.msg);
		job = cJSON_CreateObject();
		if (!job)
			return NULL;
	}
	ok = api_set(job, JS_LEASE_JOB, cJSON_CreateNumber((double)l->job_id)) &&
	     api_set(job, JS_LEASE_ATTEMPT, cJSON_CreateNumber((double)l->attempt)) &&
	     api_set(job, JS_LEASE_EXPIRES, cJSON_CreateNumber((double)l->lease_expires)) &&
	     api_set(job, JS_LEASE_S, cJSON_CreateNumber((double)lease_s)) &&
	     api_set(job, JS_LEASE_HEARTBEAT_S,
		     cJSON_CreateNumber((double)(lease_s / 3 > 0 ? lease_s / 3 : 1))) &&
	     api_set(job, JS_RUN, cJSON_CreateNumber((double)l->run_id)) &&
	     api_set(job, JS_CONTEXT, cJSON_CreateString(l->context)) &&
	     api_set(job, JS_HOST_CLASS, cJSON_CreateString(l->host_class)) &&
	     api_set(job, JS_BUILD_MODE, cJSON_CreateString(l->build_mode));
	/* A baseline measures a commit by itself: no series to complete. */
	series = l->series_id > 0 ? cJSON_GetObjectItemCaseSensitive(job, JS_SERIES) : NULL;
	if (ok && l->series_id > 0 && !cJSON_IsObject(series)) {
		ok = api_set(job, JS_SERIES, cJSON_CreateObject());
		series = cJSON_GetObjectItemCaseSensitive(job, JS_SERIES);
	}
	if (ok && series && !cJSON_GetObjectItemCaseSensitive(series, JS_SERIES_ID))
		ok = api_set(series, JS_SERIES_ID, cJSON_CreateNumber((double)l->series_id));
	if (ok && series && !cJSON_GetObjectItemCaseSensitive(series, JS_SERIES_MBOX_URL)) {
		ok = pg_fmt(url, sizeof(url), "%s/api/v1/series/%lld/mbox", srv->public_url,
			    (long long)l->series_id) >= 0 &&
		     api_set(series, JS_SERIES_MBOX_URL, cJSON_CreateString(url));
	}
	if (!ok) {
		cJSON_Delete(job);
		return NULL;
	}
	return job;
}

int api_lease_try(struct api_worker *w, struct api_req *r, int64_t now)
{
	struct api_server *srv = w->srv;
	struct pg_err err = PG_ERR_INIT;
	struct sched_lease l;
	cJSON *o = NULL, *job;
	int rc;

	memset(&l, 0, sizeof(l));
	rc = sched_lease_tx(w->st, r->agent_id, srv->ps, now, srv->conf->lease_s, &l, &err);
	if (rc < 0) {
		pg_err_prefix(&err, "lease");
		api_reply_err(r, &err);
		return -1;
	}
	if (rc == 0) {
		r->held_job = l.held_job_id;
		sched_lease_release(&l);
		return 0;
	}
	r->count_lease = true;
	r->leased_job = l.job_id;
	r->leased_attempt = l.attempt;
	api_note(r, "job %lld attempt %lld (%s, %s) leased to agent %s for %lld s",
		 (long long)l.job_id, (long long)l.attempt, l.context, l.build_mode, r->agent,
		 (long long)srv->conf->lease_s);
	job = api_lease_job(srv, &l, srv->conf->lease_s);
	if (job) {
		o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToObject(o, "job", job)) {
			cJSON_Delete(job);
			cJSON_Delete(o);
			o = NULL;
		}
	}
	api_reply_json(r, 200, o);
	sched_lease_release(&l);
	return 1;
}

/* ---- register, heartbeat, logs, result ------------------------------- */

static int api_run_register(struct api_worker *w, struct api_req *r, int64_t now)
{
	struct pg_err err = PG_ERR_INIT;
	struct sched_labels labels = { r->op.keys, r->op.values, r->op.n_labels };
	cJSON *o = NULL, *l = NULL;
	char *text = NULL;

	if (sched_agent_update_tx(w->st, r->agent_id, r->op.has_labels ? &labels : NULL,
				  r->op.facts, now, &err) < 0 ||
	    api_view_agent_labels(w->st, r->agent_id, &l, &err) < 0) {
		api_reply_err(r, &err);
		return -1;
	}
	text = pg_json_print(l, false);
	api_note(r, "agent %s registered with labels %s", r->agent, text ? text : "?");
	free(text);
	o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "agent", r->agent) ||
	    !cJSON_AddItemToObject(o, "labels", l)) {
		cJSON_Delete(l);
		cJSON_Delete(o);
		o = NULL;
	}
	api_reply_json(r, 200, o);
	return 0;
}

static int api_run_heartbeat(struct api_worker *w, struct api_req *r, int64_t now)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t lease_s = w->srv->conf->lease_s;
	bool cancel = false;
	cJSON *o;

	if (sched_heartbeat_tx(w->st, r->agent_id, r->route.id, r->op.attempt, r->op.stage,
			       r->op.progress, now, lease_s, &cancel, &err) < 0) {
		api_reply_err(r, &err);
		return -1;
	}
	if (cancel)
		api_note(r, "job %lld attempt %lld: agent %s told to stop (cancelled)",
			 (long long)r->route.id, (long long)r->op.attempt, r->agent);
	o = cJSON_CreateObject();
	if (o && (!cJSON_AddBoolToObject(o, "cancel", cancel) ||
		  !cJSON_AddNumberToObject(o, "lease_expires",
					   (double)(cancel ? now : now + lease_s)))) {
		cJSON_Delete(o);
		o = NULL;
	}
	api_reply_json(r, 200, o);
	return 0;
}

/* The attempt must exist and be this agent's: 0, or -1 with err set
 * (PG_ENOTFOUND for an unknown job, PG_ECONFLICT otherwise). */
int api_own_attempt(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
			   struct pg_err *err)
{
	int64_t n = 0, owner = 0;

	if (store_query_int(st, "find job", "SELECT count(*) FROM jobs WHERE id = ?1",
			    STORE_ARGS(STORE_INT(job_id)), &n, err) < 0)
		return -1;
	if (n == 0)
		return pg_err_set(err, PG_ENOTFOUND, "no job %lld", (long long)job_id);
	if (store_query_int(st, "find attempt", "SELECT coalesce(agent_id, 0) FROM attempts"
			    " WHERE job_id = ?1 AND attempt = ?2",
			    STORE_ARGS(STORE_INT(job_id), STORE_INT(attempt)), &owner, err) < 0) {
		if (err->code == PG_ENOTFOUND)
			return pg_err_set(err, PG_ECONFLICT, "job %lld has no attempt %lld",
					  (long long)job_id, (long long)attempt);
		return -1;
	}
	if (owner != agent_id)
		return pg_err_set(err, PG_ECONFLICT, "attempt %lld of job %lld is another agent's",
				  (long long)attempt, (long long)job_id);
	return 0;
}

int api_log_dir_rel(int64_t job, int64_t attempt, struct pg_buf *rel, struct pg_err *err)
{
	if (pg_buf_printf(rel, "logs/%lld/%lld", (long long)job, (long long)attempt) < 0)
		return pg_buf_err(rel, err, "log directory");
	return 0;
}

int api_log_rel(const struct api_req *r, struct pg_buf *rel, struct pg_err *err)
{
	if (api_log_dir_rel(r->route.id, r->op.attempt, rel, err) < 0)
		return -1;
	if (pg_buf_printf(rel, "/%s.log", r->op.log_stage) < 0)
		return pg_buf_err(rel, err, "log path");
	return 0;
}

/* A log chunk the appender wrote (api_logs.c): record the size the file
 * held after it (op.log_bytes).  The appender checked that the attempt is
 * the agent's (an attempt's agent never changes); an attempt gone since
 * fails the row's foreign key.  The row never shrinks: a retried chunk
 * records the file's size, which is at least any size recorded before. */
static int api_run_logs(struct api_worker *w, struct api_req *r, int64_t now)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf rel = PG_BUF_INIT(256);
	int rc = -1;
	cJSON *o;

	if (api_log_rel(r, &rel, &err) < 0)
		goto fail;
	if (store_run(w->st, "record log",
		      "INSERT INTO logs (job_id, attempt, stage, path, bytes, updated_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (job_id, attempt, stage)"
		      " DO UPDATE SET bytes = max(bytes, excluded.bytes),"
		      " updated_at = excluded.updated_at",
		      STORE_ARGS(STORE_INT(r->route.id), STORE_INT(r->op.attempt),
				 STORE_TEXT(r->op.log_stage), STORE_TEXT(pg_buf_str(&rel)),
				 STORE_INT(r->op.log_bytes), STORE_INT(now)), &err) < 0)
		goto fail;
	o = cJSON_CreateObject();
	if (o && !cJSON_AddNumberToObject(o, "bytes", (double)r->op.log_bytes)) {
		cJSON_Delete(o);
		o = NULL;
	}
	api_reply_json(r, 200, o);
	rc = 0;
	goto out;
fail:
	api_reply_err(r, &err);
out:
	pg_buf_release(&rel);
	return rc;
}

static int api_run_result(struct api_worker *w, struct api_req *r, int64_t now)
{
	static const char *const names[] = {
		[SCHED_RESULT_RECORDED] = "recorded",
		[SCHED_RESULT_DUPLICATE] = "duplicate",
		[SCHED_RESULT_ACKNOWLEDGED] = "acknowledged",
	};
	struct api_server *srv = w->srv;
	struct pg_err err = PG_ERR_INIT;
	enum sched_result_status status = SCHED_RESULT_FAILED;
	cJSON *o;

	if (sched_result_tx(w->st, r->agent_id, r->route.id, r->op.attempt, &r->op.res, now,
			    srv->conf->max_attempts, &status, &err) < 0) {
		if (status == SCHED_RESULT_CONFLICT || err.code == PG_ECONFLICT) {
			r->count_result = API_RESULT_CONFLICT;
			api_note(r, "job %lld attempt %lld: result from agent %s refused: %s",
				 (long long)r->route.id, (long long)r->op.attempt, r->agent,
				 err.msg);
			err.code = PG_ECONFLICT;
		}
		api_reply_err(r, &err);
		return -1;
	}
	if (status != SCHED_RESULT_RECORDED && status != SCHED_RESULT_DUPLICATE &&
	    status != SCHED_RESULT_ACKNOWLEDGED) {
		api_reply_error(r, 500, "the scheduler gave no status");
		return -1;
	}
	r->count_result = status == SCHED_RESULT_RECORDED ? API_RESULT_RECORDED :
			  status == SCHED_RESULT_DUPLICATE ? API_RESULT_DUPLICATE
							   : API_RESULT_ACKNOWLEDGED;
	api_note(r, "job %lld attempt %lld: result %s from agent %s, %zu samples: %s",
		 (long long)r->route.id, (long long)r->op.attempt, r->op.res.outcome, r->agent,
		 r->op.res.n_samples, names[status]);
	o = cJSON_CreateObject();
	if (o && (!cJSON_AddStringToObject(o, "status", names[status]) ||
		  !cJSON_AddNumberToObject(o, "job", (double)r->route.id) ||
		  !cJSON_AddNumberToObject(o, "attempt", (double)r->op.attempt))) {
		cJSON_Delete(o);
		o = NULL;
	}
	api_reply_json(r, 200, o);
	return 0;
}

int api_agent_run(struct api_worker *w, struct api_req *r, int64_t now)
{
	switch (r->route.ep) {
	case API_EP_REGISTER:
		return api_run_register(w, r, now);
	case API_EP_JOB_HEARTBEAT:
		return api_run_heartbeat(w, r, now);
	case API_EP_JOB_LOGS:
		return api_run_logs(w, r, now);
	case API_EP_JOB_RESULT:
		return api_run_result(w, r, now);
	default:
		api_reply_error(r, 500, "not an agent endpoint: %s", api_route_name(r->route.ep));
		return -1;
	}
}
