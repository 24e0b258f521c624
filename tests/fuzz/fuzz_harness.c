/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the mempool harness (agent/harness.h): the agent
 * rewrites app/test/test_mempool_perf.c of a patched tree, a file a
 * stranger may have written, in its own process.  Any bytes must give a
 * rewrite, a "not recognised" or an error, never a sanitizer report; and a
 * rewrite must keep its promises: the result carries the markers, a second
 * rewrite gives it back byte for byte, and restoring it gives back the
 * input (when the input was upstream text, without markers).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_buf out = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE);
	struct pg_buf again = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE);
	struct pg_buf back = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE);
	struct pg_err err = PG_ERR_INIT;
	struct harness_subset s;
	const char *src = (const char *)data;
	bool was_applied = harness_mempool_is_applied(src, size);
	int rc;

	harness_subset_default(&s);
	rc = harness_mempool_rewrite(src, size, &s, &out, &err);
	if (rc < -1 || rc > 1)
		abort();
	if (rc == 0) {
		if (!harness_mempool_is_applied(out.data ? out.data : "", out.len))
			abort();
		if (harness_mempool_rewrite(out.data ? out.data : "", out.len, &s, &again,
					    &err) != 0 ||
		    again.len != out.len || (out.len && memcmp(again.data, out.data, out.len) != 0))
			abort();
		if (harness_mempool_restore(out.data ? out.data : "", out.len, &back, &err) != 0)
			abort();
		if (!was_applied &&
		    (back.len != size || (size && memcmp(back.data, data, size) != 0)))
			abort();
	}
	pg_buf_release(&out);
	pg_buf_release(&again);
	pg_buf_release(&back);
	return 0;
}
