/* SPDX-License-Identifier: MIT */
#include "text.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int pg_hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t pg_utf8_cut(const char *s, size_t len)
{
	size_t i = len, need;
	unsigned char lead;

	while (i > 0 && len - i < 3 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0)
		return len;
	lead = (unsigned char)s[i - 1];
	if (lead >= 0xf0)
		need = 4;
	else if (lead >= 0xe0)
		need = 3;
	else if (lead >= 0xc0)
		need = 2;
	else
		return len;	/* ASCII, or stray continuation bytes */
	return len - (i - 1) < need ? i - 1 : len;
}

int pg_parse_ll(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int pg_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || v <= min || v > max)
		return -1;
	*out = v;
	return 0;
}

int pg_parse_id(const char *s, int64_t *out)
{
	long long v;

	if (pg_parse_ll(s, 1, INT64_MAX, &v) < 0)
		return -1;
	*out = (int64_t)v;
	return 0;
}
