/* SPDX-License-Identifier: MIT */
/* The decisions of a bisection step: see bisect.h. */
#include "bisect.h"

#include <math.h>
#include <string.h>

#include "stats.h"

/* log(x_i / level) for x[0..n), appended to dev[*n_dev ..]. */
static void log_devs(const double *x, size_t n, double level, double *dev, size_t *n_dev)
{
	for (size_t i = 0; i < n; i++)
		if (x[i] > 0 && level > 0)
			dev[(*n_dev)++] = log(x[i] / level);
}

int bisect_levels(const double *xb, size_t nb, const double *xa, size_t na, double alpha,
		  struct bisect_levels *out, struct pg_err *err)
{
	double dev[2 * BISECT_LEVEL_POINTS], mad;
	size_t n_dev = 0;
	struct stats_mw mw;

	out->before = out->after = out->p = out->sigma = NAN;
	out->stands = out->wait = false;
	if (!xb || !xa || nb < 1 || na < 1 || nb > BISECT_LEVEL_POINTS ||
	    na > BISECT_LEVEL_POINTS || !(alpha > 0 && alpha < 1))
		return pg_err_set(err, PG_EINVAL, "bisection levels: arguments out of range");
	for (size_t i = 0; i < nb + na; i++)
		if (!isfinite(i < nb ? xb[i] : xa[i - nb]))
			return pg_err_set(err, PG_EINVAL, "bisection levels: a value is not finite");
	if (stats_median(xb, nb, &out->before, err) < 0 ||
	    stats_median(xa, na, &out->after, err) < 0 ||
	    stats_mann_whitney(xa, na, xb, nb, &mw, err) < 0)
		return -1;
	out->p = mw.p;
	out->stands = out->before > 0 && out->after > 0 && mw.p < alpha;
	out->wait = !out->stands && na < BISECT_LEVEL_POINTS;
	/* Deviations from each side's own level, pooled: the step between
	 * the sides is not noise. */
	log_devs(xb, nb, out->before, dev, &n_dev);
	log_devs(xa, na, out->after, dev, &n_dev);
	if (n_dev) {
		/* The median of |dev|: each side is centred on its median. */
		for (size_t i = 0; i < n_dev; i++)
			dev[i] = fabs(dev[i]);
		if (stats_median(dev, n_dev, &mad, err) < 0)
			return -1;
		out->sigma = STATS_MAD_NORMAL * mad;
	}
	return 0;
}

enum side { SIDE_OLD, SIDE_NEW, SIDE_UNDECIDED, SIDE_SKIP };

/* Which level commit pt is at (bisect.h, 2.); found: an end as the search
 * chose it. */
static int classify(const struct bisect_in *in, const struct bisect_point *pt, bool found,
		    enum side *side, struct pg_err *err)
{
	double m, d = log(in->after / in->before), u, z;
	double zone = found && pt->n == 1 ? BISECT_END_ZONE_Z : BISECT_ZONE_Z;

	if (stats_median(pt->v, pt->n, &m, err) < 0)
		return -1;
	if (!(m > 0)) {
		*side = SIDE_SKIP;
		return 0;
	}
	u = log(m / in->before) / d;
	z = zone * in->sigma / sqrt((double)pt->n) / fabs(d);
	if (in->may_measure && pt->n < BISECT_COMMIT_MAX_VALUES && fabs(u - 0.5) < z)
		*side = SIDE_UNDECIDED;
	else
		*side = fabs(log(m / in->after)) < fabs(log(m / in->before)) ? SIDE_NEW : SIDE_OLD;
	return 0;
}

int bisect_step(const struct bisect_in *in, struct bisect_step *out, struct pg_err *err)
{
	size_t first = 0, last;
	enum side side;

	memset(out, 0, sizeof(*out));
	if (!(in->before > 0 && in->after > 0 && isfinite(in->before) && isfinite(in->after)) ||
	    in->before == in->after || !(in->sigma >= 0 && isfinite(in->sigma)) ||
	    in->n_range < 1 || (in->n_pts && !in->pts) ||
	    (in->end_before.n && !in->end_before.v) || (in->end_after.n && !in->end_after.v))
		return pg_err_set(err, PG_EINVAL, "bisection step: arguments out of range");
	last = in->n_range - 1;
	for (size_t i = 0; i < in->n_pts; i++) {
		const struct bisect_point *pt = &in->pts[i];

		if (pt->pos + 1 >= in->n_range || (i && pt->pos <= in->pts[i - 1].pos) ||
		    !pt->v || pt->n < 1)
			return pg_err_set(err, PG_EINVAL, "bisection step: point %zu out of range", i);
	}
	out->first = first;
	out->last = last;
	/* a. The ends. */
	if (in->end_before.n) {
		if (classify(in, &in->end_before, in->before_found, &side, err) < 0)
			return -1;
		if (side == SIDE_UNDECIDED || side == SIDE_NEW) {
			out->next = side == SIDE_NEW ? BISECT_WIDEN_BEFORE : BISECT_MEASURE_BEFORE;
			return 0;
		}
	}
	if (in->end_after.n) {
		if (classify(in, &in->end_after, in->after_found, &side, err) < 0)
			return -1;
		if (side == SIDE_UNDECIDED || side == SIDE_OLD) {
			out->next = side == SIDE_OLD ? BISECT_WIDEN_AFTER : BISECT_MEASURE;
			out->measure = side == SIDE_OLD ? 0 : last;
			out->again = side != SIDE_OLD;
			return 0;
		}
	}
	/* b. Inside, oldest first. */
	for (size_t i = 0; i < in->n_pts; i++) {
		const struct bisect_point *pt = &in->pts[i];

		if (classify(in, pt, false, &side, err) < 0)
			return -1;
		if (side == SIDE_SKIP)
			continue;
		if (side == SIDE_UNDECIDED) {
			out->first = first;
			out->last = last;
			out->moved = first > 0 || last < in->n_range - 1;
			out->next = BISECT_MEASURE;
			out->measure = pt->pos;
			out->again = true;
			return 0;
		}
		if (side == SIDE_NEW) {
			last = pt->pos;
			break;
		}
		first = pt->pos + 1;
	}
	out->first = first;
	out->last = last;
	out->moved = first > 0 || last < in->n_range - 1;
	if (first == last) {
		out->next = BISECT_LOCATED;
		return 0;
	}
	out->next = BISECT_MEASURE;
	out->measure = first + (last - first - 1) / 2;
	return 0;
}
