/* SPDX-License-Identifier: MIT */
#ifndef AGENT_CMD_H
#define AGENT_CMD_H

/* The agent's modes.  Each returns the process exit status. */

#include "agent_config.h"

#include <stdbool.h>

/* --check-config: print {"config", "profiles", "matches"} normalised, where
 * "matches" lists the labels the agent would register with (the
 * configured ones, "vendor" and "arch" filled from this host's facts when
 * left out) and the host classes and contexts those labels can serve.
 * Fails (1, with the reason) when the sandbox does not work on this host
 * (sandbox_check(), which also resolves cfg->sandbox's user). */
int agent_cmd_check_config(struct agent_config *cfg);

/* The daemon (agent_daemon.h): lease and run jobs until SIGTERM, or with
 * `once` one job (exit 0), none within lease_wait_s (exit 3).  First checks
 * the sandbox as --check-config does (exit 1 when it does not work). */
int agent_cmd_run(struct agent_config *cfg, bool once);

enum agent_runone_mode {
	AGENT_RUNONE_JOB,	/* run one job from stdin */
	AGENT_RUNONE_COLLECT,	/* --collect */
	AGENT_RUNONE_FACTS,	/* --facts */
};

/* `run-one` (agent_runone.h; the protocol in lib/runone.h).  A job is
 * run only after the sandbox check that agent_cmd_run() makes (exit
 * RUNONE_EXIT_ERROR when it fails); --collect and --facts run nothing. */
int agent_cmd_runone(struct agent_config *cfg, enum agent_runone_mode mode);

#endif
