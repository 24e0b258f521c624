/* SPDX-License-Identifier: MIT */
#ifndef AGENT_BENCH_EXEC_H
#define AGENT_BENCH_EXEC_H

/*
 * Running one benchmark once: one side (base or patched), one repetition.
 * The job spec's "benchmarks" entries (lib/jobspec.h) say what to
 * run; this module expands the two placeholders the agent owns, starts the
 * program from the side's build directory (in the sandbox when the caller
 * gives one), drives it as its stdin mode says, stops it, parses what
 * it printed (agent/bench_parse.h), and says whether it produced results.
 *
 *   stdin "null"   stdin is /dev/null; the program ends by itself (dpdk-test
 *                  ends after its test), or after stop_after_lines result
 *                  lines (the unmodified mempool test runs for an hour: it
 *                  gets SIGINT once it has printed enough, and the lines it
 *                  printed are kept), or at timeout_s.
 *   stdin "hold"   stdin is a pipe held open for duration_s counted from the
 *                  moment the program says it is forwarding
 *                  (bench_testpmd_started()), then closed: testpmd stops,
 *                  prints its final statistics and exits.  The forwarding
 *                  time measured that way is what fwd.*_pps divide by.
 *
 * The program runs under stdbuf(1) -oL -eL: stdio buffers a pipe in
 * blocks, and both modes act on lines as they are printed.
 *
 * A run that crashes, times out, prints an error, or prints no result is
 * not an error of this module: it is an outcome (ok false, detail says
 * what happened, with the samples it did print).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "bench_parse.h"
#include "err.h"
#include "profile.h"
#include "sandbox.h"

#define BENCH_DETAIL_MAX 512

/* One benchmark of the job spec. */
struct bench_def {
	char *name;
	char *program;		/* relative to the build directory */
	char **args;		/* NULL-terminated, placeholders not expanded */
	char **env;		/* NULL-terminated "KEY=VALUE" */
	bool stdin_hold;
	int duration_s;		/* 0 when not set */
	int timeout_s;
	char *parser;		/* "mempool_perf" or "testpmd" */
	int stop_after_lines;	/* 0 when not set */
	int warmup_runs;	/* discarded runs per side and job; 0 when not set */
	bool subset;		/* mempool_perf in mode "subset" */
	cJSON *subset_json;	/* a copy of "subset", or NULL */
	char **gate;		/* NULL-terminated patterns */
	/* testpmd with "fwd": one run per frame size, keys per size
	 * (profile_fwd_key()); 0 sizes for any other benchmark. */
	unsigned frame_sizes[PROFILE_MAX_FRAME_SIZES];
	size_t n_frame_sizes;
};

/*
 * Read one entry of the job's "benchmarks".  Every field is checked for
 * type and range (the controller wrote it, but a job is outside input to
 * the agent); errors name the field.  Returns 0 or -1.
 */
int bench_def_from_json(const cJSON *o, struct bench_def *d, struct pg_err *err);
void bench_def_release(struct bench_def *d);

/*
 * Expand one argument: "{file_prefix}" and "{build_dir}" replaced, "{{"
 * and "}}" undoubled, nothing else (planner.h says why).  Any other
 * "{...}" is an error, as is a lone brace.  Returns malloc'd text in *out,
 * or -1.
 */
int bench_expand_arg(const char *arg, const char *file_prefix, const char *build_dir,
		     char **out, struct pg_err *err);
/* The same, and "{frame_size}" replaced by frame_size (NULL: an error
 * when the argument has it). */
int bench_expand_arg_fs(const char *arg, const char *file_prefix, const char *build_dir,
			const char *frame_size, char **out, struct pg_err *err);

struct bench_run_spec {
	const struct bench_def *def;
	const char *build_dir;		/* absolute */
	const char *file_prefix;	/* unique per run: EAL's --file-prefix */
	const char *frame_size;		/* a "fwd" run's {frame_size}, or NULL */
	const char *log_path;		/* the run's output, appended */
	/* The sandbox to run in (agent/sandbox.h), or NULL for none; the
	 * build directory is bound read-only, and dev_paths (e.g.
	 * /dev/hugepages, NULL-terminated or NULL) read-write. */
	const struct sandbox_cfg *sandbox;
	const char *const *dev_paths;
	/* Extra environment ("KEY=VALUE", NULL-terminated) or NULL. */
	const char *const *env_extra;
	/* Result lines after which an unmodified mempool test is stopped;
	 * 0 for the def's stop_after_lines. */
	int stop_after_lines;
	/* Polled every 100 ms: true ends the run now (cancelled job). */
	bool (*stopped)(void *arg);
	void *arg;
};

struct bench_run_result {
	bool ok;		/* results, and no failure seen */
	bool stopped;		/* ended because stopped() said so */
	/* The sandbox itself could not start (bwrap, setpriv or prlimit
	 * said so): an infrastructure error, not the benchmark's. */
	bool sandbox_failed;
	char detail[BENCH_DETAIL_MAX];	/* what happened, one line */
	struct bench_output out;	/* parsed output, also when !ok */
	double fwd_seconds;	/* stdin "hold": measured forwarding time */
	uint64_t duration_ms;
	uint64_t output_bytes;
};

/*
 * Run def once.  Returns 0 with *r filled (see ok/detail), or -1 when the
 * run could not be attempted at all (argument expansion, spawn, out of
 * memory: err says why).  Release *r with bench_run_result_release().
 */
int bench_run_once(const struct bench_run_spec *s, struct bench_run_result *r,
		   struct pg_err *err);
void bench_run_result_release(struct bench_run_result *r);

#endif
