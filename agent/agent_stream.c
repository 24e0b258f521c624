/* SPDX-License-Identifier: MIT */
/* The stream link of run-one (agent_stream.h). */
#include "agent_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "runone.h"
#include "timeutil.h"

#define STREAM_WAIT_SLICE_MS 100

/* Wait on s->cond (s->lock held) until the monotonic time at_ms, for one
 * slice at most, so that callers re-check their predicates. */
static void stream_wait(struct agent_stream *s, int64_t at_ms)
{
	int64_t now = pg_time_mono_ms(), until = at_ms;
	struct timespec ts;

	if (until > now + STREAM_WAIT_SLICE_MS)
		until = now + STREAM_WAIT_SLICE_MS;
	ts.tv_sec = (time_t)(until / 1000);
	ts.tv_nsec = (long)(until % 1000) * 1000000L;
	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
}

static void stream_set_lost(struct agent_stream *s, const char *why)
{
	if (!atomic_exchange(&s->lost, true))
		pg_log_warn("run-one", "the connection to the controller is lost: %s", why);
	pthread_mutex_lock(&s->lock);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

bool agent_stream_lost(struct agent_stream *s)
{
	return atomic_load(&s->lost);
}

int agent_stream_write(struct agent_stream *s, const char *line, struct pg_err *err)
{
	size_t len = strlen(line), off = 0;
	int rc = 0;

	if (atomic_load(&s->lost))
		return pg_err_set(err, PG_EIO, "the connection to the controller is lost");
	pthread_mutex_lock(&s->out_lock);
	while (off < len) {
		ssize_t n = write(s->out_fd, line + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = pg_err_errno(err, "write to the controller");
			break;
		}
		off += (size_t)n;
	}
	pthread_mutex_unlock(&s->out_lock);
	if (rc < 0)
		stream_set_lost(s, err->msg);
	return rc;
}

/* Write a line made by an agent_line_*() printer (taken). */
static int stream_put(struct agent_stream *s, char *line, struct pg_err *err)
{
	int rc;

	if (!line)
		return -1;
	rc = agent_stream_write(s, line, err);
	free(line);
	return rc;
}

/* One line the controller sent, on the reader thread. */
static void stream_dispatch(struct agent_stream *s, const char *line, size_t len)
{
	struct agent_line_in m = AGENT_LINE_IN_INIT;
	struct pg_err err = PG_ERR_INIT;
	size_t max;

	/* An mbox is decoded whole when a fetch waits for it (the line's own
	 * bound limits it), so that one too big for the fetch fails the
	 * fetch (PG_ETOOBIG) rather than leaving it waiting; an mbox nobody
	 * asked for is refused by the parser. */
	pthread_mutex_lock(&s->lock);
	max = s->fetch_waiting ? RUNONE_LINE_MAX : 0;
	pthread_mutex_unlock(&s->lock);
	if (agent_line_parse(line, len, max, &m, &err) < 0) {
		pg_log_warn("run-one", "ignoring a line from the controller: %s", err.msg);
		return;
	}
	pthread_mutex_lock(&s->lock);
	switch (m.type) {
	case AGENT_LINE_CANCEL:
		pg_log_info("run-one", "the controller cancelled the job: %s",
			    m.text ? m.text : "(no reason given)");
		atomic_store(&s->cancel, AGENT_CANCEL_CONTROLLER);
		break;
	case AGENT_LINE_MBOX:
		if (!s->fetch_waiting || s->fetch_answered) {
			pg_log_warn("run-one", "ignoring an mbox line nobody asked for");
			break;
		}
		s->fetch_answer = m;
		m = (struct agent_line_in)AGENT_LINE_IN_INIT;
		s->fetch_answered = true;
		break;
	case AGENT_LINE_ACK:
	case AGENT_LINE_REJECT:
		if (s->answered || m.job_id != s->want_job || m.attempt != s->want_attempt) {
			pg_log_warn("run-one", "ignoring an answer about job %lld attempt %lld: "
				    "not the result waited for", (long long)m.job_id,
				    (long long)m.attempt);
			break;
		}
		s->answer = m;
		m = (struct agent_line_in)AGENT_LINE_IN_INIT;
		s->answered = true;
		break;
	case AGENT_LINE_DONE:
		break;
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	agent_line_in_release(&m);
}

static bool stream_reader_stop(void *arg)
{
	struct agent_stream *s = arg;

	return atomic_load(&s->stop_reader);
}

static void *stream_reader(void *arg)
{
	struct agent_stream *s = arg;
	struct agent_stop stop = { stream_reader_stop, s };

	for (;;) {
		struct pg_err err = PG_ERR_INIT;
		const char *line;
		size_t len;
		int rc = agent_lines_next(&s->in, RUNONE_LINE_MAX, &stop, &line, &len, &err);

		if (rc == 2)
			break;
		if (rc == 0) {
			stream_set_lost(s, "stdin closed");
			break;
		}
		if (rc < 0) {
			stream_set_lost(s, err.msg);
			break;
		}
		stream_dispatch(s, line, len);
	}
	return NULL;
}

int agent_stream_init(struct agent_stream *s, int in_fd, int out_fd, struct pg_err *err)
{
	pthread_condattr_t ca;

	memset(s, 0, sizeof(*s));
	s->out_fd = out_fd;
	s->in = (struct agent_lines)AGENT_LINES_INIT(in_fd);
	s->fetch_answer = (struct agent_line_in)AGENT_LINE_IN_INIT;
	s->answer = (struct agent_line_in)AGENT_LINE_IN_INIT;
	atomic_init(&s->lost, false);
	atomic_init(&s->cancel, AGENT_CANCEL_NONE);
	atomic_init(&s->stop_reader, false);
	if (pthread_mutex_init(&s->out_lock, NULL) != 0)
		return pg_err_set(err, PG_EIO, "pthread_mutex_init failed");
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		pthread_mutex_destroy(&s->out_lock);
		return pg_err_set(err, PG_EIO, "pthread_mutex_init failed");
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	s->inited = true;
	return 0;
}

int agent_stream_start(struct agent_stream *s, struct pg_err *err)
{
	atomic_store(&s->stop_reader, false);
	if (agent_thread_start(stream_reader, s, false, &s->reader, err) < 0) {
		pg_err_prefix(err, "run-one reader thread");
		return -1;
	}
	s->reader_running = true;
	return 0;
}

void agent_stream_stop(struct agent_stream *s)
{
	if (!s->reader_running)
		return;
	atomic_store(&s->stop_reader, true);
	pthread_join(s->reader, NULL);
	s->reader_running = false;
}

void agent_stream_release(struct agent_stream *s)
{
	if (!s->inited)
		return;
	agent_stream_stop(s);
	agent_lines_release(&s->in);
	agent_line_in_release(&s->fetch_answer);
	agent_line_in_release(&s->answer);
	pthread_mutex_destroy(&s->out_lock);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	s->inited = false;
}

int agent_stream_fetch(struct agent_stream *s, const struct agent_stop *stop, const char *url,
		       int64_t wait_ms, struct pg_buf *out, struct pg_err *err)
{
	int64_t deadline = pg_time_mono_ms() + wait_ms;
	struct agent_line_in m = AGENT_LINE_IN_INIT;
	int rc = -1;

	pthread_mutex_lock(&s->lock);
	agent_line_in_release(&s->fetch_answer);
	s->fetch_answered = false;
	s->fetch_waiting = true;
	pthread_mutex_unlock(&s->lock);
	if (stream_put(s, agent_line_fetch(url, err), err) < 0) {
		pg_err_prefix(err, "mbox %s", url);
		goto out;
	}
	pthread_mutex_lock(&s->lock);
	while (!s->fetch_answered && !atomic_load(&s->lost) && pg_time_mono_ms() < deadline &&
	       !(stop && stop->fn(stop->arg)))
		stream_wait(s, deadline);
	if (s->fetch_answered) {
		m = s->fetch_answer;
		s->fetch_answer = (struct agent_line_in)AGENT_LINE_IN_INIT;
	}
	s->fetch_waiting = false;
	s->fetch_answered = false;
	pthread_mutex_unlock(&s->lock);
	if (m.type != AGENT_LINE_MBOX) {
		pg_err_set(err, PG_ETIMEOUT, "mbox %s: %s", url,
			   atomic_load(&s->lost) ? "the connection to the controller is lost" :
			   stop && stop->fn(stop->arg) ? "stopped" : "no answer in time");
		goto out;
	}
	if (!m.has_data) {
		pg_err_set(err, PG_EIO, "mbox %s: the controller answered: %s", url,
			   m.text ? m.text : "?");
		goto out;
	}
	pg_buf_reset(out);
	if (pg_buf_add(out, m.data.data ? m.data.data : "", m.data.len) < 0) {
		pg_err_set(err, PG_ETOOBIG, "mbox %s: %zu bytes, more than %zu", url, m.data.len,
			   out->max);
		goto out;
	}
	rc = 0;
out:
	agent_line_in_release(&m);
	return rc;
}

int agent_stream_wait_answer(struct agent_stream *s, int64_t wait_ms,
			     const struct agent_stop *stop, struct agent_line_in *out)
{
	int64_t deadline = pg_time_mono_ms() + wait_ms;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	while (!s->answered && !atomic_load(&s->lost) && pg_time_mono_ms() < deadline &&
	       !(stop && stop->fn(stop->arg)))
		stream_wait(s, deadline);
	if (s->answered) {
		*out = s->answer;
		s->answer = (struct agent_line_in)AGENT_LINE_IN_INIT;
		rc = 1;
	}
	s->answered = false;
	s->want_job = 0;
	s->want_attempt = 0;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void agent_stream_expect(struct agent_stream *s, int64_t job_id, int64_t attempt)
{
	pthread_mutex_lock(&s->lock);
	agent_line_in_release(&s->answer);
	s->answered = false;
	s->want_job = job_id;
	s->want_attempt = attempt;
	pthread_mutex_unlock(&s->lock);
}

/* The link's operations. */
static enum agent_answer stream_beat(struct agent_hb *hb, void *arg, const char *stage,
				     int progress, const struct agent_stop *stop, bool *cancel,
				     struct pg_err *err)
{
	struct agent_stream *s = arg;

	(void)stop;
	*cancel = false;
	/* A lost connection ends the heartbeats; the holder sees it through
	 * abandoned(). */
	if (stream_put(s, agent_line_heartbeat(hb->job_id, hb->attempt, stage, progress, err),
		       err) < 0)
		return agent_stream_lost(s) ? AGENT_ANS_STOPPED : AGENT_ANS_RETRY;
	return AGENT_ANS_OK;
}

static int stream_hb_start(void *arg, struct agent_hb *hb, const struct agent_job *job,
			   struct pg_err *err)
{
	struct agent_stream *s = arg;

	return agent_hb_start_beat(hb, stream_beat, s, job, s->max_backoff_ms, err);
}

static enum agent_cancel stream_cancelled(void *arg)
{
	struct agent_stream *s = arg;

	return (enum agent_cancel)atomic_load(&s->cancel);
}

static const char *stream_abandoned(void *arg)
{
	struct agent_stream *s = arg;

	if (s->signalled && *s->signalled)
		return AGENT_STREAM_SIGNAL_DETAIL;
	return atomic_load(&s->lost) ? AGENT_STREAM_LOST_DETAIL : NULL;
}

static void stream_log(void *arg, const struct agent_job *job, const struct agent_stop *stop,
		       const char *stage, const char *text, size_t len)
{
	struct agent_stream *s = arg;
	struct pg_err err = PG_ERR_INIT;

	(void)stop;
	if (stream_put(s, agent_line_log(job->id, job->attempt, stage, text, len, &err),
		       &err) < 0)
		pg_log_warn("run-one", "job %lld attempt %lld: a log chunk of stage '%s' (%zu "
			    "bytes) was not sent: %s", (long long)job->id, (long long)job->attempt,
			    stage, len, err.msg);
}

static int stream_fetch_op(void *arg, const struct agent_stop *stop, const char *url,
			   struct pg_buf *out, struct pg_err *err)
{
	return agent_stream_fetch(arg, stop, url, AGENT_STREAM_FETCH_WAIT_S * 1000LL, out, err);
}

static bool stream_signalled(void *arg)
{
	struct agent_stream *s = arg;

	return s->signalled && *s->signalled;
}

static int stream_deliver(void *arg, const struct agent_job *job, const char *body,
			  size_t len, enum agent_hold_end *end, struct pg_err *err)
{
	struct agent_stream *s = arg;
	struct agent_stop stop = { stream_signalled, s };
	struct agent_line_in m = AGENT_LINE_IN_INIT;
	struct agent_offer_answer ans;
	int rc = -1;

	*end = AGENT_HOLD_SPOOLED;
	agent_stream_expect(s, job->id, job->attempt);
	if (stream_put(s, agent_line_result(job->id, job->attempt, body, len, err), err) < 0) {
		/* Spooled: a later --collect hands it over. */
		pg_log_warn("run-one", "job %lld attempt %lld: the result line was not sent: %s; "
			    "the result stays in the spool", (long long)job->id,
			    (long long)job->attempt, err->msg);
		pg_err_clear(err);
		rc = 0;
		goto out;
	}
	if (!agent_stream_wait_answer(s, RUNONE_ACK_WAIT_S * 1000LL, &stop, &m)) {
		s->ack_timed_out = !agent_stream_lost(s) && !stream_signalled(s);
		pg_log_warn("run-one", "job %lld attempt %lld: %s; the result stays in the spool",
			    (long long)job->id, (long long)job->attempt,
			    s->ack_timed_out ? "no answer to the result in time" :
			    agent_stream_lost(s) ? "the connection was lost before the answer" :
			    "stopped by a signal before the answer");
		rc = 0;
		goto out;
	}
	memset(&ans, 0, sizeof(ans));
	if (m.type == AGENT_LINE_ACK) {
		ans.offer = AGENT_OFFER_ACKED;
		memcpy(ans.status, m.status, sizeof(ans.status));
	} else {
		ans.offer = AGENT_OFFER_REFUSED;
		ans.http_status = m.http_status;
		ans.answer = m.text;
	}
	if (agent_hold_settle(s->hold, job->id, job->attempt, &ans, err) < 0)
		goto out;
	*end = AGENT_HOLD_DELIVERED;
	rc = 0;
out:
	agent_line_in_release(&m);
	return rc;
}

static int stream_offer(void *arg, int64_t job_id, int64_t attempt, const char *body,
			size_t len, struct agent_offer_answer *ans, struct pg_err *err)
{
	struct agent_stream *s = arg;

	ans->offer = AGENT_OFFER_SENT;
	if (stream_put(s, agent_line_result(job_id, attempt, body, len, err), err) < 0) {
		if (!agent_stream_lost(s))
			return -1;	/* not a line: the spool holds a bad file */
		ans->offer = AGENT_OFFER_LATER;
	}
	return 0;
}

void agent_stream_link(struct agent_stream *s, struct agent_link *link)
{
	*link = (struct agent_link){
		.hb_start = stream_hb_start, .cancelled = stream_cancelled,
		.abandoned = stream_abandoned, .log = stream_log, .fetch = stream_fetch_op,
		.deliver = stream_deliver, .offer = stream_offer, .arg = s,
	};
}
