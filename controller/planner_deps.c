/* SPDX-License-Identifier: MIT */
/* The planner's Depends-on walk: see planner.h ("Depends-on"). */
#include "planner_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "log.h"
#include "series.h"

/* For log lines and notes: a long reference is cut, visibly. */
static void dep_name(const char *kind, const char *ref, char *out, size_t len)
{
	if (strcmp(kind, "msgid") == 0)
		pg_fmt_cut(out, len, "<%s>", ref);
	else
		pg_fmt_cut(out, len, "%s-%s", kind, ref);
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
		if (pg_fmt(r->kind, sizeof(r->kind), "%s", kind ? kind : "") < 0) {
			pg_err_set(err, PG_EINVAL, "%s: kind '%.16s...' too long", what, kind);
			goto out;
		}
		r->dep = sqlite3_column_int64(stmt, 2);
		if (store_col_dup(stmt, 1, &r->ref) < 0 || !r->ref)
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
	/* Cannot fail: kind is a struct dep_row's, of the same size. */
	if (pg_fmt(d->kind, sizeof(d->kind), "%s", kind) < 0)
		return -1;
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
					pg_fmt_cut(w->waiting_for, sizeof(w->waiting_for),
						   "%.160s (never seen)", name);
				w->wait = true;
				continue;
			}
			planner_note(&si->notes, "Depends-on %s was never seen: tested without it", name);
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
					pg_fmt_cut(w->waiting_for, sizeof(w->waiting_for),
						   "%.160s (series %lld, %lld of %lld patches)",
						   name, (long long)r->dep, (long long)have,
						   (long long)total);
				w->wait = true;
				continue;
			}
			planner_note(&si->notes, "Depends-on %s (series %lld) never completed: tested "
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
int planner_collect_deps(struct pass *p, struct series_info *si, bool *wait, struct pg_err *err)
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
		planner_note(&si->notes, "more than %d dependencies: only the first are applied",
			     PLANNER_MAX_DEPS);
	for (size_t i = 0; i < si->n_deps; i++)
		if (si->deps[i].missing)
			p->pl->stats.deps_missing++;
	return 0;
}
