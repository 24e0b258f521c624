/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for lib/sanitize.c: for any bytes, what pg_sanitize()
 * (both modes) and pg_sanitize_json() give must be valid UTF-8 without a
 * raw control, C1 or bidirectional character, as checked by a decoder of
 * its own here (not the one under test); clean input must come back as it
 * is, sanitising twice must change nothing, and the output must stay
 * within PG_SAN_GROWTH bytes a byte.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sanitize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next code point of strict UTF-8 (RFC 3629) at s[*i], or -1. */
static long next_cp(const uint8_t *s, size_t n, size_t *i)
{
	uint8_t c = s[*i];
	size_t len;
	long cp, min;

	if (c < 0x80) {
		(*i)++;
		return c;
	}
	if ((c & 0xe0) == 0xc0) {
		len = 2, cp = c & 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3, cp = c & 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return -1;
	}
	if (*i + len > n)
		return -1;
	for (size_t k = 1; k < len; k++) {
		if ((s[*i + k] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[*i + k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*i += len;
	return cp;
}

static bool forbidden(long cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
	       cp == 0x200f || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* mode: 0 one line, 1 block (LF, TAB, CR before LF), 2 JSON (LF, CR, TAB). */
static void check_safe(const struct pg_buf *b, int mode)
{
	const uint8_t *s = (const uint8_t *)b->data;

	if (b->len && !s)
		abort();
	for (size_t i = 0; i < b->len;) {
		size_t at = i;
		long cp = next_cp(s, b->len, &i);

		if (cp < 0)
			abort();
		if (!forbidden(cp))
			continue;
		if (mode == 1 && (cp == '\n' || cp == '\t' ||
				  (cp == '\r' && at + 1 < b->len && s[at + 1] == '\n')))
			continue;
		if (mode == 2 && (cp == '\n' || cp == '\r' || cp == '\t'))
			continue;
		abort();
	}
	if (s && s[b->len] != '\0')
		abort();
}

static void one_mode(const uint8_t *data, size_t size, enum pg_san_mode mode)
{
	struct pg_buf a = PG_BUF_INIT(PG_BUF_NOLIMIT), b = PG_BUF_INIT(PG_BUF_NOLIMIT);

	if (pg_sanitize(&a, (const char *)data, size, mode) != 0)
		abort();
	check_safe(&a, mode == PG_SAN_LINE ? 0 : 1);
	if (a.len > size * PG_SAN_GROWTH)
		abort();
	if (pg_sanitize_is_clean((const char *)data, size, mode) &&
	    (a.len != size || (size && memcmp(a.data, data, size) != 0)))
		abort();
	if (!pg_sanitize_is_clean(a.data, a.len, mode))
		abort();
	if (pg_sanitize(&b, pg_buf_str(&a), a.len, mode) != 0 || b.len != a.len ||
	    (a.len && memcmp(a.data, b.data, a.len) != 0))
		abort();
	pg_buf_release(&a);
	pg_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_buf j = PG_BUF_INIT(PG_BUF_NOLIMIT), small = PG_BUF_INIT(size / 2 + 1);

	one_mode(data, size, PG_SAN_LINE);
	one_mode(data, size, PG_SAN_BLOCK);
	if (pg_sanitize_json(&j, (const char *)data, size) != 0)
		abort();
	check_safe(&j, 2);
	pg_buf_release(&j);
	/* Out of room: a failure, and what was written is still safe. */
	if (pg_sanitize(&small, (const char *)data, size, PG_SAN_LINE) == 0 && small.len > size / 2 + 1)
		abort();
	check_safe(&small, 0);
	pg_buf_release(&small);
	return 0;
}
