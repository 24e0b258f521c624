/* SPDX-License-Identifier: MIT */
/*
 * Patchwork REST API client.  See patchwork.h for the contract and the
 * shared reference (section 1) for the server's behaviour it relies on.
 */
#include "patchwork.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fmt.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "timeutil.h"

#define LOG_COMP "patchwork"
/* Ids are exact in cJSON's doubles up to 2^53. */
#define ID_MAX ((int64_t)1 << 53)
/* Bytes of an error answer quoted in an error message. */
#define BODY_QUOTE_MAX 300
/* Room for a request URL; Link targets are bounded by the HTTP layer. */
#define URL_MAX PG_HTTP_HEADER_MAX

struct pg_pw_client {
	char *base;		/* no trailing '/' */
	char *origin;		/* scheme://host[:port] of base */
	char *project;		/* NULL when not configured */
	char *authorization;	/* "Token <key>", NULL without a token */
	char *username;		/* NULL when not configured */
	long connect_timeout_ms;
	long timeout_ms;
	size_t max_response;
	size_t max_mbox;
	unsigned int per_page;
	unsigned int max_pages;
	struct pg_http_client *http;
};

static const char *const categories[] = {
	"cover-created", "patch-created", "patch-completed",
	"patch-state-changed", "patch-delegated", "patch-relation-changed",
	"check-created", "series-created", "series-completed",
	"cover-comment-created", "patch-comment-created", NULL,
};

static const char *const state_names[] = {
	[PG_PW_CHECK_PENDING] = "pending",
	[PG_PW_CHECK_SUCCESS] = "success",
	[PG_PW_CHECK_WARNING] = "warning",
	[PG_PW_CHECK_FAIL] = "fail",
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */

static bool has_crlf(const char *s)
{
	return s && strpbrk(s, "\r\n") != NULL;
}

static size_t http_prefix_len(const char *url)
{
	if (!strncmp(url, "http://", 7))
		return 7;
	if (!strncmp(url, "https://", 8))
		return 8;
	return 0;
}

/* An absolute http(s) URL with a host and nothing that could smuggle a
 * header or split a request line. */
static bool url_ok(const char *url)
{
	size_t n = url ? http_prefix_len(url) : 0;

	if (!n || !url[n] || url[n] == '/')
		return false;
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

static int dup_str(const char *s, char **out, struct pg_err *err)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	if (!*out)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	return 0;
}

/* Percent-encode a query value: everything but RFC 3986 unreserved
 * characters and ':' (legal in a query, and keeps dates readable). */
static int add_escaped(struct pg_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~' ||
		    ch == ':') {
			if (pg_buf_addch(b, (char)ch) < 0)
				return -1;
		} else if (pg_buf_printf(b, "%%%c%c", hex[ch >> 4], hex[ch & 15]) < 0) {
			return -1;
		}
	}
	return 0;
}

static int url_fail(struct pg_err *err)
{
	if (errno == E2BIG)
		return pg_err_set(err, PG_EINVAL, "request URL over %zu bytes",
				  (size_t)URL_MAX);
	return pg_err_set(err, PG_ENOMEM, "out of memory");
}

/* `&key=value` (or `?` first), value escaped. */
static int add_param(struct pg_buf *b, const char *key, const char *value)
{
	if (pg_buf_printf(b, "%c%s=", strchr(pg_buf_str(b), '?') ? '&' : '?', key) < 0)
		return -1;
	return add_escaped(b, value);
}

static int add_since_param(struct pg_buf *b, int64_t since_ms, struct pg_err *err)
{
	char ts[PG_TIME_UTC_MAX];

	if (since_ms < 0)
		return 0;
	/* Naive UTC: Patchwork answers HTTP 500 to a "Z" or an offset. */
	if (pg_time_format_utc(since_ms, PG_TIME_NAIVE, ts, sizeof(ts)) < 0)
		return pg_err_set(err, PG_EINVAL, "since %" PRId64 " ms: out of range",
				  since_ms);
	if (add_param(b, "since", ts) < 0)
		return url_fail(err);
	return 0;
}

static void http_opts(const struct pg_pw_client *c, size_t max_body,
		      struct pg_http_opts *o)
{
	struct pg_http_opts init = PG_HTTP_OPTS_INIT;

	*o = init;
	o->connect_timeout_ms = c->connect_timeout_ms;
	o->timeout_ms = c->timeout_ms;
	o->max_body = max_body;
}

/* Quote the start of an answer, printable characters only. */
static void quote_body(const struct pg_http_response *r, char *out, size_t outlen)
{
	size_t n = r->body.len < outlen - 1 ? r->body.len : outlen - 1;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)r->body.data[i];

		out[i] = (ch >= ' ' && ch < 0x7f) ? (char)ch : ' ';
	}
	out[n] = '\0';
}

/* The error for an unexpected status, by what a caller should do next. */
static int status_error(const char *method, const char *url,
			const struct pg_http_response *r, struct pg_err *err)
{
	char quote[BODY_QUOTE_MAX + 1];
	enum pg_errcode code;

	if (r->status >= 500 || r->status == 429)
		code = PG_EIO;
	else if (r->status == 408)
		code = PG_ETIMEOUT;
	else if (r->status == 404)
		code = PG_ENOTFOUND;
	else if (r->status == 409)
		code = PG_ECONFLICT;
	else
		code = PG_EINVAL;
	quote_body(r, quote, sizeof(quote));
	return pg_err_set(err, code, "%s %s: HTTP %ld%s%s%s", method, url, r->status,
			  quote[0] ? ": " : "", quote,
			  r->body.len > BODY_QUOTE_MAX ? "..." : "");
}

/* A transport error from lib/http.h, with an oversized JSON answer counted
 * as server trouble (retryable), as the header promises. */
static int transport_error(struct pg_err *err)
{
	if (err && err->code == PG_ETOOBIG)
		err->code = PG_EIO;
	return -1;
}

/*
 * GET url and parse the 200 answer as JSON.  *out is the parsed value
 * (caller frees), resp holds the answer (Link header for paging).
 * allow_404_end: a 404 answers 0 with *out NULL, for a page past the end.
 */
static int get_json(struct pg_pw_client *c, const char *url, bool allow_404_end,
		    struct pg_http_response *resp, cJSON **out, struct pg_err *err)
{
	struct pg_http_opts o;

	*out = NULL;
	http_opts(c, c->max_response, &o);
	if (pg_http_client_request(c->http, "GET", url, NULL, 0, &o, resp, err) < 0)
		return transport_error(err);
	pg_log_debug(LOG_COMP, "GET %s: HTTP %ld, %zu bytes", url, resp->status,
		     resp->body.len);
	if (resp->status == 404 && allow_404_end)
		return 0;
	if (resp->status != 200)
		return status_error("GET", url, resp, err);
	if (pg_json_parse(pg_buf_str(&resp->body), resp->body.len, out, err) < 0) {
		/* A 200 that does not parse is a cut or mangled answer (a proxy,
		 * a dying server), not a refusal: a GET may be tried again. */
		err->code = PG_EIO;
		pg_err_prefix(err, "GET %s", url);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* JSON field readers                                                  */

static int get_id(const cJSON *obj, const char *key, bool required, int64_t *out,
		  struct pg_err *err)
{
	return pg_json_get_int(obj, key, required, 1, ID_MAX, out, err);
}

/*
 * A string field copied to *out.  required: present and a string.
 * Otherwise absent or null gives "" (Patchwork has nullable text fields:
 * series name, comment content, a person's name).
 */
static int get_dup(const cJSON *obj, const char *key, bool required, char **out,
		   struct pg_err *err)
{
	const cJSON *item;
	const char *s = "";

	*out = NULL;
	item = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
	if (required || (item && !cJSON_IsNull(item))) {
		if (pg_json_get_string(obj, key, true, &s, err) < 0)
			return -1;
	}
	return dup_str(s, out, err);
}

/* A naive UTC date; absent or null gives -1 when not required.  A date
 * before 1970 is refused: it would read as that -1 ("none"), or as a
 * negative cursor, which means "from the beginning". */
static int get_date(const cJSON *obj, const char *key, bool required, int64_t *out,
		    struct pg_err *err)
{
	const cJSON *item;
	const char *s;

	*out = -1;
	item = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
	if (!required && (!item || cJSON_IsNull(item)))
		return 0;
	if (pg_json_get_string(obj, key, true, &s, err) < 0)
		return -1;
	if (pg_time_parse_utc(s, out) < 0) {
		*out = -1;
		return pg_err_set(err, PG_EINVAL, "field '%s': not a date: '%.64s'", key, s);
	}
	if (*out < 0) {
		*out = -1;
		return pg_err_set(err, PG_EINVAL, "field '%s': before 1970: '%.64s'", key, s);
	}
	return 0;
}

/* An embedded object that may be absent or null: *out NULL then. */
static int get_opt_object(const cJSON *obj, const char *key, const cJSON **out,
			  struct pg_err *err)
{
	const cJSON *item;

	*out = NULL;
	item = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
	if (!item || cJSON_IsNull(item))
		return 0;
	return pg_json_get_object(obj, key, true, out, err) < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Client                                                              */

int pg_pw_client_new(const struct pg_pw_opts *opts, struct pg_pw_client **out,
		     struct pg_err *err)
{
	struct pg_pw_client *c = NULL;
	const char *host, *slash;
	size_t len;
	int ret = -1;

	*out = NULL;
	if (!opts || !opts->base_url || !url_ok(opts->base_url)) {
		pg_err_set(err, PG_EINVAL, "patchwork: base_url must be an http(s) URL, got '%s'",
			   opts && opts->base_url ? opts->base_url : "(none)");
		goto out;
	}
	if (has_crlf(opts->project) || has_crlf(opts->token) || has_crlf(opts->username) ||
	    (opts->token && (!opts->token[0] || strchr(opts->token, ' ')))) {
		pg_err_set(err, PG_EINVAL,
			   "patchwork: project, token and username must not hold CR or LF, and the token must be one word");
		goto out;
	}
	if (opts->connect_timeout_ms <= 0 || opts->timeout_ms <= 0 ||
	    !opts->max_response || !opts->max_mbox || !opts->max_pages ||
	    opts->per_page < 1 || opts->per_page > PG_PW_PER_PAGE_MAX) {
		pg_err_set(err, PG_EINVAL,
			   "patchwork: timeouts and bounds must be > 0, per_page 1..%d",
			   PG_PW_PER_PAGE_MAX);
		goto out;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (dup_str(opts->base_url, &c->base, err) < 0 ||
	    dup_str(opts->base_url, &c->origin, err) < 0 ||
	    dup_str(opts->project && opts->project[0] ? opts->project : NULL,
		    &c->project, err) < 0 ||
	    dup_str(opts->username && opts->username[0] ? opts->username : NULL,
		    &c->username, err) < 0)
		goto out;
	len = strlen(c->base);
	while (len > 0 && c->base[len - 1] == '/')
		c->base[--len] = '\0';
	host = c->origin + http_prefix_len(c->origin);
	slash = strchr(host, '/');
	if (slash)
		c->origin[slash - c->origin] = '\0';
	if (opts->token) {
		struct pg_buf b = PG_BUF_INIT(PG_HTTP_HEADER_MAX);

		if (pg_buf_printf(&b, "Token %s", opts->token) < 0) {
			pg_buf_release(&b);
			pg_err_set(err, PG_EINVAL, "patchwork: token too long");
			goto out;
		}
		c->authorization = pg_buf_detach(&b, NULL);
		if (!c->authorization) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
	}
	c->connect_timeout_ms = opts->connect_timeout_ms;
	c->timeout_ms = opts->timeout_ms;
	c->max_response = opts->max_response;
	c->max_mbox = opts->max_mbox;
	c->per_page = opts->per_page;
	c->max_pages = opts->max_pages;
	c->http = pg_http_client_new(err);
	if (!c->http)
		goto out;
	*out = c;
	c = NULL;
	ret = 0;
out:
	pg_pw_client_free(c);
	return ret;
}

void pg_pw_client_free(struct pg_pw_client *c)
{
	if (!c)
		return;
	pg_http_client_free(c->http);
	free(c->base);
	free(c->origin);
	free(c->project);
	free(c->authorization);
	free(c->username);
	free(c);
}

const char *pg_pw_client_base(const struct pg_pw_client *c)
{
	return c->base;
}

bool pg_pw_retryable(enum pg_errcode code)
{
	return code == PG_EIO || code == PG_ETIMEOUT;
}

/*
 * The next page's URL from a Link header into next (NUL-terminated):
 * absolute as Patchwork sends it, or resolved against the base's origin
 * when it starts with '/'.  Returns 1, 0 on the last page, or -1.
 */
static int next_page(const struct pg_pw_client *c, const struct pg_http_response *r,
		     const char *url, struct pg_buf *next, struct pg_err *err)
{
	char target[URL_MAX];
	int rc = pg_http_link_next(pg_buf_str(&r->link), target, sizeof(target));

	if (rc < 0)
		return pg_err_set(err, PG_EINVAL, "GET %s: malformed Link header '%.200s'",
				  url, pg_buf_str(&r->link));
	if (rc == 0)
		return 0;
	pg_buf_reset(next);
	if (target[0] == '/' && pg_buf_adds(next, c->origin) < 0)
		return url_fail(err);
	if (pg_buf_adds(next, target) < 0)
		return url_fail(err);
	if (!url_ok(pg_buf_str(next)))
		return pg_err_set(err, PG_EINVAL, "GET %s: next page '%.200s' is not an http(s) URL",
				  url, target);
	return 1;
}

/* ------------------------------------------------------------------ */
/* Events                                                              */

bool pg_pw_category_valid(const char *name)
{
	for (size_t i = 0; name && categories[i]; i++)
		if (!strcmp(name, categories[i]))
			return true;
	return false;
}

/* payload.<key>.id into *id (0 when the payload has no such object). */
static int payload_ref(const cJSON *payload, const char *key, int64_t *id,
		       const cJSON **obj, struct pg_err *err)
{
	const cJSON *o;

	*id = 0;
	if (obj)
		*obj = NULL;
	if (get_opt_object(payload, key, &o, err) < 0)
		goto fail;
	if (!o)
		return 0;
	if (get_id(o, "id", true, id, err) < 0)
		goto fail;
	if (obj)
		*obj = o;
	return 0;
fail:
	pg_err_prefix(err, "payload.%s", key);
	return -1;
}

/*
 * Fill ev from one element of an events page.  comment_url is scratch
 * space for a comment URL built when the payload has none.
 */
static int parse_event(const char *base, const cJSON *item,
		       struct pg_pw_event *ev, struct pg_buf *comment_url,
		       struct pg_err *err)
{
	const cJSON *project, *payload, *comment;
	const char *url = NULL;

	memset(ev, 0, sizeof(*ev));
	if (get_id(item, "id", true, &ev->id, err) < 0 ||
	    pg_json_get_string(item, "category", true, &ev->category, err) < 0 ||
	    get_date(item, "date", true, &ev->date_ms, err) < 0 ||
	    get_opt_object(item, "project", &project, err) < 0 ||
	    (project && get_id(project, "id", false, &ev->project_id, err) < 0) ||
	    pg_json_get_object(item, "payload", true, &payload, err) < 0)
		return -1;
	if (payload_ref(payload, "series", &ev->series_id, NULL, err) < 0 ||
	    payload_ref(payload, "patch", &ev->patch_id, NULL, err) < 0 ||
	    payload_ref(payload, "cover", &ev->cover_id, NULL, err) < 0 ||
	    payload_ref(payload, "check", &ev->check_id, NULL, err) < 0 ||
	    payload_ref(payload, "comment", &ev->comment_id, &comment, err) < 0)
		return -1;
	if (!comment)
		return 0;
	if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(comment, "url")) &&
	    pg_json_get_string(comment, "url", false, &url, err) < 0) {
		pg_err_prefix(err, "payload.comment");
		return -1;
	}
	if (url && url_ok(url)) {
		ev->comment_url = url;
		return 0;
	}
	/* Before API 1.3 the comment has no url: build the 1.3 one. */
	pg_buf_reset(comment_url);
	if (ev->patch_id) {
		if (pg_buf_printf(comment_url, "%s/patches/%" PRId64 "/comments/%" PRId64 "/",
				  base, ev->patch_id, ev->comment_id) < 0)
			return url_fail(err);
	} else if (ev->cover_id) {
		if (pg_buf_printf(comment_url, "%s/covers/%" PRId64 "/comments/%" PRId64 "/",
				  base, ev->cover_id, ev->comment_id) < 0)
			return url_fail(err);
	} else {
		return pg_err_set(err, PG_EINVAL,
				  "payload.comment: no url, and neither patch nor cover");
	}
	ev->comment_url = pg_buf_str(comment_url);
	return 0;
}

/* Hand one page's events to fn.  Returns 0, 1 when fn stopped, -1. */
static int deliver_page(const char *base, const cJSON *page,
			const char *category, pg_pw_event_fn fn, void *arg,
			struct pg_pw_poll_stats *st, struct pg_buf *scratch,
			struct pg_err *err)
{
	struct pg_pw_event ev;
	const cJSON *item;
	size_t i = 0;
	int rc;

	if (!cJSON_IsArray(page))
		return pg_err_set(err, PG_EINVAL, "expected an array of events, got %s",
				  pg_json_type_name(page));
	cJSON_ArrayForEach(item, page) {
		if (parse_event(base, item, &ev, scratch, err) < 0) {
			pg_err_prefix(err, "events[%zu]", i);
			return -1;
		}
		i++;
		/* A server that ignored the filter must not feed us other
		 * categories. */
		if (strcmp(ev.category, category)) {
			pg_log_debug(LOG_COMP, "event %" PRId64 ": category %s, skipped",
				     ev.id, ev.category);
			continue;
		}
		rc = fn(&ev, arg, err);
		if (rc < 0)
			return -1;
		st->events++;
		st->last_date_ms = ev.date_ms;
		if (rc > 0)
			return 1;
	}
	return 0;
}

int pg_pw_poll_events(struct pg_pw_client *c, const char *category,
		      int64_t since_ms, pg_pw_event_fn fn, void *arg,
		      struct pg_pw_poll_stats *stats, struct pg_err *err)
{
	struct pg_pw_poll_stats local, *st = stats ? stats : &local;
	struct pg_http_response resp = PG_HTTP_RESPONSE_INIT;
	struct pg_buf url = PG_BUF_INIT(URL_MAX);
	struct pg_buf next = PG_BUF_INIT(URL_MAX);
	struct pg_buf scratch = PG_BUF_INIT(URL_MAX);
	char per_page[16];
	cJSON *page = NULL;
	int ret = -1, rc;

	memset(st, 0, sizeof(*st));
	st->last_date_ms = -1;
	if (!pg_pw_category_valid(category)) {
		/* Patchwork would answer 200 [] and we would wait forever. */
		pg_err_set(err, PG_EINVAL, "unknown event category '%s'",
			   category ? category : "(null)");
		goto out;
	}
	if (!c->project) {
		pg_err_set(err, PG_EINVAL, "no Patchwork project configured");
		goto out;
	}
	if (!fn) {
		pg_err_set(err, PG_EINVAL, "no event callback");
		goto out;
	}
	/* An unsigned in a buffer sized for one. */
	pg_fmt_cut(per_page, sizeof(per_page), "%u", c->per_page);
	if (pg_buf_printf(&url, "%s/events/", c->base) < 0 ||
	    add_param(&url, "project", c->project) < 0 ||
	    add_param(&url, "category", category) < 0 ||
	    add_param(&url, "order", "date") < 0 ||
	    add_param(&url, "per_page", per_page) < 0) {
		url_fail(err);
		goto out;
	}
	if (add_since_param(&url, since_ms, err) < 0)
		goto out;
	for (;;) {
		cJSON_Delete(page);
		if (get_json(c, pg_buf_str(&url), st->pages > 0, &resp, &page, err) < 0)
			goto out;
		if (!page) {
			/* A later page vanished (events expired while we
			 * paged): what we have read is all there is. */
			pg_log_warn(LOG_COMP, "GET %s: 404, taking it as the end",
				    pg_buf_str(&url));
			break;
		}
		st->pages++;
		rc = deliver_page(c->base, page, category, fn, arg, st, &scratch, err);
		if (rc < 0) {
			pg_err_prefix(err, "GET %s", pg_buf_str(&url));
			goto out;
		}
		if (rc > 0) {
			st->stopped = true;
			break;
		}
		rc = next_page(c, &resp, pg_buf_str(&url), &next, err);
		if (rc < 0)
			goto out;
		if (rc == 0)
			break;
		if (st->pages >= c->max_pages) {
			st->more = true;
			break;
		}
		pg_buf_reset(&url);
		if (pg_buf_add(&url, next.data, next.len) < 0) {
			url_fail(err);
			goto out;
		}
	}
	ret = 0;
out:
	cJSON_Delete(page);
	pg_buf_release(&url);
	pg_buf_release(&next);
	pg_buf_release(&scratch);
	pg_http_response_release(&resp);
	return ret;
}

int pg_pw_parse_events(const char *json, size_t len, const char *base,
		       const char *category, pg_pw_event_fn fn, void *arg,
		       struct pg_pw_poll_stats *stats, struct pg_err *err)
{
	struct pg_pw_poll_stats local, *st = stats ? stats : &local;
	struct pg_buf scratch = PG_BUF_INIT(URL_MAX);
	cJSON *page = NULL;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	st->last_date_ms = -1;
	if (!base || !category || !fn) {
		pg_err_set(err, PG_EINVAL, "parse events: no base, category or callback");
		goto out;
	}
	if (pg_json_parse(json, len, &page, err) < 0)
		goto out;
	st->pages = 1;
	ret = deliver_page(base, page, category, fn, arg, st, &scratch, err);
	if (ret > 0)
		st->stopped = true;
out:
	cJSON_Delete(page);
	pg_buf_release(&scratch);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Series                                                              */

bool pg_pw_name_number(const char *name, unsigned int *num, unsigned int *total)
{
	const char *p, *end;

	/* Patchwork's name: "[prefix,prefix,N/M] subject" (prefixes joined
	 * with commas by clean_subject()). */
	if (!name || name[0] != '[')
		return false;
	end = strchr(name, ']');
	if (!end)
		return false;
	for (p = name + 1; p < end;) {
		const char *tok_end = memchr(p, ',', (size_t)(end - p));
		unsigned long n = 0, m = 0;
		const char *q = p;
		bool ok = true;

		if (!tok_end)
			tok_end = end;
		if (q < tok_end && isdigit((unsigned char)*q)) {
			while (q < tok_end && isdigit((unsigned char)*q) && n < 100000)
				n = n * 10 + (unsigned long)(*q++ - '0');
		} else {
			ok = false;
		}
		if (ok && q < tok_end && *q == '/' && q + 1 < tok_end) {
			q++;
			while (q < tok_end && isdigit((unsigned char)*q) && m < 100000)
				m = m * 10 + (unsigned long)(*q++ - '0');
			ok = q == tok_end;
		} else {
			ok = false;
		}
		if (ok) {
			if (num)
				*num = (unsigned int)n;
			if (total)
				*total = (unsigned int)m;
			return true;
		}
		p = tok_end + 1;
	}
	return false;
}

static void patch_release(struct pg_pw_patch *p)
{
	free(p->msgid);
	free(p->name);
	free(p->mbox_url);
	memset(p, 0, sizeof(*p));
}

void pg_pw_series_release(struct pg_pw_series *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->submitter_name);
	free(s->submitter_email);
	free(s->mbox_url);
	patch_release(&s->cover);
	for (size_t i = 0; i < s->npatches; i++)
		patch_release(&s->patches[i]);
	free(s->patches);
	memset(s, 0, sizeof(*s));
}

/* An embedded patch or cover: {id, msgid, name, mbox, date, ...}. */
static int parse_patch_ref(const cJSON *o, struct pg_pw_patch *p, struct pg_err *err)
{
	if (!cJSON_IsObject(o))
		return pg_err_set(err, PG_EINVAL, "expected an object, got %s",
				  pg_json_type_name(o));
	if (get_id(o, "id", true, &p->id, err) < 0 ||
	    get_dup(o, "msgid", true, &p->msgid, err) < 0 ||
	    get_dup(o, "name", true, &p->name, err) < 0 ||
	    get_dup(o, "mbox", true, &p->mbox_url, err) < 0 ||
	    get_date(o, "date", false, &p->date_ms, err) < 0)
		return -1;
	if (!pg_pw_name_number(p->name, &p->number, NULL))
		p->number = 0;
	return 0;
}

static int cmp_date(const struct pg_pw_patch *a, const struct pg_pw_patch *b)
{
	if (a->date_ms != b->date_ms)
		return a->date_ms < b->date_ms ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

static int cmp_by_date(const void *x, const void *y)
{
	return cmp_date(x, y);
}

static int cmp_by_number(const void *x, const void *y)
{
	const struct pg_pw_patch *a = x, *b = y;

	if (a->number != b->number)
		return a->number < b->number ? -1 : 1;
	return cmp_date(a, b);
}

static void sort_patches(struct pg_pw_series *s)
{
	bool numbered = s->npatches > 0;

	for (size_t i = 0; i < s->npatches; i++)
		if (!s->patches[i].number)
			numbered = false;
	/* Patchwork lists by date; "N/M" is the order the author meant. */
	qsort(s->patches, s->npatches, sizeof(*s->patches),
	      numbered ? cmp_by_number : cmp_by_date);
}

static int parse_series_obj(const cJSON *root, struct pg_pw_series *s,
			    struct pg_err *err)
{
	const cJSON *submitter, *cover, *patches, *item;
	int64_t v;
	size_t n, i = 0;

	if (!cJSON_IsObject(root))
		return pg_err_set(err, PG_EINVAL, "expected a series object, got %s",
				  pg_json_type_name(root));
	s->version = 1;
	if (get_id(root, "id", true, &s->id, err) < 0 ||
	    get_dup(root, "name", false, &s->name, err) < 0 ||
	    get_dup(root, "mbox", true, &s->mbox_url, err) < 0 ||
	    get_date(root, "date", false, &s->date_ms, err) < 0 ||
	    pg_json_get_bool(root, "received_all", true, &s->received_all, err) < 0)
		return -1;
	v = 1;
	if (pg_json_get_int(root, "version", false, 0, 1000000, &v, err) < 0)
		return -1;
	s->version = (int)v;
	v = 0;
	if (pg_json_get_int(root, "total", true, 0, 1000000, &v, err) < 0)
		return -1;
	s->total = (int)v;
	v = 0;
	if (pg_json_get_int(root, "received_total", false, 0, 1000000, &v, err) < 0)
		return -1;
	s->received_total = (int)v;
	if (get_opt_object(root, "submitter", &submitter, err) < 0)
		return -1;
	if (get_dup(submitter, "name", false, &s->submitter_name, err) < 0 ||
	    get_dup(submitter, "email", false, &s->submitter_email, err) < 0) {
		pg_err_prefix(err, "submitter");
		return -1;
	}
	if (get_opt_object(root, "cover_letter", &cover, err) < 0)
		return -1;
	if (cover) {
		if (parse_patch_ref(cover, &s->cover, err) < 0) {
			pg_err_prefix(err, "cover_letter");
			return -1;
		}
		s->cover.number = 0;
		s->has_cover = true;
	}
	if (pg_json_get_array(root, "patches", true, &patches, err) < 0)
		return -1;
	n = (size_t)cJSON_GetArraySize(patches);
	if (n) {
		s->patches = calloc(n, sizeof(*s->patches));
		if (!s->patches)
			return pg_err_set(err, PG_ENOMEM, "out of memory");
	}
	cJSON_ArrayForEach(item, patches) {
		if (i == n)
			break;
		/* Counted before parsing, so that release frees a partial
		 * entry. */
		s->npatches = i + 1;
		if (parse_patch_ref(item, &s->patches[i], err) < 0) {
			pg_err_prefix(err, "patches[%zu]", i);
			return -1;
		}
		i++;
	}
	sort_patches(s);
	return 0;
}

int pg_pw_parse_series(const char *json, size_t len, const char *url,
		       struct pg_pw_series *out, struct pg_err *err)
{
	cJSON *root = NULL;
	int ret = -1;

	pg_pw_series_release(out);
	if (pg_json_parse(json, len, &root, err) < 0 ||
	    parse_series_obj(root, out, err) < 0) {
		pg_err_prefix(err, "GET %s", url ? url : "(series)");
		pg_pw_series_release(out);
		goto out;
	}
	ret = 0;
out:
	cJSON_Delete(root);
	return ret;
}

int pg_pw_get_series(struct pg_pw_client *c, int64_t id, struct pg_pw_series *out,
		     struct pg_err *err)
{
	struct pg_http_response resp = PG_HTTP_RESPONSE_INIT;
	struct pg_buf url = PG_BUF_INIT(URL_MAX);
	cJSON *root = NULL;
	int ret = -1;

	pg_pw_series_release(out);
	if (id <= 0) {
		pg_err_set(err, PG_EINVAL, "series id %" PRId64 ": must be > 0", id);
		goto out;
	}
	if (pg_buf_printf(&url, "%s/series/%" PRId64 "/", c->base, id) < 0) {
		url_fail(err);
		goto out;
	}
	if (get_json(c, pg_buf_str(&url), false, &resp, &root, err) < 0)
		goto out;
	if (parse_series_obj(root, out, err) < 0) {
		pg_err_prefix(err, "GET %s", pg_buf_str(&url));
		pg_pw_series_release(out);
		goto out;
	}
	if (out->id != id) {
		pg_err_set(err, PG_EINVAL, "GET %s: answered series %" PRId64,
			   pg_buf_str(&url), out->id);
		pg_pw_series_release(out);
		goto out;
	}
	ret = 0;
out:
	cJSON_Delete(root);
	pg_buf_release(&url);
	pg_http_response_release(&resp);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Patches                                                             */

/* The id of the patch whose "msgid" is want (with <>) in a page of
 * /patches/ into *found (0: none).  Returns 0, or -1 for a malformed
 * page. */
static int match_patch_page(const cJSON *page, const char *want, int64_t *found,
			    struct pg_err *err)
{
	const cJSON *item;
	char *got = NULL;
	int64_t id;
	size_t i = 0;
	int ret = -1;

	*found = 0;
	if (!cJSON_IsArray(page)) {
		pg_err_set(err, PG_EINVAL, "expected an array of patches, got %s",
			   pg_json_type_name(page));
		goto out;
	}
	cJSON_ArrayForEach(item, page) {
		if (get_id(item, "id", true, &id, err) < 0 ||
		    get_dup(item, "msgid", true, &got, err) < 0) {
			pg_err_prefix(err, "patches[%zu]", i);
			goto out;
		}
		/* A server without the filter lists every patch. */
		if (!*found && !strcmp(got, want))
			*found = id;
		free(got);
		got = NULL;
		i++;
	}
	ret = 0;
out:
	free(got);
	return ret;
}

int pg_pw_parse_patch_list(const char *json, size_t len, const char *want,
			   int64_t *patch_id, struct pg_err *err)
{
	cJSON *page = NULL;
	int64_t found = 0;
	int ret = -1;

	if (pg_json_parse(json, len, &page, err) < 0 ||
	    match_patch_page(page, want ? want : "", &found, err) < 0)
		goto out;
	if (found && patch_id)
		*patch_id = found;
	ret = found ? 1 : 0;
out:
	cJSON_Delete(page);
	return ret;
}

int pg_pw_find_patch(struct pg_pw_client *c, const char *msgid, int64_t *patch_id,
		     struct pg_err *err)
{
	struct pg_http_response resp = PG_HTTP_RESPONSE_INIT;
	struct pg_buf url = PG_BUF_INIT(URL_MAX);
	char bare[1024], want[sizeof(bare) + 2];
	cJSON *page = NULL;
	int64_t found = 0;
	size_t n;
	int ret = -1;

	if (!c->project) {
		pg_err_set(err, PG_EINVAL, "find patch: no Patchwork project configured");
		goto out;
	}
	if (!msgid)
		msgid = "";
	n = strlen(msgid);
	if (n >= 2 && msgid[0] == '<' && msgid[n - 1] == '>') {
		msgid++;
		n -= 2;
	}
	if (n == 0 || n >= sizeof(bare)) {
		pg_err_set(err, PG_EINVAL, "find patch: a Message-ID of %zu bytes", n);
		goto out;
	}
	memcpy(bare, msgid, n);
	bare[n] = '\0';
	for (const char *p = bare; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '<' || *p == '>') {
			pg_err_set(err, PG_EINVAL, "find patch: Message-ID '%.200s' has a space, "
				   "a control character or <>", bare);
			goto out;
		}
	/* bare is shorter than want by the two brackets. */
	pg_fmt_cut(want, sizeof(want), "<%s>", bare);
	if (pg_buf_printf(&url, "%s/patches/", c->base) < 0 ||
	    add_param(&url, "project", c->project) < 0 ||
	    add_param(&url, "msgid", bare) < 0 ||
	    add_param(&url, "per_page", "10") < 0) {
		url_fail(err);
		goto out;
	}
	if (get_json(c, pg_buf_str(&url), false, &resp, &page, err) < 0)
		goto out;
	if (match_patch_page(page, want, &found, err) < 0) {
		pg_err_prefix(err, "GET %s", pg_buf_str(&url));
		goto out;
	}
	if (found && patch_id)
		*patch_id = found;
	ret = found ? 1 : 0;
out:
	cJSON_Delete(page);
	pg_buf_release(&url);
	pg_http_response_release(&resp);
	return ret;
}

/* ------------------------------------------------------------------ */
/* mbox                                                                */

int pg_pw_download_mbox(struct pg_pw_client *c, const char *url, struct pg_buf *out,
			struct pg_err *err)
{
	struct pg_http_response resp = PG_HTTP_RESPONSE_INIT;
	struct pg_http_opts o;
	struct pg_buf swap;
	size_t max;
	int ret = -1;

	pg_buf_reset(out);
	if (!url || !url_ok(url)) {
		pg_err_set(err, PG_EINVAL, "mbox URL '%s' is not an http(s) URL",
			   url ? url : "(null)");
		goto out;
	}
	max = c->max_mbox < out->max ? c->max_mbox : out->max;
	http_opts(c, max, &o);
	/* /patch/N/mbox/ and /cover/N/mbox/ answer 302. */
	o.follow_redirects = true;
	if (pg_http_client_request(c->http, "GET", url, NULL, 0, &o, &resp, err) < 0)
		goto out;
	pg_log_debug(LOG_COMP, "GET %s: HTTP %ld, %zu bytes (from %s)", url, resp.status,
		     resp.body.len, pg_buf_str(&resp.effective_url));
	if (resp.status != 200) {
		status_error("GET", url, &resp, err);
		goto out;
	}
	/* Hand the body over rather than copy a large mbox. */
	swap = *out;
	*out = resp.body;
	out->max = swap.max;
	resp.body = swap;
	ret = 0;
out:
	pg_http_response_release(&resp);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Comments                                                            */

void pg_pw_comment_release(struct pg_pw_comment *cm)
{
	if (!cm)
		return;
	free(cm->msgid);
	free(cm->subject);
	free(cm->content);
	free(cm->submitter_name);
	free(cm->submitter_email);
	memset(cm, 0, sizeof(*cm));
}

static int parse_comment(const cJSON *root, struct pg_pw_comment *cm, struct pg_err *err)
{
	const cJSON *submitter;

	if (!cJSON_IsObject(root))
		return pg_err_set(err, PG_EINVAL, "expected a comment object, got %s",
				  pg_json_type_name(root));
	if (get_id(root, "id", true, &cm->id, err) < 0 ||
	    get_dup(root, "msgid", true, &cm->msgid, err) < 0 ||
	    get_dup(root, "subject", false, &cm->subject, err) < 0 ||
	    get_date(root, "date", false, &cm->date_ms, err) < 0 ||
	    get_opt_object(root, "submitter", &submitter, err) < 0)
		return -1;
	/* Required to be there (it is what we came for), but Patchwork
	 * keeps an empty body as null. */
	if (!cJSON_GetObjectItemCaseSensitive(root, "content"))
		return pg_err_set(err, PG_EINVAL, "field 'content': missing");
	if (get_dup(root, "content", false, &cm->content, err) < 0)
		return -1;
	if (get_dup(submitter, "name", false, &cm->submitter_name, err) < 0 ||
	    get_dup(submitter, "email", false, &cm->submitter_email, err) < 0) {
		pg_err_prefix(err, "submitter");
		return -1;
	}
	return 0;
}

int pg_pw_parse_comment(const char *json, size_t len, const char *url,
			struct pg_pw_comment *out, struct pg_err *err)
{
	cJSON *root = NULL;
	int ret = -1;

	pg_pw_comment_release(out);
	if (pg_json_parse(json, len, &root, err) < 0 || parse_comment(root, out, err) < 0) {
		pg_err_prefix(err, "GET %s", url ? url : "(comment)");
		pg_pw_comment_release(out);
		goto out;
	}
	ret = 0;
out:
	cJSON_Delete(root);
	return ret;
}

int pg_pw_get_comment(struct pg_pw_client *c, const char *url,
		      struct pg_pw_comment *out, struct pg_err *err)
{
	struct pg_http_response resp = PG_HTTP_RESPONSE_INIT;
	cJSON *root = NULL;
	int ret = -1;

	pg_pw_comment_release(out);
	if (!url || !url_ok(url)) {
		pg_err_set(err, PG_EINVAL, "comment URL '%s' is not an http(s) URL",
			   url ? url : "(null)");
		goto out;
	}
	if (get_json(c, url, false, &resp, &root, err) < 0)
		goto out;
	if (parse_comment(root, out, err) < 0) {
		pg_err_prefix(err, "GET %s", url);
		pg_pw_comment_release(out);
		goto out;
	}
	ret = 0;
out:
	cJSON_Delete(root);
	pg_http_response_release(&resp);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Checks                                                              */

const char *pg_pw_check_state_name(enum pg_pw_check_state state)
{
	if ((unsigned int)state > PG_PW_CHECK_FAIL)
		return NULL;
	return state_names[state];
}

int pg_pw_check_state_parse(const char *name, enum pg_pw_check_state *out)
{
	for (unsigned int i = 0; name && i <= PG_PW_CHECK_FAIL; i++) {
		if (!strcmp(name, state_names[i])) {
			*out = (enum pg_pw_check_state)i;
			return 0;
		}
	}
	return -1;
}

bool pg_pw_slug_valid(const char *s)
{
	size_t n = 0;

	if (!s)
		return false;
	for (; s[n]; n++) {
		unsigned char ch = (unsigned char)s[n];

		/* Django's slug: ASCII letters, digits, '-' and '_' only. */
		if (!(ch < 0x80 && (isalnum(ch) || ch == '-' || ch == '_')))
			return false;
	}
	return n >= 1 && n <= PG_PW_CONTEXT_MAX;
}

void pg_pw_check_result_release(struct pg_pw_check_result *r)
{
	if (!r)
		return;
	pg_buf_release(&r->body);
	r->status = 0;
	r->check_id = 0;
	r->retry_after_ms = -1;
}

static bool empty(const char *s)
{
	return !s || !s[0];
}

/* What Patchwork would refuse, or what we promise not to send. */
static int check_args(int64_t patch_id, enum pg_pw_check_state state,
		      const char *context, const char *description,
		      const char *target_url, struct pg_err *err)
{
	if (patch_id <= 0)
		return pg_err_set(err, PG_EINVAL, "check: patch id %" PRId64 " must be > 0",
				  patch_id);
	if (!pg_pw_check_state_name(state))
		return pg_err_set(err, PG_EINVAL, "check: unknown state %d", (int)state);
	if (!pg_pw_slug_valid(context))
		return pg_err_set(err, PG_EINVAL,
				  "check: context '%.300s' is not a slug (1 to %d of letters, digits, '-' and '_'; no '/')",
				  context ? context : "(null)", PG_PW_CONTEXT_MAX);
	if (description && strlen(description) > PG_PW_DESCRIPTION_MAX)
		return pg_err_set(err, PG_EINVAL, "check: description over %d bytes",
				  PG_PW_DESCRIPTION_MAX);
	if (!empty(target_url)) {
		if (strlen(target_url) > PG_PW_TARGET_URL_MAX)
			return pg_err_set(err, PG_EINVAL,
					  "check: target_url over %d characters: '%.64s...'",
					  PG_PW_TARGET_URL_MAX, target_url);
		if (!url_ok(target_url))
			return pg_err_set(err, PG_EINVAL,
					  "check: target_url '%s' is not an http(s) URL",
					  target_url);
	}
	return 0;
}

static char *check_json(enum pg_pw_check_state state, const char *context,
			const char *description, const char *target_url)
{
	cJSON *o = cJSON_CreateObject();
	char *text = NULL;

	if (!o)
		goto out;
	if (!cJSON_AddStringToObject(o, "state", pg_pw_check_state_name(state)) ||
	    !cJSON_AddStringToObject(o, "context", context))
		goto out;
	if (!empty(description) && !cJSON_AddStringToObject(o, "description", description))
		goto out;
	if (!empty(target_url) && !cJSON_AddStringToObject(o, "target_url", target_url))
		goto out;
	text = cJSON_PrintUnformatted(o);
out:
	cJSON_Delete(o);
	return text;
}

static void keep_body(struct pg_pw_check_result *out, const struct pg_http_response *r)
{
	size_t n = r->body.len;

	if (n > PG_PW_BODY_KEEP)
		n = PG_PW_BODY_KEEP;
	if (n > out->body.max)
		n = out->body.max;
	/* Only for the caller's records: losing it to ENOMEM is not worth
	 * failing over. */
	if (n && pg_buf_add(&out->body, r->body.data, n) < 0)
		pg_buf_reset(&out->body);
}

int pg_pw_post_check(struct pg_pw_client *c, int64_t patch_id,
		     enum pg_pw_check_state state, const char *context,
		     const char *description, const char *target_url,
		     struct pg_pw_check_result *out, struct pg_err *err)
{
	struct pg_http_response resp = PG_HTTP_RESPONSE_INIT;
	struct pg_buf url = PG_BUF_INIT(URL_MAX);
	struct pg_err perr = PG_ERR_INIT;
	struct pg_http_opts o;
	cJSON *root = NULL;
	char *body = NULL;
	int ret = -1;

	out->status = 0;
	out->check_id = 0;
	out->retry_after_ms = -1;
	out->reached = false;
	pg_buf_reset(&out->body);
	if (check_args(patch_id, state, context, description, target_url, err) < 0)
		goto out;
	if (!c->authorization) {
		pg_err_set(err, PG_EINVAL, "check: no Patchwork token configured");
		goto out;
	}
	if (pg_buf_printf(&url, "%s/patches/%" PRId64 "/checks/", c->base, patch_id) < 0) {
		url_fail(err);
		goto out;
	}
	body = check_json(state, context, description, target_url);
	if (!body) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	http_opts(c, c->max_response, &o);
	o.authorization = c->authorization;
	/* Without it the JSON is read as an empty form: 400 "A check must
	 * have a state." */
	o.content_type = "application/json";
	/* A redirect would turn the POST into a GET and lose the check, so
	 * a 3xx comes back as an error (the base URL needs fixing). */
	o.follow_redirects = false;
	if (pg_http_client_request(c->http, "POST", pg_buf_str(&url), body, strlen(body),
				   &o, &resp, err) < 0) {
		out->reached = resp.request_sent;
		transport_error(err);
		goto out;
	}
	out->reached = true;
	out->status = resp.status;
	keep_body(out, &resp);
	pg_log_debug(LOG_COMP, "POST %s %s: HTTP %ld", pg_buf_str(&url), body, resp.status);
	if (resp.status != 201) {
		if (resp.status == 429 || resp.status == 503)
			out->retry_after_ms = pg_http_retry_after_ms(
				pg_buf_str(&resp.retry_after), pg_time_wall_ms());
		status_error("POST", pg_buf_str(&url), &resp, err);
		/* A missing patch is our mistake like any other 4xx. */
		if (err && err->code == PG_ENOTFOUND)
			err->code = PG_EINVAL;
		goto out;
	}
	/* The check exists now whatever the body says: a body we cannot
	 * read must not make the caller post it again. */
	if (pg_json_parse(pg_buf_str(&resp.body), resp.body.len, &root, &perr) < 0 ||
	    get_id(root, "id", true, &out->check_id, &perr) < 0) {
		pg_log_warn(LOG_COMP, "POST %s: created, but the answer is unreadable: %s",
			    pg_buf_str(&url), perr.msg);
		out->check_id = 0;
	}
	ret = 0;
out:
	free(body);
	cJSON_Delete(root);
	pg_buf_release(&url);
	pg_http_response_release(&resp);
	return ret;
}

/* Text fields compare with null and "" alike (Patchwork may keep either). */
static bool same_text(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* Is this element of a checks list the check we look for?  1, 0 or -1. */
static int check_matches(const cJSON *item, const char *state, const char *context,
			 const char *description, const char *target_url,
			 int64_t since_ms, int64_t *id, struct pg_err *err)
{
	char *st = NULL, *ctx = NULL, *desc = NULL, *turl = NULL;
	int64_t date_ms;
	int ret = -1;

	if (!cJSON_IsObject(item)) {
		pg_err_set(err, PG_EINVAL, "expected a check object, got %s",
			   pg_json_type_name(item));
		goto out;
	}
	if (get_id(item, "id", true, id, err) < 0 ||
	    get_dup(item, "state", true, &st, err) < 0 ||
	    get_dup(item, "context", true, &ctx, err) < 0 ||
	    get_dup(item, "description", false, &desc, err) < 0 ||
	    get_dup(item, "target_url", false, &turl, err) < 0 ||
	    get_date(item, "date", false, &date_ms, err) < 0)
		goto out;
	ret = !strcmp(st, state) && !strcmp(ctx, context) &&
	      same_text(desc, description) && same_text(turl, target_url) &&
	      (since_ms < 0 || date_ms < 0 || date_ms >= since_ms);
out:
	free(st);
	free(ctx);
	free(desc);
	free(turl);
	return ret;
}

/* The largest id in a page of checks of the check described, into *best
 * (kept when none is larger).  Returns 0, or -1 for a malformed page. */
static int match_check_page(const cJSON *page, const char *state_name, const char *context,
			    const char *description, const char *target_url,
			    int64_t since_ms, int64_t *best, struct pg_err *err)
{
	const cJSON *item;
	int64_t id;
	size_t i = 0;
	int rc;

	if (!cJSON_IsArray(page))
		return pg_err_set(err, PG_EINVAL, "expected an array of checks, got %s",
				  pg_json_type_name(page));
	cJSON_ArrayForEach(item, page) {
		rc = check_matches(item, state_name, context, description, target_url, since_ms,
				   &id, err);
		if (rc < 0) {
			pg_err_prefix(err, "checks[%zu]", i);
			return -1;
		}
		if (rc > 0 && id > *best)
			*best = id;
		i++;
	}
	return 0;
}

int pg_pw_parse_check_list(const char *json, size_t len, enum pg_pw_check_state state,
			   const char *context, const char *description,
			   const char *target_url, int64_t since_ms, int64_t *check_id,
			   struct pg_err *err)
{
	const char *state_name = pg_pw_check_state_name(state);
	cJSON *page = NULL;
	int64_t best = 0;
	int ret = -1;

	if (!state_name || !context) {
		pg_err_set(err, PG_EINVAL, "parse checks: no state or context");
		goto out;
	}
	if (pg_json_parse(json, len, &page, err) < 0 ||
	    match_check_page(page, state_name, context, description, target_url, since_ms,
			     &best, err) < 0)
		goto out;
	if (best && check_id)
		*check_id = best;
	ret = best ? 1 : 0;
out:
	cJSON_Delete(page);
	return ret;
}

int pg_pw_find_check(struct pg_pw_client *c, int64_t patch_id,
		     enum pg_pw_check_state state, const char *context,
		     const char *description, const char *target_url,
		     int64_t since_ms, int64_t *check_id, struct pg_err *err)
{
	struct pg_http_response resp = PG_HTTP_RESPONSE_INIT;
	struct pg_buf url = PG_BUF_INIT(URL_MAX);
	struct pg_buf next = PG_BUF_INIT(URL_MAX);
	const char *state_name = pg_pw_check_state_name(state);
	unsigned int pages = 0;
	char per_page[16];
	int64_t best = 0;
	cJSON *page = NULL;
	int ret = -1, rc;

	if (check_args(patch_id, state, context, description, target_url, err) < 0)
		goto out;
	/* An unsigned in a buffer sized for one. */
	pg_fmt_cut(per_page, sizeof(per_page), "%u", c->per_page);
	/* Only the context is filtered by the server: its state filter wants
	 * the model's numbers, not the labels, and a filter it dislikes
	 * answers 200 [] rather than an error. */
	if (pg_buf_printf(&url, "%s/patches/%" PRId64 "/checks/", c->base, patch_id) < 0 ||
	    add_param(&url, "context", context) < 0 ||
	    add_param(&url, "per_page", per_page) < 0 ||
	    (c->username && add_param(&url, "user", c->username) < 0)) {
		url_fail(err);
		goto out;
	}
	if (add_since_param(&url, since_ms, err) < 0)
		goto out;
	for (;;) {
		cJSON_Delete(page);
		if (get_json(c, pg_buf_str(&url), pages > 0, &resp, &page, err) < 0)
			goto out;
		if (!page)
			break;
		pages++;
		if (match_check_page(page, state_name, context, description, target_url,
				     since_ms, &best, err) < 0) {
			pg_err_prefix(err, "GET %s", pg_buf_str(&url));
			goto out;
		}
		rc = next_page(c, &resp, pg_buf_str(&url), &next, err);
		if (rc < 0)
			goto out;
		if (rc == 0)
			break;
		if (pages >= c->max_pages) {
			pg_err_set(err, PG_EINVAL,
				   "GET %s: more than %u pages of checks with context '%s'",
				   pg_buf_str(&url), c->max_pages, context);
			goto out;
		}
		pg_buf_reset(&url);
		if (pg_buf_add(&url, next.data, next.len) < 0) {
			url_fail(err);
			goto out;
		}
	}
	if (best && check_id)
		*check_id = best;
	ret = best ? 1 : 0;
out:
	cJSON_Delete(page);
	pg_buf_release(&url);
	pg_buf_release(&next);
	pg_http_response_release(&resp);
	return ret;
}
