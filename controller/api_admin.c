/* SPDX-License-Identifier: MIT */
/*
 * The admin endpoints: a recheck of a series (a recheck_requests row the
 * planner turns into a run) and the cancellation of a job (the agent
 * learns it from its next heartbeat).  The token was checked before the
 * body was read (api_server.c).
 */
#include "api_int.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "outbox.h"
#include "recheck.h"

#define API_RECHECK_CONTEXTS_MAX 256
#define API_CANCEL_REASON "cancelled by an administrator"

/* A branch name as a recheck's rebase= carries it: no option-like or
 * absolute names, no "..". */
static bool api_is_branch(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > API_REBASE_MAX || s[0] == '-' || s[0] == '/' || s[0] == '.' ||
	    s[n - 1] == '/' || strstr(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-' || c == '/'))
			return false;
	}
	return true;
}

/* Whether the comma-separated list has name. */
static bool api_list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p; ) {
		const char *comma = strchr(p, ',');
		size_t l = comma ? (size_t)(comma - p) : strlen(p);

		if (l == n && memcmp(p, name, n) == 0)
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

int api_parse_recheck(const char *body, size_t len, const struct profile_set *ps,
		      struct api_op *op, struct pg_err *err)
{
	struct pg_buf list = PG_BUF_INIT(API_RECHECK_CONTEXTS_MAX * (PROFILE_CONTEXT_NAME_MAX + 1));
	const cJSON *arr = NULL, *item;
	size_t i = 0;
	int rc = -1, got = 0;

	api_op_reset(op);
	if (api_parse_object(body, len, &op->doc, err) < 0)
		goto out;
	if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(op->doc, "contexts"))) {
		got = pg_json_get_array(op->doc, "contexts", false, &arr, err);
		if (got < 0)
			goto out;
	}
	if (got > 0) {
		if (cJSON_GetArraySize(arr) == 0) {
			pg_err_set(err, PG_EINVAL, "field 'contexts': empty (leave it out to recheck "
				   "every context)");
			goto out;
		}
		if (cJSON_GetArraySize(arr) > API_RECHECK_CONTEXTS_MAX) {
			pg_err_set(err, PG_EINVAL, "field 'contexts': more than %d",
				   API_RECHECK_CONTEXTS_MAX);
			goto out;
		}
		cJSON_ArrayForEach(item, arr) {
			const char *name = cJSON_GetStringValue(item);

			if (!cJSON_IsString(item) || !name) {
				pg_err_set(err, PG_EINVAL, "field 'contexts[%zu]': expected a string, "
					   "got %s", i, pg_json_type_name(item));
				goto out;
			}
			if (!profile_find_context(ps, name)) {
				pg_err_set(err, PG_EINVAL, "field 'contexts[%zu]': '%.255s' is not a "
					   "context of this controller", i, name);
				goto out;
			}
			if (!api_list_has(pg_buf_str(&list), name) &&
			    pg_buf_printf(&list, "%s%s", list.len ? "," : "", name) < 0)
				goto nomem;
			i++;
		}
	} else {
		if (ps->n_contexts == 0) {
			pg_err_set(err, PG_EINVAL, "this controller has no contexts to recheck");
			goto out;
		}
		for (i = 0; i < ps->n_contexts; i++)
			if (pg_buf_printf(&list, "%s%s", i ? "," : "", ps->contexts[i].name) < 0)
				goto nomem;
	}
	if (api_get_string_or_null(op->doc, "rebase", &op->rebase, err) < 0)
		goto out;
	if (op->rebase && !api_is_branch(op->rebase)) {
		pg_err_set(err, PG_EINVAL, "field 'rebase': '%.80s' is not a branch name (1 to %d "
			   "of [A-Za-z0-9_./-])", op->rebase, API_REBASE_MAX);
		goto out;
	}
	op->contexts = pg_buf_detach(&list, NULL);
	if (!op->contexts)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "field 'contexts': out of memory");
out:
	pg_buf_release(&list);
	return rc;
}

int api_parse_cancel(const char *body, size_t len, struct api_op *op, struct pg_err *err)
{
	api_op_reset(op);
	if (api_parse_object(body, len, &op->doc, err) < 0 ||
	    api_get_string_or_null(op->doc, "reason", &op->reason, err) < 0)
		return -1;
	if (op->reason && (!*op->reason || strlen(op->reason) > SCHED_TEXT_MAX))
		return pg_err_set(err, PG_EINVAL, "field 'reason': must be 1 to %d bytes",
				  SCHED_TEXT_MAX);
	return 0;
}

/* One transaction: the series must exist when the request is stored. */
static void api_run_recheck(struct api_worker *w, struct api_req *r, int64_t now)
{
	struct recheck_new req = { 0 };
	struct pg_err err = PG_ERR_INIT;
	int64_t n = 0, id;
	cJSON *o;

	if (store_begin(w->st, &err) < 0)
		goto fail;
	if (store_query_int(w->st, "find series", "SELECT count(*) FROM series WHERE id = ?1",
			    STORE_ARGS(STORE_INT(r->route.id)), &n, &err) < 0)
		goto fail;
	if (n == 0) {
		pg_err_set(&err, PG_ENOTFOUND, "no series %lld", (long long)r->route.id);
		goto fail;
	}
	req.series_id = r->route.id;
	req.origin = "api";
	req.requester = "admin";
	req.contexts = r->op.contexts;
	req.rebase = r->op.rebase;
	if (recheck_add(w->st, &req, now, &id, &err) < 0)
		goto fail;
	if (store_commit(w->st, &err) < 0)
		goto fail;
	pg_log_info("api", "series %lld: recheck %lld of %s requested through the API%s%s",
		    (long long)r->route.id, (long long)id, r->op.contexts,
		    r->op.rebase ? ", rebased on " : "", r->op.rebase ? r->op.rebase : "");
	o = cJSON_CreateObject();
	if (o && (!cJSON_AddNumberToObject(o, "recheck", (double)id) ||
		  !cJSON_AddNumberToObject(o, "series", (double)r->route.id) ||
		  !cJSON_AddStringToObject(o, "contexts", r->op.contexts) ||
		  !(r->op.rebase ? cJSON_AddStringToObject(o, "rebase", r->op.rebase)
				 : cJSON_AddNullToObject(o, "rebase")) ||
		  !cJSON_AddStringToObject(o, "state", "pending"))) {
		cJSON_Delete(o);
		o = NULL;
	}
	api_reply_json(r, 202, o);
	return;
fail:
	store_rollback(w->st);
	api_reply_err(r, &err);
}

static void api_run_cancel(struct api_worker *w, struct api_req *r, int64_t now)
{
	struct pg_err err = PG_ERR_INIT;
	struct sched_cancel_count count;
	const char *reason = r->op.reason ? r->op.reason : API_CANCEL_REASON;
	cJSON *o;

	memset(&count, 0, sizeof(count));
	/* One transaction: the jobs and, when the job was its context's last,
	 * the final check that says so. */
	if (store_begin(w->st, &err) < 0 ||
	    sched_cancel_job_tx(w->st, r->route.id, reason, now, &count, &err) < 0 ||
	    (count.queued + count.active > 0 &&
	     outbox_settle_cancelled_tx(w->st, 0, count.run_id, reason, now, NULL, &err) < 0) ||
	    store_commit(w->st, &err) < 0) {
		store_rollback(w->st);
		api_reply_err(r, &err);
		return;
	}
	if (count.queued + count.active)
		pg_log_info("api", "job %lld cancelled by an administrator: %s",
			    (long long)r->route.id, reason);
	o = cJSON_CreateObject();
	if (o && (!cJSON_AddNumberToObject(o, "job", (double)r->route.id) ||
		  !cJSON_AddBoolToObject(o, "cancelled", count.queued + count.active > 0) ||
		  !cJSON_AddBoolToObject(o, "active", count.active > 0))) {
		cJSON_Delete(o);
		o = NULL;
	}
	api_reply_json(r, 200, o);
}

void api_admin_run(struct api_worker *w, struct api_req *r, int64_t now)
{
	if (r->route.ep == API_EP_SERIES_RECHECK)
		api_run_recheck(w, r, now);
	else if (r->route.ep == API_EP_JOB_CANCEL)
		api_run_cancel(w, r, now);
	else
		api_reply_error(r, 500, "not an admin endpoint: %s", api_route_name(r->route.ep));
}
