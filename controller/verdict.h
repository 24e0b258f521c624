/* SPDX-License-Identifier: MIT */
#ifndef CTL_VERDICT_H
#define CTL_VERDICT_H

/*
 * Verdicts (DESIGN.md sections 2.6 and 2.7), at three levels:
 *
 *   key      one result key of one benchmark in one job: the base and
 *            patched repetitions compared (controller/stats.h)
 *   job      one build mode on one host: its outcome and its keys
 *   context  the Patchwork check: every build mode's job of the context
 *
 * Pure functions: no store, no I/O.  The caller reads the samples of a
 * job's current attempt (and of its follow-ups, see below), groups them by
 * (benchmark, metric) into verdict_key_in, and stores what comes out.
 *
 * Units and signs, stated once (the DTS lesson: a tolerance whose sign is
 * ambiguous gets written backwards).  Every *_pct field is a percentage
 * (5.0 is 5 %).  change_pct is the raw change of the medians,
 * patched/base - 1: +3 % cycles per packet has change_pct +3.  effect_pct
 * is the same change signed so that NEGATIVE IS WORSE: -change_pct for a
 * lower-is-better key.  A regression is effect_pct < -threshold_pct.
 *
 * Paired or not.  The agent runs the two sides interleaved (base,
 * patched, base, patched... alternating which goes first), so each
 * repetition gives a pair of runs done back to back on the same host.
 * When the caller passes those pairs (every value > 0, every ratio
 * finite) the comparison is PAIRED: the change is the median of the ratios
 * patched_i/base_i, p comes from the Wilcoxon signed-rank test on their
 * logarithms, the shift is the Walsh median (one-sample Hodges-Lehmann)
 * of the logarithms, and the noise is the ratios' robust CV.  That is the
 * design's answer to hosts whose speed drifts or switches between levels
 * over minutes (measured on this project's lab VM: +-40 % every minute or
 * two): a drift moves both runs of a pair, so it cancels in the ratio,
 * while an unpaired comparison sees it as spread and loses the effect in
 * it.  Without such pairs (none passed, a value <= 0) the comparison is
 * UNPAIRED: medians of each side, Mann-Whitney U, the two-sample
 * Hodges-Lehmann shift, and the base side's robust CV as the noise.
 *
 * Key rules, in order (the first that applies):
 *   missing       a side has no samples
 *   noisy         the noise (see above; stats_cv_robust(), see stats.h for
 *                 why robust) exceeds noise_limit_pct: a warning naming
 *                 the host, never a pass or a fail.  Judged on fewer runs
 *                 than can reach p < alpha (p_min >= alpha: 3 pairs) the
 *                 figure itself is rough (the robust spread of three
 *                 ratios is one of their deviations), so the job first
 *                 asks for more runs, as for an inconclusive key; with
 *                 enough runs more would not make the host quieter
 *   no-change     |effect_pct| <= threshold_pct, whatever p says
 *   regression    effect_pct < -threshold_pct, p < alpha, and the
 *                 Hodges-Lehmann shift points the same way
 *   improvement   effect_pct > threshold_pct, p < alpha, the shift agrees
 *   inconclusive  beyond the threshold without significance
 *
 * Small samples.  The exact two-sided p cannot fall below a floor set by
 * the counts: paired, stats_wsr_min_p(n_pairs) is 0.25 with 3 pairs and
 * 0.031 with 6; unpaired, stats_mw_min_p(n_base, n_patched) is 0.1 with
 * 3 + 3.  So with alpha 0.05 a change beyond the threshold is ALWAYS
 * inconclusive at 3 runs per side, however large.  That is deliberate:
 * three runs cannot tell a slowdown from a bad minute.  The key's reason
 * then says so and gives the smallest p reachable; the job asks for more
 * repetitions, up to the context's max_repetitions.
 *
 * Follow-ups.  A job that is pending-more-repetitions gets a follow-up job
 * on the same host with the same build directories; the caller then
 * evaluates the key again on the samples of the job and all its follow-ups
 * together, with repetitions = the runs per side so far.  Only a
 * worse-direction inconclusive gated key, or a gated key called noisy on
 * too few runs, asks for more: an inconclusive improvement cannot fail the
 * check, so it is reported and costs no host time.
 */

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"
#include "profile.h"

/* What a context sets (profile.h "contexts"). */
struct verdict_params {
	double threshold_pct;		/* (0, 100] */
	double alpha;			/* (0, 0.5] */
	double noise_limit_pct;		/* (0, 100] */
};

#define VERDICT_PARAMS_DEFAULT { 5.0, 0.05, 5.0 }

/* The context's threshold_pct, alpha and noise_limit_pct. */
void verdict_params_from_context(const struct profile_context *ctx, struct verdict_params *p);

enum verdict_class {
	VERDICT_NO_CHANGE = 0,
	VERDICT_IMPROVEMENT,
	VERDICT_REGRESSION,
	VERDICT_INCONCLUSIVE,
	VERDICT_NOISY,
	VERDICT_MISSING,
};

/* "no-change", "improvement", "regression", "inconclusive", "noisy",
 * "missing". */
const char *verdict_class_name(enum verdict_class c);

/* One key's samples.  Pointers are borrowed for the call; the strings
 * also by the result (they must outlive it). */
struct verdict_key_in {
	const char *benchmark;		/* the profile's benchmark name */
	const char *key;		/* the result key (the samples' metric) */
	const double *base;		/* finite values; NULL when n_base is 0 */
	size_t n_base;
	const double *patched;
	size_t n_patched;
	bool higher_is_better;		/* profile_key_higher_is_better(key) */
	bool gated;			/* profile_gate_matches(benchmark, key):
					 * false keys are reported only */
	/* The runs done back to back: pair_base[i] and pair_patched[i] are
	 * the two sides of one repetition (values also in base[] and
	 * patched[]).  NULL when n_pairs is 0: the comparison is then
	 * unpaired. */
	const double *pair_base, *pair_patched;
	size_t n_pairs;
};

#define VERDICT_REASON_MAX 200

struct verdict_key {
	const char *benchmark, *key;	/* the input's strings */
	bool gated, higher_is_better;
	enum verdict_class cls;
	size_t n_base, n_patched;
	double base_median, patched_median;	/* NaN for a side without samples */
	double delta;			/* patched_median - base_median */
	bool paired;			/* the comparison used the pairs */
	size_t n_pairs;			/* the pairs used; 0 when unpaired */
	double change_pct;		/* paired: 100 (median of the ratios
					 * patched_i/base_i - 1); unpaired: 100
					 * (patched/base medians - 1), and when
					 * the base median is 0: 0 if the
					 * patched one is too, else +-inf */
	double effect_pct;		/* change_pct, negated for lower-is-better */
	double p;			/* two-sided p: Wilcoxon signed-rank on
					 * the log ratios when paired, else
					 * Mann-Whitney */
	bool p_exact;
	double p_min;			/* the smallest p these n can give */
	double hl_effect_pct;		/* the Hodges-Lehmann shift as a change
					 * in %, signed like effect_pct: paired,
					 * exp(Walsh median of the log ratios) -
					 * 1; unpaired, shift / |base median| */
	double hl_lo_pct, hl_hi_pct;	/* its interval (paired: of the Walsh
					 * median, stats_walsh_interval()),
					 * same scale and sign, lo <= hi */
	double hl_conf;			/* the level that interval achieves; the
					 * level asked is 1 - alpha */
	double base_cv_pct, patched_cv_pct;	/* robust CV; NaN with < 2 values */
	double noise_pct;		/* what the noise rule compared: the
					 * ratios' robust CV when paired, else
					 * base_cv_pct */
	/* Why this class, for people: "-7.2% beyond -5% and p=0.0079 <
	 * 0.05", "+1.1% within 5%", "ratio CV 9.1% > noise limit 5%",
	 * "-6.4% beyond -5% but p=0.25 >= 0.05: 3 pairs cannot reach p <
	 * 0.05 (smallest p 0.25)", "no samples on the patched side". */
	char reason[VERDICT_REASON_MAX];
};

/*
 * Classify one key by the rules above.  Every numeric field is NaN when
 * undefined (a side without samples; no CV from one value).  Returns 0,
 * or -1 with err: PG_EINVAL for parameters out of their ranges, a NULL
 * name, or a sample that is not finite; PG_ENOMEM.
 */
int verdict_key_eval(const struct verdict_key_in *in, const struct verdict_params *params,
		     struct verdict_key *out, struct pg_err *err);

/* A check's state, in Patchwork's words. */
enum verdict_state {
	VERDICT_SUCCESS = 0,
	VERDICT_WARNING,
	VERDICT_PENDING,	/* more repetitions first (never posted as a
				 * final state) */
	VERDICT_FAIL,
};

/* "success", "warning", "pending", "fail". */
const char *verdict_state_name(enum verdict_state s);

/*
 * Why a job (and a context) ends as it does.  The order is the order of
 * precedence: when a context's jobs disagree, the one with the largest
 * value speaks for the context.  That makes fail beat pending (a
 * regression in one build mode fails the check whatever the other mode
 * still measures), pending beat warning (more runs may still turn into a
 * fail), and warning beat success.
 */
enum verdict_why {
	VERDICT_WHY_PASS = 0,		/* success: no gated key regressed */
	VERDICT_WHY_NO_GATED_KEY,	/* warning: no gated key has both sides */
	VERDICT_WHY_MISSING,		/* warning: a gated key lacks its
					 * patched side (outcome ok) */
	VERDICT_WHY_INCONCLUSIVE,	/* warning: still so at max_repetitions */
	VERDICT_WHY_NOISY,		/* warning: noisy host */
	VERDICT_WHY_BENCH_FAILURE,	/* warning: a benchmark failed on both
					 * sides, on the base side, or in some
					 * runs only */
	VERDICT_WHY_BASE_BUILD,		/* warning: the base did not build */
	VERDICT_WHY_INFRA,		/* warning: infrastructure error after
					 * the scheduler's retries */
	VERDICT_WHY_APPLY,		/* warning: the series did not apply */
	VERDICT_WHY_ALREADY_APPLIED,	/* warning: every patch of the series is
					 * already in the tree tested: both sides
					 * are the same tree, nothing measured */
	VERDICT_WHY_MORE_REPETITIONS,	/* pending */
	VERDICT_WHY_PATCHED_CRASH,	/* fail: a gated key's benchmark ran on
					 * the base side and failed on the
					 * patched side */
	VERDICT_WHY_REGRESSION,		/* fail */
	VERDICT_WHY_BUILD,		/* fail: the patched side did not build
					 * where the base did */
};

/* "pass", "no-gated-key", "missing", "inconclusive", "noisy",
 * "bench-failure", "base-build-failure", "infra-error", "apply-failure",
 * "already-applied", "more-repetitions", "patched-crash", "regression", "build-failure". */
const char *verdict_why_name(enum verdict_why w);

/* One job: one build mode of a context, run on one host. */
struct verdict_job_in {
	const char *build_mode;		/* e.g. "release" */
	const char *host;		/* the agent that ran it */
	const char *outcome;		/* the job's outcome: ok, apply-failure,
					 * base-build-failure,
					 * patched-build-failure, bench-failure,
					 * infra-error */
	int repetitions;		/* runs per side so far (the job and its
					 * follow-ups), >= 0 */
	int max_repetitions;		/* the context's cap, >= 0 */
	const struct verdict_params *params;	/* those the keys were
						 * evaluated with */
	const struct verdict_key *keys;	/* from verdict_key_eval() */
	size_t n_keys;
	bool already_applied;		/* outcome ok without a measurement:
					 * every patch was already applied */
};

#define VERDICT_DESC_MAX 256		/* room for any description + NUL */
#define VERDICT_DESC_LIMIT 200		/* the longest one we write */

struct verdict_job {
	const struct verdict_job_in *in;	/* the input (borrowed) */
	enum verdict_state state;
	enum verdict_why why;
	/* The key the summary names: the worst regression, the patched-side
	 * failure, the worst worse-direction inconclusive key, the noisiest
	 * key (noise_pct), the missing key; on success the gated key with the lowest
	 * effect.  NULL when no key is involved. */
	const struct verdict_key *worst;
	/* When pending: how many more runs per side to ask of the follow-up
	 * (as many again as so far, up to the cap; at least 1).  0 else. */
	int more_repetitions;
	size_t n_gated, n_regressions, n_improvements, n_inconclusive, n_noisy,
	       n_missing;		/* gated keys per class */
	/* A few words, without the "Performance Testing ..." prefix:
	 * "mempool.cache...: -7.2% (p=0.004) on release", "noisy host lab-3
	 * (ratio CV 9.1% > 5%)" ("base CV" when unpaired), "apply patch
	 * failure".  At most VERDICT_DESC_LIMIT bytes. */
	char summary[VERDICT_DESC_MAX];
};

/*
 * The job's state.  By outcome: apply-failure, base-build-failure and
 * infra-error are warnings and patched-build-failure a fail, whatever the
 * keys say (there are no comparable samples); so is ok with
 * already_applied (a warning: nothing was measured, as nothing changed).  For ok and bench-failure,
 * from the GATED keys: any regression fails; for bench-failure, a gated
 * key with base samples and no patched ones fails too (the patch broke the
 * benchmark, as a patched build failure fails); then an inconclusive
 * worse-direction key, or else a key called noisy on too few runs (the
 * key rules above), is pending while repetitions < max_repetitions;
 * then warnings (bench-failure otherwise, noisy, inconclusive at the cap,
 * a gated key with base samples and no patched ones, no gated key compared
 * at all); success otherwise.  A gated key that only the patched side has
 * (the series adds a test case) is reported, not warned about.  Ungated
 * keys never change the state.  Returns 0, or -1 with PG_EINVAL (unknown outcome,
 * NULL names, negative repetitions, params out of range).
 */
int verdict_job_eval(const struct verdict_job_in *in, struct verdict_job *out,
		     struct pg_err *err);

struct verdict_context {
	enum verdict_state state;	/* Patchwork's state (pending: a job
					 * waits for more repetitions) */
	enum verdict_why why;
	const struct verdict_job *job;	/* the job that decided it */
	/* Patchwork's description, under VERDICT_DESC_LIMIT bytes, in DPDK's
	 * habit: "Performance Testing PASS", "Performance Testing FAIL:
	 * KEY: -7.2% (p=0.004) on release", "apply patch failure", "build
	 * failure", "Performance Testing WARNING: noisy host lab-3 (ratio CV
	 * 9.1% > 5%)", "Performance Testing PENDING: ...".  A pass adds its
	 * worst gated key: "Performance Testing PASS (worst: KEY -1.2% on
	 * release)". */
	char description[VERDICT_DESC_MAX];
};

/*
 * Aggregate the jobs[0..n) of one context (one per build mode): the job
 * with the greatest `why` decides (ties: the worse key, else the first).
 * Returns 0, or -1 with PG_EINVAL when n is 0.
 */
int verdict_context_eval(const struct verdict_job *jobs, size_t n,
			 struct verdict_context *out, struct pg_err *err);

/*
 * The before/after table, plain text, one row per key in the order given:
 *
 *   benchmark     key                 runs  base       patched    delta     change  p       verdict
 *   mempool_perf  mempool.cache...    5/5   152620236  141936819  -10683417  -7.0%  0.0079  regression
 *
 * "runs" is base/patched samples; medians and delta are printed whole
 * from 1000 up to 1e12, else with 4 significant digits; "-" for
 * undefined; change and p as in descriptions (a line under the table says
 * how they were found when a key was compared in pairs: then change is not
 * patched/base - 1 of the medians shown); a verdict in parentheses is
 * reported only (key not gated); "*" after a key marks lower-is-better.
 * Keys longer than 64 bytes are shortened in the middle with "...".
 * Appends to out; returns 0, or -1 with err when out's limit is reached
 * (PG_ETOOBIG) or memory runs out.
 */
int verdict_table_text(struct pg_buf *out, const struct verdict_key *keys, size_t n,
		       struct pg_err *err);

#endif
