/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for bench_parse_mempool() and
 * bench_mempool_count_results(): any bytes must parse without a sanitizer
 * report, and the result must keep the promises of bench_parse.h: keys of
 * profile.h's grammar, unique, whole non-negative rates in obj/s; the
 * count agrees with the parser and only grows as output arrives; the error
 * is bounded, trimmed, printable.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_parse.h"
#include "buf.h"
#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* digits, at least one, then the end or a '.': returns past them or NULL */
static const char *digits(const char *p)
{
	const char *s = p;

	while (*p >= '0' && *p <= '9')
		p++;
	return p == s ? NULL : p;
}

static const char *word(const char *p, const char *w)
{
	size_t n = strlen(w);

	return strncmp(p, w, n) ? NULL : p + n;
}

/* mempool.SECTION.coresC.keepK.(getG.putP.const[01] | maxbulkM) */
static int key_ok(const char *k)
{
	static const char *const sections[] = {
		"nocache.", "cache.", "usercache.", "default_nocache.", "default_cache.",
	};
	const char *p = word(k, "mempool."), *q = NULL;

	if (!p)
		return 0;
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]) && !q; i++)
		q = word(p, sections[i]);
	if (!q || !(p = word(q, "cores")) || !(p = digits(p)) || !(p = word(p, ".keep")) ||
	    !(p = digits(p)) || *p != '.')
		return 0;
	p++;
	if ((q = word(p, "maxbulk")))
		return (q = digits(q)) && !*q;
	if (!(p = word(p, "get")) || !(p = digits(p)) || !(p = word(p, ".put")) ||
	    !(p = digits(p)) || !(p = word(p, ".const")))
		return 0;
	return (*p == '0' || *p == '1') && !p[1];
}

static void check_error(const char *e)
{
	size_t n;

	if (!e)
		return;
	n = strlen(e);
	if (!n || n >= BENCH_ERROR_MAX || e[0] == ' ' || e[n - 1] == ' ')
		abort();
	for (size_t i = 0; i < n; i++)
		if (e[i] < 0x20 || e[i] > 0x7e)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	const char *buf = (const char *)data;
	size_t count;

	if (bench_parse_mempool(buf, size, &out, &err) != 0)
		abort();	/* under 64 MiB only memory can fail */
	count = bench_mempool_count_results(buf, size);
	if (count != out.result_lines || out.n > BENCH_MAX_SAMPLES ||
	    out.n + out.unkeyed + out.dropped > out.result_lines)
		abort();
	if (bench_mempool_count_results(buf, size / 2) > count)
		abort();
	for (size_t i = 0; i < out.n; i++) {
		const struct bench_sample *s = &out.samples[i];

		if (strlen(s->key) >= BENCH_KEY_MAX || !key_ok(s->key))
			abort();
		if (bench_output_find(&out, s->key) != s)
			abort();	/* unique */
		if (strcmp(s->unit, "obj/s") || !isfinite(s->value) || s->value < 0 ||
		    floor(s->value) != s->value)
			abort();
	}
	check_error(out.error);
	if (bench_output_dump(&out, &b) != 0)
		abort();
	pg_buf_release(&b);
	bench_output_release(&out);
	return 0;
}
