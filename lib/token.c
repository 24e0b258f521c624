/* SPDX-License-Identifier: MIT */
#include "token.h"

#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "fsutil.h"
#include "log.h"

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

void pg_secret_warn_shared(const char *what, const char *path)
{
	struct stat sb;

	if (stat(path, &sb) == 0 && (sb.st_mode & 077))
		pg_log_warn(what, "%s is readable by others (mode %03o): chmod 600 it", path,
			    (unsigned int)(sb.st_mode & 0777));
}

int pg_token_read(const char *path, const char *what, size_t min_len, unsigned int flags,
		  char *out, size_t outlen, struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(outlen * 4);
	const char *s, *e;
	size_t n;
	int rc = -1;

	if (outlen)
		out[0] = '\0';
	if (pg_read_file(path, &b, err) < 0) {
		pg_err_prefix(err, "%s", what);
		goto out;
	}
	s = pg_buf_str(&b);
	while (is_blank(*s))
		s++;
	e = s;
	while (*e && *e != '\n' && *e != '\r')
		e++;
	while (e > s && is_blank(e[-1]))
		e--;
	n = (size_t)(e - s);
	if (n == 0) {
		pg_err_set(err, PG_EINVAL, "%s '%s': empty", what, path);
		goto out;
	}
	if (n < min_len || n >= outlen) {
		pg_err_set(err, PG_EINVAL, "%s '%s': the token (its first line) must be at %s %zu "
			   "characters", what, path, n < min_len ? "least" : "most",
			   n < min_len ? min_len : outlen - 1);
		goto out;
	}
	for (const char *p = s; p < e; p++)
		if (*p <= ' ' || *p > '~') {
			pg_err_set(err, PG_EINVAL, "%s '%s': the token must be printable ASCII "
				   "without spaces", what, path);
			goto out;
		}
	memcpy(out, s, n);
	out[n] = '\0';
	if (flags & PG_TOKEN_WARN_SHARED)
		pg_secret_warn_shared(what, path);
	rc = 0;
out:
	if (b.data)
		explicit_bzero(b.data, b.alloc);
	pg_buf_release(&b);
	return rc;
}
