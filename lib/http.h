/* SPDX-License-Identifier: MIT */
#ifndef PG_HTTP_H
#define PG_HTTP_H

/*
 * A small HTTP client over libcurl, for the controller (Patchwork REST API,
 * mbox downloads) and the agents (the controller's /api/v1).
 *
 * Every request has a connect timeout, a total timeout and a cap on the
 * response body, so that a slow or hostile server can hold neither a
 * thread nor memory without bound.
 *
 *   struct pg_http_opts o = PG_HTTP_OPTS_INIT;
 *   struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
 *   struct pg_err err = PG_ERR_INIT;
 *
 *   o.authorization = "Token 04b5...";
 *   if (pg_http_post_json(url, "{\"state\":\"success\"}", &o, &r, &err) < 0)
 *           ... transport failure: retry later, err.msg says why ...
 *   else if (r.status >= 500)
 *           ... server trouble: retry later ...
 *   else if (r.status >= 400)
 *           ... our request is wrong: record it, do not retry ...
 *   pg_http_response_release(&r);
 *
 * Threads: call pg_http_global_init() once from main() before any thread
 * starts, and pg_http_global_cleanup() after they have all stopped.  In
 * between, pg_http_request() and friends may be called from any thread; a
 * struct pg_http_client must be used by one thread at a time.  Requests
 * never raise signals (CURLOPT_NOSIGNAL); daemons should still ignore
 * SIGPIPE, which a TLS library may raise on a closed connection.
 *
 * Proxies: libcurl honours http_proxy, https_proxy and no_proxy from the
 * environment.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define PG_HTTP_CONNECT_TIMEOUT_MS 5000L
#define PG_HTTP_TIMEOUT_MS 30000L
#define PG_HTTP_MAX_BODY ((size_t)16 * 1024 * 1024)
#define PG_HTTP_MAX_REDIRECTS 5L
/* The most bytes kept of one response header (Link, Location, ...) and of
 * the effective and redirect URLs; more fails the request (PG_ETOOBIG). */
#define PG_HTTP_HEADER_MAX ((size_t)8 * 1024)
/* The most header bytes read in one request, all responses included
 * (redirects, 100 Continue), kept or not. */
#define PG_HTTP_HEADERS_TOTAL_MAX ((size_t)256 * 1024)

/*
 * Request options.  Always start from PG_HTTP_OPTS_INIT and change fields:
 * new fields get working defaults there.  Strings are borrowed for the
 * duration of the call only.  No string may contain CR or LF (that would
 * smuggle headers): such a request fails with PG_EINVAL before sending.
 */
struct pg_http_opts {
	/* Both required (> 0): a request without a deadline is a bug. */
	long connect_timeout_ms;	/* TCP (and TLS) connect */
	long timeout_ms;		/* the whole transfer, redirects included */
	/* Response bodies over this many bytes abort the transfer with
	 * PG_ETOOBIG (early when the server announces a Content-Length). */
	size_t max_body;
	/* At most one of these: "Authorization: Bearer <bearer_token>" or
	 * "Authorization: <authorization>" (Patchwork wants "Token <key>"). */
	const char *bearer_token;
	const char *authorization;
	/* Content-Type of the request body, sent with POST, PUT and PATCH
	 * (also when the body is empty) and with a DELETE that has a body.
	 * NULL sends no Content-Type at all, rather than libcurl's default
	 * application/x-www-form-urlencoded (Patchwork answers 400 to JSON
	 * sent as a form). */
	const char *content_type;
	/* Extra request headers, "Name: value" each, NULL-terminated. */
	const char *const *headers;
	/* Follow 3xx Location (e.g. Patchwork's /patch/N/mbox/ -> 302),
	 * at most max_redirects times.  libcurl drops an Authorization
	 * header when a redirect leads to another host. */
	bool follow_redirects;
	long max_redirects;
	/* NULL: "perfgate/" PG_VERSION. */
	const char *user_agent;
	/* When > 0: fail (PG_ETIMEOUT) if fewer than low_speed_bytes per
	 * second arrive for low_speed_secs seconds, so that a stalled
	 * download fails long before timeout_ms. */
	long low_speed_bytes;
	long low_speed_secs;
};

#define PG_HTTP_OPTS_INIT {					\
	.connect_timeout_ms = PG_HTTP_CONNECT_TIMEOUT_MS,	\
	.timeout_ms = PG_HTTP_TIMEOUT_MS,			\
	.max_body = PG_HTTP_MAX_BODY,				\
	.max_redirects = PG_HTTP_MAX_REDIRECTS,			\
}

/*
 * A response.  Initialise with PG_HTTP_RESPONSE_INIT (or
 * pg_http_response_init()) and free with pg_http_response_release(); one
 * response may be reused for many requests: each request empties it first
 * and keeps its memory.
 *
 * Header values are kept without surrounding white space, as C strings via
 * pg_buf_str(), "" when absent.  When redirects were followed they are
 * those of the last response.
 */
struct pg_http_response {
	long status;			/* e.g. 200; 0 when none was received */
	struct pg_buf body;		/* bounded by opts.max_body */
	struct pg_buf content_type;	/* Content-Type */
	struct pg_buf location;		/* Location, as sent (may be relative) */
	struct pg_buf link;		/* Link; several joined with ", " */
	struct pg_buf retry_after;	/* Retry-After */
	struct pg_buf effective_url;	/* the URL last requested */
	/* Location resolved against effective_url when a redirect was not
	 * followed (follow_redirects false, or a 3xx with max_redirects 0). */
	struct pg_buf redirect_url;
	int64_t total_ms;		/* the whole transfer, as libcurl timed it */
	/* False when the request certainly never reached the server, so
	 * that it cannot have acted on it (no connection: refused, DNS,
	 * connect timeout, TLS handshake; or not one request byte written);
	 * true when it may have (an answer came, or the connection broke or
	 * timed out after the request went out).  See pg_http_may_have_sent(). */
	bool request_sent;
};

#define PG_HTTP_RESPONSE_INIT {					\
	.body = PG_BUF_INIT(PG_HTTP_MAX_BODY),			\
	.content_type = PG_BUF_INIT(PG_HTTP_HEADER_MAX),	\
	.location = PG_BUF_INIT(PG_HTTP_HEADER_MAX),		\
	.link = PG_BUF_INIT(PG_HTTP_HEADER_MAX),		\
	.retry_after = PG_BUF_INIT(PG_HTTP_HEADER_MAX),		\
	.effective_url = PG_BUF_INIT(PG_HTTP_HEADER_MAX),	\
	.redirect_url = PG_BUF_INIT(PG_HTTP_HEADER_MAX),	\
}

/* Initialise in place (same as PG_HTTP_RESPONSE_INIT). */
void pg_http_response_init(struct pg_http_response *resp);

/* Free the memory; the response is empty and reusable. */
void pg_http_response_release(struct pg_http_response *resp);

/* Initialise libcurl (curl_global_init).  Call from main() before any
 * thread starts; every successful call needs one pg_http_global_cleanup().
 * Returns 0, or -1 with PG_EIO. */
int pg_http_global_init(struct pg_err *err);

/* Undo pg_http_global_init(), after every thread using HTTP has stopped. */
void pg_http_global_cleanup(void);

/*
 * Perform one request and wait for it to finish.
 *
 * method: "GET", "HEAD", "POST", "PUT", "PATCH" or "DELETE".
 * body, body_len: the request body (NULL and 0 for none).  GET and HEAD
 * take none (PG_EINVAL); POST, PUT and PATCH always send one, empty when
 * body_len is 0, with Content-Length; DELETE sends one only when
 * body_len > 0.  The body is sent as is, never as a form.
 * opts: NULL for the defaults (PG_HTTP_OPTS_INIT).
 * resp: filled as far as the transfer went, also on failure.
 *
 * Returns 0 when an HTTP response arrived, whatever its status: a 404 or a
 * 503 is an answer, not a transport error, and resp->status tells the
 * caller what to do (record a 4xx, retry a 5xx later).  Returns -1 when no
 * complete response arrived, with err set to "METHOD URL: reason" (URL
 * without any user:password) and its code:
 *   PG_EINVAL   bad arguments or options, malformed URL, unsupported scheme
 *   PG_ETIMEOUT connect or total timeout, or below the low-speed limit
 *   PG_ETOOBIG  body over opts.max_body, a kept header over
 *               PG_HTTP_HEADER_MAX or all headers over
 *               PG_HTTP_HEADERS_TOTAL_MAX
 *   PG_ENOMEM   out of memory
 *   PG_EIO      anything else: connection refused, DNS failure, too many
 *               redirects, connection reset, TLS failure...
 * The reason is libcurl's own message (CURLOPT_ERRORBUFFER) when it has
 * one, e.g. "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't
 * connect to server".
 */
int pg_http_request(const char *method, const char *url, const void *body,
		    size_t body_len, const struct pg_http_opts *opts,
		    struct pg_http_response *resp, struct pg_err *err);

/* GET url.  Same contract as pg_http_request(). */
int pg_http_get(const char *url, const struct pg_http_opts *opts,
		struct pg_http_response *resp, struct pg_err *err);

/* POST the C string json (NULL or "" for an empty body) with
 * "Content-Type: application/json", whatever opts->content_type says.  Same
 * contract as pg_http_request(). */
int pg_http_post_json(const char *url, const char *json,
		      const struct pg_http_opts *opts,
		      struct pg_http_response *resp, struct pg_err *err);

/*
 * A reusable client: one libcurl handle whose connections (and DNS cache)
 * outlive a request, so that an agent long-polling the controller, or a
 * controller walking Patchwork's pages, keeps one TCP connection.  Options
 * are not carried over: each request takes its own.  One thread at a time.
 */
struct pg_http_client;

/* Returns a new client, or NULL with PG_ENOMEM. */
struct pg_http_client *pg_http_client_new(struct pg_err *err);

/* Close the connections and free the client; NULL is allowed. */
void pg_http_client_free(struct pg_http_client *client);

/* pg_http_request() on the client's handle.  Same contract. */
int pg_http_client_request(struct pg_http_client *client, const char *method,
			   const char *url, const void *body, size_t body_len,
			   const struct pg_http_opts *opts,
			   struct pg_http_response *resp, struct pg_err *err);

/*
 * Find the target of the rel="next" link in a Link header value (RFC 8288),
 * the way Patchwork pages its lists:
 *
 *   <https://x/api/1.3/events/?page=2>; rel="next", <https://x/...>; rel="prev"
 *
 * Parameters may be quoted or not and in any case; a rel holding several
 * types ("next last") counts; commas inside <...> are part of the URL.  The
 * URL is returned as written (Patchwork's are absolute; a relative one is
 * for the caller to resolve against the request URL).  Pure.
 *
 * Returns 1 and copies the URL (NUL-terminated) to out, 0 when there is no
 * next link (link_header NULL or empty included: the last page), or -1 when
 * the value is malformed, the next URL is empty, or it does not fit in
 * outlen bytes (out is then "" when outlen > 0).
 */
int pg_http_link_next(const char *link_header, char *out, size_t outlen);

/*
 * Read a Retry-After value (RFC 9110 10.2.3): delay seconds ("120") or an
 * HTTP date ("Wed, 21 Oct 2026 07:28:00 GMT", compared with now_wall_ms,
 * ms since the epoch).  Pure.
 *
 * Returns the delay in ms (0 for a date in the past; delay seconds are
 * capped at a day), or -1 when the value is empty or malformed.
 */
int64_t pg_http_retry_after_ms(const char *value, int64_t now_wall_ms);

/* The pg_errcode of a libcurl CURLcode (given as an int, so that callers
 * need not include curl): PG_ETIMEOUT, PG_ETOOBIG (a size limit),
 * PG_ENOMEM, PG_EINVAL (a malformed URL, an unsupported scheme), else
 * PG_EIO.  Shared by every libcurl user (HTTP here, SMTP in the
 * controller). */
enum pg_errcode pg_http_errcode(int curl_code);

/*
 * Whether a failed transfer (libcurl's curl_code, not CURLE_OK) may have
 * delivered the request, given request_bytes, the request bytes libcurl
 * says it wrote (CURLINFO_REQUEST_SIZE).  False only when nothing can have
 * been acted on: no connection was made (CURLE_COULDNT_RESOLVE_HOST,
 * _RESOLVE_PROXY, _COULDNT_CONNECT, a TLS handshake failure) or not a byte
 * of the request was written (a connect timeout).  Everything else (a
 * timeout or a reset after sending, an empty reply) may have reached the
 * server.  Pure.
 */
bool pg_http_may_have_sent(int curl_code, long request_bytes);

#endif
