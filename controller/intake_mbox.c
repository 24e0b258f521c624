/* SPDX-License-Identifier: MIT */
/*
 * Intake from an mbox file (`perfgate-controller ingest --mbox FILE`):
 * split it as git mailsplit does and take each message, committing every
 * `batch` messages.  A message's position is its ordinal in the file and
 * a digest of its text, so ingesting the same file again (or the file with
 * more messages appended) stores each message once, while a file rewritten
 * in place with other mails (a script reusing one path) has them taken as
 * the new mails they are, not dropped as duplicates of the old ones.
 */
#include "intake_src.h"

#include <string.h>

#include "api_auth.h"
#include "buf.h"
#include "fmt.h"
#include "fsutil.h"
#include "log.h"
#include "mbox.h"

/* The largest mbox file read in one go. */
#define MBOX_FILE_MAX ((size_t)2 << 30)

struct mbox_pass {
	struct intake *in;
	int64_t source_id;
	int batch;
	int pending;
	bool in_tx;
	size_t index;
	const volatile sig_atomic_t *stop;
	struct pg_err *err;
	int failed;
};

static int mbox_on_message(const char *msg, size_t len, void *arg)
{
	struct mbox_pass *p = arg;
	struct intake_origin from;
	char pos[48], digest[API_SHA256_HEX + 1];

	if (!p->in_tx) {
		if (store_begin(p->in->st, p->err) < 0)
			goto fail;
		p->in_tx = true;
	}
	if (api_sha256_hex(msg, len, digest, p->err) < 0)
		goto fail;
	/* 16 hex digits: the ordinal already separates a file's mails. */
	if (pg_fmt(pos, sizeof(pos), "msg:%zu:%.16s", p->index++, digest) < 0) {
		pg_err_set(p->err, PG_EINVAL, "mail %zu: position too long", p->index - 1);
		goto fail;
	}
	memset(&from, 0, sizeof(from));
	from.source_id = p->source_id;
	from.position = pos;
	if (intake_message(p->in, &from, msg, len, p->err) < 0)
		goto fail;
	if (++p->pending >= p->batch) {
		if (store_commit(p->in->st, p->err) < 0)
			goto fail;
		p->in_tx = false;
		p->pending = 0;
		if (p->stop && *p->stop)
			return 1;
	}
	return 0;
fail:
	p->failed = 1;
	return -1;
}

int intake_mbox(struct intake *in, const struct intake_src *src,
		const volatile sig_atomic_t *stop, struct pg_err *err)
{
	struct pg_buf file = PG_BUF_INIT(MBOX_FILE_MAX);
	struct mbox_pass p;
	enum pg_mbox_format fmt;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	p.in = in;
	p.batch = src->batch > 0 ? src->batch : 256;
	p.stop = stop;
	p.err = err;
	if (intake_source(in, src->name, "mbox", src->location, &p.source_id, err) < 0 ||
	    pg_read_file(src->location, &file, err) < 0)
		goto out;
	/* public-inbox and `git format-patch --pretty=mboxrd` say so on
	 * their separator lines; everything else is left as written. */
	fmt = strncmp(pg_buf_str(&file), "From mboxrd@z ", 14) == 0 ? PG_MBOX_MBOXRD
								   : PG_MBOX_MBOXO;
	if (pg_mbox_split(pg_buf_str(&file), file.len, fmt, mbox_on_message, &p, err) < 0) {
		if (!p.failed)
			pg_err_prefix(err, "'%s'", src->location);
		goto out;
	}
	if (p.in_tx) {
		if (store_commit(in->st, err) < 0)
			goto out;
		p.in_tx = false;
	}
	rc = 0;
out:
	if (p.in_tx)
		store_rollback(in->st);
	pg_buf_release(&file);
	return rc;
}
