/* SPDX-License-Identifier: MIT */
#ifndef PG_ERR_H
#define PG_ERR_H

/*
 * Error values with context.  A fallible function takes a `struct pg_err *`
 * as its last argument, returns -1 on failure and fills it; callers add
 * what they were doing with pg_err_prefix() as the error travels up, so the
 * final message reads "load profile 'x.json': field 'contexts.a.alpha': ...".
 */

#include <stddef.h>

enum pg_errcode {
	PG_OK = 0,
	PG_EINVAL,	/* bad input: configuration, JSON, request */
	PG_ENOTFOUND,	/* a named thing does not exist */
	PG_EIO,		/* operating system or library I/O failure */
	PG_ETIMEOUT,	/* a deadline passed */
	PG_ETOOBIG,	/* input over its bound */
	PG_ENOMEM,
	PG_ECONFLICT,	/* state does not allow the change (stale, duplicate) */
	PG_EDB,		/* the store failed */
};

#define PG_ERR_MSG_MAX 1024

struct pg_err {
	enum pg_errcode code;
	char msg[PG_ERR_MSG_MAX];
};

#define PG_ERR_INIT { PG_OK, "" }

/* Set code and message (printf format).  Always returns -1, so that
 * `return pg_err_set(err, PG_EINVAL, "...")` reads naturally.  err may be
 * NULL, in which case nothing is recorded. */
int pg_err_set(struct pg_err *err, enum pg_errcode code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Like pg_err_set() with PG_EIO, appending ": strerror(errno)".  Reads
 * errno on entry.  Returns -1. */
int pg_err_errno(struct pg_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prepend "context: " to the message already set.  Truncates safely. */
void pg_err_prefix(struct pg_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reset to PG_OK with an empty message. */
void pg_err_clear(struct pg_err *err);

/* Short name of a code, e.g. "invalid" for PG_EINVAL. */
const char *pg_errcode_name(enum pg_errcode code);

#endif
