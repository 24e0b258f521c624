/* SPDX-License-Identifier: MIT */

#ifndef PG_TIMEUTIL_H
#define PG_TIMEUTIL_H

/*
 * Clocks, sleeping, UTC timestamps and retry backoff.
 *
 * Time values are int64_t milliseconds: since the Unix epoch (UTC) for wall
 * time, since an arbitrary point for monotonic time.  Deadlines and
 * durations use the monotonic clock so that a wall-clock step (NTP, an
 * operator) neither fires nor stalls them; the wall clock is only for
 * timestamps that are stored or shown.
 *
 * The formatting and parsing functions are pure: they do their own calendar
 * arithmetic (proleptic Gregorian, UTC) and never consult TZ, the locale or
 * the C library's time zone state, so they are thread-safe and give the same
 * answer on every host.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC.  Never fails (aborts if the kernel
 * lacks the clock, which Linux never does). */
int64_t pg_time_mono_ms(void);
/* The same clock in microseconds. */
int64_t pg_time_mono_us(void);

/* Milliseconds since 1970-01-01T00:00:00Z on CLOCK_REALTIME. */
int64_t pg_time_wall_ms(void);

/*
 * The steady wall clock: for times that are stored as wall times AND
 * compared as deadlines (the controller's leases: lease_expires is a wall
 * time in the store, and the expiry sweep compares it with now).  It follows
 * CLOCK_REALTIME, but between two readings it advances by the monotonic
 * time elapsed, give or take PG_STEADY_SLEW (1/8): a step of the wall clock
 * (NTP stepping, an operator's date) is absorbed at that rate instead of at
 * once, so a step of an hour forward does not expire every lease, nor one
 * back keep dead leases for an hour; a deadline D ms ahead comes after
 * between 8/9 D and 8/7 D.  Ordinary NTP slewing (at most 0.05 %) is followed exactly.
 * Never runs backwards.
 *
 * pg_steady_step() is the pure rule: given the state of the last reading
 * (zeroed before the first) and the two clocks now, returns the steady time
 * and updates the state.  pg_time_steady_ms() is one process-wide clock
 * (thread-safe) on the real clocks: every deadline of one process must come
 * from the same one.
 */
#define PG_STEADY_SLEW 8
struct pg_steady {
	bool set;
	int64_t steady_ms;		/* the last answer */
	int64_t mono_ms;		/* CLOCK_MONOTONIC then */
};
int64_t pg_steady_step(struct pg_steady *s, int64_t wall_ms, int64_t mono_ms);
int64_t pg_time_steady_ms(void);

/*
 * Sleep for ms milliseconds (nothing when ms <= 0).  A signal interrupts
 * the sleep only to look at *stop: when stop is not NULL and *stop is
 * non-zero the function returns early, otherwise it sleeps on until the
 * original deadline (measured on CLOCK_MONOTONIC, so repeated signals do
 * not stretch the total).
 *
 * A signal arriving between the check of *stop and the start of the sleep
 * is only noticed at the next interruption or at the deadline, so a loop
 * that must stop promptly should sleep in slices of a second or less.
 *
 * Returns 0 after the full time, 1 when stopped early (also when *stop was
 * already set on entry).
 */
int pg_sleep_ms(int64_t ms, volatile sig_atomic_t *stop);

/* Flags for pg_time_format_utc().  PG_TIME_NAIVE is 1 so that a caller
 * passing a bool "naive" gets what it means. */
enum {
	PG_TIME_NAIVE = 1 << 0,		/* no trailing "Z" (Patchwork's `since`) */
	PG_TIME_MILLIS = 1 << 1,	/* add ".mmm" */
};

/* Room for the longest result, "YYYY-MM-DDTHH:MM:SS.mmmZ", and its NUL. */
#define PG_TIME_UTC_MAX 32

/*
 * Format ms since the epoch as ISO 8601 / RFC 3339 UTC:
 *
 *   0                          "2026-11-30T04:30:00Z"
 *   PG_TIME_NAIVE              "2026-11-30T04:30:00"
 *   PG_TIME_MILLIS             "2026-11-30T04:30:00.123Z"
 *
 * Without PG_TIME_MILLIS the milliseconds are dropped (truncated towards
 * the past, also before 1970), which suits Patchwork's inclusive `since`:
 * the event at .762 is still returned.  Patchwork answers HTTP 500 to a
 * `since` with "Z" or an offset, so use PG_TIME_NAIVE there.
 *
 * Returns the length written (excluding the NUL), or -1 when the year is
 * outside 0000..9999 or out[outlen] is too small (out is then "" when
 * outlen > 0).
 */
int pg_time_format_utc(int64_t ms, unsigned int flags, char *out, size_t outlen);

/*
 * Parse an ISO 8601 / RFC 3339 date-time into ms since the epoch:
 *
 *   YYYY-MM-DD('T'|'t'|' ')HH:MM:SS[.fraction][Z|z|+HH:MM|-HH:MM|+HHMM|-HHMM]
 *
 * A value without a zone is naive and taken as UTC (Patchwork's dates,
 * e.g. "2024-05-02T20:22:37.762318").  Fraction digits beyond milliseconds
 * are truncated.  Fields are range-checked (day against its month, leap
 * years included; a leap second :60 is accepted and lands on the next
 * minute).  The whole string must match: no leading or trailing space, no
 * date-only form.
 *
 * Returns 0 and sets *ms, or -1 on malformed input (*ms untouched).
 */
int pg_time_parse_utc(const char *s, int64_t *ms);

/*
 * Parse an RFC 5322 (RFC 2822) mail date into ms since the epoch:
 *
 *   [Day ","] D Mon YYYY HH:MM[:SS] (+HHMM|-HHMM|zone-name) [(comment)]
 *
 * e.g. "Mon, 30 Nov 2026 04:30:00 +0100 (CET)".  Case-insensitive names;
 * folding white space (CR, LF) and comments in parentheses anywhere
 * between tokens; the obsolete forms a mail archive still holds: two- and
 * three-digit years (RFC 5322 4.3: 00-49 are 20xx, 50-999 add 1900), the
 * zone names UT, GMT, EST/EDT, CST/CDT, MST/MDT, PST/PDT, and military
 * letters (taken as UTC, as the RFC advises).  The weekday is checked to be
 * a weekday name but not against the date, since mailers get it wrong.
 *
 * Returns 0 and sets *ms, or -1 on malformed input (*ms untouched).
 */
int pg_time_parse_rfc2822(const char *s, int64_t *ms);

/*
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential
 * Backoff And Jitter"): a uniformly random delay in
 *
 *   [0, min(max_ms, base_ms * 2^attempt)]
 *
 * so that many agents retrying the same controller, or the Patchwork
 * outbox retrying a flaky server, spread out instead of retrying in step.
 * attempt counts from 0 (the first retry).  Never negative, never above
 * max_ms; 0 when base_ms or max_ms is <= 0.  Overflow-safe for any attempt.
 *
 * *rand_state is the generator's state (splitmix64), advanced on each
 * call; any value is a valid seed, e.g. pg_time_wall_ms() ^ getpid().  One
 * state per thread: the function is otherwise pure.  With rand_state NULL
 * the result is the cap itself (plain exponential backoff, no jitter).
 */
int64_t pg_backoff_ms(unsigned int attempt, int64_t base_ms, int64_t max_ms,
		      uint64_t *rand_state);

#endif
