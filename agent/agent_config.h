/* SPDX-License-Identifier: MIT */
#ifndef AGENT_CONFIG_H
#define AGENT_CONFIG_H

/*
 * The agent's configuration file (JSON).  Relative paths in it are
 * relative to the file's own directory.  Fields:
 *
 *   name            how the controller knows this host (default: hostname)
 *   controller_url  http(s)://host:port of the controller (required in a file)
 *   token_file      file holding the agent's token from `perfgate-controller
 *                   agent add` (the token itself never goes in this file)
 *   labels          {"vendor": "intel", "arch": "x86_64", ...}: matched
 *                   against the profiles' host classes
 *   work_dir        mirrors, worktrees and build directories
 *   spool_dir       results kept until the controller acknowledges them
 *   profiles_dir, profiles   as for the controller; used to tell which
 *                   host classes this agent's labels match
 *   log_level       "info", or "warn,proc=debug" per component
 */

#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"

struct agent_config {
	char *path;		/* the file read; NULL when built-in defaults */
	char *name;
	char *controller_url;
	char *token_file;	/* NULL when not configured */
	char **label_keys;
	char **label_values;
	size_t n_labels;
	char *work_dir;
	char *spool_dir;
	char *profiles_dir;
	char **profiles;
	size_t n_profiles;
	char *log_level;
};

#define AGENT_CONFIG_DEFAULT PG_SYSCONFDIR "/perfgate/agent.json"

/* Load `path`, or when NULL the default file if it exists, else built-in
 * defaults.  Unknown fields are errors.  On error *c is empty and err names
 * the file and the field. */
int agent_config_load(struct agent_config *c, const char *path, struct pg_err *err);

void agent_config_free(struct agent_config *c);

/* The normalised configuration (defaults filled in, absolute paths; the
 * token is never printed).  Caller frees; NULL when out of memory. */
cJSON *agent_config_to_json(const struct agent_config *c);

#endif
