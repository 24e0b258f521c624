/* SPDX-License-Identifier: MIT */
#ifndef PG_APPLY_INT_H
#define PG_APPLY_INT_H

/* Internals shared by apply.c (the driver), apply_offset.c and
 * apply_3way.c (the two fallbacks after libgit2's exact apply). */

#include <stdbool.h>
#include <stddef.h>

#include <git2.h>

#include "err.h"

/* Why a patch does not apply by one method: the first file and hunk that
 * failed, when the failure is about one. */
struct apply_fail {
	char *file;		/* NULL: not about one file */
	size_t hunk;		/* 1-based; 0: not about one hunk */
	char *hunk_header;	/* "@@ ... @@ ...", no newline; NULL with hunk 0 */
	char *reason;
	bool conflict;		/* a 3-way merge conflict in `file` */
};

/* Replace *f with the given values (conflict false) (hunk_header: the libgit2 hunk's
 * header, header_len bytes, may be NULL).  Returns 0, or -1 with
 * PG_ENOMEM. */
int apply_fail_set(struct apply_fail *f, const char *file, size_t hunk,
		   const char *hunk_header, size_t header_len, struct pg_err *err,
		   const char *fmt, ...) __attribute__((format(printf, 7, 8)));

void apply_fail_clear(struct apply_fail *f);

/* Move src into dst (dst cleared first, src left empty). */
void apply_fail_move(struct apply_fail *dst, struct apply_fail *src);

/*
 * The offset search (see apply.h): apply every delta of diff to the files
 * of tree base, each hunk at the nearest line where its preimage matches.
 * Returns 0 with the resulting tree in *out and the largest hunk shift (in
 * lines, signed) in *max_shift; 1 when some hunk matches nowhere (*fail
 * names the first one); -1 on a libgit2 or memory error (err).
 */
int apply_offset(git_repository *repo, git_tree *base, git_diff *diff, git_oid *out,
		 long *max_shift, struct apply_fail *fail, struct pg_err *err);

/*
 * The first hunk of `path` in diff that does not match at any line of
 * the file as it is in tree base, for naming the hunk of a 3-way
 * conflict: sets *hunk (1-based, 0 when every hunk matches somewhere or
 * the path is not in the diff) and *header (the libgit2 hunk header, not
 * NUL-terminated, valid while diff lives; NULL with hunk 0) and *header_len.
 * Returns 0, or -1 on error.
 */
int apply_offset_first_bad_hunk(git_repository *repo, git_tree *base, git_diff *diff,
				const char *path, size_t *hunk, const char **header,
				size_t *header_len, struct pg_err *err);

/*
 * The three-way fallback (see apply.h) onto tree head.  Returns 0 with the
 * merged tree in *out; 1 when a preimage blob is missing, the patch does
 * not apply to its own preimage, or the merge conflicts (*fail says which
 * file and why); -1 on a libgit2 or memory error (err).
 */
int apply_3way(git_repository *repo, git_tree *head, git_diff *diff, git_oid *out,
	       struct apply_fail *fail, struct pg_err *err);

#endif
