/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/bisect.c: the levels, their test and noise, a
 * range narrowed by the commits measured inside it, the middle commit
 * asked for, a commit in the middle zone measured again, the ends checked
 * (widened or measured again), located at one commit, and bad input.
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
	struct bisect_in in = { .before = 100, .after = 90, .n_range = 9 };
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
	struct bisect_in in = { .before = 100, .after = 90, .n_range = 9, .pts = pts,
				.n_pts = 3 };
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
	struct bisect_in in = { .before = 100, .after = 120, .n_range = 6, .pts = pts,
				.n_pts = 2 };
	struct bisect_step st;

	(void)state;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_LOCATED);
	assert_int_equal(st.first, 3);
	assert_int_equal(st.last, 3);
	/* Adjacent commits: located at once. */
	in = (struct bisect_in){ .before = 100, .after = 120, .n_range = 1 };
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
	struct bisect_in in = { .before = 100, .after = 81, .n_range = 4, .pts = pts,
				.n_pts = 2 };
	struct bisect_step st;

	(void)state;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.first, 2);
	assert_int_equal(st.last, 3);
	assert_int_equal(st.next, BISECT_MEASURE);
	assert_int_equal(st.measure, 2);
}

/* Levels 100 and 90 with 1 % noise: log(100/90) = 0.105, the zone is
 * BISECT_ZONE_Z (2) * 0.01 / sqrt(n) around the midpoint 94.9 on the log
 * scale. */
static const double sigma1 = 0.01;

/* A commit in the middle zone is measured again; with more values its
 * median decides; at the cap of values, or with no baseline left, the
 * nearer level decides. */
static void test_undecided_measured_again(void **state)
{
	const double mid[] = { 94.5 }, two[] = { 94.5, 92 };
	const double cap[BISECT_COMMIT_MAX_VALUES] = { 94.9, 95, 95, 95.1,
							94.9, 95, 95, 95.1 };
	struct bisect_point pt = { 3, mid, 1 };
	struct bisect_in in = { .before = 100, .after = 90, .sigma = sigma1, .n_range = 9,
				.pts = &pt, .n_pts = 1, .may_measure = true };
	struct bisect_step st;

	(void)state;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_MEASURE);
	assert_int_equal(st.measure, 3);
	assert_true(st.again);
	assert_false(st.moved);
	/* Two values: median 93.25, out of the narrower zone: new level. */
	pt.v = two;
	pt.n = 2;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_MEASURE);
	assert_false(st.again);
	assert_int_equal(st.last, 3);
	assert_int_equal(st.measure, 1);
	/* At the cap of values still undecided: the nearer level (old). */
	pt.v = cap;
	pt.n = BISECT_COMMIT_MAX_VALUES;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_false(st.again);
	assert_int_equal(st.first, 4);
	assert_int_equal(st.last, 8);
	/* No baseline left: one value decides (94.5 is nearer 90). */
	pt.v = mid;
	pt.n = 1;
	in.may_measure = false;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_false(st.again);
	assert_int_equal(st.first, 0);
	assert_int_equal(st.last, 3);
}

/* The ends: `before` at the new level widens the range before it, `after`
 * at the old one after it; an end undecided is measured again; ends at
 * their own levels change nothing. */
static void test_ends(void **state)
{
	const double old[] = { 99.8 }, new1[] = { 90.3 }, mid[] = { 95.2 };
	struct bisect_in in = { .before = 100, .after = 90, .sigma = sigma1, .n_range = 5,
				.end_before = { 0, old, 1 }, .end_after = { 0, new1, 1 },
				.may_measure = true };
	struct bisect_step st;

	(void)state;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_MEASURE);
	assert_int_equal(st.measure, 1);
	in.end_before.v = new1;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_WIDEN_BEFORE);
	assert_false(st.moved);
	in.end_before.v = mid;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_MEASURE_BEFORE);
	in.end_before.v = old;
	in.end_after.v = old;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_WIDEN_AFTER);
	in.end_after.v = mid;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_MEASURE);
	assert_int_equal(st.measure, 4);
	assert_true(st.again);
	/* An end the search chose, with one value: a wider zone (92.8 is
	 * outside the plain zone, inside the wide one); with two values the
	 * plain zone again. */
	{
		const double lean[] = { 92.8 }, lean2[] = { 92.8, 92.8 };

		in.end_after.v = lean;
		assert_int_equal(bisect_step(&in, &st, NULL), 0);
		assert_int_equal(st.next, BISECT_MEASURE);
		assert_false(st.again);
		in.after_found = true;
		assert_int_equal(bisect_step(&in, &st, NULL), 0);
		assert_int_equal(st.next, BISECT_MEASURE);
		assert_true(st.again);
		assert_int_equal(st.measure, 4);
		in.end_after.v = lean2;
		in.end_after.n = 2;
		assert_int_equal(bisect_step(&in, &st, NULL), 0);
		assert_false(st.again);
		in.end_after.n = 1;
		in.after_found = false;
	}
	/* Adjacent commits whose ends hold: located. */
	in.end_after.v = new1;
	in.n_range = 1;
	assert_int_equal(bisect_step(&in, &st, NULL), 0);
	assert_int_equal(st.next, BISECT_LOCATED);
}

/* The noise from the levels, and a step that does not stand yet with few
 * commits after it: wait rather than dismiss. */
static void test_levels_noise_and_wait(void **state)
{
	const double xb[] = { 100, 101, 99, 100, 100, 100, 100, 100, 100, 100 };
	const double xa[] = { 100, 99.5, 100.5 };
	struct bisect_levels lv;

	(void)state;
	assert_int_equal(bisect_levels(xb, 10, xa, 3, 0.01, &lv, NULL), 0);
	assert_false(lv.stands);
	assert_true(lv.wait);
	assert_true(lv.sigma >= 0 && lv.sigma < 0.01);
	assert_int_equal(bisect_levels(xb, 10, xb, 10, 0.01, &lv, NULL), 0);
	assert_false(lv.stands);
	assert_false(lv.wait);
}

static void test_bad_input(void **state)
{
	const double v[] = { 95 }, xb[] = { 1, NAN };
	const struct bisect_point unordered[] = { { 2, v, 1 }, { 1, v, 1 } };
	const struct bisect_point outside[] = { { 3, v, 1 } };
	const struct bisect_point empty[] = { { 1, v, 0 } };
	struct bisect_in in = { .before = 100, .after = 100, .n_range = 4 };
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
		cmocka_unit_test(test_undecided_measured_again),
		cmocka_unit_test(test_ends),
		cmocka_unit_test(test_levels_noise_and_wait),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
