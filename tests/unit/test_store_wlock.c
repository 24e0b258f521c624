/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for controller/store_wlock.c, the store's write turn inside
 * one process: one lock per file (however it is named), first come first
 * served, a bounded wait, and store_begin() queueing behind another
 * connection's transaction instead of polling for SQLite's lock.
 * No assertion depends on timing: a thread's place in the queue is read
 * with store_wlock_waiting(), and a wait meant to fail waits while the
 * turn is held throughout.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "err.h"
#include "store.h"
#include "store_wlock.h"
#include "storefx.h"

struct tdir {
	char dir[256];
	char db[300];
};

static int setup(void **state)
{
	struct tdir *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	sfx_mkdir(t->dir, sizeof(t->dir), t->db, sizeof(t->db), "wlock");
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tdir *t = *state;

	sfx_rm_dir(t->dir);
	free(t);
	return 0;
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
}

static void test_one_lock_per_file(void **state)
{
	struct tdir *t = *state;
	struct store_wlock *a = NULL, *b = NULL, *c = NULL, *m = NULL;
	char link[400], other[400];

	touch(t->db);
	snprintf(link, sizeof(link), "%s.link", t->db);
	snprintf(other, sizeof(other), "%s/other.db", t->dir);
	assert_int_equal(symlink(t->db, link), 0);
	touch(other);
	assert_int_equal(store_wlock_get(t->db, &a), 0);
	assert_int_equal(store_wlock_get(link, &b), 0);
	assert_int_equal(store_wlock_get(other, &c), 0);
	assert_non_null(a);
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, c);
	assert_int_equal(store_wlock_get(":memory:", &m), 0);
	assert_null(m);
}

struct taker {
	struct store_wlock *l;
	int id;
	unsigned int timeout_ms;
	bool taken;
	int *order;
	size_t *n_order;
	pthread_mutex_t *order_m;
};

static void *take_main(void *arg)
{
	struct taker *tk = arg;

	tk->taken = store_wlock_take(tk->l, tk->timeout_ms);
	if (tk->taken) {
		pthread_mutex_lock(tk->order_m);
		tk->order[(*tk->n_order)++] = tk->id;
		pthread_mutex_unlock(tk->order_m);
		store_wlock_give(tk->l);
	}
	return NULL;
}

/* Wait until n threads are queued (they get there on their own). */
static void wait_queued(struct store_wlock *l, unsigned int n)
{
	while (store_wlock_waiting(l) < n)
		sched_yield();
}

static void test_first_come_first_served(void **state)
{
	struct tdir *t = *state;
	struct store_wlock *l = NULL;
	pthread_mutex_t om = PTHREAD_MUTEX_INITIALIZER;
	struct taker tk[4];
	pthread_t th[4];
	int order[4];
	size_t n = 0;

	touch(t->db);
	assert_int_equal(store_wlock_get(t->db, &l), 0);
	assert_true(store_wlock_take(l, 1000));
	for (int i = 0; i < 4; i++) {
		tk[i] = (struct taker){ l, i, 60000, false, order, &n, &om };
		assert_int_equal(pthread_create(&th[i], NULL, take_main, &tk[i]), 0);
		wait_queued(l, (unsigned int)i + 1);
	}
	store_wlock_give(l);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	assert_int_equal(n, 4);
	for (int i = 0; i < 4; i++) {
		assert_true(tk[i].taken);
		assert_int_equal(order[i], i);
	}
	assert_int_equal(store_wlock_waiting(l), 0);
	/* Free again: taken at once. */
	assert_true(store_wlock_take(l, 0));
	store_wlock_give(l);
}

/* A waiter that gives up leaves the queue; the one behind it still gets
 * its turn. */
static void test_bounded_wait(void **state)
{
	struct tdir *t = *state;
	struct store_wlock *l = NULL;
	pthread_mutex_t om = PTHREAD_MUTEX_INITIALIZER;
	struct taker quick, patient;
	pthread_t tq, tp;
	int order[2];
	size_t n = 0;

	touch(t->db);
	assert_int_equal(store_wlock_get(t->db, &l), 0);
	assert_true(store_wlock_take(l, 1000));
	quick = (struct taker){ l, 1, 50, false, order, &n, &om };
	patient = (struct taker){ l, 2, 60000, false, order, &n, &om };
	assert_int_equal(pthread_create(&tq, NULL, take_main, &quick), 0);
	wait_queued(l, 1);
	assert_int_equal(pthread_create(&tp, NULL, take_main, &patient), 0);
	wait_queued(l, 2);
	assert_int_equal(pthread_join(tq, NULL), 0);	/* held throughout: it gives up */
	assert_false(quick.taken);
	assert_int_equal(store_wlock_waiting(l), 1);
	store_wlock_give(l);
	assert_int_equal(pthread_join(tp, NULL), 0);
	assert_true(patient.taken);
	assert_int_equal(n, 1);
	assert_int_equal(order[0], 2);
}

struct beginner {
	const char *db;
	struct store_wlock *l;
	int64_t seen;
	int rc;
};

/* On its own connection: begin (queued behind the main thread's
 * transaction), count the rows, commit. */
static void *begin_main(void *arg)
{
	struct beginner *b = arg;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;

	b->rc = -1;
	if (store_open(&st, b->db, &err) < 0)
		return NULL;
	if (store_begin(st, &err) == 0 &&
	    store_query_int(st, "count", "SELECT count(*) FROM t", NULL, 0, &b->seen, &err) == 0 &&
	    store_commit(st, &err) == 0)
		b->rc = 0;
	store_rollback(st);
	store_close(st);
	return NULL;
}

static void test_begin_queues_behind_transaction(void **state)
{
	struct tdir *t = *state;
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;
	struct beginner b;
	pthread_t th;

	assert_int_equal(store_open(&st, t->db, &err), 0);
	assert_int_equal(store_exec(st, "CREATE TABLE t (x INTEGER)", "create", &err), 0);
	b = (struct beginner){ t->db, NULL, -1, -1 };
	assert_int_equal(store_wlock_get(t->db, &b.l), 0);
	assert_non_null(b.l);
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(pthread_create(&th, NULL, begin_main, &b), 0);
	wait_queued(b.l, 1);
	assert_int_equal(store_exec(st, "INSERT INTO t VALUES (1)", "insert", &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(b.rc, 0);
	assert_int_equal(b.seen, 1);	/* it began after the commit */

	/* A rollback gives the turn back too; so does a failed COMMIT's
	 * rollback, and a close in the middle of a transaction. */
	assert_int_equal(store_begin(st, &err), 0);
	store_rollback(st);
	assert_true(store_wlock_take(b.l, 0));
	store_wlock_give(b.l);
	assert_int_equal(store_begin(st, &err), 0);
	store_close(st);
	assert_true(store_wlock_take(b.l, 0));
	store_wlock_give(b.l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_lock_per_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_come_first_served, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounded_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_begin_queues_behind_transaction, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
