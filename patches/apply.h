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
 *   exact   git_apply_to_tree() onto HEAD's tree, in memory: every hunk
 *           at the line its @@ header names.  libgit2 1.5 has no offset
 *           search, no fuzz, no 3-way.
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
 *           merge has no conflict.  Rename detection looks at the part of
 *           HEAD that can matter (apply_3way.c): the patch's paths and, for
 *           a file HEAD lacks, HEAD's files with its blob, its name or in
 *           its directory.  A conflict names the file the patch touches
 *           (a content conflict first, in the patch's order), what kind it
 *           is, and every other conflicting file.
 *   already when the 3-way merge gives HEAD's tree unchanged, the patch is
 *           already applied (a fix backported since): as `git am -3`
 *           ("No changes -- Patch already applied."), no commit is made
 *           and the series goes on with the next patch.
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
 * Patches come from anyone, so nothing of a patch reaches the working tree
 * before it passed these checks, each failing it as a patch failure
 * (return 1, the reason naming the rule or the limit):
 *
 *   paths   before any method: every old and new path of every delta
 *           (renames and copies too), as libgit2 decoded it from the
 *           patch (C-quoted names unquoted), keeps git's path rules
 *           (pg_apply_path_ok() in apply_paths.h: relative, no empty, "."
 *           or ".." component, no ".git" nor what NTFS or HFS+ read as
 *           it, no control byte) and lies beyond no symbolic link: no
 *           proper prefix of it is a link the same patch makes (mode
 *           120000), nor, unless the patch deletes or renames that link
 *           away (as git apply allows), a link in HEAD's tree (which holds
 *           the links earlier patches and earlier mboxes made) or in the
 *           working tree (lstat(), not followed).
 *   NUL     before libgit2 reads the diff: a diff with a NUL byte fails
 *           ("the diff has a NUL byte (line N of the diff)"): libgit2 1.5
 *           reads such a line past its end, and git never writes one in a
 *           text diff (binary content goes base85-encoded).
 *   header  before libgit2 reads the diff: a file header (from its
 *           "diff --git" line to its first "@@ -", "GIT binary patch",
 *           "Binary files ", "-- " or next "diff --git" line) with two
 *           old-side lines ("rename from", "rename old", "copy from") or
 *           two new-side ones ("rename to", "rename new", "copy to") fails
 *           ("the diff's header repeats 'rename from' (line N of the
 *           diff)", or "has 'copy from' after 'rename from'" for two
 *           names of a side): libgit2 1.5 leaks the first path, and git
 *           writes one of each at most (git apply takes the last).
 *   binary  before any method, so before libgit2 inflates anything: each
 *           "GIT binary patch" side inflates to the length it declares
 *           (streamed, nothing kept: libgit2 would inflate a whole stream
 *           into memory before comparing), and the file it makes (a
 *           literal's length, a delta's result size from its header) is
 *           within the limits below.
 *   result  after the method made the patched tree in memory, before the
 *           checkout: every file the checkout will create or change is
 *           within the limits, and its path keeps git's rules.
 *
 * Every method makes a tree in memory; only then is it checked out (index
 * and working tree, writing only the files that differ) and committed.
 * When a patch fails, nothing of it is kept: HEAD stays at the commit of
 * the last patch that applied, and the index and working tree at that
 * commit.  Files that a patch does not change are never rewritten, so
 * their modification times survive (incremental builds rely on it).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	PG_APPLY_ALREADY,	/* already in HEAD: no commit (see above) */
};

#define PG_APPLY_N_METHODS (PG_APPLY_ALREADY + 1)

/* What patches wrote, as the limits count it (see pg_apply_limits). */
struct pg_apply_usage {
	uint64_t total_bytes;
	uint64_t files;
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
	size_t n_already;		/* patches already in HEAD: no commit */
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
					 * 1234abc is not in the repository",
					 * "path has a '..' component", "writes
					 * a 512 MiB file (limit 64 MiB,
					 * apply.max_file_mb)") */
	struct pg_apply_usage used;	/* what the patches committed by this
					 * call wrote (see pg_apply_limits) */
};

/*
 * What the patches of a series may write, counted per patch as its
 * checkout writes it: a file a patch creates or changes counts once with
 * its whole new size (a file changed by three patches counts three
 * times); deletions count nothing; the base checkout is not counted.
 * The defaults are far beyond any real DPDK series (the whole tree is
 * about 100 MiB and 10,000 files).  A limit of UINT64_MAX is no limit.
 */
struct pg_apply_limits {
	uint64_t max_total_bytes;	/* bytes written by all patches */
	uint64_t max_files;		/* files created or changed by all patches */
	uint64_t max_file_bytes;	/* the largest file a patch may write */
};

#define PG_APPLY_DEFAULT_MAX_TOTAL_BYTES (256ull << 20)
#define PG_APPLY_DEFAULT_MAX_FILES 20000ull
#define PG_APPLY_DEFAULT_MAX_FILE_BYTES (64ull << 20)

/* The configuration keys the refusals name ("(limit 64 MiB,
 * apply.max_file_mb)"), for the agent's configuration to use: the total
 * and the file size in MiB, the files as a count. */
#define PG_APPLY_KEY_MAX_TOTAL "apply.max_total_mb"
#define PG_APPLY_KEY_MAX_FILES "apply.max_files"
#define PG_APPLY_KEY_MAX_FILE "apply.max_file_mb"

#define PG_APPLY_OPTS_VERSION 1

/* How to apply: set up with PG_APPLY_OPTS_INIT, then change fields. */
struct pg_apply_opts {
	unsigned int version;		/* PG_APPLY_OPTS_VERSION */
	enum pg_mbox_format fmt;	/* PG_MBOX_MBOXO (the default) or _MBOXRD */
	struct pg_apply_limits limits;	/* a field left 0 takes its default */
	/* The series' running count, for a series applied as several
	 * mboxes (prerequisites, then the series): NULL counts this call
	 * alone; else it holds what earlier calls wrote on entry, the
	 * limits apply to it plus this call, and the patches this call
	 * commits are added to it as they are committed. */
	struct pg_apply_usage *usage;
};

#define PG_APPLY_OPTS_INIT { PG_APPLY_OPTS_VERSION, PG_MBOX_MBOXO, { 0, 0, 0 }, NULL }

#define PG_APPLY_RESULT_INIT { 0, 0, 0, 0, NULL, 0, NULL, NULL, 0, NULL, NULL, { 0, 0 } }

/*
 * Apply the patches of mbox[0..len) (format opts->fmt: PG_MBOX_MBOXRD for
 * what the controller serves, PG_MBOX_MBOXO for `git format-patch` output)
 * onto the HEAD of repo, a non-bare repository with a commit checked out
 * (attached or detached) and a clean index and working tree, within
 * opts->limits (opts NULL: PG_APPLY_OPTS_INIT).
 *
 * Returns
 *    0  every patch applied: HEAD moved by one commit per patch that was
 *       not already applied (n_applied of them; n_already made none);
 *    1  a patch failed, by every method or by a check above (a path rule,
 *       a limit): res names it (failed_*, reason); HEAD is at the commit
 *       of the last patch that applied, index and working tree clean at
 *       it;
 *   -1  an error that is not the patches' fault, or an mbox without any
 *       patch (err: PG_EINVAL "mbox holds no patch (N mails, none with a
 *       diff)"), a mail that cannot be parsed (PG_EINVAL naming its number),
 *       an opts->version this library does not know (PG_EINVAL), PG_EIO
 *       from libgit2 (no HEAD, index or disk trouble), PG_ENOMEM.
 *       res->patches says what was applied before the error.
 * Whatever it returns, res->used and *opts->usage count the patches
 * committed.
 */
int pg_apply_mbox_opts(git_repository *repo, const char *mbox, size_t len,
		       const struct pg_apply_opts *opts, struct pg_apply_result *res,
		       struct pg_err *err);

/* pg_apply_mbox_opts() with format fmt, the default limits, and no usage
 * carried from earlier calls. */
int pg_apply_mbox(git_repository *repo, const char *mbox, size_t len, enum pg_mbox_format fmt,
		  struct pg_apply_result *res, struct pg_err *err);

/* Free what res owns and zero it.  res may be NULL. */
void pg_apply_result_release(struct pg_apply_result *res);

/* "exact", "offset", "3way", "failed", "not-tried", "already". */
const char *pg_apply_method_name(enum pg_apply_method m);

/*
 * One line (no newline) saying what failed, for job details and logs:
 *   patch 2/3 "net/null: fix foo": drivers/net/null/rte_eth_null.c hunk #1
 *   (@@ -120,6 +120,7 @@ eth_dev_info): 3-way merge conflict
 * or "applied 3/3 patches (exact 2, offset 0, 3way 1)" when none failed,
 * ("applied 3/3 patches (exact 2, offset 0, 3way 0, already applied 1)"
 * when some were already applied, "no change: all 3 patches are already
 * applied" when all were).
 * Returns 0, or -1 with errno from pg_buf_add() (E2BIG, ENOMEM).
 */
int pg_apply_describe(const struct pg_apply_result *res, struct pg_buf *out);

#endif
