/* SPDX-License-Identifier: MIT */
/*
 * Store write cost: messages ingested per second when each message commits
 * alone (with its cursor) versus in batches of BATCH per transaction, in
 * the same process on the same disk.  The ratio is why intake commits in
 * batches: with synchronous=FULL every commit is an fsync.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "store.h"
#include "timeutil.h"

#define N_SINGLE 1000
#define N_BATCHED 20000
#define BATCH 256
#define RAW_SIZE 4096

static int insert_message(struct store *st, int64_t source, int i, const char *raw,
			  struct pg_err *err)
{
	char pos[32], msgid[64];

	snprintf(pos, sizeof(pos), "%d", i);
	snprintf(msgid, sizeof(msgid), "bench-%d@perfgate", i);
	return store_run(st, "insert message",
			 "INSERT INTO messages (source_id, position, msgid, subject, raw_size, raw,"
			 " state, received_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'accepted', ?7)",
			 STORE_ARGS(STORE_INT(source), STORE_TEXT(pos), STORE_TEXT(msgid),
				    STORE_TEXT("[PATCH] bench"), STORE_INT(RAW_SIZE),
				    STORE_BLOB(raw, RAW_SIZE), STORE_INT(1)), err);
}

static int move_cursor(struct store *st, int64_t source, int i, struct pg_err *err)
{
	char pos[32];

	snprintf(pos, sizeof(pos), "%d", i);
	return store_run(st, "move cursor",
			 "INSERT INTO source_cursors (source_id, scope, position, updated_at)"
			 " VALUES (?1, 'epoch-0', ?2, 1) ON CONFLICT (source_id, scope)"
			 " DO UPDATE SET position = excluded.position",
			 STORE_ARGS(STORE_INT(source), STORE_TEXT(pos)), err);
}

/* Insert messages [first, first + n) committing every `per_tx`; returns
 * the rate in messages per second, or -1. */
static double run(struct store *st, int64_t source, int first, int n, int per_tx,
		  const char *raw, struct pg_err *err)
{
	int64_t t0 = pg_time_mono_ms();

	for (int i = first; i < first + n; i += per_tx) {
		int end = i + per_tx < first + n ? i + per_tx : first + n;

		if (store_begin(st, err) < 0)
			return -1;
		for (int j = i; j < end; j++)
			if (insert_message(st, source, j, raw, err) < 0)
				goto fail;
		if (move_cursor(st, source, end - 1, err) < 0 || store_commit(st, err) < 0)
			goto fail;
	}
	return n * 1000.0 / (double)(pg_time_mono_ms() - t0 + 1);
fail:
	store_rollback(st);
	return -1;
}

int main(void)
{
	struct pg_err err = PG_ERR_INIT;
	char dir[] = "/tmp/pg-bench-store.XXXXXX", path[256];
	struct store *st = NULL;
	char *raw = malloc(RAW_SIZE);
	double single, batched;
	int64_t source;
	int rc = 1;

	if (!raw || !mkdtemp(dir))
		goto out;
	memset(raw, 'x', RAW_SIZE);
	snprintf(path, sizeof(path), "%s/bench.db", dir);
	if (store_open(&st, path, &err) < 0 ||
	    store_run(st, "insert source", "INSERT INTO sources (name, kind, location, project,"
		      " created_at) VALUES ('bench', 'mbox', '-', 'dpdk', 1)", NULL, 0, &err) < 0)
		goto out;
	source = store_last_id(st);
	single = run(st, source, 0, N_SINGLE, 1, raw, &err);
	batched = run(st, source, N_SINGLE, N_BATCHED, BATCH, raw, &err);
	if (single < 0 || batched < 0)
		goto out;
	printf("bench store: one_tx_per_message=%.0f msg/s batch_%d=%.0f msg/s ratio=%.1fx "
	       "(%d B raw each, synchronous=FULL, WAL)\n",
	       single, BATCH, batched, batched / single, RAW_SIZE);
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "bench store: %s\n", err.msg);
	store_close(st);
	free(raw);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bench.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bench.db-shm", dir);
	unlink(path);
	rmdir(dir);
	return rc;
}
