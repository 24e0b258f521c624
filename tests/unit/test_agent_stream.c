/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/agent_stream.c, run-one's stream link, over two
 * pipes with a thread playing the controller: a fetch answered with an
 * mbox, with an error, with one too big, not at all (stopped), and cut
 * short by a dropped connection; the wait for a result's ack that skips
 * answers about other attempts; a cancel line; a write to a closed
 * stdout marking the connection lost.
 */
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

#include "agent_stream.h"
#include "timeutil.h"

/* The two pipes: to_agent (the controller writes), from_agent (the
 * stream writes). */
struct fx {
	int to_agent[2];
	int from_agent[2];
	struct agent_stream s;
};

/* The controller's part: read one line of the stream's, then write
 * `reply` lines (NULL: close the agent's stdin instead). */
struct ctl {
	struct fx *fx;
	const char *const *reply;
	char got[512];
};

static void *ctl_thread(void *arg)
{
	struct ctl *c = arg;
	struct agent_lines r = AGENT_LINES_INIT(c->fx->from_agent[0]);
	struct pg_err err = PG_ERR_INIT;
	const char *line;
	size_t len;

	if (agent_lines_next(&r, 4096, NULL, &line, &len, &err) == 1)
		snprintf(c->got, sizeof(c->got), "%s", line);
	if (!c->reply) {
		close(c->fx->to_agent[1]);
		c->fx->to_agent[1] = -1;
	} else {
		for (size_t i = 0; c->reply[i]; i++)
			if (write(c->fx->to_agent[1], c->reply[i], strlen(c->reply[i])) < 0)
				break;
	}
	agent_lines_release(&r);
	return NULL;
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct pg_err err = PG_ERR_INIT;

	if (!fx || pipe(fx->to_agent) < 0 || pipe(fx->from_agent) < 0 ||
	    agent_stream_init(&fx->s, fx->to_agent[0], fx->from_agent[1], &err) < 0 ||
	    agent_stream_start(&fx->s, &err) < 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	agent_stream_release(&fx->s);
	for (int i = 0; i < 2; i++) {
		if (fx->to_agent[i] >= 0)
			close(fx->to_agent[i]);
		if (fx->from_agent[i] >= 0)
			close(fx->from_agent[i]);
	}
	free(fx);
	return 0;
}

/* Run a fetch of url against a controller that answers `reply`. */
static int fetch(struct fx *fx, const char *const *reply, const struct agent_stop *stop,
		 int64_t wait_ms, struct pg_buf *out, struct ctl *c, struct pg_err *err)
{
	pthread_t tid;
	int rc;

	memset(c, 0, sizeof(*c));
	c->fx = fx;
	c->reply = reply;
	assert_int_equal(pthread_create(&tid, NULL, ctl_thread, c), 0);
	rc = agent_stream_fetch(&fx->s, stop, "/api/v1/series/4/mbox", wait_ms, out, err);
	assert_int_equal(pthread_join(tid, NULL), 0);
	return rc;
}

static void test_fetch(void **state)
{
	static const char *const ok[] = {
		"{\"type\":\"mbox\",\"data\":\"RnJvbSB4Cg==\"}\n", NULL };
	static const char *const stray_then_error[] = {
		"{\"type\":\"ack\",\"job\":1,\"attempt\":1,\"status\":\"recorded\"}\n",
		"not json\n",
		"{\"type\":\"mbox\",\"error\":\"HTTP 404: no such series\"}\n", NULL };
	static const char *const big[] = {
		"{\"type\":\"mbox\",\"data\":\"QUJDREVGR0g=\"}\n", NULL };
	struct fx *fx = *state;
	struct pg_buf out = PG_BUF_INIT(64), small = PG_BUF_INIT(4);
	struct pg_err err = PG_ERR_INIT;
	struct ctl c;

	assert_int_equal(fetch(fx, ok, NULL, 5000, &out, &c, &err), 0);
	assert_string_equal(c.got, "{\"type\":\"fetch\",\"url\":\"/api/v1/series/4/mbox\"}");
	assert_int_equal(out.len, 7);
	assert_string_equal(pg_buf_str(&out), "From x\n");
	/* An answer nobody waits for and a malformed line are skipped. */
	assert_int_equal(fetch(fx, stray_then_error, NULL, 5000, &out, &c, &err), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_non_null(strstr(err.msg, "HTTP 404: no such series"));
	assert_int_equal(fetch(fx, big, NULL, 5000, &small, &c, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_false(agent_stream_lost(&fx->s));
	pg_buf_release(&out);
	pg_buf_release(&small);
}

static bool after_300ms(void *arg)
{
	return pg_time_mono_ms() >= *(int64_t *)arg;
}

static void test_fetch_unanswered(void **state)
{
	static const char *const none[] = { NULL };
	struct fx *fx = *state;
	struct pg_buf out = PG_BUF_INIT(64);
	struct pg_err err = PG_ERR_INIT;
	int64_t at = pg_time_mono_ms() + 300, t0;
	struct agent_stop stop = { after_300ms, &at };
	struct ctl c;

	/* Stopped (the job was cancelled) while waiting. */
	t0 = pg_time_mono_ms();
	assert_int_equal(fetch(fx, none, &stop, 20000, &out, &c, &err), -1);
	assert_int_equal(err.code, PG_ETIMEOUT);
	assert_non_null(strstr(err.msg, "stopped"));
	assert_true(pg_time_mono_ms() - t0 < 5000);
	/* No answer within the wait. */
	assert_int_equal(fetch(fx, none, NULL, 200, &out, &c, &err), -1);
	assert_int_equal(err.code, PG_ETIMEOUT);
	assert_non_null(strstr(err.msg, "no answer in time"));
	pg_buf_release(&out);
}

static void test_fetch_lost(void **state)
{
	struct fx *fx = *state;
	struct pg_buf out = PG_BUF_INIT(64);
	struct pg_err err = PG_ERR_INIT;
	struct agent_link link;
	struct ctl c;
	int64_t t0 = pg_time_mono_ms();

	agent_stream_link(&fx->s, &link);
	assert_null(link.abandoned(link.arg));
	assert_int_equal(fetch(fx, NULL, NULL, 20000, &out, &c, &err), -1);
	assert_int_equal(err.code, PG_ETIMEOUT);
	assert_non_null(strstr(err.msg, "lost"));
	assert_true(pg_time_mono_ms() - t0 < 5000);
	assert_true(agent_stream_lost(&fx->s));
	assert_string_equal(link.abandoned(link.arg), AGENT_STREAM_LOST_DETAIL);
	/* Nothing more goes out. */
	assert_int_equal(agent_stream_write(&fx->s, "{}\n", &err), -1);
	pg_buf_release(&out);
}

static void test_ack_and_cancel(void **state)
{
	struct fx *fx = *state;
	struct agent_line_in m = AGENT_LINE_IN_INIT;
	struct agent_link link;
	const char *other = "{\"type\":\"ack\",\"job\":4,\"attempt\":1,\"status\":\"recorded\"}\n";
	const char *mine = "{\"type\":\"reject\",\"job\":4,\"attempt\":2,\"status\":409,"
			   "\"answer\":\"stale\"}\n";
	const char *cancel = "{\"type\":\"cancel\",\"reason\":\"superseded\"}\n";
	int64_t t0;

	agent_stream_link(&fx->s, &link);
	/* Nothing expected: no answer, at the end of the wait. */
	t0 = pg_time_mono_ms();
	assert_int_equal(agent_stream_wait_answer(&fx->s, 200, NULL, &m), 0);
	assert_true(pg_time_mono_ms() - t0 >= 200);
	agent_stream_expect(&fx->s, 4, 2);
	assert_int_equal(write(fx->to_agent[1], other, strlen(other)), (ssize_t)strlen(other));
	assert_int_equal(write(fx->to_agent[1], mine, strlen(mine)), (ssize_t)strlen(mine));
	assert_int_equal(agent_stream_wait_answer(&fx->s, 5000, NULL, &m), 1);
	assert_int_equal(m.type, AGENT_LINE_REJECT);
	assert_int_equal(m.attempt, 2);
	assert_int_equal(m.http_status, 409);
	assert_string_equal(m.text, "stale");
	agent_line_in_release(&m);

	assert_int_equal(link.cancelled(link.arg), AGENT_CANCEL_NONE);
	assert_int_equal(write(fx->to_agent[1], cancel, strlen(cancel)), (ssize_t)strlen(cancel));
	t0 = pg_time_mono_ms();
	while (link.cancelled(link.arg) == AGENT_CANCEL_NONE && pg_time_mono_ms() - t0 < 5000)
		pg_sleep_ms(10, NULL);
	assert_int_equal(link.cancelled(link.arg), AGENT_CANCEL_CONTROLLER);
	/* A cancel is not a lost connection. */
	assert_null(link.abandoned(link.arg));
}

static void test_write_lost(void **state)
{
	struct fx *fx = *state;
	struct pg_err err = PG_ERR_INIT;

	close(fx->from_agent[0]);
	fx->from_agent[0] = -1;
	assert_int_equal(agent_stream_write(&fx->s, "{\"type\":\"x\"}\n", &err), -1);
	assert_true(agent_stream_lost(&fx->s));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fetch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_unanswered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ack_and_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_lost, setup, teardown),
	};

	/* As run-one: a write to a closed pipe fails with EPIPE. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
