/* SPDX-License-Identifier: MIT */
/* Workspace operations on a slot in a sandboxed child: see ws_child.h. */
#include "ws_child.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "buf.h"
#include "fmt.h"
#include "fsbeneath.h"
#include "fsutil.h"
#include "gitutil.h"
#include "inbox.h"
#include "json.h"
#include "log.h"
#include "proc.h"
#include "text.h"
#include "workspace.h"

#define COMP "workspace"
#define MIB ((uint64_t)1024 * 1024)
#define RESULT_NAME "result.json"
#define MBOX_NAME "series.mbox"
#define EXIT_APPLIED 0
#define EXIT_APPLY_FAILED 1
#define EXIT_USAGE 2
#define EXIT_ERROR 3
/* The child's PATH: nothing it runs, but libgit2 and the sandbox wrappers
 * should find nothing of the agent's environment. */
#define CHILD_PATH "PATH=/usr/bin:/bin:/usr/sbin:/sbin"

/* ---- configuration -------------------------------------------------- */

static const char *const cfg_fields[] = {
	"max_total_mb", "max_files", "max_file_mb", "memory_mb", "timeout_s", NULL
};

void ws_child_cfg_init(struct ws_child_cfg *c)
{
	c->max_total_mb = WS_MAX_TOTAL_MB_DEFAULT;
	c->max_files = WS_MAX_FILES_DEFAULT;
	c->max_file_mb = WS_MAX_FILE_MB_DEFAULT;
	c->memory_mb = WS_CHILD_MEMORY_MB_DEFAULT;
	c->timeout_s = WS_CHILD_TIMEOUT_S_DEFAULT;
}

static int cfg_int(const cJSON *obj, const char *key, int64_t min, int64_t max, int64_t *out,
		   struct pg_err *err)
{
	int64_t v;
	int rc = pg_json_get_int(obj, key, false, min, max, &v, err);

	if (rc < 0)
		return pg_json_nested_err(err, "apply");
	if (rc > 0)
		*out = v;
	return 0;
}

int ws_child_cfg_parse(struct ws_child_cfg *c, const cJSON *obj, struct pg_err *err)
{
	if (!cJSON_IsObject(obj))
		return pg_err_set(err, PG_EINVAL, "field 'apply': expected an object, got %s",
				  pg_json_type_name(obj));
	if (pg_json_check_keys(obj, cfg_fields, err) < 0)
		return pg_json_nested_err(err, "apply");
	return cfg_int(obj, "max_total_mb", 1, WS_LIMIT_MB_MAX, &c->max_total_mb, err) < 0 ||
	       cfg_int(obj, "max_files", 1, WS_LIMIT_FILES_MAX, &c->max_files, err) < 0 ||
	       cfg_int(obj, "max_file_mb", 1, WS_LIMIT_MB_MAX, &c->max_file_mb, err) < 0 ||
	       cfg_int(obj, "memory_mb", SANDBOX_MEMORY_MB_MIN, SANDBOX_MEMORY_MB_MAX,
		       &c->memory_mb, err) < 0 ||
	       cfg_int(obj, "timeout_s", 1, WS_CHILD_TIMEOUT_S_MAX, &c->timeout_s, err) < 0 ? -1 : 0;
}

cJSON *ws_child_cfg_to_json(const struct ws_child_cfg *c)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddNumberToObject(o, "max_total_mb", (double)c->max_total_mb) ||
	    !cJSON_AddNumberToObject(o, "max_files", (double)c->max_files) ||
	    !cJSON_AddNumberToObject(o, "max_file_mb", (double)c->max_file_mb) ||
	    !cJSON_AddNumberToObject(o, "memory_mb", (double)c->memory_mb) ||
	    !cJSON_AddNumberToObject(o, "timeout_s", (double)c->timeout_s)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int ws_child_self_exe(char *out, size_t size, struct pg_err *err)
{
	ssize_t n = readlink("/proc/self/exe", out, size);

	if (n < 0)
		return pg_err_errno(err, "readlink /proc/self/exe");
	if ((size_t)n >= size)
		return pg_err_set(err, PG_EINVAL, "the agent's own path is too long");
	out[n] = '\0';
	return 0;
}

/* ---- the result file ------------------------------------------------ */

static const char *const method_names[] = {
	[PG_APPLY_NOT_TRIED] = "not-tried", [PG_APPLY_EXACT] = "exact",
	[PG_APPLY_OFFSET] = "offset", [PG_APPLY_3WAY] = "3way", [PG_APPLY_FAILED] = "failed",
	[PG_APPLY_ALREADY] = "already",
};

static bool add_str(cJSON *o, const char *key, const char *v)
{
	return v ? cJSON_AddStringToObject(o, key, v) != NULL : cJSON_AddNullToObject(o, key) != NULL;
}

/* The child's outcome as JSON: rc, the error (rc -1), the result, usage. */
static cJSON *result_to_json(int rc, const struct pg_err *err, const struct pg_apply_result *res,
			     uint64_t used_bytes, uint64_t used_files)
{
	cJSON *o = cJSON_CreateObject(), *arr;

	if (!o || !cJSON_AddNumberToObject(o, "rc", rc) ||
	    !add_str(o, "error", rc < 0 ? err->msg : NULL) ||
	    !add_str(o, "error_code", rc < 0 ? pg_errcode_name(err->code) : NULL) ||
	    !cJSON_AddNumberToObject(o, "used_bytes", (double)used_bytes) ||
	    !cJSON_AddNumberToObject(o, "used_files", (double)used_files))
		goto fail;
	if (!res)
		return o;
	if (!cJSON_AddNumberToObject(o, "n_patches", (double)res->n_patches) ||
	    !cJSON_AddNumberToObject(o, "n_skipped", (double)res->n_skipped) ||
	    !cJSON_AddNumberToObject(o, "n_applied", (double)res->n_applied) ||
	    !cJSON_AddNumberToObject(o, "n_already", (double)res->n_already) ||
	    !cJSON_AddNumberToObject(o, "failed_patch", (double)res->failed_patch) ||
	    !add_str(o, "failed_subject", res->failed_subject) ||
	    !add_str(o, "failed_file", res->failed_file) ||
	    !cJSON_AddNumberToObject(o, "failed_hunk_index", (double)res->failed_hunk_index) ||
	    !add_str(o, "failed_hunk", res->failed_hunk) || !add_str(o, "reason", res->reason) ||
	    !(arr = cJSON_AddArrayToObject(o, "patches")))
		goto fail;
	for (size_t i = 0; i < res->n_patches; i++) {
		const struct pg_apply_patch *p = &res->patches[i];
		cJSON *e = cJSON_CreateObject();

		if (!e || !cJSON_AddItemToArray(arr, e) || !add_str(e, "subject", p->subject) ||
		    !cJSON_AddStringToObject(e, "method", pg_apply_method_name(p->method)) ||
		    !cJSON_AddNumberToObject(e, "offset", (double)p->offset) ||
		    !cJSON_AddStringToObject(e, "commit", p->commit))
			goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* A count field of the result: a whole number in [0, max]. */
static int get_count(const cJSON *o, const char *key, uint64_t max, uint64_t *out,
		     struct pg_err *err)
{
	int64_t v = 0;

	if (pg_json_get_int(o, key, true, 0, (int64_t)max, &v, err) < 0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int get_size(const cJSON *o, const char *key, size_t *out, struct pg_err *err)
{
	uint64_t v = 0;

	if (get_count(o, key, WS_RESULT_MAX, &v, err) < 0)
		return -1;
	*out = (size_t)v;
	return 0;
}

/* A string field that may be null: *out malloc'd or NULL. */
static int get_opt_str(const cJSON *o, const char *key, char **out, struct pg_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return pg_err_set(err, PG_EINVAL, "field '%s': expected a string", key);
	if (!(*out = strdup(v->valuestring)))
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	return 0;
}

static int method_of(const char *name, enum pg_apply_method *m)
{
	for (size_t i = 0; i < sizeof(method_names) / sizeof(method_names[0]); i++)
		if (method_names[i] && strcmp(method_names[i], name) == 0) {
			*m = (enum pg_apply_method)i;
			return 0;
		}
	return -1;
}

static int patches_from_json(const cJSON *o, struct pg_apply_result *res, struct pg_err *err)
{
	const cJSON *arr = NULL, *e;
	size_t i = 0;

	if (pg_json_get_array(o, "patches", true, &arr, err) < 0)
		return -1;
	if ((size_t)cJSON_GetArraySize(arr) != res->n_patches)
		return pg_err_set(err, PG_EINVAL, "'patches' holds %d entries, n_patches says %zu",
				  cJSON_GetArraySize(arr), res->n_patches);
	if (res->n_patches && !(res->patches = calloc(res->n_patches, sizeof(*res->patches))))
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	cJSON_ArrayForEach(e, arr) {
		struct pg_apply_patch *p = &res->patches[i++];
		const char *method = NULL, *commit = NULL;
		int64_t off = 0;

		if (get_opt_str(e, "subject", &p->subject, err) < 0 ||
		    pg_json_get_string(e, "method", true, &method, err) < 0 ||
		    pg_json_get_int(e, "offset", true, -(int64_t)LONG_MAX, LONG_MAX, &off, err) < 0 ||
		    pg_json_get_string(e, "commit", true, &commit, err) < 0)
			return pg_err_prefix(err, "patch %zu", i), -1;
		if (!p->subject && !(p->subject = strdup("")))
			return pg_err_set(err, PG_ENOMEM, "out of memory");
		if (method_of(method, &p->method) < 0 || strlen(commit) > PG_APPLY_OID_HEX)
			return pg_err_set(err, PG_EINVAL, "patch %zu: bad method or commit", i);
		p->offset = (long)off;
		memcpy(p->commit, commit, strlen(commit) + 1);
	}
	return 0;
}

/* Read back what result_to_json() wrote.  *rc is the child's rc; for -1,
 * err holds the child's message. */
static int result_from_json(const cJSON *o, int *rc, struct pg_err *child_err,
			    struct pg_apply_result *res, uint64_t *used_bytes,
			    uint64_t *used_files, struct pg_err *err)
{
	int64_t v = 0;
	char *msg = NULL;
	int ret = -1;

	if (pg_json_get_int(o, "rc", true, -1, 1, &v, err) < 0 ||
	    get_count(o, "used_bytes", UINT64_C(1) << 53, used_bytes, err) < 0 ||
	    get_count(o, "used_files", UINT64_C(1) << 53, used_files, err) < 0 ||
	    get_opt_str(o, "error", &msg, err) < 0)
		goto out;
	*rc = (int)v;
	if (*rc < 0) {
		pg_err_set(child_err, PG_EIO, "%s", msg ? msg : "failed");
		ret = 0;
		goto out;
	}
	if (!res) {
		ret = 0;
		goto out;
	}
	if (get_size(o, "n_patches", &res->n_patches, err) < 0 ||
	    get_size(o, "n_skipped", &res->n_skipped, err) < 0 ||
	    get_size(o, "n_applied", &res->n_applied, err) < 0 ||
	    get_size(o, "n_already", &res->n_already, err) < 0 ||
	    get_size(o, "failed_patch", &res->failed_patch, err) < 0 ||
	    get_size(o, "failed_hunk_index", &res->failed_hunk_index, err) < 0 ||
	    get_opt_str(o, "failed_subject", &res->failed_subject, err) < 0 ||
	    get_opt_str(o, "failed_file", &res->failed_file, err) < 0 ||
	    get_opt_str(o, "failed_hunk", &res->failed_hunk, err) < 0 ||
	    get_opt_str(o, "reason", &res->reason, err) < 0 || patches_from_json(o, res, err) < 0)
		goto out;
	if (res->n_applied > res->n_patches || res->n_already > res->n_patches - res->n_applied ||
	    res->failed_patch > res->n_patches) {
		pg_err_set(err, PG_EINVAL, "counts out of range");
		goto out;
	}
	ret = 0;
out:
	free(msg);
	if (ret < 0)
		pg_err_prefix(err, "the workspace child's result");
	return ret;
}

/* ---- the agent's side ------------------------------------------------ */

/* Read io_dir/RESULT_NAME without following a link. */
static int read_result(const char *io_dir, cJSON **out, struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(WS_RESULT_MAX);
	int ret = -1;

	*out = NULL;
	if (pg_read_file_beneath(io_dir, RESULT_NAME, &b, NULL, err) == 0)
		ret = pg_json_parse(b.data ? b.data : "", b.len, out, err);
	pg_buf_release(&b);
	return ret;
}

static int unlink_in(const char *dir, const char *name, struct pg_err *err)
{
	char path[PATH_MAX];

	if (pg_fmt(path, sizeof(path), "%s/%s", dir, name) < 0)
		return pg_err_set(err, PG_EINVAL, "'%s': path too long", dir);
	if (unlink(path) < 0 && errno != ENOENT)
		return pg_err_errno(err, "remove '%s'", path);
	return 0;
}

static void child_output(void *arg, const char *data, size_t len)
{
	const struct ws_child *c = arg;

	if (c->log)
		c->log(c->arg, data, len);
}

static bool child_stopped(void *arg)
{
	const struct ws_child *c = arg;

	return c->stopped && c->stopped(c->arg);
}

/* How a child ended, when it ended without a result. */
enum child_end { CHILD_RESULT, CHILD_STOPPED, CHILD_TIMEOUT, CHILD_SIGNAL, CHILD_NOSANDBOX,
		 CHILD_EXIT };

struct child_run {
	enum child_end end;
	int exit_code, term_signal;
	char desc[PG_PROC_DESC_MAX];
	char tail[512];
	cJSON *result;		/* when end == CHILD_RESULT */
};

/*
 * Run `self_exe argv...` (argv without the program) as a child, wrapped
 * in the sandbox when c->sandbox, with rw (NULL-ended) writable besides
 * io_dir and ro readable besides the program; then read its result.
 * Returns 0 with *r filled, or -1 (it could not run at all).
 */
static int child_run(const struct ws_child *c, const char *const *args, const char *const *rw,
		     const char *const *ro, struct child_run *r, struct pg_err *err)
{
	static const char *const env[] = { CHILD_PATH, "HOME=/tmp", "TMPDIR=/tmp", "LC_ALL=C",
					   NULL };
	const char *argv[24], *rws[8], *ros[8];
	struct pg_proc p = PG_PROC_INIT;
	struct sandbox_cfg sc;
	char **wrapped = NULL;
	size_t n = 0, nrw = 0, nro = 0;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	argv[n++] = c->self_exe;
	for (size_t i = 0; args[i] && n < sizeof(argv) / sizeof(argv[0]) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	rws[nrw++] = c->io_dir;
	for (size_t i = 0; rw[i] && nrw < 7; i++)
		rws[nrw++] = rw[i];
	rws[nrw] = NULL;
	ros[nro++] = c->self_exe;
	for (size_t i = 0; ro[i] && nro < 7; i++)
		ros[nro++] = ro[i];
	ros[nro] = NULL;
	if (unlink_in(c->io_dir, RESULT_NAME, err) < 0)
		return -1;
	p.argv = argv;
	if (c->sandbox) {
		struct sandbox_cmd cmd = { .argv = argv, .dir = c->io_dir, .rw_paths = rws,
					   .ro_paths = ros };

		/* The builds' sandbox with the child's own limits: its memory
		 * is what an expanded patch could take. */
		sc = *c->sandbox;
		sc.memory_mb = c->cfg->memory_mb;
		sc.cpu_s = c->cfg->timeout_s;
		if (sandbox_wrap(&sc, &cmd, &wrapped, err) < 0)
			return -1;
		p.argv = (const char *const *)wrapped;
	}
	p.dir = c->io_dir;
	p.clear_env = true;
	p.env_set = env;
	p.tail_max = sizeof(r->tail) - 1;
	p.timeout_ms = (unsigned int)(c->cfg->timeout_s * 1000);
	p.cancel_cb = child_stopped;
	p.cancel_arg = (void *)c;
	p.output_cb = child_output;
	p.output_arg = (void *)c;
	if (pg_proc_run(&p, err) < 0) {
		pg_err_prefix(err, "workspace child");
		goto out;
	}
	pg_proc_describe(&p, r->desc, sizeof(r->desc));
	/* tail_max keeps the tail below sizeof(r->tail): never cut. */
	pg_fmt_cut(r->tail, sizeof(r->tail), "%s", pg_buf_str(&p.tail));
	r->exit_code = p.exit_code;
	r->term_signal = p.term_signal;
	if (p.cancelled)
		r->end = CHILD_STOPPED;
	else if (p.timed_out)
		r->end = CHILD_TIMEOUT;
	else if (c->sandbox && sandbox_setup_failed(p.tail.data ? p.tail.data : "", p.tail.len))
		r->end = CHILD_NOSANDBOX;
	else if (!p.exited)
		r->end = CHILD_SIGNAL;
	else if (p.exit_code <= EXIT_APPLY_FAILED || p.exit_code == EXIT_ERROR)
		r->end = read_result(c->io_dir, &r->result, err) == 0 ? CHILD_RESULT : CHILD_EXIT;
	else
		r->end = CHILD_EXIT;
	if (r->end == CHILD_EXIT)
		pg_err_clear(err);
	ret = 0;
out:
	pg_proc_release(&p);
	sandbox_argv_free(wrapped);
	return ret;
}

/* A child that ended without a usable result, as an error. */
static int child_failed(const struct child_run *r, const char *what, struct pg_err *err)
{
	const char *t = r->tail;
	size_t len = strlen(t);

	while (len && (t[len - 1] == '\n' || t[len - 1] == ' '))
		len--;
	switch (r->end) {
	case CHILD_NOSANDBOX:
		return pg_err_set(err, PG_EIO, "%s: the sandbox did not start: %.*s", what,
				  (int)len, t);
	case CHILD_TIMEOUT:
		return pg_err_set(err, PG_ETIMEOUT, "%s: %s", what, r->desc);
	default:
		return pg_err_set(err, PG_EIO, "%s: %s%s%.*s", what, r->desc, len ? ": " : "",
				  (int)len, t);
	}
}

/* The directories a child sees, made ready for the sandbox user. */
static int child_dirs(const struct ws_child *c, const char *src, const char *mirror_real,
		      struct pg_err *err)
{
	char exe_dir[PATH_MAX];
	char *slash;

	if (pg_fmt(exe_dir, sizeof(exe_dir), "%s", c->self_exe) < 0 ||
	    !(slash = strrchr(exe_dir, '/')))
		return pg_err_set(err, PG_EINVAL, "'%s': not an absolute path", c->self_exe);
	*slash = '\0';
	if (sandbox_prepare_dir(c->sandbox, c->io_dir, true, err) < 0 ||
	    sandbox_prepare_dir(c->sandbox, src, true, err) < 0 ||
	    sandbox_prepare_dir(c->sandbox, mirror_real, false, err) < 0 ||
	    (c->sandbox && sandbox_prepare_dir(c->sandbox, exe_dir[0] ? exe_dir : "/", false,
					       err) < 0))
		return -1;
	return 0;
}

int ws_child_checkout(const struct ws_child *c, const char *work_dir, const char *tree,
		      const char *slot, const char *mirror_path, const char *commit,
		      char **src_path, struct pg_err *err)
{
	struct pg_err cerr = PG_ERR_INIT;
	struct child_run r;
	char mirror_real[PATH_MAX], src[PATH_MAX];
	uint64_t ub = 0, uf = 0;
	int crc = 0, ret = -1;

	*src_path = NULL;
	memset(&r, 0, sizeof(r));
	if (!ws_name_ok(tree) || !ws_name_ok(slot))
		return pg_err_set(err, PG_EINVAL, "check out: bad tree or slot name");
	if (pg_fmt(src, sizeof(src), "%s/slots/%s/%s/src", work_dir, tree, slot) < 0)
		return pg_err_set(err, PG_EINVAL, "check out: workspace path too long");
	if (!realpath(mirror_path, mirror_real))
		return pg_err_errno(err, "mirror '%s'", mirror_path);
	if (child_dirs(c, src, mirror_real, err) < 0)
		goto out;
	{
		const char *args[] = { "workspace-checkout", "--work", work_dir, "--tree", tree,
				       "--slot", slot, "--mirror", mirror_path, "--commit", commit,
				       "--result", NULL, NULL };
		const char *rw[] = { src, NULL }, *ro[] = { mirror_real, NULL };
		char result[PATH_MAX];

		if (pg_fmt(result, sizeof(result), "%s/%s", c->io_dir, RESULT_NAME) < 0) {
			pg_err_set(err, PG_EINVAL, "'%s': path too long", c->io_dir);
			goto out;
		}
		args[12] = result;
		if (child_run(c, args, rw, ro, &r, err) < 0)
			goto out;
	}
	if (r.end == CHILD_STOPPED) {
		ret = 1;
		goto out;
	}
	if (r.end != CHILD_RESULT) {
		child_failed(&r, "check out", err);
		goto out;
	}
	if (result_from_json(r.result, &crc, &cerr, NULL, &ub, &uf, err) < 0)
		goto out;
	if (crc != 0) {
		pg_err_set(err, PG_EIO, "%s", cerr.msg);
		goto out;
	}
	if (!(*src_path = strdup(src))) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	ret = 0;
out:
	cJSON_Delete(r.result);
	return ret;
}

/* An apply failure that is about the series as a whole: a limit of the
 * child.  failed_patch stays 0; reason says it all. */
static int series_failure(struct pg_apply_result *res, struct pg_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int series_failure(struct pg_apply_result *res, struct pg_err *err, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	pg_vfmt_cut(why, sizeof(why), fmt, ap);
	va_end(ap);
	pg_apply_result_release(res);
	if (!(res->reason = strdup(why)))
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	return 1;
}

int ws_child_apply(const struct ws_child *c, const char *src_path, const char *mirror_path,
		   const char *mbox, size_t len, uint64_t *used_bytes, uint64_t *used_files,
		   struct pg_apply_result *res, struct pg_err *err)
{
	struct pg_err cerr = PG_ERR_INIT;
	struct child_run r;
	char mirror_real[PATH_MAX], mbox_path[PATH_MAX], result[PATH_MAX];
	char lim[3][24], used[2][24];
	int crc = 0, ret = -1;

	memset(res, 0, sizeof(*res));
	memset(&r, 0, sizeof(r));
	if (!realpath(mirror_path, mirror_real))
		return pg_err_errno(err, "mirror '%s'", mirror_path);
	if (pg_fmt(mbox_path, sizeof(mbox_path), "%s/%s", c->io_dir, MBOX_NAME) < 0 ||
	    pg_fmt(result, sizeof(result), "%s/%s", c->io_dir, RESULT_NAME) < 0)
		return pg_err_set(err, PG_EINVAL, "'%s': path too long", c->io_dir);
	/* io_dir is the sandbox user's (the child writes its result there):
	 * never follow what may have been planted in it. */
	if (child_dirs(c, src_path, mirror_real, err) < 0 ||
	    pg_write_file_beneath_atomic(c->io_dir, MBOX_NAME, mbox, len, 0644, err) < 0)
		goto out;
	/* 24 bytes hold any uint64_t (20 digits): never -1. */
	if (pg_fmt(lim[0], sizeof(lim[0]), "%" PRIu64, (uint64_t)c->cfg->max_total_mb * MIB) < 0 ||
	    pg_fmt(lim[1], sizeof(lim[1]), "%" PRIu64, (uint64_t)c->cfg->max_files) < 0 ||
	    pg_fmt(lim[2], sizeof(lim[2]), "%" PRIu64, (uint64_t)c->cfg->max_file_mb * MIB) < 0 ||
	    pg_fmt(used[0], sizeof(used[0]), "%" PRIu64, *used_bytes) < 0 ||
	    pg_fmt(used[1], sizeof(used[1]), "%" PRIu64, *used_files) < 0) {
		pg_err_set(err, PG_EINVAL, "apply: a limit does not fit its argument");
		goto out;
	}
	{
		const char *args[] = { "workspace-apply", "--src", src_path, "--mbox", mbox_path,
				       "--result", result, "--max-total-bytes", lim[0],
				       "--max-files", lim[1], "--max-file-bytes", lim[2],
				       "--used-bytes", used[0], "--used-files", used[1], NULL };
		const char *rw[] = { src_path, NULL }, *ro[] = { mirror_real, NULL };

		if (child_run(c, args, rw, ro, &r, err) < 0)
			goto out;
	}
	switch (r.end) {
	case CHILD_STOPPED:
		ret = 2;
		goto out;
	case CHILD_TIMEOUT:
		ret = series_failure(res, err, "the apply did not end within %lld s "
				     "(apply.timeout_s)", (long long)c->cfg->timeout_s);
		goto out;
	case CHILD_SIGNAL:
		ret = series_failure(res, err, "the apply was killed by signal %d (%s): the series "
				     "needs more than the apply's limits (apply.memory_mb %lld MiB, "
				     "apply.timeout_s %lld s)", r.term_signal, strsignal(r.term_signal),
				     (long long)c->cfg->memory_mb, (long long)c->cfg->timeout_s);
		goto out;
	case CHILD_RESULT:
		break;
	default:
		child_failed(&r, "apply", err);
		goto out;
	}
	if (result_from_json(r.result, &crc, &cerr, res, used_bytes, used_files, err) < 0)
		goto out;
	if (crc < 0) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(r.result, "error_code");

		/* Out of memory in the child is its RLIMIT_DATA: the series'. */
		if (cJSON_IsString(code) && strcmp(code->valuestring, pg_errcode_name(PG_ENOMEM)) == 0)
			ret = series_failure(res, err, "the apply ran out of memory (apply.memory_mb "
					     "%lld MiB): %s", (long long)c->cfg->memory_mb, cerr.msg);
		else
			pg_err_set(err, PG_EIO, "%s", cerr.msg);
		goto out;
	}
	ret = crc;
out:
	cJSON_Delete(r.result);
	return ret;
}

/* ---- the child's side ------------------------------------------------ */

bool ws_child_mode(int argc, char **argv)
{
	return argc > 1 && (strcmp(argv[1], "workspace-checkout") == 0 ||
			    strcmp(argv[1], "workspace-apply") == 0);
}

struct child_args {
	const char *work, *tree, *slot, *mirror, *commit, *src, *mbox, *result;
	uint64_t max_total, max_files, max_file, used_bytes, used_files;
};

static int parse_u64(const char *s, uint64_t *out)
{
	long long v;

	if (pg_parse_ll(s, 0, INT64_MAX, &v) < 0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int child_parse(int argc, char **argv, struct child_args *a)
{
	static const struct option opts[] = {
		{ "work", required_argument, NULL, 'w' }, { "tree", required_argument, NULL, 't' },
		{ "slot", required_argument, NULL, 's' }, { "mirror", required_argument, NULL, 'm' },
		{ "commit", required_argument, NULL, 'c' }, { "src", required_argument, NULL, 'd' },
		{ "mbox", required_argument, NULL, 'x' }, { "result", required_argument, NULL, 'r' },
		{ "max-total-bytes", required_argument, NULL, 'T' },
		{ "max-files", required_argument, NULL, 'F' },
		{ "max-file-bytes", required_argument, NULL, 'B' },
		{ "used-bytes", required_argument, NULL, 'u' },
		{ "used-files", required_argument, NULL, 'v' }, { NULL, 0, NULL, 0 },
	};
	int opt;

	memset(a, 0, sizeof(*a));
	a->max_total = (uint64_t)WS_MAX_TOTAL_MB_DEFAULT * MIB;
	a->max_files = WS_MAX_FILES_DEFAULT;
	a->max_file = (uint64_t)WS_MAX_FILE_MB_DEFAULT * MIB;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'w': a->work = optarg; break;
		case 't': a->tree = optarg; break;
		case 's': a->slot = optarg; break;
		case 'm': a->mirror = optarg; break;
		case 'c': a->commit = optarg; break;
		case 'd': a->src = optarg; break;
		case 'x': a->mbox = optarg; break;
		case 'r': a->result = optarg; break;
		case 'T': bad = parse_u64(optarg, &a->max_total); break;
		case 'F': bad = parse_u64(optarg, &a->max_files); break;
		case 'B': bad = parse_u64(optarg, &a->max_file); break;
		case 'u': bad = parse_u64(optarg, &a->used_bytes); break;
		case 'v': bad = parse_u64(optarg, &a->used_files); break;
		default: return -1;
		}
		if (bad)
			return -1;
	}
	return optind == argc && a->result ? 0 : -1;
}

static int write_result(const char *path, int rc, const struct pg_err *err,
			const struct pg_apply_result *res, uint64_t used_bytes, uint64_t used_files)
{
	struct pg_err werr = PG_ERR_INIT;
	cJSON *o = result_to_json(rc, err, res, used_bytes, used_files);
	char *text = o ? pg_json_print(o, false) : NULL;
	int ret = -1;

	if (!text)
		pg_err_set(&werr, PG_ENOMEM, "out of memory");
	else if (pg_write_file_atomic(path, text, strlen(text), 0644, &werr) == 0)
		ret = 0;
	if (ret < 0)
		pg_log_error(COMP, "write the result %s: %s", path, werr.msg);
	free(text);
	cJSON_Delete(o);
	return ret;
}

static int child_apply(const struct child_args *a, struct pg_apply_result *res,
		       uint64_t *used_bytes, uint64_t *used_files, struct pg_err *err)
{
	struct pg_buf mbox = PG_BUF_INIT(WS_MBOX_MAX);
	struct pg_apply_limits lim = { a->max_total, a->max_files, a->max_file };
	struct pg_apply_usage used = { *used_bytes, *used_files };
	int rc = -1;

	if (pg_read_file(a->mbox, &mbox, err) == 0)
		rc = ws_apply_opts(a->src, mbox.data ? mbox.data : "", mbox.len, &lim, &used, res,
				   err);
	*used_bytes = used.total_bytes;
	*used_files = used.files;
	pg_buf_release(&mbox);
	return rc;
}

int ws_child_main(int argc, char **argv)
{
	struct pg_apply_result res = PG_APPLY_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct child_args a;
	bool apply = strcmp(argv[0], "workspace-apply") == 0;
	char *src = NULL;
	uint64_t used_bytes, used_files;
	int rc, status;

	pg_log_init("perfgate-agent");
	if (child_parse(argc, argv, &a) < 0 ||
	    (apply ? !a.src || !a.mbox : !a.work || !a.tree || !a.slot || !a.mirror || !a.commit)) {
		fprintf(stderr, "perfgate-agent %s: bad arguments (the agent runs this itself: "
			"see agent/ws_child.h)\n", argv[0]);
		return EXIT_USAGE;
	}
	used_bytes = a.used_bytes;
	used_files = a.used_files;
	/* The slot belongs to the sandbox user; a child run unsandboxed (a
	 * trusted host, as root) opens it all the same: it is the agent's
	 * own, at a path the agent chose. */
	if (pg_git_global_init(&err) < 0 ||
	    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0) < 0) {
		pg_log_error(COMP, "libgit2: %s", err.msg[0] ? err.msg : "owner validation");
		return EXIT_ERROR;
	}
	if (apply)
		rc = child_apply(&a, &res, &used_bytes, &used_files, &err);
	else
		rc = ws_checkout(a.work, a.tree, a.slot, a.mirror, a.commit, &src, &err);
	if (rc < 0)
		pg_log_error(COMP, "%s", err.msg);
	status = rc == 0 ? EXIT_APPLIED : rc > 0 ? EXIT_APPLY_FAILED : EXIT_ERROR;
	if (write_result(a.result, rc, &err, apply ? &res : NULL, used_bytes, used_files) < 0)
		status = EXIT_ERROR;
	free(src);
	pg_apply_result_release(&res);
	return status;
}
