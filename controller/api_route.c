/* SPDX-License-Identifier: MIT */
/* The API's routing table and path checks (see api_route.h). */
#include "api_route.h"

#include <string.h>

#define API_PREFIX "/api/v1/"
#define API_ID_DIGITS 18

struct api_route_info {
	const char *name;
	enum api_access access;
	bool post;
};

static const struct api_route_info api_routes[API_EP_COUNT] = {
	[API_EP_NONE] = { "unknown", API_ACCESS_PUBLIC, false },
	[API_EP_METRICS] = { "metrics", API_ACCESS_PUBLIC, false },
	[API_EP_REGISTER] = { "register", API_ACCESS_AGENT, true },
	[API_EP_AGENTS] = { "agents", API_ACCESS_PUBLIC, false },
	[API_EP_LEASE] = { "lease", API_ACCESS_AGENT, true },
	[API_EP_SERIES_LIST] = { "series_list", API_ACCESS_PUBLIC, false },
	[API_EP_SERIES] = { "series", API_ACCESS_PUBLIC, false },
	[API_EP_SERIES_MBOX] = { "mbox", API_ACCESS_PUBLIC, false },
	[API_EP_SERIES_RECHECK] = { "recheck", API_ACCESS_ADMIN, true },
	[API_EP_RUN] = { "run", API_ACCESS_PUBLIC, false },
	[API_EP_JOBS] = { "jobs", API_ACCESS_PUBLIC, false },
	[API_EP_JOB] = { "job", API_ACCESS_PUBLIC, false },
	[API_EP_JOB_HEARTBEAT] = { "heartbeat", API_ACCESS_AGENT, true },
	[API_EP_JOB_LOGS] = { "logs", API_ACCESS_AGENT, true },
	[API_EP_JOB_LOG] = { "log", API_ACCESS_PUBLIC, false },
	[API_EP_JOB_RESULT] = { "result", API_ACCESS_AGENT, true },
	[API_EP_JOB_CANCEL] = { "cancel", API_ACCESS_ADMIN, true },
	[API_EP_META] = { "meta", API_ACCESS_PUBLIC, false },
	[API_EP_QUEUE] = { "queue", API_ACCESS_PUBLIC, false },
	[API_EP_TRENDS] = { "trends", API_ACCESS_PUBLIC, false },
	[API_EP_JOB_VERDICT] = { "verdict", API_ACCESS_PUBLIC, false },
	[API_EP_JOB_SAMPLES] = { "samples", API_ACCESS_PUBLIC, false },
	[API_EP_HOST_NOISE] = { "host_noise", API_ACCESS_PUBLIC, false },
	[API_EP_CHANGE_POINTS] = { "change_points", API_ACCESS_PUBLIC, false },
	[API_EP_HISTORY] = { "history", API_ACCESS_PUBLIC, false },
	[API_EP_PAGE] = { "page", API_ACCESS_PUBLIC, false },
	[API_EP_ASSET] = { "asset", API_ACCESS_PUBLIC, false },
};

static const char *const api_page_files[API_PAGE_COUNT] = {
	[API_PAGE_INDEX] = "index.html",
	[API_PAGE_SERIES] = "series.html",
	[API_PAGE_TRENDS] = "trends.html",
	[API_PAGE_AGENTS] = "agents.html",
	[API_PAGE_QUEUE] = "queue.html",
	[API_PAGE_CHANGES] = "changes.html",
};

const char *api_page_file(enum api_page page)
{
	return (unsigned int)page < API_PAGE_COUNT ? api_page_files[page] : "index.html";
}

enum api_access api_route_access(enum api_ep ep)
{
	return ep < API_EP_COUNT ? api_routes[ep].access : API_ACCESS_PUBLIC;
}

bool api_route_writes(enum api_ep ep)
{
	return ep < API_EP_COUNT && api_routes[ep].post;
}

const char *api_route_name(enum api_ep ep)
{
	return ep < API_EP_COUNT ? api_routes[ep].name : "unknown";
}

int api_parse_id(const char *s, size_t n, int64_t *out)
{
	int64_t v = 0;

	if (n == 0 || n > API_ID_DIGITS)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v <= 0)
		return -1;
	*out = v;
	return 0;
}

int api_parse_uint(const char *s, int64_t min, int64_t max, int64_t *out)
{
	int64_t v = 0;
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > API_ID_DIGITS)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

bool api_is_stage(const char *s, size_t n)
{
	if (n == 0 || n > API_STAGE_MAX || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

/* Split the path after API_PREFIX into at most `max` segments separated
 * by single '/'; an empty segment (a doubled or trailing '/') makes the
 * path unknown.  Returns the number of segments, or -1. */
static int api_split(const char *p, const char **seg, size_t *len, int max)
{
	int n = 0;

	for (;;) {
		const char *slash = strchr(p, '/');
		size_t l = slash ? (size_t)(slash - p) : strlen(p);

		if (l == 0 || n == max)
			return -1;
		seg[n] = p;
		len[n] = l;
		n++;
		if (!slash)
			return n;
		p = slash + 1;
	}
}

static bool api_seg_is(const char *seg, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(seg, word, len) == 0;
}

/* An asset path (see API_ASSET_MAX) into r->asset. */
static enum api_ep api_asset(const char *p, struct api_route *r)
{
	const char *seg[API_ASSET_DEPTH];
	size_t len[API_ASSET_DEPTH], total = strlen(p);
	int n = api_split(p, seg, len, API_ASSET_DEPTH);

	if (n < 1 || total > API_ASSET_MAX)
		return API_EP_NONE;
	for (int i = 0; i < n; i++)
		if (!api_is_stage(seg[i], len[i]))
			return API_EP_NONE;
	memcpy(r->asset, p, total + 1);
	return API_EP_ASSET;
}

/* The dashboard's pages and assets; API_EP_NONE for anything else. */
static enum api_ep api_web_path(const char *path, struct api_route *r)
{
	static const struct { const char *path; enum api_page page; } pages[] = {
		{ "/", API_PAGE_INDEX },
		{ "/trends", API_PAGE_TRENDS },
		{ "/agents", API_PAGE_AGENTS },
		{ "/queue", API_PAGE_QUEUE },
		{ "/changes", API_PAGE_CHANGES },
	};

	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		if (strcmp(path, pages[i].path) == 0) {
			r->page = pages[i].page;
			return API_EP_PAGE;
		}
	if (strncmp(path, "/series/", 8) == 0 &&
	    api_parse_id(path + 8, strlen(path + 8), &r->id) == 0) {
		r->page = API_PAGE_SERIES;
		return API_EP_PAGE;
	}
	if (strncmp(path, "/assets/", 8) == 0)
		return api_asset(path + 8, r);
	return API_EP_NONE;
}

/* The endpoint of a path, whatever the method; API_EP_NONE when unknown. */
static enum api_ep api_path(const char *path, struct api_route *r)
{
	const char *seg[5];
	size_t len[5];
	int n;

	if (strcmp(path, "/metrics") == 0)
		return API_EP_METRICS;
	if (strncmp(path, API_PREFIX, strlen(API_PREFIX)) != 0)
		return api_web_path(path, r);
	n = api_split(path + strlen(API_PREFIX), seg, len, 5);
	if (n < 1)
		return API_EP_NONE;
	if (api_seg_is(seg[0], len[0], "lease"))
		return n == 1 ? API_EP_LEASE : API_EP_NONE;
	if (n == 1 && api_seg_is(seg[0], len[0], "meta"))
		return API_EP_META;
	if (n == 1 && api_seg_is(seg[0], len[0], "queue"))
		return API_EP_QUEUE;
	if (n == 1 && api_seg_is(seg[0], len[0], "trends"))
		return API_EP_TRENDS;
	if (n == 1 && api_seg_is(seg[0], len[0], "change-points"))
		return API_EP_CHANGE_POINTS;
	if (n == 1 && api_seg_is(seg[0], len[0], "history"))
		return API_EP_HISTORY;
	if (api_seg_is(seg[0], len[0], "hosts")) {
		if (n != 3 || !api_seg_is(seg[2], len[2], "noise") || !len[1] ||
		    len[1] > API_NAME_MAX ||
		    strspn(seg[1], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				   "0123456789_.-") < len[1])
			return API_EP_NONE;
		memcpy(r->name, seg[1], len[1]);
		r->name[len[1]] = '\0';
		return API_EP_HOST_NOISE;
	}
	if (api_seg_is(seg[0], len[0], "agents")) {
		if (n == 1)
			return API_EP_AGENTS;
		return n == 2 && api_seg_is(seg[1], len[1], "register") ? API_EP_REGISTER
									 : API_EP_NONE;
	}
	if (api_seg_is(seg[0], len[0], "series")) {
		if (n == 1)
			return API_EP_SERIES_LIST;
		if (n > 3 || api_parse_id(seg[1], len[1], &r->id) < 0)
			return API_EP_NONE;
		if (n == 2)
			return API_EP_SERIES;
		if (api_seg_is(seg[2], len[2], "mbox"))
			return API_EP_SERIES_MBOX;
		if (api_seg_is(seg[2], len[2], "recheck"))
			return API_EP_SERIES_RECHECK;
		return API_EP_NONE;
	}
	if (api_seg_is(seg[0], len[0], "runs"))
		return n == 2 && api_parse_id(seg[1], len[1], &r->id) == 0 ? API_EP_RUN
									   : API_EP_NONE;
	if (!api_seg_is(seg[0], len[0], "jobs"))
		return API_EP_NONE;
	if (n == 1)
		return API_EP_JOBS;
	if (api_parse_id(seg[1], len[1], &r->id) < 0)
		return API_EP_NONE;
	if (n == 2)
		return API_EP_JOB;
	if (n == 3) {
		if (api_seg_is(seg[2], len[2], "heartbeat"))
			return API_EP_JOB_HEARTBEAT;
		if (api_seg_is(seg[2], len[2], "logs"))
			return API_EP_JOB_LOGS;
		if (api_seg_is(seg[2], len[2], "result"))
			return API_EP_JOB_RESULT;
		if (api_seg_is(seg[2], len[2], "cancel"))
			return API_EP_JOB_CANCEL;
		if (api_seg_is(seg[2], len[2], "verdict"))
			return API_EP_JOB_VERDICT;
		if (api_seg_is(seg[2], len[2], "samples"))
			return API_EP_JOB_SAMPLES;
		return API_EP_NONE;
	}
	if (n == 5 && api_seg_is(seg[2], len[2], "logs") &&
	    api_parse_id(seg[3], len[3], &r->attempt) == 0 && api_is_stage(seg[4], len[4])) {
		memcpy(r->stage, seg[4], len[4]);
		r->stage[len[4]] = '\0';
		return API_EP_JOB_LOG;
	}
	return API_EP_NONE;
}

int api_route_match(const char *method, const char *path, struct api_route *r,
		    const char **allow)
{
	bool post;

	memset(r, 0, sizeof(*r));
	if (allow)
		*allow = NULL;
	if (!method || !path)
		return 404;
	r->ep = api_path(path, r);
	if (r->ep == API_EP_NONE)
		return 404;
	post = api_routes[r->ep].post;
	if (post ? strcmp(method, "POST") == 0
		 : strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return 200;
	if (allow)
		*allow = post ? "POST" : "GET, HEAD";
	return 405;
}
