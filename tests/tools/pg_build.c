/* SPDX-License-Identifier: MIT */
/*
 * pg_build: run agent/build.c's build_dpdk() from the command line, for
 * tests/integration/t_build.sh, t_sandbox.sh and bench/build_incremental.sh.
 *
 *   pg_build --src DIR --build DIR --log FILE --buildtype TYPE
 *            [--ccache DIR [--basedir DIR]] [-D name=value]... [--c-args S]
 *            [--target T]... [--expect-version V] [--timeout S]
 *            [--no-sandbox | [--user U] [--cpu-s N] [--memory-mb N] [--max-procs N]]
 *            [--stream FILE] [--stop-after S]
 *
 * The sandbox is on by default and goes through sandbox_check() first, as
 * the daemon does.  What build_dpdk() streams goes to --stream FILE.
 * Prints the result as one JSON object on stdout.  Exits 0 when the build
 * ran to an outcome (ok or not: see "ok"), 1 when it could not run or the
 * sandbox check failed (message on stderr), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "build.h"
#include "err.h"
#include "sandbox.h"

#define EXIT_USAGE 2
#define MAX_TARGETS 16

struct tool {
	FILE *stream;
	long long chunks;
	long long bytes;
	struct timespec start;
	double stop_after;	/* seconds; <= 0: never */
};

static int parse_ll(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

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
	fprintf(stderr, "usage: pg_build --src DIR --build DIR --log FILE --buildtype TYPE "
		"[--ccache DIR [--basedir DIR]] [-D name=value]... [--c-args S] [--target T]... "
		"[--expect-version V] [--timeout S] [--no-sandbox | [--user U] [--cpu-s N] "
		"[--memory-mb N] [--max-procs N]] [--stream FILE] [--stop-after S]\n");
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
		{ NULL, 0, NULL, 0 },
	};
	struct build_spec spec;
	struct build_result res = BUILD_RESULT_INIT;
	struct sandbox_cfg sbx;
	struct pg_err err = PG_ERR_INIT;
	struct tool t = { NULL, 0, 0, { 0, 0 }, 0 };
	const char *targets[MAX_TARGETS + 1] = { NULL };
	cJSON *opts = cJSON_CreateObject();
	bool sandboxed = true;
	size_t n_targets = 0;
	long long v;
	int opt, rc = 1;

	memset(&spec, 0, sizeof(spec));
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
			if (parse_ll(optarg, 1, 86400, &v) < 0)
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
			if (parse_ll(optarg, 0, SANDBOX_CPU_S_MAX, &v) < 0)
				goto usage;
			sbx.cpu_s = v;
			break;
		case 'M':
			if (parse_ll(optarg, 0, SANDBOX_MEMORY_MB_MAX, &v) < 0)
				goto usage;
			sbx.memory_mb = v;
			break;
		case 'P':
			if (parse_ll(optarg, 0, SANDBOX_MAX_PROCS_MAX, &v) < 0)
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
			if (parse_ll(optarg, 1, 86400, &v) < 0)
				goto usage;
			t.stop_after = (double)v;
			break;
		default:
			goto usage;
		}
	}
	if (optind < argc || !spec.src_dir || !spec.build_dir || !spec.log_path ||
	    !spec.buildtype)
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
	sandbox_cfg_free(&sbx);
	cJSON_Delete(opts);
	return rc;
}
