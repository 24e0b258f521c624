/* SPDX-License-Identifier: MIT */
/*
 * pg-sendmail: format one test-report mail and send it the way the
 * controller's outbox will, for tests/integration/t_mail.sh.
 *
 *   pg-sendmail -c CONTROLLER.json [--run-id N] [--print] REPORT.json
 *
 * The "mail" section of the controller configuration gives the server,
 * TLS, credentials (password_file), From, To, the author Cc policy, the
 * timeout and the patch URL template; REPORT.json gives the rest as
 * report_mail.h's JSON form (patch_msgid, patch_id, subject, author,
 * label, status, description, table, reproduce, msgid, date).  --run-id
 * makes the Message-ID from (N, label, the From domain) as the outbox does.
 * --print writes the message to stdout instead of sending it.
 *
 * Exit status: 0 sent (stdout: "sent MSGID to RCPT,... (REPLY)"),
 * 3 transient failure, 4 permanent failure (stderr: "pg-sendmail:
 * transient: ..." or "permanent: ..."), 1 other errors, 2 usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "ctl_config.h"
#include "err.h"
#include "fsutil.h"
#include "http.h"
#include "log.h"
#include "report_mail.h"
#include "smtp.h"
#include "text.h"

#define EXIT_USAGE 2
#define EXIT_TRANSIENT 3
#define EXIT_PERMANENT 4

static int usage(void)
{
	fprintf(stderr, "usage: pg-sendmail -c CONTROLLER.json [--run-id N] [--print] "
		"REPORT.json\n");
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const char *conf_path = NULL, *report_path = NULL;
	struct pg_buf json = PG_BUF_INIT(16u << 20), msg = PG_BUF_INIT(REPORT_MAIL_MAX);
	struct ctl_config conf;
	struct report_mail_input in;
	struct smtp_opts o = SMTP_OPTS_INIT;
	struct smtp_result res;
	struct pg_err err = PG_ERR_INIT;
	char url[REPORT_MAIL_URL_MAX + 1], msgid[REPORT_MAIL_MSGID_MAX + 1];
	char password[SMTP_PASSWORD_MAX + 1] = "";
	const char *rcpt[SMTP_RCPT_MAX];
	bool print = false, have_conf = false, have_in = false, curl = false;
	int64_t run_id = 0;
	size_t n_rcpt;
	int rc = 1;

	pg_log_init("pg-sendmail");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			conf_path = argv[++i];
		else if (strcmp(argv[i], "--run-id") == 0 && i + 1 < argc) {
			if (pg_parse_id(argv[++i], &run_id) < 0)
				return usage();
		} else if (strcmp(argv[i], "--print") == 0)
			print = true;
		else if (argv[i][0] != '-' && !report_path)
			report_path = argv[i];
		else
			return usage();
	}
	if (!conf_path || !report_path)
		return usage();

	if (ctl_config_load(&conf, conf_path, &err) < 0)
		goto fail;
	have_conf = true;
	if (!conf.mail.enabled) {
		pg_err_set(&err, PG_EINVAL, "%s: mail is not enabled", conf_path);
		goto fail;
	}
	if (pg_read_file(report_path, &json, &err) < 0 ||
	    report_mail_input_parse(&in, json.data, json.len, &err) < 0) {
		pg_err_prefix(&err, "%s", report_path);
		goto fail;
	}
	have_in = true;

	/* What the controller's configuration decides. */
	in.r.from.name = conf.mail.from_name;
	in.r.from.addr = conf.mail.from_addr;
	in.r.to.name = conf.mail.to_name;
	in.r.to.addr = conf.mail.to_addr;
	in.r.cc_author = conf.mail.cc_author_on;
	in.r.patch_url = NULL;
	if (in.r.patch_id > 0) {
		if (report_mail_patch_url(conf.mail.patch_url_template, in.r.patch_id, url,
					  sizeof(url), &err) < 0)
			goto fail;
		in.r.patch_url = url;
	}
	if (run_id > 0) {
		if (report_mail_msgid(run_id, in.r.label,
				      report_mail_addr_domain(conf.mail.from_addr), msgid,
				      sizeof(msgid), &err) < 0)
			goto fail;
		in.r.msgid = msgid;
	}
	if (report_mail_format(&in.r, &msg, &err) < 0)
		goto fail;
	if (print) {
		if (fwrite(msg.data, 1, msg.len, stdout) != msg.len || fflush(stdout) != 0) {
			pg_err_errno(&err, "write the message");
			goto fail;
		}
		rc = 0;
		goto out;
	}

	n_rcpt = report_mail_rcpts(&in.r, rcpt, SMTP_RCPT_MAX);
	if (n_rcpt > SMTP_RCPT_MAX) {
		pg_err_set(&err, PG_EINVAL, "%zu recipients, at most %d", n_rcpt, SMTP_RCPT_MAX);
		goto fail;
	}
	o.url = conf.mail.smtp_url;
	o.starttls = conf.mail.starttls;
	o.ca_file = conf.mail.ca_file;
	o.timeout_ms = conf.mail.timeout_s * 1000L;
	if (o.connect_timeout_ms > o.timeout_ms)
		o.connect_timeout_ms = o.timeout_ms;
	if (conf.mail.username) {
		if (smtp_read_password(conf.mail.password_file, password, sizeof(password),
				       &err) < 0)
			goto fail;
		o.username = conf.mail.username;
		o.password = password;
	}
	if (pg_http_global_init(&err) < 0)
		goto fail;
	curl = true;
	if (smtp_send(&o, conf.mail.from_addr, rcpt, n_rcpt, msg.data, msg.len, &res, &err) < 0) {
		fprintf(stderr, "pg-sendmail: %s: %s\n",
			res.outcome == SMTP_TRANSIENT ? "transient" : "permanent", err.msg);
		rc = res.outcome == SMTP_TRANSIENT ? EXIT_TRANSIENT : EXIT_PERMANENT;
		goto out;
	}
	printf("sent %s to", in.r.msgid);
	for (size_t i = 0; i < n_rcpt; i++)
		printf("%s%s", i ? "," : " ", rcpt[i]);
	printf(" (%s)\n", res.reply);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "pg-sendmail: %s\n", err.msg);
out:
	explicit_bzero(password, sizeof(password));
	if (curl)
		pg_http_global_cleanup();
	if (have_in)
		report_mail_input_free(&in);
	if (have_conf)
		ctl_config_free(&conf);
	pg_buf_release(&json);
	pg_buf_release(&msg);
	return rc;
}
