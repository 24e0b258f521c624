/* SPDX-License-Identifier: MIT */
#ifndef PG_STORE_H
#define PG_STORE_H

/*
 * The controller's store: one SQLite database in WAL mode holding every
 * state the controller must not lose (DESIGN.md section 5).  This module
 * owns opening, the schema and its migrations, transactions and checking;
 * the modules that own the data (intake, planner, scheduler, verdicts,
 * outbox) write their own SQL through the statement helpers below.
 *
 *   struct store *st;
 *   if (store_open(&st, "perfgate.db", &err) < 0) ...
 *   if (store_begin(st, &err) < 0) goto out;
 *   if (store_run(st, "insert series", "INSERT INTO series (...) VALUES (?1, ?2)",
 *                 STORE_ARGS(STORE_TEXT(project), STORE_INT(total)), &err) < 0)
 *           goto out;
 *   rc = store_commit(st, &err);
 *   out:
 *   if (rc)
 *           store_rollback(st);
 *
 * Rules for every module that writes: one transaction per state change,
 * opened with store_begin(); prepared statements with bound parameters
 * only, never SQL text built from values; times are INTEGER seconds since
 * the Unix epoch (UTC).
 *
 * A struct store is one SQLite connection, opened without SQLite's own
 * per-connection mutex.  Use it from one thread at a time: a transaction
 * belongs to the connection, so two threads sharing one would interleave
 * their changes.  Give each thread its own store_open() of the same file
 * instead; WAL lets readers run beside the one writer.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "buf.h"
#include "err.h"

/* The schema version this binary creates and understands (PRAGMA
 * user_version of an up-to-date store). */
#define STORE_SCHEMA_VERSION 11

/* How long a statement waits for another connection's lock before it fails
 * with PG_ETIMEOUT. */
#define STORE_BUSY_TIMEOUT_MS 5000

/* Each connection's page cache, in KiB (PRAGMA cache_size = -N): the bound
 * of what a connection keeps of the store in memory, whatever default the
 * SQLite library was built with (2,000 KiB is SQLite's own). */
#define STORE_PAGE_CACHE_KIB "2000"

/* PRAGMA application_id of a perfgate store ("PGAT"): tells our files from
 * other SQLite databases. */
#define STORE_APPLICATION_ID 0x50474154

struct store;

/*
 * Open the store at `path`, creating the file when it does not exist, and
 * bring its schema up to STORE_SCHEMA_VERSION: each migration step runs in
 * its own transaction, so a crash leaves the store at the last step that
 * finished.  The connection gets WAL journaling (verified: a file system
 * where WAL cannot work is an error), synchronous=FULL, foreign keys on,
 * a page cache of STORE_PAGE_CACHE_KIB and a busy timeout of
 * STORE_BUSY_TIMEOUT_MS.  (The API's writer turns its
 * own connection to NORMAL and syncs the WAL itself before it acts on a
 * commit: api_worker.c.)  SQLite's automatic checkpoint (after a commit
 * that left 1,000 pages in the WAL) reports a failed write to the handler
 * of store_set_io_failure_handler().  Threads of one process take their
 * write turns in order (store_begin(), store_wlock.h).
 *
 * Refused, with nothing changed: a store with a newer schema than this
 * binary knows ("store 'x' has schema version 5, this perfgate knows up to
 * 2: upgrade perfgate"), a file that is not a database or is corrupt, and
 * a database with tables but no perfgate schema version (not ours).
 *
 * Returns 0 and sets *out, or -1 with *out NULL and err set.
 */
int store_open(struct store **out, const char *path, struct pg_err *err);

/*
 * The store's file failed a write or a sync under SQLite (SQLITE_IOERR:
 * a write or sync that failed with EIO; a full disk is SQLITE_FULL and
 * not this).  After a failed write or sync the kernel may have dropped
 * pages it had accepted and marked them clean, so a later sync of the same
 * file reports success (the "fsyncgate" of PostgreSQL, 2018): SQLite would
 * then read back, and copy into the database file at its next checkpoint,
 * what the disk no longer has, and reset the WAL that still had it.  Going
 * on can turn a lost write into a corrupt store.
 *
 * A handler set here (process-wide; NULL, the default, only returns the
 * error) is called with the message before such an error is returned; a
 * daemon stops in it at once, without closing the store (a close
 * checkpoints), and its next start recovers the store from what the disk
 * holds, as PostgreSQL does after a failed fsync.  store_io_failed()
 * reports such a failure found outside store.c (the API's own sync of the
 * WAL, a checkpoint) to the same handler; store_io_lost() says whether an
 * SQLite result code is one.
 */
void store_set_io_failure_handler(void (*fn)(const char *msg));
void store_io_failed(const char *msg);
bool store_io_lost(int rc);

/* Close the connection (the last one to close checkpoints the WAL into the
 * database file).  NULL is a no-op.  Statements must be finalized first. */
void store_close(struct store *st);

/* The SQLite handle, for the modules that prepare their own statements.
 * Do not close it or change its pragmas. */
sqlite3 *store_db(struct store *st);

/* The path the store was opened with. */
const char *store_path(const struct store *st);

/* Read the schema version (PRAGMA user_version) into *version.
 * Returns 0 or -1. */
int store_schema_version(struct store *st, int *version, struct pg_err *err);

/*
 * Transactions.  store_begin() starts a write transaction at once (BEGIN
 * IMMEDIATE): taking the write lock up front means two writers queue on
 * the busy timeout instead of both holding read locks and failing when
 * they upgrade.  Read-only work needs no transaction.
 *
 * store_commit() returns 0, or -1 with err set; after a failed commit call
 * store_rollback().  store_rollback() ends an open transaction and does
 * nothing when none is open, so a cleanup path may always call it; it
 * cannot fail in a way the caller could handle (a failure is logged).
 */
int store_begin(struct store *st, struct pg_err *err);
int store_commit(struct store *st, struct pg_err *err);
void store_rollback(struct store *st);

/*
 * Savepoints, for a batch of independent changes in one transaction (the
 * API's writer runs each request of a batch under one, so that a request
 * that fails undoes only its own changes, and commits the batch once).
 * Inside an open transaction only, one at a time (they do not nest):
 * store_savepoint() opens it, store_release() keeps its changes in the
 * transaction, store_rollback_to() undoes them; both end it.  Each returns
 * 0 or -1.
 *
 * store_in_tx() tells whether a transaction is open: some errors (I/O,
 * out of memory, a full disk) make SQLite roll the whole transaction back
 * on its own, which a batch must notice, since everything before it in
 * the batch is gone too.
 */
int store_savepoint(struct store *st, struct pg_err *err);
int store_release(struct store *st, struct pg_err *err);
int store_rollback_to(struct store *st, struct pg_err *err);
bool store_in_tx(struct store *st);

/*
 * Statement helpers.  `what` says what the statement is for ("insert
 * series", "lease job"); every error names it and carries SQLite's message,
 * e.g. "insert patch: FOREIGN KEY constraint failed".  Error codes:
 * PG_ECONFLICT for a violated constraint (UNIQUE, CHECK, FOREIGN KEY, NOT
 * NULL), PG_ETIMEOUT when a lock stayed busy past the timeout, PG_ENOMEM,
 * PG_ETOOBIG, and PG_EDB for anything else (I/O, corruption, bad SQL).
 */

enum store_arg_type {
	STORE_ARG_NULL,
	STORE_ARG_INT,
	STORE_ARG_REAL,
	STORE_ARG_TEXT,		/* NUL-terminated; a NULL pointer binds NULL */
	STORE_ARG_BLOB,		/* len bytes; a NULL pointer binds NULL */
};

/* One value for a "?N" parameter; build them with the macros below. */
struct store_arg {
	enum store_arg_type type;
	int64_t i;
	double d;
	const void *p;
	size_t len;
};

#define STORE_NULL ((struct store_arg){ .type = STORE_ARG_NULL })
#define STORE_INT(v) ((struct store_arg){ .type = STORE_ARG_INT, .i = (v) })
#define STORE_REAL(v) ((struct store_arg){ .type = STORE_ARG_REAL, .d = (v) })
#define STORE_TEXT(s) ((struct store_arg){ .type = STORE_ARG_TEXT, .p = (s) })
#define STORE_BLOB(b, n) ((struct store_arg){ .type = STORE_ARG_BLOB, .p = (b), .len = (n) })

/* Expands to the two arguments `args, nargs` for a list of values:
 * STORE_ARGS(STORE_INT(id), STORE_TEXT(name)).  Pass `NULL, 0` for none. */
#define STORE_ARGS(...) \
	((const struct store_arg[]){ __VA_ARGS__ }), \
	(sizeof((const struct store_arg[]){ __VA_ARGS__ }) / sizeof(struct store_arg))

/* Prepare one statement of fixed SQL text (exactly one: text with a second
 * statement is refused with PG_EINVAL, not cut short).  Returns 0 and sets
 * *stmt (the caller finalizes it with sqlite3_finalize()), or -1 with *stmt
 * NULL. */
int store_prepare(struct store *st, sqlite3_stmt **stmt, const char *sql,
		  const char *what, struct pg_err *err);

/* store_prepare() through the connection's cache of prepared statements:
 * the statement of an earlier call with the same SQL text, reset, when it
 * is not in use.  Release the statement with store_done() (never with
 * sqlite3_finalize()), which resets it and keeps it for the next call.
 * store_done() also takes a statement of store_prepare() on the same
 * connection, and may keep it.  store_run() and store_query_int() use the
 * cache.  Returns 0 or -1, as store_prepare(). */
int store_prepare_cached(struct store *st, sqlite3_stmt **stmt, const char *sql,
			 const char *what, struct pg_err *err);
void store_done(struct store *st, sqlite3_stmt *stmt);

/* Bind args[0..nargs) to the parameters ?1..?nargs.  Returns 0 or -1. */
int store_bind(sqlite3_stmt *stmt, const struct store_arg *args, size_t nargs,
	       const char *what, struct pg_err *err);

/* Step once.  Returns 1 when a row is ready, 0 when the statement is done,
 * -1 on error. */
int store_step(sqlite3_stmt *stmt, const char *what, struct pg_err *err);

/* Prepare, bind, step to the end (rows are discarded) and finalize one
 * statement.  Returns 0 or -1.  store_last_id() and store_changes() then
 * tell the row id inserted and the number of rows changed. */
int store_run(struct store *st, const char *what, const char *sql,
	      const struct store_arg *args, size_t nargs, struct pg_err *err);

/* Run a query and store the first column of its first row in *out (as an
 * integer: NULL reads as 0).  Returns 0, or -1 with PG_ENOTFOUND when there
 * is no row. */
int store_query_int(struct store *st, const char *what, const char *sql,
		    const struct store_arg *args, size_t nargs, int64_t *out,
		    struct pg_err *err);

/* The same for a query whose first column is an id: *id is 0 when there is
 * no row (not an error).  Returns 0 or -1. */
int store_query_id(struct store *st, const char *what, const char *sql,
		   const struct store_arg *args, size_t nargs, int64_t *id, struct pg_err *err);

/* Every row's first column, as ids, into *ids (malloc'd; *n of them; the
 * caller frees), read to the end before it returns so that no statement
 * stays open while the caller acts on them.  args may be NULL with nargs
 * 0.  Returns 0, or -1 with *ids NULL and *n 0. */
int store_list_ids(struct store *st, const char *what, const char *sql,
		   const struct store_arg *args, size_t nargs, int64_t **ids, size_t *n,
		   struct pg_err *err);

/* Column i of the current row as a malloc'd string into *out (NULL for
 * SQL NULL).  Returns 0, or -1 when out of memory. */
int store_col_dup(sqlite3_stmt *stmt, int i, char **out);

/* Run fixed SQL text (one or more statements, no parameters): pragmas and
 * schema scripts.  Never for text that holds values.  Returns 0 or -1. */
int store_exec(struct store *st, const char *sql, const char *what,
	       struct pg_err *err);

int64_t store_last_id(struct store *st);
int64_t store_changes(struct store *st);

/* Text column col of the current row into out (size > 0), cut at a
 * character to fit; NULL gives "". */
void store_col_text(sqlite3_stmt *stmt, int col, char *out, size_t size);

/*
 * Check the store's health: PRAGMA integrity_check, PRAGMA
 * foreign_key_check, the schema version, journal mode and foreign-key
 * enforcement, and the row count of every table.  The findings go to
 * `report` (may be NULL) as "key=value" lines, one per fact or problem:
 *
 *   schema_version=2 (this perfgate knows up to 2)
 *   journal_mode=wal
 *   integrity_check=ok
 *   foreign_key_check=ok
 *   rows.series=12
 *   ...
 *   status=ok
 *
 * Returns 0 when healthy; -1 with err set when a problem was found (PG_EDB,
 * naming the first; the report lists them all, at most 100 of each check),
 * or when the report outgrew its buffer's cap (PG_EIO).  A damaged file is
 * reported, not a crash: SQLite's own errors become problems.
 */
int store_check(struct store *st, struct pg_buf *report, struct pg_err *err);

/*
 * The schema's history, exposed for the unit tests and test-tool.
 * store_migrations[i] takes a store from version i to version i + 1; its
 * script ends by setting PRAGMA user_version.  A step that has shipped is
 * never edited: a change of schema is a new step (the unit tests compare
 * step 1 with a recorded version-1 store to catch drift).
 */
struct store_migration {
	int version;		/* the user_version the step leads to */
	const char *summary;	/* one line for the log */
	const char *sql;
};

extern const struct store_migration store_migrations[STORE_SCHEMA_VERSION];

#endif
