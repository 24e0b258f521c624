/* SPDX-License-Identifier: MIT */
#ifndef CTL_TREES_H
#define CTL_TREES_H

/*
 * Tree mirrors: the controller's bare copies of the git trees that the
 * profiles name (DESIGN.md section 2.3), kept with libgit2.  The planner
 * needs them for three questions only, all answered locally once a tree
 * has been synced: where is the tip of a branch, does a commit named by a
 * `base-commit:` trailer exist, and which DPDK version is a commit (for
 * the version-gated meson options of a build mode).
 *
 * A tree's mirror is MIRROR_ROOT/NAME.git, a bare repository whose
 * branches are the branches of the tree's URL (each refs/heads/B there is
 * forced onto refs/heads/B here, and pruned: a branch deleted upstream goes
 * away here too).  No tags are fetched and no working tree exists.  The URL
 * is taken from the profile on every sync (no "origin" is configured, and
 * git's url.*.insteadOf rewriting is not applied), so a tree whose URL
 * changes keeps its mirror.  libgit2 1.5 cannot fetch shallow, so the
 * first sync of a big tree copies its whole history; later syncs are
 * incremental.
 *
 *   char mirror[TREES_PATH_MAX], tip[TREES_OID_HEX + 1];
 *   if (trees_sync(root, tree, 0, &err) < 0 ||
 *       trees_mirror_path(root, tree->name, mirror, sizeof(mirror), &err) < 0 ||
 *       trees_resolve_branch(mirror, "main", tip, &err) < 0)
 *           ...
 *
 * Every function opens the mirror for the call and closes it again: a
 * long-lived handle would keep serving objects from its cache after a
 * fetch has moved or pruned the refs.  Functions are safe to call from
 * several threads on different mirrors; two syncs of one mirror at once
 * are serialised by git's own ref locks (the loser fails with PG_EIO and
 * succeeds on the next pass).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "profile.h"

#define TREES_OID_HEX 40		/* a full SHA-1 in hex */
#define TREES_VERSION_MAX 32		/* room for a VERSION string and its NUL */
#define TREES_PATH_MAX 4096
/* What a sync may take when the caller passes 0: the first clone of DPDK
 * over a slow link takes minutes; a later fetch takes seconds. */
#define TREES_SYNC_TIMEOUT_DEFAULT_MS (30 * 60 * 1000)

/*
 * The mirror path of tree `name` under mirror_root ("ROOT/NAME.git") into
 * out[outlen].  Returns 0, or -1 with PG_EINVAL when it does not fit.
 */
int trees_mirror_path(const char *mirror_root, const char *name, char *out, size_t outlen,
		      struct pg_err *err);

/*
 * Bring the mirror of tree t up to date with t->url (an absolute path,
 * file://, http(s)://, or git:// / ssh:// when libgit2 was built with
 * them): create MIRROR_ROOT (and the mirror) on first use, fetch every
 * branch of t->url with pruning, and point the mirror's HEAD at
 * t->default_branch when the remote has it.  Progress
 * is logged (component "trees") at most once a second; the end of the
 * sync is logged with its object count and duration.
 *
 * timeout_ms bounds the transfer (0: TREES_SYNC_TIMEOUT_DEFAULT_MS).  It
 * is checked whenever libgit2 reports progress, so a server that accepts
 * the connection and then sends nothing at all is bounded only by the
 * operating system's TCP timeouts (libgit2 1.5 has no connect timeout).
 *
 * Returns 0, or -1 with err naming the tree and the URL:
 *   - PG_ETIMEOUT: the transfer outlasted timeout_ms;
 *   - PG_EIO: the remote cannot be reached or read (a missing local path
 *     included), the mirror cannot be created or updated, or it belongs to
 *     another user;
 *   - PG_EINVAL: a path does not fit in TREES_PATH_MAX.
 * A failed sync leaves the mirror as the last successful one left it
 * (refs move only after a complete download).
 *
 * Repair: a mirror is a cache of t->url (a local path is mirrored as
 * well, never read in place), so a damaged one is fetched again.  After a
 * fetch, and after a fetch that failed with what libgit2 calls damage, the
 * mirror alone is checked (HEAD, the profile's branches, every ref, the
 * commit and top tree at each branch tip); when that check, or opening
 * the mirror, fails with damage (a ref, HEAD or packed-refs that does not
 * parse, an object or pack that is corrupt, truncated or missing under a
 * branch), a warning names the mirror and libgit2's message, the mirror
 * is renamed to MIRROR_ROOT/NAME.git.damaged (an older copy there is
 * removed first: at most one is kept) and fetched again from scratch, once
 * per call; a failure of that fetch is returned as above.  A network
 * failure, a timeout, an operating-system error, damage in a local source
 * (the mirror then reads well) or a mirror of another user never move the
 * mirror.  A repair may take up to twice timeout_ms.
 */
int trees_sync(const char *mirror_root, const struct profile_tree *t, unsigned int timeout_ms,
	       struct pg_err *err);

/*
 * The commit at the tip of refs/heads/BRANCH of the bare repository at
 * `mirror` (a path, as trees_mirror_path() gives), as 40 lowercase hex
 * digits and a NUL in oid_hex.  Returns 0, or -1 with
 *   - PG_ENOTFOUND: no such branch (never fetched, or deleted upstream);
 *   - PG_EINVAL: branch is not a valid branch name;
 *   - PG_EIO: the mirror cannot be opened or read.
 */
int trees_resolve_branch(const char *mirror, const char *branch,
			 char oid_hex[TREES_OID_HEX + 1], struct pg_err *err);

/* Whether s is a full object name: exactly 40 hex digits (either case). */
bool trees_oid_valid(const char *s);

/*
 * Whether the commit oid_hex (40 hex digits, as `git format-patch --base`
 * writes in a `base-commit:` trailer; abbreviations are refused) exists in
 * the mirror.  An object of that name that is not a commit counts as
 * absent.  Existence is all that is checked: the commit need not be on a
 * branch that is still there.  Returns 0 and sets *has, or -1 with
 * PG_EINVAL (not 40 hex digits) or PG_EIO (the mirror cannot be read).
 */
int trees_has_commit(const char *mirror, const char *oid_hex, bool *has, struct pg_err *err);

/*
 * Where each of the n commits oids[] (40 hex digits each) stands on the
 * first-parent line of refs/heads/BRANCH of the mirror, as git log
 * --first-parent walks it from the tip: pos[i] is 0 for the oldest commit
 * of that line, counting up to the tip, or -1 when oids[i] is not among
 * the first max_walk commits from the tip (not on the line, or older).
 * The walk stops as soon as every commit asked for is found.  Returns 0,
 * or -1 with PG_ENOTFOUND (no such branch), PG_EINVAL (a malformed oid,
 * a bad branch name) or PG_EIO (the mirror cannot be read).
 */
int trees_first_parent_positions(const char *mirror, const char *branch, const char *const *oids,
				 size_t n, size_t max_walk, int64_t *pos, struct pg_err *err);

/*
 * The commits of the first-parent line of refs/heads/BRANCH after `before`
 * up to `after` (both 40 hex digits), oldest first, `after` last, into out
 * (room for max; *n gets how many).  A bisection's range: the commits
 * that may have brought a change first seen at `after`.  Returns 0, or -1
 * with PG_ENOTFOUND (no such branch; `after` not on its first-parent line;
 * `before` not an ancestor on that line within TREES_RANGE_WALK_MAX
 * commits), PG_ETOOBIG (more than max commits between them), PG_EINVAL
 * (a malformed oid or branch name) or PG_EIO.
 */
#define TREES_RANGE_WALK_MAX 200000
int trees_first_parent_range(const char *mirror, const char *branch, const char *before,
			     const char *after, char (*out)[TREES_OID_HEX + 1], size_t max,
			     size_t *n, struct pg_err *err);

/*
 * The DPDK version at commit oid_hex (40 hex digits) of the mirror: the
 * first line of the VERSION file at the top of the tree, white space
 * trimmed, e.g. "22.11.0" or "24.03.0-rc0", into out.  Returns 0, or -1
 * with
 *   - PG_ENOTFOUND: no such commit, or it has no VERSION file;
 *   - PG_EINVAL: oid_hex is malformed, or VERSION is empty, longer than
 *     TREES_VERSION_MAX - 1 bytes, not a regular file, or holds anything
 *     but printable ASCII;
 *   - PG_EIO: the mirror cannot be read.
 * Parse the result with profile_parse_version().
 */
int trees_version(const char *mirror, const char *oid_hex, char out[TREES_VERSION_MAX],
		  struct pg_err *err);

/* A commit as an alert names it: its author and its subject line. */
#define TREES_PERSON_MAX 256
#define TREES_SUMMARY_MAX 512
struct trees_commit_info {
	char author_name[TREES_PERSON_MAX];
	char author_email[TREES_PERSON_MAX];
	char summary[TREES_SUMMARY_MAX];	/* the first line of the message */
	int64_t author_time;			/* seconds since the epoch */
};

/*
 * The author and subject of commit oid_hex in the mirror.  Texts come from
 * whoever wrote the commit: they are cut at a character to fit, and
 * callers sanitise them before they show them.  Returns 0, or -1 with
 * err: PG_ENOTFOUND no such commit, PG_EINVAL a malformed oid, PG_EIO.
 */
int trees_commit_info(const char *mirror, const char *oid_hex, struct trees_commit_info *out,
		      struct pg_err *err);

#endif
