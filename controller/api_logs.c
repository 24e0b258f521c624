/* SPDX-License-Identifier: MIT */
/*
 * Log chunks (POST /api/v1/jobs/ID/logs): the appender threads write each
 * chunk to its file, then the writer records the size in `logs`
 * (api_agent.c, inside its batch).
 *
 * Why threads of their own.  Appending a chunk creates directories and
 * files and writes to them, which can wait (for ext4's journal, for a
 * core).  Done by the writer inside its batch, that wait held every
 * request of the batch and of the batches queued behind it: at 5,000
 * requests/s heartbeats, which touch no file, had a p99 of up to 170 ms,
 * against 9.5 to 18 ms for the same load without log chunks (bench_api).
 * Here the file work runs beside the writer; the writer's part is one
 * INSERT.
 *
 * Lanes.  When a thousand agents start jobs together, a thousand new logs
 * (two directories and a file each) come within a few hundred ms, and one
 * thread fell behind by up to 470 ms.  So there are API_LOG_LANES
 * appender threads, each with its own queue and store connection, and a
 * log always goes to the same lane (a hash of job and attempt: all of an
 * attempt's logs, which its agent writes one after another):
 * the chunks of one log reach the file in the order they came, and the
 * writer (first come first served) records their sizes in that order, so
 * the row never runs ahead of the file.  A chunk whose batch is lost (a
 * full disk at COMMIT) is in the file but its size is not in the row: the
 * agent retries it with the same ?offset=, the lane finds the bytes there
 * and the row takes the file's size, as before.  A stuck file holds up
 * only its lane.
 *
 * Directories ahead.  A new log is two directories and a file, the
 * directories taking the parent's lock (logs/ for every new job).  When
 * all agents start jobs together (a series of many jobs, or a lab starting
 * up) those came in a burst, a thousand within 200 ms in bench_api, and
 * queued in the lanes for up to 500 ms.  So once a lease is committed the
 * HTTP thread hands its lane the attempt's directory to make
 * (api_logs_prepare()): the agent then checks out and builds for seconds
 * before its first chunk, which only creates its file.  A lane takes
 * chunks before directories, so that work never delays a chunk that waits
 * for an answer, and makes a directory API_LOG_PREP_DELAY_MS after its
 * lease, not at once: the other leases of the burst are still waiting for
 * their syncs, and a thousand mkdirs beside them took their p99 from about
 * 10 to 25-30 ms.  The queue of directories is bounded and best effort: a
 * chunk that comes first makes the directory itself.
 *
 * Ownership.  Only the attempt's own agent may write to its log: the lane
 * checks it on its own connection before it touches the file.  An
 * attempt's agent never changes (a new lease is a new attempt, with a log
 * path of its own; no attempt, job or agent row is ever deleted, and a
 * disabled agent is refused before its request gets here), so the check
 * cannot go stale and the writer need not repeat it.  Nor need the lane:
 * it remembers the owners it found, and the owner of each lease handed to
 * it, in a small table of its own (API_LOG_OWNERS slots, replaced by
 * hash), and asks the store only on a miss.  That read was about half of
 * a lane's time per chunk (0.04 to 0.09 ms, bench_api).
 */
#include "api_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt.h"
#include "fsutil.h"
#include "log.h"
#include "thread.h"
#include "timeutil.h"

/* An attempt whose log directory a lane makes ahead of its chunks. */
struct api_log_prep {
	int64_t job, attempt, agent;
	int64_t due_ms;			/* pg_time_mono_ms() */
	struct api_log_prep *next;
};

/* FNV-1a over what names an attempt; salt: 0 for a lane, 1 for a slot of
 * its owners' table (independent of the lane, or every attempt of a lane
 * would fall in a quarter of its slots). */
static uint64_t api_log_hash(int64_t job, int64_t attempt, unsigned char salt)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int64_t ids[2] = { job, attempt };
	const unsigned char *p = (const unsigned char *)ids;

	h = (h ^ salt) * 0x100000001b3ULL;
	for (size_t i = 0; i < sizeof(ids); i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static struct api_log_owner *api_log_owner_slot(struct api_log_lane *l, int64_t job,
						 int64_t attempt)
{
	return &l->owner[api_log_hash(job, attempt, 1) % API_LOG_OWNERS];
}

static void api_log_owner_set(struct api_log_lane *l, int64_t agent, int64_t job,
			      int64_t attempt)
{
	struct api_log_owner *o = api_log_owner_slot(l, job, attempt);

	o->job = job;
	o->attempt = attempt;
	o->agent = agent;
}

/* api_own_attempt() through the lane's table of owners (lane thread
 * only). */
static int api_log_owner_check(struct api_log_lane *l, int64_t agent, int64_t job,
			       int64_t attempt, struct pg_err *err)
{
	const struct api_log_owner *o = api_log_owner_slot(l, job, attempt);

	if (o->job == job && o->attempt == attempt && o->agent == agent && agent > 0)
		return 0;
	if (api_own_attempt(l->st, agent, job, attempt, err) < 0)
		return -1;
	api_log_owner_set(l, agent, job, attempt);
	return 0;
}

/*
 * Append r's chunk to DATA_DIR/logs/JOB/ATTEMPT/STAGE.log; *size is what
 * the file holds after it.  With ?offset=N the chunk is the log's bytes
 * from N on: a retried chunk the log already holds is not appended twice,
 * a gap is refused (409).
 */
static int api_log_append(struct api_log_lane *l, struct api_req *r, int64_t *size,
			  struct pg_err *err)
{
	const struct api_op *op = &r->op;
	struct pg_buf rel = PG_BUF_INIT(256), path = PG_BUF_INIT(8192);
	struct stat sb;
	int64_t len = (int64_t)r->body.len;
	int fd = -1, rc = -1;
	bool created;

	if (api_log_owner_check(l, r->agent_id, r->route.id, op->attempt, err) < 0)
		goto out;
	if (api_log_rel(r, &rel, err) < 0)
		goto out;
	if (pg_buf_printf(&path, "%s/%s", l->data_dir, pg_buf_str(&rel)) < 0) {
		pg_buf_err(&path, err, "log path");
		goto out;
	}
	/* Most chunks go to a log that exists: open it first; a new one in
	 * the directory made ahead (api_logs_prepare()); the directories
	 * only when that is missing.  A failed first append removes the file
	 * it created. */
	fd = open(pg_buf_str(&path), O_WRONLY | O_APPEND | O_CLOEXEC);
	created = false;
	for (int i = 0; fd < 0 && errno == ENOENT && i < 2; i++) {
		if (i && pg_mkdir_parent(pg_buf_str(&path), 0750, err) < 0)
			goto out;
		fd = open(pg_buf_str(&path), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
			  0640);
		created = fd >= 0;
	}
	if (fd < 0 || fstat(fd, &sb) < 0) {
		pg_err_errno(err, "open %s", pg_buf_str(&path));
		goto out;
	}
	*size = (int64_t)sb.st_size;
	if (op->offset >= 0 && op->offset + len <= *size) {
		rc = 0;		/* a retry of what the log holds */
		goto out;
	}
	if (op->offset >= 0 && op->offset != *size) {
		pg_err_set(err, PG_ECONFLICT, "offset %lld does not match the %lld bytes the log "
			   "holds", (long long)op->offset, (long long)*size);
		goto out;
	}
	if (*size + len > API_LOG_MAX_BYTES) {
		pg_err_set(err, PG_ETOOBIG, "the log would be over its limit of %lld bytes",
			   (long long)API_LOG_MAX_BYTES);
		goto out;
	}
	if (pg_write_all(fd, r->body.data, r->body.len) < 0) {
		pg_err_errno(err, "append to %s", pg_buf_str(&path));
		/* All or nothing, so that a retry with ?offset= lines up; a
		 * log this call created goes (no row names it). */
		if (created ? unlink(pg_buf_str(&path)) < 0 : ftruncate(fd, (off_t)*size) < 0)
			pg_log_warn("api", "undo the append to %s: %s", pg_buf_str(&path),
				    strerror(errno));
		goto out;
	}
	*size += len;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	pg_buf_release(&rel);
	pg_buf_release(&path);
	return rc;
}

/* Make p's log directory; a failure is the first chunk's to report. */
static void api_log_prep_run(struct api_log_lane *l, const struct api_log_prep *p)
{
	struct pg_buf rel = PG_BUF_INIT(256), path = PG_BUF_INIT(8192);
	struct pg_err err = PG_ERR_INIT;

	if (api_log_dir_rel(p->job, p->attempt, &rel, &err) < 0 ||
	    pg_buf_printf(&path, "%s/%s", l->data_dir, pg_buf_str(&rel)) < 0 ||
	    pg_mkdir_p(pg_buf_str(&path), 0750, &err) < 0)
		pg_log_debug("api", "job %lld attempt %lld: log directory not made ahead: %s",
			     (long long)p->job, (long long)p->attempt,
			     err.msg[0] ? err.msg : "path too long");
	pg_buf_release(&rel);
	pg_buf_release(&path);
}

static void *api_logs_main(void *arg)
{
	struct api_log_lane *l = arg;

	pg_thread_name("api-log");
	pthread_mutex_lock(&l->lock);
	for (;;) {
		struct pg_err err = PG_ERR_INIT;
		struct api_log_prep *p;
		struct api_req *r;
		int64_t size = 0;

		while (!l->head && !l->quit) {
			int64_t wait_ms;
			struct timespec until;

			if (!l->prep_head) {
				pthread_cond_wait(&l->cond, &l->lock);
				continue;
			}
			wait_ms = l->prep_head->due_ms - pg_time_mono_ms();
			if (wait_ms <= 0)
				break;
			until = api_abstime(wait_ms);
			pthread_cond_timedwait(&l->cond, &l->lock, &until);
		}
		r = l->head;
		if (!r && (p = l->prep_head) && !l->quit) {
			/* Nothing waits for an answer, and the directory is
			 * due. */
			l->prep_head = p->next;
			if (!l->prep_head)
				l->prep_tail = NULL;
			l->n_prep--;
			pthread_mutex_unlock(&l->lock);
			api_log_owner_set(l, p->agent, p->job, p->attempt);
			api_log_prep_run(l, p);
			free(p);
			pthread_mutex_lock(&l->lock);
			continue;
		}
		if (!r)
			break;
		l->head = r->next;
		if (!l->head)
			l->tail = NULL;
		r->next = NULL;
		pthread_mutex_unlock(&l->lock);

		if (api_log_append(l, r, &size, &err) < 0) {
			api_reply_err(r, &err);
			api_worker_done(r);
		} else {
			r->op.log_bytes = size;
			pg_buf_release(&r->body);
			api_worker_take(l->worker, r);
		}
		pthread_mutex_lock(&l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

static void api_lane_stop(struct api_log_lane *l)
{
	if (!l->inited)
		return;
	if (l->started) {
		pthread_mutex_lock(&l->lock);
		l->quit = true;
		pthread_cond_signal(&l->cond);
		pthread_mutex_unlock(&l->lock);
		pthread_join(l->thread, NULL);
		l->started = false;
	}
	while (l->prep_head) {
		struct api_log_prep *p = l->prep_head;

		l->prep_head = p->next;
		free(p);
	}
	l->prep_tail = NULL;
	l->n_prep = 0;
	store_close(l->st);
	l->st = NULL;
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	l->inited = false;
}

static int api_lane_start(struct api_log_lane *l, struct api_server *srv, struct pg_err *err)
{
	memset(l, 0, sizeof(*l));
	l->worker = &srv->worker;
	l->data_dir = srv->cfg->data_dir;
	if (pthread_mutex_init(&l->lock, NULL) != 0)
		return pg_err_set(err, PG_EIO, "api: cannot make a mutex");
	if (api_cond_init(&l->cond) < 0) {
		pthread_mutex_destroy(&l->lock);
		return pg_err_set(err, PG_EIO, "api: cannot make a condition variable");
	}
	l->inited = true;
	if (store_open(&l->st, srv->cfg->db, err) < 0) {
		pg_err_prefix(err, "api: log appender");
		return -1;
	}
	if (pthread_create(&l->thread, NULL, api_logs_main, l) != 0)
		return pg_err_set(err, PG_EIO, "api: cannot start a log appender thread");
	l->started = true;
	return 0;
}

int api_logs_start(struct api_logs *logs, struct api_server *srv, struct pg_err *err)
{
	for (size_t i = 0; i < API_LOG_LANES; i++)
		if (api_lane_start(&logs->lane[i], srv, err) < 0)
			return -1;
	return 0;
}

static struct api_log_lane *api_log_lane_of(struct api_logs *logs, int64_t job,
					    int64_t attempt)
{
	return &logs->lane[api_log_hash(job, attempt, 0) % API_LOG_LANES];
}

void api_logs_prepare(struct api_logs *logs, int64_t job, int64_t attempt, int64_t agent)
{
	struct api_log_lane *l = api_log_lane_of(logs, job, attempt);
	struct api_log_prep *p = malloc(sizeof(*p));

	if (!p)
		return;
	p->job = job;
	p->attempt = attempt;
	p->agent = agent;
	p->due_ms = pg_time_mono_ms() + API_LOG_PREP_DELAY_MS;
	p->next = NULL;
	pthread_mutex_lock(&l->lock);
	if (!l->started || l->quit || l->n_prep >= API_LOG_PREP_MAX) {
		pthread_mutex_unlock(&l->lock);
		free(p);
		return;
	}
	if (l->prep_tail)
		l->prep_tail->next = p;
	else
		l->prep_head = p;
	l->prep_tail = p;
	l->n_prep++;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

bool api_logs_push(struct api_logs *logs, struct api_req *r)
{
	struct api_log_lane *l = api_log_lane_of(logs, r->route.id, r->op.attempt);

	pthread_mutex_lock(&l->lock);
	if (!l->started || l->quit) {
		pthread_mutex_unlock(&l->lock);
		api_reply_error(r, 503, "the controller is shutting down");
		return false;
	}
	api_req_enqueue(&l->head, &l->tail, r, true);
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	return true;
}

void api_logs_stop(struct api_logs *logs)
{
	for (size_t i = 0; i < API_LOG_LANES; i++)
		api_lane_stop(&logs->lane[i]);
}
