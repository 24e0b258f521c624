/* SPDX-License-Identifier: MIT */
/* Checked formatting: see fmt.h. */
#include "fmt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

int pg_vfmt(char *out, size_t size, const char *fmt, va_list ap)
{
	int n = vsnprintf(out, size, fmt, ap);

	if (n < 0) {
		if (size)
			*out = '\0';
		errno = EILSEQ;
		return -1;
	}
	if ((size_t)n >= size) {
		errno = E2BIG;
		return -1;
	}
	return n;
}

int pg_fmt(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = pg_vfmt(out, size, fmt, ap);
	va_end(ap);
	return n;
}

size_t pg_vfmt_cut(char *out, size_t size, const char *fmt, va_list ap)
{
	int n;
	size_t keep;

	if (!size)
		return 0;
	n = vsnprintf(out, size, fmt, ap);
	if (n < 0) {
		*out = '\0';
		return 0;
	}
	if ((size_t)n < size)
		return (size_t)n;
	/* Cut: room for "..." after whole characters. */
	if (size <= 3)
		return size - 1;
	keep = pg_utf8_cut(out, size - 4);
	memcpy(out + keep, "...", 4);
	return keep + 3;
}

size_t pg_fmt_cut(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = pg_vfmt_cut(out, size, fmt, ap);
	va_end(ap);
	return n;
}
