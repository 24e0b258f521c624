/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by tests/unit/test_trees.c and test_planner.c: real git
 * repositories made in a temporary directory with the git program, run
 * through lib/proc.h argument vectors (no shell), with a pinned identity,
 * pinned dates and no user or system configuration, so that every run
 * makes the same commits.  Assertions are cmocka's: include <cmocka.h>
 * first.
 */
#ifndef PG_TESTGIT_H
#define PG_TESTGIT_H

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "proc.h"

#define TG_MAX_ARGS 32

/* HOME for git: the test's directory, so ~/.gitconfig is not the user's. */
static char tg_home[4096];

static inline void tg_set_home(const char *dir)
{
	assert_true((size_t)snprintf(tg_home, sizeof(tg_home), "HOME=%s", dir) < sizeof(tg_home));
}

/* Run git with the NULL-terminated arguments in dir; the output's last
 * line (without its newline) goes to out when out is not NULL. */
static inline void tg_git_out(const char *dir, char *out, size_t outlen, ...)
{
	const char *argv[TG_MAX_ARGS + 2];
	const char *env[] = {
		tg_home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.org",
		"GIT_COMMITTER_NAME=Ada Lovelace", "GIT_COMMITTER_EMAIL=ada@example.org",
		"GIT_AUTHOR_DATE=2026-01-01T10:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T10:00:00Z",
		"TZ=UTC", "LC_ALL=C", NULL
	};
	struct pg_proc p = PG_PROC_INIT;
	struct pg_err err = PG_ERR_INIT;
	char desc[PG_PROC_DESC_MAX];
	size_t n = 0;
	va_list ap;

	argv[n++] = "git";
	va_start(ap, outlen);
	for (const char *a; (a = va_arg(ap, const char *)) != NULL;) {
		assert_true(n < TG_MAX_ARGS);
		argv[n++] = a;
	}
	va_end(ap);
	argv[n] = NULL;
	p.argv = argv;
	p.dir = dir;
	p.env_set = env;
	p.timeout_ms = 60 * 1000;
	if (pg_proc_run(&p, &err) < 0)
		fail_msg("git %s: %s", argv[1], err.msg);
	if (!pg_proc_succeeded(&p))
		fail_msg("git %s in %s: %s: %s", argv[1], dir ? dir : ".",
			 pg_proc_describe(&p, desc, sizeof(desc)), pg_buf_str(&p.tail));
	if (out) {
		const char *s = pg_buf_str(&p.tail);
		size_t len = strlen(s);

		while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
			len--;
		assert_true(len < outlen);
		memcpy(out, s, len);
		out[len] = '\0';
	}
	pg_proc_release(&p);
}

#define tg_git(dir, ...) tg_git_out(dir, NULL, 0, __VA_ARGS__, (const char *)NULL)

/* Write (replace) a file below dir, making its directories. */
static inline void tg_write(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	assert_true((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) < sizeof(path));
	for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		assert_true(mkdir(path, 0755) == 0 || access(path, F_OK) == 0);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* A new repository at dir (created) on branch `branch`. */
static inline void tg_init(const char *dir, const char *branch)
{
	assert_true(mkdir(dir, 0755) == 0);
	tg_git(dir, "init", "-q", "-b", branch);
}

/* Write name=text, commit it with msg, and put the new commit id in
 * oid[41] (may be NULL). */
static inline void tg_commit(const char *dir, const char *name, const char *text,
			     const char *msg, char *oid)
{
	char tmp[64];

	tg_write(dir, name, text);
	tg_git(dir, "add", "--", name);
	tg_git(dir, "commit", "-q", "-m", msg);
	tg_git_out(dir, oid ? oid : tmp, 64, "rev-parse", "HEAD", (const char *)NULL);
}

/* The commit a revision names, into oid[41]. */
static inline void tg_rev(const char *dir, const char *rev, char *oid)
{
	tg_git_out(dir, oid, 41, "rev-parse", "--verify", "-q", rev, (const char *)NULL);
}

static inline int tg_rm_entry(const char *path, const struct stat *st, int flag,
			      struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* rm -rf dir. */
static inline void tg_rm_rf(const char *dir)
{
	nftw(dir, tg_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
