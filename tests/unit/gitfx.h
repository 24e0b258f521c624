/* SPDX-License-Identifier: MIT */
/*
 * Fixture repositories made with libgit2 in a temporary directory, for
 * test_apply.c and test_workspace.c: files written, committed with a given
 * author and date, checked out detached, turned into a format-patch mail
 * (git_email_create_from_commit()).  Assertions are cmocka's: include
 * <cmocka.h> first.  No git program, no user configuration involved.
 */
#ifndef PG_GITFX_H
#define PG_GITFX_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "buf.h"

#define GFX_PATH_MAX 4096

static inline void gfx_ok(int rc, const char *what)
{
	if (rc < 0) {
		const git_error *e = git_error_last();

		fail_msg("%s: %s (%d)", what, e && e->message ? e->message : "?", rc);
	}
}

/* A new temporary directory "TMPDIR/pg-NAME.XXXXXX" into dir. */
static inline void gfx_tmpdir(char *dir, size_t len, const char *name)
{
	const char *tmp = getenv("TMPDIR");

	assert_true((size_t)snprintf(dir, len, "%s/pg-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp",
				     name) < len);
	assert_non_null(mkdtemp(dir));
}

static inline int gfx_rm_entry(const char *path, const struct stat *st, int flag,
			       struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* rm -rf dir. */
static inline void gfx_rm_rf(const char *dir)
{
	nftw(dir, gfx_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void gfx_path(char *out, const char *dir, const char *name)
{
	assert_true((size_t)snprintf(out, GFX_PATH_MAX, "%s/%s", dir, name) < GFX_PATH_MAX);
}

/* Write (replace) dir/name, making its directories. */
static inline void gfx_write(const char *dir, const char *name, const char *text)
{
	char path[GFX_PATH_MAX];
	FILE *f;

	gfx_path(path, dir, name);
	for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* The contents of dir/name (malloc'd), or NULL when it does not exist. */
static inline char *gfx_read(const char *dir, const char *name)
{
	char path[GFX_PATH_MAX];
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char chunk[4096];
	size_t n;
	FILE *f;

	gfx_path(path, dir, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(pg_buf_add(&b, chunk, n), 0);
	fclose(f);
	return pg_buf_detach(&b, NULL);
}

static inline void gfx_assert_file(const char *dir, const char *name, const char *want)
{
	char *got = gfx_read(dir, name);

	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* A new non-bare repository in dir. */
static inline git_repository *gfx_init(const char *dir)
{
	git_repository *repo = NULL;

	gfx_ok(git_repository_init(&repo, dir, 0), "init");
	return repo;
}

/*
 * Commit on top of HEAD (none for the first commit): files is a
 * NULL-terminated list of path, text pairs (text NULL: delete the path),
 * written to the working tree and staged.  The author and committer are
 * `who` <email> at time t (offset minutes).  The commit id into out.
 */
static inline void gfx_commit(git_repository *repo, const char *const *files, const char *msg,
			      const char *who, const char *email, git_time_t t, int offset,
			      git_oid *out)
{
	const char *dir = git_repository_workdir(repo);
	git_signature *sig = NULL;
	git_index *idx = NULL;
	git_tree *tree = NULL;
	git_commit *parent = NULL;
	git_oid tree_id, head;
	char path[GFX_PATH_MAX];
	int have_parent = git_reference_name_to_id(&head, repo, "HEAD") == 0;

	git_error_clear();
	gfx_ok(git_repository_index(&idx, repo), "index");
	for (size_t i = 0; files[i]; i += 2) {
		if (files[i + 1]) {
			gfx_write(dir, files[i], files[i + 1]);
			gfx_ok(git_index_add_bypath(idx, files[i]), "add");
		} else {
			gfx_path(path, dir, files[i]);
			assert_int_equal(unlink(path), 0);
			gfx_ok(git_index_remove_bypath(idx, files[i]), "remove");
		}
	}
	gfx_ok(git_index_write(idx), "write index");
	gfx_ok(git_index_write_tree(&tree_id, idx), "write tree");
	gfx_ok(git_tree_lookup(&tree, repo, &tree_id), "tree");
	gfx_ok(git_signature_new(&sig, who, email, t, offset), "signature");
	if (have_parent)
		gfx_ok(git_commit_lookup(&parent, repo, &head), "parent");
	gfx_ok(git_commit_create_v(out, repo, "HEAD", sig, sig, NULL, msg, tree, have_parent ? 1 : 0,
				   parent), "commit");
	git_commit_free(parent);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(idx);
}

/* Check out commit `id` (forced, untracked files removed), HEAD detached. */
static inline void gfx_checkout(git_repository *repo, const git_oid *id)
{
	git_checkout_options co;
	git_commit *c = NULL;

	gfx_ok(git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION), "options");
	co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
	gfx_ok(git_commit_lookup(&c, repo, id), "lookup");
	gfx_ok(git_checkout_tree(repo, (git_object *)c, &co), "checkout");
	gfx_ok(git_repository_set_head_detached(repo, id), "detach");
	git_commit_free(c);
}

/* The commit as a `git format-patch` mail (malloc'd). */
static inline char *gfx_email(git_repository *repo, const git_oid *id)
{
	git_email_create_options eo;
	git_buf buf = { NULL, 0, 0 };
	git_commit *c = NULL;
	char *s;

	/* GIT_EMAIL_CREATE_OPTIONS_INIT by hand (the macro trips
	 * -Wmissing-field-initializers): format-patch's defaults. */
	memset(&eo, 0, sizeof(eo));
	eo.version = GIT_EMAIL_CREATE_OPTIONS_VERSION;
	gfx_ok(git_diff_options_init(&eo.diff_opts, GIT_DIFF_OPTIONS_VERSION), "diff options");
	eo.diff_opts.flags = GIT_DIFF_SHOW_BINARY;
	gfx_ok(git_diff_find_options_init(&eo.diff_find_opts, GIT_DIFF_FIND_OPTIONS_VERSION),
	       "find options");
	gfx_ok(git_commit_lookup(&c, repo, id), "lookup");
	gfx_ok(git_email_create_from_commit(&buf, c, &eo), "email");
	s = strdup(buf.ptr);
	assert_non_null(s);
	git_buf_dispose(&buf);
	git_commit_free(c);
	return s;
}

/* HEAD's commit id. */
static inline void gfx_head(git_repository *repo, git_oid *out)
{
	gfx_ok(git_reference_name_to_id(out, repo, "HEAD"), "HEAD");
}

/* Number of entries git status would show (untracked files included). */
static inline size_t gfx_status_count(git_repository *repo)
{
	git_status_options so;
	git_status_list *sl = NULL;
	size_t n;

	gfx_ok(git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION), "status options");
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
	gfx_ok(git_status_list_new(&sl, repo, &so), "status");
	n = git_status_list_entrycount(sl);
	git_status_list_free(sl);
	return n;
}

#endif
