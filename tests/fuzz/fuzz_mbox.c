/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for pg_mbox_split(): the first byte picks mboxo or
 * mboxrd (and whether to stop early); the split must not crash, must hand
 * over messages that fit in the input (unescaping only shrinks them), and
 * must count what it handed over.  Each message then goes through
 * pg_mail_parse(), as ingest does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mail.h"
#include "mbox.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct state {
	const char *buf;
	size_t len;
	enum pg_mbox_format fmt;
	size_t calls;
	size_t total;
	size_t stop_after;	/* 0: never */
};

static int on_message(const char *msg, size_t len, void *arg)
{
	struct state *st = arg;
	struct pg_err err = PG_ERR_INIT;
	struct pg_mail m;

	st->calls++;
	if (len > st->len)
		abort();
	/* mboxo never copies: the message is a slice of the input */
	if (st->fmt == PG_MBOX_MBOXO && len &&
	    (msg < st->buf || msg + len > st->buf + st->len))
		abort();
	st->total += len;
	if (st->total > st->len)
		abort();
	if (pg_mail_parse(&m, msg, len, &err) == 0 && !*m.message_id)
		abort();
	pg_mail_free(&m);
	if (st->stop_after && st->calls == st->stop_after)
		return (st->calls & 1) ? 1 : -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state st = { 0 };
	struct pg_err err = PG_ERR_INIT;
	ssize_t n;

	if (!size)
		return 0;
	st.fmt = (data[0] & 1) ? PG_MBOX_MBOXRD : PG_MBOX_MBOXO;
	st.stop_after = (data[0] >> 1) & 3;
	st.buf = (const char *)data + 1;
	st.len = size - 1;
	n = pg_mbox_split(st.buf, st.len, st.fmt, on_message, &st, &err);
	if (n >= 0 && (size_t)n != st.calls)
		abort();
	if (n < 0 && (err.code != PG_ECONFLICT || !st.stop_after || st.calls != st.stop_after))
		abort();
	(void)pg_mbox_is_from_line(st.buf, st.len);
	return 0;
}
