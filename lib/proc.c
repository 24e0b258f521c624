/* SPDX-License-Identifier: MIT */
/*
 * Child processes: fork + execve of an argument vector, output pumped into
 * a log file and a bounded tail, a deadline enforced on the whole process
 * group (see proc.h).
 *
 * Everything the child needs (environment, candidate program paths) is
 * built before fork(), so that the child only makes async-signal-safe
 * calls: the caller may have other threads holding malloc's locks.
 */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "fsutil.h"
#include "log.h"

/* Not declared by <unistd.h> without _GNU_SOURCE, yet POSIX. */
extern char **environ;

#ifndef NSIG
#define NSIG 65
#endif

#define POLL_MAX_MS	100	/* cancel and child-exit checks at least this often */
#define READ_CHUNK	(32 * 1024)
/* Reads per pump, so that a chatty child cannot starve the deadline. */
#define PUMP_READS_MAX	32
#define DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"
#define PATH_ENTRY_MAX	(16 * 1024)

enum { ST_IDLE = 0, ST_RUNNING, ST_DONE };

/* What the child reports through the close-on-exec pipe when it cannot
 * exec; end of file instead means that exec succeeded. */
enum child_stage { STAGE_SETUP = 1, STAGE_CHDIR, STAGE_EXEC };

struct child_report {
	int stage;
	int err;
};

/* Prepared by the parent, read by the child between fork and exec. */
struct spawn_plan {
	char **envp;		/* pointers into environ and env_set */
	char **paths;		/* candidate files for argv[0], owned */
	size_t npaths;
	int in_fd;		/* the child's ends */
	int out_fd;
	int report_fd;
};

enum pump_result { PUMP_EOF, PUMP_EMPTY, PUMP_MORE };

static uint64_t now_ms(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC is mandatory since POSIX.1-2008: this cannot fail
	 * with a valid clock id and pointer. */
	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
	/* Only for pipe ends and read-only files: a failing close loses no
	 * data there, and retrying after EINTR could close a reused fd. */
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}

/* pipe2() needs _GNU_SOURCE here; the window before FD_CLOEXEC is set only
 * matters to a concurrent fork in another thread. */
static int make_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		return -1;
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(fds[1], F_SETFD, FD_CLOEXEC) < 0) {
		int saved = errno;

		close_fd(&fds[0]);
		close_fd(&fds[1]);
		errno = saved;
		return -1;
	}
	return 0;
}

static size_t key_len(const char *kv)
{
	const char *eq = strchr(kv, '=');

	return eq ? (size_t)(eq - kv) : strlen(kv);
}

static bool same_key(const char *a, const char *b)
{
	size_t n = key_len(a);

	return n == key_len(b) && strncmp(a, b, n) == 0;
}

static bool listed(const char *const *list, const char *entry)
{
	for (size_t i = 0; list && list[i]; i++)
		if (same_key(list[i], entry))
			return true;
	return false;
}

static size_t count(const char *const *list)
{
	size_t n = 0;

	while (list && list[n])
		n++;
	return n;
}

/* The child's environment: inherited (unless clear_env) minus env_unset
 * and minus keys that env_set overrides, then env_set. */
static int build_env(const struct pg_proc *p, char ***out, struct pg_err *err)
{
	const char *const *inherit = p->clear_env ? NULL : (const char *const *)environ;
	size_t nset = count(p->env_set), n = 0;
	char **envp = NULL;
	int ret = -1;

	for (size_t i = 0; i < nset; i++) {
		const char *eq = strchr(p->env_set[i], '=');

		if (!eq || eq == p->env_set[i]) {
			pg_err_set(err, PG_EINVAL, "env_set entry '%s': expected KEY=VALUE",
				   p->env_set[i]);
			goto out;
		}
	}
	for (size_t i = 0; p->env_unset && p->env_unset[i]; i++) {
		if (!*p->env_unset[i] || strchr(p->env_unset[i], '=')) {
			pg_err_set(err, PG_EINVAL, "env_unset entry '%s': expected a name",
				   p->env_unset[i]);
			goto out;
		}
	}

	envp = calloc(count(inherit) + nset + 1, sizeof(*envp));
	if (!envp) {
		pg_err_set(err, PG_ENOMEM, "environment: out of memory");
		goto out;
	}
	for (size_t i = 0; inherit && inherit[i]; i++) {
		if (listed(p->env_unset, inherit[i]) || listed(p->env_set, inherit[i]))
			continue;
		envp[n++] = (char *)inherit[i];
	}
	for (size_t i = 0; i < nset; i++) {
		/* A later entry for the same key wins. */
		if (listed(p->env_set + i + 1, p->env_set[i]))
			continue;
		envp[n++] = (char *)p->env_set[i];
	}
	envp[n] = NULL;
	*out = envp;
	envp = NULL;
	ret = 0;
out:
	free(envp);
	return ret;
}

static const char *env_lookup(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envp[i]; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

static void free_paths(char **paths, size_t n)
{
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
}

/* The files the child tries to exec, in order, as execvp() would: argv[0]
 * itself when it has a slash, else each PATH entry joined with it.  The
 * search itself happens in the child, after chdir, so relative entries
 * mean what they mean to execvp(). */
static int build_paths(const char *prog, char *const *envp, struct spawn_plan *plan,
		       struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(PATH_ENTRY_MAX);
	const char *path, *s;
	char **paths = NULL;
	size_t n = 0, max = 1;
	int ret = -1;

	if (strchr(prog, '/')) {
		path = NULL;
	} else {
		path = env_lookup(envp, "PATH");
		if (!path)
			path = DEFAULT_PATH;
		for (s = path; *s; s++)
			if (*s == ':')
				max++;
	}
	paths = calloc(max, sizeof(*paths));
	if (!paths)
		goto nomem;
	if (!path) {
		paths[n] = strdup(prog);
		if (!paths[n])
			goto nomem;
		n++;
	} else {
		for (s = path; n < max; n++) {
			size_t len = strcspn(s, ":");

			pg_buf_reset(&b);
			/* An empty entry means the current directory. */
			if (pg_buf_add(&b, len ? s : ".", len ? len : 1) < 0 ||
			    pg_buf_addch(&b, '/') < 0 || pg_buf_adds(&b, prog) < 0) {
				if (errno == E2BIG) {
					pg_err_set(err, PG_EINVAL, "PATH entry too long");
					goto out;
				}
				goto nomem;
			}
			paths[n] = pg_buf_detach(&b, NULL);
			if (!paths[n])
				goto nomem;
			s += len;
			if (*s == ':')
				s++;
		}
	}
	plan->paths = paths;
	plan->npaths = n;
	paths = NULL;
	ret = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "program path: out of memory");
out:
	free_paths(paths, n);
	pg_buf_release(&b);
	return ret;
}

static _Noreturn void child_fail(int fd, int stage, int e)
{
	struct child_report r = { stage, e };
	ssize_t n;

	do
		n = write(fd, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	_exit(127);
}

/* dup2() onto 0-2 must neither clobber another source fd nor be a no-op
 * that leaves FD_CLOEXEC set, so sources below 3 are moved up first. */
static int above_stdio(int fd)
{
	return fd > 2 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

/* Between fork and exec: async-signal-safe calls only. */
static _Noreturn void child_exec(const struct pg_proc *p, const struct spawn_plan *plan)
{
	struct sigaction sa;
	sigset_t none;
	int rep, in, out, e = ENOENT;
	bool eacces = false;

	rep = above_stdio(plan->report_fd);
	if (rep < 0)
		_exit(127);
	if (setpgid(0, 0) < 0)
		child_fail(rep, STAGE_SETUP, errno);

	/* Handlers are reset by exec anyway, but ignored signals (SIGPIPE in
	 * a daemon) would be inherited; the parent blocked everything around
	 * fork(), so nothing runs the parent's handlers in here. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);	/* EINVAL for KILL, STOP, libc's own */
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		child_fail(rep, STAGE_SETUP, errno);

	in = above_stdio(plan->in_fd);
	out = above_stdio(plan->out_fd);
	if (in < 0 || out < 0)
		child_fail(rep, STAGE_SETUP, errno);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		child_fail(rep, STAGE_SETUP, errno);

	if (p->dir && chdir(p->dir) < 0)
		child_fail(rep, STAGE_CHDIR, errno);

	for (size_t i = 0; i < plan->npaths; i++) {
		execve(plan->paths[i], (char *const *)p->argv, plan->envp);
		/* Like execvp(): go on while the file is not there, remember
		 * that one existed but was not executable, stop on anything
		 * else (ENOEXEC: we never fall back to a shell). */
		e = errno;
		if (e == EACCES)
			eacces = true;
		else if (e != ENOENT && e != ENOTDIR)
			child_fail(rep, STAGE_EXEC, e);
	}
	child_fail(rep, STAGE_EXEC, eacces ? EACCES : e);
}

/* Returns 1 with *r filled when the child reported a failure, 0 when exec
 * succeeded (end of file), -1 on a read error. */
static int read_report(int fd, struct child_report *r)
{
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(*r)) {
		n = read(fd, (char *)r + got, sizeof(*r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got == 0)
		return 0;
	if (got < sizeof(*r)) {
		errno = EPROTO;
		return -1;
	}
	return 1;
}

static pid_t reap_blocking(pid_t pid, int *status)
{
	pid_t r;

	do
		r = waitpid(pid, status, 0);
	while (r < 0 && errno == EINTR);
	return r;
}

static int open_stdin(const struct pg_proc *p, int *child_fd, int *parent_fd,
		      struct pg_err *err)
{
	int fds[2];

	switch (p->stdin_mode) {
	case PG_PROC_STDIN_NULL:
		*child_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (*child_fd < 0)
			return pg_err_errno(err, "open stdin '/dev/null'");
		return 0;
	case PG_PROC_STDIN_FILE:
		if (!p->stdin_path)
			return pg_err_set(err, PG_EINVAL, "stdin from a file without stdin_path");
		*child_fd = open(p->stdin_path, O_RDONLY | O_CLOEXEC);
		if (*child_fd < 0) {
			pg_err_errno(err, "open stdin '%s'", p->stdin_path);
			if (errno == ENOENT)
				err->code = PG_ENOTFOUND;
			return -1;
		}
		return 0;
	case PG_PROC_STDIN_PIPE:
		if (make_pipe(fds) < 0)
			return pg_err_errno(err, "stdin pipe");
		*child_fd = fds[0];
		*parent_fd = fds[1];
		return 0;
	}
	return pg_err_set(err, PG_EINVAL, "unknown stdin mode %d", (int)p->stdin_mode);
}

static int spawn_error(const struct pg_proc *p, const struct child_report *r,
		       struct pg_err *err)
{
	enum pg_errcode code = r->err == ENOENT ? PG_ENOTFOUND : PG_EIO;

	switch (r->stage) {
	case STAGE_CHDIR:
		return pg_err_set(err, code, "chdir '%s': %s", p->dir, strerror(r->err));
	case STAGE_EXEC:
		return pg_err_set(err, code, "%s", strerror(r->err));
	default:
		return pg_err_set(err, PG_EIO, "set up child: %s", strerror(r->err));
	}
}

void pg_proc_init(struct pg_proc *p)
{
	static const struct pg_proc init = PG_PROC_INIT;

	*p = init;
}

int pg_proc_start(struct pg_proc *p, struct pg_err *err)
{
	struct spawn_plan plan = { NULL, NULL, 0, -1, -1, -1 };
	int stdin_w = -1, out_r = -1, report_r = -1, file_fd = -1, fds[2];
	const char *prog = p->argv ? p->argv[0] : NULL;
	struct child_report rep;
	sigset_t all, old;
	int rc, status, ret = -1;
	pid_t pid;

	if (!prog || !*prog)
		return pg_err_set(err, PG_EINVAL, "spawn: empty argument vector");
	if (p->priv_state != ST_IDLE) {
		pg_err_set(err, PG_EINVAL, "already started (pid %ld)", (long)p->pid);
		goto out;
	}
	if (p->tail_max > PG_PROC_TAIL_LIMIT) {
		pg_err_set(err, PG_EINVAL, "tail_max %zu over the limit %d",
			   p->tail_max, PG_PROC_TAIL_LIMIT);
		goto out;
	}
	if (build_env(p, &plan.envp, err) < 0 ||
	    build_paths(prog, plan.envp, &plan, err) < 0 ||
	    open_stdin(p, &plan.in_fd, &stdin_w, err) < 0)
		goto out;
	if (make_pipe(fds) < 0) {
		pg_err_errno(err, "output pipe");
		goto out;
	}
	out_r = fds[0];
	plan.out_fd = fds[1];
	/* Non-blocking so that one pump never waits past a deadline. */
	rc = fcntl(out_r, F_GETFL);
	if (rc < 0 || fcntl(out_r, F_SETFL, rc | O_NONBLOCK) < 0) {
		pg_err_errno(err, "output pipe");
		goto out;
	}
	if (make_pipe(fds) < 0) {
		pg_err_errno(err, "exec report pipe");
		goto out;
	}
	report_r = fds[0];
	plan.report_fd = fds[1];
	if (p->output_path) {
		file_fd = open(p->output_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (file_fd < 0) {
			pg_err_errno(err, "open output '%s'", p->output_path);
			goto out;
		}
	}

	p->exited = false;
	p->exit_code = 0;
	p->term_signal = 0;
	p->timed_out = false;
	p->cancelled = false;
	p->output_truncated = false;
	p->output_bytes = 0;
	p->duration_ms = 0;
	pg_buf_release(&p->tail);
	/* Twice the size, so that sliding the window costs one memmove per
	 * tail_max bytes of output (see tail_add()). */
	pg_buf_init(&p->tail, 2 * p->tail_max);
	p->priv_reaped = false;
	p->priv_term_sent = false;
	p->priv_file_bytes = 0;
	p->priv_kill_at_ms = 0;
	p->priv_start_ms = now_ms();

	/* Block every signal across fork() so that the child cannot run one
	 * of the parent's handlers before it has reset them. */
	sigfillset(&all);
	rc = pthread_sigmask(SIG_SETMASK, &all, &old);
	if (rc) {
		errno = rc;
		pg_err_errno(err, "block signals");
		goto out;
	}
	pid = fork();
	if (pid == 0)
		child_exec(p, &plan);
	rc = errno;
	status = pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (status)
		pg_log_warn("proc", "restore signal mask after fork: %s", strerror(status));
	if (pid < 0) {
		errno = rc;
		pg_err_errno(err, "fork");
		goto out;
	}
	/* Also here, so that the group exists before we might signal it
	 * whichever process runs first; EACCES once the child has exec'd
	 * and ESRCH if it already died are both fine. */
	(void)setpgid(pid, pid);

	close_fd(&plan.in_fd);
	close_fd(&plan.out_fd);
	close_fd(&plan.report_fd);
	rc = read_report(report_r, &rep);
	if (rc != 0) {
		if (rc < 0) {
			pg_err_errno(err, "read exec report");
			/* Still the leader (not reaped): the group id is ours. */
			(void)killpg(pid, SIGKILL);
		} else {
			spawn_error(p, &rep, err);
		}
		if (reap_blocking(pid, &status) < 0)
			pg_log_warn("proc", "reap failed child %ld: %s", (long)pid, strerror(errno));
		goto out;
	}

	p->pid = pid;
	p->stdin_fd = stdin_w;
	stdin_w = -1;
	p->priv_out_fd = out_r;
	out_r = -1;
	p->priv_file_fd = file_fd;
	file_fd = -1;
	p->priv_state = ST_RUNNING;
	pg_log_debug("proc", "started '%s' as pid %ld", prog, (long)pid);
	ret = 0;
out:
	if (ret < 0)
		pg_err_prefix(err, "spawn '%s'", prog);
	close_fd(&plan.in_fd);
	close_fd(&plan.out_fd);
	close_fd(&plan.report_fd);
	close_fd(&stdin_w);
	close_fd(&out_r);
	close_fd(&report_r);
	if (file_fd >= 0 && close(file_fd) < 0)
		pg_log_warn("proc", "close output '%s': %s", p->output_path, strerror(errno));
	free_paths(plan.paths, plan.npaths);
	free(plan.envp);
	return ret;
}

/* Keep the first error of the wait loop; later ones are consequences. */
static void note_errno(struct pg_err *first, const char *what, const char *path)
{
	if (first->code != PG_OK)
		return;
	if (path)
		pg_err_errno(first, "%s '%s'", what, path);
	else
		pg_err_errno(first, "%s", what);
}

static void signal_group(struct pg_proc *p, int sig, struct pg_err *first)
{
	/* Only before reaping: until then the leader, even as a zombie,
	 * keeps its pid from naming anyone else's group. */
	if (p->priv_reaped)
		return;
	if (killpg(p->pid, sig) < 0 && errno != ESRCH)
		note_errno(first, "signal process group", NULL);
}

static void terminate(struct pg_proc *p, uint64_t now, struct pg_err *first)
{
	unsigned int grace = p->kill_grace_ms ? p->kill_grace_ms : PG_PROC_GRACE_DEFAULT;

	if (p->priv_term_sent)
		return;
	p->priv_term_sent = true;
	p->priv_kill_at_ms = now + grace;
	signal_group(p, SIGTERM, first);
}

/* Keep the last tail_max bytes.  The buffer may hold up to twice that
 * while running; tail_finish() trims it. */
static int tail_add(struct pg_proc *p, const char *data, size_t n)
{
	struct pg_buf *t = &p->tail;
	size_t keep = p->tail_max;

	if (!keep)
		return 0;
	if (n >= keep) {
		pg_buf_reset(t);
		return pg_buf_add(t, data + n - keep, keep);
	}
	if (t->len + n > 2 * keep)
		pg_buf_consume(t, t->len + n - keep);
	return pg_buf_add(t, data, n);
}

static void tail_finish(struct pg_proc *p)
{
	if (p->tail.len > p->tail_max)
		pg_buf_consume(&p->tail, p->tail.len - p->tail_max);
}

static void take_output(struct pg_proc *p, const char *data, size_t n, struct pg_err *first)
{
	size_t to_file = n;

	p->output_bytes += n;
	if (p->output_max && p->output_bytes > p->output_max) {
		p->output_truncated = true;
		to_file = p->output_max > p->priv_file_bytes ?
			(size_t)(p->output_max - p->priv_file_bytes) : 0;
		if (to_file > n)
			to_file = n;
	}
	if (p->priv_file_fd >= 0 && to_file) {
		if (pg_write_all(p->priv_file_fd, data, to_file) < 0) {
			/* Keep draining so the child never blocks on a full
			 * pipe; the error is reported once it is reaped. */
			note_errno(first, "write output", p->output_path);
			if (close(p->priv_file_fd) < 0)
				pg_log_debug("proc", "close output after error: %s", strerror(errno));
			p->priv_file_fd = -1;
		}
	}
	p->priv_file_bytes += to_file;
	if (tail_add(p, data, n) < 0)
		note_errno(first, "keep output tail", NULL);
	if (p->output_cb)
		p->output_cb(p->output_arg, data, n);
}

static enum pump_result pump(struct pg_proc *p, struct pg_err *first)
{
	char chunk[READ_CHUNK];
	ssize_t n;

	for (int i = 0; i < PUMP_READS_MAX; i++) {
		n = read(p->priv_out_fd, chunk, sizeof(chunk));
		if (n > 0) {
			take_output(p, chunk, (size_t)n, first);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return PUMP_EMPTY;
		if (n < 0)
			note_errno(first, "read child output", NULL);
		close_fd(&p->priv_out_fd);
		return PUMP_EOF;
	}
	return PUMP_MORE;
}

static bool cancel_requested(const struct pg_proc *p)
{
	if (p->cancel_flag && *p->cancel_flag)
		return true;
	return p->cancel_cb && p->cancel_cb(p->cancel_arg);
}

/* Reap the leader if it has exited.  It is first observed without being
 * reaped (WNOWAIT), so that its stragglers can be killed while the group
 * id is still certainly theirs.  Returns 1 when reaped, 0 when still
 * running, -1 with err set. */
static int reap_if_exited(struct pg_proc *p, struct pg_err *err)
{
	siginfo_t info;
	int status;

	memset(&info, 0, sizeof(info));
	if (waitid(P_PID, (id_t)p->pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0) {
		if (errno == EINTR)
			return 0;
		return pg_err_errno(err, "wait for pid %ld", (long)p->pid);
	}
	if (info.si_pid == 0)
		return 0;
	if (killpg(p->pid, SIGKILL) < 0 && errno != ESRCH)
		pg_log_warn("proc", "kill stragglers of pid %ld: %s", (long)p->pid,
			    strerror(errno));
	if (reap_blocking(p->pid, &status) < 0)
		return pg_err_errno(err, "reap pid %ld", (long)p->pid);
	p->priv_reaped = true;
	p->duration_ms = now_ms() - p->priv_start_ms;
	if (WIFEXITED(status)) {
		p->exited = true;
		p->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		p->term_signal = WTERMSIG(status);
	}
	return 1;
}

static bool group_gone(const struct pg_proc *p)
{
	/* Signal 0 only tests: harmless even if the id was recycled. */
	return killpg(p->pid, 0) < 0 && errno == ESRCH;
}

/* How long the next poll may sleep: at most POLL_MAX_MS, never past a
 * deadline. */
static int next_wait(const struct pg_proc *p, uint64_t now, uint64_t drain_until,
		     int *idle_ms)
{
	uint64_t ms = POLL_MAX_MS;

	if (p->priv_out_fd < 0 && !p->priv_reaped) {
		/* The child closed its output and is probably exiting:
		 * back off from 1 ms instead of sleeping a full interval. */
		ms = (uint64_t)*idle_ms;
		if (*idle_ms < POLL_MAX_MS)
			*idle_ms = *idle_ms * 2 < POLL_MAX_MS ? *idle_ms * 2 : POLL_MAX_MS;
	}
	if (!p->priv_reaped && p->timeout_ms && !p->priv_term_sent) {
		uint64_t at = p->priv_start_ms + p->timeout_ms;

		if (at <= now)
			return 0;
		if (at - now < ms)
			ms = at - now;
	}
	if (p->priv_kill_at_ms) {
		if (p->priv_kill_at_ms <= now)
			return 0;
		if (p->priv_kill_at_ms - now < ms)
			ms = p->priv_kill_at_ms - now;
	}
	if (p->priv_reaped) {
		if (drain_until <= now)
			return 0;
		if (drain_until - now < ms)
			ms = drain_until - now;
	}
	return (int)ms;
}

int pg_proc_wait(struct pg_proc *p, struct pg_err *err)
{
	struct pg_err first = PG_ERR_INIT;
	const char *prog = p->argv && p->argv[0] ? p->argv[0] : "?";
	unsigned int grace = p->kill_grace_ms ? p->kill_grace_ms : PG_PROC_GRACE_DEFAULT;
	uint64_t now, drain_until = 0;
	struct pollfd pfd;
	int rc, timeout, idle_ms = 1, ret = -1;

	if (p->priv_state != ST_RUNNING) {
		pg_err_set(err, PG_EINVAL, "no running child");
		goto out;
	}

	for (;;) {
		now = now_ms();
		if (!p->priv_reaped) {
			if (p->watch_cb)
				p->watch_cb(p, p->watch_arg);
			if (!p->cancelled && cancel_requested(p)) {
				p->cancelled = true;
				terminate(p, now, &first);
			}
			if (p->timeout_ms && !p->priv_term_sent &&
			    now - p->priv_start_ms >= p->timeout_ms) {
				p->timed_out = true;
				terminate(p, now, &first);
			}
			if (p->priv_kill_at_ms && now >= p->priv_kill_at_ms) {
				p->priv_kill_at_ms = 0;
				signal_group(p, SIGKILL, &first);
			}
			rc = reap_if_exited(p, err);
			if (rc < 0)
				goto out;
			if (rc > 0) {
				p->priv_kill_at_ms = 0;
				drain_until = now + grace;
			}
		}
		if (p->priv_reaped) {
			/* With the group gone, an open but empty pipe means
			 * that its holder left the group; one stuck dying gets
			 * the grace period.  Either way take what is there. */
			if (p->priv_out_fd >= 0 &&
			    (now >= drain_until ||
			     (group_gone(p) && pump(p, &first) == PUMP_EMPTY)))
				close_fd(&p->priv_out_fd);
			if (p->priv_out_fd < 0)
				break;
		}

		timeout = next_wait(p, now, drain_until, &idle_ms);
		if (p->priv_out_fd >= 0) {
			pfd.fd = p->priv_out_fd;
			pfd.events = POLLIN;
			pfd.revents = 0;
			rc = poll(&pfd, 1, timeout);
		} else {
			rc = poll(NULL, 0, timeout);
		}
		if (rc < 0 && errno != EINTR) {
			pg_err_errno(err, "poll");
			goto out;
		}
		if (rc > 0 && p->priv_out_fd >= 0)
			pump(p, &first);
	}

	tail_finish(p);
	p->priv_state = ST_DONE;
	if (p->priv_file_fd >= 0) {
		if (close(p->priv_file_fd) < 0)
			note_errno(&first, "close output", p->output_path);
		p->priv_file_fd = -1;
	}
	if (pg_log_enabled(PG_LOG_DEBUG, "proc")) {
		char desc[PG_PROC_DESC_MAX];

		pg_log_debug("proc", "'%s' pid %ld %s after %llu ms, %llu bytes of output",
			     prog, (long)p->pid, pg_proc_describe(p, desc, sizeof(desc)),
			     (unsigned long long)p->duration_ms,
			     (unsigned long long)p->output_bytes);
	}
	if (first.code != PG_OK) {
		if (err)
			*err = first;
		goto out;
	}
	ret = 0;
out:
	if (ret < 0)
		pg_err_prefix(err, "wait for '%s'", prog);
	return ret;
}

int pg_proc_run(struct pg_proc *p, struct pg_err *err)
{
	if (pg_proc_start(p, err) < 0)
		return -1;
	return pg_proc_wait(p, err);
}

int pg_proc_kill(struct pg_proc *p, struct pg_err *err)
{
	struct pg_err first = PG_ERR_INIT;

	if (p->priv_state != ST_RUNNING || p->priv_reaped)
		return 0;
	p->cancelled = true;
	terminate(p, now_ms(), &first);
	if (first.code != PG_OK) {
		if (err)
			*err = first;
		pg_err_prefix(err, "kill '%s' (pid %ld)", p->argv[0], (long)p->pid);
		return -1;
	}
	return 0;
}

int pg_proc_signal(struct pg_proc *p, int sig, struct pg_err *err)
{
	struct pg_err first = PG_ERR_INIT;

	if (p->priv_state != ST_RUNNING || p->priv_reaped)
		return 0;
	signal_group(p, sig, &first);
	if (first.code != PG_OK) {
		if (err)
			*err = first;
		pg_err_prefix(err, "signal %d to '%s' (pid %ld)", sig, p->argv[0], (long)p->pid);
		return -1;
	}
	return 0;
}

void pg_proc_close_stdin(struct pg_proc *p)
{
	close_fd(&p->stdin_fd);
}

void pg_proc_release(struct pg_proc *p)
{
	int status;

	if (p->priv_state == ST_IDLE) {
		/* Descriptors are only ours once started (a zeroed struct
		 * has fd 0 in them). */
		pg_buf_release(&p->tail);
		return;
	}
	if (!p->priv_reaped) {
		if (killpg(p->pid, SIGKILL) < 0 && errno != ESRCH)
			pg_log_warn("proc", "kill group %ld: %s", (long)p->pid, strerror(errno));
		if (reap_blocking(p->pid, &status) < 0)
			pg_log_warn("proc", "reap pid %ld: %s", (long)p->pid, strerror(errno));
		p->priv_reaped = true;
	}
	close_fd(&p->stdin_fd);
	close_fd(&p->priv_out_fd);
	if (p->priv_file_fd >= 0 && close(p->priv_file_fd) < 0)
		pg_log_warn("proc", "close output '%s': %s", p->output_path, strerror(errno));
	p->priv_file_fd = -1;
	pg_buf_release(&p->tail);
	p->priv_state = ST_IDLE;
}

bool pg_proc_succeeded(const struct pg_proc *p)
{
	return p->priv_state == ST_DONE && p->exited && p->exit_code == 0 &&
	       !p->timed_out && !p->cancelled;
}

const char *pg_proc_describe(const struct pg_proc *p, char *buf, size_t size)
{
	const char *why = "";
	char extra[64] = "";

	if (!size)
		return "";
	if (p->timed_out) {
		if (pg_fmt(extra, sizeof(extra), " (timeout after %u ms)", p->timeout_ms) < 0)
			extra[0] = '\0';	/* cannot happen: an unsigned fits */
		why = extra;
	} else if (p->cancelled) {
		why = " (cancelled)";
	}
	/* A short buffer gets the text cut, visibly. */
	if (p->priv_state == ST_IDLE)
		pg_fmt_cut(buf, size, "not started");
	else if (!p->priv_reaped)
		pg_fmt_cut(buf, size, "running%s", why);
	else if (p->exited)
		pg_fmt_cut(buf, size, "exited %d%s", p->exit_code, why);
	else
		pg_fmt_cut(buf, size, "killed by signal %d%s", p->term_signal, why);
	return buf;
}
