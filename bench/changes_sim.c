/* SPDX-License-Identifier: MIT */
/*
 * Change points on a main branch by simulation (issue 17): how often a
 * step in a benchmark's level is found, located to its commit by
 * bisection, and at what cost in baselines; and how many alerts a branch
 * whose level never moves raises.
 *
 * A history is COMMITS commits on one first-parent line, 0 .. COMMITS - 1.
 * Commit 0 is measured, then commits arrive in pushes of 1 to PUSH_MAX
 * commits (uniform) and a head baseline measures each push's head: the
 * history has gaps that bisection must fill.  A measurement of commit c is
 * LEVEL * step(c) * exp(s * Z), Z standard normal, s the noise level (a
 * lognormal whose log has standard deviation s: s = 0.01 is "1 % noise"),
 * one history value per baseline.  step(c) is 1 before the step's commit
 * and 1 - step (a slowdown of a higher-is-better key; every fourth
 * history a speedup, 1 + step) from it on; the step's commit is uniform
 * in [COMMITS / 5, 4 * COMMITS / 5), so that enough pushes come after it.
 * A/A histories have no step.
 *
 * The rules are the controller's own, not copies: after each new value
 * (a head's or a bisection's), the series since the commit after the last
 * change point recorded (its range's end as it stands, as
 * changes_last_after() reads it), one value per measured commit (the
 * median of its values) in commit order, the latest CP_MAX_POINTS, goes
 * to cp_detect() with detect()'s parameters (verdict_history.c); a change
 * found is recorded unless one with that end exists.  Each change point
 * still suspected is then bisected as planner_bisect.c's bisect_one()
 * does, with bisect_levels() and bisect_step() (bisect.h): adjacent
 * commits are located at once, levels that do not stand dismiss it, a
 * step located confirms it, PLANNER_BISECT_MAX_RUNS baselines dismiss it,
 * else the commit the step asks for is measured once more (one more noisy
 * value of it, which is also a new history value, searched as above).
 * Simplification: bisection runs to its end before the next push arrives.
 *
 * Per (noise, step): the change point whose first range holds the step's
 * commit is the step's; found, located at the step's commit exactly or
 * within one commit, dismissed, its bisection baselines, and the commits
 * between the step and the head whose baseline found it.  Other change
 * points confirmed in those histories are false alerts.  Per noise level,
 * A/A: change points confirmed (alerts) and dismissed per 1,000 commits.
 * Every cell has its own random stream derived from the seed.
 *
 *   changes_sim [-n HISTORIES] [-c COMMITS] [-t THRESHOLD_PCT] [-s SEED]
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bisect.h"
#include "changepoint.h"
#include "err.h"
#include "planner.h"
#include "rng.h"
#include "stats.h"
#include "text.h"
#include "timeutil.h"
#include "verdict_pass.h"

#define LEVEL 1.5e8			/* a mempool rate */
#define PUSH_MAX 20
#define COMMITS_MAX 5000
/* Values of one commit: a head baseline and the bisections' at most. */
#define VALUES_MAX (PLANNER_BISECT_MAX_RUNS + 2)
#define CPS_MAX 64
#define GOAL_FOUND 0.95
#define GOAL_ALERTS_PER_1000 1.0
#define EXIT_USAGE 2

static const double noise_pcts[] = { 0.5, 1, 2, 5 };
/* Steps in percent; STEP_3X stands for 3 times the cell's noise. */
static const double step_pcts[] = { 0, 2, 3, 5, 10, 20, -1 };
#define N_NOISE (sizeof(noise_pcts) / sizeof(noise_pcts[0]))
#define N_STEP (sizeof(step_pcts) / sizeof(step_pcts[0]))
#define STEP_AA 0
#define STEP_3X (N_STEP - 1)

enum cp_state { CP_SUSPECTED, CP_CONFIRMED, CP_DISMISSED };

struct cpt {
	size_t first_before, first_after;	/* as found */
	size_t before, after;			/* as it stands */
	size_t found_at;			/* the head when found */
	size_t located;
	int runs;
	enum cp_state state;
};

struct commit {
	double v[VALUES_MAX];
	size_t n;
};

struct sim {
	long histories;
	size_t commits;
	double threshold_pct;		/* the context's */
	double min_change_pct;		/* -m: instead of cp_main_min_change() */
	uint64_t seed;
	/* One history. */
	struct commit *c;
	size_t *idx;			/* measured commits, in commit order */
	double *x;
	struct cpt cps[CPS_MAX];
	size_t n_cps;
	size_t step_at;			/* commits: no step */
	double s, step;			/* noise; step as a factor */
	size_t head;
	struct pg_rng r;
};

struct tally {
	long histories, found, exact, within1, dismissed, runs, runs_max, delay;
	long other_confirmed, other_dismissed;
	long commits;
};

/* The measured commits in commit order into sim->idx; their count. */
static size_t series(struct sim *sim)
{
	size_t n = 0;

	for (size_t i = 0; i < sim->commits; i++)
		if (sim->c[i].n)
			sim->idx[n++] = i;
	return n;
}

static long series_find(const struct sim *sim, size_t n, size_t commit)
{
	for (size_t i = 0; i < n; i++)
		if (sim->idx[i] == commit)
			return (long)i;
	return -1;
}

static int commit_median(const struct sim *sim, size_t commit, double *m, struct pg_err *err)
{
	return stats_median(sim->c[commit].v, sim->c[commit].n, m, err);
}

static double min_change(const struct sim *sim)
{
	return sim->min_change_pct > 0 ? sim->min_change_pct : cp_main_min_change(sim->threshold_pct);
}

/* verdict_history.c's detect() on the history as it stands. */
static int detect(struct sim *sim, struct pg_err *err)
{
	struct cp_params cp = { VERDICT_CP_MIN_POINTS, VERDICT_CP_ALPHA, min_change(sim) };
	size_t n = series(sim), from = 0, before, after;
	struct cp_change ch;

	if (sim->n_cps) {
		long k = series_find(sim, n, sim->cps[sim->n_cps - 1].after);

		if (k >= 0)
			from = (size_t)k;
	}
	if (n - from > CP_MAX_POINTS)
		from = n - CP_MAX_POINTS;
	for (size_t i = from; i < n; i++)
		if (commit_median(sim, sim->idx[i], &sim->x[i - from], err) < 0)
			return -1;
	if (cp_detect(sim->x, n - from, &cp, &ch, err) < 0)
		return -1;
	if (!ch.found)
		return 0;
	before = sim->idx[from + ch.split - 1];
	after = sim->idx[from + ch.split];
	for (size_t i = 0; i < sim->n_cps; i++)
		if (sim->cps[i].after == after)
			return 0;
	if (sim->n_cps == CPS_MAX)
		return pg_err_set(err, PG_ETOOBIG, "more than %d change points", CPS_MAX);
	sim->cps[sim->n_cps++] = (struct cpt){ before, after, before, after, sim->head, 0, 0,
					       CP_SUSPECTED };
	return 0;
}

/* One baseline of commit c: one more value, then the search. */
static int measure(struct sim *sim, size_t c, struct pg_err *err)
{
	struct commit *k = &sim->c[c];
	double level = LEVEL * (c >= sim->step_at ? sim->step : 1.0);

	if (k->n == VALUES_MAX)
		return pg_err_set(err, PG_ETOOBIG, "commit %zu measured %d times", c, VALUES_MAX);
	k->v[k->n++] = level * exp(sim->s * pg_rng_normal(&sim->r));
	return detect(sim, err);
}

static struct bisect_point values_of(const struct sim *sim, size_t commit)
{
	return (struct bisect_point){ 0, sim->c[commit].v, sim->c[commit].n };
}

/* planner_bisect.c's bisect_one() on change point i: 0 when it moved, 1
 * when it waits for more commits measured after it. */
static int bisect_one(struct sim *sim, size_t i, struct pg_err *err)
{
	struct cpt *cp = &sim->cps[i];
	struct bisect_point pts[PUSH_MAX * 4];
	double xb[BISECT_LEVEL_POINTS], xa[BISECT_LEVEL_POINTS];
	size_t n, nb = 0, na = 0, n_pts = 0, old_before = cp->before;
	struct bisect_levels lv;
	struct bisect_step st;
	struct bisect_in in;
	long ib, ia;

	n = series(sim);
	ib = series_find(sim, n, cp->before);
	ia = series_find(sim, n, cp->after);
	if (ib < 0 || ia < 0)
		return pg_err_set(err, PG_EINVAL, "a change point's end is not measured");
	for (size_t k = (size_t)ib + 1; k-- > 0 && nb < BISECT_LEVEL_POINTS;)
		if (commit_median(sim, sim->idx[k], &xb[nb++], err) < 0)
			return -1;
	for (size_t k = (size_t)ia; k < n && na < BISECT_LEVEL_POINTS; k++)
		if (commit_median(sim, sim->idx[k], &xa[na++], err) < 0)
			return -1;
	if (bisect_levels(xb, nb, xa, na, VERDICT_CP_ALPHA, &lv, err) < 0)
		return -1;
	if (!lv.stands) {
		if (lv.wait)
			return 1;
		cp->state = CP_DISMISSED;
		return 0;
	}
	for (size_t c = cp->before + 1; c < cp->after; c++) {
		if (!sim->c[c].n)
			continue;
		if (n_pts == sizeof(pts) / sizeof(pts[0]))
			return pg_err_set(err, PG_ETOOBIG, "range of %zu commits",
					  cp->after - cp->before);
		pts[n_pts++] = (struct bisect_point){ c - cp->before - 1, sim->c[c].v, sim->c[c].n };
	}
	in = (struct bisect_in){
		.before = lv.before, .after = lv.after, .sigma = lv.sigma,
		.n_range = cp->after - cp->before, .pts = pts, .n_pts = n_pts,
		.end_before = values_of(sim, cp->before), .end_after = values_of(sim, cp->after),
		.before_found = cp->before == cp->first_before,
		.after_found = cp->after == cp->first_after,
		.may_measure = cp->runs < PLANNER_BISECT_MAX_RUNS,
	};
	if (bisect_step(&in, &st, err) < 0)
		return -1;
	switch (st.next) {
	case BISECT_WIDEN_BEFORE:
		if (ib == 0)
			cp->state = CP_DISMISSED;
		else
			cp->before = sim->idx[ib - 1];
		return 0;
	case BISECT_WIDEN_AFTER:
		if ((size_t)ia + 1 == n)
			cp->state = CP_DISMISSED;
		else
			cp->after = sim->idx[ia + 1];
		return 0;
	case BISECT_MEASURE_BEFORE:
		cp->runs++;
		return measure(sim, cp->before, err);
	case BISECT_LOCATED:
	case BISECT_MEASURE:
		break;
	}
	cp->before = old_before + st.first;
	cp->after = old_before + 1 + st.last;
	if (st.next == BISECT_LOCATED) {
		cp->state = CP_CONFIRMED;
		cp->located = cp->after;
		return 0;
	}
	if (cp->runs >= PLANNER_BISECT_MAX_RUNS) {
		cp->state = CP_DISMISSED;
		return 0;
	}
	cp->runs++;
	return measure(sim, old_before + 1 + st.measure, err);
}

/* The planner's bisection passes until no change point is suspected. */
static int bisect_all(struct sim *sim, struct pg_err *err)
{
	bool again = true;

	while (again) {
		again = false;
		for (size_t i = 0; i < sim->n_cps; i++) {
			int rc;

			if (sim->cps[i].state != CP_SUSPECTED)
				continue;
			rc = bisect_one(sim, i, err);
			if (rc < 0)
				return -1;
			again = again || rc == 0;
		}
	}
	return 0;
}

static int run_history(struct sim *sim, double step_pct, struct tally *t, struct pg_err *err)
{
	bool speedup = t->histories % 4 == 3;
	const struct cpt *mine = NULL;

	memset(sim->c, 0, sim->commits * sizeof(*sim->c));
	sim->n_cps = 0;
	sim->head = 0;
	sim->step_at = sim->commits;
	sim->step = 1.0;
	if (step_pct > 0) {
		size_t lo = sim->commits / 5, hi = 4 * sim->commits / 5;

		sim->step_at = lo + (size_t)(pg_rng_unit(&sim->r) * (double)(hi - lo));
		sim->step = speedup ? 1.0 + step_pct / 100.0 : 1.0 - step_pct / 100.0;
	}
	if (measure(sim, 0, err) < 0)
		return -1;
	while (sim->head + 1 < sim->commits) {
		size_t push = 1 + (size_t)(pg_rng_unit(&sim->r) * PUSH_MAX);

		sim->head = sim->head + push < sim->commits ? sim->head + push : sim->commits - 1;
		if (measure(sim, sim->head, err) < 0 || bisect_all(sim, err) < 0)
			return -1;
	}
	t->histories++;
	t->commits += (long)sim->commits;
	for (size_t i = 0; i < sim->n_cps; i++) {
		const struct cpt *cp = &sim->cps[i];

		if (!mine && ((cp->first_before < sim->step_at && sim->step_at <= cp->first_after) ||
			      (cp->before < sim->step_at && sim->step_at <= cp->after))) {
			mine = cp;
			continue;
		}
		t->other_confirmed += cp->state == CP_CONFIRMED;
		t->other_dismissed += cp->state == CP_DISMISSED;
	}
	if (!mine)
		return 0;
	t->found++;
	t->exact += mine->state == CP_CONFIRMED && mine->located == sim->step_at;
	t->within1 += mine->state == CP_CONFIRMED && mine->located + 1 >= sim->step_at &&
		      mine->located <= sim->step_at + 1;
	t->dismissed += mine->state == CP_DISMISSED;
	t->runs += mine->runs;
	if (mine->runs > t->runs_max)
		t->runs_max = mine->runs;
	t->delay += (long)(mine->found_at - sim->step_at);
	return 0;
}

static double frac(long a, long b)
{
	return b ? (double)a / (double)b : NAN;
}

static int run_cell(struct sim *sim, size_t ni, size_t si, struct tally *t, struct pg_err *err)
{
	double step_pct = si == STEP_3X ? 3 * noise_pcts[ni] : step_pcts[si];
	uint64_t cell = ni * N_STEP + si;

	sim->r = (struct pg_rng)PG_RNG_INIT(sim->seed ^ (0xd1b54a32d192ed03ULL * (cell + 1)));
	sim->s = noise_pcts[ni] / 100.0;
	memset(t, 0, sizeof(*t));
	for (long h = 0; h < sim->histories; h++)
		if (run_history(sim, step_pct, t, err) < 0) {
			pg_err_prefix(err, "noise %g%%, step %g%%, history %ld", noise_pcts[ni],
				      step_pct, h);
			return -1;
		}
	if (si == STEP_AA) {
		printf("bench changes_sim: noise_pct=%g step_pct=0 histories=%ld commits=%ld"
		       " alerts=%ld alerts_per_1000_commits=%.3f dismissed=%ld"
		       " dismissed_per_1000_commits=%.3f\n",
		       noise_pcts[ni], t->histories, t->commits, t->other_confirmed,
		       1000.0 * frac(t->other_confirmed, t->commits), t->other_dismissed,
		       1000.0 * frac(t->other_dismissed, t->commits));
		return 0;
	}
	printf("bench changes_sim: noise_pct=%g step_pct=%g%s histories=%ld found=%.3f"
	       " exact=%.3f within1=%.3f dismissed=%.3f runs_mean=%.2f runs_max=%ld"
	       " delay_mean=%.1f other_alerts_per_1000_commits=%.3f\n",
	       noise_pcts[ni], step_pct, si == STEP_3X ? " (3x noise)" : "", t->histories,
	       frac(t->found, t->histories), frac(t->exact, t->histories),
	       frac(t->within1, t->histories), frac(t->dismissed, t->histories),
	       frac(t->runs, t->found), t->runs_max, frac(t->delay, t->found),
	       1000.0 * frac(t->other_confirmed, t->commits));
	return 0;
}

static void print_goals(const struct tally cells[N_NOISE][N_STEP])
{
	for (size_t ni = 0; ni < N_NOISE; ni++) {
		const struct tally *x3 = &cells[ni][STEP_3X], *aa = &cells[ni][STEP_AA];
		double exact = frac(x3->exact, x3->histories);
		double alerts = 1000.0 * frac(aa->other_confirmed, aa->commits);

		printf("bench changes_sim_goal: step_3x_noise noise_pct=%g step_pct=%g"
		       " found_and_exact=%.3f within1=%.3f (goal >= %.2f): %s\n",
		       noise_pcts[ni], 3 * noise_pcts[ni], exact, frac(x3->within1, x3->histories),
		       GOAL_FOUND, exact >= GOAL_FOUND ? "met" : "NOT met");
		printf("bench changes_sim_goal: false_alerts noise_pct=%g per_1000_commits=%.3f"
		       " (goal <= %g): %s\n", noise_pcts[ni], alerts, GOAL_ALERTS_PER_1000,
		       alerts <= GOAL_ALERTS_PER_1000 ? "met" : "NOT met");
	}
}

static int parse_args(int argc, char **argv, struct sim *sim)
{
	long long v;
	int opt;

	while ((opt = getopt(argc, argv, "n:c:t:m:s:")) != -1) {
		int rc = -1;

		switch (opt) {
		case 'n':
			if ((rc = pg_parse_ll(optarg, 1, 1000000, &v)) == 0)
				sim->histories = (long)v;
			break;
		case 'c':
			if ((rc = pg_parse_ll(optarg, 50, COMMITS_MAX, &v)) == 0)
				sim->commits = (size_t)v;
			break;
		case 't':
			rc = pg_parse_double(optarg, 0, 100, &sim->threshold_pct);
			break;
		case 'm':
			rc = pg_parse_double(optarg, 0, 100, &sim->min_change_pct);
			break;
		case 's':
			if ((rc = pg_parse_ll(optarg, 0, INT64_MAX, &v)) == 0)
				sim->seed = (uint64_t)v;
			break;
		default:
			break;
		}
		if (rc < 0)
			return -1;
	}
	return optind == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sim sim = { .histories = 1000, .commits = 500, .threshold_pct = 5.0, .seed = 17 };
	struct tally (*cells)[N_STEP] = NULL;
	struct pg_err err = PG_ERR_INIT;
	int64_t t0 = pg_time_mono_ms();
	int ret = EXIT_FAILURE;

	if (parse_args(argc, argv, &sim) < 0) {
		fprintf(stderr, "usage: changes_sim [-n HISTORIES] [-c COMMITS (50..%d)]"
			" [-t THRESHOLD_PCT] [-m MIN_CHANGE_PCT] [-s SEED]\n", COMMITS_MAX);
		return EXIT_USAGE;
	}
	sim.c = calloc(sim.commits, sizeof(*sim.c));
	sim.idx = calloc(sim.commits, sizeof(*sim.idx));
	sim.x = calloc(sim.commits, sizeof(*sim.x));
	cells = calloc(N_NOISE, sizeof(*cells));
	if (!sim.c || !sim.idx || !sim.x || !cells) {
		pg_err_set(&err, PG_ENOMEM, "allocate a history of %zu commits", sim.commits);
		goto out;
	}
	printf("bench changes_sim: seed=%llu histories=%ld commits=%zu push=1..%d"
	       " noise=lognormal(value = level * exp(s * N(0,1)), s = noise_pct / 100)"
	       " speedups=1/4 threshold_pct=%g min_change_pct=%g min_points=%d alpha=%g"
	       " bisect_max_runs=%d\n",
	       (unsigned long long)sim.seed, sim.histories, sim.commits, PUSH_MAX,
	       sim.threshold_pct, min_change(&sim), VERDICT_CP_MIN_POINTS, VERDICT_CP_ALPHA,
	       PLANNER_BISECT_MAX_RUNS);
	for (size_t ni = 0; ni < N_NOISE; ni++)
		for (size_t si = 0; si < N_STEP; si++)
			if (run_cell(&sim, ni, si, &cells[ni][si], &err) < 0)
				goto out;
	print_goals(cells);
	printf("bench changes_sim: elapsed_ms=%lld\n", (long long)(pg_time_mono_ms() - t0));
	ret = 0;
out:
	if (ret != 0)
		fprintf(stderr, "changes_sim: %s\n", err.msg);
	free(cells);
	free(sim.x);
	free(sim.idx);
	free(sim.c);
	return ret;
}
