/* SPDX-License-Identifier: MIT */
/* The store as JSON, for the command line and the read endpoints (see
 * api_view.h). */
#include "api_view.h"
#include "api_view_int.h"

#include <ctype.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "report_mail.h"
#include "series.h"
#include "ssh_state.h"
#include "timeutil.h"

const char *vw_col_text(sqlite3_stmt *stmt, int i)
{
	const char *s = (const char *)sqlite3_column_text(stmt, i);

	return s ? s : "";
}

bool vw_text(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	return cJSON_AddStringToObject(o, key, vw_col_text(stmt, i)) != NULL;
}

bool vw_int(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	return cJSON_AddNumberToObject(o, key, (double)sqlite3_column_int64(stmt, i)) != NULL;
}

bool vw_real(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	return cJSON_AddNumberToObject(o, key, sqlite3_column_double(stmt, i)) != NULL;
}

bool vw_real_or_null(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
		return cJSON_AddNullToObject(o, key) != NULL;
	return vw_real(o, key, stmt, i);
}

bool vw_bool(cJSON *o, const char *key, bool v)
{
	return cJSON_AddBoolToObject(o, key, v) != NULL;
}

bool vw_text_or_null(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
		return cJSON_AddNullToObject(o, key) != NULL;
	return vw_text(o, key, stmt, i);
}

bool vw_int_or_null(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
{
	if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
		return cJSON_AddNullToObject(o, key) != NULL;
	return vw_int(o, key, stmt, i);
}

/* A column holding JSON text (labels, facts, spec) as a value; null when
 * it does not parse, which only a hand-edited store can cause. */
bool vw_json(cJSON *o, const char *key, sqlite3_stmt *stmt, int i)
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

bool vw_cols(cJSON *o, sqlite3_stmt *stmt, const struct vw_col *cols)
{
	static bool (*const add[])(cJSON *, const char *, sqlite3_stmt *, int) = {
		[VW_TEXT] = vw_text, [VW_TEXT_OR_NULL] = vw_text_or_null,
		[VW_INT] = vw_int, [VW_INT_OR_NULL] = vw_int_or_null,
		[VW_REAL] = vw_real, [VW_REAL_OR_NULL] = vw_real_or_null,
		[VW_JSON] = vw_json,
	};

	for (const struct vw_col *c = cols; c->key; c++)
		if (!add[c->kind](o, c->key, stmt, c->col))
			return false;
	return true;
}

/*
 * Run sql with args and append one object per row, filled by fill, to
 * arr.  Returns 0 or -1.
 */
int vw_rows(struct store *st, cJSON *arr, const char *what, const char *sql,
			 const struct store_arg *args, size_t nargs, vw_fill_fn fill,
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

/* Like vw_rows() into a new array o[key]. */
int vw_add_rows(struct store *st, cJSON *o, const char *key, const char *sql,
			     const struct store_arg *args, size_t nargs, vw_fill_fn fill,
			     struct pg_err *err)
{
	cJSON *arr = cJSON_AddArrayToObject(o, key);

	if (!arr)
		return pg_err_set(err, PG_ENOMEM, "%s: out of memory", key);
	return vw_rows(st, arr, key, sql, args, nargs, fill, err);
}

/* Like vw_rows() into a new array *out (NULL on failure). */
int vw_list(struct store *st, const char *what, const char *sql,
			 const struct store_arg *args, size_t nargs, vw_fill_fn fill,
			 cJSON **out, struct pg_err *err)
{
	*out = cJSON_CreateArray();
	if (!*out)
		return pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
	if (vw_rows(st, *out, what, sql, args, nargs, fill, err) < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* Run sql (one row expected) and fill *out; PG_ENOTFOUND names `what` and
 * the id when there is no row. */
int vw_one(struct store *st, const char *what, int64_t id, const char *sql,
			vw_fill_fn fill, cJSON **out, struct pg_err *err)
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
	" s.pw_series_id, " SERIES_BASE_COMMIT_SQL ", s.root_msgid," \
	" (SELECT m.msgid FROM messages m WHERE m.id = s.cover_message_id)"

/* ?1 state, ?4 submitter, ?5 context, ?6 tree, ?7 q, ?8 q without <> */
#define SERIES_FILTER \
	" WHERE (?1 IS NULL OR s.state = ?1 OR (?1 = 'stale' AND s.stale_at" \
	" IS NOT NULL AND s.state = 'incomplete'))" \
	" AND (?4 IS NULL OR instr(lower(coalesce(s.submitter_name, '') || ' <' ||" \
	" s.submitter_addr || '>'), lower(?4)) > 0)" \
	" AND (?5 IS NULL OR EXISTS (SELECT 1 FROM check_outbox c WHERE c.series_id = s.id" \
	" AND c.context = ?5))" \
	" AND (?6 IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.series_id = s.id" \
	" AND r.tree = ?6))" \
	" AND (?7 IS NULL OR instr(lower(s.title), lower(?7)) > 0" \
	" OR instr(lower(coalesce(s.submitter_name, '') || ' <' || s.submitter_addr || '>')," \
	" lower(?7)) > 0 OR s.root_msgid = ?8" \
	" OR EXISTS (SELECT 1 FROM series_refs f WHERE f.series_id = s.id AND f.msgid = ?8))"

static bool fill_series(cJSON *o, sqlite3_stmt *stmt)
{
	char when[PG_TIME_UTC_MAX];

	if (pg_time_format_utc(sqlite3_column_int64(stmt, 8) * 1000, 0, when, sizeof(when)) < 0 &&
	    pg_fmt(when, sizeof(when), "%lld", (long long)sqlite3_column_int64(stmt, 8)) < 0)
		return false;
	return vw_int(o, "id", stmt, 0) &&
	       vw_text(o, "state", stmt, 1) &&
	       vw_bool(o, "stale", sqlite3_column_type(stmt, 14) != SQLITE_NULL) &&
	       vw_int(o, "version", stmt, 2) &&
	       vw_int(o, "total", stmt, 3) &&
	       vw_int(o, "received", stmt, 4) &&
	       vw_text(o, "title", stmt, 5) &&
	       vw_text(o, "submitter_name", stmt, 6) &&
	       vw_text(o, "submitter", stmt, 7) &&
	       cJSON_AddStringToObject(o, "date", when) &&
	       vw_text(o, "tags", stmt, 10) &&
	       vw_bool(o, "rfc", sqlite3_column_int(stmt, 11) != 0) &&
	       vw_int_or_null(o, "supersedes", stmt, 12) &&
	       vw_int_or_null(o, "superseded_by", stmt, 13) &&
	       vw_int_or_null(o, "patchwork_series", stmt, 15) &&
	       vw_text_or_null(o, "base_commit", stmt, 16) &&
	       vw_text(o, "root_msgid", stmt, 17) &&
	       vw_text_or_null(o, "cover_msgid", stmt, 18);
}

static const struct vw_col check_brief_cols[] = {
	{ "context", VW_TEXT, 0 },
	{ "state", VW_TEXT, 1 },
	{ "description", VW_TEXT, 2 },
	{ "run", VW_INT, 3 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_check_brief(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, check_brief_cols);
}

/* The check matrix's cells of a series: the latest check per context. */
static int api_view_series_checks(struct store *st, cJSON *series, struct pg_err *err)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(series, "id");

	return vw_add_rows(st, series, "checks",
				 "SELECT c.context, c.state, c.description, c.run_id FROM check_outbox c"
				 " WHERE c.series_id = ?1 AND c.id = (SELECT max(l.id) FROM check_outbox l"
				 " WHERE l.series_id = ?1 AND l.context = c.context) ORDER BY c.context",
				 STORE_ARGS(STORE_INT((int64_t)cJSON_GetNumberValue(id))),
				 fill_check_brief, err);
}

/* A Message-ID as people paste it: "<a@b>" or "a@b". */
static const char *api_view_msgid(const char *q, char *buf, size_t len)
{
	size_t n;

	if (!q || q[0] != '<')
		return q;
	n = strlen(q + 1);
	if (n && q[n] == '>')
		n--;
	if (n >= len)
		return q;
	memcpy(buf, q + 1, n);
	buf[n] = '\0';
	return buf;
}

#define SERIES_NARGS 8

/* The list's parameters: the filter, ?2 limit and ?3 offset. */
static void series_args(const struct api_series_filter *f, const char *msgid, int64_t limit,
			int64_t offset, struct store_arg a[SERIES_NARGS])
{
	a[0] = f && f->state ? STORE_TEXT(f->state) : STORE_NULL;
	a[1] = STORE_INT(limit < 0 ? -1 : limit);
	a[2] = STORE_INT(offset);
	a[3] = f && f->submitter ? STORE_TEXT(f->submitter) : STORE_NULL;
	a[4] = f && f->context ? STORE_TEXT(f->context) : STORE_NULL;
	a[5] = f && f->tree ? STORE_TEXT(f->tree) : STORE_NULL;
	a[6] = f && f->q ? STORE_TEXT(f->q) : STORE_NULL;
	a[7] = f && f->q ? STORE_TEXT(msgid) : STORE_NULL;
}

int api_view_series_list(struct store *st, const struct api_series_filter *f, int64_t limit,
			 int64_t offset, cJSON **out, struct pg_err *err)
{
	char buf[1024];
	struct store_arg args[SERIES_NARGS];
	const cJSON *item;

	series_args(f, api_view_msgid(f ? f->q : NULL, buf, sizeof(buf)), limit, offset, args);
	/* Two statements, not an ORDER BY on a CASE: each walks the rowid
	 * in its direction and stops at the limit. */
	if (vw_list(st, "list series", f && f->newest ?
			  "SELECT " SERIES_COLUMNS " FROM series s" SERIES_FILTER
			  " ORDER BY s.id DESC LIMIT ?2 OFFSET ?3" :
			  "SELECT " SERIES_COLUMNS " FROM series s" SERIES_FILTER
			  " ORDER BY s.id LIMIT ?2 OFFSET ?3",
			  args, SERIES_NARGS, fill_series, out, err) < 0)
		return -1;
	if (!f || !f->checks)
		return 0;
	cJSON_ArrayForEach(item, *out)
		if (api_view_series_checks(st, (cJSON *)item, err) < 0) {
			cJSON_Delete(*out);
			*out = NULL;
			return -1;
		}
	return 0;
}

int api_view_series_count(struct store *st, const struct api_series_filter *f, int64_t *n,
			  struct pg_err *err)
{
	char buf[1024];
	struct store_arg args[SERIES_NARGS];

	/* ?2 and ?3 (the list's limit and offset) are bound but unused. */
	series_args(f, api_view_msgid(f ? f->q : NULL, buf, sizeof(buf)), -1, 0, args);
	return store_query_int(st, "count series", "SELECT count(*) FROM series s" SERIES_FILTER,
			       args, SERIES_NARGS, n, err);
}

static const struct vw_col patch_cols[] = {
	{ "number", VW_INT, 0 },
	{ "subject", VW_TEXT, 1 },
	{ "msgid", VW_TEXT, 2 },
	{ "patchwork_patch", VW_INT_OR_NULL, 3 },
	{ "base_commit", VW_TEXT_OR_NULL, 4 },
	{ "files", VW_TEXT, 5 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_patch(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, patch_cols);
}

static const struct vw_col dep_cols[] = {
	{ "kind", VW_TEXT, 0 },
	{ "ref", VW_TEXT, 1 },
	{ "series", VW_INT_OR_NULL, 2 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_dep(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, dep_cols);
}

static const struct vw_col recheck_cols[] = {
	{ "id", VW_INT, 0 },
	{ "origin", VW_TEXT, 1 },
	{ "msgid", VW_TEXT, 2 },
	{ "requester", VW_TEXT, 3 },
	{ "contexts", VW_TEXT, 4 },
	{ "rebase", VW_TEXT_OR_NULL, 5 },
	{ "state", VW_TEXT, 6 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_recheck(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, recheck_cols);
}

/* ---- runs and jobs ----------------------------------------------------- */

bool vw_fill_job(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_int(o, "id", stmt, 0) &&
	       vw_int(o, "run", stmt, 1) &&
	       vw_int_or_null(o, "series", stmt, 2) &&	/* null: a baseline */
	       vw_text(o, "context", stmt, 3) &&
	       vw_text(o, "host_class", stmt, 4) &&
	       vw_text(o, "build_mode", stmt, 5) &&
	       vw_text(o, "state", stmt, 6) &&
	       vw_int(o, "priority", stmt, 7) &&
	       vw_int(o, "attempt", stmt, 8) &&
	       vw_text_or_null(o, "agent", stmt, 9) &&
	       vw_int_or_null(o, "lease_expires", stmt, 10) &&
	       vw_text_or_null(o, "stage", stmt, 11) &&
	       vw_int_or_null(o, "progress", stmt, 12) &&
	       vw_int_or_null(o, "stage_at", stmt, 13) &&
	       vw_text_or_null(o, "outcome", stmt, 14) &&
	       vw_text_or_null(o, "detail", stmt, 15) &&
	       vw_int(o, "created_at", stmt, 16) &&
	       vw_int_or_null(o, "started_at", stmt, 17) &&
	       vw_int_or_null(o, "finished_at", stmt, 18);
}

static bool fill_job_spec(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_fill_job(o, stmt) && vw_json(o, "spec", stmt, 19);
}

#define RUN_COLUMNS \
	"id, series_id, reason, recheck_id, tree, branch, base_commit, state, created_at," \
	" finished_at, trigger"

static const struct vw_col run_row_cols[] = {
	{ "id", VW_INT, 0 },
	{ "series", VW_INT_OR_NULL, 1 },	/* null: a baseline (reason 'baseline') */
	{ "reason", VW_TEXT, 2 },
	{ "recheck", VW_INT_OR_NULL, 3 },
	{ "tree", VW_TEXT, 4 },
	{ "branch", VW_TEXT, 5 },
	{ "base_commit", VW_TEXT, 6 },
	{ "state", VW_TEXT, 7 },
	{ "created_at", VW_INT, 8 },
	{ "finished_at", VW_INT_OR_NULL, 9 },
	{ "trigger", VW_TEXT_OR_NULL, 10 },	/* a baseline's: head, interval, manual, bisect */
	{ NULL, VW_TEXT, 0 },
};

static bool fill_run_row(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, run_row_cols);
}

/* Add "jobs" to each run object of arr (or to the one object run). */
static int api_view_run_jobs(struct store *st, cJSON *run, struct pg_err *err)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(run, "id");

	return vw_add_rows(st, run, "jobs",
				 "SELECT " JOB_COLUMNS JOB_FROM " WHERE j.run_id = ?1 ORDER BY j.id",
				 STORE_ARGS(STORE_INT((int64_t)cJSON_GetNumberValue(id))),
				 vw_fill_job, err);
}

int api_view_run(struct store *st, int64_t id, cJSON **out, struct pg_err *err)
{
	if (vw_one(st, "run", id, "SELECT " RUN_COLUMNS " FROM runs WHERE id = ?1",
			 fill_run_row, out, err) < 0)
		return -1;
	if (api_view_run_jobs(st, *out, err) < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* A Message-ID in a URL's path: unreserved bytes and '@' as they are,
 * everything else %XX (a '/' in a Message-ID must not make a path). */
static int url_msgid(struct pg_buf *b, const char *msgid)
{
	for (const unsigned char *p = (const unsigned char *)msgid; *p; p++) {
		int rc = (isalnum(*p) || strchr("-._~@", *p)) ? pg_buf_addch(b, (char)*p)
							      : pg_buf_printf(b, "%%%02X", *p);

		if (rc < 0)
			return -1;
	}
	return 0;
}

/* "archive_url" and "patchwork_url" of one patch object. */
static int api_view_patch_links(cJSON *patch, const struct api_series_links *links,
				struct pg_err *err)
{
	const cJSON *msgid = cJSON_GetObjectItemCaseSensitive(patch, "msgid");
	const cJSON *pw = cJSON_GetObjectItemCaseSensitive(patch, "patchwork_patch");
	struct pg_buf url = PG_BUF_INIT(4096);
	const char *t = links->archive_url, *at = t ? strstr(t, "{msgid}") : NULL;
	char pwurl[1024];
	bool ok;

	if (at && cJSON_IsString(msgid) && *msgid->valuestring &&
	    (pg_buf_add(&url, t, (size_t)(at - t)) < 0 || url_msgid(&url, msgid->valuestring) < 0 ||
	     pg_buf_adds(&url, at + strlen("{msgid}")) < 0))
		pg_buf_release(&url);	/* too long a Message-ID: no link */
	ok = url.len ? cJSON_AddStringToObject(patch, "archive_url", pg_buf_str(&url)) != NULL
		     : cJSON_AddNullToObject(patch, "archive_url") != NULL;
	pg_buf_release(&url);
	if (ok && links->patch_url && cJSON_IsNumber(pw) &&
	    report_mail_patch_url(links->patch_url, (int64_t)pw->valuedouble, pwurl, sizeof(pwurl),
				  NULL) > 0)
		ok = cJSON_AddStringToObject(patch, "patchwork_url", pwurl) != NULL;
	else if (ok)
		ok = cJSON_AddNullToObject(patch, "patchwork_url") != NULL;
	return ok ? 0 : pg_err_set(err, PG_ENOMEM, "patch links: out of memory");
}

static bool fill_version(cJSON *o, sqlite3_stmt *stmt)
{
	char when[PG_TIME_UTC_MAX];

	if (pg_time_format_utc(sqlite3_column_int64(stmt, 3) * 1000, 0, when, sizeof(when)) < 0 &&
	    pg_fmt(when, sizeof(when), "%lld", (long long)sqlite3_column_int64(stmt, 3)) < 0)
		return false;
	return vw_int(o, "id", stmt, 0) &&
	       vw_int(o, "version", stmt, 1) &&
	       vw_text(o, "state", stmt, 2) &&
	       cJSON_AddStringToObject(o, "date", when) &&
	       vw_text(o, "title", stmt, 4);
}

static const struct vw_col check_cols[] = {
	{ "id", VW_INT, 0 },
	{ "run", VW_INT, 1 },
	{ "patch", VW_INT, 2 },
	{ "context", VW_TEXT, 3 },
	{ "state", VW_TEXT, 4 },
	{ "description", VW_TEXT, 5 },
	{ "target_url", VW_TEXT_OR_NULL, 6 },
	{ "delivery", VW_TEXT, 7 },
	{ "created_at", VW_INT, 8 },
	{ "sent_at", VW_INT_OR_NULL, 9 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_check(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, check_cols);
}

static const struct vw_col context_verdict_cols[] = {
	{ "context", VW_TEXT, 0 },
	{ "state", VW_TEXT, 1 },
	{ "description", VW_TEXT, 2 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_context_verdict(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, context_verdict_cols);
}

/* What the dashboard's series page adds (see api_view_series()). */
static int api_view_series_page(struct store *st, int64_t id, cJSON *o,
				const struct api_series_links *links, struct pg_err *err)
{
	const cJSON *runs, *run, *patch;

	cJSON_ArrayForEach(patch, cJSON_GetObjectItemCaseSensitive(o, "patches"))
		if (api_view_patch_links((cJSON *)patch, links, err) < 0)
			return -1;
	if (vw_add_rows(st, o, "versions",
			      "SELECT v.id, v.version, v.state, v.received_at, v.title FROM series s"
			      " JOIN series v ON v.project = s.project AND v.submitter_addr ="
			      " s.submitter_addr AND v.series_key = s.series_key"
			      " WHERE s.id = ?1 ORDER BY v.version, v.id",
			      STORE_ARGS(STORE_INT(id)), fill_version, err) < 0 ||
	    vw_add_rows(st, o, "checks",
			      "SELECT c.id, c.run_id, p.number, c.context, c.state, c.description,"
			      " c.target_url, c.delivery, c.created_at, c.sent_at FROM check_outbox c"
			      " JOIN patches p ON p.id = c.patch_id WHERE c.series_id = ?1"
			      " ORDER BY c.id", STORE_ARGS(STORE_INT(id)), fill_check, err) < 0 ||
	    vw_add_rows(st, o, "runs",
			      "SELECT " RUN_COLUMNS " FROM runs WHERE series_id = ?1 ORDER BY id",
			      STORE_ARGS(STORE_INT(id)), fill_run_row, err) < 0)
		return -1;
	runs = cJSON_GetObjectItemCaseSensitive(o, "runs");
	cJSON_ArrayForEach(run, runs) {
		const cJSON *rid = cJSON_GetObjectItemCaseSensitive(run, "id");

		if (vw_add_rows(st, (cJSON *)run, "verdicts",
				      "SELECT context, state, description FROM verdicts"
				      " WHERE run_id = ?1 AND job_id IS NULL ORDER BY context",
				      STORE_ARGS(STORE_INT((int64_t)cJSON_GetNumberValue(rid))),
				      fill_context_verdict, err) < 0 ||
		    api_view_run_jobs(st, (cJSON *)run, err) < 0)
			return -1;
	}
	return 0;
}

int api_view_series(struct store *st, int64_t id, const struct api_series_links *links,
		    cJSON **out, struct pg_err *err)
{
	if (vw_one(st, "series", id, "SELECT " SERIES_COLUMNS " FROM series s"
			 " WHERE s.id = ?1", fill_series, out, err) < 0)
		return -1;
	if (vw_add_rows(st, *out, "patches",
			      "SELECT p.number, p.subject, m.msgid, p.pw_patch_id, p.base_commit,"
			      " p.files FROM patches p JOIN messages m ON m.id = p.message_id"
			      " WHERE p.series_id = ?1 ORDER BY p.number",
			      STORE_ARGS(STORE_INT(id)), fill_patch, err) < 0 ||
	    vw_add_rows(st, *out, "depends_on",
			      "SELECT kind, ref, dep_series_id FROM series_deps WHERE series_id = ?1"
			      " ORDER BY kind, ref", STORE_ARGS(STORE_INT(id)), fill_dep, err) < 0 ||
	    vw_add_rows(st, *out, "rechecks",
			      "SELECT id, origin, msgid, requester, contexts, rebase_branch, state"
			      " FROM recheck_requests WHERE series_id = ?1 ORDER BY id",
			      STORE_ARGS(STORE_INT(id)), fill_recheck, err) < 0 ||
	    (links && api_view_series_page(st, id, *out, links, err) < 0)) {
		cJSON_Delete(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

int api_view_jobs(struct store *st, const char *state, int64_t limit, int64_t offset,
		  cJSON **out, struct pg_err *err)
{
	return vw_list(st, "list jobs",
			     "SELECT " JOB_COLUMNS JOB_FROM " WHERE ?1 IS NULL OR j.state = ?1"
			     " ORDER BY j.id DESC LIMIT ?2 OFFSET ?3",
			     STORE_ARGS(state ? STORE_TEXT(state) : STORE_NULL,
					STORE_INT(limit < 0 ? -1 : limit), STORE_INT(offset)),
			     vw_fill_job, out, err);
}

static bool fill_attempt(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_int(o, "attempt", stmt, 0) &&
	       vw_text_or_null(o, "agent", stmt, 1) &&
	       vw_int(o, "started_at", stmt, 2) &&
	       vw_int_or_null(o, "ended_at", stmt, 3) &&
	       vw_text_or_null(o, "outcome", stmt, 4) &&
	       vw_text_or_null(o, "reason", stmt, 5) &&
	       (sqlite3_column_type(stmt, 6) == SQLITE_NULL
			? cJSON_AddNullToObject(o, "fingerprint") != NULL
			: vw_json(o, "fingerprint", stmt, 6));
}

static const struct vw_col log_cols[] = {
	{ "attempt", VW_INT, 0 },
	{ "stage", VW_TEXT, 1 },
	{ "bytes", VW_INT, 2 },
	{ "updated_at", VW_INT, 3 },
	{ "url", VW_TEXT, 4 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_log(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, log_cols);
}

int api_view_job(struct store *st, int64_t id, const char *base_url, cJSON **out,
		 struct pg_err *err)
{
	if (vw_one(st, "job", id, "SELECT " JOB_COLUMNS JOB_FROM " WHERE j.id = ?1",
			 fill_job_spec, out, err) < 0)
		return -1;
	if (vw_add_rows(st, *out, "attempts",
			      "SELECT a.attempt, ag.name, a.started_at, a.ended_at, a.outcome,"
			      " a.reason, res.fingerprint FROM attempts a"
			      " LEFT JOIN agents ag ON ag.id = a.agent_id"
			      " LEFT JOIN results res ON res.job_id = a.job_id AND res.attempt = a.attempt"
			      " WHERE a.job_id = ?1 ORDER BY a.attempt",
			      STORE_ARGS(STORE_INT(id)), fill_attempt, err) < 0 ||
	    vw_add_rows(st, *out, "logs",
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

	if (!(vw_int(o, "id", stmt, 0) &&
	      vw_text(o, "name", stmt, 1) &&
	      vw_text(o, "transport", stmt, 2) &&
	      vw_bool(o, "enabled", sqlite3_column_int(stmt, 3) != 0) &&
	      vw_json(o, "labels", stmt, 4) &&
	      vw_json(o, "facts", stmt, 5) &&
	      vw_int(o, "created_at", stmt, 6) &&
	      vw_int_or_null(o, "last_seen", stmt, 7) &&
	      vw_bool(o, "online", sqlite3_column_int(stmt, 8) != 0)))
		return false;
	if (sqlite3_column_type(stmt, 9) == SQLITE_NULL)
		return cJSON_AddNullToObject(o, "job") != NULL;
	job = cJSON_AddObjectToObject(o, "job");
	return job &&
	       vw_int(job, "id", stmt, 9) &&
	       vw_text(job, "state", stmt, 10) &&
	       vw_int(job, "attempt", stmt, 11) &&
	       vw_text_or_null(job, "stage", stmt, 12) &&
	       vw_int_or_null(job, "progress", stmt, 13) &&
	       vw_text(job, "context", stmt, 14) &&
	       vw_int_or_null(job, "lease_expires", stmt, 15);
}

int api_view_agents(struct store *st, int64_t now, int64_t online_window_s, cJSON **out,
		    struct pg_err *err)
{
	cJSON *agent, *ssh;

	if (vw_list(st, "list agents",
		    "SELECT " AGENT_COLUMNS " FROM agents a LEFT JOIN jobs j"
		    " ON j.agent_id = a.id AND j.state IN ('leased', 'running')"
		    " ORDER BY a.name",
		    STORE_ARGS(STORE_INT(now - online_window_s)), fill_agent, out, err) < 0)
		return -1;
	/* "ssh": a host driven over SSH, its connection as the dispatcher
	 * last knew it (ssh_state.h); null for a daemon agent. */
	cJSON_ArrayForEach(agent, *out) {
		if (ssh_state_json(st, (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(agent, "id")),
				   &ssh, err) < 0)
			goto fail;
		if (!cJSON_AddItemToObject(agent, "ssh", ssh)) {
			cJSON_Delete(ssh);
			pg_err_set(err, PG_ENOMEM, "list agents: out of memory");
			goto fail;
		}
	}
	return 0;
fail:
	cJSON_Delete(*out);
	*out = NULL;
	return -1;
}

static const struct vw_col labels_cols[] = {
	{ "labels", VW_JSON, 0 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_labels(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, labels_cols);
}

int api_view_agent_labels(struct store *st, int64_t agent_id, cJSON **out,
			  struct pg_err *err)
{
	cJSON *row = NULL;

	*out = NULL;
	if (vw_one(st, "agent", agent_id, "SELECT labels FROM agents WHERE id = ?1",
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
