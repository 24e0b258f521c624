/* SPDX-License-Identifier: MIT */
/* Agent and admin tokens (see api_auth.h). */
#include "api_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "buf.h"
#include "fsutil.h"
#include "log.h"
#include "token.h"

#define API_ADMIN_FILE_MAX 4096

static void api_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

int api_token_new(char out[API_TOKEN_HEX + 1], struct pg_err *err)
{
	unsigned char raw[API_TOKEN_BYTES];
	size_t got = 0;

	out[0] = '\0';
	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return pg_err_errno(err, "getrandom");
		}
		got += (size_t)n;
	}
	api_hex(raw, sizeof(raw), out);
	OPENSSL_cleanse(raw, sizeof(raw));
	return 0;
}

static int api_sha256(const void *data, size_t len, unsigned char out[API_SHA256_BYTES],
		      struct pg_err *err)
{
	unsigned int n = 0;

	if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1 || n != API_SHA256_BYTES)
		return pg_err_set(err, PG_EIO, "SHA-256: OpenSSL failed");
	return 0;
}

int api_sha256_hex(const void *data, size_t len, char out[API_SHA256_HEX + 1],
		   struct pg_err *err)
{
	unsigned char d[API_SHA256_BYTES];

	out[0] = '\0';
	if (api_sha256(data, len, d, err) < 0)
		return -1;
	api_hex(d, sizeof(d), out);
	return 0;
}

int api_bearer(const char *header, const char **token, size_t *len)
{
	const char *p;
	size_t n;

	if (!header)
		return 0;
	if (strncasecmp(header, "Bearer ", 7) != 0)
		return -1;
	p = header + 7;
	while (*p == ' ')
		p++;
	n = strnlen(p, API_BEARER_MAX + 1);
	/* libmicrohttpd drops trailing white space of header values. */
	if (n == 0 || n > API_BEARER_MAX)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (p[i] <= ' ' || p[i] > '~')
			return -1;
	*token = p;
	*len = n;
	return 1;
}

int api_admin_load(struct api_admin *admin, const char *path, struct pg_err *err)
{
	char token[API_ADMIN_FILE_MAX];
	int rc = -1;

	memset(admin, 0, sizeof(*admin));
	if (pg_token_read(path, "admin_token_file", API_ADMIN_TOKEN_MIN, PG_TOKEN_WARN_SHARED,
			  token, sizeof(token), err) < 0 ||
	    api_sha256(token, strlen(token), admin->digest, err) < 0)
		goto out;
	admin->set = true;
	rc = 0;
out:
	explicit_bzero(token, sizeof(token));
	return rc;
}

bool api_admin_check(const struct api_admin *admin, const char *token, size_t len)
{
	unsigned char d[API_SHA256_BYTES];

	if (!admin->set || !token)
		return false;
	if (api_sha256(token, len, d, NULL) < 0)
		return false;
	return CRYPTO_memcmp(d, admin->digest, sizeof(d)) == 0;
}
