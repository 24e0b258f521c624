/* SPDX-License-Identifier: MIT */
#ifndef CTL_OUTBOX_INT_H
#define CTL_OUTBOX_INT_H

/* What the outbox's files share (not for other modules). */

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "store.h"

#define OUTBOX_LOG "outbox"

/* One statement as its own transaction (one state change of one row).
 * *changes (may be NULL) gets the rows changed.  Returns 0 or -1. */
int outbox_tx_run(struct store *st, const char *what, const char *sql,
		  const struct store_arg *args, size_t nargs, int64_t *changes,
		  struct pg_err *err);

/* The wall clock in seconds. */
int64_t outbox_now_s(void);

/* A copy of a text column (NULL stays NULL).  Returns 0, or -1 with
 * PG_ENOMEM. */
int outbox_col_dup(sqlite3_stmt *q, int col, char **out, struct pg_err *err);

/* Cut text to OUTBOX_RESPONSE_MAX bytes (at a UTF-8 boundary) into out. */
void outbox_response_cut(const char *text, size_t len, char *out, size_t outlen);

#endif
