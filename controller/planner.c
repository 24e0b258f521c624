/* SPDX-License-Identifier: MIT */
/* The planner: series and recheck requests to runs, jobs and pending
 * checks.  See planner.h for the rules and the job specification. */
#include "planner.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "log.h"
#include "outbox.h"
#include "recheck.h"
#include "sched.h"
#include "series.h"
#include "timeutil.h"
#include "trees.h"
#include "vec.h"

#define COMP "planner"
#define MAX_NOTES 16
#define NOTE_MAX 400
#define URL_MAX 2048

/* What the agent alone knows, as markers that no profile argument can
 * hold (profiles refuse control characters); see expand_args(). */
#define MARK_FILE_PREFIX "\x01"
#define MARK_BUILD_DIR "\x02"

/* ---- small containers ------------------------------------------------ */

struct notes {
	char text[MAX_NOTES][NOTE_MAX];
	size_t n;
};

__attribute__((format(printf, 2, 3)))
static void note(struct notes *ns, const char *fmt, ...)
{
	va_list ap;

	/* Notes explain a job to people; past MAX_NOTES the log has them. */
	if (ns->n == MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(ns->text[ns->n++], NOTE_MAX, fmt, ap);
	va_end(ap);
}

/* ---- the pass -------------------------------------------------------- */

enum tree_status { TREE_UNKNOWN = 0, TREE_OK, TREE_FAILED };

struct tree_state {
	enum tree_status status;
	struct pg_err err;
};

struct pass {
	struct planner *pl;
	int64_t now;
	char base_url[URL_MAX];		/* public_url without a trailing '/' */
	struct tree_state *trees;	/* parallel to ps->trees */
};

struct dep {
	char kind[8];
	char *ref;
	int64_t series_id;		/* 0: never seen */
	bool missing;
};

struct series_info {
	int64_t id;
	char *project;
	char *title;
	char state[16];
	int64_t version, total, completed_at;
	char base_commit[TREES_OID_HEX + 1];	/* lowercase; "" when none or malformed */
	char *base_commit_raw;		/* as given, for notes; NULL when none */
	int64_t *patch_ids;		/* by number */
	size_t n_patches;
	struct pg_strvec files, tags;
	struct dep deps[PLANNER_MAX_DEPS];
	size_t n_deps;
	struct notes notes;		/* about the series: its dependencies */
};

/* A recheck request being planned (NULL for a new series). */
/* The contexts of a series that share a (tree, branch): one run. */
struct group {
	const struct profile_tree *tree;
	const char *branch;
	const struct profile_context **ctx;
	size_t n_ctx;
	char base[TREES_OID_HEX + 1];
	const char *base_source;
	char version[TREES_VERSION_MAX];
	bool has_version;
	unsigned major, minor;
	struct notes notes;
	int64_t run_id;
};

enum plan_result {
	PLAN_DONE,		/* planned (or nothing left to plan) */
	PLAN_WAIT,		/* held back: try again next pass */
	PLAN_FAIL,		/* error: logged, retried next pass */
};

static int64_t pass_now(const struct planner *pl)
{
	return pl->now_s ? pl->now_s : pg_time_wall_ms() / 1000;
}

static int url_fmt(const struct pass *p, char *out, size_t len, const char *what, int64_t id,
		   const char *tail, struct pg_err *err)
{
	int n = snprintf(out, len, "%s%s%lld%s", p->base_url, what, (long long)id, tail);

	if (n < 0 || (size_t)n >= len)
		return pg_err_set(err, PG_EINVAL, "public URL '%.64s...' is too long", p->base_url);
	return 0;
}

/* A text column, copied; NULL for SQL NULL.  Returns -1 when out of
 * memory. */
static int col_dup(sqlite3_stmt *stmt, int i, char **out)
{
	const unsigned char *s = sqlite3_column_text(stmt, i);

	*out = NULL;
	if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
		return 0;
	if (!s)
		return -1;
	*out = strdup((const char *)s);
	return *out ? 0 : -1;
}

/* Run a query of ids (first column), collecting them all first so that
 * no statement stays open while a series is planned. */
static int list_ids(struct store *st, const char *what, const char *sql,
		    const struct store_arg *args, size_t nargs, int64_t **ids, size_t *n,
		    struct pg_err *err)
{
	sqlite3_stmt *stmt = NULL;
	size_t cap = 0;
	int rc = -1, row;

	*ids = NULL;
	*n = 0;
	if (store_prepare(st, &stmt, sql, what, err) < 0 ||
	    (nargs && store_bind(stmt, args, nargs, what, err) < 0))
		goto out;
	while ((row = store_step(stmt, what, err)) == 1) {
		if (PG_GROW(*ids, cap, *n + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
			goto out;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(stmt, 0);
	}
	if (row < 0)
		goto out;
	rc = 0;
out:
	sqlite3_finalize(stmt);
	if (rc) {
		free(*ids);
		*ids = NULL;
		*n = 0;
	}
	return rc;
}

/* ---- supersession ------------------------------------------------------ */

static int cancel_series(struct planner *pl, int64_t now, int64_t series_id,
			 unsigned long *cancelled, struct pg_err *err)
{
	struct sched_cancel_count count;
	char why[96];
	int64_t newer;

	*cancelled = 0;
	if (store_query_id(pl->st, "find superseding series",
			   "SELECT id FROM series WHERE supersedes_id = ?1 ORDER BY id DESC LIMIT 1",
			   STORE_ARGS(STORE_INT(series_id)), &newer, err) < 0)
		return -1;
	if (newer)
		snprintf(why, sizeof(why), "superseded by series %lld", (long long)newer);
	else
		snprintf(why, sizeof(why), "superseded by a newer version");
	/* The scheduler owns job states: its cancellation also ends the
	 * open attempts and the unfinished runs. */
	if (sched_cancel_series_tx(pl->st, series_id, why, now, &count, err) < 0)
		return -1;
	/* Its pending checks end too: nothing will decide them now. */
	if (outbox_settle_cancelled_tx(pl->st, series_id, 0, why, now, NULL, err) < 0)
		return -1;
	*cancelled = (unsigned long)(count.queued + count.active);
	pg_log_info(COMP, "series %lld: %s: %lld queued and %lld leased or running job(s) "
		    "cancelled", (long long)series_id, why, (long long)count.queued,
		    (long long)count.active);
	return 0;
}

int planner_cancel_superseded(struct planner *pl, struct pg_err *err)
{
	int64_t now = pass_now(pl), *ids = NULL;
	unsigned long total = 0, n_cancelled;
	size_t n = 0;
	int rc = -1;

	if (list_ids(pl->st, "find superseded work",
		     "SELECT DISTINCT r.series_id FROM jobs j JOIN runs r ON r.id = j.run_id"
		     " JOIN series s ON s.id = r.series_id"
		     " WHERE j.state IN ('queued', 'leased', 'running') AND s.state = 'superseded'"
		     " ORDER BY r.series_id",
		     NULL, 0, &ids, &n, err) < 0)
		goto out;
	if (n == 0) {
		rc = 0;
		goto out;
	}
	if (store_begin(pl->st, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (cancel_series(pl, now, ids[i], &n_cancelled, err) < 0)
			goto out;
		total += n_cancelled;
	}
	if (store_commit(pl->st, err) < 0)
		goto out;
	pl->stats.jobs_cancelled += total;
	rc = 0;
out:
	if (rc) {
		store_rollback(pl->st);
		pg_err_prefix(err, "cancel jobs of superseded series");
	}
	free(ids);
	return rc;
}

/* ---- loading a series -------------------------------------------------- */

static void series_free(struct series_info *si)
{
	free(si->project);
	free(si->title);
	free(si->base_commit_raw);
	free(si->patch_ids);
	pg_strvec_clear(&si->files);
	pg_strvec_clear(&si->tags);
	for (size_t i = 0; i < si->n_deps; i++)
		free(si->deps[i].ref);
	free(si);
}

static int load_patches(struct store *st, struct series_info *si, struct pg_err *err)
{
	const char *what = "read patches of series";
	sqlite3_stmt *stmt = NULL;
	size_t cap = (size_t)(si->total > 0 && si->total < 10000 ? si->total : 16);
	int rc = -1, row;

	si->patch_ids = calloc(cap, sizeof(*si->patch_ids));
	if (!si->patch_ids)
		goto nomem;
	if (store_prepare(st, &stmt,
			  "SELECT id, number, files, base_commit FROM patches WHERE series_id = ?1"
			  " ORDER BY number", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(si->id)), what, err) < 0)
		goto out;
	while ((row = store_step(stmt, what, err)) == 1) {
		const char *files = (const char *)sqlite3_column_text(stmt, 2);

		if (PG_GROW(si->patch_ids, cap, si->n_patches + 1) < 0)
			goto nomem;
		si->patch_ids[si->n_patches++] = sqlite3_column_int64(stmt, 0);
		if (pg_strvec_split(&si->files, files, '\n') < 0)
			goto nomem;
		/* Without a cover letter's base-commit, patch 1's counts. */
		if (!si->base_commit_raw && sqlite3_column_int64(stmt, 1) == 1 &&
		    col_dup(stmt, 3, &si->base_commit_raw) < 0)
			goto nomem;
	}
	if (row < 0)
		goto out;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
out:
	sqlite3_finalize(stmt);
	return rc;
}

static int load_series(struct store *st, int64_t id, struct series_info **out,
		       struct pg_err *err)
{
	const char *what = "read series";
	struct series_info *si = calloc(1, sizeof(*si));
	sqlite3_stmt *stmt = NULL;
	const char *state;
	int rc = -1, row;

	*out = NULL;
	if (!si)
		return pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
	si->id = id;
	if (store_prepare(st, &stmt,
			  "SELECT project, title, state, version, total, completed_at, tags,"
			  " base_commit FROM series WHERE id = ?1", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(id)), what, err) < 0)
		goto out;
	row = store_step(stmt, what, err);
	if (row < 0)
		goto out;
	if (row == 0) {
		pg_err_set(err, PG_ENOTFOUND, "series %lld does not exist", (long long)id);
		goto out;
	}
	state = (const char *)sqlite3_column_text(stmt, 2);
	snprintf(si->state, sizeof(si->state), "%s", state ? state : "");
	si->version = sqlite3_column_int64(stmt, 3);
	si->total = sqlite3_column_int64(stmt, 4);
	si->completed_at = sqlite3_column_int64(stmt, 5);
	if (col_dup(stmt, 0, &si->project) < 0 || col_dup(stmt, 1, &si->title) < 0 ||
	    pg_strvec_split(&si->tags, (const char *)sqlite3_column_text(stmt, 6), ',') < 0 ||
	    col_dup(stmt, 7, &si->base_commit_raw) < 0) {
		pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
		goto out;
	}
	if (si->base_commit_raw && !*si->base_commit_raw) {
		free(si->base_commit_raw);
		si->base_commit_raw = NULL;
	}
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (load_patches(st, si, err) < 0)
		goto out;
	if (si->base_commit_raw && trees_oid_valid(si->base_commit_raw))
		for (size_t i = 0; i <= TREES_OID_HEX; i++)
			si->base_commit[i] = (char)tolower((unsigned char)si->base_commit_raw[i]);
	*out = si;
	si = NULL;
	rc = 0;
out:
	sqlite3_finalize(stmt);
	if (si)
		series_free(si);
	if (rc)
		pg_err_prefix(err, "series %lld", (long long)id);
	return rc;
}

/* ---- dependencies ------------------------------------------------------ */

static void dep_name(const char *kind, const char *ref, char *out, size_t len)
{
	if (strcmp(kind, "msgid") == 0)
		snprintf(out, len, "<%s>", ref);
	else
		snprintf(out, len, "%s-%s", kind, ref);
}

struct dep_row {
	char kind[8];
	char *ref;
	int64_t dep;
};

static void dep_rows_free(struct dep_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].ref);
	free(rows);
}

static int load_dep_rows(struct store *st, int64_t owner, struct dep_row **rows, size_t *n,
			 struct pg_err *err)
{
	const char *what = "read dependencies";
	sqlite3_stmt *stmt = NULL;
	size_t cap = 0;
	int rc = -1, row;

	*rows = NULL;
	*n = 0;
	/* rowid order is the order of the trailers. */
	if (store_prepare(st, &stmt,
			  "SELECT kind, ref, dep_series_id FROM series_deps WHERE series_id = ?1"
			  " ORDER BY rowid", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(owner)), what, err) < 0)
		goto out;
	while ((row = store_step(stmt, what, err)) == 1) {
		const char *kind = (const char *)sqlite3_column_text(stmt, 0);
		struct dep_row *r;

		if (PG_GROW(*rows, cap, *n + 1) < 0)
			goto nomem;
		r = &(*rows)[*n];
		snprintf(r->kind, sizeof(r->kind), "%s", kind ? kind : "");
		r->dep = sqlite3_column_int64(stmt, 2);
		if (col_dup(stmt, 1, &r->ref) < 0 || !r->ref)
			goto nomem;
		(*n)++;
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
		dep_rows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
	}
	return rc;
}

struct dep_walk {
	struct pass *p;
	struct series_info *si;
	bool timed_out;			/* the series waited long enough */
	bool wait;			/* something is not there yet */
	bool truncated;
	char waiting_for[256];		/* the first thing waited for, for the log */
	int64_t visited[PLANNER_MAX_DEPS + 1];
	size_t n_visited;
};

static int add_dep(struct dep_walk *w, const char *kind, const char *ref, int64_t series_id,
		   bool missing)
{
	struct series_info *si = w->si;
	struct dep *d;

	if (si->n_deps == PLANNER_MAX_DEPS) {
		w->truncated = true;
		return 0;
	}
	d = &si->deps[si->n_deps];
	snprintf(d->kind, sizeof(d->kind), "%s", kind);
	d->ref = strdup(ref);
	if (!d->ref)
		return -1;
	d->series_id = series_id;
	d->missing = missing;
	si->n_deps++;
	return 0;
}

static bool visited(const struct dep_walk *w, int64_t id)
{
	for (size_t i = 0; i < w->n_visited; i++)
		if (w->visited[i] == id)
			return true;
	return false;
}

/* Depth first from `owner`: a dependency's own dependencies are listed
 * before it, which is the order to apply them in. */
static int walk_deps(struct dep_walk *w, int64_t owner, struct pg_err *err)
{
	struct store *st = w->p->pl->st;
	struct series_info *si = w->si;
	struct dep_row *rows = NULL;
	size_t n = 0;
	char name[160];
	int rc = -1;

	if (load_dep_rows(st, owner, &rows, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct dep_row *r = &rows[i];
		int64_t have = 0, total = 0;

		dep_name(r->kind, r->ref, name, sizeof(name));
		if (!r->dep) {
			if (series_dep_resolve(st, si->project, owner, r->kind, r->ref, &r->dep,
					       err) < 0)
				goto out;
			/* Recorded at once (a statement of its own): true
			 * whatever becomes of this plan. */
			if (r->dep == owner)
				continue;	/* names the series itself */
			if (r->dep) {
				if (series_dep_record(st, owner, r->kind, r->ref, r->dep, err) < 0)
					goto out;
				w->p->pl->stats.deps_resolved++;
				pg_log_info(COMP, "series %lld: Depends-on %s is series %lld",
					    (long long)owner, name, (long long)r->dep);
			}
		}
		if (!r->dep) {
			if (!w->timed_out) {
				if (!w->wait)
					snprintf(w->waiting_for, sizeof(w->waiting_for),
						 "%.160s (never seen)", name);
				w->wait = true;
				continue;
			}
			note(&si->notes, "Depends-on %s was never seen: tested without it", name);
			if (add_dep(w, r->kind, r->ref, 0, true) < 0)
				goto nomem;
			continue;
		}
		if (r->dep == si->id || visited(w, r->dep))
			continue;
		if (w->n_visited == PLANNER_MAX_DEPS) {
			w->truncated = true;
			continue;
		}
		w->visited[w->n_visited++] = r->dep;
		/* Ready when all its patches are there (complete, or
		 * superseded after completing); a run implies that too. */
		if (store_query_int(st, "count dependency patches",
				    "SELECT count(*) FROM patches WHERE series_id = ?1",
				    STORE_ARGS(STORE_INT(r->dep)), &have, err) < 0 ||
		    store_query_int(st, "read dependency size",
				    "SELECT total FROM series WHERE id = ?1",
				    STORE_ARGS(STORE_INT(r->dep)), &total, err) < 0)
			goto out;
		if (have < total) {
			if (!w->timed_out) {
				if (!w->wait)
					snprintf(w->waiting_for, sizeof(w->waiting_for),
						 "%.160s (series %lld, %lld of %lld patches)", name,
						 (long long)r->dep, (long long)have,
						 (long long)total);
				w->wait = true;
				continue;
			}
			note(&si->notes, "Depends-on %s (series %lld) never completed: tested "
			     "without it", name, (long long)r->dep);
			if (add_dep(w, r->kind, r->ref, r->dep, true) < 0)
				goto nomem;
			continue;
		}
		if (walk_deps(w, r->dep, err) < 0)
			goto out;
		if (add_dep(w, r->kind, r->ref, r->dep, false) < 0)
			goto nomem;
	}
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "dependencies: out of memory");
out:
	dep_rows_free(rows, n);
	return rc;
}

/* Collect the series' dependencies; *wait when it must wait for them. */
static int collect_deps(struct pass *p, struct series_info *si, bool *wait, struct pg_err *err)
{
	struct dep_walk w;

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.si = si;
	w.timed_out = p->now - si->completed_at >= p->pl->dep_timeout_s;
	*wait = false;
	if (walk_deps(&w, si->id, err) < 0) {
		pg_err_prefix(err, "series %lld", (long long)si->id);
		return -1;
	}
	if (w.wait) {
		*wait = true;
		pg_log_debug(COMP, "series %lld: waits for Depends-on %s (at most %llds after "
			     "completion)", (long long)si->id, w.waiting_for,
			     (long long)p->pl->dep_timeout_s);
		return 0;
	}
	if (w.truncated)
		note(&si->notes, "more than %d dependencies: only the first are applied",
		     PLANNER_MAX_DEPS);
	for (size_t i = 0; i < si->n_deps; i++)
		if (si->deps[i].missing)
			p->pl->stats.deps_missing++;
	return 0;
}

/* ---- trees --------------------------------------------------------------- */

static int tree_index(const struct profile_set *ps, const struct profile_tree *t)
{
	return (int)(t - ps->trees);
}

/* Sync the tree once per pass; a failure sticks for the pass. */
static int ensure_tree(struct pass *p, const struct profile_tree *t, struct pg_err *err)
{
	struct tree_state *ts = &p->trees[tree_index(p->pl->ps, t)];

	if (ts->status == TREE_UNKNOWN) {
		pg_err_clear(&ts->err);
		if (trees_sync(p->pl->mirror_root, t, p->pl->sync_timeout_ms, &ts->err) < 0) {
			ts->status = TREE_FAILED;
			pg_log_warn(COMP, "%s", ts->err.msg);
		} else {
			ts->status = TREE_OK;
			p->pl->stats.trees_synced++;
		}
	}
	if (ts->status == TREE_FAILED) {
		*err = ts->err;
		return -1;
	}
	return 0;
}

/* The base of the latest run of the series on tree/branch, if any. */
static int previous_base(struct store *st, int64_t series_id, const char *tree,
			 const char *branch, char base[TREES_OID_HEX + 1], struct pg_err *err)
{
	const char *what = "read previous run";
	sqlite3_stmt *stmt = NULL;
	int rc = -1, row;

	base[0] = '\0';
	if (store_prepare(st, &stmt,
			  "SELECT base_commit FROM runs WHERE series_id = ?1 AND tree = ?2"
			  " AND branch = ?3 ORDER BY id DESC LIMIT 1", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(series_id), STORE_TEXT(tree),
					STORE_TEXT(branch)), what, err) < 0)
		goto out;
	row = store_step(stmt, what, err);
	if (row < 0)
		goto out;
	if (row) {
		const char *s = (const char *)sqlite3_column_text(stmt, 0);

		if (s && trees_oid_valid(s))
			snprintf(base, TREES_OID_HEX + 1, "%s", s);
	}
	rc = 0;
out:
	sqlite3_finalize(stmt);
	return rc;
}

/* Choose and check the group's base commit and read its version. */
static int resolve_group(struct pass *p, const struct series_info *si,
			 const struct recheck *rq, struct group *g, struct pg_err *err)
{
	char mirror[TREES_PATH_MAX];
	struct pg_err verr = PG_ERR_INIT;
	bool has = false;

	if (ensure_tree(p, g->tree, err) < 0 ||
	    trees_mirror_path(p->pl->mirror_root, g->tree->name, mirror, sizeof(mirror), err) < 0)
		return -1;
	g->base[0] = '\0';
	if (rq && rq->rebase) {
		if (trees_resolve_branch(mirror, g->branch, g->base, err) < 0)
			goto fail;
		g->base_source = "rebase";
	}
	if (!g->base[0] && rq) {
		if (previous_base(p->pl->st, si->id, g->tree->name, g->branch, g->base, err) < 0)
			goto fail;
		if (g->base[0] && trees_has_commit(mirror, g->base, &has, err) < 0)
			goto fail;
		if (g->base[0] && has)
			g->base_source = "previous-run";
		else
			g->base[0] = '\0';
	}
	if (!g->base[0] && si->base_commit_raw) {
		if (!si->base_commit[0]) {
			note(&g->notes, "base-commit '%.64s' is not a full commit id: tested on the "
			     "tip of %s", si->base_commit_raw, g->branch);
		} else {
			if (trees_has_commit(mirror, si->base_commit, &has, err) < 0)
				goto fail;
			if (has) {
				memcpy(g->base, si->base_commit, sizeof(g->base));
				g->base_source = "base-commit";
			} else {
				note(&g->notes, "base-commit %s is not in tree %s: tested on the tip "
				     "of %s", si->base_commit, g->tree->name, g->branch);
			}
		}
	}
	if (!g->base[0]) {
		if (trees_resolve_branch(mirror, g->branch, g->base, err) < 0)
			goto fail;
		g->base_source = "branch-tip";
	}
	g->has_version = false;
	if (trees_version(mirror, g->base, g->version, &verr) < 0) {
		if (verr.code != PG_ENOTFOUND && verr.code != PG_EINVAL) {
			*err = verr;
			goto fail;
		}
		note(&g->notes, "no usable VERSION at %.12s (%s): version-gated meson options "
		     "not applied", g->base, verr.msg);
	} else if (profile_parse_version(g->version, &g->major, &g->minor) < 0) {
		note(&g->notes, "VERSION '%s' at %.12s is not a DPDK version: version-gated meson "
		     "options not applied", g->version, g->base);
	} else {
		g->has_version = true;
	}
	return 0;
fail:
	pg_err_prefix(err, "tree '%s' branch '%s'", g->tree->name, g->branch);
	return -1;
}

/* ---- the job specification ---------------------------------------------- */

/* cJSON's Add helpers return NULL when out of memory: fold into bools. */
static bool add_str(cJSON *o, const char *k, const char *v)
{
	return v ? cJSON_AddStringToObject(o, k, v) != NULL : cJSON_AddNullToObject(o, k) != NULL;
}

static bool add_num(cJSON *o, const char *k, double v)
{
	return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static bool add_kv(cJSON *o, const char *k, const struct profile_kv *kv, size_t n)
{
	cJSON *m = cJSON_AddObjectToObject(o, k);

	for (size_t i = 0; m && i < n; i++)
		if (!cJSON_AddStringToObject(m, kv[i].key, kv[i].value))
			return false;
	return m != NULL;
}

static bool add_strs(cJSON *o, const char *k, char *const *v, size_t n)
{
	cJSON *a = cJSON_AddArrayToObject(o, k);

	for (size_t i = 0; a && i < n; i++) {
		cJSON *s = cJSON_CreateString(v[i]);

		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			return false;
		}
	}
	return a != NULL;
}

static bool add_uints(cJSON *o, const char *k, const unsigned *v, size_t n)
{
	cJSON *a = cJSON_AddArrayToObject(o, k);

	for (size_t i = 0; a && i < n; i++) {
		cJSON *x = cJSON_CreateNumber(v[i]);

		if (!x || !cJSON_AddItemToArray(a, x)) {
			cJSON_Delete(x);
			return false;
		}
	}
	return a != NULL;
}

static bool add_notes(cJSON *a, const struct notes *ns)
{
	for (size_t i = 0; i < ns->n; i++) {
		cJSON *s = cJSON_CreateString(ns->text[i]);

		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			return false;
		}
	}
	return true;
}

/*
 * The arguments of b for host class hc, as the agent gets them: every
 * placeholder expanded by profile_benchmark_argv() except {file_prefix}
 * and {build_dir}, which it cannot know.  Those two are expanded to
 * markers (control characters, which no profile argument may hold) and
 * turned back into placeholders here, while literal braces are doubled
 * again, so that the agent's expansion of the result is unambiguous.
 */
static int expand_args(const struct profile_benchmark *b, const struct profile_host_class *hc,
		       cJSON *out, struct pg_err *err)
{
	const struct profile_run_vars vars = {
		.file_prefix = MARK_FILE_PREFIX,
		.build_dir = MARK_BUILD_DIR,
	};
	struct pg_buf arg = PG_BUF_INIT(64 * 1024);
	char **argv = NULL;
	size_t argc = 0;
	int rc = -1;

	if (profile_benchmark_argv(b, hc, &vars, &argv, &argc, err) < 0)
		goto out;
	for (size_t i = 0; i < argc; i++) {
		cJSON *s;
		int r = 0;

		pg_buf_reset(&arg);
		for (const char *c = argv[i]; *c && r == 0; c++) {
			if (*c == MARK_FILE_PREFIX[0])
				r = pg_buf_adds(&arg, "{file_prefix}");
			else if (*c == MARK_BUILD_DIR[0])
				r = pg_buf_adds(&arg, "{build_dir}");
			else if (*c == '{')
				r = pg_buf_adds(&arg, "{{");
			else if (*c == '}')
				r = pg_buf_adds(&arg, "}}");
			else
				r = pg_buf_add(&arg, c, 1);
		}
		s = r == 0 ? cJSON_CreateString(pg_buf_str(&arg)) : NULL;
		if (!s || !cJSON_AddItemToArray(out, s)) {
			cJSON_Delete(s);
			pg_err_set(err, PG_ENOMEM, "benchmark '%s': out of memory", b->name);
			goto out;
		}
	}
	rc = 0;
out:
	profile_argv_free(argv, argc);
	pg_buf_release(&arg);
	return rc;
}

static int add_benchmark(cJSON *arr, const struct profile_benchmark *b,
			 const struct profile_host_class *hc, struct pg_err *err)
{
	cJSON *o = cJSON_CreateObject(), *args;
	const struct profile_mempool_subset *s = &b->subset;

	if (!o || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		goto nomem;
	}
	if (!add_str(o, "name", b->name) || !add_str(o, "program", b->program) ||
	    !(args = cJSON_AddArrayToObject(o, "args")))
		goto nomem;
	if (expand_args(b, hc, args, err) < 0)
		return -1;
	if (!add_kv(o, "env", b->env, b->n_env) ||
	    !add_str(o, "stdin", profile_stdin_name(b->stdin_mode)) ||
	    (b->duration_s && !add_num(o, "duration_s", b->duration_s)) ||
	    !add_str(o, "parser", profile_parser_name(b->parser)) ||
	    !add_strs(o, "gate", b->gate, b->n_gate) ||
	    !add_num(o, "timeout_s", b->timeout_s) ||
	    (b->stop_after_lines && !add_num(o, "stop_after_lines", b->stop_after_lines)))
		goto nomem;
	if (b->parser == PROFILE_PARSER_MEMPOOL_PERF &&
	    !add_str(o, "mode", profile_mode_name(b->mode)))
		goto nomem;
	if (b->has_subset) {
		cJSON *sub = cJSON_AddObjectToObject(o, "subset");

		if (!sub || !add_uints(sub, "cores", s->cores, s->n_cores) ||
		    !add_uints(sub, "cache", s->cache, s->n_cache) ||
		    !add_uints(sub, "bulk", s->bulk, s->n_bulk) ||
		    !add_uints(sub, "keep", s->keep, s->n_keep) ||
		    !add_uints(sub, "constant_n", s->constant_n, s->n_constant_n) ||
		    !add_num(sub, "time_s", s->time_s))
			goto nomem;
	}
	return 0;
nomem:
	return pg_err_set(err, PG_ENOMEM, "benchmark '%s': out of memory", b->name);
}

static int add_build(cJSON *spec, const struct group *g, const struct profile_build_mode *bm,
		     struct pg_err *err)
{
	const struct profile_kv **opts = NULL;
	size_t n = 0;
	cJSON *build, *m;
	int rc = -1;

	/* Without a version, no version-gated option: what every DPDK
	 * release knows. */
	if (profile_build_mode_options(bm, g->has_version ? g->major : 0,
				       g->has_version ? g->minor : 0, &opts, &n, err) < 0)
		return -1;
	if (!(build = cJSON_AddObjectToObject(spec, "build")) ||
	    !add_str(build, "buildtype", bm->buildtype) ||
	    !(m = cJSON_AddObjectToObject(build, "meson_options")))
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (!cJSON_AddStringToObject(m, opts[i]->key, opts[i]->value))
			goto nomem;
	if (bm->c_args && !add_str(build, "c_args", bm->c_args))
		goto nomem;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "build mode '%s': out of memory", bm->name);
out:
	free(opts);
	return rc;
}

static int add_host(cJSON *spec, const struct profile_host_class *hc, struct pg_err *err)
{
	cJSON *h = cJSON_AddObjectToObject(spec, "host");

	if (!h || !add_kv(h, "labels", hc->labels, hc->n_labels) ||
	    !add_str(h, "lcores", hc->lcores) || !add_num(h, "memory_mb", hc->memory_mb) ||
	    !cJSON_AddBoolToObject(h, "hugepages", hc->hugepages) ||
	    (hc->numa_node >= 0 && !add_num(h, "numa_node", hc->numa_node)))
		return pg_err_set(err, PG_ENOMEM, "host class '%s': out of memory", hc->name);
	return 0;
}

static int add_series(cJSON *spec, const struct pass *p, const struct series_info *si,
		      struct pg_err *err)
{
	char url[URL_MAX];
	cJSON *s, *deps;

	if (url_fmt(p, url, sizeof(url), "/api/v1/series/", si->id, "/mbox", err) < 0)
		return -1;
	if (!(s = cJSON_AddObjectToObject(spec, "series")) || !add_num(s, "id", (double)si->id) ||
	    !add_str(s, "title", si->title) || !add_num(s, "version", (double)si->version) ||
	    !add_num(s, "patches", (double)si->n_patches) || !add_str(s, "mbox_url", url) ||
	    !(deps = cJSON_AddArrayToObject(spec, "depends_on")))
		goto nomem;
	for (size_t i = 0; i < si->n_deps; i++) {
		const struct dep *d = &si->deps[i];
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(deps, o)) {
			cJSON_Delete(o);
			goto nomem;
		}
		if (d->series_id && !d->missing &&
		    url_fmt(p, url, sizeof(url), "/api/v1/series/", d->series_id, "/mbox", err) < 0)
			return -1;
		if (!(d->series_id ? add_num(o, "series", (double)d->series_id)
				   : cJSON_AddNullToObject(o, "series") != NULL) ||
		    !add_str(o, "kind", d->kind) || !add_str(o, "ref", d->ref) ||
		    !cJSON_AddBoolToObject(o, "missing", d->missing) ||
		    !add_str(o, "mbox_url", d->series_id && !d->missing ? url : NULL))
			goto nomem;
	}
	return 0;
nomem:
	return pg_err_set(err, PG_ENOMEM, "series %lld: out of memory", (long long)si->id);
}

/* The spec of one job (see planner.h): malloc'd JSON text in *out. */
static int build_spec(const struct pass *p, const struct series_info *si,
		      const struct group *g, const char *reason,
		      const struct profile_context *ctx, const struct profile_host_class *hc,
		      const struct profile_build_mode *bm, char **out, struct pg_err *err)
{
	const struct profile_set *ps = p->pl->ps;
	cJSON *spec = cJSON_CreateObject(), *tree, *benches, *notes;
	int rc = -1;

	*out = NULL;
	if (!spec || !add_num(spec, "format", PLANNER_SPEC_FORMAT) ||
	    !add_num(spec, "run", (double)g->run_id) || !add_str(spec, "reason", reason) ||
	    !add_str(spec, "context", ctx->name) || !add_str(spec, "host_class", hc->name) ||
	    !add_str(spec, "build_mode", bm->name) ||
	    !(tree = cJSON_AddObjectToObject(spec, "tree")) ||
	    !add_str(tree, "name", g->tree->name) || !add_str(tree, "url", g->tree->url) ||
	    !add_str(tree, "branch", g->branch) || !add_str(tree, "base_commit", g->base) ||
	    !add_str(tree, "base_source", g->base_source) ||
	    !add_str(tree, "version", g->has_version || g->version[0] ? g->version : NULL))
		goto nomem;
	if (add_series(spec, p, si, err) < 0 || add_build(spec, g, bm, err) < 0 ||
	    add_host(spec, hc, err) < 0)
		goto out;
	if (!(benches = cJSON_AddArrayToObject(spec, "benchmarks")))
		goto nomem;
	for (size_t i = 0; i < ctx->n_benchmarks; i++) {
		const struct profile_benchmark *b = profile_find_benchmark(ps, ctx->benchmarks[i]);

		if (!b) {
			pg_err_set(err, PG_EINVAL, "context '%s': unknown benchmark '%s'", ctx->name,
				   ctx->benchmarks[i]);
			goto out;
		}
		if (add_benchmark(benches, b, hc, err) < 0)
			goto out;
	}
	if (!add_num(spec, "repetitions", ctx->repetitions) ||
	    !add_num(spec, "max_repetitions", ctx->max_repetitions) ||
	    !add_num(spec, "threshold_pct", ctx->threshold_pct) ||
	    !add_num(spec, "alpha", ctx->alpha) ||
	    !add_num(spec, "noise_limit_pct", ctx->noise_limit_pct) ||
	    !(notes = cJSON_AddArrayToObject(spec, "notes")) ||
	    !add_notes(notes, &si->notes) || !add_notes(notes, &g->notes))
		goto nomem;
	*out = pg_json_print(spec, false);
	if (!*out)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "job spec: out of memory");
out:
	cJSON_Delete(spec);
	return rc;
}

/* ---- planning one series ------------------------------------------------ */

static bool branch_of(const struct profile_tree *t, const char *branch)
{
	for (size_t i = 0; i < t->n_branches; i++)
		if (strcmp(t->branches[i], branch) == 0)
			return true;
	return false;
}

/* Put each context in the group of its (tree, branch); groups[k].ctx are
 * slices of slots (room for n_ctx).  With a rebase, the branch is the
 * rebase branch, and contexts whose tree does not have it are left out.
 * *n_groups may be 0 afterwards. */
static int group_contexts(const struct pass *p, const struct series_info *si,
			  const struct recheck *rq, const struct profile_context *const *ctxs,
			  size_t n_ctx, const struct profile_context **slots, struct group *groups,
			  size_t *n_groups, struct pg_err *err)
{
	const struct profile_set *ps = p->pl->ps;
	struct choice {
		const struct profile_tree *tree;	/* NULL: left out */
		const char *branch;
	} *ch = calloc(n_ctx ? n_ctx : 1, sizeof(*ch));
	size_t used = 0;
	int rc = -1;

	*n_groups = 0;
	if (!ch) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_ctx; i++) {
		const char *tname = NULL, *branch = NULL;
		const struct profile_tree *t;
		size_t k;

		profile_context_select_tree(ps, ctxs[i], (const char *const *)si->files.v,
					    si->files.n, (const char *const *)si->tags.v, si->tags.n,
					    &tname, &branch);
		t = tname ? profile_find_tree(ps, tname) : NULL;
		if (!t) {
			pg_err_set(err, PG_EINVAL, "context '%s': no tree selected", ctxs[i]->name);
			goto out;
		}
		if (rq && rq->rebase) {
			if (!branch_of(t, rq->rebase)) {
				pg_log_warn(COMP, "recheck %lld: context %s: '%s' is not a branch of "
					    "tree %s: left out", (long long)rq->id, ctxs[i]->name,
					    rq->rebase, t->name);
				continue;
			}
			branch = rq->rebase;
		}
		ch[i].tree = t;
		ch[i].branch = branch;
		for (k = 0; k < *n_groups; k++)
			if (groups[k].tree == t && strcmp(groups[k].branch, branch) == 0)
				break;
		if (k == *n_groups) {
			groups[k].tree = t;
			groups[k].branch = branch;
			(*n_groups)++;
		}
	}
	/* The contexts of each group, in the profile's order. */
	for (size_t k = 0; k < *n_groups; k++) {
		groups[k].ctx = slots + used;
		groups[k].n_ctx = 0;
		for (size_t i = 0; i < n_ctx; i++)
			if (ch[i].tree == groups[k].tree &&
			    strcmp(ch[i].branch, groups[k].branch) == 0)
				groups[k].ctx[groups[k].n_ctx++] = ctxs[i];
		used += groups[k].n_ctx;
	}
	rc = 0;
out:
	free(ch);
	return rc;
}

/* The context's pending check, on the patches its final one will go to
 * (outbox.h). */
static int insert_checks(struct pass *p, const struct series_info *si, const struct group *g,
			 const struct profile_context *ctx, unsigned long *checks,
			 struct pg_err *err)
{
	char url[URL_MAX];
	unsigned int queued = 0;

	if (url_fmt(p, url, sizeof(url), "/series/", si->id, "", err) < 0 ||
	    outbox_queue_check_tx(p->pl->st, g->run_id, ctx->name, "pending",
				  PLANNER_PENDING_TEXT, url, ctx->post_to, p->now, &queued,
				  err) < 0)
		return -1;
	*checks += queued;
	return 0;
}

struct plan_counts {
	unsigned long runs, jobs, checks;
};

static int insert_group(struct pass *p, const struct series_info *si, const struct recheck *rq,
			struct group *g, int64_t priority, struct plan_counts *pc,
			struct pg_err *err)
{
	const struct profile_set *ps = p->pl->ps;
	const char *reason = rq ? "recheck" : "new";
	struct sched_run_new run;
	char *spec = NULL;
	int rc = -1;

	memset(&run, 0, sizeof(run));
	run.series_id = si->id;
	run.reason = reason;
	run.recheck_id = rq ? rq->id : 0;
	run.tree = g->tree->name;
	run.branch = g->branch;
	run.base_commit = g->base;
	if (sched_run_add_tx(p->pl->st, &run, p->now, &g->run_id, err) < 0)
		goto out;
	pc->runs++;
	for (size_t c = 0; c < g->n_ctx; c++) {
		const struct profile_context *ctx = g->ctx[c];
		const struct profile_host_class *hc = profile_find_host_class(ps, ctx->host_class);

		if (!hc) {
			pg_err_set(err, PG_EINVAL, "context '%s': unknown host class '%s'", ctx->name,
				   ctx->host_class);
			goto out;
		}
		for (size_t m = 0; m < ctx->n_build_modes; m++) {
			const struct profile_build_mode *bm =
				profile_find_build_mode(ps, ctx->build_modes[m]);

			if (!bm) {
				pg_err_set(err, PG_EINVAL, "context '%s': unknown build mode '%s'",
					   ctx->name, ctx->build_modes[m]);
				goto out;
			}
			if (build_spec(p, si, g, reason, ctx, hc, bm, &spec, err) < 0 ||
			    sched_job_add_tx(p->pl->st, g->run_id, ctx->name, hc->name, bm->name,
					     spec, priority, p->now, NULL, err) < 0)
				goto out;
			free(spec);
			spec = NULL;
			pc->jobs++;
		}
		if (insert_checks(p, si, g, ctx, &pc->checks, err) < 0)
			goto out;
	}
	rc = 0;
out:
	free(spec);
	return rc;
}

/* Write the plan in one transaction, after checking that nobody planned
 * it meanwhile.  *planned is false when there was nothing left to do. */
static int commit_plan(struct pass *p, const struct series_info *si, const struct recheck *rq,
		       struct group *groups, size_t n_groups, const char *dropped,
		       bool *planned, struct plan_counts *pc, struct pg_err *err)
{
	struct store *st = p->pl->st;
	int64_t again = 0, priority = 0;
	int rc = -1;

	*planned = false;
	memset(pc, 0, sizeof(*pc));
	if (rq)
		priority += PLANNER_PRIORITY_RECHECK;
	if (si->total == 1)
		priority += PLANNER_PRIORITY_SMALL;
	if (store_begin(st, err) < 0)
		return -1;
	if (rq) {
		bool pending;

		if (recheck_is_pending(st, rq->id, &pending, err) < 0)
			goto out;
		again = pending;
	} else if (store_query_id(st, "check series",
				  "SELECT id FROM series s WHERE id = ?1 AND state = 'complete'"
				  " AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.series_id = s.id)",
				  STORE_ARGS(STORE_INT(si->id)), &again, err) < 0) {
		goto out;
	}
	if (!again) {
		rc = 0;		/* planned by someone else, or superseded meanwhile */
		goto out;
	}
	for (size_t i = 0; i < n_groups; i++)
		if (insert_group(p, si, rq, &groups[i], priority, pc, err) < 0)
			goto out;
	if (rq && recheck_mark_planned(st, rq->id, dropped, NULL, err) < 0)
		goto out;
	if (store_commit(st, err) < 0)
		goto out;
	*planned = true;
	rc = 0;
out:
	store_rollback(st);
	return rc;
}

static int ignore_recheck(struct pass *p, const struct recheck *rq, const char *why,
			  struct pg_err *err)
{
	bool changed;

	if (recheck_mark_ignored(p->pl->st, rq->id, why, &changed, err) < 0)
		return -1;
	if (changed) {
		p->pl->stats.rechecks_ignored++;
		pg_log_info(COMP, "recheck %lld of series %lld: ignored: %s", (long long)rq->id,
			    (long long)rq->series_id, why);
	}
	return 0;
}

/* The contexts a recheck names that still exist; the others, for the
 * request's reason, in dropped. */
static int recheck_contexts(const struct pass *p, const struct recheck *rq,
			    const struct profile_context **ctxs, size_t *n, struct pg_buf *dropped)
{
	struct pg_strvec names = { 0 };
	int rc = -1;

	*n = 0;
	if (pg_strvec_split(&names, rq->contexts, ',') < 0)
		goto out;
	for (size_t i = 0; i < names.n; i++) {
		const struct profile_context *c = profile_find_context(p->pl->ps, names.v[i]);
		size_t k;

		for (k = 0; c && k < *n; k++)
			if (ctxs[k] == c)
				break;
		if (c && k == *n && *n < p->pl->ps->n_contexts)
			ctxs[(*n)++] = c;
		else if (!c && dropped->len < 1024 &&	/* a reason, not an inventory */
			 pg_buf_printf(dropped, "%s%.255s", dropped->len ? ", " : "",
				       names.v[i]) < 0)
			goto out;
	}
	rc = 0;
out:
	pg_strvec_clear(&names);
	return rc;
}

/*
 * Plan a series (rq NULL) or a recheck request on it.  Errors are logged
 * here; the result says what became of it.
 */
static enum plan_result plan(struct pass *p, int64_t series_id, const struct recheck *rq)
{
	const struct profile_set *ps = p->pl->ps;
	struct pg_err err = PG_ERR_INIT;
	/* Context names come from mail and the API: bounded, but roomy. */
	struct pg_buf dropped = PG_BUF_INIT(64 * 1024), why = PG_BUF_INIT(64 * 1024);
	const struct profile_context **ctxs = NULL, **slots = NULL;
	struct series_info *si = NULL;
	struct group *groups = NULL;
	struct plan_counts pc;
	size_t n_ctx = 0, n_groups = 0;
	enum plan_result res = PLAN_FAIL;
	bool wait = false, planned = false;
	int64_t runs = 0;

	if (load_series(p->pl->st, series_id, &si, &err) < 0)
		goto out;
	if (rq) {
		if (strcmp(si->state, "complete") != 0) {
			if (ignore_recheck(p, rq, strcmp(si->state, "superseded") == 0 ?
					   "the series was superseded" :
					   "the series is not complete", &err) < 0)
				goto out;
			res = PLAN_DONE;
			goto out;
		}
		if (store_query_id(p->pl->st, "look for a run",
				   "SELECT id FROM runs WHERE series_id = ?1 LIMIT 1",
				   STORE_ARGS(STORE_INT(si->id)), &runs, &err) < 0)
			goto out;
		if (!runs) {
			/* The first run comes first. */
			res = PLAN_WAIT;
			goto out;
		}
	}
	if (si->n_patches == 0 || (int64_t)si->n_patches < si->total) {
		pg_err_set(&err, PG_ECONFLICT, "series %lld is complete but has %zu of %lld patches",
			   (long long)si->id, si->n_patches, (long long)si->total);
		goto out;
	}
	ctxs = calloc(ps->n_contexts ? ps->n_contexts : 1, sizeof(*ctxs));
	groups = calloc(ps->n_contexts ? ps->n_contexts : 1, sizeof(*groups));
	slots = calloc(ps->n_contexts ? ps->n_contexts : 1, sizeof(*slots));
	if (!ctxs || !groups || !slots) {
		pg_err_set(&err, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (rq) {
		if (recheck_contexts(p, rq, ctxs, &n_ctx, &dropped) < 0) {
			pg_err_set(&err, PG_ENOMEM, "out of memory");
			goto out;
		}
		if (n_ctx == 0) {
			if (pg_buf_printf(&why, "none of its contexts (%.200s) exists in the profiles",
					  rq->contexts) < 0 ||
			    ignore_recheck(p, rq, pg_buf_str(&why), &err) < 0)
				goto out;
			res = PLAN_DONE;
			goto out;
		}
	} else {
		for (size_t i = 0; i < ps->n_contexts; i++)
			ctxs[n_ctx++] = &ps->contexts[i];
	}
	if (collect_deps(p, si, &wait, &err) < 0)
		goto out;
	if (wait) {
		p->pl->stats.series_waiting++;
		res = PLAN_WAIT;
		goto out;
	}
	if (group_contexts(p, si, rq, ctxs, n_ctx, slots, groups, &n_groups, &err) < 0)
		goto out;
	if (n_groups == 0) {
		/* Only a rebase leaves contexts out. */
		if (!rq || !rq->rebase) {
			pg_err_set(&err, PG_EINVAL, "no context to plan");
			goto out;
		}
		if (pg_buf_printf(&why, "rebase branch '%.200s' is not a branch of the trees of its "
				  "contexts", rq->rebase) < 0 ||
		    ignore_recheck(p, rq, pg_buf_str(&why), &err) < 0)
			goto out;
		res = PLAN_DONE;
		goto out;
	}
	for (size_t i = 0; i < n_groups; i++)
		if (resolve_group(p, si, rq, &groups[i], &err) < 0)
			goto out;
	if (dropped.len && pg_buf_printf(&why, "contexts not in the profiles: %.1000s",
					 pg_buf_str(&dropped)) < 0) {
		pg_err_set(&err, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (commit_plan(p, si, rq, groups, n_groups, pg_buf_str(&why), &planned, &pc, &err) < 0)
		goto out;
	res = PLAN_DONE;
	if (!planned)
		goto out;
	p->pl->stats.runs_created += pc.runs;
	p->pl->stats.jobs_created += pc.jobs;
	p->pl->stats.checks_queued += pc.checks;
	if (rq)
		p->pl->stats.rechecks_planned++;
	else
		p->pl->stats.series_planned++;
	for (size_t i = 0; i < n_groups; i++)
		pg_log_info(COMP, "series %lld%s%s: run %lld on %s %s at %.12s (%s, VERSION %s): "
			    "%zu context(s)", (long long)si->id, rq ? " recheck" : "",
			    rq && rq->rebase ? " with rebase" : "", (long long)groups[i].run_id,
			    groups[i].tree->name, groups[i].branch, groups[i].base,
			    groups[i].base_source, groups[i].version[0] ? groups[i].version : "?",
			    groups[i].n_ctx);
out:
	if (res == PLAN_FAIL) {
		p->pl->stats.errors++;
		pg_log_warn(COMP, "%s%lld: not planned this pass, retried next pass: %s",
			    rq ? "recheck of series " : "series ", (long long)series_id, err.msg);
	}
	pg_buf_release(&dropped);
	pg_buf_release(&why);
	free(slots);
	free(groups);
	free(ctxs);
	if (si)
		series_free(si);
	return res;
}

/* ---- the pass ----------------------------------------------------------- */

void planner_init(struct planner *pl, struct store *st, const struct profile_set *ps,
		  const char *mirror_root, const char *public_url)
{
	memset(pl, 0, sizeof(*pl));
	pl->st = st;
	pl->ps = ps;
	pl->mirror_root = mirror_root;
	pl->public_url = public_url;
	pl->dep_timeout_s = PLANNER_DEP_TIMEOUT_DEFAULT_S;
}

int planner_run(struct planner *pl, struct pg_err *err)
{
	struct pass p;
	struct recheck *rqs = NULL;
	int64_t *ids = NULL;
	size_t n_ids = 0, n_rqs = 0, len;
	int rc = -1;

	memset(&pl->stats, 0, sizeof(pl->stats));
	memset(&p, 0, sizeof(p));
	p.pl = pl;
	p.now = pass_now(pl);
	len = strlen(pl->public_url);
	while (len && pl->public_url[len - 1] == '/')
		len--;
	if (len >= sizeof(p.base_url)) {
		pg_err_set(err, PG_EINVAL, "public URL '%.64s...' is too long", pl->public_url);
		goto out;
	}
	memcpy(p.base_url, pl->public_url, len);
	p.base_url[len] = '\0';
	p.trees = calloc(pl->ps->n_trees ? pl->ps->n_trees : 1, sizeof(*p.trees));
	if (!p.trees) {
		pg_err_set(err, PG_ENOMEM, "planner: out of memory");
		goto out;
	}
	if (planner_cancel_superseded(pl, err) < 0)
		goto out;
	/* Without contexts there is nothing to plan a series for. */
	if (pl->ps->n_contexts &&
	    list_ids(pl->st, "list series to plan",
		     "SELECT s.id FROM series s WHERE s.state = 'complete'"
		     " AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.series_id = s.id)"
		     " ORDER BY s.completed_at, s.id",
		     NULL, 0, &ids, &n_ids, err) < 0)
		goto out;
	for (size_t i = 0; i < n_ids; i++)
		plan(&p, ids[i], NULL);
	if (recheck_list_pending(pl->st, &rqs, &n_rqs, err) < 0)
		goto out;
	for (size_t i = 0; i < n_rqs; i++)
		plan(&p, rqs[i].series_id, &rqs[i]);
	rc = 0;
out:
	if (rc)
		pg_err_prefix(err, "planner pass");
	recheck_list_free(rqs, n_rqs);
	free(ids);
	free(p.trees);
	return rc;
}

int planner_stats_print(const struct planner_stats *s, struct pg_buf *out)
{
	return pg_buf_printf(out, "series=%lu runs=%lu jobs=%lu checks=%lu rechecks_planned=%lu "
			     "rechecks_ignored=%lu waiting=%lu deps_resolved=%lu deps_missing=%lu "
			     "cancelled=%lu trees_synced=%lu errors=%lu\n",
			     s->series_planned, s->runs_created, s->jobs_created, s->checks_queued,
			     s->rechecks_planned, s->rechecks_ignored, s->series_waiting,
			     s->deps_resolved, s->deps_missing, s->jobs_cancelled,
			     s->trees_synced, s->errors);
}
