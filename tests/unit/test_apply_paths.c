/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for pg_apply_path_ok() (patches/apply_paths.h): every rule
 * refuses what it must, with its reason, and lets through its near misses
 * (".gitignore", "git~2", "a..b", DPDK's own paths).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "apply_paths.h"

struct path_case {
	const char *path;
	size_t len;		/* 0: strlen(path) */
	const char *why;	/* NULL: accepted */
};

#define DOTDOT "path has a '..' component"
#define DOT "path has a '.' component"
#define EMPTYC "path has an empty component"
#define GIT "path names .git"
#define NTFS "path names .git (as NTFS reads it)"
#define HFS "path names .git (as HFS+ reads it)"
#define CTRL "path has a control character"

static const struct path_case cases[] = {
	/* What DPDK patches name. */
	{ "drivers/net/null/rte_eth_null.c", 0, NULL },
	{ "README", 0, NULL },
	{ ".ci/linux-build.sh", 0, NULL },
	{ ".github/workflows/build.yml", 0, NULL },
	{ ".gitignore", 0, NULL },
	{ "doc/.gitattributes", 0, NULL },
	{ ".mailmap", 0, NULL },
	{ "a..b/c...d", 0, NULL },
	{ "...", 0, NULL },
	{ "x/.gitx", 0, NULL },
	{ "git", 0, NULL },
	{ "git~2", 0, NULL },
	{ "git~10", 0, NULL },
	{ ".git2", 0, NULL },
	{ ".gi", 0, NULL },
	{ "dir with spaces/file name", 0, NULL },
	{ "caf\xc3\xa9/na\xc3\xafve.c", 0, NULL },
	{ ".g\xe2\x80\x8cit2", 0, NULL },	/* ignorable, but not .git after */
	/* Empty, absolute. */
	{ "", 0, "path is empty" },
	{ "/etc/passwd", 0, "path is absolute" },
	{ "/", 0, "path is absolute" },
	/* Empty, "." and ".." components. */
	{ "a//b", 0, EMPTYC },
	{ "a/", 0, EMPTYC },
	{ "a/b/", 0, EMPTYC },
	{ ".", 0, DOT },
	{ "./a", 0, DOT },
	{ "a/./b", 0, DOT },
	{ "a/.", 0, DOT },
	{ "..", 0, DOTDOT },
	{ "../x", 0, DOTDOT },
	{ "a/../../x", 0, DOTDOT },
	{ "a/..", 0, DOTDOT },
	/* .git in any case and any position. */
	{ ".git", 0, GIT },
	{ ".git/config", 0, GIT },
	{ ".GIT/config", 0, GIT },
	{ ".Git/hooks/pre-commit", 0, GIT },
	{ "a/.git/hooks/x", 0, GIT },
	{ "a/b/.gIt", 0, GIT },
	/* What NTFS reads as .git. */
	{ ".git.", 0, NTFS },
	{ ".git ", 0, NTFS },
	{ ".git. . ", 0, NTFS },
	{ "a/.GIT./config", 0, NTFS },
	{ "git~1/config", 0, NTFS },
	{ "GIT~1", 0, NTFS },
	{ "a/Git~1./hooks", 0, NTFS },
	{ ".git::$INDEX_ALLOCATION/config", 0, NTFS },
	{ ".git\\config", 0, NTFS },
	/* What HFS+ reads as .git (ignorable code points). */
	{ ".g\xe2\x80\x8cit/config", 0, HFS },		/* U+200C */
	{ "\xef\xbb\xbf.git", 0, HFS },			/* U+FEFF */
	{ "a/.GI\xe2\x81\xaaT/x", 0, HFS },		/* U+206A */
	{ ".git\xe2\x80\xae", 0, HFS },			/* U+202E */
	/* Control bytes anywhere, NUL and DEL included. */
	{ "x\033y", 0, CTRL },
	{ "a/b\nc", 0, CTRL },
	{ "tab\there", 0, CTRL },
	{ "del\x7f", 0, CTRL },
	{ "nul\0after", 9, CTRL },
	{ "\x01", 0, CTRL },
};

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct path_case *c = &cases[i];
		size_t len = c->len ? c->len : strlen(c->path);
		const char *why = NULL;
		bool ok = pg_apply_path_ok(c->path, len, &why);

		if (ok != (c->why == NULL))
			fail_msg("case %zu '%s': %s, expected %s", i, c->path,
				 ok ? "accepted" : why, c->why ? c->why : "accepted");
		if (!ok)
			assert_string_equal(why, c->why);
	}
}

static void test_length(void **state)
{
	char path[PG_APPLY_PATH_MAX + 2];
	const char *why = NULL;

	(void)state;
	memset(path, 'a', sizeof(path));
	for (size_t i = 1; i < sizeof(path) - 1; i += 2)
		path[i] = '/';
	path[PG_APPLY_PATH_MAX - 1] = 'z';
	assert_true(pg_apply_path_ok(path, PG_APPLY_PATH_MAX, &why));
	assert_false(pg_apply_path_ok(path, PG_APPLY_PATH_MAX + 1, &why));
	assert_string_equal(why, "path is longer than 4096 bytes");
	/* why may be NULL; a NULL path only with length 0. */
	assert_false(pg_apply_path_ok(NULL, 0, NULL));
	assert_false(pg_apply_path_ok("../x", 4, NULL));
	/* Only len bytes count: the ".." after them is not part of it. */
	assert_true(pg_apply_path_ok("ab/..", 2, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
