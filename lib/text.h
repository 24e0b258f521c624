/* SPDX-License-Identifier: MIT */
#ifndef PG_TEXT_H
#define PG_TEXT_H

/* Small text helpers shared by the parsers. */

#include <stddef.h>

/* The value of a hexadecimal digit (either case), or -1. */
int pg_hexval(unsigned char c);

/* The length to cut s[0..len) at so that no UTF-8 sequence is split:
 * len itself, or less when the last sequence is incomplete.  Invalid
 * bytes are left as they are. */
size_t pg_utf8_cut(const char *s, size_t len);

#endif
