/* SPDX-License-Identifier: MIT */
/*
 * RFC 5322 header fields, RFC 2047 encoded words, addresses, msg-ids and
 * the few charsets converted by hand.  Everything is a pure function over
 * a buffer and linear in its length.
 */
#include "mail_int.h"
#include "text.h"
#include "vec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The longest charset label we look at; real ones are under 20 bytes. */
#define CHARSET_MAX 64

size_t pg_mail_eol(const char *s, size_t len, size_t pos)
{
	const char *nl;

	if (pos >= len)
		return len;
	nl = memchr(s + pos, '\n', len - pos);
	return nl ? (size_t)(nl - s) : len;
}

size_t pg_mail_next_line(const char *s, size_t len, size_t pos)
{
	size_t e = pg_mail_eol(s, len, pos);

	return e < len ? e + 1 : len;
}

static bool is_wsp(char c)
{
	return c == ' ' || c == '\t';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

bool pg_mail_eq(const char *s, size_t n, const char *lit)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!lit[i] || lower(s[i]) != lower(lit[i]))
			return false;
	return lit[i] == '\0';
}

int pg_mail_next_field(const char *s, size_t len, size_t *pos,
		       struct pg_mail_field *f)
{
	size_t p = *pos, e, i, name_end, next;
	unsigned int lines = 1;

	if (p >= len)
		return 0;
	if (s[p] == '\n') {
		*pos = p + 1;
		return 0;
	}
	e = pg_mail_eol(s, len, p);
	/* field-name = 1*(%d33-57 / %d59-126), then the obsolete optional
	 * white space before the colon that old mailers wrote */
	for (i = p; i < e && s[i] > 32 && s[i] < 127 && s[i] != ':'; i++)
		;
	name_end = i;
	while (i < e && is_wsp(s[i]))
		i++;
	if (name_end == p || i >= e || s[i] != ':')
		return -1;
	if (memchr(s + p, '\0', e - p))
		return -1;
	f->name = s + p;
	f->name_len = name_end - p;
	f->value = s + i + 1;
	next = e < len ? e + 1 : len;
	while (next < len && is_wsp(s[next])) {
		e = pg_mail_eol(s, len, next);
		if (memchr(s + next, '\0', e - next))
			return -1;
		lines++;
		next = e < len ? e + 1 : len;
	}
	f->value_len = (size_t)(s + e - f->value);
	f->lines = lines;
	*pos = next;
	return 1;
}

char *pg_mail_unfold(const char *v, size_t len)
{
	size_t a = 0, b = len, o = 0;
	char *out;

	while (a < b && (is_wsp(v[a]) || v[a] == '\n' || v[a] == '\r'))
		a++;
	while (b > a && (is_wsp(v[b - 1]) || v[b - 1] == '\n' || v[b - 1] == '\r'))
		b--;
	out = malloc(b - a + 1);
	if (!out)
		return NULL;
	/* RFC 5322 2.2.3: unfolding removes the line breaks, keeps the WSP */
	for (size_t i = a; i < b; i++)
		if (v[i] != '\n' && v[i] != '\r')
			out[o++] = v[i];
	out[o] = '\0';
	return out;
}

/* ---- charsets ---------------------------------------------------------- */

enum pg_mail_charset pg_mail_charset_of(const char *name, size_t len)
{
	static const char *const utf8[] = {
		"utf-8", "utf8", "us-ascii", "ascii", "ansi_x3.4-1968",
	};
	static const char *const latin1[] = {
		"iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1",
		"l1", "iso-ir-100", "cp819", "ibm819",
	};
	static const char *const cp1252[] = { "windows-1252", "cp1252" };
	const char *star = memchr(name, '*', len);
	size_t i;

	if (star)
		len = (size_t)(star - name);
	while (len && is_wsp(*name)) {
		name++;
		len--;
	}
	while (len && is_wsp(name[len - 1]))
		len--;
	for (i = 0; i < sizeof(utf8) / sizeof(utf8[0]); i++)
		if (pg_mail_eq(name, len, utf8[i]))
			return PG_MAIL_CS_UTF8;
	for (i = 0; i < sizeof(latin1) / sizeof(latin1[0]); i++)
		if (pg_mail_eq(name, len, latin1[i]))
			return PG_MAIL_CS_LATIN1;
	for (i = 0; i < sizeof(cp1252) / sizeof(cp1252[0]); i++)
		if (pg_mail_eq(name, len, cp1252[i]))
			return PG_MAIL_CS_CP1252;
	return PG_MAIL_CS_OTHER;
}

static int put_utf8(struct pg_buf *out, uint32_t cp)
{
	char u[3];

	if (cp < 0x80)
		return pg_buf_addch(out, (char)cp);
	if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		return pg_buf_add(out, u, 2);
	}
	u[0] = (char)(0xe0 | (cp >> 12));
	u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
	u[2] = (char)(0x80 | (cp & 0x3f));
	return pg_buf_add(out, u, 3);
}

int pg_mail_to_utf8(struct pg_buf *out, enum pg_mail_charset cs,
		    const char *s, size_t n)
{
	/* windows-1252 0x80..0x9f (WHATWG index); holes map like latin1 */
	static const uint16_t cp1252[32] = {
		0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021,
		0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008d, 0x017d, 0x008f,
		0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
		0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x009d, 0x017e, 0x0178,
	};
	size_t i, run;

	if (cs == PG_MAIL_CS_UTF8 || cs == PG_MAIL_CS_OTHER)
		return pg_buf_add(out, s, n);
	for (i = 0; i < n; i += run) {
		unsigned char c = (unsigned char)s[i];

		for (run = 0; i + run < n && !((unsigned char)s[i + run] & 0x80); run++)
			;
		if (run) {
			if (pg_buf_add(out, s + i, run) < 0)
				return -1;
			continue;
		}
		run = 1;
		if (cs == PG_MAIL_CS_CP1252 && c < 0xa0) {
			if (put_utf8(out, cp1252[c - 0x80]) < 0)
				return -1;
		} else if (put_utf8(out, c) < 0) {
			return -1;
		}
	}
	return 0;
}

/* ---- RFC 2047 ------------------------------------------------------------ */

/*
 * Where the next "?=" is.  Encoded words are found by their terminator;
 * searching afresh from every "=?" would be quadratic on a subject full of
 * "=?x?q?a" without an end, so the answer of the last search is kept: it
 * is still right for any later start that does not pass it.
 */
struct ew_term {
	const char *s;
	size_t len;
	size_t from;	/* the last search started here ... */
	size_t at;	/* ... and found "?=" here (len: none) */
	bool valid;
};

static size_t ew_find_term(struct ew_term *t, size_t from)
{
	size_t i, at = t->len;

	if (t->valid && from >= t->from && from <= t->at)
		return t->at;
	for (i = from; i + 1 < t->len; i++) {
		const char *q = memchr(t->s + i, '?', t->len - 1 - i);

		if (!q)
			break;
		i = (size_t)(q - t->s);
		if (t->s[i + 1] == '=') {
			at = i;
			break;
		}
	}
	t->from = from;
	t->at = at;
	t->valid = true;
	return at;
}

/* Decode the B or Q text of one word into out, leniently (a bad "=XY"
 * stays as it is, base64 junk is skipped); -1 only when out is full. */
static int ew_decode_text(struct pg_buf *out, char enc, const char *s, size_t n)
{
	if (enc == 'q' || enc == 'Q') {
		for (size_t i = 0; i < n; i++) {
			int hi, lo;

			if (s[i] == '_') {
				if (pg_buf_addch(out, ' ') < 0)
					return -1;
			} else if (s[i] == '=' && i + 2 < n &&
				   (hi = pg_hexval((unsigned char)s[i + 1])) >= 0 &&
				   (lo = pg_hexval((unsigned char)s[i + 2])) >= 0) {
				if (pg_buf_addch(out, (char)(hi << 4 | lo)) < 0)
					return -1;
				i += 2;
			} else if (pg_buf_addch(out, s[i]) < 0) {
				return -1;
			}
		}
		return 0;
	}
	return pg_mail_b64_decode(out, s, n);
}

/* Replace control characters of out[from..] by spaces and drop NULs: a
 * subject or a name is one line of text. */
static void sanitize_line(struct pg_buf *out, size_t from)
{
	size_t o = from;

	for (size_t i = from; i < out->len; i++) {
		unsigned char c = (unsigned char)out->data[i];

		if (c == '\0')
			continue;
		out->data[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	out->len = o;
	if (out->data)
		out->data[o] = '\0';
}

/*
 * Try an encoded word "=?charset?E?text?=" at in[i].  On success append
 * its UTF-8 decoding to out, set *end after it and return 1; return 0
 * when it is not one (nothing appended), -1 when out is full.
 */
static int ew_try(const char *in, size_t len, size_t i, struct ew_term *t,
		  struct pg_buf *out, unsigned int *flags, size_t *end)
{
	struct pg_buf raw = PG_BUF_INIT(PG_BUF_NOLIMIT);
	enum pg_mail_charset cs;
	size_t cs_start = i + 2, cs_end, text, term;
	char enc;
	int rc = 0;

	for (cs_end = cs_start; cs_end < len && cs_end - cs_start <= CHARSET_MAX; cs_end++)
		if (in[cs_end] == '?' || is_wsp(in[cs_end]))
			break;
	if (cs_end == cs_start || cs_end >= len || in[cs_end] != '?' ||
	    cs_end + 2 >= len || in[cs_end + 2] != '?')
		return 0;
	enc = in[cs_end + 1];
	if (enc != 'b' && enc != 'B' && enc != 'q' && enc != 'Q')
		return 0;
	text = cs_end + 3;
	term = ew_find_term(t, text);
	if (term >= len)
		return 0;
	/* decoding only shrinks the text, so raw is bounded by it */
	if (ew_decode_text(&raw, enc, in + text, term - text) < 0) {
		rc = -1;
		goto out;
	}
	cs = pg_mail_charset_of(in + cs_start, cs_end - cs_start);
	if (cs == PG_MAIL_CS_OTHER && flags)
		*flags |= PG_MAIL_RAW_CHARSET;
	if (pg_mail_to_utf8(out, cs, raw.data ? raw.data : "", raw.len) < 0) {
		rc = -1;
		goto out;
	}
	*end = term + 2;
	rc = 1;
out:
	pg_buf_release(&raw);
	return rc;
}

/* pg_mail_decode_header() but for what it leaves in out on failure. */
static int decode_words(const char *in, size_t len, struct pg_buf *out, unsigned int *flags)
{
	struct ew_term t = { in, len, 0, 0, false };
	size_t start = out->len, i = 0, ws = 0, ws_len = 0;
	bool after_word = false;

	while (i < len) {
		size_t end;
		int r;

		if (in[i] == '=' && i + 1 < len && in[i + 1] == '?') {
			r = ew_try(in, len, i, &t, out, flags, &end);
			if (r < 0)
				return -1;
			if (r > 0) {
				/* RFC 2047 6.2: white space between adjacent
				 * encoded words is not displayed, so white
				 * space after a word is held back until we
				 * know what follows it */
				after_word = true;
				ws_len = 0;
				i = end;
				continue;
			}
		}
		if (is_wsp(in[i]) || in[i] == '\n' || in[i] == '\r') {
			size_t j = i;

			while (j < len && (is_wsp(in[j]) || in[j] == '\n' || in[j] == '\r'))
				j++;
			if (after_word) {
				ws = i;
				ws_len = j - i;
			} else if (pg_buf_add(out, in + i, j - i) < 0) {
				return -1;
			}
			i = j;
			continue;
		}
		if (ws_len && pg_buf_add(out, in + ws, ws_len) < 0)
			return -1;
		ws_len = 0;
		after_word = false;
		if (pg_buf_addch(out, in[i]) < 0)
			return -1;
		i++;
	}
	if (ws_len && pg_buf_add(out, in + ws, ws_len) < 0)
		return -1;
	sanitize_line(out, start);
	return 0;
}

int pg_mail_decode_header(const char *in, size_t len, struct pg_buf *out,
			  unsigned int *flags)
{
	size_t start = out->len;
	int saved;

	if (decode_words(in, len, out, flags) == 0)
		return 0;
	/* Nothing of a value cut short: what was appended is raw (controls
	 * and NUL bytes not yet replaced). */
	saved = errno;
	out->len = start;
	if (out->data)
		out->data[start] = '\0';
	errno = saved;
	return -1;
}

/* ---- msg-ids --------------------------------------------------------------- */

/* Index after the comment starting at v[i] == '(' (nested, with quoted
 * pairs), or len when it is not closed. */
static size_t skip_comment(const char *v, size_t len, size_t i)
{
	unsigned int depth = 0;

	for (; i < len; i++) {
		if (v[i] == '\\' && i + 1 < len) {
			i++;
		} else if (v[i] == '(') {
			depth++;
		} else if (v[i] == ')') {
			if (--depth == 0)
				return i + 1;
		}
	}
	return len;
}

static int push_id(struct pg_strvec *out, const char *s, size_t n)
{
	char *id;
	size_t o = 0;
	int rc;

	id = malloc(n + 1);
	if (!id)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!is_wsp(s[i]) && s[i] != '\n' && s[i] != '\r')
			id[o++] = s[i];
	rc = o ? pg_strvec_pushn(out, id, o) : 0;
	free(id);
	return rc;
}

int pg_mail_msgids(const char *v, struct pg_strvec *out)
{
	size_t len = strlen(v), i = 0;

	if (!memchr(v, '<', len)) {
		/* "Message-ID: abc@host" from a sloppy mailer */
		while (i < len) {
			size_t j;

			while (i < len && (is_wsp(v[i]) || v[i] == ','))
				i++;
			for (j = i; j < len && !is_wsp(v[j]) && v[j] != ','; j++)
				;
			if (j > i && push_id(out, v + i, j - i) < 0)
				return -1;
			i = j;
		}
		return 0;
	}
	while (i < len) {
		const char *gt;

		if (v[i] == '(') {
			i = skip_comment(v, len, i);
		} else if (v[i] == '<') {
			gt = memchr(v + i + 1, '>', len - i - 1);
			if (!gt)
				break;
			if (push_id(out, v + i + 1, (size_t)(gt - v) - i - 1) < 0)
				return -1;
			i = (size_t)(gt - v) + 1;
		} else {
			i++;
		}
	}
	return 0;
}

/* ---- addresses ----------------------------------------------------------- */

/* Append s[0..n) to b, runs of white space as one space. */
static int add_collapsed(struct pg_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (is_wsp(s[i]) || s[i] == '\n' || s[i] == '\r') {
			if (b->len && b->data[b->len - 1] == ' ')
				continue;
			if (pg_buf_addch(b, ' ') < 0)
				return -1;
		} else if (pg_buf_addch(b, s[i]) < 0) {
			return -1;
		}
	}
	return 0;
}

static char *trimmed_copy(const char *s, size_t n)
{
	char *out;

	while (n && is_wsp(*s)) {
		s++;
		n--;
	}
	while (n && is_wsp(s[n - 1]))
		n--;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

int pg_mail_mailbox(const char *v, char **name, char **addr,
		    unsigned int *flags)
{
	size_t len = strlen(v), i = 0;
	struct pg_buf phrase = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf comment = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf dec = PG_BUF_INIT(PG_BUF_NOLIMIT);
	const char *angle = NULL;
	size_t angle_len = 0;
	const char *src;
	size_t src_len;
	int rc = -1;

	*name = NULL;
	*addr = NULL;
	while (i < len) {
		char c = v[i];

		if (c == '"') {
			/* quoted-string: the quotes go, quoted pairs unescape */
			for (i++; i < len && v[i] != '"'; i++) {
				if (v[i] == '\\' && i + 1 < len)
					i++;
				if (pg_buf_addch(&phrase, v[i]) < 0)
					goto out;
			}
			i++;
		} else if (c == '(') {
			size_t e = skip_comment(v, len, i);
			size_t inner = e - i - 1;

			if (inner && v[e - 1] == ')')
				inner--;
			if (!comment.len && add_collapsed(&comment, v + i + 1, inner) < 0)
				goto out;
			i = e;
		} else if (c == '<') {
			const char *gt = memchr(v + i, '>', len - i);

			angle = v + i + 1;
			angle_len = gt ? (size_t)(gt - angle) : len - i - 1;
			break;
		} else if (c == ',') {
			break;
		} else {
			if (add_collapsed(&phrase, v + i, 1) < 0)
				goto out;
			i++;
		}
	}
	if (angle) {
		*addr = trimmed_copy(angle, angle_len);
		src = phrase.data ? phrase.data : "";
		src_len = phrase.len;
	} else {
		/* "addr" or "addr (Name)": the phrase was the address */
		*addr = trimmed_copy(phrase.data ? phrase.data : "", phrase.len);
		src = comment.data ? comment.data : "";
		src_len = comment.len;
	}
	if (!*addr)
		goto out;
	/* the address has no spaces; a phrase-less "a @ b" loses them */
	{
		size_t o = 0;

		for (size_t k = 0; (*addr)[k]; k++)
			if (!is_wsp((*addr)[k]))
				(*addr)[o++] = (*addr)[k];
		(*addr)[o] = '\0';
	}
	if (pg_mail_decode_header(src, src_len, &dec, flags) < 0)
		goto out;
	*name = trimmed_copy(dec.data ? dec.data : "", dec.len);
	if (!*name)
		goto out;
	rc = 0;
out:
	if (rc < 0) {
		free(*name);
		free(*addr);
		*name = NULL;
		*addr = NULL;
	}
	pg_buf_release(&phrase);
	pg_buf_release(&comment);
	pg_buf_release(&dec);
	return rc;
}
