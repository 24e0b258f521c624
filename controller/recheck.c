/* SPDX-License-Identifier: MIT */
/* Recheck requests: see recheck.h. */
#include "recheck.h"

#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "vec.h"

int recheck_add(struct store *st, const struct recheck_new *r, int64_t now, int64_t *id,
		struct pg_err *err)
{
	*id = 0;
	if (!r || r->series_id <= 0 || !r->origin || !r->contexts || !*r->contexts || now < 0)
		return pg_err_set(err, PG_EINVAL, "record recheck request: missing field");
	if (store_run(st, "record recheck request",
		      "INSERT OR IGNORE INTO recheck_requests (series_id, origin, msgid, requester,"
		      " contexts, rebase_branch, state, created_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7)",
		      STORE_ARGS(STORE_INT(r->series_id), STORE_TEXT(r->origin),
				 r->msgid ? STORE_TEXT(r->msgid) : STORE_NULL,
				 r->requester ? STORE_TEXT(r->requester) : STORE_NULL,
				 STORE_TEXT(r->contexts),
				 r->rebase && *r->rebase ? STORE_TEXT(r->rebase) : STORE_NULL,
				 STORE_INT(now)), err) < 0)
		return -1;
	if (store_changes(st) > 0)
		*id = store_last_id(st);
	return 0;
}

void recheck_list_free(struct recheck *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].contexts);
		free(v[i].rebase);
	}
	free(v);
}

int recheck_list_pending(struct store *st, struct recheck **out, size_t *n, struct pg_err *err)
{
	const char *what = "list recheck requests";
	sqlite3_stmt *stmt = NULL;
	size_t cap = 0;
	int rc = -1, row;

	*out = NULL;
	*n = 0;
	if (store_prepare(st, &stmt,
			  "SELECT id, series_id, contexts, rebase_branch FROM recheck_requests"
			  " WHERE state = 'pending' ORDER BY created_at, id", what, err) < 0)
		goto out;
	while ((row = store_step(stmt, what, err)) == 1) {
		struct recheck *r;

		if (PG_GROW(*out, cap, *n + 1) < 0)
			goto nomem;
		r = &(*out)[*n];
		memset(r, 0, sizeof(*r));
		(*n)++;
		r->id = sqlite3_column_int64(stmt, 0);
		r->series_id = sqlite3_column_int64(stmt, 1);
		if (store_col_dup(stmt, 2, &r->contexts) < 0 || store_col_dup(stmt, 3, &r->rebase) < 0)
			goto nomem;
		if (!r->contexts && !(r->contexts = strdup("")))
			goto nomem;
		if (r->rebase && !*r->rebase) {
			free(r->rebase);
			r->rebase = NULL;	/* an empty branch is no rebase */
		}
	}
	if (row < 0)
		goto out;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
out:
	sqlite3_finalize(stmt);
	if (rc) {
		recheck_list_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int recheck_is_pending(struct store *st, int64_t id, bool *pending, struct pg_err *err)
{
	int64_t found = 0;

	*pending = false;
	if (store_query_id(st, "check recheck request",
			   "SELECT id FROM recheck_requests WHERE id = ?1 AND state = 'pending'",
			   STORE_ARGS(STORE_INT(id)), &found, err) < 0)
		return -1;
	*pending = found != 0;
	return 0;
}

static int recheck_mark(struct store *st, int64_t id, const char *state, const char *reason,
			bool *changed, struct pg_err *err)
{
	if (changed)
		*changed = false;
	if (id <= 0)
		return pg_err_set(err, PG_EINVAL, "end recheck request: bad id");
	if (store_run(st, "end recheck request",
		      "UPDATE recheck_requests SET state = ?3, reason = ?2"
		      " WHERE id = ?1 AND state = 'pending'",
		      STORE_ARGS(STORE_INT(id), reason && *reason ? STORE_TEXT(reason) : STORE_NULL,
				 STORE_TEXT(state)), err) < 0)
		return -1;
	if (changed)
		*changed = store_changes(st) > 0;
	return 0;
}

int recheck_mark_planned(struct store *st, int64_t id, const char *reason, bool *changed,
			 struct pg_err *err)
{
	return recheck_mark(st, id, "planned", reason, changed, err);
}

int recheck_mark_ignored(struct store *st, int64_t id, const char *reason, bool *changed,
			 struct pg_err *err)
{
	if (!reason || !*reason)
		return pg_err_set(err, PG_EINVAL, "ignore recheck request: no reason");
	return recheck_mark(st, id, "ignored", reason, changed, err);
}

int recheck_answer_by_first_run(struct store *st, int64_t series_id, int64_t run_id,
				int64_t *n, struct pg_err *err)
{
	char reason[80];

	if (n)
		*n = 0;
	if (series_id <= 0 || run_id <= 0)
		return pg_err_set(err, PG_EINVAL, "answer recheck requests: bad id");
	if (pg_fmt(reason, sizeof(reason), "answered by the series' first run (run %lld)",
		   (long long)run_id) < 0)
		return pg_err_set(err, PG_EINVAL, "answer recheck requests: reason too long");
	if (store_run(st, "answer recheck requests by the first run",
		      "UPDATE recheck_requests SET state = 'planned', reason = ?2"
		      " WHERE series_id = ?1 AND state = 'pending'"
		      " AND coalesce(rebase_branch, '') = ''",
		      STORE_ARGS(STORE_INT(series_id), STORE_TEXT(reason)),
		      err) < 0)
		return -1;
	if (n)
		*n = store_changes(st);
	return 0;
}
