/* SPDX-License-Identifier: MIT */
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "fmt.h"
#include "timeutil.h"

#ifndef PG_VERSION
#define PG_VERSION "unknown"
#endif

#define PG_HTTP_USER_AGENT "perfgate/" PG_VERSION

/* Room for a URL in an error message; longer ones are cut with "...". */
#define SHOWN_URL_MAX 512

struct pg_http_client {
	CURL *curl;
	char errbuf[CURL_ERROR_SIZE];
};

enum method {
	M_GET,
	M_HEAD,
	M_POST,
	M_PUT,
	M_PATCH,
	M_DELETE,
};

/* State shared with libcurl's callbacks during one transfer. */
struct xfer {
	struct pg_http_response *resp;
	struct pg_buf *last_kept;	/* for folded continuation lines */
	size_t header_bytes;
	/* Set when a callback aborted the transfer, which libcurl only
	 * reports as a write error: the real reason is here. */
	enum pg_errcode fail;
	char fail_msg[128];
};

void pg_http_response_init(struct pg_http_response *resp)
{
	resp->status = 0;
	pg_buf_init(&resp->body, PG_HTTP_MAX_BODY);
	pg_buf_init(&resp->content_type, PG_HTTP_HEADER_MAX);
	pg_buf_init(&resp->location, PG_HTTP_HEADER_MAX);
	pg_buf_init(&resp->link, PG_HTTP_HEADER_MAX);
	pg_buf_init(&resp->retry_after, PG_HTTP_HEADER_MAX);
	pg_buf_init(&resp->effective_url, PG_HTTP_HEADER_MAX);
	pg_buf_init(&resp->redirect_url, PG_HTTP_HEADER_MAX);
	resp->total_ms = 0;
	resp->request_sent = false;
}

void pg_http_response_release(struct pg_http_response *resp)
{
	if (!resp)
		return;
	resp->status = 0;
	pg_buf_release(&resp->body);
	pg_buf_release(&resp->content_type);
	pg_buf_release(&resp->location);
	pg_buf_release(&resp->link);
	pg_buf_release(&resp->retry_after);
	pg_buf_release(&resp->effective_url);
	pg_buf_release(&resp->redirect_url);
	resp->total_ms = 0;
	resp->request_sent = false;
}

/* Forget the headers of a previous response (a redirect, a 100 Continue,
 * or the previous request on a reused response). */
static void reset_headers(struct pg_http_response *resp)
{
	pg_buf_reset(&resp->content_type);
	pg_buf_reset(&resp->location);
	pg_buf_reset(&resp->link);
	pg_buf_reset(&resp->retry_after);
}

static void response_reset(struct pg_http_response *resp, size_t max_body)
{
	resp->status = 0;
	pg_buf_reset(&resp->body);
	resp->body.max = max_body;
	reset_headers(resp);
	pg_buf_reset(&resp->effective_url);
	pg_buf_reset(&resp->redirect_url);
	resp->total_ms = 0;
	resp->request_sent = false;
}

int pg_http_global_init(struct pg_err *err)
{
	CURLcode cc = curl_global_init(CURL_GLOBAL_DEFAULT);

	if (cc != CURLE_OK)
		return pg_err_set(err, PG_EIO, "initialise libcurl: %s",
				  curl_easy_strerror(cc));
	return 0;
}

void pg_http_global_cleanup(void)
{
	curl_global_cleanup();
}

/* The URL for error messages: without "user:password@", and cut to
 * SHOWN_URL_MAX so that the reason after it still fits in pg_err. */
static void show_url(const char *url, char *out, size_t outlen)
{
	const char *scheme_end = strstr(url, "://");
	const char *auth, *auth_end, *at = NULL;
	int n;

	if (scheme_end) {
		auth = scheme_end + 3;
		auth_end = auth + strcspn(auth, "/?#");
		for (const char *p = auth; p < auth_end; p++)
			if (*p == '@')
				at = p;
	}
	if (at)
		n = snprintf(out, outlen, "%.*s%s", (int)(auth - url), url, at + 1);
	else
		n = snprintf(out, outlen, "%s", url);
	/* Cut on purpose: a message, not a URL to use. */
	if (n >= 0 && (size_t)n >= outlen && outlen > 4)
		memcpy(out + outlen - 4, "...", 4);
}

static bool has_crlf(const char *s)
{
	return s && strpbrk(s, "\r\n") != NULL;
}

static int parse_method(const char *method, enum method *m)
{
	static const struct {
		const char *name;
		enum method m;
	} methods[] = {
		{ "GET", M_GET }, { "HEAD", M_HEAD }, { "POST", M_POST },
		{ "PUT", M_PUT }, { "PATCH", M_PATCH }, { "DELETE", M_DELETE },
	};

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (!strcmp(method, methods[i].name)) {
			*m = methods[i].m;
			return 0;
		}
	}
	return -1;
}

/* Whether the request carries a body (and so a Content-Type). */
static bool sends_body(enum method m, size_t body_len)
{
	return m == M_POST || m == M_PUT || m == M_PATCH ||
	       (m == M_DELETE && body_len > 0);
}

static int check_opts(const char *method, const char *shown,
		      const struct pg_http_opts *o, enum method m,
		      const void *body, size_t body_len, struct pg_err *err)
{
	if (o->connect_timeout_ms <= 0 || o->timeout_ms <= 0)
		return pg_err_set(err, PG_EINVAL,
				  "%s %s: timeouts must be set (connect %ld ms, total %ld ms)",
				  method, shown, o->connect_timeout_ms, o->timeout_ms);
	if (o->follow_redirects && o->max_redirects < 0)
		return pg_err_set(err, PG_EINVAL, "%s %s: max_redirects %ld is negative",
				  method, shown, o->max_redirects);
	if (o->low_speed_secs < 0 || o->low_speed_bytes < 0 ||
	    (o->low_speed_secs > 0 && o->low_speed_bytes == 0))
		return pg_err_set(err, PG_EINVAL,
				  "%s %s: bad low-speed limit (%ld bytes/s for %ld s)",
				  method, shown, o->low_speed_bytes, o->low_speed_secs);
	if (o->bearer_token && o->authorization)
		return pg_err_set(err, PG_EINVAL,
				  "%s %s: both a bearer token and an Authorization value",
				  method, shown);
	if (has_crlf(o->bearer_token) || has_crlf(o->authorization) ||
	    has_crlf(o->content_type) || has_crlf(o->user_agent))
		return pg_err_set(err, PG_EINVAL, "%s %s: line break in a header value",
				  method, shown);
	for (const char *const *h = o->headers; h && *h; h++) {
		const char *colon = strchr(*h, ':');

		if (has_crlf(*h) || !colon || colon == *h)
			return pg_err_set(err, PG_EINVAL,
					  "%s %s: malformed extra header '%.64s'",
					  method, shown, *h);
	}
	if ((m == M_GET || m == M_HEAD) && body_len > 0)
		return pg_err_set(err, PG_EINVAL, "%s %s: a %s request takes no body",
				  method, shown, method);
	if (!body && body_len > 0)
		return pg_err_set(err, PG_EINVAL, "%s %s: %zu body bytes but no body",
				  method, shown, body_len);
	return 0;
}

/* Append "name: value" (or "name:" to suppress a libcurl default) to the
 * list.  Returns 0 or -1. */
static int add_header(struct curl_slist **list, struct pg_buf *line,
		      const char *name, const char *value1, const char *value2)
{
	struct curl_slist *l;

	pg_buf_reset(line);
	if (pg_buf_adds(line, name) < 0 || pg_buf_addch(line, ':') < 0)
		return -1;
	if (value1 && (pg_buf_addch(line, ' ') < 0 || pg_buf_adds(line, value1) < 0))
		return -1;
	if (value2 && pg_buf_adds(line, value2) < 0)
		return -1;
	l = curl_slist_append(*list, pg_buf_str(line));
	if (!l) {
		errno = ENOMEM;
		return -1;
	}
	*list = l;
	return 0;
}

static int build_headers(const char *method, const char *shown,
			 const struct pg_http_opts *o, enum method m, size_t body_len,
			 struct curl_slist **list, struct pg_err *err)
{
	/* Header values are checked for line breaks but not for length:
	 * they come from our configuration, so bound them generously. */
	struct pg_buf line = PG_BUF_INIT(64 * 1024);
	struct curl_slist *l;
	int ret = -1;

	if (o->bearer_token &&
	    add_header(list, &line, "Authorization", "Bearer ", o->bearer_token) < 0)
		goto fail;
	if (o->authorization &&
	    add_header(list, &line, "Authorization", o->authorization, NULL) < 0)
		goto fail;
	if (sends_body(m, body_len)) {
		/* Without a type, libcurl would announce a form. */
		if (add_header(list, &line, "Content-Type", o->content_type, NULL) < 0)
			goto fail;
		/* No "Expect: 100-continue": it costs a round trip, or a
		 * second's stall with servers that ignore it. */
		if (add_header(list, &line, "Expect", NULL, NULL) < 0)
			goto fail;
	}
	for (const char *const *h = o->headers; h && *h; h++) {
		l = curl_slist_append(*list, *h);
		if (!l) {
			errno = ENOMEM;
			goto fail;
		}
		*list = l;
	}
	ret = 0;
	goto out;
fail:
	pg_err_set(err, errno == E2BIG ? PG_EINVAL : PG_ENOMEM,
		   "%s %s: build request headers: %s", method, shown,
		   errno == E2BIG ? "header over 64 KiB" : "out of memory");
out:
	pg_buf_release(&line);
	return ret;
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
	struct xfer *x = userp;
	size_t n = size * nmemb;

	if (pg_buf_add(&x->resp->body, data, n) < 0) {
		if (errno == E2BIG) {
			x->fail = PG_ETOOBIG;
			pg_fmt_cut(x->fail_msg, sizeof(x->fail_msg),
				    "response body over %zu bytes", x->resp->body.max);
		} else {
			x->fail = PG_ENOMEM;
			pg_fmt_cut(x->fail_msg, sizeof(x->fail_msg),
				    "out of memory for the response body");
		}
		/* Anything but n makes libcurl abort the transfer. */
		return n ? 0 : 1;
	}
	return n;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Which kept header a line's name is, if any. */
static struct pg_buf *kept_header(struct pg_http_response *resp, const char *name,
				  size_t len, const char **label)
{
	static const struct {
		const char *name;
		size_t off;
	} kept[] = {
		{ "Content-Type", offsetof(struct pg_http_response, content_type) },
		{ "Location", offsetof(struct pg_http_response, location) },
		{ "Link", offsetof(struct pg_http_response, link) },
		{ "Retry-After", offsetof(struct pg_http_response, retry_after) },
	};

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		if (strlen(kept[i].name) == len && !strncasecmp(name, kept[i].name, len)) {
			*label = kept[i].name;
			return (struct pg_buf *)((char *)resp + kept[i].off);
		}
	}
	return NULL;
}

static size_t header_fail(struct xfer *x, const char *what, size_t n)
{
	if (errno == E2BIG) {
		x->fail = PG_ETOOBIG;
		pg_fmt_cut(x->fail_msg, sizeof(x->fail_msg),
			    "response header '%s' over %zu bytes", what, PG_HTTP_HEADER_MAX);
	} else {
		x->fail = PG_ENOMEM;
		pg_fmt_cut(x->fail_msg, sizeof(x->fail_msg),
			    "out of memory for response header '%s'", what);
	}
	return n ? 0 : 1;
}

/* libcurl hands over one header line at a time, CRLF included, for every
 * response of the transfer (redirects, 100 Continue): keep the selected
 * headers of the last one. */
static size_t header_cb(char *data, size_t size, size_t nitems, void *userp)
{
	struct xfer *x = userp;
	struct pg_http_response *resp = x->resp;
	size_t n = size * nitems;
	const char *p = data, *end = data + n, *colon, *label;
	struct pg_buf *dst;

	x->header_bytes += n;
	if (x->header_bytes > PG_HTTP_HEADERS_TOTAL_MAX) {
		x->fail = PG_ETOOBIG;
		pg_fmt_cut(x->fail_msg, sizeof(x->fail_msg),
			    "response headers over %zu bytes", PG_HTTP_HEADERS_TOTAL_MAX);
		return n ? 0 : 1;
	}
	while (end > p && is_ws(end[-1]))
		end--;
	if (n >= 5 && !memcmp(data, "HTTP/", 5)) {
		reset_headers(resp);
		x->last_kept = NULL;
		return n;
	}
	if (p < end && (*p == ' ' || *p == '\t')) {
		/* An obsolete folded line continues the previous header. */
		if (!x->last_kept)
			return n;
		while (p < end && is_ws(*p))
			p++;
		if (pg_buf_addch(x->last_kept, ' ') < 0 ||
		    pg_buf_add(x->last_kept, p, (size_t)(end - p)) < 0)
			return header_fail(x, "(continued)", n);
		return n;
	}
	x->last_kept = NULL;
	colon = memchr(p, ':', (size_t)(end - p));
	if (!colon)
		return n;
	dst = kept_header(resp, p, (size_t)(colon - p), &label);
	if (!dst)
		return n;
	p = colon + 1;
	while (p < end && is_ws(*p))
		p++;
	/* Link may be repeated and its values are a list; any other kept
	 * header is single-valued and the last one wins. */
	if (dst == &resp->link && dst->len > 0) {
		if (pg_buf_add(dst, ", ", 2) < 0)
			return header_fail(x, label, n);
	} else {
		pg_buf_reset(dst);
	}
	if (pg_buf_add(dst, p, (size_t)(end - p)) < 0)
		return header_fail(x, label, n);
	x->last_kept = dst;
	return n;
}

/* Copy what libcurl knows about the transfer into resp.  Returns 0, or -1
 * with err set. */
static int collect_info(CURL *h, const char *method, const char *shown,
			struct pg_http_response *resp, struct pg_err *err)
{
	long status = 0;
	char *eff = NULL, *redir = NULL;
	curl_off_t total_us = 0;
	CURLcode cc;

	cc = curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (cc == CURLE_OK)
		cc = curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff);
	if (cc == CURLE_OK)
		cc = curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &redir);
	if (cc == CURLE_OK)
		cc = curl_easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &total_us);
	if (cc != CURLE_OK)
		return pg_err_set(err, PG_EIO, "%s %s: read transfer info: %s",
				  method, shown, curl_easy_strerror(cc));
	resp->status = status;
	resp->total_ms = (int64_t)(total_us / 1000);
	if ((eff && pg_buf_adds(&resp->effective_url, eff) < 0) ||
	    (redir && pg_buf_adds(&resp->redirect_url, redir) < 0))
		return pg_err_set(err, errno == E2BIG ? PG_ETOOBIG : PG_ENOMEM,
				  "%s %s: %s", method, shown,
				  errno == E2BIG ? "effective or redirect URL too long"
						 : "out of memory");
	return 0;
}

bool pg_http_may_have_sent(int curl_code, long request_bytes)
{
	switch (curl_code) {
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		return false;
	default:
		/* libcurl counts request bytes once written (a connection
		 * reused and found dead, then retried, counts both). */
		return request_bytes > 0;
	}
}

enum pg_errcode pg_http_errcode(int curl_code)
{
	CURLcode cc = (CURLcode)curl_code;

	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
		return PG_ETIMEOUT;
	case CURLE_FILESIZE_EXCEEDED:
		return PG_ETOOBIG;
	case CURLE_OUT_OF_MEMORY:
		return PG_ENOMEM;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		return PG_EINVAL;
	default:
		return PG_EIO;
	}
}

/* Set an option or leave through `out` with the option's name in err. */
#define SETOPT(opt, val)							\
	do {									\
		cc = curl_easy_setopt(h, opt, val);				\
		if (cc != CURLE_OK) {						\
			pg_err_set(err, cc == CURLE_OUT_OF_MEMORY ? PG_ENOMEM	\
				   : PG_EINVAL, "%s %s: set %s: %s", method,	\
				   shown, #opt, curl_easy_strerror(cc));	\
			goto out;						\
		}								\
	} while (0)

int pg_http_client_request(struct pg_http_client *client, const char *method,
			   const char *url, const void *body, size_t body_len,
			   const struct pg_http_opts *opts,
			   struct pg_http_response *resp, struct pg_err *err)
{
	static const struct pg_http_opts defaults = PG_HTTP_OPTS_INIT;
	const struct pg_http_opts *o = opts ? opts : &defaults;
	struct xfer x = { .resp = resp, .fail = PG_OK };
	struct curl_slist *hdrs = NULL;
	char shown[SHOWN_URL_MAX];
	enum method m;
	CURLcode cc;
	CURL *h;
	int ret = -1;

	if (!client || !method || !url || !resp) {
		pg_err_set(err, PG_EINVAL, "HTTP request: missing %s",
			   !client ? "client" : !method ? "method" : !url ? "URL" : "response");
		goto out;
	}
	show_url(url, shown, sizeof(shown));
	response_reset(resp, o->max_body);
	if (parse_method(method, &m) < 0) {
		pg_err_set(err, PG_EINVAL, "%.16s %s: unsupported method", method, shown);
		goto out;
	}
	if (check_opts(method, shown, o, m, body, body_len, err) < 0 ||
	    build_headers(method, shown, o, m, body_len, &hdrs, err) < 0)
		goto out;

	/* Options do not carry over from the previous request; the
	 * connection cache does. */
	h = client->curl;
	curl_easy_reset(h);
	client->errbuf[0] = '\0';
	SETOPT(CURLOPT_ERRORBUFFER, client->errbuf);
	SETOPT(CURLOPT_URL, url);
	/* Daemons are threaded: no SIGALRM for DNS timeouts (libcurl
	 * resolves in a thread here), no SIGPIPE games. */
	SETOPT(CURLOPT_NOSIGNAL, 1L);
	SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
	SETOPT(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	SETOPT(CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
	SETOPT(CURLOPT_TIMEOUT_MS, o->timeout_ms);
	if (o->low_speed_secs > 0) {
		SETOPT(CURLOPT_LOW_SPEED_LIMIT, o->low_speed_bytes);
		SETOPT(CURLOPT_LOW_SPEED_TIME, o->low_speed_secs);
	}
	/* Refuse early when the server announces a body over the cap; the
	 * write callback enforces it when it does not. */
	if (m != M_HEAD && (uint64_t)o->max_body < (uint64_t)INT64_MAX)
		SETOPT(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_body);
	SETOPT(CURLOPT_WRITEFUNCTION, write_cb);
	SETOPT(CURLOPT_WRITEDATA, &x);
	SETOPT(CURLOPT_HEADERFUNCTION, header_cb);
	SETOPT(CURLOPT_HEADERDATA, &x);
	SETOPT(CURLOPT_USERAGENT, o->user_agent ? o->user_agent : PG_HTTP_USER_AGENT);
	/* Long polls sit idle for a while; keep NATs from dropping them. */
	SETOPT(CURLOPT_TCP_KEEPALIVE, 1L);
	SETOPT(CURLOPT_FOLLOWLOCATION, o->follow_redirects ? 1L : 0L);
	if (o->follow_redirects)
		SETOPT(CURLOPT_MAXREDIRS, o->max_redirects);
	if (hdrs)
		SETOPT(CURLOPT_HTTPHEADER, hdrs);

	switch (m) {
	case M_GET:
		SETOPT(CURLOPT_HTTPGET, 1L);
		break;
	case M_HEAD:
		SETOPT(CURLOPT_NOBODY, 1L);
		break;
	case M_POST:
	case M_PUT:
	case M_PATCH:
	case M_DELETE:
		if (m != M_POST)
			SETOPT(CURLOPT_CUSTOMREQUEST, method);
		if (!sends_body(m, body_len))
			break;
		/* POSTFIELDS with an explicit size: binary-safe, sent with a
		 * Content-Length even when empty (never chunked), and not
		 * copied: the caller's body outlives the transfer. */
		SETOPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
		SETOPT(CURLOPT_POSTFIELDS, body_len ? body : "");
		break;
	}

	cc = curl_easy_perform(h);
	if (cc != CURLE_OK) {
		const char *reason = client->errbuf[0] ? client->errbuf
						       : curl_easy_strerror(cc);
		long sent_bytes = 1;

		/* Unknown stays "may have been sent": the safe side. */
		if (curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent_bytes) != CURLE_OK)
			sent_bytes = 1;
		resp->request_sent = pg_http_may_have_sent((int)cc, sent_bytes);

		/* Keep what is known (status, URL) for the caller's logs. */
		collect_info(h, method, shown, resp, NULL);
		if (x.fail != PG_OK)
			pg_err_set(err, x.fail, "%s %s: %s", method, shown, x.fail_msg);
		else if (cc == CURLE_OPERATION_TIMEDOUT)
			pg_err_set(err, PG_ETIMEOUT,
				   "%s %s: %s (connect timeout %ld ms, timeout %ld ms)",
				   method, shown, reason, o->connect_timeout_ms,
				   o->timeout_ms);
		else if (cc == CURLE_FILESIZE_EXCEEDED)
			pg_err_set(err, PG_ETOOBIG, "%s %s: response body over %zu bytes",
				   method, shown, o->max_body);
		else
			pg_err_set(err, pg_http_errcode((int)cc), "%s %s: %s", method, shown, reason);
		goto out;
	}
	resp->request_sent = true;
	if (collect_info(h, method, shown, resp, err) < 0)
		goto out;
	ret = 0;
out:
	curl_slist_free_all(hdrs);
	return ret;
}

#undef SETOPT

struct pg_http_client *pg_http_client_new(struct pg_err *err)
{
	struct pg_http_client *c = calloc(1, sizeof(*c));

	if (!c) {
		pg_err_set(err, PG_ENOMEM, "HTTP client: out of memory");
		return NULL;
	}
	c->curl = curl_easy_init();
	if (!c->curl) {
		free(c);
		pg_err_set(err, PG_ENOMEM, "HTTP client: curl_easy_init failed");
		return NULL;
	}
	return c;
}

void pg_http_client_free(struct pg_http_client *client)
{
	if (!client)
		return;
	curl_easy_cleanup(client->curl);
	free(client);
}

int pg_http_request(const char *method, const char *url, const void *body,
		    size_t body_len, const struct pg_http_opts *opts,
		    struct pg_http_response *resp, struct pg_err *err)
{
	struct pg_http_client *c = pg_http_client_new(err);
	int ret;

	if (!c)
		return -1;
	ret = pg_http_client_request(c, method, url, body, body_len, opts, resp, err);
	pg_http_client_free(c);
	return ret;
}

int pg_http_get(const char *url, const struct pg_http_opts *opts,
		struct pg_http_response *resp, struct pg_err *err)
{
	return pg_http_request("GET", url, NULL, 0, opts, resp, err);
}

int pg_http_post_json(const char *url, const char *json,
		      const struct pg_http_opts *opts,
		      struct pg_http_response *resp, struct pg_err *err)
{
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;

	if (opts)
		o = *opts;
	o.content_type = "application/json";
	return pg_http_request("POST", url, json, json ? strlen(json) : 0, &o,
			       resp, err);
}

static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Whether a rel value (space-separated relation types) holds "next". */
static bool rel_has_next(const char *v, size_t len)
{
	size_t i = 0, start;

	while (i < len) {
		while (i < len && (v[i] == ' ' || v[i] == '\t'))
			i++;
		start = i;
		while (i < len && v[i] != ' ' && v[i] != '\t')
			i++;
		if (i - start == 4 && !strncasecmp(v + start, "next", 4))
			return true;
	}
	return false;
}

/*
 * One link-param value: a token or a quoted-string.  Copies it (unescaped)
 * into val, at most vallen - 1 bytes; *vlen is the full length, so that a
 * value too long to copy is seen not to match.  Returns the position after
 * it, or NULL when malformed.
 */
static const char *param_value(const char *p, char *val, size_t vallen, size_t *vlen)
{
	size_t n = 0;

	if (*p == '"') {
		for (p++; *p != '"'; p++) {
			if (*p == '\0')
				return NULL;
			if (*p == '\\' && p[1])
				p++;
			if (n + 1 < vallen)
				val[n] = *p;
			n++;
		}
		p++;
	} else {
		/* Lenient: anything up to the next separator. */
		for (; *p && *p != ';' && *p != ',' && *p != ' ' && *p != '\t'; p++) {
			if (n + 1 < vallen)
				val[n] = *p;
			n++;
		}
	}
	val[n < vallen ? n : vallen - 1] = '\0';
	*vlen = n;
	return p;
}

int pg_http_link_next(const char *link_header, char *out, size_t outlen)
{
	const char *p = link_header, *url, *url_end, *name;
	char val[64];
	size_t vlen, name_len;
	bool is_next, seen_rel;

	if (out && outlen)
		out[0] = '\0';
	if (!p)
		return 0;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			return 0;
		if (*p != '<')
			return -1;
		url = p + 1;
		url_end = strchr(url, '>');
		if (!url_end)
			return -1;
		p = url_end + 1;
		is_next = false;
		seen_rel = false;
		for (;;) {
			p = skip_ws(p);
			if (*p == ',' || *p == '\0')
				break;
			if (*p != ';')
				return -1;
			p = skip_ws(p + 1);
			name = p;
			while (is_tchar(*p))
				p++;
			name_len = (size_t)(p - name);
			if (name_len == 0)
				return -1;
			p = skip_ws(p);
			if (*p != '=')
				continue;	/* a parameter without a value */
			p = param_value(skip_ws(p + 1), val, sizeof(val), &vlen);
			if (!p)
				return -1;
			/* RFC 8288 3.3: only the first rel counts. */
			if (name_len == 3 && !strncasecmp(name, "rel", 3) && !seen_rel) {
				seen_rel = true;
				is_next = vlen < sizeof(val) && rel_has_next(val, vlen);
			}
		}
		if (is_next) {
			size_t len = (size_t)(url_end - url);

			if (len == 0 || !out || len >= outlen)
				return -1;
			memcpy(out, url, len);
			out[len] = '\0';
			return 1;
		}
	}
}

int64_t pg_http_retry_after_ms(const char *value, int64_t now_wall_ms)
{
	const char *p = value, *end;
	int64_t secs = 0, when;

	if (!p)
		return -1;
	p = skip_ws(p);
	end = p + strlen(p);
	while (end > p && is_ws(end[-1]))
		end--;
	if (p == end)
		return -1;
	if (*p >= '0' && *p <= '9') {
		for (; p < end; p++) {
			if (*p < '0' || *p > '9')
				return -1;
			/* A day is more than any server means; also no
			 * overflow. */
			if (secs < 86400)
				secs = secs * 10 + (*p - '0');
		}
		return (secs < 86400 ? secs : 86400) * 1000;
	}
	/* pg_time_parse_rfc2822() takes surrounding white space and the
	 * IMF-fixdate "Wed, 21 Oct 2026 07:28:00 GMT". */
	if (pg_time_parse_rfc2822(value, &when) < 0)
		return -1;
	return when > now_wall_ms ? when - now_wall_ms : 0;
}
