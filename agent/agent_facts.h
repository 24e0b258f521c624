/* SPDX-License-Identifier: MIT */
#ifndef AGENT_FACTS_H
#define AGENT_FACTS_H

/*
 * Host facts: what the agent tells the controller about the machine it
 * runs on when it registers, and what fills the "vendor" and "arch" labels
 * that its configuration leaves out.
 *
 * The parsers are pure functions over the text of /proc and /sys files, so
 * that captured files from other machines test them (tests/agent/); only
 * agent_facts_gather() touches the system.
 */

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define AGENT_FACT_MAX 128	/* bytes of one text fact, NUL included */

/* What /proc/cpuinfo says about the first CPU listed. */
struct agent_cpuinfo {
	/*
	 * A label value ([a-z0-9_.-]): "intel" (GenuineIntel), "amd"
	 * (AuthenticAMD), "hygon", "zhaoxin", "centaur"; for ARM, the
	 * implementer of MIDR_EL1 as DPDK's config/arm and Linux's cputype.h
	 * name them: "arm" (0x41: Cortex and Neoverse cores, so Graviton,
	 * Grace, Ampere Altra, Cobalt), "broadcom" (0x42), "cavium" (0x43:
	 * ThunderX, OCTEON TX2), "fujitsu" (0x46), "hisilicon" (0x48:
	 * Kunpeng), "nvidia" (0x4e), "ampere" (0x50 eMAG, 0xc0 AmpereOne),
	 * "qualcomm" (0x51), "marvell" (0x56), "apple" (0x61), "phytium"
	 * (0x70); "unknown" otherwise.  A class for every ARM host keys on
	 * arch=aarch64, not on one vendor.
	 */
	char vendor[AGENT_FACT_MAX];
	/* ARM: MIDR's implementer ("0x48") and part number ("0xd01") from
	 * "CPU implementer" and "CPU part"; "" elsewhere or when absent. */
	char implementer[16];
	char part[16];
	/*
	 * x86: "model name" as written (white space squeezed).  ARM: the core
	 * named from "CPU implementer" and "CPU part" ("ARM Neoverse-N1"),
	 * else "model name" when the kernel gives one, else
	 * "implementer 0x48 part 0xd01".  Others (POWER): the "cpu" line.
	 * "" when nothing says.
	 */
	char model[AGENT_FACT_MAX];
	char microcode[AGENT_FACT_MAX];	/* x86 "microcode", "" when absent */
	unsigned int processors;	/* "processor" lines */
};

/*
 * Parse /proc/cpuinfo text (len bytes, NUL not needed).  Lines are
 * "key<tabs or spaces>: value"; unknown keys and malformed lines are
 * skipped, and the first value of each key wins (every CPU of a host is
 * the same model; big.LITTLE hosts show their first core).
 *
 * Returns 0, or -1 with PG_EINVAL when the text has no "processor",
 * "vendor_id" or "CPU implementer" line at all (not a cpuinfo file).  A
 * cpuinfo of another architecture (POWER, s390x) parses with vendor
 * "unknown".
 */
int agent_cpuinfo_parse(const char *text, size_t len, struct agent_cpuinfo *out,
			struct pg_err *err);

/*
 * Parse /proc/meminfo text for "MemTotal: N kB".  Returns 0 and sets
 * *kb, or -1 with PG_EINVAL when the line is missing or malformed.
 */
int agent_meminfo_total_kb(const char *text, size_t len, uint64_t *kb, struct pg_err *err);

/*
 * Count the CPUs of a kernel CPU list ("0-3,8,10-11\n", as in
 * /sys/devices/system/cpu/online).  Returns the count (> 0), or -1 with
 * PG_EINVAL on malformed text (descending ranges, junk, empty).
 */
int agent_cpulist_count(const char *text, size_t len, struct pg_err *err);

/* Everything the agent reports. */
struct agent_facts {
	char hostname[AGENT_FACT_MAX];
	char arch[AGENT_FACT_MAX];	/* uname -m: "x86_64", "aarch64" */
	char kernel[AGENT_FACT_MAX];	/* uname -r */
	struct agent_cpuinfo cpu;
	unsigned int cores;		/* online CPUs */
	unsigned int numa_nodes;	/* /sys/devices/system/node/nodeN; 1 without NUMA */
	uint64_t memory_kb;		/* MemTotal */
};

/*
 * Gather the facts of this host from /proc, /sys, uname(2) and
 * gethostname(2), reading files under `root` ("" or NULL for "/"; tests
 * point it at a fake tree).  A fact that cannot be read is an error naming
 * the file, except: cores fall back to sysconf(_SC_NPROCESSORS_ONLN) and
 * NUMA nodes to 1 when /sys does not have them (containers).
 */
int agent_facts_gather(struct agent_facts *f, const char *root, struct pg_err *err);

/*
 * {"hostname", "vendor", "model", "microcode" (only when known), "arch",
 * "cores", "numa_nodes", "kernel", "memory_kb", "agent_version"}: the
 * "facts" of the register request.  NULL when out of memory.
 */
cJSON *agent_facts_to_json(const struct agent_facts *f);

/*
 * The labels an agent registers with: the configured ones (keys[i] =
 * values[i]), plus "vendor" and "arch" from the facts for each of the two
 * that the configuration leaves out, so that a lab host matches the
 * vendor/arch host classes without repeating what it can see for itself.
 * A configured value always wins (an operator may override what the
 * facts say); a fact that is "unknown", empty or not a valid label value
 * is left out.  f may be NULL (configured labels only).  NULL when out
 * of memory.
 */
cJSON *agent_labels_json(const char *const *keys, const char *const *values, size_t n,
			 const struct agent_facts *f);

#endif
