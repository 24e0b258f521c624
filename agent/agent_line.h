/* SPDX-License-Identifier: MIT */
#ifndef AGENT_LINE_H
#define AGENT_LINE_H

/*
 * The lines of the run-one protocol (lib/runone.h), as pure functions:
 * printers of what run-one writes and a parser of what it reads, plus a
 * bounded line reader over a file descriptor.  The stream link
 * (agent_stream.h) does the I/O and the waiting.
 *
 * Every printer returns one compact JSON object followed by '\n', as a
 * malloc'd NUL-terminated string (the caller frees), or NULL with err
 * (PG_ENOMEM; PG_ETOOBIG for a line over RUNONE_LINE_MAX).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "agent_conn.h"
#include "agent_proto.h"
#include "buf.h"
#include "err.h"

char *agent_line_hello(long pid, long pgid, struct pg_err *err);
char *agent_line_heartbeat(int64_t job_id, int64_t attempt, const char *stage, int progress,
			   struct pg_err *err);
/* data[0..len) travels base64-encoded. */
char *agent_line_log(int64_t job_id, int64_t attempt, const char *stage, const void *data,
		     size_t len, struct pg_err *err);
char *agent_line_fetch(const char *url, struct pg_err *err);
/* body[0..len): the spooled result, as a JSON string (text, not base64:
 * agent_result_body() makes JSON text). */
char *agent_line_result(int64_t job_id, int64_t attempt, const char *body, size_t len,
			struct pg_err *err);
char *agent_line_end(int exit_status, const char *detail, struct pg_err *err);
char *agent_line_collected(size_t count, struct pg_err *err);
/* {"type":"facts","agent_version":PG_VERSION,"labels":labels,"facts":facts};
 * the objects are printed, not taken. */
char *agent_line_facts(const cJSON *labels, const cJSON *facts, struct pg_err *err);

/* What the controller sends after the first line. */
enum agent_line_type {
	AGENT_LINE_CANCEL,	/* reason: text (may be NULL) */
	AGENT_LINE_MBOX,	/* data (decoded), or text: the error */
	AGENT_LINE_ACK,		/* job_id, attempt, status */
	AGENT_LINE_REJECT,	/* job_id, attempt, http_status, text: the answer */
	AGENT_LINE_DONE,
};

struct agent_line_in {
	enum agent_line_type type;
	int64_t job_id;
	int64_t attempt;
	char status[AGENT_RESULT_STATUS_MAX];	/* ack: "recorded", "duplicate",
						 * "acknowledged" */
	long http_status;			/* reject: 400..599 */
	char *text;				/* malloc'd or NULL */
	bool has_data;				/* mbox: data holds the bytes */
	struct pg_buf data;
};

#define AGENT_LINE_IN_INIT { AGENT_LINE_CANCEL, 0, 0, "", 0, NULL, false, PG_BUF_INIT(0) }

/*
 * Parse one line (len bytes, without its '\n'; need not be
 * NUL-terminated) into *m (released first, so one struct serves a loop).
 * An mbox's data is decoded into m->data, bounded by data_max bytes
 * (PG_ETOOBIG past it).  Returns 0, or -1 with PG_EINVAL naming what is
 * wrong: not a JSON object, an unknown "type", a missing or mistyped
 * field (ids are integers in [1, 2^53], an ack's status one of the three
 * names, a reject's status an HTTP error 400..599, mbox data valid
 * base64 or an "error" string, not both).  Unknown extra fields are
 * allowed, so that the controller's side may grow.
 */
int agent_line_parse(const char *line, size_t len, size_t data_max, struct agent_line_in *m,
		     struct pg_err *err);

void agent_line_in_release(struct agent_line_in *m);

/*
 * The lease answer of run-one's first line: {"job": {...}} or the job
 * object itself.  Returns the job object (detached, the caller owns it),
 * or NULL with PG_EINVAL.
 */
cJSON *agent_line_job(const char *line, size_t len, struct pg_err *err);

/*
 * A reader of '\n'-terminated lines from a file descriptor, for one
 * thread at a time.
 */
struct agent_lines {
	int fd;
	struct pg_buf buf;	/* bytes read and not yet returned */
	size_t taken;		/* bytes of buf returned by the last call */
	bool eof;
};

#define AGENT_LINES_INIT(fd) { (fd), PG_BUF_INIT(PG_BUF_NOLIMIT), 0, false }

/*
 * The next line, without its '\n', NUL-terminated in *line (len bytes,
 * valid until the next call).  Waits for input, polling stop (may be
 * NULL) every 100 ms.  Returns 1 with a line; 0 at end of input (a last
 * line without its '\n' is dropped: the writer went away in its
 * middle); 2 when stop said so; -1 with err: PG_ETOOBIG for a line over
 * max bytes, PG_EIO when reading failed.
 */
int agent_lines_next(struct agent_lines *r, size_t max, const struct agent_stop *stop,
		     const char **line, size_t *len, struct pg_err *err);

void agent_lines_release(struct agent_lines *r);

#endif
