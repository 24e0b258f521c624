/* SPDX-License-Identifier: MIT */
#ifndef CTL_SMTP_H
#define CTL_SMTP_H

/*
 * Send one mail over SMTP with libcurl, and say whether trying again later
 * can help.
 *
 *   struct smtp_opts o = SMTP_OPTS_INIT;
 *   struct smtp_result res;
 *   const char *rcpt[] = { "test-report@dpdk.org" };
 *
 *   o.url = "smtp://mail.example.org:587";
 *   if (smtp_send(&o, "perfgate@lab.example.org", rcpt, 1, msg, len, &res, &err) < 0) {
 *           if (res.outcome == SMTP_TRANSIENT)
 *                   ... retry with backoff: no connection, timeout, 4xx ...
 *           else
 *                   ... record err.msg, do not retry as is: 5xx, TLS, auth ...
 *   }
 *
 * The URL is smtp://HOST[:PORT][/EHLO-NAME] (STARTTLS per opts.starttls)
 * or smtps://HOST[:PORT][/EHLO-NAME] (TLS from the first byte); without a
 * path libcurl greets with "EHLO localhost", which some relays refuse, so
 * name this host there.  Credentials never travel in the URL (refused) nor
 * without TLS (refused: username set with smtp:// needs starttls REQUIRED).
 * The peer's certificate and host name are always verified, against
 * opts.ca_file when set, else the system's CAs.
 *
 * The message must be a complete RFC 5322 message with CRLF line ends
 * (report_mail_format() makes one); libcurl dot-stuffs it.  It is read from
 * the caller's buffer through CURLOPT_READFUNCTION, never copied to a file.
 *
 * Threads: as lib/http.h: pg_http_global_init() once in main() first; then
 * smtp_send() may run in any thread (one handle per call, no signals).
 */

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define SMTP_URL_MAX 1024
#define SMTP_CONNECT_TIMEOUT_MS 10000L
#define SMTP_TIMEOUT_MS 60000L
#define SMTP_REPLY_MAX 512	/* bytes kept of the server's last reply */
#define SMTP_RCPT_MAX 64	/* envelope recipients of one mail */
#define SMTP_PASSWORD_MAX 1024	/* bytes of a password file's first line */

enum smtp_starttls {
	SMTP_STARTTLS_REQUIRED,	/* fail (permanent) unless the server does STARTTLS */
	SMTP_STARTTLS_OPTIONAL,	/* use it when offered, else go on in clear text */
	SMTP_STARTTLS_OFF,	/* never */
};

/* Parse "required", "optional" or "off".  Returns 0 or -1. */
int smtp_starttls_parse(const char *s, enum smtp_starttls *out);
const char *smtp_starttls_name(enum smtp_starttls t);

/* Check an SMTP URL as smtp_send() will: smtp:// or smtps://, a host,
 * printable ASCII, no credentials, query or fragment, at most
 * SMTP_URL_MAX bytes.  *tls (may be NULL) is set for smtps://.  Returns 0,
 * or -1 with PG_EINVAL saying why. */
int smtp_check_url(const char *url, bool *tls, struct pg_err *err);

/* Options; start from SMTP_OPTS_INIT.  Strings are borrowed for the call. */
struct smtp_opts {
	const char *url;		/* required: smtp:// or smtps:// */
	enum smtp_starttls starttls;	/* for smtp:// (smtps:// is TLS anyway) */
	const char *username;		/* NULL: no AUTH */
	const char *password;		/* with username (smtp_read_password()) */
	const char *ca_file;		/* PEM bundle; NULL: the system's */
	long connect_timeout_ms;	/* > 0: TCP, TLS and the SMTP greeting,
					 * EHLO, STARTTLS and AUTH (libcurl
					 * counts the handshake as connecting) */
	long timeout_ms;		/* > 0: the whole exchange */
};

#define SMTP_OPTS_INIT {					\
	.starttls = SMTP_STARTTLS_REQUIRED,			\
	.connect_timeout_ms = SMTP_CONNECT_TIMEOUT_MS,		\
	.timeout_ms = SMTP_TIMEOUT_MS,				\
}

enum smtp_outcome {
	SMTP_SENT,		/* the server took the message (250 after DATA) */
	SMTP_TRANSIENT,		/* try again later: connection refused or reset,
				 * DNS failure, timeout, a 4xx reply */
	SMTP_PERMANENT,		/* it will fail again as it is: a 5xx reply
				 * (rejected sender or recipient, bad
				 * credentials, message refused), STARTTLS
				 * required but not offered, certificate not
				 * trusted, bad URL or options */
};

struct smtp_result {
	enum smtp_outcome outcome;
	long reply_code;		/* the server's last reply code; 0: none */
	char reply[SMTP_REPLY_MAX];	/* that reply's text, lines joined by " / "
					 * (control characters made '?'); "" */
};

/*
 * Send msg[0..len) from the envelope sender mail_from (an addr-spec, no
 * <>; "" for the null sender) to the n_rcpt (1..SMTP_RCPT_MAX) addresses
 * rcpt[] (addr-specs).  Fills *res in every case.
 *
 * All or nothing: a recipient the server refuses fails the whole mail
 * (libcurl's default), since a report that silently misses the list is
 * worse than none; res->reply then names the refused address, and a caller
 * may send again without an optional Cc (the patch's author).
 *
 * Returns 0 when sent (res->outcome SMTP_SENT), or -1 with res->outcome
 * SMTP_TRANSIENT or SMTP_PERMANENT and err:
 *   PG_EINVAL   bad arguments or options (permanent), e.g. a password
 *               without TLS, credentials in the URL, an address with
 *               CR, LF or <>
 *   PG_ETIMEOUT connect or total timeout (transient)
 *   PG_EIO      anything else
 * err.msg says where it failed, libcurl's reason and the server's reply:
 *   "send mail via smtp://127.0.0.1:2525: RCPT failed: 550 (server said:
 *    550 5.1.1 <nobody@example.org>: Recipient address rejected)"
 * The URL in messages never holds a password (none is ever in it).
 */
int smtp_send(const struct smtp_opts *opts, const char *mail_from,
	      const char *const *rcpt, size_t n_rcpt, const char *msg, size_t len,
	      struct smtp_result *res, struct pg_err *err);

/*
 * Read a password file: its first line, without the line end (CR, LF);
 * other white space is kept, as it may be part of a password.  Empty, over
 * SMTP_PASSWORD_MAX bytes, or holding a NUL is an error.  Warns (log) when
 * the file is readable by group or others.  out gets the password
 * NUL-terminated; wipe it (explicit_bzero) when done.  Returns 0 or -1.
 */
int smtp_read_password(const char *path, char *out, size_t outlen, struct pg_err *err);

#endif
