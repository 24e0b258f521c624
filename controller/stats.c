/* SPDX-License-Identifier: MIT */
/*
 * Statistics for verdicts: see stats.h for the contracts and the choices.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Check the common contract: finite values, bounded n, and values at all
 * (a NULL x with n > 0 is a caller's bug: an error beats a crash). */
static int check_sample(const double *x, size_t n, const char *what, struct pg_err *err)
{
	if (!x && n > 0)
		return pg_err_set(err, PG_EINVAL, "%s: %zu values but no array", what, n);
	if (n > STATS_MAX_N)
		return pg_err_set(err, PG_ETOOBIG, "%s: %zu values, at most %u", what, n,
				  STATS_MAX_N);
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return pg_err_set(err, PG_EINVAL, "%s: value %zu is not finite", what, i);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A sorted malloc'd copy of x[0..n) (n > 0), or NULL with err. */
static double *sorted_copy(const double *x, size_t n, struct pg_err *err)
{
	double *s = malloc(n * sizeof(*s));

	if (!s) {
		pg_err_set(err, PG_ENOMEM, "sorting %zu values", n);
		return NULL;
	}
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return s;
}

/* The median of sorted s[0..n), n > 0; a/2 + b/2 so that it cannot
 * overflow, and + 0.0 so that a median of zeros is never -0. */
static double median_sorted(const double *s, size_t n)
{
	if (n % 2)
		return s[n / 2] + 0.0;
	return s[n / 2 - 1] / 2 + s[n / 2] / 2 + 0.0;
}

/* stat() of a sorted copy of x[0..n) into *out (NaN for no values). */
static int of_sorted(const double *x, size_t n, const char *what,
		     double (*stat)(const double *, size_t), double *out, struct pg_err *err)
{
	double *s;

	*out = NAN;
	if (check_sample(x, n, what, err) < 0)
		return -1;
	if (n == 0)
		return 0;
	if (!(s = sorted_copy(x, n, err)))
		return -1;
	*out = stat(s, n);
	free(s);
	return 0;
}

int stats_median(const double *x, size_t n, double *out, struct pg_err *err)
{
	return of_sorted(x, n, "median", median_sorted, out, err);
}

/* MAD and median of a sample that passed check_sample(), n > 0. */
static int mad_median(const double *x, size_t n, double *mad, double *med, struct pg_err *err)
{
	double *s = sorted_copy(x, n, err);

	if (!s)
		return -1;
	*med = median_sorted(s, n);
	for (size_t i = 0; i < n; i++)
		s[i] = fabs(s[i] - *med);
	qsort(s, n, sizeof(*s), cmp_double);
	*mad = median_sorted(s, n);
	free(s);
	return 0;
}

int stats_mad(const double *x, size_t n, double *out, struct pg_err *err)
{
	double med;

	*out = NAN;
	if (check_sample(x, n, "MAD", err) < 0)
		return -1;
	if (n == 0)
		return 0;
	return mad_median(x, n, out, &med, err);
}

/* The running mean of a checked sample, n > 0. */
static double mean_of(const double *x, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		m += (x[i] - m) / (double)(i + 1);
	return m;
}

int stats_mean(const double *x, size_t n, double *out, struct pg_err *err)
{
	*out = NAN;
	if (check_sample(x, n, "mean", err) < 0)
		return -1;
	if (n > 0)
		*out = mean_of(x, n);
	return 0;
}

/* Sample standard deviation of a checked sample, n >= 2: the second pass
 * sums squared deviations from the mean (scaled by the largest one so that
 * squares of huge values do not overflow). */
static double stddev_of(const double *x, size_t n, double mean)
{
	double big = 0, ss = 0;

	for (size_t i = 0; i < n; i++)
		if (fabs(x[i] - mean) > big)
			big = fabs(x[i] - mean);
	if (big == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		double d = (x[i] - mean) / big;

		ss += d * d;
	}
	return big * sqrt(ss / (double)(n - 1));
}

int stats_stddev(const double *x, size_t n, double *out, struct pg_err *err)
{
	*out = NAN;
	if (check_sample(x, n, "standard deviation", err) < 0)
		return -1;
	if (n >= 2)
		*out = stddev_of(x, n, mean_of(x, n));
	return 0;
}

/* spread / |centre| with the CV conventions of stats.h. */
static double ratio(double spread, double centre)
{
	if (spread == 0)
		return 0;
	if (centre == 0)
		return NAN;
	return spread / fabs(centre);
}

int stats_cv(const double *x, size_t n, double *out, struct pg_err *err)
{
	double m;

	*out = NAN;
	if (check_sample(x, n, "CV", err) < 0)
		return -1;
	if (n < 2)
		return 0;
	m = mean_of(x, n);
	*out = ratio(stddev_of(x, n, m), m);
	return 0;
}

int stats_cv_robust(const double *x, size_t n, double *out, struct pg_err *err)
{
	double mad, med;

	*out = NAN;
	if (check_sample(x, n, "robust CV", err) < 0)
		return -1;
	if (n < 2)
		return 0;
	if (mad_median(x, n, &mad, &med, err) < 0)
		return -1;
	*out = ratio(mad * STATS_MAD_NORMAL, med);
	return 0;
}

/* ---- the standard normal ---- */

double stats_norm_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

/* Wichura, "Algorithm AS 241: The Percentage Points of the Normal
 * Distribution", Applied Statistics 37 (1988), PPND16. */
double stats_norm_quantile(double p)
{
	double q = p - 0.5, r, v;

	if (isnan(p) || p < 0 || p > 1)
		return NAN;
	if (p == 0)
		return -INFINITY;
	if (p == 1)
		return INFINITY;
	if (fabs(q) <= 0.425) {
		r = 0.180625 - q * q;
		return q * (((((((2509.0809287301226727 * r + 33430.575583588128105) * r +
				 67265.770927008700853) * r + 45921.953931549871457) * r +
			       13731.693765509461125) * r + 1971.5909503065514427) * r +
			     133.14166789178437745) * r + 3.387132872796366608) /
			(((((((5226.495278852545925 * r + 28729.085735721942674) * r +
			      39307.89580009271061) * r + 21213.794301586595867) * r +
			    5394.1960214247511077) * r + 687.1870074920579083) * r +
			  42.313330701600911252) * r + 1.0);
	}
	r = q < 0 ? p : 1 - p;
	r = sqrt(-log(r));
	if (r <= 5) {
		r -= 1.6;
		v = (((((((7.7454501427834140764e-4 * r + 0.0227238449892691845833) * r +
			 0.24178072517745061177) * r + 1.27045825245236838258) * r +
		       3.64784832476320460504) * r + 5.7694972214606914055) * r +
		     4.6303378461565452959) * r + 1.42343711074968357734) /
			(((((((1.05075007164441684324e-9 * r + 5.475938084995344946e-4) * r +
			      0.0151986665636164571966) * r + 0.14810397642748007459) * r +
			    0.68976733498510000455) * r + 1.6763848301838038494) * r +
			  2.05319162663775882187) * r + 1.0);
	} else {
		r -= 5;
		v = (((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r +
			 0.0012426609473880784386) * r + 0.026532189526576123093) * r +
		       0.29656057182850489123) * r + 1.7848265399172913358) * r +
		     5.4637849111641143699) * r + 6.6579046435011037772) /
			(((((((2.04426310338993978564e-15 * r + 1.4215117583164458887e-7) * r +
			      1.8463183175100546818e-5) * r + 7.868691311456132591e-4) * r +
			    0.0148753612908506148525) * r + 0.13692988092273580531) * r +
			  0.59983220655588793769) * r + 1.0);
	}
	return q < 0 ? -v : v;
}

/* ---- Mann-Whitney U ---- */

/*
 * The null distribution of U for sizes m and n (m + n <= STATS_MW_EXACT_MAX):
 * c[u] = the number of the C(m+n, m) equally likely rank assignments that
 * give U = u, for u = 0..m*n.  These are the coefficients of the Gaussian
 * binomial prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), built one factor pair
 * at a time; after step i the polynomial is [n+i choose i]_q, whose
 * coefficients are at most C(n+i, i), so int64 never overflows for
 * m + n <= 60.  Returns a malloc'd array of m*n + m + 1 counts, or NULL.
 */
static int64_t *mw_counts(size_t m, size_t n, struct pg_err *err)
{
	size_t len = m * n + m + 1;
	int64_t *c = calloc(len, sizeof(*c));

	if (!c) {
		pg_err_set(err, PG_ENOMEM, "Mann-Whitney distribution for %zu + %zu", m, n);
		return NULL;
	}
	c[0] = 1;
	for (size_t i = 1; i <= m; i++) {
		size_t deg = (i - 1) * n, up = n + i;

		/* times (1 - q^up): descending, so that c[d - up] is old */
		for (size_t d = deg + up; d >= up; d--)
			c[d] -= c[d - up];
		/* divided by (1 - q^i): ascending, c[d - i] already new */
		for (size_t d = i; d <= deg + up; d++)
			c[d] += c[d - i];
	}
	return c;
}

/* The number of assignments, C(m+n, m), from counts c[0..mn]. */
static int64_t mw_total(const int64_t *c, size_t mn)
{
	int64_t total = 0;

	for (size_t u = 0; u <= mn; u++)
		total += c[u];
	return total;
}

/* P(U >= k) from counts c[0..mn], k an integer. */
static double mw_sf(const int64_t *c, size_t mn, double k)
{
	int64_t tail = 0;

	if (k <= 0)
		return 1;
	for (size_t u = (size_t)k; u <= mn; u++)
		tail += c[u];
	return (double)tail / (double)mw_total(c, mn);
}

/*
 * The rank k of the Moses interval: the smallest k >= 0 with P(U <= k) >=
 * q (R's qwilcox(), with its allowance of 10 DBL_EPSILON so that a
 * probability that equals q in exact arithmetic counts as reaching it),
 * then at least 1.  Returns P(U <= k - 1) for that k, the tail that the
 * interval [D(k), D(mn + 1 - k)] leaves out on each side.
 */
static double mw_lower_quantile(const int64_t *c, size_t mn, double q, uint64_t *kout)
{
	double total = (double)mw_total(c, mn);
	int64_t cum = 0;
	size_t k;

	for (k = 0; k < mn; k++) {
		cum += c[k];
		if ((double)cum / total >= q - 10 * DBL_EPSILON)
			break;
	}
	if (k == 0) {
		*kout = 1;	/* the widest interval, [min D, max D] */
		return (double)c[0] / total;
	}
	*kout = k;
	return (double)(cum - c[k]) / total;
}

/* Ranks of the combined sample: for U, the sum of the tie term
 * sum(t^3 - t) and whether there are ties.  xs, ys sorted. */
struct mw_ranks {
	double u;
	double tie_term;
	bool ties;
};

static void mw_rank(const double *xs, size_t nx, const double *ys, size_t ny,
		    struct mw_ranks *r)
{
	size_t i = 0, j = 0;

	r->u = 0;
	r->tie_term = 0;
	r->ties = false;
	/* Walk both sorted arrays in step, one group of equal values at a
	 * time: each x in the group beats every y below it and ties with
	 * the y's in the group. */
	while (i < nx || j < ny) {
		double v;
		size_t gx = 0, gy = 0, t;

		if (j >= ny || (i < nx && xs[i] <= ys[j]))
			v = xs[i];
		else
			v = ys[j];
		while (i + gx < nx && xs[i + gx] == v)
			gx++;
		while (j + gy < ny && ys[j + gy] == v)
			gy++;
		r->u += (double)gx * ((double)j + (double)gy / 2);
		t = gx + gy;
		if (t > 1) {
			r->ties = true;
			r->tie_term += (double)t * (double)t * (double)t - (double)t;
		}
		i += gx;
		j += gy;
	}
}

/* sigma of U under the null with the tie correction. */
static double mw_sigma(size_t nx, size_t ny, double tie_term)
{
	double n = (double)nx + (double)ny, mn = (double)nx * (double)ny;
	double v = mn / 12 * ((n + 1) - tie_term / (n * (n - 1)));

	return v > 0 ? sqrt(v) : 0;
}

static bool mw_use_exact(size_t nx, size_t ny, bool ties)
{
	return !ties && nx + ny <= STATS_MW_EXACT_MAX;
}

/* Sorted copies of both samples after the checks; NULL pointers on error. */
static int two_sorted(const double *x, size_t nx, const double *y, size_t ny,
		      const char *what, double **xs, double **ys, struct pg_err *err)
{
	*xs = *ys = NULL;
	if (check_sample(x, nx, what, err) < 0 || check_sample(y, ny, what, err) < 0)
		return -1;
	if (nx == 0 || ny == 0)
		return 0;
	if (!(*xs = sorted_copy(x, nx, err)))
		return -1;
	if (!(*ys = sorted_copy(y, ny, err))) {
		free(*xs);
		*xs = NULL;
		return -1;
	}
	return 0;
}

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		       struct stats_mw *out, struct pg_err *err)
{
	double *xs = NULL, *ys = NULL, mn = (double)nx * (double)ny, big;
	int64_t *c = NULL;
	struct mw_ranks r;
	int rc = -1;

	out->u = out->p = out->z = NAN;
	out->exact = out->ties = false;
	if (two_sorted(x, nx, y, ny, "Mann-Whitney", &xs, &ys, err) < 0)
		goto out;
	if (!xs) {
		rc = 0;
		goto out;
	}
	mw_rank(xs, nx, ys, ny, &r);
	out->u = r.u;
	out->ties = r.ties;
	big = r.u > mn - r.u ? r.u : mn - r.u;
	if (mw_use_exact(nx, ny, r.ties)) {
		if (!(c = mw_counts(nx, ny, err)))
			goto out;
		out->exact = true;
		out->p = 2 * mw_sf(c, (size_t)mn, big);
	} else {
		double s = mw_sigma(nx, ny, r.tie_term);

		if (s == 0) {
			out->p = 1;	/* every value equal: no evidence at all */
		} else {
			out->z = (big - mn / 2 - 0.5) / s;
			out->p = 2 * stats_norm_sf(out->z);
		}
	}
	if (out->p > 1)
		out->p = 1;
	rc = 0;
out:
	free(c);
	free(xs);
	free(ys);
	return rc;
}

static double binomial(size_t n, size_t k)
{
	double r = 1;

	for (size_t i = 1; i <= k; i++)
		r = r * (double)(n - k + i) / (double)i;
	return r;
}

double stats_mw_min_p(size_t nx, size_t ny)
{
	double p;

	if (nx == 0 || ny == 0)
		return NAN;
	if (nx + ny <= STATS_MW_EXACT_MAX) {
		/* one assignment of C(n, nx) in each tail */
		p = 2 / nearbyint(binomial(nx + ny, nx < ny ? nx : ny));
	} else {
		double mn = (double)nx * (double)ny;

		p = 2 * stats_norm_sf((mn / 2 - 0.5) / mw_sigma(nx, ny, 0));
	}
	return p > 1 ? 1 : p;
}

/* ---- Hodges-Lehmann ---- */

/* Doubles mapped to integers of the same order (for bisection). */
static uint64_t dkey(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

static double dval(uint64_t k)
{
	uint64_t u = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* The number of differences xs[i] - ys[j] (as computed in floating point)
 * that are <= v.  For each i they shrink as j grows, and the first j
 * where they drop to v or below never decreases as i grows (rounding is
 * monotone), so two pointers count them in O(nx + ny). */
static uint64_t count_le(const double *xs, size_t nx, const double *ys, size_t ny, double v)
{
	uint64_t count = 0;
	size_t j = 0;

	for (size_t i = 0; i < nx; i++) {
		while (j < ny && xs[i] - ys[j] > v)
			j++;
		count += ny - j;
	}
	return count;
}

/* The k-th smallest (1-based, 1 <= k <= nx*ny) difference xs[i] - ys[j]:
 * the smallest double v with count_le(v) >= k, which is a difference since
 * count_le only steps at differences.  At most 64 halvings. */
static double kth_diff(const double *xs, size_t nx, const double *ys, size_t ny, uint64_t k)
{
	uint64_t lo = dkey(xs[0] - ys[ny - 1]), hi = dkey(xs[nx - 1] - ys[0]);

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (count_le(xs, nx, ys, ny, dval(mid)) >= k)
			hi = mid;
		else
			lo = mid + 1;
	}
	return dval(lo) + 0.0;
}

int stats_hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny,
			 double conf_level, struct stats_hl *out, struct pg_err *err)
{
	double *xs = NULL, *ys = NULL;
	int64_t *c = NULL;
	uint64_t mn = (uint64_t)nx * ny, k;
	double alpha = 1 - conf_level;
	struct mw_ranks r;
	int rc = -1;

	out->shift = out->lo = out->hi = out->conf = NAN;
	out->exact = false;
	if (!(conf_level > 0 && conf_level < 1))
		return pg_err_set(err, PG_EINVAL,
				  "Hodges-Lehmann: confidence level %g is not in (0, 1)",
				  conf_level);
	if (two_sorted(x, nx, y, ny, "Hodges-Lehmann", &xs, &ys, err) < 0)
		goto out;
	if (!xs) {
		rc = 0;
		goto out;
	}
	if (mn % 2)
		out->shift = kth_diff(xs, nx, ys, ny, (mn + 1) / 2);
	else
		out->shift = kth_diff(xs, nx, ys, ny, mn / 2) / 2 +
			     kth_diff(xs, nx, ys, ny, mn / 2 + 1) / 2 + 0.0;

	mw_rank(xs, nx, ys, ny, &r);
	if (mw_use_exact(nx, ny, r.ties)) {
		if (!(c = mw_counts(nx, ny, err)))
			goto out;
		out->exact = true;
		out->conf = 1 - 2 * mw_lower_quantile(c, mn, alpha / 2, &k);
	} else {
		double s = mw_sigma(nx, ny, r.tie_term);
		double z = stats_norm_quantile(1 - alpha / 2);
		double kk = ceil((double)mn / 2 - 0.5 - z * s);
		double kmax = ceil((double)mn / 2);

		k = kk < 1 ? 1 : kk > kmax ? (uint64_t)kmax : (uint64_t)kk;
		if (s == 0)
			out->conf = 1;	/* every difference is the same */
		else
			out->conf = 1 - 2 * stats_norm_sf(((double)mn / 2 - (double)k + 0.5) / s);
	}
	if (out->conf < 0)
		out->conf = 0;
	out->lo = kth_diff(xs, nx, ys, ny, k);
	out->hi = kth_diff(xs, nx, ys, ny, mn + 1 - k);
	rc = 0;
out:
	free(c);
	free(xs);
	free(ys);
	return rc;
}

/* ---- Wilcoxon signed-rank ---- */

#define WSR_MAX_SUM (STATS_WSR_EXACT_MAX * (STATS_WSR_EXACT_MAX + 1) / 2)

static int cmp_abs(const void *a, const void *b)
{
	double x = fabs(*(const double *)a), y = fabs(*(const double *)b);

	return (x > y) - (x < y);
}

/* The null distribution of W+ for n ranks 1..n (n <= STATS_WSR_EXACT_MAX):
 * c[s] counts the subsets of {1..n} with sum s, built one rank at a time
 * (each rank is in the subset or not); at most 2^50 in all, so int64 and
 * the quotients by 2^n are exact. */
static void wsr_counts(size_t n, int64_t c[WSR_MAX_SUM + 1])
{
	size_t top = 0;

	memset(c, 0, (WSR_MAX_SUM + 1) * sizeof(*c));
	c[0] = 1;
	for (size_t k = 1; k <= n; k++) {
		/* descending, so that c[s - k] is still without rank k */
		for (size_t s = top + k; s >= k; s--)
			c[s] += c[s - k];
		top += k;
	}
}

/* P(W+ <= w), w an integer. */
static double wsr_cdf(size_t n, double w)
{
	int64_t c[WSR_MAX_SUM + 1], cum = 0;
	size_t top = n * (n + 1) / 2;

	wsr_counts(n, c);
	for (size_t s = 0; s <= top && (double)s <= w; s++)
		cum += c[s];
	return ldexp((double)cum, -(int)n);
}

int stats_wilcoxon_signed_rank(const double *d, size_t nd, struct stats_wsr *out,
			       struct pg_err *err)
{
	double *a = NULL, w_plus = 0, tie_term = 0, mean;
	size_t n = 0;
	int rc = -1;

	out->w_plus = out->p = out->z = NAN;
	out->n = 0;
	out->exact = out->ties = false;
	if (check_sample(d, nd, "Wilcoxon signed-rank", err) < 0)
		goto out;
	if (nd > 0 && !(a = malloc(nd * sizeof(*a)))) {
		pg_err_set(err, PG_ENOMEM, "Wilcoxon signed-rank: %zu differences", nd);
		goto out;
	}
	for (size_t i = 0; i < nd; i++)
		if (d[i] != 0)
			a[n++] = d[i];
	if (n == 0) {
		rc = 0;	/* nothing to rank: not enough data */
		goto out;
	}
	qsort(a, n, sizeof(*a), cmp_abs);
	/* one group of equal |d| at a time; its ranks i+1..i+t average to
	 * i + (t+1)/2 */
	for (size_t i = 0, t; i < n; i += t) {
		double rank;

		for (t = 1; i + t < n && fabs(a[i + t]) == fabs(a[i]); t++)
			;
		rank = (double)i + ((double)t + 1) / 2;
		for (size_t j = i; j < i + t; j++)
			if (a[j] > 0)
				w_plus += rank;
		if (t > 1) {
			out->ties = true;
			tie_term += (double)t * (double)t * (double)t - (double)t;
		}
	}
	out->n = n;
	out->w_plus = w_plus;
	mean = (double)n * ((double)n + 1) / 4;
	if (n == nd && !out->ties && n <= STATS_WSR_EXACT_MAX) {
		double w_minus = 2 * mean - w_plus;

		out->exact = true;
		out->p = 2 * wsr_cdf(n, w_plus < w_minus ? w_plus : w_minus);
	} else {
		double nn = (double)n;
		double sigma = sqrt((nn * (nn + 1) * (2 * nn + 1) - tie_term / 2) / 24);
		double dev = w_plus - mean;

		dev -= dev > 0 ? 0.5 : dev < 0 ? -0.5 : 0;
		out->z = dev / sigma;
		out->p = 2 * stats_norm_sf(fabs(out->z));
	}
	if (out->p > 1)
		out->p = 1;
	rc = 0;
out:
	free(a);
	return rc;
}

double stats_wsr_min_p(size_t n)
{
	double p, nn = (double)n;

	if (n == 0)
		return NAN;
	if (n <= STATS_WSR_EXACT_MAX)
		p = ldexp(1, 1 - (int)n);	/* all + or all -: 2 of 2^n */
	else
		p = 2 * stats_norm_sf((nn * (nn + 1) / 4 - 0.5) /
				      sqrt(nn * (nn + 1) * (2 * nn + 1) / 24));
	return p > 1 ? 1 : p;
}

/* ---- one-sample Hodges-Lehmann ---- */

/* The number of Walsh averages s[i]/2 + s[j]/2, i <= j, that are <= v, s
 * sorted.  For each i they grow with j, and the first j where they exceed
 * v never grows with i (rounding is monotone), so one pointer walking
 * down counts them in O(n). */
static uint64_t walsh_count_le(const double *s, size_t n, double v)
{
	uint64_t count = 0;
	size_t j = n;

	for (size_t i = 0; i < n; i++) {
		while (j > 0 && s[i] / 2 + s[j - 1] / 2 > v)
			j--;
		if (j <= i)
			break;	/* and so for every later i */
		count += j - i;
	}
	return count;
}

/* The k-th smallest (1-based) Walsh average of sorted s[0..n): bisection
 * over the doubles as in kth_diff(). */
static double kth_walsh(const double *s, size_t n, uint64_t k)
{
	/* the extremes are s[0] and s[n-1] with themselves */
	uint64_t lo = dkey(s[0] / 2 + s[0] / 2), hi = dkey(s[n - 1] / 2 + s[n - 1] / 2);

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (walsh_count_le(s, n, dval(mid)) >= k)
			hi = mid;
		else
			lo = mid + 1;
	}
	return dval(lo) + 0.0;
}

/* The median of the Walsh averages of sorted s[0..n), n >= 1. */
static double walsh_median_sorted(const double *s, size_t n)
{
	uint64_t m = (uint64_t)n * (n + 1) / 2;

	if (m % 2)
		return kth_walsh(s, n, (m + 1) / 2);
	return kth_walsh(s, n, m / 2) / 2 + kth_walsh(s, n, m / 2 + 1) / 2 + 0.0;
}

int stats_walsh_median(const double *d, size_t nd, double *out, struct pg_err *err)
{
	return of_sorted(d, nd, "Walsh median", walsh_median_sorted, out, err);
}

int stats_walsh_interval(const double *d, size_t nd, double conf_level, struct stats_hl *out,
			 struct pg_err *err)
{
	uint64_t m = (uint64_t)nd * (nd + 1) / 2, k;
	double alpha = 1 - conf_level, *s = NULL;
	struct stats_wsr w;
	int rc = -1;

	out->shift = out->lo = out->hi = out->conf = NAN;
	out->exact = false;
	if (!(conf_level > 0 && conf_level < 1))
		return pg_err_set(err, PG_EINVAL, "Walsh interval: confidence level %g is not in (0, 1)",
				  conf_level);
	/* the test says whether its exact distribution applies: no zero, no
	 * tie, nd <= STATS_WSR_EXACT_MAX */
	if (stats_wilcoxon_signed_rank(d, nd, &w, err) < 0)
		return -1;
	if (nd == 0)
		return 0;
	if (!(s = sorted_copy(d, nd, err)))
		goto out;
	out->shift = walsh_median_sorted(s, nd);
	if (w.exact) {
		int64_t c[WSR_MAX_SUM + 1];
		double cum = 0, below = 0;

		/* R's qsignrank(alpha/2, n): the smallest k with P(W+ <= k) >=
		 * alpha/2, at least 1; below = P(W+ <= k - 1) */
		wsr_counts(nd, c);
		for (k = 0; k < m; k++) {
			below = cum;
			cum += ldexp((double)c[k], -(int)nd);
			if (cum >= alpha / 2)
				break;
		}
		if (k == 0) {
			k = 1;
			below = ldexp((double)c[0], -(int)nd);
		}
		out->exact = true;
		out->conf = 1 - 2 * below;
	} else {
		double nn = (double)nd, sigma = sqrt(nn * (nn + 1) * (2 * nn + 1) / 24);
		double kk = ceil((double)m / 2 - 0.5 - stats_norm_quantile(1 - alpha / 2) * sigma);
		double kmax = ceil((double)m / 2);

		k = kk < 1 ? 1 : kk > kmax ? (uint64_t)kmax : (uint64_t)kk;
		out->conf = 1 - 2 * stats_norm_sf(((double)m / 2 - (double)k + 0.5) / sigma);
	}
	if (out->conf < 0)
		out->conf = 0;
	out->lo = kth_walsh(s, nd, k);
	out->hi = kth_walsh(s, nd, m + 1 - k);
	rc = 0;
out:
	free(s);
	return rc;
}
