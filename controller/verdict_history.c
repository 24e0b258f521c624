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
#include "changes.h"
#include "fmt.h"
#include "stats.h"
#include "verdict_pass.h"

/* Search one series for a change point and record it (changes.h). */
static int detect(struct store *st, const char *mirror_root, const struct vp_job *j,
		  const struct vp_key *k, int64_t now, struct pg_buf *lines, unsigned long *changes,
		  struct pg_err *err)
{
	const struct changes_key key = { j->host, j->tree, j->branch, j->build_mode,
					 k->benchmark, k->metric };
	struct cp_params cp = { VERDICT_CP_MIN_POINTS, VERDICT_CP_ALPHA,
				cp_main_min_change(j->params.threshold_pct) };
	struct changes_series s = { NULL, 0, 0 };
	struct change_point c;
	char after[CHANGES_OID_MAX + 1];
	double x[CP_MAX_POINTS];
	size_t from = 0, n;
	struct cp_change ch;
	bool inserted;
	int rc = -1;

	if (changes_series_read(st, &key, &s, err) < 0 ||
	    changes_last_after(st, &key, after, sizeof(after), err) < 0)
		goto out;
	changes_series_git_order(mirror_root, j->tree, j->branch, &s);
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
	memset(&c, 0, sizeof(c));
	if (pg_fmt(c.host, sizeof(c.host), "%s", j->host) < 0 ||
	    pg_fmt(c.tree, sizeof(c.tree), "%s", j->tree) < 0 ||
	    pg_fmt(c.branch, sizeof(c.branch), "%s", j->branch) < 0 ||
	    pg_fmt(c.build_mode, sizeof(c.build_mode), "%s", j->build_mode) < 0 ||
	    pg_fmt(c.benchmark, sizeof(c.benchmark), "%s", k->benchmark) < 0 ||
	    pg_fmt(c.metric, sizeof(c.metric), "%s", k->metric) < 0 ||
	    pg_fmt(c.context, sizeof(c.context), "%s", j->context) < 0 ||
	    pg_fmt(c.before, sizeof(c.before), "%s", s.c[from + ch.split - 1].oid) < 0 ||
	    pg_fmt(c.after, sizeof(c.after), "%s", s.c[from + ch.split].oid) < 0) {
		rc = pg_err_set(err, PG_EINVAL, "change point: a name over %d bytes",
				CHANGES_TEXT_MAX);
		goto out;
	}
	c.effect = profile_key_higher_is_better(k->metric) ? ch.change_pct : -ch.change_pct;
	if (!isfinite(c.effect))
		c.effect = c.effect > 0 ? 1e9 : -1e9;
	c.p = ch.p;
	rc = changes_record_tx(st, &c, now, &inserted, err);
	if (rc == 0 && inserted) {
		(*changes)++;
		vp_say(lines, "%s on %s %s/%s %s: %s %s %+.1f%% (p=%.2g) between %.12s and %.12s",
		       c.effect < 0 ? "suspected main-branch regression" : "change point (better)",
		       j->host, j->tree, j->branch, j->build_mode, k->benchmark, k->metric, c.effect,
		       ch.p, c.before, c.after);
	}
out:
	changes_series_release(&s);
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
