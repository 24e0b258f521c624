/* SPDX-License-Identifier: MIT */
/*
 * The verdict pass: jobs, follow-ups, contexts, checks and mails (see
 * verdict_pass.h for the rules).  Each decision is one transaction.
 */
#include "verdict_pass.h"
#include "jobspec.h"
#include "verdict_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "fmt.h"
#include "json.h"
#include "log.h"
#include "outbox.h"
#include "report_mail.h"
#include "timeutil.h"
#include "vec.h"

/* Bytes of the lines one decision tells. */
#define VP_LINES_MAX (64 * 1024)

void verdict_pass_init(struct verdict_pass *vp, struct store *st, const struct profile_set *ps)
{
	memset(vp, 0, sizeof(*vp));
	vp->st = st;
	vp->ps = ps;
	vp->pin_wait_s = VERDICT_PIN_WAIT_S;
	vp->pin_max_wait_s = VERDICT_PIN_MAX_WAIT_S;
}

static int64_t vp_now(const struct verdict_pass *vp)
{
	return vp->now_s > 0 ? vp->now_s : pg_time_wall_ms() / 1000;
}

/* NaN and the infinities are stored as NULL. */
static struct store_arg real_or_null(double v)
{
	return isfinite(v) ? STORE_REAL(v) : STORE_NULL;
}

static void stats_add(struct verdict_pass_stats *to, const struct verdict_pass_stats *d)
{
	to->jobs_decided += d->jobs_decided;
	to->followups += d->followups;
	to->given_up += d->given_up;
	to->contexts_decided += d->contexts_decided;
	to->runs_done += d->runs_done;
	to->checks_queued += d->checks_queued;
	to->mails_queued += d->mails_queued;
	to->history_rows += d->history_rows;
	to->change_points += d->change_points;
	to->errors += d->errors;
}

/* "job 7 (run 3, CTX, release on lab-1)" */
static void job_name(const struct vp_job *j, char *out, size_t len)
{
	pg_fmt_cut(out, len, "job %lld (run %lld, %s, %s on %s)", (long long)j->id,
		   (long long)j->run_id, j->context, j->build_mode,
		   *j->host ? j->host : "(unknown)");
}

/* ---- contexts ----------------------------------------------------------- */

/* The jobs of (run, context) that are not cancelled, when every one of them
 * has its job verdict: their ids into *ids (malloc'd).  *n is 0 when the
 * context is not complete (or has no such job, or is decided already). */
static int context_jobs(struct store *st, int64_t run_id, const char *context, int64_t **ids,
			size_t *n, struct pg_err *err)
{
	static const char what[] = "list the jobs of a context";
	sqlite3_stmt *q = NULL;
	size_t cap = 0;
	bool complete = true;
	int64_t decided;
	int rc = -1, step;

	*ids = NULL;
	*n = 0;
	if (store_query_int(st, "look for a context verdict",
			    "SELECT count(*) FROM verdicts WHERE run_id = ?1 AND context = ?2"
			    " AND job_id IS NULL", STORE_ARGS(STORE_INT(run_id), STORE_TEXT(context)),
			    &decided, err) < 0)
		return -1;
	if (decided)
		return 0;
	if (store_prepare_cached(st, &q,
				 "SELECT j.id, EXISTS (SELECT 1 FROM verdicts v"
				 "  WHERE v.job_id = j.id"
				 " AND v.metric IS NULL AND v.benchmark IS NULL)"
				 " FROM jobs j WHERE j.run_id = ?1 AND j.context = ?2"
				 " AND j.state <> 'cancelled' ORDER BY j.id", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(run_id), STORE_TEXT(context)), what, err) < 0)
		goto out;
	while ((step = store_step(q, what, err)) == 1) {
		if (!sqlite3_column_int(q, 1))
			complete = false;
		if (PG_GROW(*ids, cap, *n + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(q, 0);
	}
	if (step < 0)
		goto out;
	if (!complete)
		*n = 0;
	rc = 0;
out:
	store_done(st, q);
	if (rc) {
		free(*ids);
		*ids = NULL;
		*n = 0;
	}
	return rc;
}

/* The run is done when every context that has a job not cancelled has
 * its verdict. */
static int finish_run(struct verdict_pass *vp, int64_t run_id, int64_t now,
		      struct pg_buf *lines, struct verdict_pass_stats *d, struct pg_err *err)
{
	int64_t open;
	bool finished;

	if (store_query_int(vp->st, "look for undecided contexts",
			    "SELECT count(*) FROM (SELECT context FROM jobs WHERE run_id = ?1"
			    " GROUP BY context HAVING sum(state <> 'cancelled') > 0) c"
			    " WHERE NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.run_id = ?1"
			    " AND v.context = c.context AND v.job_id IS NULL)",
			    STORE_ARGS(STORE_INT(run_id)), &open, err) < 0)
		return -1;
	if (open)
		return 0;
	if (sched_run_finish_tx(vp->st, run_id, now, &finished, err) < 0)
		return -1;
	if (finished) {
		d->runs_done++;
		vp_say(lines, "run %lld: done", (long long)run_id);
	}
	return 0;
}

/* The report's texts: each job's table, and its commands. */
static int context_texts(struct vp_job *jobs, size_t n, struct pg_buf *table,
			 struct pg_buf *repro, struct pg_err *err)
{
	for (size_t i = 0; i < n; i++) {
		if ((i && pg_buf_addch(table, '\n') < 0) || vp_job_table(&jobs[i], table, err) < 0)
			return -1;
		if ((i && pg_buf_addch(repro, '\n') < 0) || vp_job_reproduce(&jobs[i], repro, err) < 0)
			return -1;
	}
	return 0;
}

/*
 * Decide (run, context) when its jobs all have their verdicts, inside the
 * caller's transaction: the aggregate row, the check, the mail, the run's
 * state.  Does nothing when the context is not complete or decided.
 */
static int decide_context(struct verdict_pass *vp, int64_t run_id, const char *context,
			  int64_t now, struct pg_buf *lines, struct verdict_pass_stats *d,
			  struct pg_err *err)
{
	const struct profile_context *pc = vp->ps ? profile_find_context(vp->ps, context) : NULL;
	struct pg_buf table = PG_BUF_INIT(REPORT_MAIL_TEXT_MAX);
	struct pg_buf repro = PG_BUF_INIT(REPORT_MAIL_TEXT_MAX);
	struct verdict_job *outs = NULL;
	struct vp_job *jobs = NULL;
	struct verdict_context vc;
	const struct verdict_key *w;
	const char *state;
	unsigned int nq = 0, nm = 0;
	int64_t *ids = NULL;
	size_t n = 0;
	int rc = -1;

	if (context_jobs(vp->st, run_id, context, &ids, &n, err) < 0)
		goto out;
	if (!n) {
		rc = 0;
		goto out;
	}
	jobs = calloc(n, sizeof(*jobs));
	outs = calloc(n, sizeof(*outs));
	if (!jobs || !outs) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		int found = vp_job_load(vp->st, vp->ps, ids[i], &jobs[i], err);

		if (found == 0)
			pg_err_set(err, PG_ENOTFOUND, "job %lld vanished", (long long)ids[i]);
		if (found <= 0 || vp_job_eval(&jobs[i], true, err) < 0)
			goto out;
		outs[i] = jobs[i].out;
	}
	if (verdict_context_eval(outs, n, &vc, err) < 0)
		goto out;
	if (vc.state == VERDICT_PENDING) {
		pg_err_set(err, PG_EINVAL, "a final context verdict came out pending");
		goto out;
	}
	state = verdict_state_name(vc.state);
	w = vc.job ? vc.job->worst : NULL;
	if (store_run(vp->st, "record context verdict",
		      "INSERT INTO verdicts (run_id, context, job_id, effect, p, state, description,"
		      " created_at) VALUES (?1, ?2, NULL, ?3, ?4, ?5, ?6, ?7)",
		      STORE_ARGS(STORE_INT(run_id), STORE_TEXT(context),
				 real_or_null(w ? w->effect_pct : NAN), real_or_null(w ? w->p : NAN),
				 STORE_TEXT(state), STORE_TEXT(vc.description), STORE_INT(now)),
		      err) < 0)
		goto out;
	/* A baseline has no series to check and nobody to mail. */
	if (!jobs[0].baseline &&
	    outbox_queue_check_tx(vp->st, run_id, context, state, vc.description, NULL,
				  pc ? pc->post_to : PROFILE_POST_LAST_PATCH, now, &nq, err) < 0)
		goto out;
	/* A series already in the tree was not tested: as for a cancelled
	 * run (outbox.h), the check says so and no report is mailed. */
	if (!jobs[0].baseline && vp->mail && vp->mail->enabled &&
	    vc.why != VERDICT_WHY_ALREADY_APPLIED) {
		struct pg_err merr = PG_ERR_INIT;

		if (context_texts(jobs, n, &table, &repro, &merr) < 0) {
			if (merr.code != PG_ETOOBIG) {
				*err = merr;
				goto out;
			}
			/* A report is better than none. */
			pg_buf_reset(&table);
			pg_buf_reset(&repro);
			(void)pg_buf_printf(&table, "(the table is too large for a mail: "
					    "perfgate-controller run show %lld)\n", (long long)run_id);
		}
		if (outbox_queue_mail_tx(vp->st, vp->mail, run_id, context, state, vc.description,
					 pg_buf_str(&table), pg_buf_str(&repro), now * 1000, &nm,
					 &merr) < 0) {
			/* A mail the formatter refuses must not hold the verdict
			 * and its check back forever; a store error must. */
			if (merr.code != PG_EINVAL) {
				*err = merr;
				goto out;
			}
			pg_log_error(VP_LOG, "run %lld, %s: no report mail: %s", (long long)run_id,
				     context, merr.msg);
		}
	}
	d->contexts_decided++;
	d->checks_queued += nq;
	d->mails_queued += nm;
	vp_say(lines, "context %s of run %lld: %s: %s", context, (long long)run_id, state,
	       vc.description);
	if (finish_run(vp, run_id, now, lines, d, err) < 0)
		goto out;
	rc = 0;
out:
	for (size_t i = 0; jobs && i < n; i++)
		vp_job_release(&jobs[i]);
	free(jobs);
	free(outs);
	free(ids);
	pg_buf_release(&table);
	pg_buf_release(&repro);
	if (rc)
		pg_err_prefix(err, "context %s of run %lld", context, (long long)run_id);
	return rc;
}

/* ---- jobs ---------------------------------------------------------------- */

/* The verdict rows of a job decided final. */
static int store_job_rows(struct verdict_pass *vp, const struct vp_job *j, int64_t now,
			  struct pg_err *err)
{
	const struct verdict_key *w = j->out.worst;

	for (size_t i = 0; i < j->n_keys; i++) {
		const struct verdict_key *k = &j->vkeys[i];
		const char *state = vp_key_state(k->cls);

		if (!state)
			continue;
		if (store_run(vp->st, "record key verdict",
			      "INSERT INTO verdicts (run_id, context, job_id, benchmark, metric,"
			      " base_median, patched_median, n_base, n_patched, effect, p, state,"
			      " description, created_at)"
			      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
			      STORE_ARGS(STORE_INT(j->run_id), STORE_TEXT(j->context),
					 STORE_INT(j->id), STORE_TEXT(k->benchmark), STORE_TEXT(k->key),
					 real_or_null(k->base_median), real_or_null(k->patched_median),
					 STORE_INT((int64_t)k->n_base), STORE_INT((int64_t)k->n_patched),
					 real_or_null(k->effect_pct), real_or_null(k->p),
					 STORE_TEXT(state), STORE_TEXT(k->reason), STORE_INT(now)),
			      err) < 0)
			return -1;
	}
	if (store_run(vp->st, "record job verdict",
		      "INSERT INTO verdicts (run_id, context, job_id, n_base, n_patched, effect, p,"
		      " state, description, created_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8, ?9)",
		      STORE_ARGS(STORE_INT(j->run_id), STORE_TEXT(j->context), STORE_INT(j->id),
				 STORE_INT(j->repetitions_done),
				 real_or_null(w ? w->effect_pct : NAN), real_or_null(w ? w->p : NAN),
				 STORE_TEXT(verdict_state_name(j->out.state)),
				 STORE_TEXT(j->out.summary), STORE_INT(now)), err) < 0)
		return -1;
	/* The pin only matters while a follow-up waits. */
	return sched_job_unpin(vp->st, j->id, err);
}

static int spec_set(cJSON *spec, const char *name, cJSON *item)
{
	if (!item)
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(spec, name);
	if (!cJSON_AddItemToObject(spec, name, item)) {
		cJSON_Delete(item);
		return -1;
	}
	return 0;
}

/* Whether the host's agent can take a follow-up now. */
static int agent_usable(struct store *st, int64_t agent_id, bool *usable, struct pg_err *err)
{
	int64_t enabled = 0;
	struct pg_err e = PG_ERR_INIT;

	*usable = false;
	if (agent_id <= 0)
		return 0;
	if (store_query_int(st, "read agent", "SELECT enabled FROM agents WHERE id = ?1",
			    STORE_ARGS(STORE_INT(agent_id)), &enabled, &e) < 0) {
		if (e.code == PG_ENOTFOUND)
			return 0;
		*err = e;
		return -1;
	}
	*usable = enabled != 0;
	return 0;
}

/* Queue the job again for its next round, pinned to its host, one
 * priority above its own (from its first follow-up on), so that its agent
 * takes it before other work of that priority (sched.h): base runs per
 * side before it and reps in it; a rerun drops the samples measured so
 * far (JS_FROM_ATTEMPT).  detail says why, on the queue page and in
 * lines. */
static int queue_round(struct verdict_pass *vp, struct vp_job *j, int base, int reps,
		       bool rerun, const char *detail, struct pg_buf *lines, struct pg_err *err)
{
	char name[512];
	char *text = NULL;
	int rc = -1;

	if (spec_set(j->spec, JS_ROUND, cJSON_CreateNumber(j->round + 1)) < 0 ||
	    spec_set(j->spec, JS_REPETITION_BASE, cJSON_CreateNumber(base)) < 0 ||
	    spec_set(j->spec, JS_REPETITIONS, cJSON_CreateNumber(reps)) < 0 ||
	    (rerun &&
	     (spec_set(j->spec, JS_FROM_ATTEMPT, cJSON_CreateNumber((double)(j->attempt + 1))) < 0 ||
	      spec_set(j->spec, JS_RERUNS, cJSON_CreateNumber(j->reruns + 1)) < 0)) ||
	    spec_set(j->spec, JS_PIN_AGENT, cJSON_CreateString(j->host)) < 0 ||
	    !(text = pg_json_print(j->spec, false))) {
		pg_err_set(err, PG_ENOMEM, "next round's spec: out of memory");
		goto out;
	}
	if (sched_job_requeue_pinned_tx(vp->st, j->id, text, j->host_agent_id, detail,
					j->round == 0, err) < 0)
		goto out;
	job_name(j, name, sizeof(name));
	vp_say(lines, "%s: pending: %s", name, detail);
	rc = 0;
out:
	free(text);
	return rc;
}

/* A follow-up round: the runs per side the verdict asks for more. */
static int schedule_followup(struct verdict_pass *vp, struct vp_job *j, struct pg_buf *lines,
			     struct pg_err *err)
{
	char detail[VERDICT_DESC_MAX + 128];

	pg_fmt_cut(detail, sizeof(detail), "follow-up round %d: %d more run%s per side on %s (%s)",
		   j->round + 1, j->out.more_repetitions, j->out.more_repetitions == 1 ? "" : "s",
		   j->host, j->out.summary);
	return queue_round(vp, j, j->repetitions_done, j->out.more_repetitions, false, detail,
			   lines, err);
}

/* Job j as drift.h compares it: its host, commit and threshold, and
 * its gated keys with both sides (*keys: malloc'd, n of them). */
static int drift_input(const struct verdict_pass *vp, const struct vp_job *j,
		       struct drift_job *dj, struct drift_key **keys, size_t *n,
		       struct pg_err *err)
{
	*dj = (struct drift_job){
		.job_id = j->id, .host = j->host, .tree = j->tree, .branch = j->branch,
		.build_mode = j->build_mode, .commit = j->base_commit,
		.threshold_pct = j->params.threshold_pct, .drain = vp->drain_on_drift,
	};
	*n = 0;
	*keys = calloc(j->n_keys ? j->n_keys : 1, sizeof(**keys));
	if (!*keys)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	for (size_t i = 0; i < j->n_keys; i++) {
		struct drift_key *k = &(*keys)[*n];

		if (!j->vkeys[i].gated)
			continue;
		k->benchmark = j->keys[i].benchmark;
		k->metric = j->keys[i].metric;
		for (int side = 0; side < 2; side++) {
			k->v[side] = j->keys[i].v[side];
			k->n[side] = j->keys[i].n[side];
		}
		(*n)++;
	}
	return 0;
}

/* Verdicts that read the baseline: whether the job's base side lies
 * outside the host's own baselines of its base commit (drift.h). */
static int base_disturbed(struct verdict_pass *vp, const struct vp_job *j, bool *disturbed,
			  char *why, size_t len, struct pg_err *err)
{
	struct drift_job dj;
	struct drift_key *keys;
	size_t n;
	int rc;

	*disturbed = false;
	if (!*j->host)
		return 0;
	if (drift_input(vp, j, &dj, &keys, &n, err) < 0)
		return -1;
	rc = drift_base_disturbed(vp->st, &dj, keys, n, disturbed, why, len, err);
	free(keys);
	return rc;
}

/* Measure the job again instead of deciding on a round its host
 * disturbed: as many runs as it had, the next round's samples replacing
 * the earlier ones, at most VERDICT_MAX_RERUNS times. */
static int schedule_rerun(struct verdict_pass *vp, struct vp_job *j, const char *why,
			  struct pg_buf *lines, struct pg_err *err)
{
	char detail[VERDICT_DESC_MAX + 128];

	pg_fmt_cut(detail, sizeof(detail), "measured again (%d of %d): the host was disturbed: %s",
		   j->reruns + 1, VERDICT_MAX_RERUNS, why);
	return queue_round(vp, j, 0, j->repetitions_done > 0 ? j->repetitions_done
							     : j->spec_repetitions,
			   true, detail, lines, err);
}

/* Why a queued follow-up waits in vain, into why ("" when it does not). */
static int followup_stale(struct verdict_pass *vp, const struct vp_job *j, int64_t now,
			  char *why, size_t len, struct pg_err *err)
{
	static const char what[] = "read the pinned agent";
	sqlite3_stmt *q = NULL;
	int rc;

	*why = '\0';
	if (strcmp(j->state, "queued") || !j->pin_agent_id)
		return 0;
	rc = store_prepare_cached(vp->st, &q,
				  "SELECT name, enabled, coalesce(last_seen, 0) FROM agents WHERE id = ?1",
				  what, err);
	if (rc < 0 || store_bind(q, STORE_ARGS(STORE_INT(j->pin_agent_id)), what, err) < 0 ||
	    (rc = store_step(q, what, err)) < 0) {
		store_done(vp->st, q);
		return -1;
	}
	if (rc == 0) {
		pg_fmt_cut(why, len, "its agent is gone");
	} else {
		const char *name = (const char *)sqlite3_column_text(q, 0);
		int64_t seen = sqlite3_column_int64(q, 2);
		char when[PG_TIME_UTC_MAX] = "never";

		if (seen > 0)
			pg_time_format_utc(seen * 1000, 0, when, sizeof(when));
		if (!sqlite3_column_int(q, 1))
			pg_fmt_cut(why, len, "agent %s is disabled", name);
		else if (seen < now - vp->pin_wait_s)
			pg_fmt_cut(why, len, "agent %s not seen since %s", name, when);
		else if (j->last_ended > 0 && j->last_ended < now - vp->pin_max_wait_s)
			pg_fmt_cut(why, len, "agent %s did not take it within %lld s", name,
				   (long long)vp->pin_max_wait_s);
	}
	store_done(vp->st, q);
	return 0;
}

/* A baseline's gated keys against the host's earlier baselines of the
 * commit and its class's (drift.h). */
static int check_drift(struct verdict_pass *vp, const struct vp_job *j, int64_t now,
		       struct pg_buf *lines, struct pg_err *err)
{
	struct drift_job dj;
	struct drift_key *keys;
	size_t n;
	int rc;

	if (drift_input(vp, j, &dj, &keys, &n, err) < 0)
		return -1;
	rc = drift_check_tx(vp->st, &dj, keys, n, now, lines, NULL, err);
	free(keys);
	return rc;
}

/*
 * Decide job job_id in one transaction; give_up: a queued follow-up that
 * waits in vain (step 1).  Nothing happens when the job does not (or no
 * longer) need a decision.
 */
static int decide_job(struct verdict_pass *vp, int64_t job_id, bool give_up,
		      struct pg_buf *lines, struct verdict_pass_stats *d, struct pg_err *err)
{
	char name[512], why[512];
	struct vp_job j;
	bool usable, changed;
	int64_t now = vp_now(vp);
	int rc = -1, found;

	memset(&j, 0, sizeof(j));
	if (store_begin(vp->st, err) < 0)
		goto out;
	found = vp_job_load(vp->st, vp->ps, job_id, &j, err);
	if (found < 0)
		goto out;
	if (!found || !strcmp(j.run_state, "cancelled"))
		goto nothing;
	if (give_up) {
		if (followup_stale(vp, &j, now, why, sizeof(why), err) < 0)
			goto out;
		if (!*why)
			goto nothing;
		/* Done with what the earlier rounds measured. */
		if (sched_job_give_up_tx(vp->st, job_id,
					 j.eval_outcome ? j.eval_outcome : "infra-error", why, now,
					 &changed, err) < 0)
			goto out;
		if (!changed)
			goto nothing;
		job_name(&j, name, sizeof(name));
		vp_say(lines, "%s: follow-up round %d given up: %s", name, j.round, why);
		d->given_up++;
		vp_job_release(&j);
		if (vp_job_load(vp->st, vp->ps, job_id, &j, err) <= 0)
			goto out;
	}
	if ((strcmp(j.state, "done") && strcmp(j.state, "infra-error")) || j.has_verdict)
		goto nothing;
	if (vp_job_eval(&j, false, err) < 0)
		goto out;
	/* A base side far from the host's own baselines of the commit: the
	 * host, not the patch, moved; measure again rather than decide. */
	if (!j.baseline && j.reruns < VERDICT_MAX_RERUNS && !strcmp(j.state, "done")) {
		bool disturbed;

		if (base_disturbed(vp, &j, &disturbed, why, sizeof(why), err) < 0)
			goto out;
		if (disturbed) {
			if (agent_usable(vp->st, j.host_agent_id, &usable, err) < 0)
				goto out;
			if (usable) {
				if (schedule_rerun(vp, &j, why, lines, err) < 0)
					goto out;
				d->followups++;
				goto commit;
			}
			vp_say(lines, "job %lld: the host was disturbed (%s), and agent %s cannot "
			       "measure it again", (long long)job_id, why, j.host);
		}
	}
	/* A baseline measures the host's own noise at the context's
	 * repetitions: it decides on what it has, no follow-up. */
	if (j.out.state == VERDICT_PENDING && !j.baseline) {
		if (agent_usable(vp->st, j.host_agent_id, &usable, err) < 0)
			goto out;
		if (usable) {
			if (schedule_followup(vp, &j, lines, err) < 0)
				goto out;
			d->followups++;
			goto commit;
		}
		vp_say(lines, "job %lld: no follow-up: agent %s cannot take it", (long long)job_id,
		       j.host);
	}
	if (!j.final && vp_job_eval(&j, true, err) < 0)
		goto out;
	if (store_job_rows(vp, &j, now, err) < 0 ||
	    vp_history_add(vp->st, vp->ps, vp->mirror_root, &j, now, lines, &d->history_rows,
			   &d->change_points,
			   err) < 0)
		goto out;
	if (j.baseline && check_drift(vp, &j, now, lines, err) < 0)
		goto out;
	d->jobs_decided++;
	job_name(&j, name, sizeof(name));
	vp_say(lines, "%s: %s: %s", name, verdict_state_name(j.out.state), j.out.summary);
	if (decide_context(vp, j.run_id, j.context, now, lines, d, err) < 0)
		goto out;
commit:
	if (store_commit(vp->st, err) < 0)
		goto out;
	rc = 0;
	goto out;
nothing:
	rc = 0;
out:
	store_rollback(vp->st);
	vp_job_release(&j);
	if (rc)
		pg_err_prefix(err, "job %lld", (long long)job_id);
	return rc;
}

/* ---- the pass ------------------------------------------------------------ */

/* The end of one decision: counted and told, or, when it failed (rc < 0),
 * logged and counted as an error, its lines dropped: not fatal, the next
 * pass tries again. */
static void vp_account(struct verdict_pass *vp, int rc, const struct pg_err *e,
		       const struct verdict_pass_stats *d, struct pg_buf *lines)
{
	if (rc < 0) {
		pg_log_error(VP_LOG, "%s (tried again next pass)", e->msg);
		pg_buf_reset(lines);
		vp->stats.errors++;
		return;
	}
	stats_add(&vp->stats, d);
	vp_tell(lines, vp->report);
}

/* Run each job decision; a failure is counted and logged, not fatal. */
static void decide_jobs(struct verdict_pass *vp, const int64_t *ids, size_t n, bool give_up,
			struct pg_buf *lines)
{
	for (size_t i = 0; i < n; i++) {
		struct verdict_pass_stats d;
		struct pg_err e = PG_ERR_INIT;

		memset(&d, 0, sizeof(d));
		vp_account(vp, decide_job(vp, ids[i], give_up, lines, &d, &e), &e, &d, lines);
	}
}

/* Contexts whose jobs all have verdicts but that have none (a job cancelled
 * after the others were decided). */
static int decide_leftover_contexts(struct verdict_pass *vp, struct pg_buf *lines,
				    struct pg_err *err)
{
	static const char what[] = "list undecided contexts";
	struct { int64_t run; char *ctx; } *list = NULL;
	sqlite3_stmt *q = NULL;
	size_t n = 0, cap = 0;
	int rc = -1, step;

	if (store_prepare_cached(vp->st, &q,
				 "SELECT j.run_id, j.context FROM runs r"
				 " CROSS JOIN jobs j ON j.run_id = r.id"
				 " WHERE r.state IN ('planned', 'running')"
				 " AND (?1 = 0 OR j.run_id = ?1)"
				 " AND NOT EXISTS (SELECT 1 FROM verdicts v"
				 "  WHERE v.run_id = j.run_id"
				 "  AND v.context = j.context AND v.job_id IS NULL)"
				 " GROUP BY j.run_id, j.context"
				 " HAVING sum(j.state <> 'cancelled') > 0"
				 " AND sum(j.state <> 'cancelled' AND NOT EXISTS (SELECT 1"
				 "  FROM verdicts v"
				 "  WHERE v.job_id = j.id AND v.metric IS NULL"
				 "  AND v.benchmark IS NULL)) = 0"
				 " ORDER BY j.run_id, j.context", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(vp->run_id)), what, err) < 0)
		goto out;
	while ((step = store_step(q, what, err)) == 1) {
		if (PG_GROW(list, cap, n + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
			goto out;
		}
		list[n].run = sqlite3_column_int64(q, 0);
		list[n].ctx = strdup((const char *)sqlite3_column_text(q, 1));
		if (!list[n++].ctx) {
			pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
			goto out;
		}
	}
	if (step < 0)
		goto out;
	store_done(vp->st, q);
	q = NULL;
	for (size_t i = 0; i < n; i++) {
		struct verdict_pass_stats d;
		struct pg_err e = PG_ERR_INIT;

		int r;

		memset(&d, 0, sizeof(d));
		r = store_begin(vp->st, &e) < 0 ||
		    decide_context(vp, list[i].run, list[i].ctx, vp_now(vp), lines, &d, &e) < 0 ||
		    store_commit(vp->st, &e) < 0 ? -1 : 0;
		if (r < 0)
			store_rollback(vp->st);
		vp_account(vp, r, &e, &d, lines);
	}
	rc = 0;
out:
	store_done(vp->st, q);
	for (size_t i = 0; i < n; i++)
		free(list[i].ctx);
	free(list);
	return rc;
}

int verdict_pass_run(struct verdict_pass *vp, struct pg_err *err)
{
	struct pg_buf lines = PG_BUF_INIT(VP_LINES_MAX);
	int64_t *ids = NULL, now = vp_now(vp);
	size_t n = 0;
	int rc = -1;

	memset(&vp->stats, 0, sizeof(vp->stats));
	if (!vp->st || vp->pin_wait_s < 0 || vp->pin_max_wait_s < 0) {
		pg_err_set(err, PG_EINVAL, "verdict pass: no store, or negative waits");
		goto out;
	}
	/* A follow-up cancelled with its run (a newer version of the series)
	 * waits for nothing any more. */
	if (sched_job_unpin(vp->st, 0, err) < 0)
		goto out;
	/* 1. Follow-ups that wait in vain. */
	if (store_list_ids(vp->st, "list stale follow-ups",
			   "SELECT j.id FROM jobs j JOIN runs r ON r.id = j.run_id"
			   " LEFT JOIN agents ag ON ag.id = j.pin_agent_id"
			   " WHERE j.state = 'queued' AND j.pin_agent_id IS NOT NULL"
			   " AND r.state <> 'cancelled' AND (?1 = 0 OR j.run_id = ?1)"
			   " AND (ag.id IS NULL OR ag.enabled = 0"
			   "  OR coalesce(ag.last_seen, 0) < ?2 - ?3"
			   "  OR coalesce((SELECT max(a.ended_at) FROM attempts a"
			   "   WHERE a.job_id = j.id), j.created_at) < ?2 - ?4)"
			   " ORDER BY j.id",
			   STORE_ARGS(STORE_INT(vp->run_id), STORE_INT(now), STORE_INT(vp->pin_wait_s),
				      STORE_INT(vp->pin_max_wait_s)), &ids, &n, err) < 0)
		goto out;
	decide_jobs(vp, ids, n, true, &lines);
	free(ids);
	ids = NULL;
	/* 2. Jobs that ended without a verdict, in the runs still open (a run
	 * is done once all its verdicts are in); the runs first, by their
	 * partial index, so that the cost follows the open runs, not every
	 * job ever finished. */
	if (store_list_ids(vp->st, "list jobs to decide",
			   "SELECT j.id FROM runs r CROSS JOIN jobs j ON j.run_id = r.id"
			   " WHERE r.state IN ('planned', 'running')"
			   " AND j.state IN ('done', 'infra-error') AND (?1 = 0 OR j.run_id = ?1)"
			   " AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.job_id = j.id"
			   "  AND v.metric IS NULL AND v.benchmark IS NULL)"
			   " ORDER BY j.id",
			   STORE_ARGS(STORE_INT(vp->run_id)), &ids, &n, err) < 0)
		goto out;
	decide_jobs(vp, ids, n, false, &lines);
	/* 3. Contexts left undecided. */
	if (decide_leftover_contexts(vp, &lines, err) < 0)
		goto out;
	rc = 0;
out:
	free(ids);
	pg_buf_release(&lines);
	if (rc)
		pg_err_prefix(err, "verdict pass");
	return rc;
}

int verdict_pass_stats_print(const struct verdict_pass_stats *s, struct pg_buf *out)
{
	return pg_buf_printf(out, "jobs=%lu followups=%lu given_up=%lu contexts=%lu runs_done=%lu "
			     "checks=%lu mails=%lu history=%lu change_points=%lu errors=%lu\n",
			     s->jobs_decided, s->followups, s->given_up, s->contexts_decided,
			     s->runs_done, s->checks_queued, s->mails_queued, s->history_rows,
			     s->change_points, s->errors);
}
