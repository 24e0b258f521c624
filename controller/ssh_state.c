/* SPDX-License-Identifier: MIT */
/* Table ssh_hosts: what the SSH dispatcher last knew of each host. */
#include "ssh_state.h"

#include <stdlib.h>
#include <string.h>

#include "sanitize.h"

#define SSH_STATE_ERROR_MAX 1024

static const char *const ssh_state_names[SSH_STATE_COUNT] = {
	[SSH_STATE_DISCONNECTED] = "disconnected",
	[SSH_STATE_CONNECTING] = "connecting",
	[SSH_STATE_IDLE] = "idle",
	[SSH_STATE_RUNNING] = "running",
	[SSH_STATE_ERROR] = "error",
};

const char *ssh_state_name(enum ssh_state s)
{
	return s >= 0 && s < SSH_STATE_COUNT ? ssh_state_names[s] : "?";
}

int ssh_state_init(struct store *st, int64_t agent_id, const char *target, int64_t now,
		   struct pg_err *err)
{
	return store_run(st, "SSH host state",
			 "INSERT INTO ssh_hosts (agent_id, target, state, updated_at)"
			 " VALUES (?1, ?2, 'disconnected', ?3) ON CONFLICT (agent_id) DO UPDATE"
			 " SET target = excluded.target, state = 'disconnected', job_id = NULL,"
			 " attempt = NULL, updated_at = excluded.updated_at",
			 STORE_ARGS(STORE_INT(agent_id), STORE_TEXT(target), STORE_INT(now)), err);
}

int ssh_state_set(struct store *st, int64_t agent_id, enum ssh_state s, int64_t job_id,
		  int64_t attempt, int64_t now, struct pg_err *err)
{
	bool running = s == SSH_STATE_RUNNING;

	return store_run(st, "SSH host state",
			 "UPDATE ssh_hosts SET state = ?2, job_id = ?3, attempt = ?4, updated_at = ?5"
			 " WHERE agent_id = ?1",
			 STORE_ARGS(STORE_INT(agent_id), STORE_TEXT(ssh_state_name(s)),
				    running ? STORE_INT(job_id) : STORE_NULL,
				    running ? STORE_INT(attempt) : STORE_NULL, STORE_INT(now)), err);
}

int ssh_state_connected(struct store *st, int64_t agent_id, const char *host_key,
			const char *agent_version, int64_t now, struct pg_err *err)
{
	return store_run(st, "SSH host state",
			 "UPDATE ssh_hosts SET state = 'connecting', job_id = NULL, attempt = NULL,"
			 " host_key = coalesce(?2, host_key),"
			 " agent_version = coalesce(?3, agent_version), connected_at = ?4,"
			 " connects = connects + 1, updated_at = ?4 WHERE agent_id = ?1",
			 STORE_ARGS(STORE_INT(agent_id),
				    host_key ? STORE_TEXT(host_key) : STORE_NULL,
				    agent_version ? STORE_TEXT(agent_version) : STORE_NULL,
				    STORE_INT(now)), err);
}

int ssh_state_error(struct store *st, int64_t agent_id, const char *msg,
		    const char *host_key, int64_t now, struct pg_err *err)
{
	struct pg_buf clean = PG_BUF_INIT(SSH_STATE_ERROR_MAX * PG_SAN_GROWTH);
	size_t len = strlen(msg);
	int rc;

	/* What reached us from the host or the network is shown on pages. */
	pg_sanitize(&clean, msg, len > SSH_STATE_ERROR_MAX ? SSH_STATE_ERROR_MAX : len,
		    PG_SAN_LINE);
	rc = store_run(st, "SSH host state",
		       "UPDATE ssh_hosts SET state = 'error', job_id = NULL, attempt = NULL,"
		       " last_error = ?2, last_error_at = ?3, failures = failures + 1,"
		       " host_key = coalesce(?4, host_key), updated_at = ?3 WHERE agent_id = ?1",
		       STORE_ARGS(STORE_INT(agent_id), STORE_TEXT(pg_buf_str(&clean)),
				  STORE_INT(now), host_key ? STORE_TEXT(host_key) : STORE_NULL), err);
	pg_buf_release(&clean);
	return rc;
}

static bool ssh_add_text(cJSON *o, const char *key, sqlite3_stmt *q, int i)
{
	const char *v = (const char *)sqlite3_column_text(q, i);

	return v ? cJSON_AddStringToObject(o, key, v) != NULL
		 : cJSON_AddNullToObject(o, key) != NULL;
}

static bool ssh_add_int(cJSON *o, const char *key, sqlite3_stmt *q, int i)
{
	return sqlite3_column_type(q, i) == SQLITE_NULL
		       ? cJSON_AddNullToObject(o, key) != NULL
		       : cJSON_AddNumberToObject(o, key, (double)sqlite3_column_int64(q, i)) != NULL;
}

int ssh_state_json(struct store *st, int64_t agent_id, cJSON **out, struct pg_err *err)
{
	static const char *const keys[] = {
		"target", "state", "job", "attempt", "host_key", "agent_version", "last_error",
		"last_error_at", "connected_at", "connects", "failures", "updated_at",
	};
	static const bool is_int[] = {
		false, false, true, true, false, false, false, true, true, true, true, true,
	};
	const char *what = "SSH host state";
	sqlite3_stmt *q = NULL;
	cJSON *o = NULL;
	int rc = -1, step;

	*out = NULL;
	if (store_prepare(st, &q,
			  "SELECT target, state, job_id, attempt, host_key, agent_version,"
			  " last_error, last_error_at, connected_at, connects, failures, updated_at"
			  " FROM ssh_hosts WHERE agent_id = ?1", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(agent_id)), what, err) < 0 ||
	    (step = store_step(q, what, err)) < 0)
		goto out;
	o = step ? cJSON_CreateObject() : cJSON_CreateNull();
	if (!o)
		goto nomem;
	for (size_t i = 0; step && i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!(is_int[i] ? ssh_add_int(o, keys[i], q, (int)i)
				: ssh_add_text(o, keys[i], q, (int)i)))
			goto nomem;
	*out = o;
	o = NULL;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
out:
	cJSON_Delete(o);
	sqlite3_finalize(q);
	return rc;
}

int ssh_state_counts(struct store *st, int64_t counts[SSH_STATE_COUNT], struct pg_err *err)
{
	for (int s = 0; s < SSH_STATE_COUNT; s++)
		if (store_query_int(st, "SSH hosts per state",
				    "SELECT count(*) FROM ssh_hosts WHERE state = ?1",
				    STORE_ARGS(STORE_TEXT(ssh_state_name((enum ssh_state)s))),
				    &counts[s], err) < 0)
			return -1;
	return 0;
}
