/* SPDX-License-Identifier: MIT */
/* The dashboard's pages and assets (see api_web.h). */
#include "api_web.h"
#include "api_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsbeneath.h"
#include "log.h"

/* The largest file served (the vendored chart library is ~50 KiB). */
#define API_WEB_FILE_MAX (8LL << 20)

static const struct {
	const char *ext, *type;
} api_web_types[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".mjs", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
	{ ".png", "image/png" },
	{ ".ico", "image/x-icon" },
	{ ".json", "application/json" },
	{ ".txt", "text/plain; charset=utf-8" },
	{ ".map", "application/json" },
};

/* The type of a file by its name; NULL for a type not served. */
static const char *api_web_type(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(api_web_types) / sizeof(api_web_types[0]); i++) {
		size_t e = strlen(api_web_types[i].ext);

		if (n > e && strcmp(name + n - e, api_web_types[i].ext) == 0)
			return api_web_types[i].type;
	}
	return NULL;
}

/* Whether dir holds the dashboard (its index.html). */
static bool api_web_dir_ok(const char *dir)
{
	struct pg_err err = PG_ERR_INIT;
	struct stat sb;

	return pg_stat_beneath(dir, "index.html", &sb, &err) == 0 && S_ISREG(sb.st_mode);
}

int api_web_init(struct api_server *srv, struct pg_err *err)
{
	static const char *const dirs[] = { PG_DATADIR "/perfgate/web", PG_SRCDIR "/web" };
	const char *dir = srv->conf->web_dir;

	srv->web_dir = NULL;
	if (dir) {
		if (!api_web_dir_ok(dir))
			return pg_err_set(err, PG_EINVAL, "api: field 'web_dir': %s holds no "
					  "index.html (the dashboard's files, web/ of the source)",
					  dir);
	} else {
		for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !dir; i++)
			if (api_web_dir_ok(dirs[i]))
				dir = dirs[i];
		if (!dir) {
			pg_log_warn("api", "no dashboard: neither %s nor %s holds index.html "
				    "(set api.web_dir)", dirs[0], dirs[1]);
			return 0;
		}
	}
	srv->web_dir = strdup(dir);
	if (!srv->web_dir)
		return pg_err_set(err, PG_ENOMEM, "api: out of memory");
	pg_log_info("api", "dashboard from %s", dir);
	return 0;
}

/* Send root/rel with status. */
static void api_web_file(struct api_server *srv, struct api_req *r, unsigned int status,
			 const char *rel)
{
	struct pg_err err = PG_ERR_INIT;
	const char *type = api_web_type(rel);
	struct stat sb;
	int fd;

	if (!type) {
		api_reply_error(r, 404, "no such file: /%s", rel);
		return;
	}
	fd = pg_open_beneath(srv->web_dir, rel, O_RDONLY | O_NONBLOCK, 0, &err);
	if (fd < 0) {
		/* A link planted in the web directory is no file of ours. */
		if (err.code == PG_ENOTFOUND || err.code == PG_EINVAL)
			api_reply_error(r, 404, "no such file: /%s", rel);
		else
			api_reply_err(r, &err);
		return;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > API_WEB_FILE_MAX) {
		close(fd);
		api_reply_error(r, 404, "no such file: /%s", rel);
		return;
	}
	api_reply_empty(r, status);
	r->content_type = type;
	r->fd = fd;
	r->fd_size = (uint64_t)sb.st_size;
	/* Pages name their data by URL and change with the store: asked
	 * again each time.  Assets change only with an upgrade. */
	r->cache = r->route.ep == API_EP_ASSET ? "public, max-age=300" : "no-cache";
}

void api_web_serve(struct api_server *srv, struct store *st, struct api_req *r)
{
	struct pg_err err = PG_ERR_INIT;
	unsigned int status = 200;
	int64_t n = 0;

	if (!srv->web_dir) {
		api_reply_error(r, 404, "the dashboard is not installed (api.web_dir)");
		return;
	}
	if (r->route.ep == API_EP_ASSET) {
		char rel[sizeof("assets/") + API_ASSET_MAX];

		int len = snprintf(rel, sizeof(rel), "assets/%s", r->route.asset);

		if (len < 0 || (size_t)len >= sizeof(rel))	/* the route bounds it */
			api_reply_error(r, 404, "no such file: /assets/%s", r->route.asset);
		else
			api_web_file(srv, r, 200, rel);
		return;
	}
	if (r->route.page == API_PAGE_SERIES) {
		/* Every check's target: an unknown series is a 404, with the
		 * page that says so. */
		if (store_query_int(st, "find series", "SELECT count(*) FROM series WHERE id = ?1",
				    STORE_ARGS(STORE_INT(r->route.id)), &n, &err) < 0) {
			api_reply_err(r, &err);
			return;
		}
		if (n == 0)
			status = 404;
	}
	api_web_file(srv, r, status, api_page_file(r->route.page));
}
