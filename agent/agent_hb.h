/* SPDX-License-Identifier: MIT */
#ifndef AGENT_HB_H
#define AGENT_HB_H

/*
 * The heartbeat thread of one job: while the job runs, it posts
 * {"attempt", "stage", "progress"} to /jobs/ID/heartbeat every
 * heartbeat_s (the first one at once), which renews the lease and shows
 * the stage on the dashboard, and it turns the controller's answers into
 * a cancel flag that the runner polls:
 *
 *   200 {"cancel": true}   AGENT_CANCEL_CONTROLLER (superseded, admin)
 *   409                    AGENT_CANCEL_STALE (another attempt owns it)
 *   404                    AGENT_CANCEL_UNKNOWN (the controller lost it)
 *
 * After any of these it posts no more.  A heartbeat that fails (no
 * answer, 5xx, 401) is retried sooner than the next one is due, with
 * backoff; the job goes on meanwhile: the lease only expires at the
 * controller, which may still take the result (sched.h "Late work").
 *
 * What one heartbeat is, is pluggable (agent_hb_start_beat()): the
 * daemon posts it over HTTP (agent_hb_start()), `run-one` writes it as
 * a line on stdout (agent_stream.h).  The thread, its timing, retries
 * and cancel flag are the same for both.
 *
 * Threads and ownership.  The main thread owns the struct agent_hb; it
 * fills it with agent_hb_start(), which starts the thread, and ends it
 * with agent_hb_stop(), which joins the thread.  In between, the thread
 * owns `conn` (a clone of the main connection: libcurl handles are not
 * shared) and its own counters; the main thread only calls
 * agent_hb_set_stage() and agent_hb_cancelled().  Stage and progress are
 * under `lock`; the cancel and stop flags are atomics, so that the
 * runner's 100 ms polls and the request's abandon check take no lock.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent_conn.h"
#include "agent_job.h"
#include "agent_proto.h"
#include "err.h"

enum agent_cancel {
	AGENT_CANCEL_NONE = 0,
	AGENT_CANCEL_CONTROLLER,
	AGENT_CANCEL_STALE,
	AGENT_CANCEL_UNKNOWN,
};

/* "cancelled by the controller", "attempt is stale (409)", ... */
const char *agent_cancel_reason(enum agent_cancel c);

struct agent_hb;

/*
 * One heartbeat, on the heartbeat thread: report stage and progress.
 * Returns AGENT_ANS_OK (with *cancel true when the controller asked the
 * job to stop), AGENT_ANS_CONFLICT (stale attempt), AGENT_ANS_NOTFOUND
 * (unknown job), AGENT_ANS_STOPPED (no more heartbeats: the thread ends
 * quietly), or a failure class (AGENT_ANS_RETRY, AGENT_ANS_AUTH, ...)
 * retried with backoff; err says what failed.  `stop` says when the
 * thread is being stopped (for a beat that waits).
 */
typedef enum agent_answer (*agent_hb_beat_fn)(struct agent_hb *hb, void *arg,
					      const char *stage, int progress,
					      const struct agent_stop *stop, bool *cancel,
					      struct pg_err *err);

struct agent_hb {
	/* Read-only while the thread runs. */
	int64_t job_id;
	int64_t attempt;
	int64_t interval_ms;
	long timeout_ms;
	int64_t max_backoff_ms;

	agent_hb_beat_fn beat;
	void *beat_arg;

	/* The thread's, between start and stop (conn and resp: the HTTP
	 * beat's only). */
	struct agent_conn conn;
	struct pg_http_response resp;
	unsigned int sent;		/* heartbeats answered 200 */
	unsigned int failed;		/* heartbeats that failed */

	/* Shared. */
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* signalled on stop */
	char stage[AGENT_STAGE_MAX];	/* under lock */
	int progress;			/* under lock */
	atomic_bool stop;
	atomic_int cancel;		/* enum agent_cancel */

	pthread_t tid;
	bool running;
};

/*
 * Start heartbeating job (stage "start", progress 0) over a clone of
 * conn: every interval_ms, each request within timeout_ms, retries after
 * failures no later than the next beat and within max_backoff_ms.
 * Returns 0, or -1 (no thread runs; nothing to stop).
 */
int agent_hb_start(struct agent_hb *hb, const struct agent_conn *conn,
		   const struct agent_job *job, long timeout_ms, int64_t max_backoff_ms,
		   struct pg_err *err);

/*
 * The same with another kind of heartbeat: beat(hb, arg, ...) is called
 * on the thread every heartbeat_s (the first at once), retried after
 * failures within max_backoff_ms as above.  arg must outlive
 * agent_hb_stop().  Returns 0, or -1 (no thread runs).
 */
int agent_hb_start_beat(struct agent_hb *hb, agent_hb_beat_fn beat, void *arg,
			const struct agent_job *job, int64_t max_backoff_ms,
			struct pg_err *err);

/* Report a new stage (an agent_stage_ok() name) and progress (0..100,
 * clamped); the next heartbeat carries it. */
void agent_hb_set_stage(struct agent_hb *hb, const char *stage, int progress);

/* The cancel flag: AGENT_CANCEL_NONE while the job may go on.  Still
 * readable after agent_hb_stop() (and on a zeroed struct). */
enum agent_cancel agent_hb_cancelled(struct agent_hb *hb);

/* Stop the thread (abandoning a heartbeat in flight), join it and free
 * what it owned.  A no-op when not running. */
void agent_hb_stop(struct agent_hb *hb);

#endif
