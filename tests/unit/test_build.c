/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/build.c: VERSION parsing, ninja progress lines, the
 * option stamp and what setup it calls for, the meson argument vector, and
 * build_dpdk() itself, unsandboxed, on a tiny meson project made in a
 * temporary directory (fresh setup, nothing to do, reconfigure, wipe, a
 * compile error, a stop, a timeout), and the links a patch or the
 * sandboxed build may plant (VERSION, build.ninja, the build directory).  The real DPDK tree and the sandbox
 * are tests/integration/t_build.sh and t_sandbox.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
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

#include "buf.h"
#include "build.h"
#include "err.h"
#include "fsutil.h"
#include "json.h"
#include "proc.h"
#include "rmtreefx.h"

static cJSON *parse(const char *text)
{
	struct pg_err err = PG_ERR_INIT;
	cJSON *j = NULL;

	assert_int_equal(pg_json_parse(text, strlen(text), &j, &err), 0);
	return j;
}

static void test_parse_version(void **state)
{
	static const char *const good[][2] = {
		{ "22.11.11\n", "22.11.11" },
		{ "  24.11.0-rc1 \r\n", "24.11.0-rc1" },
		{ "23.11.0\nsecond line ignored\n", "23.11.0" },
		{ "25.07.0", "25.07.0" },
	};
	static const char *const bad[] = {
		"", "\n", "   \n", "v22.11\n", "22.11 LTS\n", "22.11;rm\n",
		"123456789012345678901234567890123\n",
	};
	struct pg_err err = PG_ERR_INIT;
	char *v;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(build_parse_version(good[i][0], strlen(good[i][0]), &v, &err), 0);
		assert_string_equal(v, good[i][1]);
		free(v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (build_parse_version(bad[i], strlen(bad[i]), &v, &err) == 0)
			fail_msg("accepted '%s'", bad[i]);
		assert_int_equal(err.code, PG_EINVAL);
		assert_null(v);
	}
	/* Quoted only when made of version characters: the text is a
	 * stranger's, and the message reaches the public log. */
	assert_int_equal(build_parse_version("22.11 LTS", 9, &v, &err), -1);
	assert_string_equal(err.msg, "the first line (9 bytes) does not hold a version: only "
			    "0-9 A-Z a-z . + _ - may appear");
	assert_int_equal(build_parse_version("root:$6$salt$hash:19000", 23, &v, &err), -1);
	assert_null(strstr(err.msg, "root"));
	assert_int_equal(build_parse_version("v22.11", 6, &v, &err), -1);
	assert_string_equal(err.msg, "'v22.11' does not start with a digit");
	/* len is authoritative: no NUL needed. */
	assert_int_equal(build_parse_version("21.11.9XYZ", 6, &v, &err), 0);
	assert_string_equal(v, "21.11.");
	free(v);
}

static void test_ninja_line(void **state)
{
	long done = -1, total = -1;

	(void)state;
	assert_int_equal(build_ninja_line("[1/40] Compiling C object x.o", 29, &done, &total), 1);
	assert_int_equal(done, 1);
	assert_int_equal(total, 40);
	assert_int_equal(build_ninja_line("[606/606] Linking target app/test/dpdk-test", 43,
					  &done, &total), 1);
	assert_int_equal(done, 606);
	assert_int_equal(total, 606);
	assert_int_equal(build_ninja_line("[0/1] Regenerating build files.", 31, &done, &total), 1);
	assert_int_equal(done, 0);
	assert_int_equal(build_ninja_line("ninja: no work to do.", 21, &done, &total), 2);
	done = total = -1;
	static const char *const no[] = {
		"", "[", "[1/2", "[1/2 x", "[/2] x", "[1/] x", "[a/b] x", " [1/2] x",
		"FAILED: lib/x.o", "ninja: build stopped: subcommand failed.",
		"[1234567890/2] too many digits",
	};
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_int_equal(build_ninja_line(no[i], strlen(no[i]), &done, &total), 0);
	assert_int_equal(done, -1);
	/* A partial "[N/M]" at the end of a bounded buffer is no line. */
	assert_int_equal(build_ninja_line("[12/34]", 5, &done, &total), 0);
}

static char *stamp_text(const char *options, const char *c_args, const char *buildtype)
{
	struct pg_err err = PG_ERR_INIT;
	struct build_spec spec;
	cJSON *opts = options ? parse(options) : NULL, *stamp;
	char *text;

	memset(&spec, 0, sizeof(spec));
	spec.src_dir = "/w/src";
	spec.buildtype = buildtype;
	spec.c_args = c_args;
	spec.meson_options = opts;
	stamp = build_stamp(&spec, "1.0.1", &err);
	assert_non_null(stamp);
	text = pg_json_print(stamp, false);
	cJSON_Delete(stamp);
	cJSON_Delete(opts);
	return text;
}

static void test_stamp(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct build_spec spec;
	char *t;

	(void)state;
	t = stamp_text("{\"tests\": \"true\", \"platform\": \"native\", \"examples\": \"\"}",
		       NULL, "release");
	assert_string_equal(t, "{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\",\"options\":"
			    "{\"buildtype\":\"release\",\"c_args\":\"\",\"examples\":\"\","
			    "\"platform\":\"native\",\"tests\":\"true\"}}");
	free(t);
	t = stamp_text(NULL, "-DRTE_LIBRTE_MEMPOOL_DEBUG -DX='a b'", "debugoptimized");
	assert_string_equal(t, "{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\",\"options\":"
			    "{\"buildtype\":\"debugoptimized\","
			    "\"c_args\":\"-DRTE_LIBRTE_MEMPOOL_DEBUG -DX='a b'\"}}");
	free(t);

	static const char *const bad[][2] = {
		{ "[]", "build.meson_options: expected an object, got an array" },
		{ "{\"Tests\": \"true\"}",
		  "build.meson_options: 'Tests' is not an option name ([a-z0-9_]+)" },
		{ "{\"sub:opt\": \"1\"}",
		  "build.meson_options: 'sub:opt' is not an option name ([a-z0-9_]+)" },
		{ "{\"tests\": true}", "build.meson_options.tests: expected a string, got a boolean" },
		{ "{\"buildtype\": \"debug\"}",
		  "build.meson_options.buildtype: has a field of its own in build" },
		{ "{\"c_args\": \"-O0\"}", "build.meson_options.c_args: has a field of its own in build" },
		{ "{\"tests\": \"true\", \"tests\": \"false\"}", "build.meson_options.tests: given twice" },
	};
	memset(&spec, 0, sizeof(spec));
	spec.src_dir = "/w/src";
	spec.buildtype = "release";
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *opts = parse(bad[i][0]);

		spec.meson_options = opts;
		assert_null(build_stamp(&spec, "1.0.1", &err));
		assert_int_equal(err.code, PG_EINVAL);
		assert_string_equal(err.msg, bad[i][1]);
		cJSON_Delete(opts);
	}
}

static void test_setup_needed(void **state)
{
	cJSON *base = parse("{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\",\"options\":"
			    "{\"buildtype\":\"release\",\"c_args\":\"\",\"tests\":\"true\"}}");
	static const struct {
		const char *old;
		enum build_setup want;
	} cases[] = {
		/* the same */
		{ "{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\",\"options\":"
		  "{\"tests\":\"true\",\"c_args\":\"\",\"buildtype\":\"release\"}}", BUILD_SETUP_NONE },
		/* a value changed */
		{ "{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\",\"options\":"
		  "{\"buildtype\":\"debugoptimized\",\"c_args\":\"\",\"tests\":\"true\"}}",
		  BUILD_SETUP_RECONFIGURE },
		{ "{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\",\"options\":"
		  "{\"buildtype\":\"release\",\"c_args\":\"-DX\",\"tests\":\"true\"}}",
		  BUILD_SETUP_RECONFIGURE },
		/* an option added */
		{ "{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\",\"options\":"
		  "{\"buildtype\":\"release\",\"c_args\":\"\"}}", BUILD_SETUP_RECONFIGURE },
		/* an option removed: meson would keep its old value */
		{ "{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\",\"options\":"
		  "{\"buildtype\":\"release\",\"c_args\":\"\",\"tests\":\"true\","
		  "\"enable_apps\":\"test-pmd\"}}", BUILD_SETUP_WIPE },
		/* another meson, another tree */
		{ "{\"meson\":\"0.63.0\",\"src_dir\":\"/w/src\",\"options\":"
		  "{\"buildtype\":\"release\",\"c_args\":\"\",\"tests\":\"true\"}}", BUILD_SETUP_WIPE },
		{ "{\"meson\":\"1.0.1\",\"src_dir\":\"/w/other\",\"options\":"
		  "{\"buildtype\":\"release\",\"c_args\":\"\",\"tests\":\"true\"}}", BUILD_SETUP_WIPE },
		/* damaged stamps */
		{ "{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\"}", BUILD_SETUP_WIPE },
		{ "{}", BUILD_SETUP_WIPE },
		{ "{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\",\"options\":"
		  "{\"buildtype\":\"release\",\"c_args\":\"\",\"tests\":true}}",
		  BUILD_SETUP_RECONFIGURE },
	};

	(void)state;
	assert_int_equal(build_setup_needed(NULL, base), BUILD_SETUP_FRESH);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *old = parse(cases[i].old);
		enum build_setup got = build_setup_needed(old, base);

		if (got != cases[i].want)
			fail_msg("case %zu: %s, expected %s", i, build_setup_name(got),
				 build_setup_name(cases[i].want));
		cJSON_Delete(old);
	}
	assert_string_equal(build_setup_name(BUILD_SETUP_RECONFIGURE), "reconfigure");
	cJSON_Delete(base);
}

static void test_meson_argv(void **state)
{
	cJSON *stamp = parse("{\"meson\":\"1.0.1\",\"src_dir\":\"/w/src\",\"options\":"
			     "{\"buildtype\":\"release\",\"c_args\":\"-DA -DB='x y'\","
			     "\"examples\":\"\",\"tests\":\"true\"}}");
	static const char *const want[] = {
		"meson", "setup", "-Dbuildtype=release", "-Dc_args=-DA -DB='x y'", "-Dexamples=",
		"-Dtests=true", "/w/build", "/w/src", NULL,
	};
	char **argv = build_meson_argv(stamp, "/w/build", "/w/src", false);
	size_t i;

	(void)state;
	assert_non_null(argv);
	for (i = 0; want[i]; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[i]);
	sandbox_argv_free(argv);
	argv = build_meson_argv(stamp, "/w/build", "/w/src", true);
	assert_string_equal(argv[2], "--reconfigure");
	assert_string_equal(argv[3], "-Dbuildtype=release");
	sandbox_argv_free(argv);
	cJSON_Delete(stamp);
}

/* --- build_dpdk() on a tiny meson project --- */

struct fixture {
	char dir[64];
	char src[128];
	char build[128];
	char log[128];
	struct pg_buf streamed;
	int stop_polls;		/* stop after this many polls; 0: never */
	int polls;
	long progress_calls;	/* spec.progress: how often, and the last */
	long last_done, last_total;
	bool progress_backwards;	/* done went down within one total */
};

static void write_text(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	struct pg_err err = PG_ERR_INIT;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(pg_write_file_atomic(path, text, strlen(text), 0644, &err), 0);
}

static const char meson_build[] =
	"project('tiny', 'c')\n"
	"exe = executable('hello', 'hello.c', c_args: '-DGREETING=\"' + get_option('greeting') + '\"')\n"
	"if get_option('slow')\n"
	"  custom_target('slow', output: 'slow.txt', command: ['sleep', '30'], capture: true,\n"
	"                build_by_default: true)\n"
	"endif\n";
static const char hello_c[] =
	"#include <stdio.h>\n"
	"int main(void) { puts(GREETING); return 0; }\n";

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/pg-test-build.XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->src, sizeof(f->src), "%s/src", f->dir);
	snprintf(f->build, sizeof(f->build), "%s/build", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/build.log", f->dir);
	if (mkdir(f->src, 0755) < 0)
		return -1;
	write_text(f->src, "VERSION", "1.2.3\n");
	write_text(f->src, "meson.build", meson_build);
	write_text(f->src, "meson_options.txt",
		   "option('greeting', type: 'string', value: 'hello')\n"
		   "option('slow', type: 'boolean', value: false)\n");
	write_text(f->src, "hello.c", hello_c);
	pg_buf_init(&f->streamed, PG_BUF_NOLIMIT);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int rc = fx_rm_tree(f->dir);

	pg_buf_release(&f->streamed);
	free(f);
	return rc;
}

static void on_log(void *arg, const char *text, size_t len)
{
	struct fixture *f = arg;

	assert_int_equal(pg_buf_add(&f->streamed, text, len), 0);
}

static void on_progress(void *arg, long done, long total)
{
	struct fixture *f = arg;

	if (f->progress_calls && total == f->last_total && done < f->last_done)
		f->progress_backwards = true;
	f->progress_calls++;
	f->last_done = done;
	f->last_total = total;
}

static bool on_stopped(void *arg)
{
	struct fixture *f = arg;

	f->polls++;
	return f->stop_polls && f->polls >= f->stop_polls;
}

/* Build with these options; the log file is truncated first and must
 * equal what was streamed. */
static int run(struct fixture *f, const char *options, const char *c_args,
	       unsigned int timeout_s, struct build_result *res, struct pg_err *err)
{
	struct pg_buf file = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct build_spec spec;
	cJSON *opts = options ? parse(options) : NULL;
	int rc;

	(void)unlink(f->log);
	pg_buf_reset(&f->streamed);
	f->progress_calls = f->last_done = f->last_total = 0;
	f->progress_backwards = false;
	memset(&spec, 0, sizeof(spec));
	spec.src_dir = f->src;
	spec.build_dir = f->build;
	spec.log_path = f->log;
	spec.buildtype = "release";
	spec.meson_options = opts;
	spec.c_args = c_args;
	spec.expect_version = "1.2.3";
	spec.timeout_s = timeout_s;
	spec.log = on_log;
	spec.stopped = on_stopped;
	spec.progress = on_progress;
	spec.arg = f;
	rc = build_dpdk(&spec, res, err);
	if (rc == 0) {
		struct pg_err e = PG_ERR_INIT;

		assert_int_equal(pg_read_file(f->log, &file, &e), 0);
		assert_int_equal(file.len, f->streamed.len);
		assert_memory_equal(file.data, f->streamed.data, file.len);
		assert_true(strlen(res->tail) <= BUILD_TAIL_MAX);
		/* The tail is the end of the log. */
		assert_true(file.len >= strlen(res->tail));
		assert_string_equal(file.data + file.len - strlen(res->tail), res->tail);
	}
	pg_buf_release(&file);
	cJSON_Delete(opts);
	return rc;
}

static bool file_exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void test_build_flow(void **state)
{
	struct fixture *f = *state;
	struct build_result res = BUILD_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	char stamp[PATH_MAX];

	/* Fresh. */
	assert_int_equal(run(f, "{\"greeting\": \"hi\"}", NULL, 0, &res, &err), 0);
	if (!res.ok)
		fail_msg("build failed: %s\n%s", res.failed_step, res.tail);
	assert_string_equal(res.setup, "fresh");
	assert_true(res.setup_ran);
	assert_true(res.steps >= 2);	/* compile, link */
	/* Progress once per ninja step, ending at [M/M]. */
	assert_int_equal(f->progress_calls, res.steps);
	assert_false(f->progress_backwards);
	assert_true(f->last_total >= 2);
	assert_int_equal(f->last_done, f->last_total);
	assert_string_equal(res.version, "1.2.3");
	assert_false(res.version_mismatch);
	assert_null(res.failed_step);
	assert_non_null(strstr(pg_buf_str(&f->streamed), "perfgate: meson setup: fresh"));
	assert_non_null(strstr(pg_buf_str(&f->streamed),
			       "+ meson setup -Dbuildtype=release -Dc_args= -Dgreeting=hi "));
	assert_non_null(strstr(pg_buf_str(&f->streamed), "perfgate: sandbox: unsandboxed\n"));
	assert_true(file_exists(f->build, "hello"));
	snprintf(stamp, sizeof(stamp), "%s%s", f->build, BUILD_STAMP_SUFFIX);
	assert_int_equal(access(stamp, F_OK), 0);
	build_result_release(&res);

	/* Nothing to do. */
	assert_int_equal(run(f, "{\"greeting\": \"hi\"}", NULL, 0, &res, &err), 0);
	assert_true(res.ok);
	assert_string_equal(res.setup, "none");
	assert_false(res.setup_ran);
	assert_int_equal(res.steps, 0);
	assert_int_equal(f->progress_calls, 0);
	assert_non_null(strstr(res.tail, "ninja: no work to do."));
	build_result_release(&res);

	/* A value and c_args changed: reconfigured, the object rebuilt. */
	write_text(f->build, "keep-me", "x");
	assert_int_equal(run(f, "{\"greeting\": \"hey\"}", "-DEXTRA=1", 0, &res, &err), 0);
	assert_true(res.ok);
	assert_string_equal(res.setup, "reconfigure");
	assert_true(res.steps >= 2);
	assert_non_null(strstr(pg_buf_str(&f->streamed), "+ meson setup --reconfigure "
			       "-Dbuildtype=release -Dc_args=-DEXTRA=1 -Dgreeting=hey "));
	assert_true(file_exists(f->build, "keep-me"));
	build_result_release(&res);

	/* An option dropped: meson would keep "hey", so the directory is
	 * wiped and set up again. */
	assert_int_equal(run(f, NULL, "-DEXTRA=1", 0, &res, &err), 0);
	assert_true(res.ok);
	assert_string_equal(res.setup, "wipe");
	assert_false(file_exists(f->build, "keep-me"));
	assert_true(file_exists(f->build, "hello"));
	build_result_release(&res);

	/* A damaged build directory (no build.ninja) is set up afresh even
	 * though the stamp matches. */
	{
		char ninja[PATH_MAX];

		snprintf(ninja, sizeof(ninja), "%s/build.ninja", f->build);
		assert_int_equal(unlink(ninja), 0);
	}
	assert_int_equal(run(f, NULL, "-DEXTRA=1", 0, &res, &err), 0);
	assert_true(res.ok);
	assert_string_equal(res.setup, "fresh");
	build_result_release(&res);

	/* A compile error: an outcome with the compiler's message. */
	write_text(f->src, "hello.c", "int main(void) { return nope; }\n");
	assert_int_equal(run(f, NULL, "-DEXTRA=1", 0, &res, &err), 0);
	assert_false(res.ok);
	assert_false(res.stopped);
	assert_false(res.timed_out);
	assert_string_equal(res.failed_step, "ninja: exited 1");
	if (!strstr(res.tail, "error: 'nope' undeclared"))
		fail_msg("tail: %s", res.tail);
	assert_non_null(strstr(res.tail, "perfgate: ninja: exited 1\n"));
	assert_null(strchr(res.tail, '\033'));	/* ninja strips the colours */
	assert_int_equal(res.steps, 1);
	build_result_release(&res);
	write_text(f->src, "hello.c", hello_c);

	/* A failing setup leaves no stamp: the next build starts afresh. */
	assert_int_equal(run(f, "{\"no_such_option\": \"1\"}", NULL, 0, &res, &err), 0);
	assert_false(res.ok);
	assert_string_equal(res.failed_step, "meson setup: exited 1");
	assert_non_null(strstr(res.tail, "no_such_option"));
	assert_int_equal(access(stamp, F_OK), -1);
	build_result_release(&res);
	assert_int_equal(run(f, NULL, NULL, 0, &res, &err), 0);
	assert_true(res.ok);
	assert_string_equal(res.setup, "fresh");
	build_result_release(&res);
}

static void test_build_stop_and_timeout(void **state)
{
	struct fixture *f = *state;
	struct build_result res = BUILD_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;

	/* Stopped while the 30 s step runs. */
	f->stop_polls = 40;
	assert_int_equal(run(f, "{\"slow\": \"true\"}", NULL, 0, &res, &err), 0);
	assert_false(res.ok);
	assert_true(res.stopped);
	assert_false(res.timed_out);
	assert_non_null(strstr(res.failed_step, "(cancelled)"));
	assert_true(res.duration_ms < 30000);
	build_result_release(&res);

	/* The deadline covers the whole build. */
	f->stop_polls = 0;
	assert_int_equal(run(f, "{\"slow\": \"true\"}", NULL, 3, &res, &err), 0);
	assert_false(res.ok);
	assert_false(res.stopped);
	assert_true(res.timed_out);
	assert_non_null(strstr(res.failed_step, "timeout after"));
	build_result_release(&res);
}

static void test_build_errors(void **state)
{
	struct fixture *f = *state;
	struct build_result res = BUILD_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	char path[PATH_MAX];

	/* Not a DPDK tree. */
	snprintf(path, sizeof(path), "%s/VERSION", f->src);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(run(f, NULL, NULL, 0, &res, &err), -1);
	assert_int_equal(err.code, PG_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/src/VERSION': no such file (not a DPDK tree?)"));
	build_result_release(&res);
	write_text(f->src, "VERSION", "9.9.9\n");

	/* The job's version differs: noted, built anyway. */
	assert_int_equal(run(f, NULL, NULL, 0, &res, &err), 0);
	assert_true(res.ok);
	assert_true(res.version_mismatch);
	assert_non_null(strstr(pg_buf_str(&f->streamed),
			       "perfgate: note: the tree's VERSION is 9.9.9 but the job says 1.2.3"));
	build_result_release(&res);

	/* A bad option: nothing runs. */
	assert_int_equal(run(f, "{\"Bad\": \"1\"}", NULL, 0, &res, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "'Bad' is not an option name"));
	build_result_release(&res);
}

/* A file outside the tree that only root should read; its first line
 * looks like a version, so that nothing but the refusal keeps it out. */
#define SECRET_LINE "99.1.2-topsecret"

static void make_secret(const struct fixture *f, char *path, size_t size)
{
	snprintf(path, size, "%s/secret", f->dir);
	assert_int_equal(pg_write_file_atomic(path, SECRET_LINE "\nmore\n", 22, 0600, NULL), 0);
}

static void test_version_link(void **state)
{
	struct fixture *f = *state;
	struct build_result res = BUILD_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	char secret[PATH_MAX], version[PATH_MAX], want[PATH_MAX + 64];
	char *v = NULL;

	make_secret(f, secret, sizeof(secret));
	snprintf(version, sizeof(version), "%s/VERSION", f->src);
	assert_int_equal(unlink(version), 0);
	assert_int_equal(symlink(secret, version), 0);

	assert_int_equal(build_read_version(f->src, &v, &err), -1);
	assert_null(v);
	assert_int_equal(err.code, PG_EINVAL);
	snprintf(want, sizeof(want), "'%s/VERSION' is a symbolic link: refused", f->src);
	assert_string_equal(err.msg, want);

	/* The build: an outcome that says why, nothing run, the secret
	 * nowhere (result, log, stream). */
	assert_int_equal(run(f, NULL, NULL, 0, &res, &err), 0);
	assert_false(res.ok);
	assert_null(res.version);
	assert_false(res.setup_ran);
	snprintf(want, sizeof(want), "VERSION: '%s/VERSION' is a symbolic link: refused", f->src);
	assert_string_equal(res.failed_step, want);
	assert_non_null(strstr(res.tail, want));
	assert_null(strstr(res.tail, "topsecret"));
	assert_null(strstr(pg_buf_str(&f->streamed), "topsecret"));
	assert_false(file_exists(f->build, "build.ninja"));
	build_result_release(&res);

	/* A relative link that stays inside the tree is refused as well. */
	assert_int_equal(unlink(version), 0);
	write_text(f->src, "VERSION.real", "1.2.3\n");
	assert_int_equal(symlink("VERSION.real", version), 0);
	assert_int_equal(build_read_version(f->src, &v, &err), -1);
	assert_non_null(strstr(err.msg, "is a symbolic link: refused"));
}

static void test_version_not_quoted(void **state)
{
	struct fixture *f = *state;
	struct build_result res = BUILD_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	char *v = NULL;

	/* A regular file that is no version: its bytes never quoted. */
	write_text(f->src, "VERSION", "hunter2 is the password\n");
	assert_int_equal(build_read_version(f->src, &v, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_null(strstr(err.msg, "hunter2"));
	assert_non_null(strstr(err.msg, "VERSION': the first line (23 bytes) does not hold a "
			       "version"));
	assert_int_equal(run(f, NULL, NULL, 0, &res, &err), 0);
	assert_false(res.ok);
	assert_non_null(strstr(res.failed_step, "does not hold a version"));
	assert_null(strstr(res.tail, "hunter2"));
	build_result_release(&res);

	/* VERSION a FIFO: refused at once, not waited on. */
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/VERSION", f->src);
		assert_int_equal(unlink(path), 0);
		assert_int_equal(mkfifo(path, 0644), 0);
		assert_int_equal(build_read_version(f->src, &v, &err), -1);
		assert_non_null(strstr(err.msg, "VERSION' is not a regular file"));
		assert_int_equal(unlink(path), 0);
		write_text(f->src, "VERSION", "1.2.3\n");
	}
	assert_int_equal(build_read_version(f->src, &v, &err), 0);
	assert_string_equal(v, "1.2.3");
	free(v);
}

/* The sandboxed build writes the build directory: a build.ninja it
 * replaced by a link means "set up afresh", never "reuse"; the build
 * directory itself a link is refused before anything is removed. */
static void test_build_dir_links(void **state)
{
	struct fixture *f = *state;
	struct build_result res = BUILD_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	char ninja[PATH_MAX], outside[256], keep[PATH_MAX], moved[PATH_MAX];

	assert_int_equal(run(f, NULL, NULL, 0, &res, &err), 0);
	assert_true(res.ok);
	build_result_release(&res);
	snprintf(outside, sizeof(outside), "%s/outside", f->dir);
	assert_int_equal(mkdir(outside, 0755), 0);
	write_text(outside, "keep", "sentinel\n");
	snprintf(ninja, sizeof(ninja), "%s/build.ninja", f->build);
	snprintf(moved, sizeof(moved), "%s/build.ninja", outside);
	assert_int_equal(rename(ninja, moved), 0);
	assert_int_equal(symlink(moved, ninja), 0);
	assert_int_equal(run(f, NULL, NULL, 0, &res, &err), 0);
	if (!res.ok)
		fail_msg("build failed: %s\n%s", res.failed_step, res.tail);
	assert_string_equal(res.setup, "fresh");
	assert_true(file_exists(outside, "keep"));
	assert_true(file_exists(outside, "build.ninja"));
	build_result_release(&res);

	/* The build directory a link to outside: refused, outside intact. */
	snprintf(keep, sizeof(keep), "%s.real", f->build);
	assert_int_equal(rename(f->build, keep), 0);
	assert_int_equal(symlink(outside, f->build), 0);
	snprintf(ninja, sizeof(ninja), "%s%s", f->build, BUILD_STAMP_SUFFIX);
	(void)unlink(ninja);
	assert_int_equal(run(f, NULL, NULL, 0, &res, &err), -1);
	assert_non_null(strstr(err.msg, "is a symbolic link: refused"));
	assert_true(file_exists(outside, "keep"));
	assert_true(file_exists(outside, "build.ninja"));
	build_result_release(&res);
	assert_int_equal(unlink(f->build), 0);
}

/* --- the ccache of each side, and the shared one --- */

static long files_found;

static int count_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)st;
	(void)ftw;
	if (type == FTW_F)
		files_found++;
	return 0;
}

/* Regular files beneath dir; 0 when it does not exist. */
static long count_files(const char *dir)
{
	files_found = 0;
	if (access(dir, F_OK) == 0)
		assert_int_equal(nftw(dir, count_file, 16, FTW_PHYS), 0);
	return files_found;
}

/* One build with ccache: cache its own, shared as given. */
static void cached_build(struct fixture *f, const char *build, const char *cache,
			 const char *shared, bool shared_ro, uint64_t shared_max)
{
	struct build_result res = BUILD_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct build_spec spec;

	memset(&spec, 0, sizeof(spec));
	spec.src_dir = f->src;
	spec.build_dir = build;
	spec.ccache_dir = cache;
	spec.ccache_basedir = f->dir;
	spec.ccache_shared_dir = shared;
	spec.ccache_shared_readonly = shared_ro;
	spec.ccache_shared_max = shared_max;
	spec.log_path = f->log;
	spec.buildtype = "release";
	spec.log = on_log;
	spec.arg = f;
	pg_buf_reset(&f->streamed);
	if (build_dpdk(&spec, &res, &err) < 0)
		fail_msg("build: %s", err.msg);
	if (!res.ok)
		fail_msg("build failed: %s\n%s", res.failed_step, res.tail);
	build_result_release(&res);
}

/* ccache's own count of hits from the shared cache in cache. */
static bool shared_hit(const char *cache)
{
	const char *argv[] = { "ccache", "--print-stats", NULL };
	struct pg_proc p = PG_PROC_INIT;
	struct pg_err err = PG_ERR_INIT;
	char env_dir[200];
	const char *env[] = { env_dir, NULL };
	bool hit;

	snprintf(env_dir, sizeof(env_dir), "CCACHE_DIR=%s", cache);
	p.argv = argv;
	p.env_set = env;
	p.tail_max = 64 * 1024;
	assert_int_equal(pg_proc_run(&p, &err), 0);
	assert_true(pg_proc_succeeded(&p));
	hit = strstr(pg_buf_str(&p.tail), "\nremote_storage_hit\t1\n") != NULL;
	pg_proc_release(&p);
	return hit;
}

/*
 * A base build fills its own cache and the shared one; a patched build
 * with the shared one read-only gets the base's object from it, keeps it
 * in its own cache and writes nothing to the shared one; the shared one
 * is emptied by a base build once it is over its limit, then filled
 * again, and never by a patched build.
 */
static void test_ccache_shared(void **state)
{
	struct fixture *f = *state;
	char base_cache[160], patched_cache[160], shared[160], b1[160], b2[160];
	struct pg_err err = PG_ERR_INIT;
	long n_shared;

	snprintf(base_cache, sizeof(base_cache), "%s/ccache/release", f->dir);
	snprintf(patched_cache, sizeof(patched_cache), "%s/ccache/release-patched", f->dir);
	snprintf(shared, sizeof(shared), "%s/ccache/release-shared", f->dir);
	snprintf(b1, sizeof(b1), "%s/build-base", f->dir);
	snprintf(b2, sizeof(b2), "%s/build-patched", f->dir);
	assert_int_equal(pg_mkdir_p(shared, 0755, &err), 0);

	cached_build(f, b1, base_cache, shared, false, 0);
	n_shared = count_files(shared);
	assert_true(n_shared >= 1);
	assert_true(count_files(base_cache) >= 1);

	cached_build(f, b2, patched_cache, shared, true, 0);
	assert_int_equal(count_files(shared), n_shared);
	assert_true(count_files(patched_cache) >= 1);
	assert_true(shared_hit(patched_cache));

	/* Over its limit (1 byte): emptied before the base build, which
	 * fills it again. */
	write_text(f->src, "hello.c", "#include <stdio.h>\nint main(void) { return 0; }\n");
	cached_build(f, b1, base_cache, shared, false, 1);
	assert_non_null(strstr(pg_buf_str(&f->streamed), "perfgate: ccache: the shared cache "));
	assert_non_null(strstr(pg_buf_str(&f->streamed), " KiB: emptied\n"));
	n_shared = count_files(shared);
	assert_true(n_shared >= 1);
	cached_build(f, b2, patched_cache, shared, true, 1);
	assert_null(strstr(pg_buf_str(&f->streamed), "emptied"));
	assert_int_equal(count_files(shared), n_shared);
}

/* A shared cache whose path ccache's URL cannot carry, or that is the
 * build's own cache, is refused before anything runs. */
static void test_ccache_shared_refused(void **state)
{
	struct fixture *f = *state;
	struct build_result res = BUILD_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct build_spec spec;
	char cache[160], odd[160];

	snprintf(cache, sizeof(cache), "%s/ccache/x", f->dir);
	snprintf(odd, sizeof(odd), "%s/ccache/a|b", f->dir);
	memset(&spec, 0, sizeof(spec));
	spec.src_dir = f->src;
	spec.build_dir = f->build;
	spec.log_path = f->log;
	spec.buildtype = "release";
	spec.ccache_dir = cache;
	spec.ccache_shared_dir = odd;
	assert_int_equal(build_dpdk(&spec, &res, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	build_result_release(&res);
	spec.ccache_shared_dir = cache;
	assert_int_equal(build_dpdk(&spec, &res, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	build_result_release(&res);
	assert_false(file_exists(f->build, "build.ninja"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_version),
		cmocka_unit_test(test_ninja_line),
		cmocka_unit_test(test_stamp),
		cmocka_unit_test(test_setup_needed),
		cmocka_unit_test(test_meson_argv),
		cmocka_unit_test_setup_teardown(test_build_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_stop_and_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_not_quoted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_dir_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ccache_shared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ccache_shared_refused, setup, teardown),
	};
	return cmocka_run_group_tests_name("build", tests, NULL, NULL);
}
