/* SPDX-License-Identifier: MIT */
#ifndef AGENT_CONN_H
#define AGENT_CONN_H

/*
 * One connection to the controller: its URL, the agent's bearer token,
 * and a reused libcurl handle (lib/http.h).  Every request answers with a
 * class that tells the caller what to do next, so that the retry policy
 * lives in one place (agent_daemon.c) and not in every call site.
 *
 * Abandoning a request.  libcurl offers no way to interrupt a transfer
 * through lib/http.h, yet a SIGTERM must stop an agent that sits in a
 * 30-second lease long-poll within a second.  So each request runs on a
 * short-lived helper thread while the calling thread waits, checking the
 * caller's stop predicate every AGENT_CONN_POLL_MS.  When the predicate
 * says stop, the caller walks away (AGENT_ANS_STOPPED) and the helper
 * thread, which owns copies of everything the request uses (URL, token,
 * body, curl handle), finishes or times out on its own and frees it all.
 * The connection then opens a new curl handle for its next request.
 * agent_conn_abandoned() counts helpers still running: the daemon ends
 * with _exit() while any is (no exit handler, libcurl's or OpenSSL's, may
 * run under a thread still inside them), and never calls
 * pg_http_global_cleanup() then.
 *
 * Threads: a struct agent_conn is used by one thread at a time (the main
 * loop has one, each job's heartbeat thread its own).
 * pg_http_global_init() must have been called.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "http.h"

#define AGENT_CONN_POLL_MS 50
#define AGENT_TOKEN_MAX 4096

/* What the caller should do with an answer. */
enum agent_answer {
	AGENT_ANS_OK = 0,	/* 2xx: read the reply */
	AGENT_ANS_RETRY,	/* no answer, a timeout, 5xx, 408, 425, 429: later */
	AGENT_ANS_AUTH,		/* 401, 403: token wrong or agent disabled */
	AGENT_ANS_NOTFOUND,	/* 404: the controller does not know the job */
	AGENT_ANS_CONFLICT,	/* 409: stale attempt, or another result */
	AGENT_ANS_REFUSED,	/* any other status, or a body the contract does
				 * not allow: our request or the controller is
				 * wrong; retrying the same bytes will not help */
	AGENT_ANS_STOPPED,	/* the stop predicate ended the wait */
};

/* A short name for logs: "ok", "retry", "auth", "not-found", ... */
const char *agent_answer_name(enum agent_answer a);

/* The class of a lib/http.h outcome: rc from pg_http_request(), and the
 * status when rc is 0.  Pure. */
enum agent_answer agent_answer_of(int rc, long status);

/*
 * How long to wait before trying again after a failed exchange: full
 * jitter over 1 s * 2^failures capped at max_ms (pg_backoff_ms()), with a
 * floor so that even an unlucky draw is not a busy loop: 100 ms for
 * AGENT_ANS_RETRY, and for AGENT_ANS_AUTH (a wrong token is not fixed in
 * milliseconds) 5 s or max_ms when smaller.  A Retry-After the controller
 * sent (retry_after_ms >= 0) is honoured up to max_ms.  The result is in
 * [floor, max(floor, max_ms)]; failures counts from 0.  *rand_state as for
 * pg_backoff_ms().
 */
#define AGENT_BACKOFF_BASE_MS 1000
#define AGENT_RETRY_FLOOR_MS 100
#define AGENT_AUTH_FLOOR_MS 5000
int64_t agent_retry_delay_ms(enum agent_answer ans, unsigned int failures, int64_t max_ms,
			     int64_t retry_after_ms, uint64_t *rand_state);

/* Polled while a request is in flight; true means walk away now. */
struct agent_stop {
	bool (*fn)(void *arg);
	void *arg;
};

struct agent_conn {
	char *base_url;		/* controller_url without trailing '/' */
	char *token_file;	/* NULL: no token is sent */
	char *token;		/* the token read from it; NULL when none */
	struct pg_http_client *client;	/* NULL until needed */
};

#define AGENT_CONN_INIT { NULL, NULL, NULL, NULL }

/*
 * Read a token file: its first line without trailing white space (CR, LF,
 * spaces).  Returns a malloc'd string, or NULL with err naming the file:
 * missing or unreadable, empty, larger than AGENT_TOKEN_MAX, or holding
 * control characters or spaces inside the token.
 */
char *agent_token_read(const char *path, struct pg_err *err);

/* Set up a connection to url; reads token_file now when not NULL.
 * Returns 0, or -1 (the token file is unreadable, out of memory). */
int agent_conn_init(struct agent_conn *c, const char *url, const char *token_file,
		    struct pg_err *err);

/* A connection to the same controller with the same token, for another
 * thread. */
int agent_conn_clone(struct agent_conn *dst, const struct agent_conn *src,
		     struct pg_err *err);

void agent_conn_release(struct agent_conn *c);

/*
 * Read the token file again (after a 401 or 403, so that a token
 * replaced on disk is picked up without a restart).  Returns 1 when the
 * token changed, 0 when not, -1 when the file cannot be read (the old
 * token is kept; err says why).
 */
int agent_conn_reload_token(struct agent_conn *c, struct pg_err *err);

/*
 * POST base_url + path (which starts with "/") with body (len bytes,
 * content_type e.g. "application/json"), within timeout_ms, into resp
 * (whose previous contents are released).  stop may be NULL (wait to the
 * end).
 *
 * Returns the answer's class.  Unless AGENT_ANS_OK, err says what
 * happened: "POST URL: HTTP 503: <the controller's "error" or the start
 * of its body>" or the transport failure.  resp->status is 0 when no
 * answer arrived (and for AGENT_ANS_STOPPED).
 */
enum agent_answer agent_conn_post(struct agent_conn *c, const char *path,
				  const char *content_type, const void *body, size_t len,
				  long timeout_ms, const struct agent_stop *stop,
				  struct pg_http_response *resp, struct pg_err *err);

/*
 * The same for any method: method is a string literal ("GET", "POST");
 * content_type may be NULL for a request without a body; max_body bounds
 * the answer's body (0: lib/http.h's default).
 */
enum agent_answer agent_conn_request(struct agent_conn *c, const char *method,
				     const char *path, const char *content_type,
				     const void *body, size_t len, size_t max_body,
				     long timeout_ms, const struct agent_stop *stop,
				     struct pg_http_response *resp, struct pg_err *err);

/* Helper threads of abandoned requests still running. */
int agent_conn_abandoned(void);

/*
 * Start a thread with every signal blocked in it, so that SIGTERM and
 * friends are delivered to the main thread, whose sleeps they are meant
 * to interrupt.  detached: nobody joins it (tid may be NULL then).
 * Returns 0 or -1 (PG_EIO).
 */
int agent_thread_start(void *(*fn)(void *), void *arg, bool detached, pthread_t *tid,
		       struct pg_err *err);

#endif
