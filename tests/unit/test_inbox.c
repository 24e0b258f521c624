/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for patches/inbox.c against real public-inbox archives: each
 * test builds its own with Debian's public-inbox tools through
 * tests/inbox/make-inbox.sh in a temporary directory (mails made by git
 * format-patch once per run).  Remote fetching over HTTP is covered by
 * tests/integration/t_inbox.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "buf.h"
#include "err.h"
#include "gitutil.h"
#include "inbox.h"
#include "proc.h"

#define MAKE_INBOX "tests/inbox/make-inbox.sh"
#define MAX_SEEN 32

/* ---- fixtures ------------------------------------------------------- */

static char tmpdir[256];	/* removed after the group */
static bool have_pi;		/* public-inbox tools installed */

/* Run a command (argv vector, never a shell string); fail the test with
 * its output when it does not succeed. */
static void run_argv(const char *const *argv)
{
	struct pg_proc p = PG_PROC_INIT;
	struct pg_err err = PG_ERR_INIT;
	char desc[PG_PROC_DESC_MAX];

	p.argv = argv;
	p.timeout_ms = 60 * 1000;
	if (pg_proc_run(&p, &err) < 0)
		fail_msg("run %s: %s", argv[0], err.msg);
	if (!pg_proc_succeeded(&p))
		fail_msg("%s %s: %s\n%s", argv[0], argv[1] ? argv[1] : "",
			 pg_proc_describe(&p, desc, sizeof(desc)), pg_buf_str(&p.tail));
	pg_proc_release(&p);
}

/* make-inbox.sh CMD ARGS... (NULL-terminated) */
static void mk(const char *cmd, ...)
{
	const char *argv[24] = { "sh", MAKE_INBOX, cmd };
	size_t n = 3;
	va_list ap;

	va_start(ap, cmd);
	while (n < sizeof(argv) / sizeof(argv[0]) - 1 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	run_argv(argv);
}

static const char *tpath(char *buf, size_t size, const char *rel)
{
	int n = snprintf(buf, size, "%s/%s", tmpdir, rel);

	assert_true(n > 0 && (size_t)n < size);
	return buf;
}

/* The path of mail NAME (e.g. "03-patch2"). */
static const char *mail(const char *name)
{
	static char bufs[8][512];
	static int next;
	char *b = bufs[next++ % 8];
	int n = snprintf(b, 512, "%s/mails/%s.eml", tmpdir, name);

	assert_true(n > 0 && n < 512);
	return b;
}

/* The Message-ID of mail NAME, as make-inbox.sh recorded it. */
static const char *mail_id(const char *name)
{
	static char bufs[8][256];
	static int next;
	char *b = bufs[next++ % 8];
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/mails/%s.id", tmpdir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(b, 1, 255, f);
	fclose(f);
	b[n] = '\0';
	b[strcspn(b, "\r\n")] = '\0';
	return b;
}

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[1024];

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");

		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, prog) < (int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		path += len;
		if (*path == ':')
			path++;
	}
	return false;
}

static int group_setup(void **state)
{
	const char *t = getenv("TMPDIR");
	char mails[512];

	struct pg_err err = PG_ERR_INIT;

	(void)state;
	/* The tests use libgit2 directly too (to damage repositories). */
	if (pg_git_global_init(&err) < 0) {
		fprintf(stderr, "test_inbox: %s\n", err.msg);
		return -1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/pg-inbox.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	have_pi = in_path("public-inbox-init") && in_path("public-inbox-mda");
	if (!have_pi) {
		fprintf(stderr, "test_inbox: public-inbox is not installed (apt-get install "
				"public-inbox): skipping the archive tests\n");
		return 0;
	}
	mk("mails", tpath(mails, sizeof(mails), "mails"), NULL);
	return 0;
}

static int group_teardown(void **state)
{
	const char *argv[] = { "rm", "-rf", tmpdir, NULL };

	(void)state;
	if (tmpdir[0])
		run_argv(argv);
	return 0;
}

static void need_pi(void)
{
	if (!have_pi)
		skip();
}

/* ---- what a walk saw ------------------------------------------------ */

struct seen {
	int epoch;
	char oid[PG_INBOX_OID_HEXSZ + 1];
	enum pg_inbox_kind kind;
	char msgid[256];
	size_t size;
	int64_t time;
	bool rescan;
	bool has_from_line;	/* data began with an mbox "From " line */
};

struct collect {
	struct seen seen[MAX_SEEN];
	size_t n;
	size_t stop_after;	/* 0: never */
	size_t fail_at;		/* 1-based; 0: never */
};

/* The Message-ID header (one line; the test mails do not fold it). */
static void header_msgid(const char *data, size_t size, char *out, size_t outlen)
{
	const char *p = data, *end = data + size;

	out[0] = '\0';
	while (p < end && *p != '\n') {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);

		if (len > 11 && strncasecmp(p, "Message-ID:", 11) == 0) {
			const char *v = p + 11;

			while (*v == ' ')
				v++;
			snprintf(out, outlen, "%.*s", (int)(p + len - v), v);
			return;
		}
		p += len + 1;
	}
}

static int collect_cb(const struct pg_inbox_msg *m, void *arg, struct pg_err *err)
{
	struct collect *c = arg;
	struct seen *s;

	if (c->fail_at && c->n + 1 == c->fail_at)
		return pg_err_set(err, PG_EDB, "store is full");
	assert_true(c->n < MAX_SEEN);
	assert_int_equal(strlen(m->oid), PG_INBOX_OID_HEXSZ);
	s = &c->seen[c->n++];
	memset(s, 0, sizeof(*s));
	s->epoch = m->epoch;
	snprintf(s->oid, sizeof(s->oid), "%s", m->oid);
	s->kind = m->kind;
	s->size = m->size;
	s->time = m->time;
	s->rescan = m->rescan;
	if (m->data) {
		header_msgid(m->data, m->size, s->msgid, sizeof(s->msgid));
		s->has_from_line = m->size >= 5 && memcmp(m->data, "From ", 5) == 0;
	}
	return c->stop_after && c->n >= c->stop_after ? 1 : 0;
}

static struct pg_inbox *open_ok(const char *src, const char *mirror)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_inbox *ib = NULL;

	if (pg_inbox_open(&ib, src, mirror, &err) < 0)
		fail_msg("pg_inbox_open(%s): %s", src, err.msg);
	return ib;
}

static void walk_ok(struct pg_inbox *ib, int epoch, const char *cursor, struct collect *c,
		    struct pg_inbox_walk_result *res)
{
	struct pg_err err = PG_ERR_INIT;

	if (pg_inbox_walk(ib, epoch, cursor, collect_cb, c, res, &err) < 0)
		fail_msg("pg_inbox_walk(%d, %s): %s", epoch, cursor ? cursor : "-", err.msg);
}

static void assert_ids(const struct collect *c, size_t from, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c->seen[from + i].kind, PG_INBOX_MESSAGE);
		assert_string_equal(c->seen[from + i].msgid, mail_id(names[i]));
	}
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- tests ---------------------------------------------------------- */

/* Every delivered mail, oldest first, with its Message-ID; then nothing
 * more from the head; then every message too big under a tiny bound. */
static void test_v2_full_walk(void **state)
{
	static const char *const names[] = { "01-cover", "02-patch1", "03-patch2",
					     "04-patch3", "05-single", "06-reply" };
	struct collect c = { 0 }, c2 = { 0 }, c3 = { 0 };
	struct pg_inbox_walk_result res;
	char inbox[512];
	const int *epochs;
	size_t n;
	struct pg_err err = PG_ERR_INIT;
	struct pg_inbox *ib;

	(void)state;
	need_pi();
	mk("init", tmpdir, "full", "v2", NULL);
	mk("deliver", tmpdir, "full", mail("01-cover"), mail("02-patch1"), mail("03-patch2"),
	   mail("04-patch3"), mail("05-single"), mail("06-reply"), NULL);
	ib = open_ok(tpath(inbox, sizeof(inbox), "full"), NULL);
	assert_int_equal(pg_inbox_format(ib), PG_INBOX_V2);
	assert_false(pg_inbox_is_remote(ib));
	assert_int_equal(pg_inbox_fetch(ib, &err), 0);	/* no-op for a path */
	assert_int_equal(pg_inbox_epochs(ib, &epochs, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(epochs[0], 0);

	walk_ok(ib, 0, NULL, &c, &res);
	assert_int_equal(res.count, NELEM(names));
	assert_int_equal(c.n, NELEM(names));
	assert_false(res.rewritten);
	assert_false(res.stopped);
	assert_string_equal(res.last_oid, c.seen[c.n - 1].oid);
	assert_ids(&c, 0, names, NELEM(names));
	for (size_t i = 0; i < c.n; i++) {
		assert_int_equal(c.seen[i].epoch, 0);
		assert_false(c.seen[i].rescan);
		assert_false(c.seen[i].has_from_line);
		/* public-inbox sets the commit time from the Date: header. */
		assert_true(c.seen[i].time >= 1704067200);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(c.seen[i].oid, c.seen[j].oid);
	}

	/* From the head: nothing, and the cursor stays. */
	walk_ok(ib, 0, res.last_oid, &c2, &res);
	assert_int_equal(res.count, 0);
	assert_int_equal(c2.n, 0);
	assert_string_equal(res.last_oid, c.seen[c.n - 1].oid);

	/* Uppercase hex is the same commit. */
	{
		char up[PG_INBOX_OID_HEXSZ + 1];

		for (size_t i = 0; i <= PG_INBOX_OID_HEXSZ; i++)
			up[i] = (char)(c.seen[2].oid[i] >= 'a' && c.seen[2].oid[i] <= 'f'
				       ? c.seen[2].oid[i] - 32 : c.seen[2].oid[i]);
		walk_ok(ib, 0, up, &c2, &res);
		assert_int_equal(res.count, 3);
		assert_false(res.rewritten);
		c2.n = 0;
	}

	/* A bound below every message: all too big, sizes still right. */
	pg_inbox_set_max_size(ib, c.seen[0].size < 100 ? 1 : 100);
	walk_ok(ib, 0, NULL, &c3, &res);
	assert_int_equal(c3.n, c.n);
	for (size_t i = 0; i < c.n; i++) {
		assert_int_equal(c3.seen[i].kind, PG_INBOX_TOO_BIG);
		assert_int_equal(c3.seen[i].msgid[0], '\0');
		assert_int_equal(c3.seen[i].size, c.seen[i].size);
	}
	/* A bound of exactly one message's size lets that one through. */
	pg_inbox_set_max_size(ib, c.seen[1].size);
	c3.n = 0;
	walk_ok(ib, 0, NULL, &c3, &res);
	assert_int_equal(c3.seen[1].kind, PG_INBOX_MESSAGE);
	pg_inbox_close(ib);
}

/* Tailing: more mail after a walk gives only the new ones; a caller that
 * commits in batches stops after N and resumes from the last id. */
static void test_v2_resume_and_batches(void **state)
{
	static const char *const first[] = { "01-cover", "02-patch1", "03-patch2" };
	static const char *const more[] = { "04-patch3", "05-single" };
	static const char *const all[] = { "01-cover", "02-patch1", "03-patch2",
					   "04-patch3", "05-single" };
	struct collect c = { 0 };
	struct pg_inbox_walk_result res;
	char inbox[512], cursor[PG_INBOX_OID_HEXSZ + 1];
	struct pg_inbox *ib;
	size_t total = 0;

	(void)state;
	need_pi();
	mk("init", tmpdir, "resume", "v2", NULL);
	mk("deliver", tmpdir, "resume", mail("01-cover"), mail("02-patch1"), mail("03-patch2"),
	   NULL);
	ib = open_ok(tpath(inbox, sizeof(inbox), "resume"), NULL);
	walk_ok(ib, 0, NULL, &c, &res);
	assert_int_equal(res.count, 3);
	assert_ids(&c, 0, first, NELEM(first));
	snprintf(cursor, sizeof(cursor), "%s", res.last_oid);

	/* Delivered while the inbox is open: seen by the same handle. */
	mk("deliver", tmpdir, "resume", mail("04-patch3"), mail("05-single"), NULL);
	c.n = 0;
	walk_ok(ib, 0, cursor, &c, &res);
	assert_int_equal(res.count, 2);
	assert_false(res.rewritten);
	assert_ids(&c, 0, more, NELEM(more));

	/* Batches of 2 from the start: 2, 2, 1, then nothing. */
	c.n = 0;
	cursor[0] = '\0';
	for (int round = 0; round < 4; round++) {
		size_t before = c.n;

		c.stop_after = c.n + 2;
		walk_ok(ib, 0, cursor, &c, &res);
		assert_int_equal(res.count, c.n - before);
		assert_int_equal(res.count, round < 2 ? 2 : round == 2 ? 1 : 0);
		assert_int_equal(res.stopped, round < 2);
		if (res.count)
			assert_string_equal(res.last_oid, c.seen[c.n - 1].oid);
		snprintf(cursor, sizeof(cursor), "%s", res.last_oid);
		total += res.count;
	}
	assert_int_equal(total, NELEM(all));
	assert_ids(&c, 0, all, NELEM(all));

	/* A callback error stops the walk: last_oid is the commit before. */
	{
		struct collect cf = { .fail_at = 3 };
		struct pg_err err = PG_ERR_INIT;

		assert_int_equal(pg_inbox_walk(ib, 0, NULL, collect_cb, &cf, &res, &err), -1);
		assert_int_equal(err.code, PG_EDB);
		assert_non_null(strstr(err.msg, "store is full"));
		assert_non_null(strstr(err.msg, "epoch 0"));
		assert_int_equal(res.count, 2);
		assert_string_equal(res.last_oid, c.seen[1].oid);
	}
	pg_inbox_close(ib);
}

/* public-inbox-learn rm appends a "d" commit holding the removed mail;
 * public-inbox-purge rewrites history: an old cursor is then no longer
 * an ancestor (or no longer exists), and the epoch is rescanned without
 * the purged message. */
static void test_v2_delete_and_purge(void **state)
{
	struct collect c = { 0 }, c2 = { 0 };
	struct pg_inbox_walk_result res;
	char inbox[512], cursor[PG_INBOX_OID_HEXSZ + 1], early[PG_INBOX_OID_HEXSZ + 1];
	struct pg_inbox *ib;
	size_t messages = 0, purged_seen = 0, none = 0, deletes = 0;

	(void)state;
	need_pi();
	mk("init", tmpdir, "purge", "v2", NULL);
	mk("deliver", tmpdir, "purge", mail("01-cover"), mail("02-patch1"), mail("03-patch2"),
	   mail("04-patch3"), NULL);
	mk("rm", tmpdir, mail("02-patch1"), NULL);
	ib = open_ok(tpath(inbox, sizeof(inbox), "purge"), NULL);
	walk_ok(ib, 0, NULL, &c, &res);
	assert_int_equal(res.count, 5);
	assert_int_equal(c.seen[4].kind, PG_INBOX_DELETE);
	assert_string_equal(c.seen[4].msgid, mail_id("02-patch1"));
	assert_true(c.seen[4].size > 0);
	snprintf(cursor, sizeof(cursor), "%s", res.last_oid);
	snprintf(early, sizeof(early), "%s", c.seen[0].oid);

	mk("purge", tmpdir, mail("03-patch2"), NULL);
	walk_ok(ib, 0, cursor, &c2, &res);
	assert_true(res.rewritten);
	assert_false(res.stopped);
	assert_int_equal(res.count, c2.n);
	for (size_t i = 0; i < c2.n; i++) {
		assert_true(c2.seen[i].rescan);
		if (c2.seen[i].kind == PG_INBOX_MESSAGE) {
			messages++;
			if (strcmp(c2.seen[i].msgid, mail_id("03-patch2")) == 0)
				purged_seen++;
		} else if (c2.seen[i].kind == PG_INBOX_NONE) {
			none++;	/* the placeholder purge leaves */
			assert_null(strstr(c2.seen[i].msgid, "@"));
		} else if (c2.seen[i].kind == PG_INBOX_DELETE) {
			deletes++;
		}
	}
	assert_int_equal(purged_seen, 0);
	assert_int_equal(messages, 3);
	assert_int_equal(none, 1);
	assert_int_equal(deletes, 1);
	assert_int_equal(c2.n, 5);
	assert_int_equal(c2.seen[0].kind, PG_INBOX_MESSAGE);
	assert_string_equal(c2.seen[0].msgid, mail_id("01-cover"));

	/* A cursor before the purged message is untouched history. */
	c2.n = 0;
	walk_ok(ib, 0, early, &c2, &res);
	assert_false(res.rewritten);
	assert_int_equal(c2.n, res.count);
	assert_false(c2.seen[0].rescan);
	pg_inbox_close(ib);
}

/* A full epoch makes public-inbox start git/N+1.git; the reader follows
 * it, each epoch from its own cursor. */
static void test_v2_epochs(void **state)
{
	static const char *const names[] = { "01-cover", "02-patch1", "03-patch2", "04-patch3",
					     "05-single" };
	struct collect c = { 0 };
	struct pg_inbox_tail_result tr;
	struct pg_inbox_walk_result res;
	struct pg_inbox_cursor cur[2];
	struct pg_err err = PG_ERR_INIT;
	char inbox[512];
	struct pg_inbox *ib;
	const int *epochs;
	size_t n;

	(void)state;
	need_pi();
	mk("init", tmpdir, "epochs", "v2", NULL);
	mk("deliver", tmpdir, "epochs", mail("01-cover"), mail("02-patch1"), NULL);
	ib = open_ok(tpath(inbox, sizeof(inbox), "epochs"), NULL);
	assert_int_equal(pg_inbox_tail(ib, NULL, 0, collect_cb, &c, &tr, &err), 0);
	assert_int_equal(tr.count, 2);
	assert_int_equal(tr.last_epoch, 0);
	memset(cur, 0, sizeof(cur));
	cur[0].epoch = 0;
	snprintf(cur[0].oid, sizeof(cur[0].oid), "%s", tr.last_oid);

	mk("epoch", tmpdir, "epochs", "1", NULL);
	mk("deliver", tmpdir, "epochs", mail("03-patch2"), mail("04-patch3"), mail("05-single"),
	   NULL);
	assert_int_equal(pg_inbox_epochs(ib, &epochs, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(epochs[1], 1);

	/* Only the new epoch's messages, from its first (parentless) commit. */
	assert_int_equal(pg_inbox_tail(ib, cur, 1, collect_cb, &c, &tr, &err), 0);
	assert_int_equal(tr.count, 3);
	assert_int_equal(tr.rewrites, 0);
	assert_int_equal(tr.last_epoch, 1);
	assert_int_equal(c.n, 5);
	assert_ids(&c, 0, names, NELEM(names));
	assert_int_equal(c.seen[1].epoch, 0);
	assert_int_equal(c.seen[2].epoch, 1);
	assert_int_equal(c.seen[4].epoch, 1);
	assert_string_equal(tr.last_oid, c.seen[4].oid);

	/* Stop inside epoch 0, resume: epoch 0's rest, then epoch 1. */
	c.n = 0;
	c.stop_after = 1;
	assert_int_equal(pg_inbox_tail(ib, NULL, 0, collect_cb, &c, &tr, &err), 0);
	assert_true(tr.stopped);
	assert_int_equal(tr.last_epoch, 0);
	cur[0].epoch = 0;
	snprintf(cur[0].oid, sizeof(cur[0].oid), "%s", tr.last_oid);
	c.stop_after = 0;
	assert_int_equal(pg_inbox_tail(ib, cur, 1, collect_cb, &c, &tr, &err), 0);
	assert_int_equal(c.n, 5);
	assert_ids(&c, 0, names, NELEM(names));

	/* A cursor from epoch 0 used for epoch 1 is not its history. */
	c.n = 0;
	walk_ok(ib, 1, cur[0].oid, &c, &res);
	assert_true(res.rewritten);
	assert_int_equal(res.count, 3);

	/* No epoch 2. */
	assert_int_equal(pg_inbox_walk(ib, 2, NULL, collect_cb, &c, &res, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "epoch 2"));
	pg_inbox_close(ib);
}

/* v1: one bare repository, one file per message named by the SHA-1 of its
 * Message-ID; removal deletes the file. */
static void test_v1(void **state)
{
	static const char *const names[] = { "01-cover", "02-patch1", "03-patch2" };
	struct collect c = { 0 };
	struct pg_inbox_walk_result res;
	struct pg_err err = PG_ERR_INIT;
	char inbox[512], mid[PG_INBOX_OID_HEXSZ + 1];
	struct pg_inbox *ib;
	const int *epochs;
	size_t n;

	(void)state;
	need_pi();
	mk("init", tmpdir, "old", "v1", NULL);
	mk("deliver", tmpdir, "old", mail("01-cover"), mail("02-patch1"), mail("03-patch2"), NULL);
	mk("rm", tmpdir, mail("02-patch1"), NULL);
	ib = open_ok(tpath(inbox, sizeof(inbox), "old"), NULL);
	assert_int_equal(pg_inbox_format(ib), PG_INBOX_V1);
	assert_int_equal(pg_inbox_epochs(ib, &epochs, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(epochs[0], 0);
	walk_ok(ib, 0, NULL, &c, &res);
	assert_int_equal(res.count, 4);
	assert_ids(&c, 0, names, NELEM(names));
	assert_int_equal(c.seen[3].kind, PG_INBOX_DELETE);
	assert_string_equal(c.seen[3].msgid, mail_id("02-patch1"));
	assert_false(c.seen[0].has_from_line);

	/* Resume after the second message. */
	snprintf(mid, sizeof(mid), "%s", c.seen[1].oid);
	c.n = 0;
	walk_ok(ib, 0, mid, &c, &res);
	assert_int_equal(res.count, 2);
	assert_string_equal(c.seen[0].msgid, mail_id("03-patch2"));
	assert_int_equal(pg_inbox_walk(ib, 1, NULL, collect_cb, &c, &res, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	pg_inbox_close(ib);
}

/* Sources that are not archives, and URLs without a mirror. */
static void test_open_errors(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_inbox *ib = (struct pg_inbox *)&err;	/* must be reset */
	char path[512];

	(void)state;
	assert_int_equal(pg_inbox_open(&ib, tpath(path, sizeof(path), "no/such/inbox"), NULL,
				       &err), -1);
	assert_null(ib);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no/such/inbox"));

	assert_int_equal(mkdir(tpath(path, sizeof(path), "empty"), 0755), 0);
	assert_int_equal(pg_inbox_open(&ib, path, NULL, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "not a public-inbox archive"));

	assert_int_equal(mkdir(tpath(path, sizeof(path), "ext"), 0755), 0);
	assert_int_equal(mkdir(tpath(path, sizeof(path), "ext/ALL.git"), 0755), 0);
	assert_int_equal(pg_inbox_open(&ib, tpath(path, sizeof(path), "ext"), NULL, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "ALL.git"));

	assert_int_equal(pg_inbox_open(&ib, "https://inbox.example.org/dev/", NULL, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "mirror"));

	/* A URL with an empty mirror: not fetched yet, nothing to walk. */
	{
		const int *epochs;
		size_t n;

		ib = open_ok("https://inbox.example.org/dev/", tpath(path, sizeof(path), "mirror/dev"));
		assert_true(pg_inbox_is_remote(ib));
		assert_int_equal(pg_inbox_format(ib), PG_INBOX_UNKNOWN);
		assert_int_equal(pg_inbox_epochs(ib, &epochs, &n, &err), 0);
		assert_int_equal(n, 0);
		pg_inbox_close(ib);
	}
	pg_inbox_close(NULL);
	assert_string_equal(pg_inbox_kind_name(PG_INBOX_TOO_BIG), "too-big");
	assert_string_equal(pg_inbox_format_name(PG_INBOX_V2), "v2");
}

/* A cursor that is not hex is refused; a well-formed one that names no
 * commit (or a blob) means rewritten history: rescan. */
static void test_bad_cursors(void **state)
{
	static const char *const bad[] = { "xyz", "12345", "g0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d",
					   "0123456789abcdef0123456789abcdef012345678" };
	struct collect c = { 0 };
	struct pg_inbox_walk_result res;
	struct pg_err err = PG_ERR_INIT;
	char repo[512];
	struct pg_inbox *ib;
	git_repository *g = NULL;
	git_object *blob = NULL;
	char blob_hex[GIT_OID_HEXSZ + 1];

	(void)state;
	need_pi();
	tpath(repo, sizeof(repo), "plain.git");
	mk("mkepoch", repo, mail("01-cover"), mail("02-patch1"), NULL);
	ib = open_ok(repo, NULL);
	for (size_t i = 0; i < NELEM(bad); i++) {
		assert_int_equal(pg_inbox_walk(ib, 0, bad[i], collect_cb, &c, &res, &err), -1);
		assert_int_equal(err.code, PG_EINVAL);
		assert_non_null(strstr(err.msg, "cursor"));
		assert_int_equal(c.n, 0);
	}

	walk_ok(ib, 0, "0123456789abcdef0123456789abcdef01234567", &c, &res);
	assert_true(res.rewritten);
	assert_int_equal(res.count, 2);
	assert_true(c.seen[0].rescan);
	assert_string_equal(c.seen[0].msgid, mail_id("01-cover"));

	assert_int_equal(git_repository_open_bare(&g, repo), 0);
	assert_int_equal(git_revparse_single(&blob, g, "master:m"), 0);
	git_oid_tostr(blob_hex, sizeof(blob_hex), git_object_id(blob));
	c.n = 0;
	walk_ok(ib, 0, blob_hex, &c, &res);
	assert_true(res.rewritten);
	assert_int_equal(res.count, 2);
	git_object_free(blob);
	git_repository_free(g);
	pg_inbox_close(ib);
}

/* Delete object file `spec` (a revision like "master~1:m") from repo. */
static void delete_object(const char *repo, const char *spec)
{
	git_repository *g = NULL;
	git_object *obj = NULL;
	char hex[GIT_OID_HEXSZ + 1], path[1024];

	assert_int_equal(git_repository_open_bare(&g, repo), 0);
	assert_int_equal(git_revparse_single(&obj, g, spec), 0);
	git_oid_tostr(hex, sizeof(hex), git_object_id(obj));
	snprintf(path, sizeof(path), "%s/objects/%.2s/%s", repo, hex, hex + 2);
	assert_int_equal(unlink(path), 0);
	git_object_free(obj);
	git_repository_free(g);
}

/* A missing object is a clear error naming the epoch and the commit, and
 * the commits before it were delivered. */
static void test_missing_objects(void **state)
{
	struct collect c = { 0 };
	struct pg_inbox_walk_result res;
	struct pg_err err = PG_ERR_INIT;
	char repo[512];
	struct pg_inbox *ib;

	(void)state;
	need_pi();
	tpath(repo, sizeof(repo), "noblob.git");
	mk("mkepoch", repo, mail("01-cover"), mail("02-patch1"), mail("03-patch2"), NULL);
	delete_object(repo, "master~1:m");
	ib = open_ok(repo, NULL);
	assert_int_equal(pg_inbox_walk(ib, 0, NULL, collect_cb, &c, &res, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_non_null(strstr(err.msg, "epoch 0: commit"));
	assert_int_equal(res.count, 1);
	assert_int_equal(c.n, 1);
	assert_string_equal(res.last_oid, c.seen[0].oid);
	pg_inbox_close(ib);

	c.n = 0;
	tpath(repo, sizeof(repo), "nocommit.git");
	mk("mkepoch", repo, mail("01-cover"), mail("02-patch1"), mail("03-patch2"), NULL);
	delete_object(repo, "master~1");
	ib = open_ok(repo, NULL);
	assert_int_equal(pg_inbox_walk(ib, 0, NULL, collect_cb, &c, &res, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_non_null(strstr(err.msg, "epoch 0"));
	pg_inbox_close(ib);
}

/* A repository of another user: libgit2 1.5 refuses it (like git's
 * safe.directory) with a misleading message; ours names the cause and the
 * remedy.  Needs root to give the repository away. */
static void test_foreign_owner(void **state)
{
	const char *chown_argv[] = { "chown", "-R", "65534", NULL, NULL };
	struct pg_err err = PG_ERR_INIT;
	struct pg_inbox *ib = NULL;
	char repo[512];

	(void)state;
	need_pi();
	if (geteuid() != 0)
		skip();
	tpath(repo, sizeof(repo), "foreign.git");
	mk("mkepoch", repo, mail("01-cover"), NULL);
	chown_argv[3] = repo;
	run_argv(chown_argv);
	assert_int_equal(pg_inbox_open(&ib, repo, NULL, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_non_null(strstr(err.msg, "belongs to uid 65534"));
	assert_non_null(strstr(err.msg, "safe.directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_v2_full_walk),
		cmocka_unit_test(test_v2_resume_and_batches),
		cmocka_unit_test(test_v2_delete_and_purge),
		cmocka_unit_test(test_v2_epochs),
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_bad_cursors),
		cmocka_unit_test(test_missing_objects),
		cmocka_unit_test(test_foreign_owner),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
