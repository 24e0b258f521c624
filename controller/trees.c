/* SPDX-License-Identifier: MIT */
/* Tree mirrors with libgit2: see trees.h. */
#include "trees.h"
#include "gitutil.h"

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "fmt.h"
#include "fsutil.h"
#include "inbox.h"
#include "log.h"
#include "text.h"
#include "timeutil.h"

#define COMP "trees"
#define MIRROR_REFSPEC "+refs/heads/*:refs/heads/*"

int trees_mirror_path(const char *mirror_root, const char *name, char *out, size_t outlen,
		      struct pg_err *err)
{
	int n = snprintf(out, outlen, "%s/%s.git", mirror_root, name);

	if (n < 0 || (size_t)n >= outlen)
		return pg_err_set(err, PG_EINVAL, "mirror path of tree '%s' under '%.64s' is too long",
				  name, mirror_root);
	return 0;
}

/* Open a bare repository exactly at path: no search upwards, which could
 * find some unrelated repository around the mirror root. */
static int open_mirror(git_repository **repo, const char *path, struct pg_err *err)
{
	int rc;

	if (pg_git_global_init(err) < 0)
		return -1;
	rc = git_repository_open_ext(repo, path,
				     GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "open mirror '%s'", path);
	return 0;
}

bool trees_oid_valid(const char *s)
{
	size_t i;

	for (i = 0; i < TREES_OID_HEX; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return s[i] == '\0';
}

static int parse_oid(git_oid *oid, const char *hex, struct pg_err *err)
{
	char lower[TREES_OID_HEX + 1];
	int rc;

	if (!trees_oid_valid(hex))
		return pg_err_set(err, PG_EINVAL, "'%.48s' is not a full commit id (40 hex digits)",
				  hex);
	for (size_t i = 0; i <= TREES_OID_HEX; i++)
		lower[i] = (char)tolower((unsigned char)hex[i]);
	rc = git_oid_fromstr(oid, lower);
	if (rc < 0)
		return pg_git_fail(err, PG_EINVAL, rc, "commit id '%s'", hex);
	return 0;
}

/* ---- sync ------------------------------------------------------------ */

struct sync_ctx {
	struct pg_git_progress prog;	/* first: the callbacks' payload */
	const char *name;
	unsigned int updated;
};

static int on_update_tips(const char *refname, const git_oid *a, const git_oid *b, void *payload)
{
	struct sync_ctx *sc = payload;
	char ah[GIT_OID_HEXSZ + 1], bh[GIT_OID_HEXSZ + 1];

	git_oid_tostr(ah, sizeof(ah), a);
	git_oid_tostr(bh, sizeof(bh), b);
	sc->updated++;
	if (git_oid_is_zero(b))
		pg_log_info(COMP, "sync %s: %s deleted upstream (was %s)", sc->name, refname, ah);
	else
		pg_log_info(COMP, "sync %s: %s %s -> %s", sc->name, refname,
			    git_oid_is_zero(a) ? "(new)" : ah, bh);
	return 0;
}

/* The path of a local URL, or NULL for a network one. */
static const char *local_path(const char *url)
{
	if (strncmp(url, "file://", 7) == 0)
		url += 7;
	return url[0] == '/' ? url : NULL;
}

/*
 * Say better than libgit2 why a local source failed: a missing path comes
 * back as "unsupported URL protocol", and a repository that another user
 * owns (refused like git without a safe.directory entry) as "config value
 * 'safe.directory' was not found".  Returns -1 with err set when one of
 * these explains the failure, 0 otherwise.
 */
static int local_source_error(const struct profile_tree *t, struct pg_err *err)
{
	const char *path = local_path(t->url);
	struct stat st;

	if (!path)
		return 0;
	if (stat(path, &st) < 0)
		return pg_err_errno(err, "fetch %s", t->url);
	if (st.st_uid == geteuid())
		return 0;
	return pg_err_set(err, PG_EIO, "fetch %s: '%s' belongs to uid %u, not to uid %u "
			  "running this: libgit2 refuses it like git's safe.directory; run as "
			  "its owner or allow it with `git config --global --add "
			  "safe.directory %s`", t->url, path, (unsigned int)st.st_uid,
			  (unsigned int)geteuid(), path);
}


/*
 * An in-memory remote for url with the mirror refspec.  Not a configured
 * "origin": libgit2 1.5.1 leaks a PCRE2 match block for every config entry
 * that a lookup or creation of a named remote checks against url.*.insteadOf
 * (fixed upstream by libgit2 PR 6382, after 1.5), which a daemon syncing
 * every few minutes cannot afford; so insteadOf rewriting is skipped (the
 * profile names the URL to use), and a tree whose URL changed simply
 * fetches from the new one into the same mirror.
 */
static int make_remote(git_repository *repo, const char *url, git_remote **remote,
		       struct pg_err *err)
{
	git_remote_create_options opts;
	int rc;

	rc = git_remote_create_options_init(&opts, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "initialise remote options");
	opts.repository = repo;
	opts.name = NULL;
	opts.fetchspec = MIRROR_REFSPEC;
	opts.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
	rc = git_remote_create_with_opts(remote, url, &opts);
	if (rc < 0)
		return pg_git_fail(err, rc == GIT_EINVALIDSPEC ? PG_EINVAL : PG_EIO, rc,
				"remote %s", url);
	return 0;
}

/* HEAD of a bare mirror only matters to people looking at it with git:
 * point it at the default branch when there is one, quietly otherwise. */
static void follow_default_branch(git_repository *repo, const struct profile_tree *t)
{
	char ref[512];
	git_reference *r = NULL;
	int n = snprintf(ref, sizeof(ref), "refs/heads/%s", t->default_branch);

	if (n < 0 || (size_t)n >= sizeof(ref) || git_reference_lookup(&r, repo, ref) < 0) {
		git_error_clear();
		return;
	}
	git_reference_free(r);
	if (git_repository_set_head(repo, ref) < 0) {
		const git_error *e = git_error_last();

		pg_log_warn(COMP, "tree %s: set HEAD to %s: %s", t->name, ref,
			    e && e->message ? e->message : "failed");
	}
}

/* ---- damage --------------------------------------------------------- */

/*
 * Whether libgit2's last error says that the mirror itself is damaged:
 * a ref, HEAD, the packed-refs file, an object or a pack that cannot be
 * parsed (a disk that failed under it, as ext4 going read-only and
 * e2fsck left one).  Nothing else is: a network or remote failure, a
 * timeout, a branch that is not there, an operating-system error (a disk
 * still failing or read-only is no reason to throw a mirror away, and the
 * move would fail anyway) except the "invalid packfile" that libgit2
 * reports as one.  A missing object counts only when missing_is_damage
 * (the check of the mirror's own branch tips).  On true, libgit2's message
 * goes to msg.
 */
static bool git_damage(int rc, bool missing_is_damage, char *msg, size_t msglen)
{
	static const char *const words[] = {
		"corrupt", "invalid", "malformed", "truncated", "failed to parse", "bad ",
	};
	const git_error *e = git_error_last();
	bool bad = false;

	msg[0] = '\0';
	if (!e || !e->message)
		return false;
	switch (e->klass) {
	case GIT_ERROR_REFERENCE:
		/* "corrupted loose reference file: X", "corrupted packed
		 * references file"; not "reference 'X' not found". */
		bad = strstr(e->message, "corrupt") != NULL;
		break;
	case GIT_ERROR_ODB:
	case GIT_ERROR_OBJECT:
	case GIT_ERROR_REPOSITORY:
	case GIT_ERROR_INDEX:
	case GIT_ERROR_ZLIB:
		if (rc == GIT_ENOTFOUND) {
			bad = missing_is_damage;
			break;
		}
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]) && !bad; i++)
			bad = strstr(e->message, words[i]) != NULL;
		break;
	case GIT_ERROR_OS:
		bad = strstr(e->message, "packfile") != NULL &&
		      (strstr(e->message, "invalid") || strstr(e->message, "truncated"));
		break;
	case GIT_ERROR_CONFIG:
		/* the mirror's own config, as git init wrote it */
		bad = strstr(e->message, "failed to parse config") != NULL;
		break;
	default:
		break;
	}
	if (bad)
		pg_fmt_cut(msg, msglen, "%s", e->message);
	return bad;
}

/*
 * Read what the questions will read, from the mirror alone: HEAD, the
 * profile's branches, every ref, and the commit and top tree at each
 * branch tip.  A truncated pack
 * shows here (libgit2 checks a pack against its index when it opens it),
 * where a fetch that found nothing to add would not notice.  Returns 0;
 * or -1 with err, and *damaged set when git_damage() says so.
 */
static int check_mirror(const char *path, const struct profile_tree *t, bool *damaged, char *msg, size_t msglen,
			struct pg_err *err)
{
	git_repository *repo = NULL;
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL, *head = NULL;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	const char *what = "HEAD";
	char refname[512];
	int rc, ret = -1;

	*damaged = false;
	git_error_clear();
	rc = git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH |
				     GIT_REPOSITORY_OPEN_BARE, NULL);
	if (rc < 0) {
		what = "open";
		goto fail;
	}
	rc = git_reference_lookup(&head, repo, "HEAD");
	if (rc < 0)
		goto fail;
	/* The profile's branches first, by lookup: the iterator below skips a
	 * loose ref that does not parse. */
	for (size_t i = 0; i < t->n_branches; i++) {
		char name[512];
		int n = snprintf(name, sizeof(name), "refs/heads/%s", t->branches[i]);

		if (n < 0 || (size_t)n >= sizeof(name))
			continue;	/* not a name the questions can ask either */
		what = t->branches[i];
		rc = git_reference_lookup(&ref, repo, name);
		git_reference_free(ref);
		ref = NULL;
		if (rc == GIT_ENOTFOUND) {
			git_error_clear();	/* not upstream (yet): no damage */
			continue;
		}
		if (rc < 0)
			goto fail;
	}
	rc = git_reference_iterator_new(&it, repo);
	if (rc < 0) {
		what = "list refs";
		goto fail;
	}
	while ((rc = git_reference_next(&ref, it)) == 0) {
		git_reference *direct = NULL;

		/* A copy: the name lives in ref, freed before the message. */
		pg_fmt_cut(refname, sizeof(refname), "%s", git_reference_name(ref));
		what = refname;
		rc = git_reference_resolve(&direct, ref);
		if (rc == 0 && git_reference_is_branch(direct)) {
			rc = git_commit_lookup(&commit, repo, git_reference_target(direct));
			if (rc == 0)
				rc = git_commit_tree(&tree, commit);
		}
		git_reference_free(direct);
		git_tree_free(tree);
		git_commit_free(commit);
		git_reference_free(ref);
		tree = NULL;
		commit = NULL;
		ref = NULL;
		if (rc < 0)
			goto fail;
		what = "list refs";
	}
	if (rc != GIT_ITEROVER)
		goto fail;
	git_error_clear();
	ret = 0;
	goto out;
fail:
	*damaged = git_damage(rc, true, msg, msglen);
	pg_git_fail(err, PG_EIO, rc, "check mirror '%s': %s", path, what);
out:
	git_reference_iterator_free(it);
	git_reference_free(head);
	git_repository_free(repo);
	return ret;
}

/*
 * Move a damaged mirror out of the way, to PATH.damaged: one copy is
 * kept for a post-mortem of what the disk did, the previous one removed
 * first, so that a mirror costs at most twice its size on disk.
 */
static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((flag == FTW_DP ? rmdir(p) : unlink(p)) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

static int move_aside(const char *path, char *aside, size_t asidelen, struct pg_err *err)
{
	struct stat st;
	int n = snprintf(aside, asidelen, "%s.damaged", path);

	if (n < 0 || (size_t)n >= asidelen)
		return pg_err_set(err, PG_EINVAL, "'%s.damaged' is too long", path);
	if (lstat(aside, &st) == 0) {
		if (nftw(aside, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
			return pg_err_errno(err, "remove the older damaged copy '%s'", aside);
	} else if (errno != ENOENT) {
		return pg_err_errno(err, "'%s'", aside);
	}
	if (rename(path, aside) < 0)
		return pg_err_errno(err, "move '%s' to '%s'", path, aside);
	return 0;
}

/*
 * One fetch of t->url into the mirror at path.  On failure *damaged says
 * whether the mirror itself is to blame (git_damage()), with libgit2's
 * message in msg: a mirror that cannot be opened, or that fails
 * check_mirror() (before the fetch; after a fetch that failed with what
 * looks like damage, since a local source's damage reads the same; or
 * after a fetch that worked).
 */
static int sync_once(const char *path, const struct profile_tree *t, unsigned int timeout_ms,
		     bool *damaged, char *msg, size_t msglen, struct pg_err *err)
{
	git_repository *repo = NULL;
	git_remote *remote = NULL;
	git_fetch_options fo;
	struct sync_ctx sc;
	struct stat st;
	int rc, ret = -1;

	*damaged = false;
	msg[0] = '\0';
	memset(&sc, 0, sizeof(sc));
	pg_git_progress_start(&sc.prog, COMP, timeout_ms ? timeout_ms : TREES_SYNC_TIMEOUT_DEFAULT_MS);
	pg_git_progress_label(&sc.prog, "sync %s", t->name);
	sc.name = t->name;
	git_error_clear();
	if (pg_git_mirror_open(&repo, path, COMP, t->name, err) < 0) {
		/* only a mirror of ours: libgit2 refuses another user's */
		*damaged = stat(path, &st) == 0 && st.st_uid == geteuid() &&
			   git_damage(-1, false, msg, msglen);
		goto out;
	}
	if (make_remote(repo, t->url, &remote, err) < 0)
		goto out;
	/* (The _INIT macros leave fields to zero-initialisation, which
	 * -Wmissing-field-initializers rejects; the _init functions do not.) */
	rc = git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "initialise fetch options");
		goto out;
	}
	fo.callbacks.transfer_progress = pg_git_on_transfer;
	fo.callbacks.sideband_progress = pg_git_on_sideband;
	fo.callbacks.update_tips = on_update_tips;
	fo.callbacks.payload = &sc;
	/* Damage found before the fetch: a fetch into a mirror that is to be
	 * thrown away is wasted, and libgit2 1.5's fetch, failing on a
	 * truncated pack, loses the references it allocated.  The source
	 * must answer first, though: a damaged mirror is better than none
	 * while nothing better can be fetched. */
	if (check_mirror(path, t, damaged, msg, msglen, err) < 0 && *damaged) {
		rc = git_remote_connect(remote, GIT_DIRECTION_FETCH, &fo.callbacks, NULL, NULL);
		if (rc < 0) {
			*damaged = false;
			if (local_source_error(t, err) == 0)
				pg_git_fail(err, PG_EIO, rc, "fetch %s (to replace the damaged "
					    "mirror)", t->url);
		}
		git_remote_disconnect(remote);
		goto out;
	}
	*damaged = false;
	msg[0] = '\0';
	pg_err_clear(err);
	fo.prune = GIT_FETCH_PRUNE;
	fo.update_fetchhead = 0;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	rc = git_remote_fetch(remote, NULL, &fo, "perfgate: sync");
	if (rc < 0) {
		char first[sizeof(err->msg)];
		struct pg_err cerr = PG_ERR_INIT;

		if (sc.prog.timed_out) {
			pg_err_set(err, PG_ETIMEOUT, "fetch %s: no result within %lld ms", t->url,
				   (long long)(sc.prog.deadline_ms - sc.prog.start_ms));
			goto out;
		}
		if (local_source_error(t, err) < 0)
			goto out;
		pg_git_fail(err, PG_EIO, rc, "fetch %s", t->url);
		if (!git_damage(rc, false, first, sizeof(first)))
			goto out;
		if (check_mirror(path, t, damaged, msg, msglen, &cerr) == 0)
			pg_log_warn(COMP, "tree %s: fetch failed (%s) but the mirror %s reads "
				    "well: the damage is not in it (the source?)", t->name,
				    first, path);
		goto out;
	}
	follow_default_branch(repo, t);
	if (check_mirror(path, t, damaged, msg, msglen, err) < 0)
		goto out;
	pg_log_info(COMP, "tree %s: synced %s into %s: %u objects (%zu KiB), %u refs changed, "
		    "in %lld ms", t->name, t->url, path, sc.prog.last.received_objects,
		    sc.prog.last.received_bytes / 1024, sc.updated,
		    (long long)(pg_time_mono_ms() - sc.prog.start_ms));
	ret = 0;
out:
	git_remote_free(remote);
	git_repository_free(repo);
	return ret;
}

int trees_sync(const char *mirror_root, const struct profile_tree *t, unsigned int timeout_ms,
	       struct pg_err *err)
{
	char path[TREES_PATH_MAX], aside[TREES_PATH_MAX + 16], msg[512];
	bool damaged = false;
	int ret = -1;

	if (pg_git_global_init(err) < 0 ||
	    trees_mirror_path(mirror_root, t->name, path, sizeof(path), err) < 0)
		goto fail;
	if (sync_once(path, t, timeout_ms, &damaged, msg, sizeof(msg), err) == 0) {
		ret = 0;
		goto out;
	}
	if (!damaged)
		goto fail;
	/* A mirror is a cache of t->url (a local path is mirrored too, never
	 * read in place): fetch it again, once. */
	pg_log_warn(COMP, "tree %s: mirror %s is damaged (libgit2: %s): moving it to "
		    "%s.damaged and fetching it again from %s", t->name, path, msg, path, t->url);
	if (move_aside(path, aside, sizeof(aside), err) < 0) {
		pg_err_prefix(err, "repair damaged mirror (%s)", msg);
		goto fail;
	}
	pg_err_clear(err);
	if (sync_once(path, t, timeout_ms, &damaged, msg, sizeof(msg), err) < 0) {
		pg_err_prefix(err, "after moving the damaged mirror to %s", aside);
		goto fail;
	}
	pg_log_warn(COMP, "tree %s: mirror %s repaired (fetched again; the damaged one is %s)",
		    t->name, path, aside);
	ret = 0;
	goto out;
fail:
	pg_err_prefix(err, "sync tree '%s'", t->name);
out:
	return ret;
}

/* ---- questions ------------------------------------------------------- */

int trees_resolve_branch(const char *mirror, const char *branch,
			 char oid_hex[TREES_OID_HEX + 1], struct pg_err *err)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL, *direct = NULL;
	char name[512];
	int valid = 0, rc, ret = -1;
	int n = snprintf(name, sizeof(name), "refs/heads/%s", branch);

	oid_hex[0] = '\0';
	if (n < 0 || (size_t)n >= sizeof(name) || git_reference_name_is_valid(&valid, name) < 0 ||
	    !valid) {
		git_error_clear();
		pg_err_set(err, PG_EINVAL, "'%.64s' is not a valid branch name", branch);
		goto out;
	}
	if (open_mirror(&repo, mirror, err) < 0)
		goto out;
	rc = git_reference_lookup(&ref, repo, name);
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		pg_err_set(err, PG_ENOTFOUND, "mirror '%s' has no branch '%s'", mirror, branch);
		goto out;
	}
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "mirror '%s': read branch '%s'", mirror, branch);
		goto out;
	}
	/* A branch is a direct reference in a mirror; resolve() also copes
	 * with a symbolic one someone made by hand. */
	rc = git_reference_resolve(&direct, ref);
	if (rc < 0) {
		pg_git_fail(err, rc == GIT_ENOTFOUND ? PG_ENOTFOUND : PG_EIO, rc,
			 "mirror '%s': resolve branch '%s'", mirror, branch);
		goto out;
	}
	git_oid_tostr(oid_hex, TREES_OID_HEX + 1, git_reference_target(direct));
	ret = 0;
out:
	git_reference_free(direct);
	git_reference_free(ref);
	git_repository_free(repo);
	return ret;
}

int trees_has_commit(const char *mirror, const char *oid_hex, bool *has, struct pg_err *err)
{
	git_repository *repo = NULL;
	git_odb *odb = NULL;
	git_object_t type;
	git_oid oid;
	size_t len;
	int rc, ret = -1;

	*has = false;
	if (parse_oid(&oid, oid_hex, err) < 0 || open_mirror(&repo, mirror, err) < 0)
		goto out;
	rc = git_repository_odb(&odb, repo);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "mirror '%s': open object database", mirror);
		goto out;
	}
	/* The header is enough: the type without inflating the object. */
	rc = git_odb_read_header(&len, &type, odb, &oid);
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
	} else if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "mirror '%s': look up %s", mirror, oid_hex);
		goto out;
	} else {
		*has = type == GIT_OBJECT_COMMIT;
	}
	ret = 0;
out:
	git_odb_free(odb);
	git_repository_free(repo);
	return ret;
}

int trees_version(const char *mirror, const char *oid_hex, char out[TREES_VERSION_MAX],
		  struct pg_err *err)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	const char *data;
	size_t start = 0, end;
	git_object_size_t size;
	git_oid oid;
	int rc, ret = -1;

	out[0] = '\0';
	if (parse_oid(&oid, oid_hex, err) < 0 || open_mirror(&repo, mirror, err) < 0)
		goto out;
	rc = git_commit_lookup(&commit, repo, &oid);
	if (rc < 0) {
		pg_git_fail(err, rc == GIT_ENOTFOUND ? PG_ENOTFOUND : PG_EIO, rc,
			 "mirror '%s': commit %s", mirror, oid_hex);
		goto out;
	}
	rc = git_commit_tree(&tree, commit);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "mirror '%s': tree of %s", mirror, oid_hex);
		goto out;
	}
	rc = git_tree_entry_bypath(&entry, tree, "VERSION");
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		pg_err_set(err, PG_ENOTFOUND, "mirror '%s': commit %s has no VERSION file",
			   mirror, oid_hex);
		goto out;
	}
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "mirror '%s': VERSION at %s", mirror, oid_hex);
		goto out;
	}
	if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB ||
	    git_tree_entry_filemode(entry) == GIT_FILEMODE_LINK) {
		pg_err_set(err, PG_EINVAL, "mirror '%s': VERSION at %s is not a regular file",
			   mirror, oid_hex);
		goto out;
	}
	rc = git_blob_lookup(&blob, repo, git_tree_entry_id(entry));
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "mirror '%s': read VERSION at %s", mirror, oid_hex);
		goto out;
	}
	data = git_blob_rawcontent(blob);
	size = git_blob_rawsize(blob);
	/* The first line, trimmed; DPDK's file is one line and a newline. */
	while (start < size && (data[start] == ' ' || data[start] == '\t'))
		start++;
	for (end = start; end < size && data[end] != '\n' && data[end] != '\r'; end++)
		;
	while (end > start && (data[end - 1] == ' ' || data[end - 1] == '\t'))
		end--;
	if (end == start || end - start >= TREES_VERSION_MAX) {
		pg_err_set(err, PG_EINVAL, "mirror '%s': VERSION at %s is %s", mirror, oid_hex,
			   end == start ? "empty" : "too long for a version");
		goto out;
	}
	for (size_t i = start; i < end; i++) {
		if (data[i] < 0x21 || data[i] > 0x7e) {
			pg_err_set(err, PG_EINVAL, "mirror '%s': VERSION at %s holds a byte that is "
				   "not printable ASCII", mirror, oid_hex);
			goto out;
		}
	}
	memcpy(out, data + start, end - start);
	out[end - start] = '\0';
	ret = 0;
out:
	git_blob_free(blob);
	git_tree_entry_free(entry);
	git_tree_free(tree);
	git_commit_free(commit);
	git_repository_free(repo);
	return ret;
}

/* The oids asked for, sorted, each with the indexes that asked. */
struct fp_want {
	git_oid oid;
	size_t index;
};

static int fp_cmp(const void *a, const void *b)
{
	return git_oid_cmp(&((const struct fp_want *)a)->oid, &((const struct fp_want *)b)->oid);
}

int trees_first_parent_range(const char *mirror, const char *branch, const char *before,
			     const char *after, char (*out)[TREES_OID_HEX + 1], size_t max,
			     size_t *n, struct pg_err *err)
{
	char tip[TREES_OID_HEX + 1];
	git_repository *repo = NULL;
	git_revwalk *walk = NULL;
	git_oid oid, tip_oid, b_oid, a_oid;
	size_t depth = 0, got = 0;
	bool in = false, done = false;
	int rc, ret = -1;

	*n = 0;
	if (parse_oid(&b_oid, before, err) < 0 || parse_oid(&a_oid, after, err) < 0 ||
	    trees_resolve_branch(mirror, branch, tip, err) < 0 || parse_oid(&tip_oid, tip, err) < 0 ||
	    open_mirror(&repo, mirror, err) < 0)
		goto out;
	if ((rc = git_revwalk_new(&walk, repo)) < 0 ||
	    (rc = git_revwalk_push(walk, &tip_oid)) < 0) {
		pg_git_fail(err, PG_EIO, rc, "mirror '%s': walk branch '%s'", mirror, branch);
		goto out;
	}
	git_revwalk_simplify_first_parent(walk);
	/* Newest first: from `after` down to the commit before `before`. */
	while (!done && depth++ < TREES_RANGE_WALK_MAX &&
	       (rc = git_revwalk_next(&oid, walk)) == 0) {
		if (!in && !git_oid_cmp(&oid, &a_oid))
			in = true;
		if (!in)
			continue;
		if (!git_oid_cmp(&oid, &b_oid)) {
			done = true;
			break;
		}
		if (got == max) {
			pg_err_set(err, PG_ETOOBIG, "more than %zu commits between %.12s and %.12s "
				   "on %s", max, before, after, branch);
			goto out;
		}
		git_oid_tostr(out[got++], TREES_OID_HEX + 1, &oid);
	}
	git_error_clear();
	if (!done) {
		pg_err_set(err, PG_ENOTFOUND, in ? "%.12s is not before %.12s on the first-parent "
			   "line of %s" : "%.12s%.0s is not on the first-parent line of %s",
			   in ? before : after, after, branch);
		goto out;
	}
	/* oldest first */
	for (size_t i = 0; i < got / 2; i++) {
		char t[TREES_OID_HEX + 1];

		memcpy(t, out[i], sizeof(t));
		memcpy(out[i], out[got - 1 - i], sizeof(t));
		memcpy(out[got - 1 - i], t, sizeof(t));
	}
	*n = got;
	ret = 0;
out:
	git_revwalk_free(walk);
	git_repository_free(repo);
	return ret;
}

int trees_first_parent_positions(const char *mirror, const char *branch, const char *const *oids,
				 size_t n, size_t max_walk, int64_t *pos, struct pg_err *err)
{
	char tip[TREES_OID_HEX + 1];
	git_repository *repo = NULL;
	git_revwalk *walk = NULL;
	struct fp_want *want = NULL;
	size_t found = 0, depth = 0, left;
	git_oid oid, tip_oid;
	int rc, ret = -1;

	for (size_t i = 0; i < n; i++)
		pos[i] = -1;
	if (n == 0)
		return 0;
	want = calloc(n, sizeof(*want));
	if (!want)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (parse_oid(&want[i].oid, oids[i], err) < 0)
			goto out;
		want[i].index = i;
	}
	qsort(want, n, sizeof(*want), fp_cmp);
	for (size_t i = 0, k = 0; i < n; i = k) {
		/* count distinct commits: repeated measurements share one */
		for (k = i + 1; k < n && !git_oid_cmp(&want[k].oid, &want[i].oid); k++)
			;
		found++;
	}
	left = found;
	if (trees_resolve_branch(mirror, branch, tip, err) < 0 || parse_oid(&tip_oid, tip, err) < 0 ||
	    open_mirror(&repo, mirror, err) < 0)
		goto out;
	if ((rc = git_revwalk_new(&walk, repo)) < 0 ||
	    (rc = git_revwalk_push(walk, &tip_oid)) < 0) {
		pg_git_fail(err, PG_EIO, rc, "mirror '%s': walk branch '%s'", mirror, branch);
		goto out;
	}
	git_revwalk_simplify_first_parent(walk);
	/* Depth from the tip first; turned into positions from the oldest
	 * commit of what was walked once the walk ends. */
	while (left && depth < max_walk && (rc = git_revwalk_next(&oid, walk)) == 0) {
		struct fp_want key = { .oid = oid };
		struct fp_want *hit = bsearch(&key, want, n, sizeof(*want), fp_cmp);

		if (hit) {
			while (hit > want && !git_oid_cmp(&hit[-1].oid, &oid))
				hit--;
			for (; hit < want + n && !git_oid_cmp(&hit->oid, &oid); hit++)
				pos[hit->index] = (int64_t)depth;
			left--;
		}
		depth++;
	}
	if (left && depth < max_walk && rc != GIT_ITEROVER) {
		pg_git_fail(err, PG_EIO, rc, "mirror '%s': walk branch '%s'", mirror, branch);
		goto out;
	}
	git_error_clear();
	for (size_t i = 0; i < n; i++)
		if (pos[i] >= 0)
			pos[i] = (int64_t)depth - 1 - pos[i];
	ret = 0;
out:
	git_revwalk_free(walk);
	git_repository_free(repo);
	free(want);
	return ret;
}

/* Copy at most len - 1 bytes of s, cut at a UTF-8 character. */
static void copy_cut(char *out, size_t len, const char *s, size_t n)
{
	size_t cut;

	if (!s)
		s = "";
	if (n > len - 1)
		n = len - 1;
	cut = pg_utf8_cut(s, n);
	memcpy(out, s, cut);
	out[cut] = '\0';
}

int trees_commit_info(const char *mirror, const char *oid_hex, struct trees_commit_info *out,
		      struct pg_err *err)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	const git_signature *a;
	const char *msg;
	git_oid oid;
	int rc, ret = -1;

	memset(out, 0, sizeof(*out));
	if (parse_oid(&oid, oid_hex, err) < 0 || open_mirror(&repo, mirror, err) < 0)
		goto out;
	rc = git_commit_lookup(&commit, repo, &oid);
	if (rc < 0) {
		pg_git_fail(err, rc == GIT_ENOTFOUND ? PG_ENOTFOUND : PG_EIO, rc,
			    "mirror '%s': commit %s", mirror, oid_hex);
		goto out;
	}
	a = git_commit_author(commit);
	if (a) {
		copy_cut(out->author_name, sizeof(out->author_name), a->name,
			 a->name ? strlen(a->name) : 0);
		copy_cut(out->author_email, sizeof(out->author_email), a->email,
			 a->email ? strlen(a->email) : 0);
		out->author_time = (int64_t)a->when.time;
	}
	msg = git_commit_summary(commit);
	copy_cut(out->summary, sizeof(out->summary), msg, msg ? strlen(msg) : 0);
	ret = 0;
out:
	git_commit_free(commit);
	git_repository_free(repo);
	return ret;
}
