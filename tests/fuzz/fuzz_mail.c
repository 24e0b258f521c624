/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for pg_mail_parse(): any bytes must parse or be
 * rejected without a sanitizer report, and a parsed mail must keep the
 * promises of mail.h (non-NULL strings, lengths that match, a
 * Message-ID).  The first byte is not mail: it picks tight bounds half
 * of the time, so that the bound checks are fuzzed too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "mail.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct pg_mail *m)
{
	const char *strs[] = {
		m->message_id, m->in_reply_to, m->subject, m->from_name, m->from_addr,
		m->author_name, m->author_addr, m->inbody_subject, m->list_id,
	};
	struct pg_buf out = PG_BUF_INIT(PG_BUF_NOLIMIT);

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (!strs[i])
			abort();
	if (!*m->message_id || !m->body || !m->message || !m->notes || !m->diff)
		abort();
	if (m->body[m->body_len] || m->message[m->message_len] || m->notes[m->notes_len] ||
	    m->diff[m->diff_len])
		abort();
	if (m->has_patch != (m->diff_len > 0))
		abort();
	if (m->message_len && m->message[m->message_len - 1] != '\n')
		abort();
	/* one-line fields stay on one line */
	if (strchr(m->subject, '\n') || strchr(m->from_name, '\n'))
		abort();
	for (size_t i = 0; i < m->nreferences; i++)
		if (!*m->references[i])
			abort();
	for (size_t i = 0; i < m->nfiles; i++)
		if (!*m->files[i])
			abort();
	for (size_t i = 0; i < m->nheaders; i++)
		if (pg_mail_header(m, m->headers[i].name) == NULL)
			abort();
	if (pg_mail_dump(m, &out) < 0)
		abort();
	pg_buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_mail_opts opts = PG_MAIL_OPTS_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_mail m;

	if (!size)
		return 0;
	if (data[0] & 1) {
		opts.max_size = 64 * 1024;
		opts.max_header_bytes = 512;
		opts.max_headers = 8;
	}
	if (pg_mail_parse_opts(&m, (const char *)data + 1, size - 1, &opts, &err) == 0) {
		check(&m);
	} else {
		if (err.code != PG_EINVAL && err.code != PG_ETOOBIG)
			abort();
		if (m.message_id || m.nheaders)
			abort();
	}
	pg_mail_free(&m);
	return 0;
}
