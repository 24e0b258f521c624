/* SPDX-License-Identifier: MIT */
#ifndef PG_TEXT_H
#define PG_TEXT_H

/* Small text helpers shared by the parsers. */

#include <stddef.h>
#include <stdint.h>

/* The value of a hexadecimal digit (either case), or -1. */
int pg_hexval(unsigned char c);

/* The length to cut s[0..len) at so that no UTF-8 sequence is split:
 * len itself, or less when the last sequence is incomplete.  Invalid
 * bytes are left as they are. */
size_t pg_utf8_cut(const char *s, size_t len);

/* A whole string of decimal digits (an optional sign first) as a number in
 * [min, max]: 0 with *out set, or -1 (empty, trailing characters, out of
 * range or of long long's range), *out untouched. */
int pg_parse_ll(const char *s, long long min, long long max, long long *out);

/* A whole string as a finite number in (min, max]: 0 with *out set, or
 * -1 (empty, trailing characters, out of range), *out untouched. */
int pg_parse_double(const char *s, double min, double max, double *out);

/* An id from a command line or a URL: pg_parse_ll() in [1, INT64_MAX]. */
int pg_parse_id(const char *s, int64_t *out);

#endif
