/* SPDX-License-Identifier: MIT */
/*
 * The shared half of the benchmark parsers: the line reader, strict
 * numbers, the result container (a growable array with a hash index so
 * that "first value kept" stays linear), the golden dump, and the fatal
 * lines that every DPDK program prints the same way.
 */
#include "bench_int.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "vec.h"

/* ---- reading lines --------------------------------------------------------- */

/* Skip the escape sequence at buf[i] (buf[i] is ESC); returns the index
 * past it.  CSI (ESC '[' params final) and two-byte sequences; never an
 * end of line. */
static size_t skip_escape(const char *buf, size_t len, size_t i)
{
	unsigned char c;

	i++;
	if (i >= len)
		return i;
	c = (unsigned char)buf[i];
	if (c == '[') {
		i++;
		while (i < len && (unsigned char)buf[i] >= 0x20 && (unsigned char)buf[i] <= 0x3f)
			i++;
		if (i < len && (unsigned char)buf[i] >= 0x40 && (unsigned char)buf[i] <= 0x7e)
			i++;
		return i;
	}
	if (c >= 0x40 && c <= 0x5f)
		return i + 1;
	return i;
}

/* Drop the prompts DPDK prints before echoed commands. */
static void strip_prompts(struct bench_line *line)
{
	static const char *const prompts[] = { "RTE>>", "testpmd> " };
	size_t skip = 0;
	bool again = true;

	while (again) {
		again = false;
		for (size_t k = 0; k < sizeof(prompts) / sizeof(prompts[0]); k++) {
			size_t pl = strlen(prompts[k]);

			if (line->len - skip >= pl && !memcmp(line->text + skip, prompts[k], pl)) {
				skip += pl;
				again = true;
			}
		}
	}
	if (skip) {
		memmove(line->text, line->text + skip, line->len - skip);
		line->len -= skip;
	}
	line->text[line->len] = '\0';
}

bool bench_line_next(const char *buf, size_t len, size_t *pos, struct bench_line *line)
{
	size_t i = *pos;

	if (len > BENCH_MAX_OUTPUT)
		len = BENCH_MAX_OUTPUT;
	if (i >= len)
		return false;
	line->len = 0;
	line->complete = false;
	line->cut = false;
	while (i < len) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n' || c == '\r') {
			i++;
			if (c == '\r' && i < len && buf[i] == '\n')
				i++;
			line->complete = true;
			break;
		}
		if (c == 0x1b) {
			i = skip_escape(buf, len, i);
			continue;
		}
		i++;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			c = '?';
		if (line->len < BENCH_LINE_MAX)
			line->text[line->len++] = (char)c;
		else
			line->cut = true;
	}
	line->text[line->len] = '\0';
	strip_prompts(line);
	*pos = i;
	return true;
}

const char *bench_line_trim(struct bench_line *line, size_t *n)
{
	size_t b = 0, e = line->len;

	while (b < e && (line->text[b] == ' ' || line->text[b] == '\t'))
		b++;
	while (e > b && (line->text[e - 1] == ' ' || line->text[e - 1] == '\t'))
		e--;
	line->text[e] = '\0';
	line->len = e;
	*n = e - b;
	return line->text + b;
}

bool bench_starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

size_t bench_skip_blanks(const char **p)
{
	size_t n = 0;

	while ((*p)[n] == ' ')
		n++;
	*p += n;
	return n;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int bench_uint(const char **p, uint64_t max, uint64_t *v)
{
	unsigned long long x;
	char *end;

	/* strtoull would take blanks and a sign: digits only here. */
	if (!is_digit(**p))
		return -1;
	errno = 0;
	x = strtoull(*p, &end, 10);
	if (errno == ERANGE || end == *p || x > max)
		return -1;
	*v = x;
	*p = end;
	return 0;
}

int bench_fixed(const char **p, double *v)
{
	const char *s = *p, *q = s;
	char *end;
	double x;

	while (is_digit(*q))
		q++;
	if (q == s || *q != '.' || !is_digit(q[1]))
		return -1;
	q++;
	while (is_digit(*q))
		q++;
	/* strtod must read exactly that span (not "1.5e3", not hex). */
	errno = 0;
	x = strtod(s, &end);
	if (end != q || errno == ERANGE || !isfinite(x))
		return -1;
	*v = x;
	*p = q;
	return 0;
}

int bench_check_input(const char *buf, size_t len, struct pg_err *err)
{
	if (len > BENCH_MAX_OUTPUT)
		return pg_err_set(err, PG_ETOOBIG, "benchmark output of %zu bytes is over %u",
				  len, BENCH_MAX_OUTPUT);
	if (!buf && len)
		return pg_err_set(err, PG_EINVAL, "benchmark output: no buffer for %zu bytes", len);
	return 0;
}

/* ---- the result container -------------------------------------------------- */

void bench_output_begin(struct bench_output *out)
{
	memset(out, 0, sizeof(*out));
}

void bench_output_release(struct bench_output *out)
{
	if (!out)
		return;
	free(out->samples);
	free(out->slots);
	free(out->error);
	memset(out, 0, sizeof(*out));
}

static uint64_t key_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* The slot of key: the one that holds it, or the free one to put it in.
 * The table is never full (at most half used). */
static size_t *slot_of(const struct bench_output *out, const char *key)
{
	size_t mask = out->nslots - 1, i = (size_t)key_hash(key) & mask;

	while (out->slots[i] && strcmp(out->samples[out->slots[i] - 1].key, key))
		i = (i + 1) & mask;
	return &out->slots[i];
}

static int index_grow(struct bench_output *out, struct pg_err *err)
{
	size_t n = out->nslots ? out->nslots * 2 : 64;
	size_t *old = out->slots;

	out->slots = calloc(n, sizeof(*out->slots));
	if (!out->slots) {
		out->slots = old;
		return pg_err_set(err, PG_ENOMEM, "benchmark results: out of memory");
	}
	out->nslots = n;
	free(old);
	for (size_t k = 0; k < out->n; k++)
		*slot_of(out, out->samples[k].key) = k + 1;
	return 0;
}

int bench_output_add(struct bench_output *out, const char *key, double value,
		     const char *unit, struct pg_err *err)
{
	size_t *slot, kl = strlen(key);

	if (kl >= BENCH_KEY_MAX)
		return pg_err_set(err, PG_EINVAL, "result key '%.40s...' is over %d bytes", key,
				  BENCH_KEY_MAX - 1);
	if ((out->n + 1) * 2 > out->nslots && index_grow(out, err) < 0)
		return -1;
	slot = slot_of(out, key);
	if (*slot)
		return 0;	/* profile.h: the first value is kept */
	if (out->n >= BENCH_MAX_SAMPLES) {
		out->dropped++;
		return 0;
	}
	if (PG_GROW(out->samples, out->alloc, out->n + 1) < 0)
		return pg_err_set(err, PG_ENOMEM, "benchmark results: out of memory");
	memcpy(out->samples[out->n].key, key, kl + 1);
	out->samples[out->n].value = value;
	out->samples[out->n].unit = unit;
	*slot = ++out->n;
	return 0;
}

const struct bench_sample *bench_output_find(const struct bench_output *out, const char *key)
{
	size_t *slot;

	if (!out || !out->nslots || !key)
		return NULL;
	slot = slot_of(out, key);
	return *slot ? &out->samples[*slot - 1] : NULL;
}

/* Copy s[0..n) trimmed and printable to dst (room: cap bytes with NUL);
 * returns the bytes written. */
static size_t clean_copy(char *dst, size_t cap, const char *s, size_t n)
{
	size_t o = 0;

	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	while (o && dst[o - 1] == ' ')	/* the bound may cut before a blank */
		o--;
	dst[o] = '\0';
	return o;
}

int bench_output_error(struct bench_output *out, const char *s, size_t n, struct pg_err *err)
{
	if (out->error)
		return 0;
	out->error = malloc(BENCH_ERROR_MAX);
	if (!out->error)
		return pg_err_set(err, PG_ENOMEM, "benchmark error line: out of memory");
	clean_copy(out->error, BENCH_ERROR_MAX, s, n);
	return 0;
}

int bench_output_error_append(struct bench_output *out, const char *s, size_t n,
			      struct pg_err *err)
{
	size_t have;

	(void)err;	/* the error buffer is BENCH_ERROR_MAX already */
	if (!out->error)
		return 0;
	have = strlen(out->error);
	if (have + 3 >= BENCH_ERROR_MAX)
		return 0;
	memcpy(out->error + have, "; ", 2);
	if (!clean_copy(out->error + have + 2, BENCH_ERROR_MAX - have - 2, s, n))
		out->error[have] = '\0';	/* nothing to add after all */
	return 0;
}

enum bench_eal_error bench_eal_error(const char *s)
{
	if (bench_starts(s, "EAL: Error - exiting with code:"))
		return BENCH_EAL_EXIT;
	if (bench_starts(s, "EAL: FATAL:") || bench_starts(s, "PANIC in "))
		return BENCH_EAL_ERROR;
	/* getopt, as "dpdk-test: unrecognized option '--x'" */
	if (strstr(s, ": unrecognized option '") || strstr(s, ": invalid option -- ") ||
	    strstr(s, ": option requires an argument -- "))
		return BENCH_EAL_ERROR;
	return BENCH_EAL_NONE;
}

/* ---- the golden dump ------------------------------------------------------- */

/* The fewest significant digits that read back as v (NaN: "nan").  -1
 * when they do not fit in cap (never in the dump's 64 bytes: %.17g needs
 * 24 at most), so that a value in a golden file is never cut. */
static int format_value(char *dst, size_t cap, double v)
{
	int w = -1;

	for (int prec = 15; prec <= 17; prec++) {
		w = pg_fmt(dst, cap, "%.*g", prec, v);
		/* more digits do not fit either */
		if (w < 0 || strtod(dst, NULL) == v)
			break;
	}
	return w < 0 ? -1 : 0;
}

int bench_output_dump(const struct bench_output *out, struct pg_buf *b)
{
	if (pg_buf_printf(b,
			  "result_lines %zu\nsamples %zu\ntest_ok %s\ntest_failed %s\n"
			  "test_skipped %s\ntruncated %s\nunkeyed %zu\nmalformed %zu\n"
			  "long_lines %zu\ndropped %zu\nerror %s\n",
			  out->result_lines, out->n, out->test_ok ? "yes" : "no",
			  out->test_failed ? "yes" : "no", out->test_skipped ? "yes" : "no",
			  out->truncated ? "yes" : "no", out->unkeyed, out->malformed,
			  out->long_lines, out->dropped, out->error ? out->error : "-") < 0)
		return -1;
	for (size_t i = 0; i < out->n; i++) {
		char v[64];

		if (format_value(v, sizeof(v), out->samples[i].value) < 0 ||
		    pg_buf_printf(b, "%s %s %s\n", out->samples[i].key, v,
				  out->samples[i].unit) < 0)
			return -1;
	}
	return 0;
}
