/* SPDX-License-Identifier: MIT */
#ifndef CTL_API_VIEW_H
#define CTL_API_VIEW_H

/*
 * What the store holds, as JSON: the one rendering of series, runs, jobs
 * and agents, shared by the command line (`series list|show --json`,
 * `agent list --json`) and the API's read endpoints, so that both always
 * say the same.  Read-only queries; no transaction is needed (each query
 * sees one snapshot under WAL).
 *
 * Every function returns 0 with *out set (the caller frees it with
 * cJSON_Delete), or -1 with *out NULL and err set: PG_ENOTFOUND for an
 * unknown id ("no series 12"), PG_ENOMEM, or a store error.
 *
 * Times are integer seconds since the epoch (UTC) unless a field says it
 * is a date ("date": "2026-11-30T04:30:00Z").
 */

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "profile.h"
#include "store.h"

/* Which series a list shows.  Every member may be NULL (no filter). */
struct api_series_filter {
	const char *state;		/* "stale": incomplete series reported as
					 * never completed */
	const char *submitter;		/* a part of the name or address, any case */
	const char *context;		/* with a check in that context */
	const char *tree;		/* with a run on that tree */
	const char *q;			/* a part of the title or the submitter,
					 * any case, or a Message-ID of the
					 * series (with or without <>) */
	bool newest;			/* newest first (else oldest first) */
	bool checks;			/* add each series' "checks" */
};

/*
 * Series, oldest first (or newest), as an array of objects:
 *   {"id", "state", "stale", "version", "total", "received", "title",
 *    "submitter_name", "submitter", "date", "tags", "rfc", "supersedes",
 *    "superseded_by", "patchwork_series", "base_commit", "root_msgid",
 *    "cover_msgid"}
 * and with f->checks "checks": [{"context", "state", "description",
 * "run"}], the latest check of each context.  f may be NULL (all series,
 * oldest first); limit < 0 means no limit.
 */
int api_view_series_list(struct store *st, const struct api_series_filter *f, int64_t limit,
			 int64_t offset, cJSON **out, struct pg_err *err);

/* How many series api_view_series_list() would list without a limit. */
int api_view_series_count(struct store *st, const struct api_series_filter *f, int64_t *n,
			  struct pg_err *err);

/* Links a series page gives (NULL members: none). */
struct api_series_links {
	const char *archive_url;	/* "https://.../{msgid}/" (ctl_config.h) */
	const char *patch_url;		/* "http://.../patch/{id}/" */
};

/*
 * One series: the list's object plus "patches" [{"number", "subject",
 * "msgid", "patchwork_patch", "base_commit", "files"}], "depends_on"
 * [{"kind", "ref", "series"}] and "rechecks" [{"id", "origin", "msgid",
 * "requester", "contexts", "rebase", "state"}].  With links (the
 * dashboard's page) also: each patch's "archive_url" and "patchwork_url"
 * (null when unknown); "versions" [{"id", "version", "state", "date",
 * "title"}], every version of the series (its lineage: same submitter and
 * normalised title), oldest first, this one included; "checks" [{"id",
 * "run", "patch" (its number), "context", "state", "description",
 * "target_url", "delivery", "created_at", "sent_at"}], every check queued
 * for it; "runs", each as in api_view_run() with "verdicts" [{"context",
 * "state", "description"}] (the context verdicts).
 */
int api_view_series(struct store *st, int64_t id, const struct api_series_links *links,
		    cJSON **out, struct pg_err *err);

/*
 * One run: {"id", "series", "reason", "recheck", "tree", "branch",
 * "base_commit", "state", "created_at", "finished_at", "jobs": [...]}
 * with each job as in api_view_jobs().
 */
int api_view_run(struct store *st, int64_t id, cJSON **out, struct pg_err *err);

/*
 * Jobs, newest first: [{"id", "run", "series", "context", "host_class",
 * "build_mode", "state", "priority", "attempt", "agent", "lease_expires",
 * "stage", "progress", "stage_at", "outcome", "detail", "created_at",
 * "started_at", "finished_at"}]; state filters (NULL: all); limit < 0
 * means no limit.
 */
int api_view_jobs(struct store *st, const char *state, int64_t limit, int64_t offset,
		  cJSON **out, struct pg_err *err);

/*
 * One job: as in the list, plus "spec" (jobs.spec parsed; null when it
 * does not parse), "attempts" [{"attempt", "agent", "started_at",
 * "ended_at", "outcome", "reason", "fingerprint" (of its result; null
 * without one)}] and "logs" [{"attempt", "stage",
 * "bytes", "updated_at", "url"}] where url is
 * base_url/api/v1/jobs/ID/logs/ATTEMPT/STAGE (base_url may be "").
 */
int api_view_job(struct store *st, int64_t id, const char *base_url, cJSON **out,
		 struct pg_err *err);

/*
 * Agents by name: [{"id", "name", "transport", "enabled", "labels" (an
 * object), "facts" (an object), "created_at", "last_seen" (null when
 * never), "online" (enabled and seen at or after now - online_window_s),
 * "job" (null, or {"id", "state", "attempt", "stage", "progress",
 * "context", "lease_expires"} of its leased or running job)}].
 */
int api_view_agents(struct store *st, int64_t now, int64_t online_window_s, cJSON **out,
		    struct pg_err *err);

/*
 * The dashboard's agents: api_view_agents() with, for each agent, "state"
 * ("busy", "idle", "offline", "disabled"), its job's "series", "run",
 * "build_mode", "host_class", "started_at" (of the attempt), "elapsed_s"
 * and "eta_s" (api_view_eta()), and "recent" [{"job", "attempt",
 * "outcome", "context", "started_at", "ended_at"}], its last 5 attempts
 * that ended, newest first.
 */
int api_view_agents_dash(struct store *st, int64_t now, int64_t online_window_s, cJSON **out,
			 struct pg_err *err);

/*
 * The queue: {"now", "queued": [...], "running": [...]}.  queued: the
 * queued jobs in the order the scheduler leases them (sched.h,
 * "Fairness"), at most limit, each as in api_view_jobs() plus "position"
 * (1 is next) and "waiting" (why: held back, pinned to an agent for a
 * follow-up, no online agent of its host class, all of them busy, or next
 * in line); running: leased and running jobs, oldest lease first, plus
 * "started_at" (of the attempt), "elapsed_s" and "eta_s".  ps gives the
 * host classes.
 */
int api_view_queue(struct store *st, const struct profile_set *ps, int64_t now,
		   int64_t online_window_s, int64_t limit, cJSON **out, struct pg_err *err);

/*
 * The seconds a job of (host_class, build_mode) running for elapsed_s has
 * left, from the median length of the last 20 attempts of that pair that
 * ended ok: null (cJSON) when none did; 0 when it is already over.
 * Adds o["eta_s"]; false when out of memory or the store failed (err).
 */
bool api_view_eta(struct store *st, cJSON *o, const char *host_class, const char *build_mode,
		  int64_t elapsed_s, struct pg_err *err);

/*
 * The samples of a job, every attempt: {"job", "samples": [{"attempt",
 * "side", "benchmark", "metric", "repetition", "value", "unit"}]} in
 * attempt, benchmark, metric, side, repetition order; benchmark and metric
 * filter when not NULL.  PG_ENOTFOUND for an unknown job.
 */
int api_view_job_samples(struct store *st, int64_t job_id, const char *benchmark,
			 const char *metric, cJSON **out, struct pg_err *err);

/*
 * The series page's view of a job: verdict_job_json() (verdict_pass.h)
 * plus "job" (api_view_job() without its attempts and logs),
 * "fingerprint" and "fingerprint_attempt" (the latest measured attempt's,
 * else the latest attempt's with a result; null and 0 without one), and
 * "stages" (its logs, each with "duration_ms" from the fingerprint of its
 * attempt, or null).
 */
int api_view_job_verdict(struct store *st, const struct profile_set *ps, int64_t job_id,
			 const char *base_url, cJSON **out, struct pg_err *err);

/* One history: what the store keeps per key (history, change_points). */
struct api_trend_key {
	const char *host, *tree, *branch, *build_mode, *benchmark, *metric;
};

/*
 * Every key with history: {"keys": [{"host", "host_class", "tree",
 * "branch", "build_mode", "benchmark", "metric", "unit", "points",
 * "last_at"}]} by host, tree, branch, build mode, benchmark, metric.
 */
int api_view_trend_keys(struct store *st, cJSON **out, struct pg_err *err);

/*
 * One key's history, its latest `limit` points: {"key", "order",
 * "points": [{"commit", "value", "unit", "samples", "measured_at", "job",
 * "run", "series", "position"}], "change_points": [{"commit_before",
 * "commit_after", "effect", "p", "state", "detected_at"}]}.  "order" is
 * "git" when the tree's mirror under mirror_root (trees.h) has every
 * commit on the branch's first-parent line: the points are in that order
 * and "position" counts commits along it; else "measured": oldest
 * measurement first, "position" its index.  mirror_root NULL: measured.
 * A key without history has no points (not an error).
 */
int api_view_trend(struct store *st, const struct api_trend_key *k, const char *mirror_root,
		   int64_t limit, cJSON **out, struct pg_err *err);

/* The stored labels of one agent as an object. */
int api_view_agent_labels(struct store *st, int64_t agent_id, cJSON **out,
			  struct pg_err *err);

#endif
