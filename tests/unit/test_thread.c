/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for lib/thread.c: a thread's name as the kernel shows it
 * (/proc/thread-self/comm), in a thread of its own so that the runner's
 * name is left alone, and a name over the kernel's 15 bytes cut there.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "thread.h"

struct named {
	const char *name;
	char comm[64];
};

/* The calling thread's name, as /proc shows it, without the newline. */
static void *name_and_read(void *arg)
{
	struct named *n = arg;
	FILE *f;

	pg_thread_name(n->name);
	f = fopen("/proc/thread-self/comm", "r");
	if (f) {
		if (!fgets(n->comm, sizeof(n->comm), f))
			n->comm[0] = '\0';
		fclose(f);
	}
	n->comm[strcspn(n->comm, "\n")] = '\0';
	return NULL;
}

static void check_name(const char *name, const char *want)
{
	struct named n = { name, "" };
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, name_and_read, &n), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_string_equal(n.comm, want);
}

static void test_name(void **state)
{
	(void)state;
	check_name("api-writer", "api-writer");
	check_name("api-log", "api-log");
}

static void test_long_name_cut(void **state)
{
	(void)state;
	check_name("api-checkpointer-thread", "api-checkpointe");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_long_name_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
