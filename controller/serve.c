/* SPDX-License-Identifier: MIT */
/*
 * The controller daemon's life cycle: open (and migrate) the store, load
 * the profiles, then run the main loop until SIGTERM or SIGINT.  Signal
 * handlers only set flags; the loop does the work (after OpenBSD's
 * daemons).  Intake runs every intake.interval_s; expired leases are swept
 * every SERVE_EXPIRE_MS; the HTTP API (api.h), when configured, runs in
 * its own threads from start to stop, and so does the outbox's delivery
 * of checks and mails (ctl_outbox.h), which never holds this loop or the
 * API.  Planning hangs off this loop, and so do the verdicts
 * (verdict_pass.h), every VERDICT_PASS_TICK_MS, and, when the
 * configuration's "baseline" section enables them, the scheduled baselines
 * every baseline.poll_s (planner.h, "Baselines").
 */
#include "ctl_cmd.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "conffile.h"
#include "ctl_intake.h"
#include "ctl_outbox.h"
#include "ctl_plan.h"
#include "ctl_verdict.h"
#include "fmt.h"
#include "fsutil.h"
#include "http.h"
#include "log.h"
#include "profile.h"
#include "sched.h"
#include "ssh_disp.h"
#include "store.h"
#include "timeutil.h"
#include "verdict.h"

/* How often leases are checked for expiry: a lease of lease_s ends at most
 * this much later than it should. */
#define SERVE_EXPIRE_MS 5000

static volatile sig_atomic_t serve_stop;

static void serve_on_signal(int sig)
{
	serve_stop = sig;
}

static int serve_signals(struct pg_err *err)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = serve_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
		return pg_err_errno(err, "sigaction");
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) < 0)
		return pg_err_errno(err, "sigaction SIGPIPE");
	return 0;
}

/* One intake pass over the configured sources; a failing source is
 * logged and retried at the next pass, a failing store stops the daemon. */
static int serve_intake(const struct ctl_config *cfg, struct intake *in, struct pg_err *err)
{
	struct ctl_intake_plan plan;
	struct intake_stats before = in->stats;
	int failed = 0;

	memset(&plan, 0, sizeof(plan));
	if (ctl_intake_pass(cfg, in, &plan, &serve_stop, &failed, err) < 0)
		return -1;
	pg_log_info("serve", "intake: %lu messages (%lu rejected), %lu series completed, "
		    "%lu rechecks%s", in->stats.read - before.read,
		    in->stats.rejected - before.rejected,
		    in->stats.series_completed - before.series_completed,
		    in->stats.rechecks - before.rechecks,
		    failed ? "; some sources failed, retrying next pass" : "");
	return 0;
}

/* A write or sync of the store failed (store.h): stop at once, leaving the
 * store unclosed; systemd starts the daemon again (Restart=on-failure) and
 * SQLite recovers the store from what the disk holds. */
static void serve_store_lost(const char *msg)
{
	pg_log_error("serve", "store: %s: stopping at once without closing the store, "
		     "since the disk may have dropped what it had accepted; the next start "
		     "recovers the store from what the disk holds", msg);
	_exit(1);
}

/*
 * Sweep expired leases (sched_expire() with api.max_attempts) and wake the
 * API's waiting leases when jobs went back to the queue.  A failed sweep
 * (the store busy past its timeout) is logged and tried again at the next
 * one: the leases stay as they are meanwhile.
 */
static void serve_expire(const struct ctl_config *cfg, struct store *st, struct api_server *api)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t requeued = 0, failed = 0;

	/* The API's clock (api_now_s()): a step of the wall clock neither
	 * expires every lease at once nor keeps dead ones. */
	if (sched_expire(st, pg_time_steady_ms() / 1000, cfg->api.max_attempts, &requeued, &failed,
			 &err) < 0) {
		pg_log_error("serve", "expire leases: %s", err.msg);
		return;
	}
	if (requeued || failed)
		pg_log_info("serve", "leases expired: %lld jobs back in the queue, %lld given up "
			    "after %lld attempts", (long long)requeued, (long long)failed,
			    (long long)cfg->api.max_attempts);
	if (requeued)
		api_jobs_queued(api);
}

/*
 * One planner pass: complete series and recheck requests become runs and
 * queued jobs; waiting agents are woken when there are new ones.  A series
 * that cannot be planned now (a tree out of reach) is retried next pass; a
 * store failure stops the daemon.  (A first clone of a big tree holds this
 * loop for as long as it takes; the planner gets its own thread when that
 * matters.)
 */
static int serve_plan(const struct ctl_config *cfg, struct store *st,
		      const struct profile_set *ps, struct api_server *api, struct pg_err *err)
{
	struct planner_stats stats;

	if (ctl_plan_pass(cfg, st, ps, api ? api_server_public_url(api) : NULL, &stats, err) < 0)
		return -1;
	if (stats.runs_created || stats.jobs_created || stats.errors)
		pg_log_info("serve", "plan: %d runs, %d jobs, %d rechecks, %d waiting, %d errors",
			    (int)stats.runs_created, (int)stats.jobs_created,
			    (int)stats.rechecks_planned, (int)stats.series_waiting,
			    (int)stats.errors);
	if (stats.jobs_created && api)
		api_jobs_queued(api);
	return 0;
}

/* The scheduled baselines: a tree out of reach is tried at the next poll;
 * a store failure stops the daemon. */
static int serve_baselines(const struct ctl_config *cfg, struct store *st,
			   const struct profile_set *ps, struct api_server *api,
			   struct pg_err *err)
{
	struct planner_stats stats;
	unsigned int alerts;

	if (ctl_baseline_pass(cfg, st, ps, api ? api_server_public_url(api) : NULL, &stats,
			      &alerts, err) < 0)
		return -1;
	if (stats.baselines_planned || stats.errors || stats.changes_located ||
	    stats.changes_dismissed || alerts)
		pg_log_info("serve", "baselines: %d runs, %d jobs, %d bisecting; change points "
			    "%d located, %d dismissed; %u alert mails; %d errors",
			    (int)stats.baselines_planned, (int)stats.jobs_created,
			    (int)stats.bisect_runs, (int)stats.changes_located,
			    (int)stats.changes_dismissed, alerts, (int)stats.errors);
	if (stats.jobs_created && api)
		api_jobs_queued(api);
	return 0;
}

/*
 * One verdict pass: jobs that ended get their verdicts, contexts their
 * final checks and mails; waiting agents are woken when follow-ups were
 * queued.  A job that cannot be decided now is retried next pass; a pass
 * that cannot run (the store busy past its timeout) is logged and tried
 * again at the next tick.
 */
static void serve_verdicts(const struct ctl_config *cfg, struct store *st,
			   const struct profile_set *ps, struct api_server *api)
{
	struct pg_err err = PG_ERR_INIT;
	struct verdict_pass_stats stats;

	if (ctl_verdict_pass(cfg, st, ps, 0, NULL, &stats, &err) < 0) {
		pg_log_error("serve", "%s", err.msg);
		return;
	}
	if (stats.followups && api)
		api_jobs_queued(api);
}

/*
 * The SSH dispatcher (ssh_disp.h), when the configuration has SSH hosts:
 * they lease through the API, reached over loopback at its bound port.
 */
static int serve_ssh(const struct ctl_config *cfg, struct api_server *api, struct ssh_disp **out,
		     struct pg_err *err)
{
	const char *host = cfg->api.host;
	char url[256];

	*out = NULL;
	if (!cfg->ssh.n_hosts)
		return 0;
	if (!api)
		return pg_err_set(err, PG_EINVAL, "ssh: %zu host(s) configured, but no \"api\" "
				  "section: SSH hosts lease through the API", cfg->ssh.n_hosts);
	/* A wildcard address is reached on the loopback of its family. */
	if (!host || !*host || !strcmp(host, "0.0.0.0"))
		host = "127.0.0.1";
	else if (!strcmp(host, "::"))
		host = "::1";
	if (pg_fmt(url, sizeof(url), strchr(host, ':') ? "http://[%s]:%d" : "http://%s:%d", host,
		   api_server_port(api)) < 0)
		return pg_err_set(err, PG_EINVAL, "ssh: API address too long");
	return ssh_disp_start(cfg, url, out, err);
}

int ctl_serve(const struct ctl_config *cfg)
{
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	struct store *st = NULL;
	struct intake in;
	struct api_server *api = NULL;
	struct ssh_disp *ssh = NULL;
	struct ctl_outbox outbox;
	int64_t next_intake = 0, next_expire = 0, next_plan = 0, next_verdict = 0;
	int64_t next_baseline = 0, last_turn;
	int rc = 1, loaded = 0, http = 0;

	memset(&in, 0, sizeof(in));
	memset(&outbox, 0, sizeof(outbox));

	if (serve_signals(&err) < 0)
		goto out;
	/* libcurl's global state, before any thread that uses it starts. */
	if (pg_http_global_init(&err) < 0)
		goto out;
	http = 1;
	if (pg_config_load_profiles(cfg->profiles_dir, (const char *const *)cfg->profiles,
				    cfg->n_profiles, &ps, &err) < 0)
		goto out;
	loaded = 1;
	for (size_t i = 0; i < ps.n_contexts; i++) {
		char why[512];

		if (verdict_context_can_pass(&ps.contexts[i], why, sizeof(why)))
			pg_log_warn("serve", "%s", why);
	}
	if (pg_mkdir_p(cfg->data_dir, 0750, &err) < 0 ||
	    pg_mkdir_parent(cfg->db, 0750, &err) < 0)
		goto out;
	store_set_io_failure_handler(serve_store_lost);
	if (store_open(&st, cfg->db, &err) < 0 || ctl_intake_init(&in, cfg, &ps, st, &err) < 0)
		goto out;
	if (ctl_outbox_start(&outbox, cfg, &err) < 0)
		goto out;
	if (cfg->api.enabled) {
		if (api_server_start(&api, cfg, &ps, &err) < 0)
			goto out;
	} else {
		pg_log_info("serve", "api: not configured (no \"api\" section): not serving HTTP");
	}
	if (serve_ssh(cfg, api, &ssh, &err) < 0)
		goto out;
	pg_log_info("serve", "ready: store %s (schema %d), %zu contexts from %s, %zu sources",
		    cfg->db, STORE_SCHEMA_VERSION, ps.n_contexts, cfg->profiles_dir,
		    cfg->n_sources);
	last_turn = pg_time_mono_ms();
	while (!serve_stop) {
		int64_t away = pg_time_mono_ms() - last_turn;

		/* Away longer than a lease since the last turn (the process or
		 * its host frozen: SIGSTOP, a paused VM): the agents could not
		 * renew meanwhile, and their retries come after their backoff.
		 * The sweep waits one lease time, so that the ones still at
		 * work renew before any lease expires (sched.h, "Late work"). */
		if (cfg->api.enabled && away > cfg->api.lease_s * 1000LL) {
			pg_log_warn("serve", "the controller was away for %lld s (stopped or "
				    "frozen): no lease expires for the next %lld s",
				    (long long)(away / 1000), (long long)cfg->api.lease_s);
			next_expire = pg_time_mono_ms() + cfg->api.lease_s * 1000LL;
		}
		if (cfg->n_sources && pg_time_mono_ms() >= next_intake) {
			if (serve_intake(cfg, &in, &err) < 0)
				goto out;
			next_intake = pg_time_mono_ms() + cfg->intake.interval_s * 1000LL;
			next_plan = 0;
		}
		if (pg_time_mono_ms() >= next_plan) {
			if (serve_plan(cfg, st, &ps, api, &err) < 0)
				goto out;
			next_plan = pg_time_mono_ms() + cfg->intake.interval_s * 1000LL;
		}
		if (cfg->baseline.enabled && pg_time_mono_ms() >= next_baseline) {
			if (serve_baselines(cfg, st, &ps, api, &err) < 0)
				goto out;
			next_baseline = pg_time_mono_ms() + cfg->baseline.poll_s * 1000LL;
		}
		if (pg_time_mono_ms() >= next_expire) {
			serve_expire(cfg, st, api);
			next_expire = pg_time_mono_ms() + SERVE_EXPIRE_MS;
		}
		if (pg_time_mono_ms() >= next_verdict) {
			serve_verdicts(cfg, st, &ps, api);
			next_verdict = pg_time_mono_ms() + VERDICT_PASS_TICK_MS;
		}
		last_turn = pg_time_mono_ms();
		pg_sleep_ms(1000, &serve_stop);
	}
	pg_log_info("serve", "stopping on signal %d", (int)serve_stop);
	rc = 0;
out:
	if (rc)
		pg_log_error("serve", "%s", err.msg);
	/* The SSH hosts lease through the API: they go first. */
	ssh_disp_stop(ssh);
	api_server_stop(api);
	ctl_outbox_stop(&outbox);
	ctl_intake_release(&in);
	store_close(st);
	if (loaded)
		profile_set_free(&ps);
	if (http)
		pg_http_global_cleanup();
	return rc;
}
