/* SPDX-License-Identifier: MIT */
/*
 * The API's writer thread: the one place where requests change the store
 * (see api.h).  HTTP threads queue validated requests with their
 * connections suspended; this thread runs them on its own store
 * connection, answers them and resumes their connections.
 *
 * Batches.  A durable COMMIT waits for an fsync of the WAL, which costs
 * milliseconds on a real disk (5 ms typical on the bench machine, 50 ms
 * at worst), so one transaction per request capped the API at a few
 * hundred writes a second.  The agent endpoints (register, lease,
 * heartbeat, logs, result) that are queued together therefore run in ONE
 * transaction, up to API_BATCH_MAX of them: BEGIN IMMEDIATE, each request
 * under a savepoint of its own (one that fails rolls back only its own
 * changes and gets its error), one COMMIT.  Requests of one batch see each
 * other's changes in order, as they would one transaction after another.
 * When the COMMIT fails, or SQLite rolls the transaction back on its own
 * (an I/O error, a full disk), every request of the batch is answered
 * with that error instead, and nothing of it happened.  Admin endpoints
 * (recheck, cancel) run in transactions of their own, between batches.
 *
 * Durability.  The writer's connection commits with synchronous=NORMAL,
 * which in WAL mode is atomic and survives a crash of the process, but
 * not yet a power loss; the syncer thread then fdatasync()s the WAL file
 * and only after that resumes the connections, writes the log lines and
 * counts the metrics of what the commit answered.  So an answer still
 * never claims a lease, a renewal or a result that is not on disk, exactly
 * as with synchronous=FULL, but the writer runs the next batch while the
 * disk syncs the last one, and one sync covers every commit before it
 * (the WAL is written in order).  Readers on other connections may see a
 * commit a few milliseconds before it is on disk; whatever they make of
 * it durably (a FULL commit of the planner or the outbox) syncs the WAL
 * up to and including it.  When the sync fails, the answers become 503.
 *
 * Heartbeats and logs.  Their answers go out as soon as their batch has
 * committed, without waiting for the sync.  A renewal that a power loss
 * takes back only shortens a lease, which the controller forgives after a
 * restart anyway (the first sweep waits a lease time: sched.h), while on a
 * disk whose syncs stall for 100 ms and more, agents renewing every few
 * seconds were what waited (p99 116 ms and 728 ms at 5,000 requests/s,
 * all of it heartbeats).  A log chunk's bytes are in its file before the
 * writer sees it (the appender thread writes them: api_logs.c), the file
 * is not synced, and the next chunk's offset is checked against the file,
 * not the row: waiting for the row's sync made no log safer.  Nothing else
 * changes: their changes are in the same WAL and the next sync covers
 * them; a lease, a result, a registration or an admin change, in the same
 * batch or not, still waits for the sync, and no more than before.  A
 * process crash (kill -9) loses nothing of a committed batch in any case:
 * the WAL is in the kernel's page cache.
 *
 * Checkpoints.  SQLite copies the WAL back into the database file
 * (a checkpoint) in whichever connection commits once the WAL is over
 * 1000 pages: at thousands of small commits a second that was the writer,
 * every 100 ms or so, for about 10 ms each time, and every request behind
 * it waited.  The writer's connection has automatic checkpoints off; the
 * checkpointer thread runs a passive checkpoint on a connection of its
 * own every API_CHECKPOINT_MS, beside the writer (WAL lets them overlap).
 *
 * Leases that find nothing are parked here, oldest first.  They look
 * again when jobs were queued (api_jobs_queued()), when this thread did
 * something that may free a job (a result, a cancellation, new labels),
 * or, checked every API_RETRY_MS, when another connection changed the
 * store (PRAGMA data_version: the planner, the expiry sweep, an operator's
 * sqlite3).  A look first asks whether any job is queued at all, so that
 * a thousand parked agents cost one query while the queue is empty; the
 * look is a batch too.  A parked lease ends with 204 at its deadline,
 * when its agent polls again (a new poll replaces the old), when its
 * client hung up, or with 503 when the server stops.
 */
#include "api_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fmt.h"
#include "log.h"
#include "thread.h"
#include "timeutil.h"

void api_worker_done(struct api_req *r)
{
	r->resumed_us = pg_time_mono_us();
	r->state = API_REQ_DONE;
	MHD_resume_connection(r->conn);
}

void api_worker_answered(struct api_worker *w, struct api_req *r)
{
	if (!w->in_tx) {
		api_worker_done(r);
		return;
	}
	r->next = NULL;
	if (w->done_tail)
		w->done_tail->next = r;
	else
		w->done = r;
	w->done_tail = r;
}

/* ---- batches --------------------------------------------------------- */

static int api_batch_begin(struct api_worker *w, struct pg_err *err)
{
	if (store_begin(w->st, err) < 0) {
		pg_err_prefix(err, "begin a batch");
		return -1;
	}
	w->in_tx = true;
	w->n_batch = 0;
	return 0;
}

/* Resume the requests of list (linked by next): with cause, those whose
 * answers depended on a commit get cause instead; without, their log
 * lines and metrics go out. */
static void api_resume_list(struct api_worker *w, struct api_req *list,
			    const struct pg_err *cause)
{
	struct api_req *r, *next;

	for (r = list; r; r = next) {
		next = r->next;
		r->next = NULL;
		if (cause && r->in_batch) {
			r->count_lease = false;
			r->count_result = -1;
			pg_buf_reset(&r->note);
			r->held_job = 0;
			api_reply_error(r, api_status_for(cause->code), "%s", cause->msg);
		}
		if (r->note.len)
			pg_log_info("api", "%s", pg_buf_str(&r->note));
		if (r->count_lease)
			api_metrics_lease(&w->srv->metrics);
		if (r->count_result >= 0)
			api_metrics_result(&w->srv->metrics, (enum api_result_count)r->count_result);
		r->in_batch = false;
		api_worker_done(r);
	}
}

/* Hand list (answered, committed) to the syncer. */
static void api_sync_push(struct api_worker *w, struct api_req *head, struct api_req *tail)
{
	if (!head)
		return;
	pthread_mutex_lock(&w->sync_lock);
	if (w->sync_tail)
		w->sync_tail->next = head;
	else
		w->sync_head = head;
	w->sync_tail = tail;
	pthread_cond_signal(&w->sync_cond);
	pthread_mutex_unlock(&w->sync_lock);
}

/* Whether r's answer may go out before its commit is on disk: a
 * heartbeat's or a log chunk's (see "Heartbeats and logs" above). */
static bool api_answer_before_sync(const struct api_req *r)
{
	return r->route.ep == API_EP_JOB_HEARTBEAT || r->route.ep == API_EP_JOB_LOGS;
}

/* r's batch (or transaction) committed at now_us: the end of its writer
 * stage, unless it was a lease that waited for a job (that wait is not
 * the writer's). */
static void api_committed(struct api_worker *w, struct api_req *r, int64_t now_us)
{
	r->committed_us = now_us;
	if (r->queued_us && !r->was_parked)
		api_metrics_stage(&w->srv->metrics, API_STAGE_WRITER,
				  (double)(now_us - r->queued_us) / 1e6);
}

/* The batch is over: lost (cause), its answers go out now; committed,
 * the heartbeats' go out now and the others' go to the syncer. */
static void api_batch_finish(struct api_worker *w, const struct pg_err *cause)
{
	struct api_req *r, *next, *now = NULL, *now_tail = NULL, *wait = NULL, *wait_tail = NULL;

	w->in_tx = false;
	if (cause) {
		api_resume_list(w, w->done, cause);
	} else {
		int64_t now_us = pg_time_mono_us();

		for (r = w->done; r; r = next) {
			struct api_req **head = api_answer_before_sync(r) ? &now : &wait;
			struct api_req **tail = head == &now ? &now_tail : &wait_tail;

			api_committed(w, r, now_us);
			next = r->next;
			r->next = NULL;
			if (*tail)
				(*tail)->next = r;
			else
				*head = r;
			*tail = r;
		}
		api_resume_list(w, now, NULL);
		api_sync_push(w, wait, wait_tail);
	}
	w->done = w->done_tail = NULL;
	w->n_batch = 0;
}

/* Make every commit so far durable: the WAL's data on disk. */
static int api_sync_wal(struct api_worker *w, struct pg_err *err)
{
	int fd = open(w->wal_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return pg_err_errno(err, "open %s to sync it", w->wal_path);
	if (fdatasync(fd) < 0) {
		pg_err_errno(err, "sync %s", w->wal_path);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static void *api_syncer_main(void *arg)
{
	struct api_worker *w = arg;

	pg_thread_name("api-syncer");
	pthread_mutex_lock(&w->sync_lock);
	for (;;) {
		struct pg_err err = PG_ERR_INIT;
		struct api_req *list;
		int64_t t0, t1;
		bool failed;

		while (!w->sync_head && !w->sync_quit)
			pthread_cond_wait(&w->sync_cond, &w->sync_lock);
		if (!w->sync_head)
			break;
		list = w->sync_head;
		w->sync_head = w->sync_tail = NULL;
		pthread_mutex_unlock(&w->sync_lock);
		/* What came in while this syncs waits for the next one:
		 * commits queue up behind a slow disk and share its sync. */
		t0 = pg_time_mono_us();
		failed = api_sync_wal(w, &err) < 0;
		t1 = pg_time_mono_us();
		api_metrics_wal_sync(&w->srv->metrics, (double)(t1 - t0) / 1e6);
		for (struct api_req *r = list; r; r = r->next)
			if (r->committed_us)
				api_metrics_stage(&w->srv->metrics, API_STAGE_SYNC,
						  (double)(t1 - r->committed_us) / 1e6);
		if (failed) {
			pg_err_prefix(&err, "store changes not known to be on disk");
			store_io_failed(err.msg);	/* a daemon stops here (store.h) */
			pg_log_error("api", "%s", err.msg);
			err.code = PG_ETIMEOUT;	/* 503: try again */
		}
		api_resume_list(w, list, failed ? &err : NULL);
		pthread_mutex_lock(&w->sync_lock);
	}
	pthread_mutex_unlock(&w->sync_lock);
	return NULL;
}

/* The transaction is gone (or must go): nothing of the batch happened. */
static void api_batch_lost(struct api_worker *w, struct pg_err *cause)
{
	pg_err_prefix(cause, "store write of %zu requests undone", w->n_batch);
	pg_log_error("api", "%s", cause->msg);
	store_rollback(w->st);
	api_batch_finish(w, cause);
}

/* Commit the open batch (if any) and answer its requests. */
static void api_batch_end(struct api_worker *w)
{
	struct pg_err err = PG_ERR_INIT;

	if (!w->in_tx)
		return;
	if (store_commit(w->st, &err) < 0) {
		api_batch_lost(w, &err);
		return;
	}
	api_batch_finish(w, NULL);
}

static void *api_ckpt_main(void *arg)
{
	struct api_worker *w = arg;
	sqlite3 *db = store_db(w->ckpt_st);

	pg_thread_name("api-checkpoint");
	pthread_mutex_lock(&w->sync_lock);
	while (!w->ckpt_quit) {
		struct timespec until = api_abstime(API_CHECKPOINT_MS);
		int rc;

		pthread_cond_timedwait(&w->ckpt_cond, &w->sync_lock, &until);
		if (w->ckpt_quit)
			break;
		pthread_mutex_unlock(&w->sync_lock);
		/* PASSIVE: copies what no reader still needs, never waits;
		 * BUSY means another connection is checkpointing. */
		rc = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
			char msg[PG_ERR_MSG_MAX];

			pg_fmt_cut(msg, sizeof(msg), "checkpoint of %s: %s", store_path(w->ckpt_st),
				   sqlite3_errmsg(db));
			if (store_io_lost(rc))
				store_io_failed(msg);
			pg_log_warn("api", "%s", msg);
		}
		pthread_mutex_lock(&w->sync_lock);
	}
	pthread_mutex_unlock(&w->sync_lock);
	return NULL;
}

/* ---- parked leases ----------------------------------------------------- */

static void api_park(struct api_worker *w, struct api_req *r)
{
	r->was_parked = true;
	r->next = NULL;
	r->prev = w->parked_tail;
	if (w->parked_tail)
		w->parked_tail->next = r;
	else
		w->parked = r;
	w->parked_tail = r;
	w->n_parked++;
}

static void api_unpark(struct api_worker *w, struct api_req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		w->parked = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		w->parked_tail = r->prev;
	r->next = r->prev = NULL;
	w->n_parked--;
}

/* End a parked lease with an empty answer (204) or an error. */
static void api_unpark_answer(struct api_worker *w, struct api_req *r, unsigned int status)
{
	api_unpark(w, r);
	if (status == 204)
		api_reply_empty(r, 204);
	else
		api_reply_error(r, status, "the controller is shutting down");
	api_worker_answered(w, r);
}

/* Whether the client of a parked request is still there: a peer that
 * closed its end reads as end of file.  A lease handed to a dead socket
 * would wait for its expiry before another agent could have the job. */
static bool api_conn_alive(struct api_req *r)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	char c;
	ssize_t n;

	if (!ci)
		return true;
	n = recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n > 0)
		return true;
	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

/* Did another connection commit since the last call? */
static bool api_store_changed(struct api_worker *w)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t v = 0;

	if (store_query_int(w->st, "read data_version", "PRAGMA data_version", NULL, 0, &v,
			    &err) < 0) {
		pg_log_warn("api", "%s", err.msg);
		return true;
	}
	if (v == w->data_version)
		return false;
	w->data_version = v;
	return true;
}

/* Answer the parked leases whose wait is over; returns the earliest
 * deadline left (INT64_MAX when none). */
static int64_t api_expire_parked(struct api_worker *w, int64_t now_ms)
{
	struct api_req *r, *next;
	int64_t first = INT64_MAX;

	for (r = w->parked; r; r = next) {
		next = r->next;
		if (r->deadline_ms <= now_ms)
			api_unpark_answer(w, r, 204);
		else if (r->deadline_ms < first)
			first = r->deadline_ms;
	}
	return first;
}

/* ---- running requests ------------------------------------------------ */

/* Note that an agent was seen, at most every API_SEEN_INTERVAL_S per
 * agent: no need to rewrite its row for every heartbeat. */
static void api_worker_seen(struct api_worker *w, int64_t agent_id, int64_t now)
{
	struct pg_err err = PG_ERR_INIT;
	size_t slot = (size_t)agent_id % API_SEEN_SLOTS;

	if (w->seen[slot].id == agent_id && now - w->seen[slot].at < API_SEEN_INTERVAL_S)
		return;
	if (sched_agent_seen(w->st, agent_id, now, &err) < 0) {
		pg_log_warn("api", "note agent %lld seen: %s", (long long)agent_id, err.msg);
		return;
	}
	w->seen[slot].id = agent_id;
	w->seen[slot].at = now;
}

/* A lease: answered (a job, an error, 204) or parked.  Returns what
 * api_lease_try() returned. */
static int api_worker_lease(struct api_worker *w, struct api_req *r, int64_t now, bool drain)
{
	struct api_req *p, *next;
	int rc = api_lease_try(w, r, now);

	if (rc != 0) {
		api_worker_answered(w, r);
		return rc;
	}
	if (r->op.wait_s == 0 || drain) {
		api_reply_empty(r, 204);
		api_worker_answered(w, r);
		return 0;
	}
	/* An agent polls on one connection at a time: an older poll of the
	 * same agent is one it gave up on (it restarted, or timed out). */
	for (p = w->parked; p; p = next) {
		next = p->next;
		if (p->agent_id == r->agent_id)
			api_unpark_answer(w, p, 204);
	}
	r->deadline_ms = r->start_us / 1000 + r->op.wait_s * 1000;
	/* Parked, it claims nothing: a lost batch does not concern it. */
	r->in_batch = false;
	api_park(w, r);
	return 0;
}

/*
 * Run agent request r in the batch, opening one when none is open: under
 * a savepoint, rolled back to when r fails.  retry: r is a parked lease
 * looking again (it stays parked when nothing is found).  Returns 1 when
 * r is answered (or will be at the batch's end), 0 when it is parked, -1
 * when no batch could be opened for a parked lease (it stays parked).
 */
static int api_batch_step(struct api_worker *w, struct api_req *r, bool drain, bool retry)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t now = api_now_s();
	bool ran = false;
	int rc = 0;

	if (!w->in_tx) {
		/* A store locked by another writer past the busy timeout:
		 * the rest of this round gets the same answer at once. */
		if (!w->begin_failed && api_batch_begin(w, &w->begin_err) < 0)
			w->begin_failed = true;
		if (w->begin_failed) {
			if (retry)
				return -1;
			api_reply_err(r, &w->begin_err);
			api_worker_done(r);
			return 1;
		}
	}
	w->n_batch++;
	if (!retry && r->agent_id && r->route.ep != API_EP_REGISTER)
		api_worker_seen(w, r->agent_id, now);
	/* A SAVEPOINT outside a transaction would open one: look first. */
	if (!store_in_tx(w->st)) {
		pg_err_set(&err, PG_EDB, "the store rolled the transaction back");
		goto lost;
	}
	if (store_savepoint(w->st, &err) < 0)
		goto lost;
	ran = true;
	r->in_batch = true;
	if (retry) {
		rc = api_lease_try(w, r, now);
		if (rc == 0)
			r->in_batch = false;
	} else if (r->route.ep == API_EP_LEASE) {
		rc = api_worker_lease(w, r, now, drain);
	} else {
		rc = api_agent_run(w, r, now);
		api_worker_answered(w, r);
	}
	if ((rc < 0 ? store_rollback_to(w->st, &err) : store_release(w->st, &err)) < 0)
		goto lost;
	if (retry && rc != 0) {
		api_unpark(w, r);
		api_worker_answered(w, r);
	}
	/* A result may requeue its job, new labels may match other jobs: the
	 * parked leases look again. */
	if (r->route.ep == API_EP_JOB_RESULT || r->route.ep == API_EP_REGISTER)
		w->dirty = true;
	if (w->n_batch >= API_BATCH_MAX)
		api_batch_end(w);
	return retry && rc == 0 ? 0 : 1;
lost:
	/* What r answered is on the done list and gets the error there; a
	 * request that did not run, or a parked lease that found a job, is
	 * put there.  A lease that parked claims nothing and stays. */
	if (retry ? !ran || rc != 0 : !ran) {
		if (retry)
			api_unpark(w, r);
		r->in_batch = true;
		api_worker_answered(w, r);
	}
	api_batch_lost(w, &err);
	return retry && ran && rc == 0 ? 0 : 1;
}

/* Offer the queued jobs to the parked leases, oldest first, in a batch. */
static void api_retry_parked(struct api_worker *w)
{
	struct pg_err err = PG_ERR_INIT;
	struct api_req *r, *next;
	int64_t any = 1;

	if (store_query_int(w->st, "look for queued jobs",
			    "SELECT EXISTS (SELECT 1 FROM jobs WHERE state = 'queued'"
			    " AND priority >= 0)", NULL, 0, &any, &err) < 0)
		pg_log_warn("api", "%s", err.msg);
	if (!any)
		return;
	for (r = w->parked; r; r = next) {
		next = r->next;
		if (!api_conn_alive(r)) {
			api_unpark_answer(w, r, 204);
			continue;
		}
		if (api_batch_step(w, r, false, true) < 0) {
			pg_log_warn("api", "parked leases: %s", w->begin_err.msg);
			break;
		}
	}
}

/* An admin request, in a transaction of its own. */
static void api_worker_admin(struct api_worker *w, struct api_req *r)
{
	api_batch_end(w);
	switch (r->route.ep) {
	case API_EP_SERIES_RECHECK:
	case API_EP_JOB_CANCEL:
		api_admin_run(w, r, api_now_s());
		break;
	default:
		api_reply_error(r, 500, "no writer for %s", api_route_name(r->route.ep));
		break;
	}
	/* A cancellation frees its agent: the parked leases look again. */
	if (r->route.ep == API_EP_JOB_CANCEL)
		w->dirty = true;
	/* Its transaction committed without a sync too: its answer waits
	 * for one, and becomes the error if the sync fails. */
	api_committed(w, r, pg_time_mono_us());
	r->in_batch = true;
	r->next = NULL;
	api_sync_push(w, r, r);
}

static bool api_batchable(enum api_ep ep)
{
	return ep == API_EP_LEASE || ep == API_EP_REGISTER || ep == API_EP_JOB_HEARTBEAT ||
	       ep == API_EP_JOB_LOGS || ep == API_EP_JOB_RESULT;
}

static void *api_worker_main(void *arg)
{
	struct api_worker *w = arg;
	int64_t next_look = pg_time_mono_ms() + API_RETRY_MS;
	int64_t first_deadline = INT64_MAX;
	bool quit = false;

	pg_thread_name("api-writer");
	pthread_mutex_lock(&w->lock);
	while (!quit) {
		struct api_req *batch, *r, *next;
		bool wake, drain;

		for (;;) {
			int64_t now = pg_time_mono_ms();
			int64_t until = first_deadline < next_look ? first_deadline : next_look;
			struct timespec ts;

			if (w->head || w->quit || w->wake || (w->drain && w->parked) || now >= until)
				break;
			ts = api_abstime(until - now);
			pthread_cond_timedwait(&w->cond, &w->lock, &ts);
		}
		batch = w->head;
		w->head = w->tail = NULL;
		wake = w->wake;
		w->wake = false;
		drain = w->drain;
		pthread_mutex_unlock(&w->lock);
		w->begin_failed = false;

		for (r = batch; r; r = next) {
			next = r->next;
			r->next = NULL;
			if (api_batchable(r->route.ep))
				api_batch_step(w, r, drain, false);
			else
				api_worker_admin(w, r);
		}
		if (drain) {
			api_batch_end(w);
			while (w->parked)
				api_unpark_answer(w, w->parked, 503);
		} else {
			int64_t now_ms = pg_time_mono_ms();

			if (now_ms >= next_look) {
				next_look = now_ms + API_RETRY_MS;
				if (w->parked && api_store_changed(w))
					w->dirty = true;
			}
			if (w->parked && (wake || w->dirty))
				api_retry_parked(w);
			w->dirty = false;
			api_batch_end(w);
		}
		first_deadline = api_expire_parked(w, pg_time_mono_ms());
		api_metrics_waiting(&w->srv->metrics, (int64_t)w->n_parked);

		pthread_mutex_lock(&w->lock);
		quit = w->quit && !w->head;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* ---- life cycle ----------------------------------------------------------- */

int api_worker_start(struct api_worker *w, struct api_server *srv, struct pg_err *err)
{
	int64_t v = 0;

	const char *wal;

	memset(w, 0, sizeof(*w));
	w->srv = srv;
	if (pthread_mutex_init(&w->lock, NULL) != 0)
		return pg_err_set(err, PG_EIO, "api: cannot make a mutex");
	if (api_cond_init(&w->cond) < 0) {
		pthread_mutex_destroy(&w->lock);
		return pg_err_set(err, PG_EIO, "api: cannot make a condition variable");
	}
	if (pthread_mutex_init(&w->sync_lock, NULL) != 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		return pg_err_set(err, PG_EIO, "api: cannot make a mutex");
	}
	if (pthread_cond_init(&w->sync_cond, NULL) != 0) {
		pthread_mutex_destroy(&w->sync_lock);
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		return pg_err_set(err, PG_EIO, "api: cannot make a condition variable");
	}
	if (api_cond_init(&w->ckpt_cond) < 0) {
		pthread_cond_destroy(&w->sync_cond);
		pthread_mutex_destroy(&w->sync_lock);
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		return pg_err_set(err, PG_EIO, "api: cannot make a condition variable");
	}
	w->inited = true;
	/* NORMAL: the syncer makes the commits durable before anyone hears
	 * of them; no automatic checkpoints: the checkpointer's (see the top
	 * of this file). */
	if (store_open(&w->st, srv->cfg->db, err) < 0 ||
	    store_exec(w->st, "PRAGMA synchronous = NORMAL", "set synchronous=NORMAL", err) < 0 ||
	    store_exec(w->st, "PRAGMA wal_autocheckpoint = 0", "turn automatic checkpoints off",
		       err) < 0 ||
	    store_open(&w->ckpt_st, srv->cfg->db, err) < 0 ||
	    store_query_int(w->st, "read data_version", "PRAGMA data_version", NULL, 0, &v,
			    err) < 0) {
		pg_err_prefix(err, "api: writer");
		return -1;
	}
	w->data_version = v;
	wal = sqlite3_filename_wal(sqlite3_db_filename(store_db(w->st), "main"));
	w->wal_path = wal && *wal ? strdup(wal) : NULL;
	if (!w->wal_path)
		return pg_err_set(err, PG_ENOMEM, "api: writer: no WAL file name");
	if (pthread_create(&w->sync_thread, NULL, api_syncer_main, w) != 0)
		return pg_err_set(err, PG_EIO, "api: cannot start the syncer thread");
	w->sync_started = true;
	if (pthread_create(&w->ckpt_thread, NULL, api_ckpt_main, w) != 0)
		return pg_err_set(err, PG_EIO, "api: cannot start the checkpointer thread");
	w->ckpt_started = true;
	if (pthread_create(&w->thread, NULL, api_worker_main, w) != 0)
		return pg_err_set(err, PG_EIO, "api: cannot start the writer thread");
	w->started = true;
	return 0;
}

void api_req_enqueue(struct api_req **head, struct api_req **tail, struct api_req *r,
		     bool suspend)
{
	/* Suspended before the queue's thread can see it, so that its
	 * resume always follows the suspension. */
	if (suspend)
		MHD_suspend_connection(r->conn);
	r->state = API_REQ_QUEUED;
	r->next = NULL;
	if (*tail)
		(*tail)->next = r;
	else
		*head = r;
	*tail = r;
}

/* Queue r (suspending its connection when suspend); false when the writer
 * has stopped (r answered 503, not resumed). */
static bool api_worker_queue(struct api_worker *w, struct api_req *r, bool suspend)
{
	pthread_mutex_lock(&w->lock);
	if (!w->started || w->quit) {
		pthread_mutex_unlock(&w->lock);
		api_reply_error(r, 503, "the controller is shutting down");
		return false;
	}
	r->queued_us = pg_time_mono_us();
	api_req_enqueue(&w->head, &w->tail, r, suspend);
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return true;
}

bool api_worker_push(struct api_worker *w, struct api_req *r)
{
	return api_worker_queue(w, r, true);
}

void api_worker_take(struct api_worker *w, struct api_req *r)
{
	if (!api_worker_queue(w, r, false))
		api_worker_done(r);
}

static void api_worker_flag(struct api_worker *w, bool *flag)
{
	if (!w->inited)
		return;
	pthread_mutex_lock(&w->lock);
	*flag = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

void api_worker_wake(struct api_worker *w)
{
	api_worker_flag(w, &w->wake);
}

void api_worker_drain(struct api_worker *w)
{
	api_worker_flag(w, &w->drain);
}

void api_worker_stop(struct api_worker *w)
{
	if (!w->inited)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->lock);
		w->quit = true;
		w->drain = true;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		w->started = false;
	}
	/* After the writer: what it committed last is synced and resumed
	 * before the thread ends. */
	if (w->sync_started) {
		pthread_mutex_lock(&w->sync_lock);
		w->sync_quit = true;
		pthread_cond_signal(&w->sync_cond);
		pthread_mutex_unlock(&w->sync_lock);
		pthread_join(w->sync_thread, NULL);
		w->sync_started = false;
	}
	if (w->ckpt_started) {
		pthread_mutex_lock(&w->sync_lock);
		w->ckpt_quit = true;
		pthread_cond_signal(&w->ckpt_cond);
		pthread_mutex_unlock(&w->sync_lock);
		pthread_join(w->ckpt_thread, NULL);
		w->ckpt_started = false;
	}
	store_close(w->ckpt_st);
	w->ckpt_st = NULL;
	store_close(w->st);
	w->st = NULL;
	free(w->wal_path);
	w->wal_path = NULL;
	pthread_cond_destroy(&w->ckpt_cond);
	pthread_cond_destroy(&w->sync_cond);
	pthread_mutex_destroy(&w->sync_lock);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	w->inited = false;
}
