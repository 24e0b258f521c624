/* SPDX-License-Identifier: MIT */
/* Build one DPDK tree with meson and ninja (see build.h). */
#include "build.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fmt.h"
#include "fsbeneath.h"
#include "fsutil.h"
#include "json.h"
#include "log.h"
#include "proc.h"
#include "vec.h"

#define LOG_PENDING_MAX (1024 * 1024)	/* streamed output not yet handed over */
#define LOG_FLUSH_BYTES (8 * 1024)
#define LOG_FLUSH_MS 1000
#define LINE_KEEP 64			/* enough of a line for "[N/M]" */
#define HEAD_KEEP 256			/* start of a command's output */
#define STAMP_MAX (256 * 1024)
#define VERSION_FILE_MAX 4096
#define REMOVE_DEPTH_MAX 128
#define OPTION_NAME_MAX 64

static const char *const build_env_fixed[] = {
	"PATH=/usr/bin:/bin:/usr/sbin:/sbin",
	"HOME=/tmp",
	"TMPDIR=/tmp",
	/* Plain ASCII messages; Python (meson) still runs in UTF-8 mode. */
	"LC_ALL=C",
	"NINJA_STATUS=[%f/%t] ",
	"CCACHE_NOHASHDIR=1",
	NULL
};
#define N_ENV_FIXED (sizeof(build_env_fixed) / sizeof(build_env_fixed[0]) - 1)

struct build_ctx {
	const struct build_spec *spec;
	struct build_result *res;
	const char *env[N_ENV_FIXED + 8];
	char *env_ccache_dir;
	char *env_ccache_base;
	char *env_ccache_shared;
	uint64_t start_ms;
	uint64_t deadline_ms;		/* 0: none */
	struct pg_buf tail;		/* up to 2 * BUILD_TAIL_MAX */
	struct pg_buf pending;		/* for spec->log */
	uint64_t last_flush_ms;
	/* The command running now. */
	bool count_steps;
	char line[LINE_KEEP];
	size_t line_len;
	char head[HEAD_KEEP];
	size_t head_len;
	struct pg_err io_err;		/* first failure to write our own lines */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

const char *build_setup_name(enum build_setup s)
{
	switch (s) {
	case BUILD_SETUP_NONE:
		return "none";
	case BUILD_SETUP_FRESH:
		return "fresh";
	case BUILD_SETUP_WIPE:
		return "wipe";
	case BUILD_SETUP_RECONFIGURE:
		return "reconfigure";
	}
	return "?";
}

int build_parse_version(const char *text, size_t len, char **out, struct pg_err *err)
{
	static const char ok[] = "0123456789abcdefghijklmnopqrstuvwxyz"
				 "ABCDEFGHIJKLMNOPQRSTUVWXYZ.+_-";
	size_t start = 0, end;

	*out = NULL;
	end = 0;
	while (end < len && text[end] != '\n' && text[end] != '\0')
		end++;
	while (start < end && strchr(" \t\r", text[start]))
		start++;
	while (end > start && strchr(" \t\r", text[end - 1]))
		end--;
	if (end == start)
		return pg_err_set(err, PG_EINVAL, "the first line is empty");
	if (end - start > BUILD_VERSION_MAX)
		return pg_err_set(err, PG_EINVAL, "the first line is longer than %d bytes (%zu)",
				  BUILD_VERSION_MAX, end - start);
	/* Never quote what is not made of version characters: the text may
	 * be anything a patch put there, and messages reach the public log. */
	for (size_t i = start; i < end; i++)
		if (!memchr(ok, text[i], sizeof(ok) - 1))
			return pg_err_set(err, PG_EINVAL, "the first line (%zu bytes) does not hold "
					  "a version: only 0-9 A-Z a-z . + _ - may appear",
					  end - start);
	if (text[start] < '0' || text[start] > '9')
		return pg_err_set(err, PG_EINVAL, "'%.*s' does not start with a digit",
				  (int)(end - start), text + start);
	*out = strndup(text + start, end - start);
	if (!*out)
		return pg_err_set(err, PG_ENOMEM, "VERSION: out of memory");
	return 0;
}

int build_read_version(const char *src_dir, char **version, struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(VERSION_FILE_MAX);
	int ret = -1;

	*version = NULL;
	/* Beneath the tree, no link followed: a patch may make VERSION a
	 * link to a file only root can read, and its first line would reach
	 * the public log. */
	if (pg_read_file_beneath(src_dir, "VERSION", &b, NULL, err) < 0) {
		if (err && err->code == PG_ENOTFOUND)
			pg_err_set(err, PG_ENOTFOUND, "'%s/VERSION': no such file (not a DPDK tree?)",
				   src_dir);
		goto out;
	}
	if (build_parse_version(pg_buf_str(&b), b.len, version, err) < 0) {
		pg_err_prefix(err, "'%s/VERSION'", src_dir);
		goto out;
	}
	ret = 0;
out:
	pg_buf_release(&b);
	return ret;
}

bool build_ccache_url_ok(const char *path)
{
	return strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-") ==
	       strlen(path);
}

int build_ninja_line(const char *line, size_t len, long *done, long *total)
{
	static const char nowork[] = "ninja: no work to do.";
	unsigned long a = 0, b = 0;
	size_t i = 1, digits;

	if (len >= sizeof(nowork) - 1 && memcmp(line, nowork, sizeof(nowork) - 1) == 0)
		return 2;
	if (len < 5 || line[0] != '[')
		return 0;
	for (digits = 0; i < len && line[i] >= '0' && line[i] <= '9' && digits < 9; i++, digits++)
		a = a * 10 + (unsigned long)(line[i] - '0');
	if (!digits || i >= len || line[i] != '/')
		return 0;
	for (i++, digits = 0; i < len && line[i] >= '0' && line[i] <= '9' && digits < 9;
	     i++, digits++)
		b = b * 10 + (unsigned long)(line[i] - '0');
	if (!digits || i >= len || line[i] != ']')
		return 0;
	*done = (long)a;
	*total = (long)b;
	return 1;
}

static bool option_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= OPTION_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

struct kv {
	const char *name;
	const char *value;
};

static int kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->name, ((const struct kv *)b)->name);
}

cJSON *build_stamp(const struct build_spec *spec, const char *meson_version,
		   struct pg_err *err)
{
	struct kv kv[BUILD_OPTIONS_MAX + 2];
	cJSON *stamp = NULL, *opts;
	const cJSON *item;
	size_t n = 0;

	kv[n++] = (struct kv){ "buildtype", spec->buildtype };
	kv[n++] = (struct kv){ "c_args", spec->c_args ? spec->c_args : "" };
	if (spec->meson_options && !cJSON_IsObject(spec->meson_options)) {
		pg_err_set(err, PG_EINVAL, "build.meson_options: expected an object, got %s",
			   pg_json_type_name(spec->meson_options));
		goto fail;
	}
	cJSON_ArrayForEach(item, spec->meson_options) {
		if (n == BUILD_OPTIONS_MAX + 2) {
			pg_err_set(err, PG_EINVAL, "build.meson_options: more than %d options",
				   BUILD_OPTIONS_MAX);
			goto fail;
		}
		if (!item->string || !option_name_ok(item->string)) {
			pg_err_set(err, PG_EINVAL,
				   "build.meson_options: '%s' is not an option name ([a-z0-9_]+)",
				   item->string ? item->string : "?");
			goto fail;
		}
		if (strcmp(item->string, "buildtype") == 0 || strcmp(item->string, "c_args") == 0) {
			pg_err_set(err, PG_EINVAL,
				   "build.meson_options.%s: has a field of its own in build",
				   item->string);
			goto fail;
		}
		if (!cJSON_IsString(item)) {
			pg_err_set(err, PG_EINVAL, "build.meson_options.%s: expected a string, got %s",
				   item->string, pg_json_type_name(item));
			goto fail;
		}
		for (size_t i = 2; i < n; i++) {
			if (strcmp(kv[i].name, item->string) == 0) {
				pg_err_set(err, PG_EINVAL, "build.meson_options.%s: given twice",
					   item->string);
				goto fail;
			}
		}
		kv[n++] = (struct kv){ item->string, item->valuestring };
	}
	qsort(kv, n, sizeof(kv[0]), kv_cmp);

	stamp = cJSON_CreateObject();
	if (!stamp || !cJSON_AddStringToObject(stamp, "meson", meson_version) ||
	    !cJSON_AddStringToObject(stamp, "src_dir", spec->src_dir))
		goto nomem;
	opts = cJSON_AddObjectToObject(stamp, "options");
	if (!opts)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (!cJSON_AddStringToObject(opts, kv[i].name, kv[i].value))
			goto nomem;
	return stamp;
nomem:
	pg_err_set(err, PG_ENOMEM, "build: out of memory");
fail:
	cJSON_Delete(stamp);
	return NULL;
}

static const char *stamp_str(const cJSON *o, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(item) ? item->valuestring : NULL;
}

static bool same_str(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

enum build_setup build_setup_needed(const cJSON *old, const cJSON *want)
{
	const cJSON *old_opts, *want_opts, *item;
	bool changed = false;

	if (!old)
		return BUILD_SETUP_FRESH;
	old_opts = cJSON_GetObjectItemCaseSensitive(old, "options");
	want_opts = cJSON_GetObjectItemCaseSensitive(want, "options");
	if (!same_str(stamp_str(old, "meson"), stamp_str(want, "meson")) ||
	    !same_str(stamp_str(old, "src_dir"), stamp_str(want, "src_dir")) ||
	    !cJSON_IsObject(old_opts))
		return BUILD_SETUP_WIPE;
	cJSON_ArrayForEach(item, old_opts) {
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(want_opts, item->string);

		if (!w)
			return BUILD_SETUP_WIPE;	/* meson would keep the old value */
		if (!cJSON_IsString(item) || !same_str(item->valuestring, w->valuestring))
			changed = true;
	}
	cJSON_ArrayForEach(item, want_opts)
		if (!cJSON_GetObjectItemCaseSensitive(old_opts, item->string))
			changed = true;
	return changed ? BUILD_SETUP_RECONFIGURE : BUILD_SETUP_NONE;
}

static void argv_add(struct pg_strvec *v, bool *nomem, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0;
	char *s;

	if (*nomem)
		return;
	s = malloc(la + lb + 1);
	if (!s) {
		*nomem = true;
		return;
	}
	memcpy(s, a, la);
	if (b)
		memcpy(s + la, b, lb);
	s[la + lb] = '\0';
	if (pg_strvec_push(v, s) < 0)
		*nomem = true;
	free(s);
}

char **build_meson_argv(const cJSON *stamp, const char *build_dir, const char *src_dir,
			bool reconfigure)
{
	const cJSON *opts = cJSON_GetObjectItemCaseSensitive(stamp, "options"), *item;
	struct pg_strvec v = PG_STRVEC_INIT;
	char buf[OPTION_NAME_MAX + 4];
	bool nomem = false;

	argv_add(&v, &nomem, "meson", NULL);
	argv_add(&v, &nomem, "setup", NULL);
	if (reconfigure)
		argv_add(&v, &nomem, "--reconfigure", NULL);
	cJSON_ArrayForEach(item, opts) {
		if (pg_fmt(buf, sizeof(buf), "-D%s=", item->string) < 0 || !cJSON_IsString(item)) {
			nomem = true;	/* cannot happen: build_stamp() checked */
			break;
		}
		argv_add(&v, &nomem, buf, item->valuestring);
	}
	argv_add(&v, &nomem, build_dir, NULL);
	argv_add(&v, &nomem, src_dir, NULL);
	if (nomem) {
		pg_strvec_clear(&v);
		return NULL;
	}
	return v.v;		/* NULL-terminated, freed with sandbox_argv_free() */
}

/* --- the log: file, tail, stream --- */

static void tail_add(struct build_ctx *ctx, const char *data, size_t n)
{
	struct pg_buf *t = &ctx->tail;

	if (n >= BUILD_TAIL_MAX) {
		pg_buf_reset(t);
		(void)pg_buf_add(t, data + n - BUILD_TAIL_MAX, BUILD_TAIL_MAX);
		return;
	}
	if (t->len + n > 2 * BUILD_TAIL_MAX)
		pg_buf_consume(t, t->len + n - BUILD_TAIL_MAX);
	/* Cannot fail but for memory: the tail is then shorter. */
	(void)pg_buf_add(t, data, n);
}

/* Hand pending output to spec->log: all of it when forced, else whole
 * lines once enough has gathered or enough time has passed. */
static void flush_log(struct build_ctx *ctx, bool force)
{
	struct pg_buf *b = &ctx->pending;
	uint64_t now = now_ms();
	size_t n = b->len;

	if (!ctx->spec->log || !b->len)
		return;
	if (!force) {
		if (b->len < LOG_FLUSH_BYTES && now - ctx->last_flush_ms < LOG_FLUSH_MS)
			return;
		while (n > 0 && b->data[n - 1] != '\n')
			n--;
		if (n == 0) {
			if (b->len < LOG_FLUSH_BYTES)
				return;		/* wait for the line to end */
			n = b->len;
		}
	}
	ctx->spec->log(ctx->spec->arg, b->data, n);
	pg_buf_consume(b, n);
	ctx->last_flush_ms = now;
}

static void stream(struct build_ctx *ctx, const char *data, size_t n)
{
	tail_add(ctx, data, n);
	if (!ctx->spec->log)
		return;
	if (ctx->pending.len + n > LOG_PENDING_MAX)
		flush_log(ctx, true);
	if (n > LOG_PENDING_MAX) {
		ctx->spec->log(ctx->spec->arg, data, n);
		return;
	}
	(void)pg_buf_add(&ctx->pending, data, n);	/* fits: flushed above */
	flush_log(ctx, false);
}

/* One line of our own ("perfgate: ..." or "+ command"), to the log file
 * and the stream. */
static void say(struct build_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct build_ctx *ctx, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT(64 * 1024);
	va_list ap;
	int fd, rc;

	va_start(ap, fmt);
	rc = pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (rc < 0 || pg_buf_addch(&b, '\n') < 0) {
		pg_buf_release(&b);
		return;
	}
	fd = open(ctx->spec->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, b.data, b.len) != (ssize_t)b.len) {
		if (ctx->io_err.code == PG_OK)
			pg_err_errno(&ctx->io_err, "write log '%s'", ctx->spec->log_path);
	}
	if (fd >= 0 && close(fd) < 0 && ctx->io_err.code == PG_OK)
		pg_err_errno(&ctx->io_err, "close log '%s'", ctx->spec->log_path);
	stream(ctx, b.data, b.len);
	pg_buf_release(&b);
}

/* "+ meson setup ..." with arguments quoted where a shell would need it,
 * so that the line can be pasted to reproduce the step. */
static void say_command(struct build_ctx *ctx, char *const *argv)
{
	struct pg_buf b = PG_BUF_INIT(64 * 1024);
	int rc = pg_buf_adds(&b, "+");

	for (size_t i = 0; argv[i] && rc == 0; i++) {
		const char *a = argv[i];
		bool plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789-_=./,:+@%") == strlen(a);

		rc = pg_buf_addch(&b, ' ');
		if (rc == 0 && plain)
			rc = pg_buf_adds(&b, a);
		else if (rc == 0) {
			rc = pg_buf_addch(&b, '\'');
			for (; *a && rc == 0; a++)
				rc = *a == '\'' ? pg_buf_adds(&b, "'\\''") : pg_buf_addch(&b, *a);
			if (rc == 0)
				rc = pg_buf_addch(&b, '\'');
		}
	}
	if (rc == 0)
		say(ctx, "%s", pg_buf_str(&b));
	pg_buf_release(&b);
}

static void count_line(struct build_ctx *ctx)
{
	long done, total;

	if (build_ninja_line(ctx->line, ctx->line_len, &done, &total) == 1) {
		ctx->res->steps++;
		if (ctx->spec->progress)
			ctx->spec->progress(ctx->spec->arg, done, total);
	}
	ctx->line_len = 0;
}

static void on_output(void *arg, const char *data, size_t n)
{
	struct build_ctx *ctx = arg;

	if (ctx->head_len < HEAD_KEEP) {
		size_t k = HEAD_KEEP - ctx->head_len < n ? HEAD_KEEP - ctx->head_len : n;

		memcpy(ctx->head + ctx->head_len, data, k);
		ctx->head_len += k;
	}
	if (ctx->count_steps) {
		for (size_t i = 0; i < n; i++) {
			if (data[i] == '\n')
				count_line(ctx);
			else if (ctx->line_len < LINE_KEEP)
				ctx->line[ctx->line_len++] = data[i];
		}
	}
	stream(ctx, data, n);
}

static bool on_poll(void *arg)
{
	struct build_ctx *ctx = arg;

	flush_log(ctx, false);
	return ctx->spec->stopped && ctx->spec->stopped(ctx->spec->arg);
}

static int set_failed(struct build_ctx *ctx, const char *step, const char *how)
{
	size_t n = strlen(step) + strlen(how) + 3;

	free(ctx->res->failed_step);
	ctx->res->failed_step = malloc(n);
	if (!ctx->res->failed_step)
		return -1;
	/* n holds it all: never cut. */
	pg_fmt_cut(ctx->res->failed_step, n, "%s: %s", step, how);
	return 0;
}

/*
 * Run one command (sandboxed when the spec says so) with the build's
 * environment and log.  Returns 1 when it succeeded, 0 when it failed
 * (res says how), -1 when it could not be run (err).
 */
static int run_step(struct build_ctx *ctx, const char *step, char *const *argv,
		    bool count_steps, uint64_t *ms, struct pg_err *err)
{
	const struct build_spec *spec = ctx->spec;
	const char *rw[4] = { spec->build_dir, NULL, NULL, NULL };
	const char *ro[4] = { spec->src_dir, NULL, NULL, NULL };
	size_t nrw = 1, nro = 1;
	struct sandbox_cmd cmd = { (const char *const *)argv, spec->build_dir, rw, ro, NULL };
	struct pg_proc p = PG_PROC_INIT;
	char **wrapped = NULL, desc[PG_PROC_DESC_MAX];
	uint64_t now = now_ms();
	int ret = -1;

	if (spec->ccache_dir) {
		if (spec->ccache_readonly)
			ro[nro++] = spec->ccache_dir;
		else
			rw[nrw++] = spec->ccache_dir;
		if (spec->ccache_shared_dir) {
			if (spec->ccache_shared_readonly)
				ro[nro++] = spec->ccache_shared_dir;
			else
				rw[nrw++] = spec->ccache_shared_dir;
		}
	}
	say_command(ctx, argv);
	if (ctx->deadline_ms && now >= ctx->deadline_ms) {
		ctx->res->timed_out = true;
		ret = set_failed(ctx, step, "not started: the build's time is up") < 0 ? -1 : 0;
		if (ret < 0)
			pg_err_set(err, PG_ENOMEM, "build: out of memory");
		return ret;
	}
	if (spec->sandbox && sandbox_wrap(spec->sandbox, &cmd, &wrapped, err) < 0)
		return -1;
	p.argv = wrapped ? (const char *const *)wrapped : (const char *const *)argv;
	p.dir = spec->build_dir;
	p.clear_env = true;
	p.env_set = ctx->env;
	p.output_path = spec->log_path;
	p.tail_max = 0;		/* ours is ctx->tail, with our own lines */
	if (ctx->deadline_ms)
		p.timeout_ms = ctx->deadline_ms - now > UINT_MAX ? UINT_MAX :
			       (unsigned int)(ctx->deadline_ms - now);
	p.cancel_cb = on_poll;
	p.cancel_arg = ctx;
	p.output_cb = on_output;
	p.output_arg = ctx;
	ctx->count_steps = count_steps;
	ctx->line_len = 0;
	ctx->head_len = 0;
	if (pg_proc_run(&p, err) < 0) {
		pg_err_prefix(err, "%s", step);
		goto out;
	}
	if (count_steps && ctx->line_len)
		count_line(ctx);
	*ms += p.duration_ms;
	if (pg_proc_succeeded(&p)) {
		ret = 1;
		goto out;
	}
	ctx->res->stopped = p.cancelled;
	ctx->res->timed_out = p.timed_out;
	ctx->res->sandbox_failed = spec->sandbox && !p.cancelled && !p.timed_out &&
				   sandbox_setup_failed(ctx->head, ctx->head_len);
	pg_proc_describe(&p, desc, sizeof(desc));
	if (set_failed(ctx, step, desc) < 0) {
		pg_err_set(err, PG_ENOMEM, "build: out of memory");
		goto out;
	}
	say(ctx, "perfgate: %s%s", ctx->res->failed_step,
	    ctx->res->sandbox_failed ? " (the sandbox could not start)" : "");
	ret = 0;
out:
	flush_log(ctx, true);
	pg_proc_release(&p);
	sandbox_argv_free(wrapped);
	return ret;
}

/* `meson --version`, run directly: the host's own program. */
static int meson_version(char **out, struct pg_err *err)
{
	static const char *const argv[] = { "meson", "--version", NULL };
	struct pg_proc p = PG_PROC_INIT;
	char desc[PG_PROC_DESC_MAX];
	int ret = -1;

	*out = NULL;
	p.argv = argv;
	p.clear_env = true;
	p.env_set = build_env_fixed;
	p.timeout_ms = 60000;
	p.tail_max = 256;
	if (pg_proc_run(&p, err) < 0)
		goto out;
	if (!pg_proc_succeeded(&p)) {
		pg_err_set(err, PG_EIO, "meson --version: %s: %s",
			   pg_proc_describe(&p, desc, sizeof(desc)), pg_buf_str(&p.tail));
		goto out;
	}
	*out = strndup(pg_buf_str(&p.tail), strcspn(pg_buf_str(&p.tail), "\r\n"));
	if (!*out) {
		pg_err_set(err, PG_ENOMEM, "meson --version: out of memory");
		goto out;
	}
	ret = 0;
out:
	pg_proc_release(&p);
	return ret;
}

/* A walk beneath a directory, never through a symbolic link: removing
 * everything in it, or adding up the blocks it holds (up to a limit). */
struct walk {
	const char *what;	/* "remove", "size of": for messages */
	bool remove;
	uint64_t limit;		/* size: stop once total passes it */
	uint64_t total;		/* size: bytes of allocated blocks */
	uint64_t deadline_ms;	/* size: stop at this now_ms(); 0: none */
	bool cut;		/* size: stopped at the limit or the deadline */
};

/* Walk what is inside the open directory dfd (closed here). */
static int walk_contents(int dfd, const char *top, int depth, struct walk *w,
			 struct pg_err *err)
{
	DIR *d;
	struct dirent *e;
	struct stat st;
	int ret = -1;

	if (depth > REMOVE_DEPTH_MAX) {
		close(dfd);
		return pg_err_set(err, PG_EINVAL, "%s '%s': nested too deep", w->what, top);
	}
	d = fdopendir(dfd);
	if (!d) {
		pg_err_errno(err, "%s '%s': open directory", w->what, top);
		close(dfd);
		return -1;
	}
	for (errno = 0; (w->remove || w->total <= w->limit) && (e = readdir(d)) != NULL;
	     errno = 0) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (!w->remove && w->deadline_ms && now_ms() >= w->deadline_ms) {
			w->cut = true;
			break;
		}
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (!w->remove && errno == ENOENT)	/* removed meanwhile */
				continue;
			pg_err_errno(err, "%s '%s': stat '%s'", w->what, top, e->d_name);
			goto out;
		}
		w->total += (uint64_t)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub < 0) {
				pg_err_errno(err, "%s '%s': open '%s'", w->what, top, e->d_name);
				goto out;
			}
			if (walk_contents(sub, top, depth + 1, w, err) < 0)
				goto out;
		}
		if (w->remove &&
		    unlinkat(dirfd(d), e->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0) {
			pg_err_errno(err, "%s '%s': '%s'", w->what, top, e->d_name);
			goto out;
		}
	}
	if (errno) {
		pg_err_errno(err, "%s '%s': read directory", w->what, top);
		goto out;
	}
	ret = 0;
out:
	closedir(d);
	return ret;
}

/* The build directory itself must not be a link: its contents are
 * removed as root. */
static int clear_dir(const char *path, struct pg_err *err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct walk w = { "remove", true, 0, 0, 0, false };
	struct stat st;

	if (fd < 0) {
		if (errno == ELOOP || (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)))
			return pg_err_set(err, PG_EINVAL, "remove the contents of '%s': it is a "
					  "symbolic link: refused", path);
		return pg_err_errno(err, "open '%s'", path);
	}
	return walk_contents(fd, path, 0, &w, err);
}

int build_remove_tree(const char *path, struct pg_err *err)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		return pg_err_errno(err, "remove '%s'", path);
	}
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) < 0 && errno != ENOENT)
			return pg_err_errno(err, "remove '%s'", path);
		return 0;
	}
	if (clear_dir(path, err) < 0)
		return -1;
	if (rmdir(path) < 0 && errno != ENOENT)
		return pg_err_errno(err, "remove '%s'", path);
	return 0;
}

int build_tree_size(const char *path, uint64_t budget_ms, uint64_t *bytes, bool *complete,
		    struct pg_err *err)
{
	struct walk w = { "size of", false, UINT64_MAX, 0, 0, false };
	struct stat st;
	int fd;

	*bytes = 0;
	*complete = true;
	if (budget_ms)
		w.deadline_ms = now_ms() + budget_ms;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ELOOP || (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)))
			return pg_err_set(err, PG_EINVAL, "size of '%s': it is a symbolic link: "
					  "refused", path);
		return pg_err_errno(err, "open '%s'", path);
	}
	if (walk_contents(fd, path, 0, &w, err) < 0)
		return -1;
	*bytes = w.total;
	*complete = !w.cut;
	return 0;
}

/* build.ninja of a finished setup: a regular file, found beneath the
 * build directory (which the sandboxed build writes) without following
 * a link, so that a planted link only ever means "set up afresh". */
static bool ninja_file_present(const char *build_dir)
{
	struct pg_err ignored = PG_ERR_INIT;
	struct stat st;

	return pg_stat_beneath(build_dir, "build.ninja", &st, &ignored) == 0 &&
	       S_ISREG(st.st_mode);
}

static cJSON *read_stamp(const char *path)
{
	cJSON *stamp = NULL;
	struct pg_err e = PG_ERR_INIT;

	if (access(path, F_OK) < 0)
		return NULL;
	/* An unreadable stamp is no stamp: the directory is set up again. */
	if (pg_json_parse_file(path, STAMP_MAX, &stamp, &e) < 0) {
		pg_log_warn("build", "%s: %s: setting the build directory up afresh", path, e.msg);
		return NULL;
	}
	if (!cJSON_IsObject(stamp)) {
		cJSON_Delete(stamp);
		return NULL;
	}
	return stamp;
}

static int write_stamp(const char *path, const cJSON *stamp, struct pg_err *err)
{
	char *text = pg_json_print(stamp, true);
	int rc;

	if (!text)
		return pg_err_set(err, PG_ENOMEM, "build: out of memory");
	rc = pg_write_file_atomic(path, text, strlen(text), 0644, err);
	free(text);
	return rc;
}

static int check_spec(const struct build_spec *s, struct pg_err *err)
{
	const struct { const char *name, *value; bool required; } paths[] = {
		{ "src_dir", s->src_dir, true },
		{ "build_dir", s->build_dir, true },
		{ "log_path", s->log_path, true },
		{ "ccache_dir", s->ccache_dir, false },
		{ "ccache_basedir", s->ccache_basedir, false },
		{ "ccache_shared_dir", s->ccache_shared_dir, false },
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!paths[i].value && !paths[i].required)
			continue;
		if (!paths[i].value || paths[i].value[0] != '/' ||
		    strlen(paths[i].value) >= PATH_MAX - 32)
			return pg_err_set(err, PG_EINVAL, "build: %s must be an absolute path",
					  paths[i].name);
	}
	if (s->ccache_shared_dir &&
	    (!s->ccache_dir || !build_ccache_url_ok(s->ccache_shared_dir) ||
	     strcmp(s->ccache_shared_dir, s->ccache_dir) == 0))
		return pg_err_set(err, PG_EINVAL, "build: ccache_shared_dir needs a ccache_dir of "
				  "its own and only [A-Za-z0-9/._+-] in its path");
	if (!s->buildtype || !option_name_ok(s->buildtype))
		return pg_err_set(err, PG_EINVAL, "build: buildtype '%s' is not a meson buildtype",
				  s->buildtype ? s->buildtype : "(none)");
	for (size_t i = 0; s->targets && s->targets[i]; i++)
		if (!*s->targets[i] || s->targets[i][0] == '-')
			return pg_err_set(err, PG_EINVAL, "build: target '%s' is not a ninja target",
					  s->targets[i]);
	return 0;
}

static char *env_entry(const char *key, const char *value)
{
	size_t n = strlen(key) + strlen(value) + 2;
	char *s = malloc(n);

	/* n holds it all (a cut entry would set another value). */
	if (s && pg_fmt(s, n, "%s=%s", key, value) < 0) {
		free(s);
		s = NULL;
	}
	return s;
}

static int setup_env(struct build_ctx *ctx, struct pg_err *err)
{
	size_t n = 0;

	for (size_t i = 0; i < N_ENV_FIXED; i++)
		ctx->env[n++] = build_env_fixed[i];
	if (ctx->spec->ccache_dir) {
		ctx->env_ccache_dir = env_entry("CCACHE_DIR", ctx->spec->ccache_dir);
		if (!ctx->env_ccache_dir)
			return pg_err_set(err, PG_ENOMEM, "build: out of memory");
		ctx->env[n++] = ctx->env_ccache_dir;
		if (ctx->spec->ccache_basedir) {
			ctx->env_ccache_base = env_entry("CCACHE_BASEDIR", ctx->spec->ccache_basedir);
			if (!ctx->env_ccache_base)
				return pg_err_set(err, PG_ENOMEM, "build: out of memory");
			ctx->env[n++] = ctx->env_ccache_base;
		}
		if (ctx->spec->ccache_readonly) {
			/* ccache's temporary files and statistics would go to
			 * the cache directory, which is read-only then. */
			ctx->env[n++] = "CCACHE_READONLY=1";
			ctx->env[n++] = "CCACHE_TEMPDIR=/tmp";
			ctx->env[n++] = "CCACHE_NOSTATS=1";
		}
		if (ctx->spec->ccache_shared_dir) {
			char url[PATH_MAX + 32];

			if (pg_fmt(url, sizeof(url), "file:%s%s", ctx->spec->ccache_shared_dir,
				   ctx->spec->ccache_shared_readonly ? "|read-only" : "") < 0)
				return pg_err_set(err, PG_EINVAL, "build: ccache_shared_dir too long");
			ctx->env_ccache_shared = env_entry("CCACHE_SECONDARY_STORAGE", url);
			if (!ctx->env_ccache_shared)
				return pg_err_set(err, PG_ENOMEM, "build: out of memory");
			ctx->env[n++] = ctx->env_ccache_shared;
			/* Base builds put hits there too: a cache filled before
			 * the shared one existed still reaches it. */
			if (!ctx->spec->ccache_shared_readonly)
				ctx->env[n++] = "CCACHE_RESHARE=1";
		}
	} else {
		ctx->env[n++] = "CCACHE_DISABLE=1";
	}
	ctx->env[n] = NULL;
	return 0;
}

static int prepare_dirs(const struct build_spec *spec, struct pg_err *err)
{
	if (sandbox_prepare_dir(spec->sandbox, spec->build_dir, true, err) < 0 ||
	    (spec->ccache_dir &&
	     sandbox_prepare_dir(spec->sandbox, spec->ccache_dir, true, err) < 0) ||
	    (spec->ccache_dir && spec->ccache_shared_dir &&
	     sandbox_prepare_dir(spec->sandbox, spec->ccache_shared_dir,
				 !spec->ccache_shared_readonly, err) < 0) ||
	    sandbox_prepare_dir(spec->sandbox, spec->src_dir, false, err) < 0)
		return -1;
	return 0;
}

/* A base build's shared cache emptied when it has grown past
 * BUILD_SHARED_MAX: ccache never trims its file storage, and the next
 * base builds fill it again (CCACHE_RESHARE). */
static int trim_shared(struct build_ctx *ctx, struct pg_err *err)
{
	const struct build_spec *spec = ctx->spec;
	struct walk w = { "size of", false, spec->ccache_shared_max ? spec->ccache_shared_max :
						      BUILD_SHARED_MAX, 0, 0, false };
	int fd;

	if (!spec->ccache_dir || !spec->ccache_shared_dir || spec->ccache_shared_readonly)
		return 0;
	fd = open(spec->ccache_shared_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pg_err_errno(err, "open '%s'", spec->ccache_shared_dir);
	if (walk_contents(fd, spec->ccache_shared_dir, 0, &w, err) < 0)
		return -1;
	if (w.total <= w.limit)
		return 0;
	say(ctx, "perfgate: ccache: the shared cache %s holds over %llu KiB: emptied",
	    spec->ccache_shared_dir, (unsigned long long)(w.limit >> 10));
	return clear_dir(spec->ccache_shared_dir, err);
}

static int do_build(struct build_ctx *ctx, struct pg_err *err)
{
	const struct build_spec *spec = ctx->spec;
	struct build_result *res = ctx->res;
	char stamp_path[PATH_MAX], sbx[256];
	char *meson_ver = NULL, **argv = NULL;
	cJSON *want = NULL, *old = NULL;
	enum build_setup setup;
	size_t n_targets = 0;
	int rc, ret = -1;

	if (build_read_version(spec->src_dir, &res->version, err) < 0) {
		if (err->code != PG_EINVAL && err->code != PG_ETOOBIG)
			goto out;
		/* The tree's own doing (a patch made VERSION a link, or no
		 * version): this build's outcome, not a failure of the host. */
		if (set_failed(ctx, "VERSION", err->msg) < 0) {
			pg_err_set(err, PG_ENOMEM, "build: out of memory");
			goto out;
		}
		pg_err_clear(err);
		say(ctx, "perfgate: %s", res->failed_step);
		ret = 0;
		goto out;
	}
	res->version_mismatch = spec->expect_version &&
				strcmp(spec->expect_version, res->version) != 0;
	if (meson_version(&meson_ver, err) < 0)
		goto out;
	want = build_stamp(spec, meson_ver, err);
	if (!want)
		goto out;
	if (pg_fmt(stamp_path, sizeof(stamp_path), "%s%s", spec->build_dir,
		   BUILD_STAMP_SUFFIX) < 0) {
		pg_err_set(err, PG_EINVAL, "build: build_dir too long");
		goto out;
	}
	if (prepare_dirs(spec, err) < 0)
		goto out;
	if (trim_shared(ctx, err) < 0)
		goto out;

	say(ctx, "perfgate: build DPDK %s (%s) from %s in %s with meson %s", res->version,
	    spec->buildtype, spec->src_dir, spec->build_dir, meson_ver);
	say(ctx, "perfgate: sandbox: %s", sandbox_describe(spec->sandbox, sbx, sizeof(sbx)));
	if (res->version_mismatch)
		say(ctx, "perfgate: note: the tree's VERSION is %s but the job says %s: its meson "
		    "options were chosen for %s", res->version, spec->expect_version,
		    spec->expect_version);

	old = read_stamp(stamp_path);
	setup = build_setup_needed(old, want);
	if (setup == BUILD_SETUP_NONE && !ninja_file_present(spec->build_dir))
		setup = BUILD_SETUP_FRESH;
	res->setup = build_setup_name(setup);
	if (setup != BUILD_SETUP_NONE) {
		say(ctx, "perfgate: meson setup: %s", setup == BUILD_SETUP_FRESH ?
		    "fresh (no previous setup of this directory)" :
		    setup == BUILD_SETUP_WIPE ? "wipe (meson, source or removed options changed)" :
		    "reconfigure (option values changed)");
		if (unlink(stamp_path) < 0 && errno != ENOENT) {
			pg_err_errno(err, "remove '%s'", stamp_path);
			goto out;
		}
		if (setup != BUILD_SETUP_RECONFIGURE && clear_dir(spec->build_dir, err) < 0)
			goto out;
		argv = build_meson_argv(want, spec->build_dir, spec->src_dir,
					setup == BUILD_SETUP_RECONFIGURE);
		if (!argv) {
			pg_err_set(err, PG_ENOMEM, "build: out of memory");
			goto out;
		}
		res->setup_ran = true;
		rc = run_step(ctx, "meson setup", argv, false, &res->setup_ms, err);
		if (rc <= 0) {
			ret = rc;
			goto out;
		}
		if (write_stamp(stamp_path, want, err) < 0)
			goto out;
		sandbox_argv_free(argv);
		argv = NULL;
	} else {
		say(ctx, "perfgate: meson setup: not needed (same options as the last setup)");
	}

	while (spec->targets && spec->targets[n_targets])
		n_targets++;
	argv = calloc(n_targets + 4, sizeof(*argv));
	if (!argv) {
		pg_err_set(err, PG_ENOMEM, "build: out of memory");
		goto out;
	}
	/* Borrowed strings: freed with free(argv) alone below. */
	argv[0] = (char *)"ninja";
	argv[1] = (char *)"-C";
	argv[2] = (char *)spec->build_dir;
	for (size_t i = 0; i < n_targets; i++)
		argv[3 + i] = (char *)spec->targets[i];
	rc = run_step(ctx, "ninja", argv, true, &res->ninja_ms, err);
	free(argv);
	argv = NULL;
	if (rc <= 0) {
		ret = rc;
		goto out;
	}
	res->ok = true;
	ret = 0;
out:
	sandbox_argv_free(argv);
	cJSON_Delete(want);
	cJSON_Delete(old);
	free(meson_ver);
	return ret;
}

int build_dpdk(const struct build_spec *spec, struct build_result *res, struct pg_err *err)
{
	struct build_ctx ctx;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	res->setup = "none";
	memset(&ctx, 0, sizeof(ctx));
	ctx.spec = spec;
	ctx.res = res;
	pg_buf_init(&ctx.tail, 2 * BUILD_TAIL_MAX);
	pg_buf_init(&ctx.pending, LOG_PENDING_MAX);
	ctx.start_ms = now_ms();
	ctx.last_flush_ms = ctx.start_ms;
	if (spec->timeout_s)
		ctx.deadline_ms = ctx.start_ms + (uint64_t)spec->timeout_s * 1000;

	if (check_spec(spec, err) < 0 || setup_env(&ctx, err) < 0)
		goto out;
	ret = do_build(&ctx, err);
	if (ret == 0 && res->ok)
		say(&ctx, "perfgate: built in %.1f s (%ld ninja steps)",
		    (double)(now_ms() - ctx.start_ms) / 1000.0, res->steps);
	flush_log(&ctx, true);
	if (ret == 0 && ctx.io_err.code != PG_OK) {
		*err = ctx.io_err;
		ret = -1;
	}
out:
	if (ret < 0)
		pg_err_prefix(err, "build '%s'", spec->build_dir ? spec->build_dir : "?");
	res->duration_ms = now_ms() - ctx.start_ms;
	if (ctx.tail.len > BUILD_TAIL_MAX)
		pg_buf_consume(&ctx.tail, ctx.tail.len - BUILD_TAIL_MAX);
	res->tail = pg_buf_detach(&ctx.tail, NULL);
	pg_buf_release(&ctx.tail);
	pg_buf_release(&ctx.pending);
	free(ctx.env_ccache_dir);
	free(ctx.env_ccache_base);
	free(ctx.env_ccache_shared);
	return ret;
}

void build_result_release(struct build_result *res)
{
	free(res->failed_step);
	free(res->tail);
	free(res->version);
	memset(res, 0, sizeof(*res));
	res->setup = "none";
}
