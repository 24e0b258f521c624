/* SPDX-License-Identifier: MIT */
/* The dashboard's views of the store: agents at work, the queue, samples,
 * trends (see api_view.h). */
#include "api_view.h"
#include "api_view_int.h"

#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "fmt.h"
#include "sched.h"
#include "trees.h"
#include "verdict_pass.h"

#define ETA_ROUNDS 20		/* attempts a job's length is the median of */
#define RECENT_ATTEMPTS 5
#define QUEUE_CLASSES 64	/* host classes remembered per queue view */
#define TREND_WALK_MAX 200000	/* commits walked back from a branch's tip */

static int nomem(struct pg_err *err, const char *what)
{
	return pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
}

static int64_t num(const cJSON *o, const char *key)
{
	return (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static const char *str(const cJSON *o, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));

	return s ? s : "";
}

/* ---- how long a job takes ---------------------------------------------- */

bool api_view_eta(struct store *st, cJSON *o, const char *host_class, const char *build_mode,
		  int64_t elapsed_s, struct pg_err *err)
{
	static const char what[] = "job lengths";
	int64_t len[ETA_ROUNDS];
	sqlite3_stmt *stmt = NULL;
	size_t n = 0;
	int row;

	if (store_prepare_cached(st, &stmt,
				 "SELECT a.ended_at - a.started_at FROM attempts a"
				 " JOIN jobs j ON j.id = a.job_id WHERE j.host_class = ?1"
				 " AND j.build_mode = ?2 AND a.outcome = 'ok' AND a.ended_at IS NOT NULL"
				 " ORDER BY a.ended_at DESC LIMIT ?3", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_TEXT(host_class), STORE_TEXT(build_mode),
					STORE_INT(ETA_ROUNDS)), what, err) < 0) {
		store_done(st, stmt);
		return false;
	}
	while ((row = store_step(stmt, what, err)) == 1 && n < ETA_ROUNDS)
		len[n++] = sqlite3_column_int64(stmt, 0);
	store_done(st, stmt);
	if (row < 0)
		return false;
	if (!n)
		return cJSON_AddNullToObject(o, "eta_s") != NULL;
	/* Insertion sort: twenty values. */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && len[k - 1] > len[k]; k--) {
			int64_t t = len[k];

			len[k] = len[k - 1];
			len[k - 1] = t;
		}
	return cJSON_AddNumberToObject(o, "eta_s", (double)(len[n / 2] > elapsed_s ?
							    len[n / 2] - elapsed_s : 0)) != NULL;
}

/* ---- agents --------------------------------------------------------------- */

static const struct vw_col running_cols[] = {
	{ "series", VW_INT_OR_NULL, 0 },	/* null: a baseline */
	{ "run", VW_INT, 1 },
	{ "build_mode", VW_TEXT, 2 },
	{ "host_class", VW_TEXT, 3 },
	{ "started_at", VW_INT_OR_NULL, 4 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_running(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, running_cols);
}

static const struct vw_col recent_cols[] = {
	{ "job", VW_INT, 0 },
	{ "attempt", VW_INT, 1 },
	{ "outcome", VW_TEXT_OR_NULL, 2 },
	{ "context", VW_TEXT, 3 },
	{ "started_at", VW_INT, 4 },
	{ "ended_at", VW_INT_OR_NULL, 5 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_recent(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, recent_cols);
}

/* started_at, elapsed_s and eta_s of a job object holding "host_class"
 * and "build_mode" (and "started_at" from fill_running()). */
static int add_times(struct store *st, cJSON *job, int64_t now, struct pg_err *err)
{
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(job, "started_at");
	int64_t elapsed = cJSON_IsNumber(at) && now > num(job, "started_at") ?
			  now - num(job, "started_at") : 0;

	if (!cJSON_AddNumberToObject(job, "elapsed_s", (double)elapsed))
		return nomem(err, "job times");
	if (!api_view_eta(st, job, str(job, "host_class"), str(job, "build_mode"), elapsed, err))
		return err->code ? -1 : nomem(err, "job times");
	return 0;
}

/* Move the members of the first object of arr into o, and free arr. */
static void merge_first(cJSON *o, cJSON *arr)
{
	cJSON *src = cJSON_GetArrayItem(arr, 0), *item;

	while (src && (item = src->child)) {
		cJSON_DetachItemViaPointer(src, item);
		cJSON_DeleteItemFromObjectCaseSensitive(o, item->string);
		cJSON_AddItemToObject(o, item->string, item);
	}
	cJSON_Delete(arr);
}

/* A leased or running job object (holding "id") gets its "series",
 * "run", "build_mode", "host_class", its attempt's "started_at",
 * "elapsed_s" and "eta_s": the agents and the queue show the same. */
static int add_running(struct store *st, cJSON *job, int64_t now, struct pg_err *err)
{
	cJSON *extra = NULL;

	if (vw_list(st, "running job",
		    "SELECT r.series_id, j.run_id, j.build_mode, j.host_class, a.started_at"
		    " FROM jobs j JOIN runs r ON r.id = j.run_id LEFT JOIN attempts a"
		    " ON a.job_id = j.id AND a.attempt = j.attempt WHERE j.id = ?1",
		    STORE_ARGS(STORE_INT(num(job, "id"))), fill_running, &extra, err) < 0)
		return -1;
	merge_first(job, extra);
	return add_times(st, job, now, err);
}

/* "drift": the host's open drift flag (drift.h), a drained one first;
 * null when none. */
static int add_drift(struct store *st, cJSON *agent, struct pg_err *err)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(agent, "name");
	struct drift_flag *f = NULL;
	const struct drift_flag *pick = NULL;
	size_t n = 0;
	cJSON *o;
	int rc = -1;

	if (!cJSON_IsString(name))
		return 0;
	if (drift_list(st, name->valuestring, true, &f, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!pick || (!strcmp(f[i].state, "drained") && strcmp(pick->state, "drained")))
			pick = &f[i];
	o = pick ? drift_to_json(pick) : cJSON_CreateNull();
	if (!o || (pick && !cJSON_AddNumberToObject(o, "open", (double)n)) ||
	    !cJSON_AddItemToObject(agent, "drift", o)) {
		cJSON_Delete(o);
		nomem(err, "agents");
		goto out;
	}
	rc = 0;
out:
	free(f);
	return rc;
}

int api_view_agents_dash(struct store *st, int64_t now, int64_t online_window_s, cJSON **out,
			 struct pg_err *err)
{
	cJSON *agent;

	if (api_view_agents(st, now, online_window_s, out, err) < 0)
		return -1;
	cJSON_ArrayForEach(agent, *out) {
		cJSON *job = cJSON_GetObjectItemCaseSensitive(agent, "job");
		const char *state = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(agent, "enabled"))
					    ? "disabled"
				    : !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(agent, "online"))
					    ? "offline"
				    : cJSON_IsObject(job) ? "busy" : "idle";

		if (!cJSON_AddStringToObject(agent, "state", state)) {
			nomem(err, "agents");
			goto fail;
		}
		if (cJSON_IsObject(job) && add_running(st, job, now, err) < 0)
			goto fail;
		if (add_drift(st, agent, err) < 0)
			goto fail;
		if (vw_add_rows(st, agent, "recent",
				"SELECT a.job_id, a.attempt, a.outcome, j.context, a.started_at,"
				" a.ended_at FROM attempts a JOIN jobs j ON j.id = a.job_id"
				" WHERE a.agent_id = ?1 AND a.ended_at IS NOT NULL"
				" ORDER BY a.ended_at DESC, a.id DESC LIMIT ?2",
				STORE_ARGS(STORE_INT(num(agent, "id")), STORE_INT(RECENT_ATTEMPTS)),
				fill_recent, err) < 0)
			goto fail;
	}
	return 0;
fail:
	cJSON_Delete(*out);
	*out = NULL;
	return -1;
}

/* ---- the queue ------------------------------------------------------------ */

struct class_seen {
	char name[SCHED_NAME_MAX + 1];
	struct sched_class_agents a;
};

/* Why a queued job waits (see api_view_queue()). */
static int queue_waiting(struct store *st, const struct profile_set *ps, cJSON *job,
			 sqlite3_stmt *stmt, int64_t now, int64_t window,
			 struct class_seen *seen, size_t *n_seen, struct pg_err *err)
{
	const char *hc = str(job, "host_class");
	struct sched_class_agents one, *a = NULL;
	char why[512];

	if (num(job, "priority") < 0) {
		pg_fmt_cut(why, sizeof(why), "held back (priority %lld)",
			   (long long)num(job, "priority"));
	} else if (sqlite3_column_type(stmt, JOB_NCOLUMNS) != SQLITE_NULL) {
		bool on = sqlite3_column_int(stmt, JOB_NCOLUMNS + 1) != 0;

		pg_fmt_cut(why, sizeof(why), "follow-up round: waits for %.64s, which ran the "
			   "first round (%s)", vw_col_text(stmt, JOB_NCOLUMNS),
			   on ? "online" : "offline or disabled");
	} else {
		for (size_t i = 0; i < *n_seen && !a; i++)
			if (!strcmp(seen[i].name, hc))
				a = &seen[i].a;
		if (!a) {
			a = *n_seen < QUEUE_CLASSES ? &seen[*n_seen].a : &one;
			if (sched_class_agents(st, ps, hc, now, window, a, err) < 0)
				return -1;
			if (*n_seen < QUEUE_CLASSES) {
				if (pg_fmt(seen[*n_seen].name, sizeof(seen[0].name), "%s", hc) < 0)
					return pg_err_set(err, PG_EINVAL, "host class '%.64s...': "
							  "too long", hc);
				(*n_seen)++;
			}
		}
		if (!a->enabled)
			pg_fmt_cut(why, sizeof(why), "no enabled agent has the labels of host "
				   "class %.64s", hc);
		else if (!a->online)
			pg_fmt_cut(why, sizeof(why), "no agent of host class %.64s is online (%d "
				   "enabled)", hc, a->enabled);
		else if (a->busy >= a->online)
			pg_fmt_cut(why, sizeof(why), "all %d online agents of host class %.64s "
				   "are busy", a->online, hc);
		else
			pg_fmt_cut(why, sizeof(why), "next for host class %.64s: %d of %d agents "
				   "free", hc, a->online - a->busy, a->online);
	}
	return cJSON_AddStringToObject(job, "waiting", why) ? 0 : nomem(err, "queue");
}

int api_view_queue(struct store *st, const struct profile_set *ps, int64_t now,
		   int64_t online_window_s, int64_t limit, cJSON **out, struct pg_err *err)
{
	static const char what[] = "list queue";
	static const struct profile_set none = { 0 };
	struct class_seen *seen = calloc(QUEUE_CLASSES, sizeof(*seen));
	cJSON *queued, *running, *job;
	sqlite3_stmt *stmt = NULL;
	size_t n_seen = 0;
	int64_t pos = 0;
	int row, rc = -1;

	*out = cJSON_CreateObject();
	if (!seen || !*out || !cJSON_AddNumberToObject(*out, "now", (double)now) ||
	    !(queued = cJSON_AddArrayToObject(*out, "queued"))) {
		nomem(err, what);
		goto out;
	}
	if (!ps)
		ps = &none;
	/* The lease's order (sched.c, sched_pick()). */
	if (store_prepare_cached(st, &stmt,
				 "SELECT " JOB_COLUMNS ", pa.name, pa.enabled = 1 AND pa.last_seen >= ?1"
				 JOB_FROM " LEFT JOIN agents pa ON pa.id = j.pin_agent_id"
				 " WHERE j.state = 'queued' ORDER BY j.priority DESC, j.served ASC,"
				 " j.boost DESC, j.created_at ASC, j.id ASC LIMIT ?2", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(now - online_window_s), STORE_INT(limit)), what,
		       err) < 0)
		goto out;
	while ((row = store_step(stmt, what, err)) == 1) {
		job = cJSON_CreateObject();
		if (!job || !cJSON_AddItemToArray(queued, job)) {
			cJSON_Delete(job);
			nomem(err, what);
			goto out;
		}
		if (!vw_fill_job(job, stmt) ||
		    !cJSON_AddNumberToObject(job, "position", (double)++pos)) {
			nomem(err, what);
			goto out;
		}
		if (queue_waiting(st, ps, job, stmt, now, online_window_s, seen, &n_seen, err) < 0)
			goto out;
	}
	if (row < 0)
		goto out;
	store_done(st, stmt);
	stmt = NULL;
	if (vw_add_rows(st, *out, "running",
			"SELECT " JOB_COLUMNS JOB_FROM
			" WHERE j.state IN ('leased', 'running') ORDER BY j.started_at, j.id",
			NULL, 0, vw_fill_job, err) < 0)
		goto out;
	running = cJSON_GetObjectItemCaseSensitive(*out, "running");
	cJSON_ArrayForEach(job, running)
		if (add_running(st, job, now, err) < 0)
			goto out;
	rc = 0;
out:
	store_done(st, stmt);
	free(seen);
	if (rc) {
		cJSON_Delete(*out);
		*out = NULL;
	}
	return rc;
}

/* ---- a job's verdict --------------------------------------------------------- */

/* The fingerprint's timing of a stage's log (runner_dpdk.c's names). */
static const char *stage_timing(const char *stage)
{
	static const struct { const char *stage, *timing; } map[] = {
		{ "prepare", "prepare_ms" }, { "fetch", "fetch_ms" }, { "apply", "apply_ms" },
		{ "build-base", "build_base_ms" }, { "build-patched", "build_patched_ms" },
		{ "bench", "bench_wall_ms" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(stage, map[i].stage))
			return map[i].timing;
	return NULL;
}

/* The attempt object of attempts numbered n, or NULL. */
static const cJSON *attempt_of(const cJSON *attempts, int64_t n)
{
	const cJSON *a;

	cJSON_ArrayForEach(a, attempts)
		if (num(a, "attempt") == n)
			return a;
	return NULL;
}

int api_view_job_verdict(struct store *st, const struct profile_set *ps, int64_t job_id,
			 const char *base_url, cJSON **out, struct pg_err *err)
{
	cJSON *job = NULL, *attempts, *logs, *fp = NULL, *log;
	const cJSON *a;
	int64_t fp_attempt = 0;
	bool measured = false;

	*out = NULL;
	if (verdict_job_json(st, ps, job_id, out, err) < 0 ||
	    api_view_job(st, job_id, base_url, &job, err) < 0)
		goto fail;
	attempts = cJSON_DetachItemFromObjectCaseSensitive(job, "attempts");
	logs = cJSON_DetachItemFromObjectCaseSensitive(job, "logs");
	cJSON_DeleteItemFromObjectCaseSensitive(job, "spec");
	if (!cJSON_AddItemToObject(*out, "job", job)) {
		cJSON_Delete(job);
		cJSON_Delete(attempts);
		cJSON_Delete(logs);
		goto oom;
	}
	/* The numbers come from the measured rounds: their host, their
	 * build; another attempt's only when none measured. */
	cJSON_ArrayForEach(a, attempts) {
		const char *o = str(a, "outcome");
		cJSON *f = cJSON_GetObjectItemCaseSensitive(a, "fingerprint");

		if (!cJSON_IsObject(f))
			continue;
		if (!strcmp(o, "ok") || !strcmp(o, "bench-failure")) {
			fp = f;
			fp_attempt = num(a, "attempt");
			measured = true;
		} else if (!measured) {
			fp = f;
			fp_attempt = num(a, "attempt");
		}
	}
	cJSON_ArrayForEach(log, logs) {
		const cJSON *timings = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(attempt_of(attempts, num(log, "attempt")),
							 "fingerprint"), "timings");
		const char *t = stage_timing(str(log, "stage"));
		const cJSON *ms = t ? cJSON_GetObjectItemCaseSensitive(timings, t) : NULL;

		if (!(cJSON_IsNumber(ms) ? cJSON_AddNumberToObject(log, "duration_ms", ms->valuedouble)
					 : cJSON_AddNullToObject(log, "duration_ms")))
			goto oom_lists;
	}
	fp = fp ? cJSON_Duplicate(fp, true) : cJSON_CreateNull();
	if (!fp || !cJSON_AddItemToObject(*out, "fingerprint", fp)) {
		cJSON_Delete(fp);
		goto oom_lists;
	}
	if (!cJSON_AddNumberToObject(*out, "fingerprint_attempt", (double)fp_attempt) ||
	    !cJSON_AddItemToObject(*out, "stages", logs))
		goto oom_lists;
	cJSON_Delete(attempts);
	return 0;
oom_lists:
	cJSON_Delete(attempts);
	cJSON_Delete(logs);
oom:
	nomem(err, "job verdict");
fail:
	cJSON_Delete(*out);
	*out = NULL;
	return -1;
}

/* ---- samples ---------------------------------------------------------------- */

static const struct vw_col sample_cols[] = {
	{ "attempt", VW_INT, 0 },
	{ "side", VW_TEXT, 1 },
	{ "benchmark", VW_TEXT, 2 },
	{ "metric", VW_TEXT, 3 },
	{ "repetition", VW_INT, 4 },
	{ "value", VW_REAL, 5 },
	{ "unit", VW_TEXT, 6 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_sample(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, sample_cols);
}

static const struct vw_col id_cols[] = {
	{ "job", VW_INT, 0 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_id(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, id_cols);
}

int api_view_job_samples(struct store *st, int64_t job_id, const char *benchmark,
			 const char *metric, cJSON **out, struct pg_err *err)
{
	if (vw_one(st, "job", job_id, "SELECT id FROM jobs WHERE id = ?1", fill_id, out, err) < 0)
		return -1;
	if (vw_add_rows(st, *out, "samples",
			"SELECT attempt, side, benchmark, metric, repetition, value, unit"
			" FROM samples WHERE job_id = ?1 AND (?2 IS NULL OR benchmark = ?2)"
			" AND (?3 IS NULL OR metric = ?3)"
			" ORDER BY attempt, benchmark, metric, side, repetition",
			STORE_ARGS(STORE_INT(job_id), benchmark ? STORE_TEXT(benchmark) : STORE_NULL,
				   metric ? STORE_TEXT(metric) : STORE_NULL), fill_sample, err) < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* ---- trends ------------------------------------------------------------------ */

static const struct vw_col trend_key_cols[] = {
	{ "host", VW_TEXT, 0 },
	{ "host_class", VW_TEXT_OR_NULL, 1 },
	{ "tree", VW_TEXT, 2 },
	{ "branch", VW_TEXT, 3 },
	{ "build_mode", VW_TEXT, 4 },
	{ "benchmark", VW_TEXT, 5 },
	{ "metric", VW_TEXT, 6 },
	{ "unit", VW_TEXT, 7 },
	{ "points", VW_INT, 8 },
	{ "last_at", VW_INT, 9 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_trend_key(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, trend_key_cols);
}

#define TREND_WHERE \
	" WHERE h.host = ?1 AND h.tree = ?2 AND h.branch = ?3 AND h.build_mode = ?4" \
	" AND h.benchmark = ?5 AND h.metric = ?6"
#define TREND_ARGS(k) \
	STORE_TEXT((k)->host), STORE_TEXT((k)->tree), STORE_TEXT((k)->branch), \
	STORE_TEXT((k)->build_mode), STORE_TEXT((k)->benchmark), STORE_TEXT((k)->metric)

/* The GROUP BY reads history_trend alone (every column it needs is in
 * the index); the unit and the host class come from each key's latest
 * row, one index step each.  where: "" or TREND_WHERE. */
#define TREND_LATEST(col) \
	"(SELECT l." col " FROM history l WHERE l.host = k.host AND l.tree = k.tree" \
	" AND l.branch = k.branch AND l.build_mode = k.build_mode AND l.benchmark = k.benchmark" \
	" AND l.metric = k.metric ORDER BY l.measured_at DESC, l.id DESC LIMIT 1)"
#define TREND_KEY_SQL(where) \
	"SELECT k.host, (SELECT j.host_class FROM jobs j WHERE j.id = " TREND_LATEST("job_id") ")," \
	" k.tree, k.branch, k.build_mode, k.benchmark, k.metric, " TREND_LATEST("unit") "," \
	" k.n, k.last FROM" \
	" (SELECT h.host, h.tree, h.branch, h.build_mode, h.benchmark, h.metric," \
	" count(*) AS n, max(h.measured_at) AS last FROM history h" where \
	" GROUP BY h.host, h.tree, h.branch, h.build_mode, h.benchmark, h.metric) k"

int api_view_trend_keys(struct store *st, cJSON **out, struct pg_err *err)
{
	*out = cJSON_CreateObject();
	if (!*out)
		return nomem(err, "trends");
	if (vw_add_rows(st, *out, "keys", TREND_KEY_SQL(""), NULL, 0, fill_trend_key,
			err) < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static const struct vw_col point_cols[] = {
	{ "commit", VW_TEXT, 0 },
	{ "value", VW_REAL, 1 },
	{ "unit", VW_TEXT, 2 },
	{ "samples", VW_INT, 3 },
	{ "measured_at", VW_INT, 4 },
	{ "job", VW_INT_OR_NULL, 5 },
	{ "run", VW_INT_OR_NULL, 6 },
	{ "series", VW_INT_OR_NULL, 7 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_point(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, point_cols);
}

static const struct vw_col change_cols[] = {
	{ "commit_before", VW_TEXT, 0 },
	{ "commit_after", VW_TEXT, 1 },
	{ "effect", VW_REAL, 2 },
	{ "p", VW_REAL_OR_NULL, 3 },
	{ "state", VW_TEXT, 4 },
	{ "detected_at", VW_INT, 5 },
	{ NULL, VW_TEXT, 0 },
};

static bool fill_change(cJSON *o, sqlite3_stmt *stmt)
{
	return vw_cols(o, stmt, change_cols);
}

struct trend_point {
	cJSON *item;
	int64_t pos, at;
};

static int point_cmp(const void *a, const void *b)
{
	const struct trend_point *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* Put the points in git order (the branch's first-parent line in the
 * tree's mirror) when every one of them is on it; else leave them in the
 * order measured.  Sets "order" and each point's "position". */
static int trend_order(cJSON *o, const struct api_trend_key *k, const char *mirror_root,
		       struct pg_err *err)
{
	cJSON *points = cJSON_GetObjectItemCaseSensitive(o, "points"), *p;
	int n = cJSON_GetArraySize(points), i = 0;
	const char **oids = calloc((size_t)n + 1, sizeof(*oids));
	int64_t *pos = calloc((size_t)n + 1, sizeof(*pos));
	struct trend_point *tp = calloc((size_t)n + 1, sizeof(*tp));
	struct pg_err gerr = PG_ERR_INIT;
	char mirror[TREES_PATH_MAX];
	bool git = n > 0 && mirror_root;
	int rc = -1;

	if (!oids || !pos || !tp) {
		nomem(err, "trend");
		goto out;
	}
	cJSON_ArrayForEach(p, points)
		oids[i++] = str(p, "commit");
	/* A tree without a mirror here, or a commit gone from the branch:
	 * the order measured is the one there is. */
	if (git && (trees_mirror_path(mirror_root, k->tree, mirror, sizeof(mirror), &gerr) < 0 ||
		    trees_first_parent_positions(mirror, k->branch, oids, (size_t)n, TREND_WALK_MAX,
						 pos, &gerr) < 0))
		git = false;
	for (i = 0; git && i < n; i++)
		git = pos[i] >= 0;
	i = 0;
	while ((p = cJSON_DetachItemFromArray(points, 0))) {
		tp[i].item = p;
		tp[i].pos = git ? pos[i] : i;
		tp[i].at = num(p, "measured_at");
		i++;
	}
	if (git)
		qsort(tp, (size_t)n, sizeof(*tp), point_cmp);
	for (i = 0; i < n; i++) {
		if (!cJSON_AddNumberToObject(tp[i].item, "position", (double)tp[i].pos) ||
		    !cJSON_AddItemToArray(points, tp[i].item)) {
			for (int k2 = i; k2 < n; k2++)
				cJSON_Delete(tp[k2].item);
			nomem(err, "trend");
			goto out;
		}
	}
	if (!cJSON_AddStringToObject(o, "order", git ? "git" : "measured")) {
		nomem(err, "trend");
		goto out;
	}
	rc = 0;
out:
	free(oids);
	free(pos);
	free(tp);
	return rc;
}

int api_view_trend(struct store *st, const struct api_trend_key *k, const char *mirror_root,
		   int64_t limit, cJSON **out, struct pg_err *err)
{
	cJSON *keys = NULL, *key;

	*out = cJSON_CreateObject();
	if (!*out)
		return nomem(err, "trend");
	if (vw_list(st, "trend key", TREND_KEY_SQL(TREND_WHERE),
		    STORE_ARGS(TREND_ARGS(k)), fill_trend_key, &keys, err) < 0)
		goto fail;
	key = cJSON_DetachItemFromArray(keys, 0);
	cJSON_Delete(keys);
	if (!key && !(key = cJSON_CreateNull()))
		goto oom;
	if (!cJSON_AddItemToObject(*out, "key", key)) {
		cJSON_Delete(key);
		goto oom;
	}
	/* The latest `limit` points (history_trend ends with measured_at),
	 * then oldest first. */
	if (vw_add_rows(st, *out, "points",
			"SELECT * FROM (SELECT h.commit_oid, h.value, h.unit, h.samples,"
			" h.measured_at, h.job_id, j.run_id, r.series_id, h.id FROM history h"
			" LEFT JOIN jobs j ON j.id = h.job_id LEFT JOIN runs r ON r.id = j.run_id"
			TREND_WHERE " ORDER BY h.measured_at DESC, h.id DESC LIMIT ?7)"
			" ORDER BY measured_at, id",
			STORE_ARGS(TREND_ARGS(k), STORE_INT(limit)), fill_point, err) < 0 ||
	    vw_add_rows(st, *out, "change_points",
			"SELECT commit_before, commit_after, effect, p, state, detected_at"
			" FROM change_points h" TREND_WHERE " ORDER BY detected_at, id",
			STORE_ARGS(TREND_ARGS(k)), fill_change, err) < 0)
		goto fail;
	if (trend_order(*out, k, mirror_root, err) < 0)
		goto fail;
	return 0;
oom:
	nomem(err, "trend");
fail:
	cJSON_Delete(*out);
	*out = NULL;
	return -1;
}
