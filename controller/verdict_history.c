/* SPDX-License-Identifier: MIT */
/*
 * History and change points (verdict_pass.h, "History"): a decided job's
 * base-side medians extend the history of its host, tree, branch, build
 * mode and keys; on a main branch each series is then searched for a
 * change of level (changepoint.h).
 */
#include "verdict_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"
#include "fmt.h"
#include "stats.h"
#include "trees.h"
#include "vec.h"
#include "verdict_pass.h"

/* History rows read per series, newest first: enough for CP_MAX_POINTS
 * commits measured a few times each. */
#define VP_HISTORY_ROWS 2048
#define VP_OID_MAX 64
#define VP_WALK_MAX 200000	/* commits walked back from a branch's tip */

#define VP_WHAT_HIST "read history"

/* One base commit of a series: its values in the order measured. */
struct vp_commit {
	char oid[VP_OID_MAX + 1];
	double *v;
	size_t n, cap;
};

struct vp_series {
	struct vp_commit *c;
	size_t n, cap;
};

static void series_release(struct vp_series *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->c[i].v);
	free(s->c);
	memset(s, 0, sizeof(*s));
}

/* Add value v of commit oid, commits kept in the order first seen. */
static int series_add(struct vp_series *s, const char *oid, double v, struct pg_err *err)
{
	struct vp_commit *c = NULL;

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

/* The series of (host, tree, branch, build mode, benchmark, metric), oldest
 * commit first.  args are those six, bound to ?1..?6. */
static int series_read(struct store *st, const struct store_arg *args, struct vp_series *s,
		       struct pg_err *err)
{
	struct { char oid[VP_OID_MAX + 1]; double v; } *rows = NULL;
	sqlite3_stmt *q = NULL;
	size_t n = 0;
	int rc = -1, step = 0;

	rows = malloc(VP_HISTORY_ROWS * sizeof(*rows));
	if (!rows)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	if (store_prepare(st, &q,
			  "SELECT commit_oid, value FROM history WHERE host = ?1 AND tree = ?2"
			  " AND branch = ?3 AND build_mode = ?4 AND benchmark = ?5 AND metric = ?6"
			  " ORDER BY measured_at DESC, id DESC LIMIT 2048", VP_WHAT_HIST, err) < 0 ||
	    store_bind(q, args, 6, VP_WHAT_HIST, err) < 0)
		goto out;
	while (n < VP_HISTORY_ROWS && (step = store_step(q, VP_WHAT_HIST, err)) == 1) {
		const char *oid = (const char *)sqlite3_column_text(q, 0);

		if (pg_fmt(rows[n].oid, sizeof(rows[n].oid), "%s", oid ? oid : "") < 0) {
			pg_err_set(err, PG_EINVAL, "%s: commit '%.48s...' too long", VP_WHAT_HIST,
				   oid);
			goto out;
		}
		rows[n].v = sqlite3_column_double(q, 1);
		n++;
	}
	if (n < VP_HISTORY_ROWS && step < 0)
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

/* The commit after the last change point recorded for the series, into
 * oid ("" when none). */
static int last_change(struct store *st, const struct store_arg *args, char *oid, size_t len,
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
	    store_bind(q, args, 6, what, err) < 0) {
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

/* The commits of s in first-parent order of the branch, those off its
 * line dropped, when the mirror can say; else s as measured. */
static void series_git_order(const char *mirror_root, const char *tree, const char *branch,
			     struct vp_series *s)
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
	    trees_first_parent_positions(mirror, branch, oids, s->n, VP_WALK_MAX, pos, &e) < 0)
		goto out;
	for (size_t i = 0; i < s->n; i++)
		keep += pos[i] >= 0;
	if (!keep)
		goto out;
	/* Insertion sort by position (a few hundred commits), dropping the
	 * rest: their values go with them. */
	for (size_t i = 0, w = 0; i < s->n; i++) {
		struct vp_commit c = s->c[i];
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

/* Search one series for a change point and record it. */
static int detect(struct store *st, const char *mirror_root, const struct vp_job *j,
		  const struct vp_key *k, int64_t now, struct pg_buf *lines, unsigned long *changes,
		  struct pg_err *err)
{
	const struct store_arg args[6] = {
		STORE_TEXT(j->host), STORE_TEXT(j->tree), STORE_TEXT(j->branch),
		STORE_TEXT(j->build_mode), STORE_TEXT(k->benchmark), STORE_TEXT(k->metric),
	};
	struct cp_params cp = { VERDICT_CP_MIN_POINTS, VERDICT_CP_ALPHA, j->params.threshold_pct };
	struct vp_series s = { NULL, 0, 0 };
	char after[VP_OID_MAX + 1];
	double x[CP_MAX_POINTS];
	size_t from = 0, n;
	struct cp_change ch;
	double effect;
	int rc = -1;

	if (series_read(st, args, &s, err) < 0 || last_change(st, args, after, sizeof(after), err) < 0)
		goto out;
	series_git_order(mirror_root, j->tree, j->branch, &s);
	/* The level since the last change: from its commit after. */
	for (size_t i = 0; *after && i < s.n; i++)
		if (!strcmp(s.c[i].oid, after)) {
			from = i;
			break;
		}
	if (s.n - from > CP_MAX_POINTS)
		from = s.n - CP_MAX_POINTS;
	n = s.n - from;
	for (size_t i = 0; i < n; i++)
		if (stats_median(s.c[from + i].v, s.c[from + i].n, &x[i], err) < 0)
			goto out;
	if (cp_detect(x, n, &cp, &ch, err) < 0)
		goto out;
	rc = 0;
	if (!ch.found)
		goto out;
	effect = profile_key_higher_is_better(k->metric) ? ch.change_pct : -ch.change_pct;
	if (!isfinite(effect))
		effect = effect > 0 ? 1e9 : -1e9;
	rc = store_run(st, "record change point",
		       "INSERT INTO change_points (host, tree, branch, build_mode, benchmark, metric,"
		       " commit_before, commit_after, effect, p, detected_at)"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT DO NOTHING",
		       STORE_ARGS(args[0], args[1], args[2], args[3], args[4], args[5],
				  STORE_TEXT(s.c[from + ch.split - 1].oid),
				  STORE_TEXT(s.c[from + ch.split].oid), STORE_REAL(effect),
				  STORE_REAL(ch.p), STORE_INT(now)), err);
	if (rc == 0 && store_changes(st) > 0) {
		(*changes)++;
		vp_say(lines, "%s on %s %s/%s %s: %s %s %+.1f%% (p=%.2g) between %.12s and %.12s",
		       effect < 0 ? "suspected main-branch regression" : "change point (better)",
		       j->host, j->tree, j->branch, j->build_mode, k->benchmark, k->metric, effect,
		       ch.p, s.c[from + ch.split - 1].oid, s.c[from + ch.split].oid);
	}
out:
	series_release(&s);
	return rc;
}

int vp_history_add(struct store *st, const struct profile_set *ps, const char *mirror_root,
		   const struct vp_job *j, int64_t now, struct pg_buf *lines, unsigned long *rows,
		   unsigned long *changes, struct pg_err *err)
{
	bool main_branch = !strcmp(j->branch, vp_main_branch(ps, j->tree));

	if (!*j->host || j->measured_at <= 0)
		return 0;
	for (size_t i = 0; i < j->n_keys; i++) {
		const struct vp_key *k = &j->keys[i];
		double med;

		if (!k->n[0])
			continue;
		if (stats_median(k->v[0], k->n[0], &med, err) < 0)
			return -1;
		if (store_run(st, "add history",
			      "INSERT INTO history (host, tree, branch, build_mode, benchmark, metric,"
			      " commit_oid, value, unit, samples, job_id, measured_at)"
			      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
			      " ON CONFLICT DO NOTHING",
			      STORE_ARGS(STORE_TEXT(j->host), STORE_TEXT(j->tree),
					 STORE_TEXT(j->branch), STORE_TEXT(j->build_mode),
					 STORE_TEXT(k->benchmark), STORE_TEXT(k->metric),
					 STORE_TEXT(j->base_commit), STORE_REAL(med),
					 STORE_TEXT(k->unit ? k->unit : ""),
					 STORE_INT((int64_t)k->n[0]), STORE_INT(j->id),
					 STORE_INT(j->measured_at)), err) < 0)
			return -1;
		if (store_changes(st) == 0)
			continue;
		(*rows)++;
		if (main_branch && detect(st, mirror_root, j, k, now, lines, changes, err) < 0)
			return -1;
	}
	return 0;
}
