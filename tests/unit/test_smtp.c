/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/smtp.c without a server: URL checks, option
 * and argument checks (refused before any connection, as permanent),
 * a refused connection (transient), and password files.  The exchanges
 * with a real server are in tests/integration/t_mail.sh.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "err.h"
#include "http.h"
#include "smtp.h"

static const char msg[] = "From: a@b.org\r\nTo: c@d.org\r\nSubject: x\r\n\r\nbody\r\n";

static void url_ok(const char *url, bool want_tls)
{
	struct pg_err err = PG_ERR_INIT;
	bool tls = !want_tls;

	if (smtp_check_url(url, &tls, &err) < 0)
		fail_msg("'%s': %s", url, err.msg);
	assert_int_equal(tls, want_tls);
}

static void url_bad(const char *url, const char *why)
{
	struct pg_err err = PG_ERR_INIT;

	assert_int_equal(smtp_check_url(url, NULL, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	if (!strstr(err.msg, why))
		fail_msg("'%s': '%s' does not say '%s'", url, err.msg, why);
}

static void test_url(void **state)
{
	char long_url[SMTP_URL_MAX + 16];

	(void)state;
	url_ok("smtp://mail.example.org", false);
	url_ok("smtp://mail.example.org:587/lab.example.org", false);
	url_ok("smtps://mail.example.org:465", true);
	url_ok("smtp://[::1]:25", false);
	url_bad("http://mail.example.org", "not an smtp:// or smtps:// URL");
	url_bad("SMTP://mail.example.org", "not an smtp://");
	url_bad("smtp://", "has no host");
	url_bad("smtp://:25", "has no host");
	url_bad("smtp://mail.example.org/x?y", "query or a fragment");
	url_bad("smtp://mail.example.org#f", "query or a fragment");
	url_bad("smtp://mail .example.org", "space or a control character");
	url_bad("", "no SMTP URL");
	url_bad(NULL, "no SMTP URL");
	/* credentials: refused, and never echoed */
	url_bad("smtp://user:hunter2@mail.example.org", "credentials");
	{
		struct pg_err err = PG_ERR_INIT;

		assert_int_equal(smtp_check_url("smtps://u:hunter2@x", NULL, &err), -1);
		assert_null(strstr(err.msg, "hunter2"));
	}
	memset(long_url, 'a', sizeof(long_url) - 1);
	memcpy(long_url, "smtp://", 7);
	long_url[sizeof(long_url) - 1] = '\0';
	url_bad(long_url, "longer than");
}

static void test_starttls_names(void **state)
{
	enum smtp_starttls t = SMTP_STARTTLS_OFF;

	(void)state;
	assert_int_equal(smtp_starttls_parse("required", &t), 0);
	assert_int_equal(t, SMTP_STARTTLS_REQUIRED);
	assert_string_equal(smtp_starttls_name(t), "required");
	assert_int_equal(smtp_starttls_parse("optional", &t), 0);
	assert_string_equal(smtp_starttls_name(t), "optional");
	assert_int_equal(smtp_starttls_parse("off", &t), 0);
	assert_string_equal(smtp_starttls_name(t), "off");
	assert_int_equal(smtp_starttls_parse("on", &t), -1);
	assert_int_equal(smtp_starttls_parse(NULL, &t), -1);
}

/* A send that must be refused before connecting: permanent, PG_EINVAL. */
static void send_refused(const struct smtp_opts *o, const char *from, const char *const *rcpt,
			 size_t n, const char *why)
{
	struct pg_err err = PG_ERR_INIT;
	struct smtp_result res;

	assert_int_equal(smtp_send(o, from, rcpt, n, msg, sizeof(msg) - 1, &res, &err), -1);
	assert_int_equal(res.outcome, SMTP_PERMANENT);
	assert_int_equal(res.reply_code, 0);
	assert_int_equal(err.code, PG_EINVAL);
	if (!strstr(err.msg, why))
		fail_msg("'%s' does not say '%s'", err.msg, why);
}

static void test_refused_arguments(void **state)
{
	const char *one[] = { "c@d.org" }, *crlf[] = { "c@d.org>\r\nRCPT TO:<x@y.org" };
	const char *many[SMTP_RCPT_MAX + 1];
	struct smtp_opts o = SMTP_OPTS_INIT;

	(void)state;
	for (size_t i = 0; i <= SMTP_RCPT_MAX; i++)
		many[i] = "c@d.org";
	o.url = "smtp://127.0.0.1:1";
	/* a password goes only over guaranteed TLS */
	o.username = "u";
	o.password = "p";
	o.starttls = SMTP_STARTTLS_OPTIONAL;
	send_refused(&o, "a@b.org", one, 1, "only sent over TLS");
	o.starttls = SMTP_STARTTLS_OFF;
	send_refused(&o, "a@b.org", one, 1, "only sent over TLS");
	o.password = NULL;
	o.starttls = SMTP_STARTTLS_REQUIRED;
	send_refused(&o, "a@b.org", one, 1, "without a password");
	o.username = NULL;
	send_refused(&o, "a@b.org", crlf, 1, "bad recipient");
	send_refused(&o, "a@b.org\r\nDATA", one, 1, "bad sender");
	send_refused(&o, "<a@b.org>", one, 1, "bad sender");
	send_refused(&o, NULL, one, 1, "bad sender");
	send_refused(&o, "a@b.org", one, 0, "0 recipients");
	send_refused(&o, "a@b.org", many, SMTP_RCPT_MAX + 1, "recipients (1 to");
	send_refused(&o, "a@b.org", NULL, 1, "0 recipients");
	o.timeout_ms = 0;
	send_refused(&o, "a@b.org", one, 1, "timeouts must be positive");
	o.timeout_ms = 1000;
	o.url = "smtp://u:secret@127.0.0.1";
	send_refused(&o, "a@b.org", one, 1, "credentials");
	o.url = "imap://127.0.0.1";
	send_refused(&o, "a@b.org", one, 1, "not an smtp://");
	send_refused(NULL, "a@b.org", one, 1, "no options");
}

/* A port nobody listens on: bound, then closed. */
static int closed_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(s >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(s);
	return port;
}

static void test_connection_refused(void **state)
{
	const char *one[] = { "c@d.org" };
	struct smtp_opts o = SMTP_OPTS_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct smtp_result res;
	char url[64];

	(void)state;
	snprintf(url, sizeof(url), "smtp://127.0.0.1:%d", closed_port());
	o.url = url;
	o.starttls = SMTP_STARTTLS_OFF;
	assert_int_equal(smtp_send(&o, "", one, 1, msg, sizeof(msg) - 1, &res, &err), -1);
	assert_int_equal(res.outcome, SMTP_TRANSIENT);
	assert_int_equal(res.reply_code, 0);
	assert_string_equal(res.reply, "");
	assert_int_equal(err.code, PG_EIO);
	assert_non_null(strstr(err.msg, "send mail via smtp://127.0.0.1:"));
	assert_non_null(strstr(err.msg, "onnect"));
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static void password_is(const char *content, size_t len, const char *want)
{
	char path[] = "/tmp/pg-test-smtp-XXXXXX", out[SMTP_PASSWORD_MAX + 1];
	struct pg_err err = PG_ERR_INIT;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	write_file(path, content, len, 0600);
	if (want) {
		if (smtp_read_password(path, out, sizeof(out), &err) < 0)
			fail_msg("%s", err.msg);
		assert_string_equal(out, want);
	} else {
		assert_int_equal(smtp_read_password(path, out, sizeof(out), &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		assert_string_equal(out, "");
		assert_non_null(strstr(err.msg, path));
	}
	unlink(path);
}

static void test_password_file(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	char out[16], *big;

	(void)state;
	password_is("s3cret\n", 7, "s3cret");
	password_is("s3cret", 6, "s3cret");
	password_is(" with spaces \r\nsecond line\n", 27, " with spaces ");
	password_is("\n", 1, NULL);
	password_is("", 0, NULL);
	password_is("a\0b\n", 4, NULL);
	big = malloc(SMTP_PASSWORD_MAX + 2);
	assert_non_null(big);
	memset(big, 'p', SMTP_PASSWORD_MAX + 1);
	password_is(big, SMTP_PASSWORD_MAX + 1, NULL);
	big[SMTP_PASSWORD_MAX] = '\n';
	{
		char path[] = "/tmp/pg-test-smtp-XXXXXX", max[SMTP_PASSWORD_MAX + 1];
		int fd = mkstemp(path);

		assert_true(fd >= 0);
		close(fd);
		write_file(path, big, SMTP_PASSWORD_MAX + 1, 0600);
		assert_int_equal(smtp_read_password(path, max, sizeof(max), &err), 0);
		assert_int_equal(strlen(max), SMTP_PASSWORD_MAX);
		/* a password longer than the caller's room */
		assert_int_equal(smtp_read_password(path, out, sizeof(out), &err), -1);
		unlink(path);
	}
	free(big);
	assert_int_equal(smtp_read_password("/nonexistent/pw", out, sizeof(out), &err), -1);
	assert_non_null(strstr(err.msg, "password_file"));
	assert_int_equal(smtp_read_password(NULL, out, sizeof(out), &err), -1);
}

static int setup(void **state)
{
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	return pg_http_global_init(&err);
}

static int teardown(void **state)
{
	(void)state;
	pg_http_global_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_starttls_names),
		cmocka_unit_test(test_refused_arguments),
		cmocka_unit_test(test_connection_refused),
		cmocka_unit_test(test_password_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
