/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/bisect.c: the levels and their test, a range
 * narrowed by the commits measured inside it, the middle commit asked
 * for, located at one commit, and bad input.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bisect.h"

static void test_levels(void **state)
{
	const double xb[] = { 100, 101, 99, 100.5, 99.5, 100 };
	const double xa[] = { 90, 91, 89, 90.5, 89.5 };
	const double flat[] = { 100, 99, 101, 100.2, 99.8 };
	struct bisect_levels lv;

	(void)state;
	assert_int_equal(bisect_levels(xb, 6, xa, 5, 0.01, &lv, NULL), 0);
	assert_true(lv.stands);
	assert_true(fabs(lv.before - 100) < 1e-9);
	assert_true(fabs(lv.after - 90) < 1e-9);
	assert_true(lv.p < 0.01);
	/* No step: the test does not pass. */
	assert_int_equal(bisect_levels(xb, 6, flat, 5, 0.01, &lv, NULL), 0);
	assert_false(lv.stands);
	assert_true(lv.p > 0.01);
	/* One value a side can never reach p < 0.01. */
	assert_int_equal(bisect_levels(xb, 1, xa, 1, 0.01, &lv, NULL), 0);
	assert_false(lv.stands);
}

/* A range of 9 commits (positions 0 .. 8, the after commit at 8) with
 * nothing measured inside: measure the middle of 0 .. 7. */
static void test_first_step(void **state)
{
	struct bisect_in in = { 100, 90, 9, NULL, 0 };
	struct bisect_step st;

	(void)state;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_MEASURE);
	assert_int_equal(st.first, 0);
	assert_int_equal(st.last, 8);
	assert_false(st.moved);
	assert_int_equal(st.measure, 3);
}

/* Commits measured at the old level move the start, the first at the new
 * level ends the range; a later value is not looked at. */
static void test_narrowed(void **state)
{
	const double old[] = { 99.5 }, new1[] = { 91 }, wild[] = { 100 };
	const struct bisect_point pts[] = {
		{ 1, old, 1 }, { 5, new1, 1 }, { 6, wild, 1 },
	};
	struct bisect_in in = { 100, 90, 9, pts, 3 };
	struct bisect_step st;

	(void)state;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_MEASURE);
	assert_int_equal(st.first, 2);
	assert_int_equal(st.last, 5);
	assert_true(st.moved);
	assert_int_equal(st.measure, 3);
}

/* A speedup works the same way; a commit measured several times counts by
 * its median; one commit left is located. */
static void test_located(void **state)
{
	const double a[] = { 100, 120, 101 }, b[] = { 119 };
	const struct bisect_point pts[] = { { 2, a, 3 }, { 3, b, 1 } };
	struct bisect_in in = { 100, 120, 6, pts, 2 };
	struct bisect_step st;

	(void)state;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_LOCATED);
	assert_int_equal(st.first, 3);
	assert_int_equal(st.last, 3);
	/* Adjacent commits: located at once. */
	in = (struct bisect_in){ 100, 120, 1, NULL, 0 };
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_LOCATED);
	assert_int_equal(st.last, 0);
	assert_false(st.moved);
}

/* A value that is not > 0 is skipped. */
static void test_skip(void **state)
{
	const double zero[] = { 0 }, old[] = { 92 };
	const struct bisect_point pts[] = { { 0, zero, 1 }, { 1, old, 1 } };
	struct bisect_in in = { 100, 81, 4, pts, 2 };
	struct bisect_step st;

	(void)state;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.first, 2);
	assert_int_equal(st.last, 3);
	assert_int_equal(st.next, BISECT_MEASURE);
	assert_int_equal(st.measure, 2);
}

static void test_bad_input(void **state)
{
	const double v[] = { 95 }, xb[] = { 1, NAN };
	const struct bisect_point unordered[] = { { 2, v, 1 }, { 1, v, 1 } };
	const struct bisect_point outside[] = { { 3, v, 1 } };
	const struct bisect_point empty[] = { { 1, v, 0 } };
	struct bisect_in in = { 100, 100, 4, NULL, 0 };
	struct bisect_levels lv;
	struct bisect_step st;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(bisect_step(&in, &st, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	in.after = 90;
	in.n_range = 0;
	assert_int_equal(bisect_step(&in, &st, &err), -1);
	in.n_range = 4;
	in.pts = unordered;
	in.n_pts = 2;
	assert_int_equal(bisect_step(&in, &st, &err), -1);
	in.pts = outside;
	in.n_pts = 1;
	assert_int_equal(bisect_step(&in, &st, &err), -1);
	assert_string_equal(err.msg, "bisection step: point 0 out of range");
	in.pts = empty;
	assert_int_equal(bisect_step(&in, &st, &err), -1);
	assert_int_equal(bisect_levels(xb, 2, v, 1, 0.01, &lv, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(bisect_levels(xb, 0, v, 1, 0.01, &lv, &err), -1);
	assert_int_equal(bisect_levels(v, 1, v, BISECT_LEVEL_POINTS + 1, 0.01, &lv, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_first_step),
		cmocka_unit_test(test_narrowed),
		cmocka_unit_test(test_located),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
