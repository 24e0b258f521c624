/* SPDX-License-Identifier: MIT */
/* Holding a job and the spooled results, for every link (agent_hold.h). */
#include "agent_hold.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "runner_dpdk.h"

agent_runner_fn agent_hold_runner(const char *name)
{
	return strcmp(name, "builtin") == 0 ? agent_runner_builtin : agent_runner_dpdk;
}

/* The runner's hooks. */
static enum agent_cancel hold_cancel(struct agent_hold *h)
{
	enum agent_cancel c = h->hb ? agent_hb_cancelled(h->hb) : AGENT_CANCEL_NONE;

	if (c == AGENT_CANCEL_NONE && h->link->cancelled)
		c = h->link->cancelled(h->link->arg);
	return c;
}

static bool hold_stopped(void *arg)
{
	struct agent_hold *h = arg;

	return h->link->abandoned(h->link->arg) || hold_cancel(h) != AGENT_CANCEL_NONE;
}

static void hold_progress(void *arg, const char *stage, int percent)
{
	struct agent_hold *h = arg;

	agent_hb_set_stage(h->hb, stage, percent);
}

static void hold_log(void *arg, const char *stage, const char *text, size_t len)
{
	struct agent_hold *h = arg;
	struct agent_stop stop = { hold_stopped, h };

	h->link->log(h->link->arg, h->job, &stop, stage, text, len);
}

static int hold_fetch(void *arg, const char *url, struct pg_buf *out, struct pg_err *err)
{
	struct agent_hold *h = arg;
	struct agent_stop stop = { hold_stopped, h };

	return h->link->fetch(h->link->arg, &stop, url, out, err);
}

int agent_hold_spool_infra(struct agent_hold *h, int64_t job_id, int64_t attempt,
			   const char *detail, struct pg_err *err)
{
	struct agent_result res = AGENT_RESULT_INIT;
	char *body = NULL;
	int rc = -1;

	res.fingerprint = agent_fingerprint_host(h->facts, "none");
	if (!res.fingerprint || agent_result_set(&res, AGENT_OUTCOME_INFRA, "%s", detail) < 0) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	body = agent_result_body(attempt, &res, err);
	if (!body || agent_spool_write(h->spool, AGENT_SPOOL_RESULT, job_id, attempt, body,
				       strlen(body), err) < 0)
		goto out;
	rc = 0;
out:
	free(body);
	agent_result_release(&res);
	return rc;
}

int agent_hold_job(struct agent_hold *h, cJSON *json, enum agent_hold_end *end,
		   bool *unreadable, struct pg_err *err)
{
	struct agent_result res = AGENT_RESULT_INIT;
	struct pg_err jerr = PG_ERR_INIT;
	struct agent_job job;
	struct agent_hb hb;
	struct agent_run run = {
		.job = &job, .facts = h->facts, .work_dir = h->work_dir,
		.stopped = hold_stopped, .progress = hold_progress,
		.log = hold_log, .fetch = hold_fetch, .arg = h,
		.sandbox = h->sandbox, .self_exe = h->self_exe, .apply = h->apply,
		.max_build_slots = h->max_build_slots,
	};
	enum agent_cancel cancel;
	const char *abandoned;
	char *text = NULL, *body = NULL;
	int rc = -1, run_rc;

	*end = AGENT_HOLD_SPOOLED;
	*unreadable = false;
	memset(&hb, 0, sizeof(hb));
	if (agent_job_parse(json, &job, &jerr) < 0) {
		*unreadable = true;
		if (!job.id || !job.attempt) {
			pg_log_error("agent", "lease answer: %s: ignoring it (the lease expires "
				     "at the controller)", jerr.msg);
			*end = AGENT_HOLD_IGNORED;
			rc = 0;
			goto out;
		}
		pg_log_error("agent", "job %lld attempt %lld: %s: reporting infra-error",
			     (long long)job.id, (long long)job.attempt, jerr.msg);
		if (agent_result_set(&res, AGENT_OUTCOME_INFRA,
				     "the agent could not read the job: %s", jerr.msg) < 0)
			goto nomem;
		goto result;
	}
	/* Spooled before anything runs, so that a restart (or a --collect
	 * after a dropped connection) knows it held the attempt. */
	text = pg_json_print(job.json, false);
	if (!text)
		goto nomem;
	if (agent_spool_write(h->spool, AGENT_SPOOL_JOB, job.id, job.attempt, text,
			      strlen(text), err) < 0)
		goto out;
	pg_log_info("agent", "job %lld attempt %lld: leased; heartbeat every %lld s",
		    (long long)job.id, (long long)job.attempt, (long long)job.heartbeat_s);
	if (h->link->hb_start(h->link->arg, &hb, &job, &jerr) < 0) {
		if (agent_result_set(&res, AGENT_OUTCOME_INFRA, "%s", jerr.msg) < 0)
			goto nomem;
		goto result;
	}
	h->job = &job;
	h->hb = &hb;
	run_rc = h->runner(&run, &res, &jerr);
	if (run_rc == 0 && !agent_outcome_ok(res.outcome)) {
		pg_err_set(&jerr, PG_EINVAL, "the runner ended without a valid outcome");
		run_rc = -1;
	}
	agent_hb_stop(&hb);
	cancel = hold_cancel(h);
	h->job = NULL;
	h->hb = NULL;
	if (cancel != AGENT_CANCEL_NONE) {
		/* The controller has already moved on: no result. */
		pg_log_info("agent", "job %lld attempt %lld: ended without a result: %s",
			    (long long)job.id, (long long)job.attempt, agent_cancel_reason(cancel));
		if (agent_spool_remove(h->spool, AGENT_SPOOL_JOB, job.id, job.attempt, err) < 0)
			goto out;
		*end = AGENT_HOLD_CANCELLED;
		rc = 0;
		goto out;
	}
	if (run_rc > 0) {
		/* Stopped without a cancel: the link abandoned the job.  A
		 * runner that finished anyway keeps its result: the work is
		 * done and still worth reporting. */
		abandoned = h->link->abandoned(h->link->arg);
		agent_result_release(&res);
		if (agent_result_set(&res, AGENT_OUTCOME_INFRA, "%s",
				     abandoned ? abandoned : "the job was stopped before it "
				     "finished") < 0)
			goto nomem;
	} else if (run_rc < 0) {
		agent_result_release(&res);
		if (agent_result_set(&res, AGENT_OUTCOME_INFRA, "%s", jerr.msg) < 0)
			goto nomem;
	}
result:
	if (!res.fingerprint)
		res.fingerprint = agent_fingerprint_host(h->facts, "none");
	body = agent_result_body(job.attempt, &res, err);
	if (!body)
		goto out;
	/* Result first, job file second: a crash in between leaves both,
	 * and agent_hold_recover() then keeps the result. */
	if (agent_spool_write(h->spool, AGENT_SPOOL_RESULT, job.id, job.attempt, body,
			      strlen(body), err) < 0 ||
	    agent_spool_remove(h->spool, AGENT_SPOOL_JOB, job.id, job.attempt, err) < 0)
		goto out;
	pg_log_info("agent", "job %lld attempt %lld: outcome %s (%s); result spooled",
		    (long long)job.id, (long long)job.attempt, res.outcome,
		    res.detail ? res.detail : "");
	abandoned = h->link->abandoned(h->link->arg);
	if (abandoned) {
		pg_log_warn("agent", "job %lld attempt %lld: %s; the result stays in the spool",
			    (long long)job.id, (long long)job.attempt, abandoned);
		rc = 0;
		goto out;
	}
	rc = h->link->deliver(h->link->arg, &job, body, strlen(body), end, err);
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "out of memory");
out:
	free(text);
	free(body);
	agent_result_release(&res);
	agent_job_release(&job);
	return rc;
}

int agent_hold_recover(struct agent_hold *h, struct pg_err *err)
{
	struct agent_spool_entry *v = NULL;
	size_t n = 0;
	int rc = -1;

	if (agent_spool_list(h->spool, AGENT_SPOOL_JOB, &v, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		/* With a result next to it, the attempt had ended (the agent
		 * stopped between writing the result and removing the job
		 * file): keep that result. */
		if (!agent_spool_exists(h->spool, AGENT_SPOOL_RESULT, v[i].job_id,
					v[i].attempt)) {
			pg_log_warn("agent", "job %lld attempt %lld: held when the agent last "
				    "stopped, without a result: reporting it as infra-error",
				    (long long)v[i].job_id, (long long)v[i].attempt);
			if (agent_hold_spool_infra(h, v[i].job_id, v[i].attempt,
						   "the agent stopped (killed, crashed or "
						   "restarted) while it ran this attempt; its work "
						   "was lost", err) < 0)
				goto out;
		}
		if (agent_spool_remove(h->spool, AGENT_SPOOL_JOB, v[i].job_id, v[i].attempt,
				       err) < 0)
			goto out;
	}
	rc = 0;
out:
	free(v);
	return rc;
}

int agent_hold_settle(struct agent_hold *h, int64_t job_id, int64_t attempt,
		      const struct agent_offer_answer *ans, struct pg_err *err)
{
	switch (ans->offer) {
	case AGENT_OFFER_ACKED:
		pg_log_info("agent", "job %lld attempt %lld: result delivered (%s)",
			    (long long)job_id, (long long)attempt, ans->status);
		return agent_spool_remove(h->spool, AGENT_SPOOL_RESULT, job_id, attempt, err);
	case AGENT_OFFER_REFUSED:
		/* Sending the same bytes again cannot change the answer: keep
		 * the result for people, out of the upload queue. */
		pg_log_warn("agent", "job %lld attempt %lld: the controller refused the result "
			    "(%ld): %.200s; kept in %s/rejected/", (long long)job_id,
			    (long long)attempt, ans->http_status, ans->answer ? ans->answer : "",
			    h->spool->dir);
		if (!agent_spool_exists(h->spool, AGENT_SPOOL_RESULT, job_id, attempt))
			return 0;
		return agent_spool_reject(h->spool, job_id, attempt, ans->http_status,
					  ans->answer, err);
	case AGENT_OFFER_SENT:
	case AGENT_OFFER_LATER:
		break;
	}
	return 0;
}

int agent_hold_flush(struct agent_hold *h, const struct agent_stop *stop,
		     enum agent_flush *how, size_t *sent, struct pg_err *err)
{
	struct pg_buf body = PG_BUF_INIT(AGENT_SPOOL_FILE_MAX);
	struct agent_spool_entry *v = NULL;
	size_t n = 0;
	int rc = -1;

	*how = AGENT_FLUSH_EMPTY;
	*sent = 0;
	if (agent_hold_recover(h, err) < 0 ||
	    agent_spool_list(h->spool, AGENT_SPOOL_RESULT, &v, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct agent_offer_answer ans;

		if (stop && stop->fn(stop->arg)) {
			*how = AGENT_FLUSH_STOPPED;
			break;
		}
		pg_buf_reset(&body);
		if (agent_spool_read(h->spool, AGENT_SPOOL_RESULT, v[i].job_id, v[i].attempt,
				     &body, err) < 0) {
			if (err->code == PG_ENOTFOUND)
				continue;
			goto out;
		}
		memset(&ans, 0, sizeof(ans));
		if (h->link->offer(h->link->arg, v[i].job_id, v[i].attempt, pg_buf_str(&body),
				   body.len, &ans, err) < 0)
			goto out;
		if (ans.offer == AGENT_OFFER_LATER) {
			*how = AGENT_FLUSH_LATER;
			break;
		}
		if (ans.offer == AGENT_OFFER_SENT) {
			(*sent)++;
			*how = AGENT_FLUSH_SENT;
			continue;
		}
		if (agent_hold_settle(h, v[i].job_id, v[i].attempt, &ans, err) < 0)
			goto out;
	}
	rc = 0;
out:
	free(v);
	pg_buf_release(&body);
	return rc;
}
