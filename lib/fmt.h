/* SPDX-License-Identifier: MIT */
#ifndef PG_FMT_H
#define PG_FMT_H

/*
 * Formatting into a fixed buffer, checked.  snprintf() only says how long
 * the text would have been; every call in perfgate goes through one of
 * these, which say what a text that does not fit becomes:
 *
 *   pg_fmt()      for what must be whole (a path, a key, a URL, an id, a
 *                 ref): -1 when it did not fit, and the caller treats it
 *                 as an error (or knows it cannot happen and says why);
 *   pg_fmt_cut()  for text for people (a reason, a note, a log line, a
 *                 message) that is cut on purpose when long: it cannot
 *                 fail, and a text it cut ends in "..." at a UTF-8
 *                 character boundary, so that a reader sees the cut.
 *
 * size must be at least 1; out is always NUL-terminated.
 */

#include <stdarg.h>
#include <stddef.h>

/* Returns the length written (< size), or -1 with errno E2BIG (out holds
 * a cut prefix the caller must not use) or EILSEQ (an encoding error: out
 * is ""). */
int pg_fmt(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int pg_vfmt(char *out, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Returns the length written (< size); a text that did not fit is cut at
 * a character boundary and ends in "..." (when size > 3). */
size_t pg_fmt_cut(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
size_t pg_vfmt_cut(char *out, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
