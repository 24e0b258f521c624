/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for patches/patchwork.c: the pure helpers and parsers, then
 * every client call against the fake Patchwork server
 * (tests/fake_patchwork.py, fixture tests/patchwork/fixture.json), started
 * once for the group as a child process.  Tests that change the server's
 * state use their own check contexts, so their order does not matter.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"
#include "http.h"
#include "json.h"
#include "patchwork.h"
#include "proc.h"
#include "timeutil.h"

#define CI_TOKEN "04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a"
#define BOB_TOKEN "1111111111111111111111111111111111111111"

/* The fake server, shared by the group. */
static struct {
	struct pg_proc proc;
	pthread_t waiter;
	bool waiting;
	volatile sig_atomic_t stop;
	struct pg_err wait_err;
	char dir[64];
	char log[96];
	char web[64];		/* http://127.0.0.1:PORT */
	char api[96];		/* web + /api/1.3 */
} fake;

static void *fake_wait(void *arg)
{
	(void)arg;
	/* Pumps the server's output into the log file until it exits. */
	pg_proc_wait(&fake.proc, &fake.wait_err);
	return NULL;
}

/* Read "listening on PORT" from the log; 0 until it is there. */
static long fake_port(void)
{
	char line[128];
	long port = 0;
	FILE *f = fopen(fake.log, "r");

	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f) && !strncmp(line, "listening on ", 13) &&
	    strchr(line, '\n')) {
		char *end;

		errno = 0;
		port = strtol(line + 13, &end, 10);
		if (errno || *end != '\n' || port <= 0 || port > 65535)
			port = 0;
	}
	fclose(f);
	return port;
}

static int group_setup(void **state)
{
	static const char *const argv_usr[] = {
		"/usr/bin/python3", "tests/fake_patchwork.py", "--port", "0",
		"--fixture", "tests/patchwork/fixture.json", "--quiet", NULL,
	};
	static const char *const argv_path[] = {
		"python3", "tests/fake_patchwork.py", "--port", "0",
		"--fixture", "tests/patchwork/fixture.json", "--quiet", NULL,
	};
	struct pg_err err = PG_ERR_INIT;
	long port = 0;

	(void)state;
	if (pg_http_global_init(&err) < 0)
		return -1;
	snprintf(fake.dir, sizeof(fake.dir), "/tmp/pg-pw-test.XXXXXX");
	if (!mkdtemp(fake.dir))
		return -1;
	snprintf(fake.log, sizeof(fake.log), "%s/server.log", fake.dir);
	pg_proc_init(&fake.proc);
	fake.proc.argv = access("/usr/bin/python3", X_OK) == 0 ? argv_usr : argv_path;
	fake.proc.output_path = fake.log;
	fake.proc.cancel_flag = &fake.stop;
	fake.proc.kill_grace_ms = 2000;
	if (pg_proc_start(&fake.proc, &err) < 0) {
		fprintf(stderr, "fake patchwork: %s\n", err.msg);
		return -1;
	}
	if (pthread_create(&fake.waiter, NULL, fake_wait, NULL) != 0)
		return -1;
	fake.waiting = true;
	for (int i = 0; i < 300 && !port; i++) {
		port = fake_port();
		if (!port)
			pg_sleep_ms(50, NULL);
	}
	if (!port) {
		fprintf(stderr, "fake patchwork did not start (see %s)\n", fake.log);
		return -1;
	}
	snprintf(fake.web, sizeof(fake.web), "http://127.0.0.1:%ld", port);
	snprintf(fake.api, sizeof(fake.api), "%s/api/1.3", fake.web);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	/* SIGTERM through the cancel hook; the server exits at once. */
	fake.stop = 1;
	if (fake.waiting)
		pthread_join(fake.waiter, NULL);
	pg_proc_release(&fake.proc);
	unlink(fake.log);
	rmdir(fake.dir);
	pg_http_global_cleanup();
	return 0;
}

/* ------------------------------------------------------------------ */
/* Helpers talking to the fake                                         */

static struct pg_pw_client *client_with(unsigned int per_page, unsigned int max_pages,
					const char *token, long timeout_ms)
{
	struct pg_pw_opts o = PG_PW_OPTS_INIT;
	struct pg_pw_client *c = NULL;
	struct pg_err err = PG_ERR_INIT;

	o.base_url = fake.api;
	o.project = "dpdk";
	o.token = token;
	o.per_page = per_page;
	o.max_pages = max_pages;
	o.timeout_ms = timeout_ms;
	if (pg_pw_client_new(&o, &c, &err) < 0)
		fail_msg("pg_pw_client_new: %s", err.msg);
	return c;
}

static struct pg_pw_client *client(void)
{
	return client_with(PG_PW_PER_PAGE_MAX, 40, CI_TOKEN, 10000);
}

/* POST JSON to a control endpoint; the answer must be 200. */
static void control(const char *path, const char *json)
{
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	char url[256];

	snprintf(url, sizeof(url), "%s%s", fake.web, path);
	if (pg_http_post_json(url, json, NULL, &r, &err) < 0)
		fail_msg("%s: %s", url, err.msg);
	if (r.status != 200)
		fail_msg("%s: HTTP %ld: %s", url, r.status, pg_buf_str(&r.body));
	pg_http_response_release(&r);
}

/* GET a control endpoint and parse it (caller frees). */
static cJSON *control_get(const char *path)
{
	struct pg_http_response r = PG_HTTP_RESPONSE_INIT;
	struct pg_err err = PG_ERR_INIT;
	cJSON *root = NULL;
	char url[256];

	snprintf(url, sizeof(url), "%s%s", fake.web, path);
	if (pg_http_get(url, NULL, &r, &err) < 0 || r.status != 200)
		fail_msg("%s: %s (HTTP %ld)", url, err.msg, r.status);
	if (pg_json_parse(pg_buf_str(&r.body), r.body.len, &root, &err) < 0)
		fail_msg("%s: %s", url, err.msg);
	pg_http_response_release(&r);
	return root;
}

static int64_t fake_int(const char *path, const char *key)
{
	cJSON *root = control_get(path);
	int64_t v = (int64_t)cJSON_GetObjectItem(root, key)->valuedouble;

	cJSON_Delete(root);
	return v;
}

static int64_t requests_so_far(void)
{
	return fake_int("/_fake/checks", "requests");
}

/* The stored check with this id, as a JSON copy (caller frees). */
static cJSON *stored_check(int64_t id)
{
	cJSON *root = control_get("/_fake/checks"), *c, *copy = NULL;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "checks"))
		if ((int64_t)cJSON_GetObjectItem(c, "id")->valuedouble == id)
			copy = cJSON_Duplicate(c, true);
	cJSON_Delete(root);
	return copy;
}

static const char *str_field(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The last logged request with this method, as a JSON copy. */
static cJSON *last_request(const char *method)
{
	cJSON *log = control_get("/_fake/requests"), *e, *found = NULL;

	cJSON_ArrayForEach(e, log)
		if (!strcmp(str_field(e, "method"), method)) {
			cJSON_Delete(found);
			found = cJSON_Duplicate(e, true);
		}
	cJSON_Delete(log);
	return found;
}

/* ------------------------------------------------------------------ */
/* Pure helpers                                                        */

static void test_name_number(void **state)
{
	unsigned int n = 99, m = 99;

	(void)state;
	assert_true(pg_pw_name_number("[v2,1/2] lib: add world", &n, &m));
	assert_int_equal(n, 1);
	assert_int_equal(m, 2);
	assert_true(pg_pw_name_number("[dpdk-dev,RFC,v3,10/12] x", &n, &m));
	assert_int_equal(n, 10);
	assert_int_equal(m, 12);
	assert_true(pg_pw_name_number("[3/3] net/three: add three", &n, NULL));
	assert_int_equal(n, 3);
	assert_false(pg_pw_name_number("lib: fix hello", &n, &m));
	assert_false(pg_pw_name_number("[v2] lib: fix", &n, &m));
	assert_false(pg_pw_name_number("[v2,1/] lib", &n, &m));
	assert_false(pg_pw_name_number("[v2,a/2] lib", &n, &m));
	assert_false(pg_pw_name_number("[1/2 lib", &n, &m));
	/* The subject after the prefixes does not count. */
	assert_false(pg_pw_name_number("net/ice: 1/2 of it", &n, &m));
	assert_false(pg_pw_name_number(NULL, &n, &m));
}

static void test_slug_state_category(void **state)
{
	enum pg_pw_check_state s;
	char long_slug[PG_PW_CONTEXT_MAX + 2];

	(void)state;
	assert_true(pg_pw_slug_valid("perfgate-demo-Performance"));
	assert_true(pg_pw_slug_valid("a_b-9"));
	assert_false(pg_pw_slug_valid("ci/Intel-compilation"));
	assert_false(pg_pw_slug_valid("has space"));
	assert_false(pg_pw_slug_valid(""));
	assert_false(pg_pw_slug_valid(NULL));
	assert_false(pg_pw_slug_valid("caf\xc3\xa9"));
	memset(long_slug, 'a', sizeof(long_slug) - 1);
	long_slug[PG_PW_CONTEXT_MAX] = '\0';
	assert_true(pg_pw_slug_valid(long_slug));
	long_slug[PG_PW_CONTEXT_MAX] = 'a';
	long_slug[PG_PW_CONTEXT_MAX + 1] = '\0';
	assert_false(pg_pw_slug_valid(long_slug));

	assert_string_equal(pg_pw_check_state_name(PG_PW_CHECK_FAIL), "fail");
	assert_null(pg_pw_check_state_name((enum pg_pw_check_state)7));
	assert_int_equal(pg_pw_check_state_parse("warning", &s), 0);
	assert_int_equal(s, PG_PW_CHECK_WARNING);
	assert_int_equal(pg_pw_check_state_parse("failure", &s), -1);
	assert_int_equal(pg_pw_check_state_parse("Success", &s), -1);

	assert_true(pg_pw_category_valid("series-completed"));
	assert_true(pg_pw_category_valid("patch-comment-created"));
	assert_false(pg_pw_category_valid("series-complete"));
	assert_false(pg_pw_category_valid(NULL));

	assert_true(pg_pw_retryable(PG_EIO));
	assert_true(pg_pw_retryable(PG_ETIMEOUT));
	assert_false(pg_pw_retryable(PG_EINVAL));
	assert_false(pg_pw_retryable(PG_ECONFLICT));
	assert_false(pg_pw_retryable(PG_ENOTFOUND));
}

static void test_client_options(void **state)
{
	struct pg_pw_opts o = PG_PW_OPTS_INIT;
	struct pg_pw_client *c = (struct pg_pw_client *)(uintptr_t)1;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(pg_pw_client_new(&o, &c, &err), -1);
	assert_null(c);
	assert_int_equal(err.code, PG_EINVAL);
	o.base_url = "ftp://patches.dpdk.org/api/1.3";
	assert_int_equal(pg_pw_client_new(&o, &c, &err), -1);
	o.base_url = "https://patches.dpdk.org/api/1.3/";
	o.per_page = 251;
	assert_int_equal(pg_pw_client_new(&o, &c, &err), -1);
	assert_non_null(strstr(err.msg, "per_page"));
	o.per_page = 30;
	o.token = "two words";
	assert_int_equal(pg_pw_client_new(&o, &c, &err), -1);
	o.token = "abc\r\nX-Evil: 1";
	assert_int_equal(pg_pw_client_new(&o, &c, &err), -1);
	o.token = NULL;
	assert_int_equal(pg_pw_client_new(&o, &c, &err), 0);
	/* The trailing slash is dropped. */
	assert_string_equal(pg_pw_client_base(c), "https://patches.dpdk.org/api/1.3");
	pg_pw_client_free(c);
	pg_pw_client_free(NULL);
}

static void test_parse_series_errors(void **state)
{
	struct pg_pw_series s = { 0 };
	struct pg_err err = PG_ERR_INIT;
	static const char missing_id[] =
		"{\"name\":\"x\",\"mbox\":\"http://h/series/1/mbox/\",\"total\":1,"
		"\"received_all\":true,\"patches\":[]}";
	static const char bad_patch[] =
		"{\"id\":7,\"name\":null,\"mbox\":\"http://h/series/7/mbox/\",\"total\":2,"
		"\"received_all\":false,\"cover_letter\":null,\"patches\":["
		"{\"id\":1,\"msgid\":\"<a@b>\",\"name\":\"[1/2] a\",\"mbox\":\"http://h/1\"},"
		"{\"id\":2,\"msgid\":\"<c@d>\",\"name\":\"[2/2] b\"}]}";
	static const char wrong_type[] =
		"{\"id\":\"7\",\"mbox\":\"http://h/\",\"total\":1,\"received_all\":true,"
		"\"patches\":[]}";
	/* Unknown fields ignored, null name, no numbers: date order. */
	static const char by_date[] =
		"{\"id\":7,\"name\":null,\"mbox\":\"http://h/series/7/mbox/\",\"total\":2,"
		"\"received_all\":true,\"future\":{\"x\":1},\"submitter\":{\"name\":null,"
		"\"email\":\"a@b\"},\"patches\":["
		"{\"id\":9,\"msgid\":\"<a@b>\",\"name\":\"b\",\"mbox\":\"http://h/9\","
		"\"date\":\"2026-11-30T03:20:10\"},"
		"{\"id\":8,\"msgid\":\"<c@d>\",\"name\":\"[1/2] a\",\"mbox\":\"http://h/8\","
		"\"date\":\"2026-11-30T03:20:09\"}]}";

	(void)state;
	assert_int_equal(pg_pw_parse_series(missing_id, sizeof(missing_id) - 1,
					    "http://h/api/1.3/series/1/", &s, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_string_equal(err.msg, "GET http://h/api/1.3/series/1/: field 'id': missing");

	assert_int_equal(pg_pw_parse_series(bad_patch, sizeof(bad_patch) - 1,
					    "http://h/api/1.3/series/7/", &s, &err), -1);
	assert_string_equal(err.msg,
			    "GET http://h/api/1.3/series/7/: patches[1]: field 'mbox': missing");
	assert_null(s.patches);

	assert_int_equal(pg_pw_parse_series(wrong_type, sizeof(wrong_type) - 1, "U", &s,
					    &err), -1);
	assert_non_null(strstr(err.msg, "field 'id': expected an integer, got a string"));

	assert_int_equal(pg_pw_parse_series("[]", 2, "U", &s, &err), -1);
	assert_int_equal(pg_pw_parse_series("{", 1, "U", &s, &err), -1);

	assert_int_equal(pg_pw_parse_series(by_date, sizeof(by_date) - 1, "U", &s, &err), 0);
	assert_string_equal(s.name, "");
	assert_string_equal(s.submitter_name, "");
	assert_string_equal(s.submitter_email, "a@b");
	assert_false(s.has_cover);
	assert_int_equal(s.version, 1);
	assert_int_equal(s.npatches, 2);
	/* One patch has no number: date order, not number order. */
	assert_int_equal(s.patches[0].id, 8);
	assert_int_equal(s.patches[1].id, 9);
	assert_int_equal(s.patches[1].number, 0);
	pg_pw_series_release(&s);
	assert_null(s.name);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */

struct collect {
	int64_t ids[64];
	int64_t dates[64];
	int64_t series[64];
	size_t n;
	size_t stop_after;	/* 0: never */
	bool fail;
	char comment_url[256];
	int64_t comment_id, patch_id;
};

static int collect_cb(const struct pg_pw_event *ev, void *arg, struct pg_err *err)
{
	struct collect *c = arg;

	if (c->fail)
		return pg_err_set(err, PG_EIO, "store full");
	if (c->n < 64) {
		c->ids[c->n] = ev->id;
		c->dates[c->n] = ev->date_ms;
		c->series[c->n] = ev->series_id;
	}
	c->n++;
	if (ev->comment_url) {
		snprintf(c->comment_url, sizeof(c->comment_url), "%s", ev->comment_url);
		c->comment_id = ev->comment_id;
		c->patch_id = ev->patch_id;
	}
	return c->stop_after && c->n >= c->stop_after ? 1 : 0;
}

static void test_poll_pages(void **state)
{
	struct pg_pw_client *c = client_with(1, 40, NULL, 10000);
	struct pg_pw_poll_stats st;
	struct pg_err err = PG_ERR_INIT;
	struct collect col = { 0 };
	cJSON *req;

	(void)state;
	assert_int_equal(pg_pw_poll_events(c, "series-completed", -1, collect_cb, &col, &st,
					   &err), 0);
	/* Series 1, 2, 3 of project dpdk, then series 1 completed again
	 * (the ci project's series 4 stays out); one per page. */
	assert_int_equal(col.n, 4);
	assert_int_equal(st.events, 4);
	assert_int_equal(st.pages, 4);
	assert_false(st.more);
	assert_false(st.stopped);
	assert_int_equal(col.series[0], 1);
	assert_int_equal(col.series[1], 2);
	assert_int_equal(col.series[2], 3);
	assert_int_equal(col.series[3], 1);
	for (size_t i = 1; i < col.n; i++)
		assert_true(col.dates[i] > col.dates[i - 1]);
	assert_int_equal(st.last_date_ms, col.dates[3]);
	/* The fixture's repeated series-completed is at 06:00:00 UTC. */
	assert_int_equal(col.dates[3], 1796018400000LL);
	req = last_request("GET");
	assert_non_null(strstr(str_field(req, "query"), "page=4"));
	assert_non_null(strstr(str_field(req, "query"), "order=date"));
	/* Reading is public: no token travels with GETs. */
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(req, "authorization")));
	cJSON_Delete(req);
	pg_pw_client_free(c);
}

static void test_poll_since(void **state)
{
	struct pg_pw_client *c = client();
	struct pg_err err = PG_ERR_INIT;
	struct collect all = { 0 }, col = { 0 };
	struct pg_pw_poll_stats st;
	char ts[PG_TIME_UTC_MAX], want[64];
	cJSON *req;

	(void)state;
	assert_int_equal(pg_pw_poll_events(c, "series-completed", -1, collect_cb, &all,
					   NULL, &err), 0);
	assert_int_equal(all.n, 4);
	assert_int_equal(pg_pw_poll_events(c, "series-completed", all.dates[1], collect_cb,
					   &col, &st, &err), 0);
	/* Inclusive: the event at since comes again. */
	assert_int_equal(col.n, 3);
	assert_int_equal(col.ids[0], all.ids[1]);
	assert_int_equal(st.pages, 1);
	/* Sent naive, without milliseconds: never a "Z" (HTTP 500). */
	req = last_request("GET");
	assert_int_equal(pg_time_format_utc(all.dates[1], PG_TIME_NAIVE, ts, sizeof(ts)), 19);
	snprintf(want, sizeof(want), "since=%s", ts);
	assert_non_null(strstr(str_field(req, "query"), want));
	assert_null(strchr(str_field(req, "query"), 'Z'));
	assert_int_equal(cJSON_GetObjectItem(req, "status")->valueint, 200);
	cJSON_Delete(req);
	/* A cursor past everything: nothing. */
	memset(&col, 0, sizeof(col));
	assert_int_equal(pg_pw_poll_events(c, "series-completed", all.dates[3] + 1000,
					   collect_cb, &col, &st, &err), 0);
	assert_int_equal(col.n, 0);
	assert_int_equal(st.last_date_ms, -1);
	pg_pw_client_free(c);
}

static void test_poll_bounds_and_stop(void **state)
{
	struct pg_pw_client *c = client_with(1, 2, NULL, 10000);
	struct pg_err err = PG_ERR_INIT;
	struct collect col = { 0 };
	struct pg_pw_poll_stats st;
	int64_t before;

	(void)state;
	assert_int_equal(pg_pw_poll_events(c, "series-completed", -1, collect_cb, &col, &st,
					   &err), 0);
	assert_int_equal(col.n, 2);
	assert_int_equal(st.pages, 2);
	assert_true(st.more);
	assert_int_equal(st.last_date_ms, col.dates[1]);

	memset(&col, 0, sizeof(col));
	col.stop_after = 1;
	assert_int_equal(pg_pw_poll_events(c, "series-completed", -1, collect_cb, &col, &st,
					   &err), 0);
	assert_int_equal(col.n, 1);
	assert_true(st.stopped);
	assert_false(st.more);

	memset(&col, 0, sizeof(col));
	col.fail = true;
	assert_int_equal(pg_pw_poll_events(c, "series-completed", -1, collect_cb, &col, &st,
					   &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_non_null(strstr(err.msg, "store full"));
	assert_non_null(strstr(err.msg, "/events/?project=dpdk&category=series-completed"));

	/* Unknown categories fail here: Patchwork would answer 200 []. */
	before = requests_so_far();
	assert_int_equal(pg_pw_poll_events(c, "series-complete", -1, collect_cb, &col, &st,
					   &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(requests_so_far(), before);
	pg_pw_client_free(c);
}

static void test_poll_outage(void **state)
{
	struct pg_pw_client *c = client_with(1, 40, NULL, 10000);
	struct pg_err err = PG_ERR_INIT;
	struct collect col = { 0 };

	(void)state;
	/* Server trouble and dropped connections are retryable. */
	control("/_fake/fail", "{\"count\":1,\"status\":503,\"path\":\"/api/1.3/events/\","
		"\"retry_after\":\"5\"}");
	assert_int_equal(pg_pw_poll_events(c, "series-completed", -1, collect_cb, &col, NULL,
					   &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_true(pg_pw_retryable(err.code));
	assert_non_null(strstr(err.msg, "HTTP 503"));
	assert_int_equal(col.n, 0);
	/* libcurl retries once, on a new connection, a request whose reused
	 * connection died unanswered: drop both. */
	control("/_fake/fail", "{\"count\":2,\"drop\":true,\"path\":\"/api/1.3/events/\"}");
	assert_int_equal(pg_pw_poll_events(c, "series-completed", -1, collect_cb, &col, NULL,
					   &err), -1);
	assert_int_equal(err.code, PG_EIO);
	control("/_fake/reset", "{}");
	pg_pw_client_free(c);
}

static void test_comment_event(void **state)
{
	struct pg_pw_client *c = client();
	struct pg_err err = PG_ERR_INIT;
	struct collect col = { 0 };
	struct pg_pw_comment cm = { 0 };
	char want[160], bad[160];

	(void)state;
	assert_int_equal(pg_pw_poll_events(c, "patch-comment-created", -1, collect_cb, &col,
					   NULL, &err), 0);
	assert_int_equal(col.n, 1);
	assert_int_equal(col.comment_id, 7001);
	assert_int_equal(col.patch_id, 101);
	snprintf(want, sizeof(want), "%s/patches/101/comments/7001/", fake.api);
	assert_string_equal(col.comment_url, want);

	assert_int_equal(pg_pw_get_comment(c, col.comment_url, &cm, &err), 0);
	assert_int_equal(cm.id, 7001);
	assert_string_equal(cm.msgid, "<reply-1.dan@example.com>");
	assert_string_equal(cm.subject, "Re: [PATCH v2 1/2] lib: add world");
	assert_string_equal(cm.submitter_name, "Dan Reviewer");
	assert_non_null(strstr(cm.content,
			       "\nRecheck-request: perfgate-demo-Performance, iol-intel-Performance\n"));
	assert_int_equal(cm.date_ms, 1796020200000LL);
	pg_pw_comment_release(&cm);

	snprintf(bad, sizeof(bad), "%s/patches/101/comments/1/", fake.api);
	assert_int_equal(pg_pw_get_comment(c, bad, &cm, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_int_equal(pg_pw_get_comment(c, "file:///etc/passwd", &cm, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_pw_client_free(c);
}

/* ------------------------------------------------------------------ */
/* Series and mboxes                                                   */

static void test_get_series(void **state)
{
	struct pg_pw_client *c = client();
	struct pg_err err = PG_ERR_INIT;
	struct pg_pw_series s = { 0 };

	(void)state;
	/* Patchwork lists 2/3, 3/3, 1/3 (by date); we want 1, 2, 3. */
	assert_int_equal(pg_pw_get_series(c, 2, &s, &err), 0);
	assert_int_equal(s.id, 2);
	assert_string_equal(s.name, "[1/3] net/one: add one");
	assert_int_equal(s.total, 3);
	assert_int_equal(s.received_total, 3);
	assert_true(s.received_all);
	assert_false(s.has_cover);
	assert_string_equal(s.submitter_name, "Bob Hacker");
	assert_string_equal(s.submitter_email, "bob@example.org");
	assert_int_equal(s.npatches, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(s.patches[i].number, i + 1);
		assert_int_equal(s.patches[i].id, 201 + (int64_t)i);
		assert_non_null(strstr(s.patches[i].mbox_url, "/project/dpdk/patch/"));
		assert_int_equal(s.patches[i].msgid[0], '<');
	}
	assert_true(s.patches[0].date_ms > s.patches[1].date_ms);
	assert_non_null(strstr(s.mbox_url, "/series/2/mbox/"));

	assert_int_equal(pg_pw_get_series(c, 1, &s, &err), 0);
	assert_string_equal(s.name, "Add world and bang");
	assert_int_equal(s.version, 2);
	assert_true(s.has_cover);
	assert_int_equal(s.cover.id, 1001);
	assert_string_equal(s.cover.msgid, "<cover.1796014702.git.alice@example.com>");
	assert_string_equal(s.cover.name, "[v2,0/2] Add world and bang");
	assert_non_null(strstr(s.cover.mbox_url, "/project/dpdk/cover/"));
	assert_int_equal(s.npatches, 2);
	assert_int_equal(s.patches[0].id, 101);
	assert_int_equal(s.patches[1].id, 102);

	assert_int_equal(pg_pw_get_series(c, 999, &s, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/series/999/: HTTP 404"));
	assert_null(s.patches);
	assert_int_equal(pg_pw_get_series(c, 0, &s, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_pw_series_release(&s);
	pg_pw_client_free(c);
}

static void test_download_mbox(void **state)
{
	struct pg_pw_client *c = client();
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf mbox = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf small = PG_BUF_INIT(100);
	struct pg_pw_series s = { 0 };
	const char *p;
	char url[160];
	int n = 0;

	(void)state;
	/* /patch/N/mbox/ answers 302 to the msgid URL. */
	snprintf(url, sizeof(url), "%s/patch/102/mbox/", fake.web);
	assert_int_equal(pg_pw_download_mbox(c, url, &mbox, &err), 0);
	assert_memory_equal(mbox.data, "From patchwork Mon Nov 30 03:20:09 2026\n", 40);
	assert_non_null(strstr(mbox.data, "\nX-Patchwork-Id: 102\n"));
	/* No >From escaping. */
	assert_non_null(strstr(mbox.data, "\n\nFrom the body: this line starts with From"));
	assert_null(strstr(mbox.data, ">From"));
	assert_non_null(strstr(mbox.data, "\ndiff --git a/lib/hello.c b/lib/hello.c\n"));

	/* The series mbox: both patches by number, no cover letter. */
	assert_int_equal(pg_pw_get_series(c, 1, &s, &err), 0);
	assert_int_equal(pg_pw_download_mbox(c, s.mbox_url, &mbox, &err), 0);
	for (p = mbox.data; (p = strstr(p, "From patchwork ")); p++)
		n++;
	assert_int_equal(n, 2);
	assert_null(strstr(mbox.data, "0/2"));
	assert_true(strstr(mbox.data, "[PATCH v2 1/2]") < strstr(mbox.data, "[PATCH v2 2/2]"));
	assert_int_equal(pg_pw_download_mbox(c, s.cover.mbox_url, &mbox, &err), 0);
	assert_non_null(strstr(mbox.data, "Subject: [PATCH v2 0/2] Add world and bang"));

	/* Bounded by the buffer. */
	assert_int_equal(pg_pw_download_mbox(c, s.mbox_url, &small, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_int_equal(small.len, 0);

	snprintf(url, sizeof(url), "%s/patch/99999/mbox/", fake.web);
	assert_int_equal(pg_pw_download_mbox(c, url, &mbox, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_int_equal(pg_pw_download_mbox(c, "/patch/1/mbox/", &mbox, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_pw_series_release(&s);
	pg_buf_release(&mbox);
	pg_buf_release(&small);
	pg_pw_client_free(c);
}

/* ------------------------------------------------------------------ */
/* Checks                                                              */

static void test_post_check_created(void **state)
{
	struct pg_pw_client *c = client();
	struct pg_pw_check_result res = PG_PW_CHECK_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	cJSON *stored, *req;

	(void)state;
	assert_int_equal(pg_pw_post_check(c, 101, PG_PW_CHECK_SUCCESS, "unit-created",
					  "Performance Testing PASS",
					  "https://perfgate.example.org/runs/1", &res, &err), 0);
	assert_int_equal(res.status, 201);
	assert_true(res.check_id > 0);
	assert_non_null(strstr(pg_buf_str(&res.body), "\"context\":\"unit-created\""));
	stored = stored_check(res.check_id);
	assert_non_null(stored);
	assert_int_equal(cJSON_GetObjectItem(stored, "patch")->valueint, 101);
	assert_int_equal(cJSON_GetObjectItem(stored, "user")->valueint, 1);
	assert_string_equal(str_field(stored, "state"), "success");
	assert_string_equal(str_field(stored, "description"), "Performance Testing PASS");
	assert_string_equal(str_field(stored, "target_url"),
			    "https://perfgate.example.org/runs/1");
	cJSON_Delete(stored);
	/* JSON with its Content-Type and the token. */
	req = last_request("POST");
	assert_string_equal(str_field(req, "content_type"), "application/json");
	assert_string_equal(str_field(req, "authorization"), "Token");
	assert_string_equal(str_field(req, "body"),
			    "{\"state\":\"success\",\"context\":\"unit-created\","
			    "\"description\":\"Performance Testing PASS\","
			    "\"target_url\":\"https://perfgate.example.org/runs/1\"}");
	cJSON_Delete(req);

	/* No description or URL: left out, stored as null. */
	assert_int_equal(pg_pw_post_check(c, 101, PG_PW_CHECK_PENDING, "unit-created", NULL,
					  "", &res, &err), 0);
	stored = stored_check(res.check_id);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(stored, "description")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(stored, "target_url")));
	cJSON_Delete(stored);
	pg_pw_check_result_release(&res);
	pg_pw_client_free(c);
}

static void test_post_check_invalid(void **state)
{
	struct pg_pw_client *c = client(), *anon = client_with(30, 40, NULL, 10000);
	struct pg_pw_check_result res = PG_PW_CHECK_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	char url[PG_PW_TARGET_URL_MAX + 2], desc[PG_PW_DESCRIPTION_MAX + 2];
	int64_t posts = fake_int("/_fake/checks", "requests");

	(void)state;
	assert_int_equal(pg_pw_post_check(c, 101, PG_PW_CHECK_SUCCESS, "ci/Intel-compilation",
					  NULL, NULL, &res, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "not a slug"));
	assert_int_equal(res.status, 0);
	memset(url, 'x', sizeof(url) - 1);
	url[sizeof(url) - 1] = '\0';
	memcpy(url, "https://", 8);
	assert_int_equal(pg_pw_post_check(c, 101, PG_PW_CHECK_SUCCESS, "ctx", NULL, url,
					  &res, &err), -1);
	assert_non_null(strstr(err.msg, "over 200"));
	assert_int_equal(pg_pw_post_check(c, 101, PG_PW_CHECK_SUCCESS, "ctx", NULL,
					  "ftp://x.org/a", &res, &err), -1);
	assert_int_equal(pg_pw_post_check(c, 101, PG_PW_CHECK_SUCCESS, "ctx", NULL,
					  "https://x.org/a b", &res, &err), -1);
	memset(desc, 'd', sizeof(desc) - 1);
	desc[sizeof(desc) - 1] = '\0';
	assert_int_equal(pg_pw_post_check(c, 101, PG_PW_CHECK_SUCCESS, "ctx", desc, NULL,
					  &res, &err), -1);
	assert_int_equal(pg_pw_post_check(c, 0, PG_PW_CHECK_SUCCESS, "ctx", NULL, NULL,
					  &res, &err), -1);
	assert_int_equal(pg_pw_post_check(c, 101, (enum pg_pw_check_state)9, "ctx", NULL,
					  NULL, &res, &err), -1);
	assert_int_equal(pg_pw_post_check(anon, 101, PG_PW_CHECK_SUCCESS, "ctx", NULL, NULL,
					  &res, &err), -1);
	assert_non_null(strstr(err.msg, "no Patchwork token"));
	assert_int_equal(err.code, PG_EINVAL);
	/* Nothing was sent. */
	assert_int_equal(fake_int("/_fake/checks", "requests"), posts);
	pg_pw_check_result_release(&res);
	pg_pw_client_free(c);
	pg_pw_client_free(anon);
}

static void test_post_check_refused(void **state)
{
	struct pg_pw_client *bob = client_with(30, 40, BOB_TOKEN, 10000);
	struct pg_pw_client *bad = client_with(30, 40, "0000", 10000);
	struct pg_pw_client *c = client();
	struct pg_pw_check_result res = PG_PW_CHECK_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	/* 403: recorded with its body, not retryable. */
	assert_int_equal(pg_pw_post_check(bob, 101, PG_PW_CHECK_SUCCESS, "unit-refused", NULL,
					  NULL, &res, &err), -1);
	assert_int_equal(res.status, 403);
	assert_int_equal(err.code, PG_EINVAL);
	assert_false(pg_pw_retryable(err.code));
	assert_string_equal(pg_buf_str(&res.body),
			    "{\"detail\":\"You do not have permission to perform this action.\"}");
	assert_non_null(strstr(err.msg, "HTTP 403"));
	assert_int_equal(pg_pw_post_check(bad, 101, PG_PW_CHECK_SUCCESS, "unit-refused", NULL,
					  NULL, &res, &err), -1);
	assert_int_equal(res.status, 403);
	assert_string_equal(pg_buf_str(&res.body), "{\"detail\":\"Invalid token.\"}");
	/* 400 from the server: a URL we let through, Django's validator
	 * does not (no dot in the host). */
	assert_int_equal(pg_pw_post_check(c, 101, PG_PW_CHECK_SUCCESS, "unit-refused", NULL,
					  "http://nodot/x", &res, &err), -1);
	assert_int_equal(res.status, 400);
	assert_int_equal(err.code, PG_EINVAL);
	assert_string_equal(pg_buf_str(&res.body), "{\"target_url\":[\"Enter a valid URL.\"]}");
	/* No such patch: a 4xx like the others, not retryable. */
	assert_int_equal(pg_pw_post_check(c, 99999, PG_PW_CHECK_SUCCESS, "unit-refused", NULL,
					  NULL, &res, &err), -1);
	assert_int_equal(res.status, 404);
	assert_int_equal(err.code, PG_EINVAL);
	pg_pw_check_result_release(&res);
	pg_pw_client_free(bob);
	pg_pw_client_free(bad);
	pg_pw_client_free(c);
}

static void test_post_check_server_trouble(void **state)
{
	struct pg_pw_client *c = client();
	struct pg_pw_check_result res = PG_PW_CHECK_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	int64_t id = 0;

	(void)state;
	control("/_fake/fail", "{\"count\":1,\"status\":500,\"method\":\"POST\"}");
	assert_int_equal(pg_pw_post_check(c, 102, PG_PW_CHECK_SUCCESS, "unit-trouble", NULL,
					  NULL, &res, &err), -1);
	assert_int_equal(res.status, 500);
	assert_int_equal(err.code, PG_EIO);
	assert_true(pg_pw_retryable(err.code));
	assert_non_null(strstr(pg_buf_str(&res.body), "Server Error (500)"));

	control("/_fake/fail", "{\"count\":1,\"status\":503,\"method\":\"POST\","
		"\"retry_after\":\"7\"}");
	assert_int_equal(pg_pw_post_check(c, 102, PG_PW_CHECK_SUCCESS, "unit-trouble", NULL,
					  NULL, &res, &err), -1);
	assert_int_equal(res.status, 503);
	assert_int_equal(res.retry_after_ms, 7000);
	assert_int_equal(err.code, PG_EIO);

	/* Twice: libcurl retries once on a new connection. */
	control("/_fake/fail", "{\"count\":2,\"drop\":true,\"method\":\"POST\"}");
	assert_int_equal(pg_pw_post_check(c, 102, PG_PW_CHECK_SUCCESS, "unit-trouble", NULL,
					  NULL, &res, &err), -1);
	assert_int_equal(res.status, 0);
	assert_int_equal(err.code, PG_EIO);
	control("/_fake/reset", "{}");

	/* A lookup answered 200 with JSON cut short: worth another try. */
	control("/_fake/fail", "{\"count\":1,\"garble\":true,\"method\":\"GET\"}");
	assert_int_equal(pg_pw_find_check(c, 102, PG_PW_CHECK_SUCCESS, "unit-trouble", NULL,
					  NULL, -1, &id, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_true(pg_pw_retryable(err.code));
	assert_non_null(strstr(err.msg, "invalid JSON"));
	control("/_fake/reset", "{}");

	/* None of these created a check. */
	assert_int_equal(pg_pw_find_check(c, 102, PG_PW_CHECK_SUCCESS, "unit-trouble", NULL,
					  NULL, -1, &id, &err), 0);
	assert_int_equal(pg_pw_post_check(c, 102, PG_PW_CHECK_SUCCESS, "unit-trouble", NULL,
					  NULL, &res, &err), 0);
	assert_int_equal(res.status, 201);
	control("/_fake/reset", "{}");
	pg_pw_check_result_release(&res);
	pg_pw_client_free(c);
}

/* The reply is lost after the check was made: a timeout, then find. */
static void test_post_check_timeout_then_find(void **state)
{
	struct pg_pw_client *c = client_with(30, 40, CI_TOKEN, 700);
	struct pg_pw_check_result res = PG_PW_CHECK_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	int64_t started = pg_time_wall_ms(), id = 0;
	cJSON *root, *chk;
	int rc = 0, n = 0;

	(void)state;
	control("/_fake/fail", "{\"count\":1,\"hang\":1.5,\"method\":\"POST\"}");
	assert_int_equal(pg_pw_post_check(c, 102, PG_PW_CHECK_FAIL, "unit-timeout",
					  "Performance Testing FAIL", NULL, &res, &err), -1);
	assert_int_equal(err.code, PG_ETIMEOUT);
	assert_true(pg_pw_retryable(err.code));
	assert_int_equal(res.status, 0);
	/* The server finishes the request after the client gave up. */
	for (int i = 0; i < 100 && rc == 0; i++) {
		rc = pg_pw_find_check(c, 102, PG_PW_CHECK_FAIL, "unit-timeout",
				      "Performance Testing FAIL", NULL, started - 60000, &id,
				      &err);
		if (rc == 0)
			pg_sleep_ms(50, NULL);
	}
	assert_int_equal(rc, 1);
	assert_true(id > 0);
	/* NULL and "" are the same target_url. */
	assert_int_equal(pg_pw_find_check(c, 102, PG_PW_CHECK_FAIL, "unit-timeout",
					  "Performance Testing FAIL", "", started - 60000, NULL,
					  &err), 1);
	/* Found, so the caller does not post again: exactly one. */
	root = control_get("/_fake/checks");
	cJSON_ArrayForEach(chk, cJSON_GetObjectItem(root, "checks"))
		n += !strcmp(str_field(chk, "context"), "unit-timeout");
	cJSON_Delete(root);
	assert_int_equal(n, 1);
	pg_pw_check_result_release(&res);
	pg_pw_client_free(c);
}

static void test_find_check(void **state)
{
	struct pg_pw_client *c = client();
	struct pg_pw_client *paged = client_with(1, 40, CI_TOKEN, 10000);
	struct pg_pw_client *few = client_with(1, 2, CI_TOKEN, 10000);
	struct pg_pw_check_result res = PG_PW_CHECK_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_pw_opts o = PG_PW_OPTS_INIT;
	struct pg_pw_client *as_bob;
	int64_t id = 0, ids[3];
	static const char *const descs[] = { "first", "second", "third" };

	(void)state;
	assert_int_equal(pg_pw_find_check(c, 201, PG_PW_CHECK_SUCCESS, "unit-find", "second",
					  NULL, -1, &id, &err), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pg_pw_post_check(c, 201, PG_PW_CHECK_SUCCESS, "unit-find",
						  descs[i], "https://perfgate.example.org/r/2",
						  &res, &err), 0);
		ids[i] = res.check_id;
	}
	/* Across pages of one check each. */
	assert_int_equal(pg_pw_find_check(paged, 201, PG_PW_CHECK_SUCCESS, "unit-find",
					  "third", "https://perfgate.example.org/r/2", -1, &id,
					  &err), 1);
	assert_int_equal(id, ids[2]);
	assert_int_equal(pg_pw_find_check(c, 201, PG_PW_CHECK_SUCCESS, "unit-find", "second",
					  "https://perfgate.example.org/r/2", -1, &id, &err), 1);
	assert_int_equal(id, ids[1]);
	/* Any difference is another check. */
	assert_int_equal(pg_pw_find_check(c, 201, PG_PW_CHECK_WARNING, "unit-find", "second",
					  "https://perfgate.example.org/r/2", -1, &id, &err), 0);
	assert_int_equal(pg_pw_find_check(c, 201, PG_PW_CHECK_SUCCESS, "unit-find", "second",
					  NULL, -1, &id, &err), 0);
	assert_int_equal(pg_pw_find_check(c, 201, PG_PW_CHECK_SUCCESS, "unit-find2", "second",
					  "https://perfgate.example.org/r/2", -1, &id, &err), 0);
	assert_int_equal(pg_pw_find_check(c, 202, PG_PW_CHECK_SUCCESS, "unit-find", "second",
					  "https://perfgate.example.org/r/2", -1, &id, &err), 0);
	/* Too old to be the lost one. */
	assert_int_equal(pg_pw_find_check(c, 201, PG_PW_CHECK_SUCCESS, "unit-find", "second",
					  "https://perfgate.example.org/r/2",
					  pg_time_wall_ms() + 3600000, &id, &err), 0);
	/* More pages than allowed is an error, not "not found". */
	assert_int_equal(pg_pw_find_check(few, 201, PG_PW_CHECK_SUCCESS, "unit-find", "x",
					  NULL, -1, &id, &err), -1);
	assert_non_null(strstr(err.msg, "more than 2 pages"));
	/* Another user's checks do not count when the user is known. */
	o.base_url = fake.api;
	o.username = "bob";
	assert_int_equal(pg_pw_client_new(&o, &as_bob, &err), 0);
	assert_int_equal(pg_pw_find_check(as_bob, 201, PG_PW_CHECK_SUCCESS, "unit-find",
					  "second", "https://perfgate.example.org/r/2", -1, &id,
					  &err), 0);
	pg_pw_client_free(as_bob);
	o.username = "ci";
	assert_int_equal(pg_pw_client_new(&o, &as_bob, &err), 0);
	assert_int_equal(pg_pw_find_check(as_bob, 201, PG_PW_CHECK_SUCCESS, "unit-find",
					  "second", "https://perfgate.example.org/r/2", -1, &id,
					  &err), 1);
	pg_pw_client_free(as_bob);
	/* Bad arguments and no such patch. */
	assert_int_equal(pg_pw_find_check(c, 201, PG_PW_CHECK_SUCCESS, "a/b", NULL, NULL, -1,
					  &id, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(pg_pw_find_check(c, 99999, PG_PW_CHECK_SUCCESS, "unit-find", NULL,
					  NULL, -1, &id, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	pg_pw_check_result_release(&res);
	pg_pw_client_free(c);
	pg_pw_client_free(paged);
	pg_pw_client_free(few);
}

static void test_find_patch(void **state)
{
	struct pg_pw_client *c = client();
	struct pg_pw_opts o = PG_PW_OPTS_INIT;
	struct pg_pw_client *other;
	struct pg_err err = PG_ERR_INIT;
	int64_t id = 0;

	(void)state;
	assert_int_equal(pg_pw_find_patch(c, "<981690c7b9fd4141f2d95fc6d4d26902ff0964a4."
					  "1796014702.git.alice@example.com>", &id, &err), 1);
	assert_int_equal(id, 101);
	assert_int_equal(pg_pw_find_patch(c, "e8066da13f2b3cc5fce95648547b13983b914b48."
					  "1796014702.git.alice@example.com", &id, &err), 1);
	assert_int_equal(id, 203);
	/* The same mail in two projects: the configured one's. */
	assert_int_equal(pg_pw_find_patch(c, "20261130050000.4242-1-carol@example.net", &id,
					  &err), 1);
	assert_int_equal(id, 301);
	o.base_url = fake.api;
	o.project = "ci";
	assert_int_equal(pg_pw_client_new(&o, &other, &err), 0);
	assert_int_equal(pg_pw_find_patch(other, "20261130050000.4242-1-carol@example.net", &id,
					  &err), 1);
	assert_int_equal(id, 401);
	pg_pw_client_free(other);
	/* Not there (yet). */
	id = 7;
	assert_int_equal(pg_pw_find_patch(c, "<nowhere@example.org>", &id, &err), 0);
	assert_int_equal(id, 7);
	/* API 1.1 has no msgid filter and lists every patch: none is taken
	 * for the one asked. */
	o.project = "dpdk";
	{
		char base[128];

		snprintf(base, sizeof(base), "%s/api/1.1", fake.web);
		o.base_url = base;
		assert_int_equal(pg_pw_client_new(&o, &other, &err), 0);
		assert_int_equal(pg_pw_find_patch(other, "<nowhere@example.org>", &id, &err), 0);
		pg_pw_client_free(other);
	}
	/* Bad arguments. */
	assert_int_equal(pg_pw_find_patch(c, "<>", &id, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(pg_pw_find_patch(c, "a b@example.org", &id, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	o.base_url = fake.api;
	o.project = NULL;
	assert_int_equal(pg_pw_client_new(&o, &other, &err), 0);
	assert_int_equal(pg_pw_find_patch(other, "x@example.org", &id, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	pg_pw_client_free(other);
	pg_pw_client_free(c);
}

/* The pure parsers of each answer (what fuzz_patchwork feeds), and a
 * date before 1970, which the fuzzer found read as a negative cursor
 * ("none" is -1, and a negative since means "from the beginning"). */
static void test_parse_pages(void **state)
{
	static const char events[] =
		"[{\"id\":1,\"category\":\"series-completed\",\"date\":\"2026-11-30T10:00:00\","
		"\"payload\":{\"series\":{\"id\":7}}},"
		"{\"id\":2,\"category\":\"patch-comment-created\",\"date\":\"2026-11-30T10:01:00\","
		"\"payload\":{\"patch\":{\"id\":101},\"comment\":{\"id\":5}}}]";
	static const char old[] =
		"[{\"id\":3,\"category\":\"series-completed\",\"date\":\"1014-01-01T00:00:00\","
		"\"payload\":{\"series\":{\"id\":7}}}]";
	static const char comment[] =
		"{\"id\":5,\"msgid\":\"<r@x>\",\"content\":\"Recheck-request: a\\n\","
		"\"submitter\":null}";
	static const char patches[] = "[{\"id\":3,\"msgid\":\"<o@x>\"},{\"id\":4,\"msgid\":\"<m@x>\"}]";
	static const char checks[] =
		"[{\"id\":8,\"state\":\"success\",\"context\":\"c\",\"description\":\"d\"},"
		"{\"id\":9,\"state\":\"success\",\"context\":\"c\",\"description\":\"d\"},"
		"{\"id\":10,\"state\":\"fail\",\"context\":\"c\",\"description\":\"d\"}]";
	struct pg_pw_poll_stats st;
	struct pg_pw_comment cm = { 0 };
	struct collect col = { 0 };
	struct pg_err err = PG_ERR_INIT;
	int64_t id = 0;

	(void)state;
	assert_int_equal(pg_pw_parse_events(events, sizeof(events) - 1, "http://h/api/1.3",
					    "patch-comment-created", collect_cb, &col, &st, &err), 0);
	assert_int_equal(col.n, 1);
	assert_int_equal(st.events, 1);
	assert_string_equal(col.comment_url, "http://h/api/1.3/patches/101/comments/5/");

	memset(&col, 0, sizeof(col));
	assert_int_equal(pg_pw_parse_events(old, sizeof(old) - 1, "http://h/api/1.3",
					    "series-completed", collect_cb, &col, &st, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_string_equal(err.msg, "events[0]: field 'date': before 1970: "
			    "'1014-01-01T00:00:00'");
	assert_int_equal(col.n, 0);
	assert_int_equal(st.last_date_ms, -1);

	assert_int_equal(pg_pw_parse_comment(comment, sizeof(comment) - 1, "U", &cm, &err), 0);
	assert_string_equal(cm.msgid, "<r@x>");
	assert_string_equal(cm.content, "Recheck-request: a\n");
	pg_pw_comment_release(&cm);
	assert_int_equal(pg_pw_parse_comment("{}", 2, "U", &cm, &err), -1);
	assert_string_equal(err.msg, "GET U: field 'id': missing");

	assert_int_equal(pg_pw_parse_patch_list(patches, sizeof(patches) - 1, "<m@x>", &id, &err),
			 1);
	assert_int_equal(id, 4);
	assert_int_equal(pg_pw_parse_patch_list(patches, sizeof(patches) - 1, "<z@x>", &id, &err),
			 0);
	assert_int_equal(pg_pw_parse_patch_list("{}", 2, "<z@x>", &id, &err), -1);
	assert_string_equal(err.msg, "expected an array of patches, got an object");

	assert_int_equal(pg_pw_parse_check_list(checks, sizeof(checks) - 1, PG_PW_CHECK_SUCCESS,
						"c", "d", NULL, -1, &id, &err), 1);
	assert_int_equal(id, 9);
	assert_int_equal(pg_pw_parse_check_list("[{\"id\":1}]", 10, PG_PW_CHECK_SUCCESS, "c", "d",
						NULL, -1, &id, &err), -1);
	assert_string_equal(err.msg, "checks[0]: field 'state': missing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_number),
		cmocka_unit_test(test_slug_state_category),
		cmocka_unit_test(test_client_options),
		cmocka_unit_test(test_parse_series_errors),
		cmocka_unit_test(test_parse_pages),
		cmocka_unit_test(test_poll_pages),
		cmocka_unit_test(test_poll_since),
		cmocka_unit_test(test_poll_bounds_and_stop),
		cmocka_unit_test(test_poll_outage),
		cmocka_unit_test(test_comment_event),
		cmocka_unit_test(test_get_series),
		cmocka_unit_test(test_download_mbox),
		cmocka_unit_test(test_post_check_created),
		cmocka_unit_test(test_post_check_invalid),
		cmocka_unit_test(test_post_check_refused),
		cmocka_unit_test(test_post_check_server_trouble),
		cmocka_unit_test(test_post_check_timeout_then_find),
		cmocka_unit_test(test_find_check),
		cmocka_unit_test(test_find_patch),
	};

	return cmocka_run_group_tests_name("patchwork", tests, group_setup, group_teardown);
}
