/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/sandbox.c: the "sandbox" configuration object, the
 * wrapped argument vector (exactly), the per-job decision, the detection
 * of a sandbox that could not start, and the workspace hand-over to the
 * sandbox user (as root only).  Real sandboxed runs are in
 * tests/integration/t_sandbox.sh.
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

#include "err.h"
#include "json.h"
#include "buf.h"
#include "sandbox.h"
#include "rmtreefx.h"

static cJSON *parse(const char *text)
{
	struct pg_err err = PG_ERR_INIT;
	cJSON *j = NULL;

	assert_int_equal(pg_json_parse(text, strlen(text), &j, &err), 0);
	return j;
}

/* Parse a "sandbox" object over the defaults; returns the result, the
 * message in err. */
static int parse_cfg(const char *text, struct sandbox_cfg *c, struct pg_err *err)
{
	cJSON *j = parse(text);
	int rc;

	assert_int_equal(sandbox_cfg_init(c, err), 0);
	rc = sandbox_cfg_parse(c, j, err);
	cJSON_Delete(j);
	return rc;
}

static void test_defaults(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct sandbox_cfg c;
	cJSON *j;
	char *text;

	(void)state;
	assert_int_equal(parse_cfg("{}", &c, &err), 0);
	assert_true(c.enabled);
	assert_string_equal(c.user, "perfgate-sandbox");
	assert_int_equal(c.cpu_s, 7200);
	assert_int_equal(c.memory_mb, 8192);
	assert_int_equal(c.max_procs, 4096);
	assert_false(c.allow_unsandboxed);
	assert_int_equal(c.n_ro_paths, 0);
	assert_false(c.resolved);
	j = sandbox_cfg_to_json(&c);
	assert_non_null(j);
	text = pg_json_print(j, false);
	assert_string_equal(text, "{\"enabled\":true,\"user\":\"perfgate-sandbox\",\"cpu_s\":7200,"
			    "\"memory_mb\":8192,\"max_procs\":4096,\"allow_unsandboxed\":false,"
			    "\"ro_paths\":[]}");
	free(text);
	cJSON_Delete(j);
	sandbox_cfg_free(&c);
}

static void test_all_fields(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct sandbox_cfg c;
	cJSON *j;
	char *text;

	(void)state;
	assert_int_equal(parse_cfg("{\"enabled\": false, \"user\": \"pg-build_1\", \"cpu_s\": 0,"
				   " \"memory_mb\": 64, \"max_procs\": 16,"
				   " \"allow_unsandboxed\": true,"
				   " \"ro_paths\": [\"/opt/tools\", \"/srv/x..y\"]}", &c, &err), 0);
	assert_false(c.enabled);
	assert_string_equal(c.user, "pg-build_1");
	assert_int_equal(c.cpu_s, 0);
	assert_int_equal(c.memory_mb, 64);
	assert_int_equal(c.max_procs, 16);
	assert_true(c.allow_unsandboxed);
	assert_int_equal(c.n_ro_paths, 2);
	j = sandbox_cfg_to_json(&c);
	text = pg_json_print(j, false);
	assert_string_equal(text, "{\"enabled\":false,\"user\":\"pg-build_1\",\"cpu_s\":0,"
			    "\"memory_mb\":64,\"max_procs\":16,\"allow_unsandboxed\":true,"
			    "\"ro_paths\":[\"/opt/tools\",\"/srv/x..y\"]}");
	free(text);
	cJSON_Delete(j);
	sandbox_cfg_free(&c);
}

static void test_bad_fields(void **state)
{
	static const char *const cases[][2] = {
		{ "[]", "field 'sandbox': expected an object, got an array" },
		{ "{\"network\": true}", "field 'sandbox.network': unknown field" },
		{ "{\"enabled\": 1}", "field 'sandbox.enabled': expected a boolean, got a number" },
		{ "{\"user\": \"root\"}",
		  "field 'sandbox.user': the sandbox must run as an unprivileged user, not root" },
		{ "{\"user\": \"Bob\"}",
		  "field 'sandbox.user': 'Bob' is not a user name (lower-case letters, digits, '_', '-')" },
		{ "{\"user\": \"\"}",
		  "field 'sandbox.user': '' is not a user name (lower-case letters, digits, '_', '-')" },
		{ "{\"cpu_s\": -1}", NULL },
		{ "{\"cpu_s\": 604801}", NULL },
		{ "{\"cpu_s\": 1.5}", NULL },
		{ "{\"memory_mb\": 63}",
		  "field 'sandbox.memory_mb': 63 is below 64 (0 means no limit)" },
		{ "{\"max_procs\": 15}",
		  "field 'sandbox.max_procs': 15 is below 16 (0 means no limit)" },
		{ "{\"ro_paths\": \"/opt\"}", NULL },
		{ "{\"ro_paths\": [\"opt\"]}",
		  "field 'sandbox.ro_paths[0]': 'opt' is not an absolute path without '..' (and not '/')" },
		{ "{\"ro_paths\": [\"/\"]}", NULL },
		{ "{\"ro_paths\": [\"/opt/../root\"]}", NULL },
		{ "{\"ro_paths\": [\"/opt/..\"]}", NULL },
		{ "{\"enabled\": false}",
		  "field 'sandbox.enabled': false runs patches from the list unsandboxed; say so "
		  "with \"allow_unsandboxed\": true as well (trusted hosts only)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_err err = PG_ERR_INIT;
		struct sandbox_cfg c;

		if (parse_cfg(cases[i][0], &c, &err) == 0)
			fail_msg("accepted: %s", cases[i][0]);
		assert_int_equal(err.code, PG_EINVAL);
		if (cases[i][1])
			assert_string_equal(err.msg, cases[i][1]);
		else if (strncmp(err.msg, "field 'sandbox.", 15) != 0)
			fail_msg("%s: message does not name the field: %s", cases[i][0], err.msg);
		sandbox_cfg_free(&c);
	}
}

static void resolved(struct sandbox_cfg *c, bool drop)
{
	struct pg_err err = PG_ERR_INIT;

	assert_int_equal(sandbox_cfg_init(c, &err), 0);
	c->resolved = true;
	c->drop = drop;
	c->uid = 999;
	c->gid = 995;
}

static char *join(char **argv)
{
	struct pg_buf b = PG_BUF_INIT(1 << 20);

	for (size_t i = 0; argv[i]; i++)
		assert_int_equal(pg_buf_printf(&b, "%s%s", i ? " " : "", argv[i]), 0);
	assert_int_equal(pg_buf_addch(&b, '\0'), 0);
	return pg_buf_detach(&b, NULL);
}

static void test_wrap_root(void **state)
{
	const char *cmd_argv[] = { "meson", "setup", "a b", NULL };
	const char *rw[] = { "/w/build", "/w/ccache", NULL };
	const char *ro[] = { "/w/src", NULL };
	const char *dev[] = { "/dev/hugepages", NULL };
	struct sandbox_cmd cmd = { cmd_argv, "/w/build", rw, ro, dev };
	struct pg_err err = PG_ERR_INIT;
	struct sandbox_cfg c;
	char **argv = NULL, *s;
	size_t n = 0;

	(void)state;
	resolved(&c, true);
	c.ro_paths = calloc(1, sizeof(char *));
	c.ro_paths[0] = strdup("/opt/tools");
	c.n_ro_paths = 1;
	assert_int_equal(sandbox_wrap(&c, &cmd, &argv, &err), 0);
	s = join(argv);
	assert_string_equal(s,
		"/usr/bin/prlimit --cpu=7200:7210 --data=8589934592 --nproc=4096 -- "
		"/usr/bin/setpriv --reuid=999 --regid=995 --clear-groups -- "
		"/usr/bin/bwrap --unshare-all --unshare-user --disable-userns --die-with-parent "
		"--ro-bind /usr /usr --ro-bind /etc /etc "
		"--ro-bind-try /bin /bin --ro-bind-try /sbin /sbin --ro-bind-try /lib /lib "
		"--ro-bind-try /lib32 /lib32 --ro-bind-try /lib64 /lib64 "
		"--ro-bind-try /libx32 /libx32 --ro-bind-try /sys /sys "
		"--ro-bind /opt/tools /opt/tools "
		"--dev /dev --proc /proc --size 8589934592 --tmpfs /tmp "
		"--ro-bind /w/src /w/src --bind /w/build /w/build --bind /w/ccache /w/ccache "
		"--dev-bind /dev/hugepages /dev/hugepages "
		"--remount-ro / --chdir /w/build -- meson setup a b");
	/* "a b" stays one argument: no shell anywhere. */
	while (argv[n])
		n++;
	assert_string_equal(argv[n - 1], "a b");
	free(s);
	sandbox_argv_free(argv);
	sandbox_cfg_free(&c);
}

static void test_wrap_user_no_limits(void **state)
{
	const char *cmd_argv[] = { "true", NULL };
	struct sandbox_cmd cmd = { cmd_argv, NULL, NULL, NULL, NULL };
	struct pg_err err = PG_ERR_INIT;
	struct sandbox_cfg c;
	char **argv = NULL, *s;

	(void)state;
	resolved(&c, false);
	c.cpu_s = 0;
	c.memory_mb = 0;
	c.max_procs = 0;
	assert_int_equal(sandbox_wrap(&c, &cmd, &argv, &err), 0);
	s = join(argv);
	assert_string_equal(s,
		"/usr/bin/bwrap --unshare-all --unshare-user --disable-userns --die-with-parent "
		"--ro-bind /usr /usr --ro-bind /etc /etc "
		"--ro-bind-try /bin /bin --ro-bind-try /sbin /sbin --ro-bind-try /lib /lib "
		"--ro-bind-try /lib32 /lib32 --ro-bind-try /lib64 /lib64 "
		"--ro-bind-try /libx32 /libx32 --ro-bind-try /sys /sys "
		"--dev /dev --proc /proc --tmpfs /tmp --remount-ro / --chdir /tmp -- true");
	free(s);
	sandbox_argv_free(argv);
	sandbox_cfg_free(&c);
}

static void test_wrap_errors(void **state)
{
	const char *cmd_argv[] = { "true", NULL };
	const char *empty[] = { NULL };
	const char *rel[] = { "build", NULL };
	const char *up[] = { "/w/../etc", NULL };
	struct sandbox_cmd cmd = { cmd_argv, NULL, NULL, NULL, NULL };
	struct pg_err err = PG_ERR_INIT;
	struct sandbox_cfg c;
	char **argv = NULL;

	(void)state;
	assert_int_equal(sandbox_cfg_init(&c, &err), 0);
	assert_int_equal(sandbox_wrap(&c, &cmd, &argv, &err), -1);
	assert_string_equal(err.msg, "sandbox: user not resolved (sandbox_resolve())");
	assert_null(argv);
	c.resolved = true;
	c.enabled = false;
	assert_int_equal(sandbox_wrap(&c, &cmd, &argv, &err), -1);
	assert_string_equal(err.msg, "sandbox: not enabled on this host");
	c.enabled = true;
	cmd.argv = empty;
	assert_int_equal(sandbox_wrap(&c, &cmd, &argv, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	cmd.argv = cmd_argv;
	cmd.rw_paths = rel;
	assert_int_equal(sandbox_wrap(&c, &cmd, &argv, &err), -1);
	assert_string_equal(err.msg, "sandbox: read-write path 'build' is not absolute "
			    "(or is '/' or has '..')");
	cmd.rw_paths = NULL;
	cmd.ro_paths = up;
	assert_int_equal(sandbox_wrap(&c, &cmd, &argv, &err), -1);
	cmd.ro_paths = NULL;
	cmd.dir = "build";
	assert_int_equal(sandbox_wrap(&c, &cmd, &argv, &err), -1);
	assert_null(argv);
	sandbox_cfg_free(&c);
}

static void test_for_job(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	const struct sandbox_cfg *use = NULL;
	struct sandbox_cfg c;
	cJSON *plain = parse("{\"id\": 1}"), *off = parse("{\"sandbox\": false}"),
	      *on = parse("{\"sandbox\": true}"), *bad = parse("{\"sandbox\": \"no\"}");

	(void)state;
	assert_int_equal(sandbox_cfg_init(&c, &err), 0);
	assert_int_equal(sandbox_for_job(&c, plain, &use, &err), 0);
	assert_ptr_equal(use, &c);
	assert_int_equal(sandbox_for_job(&c, on, &use, &err), 0);
	assert_ptr_equal(use, &c);
	assert_int_equal(sandbox_for_job(&c, NULL, &use, &err), 0);
	assert_ptr_equal(use, &c);
	assert_int_equal(sandbox_for_job(&c, off, &use, &err), -1);
	assert_null(use);
	assert_int_equal(err.code, PG_EINVAL);
	assert_string_equal(err.msg, "job asks for \"sandbox\": false, but this host runs "
			    "patches sandboxed only (its configuration has no "
			    "sandbox.allow_unsandboxed)");
	assert_int_equal(sandbox_for_job(&c, bad, &use, &err), -1);
	assert_string_equal(err.msg, "job: field 'sandbox': expected a boolean, got a string");
	c.allow_unsandboxed = true;
	assert_int_equal(sandbox_for_job(&c, off, &use, &err), 0);
	assert_null(use);
	assert_int_equal(sandbox_for_job(&c, plain, &use, &err), 0);
	assert_ptr_equal(use, &c);
	/* A host without a sandbox runs everything unsandboxed. */
	c.enabled = false;
	assert_int_equal(sandbox_for_job(&c, plain, &use, &err), 0);
	assert_null(use);
	sandbox_cfg_free(&c);
	cJSON_Delete(plain);
	cJSON_Delete(off);
	cJSON_Delete(on);
	cJSON_Delete(bad);
}

static void test_setup_failed(void **state)
{
	static const char *const yes[] = {
		"bwrap: Can't find source path /nope: No such file or directory\n",
		"bwrap: execvp meson: No such file or directory\n",
		"setpriv: setresuid failed: Operation not permitted\n",
		"prlimit: failed to set the NPROC resource limit\n",
	};
	static const char *const no[] = {
		"The Meson build system\n", "", "bwrap", " bwrap: x", "ninja: error: x\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(sandbox_setup_failed(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(sandbox_setup_failed(no[i], strlen(no[i])));
}

static void test_describe(void **state)
{
	struct sandbox_cfg c;
	char buf[256], small[12];

	(void)state;
	resolved(&c, true);
	assert_string_equal(sandbox_describe(&c, buf, sizeof(buf)),
			    "bwrap as perfgate-sandbox (uid 999), no network, cpu 7200 s, "
			    "data 8192 MiB, 4096 processes");
	c.drop = false;
	c.cpu_s = 0;
	c.max_procs = 0;
	assert_string_equal(sandbox_describe(&c, buf, sizeof(buf)),
			    "bwrap as the agent's user (uid 999), no network, data 8192 MiB");
	assert_string_equal(sandbox_describe(NULL, buf, sizeof(buf)), "unsandboxed");
	/* Cut visibly. */
	assert_string_equal(sandbox_describe(&c, small, sizeof(small)), "bwrap as...");
	sandbox_cfg_free(&c);
}

/* --- sandbox_prepare_dir(): chown needs root --- */

static void mkfile(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(close(fd), 0);
}

static void test_prepare_dir(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct sandbox_cfg c;
	char top[] = "/tmp/pg-test-sandbox.XXXXXX", path[PATH_MAX], outside[PATH_MAX];
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(top));
	assert_int_equal(chmod(top, 0755), 0);
	resolved(&c, true);
	c.uid = 65534;
	c.gid = 65534;

	/* Created, then handed over with its contents; a symbolic link is
	 * changed itself, never what it points to. */
	snprintf(path, sizeof(path), "%s/ws/build/sub", top);
	assert_int_equal(sandbox_prepare_dir(&c, path, true, &err), 0);
	snprintf(path, sizeof(path), "%s/ws/build/sub/f", top);
	mkfile(path);
	snprintf(outside, sizeof(outside), "%s/outside", top);
	mkfile(outside);
	snprintf(path, sizeof(path), "%s/ws/build/link", top);
	assert_int_equal(symlink(outside, path), 0);
	snprintf(path, sizeof(path), "%s/ws/build", top);
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(sandbox_prepare_dir(&c, path, true, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	snprintf(path, sizeof(path), "%s/ws/build/sub/f", top);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(st.st_gid, 65534);
	snprintf(path, sizeof(path), "%s/ws/build/link", top);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(stat(outside, &st), 0);
	assert_int_equal(st.st_uid, 0);
	/* The parent dir stays root's. */
	snprintf(path, sizeof(path), "%s/ws", top);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, 0);

	/* A parent the user cannot pass through. */
	assert_int_equal(chmod(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/ws/build", top);
	assert_int_equal(sandbox_prepare_dir(&c, path, true, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "cannot reach"));
	assert_non_null(strstr(err.msg, "(mode 0700, owner 0:0)"));
	snprintf(path, sizeof(path), "%s/ws", top);
	assert_int_equal(chmod(path, 0755), 0);

	/* A read-only directory must be readable; it is never changed. */
	snprintf(path, sizeof(path), "%s/src", top);
	assert_int_equal(mkdir(path, 0750), 0);
	assert_int_equal(sandbox_prepare_dir(&c, path, false, &err), -1);
	assert_non_null(strstr(err.msg, "cannot read"));
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(sandbox_prepare_dir(&c, path, false, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, 0);
	/* Not a directory. */
	assert_int_equal(sandbox_prepare_dir(&c, outside, false, &err), -1);
	assert_string_equal(strstr(err.msg, "is not"), "is not a directory");
	/* Unsandboxed: only made. */
	snprintf(path, sizeof(path), "%s/plain/x", top);
	assert_int_equal(sandbox_prepare_dir(NULL, path, true, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, 0);

	sandbox_cfg_free(&c);
	assert_int_equal(fx_rm_tree(top), 0);
}

static void test_resolve(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct sandbox_cfg c;

	(void)state;
	assert_int_equal(sandbox_cfg_init(&c, &err), 0);
	free(c.user);
	c.user = strdup("pg-no-such-user-x");
	if (geteuid() != 0) {
		/* Not root: the agent's own user, whatever is configured. */
		assert_int_equal(sandbox_resolve(&c, &err), 0);
		assert_false(c.drop);
		assert_int_equal(c.uid, geteuid());
	} else {
		assert_int_equal(sandbox_resolve(&c, &err), -1);
		assert_int_equal(err.code, PG_ENOTFOUND);
		assert_non_null(strstr(err.msg, "sandbox: user 'pg-no-such-user-x' does not exist; "
					     "create it with `useradd --system"));
		assert_false(c.resolved);
		free(c.user);
		c.user = strdup("nobody");
		assert_int_equal(sandbox_resolve(&c, &err), 0);
		assert_true(c.drop);
		assert_true(c.uid != 0);
	}
	sandbox_cfg_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_all_fields),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_wrap_root),
		cmocka_unit_test(test_wrap_user_no_limits),
		cmocka_unit_test(test_wrap_errors),
		cmocka_unit_test(test_for_job),
		cmocka_unit_test(test_setup_failed),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_prepare_dir),
		cmocka_unit_test(test_resolve),
	};
	return cmocka_run_group_tests_name("sandbox", tests, NULL, NULL);
}
