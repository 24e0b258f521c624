/* SPDX-License-Identifier: MIT */
/* One run of one benchmark: start it, drive it, stop it, parse it. */
#include "bench_exec.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fmt.h"
#include "fsbeneath.h"
#include "jobspec.h"
#include "json.h"
#include "log.h"
#include "proc.h"
#include "profile.h"
#include "timeutil.h"

#define BENCH_MAX_ARGS 256
#define BENCH_STDBUF "/usr/bin/stdbuf"	/* coreutils */
#define BENCH_MAX_ENV 64
#define BENCH_MAX_GATE 256
#define BENCH_TEXT_MAX 4096
/* What a run may print that is kept for parsing: the whole output of the
 * longest mempool test (1400 lines in 24.11) is well under 1 MiB. */
#define BENCH_TAIL_MAX (8 * 1024 * 1024)
/* What goes to the log file per run: enough for any sane run, bounded
 * against a benchmark that floods its output. */
#define BENCH_LOG_MAX (32ULL * 1024 * 1024)

static void free_strv(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void bench_def_release(struct bench_def *d)
{
	free(d->name);
	free(d->program);
	free(d->parser);
	free_strv(d->args);
	free_strv(d->env);
	free_strv(d->gate);
	cJSON_Delete(d->subset_json);
	memset(d, 0, sizeof(*d));
}

/* A string array of at most max items, each at most BENCH_TEXT_MAX bytes,
 * into a NULL-terminated vector. */
static int strv_from_json(const cJSON *arr, const char *field, size_t max, bool need_one,
			  char ***out, struct pg_err *err)
{
	size_t n = (size_t)cJSON_GetArraySize(arr), i = 0;
	const cJSON *it;
	char **v;

	if (n > max)
		return pg_err_set(err, PG_EINVAL, "field '%s': %zu items, at most %zu", field, n,
				  max);
	if (need_one && !n)
		return pg_err_set(err, PG_EINVAL, "field '%s': empty", field);
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return pg_err_set(err, PG_ENOMEM, "field '%s': out of memory", field);
	cJSON_ArrayForEach(it, arr) {
		if (!cJSON_IsString(it) || strlen(it->valuestring) > BENCH_TEXT_MAX) {
			free_strv(v);
			return pg_err_set(err, PG_EINVAL, "field '%s[%zu]': expected a string of at "
					  "most %d bytes", field, i, BENCH_TEXT_MAX);
		}
		if (!(v[i++] = strdup(it->valuestring))) {
			free_strv(v);
			return pg_err_set(err, PG_ENOMEM, "field '%s': out of memory", field);
		}
	}
	*out = v;
	return 0;
}

static bool env_name_ok(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
	       strlen(s);
}

/* A path below the build directory: relative, no "..", no empty parts. */
static bool program_ok(const char *s)
{
	const char *p = s;

	if (!*s || *s == '/' || strlen(s) > 256)
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.') || (n == 1 && p[0] == '.'))
			return false;
		p += n;
		if (*p == '/')
			p++;
	}
	return s[strlen(s) - 1] != '/';
}

static int def_env(const cJSON *env, struct bench_def *d, struct pg_err *err)
{
	size_t n = (size_t)cJSON_GetArraySize(env), i = 0;
	const cJSON *it;

	if (n > BENCH_MAX_ENV)
		return pg_err_set(err, PG_EINVAL, "field 'env': %zu variables, at most %d", n,
				  BENCH_MAX_ENV);
	d->env = calloc(n + 1, sizeof(*d->env));
	if (!d->env)
		return pg_err_set(err, PG_ENOMEM, "field 'env': out of memory");
	cJSON_ArrayForEach(it, env) {
		struct pg_buf kv = PG_BUF_INIT(2 * BENCH_TEXT_MAX);

		if (!env_name_ok(it->string) || strlen(it->string) > 128)
			return pg_err_set(err, PG_EINVAL, "field 'env': bad variable name '%.64s'",
					  it->string);
		if (!cJSON_IsString(it) || strlen(it->valuestring) > BENCH_TEXT_MAX)
			return pg_err_set(err, PG_EINVAL, "field 'env.%s': expected a string of at "
					  "most %d bytes", it->string, BENCH_TEXT_MAX);
		if (pg_buf_printf(&kv, "%s=%s", it->string, it->valuestring) < 0) {
			pg_buf_err(&kv, err, "field 'env.%s'", it->string);
			pg_buf_release(&kv);
			return -1;
		}
		d->env[i++] = pg_buf_detach(&kv, NULL);
	}
	return 0;
}

/* JS_BENCH_FRAME_SIZES, when present: what the profile allows. */
static int def_frame_sizes(const cJSON *o, struct bench_def *d, struct pg_err *err)
{
	const cJSON *arr = NULL, *it;

	if (pg_json_get_array(o, JS_BENCH_FRAME_SIZES, false, &arr, err) < 0)
		return -1;
	if (!arr)
		return 0;
	if (cJSON_GetArraySize(arr) < 1 || cJSON_GetArraySize(arr) > PROFILE_MAX_FRAME_SIZES)
		return pg_err_set(err, PG_EINVAL, "field '%s': 1 to %d sizes expected",
				  JS_BENCH_FRAME_SIZES, PROFILE_MAX_FRAME_SIZES);
	cJSON_ArrayForEach(it, arr) {
		double v = cJSON_IsNumber(it) ? it->valuedouble : 0;

		if (v < PROFILE_FRAME_MIN || v > PROFILE_FRAME_MAX || v != (double)(unsigned)v)
			return pg_err_set(err, PG_EINVAL, "field '%s[%zu]': not a frame size "
					  "%d..%d", JS_BENCH_FRAME_SIZES, d->n_frame_sizes,
					  PROFILE_FRAME_MIN, PROFILE_FRAME_MAX);
		d->frame_sizes[d->n_frame_sizes++] = (unsigned)v;
	}
	return 0;
}

int bench_def_from_json(const cJSON *o, struct bench_def *d, struct pg_err *err)
{
	const char *name = NULL, *program = NULL, *parser = NULL, *stdin_mode = "null";
	const char *mode = NULL;
	const cJSON *args = NULL, *env = NULL, *gate = NULL, *subset = NULL;
	int64_t duration = 0, timeout = 0, stop_after = 0, warmup = 0;

	memset(d, 0, sizeof(*d));
	if (!cJSON_IsObject(o))
		return pg_err_set(err, PG_EINVAL, "expected an object, got %s",
				  pg_json_type_name(o));
	if (pg_json_get_string(o, JS_BENCH_NAME, true, &name, err) < 0 ||
	    pg_json_get_string(o, JS_BENCH_PROGRAM, true, &program, err) < 0 ||
	    pg_json_get_array(o, JS_BENCH_ARGS, true, &args, err) < 0 ||
	    pg_json_get_object(o, JS_BENCH_ENV, false, &env, err) < 0 ||
	    pg_json_get_string(o, JS_BENCH_STDIN, false, &stdin_mode, err) < 0 ||
	    pg_json_get_int(o, JS_BENCH_DURATION_S, false, 1, 86400, &duration, err) < 0 ||
	    pg_json_get_string(o, JS_BENCH_PARSER, true, &parser, err) < 0 ||
	    pg_json_get_array(o, JS_BENCH_GATE, true, &gate, err) < 0 ||
	    pg_json_get_int(o, JS_BENCH_TIMEOUT_S, true, 1, 86400, &timeout, err) < 0 ||
	    pg_json_get_int(o, JS_BENCH_STOP_AFTER_LINES, false, 1, 1000000, &stop_after, err) < 0 ||
	    pg_json_get_int(o, JS_BENCH_WARMUP_RUNS, false, 0, PROFILE_WARMUP_MAX, &warmup, err) < 0 ||
	    pg_json_get_string(o, JS_BENCH_MODE, false, &mode, err) < 0 ||
	    pg_json_get_object(o, JS_BENCH_SUBSET, false, &subset, err) < 0)
		goto fail;
	if (strlen(name) > 128 || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					 "0123456789_.-") != strlen(name) || !*name) {
		pg_err_set(err, PG_EINVAL, "field 'name': '%.64s' is not a benchmark name", name);
		goto fail;
	}
	if (!program_ok(program)) {
		pg_err_set(err, PG_EINVAL, "field 'program': '%.64s' is not a path inside the "
			   "build directory", program);
		goto fail;
	}
	if (strcmp(parser, "mempool_perf") != 0 && strcmp(parser, "testpmd") != 0) {
		pg_err_set(err, PG_EINVAL, "field 'parser': unknown parser '%.64s'", parser);
		goto fail;
	}
	if (strcmp(stdin_mode, "null") != 0 && strcmp(stdin_mode, "hold") != 0) {
		pg_err_set(err, PG_EINVAL, "field 'stdin': '%.64s' is not null or hold", stdin_mode);
		goto fail;
	}
	d->stdin_hold = strcmp(stdin_mode, "hold") == 0;
	if (d->stdin_hold && !duration) {
		pg_err_set(err, PG_EINVAL, "field 'duration_s': required with stdin 'hold'");
		goto fail;
	}
	if (duration && duration >= timeout) {
		pg_err_set(err, PG_EINVAL, "field 'duration_s': %lld is not less than timeout_s %lld",
			   (long long)duration, (long long)timeout);
		goto fail;
	}
	if (mode && strcmp(mode, "subset") != 0 && strcmp(mode, "full") != 0) {
		pg_err_set(err, PG_EINVAL, "field 'mode': '%.64s' is not subset or full", mode);
		goto fail;
	}
	d->subset = strcmp(parser, "mempool_perf") == 0 && (!mode || strcmp(mode, "subset") == 0);
	if (d->subset && !subset) {
		pg_err_set(err, PG_EINVAL, "field 'subset': required in mode subset");
		goto fail;
	}
	if (subset && !(d->subset_json = cJSON_Duplicate(subset, true))) {
		pg_err_set(err, PG_ENOMEM, "field 'subset': out of memory");
		goto fail;
	}
	d->duration_s = (int)duration;
	d->timeout_s = (int)timeout;
	d->stop_after_lines = (int)stop_after;
	d->warmup_runs = (int)warmup;
	if (def_frame_sizes(o, d, err) < 0)
		goto fail;
	if (!(d->name = strdup(name)) || !(d->program = strdup(program)) ||
	    !(d->parser = strdup(parser))) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto fail;
	}
	if (strv_from_json(args, JS_BENCH_ARGS, BENCH_MAX_ARGS, false, &d->args, err) < 0 ||
	    strv_from_json(gate, JS_BENCH_GATE, BENCH_MAX_GATE, true, &d->gate, err) < 0)
		goto fail;
	if (env) {
		if (def_env(env, d, err) < 0)
			goto fail;
	} else if (!(d->env = calloc(1, sizeof(*d->env)))) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto fail;
	}
	return 0;
fail:
	pg_err_prefix(err, "benchmark%s%s", name ? " " : "", name ? name : "");
	bench_def_release(d);
	return -1;
}

int bench_expand_arg(const char *arg, const char *file_prefix, const char *build_dir,
		     char **out, struct pg_err *err)
{
	return bench_expand_arg_fs(arg, file_prefix, build_dir, NULL, out, err);
}

int bench_expand_arg_fs(const char *arg, const char *file_prefix, const char *build_dir,
			const char *frame_size, char **out, struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(2 * BENCH_TEXT_MAX + PATH_MAX);
	const char *p = arg;
	int rc = -1;

	while (*p) {
		const char *add = NULL;
		size_t skip = 1;

		if (p[0] == '{' && p[1] == '{') {
			add = "{";
			skip = 2;
		} else if (p[0] == '}' && p[1] == '}') {
			add = "}";
			skip = 2;
		} else if (strncmp(p, JS_ARG_FILE_PREFIX, strlen(JS_ARG_FILE_PREFIX)) == 0) {
			add = file_prefix;
			skip = strlen(JS_ARG_FILE_PREFIX);
		} else if (strncmp(p, JS_ARG_BUILD_DIR, strlen(JS_ARG_BUILD_DIR)) == 0) {
			add = build_dir;
			skip = strlen(JS_ARG_BUILD_DIR);
		} else if (frame_size &&
			   strncmp(p, JS_ARG_FRAME_SIZE, strlen(JS_ARG_FRAME_SIZE)) == 0) {
			add = frame_size;
			skip = strlen(JS_ARG_FRAME_SIZE);
		} else if (*p == '{' || *p == '}') {
			pg_err_set(err, PG_EINVAL, "argument '%.64s': unknown placeholder or lone "
				   "brace at offset %zu", arg, (size_t)(p - arg));
			goto out;
		}
		if (add ? pg_buf_adds(&b, add) < 0 : pg_buf_addch(&b, *p) < 0) {
			pg_buf_err(&b, err, "argument '%.64s'", arg);
			goto out;
		}
		p += skip;
	}
	if (pg_buf_addch(&b, '\0') < 0) {
		pg_buf_err(&b, err, "argument '%.64s'", arg);
		goto out;
	}
	*out = pg_buf_detach(&b, NULL);
	rc = 0;
out:
	pg_buf_release(&b);
	return rc;
}

/* The watch hook's state: what the output said and what was done. */
struct bench_watch {
	const struct bench_run_spec *s;
	int stop_after;
	uint64_t seen_bytes;
	int64_t fwd_start_ms;
	int64_t fwd_end_ms;
	bool stdin_closed;
	bool sigint_sent;
	size_t lines_at_stop;
};

static void bench_watch(struct pg_proc *p, void *arg)
{
	struct bench_watch *w = arg;
	const struct bench_def *d = w->s->def;
	int64_t now = pg_time_mono_ms();
	bool fresh = p->output_bytes != w->seen_bytes;
	struct pg_err err = PG_ERR_INIT;

	w->seen_bytes = p->output_bytes;
	if (d->stdin_hold && !w->stdin_closed) {
		if (!w->fwd_start_ms && fresh &&
		    bench_testpmd_started(pg_buf_str(&p->tail), p->tail.len) >= 0)
			w->fwd_start_ms = now;
		if (w->fwd_start_ms && now - w->fwd_start_ms >= (int64_t)d->duration_s * 1000) {
			pg_proc_close_stdin(p);
			w->stdin_closed = true;
			w->fwd_end_ms = now;
		}
	}
	if (w->stop_after && !w->sigint_sent && fresh) {
		size_t n = bench_mempool_count_results(pg_buf_str(&p->tail), p->tail.len);

		if (n >= (size_t)w->stop_after) {
			w->lines_at_stop = n;
			w->sigint_sent = true;
			if (pg_proc_signal(p, SIGINT, &err) < 0)
				pg_log_warn("bench", "%s: %s", d->name, err.msg);
		}
	}
}

/* argv = build_dir/program + expanded args, wrapped in the sandbox when
 * there is one; env = def's + extra. */
static int bench_argv(const struct bench_run_spec *s, char ***argv_out, char ***env_out,
		      struct pg_err *err)
{
	const struct bench_def *d = s->def;
	size_t na = 0, ne = 0, nx = 0, i = 0;
	char **argv = NULL, **env = NULL, **wrapped = NULL;
	struct pg_buf prog = PG_BUF_INIT(PATH_MAX);

	while (d->args[na])
		na++;
	while (d->env[ne])
		ne++;
	while (s->env_extra && s->env_extra[nx])
		nx++;
	argv = calloc(na + 5, sizeof(*argv));
	env = calloc(ne + nx + 1, sizeof(*env));
	if (!argv || !env)
		goto nomem;
	/* Line-buffered output: DPDK's programs print with stdio, which
	 * buffers a pipe in 4 KiB blocks, so "Press enter to exit" or a
	 * result line would reach us only when the block fills (testpmd then
	 * waits on stdin for an EOF that waits on that line). */
	if (!(argv[i++] = strdup(BENCH_STDBUF)) || !(argv[i++] = strdup("-oL")) ||
	    !(argv[i++] = strdup("-eL")))
		goto nomem;
	if (pg_buf_printf(&prog, "%s/%s", s->build_dir, d->program) < 0)
		goto nomem;
	/* stdbuf would report a missing program as its own exit 127.  The
	 * build directory is the sandboxed build's: look without following
	 * a link it may have planted (the answer would tell about the host). */
	{
		struct stat st;

		if (pg_stat_beneath(s->build_dir, d->program, &st, err) < 0) {
			char why[PG_ERR_MSG_MAX];

			/* err->msg is the same size: never cut. */
			pg_fmt_cut(why, sizeof(why), "%s", err->msg);
			pg_err_set(err, err->code, "spawn '%s': %s", pg_buf_str(&prog), why);
			goto fail;
		}
		if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR)) {
			pg_err_set(err, PG_EINVAL, "spawn '%s': not an executable file",
				   pg_buf_str(&prog));
			goto fail;
		}
	}
	argv[i++] = pg_buf_detach(&prog, NULL);
	for (size_t k = 0; k < na; k++)
		if (bench_expand_arg_fs(d->args[k], s->file_prefix, s->build_dir, s->frame_size,
					&argv[i++], err) < 0)
			goto fail;
	for (size_t k = 0; k < ne; k++)
		if (!(env[k] = strdup(d->env[k])))
			goto nomem;
	for (size_t k = 0; k < nx; k++)
		if (!(env[ne + k] = strdup(s->env_extra[k])))
			goto nomem;
	if (s->sandbox) {
		const char *ro[] = { s->build_dir, NULL };
		struct sandbox_cmd cmd = {
			.argv = (const char *const *)argv, .dir = s->build_dir,
			.ro_paths = ro, .dev_paths = s->dev_paths,
		};

		if (sandbox_wrap(s->sandbox, &cmd, &wrapped, err) < 0)
			goto fail;
		free_strv(argv);
		argv = wrapped;
	}
	*argv_out = argv;
	*env_out = env;
	return 0;
nomem:
	pg_err_set(err, PG_ENOMEM, "out of memory");
fail:
	pg_buf_release(&prog);
	free_strv(argv);
	free_strv(env);
	return -1;
}

static bool has_key(const struct bench_output *o, const char *key)
{
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->samples[i].key, key) == 0)
			return true;
	return false;
}

/* Decide ok and write the one-line detail. */
static void bench_judge(const struct bench_run_spec *s, const struct pg_proc *p,
			const struct bench_watch *w, struct bench_run_result *r)
{
	const struct bench_def *d = s->def;
	const struct bench_output *o = &r->out;
	char how[PG_PROC_DESC_MAX];
	const char *why = NULL;
	bool testpmd = strcmp(d->parser, "testpmd") == 0;

	pg_proc_describe(p, how, sizeof(how));
	if (p->cancelled) {
		r->stopped = true;
		why = "stopped: the job ended";
	} else if (p->timed_out) {
		why = "timed out";
	} else if (o->test_failed) {
		why = "the test reported failure";
	} else if (!o->n) {
		why = "no result in its output";
	} else if (testpmd && !w->stdin_closed) {
		why = "ended before its measured interval was over";
	} else if (testpmd && !has_key(o, "fwd.rx_packets")) {
		why = "no forward statistics in its output";
	} else if (!(p->exited && p->exit_code == 0) && !w->sigint_sent) {
		why = "did not exit cleanly";
	}
	r->ok = !why;
	pg_fmt_cut(r->detail, sizeof(r->detail), "%s: %s%s%s%s, %zu result%s%s%s%s%s",
		   d->name, why ? why : "ok", why ? " (" : "", why ? how : "", why ? ")" : "",
		   o->n, o->n == 1 ? "" : "s",
		   w->sigint_sent ? ", stopped after " : "",
		   w->sigint_sent ? "the requested result lines" : "",
		   o->error ? "; first error: " : "", o->error ? o->error : "");
}

int bench_run_once(const struct bench_run_spec *s, struct bench_run_result *r,
		   struct pg_err *err)
{
	const struct bench_def *d = s->def;
	struct bench_watch w = { .s = s };
	struct pg_proc p = PG_PROC_INIT;
	char **argv = NULL, **env = NULL;
	const char *tail;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	w.stop_after = s->stop_after_lines ? s->stop_after_lines : d->stop_after_lines;
	if (strcmp(d->parser, "mempool_perf") != 0)
		w.stop_after = 0;
	if (bench_argv(s, &argv, &env, err) < 0)
		goto out;
	/* In the sandbox, bwrap's --chdir sets the directory. */
	p.argv = (const char *const *)argv;
	p.env_set = (const char *const *)env;
	p.dir = s->sandbox ? NULL : s->build_dir;
	p.stdin_mode = d->stdin_hold ? PG_PROC_STDIN_PIPE : PG_PROC_STDIN_NULL;
	p.output_path = s->log_path;
	p.output_max = BENCH_LOG_MAX;
	p.tail_max = BENCH_TAIL_MAX;
	p.timeout_ms = (unsigned int)d->timeout_s * 1000U;
	p.cancel_cb = s->stopped;
	p.cancel_arg = s->arg;
	p.watch_cb = bench_watch;
	p.watch_arg = &w;
	if (pg_proc_run(&p, err) < 0)
		goto out;
	r->duration_ms = p.duration_ms;
	r->output_bytes = p.output_bytes;
	if (w.fwd_start_ms && w.fwd_end_ms > w.fwd_start_ms)
		r->fwd_seconds = (double)(w.fwd_end_ms - w.fwd_start_ms) / 1000.0;
	tail = pg_buf_str(&p.tail);
	if ((strcmp(d->parser, "testpmd") == 0 ?
	     bench_parse_testpmd(tail, p.tail.len, r->fwd_seconds, &r->out, err) :
	     bench_parse_mempool(tail, p.tail.len, &r->out, err)) < 0)
		goto out;
	bench_judge(s, &p, &w, r);
	if (s->sandbox && !r->ok && !r->out.n &&
	    sandbox_setup_failed(tail, p.tail.len < 4096 ? p.tail.len : 4096)) {
		r->sandbox_failed = true;
		pg_fmt_cut(r->detail, sizeof(r->detail), "%s: the sandbox did not start: %.200s",
			   d->name, tail);
	}
	if (p.output_bytes > BENCH_TAIL_MAX) {
		size_t l = strlen(r->detail);

		pg_fmt_cut(r->detail + l, sizeof(r->detail) - l, " (only the last %d MiB of %llu "
			   "bytes of output parsed)", BENCH_TAIL_MAX >> 20,
			   (unsigned long long)p.output_bytes);
	}
	rc = 0;
out:
	if (rc < 0)
		pg_err_prefix(err, "benchmark %s", d->name);
	pg_proc_release(&p);
	free_strv(argv);
	free_strv(env);
	return rc;
}

void bench_run_result_release(struct bench_run_result *r)
{
	bench_output_release(&r->out);
}
