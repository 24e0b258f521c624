/* SPDX-License-Identifier: MIT */
/*
 * mbox splitting after git's builtin/mailsplit.c (split_mbox(),
 * split_one(), is_from_line(), is_gtfrom()).  See mbox.h.
 */
#include "mbox.h"

#include <string.h>

#include "buf.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool pg_mbox_is_from_line(const char *line, size_t len)
{
	const char *colon, *start, *end, *y;
	long year = 0;

	/* git counts the '\n' in len: "len < 20" there is "len < 19" here */
	if (len < 19 || memcmp(line, "From ", 5))
		return false;
	end = line + len;
	start = line + 5;
	/* git starts its backward search for the last ':' two bytes before
	 * the end of the line including '\n', i.e. at its last byte */
	colon = end - 1;
	for (;;) {
		if (colon < start)
			return false;
		if (*--colon == ':')
			break;
	}
	/* colon >= line + 4 here, so colon[-4] is inside the line */
	if (colon + 2 >= end)
		return false;
	if (!is_digit(colon[-4]) || !is_digit(colon[-2]) || !is_digit(colon[-1]) ||
	    !is_digit(colon[1]) || !is_digit(colon[2]))
		return false;
	/* strtol(colon + 3) > 90, bounded by the line: white space, an
	 * optional sign, digits (clamped: any big year passes) */
	y = colon + 3;
	while (y < end && is_space(*y))
		y++;
	if (y < end && *y == '+')
		y++;
	else if (y < end && *y == '-')
		return false;
	for (; y < end && is_digit(*y); y++)
		if (year < 100000)
			year = year * 10 + (*y - '0');
	return year > 90;
}

/* Does line[0..n) match ^>+From ? */
static bool is_gtfrom(const char *l, size_t n)
{
	size_t i = 0;

	while (i < n && l[i] == '>')
		i++;
	return i > 0 && n - i >= 5 && !memcmp(l + i, "From ", 5);
}

struct split {
	enum pg_mbox_format fmt;
	pg_mbox_fn fn;
	void *arg;
	struct pg_buf scratch;	/* an unescaped mboxrd message */
	ssize_t count;
	struct pg_err *err;
};

/* Hand msg[0..n) to the callback; 0 on, 1 stop quietly, -1 stop on error. */
static int deliver(struct split *sp, const char *msg, size_t n)
{
	const char *out = msg;
	int r;

	if (sp->fmt == PG_MBOX_MBOXRD) {
		size_t pos = 0, copied = 0;
		bool changed = false;

		pg_buf_reset(&sp->scratch);
		while (pos < n) {
			const char *nl = memchr(msg + pos, '\n', n - pos);
			size_t e = nl ? (size_t)(nl - msg) : n;

			if (is_gtfrom(msg + pos, e - pos)) {
				/* copy up to and excluding this line's '>' */
				if (pg_buf_add(&sp->scratch, msg + copied, pos - copied) < 0)
					return pg_buf_err(&sp->scratch, sp->err,
							  "mbox: unescaping message %zd",
							  sp->count + 1);
				copied = pos + 1;
				changed = true;
			}
			pos = nl ? e + 1 : n;
		}
		if (changed) {
			if (pg_buf_add(&sp->scratch, msg + copied, n - copied) < 0)
				return pg_buf_err(&sp->scratch, sp->err,
						  "mbox: unescaping message %zd", sp->count + 1);
			out = sp->scratch.data;
			n = sp->scratch.len;
		}
	}
	sp->count++;
	r = sp->fn(out, n, sp->arg);
	if (r < 0) {
		if (sp->err && sp->err->code == PG_OK)
			pg_err_set(sp->err, PG_ECONFLICT,
				   "mbox: stopped by the callback at message %zd", sp->count);
		return -1;
	}
	return r > 0 ? 1 : 0;
}

ssize_t pg_mbox_split(const char *buf, size_t len, enum pg_mbox_format fmt,
		      pg_mbox_fn fn, void *arg, struct pg_err *err)
{
	struct split sp = { fmt, fn, arg, PG_BUF_INIT(len), 0, err };
	size_t pos = 0, start, e;
	ssize_t rc = -1;
	int r;

	while (pos < len && is_space(buf[pos]))
		pos++;
	if (pos >= len) {
		rc = 0;
		goto out;
	}
	/* git's split_mbox() also skips the white space: "is_bare" is
	 * decided on the first line after it */
	{
		const char *nl = memchr(buf + pos, '\n', len - pos);

		e = nl ? (size_t)(nl - buf) : len;
	}
	if (!pg_mbox_is_from_line(buf + pos, e - pos)) {
		r = deliver(&sp, buf + pos, len - pos);
		rc = r < 0 ? -1 : sp.count;
		goto out;
	}
	start = e < len ? e + 1 : len;
	pos = start;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);

		e = nl ? (size_t)(nl - buf) : len;
		if (pg_mbox_is_from_line(buf + pos, e - pos)) {
			r = deliver(&sp, buf + start, pos - start);
			if (r < 0)
				goto out;
			if (r > 0) {
				rc = sp.count;
				goto out;
			}
			start = e < len ? e + 1 : len;
		}
		pos = e < len ? e + 1 : len;
	}
	r = deliver(&sp, buf + start, len - start);
	if (r < 0)
		goto out;
	rc = sp.count;
out:
	pg_buf_release(&sp.scratch);
	return rc;
}
