/* SPDX-License-Identifier: MIT */
#ifndef AGENT_SPOOL_H
#define AGENT_SPOOL_H

/*
 * The agent's spool: a directory of files that outlive the process, so
 * that neither an agent restart nor a controller restart loses a result.
 *
 *   spool_dir/lock                     held (flock) while an agent uses it
 *   spool_dir/job-ID-ATTEMPT.json      the job as leased, written before it
 *                                      runs, removed once it ends
 *   spool_dir/result-ID-ATTEMPT.json   the exact body of POST
 *                                      /jobs/ID/result, written before the
 *                                      first upload, removed once the
 *                                      controller acknowledged it
 *   spool_dir/rejected/result-ID-ATTEMPT.json     a result the controller
 *   spool_dir/rejected/result-ID-ATTEMPT.answer   refused (409...), kept
 *                                      for people with the answer
 *                                      ("HTTP 409\n" and the body)
 *
 * ID and ATTEMPT are decimal numbers without leading zeros.  Every file is
 * written whole or not at all (pg_write_file_atomic(): temporary file,
 * fsync, rename, fsync of the directory); a temporary left by a crash
 * ("NAME.tmp.PID") is removed by agent_spool_open() and never listed.
 * Removals are not fsynced: a removed file that comes back after a power
 * cut is at worst uploaded again, which the controller answers as a
 * duplicate.
 *
 * One process at a time: agent_spool_open() takes an exclusive flock on
 * the lock file (released by the kernel when the process dies, kill -9
 * included), so two agents configured with one spool cannot both upload
 * its results.  A struct agent_spool is used by one thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

enum agent_spool_kind {
	AGENT_SPOOL_JOB,
	AGENT_SPOOL_RESULT,
};

#define AGENT_SPOOL_NAME_MAX 64
/* The largest spooled file read back (a result with 100000 samples). */
#define AGENT_SPOOL_FILE_MAX ((size_t)64 * 1024 * 1024)

struct agent_spool {
	char *dir;
	char *rejected_dir;
	int lock_fd;
};

#define AGENT_SPOOL_INIT { NULL, NULL, -1 }

struct agent_spool_entry {
	enum agent_spool_kind kind;
	int64_t job_id;
	int64_t attempt;
	int64_t mtime_ns;		/* when it was written */
	char name[AGENT_SPOOL_NAME_MAX];
};

/*
 * Create dir (and dir/rejected) when missing, lock it, and remove the
 * temporaries a crash left behind (*removed_tmp says how many; may be
 * NULL).  Returns 0, or -1: PG_ECONFLICT when another process holds the
 * spool, PG_EIO and friends otherwise.  On error nothing needs closing.
 */
int agent_spool_open(struct agent_spool *sp, const char *dir, unsigned int *removed_tmp,
		     struct pg_err *err);

/*
 * The same, but when another process holds the lock, keep trying for up
 * to wait_ms (0: fail at once, as agent_spool_open()) before failing with
 * PG_ECONFLICT: for `run-one`, whose previous instance may still be
 * stopping its job and spooling its result.
 */
int agent_spool_open_wait(struct agent_spool *sp, const char *dir, int64_t wait_ms,
			  unsigned int *removed_tmp, struct pg_err *err);

/* Unlock and free; safe on AGENT_SPOOL_INIT, after a failed open, and
 * twice. */
void agent_spool_close(struct agent_spool *sp);

/*
 * Parse a spool file name ("job-12-3.json", "result-12-3.json").  Pure.
 * Returns 0 and fills the outputs, or -1 for any other name (temporaries,
 * "lock", "rejected", leading zeros, id or attempt 0 or over 2^53).
 */
int agent_spool_parse_name(const char *name, enum agent_spool_kind *kind, int64_t *job_id,
			   int64_t *attempt);

/* Write the file of (kind, id, attempt) atomically, replacing it. */
int agent_spool_write(const struct agent_spool *sp, enum agent_spool_kind kind,
		      int64_t job_id, int64_t attempt, const void *data, size_t len,
		      struct pg_err *err);

/* Append the file's bytes to b (bounded by b->max).  PG_ENOTFOUND when
 * there is no such file. */
int agent_spool_read(const struct agent_spool *sp, enum agent_spool_kind kind,
		     int64_t job_id, int64_t attempt, struct pg_buf *b, struct pg_err *err);

/* Remove the file; one that is already gone is fine. */
int agent_spool_remove(const struct agent_spool *sp, enum agent_spool_kind kind,
		       int64_t job_id, int64_t attempt, struct pg_err *err);

/* Whether the file exists. */
bool agent_spool_exists(const struct agent_spool *sp, enum agent_spool_kind kind,
			int64_t job_id, int64_t attempt);

/*
 * The files of one kind, oldest first (by modification time, then job id,
 * then attempt).  *out is malloc'd (NULL when *n is 0); caller frees.
 * Other names are ignored.
 */
int agent_spool_list(const struct agent_spool *sp, enum agent_spool_kind kind,
		     struct agent_spool_entry **out, size_t *n, struct pg_err *err);

/*
 * Move a result the controller refused into rejected/, next to its answer
 * (status and body), so that it is kept for people but never uploaded
 * again.  Replaces an earlier rejection of the same attempt.
 */
int agent_spool_reject(const struct agent_spool *sp, int64_t job_id, int64_t attempt,
		       long status, const char *answer, struct pg_err *err);

#endif
