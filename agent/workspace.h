/* SPDX-License-Identifier: MIT */
#ifndef AGENT_WORKSPACE_H
#define AGENT_WORKSPACE_H

/*
 * The agent's workspace (DESIGN.md section 2.5): a mirror per tree, a
 * source tree per (tree, slot) that persists between jobs so that builds
 * are incremental, checkout of a job's base commit and application of its
 * series.  Everything is done with libgit2; nothing runs git.
 *
 *   WORK/mirrors/TREE.git    bare mirror of the tree's URL: every branch
 *                            (refs/heads/B there forced onto refs/heads/B
 *                            here; branches deleted upstream are kept, so
 *                            that an old base stays reachable), no tags;
 *                            fetched only when a job's base commit is
 *                            missing, incrementally (libgit2 negotiates
 *                            from the refs it has).
 *   WORK/slots/TREE/SLOT/src a non-bare repository per slot: a side of a
 *                            build slot (agent/slots.h), e.g.
 *                            "main.release.0123456789ab-base", or
 *                            "release-base" in a work directory from
 *                            before build slots: its
 *                            objects come from the mirror through
 *                            .git/objects/info/alternates (nothing is
 *                            copied or fetched into it); its own object
 *                            database holds only the commits ws_apply()
 *                            makes.  Chosen over a libgit2 worktree of the
 *                            mirror because a worktree shares the mirror's
 *                            refs and object database: every job's patch
 *                            commits would pile up in the mirror, and the
 *                            worktrees' HEADs would be the mirror's to
 *                            keep consistent across fetches.  Objects are
 *                            never pruned from a mirror (libgit2 does not
 *                            gc), so the alternates stay valid.
 *   WORK/slots/TREE/SLOT/build  the slot's build directory
 *                            (ws_build_dir()), beside the source and not
 *                            in it, so that a checkout never touches it;
 *                            and beside it in every slot, so that the
 *                            relative paths meson gives the compiler are
 *                            the same in all slots ("../src/lib/..."), and
 *                            ccache (CCACHE_BASEDIR=WORK, NOHASHDIR) hits
 *                            across slots: the patched side's first build
 *                            reuses the base side's objects.
 *
 * TREE and SLOT come from the controller: they must be ws_name_ok().
 * Functions open what they need and close it before returning (a
 * long-lived handle would serve objects from its cache after a fetch).
 * One job at a time per slot; two slots may be used from two threads.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apply.h"
#include "err.h"

#define WS_NAME_MAX 100			/* longest TREE or SLOT name */
#define WS_OID_HEX 40
/* What a fetch may take unless told: a first clone of DPDK over a slow
 * link takes minutes, a later fetch seconds. */
#define WS_FETCH_TIMEOUT_DEFAULT_MS (30 * 60 * 1000)

/* Whether name is a valid TREE or SLOT: 1..WS_NAME_MAX characters of
 * [A-Za-z0-9._+-], not starting with '.' or '-' (so no "..", no '/', no
 * hidden or option-like names). */
bool ws_name_ok(const char *name);

struct ws_sync_opts {
	int64_t timeout_ms;		/* 0: WS_FETCH_TIMEOUT_DEFAULT_MS */
	/* Polled whenever libgit2 reports progress (several times a second
	 * while data flows); true aborts the fetch.  May be NULL. */
	bool (*stopped)(void *arg);
	void *arg;
};

/*
 * Make sure WORK/mirrors/TREE.git has commit need_commit (40 hex digits;
 * NULL: just fetch): when it is there already, nothing is fetched;
 * otherwise the mirror is created on first use and every branch of url (an
 * absolute path, file://, http(s)://) is fetched into it, with progress
 * logged (component "workspace") and the deadline of
 * WS_FETCH_TIMEOUT_DEFAULT_MS.  *mirror_path gets the mirror's path
 * (malloc'd; the caller frees it), also on success without a fetch.
 *
 * Returns 0, or -1 with err:
 *   - PG_EINVAL: a bad TREE name or commit id, or a path too long;
 *   - PG_ENOTFOUND: the commit is still missing after the fetch;
 *   - PG_ETIMEOUT: the transfer outlasted the deadline;
 *   - PG_EIO: the URL cannot be read, the mirror cannot be made or read.
 * A failed fetch leaves the mirror as the last good one left it.
 */
int ws_mirror_sync(const char *work_dir, const char *tree, const char *url,
		   const char *need_commit, char **mirror_path, struct pg_err *err);

/* ws_mirror_sync() with a deadline and a stop hook (opts may be NULL).
 * Also returns 1 (nothing in *mirror_path) when opts->stopped() said so. */
int ws_mirror_sync_opts(const char *work_dir, const char *tree, const char *url,
			const char *need_commit, const struct ws_sync_opts *opts,
			char **mirror_path, struct pg_err *err);

/*
 * Check out commit (40 hex digits, in the mirror at mirror_path) in
 * WORK/slots/TREE/SLOT/src, creating that repository on first use: HEAD detached
 * at the commit, index and files forced to it (local changes and the
 * commits of an earlier ws_apply() dropped), untracked and ignored files
 * removed (only inside the slot's directory: the build directory is
 * elsewhere).  A file whose content does not change is not rewritten and
 * keeps its modification time, so that ninja rebuilds only what changed
 * since the slot's last job.  *src_path gets the slot's path (malloc'd).
 *
 * Returns 0, or -1 with err: PG_EINVAL (a bad name or commit id, a path
 * too long, or the slot's path is not a plain directory), PG_ENOTFOUND
 * (the mirror lacks the commit), PG_EIO.
 */
int ws_checkout(const char *work_dir, const char *tree, const char *slot,
		const char *mirror_path, const char *commit, char **src_path,
		struct pg_err *err);

/*
 * Apply the series in mbox[0..len) onto the checked-out HEAD of the slot at
 * src_path (as ws_checkout() left it), one commit per patch: see
 * pg_apply_mbox() for the methods, the result and the return value.  The
 * mbox is read as mboxrd, the format the controller serves
 * (GET /api/v1/series/{id}/mbox).  Prerequisite series (Depends-on:) are
 * applied by calling this for each of their mboxes first, in the order the
 * job lists them.
 */
int ws_apply(const char *src_path, const char *mbox, size_t len, struct pg_apply_result *res,
	     struct pg_err *err);

/* ws_apply() within limits (NULL: the defaults), with *usage (NULL: none)
 * counting what the series' earlier mboxes wrote, updated: see
 * pg_apply_mbox_opts(). */
int ws_apply_opts(const char *src_path, const char *mbox, size_t len,
		  const struct pg_apply_limits *limits, struct pg_apply_usage *usage,
		  struct pg_apply_result *res, struct pg_err *err);

/* WORK/slots/TREE/SLOT/build into *out (malloc'd; not created).  Returns 0, or
 * -1 with PG_EINVAL (a bad name, a path too long) or PG_ENOMEM. */
int ws_build_dir(const char *work_dir, const char *tree, const char *slot, char **out,
		 struct pg_err *err);

#endif
