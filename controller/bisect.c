/* SPDX-License-Identifier: MIT */
/* The decisions of a bisection step: see bisect.h. */
#include "bisect.h"

#include <math.h>
#include <string.h>

#include "stats.h"

int bisect_levels(const double *xb, size_t nb, const double *xa, size_t na, double alpha,
		  struct bisect_levels *out, struct pg_err *err)
{
	struct stats_mw mw;

	out->before = out->after = out->p = NAN;
	out->stands = false;
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
	return 0;
}

int bisect_step(const struct bisect_in *in, struct bisect_step *out, struct pg_err *err)
{
	size_t first = 0, last;

	memset(out, 0, sizeof(*out));
	if (!(in->before > 0 && in->after > 0 && isfinite(in->before) && isfinite(in->after)) ||
	    in->before == in->after || in->n_range < 1 || (in->n_pts && !in->pts))
		return pg_err_set(err, PG_EINVAL, "bisection step: arguments out of range");
	last = in->n_range - 1;
	for (size_t i = 0; i < in->n_pts; i++) {
		const struct bisect_point *pt = &in->pts[i];

		if (pt->pos + 1 >= in->n_range || (i && pt->pos <= in->pts[i - 1].pos) ||
		    !pt->v || pt->n < 1)
			return pg_err_set(err, PG_EINVAL, "bisection step: point %zu out of range", i);
	}
	for (size_t i = 0; i < in->n_pts; i++) {
		const struct bisect_point *pt = &in->pts[i];
		double m;

		if (stats_median(pt->v, pt->n, &m, err) < 0)
			return -1;
		if (!(m > 0))
			continue;
		if (fabs(log(m / in->after)) < fabs(log(m / in->before))) {
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
