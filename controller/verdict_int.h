/* SPDX-License-Identifier: MIT */
#ifndef CTL_VERDICT_INT_H
#define CTL_VERDICT_INT_H

/*
 * What the verdict pass's files share (verdict_pass.h has the rules): a
 * job as read from the store and evaluated (verdict_load.c), its texts for
 * people (verdict_text.c), and its history (verdict_history.c).
 */

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"
#include "profile.h"
#include "sched.h"
#include "hostnoise.h"
#include "store.h"
#include "verdict.h"

#define VP_SIDES 2			/* 0 base, 1 patched */
#define VP_LOG "verdict"

/* One (benchmark, metric) of a job, its samples of every round. */
struct vp_key {
	char *benchmark, *metric, *unit;
	double *v[VP_SIDES];
	int64_t *tag[VP_SIDES];		/* each value's round and repetition:
					 * attempt << 32 | repetition */
	size_t n[VP_SIDES], cap[VP_SIDES];
	double *pair[VP_SIDES];		/* the values of the same tag on both
					 * sides, in tag order */
	size_t n_pairs;
};

/* A job as the verdict sees it.  Filled by vp_job_load(); vp_job_eval()
 * sets the verdict.  Must not move in memory once evaluated (the verdict
 * points into it). */
struct vp_job {
	int64_t id, run_id, series_id, attempt, pin_agent_id;
	char *context, *build_mode, *state, *outcome, *tree, *branch, *base_commit;
	char *run_state, *series_title, *root_msgid;	/* "" for a baseline */
	bool baseline;			/* a baseline run's job: no series, no
					 * check, no mail, no follow-up */
	cJSON *spec;			/* jobs.spec */
	bool has_verdict;		/* its job verdict row exists */
	int64_t verdict_row;		/* that row's id */

	/* Rounds (verdict_pass.h step 2). */
	char host[SCHED_NAME_MAX + 1];	/* the agent of the first round */
	int64_t host_agent_id;		/* 0: unknown or gone */
	size_t n_rounds;		/* results with outcome ok or bench-failure */
	int round, repetition_base, spec_repetitions, spec_max_repetitions;
	int64_t from_attempt;		/* samples of earlier attempts dropped */
	int reruns;			/* disturbed rounds measured again */
	int repetitions_done;		/* runs per side so far */
	bool followup_failed;		/* a follow-up ended without its round */
	bool already_applied;		/* the first round found every patch of
					 * the series already applied (the
					 * fingerprint's apply.all_already) */
	const char *eval_outcome;	/* what verdict_job_eval() is told */
	int64_t measured_at;		/* arrival of the latest round, 0: none */
	int64_t last_ended;		/* end of the latest attempt, 0: none */
	struct verdict_params params;

	struct vp_key *keys;
	size_t n_keys;

	/* The host's own noise from its baselines (hostnoise.h), all its
	 * keys; none when it ran no baseline or the host is unknown. */
	struct hostnoise_key *host_noise;
	size_t n_host_noise;

	/* The verdict. */
	struct verdict_key *vkeys;	/* one per key, same order */
	struct verdict_job_in in;
	struct verdict_job out;
	bool final;			/* evaluated with pending turned into the cap */
};

/* The host's noise for key k of job j (same build mode), or NULL. */
const struct hostnoise_key *vp_host_noise(const struct vp_job *j, const struct vp_key *k);

/* Read job job_id with its rounds and samples (ps: fallbacks for a spec
 * without parameters; may be NULL).  Returns 1, 0 when there is no such
 * job, or -1.  *j must be released with vp_job_release() in every case. */
int vp_job_load(struct store *st, const struct profile_set *ps, int64_t job_id,
		struct vp_job *j, struct pg_err *err);

/* Evaluate the loaded job (verdict_key_eval(), verdict_job_eval()).  final:
 * no more rounds will come, so a pending verdict is taken at the cap (the
 * job evaluated again with max_repetitions = repetitions so far).
 * Returns 0 or -1. */
int vp_job_eval(struct vp_job *j, bool final, struct pg_err *err);

void vp_job_release(struct vp_job *j);

/* The verdict table's state name of a key class: "pass" for no-change,
 * NULL for missing (no row). */
const char *vp_key_state(enum verdict_class c);

/* "demo-release on lab-1, 6 runs per side: fail: <summary>\n", then the
 * table of the job's keys (or a line saying there are none), appended. */
int vp_job_table(const struct vp_job *j, struct pg_buf *out, struct pg_err *err);

/* The shell commands that reproduce the job by hand, appended. */
int vp_job_reproduce(const struct vp_job *j, struct pg_buf *out, struct pg_err *err);

/* The tree's main branch per the profiles ("main" when the tree is not
 * there). */
const char *vp_main_branch(const struct profile_set *ps, const char *tree);

/* Inside the caller's transaction: the history rows of a job decided final,
 * then the change-point search of each key added on a main branch, in
 * first-parent order when the tree's mirror under mirror_root (NULL:
 * none) has the branch (commits off its first-parent line left out), else
 * in the order measured.  Adds to *rows and *changes.  Returns 0 or -1. */
int vp_history_add(struct store *st, const struct profile_set *ps, const char *mirror_root,
		   const struct vp_job *j, int64_t now, struct pg_buf *lines, unsigned long *rows,
		   unsigned long *changes, struct pg_err *err);

/* Append one line saying what was decided to lines (a decision is told
 * only once it is committed: vp_tell()). */
void vp_say(struct pg_buf *lines, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Log each line of lines at info and append them to report (may be
 * NULL); empties lines. */
void vp_tell(struct pg_buf *lines, struct pg_buf *report);

#endif
