/* SPDX-License-Identifier: MIT */
/*
 * Golden-file tests (test_mail.c, test_report_mail.c, test_bench_parse.c):
 * every input DIR/NAME.SUFFIX goes through a test's own function, whose
 * text must equal DIR/NAME.ok byte for byte.  PG_UPDATE_GOLDEN=1 writes
 * the .ok files instead of comparing; read every changed one against its
 * input before keeping it.  A header, not a .c file, because the Makefile
 * links each tests/unit/test_*.c alone.  Failures are cmocka's: include
 * <cmocka.h> first.
 */
#ifndef PG_GOLDENFX_H
#define PG_GOLDENFX_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* The whole file at path, NUL-terminated, its length in *len (when len is
 * not NULL); NULL when it cannot be opened.  The caller frees it. */
static inline char *gold_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char chunk[65536];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(pg_buf_add(&b, chunk, n), 0);
	assert_false(ferror(f));	/* a short read would pass for the whole file */
	fclose(f);
	assert_int_equal(pg_buf_grow(&b, 0), 0);
	return pg_buf_detach(&b, len);
}

/* What a test makes of one input: the golden text, malloc'ed. */
typedef char *gold_text_fn(const char *in, size_t len, void *ctx);

/* For each file DIR/NAME.SUFFIX (suffix with its dot), text(input, its
 * length, ctx) compared with DIR/NAME.ok, or written there under
 * PG_UPDATE_GOLDEN=1.  Returns how many inputs there were. */
static inline int gold_dir(const char *dir, const char *suffix, gold_text_fn *text, void *ctx)
{
	const char *update = getenv("PG_UPDATE_GOLDEN");
	size_t sl = strlen(suffix);
	DIR *d = opendir(dir);
	struct dirent *de;
	int seen = 0;

	if (!d)
		fail_msg("cannot open %s", dir);
	while ((de = readdir(d))) {
		size_t nl = strlen(de->d_name), len;
		char path[512], okpath[512];
		char *in, *got, *want;

		if (nl <= sl || strcmp(de->d_name + nl - sl, suffix))
			continue;
		assert_true(snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
			    (int)sizeof(path));
		assert_true(snprintf(okpath, sizeof(okpath), "%s/%.*s.ok", dir, (int)(nl - sl),
				     de->d_name) < (int)sizeof(okpath));
		in = gold_read_file(path, &len);
		if (!in)
			fail_msg("cannot read %s", path);
		got = text(in, len, ctx);
		if (update && *update == '1') {
			FILE *f = fopen(okpath, "wb");

			assert_non_null(f);
			assert_true(fputs(got, f) >= 0);
			assert_int_equal(fclose(f), 0);
		} else {
			want = gold_read_file(okpath, NULL);
			if (!want)
				fail_msg("%s: no golden file %s (PG_UPDATE_GOLDEN=1 writes it)", path,
					 okpath);
			if (strcmp(got, want)) {
				print_error("%s: output differs from %s:\n%s", path, okpath, got);
				fail();
			}
			free(want);
		}
		free(got);
		free(in);
		seen++;
	}
	closedir(d);
	return seen;
}

#endif
