/* SPDX-License-Identifier: MIT */
#ifndef AGENT_WS_CHILD_H
#define AGENT_WS_CHILD_H

/*
 * The workspace operations that touch a tree made from a patch, run in a
 * child process behind the sandbox (DESIGN.md 2.5): checking out a slot
 * (which cleans what the last job left there) and applying a series to
 * it.  The agent never opens a slot's repository itself: libgit2 reads
 * and writes the slot only in a child that is
 *
 *   perfgate-agent workspace-checkout --work W --tree T --slot S
 *                  --mirror M --commit C --result R
 *   perfgate-agent workspace-apply --src D --mbox F --result R
 *                  [--max-total-bytes N --max-files N --max-file-bytes N
 *                   --used-bytes N --used-files N]
 *
 * wrapped by sandbox_wrap() when the job is sandboxed: the unprivileged
 * sandbox user, no network, the slot's src directory the only place it
 * may write besides the result directory, the mirror (for the objects)
 * and the agent's own program read-only, RLIMIT_DATA and RLIMIT_CPU from
 * ws_child_cfg.  The slot therefore belongs to the sandbox user
 * (sandbox_prepare_dir()).  The child writes its outcome as one JSON
 * document to the result file (in a directory of the job's own, read back
 * by the agent without following links); its log lines (stderr) go to the
 * job's "apply" log.
 *
 * Unsandboxed jobs (a trusted host) run the same child without the
 * wrapper, so the path rules and limits of patches/apply.h hold there
 * too, and the agent's memory never holds an expanded patch.
 *
 * A child that runs out of its memory or time on an apply is the series'
 * fault: an apply failure that says which limit; the sandbox failing to
 * start or a checkout that fails is an infrastructure error.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "apply.h"
#include "err.h"
#include "sandbox.h"

/* The agent configuration's "apply" object (every field optional). */
/* What a series may write (patches/apply.h pg_apply_limits), in MiB. */
#define WS_MAX_TOTAL_MB_DEFAULT ((int64_t)(PG_APPLY_DEFAULT_MAX_TOTAL_BYTES >> 20))
#define WS_MAX_FILES_DEFAULT ((int64_t)PG_APPLY_DEFAULT_MAX_FILES)
#define WS_MAX_FILE_MB_DEFAULT ((int64_t)(PG_APPLY_DEFAULT_MAX_FILE_BYTES >> 20))
#define WS_CHILD_MEMORY_MB_DEFAULT 2048	/* RLIMIT_DATA of the child */
#define WS_CHILD_TIMEOUT_S_DEFAULT 900	/* one checkout or apply */
#define WS_LIMIT_MB_MAX (64 * 1024)
#define WS_LIMIT_FILES_MAX 10000000
#define WS_CHILD_TIMEOUT_S_MAX 86400
/* The largest mbox a child is given (the runner's bound too). */
#define WS_MBOX_MAX (64u << 20)
/* The result file's bound: subjects and a reason per patch. */
#define WS_RESULT_MAX (8u << 20)

struct ws_child_cfg {
	int64_t max_total_mb;
	int64_t max_files;
	int64_t max_file_mb;
	int64_t memory_mb;
	int64_t timeout_s;
};

/* The defaults above. */
void ws_child_cfg_init(struct ws_child_cfg *c);

/* Read an "apply" object into c (which holds the defaults).  Unknown fields
 * and values out of range are errors naming "field 'apply.X'".  Returns 0
 * or -1 (PG_EINVAL). */
int ws_child_cfg_parse(struct ws_child_cfg *c, const cJSON *obj, struct pg_err *err);

/* For --check-config.  NULL when out of memory. */
cJSON *ws_child_cfg_to_json(const struct ws_child_cfg *c);

/* How the agent runs a child.  Borrowed. */
struct ws_child {
	const char *self_exe;		/* absolute path of perfgate-agent */
	const struct sandbox_cfg *sandbox;	/* resolved; NULL: unsandboxed */
	const struct ws_child_cfg *cfg;
	const char *io_dir;		/* the job's own directory for mboxes
					 * and results (created and handed to
					 * the sandbox user here) */
	/* Optional: the child's output as it comes; polled at least every
	 * 100 ms (true: stop the child now). */
	void (*log)(void *arg, const char *text, size_t len);
	bool (*stopped)(void *arg);
	void *arg;
};

/*
 * The agent program's own path (readlink of /proc/self/exe) into out
 * (size bytes).  Returns 0 or -1 (PG_EIO, PG_EINVAL when it does not fit).
 */
int ws_child_self_exe(char *out, size_t size, struct pg_err *err);

/*
 * ws_checkout() (agent/workspace.h) in a child.  Returns 0 with *src_path
 * (malloc'd), 1 when c->stopped() ended it, or -1 with err (the child's
 * own message when it wrote one, else how it ended).
 */
int ws_child_checkout(const struct ws_child *c, const char *work_dir, const char *tree,
		      const char *slot, const char *mirror_path, const char *commit,
		      char **src_path, struct pg_err *err);

/*
 * Apply mbox[0..len) (mboxrd) onto the slot at src_path (checked out by
 * ws_child_checkout(); mirror_path its objects) in a child, with the
 * limits of c->cfg; *used_bytes and *used_files count what the series
 * wrote so far (0 before its first mbox; updated), so that a
 * prerequisite's writes count towards the series' limits.  Returns as
 * pg_apply_mbox(): 0 all applied, 1 an apply failure (res says which
 * patch and why, also for a child that outran its memory or time: the
 * reason names the limit), 2 when c->stopped() ended it, -1 with err.
 */
int ws_child_apply(const struct ws_child *c, const char *src_path, const char *mirror_path,
		   const char *mbox, size_t len, uint64_t *used_bytes, uint64_t *used_files,
		   struct pg_apply_result *res, struct pg_err *err);

/*
 * The child's side: argv[0] is "workspace-checkout" or "workspace-apply"
 * (see the top).  Returns the exit status: 0 done, 1 an apply failure,
 * 2 usage, 3 an error (each also written to the result file when one
 * was named).
 */
int ws_child_main(int argc, char **argv);

/* Whether argv[1] names a child mode (for main()). */
bool ws_child_mode(int argc, char **argv);

#endif
