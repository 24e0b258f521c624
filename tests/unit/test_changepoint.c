/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/changepoint.c: a step found at the right
 * commit as the history grows one commit at a time, noise and a lone wild
 * value not flagged, the minimum change, and bad input.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "changepoint.h"

/* A fixed pseudo-random normal sequence (LCG + Box-Muller), so that every
 * run sees the same "noise". */
static uint64_t rng = 88172645463325252ULL;

static double uniform(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

static const struct cp_params params = CP_PARAMS_DEFAULT;

/* The history of a key measured commit by commit: 15 commits at 100, then
 * a 10 % slowdown, with 1 % noise.  Detection is tried after every commit,
 * as the verdict pass does: nothing is found before 5 commits after the
 * step were measured, then the change is found exactly between commits 14
 * and 15. */
static void test_step_found_at_the_right_commit(void **state)
{
	double x[30];
	size_t first_found = 0;
	struct cp_change ch;

	(void)state;
	rng = 1;
	for (size_t i = 0; i < 30; i++)
		x[i] = (i < 15 ? 100.0 : 90.0) * (1 + 0.01 * normal());
	for (size_t n = 1; n <= 30 && !first_found; n++) {
		assert_int_equal(cp_detect(x, n, &params, &ch, NULL), 0);
		if (ch.found)
			first_found = n;
	}
	assert_int_equal(first_found, 15 + CP_MIN_POINTS_DEFAULT);
	assert_int_equal(ch.split, 15);
	assert_true(ch.judged);
	assert_true(ch.p < 0.001);
	assert_true(ch.change_pct < -8 && ch.change_pct > -12);
	assert_true(fabs(ch.before_median - 100) < 2);
	assert_true(fabs(ch.after_median - 90) < 2);
}

/* The same as an improvement: found, with a positive change. */
static void test_step_up(void **state)
{
	double x[12];
	struct cp_change ch;

	(void)state;
	for (size_t i = 0; i < 12; i++)
		x[i] = (i < 6 ? 50.0 : 60.0) + (double)i * 0.01;
	assert_int_equal(cp_detect(x, 12, &params, &ch, NULL), 0);
	assert_true(ch.found);
	assert_int_equal(ch.split, 6);
	assert_true(ch.change_pct > 19 && ch.change_pct < 21);
	/* 6 + 6 completely separated, exact: 2 / C(12, 6) */
	assert_true(fabs(ch.p - 2.0 / 924.0) < 1e-12);
}

/* Noise alone (2 % spread, under the 5 % minimum change): tried after each
 * of 200 commits, never flagged. */
static void test_noise_not_flagged(void **state)
{
	double x[200];
	struct cp_change ch;
	size_t judged = 0;

	(void)state;
	rng = 42;
	for (size_t i = 0; i < 200; i++)
		x[i] = 1.0e7 * (1 + 0.02 * normal());
	for (size_t n = 1; n <= 200; n++) {
		assert_int_equal(cp_detect(x, n, &params, &ch, NULL), 0);
		assert_false(ch.found);
		judged += ch.judged;
	}
	/* The search did run: most splits had enough values to be judged. */
	assert_true(judged > 100);
}

/* One wild value (a bad run that slipped into the history) is not a
 * change of level. */
static void test_outlier_not_flagged(void **state)
{
	double x[31];
	struct cp_change ch;

	(void)state;
	for (size_t i = 0; i < 31; i++)
		x[i] = 100 + (double)(i % 4) * 0.2;
	x[15] = 150;
	for (size_t n = 1; n <= 31; n++) {
		assert_int_equal(cp_detect(x, n, &params, &ch, NULL), 0);
		assert_false(ch.found);
	}
}

/* A significant shift smaller than the minimum change is not flagged; a
 * smaller minimum flags it. */
static void test_min_change(void **state)
{
	struct cp_params small = { 5, 0.01, 1.0 };
	double x[20];
	struct cp_change ch;

	(void)state;
	for (size_t i = 0; i < 20; i++)
		x[i] = (i < 10 ? 100.0 : 97.0) + (double)(i % 3) * 0.01;
	assert_int_equal(cp_detect(x, 20, &params, &ch, NULL), 0);
	assert_false(ch.found);
	assert_true(ch.judged);
	assert_int_equal(ch.split, 10);
	assert_true(ch.p < 0.001);
	assert_int_equal(cp_detect(x, 20, &small, &ch, NULL), 0);
	assert_true(ch.found);
}

/* A main branch's minimum change: 1 %, or a smaller threshold. */
static void test_main_min_change(void **state)
{
	(void)state;
	assert_true(cp_main_min_change(5.0) == CP_MAIN_MIN_CHANGE_PCT);
	assert_true(cp_main_min_change(0.5) == 0.5);
	assert_true(CP_MAIN_MIN_CHANGE_PCT == 1.0);
}

static void test_bad_input(void **state)
{
	struct cp_params bad = { 1, 0.01, 5 };
	double x[3] = { 1, NAN, 3 }, big[CP_MAX_POINTS + 1] = { 0 };
	struct cp_change ch;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(cp_detect(x, 1, &bad, &ch, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	bad.min_points = 5;
	bad.alpha = 0.6;
	assert_int_equal(cp_detect(x, 1, &bad, &ch, &err), -1);
	bad.alpha = 0.01;
	bad.min_change_pct = 0;
	assert_int_equal(cp_detect(x, 1, &bad, &ch, &err), -1);
	assert_int_equal(cp_detect(x, 3, &params, &ch, &err), -1);
	assert_string_equal(err.msg, "change points: value 1 is not finite");
	assert_int_equal(cp_detect(big, CP_MAX_POINTS + 1, &params, &ch, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	/* Too little to say anything: an answer, not an error. */
	assert_int_equal(cp_detect(NULL, 0, &params, &ch, &err), 0);
	assert_false(ch.found);
	assert_false(ch.judged);
	assert_true(isnan(ch.p));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_found_at_the_right_commit),
		cmocka_unit_test(test_step_up),
		cmocka_unit_test(test_noise_not_flagged),
		cmocka_unit_test(test_outlier_not_flagged),
		cmocka_unit_test(test_min_change),
		cmocka_unit_test(test_main_min_change),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
