/* SPDX-License-Identifier: MIT */
#ifndef AGENT_STREAM_H
#define AGENT_STREAM_H

/*
 * The stream link: a job held by agent_hold.h that talks to the
 * controller through lines on two file descriptors (run-one's stdin and
 * stdout, lib/runone.h) instead of HTTP.
 *
 *   heartbeats  a "heartbeat" line from the heartbeat thread
 *               (agent_hb_start_beat()) every heartbeat_s, the first at once
 *   log         a "log" line, the chunk base64-encoded
 *   fetch       a "fetch" line, then wait for the "mbox" line that
 *               answers it (up to AGENT_STREAM_FETCH_WAIT_S, or until the
 *               job is stopped)
 *   deliver     a "result" line, then wait up to RUNONE_ACK_WAIT_S for the
 *               "ack" or "reject" of that attempt, settled through
 *               agent_hold_settle()
 *   offer       (--collect) a "result" line; its answer is read later
 *
 * A reader thread (agent_stream_start()) reads the controller's lines:
 * "cancel" sets the cancel flag (the link's cancelled()), "mbox" wakes the
 * waiting fetch, "ack"/"reject" the waiting delivery.  End of input, a
 * line over RUNONE_LINE_MAX, a read error, or a write that fails (EPIPE:
 * the caller must ignore SIGPIPE) mark the connection lost: the link's
 * abandoned() then says so, which stops the runner, and the holder spools
 * an infra-error result that is not delivered.  A malformed line is
 * logged and ignored.
 *
 * Threads: writes are serialised by out_lock (the main thread, the
 * heartbeat thread); the reader thread's findings are under lock, the
 * flags atomics.
 */

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent_hold.h"
#include "agent_line.h"
#include "err.h"

#define AGENT_STREAM_FETCH_WAIT_S 300

#define AGENT_STREAM_LOST_DETAIL "the connection to the controller dropped while the " \
	"host ran this attempt; the job was stopped"
#define AGENT_STREAM_SIGNAL_DETAIL "perfgate-agent run-one was stopped by a signal " \
	"(SIGTERM, SIGINT or SIGHUP) while the host ran this attempt; the job was stopped"

struct agent_stream {
	int out_fd;
	struct agent_lines in;		/* the main thread's, then the reader's */
	/* Set by the owner: a signal flag that abandons the job (may be
	 * NULL), the holder that deliver() settles through. */
	volatile sig_atomic_t *signalled;
	struct agent_hold *hold;
	int64_t max_backoff_ms;		/* of heartbeat retries */

	pthread_mutex_t out_lock;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* signalled on every finding */
	atomic_bool lost;
	atomic_int cancel;		/* enum agent_cancel */
	atomic_bool stop_reader;

	/* Under lock. */
	bool fetch_waiting;
	bool fetch_answered;
	struct agent_line_in fetch_answer;
	int64_t want_job, want_attempt;	/* the delivery waited for; 0: none */
	bool answered;
	struct agent_line_in answer;

	/* Set by agent_stream_deliver() when no answer came in time. */
	bool ack_timed_out;

	pthread_t reader;
	bool reader_running;
	bool inited;
};

/* Set up a stream on in_fd and out_fd (both stay the caller's).  0 or -1. */
int agent_stream_init(struct agent_stream *s, int in_fd, int out_fd, struct pg_err *err);

/* Stop the reader (when running) and free everything; safe twice. */
void agent_stream_release(struct agent_stream *s);

/* Write one line (from agent_line.h) whole.  A failure marks the
 * connection lost.  0 or -1 with err. */
int agent_stream_write(struct agent_stream *s, const char *line, struct pg_err *err);

/* Start the reader thread.  0 or -1. */
int agent_stream_start(struct agent_stream *s, struct pg_err *err);

/* Stop the reader thread and join it (within 100 ms); a no-op when not
 * running. */
void agent_stream_stop(struct agent_stream *s);

/* True once the connection is lost (see above). */
bool agent_stream_lost(struct agent_stream *s);

/* Fill link with the stream's operations, arg = s. */
void agent_stream_link(struct agent_stream *s, struct agent_link *link);

/*
 * The link's fetch, exposed for tests: write a fetch line for url, wait
 * for the mbox answer into out (bounded by out->max) until wait_ms
 * passed or stop (may be NULL) says so.  Returns 0; -1 with err:
 * PG_EIO (the controller answered with an error), PG_ETOOBIG, PG_ETIMEOUT
 * (no answer in time, stopped, or the connection lost).
 */
int agent_stream_fetch(struct agent_stream *s, const struct agent_stop *stop, const char *url,
		       int64_t wait_ms, struct pg_buf *out, struct pg_err *err);

/*
 * Say which result's answer the next agent_stream_wait_answer() is for,
 * before its result line goes out (the answer may come back before the
 * wait starts).  Answers about anything else are logged and ignored.
 */
void agent_stream_expect(struct agent_stream *s, int64_t job_id, int64_t attempt);

/*
 * Wait for the ack or reject expected, read by the reader thread, until
 * wait_ms passed, the connection is lost, or stop (may be NULL) says so.
 * Returns 1 with *out filled (the caller releases it), 0 when none came
 * (see agent_stream_lost()).  Either way nothing is expected afterwards.
 */
int agent_stream_wait_answer(struct agent_stream *s, int64_t wait_ms,
			     const struct agent_stop *stop, struct agent_line_in *out);

#endif
