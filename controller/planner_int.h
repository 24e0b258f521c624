/* SPDX-License-Identifier: MIT */
#ifndef CTL_PLANNER_INT_H
#define CTL_PLANNER_INT_H

/*
 * What the planner's files share (planner.h is the planner's contract):
 *
 *   planner.c        the pass: supersession, loading a series, the plan of
 *                    one series or recheck in one transaction
 *   planner_deps.c   Depends-on: the walk through a series' prerequisites
 *   planner_tree.c   which tree and branch each context tests on, and the
 *                    base commit of each (tree, branch)
 *   planner_spec.c   the job spec (lib/jobspec.h) of one job
 *   planner_baseline.c  baseline runs: a branch's commit measured by
 *                    itself (planner.h, "Baselines")
 *
 * The planner writes no table itself: runs and jobs go through sched.h,
 * pending checks through outbox.h, dependencies and recheck requests
 * through series.h and recheck.h.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "err.h"
#include "planner.h"
#include "profile.h"
#include "recheck.h"
#include "trees.h"
#include "vec.h"

#define COMP "planner"
#define MAX_NOTES 16
#define NOTE_MAX 400
#define URL_MAX 2048


struct notes {
	char text[MAX_NOTES][NOTE_MAX];
	size_t n;
};


enum tree_status { TREE_UNKNOWN = 0, TREE_OK, TREE_FAILED };

struct tree_state {
	enum tree_status status;
	struct pg_err err;
};

struct pass {
	struct planner *pl;
	int64_t now;
	char base_url[URL_MAX];		/* public_url without a trailing '/' */
	struct tree_state *trees;	/* parallel to ps->trees */
};

struct dep {
	char kind[8];
	char *ref;
	int64_t series_id;		/* 0: never seen */
	bool missing;
};

struct series_info {
	int64_t id;
	char *project;
	char *title;
	char state[16];
	int64_t version, total, completed_at;
	char base_commit[TREES_OID_HEX + 1];	/* lowercase; "" when none or malformed */
	char *base_commit_raw;		/* as given, for notes; NULL when none */
	int64_t *patch_ids;		/* by number */
	size_t n_patches;
	struct pg_strvec files, tags;
	struct dep deps[PLANNER_MAX_DEPS];
	size_t n_deps;
	struct notes notes;		/* about the series: its dependencies */
};

/* The contexts of a series that share a (tree, branch): one run; or the
 * contexts of one baseline run (trigger set). */
struct group {
	const struct profile_tree *tree;
	const char *branch;
	const struct profile_context **ctx;
	size_t n_ctx;
	char base[TREES_OID_HEX + 1];
	const char *base_source;
	char version[TREES_VERSION_MAX];
	bool has_version;
	unsigned major, minor;
	struct notes notes;
	int64_t run_id;
	const char *trigger;		/* a baseline's ("head", ...); NULL for a series */
	const char *only_mode;		/* a baseline's one build mode; NULL: all */
	int64_t pin_agent_id;		/* a baseline pinned to that agent; 0: none */
};

/* Begin a pass of pl (its clock, public URL, tree states); release it
 * with planner_pass_release(), also after a failure.  Returns 0 or -1. */
int planner_pass_init(struct pass *p, struct planner *pl, struct pg_err *err);
void planner_pass_release(struct pass *p);

/* Add a note about a job (printf format): notes explain a job to people;
 * past MAX_NOTES the log has them. */
void planner_note(struct notes *ns, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The public URL base_url + what + id + tail into out.  Returns 0, or -1
 * (PG_EINVAL) when it does not fit. */
int planner_url(const struct pass *p, char *out, size_t len, const char *what, int64_t id,
		const char *tail, struct pg_err *err);

/* Collect the series' dependencies into si->deps (planner_deps.c);
 * *wait when it must wait for them.  Returns 0 or -1. */
int planner_collect_deps(struct pass *p, struct series_info *si, bool *wait,
			 struct pg_err *err);

/* The base commit, its source and the VERSION of group g (planner_tree.c):
 * the tree synced once per pass, the rules of planner.h.  Returns 0, or -1
 * when the tree cannot be synced or the branch resolved. */
int planner_resolve_group(struct pass *p, const struct series_info *si,
			  const struct recheck *rq, struct group *g, struct pg_err *err);

/* Sync tree t once per pass (a failure sticks for the pass).  Returns 0
 * or -1. */
int planner_ensure_tree(struct pass *p, const struct profile_tree *t, struct pg_err *err);

/* g's VERSION at g->base from mirror, and the version it parses to; a
 * missing or unusable VERSION is a note, not an error.  Returns 0, or -1
 * when the mirror cannot be read. */
int planner_group_version(const char *mirror, struct group *g, struct pg_err *err);

/* Put each context in the group of its (tree, branch) (planner_tree.c):
 * groups[k].ctx are slices of slots (room for n_ctx).  With a rebase, the
 * branch is the rebase branch, and contexts whose tree does not have it
 * are left out.  *n_groups may be 0 afterwards.  Returns 0 or -1. */
int planner_group_contexts(const struct pass *p, const struct series_info *si,
			   const struct recheck *rq, const struct profile_context *const *ctxs,
			   size_t n_ctx, const struct profile_context **slots, struct group *groups,
			   size_t *n_groups, struct pg_err *err);

/* A baseline job's repetitions: the context's, raised to the fewest pairs
 * that give a (1 - alpha) interval (verdict_min_runs()) within
 * max_repetitions, since a baseline has no follow-up round: its one round
 * must say what the host's A/A noise is. */
int planner_baseline_repetitions(const struct profile_context *ctx);

/* The spec of one job (planner_spec.c, lib/jobspec.h): malloc'd JSON text
 * in *out.  Returns 0 or -1. */
int planner_job_spec(const struct pass *p, const struct series_info *si,
		     const struct group *g, const char *reason,
		     const struct profile_context *ctx, const struct profile_host_class *hc,
		     const struct profile_build_mode *bm, char **out, struct pg_err *err);

#endif
