/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/fsutil.c: mkdir -p and atomic replacement. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fsutil.h"

static void test_mkdir_p(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	char dir[] = "/tmp/pg-test-fs.XXXXXX";
	char path[256], file[256];
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	assert_int_equal(pg_mkdir_p(path, 0755, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* Again: already there is fine. */
	assert_int_equal(pg_mkdir_p(path, 0755, &err), 0);
	/* A file in the way is an error naming it. */
	snprintf(file, sizeof(file), "%s/a/file", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/a/file/x", dir);
	assert_int_equal(pg_mkdir_p(path, 0755, &err), -1);
	assert_non_null(strstr(err.msg, "a/file"));
	assert_int_equal(pg_mkdir_p(file, 0755, &err), -1);
	assert_non_null(strstr(err.msg, "exists and is not a directory"));
	/* A trailing slash, three levels missing. */
	snprintf(path, sizeof(path), "%s/t/u/v/", dir);
	assert_int_equal(pg_mkdir_p(path, 0755, &err), 0);
	snprintf(path, sizeof(path), "%s/t/u/v", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	rmdir(path);
	snprintf(path, sizeof(path), "%s/t/u", dir); rmdir(path);
	snprintf(path, sizeof(path), "%s/t", dir); rmdir(path);
	/* Parent of a file. */
	snprintf(path, sizeof(path), "%s/p/q/store.db", dir);
	assert_int_equal(pg_mkdir_parent(path, 0755, &err), 0);
	snprintf(path, sizeof(path), "%s/p/q", dir);
	assert_int_equal(stat(path, &st), 0);

	unlink(file);
	snprintf(path, sizeof(path), "%s/a/b/c", dir); rmdir(path);
	snprintf(path, sizeof(path), "%s/a/b", dir); rmdir(path);
	snprintf(path, sizeof(path), "%s/a", dir); rmdir(path);
	snprintf(path, sizeof(path), "%s/p/q", dir); rmdir(path);
	snprintf(path, sizeof(path), "%s/p", dir); rmdir(path);
	assert_int_equal(rmdir(dir), 0);
}

static void test_write_atomic(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	char dir[] = "/tmp/pg-test-fs.XXXXXX";
	char path[256], text[512];
	FILE *f;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/result.json", dir);
	assert_int_equal(pg_write_file_atomic(path, "old", 3, 0644, &err), 0);
	assert_int_equal(pg_write_file_atomic(path, "{\"new\":1}", 9, 0644, &err), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_string_equal(text, "{\"new\":1}");
	/* No temporary file is left behind. */
	snprintf(text, sizeof(text), "%s.tmp.%ld", path, (long)getpid());
	assert_int_equal(access(text, F_OK), -1);
	/* A missing directory is a clear error. */
	snprintf(path, sizeof(path), "%s/missing/x", dir);
	assert_int_equal(pg_write_file_atomic(path, "x", 1, 0644, &err), -1);
	assert_non_null(strstr(err.msg, "No such file or directory"));
	snprintf(path, sizeof(path), "%s/result.json", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* pg_write_all() writes everything through a pipe four times smaller than
 * the data (the reader drains it as it goes), and fails with errno on a
 * descriptor that cannot be written. */
static void test_write_all(void **state)
{
	static char data[256 * 1024], back[sizeof(data)];
	size_t got = 0;
	int fds[2];
	pid_t pid;

	(void)state;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + i / 251);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		_exit(pg_write_all(fds[1], data, sizeof(data)) == 0 ? 0 : 1);
	}
	close(fds[1]);
	for (;;) {
		ssize_t n = read(fds[0], back + got, sizeof(back) - got);

		assert_true(n >= 0);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	{
		int status = 0;

		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(got, sizeof(data));
	assert_memory_equal(back, data, sizeof(data));

	errno = 0;
	assert_int_equal(pg_write_all(-1, data, 1), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(pg_write_all(-1, data, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mkdir_p),
		cmocka_unit_test(test_write_atomic),
		cmocka_unit_test(test_write_all),
	};
	return cmocka_run_group_tests_name("fsutil", tests, NULL, NULL);
}
