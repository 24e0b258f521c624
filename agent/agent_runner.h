/* SPDX-License-Identifier: MIT */
#ifndef AGENT_RUNNER_H
#define AGENT_RUNNER_H

/*
 * Runners: what turns a leased job into a result.  The daemon owns the
 * protocol (spool, heartbeats, uploads); a runner only does the work,
 * through the hooks of struct agent_run, on the daemon's main thread.
 *
 * Two runners: the DPDK runner (agent/runner_dpdk.h: workspace, builds,
 * benchmarks), and the built-in one, which builds and measures nothing and
 * serves tests of the protocol.  The agent configuration's "runner"
 * chooses.
 */

#include <stdbool.h>
#include <stddef.h>

#include "agent_facts.h"
#include "agent_job.h"
#include "buf.h"
#include "err.h"
#include "sandbox.h"
#include "ws_child.h"

struct agent_run {
	const struct agent_job *job;
	const struct agent_facts *facts;
	const char *work_dir;
	/* Poll at least every 100 ms, also from long waits (pg_proc's
	 * cancel_cb fits): true when the job must end now, without a result
	 * (the controller cancelled it, or the agent is abandoning it). */
	bool (*stopped)(void *arg);
	/* The stage (agent_stage_ok() name) and progress 0..100 that the
	 * next heartbeat reports. */
	void (*progress)(void *arg, const char *stage, int percent);
	/* Upload a chunk of a stage's log.  Best effort: a chunk the
	 * controller cannot take after a few tries is dropped (logged), and
	 * the job goes on. */
	void (*log)(void *arg, const char *stage, const char *text, size_t len);
	/* GET a series mbox the job names (its "mbox_url") from the
	 * controller into out (bounded by out's maximum), retrying while
	 * the controller is away for a while.  Returns 0, or -1 with err. */
	int (*fetch)(void *arg, const char *url, struct pg_buf *out, struct pg_err *err);
	void *arg;
	/* This host's sandbox (resolved and checked at start); the runner
	 * decides per job with sandbox_for_job(). */
	const struct sandbox_cfg *sandbox;
	/* The agent's own program, which checks out and applies in the
	 * sandbox (agent/ws_child.h), and that child's limits. */
	const char *self_exe;
	const struct ws_child_cfg *apply;
	/* The agent configuration's max_build_slots (agent/slots.h); 0:
	 * SLOTS_MAX_DEFAULT. */
	int max_build_slots;
};

/*
 * Run the job.  Returns:
 *    0  done: *res holds the outcome (any of AGENT_OUTCOME_*), detail,
 *       fingerprint and samples;
 *    1  stopped because run->stopped() said so: *res is not used;
 *   -1  the runner itself failed (err says why): the daemon reports
 *       AGENT_OUTCOME_INFRA with err's message.
 */
typedef int (*agent_runner_fn)(const struct agent_run *run, struct agent_result *res,
			       struct pg_err *err);

#define AGENT_BUILTIN_MBOX_MAX ((size_t)256 << 20)
#define AGENT_BUILTIN_SECONDS_DEFAULT 2.0
#define AGENT_BUILTIN_SECONDS_MAX 86400.0
#define AGENT_BUILTIN_DETAIL "built-in runner: nothing was built or measured " \
	"(the DPDK runner comes with the agent's execution capability)"

/*
 * The built-in runner: stage "run", uploads one short log chunk; for a
 * job of a series, fetches its mbox ("series"."mbox_url", through
 * run->fetch, as the DPDK runner does; nothing is applied) and logs its
 * size and SHA-256, failing the job as the DPDK runner would when the
 * fetch fails; then waits for the job's "builtin_seconds" (a number in [0, 86400]; default
 * 2; tests use it to keep a job running), reporting progress and polling
 * run->stopped() every 100 ms, and ends with outcome "ok",
 * AGENT_BUILTIN_DETAIL, a fingerprint of the host facts, and NO samples:
 * it never makes numbers up.  A "builtin_seconds" of the wrong type or
 * range fails the job as an infrastructure error.
 *
 * With "builtin_spawn": true (default false) it waits instead by running
 * `sleep SECONDS` as a child through lib/proc.h, in its own process
 * group with run->stopped() as the cancel callback, as the DPDK runner
 * runs its builds and benchmarks: for tests that a stopped job kills its
 * processes (no progress is reported while it sleeps).  A
 * "builtin_spawn" that is not a boolean fails the job like a bad
 * "builtin_seconds".
 */
int agent_runner_builtin(const struct agent_run *run, struct agent_result *res,
			 struct pg_err *err);

/* The host part of a fingerprint: {"runner", "agent_version", "hostname",
 * "vendor", "model", "microcode" (when known), "arch", "kernel", "cores",
 * "numa_nodes", "memory_kb"}.  NULL when out of memory. */
cJSON *agent_fingerprint_host(const struct agent_facts *facts, const char *runner);

#endif
