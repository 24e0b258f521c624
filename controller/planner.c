/* SPDX-License-Identifier: MIT */
/* The planner: series and recheck requests to runs, jobs and pending
 * checks.  See planner.h for the rules and the job specification. */
#include "planner.h"
#include "planner_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fmt.h"
#include "json.h"
#include "log.h"
#include "outbox.h"
#include "recheck.h"
#include "sched.h"
#include "series.h"
#include "timeutil.h"
#include "trees.h"
#include "vec.h"

enum plan_result {
	PLAN_DONE,		/* planned (or nothing left to plan) */
	PLAN_WAIT,		/* held back: try again next pass */
	PLAN_FAIL,		/* error: logged, retried next pass */
};

void planner_note(struct notes *ns, const char *fmt, ...)
{
	va_list ap;

	/* Notes explain a job to people; past MAX_NOTES the log has them. */
	if (ns->n == MAX_NOTES)
		return;
	va_start(ap, fmt);
	pg_vfmt_cut(ns->text[ns->n++], NOTE_MAX, fmt, ap);
	va_end(ap);
}

static int64_t pass_now(const struct planner *pl)
{
	return pl->now_s ? pl->now_s : pg_time_wall_ms() / 1000;
}

int planner_url(const struct pass *p, char *out, size_t len, const char *what, int64_t id,
		const char *tail, struct pg_err *err)
{
	int n = snprintf(out, len, "%s%s%lld%s", p->base_url, what, (long long)id, tail);

	if (n < 0 || (size_t)n >= len)
		return pg_err_set(err, PG_EINVAL, "public URL '%.64s...' is too long", p->base_url);
	return 0;
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
		pg_fmt_cut(why, sizeof(why), "superseded by series %lld", (long long)newer);
	else
		pg_fmt_cut(why, sizeof(why), "superseded by a newer version");
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

	if (store_list_ids(pl->st, "find superseded work",
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
			  "SELECT id, number, files FROM patches WHERE series_id = ?1"
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
			  "SELECT project, title, state, version, total, completed_at, tags, "
			  SERIES_BASE_COMMIT_SQL " FROM series s WHERE id = ?1", what, err) < 0 ||
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
	if (pg_fmt(si->state, sizeof(si->state), "%s", state ? state : "") < 0) {
		pg_err_set(err, PG_EINVAL, "%s %lld: state '%.32s...' too long", what,
			   (long long)id, state);
		goto out;
	}
	si->version = sqlite3_column_int64(stmt, 3);
	si->total = sqlite3_column_int64(stmt, 4);
	si->completed_at = sqlite3_column_int64(stmt, 5);
	if (store_col_dup(stmt, 0, &si->project) < 0 || store_col_dup(stmt, 1, &si->title) < 0 ||
	    pg_strvec_split(&si->tags, (const char *)sqlite3_column_text(stmt, 6), ',') < 0 ||
	    store_col_dup(stmt, 7, &si->base_commit_raw) < 0) {
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
/* ---- planning one series ------------------------------------------------ */


/* The context's pending check, on the patches its final one will go to
 * (outbox.h). */
static int insert_checks(struct pass *p, const struct series_info *si, const struct group *g,
			 const struct profile_context *ctx, unsigned long *checks,
			 struct pg_err *err)
{
	char url[URL_MAX];
	unsigned int queued = 0;

	if (planner_url(p, url, sizeof(url), "/series/", si->id, "", err) < 0 ||
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
			if (planner_job_spec(p, si, g, reason, ctx, hc, bm, &spec, err) < 0 ||
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
	int64_t again = 0, priority = PLANNER_PRIORITY_SERIES, answered = 0;
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
	/* Requests recorded before this first run are answered by it. */
	if (!rq && n_groups &&
	    recheck_answer_by_first_run(st, si->id, groups[0].run_id, &answered, err) < 0)
		goto out;
	if (store_commit(st, err) < 0)
		goto out;
	if (answered)
		pg_log_info(COMP, "series %lld: %lld earlier recheck request(s) answered by its first"
			    " run %lld", (long long)si->id, (long long)answered,
			    (long long)groups[0].run_id);
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
	if (planner_collect_deps(p, si, &wait, &err) < 0)
		goto out;
	if (wait) {
		p->pl->stats.series_waiting++;
		res = PLAN_WAIT;
		goto out;
	}
	if (planner_group_contexts(p, si, rq, ctxs, n_ctx, slots, groups, &n_groups, &err) < 0)
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
		if (planner_resolve_group(p, si, rq, &groups[i], &err) < 0)
			goto out;
	if (dropped.len && pg_buf_printf(&why, "contexts not in the profiles: %.1000s",
					 pg_buf_str(&dropped)) < 0) {
		pg_buf_err(&why, &err, "the contexts a recheck names");
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

int planner_pass_init(struct pass *p, struct planner *pl, struct pg_err *err)
{
	size_t len;

	memset(p, 0, sizeof(*p));
	p->pl = pl;
	p->now = pass_now(pl);
	len = strlen(pl->public_url);
	while (len && pl->public_url[len - 1] == '/')
		len--;
	if (len >= sizeof(p->base_url))
		return pg_err_set(err, PG_EINVAL, "public URL '%.64s...' is too long",
				  pl->public_url);
	memcpy(p->base_url, pl->public_url, len);
	p->base_url[len] = '\0';
	p->trees = calloc(pl->ps->n_trees ? pl->ps->n_trees : 1, sizeof(*p->trees));
	if (!p->trees)
		return pg_err_set(err, PG_ENOMEM, "planner: out of memory");
	return 0;
}

void planner_pass_release(struct pass *p)
{
	free(p->trees);
	p->trees = NULL;
}

int planner_run(struct planner *pl, struct pg_err *err)
{
	struct pass p;
	struct recheck *rqs = NULL;
	int64_t *ids = NULL;
	size_t n_ids = 0, n_rqs = 0;
	int rc = -1;

	memset(&pl->stats, 0, sizeof(pl->stats));
	if (planner_pass_init(&p, pl, err) < 0)
		goto out;
	if (planner_cancel_superseded(pl, err) < 0)
		goto out;
	/* Without contexts there is nothing to plan a series for. */
	if (pl->ps->n_contexts &&
	    store_list_ids(pl->st, "list series to plan",
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
	planner_pass_release(&p);
	return rc;
}

int planner_stats_print(const struct planner_stats *s, struct pg_buf *out)
{
	return pg_buf_printf(out, "series=%lu runs=%lu jobs=%lu checks=%lu rechecks_planned=%lu "
			     "rechecks_ignored=%lu waiting=%lu deps_resolved=%lu deps_missing=%lu "
			     "cancelled=%lu trees_synced=%lu baselines=%lu errors=%lu\n",
			     s->series_planned, s->runs_created, s->jobs_created, s->checks_queued,
			     s->rechecks_planned, s->rechecks_ignored, s->series_waiting,
			     s->deps_resolved, s->deps_missing, s->jobs_cancelled,
			     s->trees_synced, s->baselines_planned, s->errors);
}
