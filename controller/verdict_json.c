/* SPDX-License-Identifier: MIT */
/*
 * A job's verdict as JSON, for the dashboard's series page: the same
 * evaluation as `run show` (vp_job_load(), vp_job_eval()), every number of
 * its before/after table, and the samples behind each key in run order.
 */
#include "verdict_pass.h"
#include "verdict_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool add_num(cJSON *o, const char *key, double v)
{
	return isfinite(v) ? cJSON_AddNumberToObject(o, key, v) != NULL
			   : cJSON_AddNullToObject(o, key) != NULL;
}

/* [[attempt, repetition, value], ...] of one side, in run order. */
static bool add_side(cJSON *o, const char *key, const struct vp_key *k, int side)
{
	cJSON *arr = cJSON_AddArrayToObject(o, key);

	if (!arr)
		return false;
	for (size_t i = 0; i < k->n[side]; i++) {
		double v[3] = { (double)(k->tag[side][i] >> 32),
				(double)(k->tag[side][i] & 0xffffffff), k->v[side][i] };
		cJSON *t = cJSON_CreateDoubleArray(v, 3);

		if (!t || !cJSON_AddItemToArray(arr, t)) {
			cJSON_Delete(t);
			return false;
		}
	}
	return true;
}

/* "host_noise": the host's own A/A noise for this key (hostnoise.h), or
 * null when it ran no baseline of this build mode. */
static bool add_host_noise(cJSON *o, const struct hostnoise_key *h)
{
	cJSON *n;

	if (!h)
		return cJSON_AddNullToObject(o, "host_noise") != NULL;
	return (n = cJSON_AddObjectToObject(o, "host_noise")) &&
	       add_num(n, "sigma_pct", h->sigma_pct) &&
	       add_num(n, "mde_pct", h->mde_pct) &&
	       cJSON_AddNumberToObject(n, "pairs", (double)h->n_pairs) &&
	       cJSON_AddNumberToObject(n, "jobs", (double)h->n_jobs) &&
	       cJSON_AddNumberToObject(n, "max_repetitions", h->max_repetitions) &&
	       cJSON_AddStringToObject(n, "last_commit", h->last_commit);
}

static bool add_key(cJSON *keys, const struct vp_key *k, const struct verdict_key *v,
		    const struct hostnoise_key *h)
{
	cJSON *o = cJSON_CreateObject(), *samples;
	const char *state = vp_key_state(v->cls);

	if (!o || !cJSON_AddItemToArray(keys, o)) {
		cJSON_Delete(o);
		return false;
	}
	return cJSON_AddStringToObject(o, "benchmark", k->benchmark) &&
	       cJSON_AddStringToObject(o, "metric", k->metric) &&
	       cJSON_AddStringToObject(o, "unit", k->unit ? k->unit : "") &&
	       cJSON_AddBoolToObject(o, "gated", v->gated) &&
	       cJSON_AddBoolToObject(o, "higher_is_better", v->higher_is_better) &&
	       cJSON_AddStringToObject(o, "class", verdict_class_name(v->cls)) &&
	       (state ? cJSON_AddStringToObject(o, "state", state) != NULL
		      : cJSON_AddNullToObject(o, "state") != NULL) &&
	       add_num(o, "base_median", v->base_median) &&
	       add_num(o, "patched_median", v->patched_median) &&
	       add_num(o, "delta", v->delta) &&
	       add_num(o, "change_pct", v->change_pct) &&
	       add_num(o, "effect_pct", v->effect_pct) &&
	       add_num(o, "ci_lo_pct", v->hl_lo_pct) &&
	       add_num(o, "ci_hi_pct", v->hl_hi_pct) &&
	       add_num(o, "ci_conf", v->hl_conf) &&
	       cJSON_AddBoolToObject(o, "ci_valid", v->ci_valid) &&
	       add_num(o, "mde_pct", v->mde_pct) &&
	       add_num(o, "sigma", v->sigma) &&
	       cJSON_AddNumberToObject(o, "pairs_needed", (double)v->pairs_needed) &&
	       add_num(o, "p", v->p) &&
	       cJSON_AddBoolToObject(o, "p_exact", v->p_exact) &&
	       add_num(o, "p_min", v->p_min) &&
	       cJSON_AddNumberToObject(o, "n_base", (double)v->n_base) &&
	       cJSON_AddNumberToObject(o, "n_patched", (double)v->n_patched) &&
	       cJSON_AddNumberToObject(o, "n_pairs", (double)v->n_pairs) &&
	       cJSON_AddBoolToObject(o, "paired", v->paired) &&
	       add_num(o, "noise_pct", v->noise_pct) &&
	       cJSON_AddStringToObject(o, "reason", v->reason) &&
	       add_host_noise(o, h) &&
	       (samples = cJSON_AddObjectToObject(o, "samples")) &&
	       add_side(samples, "base", k, 0) &&
	       add_side(samples, "patched", k, 1);
}

/* The stored job verdict row: {"state", "description"} or null. */
static int add_stored(struct store *st, cJSON *o, const struct vp_job *j, struct pg_err *err)
{
	static const char what[] = "read job verdict";
	sqlite3_stmt *q = NULL;
	cJSON *v;
	int rc;

	if (!j->has_verdict)
		return cJSON_AddNullToObject(o, "verdict") ? 0 : -1;
	if (store_prepare(st, &q, "SELECT state, description FROM verdicts WHERE id = ?1", what,
			  err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(j->verdict_row)), what, err) < 0 ||
	    (rc = store_step(q, what, err)) < 0) {
		sqlite3_finalize(q);
		return -1;
	}
	v = rc ? cJSON_AddObjectToObject(o, "verdict") : NULL;
	rc = rc ? (v && cJSON_AddStringToObject(v, "state",
						(const char *)sqlite3_column_text(q, 0)) &&
		   cJSON_AddStringToObject(v, "description",
					   (const char *)sqlite3_column_text(q, 1)) ? 0 : -1)
		: (cJSON_AddNullToObject(o, "verdict") ? 0 : -1);
	sqlite3_finalize(q);
	return rc;
}

/* The rounds: every result of the job, follow-ups marked. */
static int add_rounds(struct store *st, cJSON *o, const struct vp_job *j, struct pg_err *err)
{
	static const char what[] = "read rounds";
	cJSON *arr = cJSON_AddArrayToObject(o, "rounds");
	sqlite3_stmt *q = NULL;
	int step, n = 0;

	if (!arr)
		return -1;
	if (store_prepare(st, &q,
			  "SELECT r.attempt, coalesce(ag.name, ''), r.outcome, r.received_at,"
			  " (SELECT min(s.repetition) FROM samples s WHERE s.job_id = r.job_id"
			  "  AND s.attempt = r.attempt)"
			  " FROM results r JOIN attempts a ON a.job_id = r.job_id AND a.attempt = r.attempt"
			  " LEFT JOIN agents ag ON ag.id = a.agent_id WHERE r.job_id = ?1"
			  " ORDER BY r.attempt", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(j->id)), what, err) < 0) {
		sqlite3_finalize(q);
		return -1;
	}
	while ((step = store_step(q, what, err)) == 1) {
		cJSON *r = cJSON_CreateObject();
		const char *outcome = (const char *)sqlite3_column_text(q, 2);
		bool measured = outcome && (!strcmp(outcome, "ok") ||
					    !strcmp(outcome, "bench-failure"));

		if (!r || !cJSON_AddItemToArray(arr, r)) {
			cJSON_Delete(r);
			step = -1;
			break;
		}
		if (!cJSON_AddNumberToObject(r, "attempt", (double)sqlite3_column_int64(q, 0)) ||
		    !cJSON_AddStringToObject(r, "agent", (const char *)sqlite3_column_text(q, 1)) ||
		    !cJSON_AddStringToObject(r, "outcome", outcome ? outcome : "") ||
		    !cJSON_AddNumberToObject(r, "received_at",
					     (double)sqlite3_column_int64(q, 3)) ||
		    (sqlite3_column_type(q, 4) == SQLITE_NULL
			     ? !cJSON_AddNullToObject(r, "first_repetition")
			     : !cJSON_AddNumberToObject(r, "first_repetition",
							(double)sqlite3_column_int64(q, 4))) ||
		    /* A round is a measured result; the first is the job's own. */
		    !cJSON_AddBoolToObject(r, "followup", measured && n++ > 0)) {
			step = -1;
			break;
		}
	}
	sqlite3_finalize(q);
	if (step < 0 && !err->code)
		pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
	return step < 0 ? -1 : 0;
}

int verdict_job_json(struct store *st, const struct profile_set *ps, int64_t job_id,
		     cJSON **out, struct pg_err *err)
{
	struct pg_buf repro = PG_BUF_INIT(1 << 20);
	const char *state;
	struct vp_job j;
	cJSON *o = NULL, *keys, *params;
	int rc = -1, found;

	*out = NULL;
	found = vp_job_load(st, ps, job_id, &j, err);
	if (found == 0)
		pg_err_set(err, PG_ENOTFOUND, "no job %lld", (long long)job_id);
	if (found <= 0 || vp_job_eval(&j, j.has_verdict, err) < 0)
		goto out;
	state = j.out.state == VERDICT_PENDING ? "pending" : verdict_state_name(j.out.state);
	if (vp_job_reproduce(&j, &repro, err) < 0)
		goto out;
	o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "host", j.host) ||
	    !cJSON_AddBoolToObject(o, "final", j.has_verdict) ||
	    !cJSON_AddStringToObject(o, "state", state) ||
	    !cJSON_AddStringToObject(o, "why", verdict_why_name(j.out.why)) ||
	    !cJSON_AddStringToObject(o, "summary", j.out.summary) ||
	    !cJSON_AddNumberToObject(o, "repetitions", j.repetitions_done) ||
	    !cJSON_AddNumberToObject(o, "max_repetitions", j.spec_max_repetitions) ||
	    !(params = cJSON_AddObjectToObject(o, "params")) ||
	    !cJSON_AddNumberToObject(params, "threshold_pct", j.params.threshold_pct) ||
	    !cJSON_AddNumberToObject(params, "alpha", j.params.alpha) ||
	    !cJSON_AddNumberToObject(params, "noise_limit_pct", j.params.noise_limit_pct) ||
	    !cJSON_AddStringToObject(o, "reproduce", pg_buf_str(&repro)) ||
	    !(keys = cJSON_AddArrayToObject(o, "keys")))
		goto nomem;
	for (size_t i = 0; i < j.n_keys; i++)
		if (!add_key(keys, &j.keys[i], &j.vkeys[i], vp_host_noise(&j, &j.keys[i])))
			goto nomem;
	if (add_stored(st, o, &j, err) < 0 || add_rounds(st, o, &j, err) < 0) {
		if (!err->code)
			goto nomem;
		goto out;
	}
	*out = o;
	o = NULL;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "job %lld: verdict: out of memory", (long long)job_id);
out:
	cJSON_Delete(o);
	vp_job_release(&j);
	pg_buf_release(&repro);
	return rc;
}
