/* SPDX-License-Identifier: MIT */
#ifndef PG_LOG_H
#define PG_LOG_H

/*
 * Logging to stderr with a component name and a level (after OpenBSD's
 * log.c and DPDK's per-component log types).  One line per message:
 *
 *   2026-11-30T04:30:00.123Z perfgate-controller[812] warn store: ...
 *
 * The level is global with per-component overrides, settable at run time:
 * pg_log_set_levels("info,store=debug,http=warn").
 */

#include <stdbool.h>
#include <stdnoreturn.h>

enum pg_log_level {
	PG_LOG_ERROR = 0,
	PG_LOG_WARN,
	PG_LOG_INFO,
	PG_LOG_DEBUG,
};

/* Name the program in every line (default "perfgate"). */
void pg_log_init(const char *progname);

/* Parse "LEVEL[,component=LEVEL...]" (levels: error, warn, info, debug).
 * Returns 0, or -1 when the spec is malformed (nothing changes then). */
int pg_log_set_levels(const char *spec);

/* Parse one level name; returns -1 when unknown. */
int pg_log_level_parse(const char *name);

/* True when a message of this level and component would be printed. */
bool pg_log_enabled(enum pg_log_level level, const char *component);

void pg_log(enum pg_log_level level, const char *component, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Log at error level, then exit(1). */
noreturn void pg_fatal(const char *component, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pg_log_error(comp, ...) pg_log(PG_LOG_ERROR, comp, __VA_ARGS__)
#define pg_log_warn(comp, ...)  pg_log(PG_LOG_WARN, comp, __VA_ARGS__)
#define pg_log_info(comp, ...)  pg_log(PG_LOG_INFO, comp, __VA_ARGS__)
#define pg_log_debug(comp, ...) pg_log(PG_LOG_DEBUG, comp, __VA_ARGS__)

#endif
