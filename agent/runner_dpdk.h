/* SPDX-License-Identifier: MIT */
#ifndef AGENT_RUNNER_DPDK_H
#define AGENT_RUNNER_DPDK_H

/*
 * The DPDK runner: a job spec (lib/jobspec.h) in, samples out.
 *
 *   prepare        host check (load, governor, turbo, SMT, hugepages,
 *                  compiler); the tree's mirror synced (agent/workspace.h)
 *   fetch          the series' mbox and its Depends-on prerequisites',
 *                  through the controller (run->fetch)
 *   apply          two worktrees per (tree, build mode): SLOT-base and
 *                  SLOT-patched, both at the base commit; the
 *                  prerequisites then the series applied on the patched
 *                  one (patches/apply.h: exact, then three-way); for a
 *                  mempool benchmark in mode "subset", the harness
 *                  (agent/harness.h) rewrites the test on BOTH sides, or
 *                  on neither (then the unmodified test is stopped after
 *                  its result lines: "harness": "fallback")
 *   build-base, build-patched
 *                  meson + ninja into persistent build directories
 *                  (agent/build.h), in the sandbox when the host has one
 *   bench          the host check again, sampled over 1 s, with a warning
 *                  when the host is busy; then for each repetition r, for
 *                  each benchmark: base then patched when r is even,
 *                  patched then base when odd, so that drift on the host
 *                  hits both sides alike
 *
 * Outcomes: apply-failure (naming patch, file and hunk), base-build-
 * failure, patched-build-failure (with the log's tail), bench-failure
 * (a run that crashed, timed out or printed no result: the samples of the
 * runs that worked are still sent), infra-error (the mirror, the mbox,
 * the workspace), ok.  Every run's output goes to the controller as the
 * log of its stage.
 */

#include <cjson/cJSON.h>

#include "agent_runner.h"

#include "err.h"

int agent_runner_dpdk(const struct agent_run *run, struct agent_result *res,
		      struct pg_err *err);

/* Read spec as the runner does before it starts (every field it needs,
 * every benchmark, a mempool subset as the harness takes it), and no
 * more.  Returns 0 when the runner can run it, or -1 with err naming the
 * field (PG_EINVAL). */
int agent_runner_dpdk_check_spec(const cJSON *spec, struct pg_err *err);

#endif
