/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "sanitize.h"
#include "text.h"

#define LOG_MAX_OVERRIDES 32
#define LOG_COMPONENT_MAX 32
#define LOG_MSG_MAX 4096

struct log_override {
	char component[LOG_COMPONENT_MAX];
	enum pg_log_level level;
};

/* Log settings are process-wide by nature; they are written at start-up
 * (or on reconfiguration) and only read afterwards. */
static const char *log_progname = "perfgate";
static enum pg_log_level log_level = PG_LOG_INFO;
static struct log_override log_overrides[LOG_MAX_OVERRIDES];
static size_t log_n_overrides;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void pg_log_init(const char *progname)
{
	if (progname && *progname)
		log_progname = progname;
}

int pg_log_level_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (strcmp(name, level_names[i]) == 0)
			return (int)i;
	if (strcmp(name, "warning") == 0)
		return PG_LOG_WARN;
	return -1;
}

int pg_log_set_levels(const char *spec)
{
	struct log_override ov[LOG_MAX_OVERRIDES];
	enum pg_log_level global = log_level;
	size_t n_ov = 0;
	char item[128];
	const char *p = spec;

	while (*p) {
		size_t len = strcspn(p, ",");
		char *eq;
		int lvl;

		if (len == 0 || len >= sizeof(item))
			return -1;
		memcpy(item, p, len);
		item[len] = '\0';
		eq = strchr(item, '=');
		if (!eq) {
			lvl = pg_log_level_parse(item);
			if (lvl < 0)
				return -1;
			global = (enum pg_log_level)lvl;
		} else {
			*eq = '\0';
			lvl = pg_log_level_parse(eq + 1);
			if (lvl < 0 || !*item || strlen(item) >= LOG_COMPONENT_MAX ||
			    n_ov >= LOG_MAX_OVERRIDES)
				return -1;
			memcpy(ov[n_ov].component, item, strlen(item) + 1);
			ov[n_ov].level = (enum pg_log_level)lvl;
			n_ov++;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	log_level = global;
	memcpy(log_overrides, ov, sizeof(ov[0]) * n_ov);
	log_n_overrides = n_ov;
	return 0;
}

bool pg_log_enabled(enum pg_log_level level, const char *component)
{
	for (size_t i = 0; i < log_n_overrides; i++)
		if (component && strcmp(log_overrides[i].component, component) == 0)
			return level <= log_overrides[i].level;
	return level <= log_level;
}

/* Last resort when the sanitiser has no memory: every byte that could be
 * a control or part of one becomes '?', so the line is still one line. */
static void log_scrub(char *msg)
{
	for (unsigned char *p = (unsigned char *)msg; *p; p++)
		if (*p < ' ' || *p >= 0x7f)
			*p = '?';
}

static void log_vemit(enum pg_log_level level, const char *component,
		      const char *fmt, va_list ap)
{
	struct pg_buf safe = PG_BUF_INIT(LOG_MSG_MAX * PG_SAN_GROWTH);
	char stamp[40], msg[LOG_MSG_MAX];
	const char *line = msg;
	struct timespec ts;
	struct tm tm;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		msg[0] = '\0';
	/* A long message is cut, but not inside a character. */
	else if ((size_t)n >= sizeof(msg))
		msg[pg_utf8_cut(msg, sizeof(msg) - 1)] = '\0';
	/* What is logged often comes from outside (a request path, a header,
	 * an agent's words): one line whatever it holds, no terminal
	 * controls, valid UTF-8. */
	if (pg_sanitize(&safe, msg, strlen(msg), PG_SAN_LINE) == 0)
		line = pg_buf_str(&safe);
	else
		log_scrub(msg);
	/* One fprintf per line so that concurrent threads do not interleave. */
	fprintf(stderr, "%s.%03ldZ %s[%ld] %s %s: %s\n", stamp,
		ts.tv_nsec / 1000000L, log_progname, (long)getpid(),
		level_names[level], component ? component : "-", line);
	pg_buf_release(&safe);
}

void pg_log(enum pg_log_level level, const char *component, const char *fmt, ...)
{
	va_list ap;

	if (!pg_log_enabled(level, component))
		return;
	va_start(ap, fmt);
	log_vemit(level, component, fmt, ap);
	va_end(ap);
}

noreturn void pg_fatal(const char *component, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(PG_LOG_ERROR, component, fmt, ap);
	va_end(ap);
	exit(1);
}
