/* SPDX-License-Identifier: MIT */
/*
 * A slow disk for the bench and the fault suite, loaded with LD_PRELOAD:
 * every fsync() and fdatasync() of the process waits before it syncs, the
 * way a VM's or a busy disk's flushes do.
 *
 *   PG_SLOWSYNC_MS=N           each sync waits N ms first (default 10)
 *   PG_SLOWSYNC_STALL_MS=M     ... and every PG_SLOWSYNC_STALL_EVERY-th
 *   PG_SLOWSYNC_STALL_EVERY=K  sync waits M ms instead (a stall; default
 *                              none)
 *   PG_SLOWSYNC_HOLD=FILE      ... and while FILE exists, every sync waits
 *                              (a disk that does not answer: a test can
 *                              tell what waits for a sync and what not)
 *
 * Why a shim and not a device-mapper `delay` target: the kernel of the
 * machines this runs on (CI's and the shared VM's) has no device-mapper
 * and no loadable modules, and FUSE would have to pass SQLite's shared
 * memory file through; what the issue measured was the sync, not the
 * writes (the page cache takes those), and the sync is exactly what this
 * delays.  Writes and reads are not slowed.
 *
 * Only what libc's wrappers are asked to do is delayed: a program that
 * makes the system call itself is not slowed (SQLite and the controller
 * call the wrappers).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define HOLD_POLL_MS 10

static atomic_ulong n_syncs;

static long env_ms(const char *name, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 600000)
		return def;
	return v;
}

static void slow_down(void)
{
	unsigned long n = atomic_fetch_add(&n_syncs, 1) + 1;
	long ms = env_ms("PG_SLOWSYNC_MS", 10), every = env_ms("PG_SLOWSYNC_STALL_EVERY", 0);
	struct timespec ts;
	const char *hold;
	int saved = errno;

	if (every > 0 && n % (unsigned long)every == 0)
		ms = env_ms("PG_SLOWSYNC_STALL_MS", 0);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	hold = getenv("PG_SLOWSYNC_HOLD");
	while (hold && *hold && access(hold, F_OK) == 0) {
		ts.tv_sec = 0;
		ts.tv_nsec = HOLD_POLL_MS * 1000000L;
		nanosleep(&ts, NULL);
	}
	errno = saved;
}

int fsync(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	slow_down();
	return real(fd);
}

int fdatasync(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	slow_down();
	return real(fd);
}
