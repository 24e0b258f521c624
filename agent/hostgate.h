/* SPDX-License-Identifier: MIT */
#ifndef AGENT_HOSTGATE_H
#define AGENT_HOSTGATE_H

/*
 * The host gate: what the host class of a job (its spec's "host" object,
 * lib/jobspec.h) demands of the host before perfgate measures on it,
 * beside the host check (hostcheck.h), which only describes.
 *
 *  - require: facts of the host check the class needs (governor, turbo,
 *    SMT, the lcores isolated and/or nohz_full).  Checked right after the
 *    prepare stage's host check, before anything is fetched or built; a
 *    fact unmet fails the job as infra-error naming the fact, what the
 *    host has and what the class requires.
 *  - hugepages: a class with hugepages needs /dev/hugepages mounted as
 *    hugetlbfs and, of its page size, free pages for memory_mb (on the
 *    class's numa_node when given).  Checked at the same time and again
 *    before the benchmarks; not enough fails the job as infra-error with
 *    the numbers.
 *  - max_load: before each measured run, poll (every HOSTGATE_POLL_MS)
 *    until the 1-minute load average is at most max_load and the busy
 *    share of the quiet check's window (HOSTCHECK_QUIET_SAMPLE_MS) at
 *    most HOSTCHECK_QUIET_LIMIT_CPUS of other work; a host still busy
 *    after max_load_wait_s fails the job as infra-error ("host busy: load
 *    3.20 over max_load 1.0 for 300 s before run 4").  The agent does not
 *    refuse jobs while busy: it waits within the job, so that the wait is
 *    recorded in the fingerprint (per run and in all).
 *
 * Everything that reads /proc or /sys takes a root ("" or NULL for "/",
 * a fake tree in tests), and the load wait runs on an injected clock and
 * load source, so that tests drive it without sleeping.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "hostcheck.h"

#define HOSTGATE_MAX_CPUS 4096		/* CPU ids 0..HOSTGATE_MAX_CPUS-1 */
/* The 1-minute load average decays by about 8 % in 5 s: polling more
 * often sees nothing new. */
#define HOSTGATE_POLL_MS 5000
#define HOSTGATE_MSG_MAX 512

/* What a job's host class asks of the host (pointers into the spec). */
struct hostgate_class {
	const char *name;		/* the host class, for messages */
	const char *lcores;		/* DPDK core list, e.g. "2-5" */
	int memory_mb;
	bool hugepages;
	int numa_node;			/* -1 when not set */
	bool has_max_load;
	double max_load;
	int max_load_wait_s;
	/* require; NULL / false: anything goes */
	const char *governor, *turbo, *smt;
	bool isolated_cpus, nohz_full;
};

/*
 * Read the class from a job spec: JS_HOST_CLASS and the JS_HOST object
 * (a spec without one asks for nothing: lcores NULL).  Returns 0, or -1
 * with err naming the field.
 */
int hostgate_class_from_spec(const cJSON *job, struct hostgate_class *c, struct pg_err *err);

/*
 * Parse a kernel / DPDK CPU list ("2-5,8", "" for none) into set
 * (HOSTGATE_MAX_CPUS entries, cleared first).  Returns the number of CPUs,
 * or -1 when malformed or out of range.
 */
int hostgate_cpulist_parse(const char *s, bool *set);

/* Whether every CPU of list `cpus` is in list `of`: 1 yes, 0 no, -1 when
 * either is malformed. */
int hostgate_cpus_within(const char *cpus, const char *of);

/*
 * Compare the host check's facts with the class's requirements.  Returns
 * 0 when all are met; 1 with msg "host does not meet host class intel:
 * governor is powersave, the class requires performance" for the first
 * unmet one (in the order governor, turbo, smt, isolated_cpus,
 * nohz_full); -1 with msg when the class's lcores are malformed.
 */
int hostgate_require_check(const struct hostcheck *h, const struct hostgate_class *c,
			   char *msg, size_t len);

/* What the hugepage check found (for the fingerprint). */
struct hostgate_huge {
	uint64_t page_kb;		/* the mount's page size */
	uint64_t free_pages;		/* of that size, on the node when given */
	int node;			/* -1: all nodes */
};

/*
 * The hugepage check of a class with hugepages (nothing to do without):
 * ROOT/proc/mounts must mount /dev/hugepages as hugetlbfs; its pagesize=
 * option (else ROOT/proc/meminfo's Hugepagesize) picks
 * ROOT/sys/kernel/mm/hugepages/hugepages-NkB/free_hugepages, or
 * ROOT/sys/devices/system/node/nodeN/hugepages/... with numa_node; free
 * pages times page size must cover memory_mb.  Returns 0 (met, *hp
 * filled), or 1 with msg saying what is missing, with the numbers.
 */
int hostgate_hugepages_check(const char *root, const struct hostgate_class *c,
			     struct hostgate_huge *hp, char *msg, size_t len);

/* The load source and clock of hostgate_wait_load(). */
struct hostgate_load_src {
	/* The 1-minute load average and the busy share (of all CPUs, [0, 1])
	 * now; may take time (the real one samples /proc/stat). 0 or -1. */
	int (*read)(void *arg, double *load1, double *busy, struct pg_err *err);
	int64_t (*now_ms)(void *arg);
	/* Wait ms; 0, or 1 when the job was stopped meanwhile. */
	int (*sleep_ms)(void *arg, unsigned int ms);
	void *arg;
};

struct hostgate_load_wait {
	double load1, busy;		/* the last poll's */
	unsigned int polls;		/* at least 1 */
	int64_t waited_ms;		/* from the end of the first poll to the
					 * end of the last: 0 when calm at once */
	bool calm;			/* the last poll was within both limits */
};

/*
 * Poll src until load1 <= max_load and busy <= max_busy, sleeping
 * poll_ms between polls (less to end at the bound), until max_wait_ms
 * have passed (the last poll's read may end a sample's time after it).  Returns 0 with *w filled (w->calm says whether the host
 * calmed down), 1 when stopped, -1 when a read fails (err says why).
 */
int hostgate_wait_load(const struct hostgate_load_src *src, double max_load, double max_busy,
		       unsigned int poll_ms, int64_t max_wait_ms, struct hostgate_load_wait *w,
		       struct pg_err *err);

/* Why a wait that did not calm down failed, for the result's detail:
 * "host busy: load 3.20 over max_load 1.0 for 300 s before run 4", or,
 * when the load was within it, the other work in CPUs (busy * cpus) over
 * max_busy_cpus. */
void hostgate_load_reason(const struct hostgate_load_wait *w, double max_load,
			  double max_busy_cpus, unsigned int cpus, unsigned int run, char *msg,
			  size_t len);

/* The real source: ROOT/proc/loadavg and the busy share of
 * ROOT/proc/stat over HOSTCHECK_QUIET_SAMPLE_MS, the monotonic clock,
 * and sleeps cut short by stopped(arg) (checked every 250 ms). */
struct hostgate_proc {
	const char *root;
	bool (*stopped)(void *arg);
	void *arg;
};
void hostgate_proc_src(struct hostgate_proc *p, struct hostgate_load_src *src);

#endif
