/* SPDX-License-Identifier: MIT */
#ifndef PG_THREAD_H
#define PG_THREAD_H

/*
 * Naming the calling thread, as `top -H`, `ps -L`, `perf` and
 * /proc/PID/task/TID/comm show it: a daemon's threads otherwise all carry
 * the program's name, and a profile cannot tell the API's writer from a
 * log appender.
 */

/* Name the calling thread "NAME" (the kernel keeps the first 15 bytes).
 * Best effort: a failure changes nothing else and is not reported. */
void pg_thread_name(const char *name);

#endif
