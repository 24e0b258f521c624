/* SPDX-License-Identifier: MIT */
/*
 * The store: opening, pragmas, migrations, transactions, statement helpers
 * and the health check.  The schema itself is in schema.c.
 */
#include "store.h"
#include "store_wlock.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "log.h"
#include "vec.h"

/* Prepared statements kept for reuse: preparing costs more than running
 * most of our statements.  A hash of the SQL text picks a set of
 * STORE_CACHE_WAYS slots, so that two statements used in turn do not keep
 * pushing each other out. */
#define STORE_CACHE_SETS 64
#define STORE_CACHE_WAYS 4

struct store_slot {
	sqlite3_stmt *stmt;
	bool busy;			/* handed out, not back yet */
};

struct store_set {
	struct store_slot slot[STORE_CACHE_WAYS];
	unsigned int next;		/* the way to reuse next */
};

struct store {
	sqlite3 *db;
	char *path;
	struct store_set cache[STORE_CACHE_SETS];
	struct store_wlock *wlock;	/* this file's write turn (NULL: none) */
	bool wlocked;			/* this connection has the turn */
};

/* At most this many problems of each kind go into a check report: a badly
 * damaged file could otherwise produce one line per page. */
#define CHECK_MAX_PROBLEMS 100

/* Every table of the latest schema, for the row counts of store_check().
 * Fixed SQL per table: table names cannot be bound as parameters.  The
 * unit tests compare this list with sqlite_master. */
static const struct {
	const char *table;
	const char *sql;
} count_queries[] = {
	{ "sources", "SELECT count(*) FROM sources" },
	{ "source_cursors", "SELECT count(*) FROM source_cursors" },
	{ "source_events", "SELECT count(*) FROM source_events" },
	{ "messages", "SELECT count(*) FROM messages" },
	{ "series", "SELECT count(*) FROM series" },
	{ "series_deps", "SELECT count(*) FROM series_deps" },
	{ "series_refs", "SELECT count(*) FROM series_refs" },
	{ "patches", "SELECT count(*) FROM patches" },
	{ "recheck_requests", "SELECT count(*) FROM recheck_requests" },
	{ "agents", "SELECT count(*) FROM agents" },
	{ "runs", "SELECT count(*) FROM runs" },
	{ "jobs", "SELECT count(*) FROM jobs" },
	{ "attempts", "SELECT count(*) FROM attempts" },
	{ "results", "SELECT count(*) FROM results" },
	{ "samples", "SELECT count(*) FROM samples" },
	{ "logs", "SELECT count(*) FROM logs" },
	{ "verdicts", "SELECT count(*) FROM verdicts" },
	{ "check_outbox", "SELECT count(*) FROM check_outbox" },
	{ "email_outbox", "SELECT count(*) FROM email_outbox" },
	{ "history", "SELECT count(*) FROM history" },
	{ "change_points", "SELECT count(*) FROM change_points" },
	{ "host_drift", "SELECT count(*) FROM host_drift" },
	{ "ssh_hosts", "SELECT count(*) FROM ssh_hosts" },
};

static enum pg_errcode code_of(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_CONSTRAINT:
		return PG_ECONFLICT;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return PG_ETIMEOUT;
	case SQLITE_NOMEM:
		return PG_ENOMEM;
	case SQLITE_TOOBIG:
		return PG_ETOOBIG;
	default:
		return PG_EDB;
	}
}

static void (*store_io_handler)(const char *msg);

void store_set_io_failure_handler(void (*fn)(const char *msg))
{
	store_io_handler = fn;
}

void store_io_failed(const char *msg)
{
	if (store_io_handler)
		store_io_handler(msg);
}

bool store_io_lost(int rc)
{
	switch (rc) {
	case SQLITE_IOERR:
	case SQLITE_IOERR_WRITE:
	case SQLITE_IOERR_FSYNC:
	case SQLITE_IOERR_DIR_FSYNC:
	case SQLITE_IOERR_TRUNCATE:
		return true;
	default:
		return false;
	}
}

/* Record the error of the last call on db: "what: SQLite's message"; a
 * lost write goes to the handler first (store.h). */
static int db_err(sqlite3 *db, int rc, const char *what, struct pg_err *err)
{
	pg_err_set(err, code_of(rc), "%s: %s", what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	if (store_io_lost(rc))
		store_io_failed(err ? err->msg : what);
	return -1;
}

sqlite3 *store_db(struct store *st)
{
	return st->db;
}

const char *store_path(const struct store *st)
{
	return st->path;
}

int64_t store_last_id(struct store *st)
{
	return sqlite3_last_insert_rowid(st->db);
}

int64_t store_changes(struct store *st)
{
	return sqlite3_changes64(st->db);
}

void store_col_text(sqlite3_stmt *stmt, int col, char *out, size_t size)
{
	const char *s = (const char *)sqlite3_column_text(stmt, col);

	pg_fmt_cut(out, size, "%s", s ? s : "");
}

int store_prepare(struct store *st, sqlite3_stmt **stmt, const char *sql,
		  const char *what, struct pg_err *err)
{
	sqlite3_stmt *extra = NULL;
	const char *tail = NULL;
	int rc;

	*stmt = NULL;
	rc = sqlite3_prepare_v2(st->db, sql, -1, stmt, &tail);
	if (rc != SQLITE_OK)
		return db_err(st->db, rc, what, err);
	/* SQLite compiles the first statement and would silently ignore the
	 * rest: what follows may be comments and blanks, nothing else. */
	if (*stmt && tail && *tail) {
		rc = sqlite3_prepare_v2(st->db, tail, -1, &extra, NULL);
		sqlite3_finalize(extra);
	}
	if (!*stmt || rc != SQLITE_OK || extra) {
		sqlite3_finalize(*stmt);
		*stmt = NULL;
		return pg_err_set(err, PG_EINVAL, "%s: SQL text is not exactly one statement",
				  what);
	}
	return 0;
}

static struct store_set *cache_set(struct store *st, const char *sql)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)sql; *p; p++)
		h = (h ^ *p) * 16777619u;
	return &st->cache[h % STORE_CACHE_SETS];
}

int store_prepare_cached(struct store *st, sqlite3_stmt **stmt, const char *sql,
			 const char *what, struct pg_err *err)
{
	struct store_set *set = cache_set(st, sql);

	for (size_t i = 0; i < STORE_CACHE_WAYS; i++) {
		struct store_slot *s = &set->slot[i];

		if (s->stmt && !s->busy && !strcmp(sqlite3_sql(s->stmt), sql)) {
			s->busy = true;
			*stmt = s->stmt;
			return 0;
		}
	}
	return store_prepare(st, stmt, sql, what, err);
}

void store_done(struct store *st, sqlite3_stmt *stmt)
{
	struct store_set *set;
	struct store_slot *s;

	if (!stmt)
		return;
	/* Reset: no snapshot held, no pointers to the caller's values. */
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	set = cache_set(st, sqlite3_sql(stmt));
	for (size_t i = 0; i < STORE_CACHE_WAYS; i++) {
		if (set->slot[i].stmt == stmt) {
			set->slot[i].busy = false;
			return;
		}
	}
	/* A new one: an empty way, else the next idle one in turn. */
	for (size_t i = 0; i < STORE_CACHE_WAYS; i++) {
		s = &set->slot[(set->next + i) % STORE_CACHE_WAYS];
		if (!s->stmt || !s->busy) {
			set->next = (unsigned int)((s - set->slot + 1) % STORE_CACHE_WAYS);
			sqlite3_finalize(s->stmt);
			s->stmt = stmt;
			s->busy = false;
			return;
		}
	}
	sqlite3_finalize(stmt);
}

int store_bind(sqlite3_stmt *stmt, const struct store_arg *args, size_t nargs,
	       const char *what, struct pg_err *err)
{
	int count = sqlite3_bind_parameter_count(stmt);

	if (nargs != (size_t)count)
		return pg_err_set(err, PG_EINVAL,
				  "%s: statement has %d parameters, %zu values given",
				  what, count, nargs);
	for (size_t i = 0; i < nargs; i++) {
		const struct store_arg *a = &args[i];
		int idx = (int)i + 1;
		int rc;

		switch (a->type) {
		case STORE_ARG_INT:
			rc = sqlite3_bind_int64(stmt, idx, a->i);
			break;
		case STORE_ARG_REAL:
			rc = sqlite3_bind_double(stmt, idx, a->d);
			break;
		case STORE_ARG_TEXT:
			rc = a->p ? sqlite3_bind_text(stmt, idx, a->p, -1, SQLITE_STATIC)
				  : sqlite3_bind_null(stmt, idx);
			break;
		case STORE_ARG_BLOB:
			rc = a->p ? sqlite3_bind_blob64(stmt, idx, a->p, a->len, SQLITE_STATIC)
				  : sqlite3_bind_null(stmt, idx);
			break;
		case STORE_ARG_NULL:
		default:
			rc = sqlite3_bind_null(stmt, idx);
			break;
		}
		if (rc != SQLITE_OK)
			return pg_err_set(err, code_of(rc), "%s: bind parameter %d: %s", what,
					  idx, sqlite3_errmsg(sqlite3_db_handle(stmt)));
	}
	return 0;
}

int store_step(sqlite3_stmt *stmt, const char *what, struct pg_err *err)
{
	int rc = sqlite3_step(stmt);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return db_err(sqlite3_db_handle(stmt), rc, what, err);
}

int store_run(struct store *st, const char *what, const char *sql,
	      const struct store_arg *args, size_t nargs, struct pg_err *err)
{
	sqlite3_stmt *stmt = NULL;
	int rc = -1;
	int r;

	if (store_prepare_cached(st, &stmt, sql, what, err) < 0)
		goto out;
	if (store_bind(stmt, args, nargs, what, err) < 0)
		goto out;
	while ((r = store_step(stmt, what, err)) == 1)
		;
	if (r < 0)
		goto out;
	rc = 0;
out:
	store_done(st, stmt);
	return rc;
}

static int store_query_first(struct store *st, const char *what, const char *sql,
			     const struct store_arg *args, size_t nargs, int64_t *out,
			     bool none_ok, struct pg_err *err)
{
	sqlite3_stmt *stmt = NULL;
	int rc = -1;
	int r;

	if (store_prepare_cached(st, &stmt, sql, what, err) < 0)
		goto out;
	if (store_bind(stmt, args, nargs, what, err) < 0)
		goto out;
	r = store_step(stmt, what, err);
	if (r < 0)
		goto out;
	if (r == 0) {
		if (none_ok)
			rc = 0;
		else
			pg_err_set(err, PG_ENOTFOUND, "%s: no row", what);
		goto out;
	}
	*out = sqlite3_column_int64(stmt, 0);
	rc = 0;
out:
	store_done(st, stmt);
	return rc;
}

int store_query_int(struct store *st, const char *what, const char *sql,
		    const struct store_arg *args, size_t nargs, int64_t *out,
		    struct pg_err *err)
{
	return store_query_first(st, what, sql, args, nargs, out, false, err);
}

int store_query_id(struct store *st, const char *what, const char *sql,
		   const struct store_arg *args, size_t nargs, int64_t *id, struct pg_err *err)
{
	*id = 0;
	return store_query_first(st, what, sql, args, nargs, id, true, err);
}

int store_list_ids(struct store *st, const char *what, const char *sql,
		   const struct store_arg *args, size_t nargs, int64_t **ids, size_t *n,
		   struct pg_err *err)
{
	sqlite3_stmt *stmt = NULL;
	size_t cap = 0;
	int rc = -1, row;

	*ids = NULL;
	*n = 0;
	if (store_prepare(st, &stmt, sql, what, err) < 0 ||
	    (nargs && store_bind(stmt, args, nargs, what, err) < 0))
		goto out;
	while ((row = store_step(stmt, what, err)) == 1) {
		if (PG_GROW(*ids, cap, *n + 1) < 0) {
			pg_err_set(err, PG_ENOMEM, "%s: out of memory", what);
			goto out;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(stmt, 0);
	}
	if (row < 0)
		goto out;
	rc = 0;
out:
	sqlite3_finalize(stmt);
	if (rc) {
		free(*ids);
		*ids = NULL;
		*n = 0;
	}
	return rc;
}

int store_col_dup(sqlite3_stmt *stmt, int i, char **out)
{
	const unsigned char *s = sqlite3_column_text(stmt, i);

	*out = NULL;
	if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
		return 0;
	if (!s)
		return -1;
	*out = strdup((const char *)s);
	return *out ? 0 : -1;
}

int store_exec(struct store *st, const char *sql, const char *what,
	       struct pg_err *err)
{
	char *msg = NULL;
	int rc;

	rc = sqlite3_exec(st->db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		/* sqlite3_exec() returns the extended code, as every call
		 * does on our connections. */
		pg_err_set(err, code_of(rc), "%s: %s", what,
			   msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		if (store_io_lost(rc))
			store_io_failed(err ? err->msg : what);
		return -1;
	}
	return 0;
}

/* Give the write turn back once the transaction is over, however it ended
 * (SQLite ends some on its own after an error). */
static void store_wlock_settle(struct store *st)
{
	if (st->wlocked && sqlite3_get_autocommit(st->db)) {
		st->wlocked = false;
		store_wlock_give(st->wlock);
	}
}

int store_begin(struct store *st, struct pg_err *err)
{
	store_wlock_settle(st);
	/* The process's turn first (store_wlock.h), then SQLite's lock, which
	 * other processes may hold. */
	if (st->wlock && !st->wlocked) {
		if (!store_wlock_take(st->wlock, STORE_BUSY_TIMEOUT_MS))
			return pg_err_set(err, PG_ETIMEOUT, "begin transaction: database is "
					  "locked (waited %d ms behind this process's other "
					  "writers)", STORE_BUSY_TIMEOUT_MS);
		st->wlocked = true;
	}
	if (store_run(st, "begin transaction", "BEGIN IMMEDIATE", NULL, 0, err) < 0) {
		store_wlock_settle(st);
		return -1;
	}
	return 0;
}

int store_commit(struct store *st, struct pg_err *err)
{
	int rc = store_run(st, "commit transaction", "COMMIT", NULL, 0, err);

	/* A COMMIT that failed may leave the transaction open (for the
	 * caller's rollback) or not. */
	store_wlock_settle(st);
	return rc;
}

void store_rollback(struct store *st)
{
	struct pg_err err = PG_ERR_INIT;

	/* SQLite may already have rolled back on its own (some errors end the
	 * transaction), so look before asking. */
	if (!st)
		return;
	if (!sqlite3_get_autocommit(st->db) &&
	    store_exec(st, "ROLLBACK", "roll back transaction", &err) < 0)
		pg_log_warn("store", "store '%s': %s", st->path, err.msg);
	store_wlock_settle(st);
}

bool store_in_tx(struct store *st)
{
	return !sqlite3_get_autocommit(st->db);
}

int store_savepoint(struct store *st, struct pg_err *err)
{
	return store_run(st, "open savepoint", "SAVEPOINT pg_step", NULL, 0, err);
}

int store_release(struct store *st, struct pg_err *err)
{
	return store_run(st, "release savepoint", "RELEASE pg_step", NULL, 0, err);
}

int store_rollback_to(struct store *st, struct pg_err *err)
{
	/* ROLLBACK TO undoes the changes but keeps the savepoint open. */
	if (store_run(st, "roll back to savepoint", "ROLLBACK TO pg_step", NULL, 0, err) < 0)
		return -1;
	return store_release(st, err);
}

int store_schema_version(struct store *st, int *version, struct pg_err *err)
{
	int64_t v;

	if (store_query_int(st, "read schema version", "PRAGMA user_version",
			    NULL, 0, &v, err) < 0)
		return -1;
	*version = (int)v;
	return 0;
}

/* Read a pragma that answers one text row (journal_mode). */
static int pragma_text(struct store *st, const char *sql, const char *what,
		       char *out, size_t outsz, struct pg_err *err)
{
	sqlite3_stmt *stmt = NULL;
	const unsigned char *text;
	int rc = -1;
	int r;

	if (store_prepare(st, &stmt, sql, what, err) < 0)
		goto out;
	r = store_step(stmt, what, err);
	if (r < 0)
		goto out;
	if (r == 0) {
		pg_err_set(err, PG_EDB, "%s: no answer", what);
		goto out;
	}
	text = sqlite3_column_text(stmt, 0);
	if ((size_t)snprintf(out, outsz, "%s", text ? (const char *)text : "") >= outsz) {
		pg_err_set(err, PG_EDB, "%s: answer too long", what);
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(stmt);
	return rc;
}

/* SQLite's own: checkpoint after a commit that left the WAL this long. */
#define STORE_AUTOCHECKPOINT_PAGES 1000

/*
 * SQLite's automatic checkpoint, with its result looked at: the default
 * hook drops it, so a checkpoint whose sync failed went unnoticed, and the
 * next one on the same file descriptor, told success by the kernel
 * (store.h, store_set_io_failure_handler), copied and let go of the WAL.
 * PRAGMA wal_autocheckpoint replaces this hook (the API's writer turns
 * checkpoints off that way and leaves them to its checkpointer).
 */
static int store_wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct store *st = arg;
	int rc;

	/* The commit is done: the next writer need not wait for this
	 * checkpoint and its syncs (SQLite let go of its own lock already). */
	store_wlock_settle(st);
	if (pages < STORE_AUTOCHECKPOINT_PAGES)
		return SQLITE_OK;
	rc = sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	if (store_io_lost(rc)) {
		char msg[PG_ERR_MSG_MAX];

		pg_fmt_cut(msg, sizeof(msg), "store '%s': checkpoint: %s", st->path,
			   sqlite3_errmsg(db));
		store_io_failed(msg);
		pg_log_error("store", "%s", msg);
	}
	/* A failed checkpoint is no reason to fail the commit before it. */
	return SQLITE_OK;
}

/*
 * Connection settings.  Pragmas are per connection, so every open sets
 * them; journal_mode=WAL is also recorded in the file, and is read back
 * because SQLite answers with the mode it actually got (a file system
 * without shared memory support keeps the old one).
 *
 * synchronous=FULL: in WAL mode NORMAL never corrupts the store, but a
 * power loss may undo the last commits.  That is not acceptable here: a
 * commit is what lets the controller acknowledge an agent's result (which
 * the agent then deletes from its spool) and mark a check as posted (which
 * is then never posted again).  FULL syncs the WAL at every commit, so an
 * acknowledged change survives.
 */
static int store_configure(struct store *st, struct pg_err *err)
{
	char mode[32];
	int64_t fk;

	if (sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS) != SQLITE_OK)
		return db_err(st->db, SQLITE_ERROR, "set busy timeout", err);
	if (sqlite3_extended_result_codes(st->db, 1) != SQLITE_OK)
		return db_err(st->db, SQLITE_ERROR, "enable extended result codes", err);
	if (pragma_text(st, "PRAGMA journal_mode = WAL", "set journal_mode=WAL",
			mode, sizeof(mode), err) < 0)
		return -1;
	if (strcmp(mode, "wal") != 0)
		return pg_err_set(err, PG_EDB,
				  "set journal_mode=WAL: SQLite kept '%s' (WAL needs a local file system with shared memory)",
				  mode);
	if (store_exec(st, "PRAGMA synchronous = FULL", "set synchronous=FULL", err) < 0)
		return -1;
	if (store_exec(st, "PRAGMA cache_size = -" STORE_PAGE_CACHE_KIB,
		       "set cache_size", err) < 0)
		return -1;
	if (store_exec(st, "PRAGMA foreign_keys = ON", "enable foreign keys", err) < 0)
		return -1;
	if (store_query_int(st, "read foreign_keys", "PRAGMA foreign_keys", NULL, 0,
			    &fk, err) < 0)
		return -1;
	if (fk != 1)
		return pg_err_set(err, PG_EDB,
				  "enable foreign keys: this SQLite does not enforce them");
	sqlite3_wal_hook(st->db, store_wal_hook, st);
	return 0;
}

/* Refuse a database that is not a perfgate store before writing to it. */
static int store_check_identity(struct store *st, int version, struct pg_err *err)
{
	int64_t app_id, objects;

	if (store_query_int(st, "read application_id", "PRAGMA application_id",
			    NULL, 0, &app_id, err) < 0)
		return -1;
	if (app_id != 0 && app_id != STORE_APPLICATION_ID)
		return pg_err_set(err, PG_EINVAL,
				  "not a perfgate store (application_id %lld)",
				  (long long)app_id);
	if (version < 0)
		return pg_err_set(err, PG_EINVAL,
				  "not a perfgate store (schema version %d)", version);
	if (version > 0)
		return 0;
	if (store_query_int(st, "count schema objects",
			    "SELECT count(*) FROM sqlite_master", NULL, 0,
			    &objects, err) < 0)
		return -1;
	if (objects > 0)
		return pg_err_set(err, PG_EINVAL,
				  "not a perfgate store (it has tables but no schema version)");
	return 0;
}

/* Run migration step i (version i to i + 1) in its own transaction. */
static int store_migrate_step(struct store *st, int i, struct pg_err *err)
{
	const struct store_migration *m = &store_migrations[i];
	int64_t violations;
	int version;
	int rc = -1;

	/* A step may rebuild a table that others point to (SQLite's way to
	 * change a column): with foreign keys on, dropping the old one would
	 * cascade.  Off for the step (a no-op inside a transaction, so before
	 * it), and the step must leave no violation (checked below). */
	if (store_exec(st, "PRAGMA foreign_keys = OFF", "disable foreign keys", err) < 0)
		goto out_fk;
	if (store_begin(st, err) < 0)
		goto out;
	/* Another controller may have run this step while we waited for the
	 * write lock: look again under the lock. */
	if (store_schema_version(st, &version, err) < 0)
		goto out;
	if (version > i) {
		rc = 0;
		goto out;
	}
	if (store_exec(st, m->sql, "run migration script", err) < 0)
		goto out;
	if (store_schema_version(st, &version, err) < 0)
		goto out;
	if (version != m->version) {
		pg_err_set(err, PG_EDB, "script left schema version %d", version);
		goto out;
	}
	if (store_query_int(st, "check foreign keys",
			    "SELECT count(*) FROM pragma_foreign_key_check",
			    NULL, 0, &violations, err) < 0)
		goto out;
	if (violations > 0) {
		pg_err_set(err, PG_EDB, "script left %lld foreign key violations",
			   (long long)violations);
		goto out;
	}
	if (store_commit(st, err) < 0)
		goto out;
	pg_log_info("store", "store '%s': migrated to schema version %d (%s)",
		    st->path, m->version, m->summary);
	rc = 0;
out:
	store_rollback(st);
	{
		/* After a failed step its error is the one to report. */
		struct pg_err fk = PG_ERR_INIT;

		if (store_exec(st, "PRAGMA foreign_keys = ON", "enable foreign keys", &fk) < 0 &&
		    !rc) {
			*err = fk;
			rc = -1;
		}
	}
out_fk:
	if (rc)
		pg_err_prefix(err, "migrate to schema version %d", m->version);
	return rc;
}

static pthread_once_t store_once = PTHREAD_ONCE_INIT;

/* Before SQLite's first use: no memory statistics, which cost a global
 * mutex on every allocation of every thread (the API's threads allocate a
 * lot).  Too late when something else used SQLite first: harmless. */
static void store_global_setup(void)
{
	if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK)
		pg_log_debug("store", "SQLite was initialised already: memory statistics stay on");
}

/* The one refusal that reads "store 'x' has ..." rather than "store 'x':
 * ...": the words an operator needs are in the sentence itself. */
static int store_refuse_newer(struct store *st, struct pg_err *err)
{
	int version;

	if (store_schema_version(st, &version, err) < 0) {
		pg_err_prefix(err, "store '%s'", st->path);
		return -1;
	}
	if (version > STORE_SCHEMA_VERSION)
		return pg_err_set(err, PG_EINVAL,
				  "store '%s' has schema version %d, this perfgate knows up to %d: upgrade perfgate",
				  st->path, version, STORE_SCHEMA_VERSION);
	return 0;
}

/* Bring the schema up to date.  Errors read "store 'x': migrate to schema
 * version 2: ...". */
static int store_migrate(struct store *st, struct pg_err *err)
{
	int version;
	int rc = -1;

	if (store_schema_version(st, &version, err) < 0)
		goto out;
	if (store_check_identity(st, version, err) < 0)
		goto out;
	for (int i = version; i < STORE_SCHEMA_VERSION; i++)
		if (store_migrate_step(st, i, err) < 0)
			goto out;
	rc = 0;
out:
	if (rc)
		pg_err_prefix(err, "store '%s'", st->path);
	return rc;
}

int store_open(struct store **out, const char *path, struct pg_err *err)
{
	struct store *st;
	int rc = -1;
	int r;

	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return pg_err_set(err, PG_ENOMEM, "store '%s': out of memory", path);
	st->path = strdup(path);
	if (!st->path) {
		pg_err_set(err, PG_ENOMEM, "store '%s': out of memory", path);
		goto out;
	}
	pthread_once(&store_once, store_global_setup);
	/* NOMUTEX: a connection is used by one thread at a time (see
	 * store.h), so SQLite's per-call connection mutex buys nothing. */
	r = sqlite3_open_v2(path, &st->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (r != SQLITE_OK) {
		db_err(st->db, r, "open", err);
		pg_err_prefix(err, "store '%s'", path);
		goto out;
	}
	if (store_configure(st, err) < 0) {
		pg_err_prefix(err, "store '%s'", path);
		goto out;
	}
	if (store_wlock_get(path, &st->wlock) < 0) {
		pg_err_set(err, PG_ENOMEM, "store '%s': out of memory", path);
		goto out;
	}
	if (store_refuse_newer(st, err) < 0)
		goto out;
	if (store_migrate(st, err) < 0)
		goto out;
	/* A newer perfgate may have migrated further while we waited for the
	 * write lock; its schema is not ours to use. */
	if (store_refuse_newer(st, err) < 0)
		goto out;
	*out = st;
	rc = 0;
out:
	if (rc)
		store_close(st);
	return rc;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	if (st->wlocked && st->db)
		store_rollback(st);
	if (st->wlocked) {
		st->wlocked = false;
		store_wlock_give(st->wlock);
	}
	for (size_t i = 0; i < STORE_CACHE_SETS; i++)
		for (size_t j = 0; j < STORE_CACHE_WAYS; j++)
			sqlite3_finalize(st->cache[i].slot[j].stmt);
	/* sqlite3_open_v2() may hand back a handle even when it fails;
	 * sqlite3_close(NULL) is a no-op. */
	if (sqlite3_close(st->db) != SQLITE_OK)
		pg_log_warn("store", "store '%s': close: %s (a statement was not finalized)",
			    st->path, sqlite3_errmsg(st->db));
	free(st->path);
	free(st);
}

/*
 * The health check.  Each finding is one "key=value" line; a problem also
 * counts towards the verdict and the first one goes into err.  The check
 * goes on after a problem, so the report shows everything it could see.
 */
struct check {
	struct store *st;
	struct pg_buf *report;
	int problems;
	char first[PG_ERR_MSG_MAX];
	int report_failed;
};

static void check_line(struct check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void check_line(struct check *c, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (!c->report || c->report_failed)
		return;
	va_start(ap, fmt);
	r = pg_buf_vprintf(c->report, fmt, ap);
	va_end(ap);
	if (r < 0 || pg_buf_addch(c->report, '\n') < 0)
		c->report_failed = errno ? errno : ENOMEM;
}

/* One problem; SQLite's integrity messages may span lines, and each line
 * becomes a report line of its own. */
static void check_problem(struct check *c, const char *key, const char *msg)
{
	const char *p = msg;

	do {
		size_t len = strcspn(p, "\n");

		if (len)
			check_line(c, "%s=%.*s", key, (int)len, p);
		p += len;
	} while (*p++);
	if (c->problems++ == 0) {
		pg_fmt_cut(c->first, sizeof(c->first), "%s: %s", key, msg);
		for (char *q = c->first; (q = strchr(q, '\n')); )
			*q = ' ';
	}
}

static void check_settings(struct check *c)
{
	struct pg_err err = PG_ERR_INIT;
	char mode[32];
	int64_t fk;
	int version;

	if (store_schema_version(c->st, &version, &err) < 0) {
		check_problem(c, "schema_version", err.msg);
	} else {
		check_line(c, "schema_version=%d (this perfgate knows up to %d)",
			   version, STORE_SCHEMA_VERSION);
		if (version != STORE_SCHEMA_VERSION)
			check_problem(c, "schema_version", "not the version this perfgate knows");
	}
	if (pragma_text(c->st, "PRAGMA journal_mode", "read journal_mode",
			mode, sizeof(mode), &err) < 0) {
		check_problem(c, "journal_mode", err.msg);
	} else {
		check_line(c, "journal_mode=%s", mode);
		if (strcmp(mode, "wal") != 0)
			check_problem(c, "journal_mode", "not wal");
	}
	if (store_query_int(c->st, "read foreign_keys", "PRAGMA foreign_keys",
			    NULL, 0, &fk, &err) < 0) {
		check_problem(c, "foreign_keys", err.msg);
	} else {
		check_line(c, "foreign_keys=%lld", (long long)fk);
		if (fk != 1)
			check_problem(c, "foreign_keys", "not enforced");
	}
}

/* PRAGMA integrity_check answers one row "ok", or one row per problem. */
static void check_integrity(struct check *c)
{
	struct pg_err err = PG_ERR_INIT;
	sqlite3_stmt *stmt = NULL;
	int seen = 0;
	int r;

	if (store_prepare(c->st, &stmt, "PRAGMA integrity_check(100)",
			  "integrity check", &err) < 0)
		goto out;
	while ((r = store_step(stmt, "integrity check", &err)) == 1) {
		const unsigned char *t = sqlite3_column_text(stmt, 0);
		const char *msg = t ? (const char *)t : "";

		seen++;
		if (strcmp(msg, "ok") == 0 && seen == 1)
			check_line(c, "integrity_check=ok");
		else
			check_problem(c, "integrity_check", msg);
	}
	if (r < 0)
		goto out;
	if (seen == 0)
		check_problem(c, "integrity_check", "no answer");
out:
	if (err.code != PG_OK)
		check_problem(c, "integrity_check", err.msg);
	sqlite3_finalize(stmt);
}

/* PRAGMA foreign_key_check answers one row per row that points nowhere. */
static void check_foreign_keys(struct check *c)
{
	struct pg_err err = PG_ERR_INIT;
	sqlite3_stmt *stmt = NULL;
	int seen = 0;
	int r;

	if (store_prepare(c->st, &stmt, "PRAGMA foreign_key_check",
			  "foreign key check", &err) < 0)
		goto out;
	while ((r = store_step(stmt, "foreign key check", &err)) == 1) {
		const unsigned char *table = sqlite3_column_text(stmt, 0);
		const unsigned char *parent = sqlite3_column_text(stmt, 2);
		char msg[256];

		if (++seen > CHECK_MAX_PROBLEMS)
			continue;
		pg_fmt_cut(msg, sizeof(msg), "row %lld of %s points to a missing row of %s",
			   (long long)sqlite3_column_int64(stmt, 1),
			   table ? (const char *)table : "?",
			   parent ? (const char *)parent : "?");
		check_problem(c, "foreign_key_check", msg);
	}
	if (r < 0)
		goto out;
	if (seen == 0)
		check_line(c, "foreign_key_check=ok");
	else if (seen > CHECK_MAX_PROBLEMS)
		check_line(c, "foreign_key_check.omitted=%d", seen - CHECK_MAX_PROBLEMS);
out:
	if (err.code != PG_OK)
		check_problem(c, "foreign_key_check", err.msg);
	sqlite3_finalize(stmt);
}

static void check_counts(struct check *c)
{
	for (size_t i = 0; i < sizeof(count_queries) / sizeof(count_queries[0]); i++) {
		struct pg_err err = PG_ERR_INIT;
		char key[64];
		int64_t n;

		/* Never cut: the table names are ours, and short. */
		pg_fmt_cut(key, sizeof(key), "rows.%s", count_queries[i].table);
		if (store_query_int(c->st, "count rows", count_queries[i].sql,
				    NULL, 0, &n, &err) < 0)
			check_problem(c, key, err.msg);
		else
			check_line(c, "%s=%lld", key, (long long)n);
	}
}

int store_check(struct store *st, struct pg_buf *report, struct pg_err *err)
{
	struct check c = { .st = st, .report = report };

	check_line(&c, "path=%s", st->path);
	check_settings(&c);
	check_integrity(&c);
	check_foreign_keys(&c);
	check_counts(&c);
	if (c.problems)
		check_line(&c, "status=%d problem%s", c.problems, c.problems == 1 ? "" : "s");
	else
		check_line(&c, "status=ok");

	if (c.report_failed) {
		errno = c.report_failed;
		return pg_err_errno(err, "store '%s': check: write report", st->path);
	}
	if (c.problems)
		return pg_err_set(err, PG_EDB, "store '%s': check found %d problem%s, first %s",
				  st->path, c.problems, c.problems == 1 ? "" : "s", c.first);
	return 0;
}
