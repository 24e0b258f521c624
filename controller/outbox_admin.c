/* SPDX-License-Identifier: MIT */
/* Listing the outboxes and queueing a row again (see outbox.h). */
#include "outbox.h"
#include "outbox_int.h"

#include <inttypes.h>
#include <string.h>

/* Add column col of q to o under key: an integer, a text or null. */
static int add_col(cJSON *o, const char *key, sqlite3_stmt *q, int col)
{
	switch (sqlite3_column_type(q, col)) {
	case SQLITE_NULL:
		return cJSON_AddNullToObject(o, key) ? 0 : -1;
	case SQLITE_INTEGER:
		return cJSON_AddNumberToObject(o, key, (double)sqlite3_column_int64(q, col)) ?
		       0 : -1;
	default:
		return cJSON_AddStringToObject(o, key, (const char *)sqlite3_column_text(q, col)) ?
		       0 : -1;
	}
}

static int list_rows(struct store *st, const char *kind, const char *sql, const char *const *keys,
		     bool all, cJSON *arr, struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc = -1, step;

	if (store_prepare(st, &q, sql, "list the outbox", err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(all)), "list the outbox", err) < 0)
		goto out;
	while ((step = store_step(q, "list the outbox", err)) == 1) {
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(arr, o) || !cJSON_AddStringToObject(o, "kind", kind))
			goto oom;
		for (int i = 0; keys[i]; i++)
			if (add_col(o, keys[i], q, i) < 0)
				goto oom;
	}
	rc = step < 0 ? -1 : 0;
	goto out;
oom:
	pg_err_set(err, PG_ENOMEM, "out of memory");
out:
	sqlite3_finalize(q);
	return rc;
}

int outbox_list(struct store *st, bool all, cJSON **out, struct pg_err *err)
{
	static const char *const check_keys[] = {
		"id", "run", "series", "context", "state", "patch", "pw_patch", "delivery",
		"attempts", "next_try", "sent_at", "response_code", "response", "created_at", NULL
	};
	static const char *const mail_keys[] = {
		"id", "run", "series", "context", "subject", "msgid", "to", "cc", "delivery",
		"attempts", "next_try", "sent_at", "response", "created_at", NULL
	};
	cJSON *arr = cJSON_CreateArray();

	*out = NULL;
	if (!arr)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	if (list_rows(st, "check",
		      "SELECT c.id, c.run_id, c.series_id, c.context, c.state, p.number,"
		      " p.pw_patch_id, c.delivery, c.attempts, c.next_try, c.sent_at,"
		      " c.response_code, c.response, c.created_at"
		      " FROM check_outbox c JOIN patches p ON p.id = c.patch_id"
		      " WHERE ?1 OR c.delivery IN ('queued', 'failed') ORDER BY c.id",
		      check_keys, all, arr, err) < 0 ||
	    list_rows(st, "mail",
		      "SELECT id, run_id, series_id, context, subject, msgid, to_addrs, cc_addrs,"
		      " delivery, attempts, next_try, sent_at, response, created_at"
		      " FROM email_outbox WHERE ?1 OR delivery IN ('queued', 'failed') ORDER BY id",
		      mail_keys, all, arr, err) < 0) {
		cJSON_Delete(arr);
		return -1;
	}
	*out = arr;
	return 0;
}

int outbox_retry(struct store *st, const char *kind, int64_t id, int64_t now_s,
		 struct pg_err *err)
{
	const char *table;
	int64_t sent = 0, changes = 0;
	int rc;

	if (!kind || (strcmp(kind, "check") != 0 && strcmp(kind, "mail") != 0))
		return pg_err_set(err, PG_EINVAL, "outbox retry: '%s' is not check or mail",
				  kind ? kind : "(null)");
	table = kind[0] == 'c' ? "check" : "mail";
	if (store_begin(st, err) < 0)
		return -1;
	rc = store_query_int(st, "read an outbox row", kind[0] == 'c' ?
			     "SELECT delivery = 'sent' FROM check_outbox WHERE id = ?1" :
			     "SELECT delivery = 'sent' FROM email_outbox WHERE id = ?1",
			     STORE_ARGS(STORE_INT(id)), &sent, err);
	if (rc < 0) {
		if (err && err->code == PG_ENOTFOUND)
			pg_err_set(err, PG_ENOTFOUND, "no %s %" PRId64 " in the outbox", table, id);
		goto fail;
	}
	if (sent) {
		pg_err_set(err, PG_ECONFLICT, "%s %" PRId64 " was sent already", table, id);
		goto fail;
	}
	if (store_run(st, "queue an outbox row again", kind[0] == 'c' ?
		      "UPDATE check_outbox SET delivery = 'queued', next_try = ?2 WHERE id = ?1" :
		      "UPDATE email_outbox SET delivery = 'queued', next_try = ?2 WHERE id = ?1",
		      STORE_ARGS(STORE_INT(id), STORE_INT(now_s)), err) < 0)
		goto fail;
	changes = store_changes(st);
	if (store_commit(st, err) < 0)
		goto fail;
	return changes ? 0 : pg_err_set(err, PG_ENOTFOUND, "no %s %" PRId64 " in the outbox",
					 table, id);
fail:
	store_rollback(st);
	return -1;
}
