/* SPDX-License-Identifier: MIT */
#ifndef AGENT_CMD_H
#define AGENT_CMD_H

/* The agent's modes.  Each returns the process exit status. */

#include "agent_config.h"

/* --check-config: print {"config", "profiles", "matches"} normalised, where
 * "matches" lists the host classes and contexts this agent can serve. */
int agent_cmd_check_config(const struct agent_config *cfg);

/* The daemon: lease and run jobs until SIGTERM. */
int agent_cmd_run(const struct agent_config *cfg);

#endif
