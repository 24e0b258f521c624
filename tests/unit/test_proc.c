/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for lib/proc.c with real processes: output to file and tail,
 * exit codes and signals, spawn failures, timeouts and cancellation that
 * kill the whole process group, the output cap, environment, stdin and the
 * working directory.  Each test runs in its own temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "buf.h"
#include "err.h"
#include "proc.h"
#include "rmtreefx.h"

struct fixture {
	char dir[PATH_MAX];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/pg-test-proc.XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int rc = fx_rm_tree(f->dir);

	free(f);
	return rc;
}

static void path_in(const struct fixture *f, const char *name, char *out, size_t size)
{
	int n = snprintf(out, size, "%s/%s", f->dir, name);

	assert_true(n > 0 && (size_t)n < size);
}

static void read_file(const char *path, struct pg_buf *b)
{
	char chunk[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		assert_int_equal(pg_buf_add(b, chunk, (size_t)n), 0);
	assert_int_equal(n, 0);
	close(fd);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(close(fd), 0);
}

/* Gone, or a zombie nobody reaps (PID 1 in a container may not). */
static int pid_dead(pid_t pid)
{
	char path[64], stat[512];
	const char *paren;
	ssize_t n;
	int fd;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	stat[n] = '\0';
	paren = strrchr(stat, ')');
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* SIGKILL is delivered asynchronously: allow a generous while. */
static int pid_dies(pid_t pid)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 1000; i++) {
		if (pid_dead(pid))
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

static pid_t parse_pid(const char *text)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	assert_int_equal(errno, 0);
	assert_true(end != text && v > 1);
	return (pid_t)v;
}

/* No child of ours is left behind, reaped or not. */
static void assert_no_children(void)
{
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void test_echo_to_file_and_tail(void **state)
{
	const char *argv[] = { "echo", "hello", "world", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	struct pg_buf file = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char log[PATH_MAX], desc[PG_PROC_DESC_MAX];

	path_in(*state, "out.log", log, sizeof(log));
	assert_string_equal(pg_proc_describe(&p, desc, sizeof(desc)), "not started");
	p.argv = argv;
	p.output_path = log;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(p.pid > 0);
	assert_true(p.exited);
	assert_int_equal(p.exit_code, 0);
	assert_false(p.timed_out);
	assert_false(p.cancelled);
	assert_false(p.output_truncated);
	assert_true(pg_proc_succeeded(&p));
	assert_int_equal(p.output_bytes, 12);
	assert_string_equal(pg_buf_str(&p.tail), "hello world\n");
	assert_string_equal(pg_proc_describe(&p, desc, sizeof(desc)), "exited 0");
	read_file(log, &file);
	assert_string_equal(pg_buf_str(&file), "hello world\n");
	pg_proc_release(&p);

	/* Stages append to the same log. */
	assert_int_equal(pg_proc_run(&p, &err), 0);
	pg_buf_reset(&file);
	read_file(log, &file);
	assert_string_equal(pg_buf_str(&file), "hello world\nhello world\n");
	pg_proc_release(&p);
	pg_buf_release(&file);
	assert_no_children();
}

static void test_stderr_merged_in_order(void **state)
{
	const char *argv[] = { "sh", "-c", "echo out1; echo err1 >&2; echo out2", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;

	(void)state;
	p.argv = argv;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_string_equal(pg_buf_str(&p.tail), "out1\nerr1\nout2\n");
	pg_proc_release(&p);
}

static void test_exit_code(void **state)
{
	const char *argv[] = { "sh", "-c", "exit 3", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	char desc[PG_PROC_DESC_MAX];

	(void)state;
	p.argv = argv;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(p.exited);
	assert_int_equal(p.exit_code, 3);
	assert_false(pg_proc_succeeded(&p));
	assert_string_equal(pg_proc_describe(&p, desc, sizeof(desc)), "exited 3");
	pg_proc_release(&p);
}

static void test_killed_by_signal(void **state)
{
	const char *argv[] = { "sh", "-c", "kill -KILL $$", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	char desc[PG_PROC_DESC_MAX];

	(void)state;
	p.argv = argv;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_false(p.exited);
	assert_int_equal(p.term_signal, SIGKILL);
	assert_false(p.timed_out);
	assert_false(pg_proc_succeeded(&p));
	assert_string_equal(pg_proc_describe(&p, desc, sizeof(desc)), "killed by signal 9");
	pg_proc_release(&p);
}

static void test_missing_program(void **state)
{
	const char *argv[] = { "nonexistent-prog-pg", "x", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;

	(void)state;
	p.argv = argv;
	assert_int_equal(pg_proc_run(&p, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_string_equal(err.msg, "spawn 'nonexistent-prog-pg': No such file or directory");
	pg_proc_release(&p);
	assert_no_children();

	/* With a slash: no PATH search. */
	argv[0] = "/nonexistent-dir-pg/prog";
	pg_err_clear(&err);
	assert_int_equal(pg_proc_run(&p, &err), -1);
	assert_string_equal(err.msg, "spawn '/nonexistent-dir-pg/prog': No such file or directory");
	pg_proc_release(&p);
	assert_no_children();
}

static void test_not_executable(void **state)
{
	const char *argv[] = { NULL, NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	char prog[PATH_MAX], want[PATH_MAX + 64];

	path_in(*state, "script", prog, sizeof(prog));
	write_file(prog, "#!/bin/sh\nexit 0\n", 0644);
	argv[0] = prog;
	p.argv = argv;
	assert_int_equal(pg_proc_run(&p, &err), -1);
	snprintf(want, sizeof(want), "spawn '%s': Permission denied", prog);
	if (geteuid() != 0 || access(prog, X_OK) < 0)
		assert_string_equal(err.msg, want);
	assert_int_equal(err.code, PG_EIO);
	pg_proc_release(&p);
	assert_no_children();
}

static void test_bad_workdir(void **state)
{
	const char *argv[] = { "pwd", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;

	(void)state;
	p.argv = argv;
	p.dir = "/nonexistent-pg-dir";
	assert_int_equal(pg_proc_run(&p, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_string_equal(err.msg,
			    "spawn 'pwd': chdir '/nonexistent-pg-dir': No such file or directory");
	pg_proc_release(&p);
	assert_no_children();
}

static void test_bad_description(void **state)
{
	const char *argv[] = { "true", NULL };
	const char *bad_set[] = { "NOEQUALS", NULL };
	const char *empty[] = { NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;

	(void)state;
	p.argv = empty;
	assert_int_equal(pg_proc_run(&p, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	p.argv = argv;
	p.env_set = bad_set;
	assert_int_equal(pg_proc_run(&p, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "NOEQUALS"));
	p.env_set = NULL;
	p.stdin_mode = PG_PROC_STDIN_FILE;
	p.stdin_path = "/nonexistent-pg-input";
	assert_int_equal(pg_proc_run(&p, &err), -1);
	assert_string_equal(err.msg, "spawn 'true': open stdin '/nonexistent-pg-input': "
			    "No such file or directory");
	p.stdin_mode = PG_PROC_STDIN_NULL;
	p.output_path = "/nonexistent-pg-dir/out.log";
	assert_int_equal(pg_proc_run(&p, &err), -1);
	assert_string_equal(err.msg, "spawn 'true': open output '/nonexistent-pg-dir/out.log': "
			    "No such file or directory");
	pg_proc_release(&p);
	assert_no_children();
}

static void test_timeout_kills_group(void **state)
{
	const char *argv[] = { "sh", "-c", "sleep 100 & echo $!; sleep 100", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	char desc[PG_PROC_DESC_MAX];
	pid_t grandchild;

	(void)state;
	p.argv = argv;
	p.timeout_ms = 300;
	p.kill_grace_ms = 500;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(p.timed_out);
	assert_false(p.cancelled);
	assert_false(p.exited);
	assert_int_equal(p.term_signal, SIGTERM);
	assert_false(pg_proc_succeeded(&p));
	assert_true(p.duration_ms < 60000);
	assert_string_equal(pg_proc_describe(&p, desc, sizeof(desc)),
			    "killed by signal 15 (timeout after 300 ms)");
	grandchild = parse_pid(pg_buf_str(&p.tail));
	assert_true(pid_dies(grandchild));
	assert_true(pid_dies(p.pid));
	pg_proc_release(&p);
	assert_no_children();
}

static void test_timeout_escalates_to_sigkill(void **state)
{
	/* An ignored SIGTERM is inherited by sleep through exec, so only
	 * SIGKILL ends this group. */
	const char *argv[] = { "sh", "-c", "trap '' TERM; sleep 100 & echo $!; sleep 100", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	pid_t grandchild;

	(void)state;
	p.argv = argv;
	p.timeout_ms = 200;
	p.kill_grace_ms = 200;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(p.timed_out);
	assert_false(p.exited);
	assert_int_equal(p.term_signal, SIGKILL);
	grandchild = parse_pid(pg_buf_str(&p.tail));
	assert_true(pid_dies(grandchild));
	pg_proc_release(&p);
}

static void test_stragglers_killed_on_exit(void **state)
{
	/* The background sleep keeps the output pipe open: without killing
	 * the group this would wait 100 s. */
	const char *argv[] = { "sh", "-c", "sleep 100 & echo $!; exit 0", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	pid_t grandchild;

	(void)state;
	p.argv = argv;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(pg_proc_succeeded(&p));
	assert_true(p.duration_ms < 60000);
	grandchild = parse_pid(pg_buf_str(&p.tail));
	assert_true(pid_dies(grandchild));
	pg_proc_release(&p);
}

static void check_cap(const struct fixture *f, size_t tail_max)
{
	const char *argv[] = { "seq", "1", "1000000", NULL };
	struct pg_buf want = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf file = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	const uint64_t cap = 100000;
	char log[PATH_MAX];

	path_in(f, "cap.log", log, sizeof(log));
	unlink(log);
	for (int i = 1; i <= 1000000; i++)
		assert_int_equal(pg_buf_printf(&want, "%d\n", i), 0);
	p.argv = argv;
	p.output_path = log;
	p.output_max = cap;
	p.tail_max = tail_max;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(pg_proc_succeeded(&p));
	assert_true(p.output_truncated);
	assert_int_equal(p.output_bytes, want.len);
	read_file(log, &file);
	assert_int_equal(file.len, cap);
	assert_memory_equal(file.data, want.data, cap);
	assert_int_equal(p.tail.len, tail_max);
	assert_memory_equal(p.tail.data, want.data + want.len - tail_max, tail_max);
	pg_proc_release(&p);
	pg_buf_release(&want);
	pg_buf_release(&file);
}

static void test_output_cap_and_tail(void **state)
{
	check_cap(*state, PG_PROC_TAIL_DEFAULT);
	/* Smaller than one read: every chunk replaces the tail. */
	check_cap(*state, 100);
}

static void test_output_write_error(void **state)
{
	/* /dev/full opens fine and fails every write with ENOSPC. */
	const char *argv[] = { "seq", "1", "100000", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;

	(void)state;
	if (access("/dev/full", W_OK) < 0)
		skip();
	p.argv = argv;
	p.output_path = "/dev/full";
	assert_int_equal(pg_proc_run(&p, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_string_equal(err.msg, "wait for 'seq': write output '/dev/full': "
			    "No space left on device");
	/* Drained and reaped all the same. */
	assert_true(p.exited);
	assert_int_equal(p.exit_code, 0);
	assert_int_equal(p.output_bytes, 588895);
	assert_string_equal(pg_buf_str(&p.tail) + p.tail.len - 7, "100000\n");
	pg_proc_release(&p);
	assert_no_children();
}

static void test_env_set_and_unset(void **state)
{
	const char *argv[] = { "env", NULL };
	const char *set[] = { "PG_TEST_A=1", "PG_TEST_KEEP=new", "PG_TEST_B=x",
			      "PG_TEST_B=y", NULL };
	const char *unset[] = { "PG_TEST_GONE", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	const char *out;

	(void)state;
	assert_int_equal(setenv("PG_TEST_GONE", "1", 1), 0);
	assert_int_equal(setenv("PG_TEST_KEEP", "old", 1), 0);
	assert_int_equal(setenv("PG_TEST_INHERIT", "yes", 1), 0);
	p.argv = argv;
	p.env_set = set;
	p.env_unset = unset;
	p.tail_max = 1024 * 1024;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	out = pg_buf_str(&p.tail);
	assert_non_null(strstr(out, "PG_TEST_A=1\n"));
	assert_non_null(strstr(out, "PG_TEST_KEEP=new\n"));
	assert_null(strstr(out, "PG_TEST_KEEP=old"));
	assert_non_null(strstr(out, "PG_TEST_B=y\n"));
	assert_null(strstr(out, "PG_TEST_B=x"));
	assert_non_null(strstr(out, "PG_TEST_INHERIT=yes\n"));
	assert_null(strstr(out, "PG_TEST_GONE"));
	pg_proc_release(&p);

	/* A cleared environment; env is still found (default PATH). */
	p.clear_env = true;
	p.env_set = (const char *const []){ "ONLY=1", NULL };
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_string_equal(pg_buf_str(&p.tail), "ONLY=1\n");
	pg_proc_release(&p);
	unsetenv("PG_TEST_GONE");
	unsetenv("PG_TEST_KEEP");
	unsetenv("PG_TEST_INHERIT");
}

static void test_path_from_child_env(void **state)
{
	const struct fixture *f = *state;
	const char *argv[] = { "pg-test-tool", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	char prog[PATH_MAX], path[PATH_MAX + 64];
	const char *set[] = { path, NULL };
	int n;

	path_in(f, "pg-test-tool", prog, sizeof(prog));
	write_file(prog, "#!/bin/sh\necho found\n", 0755);
	n = snprintf(path, sizeof(path), "PATH=/nonexistent-pg-dir:%s:/usr/bin:/bin", f->dir);
	assert_true(n > 0 && (size_t)n < sizeof(path));
	p.argv = argv;
	p.env_set = set;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_string_equal(pg_buf_str(&p.tail), "found\n");
	pg_proc_release(&p);
}

static void test_stdin_from_file(void **state)
{
	const char *argv[] = { "cat", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	char in[PATH_MAX];

	path_in(*state, "input.txt", in, sizeof(in));
	write_file(in, "line one\nline two\n", 0644);
	p.argv = argv;
	p.stdin_mode = PG_PROC_STDIN_FILE;
	p.stdin_path = in;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(pg_proc_succeeded(&p));
	assert_string_equal(pg_buf_str(&p.tail), "line one\nline two\n");
	pg_proc_release(&p);
}

static void test_stdin_default_is_devnull(void **state)
{
	const char *argv[] = { "cat", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;

	(void)state;
	p.argv = argv;
	p.timeout_ms = 30000;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(pg_proc_succeeded(&p));
	assert_int_equal(p.output_bytes, 0);
	assert_string_equal(pg_buf_str(&p.tail), "");
	pg_proc_release(&p);
}

static void test_stdin_pipe(void **state)
{
	const char *argv[] = { "cat", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;

	(void)state;
	p.argv = argv;
	p.stdin_mode = PG_PROC_STDIN_PIPE;
	p.timeout_ms = 30000;
	assert_int_equal(pg_proc_start(&p, &err), 0);
	assert_true(p.stdin_fd >= 0);
	assert_int_equal(write(p.stdin_fd, "hello", 5), 5);
	pg_proc_close_stdin(&p);
	assert_int_equal(p.stdin_fd, -1);
	pg_proc_close_stdin(&p);
	assert_int_equal(pg_proc_wait(&p, &err), 0);
	assert_true(pg_proc_succeeded(&p));
	assert_string_equal(pg_buf_str(&p.tail), "hello");
	pg_proc_release(&p);
}

static volatile sig_atomic_t alarm_cancel;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_cancel = 1;
}

static void test_cancel_flag(void **state)
{
	const char *argv[] = { "sleep", "100", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	struct sigaction sa, old;
	char desc[PG_PROC_DESC_MAX];

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	alarm_cancel = 0;
	p.argv = argv;
	p.cancel_flag = &alarm_cancel;
	alarm(1);
	assert_int_equal(pg_proc_run(&p, &err), 0);
	alarm(0);
	assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
	assert_true(p.cancelled);
	assert_false(p.timed_out);
	assert_int_equal(p.term_signal, SIGTERM);
	assert_true(p.duration_ms < 60000);
	assert_string_equal(pg_proc_describe(&p, desc, sizeof(desc)),
			    "killed by signal 15 (cancelled)");
	pg_proc_release(&p);
}

struct cancel_after {
	int calls;
};

static bool cancel_after_calls(void *arg)
{
	struct cancel_after *c = arg;

	return ++c->calls >= 3;
}

static void test_cancel_callback(void **state)
{
	const char *argv[] = { "sh", "-c", "sleep 100 & echo $!; sleep 100", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	struct cancel_after c = { 0 };

	(void)state;
	p.argv = argv;
	p.cancel_cb = cancel_after_calls;
	p.cancel_arg = &c;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(p.cancelled);
	assert_false(p.exited);
	assert_true(c.calls >= 3);
	assert_true(pid_dies(parse_pid(pg_buf_str(&p.tail))));
	pg_proc_release(&p);
}

static void test_kill_then_wait(void **state)
{
	const char *argv[] = { "sleep", "100", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;

	(void)state;
	p.argv = argv;
	assert_int_equal(pg_proc_kill(&p, &err), 0);	/* not started: no-op */
	assert_int_equal(pg_proc_start(&p, &err), 0);
	assert_int_equal(pg_proc_start(&p, &err), -1);	/* already running */
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(pg_proc_kill(&p, &err), 0);
	assert_int_equal(pg_proc_wait(&p, &err), 0);
	assert_true(p.cancelled);
	assert_int_equal(p.term_signal, SIGTERM);
	assert_int_equal(pg_proc_kill(&p, &err), 0);	/* reaped: no-op */
	assert_int_equal(pg_proc_wait(&p, &err), -1);	/* nothing to wait for */
	pg_proc_release(&p);
	assert_no_children();
}

static void test_release_kills_running_child(void **state)
{
	const char *argv[] = { "sleep", "100", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	pid_t pid;

	(void)state;
	p.argv = argv;
	assert_int_equal(pg_proc_start(&p, &err), 0);
	pid = p.pid;
	assert_false(pid_dead(pid));
	pg_proc_release(&p);
	assert_true(pid_dead(pid));
	assert_no_children();
}

static void test_workdir(void **state)
{
	const struct fixture *f = *state;
	const char *argv[] = { "pwd", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	char real[PATH_MAX], want[PATH_MAX + 2];

	assert_non_null(realpath(f->dir, real));
	snprintf(want, sizeof(want), "%s\n", real);
	p.argv = argv;
	p.dir = f->dir;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_string_equal(pg_buf_str(&p.tail), want);
	pg_proc_release(&p);
}

/* A signal mask line of /proc/PID/status, without the signals that glibc
 * reserves between 31 and SIGRTMIN: its sigaction() refuses to touch them
 * (GNU make leaves them ignored), and glibc programs take them over. */
static unsigned long long status_mask(const char *status, const char *field)
{
	const char *line = strstr(status, field);
	unsigned long long v;
	char *end;

	assert_non_null(line);
	errno = 0;
	v = strtoull(line + strlen(field), &end, 16);
	assert_int_equal(errno, 0);
	assert_true(end != line + strlen(field));
	for (int sig = 32; sig < SIGRTMIN; sig++)
		v &= ~(1ULL << (sig - 1));
	return v;
}

struct collected {
	struct pg_buf text;
	int calls;
	const char *go_path;	/* created once "first" has been seen */
};

static void collect_output(void *arg, const char *data, size_t len)
{
	struct collected *c = arg;

	c->calls++;
	assert_int_equal(pg_buf_add(&c->text, data, len), 0);
	if (strstr(pg_buf_str(&c->text), "first\n") && access(c->go_path, F_OK) < 0)
		write_file(c->go_path, "", 0644);
}

/* The hook sees every byte in order, beyond the file's cap and the tail
 * too, while the child runs: the child waits for a file that only the
 * hook creates, once it has seen the first line. */
static void test_output_callback(void **state)
{
	const char *script =
		"echo first; while [ ! -e \"$1\" ]; do sleep 0.01; done; "
		"i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done; echo last >&2";
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	struct collected c = { PG_BUF_INIT(PG_BUF_NOLIMIT), 0, NULL };
	struct pg_buf file = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char log[PATH_MAX], go[PATH_MAX];
	const char *argv[] = { "sh", "-c", script, "sh", go, NULL };

	path_in(*state, "out.log", log, sizeof(log));
	path_in(*state, "go", go, sizeof(go));
	c.go_path = go;
	p.argv = argv;
	p.output_path = log;
	p.output_max = 100;
	p.tail_max = 15;	/* exactly "line 1999\nlast\n" */
	p.timeout_ms = 60000;
	p.output_cb = collect_output;
	p.output_arg = &c;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(pg_proc_succeeded(&p));
	assert_true(c.calls >= 2);
	assert_int_equal(c.text.len, p.output_bytes);
	assert_true(strncmp(pg_buf_str(&c.text), "first\nline 0\nline 1\n", 20) == 0);
	assert_non_null(strstr(pg_buf_str(&c.text), "line 1999\nlast\n"));
	assert_true(p.output_truncated);
	read_file(log, &file);
	assert_int_equal(file.len, 100);
	assert_memory_equal(file.data, c.text.data, 100);
	assert_string_equal(pg_buf_str(&p.tail), "line 1999\nlast\n");
	pg_proc_release(&p);
	pg_buf_release(&c.text);
	pg_buf_release(&file);
}

static void test_signals_reset_in_child(void **state)
{
	/* A daemon ignores SIGPIPE and blocks signals; its children must
	 * start with neither. */
	const char *argv[] = { "grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	struct sigaction ign, old;
	sigset_t block, oldmask;

	(void)state;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	assert_int_equal(sigaction(SIGPIPE, &ign, &old), 0);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGRTMIN + 1);
	assert_int_equal(sigprocmask(SIG_BLOCK, &block, &oldmask), 0);
	p.argv = argv;
	p.timeout_ms = 60000;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_int_equal(sigprocmask(SIG_SETMASK, &oldmask, NULL), 0);
	assert_int_equal(sigaction(SIGPIPE, &old, NULL), 0);
	assert_true(pg_proc_succeeded(&p));
	assert_false(p.timed_out);
	assert_int_equal(status_mask(pg_buf_str(&p.tail), "SigBlk:"), 0);
	assert_int_equal(status_mask(pg_buf_str(&p.tail), "SigIgn:"), 0);
	pg_proc_release(&p);
}

/* The watch hook drives a child by what it prints: here, EOF on stdin
 * once the child says it is ready (what the agent does to testpmd). */
struct watch_state {
	int calls;
	bool closed;
	bool signalled;
	int sig;
};

static void watch_close_when_ready(struct pg_proc *p, void *arg)
{
	struct watch_state *w = arg;

	w->calls++;
	if (!w->closed && strstr(pg_buf_str(&p->tail), "ready\n")) {
		pg_proc_close_stdin(p);
		w->closed = true;
	}
}

static void test_watch_closes_stdin(void **state)
{
	const char *argv[] = { "sh", "-c", "echo ready; cat >/dev/null; echo got-eof", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	struct watch_state w = { 0 };

	(void)state;
	p.argv = argv;
	p.stdin_mode = PG_PROC_STDIN_PIPE;
	p.timeout_ms = 30000;
	p.watch_cb = watch_close_when_ready;
	p.watch_arg = &w;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(w.closed);
	assert_true(w.calls >= 1);
	assert_true(pg_proc_succeeded(&p));
	assert_false(p.cancelled);
	assert_string_equal(pg_buf_str(&p.tail), "ready\ngot-eof\n");
	pg_proc_release(&p);
}

static void watch_signal_when_up(struct pg_proc *p, void *arg)
{
	struct watch_state *w = arg;
	struct pg_err err = PG_ERR_INIT;

	if (!w->signalled && strstr(pg_buf_str(&p->tail), "up\n")) {
		assert_int_equal(pg_proc_signal(p, w->sig, &err), 0);
		w->signalled = true;
	}
}

/* pg_proc_signal(): SIGINT as a "stop and report" request, which is not a
 * cancel; and a no-op once the child is gone. */
static void test_signal_group(void **state)
{
	const char *argv[] = { "sh", "-c",
		"trap 'echo interrupted; exit 7' INT; echo up; while :; do sleep 0.05; done", NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_proc p = PG_PROC_INIT;
	struct watch_state w = { .sig = SIGINT };

	(void)state;
	p.argv = argv;
	p.timeout_ms = 30000;
	p.watch_cb = watch_signal_when_up;
	p.watch_arg = &w;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(w.signalled);
	assert_true(p.exited);
	assert_int_equal(p.exit_code, 7);
	assert_false(p.cancelled);
	assert_false(p.timed_out);
	assert_non_null(strstr(pg_buf_str(&p.tail), "interrupted\n"));
	assert_int_equal(pg_proc_signal(&p, SIGINT, &err), 0);
	pg_proc_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_echo_to_file_and_tail),
		T(test_stderr_merged_in_order),
		T(test_exit_code),
		T(test_killed_by_signal),
		T(test_missing_program),
		T(test_not_executable),
		T(test_bad_workdir),
		T(test_bad_description),
		T(test_timeout_kills_group),
		T(test_timeout_escalates_to_sigkill),
		T(test_stragglers_killed_on_exit),
		T(test_output_cap_and_tail),
		T(test_output_write_error),
		T(test_env_set_and_unset),
		T(test_path_from_child_env),
		T(test_stdin_from_file),
		T(test_stdin_default_is_devnull),
		T(test_stdin_pipe),
		T(test_watch_closes_stdin),
		T(test_signal_group),
		T(test_cancel_flag),
		T(test_cancel_callback),
		T(test_kill_then_wait),
		T(test_release_kills_running_child),
		T(test_workdir),
		T(test_signals_reset_in_child),
		T(test_output_callback),
#undef T
	};
	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
