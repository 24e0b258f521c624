/* SPDX-License-Identifier: MIT */
/* The run-one protocol's lines (agent_line.h): printers, parser, reader. */
#include "agent_line.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base64.h"
#include "fmt.h"
#include "json.h"
#include "runone.h"

#define LINE_POLL_MS 100
#define LINE_READ_CHUNK ((size_t)64 * 1024)
/* The largest id or attempt: what a JSON number holds exactly. */
#define LINE_ID_MAX 9007199254740992LL

/* A message of `type`, to be filled by the caller. */
static cJSON *line_new(const char *type)
{
	cJSON *o = cJSON_CreateObject();

	if (o && !cJSON_AddStringToObject(o, "type", type)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* Print o (taken) as one line.  NULL with err. */
static char *line_finish(cJSON *o, struct pg_err *err)
{
	char *text = NULL, *line;
	size_t n;

	if (o)
		text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text) {
		pg_err_set(err, PG_ENOMEM, "run-one line: out of memory");
		return NULL;
	}
	n = strlen(text);
	if (n + 1 > RUNONE_LINE_MAX) {
		free(text);
		pg_err_set(err, PG_ETOOBIG, "run-one line: %zu bytes, over the %zu-byte limit",
			   n + 1, RUNONE_LINE_MAX);
		return NULL;
	}
	line = realloc(text, n + 2);
	if (!line) {
		free(text);
		pg_err_set(err, PG_ENOMEM, "run-one line: out of memory");
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	return line;
}

/* An integer member printed exactly: cJSON prints a number through a
 * double with 15 digits when it thinks that close enough, which turns an
 * id near 2^53 into 9.00719925474099e+15. */
static bool line_int(cJSON *o, const char *key, int64_t v)
{
	char text[32];

	return pg_fmt(text, sizeof(text), "%lld", (long long)v) >= 0 &&
	       cJSON_AddRawToObject(o, key, text);
}

/* Add a job id and attempt; false when out of memory. */
static bool line_ids(cJSON *o, int64_t job_id, int64_t attempt)
{
	return line_int(o, "job", job_id) && line_int(o, "attempt", attempt);
}

char *agent_line_hello(long pid, long pgid, struct pg_err *err)
{
	cJSON *o = line_new(RUNONE_HELLO);

	if (o && (!cJSON_AddStringToObject(o, "agent_version", PG_VERSION) ||
		  !line_int(o, "pid", pid) || !line_int(o, "pgid", pgid))) {
		cJSON_Delete(o);
		o = NULL;
	}
	return line_finish(o, err);
}

char *agent_line_heartbeat(int64_t job_id, int64_t attempt, const char *stage, int progress,
			   struct pg_err *err)
{
	cJSON *o = line_new(RUNONE_HEARTBEAT);

	if (o && (!line_ids(o, job_id, attempt) ||
		  !cJSON_AddStringToObject(o, "stage", stage) ||
		  !cJSON_AddNumberToObject(o, "progress", progress))) {
		cJSON_Delete(o);
		o = NULL;
	}
	return line_finish(o, err);
}

char *agent_line_log(int64_t job_id, int64_t attempt, const char *stage, const void *data,
		     size_t len, struct pg_err *err)
{
	struct pg_buf b64 = PG_BUF_INIT(RUNONE_LINE_MAX);
	cJSON *o = NULL;
	char *line = NULL;

	if (pg_base64_encode(data, len, &b64, err) < 0)
		goto out;
	o = line_new(RUNONE_LOG);
	if (o && (!line_ids(o, job_id, attempt) ||
		  !cJSON_AddStringToObject(o, "stage", stage) ||
		  !cJSON_AddStringToObject(o, "data", pg_buf_str(&b64)))) {
		cJSON_Delete(o);
		o = NULL;
	}
	line = line_finish(o, err);
out:
	pg_buf_release(&b64);
	return line;
}

char *agent_line_fetch(const char *url, struct pg_err *err)
{
	cJSON *o = line_new(RUNONE_FETCH);

	if (o && !cJSON_AddStringToObject(o, "url", url)) {
		cJSON_Delete(o);
		o = NULL;
	}
	return line_finish(o, err);
}

char *agent_line_result(int64_t job_id, int64_t attempt, const char *body, size_t len,
			struct pg_err *err)
{
	cJSON *o;

	/* A JSON string cannot carry a NUL through cJSON: the body is text. */
	if (strnlen(body, len) != len) {
		pg_err_set(err, PG_EINVAL, "run-one line: a result body holds a NUL byte");
		return NULL;
	}
	o = line_new(RUNONE_RESULT);
	if (o && (!line_ids(o, job_id, attempt) || !cJSON_AddStringToObject(o, "body", body))) {
		cJSON_Delete(o);
		o = NULL;
	}
	return line_finish(o, err);
}

char *agent_line_end(int exit_status, const char *detail, struct pg_err *err)
{
	cJSON *o = line_new(RUNONE_END);

	if (o && (!cJSON_AddNumberToObject(o, "exit", exit_status) ||
		  !cJSON_AddStringToObject(o, "detail", detail ? detail : ""))) {
		cJSON_Delete(o);
		o = NULL;
	}
	return line_finish(o, err);
}

char *agent_line_collected(size_t count, struct pg_err *err)
{
	cJSON *o = line_new(RUNONE_COLLECTED);

	if (o && !line_int(o, "count", (int64_t)count)) {
		cJSON_Delete(o);
		o = NULL;
	}
	return line_finish(o, err);
}

char *agent_line_facts(const cJSON *labels, const cJSON *facts, struct pg_err *err)
{
	cJSON *o = line_new(RUNONE_FACTS);

	if (o && (!cJSON_AddStringToObject(o, "agent_version", PG_VERSION) ||
		  !cJSON_AddItemToObject(o, "labels", cJSON_Duplicate(labels, true)) ||
		  !cJSON_AddItemToObject(o, "facts", cJSON_Duplicate(facts, true)))) {
		cJSON_Delete(o);
		o = NULL;
	}
	return line_finish(o, err);
}

void agent_line_in_release(struct agent_line_in *m)
{
	free(m->text);
	pg_buf_release(&m->data);
	memset(m, 0, sizeof(*m));
	pg_buf_init(&m->data, 0);
}

/* An optional string field copied to m->text. */
static int line_text(const cJSON *o, const char *key, bool required, struct agent_line_in *m,
		     struct pg_err *err)
{
	const char *s = NULL;
	int rc = pg_json_get_string(o, key, required, &s, err);

	if (rc <= 0)
		return rc;
	m->text = strdup(s);
	if (!m->text)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	return 1;
}

static int line_ids_in(const cJSON *o, struct agent_line_in *m, struct pg_err *err)
{
	if (pg_json_get_int(o, "job", true, 1, LINE_ID_MAX, &m->job_id, err) < 0 ||
	    pg_json_get_int(o, "attempt", true, 1, LINE_ID_MAX, &m->attempt, err) < 0)
		return -1;
	return 0;
}

static int line_ack(const cJSON *o, struct agent_line_in *m, struct pg_err *err)
{
	const char *status;

	if (line_ids_in(o, m, err) < 0 || pg_json_get_string(o, "status", true, &status, err) < 0)
		return -1;
	if (strcmp(status, "recorded") != 0 && strcmp(status, "duplicate") != 0 &&
	    strcmp(status, "acknowledged") != 0)
		return pg_err_set(err, PG_EINVAL, "field 'status': '%.40s' is not recorded, "
				  "duplicate or acknowledged", status);
	if (pg_fmt(m->status, sizeof(m->status), "%s", status) < 0)
		return pg_err_set(err, PG_EINVAL, "field 'status': too long");
	return 0;
}

static int line_reject(const cJSON *o, struct agent_line_in *m, struct pg_err *err)
{
	int64_t status;

	if (line_ids_in(o, m, err) < 0 ||
	    pg_json_get_int(o, "status", true, 400, 599, &status, err) < 0 ||
	    line_text(o, "answer", false, m, err) < 0)
		return -1;
	m->http_status = (long)status;
	return 0;
}

static int line_mbox(const cJSON *o, size_t data_max, struct agent_line_in *m,
		     struct pg_err *err)
{
	const char *data = NULL;
	int has_data, has_error;

	has_data = pg_json_get_string(o, "data", false, &data, err);
	if (has_data < 0)
		return -1;
	has_error = line_text(o, "error", false, m, err);
	if (has_error < 0)
		return -1;
	if (has_data == has_error)
		return pg_err_set(err, PG_EINVAL, "an mbox line has either 'data' or 'error'");
	if (!has_data)
		return 0;
	pg_buf_init(&m->data, data_max);
	if (pg_base64_decode(data, strlen(data), &m->data, err) < 0) {
		pg_err_prefix(err, "field 'data'");
		return -1;
	}
	m->has_data = true;
	return 0;
}

int agent_line_parse(const char *line, size_t len, size_t data_max, struct agent_line_in *m,
		     struct pg_err *err)
{
	cJSON *o = NULL;
	const char *type;
	int rc = -1;

	agent_line_in_release(m);
	if (pg_json_parse(line, len, &o, err) < 0)
		goto out;
	if (!cJSON_IsObject(o)) {
		pg_err_set(err, PG_EINVAL, "a line is %s, not a JSON object", pg_json_type_name(o));
		goto out;
	}
	if (pg_json_get_string(o, "type", true, &type, err) < 0)
		goto out;
	if (strcmp(type, RUNONE_CANCEL) == 0) {
		m->type = AGENT_LINE_CANCEL;
		rc = line_text(o, "reason", false, m, err) < 0 ? -1 : 0;
	} else if (strcmp(type, RUNONE_MBOX) == 0) {
		m->type = AGENT_LINE_MBOX;
		rc = line_mbox(o, data_max, m, err);
	} else if (strcmp(type, RUNONE_ACK) == 0) {
		m->type = AGENT_LINE_ACK;
		rc = line_ack(o, m, err);
	} else if (strcmp(type, RUNONE_REJECT) == 0) {
		m->type = AGENT_LINE_REJECT;
		rc = line_reject(o, m, err);
	} else if (strcmp(type, RUNONE_DONE) == 0) {
		m->type = AGENT_LINE_DONE;
		rc = 0;
	} else {
		pg_err_set(err, PG_EINVAL, "unknown line type '%.40s'", type);
		goto out;
	}
	if (rc < 0)
		pg_err_prefix(err, "a '%s' line", type);
out:
	if (rc < 0)
		agent_line_in_release(m);
	cJSON_Delete(o);
	return rc;
}

cJSON *agent_line_job(const char *line, size_t len, struct pg_err *err)
{
	cJSON *o = NULL, *job;

	if (pg_json_parse(line, len, &o, err) < 0)
		return NULL;
	if (!cJSON_IsObject(o)) {
		pg_err_set(err, PG_EINVAL, "the job line is %s, not a JSON object",
			   pg_json_type_name(o));
		cJSON_Delete(o);
		return NULL;
	}
	/* The lease answer wraps the job; a bare job has its own "id". */
	if (!cJSON_HasObjectItem(o, "job"))
		return o;
	job = cJSON_DetachItemFromObjectCaseSensitive(o, "job");
	cJSON_Delete(o);
	if (!cJSON_IsObject(job)) {
		pg_err_set(err, PG_EINVAL, "field 'job': expected an object, got %s",
			   pg_json_type_name(job));
		cJSON_Delete(job);
		return NULL;
	}
	return job;
}

void agent_lines_release(struct agent_lines *r)
{
	pg_buf_release(&r->buf);
	r->taken = 0;
}

int agent_lines_next(struct agent_lines *r, size_t max, const struct agent_stop *stop,
		     const char **line, size_t *len, struct pg_err *err)
{
	size_t scanned = 0;

	pg_buf_consume(&r->buf, r->taken);
	r->taken = 0;
	for (;;) {
		char *nl = r->buf.len > scanned ? memchr(r->buf.data + scanned, '\n',
							 r->buf.len - scanned) : NULL;
		struct pollfd pfd = { r->fd, POLLIN, 0 };
		ssize_t n;
		int prc;

		if (nl) {
			*nl = '\0';
			*line = r->buf.data;
			*len = (size_t)(nl - r->buf.data);
			r->taken = *len + 1;
			if (*len > max)
				return pg_err_set(err, PG_ETOOBIG, "a line of %zu bytes, over the "
						  "%zu-byte limit", *len, max);
			return 1;
		}
		scanned = r->buf.len;
		if (scanned > max)
			return pg_err_set(err, PG_ETOOBIG, "a line of more than %zu bytes", max);
		if (r->eof)
			return 0;
		if (stop && stop->fn(stop->arg))
			return 2;
		prc = poll(&pfd, 1, LINE_POLL_MS);
		if (prc < 0 && errno != EINTR)
			return pg_err_errno(err, "poll fd %d", r->fd);
		if (prc <= 0)
			continue;
		if (pg_buf_grow(&r->buf, LINE_READ_CHUNK) < 0)
			return pg_buf_err(&r->buf, err, "reading lines");
		n = read(r->fd, r->buf.data + r->buf.len, LINE_READ_CHUNK);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return pg_err_errno(err, "read fd %d", r->fd);
		}
		if (n == 0) {
			r->eof = true;
			continue;
		}
		r->buf.len += (size_t)n;
		r->buf.data[r->buf.len] = '\0';
	}
}
