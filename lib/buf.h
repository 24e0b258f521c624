/* SPDX-License-Identifier: MIT */
#ifndef PG_BUF_H
#define PG_BUF_H

/*
 * The one growable byte buffer (after git's strbuf and curl's dynbuf).
 *
 * Every buffer has a maximum size: anything fed from outside (network,
 * child output, files) is bounded by it.  `data` is always NUL-terminated
 * when not NULL, so text can be used as a C string; binary data may hold
 * NULs too, `len` is authoritative.
 *
 *   struct pg_buf b = PG_BUF_INIT(64 * 1024);
 *   if (pg_buf_printf(&b, "%d", 42) < 0) ...
 *   pg_buf_release(&b);
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct pg_buf {
	char *data;	/* NULL until the first append */
	size_t len;	/* bytes used, excluding the terminating NUL */
	size_t alloc;	/* bytes allocated */
	size_t max;	/* the most `len` may ever be */
};

#define PG_BUF_NOLIMIT SIZE_MAX
#define PG_BUF_INIT(maxlen) { NULL, 0, 0, (maxlen) }

/* Initialise in place (same as PG_BUF_INIT). */
void pg_buf_init(struct pg_buf *b, size_t max);

/* After a pg_buf call returned -1: err set from its errno as the rest of
 * perfgate reports, "WHAT: over the N-byte limit" (PG_ETOOBIG, for
 * E2BIG), "WHAT: invalid format" (PG_EINVAL) or "WHAT: out of memory"
 * (PG_ENOMEM), WHAT a printf format.  Returns -1, so that
 * `return pg_buf_err(&b, err, "...")` reads naturally. */
int pg_buf_err(const struct pg_buf *b, struct pg_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Append n bytes.  Returns 0, or -1 with errno = E2BIG when the result
 * would exceed `max` (nothing is appended then) or ENOMEM. */
int pg_buf_add(struct pg_buf *b, const void *data, size_t n);

/* Append a C string. Same return as pg_buf_add(). */
int pg_buf_adds(struct pg_buf *b, const char *s);

/* Append one byte. Same return as pg_buf_add(). */
int pg_buf_addch(struct pg_buf *b, char c);

/* Append formatted text. Same return as pg_buf_add(). */
int pg_buf_printf(struct pg_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int pg_buf_vprintf(struct pg_buf *b, const char *fmt, va_list ap);

/* Ensure room for `extra` more bytes (plus NUL) without appending.
 * Same return as pg_buf_add(). */
int pg_buf_grow(struct pg_buf *b, size_t extra);

/* Drop the first n bytes (all of them if n >= len); keeps the memory. */
void pg_buf_consume(struct pg_buf *b, size_t n);

/* Set len to 0; keeps the memory. */
void pg_buf_reset(struct pg_buf *b);

/* Free the memory; the buffer is empty and reusable (max kept). */
void pg_buf_release(struct pg_buf *b);

/* Hand the memory to the caller (never NULL: "" when empty, or NULL on
 * allocation failure); the buffer is empty afterwards.  *len may be NULL. */
char *pg_buf_detach(struct pg_buf *b, size_t *len);

/* The contents as a C string ("" when empty). */
const char *pg_buf_str(const struct pg_buf *b);

#endif
