/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for pg_subject_parse(): any bytes (cut at the first NUL,
 * as a C string is) must parse without a sanitizer report, and the result
 * must keep the invariants subject.h promises.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "subject.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_subject s;
	char key[PG_SUBJECT_TITLE_MAX];
	char *text = malloc(size + 1);
	size_t i;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (pg_subject_parse(text, &s) != 0)
		abort();
	if (s.version < 1 || s.ntags > PG_SUBJECT_TAGS_MAX || s.nstable > PG_SUBJECT_STABLE_MAX)
		abort();
	if (s.has_counter && (s.total < 1 || s.number > s.total || !s.is_patch))
		abort();
	if (!s.has_counter && s.is_patch && (s.number != 1 || s.total != 1))
		abort();
	if (s.is_cover != (s.has_counter && s.number == 0))
		abort();
	if (memchr(s.title, '\0', sizeof(s.title)) == NULL ||
	    memchr(s.key, '\0', sizeof(s.key)) == NULL)
		abort();
	for (i = 0; s.title[i]; i++)
		if ((unsigned char)s.title[i] < ' ' || s.title[i] == 0x7f)
			abort();
	if (s.title[0] == ' ' || (i && s.title[i - 1] == ' '))
		abort();
	for (i = 0; s.key[i]; i++)
		if (s.key[i] >= 'A' && s.key[i] <= 'Z')
			abort();
	for (i = 0; i < s.ntags; i++)
		if (!s.tags[i][0] || strlen(s.tags[i]) >= PG_SUBJECT_TAG_MAX)
			abort();
	/* The key is a fixed point: keying it again changes nothing. */
	if (pg_subject_series_key(s.key, key, sizeof(key)) < 0 || strcmp(key, s.key))
		abort();
	if (pg_subject_dump(&s, &b) != 0)
		abort();
	pg_buf_release(&b);
	free(text);
	return 0;
}
