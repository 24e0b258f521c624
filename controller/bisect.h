/* SPDX-License-Identifier: MIT */
#ifndef CTL_BISECT_H
#define CTL_BISECT_H

/*
 * The decisions of a bisection step (planner.h, "Bisection"; DESIGN.md
 * section 2.9), apart from the store, git and the queue.  Pure: no I/O.
 * planner_bisect.c reads the history, the first-parent range and the
 * change point, asks these two functions what to do, and does it;
 * bench/changes_sim.c asks the same functions on simulated histories.
 *
 * A change point's range is (before, after]: the commits of the branch's
 * first-parent line after `before` up to and including `after`, oldest
 * first, numbered 0 .. n_range - 1 (after is n_range - 1).  The change is
 * at one of them: the first commit at the new level.
 *
 *  1. Levels (bisect_levels()): the level before is the median of the
 *     values of up to BISECT_LEVEL_POINTS measured commits up to and
 *     including `before`, the level after that of up to as many from
 *     `after` on (each commit counts once, by the median of its values).
 *     The step stands when both levels are > 0 and a two-sided
 *     Mann-Whitney test between the two groups gives p < alpha.
 *
 *  2. Step (bisect_step()): the measured commits strictly inside the
 *     range are taken oldest first.  The median m of a commit's values is
 *     placed on the log scale between the levels, t = log(m / before) /
 *     log(after / before) (0 at the level before, 1 at the level after).
 *     A commit with t <= 1/2 (not nearer the level after) is at the old
 *     level: the range starts after it.  One with t > 1/2 is at the new
 *     level: the range ends at it, and later ones are not looked at.  A
 *     commit whose median is not > 0 is skipped.
 *     The result is the range left: located when it holds one commit;
 *     else the next baseline is at its middle commit (the older of the
 *     two middle ones).
 */

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* Commits on each side whose medians make a level. */
#define BISECT_LEVEL_POINTS 10

struct bisect_levels {
	double before, after;		/* medians; NaN without values */
	double p;			/* the step's two-sided Mann-Whitney p */
	bool stands;			/* before > 0, after > 0, p < alpha */
};

/*
 * The levels around a range from the commit medians xb[0..nb) (the
 * commits up to `before`) and xa[0..na) (from `after` on), each 1 ..
 * BISECT_LEVEL_POINTS values, as in 1. above.  Returns 0, or -1 with err:
 * PG_EINVAL for counts out of range, alpha not in (0, 1) or a value that
 * is not finite; PG_ENOMEM.
 */
int bisect_levels(const double *xb, size_t nb, const double *xa, size_t na, double alpha,
		  struct bisect_levels *out, struct pg_err *err);

/* A measured commit inside a range. */
struct bisect_point {
	size_t pos;			/* 0 .. n_range - 2 */
	const double *v;		/* its values, >= 1 */
	size_t n;
};

struct bisect_in {
	double before, after;		/* the levels, > 0 and different */
	size_t n_range;			/* commits in (before, after], >= 1 */
	const struct bisect_point *pts;	/* by pos, strictly ascending */
	size_t n_pts;
};

enum bisect_next {
	BISECT_LOCATED,			/* the range is one commit: `last` */
	BISECT_MEASURE,			/* measure the commit at `measure` */
};

struct bisect_step {
	enum bisect_next next;
	size_t first, last;		/* the range left: positions first ..
					 * last; its `before` is the commit
					 * at first - 1 (the old before when
					 * first is 0), its `after` at last */
	bool moved;			/* first > 0 or last < n_range - 1 */
	size_t measure;			/* BISECT_MEASURE: first <= measure <
					 * last */
};

/*
 * One step as in 2. above.  Returns 0 with *out, or -1 with err:
 * PG_EINVAL for levels not > 0 or equal, n_range 0, points out of order
 * or outside the range, a point without values; PG_ENOMEM.
 */
int bisect_step(const struct bisect_in *in, struct bisect_step *out, struct pg_err *err);

#endif
