/* SPDX-License-Identifier: MIT */
/* A host's own noise from its baselines (hostnoise.h). */
#include "hostnoise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "stats.h"
#include "verdict.h"

/*
 * The pairs of the agent's latest baseline jobs, one key after another,
 * each pair's base row right before its patched row.  The CROSS JOINs fix
 * the order: the agent's attempts newest job first (attempts_agent_job,
 * schema step 11), so that finding the latest HOSTNOISE_JOBS costs the
 * agent's recent jobs, not every job the store holds; then only those
 * jobs' samples.
 */
static const char hostnoise_sql[] =
	"WITH b(job_id, agent_id) AS (SELECT a2.job_id, ag2.id FROM agents ag2"
	"  CROSS JOIN attempts a2 ON a2.agent_id = ag2.id"
	"  CROSS JOIN jobs j2 ON j2.id = a2.job_id CROSS JOIN runs r2 ON r2.id = j2.run_id"
	"  WHERE ag2.name = ?1 AND r2.reason = 'baseline' AND j2.state = 'done'"
	"  GROUP BY a2.job_id ORDER BY a2.job_id DESC LIMIT ?2)"
	" SELECT j.build_mode, s.benchmark, s.metric, j.context, j.id, s.attempt, s.repetition,"
	" s.side, s.value, res.received_at, r.base_commit"
	" FROM b CROSS JOIN jobs j ON j.id = b.job_id CROSS JOIN runs r ON r.id = j.run_id"
	" CROSS JOIN attempts a ON a.job_id = j.id AND a.agent_id = b.agent_id"
	" JOIN samples s ON s.job_id = a.job_id AND s.attempt = a.attempt"
	" JOIN results res ON res.job_id = a.job_id AND res.attempt = a.attempt"
	" ORDER BY j.build_mode, s.benchmark, s.metric, j.id, s.attempt, s.repetition, s.side";

struct acc {
	struct hostnoise_key k;
	double *lr;		/* log ratios */
	size_t n, cap;
	int64_t last_job;
};

static int acc_push(struct acc *a, double v, struct pg_err *err)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		double *p = realloc(a->lr, cap * sizeof(*p));

		if (!p)
			return pg_err_set(err, PG_ENOMEM, "host noise: out of memory");
		a->lr = p;
		a->cap = cap;
	}
	a->lr[a->n++] = v;
	return 0;
}

/* The key's spread and MDE from its log ratios, appended to out. */
static int acc_finish(struct acc *a, const struct profile_set *ps, struct hostnoise_key **out,
		      size_t *n, size_t *cap, struct pg_err *err)
{
	const struct profile_context *c = ps ? profile_find_context(ps, a->k.context) : NULL;
	double mad = NAN, sigma;

	if (!a->n)
		return 0;
	if (stats_mad(a->lr, a->n, &mad, err) < 0)
		return -1;
	sigma = STATS_MAD_NORMAL * mad;
	a->k.n_pairs = a->n;
	a->k.sigma_pct = 100 * sigma;
	a->k.mde_pct = NAN;
	if (c) {
		a->k.max_repetitions = c->max_repetitions;
		a->k.alpha = c->alpha;
		if (verdict_mde_pct(true, (size_t)c->max_repetitions, (size_t)c->max_repetitions,
				    &sigma, NAN, c->alpha, VERDICT_MDE_POWER, &a->k.mde_pct, err) < 0)
			return -1;
	}
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 16;
		struct hostnoise_key *p = realloc(*out, nc * sizeof(*p));

		if (!p)
			return pg_err_set(err, PG_ENOMEM, "host noise: out of memory");
		*out = p;
		*cap = nc;
	}
	(*out)[(*n)++] = a->k;
	return 0;
}

static int copy_col(sqlite3_stmt *q, int col, char *out, size_t size)
{
	const char *s = (const char *)sqlite3_column_text(q, col);

	return pg_fmt(out, size, "%s", s ? s : "");
}

int hostnoise_read(struct store *st, const struct profile_set *ps, const char *agent,
		   struct hostnoise_key **out, size_t *n, struct pg_err *err)
{
	static const char what[] = "read the host's baselines";
	sqlite3_stmt *q = NULL;
	struct acc a;
	size_t cap = 0;
	/* the base row waiting for its patched row */
	int64_t pj = 0, pa = 0, pr = -1;
	double pv = NAN;
	int rc = -1, row;

	*out = NULL;
	*n = 0;
	memset(&a, 0, sizeof(a));
	if (store_prepare_cached(st, &q, hostnoise_sql, what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_TEXT(agent), STORE_INT(HOSTNOISE_JOBS)), what, err) < 0)
		goto out;
	while ((row = store_step(q, what, err)) > 0) {
		const char *mode = (const char *)sqlite3_column_text(q, 0);
		const char *bench = (const char *)sqlite3_column_text(q, 1);
		const char *metric = (const char *)sqlite3_column_text(q, 2);
		const char *side = (const char *)sqlite3_column_text(q, 7);
		int64_t job = sqlite3_column_int64(q, 4), att = sqlite3_column_int64(q, 5);
		int64_t rep = sqlite3_column_int64(q, 6);
		double v = sqlite3_column_double(q, 8);

		if (!mode || !bench || !metric || !side)
			continue;
		if (strcmp(a.k.build_mode, mode) || strcmp(a.k.benchmark, bench) ||
		    strcmp(a.k.metric, metric)) {
			if (acc_finish(&a, ps, out, n, &cap, err) < 0)
				goto out;
			a.n = 0;
			a.last_job = 0;
			memset(&a.k, 0, sizeof(a.k));
			if (copy_col(q, 0, a.k.build_mode, sizeof(a.k.build_mode)) < 0 ||
			    copy_col(q, 1, a.k.benchmark, sizeof(a.k.benchmark)) < 0 ||
			    copy_col(q, 2, a.k.metric, sizeof(a.k.metric)) < 0 ||
			    copy_col(q, 3, a.k.context, sizeof(a.k.context)) < 0) {
				pg_err_set(err, PG_EINVAL, "host noise: a name over %d bytes",
					   HOSTNOISE_TEXT_MAX);
				goto out;
			}
			pr = -1;
		}
		if (job != a.last_job) {
			a.k.n_jobs++;
			a.last_job = job;
			/* ordered by job: the last one seen is the latest */
			a.k.last_at = sqlite3_column_int64(q, 9);
			if (copy_col(q, 10, a.k.last_commit, sizeof(a.k.last_commit)) < 0)
				a.k.last_commit[0] = '\0';
		}
		if (strcmp(side, "base") == 0) {
			pj = job;
			pa = att;
			pr = rep;
			pv = v;
		} else if (pr >= 0 && pj == job && pa == att && pr == rep && pv > 0 && v > 0) {
			if (acc_push(&a, log(v / pv), err) < 0)
				goto out;
			pr = -1;
		}
	}
	if (row < 0 || acc_finish(&a, ps, out, n, &cap, err) < 0)
		goto out;
	rc = 0;
out:
	store_done(st, q);
	free(a.lr);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
		pg_err_prefix(err, "agent %s", agent);
	}
	return rc;
}

static bool add_num_or_null(cJSON *o, const char *k, double v)
{
	return isfinite(v) ? cJSON_AddNumberToObject(o, k, v) != NULL
			   : cJSON_AddNullToObject(o, k) != NULL;
}

cJSON *hostnoise_to_json(const char *agent, const struct hostnoise_key *k, size_t n)
{
	cJSON *o = cJSON_CreateObject(), *arr;

	if (!o || !cJSON_AddStringToObject(o, "agent", agent) ||
	    !cJSON_AddNumberToObject(o, "baseline_jobs", HOSTNOISE_JOBS) ||
	    !(arr = cJSON_AddArrayToObject(o, "keys")))
		goto fail;
	for (size_t i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();

		if (!e || !cJSON_AddItemToArray(arr, e) ||
		    !cJSON_AddStringToObject(e, "build_mode", k[i].build_mode) ||
		    !cJSON_AddStringToObject(e, "benchmark", k[i].benchmark) ||
		    !cJSON_AddStringToObject(e, "metric", k[i].metric) ||
		    !cJSON_AddStringToObject(e, "context", k[i].context) ||
		    !cJSON_AddNumberToObject(e, "pairs", (double)k[i].n_pairs) ||
		    !cJSON_AddNumberToObject(e, "jobs", (double)k[i].n_jobs) ||
		    !add_num_or_null(e, "sigma_pct", k[i].sigma_pct) ||
		    !add_num_or_null(e, "mde_pct", k[i].mde_pct) ||
		    !cJSON_AddNumberToObject(e, "max_repetitions", k[i].max_repetitions) ||
		    !add_num_or_null(e, "alpha", k[i].max_repetitions ? k[i].alpha : NAN) ||
		    !cJSON_AddNumberToObject(e, "last_at", (double)k[i].last_at) ||
		    !cJSON_AddStringToObject(e, "last_commit", k[i].last_commit))
			goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}
