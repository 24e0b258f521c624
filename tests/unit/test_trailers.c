/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for patches/trailers.c: every tests/trailers/NAME.in mail body
 * against its NAME.ok dump (bodies made with git format-patch --base, and
 * hand-written replies), then the edges: where a line sits, limits, bad
 * arguments, and the recheck filter.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "err.h"
#include "trailers.h"

#define FIXTURES "tests/trailers"

/* Read a whole fixture file into a malloc'd buffer. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct pg_buf b = PG_BUF_INIT(1 << 20);
	char chunk[4096];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(pg_buf_add(&b, chunk, n), 0);
	assert_false(ferror(f));
	fclose(f);
	return pg_buf_detach(&b, len);
}

/* Parse text (a C string) and check the dump. */
static void expect_dump(const char *text, const char *want)
{
	struct pg_trailers t = PG_TRAILERS_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);

	assert_int_equal(pg_trailers_parse(text, strlen(text), &t, &err), 0);
	assert_int_equal(pg_trailers_dump(&t, &b), 0);
	assert_string_equal(pg_buf_str(&b), want);
	pg_buf_release(&b);
	pg_trailers_release(&t);
}

static void test_golden_files(void **state)
{
	DIR *dir = opendir(FIXTURES);
	struct dirent *de;
	int files = 0, bad = 0;

	(void)state;
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		struct pg_trailers t = PG_TRAILERS_INIT;
		struct pg_err err = PG_ERR_INIT;
		struct pg_buf got = PG_BUF_INIT(PG_BUF_NOLIMIT);
		char path[512], *body, *want;
		size_t nlen = strlen(de->d_name), len, wlen;
		int w;

		if (nlen < 4 || strcmp(de->d_name + nlen - 3, ".in"))
			continue;
		w = snprintf(path, sizeof(path), FIXTURES "/%s", de->d_name);
		assert_true(w > 0 && (size_t)w < sizeof(path));
		body = slurp(path, &len);
		assert_non_null(body);
		memcpy(path + w - 3, ".ok", 4);
		want = slurp(path, &wlen);
		assert_non_null(want);

		if (pg_trailers_parse(body, len, &t, &err) < 0) {
			print_error("%s: %s\n", de->d_name, err.msg);
			bad++;
		} else {
			assert_int_equal(pg_trailers_dump(&t, &got), 0);
			if (strcmp(pg_buf_str(&got), want)) {
				print_error("%s:\n--- got\n%s--- want\n%s", de->d_name,
					    pg_buf_str(&got), want);
				bad++;
			}
		}
		files++;
		pg_trailers_release(&t);
		pg_buf_release(&got);
		free(body);
		free(want);
	}
	closedir(dir);
	assert_true(files >= 10);
	assert_int_equal(bad, 0);
}

/* Lines in a hunk are content, whatever they say; "-- " in a hunk is a
 * removed line, not the signature. */
static void test_hunk_lines_are_not_trailers(void **state)
{
	(void)state;
	expect_dump("subject line\n"
		    "---\n"
		    "diff --git a/doc/x.rst b/doc/x.rst\n"
		    "--- a/doc/x.rst\n"
		    "+++ b/doc/x.rst\n"
		    "@@ -1,3 +1,3 @@\n"
		    "-- \n"
		    "+Depends-on: series-1\n"
		    " Recheck-request: ctx\n"
		    "\n"
		    "\\ No newline at end of file\n"
		    "\n"
		    "base-commit: 210305f144b7d56c19abbe6c36cb68c737ec5cfe\n"
		    "-- \n"
		    "2.39.5\n"
		    "Recheck-request: after-signature\n",
		    "base-commit 210305f144b7d56c19abbe6c36cb68c737ec5cfe\n"
		    "diff yes\nmalformed 0\n");
}

/* A non-git diff ("--- a" then "+++ b") also starts the diff; after it,
 * Depends-on and base-commit count, as they do when Patchwork moves them
 * in front of the diff; a hunk line never does. */
static void test_plain_diff_and_after(void **state)
{
	(void)state;
	expect_dump("Depends-on: series-7\n"
		    "--- a/x.c\n"
		    "+++ b/x.c\n"
		    "@@ -1 +1 @@\n"
		    "-a\n"
		    "+Depends-on: series-9\n"
		    "Depends-on: series-8\n"
		    "base-commit: 210305F144B7D56C19ABBE6C36CB68C737EC5CFE\n",
		    "base-commit 210305f144b7d56c19abbe6c36cb68c737ec5cfe\n"
		    "depends-on series 7\n"
		    "depends-on series 8\n"
		    "diff yes\nmalformed 0\n");
}

/* A hunk header whose counts do not parse: the hunk runs while lines look
 * like hunk lines. */
static void test_unreadable_hunk_header(void **state)
{
	(void)state;
	expect_dump("---\n"
		    "diff --git a/x b/x\n"
		    "@@ -x +y @@\n"
		    " a\n"
		    "-b\n"
		    "+c\n"
		    "Recheck-request: ctx-after\n",
		    "recheck ctx-after\ndiff yes\nmalformed 0\n");
}

static void test_keys_any_case_and_spacing(void **state)
{
	(void)state;
	expect_dump("DEPENDS-ON:SERIES-5\n"
		    "depends-on:\t patch-6   \n"
		    "RECHECK-REQUEST:a,b , c\n"
		    "signed-off-by: \"Last, First\" <first.last@example.org> # 22.11\n",
		    "depends-on series 5\n"
		    "depends-on patch 6\n"
		    "recheck a b c\n"
		    "signed-off-by \"Last, First\" <first.last@example.org>\n"
		    "diff no\nmalformed 0\n");
}

/* A list that ends in ',' continues, but not into another trailer. */
static void test_recheck_continuation(void **state)
{
	(void)state;
	expect_dump("Recheck-request: a,\n"
		    "Depends-on: series-3\n"
		    "Recheck-request: b,\n"
		    "> c\n"
		    "Recheck-request: d, rebase=next-net/for-main,\n"
		    "e\n"
		    "f\n"
		    "Recheck-request: g!h, i\n"
		    "Recheck-request: rebase=other, d, x=y\n",
		    "depends-on series 3\n"
		    "recheck rebase=next-net/for-main a b d e g\n"
		    "diff no\nmalformed 0\n");
}

static void test_recheck_ours(void **state)
{
	static const char *const ours[] = {
		"iol-unit-amd64-testing", NULL, "github-robot", "IOL-INTEL-Performance",
		"perfgate-mempool",
	};
	struct pg_trailers t = PG_TRAILERS_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_recheck mine;
	size_t len;
	char *body = slurp(FIXTURES "/recheck_rebase.in", &len);

	(void)state;
	assert_non_null(body);
	assert_int_equal(pg_trailers_parse(body, len, &t, &err), 0);
	assert_int_equal(t.recheck.ncontexts, 6);
	assert_int_equal(pg_trailers_recheck_ours(&t, ours, 5, &mine), 2);
	assert_int_equal(mine.ncontexts, 2);
	assert_string_equal(mine.contexts[0], "iol-unit-amd64-testing");
	assert_string_equal(mine.contexts[1], "github-robot");
	assert_string_equal(mine.rebase, "main");
	/* Case-sensitive: "iol-intel-Performance" was asked, not ours. */
	assert_int_equal(pg_trailers_recheck_ours(&t, ours + 3, 2, &mine), 0);
	assert_int_equal(pg_trailers_recheck_ours(&t, NULL, 0, &mine), 0);
	pg_trailers_release(&t);
	assert_int_equal(pg_trailers_recheck_ours(&t, ours, 5, &mine), 0);
	assert_string_equal(mine.rebase, "");
	assert_int_equal(pg_trailers_recheck_ours(NULL, ours, 5, &mine), 0);
	free(body);
}

static void test_people_forms(void **state)
{
	char longname[300];
	struct pg_trailers t = PG_TRAILERS_INIT;
	struct pg_err err = PG_ERR_INIT;
	char body[512];
	size_t i;
	int w;

	(void)state;
	expect_dump("Tested-by: ci@example.org\n"
		    "Acked-by: Jane Doe\n"
		    "Reviewed-by: A\x01" "B <ab@example.org>\n",
		    "tested-by \"\" <ci@example.org>\n"
		    "acked-by \"Jane Doe\" <>\n"
		    "reviewed-by \"A B\" <ab@example.org>\n"
		    "diff no\nmalformed 0\n");

	/* A name over the bound is cut between UTF-8 characters. */
	for (i = 0; i + 2 < sizeof(longname); i += 2)
		memcpy(longname + i, "\xc3\xa9", 2);
	longname[i] = '\0';
	w = snprintf(body, sizeof(body), "Signed-off-by: %s <x@example.org>\n", longname);
	assert_true(w > 0 && (size_t)w < sizeof(body));
	assert_int_equal(pg_trailers_parse(body, (size_t)w, &t, &err), 0);
	assert_int_equal(t.npeople, 1);
	assert_int_equal(strlen(t.people[0].name), PG_TRAILERS_NAME_MAX - 1 - 1);
	assert_string_equal(t.people[0].email, "x@example.org");
	assert_string_equal(pg_person_role_name(t.people[0].role), "signed-off-by");
	pg_trailers_release(&t);
}

/* NUL bytes are ordinary bytes: they never end a line or the body. */
static void test_nul_bytes(void **state)
{
	static const char body[] = "Depends-on: series-1\0junk\n"
				   "Signed-off-by: A\0B <a@example.org>\n"
				   "base-commit: 210305f144b7d56c19abbe6c36cb68c737ec5cfe\n";
	struct pg_trailers t = PG_TRAILERS_INIT;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(pg_trailers_parse(body, sizeof(body) - 1, &t, &err), 0);
	assert_int_equal(t.ndeps, 0);	/* "series-1\0junk" is no id */
	assert_int_equal(t.malformed, 1);
	assert_int_equal(t.npeople, 1);
	assert_string_equal(t.people[0].name, "A B");
	assert_string_equal(t.base_commit, "210305f144b7d56c19abbe6c36cb68c737ec5cfe");
	pg_trailers_release(&t);
}

static void test_hashes(void **state)
{
	(void)state;
	expect_dump("base-commit: 210305f144b7d56c19abbe6c36cb68c737ec5cf\n"
		    "base-commit: "
		    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
		    "base-commit: 210305f144b7d56c19abbe6c36cb68c737ec5cfe\n"
		    "prerequisite-patch-id: 3341ca90b97373fc28f8905016e41fd71a3c44d3\n"
		    "prerequisite-patch-id: 3341CA90B97373FC28F8905016E41FD71A3C44D3\n",
		    "base-commit "
		    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
		    "prerequisite-patch-id 3341ca90b97373fc28f8905016e41fd71a3c44d3\n"
		    "diff no\nmalformed 1\n");
}

static void test_limits(void **state)
{
	struct pg_trailers t = PG_TRAILERS_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	static const char one[1] = "x";
	int i;

	(void)state;
	for (i = 1; i <= PG_TRAILERS_DEPS_MAX; i++)
		assert_int_equal(pg_buf_printf(&b, "Depends-on: series-%d\n", i), 0);
	assert_int_equal(pg_trailers_parse(b.data, b.len, &t, &err), 0);
	assert_int_equal(t.ndeps, PG_TRAILERS_DEPS_MAX);
	assert_int_equal(pg_buf_adds(&b, "Depends-on: patch-1\n"), 0);
	assert_int_equal(pg_trailers_parse(b.data, b.len, &t, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_int_equal(t.ndeps, 0);
	assert_null(t.deps);

	pg_buf_reset(&b);
	assert_int_equal(pg_buf_adds(&b, "Recheck-request:"), 0);
	for (i = 0; i <= PG_TRAILERS_CONTEXTS_MAX; i++)
		assert_int_equal(pg_buf_printf(&b, " c%d", i), 0);
	pg_err_clear(&err);
	assert_int_equal(pg_trailers_parse(b.data, b.len, &t, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_int_equal(t.recheck.ncontexts, 0);

	pg_buf_reset(&b);
	for (i = 0; i <= PG_TRAILERS_PEOPLE_MAX; i++)
		assert_int_equal(pg_buf_adds(&b, "Acked-by: A <a@example.org>\n"), 0);
	pg_err_clear(&err);
	assert_int_equal(pg_trailers_parse(b.data, b.len, &t, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);

	/* The size is checked before a byte is read. */
	pg_err_clear(&err);
	assert_int_equal(pg_trailers_parse(one, (size_t)PG_TRAILERS_BODY_MAX + 1, &t, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);

	/* Too long for the fields: not stored, counted. */
	pg_buf_reset(&b);
	assert_int_equal(pg_buf_adds(&b, "Recheck-request: "), 0);
	for (i = 0; i < PG_TRAILERS_CTX_MAX; i++)
		assert_int_equal(pg_buf_addch(&b, 'a'), 0);
	assert_int_equal(pg_buf_adds(&b, "\nDepends-on: <"), 0);
	for (i = 0; i < PG_TRAILERS_MSGID_MAX; i++)
		assert_int_equal(pg_buf_addch(&b, 'm'), 0);
	assert_int_equal(pg_buf_adds(&b, "@example.org>\n"), 0);
	assert_int_equal(pg_trailers_parse(b.data, b.len, &t, &err), 0);
	assert_int_equal(t.recheck.ncontexts, 0);
	assert_int_equal(t.ndeps, 0);
	assert_int_equal(t.malformed, 2);
	pg_trailers_release(&t);
	pg_buf_release(&b);
}

static void test_arguments(void **state)
{
	struct pg_trailers t = PG_TRAILERS_INIT;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(pg_trailers_parse("x", 1, NULL, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_err_clear(&err);
	assert_int_equal(pg_trailers_parse(NULL, 3, &t, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(pg_trailers_parse(NULL, 0, &t, NULL), 0);
	assert_false(t.has_diff);
	/* Parsing again into a filled result releases what it held. */
	assert_int_equal(pg_trailers_parse("Depends-on: series-1\n", 21, &t, NULL), 0);
	assert_int_equal(pg_trailers_parse("Depends-on: series-2\n", 21, &t, NULL), 0);
	assert_int_equal(t.ndeps, 1);
	assert_int_equal(t.deps[0].id, 2);
	assert_string_equal(pg_dep_kind_name(t.deps[0].kind), "series");
	pg_trailers_release(&t);
	pg_trailers_release(&t);
	pg_trailers_release(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_files),
		cmocka_unit_test(test_hunk_lines_are_not_trailers),
		cmocka_unit_test(test_plain_diff_and_after),
		cmocka_unit_test(test_unreadable_hunk_header),
		cmocka_unit_test(test_keys_any_case_and_spacing),
		cmocka_unit_test(test_recheck_continuation),
		cmocka_unit_test(test_recheck_ours),
		cmocka_unit_test(test_people_forms),
		cmocka_unit_test(test_nul_bytes),
		cmocka_unit_test(test_hashes),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
