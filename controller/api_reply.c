/* SPDX-License-Identifier: MIT */
/*
 * What every endpoint answers with: a status from an error code, JSON,
 * text or nothing as the body, the note its log line carries, and the
 * clocks the API's threads share.  The leaf of the API's files: the
 * endpoints (api_agent.c, api_admin.c, api_read.c), the writer
 * (api_worker.c) and the HTTP side (api_server.c) call it; it calls none
 * of them.
 */
#include "api_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt.h"
#include "json.h"
#include "log.h"
#include "timeutil.h"

int64_t api_now_s(void)
{
	/* The steady clock: leases are wall times compared as deadlines,
	 * here and in serve's expiry sweep (timeutil.h). */
	return pg_time_steady_ms() / 1000;
}

/* ---- answers ------------------------------------------------------------ */

unsigned int api_status_for(enum pg_errcode code)
{
	switch (code) {
	case PG_EINVAL:
		return 400;
	case PG_ENOTFOUND:
		return 404;
	case PG_ECONFLICT:
		return 409;
	case PG_ETOOBIG:
		return 413;
	case PG_ETIMEOUT:
		return 503;
	default:
		return 500;
	}
}

static const char api_oom_json[] = "{\"error\":\"out of memory\"}\n";

/* Answer a then b (either may be empty) as the body. */
static void api_answer(struct api_req *r, unsigned int status, const char *ctype,
		       const char *a, size_t alen, const char *b, size_t blen)
{
	pg_buf_reset(&r->out);
	r->status = status;
	r->content_type = ctype;
	r->answered = true;
	if ((alen && pg_buf_add(&r->out, a, alen) < 0) ||
	    (blen && pg_buf_add(&r->out, b, blen) < 0)) {
		/* Only memory can run out here: the cap is far above any
		 * answer we build.  The fixed text below is empty then. */
		pg_buf_release(&r->out);
		r->status = 500;
		r->content_type = "application/json";
		if (pg_buf_add(&r->out, api_oom_json, sizeof(api_oom_json) - 1) < 0)
			pg_buf_release(&r->out);
	}
}

void api_reply_text(struct api_req *r, unsigned int status, const char *ctype,
		    const char *data, size_t len)
{
	api_answer(r, status, ctype, data, len, NULL, 0);
}

void api_reply_empty(struct api_req *r, unsigned int status)
{
	api_reply_text(r, status, NULL, NULL, 0);
}

void api_reply_json(struct api_req *r, unsigned int status, cJSON *obj)
{
	char *text = obj ? pg_json_print_safe(obj, false) : NULL;

	cJSON_Delete(obj);
	if (!text) {
		pg_log_error("api", "%s %s: out of memory", r->method, r->path);
		api_answer(r, 500, "application/json", api_oom_json, sizeof(api_oom_json) - 1,
			   NULL, 0);
		return;
	}
	api_answer(r, status, "application/json", text, strlen(text), "\n", 1);
	free(text);
}

void api_reply_error(struct api_req *r, unsigned int status, const char *fmt, ...)
{
	char msg[PG_ERR_MSG_MAX + 128];
	cJSON *o = cJSON_CreateObject();
	va_list ap;

	va_start(ap, fmt);
	pg_vfmt_cut(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (o && !cJSON_AddStringToObject(o, "error", msg)) {
		cJSON_Delete(o);
		o = NULL;
	}
	api_reply_json(r, status, o);
}

void api_reply_err(struct api_req *r, const struct pg_err *err)
{
	unsigned int status = api_status_for(err->code);

	if (status >= 500)
		pg_log_error("api", "%s %s: %s", r->method, r->path, err->msg);
	api_reply_error(r, status, "%s", err->msg);
}

void api_note(struct api_req *r, const char *fmt, ...)
{
	va_list ap;

	pg_buf_reset(&r->note);
	va_start(ap, fmt);
	if (pg_buf_vprintf(&r->note, fmt, ap) < 0) {
		char cut[1024];

		/* Over API_NOTE_MAX (long labels): log the start, which ends in
		 * "..." when cut. */
		va_end(ap);
		va_start(ap, fmt);
		pg_vfmt_cut(cut, sizeof(cut), fmt, ap);
		pg_buf_reset(&r->note);
		if (pg_buf_adds(&r->note, cut) < 0)
			pg_buf_reset(&r->note);
	}
	va_end(ap);
}

/* ---- clocks for the threads --------------------------------------------- */

int api_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t attr;
	int rc;

	if (pthread_condattr_init(&attr) != 0)
		return -1;
	rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
	     pthread_cond_init(c, &attr) == 0 ? 0 : -1;
	pthread_condattr_destroy(&attr);
	return rc;
}

/* ms from now on CLOCK_MONOTONIC, for pthread_cond_timedwait(). */
struct timespec api_abstime(int64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}
