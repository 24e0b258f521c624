/* SPDX-License-Identifier: MIT */
#include "report_mail.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fmt.h"
#include "sanitize.h"

/* RFC 5322 2.1.1: lines SHOULD stay within 78 characters and MUST within
 * 998; RFC 2047 2: an encoded word is at most 75 characters; RFC 2045
 * 6.7: quoted-printable lines at most 76. */
#define LINE_SOFT 78
#define LINE_HARD 998
#define EW_MAX 75
#define EW_PREFIX "=?UTF-8?Q?"
#define EW_SUFFIX "?="
#define EW_TEXT_MAX (EW_MAX - (sizeof(EW_PREFIX) - 1) - (sizeof(EW_SUFFIX) - 1))
#define QP_LINE 76

static const char hexdig[] = "0123456789ABCDEF";

const char *report_status_name(enum report_status s)
{
	switch (s) {
	case REPORT_SUCCESS:
		return "SUCCESS";
	case REPORT_WARNING:
		return "WARNING";
	case REPORT_FAILURE:
		return "FAILURE";
	}
	return "FAILURE";
}

int report_status_from_check(const char *state, enum report_status *out)
{
	if (!state)
		return -1;
	if (strcmp(state, "success") == 0)
		*out = REPORT_SUCCESS;
	else if (strcmp(state, "warning") == 0)
		*out = REPORT_WARNING;
	else if (strcmp(state, "fail") == 0)
		*out = REPORT_FAILURE;
	else
		return -1;
	return 0;
}

int report_cc_author_parse(const char *s, enum report_cc_author *out)
{
	if (!s)
		return -1;
	if (strcmp(s, "failure") == 0)
		*out = REPORT_CC_AUTHOR_FAILURE;
	else if (strcmp(s, "never") == 0)
		*out = REPORT_CC_AUTHOR_NEVER;
	else if (strcmp(s, "always") == 0)
		*out = REPORT_CC_AUTHOR_ALWAYS;
	else
		return -1;
	return 0;
}

const char *report_cc_author_name(enum report_cc_author c)
{
	switch (c) {
	case REPORT_CC_AUTHOR_FAILURE:
		return "failure";
	case REPORT_CC_AUTHOR_NEVER:
		return "never";
	case REPORT_CC_AUTHOR_ALWAYS:
		return "always";
	}
	return "failure";
}

/* ---- syntax checks ------------------------------------------------------ */

static bool is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* RFC 5322 atext. */
static bool is_atext(unsigned char c)
{
	return is_alnum(c) || (c && strchr("!#$%&'*+-/=?^_`{|}~", c));
}

static bool is_slug(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return false;
	return true;
}

/* A host name: labels of letters, digits and inner '-' joined by single
 * dots. */
static bool is_hostname(const char *s, size_t n)
{
	size_t label = 0;

	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '.') {
			if (label == 0 || s[i - 1] == '-')
				return false;
			label = 0;
		} else if (is_alnum(c) || (c == '-' && label > 0)) {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return label > 0 && s[n - 1] != '-';
}

bool report_mail_addr_ok(const char *addr)
{
	const char *at;
	size_t n, local;

	if (!addr)
		return false;
	n = strlen(addr);
	at = strrchr(addr, '@');
	if (n == 0 || n > REPORT_MAIL_ADDR_MAX || !at)
		return false;
	local = (size_t)(at - addr);
	/* dot-atom: atext runs joined by single dots */
	if (local == 0 || local > 64 || addr[0] == '.' || addr[local - 1] == '.')
		return false;
	for (size_t i = 0; i < local; i++) {
		if (addr[i] == '.') {
			if (addr[i + 1] == '.')
				return false;
		} else if (!is_atext((unsigned char)addr[i])) {
			return false;
		}
	}
	at++;
	if (*at == '[') {
		size_t m = strlen(at);

		if (m < 3 || at[m - 1] != ']')
			return false;
		for (size_t i = 1; i + 1 < m; i++)
			if (!is_alnum((unsigned char)at[i]) && !strchr(".:", at[i]))
				return false;
		return true;
	}
	return is_hostname(at, strlen(at));
}

const char *report_mail_addr_domain(const char *addr)
{
	const char *at = addr ? strrchr(addr, '@') : NULL;

	return at && at[1] ? at + 1 : NULL;
}

bool report_mail_msgid_ok(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	if (n == 0 || n > REPORT_MAIL_MSGID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] > '~' ||
		    s[i] == '<' || s[i] == '>')
			return false;
	return true;
}

static bool printable_ascii(const char *s, bool space_ok)
{
	for (; *s; s++)
		if ((unsigned char)*s < (space_ok ? ' ' : '!') || (unsigned char)*s > '~')
			return false;
	return true;
}

/* ---- small builders ---------------------------------------------------- */

static int out_fail(struct pg_err *err, const char *what)
{
	return pg_err_set(err, errno == E2BIG ? PG_ETOOBIG : PG_ENOMEM,
			  "%s: %s", what, errno == E2BIG ? "message too large" : "out of memory");
}

int report_mail_parse_mailbox(const char *s, char **name, char **addr, struct pg_err *err)
{
	const char *lt, *gt, *a, *ae, *ns, *ne;
	char *nm = NULL, *ad = NULL;
	size_t n;
	int rc = -1;

	*name = NULL;
	*addr = NULL;
	if (!s) {
		pg_err_set(err, PG_EINVAL, "no address");
		goto out;
	}
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	lt = memchr(s, '<', n);
	if (lt) {
		gt = memchr(lt, '>', n - (size_t)(lt - s));
		if (!gt || gt != s + n - 1) {
			pg_err_set(err, PG_EINVAL, "'%s' is not \"Name <addr@domain>\"", s);
			goto out;
		}
		a = lt + 1;
		ae = gt;
		ns = s;
		ne = lt;
		while (ns < ne && (*ns == ' ' || *ns == '\t'))
			ns++;
		while (ne > ns && (ne[-1] == ' ' || ne[-1] == '\t'))
			ne--;
	} else {
		a = s;
		while (a < s + n && (*a == ' ' || *a == '\t'))
			a++;
		ae = s + n;
		ns = ne = NULL;
	}
	ad = strndup(a, (size_t)(ae - a));
	if (!ad) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (!report_mail_addr_ok(ad)) {
		pg_err_set(err, PG_EINVAL, "'%s' is not an address (local@domain)", ad);
		goto out;
	}
	if (ns && ne > ns) {
		size_t k = 0;

		if ((size_t)(ne - ns) > REPORT_MAIL_NAME_MAX) {
			pg_err_set(err, PG_EINVAL, "'%s': the name is longer than %d bytes", s,
				   REPORT_MAIL_NAME_MAX);
			goto out;
		}
		nm = malloc((size_t)(ne - ns) + 1);
		if (!nm) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
		/* A quoted name loses its quotes and backslash escapes. */
		if (ne - ns >= 2 && *ns == '"' && ne[-1] == '"') {
			for (const char *p = ns + 1; p < ne - 1; p++) {
				if (*p == '\\' && p + 1 < ne - 1)
					p++;
				nm[k++] = *p;
			}
		} else {
			memcpy(nm, ns, (size_t)(ne - ns));
			k = (size_t)(ne - ns);
		}
		nm[k] = '\0';
		if (k == 0) {
			free(nm);
			nm = NULL;
		}
	}
	*name = nm;
	*addr = ad;
	nm = ad = NULL;
	rc = 0;
out:
	free(nm);
	free(ad);
	return rc;
}

int report_mail_msgid(int64_t run_id, const char *context, const char *domain,
		      char *out, size_t outlen, struct pg_err *err)
{
	int n;

	if (outlen > 0)
		out[0] = '\0';
	if (run_id <= 0)
		return pg_err_set(err, PG_EINVAL, "Message-ID: run id %" PRId64 " is not positive",
				  run_id);
	if (!context || !is_slug(context, REPORT_MAIL_LABEL_MAX))
		return pg_err_set(err, PG_EINVAL, "Message-ID: context '%s' is not a slug "
				  "([A-Za-z0-9_-])", context ? context : "");
	if (!domain || !is_hostname(domain, strlen(domain)))
		return pg_err_set(err, PG_EINVAL, "Message-ID: '%s' is not a host name",
				  domain ? domain : "");
	n = snprintf(out, outlen, "perfgate.r%" PRId64 ".%s@%s", run_id, context, domain);
	if (n < 0 || (size_t)n >= outlen || (size_t)n > REPORT_MAIL_MSGID_MAX) {
		if (outlen > 0)
			out[0] = '\0';
		return pg_err_set(err, PG_EINVAL, "Message-ID: longer than the room for it");
	}
	return n;
}

int report_mail_patch_url(const char *tmpl, int64_t patch_id, char *out, size_t outlen,
			  struct pg_err *err)
{
	static const char key[] = "{id}";
	size_t k = 0;
	int ids = 0;

	if (outlen > 0)
		out[0] = '\0';
	if (!tmpl)
		return pg_err_set(err, PG_EINVAL, "patch URL: no template");
	if (patch_id <= 0)
		return pg_err_set(err, PG_EINVAL, "patch URL: patch id %" PRId64 " is not positive",
				  patch_id);
	for (const char *p = tmpl; *p;) {
		char piece[24];
		const char *add = p;
		size_t len = 1;

		if (*p == '{') {
			int n;

			if (strncmp(p, key, sizeof(key) - 1) != 0)
				goto bad;
			n = pg_fmt(piece, sizeof(piece), "%" PRId64, patch_id);
			if (n < 0) {
				if (outlen > 0)
					out[0] = '\0';
				return pg_err_set(err, PG_EINVAL, "patch URL: patch id %" PRId64
						  " too long", patch_id);
			}
			len = (size_t)n;
			add = piece;
			p += sizeof(key) - 1;
			ids++;
		} else {
			if ((unsigned char)*p <= ' ' || (unsigned char)*p > '~')
				goto bad;
			p++;
		}
		if (k + len >= outlen || k + len > REPORT_MAIL_URL_MAX) {
			if (outlen > 0)
				out[0] = '\0';
			return pg_err_set(err, PG_EINVAL, "patch URL: longer than %d bytes",
					  REPORT_MAIL_URL_MAX);
		}
		memcpy(out + k, add, len);
		k += len;
	}
	if (ids == 0)
		goto bad;
	out[k] = '\0';
	return (int)k;
bad:
	if (outlen > 0)
		out[0] = '\0';
	return pg_err_set(err, PG_EINVAL, "patch URL template '%s': wants printable ASCII and "
			  "\"{id}\" (no other braces)", tmpl);
}

/* ---- subject ------------------------------------------------------------ */

/*
 * `echo $title`: runs of white space (space, tab, CR, LF) become one
 * space, none at either end; then the text is made safe to show
 * (pg_sanitize(), one line): other controls, C1 and bidirectional
 * characters are written as visible escapes and invalid UTF-8 as U+FFFD,
 * so that what a mail reader shows is what was sent, not what it does.
 * Appends to out; returns 0 or -1 (out full).
 */
static int single_spaced(const char *in, struct pg_buf *out)
{
	struct pg_buf one = PG_BUF_INIT(PG_BUF_NOLIMIT);
	bool space = false;
	int rc = -1;

	for (const char *p = in; *p; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
			space = one.len > 0;
			continue;
		}
		if ((space && pg_buf_addch(&one, ' ') < 0) || pg_buf_addch(&one, *p) < 0)
			goto out;
		space = false;
	}
	rc = pg_sanitize(out, pg_buf_str(&one), one.len, PG_SAN_LINE);
out:
	pg_buf_release(&one);
	return rc;
}

/* An alert's subject: "[perfgate] " and the subject single-spaced. */
static int alert_subject(const char *subject, struct pg_buf *out, struct pg_err *err)
{
	if (!subject || !*subject || strlen(subject) > REPORT_MAIL_SUBJECT_MAX)
		return pg_err_set(err, PG_EINVAL, "subject: an alert needs one of 1 to %d bytes",
				  REPORT_MAIL_SUBJECT_MAX);
	if (pg_buf_adds(out, "[perfgate] ") < 0 || single_spaced(subject, out) < 0)
		return out_fail(err, "subject");
	return 0;
}

int report_mail_subject(const char *subject, enum report_status status, int64_t patch_id,
			struct pg_buf *out, struct pg_err *err)
{
	static const char tag[] = "[dpdk-dev] ";
	struct pg_buf s = PG_BUF_INIT(REPORT_MAIL_SUBJECT_MAX * PG_SAN_GROWTH);
	const char *cut;
	int rc = -1;

	if (!subject)
		subject = "";
	if (strlen(subject) > REPORT_MAIL_SUBJECT_MAX) {
		pg_err_set(err, PG_EINVAL, "subject: longer than %d bytes", REPORT_MAIL_SUBJECT_MAX);
		goto out;
	}
	if (single_spaced(subject, &s) < 0) {
		out_fail(err, "subject");
		goto out;
	}
	/* sed 's,\[dpdk-dev\] ,,': the first one, wherever it is. */
	cut = strstr(pg_buf_str(&s), tag);
	if (pg_buf_printf(out, "|%s| pw", report_status_name(status)) < 0 ||
	    (patch_id > 0 ? pg_buf_printf(out, "%" PRId64, patch_id) : pg_buf_addch(out, '?')) < 0)
		goto full;
	if (s.len > 0 && pg_buf_addch(out, ' ') < 0)
		goto full;
	if (cut) {
		size_t at = (size_t)(cut - pg_buf_str(&s));

		if (pg_buf_add(out, s.data, at) < 0 ||
		    pg_buf_adds(out, cut + sizeof(tag) - 1) < 0)
			goto full;
	} else if (s.len > 0 && pg_buf_add(out, s.data, s.len) < 0) {
		goto full;
	}
	rc = 0;
	goto out;
full:
	out_fail(err, "subject");
out:
	pg_buf_release(&s);
	return rc;
}

/* ---- recipients --------------------------------------------------------- */

static bool addr_set(const struct report_mail_addr *a)
{
	return a->addr && *a->addr;
}

bool report_mail_cc_author(const struct report_mail *r)
{
	if (!addr_set(&r->author))
		return false;
	switch (r->cc_author) {
	case REPORT_CC_AUTHOR_NEVER:
		return false;
	case REPORT_CC_AUTHOR_FAILURE:
		if (r->status == REPORT_SUCCESS)
			return false;
		break;
	case REPORT_CC_AUTHOR_ALWAYS:
		break;
	}
	if (r->to.addr && strcasecmp(r->author.addr, r->to.addr) == 0)
		return false;
	for (size_t i = 0; i < r->n_cc; i++)
		if (r->cc[i].addr && strcasecmp(r->author.addr, r->cc[i].addr) == 0)
			return false;
	return true;
}

static size_t rcpt_add(const char **rcpt, size_t n, size_t max, const char *addr,
		       const char *const *seen, size_t n_seen)
{
	for (size_t i = 0; i < n_seen; i++)
		if (strcasecmp(seen[i], addr) == 0)
			return n;
	if (n < max)
		rcpt[n] = addr;
	return n + 1;
}

size_t report_mail_rcpts(const struct report_mail *r, const char **rcpt, size_t max)
{
	const char *all[REPORT_MAIL_CC_MAX + 2];
	size_t n_all = 0, n = 0;

	if (addr_set(&r->to))
		all[n_all++] = r->to.addr;
	for (size_t i = 0; i < r->n_cc && i < REPORT_MAIL_CC_MAX; i++)
		if (addr_set(&r->cc[i]))
			all[n_all++] = r->cc[i].addr;
	if (report_mail_cc_author(r))
		all[n_all++] = r->author.addr;
	for (size_t i = 0; i < n_all; i++)
		n = rcpt_add(rcpt, n, max, all[i], all, i);
	return n;
}

/* ---- header fields with folding ----------------------------------------- */

struct hdr {
	struct pg_buf *out;
	size_t col;	/* characters on the current line */
	size_t start;	/* col after "Name:" */
	size_t limit;	/* fold beyond this many characters */
	bool bad;	/* an append failed */
};

static void hdr_begin(struct hdr *h, struct pg_buf *out, const char *name)
{
	h->out = out;
	h->bad = pg_buf_printf(out, "%s:", name) < 0;
	h->col = strlen(name) + 1;
	h->start = h->col;
	h->limit = LINE_SOFT;
}

/* Append " token", or fold before it when the line would pass the limit
 * and something is on it already. */
static void hdr_token(struct hdr *h, const char *tok, size_t len)
{
	if (h->bad)
		return;
	if (h->col > h->start && h->col + 1 + len > h->limit) {
		h->bad = pg_buf_add(h->out, "\r\n", 2) < 0;
		h->col = 0;
	}
	h->bad = h->bad || pg_buf_addch(h->out, ' ') < 0 || pg_buf_add(h->out, tok, len) < 0;
	h->col += 1 + len;
}

static int hdr_end(struct hdr *h)
{
	if (h->bad || pg_buf_add(h->out, "\r\n", 2) < 0)
		return -1;
	return 0;
}

/* Q-encoding's safe set for any header context (RFC 2047 5(3)). */
static bool q_safe(unsigned char c)
{
	return is_alnum(c) || c == '!' || c == '*' || c == '+' || c == '-' || c == '/';
}

static size_t utf8_len(unsigned char lead)
{
	if (lead >= 0xf0 && lead < 0xf8)
		return 4;
	if (lead >= 0xe0)
		return lead < 0xf0 ? 3 : 1;
	if (lead >= 0xc0)
		return 2;
	return 1;
}

/* Emit text[0..len) as encoded words of at most 75 characters, never
 * splitting a UTF-8 sequence. */
static void hdr_encoded(struct hdr *h, const char *text, size_t len)
{
	char word[EW_MAX + 4];
	size_t i = 0;

	while (i < len && !h->bad) {
		size_t w = sizeof(EW_PREFIX) - 1;

		memcpy(word, EW_PREFIX, w);
		while (i < len) {
			size_t cl = utf8_len((unsigned char)text[i]), need = 0;

			if (cl > len - i)
				cl = len - i;
			for (size_t j = 0; j < cl; j++) {
				unsigned char c = (unsigned char)text[i + j];

				need += (q_safe(c) || c == ' ') ? 1 : 3;
			}
			if (w - (sizeof(EW_PREFIX) - 1) + need > EW_TEXT_MAX &&
			    w > sizeof(EW_PREFIX) - 1)
				break;
			for (size_t j = 0; j < cl; j++) {
				unsigned char c = (unsigned char)text[i + j];

				if (c == ' ') {
					word[w++] = '_';
				} else if (q_safe(c)) {
					word[w++] = (char)c;
				} else {
					word[w++] = '=';
					word[w++] = hexdig[c >> 4];
					word[w++] = hexdig[c & 15];
				}
			}
			i += cl;
		}
		memcpy(word + w, EW_SUFFIX, sizeof(EW_SUFFIX) - 1);
		w += sizeof(EW_SUFFIX) - 1;
		hdr_token(h, word, w);
	}
}

/* Whether a word of unstructured text must be encoded: non-ASCII, a
 * control character, something a decoder would take for an encoded word,
 * or too long for a line of its own (RFC 5322's 998; a long ASCII word
 * below that stays readable on a long line). */
static bool word_needs_encoding(const char *w, size_t n)
{
	if (n + 1 > LINE_HARD)
		return true;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)w[i];

		if (c < ' ' || c >= 0x7f)
			return true;
		if (c == '=' && i + 1 < n && w[i + 1] == '?')
			return true;
	}
	return false;
}

/* Unstructured text (the subject), single-spaced already: plain words as
 * they are, each run of words that needs encoding as encoded words (the
 * spaces inside the run are encoded, so that decoders keep them). */
static void hdr_unstructured(struct hdr *h, const char *s)
{
	const char *p = s;

	while (*p) {
		const char *we = strchr(p, ' '), *run_end;

		if (!we)
			we = p + strlen(p);
		if (!word_needs_encoding(p, (size_t)(we - p))) {
			hdr_token(h, p, (size_t)(we - p));
			p = *we ? we + 1 : we;
			continue;
		}
		run_end = we;
		while (*run_end) {
			const char *n = run_end + 1, *ne = strchr(n, ' ');

			if (!ne)
				ne = n + strlen(n);
			if (!word_needs_encoding(n, (size_t)(ne - n)))
				break;
			run_end = ne;
		}
		hdr_encoded(h, p, (size_t)(run_end - p));
		p = *run_end ? run_end + 1 : run_end;
	}
}

/* One mailbox of an address list: its display name (atoms, a quoted
 * string, or encoded words), then <addr>; `comma` glues "," to it. */
static int mailbox_tokens(struct hdr *h, const struct report_mail_addr *a, bool comma)
{
	struct pg_buf name = PG_BUF_INIT(REPORT_MAIL_NAME_MAX * PG_SAN_GROWTH);
	struct pg_buf tok = PG_BUF_INIT(REPORT_MAIL_NAME_MAX * PG_SAN_GROWTH * 2 +
					REPORT_MAIL_ADDR_MAX + 8);
	bool ascii = true, atoms = true;
	int rc = -1;

	/* The name single-spaced and safe to show, as the subject. */
	if (single_spaced(a->name ? a->name : "", &name) < 0)
		goto out;
	for (size_t i = 0; i < name.len; i++) {
		unsigned char c = (unsigned char)name.data[i];

		if (c >= 0x80)
			ascii = false;
		else if (c != ' ' && !is_atext(c))
			atoms = false;
	}
	if (name.len > 0 && !ascii) {
		hdr_encoded(h, name.data, name.len);
	} else if (name.len > 0 && atoms) {
		hdr_unstructured(h, name.data);
	} else if (name.len > 0) {
		/* A quoted string, one token: no folding inside it. */
		if (pg_buf_addch(&tok, '"') < 0)
			goto out;
		for (size_t i = 0; i < name.len; i++) {
			if ((name.data[i] == '"' || name.data[i] == '\\') &&
			    pg_buf_addch(&tok, '\\') < 0)
				goto out;
			if (pg_buf_addch(&tok, name.data[i]) < 0)
				goto out;
		}
		if (pg_buf_addch(&tok, '"') < 0)
			goto out;
		hdr_token(h, tok.data, tok.len);
		pg_buf_reset(&tok);
	}
	if (pg_buf_printf(&tok, name.len > 0 ? "<%s>%s" : "%s%s", a->addr,
			  comma ? "," : "") < 0)
		goto out;
	hdr_token(h, tok.data, tok.len);
	rc = h->bad ? -1 : 0;
out:
	pg_buf_release(&name);
	pg_buf_release(&tok);
	return rc;
}

/* A mailbox that fits on a line of its own is never folded inside: it
 * moves to the next line whole. */
static int hdr_mailbox(struct hdr *h, const struct report_mail_addr *a, bool comma)
{
	/* A long name of escapes, Q-encoded: 3 bytes a byte and word breaks. */
	struct pg_buf one = PG_BUF_INIT(REPORT_MAIL_NAME_MAX * PG_SAN_GROWTH * 4 +
				       REPORT_MAIL_ADDR_MAX + 64);
	struct hdr s = { .out = &one, .limit = SIZE_MAX };
	int rc = -1;

	if (mailbox_tokens(&s, a, comma) < 0)
		goto out;
	if (one.len <= LINE_SOFT)
		hdr_token(h, one.data + 1, one.len - 1);	/* without its leading space */
	else if (mailbox_tokens(h, a, comma) < 0)
		goto out;
	rc = h->bad ? -1 : 0;
out:
	pg_buf_release(&one);
	return rc;
}

static int hdr_addresses(struct pg_buf *out, const char *field,
			 const struct report_mail_addr *const *list, size_t n)
{
	struct hdr h;

	hdr_begin(&h, out, field);
	for (size_t i = 0; i < n; i++)
		if (hdr_mailbox(&h, list[i], i + 1 < n) < 0)
			return -1;
	return hdr_end(&h);
}

/* ---- date --------------------------------------------------------------- */

static int format_date(int64_t ms, char *out, size_t outlen)
{
	static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char *const months[] = {
		"Jan", "Feb", "Mar", "Apr", "May", "Jun",
		"Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
	};
	/* Floor division, so that a date before 1970 is not off by a second. */
	time_t secs = (time_t)(ms / 1000 - (ms % 1000 < 0 ? 1 : 0));
	struct tm tm;
	int n;

	if (!gmtime_r(&secs, &tm) || tm.tm_year + 1900 < 1900 || tm.tm_year + 1900 > 9999)
		return -1;
	n = snprintf(out, outlen, "%s, %d %s %04d %02d:%02d:%02d +0000", days[tm.tm_wday],
		     tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
		     tm.tm_sec);
	return n > 0 && (size_t)n < outlen ? 0 : -1;
}

/* ---- body --------------------------------------------------------------- */

/* Append text with CRLF, CR and LF all made LF, without trailing newlines,
 * then one LF; the rest made safe to show (pg_sanitize(), a block): a
 * table or a command may quote what an agent or a mail said. */
static int body_text(struct pg_buf *b, const char *text)
{
	struct pg_buf lf = PG_BUF_INIT(PG_BUF_NOLIMIT);
	size_t n = strlen(text);
	int rc = -1;

	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		n--;
	for (size_t i = 0; i < n; i++) {
		if (text[i] == '\r') {
			if (i + 1 < n && text[i + 1] == '\n')
				continue;
			if (pg_buf_addch(&lf, '\n') < 0)
				goto out;
		} else if (pg_buf_addch(&lf, text[i]) < 0) {
			goto out;
		}
	}
	if (pg_sanitize(b, pg_buf_str(&lf), lf.len, PG_SAN_BLOCK) < 0 || pg_buf_addch(b, '\n') < 0)
		goto out;
	rc = 0;
out:
	pg_buf_release(&lf);
	return rc;
}

/* Append LF-ended text with CRLF line ends. */
static int emit_crlf(struct pg_buf *out, const char *s, size_t n)
{
	size_t start = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\n')
			continue;
		if (pg_buf_add(out, s + start, i - start) < 0 || pg_buf_add(out, "\r\n", 2) < 0)
			return -1;
		start = i + 1;
	}
	return pg_buf_add(out, s + start, n - start);
}

/* Quoted-printable (RFC 2045 6.7) of LF-ended text, CRLF hard breaks. */
static int emit_qp(struct pg_buf *out, const char *s, size_t n)
{
	size_t col = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		bool eol_next = i + 1 >= n || s[i + 1] == '\n';
		char enc[3];
		size_t w;

		if (c == '\n') {
			if (pg_buf_add(out, "\r\n", 2) < 0)
				return -1;
			col = 0;
			continue;
		}
		if ((c >= 33 && c <= 126 && c != '=') || ((c == ' ' || c == '\t') && !eol_next)) {
			enc[0] = (char)c;
			w = 1;
		} else {
			enc[0] = '=';
			enc[1] = hexdig[c >> 4];
			enc[2] = hexdig[c & 15];
			w = 3;
		}
		/* A soft break keeps the line at 76 with its "=". */
		if (col + w > QP_LINE - 1 && !(eol_next && col + w <= QP_LINE)) {
			if (pg_buf_add(out, "=\r\n", 3) < 0)
				return -1;
			col = 0;
		}
		if (pg_buf_add(out, enc, w) < 0)
			return -1;
		col += w;
	}
	return 0;
}

static int body_build(const struct report_mail *r, const char *label, struct pg_buf *b)
{
	if (r->alert ? pg_buf_printf(b, "_%s_\n", r->description) < 0
		     : pg_buf_printf(b, "Test-Label: %s\nTest-Status: %s\n", label,
				     report_status_name(r->status)) < 0 ||
		       (r->patch_url && *r->patch_url &&
			pg_buf_printf(b, "%s\n", r->patch_url) < 0) ||
		       pg_buf_printf(b, "\n_%s_\n", r->description) < 0)
		return -1;
	if (r->table && *r->table && (pg_buf_addch(b, '\n') < 0 || body_text(b, r->table) < 0))
		return -1;
	if (r->reproduce && *r->reproduce &&
	    (pg_buf_addch(b, '\n') < 0 || body_text(b, r->reproduce) < 0))
		return -1;
	return 0;
}

/* ---- the message -------------------------------------------------------- */

static int check_addr(const struct report_mail_addr *a, const char *field, bool required,
		      struct pg_err *err)
{
	if (!addr_set(a)) {
		if (required)
			return pg_err_set(err, PG_EINVAL, "%s: no address", field);
		return 0;
	}
	if (!report_mail_addr_ok(a->addr))
		return pg_err_set(err, PG_EINVAL, "%s: '%s' is not an address (local@domain)",
				  field, a->addr);
	if (a->name && strlen(a->name) > REPORT_MAIL_NAME_MAX)
		return pg_err_set(err, PG_EINVAL, "%s: the name is longer than %d bytes", field,
				  REPORT_MAIL_NAME_MAX);
	return 0;
}

static int check_inputs(const struct report_mail *r, struct pg_err *err)
{
	if (check_addr(&r->from, "from", true, err) < 0 ||
	    check_addr(&r->to, "to", true, err) < 0 ||
	    check_addr(&r->author, "author", false, err) < 0)
		return -1;
	if (r->n_cc > REPORT_MAIL_CC_MAX || (r->n_cc > 0 && !r->cc))
		return pg_err_set(err, PG_EINVAL, "cc: %zu addresses given, at most %d", r->n_cc,
				  REPORT_MAIL_CC_MAX);
	for (size_t i = 0; i < r->n_cc; i++) {
		char field[32];

		/* A name for error messages only. */
		pg_fmt_cut(field, sizeof(field), "cc[%zu]", i);
		if (check_addr(&r->cc[i], field, true, err) < 0)
			return -1;
	}
	if (!report_mail_msgid_ok(r->msgid))
		return pg_err_set(err, PG_EINVAL, "msgid: '%s' is not a Message-ID (printable "
				  "ASCII without <>, at most %d bytes)",
				  r->msgid ? r->msgid : "", REPORT_MAIL_MSGID_MAX);
	if (r->patch_url && *r->patch_url &&
	    (strlen(r->patch_url) > REPORT_MAIL_URL_MAX || !printable_ascii(r->patch_url, false)))
		return pg_err_set(err, PG_EINVAL, "patch_url: must be printable ASCII without "
				  "spaces, at most %d bytes", REPORT_MAIL_URL_MAX);
	if (!r->description || !*r->description ||
	    strlen(r->description) > REPORT_MAIL_DESC_MAX ||
	    !printable_ascii(r->description, true))
		return pg_err_set(err, PG_EINVAL, "description: must be one line of printable "
				  "ASCII, 1 to %d bytes", REPORT_MAIL_DESC_MAX);
	if (r->status != REPORT_SUCCESS && r->status != REPORT_WARNING &&
	    r->status != REPORT_FAILURE)
		return pg_err_set(err, PG_EINVAL, "status: %d is not a status", (int)r->status);
	if ((r->table && strlen(r->table) > REPORT_MAIL_TEXT_MAX) ||
	    (r->reproduce && strlen(r->reproduce) > REPORT_MAIL_TEXT_MAX))
		return pg_err_set(err, PG_EINVAL, "%s: longer than %u bytes",
				  r->table && strlen(r->table) > REPORT_MAIL_TEXT_MAX ? "table"
										 : "reproduce",
				  REPORT_MAIL_TEXT_MAX);
	return 0;
}

/* The label as send-patch-report.sh makes it (`echo $OPTARG | sed
 * 's,[[:space:]]\+,-,g'`: trimmed, inner white space runs to "-"), then
 * checked to be a Patchwork context slug. */
static int make_label(const char *label, char *out, size_t outlen, struct pg_err *err)
{
	size_t k = 0;
	bool ws = false;

	for (const char *p = label ? label : ""; *p; p++) {
		if (strchr(" \t\n\r\v\f", *p)) {
			ws = true;
			continue;
		}
		if (k + 2 >= outlen)
			return pg_err_set(err, PG_EINVAL, "label: longer than %zu bytes",
					  outlen - 2);
		if (ws && k > 0)
			out[k++] = '-';
		out[k++] = *p;
		ws = false;
	}
	out[k] = '\0';
	if (!is_slug(out, REPORT_MAIL_LABEL_MAX))
		return pg_err_set(err, PG_EINVAL, "label: '%s' is not a Patchwork context "
				  "(letters, digits, '_', '-')", label ? label : "");
	return 0;
}

enum body_cte { CTE_7BIT, CTE_8BIT, CTE_QP };

static enum body_cte body_encoding(const char *s, size_t n)
{
	bool high = false;
	size_t line = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n') {
			line = 0;
			continue;
		}
		if (++line > LINE_HARD)
			return CTE_QP;
		if ((unsigned char)s[i] >= 0x80)
			high = true;
	}
	return high ? CTE_8BIT : CTE_7BIT;
}

int report_mail_format(const struct report_mail *r, struct pg_buf *out, struct pg_err *err)
{
	static const char *const cte_names[] = { "7bit", "8bit", "quoted-printable" };
	struct pg_buf subj = PG_BUF_INIT(REPORT_MAIL_SUBJECT_MAX * PG_SAN_GROWTH + 64);
	/* Room for both texts even if every byte became a "\\xHH" escape. */
	struct pg_buf body = PG_BUF_INIT(REPORT_MAIL_TEXT_MAX * 2 * PG_SAN_GROWTH + 64 * 1024);
	const struct report_mail_addr *list[REPORT_MAIL_CC_MAX + 1];
	char label[REPORT_MAIL_LABEL_MAX + 2];
	char date[64];
	enum body_cte cte;
	struct hdr h;
	size_t n = 0;
	int rc = -1;

	if (!r || !out) {
		pg_err_set(err, PG_EINVAL, "report mail: no report or no buffer");
		goto out;
	}
	label[0] = '\0';
	if (check_inputs(r, err) < 0)
		goto out;
	if (r->alert ? alert_subject(r->subject, &subj, err) < 0
		     : make_label(r->label, label, sizeof(label), err) < 0 ||
		       report_mail_subject(r->subject, r->status, r->patch_id, &subj, err) < 0)
		goto out;
	if (format_date(r->date_ms, date, sizeof(date)) < 0) {
		pg_err_set(err, PG_EINVAL, "date: %" PRId64 " ms is outside years 1900 to 9999",
			   r->date_ms);
		goto out;
	}
	if (body_build(r, label, &body) < 0) {
		out_fail(err, "body");
		goto out;
	}

	list[0] = &r->from;
	if (hdr_addresses(out, "From", list, 1) < 0)
		goto full;
	list[0] = &r->to;
	if (hdr_addresses(out, "To", list, 1) < 0)
		goto full;
	for (size_t i = 0; i < r->n_cc; i++) {
		bool dup = strcasecmp(r->cc[i].addr, r->to.addr) == 0;

		for (size_t j = 0; j < i && !dup; j++)
			dup = strcasecmp(r->cc[i].addr, r->cc[j].addr) == 0;
		if (!dup)
			list[n++] = &r->cc[i];
	}
	if (report_mail_cc_author(r))
		list[n++] = &r->author;
	if (n > 0 && hdr_addresses(out, "Cc", list, n) < 0)
		goto full;
	hdr_begin(&h, out, "Subject");
	hdr_unstructured(&h, pg_buf_str(&subj));
	if (hdr_end(&h) < 0)
		goto full;
	cte = body_encoding(body.data, body.len);
	if (pg_buf_printf(out, "Date: %s\r\n", date) < 0 ||
	    pg_buf_printf(out, "Message-ID: <%s>\r\n", r->msgid) < 0 ||
	    (report_mail_msgid_ok(r->patch_msgid) &&
	     (pg_buf_printf(out, "In-Reply-To: <%s>\r\n", r->patch_msgid) < 0 ||
	      pg_buf_printf(out, "References: <%s>\r\n", r->patch_msgid) < 0)) ||
	    /* RFC 3834: no vacation replies to a robot. */
	    pg_buf_adds(out, "Auto-Submitted: auto-generated\r\n") < 0 ||
	    pg_buf_adds(out, "MIME-Version: 1.0\r\n"
			"Content-Type: text/plain; charset=UTF-8\r\n") < 0 ||
	    pg_buf_printf(out, "Content-Transfer-Encoding: %s\r\n\r\n", cte_names[cte]) < 0)
		goto full;
	if ((cte == CTE_QP ? emit_qp(out, body.data, body.len)
			   : emit_crlf(out, body.data, body.len)) < 0)
		goto full;
	rc = 0;
	goto out;
full:
	out_fail(err, "report mail");
out:
	pg_buf_release(&subj);
	pg_buf_release(&body);
	return rc;
}
