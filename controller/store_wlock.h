/* SPDX-License-Identifier: MIT */
#ifndef PG_STORE_WLOCK_H
#define PG_STORE_WLOCK_H

/*
 * The store's write turn inside one process: a first-come, first-served
 * lock per database file, taken by store_begin() before BEGIN IMMEDIATE
 * and given back when the transaction ends (store.c).
 *
 * Why: SQLite's busy handler polls, sleeping up to 100 ms between tries,
 * while a thread that commits and begins again at once takes the write
 * lock back within microseconds.  The verdict pass deciding hundreds of
 * jobs one transaction each held the API's writer off that way for
 * seconds (every kind of request stalled together, up to 4.5 s at 5,000
 * requests/s).  Threads of one process now queue here in the order they
 * came and are woken when their turn comes; other processes (the command
 * line) still meet SQLite's own lock and busy timeout.
 */

#include <stdbool.h>

struct store_wlock;

/*
 * The lock of the database at path (made on first use; one per file, found
 * again by device and inode), or NULL when path names no file (an
 * in-memory database), which needs none.  Never freed: a process opens a
 * handful of stores.  Returns -1 on an allocation failure, 0 otherwise.
 */
int store_wlock_get(const char *path, struct store_wlock **out);

/*
 * Wait for the turn, at most timeout_ms; true when taken.  Waiters are
 * served in the order they called.
 */
bool store_wlock_take(struct store_wlock *l, unsigned int timeout_ms);

/* Give the turn to the next waiter, if any. */
void store_wlock_give(struct store_wlock *l);

/* How many threads wait for the turn now (for tests). */
unsigned int store_wlock_waiting(struct store_wlock *l);

#endif
