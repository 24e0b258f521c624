/* SPDX-License-Identifier: MIT */
/*
 * inbox-tool: drive the public-inbox reader (patches/inbox.h) from test
 * scripts.
 *
 *   inbox-tool walk [-m MAXSIZE] [-n N] [-t MS] SRC MIRROR [EPOCH:OID...]
 *       Fetch (a URL into MIRROR; "-" for a local SRC), then walk every
 *       epoch from the cursors given (none: from the start), stopping
 *       after N commits when -n is given.  One line per commit:
 *           EPOCH OID KIND MESSAGE-ID [rescan]
 *       (for kind too-big, "size=BYTES" instead of the Message-ID; "-"
 *       when there is none), then the cursor to resume from per epoch
 *       walked, and a summary:
 *           cursor EPOCH:OID
 *           end count=N rewrites=R stopped=0|1
 *   inbox-tool epochs SRC MIRROR
 *       Fetch, then print "format v1|v2" and one "epoch N" line each.
 *
 * Exit status: 0 done, 1 error (message on stderr), 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "inbox.h"
#include "log.h"
#include "text.h"

#define EXIT_USAGE 2
#define MSGID_MAX 998

struct walk_state {
	long long stop_after;	/* 0: no limit */
	long long seen;
	struct pg_inbox_cursor *cursors;	/* last consumed per epoch */
	size_t ncursors;
};

static int usage(void)
{
	fprintf(stderr, "usage: inbox-tool walk [-m MAXSIZE] [-n N] [-t MS] SRC MIRROR|- [EPOCH:OID...]\n"
			"       inbox-tool epochs SRC MIRROR|-\n");
	return EXIT_USAGE;
}

/*
 * The Message-ID header's value, unfolded and with white space runs made
 * one space, into out ("-" when the header block has none).  A test
 * helper, not a mail parser: enough for the mails the tests deliver.
 */
static void message_id(const char *data, size_t size, char *out, size_t outlen)
{
	const char *p = data, *end = data + size;
	size_t n = 0;

	snprintf(out, outlen, "-");
	while (p < end && *p != '\n' && !(*p == '\r' && p + 1 < end && p[1] == '\n')) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *next = eol ? eol + 1 : end;

		if ((size_t)(end - p) > 11 && strncasecmp(p, "Message-ID:", 11) == 0) {
			bool space = false;

			p += 11;
			/* The value, and any continuation lines. */
			for (;;) {
				for (; p < end && *p != '\n'; p++) {
					if (*p == ' ' || *p == '\t' || *p == '\r') {
						space = n > 0;
						continue;
					}
					if (space && n + 1 < outlen)
						out[n++] = ' ';
					space = false;
					if (n + 1 < outlen)
						out[n++] = *p;
				}
				if (p + 1 < end && (p[1] == ' ' || p[1] == '\t')) {
					p++;
					continue;
				}
				break;
			}
			out[n < outlen ? n : outlen - 1] = '\0';
			if (n == 0)
				snprintf(out, outlen, "-");
			return;
		}
		p = next;
	}
}

static int remember(struct walk_state *ws, int epoch, const char *oid)
{
	struct pg_inbox_cursor *c = NULL;

	for (size_t i = 0; i < ws->ncursors; i++)
		if (ws->cursors[i].epoch == epoch)
			c = &ws->cursors[i];
	if (!c) {
		c = realloc(ws->cursors, (ws->ncursors + 1) * sizeof(*c));
		if (!c)
			return -1;
		ws->cursors = c;
		c = &ws->cursors[ws->ncursors++];
		c->epoch = epoch;
	}
	snprintf(c->oid, sizeof(c->oid), "%s", oid);
	return 0;
}

static int on_msg(const struct pg_inbox_msg *m, void *arg, struct pg_err *err)
{
	struct walk_state *ws = arg;
	char id[MSGID_MAX + 1];

	if (m->kind == PG_INBOX_TOO_BIG || (m->kind == PG_INBOX_DELETE && !m->data))
		snprintf(id, sizeof(id), "size=%zu", m->size);
	else if (m->data)
		message_id(m->data, m->size, id, sizeof(id));
	else
		snprintf(id, sizeof(id), "-");
	printf("%d %s %s %s%s\n", m->epoch, m->oid, pg_inbox_kind_name(m->kind), id,
	       m->rescan ? " rescan" : "");
	if (remember(ws, m->epoch, m->oid) < 0)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	ws->seen++;
	return ws->stop_after > 0 && ws->seen >= ws->stop_after ? 1 : 0;
}

static int parse_cursor_arg(const char *s, struct pg_inbox_cursor *c)
{
	const char *colon = strchr(s, ':');
	char num[16];
	long long e;
	size_t n;

	if (!colon || (size_t)(colon - s) >= sizeof(num))
		return -1;
	n = (size_t)(colon - s);
	memcpy(num, s, n);
	num[n] = '\0';
	if (pg_parse_ll(num, 0, PG_INBOX_EPOCH_MAX, &e) < 0 || strlen(colon + 1) >= sizeof(c->oid))
		return -1;
	c->epoch = (int)e;
	/* Not validated here: the reader's answer to a bad cursor is what
	 * the tests look at. */
	snprintf(c->oid, sizeof(c->oid), "%s", colon + 1);
	return 0;
}

static int open_and_fetch(const char *src, const char *mirror, long long timeout_ms,
			  long long max_size, struct pg_inbox **ib, struct pg_err *err)
{
	if (pg_inbox_open(ib, src, strcmp(mirror, "-") == 0 ? NULL : mirror, err) < 0)
		return -1;
	if (timeout_ms > 0)
		pg_inbox_set_fetch_timeout(*ib, (unsigned int)timeout_ms);
	if (max_size > 0)
		pg_inbox_set_max_size(*ib, (size_t)max_size);
	return pg_inbox_fetch(*ib, err);
}

static int cmd_walk(int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct walk_state ws = { 0 };
	struct pg_inbox_tail_result res;
	struct pg_inbox_cursor *cursors = NULL;
	struct pg_inbox *ib = NULL;
	long long max_size = 0, timeout_ms = 0;
	size_t ncursors = 0;
	int i, ret = 1;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		long long *dst;

		if (strcmp(argv[i], "-m") == 0)
			dst = &max_size;
		else if (strcmp(argv[i], "-n") == 0)
			dst = &ws.stop_after;
		else if (strcmp(argv[i], "-t") == 0)
			dst = &timeout_ms;
		else
			return usage();
		if (i + 1 >= argc || pg_parse_ll(argv[i + 1], 1, 1LL << 40, dst) < 0)
			return usage();
		i++;
	}
	if (argc - i < 2)
		return usage();
	if (argc - i > 2) {
		cursors = calloc((size_t)(argc - i - 2), sizeof(*cursors));
		if (!cursors) {
			fprintf(stderr, "inbox-tool: out of memory\n");
			goto out;
		}
	}
	for (int j = i + 2; j < argc; j++) {
		if (parse_cursor_arg(argv[j], &cursors[ncursors++]) < 0) {
			fprintf(stderr, "inbox-tool: bad cursor '%s' (EPOCH:OID)\n", argv[j]);
			ret = EXIT_USAGE;
			goto out;
		}
	}
	if (open_and_fetch(argv[i], argv[i + 1], timeout_ms, max_size, &ib, &err) < 0 ||
	    pg_inbox_tail(ib, cursors, ncursors, on_msg, &ws, &res, &err) < 0) {
		fprintf(stderr, "inbox-tool: %s: %s\n", pg_errcode_name(err.code), err.msg);
		goto out;
	}
	for (size_t k = 0; k < ws.ncursors; k++)
		printf("cursor %d:%s\n", ws.cursors[k].epoch, ws.cursors[k].oid);
	printf("end count=%zu rewrites=%zu stopped=%d\n", res.count, res.rewrites, res.stopped);
	ret = 0;
out:
	pg_inbox_close(ib);
	free(ws.cursors);
	free(cursors);
	return ret;
}

static int cmd_epochs(int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_inbox *ib = NULL;
	const int *epochs;
	size_t n;
	int ret = 1;

	if (argc != 3)
		return usage();
	if (open_and_fetch(argv[1], argv[2], 0, 0, &ib, &err) < 0 ||
	    pg_inbox_epochs(ib, &epochs, &n, &err) < 0) {
		fprintf(stderr, "inbox-tool: %s: %s\n", pg_errcode_name(err.code), err.msg);
		goto out;
	}
	printf("format %s\n", pg_inbox_format_name(pg_inbox_format(ib)));
	for (size_t k = 0; k < n; k++)
		printf("epoch %d\n", epochs[k]);
	ret = 0;
out:
	pg_inbox_close(ib);
	return ret;
}

int main(int argc, char **argv)
{
	const char *lv = getenv("PG_LOG_LEVEL");

	pg_log_init("inbox-tool");
	if (lv && pg_log_set_levels(lv) < 0) {
		fprintf(stderr, "inbox-tool: bad PG_LOG_LEVEL '%s'\n", lv);
		return EXIT_USAGE;
	}
	/* Lines reach a pipe in order even if the tool dies mid-walk. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "walk") == 0)
		return cmd_walk(argc - 1, argv + 1);
	if (strcmp(argv[1], "epochs") == 0)
		return cmd_epochs(argc - 1, argv + 1);
	return usage();
}
