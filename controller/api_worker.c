/* SPDX-License-Identifier: MIT */
/*
 * The API's writer thread: the one place where requests change the store
 * (see api.h).  HTTP threads queue validated requests with their
 * connections suspended; this thread runs them one after the other on its
 * own store connection, answers them and resumes their connections.
 *
 * Leases that find nothing are parked here, oldest first.  They look
 * again when jobs were queued (api_jobs_queued()), when this thread did
 * something that may free a job (a result, a cancellation, new labels),
 * or, checked every API_RETRY_MS, when another connection changed the
 * store (PRAGMA data_version: the planner, the expiry sweep, an operator's
 * sqlite3).  A look first asks whether any job is queued at all, so that
 * a thousand parked agents cost one query while the queue is empty.  A
 * parked lease ends with 204 at its deadline, when its agent polls again
 * (a new poll replaces the old), when its client hung up, or with 503 when
 * the server stops.
 */
#include "api_int.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "time.h"

void api_worker_done(struct api_req *r)
{
	r->state = API_REQ_DONE;
	MHD_resume_connection(r->conn);
}

/* ---- parked leases ----------------------------------------------------- */

static void api_park(struct api_worker *w, struct api_req *r)
{
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
	api_worker_done(r);
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

/* Offer the queued jobs to the parked leases, oldest first. */
static void api_retry_parked(struct api_worker *w)
{
	struct pg_err err = PG_ERR_INIT;
	struct api_req *r, *next;
	int64_t any = 1, now = api_now_s();

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
		if (api_lease_try(w, r, now)) {
			api_unpark(w, r);
			api_worker_done(r);
		}
	}
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
 * agent: a write per request would cost a commit each. */
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

static void api_worker_lease(struct api_worker *w, struct api_req *r, int64_t now, bool drain)
{
	struct api_req *p, *next;

	if (api_lease_try(w, r, now)) {
		api_worker_done(r);
		return;
	}
	if (r->op.wait_s == 0 || drain) {
		api_reply_empty(r, 204);
		api_worker_done(r);
		return;
	}
	/* An agent polls on one connection at a time: an older poll of the
	 * same agent is one it gave up on (it restarted, or timed out). */
	for (p = w->parked; p; p = next) {
		next = p->next;
		if (p->agent_id == r->agent_id)
			api_unpark_answer(w, p, 204);
	}
	r->deadline_ms = r->start_us / 1000 + r->op.wait_s * 1000;
	api_park(w, r);
}

static void api_worker_run(struct api_worker *w, struct api_req *r, bool drain)
{
	int64_t now = api_now_s();

	if (r->agent_id && r->route.ep != API_EP_REGISTER)
		api_worker_seen(w, r->agent_id, now);
	switch (r->route.ep) {
	case API_EP_LEASE:
		api_worker_lease(w, r, now, drain);
		return;
	case API_EP_REGISTER:
	case API_EP_JOB_HEARTBEAT:
	case API_EP_JOB_LOGS:
	case API_EP_JOB_RESULT:
		api_agent_run(w, r, now);
		break;
	case API_EP_SERIES_RECHECK:
	case API_EP_JOB_CANCEL:
		api_admin_run(w, r, now);
		break;
	default:
		api_reply_error(r, 500, "no writer for %s", api_route_name(r->route.ep));
		break;
	}
	/* A result may requeue its job, a cancellation frees its agent, new
	 * labels may match other jobs: the parked leases look again. */
	if (r->route.ep == API_EP_JOB_RESULT || r->route.ep == API_EP_JOB_CANCEL ||
	    r->route.ep == API_EP_REGISTER)
		w->dirty = true;
	api_worker_done(r);
}

static void *api_worker_main(void *arg)
{
	struct api_worker *w = arg;
	int64_t next_look = pg_time_mono_ms() + API_RETRY_MS;
	int64_t first_deadline = INT64_MAX;
	bool quit = false;

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

		for (r = batch; r; r = next) {
			next = r->next;
			r->next = NULL;
			api_worker_run(w, r, drain);
		}
		if (drain) {
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

	memset(w, 0, sizeof(*w));
	w->srv = srv;
	if (pthread_mutex_init(&w->lock, NULL) != 0)
		return pg_err_set(err, PG_EIO, "api: cannot make a mutex");
	if (api_cond_init(&w->cond) < 0) {
		pthread_mutex_destroy(&w->lock);
		return pg_err_set(err, PG_EIO, "api: cannot make a condition variable");
	}
	w->inited = true;
	if (store_open(&w->st, srv->cfg->db, err) < 0 ||
	    store_query_int(w->st, "read data_version", "PRAGMA data_version", NULL, 0, &v,
			    err) < 0) {
		pg_err_prefix(err, "api: writer");
		return -1;
	}
	w->data_version = v;
	if (pthread_create(&w->thread, NULL, api_worker_main, w) != 0)
		return pg_err_set(err, PG_EIO, "api: cannot start the writer thread");
	w->started = true;
	return 0;
}

void api_worker_push(struct api_worker *w, struct api_req *r)
{
	pthread_mutex_lock(&w->lock);
	if (!w->started || w->quit) {
		pthread_mutex_unlock(&w->lock);
		api_reply_error(r, 503, "the controller is shutting down");
		return;
	}
	/* Suspended before the writer can see it, so that its resume always
	 * follows the suspension. */
	MHD_suspend_connection(r->conn);
	r->state = API_REQ_QUEUED;
	r->next = NULL;
	if (w->tail)
		w->tail->next = r;
	else
		w->head = r;
	w->tail = r;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
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
	store_close(w->st);
	w->st = NULL;
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	w->inited = false;
}
