/* SPDX-License-Identifier: MIT */
/*
 * The three-way fallback (see apply.h), what `git am -3` does with its
 * "fake ancestor": the patch's preimage blobs stand in for the files it
 * touches, the patch applies to them exactly, and the result is merged
 * into HEAD with the preimage as the merge base.
 */
#include "apply_int.h"
#include "gitutil.h"

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

/* The first conflicting path of a merged index into *fail. */
static int name_conflict(git_index *idx, struct apply_fail *fail, struct pg_err *err)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *anc, *ours, *theirs;
	const char *path = NULL;
	int rc;

	rc = git_index_conflict_iterator_new(&it, idx);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "3-way: list the conflicts");
	if (git_index_conflict_next(&anc, &ours, &theirs, it) == 0)
		path = ours ? ours->path : theirs ? theirs->path : anc ? anc->path : NULL;
	git_error_clear();
	rc = apply_fail_set(fail, path, 0, NULL, 0, err, "3-way merge conflict%s",
			    ours && theirs ? "" : !ours ? " (the file changed by the patch is gone from HEAD)" :
			    " (the patch deletes a file that HEAD changed)");
	git_index_conflict_iterator_free(it);
	fail->conflict = true;
	return rc < 0 ? -1 : 1;
}

int apply_3way(git_repository *repo, git_tree *head, git_diff *diff, git_oid *out,
	       struct apply_fail *fail, struct pg_err *err)
{
	git_tree *base = NULL, *theirs = NULL;
	git_index *post = NULL, *merged = NULL;
	git_merge_options mo;
	git_oid base_id, theirs_id;
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
	rc = git_merge_options_init(&mo, GIT_MERGE_OPTIONS_VERSION);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: merge options");
		goto out;
	}
	mo.flags = GIT_MERGE_FIND_RENAMES;
	/* Every file of HEAD is an addition against the fake ancestor, so
	 * the default limit (200 candidates) would stop the detection of a
	 * rename made since the patch was written: allow the whole tree. */
	mo.target_limit = RENAME_LIMIT;
	rc = git_merge_trees(&merged, repo, base, head, theirs, &mo);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: merge");
		goto out;
	}
	if (git_index_has_conflicts(merged)) {
		ret = name_conflict(merged, fail, err);
		goto out;
	}
	rc = git_index_write_tree_to(out, merged, repo);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "3-way: write the merged tree");
		goto out;
	}
	ret = 0;
out:
	git_index_free(merged);
	git_index_free(post);
	git_tree_free(theirs);
	git_tree_free(base);
	return ret;
}
