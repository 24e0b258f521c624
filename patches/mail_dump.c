/* SPDX-License-Identifier: MIT */
/*
 * pg_mail_dump(): the stable "key: value" text of a parsed mail, for the
 * golden tests and `perfgate-controller mail show`.
 */
#include "mail_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "timeutil.h"

/* Length of the valid UTF-8 sequence at s[0..n) (2 to 4), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* "key: value\n" with the value escaped so that it stays on one line and
 * is valid UTF-8 (raw charsets show as \xNN). */
static int dump_str(struct pg_buf *out, const char *key, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	if (pg_buf_printf(out, "%s: ", key) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = u[i];
		size_t seq;
		int r;

		if (c == '\\')
			r = pg_buf_adds(out, "\\\\");
		else if (c == '\n')
			r = pg_buf_adds(out, "\\n");
		else if (c == '\r')
			r = pg_buf_adds(out, "\\r");
		else if (c == '\t')
			r = pg_buf_adds(out, "\\t");
		else if (c < 0x20 || c == 0x7f)
			r = pg_buf_printf(out, "\\x%02x", c);
		else if (c < 0x80)
			r = pg_buf_addch(out, (char)c);
		else if ((seq = utf8_seq(u + i, n - i)) > 0) {
			r = pg_buf_add(out, s + i, seq);
			i += seq - 1;
		} else {
			r = pg_buf_printf(out, "\\x%02x", c);
		}
		if (r < 0)
			return -1;
	}
	return pg_buf_addch(out, '\n');
}

static int dump_s(struct pg_buf *out, const char *key, const char *s)
{
	return dump_str(out, key, s ? s : "", s ? strlen(s) : 0);
}

static size_t count_lines(const char *s, size_t n)
{
	size_t lines = 0;

	for (const char *q = s; q && q < s + n; lines++) {
		q = memchr(q, '\n', (size_t)(s + n - q));
		if (q)
			q++;
	}
	return lines;
}

/* First and last line of s[0..n) (without their '\n'). */
static int dump_ends(struct pg_buf *out, const char *kfirst, const char *klast,
		     const char *s, size_t n)
{
	size_t fe = pg_mail_eol(s, n, 0), le = n, ls;

	if (le && s[le - 1] == '\n')
		le--;
	for (ls = le; ls > 0 && s[ls - 1] != '\n'; ls--)
		;
	if (dump_str(out, kfirst, s, fe) < 0)
		return -1;
	return klast ? dump_str(out, klast, s + ls, le - ls) : 0;
}

int pg_mail_dump(const struct pg_mail *m, struct pg_buf *out)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} flag_names[] = {
		{ PG_MAIL_NO_DATE, "no-date" },
		{ PG_MAIL_RAW_CHARSET, "raw-charset" },
		{ PG_MAIL_DMARC, "dmarc" },
		{ PG_MAIL_MIME_BROKEN, "mime-broken" },
		{ PG_MAIL_INBODY_FROM, "inbody-from" },
	};
	char when[PG_TIME_UTC_MAX] = "";
	bool any = false;

	if (dump_s(out, "message_id", m->message_id) < 0 ||
	    dump_s(out, "in_reply_to", m->in_reply_to) < 0 ||
	    pg_buf_adds(out, "references:") < 0)
		return -1;
	for (size_t i = 0; i < m->nreferences; i++)
		if (pg_buf_printf(out, " %s", m->references[i]) < 0)
			return -1;
	if (pg_buf_addch(out, '\n') < 0 ||
	    dump_s(out, "subject", m->subject) < 0 ||
	    pg_buf_printf(out, "is_reply: %s\n", m->is_reply ? "yes" : "no") < 0 ||
	    dump_s(out, "from_name", m->from_name) < 0 ||
	    dump_s(out, "from_addr", m->from_addr) < 0 ||
	    dump_s(out, "author_name", m->author_name) < 0 ||
	    dump_s(out, "author_addr", m->author_addr) < 0)
		return -1;
	if (!(m->flags & PG_MAIL_NO_DATE) &&
	    pg_time_format_utc(m->date_ms, 0, when, sizeof(when)) < 0)
		pg_fmt_cut(when, sizeof(when), "out of range");
	if (pg_buf_printf(out, "date: %lld%s%s%s\n", (long long)m->date_ms,
			  *when ? " (" : "", when, *when ? ")" : "") < 0 ||
	    dump_s(out, "list_id", m->list_id) < 0 ||
	    pg_buf_adds(out, "flags:") < 0)
		return -1;
	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++) {
		if (!(m->flags & flag_names[i].bit))
			continue;
		if (pg_buf_printf(out, " %s", flag_names[i].name) < 0)
			return -1;
		any = true;
	}
	if ((!any && pg_buf_adds(out, " none") < 0) || pg_buf_addch(out, '\n') < 0)
		return -1;
	if (pg_buf_printf(out, "body_lines: %zu\nmessage_lines: %zu\n",
			  count_lines(m->body, m->body_len),
			  count_lines(m->message, m->message_len)) < 0 ||
	    dump_ends(out, "message_first", "message_last", m->message ? m->message : "",
		      m->message_len) < 0 ||
	    pg_buf_printf(out, "notes_lines: %zu\nhas_patch: %s\ndiff_len: %zu\n",
			  count_lines(m->notes, m->notes_len), m->has_patch ? "yes" : "no",
			  m->diff_len) < 0 ||
	    dump_ends(out, "diff_first", NULL, m->diff ? m->diff : "", m->diff_len) < 0 ||
	    pg_buf_printf(out, "files: %zu\n", m->nfiles) < 0)
		return -1;
	for (size_t i = 0; i < m->nfiles; i++)
		if (dump_s(out, "file", m->files[i]) < 0)
			return -1;
	return 0;
}
