/* SPDX-License-Identifier: MIT */
#ifndef PG_PROC_H
#define PG_PROC_H

/*
 * Running child processes (after git's run-command.h): git, meson, ninja,
 * dpdk-test, dpdk-testpmd.  A child is described by an argument vector,
 * never by a shell string.
 *
 *   const char *argv[] = { "ninja", "-C", "build", NULL };
 *   struct pg_proc p = PG_PROC_INIT;
 *   char desc[PG_PROC_DESC_MAX];
 *
 *   p.argv = argv;
 *   p.output_path = "/var/lib/perfgate/job-12/build.log";
 *   p.timeout_ms = 30 * 60 * 1000;
 *   if (pg_proc_run(&p, &err) < 0)
 *           ... could not run at all (err says why) ...
 *   else if (!pg_proc_succeeded(&p))
 *           ... "ninja: %s", pg_proc_describe(&p, desc, sizeof(desc)),
 *               and pg_buf_str(&p.tail) holds the last output ...
 *   pg_proc_release(&p);
 *
 * The child:
 *   - runs in its own process group, with every signal at its default
 *     disposition and none blocked, so a daemon's settings do not leak;
 *   - reads stdin from /dev/null unless told otherwise;
 *   - writes stdout and stderr, merged in order, to one pipe that the
 *     parent pumps into the output file (appended) and a bounded tail;
 *   - is killed with its whole group on timeout, on cancel, or (any
 *     stragglers only) when it exits: a benchmark's leftover children
 *     never keep running.
 *
 * Requirements on the calling process: do not reap children behind this
 * module's back (no waitpid(-1) in a SIGCHLD handler, SIGCHLD not set to
 * SIG_IGN), and ignore SIGPIPE if the stdin pipe is used (a write after the
 * child died then fails with EPIPE instead of killing the caller).
 * A struct pg_proc is used from one thread at a time.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "err.h"

#define PG_PROC_TAIL_DEFAULT	(64 * 1024)	/* bytes of output kept in memory */
#define PG_PROC_TAIL_LIMIT	(64 * 1024 * 1024)	/* the most tail_max may be */
#define PG_PROC_GRACE_DEFAULT	2000	/* ms between SIGTERM and SIGKILL */
#define PG_PROC_DESC_MAX	128	/* room for pg_proc_describe() */

enum pg_proc_stdin {
	PG_PROC_STDIN_NULL = 0,	/* /dev/null */
	PG_PROC_STDIN_FILE,	/* read from stdin_path */
	PG_PROC_STDIN_PIPE,	/* a pipe the caller writes to (stdin_fd) */
};

struct pg_proc {
	/*
	 * What to run, set by the caller.  Borrowed: everything pointed to
	 * must stay valid until pg_proc_wait() returns.  This module never
	 * modifies these fields.
	 */

	/* NULL-terminated; argv[0] is looked up in PATH when it has no
	 * slash (the PATH the child will see, else
	 * "/usr/local/bin:/usr/bin:/bin"). */
	const char *const *argv;
	const char *dir;		/* working directory; NULL: inherit */
	bool clear_env;			/* start from an empty environment */
	/* NULL-terminated "KEY=VALUE" lists that add to or override the
	 * inherited environment (the last one wins for a repeated key), and
	 * names to remove from it.  Either may be NULL.  env_set is applied
	 * after env_unset. */
	const char *const *env_set;
	const char *const *env_unset;
	enum pg_proc_stdin stdin_mode;
	const char *stdin_path;		/* for PG_PROC_STDIN_FILE */
	/* Output file (opened O_APPEND|O_CREAT, mode 0644 before umask, so
	 * the logs of several stages can accumulate); NULL: tail only. */
	const char *output_path;
	/* The most bytes of this run written to the output file; 0: no
	 * cap.  Output beyond it is still read, counted and kept in the
	 * tail, and output_truncated is set. */
	uint64_t output_max;
	/* Bytes of the end of output kept in `tail` (at most
	 * PG_PROC_TAIL_LIMIT); 0: none. */
	size_t tail_max;
	/* Deadline counted from pg_proc_start(); 0: none.  On expiry the
	 * group gets SIGTERM, then SIGKILL after kill_grace_ms (0 means
	 * PG_PROC_GRACE_DEFAULT). */
	unsigned int timeout_ms;
	unsigned int kill_grace_ms;
	/*
	 * Cancel hooks, polled by pg_proc_wait() at least every 100 ms.
	 * When *cancel_flag is non-zero (e.g. set by a signal handler or by
	 * the agent's loop when the controller cancels the job) or
	 * cancel_cb(cancel_arg) returns true, the group is terminated as by
	 * pg_proc_kill().  cancel_cb runs in the thread that waits; it must
	 * be quick and must not touch this struct.  Both are optional.
	 */
	volatile sig_atomic_t *cancel_flag;
	bool (*cancel_cb)(void *arg);
	void *cancel_arg;
	/*
	 * Watch hook, optional: called by pg_proc_wait() in the waiting
	 * thread, at least every 100 ms and after each piece of output is
	 * taken, while the child has not been reaped.  Unlike cancel_cb it
	 * gets the struct and may call pg_proc_close_stdin(),
	 * pg_proc_signal() and pg_proc_kill() on it, and read output_bytes,
	 * the output file and the tail so far (pg_buf_str(&p->tail), which
	 * may hold up to twice tail_max bytes until the end); it must not
	 * release or restart it.  For children driven by what they print:
	 * close stdin once a benchmark says it is running, stop a test
	 * after N result lines.
	 */
	void (*watch_cb)(struct pg_proc *p, void *arg);
	void *watch_arg;
	/*
	 * Output hook, optional: called by pg_proc_wait() with each chunk of
	 * output as it is read (all of it, in order, also past output_max),
	 * after the chunk went to the file and the tail, so that a log can
	 * be streamed while the child runs.  Chunks are not aligned to
	 * lines.  It runs in the thread that waits, between polls: a slow
	 * hook delays the deadline and cancel checks by as long as it takes
	 * (and the child blocks once the pipe is full), so keep it short or
	 * buffer.  It must not touch this struct.
	 */
	void (*output_cb)(void *arg, const char *data, size_t len);
	void *output_arg;

	/* Set by pg_proc_start(). */
	pid_t pid;		/* also the process group id */
	/* PG_PROC_STDIN_PIPE: the write end (blocking, close-on-exec),
	 * owned by this struct.  Write to it, then close it with
	 * pg_proc_close_stdin() (not close()) to send EOF; otherwise
	 * pg_proc_release() closes it. */
	int stdin_fd;

	/* Outcome, set by pg_proc_wait(). */
	bool exited;		/* true: exit_code is valid; false: term_signal */
	int exit_code;
	int term_signal;
	bool timed_out;		/* timeout_ms passed; the group was terminated */
	bool cancelled;		/* pg_proc_kill() or a cancel hook ended it */
	bool output_truncated;	/* output_bytes > output_max (with a cap) */
	uint64_t output_bytes;	/* all output the child wrote, capped or not */
	uint64_t duration_ms;	/* wall clock from start to reaping */
	/* The last min(output_bytes, tail_max) bytes of output, exactly,
	 * NUL-terminated (pg_buf_str()).  Final once pg_proc_wait() has
	 * returned; owned by this struct until pg_proc_release() (take it
	 * with pg_buf_detach() to keep it). */
	struct pg_buf tail;

	/* Private to proc.c. */
	int priv_state;
	bool priv_reaped;
	bool priv_term_sent;
	int priv_out_fd;
	int priv_file_fd;
	uint64_t priv_file_bytes;
	uint64_t priv_start_ms;
	uint64_t priv_kill_at_ms;
};

#define PG_PROC_INIT { \
	.stdin_fd = -1, \
	.tail_max = PG_PROC_TAIL_DEFAULT, \
	.kill_grace_ms = PG_PROC_GRACE_DEFAULT, \
	.tail = PG_BUF_INIT(0), \
	.priv_out_fd = -1, \
	.priv_file_fd = -1, \
}

/* Initialise in place (same as PG_PROC_INIT). */
void pg_proc_init(struct pg_proc *p);

/*
 * Spawn the child.  Returns 0 once the program has been exec'd: p->pid is
 * set, and p->stdin_fd for PG_PROC_STDIN_PIPE.
 *
 * Returns -1 and sets err when nothing runs (no child is left behind):
 *   - PG_EINVAL: bad description (empty argv, malformed env_set entry,
 *     tail_max over PG_PROC_TAIL_LIMIT, already started);
 *   - PG_ENOTFOUND: the program, working directory or stdin file does
 *     not exist;
 *   - PG_ENOMEM;
 *   - PG_EIO: anything else (not executable, open of the output file,
 *     fork, pipe).
 * Messages name the program and the step, e.g.
 *   "spawn 'nonexistent-prog': No such file or directory"
 *   "spawn 'meson': chdir '/nope': No such file or directory"
 *   "spawn 'ninja': open output '/x/build.log': Permission denied"
 * After a failure the struct can be started again or released.
 */
int pg_proc_start(struct pg_proc *p, struct pg_err *err);

/*
 * Pump the child's output into the file and tail, enforce the timeout and
 * cancel hooks, and reap the child.  Once the leader has exited, the rest
 * of its group gets SIGKILL, and reading stops at end of file, when the
 * group is gone, or kill_grace_ms later at most (a process that left the
 * group may hold the pipe open).
 *
 * Returns 0 when the child has been reaped, whatever its outcome: see
 * exited/exit_code/term_signal/timed_out/cancelled, pg_proc_succeeded()
 * and pg_proc_describe().  Returns -1 with err set:
 *   - PG_EINVAL: no started, unreaped child;
 *   - PG_EIO: writing the output file or keeping the tail failed (the
 *     child was still drained and reaped: the outcome fields are valid),
 *     or poll/waitpid failed (e.g. ECHILD when someone else reaped the
 *     child; the child may still run: pg_proc_release() kills it).
 */
int pg_proc_wait(struct pg_proc *p, struct pg_err *err);

/* pg_proc_start() then pg_proc_wait(); same returns. */
int pg_proc_run(struct pg_proc *p, struct pg_err *err);

/*
 * Terminate the child's group early (e.g. the job was cancelled): SIGTERM
 * now, and SIGKILL kill_grace_ms later from pg_proc_wait(), which must
 * still be called to reap the child.  Sets p->cancelled.  A no-op
 * returning 0 when the child was never started or is already reaped.
 * Returns -1 with PG_EIO when the group cannot be signalled.  Not for use
 * from a signal handler or another thread: use cancel_flag for that.
 */
int pg_proc_kill(struct pg_proc *p, struct pg_err *err);

/*
 * Send sig to the child's process group (e.g. SIGINT, which testpmd and
 * dpdk-test take as "stop and print what you have"), without marking it
 * cancelled; the timeout still applies.  A no-op returning 0 when the
 * child was never started or is already reaped.  Returns -1 with PG_EIO
 * when the group cannot be signalled.  Same threading rule as
 * pg_proc_kill().
 */
int pg_proc_signal(struct pg_proc *p, int sig, struct pg_err *err);

/* Close the stdin pipe (EOF for the child); safe to call twice. */
void pg_proc_close_stdin(struct pg_proc *p);

/*
 * Free the tail and close every descriptor.  A child still running is
 * killed with its group (SIGKILL) and reaped first, so nothing survives.
 * The description fields are kept: the struct may be started again.
 */
void pg_proc_release(struct pg_proc *p);

/* True when the child exited with status 0, without timeout or cancel. */
bool pg_proc_succeeded(const struct pg_proc *p);

/*
 * Describe the outcome for logs into buf (PG_PROC_DESC_MAX is enough):
 * "exited 0", "exited 2", "killed by signal 9 (timeout after 5000 ms)",
 * "killed by signal 15 (cancelled)", "running", "not started".
 * Returns buf (truncated text if size was too small; "" if size is 0
 * and buf is not written).
 */
const char *pg_proc_describe(const struct pg_proc *p, char *buf, size_t size);

#endif
