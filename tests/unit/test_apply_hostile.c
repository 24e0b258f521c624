/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for what patches/apply.c refuses, on real repositories made
 * with libgit2 next to a sentinel directory ("outside") that no patch may
 * reach: a symbolic link and then a file beneath it (two patches, two
 * mboxes, one patch, a directory turned into a link), a link only in the
 * working tree, git's path rules (.., .git, absolute, control bytes in a
 * C-quoted name, renames and copies), and the limits on what a patch
 * writes (binary literals, lying literals, deltas, text, file count, the
 * usage carried across mboxes).  Each refusal must be a patch failure (1)
 * with the index, the working tree and the sentinel untouched.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "apply.h"
#include "buf.h"
#include "err.h"
#include "gitutil.h"
#include "inbox.h"
#include "log.h"

#include "gitfx.h"

#define T0 1709280000	/* 2024-03-01T08:00:00Z */

struct fixture {
	char dir[512];		/* holds repo/ and outside/ only */
	char repo_dir[GFX_PATH_MAX];
	char outside[GFX_PATH_MAX];
	git_repository *repo;
	git_oid base;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct pg_err err = PG_ERR_INIT;
	const char *files[] = { "README", "hi\n", "dir/a.c", "int a;\n", NULL };

	if (!f || pg_git_global_init(&err) < 0)
		return -1;
	gfx_tmpdir(f->dir, sizeof(f->dir), "test-apply-hostile");
	gfx_path(f->repo_dir, f->dir, "repo");
	gfx_path(f->outside, f->dir, "outside");
	assert_int_equal(mkdir(f->repo_dir, 0755), 0);
	assert_int_equal(mkdir(f->outside, 0755), 0);
	gfx_write(f->outside, "keep", "keep\n");
	f->repo = gfx_init(f->repo_dir);
	gfx_commit(f->repo, files, "base\n", "Base", "base@example.org", T0, 0, &f->base);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	git_repository_free(f->repo);
	gfx_rm_rf(f->dir);	/* FTW_PHYS: links are removed, not followed */
	free(f);
	return 0;
}

/* Nothing but "keep" in outside/, unchanged, and nothing next to repo/. */
static void assert_outside_untouched(struct fixture *f)
{
	DIR *d;
	struct dirent *e;
	size_t n = 0;

	gfx_assert_file(f->outside, "keep", "keep\n");
	assert_non_null(d = opendir(f->outside));
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "keep"))
			fail_msg("outside/%s was created", e->d_name);
	}
	closedir(d);
	assert_int_equal(n, 1);
	assert_non_null(d = opendir(f->dir));
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, "repo") && strcmp(e->d_name, "outside"))
			fail_msg("%s/%s was created", f->dir, e->d_name);
	closedir(d);
}

/* ---- writing patches ------------------------------------------------ */

/* A format-patch mail around diff. */
static void add_mail(struct pg_buf *mbox, const char *subject, const char *diff)
{
	assert_int_equal(pg_buf_printf(mbox,
				       "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
				       "From: Mallory <mallory@example.org>\n"
				       "Date: Fri, 1 Mar 2024 08:00:00 +0000\n"
				       "Subject: %s\n"
				       "\n"
				       "---\n"
				       "%s"
				       "-- \n"
				       "2.39.5\n"
				       "\n", subject, diff), 0);
}

static void add_link(struct pg_buf *d, const char *path, const char *target)
{
	assert_int_equal(pg_buf_printf(d,
				       "diff --git a/%s b/%s\n"
				       "new file mode 120000\n"
				       "index 0000000..1111111\n"
				       "--- /dev/null\n"
				       "+++ b/%s\n"
				       "@@ -0,0 +1 @@\n"
				       "+%s\n"
				       "\\ No newline at end of file\n", path, path, path, target), 0);
}

static void del_link(struct pg_buf *d, const char *path, const char *target)
{
	assert_int_equal(pg_buf_printf(d,
				       "diff --git a/%s b/%s\n"
				       "deleted file mode 120000\n"
				       "index 1111111..0000000\n"
				       "--- a/%s\n"
				       "+++ /dev/null\n"
				       "@@ -1 +0,0 @@\n"
				       "-%s\n"
				       "\\ No newline at end of file\n", path, path, path, target), 0);
}

/* A new file of one line "pwned" (quoted: the names as given, already
 * with their a/ b/ prefixes and quotes). */
static void add_file_q(struct pg_buf *d, const char *a, const char *b)
{
	assert_int_equal(pg_buf_printf(d,
				       "diff --git %s %s\n"
				       "new file mode 100644\n"
				       "index 0000000..2222222\n"
				       "--- /dev/null\n"
				       "+++ %s\n"
				       "@@ -0,0 +1 @@\n"
				       "+pwned\n", a, b, b), 0);
}

static void add_file(struct pg_buf *d, const char *path)
{
	char a[GFX_PATH_MAX], b[GFX_PATH_MAX];

	assert_true((size_t)snprintf(a, sizeof(a), "a/%s", path) < sizeof(a));
	assert_true((size_t)snprintf(b, sizeof(b), "b/%s", path) < sizeof(b));
	add_file_q(d, a, b);
}

/* A new file of `lines` lines of 63 'x' (64 bytes each). */
static void add_big_file(struct pg_buf *d, const char *path, int lines)
{
	assert_int_equal(pg_buf_printf(d,
				       "diff --git a/%s b/%s\n"
				       "new file mode 100644\n"
				       "index 0000000..2222222\n"
				       "--- /dev/null\n"
				       "+++ b/%s\n"
				       "@@ -0,0 +1,%d @@\n", path, path, path, lines), 0);
	for (int i = 0; i < lines; i++)
		assert_int_equal(pg_buf_printf(d, "+%.63s\n",
					       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), 0);
}

static void del_dir_a(struct pg_buf *d)
{
	assert_int_equal(pg_buf_adds(d,
				     "diff --git a/dir/a.c b/dir/a.c\n"
				     "deleted file mode 100644\n"
				     "index 3333333..0000000\n"
				     "--- a/dir/a.c\n"
				     "+++ /dev/null\n"
				     "@@ -1 +0,0 @@\n"
				     "-int a;\n"), 0);
}

/* One side of a GIT binary patch: "KIND DECLARED" and the deflated data
 * in git's base85 lines. */
static void add_binary_side(struct pg_buf *d, const char *kind, size_t declared,
			    const void *data, size_t len)
{
	static const char b85[] =
		"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
	uLongf zlen = compressBound((uLong)len);
	unsigned char *z = malloc(zlen);

	assert_non_null(z);
	assert_int_equal(compress2(z, &zlen, data, (uLong)len, 9), Z_OK);
	assert_int_equal(pg_buf_printf(d, "%s %zu\n", kind, declared), 0);
	for (size_t at = 0; at < zlen; at += 52) {
		size_t n = zlen - at < 52 ? zlen - at : 52;

		assert_int_equal(pg_buf_addch(d, n <= 26 ? (char)('A' + n - 1) :
					      (char)('a' + n - 27)), 0);
		for (size_t g = 0; g < n; g += 4) {
			uint32_t v = 0;
			char out[5];

			for (size_t k = 0; k < 4; k++)
				v = v << 8 | (g + k < n ? z[at + g + k] : 0);
			for (int k = 4; k >= 0; k--) {
				out[k] = b85[v % 85];
				v /= 85;
			}
			assert_int_equal(pg_buf_add(d, out, 5), 0);
		}
		assert_int_equal(pg_buf_addch(d, '\n'), 0);
	}
	assert_int_equal(pg_buf_addch(d, '\n'), 0);
	free(z);
}

/* A new binary file of `size` zero bytes, declaring `declared`. */
static void add_zeros(struct pg_buf *d, const char *path, size_t size, size_t declared)
{
	void *zeros = calloc(1, size);

	assert_non_null(zeros);
	assert_int_equal(pg_buf_printf(d,
				       "diff --git a/%s b/%s\n"
				       "new file mode 100644\n"
				       "index 0000000..4444444\n"
				       "GIT binary patch\n", path, path), 0);
	add_binary_side(d, "literal", declared, zeros, size);
	add_binary_side(d, "literal", 0, "", 0);
	free(zeros);
}

/* ---- applying ------------------------------------------------------- */

static int apply_opts(struct fixture *f, const struct pg_buf *mbox,
		      const struct pg_apply_opts *opts, struct pg_apply_result *res)
{
	struct pg_err err = PG_ERR_INIT;
	int rc;

	memset(res, 0, sizeof(*res));
	rc = pg_apply_mbox_opts(f->repo, mbox->data, mbox->len, opts, res, &err);
	if (rc < 0)
		fail_msg("apply: error: %s", err.msg);
	return rc;
}

static int apply(struct fixture *f, const struct pg_buf *mbox, struct pg_apply_result *res)
{
	return apply_opts(f, mbox, NULL, res);
}

/* The patch failed with reason, about file, and left nothing: HEAD at
 * want_head, index and work tree clean, outside untouched. */
static void assert_refused(struct fixture *f, struct pg_apply_result *res, size_t patch,
			   const char *file, const char *reason, const git_oid *want_head)
{
	git_oid head;

	assert_int_equal(res->failed_patch, patch);
	assert_int_equal(res->n_applied, patch - 1);
	assert_int_equal(res->patches[patch - 1].method, PG_APPLY_FAILED);
	if (file)
		assert_string_equal(res->failed_file, file);
	else
		assert_null(res->failed_file);
	assert_string_equal(res->reason, reason);
	gfx_head(f->repo, &head);
	assert_true(git_oid_equal(&head, want_head));
	assert_int_equal(gfx_status_count(f->repo), 0);
	assert_outside_untouched(f);
}

static bool is_link(const char *dir, const char *name)
{
	char path[GFX_PATH_MAX];
	struct stat st;

	gfx_path(path, dir, name);
	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

/* ---- beyond a symbolic link ----------------------------------------- */

static void test_link_then_file(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf why = PG_BUF_INIT(4096);
	struct pg_apply_result res;
	git_oid first;

	add_link(&d, "evil", f->outside);
	add_mail(&mbox, "[PATCH 1/2] add a link", pg_buf_str(&d));
	pg_buf_reset(&d);
	add_file(&d, "evil/pwned");
	add_mail(&mbox, "[PATCH 2/2] write beneath it", pg_buf_str(&d));
	assert_int_equal(apply(f, &mbox, &res), 1);
	assert_int_equal(res.patches[0].method, PG_APPLY_EXACT);
	gfx_ok(git_oid_fromstr(&first, res.patches[0].commit), "oid");
	assert_refused(f, &res, 2, "evil/pwned",
		       "path is beyond a symbolic link 'evil' (created by patch 1/2)", &first);
	assert_true(is_link(f->repo_dir, "evil"));
	assert_int_equal(pg_apply_describe(&res, &why), 0);
	assert_string_equal(pg_buf_str(&why),
			    "patch 2/2 \"write beneath it\": evil/pwned: path is beyond a symbolic "
			    "link 'evil' (created by patch 1/2)");
	pg_apply_result_release(&res);
	pg_buf_release(&why);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

static void test_link_then_file_two_mboxes(void **state)
{
	struct fixture *f = *state;
	struct pg_buf m1 = PG_BUF_INIT(PG_BUF_NOLIMIT), m2 = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_result res;
	git_oid first;

	/* The prerequisite series makes the link, the series writes there. */
	add_link(&d, "evil", "../outside");
	add_mail(&m1, "[PATCH] add a link", pg_buf_str(&d));
	pg_buf_reset(&d);
	add_file(&d, "evil/sub/pwned");
	add_mail(&m2, "[PATCH] write beneath it", pg_buf_str(&d));
	assert_int_equal(apply(f, &m1, &res), 0);
	gfx_head(f->repo, &first);
	pg_apply_result_release(&res);
	assert_int_equal(apply(f, &m2, &res), 1);
	assert_refused(f, &res, 1, "evil/sub/pwned",
		       "path is beyond a symbolic link 'evil' (in the tree)", &first);
	pg_apply_result_release(&res);
	pg_buf_release(&m1);
	pg_buf_release(&m2);
	pg_buf_release(&d);
}

static void test_link_and_file_one_patch(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_result res;

	/* The file first: the order of the deltas must not matter. */
	add_file(&d, "evil/pwned");
	add_link(&d, "evil", f->outside);
	add_mail(&mbox, "[PATCH] link and file", pg_buf_str(&d));
	assert_int_equal(apply(f, &mbox, &res), 1);
	assert_refused(f, &res, 1, "evil/pwned",
		       "path is beyond a symbolic link 'evil' (created by this patch)", &f->base);
	assert_false(is_link(f->repo_dir, "evil"));
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

static void test_dir_becomes_link(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_result res;
	git_oid first;

	/* In one patch: dir/ goes, dir is a link, dir/a.c is written. */
	del_dir_a(&d);
	add_link(&d, "dir", f->outside);
	add_file(&d, "dir/a.c");
	add_mail(&mbox, "[PATCH] dir is a link", pg_buf_str(&d));
	assert_int_equal(apply(f, &mbox, &res), 1);
	assert_refused(f, &res, 1, "dir/a.c",
		       "path is beyond a symbolic link 'dir' (created by this patch)", &f->base);
	gfx_assert_file(f->repo_dir, "dir/a.c", "int a;\n");
	pg_apply_result_release(&res);

	/* In two: the first is fine on its own, the second is refused. */
	pg_buf_reset(&mbox);
	pg_buf_reset(&d);
	del_dir_a(&d);
	add_link(&d, "dir", f->outside);
	add_mail(&mbox, "[PATCH 1/2] dir is a link", pg_buf_str(&d));
	pg_buf_reset(&d);
	add_file(&d, "dir/b.c");
	add_mail(&mbox, "[PATCH 2/2] write beneath it", pg_buf_str(&d));
	assert_int_equal(apply(f, &mbox, &res), 1);
	if (res.failed_patch != 2)
		fail_msg("patch %zu failed: %s", res.failed_patch, res.reason);
	gfx_ok(git_oid_fromstr(&first, res.patches[0].commit), "oid");
	assert_refused(f, &res, 2, "dir/b.c",
		       "path is beyond a symbolic link 'dir' (created by patch 1/2)", &first);
	assert_true(is_link(f->repo_dir, "dir"));
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

static void test_link_in_work_tree(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_result res;
	char link[GFX_PATH_MAX];

	/* A link the tree does not know (ignored, or left by someone). */
	gfx_path(link, f->repo_dir, "wd");
	assert_int_equal(symlink(f->outside, link), 0);
	add_file(&d, "wd/pwned");
	add_mail(&mbox, "[PATCH] write beneath an untracked link", pg_buf_str(&d));
	assert_int_equal(apply(f, &mbox, &res), 1);
	assert_int_equal(res.failed_patch, 1);
	assert_string_equal(res.failed_file, "wd/pwned");
	assert_string_equal(res.reason,
			    "path is beyond a symbolic link 'wd' (in the working tree)");
	assert_int_equal(unlink(link), 0);
	assert_int_equal(gfx_status_count(f->repo), 0);
	assert_outside_untouched(f);
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

static void test_link_replaced_by_dir(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_result res;
	struct stat st;
	char path[GFX_PATH_MAX];

	/* What git apply allows: the patch removes the link and puts a
	 * directory in its place. */
	add_link(&d, "lnk", "README");
	add_mail(&mbox, "[PATCH 1/2] add a link", pg_buf_str(&d));
	pg_buf_reset(&d);
	del_link(&d, "lnk", "README");
	add_file(&d, "lnk/file");
	add_mail(&mbox, "[PATCH 2/2] make it a directory", pg_buf_str(&d));
	assert_int_equal(apply(f, &mbox, &res), 0);
	assert_int_equal(res.n_applied, 2);
	gfx_path(path, f->repo_dir, "lnk");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	gfx_assert_file(f->repo_dir, "lnk/file", "pwned\n");
	gfx_assert_file(f->repo_dir, "README", "hi\n");
	assert_int_equal(gfx_status_count(f->repo), 0);
	assert_outside_untouched(f);
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

/* ---- git's path rules ----------------------------------------------- */

struct bad_path {
	const char *a, *b;	/* a new file's names in the diff header */
	const char *diff;	/* or a whole diff (renames, copies) */
	const char *file;
	const char *reason;
};

#define RENAME_README "diff --git a/README b/README2\nsimilarity index 100%\n"

static void test_bad_paths(void **state)
{
	struct fixture *f = *state;
	char abs_diff[GFX_PATH_MAX * 2], abs_file[GFX_PATH_MAX];
	struct bad_path cases[] = {
		{ "a/../x", "b/../x", NULL, "../x", "path has a '..' component" },
		{ "a/.GIT/config", "b/.GIT/config", NULL, ".GIT/config", "path names .git" },
		{ "a/a/.git/hooks/x", "b/a/.git/hooks/x", NULL, "a/.git/hooks/x",
		  "path names .git" },
		{ "a/git~1/config", "b/git~1/config", NULL, "git~1/config",
		  "path names .git (as NTFS reads it)" },
		/* libgit2 unquotes C-quoted names: the decoded path is checked. */
		{ "\"a/x\\033y\"", "\"b/x\\033y\"", NULL, "x\033y",
		  "path has a control character" },
		{ "\"a/\\056\\056/q\"", "\"b/\\056\\056/q\"", NULL, "../q",
		  "path has a '..' component" },
		{ NULL, NULL, RENAME_README "rename from README\nrename to .git/hooks/post-commit\n",
		  ".git/hooks/post-commit", "path names .git" },
		{ NULL, NULL, RENAME_README "copy from ../../etc/passwd\ncopy to README2\n",
		  "../../etc/passwd", "path has a '..' component" },
		{ NULL, NULL, abs_diff, abs_file, "path is absolute" },
	};

	assert_true((size_t)snprintf(abs_file, sizeof(abs_file), "%s/abs", f->outside) <
		    sizeof(abs_file));
	assert_true((size_t)snprintf(abs_diff, sizeof(abs_diff),
				     "%srename from README\nrename to %s\n", RENAME_README, abs_file) <
		    sizeof(abs_diff));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
		struct pg_apply_result res;

		if (cases[i].diff)
			assert_int_equal(pg_buf_adds(&d, cases[i].diff), 0);
		else
			add_file_q(&d, cases[i].a, cases[i].b);
		add_mail(&mbox, "[PATCH] hostile path", pg_buf_str(&d));
		if (apply(f, &mbox, &res) != 1)
			fail_msg("case %zu (%s): not refused", i, cases[i].file);
		assert_refused(f, &res, 1, cases[i].file, cases[i].reason, &f->base);
		pg_apply_result_release(&res);
		pg_buf_release(&mbox);
		pg_buf_release(&d);
	}
}

/* ---- limits --------------------------------------------------------- */

static void test_limit_binary_literal(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_opts opts = PG_APPLY_OPTS_INIT;
	struct pg_apply_result res;
	char *got;

	add_zeros(&d, "blob.bin", 4096, 4096);
	add_mail(&mbox, "[PATCH] a binary file", pg_buf_str(&d));
	opts.limits.max_file_bytes = 1000;
	assert_int_equal(apply_opts(f, &mbox, &opts, &res), 1);
	assert_refused(f, &res, 1, "blob.bin",
		       "writes a 4 KiB file (limit 1000 bytes, apply.max_file_mb)", &f->base);
	pg_apply_result_release(&res);

	/* The same patch within the defaults applies: the test's patch is
	 * a real one. */
	assert_int_equal(apply(f, &mbox, &res), 0);
	assert_int_equal(res.used.files, 1);
	assert_int_equal(res.used.total_bytes, 4096);
	got = gfx_read(f->repo_dir, "blob.bin");
	assert_non_null(got);
	assert_int_equal(got[0], 0);
	assert_int_equal(got[4095], 0);
	free(got);
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

static void test_limit_binary_lies(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_result res;

	/* libgit2 would inflate it all before comparing: a small declared
	 * size must not let a bomb through. */
	add_zeros(&d, "blob.bin", 1 << 20, 10);
	add_mail(&mbox, "[PATCH] a lying binary file", pg_buf_str(&d));
	assert_int_equal(apply(f, &mbox, &res), 1);
	assert_refused(f, &res, 1, "blob.bin",
		       "its binary patch does not inflate to the 10 bytes it declares", &f->base);
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

static void test_limit_binary_delta(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_result res;
	/* base size 3 ("hi\n"), result size 1 GiB (varints), one insert. */
	static const unsigned char delta[] = { 0x03, 0x80, 0x80, 0x80, 0x80, 0x04, 0x01, 'x' };

	assert_int_equal(pg_buf_adds(&d,
				     "diff --git a/README b/README\n"
				     "index 45b983b..5555555 100644\n"
				     "GIT binary patch\n"), 0);
	add_binary_side(&d, "delta", sizeof(delta), delta, sizeof(delta));
	add_binary_side(&d, "literal", 3, "hi\n", 3);
	add_mail(&mbox, "[PATCH] a delta to 1 GiB", pg_buf_str(&d));
	assert_int_equal(apply(f, &mbox, &res), 1);
	assert_refused(f, &res, 1, "README",
		       "writes a 1024 MiB file (limit 64 MiB, apply.max_file_mb)", &f->base);
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

static void test_limit_text_file(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_opts opts = PG_APPLY_OPTS_INIT;
	struct pg_apply_result res;

	add_big_file(&d, "big.txt", 32);
	add_mail(&mbox, "[PATCH] a 2 KiB text file", pg_buf_str(&d));
	opts.limits.max_file_bytes = 2047;
	assert_int_equal(apply_opts(f, &mbox, &opts, &res), 1);
	assert_refused(f, &res, 1, "big.txt",
		       "writes a 2 KiB file (limit 2.0 KiB, apply.max_file_mb)", &f->base);
	assert_null(gfx_read(f->repo_dir, "big.txt"));
	pg_apply_result_release(&res);
	opts.limits.max_file_bytes = 2048;
	assert_int_equal(apply_opts(f, &mbox, &opts, &res), 0);
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

static void test_limit_files(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_opts opts = PG_APPLY_OPTS_INIT;
	struct pg_apply_result res;

	add_file(&d, "f1");
	add_file(&d, "f2");
	add_file(&d, "f3");
	add_mail(&mbox, "[PATCH] three files", pg_buf_str(&d));
	opts.limits.max_files = 2;
	assert_int_equal(apply_opts(f, &mbox, &opts, &res), 1);
	assert_refused(f, &res, 1, NULL,
		       "creates or modifies 3 files, 3 with the patches before (limit 2, "
		       "apply.max_files)", &f->base);
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

static void test_limit_usage_carried(void **state)
{
	struct fixture *f = *state;
	struct pg_buf m1 = PG_BUF_INIT(PG_BUF_NOLIMIT), m2 = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_opts opts = PG_APPLY_OPTS_INIT;
	struct pg_apply_usage usage = { 0, 0 };
	struct pg_apply_result res;
	git_oid first, c2;

	add_big_file(&d, "one.txt", 32);
	add_mail(&m1, "[PATCH] prerequisite", pg_buf_str(&d));
	pg_buf_reset(&d);
	add_big_file(&d, "two.txt", 32);
	add_mail(&m2, "[PATCH] series", pg_buf_str(&d));
	opts.limits.max_total_bytes = 3072;
	opts.usage = &usage;
	assert_int_equal(apply_opts(f, &m1, &opts, &res), 0);
	assert_int_equal(usage.files, 1);
	assert_int_equal(usage.total_bytes, 2048);
	gfx_head(f->repo, &first);
	pg_apply_result_release(&res);
	/* The second mbox alone is within the limit; with the first it is not. */
	assert_int_equal(apply_opts(f, &m2, &opts, &res), 1);
	assert_refused(f, &res, 1, NULL,
		       "writes 2 KiB, 4 KiB with the patches before (limit 3 KiB, "
		       "apply.max_total_mb)", &first);
	assert_int_equal(usage.files, 1);
	assert_int_equal(usage.total_bytes, 2048);
	pg_apply_result_release(&res);
	opts.usage = NULL;
	assert_int_equal(apply_opts(f, &m2, &opts, &res), 0);
	gfx_head(f->repo, &c2);
	assert_false(git_oid_equal(&c2, &first));
	pg_apply_result_release(&res);
	pg_buf_release(&m1);
	pg_buf_release(&m2);
	pg_buf_release(&d);
}

/* A NUL byte in a line of the diff: libgit2 1.5 read past that line when
 * it matched the hunk (fuzz_apply under ASan).  Refused before libgit2
 * reads the diff, naming the line. */
static void test_nul_in_diff(void **state)
{
	static const char diff[] = "diff --git a/dir/a.c b/dir/a.c\n"
				   "--- a/dir/a.c\n"
				   "+++ b/dir/a.c\n"
				   "@@ -1 +1,2 @@\n"
				   " int\0a;\n"
				   "+int b;\n";
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_result res;

	add_mail(&mbox, "[PATCH] a NUL in a context line", "");
	/* add_mail() ends with the signature: put the diff before it. */
	mbox.len -= strlen("-- \n2.39.5\n\n");
	assert_int_equal(pg_buf_add(&mbox, diff, sizeof(diff) - 1), 0);
	assert_int_equal(pg_buf_adds(&mbox, "-- \n2.39.5\n\n"), 0);
	assert_int_equal(apply(f, &mbox, &res), 1);
	assert_refused(f, &res, 1, NULL, "the diff has a NUL byte (line 5 of the diff)",
		       &f->base);
	gfx_assert_file(f->repo_dir, "dir/a.c", "int a;\n");
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
}

/* Mail a diff as the body of a patch (add_mail() puts its own diff
 * before the signature: put this one there instead). */
static void add_mail_raw(struct pg_buf *mbox, const char *subject, const char *diff)
{
	add_mail(mbox, subject, "");
	mbox->len -= strlen("-- \n2.39.5\n\n");
	assert_int_equal(pg_buf_adds(mbox, diff), 0);
	assert_int_equal(pg_buf_adds(mbox, "-- \n2.39.5\n\n"), 0);
}

/* libgit2 1.5 leaks the first path of a repeated rename/copy line (see
 * parse_diff()); each is refused before libgit2 reads it. */
static void test_repeated_rename_header(void **state)
{
	static const struct {
		const char *diff, *reason;
	} cases[] = {
		{ "diff --git a/dir/a.c b/doc/a.c\n"
		  "similarity index 100%\n"
		  "rename from dir/a.c\n"
		  "rename to doc/a.c\n"
		  "similarity index 100%\n"
		  "rename from dir/a.c\n"
		  "rename to doc/b.c\n",
		  "the diff's header repeats 'rename from' (line 6 of the diff)" },
		/* libgit2 takes header lines again after "index" and "+++". */
		{ "diff --git a/dir/a.c b/doc/a.c\n"
		  "similarity index 90%\n"
		  "copy from dir/a.c\n"
		  "copy to doc/a.c\n"
		  "index 1234567..89abcde\n"
		  "--- a/dir/a.c\n"
		  "+++ b/doc/a.c\n"
		  "similarity index 90%\n"
		  "rename from dir/a.c\n"
		  "rename to doc/a.c\n"
		  "@@ -1 +1 @@\n"
		  "-int a;\n"
		  "+int b;\n",
		  "the diff's header has 'rename from' after 'copy from' (line 9 of the diff)" },
		{ "diff --git a/dir/a.c b/doc/a.c\n"
		  "similarity index 100%\n"
		  "rename old dir/a.c\n"
		  "rename new doc/a.c\n"
		  "similarity index 100%\n"
		  "rename old dir/a.c\n",
		  "the diff's header repeats 'rename old' (line 6 of the diff)" },
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT);
		struct pg_apply_result res;

		add_mail_raw(&mbox, "[PATCH] a rename, twice", cases[i].diff);
		assert_int_equal(apply(f, &mbox, &res), 1);
		assert_refused(f, &res, 1, NULL, cases[i].reason, &f->base);
		gfx_assert_file(f->repo_dir, "dir/a.c", "int a;\n");
		pg_apply_result_release(&res);
		pg_buf_release(&mbox);
	}
}

/* The lines of one rename in two files' headers are not a repeat. */
static void test_rename_two_files(void **state)
{
	static const char diff[] = "diff --git a/dir/a.c b/doc/a.c\n"
				   "similarity index 100%\n"
				   "rename from dir/a.c\n"
				   "rename to doc/a.c\n"
				   "diff --git a/README b/doc/README\n"
				   "similarity index 100%\n"
				   "rename from README\n"
				   "rename to doc/README\n";
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_result res;

	add_mail_raw(&mbox, "[PATCH] two renames", diff);
	assert_int_equal(apply(f, &mbox, &res), 0);
	assert_int_equal(res.n_applied, 1);
	gfx_assert_file(f->repo_dir, "doc/a.c", "int a;\n");
	gfx_assert_file(f->repo_dir, "doc/README", "hi\n");
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
}

static void test_opts_version(void **state)
{
	struct fixture *f = *state;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT), d = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_apply_opts opts = PG_APPLY_OPTS_INIT;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;

	add_file(&d, "f1");
	add_mail(&mbox, "[PATCH] one file", pg_buf_str(&d));
	opts.version = 99;
	assert_int_equal(pg_apply_mbox_opts(f->repo, mbox.data, mbox.len, &opts, &res, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_link_then_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_then_file_two_mboxes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_and_file_one_patch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_becomes_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_in_work_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_replaced_by_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit_binary_literal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit_binary_lies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit_binary_delta, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit_text_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit_usage_carried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul_in_diff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeated_rename_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename_two_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opts_version, setup, teardown),
	};

	pg_log_set_levels("warn");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
