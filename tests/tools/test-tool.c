/* SPDX-License-Identifier: MIT */
/*
 * test-tool: the internals that integration scripts need, one subcommand
 * each (after git's t/helper/test-tool).
 *
 *   test-tool store-write-loop DB [N]   write series transactions (for kill -9)
 *   test-tool store-verify DB           recover, check, verify what the loop wrote
 *   test-tool store-schema VERSION      print the migration script to VERSION
 *
 * To add a subcommand, write `static int cmd_x(int argc, char **argv)`
 * (argv[0] is the subcommand's name; return the exit status) and add it to
 * `commands` below.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "store.h"
#include "text.h"

#define EXIT_USAGE 2

/* ---- store-write-loop ------------------------------------------------- */

/* The jobs a loop series gets: the verifier expects 1 + total % 3 of them. */
static const char *const loop_build_modes[] = { "release", "debugoptimized", "debug" };

static int loop_jobs(int patches)
{
	return 1 + patches % 3;
}

static int loop_source(struct store *st, const char *db, int64_t *source_id,
		       struct pg_err *err)
{
	if (store_run(st, "insert test-tool source",
		      "INSERT INTO sources (name, kind, location, project, created_at)"
		      " VALUES ('test-tool', 'mbox', ?1, 'test', ?2)"
		      " ON CONFLICT (name) DO NOTHING",
		      STORE_ARGS(STORE_TEXT(db), STORE_INT(time(NULL))), err) < 0)
		return -1;
	return store_query_int(st, "find test-tool source",
			       "SELECT id FROM sources WHERE name = 'test-tool'",
			       NULL, 0, source_id, err);
}

/* A plausible patch mail, a few kilobytes, so that one transaction spans
 * many pages and a kill is likely to land in the middle of one. */
static int loop_message(struct pg_buf *raw, int64_t series, int n, int k)
{
	pg_buf_reset(raw);
	if (pg_buf_printf(raw,
			  "From: Test Tool <test@example.org>\n"
			  "Subject: [PATCH %d/%d] test: loop series %" PRId64 "\n"
			  "Message-ID: <%" PRId64 ".%d@test-tool>\n\n"
			  "Commit message.\n---\n"
			  "diff --git a/lib/x.c b/lib/x.c\n", n, k, series, series, n) < 0)
		return -1;
	for (int i = 0; i < 40 + n * 4; i++)
		if (pg_buf_printf(raw, "+\tx[%d] = %d; /* line of patch %d */\n", i, i * n, n) < 0)
			return -1;
	return 0;
}

static int loop_write_series(struct store *st, int64_t source_id, int k,
			     long long seq, struct pg_buf *raw,
			     int64_t *series_id, struct pg_err *err)
{
	char root[96], position[96], msgid[96], subject[96];
	int64_t now = time(NULL);
	int64_t sid, rid;
	int rc = -1;

	if (store_begin(st, err) < 0)
		goto out;
	snprintf(root, sizeof(root), "loop.%ld.%lld@test-tool", (long)getpid(), seq);
	if (store_run(st, "insert series",
		      "INSERT INTO series (project, root_msgid, total, title, submitter_addr,"
		      " state, received_at, completed_at)"
		      " VALUES ('test', ?1, ?2, 'test-tool loop series', 'test@example.org',"
		      " 'complete', ?3, ?3)",
		      STORE_ARGS(STORE_TEXT(root), STORE_INT(k), STORE_INT(now)), err) < 0)
		goto out;
	sid = store_last_id(st);
	for (int n = 1; n <= k; n++) {
		int64_t mid;

		snprintf(position, sizeof(position), "series-%" PRId64 "/%d", sid, n);
		snprintf(msgid, sizeof(msgid), "%" PRId64 ".%d@test-tool", sid, n);
		snprintf(subject, sizeof(subject), "[PATCH %d/%d] test: loop series %" PRId64,
			 n, k, sid);
		if (loop_message(raw, sid, n, k) < 0) {
			pg_err_errno(err, "build message");
			goto out;
		}
		if (store_run(st, "insert message",
			      "INSERT INTO messages (source_id, position, msgid, subject,"
			      " from_addr, kind, raw_size, raw, state, received_at)"
			      " VALUES (?1, ?2, ?3, ?4, 'test@example.org', 'patch', ?5, ?6,"
			      " 'accepted', ?7)",
			      STORE_ARGS(STORE_INT(source_id), STORE_TEXT(position),
					 STORE_TEXT(msgid), STORE_TEXT(subject),
					 STORE_INT((int64_t)raw->len),
					 STORE_BLOB(raw->data, raw->len), STORE_INT(now)),
			      err) < 0)
			goto out;
		mid = store_last_id(st);
		if (store_run(st, "insert patch",
			      "INSERT INTO patches (series_id, number, message_id, subject)"
			      " VALUES (?1, ?2, ?3, ?4)",
			      STORE_ARGS(STORE_INT(sid), STORE_INT(n), STORE_INT(mid),
					 STORE_TEXT(subject)), err) < 0)
			goto out;
	}
	if (store_run(st, "insert run",
		      "INSERT INTO runs (series_id, reason, tree, branch, base_commit, created_at)"
		      " VALUES (?1, 'new', 'dpdk', 'main',"
		      " '0123456789abcdef0123456789abcdef01234567', ?2)",
		      STORE_ARGS(STORE_INT(sid), STORE_INT(now)), err) < 0)
		goto out;
	rid = store_last_id(st);
	for (int j = 0; j < loop_jobs(k); j++)
		if (store_run(st, "insert job",
			      "INSERT INTO jobs (run_id, context, host_class, build_mode, created_at)"
			      " VALUES (?1, 'perfgate-test-Performance', 'test', ?2, ?3)",
			      STORE_ARGS(STORE_INT(rid), STORE_TEXT(loop_build_modes[j]),
					 STORE_INT(now)), err) < 0)
			goto out;
	if (store_commit(st, err) < 0)
		goto out;
	*series_id = sid;
	rc = 0;
out:
	store_rollback(st);
	return rc;
}

static int cmd_store_write_loop(int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf raw = PG_BUF_INIT(1024 * 1024);
	struct store *st = NULL;
	long long count = 0;
	int64_t source_id;
	int rc = 1;

	if (argc < 2 || argc > 3 ||
	    (argc == 3 && pg_parse_ll(argv[2], 1, INT64_MAX, &count) < 0)) {
		fprintf(stderr, "usage: test-tool store-write-loop DB [N]\n");
		return EXIT_USAGE;
	}
	if (store_open(&st, argv[1], &err) < 0)
		goto out;
	if (loop_source(st, argv[1], &source_id, &err) < 0)
		goto out;
	/* K walks through 1..30 (7 and 30 are coprime), starting elsewhere in
	 * each process so that rounds of a kill test differ. */
	for (long long i = 0; count == 0 || i < count; i++) {
		int k = (int)((i * 7 + getpid()) % 30) + 1;
		int64_t sid;

		if (loop_write_series(st, source_id, k, i, &raw, &sid, &err) < 0) {
			pg_err_prefix(&err, "series %lld", i + 1);
			goto out;
		}
		printf("committed series=%" PRId64 " patches=%d\n", sid, k);
		if (fflush(stdout) == EOF) {
			pg_err_errno(&err, "write stdout");
			goto out;
		}
	}
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "test-tool store-write-loop: %s\n", err.msg);
	pg_buf_release(&raw);
	store_close(st);
	return rc;
}

/* ---- store-verify ----------------------------------------------------- */

/* Each query counts the rows that break one invariant of the loop's
 * transactions: a half-written transaction would show up here. */
static const struct {
	const char *what;
	const char *sql;
} loop_invariants[] = {
	{ "series whose patch count is not its total",
	  "SELECT count(*) FROM series s WHERE s.total <>"
	  " (SELECT count(*) FROM patches p WHERE p.series_id = s.id)" },
	{ "messages that belong to no patch",
	  "SELECT count(*) FROM messages m WHERE NOT EXISTS"
	  " (SELECT 1 FROM patches p WHERE p.message_id = m.id)" },
	{ "series without exactly one run",
	  "SELECT count(*) FROM series s WHERE"
	  " (SELECT count(*) FROM runs r WHERE r.series_id = s.id) <> 1" },
	{ "runs whose job count is not 1 + total % 3",
	  "SELECT count(*) FROM runs r JOIN series s ON s.id = r.series_id WHERE"
	  " (SELECT count(*) FROM jobs j WHERE j.run_id = r.id) <> 1 + s.total % 3" },
};

static const struct {
	const char *name;
	const char *sql;
} loop_counts[] = {
	{ "series", "SELECT count(*) FROM series" },
	{ "patches", "SELECT count(*) FROM patches" },
	{ "messages", "SELECT count(*) FROM messages" },
	{ "runs", "SELECT count(*) FROM runs" },
	{ "jobs", "SELECT count(*) FROM jobs" },
};

static int cmd_store_verify(int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf report = PG_BUF_INIT(1024 * 1024);
	struct store *st = NULL;
	int broken = 0;
	int rc = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: test-tool store-verify DB\n");
		return EXIT_USAGE;
	}
	/* Opening recovers the WAL left by a killed writer. */
	if (store_open(&st, argv[1], &err) < 0)
		goto out;
	if (store_check(st, &report, &err) < 0) {
		fputs(pg_buf_str(&report), stdout);
		goto out;
	}
	fputs(pg_buf_str(&report), stdout);
	for (size_t i = 0; i < sizeof(loop_invariants) / sizeof(loop_invariants[0]); i++) {
		int64_t n;

		if (store_query_int(st, loop_invariants[i].what, loop_invariants[i].sql,
				    NULL, 0, &n, &err) < 0)
			goto out;
		if (n) {
			printf("broken: %" PRId64 " %s\n", n, loop_invariants[i].what);
			broken++;
		}
	}
	printf("verify:");
	for (size_t i = 0; i < sizeof(loop_counts) / sizeof(loop_counts[0]); i++) {
		int64_t n;

		if (store_query_int(st, loop_counts[i].name, loop_counts[i].sql,
				    NULL, 0, &n, &err) < 0)
			goto out;
		printf(" %s=%" PRId64, loop_counts[i].name, n);
	}
	printf("\n");
	if (broken) {
		pg_err_set(&err, PG_EDB, "%d invariant%s broken", broken,
			   broken == 1 ? "" : "s");
		goto out;
	}
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "test-tool store-verify: %s\n", err.msg);
	pg_buf_release(&report);
	store_close(st);
	return rc;
}

/* ---- store-schema ----------------------------------------------------- */

static int cmd_store_schema(int argc, char **argv)
{
	long long v;

	if (argc != 2 || pg_parse_ll(argv[1], 1, STORE_SCHEMA_VERSION, &v) < 0) {
		fprintf(stderr, "usage: test-tool store-schema VERSION (1..%d)\n",
			STORE_SCHEMA_VERSION);
		return EXIT_USAGE;
	}
	fputs(store_migrations[v - 1].sql, stdout);
	return fflush(stdout) == EOF ? 1 : 0;
}

/* ---- main ------------------------------------------------------------- */

static const struct {
	const char *name;
	const char *usage;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "store-write-loop", "DB [N]", cmd_store_write_loop },
	{ "store-verify", "DB", cmd_store_verify },
	{ "store-schema", "VERSION", cmd_store_schema },
};

static void usage(void)
{
	fprintf(stderr, "usage: test-tool SUBCOMMAND [ARGS]\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(stderr, "   or: test-tool %s %s\n", commands[i].name, commands[i].usage);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage();
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "test-tool: unknown subcommand '%s'\n", argv[1]);
	usage();
	return EXIT_USAGE;
}
