/* SPDX-License-Identifier: MIT */
/*
 * Controller API load: PG_BENCH_AGENTS simulated agents (default 1000),
 * each with its own keep-alive connection over loopback, against a real
 * `perfgate-controller serve` and its store (synchronous=FULL).
 *
 * The goal (issue 4) is a throughput of 5,000 requests/s with p99 under
 * 20 ms.  Both cannot be measured with every agent sending back to back:
 * with 1,000 requests always in flight, Little's law makes the mean
 * latency 1,000 / rate (200 ms at 5,000/s) whatever the server does.  So
 * the bench has an open-loop phase for the latency and closed-loop phases
 * for the ceilings:
 *
 *   api-raw  closed loop: GET of an unknown path, answered 404 by the HTTP
 *            thread without the store: the HTTP floor of this machine at
 *            this moment.  The other lines give their ratio to it, which
 *            says more than absolute figures on a shared machine.  It runs
 *            first, which also has every connection accepted and warm, as
 *            agents' keep-alive connections are.
 *   api      open loop at PG_BENCH_RATE requests/s (default 5000) for
 *            PG_BENCH_SECONDS (default 10): agent i sends every
 *            agents/rate s, staggered; its first request leases a job
 *            (wait_s 0), the others heartbeat it, every
 *            PG_BENCH_LOG_EVERY-th (default 5) sends a log chunk instead,
 *            and the PG_BENCH_RESULT_EVERY-th (default 20) sends the job's
 *            result, after which the agent leases the next job (0: never).
 *            All agents lease at the start, so their jobs end and their
 *            logs begin together, every RESULT_EVERY requests: a burst of
 *            1,000 new log files at once.  PG_BENCH_STAGGER=1 makes agent
 *            i's first job i mod RESULT_EVERY requests shorter, so that
 *            jobs turn over spread in time, as a lab's do.
 *            api-kind lines give p50 and p99 per kind of request (lease,
 *            heartbeat, log, result), from when each went out: an agent
 *            waiting for a slow lease sends its next heartbeat late, and
 *            that wait is the lease's.  Otherwise latency counts from the
 *            time the request was due, so a reply that came late delays the
 *            agent's next request and that delay counts too (no coordinated
 *            omission).  Each api-kind line also counts the requests
 *            over 20 ms as the agents saw them (client_over_20ms) and as
 *            the controller timed them from headers to last byte
 *            (server_over_10ms, server_over_20ms: its /metrics), and
 *            api-stage lines give the controller's p99 (a bucket bound)
 *            per stage of the writer's requests (writer, sync, send) and
 *            of its WAL syncs: where a slow answer waited.  goal=met when
 *            the achieved rate is at least 98% of the offered rate, the
 *            offered rate is at least 5,000/s and p99 < 20 ms.
 *   api-max  closed loop: every agent heartbeats back to back: the writer's
 *            ceiling (latency there is queueing: agents / rate).
 *   api-read closed loop: GET /api/v1/jobs/ID (read connections, no
 *            writer).
 *
 * Each line also gives the CPU time of this client and of the controller
 * (in cores: seconds of CPU per second) and the load average, so that a
 * client that is itself the bottleneck shows.  The client is a small
 * epoll loop over raw sockets rather than libcurl, so that it costs less
 * than the server it measures.
 *
 * Settling.  The store's directory is made anew and removed after each
 * run, and on an ext4 file system without a journal (this VM's root) the
 * kernel does not reuse an inode freed in the last 30 to 35 s: each new
 * file scans past every such inode (find_inode_bit(), recently_deleted()),
 * a buffer lookup each.  A run started within that time of the last one's
 * clean-up measured those scans: new log files took up to 20 ms each to
 * create in the log appenders, and log chunks had p99 51 to 127 ms in 4
 * runs back to back, against 6.0 to 11.1 ms in 4 runs started 50 s apart
 * and 7.7 to 16.9 ms in 4 back to back whose directories were kept
 * (2026-12-05).  A controller's own data directory sees no such mass
 * deletion, so the bench first waits PG_BENCH_SETTLE_S seconds (default
 * 40; 0 in crash mode, which counts losses, not latency).
 *
 * PG_BENCH_KEEP=1 keeps the store's directory and prints where it is.
 * PG_BENCH_THREADS sets api.threads (default 4, the controller's default).
 * PG_BENCH_ONLY_API=1 stops after the api phase (no api-max, api-read).
 * A slow disk: run with LD_PRELOAD=BUILD/tests/preload/slowsync.so
 * (tests/preload/slowsync.c); the controller inherits it.
 *
 * Crash mode, for the fault suite (tests/faults/f_slowdisk.sh):
 * PG_BENCH_KILL_AFTER_S=S skips api-raw, kills the controller with
 * SIGKILL S seconds into the api phase, writes the results it had
 * answered 200 to PG_BENCH_ACKED ("JOB ATTEMPT" lines), keeps the store's
 * directory (printed: "bench api-killed: dir=DIR ...") and stops there.
 * PG_BENCH_TRACE=FILE writes one line per answer: the phase (0 lease,
 * 1 heartbeat, 2 read, 3 raw), when it was due (us from the phase's start)
 * and its latency (us).
 *
 * Agents and jobs are put into the store before the controller starts
 * (through sched_agent_add(), on a connection with synchronous=OFF: this
 * is set-up, not measured).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "api_auth.h"
#include "api_metrics.h"
#include "err.h"
#include "http.h"
#include "proc.h"
#include "sched.h"
#include "store.h"

#define DEFAULT_AGENTS 1000
#define DEFAULT_SECONDS 10
#define DEFAULT_RATE 5000
#define DEFAULT_THREADS 4		/* api.threads, as by default */
#define DEFAULT_SETTLE_S 40		/* see "Settling" above */
#define GOAL_RATE 5000
#define GOAL_P99_MS 20.0
#define MAX_AGENTS 20000
#define REQ_MAX 512
#define RESP_MAX 16384
#define LISTEN_WAIT_MS 15000
#define IO_TIMEOUT_US (30LL * 1000000)

enum phase {
	PH_LEASE,
	PH_HEARTBEAT,
	PH_READ,
	PH_RAW,
	PH_IDLE,
};

/* What a request was, for the latency per kind. */
enum kind {
	K_LEASE,
	K_HEARTBEAT,
	K_LOG,
	K_RESULT,
	K_OTHER,
	K_N,
};

static const char *const kind_names[K_N] = { "lease", "heartbeat", "log", "result", "other" };

struct agent {
	int fd;
	enum phase phase;
	enum kind kind;			/* of the request out */
	int64_t job;
	int64_t attempt;
	int progress;
	unsigned int beats;		/* requests about the job since its lease */
	bool leased_once;		/* for PG_BENCH_STAGGER */
	int64_t log_off;		/* bytes of the job's log sent */
	bool busy;			/* a request is out */
	bool due;			/* open loop: a send came due while busy */
	int64_t due_us;			/* when the owed request was due */
	int64_t t0_us;			/* latency counts from here */
	int64_t sent_us;		/* when the last request went out */
	int64_t last_done_us;		/* when the last answer came */
	uint64_t n_done;		/* answers on this connection */
	char token[API_TOKEN_HEX + 1];
	char out[REQ_MAX];
	size_t out_len, out_off;
	char in[RESP_MAX];
	size_t in_len;
};

struct lat {
	uint32_t *us;
	size_t n, alloc;
};

struct load {
	int ep;
	struct agent *agents;
	size_t n;
	struct sockaddr_in addr;
	int64_t deadline_us;
	bool open_loop;
	int64_t gap_ns;			/* open loop: between two sends */
	int64_t start_us;
	uint64_t step;			/* open loop: sends scheduled so far */
	struct lat lat, lease_lat, hb_lat, kind_lat[K_N];
	uint64_t leases, heartbeats, reads, raws, errors;
	long stagger;			/* PG_BENCH_STAGGER */
	long log_every, result_every;	/* open loop: 0 never */
	FILE *acked;			/* results answered 200: "JOB ATTEMPT" */
	uint64_t results_acked;
	int64_t kill_after_us;		/* crash mode: into the api phase */
	pid_t ctl_pid;
	bool killed;
	size_t in_flight;
	FILE *trace;			/* PG_BENCH_TRACE: one line per answer */
};

struct ctl_thread {
	struct pg_proc *proc;
	struct pg_err err;
	int rc;
};

/* CPU and wall time over a phase. */
struct usage {
	int64_t wall_us;
	double self_s;			/* this process */
	double ctl_s;			/* the controller */
	double load1;
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int env_int(const char *name, long def, long min, long max, long *out)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s) {
		*out = def;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		fprintf(stderr, "bench api: %s='%s': expected an integer in %ld..%ld\n",
			name, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

static int lat_add(struct lat *l, int64_t us)
{
	if (l->n == l->alloc) {
		size_t na = l->alloc ? l->alloc * 2 : 65536;
		uint32_t *p = realloc(l->us, na * sizeof(*p));

		if (!p)
			return -1;
		l->us = p;
		l->alloc = na;
	}
	l->us[l->n++] = us < 0 ? 0 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) in ms of sorted samples. */
static double lat_ms(const struct lat *l, double q)
{
	size_t i;

	if (!l->n)
		return 0;
	i = (size_t)(q * (double)(l->n - 1) + 0.5);
	return l->us[i] / 1000.0;
}

/* ---- CPU accounting ------------------------------------------------------ */

/* utime + stime of pid in seconds, from /proc/PID/stat. */
static double proc_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After "(comm)": state is field 3; utime and stime are 14 and 15. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double self_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void usage_start(struct usage *u, pid_t ctl)
{
	double la[1] = { 0 };

	u->wall_us = now_us();
	u->self_s = self_cpu_s();
	u->ctl_s = proc_cpu_s(ctl);
	u->load1 = getloadavg(la, 1) == 1 ? la[0] : -1;
}

/* Turn u into the deltas since usage_start(). */
static void usage_stop(struct usage *u, pid_t ctl)
{
	u->wall_us = now_us() - u->wall_us;
	u->self_s = self_cpu_s() - u->self_s;
	u->ctl_s = proc_cpu_s(ctl) - u->ctl_s;
}

/* ---- one connection ------------------------------------------------------ */

static int agent_connect(struct load *ld, struct agent *a)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = a };
	int one = 1;

	a->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (a->fd < 0)
		return -1;
	if (setsockopt(a->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return -1;
	if (connect(a->fd, (struct sockaddr *)&ld->addr, sizeof(ld->addr)) < 0 &&
	    errno != EINPROGRESS)
		return -1;
	return epoll_ctl(ld->ep, EPOLL_CTL_ADD, a->fd, &ev);
}

/* Write what is left of a's request; 0 (done or would block) or -1. */
static int agent_flush(struct agent *a)
{
	while (a->out_off < a->out_len) {
		ssize_t k = send(a->fd, a->out + a->out_off, a->out_len - a->out_off,
				 MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN)
				return 0;
			if (errno == EINTR)
				continue;
			return -1;
		}
		a->out_off += (size_t)k;
	}
	return 0;
}

/* Build a's next request for its phase and send it; latency counts from
 * t0 (when it was due). */
static int agent_send(struct load *ld, struct agent *a, int64_t t0)
{
	const char *host = "127.0.0.1";
	char body[128];
	int n = 0, m;

	body[0] = '\0';
	a->kind = K_OTHER;
	if (a->phase == PH_HEARTBEAT && ld->open_loop) {
		unsigned int next = a->beats + 1;

		if (ld->result_every > 0 && next >= (unsigned long)ld->result_every)
			a->kind = K_RESULT;
		else if (ld->log_every > 0 && next % (unsigned long)ld->log_every == 0)
			a->kind = K_LOG;
	}
	switch (a->phase) {
	case PH_LEASE:
		a->kind = K_LEASE;
		n = snprintf(body, sizeof(body), "{\"wait_s\": 0}");
		m = snprintf(a->out, sizeof(a->out),
			     "POST /api/v1/lease HTTP/1.1\r\nHost: %s\r\n"
			     "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
			     "Content-Length: %d\r\n\r\n%s", host, a->token, n, body);
		break;
	case PH_HEARTBEAT:
		if (a->kind == K_RESULT) {
			n = snprintf(body, sizeof(body), "{\"attempt\": %lld, \"outcome\": \"ok\","
				     " \"detail\": \"bench\"}", (long long)a->attempt);
			m = snprintf(a->out, sizeof(a->out),
				     "POST /api/v1/jobs/%lld/result HTTP/1.1\r\nHost: %s\r\n"
				     "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
				     "Content-Length: %d\r\n\r\n%s", (long long)a->job, host,
				     a->token, n, body);
			break;
		}
		if (a->kind == K_LOG) {
			n = snprintf(body, sizeof(body), "[%u] ninja: compiling lib %u of 400\n",
				     a->beats, a->beats);
			m = snprintf(a->out, sizeof(a->out),
				     "POST /api/v1/jobs/%lld/logs?attempt=%lld&stage=build&offset=%lld"
				     " HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
				     "Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s",
				     (long long)a->job, (long long)a->attempt, (long long)a->log_off,
				     host, a->token, n, body);
			break;
		}
		a->kind = K_HEARTBEAT;
		a->progress = (a->progress + 1) % 100;
		n = snprintf(body, sizeof(body),
			     "{\"attempt\": %lld, \"stage\": \"build\", \"progress\": %d}",
			     (long long)a->attempt, a->progress);
		m = snprintf(a->out, sizeof(a->out),
			     "POST /api/v1/jobs/%lld/heartbeat HTTP/1.1\r\nHost: %s\r\n"
			     "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
			     "Content-Length: %d\r\n\r\n%s", (long long)a->job, host, a->token, n,
			     body);
		break;
	case PH_READ:
		m = snprintf(a->out, sizeof(a->out), "GET /api/v1/jobs/%lld HTTP/1.1\r\n"
			     "Host: %s\r\n\r\n", (long long)a->job, host);
		break;
	case PH_RAW:
		m = snprintf(a->out, sizeof(a->out), "GET /api/v1/no-such-thing HTTP/1.1\r\n"
			     "Host: %s\r\n\r\n", host);
		break;
	default:
		return -1;
	}
	if (n < 0 || (size_t)n >= sizeof(body) || m < 0 || (size_t)m >= sizeof(a->out))
		return -1;
	a->out_len = (size_t)m;
	a->out_off = 0;
	a->in_len = 0;
	a->t0_us = t0;
	a->sent_us = now_us();
	a->busy = true;
	ld->in_flight++;
	return agent_flush(a);
}

/* Read the job id and attempt from a lease answer's body. */
static int parse_lease(struct agent *a, const char *body, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *job, *id, *att;
	int rc = -1;

	if (!root)
		goto out;
	job = cJSON_GetObjectItemCaseSensitive(root, "job");
	id = cJSON_GetObjectItemCaseSensitive(job, "id");
	att = cJSON_GetObjectItemCaseSensitive(job, "attempt");
	if (!cJSON_IsNumber(id) || !cJSON_IsNumber(att))
		goto out;
	a->job = (int64_t)id->valuedouble;
	a->attempt = (int64_t)att->valuedouble;
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}

/*
 * Whether a->in holds a whole answer: 1 with *status, *body and *body_len
 * set, 0 when more is to come, -1 when it is not one we can read (the
 * controller always sends Content-Length, except for 204).
 */
static int parse_answer(struct agent *a, int *status, const char **body, size_t *body_len)
{
	const char *end, *p;
	long cl = -1;

	a->in[a->in_len] = '\0';
	end = strstr(a->in, "\r\n\r\n");
	if (!end)
		return a->in_len >= RESP_MAX - 1 ? -1 : 0;
	if (strncmp(a->in, "HTTP/1.1 ", 9) || sscanf(a->in + 9, "%3d", status) != 1)
		return -1;
	for (p = strstr(a->in, "\r\n"); p && p < end; p = strstr(p + 2, "\r\n")) {
		if (!strncasecmp(p + 2, "Content-Length:", 15))
			cl = strtol(p + 17, NULL, 10);
		/* Every agent keeps its connection: say why one would end. */
		if (!strncasecmp(p + 2, "Connection: close", 17))
			fprintf(stderr, "bench api: the controller ends a connection after: %.*s\n",
				(int)(end - a->in), a->in);
	}
	if (cl < 0) {
		if (*status != 204)
			return -1;
		cl = 0;
	}
	if ((size_t)(end + 4 - a->in) + (size_t)cl > RESP_MAX - 1)
		return -1;
	if (a->in_len < (size_t)(end + 4 - a->in) + (size_t)cl)
		return 0;
	*body = end + 4;
	*body_len = (size_t)cl;
	return 1;
}

/* Send the open loop's requests that came due by now. */
static int open_loop_tick(struct load *ld, int64_t now)
{
	while (now < ld->deadline_us) {
		int64_t due = ld->start_us + (int64_t)(ld->step * (uint64_t)ld->gap_ns / 1000);
		struct agent *a;

		if (due > now)
			break;
		a = &ld->agents[ld->step % ld->n];
		ld->step++;
		if (a->phase == PH_IDLE)
			continue;
		if (a->busy) {
			/* Owed: sent when the answer comes, latency from now. */
			if (!a->due) {
				a->due = true;
				a->due_us = due;
			}
			continue;
		}
		if (agent_send(ld, a, due) < 0)
			return -1;
	}
	return 0;
}

static void agent_fail(struct load *ld, struct agent *a, const char *what)
{
	if (ld->errors < 5)
		fprintf(stderr, "bench api: %s: %s\n", what, a->in_len ? a->in : "(no answer)");
	ld->errors++;
	a->phase = PH_IDLE;
	a->due = false;
}

/* a's answer is in: account for it and send the next request. */
static int agent_done(struct load *ld, struct agent *a, int status, const char *body,
		      size_t len)
{
	int64_t t1 = now_us();
	int want = a->phase == PH_RAW ? 404 : 200;

	a->busy = false;
	a->last_done_us = t1;
	a->n_done++;
	ld->in_flight--;
	a->in_len = 0;
	if (status != want) {
		agent_fail(ld, a, "unexpected status");
		return 0;
	}
	/* Per kind, from when it went out: a request sent late because its
	 * agent waited for its previous answer does not take that wait from
	 * the previous one (which counts it already). */
	if (lat_add(&ld->lat, t1 - a->t0_us) < 0 ||
	    lat_add(&ld->kind_lat[a->kind], t1 - a->sent_us) < 0)
		return -1;
	if (ld->trace)
		fprintf(ld->trace, "%d %lld %lld\n", (int)a->phase,
			(long long)(a->t0_us - ld->start_us), (long long)(t1 - a->t0_us));
	switch (a->phase) {
	case PH_LEASE:
		ld->leases++;
		if (lat_add(&ld->lease_lat, t1 - a->t0_us) < 0)
			return -1;
		if (parse_lease(a, body, len) < 0) {
			agent_fail(ld, a, "lease answer without a job");
			return 0;
		}
		a->phase = PH_HEARTBEAT;
		a->beats = 0;
		/* Staggered: the first job of agent i is i mod RESULT_EVERY
		 * requests shorter, so that jobs end and logs begin spread
		 * over time instead of all agents' at once. */
		if (ld->stagger && !a->leased_once && ld->result_every > 0)
			a->beats = (unsigned int)((size_t)(a - ld->agents) %
						  (size_t)ld->result_every);
		a->leased_once = true;
		a->log_off = 0;
		break;
	case PH_HEARTBEAT:
		a->beats++;
		if (a->kind == K_RESULT) {
			/* Acknowledged: the controller may not lose it now. */
			ld->results_acked++;
			if (ld->acked && fprintf(ld->acked, "%lld %lld\n", (long long)a->job,
						 (long long)a->attempt) < 0)
				return -1;
			a->job = 0;
			a->phase = PH_LEASE;
			break;
		}
		if (a->kind == K_LOG) {
			const char *p = memmem(body, len, "\"bytes\":", 8);

			if (!p) {
				agent_fail(ld, a, "log answer without bytes");
				return 0;
			}
			a->log_off = strtoll(p + 8, NULL, 10);
			break;
		}
		ld->heartbeats++;
		if (lat_add(&ld->hb_lat, t1 - a->t0_us) < 0)
			return -1;
		if (memmem(body, len, "\"cancel\":true", 13)) {
			agent_fail(ld, a, "job cancelled");
			return 0;
		}
		break;
	case PH_READ:
		ld->reads++;
		break;
	case PH_RAW:
		ld->raws++;
		break;
	default:
		return -1;
	}
	if (t1 >= ld->deadline_us) {
		a->due = false;
		return 0;
	}
	if (!ld->open_loop)
		return agent_send(ld, a, t1);
	if (a->due) {
		a->due = false;
		return agent_send(ld, a, a->due_us);
	}
	return 0;
}

/* Read what came for a; finish the request when its answer is whole. */
static int agent_read(struct load *ld, struct agent *a)
{
	for (;;) {
		ssize_t k = recv(a->fd, a->in + a->in_len, RESP_MAX - 1 - a->in_len, 0);
		const char *body = NULL;
		size_t len = 0;
		int status = 0, rc;

		if (k < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (k == 0) {
			fprintf(stderr, "bench api: the controller closed a connection (phase %d,"
				" %s for %lld ms, %llu answers on it, the last %lld ms ago, %zu bytes"
				" sent of %zu)\n", (int)a->phase, a->busy ? "request out" : "idle",
				(long long)(now_us() - a->sent_us) / 1000,
				(unsigned long long)a->n_done,
				(long long)(now_us() - a->last_done_us) / 1000, a->out_off,
				a->out_len);
			return -1;
		}
		a->in_len += (size_t)k;
		rc = parse_answer(a, &status, &body, &len);
		if (rc < 0) {
			fprintf(stderr, "bench api: cannot read an answer: %.200s\n", a->in);
			return -1;
		}
		if (rc == 1)
			return agent_done(ld, a, status, body, len);
		if (a->in_len >= RESP_MAX - 1)
			return -1;
	}
}

/* Run every agent from its current phase until the deadline, then drain. */
static int load_run(struct load *ld, int seconds)
{
	struct epoll_event evs[256];
	int64_t give_up;

	ld->start_us = now_us();
	ld->deadline_us = ld->start_us + (int64_t)seconds * 1000000;
	give_up = ld->deadline_us + IO_TIMEOUT_US;
	ld->step = 0;
	ld->lat.n = 0;
	ld->lease_lat.n = 0;
	ld->hb_lat.n = 0;
	for (int k = 0; k < K_N; k++)
		ld->kind_lat[k].n = 0;
	if (!ld->open_loop)
		for (size_t i = 0; i < ld->n; i++)
			if (ld->agents[i].phase != PH_IDLE &&
			    agent_send(ld, &ld->agents[i], ld->start_us) < 0)
				return -1;
	for (;;) {
		int64_t now = now_us(), wait_us = 100000;
		struct timespec ts;
		int n;

		if (ld->open_loop && open_loop_tick(ld, now) < 0)
			return -1;
		if (ld->open_loop && ld->kill_after_us && now - ld->start_us >= ld->kill_after_us) {
			/* What is out now is unanswered: it counts for nothing. */
			if (kill(ld->ctl_pid, SIGKILL) < 0)
				return -1;
			ld->killed = true;
			return 0;
		}
		if (now >= ld->deadline_us && ld->in_flight == 0)
			return 0;
		if (now >= give_up) {
			fprintf(stderr, "bench api: %zu requests unanswered after %lld s\n",
				ld->in_flight, IO_TIMEOUT_US / 1000000);
			return -1;
		}
		if (ld->open_loop && now < ld->deadline_us) {
			int64_t due = ld->start_us +
				      (int64_t)(ld->step * (uint64_t)ld->gap_ns / 1000);

			/* Wake at the next send (epoll_pwait2: finer than a
			 * millisecond, for gaps of 200 us). */
			wait_us = due <= now ? 0 : due - now;
		}
		ts.tv_sec = wait_us / 1000000;
		ts.tv_nsec = (wait_us % 1000000) * 1000;
		n = epoll_pwait2(ld->ep, evs, 256, &ts, NULL);
		if (n < 0 && errno != EINTR)
			return -1;
		for (int i = 0; i < n; i++) {
			struct agent *a = evs[i].data.ptr;

			if (evs[i].events & (EPOLLERR | EPOLLHUP)) {
				int e = 0;
				socklen_t el = sizeof(e);

				getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &e, &el);
				fprintf(stderr, "bench api: a connection failed (phase %d, %s for %lld"
					" ms, %llu answers on it, the last %lld ms ago): %s\n",
					(int)a->phase, a->busy ? "request out" : "idle",
					(long long)(now_us() - a->sent_us) / 1000,
					(unsigned long long)a->n_done,
					(long long)(now_us() - a->last_done_us) / 1000,
					e ? strerror(e) : "hung up");
				return -1;
			}
			if ((evs[i].events & EPOLLOUT) && a->busy && agent_flush(a) < 0)
				return -1;
			if ((evs[i].events & EPOLLIN) && agent_read(ld, a) < 0)
				return -1;
		}
	}
}

/* ---- the controller -------------------------------------------------- */

static void *ctl_wait(void *arg)
{
	struct ctl_thread *t = arg;

	t->rc = pg_proc_wait(t->proc, &t->err);
	return NULL;
}

/* Run `CTL --config CONF ARGS...` to completion. */
static int ctl_run(const char *ctl, const char *conf, const char *const *args)
{
	const char *argv[16];
	struct pg_proc p = PG_PROC_INIT;
	struct pg_err err = PG_ERR_INIT;
	char desc[PG_PROC_DESC_MAX];
	size_t n = 0;
	int rc = -1;

	argv[n++] = ctl;
	argv[n++] = "--config";
	argv[n++] = conf;
	for (; *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	p.argv = argv;
	p.timeout_ms = 60000;
	if (pg_proc_run(&p, &err) < 0) {
		fprintf(stderr, "bench api: %s\n", err.msg);
		goto out;
	}
	if (!pg_proc_succeeded(&p)) {
		fprintf(stderr, "bench api: perfgate-controller %s: %s\n%s", argv[3],
			pg_proc_describe(&p, desc, sizeof(desc)), pg_buf_str(&p.tail));
		goto out;
	}
	rc = 0;
out:
	pg_proc_release(&p);
	return rc;
}

/*
 * The agents (pool=demo, a token each) and a series with n_jobs runs of
 * one queued job each for host class "demo".  One run per job, as in life (a
 * run has a few jobs per host class).  synchronous=OFF: a crash during
 * set-up only fails the bench.
 */
static int seed(const char *db, struct agent *agents, size_t n, size_t n_jobs)
{
	static const char *const keys[] = { "pool" }, *const values[] = { "demo" };
	const struct sched_labels labels = { keys, values, 1 };
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;
	int rc = -1;

	if (store_open(&st, db, &err) < 0 ||
	    store_exec(st, "PRAGMA synchronous = OFF", "seed pragma", &err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		char name[32], hash[API_SHA256_HEX + 1];
		int64_t id;

		snprintf(name, sizeof(name), "bench-%zu", i);
		if (api_token_new(agents[i].token, &err) < 0 ||
		    api_sha256_hex(agents[i].token, strlen(agents[i].token), hash, &err) < 0 ||
		    sched_agent_add(st, name, &labels, hash, 1, &id, &err) < 0)
			goto out;
	}
	if (store_begin(st, &err) < 0)
		goto out;
	if (store_exec(st,
		       "INSERT INTO series (id, project, root_msgid, total, title, submitter_addr,"
		       " state, received_at, completed_at) VALUES (1, 'dpdk', 'bench@x', 1, 'bench',"
		       " 'a@x', 'complete', 1, 1);",
		       "seed series", &err) < 0)
		goto rollback;
	for (size_t i = 0; i < n_jobs; i++) {
		int64_t run = (int64_t)i + 1;

		if (store_run(st, "seed run",
			      "INSERT INTO runs (id, series_id, reason, tree, branch, base_commit,"
			      " created_at) VALUES (?1, 1, 'new', 'dpdk-demo', 'main',"
			      " '0123456789abcdef0123456789abcdef01234567', ?1)",
			      STORE_ARGS(STORE_INT(run)), &err) < 0 ||
		    store_run(st, "seed job",
			      "INSERT INTO jobs (run_id, context, host_class, build_mode, spec,"
			      " created_at) VALUES (?1, 'perfgate-demo-Performance', 'demo',"
			      " 'demo-release', '{\"format\":1}', ?1)",
			      STORE_ARGS(STORE_INT(run)), &err) < 0)
			goto rollback;
	}
	if (store_commit(st, &err) < 0)
		goto rollback;
	rc = 0;
	goto out;
rollback:
	store_rollback(st);
out:
	if (rc)
		fprintf(stderr, "bench api: seed: %s\n", err.msg);
	store_close(st);
	return rc;
}

/* Wait for "api: listening on http://127.0.0.1:PORT" in the log. */
static int wait_listening(const char *log, pid_t pid, int *port)
{
	int64_t end = now_us() + (int64_t)LISTEN_WAIT_MS * 1000;
	static const char mark[] = "api: listening on http://127.0.0.1:";

	while (now_us() < end) {
		char line[1024];
		FILE *f = fopen(log, "r");

		if (f) {
			while (fgets(line, sizeof(line), f)) {
				char *p = strstr(line, mark);
				long v;

				if (!p)
					continue;
				v = strtol(p + sizeof(mark) - 1, NULL, 10);
				if (v <= 0 || v > 65535)
					continue;
				*port = (int)v;
				fclose(f);
				return 0;
			}
			fclose(f);
		}
		if (kill(pid, 0) < 0) {
			fprintf(stderr, "bench api: the controller died (see %s)\n", log);
			return -1;
		}
		usleep(50000);
	}
	fprintf(stderr, "bench api: the API never listened (see %s)\n", log);
	return -1;
}

/* VmRSS and VmHWM of pid in KiB. */
static int read_rss(pid_t pid, long *rss, long *hwm)
{
	char path[64], line[256];
	FILE *f;

	*rss = *hwm = -1;
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmRSS:", 6))
			*rss = strtol(line + 6, NULL, 10);
		else if (!strncmp(line, "VmHWM:", 6))
			*hwm = strtol(line + 6, NULL, 10);
	}
	fclose(f);
	return *rss < 0 ? -1 : 0;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	if (fputs(text, f) == EOF) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

/* Where perfgate-controller and the profiles are: PG_BUILD (set by make
 * bench) or the directory above this program's. */
static int find_paths(char *ctl, char *profiles, size_t size)
{
	char exe[PATH_MAX], build[PATH_MAX], top[PATH_MAX];
	const char *env = getenv("PG_BUILD");
	ssize_t n;
	char *slash;
	int m;

	if (env && *env) {
		m = snprintf(build, sizeof(build), "%s", env);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return -1;
		exe[n] = '\0';
		/* BUILD/bench/bench_api */
		for (int i = 0; i < 2; i++) {
			slash = strrchr(exe, '/');
			if (!slash)
				return -1;
			*slash = '\0';
		}
		m = snprintf(build, sizeof(build), "%s", exe);
	}
	if (m < 0 || (size_t)m >= sizeof(build))
		return -1;
	if (!realpath(build, top))
		return -1;
	m = snprintf(ctl, size, "%s/perfgate-controller", top);
	if (m < 0 || (size_t)m >= size)
		return -1;
	/* The profiles are in the source tree: BUILD's parent (build/) or its
	 * grandparent (build/san/). */
	for (int i = 0; i < 2; i++) {
		slash = strrchr(top, '/');
		if (!slash)
			return -1;
		*slash = '\0';
		m = snprintf(profiles, size, "%s/profiles/demo.json", top);
		if (m < 0 || (size_t)m >= size)
			return -1;
		if (!access(profiles, R_OK)) {
			m = snprintf(profiles, size, "%s/profiles", top);
			return m < 0 || (size_t)m >= size ? -1 : 0;
		}
	}
	return -1;
}

/*
 * The disk's own floor, as a reference in the same run: 4 KiB appended
 * to a file in the store's directory and fdatasync()ed, back to back, for
 * DISK_REF_MS, as the syncer does for a batch.  A lease or a result is
 * answered only after such a sync (and may wait for the one in flight
 * first), so their p99 cannot be below this line's.
 */
#define DISK_REF_MS 2000
static void print_disk_ref(const char *dir)
{
	char path[PATH_MAX], block[4096];
	struct lat l = { 0 };
	int64_t end;
	int fd;

	if (snprintf(path, sizeof(path), "%s/disk-ref", dir) >= (int)sizeof(path))
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "bench api: %s: %s\n", path, strerror(errno));
		return;
	}
	memset(block, 'x', sizeof(block));
	end = now_us() + DISK_REF_MS * 1000;
	while (now_us() < end) {
		int64_t t0 = now_us();

		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block) ||
		    fdatasync(fd) < 0) {
			fprintf(stderr, "bench api: %s: %s\n", path, strerror(errno));
			break;
		}
		if (lat_add(&l, now_us() - t0) < 0)
			break;
	}
	close(fd);
	unlink(path);
	qsort(l.us, l.n, sizeof(*l.us), cmp_u32);
	printf("bench api-disk: syncs=%zu p50=%.2f ms p99=%.2f ms max=%.2f ms"
	       " (4 KiB append + fdatasync in the store's directory, back to back: the"
	       " floor under a lease's and a result's latency)\n", l.n, lat_ms(&l, 0.50),
	       lat_ms(&l, 0.99), lat_ms(&l, 1.0));
	fflush(stdout);
	free(l.us);
}

/* Sort the samples and print one figure line. */
static double print_line(const char *name, struct load *ld, const struct usage *u,
			 const char *extra)
{
	double secs = (double)u->wall_us / 1e6, rate;

	qsort(ld->lat.us, ld->lat.n, sizeof(*ld->lat.us), cmp_u32);
	rate = secs > 0 ? (double)ld->lat.n / secs : 0.0;
	printf("bench %s: agents=%zu requests=%zu rate=%.0f req/s p50=%.2f ms p99=%.2f ms"
	       " errors=%llu client_cpu=%.2f ctl_cpu=%.2f load=%.2f%s\n", name, ld->n,
	       ld->lat.n, rate, lat_ms(&ld->lat, 0.50), lat_ms(&ld->lat, 0.99),
	       (unsigned long long)ld->errors, secs > 0 ? u->self_s / secs : 0.0,
	       secs > 0 ? u->ctl_s / secs : 0.0, u->load1, extra);
	fflush(stdout);
	return rate;
}

/* The value of the sample `key` (a name and its labels, as printed) in
 * the /metrics text m; 0, or -1 when it is not there. */
static int metric_u64(const char *m, const char *key, unsigned long long *v)
{
	size_t n = strlen(key);

	for (const char *p = m; (p = strstr(p, key)); p += n)
		if ((p == m || p[-1] == '\n') && p[n] == ' ')
			return sscanf(p + n + 1, "%llu", v) == 1 ? 0 : -1;
	return -1;
}

/* One histogram of /metrics: cumulative buckets at the controller's own
 * bounds (api_metrics_le) and the count. */
struct srv_hist {
	unsigned long long cum[API_METRICS_BUCKETS], count;
};

/* The histogram `name` with the labels `labels` ("" for none, else
 * `k="v"`) from the /metrics text m; 0, or -1 when a line is missing. */
static int srv_hist(const char *m, const char *name, const char *labels, struct srv_hist *h)
{
	char key[160];
	int n;

	for (size_t b = 0; b < API_METRICS_BUCKETS; b++) {
		n = snprintf(key, sizeof(key), "%s_bucket{%s%sle=\"%g\"}", name, labels,
			     *labels ? "," : "", api_metrics_le[b]);
		if (n < 0 || (size_t)n >= sizeof(key) || metric_u64(m, key, &h->cum[b]) < 0)
			return -1;
	}
	n = *labels ? snprintf(key, sizeof(key), "%s_count{%s}", name, labels)
		    : snprintf(key, sizeof(key), "%s_count", name);
	if (n < 0 || (size_t)n >= sizeof(key) || metric_u64(m, key, &h->count) < 0)
		return -1;
	return 0;
}

/* How many of h took more than ms milliseconds (ms one of its bounds). */
static unsigned long long srv_over(const struct srv_hist *h, double ms)
{
	for (size_t b = 0; b < API_METRICS_BUCKETS; b++)
		if (api_metrics_le[b] * 1000 >= ms * (1 - 1e-9))
			return h->count - h->cum[b];
	return 0;
}

/* The controller's own account of where the writer's requests spent
 * their time (perfgate_api_stage_duration_seconds) and of its WAL syncs,
 * from /metrics: count, the bound of the bucket the p99 falls in, and
 * how many were over the goal's 20 ms. */
static void print_stages(const char *name, const char *metrics)
{
	/* NULL: the WAL syncs, a histogram without labels. */
	static const char *const stages[] = { "writer", "sync", "send", NULL };

	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		char labels[32];
		struct srv_hist h;
		double p99_ms = -1;	/* -1: beyond the last bound */

		if (stages[i]) {
			if (snprintf(labels, sizeof(labels), "stage=\"%s\"", stages[i]) >=
			    (int)sizeof(labels) ||
			    srv_hist(metrics, "perfgate_api_stage_duration_seconds", labels, &h) < 0)
				continue;
		} else if (srv_hist(metrics, "perfgate_store_wal_sync_duration_seconds", "",
				    &h) < 0) {
			continue;
		}
		printf("bench %s-stage: stage=%s n=%llu", name, stages[i] ? stages[i] : "wal_sync",
		       h.count);
		for (size_t b = 0; h.count && b < API_METRICS_BUCKETS && p99_ms < 0; b++)
			if ((double)h.cum[b] >= 0.99 * (double)h.count)
				p99_ms = api_metrics_le[b] * 1000;
		if (h.count && p99_ms < 0)
			printf(" p99>%g ms", api_metrics_le[API_METRICS_BUCKETS - 1] * 1000);
		else if (h.count)
			printf(" p99<=%g ms", p99_ms);
		printf(" over_20ms=%llu\n", srv_over(&h, GOAL_P99_MS));
	}
}

/* The controller's /metrics into resp; 0, or -1 (said on stderr). */
static int fetch_metrics(const struct load *ld, struct pg_http_response *resp)
{
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	struct pg_err err = PG_ERR_INIT;
	char url[64];

	if (snprintf(url, sizeof(url), "http://127.0.0.1:%u/metrics",
		     (unsigned int)ntohs(ld->addr.sin_port)) >= (int)sizeof(url))
		return -1;
	if (pg_http_get(url, &o, resp, &err) < 0 || resp->status != 200) {
		fprintf(stderr, "bench api: could not read the controller's /metrics: %s\n",
			resp->status ? "not 200" : err.msg);
		return -1;
	}
	return 0;
}

/* One line per kind of request seen in the last phase.  Each line also
 * says how many took over 20 ms as the agents saw it (client) and as the
 * controller timed it, from a request's headers to its response
 * (server, from /metrics: since the controller started, which for the
 * agents' kinds is this phase).  The difference is time outside the
 * request's handling: waiting to be read, or its answer to be written,
 * by an HTTP thread busy with other connections. */
static void print_kinds(const char *name, struct load *ld)
{
	static const char *const routes[K_N] = { "lease", "heartbeat", "logs", "result", NULL };
	struct pg_http_response resp = PG_HTTP_RESPONSE_INIT;
	const char *metrics = NULL;

	/* After a kill there is no controller to ask. */
	if (!ld->killed && fetch_metrics(ld, &resp) == 0)
		metrics = pg_buf_str(&resp.body);
	for (int k = 0; k < K_N; k++) {
		struct lat *l = &ld->kind_lat[k];
		struct srv_hist h;
		size_t c_over = 0;
		char labels[32], server[128] = "";

		if (!l->n)
			continue;
		qsort(l->us, l->n, sizeof(*l->us), cmp_u32);
		for (size_t i = l->n; i > 0 && l->us[i - 1] > GOAL_P99_MS * 1000; i--)
			c_over++;
		if (metrics && routes[k] &&
		    snprintf(labels, sizeof(labels), "route=\"%s\"", routes[k]) <
		    (int)sizeof(labels) &&
		    srv_hist(metrics, "perfgate_http_request_duration_seconds", labels, &h) == 0)
			snprintf(server, sizeof(server), " server_over_10ms=%llu server_over_20ms=%llu"
				 " of %llu", srv_over(&h, 10), srv_over(&h, GOAL_P99_MS), h.count);
		printf("bench %s-kind: kind=%s requests=%zu p50=%.2f ms p99=%.2f ms max=%.2f ms"
		       " client_over_20ms=%zu%s\n", name, kind_names[k], l->n, lat_ms(l, 0.50),
		       lat_ms(l, 0.99), lat_ms(l, 1.0), c_over, server);
	}
	if (metrics)
		print_stages(name, metrics);
	pg_http_response_release(&resp);
	fflush(stdout);
}

static int run_phase(struct load *ld, enum phase ph, bool open_loop, int seconds,
		     pid_t ctl, struct usage *u)
{
	for (size_t i = 0; i < ld->n; i++)
		if (ld->agents[i].phase != PH_IDLE)
			ld->agents[i].phase = ph == PH_HEARTBEAT && !ld->agents[i].job ? PH_LEASE : ph;
	ld->open_loop = open_loop;
	usage_start(u, ctl);
	if (load_run(ld, seconds) < 0) {
		fprintf(stderr, "bench api: the load loop failed\n");
		return -1;
	}
	usage_stop(u, ctl);
	return 0;
}

int main(void)
{
	char tmpdir[] = "/tmp/pg-bench-api.XXXXXX";
	char ctl[PATH_MAX], profiles[PATH_MAX], conf[PATH_MAX], db[PATH_MAX], log[PATH_MAX];
	char text[4 * PATH_MAX], extra[256];
	struct pg_proc serve = PG_PROC_INIT;
	struct ctl_thread th = { .proc = &serve, .err = PG_ERR_INIT, .rc = 0 };
	volatile sig_atomic_t stop = 0;
	struct load ld = { .ep = -1 };
	struct usage u;
	struct rlimit rl;
	pthread_t tid;
	bool tmp_made = false, thread_up = false, http_up = false, goal;
	size_t n_jobs;
	long n_agents, seconds, rate, threads, rss = -1, hwm = -1, kill_after_s, settle_s;
	double w_rate, max_rate, read_rate, raw_rate, w_p99;
	int port = 0, rc = 1, m;

	if (env_int("PG_BENCH_AGENTS", DEFAULT_AGENTS, 1, MAX_AGENTS, &n_agents) < 0 ||
	    env_int("PG_BENCH_SECONDS", DEFAULT_SECONDS, 1, 3600, &seconds) < 0 ||
	    env_int("PG_BENCH_RATE", DEFAULT_RATE, 1, 1000000, &rate) < 0 ||
	    env_int("PG_BENCH_THREADS", DEFAULT_THREADS, 1, 64, &threads) < 0 ||
	    env_int("PG_BENCH_LOG_EVERY", 5, 0, 1000000, &ld.log_every) < 0 ||
	    env_int("PG_BENCH_RESULT_EVERY", 20, 0, 1000000, &ld.result_every) < 0 ||
	    env_int("PG_BENCH_KILL_AFTER_S", 0, 0, 3600, &kill_after_s) < 0 ||
	    env_int("PG_BENCH_STAGGER", 0, 0, 1, &ld.stagger) < 0 ||
	    env_int("PG_BENCH_SETTLE_S", kill_after_s ? 0 : DEFAULT_SETTLE_S, 0, 600,
		    &settle_s) < 0)
		return 2;
	ld.kill_after_us = kill_after_s * 1000000;
	if (find_paths(ctl, profiles, sizeof(ctl)) < 0) {
		fprintf(stderr, "bench api: cannot find perfgate-controller and profiles/"
			" (set PG_BUILD)\n");
		return 1;
	}
	/* One descriptor per agent here and in the controller (which
	 * inherits the limit). */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		perror("bench api: getrlimit");
		return 1;
	}
	if (rl.rlim_cur < (rlim_t)n_agents * 2 + 256) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			perror("bench api: setrlimit");
			return 1;
		}
		if (rl.rlim_cur < (rlim_t)n_agents + 256) {
			fprintf(stderr, "bench api: %ld agents need more descriptors than %llu\n",
				n_agents, (unsigned long long)rl.rlim_cur);
			return 1;
		}
	}
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		perror("bench api: signal");
		return 1;
	}
	if (settle_s > 0) {
		fprintf(stderr, "bench api: waiting %ld s for files deleted before this run to age"
			" (PG_BENCH_SETTLE_S)\n", settle_s);
		sleep((unsigned int)settle_s);
	}
	if (!mkdtemp(tmpdir)) {
		perror("bench api: mkdtemp");
		return 1;
	}
	tmp_made = true;
	/* libcurl, for reading /metrics; before any thread starts. */
	if (pg_http_global_init(&th.err) < 0) {
		fprintf(stderr, "bench api: %s\n", th.err.msg);
		goto out;
	}
	http_up = true;
	if (snprintf(conf, sizeof(conf), "%s/c.json", tmpdir) < 0 ||
	    snprintf(db, sizeof(db), "%s/state/perfgate.db", tmpdir) < 0 ||
	    snprintf(log, sizeof(log), "%s/serve.log", tmpdir) < 0)
		goto out;
	m = snprintf(text, sizeof(text),
		     "{ \"db\": \"%s\", \"data_dir\": \"%s/state\",\n"
		     "  \"profiles_dir\": \"%s\", \"profiles\": [\"demo.json\"],\n"
		     "  \"api\": { \"listen\": \"127.0.0.1:0\", \"threads\": %ld } }\n",
		     db, tmpdir, profiles, threads);
	if (m < 0 || (size_t)m >= sizeof(text) || write_file(conf, text) < 0) {
		fprintf(stderr, "bench api: cannot write %s\n", conf);
		goto out;
	}
	if (ctl_run(ctl, conf, (const char *const[]){ "db", "migrate", NULL }) < 0)
		goto out;

	ld.n = (size_t)n_agents;
	ld.agents = calloc(ld.n, sizeof(*ld.agents));
	if (!ld.agents)
		goto out;
	for (size_t i = 0; i < ld.n; i++)
		ld.agents[i].fd = -1;
	/* Enough jobs for every agent's results at the offered rate, twice
	 * over: a lease that finds none would be an error. */
	n_jobs = ld.n;
	if (ld.result_every > 0)
		n_jobs += 2 * ((size_t)(rate * seconds) / (size_t)ld.result_every + ld.n);
	if (seed(db, ld.agents, ld.n, n_jobs) < 0)
		goto out;

	serve.argv = (const char *const[]){ ctl, "--config", conf, "serve", NULL };
	serve.output_path = log;
	serve.cancel_flag = &stop;
	if (pg_proc_start(&serve, &th.err) < 0) {
		fprintf(stderr, "bench api: %s\n", th.err.msg);
		goto out;
	}
	/* pg_proc_wait() pumps the controller's output into its log until
	 * `stop` terminates it (SIGTERM). */
	if (pthread_create(&tid, NULL, ctl_wait, &th)) {
		fprintf(stderr, "bench api: pthread_create failed\n");
		goto out;
	}
	thread_up = true;
	if (wait_listening(log, serve.pid, &port) < 0)
		goto out;
	ld.addr.sin_family = AF_INET;
	ld.addr.sin_port = htons((uint16_t)port);
	ld.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ld.ctl_pid = serve.pid;
	if (getenv("PG_BENCH_ACKED") && *getenv("PG_BENCH_ACKED")) {
		ld.acked = fopen(getenv("PG_BENCH_ACKED"), "w");
		if (!ld.acked) {
			perror("bench api: PG_BENCH_ACKED");
			goto out;
		}
	}
	if (getenv("PG_BENCH_TRACE") && *getenv("PG_BENCH_TRACE")) {
		/* Per answer: phase, due (us from the phase's start), latency
		 * (us): to see when the slow ones came. */
		ld.trace = fopen(getenv("PG_BENCH_TRACE"), "w");
		if (!ld.trace) {
			perror("bench api: PG_BENCH_TRACE");
			goto out;
		}
	}
	ld.ep = epoll_create1(EPOLL_CLOEXEC);
	if (ld.ep < 0)
		goto out;
	for (size_t i = 0; i < ld.n; i++)
		if (agent_connect(&ld, &ld.agents[i]) < 0) {
			perror("bench api: connect");
			goto out;
		}

	/* The reference first: it also has every connection accepted and
	 * set up by the controller, as the keep-alive connections of agents
	 * that run for days are; the first request of a fresh connection
	 * waits for libmicrohttpd to accept it, a thousand of them at once
	 * for hundreds of milliseconds on this machine. */
	raw_rate = 0;
	if (!ld.kill_after_us) {
		if (run_phase(&ld, PH_RAW, false, (int)seconds, serve.pid, &u) < 0)
			goto out;
		raw_rate = print_line("api-raw", &ld, &u, " (404 from the HTTP thread, no store)");
		if (ld.errors)
			goto out;
	}

	/* The goal: leases, then heartbeats, at the offered rate. */
	ld.gap_ns = (int64_t)(1e9 / (double)rate);
	if (run_phase(&ld, PH_HEARTBEAT, true, (int)seconds, serve.pid, &u) < 0)
		goto out;
	if (ld.killed) {
		if (ld.acked && fflush(ld.acked))
			goto out;
		printf("bench api-killed: dir=%s jobs=%zu answers=%zu results_acked=%llu"
		       " errors=%llu (SIGKILL %ld s into the api phase)\n", tmpdir, n_jobs,
		       ld.lat.n, (unsigned long long)ld.results_acked,
		       (unsigned long long)ld.errors, kill_after_s);
		print_kinds("api-killed", &ld);
		rc = ld.errors ? 1 : 0;
		goto out;
	}
	if (read_rss(serve.pid, &rss, &hwm) < 0) {
		fprintf(stderr, "bench api: cannot read the controller's VmRSS\n");
		goto out;
	}
	qsort(ld.lease_lat.us, ld.lease_lat.n, sizeof(*ld.lease_lat.us), cmp_u32);
	qsort(ld.hb_lat.us, ld.hb_lat.n, sizeof(*ld.hb_lat.us), cmp_u32);
	snprintf(extra, sizeof(extra), " offered=%ld req/s leases=%llu (p99 %.2f ms)"
		 " heartbeats=%llu (p99 %.2f ms) rss=%.1f MiB (peak %.1f MiB)", rate,
		 (unsigned long long)ld.leases, lat_ms(&ld.lease_lat, 0.99),
		 (unsigned long long)ld.heartbeats, lat_ms(&ld.hb_lat, 0.99), rss / 1024.0,
		 hwm / 1024.0);
	w_rate = print_line("api", &ld, &u, extra);
	w_p99 = lat_ms(&ld.lat, 0.99);
	print_kinds("api", &ld);
	if (snprintf(text, sizeof(text), "%s/state", tmpdir) < (int)sizeof(text))
		print_disk_ref(text);
	if (getenv("PG_BENCH_ONLY_API") && *getenv("PG_BENCH_ONLY_API")) {
		rc = ld.errors || ld.leases < ld.n ? 1 : 0;
		goto out;
	}
	if (ld.errors || ld.leases != ld.n)
		goto out;

	ld.heartbeats = 0;
	if (run_phase(&ld, PH_HEARTBEAT, false, (int)seconds, serve.pid, &u) < 0)
		goto out;
	max_rate = print_line("api-max", &ld, &u, " (heartbeats back to back)");
	if (ld.errors)
		goto out;
	if (run_phase(&ld, PH_READ, false, (int)seconds, serve.pid, &u) < 0)
		goto out;
	read_rate = print_line("api-read", &ld, &u, " (GET /api/v1/jobs/ID)");
	if (ld.errors)
		goto out;
	goal = rate >= GOAL_RATE && w_rate >= 0.98 * (double)rate && w_p99 < GOAL_P99_MS;
	printf("bench api-summary: goal=%s (%d req/s, p99 < %.0f ms) write_max/raw=%.2f"
	       " read/raw=%.2f\n", goal ? "met" : "missed", GOAL_RATE, GOAL_P99_MS,
	       raw_rate > 0 ? max_rate / raw_rate : 0.0, raw_rate > 0 ? read_rate / raw_rate : 0.0);
	rc = 0;
out:
	if (thread_up) {
		char desc[PG_PROC_DESC_MAX];

		stop = 1;
		if (pthread_join(tid, NULL)) {
			fprintf(stderr, "bench api: pthread_join failed\n");
			rc = 1;
		} else if (th.rc < 0) {
			fprintf(stderr, "bench api: controller: %s\n", th.err.msg);
			rc = 1;
		} else if (serve.exited && serve.exit_code && !ld.killed) {
			fprintf(stderr, "bench api: the controller %s on SIGTERM\n",
				pg_proc_describe(&serve, desc, sizeof(desc)));
			rc = 1;
		}
	}
	for (size_t i = 0; ld.agents && i < ld.n; i++)
		if (ld.agents[i].fd >= 0)
			close(ld.agents[i].fd);
	if (ld.ep >= 0)
		close(ld.ep);
	if (ld.trace && fclose(ld.trace))
		rc = 1;
	if (ld.acked && fclose(ld.acked))
		rc = 1;
	for (int k = 0; k < K_N; k++)
		free(ld.kind_lat[k].us);
	free(ld.agents);
	free(ld.lat.us);
	free(ld.lease_lat.us);
	free(ld.hb_lat.us);
	pg_proc_release(&serve);
	if (http_up)
		pg_http_global_cleanup();
	if (tmp_made && !getenv("PG_BENCH_KEEP") && !ld.killed) {
		const char *argv[] = { "rm", "-rf", "--", tmpdir, NULL };
		struct pg_proc rm = PG_PROC_INIT;
		struct pg_err err = PG_ERR_INIT;

		rm.argv = argv;
		if (pg_proc_run(&rm, &err) < 0 || !pg_proc_succeeded(&rm))
			fprintf(stderr, "bench api: could not remove %s\n", tmpdir);
		pg_proc_release(&rm);
	} else if (tmp_made) {
		fprintf(stderr, "bench api: kept %s\n", tmpdir);
	}
	return rc;
}
