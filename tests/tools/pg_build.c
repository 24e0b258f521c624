/* SPDX-License-Identifier: MIT */
/*
 * pg_build: run agent/build.c's build_dpdk() from the command line, for
 * tests/integration/t_build.sh, t_sandbox.sh and bench/build_incremental.sh.
 *
 *   pg_build --src DIR --build DIR --log FILE
 *            (--buildtype TYPE | --profile FILE --build-mode NAME)
 *            [--ccache DIR [--basedir DIR] [--ccache-readonly]
 *             [--ccache-shared DIR [--ccache-shared-readonly]]] [-D name=value]...
 *            [--c-args S]
 *            [--target T]... [--expect-version V] [--timeout S]
 *            [--no-sandbox | [--user U] [--cpu-s N] [--memory-mb N] [--max-procs N]]
 *            [--stream FILE] [--stop-after S]
 *
 * --profile and --build-mode take buildtype, c_args and the meson options
 * from a profile's build mode for the tree's VERSION, as the planner does
 * for a job (-D and --c-args given too win).
 * The sandbox is on by default and goes through sandbox_check() first, as
 * the daemon does.  What build_dpdk() streams goes to --stream FILE.
 * Prints the result as one JSON object on stdout.  Exits 0 when the build
 * ran to an outcome (ok or not: see "ok"), 1 when it could not run or the
 * sandbox check failed (message on stderr), 2 on bad usage.
 *
 *   pg_build --exec [--ro PATH]... [--rw PATH]... [--chdir DIR]
 *            [sandbox options] -- COMMAND [ARGS...]
 *
 * runs COMMAND in the sandbox (as a benchmark would run), its output on
 * stdout, and exits with its exit status (128+N when killed by signal N).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "build.h"
#include "err.h"
#include "proc.h"
#include "profile.h"
#include "sandbox.h"
#include "text.h"

#define EXIT_USAGE 2
#define MAX_TARGETS 16
#define MAX_PATHS 16

struct tool {
	FILE *stream;
	long long chunks;
	long long bytes;
	struct timespec start;
	double stop_after;	/* seconds; <= 0: never */
};

static void on_log(void *arg, const char *text, size_t len)
{
	struct tool *t = arg;

	t->chunks++;
	t->bytes += (long long)len;
	if (t->stream && fwrite(text, 1, len, t->stream) != len)
		fprintf(stderr, "pg_build: write stream: %s\n", strerror(errno));
	if (t->stream)
		fflush(t->stream);
}

static bool on_stopped(void *arg)
{
	struct tool *t = arg;
	struct timespec now;

	if (t->stop_after <= 0 || clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return false;
	return (double)(now.tv_sec - t->start.tv_sec) +
	       (double)(now.tv_nsec - t->start.tv_nsec) / 1e9 >= t->stop_after;
}

static void usage(void)
{
	fprintf(stderr, "usage: pg_build --src DIR --build DIR --log FILE "
		"(--buildtype TYPE | --profile FILE --build-mode NAME) "
		"[--ccache DIR [--basedir DIR] [--ccache-readonly] [--ccache-shared DIR "
		"[--ccache-shared-readonly]]] [-D name=value]... "
		"[--c-args S] [--target T]... "
		"[--expect-version V] [--timeout S] [--no-sandbox | [--user U] [--cpu-s N] "
		"[--memory-mb N] [--max-procs N]] [--stream FILE] [--stop-after S]\n"
		"       pg_build --exec [--ro PATH]... [--rw PATH]... [--chdir DIR] "
		"[sandbox options] -- COMMAND [ARGS...]\n");
}

static int add_option(cJSON *opts, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[128];

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name))
		return -1;
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	cJSON_DeleteItemFromObjectCaseSensitive(opts, name);
	return cJSON_AddStringToObject(opts, name, eq + 1) ? 0 : -1;
}

/* buildtype, c_args and options from a profile's build mode for the
 * VERSION of src (options already in opts stay). */
static int from_profile(const char *file, const char *mode, const char *src,
			struct profile_set *ps, struct build_spec *spec, cJSON *opts)
{
	struct pg_err err = PG_ERR_INIT;
	const struct profile_build_mode *bm;
	const struct profile_kv **kv = NULL;
	char *version = NULL;
	unsigned major, minor;
	size_t n = 0;
	int ret = -1;

	if (profile_set_load(ps, &file, 1, &err) < 0 ||
	    build_read_version(src, &version, &err) < 0) {
		fprintf(stderr, "pg_build: %s\n", err.msg);
		goto out;
	}
	bm = profile_find_build_mode(ps, mode);
	if (!bm || profile_parse_version(version, &major, &minor) < 0) {
		fprintf(stderr, "pg_build: no build mode '%s' in %s, or VERSION '%s'\n", mode,
			file, version);
		goto out;
	}
	if (profile_build_mode_options(bm, major, minor, &kv, &n, &err) < 0) {
		fprintf(stderr, "pg_build: %s\n", err.msg);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (!cJSON_GetObjectItemCaseSensitive(opts, kv[i]->key) &&
		    !cJSON_AddStringToObject(opts, kv[i]->key, kv[i]->value))
			goto out;
	if (!spec->buildtype)
		spec->buildtype = bm->buildtype;
	if (!spec->c_args)
		spec->c_args = bm->c_args;
	ret = 0;
out:
	free(kv);
	free(version);
	return ret;
}

static void to_stdout(void *arg, const char *data, size_t len)
{
	(void)arg;
	if (fwrite(data, 1, len, stdout) != len)
		fprintf(stderr, "pg_build: write stdout: %s\n", strerror(errno));
	fflush(stdout);
}

/* --exec: one command in the sandbox; returns the exit status to use. */
static int exec_sandboxed(const struct sandbox_cfg *sbx, char **cmd_argv, const char *dir,
			  const char *const *ro, const char *const *rw)
{
	static const char *const env[] = { "PATH=/usr/bin:/bin", "HOME=/tmp", "LC_ALL=C", NULL };
	struct sandbox_cmd cmd = { (const char *const *)cmd_argv, dir, rw, ro, NULL };
	struct pg_proc p = PG_PROC_INIT;
	struct pg_err err = PG_ERR_INIT;
	char **argv = NULL;
	int rc = 1;

	if (sandbox_wrap(sbx, &cmd, &argv, &err) < 0) {
		fprintf(stderr, "pg_build: %s\n", err.msg);
		return 1;
	}
	p.argv = (const char *const *)argv;
	p.clear_env = true;
	p.env_set = env;
	p.tail_max = 0;
	p.output_cb = to_stdout;
	if (pg_proc_run(&p, &err) < 0)
		fprintf(stderr, "pg_build: %s\n", err.msg);
	else
		rc = p.exited ? p.exit_code : 128 + p.term_signal;
	pg_proc_release(&p);
	sandbox_argv_free(argv);
	return rc;
}

static int print_result(const struct build_result *r, const struct tool *t)
{
	cJSON *o = cJSON_CreateObject();
	char *text;

	if (!o)
		return -1;
	cJSON_AddBoolToObject(o, "ok", r->ok);
	cJSON_AddBoolToObject(o, "stopped", r->stopped);
	cJSON_AddBoolToObject(o, "timed_out", r->timed_out);
	cJSON_AddBoolToObject(o, "sandbox_failed", r->sandbox_failed);
	cJSON_AddBoolToObject(o, "setup_ran", r->setup_ran);
	cJSON_AddStringToObject(o, "setup", r->setup);
	cJSON_AddNumberToObject(o, "steps", (double)r->steps);
	cJSON_AddNumberToObject(o, "duration_ms", (double)r->duration_ms);
	cJSON_AddNumberToObject(o, "setup_ms", (double)r->setup_ms);
	cJSON_AddNumberToObject(o, "ninja_ms", (double)r->ninja_ms);
	if (r->failed_step)
		cJSON_AddStringToObject(o, "failed_step", r->failed_step);
	else
		cJSON_AddNullToObject(o, "failed_step");
	if (r->version)
		cJSON_AddStringToObject(o, "version", r->version);
	else
		cJSON_AddNullToObject(o, "version");
	cJSON_AddBoolToObject(o, "version_mismatch", r->version_mismatch);
	cJSON_AddNumberToObject(o, "stream_chunks", (double)t->chunks);
	cJSON_AddNumberToObject(o, "stream_bytes", (double)t->bytes);
	cJSON_AddStringToObject(o, "tail", r->tail ? r->tail : "");
	text = cJSON_Print(o);
	cJSON_Delete(o);
	if (!text)
		return -1;
	printf("%s\n", text);
	free(text);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "src", required_argument, NULL, 's' },
		{ "build", required_argument, NULL, 'b' },
		{ "log", required_argument, NULL, 'l' },
		{ "buildtype", required_argument, NULL, 't' },
		{ "ccache", required_argument, NULL, 'c' },
		{ "basedir", required_argument, NULL, 'B' },
		{ "ccache-readonly", no_argument, NULL, 'O' },
		{ "ccache-shared", required_argument, NULL, 'H' },
		{ "ccache-shared-readonly", no_argument, NULL, 'h' },
		{ "c-args", required_argument, NULL, 'a' },
		{ "target", required_argument, NULL, 'T' },
		{ "expect-version", required_argument, NULL, 'v' },
		{ "timeout", required_argument, NULL, 'o' },
		{ "no-sandbox", no_argument, NULL, 'N' },
		{ "user", required_argument, NULL, 'u' },
		{ "cpu-s", required_argument, NULL, 'C' },
		{ "memory-mb", required_argument, NULL, 'M' },
		{ "max-procs", required_argument, NULL, 'P' },
		{ "stream", required_argument, NULL, 'S' },
		{ "stop-after", required_argument, NULL, 'x' },
		{ "exec", no_argument, NULL, 'E' },
		{ "profile", required_argument, NULL, 'p' },
		{ "build-mode", required_argument, NULL, 'm' },
		{ "ro", required_argument, NULL, 'R' },
		{ "rw", required_argument, NULL, 'W' },
		{ "chdir", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	struct build_spec spec;
	struct build_result res = BUILD_RESULT_INIT;
	struct sandbox_cfg sbx;
	struct pg_err err = PG_ERR_INIT;
	struct tool t = { NULL, 0, 0, { 0, 0 }, 0 };
	const char *targets[MAX_TARGETS + 1] = { NULL };
	const char *ro[MAX_PATHS + 1] = { NULL }, *rw[MAX_PATHS + 1] = { NULL };
	const char *dir = NULL, *profile = NULL, *build_mode = NULL;
	struct profile_set ps;
	size_t n_ro = 0, n_rw = 0;
	bool exec_mode = false;
	cJSON *opts = cJSON_CreateObject();
	bool sandboxed = true;
	size_t n_targets = 0;
	long long v;
	int opt, rc = 1;

	memset(&spec, 0, sizeof(spec));
	memset(&ps, 0, sizeof(ps));
	if (!opts || sandbox_cfg_init(&sbx, &err) < 0) {
		fprintf(stderr, "pg_build: out of memory\n");
		return 1;
	}
	while ((opt = getopt_long(argc, argv, "D:", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': spec.src_dir = optarg; break;
		case 'b': spec.build_dir = optarg; break;
		case 'l': spec.log_path = optarg; break;
		case 't': spec.buildtype = optarg; break;
		case 'c': spec.ccache_dir = optarg; break;
		case 'B': spec.ccache_basedir = optarg; break;
		case 'O': spec.ccache_readonly = true; break;
		case 'H': spec.ccache_shared_dir = optarg; break;
		case 'h': spec.ccache_shared_readonly = true; break;
		case 'a': spec.c_args = optarg; break;
		case 'v': spec.expect_version = optarg; break;
		case 'N': sandboxed = false; break;
		case 'D':
			if (add_option(opts, optarg) < 0)
				goto usage;
			break;
		case 'T':
			if (n_targets == MAX_TARGETS)
				goto usage;
			targets[n_targets++] = optarg;
			break;
		case 'o':
			if (pg_parse_ll(optarg, 1, 86400, &v) < 0)
				goto usage;
			spec.timeout_s = (unsigned int)v;
			break;
		case 'u':
			free(sbx.user);
			sbx.user = strdup(optarg);
			if (!sbx.user)
				goto usage;
			break;
		case 'C':
			if (pg_parse_ll(optarg, 0, SANDBOX_CPU_S_MAX, &v) < 0)
				goto usage;
			sbx.cpu_s = v;
			break;
		case 'M':
			if (pg_parse_ll(optarg, 0, SANDBOX_MEMORY_MB_MAX, &v) < 0)
				goto usage;
			sbx.memory_mb = v;
			break;
		case 'P':
			if (pg_parse_ll(optarg, 0, SANDBOX_MAX_PROCS_MAX, &v) < 0)
				goto usage;
			sbx.max_procs = v;
			break;
		case 'S':
			t.stream = fopen(optarg, "w");
			if (!t.stream) {
				fprintf(stderr, "pg_build: open '%s': %s\n", optarg, strerror(errno));
				goto out;
			}
			break;
		case 'x':
			if (pg_parse_ll(optarg, 1, 86400, &v) < 0)
				goto usage;
			t.stop_after = (double)v;
			break;
		case 'E': exec_mode = true; break;
		case 'p': profile = optarg; break;
		case 'm': build_mode = optarg; break;
		case 'd': dir = optarg; break;
		case 'R':
			if (n_ro == MAX_PATHS)
				goto usage;
			ro[n_ro++] = optarg;
			break;
		case 'W':
			if (n_rw == MAX_PATHS)
				goto usage;
			rw[n_rw++] = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (exec_mode) {
		if (optind >= argc)
			goto usage;
		if (sandbox_check(&sbx, &err) < 0) {
			fprintf(stderr, "pg_build: %s\n", err.msg);
			goto out;
		}
		rc = exec_sandboxed(&sbx, argv + optind, dir, ro, rw);
		goto out;
	}
	if (optind < argc || !spec.src_dir || !spec.build_dir || !spec.log_path ||
	    !profile != !build_mode)
		goto usage;
	if (profile && from_profile(profile, build_mode, spec.src_dir, &ps, &spec, opts) < 0)
		goto out;
	if (!spec.buildtype)
		goto usage;
	spec.meson_options = opts;
	spec.targets = n_targets ? targets : NULL;
	spec.log = on_log;
	spec.stopped = on_stopped;
	spec.arg = &t;
	if (sandboxed) {
		if (sandbox_check(&sbx, &err) < 0) {
			fprintf(stderr, "pg_build: %s\n", err.msg);
			goto out;
		}
		spec.sandbox = &sbx;
	}
	if (clock_gettime(CLOCK_MONOTONIC, &t.start) < 0) {
		fprintf(stderr, "pg_build: clock: %s\n", strerror(errno));
		goto out;
	}
	if (build_dpdk(&spec, &res, &err) < 0) {
		fprintf(stderr, "pg_build: %s\n", err.msg);
		goto out;
	}
	if (print_result(&res, &t) < 0) {
		fprintf(stderr, "pg_build: out of memory\n");
		goto out;
	}
	rc = 0;
	goto out;
usage:
	usage();
	rc = EXIT_USAGE;
out:
	if (t.stream && fclose(t.stream) != 0) {
		fprintf(stderr, "pg_build: close stream: %s\n", strerror(errno));
		rc = 1;
	}
	build_result_release(&res);
	profile_set_free(&ps);
	sandbox_cfg_free(&sbx);
	cJSON_Delete(opts);
	return rc;
}
