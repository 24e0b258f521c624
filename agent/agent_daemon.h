/* SPDX-License-Identifier: MIT */
#ifndef AGENT_DAEMON_H
#define AGENT_DAEMON_H

/*
 * The agent daemon: register, keep the spool empty, lease, run, report.
 *
 *   start-up   lock the spool and drop temporaries a crash left; gather
 *              the host facts; read the token
 *   register   POST /agents/register {labels, facts}; again after every
 *              reconnect (a failed exchange: no answer or 5xx)
 *   flush      before every lease: a job-*.json without its result is an
 *              attempt a crash or kill interrupted, reported as
 *              infra-error (so the controller requeues it now rather than
 *              at lease expiry); then every result-*.json is uploaded,
 *              oldest first, the same bytes each time, and removed only
 *              once acknowledged (recorded, duplicate, acknowledged); a
 *              refused one (409, 404, other 4xx) moves to rejected/
 *   lease      long-poll POST /lease {wait_s}; 204 means ask again
 *   job        spool job-ID-ATTEMPT.json, start the heartbeat thread, run
 *              the runner on this thread, stop the heartbeat thread, then
 *              spool result-ID-ATTEMPT.json (atomically, before any
 *              upload), remove the job file, upload.  A job the
 *              controller cancels (or declares stale or unknown) ends
 *              without a result.
 *
 * The job and flush steps are agent_hold.h's, shared with `perfgate-agent
 * run-one` (agent_runone.h); this file supplies their HTTP link and the
 * retry policy around it.
 *
 * Failures back off with full jitter up to max_backoff_s (agent_conn.h
 * agent_retry_delay_ms()): no answer and 5xx quietly, 401/403 with an
 * error naming the token file (re-read before every retry).
 *
 * A spool that cannot be written or read stops the agent (exit 1): it
 * could no longer promise that a result survives; the lease it may hold
 * expires at the controller.
 *
 * Signals: the first SIGTERM or SIGINT stops leasing: an idle agent
 * walks away from its long-poll and exits 0 at once (a result upload in
 * flight is finished first, within request_timeout_s); an agent holding a
 * job finishes it, uploads its result (retrying for up to
 * AGENT_STOP_UPLOAD_S while the controller is away; what is not delivered
 * by then stays in the spool for the next start) and exits 0.  A second
 * one abandons the job: its result is spooled as infra-error ("stopped
 * before the job finished") for the next start, and the agent exits 0.
 * SIGHUP is ignored (configuration changes need a restart; a replaced
 * token file is picked up by itself at the next 401/403).  SIGPIPE is
 * ignored.
 */

#include <stdbool.h>

#include "agent_config.h"

#define AGENT_STOP_UPLOAD_S 60
/* Added to wait_s for the HTTP deadline of a lease long-poll. */
#define AGENT_LEASE_MARGIN_S 15

/* Exit statuses. */
#define AGENT_EXIT_OK 0
#define AGENT_EXIT_ERROR 1
#define AGENT_EXIT_NO_JOB 3	/* --once: no job ran */

/*
 * Run the daemon until SIGTERM, or with `once` for one job: lease (waiting
 * up to lease_wait_s, retrying while the controller is away within that
 * time), run it, upload its result, exit.  Returns the exit status: 0 (a
 * job ran and its result was acknowledged; a job the controller cancelled
 * counts as run), AGENT_EXIT_NO_JOB (no job came within lease_wait_s, or a
 * signal came first), 1 (the controller could not be reached or refused
 * the agent for the whole wait, a result could not be delivered within
 * AGENT_STOP_UPLOAD_S and stays in the spool, or a local failure).
 */
int agent_daemon_run(const struct agent_config *cfg, bool once);

#endif
