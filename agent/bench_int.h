/* SPDX-License-Identifier: MIT */
#ifndef PG_BENCH_INT_H
#define PG_BENCH_INT_H

/*
 * What bench_mempool.c and bench_testpmd.c share (bench_parse.c): the
 * line reader, strict number fields, the result container and the error
 * lines that any DPDK program prints.  Not a public interface.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_parse.h"
#include "err.h"

/* One cleaned line (see bench_parse.h, "Reading"). */
struct bench_line {
	char text[BENCH_LINE_MAX + 1];	/* NUL-terminated, no NULs inside */
	size_t len;
	bool complete;			/* ended with an end of line */
	bool cut;			/* longer than BENCH_LINE_MAX */
};

/* Read the line at *pos of buf[0..len) into *line and move *pos past it.
 * Returns false at the end of buf. */
bool bench_line_next(const char *buf, size_t len, size_t *pos, struct bench_line *line);

/* The line without leading and trailing blanks, as a pointer into
 * line->text (trailing blanks cut off in place) and *n its length. */
const char *bench_line_trim(struct bench_line *line, size_t *n);

/* True when s starts with the NUL-terminated prefix p. */
bool bench_starts(const char *s, const char *p);

/* Skip ' ' at *p; returns how many were skipped. */
size_t bench_skip_blanks(const char **p);

/* A decimal unsigned number at *p: one or more digits, nothing else, at
 * most max.  Moves *p past it.  Returns 0, or -1 (nothing moved) when
 * there is no digit or the value is over max. */
int bench_uint(const char **p, uint64_t max, uint64_t *v);

/* A decimal fixed-point number at *p: digits '.' digits (as printf's %.2f
 * prints a finite value).  Returns 0, or -1. */
int bench_fixed(const char **p, double *v);

/* Prepare *out for a parse (it must hold nothing). */
void bench_output_begin(struct bench_output *out);

/* Add a sample; a key already there keeps its first value.  Returns 0
 * (added, kept or dropped at BENCH_MAX_SAMPLES), or -1 with err set
 * (PG_ENOMEM, or PG_EINVAL for a key over BENCH_KEY_MAX). */
int bench_output_add(struct bench_output *out, const char *key, double value,
		     const char *unit, struct pg_err *err);

/* Record s[0..n) as the error unless one is there already: trimmed,
 * non-printable bytes as '?', cut to BENCH_ERROR_MAX - 1.  Returns 0, or
 * -1 (PG_ENOMEM). */
int bench_output_error(struct bench_output *out, const char *s, size_t n, struct pg_err *err);

/* Append "; " and s[0..n) (trimmed, cleaned, bounded) to the error set
 * last.  Returns 0 or -1 (PG_ENOMEM). */
int bench_output_error_append(struct bench_output *out, const char *s, size_t n,
			      struct pg_err *err);

/* Fatal lines of the EAL and of getopt that any DPDK program prints. */
enum bench_eal_error {
	BENCH_EAL_NONE,
	BENCH_EAL_ERROR,	/* an error line */
	BENCH_EAL_EXIT,		/* "EAL: Error - exiting ...": a "Cause:" follows */
};
enum bench_eal_error bench_eal_error(const char *s);

/* Check buf and len for a parse; 0 or -1 with err set. */
int bench_check_input(const char *buf, size_t len, struct pg_err *err);

#endif
