/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/agent_line.c, the lines of run-one's protocol
 * (lib/runone.h): the exact text of every line run-one writes, base64
 * round trips of log chunks, the parser of the controller's lines with
 * each malformed shape, the first line (wrapped or bare job), and the
 * bounded line reader over a pipe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent_line.h"
#include "base64.h"
#include "json.h"

static void expect_line(char *line, const char *want)
{
	assert_non_null(line);
	assert_string_equal(line, want);
	free(line);
}

static void test_print(void **state)
{
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	expect_line(agent_line_hello(12, 10, &err),
		    "{\"type\":\"hello\",\"agent_version\":\"" PG_VERSION "\",\"pid\":12,"
		    "\"pgid\":10}\n");
	expect_line(agent_line_heartbeat(9007199254740992LL, 3, "build", 40, &err),
		    "{\"type\":\"heartbeat\",\"job\":9007199254740992,\"attempt\":3,"
		    "\"stage\":\"build\",\"progress\":40}\n");
	expect_line(agent_line_log(7, 1, "run", "hi\n\0x", 5, &err),
		    "{\"type\":\"log\",\"job\":7,\"attempt\":1,\"stage\":\"run\","
		    "\"data\":\"aGkKAHg=\"}\n");
	expect_line(agent_line_fetch("/api/v1/series/4/mbox", &err),
		    "{\"type\":\"fetch\",\"url\":\"/api/v1/series/4/mbox\"}\n");
	expect_line(agent_line_result(7, 2, "{\"a\":\"x\\ny\"}", 12, &err),
		    "{\"type\":\"result\",\"job\":7,\"attempt\":2,"
		    "\"body\":\"{\\\"a\\\":\\\"x\\\\ny\\\"}\"}\n");
	expect_line(agent_line_end(3, "gone", &err),
		    "{\"type\":\"end\",\"exit\":3,\"detail\":\"gone\"}\n");
	expect_line(agent_line_collected(0, &err), "{\"type\":\"collected\",\"count\":0}\n");
	/* A body is text: a NUL inside cannot travel. */
	assert_null(agent_line_result(7, 2, "a\0b", 3, &err));
	assert_int_equal(err.code, PG_EINVAL);
}

/* The result line carries the body's exact bytes back. */
static void test_result_round_trip(void **state)
{
	const char *body = "{\"attempt\":1,\"outcome\":\"ok\",\"detail\":\"\\u0001 \xc3\xa9 \\\"q\\\"\"}";
	struct pg_err err = PG_ERR_INIT;
	char *line = agent_line_result(1, 1, body, strlen(body), &err);
	cJSON *o = NULL;

	(void)state;
	assert_non_null(line);
	/* One line: its only newline is its last byte. */
	assert_non_null(strchr(line, '\n'));
	assert_int_equal(strchr(line, '\n') - line, strlen(line) - 1);
	assert_int_equal(pg_json_parse(line, strlen(line) - 1, &o, &err), 0);
	assert_string_equal(cJSON_GetObjectItem(o, "body")->valuestring, body);
	cJSON_Delete(o);
	free(line);
}

static void test_log_base64(void **state)
{
	unsigned char chunk[300];
	struct pg_buf d = PG_BUF_INIT(1024);
	struct pg_err err = PG_ERR_INIT;
	const char *data;
	cJSON *o = NULL;
	char *line;

	(void)state;
	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (unsigned char)i;
	line = agent_line_log(1, 1, "build", chunk, sizeof(chunk), &err);
	assert_non_null(line);
	assert_int_equal(pg_json_parse(line, strlen(line), &o, &err), 0);
	data = cJSON_GetObjectItem(o, "data")->valuestring;
	assert_int_equal(pg_base64_decode(data, strlen(data), &d, &err), 0);
	assert_int_equal(d.len, sizeof(chunk));
	assert_memory_equal(d.data, chunk, sizeof(chunk));
	pg_buf_release(&d);
	cJSON_Delete(o);
	free(line);
}

static int parse(const char *line, size_t max, struct agent_line_in *m, struct pg_err *err)
{
	return agent_line_parse(line, strlen(line), max, m, err);
}

static void test_parse(void **state)
{
	struct agent_line_in m = AGENT_LINE_IN_INIT;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(parse("{\"type\":\"cancel\",\"reason\":\"superseded\"}", 0, &m, &err), 0);
	assert_int_equal(m.type, AGENT_LINE_CANCEL);
	assert_string_equal(m.text, "superseded");
	assert_int_equal(parse("{\"type\":\"cancel\"}", 0, &m, &err), 0);
	assert_null(m.text);
	assert_int_equal(parse("{\"type\":\"mbox\",\"data\":\"RnJvbSB4Cg==\"}", 64, &m, &err), 0);
	assert_int_equal(m.type, AGENT_LINE_MBOX);
	assert_true(m.has_data);
	assert_int_equal(m.data.len, 7);
	assert_memory_equal(m.data.data, "From x\n", 7);
	assert_int_equal(parse("{\"type\":\"mbox\",\"data\":\"\"}", 64, &m, &err), 0);
	assert_true(m.has_data);
	assert_int_equal(m.data.len, 0);
	assert_int_equal(parse("{\"type\":\"mbox\",\"error\":\"HTTP 404\"}", 64, &m, &err), 0);
	assert_false(m.has_data);
	assert_string_equal(m.text, "HTTP 404");
	assert_int_equal(parse("{\"type\":\"ack\",\"job\":4,\"attempt\":2,\"status\":\"duplicate\","
			       "\"extra\":1}", 0, &m, &err), 0);
	assert_int_equal(m.type, AGENT_LINE_ACK);
	assert_int_equal(m.job_id, 4);
	assert_int_equal(m.attempt, 2);
	assert_string_equal(m.status, "duplicate");
	assert_int_equal(parse("{\"type\":\"reject\",\"job\":4,\"attempt\":2,\"status\":409,"
			       "\"answer\":\"{\\\"error\\\":\\\"stale\\\"}\"}", 0, &m, &err), 0);
	assert_int_equal(m.type, AGENT_LINE_REJECT);
	assert_int_equal(m.http_status, 409);
	assert_string_equal(m.text, "{\"error\":\"stale\"}");
	assert_int_equal(parse("{\"type\":\"done\"}", 0, &m, &err), 0);
	assert_int_equal(m.type, AGENT_LINE_DONE);
	agent_line_in_release(&m);
}

static void test_parse_bad(void **state)
{
	static const struct { const char *line; const char *msg; } bad[] = {
		{ "", "" },
		{ "[1]", "not a JSON object" },
		{ "{\"type\":1}", "type" },
		{ "{\"kind\":\"ack\"}", "type" },
		{ "{\"type\":\"hello\"}", "unknown line type" },
		{ "{\"type\":\"ack\",\"attempt\":1,\"status\":\"recorded\"}", "job" },
		{ "{\"type\":\"ack\",\"job\":0,\"attempt\":1,\"status\":\"recorded\"}", "job" },
		{ "{\"type\":\"ack\",\"job\":1.5,\"attempt\":1,\"status\":\"recorded\"}", "job" },
		{ "{\"type\":\"ack\",\"job\":\"1\",\"attempt\":1,\"status\":\"recorded\"}", "job" },
		{ "{\"type\":\"ack\",\"job\":1,\"attempt\":1,\"status\":\"ok\"}", "status" },
		{ "{\"type\":\"ack\",\"job\":1,\"attempt\":1}", "status" },
		{ "{\"type\":\"reject\",\"job\":1,\"attempt\":1,\"status\":200}", "status" },
		{ "{\"type\":\"reject\",\"job\":1,\"attempt\":1,\"status\":\"409\"}", "status" },
		{ "{\"type\":\"reject\",\"job\":1,\"attempt\":1,\"status\":409,\"answer\":5}", "answer" },
		{ "{\"type\":\"mbox\"}", "either" },
		{ "{\"type\":\"mbox\",\"data\":\"QQ==\",\"error\":\"x\"}", "either" },
		{ "{\"type\":\"mbox\",\"data\":\"QQ=\"}", "base64" },
		{ "{\"type\":\"mbox\",\"data\":\"Q!==\"}", "base64" },
		{ "{\"type\":\"mbox\",\"data\":\"QUJDRA==\"}", "limit" },	/* 4 bytes > 3 */
		{ "{\"type\":\"cancel\",\"reason\":[]}", "reason" },
	};
	struct agent_line_in m = AGENT_LINE_IN_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pg_err err = PG_ERR_INIT;

		if (parse(bad[i].line, 3, &m, &err) == 0) {
			print_error("'%s' parsed\n", bad[i].line);
			fail();
		}
		if (!strstr(err.msg, bad[i].msg)) {
			print_error("'%s': '%s' does not say '%s'\n", bad[i].line, err.msg,
				    bad[i].msg);
			fail();
		}
		assert_null(m.text);
		assert_false(m.has_data);
	}
	agent_line_in_release(&m);
}

static void test_job_line(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	const char *wrapped = "{\"job\":{\"id\":3,\"attempt\":1}}", *bare = "{\"id\":3,\"attempt\":2}";
	cJSON *j;

	(void)state;
	j = agent_line_job(wrapped, strlen(wrapped), &err);
	assert_non_null(j);
	assert_int_equal(cJSON_GetObjectItem(j, "attempt")->valueint, 1);
	cJSON_Delete(j);
	j = agent_line_job(bare, strlen(bare), &err);
	assert_non_null(j);
	assert_int_equal(cJSON_GetObjectItem(j, "attempt")->valueint, 2);
	cJSON_Delete(j);
	assert_null(agent_line_job("{\"job\":[]}", 10, &err));
	assert_non_null(strstr(err.msg, "job"));
	assert_null(agent_line_job("nope", 4, &err));
	assert_null(agent_line_job("3", 1, &err));
	assert_non_null(strstr(err.msg, "not a JSON object"));
}

static void test_reader(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	const char *line;
	size_t len;
	int fds[2];

	(void)state;
	assert_int_equal(pipe(fds), 0);
	{
		struct agent_lines r = AGENT_LINES_INIT(fds[0]);
		const char *text = "one\n\ntwo two\n0123456789ABCDEF\nthree\npartial";

		assert_int_equal(write(fds[1], text, strlen(text)), (ssize_t)strlen(text));
		close(fds[1]);
		assert_int_equal(agent_lines_next(&r, 10, NULL, &line, &len, &err), 1);
		assert_string_equal(line, "one");
		assert_int_equal(agent_lines_next(&r, 10, NULL, &line, &len, &err), 1);
		assert_int_equal(len, 0);
		assert_int_equal(agent_lines_next(&r, 10, NULL, &line, &len, &err), 1);
		assert_string_equal(line, "two two");
		assert_int_equal(len, 7);
		/* Over the bound: an error, and the reader goes on after it. */
		assert_int_equal(agent_lines_next(&r, 10, NULL, &line, &len, &err), -1);
		assert_int_equal(err.code, PG_ETOOBIG);
		assert_int_equal(agent_lines_next(&r, 10, NULL, &line, &len, &err), 1);
		assert_string_equal(line, "three");
		/* A last line without its newline: the writer left mid-line. */
		assert_int_equal(agent_lines_next(&r, 10, NULL, &line, &len, &err), 0);
		assert_int_equal(agent_lines_next(&r, 10, NULL, &line, &len, &err), 0);
		agent_lines_release(&r);
		close(fds[0]);
	}
}

static bool always(void *arg)
{
	(void)arg;
	return true;
}

static void test_reader_stop(void **state)
{
	struct agent_stop stop = { always, NULL };
	struct pg_err err = PG_ERR_INIT;
	const char *line;
	size_t len;
	int fds[2];

	(void)state;
	assert_int_equal(pipe(fds), 0);
	{
		struct agent_lines r = AGENT_LINES_INIT(fds[0]);

		/* Nothing to read: the stop predicate ends the wait. */
		assert_int_equal(agent_lines_next(&r, 10, &stop, &line, &len, &err), 2);
		/* An unending line is refused once over the bound. */
		assert_int_equal(write(fds[1], "0123456789ABCDEF", 16), 16);
		assert_int_equal(agent_lines_next(&r, 10, NULL, &line, &len, &err), -1);
		assert_int_equal(err.code, PG_ETOOBIG);
		agent_lines_release(&r);
	}
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_result_round_trip),
		cmocka_unit_test(test_log_base64),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_job_line),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_reader_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
