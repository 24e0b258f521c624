/* SPDX-License-Identifier: MIT */
#ifndef CTL_API_ROUTE_H
#define CTL_API_ROUTE_H

/*
 * The API's routes (the README's "HTTP API"): which method and path is
 * which endpoint, who may call it, and the checks on path segments and
 * query values.  Pure functions over strings, no I/O: the unit tests
 * (tests/unit/test_api_route.c) drive them directly.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every endpoint.  The order is the one of /metrics' route labels. */
enum api_ep {
	API_EP_NONE = 0,		/* no such path (404) */
	API_EP_METRICS,			/* GET  /metrics */
	API_EP_REGISTER,		/* POST /api/v1/agents/register */
	API_EP_AGENTS,			/* GET  /api/v1/agents */
	API_EP_LEASE,			/* POST /api/v1/lease */
	API_EP_SERIES_LIST,		/* GET  /api/v1/series */
	API_EP_SERIES,			/* GET  /api/v1/series/{id} */
	API_EP_SERIES_MBOX,		/* GET  /api/v1/series/{id}/mbox */
	API_EP_SERIES_RECHECK,		/* POST /api/v1/series/{id}/recheck */
	API_EP_RUN,			/* GET  /api/v1/runs/{id} */
	API_EP_JOBS,			/* GET  /api/v1/jobs */
	API_EP_JOB,			/* GET  /api/v1/jobs/{id} */
	API_EP_JOB_HEARTBEAT,		/* POST /api/v1/jobs/{id}/heartbeat */
	API_EP_JOB_LOGS,		/* POST /api/v1/jobs/{id}/logs */
	API_EP_JOB_LOG,			/* GET  /api/v1/jobs/{id}/logs/{attempt}/{stage} */
	API_EP_JOB_RESULT,		/* POST /api/v1/jobs/{id}/result */
	API_EP_JOB_CANCEL,		/* POST /api/v1/jobs/{id}/cancel */
	API_EP_META,			/* GET  /api/v1/meta */
	API_EP_QUEUE,			/* GET  /api/v1/queue */
	API_EP_TRENDS,			/* GET  /api/v1/trends */
	API_EP_JOB_VERDICT,		/* GET  /api/v1/jobs/{id}/verdict */
	API_EP_JOB_SAMPLES,		/* GET  /api/v1/jobs/{id}/samples */
	API_EP_HOST_NOISE,		/* GET  /api/v1/hosts/{agent}/noise */
	API_EP_CHANGE_POINTS,		/* GET  /api/v1/change-points */
	API_EP_HISTORY,			/* GET  /api/v1/history */
	API_EP_PAGE,			/* GET  /, /series/{id}, /trends, /agents, /queue */
	API_EP_ASSET,			/* GET  /assets/{path} */
	API_EP_COUNT
};

/* Who may call an endpoint. */
enum api_access {
	API_ACCESS_PUBLIC,		/* anyone: read-only */
	API_ACCESS_AGENT,		/* Authorization: Bearer <agent token> */
	API_ACCESS_ADMIN,		/* Authorization: Bearer <admin token> */
};

/* A log's stage name: a file name, so [A-Za-z0-9_.-], not starting with
 * '.', at most this many bytes. */
#define API_STAGE_MAX 64

/* The dashboard's pages (API_EP_PAGE), each a file of the web
 * directory (web/CONTRACT.md). */
enum api_page {
	API_PAGE_INDEX = 0,		/* /: the series list */
	API_PAGE_SERIES,		/* /series/{id}: every check's target */
	API_PAGE_TRENDS,
	API_PAGE_AGENTS,
	API_PAGE_QUEUE,
	API_PAGE_CHANGES,		/* /changes: change points on the main branches */
	API_PAGE_COUNT
};

/* An asset's path below /assets/: at most this many bytes, in at most
 * API_ASSET_DEPTH segments of [A-Za-z0-9_.-] that do not start with '.'
 * (so no "..", no hidden file, nothing to unquote). */
#define API_ASSET_MAX 128
#define API_NAME_MAX 64		/* an agent name: [A-Za-z0-9_.-]+ (sched.h) */
#define API_ASSET_DEPTH 4

/* What a path says besides its endpoint. */
struct api_route {
	enum api_ep ep;
	int64_t id;			/* the series, run or job in the path */
	int64_t attempt;		/* API_EP_JOB_LOG */
	char stage[API_STAGE_MAX + 1];	/* API_EP_JOB_LOG */
	enum api_page page;		/* API_EP_PAGE */
	char asset[API_ASSET_MAX + 1];	/* API_EP_ASSET: "vendor/uplot/x.js" */
	char name[API_NAME_MAX + 1];	/* API_EP_HOST_NOISE: an agent's name */
};

/* The file of a page in the web directory ("index.html"). */
const char *api_page_file(enum api_page page);

/*
 * Match a request: method ("GET", "HEAD", "POST", ...) and path (without
 * the query string, as libmicrohttpd hands it over).  HEAD is GET without
 * a body.  Returns:
 *   200  *r filled;
 *   404  no endpoint has that path (r->ep is API_EP_NONE);
 *   405  the path exists but not with that method: r->ep is the path's
 *        endpoint and *allow (when allow is not NULL) the methods it takes,
 *        for the Allow header ("GET, HEAD" or "POST").
 * Ids in paths are decimal, 1 to 18 digits, greater than 0.
 */
int api_route_match(const char *method, const char *path, struct api_route *r,
		    const char **allow);

enum api_access api_route_access(enum api_ep ep);

/* True for the endpoints that change the store: their body is read, and
 * they run on the writer thread. */
bool api_route_writes(enum api_ep ep);

/* A short name for logs and /metrics' route label ("lease", "series"). */
const char *api_route_name(enum api_ep ep);

/* Parse the n bytes at s as an id (see api_route_match()).  Returns 0 and
 * sets *out, or -1. */
int api_parse_id(const char *s, size_t n, int64_t *out);

/* Parse a query value as a decimal integer in [min, max] (no sign, no
 * space, at most 18 digits).  Returns 0 and sets *out, or -1. */
int api_parse_uint(const char *s, int64_t min, int64_t max, int64_t *out);

/* Whether s (n bytes) is a stage name (see API_STAGE_MAX). */
bool api_is_stage(const char *s, size_t n);

#endif
