/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/agent_spool.c: names, atomic writes, the oldest-first
 * listing, what a crash leaves behind (a temporary is removed and never
 * listed, a complete file is listed and read back byte for byte), the
 * rejected/ corner, the lock against a second agent, and the waiting open
 * of run-one.
 */
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent_spool.h"
#include "buf.h"
#include "fsutil.h"
#include "rmtreefx.h"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pg-test-spool.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return fx_rm_tree(tmpdir);
}

static void path_of(char *out, size_t n, const char *rel)
{
	snprintf(out, n, "%s/spool/%s", tmpdir, rel);
}

static void set_mtime(const char *rel, time_t t)
{
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };
	char path[256];

	path_of(path, sizeof(path), rel);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void test_parse_name(void **state)
{
	static const char *const bad[] = {
		"job-1-1", "job-1-1.json.tmp.12", "job-01-1.json", "job-1-0.json", "job--1.json",
		"job-1.json", "result-1-1.jsonx", "lock", "rejected", "results-1-1.json",
		"job-9007199254740993-1.json", "job-1-1-1.json", "job-a-1.json", "",
	};
	enum agent_spool_kind k;
	int64_t id, att;

	(void)state;
	assert_int_equal(agent_spool_parse_name("job-12-3.json", &k, &id, &att), 0);
	assert_int_equal(k, AGENT_SPOOL_JOB);
	assert_int_equal(id, 12);
	assert_int_equal(att, 3);
	assert_int_equal(agent_spool_parse_name("result-9007199254740992-100.json", &k, &id,
						&att), 0);
	assert_int_equal(k, AGENT_SPOOL_RESULT);
	assert_int_equal(id, 9007199254740992LL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (agent_spool_parse_name(bad[i], &k, &id, &att) == 0) {
			print_error("'%s' parsed as a spool name\n", bad[i]);
			fail();
		}
}

static void test_write_list_read(void **state)
{
	struct agent_spool sp = AGENT_SPOOL_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf b = PG_BUF_INIT(AGENT_SPOOL_FILE_MAX);
	struct agent_spool_entry *v;
	char dir[128], path[256];
	unsigned int removed = 7;
	struct stat st;
	size_t n;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/spool", tmpdir);
	assert_int_equal(agent_spool_open(&sp, dir, &removed, &err), 0);
	assert_int_equal(removed, 0);
	path_of(path, sizeof(path), "rejected");
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));

	assert_int_equal(agent_spool_write(&sp, AGENT_SPOOL_RESULT, 30, 1, "{\"c\":1}", 7, &err), 0);
	assert_int_equal(agent_spool_write(&sp, AGENT_SPOOL_RESULT, 10, 2, "{\"a\":1}", 7, &err), 0);
	assert_int_equal(agent_spool_write(&sp, AGENT_SPOOL_RESULT, 20, 1, "{\"b\":1}", 7, &err), 0);
	assert_int_equal(agent_spool_write(&sp, AGENT_SPOOL_JOB, 40, 1, "{}", 2, &err), 0);
	/* Written in another order than their ids: the oldest goes first,
	 * and the same second is ordered by id. */
	set_mtime("result-30-1.json", 1000);
	set_mtime("result-10-2.json", 2000);
	set_mtime("result-20-1.json", 1000);
	assert_int_equal(agent_spool_list(&sp, AGENT_SPOOL_RESULT, &v, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].job_id, 20);
	assert_int_equal(v[1].job_id, 30);
	assert_int_equal(v[2].job_id, 10);
	assert_int_equal(v[2].attempt, 2);
	assert_string_equal(v[2].name, "result-10-2.json");
	free(v);
	assert_int_equal(agent_spool_list(&sp, AGENT_SPOOL_JOB, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].job_id, 40);
	free(v);

	assert_true(agent_spool_exists(&sp, AGENT_SPOOL_RESULT, 10, 2));
	assert_false(agent_spool_exists(&sp, AGENT_SPOOL_RESULT, 10, 1));
	assert_int_equal(agent_spool_read(&sp, AGENT_SPOOL_RESULT, 10, 2, &b, &err), 0);
	assert_string_equal(pg_buf_str(&b), "{\"a\":1}");
	pg_buf_reset(&b);
	assert_int_equal(agent_spool_read(&sp, AGENT_SPOOL_RESULT, 10, 1, &b, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);

	/* Replacing is whole: the new bytes, nothing of the old. */
	assert_int_equal(agent_spool_write(&sp, AGENT_SPOOL_RESULT, 10, 2, "{}", 2, &err), 0);
	pg_buf_reset(&b);
	assert_int_equal(agent_spool_read(&sp, AGENT_SPOOL_RESULT, 10, 2, &b, &err), 0);
	assert_string_equal(pg_buf_str(&b), "{}");

	assert_int_equal(agent_spool_remove(&sp, AGENT_SPOOL_RESULT, 10, 2, &err), 0);
	assert_int_equal(agent_spool_remove(&sp, AGENT_SPOOL_RESULT, 10, 2, &err), 0);
	assert_false(agent_spool_exists(&sp, AGENT_SPOOL_RESULT, 10, 2));
	pg_buf_release(&b);
	agent_spool_close(&sp);
	agent_spool_close(&sp);
}

/*
 * A crash: the agent died inside pg_write_file_atomic() (a temporary
 * with half a result) and after a complete write (a result never
 * uploaded).  The next open removes the first, never lists it, and hands
 * the second back byte for byte, so that it is uploaded again.
 */
static void test_crash_leftovers(void **state)
{
	struct agent_spool sp = AGENT_SPOOL_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf b = PG_BUF_INIT(AGENT_SPOOL_FILE_MAX);
	static const char body[] = "{\"attempt\":1,\"outcome\":\"ok\",\"samples\":[]}";
	struct agent_spool_entry *v;
	char dir[128], path[256];
	unsigned int removed = 0;
	struct stat st;
	size_t n;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/spool", tmpdir);
	assert_int_equal(pg_mkdir_p(dir, 0750, &err), 0);
	path_of(path, sizeof(path), "result-5-1.json.tmp.4242");
	assert_int_equal(pg_write_file_atomic(path, "{\"attempt\":1,\"outc", 18, 0640, &err), 0);
	path_of(path, sizeof(path), "job-6-1.json.tmp.4242");
	assert_int_equal(pg_write_file_atomic(path, "{", 1, 0640, &err), 0);
	path_of(path, sizeof(path), "result-7-1.json");
	assert_int_equal(pg_write_file_atomic(path, body, sizeof(body) - 1, 0640, &err), 0);
	/* Someone else's file is left alone. */
	path_of(path, sizeof(path), "notes.txt.tmp.1");
	assert_int_equal(pg_write_file_atomic(path, "x", 1, 0640, &err), 0);

	assert_int_equal(agent_spool_open(&sp, dir, &removed, &err), 0);
	assert_int_equal(removed, 2);
	path_of(path, sizeof(path), "result-5-1.json.tmp.4242");
	assert_int_equal(stat(path, &st), -1);
	path_of(path, sizeof(path), "notes.txt.tmp.1");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(agent_spool_list(&sp, AGENT_SPOOL_RESULT, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].job_id, 7);
	free(v);
	assert_int_equal(agent_spool_list(&sp, AGENT_SPOOL_JOB, &v, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	assert_int_equal(agent_spool_read(&sp, AGENT_SPOOL_RESULT, 7, 1, &b, &err), 0);
	assert_int_equal(b.len, sizeof(body) - 1);
	assert_memory_equal(b.data, body, sizeof(body) - 1);
	pg_buf_release(&b);
	agent_spool_close(&sp);
}

static void test_reject(void **state)
{
	struct agent_spool sp = AGENT_SPOOL_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf b = PG_BUF_INIT(1 << 20);
	struct agent_spool_entry *v;
	char dir[128], path[256];
	size_t n;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/spool", tmpdir);
	assert_int_equal(agent_spool_open(&sp, dir, NULL, &err), 0);
	assert_int_equal(agent_spool_write(&sp, AGENT_SPOOL_RESULT, 8, 2, "{\"x\":2}", 7, &err), 0);
	assert_int_equal(agent_spool_reject(&sp, 8, 2, 409, "{\"error\":\"another result\"}",
					    &err), 0);
	assert_int_equal(agent_spool_list(&sp, AGENT_SPOOL_RESULT, &v, &n, &err), 0);
	assert_int_equal(n, 0);
	free(v);
	path_of(path, sizeof(path), "rejected/result-8-2.json");
	assert_int_equal(pg_read_file(path, &b, &err), 0);
	assert_string_equal(pg_buf_str(&b), "{\"x\":2}");
	pg_buf_reset(&b);
	path_of(path, sizeof(path), "rejected/result-8-2.answer");
	assert_int_equal(pg_read_file(path, &b, &err), 0);
	assert_string_equal(pg_buf_str(&b), "HTTP 409\n{\"error\":\"another result\"}\n");
	/* Nothing to move: an error, and no answer left without a result. */
	assert_int_equal(agent_spool_reject(&sp, 8, 3, 404, "", &err), -1);
	path_of(path, sizeof(path), "rejected/result-8-3.answer");
	assert_int_equal(access(path, F_OK), -1);
	pg_buf_release(&b);
	agent_spool_close(&sp);
}

static void test_lock(void **state)
{
	struct agent_spool a = AGENT_SPOOL_INIT, b = AGENT_SPOOL_INIT;
	struct pg_err err = PG_ERR_INIT;
	char dir[128];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/spool", tmpdir);
	assert_int_equal(agent_spool_open(&a, dir, NULL, &err), 0);
	assert_int_equal(agent_spool_open(&b, dir, NULL, &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_non_null(strstr(err.msg, "in use by another agent"));
	agent_spool_close(&b);
	agent_spool_close(&a);
	/* Released with the first: the next agent may take it. */
	assert_int_equal(agent_spool_open(&b, dir, NULL, &err), 0);
	agent_spool_close(&b);
	/* A file where the directory should be. */
	snprintf(dir, sizeof(dir), "%s/spool/lock/x", tmpdir);
	assert_int_equal(agent_spool_open(&b, dir, NULL, &err), -1);
	agent_spool_close(&b);
}

/* Releases the spool it is given after 300 ms, as a run-one that is
 * still stopping would. */
static void *release_later(void *arg)
{
	struct timespec ts = { 0, 300 * 1000000L };

	nanosleep(&ts, NULL);
	agent_spool_close(arg);
	return NULL;
}

static void test_lock_wait(void **state)
{
	struct agent_spool a = AGENT_SPOOL_INIT, b = AGENT_SPOOL_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct timespec t0, t1;
	pthread_t tid;
	char dir[128];
	long ms;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/spool", tmpdir);
	assert_int_equal(agent_spool_open(&a, dir, NULL, &err), 0);
	/* Held for the whole wait: fails once the wait is over, not before. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(agent_spool_open_wait(&b, dir, 200, NULL, &err), -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_true(ms >= 200);
	assert_true(ms < 2000);
	assert_int_equal(b.lock_fd, -1);
	/* Released during the wait: taken then. */
	assert_int_equal(pthread_create(&tid, NULL, release_later, &a), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(agent_spool_open_wait(&b, dir, 5000, NULL, &err), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_int_equal(pthread_join(tid, NULL), 0);
	assert_true(ms >= 250);
	assert_true(ms < 4000);
	/* And held now: the plain open still fails at once. */
	assert_int_equal(agent_spool_open(&a, dir, NULL, &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	agent_spool_close(&a);
	agent_spool_close(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_name),
		cmocka_unit_test_setup_teardown(test_write_list_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_leftovers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reject, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_wait, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
