/* SPDX-License-Identifier: MIT */
#ifndef CTL_SCHED_H
#define CTL_SCHED_H

/*
 * The scheduler core: agents, leases, heartbeats, results, expiry and
 * cancellation as state transitions over the store (DESIGN.md sections
 * 2.4 and 3).  It is the only writer of agents, runs, jobs, attempts,
 * results and samples: the planner creates runs and jobs, the verdict
 * pass moves jobs between rounds, ctl enables agents, all through the
 * functions below ("Runs and rounds").  No threads, no HTTP, no clock: every function takes the
 * time as `now` (integer seconds since the epoch) from its caller, so the
 * tests drive the clock.  Each function that changes state does it in ONE
 * transaction of its own (store_begin() .. store_commit(), rolled back on
 * any failure), so the caller must not have one open; the *_tx variants
 * are the exception and say so.
 *
 * The job life cycle (jobs.state):
 *
 *   queued --lease--> leased --heartbeat--> running --result--> done
 *     ^                  |                     |
 *     +---- expiry, or an agent-reported infra-error, while
 *           attempt < max_attempts; at the limit: infra-error
 *   queued, leased, running --cancel--> cancelled
 *   done --follow-up (verdict_pass.h)--> queued, pinned to its agent
 *
 * Every lease is one attempt (a row of `attempts`, numbered from 1); an
 * attempt ends with the result's outcome, 'expired' or 'cancelled'.
 * jobs.agent_id is the agent of the current attempt (NULL while queued);
 * the unique index jobs_one_per_agent backs the one-job-per-host rule.
 *
 * Holding a job back: a queued job with jobs.priority < 0
 * (SCHED_PRIORITY_HELD) is never leased; setting it to 0 or more releases
 * it.  This is the hook for a run planned before something it waits for
 * is there (planner.h instead plans a series only once its Depends-on
 * prerequisites are, so it does not need it today); no other column is
 * involved, so the schema is unchanged.
 *
 * Pinned jobs.  A job whose jobs.pin_agent_id is set (a follow-up round
 * that must run on the host of its earlier rounds, verdict_pass.h) is
 * leased to that agent only.  The verdict pass queues a follow-up one
 * priority above its job's own, so that it goes before the other work of
 * that priority (rule 1): it finishes work already begun on that host.
 *
 * Fairness.  Among the queued jobs an agent can take (not held, not
 * pinned to another agent, and the labels of the job's host class, from
 * the profile set, all present on the agent with the same values:
 * profile_host_class_matches()), the lease goes to the first job in this
 * order:
 *
 *   1. higher jobs.priority first (set by the planner: planner.h gives
 *      rechecks and one-patch series a higher one, which makes them
 *      strictly first; an admin may set others; 0 by default);
 *   2. less served first: served(j) is the number of leases ever given
 *      to jobs of j's run with j's host class (the sum of their
 *      jobs.attempt, which grows by one with every lease and never goes
 *      down; kept in jobs.served by triggers, schema step 4);
 *   3. boosted first: the run is a recheck (runs.reason = 'recheck') or
 *      its series has one patch (series.total = 1);
 *   4. older first: jobs.created_at, then jobs.id.
 *
 * What this guarantees, among jobs of equal priority: a lease that a job
 * J of run R could have taken went to a job of a run X with
 * served_X < served_R, or served_X = served_R and X first by rules 3
 * and 4.  Each lease raises served_X by exactly one, so while J is the
 * first queued job of R (whose served_R does not move while no job of R
 * is leased), a competing run X takes at most served_R - served_X + 1 of
 * those leases; how many jobs X has queued never counts.  In particular a
 * recheck or a one-patch series none of whose jobs of that host class has
 * been leased yet (served 0) gets the very next lease of an agent that
 * can take it, however many jobs an older series has queued, unless an
 * older run that is boosted and also unserved waits for the same agents
 * (the tests check exactly this).  When nothing competes, the order is
 * plain oldest first.
 *
 * Late work.  A lease expires only when sched_expire() sweeps it; until
 * then its holder may still renew it.  After the sweep requeued a job (or
 * gave up on it as infra-error), the holder of the expired attempt may
 * still:
 *   - renew it with a heartbeat, as long as nobody leased the job since:
 *     the attempt is reopened and the job is running again (a controller
 *     that was down longer than a lease does not throw away the work its
 *     agents kept doing);
 *   - deliver its result, under the same condition: it is recorded as if
 *     on time (the work was done), and the attempt's outcome replaces
 *     'expired'.
 * Once the job was leased again, both answer PG_ECONFLICT and the new
 * attempt owns the job: a job has at most one attempt that can end it.
 * The caller sweeps every few seconds; after a restart it should hold the
 * first sweep back for one lease time, so that agents that kept working
 * renew their leases before any expires (the above recovers the work
 * either way, but the sweep would record expiries that were the
 * controller's fault, not the agents').
 *
 * Times: `now` and every stored time are seconds since the epoch, never
 * negative.  Ids are row ids (> 0).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "profile.h"
#include "store.h"

/* A queued job with a priority below 0 is held back (see above). */
#define SCHED_PRIORITY_HELD (-1)

/* Bounds on what callers (agents, through the API) may hand in. */
#define SCHED_NAME_MAX 64		/* agent names, label keys */
#define SCHED_LABEL_VALUE_MAX 255
#define SCHED_MAX_LABELS PROFILE_MAX_ITEMS
#define SCHED_STAGE_MAX 64
#define SCHED_TEXT_MAX (64 * 1024)	/* result detail, cancel reason */
#define SCHED_FACTS_MAX (64 * 1024)	/* agent facts JSON */
#define SCHED_FINGERPRINT_MAX (64 * 1024)
#define SCHED_MAX_SAMPLES 100000
#define SCHED_SAMPLE_NAME_MAX 255	/* benchmark, metric, unit */
#define SCHED_REPETITION_MAX 1000000	/* a sample's repetition number (the spec's
					 * repetitions are bounded alike) */
#define SCHED_HASH_MIN 32		/* hex digits of a token hash or digest */
#define SCHED_HASH_MAX 128
#define SCHED_MAX_ATTEMPTS 100		/* the most max_attempts may be */
#define SCHED_LEASE_MAX_S 86400		/* the longest lease */

/* Agent labels as parallel arrays: keys[i]=values[i], i < n.  Keys are
 * [A-Za-z0-9_.-]+ of at most SCHED_NAME_MAX bytes and do not repeat;
 * values are 1..SCHED_LABEL_VALUE_MAX bytes without control characters.
 * They are stored as a JSON object in agents.labels. */
struct sched_labels {
	const char *const *keys;
	const char *const *values;
	size_t n;
};

/* An agent as the API needs it after authentication. */
struct sched_agent {
	int64_t id;
	char name[SCHED_NAME_MAX + 1];
	bool enabled;
	int64_t last_seen;		/* 0 when never seen */
};

/*
 * Register an agent.  name is [A-Za-z0-9_.-]+, at most SCHED_NAME_MAX
 * bytes, unique.  token_hash_hex is the hex digest of its token (the
 * caller hashes; SCHED_HASH_MIN..SCHED_HASH_MAX hex digits, either case,
 * stored in lower case); NULL registers a host driven over SSH, which has
 * no token.  labels may be NULL (none).
 *
 * Returns 0 and sets *agent_id, or -1: PG_EINVAL for bad input,
 * PG_ECONFLICT when the name or the token hash is taken, or a store error.
 */
int sched_agent_add(struct store *st, const char *name, const struct sched_labels *labels,
		    const char *token_hash_hex, int64_t now, int64_t *agent_id,
		    struct pg_err *err);

/*
 * The agent row of a host driven over SSH (controller/ssh_disp.h), named
 * name: created (transport 'ssh') when missing, and in either case given
 * token_hash_hex, the hash of the token its dispatcher made at this start
 * (it leases through the API like a daemon).  Returns 0 and sets
 * *agent_id, or -1: PG_ECONFLICT when an agent of that name runs a daemon
 * (transport 'http'), PG_EINVAL, a store error.
 */
int sched_agent_ssh(struct store *st, const char *name, const char *token_hash_hex,
		    int64_t now, int64_t *agent_id, struct pg_err *err);

/*
 * What an agent reports at start-up: its labels (replacing the stored
 * ones; NULL keeps them) and its host facts (a JSON object of at most
 * SCHED_FACTS_MAX bytes, stored compact; NULL keeps them).  Also marks it
 * seen at `now`.  A job the agent holds is not affected.
 *
 * Returns 0, or -1: PG_EINVAL, PG_ENOTFOUND (no such agent), store error.
 */
int sched_agent_update(struct store *st, int64_t agent_id, const struct sched_labels *labels,
		       const char *facts_json, int64_t now, struct pg_err *err);

/*
 * Find the agent whose token hash is token_hash_hex (an indexed equality
 * lookup: comparing the presented token's hash in constant time is the
 * caller's business).  Disabled agents are found too (out->enabled says
 * so).  Returns 1 and fills *out, 0 when no agent has that hash, or -1
 * (PG_EINVAL for a malformed hash, store error).
 */
int sched_agent_by_token(struct store *st, const char *token_hash_hex,
			 struct sched_agent *out, struct pg_err *err);

/*
 * Note that the agent was seen at `now` (every authenticated request).
 * One UPDATE, which writes only when `now` is later than the stored time:
 * in autocommit, or part of the caller's transaction when one is open.  An unknown agent is not an error (nothing to note).
 * Returns 0 or -1.
 */
int sched_agent_seen(struct store *st, int64_t agent_id, int64_t now, struct pg_err *err);

/* A job handed to an agent.  Release with sched_lease_release(). */
struct sched_lease {
	int64_t job_id;			/* 0 when no job was leased */
	int64_t attempt;		/* 1 for the first lease */
	int64_t lease_expires;		/* now + lease_s */
	int64_t run_id;
	int64_t series_id;
	char context[PROFILE_CONTEXT_NAME_MAX + 1];
	char host_class[PROFILE_NAME_MAX + 1];
	char build_mode[PROFILE_NAME_MAX + 1];
	char *spec;			/* jobs.spec, JSON text, malloc'd */
	int64_t held_job_id;		/* when 0 is returned because the agent
					 * already holds a job: that job */
};

/*
 * Lease the first eligible job (see "Fairness" above) to agent agent_id,
 * whose stored labels are matched against the host classes of ps.
 *
 * Returns 1 with *out filled: the job is now 'leased' at attempt + 1 to
 * this agent until now + lease_s (1..SCHED_LEASE_MAX_S), with
 * jobs.started_at = now and a new attempts row.  Returns 0 with *out
 * cleared when nothing was leased: no eligible job, a disabled agent, or
 * the agent already holds a job in state leased or running (one job per
 * host: out->held_job_id names it; the lease comes back when that job
 * ends, expires or is cancelled).  Returns -1 with *out cleared on error:
 * PG_EINVAL, PG_ENOTFOUND (no such agent), a store error.
 *
 * Jobs whose host class is not in ps are never leased.
 */
int sched_lease(struct store *st, int64_t agent_id, const struct profile_set *ps,
		int64_t now, int64_t lease_s, struct sched_lease *out, struct pg_err *err);

/* Free what sched_lease() allocated and clear *l.  NULL-safe; safe to call
 * twice. */
void sched_lease_release(struct sched_lease *l);

/*
 * A heartbeat from agent agent_id for attempt `attempt` of job job_id.
 * stage is the agent's current stage (1..SCHED_STAGE_MAX bytes, no control
 * characters; NULL keeps the stored one; stage_at moves only when the
 * stage changes); progress is 0..100, or -1 for unknown (stored as NULL).
 *
 * For the agent holding that attempt of a leased or running job: the
 * lease is renewed to now + lease_s, the job becomes 'running', and
 * *cancel is false.  For a job cancelled during that attempt: *cancel is
 * true and nothing changes (no renewal; the agent must stop).  For the
 * holder of an expired attempt that nobody leased since (the job is
 * queued, or infra-error by that expiry): the lease is taken back as
 * described in "Late work" above.
 *
 * Returns 0, or -1: PG_ENOTFOUND "no such job", PG_ECONFLICT when the
 * attempt is not this agent's current one (another agent's, stale,
 * expired and leased again, or the job has finished), PG_EINVAL, or a
 * store error.
 */
int sched_heartbeat(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
		    const char *stage, int progress, int64_t now, int64_t lease_s,
		    bool *cancel, struct pg_err *err);

/* One measurement of a result. */
struct sched_sample {
	const char *side;		/* "base" or "patched" */
	const char *benchmark;		/* 1..SCHED_SAMPLE_NAME_MAX bytes */
	const char *metric;		/* 1..SCHED_SAMPLE_NAME_MAX bytes */
	int64_t repetition;		/* 0..SCHED_REPETITION_MAX; (side, benchmark, metric,
					 * repetition) unique per result */
	double value;			/* finite */
	const char *unit;		/* NULL for "" */
};

/* What an agent reports at the end of an attempt. */
struct sched_result_in {
	const char *outcome;		/* ok, apply-failure, base-build-failure,
					 * patched-build-failure, bench-failure,
					 * infra-error */
	const char *detail;		/* NULL or at most SCHED_TEXT_MAX bytes */
	const char *fingerprint_json;	/* a JSON object, or NULL for {} */
	const struct sched_sample *samples;
	size_t n_samples;		/* at most SCHED_MAX_SAMPLES */
	const char *digest_hex;		/* the caller's hash of the request
					 * body: tells a retried upload from a
					 * different one */
};

enum sched_result_status {
	SCHED_RESULT_FAILED = 0,	/* -1 was returned, not for a conflict */
	SCHED_RESULT_RECORDED,		/* stored; the job moved on */
	SCHED_RESULT_DUPLICATE,		/* this (job, attempt) already has a
					 * result with this digest: nothing
					 * changed */
	SCHED_RESULT_ACKNOWLEDGED,	/* the job was cancelled: the result is
					 * stored for the record, the job stays
					 * cancelled */
	SCHED_RESULT_CONFLICT,		/* refused, nothing changed (-1 with
					 * PG_ECONFLICT) */
};

/*
 * Record the result of attempt `attempt` of job job_id from agent
 * agent_id: a results row, its samples, the attempt's end and outcome,
 * and the job's new state.  Idempotent per (job, attempt):
 *
 *   - The first result of the job's current attempt, from the agent that
 *     holds it, while the job is leased or running: RECORDED.  The job
 *     becomes 'done' with the result's outcome, detail and finished_at =
 *     now; except for outcome 'infra-error' (the host failed, not the
 *     patch), which requeues the job like an expiry (agent_id cleared,
 *     the reason in outcome_detail) while attempt < max_attempts, and
 *     otherwise ends it as 'infra-error' with an outcome_detail that names
 *     every attempt.
 *   - The same, arriving after its lease expired and the job was requeued
 *     (or given up) but not leased again: RECORDED as above ("Late work").
 *   - The first result of a job cancelled during that attempt:
 *     ACKNOWLEDGED, so that the agent's spool empties; the results row and
 *     samples are kept for the record, the job stays cancelled.
 *   - A result for a (job, attempt) that already has one with the same
 *     digest: DUPLICATE, nothing changes (also for an older attempt, e.g.
 *     one that reported infra-error, whatever the job has done since).
 *   - A different digest for a (job, attempt) that has a result, an
 *     attempt of another agent, or an attempt that is not the job's
 *     current one (expired and leased again): -1 with PG_ECONFLICT and
 *     *status = SCHED_RESULT_CONFLICT; nothing changes.
 *
 * The verdict's samples are those of the job's current attempt, when the
 * job is 'done'.
 *
 * Returns 0 with *status set, or -1: the conflicts above, PG_ENOTFOUND
 * (no such job), PG_EINVAL (bad input: unknown outcome, a repeated sample
 * key, a fingerprint that is not a JSON object, ...; max_attempts is
 * 1..SCHED_MAX_ATTEMPTS), or a store error (*status SCHED_RESULT_FAILED).
 */
int sched_result(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
		 const struct sched_result_in *res, int64_t now, int64_t max_attempts,
		 enum sched_result_status *status, struct pg_err *err);

/*
 * Sweep expired leases: every leased or running job whose lease_expires
 * < now.  Its attempt ends with outcome 'expired' and the reason "lease
 * expired at 2026-11-30T04:30:00Z (no heartbeat from agent NAME)".  A job
 * whose attempt < max_attempts goes back to 'queued' (agent_id and lease
 * cleared, the reason in outcome_detail; its next lease is attempt + 1);
 * one that reached max_attempts (1..SCHED_MAX_ATTEMPTS) ends as
 * 'infra-error' with outcome 'infra-error', finished_at = now, and an
 * outcome_detail naming every attempt, its agent and how it ended.
 *
 * Returns 0 and the counts (either pointer may be NULL), or -1.
 */
int sched_expire(struct store *st, int64_t now, int64_t max_attempts,
		 int64_t *n_requeued, int64_t *n_failed, struct pg_err *err);

/* What a cancellation did. */
struct sched_cancel_count {
	int64_t queued;			/* queued jobs now cancelled */
	int64_t active;			/* leased or running jobs now cancelled:
					 * their next heartbeat answers cancel */
	int64_t run_id;			/* a job's cancel: the job's run */
};

/*
 * Cancel a job, every job of a run, or every job of every run of a series
 * (the planner, when a series is superseded).  Queued, leased and running
 * jobs become 'cancelled' with outcome_detail = reason (1..SCHED_TEXT_MAX
 * bytes) and finished_at = now; the open attempt of a leased or running
 * one ends with outcome 'cancelled', and the agent learns it from its next
 * heartbeat.  Jobs already done, cancelled or infra-error are left alone.
 * sched_cancel_run() and sched_cancel_series() also mark the runs that
 * are still planned or running as 'cancelled' (finished_at = now).
 *
 * Returns 0 with *count filled (may be NULL), or -1: PG_ENOTFOUND for an
 * unknown job, run or series, PG_EINVAL, or a store error.
 */
int sched_cancel_job(struct store *st, int64_t job_id, const char *reason, int64_t now,
		     struct sched_cancel_count *count, struct pg_err *err);
int sched_cancel_run(struct store *st, int64_t run_id, const char *reason, int64_t now,
		     struct sched_cancel_count *count, struct pg_err *err);
int sched_cancel_series(struct store *st, int64_t series_id, const char *reason, int64_t now,
			struct sched_cancel_count *count, struct pg_err *err);

/* sched_cancel_series() inside the caller's open transaction (the planner
 * supersedes a series and plans its successor in one transaction).  On
 * failure the caller rolls back. */
int sched_cancel_series_tx(struct store *st, int64_t series_id, const char *reason,
			   int64_t now, struct sched_cancel_count *count, struct pg_err *err);

/* sched_cancel_job() inside the caller's open transaction (an
 * administrator's cancel also settles the checks of a context it leaves
 * without a job: outbox_settle_cancelled_tx()).  On failure the caller
 * rolls back. */
int sched_cancel_job_tx(struct store *st, int64_t job_id, const char *reason, int64_t now,
			struct sched_cancel_count *count, struct pg_err *err);

/* ------------------------------------------------------------------ */
/* Runs and rounds (sched_plan.c), inside the caller's open transaction */

/*
 * This module is the only writer of runs, jobs, attempts, results, samples
 * and agents; the planner (planner.h) creates runs and jobs, the verdict
 * pass (verdict_pass.h) ends runs and moves jobs between rounds, the
 * control command enables agents, all through the functions below.  Each
 * runs in the caller's open transaction (the plan, the verdict and its
 * checks commit together); on -1 the caller rolls back.
 */

/* A run to create: a series (or a recheck of it) on one tree and branch,
 * at base commit base_commit (40 hex digits or a ref the agent resolves). */
struct sched_run_new {
	int64_t series_id;		/* 0 for a baseline (no series) */
	const char *reason;		/* "new", "recheck" or "baseline" */
	int64_t recheck_id;		/* 0: none */
	const char *tree, *branch, *base_commit;
	const char *trigger;		/* a baseline's only: "head", "interval",
					 * "manual" or "bisect" */
};

/* Create a run in state 'planned' at now; *run_id gets its id.  Returns
 * 0, or -1: PG_EINVAL for a missing field (a series for every reason but
 * "baseline", a trigger for it), or a store error. */
int sched_run_add_tx(struct store *st, const struct sched_run_new *r, int64_t now,
		     int64_t *run_id, struct pg_err *err);

/* Queue a job of run run_id: one context on one host class in one build
 * mode, with its spec (the JSON the agent leases, job_spec.h) and
 * priority (SCHED_PRIORITY_HELD and below: held).  *job_id (may be NULL)
 * gets its id.  Returns 0, or -1: PG_EINVAL, or a store error. */
int sched_job_add_tx(struct store *st, int64_t run_id, const char *context,
		     const char *host_class, const char *build_mode, const char *spec,
		     int64_t priority, int64_t now, int64_t *job_id, struct pg_err *err);

/* Pin queued job job_id to agent agent_id (leased to it only, sched.h
 * "Pinned jobs"): a bisection's baseline must run on the host whose
 * history it extends.  Returns 0, or -1: PG_ECONFLICT when the job is not
 * queued, or a store error. */
int sched_job_pin_tx(struct store *st, int64_t job_id, int64_t agent_id, struct pg_err *err);

/* The id of the agent named name: 1 found, 0 not, -1 a store error. */
int sched_agent_id(struct store *st, const char *name, int64_t *id, struct pg_err *err);

/* The fingerprint of job_id's latest ok result, parsed (*out NULL when it
 * has none or it is not JSON; cJSON_Delete() it).  Returns 0 or -1. */
int sched_job_fingerprint(struct store *st, int64_t job_id, cJSON **out, struct pg_err *err);

/* A planned or running run is done (every context decided): state 'done',
 * finished_at now.  *finished is whether it changed (a cancelled or
 * already done run is left alone).  Returns 0 or -1. */
int sched_run_finish_tx(struct store *st, int64_t run_id, int64_t now, bool *finished,
			struct pg_err *err);

/*
 * A done job goes back to the queue for its next round: state 'queued'
 * with the new spec, pinned to pin_agent_id (the host of its earlier
 * rounds), its lease, stage and outcome cleared, outcome_detail = detail
 * (why it waits, shown on the queue page), and one priority higher when
 * first_followup (sched.h: it goes before other work of its priority; a
 * later round keeps that priority).  Returns 0, or -1: PG_ECONFLICT when
 * the job is not done any more, PG_EINVAL, or a store error.
 */
int sched_job_requeue_pinned_tx(struct store *st, int64_t job_id, const char *spec,
				int64_t pin_agent_id, const char *detail, bool first_followup,
				struct pg_err *err);

/* A queued follow-up that waits in vain ends as it stands: state 'done'
 * with outcome (the outcome of its earlier rounds), outcome_detail why,
 * finished_at now, unpinned.  *changed: whether it was still queued.
 * Returns 0 or -1. */
int sched_job_give_up_tx(struct store *st, int64_t job_id, const char *outcome,
			 const char *why, int64_t now, bool *changed, struct pg_err *err);

/* Clear a job's pin (its follow-up rounds are over): job_id > 0; or, with
 * job_id 0, the pins of every cancelled job (a follow-up cancelled with
 * its run waits for nothing).  One statement: it needs no transaction.
 * Returns 0 or -1. */
int sched_job_unpin(struct store *st, int64_t job_id, struct pg_err *err);

/* Enable or disable the agent named name (one statement).  A disabled
 * agent's requests are refused and its lease expires.  Returns 0, or -1:
 * PG_ENOTFOUND for no such agent, or a store error. */
int sched_agent_enable(struct store *st, const char *name, bool enable, struct pg_err *err);

/*
 * sched_agent_update(), sched_lease(), sched_heartbeat() and
 * sched_result() inside the caller's open transaction: the same checks,
 * changes, results and errors, but no BEGIN and no COMMIT.  The API's
 * writer runs a batch of requests in one transaction, each under a
 * SAVEPOINT of its own, and answers them only after the COMMIT.  On -1
 * some of the changes may have been made: the caller rolls back (to its
 * savepoint).  What the other return values report (a lease, a renewal, a
 * recorded result) holds only once the caller has committed.  Calls in one
 * transaction see each other's changes: two leases in one transaction
 * never hand out the same job, and one agent never gets two.
 */
int sched_agent_update_tx(struct store *st, int64_t agent_id, const struct sched_labels *labels,
			  const char *facts_json, int64_t now, struct pg_err *err);
int sched_lease_tx(struct store *st, int64_t agent_id, const struct profile_set *ps,
		   int64_t now, int64_t lease_s, struct sched_lease *out, struct pg_err *err);
int sched_heartbeat_tx(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
		       const char *stage, int progress, int64_t now, int64_t lease_s,
		       bool *cancel, struct pg_err *err);
int sched_result_tx(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
		    const struct sched_result_in *res, int64_t now, int64_t max_attempts,
		    enum sched_result_status *status, struct pg_err *err);

/*
 * The host classes of ps that an agent with the stored labels (a JSON
 * object) belongs to, as ",a,b," appended to classes ("" for none).
 * Returns 0, or -1 with err (labels that are not an object of strings).
 */
int sched_agent_classes(const char *labels_json, const struct profile_set *ps,
			struct pg_buf *classes, struct pg_err *err);

/* The agents that could take a job of one host class (the dashboard's
 * "why is it waiting"). */
struct sched_class_agents {
	int enabled;			/* enabled agents whose labels match */
	int online;			/* of those, seen within the window */
	int busy;			/* of those online, holding a job */
};

/* Count them (read-only, no transaction).  Returns 0 or -1. */
int sched_class_agents(struct store *st, const struct profile_set *ps, const char *host_class,
		       int64_t now, int64_t online_window_s, struct sched_class_agents *out,
		       struct pg_err *err);

/* Queue and agent figures for /metrics and the dashboard. */
struct sched_stats {
	int64_t queued;			/* all queued jobs, held ones included */
	int64_t held;			/* queued with priority < 0 */
	int64_t leased;
	int64_t running;
	int64_t done;
	int64_t cancelled;
	int64_t infra_error;
	int64_t agents;			/* registered */
	int64_t agents_enabled;
	int64_t agents_online;		/* enabled, seen within the window */
	int64_t agents_busy;		/* holding a leased or running job */
};

/*
 * Count jobs per state and agents; an agent is online when enabled and
 * last seen at or after now - online_window_s (>= 0).  Read-only, no
 * transaction.  Returns 0 with *out filled, or -1.
 */
int sched_queue_stats(struct store *st, int64_t now, int64_t online_window_s,
		      struct sched_stats *out, struct pg_err *err);

#endif
