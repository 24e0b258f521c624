/* SPDX-License-Identifier: MIT */
/*
 * Which paths a patch may touch: git's path rules (pg_apply_path_ok(), see
 * apply_paths.h) and nothing beyond a symbolic link (apply_check_paths(),
 * see apply_int.h), the checks `git apply` makes before it writes.
 */
#include "apply_paths.h"
#include "apply_int.h"
#include "gitutil.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "vec.h"

/* ---- git's path rules ----------------------------------------------- */

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Whether s[0..n) is lit (lower case) in any case. */
static bool ci_eq(const char *s, size_t n, const char *lit)
{
	for (size_t i = 0; i < n; i++)
		if (!lit[i] || lower(s[i]) != lit[i])
			return false;
	return lit[n] == '\0';
}

/* git's is_ntfs_dotgit(): NTFS drops trailing dots and spaces, reads what
 * follows a ':' as a stream name, and "git~1" is the 8.3 name of ".git". */
static bool ntfs_dotgit(const char *c, size_t n)
{
	size_t i;

	if (n >= 4 && c[0] == '.' && ci_eq(c + 1, 3, "git"))
		i = 4;
	else if (n >= 5 && ci_eq(c, 3, "git") && c[3] == '~' && c[4] == '1')
		i = 5;
	else
		return false;
	for (; i < n; i++) {
		if (c[i] == ':' || c[i] == '\\')
			return true;
		if (c[i] != '.' && c[i] != ' ')
			return false;
	}
	return true;
}

/* The length of the UTF-8 code point at c[0..n) when HFS+ ignores it
 * (git's next_hfs_char() list), else 0. */
static size_t hfs_ignorable(const unsigned char *c, size_t n)
{
	if (n < 3)
		return 0;
	if (c[0] == 0xe2 && c[1] == 0x80 && ((c[2] >= 0x8c && c[2] <= 0x8f) ||
					     (c[2] >= 0xaa && c[2] <= 0xae)))
		return 3;	/* U+200C..200F, U+202A..202E */
	if (c[0] == 0xe2 && c[1] == 0x81 && c[2] >= 0xaa && c[2] <= 0xaf)
		return 3;	/* U+206A..206F */
	if (c[0] == 0xef && c[1] == 0xbb && c[2] == 0xbf)
		return 3;	/* U+FEFF */
	return 0;
}

/* git's is_hfs_dotgit(): ".git" in any case once the ignored code points
 * are dropped. */
static bool hfs_dotgit(const char *c, size_t n)
{
	static const char want[] = ".git";
	size_t got = 0, skip;

	for (size_t i = 0; i < n; i++) {
		skip = hfs_ignorable((const unsigned char *)c + i, n - i);
		if (skip) {
			i += skip - 1;
			continue;
		}
		if (got == 4 || lower(c[i]) != want[got])
			return false;
		got++;
	}
	return got == 4;
}

static bool component_ok(const char *c, size_t n, const char **why)
{
	if (n == 0)
		*why = "path has an empty component";
	else if (n == 1 && c[0] == '.')
		*why = "path has a '.' component";
	else if (n == 2 && c[0] == '.' && c[1] == '.')
		*why = "path has a '..' component";
	else if (ci_eq(c, n, ".git"))
		*why = "path names .git";
	else if (ntfs_dotgit(c, n))
		*why = "path names .git (as NTFS reads it)";
	else if (hfs_dotgit(c, n))
		*why = "path names .git (as HFS+ reads it)";
	else
		return true;
	return false;
}

bool pg_apply_path_ok(const char *path, size_t len, const char **why)
{
	const char *dummy, *start;

	if (!why)
		why = &dummy;
	if (len == 0) {
		*why = "path is empty";
		return false;
	}
	if (len > PG_APPLY_PATH_MAX) {
		*why = "path is longer than 4096 bytes";
		return false;
	}
	if (path[0] == '/') {
		*why = "path is absolute";
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f) {
			*why = "path has a control character";
			return false;
		}
	}
	start = path;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		if (!component_ok(start, (size_t)(path + i - start), why))
			return false;
		start = path + i + 1;
	}
	return true;
}

/* ---- symbolic links created by earlier patches ---------------------- */

/* Whether delta d leaves a symbolic link at its new path. */
static bool makes_link(const git_diff_delta *d)
{
	return d->status != GIT_DELTA_DELETED && d->new_file.mode == GIT_FILEMODE_LINK;
}

/* Whether delta d takes away the symbolic link at its old path (git's
 * APPLY_SYMLINK_GOES_AWAY: deleted or renamed away). */
static bool removes_link(const git_diff_delta *d)
{
	return d->old_file.mode == GIT_FILEMODE_LINK &&
	       (d->status == GIT_DELTA_DELETED ||
		(d->status == GIT_DELTA_RENAMED && strcmp(d->old_file.path, d->new_file.path) != 0));
}

int apply_links_add(struct apply_links *l, git_diff *diff, size_t patch, struct pg_err *err)
{
	size_t n = git_diff_num_deltas(diff);

	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (!d || !makes_link(d))
			continue;
		if (PG_GROW(l->v, l->alloc, l->n + 1) < 0)
			return pg_err_set(err, PG_ENOMEM, "apply: out of memory");
		if (!(l->v[l->n].path = strdup(d->new_file.path)))
			return pg_err_set(err, PG_ENOMEM, "apply: out of memory");
		l->v[l->n].patch = patch;
		l->n++;
	}
	return 0;
}

void apply_links_free(struct apply_links *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- nothing beyond a symbolic link ---------------------------------- */

struct beyond {
	git_repository *repo;
	git_tree *head;
	git_diff *diff;
	const char *workdir;		/* with its trailing '/'; NULL: bare */
	const struct apply_links *earlier;
	size_t npatches;
	struct pg_buf wpath;		/* workdir + path, cut at each prefix */
};

/* Whether some delta of the patch makes (want_make) or removes a symbolic
 * link at prefix[0..len). */
static bool patch_link(git_diff *diff, const char *prefix, size_t len, bool want_make)
{
	size_t n = git_diff_num_deltas(diff);

	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *p;

		if (!d || !(want_make ? makes_link(d) : removes_link(d)))
			continue;
		p = want_make ? d->new_file.path : d->old_file.path;
		if (strlen(p) == len && memcmp(p, prefix, len) == 0)
			return true;
	}
	return false;
}

/* Which earlier patch of this call made the link at prefix: 0 when none. */
static size_t link_creator(const struct apply_links *l, const char *prefix)
{
	size_t who = 0;

	for (size_t i = 0; l && i < l->n; i++)
		if (strcmp(l->v[i].path, prefix) == 0)
			who = l->v[i].patch;	/* the latest one made what HEAD has */
	return who;
}

static int refuse(struct beyond *b, const char *path, const char *prefix, const char *where,
		  size_t creator, struct apply_fail *fail, struct pg_err *err)
{
	int rc;

	if (creator)
		rc = apply_fail_set(fail, path, 0, NULL, 0, err,
				    "path is beyond a symbolic link '%s' (created by patch %zu/%zu)",
				    prefix, creator, b->npatches);
	else
		rc = apply_fail_set(fail, path, 0, NULL, 0, err,
				    "path is beyond a symbolic link '%s' (%s)", prefix, where);
	return rc < 0 ? -1 : 1;
}

/*
 * Whether a proper prefix of path is a symbolic link: for a path the patch
 * writes (is_new), one this patch makes, else (unless this patch removes
 * it, as git apply allows) one in HEAD's tree or in the working tree; for
 * a path it reads or removes (the old side, from before the patch), one in
 * HEAD's tree or in the working tree.  The tree is walked down component
 * by component, the working tree with lstat() until a prefix is missing
 * or not a directory (going further would follow what is there).
 * Returns 0, 1 with *fail, -1 on error.
 */
static int check_beyond(struct beyond *b, const char *path, bool is_new,
			struct apply_fail *fail, struct pg_err *err)
{
	size_t len = strlen(path), wlen = b->workdir ? strlen(b->workdir) : 0;
	git_tree *cur = b->head, *sub = NULL;
	bool in_tree = true, in_workdir = b->workdir != NULL;
	char *w;
	int rc, ret = -1;

	pg_buf_reset(&b->wpath);
	if ((b->workdir && pg_buf_adds(&b->wpath, b->workdir) < 0) ||
	    pg_buf_add(&b->wpath, path, len) < 0) {
		pg_buf_err(&b->wpath, err, "apply: a path of the working tree");
		goto out;
	}
	w = b->wpath.data;
	for (size_t i = 0, start = 0; i < len; i++) {
		const char *prefix = w + wlen, *name = w + wlen + start;
		const git_tree_entry *e;

		if (path[i] != '/')
			continue;
		w[wlen + i] = '\0';	/* prefix and name end here for now */
		if (is_new && patch_link(b->diff, path, i, true)) {
			ret = refuse(b, path, prefix, "created by this patch", 0, fail, err);
			goto out;
		}
		if (is_new && patch_link(b->diff, path, i, false)) {
			/* The link goes away: what is below it is new, and the
			 * lookups below would read beyond it. */
			in_tree = in_workdir = false;
		}
		if (in_tree) {
			e = git_tree_entry_byname(cur, name);
			if (!e || git_tree_entry_type(e) != GIT_OBJECT_TREE) {
				if (e && git_tree_entry_filemode(e) == GIT_FILEMODE_LINK) {
					ret = refuse(b, path, prefix, "in the tree",
						     link_creator(b->earlier, prefix), fail, err);
					goto out;
				}
				in_tree = false;
			} else {
				rc = git_tree_lookup(&sub, b->repo, git_tree_entry_id(e));
				if (rc < 0) {
					pg_git_fail(err, PG_EIO, rc, "apply: read tree '%s'", prefix);
					goto out;
				}
				if (cur != b->head)
					git_tree_free(cur);
				cur = sub;
				sub = NULL;
			}
		}
		if (in_workdir) {
			struct stat st;

			/* Belt and braces: a link the tree does not know of
			 * (left by someone else) is refused too.  Any error
			 * ends the walk: nothing to write through there. */
			if (lstat(w, &st) < 0) {
				in_workdir = false;
			} else if (S_ISLNK(st.st_mode)) {
				ret = refuse(b, path, prefix, "in the working tree", 0, fail, err);
				goto out;
			} else if (!S_ISDIR(st.st_mode)) {
				in_workdir = false;
			}
		}
		w[wlen + i] = '/';
		start = i + 1;
	}
	ret = 0;
out:
	if (cur != b->head)
		git_tree_free(cur);
	return ret;
}

/* git's rules for one path of a delta, then nothing beyond a link. */
static int check_path(struct beyond *b, const char *path, bool is_new,
		      struct apply_fail *fail, struct pg_err *err)
{
	const char *why = NULL;

	if (!path)
		return 0;
	if (!pg_apply_path_ok(path, strlen(path), &why))
		return apply_fail_set(fail, path, 0, NULL, 0, err, "%s", why) < 0 ? -1 : 1;
	return check_beyond(b, path, is_new, fail, err);
}

int apply_check_paths(git_repository *repo, git_tree *head, git_diff *diff,
		      const struct apply_links *earlier, size_t npatches,
		      struct apply_fail *fail, struct pg_err *err)
{
	struct beyond b = { repo, head, diff, git_repository_workdir(repo), earlier, npatches,
			    PG_BUF_INIT(PG_APPLY_PATH_MAX + 4096) };
	size_t n = git_diff_num_deltas(diff);
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (!d) {
			rc = pg_err_set(err, PG_EIO, "apply: no delta %zu", i);
			break;
		}
		/* Both sides, whatever the status: a rename or copy from (or
		 * a deletion of) a path beyond a link reads or removes what
		 * is beyond it, and libgit2 keeps both names of the diff
		 * header even for an added or a deleted file, where they
		 * may differ ("diff --git a/x b/../y"). */
		rc = check_path(&b, d->old_file.path, d->status == GIT_DELTA_ADDED, fail, err);
		if (rc == 0)
			rc = check_path(&b, d->new_file.path, d->status != GIT_DELTA_DELETED, fail,
					err);
	}
	pg_buf_release(&b.wpath);
	return rc;
}
