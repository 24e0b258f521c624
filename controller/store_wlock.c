/* SPDX-License-Identifier: MIT */
/*
 * The store's first-come, first-served write turn (store_wlock.h): a
 * mutex, one condition variable and a queue of waiters, each granted the
 * turn by name so that none can overtake another.
 */
#include "store_wlock.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

struct wl_waiter {
	struct wl_waiter *next;
	bool granted;
};

struct store_wlock {
	struct store_wlock *next;	/* the process's list */
	dev_t dev;
	ino_t ino;
	pthread_mutex_t m;
	pthread_cond_t c;		/* on the monotonic clock */
	bool held;
	struct wl_waiter *head, *tail;
};

static pthread_mutex_t wl_list_m = PTHREAD_MUTEX_INITIALIZER;
static struct store_wlock *wl_list;

int store_wlock_get(const char *path, struct store_wlock **out)
{
	struct store_wlock *l;
	pthread_condattr_t ca;
	struct stat st;
	int rc = -1;

	*out = NULL;
	if (stat(path, &st) < 0)
		return 0;	/* ":memory:", "": nothing to share */
	pthread_mutex_lock(&wl_list_m);
	for (l = wl_list; l; l = l->next)
		if (l->dev == st.st_dev && l->ino == st.st_ino)
			break;
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			goto out;
		if (pthread_condattr_init(&ca) != 0) {
			free(l);
			goto out;
		}
		if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
		    pthread_cond_init(&l->c, &ca) != 0) {
			pthread_condattr_destroy(&ca);
			free(l);
			goto out;
		}
		pthread_condattr_destroy(&ca);
		if (pthread_mutex_init(&l->m, NULL) != 0) {
			pthread_cond_destroy(&l->c);
			free(l);
			goto out;
		}
		l->dev = st.st_dev;
		l->ino = st.st_ino;
		l->next = wl_list;
		wl_list = l;
	}
	*out = l;
	rc = 0;
out:
	pthread_mutex_unlock(&wl_list_m);
	return rc;
}

static void wl_unlink(struct store_wlock *l, struct wl_waiter *me)
{
	struct wl_waiter **pp = &l->head, *prev = NULL;

	while (*pp && *pp != me) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = me->next;
	if (l->tail == me)
		l->tail = prev;
}

bool store_wlock_take(struct store_wlock *l, unsigned int timeout_ms)
{
	struct wl_waiter me = { NULL, false };
	struct timespec until;
	bool taken;

	pthread_mutex_lock(&l->m);
	if (!l->held && !l->head) {
		l->held = true;
		pthread_mutex_unlock(&l->m);
		return true;
	}
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (l->tail)
		l->tail->next = &me;
	else
		l->head = &me;
	l->tail = &me;
	while (!me.granted)
		if (pthread_cond_timedwait(&l->c, &l->m, &until) == ETIMEDOUT && !me.granted)
			break;
	taken = me.granted;
	if (!taken)
		wl_unlink(l, &me);
	pthread_mutex_unlock(&l->m);
	return taken;
}

void store_wlock_give(struct store_wlock *l)
{
	struct wl_waiter *w;

	pthread_mutex_lock(&l->m);
	w = l->head;
	if (w) {
		/* Handed over: held stays true, so no newcomer slips in. */
		l->head = w->next;
		if (!l->head)
			l->tail = NULL;
		w->granted = true;
		pthread_cond_broadcast(&l->c);
	} else {
		l->held = false;
	}
	pthread_mutex_unlock(&l->m);
}

unsigned int store_wlock_waiting(struct store_wlock *l)
{
	unsigned int n = 0;

	pthread_mutex_lock(&l->m);
	for (const struct wl_waiter *w = l->head; w; w = w->next)
		n++;
	pthread_mutex_unlock(&l->m);
	return n;
}
