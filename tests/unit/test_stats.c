/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/stats.c.  The reference values come from
 * tests/stats/reference.py (numpy, scipy, R), committed as
 * tests/stats/{describe,mannwhitney,hodges_lehmann,wilcoxon}.txt; this
 * file only reads them and compares.  The rest checks the contract's edges
 * (n = 0 and 1, NaN and infinity, NULL, levels out of range), the normal
 * quantile against published values, and the two Hodges-Lehmann
 * bisections against a brute-force sort of every pairwise difference or
 * Walsh average.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "stats.h"

#define FIXTURES "tests/stats"

/* Both NaN, or within rel of each other (relative to the larger). */
static bool close_to(double got, double want, double rel)
{
	if (isnan(want) || isnan(got))
		return isnan(want) && isnan(got);
	if (got == want)
		return true;
	return fabs(got - want) <= rel * fmax(fabs(got), fabs(want));
}

#define CHECK(got, want, rel, what, name)                                              \
	do {                                                                           \
		if (!close_to((got), (want), (rel)))                                   \
			fail_msg("%s %s: got %.17g, want %.17g", (name), (what), (got), \
				 (want));                                              \
	} while (0)

/* ---- a tiny reader for the fixture lines ---- */

struct cur {
	const char *s;
	const char *where;	/* file:line, for messages */
};

static void skip_space(struct cur *c)
{
	while (*c->s == ' ' || *c->s == '\t' || *c->s == '\n')
		c->s++;
}

static double num(struct cur *c)
{
	char *end;
	double v;

	skip_space(c);
	v = strtod(c->s, &end);
	if (end == c->s)
		fail_msg("%s: a number expected at '%.20s'", c->where, c->s);
	c->s = end;
	return v;
}

static size_t count(struct cur *c)
{
	double v = num(c);

	if (v < 0 || v != floor(v))
		fail_msg("%s: a count expected, got %g", c->where, v);
	return (size_t)v;
}

static void word(struct cur *c, char *out, size_t len)
{
	size_t n = 0;

	skip_space(c);
	while (*c->s && *c->s != ' ' && *c->s != '\n' && n + 1 < len)
		out[n++] = *c->s++;
	out[n] = '\0';
	if (n == 0)
		fail_msg("%s: a word expected", c->where);
}

static void expect(struct cur *c, const char *w)
{
	char got[64];

	word(c, got, sizeof(got));
	if (strcmp(got, w) != 0)
		fail_msg("%s: '%s' expected, got '%s'", c->where, w, got);
}

/* n values into a malloc'd array (never NULL, even for n = 0). */
static double *vec(struct cur *c, size_t n)
{
	double *v = malloc((n + 1) * sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = num(c);
	return v;
}

typedef void (*line_fn)(struct cur *c, const char *name);

/* Call fn for every line of the fixture that is not a comment; returns the
 * number of lines. */
static int each_line(const char *file, line_fn fn)
{
	char path[256], where[300], name[64];
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int n = 0, lineno = 0;

	assert_true(snprintf(path, sizeof(path), FIXTURES "/%s", file) < (int)sizeof(path));
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s (run from the repository root)", path);
	while (getline(&line, &cap, f) > 0) {
		struct cur c = { line, where };

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		word(&c, name, sizeof(name));
		fn(&c, name);
		n++;
	}
	free(line);
	fclose(f);
	return n;
}

/* ---- the reference values ---- */

static void describe_line(struct cur *c, const char *name)
{
	struct pg_err err = PG_ERR_INIT;
	size_t n = count(c);
	double *x = vec(c, n), got;
	double med, mad, mean, sd, cv, cvr;

	expect(c, ":");
	med = num(c);
	mad = num(c);
	mean = num(c);
	sd = num(c);
	cv = num(c);
	cvr = num(c);
	assert_int_equal(stats_median(x, n, &got, &err), 0);
	CHECK(got, med, 1e-15, "median", name);
	assert_int_equal(stats_mad(x, n, &got, &err), 0);
	CHECK(got, mad, 1e-15, "MAD", name);
	assert_int_equal(stats_mean(x, n, &got, &err), 0);
	CHECK(got, mean, 1e-13, "mean", name);
	assert_int_equal(stats_stddev(x, n, &got, &err), 0);
	CHECK(got, sd, 1e-12, "stddev", name);
	assert_int_equal(stats_cv(x, n, &got, &err), 0);
	CHECK(got, cv, 1e-12, "CV", name);
	assert_int_equal(stats_cv_robust(x, n, &got, &err), 0);
	CHECK(got, cvr, 1e-14, "robust CV", name);
	free(x);
}

static void test_describe_reference(void **state)
{
	(void)state;
	assert_int_equal(each_line("describe.txt", describe_line), 15);
}

static int mw_exact_seen, mw_approx_seen, minp_seen;

static void mw_line(struct cur *c, const char *name)
{
	struct pg_err err = PG_ERR_INIT;
	struct stats_mw mw;
	char method[32];

	if (strcmp(name, "minp") == 0) {
		size_t nx = count(c), ny = count(c);
		double p;

		expect(c, ":");
		p = num(c);
		CHECK(stats_mw_min_p(nx, ny), p, 1e-12, "smallest p", name);
		minp_seen++;
		return;
	}

	size_t nx = count(c);
	double *x = vec(c, nx);
	size_t ny = count(c);
	double *y = vec(c, ny), u, p;

	expect(c, ":");
	u = num(c);
	p = num(c);
	word(c, method, sizeof(method));
	assert_int_equal(stats_mann_whitney(x, nx, y, ny, &mw, &err), 0);
	CHECK(mw.u, u, 0, "U", name);
	if (strcmp(method, "exact") == 0) {
		/* counted exactly on both sides: only rounding differs */
		if (!mw.exact)
			fail_msg("%s: exact p expected", name);
		assert_true(isnan(mw.z));
		CHECK(mw.p, p, 1e-13, "exact p", name);
		mw_exact_seen++;
	} else {
		if (mw.exact)
			fail_msg("%s: normal approximation expected", name);
		CHECK(mw.p, p, 1e-10, "asymptotic p", name);
		mw_approx_seen++;
	}
	free(x);
	free(y);
}

static void test_mann_whitney_reference(void **state)
{
	(void)state;
	assert_int_equal(each_line("mannwhitney.txt", mw_line), 33);
	assert_int_equal(mw_exact_seen, 13);
	assert_int_equal(mw_approx_seen, 8);
	assert_int_equal(minp_seen, 12);
}

static int hl_exact_seen;

static void hl_line(struct cur *c, const char *name)
{
	struct pg_err err = PG_ERR_INIT;
	struct stats_hl hl;
	double level = num(c);
	size_t nx = count(c);
	double *x = vec(c, nx);
	size_t ny = count(c);
	double *y = vec(c, ny), shift, lo, hi, achieved;
	char method[32];

	expect(c, ":");
	shift = num(c);
	lo = num(c);
	hi = num(c);
	achieved = num(c);
	word(c, method, sizeof(method));
	assert_int_equal(stats_hodges_lehmann(x, nx, y, ny, level, &hl, &err), 0);
	/* the same doubles subtracted; numpy averages (a+b)/2, we a/2+b/2 */
	CHECK(hl.shift, shift, 1e-15, "shift", name);
	CHECK(hl.lo, lo, 0, "lower bound", name);
	CHECK(hl.hi, hi, 0, "upper bound", name);
	CHECK(hl.conf, achieved, 1e-10, "achieved level", name);
	if (hl.exact != (strcmp(method, "exact") == 0))
		fail_msg("%s: method %s expected", name, method);
	hl_exact_seen += hl.exact;
	assert_true(hl.lo <= hl.shift && hl.shift <= hl.hi);
	free(x);
	free(y);
}

static void test_hodges_lehmann_reference(void **state)
{
	(void)state;
	assert_int_equal(each_line("hodges_lehmann.txt", hl_line), 18);
	assert_int_equal(hl_exact_seen, 13);
}

static int wsr_exact_seen, wsr_approx_seen, wsr_none_seen, wsr_minp_seen;

static void wsr_line(struct cur *c, const char *name)
{
	struct pg_err err = PG_ERR_INIT;
	struct stats_wsr w;
	char method[32];

	if (strcmp(name, "minp") == 0) {
		size_t n = count(c);
		double p;

		expect(c, ":");
		p = num(c);
		CHECK(stats_wsr_min_p(n), p, 1e-12, "smallest p", name);
		wsr_minp_seen++;
		return;
	}

	size_t nd = count(c);
	double *d = vec(c, nd), w_plus, p, z, hl1, got;
	size_t n;

	expect(c, ":");
	w_plus = num(c);
	n = count(c);
	p = num(c);
	z = num(c);
	hl1 = num(c);
	word(c, method, sizeof(method));
	assert_int_equal(stats_wilcoxon_signed_rank(d, nd, &w, &err), 0);
	CHECK(w.w_plus, w_plus, 0, "W+", name);
	if (w.n != n)
		fail_msg("%s: n = %zu, want %zu", name, w.n, n);
	if (strcmp(method, "exact") == 0) {
		/* multiples of 2^-n on both sides: no rounding at all */
		if (!w.exact || w.ties)
			fail_msg("%s: exact p expected", name);
		CHECK(w.p, p, 0, "exact p", name);
		wsr_exact_seen++;
	} else if (strcmp(method, "approx") == 0) {
		if (w.exact)
			fail_msg("%s: normal approximation expected", name);
		CHECK(w.p, p, 1e-12, "approximate p", name);
		wsr_approx_seen++;
	} else {
		/* nothing to rank */
		assert_false(w.exact || w.ties);
		CHECK(w.p, p, 0, "p", name);
		wsr_none_seen++;
	}
	/* NaN when exact or nothing ranked; 0 stays exactly 0 at the centre */
	CHECK(w.z, z, 1e-13, "z", name);
	assert_int_equal(stats_walsh_median(d, nd, &got, &err), 0);
	CHECK(got, hl1, 0, "Walsh median", name);
	free(d);
}

static void test_wilcoxon_reference(void **state)
{
	(void)state;
	assert_int_equal(each_line("wilcoxon.txt", wsr_line), 44);
	assert_int_equal(wsr_exact_seen, 19);
	assert_int_equal(wsr_approx_seen, 11);
	assert_int_equal(wsr_none_seen, 2);
	assert_int_equal(wsr_minp_seen, 12);
}

/* ---- the contract's edges ---- */

static void test_empty_and_single(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct stats_mw mw;
	struct stats_hl hl;
	double one = 4.0, v = 0;

	(void)state;
	/* n = 0: NaN everywhere, not an error; x may be NULL */
	assert_int_equal(stats_median(NULL, 0, &v, &err), 0);
	assert_true(isnan(v));
	assert_int_equal(stats_mad(NULL, 0, &v, &err), 0);
	assert_true(isnan(v));
	assert_int_equal(stats_mean(NULL, 0, &v, &err), 0);
	assert_true(isnan(v));
	assert_int_equal(stats_stddev(NULL, 0, &v, &err), 0);
	assert_true(isnan(v));
	assert_int_equal(stats_cv_robust(NULL, 0, &v, &err), 0);
	assert_true(isnan(v));
	assert_int_equal(stats_mann_whitney(NULL, 0, &one, 1, &mw, &err), 0);
	assert_true(isnan(mw.u) && isnan(mw.p) && !mw.exact);
	assert_int_equal(stats_hodges_lehmann(&one, 1, NULL, 0, 0.95, &hl, &err), 0);
	assert_true(isnan(hl.shift) && isnan(hl.lo) && isnan(hl.hi) && isnan(hl.conf));
	assert_true(isnan(stats_mw_min_p(0, 5)));

	/* n = 1: a location, no spread */
	assert_int_equal(stats_median(&one, 1, &v, &err), 0);
	assert_true(v == 4.0);
	assert_int_equal(stats_mad(&one, 1, &v, &err), 0);
	assert_true(v == 0.0);
	assert_int_equal(stats_stddev(&one, 1, &v, &err), 0);
	assert_true(isnan(v));
	assert_int_equal(stats_cv(&one, 1, &v, &err), 0);
	assert_true(isnan(v));
	assert_int_equal(stats_cv_robust(&one, 1, &v, &err), 0);
	assert_true(isnan(v));
	assert_int_equal(stats_mann_whitney(&one, 1, &one, 1, &mw, &err), 0);
	assert_true(mw.p == 1.0 && mw.u == 0.5 && mw.ties);
	assert_true(stats_mw_min_p(1, 1) == 1.0);
}

static void test_all_equal(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	double x[] = { 7, 7, 7, 7, 7 }, y[] = { 7, 7, 7 }, v;
	struct stats_mw mw;
	struct stats_hl hl;

	(void)state;
	assert_int_equal(stats_mad(x, 5, &v, &err), 0);
	assert_true(v == 0);
	assert_int_equal(stats_cv(x, 5, &v, &err), 0);
	assert_true(v == 0);
	assert_int_equal(stats_cv_robust(x, 5, &v, &err), 0);
	assert_true(v == 0);
	/* every value tied: no evidence, p = 1, no z */
	assert_int_equal(stats_mann_whitney(x, 5, y, 3, &mw, &err), 0);
	assert_true(mw.p == 1.0 && !mw.exact && mw.ties && isnan(mw.z));
	assert_true(mw.u == 7.5);
	assert_int_equal(stats_hodges_lehmann(x, 5, y, 3, 0.95, &hl, &err), 0);
	assert_true(hl.shift == 0 && hl.lo == 0 && hl.hi == 0 && hl.conf == 1);
	assert_false(signbit(hl.shift));
}

static void test_not_finite(void **state)
{
	double bad[] = { 1, 2, NAN, 4 }, inf[] = { 1, INFINITY }, ok[] = { 1, 2, 3 }, v = 0;
	struct pg_err err = PG_ERR_INIT;
	struct stats_mw mw;
	struct stats_hl hl;

	(void)state;
	assert_int_equal(stats_median(bad, 4, &v, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "value 2 is not finite"));
	assert_true(isnan(v));
	pg_err_clear(&err);
	assert_int_equal(stats_stddev(inf, 2, &v, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_err_clear(&err);
	assert_int_equal(stats_mann_whitney(ok, 3, inf, 2, &mw, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_true(isnan(mw.p));
	pg_err_clear(&err);
	assert_int_equal(stats_hodges_lehmann(bad, 4, ok, 3, 0.95, &hl, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_err_clear(&err);
	assert_int_equal(stats_hodges_lehmann(ok, 3, ok, 3, 1.0, &hl, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_err_clear(&err);
	assert_int_equal(stats_hodges_lehmann(ok, 3, ok, 3, NAN, &hl, &err), -1);
	assert_int_equal(stats_cv(ok, STATS_MAX_N + 1, &v, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
}

/* Published values of Phi^-1 (e.g. R's qnorm) and their symmetry. */
static void test_normal(void **state)
{
	(void)state;
	CHECK(stats_norm_quantile(0.975), 1.959963984540054, 1e-15, "q", "0.975");
	CHECK(stats_norm_quantile(0.995), 2.5758293035489004, 1e-15, "q", "0.995");
	CHECK(stats_norm_quantile(0.5), 0.0, 0, "q", "0.5");
	CHECK(stats_norm_quantile(1e-10), -6.361340902404056, 1e-14, "q", "1e-10");
	CHECK(stats_norm_quantile(1e-300), -37.0470962993612, 1e-14, "q", "1e-300");
	CHECK(stats_norm_quantile(0.3), -stats_norm_quantile(0.7), 1e-15, "q", "sym");
	assert_true(isinf(stats_norm_quantile(0)) && stats_norm_quantile(0) < 0);
	assert_true(isinf(stats_norm_quantile(1)) && stats_norm_quantile(1) > 0);
	assert_true(isnan(stats_norm_quantile(1.5)));
	CHECK(stats_norm_sf(1.959963984540054), 0.025, 1e-14, "sf", "1.96");
	CHECK(stats_norm_sf(10), 7.619853024160527e-24, 1e-12, "sf", "10");
	for (double p = 0.001; p < 1; p += 0.0137)
		CHECK(stats_norm_sf(-stats_norm_quantile(p)), p, 1e-13, "round trip", "p");
}

/* A deterministic generator for the brute-force comparisons. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t next_u64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The shift and interval bounds are order statistics of the pairwise
 * differences: compare the bisection with sorting all of them, on random
 * samples with ties, negatives, zeros and wide magnitudes. */
static void test_hl_order_statistics(void **state)
{
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	for (int round = 0; round < 300; round++) {
		size_t nx = 1 + next_u64() % 40, ny = 1 + next_u64() % 40, mn = nx * ny, k;
		double x[40], y[40], *d = malloc(mn * sizeof(*d)), med;
		struct stats_hl hl;
		int kind = round % 3;

		assert_non_null(d);
		for (size_t i = 0; i < nx + ny; i++) {
			double a = (double)(next_u64() % 2001) - 1000.0;

			if (kind == 1)
				a = a / 7.0 * 1e6;	/* few ties, big values */
			else if (kind == 2)
				a = (double)(next_u64() % 5);	/* many ties */
			if (i < nx)
				x[i] = a;
			else
				y[i - nx] = a + 3;
		}
		for (size_t i = 0; i < nx; i++)
			for (size_t j = 0; j < ny; j++)
				d[i * ny + j] = x[i] - y[j];
		qsort(d, mn, sizeof(*d), cmp_d);
		med = mn % 2 ? d[mn / 2] : d[mn / 2 - 1] / 2 + d[mn / 2] / 2;
		assert_int_equal(stats_hodges_lehmann(x, nx, y, ny, 0.95, &hl, &err), 0);
		CHECK(hl.shift, med + 0.0, 0, "shift", "random");
		/* some k has lo = D(k) and hi = D(mn + 1 - k) */
		for (k = 1; k <= mn; k++)
			if (d[k - 1] == hl.lo && d[mn - k] == hl.hi)
				break;
		if (k > mn)
			fail_msg("round %d: [%g, %g] is not [D(k), D(mn+1-k)]", round, hl.lo,
				 hl.hi);
		assert_true(hl.lo <= hl.shift && hl.shift <= hl.hi);
		free(d);
	}
}

/* The signed-rank edges: nothing to rank, NULL, values not finite. */
static void test_wilcoxon_edges(void **state)
{
	double zeros[] = { 0, -0.0, 0 }, bad[] = { 0.1, NAN }, inf[] = { -INFINITY }, v = 0;
	struct pg_err err = PG_ERR_INIT;
	struct stats_wsr w;

	(void)state;
	assert_int_equal(stats_wilcoxon_signed_rank(NULL, 0, &w, &err), 0);
	assert_true(w.n == 0 && isnan(w.w_plus) && isnan(w.p) && isnan(w.z));
	assert_false(w.exact || w.ties);
	/* -0 is a zero too */
	assert_int_equal(stats_wilcoxon_signed_rank(zeros, 3, &w, &err), 0);
	assert_true(w.n == 0 && isnan(w.p));
	assert_int_equal(stats_walsh_median(zeros, 3, &v, &err), 0);
	assert_true(v == 0 && !signbit(v));
	assert_int_equal(stats_walsh_median(NULL, 0, &v, &err), 0);
	assert_true(isnan(v));
	assert_true(isnan(stats_wsr_min_p(0)));

	assert_int_equal(stats_wilcoxon_signed_rank(NULL, 4, &w, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_true(isnan(w.p));
	pg_err_clear(&err);
	assert_int_equal(stats_walsh_median(NULL, 4, &v, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_err_clear(&err);
	assert_int_equal(stats_median(NULL, 1, &v, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_err_clear(&err);
	assert_int_equal(stats_wilcoxon_signed_rank(bad, 2, &w, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "value 1 is not finite"));
	assert_true(isnan(w.p) && w.n == 0);
	pg_err_clear(&err);
	assert_int_equal(stats_walsh_median(inf, 1, &v, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_true(isnan(v));
	pg_err_clear(&err);
	assert_int_equal(stats_wilcoxon_signed_rank(bad, STATS_MAX_N + 1, &w, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
}

/* The Walsh median is an order statistic of the averages: compare the
 * bisection with sorting all of them, on random samples with ties, zeros,
 * negatives and wide magnitudes. */
static void test_walsh_order_statistics(void **state)
{
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	for (int round = 0; round < 300; round++) {
		size_t n = 1 + next_u64() % 60, m = n * (n + 1) / 2, k = 0;
		double d[60], *w = malloc(m * sizeof(*w)), med, got;
		int kind = round % 3;

		assert_non_null(w);
		for (size_t i = 0; i < n; i++) {
			double a = (double)(next_u64() % 2001) - 1000.0;

			if (kind == 1)
				a = a / 7.0 * 1e300;	/* a + b would overflow */
			else if (kind == 2)
				a = (double)(next_u64() % 5) - 2;	/* ties, zeros */
			d[i] = a;
		}
		for (size_t i = 0; i < n; i++)
			for (size_t j = i; j < n; j++)
				w[k++] = d[i] / 2 + d[j] / 2;
		qsort(w, m, sizeof(*w), cmp_d);
		med = m % 2 ? w[m / 2] : w[m / 2 - 1] / 2 + w[m / 2] / 2;
		assert_int_equal(stats_walsh_median(d, n, &got, &err), 0);
		CHECK(got, med + 0.0, 0, "Walsh median", "random");
		free(w);
	}
}

/* The interval of the Walsh median.  lo, hi from R 4.2's wilcox.test(d,
 * conf.int = TRUE, exact = TRUE) (R prints the level asked, so the level
 * achieved is counted here by hand: 2^n sign assignments); the normal
 * approximation's ranks against a brute-force sort of the averages. */
static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void test_walsh_interval(void **state)
{
	static const struct {
		const char *name;
		double level;
		size_t n;
		double d[9];
		double shift, lo, hi;
	} r[] = {
		{ "three", 0.95, 3, { 0.1, 0.2, 0.3 }, 0.2, 0.1, 0.3 },
		{ "six_pos", 0.95, 6, { 0.01, 0.03, 0.02, 0.05, 0.04, 0.06 }, 0.035, 0.01, 0.06 },
		{ "six_pos", 0.9, 6, { 0.01, 0.03, 0.02, 0.05, 0.04, 0.06 }, 0.035, 0.02, 0.05 },
		{ "nine_pos", 0.95, 9, { 0.11, 0.02, 0.35, 0.07, 0.19, 0.23, 0.04, 0.5, 0.13 },
		  0.16, 0.065, 0.315 },
		{ "nine_pos", 0.9, 9, { 0.11, 0.02, 0.35, 0.07, 0.19, 0.23, 0.04, 0.5, 0.13 },
		  0.16, 0.075, 0.285 },
		{ "eight_mixed", 0.95, 8, { 0.3, -0.1, 0.25, 0.6, -0.45, 0.05, 0.7, 0.15 },
		  0.1875, -0.15, 0.5 },
	};
	/* ties: the approximation, k = ceil(22.5 - 0.5 - 1.96 * 8.441) = 6 */
	double ties[9] = { 1, 2, 2, -2, 3, 3, 3, -4, 5 }, w[45];
	struct stats_hl hl;
	struct pg_err err = PG_ERR_INIT;
	size_t m = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		assert_int_equal(stats_walsh_interval(r[i].d, r[i].n, r[i].level, &hl, &err), 0);
		CHECK(hl.shift, r[i].shift, 1e-15, "shift", r[i].name);
		CHECK(hl.lo, r[i].lo, 1e-15, "lo", r[i].name);
		CHECK(hl.hi, r[i].hi, 1e-15, "hi", r[i].name);
		assert_true(hl.exact);
	}
	/* levels achieved: 3 values, [min, max]: 1 - 2/8; 6 values at 0.95,
	 * k = 1: 1 - 2 P(W+ <= 0) = 1 - 2/64; at 0.9, k = 3 (P(W+ <= 3) = 5/64
	 * >= 0.05): 1 - 2 P(W+ <= 2) = 1 - 6/64 */
	assert_int_equal(stats_walsh_interval(r[0].d, 3, 0.95, &hl, &err), 0);
	assert_true(hl.conf == 0.75);
	assert_int_equal(stats_walsh_interval(r[1].d, 6, 0.95, &hl, &err), 0);
	assert_true(hl.conf == 1 - 2.0 / 64);
	assert_int_equal(stats_walsh_interval(r[1].d, 6, 0.9, &hl, &err), 0);
	assert_true(hl.conf == 1 - 6.0 / 64);

	for (size_t i = 0; i < 9; i++)
		for (size_t j = i; j < 9; j++)
			w[m++] = ties[i] / 2 + ties[j] / 2;
	qsort(w, m, sizeof(w[0]), cmp_dbl);
	assert_int_equal(stats_walsh_interval(ties, 9, 0.95, &hl, &err), 0);
	assert_false(hl.exact);
	assert_true(hl.lo == w[5] && hl.hi == w[45 - 6]);
	assert_true(fabs(hl.conf - (1 - 2 * stats_norm_sf(17 / sqrt(9 * 10 * 19 / 24.0)))) < 1e-15);
	assert_true(hl.conf > 0.95 && hl.conf < 0.96);

	assert_int_equal(stats_walsh_interval(NULL, 0, 0.95, &hl, &err), 0);
	assert_true(isnan(hl.shift) && isnan(hl.lo) && isnan(hl.hi) && isnan(hl.conf));
	assert_int_equal(stats_walsh_interval(ties, 9, 1, &hl, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe_reference),
		cmocka_unit_test(test_mann_whitney_reference),
		cmocka_unit_test(test_hodges_lehmann_reference),
		cmocka_unit_test(test_wilcoxon_reference),
		cmocka_unit_test(test_empty_and_single),
		cmocka_unit_test(test_all_equal),
		cmocka_unit_test(test_not_finite),
		cmocka_unit_test(test_normal),
		cmocka_unit_test(test_hl_order_statistics),
		cmocka_unit_test(test_wilcoxon_edges),
		cmocka_unit_test(test_walsh_order_statistics),
		cmocka_unit_test(test_walsh_interval),
	};
	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
