/* SPDX-License-Identifier: MIT */
/* perfgate-agent run-one (agent_runone.h): setup and exit statuses; the
 * job itself is agent_hold.c's, its link agent_stream.c's. */
#include "agent_runone.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_facts.h"
#include "agent_hold.h"
#include "agent_line.h"
#include "agent_spool.h"
#include "agent_stream.h"
#include "fsutil.h"
#include "log.h"
#include "runone.h"
#include "ws_child.h"

/* SIGTERM, SIGINT or SIGHUP came: stop the job. */
static volatile sig_atomic_t runone_sig;

static void runone_on_signal(int sig)
{
	(void)sig;
	runone_sig = 1;
}

static int runone_signals(struct pg_err *err)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = runone_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0 ||
	    sigaction(SIGHUP, &sa, NULL) < 0)
		return pg_err_errno(err, "sigaction");
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) < 0)
		return pg_err_errno(err, "sigaction SIGPIPE");
	return 0;
}

static bool runone_signalled(void *arg)
{
	(void)arg;
	return runone_sig != 0;
}

static const struct agent_stop runone_stop = { runone_signalled, NULL };

/*
 * Take the protocol's descriptors: private close-on-exec copies of stdin
 * and stdout, then descriptor 0 reads /dev/null and descriptor 1 writes
 * to stderr, so that only the stream link reads and writes the protocol.
 */
static int runone_fds(int *in_fd, int *out_fd, struct pg_err *err)
{
	int null_fd;

	*in_fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	*out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (*in_fd < 0 || *out_fd < 0)
		return pg_err_errno(err, "run-one: duplicate stdin/stdout");
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null_fd < 0)
		return pg_err_errno(err, "run-one: open /dev/null");
	if (dup2(null_fd, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		close(null_fd);
		return pg_err_errno(err, "run-one: redirect stdin/stdout");
	}
	close(null_fd);
	return 0;
}

/* What every mode that holds the spool shares. */
struct runone {
	const struct agent_config *cfg;
	int in_fd, out_fd;
	struct agent_stream stream;
	struct agent_spool spool;
	struct agent_facts facts;
	struct agent_link link;
	struct agent_hold hold;
	char self_exe[PATH_MAX];
};

/* Signals, descriptors, the stream and the holder over it. */
static int runone_setup(struct runone *r, const struct agent_config *cfg, struct pg_err *err)
{
	memset(r, 0, sizeof(*r));
	r->cfg = cfg;
	r->in_fd = r->out_fd = -1;
	r->spool.lock_fd = -1;
	if (runone_signals(err) < 0 || runone_fds(&r->in_fd, &r->out_fd, err) < 0 ||
	    agent_stream_init(&r->stream, r->in_fd, r->out_fd, err) < 0)
		return -1;
	r->stream.signalled = &runone_sig;
	r->stream.max_backoff_ms = cfg->max_backoff_s * 1000LL;
	r->stream.hold = &r->hold;
	agent_stream_link(&r->stream, &r->link);
	r->hold = (struct agent_hold){
		.spool = &r->spool, .facts = &r->facts, .runner = agent_hold_runner(cfg->runner),
		.work_dir = cfg->work_dir, .sandbox = &cfg->sandbox, .self_exe = r->self_exe,
		.apply = &cfg->apply, .max_build_slots = cfg->max_build_slots, .link = &r->link,
	};
	return 0;
}

/* The spool (locked, waiting for a run-one still stopping) and the host
 * facts (for the fingerprints of infra-error results). */
static int runone_open(struct runone *r, struct pg_err *err)
{
	unsigned int removed = 0;

	if (agent_spool_open_wait(&r->spool, r->cfg->spool_dir, RUNONE_COLLECT_WAIT_S * 1000LL,
				  &removed, err) < 0)
		return -1;
	if (removed)
		pg_log_warn("run-one", "spool %s: removed %u partly written file(s) left by a "
			    "crash", r->cfg->spool_dir, removed);
	return agent_facts_gather(&r->facts, NULL, err);
}

static void runone_release(struct runone *r)
{
	agent_stream_release(&r->stream);
	agent_spool_close(&r->spool);
	if (r->in_fd >= 0)
		close(r->in_fd);
	if (r->out_fd >= 0)
		close(r->out_fd);
}

/* Write a printed line (taken); -1 when it could not be written. */
static int runone_put(struct runone *r, char *line, struct pg_err *err)
{
	int rc;

	if (!line)
		return -1;
	rc = agent_stream_write(&r->stream, line, err);
	free(line);
	return rc;
}

/* The exit status of a held job, and the detail of its end line. */
static int runone_job_exit(struct runone *r, enum agent_hold_end end, bool unreadable,
			   const char **detail)
{
	switch (end) {
	case AGENT_HOLD_CANCELLED:
		*detail = "the controller cancelled the job: no result";
		return RUNONE_EXIT_OK;
	case AGENT_HOLD_DELIVERED:
		*detail = unreadable ? "the job could not be read: its infra-error result was "
				       "delivered" : "the result was delivered";
		return unreadable ? RUNONE_EXIT_ERROR : RUNONE_EXIT_OK;
	case AGENT_HOLD_IGNORED:
		*detail = "the job could not be read and has no id or attempt";
		return RUNONE_EXIT_ERROR;
	case AGENT_HOLD_SPOOLED:
		break;
	}
	if (r->stream.ack_timed_out && !runone_sig && !agent_stream_lost(&r->stream)) {
		*detail = "no answer to the result in time: it stays in the spool";
		return RUNONE_EXIT_UNACKED;
	}
	*detail = runone_sig ? AGENT_STREAM_SIGNAL_DETAIL : AGENT_STREAM_LOST_DETAIL;
	return RUNONE_EXIT_LOST;
}

int agent_runone_job(const struct agent_config *cfg)
{
	struct pg_err err = PG_ERR_INIT, lerr = PG_ERR_INIT;
	struct runone r;
	enum agent_hold_end end;
	const char *line, *detail = NULL;
	bool unreadable = false;
	cJSON *job;
	size_t len;
	int rc = RUNONE_EXIT_ERROR, got;

	if (runone_setup(&r, cfg, &err) < 0)
		goto out;
	/* Hello first, so that the controller learns the process to signal
	 * even while the spool is awaited. */
	if (runone_put(&r, agent_line_hello((long)getpid(), (long)getpgrp(), &err), &err) < 0) {
		rc = RUNONE_EXIT_LOST;
		goto out;
	}
	if (runone_open(&r, &err) < 0 ||
	    ws_child_self_exe(r.self_exe, sizeof(r.self_exe), &err) < 0 ||
	    pg_mkdir_p(cfg->work_dir, 0750, &err) < 0) {
		detail = "a local failure: see stderr";
		goto out;
	}
	got = agent_lines_next(&r.stream.in, RUNONE_JOB_MAX, &runone_stop, &line, &len, &err);
	if (got != 1) {
		if (got < 0) {
			pg_err_prefix(&err, "the job line");
			detail = "the job line could not be read";
		} else {
			pg_err_set(&err, PG_EIO, "the job line: %s before it came",
				   got == 0 ? "stdin closed" : "a signal");
			rc = RUNONE_EXIT_LOST;
		}
		goto out;
	}
	job = agent_line_job(line, len, &err);
	if (!job) {
		pg_err_prefix(&err, "the job line");
		detail = "the job line is not a job";
		goto out;
	}
	if (agent_stream_start(&r.stream, &err) < 0) {
		cJSON_Delete(job);
		detail = "a local failure: see stderr";
		goto out;
	}
	if (agent_hold_job(&r.hold, job, &end, &unreadable, &err) < 0) {
		detail = "a local failure: see stderr";
		goto out;
	}
	agent_stream_stop(&r.stream);
	rc = runone_job_exit(&r, end, unreadable, &detail);
out:
	if (err.msg[0])
		pg_log_error("run-one", "%s", err.msg);
	if (detail && runone_put(&r, agent_line_end(rc, detail, &lerr), &lerr) < 0 &&
	    !agent_stream_lost(&r.stream))
		pg_log_warn("run-one", "the end line: %s", lerr.msg);
	runone_release(&r);
	return rc;
}

/* Settle the answers --collect reads until "done" or EOF. */
static void runone_collect_answers(struct runone *r)
{
	struct agent_line_in m = AGENT_LINE_IN_INIT;

	for (;;) {
		struct pg_err err = PG_ERR_INIT;
		struct agent_offer_answer ans;
		const char *line;
		size_t len;
		int got = agent_lines_next(&r->stream.in, RUNONE_LINE_MAX, &runone_stop, &line,
					   &len, &err);

		if (got < 0)
			pg_log_error("run-one", "reading answers: %s", err.msg);
		if (got != 1)
			break;
		if (agent_line_parse(line, len, 0, &m, &err) < 0) {
			pg_log_warn("run-one", "ignoring a line from the controller: %s", err.msg);
			continue;
		}
		if (m.type == AGENT_LINE_DONE)
			break;
		if (m.type != AGENT_LINE_ACK && m.type != AGENT_LINE_REJECT) {
			pg_log_warn("run-one", "--collect: ignoring a line that is not an ack, a "
				    "reject or done");
			continue;
		}
		memset(&ans, 0, sizeof(ans));
		ans.offer = m.type == AGENT_LINE_ACK ? AGENT_OFFER_ACKED : AGENT_OFFER_REFUSED;
		memcpy(ans.status, m.status, sizeof(ans.status));
		ans.http_status = m.http_status;
		ans.answer = m.text;
		if (agent_hold_settle(&r->hold, m.job_id, m.attempt, &ans, &err) < 0)
			pg_log_error("run-one", "%s", err.msg);
	}
	agent_line_in_release(&m);
}

int agent_runone_collect(const struct agent_config *cfg)
{
	struct pg_err err = PG_ERR_INIT;
	enum agent_flush how;
	struct runone r;
	size_t sent = 0;
	int rc = RUNONE_EXIT_ERROR;

	if (runone_setup(&r, cfg, &err) < 0 || runone_open(&r, &err) < 0 ||
	    agent_hold_flush(&r.hold, &runone_stop, &how, &sent, &err) < 0)
		goto out;
	pg_err_clear(&err);
	if (how == AGENT_FLUSH_LATER || how == AGENT_FLUSH_STOPPED ||
	    runone_put(&r, agent_line_collected(sent, &err), &err) < 0) {
		pg_err_set(&err, PG_EIO, "--collect: %s before every result was written",
			   how == AGENT_FLUSH_STOPPED ? "a signal came" : "the connection dropped");
		rc = RUNONE_EXIT_LOST;
		goto out;
	}
	pg_log_info("run-one", "--collect: %zu result(s) offered", sent);
	runone_collect_answers(&r);
	rc = RUNONE_EXIT_OK;
out:
	if (err.msg[0])
		pg_log_error("run-one", "%s", err.msg);
	runone_release(&r);
	return rc;
}

int agent_runone_facts(const struct agent_config *cfg)
{
	struct pg_err err = PG_ERR_INIT;
	cJSON *labels = NULL, *facts = NULL;
	struct runone r;
	int rc = RUNONE_EXIT_ERROR;

	if (runone_setup(&r, cfg, &err) < 0 || agent_facts_gather(&r.facts, NULL, &err) < 0)
		goto out;
	labels = agent_labels_json((const char *const *)cfg->label_keys,
				   (const char *const *)cfg->label_values, cfg->n_labels, &r.facts);
	facts = agent_facts_to_json(&r.facts);
	if (!labels || !facts) {
		pg_err_set(&err, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (runone_put(&r, agent_line_facts(labels, facts, &err), &err) < 0)
		goto out;
	rc = RUNONE_EXIT_OK;
out:
	if (err.msg[0])
		pg_log_error("run-one", "%s", err.msg);
	cJSON_Delete(labels);
	cJSON_Delete(facts);
	runone_release(&r);
	return rc;
}
