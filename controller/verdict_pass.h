/* SPDX-License-Identifier: MIT */
#ifndef CTL_VERDICT_PASS_H
#define CTL_VERDICT_PASS_H

/*
 * The verdict pass: finished jobs get their verdicts, contexts their final
 * checks and report mails, and main branches their history (DESIGN.md
 * sections 2.6 and 2.7).  The rules of a verdict are verdict.h's; this
 * module reads the store, applies them and writes what they decide.  The
 * daemon runs a pass every VERDICT_PASS_TICK_MS; `perfgate-controller
 * verdicts` runs one.
 *
 * Ownership: the verdict pass is the only writer of verdicts (and, through
 * verdict_history.c, of history and change_points).  What it changes of
 * jobs and runs (a follow-up round queued, a follow-up given up, a run
 * done) goes through sched.h, its checks and mails through outbox.h.
 *
 * A pass, in order (after clearing the pin of follow-ups cancelled with
 * their run):
 *
 *  1. Follow-ups that wait in vain.  A queued follow-up pinned to an agent
 *     that is disabled, has not been seen for pin_wait_s, or has not taken
 *     it within pin_max_wait_s of the end of its last attempt, is given up:
 *     the job ends 'done' with its earlier rounds' outcome, a detail saying
 *     why, and is decided at once as in 2, at the cap (so an inconclusive
 *     key is a warning, "inconclusive at the cap").
 *  2. Jobs.  Every job that ended (state 'done', or 'infra-error' after the
 *     scheduler's retries) in a run still open (planned or running) and
 *     that has no job verdict yet, oldest first, each in ONE transaction:
 *     - its rounds are the results whose outcome is not infra-error, in
 *       attempt order: the first run of the job, then its follow-ups.  The
 *       host is the agent of the first round; the samples are those of
 *       every round with outcome ok or bench-failure; repetitions so far
 *       are the spec's repetition_base + repetitions when the last round
 *       completed, repetition_base when a follow-up failed (infra-error
 *       after its retries, another outcome, or given up: then the job is
 *       judged at the cap);
 *     - every (benchmark, metric) is a key: gated when the spec's gate
 *       patterns of its benchmark match (profile_gate_matches()), higher
 *       is better per profile_key_higher_is_better(); verdict_key_eval()
 *       and verdict_job_eval() with the spec's threshold_pct, alpha,
 *       noise_limit_pct, repetitions so far and max_repetitions (the
 *       context's in the profile, then verdict.h's defaults, for a spec
 *       without them);
 *     - pending (more repetitions): the job is queued again as a FOLLOW-UP
 *       (state 'queued', its outcome cleared, outcome_detail saying why),
 *       pinned to the host's agent (jobs.pin_agent_id: the scheduler
 *       leases it to that agent only, which has the same build directories),
 *       one priority above the job's own (so that the agent takes it before
 *       other work of that priority), with its spec's "round" + 1,
 *       "repetition_base" = repetitions so far, "repetitions" = the verdict's
 *       more_repetitions and "pin_agent" = the host (planner.h).  Its next
 *       lease is the next attempt.  Nothing else is written.  When the
 *       agent cannot take it (disabled, or gone from the store) the job is
 *       judged at the cap instead;
 *     - final: one verdict row per key (state 'pass' for verdict.h's
 *       no-change, else the class name; a 'missing' key has no row: the
 *       job's row names it when it matters), one job row (benchmark and
 *       metric NULL: success, warning or fail, the summary as description,
 *       effect and p of the key the summary names, n_base = n_patched =
 *       repetitions so far), the pin cleared, the history (below), and, when
 *       every job of its (run, context) that is not cancelled now has its
 *       verdict, step 3 for that context.
 *  3. Contexts.  verdict_context_eval() over the context's jobs (each
 *     evaluated again from the store, as final) gives one aggregate row
 *     (job_id NULL) with Patchwork's state and description; in the same
 *     transaction outbox_queue_check_tx() queues the final check (on the
 *     patches of the pending one) and outbox_queue_mail_tx() the report
 *     mail (when mail is enabled), whose table is verdict_table_text() of
 *     each job's keys under a line naming its build mode, host and state,
 *     and whose reproduce text gives the commands (clone, checkout of the
 *     base, the mboxes through git am, meson setup with the job's options,
 *     ninja, each benchmark's command line).  The run becomes 'done'
 *     (finished_at now) when every context of it that has a job that is
 *     not cancelled has its aggregate row.  A context left undecided by a
 *     job cancelled after the others were decided is picked up here too.
 *
 * History.  With a job's final verdict, each key with base samples gets a
 * history row (host, tree, branch, build mode, benchmark, metric, the run's
 * base commit, the base side's median over every round, its count, the
 * unit, the latest round's arrival as measured_at); the unique (job,
 * benchmark, metric) index keeps it once per job.  On the tree's main
 * branch (its default_branch in the profiles, "main" for a tree the
 * profiles no longer have) the series of that (host, tree, branch, build
 * mode, key) is then searched for a change point (changepoint.h): one value
 * per base commit (the median of its rows), commits in the order they were
 * first measured, from the commit after the last change point recorded for
 * the series, the latest CP_MAX_POINTS of them; a change of at least the
 * job's threshold_pct, or of CP_MAIN_MIN_CHANGE_PCT when smaller
 * (cp_main_min_change()), with p < VERDICT_CP_ALPHA, judged with
 * VERDICT_CP_MIN_POINTS commits on each side, is recorded in change_points
 * (state 'suspected', commit_before and commit_after the commits around it,
 * effect the change in percent signed so that negative is worse, p) once
 * (its UNIQUE index).  A negative effect is a suspected main-branch
 * regression.
 *
 * Idempotence and crash safety.  Every decision re-reads its job inside its
 * transaction and commits with everything it implies (verdict rows, the
 * requeue, history, change points, the context's row, check, mail and the
 * run's state), so a pass that dies leaves nothing half-decided, and a
 * second pass, or a `verdicts` command beside the daemon, decides nothing
 * twice.  A job that cannot be decided (a spec that cannot be read, the
 * store busy) is logged, counted in errors and tried again next pass.
 */

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "ctl_config.h"
#include "err.h"
#include "profile.h"
#include "store.h"

/* How often the daemon runs a pass. */
#define VERDICT_PASS_TICK_MS 2000
/* Defaults of the follow-up waits (see step 1). */
#define VERDICT_PIN_WAIT_S 900
#define VERDICT_PIN_MAX_WAIT_S (24 * 60 * 60)
/* The change-point search (changepoint.h); the minimum change is
 * cp_main_min_change() of the job's threshold_pct. */
#define VERDICT_CP_MIN_POINTS 5
#define VERDICT_CP_ALPHA 0.01

/* Times a job is measured again because its base side lay outside the
 * host's own baselines of the commit (drift_base_disturbed()). */
#define VERDICT_MAX_RERUNS 1

struct verdict_pass_stats {
	unsigned long jobs_decided;	/* job verdicts stored */
	unsigned long followups;	/* jobs queued again for more repetitions */
	unsigned long given_up;		/* follow-ups given up (step 1) */
	unsigned long contexts_decided;	/* aggregate rows, each with its check */
	unsigned long runs_done;
	unsigned long checks_queued;	/* check_outbox rows */
	unsigned long mails_queued;
	unsigned long history_rows;
	unsigned long change_points;
	unsigned long errors;		/* jobs or contexts left for the next pass */
};

struct verdict_pass {
	/* Set by the caller (verdict_pass_init() sets the rest to defaults).
	 * Pointers are borrowed. */
	struct store *st;
	const struct profile_set *ps;	/* post_to, main branches, spec fallbacks */
	const struct ctl_mail *mail;	/* NULL or not enabled: no mails */
	/* The planner's tree mirrors (ROOT/NAME.git): change points are
	 * searched in first-parent order; NULL: in the order measured. */
	const char *mirror_root;
	int64_t run_id;			/* 0: every run; else only this one */
	int64_t now_s;			/* 0: the wall clock (tests pin it) */
	int64_t pin_wait_s;		/* VERDICT_PIN_WAIT_S */
	int64_t pin_max_wait_s;		/* VERDICT_PIN_MAX_WAIT_S */
	/* A baseline that shows its host drifting (drift.h) drains it
	 * instead of only flagging it (baseline.drain_on_drift). */
	bool drain_on_drift;
	/* When not NULL, one line per decision is appended ("job 7 (run 3,
	 * ctx, release on lab-1): fail: ..."), as the `verdicts` command
	 * prints them; every decision is logged either way. */
	struct pg_buf *report;

	/* Counts of the last pass (verdict_pass_run() resets them first). */
	struct verdict_pass_stats stats;
};

void verdict_pass_init(struct verdict_pass *vp, struct store *st, const struct profile_set *ps);

/*
 * One pass, as described above.  vp->stats holds its counts afterwards.
 * Returns 0, or -1 with err set when the pass itself could not run (the
 * store failed while listing the work); a job or context that could not be
 * decided is only counted in stats.errors (and logged).
 */
int verdict_pass_run(struct verdict_pass *vp, struct pg_err *err);

/* Append the counts as one line ("jobs=2 followups=1 ...") to out.
 * Returns 0 or -1 (out's cap). */
int verdict_pass_stats_print(const struct verdict_pass_stats *s, struct pg_buf *out);

/*
 * What `run show ID` prints: the run (series, tree, branch, base, state),
 * each context's aggregate verdict (or "undecided"), and for each job its
 * state, host, rounds, stored verdict and the before/after table of its
 * samples so far (evaluated as the pass does), then the commands that
 * reproduce each job.  Read-only.  Returns 0, or -1 with PG_ENOTFOUND for
 * no such run, or another error.
 */
int verdict_run_show(struct store *st, const struct profile_set *ps, int64_t run_id,
		     struct pg_buf *out, struct pg_err *err);

/*
 * One job's verdict as JSON (the dashboard's series page; web/CONTRACT.md,
 * GET /api/v1/jobs/ID/verdict), evaluated as `run show` does:
 *   {"host", "final" (its job verdict is stored), "state" (success,
 *    warning, pending, fail), "why", "summary", "repetitions" (runs per
 *    side so far), "max_repetitions", "params" {"threshold_pct", "alpha",
 *    "noise_limit_pct"}, "reproduce" (shell commands), "verdict" (the
 *    stored row {"state", "description"} or null), "rounds" [{"attempt",
 *    "agent", "outcome", "received_at", "first_repetition", "followup"}],
 *    "keys" [{"benchmark", "metric", "unit", "gated", "higher_is_better",
 *    "class", "state" (the verdict table's name, null when missing),
 *    "base_median", "patched_median", "delta", "change_pct", "effect_pct",
 *    "ci_lo_pct", "ci_hi_pct", "ci_conf", "p", "p_exact", "p_min",
 *    "n_base", "n_patched", "n_pairs", "paired", "noise_pct", "reason",
 *    "samples" {"base": [[attempt, repetition, value]...], "patched"}}]}
 * Numbers that are undefined (NaN) are null; verdict.h says what each
 * means.  Returns 0 with *out set, or -1 (PG_ENOTFOUND: no such job).
 */
int verdict_job_json(struct store *st, const struct profile_set *ps, int64_t job_id,
		     cJSON **out, struct pg_err *err);

#endif
