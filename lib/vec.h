/* SPDX-License-Identifier: MIT */
#ifndef PG_VEC_H
#define PG_VEC_H

/*
 * Growable arrays (after git's ALLOC_GROW and strvec).
 *
 *   struct row *rows = NULL;
 *   size_t n = 0, cap = 0;
 *   if (PG_GROW(rows, cap, n + 1) < 0)
 *           return pg_err_set(err, PG_ENOMEM, "out of memory");
 *   rows[n++] = r;
 *
 * PG_GROW(v, cap, need) makes the array v (any pointer type, NULL when
 * empty) hold at least `need` elements, growing it by half again (at
 * least to 8) so that n pushes cost O(n).  cap is a size_t lvalue that
 * holds the allocated count; v and cap are evaluated more than once, so
 * they must be plain variables or members.  Returns 0, or -1 with errno
 * ENOMEM (out of memory, or a size that does not fit a size_t: the
 * multiplication is checked) with v and cap left as they were.
 */

#include <stddef.h>

#include "err.h"

/* The new count for PG_GROW: *out >= need, or -1 (errno ENOMEM) when
 * need * size overflows. */
int pg_grow_count(size_t cap, size_t need, size_t size, size_t *out);

/* realloc(v, count * size) with the product checked; NULL with errno
 * ENOMEM. */
void *pg_realloc_array(void *v, size_t count, size_t size);

#define PG_GROW(v, cap, need)							\
	__extension__({								\
		size_t pg_need_ = (need), pg_new_ = 0;				\
		int pg_rc_ = 0;							\
		if (pg_need_ > (cap)) {						\
			void *pg_p_ = NULL;					\
			if (pg_grow_count((cap), pg_need_, sizeof(*(v)), &pg_new_) < 0 || \
			    !(pg_p_ = pg_realloc_array((v), pg_new_, sizeof(*(v))))) \
				pg_rc_ = -1;					\
			else {							\
				(v) = pg_p_;					\
				(cap) = pg_new_;				\
			}							\
		}								\
		pg_rc_;								\
	})

/* A NULL-terminated vector of strings it owns (v[n] is NULL once anything
 * was pushed; v is NULL while empty). */
struct pg_strvec {
	char **v;
	size_t n, cap;
};

#define PG_STRVEC_INIT { NULL, 0, 0 }

/* Append a copy of s[0..len) (it may hold no NUL: the copy ends at len).
 * Returns 0, or -1 with errno ENOMEM (nothing appended). */
int pg_strvec_pushn(struct pg_strvec *sv, const char *s, size_t len);

/* Append a copy of the C string s. */
int pg_strvec_push(struct pg_strvec *sv, const char *s);

/* Append the fields of s split at sep, each trimmed of white space,
 * empty ones left out ("a, b,,c" -> a b c).  Returns 0 or -1 (ENOMEM;
 * the fields appended so far stay). */
int pg_strvec_split(struct pg_strvec *sv, const char *s, char sep);

/* Whether s is one of the strings. */
int pg_strvec_has(const struct pg_strvec *sv, const char *s);

/* Free the strings and the vector; sv is empty and reusable. */
void pg_strvec_clear(struct pg_strvec *sv);

#endif
