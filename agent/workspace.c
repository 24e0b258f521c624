/* SPDX-License-Identifier: MIT */
/* The agent's workspace with libgit2: see workspace.h. */
#include "workspace.h"
#include "gitutil.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "buf.h"
#include "fmt.h"
#include "fsutil.h"
#include "inbox.h"
#include "log.h"
#include "timeutil.h"

#define COMP "workspace"
#define MIRROR_REFSPEC "+refs/heads/*:refs/heads/*"
#define WS_PATH_MAX 4096

bool ws_name_ok(const char *name)
{
	size_t n;

	if (!name || !name[0] || name[0] == '.' || name[0] == '-')
		return false;
	for (n = 0; name[n]; n++) {
		unsigned char c = (unsigned char)name[n];

		if (n >= WS_NAME_MAX ||
		    !(isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+'))
			return false;
	}
	return true;
}

/* A malloc'd path from a format; truncation is an error, never a shorter
 * path. */
__attribute__((format(printf, 3, 4)))
static int path_dup(char **out, struct pg_err *err, const char *fmt, ...)
{
	char buf[WS_PATH_MAX];
	va_list ap;
	int n;

	*out = NULL;
	va_start(ap, fmt);
	n = pg_vfmt(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return pg_err_set(err, PG_EINVAL, "workspace path too long: '%.64s...'", buf);
	if (!(*out = strdup(buf)))
		return pg_err_set(err, PG_ENOMEM, "workspace: out of memory");
	return 0;
}

static int check_names(const char *tree, const char *slot, struct pg_err *err)
{
	if (!ws_name_ok(tree))
		return pg_err_set(err, PG_EINVAL, "bad tree name '%.64s' (want [A-Za-z0-9._+-], "
				  "not starting with '.' or '-')", tree ? tree : "(null)");
	if (slot && !ws_name_ok(slot))
		return pg_err_set(err, PG_EINVAL, "bad slot name '%.64s' (want [A-Za-z0-9._+-], "
				  "not starting with '.' or '-')", slot);
	return 0;
}

static bool oid_hex_ok(const char *s)
{
	size_t i;

	for (i = 0; s && i < WS_OID_HEX; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return s && s[i] == '\0';
}

static int parse_commit_id(git_oid *oid, const char *hex, struct pg_err *err)
{
	char lower[WS_OID_HEX + 1];
	int rc;

	if (!oid_hex_ok(hex))
		return pg_err_set(err, PG_EINVAL, "'%.48s' is not a full commit id (40 hex digits)",
				  hex ? hex : "(null)");
	for (size_t i = 0; i <= WS_OID_HEX; i++)
		lower[i] = (char)tolower((unsigned char)hex[i]);
	rc = git_oid_fromstr(oid, lower);
	if (rc < 0)
		return pg_git_fail(err, PG_EINVAL, rc, "commit id '%s'", hex);
	return 0;
}

/* Whether repo has commit oid (a commit object, not just any object). */
static int has_commit(git_repository *repo, const git_oid *oid, bool *has, struct pg_err *err)
{
	git_odb *odb = NULL;
	git_object_t type;
	size_t size;
	int rc;

	*has = false;
	rc = git_repository_odb(&odb, repo);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "open the object database");
	rc = git_odb_read_header(&size, &type, odb, oid);
	git_odb_free(odb);
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		return 0;
	}
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "look up %s", git_oid_tostr_s(oid));
	*has = type == GIT_OBJECT_COMMIT;
	return 0;
}

/* ---- mirrors -------------------------------------------------------- */


struct fetch_ctx {
	struct pg_git_progress prog;	/* first: the callbacks' payload */
	const struct ws_sync_opts *opts;
	bool stopped;
	unsigned int updated;
};

static bool fetch_stopped(struct fetch_ctx *fc)
{
	if (!fc->stopped && fc->opts && fc->opts->stopped && fc->opts->stopped(fc->opts->arg))
		fc->stopped = true;
	return fc->stopped;
}

static int on_transfer(const git_indexer_progress *st, void *payload)
{
	if (fetch_stopped(payload))
		return GIT_EUSER;
	return pg_git_on_transfer(st, payload);
}

static int on_sideband(const char *str, int len, void *payload)
{
	if (fetch_stopped(payload))
		return GIT_EUSER;
	return pg_git_on_sideband(str, len, payload);
}

static int on_update_tips(const char *refname, const git_oid *a, const git_oid *b, void *payload)
{
	struct fetch_ctx *fc = payload;
	char ah[GIT_OID_HEXSZ + 1], bh[GIT_OID_HEXSZ + 1];

	fc->updated++;
	git_oid_tostr(ah, sizeof(ah), a);
	git_oid_tostr(bh, sizeof(bh), b);
	pg_log_debug(COMP, "%s: %s %s -> %s", fc->prog.label, refname,
		     git_oid_is_zero(a) ? "(new)" : ah, bh);
	return 0;
}

/*
 * Fetch every branch of url into repo.  An in-memory remote, not a
 * configured "origin": libgit2 1.5.1 leaks a PCRE2 match block per config
 * entry checked against url.*.insteadOf when it looks a named remote up
 * (fixed after 1.5), and the job names the URL to use anyway.
 */
static int mirror_fetch(git_repository *repo, const char *tree, const char *url,
			struct fetch_ctx *fc, struct pg_err *err)
{
	git_remote_create_options ro;
	git_fetch_options fo;
	git_remote *remote = NULL;
	int rc, ret = -1;

	rc = git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	if (rc == 0) {
		ro.repository = repo;
		ro.fetchspec = MIRROR_REFSPEC;
		ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
		rc = git_remote_create_with_opts(&remote, url, &ro);
	}
	if (rc == 0)
		rc = git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "remote %s", url);
		goto out;
	}
	fo.callbacks.transfer_progress = on_transfer;
	fo.callbacks.sideband_progress = on_sideband;
	fo.callbacks.update_tips = on_update_tips;
	fo.callbacks.payload = fc;
	fo.prune = GIT_FETCH_NO_PRUNE;
	fo.update_fetchhead = 0;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	rc = git_remote_fetch(remote, NULL, &fo, "perfgate-agent: fetch");
	if (rc < 0) {
		if (fc->stopped) {
			git_error_clear();
			ret = 1;
		} else if (fc->prog.timed_out) {
			git_error_clear();
			pg_err_set(err, PG_ETIMEOUT, "fetch %s: no result within %lld ms", url,
				   (long long)(fc->prog.deadline_ms - fc->prog.start_ms));
		} else {
			pg_git_fail(err, PG_EIO, rc, "fetch %s", url);
		}
		goto out;
	}
	pg_log_info(COMP, "tree %s: fetched %s: %u objects (%zu KiB), %u refs changed, in %lld ms",
		    tree, url, fc->prog.last.received_objects, fc->prog.last.received_bytes / 1024,
		    fc->updated, (long long)(pg_time_mono_ms() - fc->prog.start_ms));
	ret = 0;
out:
	git_remote_free(remote);
	return ret;
}

int ws_mirror_sync_opts(const char *work_dir, const char *tree, const char *url,
			const char *need_commit, const struct ws_sync_opts *opts,
			char **mirror_path, struct pg_err *err)
{
	git_repository *repo = NULL;
	struct fetch_ctx fc;
	git_oid want;
	bool has = false;
	char *path = NULL;
	int rc, ret = -1;

	*mirror_path = NULL;
	memset(&fc, 0, sizeof(fc));
	fc.opts = opts;
	if (check_names(tree, NULL, err) < 0 ||
	    (need_commit && parse_commit_id(&want, need_commit, err) < 0) ||
	    pg_git_global_init(err) < 0 ||
	    path_dup(&path, err, "%s/mirrors/%s.git", work_dir, tree) < 0 ||
	    pg_git_mirror_open(&repo, path, COMP, tree, err) < 0)
		goto fail;
	if (need_commit) {
		if (has_commit(repo, &want, &has, err) < 0)
			goto fail;
		if (has) {
			pg_log_debug(COMP, "tree %s: %s already in %s", tree, need_commit, path);
			goto done;
		}
	}
	if (fetch_stopped(&fc)) {
		ret = 1;
		goto out;
	}
	pg_git_progress_start(&fc.prog, COMP, opts && opts->timeout_ms > 0 ? opts->timeout_ms :
			      WS_FETCH_TIMEOUT_DEFAULT_MS);
	pg_git_progress_label(&fc.prog, "fetch %s", tree);
	rc = mirror_fetch(repo, tree, url, &fc, err);
	if (rc != 0) {
		ret = rc;
		if (rc < 0)
			goto fail;
		goto out;
	}
	if (need_commit) {
		if (has_commit(repo, &want, &has, err) < 0)
			goto fail;
		if (!has) {
			pg_err_set(err, PG_ENOTFOUND, "commit %s is not on any branch of %s",
				   need_commit, url);
			goto fail;
		}
	}
done:
	*mirror_path = path;
	path = NULL;
	ret = 0;
	goto out;
fail:
	pg_err_prefix(err, "mirror of tree '%.64s'", tree ? tree : "(null)");
out:
	git_repository_free(repo);
	free(path);
	return ret;
}

int ws_mirror_sync(const char *work_dir, const char *tree, const char *url,
		   const char *need_commit, char **mirror_path, struct pg_err *err)
{
	return ws_mirror_sync_opts(work_dir, tree, url, need_commit, NULL, mirror_path, err);
}

/* ---- slots ---------------------------------------------------------- */

/* Point the slot's object database at the mirror's objects (absolute, so
 * that the file stays right whatever the working directory). */
static int write_alternates(const char *src, const char *mirror_path, struct pg_err *err)
{
	char real[PATH_MAX];
	char *file = NULL, *line = NULL;
	struct pg_buf old = PG_BUF_INIT(WS_PATH_MAX + 64);
	int ret = -1;

	if (!realpath(mirror_path, real))
		return pg_err_errno(err, "mirror '%s'", mirror_path);
	if (path_dup(&file, err, "%s/.git/objects/info/alternates", src) < 0 ||
	    path_dup(&line, err, "%s/objects\n", real) < 0)
		goto out;
	if (pg_read_file(file, &old, err) == 0 && strcmp(pg_buf_str(&old), line) == 0) {
		ret = 0;
		goto out;
	}
	pg_err_clear(err);
	ret = pg_write_file_atomic(file, line, strlen(line), 0644, err);
out:
	pg_buf_release(&old);
	free(line);
	free(file);
	return ret;
}

/*
 * Open the slot's repository, creating it on first use.  The slot's
 * directory must be a plain directory: a symbolic link there could make
 * the forced checkout and its clean-up reach outside the workspace.
 */
static int slot_open(git_repository **repo, const char *src, const char *mirror_path,
		     struct pg_err *err)
{
	git_repository_init_options io;
	char *dotgit = NULL;
	struct stat st;
	int rc, ret = -1;

	if (lstat(src, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return pg_err_set(err, PG_EINVAL, "'%s' is not a directory", src);
	} else if (errno != ENOENT) {
		return pg_err_errno(err, "'%s'", src);
	}
	if (path_dup(&dotgit, err, "%s/.git", src) < 0)
		return -1;
	if (lstat(dotgit, &st) < 0) {
		if (errno != ENOENT) {
			pg_err_errno(err, "'%s'", dotgit);
			goto out;
		}
		rc = git_repository_init_options_init(&io, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
		if (rc == 0) {
			io.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_NO_REINIT;
			rc = git_repository_init_ext(repo, src, &io);
		}
		if (rc < 0) {
			pg_git_fail(err, PG_EIO, rc, "create '%s'", src);
			goto out;
		}
		git_repository_free(*repo);
		*repo = NULL;
		pg_log_info(COMP, "created %s (objects from %s)", src, mirror_path);
	} else if (!S_ISDIR(st.st_mode)) {
		pg_err_set(err, PG_EINVAL, "'%s' is not a directory", dotgit);
		goto out;
	}
	/* Before opening: the object database reads alternates when it is
	 * first used. */
	if (write_alternates(src, mirror_path, err) < 0)
		goto out;
	rc = git_repository_open_ext(repo, src, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "open '%s'", src);
		goto out;
	}
	ret = 0;
out:
	free(dotgit);
	return ret;
}

int ws_checkout(const char *work_dir, const char *tree, const char *slot,
		const char *mirror_path, const char *commit, char **src_path,
		struct pg_err *err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL;
	git_checkout_options co;
	git_oid oid;
	char *src = NULL;
	int64_t t0 = pg_time_mono_ms();
	int rc, ret = -1;

	*src_path = NULL;
	if (check_names(tree, slot, err) < 0 || parse_commit_id(&oid, commit, err) < 0 ||
	    pg_git_global_init(err) < 0 ||
	    path_dup(&src, err, "%s/slots/%s/%s/src", work_dir, tree, slot) < 0 ||
	    slot_open(&repo, src, mirror_path, err) < 0)
		goto fail;
	rc = git_commit_lookup(&c, repo, &oid);
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		pg_err_set(err, PG_ENOTFOUND, "commit %s is not in %s", commit, mirror_path);
		goto fail;
	}
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "read commit %s", commit);
		goto fail;
	}
	/* FORCE writes a file only where its content differs from the target
	 * (the index's stat data tells which files changed since). */
	rc = git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	if (rc == 0) {
		co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED |
				       GIT_CHECKOUT_REMOVE_IGNORED;
		rc = git_checkout_tree(repo, (git_object *)c, &co);
	}
	if (rc == 0)
		rc = git_repository_set_head_detached(repo, &oid);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "check out %s", commit);
		goto fail;
	}
	pg_log_info(COMP, "%s/%s at %s in %lld ms", tree, slot, commit,
		    (long long)(pg_time_mono_ms() - t0));
	*src_path = src;
	src = NULL;
	ret = 0;
	goto out;
fail:
	pg_err_prefix(err, "check out %.64s/%.64s", tree ? tree : "(null)", slot ? slot : "(null)");
out:
	git_commit_free(c);
	git_repository_free(repo);
	free(src);
	return ret;
}

int ws_apply(const char *src_path, const char *mbox, size_t len, struct pg_apply_result *res,
	     struct pg_err *err)
{
	return ws_apply_opts(src_path, mbox, len, NULL, NULL, res, err);
}

int ws_apply_opts(const char *src_path, const char *mbox, size_t len,
		  const struct pg_apply_limits *limits, struct pg_apply_usage *usage,
		  struct pg_apply_result *res, struct pg_err *err)
{
	struct pg_apply_opts o = PG_APPLY_OPTS_INIT;
	git_repository *repo = NULL;
	int rc;

	memset(res, 0, sizeof(*res));
	if (pg_git_global_init(err) < 0)
		return -1;
	rc = git_repository_open_ext(&repo, src_path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "open '%s'", src_path);
	o.fmt = PG_MBOX_MBOXRD;
	if (limits)
		o.limits = *limits;
	o.usage = usage;
	rc = pg_apply_mbox_opts(repo, mbox, len, &o, res, err);
	if (rc < 0)
		pg_err_prefix(err, "apply in '%s'", src_path);
	git_repository_free(repo);
	return rc;
}

int ws_build_dir(const char *work_dir, const char *tree, const char *slot, char **out,
		 struct pg_err *err)
{
	*out = NULL;
	if (check_names(tree, slot, err) < 0)
		return -1;
	return path_dup(out, err, "%s/slots/%s/%s/build", work_dir, tree, slot);
}
