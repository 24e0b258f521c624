/* SPDX-License-Identifier: MIT */
/* The outbox delivery thread and the `outbox` command (see ctl_outbox.h). */
#include "ctl_outbox.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "buf.h"
#include "ctl_out.h"
#include "fmt.h"
#include "fsutil.h"
#include "json.h"
#include "log.h"
#include "text.h"
#include "thread.h"
#include "timeutil.h"
#include "token.h"

#define LOG_COMP "outbox"

static int make_client(struct ctl_outbox *o, const struct ctl_checks *k, struct pg_err *err)
{
	struct pg_pw_opts po = PG_PW_OPTS_INIT;
	char token[CTL_OUTBOX_TOKEN_MAX + 1];
	int rc;

	if (pg_token_read(k->token_file, "checks.token_file", 1, PG_TOKEN_WARN_SHARED, token,
			  sizeof(token), err) < 0)
		return -1;
	po.base_url = k->patchwork_url;
	po.project = k->project;
	po.token = token;
	po.username = k->username;
	po.timeout_ms = (long)k->timeout_s * 1000;
	if (po.connect_timeout_ms > po.timeout_ms)
		po.connect_timeout_ms = po.timeout_ms;
	rc = pg_pw_client_new(&po, &o->pw, err);
	OPENSSL_cleanse(token, sizeof(token));
	if (rc < 0)
		pg_err_prefix(err, "checks");
	return rc;
}

static void *outbox_main(void *arg)
{
	struct ctl_outbox *o = arg;
	struct pg_err err = PG_ERR_INIT;

	pg_thread_name("outbox");
	while (!atomic_load(&o->stop)) {
		/* A store that fails now (busy past its timeout) is tried again
		 * at the next tick; the rows are consistent either way. */
		if (outbox_checks_pass(&o->ob, 0, &err) < 0)
			pg_log_error(LOG_COMP, "%s", err.msg);
		if (!atomic_load(&o->stop) && outbox_mail_pass(&o->ob, 0, &err) < 0)
			pg_log_error(LOG_COMP, "%s", err.msg);
		for (int i = 0; i < CTL_OUTBOX_TICK_MS / 100 && !atomic_load(&o->stop); i++)
			pg_sleep_ms(100, NULL);
	}
	return NULL;
}

int ctl_outbox_start(struct ctl_outbox *o, const struct ctl_config *cfg, struct pg_err *err)
{
	sigset_t block, old;
	int rc;

	memset(o, 0, sizeof(*o));
	atomic_init(&o->stop, false);
	if (!cfg->checks.enabled && !cfg->mail.enabled) {
		pg_log_info(LOG_COMP, "checks and mails are not enabled: queued rows wait");
		return 0;
	}
	if (store_open(&o->st, cfg->db, err) < 0)
		goto fail;
	if (cfg->checks.enabled && make_client(o, &cfg->checks, err) < 0)
		goto fail;
	if (cfg->mail.enabled && cfg->mail.username &&
	    smtp_read_password(cfg->mail.password_file, o->password, sizeof(o->password),
			       err) < 0) {
		pg_err_prefix(err, "mail");
		goto fail;
	}
	o->ob.st = o->st;
	o->ob.pw = o->pw;
	o->ob.mail = cfg->mail.enabled ? &cfg->mail : NULL;
	o->ob.smtp_password = cfg->mail.username ? o->password : NULL;
	o->ob.max_backoff_s = cfg->checks.max_backoff_s;
	o->ob.post_timeout_s = cfg->checks.timeout_s;
	o->ob.rand = (uint64_t)pg_time_wall_ms() ^ ((uint64_t)getpid() << 32);
	o->ob.stop = &o->stop;
	/* Signals are the main loop's: this thread never takes them. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = pthread_create(&o->thread, NULL, outbox_main, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		pg_err_errno(err, "outbox: cannot start its thread");
		goto fail;
	}
	o->started = true;
	pg_log_info(LOG_COMP, "delivering%s%s%s every %d ms, retries up to %" PRId64 " s apart",
		    cfg->checks.enabled ? " checks to " : "",
		    cfg->checks.enabled ? cfg->checks.patchwork_url : "",
		    cfg->mail.enabled ? (cfg->checks.enabled ? " and mails" : " mails") : "",
		    CTL_OUTBOX_TICK_MS, cfg->checks.max_backoff_s);
	return 0;
fail:
	ctl_outbox_stop(o);
	return -1;
}

void ctl_outbox_stop(struct ctl_outbox *o)
{
	if (o->started) {
		atomic_store(&o->stop, true);
		pthread_join(o->thread, NULL);
		o->started = false;
		pg_log_info(LOG_COMP, "stopped: %lu checks posted, %lu found already there, %lu "
			    "failed, %lu cancelled; %lu mails sent, %lu failed",
			    o->ob.stats.checks_sent, o->ob.stats.checks_found,
			    o->ob.stats.checks_failed, o->ob.stats.checks_cancelled,
			    o->ob.stats.mails_sent, o->ob.stats.mails_failed);
	}
	pg_pw_client_free(o->pw);
	o->pw = NULL;
	store_close(o->st);
	o->st = NULL;
	OPENSSL_cleanse(o->password, sizeof(o->password));
}

/* ---- the command ------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: perfgate-controller outbox list [--json] [--all]\n"
		"       perfgate-controller outbox retry check|mail ID\n");
}

static int open_store(const struct ctl_config *cfg, struct store **st)
{
	struct pg_err err = PG_ERR_INIT;

	if (access(cfg->db, F_OK) != 0) {
		fprintf(stderr, "perfgate-controller: store %s: %s\n", cfg->db, strerror(errno));
		return -1;
	}
	if (store_open(st, cfg->db, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static const char *str_of(const cJSON *o, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(o, key));

	return s ? s : "-";
}

static int64_t int_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);

	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

/* One row; returns 0, or -1 when out of memory.  The strings are one line
 * already (ctl_out_oneline()). */
static int print_row(const cJSON *o, struct pg_buf *out)
{
	const bool check = strcmp(str_of(o, "kind"), "check") == 0;
	char when[PG_TIME_UTC_MAX] = "-", what[64], resp[81];
	const char *r = str_of(o, "response");
	int64_t next = int_of(o, "next_try");

	if (strcmp(str_of(o, "delivery"), "queued") == 0 && next >= 0 &&
	    pg_time_format_utc(next * 1000, 0, when, sizeof(when)) < 0 &&
	    pg_fmt(when, sizeof(when), "%" PRId64, next) < 0)
		return -1;
	/* Shortened on purpose, visibly and never inside a character. */
	if (check && int_of(o, "pw_patch") > 0)
		pg_fmt_cut(what, sizeof(what), "%s patch %" PRId64 " (pw %" PRId64 ")",
			   str_of(o, "state"), int_of(o, "patch"), int_of(o, "pw_patch"));
	else if (check)
		pg_fmt_cut(what, sizeof(what), "%s patch %" PRId64 " (pw ?)", str_of(o, "state"),
			   int_of(o, "patch"));
	else
		pg_fmt_cut(what, sizeof(what), "%s", str_of(o, "subject"));
	pg_fmt_cut(resp, sizeof(resp), "%s", r);
	return pg_buf_printf(out, "%-5s %-6" PRId64 " %-9s %-8" PRId64 " %-21s %-6" PRId64
			     " %-28s %-30s %s\n", str_of(o, "kind"), int_of(o, "id"),
			     str_of(o, "delivery"), int_of(o, "attempts"), when, int_of(o, "run"),
			     str_of(o, "context"), what, resp) < 0 ? -1 : 0;
}

static int cmd_list(const struct ctl_config *cfg, bool as_json, bool all)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf rows = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct store *st = NULL;
	cJSON *arr = NULL;
	const cJSON *o;
	int rc = 1;

	if (open_store(cfg, &st) < 0)
		return 1;
	if (outbox_list(st, all, &arr, &err) < 0) {
		fprintf(stderr, "perfgate-controller: outbox list: %s\n", err.msg);
		goto out;
	}
	if (as_json) {
		if (ctl_out_json(arr) < 0)
			goto fail;
	} else {
		if (ctl_out_oneline(arr) < 0 ||
		    pg_buf_printf(&rows, "%-5s %-6s %-9s %-8s %-21s %-6s %-28s %-30s %s\n", "KIND",
				  "ID", "DELIVERY", "ATTEMPTS", "NEXT TRY", "RUN", "CONTEXT",
				  "WHAT", "LAST ANSWER") < 0)
			goto fail;
		cJSON_ArrayForEach(o, arr)
			if (print_row(o, &rows) < 0)
				goto fail;
		if (ctl_out_buf(&rows) < 0)
			goto fail;
	}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "perfgate-controller: outbox list: %s\n", strerror(errno));
out:
	cJSON_Delete(arr);
	pg_buf_release(&rows);
	store_close(st);
	return rc;
}

static int cmd_retry(const struct ctl_config *cfg, const char *kind, const char *id_text)
{
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;
	int64_t id;
	int rc = 1;

	if (pg_parse_id(id_text, &id) < 0) {
		usage();
		return 2;
	}
	if (open_store(cfg, &st) < 0)
		return 1;
	if (outbox_retry(st, kind, id, pg_time_wall_ms() / 1000, &err) < 0) {
		fprintf(stderr, "perfgate-controller: outbox retry: %s\n", err.msg);
		goto out;
	}
	fprintf(stderr, "perfgate-controller: %s %" PRId64 " queued again; the daemon delivers it at its "
		"next pass\n", kind, id);
	rc = 0;
out:
	store_close(st);
	return rc;
}

int ctl_cmd_outbox(const struct ctl_config *cfg, int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "list") == 0) {
		bool as_json = false, all = false;

		for (int i = 2; i < argc; i++) {
			if (strcmp(argv[i], "--json") == 0) {
				as_json = true;
			} else if (strcmp(argv[i], "--all") == 0) {
				all = true;
			} else {
				usage();
				return 2;
			}
		}
		return cmd_list(cfg, as_json, all);
	}
	if (argc == 4 && strcmp(argv[1], "retry") == 0 &&
	    (strcmp(argv[2], "check") == 0 || strcmp(argv[2], "mail") == 0))
		return cmd_retry(cfg, argv[2], argv[3]);
	usage();
	return 2;
}
