/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for pg_apply_path_ok() (patches/apply_paths.h): any
 * bytes must be judged without a sanitizer report, and what it accepts
 * must keep the rules it promises, checked here the slow, obvious way:
 * not empty, not absolute, no control byte, no empty, "." or ".."
 * component, no component that is ".git" in any case.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "apply_paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *why = NULL;
	size_t start = 0;

	if (!pg_apply_path_ok(size ? p : NULL, size, &why)) {
		if (!why || !*why)
			abort();	/* a refusal always says why */
		return 0;
	}
	if (size == 0 || size > PG_APPLY_PATH_MAX || p[0] == '/')
		abort();
	for (size_t i = 0; i <= size; i++) {
		size_t n;

		if (i < size) {
			if (data[i] < 0x20 || data[i] == 0x7f)
				abort();
			if (data[i] != '/')
				continue;
		}
		n = i - start;
		if (n == 0 || (n == 1 && p[start] == '.') ||
		    (n == 2 && p[start] == '.' && p[start + 1] == '.') ||
		    (n == 4 && strncasecmp(p + start, ".git", 4) == 0) ||
		    (n == 5 && strncasecmp(p + start, "git~1", 5) == 0))
			abort();
		start = i + 1;
	}
	/* Accepted as a whole, accepted in every prefix that ends before a
	 * '/': the symlink check walks the prefixes. */
	for (size_t i = 1; i < size; i++)
		if (p[i] == '/' && !pg_apply_path_ok(p, i, NULL))
			abort();
	return 0;
}
