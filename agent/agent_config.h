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
 *   lease_wait_s    how long one lease request waits at the controller for
 *                   a job before it answers 204 (1..300, default 30)
 *   request_timeout_s   the deadline of every other request to the
 *                   controller: register, heartbeat, logs, result
 *                   (1..300, default 30)
 *   max_backoff_s   the longest pause between retries when the controller
 *                   is away or refuses the token (1..3600, default 60)
 *   max_build_slots the most build slots (persistent source checkouts and
 *                   build directories, one per tree, branch or stable
 *                   series, build mode and build options: agent/slots.h)
 *                   kept in work_dir; the least recently used one goes
 *                   when a job needs another (1..256, default 8)
 *   runner          what runs a job: "dpdk" (default: workspace, builds,
 *                   benchmarks; agent/runner_dpdk.h) or "builtin" (builds
 *                   and measures nothing: for tests of the protocol)
 *   sandbox         how builds and benchmarks of patches (untrusted code)
 *                   are confined: {"enabled", "user", "cpu_s", "memory_mb",
 *                   "max_procs", "allow_unsandboxed", "ro_paths"}, each
 *                   optional (defaults: enabled, user "perfgate-sandbox",
 *                   7200 s, 8192 MiB, 4096 processes, no unsandboxed jobs);
 *                   see agent/sandbox.h.  --check-config and the daemon's
 *                   start check that the sandbox works on this host.
 */

#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "sandbox.h"
#include "slots.h"
#include "ws_child.h"

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
	char *runner;
	int lease_wait_s;
	int request_timeout_s;
	int max_backoff_s;
	int max_build_slots;	/* 1..SLOTS_MAX_LIMIT (agent/slots.h) */
	struct sandbox_cfg sandbox;
	struct ws_child_cfg apply;	/* "apply": limits of the apply child */
};

#define AGENT_LEASE_WAIT_S_DEFAULT 30
#define AGENT_LEASE_WAIT_S_MAX 300
#define AGENT_REQUEST_TIMEOUT_S_DEFAULT 30
#define AGENT_REQUEST_TIMEOUT_S_MAX 300
#define AGENT_MAX_BACKOFF_S_DEFAULT 60
#define AGENT_MAX_BACKOFF_S_MAX 3600

#define AGENT_RUNNER_DEFAULT "dpdk"

#define AGENT_CONFIG_DEFAULT PG_SYSCONFDIR "/perfgate/agent.json"

/* Load `path`, or when NULL the default file if it exists, else built-in
 * defaults.  Unknown fields are errors.  On error *c is empty and err names
 * the file and the field. */
int agent_config_load(struct agent_config *c, const char *path, struct pg_err *err);

void agent_config_free(struct agent_config *c);

/* agent_config_load() from a file's content (pg_config_load_text():
 * relative paths against dir), for tests and fuzzing; c->path stays NULL. */
int agent_config_load_text(struct agent_config *c, const char *text, size_t len,
			   const char *dir, struct pg_err *err);

/*
 * Replace work_dir, spool_dir and runner by the given values, each when
 * not NULL (run-one's --work-dir, --spool-dir, --runner).  Returns 0, or
 * -1 with err: a runner that is not "dpdk" or "builtin", out of memory
 * (the configuration is left whole).
 */
int agent_config_override(struct agent_config *c, const char *work_dir,
			  const char *spool_dir, const char *runner, struct pg_err *err);

/* The normalised configuration (defaults filled in, absolute paths; the
 * token is never printed).  Caller frees; NULL when out of memory. */
cJSON *agent_config_to_json(const struct agent_config *c);

#endif
