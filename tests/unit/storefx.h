/* SPDX-License-Identifier: MIT */
/*
 * A migrated store in a temporary directory, for the unit tests of the
 * store's users (test_sched.c, test_verdict_pass.c, test_outbox.c) and of
 * the store itself (test_store_wlock.c, test_store_io.c): the
 * directory and its removal, profiles and a controller configuration
 * written there, SQL that must succeed, one-value queries, a text snapshot
 * of tables, and the rows intake and the planner would have written (a
 * series of patches by Alice, a run, a pending check).  A header, not a .c
 * file, because the Makefile links each tests/unit/test_*.c alone.
 * Failures are cmocka's (fail_msg, assert_*): include <cmocka.h> first.
 */
#ifndef PG_STOREFX_H
#define PG_STOREFX_H

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "ctl_config.h"
#include "err.h"
#include "fsutil.h"
#include "profile.h"
#include "store.h"

/* "DIR/NAME" into out; fails the test when it does not fit. */
static inline void sfx_path(char *out, size_t len, const char *dir, const char *name)
{
	assert_true((size_t)snprintf(out, len, "%s/%s", dir, name) < len);
}

/* A new directory "TMPDIR/pg-test-NAME.XXXXXX" into dir, and the path of
 * a store in it, "DIR/store.db", into db (not made). */
static inline void sfx_mkdir(char *dir, size_t dirlen, char *db, size_t dblen, const char *name)
{
	const char *tmp = getenv("TMPDIR");

	assert_true((size_t)snprintf(dir, dirlen, "%s/pg-test-%s.XXXXXX",
				     tmp && *tmp ? tmp : "/tmp", name) < dirlen);
	if (!mkdtemp(dir))
		fail_msg("mkdtemp %s: %s", dir, strerror(errno));
	sfx_path(db, dblen, dir, "store.db");
}

/* sfx_mkdir(), and in the directory a migrated store at db, its handle
 * into *st. */
static inline void sfx_open(char *dir, size_t dirlen, char *db, size_t dblen, struct store **st,
			    const char *name)
{
	struct pg_err err = PG_ERR_INIT;

	sfx_mkdir(dir, dirlen, db, dblen, name);
	if (store_open(st, db, &err) < 0)
		fail_msg("store: %s", err.msg);
}

/* Remove the files in dir and dir itself (the fixtures make no
 * subdirectories).  A teardown's best effort: errors are ignored. */
static inline void sfx_rm_dir(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d) {
		while ((de = readdir(d))) {
			char p[4096];

			if (de->d_name[0] == '.')
				continue;
			if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) < sizeof(p))
				unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* text written to path (mode 0600), or the test fails. */
static inline void sfx_write_file(const char *path, const char *text)
{
	struct pg_err err = PG_ERR_INIT;

	if (pg_write_file_atomic(path, text, strlen(text), 0600, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The profiles in json, written to "DIR/lab.json" and loaded into ps. */
static inline void sfx_profiles(struct profile_set *ps, const char *dir, const char *json)
{
	struct pg_err err = PG_ERR_INIT;
	char path[4096];
	const char *paths[1] = { path };

	sfx_path(path, sizeof(path), dir, "lab.json");
	sfx_write_file(path, json);
	if (profile_set_load(ps, paths, 1, &err) < 0)
		fail_msg("profile: %s", err.msg);
}

/* A controller configuration "DIR/c.json" naming the store db, with mail
 * enabled or not (to an SMTP server that nobody listens on), loaded into
 * cfg; the caller frees it with ctl_config_free(). */
static inline void sfx_mail_config(struct ctl_config *cfg, const char *dir, const char *db,
				   bool enabled)
{
	struct pg_err err = PG_ERR_INIT;
	char path[4096], text[5120];

	sfx_path(path, sizeof(path), dir, "c.json");
	assert_true((size_t)snprintf(text, sizeof(text),
				     "{ \"db\": \"%s\", \"mail\": { \"enabled\": %s, \"smtp_url\": "
				     "\"smtp://127.0.0.1:1\", \"from\": "
				     "\"perfgate CI <perfgate@lab.example.org>\" } }",
				     db, enabled ? "true" : "false") < sizeof(text));
	sfx_write_file(path, text);
	if (ctl_config_load(cfg, path, &err) < 0)
		fail_msg("%s", err.msg);
}

/* Run q with its arguments, or fail. */
static inline void sfx_sql(struct store *st, const char *q, const struct store_arg *args,
			   size_t nargs)
{
	struct pg_err err = PG_ERR_INIT;

	if (store_run(st, "test", q, args, nargs, &err) < 0)
		fail_msg("%s: %s", q, err.msg);
}

/* The integer q returns, or fail. */
static inline int64_t sfx_int(struct store *st, const char *q, const struct store_arg *args,
			      size_t nargs)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t v = 0;

	if (store_query_int(st, "test", q, args, nargs, &v, &err) < 0)
		fail_msg("%s: %s", q, err.msg);
	return v;
}

/* The first column of the first row of q (with id bound to ?1 when q has a
 * parameter) as text into out ("(null)" for NULL), or fail. */
static inline void sfx_text(struct store *st, const char *q, int64_t id, char *out, size_t outsz)
{
	struct pg_err err = PG_ERR_INIT;
	sqlite3_stmt *stmt = NULL;
	const char *s;

	if (store_prepare(st, &stmt, q, "test", &err) < 0 ||
	    (sqlite3_bind_parameter_count(stmt) &&
	     store_bind(stmt, STORE_ARGS(STORE_INT(id)), "test", &err) < 0) ||
	    store_step(stmt, "test", &err) != 1)
		fail_msg("%s: %s", q, err.msg);
	s = (const char *)sqlite3_column_text(stmt, 0);
	snprintf(out, outsz, "%s", s ? s : "(null)");
	sqlite3_finalize(stmt);
}

/* Every row of each of the n queries, as text ("v|v|\n" a row, "--\n"
 * after each query): a snapshot that must not move when a call says it
 * changed nothing.  The caller frees it. */
static inline char *sfx_snapshot(struct store *st, const char *const *queries, size_t n)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);

	for (size_t t = 0; t < n; t++) {
		sqlite3_stmt *stmt = NULL;
		struct pg_err err = PG_ERR_INIT;

		if (store_prepare(st, &stmt, queries[t], "snapshot", &err) < 0)
			fail_msg("snapshot: %s", err.msg);
		while (store_step(stmt, "snapshot", &err) == 1) {
			for (int i = 0; i < sqlite3_column_count(stmt); i++) {
				const char *s = (const char *)sqlite3_column_text(stmt, i);

				assert_int_equal(pg_buf_printf(&b, "%s|", s ? s : "NULL"), 0);
			}
			assert_int_equal(pg_buf_addch(&b, '\n'), 0);
		}
		sqlite3_finalize(stmt);
		assert_int_equal(pg_buf_adds(&b, "--\n"), 0);
	}
	return pg_buf_detach(&b, NULL);
}

/* Source 't' (id 1), then a complete series (project dpdk, root message
 * p1@example.com, received at 1) titled title, of n patches (1 to 9) by
 * Alice Dev <alice@example.com>: messages pI@example.com with subjects
 * "[PATCH I/N] AREA: step I", Patchwork ids pw0 + I (NULL when pw0 < 0).
 * The patch ids into patch[0 .. n-1]; returns the series id. */
static inline int64_t sfx_add_alice_series(struct store *st, int n, const char *title,
					   const char *area, int64_t pw0, int64_t *patch)
{
	int64_t series;

	assert_true(n >= 1 && n <= 9);
	sfx_sql(st, "INSERT INTO sources (name, kind, location, project, created_at)"
		" VALUES ('t', 'mbox', '-', 'dpdk', 1)", NULL, 0);
	sfx_sql(st, "INSERT INTO series (project, root_msgid, total, title, submitter_addr, state,"
		" received_at, completed_at) VALUES ('dpdk', 'p1@example.com', ?1, ?2,"
		" 'alice@example.com', 'complete', 1, 1)",
		STORE_ARGS(STORE_INT(n), STORE_TEXT(title)));
	series = store_last_id(st);
	for (int i = 1; i <= n; i++) {
		char msgid[64], subject[128], pos[16];

		snprintf(msgid, sizeof(msgid), "p%d@example.com", i);
		assert_true((size_t)snprintf(subject, sizeof(subject), "[PATCH %d/%d] %s: step %d", i,
					     n, area, i) < sizeof(subject));
		snprintf(pos, sizeof(pos), "%d", i);
		sfx_sql(st, "INSERT INTO messages (source_id, position, msgid, subject, from_name,"
			" from_addr, kind, raw_size, raw, state, received_at)"
			" VALUES (1, ?1, ?2, ?3, 'Alice Dev', 'alice@example.com', 'patch', 1, 'x',"
			" 'accepted', 1)",
			STORE_ARGS(STORE_TEXT(pos), STORE_TEXT(msgid), STORE_TEXT(subject)));
		sfx_sql(st, "INSERT INTO patches (series_id, number, message_id, pw_patch_id, subject)"
			" VALUES (?1, ?2, ?3, ?4, ?5)",
			STORE_ARGS(STORE_INT(series), STORE_INT(i), STORE_INT(store_last_id(st)),
				   pw0 < 0 ? STORE_NULL : STORE_INT(pw0 + i), STORE_TEXT(subject)));
		patch[i - 1] = store_last_id(st);
	}
	return series;
}

/* A run of series on tree dpdk created at `at`; returns its id. */
static inline int64_t sfx_add_run(struct store *st, int64_t series, const char *reason,
				  const char *branch, const char *base, int64_t at)
{
	sfx_sql(st, "INSERT INTO runs (series_id, reason, tree, branch, base_commit, created_at)"
		" VALUES (?1, ?2, 'dpdk', ?3, ?4, ?5)",
		STORE_ARGS(STORE_INT(series), STORE_TEXT(reason), STORE_TEXT(branch),
			   STORE_TEXT(base), STORE_INT(at)));
	return store_last_id(st);
}

/* A pending check of context ctx on patch for run, as the planner queues
 * it at `at`. */
static inline void sfx_add_pending(struct store *st, int64_t series, int64_t run, int64_t patch,
				   const char *ctx, const char *url, int64_t at)
{
	sfx_sql(st, "INSERT INTO check_outbox (series_id, run_id, patch_id, context, state,"
		" description, target_url, delivery, next_try, created_at)"
		" VALUES (?1, ?2, ?3, ?4, 'pending', 'Performance Testing pending', ?5, 'queued', 0,"
		" ?6)",
		STORE_ARGS(STORE_INT(series), STORE_INT(run), STORE_INT(patch), STORE_TEXT(ctx),
			   STORE_TEXT(url), STORE_INT(at)));
}

#endif
