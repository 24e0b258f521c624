/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for lib/http.c against a real HTTP server: libmicrohttpd on
 * 127.0.0.1 in this process, one thread per connection so that a handler
 * that sleeps does not hold up the others.
 *
 * Paths served:
 *   /echo          method, request headers and body back as JSON
 *   /redirect      302 to /echo (relative Location, as Patchwork sends)
 *   /loop          302 to itself
 *   /big           64 KiB with a Content-Length
 *   /big-chunked   64 KiB chunked (no length announced)
 *   /bigheader     a 10 KiB Link header
 *   /slow          answers after 1.5 s
 *   /stall         10 bytes, then nothing for 3 s
 *   /unavailable   503 with a body and Retry-After
 *   /events        a Patchwork-like page with a Link header
 *   anything else  404
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <microhttpd.h>

#include "buf.h"
#include "err.h"
#include "http.h"
#include "timeutil.h"

#define BIG_LEN (64 * 1024)
#define SLOW_MS 1500
#define STALL_MS 3000

#define PW_NEXT "http://127.0.0.1:8765/api/1.3/events/?page=2&per_page=2&project=dpdk"
/* The header the reference captured from Patchwork. */
#define PW_LINK								\
	"<" PW_NEXT ">; rel=\"next\", "					\
	"<http://127.0.0.1:8765/api/1.3/events/?page=1&per_page=2&project=dpdk>; rel=\"first\", " \
	"<http://127.0.0.1:8765/api/1.3/events/?page=4&per_page=2&project=dpdk>; rel=\"last\""

static struct MHD_Daemon *daemon_;
static char base[64];
/* Set before stopping the server, so that sleeping handlers end. */
static atomic_int stopping;

struct req {
	struct pg_buf body;
};

/* Sleep up to ms in short slices; false when the server is stopping. */
static bool nap(int ms)
{
	for (int slept = 0; slept < ms; slept += 10) {
		if (atomic_load(&stopping))
			return false;
		pg_sleep_ms(10, NULL);
	}
	return true;
}

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned int status,
				 const char *text, size_t len, const char *type,
				 const char *hname, const char *hvalue)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	if ((type && MHD_add_response_header(r, "Content-Type", type) != MHD_YES) ||
	    (hname && MHD_add_response_header(r, hname, hvalue) != MHD_YES)) {
		MHD_destroy_response(r);
		return MHD_NO;
	}
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static void add_header_field(cJSON *o, struct MHD_Connection *conn,
			     const char *key, const char *header)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, header);

	if (v)
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static enum MHD_Result send_echo(struct MHD_Connection *conn, const char *url,
				 const char *method, struct req *rq)
{
	const union MHD_ConnectionInfo *ci;
	cJSON *o = cJSON_CreateObject();
	enum MHD_Result ret = MHD_NO;
	char *text = NULL;
	int port = -1;

	if (!o)
		return MHD_NO;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)(const void *)ci->client_addr)->sin_port);
	cJSON_AddStringToObject(o, "method", method);
	cJSON_AddStringToObject(o, "url", url);
	add_header_field(o, conn, "authorization", "Authorization");
	add_header_field(o, conn, "content_type", "Content-Type");
	add_header_field(o, conn, "content_length", "Content-Length");
	add_header_field(o, conn, "user_agent", "User-Agent");
	add_header_field(o, conn, "expect", "Expect");
	add_header_field(o, conn, "x_extra", "X-Extra");
	cJSON_AddStringToObject(o, "body", pg_buf_str(&rq->body));
	cJSON_AddNumberToObject(o, "body_len", (double)rq->body.len);
	cJSON_AddNumberToObject(o, "client_port", port);
	text = cJSON_PrintUnformatted(o);
	if (text)
		ret = send_text(conn, MHD_HTTP_OK, text, strlen(text), "application/json",
				NULL, NULL);
	cJSON_free(text);
	cJSON_Delete(o);
	return ret;
}

static ssize_t big_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	size_t n;

	if (pos >= BIG_LEN)
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = BIG_LEN - (size_t)pos;
	if (n > max)
		n = max;
	if (n > 4096)
		n = 4096;
	memset(buf, 'y', n);
	return (ssize_t)n;
}

static ssize_t stall_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	if (pos == 0 && max >= 10) {
		memcpy(buf, "0123456789", 10);
		return 10;
	}
	nap(STALL_MS);
	return MHD_CONTENT_READER_END_OF_STREAM;
}

static enum MHD_Result send_callback(struct MHD_Connection *conn,
				     MHD_ContentReaderCallback cb)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, cb, NULL, NULL);
	if (!r)
		return MHD_NO;
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct req *rq = *con_cls;

	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		pg_buf_init(&rq->body, 1024 * 1024);
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (pg_buf_add(&rq->body, upload_data, *upload_data_size) < 0)
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}

	if (!strcmp(url, "/echo"))
		return send_echo(conn, url, method, rq);
	if (!strcmp(url, "/redirect"))
		return send_text(conn, MHD_HTTP_FOUND, "moved", 5, "text/plain",
				 "Location", "/echo");
	if (!strcmp(url, "/loop"))
		return send_text(conn, MHD_HTTP_FOUND, "", 0, NULL, "Location", "/loop");
	if (!strcmp(url, "/big")) {
		char *big = malloc(BIG_LEN);
		enum MHD_Result ret;

		if (!big)
			return MHD_NO;
		memset(big, 'x', BIG_LEN);
		ret = send_text(conn, MHD_HTTP_OK, big, BIG_LEN, "text/plain", NULL, NULL);
		free(big);
		return ret;
	}
	if (!strcmp(url, "/big-chunked"))
		return send_callback(conn, big_reader);
	if (!strcmp(url, "/bigheader")) {
		char *link = malloc(10 * 1024 + 1);
		enum MHD_Result ret;

		if (!link)
			return MHD_NO;
		memset(link, 'l', 10 * 1024);
		link[0] = '<';
		memcpy(link + 10 * 1024 - 13, ">; rel=\"next\"", 13);
		link[10 * 1024] = '\0';
		ret = send_text(conn, MHD_HTTP_OK, "[]", 2, "application/json", "Link", link);
		free(link);
		return ret;
	}
	if (!strcmp(url, "/slow")) {
		nap(SLOW_MS);
		return send_text(conn, MHD_HTTP_OK, "late", 4, "text/plain", NULL, NULL);
	}
	if (!strcmp(url, "/stall"))
		return send_callback(conn, stall_reader);
	if (!strcmp(url, "/unavailable"))
		return send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				 "{\"detail\":\"try later\"}", 22, "application/json",
				 "Retry-After", "7");
	if (!strcmp(url, "/events"))
		return send_text(conn, MHD_HTTP_OK, "[]", 2, "application/json",
				 "Link", PW_LINK);
	return send_text(conn, MHD_HTTP_NOT_FOUND, "{\"detail\":\"Not found.\"}", 23,
			 "application/json", NULL, NULL);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct req *rq = *con_cls;

	if (!rq)
		return;
	pg_buf_release(&rq->body);
	free(rq);
	*con_cls = NULL;
}

static int server_start(void **state)
{
	struct sockaddr_in sin;
	const union MHD_DaemonInfo *info;
	struct pg_err err = PG_ERR_INIT;
	static const char *const proxies[] = {
		"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
		"all_proxy", "ALL_PROXY",
	};

	(void)state;
	/* Loopback must not go through a proxy from the environment. */
	for (size_t i = 0; i < sizeof(proxies) / sizeof(proxies[0]); i++)
		unsetenv(proxies[i]);
	/* As a daemon would: a peer closing early must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	if (pg_http_global_init(&err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = 0;
	daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
				   MHD_USE_THREAD_PER_CONNECTION,
				   0, NULL, NULL, handler, NULL,
				   MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
				   MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
				   MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
				   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
				   MHD_OPTION_END);
	if (!daemon_)
		return -1;
	info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
	if (!info || info->port == 0)
		return -1;
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", (unsigned int)info->port);
	return 0;
}

static int server_stop(void **state)
{
	(void)state;
	atomic_store(&stopping, 1);
	if (daemon_)
		MHD_stop_daemon(daemon_);
	daemon_ = NULL;
	pg_http_global_cleanup();
	return 0;
}

static const char *url_of(const char *path)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s%s", base, path);
	return buf;
}

/* Parse an /echo body. */
static cJSON *echo_json(const struct pg_http_response *r)
{
	cJSON *o = cJSON_ParseWithLength(r->body.data, r->body.len);

	assert_non_null(o);
	return o;
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	assert_non_null(v);
	if (cJSON_IsNull(v))
		return NULL;
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static double jnum(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static void test_get_echo(void **state)
{
	static const char *const extra[] = { "X-Extra: yes", "Accept: application/json", NULL };
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	cJSON *j;

	(void)state;
	o.bearer_token = "s3cret";
	o.headers = extra;
	assert_int_equal(pg_http_get(url_of("/echo"), &o, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(pg_buf_str(&r.content_type), "application/json");
	assert_string_equal(pg_buf_str(&r.effective_url), url_of("/echo"));
	assert_string_equal(pg_buf_str(&r.location), "");
	assert_string_equal(pg_buf_str(&r.link), "");
	assert_true(r.total_ms >= 0 && r.total_ms < 10000);
	j = echo_json(&r);
	assert_string_equal(jstr(j, "method"), "GET");
	assert_string_equal(jstr(j, "authorization"), "Bearer s3cret");
	assert_string_equal(jstr(j, "user_agent"), "perfgate/" PG_VERSION);
	assert_string_equal(jstr(j, "x_extra"), "yes");
	assert_null(jstr(j, "content_type"));
	assert_string_equal(jstr(j, "body"), "");
	cJSON_Delete(j);

	/* Unknown paths are answers too: 0 and the status. */
	assert_int_equal(pg_http_get(url_of("/nope"), NULL, &r, &err), 0);
	assert_int_equal(r.status, 404);
	assert_string_equal(pg_buf_str(&r.body), "{\"detail\":\"Not found.\"}");
	pg_http_response_release(&r);
}

static void test_post_json(void **state)
{
	static const char check[] =
		"{\"state\":\"success\",\"context\":\"dpdk-ci-perf\","
		"\"description\":\"Performance OK\"}";
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	cJSON *j;

	(void)state;
	o.authorization = "Token 04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a";
	o.content_type = "text/plain";	/* overridden: this is JSON */
	assert_int_equal(pg_http_post_json(url_of("/echo"), check, &o, &r, &err), 0);
	assert_int_equal(r.status, 200);
	j = echo_json(&r);
	assert_string_equal(jstr(j, "method"), "POST");
	assert_string_equal(jstr(j, "authorization"),
			    "Token 04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a");
	assert_string_equal(jstr(j, "content_type"), "application/json");
	assert_string_equal(jstr(j, "body"), check);
	assert_null(jstr(j, "expect"));
	cJSON_Delete(j);
	pg_http_response_release(&r);
}

static void test_post_empty_and_no_type(void **state)
{
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	cJSON *j;

	(void)state;
	/* An empty JSON POST still says what it is, with a length of 0. */
	assert_int_equal(pg_http_post_json(url_of("/echo"), NULL, NULL, &r, &err), 0);
	assert_int_equal(r.status, 200);
	j = echo_json(&r);
	assert_string_equal(jstr(j, "method"), "POST");
	assert_string_equal(jstr(j, "content_type"), "application/json");
	assert_string_equal(jstr(j, "content_length"), "0");
	assert_string_equal(jstr(j, "body"), "");
	cJSON_Delete(j);

	/* No type given: none sent, never libcurl's form type. */
	assert_int_equal(pg_http_request("POST", url_of("/echo"), "a=b", 3, NULL, &r, &err), 0);
	j = echo_json(&r);
	assert_null(jstr(j, "content_type"));
	assert_string_equal(jstr(j, "body"), "a=b");
	cJSON_Delete(j);
	pg_http_response_release(&r);
}

static void test_other_methods(void **state)
{
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	static char bin[100 * 1024];
	cJSON *j;

	(void)state;
	o.content_type = "text/plain";
	assert_int_equal(pg_http_request("PUT", url_of("/echo"), "hello", 5, &o, &r, &err), 0);
	j = echo_json(&r);
	assert_string_equal(jstr(j, "method"), "PUT");
	assert_string_equal(jstr(j, "content_type"), "text/plain");
	assert_string_equal(jstr(j, "body"), "hello");
	cJSON_Delete(j);

	assert_int_equal(pg_http_request("PATCH", url_of("/echo"), "{}", 2, &o, &r, &err), 0);
	j = echo_json(&r);
	assert_string_equal(jstr(j, "method"), "PATCH");
	assert_string_equal(jstr(j, "body"), "{}");
	cJSON_Delete(j);

	assert_int_equal(pg_http_request("DELETE", url_of("/echo"), NULL, 0, &o, &r, &err), 0);
	j = echo_json(&r);
	assert_string_equal(jstr(j, "method"), "DELETE");
	assert_null(jstr(j, "content_type"));
	assert_string_equal(jstr(j, "body"), "");
	cJSON_Delete(j);

	assert_int_equal(pg_http_request("HEAD", url_of("/echo"), NULL, 0, NULL, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 0);
	assert_string_equal(pg_buf_str(&r.content_type), "application/json");

	/* A large binary body goes through whole, without an Expect stall. */
	for (size_t i = 0; i < sizeof(bin); i++)
		bin[i] = (char)(i * 7);
	o.content_type = "application/octet-stream";
	assert_int_equal(pg_http_request("POST", url_of("/echo"), bin, sizeof(bin), &o,
					 &r, &err), 0);
	j = echo_json(&r);
	assert_int_equal((int)jnum(j, "body_len"), (int)sizeof(bin));
	assert_null(jstr(j, "expect"));
	cJSON_Delete(j);
	pg_http_response_release(&r);
}

static void test_redirects(void **state)
{
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	cJSON *j;

	(void)state;
	/* Not followed: the 302 itself, its Location as sent and resolved. */
	assert_int_equal(pg_http_get(url_of("/redirect"), &o, &r, &err), 0);
	assert_int_equal(r.status, 302);
	assert_string_equal(pg_buf_str(&r.location), "/echo");
	assert_string_equal(pg_buf_str(&r.redirect_url), url_of("/echo"));
	assert_string_equal(pg_buf_str(&r.body), "moved");

	/* Followed: the last response only, headers included. */
	o.follow_redirects = true;
	o.authorization = "Token t";
	assert_int_equal(pg_http_get(url_of("/redirect"), &o, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(pg_buf_str(&r.effective_url), url_of("/echo"));
	assert_string_equal(pg_buf_str(&r.location), "");
	assert_string_equal(pg_buf_str(&r.redirect_url), "");
	assert_string_equal(pg_buf_str(&r.content_type), "application/json");
	j = echo_json(&r);
	assert_string_equal(jstr(j, "method"), "GET");
	/* Same host: the credentials go along. */
	assert_string_equal(jstr(j, "authorization"), "Token t");
	cJSON_Delete(j);

	/* A loop ends at the limit, as a transport error. */
	o.max_redirects = 3;
	assert_int_equal(pg_http_get(url_of("/loop"), &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_non_null(strstr(err.msg, "/loop: "));
	assert_non_null(strstr(err.msg, "edirects"));
	assert_int_equal(r.status, 302);
	pg_http_response_release(&r);
}

static void test_too_big(void **state)
{
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	char want[512];

	(void)state;
	assert_int_equal(pg_http_get(url_of("/big"), &o, &r, &err), 0);
	assert_int_equal(r.body.len, BIG_LEN);
	assert_int_equal(pg_http_get(url_of("/big-chunked"), &o, &r, &err), 0);
	assert_int_equal(r.body.len, BIG_LEN);
	assert_int_equal(r.body.data[BIG_LEN - 1], 'y');

	/* Announced length over the cap: refused before reading. */
	o.max_body = 4096;
	assert_int_equal(pg_http_get(url_of("/big"), &o, &r, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	snprintf(want, sizeof(want), "GET %s: response body over 4096 bytes", url_of("/big"));
	assert_string_equal(err.msg, want);
	assert_true(r.body.len <= 4096);

	/* No length announced: cut off at the cap. */
	pg_err_clear(&err);
	assert_int_equal(pg_http_get(url_of("/big-chunked"), &o, &r, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	snprintf(want, sizeof(want), "GET %s: response body over 4096 bytes",
		 url_of("/big-chunked"));
	assert_string_equal(err.msg, want);
	assert_true(r.body.len <= 4096);

	/* A kept header over its bound. */
	pg_err_clear(&err);
	assert_int_equal(pg_http_get(url_of("/bigheader"), NULL, &r, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_non_null(strstr(err.msg, "response header 'Link' over 8192 bytes"));
	pg_http_response_release(&r);
}

static void test_timeout(void **state)
{
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	char prefix[512];
	int64_t t0, elapsed;

	(void)state;
	o.timeout_ms = 300;
	t0 = pg_time_mono_ms();
	assert_int_equal(pg_http_get(url_of("/slow"), &o, &r, &err), -1);
	elapsed = pg_time_mono_ms() - t0;
	assert_int_equal(err.code, PG_ETIMEOUT);
	snprintf(prefix, sizeof(prefix), "GET %s: ", url_of("/slow"));
	assert_memory_equal(err.msg, prefix, strlen(prefix));
	assert_non_null(strstr(err.msg, "timed out"));
	assert_non_null(strstr(err.msg, "timeout 300 ms"));
	/* No response at all (the server answers after 1.5 s); the time
	 * bound is generous for loaded machines. */
	assert_int_equal(r.status, 0);
	assert_true(elapsed >= 250 && elapsed < 5000);
	/* The request went out: the server may have acted on it. */
	assert_true(r.request_sent);
	pg_http_response_release(&r);
}

static void test_low_speed(void **state)
{
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	o.timeout_ms = 10000;
	o.low_speed_bytes = 100;
	o.low_speed_secs = 1;
	assert_int_equal(pg_http_get(url_of("/stall"), &o, &r, &err), -1);
	assert_int_equal(err.code, PG_ETIMEOUT);
	assert_non_null(strstr(err.msg, "too slow"));
	assert_int_equal(r.status, 200);
	pg_http_response_release(&r);
}

static void test_server_error(void **state)
{
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	/* A 5xx is an answer for the caller to judge, not a failure. */
	assert_int_equal(pg_http_post_json(url_of("/unavailable"), "{}", NULL, &r, &err), 0);
	assert_int_equal(err.code, PG_OK);
	assert_int_equal(r.status, 503);
	assert_string_equal(pg_buf_str(&r.body), "{\"detail\":\"try later\"}");
	assert_string_equal(pg_buf_str(&r.retry_after), "7");
	assert_int_equal(pg_http_retry_after_ms(pg_buf_str(&r.retry_after), 0), 7000);
	assert_true(r.request_sent);
	pg_http_response_release(&r);
}

static void test_link_paging(void **state)
{
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	char next[512];

	(void)state;
	assert_int_equal(pg_http_get(url_of("/events"), NULL, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(pg_buf_str(&r.link), PW_LINK);
	assert_int_equal(pg_http_link_next(pg_buf_str(&r.link), next, sizeof(next)), 1);
	assert_string_equal(next, PW_NEXT);
	/* The next request on the same response forgets the Link. */
	assert_int_equal(pg_http_get(url_of("/echo"), NULL, &r, &err), 0);
	assert_string_equal(pg_buf_str(&r.link), "");
	assert_int_equal(pg_http_link_next(pg_buf_str(&r.link), next, sizeof(next)), 0);
	pg_http_response_release(&r);
}

static void test_refused(void **state)
{
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	char url[128];
	int fd;

	(void)state;
	/* A port that was just free: bind it, note it, close it. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	assert_int_equal(close(fd), 0);

	snprintf(url, sizeof(url), "http://ci:hunter2@127.0.0.1:%u/api/v1/lease",
		 (unsigned int)ntohs(sin.sin_port));
	assert_int_equal(pg_http_post_json(url, "{}", NULL, &r, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	snprintf(url, sizeof(url), "POST http://127.0.0.1:%u/api/v1/lease: ",
		 (unsigned int)ntohs(sin.sin_port));
	assert_memory_equal(err.msg, url, strlen(url));
	assert_non_null(strstr(err.msg, "onnect"));
	/* Credentials in the URL stay out of the message. */
	assert_null(strstr(err.msg, "hunter2"));
	assert_int_equal(r.status, 0);
	/* Refused at connect: nothing can have been acted on. */
	assert_false(r.request_sent);
	pg_http_response_release(&r);
}

/* Which failures may have delivered the request: only those before a
 * connection, or before a request byte went out, certainly did not. */
static void test_may_have_sent(void **state)
{
	(void)state;
	assert_false(pg_http_may_have_sent(CURLE_COULDNT_CONNECT, 0));
	assert_false(pg_http_may_have_sent(CURLE_COULDNT_CONNECT, 200));
	assert_false(pg_http_may_have_sent(CURLE_COULDNT_RESOLVE_HOST, 0));
	assert_false(pg_http_may_have_sent(CURLE_COULDNT_RESOLVE_PROXY, 0));
	assert_false(pg_http_may_have_sent(CURLE_SSL_CONNECT_ERROR, 0));
	/* A connect timeout wrote nothing; one after sending may have. */
	assert_false(pg_http_may_have_sent(CURLE_OPERATION_TIMEDOUT, 0));
	assert_true(pg_http_may_have_sent(CURLE_OPERATION_TIMEDOUT, 180));
	assert_true(pg_http_may_have_sent(CURLE_GOT_NOTHING, 180));
	assert_true(pg_http_may_have_sent(CURLE_RECV_ERROR, 180));
	assert_true(pg_http_may_have_sent(CURLE_SEND_ERROR, 40));
	assert_true(pg_http_may_have_sent(CURLE_WRITE_ERROR, 180));
}

static void test_bad_arguments(void **state)
{
	static const char *const bad_extra[] = { "X-A: 1\r\nX-Injected: 1", NULL };
	static const char *const no_colon[] = { "X-A 1", NULL };
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	const char *u = url_of("/echo");

	(void)state;
	o.bearer_token = "a\nb";
	assert_int_equal(pg_http_get(u, &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	o.bearer_token = "a";
	o.authorization = "Token b";
	assert_int_equal(pg_http_get(u, &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	o.authorization = NULL;
	o.headers = bad_extra;
	assert_int_equal(pg_http_get(u, &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	o.headers = no_colon;
	assert_int_equal(pg_http_get(u, &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	o.headers = NULL;
	o.timeout_ms = 0;
	assert_int_equal(pg_http_get(u, &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "timeouts must be set"));
	o.timeout_ms = 1000;
	o.low_speed_secs = 5;
	assert_int_equal(pg_http_get(u, &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	o.low_speed_secs = 0;

	assert_int_equal(pg_http_request("FETCH", u, NULL, 0, &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(pg_http_request("GET", u, "x", 1, &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(pg_http_request("POST", u, NULL, 3, &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(pg_http_request("GET", NULL, NULL, 0, &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	/* Only HTTP(S): no file://, no ftp:// from a configuration typo. */
	assert_int_equal(pg_http_get("file:///etc/passwd", &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(pg_http_get("http://[::1", &o, &r, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	/* Still usable after all that. */
	assert_int_equal(pg_http_get(u, &o, &r, &err), 0);
	assert_int_equal(r.status, 200);
	pg_http_response_release(&r);
}

static void test_client_reuse(void **state)
{
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_http_client *c;
	double port1, port2;
	cJSON *j;

	(void)state;
	c = pg_http_client_new(&err);
	assert_non_null(c);
	assert_int_equal(pg_http_client_request(c, "GET", url_of("/echo"), NULL, 0, NULL,
						&r, &err), 0);
	j = echo_json(&r);
	port1 = jnum(j, "client_port");
	cJSON_Delete(j);
	/* A failed request in between does not spoil the handle. */
	assert_int_equal(pg_http_client_request(c, "GET", "ftp://127.0.0.1/", NULL, 0,
						NULL, &r, &err), -1);
	assert_int_equal(pg_http_client_request(c, "POST", url_of("/echo"), "x", 1, NULL,
						&r, &err), 0);
	j = echo_json(&r);
	port2 = jnum(j, "client_port");
	assert_string_equal(jstr(j, "method"), "POST");
	/* Options do not leak from one request to the next. */
	assert_null(jstr(j, "authorization"));
	cJSON_Delete(j);
	/* The same TCP connection served both. */
	assert_true(port1 > 0);
	assert_true(port1 == port2);
	pg_http_client_free(c);
	pg_http_client_free(NULL);
	pg_http_response_release(&r);
}

static void test_link_next_parse(void **state)
{
	static const struct {
		const char *in;
		int rc;
		const char *url;
	} cases[] = {
		{ PW_LINK, 1, PW_NEXT },
		{ "<https://x/api/1.3/events/?page=2>; rel=\"next\", <https://x/api/1.3/events/?page=1>; rel=\"prev\"",
		  1, "https://x/api/1.3/events/?page=2" },
		{ "<https://x/?page=1>; rel=\"prev\", <https://x/?page=3>; rel=\"next\"",
		  1, "https://x/?page=3" },
		{ "<https://x/?page=9>; rel=\"last\"", 0, NULL },
		{ "<https://x/?page=1>; rel=\"prev\", <https://x/?page=1>; rel=\"first\"", 0, NULL },
		{ "", 0, NULL },
		{ "   ", 0, NULL },
		{ "<https://x/a,b>; rel=\"next\"", 1, "https://x/a,b" },
		{ "<https://x/n>;rel=next", 1, "https://x/n" },
		{ "<https://x/n> ; REL = \"NEXT\"", 1, "https://x/n" },
		{ "<https://x/n>; rel=\"prev next\"", 1, "https://x/n" },
		{ "<https://x/n>; title=\"a, b; rel=next\"; rel=\"last\"", 0, NULL },
		{ "<https://x/n>; title=\"x\\\"y\"; rel=\"next\"", 1, "https://x/n" },
		{ "<https://x/p>; rel=\"prev\"; rel=\"next\"", 0, NULL },
		{ "<https://x/n>; crossorigin; rel=\"next\"", 1, "https://x/n" },
		{ "<https://x/n>; rel=\"nextish\"", 0, NULL },
		{ "<https://x/n>; relx=\"next\"", 0, NULL },
		{ "https://x/n; rel=\"next\"", -1, NULL },
		{ "<https://x/n; rel=\"next\"", -1, NULL },
		{ "<https://x/n>; rel=\"next", -1, NULL },
		{ "<https://x/n> rel=\"next\"", -1, NULL },
		{ "<https://x/n>; =\"next\"", -1, NULL },
		{ "<>; rel=\"next\"", -1, NULL },
	};
	char out[128], tiny[8];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = pg_http_link_next(cases[i].in, out, sizeof(out));

		if (rc != cases[i].rc)
			fail_msg("pg_http_link_next(%s) = %d, want %d", cases[i].in, rc,
				 cases[i].rc);
		if (rc == 1)
			assert_string_equal(out, cases[i].url);
		else
			assert_string_equal(out, "");
	}
	assert_int_equal(pg_http_link_next(NULL, out, sizeof(out)), 0);
	/* No room: -1, never a cut URL. */
	assert_int_equal(pg_http_link_next("<https://x/long>; rel=next", tiny, sizeof(tiny)), -1);
	assert_string_equal(tiny, "");
	assert_int_equal(pg_http_link_next("<1234567>; rel=next", tiny, sizeof(tiny)), 1);
	assert_string_equal(tiny, "1234567");
}

static void test_retry_after_parse(void **state)
{
	const int64_t now = INT64_C(1445412480000);	/* Wed, 21 Oct 2015 07:28:00 GMT */

	(void)state;
	assert_int_equal(pg_http_retry_after_ms("120", now), 120000);
	assert_int_equal(pg_http_retry_after_ms(" 0 ", now), 0);
	assert_int_equal(pg_http_retry_after_ms("99999999999999999999999", now), 86400000);
	assert_int_equal(pg_http_retry_after_ms("Wed, 21 Oct 2015 07:28:30 GMT", now), 30000);
	assert_int_equal(pg_http_retry_after_ms("Wed, 21 Oct 2015 07:00:00 GMT", now), 0);
	assert_int_equal(pg_http_retry_after_ms("", now), -1);
	assert_int_equal(pg_http_retry_after_ms("  ", now), -1);
	assert_int_equal(pg_http_retry_after_ms("12s", now), -1);
	assert_int_equal(pg_http_retry_after_ms("-5", now), -1);
	assert_int_equal(pg_http_retry_after_ms("soon", now), -1);
	assert_int_equal(pg_http_retry_after_ms(NULL, now), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_echo),
		cmocka_unit_test(test_post_json),
		cmocka_unit_test(test_post_empty_and_no_type),
		cmocka_unit_test(test_other_methods),
		cmocka_unit_test(test_redirects),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_low_speed),
		cmocka_unit_test(test_server_error),
		cmocka_unit_test(test_link_paging),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_may_have_sent),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_client_reuse),
		cmocka_unit_test(test_link_next_parse),
		cmocka_unit_test(test_retry_after_parse),
	};

	return cmocka_run_group_tests(tests, server_start, server_stop);
}
