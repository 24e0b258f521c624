/* SPDX-License-Identifier: MIT */
#ifndef CTL_API_INT_H
#define CTL_API_INT_H

/*
 * What the api_*.c files share; not for the rest of the controller (see
 * api.h).  The unit tests include it for the pure parts: request parsing
 * (api_parse_*) and the mapping of errors to status codes.
 *
 * A request's life (struct api_req, one per HTTP request):
 *
 *   headers in  -> api_server.c routes it, checks the Content-Length and
 *                  the token (agent tokens through a read connection of
 *                  the pool), or answers at once (404, 405, 401, 403,
 *                  413, 503);
 *   body        -> appended to r->body, at most api.max_body_bytes;
 *   body done   -> a read endpoint runs right there on a pooled read
 *                  connection (api_read.c) and answers;
 *                  a write endpoint parses and validates its body into
 *                  r->op on this thread (api_agent.c, api_admin.c: 400 on
 *                  any problem), then suspends the connection and queues
 *                  r for the writer thread (api_worker.c; a log chunk
 *                  first for an appender thread, api_logs.c, which
 *                  writes it to its file and queues it on), which runs it on
 *                  the one writing connection inside a batch transaction
 *                  (agent endpoints) or one of its own (admin endpoints),
 *                  sets the answer, and after the COMMIT resumes the
 *                  connection; libmicrohttpd then calls the handler again,
 *                  which sends the answer;
 *   completed   -> counted for /metrics, logged at debug level, freed.
 *
 * While r is queued or parked (a lease waiting for a job) only the
 * appender or the writer that holds it touches it; the HTTP side looks
 * at it again after the resume.
 *
 * The files call one way only, down this chain:
 *
 *   api_server.c (HTTP) -> api_logs.c (the log appenders)
 *     -> api_worker.c (the writer)
 *       -> api_agent.c, api_admin.c, api_read.c (the endpoints)
 *         -> api_body.c (request bodies), api_reply.c (answers, clocks)
 *
 * (api_server.c also calls the endpoints' parsers and api_read_run()
 * itself: a read runs on the HTTP thread.)
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "api.h"
#include "api_auth.h"
#include "api_metrics.h"
#include "api_route.h"
#include "buf.h"
#include "ctl_config.h"
#include "err.h"
#include "profile.h"
#include "sched.h"
#include "store.h"

#define API_WAIT_MAX_S 60		/* the longest long poll (more is cut) */
#define API_CONN_TIMEOUT_S 30		/* idle connections (not parked ones) */
#define API_MAX_CONNECTIONS 8192
#define API_LISTEN_BACKLOG 1024
#define API_DRAIN_MS 10000		/* how long a stop waits for requests */
#define API_RETRY_MS 1000		/* parked leases look again this often */
#define API_SEEN_INTERVAL_S 10		/* agents.last_seen is written this often */
#define API_SEEN_SLOTS 4096
#define API_POOL_WAIT_MS 5000		/* for a read connection, then 503 */
#define API_READ_MMAP "1073741824"	/* bytes of the store a read endpoint's
					 * connection maps */
#define API_LOG_MAX_BYTES (256LL << 20)	/* one stage's log */
#define API_LIST_LIMIT_DEFAULT 100
#define API_LIST_LIMIT_MAX 1000
#define API_MBOX_MAX ((size_t)256 << 20)
#define API_REBASE_MAX 63		/* a branch name, as intake reads it */
#define API_BATCH_MAX 256		/* requests in one writer transaction */
#define API_NOTE_MAX 8192		/* a deferred log line */
#define API_CHECKPOINT_MS 250		/* the WAL is copied back this often */
/* An upload over the limit without a Content-Length (chunked) is read
 * and dropped up to this many bytes beyond the limit, to answer 413;
 * beyond that the connection is closed. */
#define API_DISCARD_MAX ((uint64_t)64 << 20)
/* The dashboard's policy, sent with every answer (web/CONTRACT.md). */
#define API_CSP "default-src 'self'; script-src 'self'; style-src 'self'; " \
	"img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; " \
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/* A validated request body (and query) of a write endpoint.  Strings are
 * borrowed from doc unless said otherwise. */
struct api_op {
	cJSON *doc;			/* the parsed body */
	/* register */
	bool has_labels;
	const char **keys, **values;	/* malloc'd arrays */
	size_t n_labels;
	char *facts;			/* compact JSON, malloc'd; NULL: keep */
	/* lease */
	int64_t wait_s;
	/* heartbeat, logs, result */
	int64_t attempt;
	const char *stage;		/* heartbeat: NULL keeps the stored one */
	int progress;			/* heartbeat: -1 when not given */
	char log_stage[API_STAGE_MAX + 1];	/* logs */
	int64_t offset;			/* logs: -1 when not given */
	int64_t log_bytes;		/* logs: what the file holds after the
					 * chunk (the appender's, api_logs.c) */
	/* result */
	struct sched_result_in res;
	struct sched_sample *samples;	/* malloc'd */
	char *fingerprint;		/* compact JSON, malloc'd */
	char digest[API_SHA256_HEX + 1];
	/* recheck */
	char *contexts;			/* "a,b", malloc'd */
	const char *rebase;		/* NULL: none */
	/* cancel */
	const char *reason;
};

enum api_req_state {
	API_REQ_BODY,			/* reading the body */
	API_REQ_QUEUED,			/* with the writer */
	API_REQ_DONE,			/* the writer answered; resumed */
	API_REQ_SENT,			/* the answer is queued with MHD */
};

struct api_req {
	struct api_server *srv;
	struct MHD_Connection *conn;
	struct api_route route;
	char method[8];
	char path[160];			/* for the log, cut */
	int64_t start_us;		/* monotonic */
	enum api_req_state state;
	struct pg_buf body;
	bool too_big;
	uint64_t discarded;
	int64_t agent_id;		/* 0 unless an agent's token was checked */
	char agent[SCHED_NAME_MAX + 1];
	struct api_op op;

	/* The answer. */
	bool answered;
	unsigned int status;
	struct pg_buf out;
	const char *content_type;	/* static string */
	const char *allow;		/* 405 */
	int64_t held_job;		/* lease 204: the job the agent holds */
	int64_t leased_job, leased_attempt;	/* lease 200: what it leased */
	int fd;				/* a file to send instead of out; -1 */
	uint64_t fd_size;
	bool fd_text;			/* fd is text from outside: sanitise it */
	const char *cache;		/* Cache-Control; NULL: no-store */
	char log_size[24];		/* a log tail's X-Perfgate-Log-Size, or "" */

	/* The writer's lists. */
	struct api_req *next, *prev;
	int64_t deadline_ms;		/* a parked lease's end (monotonic) */

	/* Set by the writer inside a batch, acted on after its COMMIT: what
	 * r's answer claims holds only then (api_worker.c). */
	bool in_batch;			/* the answer depends on the commit */
	struct pg_buf note;		/* an info line for the log, or empty */
	bool count_lease;		/* for /metrics */
	int count_result;		/* enum api_result_count, or -1 */

	/* Its stages, for /metrics (enum api_stage): monotonic us, 0 unset. */
	int64_t queued_us, committed_us, resumed_us;
	bool was_parked;		/* a lease that waited for a job */
};

/* The read connections: one per HTTP thread, plus one for spare. */
struct api_pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct store **all;
	size_t n;
	struct store **idle;
	size_t n_idle;
};

/* The writer thread: the one scheduling point (api_worker.c). */
struct api_worker {
	struct api_server *srv;
	struct store *st;
	pthread_t thread;
	bool inited;			/* lock and cond made */
	bool started;			/* thread running */

	pthread_mutex_t lock;		/* guards the fields down to `wake` */
	pthread_cond_t cond;		/* on CLOCK_MONOTONIC */
	struct api_req *head, *tail;	/* queued requests, in arrival order */
	bool quit;			/* finish the queue, then exit */
	bool drain;			/* stopping: answer parked leases 503 */
	bool wake;			/* jobs were queued */

	/* The writer's own, no lock. */
	struct api_req *parked, *parked_tail;	/* leases waiting, oldest first */
	size_t n_parked;
	bool in_tx;			/* a batch transaction is open */
	size_t n_batch;			/* requests run in it */
	struct api_req *done, *done_tail;	/* answered, resumed at its end */
	bool begin_failed;		/* this round: no batch could begin */
	struct pg_err begin_err;	/* why */

	/* The syncer thread: the writer commits without waiting for the disk
	 * (synchronous=NORMAL); this thread syncs the WAL and only then
	 * resumes what those commits answered (api_worker.c). */
	pthread_t sync_thread;
	bool sync_started;
	char *wal_path;			/* the store's -wal file, malloc'd */
	pthread_mutex_t sync_lock;	/* guards the fields down to sync_quit */
	pthread_cond_t sync_cond;
	struct api_req *sync_head, *sync_tail;	/* answered, not yet resumed */
	bool sync_quit;			/* finish the list, then exit */

	/* The checkpointer thread: copies the WAL into the database on its
	 * own connection, so that the writer never does (api_worker.c). */
	pthread_t ckpt_thread;
	bool ckpt_started;
	struct store *ckpt_st;
	pthread_cond_t ckpt_cond;	/* on CLOCK_MONOTONIC, with sync_lock */
	bool ckpt_quit;
	bool dirty;			/* something may have freed a job */
	int64_t data_version;		/* of the store, seen last */
	struct {
		int64_t id;
		int64_t at;
	} seen[API_SEEN_SLOTS];
};

/* The log appender (api_logs.c): lanes, each a thread with its queue. */
#define API_LOG_LANES 4
#define API_LOG_PREP_MAX 4096		/* a lane's queue of directories to make */
#define API_LOG_PREP_DELAY_MS 500	/* after the lease, before its directory */
#define API_LOG_OWNERS 1024		/* a lane's table of attempts' agents */
struct api_log_prep;
struct api_log_owner {
	int64_t job, attempt, agent;	/* 0: empty */
};
struct api_log_lane {
	struct api_worker *worker;	/* where appended chunks go */
	const char *data_dir;
	struct store *st;		/* the lane's: ownership checks */
	pthread_t thread;
	bool inited;			/* lock and cond made */
	bool started;			/* thread running */
	pthread_mutex_t lock;		/* guards the fields below */
	pthread_cond_t cond;
	struct api_req *head, *tail;	/* queued chunks, in arrival order */
	struct api_log_prep *prep_head, *prep_tail;	/* directories to make */
	size_t n_prep;
	bool quit;			/* finish the queue, then exit */
	/* The lane thread's alone: */
	struct api_log_owner owner[API_LOG_OWNERS];	/* attempts' agents seen */
};

struct api_logs {
	struct api_log_lane lane[API_LOG_LANES];
};

struct api_server {
	const struct ctl_config *cfg;
	const struct ctl_api *conf;
	const struct profile_set *ps;
	struct MHD_Daemon *mhd;
	struct sockaddr_storage addr;
	int port;
	char *public_url;
	char *web_dir;			/* the dashboard's files; NULL: none */
	char *mirror_root;		/* the planner's tree mirrors (trends'
					 * git order) */
	struct api_admin admin;
	atomic_int stopping;		/* new requests get 503 */
	atomic_int serving;		/* started: libmicrohttpd's notes to debug */
	bool pool_ok, auth_pool_ok, worker_ok, metrics_ok, lock_ok;
	struct api_pool pool;		/* read endpoints: mapped */
	struct api_pool auth_pool;	/* agents' tokens: not mapped */
	struct api_worker worker;
	struct api_logs logs;
	struct api_metrics metrics;

	pthread_mutex_t lock;		/* guards in_flight */
	pthread_cond_t idle;
	long in_flight;
};

/* ---- answers (api_reply.c) -------------------------------------------- */

/* The status for an error code: PG_EINVAL 400, PG_ENOTFOUND 404,
 * PG_ECONFLICT 409, PG_ETOOBIG 413, PG_ETIMEOUT 503, else 500. */
unsigned int api_status_for(enum pg_errcode code);

/* Answer {"error": message}. */
void api_reply_error(struct api_req *r, unsigned int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Answer err with api_status_for(); a 5xx is logged at error level with
 * what the request was doing. */
void api_reply_err(struct api_req *r, const struct pg_err *err);

/* Answer obj as JSON (consumes it; NULL means out of memory: 500). */
void api_reply_json(struct api_req *r, unsigned int status, cJSON *obj);

/* Answer with no body (204). */
void api_reply_empty(struct api_req *r, unsigned int status);

/* Answer out's bytes as they are, with Content-Type ctype. */
void api_reply_text(struct api_req *r, unsigned int status, const char *ctype,
		    const char *data, size_t len);

/* Set r's deferred log line (logged at info level after the commit). */
void api_note(struct api_req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The time now in wall seconds, as the store keeps it, on the steady clock
 * (pg_time_steady_ms(): leases are stored as wall times). */
int64_t api_now_s(void);

/* A condition variable on CLOCK_MONOTONIC (0 or -1), and the absolute
 * time ms from now on that clock for pthread_cond_timedwait(). */
int api_cond_init(pthread_cond_t *c);
struct timespec api_abstime(int64_t ms);

/* ---- the read connections (api_server.c) ----------------------------- */

/* Take a read connection, waiting up to API_POOL_WAIT_MS; NULL when none
 * came. */
struct store *api_pool_get(struct api_pool *pool);
void api_pool_put(struct api_pool *pool, struct store *st);

/* ---- the writer (api_worker.c) ---------------------------------------- */

int api_worker_start(struct api_worker *w, struct api_server *srv, struct pg_err *err);

/* Hand r over: suspend its connection and queue it (r->state becomes
 * API_REQ_QUEUED) and return true; when the writer has stopped, answer
 * 503 instead and return false.  Called from the access handler, on r's
 * HTTP thread, which must not look at r again after true until the
 * connection is resumed: the writer owns it, and may have answered it
 * already. */
bool api_worker_push(struct api_worker *w, struct api_req *r);

/* Set the flags and wake the thread. */
void api_worker_wake(struct api_worker *w);
void api_worker_drain(struct api_worker *w);

/* Finish the queue, answer what is parked with 503, join the thread and
 * close its store.  Safe on a worker that never started. */
void api_worker_stop(struct api_worker *w);

/* With the queue's lock held: suspend r's connection when suspend (before
 * the queue's thread can see r, so that the resume follows), mark r
 * API_REQ_QUEUED and append it to head/tail.  The writer's queue and the
 * log appenders' (api_logs.c). */
void api_req_enqueue(struct api_req **head, struct api_req **tail, struct api_req *r,
		     bool suspend);

/* api_worker_push() for a request whose connection is suspended already
 * (the log appender's, api_logs.c); when the writer has stopped, answers
 * 503 and resumes it. */
void api_worker_take(struct api_worker *w, struct api_req *r);

/* r is answered: mark it done and resume its connection (writer only). */
void api_worker_done(struct api_req *r);

/* r is answered: resume it now, or, while a batch is open, once the batch
 * has committed (writer only). */
void api_worker_answered(struct api_worker *w, struct api_req *r);

/* ---- log chunks (api_logs.c) ----------------------------------------- */

/* Open each lane's store connection and start its thread. */
int api_logs_start(struct api_logs *l, struct api_server *srv, struct pg_err *err);

/* Hand a log chunk (its query parsed into r->op, its body in r->body) to
 * the appender, as api_worker_push() hands a request to the writer: true
 * when queued (the appender owns r until its connection is resumed),
 * false when answered 503 because the appender has stopped.  The appender
 * appends the chunk to its file, then passes r on to the writer
 * (api_worker_take()) or answers the error itself. */
bool api_logs_push(struct api_logs *l, struct api_req *r);

/* A lease of job's attempt to agent was committed: have the attempt's lane
 * make its log directory in the background, so that the first chunk of
 * each of its logs only creates its file, and note agent as its owner.
 * Best effort: dropped when the lane's queue is full or stopping (the
 * first chunk then makes the directory, and asks the store). */
void api_logs_prepare(struct api_logs *l, int64_t job, int64_t attempt, int64_t agent);

/* Finish the queues (handing them to the writer, which must still run),
 * join the threads, close their stores.  Safe on lanes that never
 * started (zeroed). */
void api_logs_stop(struct api_logs *l);

/* ---- agent endpoints (api_agent.c) ------------------------------------ */

/* The attempt must exist and be agent_id's: 0, or -1 with err set
 * (PG_ENOTFOUND for an unknown job, PG_ECONFLICT otherwise).  On any of
 * the caller's store connections (the appenders check on theirs). */
int api_own_attempt(struct store *st, int64_t agent_id, int64_t job_id, int64_t attempt,
		    struct pg_err *err);

/* A log chunk's path under data_dir, "logs/JOB/ATTEMPT/STAGE.log", into
 * rel; api_log_dir_rel() the directory of an attempt's logs,
 * "logs/JOB/ATTEMPT". */
int api_log_rel(const struct api_req *r, struct pg_buf *rel, struct pg_err *err);
int api_log_dir_rel(int64_t job, int64_t attempt, struct pg_buf *rel, struct pg_err *err);

/* Parse and validate a body into op (op is zeroed first; release it with
 * api_op_release() in any case).  Empty bodies read as {}.  Errors are
 * PG_EINVAL naming the field, e.g. "field 'samples[2]': field 'value':
 * expected a number, got a string".  Pure. */
int api_parse_register(const char *body, size_t len, struct api_op *op, struct pg_err *err);
int api_parse_lease(const char *body, size_t len, struct api_op *op, struct pg_err *err);
int api_parse_heartbeat(const char *body, size_t len, struct api_op *op, struct pg_err *err);
int api_parse_result(const char *body, size_t len, struct api_op *op, struct pg_err *err);

/* The query of POST .../logs: attempt and stage required, offset
 * optional (NULL when absent).  Pure. */
int api_parse_logs_query(const char *attempt, const char *stage, const char *offset,
			 struct api_op *op, struct pg_err *err);

/* Try to lease a job to r's agent inside the writer's open transaction:
 * 1 when r is answered with a job, 0 when nothing could be leased
 * (r->held_job says why), -1 when r is answered with an error and the
 * caller must roll back what the attempt changed. */
int api_lease_try(struct api_worker *w, struct api_req *r, int64_t now);

/* Run register, heartbeat, logs or result inside the writer's open
 * transaction; sets r's answer (the caller resumes it).  Returns 0, or -1
 * when r was answered with an error and the caller must roll back. */
int api_agent_run(struct api_worker *w, struct api_req *r, int64_t now);

/* ---- admin endpoints (api_admin.c) ------------------------------------ */

/* Pure, like api_parse_register(); recheck checks the contexts against
 * ps and stores "a,b" (all of ps' contexts when none are named). */
int api_parse_recheck(const char *body, size_t len, const struct profile_set *ps,
		      struct api_op *op, struct pg_err *err);
int api_parse_cancel(const char *body, size_t len, struct api_op *op, struct pg_err *err);

void api_admin_run(struct api_worker *w, struct api_req *r, int64_t now);

/* ---- read endpoints (api_read.c) -------------------------------------- */

/* Run a GET endpoint on read connection st; answers r. */
void api_read_run(struct api_server *srv, struct store *st, struct api_req *r);

/* Append the mbox of series_id's patches to out (see the README): 0, or
 * -1 (PG_ENOTFOUND for an unknown series). */
int api_series_mbox(struct store *st, int64_t series_id, struct pg_buf *out,
		    struct pg_err *err);

/* Append one message to an mbox: the separator line, then the message
 * with an mbox From_ line of its own dropped, lines matching ^>*From 
 * quoted with one more '>' (mboxrd), CRLF kept as is, and a final newline
 * added when missing, then a blank line.  Pure. */
int api_mbox_add(struct pg_buf *out, const char *msg, size_t len);

/* ---- request bodies (api_body.c) ------------------------------------- */

/* Clear op (progress and offset -1); api_op_release() also frees. */
void api_op_reset(struct api_op *op);
void api_op_release(struct api_op *op);

/* Parse a body as a JSON object (empty: {}) into *doc. */
int api_parse_object(const char *body, size_t len, cJSON **doc, struct pg_err *err);

/* pg_json_get_string() of an optional member, where null means absent. */
int api_get_string_or_null(const cJSON *o, const char *key, const char **out,
			   struct pg_err *err);

#endif
