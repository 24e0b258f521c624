/* SPDX-License-Identifier: MIT */
#ifndef AGENT_BUILD_H
#define AGENT_BUILD_H

/*
 * Build one DPDK tree in one persistent build directory with meson and
 * ninja, so that a job costs an incremental build, not a cold one.
 *
 *   1. VERSION of the source tree read, beneath it and never through a
 *      symbolic link (and compared with the job's
 *      tree.version: a mismatch is noted in the log and the result, since
 *      the planner chose the version-gated meson options by it).
 *   2. `meson setup` only when needed.  The options of the last successful
 *      setup are kept in a stamp file BESIDE the build directory
 *      (BUILD_DIR.setup.json, out of reach of the sandboxed build):
 *        - no stamp, or no build.ninja: the directory's contents are
 *          removed and it is set up afresh ("fresh"; also after a setup
 *          that failed or was interrupted);
 *        - another meson version or source directory, or an option that
 *          was set before is gone now (meson keeps old values, so only a
 *          new directory forgets one): removed and set up afresh ("wipe");
 *        - values changed or options added: `meson setup --reconfigure`
 *          with every option ("reconfigure"), which keeps the objects;
 *        - the same: no setup at all ("none"); ninja still regenerates by
 *          itself when a meson.build changed.
 *      The command is `meson setup -Dbuildtype=B -Dc_args=C -Dname=value...
 *      BUILD SRC` (c_args always given, empty when the job has none, so
 *      that dropping it is a value change).  The stamp is removed before
 *      a setup runs and written (atomically) only after it succeeded.
 *   3. `ninja -C BUILD [targets]`.
 *
 * Each command runs in the sandbox when spec->sandbox is set (the source
 * tree read-only, the build and ccache directories read-write; see
 * agent/sandbox.h), with a fixed environment: PATH=/usr/bin:/bin:/usr/sbin:
 * /sbin (/usr/bin first, so that python3 is the system one with elftools),
 * HOME=/tmp, TMPDIR=/tmp, LC_ALL=C (ASCII messages), NINJA_STATUS="[%f/%t] "
 * (ninja, writing to a pipe, also strips the compilers' colours), and
 * ccache: CCACHE_DIR=ccache_dir, CCACHE_BASEDIR=ccache_basedir,
 * CCACHE_NOHASHDIR=1 (debugoptimized has -g: without it ccache hashes the
 * working directory), or CCACHE_DISABLE=1 when ccache_dir is NULL.  meson
 * picks up ccache itself, from PATH.
 *
 * ccache hashes part of the environment too (LC_ALL among others): it is
 * fixed here so that every build of a host shares one cache.
 *
 * ccache hits across build directories (a wiped directory, a new
 * worktree) need the same relative paths: give every (tree, side) one
 * directory that holds both its source and its build directories, e.g.
 * WORK/dpdk/base/{src,build-release} and WORK/dpdk/patched/{src,...},
 * with ccache_basedir = WORK; and one ccache_dir per build type and side
 * on a host (WORK/ccache/release for base builds, WORK/ccache/release-
 * patched for patched ones), with ccache_shared_dir WORK/ccache/release-
 * shared that base builds fill and patched builds only read.
 *
 * The whole output (the commands as "+ meson setup ...", perfgate's notes
 * as "perfgate: ...", then meson's and ninja's output) goes to log_path
 * (appended) and, as it comes, to spec->log in chunks of whole lines
 * (flushed at least every second and at the end).
 *
 * Trust: the sandboxed build can write its build directory, which later
 * builds of the same slot reuse, and, unless ccache_readonly, its ccache
 * directory (and a shared one it does not only read).  That protects the
 * host, not later measurements of the same slot or cache, from a patch
 * written to skew them: give patched builds caches of their own.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "sandbox.h"

#define BUILD_TAIL_MAX (8 * 1024)	/* bytes of log kept in build_result.tail */
#define BUILD_VERSION_MAX 32
#define BUILD_OPTIONS_MAX 128
#define BUILD_STAMP_SUFFIX ".setup.json"
/* The most a shared cache may hold before a base build empties it
 * (ccache does not trim its file storage itself). */
#define BUILD_SHARED_MAX ((uint64_t)4 << 30)

struct build_spec {
	const char *src_dir;		/* absolute; the tree to build */
	const char *build_dir;		/* absolute; created when missing */
	const char *ccache_dir;		/* absolute; NULL: ccache disabled */
	const char *ccache_basedir;	/* absolute; NULL: none */
	/* Use the cache without adding to it (CCACHE_READONLY, the cache
	 * directory bound read-only in the sandbox): for a patched tree, so
	 * that objects compiled from a patch never reach a base build. */
	bool ccache_readonly;
	/* Optional: a second cache that base builds fill and patched builds
	 * only read (ccache's file storage, CCACHE_SECONDARY_STORAGE), so that
	 * a patched build can keep a writable cache of its own (ccache_dir)
	 * and still hit the objects of base builds: absolute, of
	 * [A-Za-z0-9/._+-] only (it is written into ccache's URL).  Read-write
	 * (ccache_shared_readonly false), every result goes to it, hits too
	 * (CCACHE_RESHARE), and it is emptied first when it holds over
	 * BUILD_SHARED_MAX bytes; read-only, it is bound read-only in the
	 * sandbox. */
	const char *ccache_shared_dir;
	bool ccache_shared_readonly;
	uint64_t ccache_shared_max;	/* 0: BUILD_SHARED_MAX */
	const char *log_path;		/* appended to; its directory must exist */
	const char *buildtype;		/* "release", "debugoptimized", ... */
	/* {"name": "value", ...}: strings, names [a-z0-9_]+ other than
	 * buildtype and c_args; NULL for none.  The job spec's
	 * build.meson_options, as the planner made them for the version. */
	const cJSON *meson_options;
	const char *c_args;		/* NULL: none */
	const char *const *targets;	/* ninja targets, NULL-terminated; NULL: all */
	const char *expect_version;	/* the job's tree.version; NULL: unknown */
	unsigned int timeout_s;		/* the whole build; 0: none */
	const struct sandbox_cfg *sandbox;	/* resolved; NULL: unsandboxed */
	/* Optional.  log gets the output as it comes; stopped is polled at
	 * least every 100 ms (true: stop now, e.g. the job was cancelled). */
	void (*log)(void *arg, const char *text, size_t len);
	bool (*stopped)(void *arg);
	/* Optional: ninja's "[N/M]" as it prints one (done N of total M; M
	 * can grow when ninja regenerates), for the job's heartbeats. */
	void (*progress)(void *arg, long done, long total);
	void *arg;
};

struct build_result {
	bool ok;		/* built */
	bool stopped;		/* spec->stopped() ended it */
	bool timed_out;		/* timeout_s passed */
	/* The sandbox itself could not start (bwrap, setpriv or prlimit
	 * failed before the command ran): an infrastructure error, not a
	 * build failure. */
	bool sandbox_failed;
	bool setup_ran;		/* meson setup ran (see setup) */
	const char *setup;	/* "none", "fresh", "wipe", "reconfigure" */
	long steps;		/* ninja's "[N/M]" lines; 0 for "no work to do" */
	uint64_t duration_ms;	/* the whole call */
	uint64_t setup_ms;
	uint64_t ninja_ms;
	/* What failed and how, e.g. "ninja: exited 1", "meson setup: killed
	 * by signal 15 (timeout after 60000 ms)"; NULL when ok.  malloc'd. */
	char *failed_step;
	char *tail;		/* the log's last BUILD_TAIL_MAX bytes; malloc'd */
	char *version;		/* VERSION of the tree; malloc'd, NULL if unreadable */
	bool version_mismatch;	/* version differs from spec->expect_version */
};

#define BUILD_RESULT_INIT { .setup = "none" }

/*
 * Build.  Returns 0 when the build ran to an outcome: res->ok says
 * whether it built; otherwise failed_step and tail say why, and stopped,
 * timed_out and sandbox_failed how; a VERSION that build_read_version()
 * refuses (a symbolic link, not a regular file, too big, not a version)
 * is such an outcome too, failed_step "VERSION: <why>", nothing run.
 * Returns -1 with err when it could not
 * run at all: a bad spec (PG_EINVAL: missing field, bad option name or
 * value type), no VERSION file in src_dir (PG_ENOTFOUND), the build
 * directory or log cannot be made or written, meson or ninja cannot be
 * started (PG_EIO, PG_ENOTFOUND), out of memory.  res is filled as far as
 * it got either way; release it with build_result_release().
 */
int build_dpdk(const struct build_spec *spec, struct build_result *res, struct pg_err *err);

void build_result_release(struct build_result *res);

/* DPDK's VERSION file of src_dir, e.g. "22.11.11" or "24.11.0-rc1", read
 * beneath src_dir (lib/fsbeneath.h): never through a symbolic link, only
 * a regular file of at most 4096 bytes.  *version is malloc'd.  Returns 0,
 * or -1: PG_ENOTFOUND (no file), PG_EINVAL (a symbolic link: "'SRC/VERSION'
 * is a symbolic link: refused"; not a regular file; not a version),
 * PG_ETOOBIG, PG_EIO.  No message quotes the file unless it is a
 * plain string of version characters. */
int build_read_version(const char *src_dir, char **version, struct pg_err *err);

/* Remove path and everything beneath it, never following a symbolic link
 * (a link is removed, not its target); a missing path is fine.  For the
 * build slots (agent/slots.h), whose build directories the sandbox wrote.
 * Returns 0, or -1 with err (PG_EIO, PG_EINVAL when nested too deep). */
int build_remove_tree(const char *path, struct pg_err *err);

/* The allocated bytes (st_blocks) of everything beneath the directory
 * path, never following a symbolic link, within budget_ms milliseconds (0:
 * no bound): *complete false when the walk stopped at the bound (*bytes
 * then counts what was seen).  A missing path counts 0.  Returns 0, or -1
 * with err (path a symbolic link: PG_EINVAL; unreadable: PG_EIO). */
int build_tree_size(const char *path, uint64_t budget_ms, uint64_t *bytes, bool *complete,
		    struct pg_err *err);

/*
 * Pure helpers, exposed for tests.
 */

/* The first line of a VERSION file's text, trimmed: it must start with a
 * digit and hold only [0-9A-Za-z.+_-], at most BUILD_VERSION_MAX bytes.
 * *out malloc'd.  Returns 0 or -1 (PG_EINVAL, PG_ENOMEM).  The message
 * names no file (the caller prefixes it) and quotes the line only when
 * every byte of it is a version character: the text is a stranger's and
 * messages reach the public log. */
int build_parse_version(const char *text, size_t len, char **out, struct pg_err *err);

/* True when path may be a ccache_shared_dir: ccache's storage URL
 * ("file:PATH|attr") carries it as is, so only [A-Za-z0-9/._+-]. */
bool build_ccache_url_ok(const char *path);

/* One line of ninja output (without its newline): 1 with *done and *total
 * for "[N/M] ...", 2 for "ninja: no work to do.", 0 otherwise. */
int build_ninja_line(const char *line, size_t len, long *done, long *total);

/* The stamp of a spec: {"meson": meson_version, "src_dir": ..., "options":
 * {"buildtype": ..., "c_args": ..., name: value...}} with options sorted
 * by name.  NULL with err on a bad option or out of memory. */
cJSON *build_stamp(const struct build_spec *spec, const char *meson_version,
		   struct pg_err *err);

enum build_setup {
	BUILD_SETUP_NONE = 0,
	BUILD_SETUP_FRESH,
	BUILD_SETUP_WIPE,
	BUILD_SETUP_RECONFIGURE,
};

/* What setup a build directory with stamp `old` (NULL: none) needs for
 * stamp `want` (see the top of this file; build.ninja is the caller's
 * check). */
enum build_setup build_setup_needed(const cJSON *old, const cJSON *want);

/* "none", "fresh", "wipe", "reconfigure". */
const char *build_setup_name(enum build_setup s);

/* The meson argument vector for a setup (`meson setup [--reconfigure]
 * -Dbuildtype=... -Dc_args=... -Dname=value... BUILD SRC`) from a stamp's
 * options; malloc'd, free with sandbox_argv_free().  NULL when out of
 * memory. */
char **build_meson_argv(const cJSON *stamp, const char *build_dir, const char *src_dir,
			bool reconfigure);

#endif
