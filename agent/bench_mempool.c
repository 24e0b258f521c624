/* SPDX-License-Identifier: MIT */
/*
 * mempool_perf_autotest output (app/test/test_mempool_perf.c) into samples.
 * One result per line, printed in two halves around the measurement:
 *
 *   21.11        mempool_autotest cache=%u cores=%u n_get_bulk=%u n_put_bulk=%u
 *                n_keep=%u rate_persec=%PRIu64
 *   22.03-24.11  ... n_keep=%u constant_n=%u rate_persec=%PRIu64
 *   25.07+       mempool_autotest cache=%u cores=%u n_keep=%5u
 *                (n_max_bulk=%3u | n_get_bulk=%3u n_put_bulk=%3u constant_n=%u)
 *                rate_persec=%10PRIu64
 *
 * Fields are read by name, so their order does not matter; an error
 * completes the first half instead of the rate ("... mempool is not full").
 * The pool a line measured is known only from the "start performance test"
 * header before it (cache= is 0 or 512 in two sections each).
 */
#include "bench_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"

#define RESULT_PREFIX "mempool_autotest "
#define HEADER_PREFIX "start performance test"

enum section {
	SEC_NONE,		/* no header yet */
	SEC_UNKNOWN,		/* a header this parser does not know */
	SEC_NOCACHE,
	SEC_CACHE,
	SEC_USERCACHE,
	SEC_DEFAULT_NOCACHE,
	SEC_DEFAULT_CACHE,
};

static const char *const section_names[] = {
	[SEC_NOCACHE] = "nocache",
	[SEC_CACHE] = "cache",
	[SEC_USERCACHE] = "usercache",
	[SEC_DEFAULT_NOCACHE] = "default_nocache",
	[SEC_DEFAULT_CACHE] = "default_cache",
};

enum field {
	F_CACHE, F_CORES, F_GET, F_PUT, F_KEEP, F_CONST, F_MAXBULK, F_RATE, F_COUNT
};

static const struct {
	const char *name;
	uint64_t min, max;
} fields[F_COUNT] = {
	[F_CACHE] = { "cache", 0, UINT32_MAX },
	[F_CORES] = { "cores", 1, UINT32_MAX },
	[F_GET] = { "n_get_bulk", 1, UINT32_MAX },
	[F_PUT] = { "n_put_bulk", 1, UINT32_MAX },
	[F_KEEP] = { "n_keep", 1, UINT32_MAX },
	[F_CONST] = { "constant_n", 0, 1 },
	[F_MAXBULK] = { "n_max_bulk", 1, UINT32_MAX },
	[F_RATE] = { "rate_persec", 0, UINT64_MAX },
};

struct result {
	uint64_t v[F_COUNT];
	bool has[F_COUNT];
};

/* Parse a trimmed "mempool_autotest ..." line.  Returns 0 for a complete
 * result, -1 for anything else (an error line, garbage, a field missing
 * or repeated or unknown, a number out of range, text after the rate). */
static int parse_result(const char *s, struct result *r)
{
	const char *p = s + strlen(RESULT_PREFIX) - 1;

	memset(r, 0, sizeof(*r));
	for (;;) {
		const char *name;
		size_t nl;
		int f;

		if (bench_skip_blanks(&p) == 0)
			return -1;
		name = p;
		while ((*p >= 'a' && *p <= 'z') || *p == '_')
			p++;
		nl = (size_t)(p - name);
		if (*p != '=')
			return -1;
		for (f = 0; f < F_COUNT; f++)
			if (strlen(fields[f].name) == nl && !memcmp(fields[f].name, name, nl))
				break;
		if (f == F_COUNT || r->has[f])
			return -1;
		p++;
		bench_skip_blanks(&p);	/* 25.07+ pads the values */
		if (bench_uint(&p, fields[f].max, &r->v[f]) < 0 || r->v[f] < fields[f].min)
			return -1;
		r->has[f] = true;
		if (f == F_RATE)
			break;	/* the rate comes last */
		if (*p != ' ')
			return -1;
	}
	if (*p)
		return -1;
	if (!r->has[F_CACHE] || !r->has[F_CORES] || !r->has[F_KEEP])
		return -1;
	if (r->has[F_MAXBULK])
		return r->has[F_GET] || r->has[F_PUT] || r->has[F_CONST] ? -1 : 0;
	return r->has[F_GET] && r->has[F_PUT] ? 0 : -1;
}

/* Skip a mempool ops name ending at stop (e.g. "ring_mp_mc" before " (").
 * Returns the position of stop, or NULL. */
static const char *skip_ops(const char *p, const char *stop)
{
	const char *end = strstr(p, stop);

	if (!end || end == p)
		return NULL;
	for (const char *q = p; q < end; q++)
		if (*q == ' ' || *q == '(' || *q == ')' || *q == ',')
			return NULL;
	return end;
}

/* Which pool a trimmed "start performance test..." header announces. */
static enum section classify(const char *s)
{
	const char *p = s + strlen(HEADER_PREFIX);
	bool dflt = false;

	if (bench_starts(p, " for ")) {
		/* "for <ops>": the platform's default ops (every version) */
		p = skip_ops(p + 5, " (");
		if (!p)
			return SEC_UNKNOWN;
		dflt = true;
	}
	if (!bench_starts(p, " ("))
		return SEC_UNKNOWN;
	p += 2;
	if (!dflt && bench_starts(p, "using ")) {
		/* 25.07+: "(using <ops>, without cache)" */
		p = skip_ops(p + 6, ", ");
		if (!p)
			return SEC_UNKNOWN;
		p += 2;
	}
	if (!strcmp(p, "without cache)"))
		return dflt ? SEC_DEFAULT_NOCACHE : SEC_NOCACHE;
	if (!strcmp(p, "with cache)"))
		return dflt ? SEC_DEFAULT_CACHE : SEC_CACHE;
	if (!strcmp(p, "with user-owned cache)") && !dflt)
		return SEC_USERCACHE;
	return SEC_UNKNOWN;
}

/* Lines of the test that say it failed (besides the result lines). */
static bool is_test_error(const char *s)
{
	static const char *const starts[] = {
		"test failed at ", "per-lcore test returned", "mempool is not full",
		"cannot allocate ", "cannot set ", "cannot populate ", "not enough lcores",
		"Error: invalid test command", "APP: Invalid DPDK_TEST value",
	};

	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
		if (bench_starts(s, starts[i]))
			return true;
	return false;
}

/* A complete line that is a result line that parses. */
static bool is_result(const struct bench_line *line, const char *s, struct result *r)
{
	return line->complete && !line->cut && bench_starts(s, RESULT_PREFIX) &&
	       parse_result(s, r) == 0;
}

static int add_result(struct bench_output *out, enum section sec, const struct result *r,
		      struct pg_err *err)
{
	char key[BENCH_KEY_MAX];
	bool nocache = sec == SEC_NOCACHE || sec == SEC_DEFAULT_NOCACHE;
	int w;

	/* A cache size that contradicts the header means the header is not
	 * the one this line belongs to: no key is better than a wrong one. */
	if (sec == SEC_NONE || sec == SEC_UNKNOWN || nocache != (r->v[F_CACHE] == 0)) {
		out->unkeyed++;
		return 0;
	}
	if (r->has[F_MAXBULK])
		w = pg_fmt(key, sizeof(key), "mempool.%s.cores%u.keep%u.maxbulk%u",
			   section_names[sec], (unsigned)r->v[F_CORES], (unsigned)r->v[F_KEEP],
			   (unsigned)r->v[F_MAXBULK]);
	else
		w = pg_fmt(key, sizeof(key), "mempool.%s.cores%u.keep%u.get%u.put%u.const%u",
			   section_names[sec], (unsigned)r->v[F_CORES], (unsigned)r->v[F_KEEP],
			   (unsigned)r->v[F_GET], (unsigned)r->v[F_PUT], (unsigned)r->v[F_CONST]);
	if (w < 0)
		return pg_err_set(err, PG_EINVAL, "mempool result key too long");
	return bench_output_add(out, key, (double)r->v[F_RATE], "obj/s", err);
}

int bench_parse_mempool(const char *buf, size_t len, struct bench_output *out,
			struct pg_err *err)
{
	struct bench_line line;
	enum section sec = SEC_NONE;
	bool want_cause = false;
	size_t pos = 0;

	bench_output_begin(out);
	if (bench_check_input(buf, len, err) < 0)
		return -1;
	while (bench_line_next(buf, len, &pos, &line)) {
		struct result r;
		bool had_error = out->error != NULL, cause = want_cause;
		size_t n;
		const char *s = bench_line_trim(&line, &n);

		want_cause = false;
		if (!line.complete) {
			if (n)
				out->truncated = true;
			break;
		}
		if (line.cut)
			out->long_lines++;
		if (cause && bench_starts(s, "Cause:")) {
			if (bench_output_error_append(out, s, n, err) < 0)
				goto fail;
			continue;
		}
		if (bench_starts(s, HEADER_PREFIX)) {
			sec = line.cut ? SEC_UNKNOWN : classify(s);
			continue;
		}
		if (bench_starts(s, RESULT_PREFIX)) {
			if (is_result(&line, s, &r)) {
				out->result_lines++;
				if (add_result(out, sec, &r, err) < 0)
					goto fail;
				continue;
			}
			out->malformed++;
			if (bench_output_error(out, s, n, err) < 0)
				goto fail;
			continue;
		}
		if (!strcmp(s, "Test OK")) {
			out->test_ok = true;
			continue;
		}
		if (!strcmp(s, "Test Failed"))
			out->test_failed = true;
		else if (!strcmp(s, "Test Skipped"))
			out->test_skipped = true;
		else if (!is_test_error(s)) {
			enum bench_eal_error e = bench_eal_error(s);

			if (e == BENCH_EAL_NONE)
				continue;
			want_cause = e == BENCH_EAL_EXIT && !had_error;
		}
		if (bench_output_error(out, s, n, err) < 0)
			goto fail;
	}
	return 0;
fail:
	bench_output_release(out);
	return -1;
}

size_t bench_mempool_count_results(const char *buf, size_t len)
{
	struct bench_line line;
	size_t pos = 0, count = 0;

	if (!buf)
		return 0;
	while (bench_line_next(buf, len, &pos, &line)) {
		struct result r;
		size_t n;
		const char *s = bench_line_trim(&line, &n);

		if (is_result(&line, s, &r))
			count++;
	}
	return count;
}
