/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the API's pure parts: routing and path checks
 * (api_route.c), tokens (api_auth.c), the Prometheus text (api_metrics.c),
 * request bodies and queries (api_parse_* in api_agent.c and api_admin.c),
 * the error-to-status mapping and the mbox writer (api_read.c).  The
 * server itself is driven over HTTP by tests/integration/t_api.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_int.h"
#include "buf.h"
#include "err.h"
#include "profile.h"

/* ---- routing ------------------------------------------------------------ */

static void expect_route(const char *method, const char *path, enum api_ep ep, int64_t id)
{
	struct api_route r;
	const char *allow = "x";
	int status = api_route_match(method, path, &r, &allow);

	if (status != 200 || r.ep != ep || r.id != id)
		fail_msg("%s %s: status %d, endpoint %s, id %lld; expected 200, %s, %lld", method,
			 path, status, api_route_name(r.ep), (long long)r.id, api_route_name(ep),
			 (long long)id);
	assert_null(allow);
}

static void expect_status(const char *method, const char *path, int want, const char *allow)
{
	struct api_route r;
	const char *got_allow = NULL;
	int status = api_route_match(method, path, &r, &got_allow);

	if (status != want)
		fail_msg("%s %s: status %d, expected %d", method, path, status, want);
	if (allow)
		assert_string_equal(got_allow, allow);
	else
		assert_null(got_allow);
	if (want == 404)
		assert_int_equal(r.ep, API_EP_NONE);
}

static void test_route_endpoints(void **state)
{
	struct api_route r;

	(void)state;
	expect_route("GET", "/metrics", API_EP_METRICS, 0);
	expect_route("POST", "/api/v1/agents/register", API_EP_REGISTER, 0);
	expect_route("GET", "/api/v1/agents", API_EP_AGENTS, 0);
	expect_route("POST", "/api/v1/lease", API_EP_LEASE, 0);
	expect_route("GET", "/api/v1/series", API_EP_SERIES_LIST, 0);
	expect_route("GET", "/api/v1/series/12", API_EP_SERIES, 12);
	expect_route("HEAD", "/api/v1/series/12", API_EP_SERIES, 12);
	expect_route("GET", "/api/v1/series/7/mbox", API_EP_SERIES_MBOX, 7);
	expect_route("POST", "/api/v1/series/7/recheck", API_EP_SERIES_RECHECK, 7);
	expect_route("GET", "/api/v1/runs/3", API_EP_RUN, 3);
	expect_route("GET", "/api/v1/jobs", API_EP_JOBS, 0);
	expect_route("GET", "/api/v1/jobs/42", API_EP_JOB, 42);
	expect_route("POST", "/api/v1/jobs/42/heartbeat", API_EP_JOB_HEARTBEAT, 42);
	expect_route("POST", "/api/v1/jobs/42/logs", API_EP_JOB_LOGS, 42);
	expect_route("POST", "/api/v1/jobs/42/result", API_EP_JOB_RESULT, 42);
	expect_route("POST", "/api/v1/jobs/42/cancel", API_EP_JOB_CANCEL, 42);
	expect_route("GET", "/api/v1/jobs/42/logs/2/build", API_EP_JOB_LOG, 42);
	assert_int_equal(api_route_match("GET", "/api/v1/jobs/42/logs/2/bench.base-1", &r, NULL),
			 200);
	assert_int_equal(r.attempt, 2);
	assert_string_equal(r.stage, "bench.base-1");
	expect_route("GET", "/api/v1/jobs/999999999999999999", API_EP_JOB, 999999999999999999LL);
	expect_route("GET", "/api/v1/meta", API_EP_META, 0);
	expect_route("GET", "/api/v1/queue", API_EP_QUEUE, 0);
	expect_route("GET", "/api/v1/trends", API_EP_TRENDS, 0);
	expect_route("GET", "/api/v1/jobs/42/verdict", API_EP_JOB_VERDICT, 42);
	expect_route("GET", "/api/v1/jobs/42/samples", API_EP_JOB_SAMPLES, 42);
}

/* The dashboard's pages and assets: only names the web directory can
 * hold, never a way out of it. */
static void test_route_pages(void **state)
{
	static const struct { const char *path; enum api_page page; int64_t id; } pages[] = {
		{ "/", API_PAGE_INDEX, 0 }, { "/series/7", API_PAGE_SERIES, 7 },
		{ "/trends", API_PAGE_TRENDS, 0 }, { "/agents", API_PAGE_AGENTS, 0 },
		{ "/queue", API_PAGE_QUEUE, 0 }, { "/changes", API_PAGE_CHANGES, 0 },
	};
	static const char *const refused[] = {
		"/series/", "/series/0", "/series/7/", "/series/x", "/index.html", "/trends/", "/changes/",
		"/assets/", "/assets/..", "/assets/../etc/passwd", "/assets/.hidden",
		"/assets/a/../b.js", "/assets/a//b.js", "/assets/a/", "/assets/a%2Fb.js",
		"/assets/a b.js", "/assets/a/b/c/d/e.js", "/web/index.html", "//",
	};
	char longname[API_ASSET_MAX + 16];
	struct api_route r;

	(void)state;
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		expect_route("GET", pages[i].path, API_EP_PAGE, pages[i].id);
		assert_int_equal(api_route_match("GET", pages[i].path, &r, NULL), 200);
		assert_int_equal(r.page, pages[i].page);
		assert_int_equal(api_route_access(r.ep), API_ACCESS_PUBLIC);
	}
	assert_string_equal(api_page_file(API_PAGE_SERIES), "series.html");
	assert_string_equal(api_page_file(API_PAGE_INDEX), "index.html");
	assert_string_equal(api_page_file(API_PAGE_CHANGES), "changes.html");
	expect_route("GET", "/assets/vendor/uplot/uPlot.iife.min.js", API_EP_ASSET, 0);
	assert_int_equal(api_route_match("GET", "/assets/vendor/uplot/uPlot.iife.min.js", &r, NULL),
			 200);
	assert_string_equal(r.asset, "vendor/uplot/uPlot.iife.min.js");
	expect_route("HEAD", "/assets/style.css", API_EP_ASSET, 0);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		expect_status("GET", refused[i], 404, NULL);
	memset(longname, 'a', sizeof(longname) - 1);
	memcpy(longname, "/assets/", 8);
	longname[sizeof(longname) - 1] = '\0';
	expect_status("GET", longname, 404, NULL);
	expect_status("POST", "/", 405, "GET, HEAD");
	expect_status("POST", "/assets/style.css", 405, "GET, HEAD");
}

static void test_route_unknown_and_methods(void **state)
{
	(void)state;
	/* Unknown paths, malformed ids, stray slashes. */
	expect_status("GET", "/api/v1", 404, NULL);
	expect_status("GET", "/api/v1/", 404, NULL);
	expect_status("GET", "/api/v2/series", 404, NULL);
	expect_status("GET", "/api/v1/series/", 404, NULL);
	expect_status("GET", "/api/v1/series//mbox", 404, NULL);
	expect_status("GET", "/api/v1/series/0", 404, NULL);
	expect_status("GET", "/api/v1/series/-1", 404, NULL);
	expect_status("GET", "/api/v1/series/1x", 404, NULL);
	expect_status("GET", "/api/v1/series/ 1", 404, NULL);
	expect_status("GET", "/api/v1/series/1234567890123456789", 404, NULL);
	expect_status("GET", "/api/v1/series/1/patches", 404, NULL);
	expect_status("GET", "/api/v1/series/1/mbox/x", 404, NULL);
	expect_status("GET", "/api/v1/jobs/1/logs/1", 404, NULL);
	expect_status("GET", "/api/v1/jobs/1/logs/0/build", 404, NULL);
	expect_status("GET", "/api/v1/jobs/1/logs/1/..", 404, NULL);
	expect_status("GET", "/api/v1/jobs/1/logs/1/.hidden", 404, NULL);
	expect_status("GET", "/api/v1/jobs/1/logs/1/a%2Fb", 404, NULL);
	expect_status("GET", "/api/v1/jobs/1/logs/1/build/x", 404, NULL);
	expect_status("GET", "/api/v1/lease/1", 404, NULL);
	expect_status("GET", "/metrics/", 404, NULL);
	expect_status("POST", "/api/v1/agents/unregister", 404, NULL);
	/* Known paths, wrong methods: the Allow header's value. */
	expect_status("GET", "/api/v1/lease", 405, "POST");
	expect_status("PUT", "/api/v1/jobs/1/heartbeat", 405, "POST");
	expect_status("POST", "/api/v1/series", 405, "GET, HEAD");
	expect_status("DELETE", "/api/v1/jobs/1", 405, "GET, HEAD");
	expect_status("POST", "/metrics", 405, "GET, HEAD");
	expect_status("HEAD", "/api/v1/jobs/1/result", 405, "POST");
	expect_status(NULL, "/metrics", 404, NULL);
}

static void test_route_access_and_names(void **state)
{
	(void)state;
	assert_int_equal(api_route_access(API_EP_LEASE), API_ACCESS_AGENT);
	assert_int_equal(api_route_access(API_EP_REGISTER), API_ACCESS_AGENT);
	assert_int_equal(api_route_access(API_EP_JOB_LOGS), API_ACCESS_AGENT);
	assert_int_equal(api_route_access(API_EP_JOB_RESULT), API_ACCESS_AGENT);
	assert_int_equal(api_route_access(API_EP_JOB_HEARTBEAT), API_ACCESS_AGENT);
	assert_int_equal(api_route_access(API_EP_SERIES_RECHECK), API_ACCESS_ADMIN);
	assert_int_equal(api_route_access(API_EP_JOB_CANCEL), API_ACCESS_ADMIN);
	assert_int_equal(api_route_access(API_EP_JOB_LOG), API_ACCESS_PUBLIC);
	assert_int_equal(api_route_access(API_EP_METRICS), API_ACCESS_PUBLIC);
	/* Every POST writes, every GET reads. */
	for (int ep = 1; ep < API_EP_COUNT; ep++) {
		enum api_access a = api_route_access((enum api_ep)ep);

		assert_true(api_route_writes((enum api_ep)ep) == (a != API_ACCESS_PUBLIC));
		assert_non_null(api_route_name((enum api_ep)ep));
		for (int other = 1; other < ep; other++)
			assert_string_not_equal(api_route_name((enum api_ep)ep),
						api_route_name((enum api_ep)other));
	}
	assert_string_equal(api_route_name(API_EP_COUNT), "unknown");
}

static void test_parse_numbers_and_stages(void **state)
{
	int64_t v = -5;

	(void)state;
	assert_int_equal(api_parse_id("17", 2, &v), 0);
	assert_int_equal(v, 17);
	assert_int_equal(api_parse_id("0", 1, &v), -1);
	assert_int_equal(api_parse_id("", 0, &v), -1);
	assert_int_equal(api_parse_id("+1", 2, &v), -1);
	assert_int_equal(api_parse_id("1234567890123456789", 19, &v), -1);
	assert_int_equal(api_parse_uint("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(api_parse_uint("10", 0, 10, &v), 0);
	assert_int_equal(api_parse_uint("11", 0, 10, &v), -1);
	assert_int_equal(api_parse_uint("-1", 0, 10, &v), -1);
	assert_int_equal(api_parse_uint(" 1", 0, 10, &v), -1);
	assert_int_equal(api_parse_uint("1 ", 0, 10, &v), -1);
	assert_int_equal(api_parse_uint("", 0, 10, &v), -1);
	assert_int_equal(api_parse_uint(NULL, 0, 10, &v), -1);
	assert_true(api_is_stage("build", 5));
	assert_true(api_is_stage("bench.base_1-x", 14));
	assert_false(api_is_stage(".x", 2));
	assert_false(api_is_stage("a/b", 3));
	assert_false(api_is_stage("a b", 3));
	assert_false(api_is_stage("", 0));
	assert_true(api_is_stage("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 64));
	assert_false(api_is_stage("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 65));
}

/* ---- tokens --------------------------------------------------------------- */

static void test_tokens_and_hashes(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	char a[API_TOKEN_HEX + 1], b[API_TOKEN_HEX + 1], h[API_SHA256_HEX + 1];

	(void)state;
	assert_int_equal(api_token_new(a, &err), 0);
	assert_int_equal(api_token_new(b, &err), 0);
	assert_int_equal(strlen(a), 64);
	assert_int_equal(strspn(a, "0123456789abcdef"), 64);
	assert_string_not_equal(a, b);
	/* FIPS 180-2 test vectors. */
	assert_int_equal(api_sha256_hex("abc", 3, h, &err), 0);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(api_sha256_hex("", 0, h, &err), 0);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_bearer(void **state)
{
	const char *tok = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(api_bearer(NULL, &tok, &len), 0);
	assert_int_equal(api_bearer("Bearer abc123", &tok, &len), 1);
	assert_int_equal(len, 6);
	assert_memory_equal(tok, "abc123", 6);
	assert_int_equal(api_bearer("bearer   xyz", &tok, &len), 1);
	assert_int_equal(len, 3);
	assert_int_equal(api_bearer("Basic dXNlcjpwYXNz", &tok, &len), -1);
	assert_int_equal(api_bearer("Bearer", &tok, &len), -1);
	assert_int_equal(api_bearer("Bearer ", &tok, &len), -1);
	assert_int_equal(api_bearer("Bearer a b", &tok, &len), -1);
	assert_int_equal(api_bearer("Bearer a\tb", &tok, &len), -1);
	assert_int_equal(api_bearer("Bearerabc", &tok, &len), -1);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static void test_admin_token(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct api_admin admin;
	char dir[] = "/tmp/pg-test-api.XXXXXX", path[64];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/admin", dir);
	write_file(path, "  s3cret-admin-token-0123\n# comment\n", 0600);
	assert_int_equal(api_admin_load(&admin, path, &err), 0);
	assert_true(admin.set);
	assert_true(api_admin_check(&admin, "s3cret-admin-token-0123", 23));
	assert_false(api_admin_check(&admin, "s3cret-admin-token-012", 22));
	assert_false(api_admin_check(&admin, "s3cret-admin-token-0124", 23));
	assert_false(api_admin_check(&admin, "", 0));
	write_file(path, "short\n", 0600);
	assert_int_equal(api_admin_load(&admin, path, &err), -1);
	assert_non_null(strstr(err.msg, "at least 16 characters"));
	assert_false(admin.set);
	assert_false(api_admin_check(&admin, "short", 5));
	write_file(path, "\n\n", 0600);
	assert_int_equal(api_admin_load(&admin, path, &err), -1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(api_admin_load(&admin, path, &err), -1);
	assert_non_null(strstr(err.msg, "admin_token_file"));
	assert_int_equal(rmdir(dir), 0);
}

/* ---- metrics --------------------------------------------------------------- */

static void test_metrics_format(void **state)
{
	static struct api_metrics m;
	static struct api_counts c;
	struct sched_stats s;
	struct api_lab_counts lab;
	struct pg_buf out = PG_BUF_INIT(1024 * 1024);
	const char *text;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.queued = 4;
	s.held = 1;
	s.running = 2;
	s.agents = 3;
	s.agents_online = 2;
	assert_int_equal(api_metrics_init(&m), 0);
	api_metrics_request(&m, API_EP_LEASE, 204, 2.0);
	api_metrics_request(&m, API_EP_LEASE, 200, 0.004);
	api_metrics_request(&m, API_EP_JOB_HEARTBEAT, 200, 0.0001);
	api_metrics_request(&m, API_EP_NONE, 404, 0.0001);
	api_metrics_request(&m, API_EP_JOB_RESULT, 999, 100.0);
	api_metrics_lease(&m);
	api_metrics_result(&m, API_RESULT_DUPLICATE);
	api_metrics_waiting(&m, 7);
	api_metrics_stage(&m, API_STAGE_WRITER, 0.0003);
	api_metrics_stage(&m, API_STAGE_WRITER, 0.015);
	api_metrics_stage(&m, API_STAGE_SYNC, 0.03);
	api_metrics_stage(&m, API_STAGE_COUNT, 1.0);	/* ignored */
	api_metrics_wal_sync(&m, 0.002);
	api_metrics_snapshot(&m, &c);
	api_metrics_destroy(&m);
	memset(&lab, 0, sizeof(lab));
	lab.change_points[1][1] = 2;	/* confirmed regressions */
	lab.change_points[2][0] = 5;	/* dismissed improvements */
	lab.drift_drained = 1;
	assert_int_equal(api_metrics_format(&c, &s, &lab, &out), 0);
	text = pg_buf_str(&out);
	assert_non_null(strstr(text, "# TYPE perfgate_change_points gauge\n"));
	assert_non_null(strstr(text, "\nperfgate_change_points{state=\"confirmed\","
			       "direction=\"regression\"} 2\n"));
	assert_non_null(strstr(text, "\nperfgate_change_points{state=\"dismissed\","
			       "direction=\"improvement\"} 5\n"));
	assert_non_null(strstr(text, "\nperfgate_change_points{state=\"suspected\","
			       "direction=\"regression\"} 0\n"));
	assert_non_null(strstr(text, "\nperfgate_host_drift{state=\"drained\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_host_drift{state=\"flagged\"} 0\n"));
	assert_non_null(strstr(text, "# TYPE perfgate_jobs gauge\n"));
	assert_non_null(strstr(text, "\nperfgate_jobs{state=\"queued\"} 4\n"));
	assert_non_null(strstr(text, "\nperfgate_jobs{state=\"held\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_jobs{state=\"running\"} 2\n"));
	assert_non_null(strstr(text, "\nperfgate_jobs{state=\"infra-error\"} 0\n"));
	assert_non_null(strstr(text, "\nperfgate_agents 3\n"));
	assert_non_null(strstr(text, "\nperfgate_agents_online 2\n"));
	assert_non_null(strstr(text, "\nperfgate_leases_waiting 7\n"));
	assert_non_null(strstr(text, "# TYPE perfgate_leases_total counter\nperfgate_leases_total 1\n"));
	assert_non_null(strstr(text, "\nperfgate_results_total{status=\"duplicate\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_results_total{status=\"recorded\"} 0\n"));
	assert_non_null(strstr(text, "\nperfgate_http_requests_total{code=\"200\"} 2\n"));
	assert_non_null(strstr(text, "\nperfgate_http_requests_total{code=\"204\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_http_requests_total{code=\"404\"} 1\n"));
	/* An impossible code counts as 0; codes never seen are left out. */
	assert_non_null(strstr(text, "\nperfgate_http_requests_total{code=\"0\"} 1\n"));
	assert_null(strstr(text, "code=\"500\""));
	/* Buckets are cumulative, +Inf is the count. */
	assert_non_null(strstr(text, "# TYPE perfgate_http_request_duration_seconds histogram\n"));
	assert_non_null(strstr(text, "\nperfgate_http_request_duration_seconds_bucket"
			       "{route=\"lease\",le=\"0.0025\"} 0\n"));
	assert_non_null(strstr(text, "\nperfgate_http_request_duration_seconds_bucket"
			       "{route=\"lease\",le=\"0.005\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_http_request_duration_seconds_bucket"
			       "{route=\"lease\",le=\"1\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_http_request_duration_seconds_bucket"
			       "{route=\"lease\",le=\"2.5\"} 2\n"));
	assert_non_null(strstr(text, "\nperfgate_http_request_duration_seconds_bucket"
			       "{route=\"lease\",le=\"+Inf\"} 2\n"));
	assert_non_null(strstr(text, "\nperfgate_http_request_duration_seconds_sum"
			       "{route=\"lease\"} 2.004000\n"));
	assert_non_null(strstr(text, "\nperfgate_http_request_duration_seconds_count"
			       "{route=\"lease\"} 2\n"));
	assert_non_null(strstr(text, "\nperfgate_http_request_duration_seconds_bucket"
			       "{route=\"heartbeat\",le=\"0.0005\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_http_request_duration_seconds_bucket"
			       "{route=\"result\",le=\"60\"} 0\n"));
	assert_non_null(strstr(text, "\nperfgate_http_request_duration_seconds_bucket"
			       "{route=\"result\",le=\"+Inf\"} 1\n"));
	assert_non_null(strstr(text, "{route=\"unknown\",le=\"+Inf\"} 1\n"));
	/* The stages: one histogram per stage, every stage always there. */
	assert_non_null(strstr(text, "# TYPE perfgate_api_stage_duration_seconds histogram\n"));
	assert_non_null(strstr(text, "\nperfgate_api_stage_duration_seconds_bucket"
			       "{stage=\"writer\",le=\"0.0005\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_api_stage_duration_seconds_bucket"
			       "{stage=\"writer\",le=\"0.01\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_api_stage_duration_seconds_bucket"
			       "{stage=\"writer\",le=\"0.02\"} 2\n"));
	assert_non_null(strstr(text, "\nperfgate_api_stage_duration_seconds_sum"
			       "{stage=\"writer\"} 0.015300\n"));
	assert_non_null(strstr(text, "\nperfgate_api_stage_duration_seconds_count"
			       "{stage=\"writer\"} 2\n"));
	assert_non_null(strstr(text, "\nperfgate_api_stage_duration_seconds_bucket"
			       "{stage=\"sync\",le=\"0.05\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_api_stage_duration_seconds_count"
			       "{stage=\"send\"} 0\n"));
	/* A histogram without labels. */
	assert_non_null(strstr(text, "# TYPE perfgate_store_wal_sync_duration_seconds histogram\n"
			       "perfgate_store_wal_sync_duration_seconds_bucket{le=\"0.0005\"} 0\n"));
	assert_non_null(strstr(text, "\nperfgate_store_wal_sync_duration_seconds_bucket"
			       "{le=\"0.0025\"} 1\n"));
	assert_non_null(strstr(text, "\nperfgate_store_wal_sync_duration_seconds_bucket"
			       "{le=\"+Inf\"} 1\n"
			       "perfgate_store_wal_sync_duration_seconds_sum 0.002000\n"
			       "perfgate_store_wal_sync_duration_seconds_count 1\n"));
	/* Every line is a comment or "name{labels} value". */
	for (const char *p = text; *p; ) {
		const char *nl = strchr(p, '\n');

		assert_non_null(nl);
		assert_true(*p == '#' || strncmp(p, "perfgate_", 9) == 0);
		p = nl + 1;
	}
	/* A cap too small fails cleanly. */
	pg_buf_release(&out);
	pg_buf_init(&out, 100);
	assert_int_equal(api_metrics_format(&c, &s, &lab, &out), -1);
	pg_buf_release(&out);
}

/* ---- request bodies ------------------------------------------------------------ */

static void expect_parse_error(int rc, const struct pg_err *err, const char *want)
{
	if (rc != -1)
		fail_msg("parsed, expected: %s", want);
	if (strcmp(err->msg, want) != 0)
		fail_msg("\n  got:  %s\n  want: %s", err->msg, want);
	assert_int_equal(err->code, PG_EINVAL);
}

#define PARSE(fn, text) fn(text, strlen(text), &op, &err)
#define PARSE_RECHECK(text) api_parse_recheck(text, strlen(text), &ps, &op, &err)

static void test_parse_bodies_common(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct api_op op;

	(void)state;
	/* An empty body is {}. */
	assert_int_equal(api_parse_lease("", 0, &op, &err), 0);
	assert_int_equal(op.wait_s, 0);
	api_op_release(&op);
	assert_int_equal(PARSE(api_parse_lease, "{\"wait_s\": 30, \"labels\": {\"x\": 1}}"), 0);
	assert_int_equal(op.wait_s, 30);
	api_op_release(&op);
	/* Longer waits are cut to the longest. */
	assert_int_equal(PARSE(api_parse_lease, "{\"wait_s\": 300}"), 0);
	assert_int_equal(op.wait_s, 60);
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_lease, "{\"wait_s\": -1}"), &err,
			   "field 'wait_s': -1 is out of range [0, 2147483647]");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_lease, "{\"wait_s\": \"5\"}"), &err,
			   "field 'wait_s': expected an integer, got a string");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_lease, "{\"wait_s\": 1.5}"), &err,
			   "field 'wait_s': 1.5 is not an integer");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_lease, "{\"wait_s\": "), &err,
			   "request body: invalid JSON at line 1, column 11");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_lease, "[1]"), &err,
			   "request body: expected a JSON object, got an array");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_lease, "{} {}"), &err,
			   "request body: invalid JSON: unexpected data after the value at offset 3");
	api_op_release(&op);
	/* A body with a NUL in it is not JSON. */
	assert_int_equal(api_parse_lease("{}\0x", 4, &op, &err), -1);
	api_op_release(&op);
}

static void test_parse_register(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct api_op op;

	(void)state;
	assert_int_equal(PARSE(api_parse_register, "{\"labels\": {\"vendor\": \"intel\", "
			       "\"arch\": \"x86_64\"}, \"facts\": {\"cores\": 8, \"numa\": [0, 1]}}"), 0);
	assert_true(op.has_labels);
	assert_int_equal(op.n_labels, 2);
	assert_string_equal(op.keys[0], "vendor");
	assert_string_equal(op.values[0], "intel");
	assert_string_equal(op.keys[1], "arch");
	assert_string_equal(op.facts, "{\"cores\":8,\"numa\":[0,1]}");
	api_op_release(&op);
	/* Neither: labels and facts are kept as they are. */
	assert_int_equal(PARSE(api_parse_register, "{}"), 0);
	assert_false(op.has_labels);
	assert_null(op.facts);
	api_op_release(&op);
	/* No labels at all is a choice too. */
	assert_int_equal(PARSE(api_parse_register, "{\"labels\": {}, \"facts\": null}"), 0);
	assert_true(op.has_labels);
	assert_int_equal(op.n_labels, 0);
	assert_null(op.facts);
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_register, "{\"labels\": {\"vendor\": 1}}"), &err,
			   "field 'labels.vendor': expected a string, got a number");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_register, "{\"labels\": [\"vendor=intel\"]}"), &err,
			   "field 'labels': expected an object, got an array");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_register, "{\"facts\": \"x\"}"), &err,
			   "field 'facts': expected an object, got a string");
	api_op_release(&op);
}

static void test_parse_heartbeat(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct api_op op;

	(void)state;
	assert_int_equal(PARSE(api_parse_heartbeat, "{\"attempt\": 2, \"stage\": \"build\", "
			       "\"progress\": 40}"), 0);
	assert_int_equal(op.attempt, 2);
	assert_string_equal(op.stage, "build");
	assert_int_equal(op.progress, 40);
	api_op_release(&op);
	assert_int_equal(PARSE(api_parse_heartbeat, "{\"attempt\": 1, \"progress\": null}"), 0);
	assert_null(op.stage);
	assert_int_equal(op.progress, -1);
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_heartbeat, "{}"), &err, "field 'attempt': missing");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_heartbeat, "{\"attempt\": 0}"), &err,
			   "field 'attempt': 0 is out of range [1, 2147483647]");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_heartbeat, "{\"attempt\": \"1\"}"), &err,
			   "field 'attempt': expected an integer, got a string");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_heartbeat, "{\"attempt\": 1, \"stage\": 3}"), &err,
			   "field 'stage': expected a string, got a number");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_heartbeat, "{\"attempt\": 1, \"progress\": 101}"), &err,
			   "field 'progress': 101 is out of range [0, 100]");
	api_op_release(&op);
}

static void test_parse_logs_query(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct api_op op;

	(void)state;
	assert_int_equal(api_parse_logs_query("3", "build", NULL, &op, &err), 0);
	assert_int_equal(op.attempt, 3);
	assert_string_equal(op.log_stage, "build");
	assert_int_equal(op.offset, -1);
	assert_int_equal(api_parse_logs_query("1", "run", "1024", &op, &err), 0);
	assert_int_equal(op.offset, 1024);
	expect_parse_error(api_parse_logs_query(NULL, "build", NULL, &op, &err), &err,
			   "query parameter 'attempt': missing");
	expect_parse_error(api_parse_logs_query("x", "build", NULL, &op, &err), &err,
			   "query parameter 'attempt': 'x' is not an attempt number (1 or more)");
	expect_parse_error(api_parse_logs_query("1", NULL, NULL, &op, &err), &err,
			   "query parameter 'stage': missing");
	expect_parse_error(api_parse_logs_query("1", "../etc", NULL, &op, &err), &err,
			   "query parameter 'stage': '../etc' must be 1 to 64 of [A-Za-z0-9_.-], "
			   "not starting with '.'");
	expect_parse_error(api_parse_logs_query("1", "b", "-1", &op, &err), &err,
			   "query parameter 'offset': '-1' is not a byte offset");
}

static void test_parse_result(void **state)
{
	static const char good[] =
		"{\"attempt\": 1, \"outcome\": \"ok\", \"detail\": \"all fine\","
		" \"fingerprint\": {\"cpu\": \"Xeon\"},"
		" \"samples\": [{\"side\": \"base\", \"benchmark\": \"mempool_perf\","
		" \"metric\": \"mempool.nocache.c1.b32.k128.rate\", \"repetition\": 0,"
		" \"value\": 1.5e9, \"unit\": \"obj/s\"},"
		" {\"side\": \"patched\", \"benchmark\": \"mempool_perf\", \"metric\": \"m\","
		" \"repetition\": 3, \"value\": -2}]}";
	struct pg_err err = PG_ERR_INIT;
	char digest[API_SHA256_HEX + 1];
	struct api_op op;

	(void)state;
	assert_int_equal(PARSE(api_parse_result, good), 0);
	assert_int_equal(op.attempt, 1);
	assert_string_equal(op.res.outcome, "ok");
	assert_string_equal(op.res.detail, "all fine");
	assert_string_equal(op.res.fingerprint_json, "{\"cpu\":\"Xeon\"}");
	assert_int_equal(op.res.n_samples, 2);
	assert_string_equal(op.res.samples[0].side, "base");
	assert_string_equal(op.res.samples[0].unit, "obj/s");
	assert_true(op.res.samples[0].value == 1.5e9);
	assert_int_equal(op.res.samples[1].repetition, 3);
	assert_null(op.res.samples[1].unit);
	/* The digest is the body's, byte for byte. */
	assert_int_equal(api_sha256_hex(good, strlen(good), digest, &err), 0);
	assert_string_equal(op.res.digest_hex, digest);
	api_op_release(&op);
	/* Only attempt and outcome are required. */
	assert_int_equal(PARSE(api_parse_result, "{\"attempt\": 2, \"outcome\": \"infra-error\","
			       " \"detail\": null, \"samples\": null, \"fingerprint\": null}"), 0);
	assert_int_equal(op.res.n_samples, 0);
	assert_null(op.res.detail);
	assert_null(op.res.fingerprint_json);
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_result, "{\"attempt\": 1}"), &err,
			   "field 'outcome': missing");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_result, "{\"attempt\": 1, \"outcome\": \"ok\", "
				 "\"samples\": {}}"), &err,
			   "field 'samples': expected an array, got an object");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_result, "{\"attempt\": 1, \"outcome\": \"ok\", "
				 "\"samples\": [{\"side\": \"base\", \"benchmark\": \"b\", "
				 "\"metric\": \"m\", \"repetition\": 0, \"value\": 1}, "
				 "{\"side\": \"base\", \"benchmark\": \"b\", \"metric\": \"m\", "
				 "\"repetition\": 1, \"value\": \"fast\"}]}"), &err,
			   "field 'samples[1]': field 'value': expected a number, got a string");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_result, "{\"attempt\": 1, \"outcome\": \"ok\", "
				 "\"samples\": [{\"side\": \"left\", \"benchmark\": \"b\", "
				 "\"metric\": \"m\", \"repetition\": 0, \"value\": 1}]}"), &err,
			   "field 'samples[0]': field 'side': 'left' is not base or patched");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_result, "{\"attempt\": 1, \"outcome\": \"ok\", "
				 "\"samples\": [{\"side\": \"base\", \"benchmark\": \"b\", "
				 "\"metric\": \"m\", \"repetition\": -1, \"value\": 1}]}"), &err,
			   "field 'samples[0]': field 'repetition': -1 is out of range "
			   "[0, 2147483647]");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_result, "{\"attempt\": 1, \"outcome\": \"ok\", "
				 "\"samples\": [3]}"), &err,
			   "field 'samples[0]': expected an object, got a number");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_result, "{\"attempt\": 1, \"outcome\": \"ok\", "
				 "\"fingerprint\": [1]}"), &err,
			   "field 'fingerprint': expected an object, got an array");
	api_op_release(&op);
}

static void test_parse_admin(void **state)
{
	const char *paths[] = { "profiles/demo.json" };
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	struct api_op op;

	(void)state;
	assert_int_equal(profile_set_load(&ps, paths, 1, &err), 0);
	/* No contexts named: all of them. */
	assert_int_equal(api_parse_recheck("", 0, &ps, &op, &err), 0);
	assert_string_equal(op.contexts, "perfgate-demo-Performance");
	assert_null(op.rebase);
	api_op_release(&op);
	assert_int_equal(PARSE_RECHECK("{\"contexts\": [\"perfgate-demo-Performance\", "
				       "\"perfgate-demo-Performance\"], \"rebase\": \"main\"}"), 0);
	assert_string_equal(op.contexts, "perfgate-demo-Performance");
	assert_string_equal(op.rebase, "main");
	api_op_release(&op);
	expect_parse_error(PARSE_RECHECK("{\"contexts\": [\"perfgate-demo-Performance\", "
					 "\"perfgate-x\"]}"), &err,
			   "field 'contexts[1]': 'perfgate-x' is not a context of this controller");
	api_op_release(&op);
	expect_parse_error(PARSE_RECHECK("{\"contexts\": []}"), &err,
			   "field 'contexts': empty (leave it out to recheck every context)");
	api_op_release(&op);
	expect_parse_error(PARSE_RECHECK("{\"contexts\": \"perfgate-demo-Performance\"}"), &err,
			   "field 'contexts': expected an array, got a string");
	api_op_release(&op);
	expect_parse_error(PARSE_RECHECK("{\"contexts\": [1]}"), &err,
			   "field 'contexts[0]': expected a string, got a number");
	api_op_release(&op);
	expect_parse_error(PARSE_RECHECK("{\"rebase\": \"--upload-pack=x\"}"), &err,
			   "field 'rebase': '--upload-pack=x' is not a branch name (1 to 63 of "
			   "[A-Za-z0-9_./-])");
	api_op_release(&op);
	expect_parse_error(PARSE_RECHECK("{\"rebase\": \"a/../b\"}"), &err,
			   "field 'rebase': 'a/../b' is not a branch name (1 to 63 of "
			   "[A-Za-z0-9_./-])");
	api_op_release(&op);
	assert_int_equal(PARSE_RECHECK("{\"rebase\": \"releases/22.11\"}"), 0);
	api_op_release(&op);

	assert_int_equal(PARSE(api_parse_cancel, "{\"reason\": \"wrong tree\"}"), 0);
	assert_string_equal(op.reason, "wrong tree");
	api_op_release(&op);
	assert_int_equal(PARSE(api_parse_cancel, ""), 0);
	assert_null(op.reason);
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_cancel, "{\"reason\": \"\"}"), &err,
			   "field 'reason': must be 1 to 65536 bytes");
	api_op_release(&op);
	expect_parse_error(PARSE(api_parse_cancel, "{\"reason\": false}"), &err,
			   "field 'reason': expected a string, got a boolean");
	api_op_release(&op);
	profile_set_free(&ps);
}

/* ---- statuses and the mbox -------------------------------------------------------- */

static void test_status_for(void **state)
{
	(void)state;
	assert_int_equal(api_status_for(PG_EINVAL), 400);
	assert_int_equal(api_status_for(PG_ENOTFOUND), 404);
	assert_int_equal(api_status_for(PG_ECONFLICT), 409);
	assert_int_equal(api_status_for(PG_ETOOBIG), 413);
	assert_int_equal(api_status_for(PG_ETIMEOUT), 503);
	assert_int_equal(api_status_for(PG_EDB), 500);
	assert_int_equal(api_status_for(PG_EIO), 500);
	assert_int_equal(api_status_for(PG_ENOMEM), 500);
}

static void test_mbox(void **state)
{
	static const char one[] =
		"From 1234abcd Mon Sep 17 00:00:00 2001\n"
		"From: A <a@example.org>\n"
		"Subject: [PATCH 1/2] x\n"
		"\n"
		"From the start\n"
		">From quoted\n"
		">>From twice\n"
		" From indented\n"
		"Fromage\n"
		"---\n";
	static const char two[] = "Subject: [PATCH 2/2] y\r\n\r\nbody without a newline";
	static const char want[] =
		"From perfgate Thu Jan  1 00:00:00 1970\n"
		"From: A <a@example.org>\n"
		"Subject: [PATCH 1/2] x\n"
		"\n"
		">From the start\n"
		">>From quoted\n"
		">>>From twice\n"
		" From indented\n"
		"Fromage\n"
		"---\n"
		"\n"
		"From perfgate Thu Jan  1 00:00:00 1970\n"
		"Subject: [PATCH 2/2] y\r\n\r\nbody without a newline\n"
		"\n";
	struct pg_buf out = PG_BUF_INIT(4096);

	(void)state;
	assert_int_equal(api_mbox_add(&out, one, strlen(one)), 0);
	assert_int_equal(api_mbox_add(&out, two, strlen(two)), 0);
	assert_string_equal(pg_buf_str(&out), want);
	/* An empty message still makes a well-formed entry. */
	pg_buf_reset(&out);
	assert_int_equal(api_mbox_add(&out, "", 0), 0);
	assert_string_equal(pg_buf_str(&out), "From perfgate Thu Jan  1 00:00:00 1970\n\n");
	/* The cap is honoured. */
	pg_buf_release(&out);
	pg_buf_init(&out, 50);
	assert_int_equal(api_mbox_add(&out, one, strlen(one)), -1);
	pg_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_endpoints),
		cmocka_unit_test(test_route_unknown_and_methods),
		cmocka_unit_test(test_route_pages),
		cmocka_unit_test(test_route_access_and_names),
		cmocka_unit_test(test_parse_numbers_and_stages),
		cmocka_unit_test(test_tokens_and_hashes),
		cmocka_unit_test(test_bearer),
		cmocka_unit_test(test_admin_token),
		cmocka_unit_test(test_metrics_format),
		cmocka_unit_test(test_parse_bodies_common),
		cmocka_unit_test(test_parse_register),
		cmocka_unit_test(test_parse_heartbeat),
		cmocka_unit_test(test_parse_logs_query),
		cmocka_unit_test(test_parse_result),
		cmocka_unit_test(test_parse_admin),
		cmocka_unit_test(test_status_for),
		cmocka_unit_test(test_mbox),
	};
	return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
