/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/agent_conn.c and agent/agent_proto.c: how answers
 * are classed, the backoff's bounds, the token file, each endpoint's
 * request and answer against a canned one-shot server on loopback, and
 * walking away from a request that does not answer.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent_conn.h"
#include "agent_hb.h"
#include "agent_job.h"
#include "agent_proto.h"
#include "fsutil.h"
#include "timeutil.h"

/* A server that accepts one connection, keeps the request, sends
 * `response` and closes. */
struct canned {
	int lfd;
	int port;
	const char *response;
	char request[16384];
	size_t request_len;
	pthread_t tid;
};

static void *canned_thread(void *arg)
{
	struct canned *c = arg;
	int fd = accept(c->lfd, NULL, NULL);
	size_t want = 0;

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n = read(fd, c->request + c->request_len,
				 sizeof(c->request) - 1 - c->request_len);
		char *end, *cl;

		if (n <= 0)
			break;
		c->request_len += (size_t)n;
		c->request[c->request_len] = '\0';
		end = strstr(c->request, "\r\n\r\n");
		if (!end)
			continue;
		if (!want) {
			cl = strstr(c->request, "Content-Length:");
			want = (size_t)(end + 4 - c->request) +
			       (cl ? strtoul(cl + 15, NULL, 10) : 0);
		}
		if (c->request_len >= want)
			break;
	}
	if (write(fd, c->response, strlen(c->response)) < 0)
		perror("canned write");
	close(fd);
	return NULL;
}

static void canned_start(struct canned *c, const char *response, int serve)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	memset(c, 0, sizeof(*c));
	c->response = response;
	c->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(c->lfd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(c->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(c->lfd, 4), 0);
	assert_int_equal(getsockname(c->lfd, (struct sockaddr *)&a, &len), 0);
	c->port = ntohs(a.sin_port);
	if (serve)
		assert_int_equal(pthread_create(&c->tid, NULL, canned_thread, c), 0);
}

static void canned_stop(struct canned *c, int served)
{
	if (served)
		pthread_join(c->tid, NULL);
	close(c->lfd);
}

/* A connection to the canned server with token "tok-1". */
static void conn_to(struct agent_conn *conn, const struct canned *c, char *tokfile)
{
	struct pg_err err = PG_ERR_INIT;
	char url[64];
	int fd = mkstemp(tokfile);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "tok-1\n", 6), 6);
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", c->port);
	assert_int_equal(agent_conn_init(conn, url, tokfile, &err), 0);
}

/* An answer whose body runs to the end of the connection. */
#define HTTP_JSON(status) \
	"HTTP/1.1 " status "\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"

static void test_answer_of(void **state)
{
	(void)state;
	assert_int_equal(agent_answer_of(-1, 0), AGENT_ANS_RETRY);
	assert_int_equal(agent_answer_of(0, 200), AGENT_ANS_OK);
	assert_int_equal(agent_answer_of(0, 204), AGENT_ANS_OK);
	assert_int_equal(agent_answer_of(0, 401), AGENT_ANS_AUTH);
	assert_int_equal(agent_answer_of(0, 403), AGENT_ANS_AUTH);
	assert_int_equal(agent_answer_of(0, 404), AGENT_ANS_NOTFOUND);
	assert_int_equal(agent_answer_of(0, 409), AGENT_ANS_CONFLICT);
	assert_int_equal(agent_answer_of(0, 429), AGENT_ANS_RETRY);
	assert_int_equal(agent_answer_of(0, 408), AGENT_ANS_RETRY);
	assert_int_equal(agent_answer_of(0, 500), AGENT_ANS_RETRY);
	assert_int_equal(agent_answer_of(0, 503), AGENT_ANS_RETRY);
	assert_int_equal(agent_answer_of(0, 400), AGENT_ANS_REFUSED);
	assert_int_equal(agent_answer_of(0, 413), AGENT_ANS_REFUSED);
	assert_int_equal(agent_answer_of(0, 302), AGENT_ANS_REFUSED);
	assert_string_equal(agent_answer_name(AGENT_ANS_CONFLICT), "conflict");
}

/* Full jitter within the cap, never under the floor, Retry-After
 * honoured up to the cap. */
static void test_backoff_bounds(void **state)
{
	uint64_t rnd = 42;
	int64_t lo_seen = INT64_MAX, hi_seen = 0;

	(void)state;
	for (unsigned int f = 0; f < 12; f++) {
		int64_t cap = 1000LL << f;

		if (cap > 60000)
			cap = 60000;
		for (int i = 0; i < 2000; i++) {
			int64_t d = agent_retry_delay_ms(AGENT_ANS_RETRY, f, 60000, -1, &rnd);

			assert_true(d >= AGENT_RETRY_FLOOR_MS && d <= cap);
			if (f == 11) {
				lo_seen = d < lo_seen ? d : lo_seen;
				hi_seen = d > hi_seen ? d : hi_seen;
			}
			d = agent_retry_delay_ms(AGENT_ANS_AUTH, f, 60000, -1, &rnd);
			assert_true(d >= AGENT_AUTH_FLOOR_MS && d <= (cap > 5000 ? cap : 5000));
		}
	}
	/* Jitter really spreads over the range at the cap. */
	assert_true(lo_seen < 10000 && hi_seen > 50000);
	/* The floor of a wrong token follows a small max_backoff. */
	assert_int_equal(agent_retry_delay_ms(AGENT_ANS_AUTH, 0, 2000, -1, &rnd), 2000);
	/* max_backoff under the floor: the floor wins, no busy loop. */
	assert_int_equal(agent_retry_delay_ms(AGENT_ANS_RETRY, 5, 50, -1, &rnd), 100);
	/* Retry-After: at least what the controller asked, at most the cap. */
	for (int i = 0; i < 100; i++) {
		int64_t d = agent_retry_delay_ms(AGENT_ANS_RETRY, 0, 60000, 3000, &rnd);

		assert_true(d == 3000);
		d = agent_retry_delay_ms(AGENT_ANS_RETRY, 0, 60000, 600000, &rnd);
		assert_int_equal(d, 60000);
	}
}

static void test_token_read(void **state)
{
	static const struct {
		const char *text;
		const char *want;	/* NULL: an error */
	} cases[] = {
		{ "abc\n", "abc" }, { "abc", "abc" }, { "abc \r\n", "abc" },
		{ "abc\nsecond line\n", "abc" }, { "", NULL }, { "\n", NULL }, { "  \n", NULL },
		{ "a b\n", NULL }, { "a\tb", NULL },
	};
	struct pg_err err = PG_ERR_INIT;
	char path[] = "/tmp/pg-test-token.XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *tok;

		assert_int_equal(pg_write_file_atomic(path, cases[i].text, strlen(cases[i].text),
						      0600, &err), 0);
		tok = agent_token_read(path, &err);
		if (cases[i].want) {
			assert_non_null(tok);
			assert_string_equal(tok, cases[i].want);
		} else {
			assert_null(tok);
			assert_non_null(strstr(err.msg, "token_file"));
		}
		free(tok);
	}
	unlink(path);
	assert_null(agent_token_read(path, &err));
	assert_non_null(strstr(err.msg, "token_file"));
	assert_non_null(strstr(err.msg, path));
}

static void test_register(void **state)
{
	struct pg_http_response resp = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct agent_conn conn;
	struct canned c;
	char tokfile[] = "/tmp/pg-test-tok.XXXXXX", name[64];
	cJSON *labels = cJSON_Parse("{\"vendor\":\"arm\"}"), *facts = cJSON_Parse("{\"cores\":4}");

	(void)state;
	canned_start(&c, HTTP_JSON("200 OK") "{\"agent\":\"lab-7\",\"labels\":{\"x\":\"y\"}}  ", 1);
	conn_to(&conn, &c, tokfile);
	assert_int_equal(agent_proto_register(&conn, labels, facts, 5000, NULL, name,
					      sizeof(name), &resp, &err), AGENT_ANS_OK);
	canned_stop(&c, 1);
	assert_string_equal(name, "lab-7");
	assert_non_null(strstr(c.request, "POST /api/v1/agents/register HTTP/1.1\r\n"));
	assert_non_null(strstr(c.request, "\r\nAuthorization: Bearer tok-1\r\n"));
	assert_non_null(strstr(c.request, "\r\nContent-Type: application/json\r\n"));
	assert_non_null(strstr(c.request,
			       "\r\n\r\n{\"labels\":{\"vendor\":\"arm\"},\"facts\":{\"cores\":4}}"));

	/* 401: the class says so, the message carries the controller's error. */
	canned_start(&c, HTTP_JSON("401 Unauthorized") "{\"error\":\"wrong token\"}", 1);
	agent_conn_release(&conn);
	unlink(tokfile);
	memcpy(tokfile + strlen(tokfile) - 6, "XXXXXX", 6);
	conn_to(&conn, &c, tokfile);
	assert_int_equal(agent_proto_register(&conn, labels, facts, 5000, NULL, name,
					      sizeof(name), &resp, &err), AGENT_ANS_AUTH);
	canned_stop(&c, 1);
	assert_string_equal(err.msg, "POST /api/v1/agents/register: HTTP 401: wrong token");

	/* 200 without "agent": the contract is broken. */
	canned_start(&c, HTTP_JSON("200 OK") "{}", 1);
	agent_conn_release(&conn);
	unlink(tokfile);
	memcpy(tokfile + strlen(tokfile) - 6, "XXXXXX", 6);
	conn_to(&conn, &c, tokfile);
	assert_int_equal(agent_proto_register(&conn, labels, facts, 5000, NULL, name,
					      sizeof(name), &resp, &err), AGENT_ANS_REFUSED);
	canned_stop(&c, 1);
	assert_non_null(strstr(err.msg, "field 'agent': missing"));

	unlink(tokfile);
	agent_conn_release(&conn);
	pg_http_response_release(&resp);
	cJSON_Delete(labels);
	cJSON_Delete(facts);
}

/* One request of each endpoint against one canned answer. */
static enum agent_answer one(const char *response, char *request, size_t reqlen,
			     enum agent_answer (*call)(struct agent_conn *, void *), void *arg)
{
	struct agent_conn conn;
	struct canned c;
	char tokfile[] = "/tmp/pg-test-tok.XXXXXX";
	enum agent_answer ans;

	canned_start(&c, response, 1);
	conn_to(&conn, &c, tokfile);
	ans = call(&conn, arg);
	canned_stop(&c, 1);
	snprintf(request, reqlen, "%s", c.request);
	agent_conn_release(&conn);
	unlink(tokfile);
	return ans;
}

struct call_args {
	struct pg_http_response resp;
	struct pg_err err;
	cJSON *job;
	bool cancel;
	char status[AGENT_RESULT_STATUS_MAX];
	int64_t offset;			/* of the log chunk */
	int64_t bytes;			/* in the log answer */
};

static enum agent_answer call_lease(struct agent_conn *conn, void *arg)
{
	struct call_args *a = arg;

	return agent_proto_lease(conn, 7, 10000, NULL, &a->job, &a->resp, &a->err);
}

static enum agent_answer call_heartbeat(struct agent_conn *conn, void *arg)
{
	struct call_args *a = arg;

	return agent_proto_heartbeat(conn, 12, 3, "run", 40, 5000, NULL, &a->cancel, &a->resp,
				     &a->err);
}

static enum agent_answer call_log(struct agent_conn *conn, void *arg)
{
	struct call_args *a = arg;

	return agent_proto_log(conn, 12, 2, "build", a->offset, "line 1\n", 7, 5000, NULL,
			       &a->bytes, &a->resp, &a->err);
}

static enum agent_answer call_mbox(struct agent_conn *conn, void *arg)
{
	struct call_args *a = arg;

	return agent_proto_mbox(conn, "https://ci.example.org/api/v1/series/7/mbox", 64, 5000,
				NULL, &a->resp, &a->err);
}

static enum agent_answer call_result(struct agent_conn *conn, void *arg)
{
	struct call_args *a = arg;

	return agent_proto_result(conn, 12, 3, "{\"attempt\":3}", 13, 5000, NULL, a->status,
				  sizeof(a->status), &a->resp, &a->err);
}

static void test_endpoints(void **state)
{
	struct call_args a;
	char req[16384];

	(void)state;
	memset(&a, 0, sizeof(a));
	pg_http_response_init(&a.resp);

	/* Lease: a job, nothing (204), and a 200 without a job. */
	assert_int_equal(one(HTTP_JSON("200 OK") "{\"job\":{\"id\":5,\"attempt\":1}}   ",
			     req, sizeof(req), call_lease, &a), AGENT_ANS_OK);
	assert_non_null(strstr(req, "POST /api/v1/lease HTTP/1.1\r\n"));
	assert_non_null(strstr(req, "\r\n\r\n{\"wait_s\":7}"));
	assert_non_null(a.job);
	assert_int_equal(cJSON_GetObjectItem(a.job, "id")->valueint, 5);
	cJSON_Delete(a.job);
	assert_int_equal(one("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", req,
			     sizeof(req), call_lease, &a), AGENT_ANS_OK);
	assert_null(a.job);
	assert_int_equal(one(HTTP_JSON("200 OK") "{\"job\":[1]}", req, sizeof(req),
			     call_lease, &a), AGENT_ANS_REFUSED);
	assert_null(a.job);
	assert_non_null(strstr(a.err.msg, "field 'job'"));

	/* Heartbeat: its body, cancel, 409, 404. */
	assert_int_equal(one(HTTP_JSON("200 OK") "{\"cancel\":true,\"lease_expires\":1800000000}",
			     req, sizeof(req), call_heartbeat, &a), AGENT_ANS_OK);
	assert_true(a.cancel);
	assert_non_null(strstr(req, "POST /api/v1/jobs/12/heartbeat HTTP/1.1\r\n"));
	assert_non_null(strstr(req, "\r\n\r\n{\"attempt\":3,\"stage\":\"run\",\"progress\":40}"));
	assert_int_equal(one(HTTP_JSON("200 OK") "{\"cancel\":false", req, sizeof(req),
			     call_heartbeat, &a), AGENT_ANS_REFUSED);
	assert_int_equal(one(HTTP_JSON("409 Conflict") "{}", req, sizeof(req),
			     call_heartbeat, &a), AGENT_ANS_CONFLICT);
	assert_int_equal(one(HTTP_JSON("404 Not Found") "{}", req, sizeof(req),
			     call_heartbeat, &a), AGENT_ANS_NOTFOUND);

	/* Logs: the stage and attempt in the query, text/plain; the offset
	 * when known; the size the answer gives. */
	a.offset = -1;
	assert_int_equal(one(HTTP_JSON("200 OK") "{\"bytes\":7}", req, sizeof(req),
			     call_log, &a), AGENT_ANS_OK);
	assert_non_null(strstr(req, "POST /api/v1/jobs/12/logs?attempt=2&stage=build HTTP/1.1"));
	assert_non_null(strstr(req, "\r\nContent-Type: text/plain; charset=utf-8\r\n"));
	assert_non_null(strstr(req, "\r\n\r\nline 1\n"));
	assert_int_equal(a.bytes, 7);
	a.offset = 7;
	assert_int_equal(one(HTTP_JSON("200 OK") "{\"bytes\":14}", req, sizeof(req),
			     call_log, &a), AGENT_ANS_OK);
	assert_non_null(strstr(req, "POST /api/v1/jobs/12/logs?attempt=2&stage=build&offset=7 HTTP/1.1"));
	assert_int_equal(a.bytes, 14);
	/* An answer without the size still acknowledges the chunk. */
	assert_int_equal(one(HTTP_JSON("200 OK") "{}", req, sizeof(req), call_log, &a),
			 AGENT_ANS_OK);
	assert_int_equal(a.bytes, -1);

	/* Result: the bytes as given; the three statuses that acknowledge,
	 * and anything else that does not. */
	assert_int_equal(one(HTTP_JSON("200 OK") "{\"status\":\"recorded\"}", req,
			     sizeof(req), call_result, &a), AGENT_ANS_OK);
	assert_string_equal(a.status, "recorded");
	assert_non_null(strstr(req, "POST /api/v1/jobs/12/result HTTP/1.1\r\n"));
	assert_non_null(strstr(req, "\r\n\r\n{\"attempt\":3}"));
	assert_int_equal(one(HTTP_JSON("200 OK") "{\"status\":\"duplicate\"}", req,
			     sizeof(req), call_result, &a), AGENT_ANS_OK);
	assert_int_equal(one(HTTP_JSON("200 OK") "{\"status\":\"acknowledged\"}", req,
			     sizeof(req), call_result, &a), AGENT_ANS_OK);
	assert_int_equal(one(HTTP_JSON("200 OK") "{\"status\":\"maybe\"}", req,
			     sizeof(req), call_result, &a), AGENT_ANS_REFUSED);
	assert_int_equal(one(HTTP_JSON("409 Conflict") "{\"error\":\"recorded\"}", req,
			     sizeof(req), call_result, &a), AGENT_ANS_CONFLICT);
	assert_string_equal(a.err.msg, "POST /api/v1/jobs/12/result: HTTP 409: recorded");
	assert_int_equal(one("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\n"
			     "Connection: close\r\nContent-Length: 4\r\n\r\nbusy", req,
			     sizeof(req), call_result, &a), AGENT_ANS_RETRY);
	assert_string_equal(pg_buf_str(&a.resp.retry_after), "7");
	assert_string_equal(a.err.msg, "POST /api/v1/jobs/12/result: HTTP 503: busy");

	/* Mbox: only the URL's path goes to this controller, with the token;
	 * the body is bounded. */
	assert_int_equal(one("HTTP/1.1 200 OK\r\nContent-Type: application/mbox\r\n"
			     "Connection: close\r\nContent-Length: 11\r\n\r\nFrom x\nabc\n",
			     req, sizeof(req), call_mbox, &a), AGENT_ANS_OK);
	assert_non_null(strstr(req, "GET /api/v1/series/7/mbox HTTP/1.1\r\n"));
	assert_non_null(strstr(req, "\r\nAuthorization: Bearer tok-1\r\n"));
	assert_null(strstr(req, "Content-Type"));
	assert_string_equal(pg_buf_str(&a.resp.body), "From x\nabc\n");
	assert_int_equal(one("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 100\r\n"
			     "\r\n", req, sizeof(req), call_mbox, &a), AGENT_ANS_RETRY);
	assert_int_equal(a.err.code, PG_ETOOBIG);
	pg_http_response_release(&a.resp);

	{
		char path[64];
		struct pg_err err = PG_ERR_INIT;

		assert_int_equal(agent_proto_mbox_path("http://h:8080/api/v1/series/3/mbox", path,
						       sizeof(path), &err), 0);
		assert_string_equal(path, "/api/v1/series/3/mbox");
		assert_int_equal(agent_proto_mbox_path("/api/v1/series/3/mbox", path,
						       sizeof(path), &err), 0);
		assert_int_equal(agent_proto_mbox_path("http://h/api/v1/jobs/3", path,
						       sizeof(path), &err), -1);
		assert_int_equal(agent_proto_mbox_path("http://h/api/v1/series/../x", path,
						       sizeof(path), &err), -1);
		assert_int_equal(agent_proto_mbox_path("http://h", path, sizeof(path), &err), -1);
		assert_non_null(strstr(err.msg, "not a series mbox"));
	}

	assert_true(agent_stage_ok("run"));
	assert_true(agent_stage_ok("patched-build_2.x"));
	assert_false(agent_stage_ok(""));
	assert_false(agent_stage_ok("a&b"));
	assert_false(agent_stage_ok("Run"));
}

static int64_t stop_at;

static bool stop_after(void *arg)
{
	(void)arg;
	return pg_time_mono_ms() >= stop_at;
}

/*
 * A controller that accepts the connection and never answers: the caller
 * walks away when its predicate says so, the helper thread finishes on
 * its own when the request times out, and frees everything (ASan checks
 * the ownership hand-over).  Also: nobody listening is a retry.
 */
static void test_abandon(void **state)
{
	struct pg_http_response resp = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct agent_stop stop = { stop_after, NULL };
	struct agent_conn conn;
	struct canned c;
	char tokfile[] = "/tmp/pg-test-tok.XXXXXX";
	int64_t t0;

	(void)state;
	canned_start(&c, "", 0);	/* listens, never accepts */
	conn_to(&conn, &c, tokfile);
	t0 = pg_time_mono_ms();
	stop_at = t0 + 200;
	assert_int_equal(agent_conn_post(&conn, "/api/v1/lease", "application/json", "{}", 2,
					 1000, &stop, &resp, &err), AGENT_ANS_STOPPED);
	assert_true(pg_time_mono_ms() - t0 < 600);
	assert_int_equal(agent_conn_abandoned(), 1);
	assert_non_null(strstr(err.msg, "abandoned"));
	/* Already stopping: nothing is sent. */
	assert_int_equal(agent_conn_post(&conn, "/api/v1/lease", "application/json", "{}", 2,
					 1000, &stop, &resp, &err), AGENT_ANS_STOPPED);
	for (int i = 0; i < 50 && agent_conn_abandoned() > 0; i++)
		pg_sleep_ms(100, NULL);
	assert_int_equal(agent_conn_abandoned(), 0);
	canned_stop(&c, 0);

	/* The connection goes on with a new curl handle: refused now. */
	assert_int_equal(agent_conn_post(&conn, "/api/v1/lease", "application/json", "{}", 2,
					 1000, NULL, &resp, &err), AGENT_ANS_RETRY);
	assert_int_equal(resp.status, 0);
	unlink(tokfile);
	agent_conn_release(&conn);
	pg_http_response_release(&resp);
}

static void hb_job(struct agent_job *job)
{
	struct pg_err err = PG_ERR_INIT;

	assert_int_equal(agent_job_parse(cJSON_Parse("{\"id\":12,\"attempt\":3,\"heartbeat_s\":1}"),
					 job, &err), 0);
}

/* The heartbeat thread turns 409 and {"cancel": true} into the flag, and
 * stops at once even with a heartbeat in flight. */
static void test_heartbeat_thread(void **state)
{
	static const struct {
		const char *response;
		enum agent_cancel want;
	} cases[] = {
		{ HTTP_JSON("409 Conflict") "{\"error\":\"stale attempt\"}", AGENT_CANCEL_STALE },
		{ HTTP_JSON("404 Not Found") "{\"error\":\"unknown job\"}", AGENT_CANCEL_UNKNOWN },
		{ HTTP_JSON("200 OK") "{\"cancel\":true}", AGENT_CANCEL_CONTROLLER },
	};
	struct pg_err err = PG_ERR_INIT;
	struct agent_conn conn;
	struct agent_job job;
	struct agent_hb hb;
	struct canned c;
	char tokfile[] = "/tmp/pg-test-tok.XXXXXX";
	int64_t t0;

	(void)state;
	hb_job(&job);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		canned_start(&c, cases[i].response, 1);
		memcpy(tokfile + strlen(tokfile) - 6, "XXXXXX", 6);
		conn_to(&conn, &c, tokfile);
		assert_int_equal(agent_hb_start(&hb, &conn, &job, 2000, 1000, &err), 0);
		agent_hb_set_stage(&hb, "run", 150);
		for (int n = 0; n < 50 && agent_hb_cancelled(&hb) == AGENT_CANCEL_NONE; n++)
			pg_sleep_ms(50, NULL);
		assert_int_equal(agent_hb_cancelled(&hb), cases[i].want);
		agent_hb_stop(&hb);
		assert_int_equal(agent_hb_cancelled(&hb), cases[i].want);
		canned_stop(&c, 1);
		assert_non_null(strstr(c.request, "POST /api/v1/jobs/12/heartbeat HTTP/1.1"));
		agent_conn_release(&conn);
		unlink(tokfile);
	}

	/* A controller that never answers: stop does not wait for it. */
	canned_start(&c, "", 0);
	memcpy(tokfile + strlen(tokfile) - 6, "XXXXXX", 6);
	conn_to(&conn, &c, tokfile);
	assert_int_equal(agent_hb_start(&hb, &conn, &job, 3000, 1000, &err), 0);
	pg_sleep_ms(200, NULL);
	t0 = pg_time_mono_ms();
	agent_hb_stop(&hb);
	assert_true(pg_time_mono_ms() - t0 < 500);
	assert_int_equal(agent_hb_cancelled(&hb), AGENT_CANCEL_NONE);
	agent_hb_stop(&hb);
	for (int n = 0; n < 50 && agent_conn_abandoned() > 0; n++)
		pg_sleep_ms(100, NULL);
	assert_int_equal(agent_conn_abandoned(), 0);
	canned_stop(&c, 0);
	agent_conn_release(&conn);
	unlink(tokfile);
	agent_job_release(&job);
}

static int global_setup(void **state)
{
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	return pg_http_global_init(&err);
}

static int global_teardown(void **state)
{
	(void)state;
	pg_http_global_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_of),
		cmocka_unit_test(test_backoff_bounds),
		cmocka_unit_test(test_token_read),
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_abandon),
		cmocka_unit_test(test_heartbeat_thread),
	};

	return cmocka_run_group_tests(tests, global_setup, global_teardown);
}
