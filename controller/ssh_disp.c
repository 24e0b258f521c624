/* SPDX-License-Identifier: MIT */
/*
 * The SSH dispatcher (see ssh_disp.h): a thread per host, each leasing
 * through the controller's own API with the host's in-memory token and
 * relaying run-one's lines (lib/runone.h).
 */
#include "ssh_disp.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "api_auth.h"
#include "base64.h"
#include "buf.h"
#include "fmt.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "runone.h"
#include "sched.h"
#include "ssh_conn.h"
#include "ssh_state.h"
#include "store.h"
#include "thread.h"
#include "timeutil.h"

#define DISP_SLICE_MS 1000
#define DISP_LEASE_WAIT_S 5		/* one lease long-poll: stop stays prompt */
#define DISP_REQUEST_MS 30000L
#define DISP_RESULT_TRIES 5
#define DISP_EXIT_WAIT_MS 30000
#define DISP_SMALL_LINE ((size_t)16 * 1024 * 1024)
#define DISP_VERSION_MAX 128

struct ssh_disp;

struct disp_host {
	struct ssh_disp *d;
	const struct ssh_host_cfg *h;
	pthread_t tid;
	bool started;
	int64_t agent_id;
	char token[API_TOKEN_HEX + 1];
	struct store *st;
	struct pg_http_client *http;
	struct pg_http_response resp;
	struct ssh_conn *conn;
	char fp[SSH_FP_MAX];
	char version[DISP_VERSION_MAX];
	uint64_t rnd;
	unsigned int failures;
	/* The state last written (ssh_state.h), so that an idle host's lease
	 * polls do not write the store every few seconds. */
	enum ssh_state shown;
	int64_t shown_job;
	bool spool_left;	/* the last collect left results undelivered */
};

struct ssh_disp {
	const struct ctl_config *cfg;
	char api_url[512];
	char self_agent[PATH_MAX];	/* this build's perfgate-agent */
	atomic_bool stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int64_t slots;			/* connections that may still open */
	int64_t waiting;		/* hosts waiting for one */
	struct disp_host *hosts;
	size_t n;
};

/* What ended a connection's work. */
enum disp_end {
	DISP_OK = 0,		/* go on */
	DISP_STOP,		/* the dispatcher stops */
	DISP_LOST,		/* the connection failed: reconnect */
	DISP_YIELD,		/* idle while other hosts wait for a slot: give
				 * the connection up, queue for a slot again */
};

static bool disp_stopping(const struct disp_host *dh)
{
	return atomic_load(&dh->d->stop);
}

static int64_t disp_now(void)
{
	return pg_time_wall_ms() / 1000;
}

/* Sleep ms in slices; true when stopping. */
static bool disp_pause(struct disp_host *dh, int64_t ms)
{
	int64_t end = pg_time_mono_ms() + ms, now;

	while (!disp_stopping(dh) && (now = pg_time_mono_ms()) < end)
		pg_sleep_ms(end - now < 200 ? end - now : 200, NULL);
	return disp_stopping(dh);
}

/* Record state s (logging a store failure: the state is for people, the
 * work goes on without it). */
static void disp_state(struct disp_host *dh, enum ssh_state s, int64_t job, int64_t attempt)
{
	struct pg_err err = PG_ERR_INIT;

	if (s == dh->shown && job == dh->shown_job)
		return;
	if (ssh_state_set(dh->st, dh->agent_id, s, job, attempt, disp_now(), &err) < 0) {
		pg_log_warn("ssh", "host '%s': %s", dh->h->name, err.msg);
		return;
	}
	dh->shown = s;
	dh->shown_job = job;
}

static void disp_error(struct disp_host *dh, const char *msg)
{
	struct pg_err err = PG_ERR_INIT;

	pg_log_warn("ssh", "%s", msg);
	dh->shown = SSH_STATE_ERROR;
	if (ssh_state_error(dh->st, dh->agent_id, msg, dh->fp[0] ? dh->fp : NULL, disp_now(),
			    &err) < 0)
		pg_log_warn("ssh", "host '%s': %s", dh->h->name, err.msg);
}

/* ---- the controller's API, as the host's agent ---------------------- */

/* One request to the API; returns the HTTP status, or 0 when no answer
 * came (err says why). */
static long disp_api(struct disp_host *dh, const char *method, const char *path,
		     const char *ctype, const void *body, size_t len, long timeout_ms,
		     size_t max_body, struct pg_err *err)
{
	struct pg_http_opts o = PG_HTTP_OPTS_INIT;
	char url[1024];

	if (pg_fmt(url, sizeof(url), "%s%s", dh->d->api_url, path) < 0) {
		pg_err_set(err, PG_EINVAL, "URL too long: %s", path);
		return 0;
	}
	o.timeout_ms = timeout_ms;
	o.bearer_token = dh->token;
	o.content_type = ctype;
	if (max_body)
		o.max_body = max_body;
	if (!dh->http && !(dh->http = pg_http_client_new(err)))
		return 0;
	if (pg_http_client_request(dh->http, method, url, body, len, &o, &dh->resp, err) < 0)
		return 0;
	return dh->resp.status;
}

static long disp_post_json(struct disp_host *dh, const char *path, const cJSON *o,
			   long timeout_ms, struct pg_err *err)
{
	char *text = pg_json_print(o, false);
	long status;

	if (!text) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		return 0;
	}
	status = disp_api(dh, "POST", path, "application/json", text, strlen(text), timeout_ms,
			  0, err);
	free(text);
	return status;
}

/* The answer's body, parsed, when it is a JSON object; NULL otherwise. */
static cJSON *disp_answer(struct disp_host *dh)
{
	struct pg_err err = PG_ERR_INIT;
	cJSON *o = NULL;

	if (!dh->resp.body.len ||
	    pg_json_parse(dh->resp.body.data, dh->resp.body.len, &o, &err) < 0)
		return NULL;
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---- lines to run-one ----------------------------------------------- */

static int disp_send(struct ssh_cmd *cmd, cJSON *o, struct pg_err *err)
{
	char *text = o ? pg_json_print(o, false) : NULL;
	int rc;

	cJSON_Delete(o);
	if (!text)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	rc = ssh_cmd_write(cmd, text, strlen(text), err);
	if (rc == 0)
		rc = ssh_cmd_write(cmd, "\n", 1, err);
	free(text);
	return rc;
}

static cJSON *disp_msg(const char *type)
{
	cJSON *o = cJSON_CreateObject();

	if (o && !cJSON_AddStringToObject(o, "type", type)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* {"type": type, "job", "attempt", "status"...}: an ack or a reject. */
static int disp_send_ack(struct ssh_cmd *cmd, bool ack, int64_t job, int64_t attempt,
			 const char *status, long http, const char *answer, struct pg_err *err)
{
	cJSON *o = disp_msg(ack ? RUNONE_ACK : RUNONE_REJECT);

	if (o && (!cJSON_AddNumberToObject(o, "job", (double)job) ||
		  !cJSON_AddNumberToObject(o, "attempt", (double)attempt) ||
		  !(ack ? cJSON_AddStringToObject(o, "status", status)
			: cJSON_AddNumberToObject(o, "status", (double)http)) ||
		  (!ack && !cJSON_AddStringToObject(o, "answer", answer ? answer : "")))) {
		cJSON_Delete(o);
		o = NULL;
	}
	return disp_send(cmd, o, err);
}

/* ---- the remote program --------------------------------------------- */

/* argv of `AGENT run-one MODE` with the host's options; *argv points into
 * the static slots of v. */
struct disp_argv {
	const char *v[16];
};

static void disp_argv_runone(const struct ssh_host_cfg *h, const char *mode, bool job_opts,
			     struct disp_argv *a)
{
	size_t n = 0;

	a->v[n++] = h->agent;
	a->v[n++] = "run-one";
	if (mode)
		a->v[n++] = mode;
	if (h->agent_config) {
		a->v[n++] = "--config";
		a->v[n++] = h->agent_config;
	}
	if (h->spool_dir && (job_opts || (mode && strcmp(mode, "--collect") == 0))) {
		a->v[n++] = "--spool-dir";
		a->v[n++] = h->spool_dir;
	}
	if (job_opts && h->work_dir) {
		a->v[n++] = "--work-dir";
		a->v[n++] = h->work_dir;
	}
	if (job_opts && h->runner) {
		a->v[n++] = "--runner";
		a->v[n++] = h->runner;
	}
	a->v[n] = NULL;
}

/* Parse a line of run-one as an object with a "type"; NULL (err set) when
 * it is not one. */
static cJSON *disp_parse_line(struct disp_host *dh, const struct pg_buf *line, const char **type,
			      struct pg_err *err)
{
	cJSON *o = NULL;

	if (pg_json_parse(line->data ? line->data : "", line->len, &o, err) < 0 ||
	    !cJSON_IsObject(o) || pg_json_get_string(o, "type", true, type, err) < 0) {
		if (!err->msg[0])
			pg_err_set(err, PG_EINVAL, "not a JSON object");
		pg_err_prefix(err, "host '%s': a line of run-one", dh->h->name);
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/*
 * Run a short command and return its first line in line (bounded), with
 * its exit status.  0, or -1 (the connection failed, or no line: err says
 * why, with the command's stderr).
 */
static int disp_run_short(struct disp_host *dh, const char *const *argv, struct pg_buf *line,
			  int *status, struct pg_err *err)
{
	struct ssh_cmd *cmd = NULL;
	int rc = -1, got;

	*status = -1;
	if (ssh_cmd_start(dh->conn, argv, &cmd, err) < 0 || ssh_cmd_send_eof(cmd, err) < 0)
		goto out;
	got = ssh_cmd_read_line(cmd, line, dh->d->cfg->ssh.io_timeout_s * 1000, err);
	if (got < 0)
		goto out;
	if (ssh_cmd_wait(cmd, DISP_EXIT_WAIT_MS, status, err) < 0)
		goto out;
	if (got == 0) {
		pg_err_set(err, PG_EIO, "host '%s': `%s %s` printed nothing (exit %d)%s%s",
			   dh->h->name, argv[0], argv[1] ? argv[1] : "", *status,
			   ssh_cmd_stderr_tail(cmd)[0] ? ": " : "", ssh_cmd_stderr_tail(cmd));
		goto out;
	}
	rc = 0;
out:
	ssh_cmd_free(cmd);
	return rc;
}

/* `AGENT --version` into dh->version; with install "copy", this build's
 * agent first when it differs. */
static int disp_agent_version(struct disp_host *dh, struct pg_err *err)
{
	const char *argv[] = { dh->h->agent, "--version", NULL };
	struct pg_buf line = PG_BUF_INIT(4096);
	char want[DISP_VERSION_MAX];
	int status, rc = -1;

	pg_fmt_cut(want, sizeof(want), "perfgate-agent %s", PG_VERSION);
	for (int round = 0; round < 2; round++) {
		struct pg_err verr = PG_ERR_INIT;
		bool ok = disp_run_short(dh, argv, &line, &status, &verr) == 0 && status == 0;

		if (ok)
			pg_fmt_cut(dh->version, sizeof(dh->version), "%s", pg_buf_str(&line));
		if (ok && (!dh->h->install_copy || strcmp(dh->version, want) == 0)) {
			rc = 0;
			break;
		}
		if (!dh->h->install_copy || round == 1) {
			if (ok)
				pg_err_set(err, PG_ENOTFOUND, "host '%s': the agent program %s is "
					   "'%s', not '%s'", dh->h->name, dh->h->agent, dh->version,
					   want);
			else
				pg_err_set(err, PG_ENOTFOUND, "host '%s': the agent program %s does "
					   "not run (exit %d): %s", dh->h->name, dh->h->agent, status,
					   verr.msg[0] ? verr.msg : "no output");
			break;
		}
		pg_log_info("ssh", "host '%s': %s is %s%s; copying this build's (%s) over SFTP",
			    dh->h->name, dh->h->agent, ok ? "at " : "missing or broken",
			    ok ? dh->version : "", PG_VERSION);
		if (ssh_conn_upload(dh->conn, dh->d->self_agent, dh->h->agent, 0755, err) < 0)
			break;
	}
	pg_buf_release(&line);
	return rc;
}

/* Labels (the host's, the configuration's over them) and facts, from
 * `run-one --facts`; then POST /agents/register. */
static int disp_register(struct disp_host *dh, struct pg_err *err)
{
	struct disp_argv a;
	struct pg_buf line = PG_BUF_INIT(SCHED_FACTS_MAX * 2);
	cJSON *o = NULL, *req = NULL, *labels, *facts;
	const char *type = NULL;
	int status, rc = -1;
	long http;

	disp_argv_runone(dh->h, "--facts", false, &a);
	if (disp_run_short(dh, a.v, &line, &status, err) < 0)
		goto out;
	o = disp_parse_line(dh, &line, &type, err);
	if (!o)
		goto out;
	labels = cJSON_GetObjectItemCaseSensitive(o, "labels");
	facts = cJSON_GetObjectItemCaseSensitive(o, "facts");
	if (strcmp(type, RUNONE_FACTS) != 0 || !cJSON_IsObject(labels) || !cJSON_IsObject(facts)) {
		pg_err_set(err, PG_EINVAL, "host '%s': run-one --facts gave no labels and facts",
			   dh->h->name);
		goto out;
	}
	for (size_t i = 0; i < dh->h->n_labels; i++) {
		cJSON_DeleteItemFromObjectCaseSensitive(labels, dh->h->label_keys[i]);
		if (!cJSON_AddStringToObject(labels, dh->h->label_keys[i], dh->h->label_values[i]))
			goto nomem;
	}
	req = cJSON_CreateObject();
	if (!req || !cJSON_AddItemReferenceToObject(req, "labels", labels) ||
	    !cJSON_AddItemReferenceToObject(req, "facts", facts))
		goto nomem;
	http = disp_post_json(dh, "/api/v1/agents/register", req, DISP_REQUEST_MS, err);
	if (http != 200) {
		if (http)
			pg_err_set(err, PG_EIO, "register: HTTP %ld: %.200s", http,
				   pg_buf_str(&dh->resp.body));
		pg_err_prefix(err, "host '%s'", dh->h->name);
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "out of memory");
out:
	cJSON_Delete(req);
	cJSON_Delete(o);
	pg_buf_release(&line);
	return rc;
}

/*
 * Post a result body (the bytes run-one spooled) and tell run-one what
 * became of it: an ack once recorded, a reject when refused.  A result
 * that could not be delivered (no answer, 5xx) gets neither: it stays in
 * the host's spool.  Returns 1 when answered (ack or reject), 0 when not
 * delivered, -1 when the line could not be written (connection lost).
 */
static int disp_result(struct disp_host *dh, struct ssh_cmd *cmd, int64_t job, int64_t attempt,
		       const char *body, struct pg_err *err)
{
	char path[128], status[32] = "";
	long http = 0;
	cJSON *ans;

	if (pg_fmt(path, sizeof(path), "/api/v1/jobs/%lld/result", (long long)job) < 0)
		return pg_err_set(err, PG_EINVAL, "job id");
	for (unsigned int i = 0; i < DISP_RESULT_TRIES && !disp_stopping(dh); i++) {
		struct pg_err herr = PG_ERR_INIT;

		http = disp_api(dh, "POST", path, "application/json", body, strlen(body),
				DISP_REQUEST_MS, 0, &herr);
		if (http && http < 500 && http != 429 && http != 408)
			break;
		pg_log_warn("ssh", "host '%s': job %lld attempt %lld: result not delivered: %s",
			    dh->h->name, (long long)job, (long long)attempt,
			    http ? "HTTP 5xx" : herr.msg);
		if (disp_pause(dh, pg_backoff_ms(i, 1000, 10000, &dh->rnd)))
			break;
	}
	if (http == 200) {
		ans = disp_answer(dh);
		pg_fmt_cut(status, sizeof(status), "%s",
			   ans ? cJSON_GetStringValue(cJSON_GetObjectItem(ans, "status")) ?
				 cJSON_GetStringValue(cJSON_GetObjectItem(ans, "status")) : "" : "");
		cJSON_Delete(ans);
		if (strcmp(status, "recorded") && strcmp(status, "duplicate") &&
		    strcmp(status, "acknowledged"))
			http = 500;	/* not an answer the contract allows: keep it */
	}
	if (http == 200) {
		pg_log_info("ssh", "host '%s': job %lld attempt %lld: result delivered (%s)",
			    dh->h->name, (long long)job, (long long)attempt, status);
		return disp_send_ack(cmd, true, job, attempt, status, 0, NULL, err) < 0 ? -1 : 1;
	}
	if (http >= 400 && http < 500 && http != 429 && http != 408) {
		pg_log_warn("ssh", "host '%s': job %lld attempt %lld: the controller refused the "
			    "result: HTTP %ld: %.200s", dh->h->name, (long long)job,
			    (long long)attempt, http, pg_buf_str(&dh->resp.body));
		return disp_send_ack(cmd, false, job, attempt, NULL, http,
				     pg_buf_str(&dh->resp.body), err) < 0 ? -1 : 1;
	}
	return 0;
}

/* A "result" line: its job, attempt and body. */
static int disp_result_line(struct disp_host *dh, struct ssh_cmd *cmd, const cJSON *o,
			    struct pg_err *err)
{
	int64_t job = 0, attempt = 0;
	const char *body = NULL;

	if (pg_json_get_int(o, "job", true, 1, INT64_MAX, &job, err) < 0 ||
	    pg_json_get_int(o, "attempt", true, 1, INT32_MAX, &attempt, err) < 0 ||
	    pg_json_get_string(o, "body", true, &body, err) < 0) {
		pg_err_prefix(err, "host '%s': a result line", dh->h->name);
		pg_log_warn("ssh", "%s: ignored", err->msg);
		pg_err_clear(err);
		return 0;
	}
	return disp_result(dh, cmd, job, attempt, body, err);
}

#define DISP_LINE_STOP 2

/*
 * The next line of cmd's output, waiting in slices so that a stop is seen
 * within one: 1 a line, 0 the end of the output, DISP_LINE_STOP when the
 * dispatcher stops, -1 with err (PG_ETIMEOUT after limit_ms without a
 * line, or the channel's failure).
 */
static int disp_next_line(struct disp_host *dh, struct ssh_cmd *cmd, struct pg_buf *line,
			  int64_t limit_ms, struct pg_err *err)
{
	for (int64_t silence = 0;;) {
		int got;

		if (disp_stopping(dh))
			return DISP_LINE_STOP;
		got = ssh_cmd_read_line(cmd, line, DISP_SLICE_MS, err);
		if (got >= 0 || err->code != PG_ETIMEOUT)
			return got;
		silence += DISP_SLICE_MS;
		if (silence >= limit_ms)
			return pg_err_set(err, PG_ETIMEOUT, "host '%s': nothing from run-one for "
					  "%lld s", dh->h->name, (long long)(limit_ms / 1000));
		pg_err_clear(err);
	}
}

/* `run-one --collect`: deliver what the host's spool holds. */
static enum disp_end disp_collect(struct disp_host *dh, struct pg_err *err)
{
	struct disp_argv a;
	struct pg_buf line = PG_BUF_INIT(RUNONE_LINE_MAX);
	struct ssh_cmd *cmd = NULL;
	enum disp_end end = DISP_LOST;
	int64_t count = -1, done = 0;
	int got, status = -1;

	disp_argv_runone(dh->h, "--collect", false, &a);
	if (ssh_cmd_start(dh->conn, a.v, &cmd, err) < 0)
		goto out;
	for (;;) {
		const char *type = NULL;
		cJSON *o;

		got = disp_next_line(dh, cmd, &line, (RUNONE_COLLECT_WAIT_S + 30) * 1000LL, err);
		if (got == DISP_LINE_STOP) {
			end = DISP_STOP;
			goto out;
		}
		if (got <= 0)
			break;
		o = disp_parse_line(dh, &line, &type, err);
		if (!o)
			goto out;
		if (strcmp(type, RUNONE_RESULT) == 0) {
			got = disp_result_line(dh, cmd, o, err);
			done += got > 0;
		} else if (strcmp(type, RUNONE_COLLECTED) == 0) {
			count = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "count"));
			got = disp_send(cmd, disp_msg(RUNONE_DONE), err);
		} else {
			got = 0;
		}
		cJSON_Delete(o);
		if (got < 0)
			goto out;
		if (count >= 0)
			break;
	}
	if (got < 0 || count < 0) {
		if (got == 0)
			pg_err_set(err, PG_EIO, "host '%s': run-one --collect ended early%s%s",
				   dh->h->name, ssh_cmd_stderr_tail(cmd)[0] ? ": " : "",
				   ssh_cmd_stderr_tail(cmd));
		goto out;
	}
	if (ssh_cmd_send_eof(cmd, err) < 0 || ssh_cmd_wait(cmd, DISP_EXIT_WAIT_MS, &status, err) < 0)
		goto out;
	if (count)
		pg_log_info("ssh", "host '%s': %lld spooled result(s) found, %lld delivered",
			    dh->h->name, (long long)count, (long long)done);
	/* What the controller could not take now is offered again after the
	 * next job (and at the next connection). */
	dh->spool_left = done < count;
	pg_err_clear(err);
	end = DISP_OK;
out:
	ssh_cmd_free(cmd);
	pg_buf_release(&line);
	return end;
}

/* A heartbeat line: renew the lease; a cancel line back when the
 * controller says stop. */
static int disp_heartbeat(struct disp_host *dh, struct ssh_cmd *cmd, int64_t job,
			  int64_t attempt, const cJSON *o, struct pg_err *err)
{
	const char *stage = cJSON_GetStringValue(cJSON_GetObjectItem(o, "stage"));
	const cJSON *progress = cJSON_GetObjectItem(o, "progress");
	struct pg_err herr = PG_ERR_INIT;
	cJSON *req = cJSON_CreateObject(), *ans, *msg;
	const char *why = NULL;
	char path[128];
	long http;

	if (!req || !cJSON_AddNumberToObject(req, "attempt", (double)attempt) ||
	    (stage && !cJSON_AddStringToObject(req, "stage", stage)) ||
	    (cJSON_IsNumber(progress) &&
	     !cJSON_AddNumberToObject(req, "progress", progress->valuedouble)) ||
	    pg_fmt(path, sizeof(path), "/api/v1/jobs/%lld/heartbeat", (long long)job) < 0) {
		cJSON_Delete(req);
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	}
	http = disp_post_json(dh, path, req, DISP_REQUEST_MS, &herr);
	cJSON_Delete(req);
	if (http == 200) {
		ans = disp_answer(dh);
		if (ans && cJSON_IsTrue(cJSON_GetObjectItem(ans, "cancel")))
			why = "cancelled by the controller";
		cJSON_Delete(ans);
	} else if (http == 409) {
		why = "the controller says this attempt is stale (409)";
	} else if (http == 404) {
		why = "the controller does not know the job (404)";
	} else {
		/* The job goes on: the next beat comes within heartbeat_s. */
		pg_log_warn("ssh", "host '%s': job %lld attempt %lld: heartbeat failed: %s",
			    dh->h->name, (long long)job, (long long)attempt,
			    http ? "HTTP error" : herr.msg);
	}
	if (!why)
		return 0;
	pg_log_info("ssh", "host '%s': job %lld attempt %lld: %s: stopping it", dh->h->name,
		    (long long)job, (long long)attempt, why);
	msg = disp_msg(RUNONE_CANCEL);
	if (msg && !cJSON_AddStringToObject(msg, "reason", why)) {
		cJSON_Delete(msg);
		msg = NULL;
	}
	return disp_send(cmd, msg, err);
}

static bool disp_stage_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0 && n < SCHED_STAGE_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* A log line: its chunk, decoded, to /jobs/J/logs.  Best effort, as the
 * daemon's. */
static void disp_log(struct disp_host *dh, int64_t job, int64_t attempt, const cJSON *o)
{
	const char *stage = cJSON_GetStringValue(cJSON_GetObjectItem(o, "stage"));
	const char *data = cJSON_GetStringValue(cJSON_GetObjectItem(o, "data"));
	struct pg_buf bytes = PG_BUF_INIT(PG_HTTP_MAX_BODY);
	struct pg_err err = PG_ERR_INIT;
	char path[256];
	long http = 0;

	if (!disp_stage_ok(stage) || !data ||
	    pg_base64_decode(data, strlen(data), &bytes, &err) < 0 ||
	    pg_fmt(path, sizeof(path), "/api/v1/jobs/%lld/logs?attempt=%lld&stage=%s",
		   (long long)job, (long long)attempt, stage) < 0) {
		pg_log_warn("ssh", "host '%s': job %lld: a log line that does not follow the "
			    "protocol: %s", dh->h->name, (long long)job,
			    err.msg[0] ? err.msg : "stage or data");
		goto out;
	}
	http = disp_api(dh, "POST", path, "text/plain", bytes.data ? bytes.data : "", bytes.len,
			DISP_REQUEST_MS, 0, &err);
	if (http != 200)
		pg_log_warn("ssh", "host '%s': job %lld attempt %lld: a log chunk of stage '%s' "
			    "(%zu bytes) was not stored: %s", dh->h->name, (long long)job,
			    (long long)attempt, stage, bytes.len, http ? "HTTP error" : err.msg);
out:
	pg_buf_release(&bytes);
}

/* A fetch line: the series mbox from the API, to run-one. */
static int disp_fetch(struct disp_host *dh, struct ssh_cmd *cmd, const cJSON *o,
		      struct pg_err *err)
{
	const char *url = cJSON_GetStringValue(cJSON_GetObjectItem(o, "url"));
	const char *path = url ? strstr(url, "/api/v1/series/") : NULL;
	struct pg_buf b64 = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_err ferr = PG_ERR_INIT;
	cJSON *msg = disp_msg(RUNONE_MBOX);
	long http = 0;
	int rc;

	if (!msg)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	if (!path || strchr(path, '?') || strstr(path, "..")) {
		pg_err_set(&ferr, PG_EINVAL, "'%.200s' is not a series mbox URL", url ? url : "");
	} else {
		http = disp_api(dh, "GET", path, NULL, NULL, 0, 120000L,
				(size_t)256 << 20, &ferr);
		if (http == 200)
			pg_base64_encode(dh->resp.body.data ? dh->resp.body.data : "",
					 dh->resp.body.len, &b64, &ferr);
		else if (http)
			pg_err_set(&ferr, PG_EIO, "GET %s: HTTP %ld", path, http);
	}
	if (!(ferr.msg[0] ? cJSON_AddStringToObject(msg, "error", ferr.msg)
			  : cJSON_AddStringToObject(msg, "data", pg_buf_str(&b64)))) {
		cJSON_Delete(msg);
		msg = NULL;
	}
	pg_buf_release(&b64);
	rc = disp_send(cmd, msg, err);
	return rc;
}

/*
 * Run a leased job (job: the lease answer's "job") with run-one, relaying
 * its lines until it ends.  DISP_LOST when the connection failed or went
 * silent: the job's result (an infra-error at least) is left for the next
 * collect.
 */
static enum disp_end disp_job(struct disp_host *dh, const cJSON *job, bool *leftover,
			     struct pg_err *err)
{
	int64_t id = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(job, "id"));
	int64_t attempt = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(job, "attempt"));
	int64_t hb_s = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(job, "heartbeat_s"));
	int64_t io_ms = dh->d->cfg->ssh.io_timeout_s * 1000;
	struct pg_buf line = PG_BUF_INIT(RUNONE_LINE_MAX);
	struct ssh_cmd *cmd = NULL;
	enum disp_end end = DISP_LOST;
	struct disp_argv a;
	cJSON *first = cJSON_CreateObject();
	int got = 0, status = -1;
	bool ended = false;

	*leftover = true;
	/* run-one writes a heartbeat every heartbeat_s: a longer lease than
	 * io_timeout_s allows for must not read as a dead connection. */
	if (hb_s > 0 && hb_s < 86400 && 3 * hb_s * 1000 > io_ms)
		io_ms = 3 * hb_s * 1000;
	disp_state(dh, SSH_STATE_RUNNING, id, attempt);
	pg_log_info("ssh", "host '%s': job %lld attempt %lld: running it with run-one",
		    dh->h->name, (long long)id, (long long)attempt);
	disp_argv_runone(dh->h, NULL, true, &a);
	if (!first || !cJSON_AddItemReferenceToObject(first, "job", (cJSON *)job)) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (ssh_cmd_start(dh->conn, a.v, &cmd, err) < 0)
		goto out;
	got = disp_send(cmd, first, err);
	first = NULL;	/* disp_send() took it */
	if (got < 0)
		goto out;
	for (;;) {
		const char *type = NULL;
		cJSON *o;

		got = disp_next_line(dh, cmd, &line, io_ms, err);
		if (got == DISP_LINE_STOP) {
			end = DISP_STOP;
			goto out;
		}
		if (got < 0)
			goto out;
		if (got == 0)
			break;
		o = disp_parse_line(dh, &line, &type, err);
		if (!o) {
			/* A program that does not speak the protocol cannot be
			 * trusted with the lease: drop it (run-one stops). */
			goto out;
		}
		if (strcmp(type, RUNONE_HEARTBEAT) == 0) {
			got = disp_heartbeat(dh, cmd, id, attempt, o, err);
		} else if (strcmp(type, RUNONE_LOG) == 0) {
			disp_log(dh, id, attempt, o);
			got = 0;
		} else if (strcmp(type, RUNONE_FETCH) == 0) {
			got = disp_fetch(dh, cmd, o, err);
		} else if (strcmp(type, RUNONE_RESULT) == 0) {
			got = disp_result_line(dh, cmd, o, err);
			if (got == 0) {
				/* Not delivered: close its input, so that it
				 * leaves the result spooled for the next collect
				 * instead of waiting for an ack. */
				got = ssh_cmd_send_eof(cmd, err);
			}
		} else if (strcmp(type, RUNONE_END) == 0) {
			ended = true;
			got = 0;
		} else {
			got = 0;	/* hello, and what a newer agent may add */
		}
		cJSON_Delete(o);
		if (got < 0)
			goto out;
	}
	if (ssh_cmd_wait(cmd, DISP_EXIT_WAIT_MS, &status, err) < 0)
		goto out;
	pg_log_info("ssh", "host '%s': job %lld attempt %lld: run-one exited %d%s", dh->h->name,
		    (long long)id, (long long)attempt, status, ended ? "" : " without an end line");
	if (status != RUNONE_EXIT_OK && ssh_cmd_stderr_tail(cmd)[0])
		pg_log_warn("ssh", "host '%s': run-one said: %s", dh->h->name,
			    ssh_cmd_stderr_tail(cmd));
	/* Only a run-one that ended otherwise than acknowledged (or
	 * cancelled) may have left a result in the spool. */
	*leftover = status != RUNONE_EXIT_OK;
	end = DISP_OK;
out:
	cJSON_Delete(first);
	if (end == DISP_LOST)
		pg_err_prefix(err, "host '%s': job %lld attempt %lld: the connection was lost "
			      "(the job's result, an infra-error at least, is collected at the "
			      "next connection)", dh->h->name, (long long)id, (long long)attempt);
	ssh_cmd_free(cmd);
	pg_buf_release(&line);
	return end;
}

/* ---- connection slots ----------------------------------------------- */

/* Whether another host waits for a connection slot. */
static bool disp_slot_wanted(struct disp_host *dh)
{
	bool wanted;

	pthread_mutex_lock(&dh->d->lock);
	wanted = dh->d->waiting > 0;
	pthread_mutex_unlock(&dh->d->lock);
	return wanted;
}

static bool disp_slot_take(struct disp_host *dh)
{
	struct ssh_disp *d = dh->d;
	bool got = false;

	pthread_mutex_lock(&d->lock);
	d->waiting++;
	while (!atomic_load(&d->stop) && !(got = d->slots > 0)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&d->cond, &d->lock, &ts);
	}
	d->waiting--;
	if (got)
		d->slots--;
	pthread_mutex_unlock(&d->lock);
	return got;
}

static void disp_slot_give(struct disp_host *dh)
{
	pthread_mutex_lock(&dh->d->lock);
	dh->d->slots++;
	pthread_cond_signal(&dh->d->cond);
	pthread_mutex_unlock(&dh->d->lock);
}

/* Lease and run jobs while connected. */
static enum disp_end disp_serve(struct disp_host *dh, struct pg_err *err)
{
	int64_t last_alive = pg_time_mono_ms();
	long refused = 204;
	bool leftover;
	enum disp_end end;
	cJSON *req = cJSON_CreateObject();

	if (!req || !cJSON_AddNumberToObject(req, "wait_s", DISP_LEASE_WAIT_S)) {
		cJSON_Delete(req);
		pg_err_set(err, PG_ENOMEM, "out of memory");
		return DISP_LOST;
	}
	for (;;) {
		cJSON *ans, *job;
		long http;

		if (disp_stopping(dh)) {
			end = DISP_STOP;
			break;
		}
		disp_state(dh, SSH_STATE_IDLE, 0, 0);
		http = disp_post_json(dh, "/api/v1/lease", req,
				      (DISP_LEASE_WAIT_S + 15) * 1000L, err);
		if (http == 204 || (http != 200 && !disp_stopping(dh))) {
			if (http != 204) {
				/* Said once per kind of refusal (a disabled host
				 * answers 403 until enabled), then quietly retried. */
				if (http != refused)
					pg_log_warn("ssh", "host '%s': lease: %s%.200s", dh->h->name,
						    http ? "refused: " : "",
						    http ? pg_buf_str(&dh->resp.body) : err->msg);
				refused = http;
				pg_err_clear(err);
				if (disp_pause(dh, 2000))
					continue;
			} else {
				refused = 204;
				/* Nothing to do here while another host waits for
				 * a connection: let it have this one. */
				if (disp_slot_wanted(dh)) {
					end = DISP_YIELD;
					break;
				}
			}
			if (pg_time_mono_ms() - last_alive >= dh->d->cfg->ssh.keepalive_s * 1000) {
				if (ssh_conn_keepalive(dh->conn, err) < 0) {
					end = DISP_LOST;
					break;
				}
				last_alive = pg_time_mono_ms();
			}
			continue;
		}
		if (http != 200)
			continue;
		refused = 204;
		ans = disp_answer(dh);
		job = ans ? cJSON_GetObjectItem(ans, "job") : NULL;
		if (!cJSON_IsObject(job)) {
			cJSON_Delete(ans);
			continue;
		}
		end = disp_job(dh, job, &leftover, err);
		cJSON_Delete(ans);
		last_alive = pg_time_mono_ms();
		if (end != DISP_OK)
			break;
		/* What the job left (a result not delivered) goes now. */
		if ((leftover || dh->spool_left) && (end = disp_collect(dh, err)) != DISP_OK)
			break;
	}
	cJSON_Delete(req);
	return end;
}

/* ---- connections ---------------------------------------------------- */

/* One connection, from connect to its end. */
static enum disp_end disp_connection(struct disp_host *dh, struct pg_err *err)
{
	struct pg_err serr = PG_ERR_INIT;
	bool trusted_now = false;
	enum disp_end end;

	disp_state(dh, SSH_STATE_CONNECTING, 0, 0);
	if (ssh_conn_open(dh->h, &dh->d->cfg->ssh, &dh->conn, dh->fp, &trusted_now, err) < 0)
		return DISP_LOST;
	if (disp_agent_version(dh, err) < 0)
		return DISP_LOST;
	if (ssh_state_connected(dh->st, dh->agent_id, dh->fp, dh->version, disp_now(), &serr) < 0)
		pg_log_warn("ssh", "host '%s': %s", dh->h->name, serr.msg);
	dh->shown = SSH_STATE_CONNECTING;
	pg_log_info("ssh", "host '%s': connected (%s), %s", dh->h->name, dh->fp, dh->version);
	if (disp_register(dh, err) < 0)
		return DISP_LOST;
	end = disp_collect(dh, err);
	if (end != DISP_OK)
		return end;
	dh->failures = 0;
	return disp_serve(dh, err);
}

static void *disp_host_main(void *arg)
{
	struct disp_host *dh = arg;

	pg_thread_name("ssh-host");
	while (!disp_stopping(dh)) {
		struct pg_err err = PG_ERR_INIT;
		enum disp_end end;
		int64_t delay;

		if (!disp_slot_take(dh))
			break;
		end = disp_connection(dh, &err);
		ssh_conn_close(dh->conn);
		dh->conn = NULL;
		disp_slot_give(dh);
		if (end == DISP_STOP || disp_stopping(dh))
			break;
		if (end == DISP_YIELD) {
			pg_log_debug("ssh", "host '%s': idle, its connection given to a host that "
				     "waits for one", dh->h->name);
			disp_state(dh, SSH_STATE_DISCONNECTED, 0, 0);
			/* Queue behind the waiting host (the lock is not fair). */
			pg_sleep_ms(50, NULL);
			continue;
		}
		disp_error(dh, err.msg[0] ? err.msg : "the connection ended");
		delay = pg_backoff_ms(dh->failures < 30 ? dh->failures : 30, 1000,
				      dh->d->cfg->ssh.max_backoff_s * 1000, &dh->rnd);
		if (delay < 500)
			delay = 500;
		dh->failures++;
		pg_log_info("ssh", "host '%s': next connection in %.1f s", dh->h->name,
			    (double)delay / 1000.0);
		disp_pause(dh, delay);
	}
	disp_state(dh, SSH_STATE_DISCONNECTED, 0, 0);
	return NULL;
}

/* ---- start, stop ----------------------------------------------------- */

/* This build's perfgate-agent: next to the controller's program. */
static int disp_self_agent(struct ssh_disp *d, struct pg_err *err)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n < 0)
		return pg_err_errno(err, "readlink /proc/self/exe");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	if (pg_fmt(d->self_agent, sizeof(d->self_agent), "%s/perfgate-agent", exe) < 0)
		return pg_err_set(err, PG_EINVAL, "path of perfgate-agent too long");
	return 0;
}

static int disp_host_init(struct ssh_disp *d, struct disp_host *dh,
			  const struct ssh_host_cfg *h, struct pg_err *err)
{
	char hash[API_SHA256_HEX + 1], target[512];

	dh->d = d;
	dh->h = h;
	dh->shown = SSH_STATE_DISCONNECTED;
	dh->rnd = (uint64_t)pg_time_wall_ms() ^ ((uint64_t)getpid() << 24) ^ (uint64_t)(uintptr_t)dh;
	pg_http_response_init(&dh->resp);
	ssh_config_target(h, target, sizeof(target));
	if (ssh_config_key_ok(h, err) < 0 || api_token_new(dh->token, err) < 0 ||
	    api_sha256_hex(dh->token, strlen(dh->token), hash, err) < 0 ||
	    store_open(&dh->st, d->cfg->db, err) < 0 ||
	    sched_agent_ssh(dh->st, h->name, hash, disp_now(), &dh->agent_id, err) < 0 ||
	    ssh_state_init(dh->st, dh->agent_id, target, disp_now(), err) < 0)
		return -1;
	return 0;
}

static void disp_host_release(struct disp_host *dh)
{
	ssh_conn_close(dh->conn);
	pg_http_client_free(dh->http);
	pg_http_response_release(&dh->resp);
	store_close(dh->st);
	memset(dh->token, 0, sizeof(dh->token));
}

int ssh_disp_start(const struct ctl_config *cfg, const char *api_url, struct ssh_disp **out,
		   struct pg_err *err)
{
	struct ssh_disp *d;
	pthread_attr_t attr;

	*out = NULL;
	if (!cfg->ssh.n_hosts)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->hosts = calloc(cfg->ssh.n_hosts, sizeof(*d->hosts)))) {
		free(d);
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	}
	d->cfg = cfg;
	d->n = cfg->ssh.n_hosts;
	d->slots = cfg->ssh.max_connections;
	atomic_init(&d->stop, false);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	if (pg_fmt(d->api_url, sizeof(d->api_url), "%s", api_url) < 0) {
		pg_err_set(err, PG_EINVAL, "API URL too long");
		goto fail;
	}
	if (disp_self_agent(d, err) < 0 || ssh_conn_global_init(err) < 0)
		goto fail;
	for (size_t i = 0; i < d->n; i++)
		if (disp_host_init(d, &d->hosts[i], &cfg->ssh.hosts[i], err) < 0)
			goto fail;
	pthread_attr_init(&attr);
	for (size_t i = 0; i < d->n; i++) {
		if (pthread_create(&d->hosts[i].tid, &attr, disp_host_main, &d->hosts[i]) != 0) {
			pthread_attr_destroy(&attr);
			pg_err_set(err, PG_EIO, "cannot start the thread of host '%s'",
				   d->hosts[i].h->name);
			goto fail;
		}
		d->hosts[i].started = true;
	}
	pthread_attr_destroy(&attr);
	pg_log_info("ssh", "dispatcher: %zu host(s), at most %lld connected at once", d->n,
		    (long long)cfg->ssh.max_connections);
	*out = d;
	return 0;
fail:
	pg_err_prefix(err, "ssh");
	ssh_disp_stop(d);
	return -1;
}

void ssh_disp_stop(struct ssh_disp *d)
{
	if (!d)
		return;
	atomic_store(&d->stop, true);
	pthread_mutex_lock(&d->lock);
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < d->n; i++)
		if (d->hosts[i].started)
			pthread_join(d->hosts[i].tid, NULL);
	for (size_t i = 0; i < d->n; i++)
		disp_host_release(&d->hosts[i]);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	free(d->hosts);
	free(d);
}

int ssh_disp_check(const struct ctl_config *cfg, const char *name)
{
	const struct ssh_host_cfg *h = ssh_config_host(&cfg->ssh, name);
	struct pg_buf line = PG_BUF_INIT(SCHED_FACTS_MAX * 2);
	struct pg_err err = PG_ERR_INIT;
	struct ssh_disp d;
	struct disp_host dh;
	struct disp_argv a;
	char target[512];
	bool trusted_now = false, lib = false;
	const char *type = NULL;
	cJSON *o = NULL;
	char *text = NULL;
	int status, rc = 1;

	memset(&d, 0, sizeof(d));
	memset(&dh, 0, sizeof(dh));
	dh.d = &d;
	dh.h = h;
	d.cfg = cfg;
	atomic_init(&d.stop, false);
	if (!h) {
		fprintf(stderr, "perfgate-controller: host check: no host '%s' in the "
			"configuration's \"ssh\" section\n", name);
		return 1;
	}
	ssh_config_target(h, target, sizeof(target));
	printf("host %s: %s\n", h->name, target);
	if (ssh_config_key_ok(h, &err) < 0 || disp_self_agent(&d, &err) < 0 ||
	    ssh_conn_global_init(&err) < 0)
		goto out;
	lib = true;
	if (ssh_conn_open(h, &cfg->ssh, &dh.conn, dh.fp, &trusted_now, &err) < 0) {
		if (dh.fp[0])
			printf("host key: %s (refused)\n", dh.fp);
		goto out;
	}
	printf("host key: %s (%s)\nauthentication: public key %s accepted\n", dh.fp,
	       trusted_now ? "trusted now, on first use" : "known", h->key_file);
	if (disp_agent_version(&dh, &err) < 0)
		goto out;
	printf("agent: %s at %s\n", dh.version, h->agent);
	disp_argv_runone(h, "--facts", false, &a);
	if (disp_run_short(&dh, a.v, &line, &status, &err) < 0 ||
	    !(o = disp_parse_line(&dh, &line, &type, &err)))
		goto out;
	text = pg_json_print_safe(cJSON_GetObjectItem(o, "labels"), false);
	printf("labels reported: %s\n", text ? text : "?");
	free(text);
	text = pg_json_print_safe(cJSON_GetObjectItem(o, "facts"), false);
	printf("facts: %s\n", text ? text : "?");
	printf("ok\n");
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "perfgate-controller: host check %s: %s\n", name, err.msg);
	free(text);
	cJSON_Delete(o);
	pg_buf_release(&line);
	ssh_conn_close(dh.conn);
	if (lib)
		ssh_conn_global_cleanup();
	return rc;
}
