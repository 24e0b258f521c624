/* SPDX-License-Identifier: MIT */
#ifndef PG_APPLY_H
#define PG_APPLY_H

/*
 * Applying a series from its mbox onto a libgit2 repository, one commit per
 * patch, the way `git am -3` does, with what libgit2 1.5 offers.
 *
 * The mbox is split with pg_mbox_split() and each mail read with
 * pg_mail_parse(); mails without a diff (cover letters, replies without a
 * patch, notes) and "0/N" cover letters are skipped.  Every other mail is a
 * patch, applied in mbox order onto the checked-out HEAD of a non-bare
 * repository whose index and working tree match HEAD.  Per patch, the first
 * method that works wins:
 *
 *   exact   git_apply() to the index and the working tree
 *           (GIT_APPLY_LOCATION_BOTH): every hunk at the line its @@ header
 *           names.  libgit2 1.5 has no offset search, no fuzz, no 3-way.
 *   offset  every hunk found with its context intact at the nearest line
 *           to the one named (searching both ways from there, as `git
 *           apply` and GNU patch do), hunks kept in order and apart.  As in
 *           git apply, a hunk that starts at line 1 (or 0) must match at
 *           the top of the file and one without trailing context at its
 *           end; no fuzz (no context line is ever dropped).  This is what
 *           rescues a patch whose preimage blobs are not in the repository
 *           (made on a tree we do not have) when lines moved above it.
 *   3way    git am -3's "fake ancestor": a tree of the touched files alone,
 *           each at the preimage blob named on the patch's "index abc..def"
 *           line (it must be in the object database: a mirror has the
 *           whole history); the patch applied to it in memory
 *           (git_apply_to_tree()) is "theirs", HEAD's tree "ours", and
 *           git_merge_trees() with the fake ancestor as base and rename
 *           detection over the whole tree merges them, so that a file
 *           HEAD renamed since gets the change.  Accepted only when the
 *           merge has no conflict.
 *
 * The diff goes to libgit2 as pg_mail_parse() cut it; when libgit2 refuses
 * it, once more without the block of trailers that git format-patch puts
 * after the last file ("base-commit: ..."), which libgit2 1.5 reads as a
 * file header when the last file has no hunk (a mode change).
 *
 * The result of each patch is committed with the mail's author (name,
 * address; an empty name takes the address, as git does), its date (the
 * Date: header, with the zone offset it was written in; now when the mail
 * has none), the fixed committer PG_APPLY_COMMITTER_NAME <..._EMAIL> at
 * the current time, and the message git am writes: the subject (an
 * in-body "Subject:" line when there is one) without its [PATCH ...]
 * prefixes, a blank line, the commit message (without the "---" notes and
 * the diffstat), cleaned up as git's stripspace does (git_message_prettify).
 *
 * When a patch fails every method, nothing of it is kept: HEAD stays at the
 * commit of the last patch that applied, and the index and working tree at
 * that commit.  Files that a patch does not change are never rewritten, so
 * their modification times survive (incremental builds rely on it).
 */

#include <stdbool.h>
#include <stddef.h>

#include <git2.h>

#include "buf.h"
#include "err.h"
#include "mbox.h"

#define PG_APPLY_COMMITTER_NAME "perfgate"
#define PG_APPLY_COMMITTER_EMAIL "perfgate@localhost"
#define PG_APPLY_OID_HEX 40

enum pg_apply_method {
	PG_APPLY_NOT_TRIED = 0,	/* after an earlier patch failed */
	PG_APPLY_EXACT,
	PG_APPLY_OFFSET,
	PG_APPLY_3WAY,
	PG_APPLY_FAILED,
};

/* What happened to one patch mail. */
struct pg_apply_patch {
	char *subject;			/* without [PATCH ...]; never NULL */
	enum pg_apply_method method;
	long offset;			/* PG_APPLY_OFFSET: the largest shift of a
					 * hunk, in lines (signed); else 0 */
	char commit[PG_APPLY_OID_HEX + 1];	/* the commit made; "" when none */
};

/*
 * The outcome of pg_apply_mbox(), which overwrites it whole (release an
 * earlier result first); release with pg_apply_result_release(), whatever
 * pg_apply_mbox() returned.  Every char * is NULL or a NUL-terminated
 * string owned by the struct.
 */
struct pg_apply_result {
	size_t n_patches;		/* patch mails in the mbox */
	size_t n_skipped;		/* mails that were not patches */
	size_t n_applied;		/* patches committed, from the first on */
	struct pg_apply_patch *patches;	/* n_patches entries, in mbox order */

	/* The patch that failed; all zero/NULL when every patch applied. */
	size_t failed_patch;		/* 1-based among the patch mails; 0: none */
	char *failed_subject;
	char *failed_file;		/* the path it is about; NULL when the
					 * failure is not about one file */
	size_t failed_hunk_index;	/* 1-based hunk of that file; 0: none */
	char *failed_hunk;		/* its "@@ -a,b +c,d @@ ..." header line */
	char *reason;			/* why, in words (libgit2's message,
					 * "3-way merge conflict", "preimage blob
					 * 1234abc is not in the repository") */
};

#define PG_APPLY_RESULT_INIT { 0, 0, 0, NULL, 0, NULL, NULL, 0, NULL, NULL }

/*
 * Apply the patches of mbox[0..len) (format fmt: PG_MBOX_MBOXRD for what the
 * controller serves, PG_MBOX_MBOXO for `git format-patch` output) onto the
 * HEAD of repo, a non-bare repository with a commit checked out (attached or
 * detached) and a clean index and working tree.
 *
 * Returns
 *    0  every patch applied: HEAD moved by one commit per patch;
 *    1  a patch failed: res names it (failed_*, reason); HEAD is at the
 *       commit of the last patch that applied, index and working tree clean
 *       at it;
 *   -1  an error that is not the patches' fault, or an mbox without any
 *       patch (err: PG_EINVAL "mbox holds no patch (N mails, none with a
 *       diff)"), a mail that cannot be parsed (PG_EINVAL naming its number),
 *       PG_EIO from libgit2 (no HEAD, index or disk trouble), PG_ENOMEM.
 *       res->patches says what was applied before the error.
 */
int pg_apply_mbox(git_repository *repo, const char *mbox, size_t len, enum pg_mbox_format fmt,
		  struct pg_apply_result *res, struct pg_err *err);

/* Free what res owns and zero it.  res may be NULL. */
void pg_apply_result_release(struct pg_apply_result *res);

/* "exact", "offset", "3way", "failed", "not-tried". */
const char *pg_apply_method_name(enum pg_apply_method m);

/*
 * One line (no newline) saying what failed, for job details and logs:
 *   patch 2/3 "net/null: fix foo": drivers/net/null/rte_eth_null.c hunk #1
 *   (@@ -120,6 +120,7 @@ eth_dev_info): 3-way merge conflict
 * or "applied 3/3 patches (exact 2, offset 0, 3way 1)" when none failed.
 * Returns 0, or -1 with errno from pg_buf_add() (E2BIG, ENOMEM).
 */
int pg_apply_describe(const struct pg_apply_result *res, struct pg_buf *out);

#endif
