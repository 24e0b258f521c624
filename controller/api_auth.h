/* SPDX-License-Identifier: MIT */
#ifndef CTL_API_AUTH_H
#define CTL_API_AUTH_H

/*
 * Tokens: agents' and the administrator's.
 *
 * An agent token is 32 random bytes (getrandom) written as 64 lower-case
 * hex digits; `perfgate-controller agent add` prints it once and the store
 * keeps only its SHA-256 (agents.token_hash, 64 hex digits).  A request's
 * token is hashed and looked up by that hash (sched_agent_by_token(), an
 * index lookup): timing can tell at most something about the hash of a
 * guess, which says nothing about a valid token.
 *
 * The admin token is the first line of the file api.admin_token_file
 * (surrounding white space dropped, at least API_ADMIN_TOKEN_MIN bytes).
 * It is kept as its SHA-256, and a presented token is hashed and compared
 * with CRYPTO_memcmp(): the time taken depends on neither token's content
 * or length.
 */

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define API_TOKEN_BYTES 32
#define API_TOKEN_HEX (2 * API_TOKEN_BYTES)
#define API_SHA256_BYTES 32
#define API_SHA256_HEX (2 * API_SHA256_BYTES)
/* The longest bearer token looked at; longer ones are refused unread. */
#define API_BEARER_MAX 1024
#define API_ADMIN_TOKEN_MIN 16

/* A new agent token: API_TOKEN_HEX hex digits and a NUL.  Returns 0, or -1
 * (PG_EIO) when the kernel gives no randomness. */
int api_token_new(char out[API_TOKEN_HEX + 1], struct pg_err *err);

/* SHA-256 of len bytes as lower-case hex (a token's hash, a result body's
 * digest).  Returns 0, or -1 (PG_EIO) when OpenSSL fails. */
int api_sha256_hex(const void *data, size_t len, char out[API_SHA256_HEX + 1],
		   struct pg_err *err);

/*
 * Take the token out of an Authorization header value "Bearer <token>"
 * (the scheme in any case, one or more spaces).  Returns 1 with *token and
 * *len pointing into header; 0 when header is NULL (no Authorization);
 * -1 when it is not a bearer token of 1 to API_BEARER_MAX printable
 * characters.
 */
int api_bearer(const char *header, const char **token, size_t *len);

/* The admin token's hash, kept by the server. */
struct api_admin {
	bool set;			/* false: admin endpoints answer 403 */
	unsigned char digest[API_SHA256_BYTES];
};

/*
 * Read the admin token from path (see above) into *admin.  Errors name the
 * file: unreadable, empty, too short, more than 4 KiB.  Warns in the log
 * when the file is readable by group or others.  Returns 0 or -1.
 */
int api_admin_load(struct api_admin *admin, const char *path, struct pg_err *err);

/* Whether token (len bytes) is the admin token, in constant time.  False
 * when no admin token is set. */
bool api_admin_check(const struct api_admin *admin, const char *token, size_t len);

#endif
