/* SPDX-License-Identifier: MIT */
/* The store as JSON, for the command line and the read endpoints (see
 * api_view.h). */
#include "api_view.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "time.h"

/* Fills one object from the current row; false when out of memory. */
typedef bool (*api_view_fill_fn)(cJSON *o, sqlite3_stmt *stmt);

static const char *col_text(sqlite3_stmt *stmt, int i)
{
	const char *s = (const char *)sqlite3_column_text(stmt, i);

	return s ? s : "";
}

static bool add_text(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	return cJSON_AddStringToObject(o, key, col_text(stmt, i)) != NULL;
}

static bool add_int(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	return cJSON_AddNumberToObject(o, key, (double)sqlite3_column_int64(stmt, i)) != NULL;
}

static bool add_bool(cJSON *o, const char *key, bool v)
{
	return cJSON_AddBoolToObject(o, key, v) != NULL;
}

static bool add_text_or_null(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
		return cJSON_AddNullToObject(o, key) != NULL;
	return add_text(o, key, stmt, i);
}

static bool add_int_or_null(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
		return cJSON_AddNullToObject(o, key) != NULL;
	return add_int(o, key, stmt, i);
}

/* A column holding JSON text (labels, facts, spec) as a value; null when
 * it does not parse, which only a hand-edited store can cause. */
static bool add_json(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	const char *text = (const char *)sqlite3_column_text(stmt, i);
	cJSON *v = NULL;

	if (!text || pg_json_parse(text, (size_t)sqlite3_column_bytes(stmt, i), &v, NULL) < 0)
		return cJSON_AddNullToObject(o, key) != NULL;
	if (!cJSON_AddItemToObject(o, key, v)) {
		cJSON_Delete(v);
		return false;
	}
	return true;
}

/*
 * Run sql with args and append one object per row, filled by fill, to
 * arr.  Returns 0 or -1.
 */
static int api_view_rows(struct store *st, cJSON *arr, const char *what, const char *sql,
			 const struct store_arg *args, size_t nargs, api_view_fill_fn fill,
			 struct pg_err *err)
{
	sqlite3_stmt *stmt = NULL;
	int row, rc = -1;

	if (store_prepare_cached(st, &stmt, sql, what, err) < 0 ||
	    store_bind(stmt, args, nargs, what, err) < 0)
		goto out;
	while ((row = store_step(stmt, what, err)) == 1) {
		cJSON *item = cJSON_CreateObject();

		if (!item || !cJSON_AddItemToArray(arr, item)) {
			cJSON_Delete(item);
			goto nomem;
		}
		if (!fill(item, stmt))
			goto nomem;
	}
	rc = row < 0 ? -1 : 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
out:
	store_done(st, stmt);
	return rc;
}

/* Like api_view_rows() into a new array o[key]. */
static int api_view_add_rows(struct store *st, cJSON *o, const char *key, const char *sql,
			     const struct store_arg *args, size_t nargs, api_view_fill_fn fill,
			     struct pg_err *err)
{
	cJSON *arr = cJSON_AddArrayToObject(o, key);

	if (!arr)
		return pg_err_set(err, PG_ENOMEM, "%s: out of memory", key);
	return api_view_rows(st, arr, key, sql, args, nargs, fill, err);
}

/* Like api_view_rows() into a new array *out (NULL on failure). */
static int api_view_list(struct store *st, const char *what, const char *sql,
			 const struct store_arg *args, size_t nargs, api_view_fill_fn fill,
			 cJSON **out, struct pg_err *err)
{
	*out = cJSON_CreateArray();
	if (!*out)
		return pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
	if (api_view_rows(st, *out, what, sql, args, nargs, fill, err) < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* Run sql (one row expected) and fill *out; PG_ENOTFOUND names `what` and
 * the id when there is no row. */
static int api_view_one(struct store *st, const char *what, int64_t id, const char *sql,
			api_view_fill_fn fill, cJSON **out, struct pg_err *err)
{
	sqlite3_stmt *stmt = NULL;
	int row, rc = -1;

	*out = NULL;
	if (store_prepare_cached(st, &stmt, sql, what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(id)), what, err) < 0)
		goto out;
	row = store_step(stmt, what, err);
	if (row < 0)
		goto out;
	if (row == 0) {
		pg_err_set(err, PG_ENOTFOUND, "no %s %lld", what, (long long)id);
		goto out;
	}
	*out = cJSON_CreateObject();
	if (!*out || !fill(*out, stmt)) {
		pg_err_set(err, PG_ENOMEM, "%s %lld: out of memory", what, (long long)id);
		cJSON_Delete(*out);
		*out = NULL;
		goto out;
	}
	rc = 0;
out:
	store_done(st, stmt);
	return rc;
}

/* ---- series ---------------------------------------------------------- */

#define SERIES_COLUMNS \
	"s.id, s.state, s.version, s.total, (SELECT count(*) FROM patches p" \
	" WHERE p.series_id = s.id), s.title, s.submitter_name, s.submitter_addr," \
	" s.received_at, s.completed_at, s.tags, s.is_rfc, s.supersedes_id," \
	" (SELECT n.id FROM series n WHERE n.supersedes_id = s.id LIMIT 1), s.stale_at," \
	" s.pw_series_id, s.base_commit, s.root_msgid," \
	" (SELECT m.msgid FROM messages m WHERE m.id = s.cover_message_id)"

#define SERIES_FILTER \
	" WHERE ?1 IS NULL OR s.state = ?1 OR (?1 = 'stale' AND s.stale_at" \
	" IS NOT NULL AND s.state = 'incomplete')"

static bool fill_series(cJSON *o, sqlite3_stmt *stmt)
{
	char when[PG_TIME_UTC_MAX];

	if (pg_time_format_utc(sqlite3_column_int64(stmt, 8) * 1000, 0, when, sizeof(when)) < 0)
		snprintf(when, sizeof(when), "%lld", (long long)sqlite3_column_int64(stmt, 8));
	return add_int(o, "id", stmt, 0) &&
	       add_text(o, "state", stmt, 1) &&
	       add_bool(o, "stale", sqlite3_column_type(stmt, 14) != SQLITE_NULL) &&
	       add_int(o, "version", stmt, 2) &&
	       add_int(o, "total", stmt, 3) &&
	       add_int(o, "received", stmt, 4) &&
	       add_text(o, "title", stmt, 5) &&
	       add_text(o, "submitter_name", stmt, 6) &&
	       add_text(o, "submitter", stmt, 7) &&
	       cJSON_AddStringToObject(o, "date", when) &&
	       add_text(o, "tags", stmt, 10) &&
	       add_bool(o, "rfc", sqlite3_column_int(stmt, 11) != 0) &&
	       add_int_or_null(o, "supersedes", stmt, 12) &&
	       add_int_or_null(o, "superseded_by", stmt, 13) &&
	       add_int_or_null(o, "patchwork_series", stmt, 15) &&
	       add_text_or_null(o, "base_commit", stmt, 16) &&
	       add_text(o, "root_msgid", stmt, 17) &&
	       add_text_or_null(o, "cover_msgid", stmt, 18);
}

int api_view_series_list(struct store *st, const char *state, int64_t limit, int64_t offset,
			 cJSON **out, struct pg_err *err)
{
	return api_view_list(st, "list series",
			     "SELECT " SERIES_COLUMNS " FROM series s" SERIES_FILTER
			     " ORDER BY s.id LIMIT ?2 OFFSET ?3",
			     STORE_ARGS(state ? STORE_TEXT(state) : STORE_NULL,
					STORE_INT(limit < 0 ? -1 : limit), STORE_INT(offset)),
			     fill_series, out, err);
}

int api_view_series_count(struct store *st, const char *state, int64_t *n,
			  struct pg_err *err)
{
	return store_query_int(st, "count series", "SELECT count(*) FROM series s" SERIES_FILTER,
			       STORE_ARGS(state ? STORE_TEXT(state) : STORE_NULL), n, err);
}

static bool fill_patch(cJSON *o, sqlite3_stmt *stmt)
{
	return add_int(o, "number", stmt, 0) &&
	       add_text(o, "subject", stmt, 1) &&
	       add_text(o, "msgid", stmt, 2) &&
	       add_int_or_null(o, "patchwork_patch", stmt, 3) &&
	       add_text_or_null(o, "base_commit", stmt, 4) &&
	       add_text(o, "files", stmt, 5);
}

static bool fill_dep(cJSON *o, sqlite3_stmt *stmt)
{
	return add_text(o, "kind", stmt, 0) &&
	       add_text(o, "ref", stmt, 1) &&
	       add_int_or_null(o, "series", stmt, 2);
}

static bool fill_recheck(cJSON *o, sqlite3_stmt *stmt)
{
	return add_int(o, "id", stmt, 0) &&
	       add_text(o, "origin", stmt, 1) &&
	       add_text(o, "msgid", stmt, 2) &&
	       add_text(o, "requester", stmt, 3) &&
	       add_text(o, "contexts", stmt, 4) &&
	       add_text_or_null(o, "rebase", stmt, 5) &&
	       add_text(o, "state", stmt, 6);
}

/* ---- runs and jobs ----------------------------------------------------- */

#define JOB_COLUMNS \
	"j.id, j.run_id, r.series_id, j.context, j.host_class, j.build_mode, j.state," \
	" j.priority, j.attempt, ag.name, j.lease_expires, j.stage, j.progress, j.stage_at," \
	" j.outcome, j.outcome_detail, j.created_at, j.started_at, j.finished_at, j.spec"
#define JOB_FROM \
	" FROM jobs j JOIN runs r ON r.id = j.run_id LEFT JOIN agents ag ON ag.id = j.agent_id"

static bool fill_job(cJSON *o, sqlite3_stmt *stmt)
{
	return add_int(o, "id", stmt, 0) &&
	       add_int(o, "run", stmt, 1) &&
	       add_int(o, "series", stmt, 2) &&
	       add_text(o, "context", stmt, 3) &&
	       add_text(o, "host_class", stmt, 4) &&
	       add_text(o, "build_mode", stmt, 5) &&
	       add_text(o, "state", stmt, 6) &&
	       add_int(o, "priority", stmt, 7) &&
	       add_int(o, "attempt", stmt, 8) &&
	       add_text_or_null(o, "agent", stmt, 9) &&
	       add_int_or_null(o, "lease_expires", stmt, 10) &&
	       add_text_or_null(o, "stage", stmt, 11) &&
	       add_int_or_null(o, "progress", stmt, 12) &&
	       add_int_or_null(o, "stage_at", stmt, 13) &&
	       add_text_or_null(o, "outcome", stmt, 14) &&
	       add_text_or_null(o, "detail", stmt, 15) &&
	       add_int(o, "created_at", stmt, 16) &&
	       add_int_or_null(o, "started_at", stmt, 17) &&
	       add_int_or_null(o, "finished_at", stmt, 18);
}

static bool fill_job_spec(cJSON *o, sqlite3_stmt *stmt)
{
	return fill_job(o, stmt) && add_json(o, "spec", stmt, 19);
}

#define RUN_COLUMNS \
	"id, series_id, reason, recheck_id, tree, branch, base_commit, state, created_at," \
	" finished_at"

static bool fill_run_row(cJSON *o, sqlite3_stmt *stmt)
{
	return add_int(o, "id", stmt, 0) &&
	       add_int(o, "series", stmt, 1) &&
	       add_text(o, "reason", stmt, 2) &&
	       add_int_or_null(o, "recheck", stmt, 3) &&
	       add_text(o, "tree", stmt, 4) &&
	       add_text(o, "branch", stmt, 5) &&
	       add_text(o, "base_commit", stmt, 6) &&
	       add_text(o, "state", stmt, 7) &&
	       add_int(o, "created_at", stmt, 8) &&
	       add_int_or_null(o, "finished_at", stmt, 9);
}

/* Add "jobs" to each run object of arr (or to the one object run). */
static int api_view_run_jobs(struct store *st, cJSON *run, struct pg_err *err)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(run, "id");

	return api_view_add_rows(st, run, "jobs",
				 "SELECT " JOB_COLUMNS JOB_FROM " WHERE j.run_id = ?1 ORDER BY j.id",
				 STORE_ARGS(STORE_INT((int64_t)cJSON_GetNumberValue(id))),
				 fill_job, err);
}

int api_view_run(struct store *st, int64_t id, cJSON **out, struct pg_err *err)
{
	if (api_view_one(st, "run", id, "SELECT " RUN_COLUMNS " FROM runs WHERE id = ?1",
			 fill_run_row, out, err) < 0)
		return -1;
	if (api_view_run_jobs(st, *out, err) < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

int api_view_series(struct store *st, int64_t id, bool with_runs, cJSON **out,
		    struct pg_err *err)
{
	cJSON *runs, *run;

	if (api_view_one(st, "series", id, "SELECT " SERIES_COLUMNS " FROM series s"
			 " WHERE s.id = ?1", fill_series, out, err) < 0)
		return -1;
	if (api_view_add_rows(st, *out, "patches",
			      "SELECT p.number, p.subject, m.msgid, p.pw_patch_id, p.base_commit,"
			      " p.files FROM patches p JOIN messages m ON m.id = p.message_id"
			      " WHERE p.series_id = ?1 ORDER BY p.number",
			      STORE_ARGS(STORE_INT(id)), fill_patch, err) < 0 ||
	    api_view_add_rows(st, *out, "depends_on",
			      "SELECT kind, ref, dep_series_id FROM series_deps WHERE series_id = ?1"
			      " ORDER BY kind, ref", STORE_ARGS(STORE_INT(id)), fill_dep, err) < 0 ||
	    api_view_add_rows(st, *out, "rechecks",
			      "SELECT id, origin, msgid, requester, contexts, rebase_branch, state"
			      " FROM recheck_requests WHERE series_id = ?1 ORDER BY id",
			      STORE_ARGS(STORE_INT(id)), fill_recheck, err) < 0)
		goto fail;
	if (!with_runs)
		return 0;
	if (api_view_add_rows(st, *out, "runs",
			      "SELECT " RUN_COLUMNS " FROM runs WHERE series_id = ?1 ORDER BY id",
			      STORE_ARGS(STORE_INT(id)), fill_run_row, err) < 0)
		goto fail;
	runs = cJSON_GetObjectItemCaseSensitive(*out, "runs");
	cJSON_ArrayForEach(run, runs)
		if (api_view_run_jobs(st, run, err) < 0)
			goto fail;
	return 0;
fail:
	cJSON_Delete(*out);
	*out = NULL;
	return -1;
}

int api_view_jobs(struct store *st, const char *state, int64_t limit, int64_t offset,
		  cJSON **out, struct pg_err *err)
{
	return api_view_list(st, "list jobs",
			     "SELECT " JOB_COLUMNS JOB_FROM " WHERE ?1 IS NULL OR j.state = ?1"
			     " ORDER BY j.id DESC LIMIT ?2 OFFSET ?3",
			     STORE_ARGS(state ? STORE_TEXT(state) : STORE_NULL,
					STORE_INT(limit < 0 ? -1 : limit), STORE_INT(offset)),
			     fill_job, out, err);
}

static bool fill_attempt(cJSON *o, sqlite3_stmt *stmt)
{
	return add_int(o, "attempt", stmt, 0) &&
	       add_text_or_null(o, "agent", stmt, 1) &&
	       add_int(o, "started_at", stmt, 2) &&
	       add_int_or_null(o, "ended_at", stmt, 3) &&
	       add_text_or_null(o, "outcome", stmt, 4) &&
	       add_text_or_null(o, "reason", stmt, 5);
}

static bool fill_log(cJSON *o, sqlite3_stmt *stmt)
{
	return add_int(o, "attempt", stmt, 0) &&
	       add_text(o, "stage", stmt, 1) &&
	       add_int(o, "bytes", stmt, 2) &&
	       add_int(o, "updated_at", stmt, 3) &&
	       add_text(o, "url", stmt, 4);
}

int api_view_job(struct store *st, int64_t id, const char *base_url, cJSON **out,
		 struct pg_err *err)
{
	if (api_view_one(st, "job", id, "SELECT " JOB_COLUMNS JOB_FROM " WHERE j.id = ?1",
			 fill_job_spec, out, err) < 0)
		return -1;
	if (api_view_add_rows(st, *out, "attempts",
			      "SELECT a.attempt, ag.name, a.started_at, a.ended_at, a.outcome,"
			      " a.reason FROM attempts a LEFT JOIN agents ag ON ag.id = a.agent_id"
			      " WHERE a.job_id = ?1 ORDER BY a.attempt",
			      STORE_ARGS(STORE_INT(id)), fill_attempt, err) < 0 ||
	    api_view_add_rows(st, *out, "logs",
			      "SELECT attempt, stage, bytes, updated_at,"
			      " ?2 || '/api/v1/jobs/' || job_id || '/logs/' || attempt || '/' || stage"
			      " FROM logs WHERE job_id = ?1 ORDER BY attempt, id",
			      STORE_ARGS(STORE_INT(id), STORE_TEXT(base_url ? base_url : "")),
			      fill_log, err) < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* ---- agents ------------------------------------------------------------- */

/* The online window is bound as ?1 (the oldest last_seen that counts). */
#define AGENT_COLUMNS \
	"a.id, a.name, a.transport, a.enabled, a.labels, a.facts, a.created_at, a.last_seen," \
	" a.enabled = 1 AND a.last_seen >= ?1, j.id, j.state, j.attempt, j.stage, j.progress," \
	" j.context, j.lease_expires"

static bool fill_agent(cJSON *o, sqlite3_stmt *stmt)
{
	cJSON *job;

	if (!(add_int(o, "id", stmt, 0) &&
	      add_text(o, "name", stmt, 1) &&
	      add_text(o, "transport", stmt, 2) &&
	      add_bool(o, "enabled", sqlite3_column_int(stmt, 3) != 0) &&
	      add_json(o, "labels", stmt, 4) &&
	      add_json(o, "facts", stmt, 5) &&
	      add_int(o, "created_at", stmt, 6) &&
	      add_int_or_null(o, "last_seen", stmt, 7) &&
	      add_bool(o, "online", sqlite3_column_int(stmt, 8) != 0)))
		return false;
	if (sqlite3_column_type(stmt, 9) == SQLITE_NULL)
		return cJSON_AddNullToObject(o, "job") != NULL;
	job = cJSON_AddObjectToObject(o, "job");
	return job &&
	       add_int(job, "id", stmt, 9) &&
	       add_text(job, "state", stmt, 10) &&
	       add_int(job, "attempt", stmt, 11) &&
	       add_text_or_null(job, "stage", stmt, 12) &&
	       add_int_or_null(job, "progress", stmt, 13) &&
	       add_text(job, "context", stmt, 14) &&
	       add_int_or_null(job, "lease_expires", stmt, 15);
}

int api_view_agents(struct store *st, int64_t now, int64_t online_window_s, cJSON **out,
		    struct pg_err *err)
{
	return api_view_list(st, "list agents",
			     "SELECT " AGENT_COLUMNS " FROM agents a LEFT JOIN jobs j"
			     " ON j.agent_id = a.id AND j.state IN ('leased', 'running')"
			     " ORDER BY a.name",
			     STORE_ARGS(STORE_INT(now - online_window_s)), fill_agent, out, err);
}

static bool fill_labels(cJSON *o, sqlite3_stmt *stmt)
{
	return add_json(o, "labels", stmt, 0);
}

int api_view_agent_labels(struct store *st, int64_t agent_id, cJSON **out,
			  struct pg_err *err)
{
	cJSON *row = NULL;

	*out = NULL;
	if (api_view_one(st, "agent", agent_id, "SELECT labels FROM agents WHERE id = ?1",
			 fill_labels, &row, err) < 0)
		return -1;
	*out = cJSON_DetachItemFromObjectCaseSensitive(row, "labels");
	cJSON_Delete(row);
	if (!cJSON_IsObject(*out)) {
		cJSON_Delete(*out);
		*out = cJSON_CreateObject();
		if (!*out)
			return pg_err_set(err, PG_ENOMEM, "agent labels: out of memory");
	}
	return 0;
}
