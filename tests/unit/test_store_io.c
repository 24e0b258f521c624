/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the store's handling of a lost write (store.h,
 * store_set_io_failure_handler): a VFS wrapped around SQLite's own fails
 * every sync once armed, as a disk that returned EIO does; the handler is
 * called with the message, once per failed statement, before the error is
 * returned, and by SQLite's automatic checkpoint, whose result SQLite
 * itself drops; a full disk (SQLITE_FULL) and a constraint are not lost
 * writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "err.h"
#include "store.h"
#include "storefx.h"

/* ---- a VFS whose syncs fail when armed ---------------------------------- */

static sqlite3_vfs *real_vfs;
static sqlite3_vfs fail_vfs;
static bool fail_syncs;		/* every sync fails */
static bool fail_db_syncs;		/* the database file's syncs fail */

struct fail_file {
	sqlite3_file base;		/* methods: fail_io */
	sqlite3_file *real;		/* the real VFS's file, after this one */
	bool main_db;
};

static sqlite3_io_methods fail_io;

static int ff_close(sqlite3_file *f)
{
	struct fail_file *ff = (struct fail_file *)f;
	int rc = ff->real->pMethods ? ff->real->pMethods->xClose(ff->real) : SQLITE_OK;

	return rc;
}

#define REAL(f) (((struct fail_file *)(f))->real)

static int ff_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{ return REAL(f)->pMethods->xRead(REAL(f), b, n, o); }
static int ff_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{ return REAL(f)->pMethods->xWrite(REAL(f), b, n, o); }
static int ff_truncate(sqlite3_file *f, sqlite3_int64 s)
{ return REAL(f)->pMethods->xTruncate(REAL(f), s); }
static int ff_sync(sqlite3_file *f, int flags)
{
	if (fail_syncs || (fail_db_syncs && ((struct fail_file *)f)->main_db))
		return SQLITE_IOERR_FSYNC;
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int ff_size(sqlite3_file *f, sqlite3_int64 *s)
{ return REAL(f)->pMethods->xFileSize(REAL(f), s); }
static int ff_lock(sqlite3_file *f, int l)
{ return REAL(f)->pMethods->xLock(REAL(f), l); }
static int ff_unlock(sqlite3_file *f, int l)
{ return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int ff_check(sqlite3_file *f, int *r)
{ return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r); }
static int ff_fcntl(sqlite3_file *f, int op, void *a)
{ return REAL(f)->pMethods->xFileControl(REAL(f), op, a); }
static int ff_sector(sqlite3_file *f)
{ return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int ff_dev(sqlite3_file *f)
{ return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int ff_shmmap(sqlite3_file *f, int i, int sz, int ext, void volatile **p)
{ return REAL(f)->pMethods->xShmMap(REAL(f), i, sz, ext, p); }
static int ff_shmlock(sqlite3_file *f, int o, int n, int fl)
{ return REAL(f)->pMethods->xShmLock(REAL(f), o, n, fl); }
static void ff_shmbarrier(sqlite3_file *f)
{ REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int ff_shmunmap(sqlite3_file *f, int del)
{ return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }

static int fv_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct fail_file *ff = (struct fail_file *)f;
	int rc;

	(void)v;
	ff->real = (sqlite3_file *)(ff + 1);
	ff->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
	rc = real_vfs->xOpen(real_vfs, name, ff->real, flags, out);
	ff->base.pMethods = rc == SQLITE_OK ? &fail_io : NULL;
	return rc;
}

static int fv_delete(sqlite3_vfs *v, const char *n, int s)
{ (void)v; return real_vfs->xDelete(real_vfs, n, s); }
static int fv_access(sqlite3_vfs *v, const char *n, int fl, int *r)
{ (void)v; return real_vfs->xAccess(real_vfs, n, fl, r); }
static int fv_full(sqlite3_vfs *v, const char *n, int len, char *out)
{ (void)v; return real_vfs->xFullPathname(real_vfs, n, len, out); }
static int fv_random(sqlite3_vfs *v, int n, char *out)
{ (void)v; return real_vfs->xRandomness(real_vfs, n, out); }
static int fv_sleep(sqlite3_vfs *v, int us)
{ (void)v; return real_vfs->xSleep(real_vfs, us); }
static int fv_time(sqlite3_vfs *v, double *t)
{ (void)v; return real_vfs->xCurrentTime(real_vfs, t); }
static int fv_lasterr(sqlite3_vfs *v, int n, char *s)
{ (void)v; return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, n, s) : 0; }

static void fail_vfs_register(void)
{
	real_vfs = sqlite3_vfs_find(NULL);
	assert_non_null(real_vfs);
	fail_io = (sqlite3_io_methods){
		.iVersion = 2, .xClose = ff_close, .xRead = ff_read, .xWrite = ff_write,
		.xTruncate = ff_truncate, .xSync = ff_sync, .xFileSize = ff_size,
		.xLock = ff_lock, .xUnlock = ff_unlock, .xCheckReservedLock = ff_check,
		.xFileControl = ff_fcntl, .xSectorSize = ff_sector,
		.xDeviceCharacteristics = ff_dev, .xShmMap = ff_shmmap, .xShmLock = ff_shmlock,
		.xShmBarrier = ff_shmbarrier, .xShmUnmap = ff_shmunmap,
	};
	fail_vfs = (sqlite3_vfs){
		.iVersion = 1, .szOsFile = (int)sizeof(struct fail_file) + real_vfs->szOsFile,
		.mxPathname = real_vfs->mxPathname, .zName = "pg-fail-sync",
		.xOpen = fv_open, .xDelete = fv_delete, .xAccess = fv_access,
		.xFullPathname = fv_full, .xRandomness = fv_random, .xSleep = fv_sleep,
		.xCurrentTime = fv_time, .xGetLastError = fv_lasterr,
	};
	assert_int_equal(sqlite3_vfs_register(&fail_vfs, 1), SQLITE_OK);
}

/* ---- tests ---------------------------------------------------------------- */

static unsigned int handled;
static char handled_msg[PG_ERR_MSG_MAX];

static void on_lost(const char *msg)
{
	handled++;
	snprintf(handled_msg, sizeof(handled_msg), "%s", msg);
}

struct tdir {
	char dir[256];
	char db[300];
};

static int setup(void **state)
{
	struct tdir *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	sfx_mkdir(t->dir, sizeof(t->dir), t->db, sizeof(t->db), "storeio");
	handled = 0;
	handled_msg[0] = '\0';
	fail_syncs = false;
	fail_db_syncs = false;
	store_set_io_failure_handler(on_lost);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tdir *t = *state;

	store_set_io_failure_handler(NULL);
	fail_syncs = false;
	fail_db_syncs = false;
	sfx_rm_dir(t->dir);
	free(t);
	return 0;
}

static void test_classification(void **state)
{
	(void)state;
	assert_true(store_io_lost(SQLITE_IOERR));
	assert_true(store_io_lost(SQLITE_IOERR_WRITE));
	assert_true(store_io_lost(SQLITE_IOERR_FSYNC));
	assert_true(store_io_lost(SQLITE_IOERR_DIR_FSYNC));
	assert_false(store_io_lost(SQLITE_FULL));	/* ENOSPC: SQLite rolls back cleanly */
	assert_false(store_io_lost(SQLITE_BUSY));
	assert_false(store_io_lost(SQLITE_CONSTRAINT_UNIQUE));
	assert_false(store_io_lost(SQLITE_OK));
}

/* A commit whose sync fails reaches the handler with the commit's message
 * and still returns its error; nothing else does. */
static void test_failed_sync_reaches_handler(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;

	assert_int_equal(store_open(&st, t->db, &err), 0);
	assert_int_equal(store_exec(st, "CREATE TABLE t (x INTEGER UNIQUE)", "create", &err), 0);
	/* A constraint is no lost write. */
	assert_int_equal(store_exec(st, "INSERT INTO t VALUES (1)", "insert", &err), 0);
	assert_int_equal(store_exec(st, "INSERT INTO t VALUES (1)", "insert again", &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_int_equal(handled, 0);

	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_run(st, "insert", "INSERT INTO t VALUES (2)", NULL, 0, &err), 0);
	fail_syncs = true;
	assert_int_equal(store_commit(st, &err), -1);
	assert_int_equal(handled, 1);
	assert_non_null(strstr(handled_msg, "commit transaction"));
	assert_string_equal(handled_msg, err.msg);
	store_rollback(st);

	/* store_exec's path too. */
	assert_int_equal(store_exec(st, "INSERT INTO t VALUES (3)", "insert 3", &err), -1);
	assert_int_equal(handled, 2);
	assert_non_null(strstr(handled_msg, "insert 3"));
	fail_syncs = false;
	store_close(st);
}

/* SQLite's automatic checkpoint (after a commit that left 1,000 pages in
 * the WAL) whose sync of the database file fails reaches the handler; the
 * commit before it stands. */
static void test_failed_autocheckpoint_reaches_handler(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;
	int64_t n = 0;

	assert_int_equal(store_open(&st, t->db, &err), 0);
	assert_int_equal(store_exec(st, "CREATE TABLE b (x BLOB)", "create", &err), 0);
	assert_int_equal(handled, 0);
	fail_db_syncs = true;
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_run(st, "insert", "INSERT INTO b VALUES (zeroblob(5000000))",
				   NULL, 0, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	assert_int_equal(handled, 1);
	assert_non_null(strstr(handled_msg, "checkpoint"));
	fail_db_syncs = false;
	assert_int_equal(store_query_int(st, "count", "SELECT count(*) FROM b", NULL, 0, &n, &err), 0);
	assert_int_equal(n, 1);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_classification, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_sync_reaches_handler, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_autocheckpoint_reaches_handler, setup,
						teardown),
	};

	fail_vfs_register();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
