/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/json.c, lib/err.c and lib/config.c: type checks,
 * error messages with context, and path resolution. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "conffile.h"
#include "err.h"
#include "json.h"

static cJSON *parse(const char *text)
{
	struct pg_err err = PG_ERR_INIT;
	cJSON *root = NULL;

	assert_int_equal(pg_json_parse(text, strlen(text), &root, &err), 0);
	return root;
}

static void test_parse_error_names_position(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	const char *text = "{\n  \"a\": 1,\n  \"b\": ]\n}";
	cJSON *root = NULL;

	(void)state;
	assert_int_equal(pg_json_parse(text, strlen(text), &root, &err), -1);
	assert_null(root);
	assert_int_equal(err.code, PG_EINVAL);
	assert_string_equal(err.msg, "invalid JSON at line 3, column 8");
	assert_int_equal(pg_json_parse("", 0, &root, &err), -1);
	assert_string_equal(err.msg, "invalid JSON: empty document");
	/* Length-bounded: the text after len is not read. */
	assert_int_equal(pg_json_parse("{}garbage", 2, &root, &err), 0);
	cJSON_Delete(root);
	/* Trailing white space is fine, trailing data is not. */
	assert_int_equal(pg_json_parse("{} \n\t", 5, &root, &err), 0);
	cJSON_Delete(root);
	assert_int_equal(pg_json_parse("{\"a\":1} junk", 13, &root, &err), -1);
	assert_null(root);
	assert_string_equal(err.msg, "invalid JSON: unexpected data after the value at offset 8");
}

static void test_getters_types_and_ranges(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	cJSON *root = parse("{\"s\":\"x\",\"i\":42,\"f\":1.5,\"b\":true,"
			    "\"o\":{},\"a\":[1],\"n\":null,\"big\":1e300}");
	const char *s = "default";
	int64_t i = -1;
	double d = 0;
	bool b = false;
	const cJSON *o = NULL;

	(void)state;
	assert_int_equal(pg_json_get_string(root, "s", true, &s, &err), 1);
	assert_string_equal(s, "x");
	assert_int_equal(pg_json_get_string(root, "missing", false, &s, &err), 0);
	assert_string_equal(s, "x");
	assert_int_equal(pg_json_get_string(root, "missing", true, &s, &err), -1);
	assert_string_equal(err.msg, "field 'missing': missing");
	assert_int_equal(pg_json_get_string(root, "i", true, &s, &err), -1);
	assert_string_equal(err.msg, "field 'i': expected a string, got a number");

	assert_int_equal(pg_json_get_int(root, "i", true, 0, 100, &i, &err), 1);
	assert_int_equal(i, 42);
	assert_int_equal(pg_json_get_int(root, "i", true, 0, 10, &i, &err), -1);
	assert_string_equal(err.msg, "field 'i': 42 is out of range [0, 10]");
	assert_int_equal(pg_json_get_int(root, "f", true, 0, 10, &i, &err), -1);
	assert_string_equal(err.msg, "field 'f': 1.5 is not an integer");
	assert_int_equal(pg_json_get_int(root, "big", true, INT64_MIN, INT64_MAX, &i, &err), -1);
	assert_int_equal(pg_json_get_int(root, "n", true, 0, 10, &i, &err), -1);
	assert_string_equal(err.msg, "field 'n': expected an integer, got null");

	assert_int_equal(pg_json_get_double(root, "f", true, 0, 2, &d, &err), 1);
	assert_true(d == 1.5);
	assert_int_equal(pg_json_get_double(root, "f", true, 0, 1, &d, &err), -1);
	assert_string_equal(err.msg, "field 'f': 1.5 is out of range [0, 1]");
	assert_int_equal(pg_json_get_bool(root, "b", true, &b, &err), 1);
	assert_true(b);
	assert_int_equal(pg_json_get_bool(root, "s", true, &b, &err), -1);
	assert_string_equal(err.msg, "field 's': expected a boolean, got a string");
	assert_int_equal(pg_json_get_object(root, "o", true, &o, &err), 1);
	assert_int_equal(pg_json_get_object(root, "a", true, &o, &err), -1);
	assert_string_equal(err.msg, "field 'a': expected an object, got an array");
	assert_int_equal(pg_json_get_array(root, "a", true, &o, &err), 1);
	assert_int_equal(pg_json_get_array(o, "x", false, &o, &err), -1);
	assert_string_equal(err.msg, "field 'x': parent is an array, not an object");
	cJSON_Delete(root);
}

static void test_check_keys(void **state)
{
	static const char *const allowed[] = { "a", "b", NULL };
	struct pg_err err = PG_ERR_INIT;
	cJSON *ok = parse("{\"a\":1,\"b\":2}");
	cJSON *bad = parse("{\"a\":1,\"colour\":2}");

	(void)state;
	assert_int_equal(pg_json_check_keys(ok, allowed, &err), 0);
	assert_int_equal(pg_json_check_keys(bad, allowed, &err), -1);
	assert_string_equal(err.msg, "field 'colour': unknown field");
	cJSON_Delete(ok);
	cJSON_Delete(bad);
}

static void test_err_prefix_and_errno(void **state)
{
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(pg_err_set(&err, PG_EINVAL, "field '%s': missing", "x"), -1);
	pg_err_prefix(&err, "load '%s'", "a.json");
	assert_string_equal(err.msg, "load 'a.json': field 'x': missing");
	errno = ENOENT;
	assert_int_equal(pg_err_errno(&err, "open '%s'", "/nope"), -1);
	assert_int_equal(err.code, PG_EIO);
	assert_string_equal(err.msg, "open '/nope': No such file or directory");
	assert_string_equal(pg_errcode_name(PG_ETIMEOUT), "timeout");
	/* A NULL err is allowed and records nothing. */
	assert_int_equal(pg_err_set(NULL, PG_EINVAL, "x"), -1);
	pg_err_clear(&err);
	assert_int_equal(err.code, PG_OK);
	assert_string_equal(err.msg, "");
	/* Truncation is safe. */
	memset(err.msg, 'x', sizeof(err.msg) - 1);
	err.msg[sizeof(err.msg) - 1] = '\0';
	pg_err_prefix(&err, "ctx");
	assert_int_equal(strlen(err.msg), sizeof(err.msg) - 1);
	assert_memory_equal(err.msg, "ctx: xxx", 8);
}

static void test_resolve_normalises(void **state)
{
	static const char *const cases[][3] = {
		{ "/srv/etc", "../var/x.db", "/srv/var/x.db" },
		{ "/srv/etc", "./a/./b/../c", "/srv/etc/a/c" },
		{ "/srv/etc", "/abs//path/", "/abs/path" },
		{ "/srv", "../../..", "/" },
		{ "/", "x", "/x" },
		{ NULL, "rel/../x", "rel/../x" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *r = pg_config_resolve(cases[i][0], cases[i][1]);

		assert_non_null(r);
		assert_string_equal(r, cases[i][2]);
		free(r);
	}
}

static void test_parse_file_and_config_paths(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	char dir[] = "/tmp/pg-test-json.XXXXXX";
	char path[256], big[300];
	cJSON *root = NULL;
	char *base = NULL, *val = NULL;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/c.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"db\": \"var/x.db\", \"abs\": \"/etc/y\", \"empty\": \"\"}", f);
	fclose(f);

	assert_int_equal(pg_config_read(path, &root, &base, &err), 0);
	assert_string_equal(base, dir);
	assert_int_equal(pg_config_string(root, "db", 1, base, &val, &err), 0);
	snprintf(big, sizeof(big), "%s/var/x.db", dir);
	assert_string_equal(val, big);
	assert_int_equal(pg_config_string(root, "abs", 1, base, &val, &err), 0);
	assert_string_equal(val, "/etc/y");
	assert_int_equal(pg_config_string(root, "absent", 1, base, &val, &err), 0);
	assert_string_equal(val, "/etc/y");
	assert_int_equal(pg_config_string(root, "empty", 1, base, &val, &err), -1);
	assert_string_equal(err.msg, "field 'empty': must not be empty");
	free(val);
	free(base);
	cJSON_Delete(root);

	/* Over the size bound. */
	assert_int_equal(pg_json_parse_file(path, 10, &root, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	/* Missing file. */
	snprintf(big, sizeof(big), "%s/missing.json", dir);
	assert_int_equal(pg_config_read(big, &root, &base, &err), -1);
	assert_non_null(strstr(err.msg, "No such file or directory"));
	/* Not an object. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[1, 2]", f);
	fclose(f);
	assert_int_equal(pg_config_read(path, &root, &base, &err), -1);
	assert_non_null(strstr(err.msg, "expected a JSON object at the top"));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_path(void **state)
{
	cJSON *o = cJSON_Parse("{\"kernel\": \"6.1\", \"host_check\": {\"turbo\": \"on\","
			       " \"hp\": {\"kb\": 2048}}}");

	(void)state;
	assert_non_null(o);
	assert_string_equal(pg_json_path(o, "kernel")->valuestring, "6.1");
	assert_string_equal(pg_json_path(o, "host_check.turbo")->valuestring, "on");
	assert_int_equal(pg_json_path(o, "host_check.hp.kb")->valueint, 2048);
	assert_true(pg_json_path(o, "") == o);
	assert_null(pg_json_path(o, "host_check.smt"));
	assert_null(pg_json_path(o, "kernel.x"));
	assert_null(pg_json_path(NULL, "kernel"));
	assert_null(pg_json_path(o, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	cJSON_Delete(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_error_names_position),
		cmocka_unit_test(test_getters_types_and_ranges),
		cmocka_unit_test(test_check_keys),
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_err_prefix_and_errno),
		cmocka_unit_test(test_resolve_normalises),
		cmocka_unit_test(test_parse_file_and_config_paths),
	};
	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
