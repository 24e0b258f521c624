/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/store.c and schema.c: opening and pragmas,
 * migrations (from an empty file and from the recorded version-1 store in
 * tests/fixtures/store-v1.sql), constraints, transactions, the statement
 * helpers and the health check on damaged files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "buf.h"
#include "err.h"
#include "log.h"
#include "store.h"

#define FIXTURE_V1 "tests/fixtures/store-v1.sql"

/* Each test gets a fresh directory; `db` is a path in it. */
struct tdir {
	char dir[256];
	char db[300];
};

static void tpath(const struct tdir *t, const char *name, char *out, size_t outsz)
{
	assert_true((size_t)snprintf(out, outsz, "%s/%s", t->dir, name) < outsz);
}

static int setup(void **state)
{
	struct tdir *t = calloc(1, sizeof(*t));
	const char *tmp = getenv("TMPDIR");

	if (!t)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "%s/pg-test-store.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	snprintf(t->db, sizeof(t->db), "%s/store.db", t->dir);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tdir *t = *state;
	struct dirent *de;
	DIR *d = opendir(t->dir);

	if (d) {
		while ((de = readdir(d))) {
			char p[600];

			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", t->dir, de->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(t->dir);
	free(t);
	return 0;
}

/* ---- helpers over a raw SQLite connection (not through the store) ----- */

static sqlite3 *raw_open(const char *path)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	return db;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK)
		fail_msg("exec failed: %s", msg ? msg : sqlite3_errstr(rc));
}

static int64_t raw_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *stmt = NULL;
	int64_t v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	v = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

static void raw_text(sqlite3 *db, const char *sql, char *out, size_t outsz)
{
	sqlite3_stmt *stmt = NULL;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	snprintf(out, outsz, "%s", (const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
}

/* Append every row of `sql` to out, at most `ncols` columns of each (all
 * when ncols < 0); returns the number of columns the statement has. */
static int raw_rows(sqlite3 *db, const char *sql, int ncols, struct pg_buf *out)
{
	sqlite3_stmt *stmt = NULL;
	int cols;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
	cols = sqlite3_column_count(stmt);
	if (ncols < 0 || ncols > cols)
		ncols = cols;
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		for (int i = 0; i < ncols; i++) {
			int type = sqlite3_column_type(stmt, i);

			if (type == SQLITE_BLOB) {
				const unsigned char *b = sqlite3_column_blob(stmt, i);
				int n = sqlite3_column_bytes(stmt, i);

				assert_int_equal(pg_buf_adds(out, "blob:"), 0);
				for (int j = 0; j < n; j++)
					assert_int_equal(pg_buf_printf(out, "%02x", b[j]), 0);
			} else if (type == SQLITE_NULL) {
				assert_int_equal(pg_buf_adds(out, "null"), 0);
			} else {
				assert_int_equal(pg_buf_printf(out, "%d:%s", type,
							       (const char *)sqlite3_column_text(stmt, i)), 0);
			}
			assert_int_equal(pg_buf_addch(out, i + 1 < ncols ? '|' : '\n'), 0);
		}
	}
	assert_int_equal(sqlite3_errcode(db), SQLITE_DONE);
	sqlite3_finalize(stmt);
	return cols;
}

/* The schema as SQLite recorded it: every table, index and trigger. */
static void raw_schema(sqlite3 *db, struct pg_buf *out)
{
	raw_rows(db, "SELECT type, name, tbl_name, sql FROM sqlite_master"
		 " WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name", -1, out);
}

static void read_file(const char *path, struct pg_buf *out)
{
	char chunk[4096];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		fail_msg("open %s: %s", path, strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(pg_buf_add(out, chunk, n), 0);
	assert_int_equal(ferror(f), 0);
	fclose(f);
}

/* Make `path` a version-1 store from the recorded dump. */
static void load_fixture_v1(const char *path)
{
	struct pg_buf sql = PG_BUF_INIT(PG_BUF_NOLIMIT);
	sqlite3 *db;

	read_file(FIXTURE_V1, &sql);
	db = raw_open(path);
	raw_exec(db, pg_buf_str(&sql));
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 1);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	pg_buf_release(&sql);
}

static struct store *open_ok(const char *path)
{
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;

	if (store_open(&st, path, &err) < 0)
		fail_msg("store_open: %s", err.msg);
	assert_non_null(st);
	return st;
}

static void run_ok(struct store *st, const char *sql, const struct store_arg *args,
		   size_t nargs)
{
	struct pg_err err = PG_ERR_INIT;

	if (store_run(st, "test statement", sql, args, nargs, &err) < 0)
		fail_msg("%s", err.msg);
}

/* A series with one patch and a run; returns the run's id. */
static int64_t seed_run(struct store *st)
{
	run_ok(st, "INSERT INTO sources (name, kind, location, project, created_at)"
	       " VALUES ('s', 'mbox', '/dev/null', 'dpdk', 1)", NULL, 0);
	run_ok(st, "INSERT INTO messages (source_id, position, msgid, raw_size, raw, state,"
	       " received_at) VALUES (1, 'm1', 'a@b', 1, x'41', 'accepted', 1)", NULL, 0);
	run_ok(st, "INSERT INTO series (project, root_msgid, total, title, submitter_addr,"
	       " received_at) VALUES ('dpdk', 'a@b', 1, 't', 'x@y', 1)", NULL, 0);
	run_ok(st, "INSERT INTO patches (series_id, number, message_id, subject)"
	       " VALUES (1, 1, 1, 't')", NULL, 0);
	run_ok(st, "INSERT INTO runs (series_id, reason, tree, branch, base_commit,"
	       " created_at) VALUES (1, 'new', 'dpdk', 'main', 'abc', 1)", NULL, 0);
	return store_last_id(st);
}

/* ---- opening ---------------------------------------------------------- */

static void test_fresh_open(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf report = PG_BUF_INIT(64 * 1024);
	struct store *st = open_ok(t->db);
	sqlite3 *db = store_db(st);
	char mode[16];
	int version = -1;

	raw_text(db, "PRAGMA journal_mode", mode, sizeof(mode));
	assert_string_equal(mode, "wal");
	assert_int_equal(raw_int(db, "PRAGMA foreign_keys"), 1);
	assert_int_equal(raw_int(db, "PRAGMA synchronous"), 2); /* FULL */
	assert_int_equal(raw_int(db, "PRAGMA application_id"), STORE_APPLICATION_ID);
	assert_int_equal(store_schema_version(st, &version, &err), 0);
	assert_int_equal(version, STORE_SCHEMA_VERSION);
	assert_string_equal(store_path(st), t->db);

	assert_int_equal(store_check(st, &report, &err), 0);
	assert_non_null(strstr(pg_buf_str(&report), "integrity_check=ok\n"));
	assert_non_null(strstr(pg_buf_str(&report), "foreign_key_check=ok\n"));
	assert_non_null(strstr(pg_buf_str(&report), "journal_mode=wal\n"));
	assert_non_null(strstr(pg_buf_str(&report), "rows.jobs=0\n"));
	assert_non_null(strstr(pg_buf_str(&report), "status=ok\n"));
	pg_buf_release(&report);
	store_close(st);
}

static void test_reopen_is_idempotent(void **state)
{
	struct tdir *t = *state;
	struct pg_buf before = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf after = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct store *st = open_ok(t->db);
	struct store *other;

	seed_run(st);
	raw_schema(store_db(st), &before);
	store_close(st);

	st = open_ok(t->db);
	/* A second connection to the same file at the same time is fine. */
	other = open_ok(t->db);
	raw_schema(store_db(st), &after);
	assert_string_equal(pg_buf_str(&before), pg_buf_str(&after));
	assert_int_equal(raw_int(store_db(other), "SELECT count(*) FROM runs"), 1);
	assert_int_equal(raw_int(store_db(st), "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	store_close(other);
	store_close(st);
	pg_buf_release(&before);
	pg_buf_release(&after);
}

static void test_newer_store_refused(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = (struct store *)1;
	char want[600], pragma[64];
	sqlite3 *db = raw_open(t->db);

	/* One version newer than this binary knows, whatever that is. */
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", STORE_SCHEMA_VERSION + 1);
	raw_exec(db, pragma);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);

	assert_int_equal(store_open(&st, t->db, &err), -1);
	assert_null(st);
	snprintf(want, sizeof(want),
		 "store '%s' has schema version %d, this perfgate knows up to %d: upgrade perfgate",
		 t->db, STORE_SCHEMA_VERSION + 1, STORE_SCHEMA_VERSION);
	assert_string_equal(err.msg, want);
	assert_int_equal(err.code, PG_EINVAL);

	/* Nothing was changed. */
	db = raw_open(t->db);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION + 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master"), 0);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void test_other_database_refused(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;
	char path[300];
	sqlite3 *db = raw_open(t->db);

	/* Somebody else's tables, no schema version: not touched. */
	raw_exec(db, "CREATE TABLE accounts (id INTEGER PRIMARY KEY)");
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	assert_int_equal(store_open(&st, t->db, &err), -1);
	assert_non_null(strstr(err.msg, "not a perfgate store"));
	db = raw_open(t->db);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master"), 1);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);

	/* Another application's id. */
	tpath(t, "other.db", path, sizeof(path));
	db = raw_open(path);
	raw_exec(db, "PRAGMA application_id = 42");
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	assert_int_equal(store_open(&st, path, &err), -1);
	assert_non_null(strstr(err.msg, "not a perfgate store (application_id 42)"));
}

static void test_unopenable_path(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = (struct store *)1;
	char path[300], want[400];

	tpath(t, "missing/store.db", path, sizeof(path));
	assert_int_equal(store_open(&st, path, &err), -1);
	assert_null(st);
	snprintf(want, sizeof(want), "store '%s': open: unable to open database file", path);
	assert_string_equal(err.msg, want);
	store_close(NULL);
}

/* ---- constraints ------------------------------------------------------ */

static void test_foreign_key_violation_rejected(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = open_ok(t->db);

	seed_run(st);
	/* A patch of a series that does not exist. */
	run_ok(st, "INSERT INTO messages (source_id, position, msgid, raw_size, raw, state,"
	       " received_at) VALUES (1, 'm2', 'c@d', 1, x'41', 'accepted', 1)", NULL, 0);
	assert_int_equal(store_run(st, "insert patch",
				   "INSERT INTO patches (series_id, number, message_id, subject)"
				   " VALUES (?1, 1, 2, 't')",
				   STORE_ARGS(STORE_INT(999)), &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_string_equal(err.msg, "insert patch: FOREIGN KEY constraint failed");

	/* Messages are history: a source that has some cannot be deleted. */
	assert_int_equal(store_run(st, "delete source", "DELETE FROM sources WHERE id = 1",
				   NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "FOREIGN KEY constraint failed"));

	/* A run goes with its series (ON DELETE CASCADE)... but the series'
	 * patches point at messages, which stay. */
	run_ok(st, "DELETE FROM series WHERE id = 1", NULL, 0);
	assert_int_equal(raw_int(store_db(st), "SELECT count(*) FROM runs"), 0);
	assert_int_equal(raw_int(store_db(st), "SELECT count(*) FROM messages"), 2);
	store_close(st);
}

static void test_check_constraints(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = open_ok(t->db);
	int64_t run = seed_run(st);

	assert_int_equal(store_run(st, "insert job",
				   "INSERT INTO jobs (run_id, context, host_class, build_mode, state,"
				   " created_at) VALUES (?1, 'c', 'h', 'release', ?2, 1)",
				   STORE_ARGS(STORE_INT(run), STORE_TEXT("exploded")), &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_non_null(strstr(err.msg, "insert job: CHECK constraint failed"));

	/* A leased job must say until when, and which attempt it is. */
	assert_int_equal(store_run(st, "insert job",
				   "INSERT INTO jobs (run_id, context, host_class, build_mode, state,"
				   " created_at) VALUES (?1, 'c', 'h', 'release', 'leased', 1)",
				   STORE_ARGS(STORE_INT(run)), &err), -1);
	assert_non_null(strstr(err.msg, "CHECK constraint failed"));

	/* A rejected message needs its reason. */
	assert_int_equal(store_run(st, "insert message",
				   "INSERT INTO messages (source_id, position, raw_size, raw, state,"
				   " received_at) VALUES (1, 'bad', 1, x'00', 'rejected', 1)",
				   NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "CHECK constraint failed"));

	/* Patchwork contexts are slugs. */
	assert_int_equal(store_run(st, "insert check",
				   "INSERT INTO check_outbox (series_id, run_id, patch_id, context,"
				   " state, next_try, created_at)"
				   " VALUES (1, ?1, 1, 'perfgate/intel', 'pending', 1, 1)",
				   STORE_ARGS(STORE_INT(run)), &err), -1);
	assert_non_null(strstr(err.msg, "CHECK constraint failed"));
	store_close(st);
}

static void test_exactly_once_keys(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = open_ok(t->db);
	int64_t run = seed_run(st);
	const char *check_sql =
		"INSERT INTO check_outbox (series_id, run_id, patch_id, context, state,"
		" next_try, created_at) VALUES (1, ?1, 1, 'perfgate-intel', 'pending', 1, 1)";

	/* The same message twice from one source. */
	assert_int_equal(store_run(st, "insert message",
				   "INSERT INTO messages (source_id, position, msgid, raw_size, raw,"
				   " state, received_at) VALUES (1, 'elsewhere', 'a@b', 1, x'41',"
				   " 'accepted', 1)", NULL, 0, &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);
	assert_non_null(strstr(err.msg, "UNIQUE constraint failed: messages.source_id, messages.msgid"));

	/* A check is queued once per (run, patch, context, state). */
	run_ok(st, check_sql, STORE_ARGS(STORE_INT(run)));
	assert_int_equal(store_run(st, "queue check", check_sql,
				   STORE_ARGS(STORE_INT(run)), &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);

	/* An agent holds one job at a time. */
	run_ok(st, "INSERT INTO agents (name, token_hash, created_at) VALUES ('a1', 'h', 1)",
	       NULL, 0);
	run_ok(st, "INSERT INTO jobs (run_id, context, host_class, build_mode, state, attempt,"
	       " agent_id, lease_expires, created_at)"
	       " VALUES (?1, 'c', 'h', 'release', 'leased', 1, 1, 100, 1)",
	       STORE_ARGS(STORE_INT(run)));
	assert_int_equal(store_run(st, "lease job",
				   "INSERT INTO jobs (run_id, context, host_class, build_mode, state,"
				   " attempt, agent_id, lease_expires, created_at)"
				   " VALUES (?1, 'c', 'h', 'debug', 'running', 1, 1, 100, 1)",
				   STORE_ARGS(STORE_INT(run)), &err), -1);
	assert_non_null(strstr(err.msg, "UNIQUE constraint failed: jobs.agent_id"));
	/* Once that job is done, the agent may take another. */
	run_ok(st, "UPDATE jobs SET state = 'done', outcome = 'ok' WHERE agent_id = 1", NULL, 0);
	run_ok(st, "INSERT INTO jobs (run_id, context, host_class, build_mode, state, attempt,"
	       " agent_id, lease_expires, created_at)"
	       " VALUES (?1, 'c', 'h', 'debug', 'running', 1, 1, 100, 1)",
	       STORE_ARGS(STORE_INT(run)));
	store_close(st);
}

/* jobs.served is the sum of jobs.attempt over the run's jobs of the same
 * host class, and jobs.boost whether the run is a recheck or its series
 * has one patch, whoever writes the rows (schema step 4). */
static void test_lease_order_columns(void **state)
{
	struct tdir *t = *state;
	struct store *st = open_ok(t->db);
	sqlite3 *db = store_db(st);
	int64_t run = seed_run(st);
	static const char job_sql[] =
		"INSERT INTO jobs (run_id, context, host_class, build_mode, attempt, created_at)"
		" VALUES (?1, 'c', ?2, ?3, ?4, 1)";

	run_ok(st, job_sql, STORE_ARGS(STORE_INT(run), STORE_TEXT("a"), STORE_TEXT("release"),
				       STORE_INT(0)));
	run_ok(st, job_sql, STORE_ARGS(STORE_INT(run), STORE_TEXT("a"), STORE_TEXT("debug"),
				       STORE_INT(0)));
	run_ok(st, job_sql, STORE_ARGS(STORE_INT(run), STORE_TEXT("b"), STORE_TEXT("release"),
				       STORE_INT(0)));
	assert_int_equal(raw_int(db, "SELECT sum(served) FROM jobs"), 0);
	/* Two leases of job 1: both class-a jobs count them, job 3 not. */
	run_ok(st, "UPDATE jobs SET attempt = 2 WHERE id = 1", NULL, 0);
	assert_int_equal(raw_int(db, "SELECT served FROM jobs WHERE id = 1"), 2);
	assert_int_equal(raw_int(db, "SELECT served FROM jobs WHERE id = 2"), 2);
	assert_int_equal(raw_int(db, "SELECT served FROM jobs WHERE id = 3"), 0);
	/* A job added with attempts of its own counts for its siblings, and
	 * theirs for it. */
	run_ok(st, job_sql, STORE_ARGS(STORE_INT(run), STORE_TEXT("a"), STORE_TEXT("asan"),
				       STORE_INT(1)));
	assert_int_equal(raw_int(db, "SELECT served FROM jobs WHERE id = 4"), 3);
	assert_int_equal(raw_int(db, "SELECT served FROM jobs WHERE id = 1"), 3);
	/* Moved to class b (an operator's UPDATE), job 4 leaves class a. */
	run_ok(st, "UPDATE jobs SET host_class = 'b' WHERE id = 4", NULL, 0);
	assert_int_equal(raw_int(db, "SELECT served FROM jobs WHERE id = 1"), 2);
	assert_int_equal(raw_int(db, "SELECT served FROM jobs WHERE id = 3"), 1);
	assert_int_equal(raw_int(db, "SELECT served FROM jobs WHERE id = 4"), 1);
	run_ok(st, "DELETE FROM jobs WHERE id = 1", NULL, 0);
	assert_int_equal(raw_int(db, "SELECT served FROM jobs WHERE id = 2"), 0);
	/* Every row agrees with the sum it stands for. */
	assert_int_equal(raw_int(db, "SELECT count(*) FROM jobs j WHERE served !="
				 " (SELECT sum(k.attempt) FROM jobs k WHERE k.run_id = j.run_id"
				 " AND k.host_class = j.host_class)"), 0);

	/* The series has one patch: boosted; two patches and a new run: not;
	 * a recheck: boosted again. */
	assert_int_equal(raw_int(db, "SELECT min(boost) FROM jobs"), 1);
	run_ok(st, "UPDATE series SET total = 2", NULL, 0);
	assert_int_equal(raw_int(db, "SELECT max(boost) FROM jobs"), 0);
	run_ok(st, "UPDATE runs SET reason = 'recheck'", NULL, 0);
	assert_int_equal(raw_int(db, "SELECT min(boost) FROM jobs"), 1);
	store_close(st);
}

/* ---- transactions and helpers ----------------------------------------- */

static void test_transactions(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = open_ok(t->db);
	int64_t n = -1;
	const char *ins = "INSERT INTO sources (name, kind, location, project, created_at)"
			  " VALUES (?1, 'mbox', '-', 'p', 1)";

	/* Rolling back with no transaction open is harmless. */
	store_rollback(st);

	assert_int_equal(store_begin(st, &err), 0);
	run_ok(st, ins, STORE_ARGS(STORE_TEXT("gone")));
	/* No nesting: a second BEGIN is an error. */
	assert_int_equal(store_begin(st, &err), -1);
	assert_non_null(strstr(err.msg, "begin transaction: cannot start a transaction"));
	store_rollback(st);
	assert_int_equal(store_query_int(st, "count", "SELECT count(*) FROM sources",
					 NULL, 0, &n, &err), 0);
	assert_int_equal(n, 0);

	assert_int_equal(store_begin(st, &err), 0);
	run_ok(st, ins, STORE_ARGS(STORE_TEXT("kept")));
	assert_int_equal(store_last_id(st), 1);
	assert_int_equal(store_changes(st), 1);
	assert_int_equal(store_commit(st, &err), 0);
	store_rollback(st);
	assert_int_equal(store_query_int(st, "find", "SELECT id FROM sources WHERE name = ?1",
					 STORE_ARGS(STORE_TEXT("kept")), &n, &err), 0);
	assert_int_equal(n, 1);

	/* A commit with nothing open says so. */
	assert_int_equal(store_commit(st, &err), -1);
	assert_non_null(strstr(err.msg, "commit transaction:"));
	store_close(st);
}

static void test_statement_helpers(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = open_ok(t->db);
	sqlite3_stmt *stmt = NULL;
	const char blob[] = { 'a', '\0', 'b' };
	int64_t n = 42;

	/* No row. */
	assert_int_equal(store_query_int(st, "find source",
					 "SELECT id FROM sources WHERE name = ?1",
					 STORE_ARGS(STORE_TEXT("none")), &n, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_string_equal(err.msg, "find source: no row");
	assert_int_equal(n, 42);

	/* Parameters and values must match in number. */
	assert_int_equal(store_run(st, "insert source",
				   "INSERT INTO sources (name) VALUES (?1)",
				   STORE_ARGS(STORE_TEXT("a"), STORE_TEXT("b")), &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "insert source: statement has 1 parameters, 2 values given"));

	/* Bad SQL names the statement's purpose and SQLite's complaint. */
	assert_int_equal(store_prepare(st, &stmt, "SELEKT 1", "count things", &err), -1);
	assert_null(stmt);
	assert_int_equal(err.code, PG_EDB);
	assert_non_null(strstr(err.msg, "count things: near \"SELEKT\": syntax error"));

	/* One statement at a time: a second one would be silently ignored. */
	assert_int_equal(store_run(st, "two inserts",
				   "INSERT INTO agents (name, token_hash, created_at) VALUES ('a', 'h', 1);"
				   " DELETE FROM agents", NULL, 0, &err), -1);
	assert_string_equal(err.msg, "two inserts: SQL text is not exactly one statement");
	assert_int_equal(store_prepare(st, &stmt, "-- nothing\n", "nothing", &err), -1);
	assert_null(stmt);
	assert_int_equal(raw_int(store_db(st), "SELECT count(*) FROM agents"), 0);
	assert_int_equal(store_prepare(st, &stmt, "SELECT 1; -- why\n", "one", &err), 0);
	sqlite3_finalize(stmt);

	/* NULL text binds NULL; blobs keep their NULs; a NOT NULL column
	 * refuses the NULL. */
	run_ok(st, "INSERT INTO sources (name, kind, location, project, created_at)"
	       " VALUES ('s', 'mbox', '-', 'p', 1)", NULL, 0);
	run_ok(st, "INSERT INTO messages (source_id, position, msgid, raw_size, raw, state,"
	       " received_at) VALUES (1, 'p', ?1, ?2, ?3, 'accepted', ?4)",
	       STORE_ARGS(STORE_TEXT(NULL), STORE_INT(3), STORE_BLOB(blob, sizeof(blob)),
			  STORE_INT(1)));
	assert_int_equal(raw_int(store_db(st), "SELECT count(*) FROM messages"
				 " WHERE msgid IS NULL AND length(raw) = 3 AND raw = x'610062'"), 1);
	assert_int_equal(store_run(st, "insert source",
				   "INSERT INTO sources (name, kind, location, project, created_at)"
				   " VALUES (?1, 'mbox', '-', 'p', ?2)",
				   STORE_ARGS(STORE_NULL, STORE_REAL(1.5)), &err), -1);
	assert_non_null(strstr(err.msg, "NOT NULL constraint failed: sources.name"));

	/* Stepping by hand. */
	assert_int_equal(store_prepare(st, &stmt, "SELECT name FROM sources WHERE id = ?1",
				       "read source", &err), 0);
	assert_int_equal(store_bind(stmt, STORE_ARGS(STORE_INT(1)), "read source", &err), 0);
	assert_int_equal(store_step(stmt, "read source", &err), 1);
	assert_string_equal((const char *)sqlite3_column_text(stmt, 0), "s");
	assert_int_equal(store_step(stmt, "read source", &err), 0);
	sqlite3_finalize(stmt);
	store_close(st);
}

/* ---- migrations ------------------------------------------------------- */

/* The recorded version-1 store must be exactly what migration 1 makes:
 * editing a shipped migration would otherwise go unnoticed. */
static void test_fixture_matches_migration_1(void **state)
{
	struct tdir *t = *state;
	struct pg_buf fixture = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf fresh = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char path[300];
	sqlite3 *a, *b;

	load_fixture_v1(t->db);
	a = raw_open(t->db);
	tpath(t, "m1.db", path, sizeof(path));
	b = raw_open(path);
	raw_exec(b, store_migrations[0].sql);

	raw_schema(a, &fixture);
	raw_schema(b, &fresh);
	assert_true(fixture.len > 1000);
	assert_string_equal(pg_buf_str(&fixture), pg_buf_str(&fresh));
	assert_int_equal(raw_int(a, "PRAGMA user_version"), raw_int(b, "PRAGMA user_version"));
	assert_int_equal(raw_int(a, "PRAGMA application_id"), raw_int(b, "PRAGMA application_id"));
	assert_int_equal(raw_int(b, "PRAGMA application_id"), STORE_APPLICATION_ID);
	assert_int_equal(store_migrations[0].version, 1);

	assert_int_equal(sqlite3_close(a), SQLITE_OK);
	assert_int_equal(sqlite3_close(b), SQLITE_OK);
	pg_buf_release(&fixture);
	pg_buf_release(&fresh);
}

/* Every table of version 1, all of its rows in a fixed order. */
static const char *const v1_tables[] = {
	"SELECT * FROM sources ORDER BY rowid",
	"SELECT * FROM source_cursors ORDER BY rowid",
	"SELECT * FROM source_events ORDER BY rowid",
	"SELECT * FROM messages ORDER BY rowid",
	"SELECT * FROM series ORDER BY rowid",
	"SELECT * FROM series_deps ORDER BY rowid",
	"SELECT * FROM patches ORDER BY rowid",
	"SELECT * FROM recheck_requests ORDER BY rowid",
	"SELECT * FROM agents ORDER BY rowid",
	"SELECT * FROM runs ORDER BY rowid",
	"SELECT * FROM jobs ORDER BY rowid",
	"SELECT * FROM attempts ORDER BY rowid",
	"SELECT * FROM results ORDER BY rowid",
	"SELECT * FROM samples ORDER BY rowid",
	"SELECT * FROM logs ORDER BY rowid",
	"SELECT * FROM verdicts ORDER BY rowid",
	"SELECT * FROM check_outbox ORDER BY rowid",
	"SELECT * FROM email_outbox ORDER BY rowid",
};

#define N_V1_TABLES (sizeof(v1_tables) / sizeof(v1_tables[0]))

static void test_migrate_from_v1(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf before[N_V1_TABLES], after = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf report = PG_BUF_INIT(64 * 1024);
	int ncols[N_V1_TABLES];
	struct store *st;
	sqlite3 *db;
	char text[128];
	int version = 0;

	load_fixture_v1(t->db);
	db = raw_open(t->db);
	/* Make sure the table list above is all of version 1. */
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"),
			 N_V1_TABLES);
	for (size_t i = 0; i < N_V1_TABLES; i++) {
		pg_buf_init(&before[i], PG_BUF_NOLIMIT);
		ncols[i] = raw_rows(db, v1_tables[i], -1, &before[i]);
	}
	assert_int_equal(sqlite3_close(db), SQLITE_OK);

	st = open_ok(t->db);
	db = store_db(st);
	assert_int_equal(store_schema_version(st, &version, &err), 0);
	assert_int_equal(version, STORE_SCHEMA_VERSION);

	/* Every old row is still there with the same values (new columns are
	 * added at the end, so the first ncols are the old ones). */
	for (size_t i = 0; i < N_V1_TABLES; i++) {
		pg_buf_reset(&after);
		raw_rows(db, v1_tables[i], ncols[i], &after);
		assert_string_equal(pg_buf_str(&before[i]), pg_buf_str(&after));
		pg_buf_release(&before[i]);
	}
	assert_int_equal(raw_int(db, "SELECT count(*) FROM messages"), 7);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM patches WHERE series_id = 1"), 3);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM jobs"), 3);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM samples"), 18);
	assert_int_equal(raw_int(db, "SELECT length(raw) FROM messages WHERE id = 5"), 9);

	/* Version 2 backfilled the history: the base side's medians of the one
	 * finished job (odd and even numbers of repetitions). */
	assert_int_equal(raw_int(db, "SELECT count(*) FROM history"), 2);
	raw_text(db, "SELECT host || ' ' || tree || ' ' || branch || ' ' || build_mode || ' '"
		 " || commit_oid || ' ' || value || ' ' || samples FROM history"
		 " WHERE metric = 'rate_persec'", text, sizeof(text));
	assert_string_equal(text, "lab-intel-1 dpdk main release "
			    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 100.0 5");
	raw_text(db, "SELECT value || ' ' || samples || ' ' || unit || ' ' || job_id"
		 " FROM history WHERE metric = 'rx_pps'", text, sizeof(text));
	assert_string_equal(text, "25.0 4 pps 1");

	/* The new columns and tables work, with their constraints. */
	run_ok(st, "UPDATE jobs SET stage = 'bench', progress = 40, stage_at = 1764090300"
	       " WHERE id = 3", NULL, 0);
	assert_int_equal(raw_int(db, "SELECT progress FROM jobs WHERE id = 3"), 40);
	assert_int_equal(store_run(st, "report progress",
				   "UPDATE jobs SET progress = 101 WHERE id = 3", NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "CHECK constraint failed"));
	run_ok(st, "INSERT INTO change_points (host, tree, branch, build_mode, benchmark, metric,"
	       " commit_before, commit_after, effect, p, detected_at)"
	       " VALUES ('lab-intel-1', 'dpdk', 'main', 'release', 'mempool_perf', 'rate_persec',"
	       " 'a', 'b', -0.07, 0.001, 1)", NULL, 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master"
				 " WHERE name = 'jobs_lease_expiry'"), 1);
	/* Version 6 rebuilt runs: a baseline run has no series and says why,
	 * every other run has a series and no trigger; jobs still point to
	 * runs, and the foreign keys hold again after the rebuild. */
	assert_int_equal(raw_int(db, "PRAGMA foreign_keys"), 1);
	run_ok(st, "INSERT INTO runs (series_id, reason, tree, branch, base_commit, created_at,"
	       " trigger) VALUES (NULL, 'baseline', 'dpdk', 'main', 'abc', 2, 'head')", NULL, 0);
	assert_int_equal(store_run(st, "run without a series",
				   "INSERT INTO runs (series_id, reason, tree, branch, base_commit,"
				   " created_at) VALUES (NULL, 'new', 'dpdk', 'main', 'abc', 2)",
				   NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "CHECK constraint failed"));
	assert_int_equal(store_run(st, "baseline with a series",
				   "INSERT INTO runs (series_id, reason, tree, branch, base_commit,"
				   " created_at, trigger) VALUES (1, 'baseline', 'dpdk', 'main', 'abc',"
				   " 2, 'head')", NULL, 0, &err), -1);
	assert_int_equal(store_run(st, "baseline without a trigger",
				   "INSERT INTO runs (series_id, reason, tree, branch, base_commit,"
				   " created_at) VALUES (NULL, 'baseline', 'dpdk', 'main', 'abc', 2)",
				   NULL, 0, &err), -1);
	assert_int_equal(store_run(st, "job of no run",
				   "INSERT INTO jobs (run_id, context, host_class, build_mode,"
				   " created_at) VALUES (999, 'c', 'h', 'm', 2)", NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "FOREIGN KEY constraint failed"));
	/* Version 8: an alert mail has a change point and no series or run,
	 * once per change point; a report mail keeps both; host drift has one
	 * open row per host, build mode, key and kind. */
	run_ok(st, "INSERT INTO email_outbox (change_point_id, context, msgid, to_addrs, subject,"
	       " body, next_try, created_at) VALUES (1, 'main-alert', 'cp1@x', 'm@x', 's', 'b',"
	       " 3, 3)", NULL, 0);
	assert_int_equal(store_run(st, "second alert",
				   "INSERT INTO email_outbox (change_point_id, context, msgid,"
				   " to_addrs, subject, body, next_try, created_at) VALUES (1, 'c',"
				   " 'cp1b@x', 'm@x', 's', 'b', 3, 3)", NULL, 0, &err), -1);
	assert_int_equal(store_run(st, "mail of nothing",
				   "INSERT INTO email_outbox (context, msgid, to_addrs, subject, body,"
				   " next_try, created_at) VALUES ('c', 'n@x', 'm@x', 's', 'b', 3, 3)",
				   NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "CHECK constraint failed"));
	assert_int_equal(raw_int(db, "SELECT count(*) FROM email_outbox WHERE series_id = 1"
				 " AND run_id = 1"), 1);
	run_ok(st, "INSERT INTO host_drift (host, build_mode, benchmark, metric, kind, commit_oid,"
	       " change_pct, why, state, flagged_at) VALUES ('h', 'release', 'b', 'm', 'time',"
	       " 'abc', -9.5, 'w', 'flagged', 4)", NULL, 0);
	assert_int_equal(store_run(st, "second open drift",
				   "INSERT INTO host_drift (host, build_mode, benchmark, metric, kind,"
				   " commit_oid, change_pct, why, state, flagged_at) VALUES ('h',"
				   " 'release', 'b', 'm', 'time', 'abd', -9.5, 'w', 'drained', 5)",
				   NULL, 0, &err), -1);
	run_ok(st, "UPDATE host_drift SET state = 'cleared', cleared_at = 6", NULL, 0);
	run_ok(st, "INSERT INTO host_drift (host, build_mode, benchmark, metric, kind, commit_oid,"
	       " change_pct, why, state, flagged_at) VALUES ('h', 'release', 'b', 'm', 'time',"
	       " 'abd', -9.5, 'w', 'drained', 7)", NULL, 0);
	/* A job pruned later keeps its history. */
	run_ok(st, "DELETE FROM runs WHERE id = 1", NULL, 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM history WHERE job_id IS NULL"), 2);

	assert_int_equal(store_check(st, &report, &err), 0);
	assert_non_null(strstr(pg_buf_str(&report), "rows.history=2\n"));
	pg_buf_release(&report);
	pg_buf_release(&after);
	store_close(st);
}

/* An upgraded store and a new one end with the same schema. */
static void test_upgraded_equals_fresh(void **state)
{
	struct tdir *t = *state;
	struct pg_buf upgraded = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf fresh = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct store *a, *b;
	char path[300];

	load_fixture_v1(t->db);
	a = open_ok(t->db);
	tpath(t, "fresh.db", path, sizeof(path));
	b = open_ok(path);
	raw_schema(store_db(a), &upgraded);
	raw_schema(store_db(b), &fresh);
	assert_string_equal(pg_buf_str(&upgraded), pg_buf_str(&fresh));
	store_close(a);
	store_close(b);
	pg_buf_release(&upgraded);
	pg_buf_release(&fresh);
}

/* A crash between migration steps leaves the store at a step that
 * finished; the next open goes on from there. */
static void test_migration_resumes(void **state)
{
	struct tdir *t = *state;
	struct store *st;
	sqlite3 *db = raw_open(t->db);

	raw_exec(db, "PRAGMA journal_mode = WAL");
	raw_exec(db, store_migrations[0].sql);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	st = open_ok(t->db);
	assert_int_equal(raw_int(store_db(st), "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(store_db(st), "SELECT count(*) FROM history"), 0);
	store_close(st);
}

/* ---- the health check ------------------------------------------------- */

/* store_check() counts the rows of every table there is. */
static void test_check_counts_every_table(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf report = PG_BUF_INIT(64 * 1024);
	struct store *st = open_ok(t->db);
	sqlite3_stmt *stmt = NULL;
	int tables = 0;
	int lines = 0;

	assert_int_equal(store_check(st, &report, &err), 0);
	assert_int_equal(sqlite3_prepare_v2(store_db(st),
					    "SELECT name FROM sqlite_master WHERE type = 'table'"
					    " AND name NOT LIKE 'sqlite_%'", -1, &stmt, NULL),
			 SQLITE_OK);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		char want[128];

		snprintf(want, sizeof(want), "\nrows.%s=", (const char *)sqlite3_column_text(stmt, 0));
		if (!strstr(pg_buf_str(&report), want))
			fail_msg("store_check does not count table %s", want + 6);
		tables++;
	}
	sqlite3_finalize(stmt);
	for (const char *p = pg_buf_str(&report); (p = strstr(p, "\nrows.")); p++)
		lines++;
	assert_int_equal(lines, tables);
	pg_buf_release(&report);
	store_close(st);
}

static void test_check_finds_dangling_rows(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf report = PG_BUF_INIT(64 * 1024);
	struct store *st = open_ok(t->db);
	sqlite3 *db;

	seed_run(st);
	store_close(st);
	/* Another program, with foreign keys off, leaves a run pointing to a
	 * series that is not there. */
	db = raw_open(t->db);
	raw_exec(db, "PRAGMA foreign_keys = OFF;"
		 " INSERT INTO runs (series_id, reason, tree, branch, base_commit, created_at)"
		 " VALUES (77, 'new', 'dpdk', 'main', 'abc', 1)");
	assert_int_equal(sqlite3_close(db), SQLITE_OK);

	st = open_ok(t->db);
	assert_int_equal(store_check(st, &report, &err), -1);
	assert_int_equal(err.code, PG_EDB);
	assert_non_null(strstr(pg_buf_str(&report),
			       "foreign_key_check=row 2 of runs points to a missing row of series\n"));
	assert_non_null(strstr(pg_buf_str(&report), "integrity_check=ok\n"));
	assert_non_null(strstr(pg_buf_str(&report), "status=1 problem\n"));
	assert_non_null(strstr(err.msg, "check found 1 problem, first foreign_key_check: row 2 of runs"));
	pg_buf_release(&report);
	store_close(st);
}

/* A store with enough rows to span many pages, closed so that the WAL is
 * checkpointed into the file. */
static void make_big_store(const char *path)
{
	struct pg_err err = PG_ERR_INIT;
	struct store *st = open_ok(path);
	char raw[1500];

	memset(raw, 'x', sizeof(raw));
	assert_int_equal(store_begin(st, &err), 0);
	run_ok(st, "INSERT INTO sources (name, kind, location, project, created_at)"
	       " VALUES ('s', 'mbox', '-', 'p', 1)", NULL, 0);
	for (int i = 0; i < 400; i++) {
		char pos[32];

		snprintf(pos, sizeof(pos), "pos-%d", i);
		run_ok(st, "INSERT INTO messages (source_id, position, msgid, subject, raw_size,"
		       " raw, state, received_at) VALUES (1, ?1, ?1, ?1, ?2, ?3, 'accepted', 1)",
		       STORE_ARGS(STORE_TEXT(pos), STORE_INT((int64_t)sizeof(raw)),
				  STORE_BLOB(raw, sizeof(raw))));
	}
	assert_int_equal(store_commit(st, &err), 0);
	store_close(st);
}

static void copy_file(const char *from, const char *to)
{
	struct pg_buf data = PG_BUF_INIT(PG_BUF_NOLIMIT);
	FILE *f;

	read_file(from, &data);
	f = fopen(to, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data.data, 1, data.len, f), data.len);
	assert_int_equal(fclose(f), 0);
	pg_buf_release(&data);
}

/* Open and check a damaged file: either fails with a clear message, and
 * neither crashes.  Returns the message. */
static void expect_damage_found(const char *path, char *msg, size_t msgsz)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf report = PG_BUF_INIT(256 * 1024);
	struct store *st = NULL;

	if (store_open(&st, path, &err) == 0) {
		assert_int_equal(store_check(st, &report, &err), -1);
		assert_null(strstr(pg_buf_str(&report), "status=ok"));
		assert_non_null(strstr(pg_buf_str(&report), "status="));
		store_close(st);
	}
	assert_int_equal(err.code, PG_EDB);
	assert_non_null(strstr(err.msg, path));
	if (!strstr(err.msg, "malformed") && !strstr(err.msg, "not a database") &&
	    !strstr(err.msg, "corrupt") && !strstr(err.msg, "integrity_check"))
		fail_msg("unclear error for a damaged store: %s", err.msg);
	snprintf(msg, msgsz, "%s", err.msg);
	print_message("damage found: %s\n", err.msg);
	pg_buf_release(&report);
}

static void test_damaged_files(void **state)
{
	struct tdir *t = *state;
	char path[300], msg[PG_ERR_MSG_MAX];
	unsigned char junk[4096 * 4];
	struct stat sb;
	int fd;

	make_big_store(t->db);
	/* Closed: the whole store is in the file, no WAL beside it. */
	tpath(t, "store.db-wal", path, sizeof(path));
	assert_int_equal(access(path, F_OK), -1);

	/* Bytes overwritten in the middle. */
	tpath(t, "overwritten.db", path, sizeof(path));
	copy_file(t->db, path);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(sb.st_size > 400 * 1500);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 131 + 7);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, junk, sizeof(junk), sb.st_size / 2 / 4096 * 4096),
			 (ssize_t)sizeof(junk));
	assert_int_equal(close(fd), 0);
	expect_damage_found(path, msg, sizeof(msg));

	/* Cut in half. */
	tpath(t, "truncated.db", path, sizeof(path));
	copy_file(t->db, path);
	assert_int_equal(truncate(path, sb.st_size / 2), 0);
	expect_damage_found(path, msg, sizeof(msg));

	/* Not a database at all. */
	tpath(t, "text.db", path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(write(fd, "this is not a database\n", 23), 23);
	assert_int_equal(close(fd), 0);
	expect_damage_found(path, msg, sizeof(msg));
	assert_non_null(strstr(msg, "file is not a database"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_is_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_store_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_database_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unopenable_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_key_violation_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_constraints, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exactly_once_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_order_columns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transactions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_statement_helpers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fixture_matches_migration_1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upgraded_equals_fresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_resumes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_counts_every_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_finds_dangling_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_files, setup, teardown),
	};

	/* Migrations log at info level; keep the test output to cmocka's. */
	pg_log_set_levels("warn");
	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
