/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for lib/base64.c, which decodes the log chunks and
 * mboxes of run-one's line protocol: any bytes must decode or be refused
 * without a sanitizer report; any bytes encoded must decode back to
 * themselves, in a length of 4 per 3 rounded up; text that decodes must
 * be whole base64 (a multiple of 4 of the alphabet, padding only at the
 * end) and give back 3 bytes per 4 less the padding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int alpha(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_buf enc = PG_BUF_INIT(PG_BUF_NOLIMIT), dec = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf again = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_err err = PG_ERR_INIT;
	size_t pad = 0;

	if (pg_base64_encode(data, size, &enc, &err) != 0 || enc.len != (size + 2) / 3 * 4)
		abort();
	if (pg_base64_decode(enc.len ? enc.data : "", enc.len, &again, &err) != 0 ||
	    again.len != size || (size && memcmp(again.data, data, size) != 0))
		abort();
	if (pg_base64_decode(size ? (const char *)data : "", size, &dec, &err) == 0) {
		if (size % 4)
			abort();
		while (pad < 2 && pad < size && data[size - 1 - pad] == '=')
			pad++;
		for (size_t i = 0; i < size - pad; i++)
			if (!alpha(data[i]))
				abort();
		if (dec.len != size / 4 * 3 - pad)
			abort();
	} else if (err.code != PG_EINVAL || !err.msg[0]) {
		abort();
	}
	pg_buf_release(&enc);
	pg_buf_release(&dec);
	pg_buf_release(&again);
	return 0;
}
