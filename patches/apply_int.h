/* SPDX-License-Identifier: MIT */
#ifndef PG_APPLY_INT_H
#define PG_APPLY_INT_H

/* Internals shared by apply.c (the driver), apply_offset.c and
 * apply_3way.c (the two fallbacks after libgit2's exact apply),
 * apply_paths.c (which paths a patch may touch) and apply_limits.c (how
 * much it may write). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <git2.h>

#include "apply.h"
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

/* Symbolic links the patches of one pg_apply_mbox() call made, so that a
 * refusal can say which patch made the link a later patch writes beyond. */
struct apply_link {
	char *path;
	size_t patch;		/* 1-based among the patch mails */
};

struct apply_links {
	struct apply_link *v;
	size_t n, alloc;
};

/* Record the links that the deltas of diff (patch number `patch`, just
 * committed) leave.  Returns 0, or -1 with PG_ENOMEM. */
int apply_links_add(struct apply_links *l, git_diff *diff, size_t patch, struct pg_err *err);

void apply_links_free(struct apply_links *l);

/*
 * Before anything of the patch is applied: every old and new path of
 * every delta of diff must pass pg_apply_path_ok() and lie beyond no
 * symbolic link (a proper prefix that the patch makes a link, or, unless
 * the patch deletes or renames that link away as git apply allows, a link
 * in tree head or in the working tree, looked at with lstat()).  earlier:
 * the links made by earlier patches of this call (may be NULL), npatches
 * the number of patches, both for the message.  Returns 0; 1 with *fail
 * naming the path as the patch wrote it and the rule ("path has a '..'
 * component", "path is beyond a symbolic link 'x' (created by patch
 * 1/2)"); -1 on a libgit2 or memory error.
 */
int apply_check_paths(git_repository *repo, git_tree *head, git_diff *diff,
		      const struct apply_links *earlier, size_t npatches,
		      struct apply_fail *fail, struct pg_err *err);

/*
 * Before libgit2 inflates anything: each binary patch of diff (both
 * sides, literal or delta) must inflate to exactly the length it
 * declares (measured by streaming, nothing kept), a literal or a delta's
 * result (from its header) may not exceed lim->max_file_bytes, nor the
 * new files together with used->total_bytes lim->max_total_bytes.
 * Returns 0; 1 with *fail naming the file and the limit ("writes a 512
 * MiB file (limit 64 MiB, apply.max_file_mb)"); -1 on error.
 */
int apply_limits_binary(git_diff *diff, const struct pg_apply_limits *lim,
			const struct pg_apply_usage *used, struct apply_fail *fail,
			struct pg_err *err);

/*
 * After the patch is applied in memory into tree tree_id, before the
 * checkout: every file created or changed against head (what the
 * checkout writes) must pass pg_apply_path_ok() and be at most
 * lim->max_file_bytes, and their count and sizes added to *used must stay
 * within lim.  *adds gets this patch's count and bytes.  Returns 0; 1
 * with *fail; -1 on a libgit2 error.
 */
int apply_limits_result(git_repository *repo, git_tree *head, const git_oid *tree_id,
			const struct pg_apply_limits *lim, const struct pg_apply_usage *used,
			struct pg_apply_usage *adds, struct apply_fail *fail, struct pg_err *err);

/* A size for people into out: "512 MiB", "1.5 KiB", "12 bytes". */
void apply_size_str(char *out, size_t len, uint64_t v);

#endif
