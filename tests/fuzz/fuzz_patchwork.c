/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for what the Patchwork client reads from the server
 * (patches/patchwork.h): a series, a page of events, a comment, a page of
 * patches, a page of checks, a Link header, a patch name.  The first byte
 * picks which; the rest is the answer.  Any bytes must parse or fail with
 * an error (never a sanitizer report), and what parses must keep the
 * header's promises: strings there, patches sorted, ids positive, events
 * of the category asked only, a comment URL for every comment event.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "http.h"
#include "log.h"
#include "patchwork.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define BASE "http://pw.example.org/api/1.3"
#define CATEGORY "series-completed"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	pg_log_set_levels("error");
	return 0;
}

static void failed(int rc, const struct pg_err *err)
{
	if (rc != -1 || err->code == PG_OK || !err->msg[0])
		abort();
}

static void series(const char *p, size_t n)
{
	struct pg_pw_series s;
	struct pg_err err = PG_ERR_INIT;
	bool numbered = true;
	int rc;

	memset(&s, 0, sizeof(s));
	rc = pg_pw_parse_series(p, n, BASE "/series/1/", &s, &err);
	if (rc != 0) {
		failed(rc, &err);
		if (s.npatches || s.patches || s.name)
			abort();	/* released on failure */
		return;
	}
	if (!s.name || !s.submitter_name || !s.submitter_email || (s.npatches && !s.patches))
		abort();
	for (size_t i = 0; i < s.npatches; i++)
		if (!s.patches[i].msgid || !s.patches[i].name || !s.patches[i].number)
			numbered = false;
	for (size_t i = 0; i < s.npatches; i++) {
		const struct pg_pw_patch *pp = &s.patches[i];

		if (!pp->msgid || !pp->name)
			abort();
		if (numbered && i && pp->number < s.patches[i - 1].number)
			abort();
	}
	pg_pw_series_release(&s);
	if (s.name || s.patches || s.npatches)
		abort();
}

struct ev_count {
	unsigned int n;
};

static int on_event(const struct pg_pw_event *ev, void *arg, struct pg_err *err)
{
	struct ev_count *c = arg;

	if (!ev->category || strcmp(ev->category, CATEGORY))
		abort();
	if (ev->comment_id && (!ev->comment_url || strncmp(ev->comment_url, "http", 4)))
		abort();
	if (!ev->comment_id && ev->comment_url)
		abort();
	c->n++;
	return 0;
}

static void events(const char *p, size_t n)
{
	struct pg_pw_poll_stats st;
	struct pg_err err = PG_ERR_INIT;
	struct ev_count c = { 0 };
	int rc = pg_pw_parse_events(p, n, BASE, CATEGORY, on_event, &c, &st, &err);

	if (rc < 0) {
		failed(rc, &err);
		return;
	}
	if (rc != 0 || st.events != c.n || (c.n && st.last_date_ms < 0))
		abort();
}

static void comment(const char *p, size_t n)
{
	struct pg_pw_comment cm;
	struct pg_err err = PG_ERR_INIT;
	int rc;

	memset(&cm, 0, sizeof(cm));
	rc = pg_pw_parse_comment(p, n, BASE "/patches/1/comments/2/", &cm, &err);
	if (rc != 0) {
		failed(rc, &err);
		if (cm.msgid || cm.content)
			abort();
		return;
	}
	if (!cm.msgid || !cm.subject || !cm.submitter_name || !cm.submitter_email)
		abort();
	pg_pw_comment_release(&cm);
}

static void patch_list(const char *p, size_t n)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t id = 0;
	int rc = pg_pw_parse_patch_list(p, n, "<20240101.1@example.org>", &id, &err);

	if (rc < 0)
		failed(rc, &err);
	else if (rc > 1 || (rc == 1) != (id > 0))
		abort();
}

static void check_list(const char *p, size_t n)
{
	struct pg_err err = PG_ERR_INIT;
	int64_t id = 0;
	int rc = pg_pw_parse_check_list(p, n, PG_PW_CHECK_SUCCESS, "perfgate-intel",
					"Performance", NULL, 0, &id, &err);

	if (rc < 0)
		failed(rc, &err);
	else if (rc > 1 || (rc == 1) != (id > 0))
		abort();
}

/* Text for the two string parsers: NUL-terminated, cut at the first NUL. */
static char *text(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (!s)
		abort();
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static void link_header(const char *p, size_t n)
{
	char out[64];
	char *s = text(p, n);
	int rc = pg_http_link_next(s, out, sizeof(out));

	if (rc < -1 || rc > 1)
		abort();
	if (rc == 1 && (!out[0] || strlen(out) >= sizeof(out)))
		abort();
	if (rc == -1 && out[0])
		abort();
	free(s);
}

static void name_number(const char *p, size_t n)
{
	char *s = text(p, n);
	unsigned int num = 0, total = 0;

	if (pg_pw_name_number(s, &num, &total) && !pg_pw_name_number(s, NULL, NULL))
		abort();
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data + 1;

	if (!size)
		return 0;
	switch (data[0] % 7) {
	case 0: series(p, size - 1); break;
	case 1: events(p, size - 1); break;
	case 2: comment(p, size - 1); break;
	case 3: patch_list(p, size - 1); break;
	case 4: check_list(p, size - 1); break;
	case 5: link_header(p, size - 1); break;
	default: name_number(p, size - 1); break;
	}
	return 0;
}
