/* SPDX-License-Identifier: MIT */
#ifndef AGENT_PROTO_H
#define AGENT_PROTO_H

/*
 * The agent's side of the controller API (README "Agent protocol";
 * DESIGN.md section 3): one function per endpoint, building the request
 * and checking the answer's shape.  Retrying is the caller's business:
 * every function returns the class of the answer (agent_conn.h), and
 * AGENT_ANS_REFUSED also when a 2xx answer does not have the shape the
 * contract promises (err says what is wrong).
 *
 * resp is the caller's scratch response, reused between calls; after a
 * call it holds the controller's answer (status and body), e.g. to keep
 * next to a refused result.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "agent_conn.h"
#include "err.h"
#include "http.h"

#define AGENT_STAGE_MAX 64
#define AGENT_RESULT_STATUS_MAX 32

/* Stage names travel in a query string: [a-z0-9_.-], 1..63 bytes. */
bool agent_stage_ok(const char *stage);

/*
 * POST /api/v1/agents/register {"labels": labels, "facts": facts}.  On
 * AGENT_ANS_OK name (name_len bytes) is the name the controller knows this
 * agent by (its answer's "agent").
 */
enum agent_answer agent_proto_register(struct agent_conn *c, const cJSON *labels,
				       const cJSON *facts, long timeout_ms,
				       const struct agent_stop *stop, char *name,
				       size_t name_len, struct pg_http_response *resp,
				       struct pg_err *err);

/*
 * POST /api/v1/lease {"wait_s": wait_s}, waiting up to timeout_ms (which
 * should exceed wait_s).  On AGENT_ANS_OK *job is the answer's "job"
 * object (the caller frees it), or NULL when the controller answered 204:
 * nothing within wait_s.
 */
enum agent_answer agent_proto_lease(struct agent_conn *c, int wait_s, long timeout_ms,
				    const struct agent_stop *stop, cJSON **job,
				    struct pg_http_response *resp, struct pg_err *err);

/*
 * POST /api/v1/jobs/ID/heartbeat {"attempt", "stage", "progress"}.  On
 * AGENT_ANS_OK *cancel is the answer's "cancel".  AGENT_ANS_CONFLICT: the
 * attempt is stale; AGENT_ANS_NOTFOUND: no such job.
 */
enum agent_answer agent_proto_heartbeat(struct agent_conn *c, int64_t job_id,
					int64_t attempt, const char *stage, int progress,
					long timeout_ms, const struct agent_stop *stop,
					bool *cancel, struct pg_http_response *resp,
					struct pg_err *err);

/*
 * POST /api/v1/jobs/ID/logs?attempt=N&stage=S&offset=O with a text/plain
 * chunk.  offset (>= 0) is where the chunk starts in the stage's log, so
 * that the controller keeps a retried chunk it already holds once (the
 * answer to an append can be lost after the append); -1 sends none: the
 * chunk goes at the log's end.  On AGENT_ANS_OK *bytes is the log's size
 * in the answer ("bytes"), -1 when the answer has none.
 */
enum agent_answer agent_proto_log(struct agent_conn *c, int64_t job_id, int64_t attempt,
				  const char *stage, int64_t offset, const char *text,
				  size_t len, long timeout_ms, const struct agent_stop *stop,
				  int64_t *bytes, struct pg_http_response *resp,
				  struct pg_err *err);

/*
 * POST /api/v1/jobs/ID/result with body (the bytes spooled, sent as they
 * are).  AGENT_ANS_OK only for a 200 whose "status" is "recorded",
 * "duplicate" or "acknowledged", copied to status (status_len bytes).
 * AGENT_ANS_CONFLICT: another result was recorded for the attempt.
 */
enum agent_answer agent_proto_result(struct agent_conn *c, int64_t job_id, int64_t attempt,
				     const char *body, size_t len, long timeout_ms,
				     const struct agent_stop *stop, char *status,
				     size_t status_len, struct pg_http_response *resp,
				     struct pg_err *err);

/*
 * GET a series mbox: url is the job's "mbox_url", an absolute URL (or an
 * absolute path) whose path must start with "/api/v1/series/"; only its
 * path is sent, to this connection's controller, so that an agent that
 * reaches the controller by another name than its public URL still gets
 * it.  The answer's body, at most max bytes, is left in resp->body.
 * AGENT_ANS_REFUSED for a URL of another shape.
 */
enum agent_answer agent_proto_mbox(struct agent_conn *c, const char *url, size_t max,
				   long timeout_ms, const struct agent_stop *stop,
				   struct pg_http_response *resp, struct pg_err *err);

/* The path part of an mbox URL as above, into path (size bytes); -1 with
 * err when it has another shape.  Pure. */
int agent_proto_mbox_path(const char *url, char *path, size_t size, struct pg_err *err);

#endif
