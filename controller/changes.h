/* SPDX-License-Identifier: MIT */
#ifndef CTL_CHANGES_H
#define CTL_CHANGES_H

/*
 * Change points on the main branches (DESIGN.md section 2.9): this module
 * owns the change_points table and reads the history of one key as a
 * series of commits.  changepoint.h finds a step in a series; the verdict
 * pass records it here (changes_record_tx()); the planner's bisection
 * (planner.h, "Bisection") narrows its range with baselines until it
 * names one commit (changes_locate_tx()) or calls it noise
 * (changes_dismiss_tx()).
 *
 * A change point's state: 'suspected' while its range holds more than one
 * commit (commit_before excluded, commit_after included, first-parent
 * order), 'confirmed' once located at one commit, 'dismissed' when the
 * step did not stand or bisection gave up (`why` says which).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "store.h"

#define CHANGES_OID_MAX 64
#define CHANGES_TEXT_MAX 256
/* History rows read per series, newest first: enough for CP_MAX_POINTS
 * commits measured a few times each. */
#define CHANGES_HISTORY_ROWS 2048

/* One commit of a series: its values in the order measured. */
struct changes_commit {
	char oid[CHANGES_OID_MAX + 1];
	double *v;
	size_t n, cap;
};

struct changes_series {
	struct changes_commit *c;
	size_t n, cap;
};

/* The key a series and a change point are of. */
struct changes_key {
	const char *host, *tree, *branch, *build_mode, *benchmark, *metric;
};

/*
 * The history of key k, oldest commit first in the order measured (the
 * latest CHANGES_HISTORY_ROWS rows), into *s (release it with
 * changes_series_release(), also after a failure).  Returns 0 or -1.
 */
int changes_series_read(struct store *st, const struct changes_key *k, struct changes_series *s,
			struct pg_err *err);

/*
 * s in first-parent order of tree/branch, commits off that line dropped,
 * when the mirror under mirror_root (NULL: none) can say and knows at
 * least one of them; else s is left as it is.
 */
void changes_series_git_order(const char *mirror_root, const char *tree, const char *branch,
			      struct changes_series *s);

void changes_series_release(struct changes_series *s);

/* The index of commit oid in s, or -1. */
long changes_series_find(const struct changes_series *s, const char *oid);

struct change_point {
	int64_t id;
	char host[CHANGES_TEXT_MAX], tree[CHANGES_TEXT_MAX], branch[CHANGES_TEXT_MAX];
	char build_mode[CHANGES_TEXT_MAX], benchmark[CHANGES_TEXT_MAX];
	char metric[CHANGES_TEXT_MAX], context[CHANGES_TEXT_MAX];
	char before[CHANGES_OID_MAX + 1], after[CHANGES_OID_MAX + 1];
	char first_before[CHANGES_OID_MAX + 1], first_after[CHANGES_OID_MAX + 1];
	char located[CHANGES_OID_MAX + 1];	/* "" until located */
	double effect;		/* % in the key's good direction: negative is worse */
	double p;
	char state[16];
	char why[CHANGES_TEXT_MAX];
	int64_t bisect_runs, bisect_run_id, detected_at, updated_at, alerted_at;
};

/* The key of change point c. */
struct changes_key changes_key_of(const struct change_point *c);

/*
 * Record a change point found (c: the key, context, before, after, effect,
 * p) in the caller's transaction, unless one of that key with that
 * commit_after exists; *inserted says which.  Returns 0 or -1.
 */
int changes_record_tx(struct store *st, const struct change_point *c, int64_t now,
		      bool *inserted, struct pg_err *err);

/* commit_after of the key's latest change point ("" when none). */
int changes_last_after(struct store *st, const struct changes_key *k, char *oid, size_t len,
		       struct pg_err *err);

/*
 * Change points newest first (state NULL: every one; else only that
 * state), at most limit, into a malloc'd array.  Returns 0 or -1.
 */
int changes_list(struct store *st, const char *state, int64_t limit, struct change_point **out,
		 size_t *n, struct pg_err *err);

/* One change point: 1 found, 0 not, -1 error. */
int changes_get(struct store *st, int64_t id, struct change_point *out, struct pg_err *err);

/* The transitions of bisection, each in the caller's transaction; each
 * returns 0, or -1 (PG_ECONFLICT when the change point is no longer
 * 'suspected'). */
int changes_narrow_tx(struct store *st, int64_t id, const char *before, const char *after,
		      int64_t now, struct pg_err *err);
int changes_bisect_run_tx(struct store *st, int64_t id, int64_t run_id, int64_t now,
			  struct pg_err *err);
int changes_locate_tx(struct store *st, int64_t id, const char *commit, const char *why,
		      int64_t now, struct pg_err *err);
int changes_dismiss_tx(struct store *st, int64_t id, const char *why, int64_t now,
		       struct pg_err *err);
/* Mark it told (alerted_at); *first is whether it was not yet. */
int changes_alerted_tx(struct store *st, int64_t id, int64_t now, bool *first,
		       struct pg_err *err);

/*
 * The history of key k for GET /api/v1/history: {"points": [...]} in
 * first-parent order of the branch when the mirror under mirror_root can
 * say (else in the order measured), one point per
 * commit: its values (medians of the base sides of the jobs that
 * measured it), their median and robust spread in %, the jobs, when it
 * was last measured and the host facts of that job's fingerprint
 * (kernel, CPU model, DPDK version, compiler, governor, turbo).
 * Returns 0, or -1 with err.
 */
int changes_history_json(struct store *st, const char *mirror_root, const struct changes_key *k,
			 cJSON **out, struct pg_err *err);

/* The benchmark of the history of (host, tree, branch, build mode) that
 * has metric (the first by name) into out ("" when none), and *n how
 * many benchmarks have it. */
int changes_history_benchmark(struct store *st, const char *host, const char *tree,
			      const char *branch, const char *build_mode, const char *metric,
			      char *out, size_t len, int64_t *n, struct pg_err *err);

/* Change points by state and direction, for /metrics: n[state][worse]
 * with state 0 suspected, 1 confirmed, 2 dismissed and worse 1 for a
 * negative effect. */
int changes_counts(struct store *st, int64_t n[3][2], struct pg_err *err);

/* The change point as JSON (every column); NULL when out of memory. */
cJSON *changes_to_json(const struct change_point *c);

#endif
