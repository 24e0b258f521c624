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
#include "agent_hold.h"
#include "agent_job.h"
#include "agent_proto.h"
#include "agent_runner.h"
#include "agent_spool.h"
#include "fmt.h"
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
/* Stages of one job whose log offsets are kept; a job with more sends the
 * others' chunks without an offset. */
#define AGENT_LOG_STAGES 16
/* A series mbox: tries, and how long the controller may be away between
 * the first and the last (backoff capped at 10 s). */
#define AGENT_FETCH_TRIES 8
#define AGENT_FETCH_BACKOFF_MAX_MS 10000

struct agent {
	const struct agent_config *cfg;
	bool once;
	struct agent_spool spool;
	struct agent_facts facts;
	cJSON *labels;
	cJSON *facts_json;
	struct agent_conn conn;		/* the main thread's */
	struct pg_http_response resp;	/* scratch for conn */
	uint64_t rnd;
	unsigned int failures;		/* exchanges failed in a row */
	bool registered;
	/* The job holder and the HTTP link it talks through (agent_hold.h). */
	struct agent_hold hold;
	struct agent_link link;
	enum agent_answer last_ans;	/* of the last result offered */
	/* Where the next log chunk of each stage of the attempt at hand
	 * starts: the size the controller last said it holds (-1: not
	 * known, the chunk goes without an offset). */
	int64_t log_job, log_attempt;
	size_t n_log_pos;
	struct {
		char stage[AGENT_STAGE_MAX];
		int64_t bytes;
	} log_pos[AGENT_LOG_STAGES];
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

/*
 * Upload every spooled result, oldest first (agent_hold_flush() through
 * agent_link_offer()).  An upload in flight is finished even after a
 * first signal (it takes milliseconds, or request_timeout_s at worst, and
 * walking away would leave the controller's answer unknown); once
 * agent_term reaches `level` no further one starts.  Returns -1 on a
 * local failure (the spool), else 0 with *ans: AGENT_ANS_OK when the
 * spool has no result left, or the answer that stopped the upload (retry
 * later; AGENT_ANS_STOPPED).
 */
static int agent_flush(struct agent *a, int level, enum agent_answer *ans,
		       struct pg_err *err)
{
	enum agent_flush how;
	size_t sent;

	a->last_ans = AGENT_ANS_OK;
	if (agent_hold_flush(&a->hold, &agent_stop_at[level], &how, &sent, err) < 0)
		return -1;
	switch (how) {
	case AGENT_FLUSH_STOPPED:
		*ans = AGENT_ANS_STOPPED;
		break;
	case AGENT_FLUSH_LATER:
		*ans = a->last_ans;
		break;
	default:
		*ans = AGENT_ANS_OK;
		break;
	}
	return 0;
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

/* The HTTP link (agent_hold.h): the daemon's way of talking to the
 * controller. */
static int agent_link_hb_start(void *arg, struct agent_hb *hb, const struct agent_job *job,
			       struct pg_err *err)
{
	struct agent *a = arg;

	return agent_hb_start(hb, &a->conn, job, agent_timeout_ms(a),
			      a->cfg->max_backoff_s * 1000LL, err);
}

static const char *agent_link_abandoned(void *arg)
{
	(void)arg;
	return agent_term >= AGENT_LEVEL_JOB ? "the agent was stopped (a second SIGTERM or "
					       "SIGINT) before the job finished" : NULL;
}

/* The offset slot of stage in the attempt at hand (a new attempt's logs
 * start empty), or NULL when every slot is taken. */
static int64_t *agent_log_pos(struct agent *a, const struct agent_job *job, const char *stage)
{
	size_t i;

	if (a->log_job != job->id || a->log_attempt != job->attempt) {
		a->log_job = job->id;
		a->log_attempt = job->attempt;
		a->n_log_pos = 0;
	}
	for (i = 0; i < a->n_log_pos; i++)
		if (!strcmp(a->log_pos[i].stage, stage))
			return &a->log_pos[i].bytes;
	if (i == AGENT_LOG_STAGES || pg_fmt(a->log_pos[i].stage, AGENT_STAGE_MAX, "%s", stage) < 0)
		return NULL;
	a->n_log_pos++;
	a->log_pos[i].bytes = 0;
	return &a->log_pos[i].bytes;
}

/*
 * Upload a log chunk, tried AGENT_LOG_TRIES times, at the offset where the
 * controller's log of the stage ends: a try whose answer was lost after
 * the controller appended the chunk (or whose batch was undone after the
 * append) is then not appended twice.
 */
static void agent_link_log(void *arg, const struct agent_job *job,
			   const struct agent_stop *stop, const char *stage, const char *text,
			   size_t len)
{
	struct agent *a = arg;
	struct pg_err err = PG_ERR_INIT;
	enum agent_answer ans = AGENT_ANS_STOPPED;
	int64_t *pos = agent_log_pos(a, job, stage);
	int64_t at = pos ? *pos : -1, bytes;

	for (unsigned int i = 0; i < AGENT_LOG_TRIES; i++) {
		ans = agent_proto_log(&a->conn, job->id, job->attempt, stage, at, text, len,
				      agent_timeout_ms(a), stop, &bytes, &a->resp, &err);
		if (ans == AGENT_ANS_OK) {
			if (pos)
				*pos = bytes >= 0 ? bytes : at >= 0 ? at + (int64_t)len : -1;
			return;
		}
		if ((ans != AGENT_ANS_RETRY && ans != AGENT_ANS_AUTH) || i + 1 == AGENT_LOG_TRIES ||
		    agent_pause(agent_retry_delay_ms(AGENT_ANS_RETRY, i, 5000, -1, &a->rnd),
				AGENT_LEVEL_JOB))
			break;
	}
	/* Whether the controller holds it is not known now. */
	if (pos)
		*pos = -1;
	pg_log_warn("agent", "job %lld attempt %lld: a log chunk of stage '%s' (%zu bytes) "
		    "was not uploaded: %s", (long long)job->id, (long long)job->attempt,
		    stage, len, err.msg);
}

static int agent_link_fetch(void *arg, const struct agent_stop *stop, const char *url,
			    struct pg_buf *out, struct pg_err *err)
{
	struct agent *a = arg;
	enum agent_answer ans = AGENT_ANS_STOPPED;

	for (unsigned int i = 0; i < AGENT_FETCH_TRIES; i++) {
		ans = agent_proto_mbox(&a->conn, url, out->max, agent_timeout_ms(a), stop,
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

static int agent_link_offer(void *arg, int64_t job_id, int64_t attempt, const char *body,
			    size_t len, struct agent_offer_answer *o, struct pg_err *err)
{
	struct agent *a = arg;

	a->last_ans = agent_proto_result(&a->conn, job_id, attempt, body, len,
					 agent_timeout_ms(a), &agent_stop_at[AGENT_LEVEL_JOB],
					 o->status, sizeof(o->status), &a->resp, err);
	switch (a->last_ans) {
	case AGENT_ANS_OK:
		a->failures = 0;
		o->offer = AGENT_OFFER_ACKED;
		break;
	case AGENT_ANS_CONFLICT:
	case AGENT_ANS_NOTFOUND:
	case AGENT_ANS_REFUSED:
		pg_log_warn("agent", "job %lld attempt %lld: %s", (long long)job_id,
			    (long long)attempt, err->msg);
		o->offer = AGENT_OFFER_REFUSED;
		o->http_status = a->resp.status;
		o->answer = pg_buf_str(&a->resp.body);
		a->last_ans = AGENT_ANS_OK;
		break;
	default:
		o->offer = AGENT_OFFER_LATER;
		break;
	}
	return 0;
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

static int agent_link_deliver(void *arg, const struct agent_job *job, const char *body,
			      size_t len, enum agent_hold_end *end, struct pg_err *err)
{
	bool delivered;

	(void)job;
	(void)body;
	(void)len;
	/* The daemon delivers what its spool holds, this result included. */
	if (agent_deliver(arg, &delivered, err) < 0)
		return -1;
	*end = delivered ? AGENT_HOLD_DELIVERED : AGENT_HOLD_SPOOLED;
	return 0;
}

/*
 * Hold one leased job (json, taken) to its end (agent_hold_job()).
 * Returns -1 only on a local failure that should stop the daemon (the
 * spool cannot be written); *delivered says whether the job ended
 * acknowledged or cancelled.
 */
static int agent_run_job(struct agent *a, cJSON *json, bool *delivered, struct pg_err *err)
{
	enum agent_hold_end end;
	bool unreadable;

	*delivered = false;
	if (agent_hold_job(&a->hold, json, &end, &unreadable, err) < 0)
		return -1;
	*delivered = end == AGENT_HOLD_DELIVERED || end == AGENT_HOLD_CANCELLED;
	return 0;
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
	a.spool.lock_fd = -1;
	a.link = (struct agent_link){
		.hb_start = agent_link_hb_start, .abandoned = agent_link_abandoned,
		.log = agent_link_log, .fetch = agent_link_fetch, .deliver = agent_link_deliver,
		.offer = agent_link_offer, .arg = &a,
	};
	a.hold = (struct agent_hold){
		.spool = &a.spool, .facts = &a.facts, .runner = agent_hold_runner(cfg->runner),
		.work_dir = cfg->work_dir, .sandbox = &cfg->sandbox, .self_exe = a.self_exe,
		.apply = &cfg->apply, .max_build_slots = cfg->max_build_slots, .link = &a.link,
	};
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
