/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for pg_mail_decode_header() (patches/mail.h), the
 * RFC 2047 decoder of every header a stranger's mail carries (its
 * charsets, base64 and quoted-printable words, the gaps between them).
 * The first byte picks the output bound (none, or a small one, so that
 * the E2BIG path is fuzzed too).  Any bytes must decode without a
 * sanitizer report; the output must have no NUL and no control byte
 * (they become spaces or are dropped), must keep within the bound (and
 * be empty, as it was, after a failure), and a
 * value without "=?" must come back as it was, controls aside.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "mail.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data + 1;
	size_t len, cap;
	struct pg_buf out;
	unsigned int flags = 0;
	bool plain = true;
	int rc;

	if (!size)
		return 0;
	len = size - 1;
	cap = data[0] & 1 ? (size_t)(data[0] >> 1) : PG_BUF_NOLIMIT;
	out = (struct pg_buf)PG_BUF_INIT(cap);
	rc = pg_mail_decode_header(in, len, &out, &flags);
	if (rc != 0 && (rc != -1 || errno != E2BIG || cap == PG_BUF_NOLIMIT))
		abort();
	if (out.len > cap || (rc != 0 && out.len != 0))
		abort();	/* a failure leaves out as it was */
	for (size_t i = 0; i < out.len; i++) {
		unsigned char c = (unsigned char)out.data[i];

		if (c < 0x20 || c == 0x7f)
			abort();
	}
	for (size_t i = 0; i + 1 < len; i++)
		if (in[i] == '=' && in[i + 1] == '?')
			plain = false;
	if (rc == 0 && plain) {
		size_t j = 0;

		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)in[i];

			if (c == 0)
				continue;
			if (j >= out.len || out.data[j] != (c < 0x20 || c == 0x7f ? ' ' : (char)c))
				abort();
			j++;
		}
		if (j != out.len)
			abort();
	}
	pg_buf_release(&out);
	return 0;
}
