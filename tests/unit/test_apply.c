/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for patches/apply.c on small repositories made with libgit2:
 * a patch applied exactly, with an offset, with a 3-way merge; a conflict
 * naming the file and the hunk and leaving the tree clean; a patch whose
 * preimage blob is missing; author, date and message kept as git am keeps
 * them; a series with its cover letter, failing in its second patch;
 * mboxrd unescaping; modification times of untouched files; garbage.
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

#include <cmocka.h>

#include "apply.h"
#include "buf.h"
#include "err.h"
#include "gitutil.h"
#include "inbox.h"
#include "log.h"

#include "gitfx.h"

#define T0 1709280000	/* 2024-03-01T08:00:00Z */

struct fixture {
	char dir[512];
	git_repository *repo;
	git_oid a, b;		/* a: the base; b: line 10 changed on a */
	char *patch_b;		/* b as a format-patch mail */
};

/* f.c: "line 1\n" .. "line 20\n" with the changes given (NULL: none). */
static char *lines(int changed, const char *text, int insert_top)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);

	for (int i = 0; i < insert_top; i++)
		assert_int_equal(pg_buf_printf(&b, "new top %d\n", i + 1), 0);
	for (int i = 1; i <= 20; i++) {
		if (i == changed)
			assert_int_equal(pg_buf_printf(&b, "%s\n", text), 0);
		else
			assert_int_equal(pg_buf_printf(&b, "line %d\n", i), 0);
	}
	return pg_buf_detach(&b, NULL);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct pg_err err = PG_ERR_INIT;
	char *base = lines(0, NULL, 0), *changed = lines(10, "line 10 patched", 0);

	if (!f || pg_git_global_init(&err) < 0)
		return -1;
	gfx_tmpdir(f->dir, sizeof(f->dir), "test-apply");
	f->repo = gfx_init(f->dir);
	{
		const char *files[] = { "f.c", base, "g.c", "other\n", NULL };

		gfx_commit(f->repo, files, "base\n", "Base", "base@example.org", T0, 0, &f->a);
	}
	{
		const char *files[] = { "f.c", changed, NULL };

		gfx_commit(f->repo, files, "f: patch line 10\n\nBecause it was wrong.\n",
			   "Ada Lovelace", "ada@example.org", T0 + 3600, 90, &f->b);
	}
	f->patch_b = gfx_email(f->repo, &f->b);
	free(base);
	free(changed);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->patch_b);
	git_repository_free(f->repo);
	gfx_rm_rf(f->dir);
	free(f);
	return 0;
}

/* Put HEAD at a new commit on a with f.c replaced by text. */
static void target(struct fixture *f, const char *text, git_oid *out)
{
	const char *files[] = { "f.c", text, NULL };

	gfx_checkout(f->repo, &f->a);
	gfx_commit(f->repo, files, "upstream moved on\n", "Up Stream", "up@example.org", T0 + 60, 0,
		   out);
}

static int apply(struct fixture *f, const char *mbox, struct pg_apply_result *res,
		 struct pg_err *err)
{
	memset(res, 0, sizeof(*res));
	return pg_apply_mbox(f->repo, mbox, strlen(mbox), PG_MBOX_MBOXO, res, err);
}

static void assert_head_parent(struct fixture *f, const git_oid *parent)
{
	git_commit *c = NULL;
	git_oid head;

	gfx_head(f->repo, &head);
	gfx_ok(git_commit_lookup(&c, f->repo, &head), "head");
	assert_int_equal(git_commit_parentcount(c), 1);
	assert_true(git_oid_equal(git_commit_parent_id(c, 0), parent));
	git_commit_free(c);
}

static void test_exact(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	git_commit *got = NULL, *want = NULL;
	const git_signature *a;
	git_oid head;
	char *expect = lines(10, "line 10 patched", 0);

	gfx_checkout(f->repo, &f->a);
	assert_int_equal(apply(f, f->patch_b, &res, &err), 0);
	assert_int_equal(res.n_patches, 1);
	assert_int_equal(res.n_applied, 1);
	assert_int_equal(res.failed_patch, 0);
	assert_int_equal(res.patches[0].method, PG_APPLY_EXACT);
	assert_string_equal(res.patches[0].subject, "f: patch line 10");
	gfx_head(f->repo, &head);
	assert_string_equal(res.patches[0].commit, git_oid_tostr_s(&head));
	assert_head_parent(f, &f->a);
	gfx_assert_file(f->dir, "f.c", expect);
	assert_int_equal(gfx_status_count(f->repo), 0);

	/* The same tree, author, date and message as the original commit;
	 * perfgate is the committer. */
	gfx_ok(git_commit_lookup(&got, f->repo, &head), "got");
	gfx_ok(git_commit_lookup(&want, f->repo, &f->b), "want");
	assert_true(git_oid_equal(git_commit_tree_id(got), git_commit_tree_id(want)));
	a = git_commit_author(got);
	assert_string_equal(a->name, "Ada Lovelace");
	assert_string_equal(a->email, "ada@example.org");
	assert_int_equal(a->when.time, T0 + 3600);
	assert_int_equal(a->when.offset, 90);
	assert_string_equal(git_commit_message(got), git_commit_message(want));
	assert_string_equal(git_commit_committer(got)->name, PG_APPLY_COMMITTER_NAME);
	assert_string_equal(git_commit_committer(got)->email, PG_APPLY_COMMITTER_EMAIL);
	git_commit_free(got);
	git_commit_free(want);
	pg_apply_result_release(&res);
	free(expect);
}

static void test_offset(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	char *moved = lines(0, NULL, 3), *expect = lines(10, "line 10 patched", 3);
	git_oid c;

	target(f, moved, &c);
	assert_int_equal(apply(f, f->patch_b, &res, &err), 0);
	assert_int_equal(res.patches[0].method, PG_APPLY_OFFSET);
	assert_int_equal(res.patches[0].offset, 3);
	assert_head_parent(f, &c);
	gfx_assert_file(f->dir, "f.c", expect);
	assert_int_equal(gfx_status_count(f->repo), 0);
	pg_apply_result_release(&res);
	free(moved);
	free(expect);
}

/* Replace the preimage id of the mail's index line with one nobody has. */
static char *without_blob(const char *mail)
{
	char *s = strdup(mail), *p = strstr(s, "\nindex ");

	assert_non_null(p);
	memcpy(p + 7, "1234567", 7);
	return s;
}

static void test_offset_without_blob(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	char *moved = lines(0, NULL, 3), *expect = lines(10, "line 10 patched", 3);
	char *mail = without_blob(f->patch_b);
	git_oid c;

	/* A patch made on a tree we do not have still applies when only
	 * lines moved. */
	target(f, moved, &c);
	assert_int_equal(apply(f, mail, &res, &err), 0);
	assert_int_equal(res.patches[0].method, PG_APPLY_OFFSET);
	gfx_assert_file(f->dir, "f.c", expect);
	pg_apply_result_release(&res);
	free(mail);
	free(moved);
	free(expect);
}

static void test_3way(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	/* Line 8 is in the hunk's context (7..13); line 9 between the two
	 * changes keeps the merge clean. */
	char *moved = lines(8, "line 8 upstream", 0);
	char *expect = strdup(moved), *p;
	git_oid c;

	p = strstr(expect, "line 10\n");
	assert_non_null(p);
	{
		struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);

		assert_int_equal(pg_buf_add(&b, expect, (size_t)(p - expect)), 0);
		assert_int_equal(pg_buf_adds(&b, "line 10 patched\n"), 0);
		assert_int_equal(pg_buf_adds(&b, p + strlen("line 10\n")), 0);
		free(expect);
		expect = pg_buf_detach(&b, NULL);
	}
	target(f, moved, &c);
	assert_int_equal(apply(f, f->patch_b, &res, &err), 0);
	assert_int_equal(res.patches[0].method, PG_APPLY_3WAY);
	assert_head_parent(f, &c);
	gfx_assert_file(f->dir, "f.c", expect);
	assert_int_equal(gfx_status_count(f->repo), 0);
	pg_apply_result_release(&res);
	free(moved);
	free(expect);
}

static void test_conflict(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf d = PG_BUF_INIT(4096);
	char *moved = lines(10, "line 10 upstream", 0);
	git_oid c, head;

	target(f, moved, &c);
	assert_int_equal(apply(f, f->patch_b, &res, &err), 1);
	assert_int_equal(res.n_patches, 1);
	assert_int_equal(res.n_applied, 0);
	assert_int_equal(res.failed_patch, 1);
	assert_int_equal(res.patches[0].method, PG_APPLY_FAILED);
	assert_string_equal(res.failed_subject, "f: patch line 10");
	assert_string_equal(res.failed_file, "f.c");
	assert_int_equal(res.failed_hunk_index, 1);
	assert_string_equal(res.failed_hunk, "@@ -7,7 +7,7 @@ line 6");
	assert_non_null(strstr(res.reason, "3-way merge conflict"));
	assert_int_equal(pg_apply_describe(&res, &d), 0);
	assert_string_equal(pg_buf_str(&d),
			    "patch 1/1 \"f: patch line 10\": f.c hunk #1 (@@ -7,7 +7,7 @@ line 6): "
			    "its context matches at no line; 3-way merge conflict");
	/* Nothing of the patch is left. */
	gfx_head(f->repo, &head);
	assert_true(git_oid_equal(&head, &c));
	gfx_assert_file(f->dir, "f.c", moved);
	assert_int_equal(gfx_status_count(f->repo), 0);
	pg_apply_result_release(&res);
	pg_buf_release(&d);
	free(moved);
}

static void test_conflict_without_blob(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	char *moved = lines(10, "line 10 upstream", 0), *mail = without_blob(f->patch_b);
	git_oid c;

	target(f, moved, &c);
	assert_int_equal(apply(f, mail, &res, &err), 1);
	assert_string_equal(res.failed_file, "f.c");
	assert_int_equal(res.failed_hunk_index, 1);
	assert_non_null(strstr(res.reason, "preimage blob 1234567 is not in the repository"));
	assert_int_equal(gfx_status_count(f->repo), 0);
	pg_apply_result_release(&res);
	free(mail);
	free(moved);
}

/* A hand-written mail: what git am takes from the headers and the body. */
static const char *MAIL_HEAD =
	"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
	"From: Patch Sender <sender@example.org>\n"
	"Date: Tue, 5 Mar 2024 09:00:00 +0530\n"
	"Subject: [PATCH v3 2/7] f: rework\n"
	" line ten\n"
	"MIME-Version: 1.0\n"
	"Content-Type: text/plain; charset=UTF-8\n"
	"Content-Transfer-Encoding: 8bit\n"
	"\n"
	"From: =?UTF-8?q?Zo=C3=AB_M=C3=BCller?= <zoe@example.de>\n"
	"\n"
	"First paragraph, with trailing spaces.   \n"
	"\n"
	"\n"
	"\n"
	"Second paragraph.\n"
	"\n"
	"Signed-off-by: Zoë Müller <zoe@example.de>\n"
	"---\n"
	"v3: notes that must not end in the commit\n"
	"\n"
	" f.c | 2 +-\n"
	" 1 file changed, 1 insertion(+), 1 deletion(-)\n"
	"\n";

static void test_author_date_message(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf mail = PG_BUF_INIT(PG_BUF_NOLIMIT);
	const char *diff = strstr(f->patch_b, "diff --git");
	const git_signature *a;
	git_commit *got = NULL;
	git_oid head;

	assert_non_null(diff);
	assert_int_equal(pg_buf_adds(&mail, MAIL_HEAD), 0);
	assert_int_equal(pg_buf_adds(&mail, diff), 0);
	gfx_checkout(f->repo, &f->a);
	assert_int_equal(apply(f, pg_buf_str(&mail), &res, &err), 0);
	assert_string_equal(res.patches[0].subject, "f: rework line ten");
	gfx_head(f->repo, &head);
	gfx_ok(git_commit_lookup(&got, f->repo, &head), "got");
	a = git_commit_author(got);
	/* The in-body From: is the author; the date keeps its zone. */
	assert_string_equal(a->name, "Zoë Müller");
	assert_string_equal(a->email, "zoe@example.de");
	assert_int_equal(a->when.time, 1709609400);	/* 2024-03-05T03:30:00Z */
	assert_int_equal(a->when.offset, 330);
	assert_string_equal(git_commit_message(got),
			    "f: rework line ten\n"
			    "\n"
			    "First paragraph, with trailing spaces.\n"
			    "\n"
			    "Second paragraph.\n"
			    "\n"
			    "Signed-off-by: Zoë Müller <zoe@example.de>\n");
	git_commit_free(got);
	pg_apply_result_release(&res);
	pg_buf_release(&mail);
}

/* b2: line 15 changed on b. */
static char *make_b2(struct fixture *f, git_oid *b2)
{
	char *text = lines(10, "line 10 patched", 0), *p = strstr(text, "line 15\n");
	const char *files[] = { "f.c", text, NULL };

	assert_non_null(p);
	memcpy(p, "LINE", 4);
	gfx_checkout(f->repo, &f->b);
	gfx_commit(f->repo, files, "f: shout line 15\n", "Ada Lovelace", "ada@example.org",
		   T0 + 7200, 0, b2);
	free(text);
	return gfx_email(f->repo, b2);
}

static const char *COVER =
	"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
	"From: Ada Lovelace <ada@example.org>\n"
	"Date: Fri, 1 Mar 2024 08:00:00 +0000\n"
	"Message-Id: <cover@example.org>\n"
	"Subject: [PATCH 0/2] f: two fixes\n"
	"\n"
	"The cover letter.\n"
	"\n"
	"Ada Lovelace (2):\n"
	"  f: patch line 10\n"
	"  f: shout line 15\n"
	"\n"
	"-- \n"
	"2.39.5\n"
	"\n";

static void test_series_with_cover(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT);
	git_oid b2, head, first;
	char *p2 = make_b2(f, &b2), *expect = gfx_read(f->dir, "f.c");

	assert_int_equal(pg_buf_adds(&mbox, COVER), 0);
	assert_int_equal(pg_buf_adds(&mbox, f->patch_b), 0);
	assert_int_equal(pg_buf_adds(&mbox, p2), 0);
	gfx_checkout(f->repo, &f->a);
	assert_int_equal(apply(f, pg_buf_str(&mbox), &res, &err), 0);
	assert_int_equal(res.n_skipped, 1);
	assert_int_equal(res.n_patches, 2);
	assert_int_equal(res.n_applied, 2);
	assert_string_equal(res.patches[0].subject, "f: patch line 10");
	assert_string_equal(res.patches[1].subject, "f: shout line 15");
	/* One commit per patch, in order, on the base. */
	gfx_head(f->repo, &head);
	assert_string_equal(res.patches[1].commit, git_oid_tostr_s(&head));
	gfx_ok(git_oid_fromstr(&first, res.patches[0].commit), "oid");
	assert_head_parent(f, &first);
	gfx_checkout(f->repo, &first);
	assert_head_parent(f, &f->a);
	gfx_checkout(f->repo, &head);
	gfx_assert_file(f->dir, "f.c", expect);
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	free(p2);
	free(expect);
}

static void test_series_second_fails(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char *text = lines(15, "line 15 upstream", 0);
	git_oid b2, c, head;
	char *p2 = make_b2(f, &b2), *after_first;

	assert_int_equal(pg_buf_adds(&mbox, f->patch_b), 0);
	assert_int_equal(pg_buf_adds(&mbox, p2), 0);
	target(f, text, &c);
	assert_int_equal(apply(f, pg_buf_str(&mbox), &res, &err), 1);
	assert_int_equal(res.n_patches, 2);
	assert_int_equal(res.n_applied, 1);
	assert_int_equal(res.failed_patch, 2);
	assert_int_equal(res.patches[0].method, PG_APPLY_EXACT);
	assert_int_equal(res.patches[1].method, PG_APPLY_FAILED);
	assert_string_equal(res.patches[1].commit, "");
	assert_string_equal(res.failed_subject, "f: shout line 15");
	assert_string_equal(res.failed_file, "f.c");
	/* HEAD at the first patch's commit, clean there. */
	gfx_head(f->repo, &head);
	assert_string_equal(res.patches[0].commit, git_oid_tostr_s(&head));
	assert_head_parent(f, &c);
	assert_int_equal(gfx_status_count(f->repo), 0);
	after_first = gfx_read(f->dir, "f.c");
	assert_non_null(strstr(after_first, "line 10 patched\n"));
	assert_non_null(strstr(after_first, "line 15 upstream\n"));
	free(after_first);
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	free(p2);
	free(text);
}

static void test_mboxrd(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf mail = PG_BUF_INIT(PG_BUF_NOLIMIT);
	const char *diff = strstr(f->patch_b, "diff --git");
	git_commit *got = NULL;
	git_oid head;

	assert_int_equal(pg_buf_adds(&mail,
				     "From mboxrd@z Thu Jan  1 00:00:00 1970\n"
				     "From: Ada Lovelace <ada@example.org>\n"
				     "Date: Fri, 1 Mar 2024 08:00:00 +0000\n"
				     "Subject: [PATCH] f: quote\n"
				     "\n"
				     ">>From the start, a quoted From line.\n"
				     "---\n"), 0);
	assert_int_equal(pg_buf_adds(&mail, diff), 0);
	gfx_checkout(f->repo, &f->a);
	memset(&res, 0, sizeof(res));
	assert_int_equal(pg_apply_mbox(f->repo, mail.data, mail.len, PG_MBOX_MBOXRD, &res, &err), 0);
	gfx_head(f->repo, &head);
	gfx_ok(git_commit_lookup(&got, f->repo, &head), "got");
	assert_string_equal(git_commit_message(got),
			    "f: quote\n\n>From the start, a quoted From line.\n");
	git_commit_free(got);
	pg_apply_result_release(&res);
	pg_buf_release(&mail);
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

static void test_untouched_mtimes(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	char *moved = lines(8, "line 8 upstream", 0), *shifted = lines(0, NULL, 2);
	git_oid c;

	/* Each method writes the patched file and nothing else. */
	for (int round = 0; round < 3; round++) {
		if (round == 0)
			gfx_checkout(f->repo, &f->a);
		else
			target(f, round == 1 ? shifted : moved, &c);
		set_mtime(f->dir, "g.c", 1000000000);
		set_mtime(f->dir, "f.c", 1000000000);
		assert_int_equal(apply(f, f->patch_b, &res, &err), 0);
		assert_int_equal(res.patches[0].method,
				 round == 0 ? PG_APPLY_EXACT : round == 1 ? PG_APPLY_OFFSET : PG_APPLY_3WAY);
		assert_int_equal(mtime(f->dir, "g.c"), 1000000000);
		assert_true(mtime(f->dir, "f.c") != 1000000000);
		pg_apply_result_release(&res);
	}
	free(moved);
	free(shifted);
}

static void test_no_patch(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	git_oid before, after;

	gfx_checkout(f->repo, &f->a);
	gfx_head(f->repo, &before);
	assert_int_equal(apply(f, "", &res, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_string_equal(err.msg, "mbox holds no patch (0 mails, none with a diff)");
	pg_apply_result_release(&res);

	assert_int_equal(apply(f, COVER, &res, &err), -1);
	assert_string_equal(err.msg, "mbox holds no patch (1 mail, none with a diff)");
	pg_apply_result_release(&res);

	/* Garbage: not a mail at all. */
	assert_int_equal(apply(f, "\x01\x02 garbage without headers\n\n\n", &res, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "mail 1 of the mbox"));
	pg_apply_result_release(&res);

	gfx_head(f->repo, &after);
	assert_true(git_oid_equal(&before, &after));
}

static void test_broken_diff(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf mail = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char *p;

	/* A hunk header that does not parse. */
	assert_int_equal(pg_buf_adds(&mail, f->patch_b), 0);
	p = strstr(mail.data, "@@ -7,7 +7,7 @@");
	assert_non_null(p);
	memcpy(p, "@@ -x,y", 7);
	gfx_checkout(f->repo, &f->a);
	assert_int_equal(apply(f, mail.data, &res, &err), 1);
	assert_int_equal(res.failed_patch, 1);
	assert_null(res.failed_file);
	assert_non_null(strstr(res.reason, "the diff does not parse"));
	assert_int_equal(gfx_status_count(f->repo), 0);
	pg_apply_result_release(&res);
	pg_buf_release(&mail);
}

/* A last line without a newline, changed by a patch that needs an offset:
 * the "\\ No newline at end of file" markers must be honoured on both
 * sides, and the hunk (no trailing context) must match at the end. */
static void test_offset_no_newline_at_eof(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	const char *base = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj";
	git_oid b, c, d;
	char *mail, *mail2;

	gfx_checkout(f->repo, &f->a);
	{
		const char *files[] = { "h.txt", base, NULL };

		gfx_commit(f->repo, files, "h\n", "Ada", "ada@example.org", T0, 0, &b);
	}
	{
		const char *files[] = { "h.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nJ", NULL };

		gfx_commit(f->repo, files, "h: capital J\n", "Ada", "ada@example.org", T0, 0, &c);
	}
	mail = gfx_email(f->repo, &c);
	assert_non_null(strstr(mail, "\\ No newline at end of file"));
	gfx_checkout(f->repo, &b);
	{
		const char *files[] = { "h.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n", NULL };

		gfx_commit(f->repo, files, "h: end with a newline\n", "Ada", "ada@example.org", T0, 0,
			   &d);
	}
	mail2 = gfx_email(f->repo, &d);
	{
		const char *files[] = { "h.txt", "top 1\ntop 2\na\nb\nc\nd\ne\nf\ng\nh\ni\nj", NULL };

		gfx_checkout(f->repo, &b);
		gfx_commit(f->repo, files, "h: two lines on top\n", "Up", "up@example.org", T0, 0, &c);
	}
	assert_int_equal(apply(f, mail, &res, &err), 0);
	assert_int_equal(res.patches[0].method, PG_APPLY_OFFSET);
	assert_int_equal(res.patches[0].offset, 2);
	gfx_assert_file(f->dir, "h.txt", "top 1\ntop 2\na\nb\nc\nd\ne\nf\ng\nh\ni\nJ");
	pg_apply_result_release(&res);

	gfx_checkout(f->repo, &c);
	assert_int_equal(apply(f, mail2, &res, &err), 0);
	assert_int_equal(res.patches[0].method, PG_APPLY_OFFSET);
	gfx_assert_file(f->dir, "h.txt", "top 1\ntop 2\na\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n");
	pg_apply_result_release(&res);
	free(mail);
	free(mail2);
}

/* A fix already in the tree (backported since): like git am -3's "No
 * changes -- Patch already applied.", no commit, and the series goes on. */
static void test_already_applied(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf d = PG_BUF_INIT(4096), mbox = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char *text = lines(10, "line 10 patched", 0), *p2, *moved;
	git_oid c, head, b2;

	/* Upstream has the fix and more: exact and offset fail on line 10. */
	moved = strdup(text);
	assert_non_null(moved);
	memcpy(strstr(moved, "line 2\n"), "LINE 2\n", 6);
	target(f, moved, &c);
	assert_int_equal(apply(f, f->patch_b, &res, &err), 0);
	assert_int_equal(res.patches[0].method, PG_APPLY_ALREADY);
	assert_string_equal(pg_apply_method_name(res.patches[0].method), "already");
	assert_string_equal(res.patches[0].commit, "");
	assert_int_equal(res.n_applied, 0);
	assert_int_equal(res.n_already, 1);
	assert_int_equal(res.failed_patch, 0);
	gfx_head(f->repo, &head);
	assert_true(git_oid_equal(&head, &c));
	gfx_assert_file(f->dir, "f.c", moved);
	assert_int_equal(gfx_status_count(f->repo), 0);
	assert_int_equal(pg_apply_describe(&res, &d), 0);
	assert_string_equal(pg_buf_str(&d), "no change: the patch is already applied");
	pg_apply_result_release(&res);

	/* In a series: the next patch applies on HEAD, which did not move. */
	p2 = make_b2(f, &b2);
	gfx_checkout(f->repo, &c);
	assert_int_equal(pg_buf_adds(&mbox, f->patch_b), 0);
	assert_int_equal(pg_buf_adds(&mbox, p2), 0);
	assert_int_equal(apply(f, pg_buf_str(&mbox), &res, &err), 0);
	assert_int_equal(res.patches[0].method, PG_APPLY_ALREADY);
	assert_true(res.patches[1].method == PG_APPLY_EXACT ||
		    res.patches[1].method == PG_APPLY_OFFSET ||
		    res.patches[1].method == PG_APPLY_3WAY);
	assert_int_equal(res.n_applied, 1);
	assert_int_equal(res.n_already, 1);
	assert_head_parent(f, &c);
	pg_buf_reset(&d);
	assert_int_equal(pg_apply_describe(&res, &d), 0);
	assert_non_null(strstr(pg_buf_str(&d), "applied 2/2 patches ("));
	assert_non_null(strstr(pg_buf_str(&d), ", already applied 1)"));
	pg_apply_result_release(&res);
	pg_buf_release(&mbox);
	pg_buf_release(&d);
	free(p2);
	free(moved);
	free(text);
}

/* HEAD without f.c: upstream moved it within its directory (a rename the
 * merge finds, with a conflict on the changed line), or dropped it (no
 * likely place). */
static void test_conflict_names(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	char *moved = lines(10, "line 10 upstream", 0);
	git_oid c;

	gfx_checkout(f->repo, &f->a);
	{
		const char *files[] = { "f.c", NULL, "h.c", moved, NULL };

		gfx_commit(f->repo, files, "rename f.c to h.c\n", "Up Stream", "up@example.org",
			   T0 + 60, 0, &c);
	}
	assert_int_equal(apply(f, f->patch_b, &res, &err), 1);
	assert_string_equal(res.failed_file, "f.c");
	assert_non_null(strstr(res.reason, "3-way merge conflict"));
	assert_non_null(strstr(res.reason, "h.c"));
	assert_null(strstr(res.reason, "deletes"));
	assert_int_equal(gfx_status_count(f->repo), 0);
	pg_apply_result_release(&res);

	/* The file is nowhere near: it is not in HEAD, and nothing else is
	 * named (a similar file in another directory is not a likely place). */
	gfx_checkout(f->repo, &f->a);
	{
		const char *files[] = { "f.c", NULL, "sub/other.c", moved, NULL };

		gfx_commit(f->repo, files, "drop f.c\n", "Up Stream", "up@example.org", T0 + 60, 0,
			   &c);
	}
	assert_int_equal(apply(f, f->patch_b, &res, &err), 1);
	assert_string_equal(res.failed_file, "f.c");
	assert_non_null(strstr(res.reason, "3-way merge conflict (the file the patch changes is not "
			       "in HEAD)"));
	assert_null(strstr(res.reason, "other.c"));
	assert_int_equal(gfx_status_count(f->repo), 0);
	pg_apply_result_release(&res);
	free(moved);
}

/* Two conflicts: the real one in f.c, and g.c that HEAD renamed to a.c
 * (before f.c in path order) with its own change.  The file named is the
 * patch's first (f.c, a content conflict), the others follow. */
static void test_conflict_order(void **state)
{
	struct fixture *f = *state;
	struct pg_apply_result res;
	struct pg_err err = PG_ERR_INIT;
	char *g = lines(0, NULL, 3), *g_patched = lines(10, "g line 10 patched", 3);
	char *g_up = lines(12, "g line 12 upstream", 3), *f_patched = lines(10, "line 10 patched", 0);
	char *f_up = lines(10, "line 10 upstream", 0), *mail;
	git_oid x, p, c;

	for (char *t = g_up; (t = strstr(t, "line 10\n")); t++)
		memcpy(t, "LINE 10\n", 8);
	gfx_checkout(f->repo, &f->a);
	{
		const char *files[] = { "g.c", g, NULL };

		gfx_commit(f->repo, files, "add g.c\n", "Base", "base@example.org", T0 + 10, 0, &x);
	}
	{
		const char *files[] = { "f.c", f_patched, "g.c", g_patched, NULL };

		gfx_commit(f->repo, files, "f, g: patch line 10\n", "Ada Lovelace",
			   "ada@example.org", T0 + 20, 0, &p);
	}
	mail = gfx_email(f->repo, &p);
	gfx_checkout(f->repo, &x);
	{
		const char *files[] = { "f.c", f_up, "g.c", NULL, "a.c", g_up, NULL };

		gfx_commit(f->repo, files, "upstream: rename g.c to a.c\n", "Up Stream",
			   "up@example.org", T0 + 30, 0, &c);
	}
	assert_int_equal(apply(f, mail, &res, &err), 1);
	assert_string_equal(res.failed_file, "f.c");
	assert_non_null(strstr(res.reason, "3-way merge conflict"));
	assert_non_null(strstr(res.reason, "also in "));
	assert_non_null(strstr(res.reason, "a.c"));
	assert_int_equal(gfx_status_count(f->repo), 0);
	pg_apply_result_release(&res);
	free(mail);
	free(g);
	free(g_patched);
	free(g_up);
	free(f_patched);
	free(f_up);
}

static void test_method_names(void **state)
{
	(void)state;
	assert_string_equal(pg_apply_method_name(PG_APPLY_EXACT), "exact");
	assert_string_equal(pg_apply_method_name(PG_APPLY_OFFSET), "offset");
	assert_string_equal(pg_apply_method_name(PG_APPLY_3WAY), "3way");
	assert_string_equal(pg_apply_method_name(PG_APPLY_FAILED), "failed");
	assert_string_equal(pg_apply_method_name(PG_APPLY_NOT_TRIED), "not-tried");
	assert_string_equal(pg_apply_method_name(PG_APPLY_ALREADY), "already");
	pg_apply_result_release(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offset_without_blob, setup, teardown),
		cmocka_unit_test_setup_teardown(test_3way, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_without_blob, setup, teardown),
		cmocka_unit_test_setup_teardown(test_author_date_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_series_with_cover, setup, teardown),
		cmocka_unit_test_setup_teardown(test_series_second_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mboxrd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untouched_mtimes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_patch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_broken_diff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offset_no_newline_at_eof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_already_applied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_order, setup, teardown),
		cmocka_unit_test(test_method_names),
	};

	pg_log_set_levels("warn");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
