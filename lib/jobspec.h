/* SPDX-License-Identifier: MIT */
#ifndef PG_JOBSPEC_H
#define PG_JOBSPEC_H

/*
 * The job specification (jobs.spec, JSON, the job format of the agent
 * protocol): everything the agent needs, nothing it must guess.  The
 * planner writes it (controller/planner_spec.c), the API hands it out with
 * a lease (controller/api_agent.c), the agent reads it
 * (agent/runner_dpdk.c, agent/bench_exec.c, agent/harness_subset.c), the
 * verdict reads it back and rewrites it for a follow-up round
 * (controller/verdict_load.c, verdict_pass.c, verdict_text.c).  This
 * header is its one definition: the layout below, and a name for every
 * field, which each of those files uses instead of a string of its own,
 * so that a field renamed on one side is renamed on the other
 * (tests/unit/test_planner.c, test_spec_read_back, checks what the planner
 * writes against what the agent reads).
 *
 *   {
 *     "format": 1,                      this layout; a change bumps it
 *     "run": 12,                        runs.id
 *     "reason": "new",                  or "recheck", or "baseline"
 *     "context": "perfgate-intel-Performance",
 *     "host_class": "intel",
 *     "build_mode": "release",
 *     "tree": {
 *       "name": "dpdk",
 *       "url": "https://dpdk.org/git/dpdk",
 *       "branch": "main",
 *       "base_commit": "<40 hex digits>",
 *       "base_source": "branch-tip",    or "base-commit", "previous-run",
 *                                       "rebase" (see above), "commit" (a
 *                                       baseline of a commit named)
 *       "version": "24.11.0"            VERSION at base_commit, or null
 *     },
 *     "series": {                       not in a baseline job
 *       "id": 7, "title": "mempool: speed up bulk get", "version": 2,
 *       "patches": 3,                   how many patches the mbox holds
 *       "mbox_url": "PUBLIC_URL/api/v1/series/7/mbox"
 *     },
 *     "baseline": {                     reason "baseline" only: base_commit
 *       "trigger": "head"               measured by itself, one build run as
 *     },                                both sides (A/A); trigger: "head",
 *                                       "interval", "manual" or "bisect"
 *     "depends_on": [                   apply in this order, before the series
 *       {"series": 5, "kind": "series", "ref": "31234", "missing": false,
 *        "mbox_url": "PUBLIC_URL/api/v1/series/5/mbox"},
 *       {"series": null, "kind": "msgid", "ref": "x@example.org",
 *        "missing": true, "mbox_url": null}
 *     ],
 *     "build": {
 *       "buildtype": "release",
 *       "meson_options": {"tests": "true", ...},   version-gated options
 *                                       applied, then the host class's
 *                                       over them (lib/profile.h), sorted
 *                                       by name; buildtype and c_args are
 *                                       not in it
 *       "c_args": "-DRTE_LIBRTE_MEMPOOL_DEBUG"     only when set
 *     },
 *     "host": {
 *       "labels": {"vendor": "intel", "arch": "x86_64"},
 *       "lcores": "2-5", "memory_mb": 2048, "hugepages": true,
 *       "numa_node": 0,                 only when set
 *       "max_load": 2.0,                only when set, and then
 *       "max_load_wait_s": 300,         always (agent/hostgate.h)
 *       "require": {"governor": "performance", "turbo": "off",
 *                   "smt": "off", "isolated_cpus": true,
 *                   "nohz_full": true}  only when the class has one, with
 *                                       the members it sets (false ones
 *                                       left out)
 *     },
 *     "benchmarks": [                   in the context's order
 *       {
 *         "name": "mempool_perf",
 *         "program": "app/test/dpdk-test",   relative to the build directory
 *         "args": ["-l", "2-5", "-m", "2048", "--file-prefix={file_prefix}"],
 *         "env": {"DPDK_TEST": "mempool_perf_autotest"},
 *         "stdin": "null",              or "hold"
 *         "duration_s": 5,              only when set
 *         "parser": "mempool_perf",     or "testpmd"
 *         "gate": ["mempool.nocache.*"],
 *         "timeout_s": 600,
 *         "stop_after_lines": 40,       only when set
 *         "warmup_runs": 1,             only when set: discarded runs per
 *                                       side before the first repetition
 *         "mode": "subset",             mempool_perf only
 *         "subset": {"cores": [1], "cache": [0, 512], "bulk": [32],
 *                    "keep": [128], "constant_n": [0], "time_s": 1}
 *                                       mempool_perf in mode subset only
 *       }
 *     ],
 *     "repetitions": 5, "max_repetitions": 15,
 *     "threshold_pct": 5, "alpha": 0.05, "noise_limit_pct": 5,
 *     "notes": ["base-commit 0123... is not in dpdk: tested on main's tip"],
 *     "round": 1, "repetition_base": 5, "pin_agent": "lab-3"
 *                                       only in a follow-up (verdict_pass.h):
 *                                       the job's Nth extra round, run on
 *                                       the agent of the first round (same
 *                                       build directories); "repetitions"
 *                                       is then this round's runs per side,
 *                                       numbered from repetition_base (the
 *                                       runs per side of the rounds before)
 *   }
 *
 * "args" are the profile's arguments expanded for the host class
 * ({lcores}, {memory_mb}, {duration_s}, and {mem_args} as the two or
 * three arguments "-m N", "--socket-mem 0,..,N" or "--no-huge -m N":
 * lib/profile.h) except for the two values
 * only the agent knows, which stay as placeholders: {file_prefix} (EAL
 * --file-prefix, unique per run) and {build_dir} (the absolute build
 * directory).  So that the agent's expansion is unambiguous, a literal
 * brace is written doubled ("{{", "}}") as in the profile; the agent
 * replaces the two placeholders and undoubles braces, nothing else.
 * (The planner calls profile_benchmark_argv() with marker values for the
 * two and turns them back into placeholders.)
 */

/* The layout's version (JS_FORMAT); a change bumps it. */
#define JOBSPEC_FORMAT_VERSION 1

/* The top level. */
#define JS_FORMAT "format"		/* number: JOBSPEC_FORMAT_VERSION */
#define JS_RUN "run"			/* number: runs.id */
#define JS_REASON "reason"		/* string: "new", "recheck" or "baseline" */
#define JS_REASON_BASELINE "baseline"
#define JS_BASELINE "baseline"		/* object, baseline jobs only: JS_BASELINE_* */
#define JS_BASELINE_TRIGGER "trigger"	/* string: "head", "interval", "manual", "bisect" */
#define JS_CONTEXT "context"		/* string: the context's name */
#define JS_HOST_CLASS "host_class"	/* string */
#define JS_BUILD_MODE "build_mode"	/* string */
#define JS_TREE "tree"			/* object: JS_TREE_* */
#define JS_SERIES "series"		/* object: JS_SERIES_* */
#define JS_DEPENDS_ON "depends_on"	/* array of objects: JS_DEP_* */
#define JS_BUILD "build"		/* object: JS_BUILD_* */
#define JS_HOST "host"			/* object: JS_HOST_* */
#define JS_BENCHMARKS "benchmarks"	/* array of objects: JS_BENCH_* */
#define JS_REPETITIONS "repetitions"	/* number: runs per side (this round) */
#define JS_MAX_REPETITIONS "max_repetitions"	/* number */
#define JS_THRESHOLD_PCT "threshold_pct"	/* number */
#define JS_ALPHA "alpha"		/* number */
#define JS_NOISE_LIMIT_PCT "noise_limit_pct"	/* number */
#define JS_NOTES "notes"		/* array of strings */
#define JS_ROUND "round"		/* number: a follow-up round, from 1 */
#define JS_REPETITION_BASE "repetition_base"	/* number: runs per side before */
#define JS_PIN_AGENT "pin_agent"	/* string: the agent of the first round */
#define JS_FROM_ATTEMPT "from_attempt"	/* number: samples of earlier attempts
					 * do not count (a disturbed round
					 * measured again) */
#define JS_RERUNS "reruns"		/* number: such re-runs so far */

/* JS_TREE */
#define JS_TREE_NAME "name"		/* string */
#define JS_TREE_URL "url"		/* string */
#define JS_TREE_BRANCH "branch"		/* string */
#define JS_TREE_BASE_COMMIT "base_commit"	/* string: 40 hex digits */
#define JS_TREE_BASE_SOURCE "base_source"	/* string */
#define JS_TREE_VERSION "version"	/* string or null */

/* JS_SERIES */
#define JS_SERIES_ID "id"		/* number: series.id */
#define JS_SERIES_TITLE "title"		/* string */
#define JS_SERIES_VERSION "version"	/* number */
#define JS_SERIES_PATCHES "patches"	/* number */
#define JS_SERIES_MBOX_URL "mbox_url"	/* string: an http(s) URL */

/* JS_DEPENDS_ON items */
#define JS_DEP_SERIES "series"		/* number, or null when never seen */
#define JS_DEP_KIND "kind"		/* string: "series", "patch", "msgid" */
#define JS_DEP_REF "ref"		/* string */
#define JS_DEP_MISSING "missing"	/* bool */
#define JS_DEP_MBOX_URL "mbox_url"	/* string, or null when missing */

/* JS_BUILD */
#define JS_BUILD_BUILDTYPE "buildtype"	/* string */
#define JS_BUILD_MESON_OPTIONS "meson_options"	/* object of strings */
#define JS_BUILD_C_ARGS "c_args"	/* string, only when set */

/* JS_HOST */
#define JS_HOST_LABELS "labels"		/* object of strings */
#define JS_HOST_LCORES "lcores"		/* string */
#define JS_HOST_MEMORY_MB "memory_mb"	/* number */
#define JS_HOST_HUGEPAGES "hugepages"	/* bool */
#define JS_HOST_NUMA_NODE "numa_node"	/* number, only when set */
#define JS_HOST_MAX_LOAD "max_load"	/* number, only when set */
#define JS_HOST_MAX_LOAD_WAIT_S "max_load_wait_s"	/* number, with max_load */
#define JS_HOST_REQUIRE "require"	/* object: JS_REQ_*, only when set */

/* JS_HOST_REQUIRE: each member only when the class requires it */
#define JS_REQ_GOVERNOR "governor"	/* string */
#define JS_REQ_TURBO "turbo"		/* string: "on" or "off" */
#define JS_REQ_SMT "smt"		/* string: "on" or "off" */
#define JS_REQ_ISOLATED_CPUS "isolated_cpus"	/* bool: true */
#define JS_REQ_NOHZ_FULL "nohz_full"	/* bool: true */

/* JS_BENCHMARKS items */
#define JS_BENCH_NAME "name"		/* string */
#define JS_BENCH_PROGRAM "program"	/* string: relative to the build directory */
#define JS_BENCH_ARGS "args"		/* array of strings (placeholders below) */
#define JS_BENCH_ENV "env"		/* object of strings */
#define JS_BENCH_STDIN "stdin"		/* string: "null" or "hold" */
#define JS_BENCH_DURATION_S "duration_s"	/* number, only when set */
#define JS_BENCH_PARSER "parser"	/* string: "mempool_perf" or "testpmd" */
#define JS_BENCH_GATE "gate"		/* array of strings */
#define JS_BENCH_TIMEOUT_S "timeout_s"	/* number */
#define JS_BENCH_STOP_AFTER_LINES "stop_after_lines"	/* number, only when set */
#define JS_BENCH_WARMUP_RUNS "warmup_runs"	/* number 1..PROFILE_WARMUP_MAX, only when set */
#define JS_BENCH_MODE "mode"		/* string: "subset" or "full" */
#define JS_BENCH_SUBSET "subset"	/* object: JS_SUBSET_* */

/* JS_BENCH_SUBSET: lists of numbers, and one number */
#define JS_SUBSET_CORES "cores"
#define JS_SUBSET_CACHE "cache"
#define JS_SUBSET_BULK "bulk"
#define JS_SUBSET_KEEP "keep"
#define JS_SUBSET_CONSTANT_N "constant_n"
#define JS_SUBSET_TIME_S "time_s"

/* What the lease adds to the spec it hands out (controller/api_agent.c,
 * read by agent/agent_job.c): the job, its attempt and the lease's terms;
 * JS_RUN, JS_CONTEXT, JS_HOST_CLASS and JS_BUILD_MODE are set from the
 * job's row, and JS_SERIES_ID and JS_SERIES_MBOX_URL when missing. */
#define JS_LEASE_JOB "id"		/* number: jobs.id */
#define JS_LEASE_ATTEMPT "attempt"	/* number, from 1 */
#define JS_LEASE_EXPIRES "lease_expires"	/* number: seconds since the epoch */
#define JS_LEASE_S "lease_s"		/* number */
#define JS_LEASE_HEARTBEAT_S "heartbeat_s"	/* number */

/* The placeholders of JS_BENCH_ARGS that only the agent can fill. */
#define JS_ARG_FILE_PREFIX "{file_prefix}"
#define JS_ARG_BUILD_DIR "{build_dir}"
/* A benchmark with JS_BENCH_FRAME_SIZES: the frame size of the run. */
#define JS_ARG_FRAME_SIZE "{frame_size}"

/* Ports (a host class's "ports", profile.h): JS_HOST_PORTS holds one
 * object per port, {"pci": ADDR, "driver": NAME[, "numa_node": N]} or
 * {"vdev": VALUE}, in the class's order; only when the class has ports.
 * A testpmd benchmark with "fwd" carries JS_BENCH_FRAME_SIZES: the agent
 * runs it once per size (replacing JS_ARG_FRAME_SIZE) and keys the
 * results with profile_fwd_key(). */
#define JS_HOST_PORTS "ports"		/* array of objects: JS_PORT_* */
#define JS_PORT_PCI "pci"		/* string */
#define JS_PORT_DRIVER "driver"		/* string, with JS_PORT_PCI */
#define JS_PORT_NUMA_NODE "numa_node"	/* number, only when set */
#define JS_PORT_VDEV "vdev"		/* string */
#define JS_BENCH_FRAME_SIZES "frame_sizes"	/* array of numbers */

#endif
