/* SPDX-License-Identifier: MIT */
/* Change points and the history series they are found in (changes.h). */
#include "changes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "sched.h"
#include "stats.h"
#include "trees.h"
#include "vec.h"

#define CHANGES_WHAT_HIST "read history"
#define CHANGES_WALK_MAX 200000	/* commits walked back from a branch's tip */

void changes_series_release(struct changes_series *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->c[i].v);
	free(s->c);
	memset(s, 0, sizeof(*s));
}

long changes_series_find(const struct changes_series *s, const char *oid)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].oid, oid))
			return (long)i;
	return -1;
}

/* Add value v of commit oid, commits kept in the order first seen. */
static int series_add(struct changes_series *s, const char *oid, double v, struct pg_err *err)
{
	struct changes_commit *c = NULL;

	for (size_t i = s->n; i-- > 0;)
		if (!strcmp(s->c[i].oid, oid)) {
			c = &s->c[i];
			break;
		}
	if (!c) {
		if (PG_GROW(s->c, s->cap, s->n + 1) < 0)
			return pg_err_set(err, PG_ENOMEM, "out of memory");
		c = &s->c[s->n];
		memset(c, 0, sizeof(*c));
		if (pg_fmt(c->oid, sizeof(c->oid), "%s", oid) < 0)
			return pg_err_set(err, PG_EINVAL, "commit '%.48s...' too long", oid);
		s->n++;
	}
	if (PG_GROW(c->v, c->cap, c->n + 1) < 0)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	c->v[c->n++] = v;
	return 0;
}

int changes_series_read(struct store *st, const struct changes_key *k, struct changes_series *s,
			struct pg_err *err)
{
	struct { char oid[CHANGES_OID_MAX + 1]; double v; } *rows = NULL;
	sqlite3_stmt *q = NULL;
	size_t n = 0;
	int rc = -1, step = 0;

	rows = malloc(CHANGES_HISTORY_ROWS * sizeof(*rows));
	if (!rows)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	if (store_prepare(st, &q,
			  "SELECT commit_oid, value FROM history WHERE host = ?1 AND tree = ?2"
			  " AND branch = ?3 AND build_mode = ?4 AND benchmark = ?5 AND metric = ?6"
			  " ORDER BY measured_at DESC, id DESC LIMIT ?7", CHANGES_WHAT_HIST, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_TEXT(k->host), STORE_TEXT(k->tree),
				     STORE_TEXT(k->branch), STORE_TEXT(k->build_mode),
				     STORE_TEXT(k->benchmark), STORE_TEXT(k->metric),
				     STORE_INT(CHANGES_HISTORY_ROWS)), CHANGES_WHAT_HIST, err) < 0)
		goto out;
	while (n < CHANGES_HISTORY_ROWS && (step = store_step(q, CHANGES_WHAT_HIST, err)) == 1) {
		const char *oid = (const char *)sqlite3_column_text(q, 0);

		if (pg_fmt(rows[n].oid, sizeof(rows[n].oid), "%s", oid ? oid : "") < 0) {
			pg_err_set(err, PG_EINVAL, "%s: commit '%.48s...' too long", CHANGES_WHAT_HIST,
				   oid);
			goto out;
		}
		rows[n].v = sqlite3_column_double(q, 1);
		n++;
	}
	if (n < CHANGES_HISTORY_ROWS && step < 0)
		goto out;
	while (n-- > 0)
		if (series_add(s, rows[n].oid, rows[n].v, err) < 0)
			goto out;
	rc = 0;
out:
	sqlite3_finalize(q);
	free(rows);
	return rc;
}

void changes_series_git_order(const char *mirror_root, const char *tree, const char *branch,
			      struct changes_series *s)
{
	char mirror[TREES_PATH_MAX];
	struct pg_err e = PG_ERR_INIT;
	const char **oids = NULL;
	int64_t *pos = NULL;
	size_t keep = 0;

	if (!mirror_root || !s->n)
		return;
	oids = calloc(s->n, sizeof(*oids));
	pos = calloc(s->n, sizeof(*pos));
	if (!oids || !pos)
		goto out;
	for (size_t i = 0; i < s->n; i++)
		oids[i] = s->c[i].oid;
	if (trees_mirror_path(mirror_root, tree, mirror, sizeof(mirror), &e) < 0 ||
	    trees_first_parent_positions(mirror, branch, oids, s->n, CHANGES_WALK_MAX, pos, &e) < 0)
		goto out;
	for (size_t i = 0; i < s->n; i++)
		keep += pos[i] >= 0;
	if (!keep)
		goto out;
	/* Insertion sort by position (a few hundred commits), dropping the
	 * commits off the line with their values.  Writes stay at or below
	 * the index being read. */
	for (size_t i = 0, w = 0; i < s->n; i++) {
		struct changes_commit c = s->c[i];
		int64_t p = pos[i];
		size_t k;

		if (p < 0) {
			free(c.v);
			continue;
		}
		for (k = w; k > 0 && pos[k - 1] > p; k--) {
			s->c[k] = s->c[k - 1];
			pos[k] = pos[k - 1];
		}
		s->c[k] = c;
		pos[k] = p;
		w++;
	}
	s->n = keep;
out:
	free(oids);
	free(pos);
}

struct changes_key changes_key_of(const struct change_point *c)
{
	struct changes_key k = { c->host, c->tree, c->branch, c->build_mode, c->benchmark,
				 c->metric };

	return k;
}

int changes_record_tx(struct store *st, const struct change_point *c, int64_t now,
		      bool *inserted, struct pg_err *err)
{
	*inserted = false;
	if (store_run(st, "record change point",
		      "INSERT INTO change_points (host, tree, branch, build_mode, benchmark, metric,"
		      " commit_before, commit_after, effect, p, detected_at, context, first_before,"
		      " first_after, updated_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?7, ?8, ?11)"
		      " ON CONFLICT DO NOTHING",
		      STORE_ARGS(STORE_TEXT(c->host), STORE_TEXT(c->tree), STORE_TEXT(c->branch),
				 STORE_TEXT(c->build_mode), STORE_TEXT(c->benchmark),
				 STORE_TEXT(c->metric), STORE_TEXT(c->before), STORE_TEXT(c->after),
				 STORE_REAL(c->effect), STORE_REAL(c->p), STORE_INT(now),
				 *c->context ? STORE_TEXT(c->context) : STORE_NULL), err) < 0)
		return -1;
	*inserted = store_changes(st) > 0;
	return 0;
}

int changes_last_after(struct store *st, const struct changes_key *k, char *oid, size_t len,
		       struct pg_err *err)
{
	static const char what[] = "read change points";
	sqlite3_stmt *q = NULL;
	int rc;

	*oid = '\0';
	if (store_prepare(st, &q,
			  "SELECT commit_after FROM change_points WHERE host = ?1 AND tree = ?2"
			  " AND branch = ?3 AND build_mode = ?4 AND benchmark = ?5 AND metric = ?6"
			  " ORDER BY detected_at DESC, id DESC LIMIT 1", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_TEXT(k->host), STORE_TEXT(k->tree),
				     STORE_TEXT(k->branch), STORE_TEXT(k->build_mode),
				     STORE_TEXT(k->benchmark), STORE_TEXT(k->metric)), what, err) < 0) {
		sqlite3_finalize(q);
		return -1;
	}
	rc = store_step(q, what, err);
	if (rc > 0 && pg_fmt(oid, len, "%s", (const char *)sqlite3_column_text(q, 0)) < 0)
		rc = pg_err_set(err, PG_EINVAL, "%s: commit '%.48s...' too long", what,
				(const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	return rc < 0 ? -1 : 0;
}

#define CP_COLUMNS \
	"id, host, tree, branch, build_mode, benchmark, metric, coalesce(context, '')," \
	" commit_before, commit_after, coalesce(first_before, commit_before)," \
	" coalesce(first_after, commit_after), coalesce(located_commit, ''), effect," \
	" coalesce(p, -1), state, coalesce(why, ''), bisect_runs, coalesce(bisect_run_id, 0)," \
	" detected_at, coalesce(updated_at, detected_at), coalesce(alerted_at, 0)"

static void fill(sqlite3_stmt *q, struct change_point *c)
{
	memset(c, 0, sizeof(*c));
	c->id = sqlite3_column_int64(q, 0);
	store_col_text(q, 1, c->host, sizeof(c->host));
	store_col_text(q, 2, c->tree, sizeof(c->tree));
	store_col_text(q, 3, c->branch, sizeof(c->branch));
	store_col_text(q, 4, c->build_mode, sizeof(c->build_mode));
	store_col_text(q, 5, c->benchmark, sizeof(c->benchmark));
	store_col_text(q, 6, c->metric, sizeof(c->metric));
	store_col_text(q, 7, c->context, sizeof(c->context));
	store_col_text(q, 8, c->before, sizeof(c->before));
	store_col_text(q, 9, c->after, sizeof(c->after));
	store_col_text(q, 10, c->first_before, sizeof(c->first_before));
	store_col_text(q, 11, c->first_after, sizeof(c->first_after));
	store_col_text(q, 12, c->located, sizeof(c->located));
	c->effect = sqlite3_column_double(q, 13);
	c->p = sqlite3_column_double(q, 14);
	if (c->p < 0)
		c->p = NAN;
	store_col_text(q, 15, c->state, sizeof(c->state));
	store_col_text(q, 16, c->why, sizeof(c->why));
	c->bisect_runs = sqlite3_column_int64(q, 17);
	c->bisect_run_id = sqlite3_column_int64(q, 18);
	c->detected_at = sqlite3_column_int64(q, 19);
	c->updated_at = sqlite3_column_int64(q, 20);
	c->alerted_at = sqlite3_column_int64(q, 21);
}

int changes_list(struct store *st, const char *state, int64_t limit, struct change_point **out,
		 size_t *n, struct pg_err *err)
{
	static const char what[] = "list change points";
	sqlite3_stmt *q = NULL;
	size_t cap = 0;
	int rc = -1, row;

	*out = NULL;
	*n = 0;
	if (store_prepare(st, &q, "SELECT " CP_COLUMNS " FROM change_points"
			  " WHERE ?1 IS NULL OR state = ?1 ORDER BY detected_at DESC, id DESC"
			  " LIMIT ?2", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(state ? STORE_TEXT(state) : STORE_NULL, STORE_INT(limit)),
		       what, err) < 0)
		goto out;
	while ((row = store_step(q, what, err)) > 0) {
		if (PG_GROW(*out, cap, *n + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
		fill(q, &(*out)[(*n)++]);
	}
	if (row < 0)
		goto out;
	rc = 0;
out:
	sqlite3_finalize(q);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int changes_get(struct store *st, int64_t id, struct change_point *out, struct pg_err *err)
{
	static const char what[] = "read change point";
	sqlite3_stmt *q = NULL;
	int rc;

	if (store_prepare(st, &q, "SELECT " CP_COLUMNS " FROM change_points WHERE id = ?1", what,
			  err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(id)), what, err) < 0) {
		sqlite3_finalize(q);
		return -1;
	}
	rc = store_step(q, what, err);
	if (rc > 0)
		fill(q, out);
	sqlite3_finalize(q);
	return rc;
}

/* One UPDATE of a suspected change point: PG_ECONFLICT when it is not. */
static int update_open(struct store *st, const char *what, const char *sql,
		       const struct store_arg *args, size_t n, struct pg_err *err)
{
	if (store_run(st, what, sql, args, n, err) < 0)
		return -1;
	if (store_changes(st) == 0)
		return pg_err_set(err, PG_ECONFLICT, "%s: not a suspected change point", what);
	return 0;
}

int changes_narrow_tx(struct store *st, int64_t id, const char *before, const char *after,
		      int64_t now, struct pg_err *err)
{
	return update_open(st, "narrow change point",
			   "UPDATE change_points SET commit_before = ?2, commit_after = ?3,"
			   " updated_at = ?4 WHERE id = ?1 AND state = 'suspected'",
			   STORE_ARGS(STORE_INT(id), STORE_TEXT(before), STORE_TEXT(after),
				      STORE_INT(now)), err);
}

int changes_bisect_run_tx(struct store *st, int64_t id, int64_t run_id, int64_t now,
			  struct pg_err *err)
{
	return update_open(st, "bisect change point",
			   "UPDATE change_points SET bisect_run_id = ?2,"
			   " bisect_runs = bisect_runs + (?2 IS NOT NULL), updated_at = ?3"
			   " WHERE id = ?1 AND state = 'suspected'",
			   STORE_ARGS(STORE_INT(id), run_id > 0 ? STORE_INT(run_id) : STORE_NULL,
				      STORE_INT(now)), err);
}

int changes_locate_tx(struct store *st, int64_t id, const char *commit, const char *why,
		      int64_t now, struct pg_err *err)
{
	return update_open(st, "locate change point",
			   "UPDATE change_points SET state = 'confirmed', located_commit = ?2,"
			   " why = ?3, bisect_run_id = NULL, updated_at = ?4"
			   " WHERE id = ?1 AND state = 'suspected'",
			   STORE_ARGS(STORE_INT(id), STORE_TEXT(commit), STORE_TEXT(why),
				      STORE_INT(now)), err);
}

int changes_dismiss_tx(struct store *st, int64_t id, const char *why, int64_t now,
		       struct pg_err *err)
{
	return update_open(st, "dismiss change point",
			   "UPDATE change_points SET state = 'dismissed', why = ?2,"
			   " bisect_run_id = NULL, updated_at = ?3"
			   " WHERE id = ?1 AND state = 'suspected'",
			   STORE_ARGS(STORE_INT(id), STORE_TEXT(why), STORE_INT(now)), err);
}

int changes_alerted_tx(struct store *st, int64_t id, int64_t now, bool *first,
		       struct pg_err *err)
{
	*first = false;
	if (store_run(st, "mark change point told",
		      "UPDATE change_points SET alerted_at = ?2 WHERE id = ?1 AND alerted_at IS NULL",
		      STORE_ARGS(STORE_INT(id), STORE_INT(now)), err) < 0)
		return -1;
	*first = store_changes(st) > 0;
	return 0;
}

static bool add_text(cJSON *o, const char *k, const char *v)
{
	return *v ? cJSON_AddStringToObject(o, k, v) != NULL : cJSON_AddNullToObject(o, k) != NULL;
}

static bool add_time(cJSON *o, const char *k, int64_t v)
{
	return v ? cJSON_AddNumberToObject(o, k, (double)v) != NULL
		 : cJSON_AddNullToObject(o, k) != NULL;
}

cJSON *changes_to_json(const struct change_point *c)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddNumberToObject(o, "id", (double)c->id) ||
	    !cJSON_AddStringToObject(o, "host", c->host) ||
	    !cJSON_AddStringToObject(o, "tree", c->tree) ||
	    !cJSON_AddStringToObject(o, "branch", c->branch) ||
	    !cJSON_AddStringToObject(o, "build_mode", c->build_mode) ||
	    !cJSON_AddStringToObject(o, "benchmark", c->benchmark) ||
	    !cJSON_AddStringToObject(o, "metric", c->metric) ||
	    !add_text(o, "context", c->context) ||
	    !cJSON_AddStringToObject(o, "state", c->state) ||
	    !cJSON_AddNumberToObject(o, "effect_pct", c->effect) ||
	    !(isfinite(c->p) ? cJSON_AddNumberToObject(o, "p", c->p)
			     : cJSON_AddNullToObject(o, "p")) ||
	    !cJSON_AddStringToObject(o, "commit_before", c->before) ||
	    !cJSON_AddStringToObject(o, "commit_after", c->after) ||
	    !cJSON_AddStringToObject(o, "first_before", c->first_before) ||
	    !cJSON_AddStringToObject(o, "first_after", c->first_after) ||
	    !add_text(o, "located_commit", c->located) ||
	    !add_text(o, "why", c->why) ||
	    !cJSON_AddNumberToObject(o, "bisect_runs", (double)c->bisect_runs) ||
	    !add_time(o, "bisect_run", c->bisect_run_id) ||
	    !cJSON_AddNumberToObject(o, "detected_at", (double)c->detected_at) ||
	    !cJSON_AddNumberToObject(o, "updated_at", (double)c->updated_at) ||
	    !add_time(o, "alerted_at", c->alerted_at)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int changes_counts(struct store *st, int64_t n[3][2], struct pg_err *err)
{
	static const char what[] = "count change points";
	static const char *const states[3] = { "suspected", "confirmed", "dismissed" };
	sqlite3_stmt *q = NULL;
	int rc = -1, row;

	memset(n, 0, sizeof(int64_t[3][2]));
	if (store_prepare(st, &q, "SELECT state, effect < 0, count(*) FROM change_points"
			  " GROUP BY 1, 2", what, err) < 0)
		goto out;
	while ((row = store_step(q, what, err)) > 0) {
		const char *s = (const char *)sqlite3_column_text(q, 0);

		for (int i = 0; i < 3; i++)
			if (s && !strcmp(s, states[i]))
				n[i][sqlite3_column_int(q, 1) != 0] = sqlite3_column_int64(q, 2);
	}
	rc = row < 0 ? -1 : 0;
out:
	sqlite3_finalize(q);
	return rc;
}

/* The facts of a fingerprint a history point shows (named by their last
 * part). */
static const char *const history_facts[] = {
	"kernel", "model", "cores", "dpdk_version", "agent_version", "host_check.compiler",
	"host_check.governor", "host_check.turbo",
};

/* Jobs, last time and fingerprint facts of one commit of k. */
static int history_point(struct store *st, const struct changes_key *k, const char *oid,
			 cJSON *pt, struct pg_err *err)
{
	static const char what[] = "read a history point";
	sqlite3_stmt *q = NULL;
	cJSON *jobs = cJSON_AddArrayToObject(pt, "jobs"), *facts = NULL, *fp = NULL;
	int64_t last = 0, last_job = 0;
	int rc = -1, row;

	if (!jobs)
		goto nomem;
	if (store_prepare(st, &q, "SELECT coalesce(job_id, 0), measured_at FROM history"
			  " WHERE host = ?1 AND tree = ?2 AND branch = ?3 AND build_mode = ?4"
			  " AND benchmark = ?5 AND metric = ?6 AND commit_oid = ?7"
			  " ORDER BY measured_at, id", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_TEXT(k->host), STORE_TEXT(k->tree),
				     STORE_TEXT(k->branch), STORE_TEXT(k->build_mode),
				     STORE_TEXT(k->benchmark), STORE_TEXT(k->metric), STORE_TEXT(oid)),
		       what, err) < 0)
		goto out;
	while ((row = store_step(q, what, err)) > 0) {
		int64_t job = sqlite3_column_int64(q, 0);

		last = sqlite3_column_int64(q, 1);
		if (job) {
			last_job = job;
			if (!cJSON_AddItemToArray(jobs, cJSON_CreateNumber((double)job)))
				goto nomem;
		}
	}
	if (row < 0)
		goto out;
	sqlite3_finalize(q);
	q = NULL;
	if (!cJSON_AddNumberToObject(pt, "measured_at", (double)last))
		goto nomem;
	if (last_job && sched_job_fingerprint(st, last_job, &fp, err) < 0)
		goto out;
	facts = cJSON_AddObjectToObject(pt, "facts");
	if (!facts)
		goto nomem;
	for (size_t i = 0; fp && i < sizeof(history_facts) / sizeof(history_facts[0]); i++) {
		const cJSON *v = pg_json_path(fp, history_facts[i]);
		const char *name = strrchr(history_facts[i], '.');

		name = name ? name + 1 : history_facts[i];
		if (v && (cJSON_IsString(v) || cJSON_IsNumber(v)) &&
		    !cJSON_AddItemToObject(facts, name, cJSON_Duplicate(v, false)))
			goto nomem;
	}
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "history: out of memory");
out:
	cJSON_Delete(fp);
	sqlite3_finalize(q);
	return rc;
}

int changes_history_json(struct store *st, const char *mirror_root, const struct changes_key *k,
			 cJSON **out, struct pg_err *err)
{
	struct changes_series s = { NULL, 0, 0 };
	cJSON *doc = cJSON_CreateObject(), *pts;
	int rc = -1;

	*out = NULL;
	if (!doc || !(pts = cJSON_AddArrayToObject(doc, "points"))) {
		pg_err_set(err, PG_ENOMEM, "history: out of memory");
		goto out;
	}
	if (changes_series_read(st, k, &s, err) < 0)
		goto out;
	changes_series_git_order(mirror_root, k->tree, k->branch, &s);
	for (size_t i = 0; i < s.n; i++) {
		cJSON *pt = cJSON_CreateObject(), *vals;
		double med = NAN, cv = NAN;

		if (!pt || !cJSON_AddItemToArray(pts, pt)) {
			cJSON_Delete(pt);
			pg_err_set(err, PG_ENOMEM, "history: out of memory");
			goto out;
		}
		if (stats_median(s.c[i].v, s.c[i].n, &med, err) < 0 ||
		    stats_cv_robust(s.c[i].v, s.c[i].n, &cv, err) < 0)
			goto out;
		vals = cJSON_CreateDoubleArray(s.c[i].v, (int)s.c[i].n);
		if (!cJSON_AddStringToObject(pt, "commit", s.c[i].oid) || !vals ||
		    !cJSON_AddItemToObject(pt, "values", vals) ||
		    !cJSON_AddNumberToObject(pt, "median", med) ||
		    !(isfinite(cv) ? cJSON_AddNumberToObject(pt, "spread_pct", 100.0 * cv)
				   : cJSON_AddNullToObject(pt, "spread_pct"))) {
			pg_err_set(err, PG_ENOMEM, "history: out of memory");
			goto out;
		}
		if (history_point(st, k, s.c[i].oid, pt, err) < 0)
			goto out;
	}
	*out = doc;
	doc = NULL;
	rc = 0;
out:
	cJSON_Delete(doc);
	changes_series_release(&s);
	return rc;
}

int changes_history_benchmark(struct store *st, const char *host, const char *tree,
			      const char *branch, const char *build_mode, const char *metric,
			      char *out, size_t len, int64_t *n, struct pg_err *err)
{
	static const char what[] = "read a history's benchmark";
	sqlite3_stmt *q = NULL;
	int rc = -1, row;

	out[0] = '\0';
	*n = 0;
	if (store_prepare(st, &q, "SELECT min(benchmark), count(DISTINCT benchmark) FROM history"
			  " WHERE host = ?1"
			  " AND tree = ?2 AND branch = ?3 AND build_mode = ?4 AND metric = ?5",
			  what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_TEXT(host), STORE_TEXT(tree), STORE_TEXT(branch),
				     STORE_TEXT(build_mode), STORE_TEXT(metric)), what, err) < 0 ||
	    (row = store_step(q, what, err)) < 0)
		goto out;
	if (row > 0) {
		store_col_text(q, 0, out, len);
		*n = sqlite3_column_int64(q, 1);
	}
	rc = 0;
out:
	sqlite3_finalize(q);
	return rc;
}
