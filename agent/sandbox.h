/* SPDX-License-Identifier: MIT */
#ifndef AGENT_SANDBOX_H
#define AGENT_SANDBOX_H

/*
 * The sandbox for untrusted code: builds and benchmarks of patches from
 * the list.  A command is wrapped into a longer argument vector for
 * lib/proc.h (never a shell string):
 *
 *   /usr/bin/prlimit --cpu=S:S+10 --data=B --nproc=N --
 *   /usr/bin/setpriv --reuid=U --regid=G --clear-groups --      (agent is root)
 *   /usr/bin/bwrap --unshare-all --unshare-user --disable-userns
 *       --die-with-parent  <system dirs read-only>  --dev /dev --proc /proc
 *       --size B --tmpfs /tmp  <workspace binds>  --remount-ro /
 *       --chdir DIR --  COMMAND...
 *
 * What the command gets:
 *   - no network: a network namespace of its own with only a loopback
 *     (a connect() elsewhere fails with "Network is unreachable"; the
 *     host's loopback services are not there);
 *   - an unprivileged user: when the agent runs as root, the configured
 *     user (setpriv drops to it before bwrap, so that outside the user
 *     namespace the files it writes belong to that user and it holds no
 *     capability anywhere); otherwise the agent's own user.  Inside, no
 *     further user namespaces (--disable-userns);
 *   - a file system that is read-only except the workspace: /usr, /etc,
 *     /bin, /sbin, /lib*, /sys and the configured ro_paths, read-only; the
 *     rest of the host (/home, /root, /var with the agent's token and
 *     spool, /srv, /run with its sockets) is not there at all, and the
 *     root that bwrap builds is read-only too; a minimal
 *     /dev, its own /proc (own pid namespace), a fresh /tmp (a tmpfs of
 *     memory_mb at most); the directories the caller names, bound at the
 *     same paths, read-write or read-only;
 *   - limits per process (prlimit(1) before anything runs): RLIMIT_CPU
 *     cpu_s seconds (SIGXCPU, then SIGKILL SANDBOX_CPU_GRACE_S later),
 *     RLIMIT_DATA memory_mb (a malloc beyond fails; RLIMIT_DATA rather
 *     than RLIMIT_AS because DPDK's EAL reserves hundreds of GiB of
 *     address space with PROT_NONE, which RLIMIT_AS counts and
 *     RLIMIT_DATA does not) and RLIMIT_NPROC max_procs (counted per user:
 *     a fork bomb stops there).
 *     The whole build or benchmark is bounded by its caller's deadline.
 *   - death with its parent: when the agent dies, the sandbox dies.
 *
 * It protects the host from the code.  It does not protect later
 * measurements from a deliberately malicious patch: the build directory
 * and the ccache directory it writes persist (see agent/build.h).
 *
 * Configuration (the agent configuration's "sandbox" object; every field
 * optional):
 *   enabled           default true.  false: this host runs every job
 *                     unsandboxed; only valid with allow_unsandboxed true,
 *                     so that the file says so twice
 *   user              default "perfgate-sandbox": the user that sandboxed
 *                     code runs as when the agent runs as root.  A
 *                     dedicated user rather than "nobody": nobody is
 *                     shared with other daemons (which could then tamper
 *                     with the files the builds leave, and count against
 *                     RLIMIT_NPROC), and the workspace it owns says
 *                     exactly who wrote it.  Create it with
 *                       useradd --system --user-group --no-create-home \
 *                         --home-dir /nonexistent --shell /usr/sbin/nologin \
 *                         perfgate-sandbox
 *                     Never "root".  Ignored when the agent is not root
 *                     (the sandbox then runs as the agent's user)
 *   cpu_s             RLIMIT_CPU per process, seconds; 0: none
 *                     (0..604800, default 7200; a benchmark's CPU time is
 *                     summed over its lcores)
 *   memory_mb         RLIMIT_DATA per process and the size of /tmp, MiB;
 *                     0: none (0 or 64..1048576, default 8192)
 *   max_procs         RLIMIT_NPROC, processes and threads of the user;
 *                     0: none (0 or 16..1048576, default 4096)
 *   allow_unsandboxed default false.  true: a job may ask for
 *                     "sandbox": false (a trusted lab host only)
 *   ro_paths          more absolute host paths the sandbox may read (e.g.
 *                     a toolchain under /opt); default none
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "err.h"

#define SANDBOX_BWRAP "/usr/bin/bwrap"
#define SANDBOX_SETPRIV "/usr/bin/setpriv"
#define SANDBOX_PRLIMIT "/usr/bin/prlimit"

#define SANDBOX_USER_DEFAULT "perfgate-sandbox"
#define SANDBOX_CPU_S_DEFAULT 7200
#define SANDBOX_CPU_S_MAX (7 * 86400)
#define SANDBOX_CPU_GRACE_S 10	/* hard RLIMIT_CPU above the soft one */
#define SANDBOX_MEMORY_MB_DEFAULT 8192
#define SANDBOX_MEMORY_MB_MIN 64
#define SANDBOX_MEMORY_MB_MAX (1024 * 1024)
#define SANDBOX_MAX_PROCS_DEFAULT 4096
#define SANDBOX_MAX_PROCS_MIN 16
#define SANDBOX_MAX_PROCS_MAX (1024 * 1024)
#define SANDBOX_RO_PATHS_MAX 32
/* sandbox_check()'s probe run: a deadline for bwrap to start `true`. */
#define SANDBOX_PROBE_TIMEOUT_MS 30000

struct sandbox_cfg {
	bool enabled;
	char *user;
	int64_t cpu_s;
	int64_t memory_mb;
	int64_t max_procs;
	bool allow_unsandboxed;
	char **ro_paths;
	size_t n_ro_paths;

	/* Resolved by sandbox_resolve() (tests may set them by hand). */
	bool resolved;
	bool drop;	/* the agent is root: setpriv to uid/gid first */
	uid_t uid;	/* who the sandboxed code runs as */
	gid_t gid;
};

/* The defaults above (user malloc'd).  Returns 0, or -1 (PG_ENOMEM). */
int sandbox_cfg_init(struct sandbox_cfg *c, struct pg_err *err);

/*
 * Read the fields of a "sandbox" object into c (which holds the defaults;
 * absent fields keep them) and validate them.  Unknown fields are errors.
 * Messages name the field as "field 'sandbox.cpu_s': ...".  Returns 0 or
 * -1 (PG_EINVAL, PG_ENOMEM); c stays freeable either way.
 */
int sandbox_cfg_parse(struct sandbox_cfg *c, const cJSON *obj, struct pg_err *err);

void sandbox_cfg_free(struct sandbox_cfg *c);

/* The configuration as --check-config prints it (the resolved fields are
 * host facts and not printed).  NULL when out of memory. */
cJSON *sandbox_cfg_to_json(const struct sandbox_cfg *c);

/*
 * Decide who the sandboxed code runs as: when the agent's effective uid
 * is 0, c->user looked up (PG_ENOTFOUND naming the user and how to create
 * it; PG_EINVAL when it is uid 0), else the agent's own uid and gid.  Sets
 * the resolved fields.  Returns 0 or -1.
 */
int sandbox_resolve(struct sandbox_cfg *c, struct pg_err *err);

/*
 * Check that the sandbox works on this host, for --check-config and the
 * daemon's start: the programs exist, sandbox_resolve(), then `true` run
 * in the sandbox (bwrap needs kernel user namespaces for unprivileged
 * users).  Returns 0, or -1 with a message that says what is missing and
 * how to fix it.  With c->enabled false, returns 0 at once.
 */
int sandbox_check(struct sandbox_cfg *c, struct pg_err *err);

/* One command to run in the sandbox.  Borrowed strings; lists are
 * NULL-terminated and may be NULL.  Paths are absolute and bound at the
 * same path inside. */
struct sandbox_cmd {
	const char *const *argv;	/* what to run (argv[0] looked up in
					 * the PATH of the environment) */
	const char *dir;		/* working directory; NULL: /tmp */
	const char *const *rw_paths;	/* read-write: build dir, ccache, output */
	const char *const *ro_paths;	/* read-only: the source tree */
	const char *const *dev_paths;	/* devices, read-write: /dev/hugepages */
};

/*
 * The wrapped argument vector (see the top of this file) for a resolved,
 * enabled c.  *out is malloc'd (free with sandbox_argv_free()).  Pure: it
 * touches nothing on the host.  Returns 0, or -1: PG_EINVAL (c not
 * resolved or not enabled, empty argv, a path that is not absolute),
 * PG_ENOMEM.
 */
int sandbox_wrap(const struct sandbox_cfg *c, const struct sandbox_cmd *cmd, char ***out,
		 struct pg_err *err);

void sandbox_argv_free(char **argv);

/*
 * Whether a job runs sandboxed on this host: the job's optional boolean
 * "sandbox" (default true).  *use is c for a sandboxed run and NULL for an
 * unsandboxed one (the job asked for it and c->allow_unsandboxed, or c is
 * not enabled on this host).  Returns 0, or -1 with PG_EINVAL when the
 * field is not a boolean, or the job asks for "sandbox": false and this
 * host does not allow it: the job then fails as an infrastructure error
 * with that message.
 */
int sandbox_for_job(const struct sandbox_cfg *c, const cJSON *job,
		    const struct sandbox_cfg **use, struct pg_err *err);

/*
 * Get a workspace directory ready for sandboxed code.  writable: create
 * it (and its parents, mode 0755) when missing and, when c->drop, hand
 * it over to the sandbox user (recursively, without following symbolic
 * links, when its top is not theirs yet: a cheap check on every call).
 * Either way every directory above it, and for a read-only one the
 * directory itself, must let the sandbox user through (PG_EINVAL naming
 * the directory and its mode otherwise).  c NULL (unsandboxed): only the
 * creation.  Returns 0 or -1.
 */
int sandbox_prepare_dir(const struct sandbox_cfg *c, const char *path, bool writable,
			struct pg_err *err);

/*
 * True when output (the start of what a wrapped command printed) says
 * that the sandbox itself could not be set up, rather than the command
 * failing: it starts with "bwrap: ", "setpriv: " or "prlimit: ".  The
 * caller then reports an infrastructure error, not a build failure.
 */
bool sandbox_setup_failed(const char *output, size_t len);

/* "bwrap as perfgate-sandbox (uid 999), no network, cpu 7200 s, data
 * 8192 MiB, 4096 processes" for logs; "unsandboxed" for NULL.  Returns
 * buf (truncated when short). */
const char *sandbox_describe(const struct sandbox_cfg *c, char *buf, size_t size);

#endif
