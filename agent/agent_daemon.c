/* SPDX-License-Identifier: MIT */
/*
 * The agent daemon's life cycle (see agent_daemon.h): signals only set a
 * flag; this loop does the work.  Everything here runs on the main
 * thread, except the heartbeats of a running job (agent_hb.c) and the
 * helper threads that carry each request (agent_conn.c).
 */
#include "agent_daemon.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_conn.h"
#include "agent_facts.h"
#include "agent_hb.h"
#include "agent_job.h"
#include "agent_proto.h"
#include "agent_runner.h"
#include "agent_spool.h"
#include "runner_dpdk.h"
#include "fsutil.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "timeutil.h"

/* SIGTERM and SIGINT received, counted up to 2: 1 stops leasing (and an
 * idle wait), 2 abandons the job. */
static volatile sig_atomic_t agent_term;
static volatile sig_atomic_t agent_last_signal;

enum {
	AGENT_LEVEL_IDLE = 1,	/* walk away at the first signal */
	AGENT_LEVEL_JOB = 2,	/* only at the second */
};

#define AGENT_PAUSE_SLICE_MS 100
#define AGENT_LOG_TRIES 3
/* A series mbox: tries, and how long the controller may be away between
 * the first and the last (backoff capped at 10 s). */
#define AGENT_FETCH_TRIES 8
#define AGENT_FETCH_BACKOFF_MAX_MS 10000

struct agent {
	const struct agent_config *cfg;
	bool once;
	agent_runner_fn runner;
	struct agent_spool spool;
	struct agent_facts facts;
	cJSON *labels;
	cJSON *facts_json;
	struct agent_conn conn;		/* the main thread's */
	struct pg_http_response resp;	/* scratch for conn */
	uint64_t rnd;
	unsigned int failures;		/* exchanges failed in a row */
	bool registered;
	/* The job being run, for the runner's hooks. */
	const struct agent_job *job;
	struct agent_hb *hb;
	char self_exe[PATH_MAX];	/* for the workspace child */
};

static void agent_on_term(int sig)
{
	agent_last_signal = sig;
	if (agent_term < 2)
		agent_term = agent_term + 1;
}

static int agent_signals(struct pg_err *err)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = agent_on_term;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGINT);
	if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
		return pg_err_errno(err, "sigaction");
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) < 0 || sigaction(SIGHUP, &sa, NULL) < 0)
		return pg_err_errno(err, "sigaction SIGPIPE/SIGHUP");
	return 0;
}

static bool agent_stop_idle(void *arg)
{
	(void)arg;
	return agent_term >= AGENT_LEVEL_IDLE;
}

static bool agent_stop_job(void *arg)
{
	(void)arg;
	return agent_term >= AGENT_LEVEL_JOB;
}

static const struct agent_stop agent_stop_at[] = {
	[AGENT_LEVEL_IDLE] = { agent_stop_idle, NULL },
	[AGENT_LEVEL_JOB] = { agent_stop_job, NULL },
};

/* Sleep ms, in slices so that a signal is seen promptly whichever
 * thread it interrupted.  True when agent_term reached level. */
static bool agent_pause(int64_t ms, int level)
{
	int64_t end = pg_time_mono_ms() + ms, now;

	while ((now = pg_time_mono_ms()) < end) {
		if (agent_term >= level)
			return true;
		pg_sleep_ms(end - now < AGENT_PAUSE_SLICE_MS ? end - now : AGENT_PAUSE_SLICE_MS,
			    NULL);
	}
	return agent_term >= level;
}

static long agent_timeout_ms(const struct agent *a)
{
	return a->cfg->request_timeout_s * 1000L;
}

/*
 * A failed exchange: say so and wait before the next try (at most until
 * the monotonic deadline, when not 0).  After no answer or a 5xx the
 * agent registers again before anything else; after 401/403 it reads its
 * token file again.  Returns true when a signal (at `level`) ended the
 * wait or the answer was AGENT_ANS_STOPPED.
 */
static bool agent_trouble(struct agent *a, enum agent_answer ans, const struct pg_err *err,
			  int level, int64_t deadline)
{
	struct pg_err terr = PG_ERR_INIT;
	int64_t retry_after = -1, delay;
	int changed;

	if (ans == AGENT_ANS_STOPPED)
		return true;
	if (a->resp.retry_after.len)
		retry_after = pg_http_retry_after_ms(pg_buf_str(&a->resp.retry_after),
						     pg_time_wall_ms());
	delay = agent_retry_delay_ms(ans, a->failures, a->cfg->max_backoff_s * 1000LL,
				     retry_after, &a->rnd);
	if (a->failures < 64)
		a->failures++;
	if (deadline && delay > deadline - pg_time_mono_ms())
		delay = deadline > pg_time_mono_ms() ? deadline - pg_time_mono_ms() : 0;
	switch (ans) {
	case AGENT_ANS_AUTH:
		pg_log_error("agent", "%s: the controller refuses this agent: its token is wrong "
			     "or the agent is disabled; check token_file '%s' (read again before "
			     "the next try, in %.1f s)", err->msg,
			     a->cfg->token_file ? a->cfg->token_file : "(none configured)",
			     (double)delay / 1000.0);
		changed = agent_conn_reload_token(&a->conn, &terr);
		if (changed < 0)
			pg_log_error("agent", "%s", terr.msg);
		else if (changed)
			pg_log_info("agent", "token_file '%s' changed: using the new token",
				    a->cfg->token_file);
		break;
	case AGENT_ANS_RETRY:
		pg_log_warn("agent", "%s; next try in %.1f s", err->msg, (double)delay / 1000.0);
		a->registered = false;
		break;
	default:
		pg_log_error("agent", "%s; next try in %.1f s", err->msg, (double)delay / 1000.0);
		break;
	}
	return agent_pause(delay, level);
}

static enum agent_answer agent_register(struct agent *a, int level, struct pg_err *err)
{
	char name[256];
	char *labels;
	enum agent_answer ans;

	if (a->registered)
		return AGENT_ANS_OK;
	ans = agent_proto_register(&a->conn, a->labels, a->facts_json, agent_timeout_ms(a),
				   &agent_stop_at[level], name, sizeof(name), &a->resp, err);
	if (ans != AGENT_ANS_OK)
		return ans;
	a->registered = true;
	a->failures = 0;
	labels = pg_json_print(a->labels, false);
	pg_log_info("agent", "registered with %s as '%s', labels %s", a->cfg->controller_url,
		    name, labels ? labels : "?");
	free(labels);
	if (strcmp(name, a->cfg->name) != 0)
		pg_log_warn("agent", "the controller knows this agent's token as agent '%s'; "
			    "the configuration names it '%s'", name, a->cfg->name);
	return AGENT_ANS_OK;
}

/* Spool an infra-error result for an attempt that cannot finish. */
static int agent_spool_infra(struct agent *a, int64_t job_id, int64_t attempt,
			     const char *detail, struct pg_err *err)
{
	struct agent_result res = AGENT_RESULT_INIT;
	char *body = NULL;
	int rc = -1;

	res.fingerprint = agent_fingerprint_host(&a->facts, "none");
	if (!res.fingerprint || agent_result_set(&res, AGENT_OUTCOME_INFRA, "%s", detail) < 0) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	body = agent_result_body(attempt, &res, err);
	if (!body || agent_spool_write(&a->spool, AGENT_SPOOL_RESULT, job_id, attempt, body,
				       strlen(body), err) < 0)
		goto out;
	rc = 0;
out:
	free(body);
	agent_result_release(&res);
	return rc;
}

/*
 * Job files left in the spool: the agent held these attempts when it
 * stopped.  With a result next to it, the attempt had ended (the agent
 * stopped between writing the result and removing the job file);
 * without, its work is lost: say so now with infra-error rather than let
 * the controller wait for the lease to expire.
 */
static int agent_recover_jobs(struct agent *a, struct pg_err *err)
{
	struct agent_spool_entry *v = NULL;
	size_t n = 0;
	int rc = -1;

	if (agent_spool_list(&a->spool, AGENT_SPOOL_JOB, &v, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!agent_spool_exists(&a->spool, AGENT_SPOOL_RESULT, v[i].job_id,
					v[i].attempt)) {
			pg_log_warn("agent", "job %lld attempt %lld: held when the agent last "
				    "stopped, without a result: reporting it as infra-error",
				    (long long)v[i].job_id, (long long)v[i].attempt);
			if (agent_spool_infra(a, v[i].job_id, v[i].attempt,
					      "the agent stopped (killed, crashed or restarted) "
					      "while it ran this attempt; its work was lost",
					      err) < 0)
				goto out;
		}
		if (agent_spool_remove(&a->spool, AGENT_SPOOL_JOB, v[i].job_id, v[i].attempt,
				       err) < 0)
			goto out;
	}
	rc = 0;
out:
	free(v);
	return rc;
}

/*
 * Upload every spooled result, oldest first.  An upload in flight is
 * finished even after a first signal (it takes milliseconds, or
 * request_timeout_s at worst, and walking away would leave the
 * controller's answer unknown); once agent_term reaches `level` no
 * further one starts.  Returns -1 on a local failure (the spool), else 0
 * with *ans: AGENT_ANS_OK when the spool has no result left, or the
 * answer that stopped the upload (retry later; AGENT_ANS_STOPPED).
 */
static int agent_flush(struct agent *a, int level, enum agent_answer *ans,
		       struct pg_err *err)
{
	struct pg_buf body = PG_BUF_INIT(AGENT_SPOOL_FILE_MAX);
	struct agent_spool_entry *v = NULL;
	char status[AGENT_RESULT_STATUS_MAX];
	size_t n = 0;
	int rc = -1;

	*ans = AGENT_ANS_OK;
	if (agent_recover_jobs(a, err) < 0 ||
	    agent_spool_list(&a->spool, AGENT_SPOOL_RESULT, &v, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		long long id = (long long)v[i].job_id, att = (long long)v[i].attempt;
		struct pg_err rerr = PG_ERR_INIT;

		if (agent_term >= level) {
			*ans = AGENT_ANS_STOPPED;
			rc = 0;
			goto out;
		}
		pg_buf_reset(&body);
		if (agent_spool_read(&a->spool, AGENT_SPOOL_RESULT, v[i].job_id, v[i].attempt,
				     &body, err) < 0) {
			if (err->code == PG_ENOTFOUND)
				continue;
			goto out;
		}
		*ans = agent_proto_result(&a->conn, v[i].job_id, v[i].attempt, body.data,
					  body.len, agent_timeout_ms(a), &agent_stop_at[AGENT_LEVEL_JOB],
					  status, sizeof(status), &a->resp, err);
		switch (*ans) {
		case AGENT_ANS_OK:
			a->failures = 0;
			pg_log_info("agent", "job %lld attempt %lld: result delivered (%s)", id, att,
				    status);
			if (agent_spool_remove(&a->spool, AGENT_SPOOL_RESULT, v[i].job_id,
					       v[i].attempt, err) < 0)
				goto out;
			break;
		case AGENT_ANS_CONFLICT:
		case AGENT_ANS_NOTFOUND:
		case AGENT_ANS_REFUSED:
			/* Sending the same bytes again cannot change the answer:
			 * keep the result for people, out of the upload queue. */
			pg_log_warn("agent", "job %lld attempt %lld: the controller refused the "
				    "result: %s; kept in %s/rejected/", id, att, err->msg,
				    a->spool.dir);
			if (agent_spool_reject(&a->spool, v[i].job_id, v[i].attempt,
					       a->resp.status, pg_buf_str(&a->resp.body),
					       &rerr) < 0) {
				*err = rerr;
				goto out;
			}
			*ans = AGENT_ANS_OK;
			break;
		default:
			rc = 0;
			goto out;
		}
	}
	rc = 0;
out:
	free(v);
	pg_buf_release(&body);
	return rc;
}

/* Keep flushing until the spool is empty, a second signal, or `ms`
 * have passed.  *delivered says whether it emptied. */
static int agent_flush_for(struct agent *a, int64_t ms, bool *delivered, struct pg_err *err)
{
	int64_t deadline = pg_time_mono_ms() + ms;
	enum agent_answer ans;

	*delivered = false;
	for (;;) {
		if (agent_flush(a, AGENT_LEVEL_JOB, &ans, err) < 0)
			return -1;
		if (ans == AGENT_ANS_OK) {
			*delivered = true;
			return 0;
		}
		if (agent_term >= AGENT_LEVEL_JOB || pg_time_mono_ms() >= deadline ||
		    agent_trouble(a, ans, err, AGENT_LEVEL_JOB, deadline) ||
		    pg_time_mono_ms() >= deadline) {
			pg_log_warn("agent", "results not delivered stay in the spool %s for the "
				    "next start", a->spool.dir);
			return 0;
		}
	}
}

/* The runner's hooks. */
static bool agent_run_stopped(void *arg)
{
	struct agent *a = arg;

	return agent_term >= AGENT_LEVEL_JOB || agent_hb_cancelled(a->hb) != AGENT_CANCEL_NONE;
}

static void agent_run_progress(void *arg, const char *stage, int percent)
{
	struct agent *a = arg;

	agent_hb_set_stage(a->hb, stage, percent);
}

static void agent_run_log(void *arg, const char *stage, const char *text, size_t len)
{
	struct agent *a = arg;
	struct agent_stop stop = { agent_run_stopped, a };
	struct pg_err err = PG_ERR_INIT;
	enum agent_answer ans = AGENT_ANS_STOPPED;

	for (unsigned int i = 0; i < AGENT_LOG_TRIES; i++) {
		ans = agent_proto_log(&a->conn, a->job->id, a->job->attempt, stage, text, len,
				      agent_timeout_ms(a), &stop, &a->resp, &err);
		if (ans == AGENT_ANS_OK)
			return;
		if ((ans != AGENT_ANS_RETRY && ans != AGENT_ANS_AUTH) || i + 1 == AGENT_LOG_TRIES ||
		    agent_pause(agent_retry_delay_ms(AGENT_ANS_RETRY, i, 5000, -1, &a->rnd),
				AGENT_LEVEL_JOB))
			break;
	}
	pg_log_warn("agent", "job %lld attempt %lld: a log chunk of stage '%s' (%zu bytes) "
		    "was not uploaded: %s", (long long)a->job->id, (long long)a->job->attempt,
		    stage, len, err.msg);
}

static int agent_run_fetch(void *arg, const char *url, struct pg_buf *out, struct pg_err *err)
{
	struct agent *a = arg;
	struct agent_stop stop = { agent_run_stopped, a };
	enum agent_answer ans = AGENT_ANS_STOPPED;

	for (unsigned int i = 0; i < AGENT_FETCH_TRIES; i++) {
		ans = agent_proto_mbox(&a->conn, url, out->max, agent_timeout_ms(a), &stop,
				       &a->resp, err);
		if (ans == AGENT_ANS_OK) {
			pg_buf_reset(out);
			if (pg_buf_add(out, a->resp.body.data ? a->resp.body.data : "",
				       a->resp.body.len) < 0)
				return pg_err_set(err, PG_ETOOBIG, "mbox %s: %zu bytes, more than "
						  "%zu", url, a->resp.body.len, out->max);
			return 0;
		}
		if ((ans != AGENT_ANS_RETRY && ans != AGENT_ANS_AUTH) || i + 1 == AGENT_FETCH_TRIES ||
		    agent_pause(agent_retry_delay_ms(ans, i, AGENT_FETCH_BACKOFF_MAX_MS, -1,
						     &a->rnd), AGENT_LEVEL_JOB))
			break;
	}
	if (ans == AGENT_ANS_STOPPED)
		return pg_err_set(err, PG_ETIMEOUT, "mbox %s: stopped", url);
	return -1;
}

/*
 * Deliver the result just spooled.  The daemon at work tries once and
 * leaves retries to its loop; an agent about to exit (stopping, --once)
 * keeps trying for AGENT_STOP_UPLOAD_S.
 */
static int agent_deliver(struct agent *a, bool *delivered, struct pg_err *err)
{
	enum agent_answer ans;

	*delivered = false;
	if (agent_flush(a, AGENT_LEVEL_JOB, &ans, err) < 0)
		return -1;
	if (ans == AGENT_ANS_OK) {
		*delivered = true;
		return 0;
	}
	if (!agent_term && !a->once &&
	    !agent_trouble(a, ans, err, AGENT_LEVEL_IDLE, 0))
		return 0;
	if (agent_term >= AGENT_LEVEL_JOB)
		return 0;
	pg_log_info("agent", "uploading the result before exiting (for up to %d s)",
		    AGENT_STOP_UPLOAD_S);
	return agent_flush_for(a, AGENT_STOP_UPLOAD_S * 1000LL, delivered, err);
}

/*
 * Hold one leased job (json, taken) to its end.  Returns -1 only on a
 * local failure that should stop the daemon (the spool cannot be
 * written); *delivered says whether the job ended acknowledged or
 * cancelled.
 */
static int agent_run_job(struct agent *a, cJSON *json, bool *delivered, struct pg_err *err)
{
	struct agent_result res = AGENT_RESULT_INIT;
	struct pg_err jerr = PG_ERR_INIT;
	struct agent_job job;
	struct agent_hb hb;
	struct agent_run run = {
		.job = &job, .facts = &a->facts, .work_dir = a->cfg->work_dir,
		.stopped = agent_run_stopped, .progress = agent_run_progress,
		.log = agent_run_log, .fetch = agent_run_fetch, .arg = a,
		.sandbox = &a->cfg->sandbox, .self_exe = a->self_exe, .apply = &a->cfg->apply,
	};
	enum agent_cancel cancel;
	char *text = NULL, *body = NULL;
	int rc = -1, run_rc;

	*delivered = false;
	memset(&hb, 0, sizeof(hb));
	if (agent_job_parse(json, &job, &jerr) < 0) {
		if (!job.id || !job.attempt) {
			pg_log_error("agent", "lease answer: %s: ignoring it (the lease expires "
				     "at the controller)", jerr.msg);
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
	/* Spooled before anything runs, so that a restart knows it held the
	 * attempt. */
	text = pg_json_print(job.json, false);
	if (!text)
		goto nomem;
	if (agent_spool_write(&a->spool, AGENT_SPOOL_JOB, job.id, job.attempt, text,
			      strlen(text), err) < 0)
		goto out;
	pg_log_info("agent", "job %lld attempt %lld: leased; heartbeat every %lld s",
		    (long long)job.id, (long long)job.attempt, (long long)job.heartbeat_s);
	if (agent_hb_start(&hb, &a->conn, &job, agent_timeout_ms(a),
			   a->cfg->max_backoff_s * 1000LL, &jerr) < 0) {
		if (agent_result_set(&res, AGENT_OUTCOME_INFRA, "%s", jerr.msg) < 0)
			goto nomem;
		goto result;
	}
	a->job = &job;
	a->hb = &hb;
	run_rc = a->runner(&run, &res, &jerr);
	if (run_rc == 0 && !agent_outcome_ok(res.outcome)) {
		pg_err_set(&jerr, PG_EINVAL, "the runner ended without a valid outcome");
		run_rc = -1;
	}
	agent_hb_stop(&hb);
	a->job = NULL;
	a->hb = NULL;
	cancel = agent_hb_cancelled(&hb);
	if (cancel != AGENT_CANCEL_NONE) {
		/* The controller has already moved on: no result. */
		pg_log_info("agent", "job %lld attempt %lld: ended without a result: %s",
			    (long long)job.id, (long long)job.attempt, agent_cancel_reason(cancel));
		if (agent_spool_remove(&a->spool, AGENT_SPOOL_JOB, job.id, job.attempt, err) < 0)
			goto out;
		*delivered = true;
		rc = 0;
		goto out;
	}
	if (run_rc > 0) {
		agent_result_release(&res);
		if (agent_result_set(&res, AGENT_OUTCOME_INFRA,
				     "the agent was stopped (a second SIGTERM or SIGINT) before "
				     "the job finished") < 0)
			goto nomem;
	} else if (run_rc < 0) {
		agent_result_release(&res);
		if (agent_result_set(&res, AGENT_OUTCOME_INFRA, "%s", jerr.msg) < 0)
			goto nomem;
	}
result:
	if (!res.fingerprint)
		res.fingerprint = agent_fingerprint_host(&a->facts, "none");
	body = agent_result_body(job.attempt, &res, err);
	if (!body)
		goto out;
	/* Result first, job file second: a crash in between leaves both,
	 * and agent_recover_jobs() then keeps the result. */
	if (agent_spool_write(&a->spool, AGENT_SPOOL_RESULT, job.id, job.attempt, body,
			      strlen(body), err) < 0 ||
	    agent_spool_remove(&a->spool, AGENT_SPOOL_JOB, job.id, job.attempt, err) < 0)
		goto out;
	pg_log_info("agent", "job %lld attempt %lld: outcome %s (%s); result spooled",
		    (long long)job.id, (long long)job.attempt, res.outcome,
		    res.detail ? res.detail : "");
	if (agent_term >= AGENT_LEVEL_JOB) {
		pg_log_warn("agent", "job %lld attempt %lld: stopping now; the result stays in "
			    "the spool for the next start", (long long)job.id,
			    (long long)job.attempt);
		rc = 0;
		goto out;
	}
	rc = agent_deliver(a, delivered, err);
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

static int agent_loop(struct agent *a, struct pg_err *err)
{
	enum agent_answer ans;
	bool delivered;
	cJSON *job;

	while (!agent_term) {
		int64_t asked;

		job = NULL;
		ans = agent_register(a, AGENT_LEVEL_IDLE, err);
		if (ans == AGENT_ANS_OK && agent_flush(a, AGENT_LEVEL_IDLE, &ans, err) < 0)
			return -1;
		asked = pg_time_mono_ms();
		if (ans == AGENT_ANS_OK)
			ans = agent_proto_lease(&a->conn, a->cfg->lease_wait_s,
						(a->cfg->lease_wait_s + AGENT_LEASE_MARGIN_S) * 1000L,
						&agent_stop_at[AGENT_LEVEL_IDLE], &job, &a->resp, err);
		if (ans != AGENT_ANS_OK) {
			if (agent_trouble(a, ans, err, AGENT_LEVEL_IDLE, 0))
				break;
			continue;
		}
		a->failures = 0;
		if (job) {
			if (agent_run_job(a, job, &delivered, err) < 0)
				return -1;
		} else if (pg_time_mono_ms() - asked < 1000) {
			/* A controller that answers 204 at once must not turn
			 * the long-poll into a busy loop. */
			agent_pause(1000, AGENT_LEVEL_IDLE);
		}
	}
	return 0;
}

/* --once: see agent_daemon_run(). */
static int agent_once(struct agent *a, struct pg_err *err)
{
	int64_t deadline = pg_time_mono_ms() + a->cfg->lease_wait_s * 1000LL;
	enum agent_answer ans;
	bool delivered;
	cJSON *job;

	while (!agent_term) {
		int64_t left = deadline - pg_time_mono_ms();

		job = NULL;
		ans = agent_register(a, AGENT_LEVEL_IDLE, err);
		if (ans == AGENT_ANS_OK && agent_flush(a, AGENT_LEVEL_IDLE, &ans, err) < 0)
			goto fail;
		if (ans == AGENT_ANS_OK) {
			int wait_s = (int)((left + 999) / 1000);

			ans = agent_proto_lease(&a->conn, wait_s < 1 ? 1 : wait_s,
						((wait_s < 1 ? 1 : wait_s) + AGENT_LEASE_MARGIN_S) *
							1000L,
						&agent_stop_at[AGENT_LEVEL_IDLE], &job, &a->resp, err);
		}
		if (ans == AGENT_ANS_OK && job) {
			if (agent_run_job(a, job, &delivered, err) < 0)
				goto fail;
			return delivered ? AGENT_EXIT_OK : AGENT_EXIT_ERROR;
		}
		if (ans == AGENT_ANS_OK) {
			if (pg_time_mono_ms() >= deadline)
				break;
			continue;
		}
		if (ans == AGENT_ANS_STOPPED)
			break;
		if (pg_time_mono_ms() >= deadline) {
			pg_log_error("agent", "%s; giving up: no job within lease_wait_s (%d s)",
				     err->msg, a->cfg->lease_wait_s);
			return AGENT_EXIT_ERROR;
		}
		if (agent_trouble(a, ans, err, AGENT_LEVEL_IDLE, deadline))
			break;
	}
	pg_log_info("agent", "--once: no job came");
	return AGENT_EXIT_NO_JOB;
fail:
	pg_log_error("agent", "%s", err->msg);
	return AGENT_EXIT_ERROR;
}

static int agent_setup(struct agent *a, struct pg_err *err)
{
	const struct agent_config *cfg = a->cfg;
	unsigned int removed = 0;

	if (agent_spool_open(&a->spool, cfg->spool_dir, &removed, err) < 0)
		return -1;
	if (removed)
		pg_log_warn("agent", "spool %s: removed %u partly written file(s) left by a crash",
			    cfg->spool_dir, removed);
	if (ws_child_self_exe(a->self_exe, sizeof(a->self_exe), err) < 0 ||
	    pg_mkdir_p(cfg->work_dir, 0750, err) < 0 ||
	    agent_facts_gather(&a->facts, NULL, err) < 0)
		return -1;
	a->labels = agent_labels_json((const char *const *)cfg->label_keys,
				      (const char *const *)cfg->label_values, cfg->n_labels,
				      &a->facts);
	a->facts_json = agent_facts_to_json(&a->facts);
	if (!a->labels || !a->facts_json)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	if (!cfg->token_file)
		pg_log_warn("agent", "no token_file configured: the controller will refuse "
			    "this agent");
	return agent_conn_init(&a->conn, cfg->controller_url, cfg->token_file, err);
}

int agent_daemon_run(const struct agent_config *cfg, bool once)
{
	struct pg_err err = PG_ERR_INIT;
	struct agent a;
	bool http = false;
	int rc = AGENT_EXIT_ERROR;

	memset(&a, 0, sizeof(a));
	a.cfg = cfg;
	a.once = once;
	a.runner = strcmp(cfg->runner, "builtin") == 0 ? agent_runner_builtin : agent_runner_dpdk;
	a.spool.lock_fd = -1;
	a.rnd = (uint64_t)pg_time_wall_ms() ^ ((uint64_t)getpid() << 32);
	pg_http_response_init(&a.resp);
	agent_term = 0;

	if (agent_signals(&err) < 0 || pg_http_global_init(&err) < 0)
		goto out;
	http = true;
	if (agent_setup(&a, &err) < 0)
		goto out;
	pg_log_info("agent", "agent '%s' starting for %s: %s %s, %s, %u cores, %u NUMA "
		    "node(s), %llu MiB, kernel %s; spool %s", cfg->name, cfg->controller_url,
		    a.facts.cpu.vendor, a.facts.cpu.model, a.facts.arch, a.facts.cores,
		    a.facts.numa_nodes, (unsigned long long)(a.facts.memory_kb / 1024),
		    a.facts.kernel, cfg->spool_dir);
	if (once) {
		/* It says itself what went wrong. */
		rc = agent_once(&a, &err);
	} else {
		if (agent_loop(&a, &err) < 0)
			goto out;
		rc = AGENT_EXIT_OK;
	}
	if (agent_term)
		pg_log_info("agent", "stopping on signal %d", (int)agent_last_signal);
	pg_err_clear(&err);
out:
	if (err.msg[0])
		pg_log_error("agent", "%s", err.msg);
	cJSON_Delete(a.labels);
	cJSON_Delete(a.facts_json);
	agent_conn_release(&a.conn);
	pg_http_response_release(&a.resp);
	agent_spool_close(&a.spool);
	if (agent_conn_abandoned() > 0) {
		/* A helper thread is still inside libcurl with a request we
		 * walked away from: no exit handler may run under it. */
		fflush(NULL);
		_exit(rc);
	}
	if (http)
		pg_http_global_cleanup();
	return rc;
}
