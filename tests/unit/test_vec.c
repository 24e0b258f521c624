/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/vec.c: PG_GROW's growth and its overflow check, and
 * the string vector. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vec.h"

struct row {
	int64_t id;
	char name[24];
};

static void test_grow(void **state)
{
	struct row *rows = NULL;
	size_t n = 0, cap = 0, grows = 0, last = 0;

	(void)state;
	for (int i = 0; i < 10000; i++) {
		assert_int_equal(PG_GROW(rows, cap, n + 1), 0);
		assert_true(cap >= n + 1);
		if (cap != last) {
			grows++;
			last = cap;
		}
		rows[n].id = i;
		rows[n++].name[0] = 'x';
	}
	/* Amortised: a few dozen reallocations for ten thousand pushes. */
	assert_true(grows < 30);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rows[i].id, (int64_t)i);
	/* Enough room: nothing moves. */
	{
		struct row *before = rows;

		assert_int_equal(PG_GROW(rows, cap, n), 0);
		assert_ptr_equal(rows, before);
	}
	free(rows);
}

static void test_overflow(void **state)
{
	struct row *rows = NULL;
	size_t cap = 0, out = 0;

	(void)state;
	errno = 0;
	assert_int_equal(PG_GROW(rows, cap, SIZE_MAX / 8), -1);
	assert_int_equal(errno, ENOMEM);
	assert_null(rows);
	assert_int_equal(cap, 0);
	assert_int_equal(pg_grow_count(0, SIZE_MAX / 2 + 1, 2, &out), -1);
	assert_int_equal(pg_grow_count(SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 2, 1, &out), 0);
	assert_true(out >= SIZE_MAX / 2 + 2);
	assert_int_equal(pg_grow_count(0, 1, 16, &out), 0);
	assert_int_equal(out, 8);
	assert_int_equal(pg_grow_count(8, 9, 16, &out), 0);
	assert_int_equal(out, 12);
	assert_null(pg_realloc_array(NULL, SIZE_MAX / 4, 8));
}

static void test_strvec(void **state)
{
	struct pg_strvec sv = PG_STRVEC_INIT;

	(void)state;
	assert_int_equal(pg_strvec_split(&sv, " lib/a.c\n\nlib/b.c \n\t\n", '\n'), 0);
	assert_int_equal(sv.n, 2);
	assert_string_equal(sv.v[0], "lib/a.c");
	assert_string_equal(sv.v[1], "lib/b.c");
	assert_null(sv.v[2]);
	assert_int_equal(pg_strvec_pushn(&sv, "abcdef", 3), 0);
	assert_string_equal(sv.v[2], "abc");
	assert_null(sv.v[3]);
	assert_int_equal(pg_strvec_push(&sv, ""), 0);
	assert_string_equal(sv.v[3], "");
	assert_true(pg_strvec_has(&sv, "lib/b.c"));
	assert_false(pg_strvec_has(&sv, "lib/c.c"));
	assert_int_equal(pg_strvec_split(&sv, "x,,y, z ,", ','), 0);
	assert_int_equal(sv.n, 7);
	assert_string_equal(sv.v[6], "z");
	assert_int_equal(pg_strvec_split(&sv, NULL, ','), 0);
	assert_int_equal(sv.n, 7);
	pg_strvec_clear(&sv);
	assert_null(sv.v);
	assert_int_equal(sv.n, 0);
	/* Reusable after clear. */
	assert_int_equal(pg_strvec_push(&sv, "again"), 0);
	assert_int_equal(sv.n, 1);
	pg_strvec_clear(&sv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_strvec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
