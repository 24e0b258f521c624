/* SPDX-License-Identifier: MIT */
/* The heartbeat thread of a running job. */
#include "agent_hb.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "log.h"
#include "timeutil.h"

const char *agent_cancel_reason(enum agent_cancel c)
{
	switch (c) {
	case AGENT_CANCEL_NONE:
		return "not cancelled";
	case AGENT_CANCEL_CONTROLLER:
		return "cancelled by the controller";
	case AGENT_CANCEL_STALE:
		return "the controller says this attempt is stale (409)";
	case AGENT_CANCEL_UNKNOWN:
		return "the controller does not know the job (404)";
	}
	return "?";
}

static bool hb_should_stop(void *arg)
{
	struct agent_hb *hb = arg;

	return atomic_load(&hb->stop);
}

/* Sleep until the monotonic time `at_ms` or a stop; true when stopping.
 * Called with hb->lock held. */
static bool hb_wait_until(struct agent_hb *hb, int64_t at_ms)
{
	struct timespec ts;

	while (!atomic_load(&hb->stop) && pg_time_mono_ms() < at_ms) {
		ts.tv_sec = (time_t)(at_ms / 1000);
		ts.tv_nsec = (long)(at_ms % 1000) * 1000000L;
		pthread_cond_timedwait(&hb->wake, &hb->lock, &ts);
	}
	return atomic_load(&hb->stop);
}

/* Record a final answer: set the flag and say why, once. */
static void hb_cancel(struct agent_hb *hb, enum agent_cancel why, const char *detail)
{
	atomic_store(&hb->cancel, (int)why);
	if (why == AGENT_CANCEL_CONTROLLER)
		pg_log_info("heartbeat", "job %lld attempt %lld: %s: stopping it",
			    (long long)hb->job_id, (long long)hb->attempt,
			    agent_cancel_reason(why));
	else
		pg_log_warn("heartbeat", "job %lld attempt %lld: %s (%s): stopping work on it",
			    (long long)hb->job_id, (long long)hb->attempt,
			    agent_cancel_reason(why), detail);
}

/* The daemon's heartbeat: POST it over the thread's own connection. */
static enum agent_answer hb_http_beat(struct agent_hb *hb, void *arg, const char *stage,
				      int progress, const struct agent_stop *stop, bool *cancel,
				      struct pg_err *err)
{
	enum agent_answer ans;

	(void)arg;
	ans = agent_proto_heartbeat(&hb->conn, hb->job_id, hb->attempt, stage, progress,
				    hb->timeout_ms, stop, cancel, &hb->resp, err);
	if (ans == AGENT_ANS_AUTH) {
		struct pg_err terr = PG_ERR_INIT;

		/* A token replaced on disk is picked up before the retry. */
		if (agent_conn_reload_token(&hb->conn, &terr) < 0)
			pg_log_error("heartbeat", "%s", terr.msg);
	}
	return ans;
}

static void *hb_thread(void *arg)
{
	struct agent_hb *hb = arg;
	struct agent_stop stop = { hb_should_stop, hb };
	uint64_t rnd = (uint64_t)pg_time_wall_ms() ^ ((uint64_t)getpid() << 20) ^
		       (uint64_t)hb->job_id;
	unsigned int failures = 0;
	int64_t next = pg_time_mono_ms(), delay;

	for (;;) {
		struct pg_err err = PG_ERR_INIT;
		char stage[AGENT_STAGE_MAX];
		enum agent_answer ans;
		bool cancel = false;
		int progress;

		pthread_mutex_lock(&hb->lock);
		if (hb_wait_until(hb, next)) {
			pthread_mutex_unlock(&hb->lock);
			break;
		}
		memcpy(stage, hb->stage, sizeof(stage));
		progress = hb->progress;
		pthread_mutex_unlock(&hb->lock);

		ans = hb->beat(hb, hb->beat_arg, stage, progress, &stop, &cancel, &err);
		if (ans == AGENT_ANS_OK) {
			hb->sent++;
			failures = 0;
			pg_log_debug("heartbeat", "job %lld attempt %lld: %s %d%%",
				     (long long)hb->job_id, (long long)hb->attempt, stage, progress);
			if (cancel) {
				hb_cancel(hb, AGENT_CANCEL_CONTROLLER, "");
				break;
			}
			next = pg_time_mono_ms() + hb->interval_ms;
			continue;
		}
		if (ans == AGENT_ANS_STOPPED)
			break;
		if (ans == AGENT_ANS_CONFLICT) {
			hb_cancel(hb, AGENT_CANCEL_STALE, err.msg);
			break;
		}
		if (ans == AGENT_ANS_NOTFOUND) {
			hb_cancel(hb, AGENT_CANCEL_UNKNOWN, err.msg);
			break;
		}
		/* The job goes on; try again before the next beat is due, so
		 * that one lost heartbeat does not cost the lease. */
		hb->failed++;
		delay = agent_retry_delay_ms(ans, failures++, hb->max_backoff_ms, -1, &rnd);
		if (delay > hb->interval_ms)
			delay = hb->interval_ms;
		pg_log_warn("heartbeat", "job %lld attempt %lld: heartbeat failed: %s; "
			    "next try in %.1f s", (long long)hb->job_id, (long long)hb->attempt,
			    err.msg, (double)delay / 1000.0);
		next = pg_time_mono_ms() + delay;
	}
	return NULL;
}

/* Fill hb for job (conn and resp left empty); nothing to undo. */
static int hb_init(struct agent_hb *hb, agent_hb_beat_fn beat, void *arg,
		   const struct agent_job *job, long timeout_ms, int64_t max_backoff_ms,
		   struct pg_err *err)
{
	memset(hb, 0, sizeof(*hb));
	hb->job_id = job->id;
	hb->attempt = job->attempt;
	hb->interval_ms = job->heartbeat_s * 1000;
	hb->timeout_ms = timeout_ms;
	hb->max_backoff_ms = max_backoff_ms;
	hb->beat = beat;
	hb->beat_arg = arg;
	pg_http_response_init(&hb->resp);
	if (pg_fmt(hb->stage, sizeof(hb->stage), "start") < 0)
		return pg_err_set(err, PG_EINVAL, "heartbeat: stage name too long");
	atomic_init(&hb->stop, false);
	atomic_init(&hb->cancel, AGENT_CANCEL_NONE);
	return 0;
}

/* Start the thread of an initialised hb; on failure frees what hb holds. */
static int hb_launch(struct agent_hb *hb, struct pg_err *err)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&hb->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&hb->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (agent_thread_start(hb_thread, hb, false, &hb->tid, err) < 0) {
		pthread_mutex_destroy(&hb->lock);
		pthread_cond_destroy(&hb->wake);
		agent_conn_release(&hb->conn);
		pg_http_response_release(&hb->resp);
		pg_err_prefix(err, "heartbeat thread");
		return -1;
	}
	hb->running = true;
	return 0;
}

int agent_hb_start(struct agent_hb *hb, const struct agent_conn *conn,
		   const struct agent_job *job, long timeout_ms, int64_t max_backoff_ms,
		   struct pg_err *err)
{
	if (hb_init(hb, hb_http_beat, NULL, job, timeout_ms, max_backoff_ms, err) < 0 ||
	    agent_conn_clone(&hb->conn, conn, err) < 0)
		return -1;
	return hb_launch(hb, err);
}

int agent_hb_start_beat(struct agent_hb *hb, agent_hb_beat_fn beat, void *arg,
			const struct agent_job *job, int64_t max_backoff_ms,
			struct pg_err *err)
{
	if (hb_init(hb, beat, arg, job, 0, max_backoff_ms, err) < 0)
		return -1;
	return hb_launch(hb, err);
}

void agent_hb_set_stage(struct agent_hb *hb, const char *stage, int progress)
{
	if (!hb->running)
		return;
	if (progress < 0)
		progress = 0;
	if (progress > 100)
		progress = 100;
	pthread_mutex_lock(&hb->lock);
	/* agent_stage_ok() bounds the name below AGENT_STAGE_MAX, the size
	 * of hb->stage: never cut. */
	if (agent_stage_ok(stage))
		pg_fmt_cut(hb->stage, sizeof(hb->stage), "%s", stage);
	hb->progress = progress;
	pthread_mutex_unlock(&hb->lock);
}

enum agent_cancel agent_hb_cancelled(struct agent_hb *hb)
{
	return (enum agent_cancel)atomic_load(&hb->cancel);
}

void agent_hb_stop(struct agent_hb *hb)
{
	if (!hb->running)
		return;
	pthread_mutex_lock(&hb->lock);
	atomic_store(&hb->stop, true);
	pthread_cond_signal(&hb->wake);
	pthread_mutex_unlock(&hb->lock);
	pthread_join(hb->tid, NULL);
	pthread_mutex_destroy(&hb->lock);
	pthread_cond_destroy(&hb->wake);
	agent_conn_release(&hb->conn);
	pg_http_response_release(&hb->resp);
	hb->running = false;
}
