/* SPDX-License-Identifier: MIT */
#include "timeutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MS_PER_SEC 1000
#define SEC_PER_DAY 86400

/*
 * The calendar arithmetic is Howard Hinnant's days_from_civil() and
 * civil_from_days() ("chrono-Compatible Low-Level Date Algorithms"): exact
 * for the proleptic Gregorian calendar, no tables, no time zone state, no
 * dependence on time_t's range.
 */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static bool is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
	static const int mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (m == 2 && is_leap(y))
		return 29;
	return mdays[m - 1];
}

/* Floor division, so that instants before 1970 land on the right day. */
static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

int64_t pg_time_mono_us(void)
{
	struct timespec ts;

	/* Linux always has CLOCK_MONOTONIC; a failure here means a broken
	 * system, and a made-up time would corrupt every deadline. */
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		abort();
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t pg_time_mono_ms(void)
{
	return pg_time_mono_us() / 1000;
}

int64_t pg_time_wall_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		abort();
	return (int64_t)ts.tv_sec * MS_PER_SEC + ts.tv_nsec / 1000000;
}

int64_t pg_steady_step(struct pg_steady *s, int64_t wall_ms, int64_t mono_ms)
{
	int64_t d, lo, hi;

	if (!s->set) {
		s->set = true;
		s->steady_ms = wall_ms;
		s->mono_ms = mono_ms;
		return wall_ms;
	}
	/* CLOCK_MONOTONIC does not go back; if it ever did, stand still. */
	if (mono_ms < s->mono_ms) {
		s->mono_ms = mono_ms;
		return s->steady_ms;
	}
	d = mono_ms - s->mono_ms;
	lo = s->steady_ms + d - d / PG_STEADY_SLEW;
	hi = s->steady_ms + d + d / PG_STEADY_SLEW;
	/* d / 8 rounds to nothing between readings less than 8 ms apart:
	 * keep the old reading as the base until a step can move. */
	if (d < PG_STEADY_SLEW && wall_ms != s->steady_ms + d)
		return s->steady_ms + d;
	s->steady_ms = wall_ms < lo ? lo : wall_ms > hi ? hi : wall_ms;
	s->mono_ms = mono_ms;
	return s->steady_ms;
}

int64_t pg_time_steady_ms(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct pg_steady state;
	int64_t t;

	pthread_mutex_lock(&lock);
	t = pg_steady_step(&state, pg_time_wall_ms(), pg_time_mono_ms());
	pthread_mutex_unlock(&lock);
	return t;
}

int pg_sleep_ms(int64_t ms, volatile sig_atomic_t *stop)
{
	struct timespec deadline;
	int rc;

	if (stop && *stop)
		return 1;
	if (ms <= 0)
		return 0;
	if (clock_gettime(CLOCK_MONOTONIC, &deadline) != 0)
		abort();
	deadline.tv_sec += (time_t)(ms / MS_PER_SEC);
	deadline.tv_nsec += (long)(ms % MS_PER_SEC) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	/* An absolute deadline: restarting after EINTR neither loses nor
	 * adds time, however many signals arrive. */
	for (;;) {
		rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
		if (rc == 0)
			return 0;
		/* Only EINTR is possible with a valid clock and a normalised
		 * timespec; returning early on anything else would turn a
		 * retry loop into a busy loop. */
		if (rc != EINTR)
			abort();
		if (stop && *stop)
			return 1;
	}
}

int pg_time_format_utc(int64_t ms, unsigned int flags, char *out, size_t outlen)
{
	int64_t secs, days, rem, year;
	int month, day, n;
	const char *zone = (flags & PG_TIME_NAIVE) ? "" : "Z";

	if (!out || outlen == 0)
		return -1;
	out[0] = '\0';
	secs = floor_div(ms, MS_PER_SEC);
	days = floor_div(secs, SEC_PER_DAY);
	rem = secs - days * SEC_PER_DAY;
	civil_from_days(days, &year, &month, &day);
	if (year < 0 || year > 9999)
		return -1;
	if (flags & PG_TIME_MILLIS)
		n = snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%03d%s",
			     (int)year, month, day, (int)(rem / 3600),
			     (int)(rem / 60 % 60), (int)(rem % 60),
			     (int)(ms - secs * MS_PER_SEC), zone);
	else
		n = snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d%s",
			     (int)year, month, day, (int)(rem / 3600),
			     (int)(rem / 60 % 60), (int)(rem % 60), zone);
	if (n < 0 || (size_t)n >= outlen) {
		out[0] = '\0';
		return -1;
	}
	return n;
}

/* Locale-independent, unlike isdigit()/isalpha(). */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char to_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Exactly n digits. */
static bool parse_digits(const char **pp, int n, int *out)
{
	const char *p = *pp;
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!is_digit(p[i]))
			return false;
		v = v * 10 + (p[i] - '0');
	}
	*pp = p + n;
	*out = v;
	return true;
}

/* Between min and max digits; returns how many were read (0 on failure). */
static int parse_digits_range(const char **pp, int min, int max, int *out)
{
	const char *p = *pp;
	int v = 0, n = 0;

	while (n < max && is_digit(p[n])) {
		v = v * 10 + (p[n] - '0');
		n++;
	}
	if (n < min || is_digit(p[n]))
		return 0;
	*pp = p + n;
	*out = v;
	return n;
}

/* Range-check the broken-down fields and combine them; off_sec is the
 * zone's offset east of UTC. */
static int combine(int64_t y, int mo, int d, int h, int mi, int s, int frac_ms,
		   int off_sec, int64_t *ms)
{
	int64_t secs;

	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		return -1;
	if (h > 23 || mi > 59 || s > 60)
		return -1;
	secs = days_from_civil(y, mo, d) * SEC_PER_DAY + h * 3600 + mi * 60 + s;
	*ms = (secs - off_sec) * MS_PER_SEC + frac_ms;
	return 0;
}

int pg_time_parse_utc(const char *s, int64_t *ms)
{
	const char *p = s;
	int y, mo, d, h, mi, sec, frac = 0, off = 0;

	if (!s || !ms)
		return -1;
	if (!parse_digits(&p, 4, &y) || *p++ != '-' ||
	    !parse_digits(&p, 2, &mo) || *p++ != '-' ||
	    !parse_digits(&p, 2, &d))
		return -1;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return -1;
	p++;
	if (!parse_digits(&p, 2, &h) || *p++ != ':' ||
	    !parse_digits(&p, 2, &mi) || *p++ != ':' ||
	    !parse_digits(&p, 2, &sec))
		return -1;
	if (*p == '.' || *p == ',') {
		int scale = 100;

		p++;
		if (!is_digit(*p))
			return -1;
		/* Keep milliseconds, drop the rest (Patchwork sends µs). */
		for (; is_digit(*p); p++) {
			frac += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om;

		if (!parse_digits(&p, 2, &oh))
			return -1;
		if (*p == ':')
			p++;
		if (!parse_digits(&p, 2, &om) || oh > 23 || om > 59)
			return -1;
		off = sign * (oh * 3600 + om * 60);
	}
	if (*p != '\0')
		return -1;
	return combine(y, mo, d, h, mi, sec, frac, off, ms);
}

/* Skip folding white space and (possibly nested) comments, which RFC 5322
 * allows between the tokens of a date.  False on an unclosed comment. */
static bool skip_cfws(const char **pp)
{
	const char *p = *pp;
	int depth = 0;

	for (;;) {
		if (*p == '\0') {
			if (depth)
				return false;
			break;
		}
		if (depth) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '(')
				depth++;
			else if (*p == ')')
				depth--;
			p++;
		} else if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
			p++;
		} else if (*p == '(') {
			depth++;
			p++;
		} else {
			break;
		}
	}
	*pp = p;
	return true;
}

/* A run of letters, at most outlen - 1 of them, lower-cased. */
static size_t parse_word(const char **pp, char *out, size_t outlen)
{
	const char *p = *pp;
	size_t n = 0;

	while (is_alpha(p[n])) {
		if (n + 1 >= outlen)
			return 0;
		out[n] = to_lower(p[n]);
		n++;
	}
	out[n] = '\0';
	*pp = p + n;
	return n;
}

static int lookup(const char *word, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(word, names[i]))
			return i;
	return -1;
}

/* Offset east of UTC in seconds of a zone name, RFC 5322 4.3. */
static bool zone_name_offset(const char *word, size_t len, int *off)
{
	static const struct {
		const char *name;
		int hours;
	} zones[] = {
		{ "ut", 0 }, { "gmt", 0 }, { "utc", 0 },
		{ "est", -5 }, { "edt", -4 }, { "cst", -6 }, { "cdt", -5 },
		{ "mst", -7 }, { "mdt", -6 }, { "pst", -8 }, { "pdt", -7 },
	};

	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		if (!strcmp(word, zones[i].name)) {
			*off = zones[i].hours * 3600;
			return true;
		}
	}
	/* Military letters were defined with the wrong sign and other names
	 * are ambiguous: the RFC says to read both as -0000 (UTC). */
	if ((len == 1 && word[0] != 'j') || (len >= 3 && len <= 5)) {
		*off = 0;
		return true;
	}
	return false;
}

int pg_time_parse_rfc2822(const char *s, int64_t *ms)
{
	static const char *const wdays[] = {
		"mon", "tue", "wed", "thu", "fri", "sat", "sun",
	};
	static const char *const months[] = {
		"jan", "feb", "mar", "apr", "may", "jun",
		"jul", "aug", "sep", "oct", "nov", "dec",
	};
	const char *p = s;
	char word[8];
	size_t wlen;
	int d, mo, y, ny, h, mi, sec = 0, off;

	if (!s || !ms)
		return -1;
	if (!skip_cfws(&p))
		return -1;
	if (is_alpha(*p)) {
		if (parse_word(&p, word, sizeof(word)) != 3 || lookup(word, wdays, 7) < 0)
			return -1;
		if (!skip_cfws(&p) || *p++ != ',' || !skip_cfws(&p))
			return -1;
	}
	if (!parse_digits_range(&p, 1, 2, &d) || !skip_cfws(&p))
		return -1;
	if (parse_word(&p, word, sizeof(word)) != 3)
		return -1;
	mo = lookup(word, months, 12) + 1;
	if (mo == 0 || !skip_cfws(&p))
		return -1;
	ny = parse_digits_range(&p, 2, 4, &y);
	if (ny == 0)
		return -1;
	if (ny == 2)
		y += y < 50 ? 2000 : 1900;
	else if (ny == 3)
		y += 1900;
	if (!skip_cfws(&p) || !parse_digits_range(&p, 1, 2, &h) ||
	    !skip_cfws(&p) || *p++ != ':' || !skip_cfws(&p) ||
	    !parse_digits(&p, 2, &mi) || !skip_cfws(&p))
		return -1;
	if (*p == ':') {
		p++;
		if (!skip_cfws(&p) || !parse_digits(&p, 2, &sec) || !skip_cfws(&p))
			return -1;
	}
	if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om;

		if (!parse_digits(&p, 2, &oh) || !parse_digits(&p, 2, &om) ||
		    is_digit(*p) || oh > 23 || om > 59)
			return -1;
		off = sign * (oh * 3600 + om * 60);
	} else {
		wlen = parse_word(&p, word, sizeof(word));
		if (wlen == 0 || !zone_name_offset(word, wlen, &off))
			return -1;
	}
	if (!skip_cfws(&p) || *p != '\0')
		return -1;
	return combine(y, mo, d, h, mi, sec, 0, off, ms);
}

/* splitmix64 (Steele, Lea, Flood 2014): any state is a valid seed, and a
 * 64-bit add plus a mix is all the quality backoff jitter needs. */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int64_t pg_backoff_ms(unsigned int attempt, int64_t base_ms, int64_t max_ms,
		      uint64_t *rand_state)
{
	int64_t cap = base_ms;

	if (base_ms <= 0 || max_ms <= 0)
		return 0;
	/* Double without overflowing: stop once the cap reaches max_ms. */
	for (unsigned int i = 0; i < attempt && cap < max_ms; i++)
		cap = cap > max_ms / 2 ? max_ms : cap * 2;
	if (cap > max_ms)
		cap = max_ms;
	if (!rand_state)
		return cap;
	return (int64_t)(splitmix64(rand_state) % ((uint64_t)cap + 1));
}
