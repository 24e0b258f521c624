/* SPDX-License-Identifier: MIT */
/* Growable arrays: see vec.h. */
#include "vec.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int pg_grow_count(size_t cap, size_t need, size_t size, size_t *out)
{
	size_t n = cap < 8 ? 8 : cap + cap / 2;

	if (cap > SIZE_MAX / 2 || n < need)
		n = need;
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return -1;
	}
	*out = n;
	return 0;
}

void *pg_realloc_array(void *v, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	v = realloc(v, count && size ? count * size : 1);
	if (!v)
		errno = ENOMEM;
	return v;
}

int pg_strvec_pushn(struct pg_strvec *sv, const char *s, size_t len)
{
	char *copy;

	if (len == SIZE_MAX || PG_GROW(sv->v, sv->cap, sv->n + 2) < 0) {
		errno = ENOMEM;
		return -1;
	}
	copy = malloc(len + 1);
	if (!copy) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	sv->v[sv->n++] = copy;
	sv->v[sv->n] = NULL;
	return 0;
}

int pg_strvec_push(struct pg_strvec *sv, const char *s)
{
	return pg_strvec_pushn(sv, s, strlen(s));
}

int pg_strvec_split(struct pg_strvec *sv, const char *s, char sep)
{
	while (s && *s) {
		const char *end = strchr(s, sep), *b = s, *e;

		if (!end)
			end = s + strlen(s);
		e = end;
		while (b < e && isspace((unsigned char)*b))
			b++;
		while (e > b && isspace((unsigned char)e[-1]))
			e--;
		if (e > b && pg_strvec_pushn(sv, b, (size_t)(e - b)) < 0)
			return -1;
		s = *end ? end + 1 : end;
	}
	return 0;
}

int pg_strvec_has(const struct pg_strvec *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

void pg_strvec_clear(struct pg_strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}
