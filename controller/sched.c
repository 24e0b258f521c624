/* SPDX-License-Identifier: MIT */
/*
 * The scheduler core: see sched.h for the life cycle of a job, the
 * fairness rule and what happens to late work.
 */
#include "sched.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "drift.h"
#include "fmt.h"
#include "json.h"
#include "timeutil.h"
#include "vec.h"

/* Room for a job or attempt state or an outcome name. */
#define SCHED_WORD_MAX 32

static const char *const sched_outcomes[] = {
	"ok", "apply-failure", "base-build-failure", "patched-build-failure",
	"bench-failure", "infra-error", NULL,
};

/* ---- input checks ---------------------------------------------------- */

/* [A-Za-z0-9_.-]+ of at most max bytes: names that go into logs, JSON and
 * the profile's label maps unquoted. */
static bool sched_is_name(const char *s, size_t max)
{
	size_t n = 0;

	if (!s || !*s)
		return false;
	for (; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];

		if (n >= max || !(isalnum(c) || c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

/* 1..max bytes without control characters (one line of text). */
static bool sched_is_line(const char *s, size_t max)
{
	size_t n = 0;

	if (!s || !*s)
		return false;
	for (; s[n]; n++)
		if (n >= max || iscntrl((unsigned char)s[n]))
			return false;
	return true;
}

/* At most max bytes (free text such as a result's detail). */
static bool sched_is_text(const char *s, size_t max)
{
	return s && strnlen(s, max + 1) <= max;
}

/* Copy a hex digest in lower case into out (SCHED_HASH_MAX + 1 bytes), so
 * that "AB.." and "ab.." are one token hash. */
static int sched_hex(const char *in, const char *what, char *out, struct pg_err *err)
{
	size_t n = 0;

	if (!in)
		return pg_err_set(err, PG_EINVAL, "%s: missing", what);
	for (; in[n]; n++) {
		if (n >= SCHED_HASH_MAX || !isxdigit((unsigned char)in[n]))
			return pg_err_set(err, PG_EINVAL,
					  "%s: expected %d to %d hex digits", what,
					  SCHED_HASH_MIN, SCHED_HASH_MAX);
		out[n] = (char)tolower((unsigned char)in[n]);
	}
	out[n] = '\0';
	if (n < SCHED_HASH_MIN)
		return pg_err_set(err, PG_EINVAL, "%s: expected %d to %d hex digits", what,
				  SCHED_HASH_MIN, SCHED_HASH_MAX);
	return 0;
}

static bool sched_is_outcome(const char *s)
{
	for (size_t i = 0; s && sched_outcomes[i]; i++)
		if (!strcmp(s, sched_outcomes[i]))
			return true;
	return false;
}

/* Check labels and render them as a JSON object; *out is malloc'd. */
static int sched_labels_json(const struct sched_labels *l, char **out, struct pg_err *err)
{
	cJSON *obj = NULL;
	int rc = -1;

	*out = NULL;
	if (l->n > SCHED_MAX_LABELS) {
		pg_err_set(err, PG_EINVAL, "labels: %zu of them, at most %d", l->n,
			   SCHED_MAX_LABELS);
		goto out;
	}
	if (l->n && (!l->keys || !l->values)) {
		pg_err_set(err, PG_EINVAL, "labels: missing keys or values");
		goto out;
	}
	obj = cJSON_CreateObject();
	if (!obj)
		goto nomem;
	for (size_t i = 0; i < l->n; i++) {
		if (!sched_is_name(l->keys[i], SCHED_NAME_MAX)) {
			pg_err_set(err, PG_EINVAL,
				   "label %zu: key must be 1 to %d of [A-Za-z0-9_.-]", i + 1,
				   SCHED_NAME_MAX);
			goto out;
		}
		if (!sched_is_line(l->values[i], SCHED_LABEL_VALUE_MAX)) {
			pg_err_set(err, PG_EINVAL,
				   "label '%s': value must be 1 to %d bytes without control characters",
				   l->keys[i], SCHED_LABEL_VALUE_MAX);
			goto out;
		}
		if (cJSON_GetObjectItemCaseSensitive(obj, l->keys[i])) {
			pg_err_set(err, PG_EINVAL, "label '%s' given twice", l->keys[i]);
			goto out;
		}
		if (!cJSON_AddStringToObject(obj, l->keys[i], l->values[i]))
			goto nomem;
	}
	*out = pg_json_print(obj, false);
	if (!*out)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "labels: out of memory");
out:
	cJSON_Delete(obj);
	return rc;
}

/* Check that text is a JSON object of at most max bytes and render it
 * compact; *out is malloc'd. */
static int sched_json_object(const char *text, size_t max, const char *what, char **out,
			     struct pg_err *err)
{
	cJSON *obj = NULL;
	size_t len = strnlen(text, max + 1);
	int rc = -1;

	*out = NULL;
	if (len > max) {
		pg_err_set(err, PG_ETOOBIG, "%s: more than %zu bytes", what, max);
		goto out;
	}
	if (pg_json_parse(text, len, &obj, err) < 0) {
		pg_err_prefix(err, "%s", what);
		goto out;
	}
	if (!cJSON_IsObject(obj)) {
		pg_err_set(err, PG_EINVAL, "%s: expected an object, got %s", what,
			   pg_json_type_name(obj));
		goto out;
	}
	*out = pg_json_print(obj, false);
	if (!*out) {
		pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(obj);
	return rc;
}

/* "2026-11-30T04:30:00Z" for a time in seconds (the number itself when
 * the year is out of range). */
static void sched_fmt_time(int64_t t, char out[PG_TIME_UTC_MAX])
{
	if (t < INT64_MAX / 1000 && t > INT64_MIN / 1000 &&
	    pg_time_format_utc(t * 1000, 0, out, PG_TIME_UTC_MAX) >= 0)
		return;
	/* Never cut: an int64 has at most 20 digits and a sign. */
	pg_fmt_cut(out, PG_TIME_UTC_MAX, "%lld", (long long)t);
}

/* A *_tx step failed inside the transaction its wrapper opened: roll back
 * (err is already set and prefixed) and return -1. */
static int sched_abort(struct store *st)
{
	store_rollback(st);
	return -1;
}

/* ---- rows -------------------------------------------------------------- */

/* Prepare (through the store's cache), bind and step once: 1 when a row is
 * ready, 0 when none, -1.  The caller hands *stmt to store_done() in every
 * case. */
static int sched_row(struct store *st, sqlite3_stmt **stmt, const char *sql, const char *what,
		     const struct store_arg *args, size_t nargs, struct pg_err *err)
{
	if (store_prepare_cached(st, stmt, sql, what, err) < 0 ||
	    store_bind(*stmt, args, nargs, what, err) < 0)
		return -1;
	return store_step(*stmt, what, err);
}

/* Copy text column col into out[outlen] ("" for NULL); PG_ETOOBIG when it
 * does not fit. */
static int sched_col_text(sqlite3_stmt *stmt, int col, char *out, size_t outlen,
			  const char *what, struct pg_err *err)
{
	const char *s = (const char *)sqlite3_column_text(stmt, col);
	int n = snprintf(out, outlen, "%s", s ? s : "");

	if (n < 0 || (size_t)n >= outlen)
		return pg_err_set(err, PG_ETOOBIG, "%s: column %s longer than %zu bytes", what,
				  sqlite3_column_name(stmt, col), outlen - 1);
	return 0;
}

/* What the transitions need to know of a job. */
struct sched_job {
	int64_t id;
	int64_t attempt;
	int64_t agent_id;		/* 0 for NULL */
	char state[SCHED_WORD_MAX];
};

/* Read job job_id: 1 found, 0 not found, -1 error. */
static int sched_job_get(struct store *st, int64_t job_id, struct sched_job *j,
			 struct pg_err *err)
{
	static const char what[] = "read job";
	sqlite3_stmt *stmt = NULL;
	int rc;

	memset(j, 0, sizeof(*j));
	rc = sched_row(st, &stmt, "SELECT id, attempt, coalesce(agent_id, 0), state FROM jobs"
		       " WHERE id = ?1", what, STORE_ARGS(STORE_INT(job_id)), err);
	if (rc <= 0)
		goto out;
	j->id = sqlite3_column_int64(stmt, 0);
	j->attempt = sqlite3_column_int64(stmt, 1);
	j->agent_id = sqlite3_column_int64(stmt, 2);
	if (sched_col_text(stmt, 3, j->state, sizeof(j->state), what, err) < 0)
		rc = -1;
out:
	store_done(st, stmt);
	return rc;
}

/* What the transitions need to know of an attempt. */
struct sched_attempt {
	int64_t agent_id;		/* 0 for NULL */
	bool ended;
	char outcome[SCHED_WORD_MAX];	/* "" while open */
};

/* Read attempt `attempt` of job job_id: 1 found, 0 not found, -1 error. */
static int sched_attempt_get(struct store *st, int64_t job_id, int64_t attempt,
			     struct sched_attempt *a, struct pg_err *err)
{
	static const char what[] = "read attempt";
	sqlite3_stmt *stmt = NULL;
	int rc;

	memset(a, 0, sizeof(*a));
	rc = sched_row(st, &stmt, "SELECT coalesce(agent_id, 0), ended_at IS NOT NULL, outcome"
		       " FROM attempts WHERE job_id = ?1 AND attempt = ?2", what,
		       STORE_ARGS(STORE_INT(job_id), STORE_INT(attempt)), err);
	if (rc <= 0)
		goto out;
	a->agent_id = sqlite3_column_int64(stmt, 0);
	a->ended = sqlite3_column_int(stmt, 1) != 0;
	if (sched_col_text(stmt, 2, a->outcome, sizeof(a->outcome), what, err) < 0)
		rc = -1;
out:
	store_done(st, stmt);
	return rc;
}

/*
 * Read job job_id and its attempt `attempt`, which agent_id must hold (the
 * heartbeat's and the result's first check): 1 when it does, 0 when the
 * attempt is not this agent's (PG_ECONFLICT set: "attempt N is not this
 * agent's"), -1 on error (PG_ENOTFOUND "no such job", or the store's).
 */
static int sched_own_attempt(struct store *st, int64_t agent_id, int64_t job_id,
			     int64_t attempt, struct sched_job *j, struct sched_attempt *a,
			     struct pg_err *err)
{
	int found = sched_job_get(st, job_id, j, err);

	if (found < 0)
		return -1;
	if (!found)
		return pg_err_set(err, PG_ENOTFOUND, "no such job");
	found = attempt <= j->attempt ? sched_attempt_get(st, job_id, attempt, a, err) : 0;
	if (found < 0)
		return -1;
	if (!found || a->agent_id != agent_id) {
		pg_err_set(err, PG_ECONFLICT, "attempt %lld is not this agent's",
			   (long long)attempt);
		return 0;
	}
	return 1;
}

/* The job's current attempt expired (the sweep requeued the job or gave up
 * on it) and nobody leased it since: its holder may still finish it. */
static bool sched_expired_unclaimed(const struct sched_job *j, const struct sched_attempt *a)
{
	return (!strcmp(j->state, "queued") || !strcmp(j->state, "infra-error")) &&
	       !strcmp(a->outcome, "expired");
}

/*
 * End job_id as infra-error after its last attempt: outcome_detail names
 * every attempt, its agent and how it ended (read after the caller closed
 * the last one), e.g. "gave up after 2 attempts: attempt 1 on agent a:
 * expired: lease expired at ...; attempt 2 on agent b: infra-error: ...".
 */
static int sched_give_up(struct store *st, int64_t job_id, int64_t now, struct pg_err *err)
{
	static const char what[] = "list attempts";
	struct pg_buf list = PG_BUF_INIT(SCHED_TEXT_MAX);
	struct pg_buf detail = PG_BUF_INIT(SCHED_TEXT_MAX + 64);
	sqlite3_stmt *stmt = NULL;
	int64_t n = 0;
	int rc = -1, row;

	if (store_prepare(st, &stmt,
			  "SELECT a.attempt, coalesce(ag.name, '(deleted)'),"
			  " coalesce(a.outcome, 'open'), coalesce(a.reason, '')"
			  " FROM attempts a LEFT JOIN agents ag ON ag.id = a.agent_id"
			  " WHERE a.job_id = ?1 ORDER BY a.attempt", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(job_id)), what, err) < 0)
		goto out;
	/* Each reason is cut at 200 bytes and there are at most
	 * SCHED_MAX_ATTEMPTS attempts, so the text stays within its cap. */
	while ((row = store_step(stmt, what, err)) > 0) {
		const char *reason = (const char *)sqlite3_column_text(stmt, 3);

		if (pg_buf_printf(&list, "%sattempt %lld on agent %s: %s%s%.200s",
				  n ? "; " : "", (long long)sqlite3_column_int64(stmt, 0),
				  (const char *)sqlite3_column_text(stmt, 1),
				  (const char *)sqlite3_column_text(stmt, 2),
				  reason && *reason ? ": " : "", reason ? reason : "") < 0)
			goto nomem;
		n++;
	}
	if (row < 0)
		goto out;
	if (pg_buf_printf(&detail, "gave up after %lld attempt%s: %s", (long long)n,
			  n == 1 ? "" : "s", pg_buf_str(&list)) < 0)
		goto nomem;
	if (store_run(st, "give up job",
		      "UPDATE jobs SET state = 'infra-error', outcome = 'infra-error',"
		      " outcome_detail = ?2, finished_at = ?3, lease_expires = NULL WHERE id = ?1",
		      STORE_ARGS(STORE_INT(job_id), STORE_TEXT(pg_buf_str(&detail)),
				 STORE_INT(now)), err) < 0)
		goto out;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "describe attempts of job %lld: out of memory",
		   (long long)job_id);
out:
	store_done(st, stmt);
	pg_buf_release(&list);
	pg_buf_release(&detail);
	return rc;
}

/* ---- agents ------------------------------------------------------------ */

int sched_agent_add(struct store *st, const char *name, const struct sched_labels *labels,
		    const char *token_hash_hex, int64_t now, int64_t *agent_id,
		    struct pg_err *err)
{
	static const struct sched_labels none = { NULL, NULL, 0 };
	char hash[SCHED_HASH_MAX + 1];
	char *labels_json = NULL;
	int64_t n;
	int rc = -1;

	*agent_id = 0;
	if (now < 0) {
		pg_err_set(err, PG_EINVAL, "negative time");
		goto out;
	}
	if (!sched_is_name(name, SCHED_NAME_MAX)) {
		pg_err_set(err, PG_EINVAL, "agent name must be 1 to %d of [A-Za-z0-9_.-]",
			   SCHED_NAME_MAX);
		goto out;
	}
	if (token_hash_hex && sched_hex(token_hash_hex, "token hash", hash, err) < 0)
		goto out;
	if (sched_labels_json(labels ? labels : &none, &labels_json, err) < 0)
		goto out;
	if (store_begin(st, err) < 0)
		goto out;
	/* Look first, so that a clash reads as one rather than as SQLite's
	 * "UNIQUE constraint failed". */
	if (store_query_int(st, "look up agent name",
			    "SELECT count(*) FROM agents WHERE name = ?1",
			    STORE_ARGS(STORE_TEXT(name)), &n, err) < 0)
		goto out;
	if (n) {
		pg_err_set(err, PG_ECONFLICT, "an agent named '%s' already exists", name);
		goto out;
	}
	if (token_hash_hex) {
		if (store_query_int(st, "look up token hash",
				    "SELECT count(*) FROM agents WHERE token_hash = ?1",
				    STORE_ARGS(STORE_TEXT(hash)), &n, err) < 0)
			goto out;
		if (n) {
			pg_err_set(err, PG_ECONFLICT, "that token hash belongs to another agent");
			goto out;
		}
	}
	if (store_run(st, "insert agent",
		      "INSERT INTO agents (name, transport, token_hash, labels, created_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?5)",
		      STORE_ARGS(STORE_TEXT(name), STORE_TEXT(token_hash_hex ? "http" : "ssh"),
				 token_hash_hex ? STORE_TEXT(hash) : STORE_NULL,
				 STORE_TEXT(labels_json), STORE_INT(now)), err) < 0)
		goto out;
	n = store_last_id(st);
	if (store_commit(st, err) < 0)
		goto out;
	*agent_id = n;
	rc = 0;
out:
	store_rollback(st);
	free(labels_json);
	if (rc)
		pg_err_prefix(err, "add agent '%s'", name ? name : "");
	return rc;
}

int sched_agent_ssh(struct store *st, const char *name, const char *token_hash_hex,
		    int64_t now, int64_t *agent_id, struct pg_err *err)
{
	char hash[SCHED_HASH_MAX + 1];
	int64_t id = 0, is_ssh = 0;
	int rc = -1;

	*agent_id = 0;
	if (now < 0 || !sched_is_name(name, SCHED_NAME_MAX)) {
		pg_err_set(err, PG_EINVAL, "agent name must be 1 to %d of [A-Za-z0-9_.-]",
			   SCHED_NAME_MAX);
		goto out;
	}
	if (sched_hex(token_hash_hex, "token hash", hash, err) < 0 || store_begin(st, err) < 0 ||
	    store_query_id(st, "look up agent", "SELECT id FROM agents WHERE name = ?1",
			   STORE_ARGS(STORE_TEXT(name)), &id, err) < 0)
		goto out;
	if (id) {
		if (store_query_int(st, "look up transport",
				    "SELECT transport = 'ssh' FROM agents WHERE id = ?1",
				    STORE_ARGS(STORE_INT(id)), &is_ssh, err) < 0)
			goto out;
		if (!is_ssh) {
			pg_err_set(err, PG_ECONFLICT, "an agent named '%s' already exists and runs "
				   "a daemon: an SSH host needs a name of its own", name);
			goto out;
		}
		if (store_run(st, "renew SSH host token",
			      "UPDATE agents SET token_hash = ?2 WHERE id = ?1",
			      STORE_ARGS(STORE_INT(id), STORE_TEXT(hash)), err) < 0)
			goto out;
	} else {
		if (store_run(st, "insert SSH host",
			      "INSERT INTO agents (name, transport, token_hash, created_at)"
			      " VALUES (?1, 'ssh', ?2, ?3)",
			      STORE_ARGS(STORE_TEXT(name), STORE_TEXT(hash), STORE_INT(now)), err) < 0)
			goto out;
		id = store_last_id(st);
	}
	if (store_commit(st, err) < 0)
		goto out;
	*agent_id = id;
	rc = 0;
out:
	store_rollback(st);
	if (rc)
		pg_err_prefix(err, "SSH host '%s'", name ? name : "");
	return rc;
}

int sched_agent_update_tx(struct store *st, int64_t agent_id, const struct sched_labels *labels,
			  const char *facts_json, int64_t now, struct pg_err *err)
{
	char *labels_json = NULL, *facts = NULL;
	int rc = -1;

	if (agent_id <= 0 || now < 0) {
		pg_err_set(err, PG_EINVAL, "bad agent id or time");
		goto out;
	}
	if (labels && sched_labels_json(labels, &labels_json, err) < 0)
		goto out;
	if (facts_json && sched_json_object(facts_json, SCHED_FACTS_MAX, "facts", &facts, err) < 0)
		goto out;
	if (store_run(st, "update agent",
		      "UPDATE agents SET labels = coalesce(?2, labels), facts = coalesce(?3, facts),"
		      " last_seen = max(coalesce(last_seen, ?4), ?4) WHERE id = ?1",
		      STORE_ARGS(STORE_INT(agent_id), STORE_TEXT(labels_json), STORE_TEXT(facts),
				 STORE_INT(now)), err) < 0)
		goto out;
	if (store_changes(st) != 1) {
		pg_err_set(err, PG_ENOTFOUND, "no such agent");
		goto out;
	}
	rc = 0;
out:
	free(labels_json);
	free(facts);
	if (rc)
		pg_err_prefix(err, "update agent %lld", (long long)agent_id);
	return rc;
}

int sched_agent_update(struct store *st, int64_t agent_id, const struct sched_labels *labels,
		       const char *facts_json, int64_t now, struct pg_err *err)
{
	int rc = -1;

	if (store_begin(st, err) < 0)
		goto out;
	if (sched_agent_update_tx(st, agent_id, labels, facts_json, now, err) < 0)
		return sched_abort(st);
	rc = store_commit(st, err);
out:
	store_rollback(st);
	if (rc)
		pg_err_prefix(err, "update agent %lld", (long long)agent_id);
	return rc;
}

int sched_agent_by_token(struct store *st, const char *token_hash_hex,
			 struct sched_agent *out, struct pg_err *err)
{
	static const char what[] = "look up agent by token";
	char hash[SCHED_HASH_MAX + 1];
	sqlite3_stmt *stmt = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (sched_hex(token_hash_hex, "token hash", hash, err) < 0)
		goto out;
	rc = sched_row(st, &stmt,
		       "SELECT id, name, enabled, coalesce(last_seen, 0) FROM agents"
		       " WHERE token_hash = ?1", what, STORE_ARGS(STORE_TEXT(hash)), err);
	if (rc <= 0)
		goto out;
	out->id = sqlite3_column_int64(stmt, 0);
	out->enabled = sqlite3_column_int(stmt, 2) != 0;
	out->last_seen = sqlite3_column_int64(stmt, 3);
	if (sched_col_text(stmt, 1, out->name, sizeof(out->name), what, err) < 0) {
		memset(out, 0, sizeof(*out));
		rc = -1;
	}
out:
	store_done(st, stmt);
	return rc;
}

int sched_agent_seen(struct store *st, int64_t agent_id, int64_t now, struct pg_err *err)
{
	if (agent_id <= 0 || now < 0)
		return pg_err_set(err, PG_EINVAL, "note agent seen: bad agent id or time");
	/* One statement is its own transaction; the condition skips the
	 * write for a second request within the same second. */
	return store_run(st, "note agent seen",
			 "UPDATE agents SET last_seen = ?2 WHERE id = ?1"
			 " AND (last_seen IS NULL OR last_seen < ?2)",
			 STORE_ARGS(STORE_INT(agent_id), STORE_INT(now)), err);
}

/* ---- leases ------------------------------------------------------------ */

void sched_lease_release(struct sched_lease *l)
{
	if (!l)
		return;
	free(l->spec);
	memset(l, 0, sizeof(*l));
}

/*
 * The host classes of ps that an agent with the stored labels (a JSON
 * object) belongs to, as ",a,b," in *classes: the lease query looks a
 * job's class up in it with instr(), which is safe because class names
 * cannot hold a comma.  Empty (no class) is "".
 */
int sched_agent_classes(const char *labels_json, const struct profile_set *ps,
			struct pg_buf *classes, struct pg_err *err)
{
	const char *keys[SCHED_MAX_LABELS], *values[SCHED_MAX_LABELS];
	const cJSON *item;
	cJSON *obj = NULL;
	size_t n = 0;
	int rc = -1;

	if (pg_json_parse(labels_json, strlen(labels_json), &obj, err) < 0)
		goto out;
	if (!cJSON_IsObject(obj)) {
		pg_err_set(err, PG_EINVAL, "expected an object, got %s", pg_json_type_name(obj));
		goto out;
	}
	cJSON_ArrayForEach(item, obj) {
		if (n >= SCHED_MAX_LABELS) {
			pg_err_set(err, PG_EINVAL, "more than %d labels", SCHED_MAX_LABELS);
			goto out;
		}
		if (!cJSON_IsString(item) || !item->string) {
			pg_err_set(err, PG_EINVAL, "label '%s': expected a string, got %s",
				   item->string ? item->string : "", pg_json_type_name(item));
			goto out;
		}
		keys[n] = item->string;
		values[n] = item->valuestring;
		n++;
	}
	for (size_t i = 0; i < ps->n_host_classes; i++) {
		const struct profile_host_class *hc = &ps->host_classes[i];

		if (!profile_host_class_matches(hc, keys, values, n))
			continue;
		if (pg_buf_printf(classes, "%s%s,", classes->len ? "" : ",", hc->name) < 0) {
			pg_buf_err(classes, err, "list host classes");
			goto out;
		}
	}
	rc = 0;
out:
	cJSON_Delete(obj);
	if (rc)
		pg_err_prefix(err, "stored labels");
	return rc;
}

/* Pick the job to lease (see "Fairness" in sched.h) and fill out from it:
 * 1 when one was found, 0 when none, -1. */
static int sched_pick(struct store *st, const char *classes, int64_t agent_id,
		      struct sched_lease *out, struct pg_err *err)
{
	static const char what[] = "pick job";
	sqlite3_stmt *stmt = NULL;
	const char *spec;
	int rc;

	/*
	 * jobs.served is the sum of jobs.attempt over the job's run and host
	 * class (the number of leases the run has had on this class of
	 * host) and jobs.boost whether the run is a recheck or its series has
	 * one patch, both kept by triggers (schema.c, step 4).  jobs_pick
	 * holds the queued jobs in this order, so the first that matches is
	 * the answer; without statistics the planner would rather use
	 * jobs_state and sort every queued job, hence INDEXED BY.
	 */
	rc = sched_row(st, &stmt,
		       "SELECT j.id, j.attempt, j.run_id, r.series_id, j.context, j.host_class,"
		       " j.build_mode, j.spec"
		       " FROM jobs j INDEXED BY jobs_pick JOIN runs r ON r.id = j.run_id"
		       " WHERE j.state = 'queued' AND j.priority >= 0"
		       " AND instr(?1, ',' || j.host_class || ',') > 0"
		       " AND (j.pin_agent_id IS NULL OR j.pin_agent_id = ?2)"
		       " ORDER BY j.priority DESC, j.served ASC, j.boost DESC,"
		       " j.created_at ASC, j.id ASC"
		       " LIMIT 1",
		       what, STORE_ARGS(STORE_TEXT(classes), STORE_INT(agent_id)), err);
	if (rc <= 0)
		goto out;
	out->job_id = sqlite3_column_int64(stmt, 0);
	out->attempt = sqlite3_column_int64(stmt, 1) + 1;
	out->run_id = sqlite3_column_int64(stmt, 2);
	out->series_id = sqlite3_column_int64(stmt, 3);
	if (sched_col_text(stmt, 4, out->context, sizeof(out->context), what, err) < 0 ||
	    sched_col_text(stmt, 5, out->host_class, sizeof(out->host_class), what, err) < 0 ||
	    sched_col_text(stmt, 6, out->build_mode, sizeof(out->build_mode), what, err) < 0) {
		rc = -1;
		goto out;
	}
	spec = (const char *)sqlite3_column_text(stmt, 7);
	out->spec = strdup(spec ? spec : "{}");
	if (!out->spec) {
		pg_err_set(err, PG_ENOMEM, "copy job spec: out of memory");
		rc = -1;
	}
out:
	store_done(st, stmt);
	return rc;
}

int sched_lease_tx(struct store *st, int64_t agent_id, const struct profile_set *ps,
		   int64_t now, int64_t lease_s, struct sched_lease *out, struct pg_err *err)
{
	static const char what[] = "read agent";
	struct pg_buf classes = PG_BUF_INIT(PG_BUF_NOLIMIT);
	sqlite3_stmt *stmt = NULL;
	int64_t held = 0;
	bool enabled, drained = false;
	char *labels = NULL, *name = NULL;
	int rc = -1, found;

	memset(out, 0, sizeof(*out));
	if (agent_id <= 0 || !ps || now < 0 || lease_s <= 0 || lease_s > SCHED_LEASE_MAX_S) {
		pg_err_set(err, PG_EINVAL, "bad agent id, profile set, time or lease time");
		goto out;
	}
	found = sched_row(st, &stmt, "SELECT enabled, labels, name FROM agents WHERE id = ?1",
			  what, STORE_ARGS(STORE_INT(agent_id)), err);
	if (found < 0)
		goto out;
	if (!found) {
		pg_err_set(err, PG_ENOTFOUND, "no such agent");
		goto out;
	}
	enabled = sqlite3_column_int(stmt, 0) != 0;
	labels = strdup(sqlite3_column_text(stmt, 1) ?
			(const char *)sqlite3_column_text(stmt, 1) : "{}");
	name = strdup(sqlite3_column_text(stmt, 2) ?
		      (const char *)sqlite3_column_text(stmt, 2) : "");
	if (!labels || !name) {
		pg_err_set(err, PG_ENOMEM, "copy labels: out of memory");
		goto out;
	}
	store_done(st, stmt);
	stmt = NULL;
	/* A host drained for drift (drift.h) waits for an operator. */
	if (enabled && drift_drained(st, name, &drained, err) < 0)
		goto out;
	if (!enabled || drained) {
		rc = 0;
		goto out;
	}
	/* One job per host: benchmarks need the whole machine. */
	found = sched_row(st, &stmt,
			  "SELECT id FROM jobs WHERE agent_id = ?1 AND state IN ('leased', 'running')",
			  "find held job", STORE_ARGS(STORE_INT(agent_id)), err);
	if (found < 0)
		goto out;
	if (found) {
		held = sqlite3_column_int64(stmt, 0);
		rc = 0;
		goto out;
	}
	store_done(st, stmt);
	stmt = NULL;
	if (sched_agent_classes(labels, ps, &classes, err) < 0)
		goto out;
	if (!classes.len) {
		rc = 0;
		goto out;
	}
	found = sched_pick(st, pg_buf_str(&classes), agent_id, out, err);
	if (found <= 0) {
		rc = found;
		goto out;
	}
	out->lease_expires = now + lease_s;
	if (store_run(st, "lease job",
		      "UPDATE jobs SET state = 'leased', attempt = ?2, agent_id = ?3,"
		      " lease_expires = ?4, started_at = ?5, stage = NULL, progress = NULL,"
		      " stage_at = NULL, outcome_detail = NULL"
		      " WHERE id = ?1 AND state = 'queued' AND attempt = ?2 - 1",
		      STORE_ARGS(STORE_INT(out->job_id), STORE_INT(out->attempt),
				 STORE_INT(agent_id), STORE_INT(out->lease_expires),
				 STORE_INT(now)), err) < 0)
		goto out;
	if (store_changes(st) != 1) {
		pg_err_set(err, PG_EDB, "lease job %lld: the job changed under us",
			   (long long)out->job_id);
		goto out;
	}
	if (store_run(st, "record attempt",
		      "INSERT INTO attempts (job_id, attempt, agent_id, started_at)"
		      " VALUES (?1, ?2, ?3, ?4)",
		      STORE_ARGS(STORE_INT(out->job_id), STORE_INT(out->attempt),
				 STORE_INT(agent_id), STORE_INT(now)), err) < 0)
		goto out;
	rc = 1;
out:
	store_done(st, stmt);
	free(labels);
	free(name);
	pg_buf_release(&classes);
	if (rc <= 0)
		sched_lease_release(out);
	if (rc == 0)
		out->held_job_id = held;
	if (rc < 0)
		pg_err_prefix(err, "lease for agent %lld", (long long)agent_id);
	return rc;
}

int sched_lease(struct store *st, int64_t agent_id, const struct profile_set *ps,
		int64_t now, int64_t lease_s, struct sched_lease *out, struct pg_err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (store_begin(st, err) < 0) {
		pg_err_prefix(err, "lease for agent %lld", (long long)agent_id);
		return -1;
	}
	rc = sched_lease_tx(st, agent_id, ps, now, lease_s, out, err);
	if (rc > 0 && store_commit(st, err) < 0) {
		sched_lease_release(out);
		pg_err_prefix(err, "lease for agent %lld", (long long)agent_id);
		rc = -1;
	}
	/* Nothing was written unless the commit above went through. */
	store_rollback(st);
	return rc;
}

/* ---- heartbeats -------------------------------------------------------- */

/* Take back the lease of an expired attempt that nobody leased since
 * ("Late work" in sched.h). */
static int sched_take_back(struct store *st, int64_t agent_id, int64_t job_id,
			   int64_t attempt, int64_t now, int64_t lease_s, struct pg_err *err)
{
	char when[PG_TIME_UTC_MAX], note[64 + PG_TIME_UTC_MAX];
	struct pg_err e = PG_ERR_INIT;
	int64_t other;

	/* The index would refuse a second held job; say which one. */
	if (store_query_int(st, "find held job",
			    "SELECT id FROM jobs WHERE agent_id = ?1 AND state IN ('leased', 'running')",
			    STORE_ARGS(STORE_INT(agent_id)), &other, &e) == 0)
		return pg_err_set(err, PG_ECONFLICT,
				  "stale attempt: its lease expired and the agent holds job %lld now",
				  (long long)other);
	if (e.code != PG_ENOTFOUND) {
		if (err)
			*err = e;
		return -1;
	}
	sched_fmt_time(now, when);
	pg_fmt_cut(note, sizeof(note), "taken back by a heartbeat at %s", when);
	if (store_run(st, "take lease back",
		      "UPDATE jobs SET state = 'running', agent_id = ?2, lease_expires = ?3,"
		      " outcome = NULL, outcome_detail = NULL, finished_at = NULL"
		      " WHERE id = ?1 AND attempt = ?4",
		      STORE_ARGS(STORE_INT(job_id), STORE_INT(agent_id),
				 STORE_INT(now + lease_s), STORE_INT(attempt)), err) < 0)
		return -1;
	return store_run(st, "reopen attempt",
			 "UPDATE attempts SET ended_at = NULL, outcome = NULL,"
			 " reason = coalesce(reason || '; ', '') || ?3"
			 " WHERE job_id = ?1 AND attempt = ?2",
			 STORE_ARGS(STORE_INT(job_id), STORE_INT(attempt), STORE_TEXT(note)), err);
}

int sched_heartbeat_tx(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
		       const char *stage, int progress, int64_t now, int64_t lease_s,
		       bool *cancel, struct pg_err *err)
{
	struct sched_attempt a;
	struct sched_job j;
	bool running;
	int rc = -1, found;

	*cancel = false;
	if (agent_id <= 0 || job_id <= 0 || attempt <= 0 || now < 0) {
		pg_err_set(err, PG_EINVAL, "bad agent, job or attempt number, or time");
		goto out;
	}
	if (lease_s <= 0 || lease_s > SCHED_LEASE_MAX_S) {
		pg_err_set(err, PG_EINVAL, "lease time %lld out of range 1..%d",
			   (long long)lease_s, SCHED_LEASE_MAX_S);
		goto out;
	}
	if (stage && !sched_is_line(stage, SCHED_STAGE_MAX)) {
		pg_err_set(err, PG_EINVAL, "stage must be 1 to %d bytes without control characters",
			   SCHED_STAGE_MAX);
		goto out;
	}
	if (progress < -1 || progress > 100) {
		pg_err_set(err, PG_EINVAL, "progress %d out of range 0..100 (or -1)", progress);
		goto out;
	}
	found = sched_own_attempt(st, agent_id, job_id, attempt, &j, &a, err);
	if (found <= 0) {
		if (found == 0)
			pg_err_prefix(err, "stale attempt");
		goto out;
	}
	if (attempt != j.attempt) {
		pg_err_set(err, PG_ECONFLICT,
			   "stale attempt: the job was leased again (attempt %lld)",
			   (long long)j.attempt);
		goto out;
	}
	if (!strcmp(j.state, "cancelled")) {
		/* The agent must stop: no renewal, nothing to record. */
		*cancel = true;
		rc = 0;
		goto out;
	}
	if (sched_expired_unclaimed(&j, &a)) {
		if (sched_take_back(st, agent_id, job_id, attempt, now, lease_s, err) < 0)
			goto out;
	} else if (strcmp(j.state, "leased") && strcmp(j.state, "running")) {
		pg_err_set(err, PG_ECONFLICT, "stale attempt: the job is %s", j.state);
		goto out;
	}
	/* stage_at tells how long the agent has been in its stage, so it
	 * moves only when the stage changes.  A job already running keeps
	 * state out of the SET list: SQLite then leaves alone the indexes
	 * that name state and no other column a renewal changes (jobs_state
	 * and three partial ones), whose entries every renewal rewrote
	 * unchanged: index work in the writer and pages in the WAL that each
	 * sync must write. */
#define SCHED_RENEW " lease_expires = ?2," \
	" stage_at = CASE WHEN ?3 IS NULL OR stage IS ?3 THEN stage_at ELSE ?4 END," \
	" stage = coalesce(?3, stage), progress = ?5 WHERE id = ?1"
	running = !strcmp(j.state, "running");
	if (store_run(st, "renew lease",
		      running ? "UPDATE jobs SET" SCHED_RENEW
			      : "UPDATE jobs SET state = 'running'," SCHED_RENEW,
		      STORE_ARGS(STORE_INT(job_id), STORE_INT(now + lease_s), STORE_TEXT(stage),
				 STORE_INT(now), progress < 0 ? STORE_NULL : STORE_INT(progress)),
		      err) < 0)
		goto out;
#undef SCHED_RENEW
	rc = 0;
out:
	if (rc)
		pg_err_prefix(err, "heartbeat for job %lld attempt %lld", (long long)job_id,
			      (long long)attempt);
	return rc;
}

int sched_heartbeat(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
		    const char *stage, int progress, int64_t now, int64_t lease_s,
		    bool *cancel, struct pg_err *err)
{
	int rc = -1;

	*cancel = false;
	if (store_begin(st, err) < 0)
		goto out;
	if (sched_heartbeat_tx(st, agent_id, job_id, attempt, stage, progress, now, lease_s,
			       cancel, err) < 0)
		return sched_abort(st);
	rc = store_commit(st, err);
out:
	store_rollback(st);
	if (rc) {
		*cancel = false;
		pg_err_prefix(err, "heartbeat for job %lld attempt %lld", (long long)job_id,
			      (long long)attempt);
	}
	return rc;
}

/* ---- results ----------------------------------------------------------- */

static int sched_check_result(const struct sched_result_in *res, struct pg_err *err)
{
	if (!sched_is_outcome(res->outcome))
		return pg_err_set(err, PG_EINVAL,
				  "outcome '%.64s' is not one of ok, apply-failure, base-build-failure,"
				  " patched-build-failure, bench-failure, infra-error",
				  res->outcome ? res->outcome : "");
	if (res->detail && !sched_is_text(res->detail, SCHED_TEXT_MAX))
		return pg_err_set(err, PG_ETOOBIG, "detail: more than %d bytes", SCHED_TEXT_MAX);
	if (res->n_samples > SCHED_MAX_SAMPLES)
		return pg_err_set(err, PG_ETOOBIG, "%zu samples, at most %d", res->n_samples,
				  SCHED_MAX_SAMPLES);
	if (res->n_samples && !res->samples)
		return pg_err_set(err, PG_EINVAL, "samples missing");
	for (size_t i = 0; i < res->n_samples; i++) {
		const struct sched_sample *s = &res->samples[i];

		if (!s->side || (strcmp(s->side, "base") && strcmp(s->side, "patched")))
			return pg_err_set(err, PG_EINVAL,
					  "sample %zu: side must be base or patched", i);
		if (!sched_is_line(s->benchmark, SCHED_SAMPLE_NAME_MAX) ||
		    !sched_is_line(s->metric, SCHED_SAMPLE_NAME_MAX))
			return pg_err_set(err, PG_EINVAL,
					  "sample %zu: benchmark and metric must be 1 to %d bytes"
					  " without control characters", i, SCHED_SAMPLE_NAME_MAX);
		if (s->unit && *s->unit && !sched_is_line(s->unit, SCHED_SAMPLE_NAME_MAX))
			return pg_err_set(err, PG_EINVAL,
					  "sample %zu: unit must be at most %d bytes"
					  " without control characters", i, SCHED_SAMPLE_NAME_MAX);
		if (s->repetition < 0 || s->repetition > SCHED_REPETITION_MAX)
			return pg_err_set(err, PG_EINVAL, "sample %zu: repetition %lld is not in"
					  " 0..%d", i, (long long)s->repetition,
					  SCHED_REPETITION_MAX);
		if (!isfinite(s->value))
			return pg_err_set(err, PG_EINVAL, "sample %zu: value is not a finite number",
					  i);
	}
	return 0;
}

/* Store the results row and its samples. */
static int sched_store_result(struct store *st, int64_t job_id, int64_t attempt,
			      const struct sched_result_in *res, const char *fingerprint,
			      const char *digest, int64_t now, struct pg_err *err)
{
	static const char what[] = "insert sample";
	sqlite3_stmt *stmt = NULL;
	int rc = -1;

	if (store_run(st, "insert result",
		      "INSERT INTO results (job_id, attempt, outcome, detail, fingerprint, digest,"
		      " received_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		      STORE_ARGS(STORE_INT(job_id), STORE_INT(attempt), STORE_TEXT(res->outcome),
				 STORE_TEXT(res->detail), STORE_TEXT(fingerprint),
				 STORE_TEXT(digest), STORE_INT(now)), err) < 0)
		goto out;
	if (store_prepare(st, &stmt,
			  "INSERT INTO samples (job_id, attempt, side, benchmark, metric, repetition,"
			  " value, unit) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", what, err) < 0)
		goto out;
	for (size_t i = 0; i < res->n_samples; i++) {
		const struct sched_sample *s = &res->samples[i];

		sqlite3_reset(stmt);
		if (store_bind(stmt, STORE_ARGS(STORE_INT(job_id), STORE_INT(attempt),
						STORE_TEXT(s->side), STORE_TEXT(s->benchmark),
						STORE_TEXT(s->metric), STORE_INT(s->repetition),
						STORE_REAL(s->value),
						STORE_TEXT(s->unit ? s->unit : "")), what, err) < 0)
			goto out;
		if (store_step(stmt, what, err) < 0) {
			/* Everything else was checked: a violated constraint is
			 * the primary key, a sample given twice. */
			if (err && err->code == PG_ECONFLICT)
				pg_err_set(err, PG_EINVAL,
					   "sample %zu repeats the side, benchmark, metric and"
					   " repetition of an earlier one", i);
			goto out;
		}
	}
	rc = 0;
out:
	store_done(st, stmt);
	return rc;
}

/* The digest of the result already stored for (job, attempt) into
 * out[SCHED_HASH_MAX + 1]: 1, or 0 when there is none, or -1. */
static int sched_result_digest(struct store *st, int64_t job_id, int64_t attempt, char *out,
			       struct pg_err *err)
{
	static const char what[] = "look up result";
	sqlite3_stmt *stmt = NULL;
	int rc;

	out[0] = '\0';
	rc = sched_row(st, &stmt, "SELECT digest FROM results WHERE job_id = ?1 AND attempt = ?2",
		       what, STORE_ARGS(STORE_INT(job_id), STORE_INT(attempt)), err);
	if (rc > 0 && sched_col_text(stmt, 0, out, SCHED_HASH_MAX + 1, what, err) < 0)
		rc = -1;
	store_done(st, stmt);
	return rc;
}

/* The job's next state after attempt `attempt` ended with res. */
static int sched_finish(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
			const struct sched_result_in *res, int64_t now, int64_t max_attempts,
			struct pg_err *err)
{
	char detail[320];

	if (strcmp(res->outcome, "infra-error"))
		return store_run(st, "finish job",
				 "UPDATE jobs SET state = 'done', outcome = ?2, outcome_detail = ?3,"
				 " finished_at = ?4, agent_id = ?5, lease_expires = NULL WHERE id = ?1",
				 STORE_ARGS(STORE_INT(job_id), STORE_TEXT(res->outcome),
					    STORE_TEXT(res->detail), STORE_INT(now),
					    STORE_INT(agent_id)), err);
	/* The host failed, not the patch: another attempt may succeed. */
	if (attempt >= max_attempts)
		return sched_give_up(st, job_id, now, err);
	pg_fmt_cut(detail, sizeof(detail), "attempt %lld reported infra-error%s%.256s",
		   (long long)attempt, res->detail ? ": " : "", res->detail ? res->detail : "");
	return store_run(st, "requeue job",
			 "UPDATE jobs SET state = 'queued', agent_id = NULL, lease_expires = NULL,"
			 " outcome = NULL, outcome_detail = ?2, finished_at = NULL WHERE id = ?1",
			 STORE_ARGS(STORE_INT(job_id), STORE_TEXT(detail)), err);
}

int sched_result_tx(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
		    const struct sched_result_in *res, int64_t now, int64_t max_attempts,
		    enum sched_result_status *status, struct pg_err *err)
{
	char digest[SCHED_HASH_MAX + 1], stored[SCHED_HASH_MAX + 1];
	char when[PG_TIME_UTC_MAX], note[64 + PG_TIME_UTC_MAX];
	char *fingerprint = NULL;
	struct sched_attempt a;
	struct sched_job j;
	bool late;
	int rc = -1, found;

	*status = SCHED_RESULT_FAILED;
	if (agent_id <= 0 || job_id <= 0 || attempt <= 0 || !res || now < 0) {
		pg_err_set(err, PG_EINVAL, "bad agent, job or attempt number, or time");
		goto out;
	}
	if (max_attempts < 1 || max_attempts > SCHED_MAX_ATTEMPTS) {
		pg_err_set(err, PG_EINVAL, "max_attempts %lld out of range 1..%d",
			   (long long)max_attempts, SCHED_MAX_ATTEMPTS);
		goto out;
	}
	if (sched_check_result(res, err) < 0 || sched_hex(res->digest_hex, "digest", digest, err) < 0)
		goto out;
	if (sched_json_object(res->fingerprint_json ? res->fingerprint_json : "{}",
			      SCHED_FINGERPRINT_MAX, "fingerprint", &fingerprint, err) < 0)
		goto out;
	found = sched_own_attempt(st, agent_id, job_id, attempt, &j, &a, err);
	if (found < 0)
		goto out;
	if (found == 0)
		goto conflict;
	found = sched_result_digest(st, job_id, attempt, stored, err);
	if (found < 0)
		goto out;
	if (found) {
		if (strcmp(stored, digest)) {
			pg_err_set(err, PG_ECONFLICT,
				   "a different result was already recorded for this attempt");
			goto conflict;
		}
		*status = SCHED_RESULT_DUPLICATE;
		rc = 0;
		goto out;
	}
	if (attempt != j.attempt) {
		pg_err_set(err, PG_ECONFLICT,
			   "stale attempt: its lease expired and the job was leased again"
			   " (attempt %lld)", (long long)j.attempt);
		goto conflict;
	}
	if (!strcmp(j.state, "cancelled")) {
		/* Keep what the agent sends, so that its spool empties and a
		 * retry is a duplicate, but the job stays cancelled. */
		if (sched_store_result(st, job_id, attempt, res, fingerprint, digest, now, err) < 0)
			goto out;
		*status = SCHED_RESULT_ACKNOWLEDGED;
		rc = 0;
		goto out;
	}
	late = sched_expired_unclaimed(&j, &a);
	if (!late && strcmp(j.state, "leased") && strcmp(j.state, "running")) {
		pg_err_set(err, PG_ECONFLICT, "the job is %s", j.state);
		goto conflict;
	}
	sched_fmt_time(now, when);
	pg_fmt_cut(note, sizeof(note), "result arrived at %s", when);
	if (sched_store_result(st, job_id, attempt, res, fingerprint, digest, now, err) < 0)
		goto out;
	/* A late result keeps the story of its attempt: the expiry, then the
	 * result. */
	if (store_run(st, "end attempt",
		      "UPDATE attempts SET ended_at = ?3, outcome = ?4,"
		      " reason = CASE WHEN ?5 THEN coalesce(reason || '; ', '') || ?6 ELSE ?7 END"
		      " WHERE job_id = ?1 AND attempt = ?2",
		      STORE_ARGS(STORE_INT(job_id), STORE_INT(attempt), STORE_INT(now),
				 STORE_TEXT(res->outcome), STORE_INT(late), STORE_TEXT(note),
				 STORE_TEXT(res->detail)), err) < 0)
		goto out;
	if (sched_finish(st, agent_id, job_id, attempt, res, now, max_attempts, err) < 0)
		goto out;
	*status = SCHED_RESULT_RECORDED;
	rc = 0;
	goto out;
conflict:
	*status = SCHED_RESULT_CONFLICT;
out:
	free(fingerprint);
	if (rc)
		pg_err_prefix(err, "result for job %lld attempt %lld", (long long)job_id,
			      (long long)attempt);
	return rc;
}

int sched_result(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
		 const struct sched_result_in *res, int64_t now, int64_t max_attempts,
		 enum sched_result_status *status, struct pg_err *err)
{
	int rc = -1;

	*status = SCHED_RESULT_FAILED;
	if (store_begin(st, err) < 0)
		goto out;
	if (sched_result_tx(st, agent_id, job_id, attempt, res, now, max_attempts, status,
			    err) < 0)
		return sched_abort(st);
	rc = store_commit(st, err);
out:
	store_rollback(st);
	if (rc) {
		*status = SCHED_RESULT_FAILED;
		pg_err_prefix(err, "result for job %lld attempt %lld", (long long)job_id,
			      (long long)attempt);
	}
	return rc;
}

/* ---- expiry ------------------------------------------------------------ */

struct sched_expired {
	int64_t job_id;
	int64_t attempt;
	int64_t lease_expires;
	char agent[SCHED_NAME_MAX + 1];
};

/* The leases that expired before now, into a malloc'd array. */
static int sched_list_expired(struct store *st, int64_t now, struct sched_expired **list,
			      size_t *n, struct pg_err *err)
{
	static const char what[] = "list expired leases";
	sqlite3_stmt *stmt = NULL;
	size_t alloc = 0;
	int rc = -1, row;

	*list = NULL;
	*n = 0;
	if (store_prepare(st, &stmt,
			  "SELECT j.id, j.attempt, j.lease_expires, coalesce(ag.name, '(deleted)')"
			  " FROM jobs j LEFT JOIN attempts a ON a.job_id = j.id AND a.attempt = j.attempt"
			  " LEFT JOIN agents ag ON ag.id = a.agent_id"
			  " WHERE j.state IN ('leased', 'running') AND j.lease_expires < ?1"
			  " ORDER BY j.lease_expires, j.id", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(now)), what, err) < 0)
		goto out;
	while ((row = store_step(stmt, what, err)) > 0) {
		struct sched_expired *e;

		if (PG_GROW(*list, alloc, *n + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
			goto out;
		}
		e = &(*list)[*n];
		e->job_id = sqlite3_column_int64(stmt, 0);
		e->attempt = sqlite3_column_int64(stmt, 1);
		e->lease_expires = sqlite3_column_int64(stmt, 2);
		if (sched_col_text(stmt, 3, e->agent, sizeof(e->agent), what, err) < 0)
			goto out;
		(*n)++;
	}
	if (row < 0)
		goto out;
	rc = 0;
out:
	store_done(st, stmt);
	if (rc) {
		free(*list);
		*list = NULL;
		*n = 0;
	}
	return rc;
}

int sched_expire(struct store *st, int64_t now, int64_t max_attempts,
		 int64_t *n_requeued, int64_t *n_failed, struct pg_err *err)
{
	struct sched_expired *list = NULL;
	int64_t requeued = 0, failed = 0;
	size_t n = 0;
	int rc = -1;

	if (n_requeued)
		*n_requeued = 0;
	if (n_failed)
		*n_failed = 0;
	if (max_attempts < 1 || max_attempts > SCHED_MAX_ATTEMPTS || now < 0) {
		pg_err_set(err, PG_EINVAL, "max_attempts %lld out of range 1..%d, or negative time",
			   (long long)max_attempts, SCHED_MAX_ATTEMPTS);
		goto out;
	}
	if (store_begin(st, err) < 0)
		goto out;
	if (sched_list_expired(st, now, &list, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct sched_expired *e = &list[i];
		char when[PG_TIME_UTC_MAX], reason[160 + PG_TIME_UTC_MAX];
		char detail[sizeof(reason) + 32];

		sched_fmt_time(e->lease_expires, when);
		pg_fmt_cut(reason, sizeof(reason), "lease expired at %s (no heartbeat from agent "
			   "%s)", when, e->agent);
		if (store_run(st, "end expired attempt",
			      "UPDATE attempts SET ended_at = ?3, outcome = 'expired', reason = ?4"
			      " WHERE job_id = ?1 AND attempt = ?2",
			      STORE_ARGS(STORE_INT(e->job_id), STORE_INT(e->attempt),
					 STORE_INT(now), STORE_TEXT(reason)), err) < 0)
			goto out;
		if (e->attempt >= max_attempts) {
			if (sched_give_up(st, e->job_id, now, err) < 0)
				goto out;
			failed++;
			continue;
		}
		pg_fmt_cut(detail, sizeof(detail), "attempt %lld: %s", (long long)e->attempt,
			   reason);
		if (store_run(st, "requeue expired job",
			      "UPDATE jobs SET state = 'queued', agent_id = NULL, lease_expires = NULL,"
			      " outcome_detail = ?2 WHERE id = ?1",
			      STORE_ARGS(STORE_INT(e->job_id), STORE_TEXT(detail)), err) < 0)
			goto out;
		requeued++;
	}
	if (store_commit(st, err) < 0)
		goto out;
	if (n_requeued)
		*n_requeued = requeued;
	if (n_failed)
		*n_failed = failed;
	rc = 0;
out:
	store_rollback(st);
	free(list);
	if (rc)
		pg_err_prefix(err, "expire leases");
	return rc;
}

/* ---- cancellation ------------------------------------------------------ */

enum sched_scope {
	SCHED_SCOPE_JOB,
	SCHED_SCOPE_RUN,
	SCHED_SCOPE_SERIES,
};

/* Fixed SQL per scope: what exists, which jobs can still be cancelled, and
 * which runs end with them. */
static const struct {
	const char *name;
	const char *exists;
	const char *jobs;
	const char *runs;
} sched_scopes[] = {
	[SCHED_SCOPE_JOB] = {
		"job",
		"SELECT count(*) FROM jobs WHERE id = ?1",
		"SELECT id, attempt, state FROM jobs WHERE id = ?1"
		" AND state IN ('queued', 'leased', 'running')",
		NULL,
	},
	[SCHED_SCOPE_RUN] = {
		"run",
		"SELECT count(*) FROM runs WHERE id = ?1",
		"SELECT id, attempt, state FROM jobs WHERE run_id = ?1"
		" AND state IN ('queued', 'leased', 'running') ORDER BY id",
		"UPDATE runs SET state = 'cancelled', finished_at = ?2"
		" WHERE id = ?1 AND state IN ('planned', 'running')",
	},
	[SCHED_SCOPE_SERIES] = {
		"series",
		"SELECT count(*) FROM series WHERE id = ?1",
		"SELECT id, attempt, state FROM jobs WHERE run_id IN"
		" (SELECT id FROM runs WHERE series_id = ?1)"
		" AND state IN ('queued', 'leased', 'running') ORDER BY id",
		"UPDATE runs SET state = 'cancelled', finished_at = ?2"
		" WHERE series_id = ?1 AND state IN ('planned', 'running')",
	},
};

struct sched_victim {
	int64_t job_id;
	int64_t attempt;
	bool active;			/* leased or running */
};

static int sched_list_victims(struct store *st, enum sched_scope scope, int64_t id,
			      struct sched_victim **list, size_t *n, struct pg_err *err)
{
	static const char what[] = "list jobs to cancel";
	sqlite3_stmt *stmt = NULL;
	size_t alloc = 0;
	int rc = -1, row;

	*list = NULL;
	*n = 0;
	if (store_prepare(st, &stmt, sched_scopes[scope].jobs, what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(id)), what, err) < 0)
		goto out;
	while ((row = store_step(stmt, what, err)) > 0) {
		const char *state = (const char *)sqlite3_column_text(stmt, 2);
		struct sched_victim *v;

		if (PG_GROW(*list, alloc, *n + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
			goto out;
		}
		v = &(*list)[(*n)++];
		v->job_id = sqlite3_column_int64(stmt, 0);
		v->attempt = sqlite3_column_int64(stmt, 1);
		v->active = state && strcmp(state, "queued");
	}
	if (row < 0)
		goto out;
	rc = 0;
out:
	store_done(st, stmt);
	if (rc) {
		free(*list);
		*list = NULL;
		*n = 0;
	}
	return rc;
}

/* Cancel within the caller's transaction. */
static int sched_cancel_in(struct store *st, enum sched_scope scope, int64_t id,
			   const char *reason, int64_t now, struct sched_cancel_count *count,
			   struct pg_err *err)
{
	struct sched_cancel_count c = { 0, 0, 0 };
	struct sched_victim *list = NULL;
	size_t n = 0;
	int64_t exists;
	int rc = -1;

	if (id <= 0 || now < 0) {
		pg_err_set(err, PG_EINVAL, "bad %s id or time", sched_scopes[scope].name);
		goto out;
	}
	if (!sched_is_line(reason, SCHED_TEXT_MAX)) {
		pg_err_set(err, PG_EINVAL,
			   "reason must be 1 to %d bytes without control characters", SCHED_TEXT_MAX);
		goto out;
	}
	if (store_query_int(st, "look up", sched_scopes[scope].exists,
			    STORE_ARGS(STORE_INT(id)), &exists, err) < 0)
		goto out;
	if (!exists) {
		pg_err_set(err, PG_ENOTFOUND, "no such %s", sched_scopes[scope].name);
		goto out;
	}
	if (scope == SCHED_SCOPE_JOB &&
	    store_query_int(st, "look up the job's run", "SELECT run_id FROM jobs WHERE id = ?1",
			    STORE_ARGS(STORE_INT(id)), &c.run_id, err) < 0)
		goto out;
	if (sched_list_victims(st, scope, id, &list, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct sched_victim *v = &list[i];

		/* The agent learns it from its next heartbeat; its attempt ends
		 * now, so that a late result cannot finish the job. */
		if (v->active &&
		    store_run(st, "end cancelled attempt",
			      "UPDATE attempts SET ended_at = ?3, outcome = 'cancelled', reason = ?4"
			      " WHERE job_id = ?1 AND attempt = ?2 AND ended_at IS NULL",
			      STORE_ARGS(STORE_INT(v->job_id), STORE_INT(v->attempt),
					 STORE_INT(now), STORE_TEXT(reason)), err) < 0)
			goto out;
		if (store_run(st, "cancel job",
			      "UPDATE jobs SET state = 'cancelled', outcome_detail = ?2,"
			      " finished_at = ?3, lease_expires = NULL WHERE id = ?1",
			      STORE_ARGS(STORE_INT(v->job_id), STORE_TEXT(reason), STORE_INT(now)),
			      err) < 0)
			goto out;
		if (v->active)
			c.active++;
		else
			c.queued++;
	}
	if (sched_scopes[scope].runs &&
	    store_run(st, "cancel runs", sched_scopes[scope].runs,
		      STORE_ARGS(STORE_INT(id), STORE_INT(now)), err) < 0)
		goto out;
	if (count)
		*count = c;
	rc = 0;
out:
	free(list);
	return rc;
}

/* Cancel in a transaction of its own. */
static int sched_cancel(struct store *st, enum sched_scope scope, int64_t id,
			const char *reason, int64_t now, struct sched_cancel_count *count,
			struct pg_err *err)
{
	int rc = -1;

	if (count)
		memset(count, 0, sizeof(*count));
	if (store_begin(st, err) < 0)
		goto out;
	if (sched_cancel_in(st, scope, id, reason, now, count, err) < 0)
		goto out;
	if (store_commit(st, err) < 0)
		goto out;
	rc = 0;
out:
	store_rollback(st);
	if (rc) {
		if (count)
			memset(count, 0, sizeof(*count));
		pg_err_prefix(err, "cancel %s %lld", sched_scopes[scope].name, (long long)id);
	}
	return rc;
}

int sched_cancel_job(struct store *st, int64_t job_id, const char *reason, int64_t now,
		     struct sched_cancel_count *count, struct pg_err *err)
{
	return sched_cancel(st, SCHED_SCOPE_JOB, job_id, reason, now, count, err);
}

int sched_cancel_run(struct store *st, int64_t run_id, const char *reason, int64_t now,
		     struct sched_cancel_count *count, struct pg_err *err)
{
	return sched_cancel(st, SCHED_SCOPE_RUN, run_id, reason, now, count, err);
}

int sched_cancel_series(struct store *st, int64_t series_id, const char *reason, int64_t now,
			struct sched_cancel_count *count, struct pg_err *err)
{
	return sched_cancel(st, SCHED_SCOPE_SERIES, series_id, reason, now, count, err);
}

/* Cancel within the caller's transaction, the error naming what. */
static int sched_cancel_tx(struct store *st, enum sched_scope scope, int64_t id,
			   const char *reason, int64_t now, struct sched_cancel_count *count,
			   struct pg_err *err)
{
	if (count)
		memset(count, 0, sizeof(*count));
	if (sched_cancel_in(st, scope, id, reason, now, count, err) < 0) {
		pg_err_prefix(err, "cancel %s %lld", sched_scopes[scope].name, (long long)id);
		return -1;
	}
	return 0;
}

int sched_cancel_series_tx(struct store *st, int64_t series_id, const char *reason,
			   int64_t now, struct sched_cancel_count *count, struct pg_err *err)
{
	return sched_cancel_tx(st, SCHED_SCOPE_SERIES, series_id, reason, now, count, err);
}

int sched_cancel_job_tx(struct store *st, int64_t job_id, const char *reason, int64_t now,
			struct sched_cancel_count *count, struct pg_err *err)
{
	return sched_cancel_tx(st, SCHED_SCOPE_JOB, job_id, reason, now, count, err);
}

/* ---- figures ----------------------------------------------------------- */

int sched_queue_stats(struct store *st, int64_t now, int64_t online_window_s,
		      struct sched_stats *out, struct pg_err *err)
{
	static const char what[] = "count jobs";
	static const char what_agents[] = "count agents";
	sqlite3_stmt *stmt = NULL;
	int rc = -1, row;

	memset(out, 0, sizeof(*out));
	if (online_window_s < 0) {
		pg_err_set(err, PG_EINVAL, "negative online window");
		goto out;
	}
	if (store_prepare(st, &stmt,
			  "SELECT state, count(*), sum(priority < 0) FROM jobs GROUP BY state",
			  what, err) < 0)
		goto out;
	while ((row = store_step(stmt, what, err)) > 0) {
		const char *state = (const char *)sqlite3_column_text(stmt, 0);
		int64_t n = sqlite3_column_int64(stmt, 1);

		if (!state)
			continue;
		if (!strcmp(state, "queued")) {
			out->queued = n;
			out->held = sqlite3_column_int64(stmt, 2);
		} else if (!strcmp(state, "leased")) {
			out->leased = n;
		} else if (!strcmp(state, "running")) {
			out->running = n;
		} else if (!strcmp(state, "done")) {
			out->done = n;
		} else if (!strcmp(state, "cancelled")) {
			out->cancelled = n;
		} else if (!strcmp(state, "infra-error")) {
			out->infra_error = n;
		}
	}
	if (row < 0)
		goto out;
	store_done(st, stmt);
	stmt = NULL;
	row = sched_row(st, &stmt,
			"SELECT count(*), coalesce(sum(enabled), 0),"
			" coalesce(sum(enabled AND last_seen >= ?1), 0),"
			" (SELECT count(*) FROM jobs WHERE state IN ('leased', 'running')"
			"  AND agent_id IS NOT NULL)"
			" FROM agents", what_agents,
			STORE_ARGS(STORE_INT(now - online_window_s)), err);
	if (row < 0)
		goto out;
	if (row > 0) {
		out->agents = sqlite3_column_int64(stmt, 0);
		out->agents_enabled = sqlite3_column_int64(stmt, 1);
		out->agents_online = sqlite3_column_int64(stmt, 2);
		out->agents_busy = sqlite3_column_int64(stmt, 3);
	}
	rc = 0;
out:
	store_done(st, stmt);
	if (rc) {
		memset(out, 0, sizeof(*out));
		pg_err_prefix(err, "queue figures");
	}
	return rc;
}

int sched_class_agents(struct store *st, const struct profile_set *ps, const char *host_class,
		       int64_t now, int64_t online_window_s, struct sched_class_agents *out,
		       struct pg_err *err)
{
	static const char what[] = "agents of a host class";
	struct pg_buf classes = PG_BUF_INIT(PG_BUF_NOLIMIT);
	sqlite3_stmt *stmt = NULL;
	char needle[SCHED_NAME_MAX + 3];
	int rc = -1, row;

	memset(out, 0, sizeof(*out));
	if (pg_fmt(needle, sizeof(needle), ",%.*s,", SCHED_NAME_MAX, host_class) < 0) {
		pg_err_set(err, PG_EINVAL, "%s: host class '%.64s...' too long", what, host_class);
		goto out;
	}
	if (store_prepare_cached(st, &stmt,
				 "SELECT a.labels, a.enabled = 1 AND a.last_seen >= ?1,"
				 " EXISTS (SELECT 1 FROM jobs j WHERE j.agent_id = a.id"
				 " AND j.state IN ('leased', 'running'))"
				 " FROM agents a WHERE a.enabled = 1", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(now - online_window_s)), what, err) < 0)
		goto out;
	while ((row = store_step(stmt, what, err)) == 1) {
		struct pg_err lerr = PG_ERR_INIT;
		const char *labels = (const char *)sqlite3_column_text(stmt, 0);

		pg_buf_reset(&classes);
		/* An agent whose stored labels do not parse serves nothing,
		 * as at its lease. */
		if (sched_agent_classes(labels ? labels : "{}", ps, &classes, &lerr) < 0 ||
		    !classes.len || !strstr(pg_buf_str(&classes), needle))
			continue;
		out->enabled++;
		if (sqlite3_column_int(stmt, 1)) {
			out->online++;
			out->busy += sqlite3_column_int(stmt, 2) != 0;
		}
	}
	rc = row < 0 ? -1 : 0;
out:
	store_done(st, stmt);
	pg_buf_release(&classes);
	return rc;
}

int sched_job_fingerprint(struct store *st, int64_t job_id, cJSON **out, struct pg_err *err)
{
	static const char what[] = "read a fingerprint";
	sqlite3_stmt *q = NULL;
	int rc = -1, row;

	*out = NULL;
	if (store_prepare(st, &q, "SELECT fingerprint FROM results WHERE job_id = ?1"
			  " AND outcome = 'ok' ORDER BY attempt DESC LIMIT 1", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(job_id)), what, err) < 0)
		goto out;
	row = store_step(q, what, err);
	if (row < 0)
		goto out;
	if (row > 0 && sqlite3_column_text(q, 0))
		*out = cJSON_Parse((const char *)sqlite3_column_text(q, 0));
	rc = 0;
out:
	sqlite3_finalize(q);
	return rc;
}
