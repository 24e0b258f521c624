/* SPDX-License-Identifier: MIT */
#ifndef CTL_STATS_H
#define CTL_STATS_H

/*
 * The statistics behind a verdict (DESIGN.md section 2.6): location and
 * spread of one side's repetitions, and the comparison of the two sides by
 * ranks (Mann-Whitney U, Hodges-Lehmann shift), and of paired runs by the
 * signs and ranks of their differences (Wilcoxon signed-rank, Walsh-average
 * median).  Pure functions: no I/O, no global state; the only resource
 * they take is memory for sorted copies.
 *
 * Common contract.  A sample is an array x[0..n) that is never modified.
 * Every value must be finite: a NaN or an infinity anywhere fails the call
 * with PG_EINVAL naming its index (the store never holds one, since
 * sched_result() rejects them, so one here is a bug to report, not data to
 * average).  A sample may hold at most STATS_MAX_N values (PG_ETOOBIG
 * beyond).  x may be NULL when n is 0 (NULL with n > 0 is PG_EINVAL).
 * When a statistic is undefined for the n given (n = 0, or n = 1 for a
 * spread), the call succeeds and the result is NaN: "not enough data" is
 * an answer, not an error.  Memory failure is PG_ENOMEM.  Functions return
 * 0, or -1 with err set.
 *
 * Reference values: tests/stats/reference.py computes every statistic here
 * independently (numpy, scipy.stats.mannwhitneyu and wilcoxon, R's
 * wilcox.test when it is installed) into the .txt files of tests/stats/,
 * which test_stats.c compares against.
 */

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define STATS_MAX_N (1u << 20)		/* values per sample */

/* The consistency constant that makes the MAD estimate the standard
 * deviation of a normal distribution (1/Phi^-1(3/4), rounded as R does). */
#define STATS_MAD_NORMAL 1.4826

/* The largest n1 + n2 for which the Mann-Whitney null distribution is
 * counted exactly: C(60, 30) ~ 1.2e17 still fits an int64 counter. */
#define STATS_MW_EXACT_MAX 60

/* Median of x[0..n): the middle value of a sorted copy, or the mean of the
 * two middle values when n is even (computed as a/2 + b/2, which cannot
 * overflow).  NaN when n = 0. */
int stats_median(const double *x, size_t n, double *out, struct pg_err *err);

/* Median absolute deviation: median(|x_i - median(x)|), raw (multiply by
 * STATS_MAD_NORMAL for a standard-deviation estimate).  NaN when n = 0;
 * 0 when n = 1 or when more than half the values are equal. */
int stats_mad(const double *x, size_t n, double *out, struct pg_err *err);

/* Arithmetic mean (a running mean, so that huge values do not overflow the
 * sum).  NaN when n = 0. */
int stats_mean(const double *x, size_t n, double *out, struct pg_err *err);

/* Sample standard deviation (divisor n - 1, two passes).  NaN when n < 2. */
int stats_stddev(const double *x, size_t n, double *out, struct pg_err *err);

/*
 * Coefficient of variation as a fraction (0.05 is 5 %), two flavours:
 *
 *   stats_cv          stddev / |mean|
 *   stats_cv_robust   MAD * STATS_MAD_NORMAL / |median|
 *
 * Both are NaN when n < 2; 0 when the spread is 0 (all values equal, even
 * all zero); NaN when the spread is not 0 but the centre is.
 *
 * The verdict uses the robust one for its noise check: the comparison
 * itself is by medians and ranks, which one stray repetition (a run that an
 * interrupt or a frequency change slowed down) barely moves; a classic CV
 * would call the host noisy for that one run, and the noise check would
 * then withhold verdicts that the rank test can still give.  The robust CV
 * says how spread the bulk of the runs is, which is what decides whether a
 * 5 % median shift can be told from noise.
 */
int stats_cv(const double *x, size_t n, double *out, struct pg_err *err);
int stats_cv_robust(const double *x, size_t n, double *out, struct pg_err *err);

/* A Mann-Whitney U test of x against y. */
struct stats_mw {
	double u;	/* U of x: pairs (x_i, y_j) with x_i > y_j, plus half
			 * the pairs with x_i == y_j; 0..nx*ny.  NaN when a
			 * side is empty.  (scipy's "statistic".) */
	double p;	/* two-sided p-value in (0, 1]; NaN when a side is
			 * empty */
	double z;	/* the normal approximation's z (continuity
			 * corrected, >= -0.5/sigma); NaN when exact */
	bool exact;	/* p from the exact null distribution */
	bool ties;	/* some value occurs more than once in x and y
			 * together */
};

/*
 * Two-sided Mann-Whitney U test (Wilcoxon rank-sum) of x[0..nx) against
 * y[0..ny).  With no ties and nx + ny <= STATS_MW_EXACT_MAX, p comes from
 * the exact null distribution of U (counted as the coefficients of the
 * Gaussian binomial [nx+ny choose nx]_q): p = 2 P(U >= max(U, nx*ny - U)),
 * capped at 1, as scipy.stats.mannwhitneyu(method="exact") computes it.
 * Otherwise the normal approximation with tie correction and continuity
 * correction: sigma^2 = nx*ny/12 * ((N+1) - sum(t^3 - t)/(N(N-1))) over
 * the groups of t tied values, z = (max(U, nx*ny - U) - nx*ny/2 - 0.5) /
 * sigma, p = 2 (1 - Phi(z)) capped at 1, as method="asymptotic".  When
 * every value is equal (sigma = 0) p is 1.  A side with no values gives
 * u = p = NaN (and exact false).
 */
int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		       struct stats_mw *out, struct pg_err *err);

/*
 * The smallest two-sided p-value the test above can give for sample sizes
 * nx and ny: the p of complete separation without ties, exact (2 /
 * C(nx+ny, nx), capped at 1) when nx + ny <= STATS_MW_EXACT_MAX, else by
 * the same normal approximation.  With 3 + 3 values it is 0.1, with 4 + 4
 * 0.029, with 5 + 5 0.0079: alpha = 0.05 needs at least 4 per side.  NaN
 * when nx or ny is 0.
 */
double stats_mw_min_p(size_t nx, size_t ny);

/* A Hodges-Lehmann estimate and its confidence interval. */
struct stats_hl {
	double shift;	/* median of the nx*ny differences x_i - y_j */
	double lo, hi;	/* the confidence interval, lo <= shift <= hi */
	double conf;	/* the confidence level the interval achieves */
	bool exact;	/* the interval's ranks come from the exact
			 * distribution of U */
};

/*
 * Hodges-Lehmann shift of x against y (the median of all pairwise
 * differences x_i - y_j: with x the patched side and y the base side, a
 * positive shift means the patched values are larger) and its
 * distribution-free confidence interval at level conf_level (0 < level <
 * 1), by the Moses/Bauer method that R's wilcox.test(x, y, conf.int = TRUE)
 * uses: with D(1) <= ... <= D(nx*ny) the sorted differences and k the
 * smallest integer with P(U <= k) >= (1 - conf_level)/2 (at least 1), the
 * interval is [D(k), D(nx*ny + 1 - k)] and its level is 1 - 2 P(U <= k-1).
 * P is the exact null distribution of U when the test above is exact (no
 * ties, nx + ny <= STATS_MW_EXACT_MAX), else its normal approximation with
 * the same tie and continuity corrections: k = ceil(nx*ny/2 - 0.5 -
 * z_{(1+level)/2} sigma), at least 1, at most ceil(nx*ny/2).  The level
 * achieved can fall short of the level asked for: with 3 + 3 values the
 * widest interval, [min D, max D], has level 0.9.
 *
 * The differences are never stored: order statistics of x_i - y_j are
 * found by bisection over the doubles, counting the differences at most a
 * value in O(nx + ny) on sorted copies, so memory stays O(nx + ny).  All
 * fields are NaN (exact false) when a side is empty; conf_level outside
 * (0, 1) is PG_EINVAL.
 */
int stats_hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny,
			 double conf_level, struct stats_hl *out, struct pg_err *err);

/* The largest number of nonzero differences for which the signed-rank null
 * distribution is counted exactly (scipy's own switch, len(d) <= 50): its
 * 2^50 sign assignments still fit an int64 counter, and every count and
 * tail, as a multiple of 2^-50 below 1, is exact in a double. */
#define STATS_WSR_EXACT_MAX 50

/* A Wilcoxon signed-rank test of paired differences d. */
struct stats_wsr {
	double w_plus;	/* the sum of the ranks of |d_i| (average ranks for
			 * ties) over the positive d_i; 0..n(n+1)/2, above
			 * n(n+1)/4 when positive differences dominate.  NaN
			 * when n is 0.  (R's V; scipy's two-sided
			 * "statistic" is min(w_plus, n(n+1)/2 - w_plus).) */
	size_t n;	/* the nonzero differences, the ones ranked */
	double p;	/* two-sided p-value in (0, 1]; NaN when n is 0 */
	double z;	/* the normal approximation's z, continuity
			 * corrected, signed like w_plus - n(n+1)/4 (R's
			 * z; scipy's zstatistic is -|z|); NaN when exact */
	bool exact;	/* p from the exact null distribution */
	bool ties;	/* some |d_i| occurs more than once among the
			 * nonzero d_i */
};

/*
 * Two-sided Wilcoxon signed-rank test of d[0..nd) against a distribution
 * symmetric about 0 (for paired runs, d_i = log(patched_i / base_i)).
 * Zeros are dropped before ranking (scipy's default zero_method="wilcox",
 * R's wilcox.test): n counts the rest, ranked by |d_i| with average ranks
 * for ties.  With no zeros, no ties and n <= STATS_WSR_EXACT_MAX, p comes
 * from the exact null distribution of W+ (the 2^n equally likely sign
 * assignments, counted by a DP over rank sums): p = 2 P(W+ <= min(w_plus,
 * n(n+1)/2 - w_plus)), capped at 1, as scipy.stats.wilcoxon(method=
 * "exact") computes it.  Otherwise (a zero or a tie makes the ranks no
 * longer a permutation of 1..n) the normal approximation with tie and
 * continuity corrections, as scipy's method="approx", correction=True and
 * R's wilcox.test(exact=FALSE, correct=TRUE): sigma^2 = n(n+1)(2n+1)/24 -
 * sum(t^3 - t)/48 over the groups of t tied |d_i|, z = (w_plus - n(n+1)/4
 * - 0.5 sign(w_plus - n(n+1)/4)) / sigma, p = 2 (1 - Phi(|z|)) capped at
 * 1.  sigma > 0 whenever n >= 1.
 *
 * When nd is 0 or every d_i is 0 nothing is left to rank: n = 0 and
 * w_plus = p = z = NaN (exact and ties false), as scipy answers for an
 * empty sample and R (p = NA) for all zeros; scipy raises ValueError for
 * all zeros.  "Not enough data" is an answer, as everywhere here.
 */
int stats_wilcoxon_signed_rank(const double *d, size_t nd, struct stats_wsr *out,
			       struct pg_err *err);

/*
 * The smallest two-sided p-value the signed-rank test can give for n
 * nonzero differences: the p of n differences of one sign without ties,
 * exact (2 / 2^n, capped at 1) when n <= STATS_WSR_EXACT_MAX, else by the
 * normal approximation above.  With n = 3 it is 0.25, 5 0.0625, 6 0.03125:
 * alpha = 0.05 needs at least 6 pairs.  NaN when n is 0.
 */
double stats_wsr_min_p(size_t n);

/*
 * The one-sample Hodges-Lehmann estimate of the centre of d[0..nd): the
 * median of the nd(nd+1)/2 Walsh averages (d_i + d_j)/2, i <= j (computed
 * as d_i/2 + d_j/2, which cannot overflow).  Zeros are kept: a pair that
 * did not change is evidence of no change (R's wilcox.test(conf.int=TRUE)
 * gives this estimate only without zeros and ties; otherwise it drops the
 * zeros and finds a root instead).  Found by bisection like the two-sample
 * shift, in O(nd) memory.  NaN when nd is 0.
 */
int stats_walsh_median(const double *d, size_t nd, double *out, struct pg_err *err);

/*
 * The Walsh median of d[0..nd) (stats_walsh_median()) in out->shift, and
 * its distribution-free confidence interval at conf_level (0 < level <
 * 1) as R's wilcox.test(d, conf.int = TRUE) computes it when exact: with
 * W(1) <= ... <= W(M) the M = nd(nd+1)/2 sorted Walsh averages and k the
 * smallest integer with P(W+ <= k) >= (1 - conf_level)/2 (at least 1), the
 * interval is [W(k), W(M + 1 - k)] and its level 1 - 2 P(W+ <= k - 1),
 * P the exact signed-rank distribution (out->exact) when nd <=
 * STATS_WSR_EXACT_MAX and no d_i is 0 and no two |d_i| are equal.
 * Otherwise k comes from the normal approximation without tie
 * correction, k = ceil(M/2 - 0.5 - z_{(1+level)/2} sigma), sigma^2 =
 * nd(nd+1)(2nd+1)/24, between 1 and ceil(M/2): an approximation where R
 * finds a root of the tie-corrected statistic instead.  With 3 values
 * the widest interval, [min, max], has level 0.75.  All fields NaN (exact
 * false) when nd is 0; a level outside (0, 1) is PG_EINVAL.
 */
int stats_walsh_interval(const double *d, size_t nd, double conf_level, struct stats_hl *out,
			 struct pg_err *err);

/* The standard normal distribution: upper tail 1 - Phi(z) (via erfc, so
 * accurate far into the tail), and the quantile Phi^-1(p) for 0 < p < 1
 * (Wichura's AS 241, about 1e-16 relative; -inf / +inf at 0 / 1, NaN
 * outside [0, 1]). */
double stats_norm_sf(double z);
double stats_norm_quantile(double p);

#endif
