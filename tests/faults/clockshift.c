/* SPDX-License-Identifier: MIT */
/*
 * An LD_PRELOAD shim for the fault suite (f_clock.sh): the wall clock of
 * the process it is loaded into is shifted by the number of seconds
 * written in the file named by CLOCKSHIFT_FILE ("3600", "-3600"), re-read
 * at most every 50 ms, so that a test steps one daemon's clock while it
 * runs, as an NTP step or an operator's `date` does: CLOCK_REALTIME
 * (and its coarse variant), gettimeofday() and time() move; the
 * monotonic clocks do not.
 *
 * Why not libfaketime: with DONT_FAKE_MONOTONIC=1 its clock_nanosleep()
 * answers EINVAL in threads other than the main one (Debian 12's 0.9.10),
 * which the daemons take for a broken system and abort on.
 *
 * Built by the case itself (cc -shared -fPIC), never linked into perfgate.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static _Atomic int64_t shift_s;
static _Atomic int64_t read_at_ns;	/* CLOCK_MONOTONIC of the last read */

static int real_gettime(clockid_t id, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, id, ts);
}

static int64_t shift_now(void)
{
	struct timespec now;
	const char *path = getenv("CLOCKSHIFT_FILE");
	int64_t ns, v = 0, sign = 1;
	char buf[32];
	ssize_t n;
	int fd, i = 0;

	if (!path || real_gettime(CLOCK_MONOTONIC, &now) != 0)
		return 0;
	ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	if (atomic_load(&read_at_ns) && ns - atomic_load(&read_at_ns) < 50000000)
		return atomic_load(&shift_s);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return atomic_load(&shift_s);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return atomic_load(&shift_s);
	buf[n] = '\0';
	if (buf[0] == '-' || buf[0] == '+') {
		sign = buf[0] == '-' ? -1 : 1;
		i = 1;
	}
	for (; buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (buf[i] - '0');
	atomic_store(&shift_s, sign * v);
	atomic_store(&read_at_ns, ns);
	return sign * v;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int rc = real_gettime(id, ts);

	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		ts->tv_sec += (time_t)shift_now();
	return rc;
}

int gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;

	(void)tz;
	if (!tv)
		return 0;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *out)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return (time_t)-1;
	if (out)
		*out = ts.tv_sec;
	return ts.tv_sec;
}
