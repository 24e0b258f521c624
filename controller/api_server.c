/* SPDX-License-Identifier: MIT */
/*
 * The HTTP side of the API: libmicrohttpd's daemon, each request's path
 * from headers to answer (see api_int.h), the read connections, start and
 * stop.
 */
#include "api_int.h"
#include "api_web.h"
#include "api_textfile.h"
#include "conffile.h"

#include <errno.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "json.h"
#include "log.h"
#include "timeutil.h"

/* The biggest answer we build in memory: a series' mbox, with room. */
#define API_OUT_MAX (API_MBOX_MAX + 65536)

/* ---- the read connections ----------------------------------------------- */

static void api_pool_close(struct api_pool *p)
{
	for (size_t i = 0; i < p->n; i++)
		store_close(p->all[i]);
	free(p->all);
	free(p->idle);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

/*
 * n read-only connections to db: query_only makes a read endpoint that
 * tried to write fail instead of bypassing the writer.
 *
 * mapped: the dashboard's reads walk pages all over a big store (a trend's
 * points, a job's samples): mapped, they are read where they lie instead
 * of copied into each connection's small cache.  But in WAL mode SQLite
 * drops a connection's whole mapping whenever the store changed since its
 * last read, and under agents' load it changes hundreds of times a second:
 * the token check on every agent request then paid an munmap and an mmap
 * of the whole store (a TLB shootdown on every core) and page faults
 * (about 2,000 of each a second at 5,000 requests/s, bench_api).  So the
 * token checks have connections of their own, not mapped.
 */
static int api_pool_open(struct api_pool *p, const char *db, size_t n, bool mapped,
			 struct pg_err *err)
{
	memset(p, 0, sizeof(*p));
	if (pthread_mutex_init(&p->lock, NULL) != 0)
		return pg_err_set(err, PG_EIO, "api: cannot make a mutex");
	if (api_cond_init(&p->cond) < 0) {
		pthread_mutex_destroy(&p->lock);
		return pg_err_set(err, PG_EIO, "api: cannot make a condition variable");
	}
	p->all = calloc(n, sizeof(*p->all));
	p->idle = calloc(n, sizeof(*p->idle));
	if (!p->all || !p->idle) {
		pg_err_set(err, PG_ENOMEM, "api: out of memory");
		goto fail;
	}
	for (; p->n < n; p->n++) {
		if (store_open(&p->all[p->n], db, err) < 0)
			goto fail;
		if (store_exec(p->all[p->n], "PRAGMA query_only = 1", "read-only connection",
			       err) < 0 ||
		    (mapped && store_exec(p->all[p->n], "PRAGMA mmap_size = " API_READ_MMAP,
					  "map the store", err) < 0)) {
			p->n++;
			goto fail;
		}
		p->idle[p->n_idle++] = p->all[p->n];
	}
	return 0;
fail:
	pg_err_prefix(err, "api: read connections");
	api_pool_close(p);
	memset(p, 0, sizeof(*p));
	return -1;
}

struct store *api_pool_get(struct api_pool *p)
{
	struct timespec until = api_abstime(API_POOL_WAIT_MS);
	struct store *st = NULL;

	pthread_mutex_lock(&p->lock);
	while (p->n_idle == 0)
		if (pthread_cond_timedwait(&p->cond, &p->lock, &until) == ETIMEDOUT)
			break;
	if (p->n_idle)
		st = p->idle[--p->n_idle];
	pthread_mutex_unlock(&p->lock);
	return st;
}

void api_pool_put(struct api_pool *p, struct store *st)
{
	if (!st)
		return;
	pthread_mutex_lock(&p->lock);
	p->idle[p->n_idle++] = st;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* ---- one request ---------------------------------------------------------- */

static struct api_req *api_req_new(struct api_server *srv, struct MHD_Connection *conn,
				   const char *method, const char *url)
{
	struct api_req *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->srv = srv;
	r->conn = conn;
	r->start_us = pg_time_mono_us();
	r->fd = -1;
	r->op.offset = -1;
	r->op.progress = -1;
	/* Both for the log only: routing reads the whole url. */
	pg_fmt_cut(r->method, sizeof(r->method), "%s", method ? method : "?");
	pg_fmt_cut(r->path, sizeof(r->path), "%s", url ? url : "?");
	pg_buf_init(&r->body, (size_t)srv->conf->max_body_bytes);
	pg_buf_init(&r->out, API_OUT_MAX);
	pg_buf_init(&r->note, API_NOTE_MAX);
	r->count_result = -1;
	pthread_mutex_lock(&srv->lock);
	srv->in_flight++;
	pthread_mutex_unlock(&srv->lock);
	return r;
}

static void api_req_free(struct api_req *r)
{
	struct api_server *srv = r->srv;

	pg_buf_release(&r->body);
	pg_buf_release(&r->out);
	pg_buf_release(&r->note);
	api_op_release(&r->op);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
	pthread_mutex_lock(&srv->lock);
	if (--srv->in_flight == 0)
		pthread_cond_broadcast(&srv->idle);
	pthread_mutex_unlock(&srv->lock);
}

static const char *api_header(struct api_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

/* Check an agent's token; answers r unless it is good. */
static void api_auth_agent(struct api_req *r)
{
	struct api_server *srv = r->srv;
	struct pg_err err = PG_ERR_INIT;
	char hash[API_SHA256_HEX + 1];
	struct sched_agent agent;
	struct store *st;
	const char *tok = NULL;
	size_t len = 0;
	int rc = api_bearer(api_header(r, MHD_HTTP_HEADER_AUTHORIZATION), &tok, &len);

	if (rc == 0) {
		api_reply_error(r, 401, "missing token: send Authorization: Bearer <agent token>");
		return;
	}
	if (rc < 0) {
		api_reply_error(r, 401, "malformed Authorization header: expected Bearer <token>");
		return;
	}
	if (api_sha256_hex(tok, len, hash, &err) < 0) {
		api_reply_err(r, &err);
		return;
	}
	st = api_pool_get(&srv->auth_pool);
	if (!st) {
		api_reply_error(r, 503, "the store is busy: try again");
		return;
	}
	rc = sched_agent_by_token(st, hash, &agent, &err);
	api_pool_put(&srv->auth_pool, st);
	if (rc < 0) {
		pg_err_prefix(&err, "check token");
		api_reply_err(r, &err);
	} else if (rc == 0) {
		api_reply_error(r, 401, "unknown token");
	} else if (!agent.enabled) {
		api_reply_error(r, 403, "agent %s is disabled", agent.name);
	} else if (pg_fmt(r->agent, sizeof(r->agent), "%s", agent.name) < 0) {
		api_reply_error(r, 500, "agent %.64s: name too long", agent.name);
	} else {
		r->agent_id = agent.id;
	}
}

static void api_auth_admin(struct api_req *r)
{
	const char *tok = NULL;
	size_t len = 0;
	int rc;

	if (!r->srv->admin.set) {
		api_reply_error(r, 403, "no admin token configured (api.admin_token_file)");
		return;
	}
	rc = api_bearer(api_header(r, MHD_HTTP_HEADER_AUTHORIZATION), &tok, &len);
	if (rc == 0)
		api_reply_error(r, 401, "missing token: send Authorization: Bearer <admin token>");
	else if (rc < 0)
		api_reply_error(r, 401, "malformed Authorization header: expected Bearer <token>");
	else if (!api_admin_check(&r->srv->admin, tok, len))
		api_reply_error(r, 401, "wrong admin token");
}

/* What the body-framing headers say, counted over every header line
 * (libmicrohttpd's lookup gives the first of a name only). */
struct api_framing {
	unsigned int n_length, n_te;
	const char *length;	/* the first Content-Length */
	bool lengths_differ;
};

static enum MHD_Result api_framing_header(void *cls, enum MHD_ValueKind kind, const char *key,
					  const char *value)
{
	struct api_framing *f = cls;

	(void)kind;
	if (!key)
		return MHD_YES;
	if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
		if (f->n_length++ == 0)
			f->length = value;
		else if (strcmp(f->length ? f->length : "", value ? value : ""))
			f->lengths_differ = true;
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		f->n_te++;
	}
	return MHD_YES;
}

/*
 * Refuse a request whose body length two headers may tell differently
 * (RFC 9112 6.3): Content-Length with Transfer-Encoding, or Content-Length
 * values that differ.  libmicrohttpd 0.9.75 takes the chunked body (or the
 * first length) and goes on, while a proxy in front may have read the
 * other: what it took for the next request would be part of this body, or
 * the reverse (request smuggling).  Answers r when refused.
 */
static void api_check_framing(struct api_req *r)
{
	struct api_framing f = { 0 };

	if (MHD_get_connection_values(r->conn, MHD_HEADER_KIND, api_framing_header, &f) < 0) {
		api_reply_error(r, 500, "could not read the request headers");
		return;
	}
	if (f.n_length && f.n_te)
		api_reply_error(r, 400, "both Content-Length and Transfer-Encoding: the body's "
				"length is ambiguous; send one of them");
	else if (f.lengths_differ)
		api_reply_error(r, 400, "two Content-Length headers that differ: the body's "
				"length is ambiguous; send one");
}

/* The headers are in: route (on the whole path; r->path may be cut),
 * check what can be checked before the body. */
static void api_begin(struct api_req *r, const char *method, const char *url)
{
	struct api_server *srv = r->srv;
	const char *allow = NULL, *cl;
	int status = api_route_match(method, url, &r->route, &allow);
	enum api_access access;

	if (atomic_load(&srv->stopping)) {
		api_reply_error(r, 503, "the controller is shutting down");
		return;
	}
	api_check_framing(r);
	if (r->answered)
		return;
	if (status == 404) {
		api_reply_error(r, 404, "no such endpoint: %s", r->path);
		return;
	}
	if (status == 405) {
		r->allow = allow;
		api_reply_error(r, 405, "%s is not allowed on %s (allowed: %s)", r->method, r->path,
				allow);
		return;
	}
	cl = api_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl && api_route_writes(r->route.ep)) {
		int64_t n;

		if (api_parse_uint(cl, 0, INT64_MAX / 2, &n) == 0 &&
		    n > srv->conf->max_body_bytes) {
			api_reply_error(r, 413, "request body of %lld bytes is over the limit of "
					"%lld bytes", (long long)n, (long long)srv->conf->max_body_bytes);
			return;
		}
	}
	access = api_route_access(r->route.ep);
	if (access == API_ACCESS_AGENT)
		api_auth_agent(r);
	else if (access == API_ACCESS_ADMIN)
		api_auth_admin(r);
}

/* A piece of the body.  Returns MHD_NO to drop the connection. */
static enum MHD_Result api_body(struct api_req *r, const char *data, size_t n)
{
	if (!api_route_writes(r->route.ep))
		return MHD_YES;		/* a GET's body means nothing */
	if (r->too_big) {
		r->discarded += n;
		return r->discarded > API_DISCARD_MAX ? MHD_NO : MHD_YES;
	}
	if (pg_buf_add(&r->body, data, n) < 0) {
		if (errno != E2BIG) {
			pg_log_error("api", "%s %s: out of memory reading the body", r->method,
				     r->path);
			return MHD_NO;
		}
		r->too_big = true;
		r->discarded = r->body.len + n;
		pg_buf_release(&r->body);
	}
	return MHD_YES;
}

/* Parse a write endpoint's body into r->op; answers r on a problem. */
static void api_prepare(struct api_req *r)
{
	struct pg_err err = PG_ERR_INIT;
	const char *body = pg_buf_str(&r->body);
	size_t len = r->body.len;
	int rc = -1;

	switch (r->route.ep) {
	case API_EP_REGISTER:
		rc = api_parse_register(body, len, &r->op, &err);
		break;
	case API_EP_LEASE:
		rc = api_parse_lease(body, len, &r->op, &err);
		break;
	case API_EP_JOB_HEARTBEAT:
		rc = api_parse_heartbeat(body, len, &r->op, &err);
		break;
	case API_EP_JOB_LOGS:
		rc = api_parse_logs_query(
			MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "attempt"),
			MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "stage"),
			MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "offset"),
			&r->op, &err);
		break;
	case API_EP_JOB_RESULT:
		rc = api_parse_result(body, len, &r->op, &err);
		break;
	case API_EP_SERIES_RECHECK:
		rc = api_parse_recheck(body, len, r->srv->ps, &r->op, &err);
		break;
	case API_EP_JOB_CANCEL:
		rc = api_parse_cancel(body, len, &r->op, &err);
		break;
	default:
		pg_err_set(&err, PG_EIO, "no handler for %s", api_route_name(r->route.ep));
		break;
	}
	if (rc < 0)
		api_reply_err(r, &err);
}

/* The whole request is in: answer it here (false), or hand it to the
 * writer (true: r is the writer's until its connection is resumed). */
static bool api_complete(struct api_req *r)
{
	struct api_server *srv = r->srv;
	struct store *st;

	if (r->too_big) {
		api_reply_error(r, 413, "request body is over the limit of %lld bytes",
				(long long)srv->conf->max_body_bytes);
		return false;
	}
	if (!api_route_writes(r->route.ep)) {
		st = api_pool_get(&srv->pool);
		if (!st) {
			api_reply_error(r, 503, "the store is busy: try again");
			return false;
		}
		api_read_run(srv, st, r);
		api_pool_put(&srv->pool, st);
		return false;
	}
	api_prepare(r);
	if (r->answered)
		return false;
	/* A log chunk's body goes to its file first (api_logs.c); the
	 * others' bodies are parsed and done with. */
	if (r->route.ep == API_EP_JOB_LOGS)
		return api_logs_push(&srv->logs, r);
	pg_buf_release(&r->body);
	return api_worker_push(&srv->worker, r);
}

/* Whether the request announces a body (a Content-Length above 0, or a
 * chunked upload). */
static bool api_has_body(struct api_req *r)
{
	const char *cl = api_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);

	if (api_header(r, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return true;
	return cl && strspn(cl, "0 \t") != strlen(cl);
}

static enum MHD_Result api_send(struct api_req *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char num[32];
	bool ok = true;

	if (r->fd >= 0 && r->fd_text) {
		resp = api_textfile_response(r->fd);
		r->fd = -1;	/* closed by the response, or by its failure */
	} else if (r->fd >= 0) {
		resp = MHD_create_response_from_fd((size_t)r->fd_size, r->fd);
		if (resp)
			r->fd = -1;	/* the response closes it */
	} else {
		resp = MHD_create_response_from_buffer(r->out.len, r->out.data ? r->out.data : "",
						       MHD_RESPMEM_MUST_COPY);
	}
	if (!resp)
		return MHD_NO;
	if (r->content_type)
		ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					     r->content_type) == MHD_YES;
	ok = ok && MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
					   r->cache ? r->cache : "no-store") == MHD_YES;
	/* Every answer, pages and data alike: scripts and styles of our own
	 * origin only, nothing inline, nothing framed, nothing sniffed into
	 * markup (a log or a subject is text, whatever it holds). */
	ok = ok && MHD_add_response_header(resp, "Content-Security-Policy", API_CSP) == MHD_YES;
	ok = ok && MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff") == MHD_YES;
	ok = ok && MHD_add_response_header(resp, "Referrer-Policy", "same-origin") == MHD_YES;
	if (ok && r->log_size[0])
		ok = MHD_add_response_header(resp, "X-Perfgate-Log-Size", r->log_size) == MHD_YES;
	if (ok && r->allow)
		ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow) == MHD_YES;
	if (ok && r->status == 401)
		ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					     "Bearer") == MHD_YES;
	if (ok && r->status == 503)
		ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "5") == MHD_YES;
	if (ok && r->held_job) {
		ok = pg_fmt(num, sizeof(num), "%lld", (long long)r->held_job) >= 0 &&
		     MHD_add_response_header(resp, "X-Perfgate-Held-Job", num) == MHD_YES;
	}
	ret = ok ? MHD_queue_response(r->conn, r->status, resp) : MHD_NO;
	MHD_destroy_response(resp);
	r->state = API_REQ_SENT;
	return ret;
}

static enum MHD_Result api_handler(void *cls, struct MHD_Connection *conn, const char *url,
				   const char *method, const char *version,
				   const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct api_server *srv = cls;
	struct api_req *r = *con_cls;

	if (!r) {
		r = api_req_new(srv, conn, method, url);
		if (!r)
			return MHD_NO;
		*con_cls = r;
		api_begin(r, method, url);
		/* An answer queued before the request is read makes
		 * libmicrohttpd close the connection (it cannot know what
		 * follows): only worth it to refuse a body unread. */
		return r->answered && api_has_body(r) ? api_send(r) : MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;

		*upload_size = 0;
		if (r->state != API_REQ_BODY || r->answered)
			return MHD_YES;
		return api_body(r, upload_data, n);
	}
	switch (r->state) {
	case API_REQ_BODY:
		/* Queued: the writer may have answered and resumed it already;
		 * the answer goes out when libmicrohttpd calls again. */
		if (!r->answered && api_complete(r))
			return MHD_YES;
		return api_send(r);
	case API_REQ_DONE:
		/* Committed: the agent starts its job now, its first log
		 * chunks seconds later.  Make their directory meanwhile. */
		if (r->count_lease && r->leased_job > 0) {
			api_logs_prepare(&srv->logs, r->leased_job, r->leased_attempt,
					 r->agent_id);
			r->leased_job = 0;
		}
		return api_send(r);
	case API_REQ_QUEUED:
	case API_REQ_SENT:
		break;
	}
	return MHD_YES;
}

static void api_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			  enum MHD_RequestTerminationCode toe)
{
	struct api_server *srv = cls;
	struct api_req *r = *con_cls;
	unsigned int code;
	int64_t now_us;
	double secs;

	if (!r)
		return;
	*con_cls = NULL;
	now_us = pg_time_mono_us();
	secs = (double)(now_us - r->start_us) / 1e6;
	code = r->state == API_REQ_SENT ? r->status : 0;
	api_metrics_request(&srv->metrics, r->route.ep, code, secs);
	if (r->resumed_us && code && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		api_metrics_stage(&srv->metrics, API_STAGE_SEND,
				  (double)(now_us - r->resumed_us) / 1e6);
	if (pg_log_enabled(PG_LOG_DEBUG, "api"))
		pg_log_debug("api", "%s %s %u%s%s %.1f ms%s", r->method, r->path, code,
			     r->agent[0] ? " agent=" : "", r->agent, secs * 1000,
			     toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? ""
			     : " (connection ended early)");
	api_req_free(r);
}

__attribute__((format(printf, 2, 0)))
static void api_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	struct api_server *srv = cls;

	pg_vfmt_cut(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	/* Failing to start (an address in use) matters; once serving, what
	 * it says is about clients that went wrong. */
	pg_log(atomic_load(&srv->serving) ? PG_LOG_DEBUG : PG_LOG_WARN, "api",
	       "libmicrohttpd: %s", msg);
}

/* ---- start and stop ------------------------------------------------------- */

/* Resolve the listen host (a name or an address) for port. */
static int api_resolve(struct api_server *srv, struct pg_err *err)
{
	const struct ctl_api *a = srv->conf;
	struct addrinfo hints, *res = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(a->host, NULL, &hints, &res);
	if (rc != 0 || !res)
		return pg_err_set(err, PG_EINVAL, "api: listen address '%s': %s", a->host,
				  rc ? gai_strerror(rc) : "no address");
	if (res->ai_addrlen > sizeof(srv->addr)) {
		freeaddrinfo(res);
		return pg_err_set(err, PG_EINVAL, "api: listen address '%s': unusable", a->host);
	}
	memcpy(&srv->addr, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	if (srv->addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&srv->addr)->sin6_port = htons((uint16_t)a->port);
	else if (srv->addr.ss_family == AF_INET)
		((struct sockaddr_in *)&srv->addr)->sin_port = htons((uint16_t)a->port);
	else
		return pg_err_set(err, PG_EINVAL, "api: listen address '%s': not IPv4 or IPv6",
				  a->host);
	return 0;
}

/* Each parked long poll is a socket: let many agents in. */
static void api_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		pg_log_debug("api", "open files limit raised to %llu",
			     (unsigned long long)rl.rlim_cur);
}

/*
 * glibc gives a thread arena's free top back to the kernel (madvise) once
 * it passes the trim threshold, 128 KiB by default; the writer frees and
 * takes back about that much around every savepoint, so every request
 * paid for an madvise and the page faults after it.  Keep up to 8 MiB.
 */
static void api_tune_malloc(void)
{
	if (!mallopt(M_TRIM_THRESHOLD, 8 << 20))
		pg_log_debug("api", "mallopt(M_TRIM_THRESHOLD) refused");
}

static char *api_url(const char *host, int port)
{
	struct pg_buf b = PG_BUF_INIT(512);

	if (pg_buf_printf(&b, strchr(host, ':') ? "http://[%s]:%d" : "http://%s:%d", host,
			  port) < 0) {
		pg_buf_release(&b);
		return NULL;
	}
	return pg_buf_detach(&b, NULL);
}

static void api_server_free(struct api_server *srv)
{
	if (srv->mhd)
		MHD_stop_daemon(srv->mhd);
	api_logs_stop(&srv->logs);
	api_worker_stop(&srv->worker);
	if (srv->pool_ok)
		api_pool_close(&srv->pool);
	if (srv->auth_pool_ok)
		api_pool_close(&srv->auth_pool);
	if (srv->metrics_ok)
		api_metrics_destroy(&srv->metrics);
	if (srv->lock_ok) {
		pthread_cond_destroy(&srv->idle);
		pthread_mutex_destroy(&srv->lock);
	}
	free(srv->public_url);
	free(srv->web_dir);
	free(srv->mirror_root);
	free(srv);
}

int api_server_start(struct api_server **out, const struct ctl_config *cfg,
		     const struct profile_set *ps, struct pg_err *err)
{
	struct api_server *srv;
	const union MHD_DaemonInfo *info;
	sigset_t block, old;
	char *bound = NULL;
	unsigned int flags;
	int rc = -1;

	*out = NULL;
	if (!cfg->api.enabled)
		return pg_err_set(err, PG_EINVAL, "api: not configured");
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return pg_err_set(err, PG_ENOMEM, "api: out of memory");
	srv->cfg = cfg;
	srv->conf = &cfg->api;
	srv->ps = ps;
	atomic_init(&srv->stopping, 0);
	atomic_init(&srv->serving, 0);
	if (pthread_mutex_init(&srv->lock, NULL) != 0)
		goto nothread;
	if (api_cond_init(&srv->idle) < 0) {
		pthread_mutex_destroy(&srv->lock);
		goto nothread;
	}
	srv->lock_ok = true;
	if (api_metrics_init(&srv->metrics) < 0)
		goto nothread;
	srv->metrics_ok = true;
	if (srv->conf->admin_token_file &&
	    api_admin_load(&srv->admin, srv->conf->admin_token_file, err) < 0) {
		pg_err_prefix(err, "api");
		goto out;
	}
	if (api_resolve(srv, err) < 0 || api_web_init(srv, err) < 0)
		goto out;
	/* Where the planner keeps the trees (ctl_plan.c): the trends read
	 * commit order from them. */
	srv->mirror_root = pg_config_resolve(cfg->data_dir, "trees");
	if (!srv->mirror_root) {
		pg_err_set(err, PG_ENOMEM, "api: out of memory");
		goto out;
	}
	api_raise_nofile();
	api_tune_malloc();
	if (api_pool_open(&srv->pool, cfg->db, (size_t)srv->conf->threads + 1, true, err) < 0)
		goto out;
	srv->pool_ok = true;
	if (api_pool_open(&srv->auth_pool, cfg->db, (size_t)srv->conf->threads + 1, false,
			  err) < 0)
		goto out;
	srv->auth_pool_ok = true;

	/* The threads below inherit this mask: signals go to the main
	 * thread, whose loop acts on them. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	if (api_worker_start(&srv->worker, srv, err) == 0 &&
	    api_logs_start(&srv->logs, srv, err) == 0) {
		/* poll(), not epoll: with epoll, libmicrohttpd 0.9.75 left
		 * about one connection in a few hundred thousand requests
		 * unserved, its request unread until the idle timeout closed
		 * it 30 s later (bench_api under load, with and without
		 * suspended connections); poll() never did, and served
		 * as many requests.  Suspended connections are not polled, so
		 * parked long polls cost nothing per round. */
		flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME |
			MHD_USE_ERROR_LOG;
		if (srv->addr.ss_family == AF_INET6)
			flags |= MHD_USE_IPv6;
		srv->mhd = MHD_start_daemon(
			flags, (uint16_t)srv->conf->port, NULL, NULL, api_handler, srv,
			MHD_OPTION_EXTERNAL_LOGGER, api_mhd_log, srv,
			MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&srv->addr,
			MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)srv->conf->threads,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)API_CONN_TIMEOUT_S,
			MHD_OPTION_CONNECTION_LIMIT, (unsigned int)API_MAX_CONNECTIONS,
			MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)API_LISTEN_BACKLOG,
			MHD_OPTION_NOTIFY_COMPLETED, api_completed, srv,
			MHD_OPTION_END);
		if (!srv->mhd)
			pg_err_set(err, PG_EIO, "api: cannot listen on %s (see the log above)",
				   srv->conf->listen);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!srv->mhd)
		goto out;
	info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = info ? info->port : srv->conf->port;
	bound = api_url(srv->conf->host, srv->port);
	srv->public_url = srv->conf->public_url ? strdup(srv->conf->public_url) : NULL;
	if (!srv->public_url && bound)
		srv->public_url = strdup(bound);
	if (!bound || !srv->public_url) {
		pg_err_set(err, PG_ENOMEM, "api: out of memory");
		goto out;
	}
	pg_log_info("api", "%d threads, lease %lld s, max attempts %lld, bodies up to %lld "
		    "bytes, admin endpoints %s, links to %s", srv->conf->threads,
		    (long long)srv->conf->lease_s, (long long)srv->conf->max_attempts,
		    (long long)srv->conf->max_body_bytes,
		    srv->admin.set ? "on" : "off (no admin_token_file)", srv->public_url);
	pg_log_info("api", "listening on %s", bound);
	atomic_store(&srv->serving, 1);
	*out = srv;
	rc = 0;
	goto out;
nothread:
	pg_err_set(err, PG_EIO, "api: cannot make a mutex");
out:
	free(bound);
	if (rc)
		api_server_free(srv);
	return rc;
}

/* Wait until no request is in flight or ms passed; returns how many are
 * still in flight. */
static long api_wait_idle(struct api_server *srv, int64_t ms)
{
	struct timespec until = api_abstime(ms);
	long n;

	pthread_mutex_lock(&srv->lock);
	while (srv->in_flight > 0)
		if (pthread_cond_timedwait(&srv->idle, &srv->lock, &until) == ETIMEDOUT)
			break;
	n = srv->in_flight;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

void api_server_stop(struct api_server *srv)
{
	struct api_counts c;
	uint64_t total = 0;
	long left;

	if (!srv)
		return;
	pg_log_info("api", "stopping: new requests get 503, requests in flight finish");
	atomic_store(&srv->stopping, 1);
	api_worker_drain(&srv->worker);
	left = api_wait_idle(srv, API_DRAIN_MS);
	if (left)
		pg_log_warn("api", "%ld requests still in flight after %d s", left,
			    API_DRAIN_MS / 1000);
	/* The appender, then the writer, end after their queues: every
	 * suspended connection is resumed before libmicrohttpd stops, as it
	 * requires. */
	api_logs_stop(&srv->logs);
	api_worker_stop(&srv->worker);
	api_wait_idle(srv, 2000);
	MHD_stop_daemon(srv->mhd);
	srv->mhd = NULL;
	api_metrics_snapshot(&srv->metrics, &c);
	for (size_t i = 0; i < API_EP_COUNT; i++)
		total += c.route[i].count;
	pg_log_info("api", "stopped after %llu requests", (unsigned long long)total);
	api_server_free(srv);
}

void api_jobs_queued(struct api_server *srv)
{
	if (srv)
		api_worker_wake(&srv->worker);
}

int api_server_port(const struct api_server *srv)
{
	return srv->port;
}

const char *api_server_public_url(const struct api_server *srv)
{
	return srv->public_url;
}
