/* SPDX-License-Identifier: MIT */
/*
 * Controller API load: PG_BENCH_AGENTS simulated agents (default 1000)
 * over loopback, each with its own keep-alive connection through one
 * libcurl multi handle.  Every agent leases a job (wait_s 0), then
 * heartbeats it back to back for PG_BENCH_SECONDS (default 10); the
 * figures are requests per second, p50/p99 latency (from handing the
 * request to libcurl to its last byte, so client queueing counts) and the
 * controller's resident memory.  For reference, the same loop then reads
 * GET /api/v1/jobs/ID (no store write) in the same run: the ratio shows
 * what the store write costs.
 *
 * The controller and its store are real: agents are added with
 * `perfgate-controller agent add`, their jobs inserted into the store
 * before `perfgate-controller serve` starts with an "api" section on
 * port 0.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "err.h"
#include "proc.h"
#include "store.h"

#define DEFAULT_AGENTS 1000
#define DEFAULT_SECONDS 10
#define MAX_AGENTS 20000
#define RESP_MAX 16384
#define LISTEN_WAIT_MS 15000

enum phase {
	PH_LEASE,
	PH_HEARTBEAT,
	PH_READ,
	PH_IDLE,
};

struct agent {
	CURL *h;
	struct curl_slist *hdrs;
	enum phase phase;
	int64_t job;
	int64_t attempt;
	int progress;
	int64_t t0_us;
	char url[256];
	char body[128];
	char auth[128];
	char resp[RESP_MAX];
	size_t resp_len;
	bool resp_over;
};

struct lat {
	uint32_t *us;
	size_t n, alloc;
};

struct load {
	CURLM *multi;
	struct agent *agents;
	size_t n;
	const char *base;
	int64_t deadline_us;
	struct lat lat;
	uint64_t leases, heartbeats, reads, errors;
	int in_flight;
};

struct ctl_thread {
	struct pg_proc *proc;
	struct pg_err err;
	int rc;
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

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct agent *a = arg;
	size_t n = size * nmemb, room = RESP_MAX - 1 - a->resp_len;

	if (n > room) {
		a->resp_over = true;
		n = room;
	}
	memcpy(a->resp + a->resp_len, ptr, n);
	a->resp_len += n;
	a->resp[a->resp_len] = '\0';
	return size * nmemb;
}

/* Set up a's next request for its phase and hand it to the multi handle. */
static int agent_send(struct load *ld, struct agent *a)
{
	CURLcode c = CURLE_OK;
	int n;

	a->resp_len = 0;
	a->resp_over = false;
	a->resp[0] = '\0';
	switch (a->phase) {
	case PH_LEASE:
		n = snprintf(a->url, sizeof(a->url), "%s/api/v1/lease", ld->base);
		if (n < 0 || (size_t)n >= sizeof(a->url))
			return -1;
		n = snprintf(a->body, sizeof(a->body), "{\"wait_s\": 0}");
		break;
	case PH_HEARTBEAT:
		n = snprintf(a->url, sizeof(a->url), "%s/api/v1/jobs/%lld/heartbeat", ld->base,
			     (long long)a->job);
		if (n < 0 || (size_t)n >= sizeof(a->url))
			return -1;
		a->progress = (a->progress + 1) % 100;
		n = snprintf(a->body, sizeof(a->body),
			     "{\"attempt\": %lld, \"stage\": \"build\", \"progress\": %d}",
			     (long long)a->attempt, a->progress);
		break;
	case PH_READ:
		n = snprintf(a->url, sizeof(a->url), "%s/api/v1/jobs/%lld", ld->base,
			     (long long)a->job);
		break;
	default:
		return -1;
	}
	if (n < 0 || (size_t)n >= sizeof(a->url))
		return -1;
	if (a->phase == PH_READ)
		c = curl_easy_setopt(a->h, CURLOPT_HTTPGET, 1L);
	else
		c = curl_easy_setopt(a->h, CURLOPT_POSTFIELDS, a->body);
	if (c != CURLE_OK || curl_easy_setopt(a->h, CURLOPT_URL, a->url) != CURLE_OK)
		return -1;
	a->t0_us = now_us();
	if (curl_multi_add_handle(ld->multi, a->h) != CURLM_OK)
		return -1;
	ld->in_flight++;
	return 0;
}

/* Read the job id and attempt from a lease answer. */
static int parse_lease(struct agent *a)
{
	cJSON *root = cJSON_ParseWithLength(a->resp, a->resp_len);
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

/* One request of a finished: account for it and send the next one. */
static int agent_done(struct load *ld, struct agent *a, CURLcode res)
{
	int64_t t1 = now_us();
	long status = 0;

	ld->in_flight--;
	if (curl_multi_remove_handle(ld->multi, a->h) != CURLM_OK)
		return -1;
	if (res == CURLE_OK &&
	    curl_easy_getinfo(a->h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
		return -1;
	if (res != CURLE_OK || status != 200) {
		if (ld->errors < 5)
			fprintf(stderr, "bench api: %s: %s, status %ld: %.200s\n", a->url,
				curl_easy_strerror(res), status, a->resp);
		ld->errors++;
		a->phase = PH_IDLE;
		return 0;
	}
	if (lat_add(&ld->lat, t1 - a->t0_us) < 0)
		return -1;
	switch (a->phase) {
	case PH_LEASE:
		ld->leases++;
		if (a->resp_over || parse_lease(a) < 0) {
			fprintf(stderr, "bench api: lease answer without job: %.200s\n", a->resp);
			ld->errors++;
			a->phase = PH_IDLE;
			return 0;
		}
		a->phase = PH_HEARTBEAT;
		break;
	case PH_HEARTBEAT:
		ld->heartbeats++;
		if (strstr(a->resp, "\"cancel\":true") || strstr(a->resp, "\"cancel\": true")) {
			fprintf(stderr, "bench api: job %lld cancelled\n", (long long)a->job);
			ld->errors++;
			a->phase = PH_IDLE;
			return 0;
		}
		break;
	case PH_READ:
		ld->reads++;
		break;
	default:
		return -1;
	}
	if (t1 >= ld->deadline_us)
		return 0;
	return agent_send(ld, a);
}

/* Run every agent from its current phase until the deadline, then drain. */
static int load_run(struct load *ld, int seconds)
{
	int running = 0;

	ld->deadline_us = now_us() + (int64_t)seconds * 1000000;
	for (size_t i = 0; i < ld->n; i++)
		if (agent_send(ld, &ld->agents[i]) < 0)
			return -1;
	while (ld->in_flight > 0) {
		struct CURLMsg *m;
		int left;

		if (curl_multi_perform(ld->multi, &running) != CURLM_OK ||
		    curl_multi_poll(ld->multi, NULL, 0, 100, NULL) != CURLM_OK ||
		    curl_multi_perform(ld->multi, &running) != CURLM_OK)
			return -1;
		while ((m = curl_multi_info_read(ld->multi, &left))) {
			struct agent *a;

			if (m->msg != CURLMSG_DONE)
				continue;
			if (curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&a) != CURLE_OK)
				return -1;
			if (agent_done(ld, a, m->data.result) < 0)
				return -1;
		}
	}
	return 0;
}

static int agent_setup(struct agent *a, const char *token)
{
	int n = snprintf(a->auth, sizeof(a->auth), "Authorization: Bearer %s", token);
	struct curl_slist *l;

	if (n < 0 || (size_t)n >= sizeof(a->auth))
		return -1;
	a->h = curl_easy_init();
	if (!a->h)
		return -1;
	l = curl_slist_append(NULL, a->auth);
	if (!l)
		return -1;
	a->hdrs = l;
	l = curl_slist_append(a->hdrs, "Content-Type: application/json");
	if (!l)
		return -1;
	a->hdrs = l;
	/* No "Expect: 100-continue" round trip. */
	l = curl_slist_append(a->hdrs, "Expect:");
	if (!l)
		return -1;
	a->hdrs = l;
	if (curl_easy_setopt(a->h, CURLOPT_HTTPHEADER, a->hdrs) != CURLE_OK ||
	    curl_easy_setopt(a->h, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK ||
	    curl_easy_setopt(a->h, CURLOPT_WRITEDATA, a) != CURLE_OK ||
	    curl_easy_setopt(a->h, CURLOPT_PRIVATE, a) != CURLE_OK ||
	    curl_easy_setopt(a->h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(a->h, CURLOPT_PROXY, "") != CURLE_OK ||
	    curl_easy_setopt(a->h, CURLOPT_CONNECTTIMEOUT_MS, 10000L) != CURLE_OK ||
	    curl_easy_setopt(a->h, CURLOPT_TIMEOUT_MS, 30000L) != CURLE_OK ||
	    curl_easy_setopt(a->h, CURLOPT_TCP_NODELAY, 1L) != CURLE_OK)
		return -1;
	return 0;
}

/* ---- the controller -------------------------------------------------- */

static void *ctl_wait(void *arg)
{
	struct ctl_thread *t = arg;

	t->rc = pg_proc_wait(t->proc, &t->err);
	return NULL;
}

/* Run `CTL --config CONF ARGS...` to completion; its output lands in
 * *tail_out (malloc'd) when asked for. */
static int ctl_run(const char *ctl, const char *conf, const char *const *args, char **tail_out)
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
	if (tail_out) {
		*tail_out = strdup(pg_buf_str(&p.tail));
		if (!*tail_out)
			goto out;
	}
	rc = 0;
out:
	pg_proc_release(&p);
	return rc;
}

/* The 64-hex-digit line of `agent add` output, copied to tok. */
static int find_token(const char *out, char tok[65])
{
	const char *line = out;

	while (*line) {
		size_t len = strcspn(line, "\n");

		if (len == 64 && strspn(line, "0123456789abcdef") >= 64) {
			memcpy(tok, line, 64);
			tok[64] = '\0';
			return 0;
		}
		line += len;
		if (*line)
			line++;
	}
	return -1;
}

/*
 * A series and n runs of one queued job each for host class "demo".  One
 * run per job, as in life (a run has a few jobs): the lease query sums the
 * attempts of the candidate's run, so a single run holding every job would
 * make each lease walk n^2 rows.
 */
static int seed_jobs(const char *db, size_t n)
{
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;
	int rc = -1;

	if (store_open(&st, db, &err) < 0 || store_begin(st, &err) < 0)
		goto out;
	if (store_exec(st,
		       "INSERT INTO series (id, project, root_msgid, total, title, submitter_addr,"
		       " state, received_at, completed_at) VALUES (1, 'dpdk', 'bench@x', 1, 'bench',"
		       " 'a@x', 'complete', 1, 1);",
		       "seed series", &err) < 0)
		goto rollback;
	for (size_t i = 0; i < n; i++) {
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
		goto out;
	rc = 0;
	goto out;
rollback:
	store_rollback(st);
out:
	if (rc)
		fprintf(stderr, "bench api: %s\n", err.msg);
	store_close(st);
	return rc;
}

/* Wait for "api: listening on http://..." in the log; base gets the URL. */
static int wait_listening(const char *log, pid_t pid, char *base, size_t size)
{
	int64_t end = now_us() + (int64_t)LISTEN_WAIT_MS * 1000;
	static const char mark[] = "api: listening on ";

	while (now_us() < end) {
		char line[1024];
		FILE *f = fopen(log, "r");

		if (f) {
			while (fgets(line, sizeof(line), f)) {
				char *p = strstr(line, mark);
				size_t len;

				if (!p)
					continue;
				p += sizeof(mark) - 1;
				len = strcspn(p, " \n");
				if (len >= size || strncmp(p, "http://", 7))
					continue;
				memcpy(base, p, len);
				base[len] = '\0';
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

static void print_line(const char *name, const struct load *ld, size_t agents, double secs,
		       const char *extra)
{
	uint64_t reqs = ld->lat.n;

	printf("bench %s: agents=%zu requests=%llu rate=%.0f req/s p50=%.2f ms p99=%.2f ms"
	       " errors=%llu%s\n", name, agents, (unsigned long long)reqs,
	       secs > 0 ? (double)reqs / secs : 0.0, lat_ms(&ld->lat, 0.50),
	       lat_ms(&ld->lat, 0.99), (unsigned long long)ld->errors, extra);
}

int main(void)
{
	char tmpdir[] = "/tmp/pg-bench-api.XXXXXX";
	char ctl[PATH_MAX], profiles[PATH_MAX], conf[PATH_MAX], db[PATH_MAX], log[PATH_MAX];
	char text[4 * PATH_MAX], base[256], extra[256];
	struct pg_proc serve = PG_PROC_INIT;
	struct ctl_thread th = { .proc = &serve, .err = PG_ERR_INIT, .rc = 0 };
	volatile sig_atomic_t stop = 0;
	struct load ld = { 0 };
	struct rlimit rl;
	pthread_t tid;
	bool tmp_made = false, curl_up = false, thread_up = false;
	long n_agents, seconds, rss = -1, hwm = -1;
	double write_rate, write_s, read_s;
	uint64_t write_reqs;
	int64_t t0;
	int rc = 1, m;

	if (env_int("PG_BENCH_AGENTS", DEFAULT_AGENTS, 1, MAX_AGENTS, &n_agents) < 0 ||
	    env_int("PG_BENCH_SECONDS", DEFAULT_SECONDS, 1, 3600, &seconds) < 0)
		return 2;
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
	if (!mkdtemp(tmpdir)) {
		perror("bench api: mkdtemp");
		return 1;
	}
	tmp_made = true;
	if (snprintf(conf, sizeof(conf), "%s/c.json", tmpdir) < 0 ||
	    snprintf(db, sizeof(db), "%s/state/perfgate.db", tmpdir) < 0 ||
	    snprintf(log, sizeof(log), "%s/serve.log", tmpdir) < 0)
		goto out;
	m = snprintf(text, sizeof(text),
		     "{ \"db\": \"%s\", \"data_dir\": \"%s/state\",\n"
		     "  \"profiles_dir\": \"%s\", \"profiles\": [\"demo.json\"],\n"
		     "  \"api\": { \"listen\": \"127.0.0.1:0\", \"threads\": 4 } }\n",
		     db, tmpdir, profiles);
	if (m < 0 || (size_t)m >= sizeof(text) || write_file(conf, text) < 0) {
		fprintf(stderr, "bench api: cannot write %s\n", conf);
		goto out;
	}
	if (ctl_run(ctl, conf, (const char *const[]){ "db", "migrate", NULL }, NULL) < 0)
		goto out;

	ld.n = (size_t)n_agents;
	ld.agents = calloc(ld.n, sizeof(*ld.agents));
	if (!ld.agents)
		goto out;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		goto out;
	curl_up = true;
	t0 = now_us();
	for (size_t i = 0; i < ld.n; i++) {
		char name[32], tok[65], *out = NULL;
		int bad;

		snprintf(name, sizeof(name), "bench-%zu", i);
		if (ctl_run(ctl, conf, (const char *const[]){ "agent", "add", name, "--labels",
				"pool=demo", NULL }, &out) < 0)
			goto out;
		bad = find_token(out, tok);
		if (bad)
			fprintf(stderr, "bench api: agent add %s printed no token: %s\n", name, out);
		free(out);
		if (bad || agent_setup(&ld.agents[i], tok) < 0)
			goto out;
	}
	fprintf(stderr, "bench api: %zu agents added in %.1f s\n", ld.n,
		(double)(now_us() - t0) / 1e6);
	if (seed_jobs(db, ld.n) < 0)
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
	if (wait_listening(log, serve.pid, base, sizeof(base)) < 0)
		goto out;
	ld.base = base;
	ld.multi = curl_multi_init();
	if (!ld.multi ||
	    curl_multi_setopt(ld.multi, CURLMOPT_MAXCONNECTS, (long)ld.n + 16) != CURLM_OK)
		goto out;

	/* Writes: lease, then heartbeats. */
	t0 = now_us();
	if (load_run(&ld, (int)seconds) < 0) {
		fprintf(stderr, "bench api: the load loop failed\n");
		goto out;
	}
	write_s = (double)(now_us() - t0) / 1e6;
	if (read_rss(serve.pid, &rss, &hwm) < 0) {
		fprintf(stderr, "bench api: cannot read the controller's VmRSS\n");
		goto out;
	}
	qsort(ld.lat.us, ld.lat.n, sizeof(*ld.lat.us), cmp_u32);
	write_reqs = ld.lat.n;
	write_rate = (double)write_reqs / write_s;
	snprintf(extra, sizeof(extra), " rss=%.1f MiB (peak %.1f MiB) (heartbeats %llu, leases %llu)",
		 rss / 1024.0, hwm / 1024.0, (unsigned long long)ld.heartbeats,
		 (unsigned long long)ld.leases);
	print_line("api", &ld, ld.n, write_s, extra);
	if (ld.errors || ld.leases != ld.n)
		goto out;

	/* Reference: the same loop reading each agent's job. */
	for (size_t i = 0; i < ld.n; i++)
		ld.agents[i].phase = PH_READ;
	ld.lat.n = 0;
	t0 = now_us();
	if (load_run(&ld, (int)seconds) < 0) {
		fprintf(stderr, "bench api: the read loop failed\n");
		goto out;
	}
	read_s = (double)(now_us() - t0) / 1e6;
	qsort(ld.lat.us, ld.lat.n, sizeof(*ld.lat.us), cmp_u32);
	snprintf(extra, sizeof(extra), " (GET /api/v1/jobs/ID) write/read=%.2f",
		 ld.lat.n ? write_rate / ((double)ld.lat.n / read_s) : 0.0);
	print_line("api-read", &ld, ld.n, read_s, extra);
	if (ld.errors)
		goto out;
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
		} else if (serve.exited && serve.exit_code) {
			fprintf(stderr, "bench api: the controller %s on SIGTERM\n",
				pg_proc_describe(&serve, desc, sizeof(desc)));
			rc = 1;
		}
	}
	for (size_t i = 0; ld.agents && i < ld.n; i++) {
		if (ld.multi && ld.agents[i].h)
			curl_multi_remove_handle(ld.multi, ld.agents[i].h);
		curl_easy_cleanup(ld.agents[i].h);
		curl_slist_free_all(ld.agents[i].hdrs);
	}
	if (ld.multi)
		curl_multi_cleanup(ld.multi);
	free(ld.agents);
	free(ld.lat.us);
	if (curl_up)
		curl_global_cleanup();
	pg_proc_release(&serve);
	if (tmp_made) {
		const char *argv[] = { "rm", "-rf", "--", tmpdir, NULL };
		struct pg_proc rm = PG_PROC_INIT;
		struct pg_err err = PG_ERR_INIT;

		rm.argv = argv;
		if (pg_proc_run(&rm, &err) < 0 || !pg_proc_succeeded(&rm))
			fprintf(stderr, "bench api: could not remove %s\n", tmpdir);
		pg_proc_release(&rm);
	}
	return rc;
}
