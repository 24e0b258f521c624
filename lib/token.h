/* SPDX-License-Identifier: MIT */
#ifndef PG_TOKEN_H
#define PG_TOKEN_H

/* Secret tokens kept in files (an agent's token, the Patchwork token, the
 * admin token): one reading and one rule for all of them. */

#include <stddef.h>

#include "err.h"

/* Warn (log) when the file can be read by group or others. */
#define PG_TOKEN_WARN_SHARED 1u

/*
 * Read the token in path: its first non-blank line without the blanks
 * around it, min_len to outlen - 1 characters of printable ASCII without
 * spaces (the token goes into an HTTP header), copied with a NUL into out.
 * At most 4 * outlen bytes of the file are read; the bytes read are wiped
 * from memory afterwards.  `what` names the setting in messages
 * ("checks.token_file").  With PG_TOKEN_WARN_SHARED a file readable by
 * group or others is logged as a warning under component `what`.
 * Returns 0, or -1 with err naming what and path: unreadable (err's code),
 * or PG_EINVAL for an empty, too short, too long or unprintable token.
 */
int pg_token_read(const char *path, const char *what, size_t min_len, unsigned int flags,
		  char *out, size_t outlen, struct pg_err *err);

/* Log a warning under component `what` when the secret file at path (the
 * setting `what` names) can be read by group or others.  Used by
 * pg_token_read() and by readers of other secrets (the SMTP password). */
void pg_secret_warn_shared(const char *what, const char *path);

#endif
