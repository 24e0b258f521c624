/* SPDX-License-Identifier: MIT */
/* Bisection of change points on a main branch (planner.h, "Bisection";
 * DESIGN.md section 2.9). */
#include "planner_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "changes.h"
#include "fmt.h"
#include "log.h"
#include "stats.h"
#include "verdict_pass.h"

/* Commits of a range held at once: a main branch moves by hundreds a
 * month, a nightly baseline's range is far smaller. */
#define BISECT_RANGE_MAX 4096

/* The median of the values of commit i of s. */
static int commit_median(const struct changes_series *s, size_t i, double *m, struct pg_err *err)
{
	return stats_median(s->c[i].v, s->c[i].n, m, err);
}

/* The levels around the range (bisect.h): the commits up to `before`
 * (index ib of s) and from `after` (ia) on. */
static int levels(const struct changes_series *s, size_t ib, size_t ia, struct bisect_levels *lv,
		  struct pg_err *err)
{
	double xb[BISECT_LEVEL_POINTS], xa[BISECT_LEVEL_POINTS];
	size_t nb = 0, na = 0;

	for (size_t i = ib + 1; i-- > 0 && nb < BISECT_LEVEL_POINTS;)
		if (commit_median(s, i, &xb[nb++], err) < 0)
			return -1;
	for (size_t i = ia; i < s->n && na < BISECT_LEVEL_POINTS; i++)
		if (commit_median(s, i, &xa[na++], err) < 0)
			return -1;
	return bisect_levels(xb, nb, xa, na, VERDICT_CP_ALPHA, lv, err);
}

/* The measured commits strictly inside range[0 .. n-1) (bisect.h), into
 * pts[0 .. *n_pts) (n - 1 at most). */
static void points(const struct changes_series *s, char (*range)[TREES_OID_HEX + 1], size_t n,
		   struct bisect_point *pts, size_t *n_pts)
{
	*n_pts = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		long k = changes_series_find(s, range[i]);

		if (k >= 0)
			pts[(*n_pts)++] = (struct bisect_point){ i, s->c[k].v, s->c[k].n };
	}
}

/* Tell a change point located: once (alerted_at), in the log. */
static int tell(struct planner *pl, const struct change_point *c, const char *commit,
		int64_t now, struct pg_err *err)
{
	bool first;

	if (changes_alerted_tx(pl->st, c->id, now, &first, err) < 0)
		return -1;
	if (first)
		pg_log_warn(COMP, "change point %lld located: %s %s at %.12s: %s %s %+.1f%% on %s %s "
			    "(%lld bisection baseline%s)", (long long)c->id, c->tree, c->branch, commit,
			    c->benchmark, c->metric, c->effect, c->host, c->build_mode,
			    (long long)c->bisect_runs, c->bisect_runs == 1 ? "" : "s");
	return 0;
}

/* An end of bisection in its own transaction: located at commit (why
 * says how), or dismissed (commit NULL). */
static int finish(struct planner *pl, const struct change_point *c, const char *commit,
		  const char *why, int64_t now, struct pg_err *err)
{
	if (store_begin(pl->st, err) < 0)
		return -1;
	if ((commit ? changes_locate_tx(pl->st, c->id, commit, why, now, err) < 0 ||
		      tell(pl, c, commit, now, err) < 0
		    : changes_dismiss_tx(pl->st, c->id, why, now, err) < 0) ||
	    store_commit(pl->st, err) < 0) {
		store_rollback(pl->st);
		return -1;
	}
	if (commit)
		pl->stats.changes_located++;
	else {
		pl->stats.changes_dismissed++;
		pg_log_info(COMP, "change point %lld dismissed: %s", (long long)c->id, why);
	}
	return 0;
}

static int narrow(struct planner *pl, const struct change_point *c, const char *before,
		  const char *after, int64_t now, struct pg_err *err)
{
	if (store_begin(pl->st, err) < 0)
		return -1;
	if (changes_narrow_tx(pl->st, c->id, before, after, now, err) < 0 ||
	    store_commit(pl->st, err) < 0) {
		store_rollback(pl->st);
		return -1;
	}
	return 0;
}

/* Whether the change point's bisection baseline still waits. */
static int run_waiting(struct store *st, int64_t run_id, bool *waiting, struct pg_err *err)
{
	int64_t n = 0;

	*waiting = false;
	if (!run_id)
		return 0;
	if (store_query_int(st, "read bisection run",
			    "SELECT count(*) FROM runs WHERE id = ?1 AND state IN ('planned', 'running')",
			    STORE_ARGS(STORE_INT(run_id)), &n, err) < 0)
		return -1;
	*waiting = n > 0;
	return 0;
}

/* A bisection baseline of commit `commit` of change point c, whose range
 * (before, after] holds `left` commits. */
static int measure(struct planner *pl, struct pass *p, const struct change_point *c,
		   const char *commit, const char *before, const char *after, size_t left,
		   struct pg_err *err)
{
	struct planner_baseline_req rq = {
		.tree = c->tree, .branch = c->branch, .commit = commit,
		.context = *c->context ? c->context : NULL, .trigger = "bisect",
		.build_mode = c->build_mode, .pin_agent = c->host,
	};
	struct planner_stats keep = pl->stats;
	struct pg_err berr = PG_ERR_INIT;
	char why[CHANGES_TEXT_MAX];
	int64_t run = 0;

	if (planner_baseline(pl, &rq, &run, &berr) < 0) {
		pl->stats = keep;
		if (berr.code != PG_ENOTFOUND && berr.code != PG_EINVAL) {
			*err = berr;
			return -1;
		}
		pg_fmt_cut(why, sizeof(why), "cannot measure inside its range: %s", berr.msg);
		return finish(pl, c, NULL, why, p->now, err);
	}
	keep.runs_created += pl->stats.runs_created;
	keep.jobs_created += pl->stats.jobs_created;
	keep.baselines_planned += pl->stats.baselines_planned;
	pl->stats = keep;
	if (store_begin(pl->st, err) < 0)
		return -1;
	if (changes_bisect_run_tx(pl->st, c->id, run, p->now, err) < 0 ||
	    store_commit(pl->st, err) < 0) {
		store_rollback(pl->st);
		return -1;
	}
	pl->stats.bisect_runs++;
	pg_log_info(COMP, "change point %lld: %zu commits between %.12s and %.12s: baseline run "
		    "%lld at %.12s on %s", (long long)c->id, left, before, after, (long long)run,
		    commit, c->host);
	return 0;
}

/* The search put change point c one measured commit off (bisect.h, 2a):
 * its range widens to the measured commit before its end before (index ib
 * of s), or after its end after (ia), or it is dismissed when there is
 * none or another change point ends there. */
static int widen(struct planner *pl, struct pass *p, const struct change_point *c,
		 const struct changes_series *s, size_t ib, size_t ia, bool earlier,
		 struct pg_err *err)
{
	struct pg_err nerr = PG_ERR_INIT;
	char why[CHANGES_TEXT_MAX];

	if (earlier ? ib == 0 : ia + 1 >= s->n) {
		pg_fmt_cut(why, sizeof(why), "its commit %s is at the %s level and no commit %s it "
			   "is measured", earlier ? "before" : "after", earlier ? "new" : "old",
			   earlier ? "before" : "after");
		return finish(pl, c, NULL, why, p->now, err);
	}
	if (narrow(pl, c, earlier ? s->c[ib - 1].oid : s->c[ib].oid,
		   earlier ? s->c[ia].oid : s->c[ia + 1].oid, p->now, &nerr) == 0) {
		pg_log_info(COMP, "change point %lld: its commit %s is at the %s level: the range "
			    "widens to %.12s", (long long)c->id, earlier ? "before" : "after",
			    earlier ? "new" : "old", earlier ? s->c[ib - 1].oid : s->c[ia + 1].oid);
		return 0;
	}
	if (nerr.code != PG_ECONFLICT) {
		*err = nerr;
		return -1;
	}
	pg_fmt_cut(why, sizeof(why), "its range cannot widen: %s", nerr.msg);
	return finish(pl, c, NULL, why, p->now, err);
}

/* One step of one change point (see planner.h). */
static int bisect_one(struct planner *pl, struct pass *p, const struct change_point *c,
		      char (*range)[TREES_OID_HEX + 1], struct pg_err *err)
{
	const struct profile_tree *t = profile_find_tree(pl->ps, c->tree);
	const struct changes_key key = changes_key_of(c);
	struct changes_series s = { NULL, 0, 0 };
	struct pg_err rerr = PG_ERR_INIT;
	char mirror[TREES_PATH_MAX], why[CHANGES_TEXT_MAX];
	char before[TREES_OID_HEX + 1], after[TREES_OID_HEX + 1];
	struct bisect_point *pts = NULL;
	struct bisect_levels lv;
	struct bisect_in in;
	struct bisect_step st;
	size_t n = 0, n_pts = 0;
	long ib, ia;
	bool waiting;
	int rc = -1;

	if (run_waiting(pl->st, c->bisect_run_id, &waiting, err) < 0)
		return -1;
	if (waiting)
		return 0;
	if (!t)
		return finish(pl, c, NULL, "its tree is no longer in the profiles", p->now, err);
	if (planner_ensure_tree(p, t, err) < 0 ||
	    trees_mirror_path(pl->mirror_root, t->name, mirror, sizeof(mirror), err) < 0)
		return -1;
	if (pg_fmt(before, sizeof(before), "%s", c->before) < 0 ||
	    pg_fmt(after, sizeof(after), "%s", c->after) < 0)
		return finish(pl, c, NULL, "its commits are not commit ids", p->now, err);
	if (trees_first_parent_range(mirror, c->branch, before, after, range, BISECT_RANGE_MAX, &n,
				     &rerr) < 0) {
		if (rerr.code != PG_ENOTFOUND && rerr.code != PG_ETOOBIG && rerr.code != PG_EINVAL) {
			*err = rerr;
			return -1;
		}
		pg_fmt_cut(why, sizeof(why), "no range to bisect: %s", rerr.msg);
		return finish(pl, c, NULL, why, p->now, err);
	}

	/* The levels either side, from the history in git order. */
	if (changes_series_read(pl->st, &key, &s, err) < 0)
		goto out;
	changes_series_git_order(pl->mirror_root, c->tree, c->branch, &s);
	ib = changes_series_find(&s, before);
	ia = changes_series_find(&s, after);
	if (ib < 0 || ia < 0 || ib >= ia) {
		rc = finish(pl, c, NULL, "the history no longer holds both ends of its range", p->now,
			    err);
		goto out;
	}
	if (levels(&s, (size_t)ib, (size_t)ia, &lv, err) < 0)
		goto out;
	if (lv.wait) {
		rc = 0;
		goto out;
	}
	if (!lv.stands) {
		pg_fmt_cut(why, sizeof(why), "the step does not stand: %.4g before, %.4g after "
			   "(p=%.2g)", lv.before, lv.after, lv.p);
		rc = finish(pl, c, NULL, why, p->now, err);
		goto out;
	}
	/* The range's ends and the measured commits inside it decide how far
	 * it narrows or widens and what to measure next (bisect.h). */
	pts = malloc(n * sizeof(*pts));
	if (!pts) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	points(&s, range, n, pts, &n_pts);
	in = (struct bisect_in){
		.before = lv.before, .after = lv.after, .sigma = lv.sigma, .n_range = n,
		.pts = pts, .n_pts = n_pts,
		.end_before = { 0, s.c[ib].v, s.c[ib].n }, .end_after = { 0, s.c[ia].v, s.c[ia].n },
		.before_found = !strcmp(c->before, c->first_before),
		.after_found = !strcmp(c->after, c->first_after),
		.may_measure = c->bisect_runs < PLANNER_BISECT_MAX_RUNS,
	};
	if (bisect_step(&in, &st, err) < 0)
		goto out;
	if (st.next == BISECT_WIDEN_BEFORE || st.next == BISECT_WIDEN_AFTER) {
		rc = widen(pl, p, c, &s, (size_t)ib, (size_t)ia, st.next == BISECT_WIDEN_BEFORE,
			   err);
		goto out;
	}
	if (st.next == BISECT_MEASURE_BEFORE) {
		rc = measure(pl, p, c, before, before, after, n, err);
		goto out;
	}
	if (st.first > 0)
		memcpy(before, range[st.first - 1], sizeof(before));
	memcpy(after, range[st.last], sizeof(after));
	if (st.moved && narrow(pl, c, before, after, p->now, err) < 0)
		goto out;
	if (st.next == BISECT_LOCATED) {
		rc = finish(pl, c, after, n == 1 ? "adjacent commits" : "bisected", p->now, err);
		goto out;
	}
	if (c->bisect_runs >= PLANNER_BISECT_MAX_RUNS) {
		pg_fmt_cut(why, sizeof(why), "gave up after %lld baselines: %zu commits left between "
			   "%.12s and %.12s", (long long)c->bisect_runs, st.last + 1 - st.first, before,
			   after);
		rc = finish(pl, c, NULL, why, p->now, err);
		goto out;
	}
	rc = measure(pl, p, c, range[st.measure], before, after, st.last + 1 - st.first, err);
out:
	free(pts);
	changes_series_release(&s);
	return rc;
}

int planner_bisect_pass(struct planner *pl, struct pg_err *err)
{
	char (*range)[TREES_OID_HEX + 1] = NULL;
	struct change_point *cps = NULL;
	struct pass p;
	size_t n = 0;
	int rc = -1;

	if (planner_pass_init(&p, pl, err) < 0)
		goto out;
	range = calloc(BISECT_RANGE_MAX, sizeof(*range));
	if (!range) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (changes_list(pl->st, "suspected", 1000, &cps, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct pg_err e = PG_ERR_INIT;

		if (bisect_one(pl, &p, &cps[i], range, &e) == 0)
			continue;
		if (e.code == PG_EDB) {
			*err = e;
			goto out;
		}
		pg_log_warn(COMP, "change point %lld: %s", (long long)cps[i].id, e.msg);
		pl->stats.errors++;
	}
	rc = 0;
out:
	if (rc)
		pg_err_prefix(err, "bisection pass");
	free(cps);
	free(range);
	planner_pass_release(&p);
	return rc;
}
