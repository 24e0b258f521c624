/* SPDX-License-Identifier: MIT */
#ifndef CTL_HOSTNOISE_H
#define CTL_HOSTNOISE_H

/*
 * A host's own noise, from its baselines (DESIGN.md sections 2.6 and 2.9;
 * planner.h, "Baselines").  A baseline job runs one build as both sides,
 * so every spread of its pair ratios is the host's.  Per (build mode,
 * benchmark, metric) of the baseline jobs an agent ran (the latest
 * HOSTNOISE_JOBS of them): the paired log ratios pooled over the jobs,
 * their robust spread (1.4826 x MAD), and the minimum detectable effect
 * that spread gives at the context's cap (max_repetitions pairs) and
 * alpha, 80 % power (verdict_mde_pct()): the smallest slowdown a patch
 * verdict on this host can find at most.  Keys are in (build mode,
 * benchmark, metric) order.
 */

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "profile.h"
#include "store.h"

#define HOSTNOISE_JOBS 20
#define HOSTNOISE_TEXT_MAX 256

struct hostnoise_key {
	char build_mode[HOSTNOISE_TEXT_MAX], benchmark[HOSTNOISE_TEXT_MAX];
	char metric[HOSTNOISE_TEXT_MAX], context[HOSTNOISE_TEXT_MAX];
	size_t n_pairs, n_jobs;
	double sigma_pct;	/* robust spread of the log ratios, in % */
	double mde_pct;		/* at the cap; NaN when the context is unknown */
	int max_repetitions;	/* the context's, 0 when unknown */
	double alpha;
	int64_t last_at;	/* when the latest of those baselines arrived */
	char last_commit[48];	/* the commit it measured */
};

/*
 * The noise of agent `agent` (its name) per key, into a malloc'd array
 * (*out, *n; free() it); none when it ran no baseline.  ps gives each
 * context's cap and alpha (NULL: no MDE).  Returns 0, or -1 (a store
 * error, out of memory).
 */
int hostnoise_read(struct store *st, const struct profile_set *ps, const char *agent,
		   struct hostnoise_key **out, size_t *n, struct pg_err *err);

/* {"agent", "baseline_jobs": HOSTNOISE_JOBS, "keys": [{"build_mode",
 * "benchmark", "metric", "context", "pairs", "jobs", "sigma_pct",
 * "mde_pct" (null when unknown), "max_repetitions", "alpha", "last_at",
 * "last_commit"}]}; NULL when out of memory. */
cJSON *hostnoise_to_json(const char *agent, const struct hostnoise_key *k, size_t n);

#endif
