/* SPDX-License-Identifier: MIT */
/* `run show ID`: a run's verdicts and before/after tables (verdict_pass.h). */
#include "verdict_pass.h"
#include "verdict_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "vec.h"

static int show_nomem(struct pg_err *err)
{
	return pg_err_set(err, PG_ENOMEM, "run show: out of memory or over the output's limit");
}

static int show_header(struct store *st, int64_t run_id, struct pg_buf *out, struct pg_err *err)
{
	static const char what[] = "read run";
	sqlite3_stmt *q = NULL;
	char *title = NULL;
	int rc;

	rc = store_prepare(st, &q,
			   "SELECT r.series_id, s.title, s.version, r.reason, r.tree, r.branch,"
			   " r.base_commit, r.state, r.trigger FROM runs r"
			   " LEFT JOIN series s ON s.id = r.series_id WHERE r.id = ?1", what, err);
	if (rc < 0 || store_bind(q, STORE_ARGS(STORE_INT(run_id)), what, err) < 0 ||
	    (rc = store_step(q, what, err)) < 0)
		goto fail;
	if (rc == 0) {
		pg_err_set(err, PG_ENOTFOUND, "no run %lld", (long long)run_id);
		goto fail;
	}
	if (sqlite3_column_type(q, 0) == SQLITE_NULL) {
		rc = pg_buf_printf(out, "run %lld: baseline (%s) of %s %s at %s, one build as both "
				   "sides: %s\n", (long long)run_id,
				   (const char *)sqlite3_column_text(q, 8),
				   (const char *)sqlite3_column_text(q, 4),
				   (const char *)sqlite3_column_text(q, 5),
				   (const char *)sqlite3_column_text(q, 6),
				   (const char *)sqlite3_column_text(q, 7));
		sqlite3_finalize(q);
		return rc < 0 ? show_nomem(err) : 0;
	}
	/* The title is a mail's subject: one line, whatever it holds. */
	title = pg_sanitize_dup((const char *)sqlite3_column_text(q, 1), PG_SAN_LINE);
	if (!title) {
		sqlite3_finalize(q);
		return show_nomem(err);
	}
	rc = pg_buf_printf(out, "run %lld: series %lld \"%s\" v%d (%s), %s %s at %s: %s\n",
			   (long long)run_id, (long long)sqlite3_column_int64(q, 0),
			   title, sqlite3_column_int(q, 2),
			   (const char *)sqlite3_column_text(q, 3),
			   (const char *)sqlite3_column_text(q, 4),
			   (const char *)sqlite3_column_text(q, 5),
			   (const char *)sqlite3_column_text(q, 6),
			   (const char *)sqlite3_column_text(q, 7));
	sqlite3_finalize(q);
	free(title);
	return rc < 0 ? show_nomem(err) : 0;
fail:
	sqlite3_finalize(q);
	return -1;
}

/* "STATE: DESCRIPTION" of the verdict row matching sql (bound to args),
 * or `none`. */
static int show_verdict(struct store *st, const char *sql, const struct store_arg *args,
			size_t nargs, const char *none, struct pg_buf *out, struct pg_err *err)
{
	static const char what[] = "read verdict";
	sqlite3_stmt *q = NULL;
	int rc;

	rc = store_prepare(st, &q, sql, what, err);
	if (rc < 0 || store_bind(q, args, nargs, what, err) < 0 ||
	    (rc = store_step(q, what, err)) < 0) {
		sqlite3_finalize(q);
		return -1;
	}
	rc = rc ? pg_buf_printf(out, "%s: %s\n", (const char *)sqlite3_column_text(q, 0),
				(const char *)sqlite3_column_text(q, 1)) :
		  pg_buf_printf(out, "%s\n", none);
	sqlite3_finalize(q);
	return rc < 0 ? show_nomem(err) : 0;
}

/* One job: its state, its stored verdict, its table so far.  Its
 * reproduce text goes to repro. */
static int show_job(struct store *st, const struct profile_set *ps, int64_t job_id,
		    struct pg_buf *out, struct pg_buf *repro, struct pg_err *err)
{
	struct vp_job j;
	int rc = -1;

	if (vp_job_load(st, ps, job_id, &j, err) <= 0)
		goto out;
	if (vp_job_eval(&j, j.has_verdict, err) < 0)
		goto out;
	if (pg_buf_printf(out, "\njob %lld: %s%s%s%s", (long long)j.id, j.state,
			  *j.outcome ? " (" : "", j.outcome, *j.outcome ? ")" : "") < 0)
		goto nomem;
	if (j.pin_agent_id && pg_buf_printf(out, ", follow-up round %d pinned to %s", j.round,
					    j.host) < 0)
		goto nomem;
	if (pg_buf_adds(out, "; verdict ") < 0)
		goto nomem;
	if (show_verdict(st, "SELECT state, description FROM verdicts WHERE id = ?1",
			 STORE_ARGS(STORE_INT(j.verdict_row)), "none yet", out, err) < 0)
		goto out;
	/* A job that has not ended without any round has nothing to show. */
	if (!j.n_rounds && strcmp(j.state, "done") && strcmp(j.state, "infra-error")) {
		if (pg_buf_adds(out, "(no results yet)\n") < 0)
			goto nomem;
	} else if (vp_job_table(&j, out, err) < 0) {
		goto out;
	}
	if ((repro->len && pg_buf_addch(repro, '\n') < 0) || vp_job_reproduce(&j, repro, err) < 0)
		goto out;
	rc = 0;
	goto out;
nomem:
	show_nomem(err);
out:
	vp_job_release(&j);
	return rc;
}

int verdict_run_show(struct store *st, const struct profile_set *ps, int64_t run_id,
		     struct pg_buf *out, struct pg_err *err)
{
	static const char what[] = "list jobs of a run";
	struct pg_buf repro = PG_BUF_INIT(out->max);
	struct { int64_t id; char *ctx; } *jobs = NULL;
	sqlite3_stmt *q = NULL;
	size_t n = 0, cap = 0;
	int rc = -1, step;

	if (show_header(st, run_id, out, err) < 0)
		goto out;
	if (store_prepare(st, &q, "SELECT id, context FROM jobs WHERE run_id = ?1"
			  " ORDER BY context, id", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(run_id)), what, err) < 0)
		goto out;
	while ((step = store_step(q, what, err)) == 1) {
		if (PG_GROW(jobs, cap, n + 1) < 0)
			goto nomem;
		jobs[n].id = sqlite3_column_int64(q, 0);
		jobs[n].ctx = strdup((const char *)sqlite3_column_text(q, 1));
		if (!jobs[n++].ctx)
			goto nomem;
	}
	if (step < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!i || strcmp(jobs[i].ctx, jobs[i - 1].ctx)) {
			if (pg_buf_printf(out, "\ncontext %s: ", jobs[i].ctx) < 0)
				goto nomem;
			if (show_verdict(st, "SELECT state, description FROM verdicts"
					 " WHERE run_id = ?1 AND context = ?2 AND job_id IS NULL",
					 STORE_ARGS(STORE_INT(run_id), STORE_TEXT(jobs[i].ctx)),
					 "undecided", out, err) < 0)
				goto out;
		}
		if (show_job(st, ps, jobs[i].id, out, &repro, err) < 0)
			goto out;
	}
	if (repro.len && (pg_buf_adds(out, "\nTo reproduce by hand:\n\n") < 0 ||
			  pg_buf_adds(out, pg_buf_str(&repro)) < 0))
		goto nomem;
	rc = 0;
	goto out;
nomem:
	show_nomem(err);
out:
	sqlite3_finalize(q);
	for (size_t i = 0; i < n; i++)
		free(jobs[i].ctx);
	free(jobs);
	pg_buf_release(&repro);
	return rc;
}
