/* SPDX-License-Identifier: MIT */
/*
 * The read endpoints: series, runs, jobs, agents, logs, the mbox agents
 * apply, and /metrics.  They run on the HTTP threads over a read-only
 * store connection (api_server.c's pool) and change nothing.
 */
#include "api_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_view.h"
#include "api_web.h"
#include "fmt.h"
#include "changes.h"
#include "fsutil.h"
#include "drift.h"
#include "ssh_state.h"
#include "hostnoise.h"
#include "json.h"
#include "log.h"

/* The longest text a query parameter may hold (a filter, a trend's key). */
#define API_QUERY_TEXT_MAX 512
#define API_TREND_POINTS_DEFAULT 5000
#define API_TREND_POINTS_MAX 100000

/* The largest message file (messages.raw_path) put in an mbox. */
#define API_MESSAGE_MAX ((size_t)64 << 20)

static const char api_mbox_sep[] = "From perfgate Thu Jan  1 00:00:00 1970\n";

/* ---- query parameters --------------------------------------------------- */

static const char *api_query(struct api_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* An optional integer parameter in [min, max], def when absent. */
static int api_query_int(struct api_req *r, const char *name, int64_t min, int64_t max,
			 int64_t def, int64_t *out, struct pg_err *err)
{
	const char *v = api_query(r, name);

	*out = def;
	if (v && api_parse_uint(v, min, max, out) < 0)
		return pg_err_set(err, PG_EINVAL, "query parameter '%s': '%.64s' is not an integer "
				  "in [%lld, %lld]", name, v, (long long)min, (long long)max);
	return 0;
}

/* An optional state= among allowed (NULL-ended). */
static int api_query_state(struct api_req *r, const char *const *allowed, const char **out,
			   struct pg_err *err)
{
	struct pg_buf list = PG_BUF_INIT(512);
	const char *v = api_query(r, "state");
	int rc = -1;

	*out = NULL;
	if (!v)
		return 0;
	for (size_t i = 0; allowed[i]; i++)
		if (strcmp(v, allowed[i]) == 0) {
			*out = allowed[i];
			return 0;
		}
	for (size_t i = 0; allowed[i]; i++)
		if (pg_buf_printf(&list, "%s%s", i ? ", " : "", allowed[i]) < 0) {
			pg_buf_err(&list, err, "query parameter 'state'");
			goto out;
		}
	pg_err_set(err, PG_EINVAL, "query parameter 'state': '%.64s' is not one of %s", v,
		   pg_buf_str(&list));
out:
	pg_buf_release(&list);
	return rc;
}

/* {key: items, "limit": L, "offset": O[, "total": T]} */
static cJSON *api_page(const char *key, cJSON *items, int64_t limit, int64_t offset,
		       int64_t total)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddItemToObject(o, key, items)) {
		cJSON_Delete(items);
		cJSON_Delete(o);
		return NULL;
	}
	if (!cJSON_AddNumberToObject(o, "limit", (double)limit) ||
	    !cJSON_AddNumberToObject(o, "offset", (double)offset) ||
	    (total >= 0 && !cJSON_AddNumberToObject(o, "total", (double)total))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---- the mbox ------------------------------------------------------------- */

int api_mbox_add(struct pg_buf *out, const char *msg, size_t len)
{
	const char *p = msg, *end = msg + len;

	/* A message kept with the From_ line of the mbox it came in. */
	if (len >= 5 && memcmp(msg, "From ", 5) == 0) {
		const char *nl = memchr(msg, '\n', len);

		p = nl ? nl + 1 : end;
	}
	if (pg_buf_add(out, api_mbox_sep, sizeof(api_mbox_sep) - 1) < 0)
		return -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		const char *q = p;

		while (q < p + l && *q == '>')
			q++;
		if ((size_t)(p + l - q) >= 5 && memcmp(q, "From ", 5) == 0 &&
		    pg_buf_addch(out, '>') < 0)
			return -1;
		if (pg_buf_add(out, p, l) < 0)
			return -1;
		p += l;
	}
	if (out->data[out->len - 1] != '\n' && pg_buf_addch(out, '\n') < 0)
		return -1;
	return pg_buf_addch(out, '\n');
}

int api_series_mbox(struct store *st, int64_t series_id, struct pg_buf *out,
		    struct pg_err *err)
{
	static const char what[] = "read series patches";
	struct pg_buf file = PG_BUF_INIT(API_MESSAGE_MAX);
	sqlite3_stmt *stmt = NULL;
	int64_t n = 0;
	int row, rc = -1;

	if (store_query_int(st, "find series", "SELECT count(*) FROM series WHERE id = ?1",
			    STORE_ARGS(STORE_INT(series_id)), &n, err) < 0)
		goto out;
	if (n == 0) {
		pg_err_set(err, PG_ENOTFOUND, "no series %lld", (long long)series_id);
		goto out;
	}
	if (store_prepare(st, &stmt, "SELECT p.number, m.raw, m.raw_path FROM patches p"
			  " JOIN messages m ON m.id = p.message_id WHERE p.series_id = ?1"
			  " ORDER BY p.number", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(series_id)), what, err) < 0)
		goto out;
	while ((row = store_step(stmt, what, err)) == 1) {
		const char *raw = sqlite3_column_blob(stmt, 1);
		size_t len = (size_t)sqlite3_column_bytes(stmt, 1);

		if (sqlite3_column_type(stmt, 1) == SQLITE_NULL) {
			pg_buf_reset(&file);
			if (pg_read_file((const char *)sqlite3_column_text(stmt, 2), &file, err) < 0) {
				pg_err_prefix(err, "patch %d", sqlite3_column_int(stmt, 0));
				goto out;
			}
			raw = file.data ? file.data : "";
			len = file.len;
		}
		if (api_mbox_add(out, raw ? raw : "", len) < 0) {
			pg_err_set(err, PG_ETOOBIG, "series %lld: the mbox is over %zu bytes",
				   (long long)series_id, out->max);
			goto out;
		}
	}
	rc = row < 0 ? -1 : 0;
out:
	sqlite3_finalize(stmt);
	pg_buf_release(&file);
	return rc;
}

/* ---- endpoints -------------------------------------------------------------- */

/* An optional text parameter of at most max bytes, printable (no control
 * byte: it goes into SQL as a value and into error messages). */
static int api_query_text(struct api_req *r, const char *name, size_t max, const char **out,
			  struct pg_err *err)
{
	const char *v = api_query(r, name);

	*out = NULL;
	if (!v || !*v)
		return 0;
	if (strlen(v) > max)
		return pg_err_set(err, PG_EINVAL, "query parameter '%s': longer than %zu bytes",
				  name, max);
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (*p < ' ' || *p == 0x7f)
			return pg_err_set(err, PG_EINVAL, "query parameter '%s': holds a control "
					  "character", name);
	*out = v;
	return 0;
}

static void api_read_series_list(struct store *st, struct api_req *r)
{
	static const char *const states[] = {
		"incomplete", "complete", "superseded", "stale", NULL
	};
	struct pg_err err = PG_ERR_INIT;
	struct api_series_filter f = { .checks = true };
	const char *order = api_query(r, "order");
	int64_t limit, offset, total = 0;
	cJSON *items = NULL;

	if (order && strcmp(order, "newest") && strcmp(order, "oldest")) {
		api_reply_error(r, 400, "query parameter 'order': '%.64s' is not newest or oldest",
				order);
		return;
	}
	f.newest = order && !strcmp(order, "newest");
	if (api_query_state(r, states, &f.state, &err) < 0 ||
	    api_query_text(r, "submitter", API_QUERY_TEXT_MAX, &f.submitter, &err) < 0 ||
	    api_query_text(r, "context", API_QUERY_TEXT_MAX, &f.context, &err) < 0 ||
	    api_query_text(r, "tree", API_QUERY_TEXT_MAX, &f.tree, &err) < 0 ||
	    api_query_text(r, "q", API_QUERY_TEXT_MAX, &f.q, &err) < 0 ||
	    api_query_int(r, "limit", 1, API_LIST_LIMIT_MAX, API_LIST_LIMIT_DEFAULT, &limit,
			  &err) < 0 ||
	    api_query_int(r, "offset", 0, INT32_MAX, 0, &offset, &err) < 0 ||
	    api_view_series_count(st, &f, &total, &err) < 0 ||
	    api_view_series_list(st, &f, limit, offset, &items, &err) < 0) {
		api_reply_err(r, &err);
		return;
	}
	api_reply_json(r, 200, api_page("series", items, limit, offset, total));
}

static void api_read_jobs(struct store *st, struct api_req *r)
{
	static const char *const states[] = {
		"queued", "leased", "running", "done", "cancelled", "infra-error", NULL
	};
	struct pg_err err = PG_ERR_INIT;
	const char *state = NULL;
	int64_t limit, offset;
	cJSON *items = NULL;

	if (api_query_state(r, states, &state, &err) < 0 ||
	    api_query_int(r, "limit", 1, API_LIST_LIMIT_MAX, API_LIST_LIMIT_DEFAULT, &limit,
			  &err) < 0 ||
	    api_query_int(r, "offset", 0, INT32_MAX, 0, &offset, &err) < 0 ||
	    api_view_jobs(st, state, limit, offset, &items, &err) < 0) {
		api_reply_err(r, &err);
		return;
	}
	api_reply_json(r, 200, api_page("jobs", items, limit, offset, -1));
}

/* GET /api/v1/change-points?state=&limit=: changes.h, newest first. */
static void api_read_change_points(struct store *st, struct api_req *r)
{
	static const char *const states[] = { "suspected", "confirmed", "dismissed", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct change_point *cps = NULL;
	const char *state = NULL;
	cJSON *doc = NULL, *arr;
	int64_t limit;
	size_t n = 0;

	if (api_query_state(r, states, &state, &err) < 0 ||
	    api_query_int(r, "limit", 1, API_LIST_LIMIT_MAX, API_LIST_LIMIT_DEFAULT, &limit,
			  &err) < 0 ||
	    changes_list(st, state, limit, &cps, &n, &err) < 0) {
		api_reply_err(r, &err);
		return;
	}
	doc = cJSON_CreateObject();
	arr = doc ? cJSON_AddArrayToObject(doc, "change_points") : NULL;
	for (size_t i = 0; arr && i < n; i++)
		if (!cJSON_AddItemToArray(arr, changes_to_json(&cps[i])))
			arr = NULL;
	free(cps);
	if (!arr) {
		cJSON_Delete(doc);
		pg_err_set(&err, PG_ENOMEM, "change points: out of memory");
		api_reply_err(r, &err);
		return;
	}
	api_reply_json(r, 200, doc);
}

static void api_read_agents(struct store *st, struct api_req *r)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t now = api_now_s();
	cJSON *items = NULL, *o;

	if (api_view_agents_dash(st, now, API_ONLINE_WINDOW_S, &items, &err) < 0) {
		api_reply_err(r, &err);
		return;
	}
	o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToObject(o, "agents", items)) {
		cJSON_Delete(items);
		cJSON_Delete(o);
		o = NULL;
	} else if (!cJSON_AddNumberToObject(o, "now", (double)now)) {
		cJSON_Delete(o);
		o = NULL;
	}
	api_reply_json(r, 200, o);
}

/* What the pages need to know of the controller itself. */
static void api_read_meta(struct api_server *srv, struct api_req *r)
{
	static const char *const states[] = {
		"incomplete", "complete", "superseded", "stale"
	};
	cJSON *o = cJSON_CreateObject(), *arr;
	bool ok = o && cJSON_AddStringToObject(o, "version", PG_VERSION) &&
		  cJSON_AddBoolToObject(o, "admin", srv->admin.set) &&
		  cJSON_AddStringToObject(o, "public_url", srv->public_url) &&
		  cJSON_AddItemToObject(o, "series_states",
					cJSON_CreateStringArray(states, 4));

	if (ok && (ok = (arr = cJSON_AddArrayToObject(o, "contexts")) != NULL))
		for (size_t i = 0; ok && i < srv->ps->n_contexts; i++)
			ok = cJSON_AddItemToArray(arr, cJSON_CreateString(srv->ps->contexts[i].name));
	if (ok && (ok = (arr = cJSON_AddArrayToObject(o, "trees")) != NULL))
		for (size_t i = 0; ok && i < srv->ps->n_trees; i++)
			ok = cJSON_AddItemToArray(arr, cJSON_CreateString(srv->ps->trees[i].name));
	if (!ok) {
		cJSON_Delete(o);
		o = NULL;
	}
	api_reply_json(r, 200, o);
}

static void api_read_queue(struct api_server *srv, struct store *st, struct api_req *r)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t limit;
	cJSON *o = NULL;

	if (api_query_int(r, "limit", 1, API_LIST_LIMIT_MAX, API_LIST_LIMIT_MAX, &limit,
			  &err) < 0 ||
	    api_view_queue(st, srv->ps, api_now_s(), API_ONLINE_WINDOW_S, limit, &o, &err) < 0)
		api_reply_err(r, &err);
	else
		api_reply_json(r, 200, o);
}

/* Without a key, the keys; with all six, that key's history. */
static void api_read_trends(struct api_server *srv, struct store *st, struct api_req *r)
{
	static const char *const names[] = {
		"host", "tree", "branch", "build_mode", "benchmark", "metric"
	};
	struct pg_err err = PG_ERR_INIT;
	const char *v[6];
	struct api_trend_key k;
	int64_t limit;
	int given = 0;
	cJSON *o = NULL;

	for (int i = 0; i < 6; i++) {
		if (api_query_text(r, names[i], API_QUERY_TEXT_MAX, &v[i], &err) < 0)
			goto fail;
		given += v[i] != NULL;
	}
	if (api_query_int(r, "limit", 1, API_TREND_POINTS_MAX, API_TREND_POINTS_DEFAULT, &limit,
			  &err) < 0)
		goto fail;
	if (given == 0) {
		if (api_view_trend_keys(st, &o, &err) < 0)
			goto fail;
		api_reply_json(r, 200, o);
		return;
	}
	if (given < 6) {
		api_reply_error(r, 400, "a trend needs all of host, tree, branch, build_mode, "
				"benchmark and metric (or none of them, for the list)");
		return;
	}
	k = (struct api_trend_key){ v[0], v[1], v[2], v[3], v[4], v[5] };
	if (api_view_trend(st, &k, srv->mirror_root, limit, &o, &err) < 0)
		goto fail;
	api_reply_json(r, 200, o);
	return;
fail:
	api_reply_err(r, &err);
}

/* GET /api/v1/history?agent=&tree=&branch=&mode=&key=[&benchmark=]: one
 * key's history on one host in first-parent order (changes.h).  key is
 * the metric; benchmark, when not given, the one benchmark of the
 * history that has it. */
static void api_read_history(const struct api_server *srv, struct store *st,
			     struct api_req *r)
{
	static const char *const names[] = { "agent", "tree", "branch", "mode", "key",
					     "benchmark" };
	struct pg_err err = PG_ERR_INIT;
	const char *v[6];
	char bench[API_QUERY_TEXT_MAX + 1];
	struct changes_key k;
	int64_t n = 0;
	cJSON *o = NULL;

	for (int i = 0; i < 6; i++)
		if (api_query_text(r, names[i], API_QUERY_TEXT_MAX, &v[i], &err) < 0)
			goto fail;
	for (int i = 0; i < 5; i++)
		if (!v[i]) {
			api_reply_error(r, 400, "history needs agent, tree, branch, mode and key "
					"(the metric), and takes benchmark");
			return;
		}
	if (!v[5]) {
		if (changes_history_benchmark(st, v[0], v[1], v[2], v[3], v[4], bench, sizeof(bench),
					      &n, &err) < 0)
			goto fail;
		if (n > 1) {
			api_reply_error(r, 400, "key names a metric of more than one benchmark: "
					"give benchmark");
			return;
		}
		v[5] = bench;
	}
	k = (struct changes_key){ v[0], v[1], v[2], v[3], v[5], v[4] };
	if (changes_history_json(st, srv->mirror_root, &k, &o, &err) < 0)
		goto fail;
	if (!cJSON_AddStringToObject(o, "agent", k.host) ||
	    !cJSON_AddStringToObject(o, "tree", k.tree) ||
	    !cJSON_AddStringToObject(o, "branch", k.branch) ||
	    !cJSON_AddStringToObject(o, "build_mode", k.build_mode) ||
	    !cJSON_AddStringToObject(o, "benchmark", k.benchmark) ||
	    !cJSON_AddStringToObject(o, "metric", k.metric)) {
		cJSON_Delete(o);
		api_reply_error(r, 500, "history: out of memory");
		return;
	}
	api_reply_json(r, 200, o);
	return;
fail:
	api_reply_err(r, &err);
}

static void api_read_samples(struct store *st, struct api_req *r)
{
	struct pg_err err = PG_ERR_INIT;
	const char *bench, *metric;
	cJSON *o = NULL;

	if (api_query_text(r, "benchmark", API_QUERY_TEXT_MAX, &bench, &err) < 0 ||
	    api_query_text(r, "metric", API_QUERY_TEXT_MAX, &metric, &err) < 0 ||
	    api_view_job_samples(st, r->route.id, bench, metric, &o, &err) < 0)
		api_reply_err(r, &err);
	else
		api_reply_json(r, 200, o);
}

static void api_read_mbox(struct store *st, struct api_req *r)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf mbox = PG_BUF_INIT(API_MBOX_MAX);

	if (api_series_mbox(st, r->route.id, &mbox, &err) < 0)
		api_reply_err(r, &err);
	else
		api_reply_text(r, 200, "application/mbox", mbox.data ? mbox.data : "", mbox.len);
	pg_buf_release(&mbox);
}

/* Seek fd to where its last `tail` bytes start, then past the first line
 * end there (a whole first line), unless that line is all of it. */
static int api_log_seek_tail(int fd, off_t size, int64_t tail, struct pg_err *err)
{
	char buf[4096];
	off_t at = size - tail;
	ssize_t n = pread(fd, buf, sizeof(buf), at);
	const char *nl = n > 0 ? memchr(buf, '\n', (size_t)n) : NULL;

	if (n < 0)
		return pg_err_errno(err, "read the log");
	if (nl && at + (nl - buf) + 1 < size)
		at += nl - buf + 1;
	if (lseek(fd, at, SEEK_SET) < 0)
		return pg_err_errno(err, "seek the log");
	return 0;
}

/* A stage's log, sent from its file; with ?tail=N its end only. */
static void api_read_log(struct api_server *srv, struct store *st, struct api_req *r)
{
	static const char what[] = "find log";
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf path = PG_BUF_INIT(8192);
	sqlite3_stmt *stmt = NULL;
	struct stat sb;
	const char *rel;
	int64_t tail;
	int row, fd = -1;

	if (store_prepare(st, &stmt, "SELECT path FROM logs WHERE job_id = ?1 AND attempt = ?2"
			  " AND stage = ?3", what, &err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(r->route.id), STORE_INT(r->route.attempt),
					STORE_TEXT(r->route.stage)), what, &err) < 0)
		goto fail;
	row = store_step(stmt, what, &err);
	if (row < 0)
		goto fail;
	if (row == 0) {
		pg_err_set(&err, PG_ENOTFOUND, "job %lld has no log of stage %s in attempt %lld",
			   (long long)r->route.id, r->route.stage, (long long)r->route.attempt);
		goto fail;
	}
	rel = (const char *)sqlite3_column_text(stmt, 0);
	if (!rel)
		rel = "";
	if ((rel[0] != '/' && pg_buf_printf(&path, "%s/", srv->cfg->data_dir) < 0) ||
	    pg_buf_adds(&path, rel) < 0) {
		pg_buf_err(&path, &err, "log path");
		goto fail;
	}
	fd = open(pg_buf_str(&path), O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		pg_err_set(&err, PG_ENOTFOUND, "the log file of job %lld is missing",
			   (long long)r->route.id);
		goto fail;
	}
	if (fd < 0 || fstat(fd, &sb) < 0) {
		pg_err_errno(&err, "open %s", pg_buf_str(&path));
		goto fail;
	}
	if (api_query_int(r, "tail", 1, API_LOG_MAX_BYTES, 0, &tail, &err) < 0)
		goto fail;
	if (pg_fmt(r->log_size, sizeof(r->log_size), "%lld", (long long)sb.st_size) < 0) {
		pg_err_set(&err, PG_EINVAL, "log size: too long");
		goto fail;
	}
	if (tail && sb.st_size > tail && api_log_seek_tail(fd, sb.st_size, tail, &err) < 0)
		goto fail;
	api_reply_empty(r, 200);
	r->content_type = "text/plain; charset=utf-8";
	r->fd = fd;
	r->fd_size = (uint64_t)sb.st_size;
	r->fd_text = true;	/* what sandboxed code printed */
	fd = -1;
	goto out;
fail:
	api_reply_err(r, &err);
out:
	if (fd >= 0)
		close(fd);
	sqlite3_finalize(stmt);
	pg_buf_release(&path);
}

static void api_read_metrics(struct api_server *srv, struct store *st, struct api_req *r)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf out = PG_BUF_INIT(1024 * 1024);
	struct api_counts *c = malloc(sizeof(*c));
	struct sched_stats s;
	struct api_lab_counts lab;

	if (!c) {
		api_reply_error(r, 500, "out of memory");
		goto out;
	}
	if (sched_queue_stats(st, api_now_s(), API_ONLINE_WINDOW_S, &s, &err) < 0 ||
	    changes_counts(st, lab.change_points, &err) < 0 ||
	    drift_counts(st, &lab.drift_flagged, &lab.drift_drained, &err) < 0 ||
	    ssh_state_counts(st, lab.ssh_hosts, &err) < 0) {
		api_reply_err(r, &err);
		goto out;
	}
	api_metrics_snapshot(&srv->metrics, c);
	if (api_metrics_format(c, &s, &lab, &out) < 0) {
		api_reply_error(r, 500, "metrics: out of memory");
		goto out;
	}
	api_reply_text(r, 200, "text/plain; version=0.0.4; charset=utf-8", pg_buf_str(&out),
		       out.len);
out:
	free(c);
	pg_buf_release(&out);
}

/* GET /api/v1/hosts/{agent}/noise: hostnoise.h; 404 for an agent never
 * registered. */
static int api_read_host_noise(const struct api_server *srv, struct store *st,
			       const char *agent, cJSON **out, struct pg_err *err)
{
	struct hostnoise_key *keys = NULL;
	int64_t known = 0;
	size_t n = 0;

	if (store_query_int(st, "look up the agent", "SELECT count(*) FROM agents WHERE name = ?1",
			    STORE_ARGS(STORE_TEXT(agent)), &known, err) < 0)
		return -1;
	if (!known)
		return pg_err_set(err, PG_ENOTFOUND, "no agent '%s'", agent);
	if (hostnoise_read(st, srv->ps, agent, &keys, &n, err) < 0)
		return -1;
	*out = hostnoise_to_json(agent, keys, n);
	free(keys);
	return *out ? 0 : pg_err_set(err, PG_ENOMEM, "host noise: out of memory");
}

void api_read_run(struct api_server *srv, struct store *st, struct api_req *r)
{
	const struct api_series_links links = { srv->conf->archive_url,
						srv->cfg->mail.patch_url_template };
	struct pg_err err = PG_ERR_INIT;
	cJSON *o = NULL;
	int rc = 0;

	switch (r->route.ep) {
	case API_EP_METRICS:
		api_read_metrics(srv, st, r);
		return;
	case API_EP_AGENTS:
		api_read_agents(st, r);
		return;
	case API_EP_SERIES_LIST:
		api_read_series_list(st, r);
		return;
	case API_EP_SERIES_MBOX:
		api_read_mbox(st, r);
		return;
	case API_EP_JOBS:
		api_read_jobs(st, r);
		return;
	case API_EP_JOB_LOG:
		api_read_log(srv, st, r);
		return;
	case API_EP_SERIES:
		rc = api_view_series(st, r->route.id, &links, &o, &err);
		break;
	case API_EP_RUN:
		rc = api_view_run(st, r->route.id, &o, &err);
		break;
	case API_EP_META:
		api_read_meta(srv, r);
		return;
	case API_EP_QUEUE:
		api_read_queue(srv, st, r);
		return;
	case API_EP_TRENDS:
		api_read_trends(srv, st, r);
		return;
	case API_EP_JOB_SAMPLES:
		api_read_samples(st, r);
		return;
	case API_EP_JOB_VERDICT:
		rc = api_view_job_verdict(st, srv->ps, r->route.id, "", &o, &err);
		break;
	case API_EP_CHANGE_POINTS:
		api_read_change_points(st, r);
		return;
	case API_EP_HISTORY:
		api_read_history(srv, st, r);
		return;
	case API_EP_HOST_NOISE:
		rc = api_read_host_noise(srv, st, r->route.name, &o, &err);
		break;
	case API_EP_PAGE:
	case API_EP_ASSET:
		api_web_serve(srv, st, r);
		return;
	case API_EP_JOB:
		rc = api_view_job(st, r->route.id, srv->public_url, &o, &err);
		break;
	default:
		pg_err_set(&err, PG_EIO, "no reader for %s", api_route_name(r->route.ep));
		rc = -1;
		break;
	}
	if (rc < 0)
		api_reply_err(r, &err);
	else
		api_reply_json(r, 200, o);
}
