/* SPDX-License-Identifier: MIT */
#ifndef PG_BASE64_H
#define PG_BASE64_H

/*
 * Standard base64 (RFC 4648, with padding), for bytes that travel inside
 * JSON text: the log chunks and mboxes of the run-one line protocol
 * (runone.h).  Both append to b and keep to b->max.
 */

#include <stddef.h>

#include "buf.h"
#include "err.h"

/* Append the encoding of data[0..len) to b.  Returns 0, or -1 with err
 * (PG_ETOOBIG past b->max, PG_ENOMEM). */
int pg_base64_encode(const void *data, size_t len, struct pg_buf *b, struct pg_err *err);

/* Append the bytes text[0..len) encodes to b.  Returns 0, or -1 with err:
 * PG_EINVAL for text that is not base64 (a length not a multiple of 4, a
 * character outside the alphabet, padding in the middle), PG_ETOOBIG. */
int pg_base64_decode(const char *text, size_t len, struct pg_buf *b, struct pg_err *err);

#endif
