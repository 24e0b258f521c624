/* SPDX-License-Identifier: MIT */
#ifndef AGENT_RUNONE_H
#define AGENT_RUNONE_H

/*
 * `perfgate-agent run-one`: one job on a host that runs no agent daemon,
 * driven by the controller over SSH with the line protocol of
 * lib/runone.h on stdin and stdout.  The job is held by agent_hold.h (the
 * daemon's own job path) over the stream link (agent_stream.h).
 *
 * stdout is the protocol's alone: at start the process keeps a private
 * copy of it for the lines and points descriptor 1 at stderr, so that
 * nothing else (a library, a child) can write into the protocol; likewise
 * descriptor 0 then reads /dev/null.  Logs go to stderr.
 *
 * The spool is locked for the whole run (agent_spool_open_wait(), waiting
 * up to RUNONE_COLLECT_WAIT_S for a run-one that is still stopping, in
 * every mode that uses it).  SIGPIPE is ignored (a write to a dropped
 * connection fails with EPIPE and counts as the connection lost);
 * SIGTERM, SIGINT and SIGHUP stop the job as a lost connection does
 * (infra-error spooled, exit RUNONE_EXIT_LOST).
 *
 * Each returns the process exit status (RUNONE_EXIT_*).  cfg's
 * controller_url and token_file are not used.
 */

#include "agent_config.h"

/*
 * One job: hello, read the first line (the lease answer), hold the job,
 * write an "end" line.  Exits:
 *   RUNONE_EXIT_OK      the result was acknowledged or refused (moved to
 *                       rejected/), or the job was cancelled;
 *   RUNONE_EXIT_ERROR   a local failure (spool, facts), a first line that
 *                       is not a job (nothing spooled), or a job that
 *                       could not be read (its infra-error result is
 *                       spooled and delivered like any result);
 *   RUNONE_EXIT_LOST    stdin closed (or stdout failed, or a signal) before
 *                       the end: the job was stopped and an infra-error
 *                       result spooled, or a result spooled earlier waits
 *                       for --collect;
 *   RUNONE_EXIT_UNACKED no answer to the result within RUNONE_ACK_WAIT_S.
 */
int agent_runone_job(const struct agent_config *cfg);

/*
 * --collect: recover orphan job files (infra-error), write a "result"
 * line per spooled result, oldest first, and {"type":"collected",
 * "count":N}; then settle "ack"/"reject" lines until "done" or EOF.
 * RUNONE_EXIT_OK, RUNONE_EXIT_ERROR (spool), RUNONE_EXIT_LOST (stdout
 * failed before the collected line).
 */
int agent_runone_collect(const struct agent_config *cfg);

/* --facts: one "facts" line (agent_version, labels with vendor and arch
 * filled in, facts).  RUNONE_EXIT_OK or RUNONE_EXIT_ERROR. */
int agent_runone_facts(const struct agent_config *cfg);

#endif
