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
#include "store.h"

/*
 * Series, oldest first, as an array of objects:
 *   {"id", "state", "stale", "version", "total", "received", "title",
 *    "submitter_name", "submitter", "date", "tags", "rfc", "supersedes",
 *    "superseded_by", "patchwork_series", "base_commit", "root_msgid",
 *    "cover_msgid"}
 * state filters (NULL: all; "stale": incomplete series reported as never
 * completed); limit < 0 means no limit.
 */
int api_view_series_list(struct store *st, const char *state, int64_t limit, int64_t offset,
			 cJSON **out, struct pg_err *err);

/* How many series api_view_series_list() would list without a limit. */
int api_view_series_count(struct store *st, const char *state, int64_t *n,
			  struct pg_err *err);

/*
 * One series: the list's object plus "patches" [{"number", "subject",
 * "msgid", "patchwork_patch", "base_commit", "files"}], "depends_on"
 * [{"kind", "ref", "series"}] and "rechecks" [{"id", "origin", "msgid",
 * "requester", "contexts", "rebase", "state"}]; with with_runs also "runs"
 * (each as in api_view_run() without "series", its jobs brief).
 */
int api_view_series(struct store *st, int64_t id, bool with_runs, cJSON **out,
		    struct pg_err *err);

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
 * "ended_at", "outcome", "reason"}] and "logs" [{"attempt", "stage",
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

/* The stored labels of one agent as an object. */
int api_view_agent_labels(struct store *st, int64_t agent_id, cJSON **out,
			  struct pg_err *err);

#endif
