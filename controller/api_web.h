/* SPDX-License-Identifier: MIT */
#ifndef CTL_API_WEB_H
#define CTL_API_WEB_H

/*
 * The dashboard's files: the pages (/, /series/ID, /trends, /agents,
 * /queue) and their assets (/assets/...), served from the web directory
 * (web/CONTRACT.md).  Every file is opened beneath that directory and
 * never through a symbolic link (lib/fsbeneath.h); the route already
 * refused any path with "..", a hidden name or a byte outside
 * [A-Za-z0-9_./-].  The pages fetch everything else from /api/v1.
 */

#include "err.h"

struct api_server;
struct api_req;
struct store;

/*
 * Find the web directory: api.web_dir when set (it must hold index.html),
 * else DATADIR/perfgate/web when installed, else the source tree's web/.
 * Sets srv->web_dir (malloc'd), or leaves it NULL and logs a warning when
 * there is none (the pages then answer 404 naming the field).  Returns 0,
 * or -1 with err when api.web_dir is set but unusable.
 */
int api_web_init(struct api_server *srv, struct pg_err *err);

/* Answer a page or an asset (API_EP_PAGE, API_EP_ASSET); st is a read
 * connection (the series page answers 404 for an unknown series). */
void api_web_serve(struct api_server *srv, struct store *st, struct api_req *r);

#endif
