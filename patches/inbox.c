/* SPDX-License-Identifier: MIT */
/*
 * public-inbox archive reader (see inbox.h).  Formats and the tailing
 * algorithm follow public-inbox's Documentation/public-inbox-v1-format.pod
 * and public-inbox-v2-format.pod.
 */
#include "inbox.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "fmt.h"
#include "fsutil.h"
#include "gitutil.h"
#include "log.h"
#include "timeutil.h"
#include "vec.h"

#define COMP "inbox"
#define PATH_MAX_LEN 4096
#define MIRROR_REFSPEC "+refs/heads/*:refs/heads/*"

/*
 * An epoch's repository, opened for one walk or one fetch.  Not kept
 * between calls on purpose: libgit2 caches objects per repository handle,
 * and a commit a purge has repacked away would still be found in the
 * cache of a long-lived handle while the object database no longer has
 * it.
 */
struct epoch_repo {
	int epoch;
	git_repository *repo;
	git_odb *odb;		/* for object headers: sizes without loading */
};

struct pg_inbox {
	char *source;		/* as given; a URL without trailing '/' */
	char *root;		/* the local path, or the mirror directory */
	bool remote;
	enum pg_inbox_format format;
	size_t max_size;
	unsigned int fetch_timeout_ms;
	int *epochs;		/* ascending */
	size_t nepochs;
};

/* ---- errors --------------------------------------------------------- */

/* snprintf into a path buffer; truncation is an error, not a wrong path. */
__attribute__((format(printf, 4, 5)))
static int path_fmt(char *out, size_t size, struct pg_err *err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		return pg_err_set(err, PG_EINVAL, "path too long: '%.64s...'", out);
	return 0;
}

const char *pg_inbox_kind_name(enum pg_inbox_kind kind)
{
	switch (kind) {
	case PG_INBOX_MESSAGE:
		return "message";
	case PG_INBOX_DELETE:
		return "delete";
	case PG_INBOX_TOO_BIG:
		return "too-big";
	case PG_INBOX_NONE:
		return "none";
	}
	return "?";
}

const char *pg_inbox_format_name(enum pg_inbox_format format)
{
	switch (format) {
	case PG_INBOX_V1:
		return "v1";
	case PG_INBOX_V2:
		return "v2";
	case PG_INBOX_UNKNOWN:
		break;
	}
	return "unknown";
}

static bool is_url(const char *s)
{
	const char *p = strstr(s, "://");

	if (!p || p == s)
		return false;
	for (const char *q = s; q < p; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		      (*q >= '0' && *q <= '9') || *q == '+' || *q == '-' || *q == '.'))
			return false;
	return true;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Open a bare repository exactly at path (no searching upwards, which
 * could find an unrelated repository around the inbox). */
static int open_bare(git_repository **repo, const char *path)
{
	return git_repository_open_ext(repo, path,
				       GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE,
				       NULL);
}

/*
 * libgit2 1.5 refuses a repository that another user owns, as git does
 * without a safe.directory entry, and when the user has no safe.directory
 * setting at all it only says "config value 'safe.directory' was not
 * found" (GIT_ENOTFOUND).  A failed open of a git directory owned by
 * someone else gets this explanation instead.
 */
static int foreign_owner_error(const char *path, struct pg_err *err)
{
	char sub[PATH_MAX_LEN];
	struct stat st;

	if (stat(path, &st) < 0 || st.st_uid == geteuid())
		return 0;
	if (pg_fmt(sub, sizeof(sub), "%s/objects", path) < 0 || !is_dir(sub))
		return 0;
	pg_err_set(err, PG_EIO, "'%s' belongs to uid %u, not to uid %u running this: libgit2 "
		   "refuses it like git's safe.directory; run as its owner or allow it with "
		   "`git config --global --add safe.directory %s`", path, (unsigned int)st.st_uid,
		   (unsigned int)geteuid(), path);
	return -1;
}

/* Find out what a local path holds.  The v2 check comes first: a v2
 * directory is not a repository, and a v1 repository has no git/. */
static int detect_local(struct pg_inbox *ib, struct pg_err *err)
{
	char path[PATH_MAX_LEN];
	git_repository *repo = NULL;
	struct stat st;
	int rc;

	if (stat(ib->root, &st) < 0) {
		if (errno == ENOENT)
			return pg_err_set(err, PG_ENOTFOUND, "%s", strerror(errno));
		return pg_err_errno(err, "stat");
	}
	if (!S_ISDIR(st.st_mode))
		return pg_err_set(err, PG_EINVAL, "not a directory");
	if (path_fmt(path, sizeof(path), err, "%s/git", ib->root) < 0)
		return -1;
	if (is_dir(path)) {
		ib->format = PG_INBOX_V2;
		return 0;
	}
	if (path_fmt(path, sizeof(path), err, "%s/ALL.git", ib->root) < 0)
		return -1;
	if (is_dir(path))
		return pg_err_set(err, PG_EINVAL, "a public-inbox external index (ALL.git), "
				  "not an inbox: name the inboxes themselves");
	rc = open_bare(&repo, ib->root);
	if (rc == 0) {
		git_repository_free(repo);
		ib->format = PG_INBOX_V1;
		return 0;
	}
	if (foreign_owner_error(ib->root, err) < 0)
		return -1;
	if (rc == GIT_ENOTFOUND)
		return pg_err_set(err, PG_EINVAL, "not a public-inbox archive (no git/N.git "
				  "epochs, and not a bare git repository)");
	return pg_git_fail(err, PG_EIO, rc, "open as a v1 archive");
}

/* What an existing mirror says about the remote's format. */
static int detect_mirror(struct pg_inbox *ib, struct pg_err *err)
{
	char path[PATH_MAX_LEN];

	if (pg_mkdir_p(ib->root, 0755, err) < 0)
		return -1;
	if (path_fmt(path, sizeof(path), err, "%s/git", ib->root) < 0)
		return -1;
	if (is_dir(path)) {
		ib->format = PG_INBOX_V2;
		return 0;
	}
	if (path_fmt(path, sizeof(path), err, "%s/v1.git", ib->root) < 0)
		return -1;
	ib->format = is_dir(path) ? PG_INBOX_V1 : PG_INBOX_UNKNOWN;
	return 0;
}

int pg_inbox_open(struct pg_inbox **out, const char *source, const char *mirror_dir,
		  struct pg_err *err)
{
	struct pg_inbox *ib = NULL;
	int ret = -1;

	*out = NULL;
	if (pg_git_global_init(err) < 0)
		goto out;
	if (!source || !*source) {
		pg_err_set(err, PG_EINVAL, "open inbox: empty source");
		goto out;
	}
	ib = calloc(1, sizeof(*ib));
	if (!ib || !(ib->source = strdup(source))) {
		pg_err_set(err, PG_ENOMEM, "open inbox '%s': out of memory", source);
		goto out;
	}
	ib->max_size = PG_INBOX_MAX_SIZE_DEFAULT;
	ib->fetch_timeout_ms = PG_INBOX_FETCH_TIMEOUT_DEFAULT;
	ib->remote = is_url(source);
	if (ib->remote) {
		size_t n = strlen(ib->source);

		/* URL/git/N.git is built by appending. */
		while (n > 0 && ib->source[n - 1] == '/')
			ib->source[--n] = '\0';
		if (!mirror_dir || !*mirror_dir) {
			pg_err_set(err, PG_EINVAL, "open inbox '%s': a URL needs a mirror directory",
				   source);
			goto out;
		}
		ib->root = strdup(mirror_dir);
	} else {
		ib->root = strdup(source);
	}
	if (!ib->root) {
		pg_err_set(err, PG_ENOMEM, "open inbox '%s': out of memory", source);
		goto out;
	}
	if ((ib->remote ? detect_mirror(ib, err) : detect_local(ib, err)) < 0) {
		pg_err_prefix(err, "open inbox '%s'", ib->remote ? mirror_dir : source);
		goto out;
	}
	pg_log_debug(COMP, "opened %s inbox '%s'%s%s", pg_inbox_format_name(ib->format),
		     ib->source, ib->remote ? ", mirror " : "", ib->remote ? ib->root : "");
	*out = ib;
	ib = NULL;
	ret = 0;
out:
	pg_inbox_close(ib);
	return ret;
}

void pg_inbox_close(struct pg_inbox *ib)
{
	if (!ib)
		return;
	free(ib->epochs);
	free(ib->root);
	free(ib->source);
	free(ib);
}

void pg_inbox_set_max_size(struct pg_inbox *ib, size_t max_size)
{
	ib->max_size = max_size ? max_size : PG_INBOX_MAX_SIZE_DEFAULT;
}

void pg_inbox_set_fetch_timeout(struct pg_inbox *ib, unsigned int ms)
{
	ib->fetch_timeout_ms = ms ? ms : PG_INBOX_FETCH_TIMEOUT_DEFAULT;
}

enum pg_inbox_format pg_inbox_format(const struct pg_inbox *ib)
{
	return ib->format;
}

bool pg_inbox_is_remote(const struct pg_inbox *ib)
{
	return ib->remote;
}

/* ---- epochs --------------------------------------------------------- */

static int epoch_path(const struct pg_inbox *ib, int epoch, char *out, size_t size,
		      struct pg_err *err)
{
	if (ib->format == PG_INBOX_V2)
		return path_fmt(out, size, err, "%s/git/%d.git", ib->root, epoch);
	if (ib->remote)
		return path_fmt(out, size, err, "%s/v1.git", ib->root);
	return path_fmt(out, size, err, "%s", ib->root);
}

/* "N.git" with N a decimal number without leading zeros (public-inbox
 * makes nothing else), within PG_INBOX_EPOCH_MAX. */
static int parse_epoch_name(const char *name)
{
	const char *p = name;
	long v = 0;

	if (p[0] == '0' && p[1] != '.')
		return -1;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > PG_INBOX_EPOCH_MAX)
			return -1;
	}
	return strcmp(p, ".git") == 0 ? (int)v : -1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int list_epochs(struct pg_inbox *ib, struct pg_err *err)
{
	char path[PATH_MAX_LEN];
	DIR *dir = NULL;
	struct dirent *de;
	int *list = NULL;
	size_t n = 0, alloc = 0;
	int ret = -1;

	if (ib->format == PG_INBOX_V1) {
		/* A remote v1 archive exists once it has been mirrored. */
		if (epoch_path(ib, 0, path, sizeof(path), err) < 0)
			goto out;
		if (!is_dir(path))
			goto done;
		if (!(list = malloc(sizeof(*list))))
			goto nomem;
		list[n++] = 0;
		goto done;
	}
	if (ib->format != PG_INBOX_V2)
		goto done;
	if (path_fmt(path, sizeof(path), err, "%s/git", ib->root) < 0)
		goto out;
	dir = opendir(path);
	if (!dir) {
		if (errno == ENOENT)
			goto done;
		pg_err_errno(err, "list epochs: open '%s'", path);
		goto out;
	}
	errno = 0;
	while ((de = readdir(dir))) {
		int e = parse_epoch_name(de->d_name);

		if (e < 0)
			continue;
		if (PG_GROW(list, alloc, n + 1) < 0)
			goto nomem;
		list[n++] = e;
		errno = 0;
	}
	if (errno) {
		pg_err_errno(err, "list epochs: read '%s'", path);
		goto out;
	}
	qsort(list, n, sizeof(*list), cmp_int);
done:
	free(ib->epochs);
	ib->epochs = list;
	ib->nepochs = n;
	list = NULL;
	ret = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "list epochs: out of memory");
out:
	if (dir)
		closedir(dir);
	free(list);
	return ret;
}

int pg_inbox_epochs(struct pg_inbox *ib, const int **epochs, size_t *n, struct pg_err *err)
{
	*epochs = NULL;
	*n = 0;
	if (list_epochs(ib, err) < 0) {
		pg_err_prefix(err, "inbox '%s'", ib->source);
		return -1;
	}
	*epochs = ib->epochs;
	*n = ib->nepochs;
	return 0;
}

static bool has_epoch(const struct pg_inbox *ib, int epoch)
{
	for (size_t i = 0; i < ib->nepochs; i++)
		if (ib->epochs[i] == epoch)
			return true;
	return false;
}

static void close_epoch(struct epoch_repo *er)
{
	git_odb_free(er->odb);
	git_repository_free(er->repo);
	er->odb = NULL;
	er->repo = NULL;
}

/* Finish opening er->repo: its object database too. */
static int epoch_odb(struct epoch_repo *er, struct pg_err *err)
{
	int rc = git_repository_odb(&er->odb, er->repo);

	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "epoch %d: open object database", er->epoch);
	return 0;
}

static int open_epoch(struct pg_inbox *ib, int epoch, struct epoch_repo *er, struct pg_err *err)
{
	char path[PATH_MAX_LEN];
	int rc;

	memset(er, 0, sizeof(*er));
	er->epoch = epoch;
	if (!has_epoch(ib, epoch) && list_epochs(ib, err) < 0)
		return -1;
	if (!has_epoch(ib, epoch))
		return pg_err_set(err, PG_ENOTFOUND, "epoch %d: no such epoch%s", epoch,
				  ib->remote ? " in the mirror (not fetched?)" : "");
	if (epoch_path(ib, epoch, path, sizeof(path), err) < 0)
		return -1;
	rc = open_bare(&er->repo, path);
	if (rc < 0 && foreign_owner_error(path, err) < 0) {
		pg_err_prefix(err, "epoch %d", epoch);
		return -1;
	}
	if (rc < 0)
		return pg_git_fail(err, rc == GIT_ENOTFOUND ? PG_ENOTFOUND : PG_EIO, rc,
				"epoch %d: open '%s'", epoch, path);
	return epoch_odb(er, err);
}

/* ---- reading commits ---------------------------------------------- */

/*
 * The commit an epoch ends at: what HEAD names; when HEAD is dangling
 * (a mirror made before its remote's default branch was known),
 * refs/heads/master, public-inbox's branch; else the only branch there
 * is.  *found is false for an epoch without commits.
 */
static int resolve_head(git_repository *repo, int epoch, git_oid *head, bool *found,
			struct pg_err *err)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	size_t nbranches = 0;
	int rc, ret = -1;

	*found = false;
	rc = git_reference_name_to_id(head, repo, "HEAD");
	if (rc == 0)
		goto found;
	if (rc != GIT_ENOTFOUND && rc != GIT_EUNBORNBRANCH) {
		pg_git_fail(err, PG_EIO, rc, "epoch %d: resolve HEAD", epoch);
		goto out;
	}
	rc = git_reference_name_to_id(head, repo, "refs/heads/master");
	if (rc == 0)
		goto found;
	if (rc != GIT_ENOTFOUND) {
		pg_git_fail(err, PG_EIO, rc, "epoch %d: resolve refs/heads/master", epoch);
		goto out;
	}
	rc = git_reference_iterator_glob_new(&it, repo, "refs/heads/*");
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "epoch %d: list branches", epoch);
		goto out;
	}
	while ((rc = git_reference_next(&ref, it)) == 0) {
		const git_oid *id = git_reference_target(ref);

		if (id) {
			git_oid_cpy(head, id);
			nbranches++;
		}
		git_reference_free(ref);
		ref = NULL;
	}
	if (rc != GIT_ITEROVER) {
		pg_git_fail(err, PG_EIO, rc, "epoch %d: list branches", epoch);
		goto out;
	}
	if (nbranches > 1) {
		pg_err_set(err, PG_EINVAL, "epoch %d: HEAD names no branch, there is no master, "
			   "and %zu other branches: which one is the archive?", epoch, nbranches);
		goto out;
	}
	if (nbranches == 0) {
		ret = 0;
		goto out;
	}
found:
	*found = true;
	ret = 0;
out:
	git_reference_iterator_free(it);
	return ret;
}

/* public-inbox strips this itself: s/\A[\r\n]*From [^\r\n]*\r?\n//s, for
 * old imports that stored the mbox separator line in the blob. */
static void strip_mbox_from(const char **data, size_t *size)
{
	const char *p = *data, *end = *data + *size;

	while (p < end && (*p == '\r' || *p == '\n'))
		p++;
	if ((size_t)(end - p) < 5 || memcmp(p, "From ", 5) != 0)
		return;
	for (p += 5; p < end && *p != '\r' && *p != '\n'; p++)
		;
	if (p < end && *p == '\r')
		p++;
	if (p >= end || *p != '\n')
		return;
	p++;
	*data = p;
	*size = (size_t)(end - p);
}

struct walk {
	struct pg_inbox *ib;
	struct epoch_repo er;
	int epoch;
	pg_inbox_cb cb;
	void *arg;
	bool rescan;
};

/*
 * Make blob `id` the message of msg: read its size from the object header
 * first, so that a message over the bound is never inflated into memory.
 * *blob is set when data points into it (the caller frees it).
 */
static int load_message(struct walk *w, const char *hex, const git_oid *id,
			struct pg_inbox_msg *msg, git_blob **blob, struct pg_err *err)
{
	git_object_t type;
	size_t len;
	int rc;

	rc = git_odb_read_header(&len, &type, w->er.odb, id);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "epoch %d: commit %s: read message object",
				w->epoch, hex);
	if (type != GIT_OBJECT_BLOB)
		return pg_err_set(err, PG_EIO, "epoch %d: commit %s: message is a %s, not a blob",
				  w->epoch, hex, git_object_type2string(type));
	if (len == 0) {
		/* public-inbox-purge leaves a commit with an empty "m" in
		 * place of each purged message. */
		msg->kind = PG_INBOX_NONE;
		return 0;
	}
	msg->size = len;
	if (len > w->ib->max_size) {
		if (msg->kind == PG_INBOX_MESSAGE)
			msg->kind = PG_INBOX_TOO_BIG;
		pg_log_warn(COMP, "inbox '%s' epoch %d commit %s: %s of %zu bytes is over the "
			    "%zu-byte bound, not read", w->ib->source, w->epoch, hex,
			    msg->kind == PG_INBOX_DELETE ? "deleted message" : "message", len,
			    w->ib->max_size);
		return 0;
	}
	rc = git_blob_lookup(blob, w->er.repo, id);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "epoch %d: commit %s: read message",
				w->epoch, hex);
	msg->data = git_blob_rawcontent(*blob);
	msg->size = (size_t)git_blob_rawsize(*blob);
	strip_mbox_from(&msg->data, &msg->size);
	return 0;
}

/* A v1 message file: "xx/" then 38 hex digits (SHA-1 of the Message-ID). */
static bool is_v1_path(const char *path)
{
	if (strlen(path) != 41 || path[2] != '/')
		return false;
	for (int i = 0; i < 41; i++) {
		char c = path[i];

		if (i == 2)
			continue;
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return true;
}

/*
 * v1: the message is the file this commit adds (or changes: a v1 edit)
 * compared with its first parent; a commit removing one is a deletion.
 * One message per commit is the format; anything more is logged and the
 * first added file wins, since the cursor can only name whole commits.
 */
static int v1_change(struct walk *w, const char *hex, git_commit *commit, git_tree *tree,
		     git_oid *blob_id, struct pg_inbox_msg *msg, bool *found, struct pg_err *err)
{
	git_commit *parent = NULL;
	git_tree *ptree = NULL;
	git_diff *diff = NULL;
	const git_diff_delta *added = NULL, *removed = NULL;
	size_t nadded = 0, nremoved = 0;
	int rc, ret = -1;

	*found = false;
	if (git_commit_parentcount(commit) > 0) {
		rc = git_commit_parent(&parent, commit, 0);
		if (rc == 0)
			rc = git_commit_tree(&ptree, parent);
		if (rc < 0) {
			pg_git_fail(err, PG_EIO, rc, "epoch %d: commit %s: read parent", w->epoch, hex);
			goto out;
		}
	}
	rc = git_diff_tree_to_tree(&diff, w->er.repo, ptree, tree, NULL);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "epoch %d: commit %s: compare with parent", w->epoch, hex);
		goto out;
	}
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		switch (d->status) {
		case GIT_DELTA_ADDED:
		case GIT_DELTA_MODIFIED:
			if (!is_v1_path(d->new_file.path))
				break;
			if (!added)
				added = d;
			nadded++;
			break;
		case GIT_DELTA_DELETED:
			if (!is_v1_path(d->old_file.path))
				break;
			if (!removed)
				removed = d;
			nremoved++;
			break;
		default:
			break;
		}
	}
	if (nadded + nremoved > 1)
		pg_log_warn(COMP, "inbox '%s' commit %s: %zu messages added and %zu removed in "
			    "one commit; only the first %s is reported", w->ib->source, hex,
			    nadded, nremoved, added ? "addition" : "removal");
	if (added) {
		msg->kind = PG_INBOX_MESSAGE;
		git_oid_cpy(blob_id, &added->new_file.id);
		*found = true;
	} else if (removed) {
		msg->kind = PG_INBOX_DELETE;
		git_oid_cpy(blob_id, &removed->old_file.id);
		*found = true;
	}
	ret = 0;
out:
	git_diff_free(diff);
	git_tree_free(ptree);
	git_commit_free(parent);
	return ret;
}

/* Read one commit and hand it to the callback; returns its result. */
static int visit(struct walk *w, const git_oid *id, struct pg_err *err)
{
	char hex[GIT_OID_HEXSZ + 1];
	struct pg_inbox_msg msg;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_blob *blob = NULL;
	const git_tree_entry *te;
	git_oid blob_id;
	bool found = false;
	int rc, ret = -1;

	git_oid_tostr(hex, sizeof(hex), id);
	memset(&msg, 0, sizeof(msg));
	msg.epoch = w->epoch;
	msg.oid = hex;
	msg.kind = PG_INBOX_NONE;
	msg.rescan = w->rescan;
	rc = git_commit_lookup(&commit, w->er.repo, id);
	if (rc == 0)
		rc = git_commit_tree(&tree, commit);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "epoch %d: read commit %s", w->epoch, hex);
		goto out;
	}
	msg.time = (int64_t)git_commit_time(commit);
	/* v2: the tree has exactly one entry, "m" or "d".  Checked for v1
	 * too: a v2 epoch given as a bare repository reads right then. */
	if ((te = git_tree_entry_byname(tree, "m")) &&
	    git_tree_entry_type(te) == GIT_OBJECT_BLOB) {
		msg.kind = PG_INBOX_MESSAGE;
		git_oid_cpy(&blob_id, git_tree_entry_id(te));
		found = true;
	} else if ((te = git_tree_entry_byname(tree, "d")) &&
		   git_tree_entry_type(te) == GIT_OBJECT_BLOB) {
		msg.kind = PG_INBOX_DELETE;
		git_oid_cpy(&blob_id, git_tree_entry_id(te));
		found = true;
	} else if (w->ib->format == PG_INBOX_V1 &&
		   v1_change(w, hex, commit, tree, &blob_id, &msg, &found, err) < 0) {
		goto out;
	}
	if (found && load_message(w, hex, &blob_id, &msg, &blob, err) < 0)
		goto out;
	pg_err_clear(err);
	ret = w->cb(&msg, w->arg, err);
	if (ret < 0) {
		if (err && err->code == PG_OK)
			pg_err_set(err, PG_EIO, "callback failed");
		pg_err_prefix(err, "epoch %d: commit %s", w->epoch, hex);
	}
out:
	git_blob_free(blob);
	git_tree_free(tree);
	git_commit_free(commit);
	return ret;
}

/* Parse a cursor: NULL/"" is none; otherwise exactly 40 hex digits. */
static int parse_cursor(const char *cursor, git_oid *oid, bool *have, struct pg_err *err)
{
	*have = false;
	if (!cursor || !*cursor)
		return 0;
	if (strlen(cursor) != GIT_OID_HEXSZ ||
	    strspn(cursor, "0123456789abcdefABCDEF") != GIT_OID_HEXSZ ||
	    git_oid_fromstrn(oid, cursor, GIT_OID_HEXSZ) < 0)
		return pg_err_set(err, PG_EINVAL, "cursor '%.64s' is not a %d-hex-digit commit id",
				  cursor, GIT_OID_HEXSZ);
	*have = true;
	return 0;
}

/*
 * Is the cursor still on the epoch's history?  Sets *rewritten when it is
 * not: unknown object (purged, then pruned), not a commit, or a commit the
 * head does not descend from.
 */
static int check_cursor(struct walk *w, const git_oid *head, const git_oid *cur,
			const char *cursor, bool *rewritten, struct pg_err *err)
{
	git_commit *c = NULL;
	const char *why = NULL;
	int rc;

	*rewritten = false;
	rc = git_commit_lookup(&c, w->er.repo, cur);
	git_commit_free(c);
	if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
		why = "is not in the archive";
	} else if (rc < 0) {
		return pg_git_fail(err, PG_EIO, rc, "epoch %d: look up cursor %s", w->epoch, cursor);
	} else {
		/* A commit whose ancestors are gone (a purge racing with
		 * this walk) is as good as absent. */
		rc = git_graph_descendant_of(w->er.repo, head, cur);
		if (rc == GIT_ENOTFOUND)
			why = "is not in the archive";
		else if (rc < 0)
			return pg_git_fail(err, PG_EIO, rc, "epoch %d: is cursor %s an ancestor",
					w->epoch, cursor);
		else if (rc == 0)
			why = "is not an ancestor of the head";
	}
	if (why) {
		char hh[GIT_OID_HEXSZ + 1];

		git_oid_tostr(hh, sizeof(hh), head);
		pg_log_warn(COMP, "inbox '%s' epoch %d: cursor %s %s (head %s): history was "
			    "rewritten (public-inbox-purge/-edit); rescanning the epoch from its "
			    "first commit", w->ib->source, w->epoch, cursor, why, hh);
		git_error_clear();
		*rewritten = true;
	}
	return 0;
}

int pg_inbox_walk(struct pg_inbox *ib, int epoch, const char *cursor, pg_inbox_cb cb, void *arg,
		  struct pg_inbox_walk_result *res, struct pg_err *err)
{
	struct walk w = { .ib = ib, .epoch = epoch, .cb = cb, .arg = arg };
	git_revwalk *rw = NULL;
	git_oid head, cur, id;
	bool have_cursor, found, rewritten = false;
	int rc, ret = -1;

	/* Parsed before res is cleared: the caller may pass res->last_oid
	 * of its previous walk as the cursor. */
	rc = parse_cursor(cursor, &cur, &have_cursor, err);
	memset(res, 0, sizeof(*res));
	if (rc < 0) {
		pg_err_prefix(err, "epoch %d", epoch);
		goto out;
	}
	if (epoch < 0 || epoch > PG_INBOX_EPOCH_MAX) {
		pg_err_set(err, PG_EINVAL, "epoch %d out of range", epoch);
		goto out;
	}
	if (have_cursor)
		git_oid_tostr(res->last_oid, sizeof(res->last_oid), &cur);
	if (open_epoch(ib, epoch, &w.er, err) < 0 ||
	    resolve_head(w.er.repo, epoch, &head, &found, err) < 0)
		goto out;
	if (!found) {
		ret = 0;
		goto out;
	}
	if (have_cursor) {
		if (git_oid_equal(&head, &cur)) {
			ret = 0;
			goto out;
		}
		if (check_cursor(&w, &head, &cur, res->last_oid, &rewritten, err) < 0)
			goto out;
	}
	res->rewritten = rewritten;
	w.rescan = rewritten;
	rc = git_revwalk_new(&rw, w.er.repo);
	if (rc == 0)
		rc = git_revwalk_sorting(rw, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (rc == 0)
		rc = git_revwalk_push(rw, &head);
	if (rc == 0 && have_cursor && !rewritten)
		rc = git_revwalk_hide(rw, &cur);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "epoch %d: start walking history", epoch);
		goto out;
	}
	/* The first git_revwalk_next() reads (and sorts) the whole range,
	 * so a missing commit anywhere in it surfaces here. */
	while ((rc = git_revwalk_next(&id, rw)) == 0) {
		int cbrc = visit(&w, &id, err);

		if (cbrc < 0)
			goto out;
		git_oid_tostr(res->last_oid, sizeof(res->last_oid), &id);
		res->count++;
		if (cbrc > 0) {
			res->stopped = true;
			break;
		}
	}
	if (rc < 0 && rc != GIT_ITEROVER) {
		pg_git_fail(err, PG_EIO, rc, "epoch %d: walk history after %s", epoch,
			 *res->last_oid ? res->last_oid : "the start");
		goto out;
	}
	ret = 0;
out:
	git_revwalk_free(rw);
	close_epoch(&w.er);
	if (ret < 0)
		pg_err_prefix(err, "inbox '%s'", ib->source);
	return ret;
}

int pg_inbox_tail(struct pg_inbox *ib, const struct pg_inbox_cursor *cursors, size_t ncursors,
		  pg_inbox_cb cb, void *arg, struct pg_inbox_tail_result *res,
		  struct pg_err *err)
{
	int done = -1;

	memset(res, 0, sizeof(*res));
	res->last_epoch = -1;
	for (;;) {
		struct pg_inbox_walk_result wr;
		const char *cursor = NULL;
		int next = -1;

		/* Listed again before each epoch: one may have been added
		 * while the previous one was walked. */
		if (list_epochs(ib, err) < 0) {
			pg_err_prefix(err, "inbox '%s'", ib->source);
			return -1;
		}
		for (size_t i = 0; i < ib->nepochs; i++)
			if (ib->epochs[i] > done) {
				next = ib->epochs[i];
				break;
			}
		if (next < 0)
			return 0;
		for (size_t i = 0; i < ncursors; i++)
			if (cursors[i].epoch == next)
				cursor = cursors[i].oid;
		if (pg_inbox_walk(ib, next, cursor, cb, arg, &wr, err) < 0) {
			if (wr.count > 0) {
				res->last_epoch = next;
				memcpy(res->last_oid, wr.last_oid, sizeof(res->last_oid));
			}
			res->count += wr.count;
			return -1;
		}
		res->count += wr.count;
		res->rewrites += wr.rewritten;
		if (wr.count > 0) {
			res->last_epoch = next;
			memcpy(res->last_oid, wr.last_oid, sizeof(res->last_oid));
		}
		if (wr.stopped) {
			res->stopped = true;
			return 0;
		}
		done = next;
	}
}

/* ---- fetching ------------------------------------------------------- */

struct fetch_ctx {
	struct pg_git_progress prog;	/* first: the callbacks' payload */
	struct pg_inbox *ib;
	const char *url;
	int epoch;
	git_repository *repo;	/* the mirror being fetched into */
	bool updated;
};

/* Before each connection: the callbacks only run while data moves. */
static int deadline_passed(struct fetch_ctx *fc, struct pg_err *err)
{
	if (!pg_git_progress_expired(&fc->prog))
		return 0;
	return pg_err_set(err, PG_ETIMEOUT, "fetch: no result within %u ms",
			  fc->ib->fetch_timeout_ms);
}

static int on_update_tips(const char *refname, const git_oid *a, const git_oid *b, void *payload)
{
	struct fetch_ctx *fc = payload;
	char ah[GIT_OID_HEXSZ + 1], bh[GIT_OID_HEXSZ + 1];

	bool forced = false;

	git_oid_tostr(ah, sizeof(ah), a);
	git_oid_tostr(bh, sizeof(bh), b);
	fc->updated = true;
	/* Worth saying: the walk will rescan this epoch. */
	if (!git_oid_is_zero(a) && !git_oid_is_zero(b) && fc->repo)
		forced = git_graph_descendant_of(fc->repo, b, a) == 0;
	git_error_clear();
	pg_log_info(COMP, "fetch %s: %s %s -> %s%s", fc->url, refname,
		    git_oid_is_zero(a) ? "(new)" : ah, bh,
		    forced ? " (forced: history rewritten upstream)" : "");
	return 0;
}

/* (The _INIT macros leave fields to zero-initialisation, which
 * -Wmissing-field-initializers rejects; the _init functions do not.) */
static int fetch_callbacks(git_remote_callbacks *cbs, struct fetch_ctx *fc, struct pg_err *err)
{
	int rc = git_remote_init_callbacks(cbs, GIT_REMOTE_CALLBACKS_VERSION);

	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "initialise remote callbacks");
	cbs->transfer_progress = pg_git_on_transfer;
	cbs->sideband_progress = pg_git_on_sideband;
	cbs->update_tips = on_update_tips;
	cbs->payload = fc;
	return 0;
}

static int fetch_fail(struct fetch_ctx *fc, struct pg_err *err, int rc, const char *what)
{
	if (fc->prog.timed_out)
		return pg_err_set(err, PG_ETIMEOUT, "fetch %s: %s: no result within %u ms",
				  fc->url, what, fc->ib->fetch_timeout_ms);
	return pg_git_fail(err, PG_EIO, rc, "fetch %s: %s", fc->url, what);
}

/*
 * Does a repository answer at url?  Connects without a local repository.
 * Any failure counts as "no" (an HTTP 404 cannot be told apart from other
 * failures through libgit2 1.5's errors); *why says what happened.
 */
static int probe(struct fetch_ctx *fc, const char *url, bool *exists, char *why, size_t whylen,
		 struct pg_err *err)
{
	git_remote_callbacks cbs;
	git_remote *remote = NULL;
	const git_error *e;
	int rc, ret = -1;

	*exists = false;
	fc->url = url;
	pg_git_progress_label(&fc->prog, "fetch %s", url);
	fc->repo = NULL;
	if (deadline_passed(fc, err) < 0 || fetch_callbacks(&cbs, fc, err) < 0)
		goto out;
	rc = git_remote_create_detached(&remote, url);
	if (rc < 0) {
		pg_git_fail(err, PG_EINVAL, rc, "fetch %s: bad URL", url);
		goto out;
	}
	rc = git_remote_connect(remote, GIT_DIRECTION_FETCH, &cbs, NULL, NULL);
	if (rc == 0) {
		*exists = true;
		git_remote_disconnect(remote);
	} else if (fc->prog.timed_out) {
		fetch_fail(fc, err, rc, "connect");
		goto out;
	} else {
		e = git_error_last();
		pg_fmt_cut(why, whylen, "%s", e && e->message ? e->message : "connection failed");
		pg_log_debug(COMP, "probe %s: %s", url, why);
	}
	ret = 0;
out:
	git_remote_free(remote);
	return ret;
}

/* Open the mirror at path, creating it (bare) when missing. */
static int mirror_repo(int epoch, const char *path, struct epoch_repo *er, struct pg_err *err)
{
	int rc;

	memset(er, 0, sizeof(*er));
	er->epoch = epoch;
	rc = open_bare(&er->repo, path);
	if (rc == GIT_ENOTFOUND) {
		if (pg_mkdir_parent(path, 0755, err) < 0)
			return -1;
		rc = git_repository_init(&er->repo, path, 1);
		if (rc < 0)
			return pg_git_fail(err, PG_EIO, rc, "create mirror '%s'", path);
		pg_log_info(COMP, "created mirror %s", path);
	} else if (rc < 0) {
		return pg_git_fail(err, PG_EIO, rc, "open mirror '%s'", path);
	}
	return 0;
}

/* The mirror's "origin" remote, pointed at url (a moved source keeps its
 * mirror). */
static int origin(git_repository *repo, const char *url, git_remote **remote, struct pg_err *err)
{
	int rc;

	rc = git_remote_lookup(remote, repo, "origin");
	if (rc == GIT_ENOTFOUND) {
		rc = git_remote_create_with_fetchspec(remote, repo, "origin", url, MIRROR_REFSPEC);
		if (rc < 0)
			return pg_git_fail(err, PG_EIO, rc, "fetch %s: configure remote", url);
		return 0;
	}
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "fetch %s: read remote", url);
	if (git_remote_url(*remote) && strcmp(git_remote_url(*remote), url) == 0)
		return 0;
	git_remote_free(*remote);
	*remote = NULL;
	rc = git_remote_set_url(repo, "origin", url);
	if (rc == 0)
		rc = git_remote_lookup(remote, repo, "origin");
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "fetch %s: update remote URL", url);
	return 0;
}

/* Point HEAD at the remote's default branch, so that the walk ends where
 * the archive does even if it is not called master. */
static void follow_remote_head(git_repository *repo, git_buf *branch, const char *url)
{
	git_reference *ref = NULL;
	int rc;

	if (!branch->ptr || git_reference_lookup(&ref, repo, branch->ptr) < 0)
		return;
	git_reference_free(ref);
	rc = git_repository_set_head(repo, branch->ptr);
	if (rc < 0) {
		const git_error *e = git_error_last();

		pg_log_warn(COMP, "fetch %s: set HEAD to %s: %s", url, branch->ptr,
			    e && e->message ? e->message : "failed");
	}
}

static int fetch_epoch(struct fetch_ctx *fc, int epoch, const char *url, struct pg_err *err)
{
	git_remote_callbacks cbs;
	git_fetch_options fo;
	git_buf branch = GIT_BUF_INIT;
	git_remote *remote = NULL;
	struct epoch_repo er = { 0 };
	char path[PATH_MAX_LEN];
	int64_t t0 = pg_time_mono_ms();
	int rc, ret = -1;

	fc->url = url;
	fc->epoch = epoch;
	fc->repo = NULL;
	fc->updated = false;
	pg_git_progress_label(&fc->prog, "fetch %s", url);
	if (deadline_passed(fc, err) < 0 || epoch_path(fc->ib, epoch, path, sizeof(path), err) < 0 ||
	    mirror_repo(epoch, path, &er, err) < 0 ||
	    origin(er.repo, url, &remote, err) < 0)
		goto out;
	fc->repo = er.repo;
	if (fetch_callbacks(&cbs, fc, err) < 0)
		goto out;
	rc = git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "initialise fetch options");
		goto out;
	}
	fo.callbacks = cbs;
	fo.prune = GIT_FETCH_PRUNE;
	fo.update_fetchhead = 0;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	/* Step by step rather than git_remote_fetch(): the remote's HEAD
	 * is only known while connected. */
	rc = git_remote_connect(remote, GIT_DIRECTION_FETCH, &cbs, NULL, NULL);
	if (rc < 0) {
		fetch_fail(fc, err, rc, "connect");
		goto out;
	}
	if (git_remote_default_branch(&branch, remote) < 0)
		git_error_clear();	/* no HEAD remotely: keep ours */
	rc = git_remote_download(remote, NULL, &fo);
	if (rc < 0) {
		fetch_fail(fc, err, rc, "download");
		goto out;
	}
	rc = git_remote_update_tips(remote, &cbs, 0, GIT_REMOTE_DOWNLOAD_TAGS_NONE,
				    "perfgate: fetch");
	if (rc == 0)
		rc = git_remote_prune(remote, &cbs);
	if (rc < 0) {
		fetch_fail(fc, err, rc, "update refs");
		goto out;
	}
	follow_remote_head(er.repo, &branch, url);
	pg_log_info(COMP, "fetched %s into %s: %u objects (%zu KiB)%s in %lld ms", url, path,
		    fc->prog.last.received_objects, fc->prog.last.received_bytes / 1024,
		    fc->updated ? "" : ", already up to date",
		    (long long)(pg_time_mono_ms() - t0));
	ret = 0;
out:
	if (remote) {
		git_remote_disconnect(remote);
		git_remote_free(remote);
	}
	git_buf_dispose(&branch);
	fc->repo = NULL;
	close_epoch(&er);
	return ret;
}

static int epoch_url(const struct pg_inbox *ib, int epoch, char *out, size_t size,
		     struct pg_err *err)
{
	if (ib->format == PG_INBOX_V1)
		return path_fmt(out, size, err, "%s", ib->source);
	return path_fmt(out, size, err, "%s/git/%d.git", ib->source, epoch);
}

/* First use of an empty mirror: is the remote v2 or v1? */
static int detect_remote(struct fetch_ctx *fc, struct pg_err *err)
{
	struct pg_inbox *ib = fc->ib;
	char url[PATH_MAX_LEN], why2[512] = "", why1[512] = "";
	bool exists;

	if (path_fmt(url, sizeof(url), err, "%s/git/0.git", ib->source) < 0 ||
	    probe(fc, url, &exists, why2, sizeof(why2), err) < 0)
		return -1;
	if (exists) {
		ib->format = PG_INBOX_V2;
		return 0;
	}
	if (probe(fc, ib->source, &exists, why1, sizeof(why1), err) < 0)
		return -1;
	if (exists) {
		ib->format = PG_INBOX_V1;
		return 0;
	}
	return pg_err_set(err, PG_ENOTFOUND, "no public-inbox archive: as v2, %s: %s; as v1, %s: %s",
			  url, why2, ib->source, why1);
}

int pg_inbox_fetch(struct pg_inbox *ib, struct pg_err *err)
{
	struct fetch_ctx fc = { .ib = ib };
	char url[PATH_MAX_LEN];
	int next = 0, ret = -1;

	if (!ib->remote)
		return 0;
	pg_git_progress_start(&fc.prog, COMP, ib->fetch_timeout_ms);
	if (ib->format == PG_INBOX_UNKNOWN && detect_remote(&fc, err) < 0)
		goto out;
	if (list_epochs(ib, err) < 0)
		goto out;
	if (ib->format == PG_INBOX_V1) {
		ret = fetch_epoch(&fc, 0, ib->source, err) < 0 ? -1 : list_epochs(ib, err);
		goto out;
	}
	/* Every mirrored epoch: a purge rewrites old epochs too. */
	for (size_t i = 0; i < ib->nepochs; i++) {
		int e = ib->epochs[i];

		if (epoch_url(ib, e, url, sizeof(url), err) < 0 || fetch_epoch(&fc, e, url, err) < 0)
			goto out;
		next = e + 1;
	}
	/* Then the epochs the remote started since. */
	for (; next <= PG_INBOX_EPOCH_MAX; next++) {
		char why[512] = "";
		bool exists;

		if (epoch_url(ib, next, url, sizeof(url), err) < 0 ||
		    probe(&fc, url, &exists, why, sizeof(why), err) < 0)
			goto out;
		if (!exists)
			break;
		pg_log_info(COMP, "inbox '%s': found epoch %d", ib->source, next);
		if (fetch_epoch(&fc, next, url, err) < 0)
			goto out;
	}
	ret = list_epochs(ib, err);
out:
	if (ret < 0)
		pg_err_prefix(err, "inbox '%s'", ib->source);
	return ret;
}
