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
 *     Mann-Whitney test between the two groups gives p < alpha.  One that
 *     does not stand with fewer than BISECT_LEVEL_POINTS commits measured
 *     from `after` on is not judged yet: the change point waits for more
 *     head baselines (cp_detect() judges its split with only
 *     CP_MIN_POINTS_DEFAULT values after it, against the whole segment
 *     before it, which the levels do not see).  The
 *     noise, sigma, is the robust standard deviation (MAD *
 *     STATS_MAD_NORMAL) of the log values around their own side's level.
 *
 *  2. Step (bisect_step()).  A commit's median m of its n values is placed
 *     on the log scale between the levels: u = log(m / before) / log(after
 *     / before) is 0 at the level before, 1 at the level after.  It is at
 *     the old level when u < 1/2 - z, at the new level when u > 1/2 + z,
 *     and undecided in between, where z = BISECT_ZONE_Z * sigma / sqrt(n)
 *     / |log(after / before)|: half a zone of BISECT_ZONE_Z standard
 *     errors of its median around the midpoint.  An undecided commit is
 *     measured again while it has fewer than BISECT_COMMIT_MAX_VALUES
 *     values and a baseline may be spent (may_measure); else it goes to
 *     the level it is nearer to (u <= 1/2: the old one).  With sigma 0
 *     every commit goes to the nearer level at once.
 *     a. The ends first: the range's `before` at the new level means the
 *        search put the change one measured commit too late: widen the
 *        range to the measured commit before it (BISECT_WIDEN_BEFORE);
 *        `after` at the old level, one too early (BISECT_WIDEN_AFTER).
 *        An end undecided is measured again.  An end without values is
 *        not checked.  An end the search chose is the value that made its
 *        split the best fit, so it leans toward the other level by
 *        selection: while it has one value its zone is BISECT_END_ZONE_Z
 *        standard errors wide instead (a step of 10 times the noise
 *        hardly ever needs it, one of 3 times always does).
 *     b. The measured commits strictly inside the range, oldest first: one
 *        at the old level starts the range after it; one at the new level
 *        ends the range at it, and later ones are not looked at; an
 *        undecided one is measured again.  A commit whose median is not
 *        > 0 is skipped.
 *     The result is the range left: located when it holds one commit;
 *     else the next baseline is at its middle commit (the older of the
 *     two middle ones).
 *
 * Why the zone: one value of a commit decides a step of 3 times the noise
 * wrongly 7 % of the time (the midpoint is 1.5 standard deviations from
 * either level), and a bisection takes 4 or 5 such decisions, any of
 * which puts the step at the wrong commit.  Measured again while
 * undecided, with the ends the search chose checked, a step of 3 times
 * the noise is located at its commit in 95-96 % of simulated histories
 * (bench/changes_sim.c, 1,000 per cell, two seeds; 96-97 % once
 * CP_SPREAD_MULT 2 lets the search find more of them) for ~11.5 bisection
 * baselines; a step of 10 times the noise almost never falls in a zone
 * and still takes ~3.7.  Why these sizes: with a zone of 1.5 standard
 * errors and a commit's nearer level deciding after 4 values, 89-93 %
 * were located for ~8.5 baselines: a commit still in the zone after 4
 * values is one whose values lean toward the midpoint, and its nearer
 * level is then wrong often; most of the misses were such forced
 * decisions, the rest the levels' own error (each the median of 10
 * commits), which a zone of 2 standard errors covers.  A zone of 2 with
 * 4 values, or of 1.5 with 8, gives 93-96 %.
 */

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* Commits on each side whose medians make a level. */
#define BISECT_LEVEL_POINTS 10
/* The undecided zone, in standard errors of a commit's median either side
 * of the midpoint, and the values of a commit after which its nearer level
 * decides (see "Why the zone" above; PLANNER_BISECT_MAX_RUNS leaves room
 * for a few commits measured that often). */
#define BISECT_ZONE_Z 2.0
/* The zone of an end that the search chose, while it has one value. */
#define BISECT_END_ZONE_Z 3.0
#define BISECT_COMMIT_MAX_VALUES 8

struct bisect_levels {
	double before, after;		/* medians; NaN without values */
	double p;			/* the step's two-sided Mann-Whitney p */
	double sigma;			/* the noise of one value, log scale */
	bool stands;			/* before > 0, after > 0, p < alpha */
	bool wait;			/* it does not stand, but fewer than
					 * BISECT_LEVEL_POINTS commits after
					 * it are measured: not judged yet */
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
	double sigma;			/* >= 0, log scale (bisect_levels()) */
	size_t n_range;			/* commits in (before, after], >= 1 */
	const struct bisect_point *pts;	/* by pos, strictly ascending */
	size_t n_pts;
	/* The values of the range's ends, the commit `before` and the commit
	 * `after` (pos ignored; n 0: not checked). */
	struct bisect_point end_before, end_after;
	bool before_found, after_found;	/* that end is the one the search
					 * chose (2a) */
	bool may_measure;		/* a baseline may be spent */
};

enum bisect_next {
	BISECT_LOCATED,			/* the range is one commit: `last` */
	BISECT_MEASURE,			/* measure the commit at `measure`
					 * (n_range - 1: the end after) */
	BISECT_MEASURE_BEFORE,		/* measure the end before again */
	BISECT_WIDEN_BEFORE,		/* the end before is at the new level */
	BISECT_WIDEN_AFTER,		/* the end after is at the old level */
};

struct bisect_step {
	enum bisect_next next;
	size_t first, last;		/* the range left: positions first ..
					 * last; its `before` is the commit
					 * at first - 1 (the old before when
					 * first is 0), its `after` at last */
	bool moved;			/* first > 0 or last < n_range - 1 */
	size_t measure;			/* BISECT_MEASURE: first <= measure <=
					 * last */
	bool again;			/* BISECT_MEASURE: of a commit already
					 * measured, undecided */
};

/*
 * One step as in 2. above.  For the BISECT_WIDEN_ answers first and last
 * are 0 and n_range - 1 (nothing narrowed).  Returns 0 with *out, or -1
 * with err: PG_EINVAL for levels not > 0 or equal, sigma < 0, n_range 0,
 * points out of order or outside the range, a point without values;
 * PG_ENOMEM.
 */
int bisect_step(const struct bisect_in *in, struct bisect_step *out, struct pg_err *err);

#endif
