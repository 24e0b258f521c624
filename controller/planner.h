/* SPDX-License-Identifier: MIT */
#ifndef CTL_PLANNER_H
#define CTL_PLANNER_H

/*
 * The planner: complete series and recheck requests become runs, runs
 * become jobs, and every run queues a `pending` check (DESIGN.md sections
 * 2.3 and 2.7).  One call of planner_run() is one pass; the controller
 * calls it periodically and after intake.  A pass:
 *
 *  1. Cancels the queued, leased and running jobs of superseded series
 *     (planner_cancel_superseded(), its own transaction).
 *  2. Plans every series in state 'complete' that has no run yet
 *     (reason "new"), oldest completion first.  The recheck requests
 *     still pending on it without a rebase branch are older than this
 *     first run, which answers them (recheck_answer_by_first_run()).
 *  3. Plans every pending recheck request (reason "recheck"), oldest
 *     first, for the contexts it names that still exist; one on a series
 *     without a run waits for it.
 *
 * Tree and branch.  The files the series' patches touch (patches.files)
 * and its subject tags (series.tags, e.g. "22.11") go through
 * profile_context_select_tree() for each context.  Contexts that land on
 * the same (tree, branch) share one run; contexts that land elsewhere get
 * a run of their own, so one series may have several runs of one reason,
 * one per distinct (tree, branch).  A context only gets jobs on a run of
 * one of its own trees (the selection guarantees it).
 *
 * Base commit, resolved when planning against the tree's mirror
 * (controller/trees.h; each tree is synced at most once per pass, and
 * only when a series needs it) and recorded in runs.base_commit:
 *  - a recheck with `rebase=BRANCH`: the run moves to BRANCH (which must be
 *    one of the tree's branches in the profile; a context whose tree lacks
 *    it is dropped from the request) at its tip ("rebase");
 *  - a plain recheck: the base of the latest earlier run of the series on
 *    the same tree and branch, so that a recheck repeats the measurement
 *    rather than moving it ("previous-run"); without one, as below;
 *  - the series' `base-commit:` (SERIES_BASE_COMMIT_SQL: the cover
 *    letter's, else the first patch's that has one) when it is 40 hex
 *    digits and that commit exists in the tree's mirror
 *    ("base-commit");
 *  - else the branch's tip ("branch-tip"), with a note in the job when a
 *    base-commit was given but not found.
 * The VERSION file at the base commit picks the version-gated meson
 * options (profile_build_mode_options()); a tree without a usable VERSION
 * gets only the unversioned options, and a note says so.
 *
 * Jobs: one per (context, build mode) of each context of the run, on the
 * context's host class, in state 'queued', with jobs.spec as lib/jobspec.h
 * defines it.
 * Priority: PLANNER_PRIORITY_SERIES, plus PLANNER_PRIORITY_RECHECK for a
 * recheck and PLANNER_PRIORITY_SMALL for a one-patch series; the
 * scheduler takes higher priorities first.
 *
 * Checks: for each context of a run, one 'pending' row in check_outbox
 * per patch to post on: the series' last patch, or every patch when the
 * context's post_to is "all_patches"; description PLANNER_PENDING_TEXT,
 * target URL PUBLIC_URL/series/ID, due at once.
 *
 * Depends-on.  A series (or recheck) waits, counted in series_waiting,
 * while one of its dependencies, followed transitively, is either
 *  - resolved (series_deps.dep_series_id) but not yet complete (not all
 *    of its patches are there), or
 *  - never seen (dep_series_id NULL): it is looked up again on every pass
 *    (kind 'series' by series.pw_series_id, 'patch' by
 *    patches.pw_patch_id, 'msgid' by the Message-ID of a patch or cover,
 *    then series_refs) and recorded when found;
 * but only for dep_timeout_s after the series completed.  After that the
 * series is planned without the dependencies still missing: they are
 * listed in the job's depends_on with "missing": true, no mbox URL ("series"
 * is null when never seen, the id of an incomplete one otherwise) and a
 * note.
 * Dependencies that are there are listed in the order to apply them
 * (a dependency's own dependencies first), each with its mbox URL.
 *
 * Supersession.  When a newer version supersedes a series, the jobs of the
 * old series' runs that are queued, leased or running are cancelled with
 * outcome_detail "superseded by series N" through the scheduler's
 * sched_cancel_series_tx() (controller/sched.h: finished_at now, the open
 * attempt of a leased or running job ended as 'cancelled', unfinished runs
 * 'cancelled'); the agent learns it from its next heartbeat.  All
 * superseded series found in a pass are cancelled in one transaction of
 * the planner's own, before any planning, so that cancellation never
 * waits on a tree sync.
 *
 * Crash safety and idempotence.  Each series (each recheck request) is
 * planned in ONE transaction: its runs, jobs, checks and the request's
 * new state commit together or not at all (a dependency found on the way
 * is recorded at once: that is true whatever becomes of the plan).  The
 * transaction checks again that the series still has no run (the request
 * is still pending), so two planners, or a second pass, plan nothing
 * twice.  A series whose tree cannot be synced or whose
 * branch cannot be resolved (network down, branch missing) is skipped for
 * this pass with a warning, counted in errors, and tried again on the
 * next pass; the pass goes on with the other series.
 *
 * Recheck requests are planned ('planned', with runs.recheck_id set), or
 * 'ignored' with a reason when none of their contexts exists any more,
 * their rebase branch is not a branch of any of their contexts' trees,
 * the series was superseded, or the series never completed.  A request on
 * a complete series that has no run yet waits for the series' first run.
 *
 * The job specification (jobs.spec) is lib/jobspec.h: its one
 * definition, which the agent reads with the same names.
 *
 * Baselines (DESIGN.md section 2.9).  A baseline run measures one commit
 * of a branch by itself: runs.reason 'baseline', no series, runs.trigger
 * saying why; its jobs (one per build mode of each context that tests the
 * tree) run one build as both sides, interleaved as a patch job is, so
 * that one job gives the commit's numbers and the host's paired (A/A)
 * noise.  No check and no mail: nobody waits for a baseline.  Its jobs
 * are queued at PLANNER_PRIORITY_BASELINE, below every series' jobs.
 * planner_baseline() plans one (the CLI, a bisection);
 * planner_baselines_due() plans the scheduled ones: for each context,
 * each tree of the context and each branch of the tree, a baseline of the
 * branch head when the head is not the commit of the latest baseline of
 * that (context, tree, branch) ("head"), or when that baseline is older
 * than the interval ("interval"); never while a job of that context on a
 * baseline of that tree and branch is queued, leased or running (at most
 * one waiting per (context, branch)).  The due contexts of a (tree,
 * branch) share one run.
 */

#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "jobspec.h"
#include "profile.h"
#include "store.h"

#define PLANNER_SPEC_FORMAT JOBSPEC_FORMAT_VERSION
/* Every series' jobs start at PLANNER_PRIORITY_SERIES, above baselines
 * (PLANNER_PRIORITY_BASELINE, and a baseline's follow-up one above it),
 * which the scheduler takes only when no series' job waits for the host
 * (rule 1 of sched.h); rechecks and one-patch series add theirs. */
#define PLANNER_PRIORITY_SERIES 10
#define PLANNER_PRIORITY_BASELINE 0
#define PLANNER_PRIORITY_RECHECK 20
#define PLANNER_PRIORITY_SMALL 10
#define PLANNER_PENDING_TEXT "Performance Testing pending"
/* How long a series waits for a Depends-on that is missing or incomplete,
 * counted from its completion. */
#define PLANNER_DEP_TIMEOUT_DEFAULT_S (24 * 60 * 60)
/* Dependencies followed per series, transitively; more are a note. */
#define PLANNER_MAX_DEPS 32

struct planner_stats {
	unsigned long series_planned;	/* new series that got their runs */
	unsigned long runs_created;
	unsigned long jobs_created;
	unsigned long checks_queued;	/* pending rows put in check_outbox */
	unsigned long rechecks_planned;
	unsigned long rechecks_ignored;
	unsigned long series_waiting;	/* series and rechecks held by Depends-on */
	unsigned long deps_resolved;	/* unknown dependencies found this pass */
	unsigned long deps_missing;	/* dependencies given up on (planned without) */
	unsigned long jobs_cancelled;	/* by supersession */
	unsigned long trees_synced;
	unsigned long baselines_planned;	/* baseline runs */
	unsigned long bisect_runs;		/* of them, inside a change point's range */
	unsigned long changes_located;		/* change points bisected to one commit */
	unsigned long changes_dismissed;	/* ... or called noise, or given up */
	unsigned long errors;		/* series or requests skipped, retried next pass */
};

struct planner {
	/* Set by the caller (planner_init() sets the rest to defaults). */
	struct store *st;
	const struct profile_set *ps;
	const char *mirror_root;	/* tree mirrors: ROOT/NAME.git */
	const char *public_url;		/* the controller as agents reach it, e.g.
					 * "https://ci.example.org" (a trailing '/'
					 * is ignored) */
	int64_t dep_timeout_s;		/* PLANNER_DEP_TIMEOUT_DEFAULT_S */
	unsigned int sync_timeout_ms;	/* per tree sync; 0: the trees.h default */
	int64_t now_s;			/* 0: the wall clock (tests pin it) */

	/* Counts of the last pass (planner_run() resets them first). */
	struct planner_stats stats;
};

/* Fill pl with the four required values and defaults for the rest.  The
 * pointers are borrowed and must outlive the planner's use. */
void planner_init(struct planner *pl, struct store *st, const struct profile_set *ps,
		  const char *mirror_root, const char *public_url);

/*
 * One pass, as described above.  pl->stats holds its counts afterwards.
 * A series or request that cannot be planned (tree, store or profile
 * trouble) is logged, counted in stats.errors and left for the next pass:
 * that is not a failure of the pass.  Returns 0, or -1 with err set when
 * the pass itself could not run (the store failed while listing work or
 * cancelling superseded jobs); what was committed before stays.
 */
int planner_run(struct planner *pl, struct pg_err *err);

/*
 * Step 1 of a pass on its own: cancel the queued, leased and running jobs
 * of every superseded series, in one transaction, adding to
 * pl->stats.jobs_cancelled.  Returns 0 or -1 (nothing changed then).
 */
int planner_cancel_superseded(struct planner *pl, struct pg_err *err);

struct planner_baseline_req {
	const char *tree;	/* a tree of the profile set */
	const char *branch;	/* one of its branches */
	const char *commit;	/* 40 hex digits in the tree's mirror; NULL: the
				 * branch head */
	const char *context;	/* NULL: every context whose trees include tree */
	const char *trigger;	/* "head", "interval", "manual" or "bisect" */
	const char *build_mode;	/* NULL: every build mode of the contexts */
	const char *pin_agent;	/* NULL: any agent of the host class; else the
				 * jobs are pinned to that agent */
};

/*
 * Plan one baseline run of rq (see "Baselines" above) in one transaction,
 * after syncing the tree.  A context that has a baseline job of this tree
 * and branch waiting (queued, leased, running) is left out, unless the
 * trigger is "bisect" (a bisection's commit is not the head's).  Returns 0
 * with *run_id (0 when no context was left to plan), or -1 with err:
 * PG_ENOTFOUND for an unknown tree, branch, context, build mode, agent or
 * commit, PG_EINVAL for a context that does not test the tree, or a tree
 * or store error.
 */
int planner_baseline(struct planner *pl, const struct planner_baseline_req *rq,
		     int64_t *run_id, struct pg_err *err);

/*
 * The scheduled baselines (see "Baselines" above), interval_s seconds at
 * least between two of one (context, tree, branch) whose head did not
 * move.  A tree that cannot be synced is skipped with a warning and
 * counted in stats.errors.  Adds to pl->stats (baselines_planned).
 * Returns 0, or -1 when the store failed.
 */
int planner_baselines_due(struct planner *pl, int64_t interval_s, struct pg_err *err);

/*
 * Bisection (DESIGN.md section 2.9).  Each change point still 'suspected'
 * (changes.h) is taken one step further, by the rule of bisect.h: the
 * levels either side (the medians of up to 10 measured commits each, and
 * their noise); the range's ends checked, the commits inside it already
 * measured on its host (by a baseline or a series' base side) placed,
 * oldest first, at the level they are nearer to (log scale) when they are
 * clearly nearer, and measured again when they sit in the middle zone
 * (the value of a commit is the median of its values); the range ends at
 * the first one at the new level.  When commits are left inside it and no
 * baseline of it waits, a baseline of the commit the step names is
 * planned (the middle one, or one to measure again; trigger "bisect", the
 * change point's context and build mode only, pinned to its host).  An
 * end found at the other level widens the range by one measured commit
 * (the search put the change one measured commit off).  It ends located
 * at one commit ('confirmed', told once in the log and by alerted_at), or
 * dismissed: the two levels no longer differ (Mann-Whitney p >=
 * VERDICT_CP_ALPHA once 10 commits after the range are measured; before
 * that it waits), its commits left the branch or the history, its range
 * cannot widen, its context or host is gone, or PLANNER_BISECT_MAX_RUNS
 * baselines did not get there.  Each change is its own transaction; a
 * baseline planned just before a crash may be planned again.  Adds to
 * pl->stats.  Returns 0, or -1 when the store failed (a change point that
 * cannot move now is counted in stats.errors and tried again).
 *
 * Simulated (bench/changes_sim.c: 1,000 histories of 500 commits per
 * cell, seeds 17 and 99, pushes of 1-20 commits, lognormal noise, the
 * search's 1 % minimum change): a step of 3 times the noise (1.5 % at
 * 0.5 % noise ... 15 % at 5 %) is found and located at its commit in
 * 96-97 % of histories with 11.1-12.0 bisection baselines on average (32
 * at most); a step of 5 times the noise in 99.6-100 % with 5.9-6.2, of 10
 * times or more in 99.9-100 % with 3.7-3.8.  With at most 16 baselines,
 * a zone of 1.5 and 4 values a commit (the rule before) the 3x steps were
 * located in 89-93 % with 8.2-8.6; one nearest-level decision per
 * measured commit, the rule before that, in 57-66 % with 3.6-3.7.  A
 * located regression is worth the baselines: a dismissed one is a
 * regression nobody is told about.
 */
#define PLANNER_BISECT_MAX_RUNS 32
int planner_bisect_pass(struct planner *pl, struct pg_err *err);

/* Append one line of counts ("runs=2 jobs=6 ...") to out.  Returns 0 or
 * -1 (out's cap). */
int planner_stats_print(const struct planner_stats *s, struct pg_buf *out);

#endif
