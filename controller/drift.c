/* SPDX-License-Identifier: MIT */
/* Host drift: baselines of one commit that moved beyond the host's noise
 * (drift.h). */
#include "drift.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "sched.h"
#include "stats.h"
#include "vec.h"

/* Reference samples read at most (the latest first). */
#define DRIFT_REF_MAX 2048

/* The facts of a fingerprint that can make a host faster or slower. */
static const char *const drift_facts[] = {
	"vendor", "model", "arch", "cores", "numa_nodes", "kernel", "memory_kb", "agent_version",
	"dpdk_version", "host_check.governor", "host_check.turbo", "host_check.smt",
	"host_check.isolated_cpus", "host_check.nohz_full", "host_check.compiler",
	"host_check.hugepages.page_kb", "build.buildtype", "build.meson_options", NULL
};

struct vec {
	double *v;
	size_t n, cap;
};

/* The samples the key is compared with (drift.h), latest jobs first;
 * *ref_job: the latest of those jobs (0: none). */
static int ref_samples(struct store *st, const struct drift_job *j, const struct drift_key *k,
		       bool class, struct vec *out, int64_t *ref_job, struct pg_err *err)
{
	static const char what[] = "read reference baselines";
	sqlite3_stmt *q = NULL;
	int rc = -1, row;

	*ref_job = 0;
	if (store_prepare(st, &q,
			  "SELECT s.value, s.job_id FROM history h"
			  " JOIN jobs jb ON jb.id = h.job_id JOIN runs r ON r.id = jb.run_id"
			  " JOIN results res ON res.job_id = h.job_id AND res.outcome = 'ok'"
			  " JOIN samples s ON s.job_id = res.job_id AND s.attempt = res.attempt"
			  "  AND s.benchmark = h.benchmark AND s.metric = h.metric"
			  " WHERE r.reason = 'baseline' AND h.tree = ?1 AND h.commit_oid = ?2"
			  " AND h.build_mode = ?3 AND h.benchmark = ?4 AND h.metric = ?5"
			  " AND h.job_id <> ?6"
			  " AND (CASE WHEN ?8 THEN h.host <> ?7 AND jb.host_class ="
			  "  (SELECT host_class FROM jobs WHERE id = ?6) ELSE h.host = ?7 END)"
			  " ORDER BY h.job_id DESC LIMIT ?9", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_TEXT(j->tree), STORE_TEXT(j->commit),
				     STORE_TEXT(j->build_mode), STORE_TEXT(k->benchmark),
				     STORE_TEXT(k->metric), STORE_INT(j->job_id),
				     STORE_TEXT(j->host), STORE_INT(class),
				     STORE_INT(DRIFT_REF_MAX)), what, err) < 0)
		goto out;
	while ((row = store_step(q, what, err)) > 0) {
		if (PG_GROW(out->v, out->cap, out->n + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
		out->v[out->n++] = sqlite3_column_double(q, 0);
		if (!*ref_job)
			*ref_job = sqlite3_column_int64(q, 1);
	}
	rc = row < 0 ? -1 : 0;
out:
	sqlite3_finalize(q);
	return rc;
}

/* "kernel 6.1.0-1 -> 6.1.0-2, host_check.turbo on -> off" or "no fact of
 * the fingerprint differs", into b. */
static int fact_diff(const cJSON *ref, const cJSON *cur, struct pg_buf *b)
{
	size_t n = 0;

	if (!ref || !cur)
		return pg_buf_adds(b, "no fingerprint to compare");
	for (size_t i = 0; drift_facts[i]; i++) {
		const cJSON *a = pg_json_path(ref, drift_facts[i]);
		const cJSON *c = pg_json_path(cur, drift_facts[i]);
		char *sa = a ? cJSON_PrintUnformatted(a) : NULL;
		char *sc = c ? cJSON_PrintUnformatted(c) : NULL;
		int rc = 0;

		if (strcmp(sa ? sa : "(none)", sc ? sc : "(none)"))
			rc = pg_buf_printf(b, "%s%s %.80s -> %.80s", n++ ? ", " : "", drift_facts[i],
					   sa ? sa : "(none)", sc ? sc : "(none)");
		free(sa);
		free(sc);
		if (rc < 0)
			return -1;
	}
	return n ? 0 : pg_buf_adds(b, "no fact of the fingerprint differs");
}

/* The comparison of drift.h: cur against ref. */
struct cmp {
	double change, p, noise;
	bool beyond;
};

static int compare(const struct vec *cur, const struct vec *ref, double threshold_pct,
		   struct cmp *c, struct pg_err *err)
{
	struct stats_mw mw;
	double mr, mc, mad;

	memset(c, 0, sizeof(*c));
	if (ref->n < DRIFT_MIN_REF || cur->n < DRIFT_MIN_REF / 2)
		return 0;
	if (stats_median(ref->v, ref->n, &mr, err) < 0 ||
	    stats_median(cur->v, cur->n, &mc, err) < 0 || stats_mad(ref->v, ref->n, &mad, err) < 0 ||
	    stats_mann_whitney(cur->v, cur->n, ref->v, ref->n, &mw, err) < 0)
		return -1;
	if (!(mr > 0) || !(mc > 0))
		return 0;
	c->change = 100.0 * (mc / mr - 1.0);
	c->noise = 100.0 * mad * STATS_MAD_NORMAL / mr;
	c->p = mw.p;
	c->beyond = mw.p < DRIFT_ALPHA &&
		    fabs(c->change) > fmax(threshold_pct, DRIFT_NOISE_MULT * c->noise);
	return 0;
}

int drift_base_disturbed(struct store *st, const struct drift_job *j,
			 const struct drift_key *keys, size_t n_keys, bool *disturbed, char *why,
			 size_t len, struct pg_err *err)
{
	int rc = 0;

	*disturbed = false;
	if (len)
		why[0] = '\0';
	for (size_t i = 0; i < n_keys && !*disturbed && rc == 0; i++) {
		struct vec ref = { NULL, 0, 0 };
		struct vec cur = { (double *)keys[i].v[0], keys[i].n[0], 0 };
		struct cmp c;
		int64_t ref_job;

		rc = ref_samples(st, j, &keys[i], false, &ref, &ref_job, err);
		if (rc == 0)
			rc = compare(&cur, &ref, j->threshold_pct, &c, err);
		if (rc == 0 && c.beyond) {
			*disturbed = true;
			pg_fmt_cut(why, len, "base side %s %s %+.1f%% from this host's %zu baseline "
				   "samples of %.12s (p=%.2g, noise %.1f%%)", keys[i].benchmark,
				   keys[i].metric, c.change, ref.n, j->commit, c.p, c.noise);
		}
		free(ref.v);
	}
	return rc;
}

/* One key, one kind. */
static int check_key(struct store *st, const struct drift_job *j, const struct drift_key *k,
		     bool class, int64_t now, struct pg_buf *lines, unsigned int *flagged,
		     struct pg_err *err)
{
	struct vec ref = { NULL, 0, 0 }, cur = { NULL, 0, 0 };
	char why[DRIFT_WHY_MAX];
	struct pg_buf facts = PG_BUF_INIT(PG_BUF_NOLIMIT);
	cJSON *fa = NULL, *fb = NULL;
	struct cmp cm;
	double change, noise;
	int64_t ref_job;
	int rc = -1;

	if (ref_samples(st, j, k, class, &ref, &ref_job, err) < 0)
		goto out;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < k->n[s]; i++) {
			if (PG_GROW(cur.v, cur.cap, cur.n + 1) < 0) {
				pg_err_set(err, PG_ENOMEM, "out of memory");
				goto out;
			}
			cur.v[cur.n++] = k->v[s][i];
		}
	if (compare(&cur, &ref, j->threshold_pct, &cm, err) < 0)
		goto out;
	if (!cm.beyond) {
		rc = 0;
		goto out;
	}
	change = cm.change;
	noise = cm.noise;
	if (sched_job_fingerprint(st, ref_job, &fa, err) < 0 ||
	    sched_job_fingerprint(st, j->job_id, &fb, err) < 0 ||
	    fact_diff(fa, fb, &facts) < 0)
		goto out;
	/* Cut, visibly, when many facts changed. */
	pg_fmt_cut(why, sizeof(why), "%s %s %+.1f%% (p=%.2g, noise %.1f%%) at %.12s against %s: %s",
		   k->benchmark, k->metric, change, cm.p, noise, j->commit,
		   class ? "the other hosts of its class" : "its earlier baselines",
		   pg_buf_str(&facts));
	if (store_run(st, "flag host drift",
		      "INSERT INTO host_drift (host, build_mode, benchmark, metric, kind, commit_oid,"
		      " change_pct, p, noise_pct, why, job_id, state, flagged_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
		      " ON CONFLICT DO NOTHING",
		      STORE_ARGS(STORE_TEXT(j->host), STORE_TEXT(j->build_mode),
				 STORE_TEXT(k->benchmark), STORE_TEXT(k->metric),
				 STORE_TEXT(class ? "class" : "time"), STORE_TEXT(j->commit),
				 STORE_REAL(change), STORE_REAL(cm.p), STORE_REAL(noise),
				 STORE_TEXT(why), STORE_INT(j->job_id),
				 STORE_TEXT(j->drain ? "drained" : "flagged"), STORE_INT(now)),
		      err) < 0)
		goto out;
	if (store_changes(st) > 0) {
		if (flagged)
			(*flagged)++;
		if (lines)
			pg_buf_printf(lines, "host %s %s (%s): %s\n", j->host,
				      j->drain ? "drained for drift" : "drifts", j->build_mode, why);
	}
	rc = 0;
out:
	cJSON_Delete(fa);
	cJSON_Delete(fb);
	free(ref.v);
	free(cur.v);
	pg_buf_release(&facts);
	return rc;
}

int drift_check_tx(struct store *st, const struct drift_job *j, const struct drift_key *keys,
		   size_t n_keys, int64_t now, struct pg_buf *lines, unsigned int *flagged,
		   struct pg_err *err)
{
	if (flagged)
		*flagged = 0;
	if (!j->host || !*j->host || !j->commit || !*j->commit)
		return 0;
	for (size_t i = 0; i < n_keys; i++)
		for (int class = 0; class < 2; class++)
			if (check_key(st, j, &keys[i], class, now, lines, flagged, err) < 0) {
				pg_err_prefix(err, "drift of %s", j->host);
				return -1;
			}
	return 0;
}

#define DRIFT_COLUMNS "id, coalesce(job_id, 0), flagged_at, coalesce(cleared_at, 0), host," \
	" build_mode, benchmark, metric, kind, commit_oid, state, coalesce(cleared_by, ''), why," \
	" change_pct, coalesce(p, 1), coalesce(noise_pct, 0)"

int drift_list(struct store *st, const char *host, bool open_only, struct drift_flag **out,
	       size_t *n, struct pg_err *err)
{
	static const char what[] = "list host drift";
	sqlite3_stmt *q = NULL;
	size_t cap = 0;
	int rc = -1, row;

	*out = NULL;
	*n = 0;
	if (store_prepare(st, &q, "SELECT " DRIFT_COLUMNS " FROM host_drift"
			  " WHERE (?1 IS NULL OR host = ?1) AND (NOT ?2 OR state <> 'cleared')"
			  " ORDER BY id", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(host ? STORE_TEXT(host) : STORE_NULL, STORE_INT(open_only)),
		       what, err) < 0)
		goto out;
	while ((row = store_step(q, what, err)) > 0) {
		struct drift_flag *f;

		if (PG_GROW(*out, cap, *n + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
		f = &(*out)[(*n)++];
		memset(f, 0, sizeof(*f));
		f->id = sqlite3_column_int64(q, 0);
		f->job_id = sqlite3_column_int64(q, 1);
		f->flagged_at = sqlite3_column_int64(q, 2);
		f->cleared_at = sqlite3_column_int64(q, 3);
		store_col_text(q, 4, f->host, sizeof(f->host));
		store_col_text(q, 5, f->build_mode, sizeof(f->build_mode));
		store_col_text(q, 6, f->benchmark, sizeof(f->benchmark));
		store_col_text(q, 7, f->metric, sizeof(f->metric));
		store_col_text(q, 8, f->kind, sizeof(f->kind));
		store_col_text(q, 9, f->commit, sizeof(f->commit));
		store_col_text(q, 10, f->state, sizeof(f->state));
		store_col_text(q, 11, f->cleared_by, sizeof(f->cleared_by));
		store_col_text(q, 12, f->why, sizeof(f->why));
		f->change_pct = sqlite3_column_double(q, 13);
		f->p = sqlite3_column_double(q, 14);
		f->noise_pct = sqlite3_column_double(q, 15);
	}
	rc = row < 0 ? -1 : 0;
out:
	sqlite3_finalize(q);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int drift_drained(struct store *st, const char *host, bool *drained, struct pg_err *err)
{
	int64_t n = 0;

	*drained = false;
	if (store_query_int(st, "read host drift",
			    "SELECT count(*) FROM host_drift WHERE host = ?1 AND state = 'drained'",
			    STORE_ARGS(STORE_TEXT(host)), &n, err) < 0)
		return -1;
	*drained = n > 0;
	return 0;
}

int drift_clear(struct store *st, const char *host, const char *who, int64_t now, int64_t *n,
		struct pg_err *err)
{
	*n = 0;
	if (store_run(st, "clear host drift",
		      "UPDATE host_drift SET state = 'cleared', cleared_at = ?2, cleared_by = ?3"
		      " WHERE host = ?1 AND state <> 'cleared'",
		      STORE_ARGS(STORE_TEXT(host), STORE_INT(now), STORE_TEXT(who ? who : "")),
		      err) < 0)
		return -1;
	*n = store_changes(st);
	return 0;
}

int drift_counts(struct store *st, int64_t *flagged, int64_t *drained, struct pg_err *err)
{
	if (store_query_int(st, "count host drift",
			    "SELECT count(*) FROM host_drift WHERE state = 'flagged'", NULL, 0,
			    flagged, err) < 0 ||
	    store_query_int(st, "count host drift",
			    "SELECT count(*) FROM host_drift WHERE state = 'drained'", NULL, 0,
			    drained, err) < 0)
		return -1;
	return 0;
}

cJSON *drift_to_json(const struct drift_flag *f)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddNumberToObject(o, "id", (double)f->id) ||
	    !cJSON_AddStringToObject(o, "host", f->host) ||
	    !cJSON_AddStringToObject(o, "state", f->state) ||
	    !cJSON_AddStringToObject(o, "kind", f->kind) ||
	    !cJSON_AddStringToObject(o, "build_mode", f->build_mode) ||
	    !cJSON_AddStringToObject(o, "benchmark", f->benchmark) ||
	    !cJSON_AddStringToObject(o, "metric", f->metric) ||
	    !cJSON_AddStringToObject(o, "commit", f->commit) ||
	    !cJSON_AddNumberToObject(o, "change_pct", f->change_pct) ||
	    !cJSON_AddNumberToObject(o, "p", f->p) ||
	    !cJSON_AddNumberToObject(o, "noise_pct", f->noise_pct) ||
	    !cJSON_AddStringToObject(o, "why", f->why) ||
	    !cJSON_AddNumberToObject(o, "since", (double)f->flagged_at) ||
	    !(f->job_id ? cJSON_AddNumberToObject(o, "job", (double)f->job_id)
			: cJSON_AddNullToObject(o, "job")) ||
	    !(f->cleared_at ? cJSON_AddNumberToObject(o, "cleared_at", (double)f->cleared_at)
			    : cJSON_AddNullToObject(o, "cleared_at")) ||
	    !cJSON_AddStringToObject(o, "cleared_by", f->cleared_by)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
