/* SPDX-License-Identifier: MIT */
/* Base64 by OpenSSL's EVP block coder, with the checks it leaves out. */
#include "base64.h"

#include <stdbool.h>

#include <openssl/evp.h>

/* EVP_EncodeBlock takes an int length: encode in slices of this many
 * bytes (a multiple of 3, so that no padding lands in the middle). */
#define PG_B64_SLICE ((size_t)3 * 1024 * 1024)

int pg_base64_encode(const void *data, size_t len, struct pg_buf *b, struct pg_err *err)
{
	const unsigned char *p = data;

	while (len) {
		size_t n = len < PG_B64_SLICE ? len : PG_B64_SLICE, out = (n + 2) / 3 * 4;
		int k;

		if (pg_buf_grow(b, out) < 0)
			return pg_buf_err(b, err, "base64");
		k = EVP_EncodeBlock((unsigned char *)b->data + b->len, p, (int)n);
		if (k < 0 || (size_t)k != out)
			return pg_err_set(err, PG_EINVAL, "base64: the encoder failed");
		b->len += out;
		b->data[b->len] = '\0';
		p += n;
		len -= n;
	}
	if (!b->data && pg_buf_add(b, "", 0) < 0)
		return pg_buf_err(b, err, "base64");
	return 0;
}

static bool pg_b64_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

int pg_base64_decode(const char *text, size_t len, struct pg_buf *b, struct pg_err *err)
{
	const unsigned char *t = (const unsigned char *)text;
	size_t pad = 0;

	if (len % 4)
		return pg_err_set(err, PG_EINVAL, "base64: %zu characters, not a multiple of 4",
				  len);
	if (len && t[len - 1] == '=')
		pad = len >= 2 && t[len - 2] == '=' ? 2 : 1;
	for (size_t i = 0; i < len - pad; i++)
		if (!pg_b64_char(t[i]))
			return pg_err_set(err, PG_EINVAL, "base64: character %zu is not in the "
					  "alphabet", i);
	/* Decoded in slices of whole quads, each under INT_MAX. */
	for (size_t off = 0; off < len;) {
		size_t n = len - off < PG_B64_SLICE / 3 * 4 ? len - off : PG_B64_SLICE / 3 * 4;
		size_t out = n / 4 * 3, cut = off + n == len ? pad : 0;
		int k;

		if (pg_buf_grow(b, out) < 0)
			return pg_buf_err(b, err, "base64");
		k = EVP_DecodeBlock((unsigned char *)b->data + b->len, t + off, (int)n);
		if (k < 0 || (size_t)k != out)
			return pg_err_set(err, PG_EINVAL, "base64: not valid at character %zu", off);
		b->len += out - cut;
		b->data[b->len] = '\0';
		off += n;
	}
	if (!b->data && pg_buf_add(b, "", 0) < 0)
		return pg_buf_err(b, err, "base64");
	return 0;
}
