/* SPDX-License-Identifier: MIT */
/* Change points in a history: see changepoint.h for the method. */
#include "changepoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of v[0..n) (n >= 1), sorting scratch[0..n) as a copy. */
static double median_of(const double *v, size_t n, double *scratch)
{
	memcpy(scratch, v, n * sizeof(*v));
	qsort(scratch, n, sizeof(*scratch), cmp_double);
	return n % 2 ? scratch[n / 2] : scratch[n / 2 - 1] / 2 + scratch[n / 2] / 2;
}

/* sum |v_i - median(v)| over v[0..n). */
static double l1_cost(const double *v, size_t n, double *scratch)
{
	double m = median_of(v, n, scratch), c = 0;

	for (size_t i = 0; i < n; i++)
		c += fabs(v[i] - m);
	return c;
}

int cp_detect(const double *x, size_t n, const struct cp_params *params,
	      struct cp_change *out, struct pg_err *err)
{
	double *scratch = NULL, best = INFINITY;
	struct stats_mw mw;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->before_median = out->after_median = out->change_pct = out->p = NAN;
	if (!params || params->min_points < 2 || !(params->alpha > 0 && params->alpha <= 0.5) ||
	    !(params->min_change_pct > 0 && isfinite(params->min_change_pct)))
		return pg_err_set(err, PG_EINVAL, "change points: parameters out of range");
	if (n > CP_MAX_POINTS)
		return pg_err_set(err, PG_EINVAL, "change points: %zu values, at most %d", n,
				  CP_MAX_POINTS);
	if (n && !x)
		return pg_err_set(err, PG_EINVAL, "change points: no values");
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return pg_err_set(err, PG_EINVAL, "change points: value %zu is not finite", i);
	if (n < 2)
		return 0;
	scratch = malloc(n * sizeof(*scratch));
	if (!scratch)
		return pg_err_set(err, PG_ENOMEM, "change points: out of memory");
	for (size_t s = 1; s < n; s++) {
		double c = l1_cost(x, s, scratch) + l1_cost(x + s, n - s, scratch);

		if (c < best) {
			best = c;
			out->split = s;
		}
	}
	if (out->split < params->min_points || n - out->split < params->min_points) {
		rc = 0;
		goto out;
	}
	out->judged = true;
	out->before_median = median_of(x, out->split, scratch);
	out->after_median = median_of(x + out->split, n - out->split, scratch);
	if (out->before_median != 0)
		out->change_pct = 100.0 * (out->after_median / out->before_median - 1);
	else
		out->change_pct = out->after_median == 0 ? 0 :
				  out->after_median > 0 ? INFINITY : -INFINITY;
	if (stats_mann_whitney(x + out->split, n - out->split, x, out->split, &mw, err) < 0)
		goto out;
	out->p = mw.p;
	out->found = mw.p < params->alpha && fabs(out->change_pct) >= params->min_change_pct;
	if (out->found) {
		double mad_b, mad_a, spread;

		if (stats_mad(x, out->split, &mad_b, err) < 0 ||
		    stats_mad(x + out->split, n - out->split, &mad_a, err) < 0)
			goto out;
		spread = STATS_MAD_NORMAL * (mad_b < mad_a ? mad_b : mad_a);
		out->found = fabs(out->after_median - out->before_median) >= CP_SPREAD_MULT * spread;
	}
	rc = 0;
out:
	free(scratch);
	return rc;
}

double cp_main_min_change(double threshold_pct)
{
	return threshold_pct < CP_MAIN_MIN_CHANGE_PCT ? threshold_pct : CP_MAIN_MIN_CHANGE_PCT;
}
