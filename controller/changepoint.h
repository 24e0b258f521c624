/* SPDX-License-Identifier: MIT */
#ifndef CTL_CHANGEPOINT_H
#define CTL_CHANGEPOINT_H

/*
 * Change points in a main branch's history (DESIGN.md section 2.6): has
 * the level of a benchmark key moved between two commits?  Pure: no
 * store, no I/O (verdict_pass.h feeds it the history and records what it
 * finds).
 *
 * The input is one value per commit, in the order the commits were first
 * measured, starting after the last change point already recorded (a
 * segment of one level, as far as anyone knows).  The method, after the
 * anchors (chromeperf, LNT, Otava: locate, then test, then ask for a
 * minimum magnitude):
 *
 *  1. Locate: the split s (1 <= s < n) that best cuts x into two levels,
 *     the one minimising sum |x_i - median(left)| + sum |x_i -
 *     median(right)| (an L1 step fit: one wild value moves it far less
 *     than a least-squares fit; ties go to the earliest split).
 *  2. Wait: a split with fewer than min_points values on either side is
 *     not judged yet.  It is judged when enough commits after it have been
 *     measured; judging only the best split (rather than every split that
 *     has min_points after it) is what puts a step at the right commit: a
 *     split one commit early has a before-value among its after-values and
 *     is never the best fit.
 *  3. Test: two-sided Mann-Whitney U of x[s..n) against x[0..s) (stats.h),
 *     p < alpha; the medians' change at least min_change_pct; and the
 *     step at least CP_SPREAD_MULT times the robust spread (MAD *
 *     STATS_MAD_NORMAL) of the steadier side (chromeperf's
 *     MULTIPLE_OF_STD_DEV), so that a noisy series needs a bigger step.
 *
 * With 5 values after the split and 5 or more before, the exact p can
 * reach 0.0079 < 0.01; noise alone gives a median change of the size of
 * its spread, which the spread test and the minimum change keep from
 * being flagged.
 *
 * Simulated as the verdict pass runs it (bench/changes_sim.c: 400
 * histories of 500 commits per cell, a head baseline per push of 1-20
 * commits, lognormal noise, the search after each new value on the values
 * since the last change point, bisection by bisect.h):
 *  - with the 5 % threshold as minimum change (before issue 17), steps
 *    under 5 % were never found: 0 % of the steps of 3 times the noise at
 *    0.5 % and 1 % noise, 85 % at 2 % and 5 % noise; false alerts 0 to
 *    0.3 per 1,000 commits;
 *  - with cp_main_min_change() (1 %) and CP_SPREAD_MULT 2.5 (1,000
 *    histories per cell, seeds 17 and 99, today's bisection): a step of 3
 *    times the noise found (its commit in the change point's range) in
 *    97-98 % of histories, located at its commit in 95-96 %;
 *  - with CP_SPREAD_MULT 2: found in 98-99 %, ~50 commits after it on
 *    average (~5 pushes), located in 96-97 %; a step of 10 times the
 *    noise (up to 20 %) in all; false alerts (change points confirmed by
 *    bisection on a level that never moved) 0.01 to 0.18 per 1,000
 *    commits (0.01 to 0.15 with 2.5), and 0.01 to 0.49 dismissed by
 *    bisection (0.01 to 0.35).
 */

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* The step must be this many robust standard deviations.  A step of 3
 * times the noise is only 1.2 times 2.5 of them, and the spread of ~20
 * values, the MAD's, is itself ~25 % off at one standard deviation: with
 * 2.5 about 1 % of such steps were never found (the same values judged
 * again with the same spread).  With 2 the search flags more noise, which
 * bisection dismisses (its levels must differ, p < VERDICT_CP_ALPHA over
 * 10 commits a side): the false alerts stay far under 1 per 1,000
 * commits (changes_sim, above). */
#define CP_SPREAD_MULT 2.0

/* The minimum change of a main branch's search (cp_main_min_change()). */
#define CP_MAIN_MIN_CHANGE_PCT 1.0

/* The most values cp_detect() takes (callers keep the latest). */
#define CP_MAX_POINTS 256

struct cp_params {
	size_t min_points;		/* values on each side of a change, >= 2 */
	double alpha;			/* (0, 0.5] */
	double min_change_pct;		/* > 0: |median after / median before - 1|
					 * in percent */
};

#define CP_MIN_POINTS_DEFAULT 5
#define CP_ALPHA_DEFAULT 0.01
#define CP_PARAMS_DEFAULT { CP_MIN_POINTS_DEFAULT, CP_ALPHA_DEFAULT, 5.0 }

struct cp_change {
	bool found;
	size_t split;			/* the best split, also when not found
					 * (0 when n < 2): x[split] is the first
					 * value after it */
	double before_median, after_median;	/* NaN when not judged */
	double change_pct;		/* 100 (after/before - 1); +-inf when the
					 * before median is 0 and the after one
					 * is not */
	double p;			/* NaN when not judged */
	bool judged;			/* enough values on both sides to test */
};

/*
 * Look for one change in x[0..n) as above.  out->found says whether one
 * was found.  Returns 0, or -1 with err: PG_EINVAL for parameters out of
 * range, n > CP_MAX_POINTS, or a value that is not finite; PG_ENOMEM.
 */
int cp_detect(const double *x, size_t n, const struct cp_params *params,
	      struct cp_change *out, struct pg_err *err);

/*
 * The min_change_pct of the search on a main branch for a context whose
 * patch threshold is threshold_pct (> 0): the smaller of it and
 * CP_MAIN_MIN_CHANGE_PCT.  A patch's threshold says which change matters
 * in one verdict; a main branch's history is measured commit after
 * commit, and a step of 3 times its noise is worth finding even below the
 * threshold (issue 17).  The spread test (CP_SPREAD_MULT) is what keeps a
 * noisy series from being flagged; the floor only keeps a very steady one
 * from reporting steps nobody would act on.
 */
double cp_main_min_change(double threshold_pct);

#endif
