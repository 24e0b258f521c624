/* SPDX-License-Identifier: MIT */
#ifndef PG_PATCHWORK_H
#define PG_PATCHWORK_H

/*
 * A client for the Patchwork REST API (API 1.3; shared reference section
 * 1), over lib/http.h and cJSON: poll events, read series, comments and
 * checks, download mboxes, post checks.
 *
 *   struct pg_pw_opts o = PG_PW_OPTS_INIT;
 *   struct pg_pw_client *pw;
 *
 *   o.base_url = "https://patches.dpdk.org/api/1.3";
 *   o.project = "dpdk";
 *   o.token = "04b5...";
 *   if (pg_pw_client_new(&o, &pw, &err) < 0) ...
 *   if (pg_pw_poll_events(pw, "series-completed", cursor_ms, on_event, ctx,
 *                         &stats, &err) < 0) ...
 *   pg_pw_client_free(pw);
 *
 * What Patchwork does not check, this client does (the server answers
 * 200 [] to a bad filter, HTTP 500 to a `since` with a zone, and silently
 * stores nothing useful for a check with a bad context): categories must be
 * known, `since` is sent naive UTC, check contexts must be slugs, target
 * URLs at most 200 characters.
 *
 * JSON is read with type checks on every field used; unknown fields are
 * ignored.  A missing or mistyped field fails with PG_EINVAL and a message
 * that names the field and the URL, e.g.
 *   "GET http://host/api/1.3/series/7/: patches[1]: field 'mbox': missing"
 *
 * Errors of the network calls, by code:
 *   PG_EIO       no answer (refused, reset, dropped), an HTTP 5xx or 429,
 *                an answer over its size bound, or a 200 whose body is not
 *                JSON at all (cut or mangled on the way): try again later;
 *   PG_ETIMEOUT  a timeout, or HTTP 408: try again later;
 *   PG_ENOTFOUND HTTP 404 (the series, patch or comment does not exist);
 *   PG_EINVAL    our request or the server's answer is wrong (a 4xx, JSON
 *                of the wrong shape, a missing field): retrying the same
 *                will not help;
 *   PG_ECONFLICT HTTP 409;
 *   PG_ETOOBIG   an mbox over its bound (pg_pw_download_mbox() only);
 *   PG_ENOMEM.
 * pg_pw_retryable() says which codes are worth a retry.
 *
 * Authorization (the token) is sent only with POST: reading is public, and
 * a token that never travels to page or mbox URLs cannot leak through
 * them.
 *
 * A client is used by one thread at a time (it owns one libcurl handle,
 * whose connection it reuses); pg_http_global_init() must have been called.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define PG_PW_PER_PAGE_MAX 250		/* Patchwork caps per_page there */
#define PG_PW_CONTEXT_MAX 255		/* SlugField(max_length=255) */
#define PG_PW_TARGET_URL_MAX 200	/* URLField: max_length 200 */
/* Our own bound: Patchwork's description is unbounded text, but it is
 * shown in a table cell; DPDK's are a few words. */
#define PG_PW_DESCRIPTION_MAX 1024
/* Bytes of a check response body kept for the caller's records. */
#define PG_PW_BODY_KEEP 4096

/*
 * Client options.  Start from PG_PW_OPTS_INIT.  Strings are copied by
 * pg_pw_client_new().
 */
struct pg_pw_opts {
	/* Required: the versioned API root, http:// or https://, e.g.
	 * "https://patches.dpdk.org/api/1.3" (a trailing '/' is ignored). */
	const char *base_url;
	/* The project's link_name or numeric id ("dpdk"); required by
	 * pg_pw_poll_events(). */
	const char *project;
	/* API token ("Authorization: Token <token>"); required by
	 * pg_pw_post_check() only. */
	const char *token;
	/* The token's user name, when known: pg_pw_find_check() then looks
	 * at that user's checks only. */
	const char *username;
	long connect_timeout_ms;	/* > 0 */
	long timeout_ms;		/* > 0: each request */
	size_t max_response;		/* bytes of one JSON answer */
	size_t max_mbox;		/* bytes of one mbox */
	unsigned int per_page;		/* 1..PG_PW_PER_PAGE_MAX */
	unsigned int max_pages;		/* > 0: pages read by one call */
};

#define PG_PW_OPTS_INIT {				\
	.connect_timeout_ms = 5000,			\
	.timeout_ms = 30000,				\
	.max_response = (size_t)8 * 1024 * 1024,	\
	.max_mbox = (size_t)64 * 1024 * 1024,		\
	.per_page = PG_PW_PER_PAGE_MAX,			\
	.max_pages = 40,				\
}

struct pg_pw_client;

/* Create a client.  Returns 0, or -1 with PG_EINVAL (missing base_url,
 * not http(s), zero timeouts or bounds, per_page out of range, a string
 * with CR or LF) or PG_ENOMEM.  *out is NULL on failure. */
int pg_pw_client_new(const struct pg_pw_opts *opts, struct pg_pw_client **out,
		     struct pg_err *err);

/* Close the connection and free the client; NULL is allowed. */
void pg_pw_client_free(struct pg_pw_client *c);

/* The base URL, without a trailing '/'. */
const char *pg_pw_client_base(const struct pg_pw_client *c);

/* True for the codes worth retrying later (PG_EIO, PG_ETIMEOUT). */
bool pg_pw_retryable(enum pg_errcode code);

/* ------------------------------------------------------------------ */
/* Events                                                              */

/* True when name is one of Patchwork's event categories. */
bool pg_pw_category_valid(const char *name);

/*
 * One event, as handed to the callback.  Everything is borrowed and valid
 * during the call only.  Ids are 0 when the payload has no such object.
 */
struct pg_pw_event {
	int64_t id;		/* the event's id: deduplicate on it */
	const char *category;	/* e.g. "series-completed" */
	int64_t date_ms;	/* the event's date (naive UTC) */
	int64_t project_id;
	int64_t series_id;
	int64_t patch_id;
	int64_t cover_id;
	int64_t comment_id;
	int64_t check_id;
	/* The comment's API URL (payload.comment.url, API 1.3), or built
	 * from the patch or cover id when the payload has none; NULL when
	 * the event has no comment. */
	const char *comment_url;
};

/*
 * Called once per event, in date order.  Return 0 to go on, 1 to stop
 * (pg_pw_poll_events() then returns 0), or -1 with err set to abort.
 */
typedef int (*pg_pw_event_fn)(const struct pg_pw_event *ev, void *arg,
			      struct pg_err *err);

struct pg_pw_poll_stats {
	unsigned int pages;	/* pages read */
	unsigned int events;	/* events handed to the callback */
	/* max_pages were read and a next page remains: poll again soon,
	 * from last_date_ms. */
	bool more;
	bool stopped;		/* the callback returned 1 */
	int64_t last_date_ms;	/* date of the last event handed, else -1 */
};

/*
 * Read the project's events of one category (Patchwork filters one
 * category per request), oldest first:
 *   GET {base}/events/?project=P&category=C&order=date&per_page=N
 *       [&since=YYYY-MM-DDTHH:MM:SS]
 * following Link rel="next" until the last page or max_pages.
 *
 * since_ms: only events at or after it (Patchwork's `since` is inclusive;
 * it is sent naive UTC, with the milliseconds dropped, so the event at
 * that instant is returned again).  < 0: from the beginning.
 *
 * Events come again across polls (inclusive `since`, and "series-completed"
 * may fire twice for one series): deduplication by ev->id is the caller's
 * job.  To move a cursor, use stats->last_date_ms.
 *
 * stats may be NULL.  Returns 0 (also when stopped by the callback or at
 * max_pages), or -1 with err set: PG_EINVAL for an unknown category, no
 * project configured, or a malformed answer (the message names the field
 * and the page URL), the callback's own error, or a network error (see
 * above).  Events handed before an error stay handed.
 */
int pg_pw_poll_events(struct pg_pw_client *c, const char *category,
		      int64_t since_ms, pg_pw_event_fn fn, void *arg,
		      struct pg_pw_poll_stats *stats, struct pg_err *err);

/*
 * Hand the events of one page (the JSON text of an events answer) to fn
 * as pg_pw_poll_events() does, base (the API root, no trailing '/')
 * building the comment URLs a payload lacks.  Pure.  Returns 0, 1 when fn
 * stopped, or -1 with err (PG_EINVAL for bad JSON or a malformed event,
 * naming "events[i]" and the field, or fn's error).
 */
int pg_pw_parse_events(const char *json, size_t len, const char *base,
		       const char *category, pg_pw_event_fn fn, void *arg,
		       struct pg_pw_poll_stats *stats, struct pg_err *err);

/* ------------------------------------------------------------------ */
/* Series                                                              */

struct pg_pw_patch {
	int64_t id;
	char *msgid;		/* with <> */
	char *name;		/* e.g. "[v2,1/2] lib: add world" */
	char *mbox_url;
	int64_t date_ms;	/* -1 when absent */
	unsigned int number;	/* N of "N/M" in the name, 0 when none */
};

struct pg_pw_series {
	int64_t id;
	char *name;		/* "" while Patchwork has none */
	int version;		/* 1 when absent */
	int total;		/* M of "x/M"; the patches expected */
	int received_total;
	bool received_all;
	char *submitter_name;	/* "" when absent */
	char *submitter_email;
	int64_t date_ms;	/* -1 when absent */
	char *mbox_url;		/* the series mbox (cover letter excluded) */
	bool has_cover;
	struct pg_pw_patch cover;	/* when has_cover; number 0 */
	struct pg_pw_patch *patches;
	size_t npatches;
};

/* Free what a series holds; it is zeroed and can be reused. */
void pg_pw_series_release(struct pg_pw_series *s);

/*
 * GET {base}/series/{id}/ into *out (released first).
 *
 * out->patches is sorted by the number N of "[...,N/M]" in each patch's
 * name when every patch has one, else by date (then id).  Patchwork lists
 * a series' patches by date, not by number (Patch.Meta.ordering = date),
 * and a series whose patches were mailed within one second, or re-sent
 * one by one, comes back out of order; the number is not in the API
 * except in the name.
 *
 * Returns 0, or -1: PG_ENOTFOUND for no such series, PG_EINVAL for a
 * malformed answer, or a network error.
 */
int pg_pw_get_series(struct pg_pw_client *c, int64_t id, struct pg_pw_series *out,
		     struct pg_err *err);

/*
 * Parse a series detail (the JSON text of GET /series/{id}/) into *out;
 * url only names the source in errors.  Pure.  Same returns as
 * pg_pw_get_series() for the parsing part.
 */
int pg_pw_parse_series(const char *json, size_t len, const char *url,
		       struct pg_pw_series *out, struct pg_err *err);

/*
 * Find "N/M" among the comma-separated prefixes of a Patchwork name,
 * "[v2,3/10] net/ice: fix" -> 3 and 10.  Pure.  Returns true and sets
 * *num and *total (either may be NULL), false when there is none.
 */
bool pg_pw_name_number(const char *name, unsigned int *num, unsigned int *total);

/* ------------------------------------------------------------------ */
/* Patches                                                             */

/*
 * Find the project's patch with this Message-ID (with or without <>):
 *   GET {base}/patches/?project=P&msgid=ID&per_page=N
 * (the msgid filter is API 1.2 and later; it takes the id without <>).
 * Each answer's "msgid" is compared here as well, since a server without
 * the filter ignores it and lists every patch: a list that does not hold
 * the id means "not there", never some other patch.  Only the first page
 * is read (one Message-ID names one patch per project).
 *
 * Returns 1 and sets *patch_id (may be NULL), 0 when Patchwork has no such
 * patch (yet: a mail reaches the list before Patchwork parses it), or -1
 * with err set: PG_EINVAL for no project configured, an empty Message-ID
 * or one with control characters or spaces, or a malformed answer; a
 * network error (see above).
 */
int pg_pw_find_patch(struct pg_pw_client *c, const char *msgid, int64_t *patch_id,
		     struct pg_err *err);

/* The answer of that GET (JSON text), searched for want (with <>) as
 * pg_pw_find_patch() does.  Pure.  Returns 1 and sets *patch_id (may be
 * NULL), 0 when no entry has that msgid, -1 (PG_EINVAL) for a malformed
 * answer. */
int pg_pw_parse_patch_list(const char *json, size_t len, const char *want,
			   int64_t *patch_id, struct pg_err *err);

/* ------------------------------------------------------------------ */
/* mbox downloads                                                      */

/*
 * GET url (an http(s) mbox URL such as a patch's mbox_url, a series'
 * mbox_url or {web}/patch/N/mbox/), following redirects (Patchwork
 * answers 302 for /patch/N/mbox/), into out (reset first).  At most
 * max_mbox bytes and out->max: more fails with PG_ETOOBIG.  The content is
 * not un-escaped: Patchwork applies no >From escaping (split it with a
 * date-shaped From_ test, as git mailsplit does).
 *
 * Returns 0, or -1: PG_EINVAL for a non-http(s) URL or a 4xx other than
 * 404, PG_ENOTFOUND for 404, PG_ETOOBIG, or a network error.
 */
int pg_pw_download_mbox(struct pg_pw_client *c, const char *url, struct pg_buf *out,
			struct pg_err *err);

/* ------------------------------------------------------------------ */
/* Comments                                                            */

struct pg_pw_comment {
	int64_t id;
	char *msgid;		/* with <> */
	char *subject;		/* "" when absent */
	/* The mail body as Patchwork keeps it (signature dropped): where
	 * "Recheck-request: ctx, ctx" lines are. */
	char *content;
	char *submitter_name;	/* "" when absent */
	char *submitter_email;
	int64_t date_ms;	/* -1 when absent */
};

/* Free what a comment holds; it is zeroed and can be reused. */
void pg_pw_comment_release(struct pg_pw_comment *cm);

/*
 * GET a comment's API URL (struct pg_pw_event.comment_url, i.e.
 * {base}/patches/{patch}/comments/{id}/ or the covers/ one; API 1.3) into
 * *out (released first).  Returns 0, or -1: PG_EINVAL for a non-http(s)
 * URL or a malformed answer, PG_ENOTFOUND, or a network error.
 */
int pg_pw_get_comment(struct pg_pw_client *c, const char *url,
		      struct pg_pw_comment *out, struct pg_err *err);

/* Parse a comment (the JSON text of that GET) into *out (released first);
 * url only names the source in errors.  Pure.  Returns 0, or -1 with
 * PG_EINVAL (*out then empty). */
int pg_pw_parse_comment(const char *json, size_t len, const char *url,
			struct pg_pw_comment *out, struct pg_err *err);

/* ------------------------------------------------------------------ */
/* Checks                                                              */

enum pg_pw_check_state {
	PG_PW_CHECK_PENDING = 0,
	PG_PW_CHECK_SUCCESS,
	PG_PW_CHECK_WARNING,
	PG_PW_CHECK_FAIL,
};

/* "pending", "success", "warning", "fail"; NULL when out of range. */
const char *pg_pw_check_state_name(enum pg_pw_check_state state);

/* The reverse; returns 0, or -1 for any other string (Patchwork's labels
 * are lower case and exact). */
int pg_pw_check_state_parse(const char *name, enum pg_pw_check_state *out);

/* True when s is a Patchwork slug: 1..255 of [-A-Za-z0-9_]. */
bool pg_pw_slug_valid(const char *s);

/*
 * What a check POST came to.  Initialise with PG_PW_CHECK_RESULT_INIT,
 * free with pg_pw_check_result_release(); reusable (each call resets it).
 */
struct pg_pw_check_result {
	long status;		/* HTTP status; 0 when no answer arrived */
	int64_t check_id;	/* the new check's id on 201 (0: not said) */
	/* Retry-After of a 429 or 503, in ms; -1 when none. */
	int64_t retry_after_ms;
	/* False when the POST certainly never reached Patchwork (refused
	 * before sending, or no connection made: pg_http_response's
	 * request_sent); true when it did or may have. */
	bool reached;
	/* The answer's body (JSON error details on a 4xx), at most
	 * PG_PW_BODY_KEEP bytes of it, for the caller's records. */
	struct pg_buf body;
};

#define PG_PW_CHECK_RESULT_INIT { .retry_after_ms = -1, \
				  .body = PG_BUF_INIT(PG_PW_BODY_KEEP) }

void pg_pw_check_result_release(struct pg_pw_check_result *r);

/*
 * POST {base}/patches/{patch_id}/checks/ with
 *   Content-Type: application/json, Authorization: Token <token>
 *   {"state":"success","context":"...","description":"...","target_url":"..."}
 * (description and target_url left out when NULL or "").
 *
 * Inputs are checked before anything is sent (PG_EINVAL, out->status 0):
 * a token configured, patch_id > 0, a known state, context a slug
 * (pg_pw_slug_valid()), description at most PG_PW_DESCRIPTION_MAX bytes,
 * target_url at most PG_PW_TARGET_URL_MAX bytes, http:// or https://,
 * without spaces or control characters.
 *
 * Returns 0 on 201 only (out->check_id from the answer, 0 when the answer
 * did not say: the check exists all the same).  Otherwise -1 with err set
 * and out filled as far as an answer came:
 *   4xx: PG_EINVAL (400 bad field, 403 no permission or bad token, 404
 *        no such patch...), PG_ECONFLICT for 409: record out->body, do
 *        not retry as is;
 *   5xx, 429, no answer: PG_EIO; a timeout or 408: PG_ETIMEOUT: retry
 *        later.  Without an answer, or with a 5xx, the check may have
 *        been created all the same (a reply lost on the way) unless
 *        out->reached is false: call pg_pw_find_check() before posting
 *        again.
 * Checks are never replaced: posting the same context again creates a
 * newer check, which is how a recheck is reported.
 */
int pg_pw_post_check(struct pg_pw_client *c, int64_t patch_id,
		     enum pg_pw_check_state state, const char *context,
		     const char *description, const char *target_url,
		     struct pg_pw_check_result *out, struct pg_err *err);

/*
 * Look for a check on the patch identical to what pg_pw_post_check()
 * would post with these arguments (same state, context, description and
 * target_url; NULL and "" are the same), dated at or after since_ms (< 0:
 * any date), by the configured username when there is one:
 *   GET {base}/patches/{patch_id}/checks/?context=C[&user=U][&since=T]
 * following pages up to max_pages.  Only the context is filtered by the
 * server; the rest is compared here.  Use it before re-posting after an
 * error that may have followed the creation, so that each check arrives
 * exactly once.  since_ms should be when the first attempt started, less
 * a margin for the two clocks.
 *
 * Returns 1 and sets *check_id (may be NULL) to the newest such check, 0
 * when there is none, or -1 with err set (invalid arguments as for
 * pg_pw_post_check(), PG_ENOTFOUND for no such patch, a malformed answer,
 * a network error).
 */
int pg_pw_find_check(struct pg_pw_client *c, int64_t patch_id,
		     enum pg_pw_check_state state, const char *context,
		     const char *description, const char *target_url,
		     int64_t since_ms, int64_t *check_id, struct pg_err *err);

/* One page of that GET (JSON text) searched as pg_pw_find_check() does.
 * Pure.  Returns 1 and sets *check_id (may be NULL), 0 when none matches,
 * -1 (PG_EINVAL) for a malformed page or no state or context. */
int pg_pw_parse_check_list(const char *json, size_t len, enum pg_pw_check_state state,
			   const char *context, const char *description,
			   const char *target_url, int64_t since_ms, int64_t *check_id,
			   struct pg_err *err);

#endif
