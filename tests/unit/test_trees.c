/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/trees.c on real git repositories made in a
 * temporary directory: the first sync (a clone into a bare mirror) from a
 * path and from a file:// URL, later syncs that move, add and prune
 * branches, a moved URL, a missing source, branch tips, commit existence
 * (full ids only, commits only) and the VERSION file at a commit.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
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

#include "err.h"
#include "log.h"
#include "profile.h"
#include "trees.h"

#include "../planner/testgit.h"

struct fixture {
	char dir[512];
	char src[1024];			/* the upstream repository */
	char root[1024];		/* the mirror root */
	char mirror[PATH_MAX];		/* root/dpdk.git */
	char c1[41], c2[41], s1[41];	/* main: c1 <- c2; 22.11: c1 <- s1 */
	char *branches[2];
	struct profile_tree tree;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/pg-test-trees.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	tg_set_home(f->dir);
	snprintf(f->src, sizeof(f->src), "%s/src", f->dir);
	snprintf(f->root, sizeof(f->root), "%s/mirrors", f->dir);
	snprintf(f->mirror, sizeof(f->mirror), "%s/dpdk.git", f->root);
	tg_init(f->src, "main");
	tg_commit(f->src, "VERSION", "22.11.0\n", "version: 22.11.0", f->c1);
	tg_git(f->src, "branch", "22.11");
	tg_commit(f->src, "VERSION", "23.11.0-rc0\n", "version: 23.11-rc0", f->c2);
	tg_git(f->src, "checkout", "-q", "22.11");
	tg_commit(f->src, "VERSION", "  22.11.1 \r\nmore\n", "version: 22.11.1", f->s1);
	tg_git(f->src, "checkout", "-q", "main");

	f->branches[0] = "main";
	f->branches[1] = "22.11";
	f->tree.name = "dpdk";
	f->tree.url = f->src;
	f->tree.default_branch = "main";
	f->tree.branches = f->branches;
	f->tree.n_branches = 2;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tg_rm_rf(f->dir);
	free(f);
	return 0;
}

static void sync_ok(struct fixture *f)
{
	struct pg_err err = PG_ERR_INIT;

	if (trees_sync(f->root, &f->tree, 0, &err) < 0)
		fail_msg("trees_sync: %s", err.msg);
}

static void assert_tip(struct fixture *f, const char *branch, const char *want)
{
	struct pg_err err = PG_ERR_INIT;
	char tip[TREES_OID_HEX + 1];

	if (trees_resolve_branch(f->mirror, branch, tip, &err) < 0)
		fail_msg("resolve %s: %s", branch, err.msg);
	assert_string_equal(tip, want);
}

static void test_mirror_path(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	char out[32], big[64];

	(void)state;
	assert_int_equal(trees_mirror_path("/var/lib/m", "dpdk", out, sizeof(out), &err), 0);
	assert_string_equal(out, "/var/lib/m/dpdk.git");
	assert_int_equal(trees_mirror_path("/var/lib/mirrors/very/long/root", "dpdk-next-net",
					   big, 20, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
}

static void test_sync_clones_and_resolves(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char tip[TREES_OID_HEX + 1];
	struct stat st;

	sync_ok(f);
	/* Bare: no working tree, the objects right there. */
	{
		char objects[PATH_MAX + 16];

		snprintf(objects, sizeof(objects), "%s/objects", f->mirror);
		assert_int_equal(stat(objects, &st), 0);
		snprintf(objects, sizeof(objects), "%s/.git", f->mirror);
		assert_int_equal(stat(objects, &st), -1);
	}
	assert_tip(f, "main", f->c2);
	assert_tip(f, "22.11", f->s1);

	assert_int_equal(trees_resolve_branch(f->mirror, "nope", tip, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no branch 'nope'"));
	assert_string_equal(tip, "");
	assert_int_equal(trees_resolve_branch(f->mirror, "bad..name", tip, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(trees_resolve_branch(f->mirror, "-x", tip, &err), -1);
	assert_int_equal(trees_resolve_branch("/nonexistent/mirror.git", "main", tip, &err), -1);
	assert_int_equal(err.code, PG_EIO);

	/* The mirror's HEAD follows the default branch. */
	{
		char head[64];

		tg_git_out(f->mirror, head, sizeof(head), "symbolic-ref", "HEAD",
			   (const char *)NULL);
		assert_string_equal(head, "refs/heads/main");
	}
}

static void test_sync_updates_and_prunes(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char c3[41], tip[TREES_OID_HEX + 1];
	bool has;

	sync_ok(f);
	/* Second sync with nothing new: fine, nothing moves. */
	sync_ok(f);
	assert_tip(f, "main", f->c2);

	tg_commit(f->src, "lib/eal.c", "int eal;\n", "eal: add", c3);
	tg_git(f->src, "branch", "feature");
	tg_git(f->src, "branch", "-D", "22.11");
	/* History rewritten upstream: main forced back to c1. */
	tg_git(f->src, "reset", "-q", "--hard", f->c1);
	sync_ok(f);
	assert_tip(f, "main", f->c1);
	assert_tip(f, "feature", c3);
	assert_int_equal(trees_resolve_branch(f->mirror, "22.11", tip, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	/* Objects outlive their branch: a base-commit can still be found. */
	assert_int_equal(trees_has_commit(f->mirror, f->s1, &has, &err), 0);
	assert_true(has);
}

static void test_sync_file_url_and_moved_url(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char url[PATH_MAX + 16], other[1024], o1[41], tip[TREES_OID_HEX + 1];

	snprintf(url, sizeof(url), "file://%s", f->src);
	f->tree.url = url;
	sync_ok(f);
	assert_tip(f, "main", f->c2);

	/* The profile now names another repository: same mirror, its
	 * branches now. */
	snprintf(other, sizeof(other), "%s/other", f->dir);
	tg_init(other, "main");
	tg_commit(other, "VERSION", "24.11.0\n", "other", o1);
	f->tree.url = other;
	sync_ok(f);
	assert_tip(f, "main", o1);
	assert_int_equal(trees_resolve_branch(f->mirror, "22.11", tip, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	f->tree.url = f->src;
}

static void test_sync_missing_source(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char missing[1024];

	snprintf(missing, sizeof(missing), "%s/nowhere", f->dir);
	f->tree.url = missing;
	assert_int_equal(trees_sync(f->root, &f->tree, 0, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_non_null(strstr(err.msg, "sync tree 'dpdk'"));
	assert_non_null(strstr(err.msg, missing));

	/* Once it is there, the next sync works in the mirror made above. */
	f->tree.url = f->src;
	sync_ok(f);
	assert_tip(f, "main", f->c2);
}

static void test_sync_repairs_cut_short_mirror(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;

	assert_int_equal(mkdir(f->root, 0755), 0);
	assert_int_equal(mkdir(f->mirror, 0755), 0);
	if (trees_sync(f->root, &f->tree, 0, &err) < 0)
		fail_msg("trees_sync: %s", err.msg);
	assert_tip(f, "22.11", f->s1);
}

/* Write text over path (a file of the mirror), as a failing disk leaves it. */
static void clobber(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *fp;

	assert_true((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) < sizeof(path));
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

/* Cut every pack of the mirror to half its size. */
static void truncate_packs(const char *mirror)
{
	char dir[PATH_MAX + 32], path[PATH_MAX + 300];
	unsigned int n = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	assert_true((size_t)snprintf(dir, sizeof(dir), "%s/objects/pack", mirror) < sizeof(dir));
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len < 5 || strcmp(de->d_name + len - 5, ".pack") != 0)
			continue;
		assert_true((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
			    sizeof(path));
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(truncate(path, st.st_size / 2), 0);
		n++;
	}
	closedir(d);
	assert_true(n > 0);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* After the damage done to the mirror, the next sync moves it aside,
 * fetches it again and sees what upstream has now. */
static void sync_repairs(struct fixture *f, const char *c3)
{
	struct pg_err err = PG_ERR_INIT;
	char aside[PATH_MAX + 16], v[TREES_VERSION_MAX];

	assert_true((size_t)snprintf(aside, sizeof(aside), "%s.damaged", f->mirror) <
		    sizeof(aside));
	if (trees_sync(f->root, &f->tree, 0, &err) < 0)
		fail_msg("trees_sync after damage: %s", err.msg);
	assert_tip(f, "main", c3);
	assert_tip(f, "22.11", f->s1);
	assert_int_equal(trees_version(f->mirror, f->s1, v, &err), 0);
	assert_string_equal(v, "22.11.1");
	/* The damaged copy is kept, one of it: the root holds the mirror
	 * and that copy, nothing else. */
	assert_true(exists(aside));
	{
		unsigned int n = 0;
		struct dirent *de;
		DIR *d = opendir(f->root);

		assert_non_null(d);
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				n++;
		closedir(d);
		assert_int_equal(n, 2);
	}
}

static void test_sync_repairs_corrupt_loose_ref(void **state)
{
	struct fixture *f = *state;
	char c3[41];

	sync_ok(f);
	clobber(f->mirror, "refs/heads/main", "\x01\x02garbage\n");
	tg_commit(f->src, "lib/eal.c", "int eal;\n", "eal: add", c3);
	sync_repairs(f, c3);
	/* Damaged again: the older copy gives way to the newer one. */
	clobber(f->mirror, "refs/heads/22.11", "ref: \n");
	sync_repairs(f, c3);
	{
		char ref[PATH_MAX + 64], line[64] = "";
		FILE *fp;

		snprintf(ref, sizeof(ref), "%s.damaged/refs/heads/22.11", f->mirror);
		fp = fopen(ref, "r");
		assert_non_null(fp);
		assert_non_null(fgets(line, sizeof(line), fp));
		fclose(fp);
		assert_string_equal(line, "ref: \n");
	}
}

static void test_sync_repairs_corrupt_packed_refs(void **state)
{
	struct fixture *f = *state;
	char c3[41];

	sync_ok(f);
	tg_git(f->mirror, "pack-refs", "--all");
	clobber(f->mirror, "packed-refs", "# pack-refs with: peeled fully-peeled sorted \n"
		"zzzz refs/heads/main\n");
	tg_commit(f->src, "lib/eal.c", "int eal;\n", "eal: add", c3);
	sync_repairs(f, c3);
}

static void test_sync_repairs_truncated_pack(void **state)
{
	struct fixture *f = *state;
	char c3[41];

	sync_ok(f);
	truncate_packs(f->mirror);
	tg_commit(f->src, "lib/eal.c", "int eal;\n", "eal: add", c3);
	sync_repairs(f, c3);
}

static void test_sync_repairs_bad_head(void **state)
{
	struct fixture *f = *state;

	sync_ok(f);
	clobber(f->mirror, "HEAD", "garbage\n");
	sync_repairs(f, f->c2);
}

/* Damage in a local source reads like damage in the mirror: the mirror,
 * which reads well, is kept. */
static void test_sync_damaged_source_keeps_mirror(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char aside[PATH_MAX + 16];

	assert_true((size_t)snprintf(aside, sizeof(aside), "%s.damaged", f->mirror) <
		    sizeof(aside));
	sync_ok(f);
	tg_git(f->src, "pack-refs", "--all");
	clobber(f->src, ".git/packed-refs", "zzzz refs/heads/main\n");
	assert_int_equal(trees_sync(f->root, &f->tree, 0, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_non_null(strstr(err.msg, "corrupted packed references"));
	assert_false(exists(aside));
	assert_tip(f, "main", f->c2);
	assert_tip(f, "22.11", f->s1);
}

/* A remote that cannot be reached is no reason to touch the mirror, even
 * a damaged one: nothing better could be fetched. */
static void test_sync_unreachable_keeps_mirror(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char aside[PATH_MAX + 16], missing[1024];

	assert_true((size_t)snprintf(aside, sizeof(aside), "%s.damaged", f->mirror) <
		    sizeof(aside));
	sync_ok(f);
	f->tree.url = "http://127.0.0.1:9/nothing.git";	/* discard: refused */
	assert_int_equal(trees_sync(f->root, &f->tree, 0, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_tip(f, "main", f->c2);
	assert_false(exists(aside));

	snprintf(missing, sizeof(missing), "%s/nowhere", f->dir);
	f->tree.url = missing;
	assert_int_equal(trees_sync(f->root, &f->tree, 0, &err), -1);
	assert_tip(f, "main", f->c2);
	assert_false(exists(aside));

	/* Damaged and unreachable: kept as it is, the error reported. */
	clobber(f->mirror, "refs/heads/22.11", "\x01garbage\n");
	f->tree.url = "http://127.0.0.1:9/nothing.git";
	assert_int_equal(trees_sync(f->root, &f->tree, 0, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_false(exists(aside));
	assert_tip(f, "main", f->c2);
	f->tree.url = f->src;
}

static void test_has_commit(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char upper[41], blob[41];
	bool has = true;

	sync_ok(f);
	assert_int_equal(trees_has_commit(f->mirror, f->c1, &has, &err), 0);
	assert_true(has);
	for (size_t i = 0; i <= 40; i++)
		upper[i] = (char)(f->c1[i] >= 'a' && f->c1[i] <= 'f' ? f->c1[i] - 32 : f->c1[i]);
	assert_int_equal(trees_has_commit(f->mirror, upper, &has, &err), 0);
	assert_true(has);
	assert_int_equal(trees_has_commit(f->mirror, "0123456789abcdef0123456789abcdef01234567",
					  &has, &err), 0);
	assert_false(has);
	/* A blob is an object, not a commit. */
	tg_rev(f->src, "HEAD:VERSION", blob);
	assert_int_equal(trees_has_commit(f->mirror, blob, &has, &err), 0);
	assert_false(has);
	/* Abbreviations and junk are refused. */
	assert_int_equal(trees_has_commit(f->mirror, "0123456", &has, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(trees_has_commit(f->mirror, "g123456789abcdef0123456789abcdef01234567",
					  &has, &err), -1);
	assert_int_equal(trees_has_commit(f->mirror, "0123456789abcdef0123456789abcdef012345678",
					  &has, &err), -1);
	assert_false(trees_oid_valid(""));
	assert_true(trees_oid_valid(f->c2));
}

/* The trends' git order: positions along main's first-parent line, a
 * merged side commit off it, a commit of another branch not on it. */
static void test_first_parent_positions(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char c3[41], side[41], merge[41], c4[41];
	int64_t pos[6];

	tg_git(f->src, "checkout", "-q", "-b", "topic");
	tg_commit(f->src, "topic.txt", "t\n", "topic", side);
	tg_git(f->src, "checkout", "-q", "main");
	tg_commit(f->src, "a.txt", "a\n", "c3", c3);
	tg_git(f->src, "merge", "-q", "--no-ff", "-m", "merge topic", "topic");
	tg_rev(f->src, "HEAD", merge);
	tg_commit(f->src, "b.txt", "b\n", "c4", c4);
	sync_ok(f);
	{
		const char *oids[] = { c4, f->c1, merge, side, f->s1, f->c1 };

		assert_int_equal(trees_first_parent_positions(f->mirror, "main", oids, 6, 1000, pos,
							      &err), 0);
	}
	/* main: c1 <- c2 <- c3 <- merge <- c4 */
	assert_int_equal(pos[0], 4);
	assert_int_equal(pos[1], 0);
	assert_int_equal(pos[2], 3);
	assert_int_equal(pos[3], -1);	/* merged, not first-parent */
	assert_int_equal(pos[4], -1);	/* another branch */
	assert_int_equal(pos[5], 0);	/* asked twice */
	{
		const char *oids[] = { c4, c3 };

		/* A walk cut short leaves what it did not reach at -1; the
		 * positions of what it found stay relative to each other. */
		assert_int_equal(trees_first_parent_positions(f->mirror, "main", oids, 2, 1, pos,
							      &err), 0);
		assert_int_equal(pos[0], 0);
		assert_int_equal(pos[1], -1);
		assert_int_equal(trees_first_parent_positions(f->mirror, "main", oids, 2, 1000, pos,
							      &err), 0);
		assert_int_equal(pos[0] - pos[1], 2);
		assert_int_equal(trees_first_parent_positions(f->mirror, "nope", oids, 2, 1000, pos,
							      &err), -1);
		assert_int_equal(err.code, PG_ENOTFOUND);
		oids[1] = "0123";
		assert_int_equal(trees_first_parent_positions(f->mirror, "main", oids, 2, 1000, pos,
							      &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
	}
}

/* A bisection's range: the first-parent commits after one up to another,
 * oldest first; a merged side commit is not among them. */
static void test_first_parent_range(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char c3[41], side[41], merge[41], c4[41], out[8][41];
	size_t n = 99;

	tg_git(f->src, "checkout", "-q", "-b", "topic");
	tg_commit(f->src, "topic.txt", "t\n", "topic", side);
	tg_git(f->src, "checkout", "-q", "main");
	tg_commit(f->src, "a.txt", "a\n", "c3", c3);
	tg_git(f->src, "merge", "-q", "--no-ff", "-m", "merge topic", "topic");
	tg_rev(f->src, "HEAD", merge);
	tg_commit(f->src, "b.txt", "b\n", "c4", c4);
	sync_ok(f);
	/* main: c1 <- c2 <- c3 <- merge <- c4 */
	assert_int_equal(trees_first_parent_range(f->mirror, "main", f->c1, c4, out, 8, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(out[0], f->c2);
	assert_string_equal(out[1], c3);
	assert_string_equal(out[2], merge);
	assert_string_equal(out[3], c4);
	assert_int_equal(trees_first_parent_range(f->mirror, "main", c3, merge, out, 8, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(out[0], merge);
	/* bounded */
	assert_int_equal(trees_first_parent_range(f->mirror, "main", f->c1, c4, out, 3, &n, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	/* the wrong way round, a side commit, a stranger */
	assert_int_equal(trees_first_parent_range(f->mirror, "main", c4, f->c1, out, 8, &n, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_int_equal(trees_first_parent_range(f->mirror, "main", f->c1, side, out, 8, &n, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "is not on the first-parent line of main"));
	assert_int_equal(trees_first_parent_range(f->mirror, "main", side, c4, out, 8, &n, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_int_equal(trees_first_parent_range(f->mirror, "main", "0123", c4, out, 8, &n, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
}

static void test_version(void **state)
{
	struct fixture *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char v[TREES_VERSION_MAX], nov[41], bad[41], blob[41];

	sync_ok(f);
	assert_int_equal(trees_version(f->mirror, f->c1, v, &err), 0);
	assert_string_equal(v, "22.11.0");
	assert_int_equal(trees_version(f->mirror, f->c2, v, &err), 0);
	assert_string_equal(v, "23.11.0-rc0");
	/* Trimmed, first line only. */
	assert_int_equal(trees_version(f->mirror, f->s1, v, &err), 0);
	assert_string_equal(v, "22.11.1");

	assert_int_equal(trees_version(f->mirror, "0123456789abcdef0123456789abcdef01234567", v,
				       &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	tg_rev(f->src, "HEAD:VERSION", blob);
	assert_int_equal(trees_version(f->mirror, blob, v, &err), -1);
	assert_int_equal(trees_version(f->mirror, "abc", v, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);

	/* No VERSION file; a VERSION that is not a version. */
	tg_git(f->src, "rm", "-q", "VERSION");
	tg_commit(f->src, "README", "x\n", "drop VERSION", nov);
	tg_commit(f->src, "VERSION", "this is not a version string at all, far too long\n",
		  "long VERSION", bad);
	sync_ok(f);
	assert_int_equal(trees_version(f->mirror, nov, v, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no VERSION file"));
	assert_int_equal(trees_version(f->mirror, bad, v, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mirror_path),
		cmocka_unit_test_setup_teardown(test_sync_clones_and_resolves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_updates_and_prunes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_file_url_and_moved_url, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_missing_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_repairs_cut_short_mirror, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_repairs_corrupt_loose_ref, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_repairs_corrupt_packed_refs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_repairs_truncated_pack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_repairs_bad_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_damaged_source_keeps_mirror, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_unreachable_keeps_mirror, setup, teardown),
		cmocka_unit_test_setup_teardown(test_has_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_parent_positions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_parent_range, setup, teardown),
	};

	pg_log_set_levels(getenv("PG_TEST_LOG") ? getenv("PG_TEST_LOG") : "error");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
