/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for pg_trailers_parse(): any bytes must parse (or fail
 * cleanly with an error and an empty result) without a sanitizer report,
 * and the lists must stay within their bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "trailers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ours[] = { "iol-unit-amd64-testing", "a", "main" };
	struct pg_trailers t = PG_TRAILERS_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_recheck mine;
	size_t i;

	if (pg_trailers_parse((const char *)data, size, &t, &err) < 0) {
		if (err.code == PG_OK || t.ndeps || t.npeople || t.nprereq || t.deps)
			abort();
		return 0;
	}
	if (t.ndeps > PG_TRAILERS_DEPS_MAX || t.npeople > PG_TRAILERS_PEOPLE_MAX ||
	    t.nprereq > PG_TRAILERS_PREREQ_MAX || t.recheck.ncontexts > PG_TRAILERS_CONTEXTS_MAX)
		abort();
	if (t.base_commit[0] && strlen(t.base_commit) != 40 && strlen(t.base_commit) != 64)
		abort();
	for (i = 0; i < t.ndeps; i++)
		if ((t.deps[i].kind == PG_DEP_MSGID) != (t.deps[i].msgid[0] != '\0'))
			abort();
	if (pg_trailers_recheck_ours(&t, ours, 3, &mine) > t.recheck.ncontexts)
		abort();
	if (pg_trailers_dump(&t, &b) != 0)
		abort();
	pg_buf_release(&b);
	pg_trailers_release(&t);
	return 0;
}
