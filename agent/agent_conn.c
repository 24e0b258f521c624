/* SPDX-License-Identifier: MIT */
/* Requests to the controller, each abandonable by its caller. */
#include "agent_conn.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsutil.h"
#include "json.h"
#include "timeutil.h"
#include "token.h"

/* Helper threads of abandoned requests still running.  Process-wide on
 * purpose: they outlive the connection and the daemon's own state, and
 * only the process's exit path asks. */
static atomic_int conn_abandoned_count;

const char *agent_answer_name(enum agent_answer a)
{
	switch (a) {
	case AGENT_ANS_OK:
		return "ok";
	case AGENT_ANS_RETRY:
		return "retry";
	case AGENT_ANS_AUTH:
		return "auth";
	case AGENT_ANS_NOTFOUND:
		return "not-found";
	case AGENT_ANS_CONFLICT:
		return "conflict";
	case AGENT_ANS_REFUSED:
		return "refused";
	case AGENT_ANS_STOPPED:
		return "stopped";
	}
	return "?";
}

enum agent_answer agent_answer_of(int rc, long status)
{
	if (rc < 0)
		return AGENT_ANS_RETRY;
	if (status >= 200 && status < 300)
		return AGENT_ANS_OK;
	if (status == 401 || status == 403)
		return AGENT_ANS_AUTH;
	if (status == 404)
		return AGENT_ANS_NOTFOUND;
	if (status == 409)
		return AGENT_ANS_CONFLICT;
	/* Request timeout, too early, too many requests: the request was
	 * fine, the moment was not. */
	if (status == 408 || status == 425 || status == 429 || status >= 500)
		return AGENT_ANS_RETRY;
	return AGENT_ANS_REFUSED;
}

int64_t agent_retry_delay_ms(enum agent_answer ans, unsigned int failures, int64_t max_ms,
			     int64_t retry_after_ms, uint64_t *rand_state)
{
	int64_t floor_ms = AGENT_RETRY_FLOOR_MS, d;

	if (ans == AGENT_ANS_AUTH)
		floor_ms = max_ms < AGENT_AUTH_FLOOR_MS ? max_ms : AGENT_AUTH_FLOOR_MS;
	if (floor_ms < AGENT_RETRY_FLOOR_MS)
		floor_ms = AGENT_RETRY_FLOOR_MS;
	d = pg_backoff_ms(failures, AGENT_BACKOFF_BASE_MS, max_ms, rand_state);
	if (retry_after_ms > d)
		d = retry_after_ms < max_ms ? retry_after_ms : max_ms;
	return d < floor_ms ? floor_ms : d;
}

char *agent_token_read(const char *path, struct pg_err *err)
{
	char buf[AGENT_TOKEN_MAX + 1];
	char *tok = NULL;

	if (pg_token_read(path, "token_file", 1, 0, buf, sizeof(buf), err) < 0)
		goto out;
	tok = strdup(buf);
	if (!tok)
		pg_err_set(err, PG_ENOMEM, "out of memory");
out:
	explicit_bzero(buf, sizeof(buf));
	return tok;
}

int agent_conn_init(struct agent_conn *c, const char *url, const char *token_file,
		    struct pg_err *err)
{
	size_t n = strlen(url);

	memset(c, 0, sizeof(*c));
	while (n > 0 && url[n - 1] == '/')
		n--;
	c->base_url = strndup(url, n);
	if (!c->base_url)
		goto nomem;
	if (token_file) {
		c->token_file = strdup(token_file);
		if (!c->token_file)
			goto nomem;
		c->token = agent_token_read(token_file, err);
		if (!c->token)
			goto fail;
	}
	return 0;
nomem:
	pg_err_set(err, PG_ENOMEM, "out of memory");
fail:
	agent_conn_release(c);
	return -1;
}

int agent_conn_clone(struct agent_conn *dst, const struct agent_conn *src,
		     struct pg_err *err)
{
	memset(dst, 0, sizeof(*dst));
	dst->base_url = strdup(src->base_url);
	dst->token_file = src->token_file ? strdup(src->token_file) : NULL;
	dst->token = src->token ? strdup(src->token) : NULL;
	if (!dst->base_url || (src->token_file && !dst->token_file) ||
	    (src->token && !dst->token)) {
		agent_conn_release(dst);
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	}
	return 0;
}

void agent_conn_release(struct agent_conn *c)
{
	free(c->base_url);
	free(c->token_file);
	free(c->token);
	pg_http_client_free(c->client);
	memset(c, 0, sizeof(*c));
}

int agent_conn_reload_token(struct agent_conn *c, struct pg_err *err)
{
	char *tok;
	int changed;

	if (!c->token_file)
		return 0;
	tok = agent_token_read(c->token_file, err);
	if (!tok)
		return -1;
	changed = !c->token || strcmp(tok, c->token) != 0;
	free(c->token);
	c->token = tok;
	return changed;
}

int agent_thread_start(void *(*fn)(void *), void *arg, bool detached, pthread_t *tid,
		       struct pg_err *err)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (pthread_attr_init(&attr) != 0)
		return pg_err_set(err, PG_EIO, "pthread_attr_init failed");
	if (detached)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* The new thread inherits the creator's mask: block everything for
	 * the creation only. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		errno = rc;
		return pg_err_errno(err, "pthread_create");
	}
	if (tid)
		*tid = t;
	return 0;
}

/*
 * One request in flight.  Ownership: the calling thread owns it until it
 * joins the helper; once it abandons the request (under `lock`), the
 * helper owns it and frees it when the transfer ends.
 */
struct conn_call {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	bool abandoned;
	char *url;
	char *token;
	char *content_type;
	char *body;
	size_t len;
	size_t max_body;	/* 0: lib/http.h's default */
	const char *method;	/* a string literal: may outlive the caller */
	long timeout_ms;
	struct pg_http_client *client;
	struct pg_http_response resp;
	struct pg_err err;
	int rc;
};

static void conn_call_free(struct conn_call *call)
{
	pthread_mutex_destroy(&call->lock);
	pthread_cond_destroy(&call->cond);
	free(call->url);
	free(call->token);
	free(call->content_type);
	free(call->body);
	pg_http_client_free(call->client);
	pg_http_response_release(&call->resp);
	free(call);
}

static void *conn_call_thread(void *arg)
{
	struct conn_call *call = arg;
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	bool abandoned;

	o.timeout_ms = call->timeout_ms;
	if (o.connect_timeout_ms > call->timeout_ms)
		o.connect_timeout_ms = call->timeout_ms;
	o.bearer_token = call->token;
	o.content_type = call->content_type[0] ? call->content_type : NULL;
	o.max_body = call->max_body ? call->max_body : o.max_body;
	call->rc = pg_http_client_request(call->client, call->method, call->url,
					  call->len || strcmp(call->method, "GET") != 0 ?
					  call->body : NULL, call->len, &o, &call->resp,
					  &call->err);
	pthread_mutex_lock(&call->lock);
	call->done = true;
	abandoned = call->abandoned;
	pthread_cond_signal(&call->cond);
	pthread_mutex_unlock(&call->lock);
	if (abandoned) {
		conn_call_free(call);
		atomic_fetch_sub(&conn_abandoned_count, 1);
	}
	return NULL;
}

static struct conn_call *conn_call_new(const struct agent_conn *c, const char *method,
				       const char *path, const char *content_type,
				       const void *body, size_t len, long timeout_ms)
{
	struct conn_call *call = calloc(1, sizeof(*call));
	pthread_condattr_t ca;
	size_t ulen;

	if (!call)
		return NULL;
	pg_http_response_init(&call->resp);
	pthread_mutex_init(&call->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&call->cond, &ca);
	pthread_condattr_destroy(&ca);
	ulen = strlen(c->base_url) + strlen(path) + 1;
	call->url = malloc(ulen);
	call->token = c->token ? strdup(c->token) : NULL;
	call->content_type = strdup(content_type ? content_type : "");
	call->method = method;
	call->body = malloc(len + 1);
	if (!call->url || (c->token && !call->token) || !call->content_type || !call->body) {
		conn_call_free(call);
		return NULL;
	}
	memcpy(call->url, c->base_url, strlen(c->base_url));
	memcpy(call->url + strlen(c->base_url), path, strlen(path) + 1);
	if (len)
		memcpy(call->body, body, len);
	call->body[len] = '\0';
	call->len = len;
	call->timeout_ms = timeout_ms;
	return call;
}

/* The controller's {"error": "..."}, or the start of whatever it sent,
 * printable. */
static void conn_describe_body(const struct pg_buf *body, char *out, size_t outlen)
{
	struct pg_err ignored = PG_ERR_INIT;
	const char *msg = NULL;
	cJSON *root = NULL;
	size_t o = 0;

	if (body->len && pg_json_parse(body->data, body->len, &root, &ignored) == 0 &&
	    pg_json_get_string(root, "error", false, &msg, &ignored) > 0)
		;
	else
		msg = pg_buf_str(body);
	for (size_t i = 0; msg[i] && o + 1 < outlen && i < 200; i++) {
		unsigned char ch = (unsigned char)msg[i];

		out[o++] = (ch < ' ' || ch == 0x7f) ? ' ' : (char)ch;
	}
	out[o] = '\0';
	cJSON_Delete(root);
}

static void conn_wait_slice(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += AGENT_CONN_POLL_MS * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

enum agent_answer agent_conn_post(struct agent_conn *c, const char *path,
				  const char *content_type, const void *body, size_t len,
				  long timeout_ms, const struct agent_stop *stop,
				  struct pg_http_response *resp, struct pg_err *err)
{
	return agent_conn_request(c, "POST", path, content_type, body, len, 0, timeout_ms, stop,
				  resp, err);
}

enum agent_answer agent_conn_request(struct agent_conn *c, const char *method,
				     const char *path, const char *content_type,
				     const void *body, size_t len, size_t max_body,
				     long timeout_ms, const struct agent_stop *stop,
				     struct pg_http_response *resp, struct pg_err *err)
{
	struct conn_call *call;
	enum agent_answer ans;
	char detail[256];
	struct timespec ts;
	pthread_t tid;

	pg_http_response_release(resp);
	resp->status = 0;
	if (stop && stop->fn(stop->arg)) {
		pg_err_set(err, PG_ETIMEOUT, "%s %s: not sent: stopping", method, path);
		return AGENT_ANS_STOPPED;
	}
	if (!c->client) {
		c->client = pg_http_client_new(err);
		if (!c->client)
			return AGENT_ANS_RETRY;
	}
	call = conn_call_new(c, method, path, content_type, body, len, timeout_ms);
	if (call)
		call->max_body = max_body;
	if (!call) {
		pg_err_set(err, PG_ENOMEM, "%s %s: out of memory", method, path);
		return AGENT_ANS_RETRY;
	}
	call->client = c->client;
	c->client = NULL;
	if (agent_thread_start(conn_call_thread, call, false, &tid, err) < 0) {
		c->client = call->client;
		call->client = NULL;
		conn_call_free(call);
		pg_err_prefix(err, "%s %s", method, path);
		return AGENT_ANS_RETRY;
	}
	pthread_mutex_lock(&call->lock);
	while (!call->done) {
		if (stop && stop->fn(stop->arg)) {
			call->abandoned = true;
			atomic_fetch_add(&conn_abandoned_count, 1);
			pthread_mutex_unlock(&call->lock);
			pthread_detach(tid);
			pg_err_set(err, PG_ETIMEOUT, "%s %s: abandoned: stopping", method, path);
			return AGENT_ANS_STOPPED;
		}
		conn_wait_slice(&ts);
		pthread_cond_timedwait(&call->cond, &call->lock, &ts);
	}
	pthread_mutex_unlock(&call->lock);
	pthread_join(tid, NULL);

	/* The transfer is over: take back the handle and the response. */
	c->client = call->client;
	call->client = NULL;
	*resp = call->resp;
	pg_http_response_init(&call->resp);
	ans = agent_answer_of(call->rc, resp->status);
	if (call->rc < 0) {
		*err = call->err;
	} else if (ans != AGENT_ANS_OK) {
		conn_describe_body(&resp->body, detail, sizeof(detail));
		pg_err_set(err, ans == AGENT_ANS_RETRY ? PG_EIO : PG_EINVAL,
			   "%s %s: HTTP %ld%s%s", method, path, resp->status, detail[0] ? ": " : "",
			   detail);
	}
	conn_call_free(call);
	return ans;
}

int agent_conn_abandoned(void)
{
	return atomic_load(&conn_abandoned_count);
}
