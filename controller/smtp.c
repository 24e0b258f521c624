/* SPDX-License-Identifier: MIT */
#include "smtp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "buf.h"
#include "fmt.h"
#include "fsutil.h"
#include "http.h"
#include "token.h"

#define SMTP_ADDR_MAX 254

int smtp_starttls_parse(const char *s, enum smtp_starttls *out)
{
	if (!s)
		return -1;
	if (strcmp(s, "required") == 0)
		*out = SMTP_STARTTLS_REQUIRED;
	else if (strcmp(s, "optional") == 0)
		*out = SMTP_STARTTLS_OPTIONAL;
	else if (strcmp(s, "off") == 0)
		*out = SMTP_STARTTLS_OFF;
	else
		return -1;
	return 0;
}

const char *smtp_starttls_name(enum smtp_starttls t)
{
	switch (t) {
	case SMTP_STARTTLS_REQUIRED:
		return "required";
	case SMTP_STARTTLS_OPTIONAL:
		return "optional";
	case SMTP_STARTTLS_OFF:
		return "off";
	}
	return "required";
}

/* ---- argument checks ---------------------------------------------------- */

int smtp_check_url(const char *url, bool *tls, struct pg_err *err)
{
	const char *auth, *end;
	size_t n;

	if (!url || !*url)
		return pg_err_set(err, PG_EINVAL, "no SMTP URL");
	/* First, and not echoed: user:password@host.  An EHLO name (the
	 * path) has no '@' either. */
	if (strchr(url, '@'))
		return pg_err_set(err, PG_EINVAL, "credentials (user@) do not go in the URL: "
				  "use a username and a password file");
	n = strlen(url);
	if (n > SMTP_URL_MAX)
		return pg_err_set(err, PG_EINVAL, "SMTP URL longer than %d bytes", SMTP_URL_MAX);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)url[i] <= ' ' || (unsigned char)url[i] > '~')
			return pg_err_set(err, PG_EINVAL, "'%s' has a space or a control character",
					  url);
	if (strncmp(url, "smtp://", 7) == 0) {
		auth = url + 7;
	} else if (strncmp(url, "smtps://", 8) == 0) {
		auth = url + 8;
	} else {
		return pg_err_set(err, PG_EINVAL, "'%s' is not an smtp:// or smtps:// URL", url);
	}
	end = auth + strcspn(auth, "/?#");
	if (end == auth || *auth == ':')
		return pg_err_set(err, PG_EINVAL, "'%s' has no host", url);
	if (strpbrk(end, "?#"))
		return pg_err_set(err, PG_EINVAL, "'%s' has a query or a fragment", url);
	if (tls)
		*tls = auth == url + 8;
	return 0;
}

/* An addr-spec for the envelope: printable ASCII without <>, so that it
 * cannot end the SMTP command or smuggle another. */
static bool envelope_addr_ok(const char *a, bool empty_ok)
{
	size_t n;

	if (!a)
		return false;
	n = strlen(a);
	if (n == 0)
		return empty_ok;
	if (n > SMTP_ADDR_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)a[i] <= ' ' || (unsigned char)a[i] > '~' || a[i] == '<' ||
		    a[i] == '>')
			return false;
	return true;
}

static int check_args(const struct smtp_opts *o, const char *mail_from,
		      const char *const *rcpt, size_t n_rcpt, const char *msg, bool *tls,
		      struct pg_err *err)
{
	if (!o)
		return pg_err_set(err, PG_EINVAL, "send mail: no options");
	if (smtp_check_url(o->url, tls, err) < 0) {
		pg_err_prefix(err, "send mail");
		return -1;
	}
	if (o->connect_timeout_ms <= 0 || o->timeout_ms <= 0)
		return pg_err_set(err, PG_EINVAL, "send mail via %s: connect and total timeouts "
				  "must be positive", o->url);
	if (o->starttls != SMTP_STARTTLS_REQUIRED && o->starttls != SMTP_STARTTLS_OPTIONAL &&
	    o->starttls != SMTP_STARTTLS_OFF)
		return pg_err_set(err, PG_EINVAL, "send mail via %s: bad starttls %d", o->url,
				  (int)o->starttls);
	if (o->username && *o->username) {
		if (!o->password)
			return pg_err_set(err, PG_EINVAL, "send mail via %s: a username without a "
					  "password", o->url);
		/* With "optional" a man in the middle strips STARTTLS and reads
		 * the password: only guaranteed TLS may carry it. */
		if (!*tls && o->starttls != SMTP_STARTTLS_REQUIRED)
			return pg_err_set(err, PG_EINVAL, "send mail via %s: a password is only "
					  "sent over TLS: use starttls \"required\" or smtps://",
					  o->url);
	}
	if (!envelope_addr_ok(mail_from, true))
		return pg_err_set(err, PG_EINVAL, "send mail via %s: bad sender '%s'", o->url,
				  mail_from ? mail_from : "");
	if (!rcpt || n_rcpt == 0 || n_rcpt > SMTP_RCPT_MAX)
		return pg_err_set(err, PG_EINVAL, "send mail via %s: %zu recipients (1 to %d)",
				  o->url, rcpt ? n_rcpt : 0, SMTP_RCPT_MAX);
	for (size_t i = 0; i < n_rcpt; i++)
		if (!envelope_addr_ok(rcpt[i], false))
			return pg_err_set(err, PG_EINVAL, "send mail via %s: bad recipient '%s'",
					  o->url, rcpt[i] ? rcpt[i] : "");
	if (!msg)
		return pg_err_set(err, PG_EINVAL, "send mail via %s: no message", o->url);
	return 0;
}

/* ---- the transfer ------------------------------------------------------- */

struct xfer {
	const char *p;		/* what is left of the message */
	size_t left;
	char cur[SMTP_REPLY_MAX];	/* the reply being read */
	size_t cur_len;
	char last[SMTP_REPLY_MAX];	/* the last complete reply */
	char refusal[SMTP_REPLY_MAX];	/* the last 4xx or 5xx reply: after one,
					 * libcurl still sends QUIT ("221 Bye") */
};

static size_t read_cb(char *buf, size_t size, size_t nitems, void *userp)
{
	struct xfer *x = userp;
	size_t n = size * nitems;

	if (n > x->left)
		n = x->left;
	memcpy(buf, x->p, n);
	x->p += n;
	x->left -= n;
	return n;
}

static void reply_add(struct xfer *x, const char *s, size_t n)
{
	if (x->cur_len > 0 && x->cur_len + 3 < sizeof(x->cur)) {
		memcpy(x->cur + x->cur_len, " / ", 3);
		x->cur_len += 3;
	}
	for (size_t i = 0; i < n && x->cur_len + 1 < sizeof(x->cur); i++) {
		unsigned char c = (unsigned char)s[i];

		x->cur[x->cur_len++] = (c < ' ' || c > '~') ? '?' : (char)c;
	}
	x->cur[x->cur_len] = '\0';
}

/* libcurl hands every server reply line to the header callback: keep the
 * last complete reply (multi-line "250-..." up to the "250 ..." line). */
static size_t header_cb(char *buf, size_t size, size_t nitems, void *userp)
{
	struct xfer *x = userp;
	size_t n = size * nitems, len = n;

	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	reply_add(x, buf, len);
	/* "NNN-" continues, "NNN " or a bare "NNN" ends a reply. */
	if (!(len >= 4 && buf[3] == '-')) {
		memcpy(x->last, x->cur, x->cur_len + 1);
		if (x->cur[0] == '4' || x->cur[0] == '5')
			memcpy(x->refusal, x->cur, x->cur_len + 1);
		x->cur_len = 0;
		x->cur[0] = '\0';
	}
	return n;
}

/* Transient unless a retry cannot help: a 5xx reply, or a failure that
 * comes from our own configuration. */
static enum smtp_outcome classify(CURLcode cc, long code)
{
	if (code >= 400 && code < 500)
		return SMTP_TRANSIENT;
	if (code >= 500 && code < 600)
		return SMTP_PERMANENT;
	switch (cc) {
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_NOT_BUILT_IN:
	case CURLE_BAD_FUNCTION_ARGUMENT:
	case CURLE_USE_SSL_FAILED:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_LOGIN_DENIED:
	case CURLE_AUTH_ERROR:
		return SMTP_PERMANENT;
	default:
		return SMTP_TRANSIENT;
	}
}

#define SETOPT(opt, val)							\
	do {									\
		cc = curl_easy_setopt(h, opt, val);				\
		if (cc != CURLE_OK) {						\
			pg_err_set(err, cc == CURLE_OUT_OF_MEMORY ? PG_ENOMEM	\
				   : PG_EINVAL, "send mail via %s: set %s: %s",	\
				   opts->url, #opt, curl_easy_strerror(cc));	\
			goto out;						\
		}								\
	} while (0)

int smtp_send(const struct smtp_opts *opts, const char *mail_from,
	      const char *const *rcpt, size_t n_rcpt, const char *msg, size_t len,
	      struct smtp_result *res, struct pg_err *err)
{
	struct xfer *x = NULL;
	struct curl_slist *rcpts = NULL;
	char errbuf[CURL_ERROR_SIZE] = "";
	char from[SMTP_ADDR_MAX + 3];
	bool tls = false;
	long code = 0;
	CURLcode cc;
	CURL *h = NULL;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	res->outcome = SMTP_PERMANENT;
	if (check_args(opts, mail_from, rcpt, n_rcpt, msg, &tls, err) < 0)
		goto out;
	x = calloc(1, sizeof(*x));
	h = curl_easy_init();
	if (!x || !h) {
		pg_err_set(err, PG_ENOMEM, "send mail via %s: out of memory", opts->url);
		goto out;
	}
	x->p = msg;
	x->left = len;
	if (pg_fmt(from, sizeof(from), "<%s>", mail_from) < 0) {
		pg_err_set(err, PG_EINVAL, "send mail via %s: sender '%.64s...' too long",
			   opts->url, mail_from);
		goto out;
	}
	for (size_t i = 0; i < n_rcpt; i++) {
		char to[SMTP_ADDR_MAX + 3];
		struct curl_slist *l;

		if (pg_fmt(to, sizeof(to), "<%s>", rcpt[i]) < 0) {
			pg_err_set(err, PG_EINVAL, "send mail via %s: recipient '%.64s...' too "
				   "long", opts->url, rcpt[i]);
			goto out;
		}
		l = curl_slist_append(rcpts, to);
		if (!l) {
			pg_err_set(err, PG_ENOMEM, "send mail via %s: out of memory", opts->url);
			goto out;
		}
		rcpts = l;
	}

	SETOPT(CURLOPT_ERRORBUFFER, errbuf);
	SETOPT(CURLOPT_URL, opts->url);
	SETOPT(CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	SETOPT(CURLOPT_NOSIGNAL, 1L);
	SETOPT(CURLOPT_CONNECTTIMEOUT_MS, opts->connect_timeout_ms);
	SETOPT(CURLOPT_TIMEOUT_MS, opts->timeout_ms);
	SETOPT(CURLOPT_USE_SSL, tls || opts->starttls == SMTP_STARTTLS_REQUIRED ? CURLUSESSL_ALL
				: opts->starttls == SMTP_STARTTLS_OPTIONAL ? CURLUSESSL_TRY
									 : CURLUSESSL_NONE);
	SETOPT(CURLOPT_SSL_VERIFYPEER, 1L);
	SETOPT(CURLOPT_SSL_VERIFYHOST, 2L);
	if (opts->ca_file && *opts->ca_file)
		SETOPT(CURLOPT_CAINFO, opts->ca_file);
	if (opts->username && *opts->username) {
		SETOPT(CURLOPT_USERNAME, opts->username);
		SETOPT(CURLOPT_PASSWORD, opts->password);
	}
	SETOPT(CURLOPT_MAIL_FROM, from);
	SETOPT(CURLOPT_MAIL_RCPT, rcpts);
	SETOPT(CURLOPT_UPLOAD, 1L);
	SETOPT(CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
	SETOPT(CURLOPT_READFUNCTION, read_cb);
	SETOPT(CURLOPT_READDATA, x);
	SETOPT(CURLOPT_HEADERFUNCTION, header_cb);
	SETOPT(CURLOPT_HEADERDATA, x);

	cc = curl_easy_perform(h);
	if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK)
		code = 0;
	res->reply_code = code;
	memcpy(res->reply, code >= 400 && x->refusal[0] ? x->refusal : x->last,
	       sizeof(res->reply));
	if (cc == CURLE_OK) {
		res->outcome = SMTP_SENT;
		rc = 0;
		goto out;
	}
	res->outcome = classify(cc, code);
	{
		const char *reason = errbuf[0] ? errbuf : curl_easy_strerror(cc);

		/* The server's words only when they are the refusal: after a
		 * dropped connection the last reply is an old "250".  libcurl
		 * says only "Weird server reply" to a refused DATA. */
		if (code >= 400 && x->refusal[0])
			pg_err_set(err, pg_http_errcode((int)cc), "send mail via %s: %s (server said: %s)",
				   opts->url, !errbuf[0] && cc == CURLE_WEIRD_SERVER_REPLY ?
				   "refused" : reason, x->refusal);
		else if (cc == CURLE_OPERATION_TIMEDOUT)
			pg_err_set(err, PG_ETIMEOUT, "send mail via %s: %s (connect timeout %ld ms, "
				   "timeout %ld ms)", opts->url, reason, opts->connect_timeout_ms,
				   opts->timeout_ms);
		else
			pg_err_set(err, pg_http_errcode((int)cc), "send mail via %s: %s", opts->url, reason);
	}
out:
	curl_slist_free_all(rcpts);
	if (h)
		curl_easy_cleanup(h);
	free(x);
	return rc;
}

#undef SETOPT

int smtp_read_password(const char *path, char *out, size_t outlen, struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(64 * 1024);
	size_t n = 0;
	int rc = -1;

	if (outlen > 0)
		out[0] = '\0';
	if (!path || !*path) {
		pg_err_set(err, PG_EINVAL, "password_file: no path");
		goto out;
	}
	if (pg_read_file(path, &b, err) < 0) {
		pg_err_prefix(err, "password_file");
		goto out;
	}
	while (n < b.len && b.data[n] != '\n' && b.data[n] != '\r')
		n++;
	if (memchr(b.data ? b.data : "", '\0', n)) {
		pg_err_set(err, PG_EINVAL, "password_file %s: the password holds a NUL byte", path);
		goto out;
	}
	if (n == 0 || n > SMTP_PASSWORD_MAX || n >= outlen) {
		pg_err_set(err, PG_EINVAL, "password_file %s: the password (its first line) must "
			   "be 1 to %d bytes", path, SMTP_PASSWORD_MAX);
		goto out;
	}
	memcpy(out, b.data, n);
	out[n] = '\0';
	pg_secret_warn_shared("mail.password_file", path);
	rc = 0;
out:
	if (b.data)
		explicit_bzero(b.data, b.alloc);
	pg_buf_release(&b);
	return rc;
}
