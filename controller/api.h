/* SPDX-License-Identifier: MIT */
#ifndef CTL_API_H
#define CTL_API_H

/*
 * The controller's HTTP API: the agent protocol, the read endpoints of the
 * dashboard, the admin endpoints and /metrics (DESIGN.md section 3; the
 * README's "HTTP API" section is the contract, with examples).
 *
 * Threads.  libmicrohttpd runs api.threads threads (poll(), one listening
 * socket shared) that read requests, check tokens, and validate bodies.
 * Every change to the store goes through ONE writer thread, the API's
 * scheduling point: a handler queues its validated request and suspends
 * the connection; the writer calls the scheduler (sched.h) for a batch of
 * queued requests in one transaction and sets their answers; a syncer
 * thread resumes the connections once the commit is on disk (api_worker.c
 * tells how; a checkpointer thread keeps the WAL short).  A lease that finds no job is parked
 * with the writer, its connection suspended and holding no thread, until
 * a job is queued (api_jobs_queued(), or a change of the store seen by
 * the writer's look every second), wait_s passes (204) or the server
 * stops (503): a thousand agents long-polling cost a thousand idle
 * sockets, not a thousand threads.  Read endpoints run on the HTTP
 * threads over a pool of read-only store connections, beside the writer
 * (WAL).
 *
 * The store must exist and be migrated (serve.c opens it first).
 */

#include "ctl_config.h"
#include "err.h"
#include "profile.h"

struct api_server;

/* An agent is "online" when seen this recently (a long poll lasts at most
 * 60 s, so a waiting agent is seen at least that often). */
#define API_ONLINE_WINDOW_S 120

/*
 * Start serving on cfg->api.listen (cfg->api.enabled must be true), with
 * the store cfg->db, logs under cfg->data_dir/logs and the host classes of
 * ps.  cfg and ps are borrowed and must outlive the server.  Logs "api:
 * listening on http://HOST:PORT" (the bound port, also when listen's port
 * is 0).  Returns 0 and sets *out, or -1 with err set (address in use,
 * unreadable admin token file, store trouble) and nothing left running.
 */
int api_server_start(struct api_server **out, const struct ctl_config *cfg,
		     const struct profile_set *ps, struct pg_err *err);

/*
 * Stop: new requests are answered 503, parked leases 503, requests in
 * flight finish (for at most a few seconds), then the listening socket and
 * the connections close, the threads end and everything is freed.  NULL
 * is a no-op.  Call from the thread that started the server.
 */
void api_server_stop(struct api_server *srv);

/* Jobs were queued (the planner, an expiry sweep): parked leases look at
 * once instead of at their next look.  Any thread; NULL is a no-op. */
void api_jobs_queued(struct api_server *srv);

/* The port bound and the base URL of links (api.public_url, else from the
 * address bound), e.g. "http://127.0.0.1:8080". */
int api_server_port(const struct api_server *srv);
const char *api_server_public_url(const struct api_server *srv);

#endif
