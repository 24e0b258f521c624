/* SPDX-License-Identifier: MIT */
/*
 * Verdicts per key, job and context: see verdict.h for the rules.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "stats.h"
#include "text.h"
#include "verdict.h"

/* How much of a name a description or a table keeps (see elide()). */
#define KEY_MAX 60
#define NAME_MAX_SHOWN 32
#define HOST_MAX_SHOWN 40
#define TABLE_KEY_MAX 64

void verdict_params_from_context(const struct profile_context *ctx, struct verdict_params *p)
{
	p->threshold_pct = ctx->threshold_pct;
	p->alpha = ctx->alpha;
	p->noise_limit_pct = ctx->noise_limit_pct;
}

const char *verdict_class_name(enum verdict_class c)
{
	switch (c) {
	case VERDICT_NO_CHANGE: return "no-change";
	case VERDICT_IMPROVEMENT: return "improvement";
	case VERDICT_REGRESSION: return "regression";
	case VERDICT_INCONCLUSIVE: return "inconclusive";
	case VERDICT_NOISY: return "noisy";
	case VERDICT_MISSING: return "missing";
	}
	return "?";
}

const char *verdict_state_name(enum verdict_state s)
{
	switch (s) {
	case VERDICT_SUCCESS: return "success";
	case VERDICT_WARNING: return "warning";
	case VERDICT_PENDING: return "pending";
	case VERDICT_FAIL: return "fail";
	}
	return "?";
}

const char *verdict_why_name(enum verdict_why w)
{
	switch (w) {
	case VERDICT_WHY_PASS: return "pass";
	case VERDICT_WHY_NO_GATED_KEY: return "no-gated-key";
	case VERDICT_WHY_MISSING: return "missing";
	case VERDICT_WHY_INCONCLUSIVE: return "inconclusive";
	case VERDICT_WHY_NOISY: return "noisy";
	case VERDICT_WHY_BENCH_FAILURE: return "bench-failure";
	case VERDICT_WHY_BASE_BUILD: return "base-build-failure";
	case VERDICT_WHY_INFRA: return "infra-error";
	case VERDICT_WHY_APPLY: return "apply-failure";
	case VERDICT_WHY_ALREADY_APPLIED: return "already-applied";
	case VERDICT_WHY_MORE_REPETITIONS: return "more-repetitions";
	case VERDICT_WHY_PATCHED_CRASH: return "patched-crash";
	case VERDICT_WHY_REGRESSION: return "regression";
	case VERDICT_WHY_BUILD: return "build-failure";
	}
	return "?";
}

static int check_params(const struct verdict_params *p, struct pg_err *err)
{
	if (!p)
		return pg_err_set(err, PG_EINVAL, "verdict: no parameters");
	if (!(p->threshold_pct > 0 && p->threshold_pct <= 100))
		return pg_err_set(err, PG_EINVAL, "verdict: threshold_pct %g is out of range (0, 100]",
				  p->threshold_pct);
	if (!(p->alpha > 0 && p->alpha <= 0.5))
		return pg_err_set(err, PG_EINVAL, "verdict: alpha %g is out of range (0, 0.5]",
				  p->alpha);
	if (!(p->noise_limit_pct > 0 && p->noise_limit_pct <= 100))
		return pg_err_set(err, PG_EINVAL,
				  "verdict: noise_limit_pct %g is out of range (0, 100]",
				  p->noise_limit_pct);
	return 0;
}

/* Format into a fixed buffer.  Every text here is bounded by construction
 * (names are elided first); should one still not fit, it is cut, visibly,
 * which is what a fixed Patchwork field would do anyway. */
static void put(char *b, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void put(char *b, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pg_vfmt_cut(b, len, fmt, ap);
	va_end(ap);
}

/* 100 * v / |base| with verdict.h's convention for a base of 0. */
static double rel_pct(double v, double base)
{
	if (base != 0)
		return 100 * v / fabs(base);
	return v == 0 ? 0 : copysign(INFINITY, v);
}

/* Short number forms for reasons and descriptions. */
static const char *fmt_pct(char *b, size_t len, double v)
{
	put(b, len, "%+.1f%%", v);
	return b;
}

static const char *fmt_p(char *b, size_t len, double p)
{
	put(b, len, "%.2g", p);
	return b;
}

/* Copy s into out[outlen], at most max bytes of it: a longer s keeps its
 * head and tail around "..." (the tail names the variant: "get32.put32"),
 * cut on UTF-8 boundaries.  max >= 5 and outlen > max. */
static void elide(const char *s, size_t max, char *out, size_t outlen)
{
	size_t len = strlen(s), head, tail;

	if (len <= max) {
		put(out, outlen, "%s", s);
		return;
	}
	head = pg_utf8_cut(s, (max - 3) / 2);
	tail = max - 3 - (max - 3) / 2;
	/* a tail that starts inside a UTF-8 sequence starts after it */
	while (tail > 0 && ((unsigned char)s[len - tail] & 0xc0) == 0x80)
		tail--;
	put(out, outlen, "%.*s...%s", (int)head, s, s + len - tail);
}

/* The interval in change_pct's scale (it is kept in effect_pct's). */
static void ci_change(const struct verdict_key *k, double *lo, double *hi)
{
	*lo = k->higher_is_better ? k->hl_lo_pct : -k->hl_hi_pct;
	*hi = k->higher_is_better ? k->hl_hi_pct : -k->hl_lo_pct;
}

/* "-9.1%..-5.3%": the interval in the scale of change_pct (summaries,
 * which give the raw change), or of effect_pct (reasons, which speak of
 * worse and better). */
static const char *fmt_ci(char *b, size_t len, const struct verdict_key *k, bool effect)
{
	double lo = k->hl_lo_pct, hi = k->hl_hi_pct;

	if (!effect)
		ci_change(k, &lo, &hi);
	put(b, len, "%+.1f%%..%+.1f%%", lo, hi);
	return b;
}

/* "12.3%", "-" when undefined, "none" when no change can be found. */
static const char *fmt_mde(char *b, size_t len, double mde)
{
	if (isnan(mde))
		put(b, len, "-");
	else if (isinf(mde))
		put(b, len, "none");
	else
		put(b, len, "%.1f%%", mde);
	return b;
}

/* "6 pairs", "5+6 runs" */
static const char *fmt_runs(char *b, size_t len, const struct verdict_key *k)
{
	if (k->paired)
		put(b, len, "%zu pair%s", k->n_pairs, k->n_pairs == 1 ? "" : "s");
	else
		put(b, len, "%zu+%zu runs", k->n_base, k->n_patched);
	return b;
}

/* An estimate in the interval's own scale: the log of the ratio when
 * paired, a fraction of the base median when not. */
static double to_scale(const struct verdict_key *k, double pct)
{
	return k->paired ? log1p(pct / 100) : pct / 100;
}

/* The runs at which an undecided key is expected to decide (verdict.h).
 * An estimate above -threshold can only pass: the interval's lower end
 * must clear -threshold.  One beyond it can only fail: the upper end must
 * clear 0 (whether the estimate stays beyond -threshold is a matter of
 * where the change truly is, which no number of runs settles). */
static int pairs_needed(const struct verdict_params *pm, const struct verdict_key *k)
{
	double est = to_scale(k, k->effect_pct), thr = to_scale(k, -pm->threshold_pct);
	double margin = est > thr ? est - thr : -est;

	return verdict_pairs_needed(k->paired, k->sigma, margin, pm->alpha, VERDICT_MDE_POWER);
}

static void classify(const struct verdict_params *pm, struct verdict_key *k)
{
	char e[32], p[32], ci[48], mde[32], runs[48];
	double thr = pm->threshold_pct;
	int level = (int)lround(100 * (1 - pm->alpha));

	if (k->n_base == 0 || k->n_patched == 0) {
		k->cls = VERDICT_MISSING;
		put(k->reason, sizeof(k->reason), "no samples on %s",
		    k->n_base == 0 && k->n_patched == 0 ? "either side" :
		    k->n_base == 0 ? "the base side" : "the patched side");
		return;
	}
	fmt_pct(e, sizeof(e), k->effect_pct);
	fmt_p(p, sizeof(p), k->p);
	fmt_ci(ci, sizeof(ci), k, true);
	fmt_mde(mde, sizeof(mde), k->mde_pct);
	fmt_runs(runs, sizeof(runs), k);
	if (!k->ci_valid) {
		k->cls = VERDICT_INCONCLUSIVE;
		k->pairs_needed = verdict_min_runs(k->paired, pm->alpha);
		put(k->reason, sizeof(k->reason),
		    "%s, but %s give no %d%% interval (at most %.0f%%): %d needed", e, runs,
		    level, 100 * k->hl_conf, k->pairs_needed);
		return;
	}
	if (k->hl_hi_pct < 0 && k->effect_pct < -thr) {
		k->cls = VERDICT_REGRESSION;
		put(k->reason, sizeof(k->reason), "%s beyond -%g%%, %d%% CI %s wholly below 0 (p=%s)",
		    e, thr, level, ci, p);
		return;
	}
	if (k->hl_lo_pct > 0 && k->effect_pct > thr) {
		k->cls = VERDICT_IMPROVEMENT;
		put(k->reason, sizeof(k->reason), "%s beyond +%g%%, %d%% CI %s wholly above 0 (p=%s)",
		    e, thr, level, ci, p);
		return;
	}
	if (k->hl_lo_pct > -thr) {
		k->cls = VERDICT_NO_CHANGE;
		put(k->reason, sizeof(k->reason), "%s, %d%% CI %s excludes -%g%% (p=%s, MDE %s)", e,
		    level, ci, thr, p, mde);
		return;
	}
	k->pairs_needed = pairs_needed(pm, k);
	if (k->noise_pct > pm->noise_limit_pct) {
		k->cls = VERDICT_NOISY;
		put(k->reason, sizeof(k->reason),
		    "%s CV %.1f%% > noise limit %g%%: %s, %d%% CI %s with %s (MDE %s)",
		    k->paired ? "ratio" : "base", k->noise_pct, pm->noise_limit_pct, e, level, ci,
		    runs, mde);
		return;
	}
	k->cls = VERDICT_INCONCLUSIVE;
	put(k->reason, sizeof(k->reason), "%s, %d%% CI %s reaches beyond -%g%%%s with %s (MDE %s)",
	    e, level, ci, thr, k->hl_hi_pct < 0 ? "" : " and above 0", runs, mde);
}

/* Whether the pairs can be compared as ratios: there are some, and every
 * ratio is positive and finite (so is its log). */
static bool pairs_usable(const struct verdict_key_in *in)
{
	if (in->n_pairs == 0 || !in->pair_base || !in->pair_patched)
		return false;
	for (size_t i = 0; i < in->n_pairs; i++) {
		double r = in->pair_patched[i] / in->pair_base[i];

		/* a ratio that overflows or underflows has no finite log */
		if (!(in->pair_base[i] > 0 && r > 0 && isfinite(r)))
			return false;
	}
	return true;
}

/* The paired comparison (verdict.h): change, p, shift and noise from the
 * ratios patched_i/base_i of the pairs. */
static int eval_paired(const struct verdict_key_in *in, double alpha, struct verdict_key *out,
		       struct pg_err *err)
{
	double sign = in->higher_is_better ? 1 : -1, med, cv, lo, hi, mad;
	struct stats_hl walsh;
	double *r = malloc(2 * in->n_pairs * sizeof(*r)), *lr;
	struct stats_wsr w;
	int rc = -1;

	if (!r)
		return pg_err_set(err, PG_ENOMEM, "out of memory for %zu pairs", in->n_pairs);
	lr = r + in->n_pairs;
	for (size_t i = 0; i < in->n_pairs; i++) {
		r[i] = in->pair_patched[i] / in->pair_base[i];
		lr[i] = log(r[i]);
	}
	if (stats_median(r, in->n_pairs, &med, err) < 0 ||
	    stats_cv_robust(r, in->n_pairs, &cv, err) < 0 ||
	    stats_wilcoxon_signed_rank(lr, in->n_pairs, &w, err) < 0 ||
	    stats_walsh_interval(lr, in->n_pairs, 1 - alpha, &walsh, err) < 0 ||
	    stats_mad(lr, in->n_pairs, &mad, err) < 0) {
		pg_err_prefix(err, "pairs");
		goto out;
	}
	out->paired = true;
	out->n_pairs = in->n_pairs;
	out->change_pct = 100 * (med - 1);
	out->effect_pct = sign * out->change_pct;
	/* every log ratio 0: nothing ranked, nothing changed */
	out->p = w.n ? w.p : 1;
	out->p_exact = w.n ? w.exact : true;
	out->p_min = stats_wsr_min_p(in->n_pairs);
	out->hl_effect_pct = sign * 100 * expm1(walsh.shift);
	lo = sign * 100 * expm1(walsh.lo);
	hi = sign * 100 * expm1(walsh.hi);
	out->hl_lo_pct = lo < hi ? lo : hi;
	out->hl_hi_pct = lo < hi ? hi : lo;
	out->hl_conf = walsh.conf;
	out->noise_pct = 100 * cv;
	out->sigma = STATS_MAD_NORMAL * mad;
	if (verdict_mde_pct(true, in->n_pairs, in->n_pairs, &out->sigma, walsh.hi - walsh.lo,
			    alpha, VERDICT_MDE_POWER, &out->mde_pct, err) < 0)
		goto out;
	rc = 0;
out:
	free(r);
	return rc;
}

static double sq0(double v)
{
	return isnan(v) ? 0 : v * v;
}

/* The unpaired comparison (verdict.h): medians, Mann-Whitney, the
 * two-sample Hodges-Lehmann shift and its interval, the base side's CV. */
static int eval_unpaired(const struct verdict_key_in *in, double alpha, struct verdict_key *out,
			 struct pg_err *err)
{
	double sign = in->higher_is_better ? 1 : -1, lo, hi;
	struct stats_mw mw;
	struct stats_hl hl;

	if (stats_mann_whitney(in->patched, in->n_patched, in->base, in->n_base, &mw, err) < 0 ||
	    stats_hodges_lehmann(in->patched, in->n_patched, in->base, in->n_base, 1 - alpha,
				 &hl, err) < 0)
		return -1;
	out->noise_pct = out->base_cv_pct;
	out->change_pct = rel_pct(out->delta, out->base_median);
	out->effect_pct = sign * out->change_pct;
	out->p = mw.p;
	out->p_exact = mw.exact;
	out->p_min = stats_mw_min_p(in->n_patched, in->n_base);
	out->hl_effect_pct = sign * rel_pct(hl.shift, out->base_median);
	lo = sign * rel_pct(hl.lo, out->base_median);
	hi = sign * rel_pct(hl.hi, out->base_median);
	out->hl_lo_pct = lo < hi ? lo : hi;
	out->hl_hi_pct = lo < hi ? hi : lo;
	out->hl_conf = hl.conf;
	/* the sides' spreads pooled; a side of one run has none to give */
	out->sigma = sqrt((sq0(out->base_cv_pct) + sq0(out->patched_cv_pct)) / 2) / 100;
	return verdict_mde_pct(false, in->n_base, in->n_patched, &out->sigma,
			       (out->hl_hi_pct - out->hl_lo_pct) / 100, alpha, VERDICT_MDE_POWER,
			       &out->mde_pct, err);
}

int verdict_key_eval(const struct verdict_key_in *in, const struct verdict_params *params,
		     struct verdict_key *out, struct pg_err *err)
{
	double cv;

	memset(out, 0, sizeof(*out));
	out->base_median = out->patched_median = out->delta = NAN;
	out->change_pct = out->effect_pct = out->p = out->p_min = NAN;
	out->hl_effect_pct = out->hl_lo_pct = out->hl_hi_pct = out->hl_conf = NAN;
	out->base_cv_pct = out->patched_cv_pct = out->noise_pct = NAN;
	out->sigma = out->mde_pct = NAN;
	if (!in->benchmark || !in->key)
		return pg_err_set(err, PG_EINVAL, "verdict: a key without a name");
	if ((in->n_base > 0 && !in->base) || (in->n_patched > 0 && !in->patched) ||
	    (in->n_pairs > 0 && (!in->pair_base || !in->pair_patched)))
		return pg_err_set(err, PG_EINVAL, "verdict for %s %s: samples without an array",
				  in->benchmark, in->key);
	if (in->n_pairs > in->n_base || in->n_pairs > in->n_patched)
		return pg_err_set(err, PG_EINVAL, "verdict for %s %s: %zu pairs of %zu+%zu runs",
				  in->benchmark, in->key, in->n_pairs, in->n_base,
				  in->n_patched);
	out->benchmark = in->benchmark;
	out->key = in->key;
	out->gated = in->gated;
	out->higher_is_better = in->higher_is_better;
	out->n_base = in->n_base;
	out->n_patched = in->n_patched;
	if (check_params(params, err) < 0)
		goto fail;
	if (stats_median(in->base, in->n_base, &out->base_median, err) < 0 ||
	    stats_median(in->patched, in->n_patched, &out->patched_median, err) < 0 ||
	    stats_cv_robust(in->base, in->n_base, &cv, err) < 0)
		goto fail;
	out->base_cv_pct = 100 * cv;
	if (stats_cv_robust(in->patched, in->n_patched, &cv, err) < 0)
		goto fail;
	out->patched_cv_pct = 100 * cv;
	if (in->n_base > 0 && in->n_patched > 0) {
		out->delta = out->patched_median - out->base_median;
		if (pairs_usable(in) ? eval_paired(in, params->alpha, out, err) < 0 :
		    eval_unpaired(in, params->alpha, out, err) < 0)
			goto fail;
		/* The counts must allow the level too: identical runs give
		 * an interval of one point at "level 1" from any count. */
		out->ci_valid = verdict_level_reached(out->hl_conf, params->alpha) &&
				verdict_level_reached(1 - out->p_min, params->alpha);
	} else {
		/* a side is missing (classify() says so): no comparison */
		out->noise_pct = out->base_cv_pct;
	}
	classify(params, out);
	return 0;
fail:
	pg_err_prefix(err, "verdict for %s %s", in->benchmark, in->key);
	return -1;
}

/* ---- jobs ---- */

static const struct {
	const char *name;
	enum verdict_state state;
	enum verdict_why why;		/* PASS: decided by the keys */
} outcomes[] = {
	{ "ok", VERDICT_SUCCESS, VERDICT_WHY_PASS },
	{ "bench-failure", VERDICT_SUCCESS, VERDICT_WHY_PASS },
	{ "apply-failure", VERDICT_WARNING, VERDICT_WHY_APPLY },
	{ "base-build-failure", VERDICT_WARNING, VERDICT_WHY_BASE_BUILD },
	{ "patched-build-failure", VERDICT_FAIL, VERDICT_WHY_BUILD },
	{ "infra-error", VERDICT_WARNING, VERDICT_WHY_INFRA },
};

/* How bad a key is for its job's `why`, larger is worse: the noisiest
 * base for noise, else the lowest effect. */
static double badness(enum verdict_why why, const struct verdict_key *k)
{
	if (!k)
		return -INFINITY;
	if (why == VERDICT_WHY_NOISY)
		return k->noise_pct;
	return isnan(k->effect_pct) ? -INFINITY : -k->effect_pct;
}

/* Which keys of a class worst_of() considers. */
enum key_filter {
	KEYS_ALL,
	KEYS_ASKING,		/* undecided keys that more runs may decide:
				 * no valid interval yet, or expected to
				 * decide within the cap */
};

/* Whether an undecided key asks for more runs (verdict.h, follow-ups):
 * unless it has a valid interval and would need more than
 * VERDICT_HOPELESS times the cap, whose interval would then still be
 * twice too wide (the width goes with 1/sqrt(n)).  Short of that the
 * estimate of its spread from a few runs is too rough to give up on. */
static bool key_asks(const struct verdict_job_in *in, const struct verdict_key *k)
{
	return !k->ci_valid ||
	       k->pairs_needed <= VERDICT_HOPELESS * (double)in->max_repetitions;
}

/* The worst gated key of class cls (-1: any) that the filter keeps, or
 * NULL. */
static const struct verdict_key *worst_of(const struct verdict_job_in *in, enum verdict_why why,
					  int cls, enum key_filter filter)
{
	const struct verdict_key *w = NULL;

	for (size_t i = 0; i < in->n_keys; i++) {
		const struct verdict_key *k = &in->keys[i];

		if (!k->gated || (cls >= 0 && k->cls != (enum verdict_class)cls))
			continue;
		if (filter == KEYS_ASKING && !key_asks(in, k))
			continue;
		if (!w || badness(why, k) > badness(why, w))
			w = k;
	}
	return w;
}

/* The first gated key missing on the patched side only (patched=true) or
 * on the base side (patched=false, either with or without patched ones). */
static const struct verdict_key *missing_on(const struct verdict_job_in *in, bool patched)
{
	for (size_t i = 0; i < in->n_keys; i++) {
		const struct verdict_key *k = &in->keys[i];

		if (!k->gated || k->cls != VERDICT_MISSING)
			continue;
		if (patched ? k->n_base > 0 && k->n_patched == 0 : k->n_base == 0)
			return k;
	}
	return NULL;
}

/* ", MDE 12.3% > 10%" when the host resolves less than the threshold
 * with these runs, else "". */
static const char *mde_note(char *b, size_t len, const struct verdict_key *k,
			    const struct verdict_params *pm)
{
	char m[32];

	if (!k || !(k->mde_pct > pm->threshold_pct))
		put(b, len, "%s", "");
	else
		put(b, len, ", MDE %s > %g%%", fmt_mde(m, sizeof(m), k->mde_pct), pm->threshold_pct);
	return b;
}

/* How many gated keys the pass rests on. */
static size_t n_decided(const struct verdict_job *j)
{
	return j->n_gated - j->n_missing;
}

static void summarize(const struct verdict_job_in *in, struct verdict_job *j)
{
	char key[KEY_MAX + 1], mode[NAME_MAX_SHOWN + 1], host[HOST_MAX_SHOWN + 1];
	char bench[NAME_MAX_SHOWN + 1], e[32], p[32], ci[48], mde[32], note[48];
	const struct verdict_key *w = j->worst;
	const struct verdict_params *pm = in->params;
	int level = (int)lround(100 * (1 - pm->alpha));
	char *s = j->summary;
	size_t len = sizeof(j->summary);

	elide(in->build_mode, NAME_MAX_SHOWN, mode, sizeof(mode));
	elide(in->host, HOST_MAX_SHOWN, host, sizeof(host));
	elide(w ? w->key : "", KEY_MAX, key, sizeof(key));
	elide(w ? w->benchmark : "benchmark", NAME_MAX_SHOWN, bench, sizeof(bench));
	fmt_pct(e, sizeof(e), w ? w->change_pct : NAN);
	fmt_p(p, sizeof(p), w ? w->p : NAN);
	if (w)
		fmt_ci(ci, sizeof(ci), w, false);
	else
		put(ci, sizeof(ci), "-");
	fmt_mde(mde, sizeof(mde), w ? w->mde_pct : NAN);
	mde_note(note, sizeof(note), w, pm);

	switch (j->why) {
	case VERDICT_WHY_PASS:
		put(s, len, "%zu key%s exclude%s -%g%%; worst %s %s, CI %s%s on %s", n_decided(j),
		    n_decided(j) == 1 ? "" : "s", n_decided(j) == 1 ? "s" : "", pm->threshold_pct,
		    key, e, ci, note, mode);
		break;
	case VERDICT_WHY_NO_GATED_KEY:
		put(s, len, "no gated result to compare on %s", mode);
		break;
	case VERDICT_WHY_MISSING:
		put(s, len, "%s missing on the patched side on %s", key, mode);
		break;
	case VERDICT_WHY_INCONCLUSIVE:
		if (w && !w->ci_valid)
			put(s, len, "inconclusive %s: %s, no %d%% interval from %d runs on %s", key,
			    e, level, in->repetitions, mode);
		else if (w && w->mde_pct <= pm->threshold_pct)
			/* The host resolves the threshold: the change sits at it. */
			put(s, len, "inconclusive %s: %s, %d%% CI %s: %s, not shown beyond %g%% with "
			    "%d runs (MDE %s) on %s", key, e, level, ci,
			    w->hl_hi_pct < 0 ? "slower" : "maybe slower", pm->threshold_pct,
			    in->repetitions, mde, mode);
		else
			put(s, len, "inconclusive %s: %s, %d%% CI %s: this host cannot resolve "
			    "%g%% with %d runs (MDE %s) on %s", key, e, level, ci, pm->threshold_pct,
			    in->repetitions, mde, mode);
		break;
	case VERDICT_WHY_NOISY:
		put(s, len, "noisy host %s (%s CV %.1f%% > %g%%): %s %s, CI %s, MDE %s", host,
		    w && w->paired ? "ratio" : "base", w ? w->noise_pct : NAN,
		    pm->noise_limit_pct, key, e, ci, mde);
		break;
	case VERDICT_WHY_BENCH_FAILURE:
		if (!w)
			put(s, len, "benchmark failed on both sides on %s", mode);
		else if (w->cls == VERDICT_MISSING)
			put(s, len, "%s failed on the %s on %s", bench,
			    w->n_patched == 0 ? "both sides" : "base side", mode);
		else
			put(s, len, "%s failed in some runs on %s", bench, mode);
		break;
	case VERDICT_WHY_BASE_BUILD:
		put(s, len, "base build failure on %s", mode);
		break;
	case VERDICT_WHY_INFRA:
		put(s, len, "infrastructure error on %s (host %s)", mode, host);
		break;
	case VERDICT_WHY_APPLY:
		put(s, len, "apply patch failure");
		break;
	case VERDICT_WHY_ALREADY_APPLIED:
		put(s, len, "every patch is already applied: nothing to measure");
		break;
	case VERDICT_WHY_MORE_REPETITIONS:
		if (w && !w->ci_valid)
			put(s, len, "%s: %s, no %d%% interval from %d runs on %s, %d more run%s", key,
			    e, level, in->repetitions, mode, j->more_repetitions,
			    j->more_repetitions == 1 ? "" : "s");
		else if (w && w->cls == VERDICT_NOISY)
			put(s, len, "%s: %s CV %.1f%%, CI %s (%d runs) on %s, %d more run%s", key,
			    w->paired ? "ratio" : "base", w->noise_pct, ci, in->repetitions, mode,
			    j->more_repetitions, j->more_repetitions == 1 ? "" : "s");
		else
			put(s, len, "%s: %s, CI %s (%d runs) on %s, %d more run%s", key, e, ci,
			    in->repetitions, mode, j->more_repetitions,
			    j->more_repetitions == 1 ? "" : "s");
		break;
	case VERDICT_WHY_PATCHED_CRASH:
		put(s, len, "%s failed on the patched side on %s", bench, mode);
		break;
	case VERDICT_WHY_REGRESSION:
		put(s, len, "%s: %s (%d%% CI %s, p=%s) on %s", key, e, level, ci, p, mode);
		break;
	case VERDICT_WHY_BUILD:
		put(s, len, "build failure on %s", mode);
		break;
	}
}

static void set_why(struct verdict_job *j, enum verdict_state st, enum verdict_why why,
		    const struct verdict_key *worst)
{
	j->state = st;
	j->why = why;
	j->worst = worst;
}

/* The state from the gated keys, for outcomes ok and bench-failure. */
static void judge_keys(const struct verdict_job_in *in, bool bench_failed, struct verdict_job *j)
{
	const struct verdict_key *k;

	if ((k = worst_of(in, VERDICT_WHY_REGRESSION, VERDICT_REGRESSION, KEYS_ALL))) {
		set_why(j, VERDICT_FAIL, VERDICT_WHY_REGRESSION, k);
		return;
	}
	if (bench_failed && (k = missing_on(in, true))) {
		set_why(j, VERDICT_FAIL, VERDICT_WHY_PATCHED_CRASH, k);
		return;
	}
	/* Every undecided gated key that more runs may decide asks for
	 * them, whichever way it points: a pass needs its interval to
	 * exclude a regression.  The follow-up is as large as the neediest
	 * key's expectation, within the cap. */
	k = worst_of(in, VERDICT_WHY_INCONCLUSIVE, VERDICT_INCONCLUSIVE, KEYS_ASKING);
	if (!k)
		k = worst_of(in, VERDICT_WHY_NOISY, VERDICT_NOISY, KEYS_ASKING);
	if (k && in->repetitions < in->max_repetitions) {
		int need = 0, more;

		for (size_t i = 0; i < in->n_keys; i++) {
			const struct verdict_key *x = &in->keys[i];

			if (x->gated && (x->cls == VERDICT_INCONCLUSIVE || x->cls == VERDICT_NOISY) &&
			    key_asks(in, x) && x->pairs_needed > need)
				need = x->pairs_needed;
		}
		more = need - in->repetitions;
		if (more > in->max_repetitions - in->repetitions)
			more = in->max_repetitions - in->repetitions;
		j->more_repetitions = more > 0 ? more : 1;
		set_why(j, VERDICT_PENDING, VERDICT_WHY_MORE_REPETITIONS, k);
		return;
	}
	if (bench_failed) {
		/* which side failed: a gated key without base samples, else
		 * any key (the failure hit some runs only), else none at all */
		const struct verdict_key *m = missing_on(in, false);

		set_why(j, VERDICT_WARNING, VERDICT_WHY_BENCH_FAILURE,
			m ? m : in->n_keys ? &in->keys[0] : NULL);
		return;
	}
	if ((k = worst_of(in, VERDICT_WHY_NOISY, VERDICT_NOISY, KEYS_ALL))) {
		set_why(j, VERDICT_WARNING, VERDICT_WHY_NOISY, k);
		return;
	}
	if ((k = worst_of(in, VERDICT_WHY_INCONCLUSIVE, VERDICT_INCONCLUSIVE, KEYS_ALL))) {
		set_why(j, VERDICT_WARNING, VERDICT_WHY_INCONCLUSIVE, k);
		return;
	}
	/* A gated key the patched side no longer produces deserves a look;
	 * one only the patched side produces (the series adds a test case)
	 * has nothing to be compared with and is only reported. */
	if ((k = missing_on(in, true))) {
		set_why(j, VERDICT_WARNING, VERDICT_WHY_MISSING, k);
		return;
	}
	k = worst_of(in, VERDICT_WHY_PASS, -1, KEYS_ALL);
	if (!k || isnan(k->effect_pct)) {
		set_why(j, VERDICT_WARNING, VERDICT_WHY_NO_GATED_KEY, NULL);
		return;
	}
	set_why(j, VERDICT_SUCCESS, VERDICT_WHY_PASS, k);
}

int verdict_job_eval(const struct verdict_job_in *in, struct verdict_job *out,
		     struct pg_err *err)
{
	size_t o;

	memset(out, 0, sizeof(*out));
	out->in = in;
	if (!in->build_mode || !in->host || !in->outcome)
		return pg_err_set(err, PG_EINVAL, "verdict: a job without build mode, host or outcome");
	if (in->repetitions < 0 || in->max_repetitions < 0)
		return pg_err_set(err, PG_EINVAL, "verdict: negative repetitions on %s",
				  in->build_mode);
	if (in->n_keys > 0 && !in->keys)
		return pg_err_set(err, PG_EINVAL, "verdict: %zu keys and no array", in->n_keys);
	if (check_params(in->params, err) < 0)
		return -1;
	for (o = 0; o < sizeof(outcomes) / sizeof(outcomes[0]); o++)
		if (strcmp(in->outcome, outcomes[o].name) == 0)
			break;
	if (o == sizeof(outcomes) / sizeof(outcomes[0]))
		return pg_err_set(err, PG_EINVAL, "verdict: unknown outcome '%s' on %s",
				  in->outcome, in->build_mode);

	for (size_t i = 0; i < in->n_keys; i++) {
		const struct verdict_key *k = &in->keys[i];

		if (!k->gated)
			continue;
		out->n_gated++;
		out->n_regressions += k->cls == VERDICT_REGRESSION;
		out->n_improvements += k->cls == VERDICT_IMPROVEMENT;
		out->n_inconclusive += k->cls == VERDICT_INCONCLUSIVE;
		out->n_noisy += k->cls == VERDICT_NOISY;
		out->n_missing += k->cls == VERDICT_MISSING;
	}
	if (outcomes[o].why != VERDICT_WHY_PASS)
		set_why(out, outcomes[o].state, outcomes[o].why, NULL);
	else if (in->already_applied && !strcmp(in->outcome, "ok"))
		set_why(out, VERDICT_WARNING, VERDICT_WHY_ALREADY_APPLIED, NULL);
	else
		judge_keys(in, strcmp(in->outcome, "bench-failure") == 0, out);
	summarize(in, out);
	return 0;
}

/* ---- contexts ---- */

int verdict_context_eval(const struct verdict_job *jobs, size_t n,
			 struct verdict_context *out, struct pg_err *err)
{
	const struct verdict_job *d = NULL;
	const char *prefix;

	memset(out, 0, sizeof(*out));
	if (n == 0 || !jobs)
		return pg_err_set(err, PG_EINVAL, "verdict: a context without jobs");
	for (size_t i = 0; i < n; i++) {
		const struct verdict_job *j = &jobs[i];

		if (!d || j->why > d->why ||
		    (j->why == d->why && badness(j->why, j->worst) > badness(d->why, d->worst)))
			d = j;
	}
	out->state = d->state;
	out->why = d->why;
	out->job = d;
	/* DPDK's fixed phrases for what is not a measurement */
	if (d->why == VERDICT_WHY_APPLY) {
		put(out->description, sizeof(out->description), "apply patch failure");
		return 0;
	}
	if (d->why == VERDICT_WHY_BUILD) {
		put(out->description, sizeof(out->description), "build failure");
		return 0;
	}
	/* As for a cancelled run (outbox.h): a warning that says why. */
	if (d->why == VERDICT_WHY_ALREADY_APPLIED) {
		put(out->description, sizeof(out->description),
		    "Performance Testing NOT TESTED: %s", d->summary);
		return 0;
	}
	if (d->state == VERDICT_SUCCESS) {
		put(out->description, sizeof(out->description),
		    "Performance Testing PASS (%s)", d->summary);
		return 0;
	}
	prefix = d->state == VERDICT_FAIL ? "FAIL" :
		 d->state == VERDICT_PENDING ? "PENDING" : "WARNING";
	put(out->description, sizeof(out->description), "Performance Testing %s: %s",
	    prefix, d->summary);
	return 0;
}

/* ---- the table ---- */

static const char *fmt_num(char *b, size_t len, double v)
{
	if (isnan(v))
		put(b, len, "-");
	else if (fabs(v) >= 1000 && fabs(v) < 1e12)
		put(b, len, "%.0f", v);
	else
		put(b, len, "%.4g", v);
	return b;
}

struct row {
	char bench[NAME_MAX_SHOWN + 1], key[TABLE_KEY_MAX + 2], runs[48];
	char base[32], patched[32], delta[32], change[32], ci[48], p[32], mde[32];
	char verdict[32];
};

static void make_row(const struct verdict_key *k, struct row *r)
{
	char key[TABLE_KEY_MAX + 1];

	elide(k->benchmark, NAME_MAX_SHOWN, r->bench, sizeof(r->bench));
	elide(k->key, TABLE_KEY_MAX, key, sizeof(key));
	put(r->key, sizeof(r->key), "%s%s", key, k->higher_is_better ? "" : "*");
	put(r->runs, sizeof(r->runs), "%zu/%zu", k->n_base, k->n_patched);
	fmt_num(r->base, sizeof(r->base), k->base_median);
	fmt_num(r->patched, sizeof(r->patched), k->patched_median);
	fmt_num(r->delta, sizeof(r->delta), k->delta);
	if (isnan(k->change_pct))
		put(r->change, sizeof(r->change), "-");
	else
		fmt_pct(r->change, sizeof(r->change), k->change_pct);
	if (isnan(k->p))
		put(r->p, sizeof(r->p), "-");
	else
		fmt_p(r->p, sizeof(r->p), k->p);
	if (k->ci_valid)
		fmt_ci(r->ci, sizeof(r->ci), k, false);
	else
		put(r->ci, sizeof(r->ci), "-");
	fmt_mde(r->mde, sizeof(r->mde), k->mde_pct);
	put(r->verdict, sizeof(r->verdict), k->gated ? "%s" : "(%s)",
	    verdict_class_name(k->cls));
}

static void widen(int *w, const char *s)
{
	int len = (int)strlen(s);

	if (len > *w)
		*w = len;
}

int verdict_table_text(struct pg_buf *out, const struct verdict_key *keys, size_t n,
			struct pg_err *err)
{
	static const char *const head[] = { "benchmark", "key", "runs", "base", "patched",
					    "delta", "change", "ci", "p", "mde", "verdict" };
	enum { NCOL = sizeof(head) / sizeof(head[0]) };
	int w[NCOL];
	bool lower = false, ungated = false, paired = false, ci = false;
	struct row r;
	int rc = 0;

	for (int c = 0; c < NCOL; c++)
		w[c] = (int)strlen(head[c]);
	for (size_t i = 0; i < n; i++) {
		make_row(&keys[i], &r);
		widen(&w[0], r.bench);
		widen(&w[1], r.key);
		widen(&w[2], r.runs);
		widen(&w[3], r.base);
		widen(&w[4], r.patched);
		widen(&w[5], r.delta);
		widen(&w[6], r.change);
		widen(&w[7], r.ci);
		widen(&w[8], r.p);
		widen(&w[9], r.mde);
		lower |= !keys[i].higher_is_better;
		ungated |= !keys[i].gated;
		paired |= keys[i].paired;
		ci |= !isnan(keys[i].mde_pct);
	}
	rc |= pg_buf_printf(out, "%-*s  %-*s  %-*s  %*s  %*s  %*s  %*s  %*s  %*s  %*s  %s\n", w[0],
			    head[0], w[1], head[1], w[2], head[2], w[3], head[3], w[4], head[4],
			    w[5], head[5], w[6], head[6], w[7], head[7], w[8], head[8], w[9],
			    head[9], head[10]);
	for (size_t i = 0; i < n && rc == 0; i++) {
		make_row(&keys[i], &r);
		rc |= pg_buf_printf(out, "%-*s  %-*s  %-*s  %*s  %*s  %*s  %*s  %*s  %*s  %*s  %s\n",
				    w[0], r.bench, w[1], r.key, w[2], r.runs, w[3], r.base, w[4],
				    r.patched, w[5], r.delta, w[6], r.change, w[7], r.ci, w[8], r.p,
				    w[9], r.mde, r.verdict);
	}
	if (rc == 0 && lower)
		rc |= pg_buf_adds(out, "* lower is better\n");
	if (rc == 0 && paired)
		rc |= pg_buf_adds(out, "change, p: median of the patched/base ratios of runs done "
				  "back to back, Wilcoxon signed-rank test\n");
	if (rc == 0 && ci)
		rc |= pg_buf_adds(out, "ci: the change's confidence interval at 1 - alpha (- when "
				  "the runs give none); mde: the smallest slowdown these runs "
				  "find 80% of the time\n");
	if (rc == 0 && ungated)
		rc |= pg_buf_adds(out, "(verdict): reported only, the key does not gate\n");
	if (rc != 0)
		return pg_err_set(err, errno == E2BIG ? PG_ETOOBIG : PG_ENOMEM,
				  "verdict table of %zu keys: %s", n,
				  errno == E2BIG ? "over the buffer's limit" : "out of memory");
	return 0;
}
