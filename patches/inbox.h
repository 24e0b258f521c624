/* SPDX-License-Identifier: MIT */
#ifndef PG_INBOX_H
#define PG_INBOX_H

/*
 * Reading public-inbox mailing-list archives over git (libgit2).
 *
 * An archive is either
 *   - v2: a directory holding git/0.git, git/1.git, ... ("epochs", a new
 *     one roughly every gigabyte), one message per commit as the blob "m"
 *     at the top of the commit's tree, or the blob "d" for a message that
 *     was deleted (public-inbox-learn rm/spam);  all.git next to git/ has
 *     no refs (it only borrows the epochs' objects), so it is not read;
 *   - v1: one bare repository, one commit per message adding the file
 *     "xx/yyyy..." named by the SHA-1 of its Message-ID; a deletion is a
 *     commit removing such a file.  It is epoch 0 here.
 *
 * The source is a local path, read in place, or a URL (any "scheme://",
 * e.g. https://inbox.dpdk.org/dev), which pg_inbox_fetch() mirrors into
 * a directory the caller names: MIRROR/git/N.git per epoch for v2 (so the
 * mirror is itself a v2 layout), MIRROR/v1.git for v1.  A remote v2
 * archive serves epoch N at URL/git/N.git (what public-inbox-httpd and
 * `git http-backend` over the inbox directory both answer); a v1 archive
 * is the URL itself.  Epoch 0 must exist remotely for a v2 archive to be
 * recognised.
 *
 * Tailing: the caller keeps, per epoch, the id of the last commit it has
 * consumed (its cursor) and asks for what follows.  Commits come oldest
 * first.  When the cursor is no longer an ancestor of the epoch's head
 * (public-inbox-purge and public-inbox-edit rewrite history, and a
 * fresh mirror then lacks the old commits altogether), the epoch is
 * rescanned from its first commit and every message of that pass is
 * flagged `rescan`: the caller must expect messages it already has, and
 * dedupe them by Message-ID and position.
 *
 * Typical pass:
 *
 *   struct pg_inbox *ib;
 *   if (pg_inbox_open(&ib, "https://inbox.dpdk.org/dev", "/var/lib/x/dev",
 *                     &err) < 0 || pg_inbox_fetch(ib, &err) < 0)
 *           ...
 *   if (pg_inbox_tail(ib, cursors, ncursors, on_msg, ctx, &res, &err) < 0)
 *           ...
 *   pg_inbox_close(ib);
 *
 * A struct pg_inbox is used by one thread at a time; several may be open
 * at once.  Everything it reports (strings, message bytes) is valid only
 * during the callback that receives it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Hex digits of a commit id (SHA-1; libgit2 1.5 knows no other). */
#define PG_INBOX_OID_HEXSZ 40

/* Default bound on one message (see pg_inbox_set_max_size()). */
#define PG_INBOX_MAX_SIZE_DEFAULT ((size_t)32 * 1024 * 1024)

/* Default bound on one pg_inbox_fetch() (see pg_inbox_set_fetch_timeout()). */
#define PG_INBOX_FETCH_TIMEOUT_DEFAULT (10u * 60 * 1000)

/* Highest epoch number accepted (public-inbox is far from it). */
#define PG_INBOX_EPOCH_MAX 9999

enum pg_inbox_format {
	PG_INBOX_UNKNOWN = 0,	/* a remote not fetched yet */
	PG_INBOX_V1,
	PG_INBOX_V2,
};

enum pg_inbox_kind {
	/* A message: data/size hold it, raw (RFC 5322, as delivered). */
	PG_INBOX_MESSAGE = 0,
	/* A deleted message (v2 "d" blob, v1 file removal): data/size hold
	 * the removed message, so that its Message-ID can be read; data is
	 * NULL when it is over the size bound (size then gives its size). */
	PG_INBOX_DELETE,
	/* A message over the size bound: data is NULL, size is its size.
	 * It was never loaded into memory. */
	PG_INBOX_TOO_BIG,
	/* A commit without a message: the empty "m" blob that
	 * public-inbox-purge leaves in place of a purged message, a v1
	 * commit touching no message file.  data is NULL, size 0. */
	PG_INBOX_NONE,
};

/* What the walk callback receives for each commit. */
struct pg_inbox_msg {
	int epoch;
	const char *oid;	/* the commit, PG_INBOX_OID_HEXSZ hex digits */
	int64_t time;		/* its committer time, seconds since 1970 (UTC) */
	enum pg_inbox_kind kind;
	/* Not NUL-terminated; NULL when kind has no bytes.  A bogus leading
	 * mbox "From " line (old imports) is already cut off. */
	const char *data;
	size_t size;
	/* True on every commit of an epoch being rescanned because its
	 * history was rewritten: the message may have been seen before. */
	bool rescan;
};

/*
 * Called once per commit, oldest first.  Return 0 to continue, >0 to stop
 * after this commit (it counts as consumed: it is the result's last_oid,
 * so a caller that commits in batches returns 1 on the batch's last
 * message and resumes later from that id), <0 to fail the walk; the
 * callback may then describe the failure in err (otherwise a generic
 * message is set), and last_oid stays at the previous commit.
 */
typedef int (*pg_inbox_cb)(const struct pg_inbox_msg *msg, void *arg, struct pg_err *err);

struct pg_inbox_walk_result {
	/* The last commit passed to the callback and consumed (0 or >0
	 * returned), or the cursor given when there was none ("" when the
	 * walk started from the beginning and saw nothing). */
	char last_oid[PG_INBOX_OID_HEXSZ + 1];
	size_t count;		/* commits consumed */
	bool rewritten;		/* the cursor was not an ancestor: rescanned */
	bool stopped;		/* the callback returned >0 */
};

/* A caller's position in one epoch; oid "" means "from the beginning". */
struct pg_inbox_cursor {
	int epoch;
	char oid[PG_INBOX_OID_HEXSZ + 1];
};

struct pg_inbox_tail_result {
	size_t count;		/* commits consumed, all epochs together */
	size_t rewrites;	/* epochs rescanned */
	bool stopped;		/* the callback returned >0 */
	/* Where the pass ended: the epoch and commit last consumed (oid ""
	 * when nothing was consumed; epoch -1 then). */
	int last_epoch;
	char last_oid[PG_INBOX_OID_HEXSZ + 1];
};

struct pg_inbox;

/*
 * Open an archive.  `source` is a local path (a v2 inbox directory or a
 * v1 bare repository) or a URL; `mirror_dir` is where a URL is mirrored
 * (created when missing; required for a URL, ignored for a path, may be
 * NULL then).  Nothing touches the network here.
 *
 * Returns 0 and sets *ib, or -1 with err set:
 *   - PG_ENOTFOUND: the local path does not exist;
 *   - PG_EINVAL: it is not an archive (no git/N.git epochs and not a git
 *     repository, or an extindex's ALL.git), or a URL without mirror_dir;
 *   - PG_EIO: the mirror directory cannot be created, libgit2 failed,
 *     or the repository belongs to another user: libgit2 refuses it like
 *     git without a safe.directory entry (the message says how to allow
 *     it; pg_inbox_walk() says the same for an epoch);
 *   - PG_ENOMEM.
 */
int pg_inbox_open(struct pg_inbox **ib, const char *source, const char *mirror_dir,
		  struct pg_err *err);

/* Free everything; NULL is fine. */
void pg_inbox_close(struct pg_inbox *ib);

/* Bound one message (default PG_INBOX_MAX_SIZE_DEFAULT); bigger ones are
 * reported as PG_INBOX_TOO_BIG.  0 restores the default. */
void pg_inbox_set_max_size(struct pg_inbox *ib, size_t max_size);

/* Bound one pg_inbox_fetch() in milliseconds (0 restores the default).
 * libgit2 1.5 has no socket timeouts: the deadline is enforced from its
 * progress callbacks, so a server that accepts the connection and then
 * never answers is only noticed when data moves again. */
void pg_inbox_set_fetch_timeout(struct pg_inbox *ib, unsigned int ms);

/* The archive's format (PG_INBOX_UNKNOWN for a remote not yet fetched
 * into an empty mirror). */
enum pg_inbox_format pg_inbox_format(const struct pg_inbox *ib);

/* True when the source is a URL. */
bool pg_inbox_is_remote(const struct pg_inbox *ib);

/*
 * Bring the mirror of a remote archive up to date: on first use find out
 * whether it is v2 (URL/git/0.git answers) or v1 (the URL answers); fetch
 * every epoch already mirrored (old epochs are rewritten by purges too),
 * then try epoch N+1, N+2, ... after the highest until one is missing.
 * Branches are mirrored under their own names, forced (a purge rewrites
 * them) and pruned, and each mirror's HEAD follows the remote's.  Progress
 * goes to the log (component "inbox"): received objects and bytes at most
 * once a second, then a summary per epoch.  A no-op returning 0 for a
 * local source.
 *
 * Returns 0, or -1 with err set:
 *   - PG_ENOTFOUND: nothing answers at the URL on first use;
 *   - PG_ETIMEOUT: the fetch timeout passed;
 *   - PG_EIO: the network or libgit2 failed (epochs fetched before the
 *     failure stay updated).
 */
int pg_inbox_fetch(struct pg_inbox *ib, struct pg_err *err);

/*
 * List the epochs present now, ascending (a local v2 directory is read
 * again on each call; a remote's are those in the mirror).  *epochs
 * points into ib and stays valid until the next call on ib; *n may be 0
 * (a remote not fetched yet, a v2 inbox before its first message).
 * Returns 0, or -1 with PG_EIO/PG_ENOMEM.
 */
int pg_inbox_epochs(struct pg_inbox *ib, const int **epochs, size_t *n, struct pg_err *err);

/*
 * Walk one epoch from `cursor` (exclusive; NULL or "" for the first
 * commit) to its head (the commit HEAD names; refs/heads/master when HEAD
 * is dangling; the only branch when there is no master), calling cb for
 * each commit, oldest first.  An epoch with no commits walks nothing.
 *
 * The cursor must be 40 hex digits.  When it names no commit in the epoch
 * (purged and pruned, or never there) or one that is not an ancestor of
 * the head, the history was rewritten: res->rewritten is set, a warning
 * is logged, and the whole epoch is walked with msg->rescan set.
 *
 * Returns 0 (res filled) when the walk reached the head or the callback
 * stopped it, or -1 with err set (res tells how far it got):
 *   - PG_EINVAL: the cursor is not 40 hex digits; epoch out of range;
 *   - PG_ENOTFOUND: no such epoch (for a remote: not fetched yet);
 *   - PG_EIO: libgit2 failed, or an object is missing or corrupt (the
 *     message names the epoch and commit);
 *   - whatever the callback set when it returned <0.
 */
int pg_inbox_walk(struct pg_inbox *ib, int epoch, const char *cursor, pg_inbox_cb cb, void *arg,
		  struct pg_inbox_walk_result *res, struct pg_err *err);

/*
 * Walk every epoch in ascending order, each from the caller's cursor for
 * it (cursors[i].epoch; an epoch without a cursor is walked from its
 * first commit; a cursor for an epoch that no longer exists is ignored),
 * with pg_inbox_walk()'s rules.  After the last epoch a local source's
 * epoch list is read again, so an epoch created meanwhile is walked in
 * the same pass (a remote's new epochs arrive with pg_inbox_fetch()).
 * Stops early when the callback returns >0.
 *
 * Returns 0 or -1 as pg_inbox_walk() (res tells how far it got).
 */
int pg_inbox_tail(struct pg_inbox *ib, const struct pg_inbox_cursor *cursors, size_t ncursors,
		  pg_inbox_cb cb, void *arg, struct pg_inbox_tail_result *res,
		  struct pg_err *err);

/* "message", "delete", "too-big", "none". */
const char *pg_inbox_kind_name(enum pg_inbox_kind kind);

/* "v1", "v2", "unknown". */
const char *pg_inbox_format_name(enum pg_inbox_format format);

#endif
