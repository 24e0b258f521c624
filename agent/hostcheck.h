/* SPDX-License-Identifier: MIT */
#ifndef AGENT_HOSTCHECK_H
#define AGENT_HOSTCHECK_H

/*
 * The host check: the state of the machine that changes benchmark numbers
 * (DESIGN.md section 2.5, shared/reference/dpdk_bench.md section 6), read
 * before a job's first benchmark run and recorded in its fingerprint, so
 * that a result can be told apart from another host's or another day's.
 *
 * The parsers are pure functions over /proc and /sys text; only the
 * *_gather() functions touch the system, reading files under `root` ("" or
 * NULL for "/"; tests point it at a fake tree, tests/agent/).  A file that
 * a VM or container lacks (no cpufreq, no SMT control) gives "unknown",
 * never an error: the check describes, it does not refuse to run (what a
 * host class demands of these facts is hostgate.h's).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define HOSTCHECK_TEXT_MAX 128

/*
 * A host is "busy" for the warning when, over the sampling window, the
 * CPUs spent more than this share of their time outside idle (all CPUs
 * together, from /proc/stat), or when the 1-minute load average exceeds
 * HOSTCHECK_BUSY_LOAD_PER_CPU per online CPU.  A quarter of the machine
 * busy is far beyond what a quiet lab host shows (under 2 %), and well
 * below what shifts a pinned benchmark's numbers.
 */
#define HOSTCHECK_BUSY_SHARE 0.25
#define HOSTCHECK_BUSY_LOAD_PER_CPU 0.5
#define HOSTCHECK_SAMPLE_MS_DEFAULT 1000

struct hostcheck {
	/* scaling_governor of every CPU that has one: the common value,
	 * "mixed: performance,powersave" when they differ, "none" when
	 * no CPU has cpufreq (most VMs). */
	char governor[HOSTCHECK_TEXT_MAX];
	/* "on", "off" (intel_pstate/no_turbo or cpufreq/boost), "unknown" */
	char turbo[16];
	/* /sys/devices/system/cpu/smt/control: "on", "off", "forceoff",
	 * "notsupported", "notimplemented"; "unknown" when absent */
	char smt[16];
	char isolated[HOSTCHECK_TEXT_MAX];	/* kernel CPU list, "" for none */
	char nohz_full[HOSTCHECK_TEXT_MAX];	/* kernel CPU list, "" for none */
	double load1, load5, load15;
	uint64_t hugepages_total, hugepages_free, hugepage_kb;
	/* Share of CPU time outside idle over the sampling window, in
	 * [0, 1]; negative when not sampled. */
	double busy_share;
	unsigned int cpus;		/* online CPUs (the load's yardstick) */
	char compiler[HOSTCHECK_TEXT_MAX];	/* first line of `cc --version`; "" unknown */
	bool busy;
	/* Why busy, for the log and the result's detail; "" when not. */
	char warning[256];
};

/*
 * Parse /proc/loadavg ("0.52 0.58 0.59 1/467 1234").  Returns 0, or -1
 * with PG_EINVAL on malformed text.
 */
int hostcheck_parse_loadavg(const char *text, size_t len, double *l1, double *l5, double *l15,
			    struct pg_err *err);

/*
 * Parse the "HugePages_Total", "HugePages_Free" and "Hugepagesize" lines
 * of /proc/meminfo; a missing line leaves its value 0 (kernels without
 * hugetlbfs).  Returns 0, or -1 with PG_EINVAL when a line is malformed.
 */
int hostcheck_parse_hugepages(const char *text, size_t len, uint64_t *total, uint64_t *free_,
			      uint64_t *page_kb, struct pg_err *err);

/*
 * Parse the "cpu " line of /proc/stat into total and idle jiffies (idle +
 * iowait).  Returns 0, or -1 with PG_EINVAL when it is missing or
 * malformed.
 */
int hostcheck_parse_stat(const char *text, size_t len, uint64_t *total, uint64_t *idle,
			 struct pg_err *err);

/* The share of non-idle time between two /proc/stat readings, in [0, 1];
 * 0 when no time passed. */
double hostcheck_busy_share(uint64_t total0, uint64_t idle0, uint64_t total1, uint64_t idle1);

/*
 * The quiet check before each benchmark run.  A run started while other
 * work takes a CPU makes a pair several times noisier: on the shared
 * 2-CPU VM, bench/noise_pairs.sh measured a robust spread of the pair log
 * ratios of 0.7-1.4 % when other processes used under 0.2 CPU during
 * both runs and 6-6.6 % above.  So before each run the runner samples the
 * CPU time outside idle (the agent itself idle between runs: it is other
 * work) and, while it exceeds HOSTCHECK_QUIET_LIMIT_CPUS, waits and
 * samples again, for at most HOSTCHECK_QUIET_WAIT_MS per run and
 * HOSTCHECK_QUIET_BUDGET_MS per job: a host that stays busy is measured
 * anyway (never a stall), and the job says how many runs started busy.
 */
#define HOSTCHECK_QUIET_SAMPLE_MS 250
#define HOSTCHECK_QUIET_LIMIT_CPUS 0.25
#define HOSTCHECK_QUIET_WAIT_MS 10000
#define HOSTCHECK_QUIET_BUDGET_MS 120000

/*
 * The share of CPU time outside idle over ms milliseconds, from two
 * readings of ROOT/proc/stat (root "" or NULL for "/") ms apart, into
 * *share (in [0, 1]).  Returns 0, or -1 with err naming the file.
 */
int hostcheck_sample_busy(const char *root, unsigned int ms, double *share,
			  struct pg_err *err);

/* A sampler: hostcheck_sample_busy's shape, arg its root (tests give
 * their own). */
typedef int (*hostcheck_sampler_fn)(void *arg, unsigned int ms, double *share,
				    struct pg_err *err);
int hostcheck_sampler_proc(void *root, unsigned int ms, double *share, struct pg_err *err);

struct hostcheck_quiet {
	double share;		/* the last sample's busy share, [0, 1] */
	unsigned int samples;	/* samples taken, at least 1 */
	unsigned int waited_ms;	/* time spent sampling after the first */
	bool quiet;		/* the last sample was at most the limit */
};

/*
 * Sample the busy share (sample(sarg, sample_ms, ...)) until a sample is
 * at most `limit` or the samples after the first have taken max_wait_ms;
 * stopped(arg), when given, is polled between samples.  Returns 0 with
 * *q filled, 1 when stopped, -1 when a sample fails (err says why).
 */
int hostcheck_wait_quiet(hostcheck_sampler_fn sample, void *sarg, unsigned int sample_ms,
			 unsigned int max_wait_ms, double limit, bool (*stopped)(void *),
			 void *arg, struct hostcheck_quiet *q, struct pg_err *err);

/*
 * Read the host's state under root: governor, turbo, SMT, isolated and
 * nohz_full CPUs, load, hugepages; then, when sample_ms > 0, sample
 * /proc/stat over sample_ms milliseconds for busy_share, and decide
 * `busy`.  `compiler` is filled by hostcheck_compiler(), not here.
 * Returns 0, or -1 with err naming the file when /proc/loadavg,
 * /proc/meminfo or /proc/stat cannot be read or parsed (a /proc that
 * broken is not a host to measure on).
 */
int hostcheck_gather(struct hostcheck *h, const char *root, unsigned int sample_ms,
		     struct pg_err *err);

/*
 * The first line of `CC --version` (CC: the program named, e.g. "cc"),
 * run with a 10 s timeout, into out; "" when it cannot be run.
 */
void hostcheck_compiler(const char *cc, char *out, size_t size);

/*
 * {"governor", "turbo", "smt", "isolated_cpus", "nohz_full", "load":
 * [1, 5, 15], "busy_share" (only when sampled), "hugepages": {"total",
 * "free", "page_kb"}, "compiler", "busy", "warning" (only when busy)}.
 * NULL when out of memory.
 */
cJSON *hostcheck_to_json(const struct hostcheck *h);

#endif
