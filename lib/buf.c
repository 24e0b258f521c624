/* SPDX-License-Identifier: MIT */
#include "buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

void pg_buf_init(struct pg_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->max = max;
}

int pg_buf_grow(struct pg_buf *b, size_t extra)
{
	size_t need, alloc;
	char *p;

	if (extra > b->max - b->len) {
		errno = E2BIG;
		return -1;
	}
	need = b->len + extra + 1;
	if (need <= b->alloc)
		return 0;
	alloc = b->alloc ? b->alloc : 64;
	while (alloc < need)
		alloc = alloc > SIZE_MAX / 2 ? need : alloc * 2;
	p = realloc(b->data, alloc);
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	if (!b->data)
		p[0] = '\0';
	b->data = p;
	b->alloc = alloc;
	return 0;
}

int pg_buf_add(struct pg_buf *b, const void *data, size_t n)
{
	if (pg_buf_grow(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int pg_buf_adds(struct pg_buf *b, const char *s)
{
	return pg_buf_add(b, s, strlen(s));
}

int pg_buf_addch(struct pg_buf *b, char c)
{
	return pg_buf_add(b, &c, 1);
}

int pg_buf_vprintf(struct pg_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0) {
		errno = EINVAL;
		return -1;
	}
	if (pg_buf_grow(b, (size_t)n) < 0)
		return -1;
	/* Measured above, and grown to fit: it cannot be cut. */
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int pg_buf_printf(struct pg_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = pg_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

void pg_buf_consume(struct pg_buf *b, size_t n)
{
	if (n >= b->len) {
		pg_buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

void pg_buf_reset(struct pg_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void pg_buf_release(struct pg_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
}

char *pg_buf_detach(struct pg_buf *b, size_t *len)
{
	char *p = b->data;

	if (len)
		*len = b->len;
	if (!p)
		p = calloc(1, 1);
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	return p;
}

const char *pg_buf_str(const struct pg_buf *b)
{
	return b->data ? b->data : "";
}

int pg_buf_err(const struct pg_buf *b, struct pg_err *err, const char *fmt, ...)
{
	int e = errno;
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	pg_vfmt_cut(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (e == E2BIG)
		return pg_err_set(err, PG_ETOOBIG, "%s: over the %zu-byte limit", what, b->max);
	if (e == EINVAL)
		return pg_err_set(err, PG_EINVAL, "%s: invalid format", what);
	return pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
}
