/* SPDX-License-Identifier: MIT */
/*
 * A job as the verdict sees it: its spec, rounds and samples read from the
 * store, and its evaluation (verdict_pass.h, step 2).
 */
#include "verdict_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "jobspec.h"
#include "json.h"
#include "vec.h"

#define VP_WHAT_JOB "read job for its verdict"
#define VP_WHAT_ROUNDS "read the rounds of a job"
#define VP_WHAT_SAMPLES "read the samples of a job"

static int dup_col(sqlite3_stmt *q, int col, char **out, struct pg_err *err)
{
	const unsigned char *s = sqlite3_column_text(q, col);

	*out = strdup(s ? (const char *)s : "");
	if (!*out)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	return 0;
}

void vp_job_release(struct vp_job *j)
{
	if (!j)
		return;
	free(j->context);
	free(j->build_mode);
	free(j->state);
	free(j->outcome);
	free(j->tree);
	free(j->branch);
	free(j->base_commit);
	free(j->run_state);
	free(j->series_title);
	free(j->root_msgid);
	free(j->host_noise);
	cJSON_Delete(j->spec);
	for (size_t i = 0; i < j->n_keys; i++) {
		free(j->keys[i].benchmark);
		free(j->keys[i].metric);
		free(j->keys[i].unit);
		for (int s = 0; s < VP_SIDES; s++) {
			free(j->keys[i].v[s]);
			free(j->keys[i].tag[s]);
			free(j->keys[i].pair[s]);
		}
	}
	free(j->keys);
	free(j->vkeys);
	memset(j, 0, sizeof(*j));
}

/* An optional number of the spec, or fallback. */
static double spec_num(const cJSON *spec, const char *name, double fallback)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, name);

	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : fallback;
}

static int spec_int(const cJSON *spec, const char *name, int lo, int hi, int fallback)
{
	double v = spec_num(spec, name, fallback);

	if (v < lo || v > hi || v != floor(v))
		return fallback;
	return (int)v;
}

/* The spec's numbers, with the context's (then verdict.h's) defaults. */
static void read_params(struct vp_job *j, const struct profile_set *ps)
{
	const struct profile_context *ctx = ps ? profile_find_context(ps, j->context) : NULL;
	struct verdict_params d = VERDICT_PARAMS_DEFAULT;
	int reps = 6;	/* profile_load.c's default */

	if (ctx) {
		verdict_params_from_context(ctx, &d);
		reps = ctx->repetitions;
	}
	j->params.threshold_pct = spec_num(j->spec, JS_THRESHOLD_PCT, d.threshold_pct);
	j->params.alpha = spec_num(j->spec, JS_ALPHA, d.alpha);
	j->params.noise_limit_pct = spec_num(j->spec, JS_NOISE_LIMIT_PCT, d.noise_limit_pct);
	j->spec_repetitions = spec_int(j->spec, JS_REPETITIONS, 0, 1000000, reps);
	j->spec_max_repetitions = spec_int(j->spec, JS_MAX_REPETITIONS, 0, 1000000,
					   ctx ? ctx->max_repetitions : 3 * j->spec_repetitions);
	j->round = spec_int(j->spec, JS_ROUND, 0, 1000000, 0);
	j->repetition_base = spec_int(j->spec, JS_REPETITION_BASE, 0, 1000000, 0);
	j->from_attempt = spec_int(j->spec, JS_FROM_ATTEMPT, 0, 1000000, 0);
	j->reruns = spec_int(j->spec, JS_RERUNS, 0, 1000, 0);
}

static int read_job(struct store *st, int64_t job_id, struct vp_job *j, struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	const char *spec;
	int rc;

	rc = store_prepare_cached(st, &q,
				  "SELECT j.run_id, r.series_id, j.attempt,"
				  " coalesce(j.pin_agent_id, 0), j.context, j.build_mode, j.state,"
				  " coalesce(j.outcome, ''), r.tree, r.branch, r.base_commit, r.state,"
				  " s.title, s.root_msgid, j.spec,"
				  " coalesce(ag.name, ''), coalesce(j.agent_id, 0),"
				  " (SELECT min(v.id) FROM verdicts v WHERE v.job_id = j.id"
				  "  AND v.metric IS NULL AND v.benchmark IS NULL),"
				  " (SELECT max(a.ended_at) FROM attempts a WHERE a.job_id = j.id),"
				  " r.reason = 'baseline'"
				  " FROM jobs j JOIN runs r ON r.id = j.run_id"
				  " LEFT JOIN series s ON s.id = r.series_id"
				  " LEFT JOIN agents ag ON ag.id = j.agent_id WHERE j.id = ?1",
				  VP_WHAT_JOB, err);
	if (rc < 0 || store_bind(q, STORE_ARGS(STORE_INT(job_id)), VP_WHAT_JOB, err) < 0)
		goto fail;
	rc = store_step(q, VP_WHAT_JOB, err);
	if (rc <= 0)
		goto out;
	j->id = job_id;
	j->run_id = sqlite3_column_int64(q, 0);
	j->series_id = sqlite3_column_int64(q, 1);
	j->attempt = sqlite3_column_int64(q, 2);
	j->pin_agent_id = sqlite3_column_int64(q, 3);
	j->baseline = sqlite3_column_int(q, 19) != 0;
	if (dup_col(q, 4, &j->context, err) < 0 || dup_col(q, 5, &j->build_mode, err) < 0 ||
	    dup_col(q, 6, &j->state, err) < 0 || dup_col(q, 7, &j->outcome, err) < 0 ||
	    dup_col(q, 8, &j->tree, err) < 0 || dup_col(q, 9, &j->branch, err) < 0 ||
	    dup_col(q, 10, &j->base_commit, err) < 0 || dup_col(q, 11, &j->run_state, err) < 0 ||
	    dup_col(q, 12, &j->series_title, err) < 0 || dup_col(q, 13, &j->root_msgid, err) < 0)
		goto fail;
	spec = (const char *)sqlite3_column_text(q, 14);
	if (pg_json_parse(spec ? spec : "{}", spec ? strlen(spec) : 2, &j->spec, err) < 0 ||
	    !cJSON_IsObject(j->spec)) {
		if (j->spec)
			pg_err_set(err, PG_EINVAL, "not a JSON object");
		pg_err_prefix(err, "job %lld: spec", (long long)job_id);
		goto fail;
	}
	/* Until a round says otherwise, the host is the job's last agent. */
	if (pg_fmt(j->host, sizeof(j->host), "%s", (const char *)sqlite3_column_text(q, 15)) < 0) {
		pg_err_set(err, PG_EINVAL, "job %lld: agent name '%.64s...' too long",
			   (long long)job_id, (const char *)sqlite3_column_text(q, 15));
		goto fail;
	}
	j->host_agent_id = sqlite3_column_int64(q, 16);
	j->has_verdict = sqlite3_column_type(q, 17) != SQLITE_NULL;
	j->verdict_row = sqlite3_column_int64(q, 17);
	j->last_ended = sqlite3_column_int64(q, 18);
	rc = 1;
	goto out;
fail:
	rc = -1;
out:
	store_done(st, q);
	return rc;
}

static bool outcome_measured(const char *o)
{
	return !strcmp(o, "ok") || !strcmp(o, "bench-failure");
}

/*
 * The rounds: results whose outcome is not infra-error, in attempt order.
 * Decides the host, the outcome the verdict is told, and how many
 * repetitions per side the samples hold.
 */
static int read_rounds(struct store *st, struct vp_job *j, struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	size_t n = 0, n_other = 0;
	bool bench_failed = false;
	char first[32] = "";
	int rc = -1, step;

	if (store_prepare_cached(st, &q,
				 "SELECT r.outcome, r.received_at, coalesce(a.agent_id, 0),"
				 " coalesce(ag.name, ''),"
				 " coalesce(json_extract(r.fingerprint,"
				 "  '$.apply.all_already'), 0) = 1"
				 " FROM results r"
				 " JOIN attempts a ON a.job_id = r.job_id AND a.attempt = r.attempt"
				 " LEFT JOIN agents ag ON ag.id = a.agent_id"
				 " WHERE r.job_id = ?1 AND r.outcome <> 'infra-error'"
				 " ORDER BY r.attempt",
				 VP_WHAT_ROUNDS, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(j->id)), VP_WHAT_ROUNDS, err) < 0)
		goto out;
	while ((step = store_step(q, VP_WHAT_ROUNDS, err)) == 1) {
		const char *o = (const char *)sqlite3_column_text(q, 0);

		if (!o)
			continue;
		if (n + n_other == 0) {
			const char *host = (const char *)sqlite3_column_text(q, 3);

			if (pg_fmt(first, sizeof(first), "%s", o) < 0) {
				pg_err_set(err, PG_EINVAL, "job %lld: outcome '%.32s...' too long",
					   (long long)j->id, o);
				goto out;
			}
			if (pg_fmt(j->host, sizeof(j->host), "%s", host) < 0) {
				pg_err_set(err, PG_EINVAL, "job %lld: agent name '%.64s...' too "
					   "long", (long long)j->id, host);
				goto out;
			}
			j->host_agent_id = sqlite3_column_int64(q, 2);
			j->already_applied = sqlite3_column_int(q, 4) != 0;
		}
		if (outcome_measured(o)) {
			n++;
			bench_failed |= !strcmp(o, "bench-failure");
			if (sqlite3_column_int64(q, 1) > j->measured_at)
				j->measured_at = sqlite3_column_int64(q, 1);
		} else {
			n_other++;
		}
	}
	if (step < 0)
		goto out;
	j->n_rounds = n;
	if (!*first) {
		/* No round at all: the scheduler gave up on the first one. */
		j->eval_outcome = "infra-error";
		j->repetitions_done = 0;
	} else if (!outcome_measured(first)) {
		/* apply-failure, a build failure: nothing was measured */
		static const char *const names[] = { "apply-failure", "base-build-failure",
						     "patched-build-failure" };

		j->eval_outcome = "infra-error";
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(first, names[i]))
				j->eval_outcome = names[i];
		j->repetitions_done = 0;
	} else {
		/* Each round ends with exactly one measured result, so the last
		 * round completed when there are round + 1 of them and nothing
		 * else came after; otherwise a follow-up failed. */
		bool complete = n == (size_t)j->round + 1 && n_other == 0 &&
				!strcmp(j->state, "done");
		bool ended = !strcmp(j->state, "done") || !strcmp(j->state, "infra-error");

		/* A follow-up still queued or running has not failed: its
		 * job is judged on the rounds so far (`run show`). */
		j->followup_failed = ended && !complete;
		j->repetitions_done = complete ? j->repetition_base + j->spec_repetitions :
				      j->repetition_base;
		j->eval_outcome = bench_failed ? "bench-failure" : "ok";
	}
	rc = 0;
out:
	store_done(st, q);
	return rc;
}

static int push_value(struct vp_key *k, int side, double v, int64_t tag, struct pg_err *err)
{
	if (k->n[side] == k->cap[side]) {
		/* Two arrays of one count. */
		size_t nc;
		double *nv;
		int64_t *nt;

		if (pg_grow_count(k->cap[side], k->n[side] + 1, sizeof(*nt), &nc) < 0 ||
		    !(nv = pg_realloc_array(k->v[side], nc, sizeof(*nv))))
			return pg_err_set(err, PG_ENOMEM, "out of memory");
		k->v[side] = nv;
		if (!(nt = pg_realloc_array(k->tag[side], nc, sizeof(*nt))))
			return pg_err_set(err, PG_ENOMEM, "out of memory");
		k->tag[side] = nt;
		k->cap[side] = nc;
	}
	k->v[side][k->n[side]] = v;
	k->tag[side][k->n[side]++] = tag;
	return 0;
}

/* The pairs of k: the base and patched values of the same round and
 * repetition, which the agent ran back to back (runner_dpdk.c).  Both
 * sides come in tag order, so one merge finds them. */
static int make_pairs(struct vp_key *k, struct pg_err *err)
{
	size_t n = k->n[0] < k->n[1] ? k->n[0] : k->n[1], a = 0, b = 0;

	if (n == 0)
		return 0;
	for (int s = 0; s < VP_SIDES; s++)
		if (!(k->pair[s] = malloc(n * sizeof(double))))
			return pg_err_set(err, PG_ENOMEM, "out of memory");
	while (a < k->n[0] && b < k->n[1]) {
		if (k->tag[0][a] < k->tag[1][b]) {
			a++;
		} else if (k->tag[0][a] > k->tag[1][b]) {
			b++;
		} else {
			k->pair[0][k->n_pairs] = k->v[0][a++];
			k->pair[1][k->n_pairs++] = k->v[1][b++];
		}
	}
	return 0;
}

/* The samples of every measured round, grouped by (benchmark, metric). */
static int read_samples(struct store *st, struct vp_job *j, struct pg_err *err)
{
	sqlite3_stmt *q = NULL;
	size_t cap = 0;
	int rc = -1, step;

	if (store_prepare_cached(st, &q,
				 "SELECT s.benchmark, s.metric, s.side, s.value, s.unit, s.attempt,"
				 " s.repetition FROM samples s"
				 " JOIN results r ON r.job_id = s.job_id AND r.attempt = s.attempt"
				 " WHERE s.job_id = ?1 AND r.outcome IN ('ok', 'bench-failure')"
				 " AND s.attempt >= ?2"
				 " ORDER BY s.benchmark, s.metric, s.attempt, s.side, s.repetition",
				 VP_WHAT_SAMPLES, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(j->id), STORE_INT(j->from_attempt)),
		       VP_WHAT_SAMPLES, err) < 0)
		goto out;
	while ((step = store_step(q, VP_WHAT_SAMPLES, err)) == 1) {
		const char *b = (const char *)sqlite3_column_text(q, 0);
		const char *m = (const char *)sqlite3_column_text(q, 1);
		const char *side = (const char *)sqlite3_column_text(q, 2);
		struct vp_key *k = j->n_keys ? &j->keys[j->n_keys - 1] : NULL;

		if (!b || !m || !side)
			continue;
		if (!k || strcmp(k->benchmark, b) || strcmp(k->metric, m)) {
			if (PG_GROW(j->keys, cap, j->n_keys + 1) < 0)
				goto nomem;
			k = &j->keys[j->n_keys++];
			memset(k, 0, sizeof(*k));
			if (dup_col(q, 0, &k->benchmark, err) < 0 || dup_col(q, 1, &k->metric, err) < 0 ||
			    dup_col(q, 4, &k->unit, err) < 0)
				goto out;
		}
		/* attempts and repetitions are far below 2^31 (schema,
		 * sched_result()) */
		if (push_value(k, strcmp(side, "base") ? 1 : 0, sqlite3_column_double(q, 3),
			       (int64_t)((uint64_t)sqlite3_column_int64(q, 5) << 32 |
					 (uint32_t)sqlite3_column_int64(q, 6)), err) < 0)
			goto out;
	}
	if (step < 0)
		goto out;
	for (size_t i = 0; i < j->n_keys; i++)
		if (make_pairs(&j->keys[i], err) < 0)
			goto out;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "out of memory");
out:
	store_done(st, q);
	return rc;
}

int vp_job_load(struct store *st, const struct profile_set *ps, int64_t job_id,
		struct vp_job *j, struct pg_err *err)
{
	int rc;

	memset(j, 0, sizeof(*j));
	rc = read_job(st, job_id, j, err);
	if (rc <= 0)
		return rc;
	read_params(j, ps);
	if (read_rounds(st, j, err) < 0 || read_samples(st, j, err) < 0 ||
	    (*j->host && hostnoise_read(st, ps, j->host, &j->host_noise, &j->n_host_noise,
					err) < 0)) {
		pg_err_prefix(err, "job %lld", (long long)job_id);
		return -1;
	}
	return 1;
}

const struct hostnoise_key *vp_host_noise(const struct vp_job *j, const struct vp_key *k)
{
	for (size_t i = 0; i < j->n_host_noise; i++) {
		const struct hostnoise_key *h = &j->host_noise[i];

		if (!strcmp(h->build_mode, j->build_mode) && !strcmp(h->benchmark, k->benchmark) &&
		    !strcmp(h->metric, k->metric))
			return h;
	}
	return NULL;
}

/* Whether metric gates benchmark `bench` per the spec's gate patterns. */
static bool spec_gated(const cJSON *spec, const char *bench, const char *metric)
{
	const cJSON *benches = cJSON_GetObjectItemCaseSensitive(spec, JS_BENCHMARKS), *b;

	cJSON_ArrayForEach(b, benches) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(b, JS_BENCH_NAME);
		const cJSON *gate = cJSON_GetObjectItemCaseSensitive(b, JS_BENCH_GATE), *g;
		char *patterns[PROFILE_MAX_ITEMS];
		struct profile_benchmark pb;

		if (!cJSON_IsString(name) || strcmp(name->valuestring, bench))
			continue;
		memset(&pb, 0, sizeof(pb));
		pb.gate = patterns;
		cJSON_ArrayForEach(g, gate)
			if (cJSON_IsString(g) && pb.n_gate < PROFILE_MAX_ITEMS)
				patterns[pb.n_gate++] = g->valuestring;
		return profile_gate_matches(&pb, metric);
	}
	return false;
}

const char *vp_key_state(enum verdict_class c)
{
	switch (c) {
	case VERDICT_NO_CHANGE:
		return "pass";
	case VERDICT_MISSING:
		return NULL;
	default:
		return verdict_class_name(c);
	}
}

int vp_job_eval(struct vp_job *j, bool final, struct pg_err *err)
{
	free(j->vkeys);
	j->vkeys = NULL;
	if (j->n_keys) {
		j->vkeys = calloc(j->n_keys, sizeof(*j->vkeys));
		if (!j->vkeys)
			return pg_err_set(err, PG_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < j->n_keys; i++) {
		const struct vp_key *k = &j->keys[i];
		struct verdict_key_in in = {
			.benchmark = k->benchmark, .key = k->metric,
			.base = k->v[0], .n_base = k->n[0],
			.patched = k->v[1], .n_patched = k->n[1],
			.higher_is_better = profile_key_higher_is_better(k->metric),
			.gated = spec_gated(j->spec, k->benchmark, k->metric),
			.pair_base = k->pair[0], .pair_patched = k->pair[1],
			.n_pairs = k->n_pairs,
		};

		if (verdict_key_eval(&in, &j->params, &j->vkeys[i], err) < 0)
			goto fail;
	}
	memset(&j->in, 0, sizeof(j->in));
	j->in.build_mode = j->build_mode;
	j->in.host = *j->host ? j->host : "(unknown)";
	j->in.outcome = j->eval_outcome ? j->eval_outcome : "infra-error";
	j->in.already_applied = j->already_applied;
	j->in.repetitions = j->repetitions_done;
	/* A failed follow-up: what we have is all we get. */
	j->in.max_repetitions = j->followup_failed ? j->repetitions_done : j->spec_max_repetitions;
	j->in.params = &j->params;
	j->in.keys = j->vkeys;
	j->in.n_keys = j->n_keys;
	if (verdict_job_eval(&j->in, &j->out, err) < 0)
		goto fail;
	j->final = final;
	if (final && j->out.state == VERDICT_PENDING) {
		j->in.max_repetitions = j->in.repetitions;
		if (verdict_job_eval(&j->in, &j->out, err) < 0)
			goto fail;
	}
	return 0;
fail:
	pg_err_prefix(err, "verdict of job %lld", (long long)j->id);
	return -1;
}
