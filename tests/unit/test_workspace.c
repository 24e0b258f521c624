/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/workspace.c on repositories made with libgit2: a
 * mirror made from a local path, no fetch when the commit is there, an
 * incremental fetch of a new commit (path and file:// URL), a commit that
 * never comes, checkouts that keep the modification times of unchanged
 * files and remove untracked ones (inside the slot only), a series
 * applied in a slot and dropped by the next checkout, bad names refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "err.h"
#include "fsutil.h"
#include "gitutil.h"
#include "inbox.h"
#include "log.h"
#include "workspace.h"

#include "gitfx.h"

#define T0 1709280000
#define OLD_MTIME 1000000000

struct fixture {
	char dir[512];
	char up[GFX_PATH_MAX];		/* the upstream repository */
	char work[GFX_PATH_MAX];	/* the agent's work_dir */
	git_repository *repo;		/* up */
	git_oid c1, c2;			/* c2: c.c changed on c1 */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct pg_err err = PG_ERR_INIT;

	if (!f || pg_git_global_init(&err) < 0)
		return -1;
	gfx_tmpdir(f->dir, sizeof(f->dir), "test-workspace");
	gfx_path(f->up, f->dir, "up");
	gfx_path(f->work, f->dir, "work");
	f->repo = gfx_init(f->up);
	{
		const char *files[] = { "a.c", "int a;\n", "sub/b.c", "int b;\n", "c.c", "int c;\n",
					".gitignore", "*.o\n", NULL };

		gfx_commit(f->repo, files, "first\n", "Up", "up@example.org", T0, 0, &f->c1);
	}
	{
		const char *files[] = { "c.c", "int c = 2;\n", NULL };

		gfx_commit(f->repo, files, "second\n", "Up", "up@example.org", T0 + 60, 0, &f->c2);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	git_repository_free(f->repo);
	gfx_rm_rf(f->dir);
	free(f);
	return 0;
}

static char *sync_ok(struct fixture *f, const char *url, const git_oid *need)
{
	struct pg_err err = PG_ERR_INIT;
	char *mirror = NULL, hex[GIT_OID_HEXSZ + 1];

	if (need)
		git_oid_tostr(hex, sizeof(hex), need);
	if (ws_mirror_sync(f->work, "dpdk", url, need ? hex : NULL, &mirror, &err) < 0)
		fail_msg("ws_mirror_sync: %s", err.msg);
	assert_non_null(mirror);
	return mirror;
}

static char *checkout_ok(struct fixture *f, const char *mirror, const git_oid *commit)
{
	struct pg_err err = PG_ERR_INIT;
	char *src = NULL, hex[GIT_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), commit);
	if (ws_checkout(f->work, "dpdk", "release-base", mirror, hex, &src, &err) < 0)
		fail_msg("ws_checkout: %s", err.msg);
	assert_non_null(src);
	return src;
}

static bool repo_has(const char *path, const git_oid *oid)
{
	git_repository *r = NULL;
	git_commit *c = NULL;
	bool has;

	gfx_ok(git_repository_open_bare(&r, path), "open mirror");
	has = git_commit_lookup(&c, r, oid) == 0;
	git_error_clear();
	git_commit_free(c);
	git_repository_free(r);
	return has;
}

static void test_mirror_from_path(void **state)
{
	struct fixture *f = *state;
	char want[GFX_PATH_MAX], missing[GFX_PATH_MAX];
	char *mirror = sync_ok(f, f->up, &f->c1), *again;
	struct stat st;

	gfx_path(want, f->work, "mirrors/dpdk.git");
	assert_string_equal(mirror, want);
	assert_int_equal(stat(want, &st), 0);
	gfx_path(want, mirror, "objects");
	assert_int_equal(stat(want, &st), 0);	/* bare: objects at the top */
	assert_true(repo_has(mirror, &f->c1));
	assert_true(repo_has(mirror, &f->c2));	/* every branch came */

	/* The commit is there: no fetch, so even a URL that does not exist
	 * is never read. */
	gfx_path(missing, f->dir, "no-such-repo");
	again = sync_ok(f, missing, &f->c2);
	assert_string_equal(again, mirror);
	free(again);
	free(mirror);
}

static void test_incremental_fetch(void **state)
{
	struct fixture *f = *state;
	char url[GFX_PATH_MAX + 8], *mirror = sync_ok(f, f->up, &f->c2), *again;
	git_repository *m = NULL;
	git_oid c3, tip;

	{
		const char *files[] = { "a.c", "int a = 3;\n", NULL };

		gfx_commit(f->repo, files, "third\n", "Up", "up@example.org", T0 + 120, 0, &c3);
	}
	assert_false(repo_has(mirror, &c3));
	assert_true((size_t)snprintf(url, sizeof(url), "file://%s", f->up) < sizeof(url));
	again = sync_ok(f, url, &c3);
	assert_true(repo_has(again, &c3));
	/* The branch moved in the mirror too. */
	gfx_ok(git_repository_open_bare(&m, again), "open");
	gfx_ok(git_reference_name_to_id(&tip, m, "refs/heads/master"), "branch");
	assert_true(git_oid_equal(&tip, &c3));
	git_repository_free(m);
	free(again);
	free(mirror);
}

static void test_missing_commit(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char *mirror = NULL, missing[GFX_PATH_MAX];

	assert_int_equal(ws_mirror_sync(f->work, "dpdk", f->up,
					 "0123456789abcdef0123456789abcdef01234567", &mirror, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "is not on any branch of"));
	assert_null(mirror);

	gfx_path(missing, f->dir, "no-such-repo");
	assert_int_equal(ws_mirror_sync(f->work, "dpdk", missing,
					 "0123456789abcdef0123456789abcdef01234567", &mirror, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_int_equal(ws_mirror_sync(f->work, "dpdk", f->up, "0123", &mirror, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
}

static bool stop_now(void *arg)
{
	(void)arg;
	return true;
}

static void test_sync_stopped(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	struct ws_sync_opts opts = { 0, stop_now, NULL };
	char *mirror = NULL;

	assert_int_equal(ws_mirror_sync_opts(f->work, "dpdk", f->up, NULL, &opts, &mirror, &err), 1);
	assert_null(mirror);
}

static void set_mtime(const char *dir, const char *name, time_t t)
{
	char path[GFX_PATH_MAX];
	struct timeval tv[2] = { { t, 0 }, { t, 0 } };

	gfx_path(path, dir, name);
	assert_int_equal(utimes(path, tv), 0);
}

static time_t mtime(const char *dir, const char *name)
{
	char path[GFX_PATH_MAX];
	struct stat st;

	gfx_path(path, dir, name);
	assert_int_equal(stat(path, &st), 0);
	return st.st_mtime;
}

static void assert_detached_at(const char *src, const git_oid *want)
{
	git_repository *r = NULL;
	git_oid head;

	gfx_ok(git_repository_open(&r, src), "open slot");
	assert_int_equal(git_repository_head_detached(r), 1);
	gfx_head(r, &head);
	assert_true(git_oid_equal(&head, want));
	assert_int_equal(gfx_status_count(r), 0);
	git_repository_free(r);
}

static void test_checkout_keeps_mtimes(void **state)
{
	struct fixture *f = *state;
	char *mirror = sync_ok(f, f->up, &f->c2), *src = checkout_ok(f, mirror, &f->c1), *src2;
	char want[GFX_PATH_MAX];

	gfx_path(want, f->work, "slots/dpdk/release-base/src");
	assert_string_equal(src, want);
	gfx_assert_file(src, "c.c", "int c;\n");
	assert_detached_at(src, &f->c1);

	set_mtime(src, "a.c", OLD_MTIME);
	set_mtime(src, "sub/b.c", OLD_MTIME);
	set_mtime(src, "c.c", OLD_MTIME);
	src2 = checkout_ok(f, mirror, &f->c2);
	/* Only the file that changed between the two commits was written. */
	assert_int_equal(mtime(src, "a.c"), OLD_MTIME);
	assert_int_equal(mtime(src, "sub/b.c"), OLD_MTIME);
	assert_true(mtime(src, "c.c") != OLD_MTIME);
	gfx_assert_file(src, "c.c", "int c = 2;\n");
	assert_detached_at(src, &f->c2);

	/* The same commit again: nothing is written at all. */
	set_mtime(src, "c.c", OLD_MTIME);
	free(src2);
	src2 = checkout_ok(f, mirror, &f->c2);
	assert_int_equal(mtime(src, "c.c"), OLD_MTIME);
	assert_int_equal(mtime(src, "a.c"), OLD_MTIME);
	free(src2);
	free(src);
	free(mirror);
}

static void test_checkout_cleans(void **state)
{
	struct fixture *f = *state;
	char *mirror = sync_ok(f, f->up, &f->c2), *src = checkout_ok(f, mirror, &f->c2), *src2;
	char build[GFX_PATH_MAX], outside[GFX_PATH_MAX], link[GFX_PATH_MAX];
	struct stat st;

	/* Left over from a job: untracked and ignored files, a local change,
	 * a symbolic link to a file outside the slot; and the build output,
	 * which lives outside the source. */
	gfx_write(src, "junk.txt", "junk\n");
	gfx_write(src, "newdir/deep/x.c", "x\n");
	gfx_write(src, "sub/obj.o", "ignored\n");
	gfx_write(src, "a.c", "int a = 42; /* local change */\n");
	gfx_path(build, f->work, "slots/dpdk/release-base/build");
	gfx_write(f->work, "slots/dpdk/release-base/build/build.ninja", "# keep me\n");
	gfx_write(f->dir, "outside.txt", "keep me too\n");
	gfx_path(outside, f->dir, "outside.txt");
	gfx_path(link, src, "link");
	assert_int_equal(symlink(outside, link), 0);

	src2 = checkout_ok(f, mirror, &f->c1);
	gfx_assert_file(src, "junk.txt", NULL);
	gfx_assert_file(src, "newdir/deep/x.c", NULL);
	gfx_assert_file(src, "sub/obj.o", NULL);
	assert_int_equal(lstat(link, &st), -1);
	gfx_assert_file(src, "a.c", "int a;\n");
	gfx_assert_file(src, "c.c", "int c;\n");
	gfx_assert_file(build, "build.ninja", "# keep me\n");
	gfx_assert_file(f->dir, "outside.txt", "keep me too\n");
	assert_detached_at(src, &f->c1);
	free(src2);
	free(src);
	free(mirror);
}

static void test_apply_in_slot(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res = PG_APPLY_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	char *mirror, *src, *src2, *mail;
	git_repository *slot = NULL;
	git_commit *head = NULL;
	git_oid c3, id;

	{
		const char *files[] = { "sub/b.c", "int b = 3;\n", NULL };

		gfx_commit(f->repo, files, "sub: set b\n", "Ada", "ada@example.org", T0 + 180, 60,
			   &c3);
	}
	mail = gfx_email(f->repo, &c3);
	mirror = sync_ok(f, f->up, &f->c2);
	src = checkout_ok(f, mirror, &f->c2);
	assert_int_equal(ws_apply(src, mail, strlen(mail), &res, &err), 0);
	assert_int_equal(res.n_applied, 1);
	assert_int_equal(res.patches[0].method, PG_APPLY_EXACT);
	gfx_assert_file(src, "sub/b.c", "int b = 3;\n");
	gfx_ok(git_repository_open(&slot, src), "open slot");
	gfx_head(slot, &id);
	gfx_ok(git_commit_lookup(&head, slot, &id), "head");
	assert_true(git_oid_equal(git_commit_parent_id(head, 0), &f->c2));
	assert_string_equal(git_commit_author(head)->name, "Ada");
	git_commit_free(head);
	git_repository_free(slot);
	pg_apply_result_release(&res);

	/* The next job's checkout drops the patched commit. */
	src2 = checkout_ok(f, mirror, &f->c2);
	gfx_assert_file(src, "sub/b.c", "int b;\n");
	assert_detached_at(src, &f->c2);

	assert_int_equal(ws_apply(src, "not a mail\n", 11, &res, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_apply_result_release(&res);
	free(src2);
	free(src);
	free(mirror);
	free(mail);
}

static void test_bad_names(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	const char *bad[] = { "", "..", ".", "../x", "a/b", "/abs", ".hidden", "-x", "a b",
			      "a\\b", NULL };
	char *out = NULL, *mirror = NULL, escaped[GFX_PATH_MAX];
	char hex[GIT_OID_HEXSZ + 1];
	struct stat st;

	git_oid_tostr(hex, sizeof(hex), &f->c1);
	assert_true(ws_name_ok("dpdk"));
	assert_true(ws_name_ok("dpdk-next-net"));
	assert_true(ws_name_ok("release-base"));
	assert_true(ws_name_ok("22.11_x+y"));
	assert_false(ws_name_ok(NULL));
	for (size_t i = 0; bad[i]; i++) {
		assert_false(ws_name_ok(bad[i]));
		assert_int_equal(ws_mirror_sync(f->work, bad[i], f->up, NULL, &mirror, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		assert_null(mirror);
		assert_int_equal(ws_checkout(f->work, bad[i], "s", "/nonexistent", hex, &out, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		assert_int_equal(ws_checkout(f->work, "dpdk", bad[i], "/nonexistent", hex, &out, &err),
				 -1);
		assert_int_equal(err.code, PG_EINVAL);
		assert_null(out);
		assert_int_equal(ws_build_dir(f->work, "dpdk", bad[i], &out, &err), -1);
	}
	{
		char long_name[WS_NAME_MAX + 2];

		memset(long_name, 'a', sizeof(long_name) - 1);
		long_name[sizeof(long_name) - 1] = '\0';
		assert_false(ws_name_ok(long_name));
		long_name[WS_NAME_MAX] = '\0';
		assert_true(ws_name_ok(long_name));
	}
	/* Nothing was made anywhere, least of all beside the work dir. */
	assert_int_equal(stat(f->work, &st), -1);
	gfx_path(escaped, f->dir, "x");
	assert_int_equal(stat(escaped, &st), -1);
	assert_int_equal(ws_checkout(f->work, "dpdk", "s", "/nonexistent", "abc", &out, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);

	assert_int_equal(ws_build_dir("/w", "dpdk", "release-patched", &out, &err), 0);
	assert_string_equal(out, "/w/slots/dpdk/release-patched/build");
	free(out);
}

static void test_slot_not_a_directory(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char *mirror = sync_ok(f, f->up, &f->c1), *out = NULL;
	char slot[GFX_PATH_MAX], target[GFX_PATH_MAX], hex[GIT_OID_HEXSZ + 1];
	struct stat st;

	/* A symbolic link where the slot should be: refused, not followed. */
	gfx_path(target, f->dir, "elsewhere");
	assert_int_equal(mkdir(target, 0755), 0);
	gfx_write(target, "precious.txt", "do not delete\n");
	gfx_path(slot, f->work, "slots/dpdk/linked");
	assert_int_equal(pg_mkdir_p(slot, 0755, &err), 0);
	gfx_path(slot, f->work, "slots/dpdk/linked/src");
	assert_int_equal(symlink(target, slot), 0);
	git_oid_tostr(hex, sizeof(hex), &f->c1);
	assert_int_equal(ws_checkout(f->work, "dpdk", "linked", mirror, hex, &out, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "is not a directory"));
	gfx_assert_file(target, "precious.txt", "do not delete\n");
	gfx_path(slot, target, ".git");
	assert_int_equal(stat(slot, &st), -1);

	/* A commit the mirror lacks. */
	assert_int_equal(ws_checkout(f->work, "dpdk", "release-base", mirror,
				     "0123456789abcdef0123456789abcdef01234567", &out, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	free(mirror);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mirror_from_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_incremental_fetch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_stopped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkout_keeps_mtimes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkout_cleans, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_in_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slot_not_a_directory, setup, teardown),
	};

	pg_log_set_levels("warn");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
