/* SPDX-License-Identifier: MIT */
#ifndef AGENT_HOLD_H
#define AGENT_HOLD_H

/*
 * Holding a leased job to its end, and the spool's results until the
 * controller takes them: the one code path of the daemon (agent_daemon.h,
 * over HTTP) and of `perfgate-agent run-one` (agent_runone.h, over lines
 * on stdin/stdout).  What differs between the two is the link: how a job
 * talks to the controller (struct agent_link).  What is the same is here:
 *
 *   job        spool job-ID-ATTEMPT.json, start the heartbeat thread, run
 *              the runner on the calling thread with hooks (stopped,
 *              progress, log, fetch), stop the heartbeats; a job the
 *              controller cancelled (or declared stale or unknown) ends
 *              without a result; else spool result-ID-ATTEMPT.json (the
 *              exact bytes every delivery sends: agent_result_body()),
 *              remove the job file, and hand the result to the link.
 *   recover    job files without a result (an attempt a crash, a kill or
 *              a dropped connection interrupted) become infra-error
 *              results.
 *   flush      every spooled result, oldest first, is offered through the
 *              link; acknowledged ones are removed, refused ones moved to
 *              the spool's rejected/ (agent_hold_settle()).
 *
 * Threads: every function runs on the thread that owns the holder; the
 * link's heartbeat runs on the heartbeat thread (agent_hb.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "agent_conn.h"
#include "agent_facts.h"
#include "agent_hb.h"
#include "agent_job.h"
#include "agent_proto.h"
#include "agent_runner.h"
#include "agent_spool.h"
#include "buf.h"
#include "err.h"

/* How the controller answered a result offered to it. */
enum agent_offer {
	AGENT_OFFER_ACKED,	/* recorded, duplicate, acknowledged: remove it */
	AGENT_OFFER_REFUSED,	/* refused for good: move it to rejected/ */
	AGENT_OFFER_SENT,	/* sent; the answer comes later (agent_hold_settle()) */
	AGENT_OFFER_LATER,	/* not delivered now (controller away, stopping):
				 * keep it and stop this flush */
};

struct agent_offer_answer {
	enum agent_offer offer;
	char status[AGENT_RESULT_STATUS_MAX];	/* ACKED: the controller's "status" */
	long http_status;			/* REFUSED: 409, 404, ... */
	const char *answer;			/* REFUSED: its answer, kept next to it
						 * (borrowed; may be NULL) */
};

/* How a held job ended. */
enum agent_hold_end {
	AGENT_HOLD_DELIVERED,	/* its result was acknowledged or refused (settled) */
	AGENT_HOLD_CANCELLED,	/* the controller moved on: no result */
	AGENT_HOLD_SPOOLED,	/* its result stays spooled for a later flush */
	AGENT_HOLD_IGNORED,	/* unreadable without an id and attempt: nothing
				 * to report (the lease expires at the controller) */
};

/*
 * A link: every operation gets `arg`.  `stop` (where given) is the
 * holder's stop predicate: true once the job must end (a cancel, or the
 * link's abandoned()).
 */
struct agent_link {
	/* Start the job's heartbeats into hb (agent_hb_start() or
	 * agent_hb_start_beat()).  0, or -1 with err: the job is then
	 * reported as infra-error with err's message. */
	int (*hb_start)(void *arg, struct agent_hb *hb, const struct agent_job *job,
			struct pg_err *err);
	/* A cancel the link learnt of besides the heartbeat answers (the
	 * stream's "cancel" line); NULL when it has none. */
	enum agent_cancel (*cancelled)(void *arg);
	/* NULL while the job may go on; else why it must be abandoned (the
	 * detail of the infra-error result spooled for it, e.g. a second
	 * SIGTERM, a dropped connection).  An abandoned job's result is
	 * spooled but not delivered. */
	const char *(*abandoned)(void *arg);
	/* The runner's log and fetch hooks (agent_runner.h). */
	void (*log)(void *arg, const struct agent_job *job, const struct agent_stop *stop,
		    const char *stage, const char *text, size_t len);
	int (*fetch)(void *arg, const struct agent_stop *stop, const char *url,
		     struct pg_buf *out, struct pg_err *err);
	/* The result of job is spooled (body, the spooled bytes): deliver
	 * it, settling it with agent_hold_settle() when answered.  Sets
	 * *end to AGENT_HOLD_DELIVERED or AGENT_HOLD_SPOOLED.  -1 only on a
	 * local failure (the spool). */
	int (*deliver)(void *arg, const struct agent_job *job, const char *body, size_t len,
		       enum agent_hold_end *end, struct pg_err *err);
	/* Offer one spooled result (agent_hold_flush()).  Fills *ans; -1
	 * only when the link itself failed (err). */
	int (*offer)(void *arg, int64_t job_id, int64_t attempt, const char *body, size_t len,
		     struct agent_offer_answer *ans, struct pg_err *err);
	void *arg;
};

struct agent_hold {
	/* Set by the owner; borrowed. */
	struct agent_spool *spool;
	const struct agent_facts *facts;
	agent_runner_fn runner;
	const char *work_dir;
	const struct sandbox_cfg *sandbox;
	const char *self_exe;
	const struct ws_child_cfg *apply;
	int max_build_slots;		/* 0: SLOTS_MAX_DEFAULT */
	const struct agent_link *link;

	/* agent_hold_job()'s, while a job runs. */
	const struct agent_job *job;
	struct agent_hb *hb;
};

/* The runner a configuration's "runner" names ("builtin", else DPDK). */
agent_runner_fn agent_hold_runner(const char *name);

/*
 * Hold one leased job (json, the lease answer's "job" object; taken) to
 * its end as described above.  *end says how it ended; *unreadable
 * whether agent_job_parse() refused it (reported as infra-error when it
 * had an id and attempt).  Returns -1 only on a local failure that
 * should stop the agent (the spool cannot be written).
 */
int agent_hold_job(struct agent_hold *h, cJSON *json, enum agent_hold_end *end,
		   bool *unreadable, struct pg_err *err);

/* Spool an infra-error result with detail for an attempt that cannot
 * finish (a host fingerprint, no samples).  0 or -1. */
int agent_hold_spool_infra(struct agent_hold *h, int64_t job_id, int64_t attempt,
			   const char *detail, struct pg_err *err);

/*
 * Job files left in the spool: attempts held when the agent last
 * stopped.  One without a result becomes an infra-error result ("the
 * agent stopped ... its work was lost"); the job file is removed.  0 or
 * -1.
 */
int agent_hold_recover(struct agent_hold *h, struct pg_err *err);

enum agent_flush {
	AGENT_FLUSH_EMPTY,	/* every result was settled: none is left */
	AGENT_FLUSH_SENT,	/* all offered; *sent of them await their answer */
	AGENT_FLUSH_LATER,	/* an offer said later: the rest stays */
	AGENT_FLUSH_STOPPED,	/* stop said so before an offer */
};

/*
 * agent_hold_recover(), then offer every spooled result, oldest first,
 * through link->offer and settle the answers.  stop (may be NULL) is
 * polled before each offer.  *sent counts AGENT_OFFER_SENT answers.
 * Returns 0 with *how, or -1 on a local failure (the spool, the link).
 */
int agent_hold_flush(struct agent_hold *h, const struct agent_stop *stop,
		     enum agent_flush *how, size_t *sent, struct pg_err *err);

/*
 * Act on the controller's answer about a spooled result: ACKED removes
 * it, REFUSED moves it to rejected/ with the answer (sending the same
 * bytes again cannot change it); SENT and LATER keep it.  A result no
 * longer spooled is fine.  0 or -1 (the spool).
 */
int agent_hold_settle(struct agent_hold *h, int64_t job_id, int64_t attempt,
		      const struct agent_offer_answer *ans, struct pg_err *err);

#endif
