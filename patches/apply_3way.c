/* SPDX-License-Identifier: MIT */
/*
 * The three-way fallback (see apply.h), what `git am -3` does with its
 * "fake ancestor": the patch's preimage blobs stand in for the files it
 * touches, the patch applies to them exactly, and the result is merged
 * into HEAD with the preimage as the merge base.
 */
#include "apply_int.h"
#include "buf.h"
#include "gitutil.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rename candidates the merge may examine (see apply_3way()). */
#define RENAME_LIMIT 100000

/* Whether tree has a blob (or anything) at path. */
static int tree_has(git_tree *tree, const char *path, git_tree_entry **entry, struct pg_err *err)
{
	int rc = git_tree_entry_bypath(entry, tree, path);

	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		*entry = NULL;
		return 0;
	}
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "3-way: look up '%s'", path);
	return 1;
}

/*
 * The full id of the preimage blob of d (the "index abc..def" line's abc,
 * abbreviated): 0 with *id, 1 with *fail when the repository lacks it or
 * it is not a blob, -1 on error.  A delta without an index line (a pure
 * rename or mode change) has HEAD's blob as its preimage.
 */
static int preimage_id(git_odb *odb, git_tree *head, const git_diff_delta *d, git_oid *id,
		       git_filemode_t *mode, struct apply_fail *fail, struct pg_err *err)
{
	char hex[GIT_OID_HEXSZ + 1];
	git_tree_entry *e = NULL;
	git_object_t type;
	size_t size;
	int rc;

	*mode = d->old_file.mode ? (git_filemode_t)d->old_file.mode : GIT_FILEMODE_BLOB;
	if (d->old_file.id_abbrev == 0 || git_oid_is_zero(&d->old_file.id)) {
		rc = tree_has(head, d->old_file.path, &e, err);
		if (rc < 0)
			return -1;
		if (rc == 0)
			return apply_fail_set(fail, d->old_file.path, 0, NULL, 0, err,
					      "3-way: no index line and no such file") < 0 ? -1 : 1;
		git_oid_cpy(id, git_tree_entry_id(e));
		if (!d->old_file.mode)
			*mode = git_tree_entry_filemode(e);
		git_tree_entry_free(e);
		return 0;
	}
	git_oid_tostr(hex, (size_t)d->old_file.id_abbrev + 1, &d->old_file.id);
	rc = git_odb_exists_prefix(id, odb, &d->old_file.id, d->old_file.id_abbrev);
	if (rc == GIT_ENOTFOUND || rc == GIT_EAMBIGUOUS) {
		git_error_clear();
		return apply_fail_set(fail, d->old_file.path, 0, NULL, 0, err,
				      "3-way: preimage blob %s is %s", hex,
				      rc == GIT_ENOTFOUND ? "not in the repository" : "ambiguous")
			< 0 ? -1 : 1;
	}
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "3-way: look up blob %s", hex);
	rc = git_odb_read_header(&size, &type, odb, id);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "3-way: read blob %s", hex);
	if (type != GIT_OBJECT_BLOB)
		return apply_fail_set(fail, d->old_file.path, 0, NULL, 0, err,
				      "3-way: preimage %s is not a blob", hex) < 0 ? -1 : 1;
	return 0;
}

/*
 * The merge base, git am -3's "fake ancestor": a tree of the touched files
 * alone, each at its preimage blob.  Everything else of HEAD is then an
 * addition on our side that the merge keeps, a file the patch creates
 * that HEAD already has is an add/add conflict, and a file that HEAD
 * renamed since is found by rename detection (a deletion on our side
 * against all our additions).
 */
static int build_base(git_repository *repo, git_tree *head, git_diff *diff, git_oid *out,
		      struct apply_fail *fail, struct pg_err *err)
{
	size_t n = git_diff_num_deltas(diff);
	git_index *idx = NULL;
	git_odb *odb = NULL;
	int rc, ret = -1;

	rc = git_repository_odb(&odb, repo);
	if (rc == 0)
		rc = git_index_new(&idx);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: set up the preimage tree");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		git_index_entry e;
		git_filemode_t mode;

		if (d->status == GIT_DELTA_ADDED)
			continue;
		memset(&e, 0, sizeof(e));
		rc = preimage_id(odb, head, d, &e.id, &mode, fail, err);
		if (rc != 0) {
			ret = rc;
			goto out;
		}
		e.mode = mode;
		e.path = d->old_file.path;
		rc = git_index_add(idx, &e);
		if (rc < 0) {
			pg_git_fail(err, PG_EIO, rc, "3-way: preimage of '%s'", d->old_file.path);
			goto out;
		}
	}
	rc = git_index_write_tree_to(out, idx, repo);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: write the preimage tree");
		goto out;
	}
	ret = 0;
out:
	git_index_free(idx);
	git_odb_free(odb);
	return ret;
}

/* ---- what the merge looks at ---------------------------------------- */

/*
 * "ours" for the merge is not HEAD's whole tree but the part of it that
 * can matter: HEAD's entry at every path the patch names, and, for a file
 * the patch changes that HEAD does not have (renamed or moved since, or
 * never there), the likely places it went: HEAD's files with the same
 * blob (an exact rename), with the same file name, or in the same
 * directory.  Rename detection then compares the patch's files with those
 * only, instead of with every file of the tree (git's merge-ort limits it
 * likewise to the sources that matter and tries same-name files first),
 * which is what made a 3-way attempt on a file the base lacks take about
 * a second on the DPDK tree; and an unrelated file elsewhere no longer
 * passes for a rename target.  The merged part then replaces that part of
 * HEAD's tree (graft()).
 */
struct lost {			/* a file the patch changes that HEAD lacks */
	const char *path;	/* as the patch names it */
	const char *name;	/* its last component */
	size_t dirlen;		/* bytes of its directory, with the '/' */
	git_oid blob;		/* its preimage */
};

struct pick {
	git_repository *repo;
	git_index *idx;		/* the part of HEAD picked */
	const struct lost *lost;
	size_t n_lost;
	int rc;			/* a libgit2 error in the walk */
};

/* Add HEAD's entry (path, id, mode) to the picked part, once. */
static int pick_add(git_index *idx, const char *path, const git_oid *id, git_filemode_t mode)
{
	git_index_entry e;

	if (git_index_get_bypath(idx, path, 0))
		return 0;
	memset(&e, 0, sizeof(e));
	e.path = path;
	e.mode = mode;
	git_oid_cpy(&e.id, id);
	return git_index_add(idx, &e);
}

static int pick_walk(const char *root, const git_tree_entry *te, void *arg)
{
	struct pick *pk = arg;
	const char *name = git_tree_entry_name(te);
	size_t rootlen = strlen(root);
	char path[4096];
	int n;

	if (git_tree_entry_type(te) != GIT_OBJECT_BLOB)
		return 0;
	for (size_t i = 0; i < pk->n_lost; i++) {
		const struct lost *l = &pk->lost[i];

		if (!git_oid_equal(git_tree_entry_id(te), &l->blob) && strcmp(name, l->name) != 0 &&
		    (rootlen != l->dirlen || strncmp(root, l->path, rootlen) != 0))
			continue;
		n = snprintf(path, sizeof(path), "%s%s", root, name);
		if (n < 0 || (size_t)n >= sizeof(path))
			return 0;	/* longer than any path git checks out */
		pk->rc = pick_add(pk->idx, path, git_tree_entry_id(te),
				  git_tree_entry_filemode(te));
		return pk->rc < 0 ? -1 : 0;
	}
	return 0;
}

/* HEAD's entry at path, if it has one, into the picked part: 1 added, 0
 * none, -1 error. */
static int pick_path(git_index *idx, git_tree *head, const char *path, struct pg_err *err)
{
	git_tree_entry *e = NULL;
	int rc = tree_has(head, path, &e, err);

	if (rc <= 0)
		return rc;
	rc = git_tree_entry_type(e) == GIT_OBJECT_BLOB ?
	     pick_add(idx, path, git_tree_entry_id(e), git_tree_entry_filemode(e)) : 0;
	git_tree_entry_free(e);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "3-way: take '%s' from HEAD", path);
	return 1;
}

/* The part of HEAD the merge needs (above): its entries in *picked (the
 * caller frees it) and as a tree into *out. */
static int pick_ours(git_repository *repo, git_tree *head, git_tree *base, git_diff *diff,
		     git_index **picked, git_oid *out, struct pg_err *err)
{
	size_t n = git_diff_num_deltas(diff), n_lost = 0;
	struct lost *lost = calloc(n ? n : 1, sizeof(*lost));
	git_index *idx = NULL;
	int rc, ret = -1;

	if (!lost) {
		pg_err_set(err, PG_ENOMEM, "3-way: out of memory");
		goto out;
	}
	rc = git_index_new(&idx);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: set up HEAD's part");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (pick_path(idx, head, d->new_file.path, err) < 0)
			goto out;
		if (d->status == GIT_DELTA_ADDED)
			continue;
		rc = pick_path(idx, head, d->old_file.path, err);
		if (rc < 0)
			goto out;
		if (rc == 0) {
			struct lost *l = &lost[n_lost++];
			const char *slash = strrchr(d->old_file.path, '/');
			git_tree_entry *be = NULL;

			l->path = d->old_file.path;
			l->name = slash ? slash + 1 : l->path;
			l->dirlen = slash ? (size_t)(slash - l->path) + 1 : 0;
			if (tree_has(base, l->path, &be, err) < 0)
				goto out;
			if (be)
				git_oid_cpy(&l->blob, git_tree_entry_id(be));
			git_tree_entry_free(be);
		}
	}
	if (n_lost) {
		struct pick pk = { repo, idx, lost, n_lost, 0 };

		rc = git_tree_walk(head, GIT_TREEWALK_PRE, pick_walk, &pk);
		if (rc < 0 || pk.rc < 0) {
			pg_git_fail(err, PG_EIO, pk.rc < 0 ? pk.rc : rc,
				    "3-way: look for where HEAD has the patch's files");
			goto out;
		}
	}
	rc = git_index_write_tree_to(out, idx, repo);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: write HEAD's part");
		goto out;
	}
	*picked = idx;
	idx = NULL;
	ret = 0;
out:
	git_index_free(idx);
	free(lost);
	return ret;
}

/* HEAD's tree with its part `picked` replaced by the merge's result
 * `merged` (stage 0 entries only: there are no conflicts). */
static int graft(git_repository *repo, git_tree *head, git_index *picked, git_index *merged,
		 git_oid *out, struct pg_err *err)
{
	git_index *idx = NULL;
	int rc = git_index_new(&idx);

	if (rc == 0)
		rc = git_index_read_tree(idx, head);
	/* What the merge dropped of HEAD's part: a deletion, a rename's old
	 * name. */
	for (size_t i = 0; rc == 0 && i < git_index_entrycount(picked); i++) {
		const git_index_entry *e = git_index_get_byindex(picked, i);

		if (!git_index_get_bypath(merged, e->path, 0))
			rc = git_index_remove(idx, e->path, 0);
	}
	for (size_t i = 0; rc == 0 && i < git_index_entrycount(merged); i++)
		rc = git_index_add(idx, git_index_get_byindex(merged, i));
	if (rc == 0)
		rc = git_index_write_tree_to(out, idx, repo);
	git_index_free(idx);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "3-way: put the merged files into HEAD's tree");
	return 0;
}

/* ---- naming the conflict ---------------------------------------------- */

#define CONFLICTS_MAX 64	/* conflicts looked at */
#define CONFLICTS_NAMED 8	/* other files named in the reason */

struct conflict {
	const char *path;	/* as the patch names it */
	const char *head_path;	/* HEAD's file it met (a rename's new name), or NULL */
	const char *kind;
	bool head_only;		/* HEAD's file alone: rename detection paired it
				 * with a file of the patch that HEAD lacks */
};

/* Whether the patch names path (as an old or a new file); its delta's
 * position in *pos. */
static bool patch_names(git_diff *diff, const char *path, size_t *pos)
{
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (!strcmp(d->new_file.path, path) || !strcmp(d->old_file.path, path)) {
			*pos = i;
			return true;
		}
	}
	return false;
}

static bool patch_deletes(git_diff *diff, const char *path)
{
	size_t pos;

	return patch_names(diff, path, &pos) &&
	       git_diff_get_delta(diff, pos)->status == GIT_DELTA_DELETED;
}

/*
 * Every conflict of the merged index, as git lists them: the file the
 * patch touches first (in the patch's order, a content conflict before
 * the others), what kind of conflict, and the other conflicting files
 * after it.  A conflict that rename detection made by pairing the patch's
 * file with another of HEAD's names both.
 */
static int name_conflict(git_index *idx, git_diff *diff, struct apply_fail *fail,
			 struct pg_err *err)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *anc, *ours, *theirs;
	struct conflict c[CONFLICTS_MAX];
	struct pg_buf also = PG_BUF_INIT(512);
	const char *other[CONFLICTS_NAMED];
	size_t n = 0, more = 0, best = 0, best_pos = SIZE_MAX, n_other = 0;
	int rc;

	rc = git_index_conflict_iterator_new(&it, idx);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "3-way: list the conflicts");
	while (git_index_conflict_next(&anc, &ours, &theirs, it) == 0) {
		struct conflict *k;

		if (n == CONFLICTS_MAX) {
			more++;
			continue;
		}
		k = &c[n++];
		k->path = theirs ? theirs->path : anc ? anc->path : ours->path;
		k->head_path = ours && strcmp(ours->path, k->path) ? ours->path : NULL;
		k->head_only = !anc && !theirs;
		if (k->head_only)
			k->kind = "HEAD's file was paired with the patch's by rename detection";
		else if (!anc)
			k->kind = "the patch adds a file HEAD has too";
		else if (!ours)
			k->kind = "the file the patch changes is not in HEAD";
		else if (!theirs)
			k->kind = patch_deletes(diff, anc->path) ?
				  "the patch deletes a file that HEAD changed" :
				  "HEAD's file was matched to the patch's by rename detection";
		else
			k->kind = NULL;		/* both changed the same lines */
	}
	git_error_clear();
	for (size_t i = 0; i < n; i++) {
		size_t pos;

		/* The patch's own file first; a content conflict before a
		 * modify/delete one of the same position. */
		if (!patch_names(diff, c[i].path, &pos))
			continue;
		pos = 2 * pos + (c[i].kind != NULL);
		if (pos < best_pos) {
			best_pos = pos;
			best = i;
		}
	}
	/* HEAD lacks the patch's file but rename detection paired it with
	 * one of HEAD's: say which, in the same words. */
	if (n && !c[best].head_path && c[best].kind && strstr(c[best].kind, "not in HEAD"))
		for (size_t i = 0; i < n; i++)
			if (c[i].head_only) {
				c[best].head_path = c[i].path;
				break;
			}
	for (size_t i = 0; i < n; i++) {
		const char *names[2] = { c[i].path, c[i].head_path };

		for (size_t k = 0; k < 2; k++) {
			const char *nm = names[k];
			bool seen = !nm || !strcmp(nm, c[best].path) ||
				    (c[best].head_path && !strcmp(nm, c[best].head_path));

			for (size_t j = 0; !seen && j < n_other; j++)
				seen = !strcmp(other[j], nm);
			if (seen)
				continue;
			if (n_other == CONFLICTS_NAMED)
				more++;
			else
				other[n_other++] = nm;
		}
	}
	for (size_t j = 0; j < n_other; j++)
		if (pg_buf_printf(&also, "%s%s", j ? ", " : "; also in ", other[j]) < 0)
			break;	/* the names that fit */
	if (more && pg_buf_printf(&also, " and %zu more", more) < 0)
		more = 0;
	rc = n == 0 ? apply_fail_set(fail, NULL, 0, NULL, 0, err, "3-way merge conflict") :
	     apply_fail_set(fail, c[best].path, 0, NULL, 0, err,
			    "3-way merge conflict%s%s%s%s%s%s",
			    c[best].kind ? " (" : "", c[best].kind ? c[best].kind : "",
			    c[best].kind ? ")" : "",
			    c[best].head_path ? ", with HEAD's similar " : "",
			    c[best].head_path ? c[best].head_path : "", pg_buf_str(&also));
	pg_buf_release(&also);
	git_index_conflict_iterator_free(it);
	fail->conflict = true;
	return rc < 0 ? -1 : 1;
}

int apply_3way(git_repository *repo, git_tree *head, git_diff *diff, git_oid *out,
	       struct apply_fail *fail, struct pg_err *err)
{
	git_tree *base = NULL, *theirs = NULL, *ours = NULL;
	git_index *post = NULL, *merged = NULL, *picked = NULL;
	git_merge_options mo;
	git_oid base_id, theirs_id, ours_id;
	int rc, ret = -1;

	rc = build_base(repo, head, diff, &base_id, fail, err);
	if (rc != 0)
		return rc;
	rc = git_tree_lookup(&base, repo, &base_id);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: read the preimage tree");
		goto out;
	}
	rc = git_apply_to_tree(&post, repo, base, diff, NULL);
	if (rc < 0) {
		const git_error *e = git_error_last();

		/* The patch does not fit the blobs it names itself: hand-edited
		 * or damaged in transit. */
		ret = apply_fail_set(fail, NULL, 0, NULL, 0, err,
				     "3-way: the patch does not apply to its own preimage blobs: %s",
				     e && e->message ? e->message : "libgit2 failed") < 0 ? -1 : 1;
		git_error_clear();
		goto out;
	}
	rc = git_index_write_tree_to(&theirs_id, post, repo);
	if (rc == 0)
		rc = git_tree_lookup(&theirs, repo, &theirs_id);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: write the patched tree");
		goto out;
	}
	if (pick_ours(repo, head, base, diff, &picked, &ours_id, err) < 0)
		goto out;
	rc = git_tree_lookup(&ours, repo, &ours_id);
	if (rc == 0)
		rc = git_merge_options_init(&mo, GIT_MERGE_OPTIONS_VERSION);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: merge options");
		goto out;
	}
	mo.flags = GIT_MERGE_FIND_RENAMES;
	/* The picked part can hold a large directory: the default limit (200
	 * candidates) must not stop the detection of a rename there. */
	mo.target_limit = RENAME_LIMIT;
	rc = git_merge_trees(&merged, repo, base, ours, theirs, &mo);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: merge");
		goto out;
	}
	if (git_index_has_conflicts(merged)) {
		ret = name_conflict(merged, diff, fail, err);
		goto out;
	}
	if (graft(repo, head, picked, merged, out, err) < 0)
		goto out;
	ret = 0;
out:
	git_index_free(merged);
	git_index_free(picked);
	git_index_free(post);
	git_tree_free(ours);
	git_tree_free(theirs);
	git_tree_free(base);
	return ret;
}
