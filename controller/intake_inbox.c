/* SPDX-License-Identifier: MIT */
/*
 * Intake from a public-inbox archive: walk each epoch from its cursor and
 * hand every message to intake_message(), committing every `batch`
 * messages together with the cursor (scope "epoch:N", position the last
 * commit consumed).  A crash between two commits replays at most one
 * batch, which the store's uniqueness turns into duplicates, not copies.
 */
#include "intake_src.h"

#include <string.h>

#include "fmt.h"
#include "inbox.h"
#include "log.h"

struct inbox_pass {
	struct intake *in;
	int64_t source_id;
	int batch;
	int pending;		/* messages in the open transaction */
	bool in_tx;
	char scope[32];
	const volatile sig_atomic_t *stop;
};

static int inbox_flush(struct inbox_pass *p, const char *oid, struct pg_err *err)
{
	if (!p->in_tx)
		return 0;
	if (intake_cursor_set(p->in, p->source_id, p->scope, oid, err) < 0 ||
	    store_commit(p->in->st, err) < 0)
		return -1;
	p->in_tx = false;
	p->pending = 0;
	return 0;
}

static int inbox_on_message(const struct pg_inbox_msg *msg, void *arg, struct pg_err *err)
{
	struct inbox_pass *p = arg;
	struct intake_origin from;
	char pos[PG_INBOX_OID_HEXSZ + 16];

	if (!p->in_tx) {
		if (store_begin(p->in->st, err) < 0)
			return -1;
		p->in_tx = true;
	}
	if (pg_fmt(pos, sizeof(pos), "%d:%s", msg->epoch, msg->oid) < 0)
		return pg_err_set(err, PG_EINVAL, "epoch %d, message %.64s: position too long",
				  msg->epoch, msg->oid);
	memset(&from, 0, sizeof(from));
	from.source_id = p->source_id;
	from.position = pos;
	switch (msg->kind) {
	case PG_INBOX_MESSAGE:
		if (intake_message(p->in, &from, msg->data, msg->size, err) < 0)
			return -1;
		break;
	case PG_INBOX_TOO_BIG:
		/* Never loaded: intake rejects it by its size alone. */
		if (intake_message(p->in, &from, NULL, msg->size, err) < 0)
			return -1;
		break;
	case PG_INBOX_DELETE:
		/* The archive withdrew it (spam, purge); what we derived from
		 * it stays: a check already posted is not taken back. */
		p->in->stats.deleted++;
		pg_log_info("intake", "archive deleted the message at %s", pos);
		break;
	case PG_INBOX_NONE:
		break;
	}
	if (++p->pending >= p->batch) {
		if (inbox_flush(p, msg->oid, err) < 0)
			return -1;
		if (p->stop && *p->stop)
			return 1;
	}
	return 0;
}

int intake_inbox(struct intake *in, const struct intake_src *src,
		 const volatile sig_atomic_t *stop, struct pg_err *err)
{
	struct pg_inbox_walk_result res;
	struct inbox_pass p;
	struct pg_inbox *ib = NULL;
	const int *epochs;
	size_t n_epochs;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	p.in = in;
	p.batch = src->batch > 0 ? src->batch : 256;
	p.stop = stop;
	if (intake_source(in, src->name, "public-inbox", src->location, &p.source_id, err) < 0)
		return -1;
	if (pg_inbox_open(&ib, src->location, src->mirror_dir, err) < 0)
		goto out;
	pg_inbox_set_max_size(ib, in->max_message);
	if (pg_inbox_fetch(ib, err) < 0 || pg_inbox_epochs(ib, &epochs, &n_epochs, err) < 0)
		goto out;
	for (size_t i = 0; i < n_epochs && !(stop && *stop); i++) {
		char cursor[PG_INBOX_OID_HEXSZ + 1];

		if (pg_fmt(p.scope, sizeof(p.scope), "epoch:%d", epochs[i]) < 0) {
			pg_err_set(err, PG_EINVAL, "epoch %d: cursor scope too long", epochs[i]);
			goto out;
		}
		if (intake_cursor_get(in, p.source_id, p.scope, cursor, sizeof(cursor), err) < 0)
			goto out;
		if (pg_inbox_walk(ib, epochs[i], cursor, inbox_on_message, &p, &res, err) < 0)
			goto out;
		if (res.rewritten)
			pg_log_warn("intake", "source %s: epoch %d was rewritten (purge): rescanned",
				    src->name, epochs[i]);
		if (inbox_flush(&p, res.last_oid, err) < 0)
			goto out;
		if (res.stopped)
			break;
	}
	rc = 0;
out:
	if (p.in_tx)
		store_rollback(in->st);
	if (rc < 0)
		pg_err_prefix(err, "source %s", src->name);
	pg_inbox_close(ib);
	return rc;
}
