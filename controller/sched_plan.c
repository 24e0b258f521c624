/* SPDX-License-Identifier: MIT */
/*
 * Runs and rounds: the transitions of runs and jobs that the planner and
 * the verdict pass make, written here so that sched is the only writer of
 * its tables (sched.h).
 */
#include "sched.h"

#include <stdio.h>
#include <string.h>

int sched_run_add_tx(struct store *st, const struct sched_run_new *r, int64_t now,
		     int64_t *run_id, struct pg_err *err)
{
	bool baseline;

	*run_id = 0;
	if (!r || !r->reason || !r->tree || !r->branch || !r->base_commit || now < 0)
		return pg_err_set(err, PG_EINVAL, "create run: missing field");
	baseline = strcmp(r->reason, "baseline") == 0;
	if (baseline ? r->series_id != 0 || !r->trigger : r->series_id <= 0 || r->trigger)
		return pg_err_set(err, PG_EINVAL, "create run: a baseline has a trigger and no "
				  "series, any other run a series and no trigger");
	if (store_run(st, "create run",
		      "INSERT INTO runs (series_id, reason, recheck_id, tree, branch, base_commit,"
		      " state, created_at, trigger)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'planned', ?7, ?8)",
		      STORE_ARGS(baseline ? STORE_NULL : STORE_INT(r->series_id),
				 STORE_TEXT(r->reason),
				 r->recheck_id > 0 ? STORE_INT(r->recheck_id) : STORE_NULL,
				 STORE_TEXT(r->tree), STORE_TEXT(r->branch),
				 STORE_TEXT(r->base_commit), STORE_INT(now),
				 baseline ? STORE_TEXT(r->trigger) : STORE_NULL), err) < 0)
		return -1;
	*run_id = store_last_id(st);
	return 0;
}

int sched_job_add_tx(struct store *st, int64_t run_id, const char *context,
		     const char *host_class, const char *build_mode, const char *spec,
		     int64_t priority, int64_t now, int64_t *job_id, struct pg_err *err)
{
	if (job_id)
		*job_id = 0;
	if (run_id <= 0 || !context || !host_class || !build_mode || !spec || now < 0)
		return pg_err_set(err, PG_EINVAL, "create job: missing field");
	if (store_run(st, "create job",
		      "INSERT INTO jobs (run_id, context, host_class, build_mode, spec,"
		      " priority, state, created_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7)",
		      STORE_ARGS(STORE_INT(run_id), STORE_TEXT(context), STORE_TEXT(host_class),
				 STORE_TEXT(build_mode), STORE_TEXT(spec), STORE_INT(priority),
				 STORE_INT(now)), err) < 0)
		return -1;
	if (job_id)
		*job_id = store_last_id(st);
	return 0;
}

int sched_job_pin_tx(struct store *st, int64_t job_id, int64_t agent_id, struct pg_err *err)
{
	if (job_id <= 0 || agent_id <= 0)
		return pg_err_set(err, PG_EINVAL, "pin job: missing field");
	if (store_run(st, "pin job",
		      "UPDATE jobs SET pin_agent_id = ?2 WHERE id = ?1 AND state = 'queued'",
		      STORE_ARGS(STORE_INT(job_id), STORE_INT(agent_id)), err) < 0)
		return -1;
	if (store_changes(st) == 0)
		return pg_err_set(err, PG_ECONFLICT, "pin job %lld: not queued", (long long)job_id);
	return 0;
}

int sched_agent_id(struct store *st, const char *name, int64_t *id, struct pg_err *err)
{
	*id = 0;
	if (store_query_id(st, "look up agent", "SELECT id FROM agents WHERE name = ?1",
			   STORE_ARGS(STORE_TEXT(name)), id, err) < 0)
		return -1;
	return *id > 0;
}

int sched_run_finish_tx(struct store *st, int64_t run_id, int64_t now, bool *finished,
			struct pg_err *err)
{
	*finished = false;
	if (store_run(st, "finish run",
		      "UPDATE runs SET state = 'done', finished_at = ?2"
		      " WHERE id = ?1 AND state IN ('planned', 'running')",
		      STORE_ARGS(STORE_INT(run_id), STORE_INT(now)), err) < 0)
		return -1;
	*finished = store_changes(st) > 0;
	return 0;
}

int sched_job_requeue_pinned_tx(struct store *st, int64_t job_id, const char *spec,
				int64_t pin_agent_id, const char *detail, bool first_followup,
				struct pg_err *err)
{
	if (job_id <= 0 || !spec || pin_agent_id <= 0)
		return pg_err_set(err, PG_EINVAL, "queue follow-up: bad job, spec or agent");
	if (store_run(st, "queue follow-up",
		      "UPDATE jobs SET state = 'queued', spec = ?2, pin_agent_id = ?3, agent_id = NULL,"
		      " lease_expires = NULL, outcome = NULL, outcome_detail = ?4, finished_at = NULL,"
		      " stage = NULL, progress = NULL, stage_at = NULL,"
		      " priority = priority + ?5 WHERE id = ?1 AND state = 'done'",
		      STORE_ARGS(STORE_INT(job_id), STORE_TEXT(spec), STORE_INT(pin_agent_id),
				 detail ? STORE_TEXT(detail) : STORE_NULL,
				 STORE_INT(first_followup ? 1 : 0)), err) < 0)
		return -1;
	if (store_changes(st) != 1)
		return pg_err_set(err, PG_ECONFLICT, "queue follow-up: job %lld is not done",
				  (long long)job_id);
	return 0;
}

int sched_job_give_up_tx(struct store *st, int64_t job_id, const char *outcome,
			 const char *why, int64_t now, bool *changed, struct pg_err *err)
{
	*changed = false;
	if (!outcome || !why)
		return pg_err_set(err, PG_EINVAL, "give up follow-up: no outcome or reason");
	if (store_run(st, "give up follow-up",
		      "UPDATE jobs SET state = 'done', outcome = ?2, outcome_detail = ?3,"
		      " finished_at = ?4, pin_agent_id = NULL"
		      " WHERE id = ?1 AND state = 'queued'",
		      STORE_ARGS(STORE_INT(job_id), STORE_TEXT(outcome), STORE_TEXT(why),
				 STORE_INT(now)), err) < 0)
		return -1;
	*changed = store_changes(st) > 0;
	return 0;
}

int sched_job_unpin(struct store *st, int64_t job_id, struct pg_err *err)
{
	if (job_id > 0)
		return store_run(st, "clear pin",
				 "UPDATE jobs SET pin_agent_id = NULL"
				 " WHERE id = ?1 AND pin_agent_id IS NOT NULL",
				 STORE_ARGS(STORE_INT(job_id)), err);
	return store_run(st, "unpin cancelled jobs",
			 "UPDATE jobs SET pin_agent_id = NULL"
			 " WHERE pin_agent_id IS NOT NULL AND state = 'cancelled'", NULL, 0, err);
}

int sched_agent_enable(struct store *st, const char *name, bool enable, struct pg_err *err)
{
	if (!name)
		return pg_err_set(err, PG_EINVAL, "enable agent: no name");
	if (store_run(st, "enable agent", "UPDATE agents SET enabled = ?1 WHERE name = ?2",
		      STORE_ARGS(STORE_INT(enable ? 1 : 0), STORE_TEXT(name)), err) < 0)
		return -1;
	if (store_changes(st) == 0)
		return pg_err_set(err, PG_ENOTFOUND, "no agent named '%.64s'", name);
	return 0;
}
