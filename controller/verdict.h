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
 * Key rules: from the interval, not the point (issue 16).  A key is
 * decided only when its data show the answer; a point estimate inside the
 * threshold says nothing when the interval around it is wide.  With est
 * the point estimate (effect_pct) and [lo, hi] the change's
 * distribution-free (1 - alpha) confidence interval (hl_lo_pct,
 * hl_hi_pct: the Walsh-average interval of the log ratios when paired,
 * the two-sample Hodges-Lehmann interval when not), in order (the first
 * that applies):
 *
 *   missing       a side has no samples
 *   inconclusive  the interval does not reach the level asked (ci_valid
 *                 false: 3 pairs reach at most 75 %, 5 pairs 94 %; 6 pairs
 *                 are the fewest that give 95 %): too few runs for any
 *                 interval is never a pass
 *   regression    hi < 0 (the interval lies wholly below 0: the change is
 *                 significant) and est < -threshold
 *   improvement   lo > 0 and est > +threshold
 *   no-change     lo > -threshold: the data exclude a regression of the
 *                 threshold's size (a pass; the estimate may still be an
 *                 improvement too small or too uncertain to report)
 *   noisy         undecided, and the noise (the ratios' robust CV when
 *                 paired, else the base side's; stats_cv_robust()) exceeds
 *                 noise_limit_pct: the reason to give is the host
 *   inconclusive  undecided otherwise
 *
 * Why "significant and beyond the threshold" for a regression rather than
 * the stricter "the whole interval beyond -threshold": with the 6 to 24
 * pairs a context can afford, the stricter rule would call nearly every
 * real regression of one or two thresholds inconclusive on a lab host, so
 * maintainers would get warnings for slowdowns the data do show.  At one
 * look the rule kept fails a patch that changes nothing at most alpha / 2
 * of the time (the interval would have to miss 0 on the worse side), and
 * a pass still needs the interval to exclude the threshold, so a real
 * regression of 1.5 thresholds passes about as rarely.  Each follow-up is
 * one more look: bench/verdict_sim.c measures both with them (A/A fails
 * at most 4.2 %, 1.5-threshold regressions pass at most 2.5 %, at 0.5 to
 * 30 % noise).  The price: a real change of half the threshold fails up
 * to about 10 % of the time on a noisy host (its estimate strays beyond
 * -threshold while its interval excludes 0).  The noise limit no longer hides a
 * decision the interval makes: a -50 % change on a noisy host is a
 * regression, and a pass on one has an interval that excludes the
 * threshold.  Noise only names why a key stayed undecided.
 *
 * The minimum detectable effect (mde_pct, verdict_mde_pct()): the
 * smallest slowdown whose interval would lie wholly below 0 with power
 * VERDICT_MDE_POWER, given the spread the key's runs show and the runs
 * done: what this host resolves with these runs.  When it is larger than
 * the threshold a pass is still sound (its interval excluded the
 * threshold), but a regression must be larger than the MDE to be found
 * reliably, and the texts say so.
 *
 * Small samples.  The exact two-sided p cannot fall below a floor set by
 * the counts: paired, stats_wsr_min_p(n_pairs) is 0.25 with 3 pairs and
 * 0.031 with 6; unpaired, stats_mw_min_p(n_base, n_patched) is 0.1 with
 * 3 + 3.  The interval's level has the same floor (1 - p_min), so with
 * alpha 0.05 a key is ALWAYS inconclusive at 3 runs per side, however
 * large the change: three runs cannot tell a slowdown from a bad minute,
 * nor a pass from luck.  The key's reason says so; the job asks for more
 * repetitions, up to the context's max_repetitions.
 *
 * Follow-ups.  A job that is pending-more-repetitions gets a follow-up job
 * on the same host with the same build directories; the caller then
 * evaluates the key again on the samples of the job and all its follow-ups
 * together, with repetitions = the runs per side so far.  Every undecided
 * gated key (inconclusive or noisy) asks for more, whichever way its
 * estimate points: a pass needs the interval to exclude a regression.  A
 * decided key asks for nothing.  How many more: pairs_needed, the runs per
 * side at which the key's interval is expected to decide, from its spread
 * and the distance of its estimate from the boundary it must clear
 * (verdict_pairs_needed()); the job asks for the largest of its keys',
 * within the cap.  A key whose interval is valid and that would need more
 * than VERDICT_HOPELESS times the cap stops asking (at the cap its
 * interval would still be twice too wide): more runs would be waste, and
 * the warning says what the host can resolve.
 */

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"
#include "profile.h"

/* What a context sets (profile.h "contexts"). */
struct verdict_params {
	double threshold_pct;		/* (0, 100] */
	double alpha;			/* (0, 0.5]: the interval's level is
					 * 1 - alpha */
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
	bool ci_valid;			/* hl_conf reaches 1 - alpha (less a
					 * rounding tolerance): the interval can
					 * decide */
	double sigma;			/* the spread mde_pct comes from: the
					 * robust SD (MAD * STATS_MAD_NORMAL) of
					 * the log ratios when paired, else the
					 * root mean square of the sides' robust
					 * CVs (a fraction); NaN without a
					 * comparison */
	double mde_pct;			/* the minimum detectable effect
					 * (above): a positive size in %, NaN
					 * without a comparison */
	int pairs_needed;		/* runs per side at which the interval
					 * is expected to decide (paired: pairs);
					 * 0 when decided or undefined; may
					 * exceed any cap */
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

/* A key stops asking for runs when it needs this many times the cap. */
#define VERDICT_HOPELESS 4

/* The power at which mde_pct is stated. */
#define VERDICT_MDE_POWER 0.8

/* pairs_needed for a key that no number of runs is expected to decide
 * (its estimate sits on the boundary it must clear). */
#define VERDICT_PAIRS_NEVER 1000000

/*
 * The minimum detectable effect of the rules above, in % (a positive size
 * of slowdown): the smallest true change whose (1 - alpha) interval lies
 * wholly below 0 with probability `power`, for runs of spread *sigma (the
 * standard deviation of the log ratios when paired, n_base = n_patched =
 * the pairs; of each side's values relative to its centre when not).
 * The interval's upper bound is location and scale equivariant, so the
 * answer is the spread times a quantile that depends only on the counts,
 * alpha and power; that quantile is simulated (normal runs, a fixed seed,
 * so the same inputs always give the same answer; the exact small-sample
 * intervals have no closed form) and kept for reuse; past 64 pairs it is
 * the normal approximation, (z_{1-alpha/2} + z_power) sqrt(pi / 3n).
 *
 * *sigma is also an output: the spread used, the larger of the one given
 * and the one that width (the observed interval's width in the same
 * scale; NaN or 0 to ignore) implies, width over the median width of the
 * simulated unit-spread intervals.  So runs in two clusters, whose robust
 * spread is small but whose interval is wide, are not credited with a
 * resolution they did not show.
 *
 * INFINITY when the counts give no interval at 1 - alpha (no change,
 * however large, is called a regression); 0 when the spread is 0.
 * Thread-safe.  Returns 0, or -1 with PG_EINVAL (alpha or power out of
 * (0, 1), *sigma negative or not finite, a count of 0) or PG_ENOMEM.
 */
int verdict_mde_pct(bool paired, size_t n_base, size_t n_patched, double *sigma, double width,
		    double alpha, double power, double *out, struct pg_err *err);

/*
 * The runs per side at which an interval of spread sigma (as above, paired
 * or per side) is expected to lie wholly on one side of a boundary at
 * distance margin (same scale as sigma: a log ratio when paired) with
 * probability power: the smallest n >= n_min with
 * (z_{1-alpha/2} + z_power) sqrt(pi / 3n) sigma <= margin, where n_min is
 * the fewest runs whose interval reaches 1 - alpha.  VERDICT_PAIRS_NEVER
 * when margin <= 0 or the answer is larger.  Pure.
 */
int verdict_pairs_needed(bool paired, double sigma, double margin, double alpha, double power);

/* Whether an interval of achieved level conf reaches 1 - alpha (a hair
 * under it from rounding still does). */
bool verdict_level_reached(double conf, double alpha);

/* The fewest pairs (paired) or runs per side (not) whose interval reaches
 * level 1 - alpha: 6 for alpha 0.05 paired, 4 unpaired. */
int verdict_min_runs(bool paired, double alpha);

/*
 * Whether context c can ever decide a pass: its max_repetitions pairs must
 * reach a (1 - alpha) interval (verdict_min_runs), or every verdict at
 * the cap is inconclusive (a warning or a fail, never success).  Returns
 * 0 when it can; 1 with why (one line naming the context) when not.
 */
int verdict_context_can_pass(const struct profile_context *c, char *why, size_t size);

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
	 * failure, the worst inconclusive key (lowest effect), the noisiest
	 * key (noise_pct), the missing key; on success the gated key with the lowest
	 * effect.  NULL when no key is involved. */
	const struct verdict_key *worst;
	/* When pending: how many more runs per side to ask of the follow-up
	 * (the largest pairs_needed of the keys that ask, less the runs so
	 * far, within the cap; at least 1).  0 else. */
	int more_repetitions;
	size_t n_gated, n_regressions, n_improvements, n_inconclusive, n_noisy,
	       n_missing;		/* gated keys per class */
	/* A few words, without the "Performance Testing ..." prefix; every
	 * measured one names its key, the change and its interval (in the
	 * change's scale), and the MDE where the host resolves less than the
	 * threshold: "mempool.cache...: -7.2% (95% CI -9.1%..-5.3%, p=0.004)
	 * on release", "4 keys exclude -5%; worst KEY -1.2%, CI
	 * -3.0%..+0.4% on release", "inconclusive KEY: -8.6%, 95% CI
	 * -31.0%..+14.0%: this host cannot resolve 10% with 6 runs (MDE
	 * 35.2%) on release", "noisy host lab-3 (ratio CV 31.0% > 15%): KEY
	 * ...", "apply patch failure".  At most VERDICT_DESC_LIMIT bytes. */
	char summary[VERDICT_DESC_MAX];
};

/*
 * The job's state.  By outcome: apply-failure, base-build-failure and
 * infra-error are warnings and patched-build-failure a fail, whatever the
 * keys say (there are no comparable samples); so is ok with
 * already_applied (a warning: nothing was measured, as nothing changed).  For ok and bench-failure,
 * from the GATED keys: any regression fails; for bench-failure, a gated
 * key with base samples and no patched ones fails too (the patch broke the
 * benchmark, as a patched build failure fails); then an undecided key
 * (inconclusive, else noisy) that asks for more runs (the follow-ups
 * above: no valid interval yet, or pairs_needed within the cap) is
 * pending while repetitions < max_repetitions; then warnings
 * (bench-failure otherwise, noisy, inconclusive at the cap or beyond it,
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
	 * 9.1% > 5%)", "Performance Testing PENDING: ...".  A pass says how
	 * many keys decided it and its worst gated key: "Performance Testing
	 * PASS (4 keys exclude -5%; worst KEY -1.2%, CI -3.0%..+0.4% on
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
