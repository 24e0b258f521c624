/* SPDX-License-Identifier: MIT */
/* The sanitiser for text from outside (see sanitize.h). */
#include "sanitize.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char hexdig[] = "0123456789abcdef";

/* The replacement character, U+FFFD. */
static const char repl_utf8[] = "\xef\xbf\xbd";

size_t pg_utf8_decode(const char *s, size_t len, int32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need, i;
	int32_t v;

	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	/* Unicode's Table 3-7: the second byte's range excludes overlong
	 * forms (E0, F0), surrogates (ED) and beyond U+10FFFF (F4). */
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		need = 2;
		v = u[0] & 0x1f;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		need = 3;
		v = u[0] & 0x0f;
		if (u[0] == 0xe0)
			lo = 0xa0;
		else if (u[0] == 0xed)
			hi = 0x9f;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		need = 4;
		v = u[0] & 0x07;
		if (u[0] == 0xf0)
			lo = 0x90;
		else if (u[0] == 0xf4)
			hi = 0x8f;
	} else {
		*cp = -1;	/* 80-C1 (continuation, overlong lead), F5-FF */
		return 1;
	}
	for (i = 1; i < need; i++) {
		if (i >= len || u[i] < lo || u[i] > hi) {
			*cp = -1;	/* the maximal subpart: what was valid so far */
			return i;
		}
		v = (v << 6) | (u[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*cp = v;
	return need;
}

bool pg_sanitize_cp_unsafe(int32_t cp, enum pg_san_mode mode)
{
	if (cp < 0x20)
		return !(mode == PG_SAN_BLOCK && (cp == '\n' || cp == '\t'));
	if (cp >= 0x7f && cp <= 0x9f)
		return true;
	switch (cp) {
	case 0x061c:			/* ARABIC LETTER MARK */
	case 0x200e: case 0x200f:	/* LRM, RLM */
	case 0x2028: case 0x2029:	/* line and paragraph separators */
		return true;
	default:
		return (cp >= 0x202a && cp <= 0x202e) ||	/* embeddings, overrides */
		       (cp >= 0x2066 && cp <= 0x2069);		/* isolates */
	}
}

/* The escape of cp: "\xHH" below 0x80, else "\uHHHH" (every code point we
 * escape is in the BMP).  Returns its length. */
static size_t escape(int32_t cp, char *e)
{
	e[0] = '\\';
	if (cp < 0x80) {
		e[1] = 'x';
		e[2] = hexdig[(cp >> 4) & 15];
		e[3] = hexdig[cp & 15];
		return 4;
	}
	e[1] = 'u';
	e[2] = hexdig[(cp >> 12) & 15];
	e[3] = hexdig[(cp >> 8) & 15];
	e[4] = hexdig[(cp >> 4) & 15];
	e[5] = hexdig[cp & 15];
	return 6;
}

/* Whether the character at s[i] (n bytes, code point cp) is kept raw. */
static bool keep(const char *s, size_t len, size_t i, int32_t cp, enum pg_san_mode mode)
{
	if (cp < 0)
		return false;
	/* CRLF in a block is a line end, not an overwrite. */
	if (cp == '\r' && mode == PG_SAN_BLOCK)
		return i + 1 < len && s[i + 1] == '\n';
	return !pg_sanitize_cp_unsafe(cp, mode);
}

int pg_sanitize(struct pg_buf *out, const char *s, size_t len, enum pg_san_mode mode)
{
	size_t i = 0, start = 0;

	/* Runs of kept bytes are appended whole: most text has no escape. */
	while (i < len) {
		int32_t cp;
		size_t n = pg_utf8_decode(s + i, len - i, &cp);
		char e[8];
		size_t elen;

		if (keep(s, len, i, cp, mode)) {
			i += n;
			continue;
		}
		if (i > start && pg_buf_add(out, s + start, i - start) < 0)
			return -1;
		if (cp < 0) {
			memcpy(e, repl_utf8, 3);
			elen = 3;
		} else {
			elen = escape(cp, e);
		}
		if (pg_buf_add(out, e, elen) < 0)
			return -1;
		i += n;
		start = i;
	}
	if (i > start && pg_buf_add(out, s + start, i - start) < 0)
		return -1;
	/* Empty input still leaves a usable C string. */
	return pg_buf_grow(out, 0);
}

char *pg_sanitize_dup(const char *s, enum pg_san_mode mode)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);

	if (!s)
		s = "";
	if (pg_sanitize(&b, s, strlen(s), mode) < 0) {
		pg_buf_release(&b);
		return NULL;
	}
	return pg_buf_detach(&b, NULL);
}

bool pg_sanitize_is_clean(const char *s, size_t len, enum pg_san_mode mode)
{
	for (size_t i = 0; i < len;) {
		int32_t cp;
		size_t n = pg_utf8_decode(s + i, len - i, &cp);

		if (!keep(s, len, i, cp, mode))
			return false;
		i += n;
	}
	return true;
}

int pg_sanitize_json(struct pg_buf *out, const char *json, size_t len)
{
	size_t i = 0, start = 0;

	while (i < len) {
		int32_t cp;
		size_t n = pg_utf8_decode(json + i, len - i, &cp);
		char e[8];

		/* JSON's white space stays (pretty printing); the rest of the
		 * unsafe set becomes a \u escape, invalid bytes \ufffd. */
		if (cp == '\n' || cp == '\r' || cp == '\t' ||
		    (cp >= 0 && !pg_sanitize_cp_unsafe(cp, PG_SAN_LINE))) {
			i += n;
			continue;
		}
		if (i > start && pg_buf_add(out, json + start, i - start) < 0)
			return -1;
		if (cp < 0)
			cp = 0xfffd;
		e[0] = '\\';
		e[1] = 'u';
		e[2] = hexdig[(cp >> 12) & 15];
		e[3] = hexdig[(cp >> 8) & 15];
		e[4] = hexdig[(cp >> 4) & 15];
		e[5] = hexdig[cp & 15];
		if (pg_buf_add(out, e, 6) < 0)
			return -1;
		i += n;
		start = i;
	}
	if (i > start && pg_buf_add(out, json + start, i - start) < 0)
		return -1;
	return pg_buf_grow(out, 0);
}
