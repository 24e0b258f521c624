/* SPDX-License-Identifier: MIT */
#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"

int pg_err_set(struct pg_err *err, enum pg_errcode code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	pg_vfmt_cut(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int pg_err_errno(struct pg_err *err, const char *fmt, ...)
{
	int saved = errno;
	size_t len;
	va_list ap;

	if (!err)
		return -1;
	err->code = PG_EIO;
	va_start(ap, fmt);
	pg_vfmt_cut(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	pg_fmt_cut(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(saved));
	errno = saved;
	return -1;
}

void pg_err_prefix(struct pg_err *err, const char *fmt, ...)
{
	char old[PG_ERR_MSG_MAX];
	size_t len;
	va_list ap;

	if (!err)
		return;
	memcpy(old, err->msg, sizeof(old));
	va_start(ap, fmt);
	pg_vfmt_cut(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	pg_fmt_cut(err->msg + len, sizeof(err->msg) - len, ": %s", old);
}

void pg_err_clear(struct pg_err *err)
{
	if (!err)
		return;
	err->code = PG_OK;
	err->msg[0] = '\0';
}

const char *pg_errcode_name(enum pg_errcode code)
{
	switch (code) {
	case PG_OK: return "ok";
	case PG_EINVAL: return "invalid";
	case PG_ENOTFOUND: return "not-found";
	case PG_EIO: return "io";
	case PG_ETIMEOUT: return "timeout";
	case PG_ETOOBIG: return "too-big";
	case PG_ENOMEM: return "no-memory";
	case PG_ECONFLICT: return "conflict";
	case PG_EDB: return "store";
	}
	return "unknown";
}
