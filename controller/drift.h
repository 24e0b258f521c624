/* SPDX-License-Identifier: MIT */
#ifndef CTL_DRIFT_H
#define CTL_DRIFT_H

/*
 * Host drift (issue 17): a host whose baselines of one commit move beyond
 * its noise.  The owner of table host_drift.
 *
 * When a baseline job is decided (verdict_pass.c), each of its gated keys
 * is compared, with the job's samples (both sides: one build), against
 *   'time'   the samples of the earlier baselines of the same commit, build
 *            mode and key on the same host (the host moved since), and
 *   'class'  those of the other hosts of its host class (this host differs
 *            from its peers: a misconfiguration, or a different machine).
 * A key drifts when the two-sided Mann-Whitney p < DRIFT_ALPHA and the
 * medians differ by more than the larger of the context's threshold and
 * DRIFT_NOISE_MULT times the pooled robust spread of the reference: a
 * move a patch verdict on this host could mistake for a patch's effect.
 * Then one open row per (host, build mode, key, kind) is kept, saying
 * which facts of the fingerprint differ between the two (kernel,
 * governor, turbo, SMT, compiler, DPDK version, CPU model, ...) or that
 * none does.  With baseline.drain_on_drift the row is 'drained': the host
 * leases nothing (sched.c asks drift_drained()) until an operator clears
 * it (`perfgate-controller agent clear-drift NAME`).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"
#include "store.h"

#define DRIFT_ALPHA 0.01
#define DRIFT_NOISE_MULT 3.0
/* Reference samples needed for a comparison (a 6-pair baseline has 12). */
#define DRIFT_MIN_REF 6
#define DRIFT_TEXT_MAX 256
#define DRIFT_WHY_MAX 1024

/* The job just decided, as drift_check_tx() needs it. */
struct drift_job {
	int64_t job_id;
	const char *host, *tree, *branch, *build_mode, *commit;
	double threshold_pct;
	bool drain;			/* baseline.drain_on_drift */
};

/* One gated key of it: its samples (both sides). */
struct drift_key {
	const char *benchmark, *metric;
	const double *v[2];
	size_t n[2];
};

struct drift_flag {
	int64_t id, job_id, flagged_at, cleared_at;
	char host[DRIFT_TEXT_MAX], build_mode[DRIFT_TEXT_MAX], benchmark[DRIFT_TEXT_MAX];
	char metric[DRIFT_TEXT_MAX], kind[8], commit[48], state[16];
	char cleared_by[DRIFT_TEXT_MAX], why[DRIFT_WHY_MAX];
	double change_pct, p, noise_pct;
};

/*
 * Compare the keys of job j as above, in the caller's transaction; a
 * drift found is recorded (unless that key and kind has an open row) and
 * told in lines (may be NULL); *flagged (may be NULL) counts the rows
 * added.  Returns 0 or -1.
 */
int drift_check_tx(struct store *st, const struct drift_job *j, const struct drift_key *keys,
		   size_t n_keys, int64_t now, struct pg_buf *lines, unsigned int *flagged,
		   struct pg_err *err);

/*
 * Verdicts that read the baseline: whether the base side of patch job j
 * (keys: its gated keys, base side in v[0]; v[1] unused) lies outside the
 * host's own baselines of the same commit by the rule above (the 'time'
 * comparison), i.e. the host was disturbed while it measured.  *why gets
 * the first key that says so ("" when none).  Keys without such
 * baselines say nothing.  Returns 0 or -1.
 */
int drift_base_disturbed(struct store *st, const struct drift_job *j,
			 const struct drift_key *keys, size_t n_keys, bool *disturbed, char *why,
			 size_t len, struct pg_err *err);

/* The open rows (flagged or drained) of host (NULL: every host), oldest
 * first, into a malloc'd array; all rows when open_only is false.
 * Returns 0 or -1. */
int drift_list(struct store *st, const char *host, bool open_only, struct drift_flag **out,
	       size_t *n, struct pg_err *err);

/* Whether host (an agent's name) is drained. */
int drift_drained(struct store *st, const char *host, bool *drained, struct pg_err *err);

/* Clear every open row of host (who: the operator, for the record);
 * *n gets how many.  Returns 0 or -1. */
int drift_clear(struct store *st, const char *host, const char *who, int64_t now, int64_t *n,
		struct pg_err *err);

/* Open rows by state, for /metrics. */
int drift_counts(struct store *st, int64_t *flagged, int64_t *drained, struct pg_err *err);

/* A row as JSON; NULL when out of memory. */
cJSON *drift_to_json(const struct drift_flag *f);

#endif
