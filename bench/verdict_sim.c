/* SPDX-License-Identifier: MIT */
/*
 * Verdict quality by simulation (issue 16): how often the verdict rules
 * pass a real regression, fail a patch that changes nothing, or give up
 * with a warning, and how many pairs they spend, on hosts whose noise we
 * set.  Each draw is one job with one gated higher-is-better key, taken
 * to its final state as the verdict pass does (controller/verdict_load.c):
 * evaluate the key on the pairs so far, evaluate the job, and while it is
 * pending draw the follow-up's more_repetitions pairs and evaluate again;
 * at the cap the job is evaluated once more with max_repetitions = the
 * pairs done, which is what a final evaluation does.
 *
 * Noise models, per run and multiplicative (a run is LEVEL * host speed *
 * (1 + effect on the patched side) * exp(e)):
 *   normal  e ~ N(0, s)
 *   drift   as normal, and each pair shares a host speed that switches
 *           between 1 and 0.5 with probability DRIFT_SWITCH per pair (the
 *           lab VM whose speed jumps between levels; the jump moves both
 *           runs of a pair, so pairing should cancel it)
 *   heavy   e from a t distribution with 3 degrees of freedom scaled to
 *           standard deviation s (a few runs far off, as interrupts do)
 *
 * Effects are multiples of the threshold (0, -0.5, -1, -1.5, -2, -4, -6
 * and +1.5: at 5 % that is 0, -2.5, ... -30 and +7.5 %).  Every cell has
 * its own random stream derived from the seed, so its figures do not
 * depend on which other cells ran.  No timing is asserted; the figures
 * are rates, and the summary lines compare them with the goals.
 *
 *   verdict_sim [-n DRAWS] [-r REPS] [-c CAP] [-t THRESHOLD_PCT]
 *               [-a ALPHA] [-s SEED]
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "rng.h"
#include "text.h"
#include "timeutil.h"
#include "verdict.h"

#define LEVEL 1.5e8			/* a mempool rate: the scale is
					 * irrelevant to ratios, but keeps the
					 * values realistic */
#define DRIFT_SWITCH 0.3
#define DRIFT_SLOW 0.5
#define NOISE_LIMIT_PCT 15.0		/* the demo profile's */
#define EXIT_USAGE 2

enum model { MODEL_NORMAL, MODEL_DRIFT, MODEL_HEAVY, N_MODELS };

static const char *const model_names[N_MODELS] = { "normal", "drift", "heavy" };
static const double noise_pcts[] = { 0.5, 1, 2, 5, 10, 20, 30 };
/* In thresholds; AA and FALSE_PASS index the two the goals are about. */
static const double effect_mult[] = { 0, -0.5, -1, -1.5, -2, -4, -6, 1.5 };
#define N_NOISE (sizeof(noise_pcts) / sizeof(noise_pcts[0]))
#define N_EFFECT (sizeof(effect_mult) / sizeof(effect_mult[0]))
#define EFFECT_AA 0
#define EFFECT_FALSE_PASS 3

struct sim {
	struct verdict_params params;
	long draws;
	int reps, cap;
	uint64_t seed;
	double *base, *patched;		/* cap values each */
};

struct tally {
	long n[VERDICT_FAIL + 1];	/* by final job state */
	long pairs;
	double mde_sum;
	long mde_n;			/* finite mde_pct values summed */
};

/* Student's t with 3 degrees of freedom, divided by its standard
 * deviation sqrt(3): the same variance as N(0, 1), heavier tails. */
static double rng_t3_unit(struct pg_rng *r)
{
	double z = pg_rng_normal(r), c = 0;

	for (int i = 0; i < 3; i++) {
		double g = pg_rng_normal(r);

		c += g * g;
	}
	return z / sqrt(c / 3.0) / sqrt(3.0);
}

static double run_noise(enum model m, double s, struct pg_rng *r)
{
	return s * (m == MODEL_HEAVY ? rng_t3_unit(r) : pg_rng_normal(r));
}

/* One pair, run back to back on a host at *speed. */
static void draw_pair(struct sim *sim, size_t i, enum model m, double s, double effect,
		      double *speed, struct pg_rng *r)
{
	if (m == MODEL_DRIFT && pg_rng_unit(r) < DRIFT_SWITCH)
		*speed = *speed == 1.0 ? DRIFT_SLOW : 1.0;
	sim->base[i] = LEVEL * *speed * exp(run_noise(m, s, r));
	sim->patched[i] = LEVEL * *speed * (1.0 + effect) * exp(run_noise(m, s, r));
}

/* One job from its first round to its final state, tallied into t. */
static int run_draw(struct sim *sim, enum model m, double s, double effect, struct pg_rng *r,
		    struct tally *t, struct pg_err *err)
{
	struct verdict_key key;
	struct verdict_job_in jin;
	struct verdict_job job;
	double speed = pg_rng_unit(r) < 0.5 ? 1.0 : DRIFT_SLOW;
	size_t n = 0;
	int more = sim->reps, ret = -1;

	for (;;) {
		/* A follow-up never runs past the cap, as the planner's. */
		for (; more > 0 && n < (size_t)sim->cap; more--, n++)
			draw_pair(sim, n, m, s, effect, &speed, r);

		struct verdict_key_in in = {
			.benchmark = "mempool_perf", .key = "sim.rate",
			.base = sim->base, .n_base = n, .patched = sim->patched, .n_patched = n,
			.higher_is_better = true, .gated = true,
			.pair_base = sim->base, .pair_patched = sim->patched, .n_pairs = n,
		};

		/* NaN unless the rules set it, so that a field they leave
		 * alone does not count as a figure. */
		memset(&key, 0, sizeof(key));
		key.mde_pct = NAN;
		if (verdict_key_eval(&in, &sim->params, &key, err) < 0)
			goto out;
		jin = (struct verdict_job_in){
			.build_mode = "release", .host = "sim", .outcome = "ok",
			.repetitions = (int)n, .max_repetitions = sim->cap,
			.params = &sim->params, .keys = &key, .n_keys = 1,
		};
		if (verdict_job_eval(&jin, &job, err) < 0)
			goto out;
		if (job.state != VERDICT_PENDING)
			break;
		if (n >= (size_t)sim->cap) {
			/* The final evaluation: what we have is all we get. */
			jin.max_repetitions = (int)n;
			if (verdict_job_eval(&jin, &job, err) < 0)
				goto out;
			break;
		}
		more = job.more_repetitions;
		if (more < 1) {
			pg_err_set(err, PG_EINVAL, "pending job asks for %d more repetitions",
				   more);
			goto out;
		}
	}
	/* A job still pending here breaks the job rules' contract; it is
	 * counted and shown rather than hidden. */
	t->n[job.state]++;
	t->pairs += (long)n;
	if (isfinite(key.mde_pct)) {
		t->mde_sum += key.mde_pct;
		t->mde_n++;
	}
	ret = 0;
out:
	if (ret < 0)
		pg_err_prefix(err, "draw with %zu pairs", n);
	return ret;
}

static double rate(const struct tally *t, enum verdict_state st, long draws)
{
	return (double)t->n[st] / (double)draws;
}

static int run_cell(struct sim *sim, enum model m, size_t ni, size_t ei, struct tally *t,
		    struct pg_err *err)
{
	double s = noise_pcts[ni] / 100.0;
	double effect = effect_mult[ei] * sim->params.threshold_pct / 100.0;
	uint64_t cell = ((uint64_t)m * N_NOISE + ni) * N_EFFECT + ei;
	struct pg_rng r = PG_RNG_INIT(sim->seed ^ (0xd1b54a32d192ed03ULL * (cell + 1)));
	int ret = -1;

	memset(t, 0, sizeof(*t));
	for (long d = 0; d < sim->draws; d++)
		if (run_draw(sim, m, s, effect, &r, t, err) < 0)
			goto out;
	printf("bench verdict_sim: model=%s noise_pct=%g effect_pct=%g draws=%ld fail=%ld pass=%ld"
	       " warning=%ld pending=%ld fail_rate=%.4f pass_rate=%.4f warning_rate=%.4f"
	       " mean_pairs=%.2f mean_mde_pct=%.2f\n",
	       model_names[m], noise_pcts[ni], effect * 100.0, sim->draws, t->n[VERDICT_FAIL],
	       t->n[VERDICT_SUCCESS], t->n[VERDICT_WARNING], t->n[VERDICT_PENDING],
	       rate(t, VERDICT_FAIL, sim->draws), rate(t, VERDICT_SUCCESS, sim->draws),
	       rate(t, VERDICT_WARNING, sim->draws), (double)t->pairs / (double)sim->draws,
	       t->mde_n ? t->mde_sum / (double)t->mde_n : NAN);
	fflush(stdout);
	ret = 0;
out:
	if (ret < 0)
		pg_err_prefix(err, "model %s, noise %g%%, effect %g%%", model_names[m],
			      noise_pcts[ni], effect * 100.0);
	return ret;
}

/* The goals, per model: the worst cell over the noise levels. */
static void print_goals(const struct sim *sim, struct tally cells[N_MODELS][N_NOISE][N_EFFECT])
{
	double draws = (double)sim->draws, alpha = sim->params.alpha;
	long pending = 0;

	for (int m = 0; m < N_MODELS; m++) {
		double fp = -1, ff = -1, pairs = 0, aa_pairs = 0;
		size_t fp_at = 0, ff_at = 0;

		for (size_t ni = 0; ni < N_NOISE; ni++) {
			const struct tally *row = cells[m][ni];
			double p = rate(&row[EFFECT_FALSE_PASS], VERDICT_SUCCESS, sim->draws);
			double f = rate(&row[EFFECT_AA], VERDICT_FAIL, sim->draws);
			double warn = 0;

			if (p > fp) {
				fp = p;
				fp_at = ni;
			}
			if (f > ff) {
				ff = f;
				ff_at = ni;
			}
			for (size_t ei = 0; ei < N_EFFECT; ei++) {
				warn += rate(&row[ei], VERDICT_WARNING, sim->draws);
				pairs += (double)row[ei].pairs;
				pending += row[ei].n[VERDICT_PENDING];
			}
			aa_pairs += (double)row[EFFECT_AA].pairs;
			printf("bench verdict_sim_goal: warning_rate model=%s noise_pct=%g aa=%.4f"
			       " at_1.5x_threshold=%.4f all_effects=%.4f mean_pairs_aa=%.2f\n",
			       model_names[m], noise_pcts[ni],
			       rate(&row[EFFECT_AA], VERDICT_WARNING, sim->draws),
			       rate(&row[EFFECT_FALSE_PASS], VERDICT_WARNING, sim->draws),
			       warn / (double)N_EFFECT, (double)row[EFFECT_AA].pairs / draws);
		}
		printf("bench verdict_sim_goal: false_pass_at_1.5x_threshold model=%s max_rate=%.4f"
		       " worst_noise_pct=%g (goal <= 0.05, at every noise level): %s\n",
		       model_names[m], fp, noise_pcts[fp_at], fp <= 0.05 ? "met" : "NOT met");
		printf("bench verdict_sim_goal: false_fail_aa model=%s max_rate=%.4f"
		       " worst_noise_pct=%g (goal <= alpha=%g, at every noise level): %s\n",
		       model_names[m], ff, noise_pcts[ff_at], alpha, ff <= alpha ? "met" : "NOT met");
		printf("bench verdict_sim_goal: mean_pairs model=%s all=%.2f aa=%.2f initial=%d cap=%d\n",
		       model_names[m], pairs / (draws * N_NOISE * N_EFFECT),
		       aa_pairs / (draws * N_NOISE), sim->reps, sim->cap);
	}
	printf("bench verdict_sim_goal: pending_at_cap count=%ld (goal 0: a final job is"
	       " never pending): %s\n", pending, pending == 0 ? "met" : "NOT met");
}

static int parse_args(int argc, char **argv, struct sim *sim)
{
	long long v;
	int opt;

	while ((opt = getopt(argc, argv, "n:r:c:t:a:s:")) != -1) {
		int rc = -1;

		switch (opt) {
		case 'n':
			if ((rc = pg_parse_ll(optarg, 1, 100000000, &v)) == 0)
				sim->draws = (long)v;
			break;
		case 'r':
			if ((rc = pg_parse_ll(optarg, 1, 10000, &v)) == 0)
				sim->reps = (int)v;
			break;
		case 'c':
			if ((rc = pg_parse_ll(optarg, 1, 10000, &v)) == 0)
				sim->cap = (int)v;
			break;
		case 't':
			rc = pg_parse_double(optarg, 0, 100, &sim->params.threshold_pct);
			break;
		case 'a':
			rc = pg_parse_double(optarg, 0, 0.5, &sim->params.alpha);
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
	/* The threshold's multiples must stay a possible change (> -100 %). */
	if (optind != argc || sim->reps > sim->cap || sim->params.threshold_pct * 6 >= 100)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct sim sim = {
		.params = { .threshold_pct = 5.0, .alpha = 0.05, .noise_limit_pct = NOISE_LIMIT_PCT },
		.draws = 4000, .reps = 6, .cap = 24, .seed = 16,
	};
	struct tally (*cells)[N_NOISE][N_EFFECT] = NULL;
	struct pg_err err = PG_ERR_INIT;
	int64_t t0 = pg_time_mono_ms();
	int ret = EXIT_FAILURE;

	if (parse_args(argc, argv, &sim) < 0) {
		fprintf(stderr, "usage: verdict_sim [-n DRAWS] [-r REPS] [-c CAP (>= REPS)]"
			" [-t THRESHOLD_PCT (< 16.7)] [-a ALPHA] [-s SEED]\n");
		return EXIT_USAGE;
	}
	sim.base = calloc((size_t)sim.cap, sizeof(double));
	sim.patched = calloc((size_t)sim.cap, sizeof(double));
	cells = calloc(N_MODELS, sizeof(*cells));
	if (!sim.base || !sim.patched || !cells) {
		pg_err_set(&err, PG_ENOMEM, "allocate %d pairs and %d cells", sim.cap,
			   (int)(N_MODELS * N_NOISE * N_EFFECT));
		goto out;
	}
	printf("bench verdict_sim: seed=%llu draws=%ld initial_reps=%d cap=%d threshold_pct=%g"
	       " alpha=%g noise_limit_pct=%g drift_switch=%g drift_slow=%g\n",
	       (unsigned long long)sim.seed, sim.draws, sim.reps, sim.cap,
	       sim.params.threshold_pct, sim.params.alpha, sim.params.noise_limit_pct,
	       DRIFT_SWITCH, DRIFT_SLOW);
	for (int m = 0; m < N_MODELS; m++)
		for (size_t ni = 0; ni < N_NOISE; ni++)
			for (size_t ei = 0; ei < N_EFFECT; ei++)
				if (run_cell(&sim, (enum model)m, ni, ei, &cells[m][ni][ei], &err) < 0)
					goto out;
	print_goals(&sim, cells);
	printf("bench verdict_sim: elapsed_ms=%lld\n", (long long)(pg_time_mono_ms() - t0));
	ret = 0;
out:
	if (ret != 0)
		fprintf(stderr, "verdict_sim: %s\n", err.msg);
	free(cells);
	free(sim.patched);
	free(sim.base);
	return ret;
}
