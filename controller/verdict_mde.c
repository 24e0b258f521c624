/* SPDX-License-Identifier: MIT */
/*
 * What a host can resolve: the minimum detectable effect of the interval
 * rules and the runs an undecided key needs (verdict.h).
 *
 * The paired interval is the Walsh-average interval of the log ratios
 * (stats_walsh_interval()); its upper bound under no change, for runs of
 * spread sigma, is sigma times a variable H that depends only on the count
 * and the level.  The MDE is the `power` quantile of sigma H: a true
 * slowdown of that size puts the whole interval below 0 that often.  For
 * small counts the interval is made of order statistics picked by the
 * exact signed-rank distribution (6 pairs: [min, max]), which no formula
 * follows closely, so the quantile is simulated from normal runs with a
 * fixed seed and kept per (count, alpha, power); past SIM_MAX_N the normal
 * approximation of the Hodges-Lehmann estimate (variance pi sigma^2 / 3n)
 * is within a few percent of the simulation and costs nothing.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "fmt.h"
#include "rng.h"
#include "stats.h"
#include "verdict.h"

#define SIM_MAX_N 64		/* simulate up to this count */
#define SIM_DRAWS 2000		/* draws per quantile: its standard error is
				 * about 2 % of it */
#define SIM_SEED 0x5045524647415445ULL

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

bool verdict_level_reached(double conf, double alpha)
{
	/* the achieved level is a sum of binary fractions: a hair under
	 * 1 - alpha from rounding still reaches it */
	return conf >= 1 - alpha - 1e-9;
}

int verdict_min_runs(bool paired, double alpha)
{
	for (size_t n = 1; n < 100000; n++) {
		double pmin = paired ? stats_wsr_min_p(n) : stats_mw_min_p(n, n);

		if (verdict_level_reached(1 - pmin, alpha))
			return (int)n;
	}
	return VERDICT_PAIRS_NEVER;
}

int verdict_context_can_pass(const struct profile_context *c, char *why, size_t size)
{
	int need = verdict_min_runs(true, c->alpha);

	if (c->max_repetitions >= need)
		return 0;
	pg_fmt_cut(why, size, "context %s: max_repetitions %d cannot reach a %g %% interval "
		   "(%d pairs at alpha %g): its verdicts can only warn or fail, never pass",
		   c->name, c->max_repetitions, 100 * (1 - c->alpha), need, c->alpha);
	return 1;
}

/* The normal approximation's quantile of H for n (per side when
 * unpaired: the two-sample estimate has twice the variance of one side's
 * with n runs per side). */
static double approx_q(bool paired, double n, double alpha, double power)
{
	double z = stats_norm_quantile(1 - alpha / 2) + stats_norm_quantile(power);

	return z * sqrt(M_PI / 3 / n * (paired ? 1 : 2));
}

/* The normal approximation's median width of the interval for unit
 * spread: twice the half-width z_{1-alpha/2} se. */
static double approx_w(bool paired, double n, double alpha)
{
	return 2 * stats_norm_quantile(1 - alpha / 2) * sqrt(M_PI / 3 / n * (paired ? 1 : 2));
}

/* What the simulation of unit-spread runs gives: the power quantile of
 * the interval's upper bound, and the median of its width. */
struct unit_ci {
	double q, w;
};

/* The simulated unit_ci; q NAN when memory runs out (the counts must
 * give an interval at the level: checked by the caller). */
static struct unit_ci sim_unit(bool paired, size_t nb, size_t np, double alpha, double power,
			       struct pg_err *err)
{
	struct pg_rng r = PG_RNG_INIT(SIM_SEED ^ (nb << 20) ^ np);
	double *x = malloc((nb + np) * sizeof(*x)), *h = malloc(2 * SIM_DRAWS * sizeof(*h));
	double *w = h + SIM_DRAWS;
	struct unit_ci u = { NAN, NAN };

	if (!x || !h) {
		pg_err_set(err, PG_ENOMEM, "out of memory for the MDE's simulation");
		goto out;
	}
	for (size_t d = 0; d < SIM_DRAWS; d++) {
		struct stats_hl ci;

		for (size_t i = 0; i < nb + np; i++)
			x[i] = pg_rng_normal(&r);
		if ((paired ? stats_walsh_interval(x, nb, 1 - alpha, &ci, err)
			    : stats_hodges_lehmann(x + nb, np, x, nb, 1 - alpha, &ci, err)) < 0)
			goto out;
		h[d] = ci.hi;
		w[d] = ci.hi - ci.lo;
	}
	qsort(h, SIM_DRAWS, sizeof(*h), cmp_double);
	qsort(w, SIM_DRAWS, sizeof(*w), cmp_double);
	u.q = h[(size_t)ceil(power * SIM_DRAWS) - 1];
	u.w = w[SIM_DRAWS / 2];
out:
	free(x);
	free(h);
	return u;
}

/* The paired quantiles found so far, per count; one lock for the few
 * threads (API workers, the verdict pass) that ask. */
static struct {
	double alpha, power;
	struct unit_ci u;
} cache[SIM_MAX_N + 1];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static struct unit_ci unit_of(bool paired, size_t nb, size_t np, double alpha, double power,
			      struct pg_err *err)
{
	struct unit_ci u;

	if (paired && nb > SIM_MAX_N)
		return (struct unit_ci){ approx_q(true, (double)nb, alpha, power),
					 approx_w(true, (double)nb, alpha) };
	if (!paired && nb + np > 2 * SIM_MAX_N) {
		/* the harmonic mean of the counts gives the two-sample
		 * estimate's variance */
		double n = 2.0 / (1.0 / (double)nb + 1.0 / (double)np);

		return (struct unit_ci){ approx_q(false, n, alpha, power),
					 approx_w(false, n, alpha) };
	}
	if (!paired)
		return sim_unit(false, nb, np, alpha, power, err);
	pthread_mutex_lock(&cache_lock);
	if (cache[nb].alpha == alpha && cache[nb].power == power) {
		u = cache[nb].u;
	} else {
		u = sim_unit(true, nb, 0, alpha, power, err);
		if (!isnan(u.q)) {
			cache[nb].alpha = alpha;
			cache[nb].power = power;
			cache[nb].u = u;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	return u;
}

int verdict_mde_pct(bool paired, size_t n_base, size_t n_patched, double *sigma, double width,
		    double alpha, double power, double *out, struct pg_err *err)
{
	struct unit_ci u;
	double pmin;

	*out = NAN;
	if (!(alpha > 0 && alpha < 1) || !(power > 0 && power < 1))
		return pg_err_set(err, PG_EINVAL, "MDE: alpha %g or power %g out of (0, 1)", alpha,
				  power);
	if (!(*sigma >= 0) || !isfinite(*sigma))
		return pg_err_set(err, PG_EINVAL, "MDE: spread %g", *sigma);
	if (n_base == 0 || n_patched == 0 || (paired && n_base != n_patched))
		return pg_err_set(err, PG_EINVAL, "MDE: counts %zu and %zu", n_base, n_patched);
	pmin = paired ? stats_wsr_min_p(n_base) : stats_mw_min_p(n_base, n_patched);
	if (!verdict_level_reached(1 - pmin, alpha)) {
		*out = INFINITY;
		return 0;
	}
	u = unit_of(paired, n_base, n_patched, alpha, power, err);
	if (isnan(u.q))
		return -1;
	if (width > 0 && isfinite(width) && u.w > 0 && width / u.w > *sigma)
		*sigma = width / u.w;
	/* paired: a log ratio, as a slowdown; unpaired: relative already */
	*out = paired ? -100 * expm1(-u.q * *sigma) : 100 * u.q * *sigma;
	return 0;
}

int verdict_pairs_needed(bool paired, double sigma, double margin, double alpha, double power)
{
	double n;
	int n_min = verdict_min_runs(paired, alpha);

	if (!(margin > 0) || isnan(sigma))
		return VERDICT_PAIRS_NEVER;
	if (sigma == 0)
		return n_min;
	n = ceil(pow(approx_q(paired, 1, alpha, power) * sigma / margin, 2));
	if (!(n < VERDICT_PAIRS_NEVER))
		return VERDICT_PAIRS_NEVER;
	return n < n_min ? n_min : (int)n;
}
