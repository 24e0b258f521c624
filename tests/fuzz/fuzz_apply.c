/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for applying a stranger's mbox (patches/apply.h),
 * path checks, limits, the offset search and the 3-way merge included,
 * onto a small repository of its own.  Everything it writes is in a
 * private directory made with mkdtemp() in $TMPDIR, else /dev/shm, else
 * /tmp (removed at exit): repo/, and
 * outside/keep next to it, which no patch may reach.  Objects go to an
 * in-memory object database (libgit2's mempack) that is emptied after
 * every input, so a long run does not fill the disk.
 *
 * The first byte picks the mbox format and tight limits; the rest is the
 * mbox.  Any bytes must apply, fail or be refused without a sanitizer
 * report, and whatever happened must keep apply.h's promises: counts that
 * add up, a failure that names its patch and says why, the index and
 * working tree clean at HEAD, and nothing written beside repo/.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "apply.h"
#include "buf.h"
#include "err.h"
#include "fmt.h"
#include "gitutil.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char top[256], repo_dir[300], outside[300];
static git_repository *repo;
static git_odb_backend *mem;
static git_object *base;

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "fuzz_apply: setup: %s\n", #x); abort(); } } while (0)

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return remove(path);
}

static void cleanup(void)
{
	git_object_free(base);
	git_repository_free(repo);
	if (top[0])
		nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	CHECK(pg_fmt(path, sizeof(path), "%s/%s", dir, name) >= 0);
	CHECK((f = fopen(path, "w")) != NULL);
	CHECK(fputs(text, f) >= 0);
	CHECK(fclose(f) == 0);
}

/* a.c of 40 numbered lines, so that hunks can move. */
static void base_commit(void)
{
	struct pg_buf text = PG_BUF_INIT(4096);
	char sub[350];
	git_index *idx;
	git_oid tree_id, commit_id;
	git_tree *tree;
	git_signature *sig;

	for (int i = 1; i <= 40; i++)
		CHECK(pg_buf_printf(&text, "int line%d = %d;\n", i, i) == 0);
	write_file(repo_dir, "a.c", pg_buf_str(&text));
	pg_buf_release(&text);
	CHECK(pg_fmt(sub, sizeof(sub), "%s/lib", repo_dir) >= 0);
	CHECK(mkdir(sub, 0755) == 0);
	write_file(sub, "b.h", "#define B 1\n");
	write_file(repo_dir, "README", "hello\n");
	CHECK(git_repository_index(&idx, repo) == 0);
	CHECK(git_index_add_bypath(idx, "a.c") == 0);
	CHECK(git_index_add_bypath(idx, "lib/b.h") == 0);
	CHECK(git_index_add_bypath(idx, "README") == 0);
	CHECK(git_index_write(idx) == 0);
	CHECK(git_index_write_tree(&tree_id, idx) == 0);
	CHECK(git_tree_lookup(&tree, repo, &tree_id) == 0);
	CHECK(git_signature_new(&sig, "Base", "base@example.org", 1709280000, 0) == 0);
	CHECK(git_commit_create_v(&commit_id, repo, "HEAD", sig, sig, NULL, "base\n", tree, 0) ==
	      0);
	CHECK(git_object_lookup(&base, repo, &commit_id, GIT_OBJECT_COMMIT) == 0);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(idx);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct pg_err err = PG_ERR_INIT;
	const char *tmp = getenv("TMPDIR");
	git_odb *odb;

	pg_log_set_levels("error");
	CHECK(pg_git_global_init(&err) == 0);
	/* tmpfs when there is one: checkouts and index writes are most of
	 * the time of an input that applies, twice as fast there. */
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
	CHECK(pg_fmt(top, sizeof(top), "%s/pg-fuzz-apply.XXXXXX", tmp) >= 0);
	CHECK(mkdtemp(top) != NULL);
	atexit(cleanup);
	CHECK(pg_fmt(repo_dir, sizeof(repo_dir), "%s/repo", top) >= 0);
	CHECK(pg_fmt(outside, sizeof(outside), "%s/outside", top) >= 0);
	CHECK(mkdir(outside, 0755) == 0);
	write_file(outside, "keep", "keep\n");
	CHECK(git_repository_init(&repo, repo_dir, 0) == 0);
	base_commit();
	/* From here on new objects live in memory (the base is on disk). */
	CHECK(git_repository_odb(&odb, repo) == 0);
	CHECK(git_mempack_new(&mem) == 0);
	CHECK(git_odb_add_backend(odb, mem, 1000) == 0);
	git_odb_free(odb);
	return 0;
}

static int count_status(void)
{
	git_status_options o = GIT_STATUS_OPTIONS_INIT;
	git_status_list *st;
	size_t n;

	o.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
	CHECK(git_status_list_new(&st, repo, &o) == 0);
	n = git_status_list_entrycount(st);
	git_status_list_free(st);
	return (int)n;
}

/* Only repo/ and outside/ in top, only keep in outside/. */
static void check_outside(void)
{
	const char *dirs[] = { top, outside };
	struct dirent *e;
	DIR *d;

	for (int i = 0; i < 2; i++) {
		CHECK((d = opendir(dirs[i])) != NULL);
		while ((e = readdir(d)) != NULL) {
			const char *n = e->d_name;

			if (!strcmp(n, ".") || !strcmp(n, ".."))
				continue;
			if (i == 0 ? strcmp(n, "repo") && strcmp(n, "outside") : strcmp(n, "keep"))
				abort();	/* a patch wrote beside the repository */
		}
		closedir(d);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_apply_opts opts = PG_APPLY_OPTS_INIT;
	struct pg_apply_result res = PG_APPLY_RESULT_INIT;
	struct pg_buf line = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_err err = PG_ERR_INIT;
	git_oid head;
	bool dirty;
	int rc;

	if (!size)
		return 0;
	opts.fmt = data[0] & 1 ? PG_MBOX_MBOXRD : PG_MBOX_MBOXO;
	if (data[0] & 2) {
		opts.limits.max_file_bytes = 4096;
		opts.limits.max_files = 3;
		opts.limits.max_total_bytes = 8192;
	}
	rc = pg_apply_mbox_opts(repo, (const char *)data + 1, size - 1, &opts, &res, &err);
	if (rc < -1 || rc > 1)
		abort();
	if (res.n_applied + res.n_already > res.n_patches || (res.n_patches && !res.patches))
		abort();
	if (rc == 0 && (res.failed_patch || res.n_applied + res.n_already != res.n_patches))
		abort();
	if (rc == 1 && (!res.failed_patch || res.failed_patch > res.n_patches || !res.reason ||
			!*res.reason || res.n_applied + res.n_already >= res.n_patches))
		abort();
	if (rc == -1 && (err.code == PG_OK || !err.msg[0]))
		abort();
	for (size_t i = 0; i < res.n_patches; i++)
		if (!res.patches[i].subject)
			abort();
	if (rc >= 0 && pg_apply_describe(&res, &line) != 0)
		abort();
	/* Whatever happened, HEAD's state is clean: nothing half applied.
	 * (An mbox without a patch touches nothing: no need to look, and
	 * looking is most of the time of such an input.) */
	dirty = res.n_patches && count_status() != 0;
	if (rc >= 0 && dirty)
		abort();
	if (res.n_patches)
		check_outside();
	pg_buf_release(&line);
	pg_apply_result_release(&res);
	/* Back to the base, only when needed: a reset rewrites the index,
	 * and most inputs leave HEAD where it was. */
	CHECK(git_reference_name_to_id(&head, repo, "HEAD") == 0);
	if (dirty || !git_oid_equal(&head, git_object_id(base)))
		CHECK(git_reset(repo, base, GIT_RESET_HARD, NULL) == 0);
	CHECK(git_mempack_reset(mem) == 0);
	return 0;
}
