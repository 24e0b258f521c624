/* SPDX-License-Identifier: MIT */
/* Applying a series from its mbox, one commit per patch: see apply.h. */
#include "apply.h"
#include "apply_int.h"
#include "gitutil.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "log.h"
#include "mail.h"
#include "subject.h"
#include "vec.h"

#define COMP "apply"
/* Stand-in Message-ID for mails that have none: git format-patch writes
 * none without --thread, and pg_mail_parse() insists on one.  Applying
 * never looks at it. */
#define FAKE_MSGID "Message-ID: <perfgate-apply@localhost>\n"

/* ---- failure records ------------------------------------------------ */

void apply_fail_clear(struct apply_fail *f)
{
	free(f->file);
	free(f->hunk_header);
	free(f->reason);
	memset(f, 0, sizeof(*f));
}

void apply_fail_move(struct apply_fail *dst, struct apply_fail *src)
{
	apply_fail_clear(dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

int apply_fail_set(struct apply_fail *f, const char *file, size_t hunk,
		   const char *hunk_header, size_t header_len, struct pg_err *err,
		   const char *fmt, ...)
{
	char reason[1024];
	va_list ap;

	apply_fail_clear(f);
	va_start(ap, fmt);
	pg_vfmt_cut(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	/* The header without its newline. */
	while (hunk_header && header_len &&
	       (hunk_header[header_len - 1] == '\n' || hunk_header[header_len - 1] == '\r'))
		header_len--;
	f->hunk = hunk_header ? hunk : 0;
	if (!(f->reason = strdup(reason)) || (file && !(f->file = strdup(file))) ||
	    (f->hunk && !(f->hunk_header = strndup(hunk_header, header_len)))) {
		apply_fail_clear(f);
		return pg_err_set(err, PG_ENOMEM, "apply: out of memory");
	}
	return 0;
}

/* ---- reading the mbox ----------------------------------------------- */

struct collect {
	struct pg_mail *mails;		/* the patch mails */
	size_t n, alloc;
	size_t nmsg;			/* every message seen */
	size_t skipped;
	struct pg_err *err;
};

static int parse_mail(struct pg_mail *m, const char *msg, size_t len, struct pg_err *err)
{
	struct pg_err retry_err = PG_ERR_INIT;
	struct pg_buf b = PG_BUF_INIT(PG_MAIL_MAX_SIZE + sizeof(FAKE_MSGID));
	const char *body = msg;
	size_t body_len = len;
	int rc;

	if (pg_mail_parse(m, msg, len, err) == 0)
		return 0;
	if (err->code != PG_EINVAL)
		return -1;
	/* Perhaps only the Message-ID is missing: try again with one (after
	 * the "From " line, which the parser skips only at the very top). */
	if (body_len >= 5 && memcmp(body, "From ", 5) == 0) {
		const char *nl = memchr(body, '\n', body_len);

		body_len -= nl ? (size_t)(nl + 1 - body) : body_len;
		body = nl ? nl + 1 : body + len;
	}
	if (pg_buf_adds(&b, FAKE_MSGID) < 0 || pg_buf_add(&b, body, body_len) < 0) {
		pg_buf_release(&b);
		return -1;	/* err still says why the mail was refused */
	}
	rc = pg_mail_parse(m, b.data, b.len, &retry_err);
	pg_buf_release(&b);
	if (rc == 0)
		pg_err_clear(err);
	return rc;
}

static int on_message(const char *msg, size_t len, void *arg)
{
	struct collect *c = arg;
	struct pg_subject subj;
	struct pg_mail m;

	c->nmsg++;
	memset(&m, 0, sizeof(m));
	if (parse_mail(&m, msg, len, c->err) < 0) {
		pg_err_prefix(c->err, "mail %zu of the mbox", c->nmsg);
		pg_mail_free(&m);
		return -1;
	}
	pg_subject_parse(m.subject, &subj);
	if (!m.has_patch || subj.is_cover) {
		c->skipped++;
		pg_mail_free(&m);
		return 0;
	}
	if (PG_GROW(c->mails, c->alloc, c->n + 1) < 0) {
		pg_mail_free(&m);
		pg_err_set(c->err, PG_ENOMEM, "apply: out of memory");
		return -1;
	}
	c->mails[c->n++] = m;
	return 0;
}

/* The title git am gives the commit: an in-body Subject: wins. */
static char *patch_title(const struct pg_mail *m)
{
	struct pg_subject s;

	pg_subject_parse(m->inbody_subject[0] ? m->inbody_subject : m->subject, &s);
	return strdup(s.title);
}

/* ---- committing ----------------------------------------------------- */

/*
 * The zone offset of an RFC 5322 date in minutes east of UTC: its last
 * "+hhmm"/"-hhmm" token.  Zone names (GMT, EST...) and dates without a
 * zone count as UTC: only the offset's display depends on it, the instant
 * is date_ms.
 */
static int date_offset_minutes(const char *date)
{
	int off = 0;

	for (size_t i = 1; date && date[i]; i++) {
		const char *p = date + i;

		if ((*p == '+' || *p == '-') && date[i - 1] == ' ' && isdigit((unsigned char)p[1]) &&
		    isdigit((unsigned char)p[2]) && isdigit((unsigned char)p[3]) &&
		    isdigit((unsigned char)p[4]) && !isdigit((unsigned char)p[5])) {
			int h = (p[1] - '0') * 10 + (p[2] - '0'), mi = (p[3] - '0') * 10 + (p[4] - '0');

			if (h <= 23 && mi <= 59)
				off = (*p == '-' ? -1 : 1) * (h * 60 + mi);
		}
	}
	return off;
}

static int make_author(const struct pg_mail *m, git_signature **sig, struct apply_fail *fail,
		       struct pg_err *err)
{
	const char *addr = m->author_addr, *name = m->author_name[0] ? m->author_name : addr;
	int rc;

	if (!addr[0])
		return apply_fail_set(fail, NULL, 0, NULL, 0, err,
				      "the mail names no author (no From: address)") < 0 ? -1 : 1;
	if (m->flags & PG_MAIL_NO_DATE)
		rc = git_signature_now(sig, name, addr);
	else
		rc = git_signature_new(sig, name, addr, (git_time_t)(m->date_ms / 1000),
				       date_offset_minutes(pg_mail_header(m, "Date")));
	if (rc < 0) {
		const git_error *e = git_error_last();

		/* libgit2 refuses names with angle brackets or only white space. */
		rc = apply_fail_set(fail, NULL, 0, NULL, 0, err, "author '%s <%s>' is not usable: %s",
				    name, addr, e && e->message ? e->message : "libgit2 refused it");
		git_error_clear();
		return rc < 0 ? -1 : 1;
	}
	return 0;
}

/* Commit tree_id on top of HEAD (moving HEAD, attached or detached). */
static int commit_tree(git_repository *repo, const struct pg_mail *m, const char *title,
		       const git_signature *author, git_commit *parent, const git_oid *tree_id,
		       char *oid_hex, struct pg_err *err)
{
	git_signature *committer = NULL;
	git_buf msg = { NULL, 0, 0 };
	struct pg_buf raw = PG_BUF_INIT(PG_MAIL_MAX_SIZE + 4096);
	const git_commit *parents[1] = { parent };
	git_tree *tree = NULL;
	git_oid id;
	int rc, ret = -1;

	/* git am: subject, blank line, body; then stripspace. */
	if (pg_buf_adds(&raw, title) < 0 || pg_buf_adds(&raw, "\n\n") < 0 ||
	    pg_buf_add(&raw, m->message, m->message_len) < 0) {
		pg_buf_err(&raw, err, "apply: the commit message");
		goto out;
	}
	rc = git_message_prettify(&msg, raw.data, 0, '#');
	if (rc == 0)
		rc = git_signature_now(&committer, PG_APPLY_COMMITTER_NAME, PG_APPLY_COMMITTER_EMAIL);
	if (rc == 0)
		rc = git_tree_lookup(&tree, repo, tree_id);
	if (rc == 0)
		rc = git_commit_create(&id, repo, "HEAD", author, committer, NULL, msg.ptr, tree, 1,
				       parents);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "commit \"%s\"", title);
		goto out;
	}
	git_oid_tostr(oid_hex, PG_APPLY_OID_HEX + 1, &id);
	ret = 0;
out:
	git_tree_free(tree);
	git_buf_dispose(&msg);
	pg_buf_release(&raw);
	git_signature_free(committer);
	return ret;
}

/* Bring the index and working tree from HEAD's tree to tree_id, writing
 * only the files that differ (SAFE: nothing unexpected is overwritten). */
static int checkout(git_repository *repo, const git_oid *tree_id, struct pg_err *err)
{
	git_checkout_options co;
	git_tree *tree = NULL;
	int rc;

	rc = git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	if (rc == 0)
		rc = git_tree_lookup(&tree, repo, tree_id);
	if (rc == 0) {
		co.checkout_strategy = GIT_CHECKOUT_SAFE;
		rc = git_checkout_tree(repo, (git_object *)tree, &co);
	}
	git_tree_free(tree);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "check out the patched tree");
	return 0;
}

/* ---- one patch ------------------------------------------------------ */

/* Whether line[0..len) is a trailer, "Key: value" ("base-commit: ..."). */
static bool is_trailer_line(const char *line, size_t len)
{
	size_t i = 0;

	if (!len || !isalpha((unsigned char)line[0]))
		return false;
	while (i < len && (isalnum((unsigned char)line[i]) || line[i] == '-'))
		i++;
	return i < len && line[i] == ':';
}

/*
 * The length of diff[0..len) without the trailers git format-patch puts
 * after the last file ("base-commit:", "prerequisite-patch-id:" after a
 * blank line): libgit2 1.5 reads them as part of a file header when the
 * last file has no hunk (a mode change, a binary-less rename) and fails.
 * len when there is no such block.
 */
static size_t diff_without_trailers(const char *diff, size_t len)
{
	size_t end = len, start;

	/* Walk back over trailer lines and blank lines. */
	while (end > 0) {
		size_t line_end = end;

		if (diff[line_end - 1] == '\n')
			line_end--;
		for (start = line_end; start > 0 && diff[start - 1] != '\n'; start--)
			;
		if (line_end > start && !is_trailer_line(diff + start, line_end - start))
			break;
		end = start;
	}
	/* Only a block that starts after a blank line: a trailer-shaped
	 * line right after a diff line belongs to the diff. */
	while (end < len && diff[end] == '\n')
		end++;
	if (end == len || end < 2 || diff[end - 1] != '\n' || diff[end - 2] != '\n')
		return len;
	return end - 1;
}

/*
 * libgit2 1.5 keeps one string per side for these extended header lines
 * ("rename old"/"rename new" are an old spelling) and a second line of a
 * side overwrites the first's string without freeing it (found by
 * fuzz_apply).  Its header state machine lets them come again after a
 * "similarity index" line, even after "index", "---" and "+++", so a
 * file's header runs up to what ends it there: a hunk, binary data, the
 * next file or the signature.
 */
static const char *const header_side[2][3] = {
	{ "rename from", "rename old", "copy from" },
	{ "rename to", "rename new", "copy to" },
};

static bool line_starts(const char *line, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(line, prefix, k) == 0;
}

/* A line "NAME PATH" of header_side. */
static bool is_header_line(const char *line, size_t n, const char *name)
{
	size_t k = strlen(name);

	return n > k && memcmp(line, name, k) == 0 && line[k] == ' ';
}

/*
 * Whether a file header of diff[0..len) has two lines of one side of
 * header_side: then *line is the second's line number (1-based), *first
 * and *again their names.
 */
static bool header_repeats(const char *diff, size_t len, size_t *line, const char **first,
			   const char **again)
{
	const char *seen[2] = { NULL, NULL };
	bool in_header = false;
	size_t at = 0, lineno = 0;

	while (at < len) {
		const char *l = diff + at, *nl = memchr(l, '\n', len - at);
		size_t n;

		/* libgit2 reads no header line without its newline. */
		if (!nl)
			break;
		n = (size_t)(nl - l);
		at += n + 1;
		lineno++;
		if (line_starts(l, n, "diff --git ")) {
			in_header = true;
			seen[0] = seen[1] = NULL;
			continue;
		}
		if (!in_header)
			continue;
		if (line_starts(l, n, "@@ -") || line_starts(l, n, "GIT binary patch") ||
		    line_starts(l, n, "Binary files ") || line_starts(l, n, "-- ")) {
			in_header = false;
			continue;
		}
		for (size_t side = 0; side < 2; side++) {
			for (size_t i = 0; i < sizeof(header_side[side]) / sizeof(header_side[side][0]);
			     i++) {
				if (!is_header_line(l, n, header_side[side][i]))
					continue;
				if (seen[side]) {
					*line = lineno;
					*first = seen[side];
					*again = header_side[side][i];
					return true;
				}
				seen[side] = header_side[side][i];
			}
		}
	}
	return false;
}

static int parse_diff(git_diff **diff, const struct pg_mail *m, struct apply_fail *fail,
		      struct pg_err *err)
{
	size_t len = m->diff_len, trimmed = diff_without_trailers(m->diff, m->diff_len);
	const char *nul = memchr(m->diff, '\0', len);
	char why[512];
	size_t line = 1;
	int rc;

	/* libgit2 1.5 reads such a line past its end when it matches the
	 * hunk (found by fuzz_apply); no text diff git makes has one. */
	if (nul) {
		for (const char *p = m->diff; p < nul; p++)
			line += *p == '\n';
		return apply_fail_set(fail, NULL, 0, NULL, 0, err,
				      "the diff has a NUL byte (line %zu of the diff)", line) < 0
			       ? -1 : 1;
	}
	{
		const char *first, *again;

		if (header_repeats(m->diff, len, &line, &first, &again)) {
			rc = strcmp(first, again) == 0
				? apply_fail_set(fail, NULL, 0, NULL, 0, err,
						 "the diff's header repeats '%s' (line %zu of the diff)",
						 again, line)
				: apply_fail_set(fail, NULL, 0, NULL, 0, err,
						 "the diff's header has '%s' after '%s' (line %zu of the diff)",
						 again, first, line);
			return rc < 0 ? -1 : 1;
		}
	}
	rc = git_diff_from_buffer(diff, m->diff, len);
	if (rc == 0)
		return 0;
	{
		const git_error *e = git_error_last();

		pg_fmt_cut(why, sizeof(why), "%s", e && e->message ? e->message : "libgit2 failed");
		git_error_clear();
	}
	if (trimmed < len && git_diff_from_buffer(diff, m->diff, trimmed) == 0)
		return 0;
	git_error_clear();
	return apply_fail_set(fail, NULL, 0, NULL, 0, err, "the diff does not parse: %s", why)
		< 0 ? -1 : 1;
}

static int head_commit(git_repository *repo, git_commit **commit, git_tree **tree,
		       struct pg_err *err)
{
	git_object *obj = NULL;
	int rc = git_revparse_single(&obj, repo, "HEAD^{commit}");

	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "apply: no commit checked out (HEAD)");
	*commit = (git_commit *)obj;
	rc = git_commit_tree(tree, *commit);
	if (rc < 0) {
		git_commit_free(*commit);
		*commit = NULL;
		return pg_git_fail(err, PG_EIO, rc, "apply: tree of HEAD");
	}
	return 0;
}

/*
 * The exact apply failed with exact_why, then the offset search with
 * *ofail, then the 3-way with *tfail: say which file and hunk, and why.
 */
static int explain(git_repository *repo, git_tree *head, git_diff *diff, const char *exact_why,
		   struct apply_fail *ofail, struct apply_fail *tfail, struct apply_fail *out,
		   struct pg_err *err)
{
	const char *header = NULL;
	size_t hunk = 0, header_len = 0;

	/* A 3-way conflict names the file; the hunk is the first of that
	 * file that matches nowhere (when the conflict is in one that does
	 * match, only the file is known). */
	if (tfail->conflict && tfail->file &&
	    (!ofail->file || strcmp(tfail->file, ofail->file) != 0)) {
		if (apply_offset_first_bad_hunk(repo, head, diff, tfail->file, &hunk, &header,
						&header_len, err) < 0)
			return -1;
		return apply_fail_set(out, tfail->file, hunk, header, header_len, err, "%s",
				      tfail->reason);
	}
	if (ofail->file || ofail->reason) {
		return apply_fail_set(out, ofail->file, ofail->hunk, ofail->hunk_header,
				      ofail->hunk_header ? strlen(ofail->hunk_header) : 0, err,
				      "%s; %s", ofail->reason, tfail->reason ? tfail->reason :
				      "no 3-way attempted");
	}
	return apply_fail_set(out, NULL, 0, NULL, 0, err, "%s; %s", exact_why,
			      tfail->reason ? tfail->reason : "no 3-way attempted");
}

/* One pg_apply_mbox_opts() call: its limits and what its patches did. */
struct series {
	struct pg_apply_limits lim;	/* every field set */
	struct pg_apply_usage *usage;	/* the running count, earlier calls' too */
	struct apply_links links;	/* made by the patches committed */
	size_t index, n;		/* this patch (1-based), of n */
};

/* Apply patch m (s->index of s->n): 0 committed (with what it wrote in
 * *adds) or already applied (rp->method PG_APPLY_ALREADY: nothing
 * written, no commit), 1 failed (*fail), -1 error. */
static int apply_one(git_repository *repo, const struct pg_mail *m, struct pg_apply_patch *rp,
		     struct series *s, struct pg_apply_usage *adds, struct apply_fail *fail,
		     struct pg_err *err)
{
	struct apply_fail ofail = { NULL, 0, NULL, NULL, false };
	struct apply_fail tfail = { NULL, 0, NULL, NULL, false };
	git_signature *author = NULL;
	git_commit *parent = NULL;
	git_tree *head = NULL;
	git_diff *diff = NULL;
	git_index *post = NULL;
	git_oid tree_id;
	char exact_why[512];
	long shift = 0;
	int rc, ret = -1;

	/* Before anything changes: a patch without a usable author fails
	 * with the working tree untouched. */
	rc = make_author(m, &author, fail, err);
	if (rc != 0) {
		ret = rc;
		if (rc > 0)
			rp->method = PG_APPLY_FAILED;
		goto out;
	}
	if (head_commit(repo, &parent, &head, err) < 0)
		goto out;
	rc = parse_diff(&diff, m, fail, err);
	/* Before any method reads a path or inflates a binary patch. */
	if (rc == 0)
		rc = apply_check_paths(repo, head, diff, &s->links, s->n, fail, err);
	if (rc == 0)
		rc = apply_limits_binary(diff, &s->lim, s->usage, fail, err);
	if (rc != 0) {
		ret = rc;
		if (rc > 0)
			rp->method = PG_APPLY_FAILED;
		goto out;
	}

	/* In memory like the others, so that the result is checked before
	 * the working tree sees any of it. */
	rc = git_apply_to_tree(&post, repo, head, diff, NULL);
	if (rc == 0) {
		rc = git_index_write_tree_to(&tree_id, post, repo);
		if (rc < 0) {
			pg_git_fail(err, PG_EIO, rc, "apply: write the patched tree");
			goto out;
		}
		rp->method = PG_APPLY_EXACT;
		goto land;
	}
	{
		const git_error *e = git_error_last();

		pg_fmt_cut(exact_why, sizeof(exact_why), "%s",
			 e && e->message ? e->message : "git_apply failed");
		git_error_clear();
	}

	rc = apply_offset(repo, head, diff, &tree_id, &shift, &ofail, err);
	if (rc < 0)
		goto out;
	if (rc == 0) {
		rp->method = PG_APPLY_OFFSET;
		rp->offset = shift;
		goto land;
	}
	rc = apply_3way(repo, head, diff, &tree_id, &tfail, err);
	if (rc < 0)
		goto out;
	if (rc == 0) {
		/* git am -3's "No changes -- Patch already applied." */
		if (git_oid_equal(&tree_id, git_tree_id(head))) {
			rp->method = PG_APPLY_ALREADY;
			ret = 0;
			goto out;
		}
		rp->method = PG_APPLY_3WAY;
		goto land;
	}
	rp->method = PG_APPLY_FAILED;
	ret = explain(repo, head, diff, exact_why, &ofail, &tfail, fail, err) < 0 ? -1 : 1;
	goto out;

land:
	rc = apply_limits_result(repo, head, &tree_id, &s->lim, s->usage, adds, fail, err);
	if (rc != 0) {
		ret = rc;
		if (rc > 0) {
			rp->method = PG_APPLY_FAILED;
			rp->offset = 0;
		}
		goto out;
	}
	/* Before anything lands, so that nothing fails after the commit; a
	 * stale entry would only name a patch in a message. */
	if (apply_links_add(&s->links, diff, s->index, err) < 0)
		goto out;
	if (checkout(repo, &tree_id, err) < 0)
		goto out;
	if (commit_tree(repo, m, rp->subject, author, parent, &tree_id, rp->commit, err) < 0)
		goto out;
	ret = 0;
out:
	apply_fail_clear(&tfail);
	apply_fail_clear(&ofail);
	git_index_free(post);
	git_diff_free(diff);
	git_tree_free(head);
	git_commit_free(parent);
	git_signature_free(author);
	return ret;
}

/*
 * Put index and working tree back at HEAD after a patch that failed in
 * the middle of landing (a commit refused after the checkout): only files
 * that differ are written.
 */
static void reset_to_head(git_repository *repo)
{
	git_checkout_options co;
	git_object *obj = NULL;

	if (git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION) < 0 ||
	    git_revparse_single(&obj, repo, "HEAD^{tree}") < 0) {
		git_error_clear();
		return;
	}
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_checkout_tree(repo, obj, &co) < 0) {
		const git_error *e = git_error_last();

		pg_log_warn(COMP, "reset to HEAD after a failed patch: %s",
			    e && e->message ? e->message : "failed");
		git_error_clear();
	}
	git_object_free(obj);
}

/* ---- the series ----------------------------------------------------- */

/* A limit left 0 takes its default. */
static uint64_t limit_or(uint64_t v, uint64_t def)
{
	return v ? v : def;
}

int pg_apply_mbox_opts(git_repository *repo, const char *mbox, size_t len,
		       const struct pg_apply_opts *opts, struct pg_apply_result *res,
		       struct pg_err *err)
{
	static const struct pg_apply_opts defaults = PG_APPLY_OPTS_INIT;
	struct collect c = { NULL, 0, 0, 0, 0, err };
	struct apply_fail fail = { NULL, 0, NULL, NULL, false };
	struct pg_apply_usage alone = { 0, 0 };
	struct series s;
	ssize_t nmsg;
	int rc, ret = -1;

	memset(res, 0, sizeof(*res));
	memset(&s, 0, sizeof(s));
	if (!opts)
		opts = &defaults;
	if (opts->version != PG_APPLY_OPTS_VERSION) {
		pg_err_set(err, PG_EINVAL, "apply: options version %u, this library knows %u",
			   opts->version, PG_APPLY_OPTS_VERSION);
		goto out;
	}
	s.lim.max_total_bytes = limit_or(opts->limits.max_total_bytes,
					 PG_APPLY_DEFAULT_MAX_TOTAL_BYTES);
	s.lim.max_files = limit_or(opts->limits.max_files, PG_APPLY_DEFAULT_MAX_FILES);
	s.lim.max_file_bytes = limit_or(opts->limits.max_file_bytes,
					PG_APPLY_DEFAULT_MAX_FILE_BYTES);
	s.usage = opts->usage ? opts->usage : &alone;
	nmsg = pg_mbox_split(mbox, len, opts->fmt, on_message, &c, err);
	if (nmsg < 0)
		goto out;
	res->n_skipped = c.skipped;
	if (c.n == 0) {
		pg_err_set(err, PG_EINVAL, "mbox holds no patch (%zu mail%s, none with a diff)",
			   c.nmsg, c.nmsg == 1 ? "" : "s");
		goto out;
	}
	res->patches = calloc(c.n, sizeof(*res->patches));
	if (!res->patches) {
		pg_err_set(err, PG_ENOMEM, "apply: out of memory");
		goto out;
	}
	res->n_patches = c.n;
	for (size_t i = 0; i < c.n; i++) {
		if (!(res->patches[i].subject = patch_title(&c.mails[i]))) {
			pg_err_set(err, PG_ENOMEM, "apply: out of memory");
			goto out;
		}
	}
	s.n = c.n;
	for (size_t i = 0; i < c.n; i++) {
		struct pg_apply_patch *rp = &res->patches[i];
		struct pg_apply_usage adds = { 0, 0 };

		s.index = i + 1;
		rc = apply_one(repo, &c.mails[i], rp, &s, &adds, &fail, err);
		if (rc == 0) {
			s.usage->files += adds.files;
			s.usage->total_bytes += adds.total_bytes;
			res->used.files += adds.files;
			res->used.total_bytes += adds.total_bytes;
		}
		if (rc < 0) {
			pg_err_prefix(err, "patch %zu/%zu \"%s\"", i + 1, c.n, rp->subject);
			reset_to_head(repo);
			goto out;
		}
		if (rc > 0) {
			res->failed_patch = i + 1;
			res->failed_hunk_index = fail.hunk;
			if (!(res->failed_subject = strdup(rp->subject))) {
				pg_err_set(err, PG_ENOMEM, "apply: out of memory");
				goto out;
			}
			res->failed_file = fail.file;
			res->failed_hunk = fail.hunk_header;
			res->reason = fail.reason;
			memset(&fail, 0, sizeof(fail));
			pg_log_info(COMP, "patch %zu/%zu \"%s\" does not apply: %s%s%s", i + 1, c.n,
				    rp->subject, res->failed_file ? res->failed_file : "",
				    res->failed_file ? ": " : "", res->reason);
			reset_to_head(repo);
			ret = 1;
			goto out;
		}
		if (rp->method == PG_APPLY_ALREADY) {
			res->n_already++;
			pg_log_info(COMP, "patch %zu/%zu \"%s\": no changes, already applied", i + 1,
				    c.n, rp->subject);
			continue;
		}
		res->n_applied++;
		pg_log_debug(COMP, "patch %zu/%zu \"%s\": %s -> %s", i + 1, c.n, rp->subject,
			     pg_apply_method_name(rp->method), rp->commit);
	}
	ret = 0;
out:
	apply_links_free(&s.links);
	apply_fail_clear(&fail);
	for (size_t i = 0; i < c.n; i++)
		pg_mail_free(&c.mails[i]);
	free(c.mails);
	return ret;
}

int pg_apply_mbox(git_repository *repo, const char *mbox, size_t len, enum pg_mbox_format fmt,
		  struct pg_apply_result *res, struct pg_err *err)
{
	struct pg_apply_opts opts = PG_APPLY_OPTS_INIT;

	opts.fmt = fmt;
	return pg_apply_mbox_opts(repo, mbox, len, &opts, res, err);
}

void pg_apply_result_release(struct pg_apply_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; res->patches && i < res->n_patches; i++)
		free(res->patches[i].subject);
	free(res->patches);
	free(res->failed_subject);
	free(res->failed_file);
	free(res->failed_hunk);
	free(res->reason);
	memset(res, 0, sizeof(*res));
}

const char *pg_apply_method_name(enum pg_apply_method m)
{
	switch (m) {
	case PG_APPLY_NOT_TRIED:
		return "not-tried";
	case PG_APPLY_EXACT:
		return "exact";
	case PG_APPLY_OFFSET:
		return "offset";
	case PG_APPLY_3WAY:
		return "3way";
	case PG_APPLY_FAILED:
		return "failed";
	case PG_APPLY_ALREADY:
		return "already";
	}
	return "?";
}

int pg_apply_describe(const struct pg_apply_result *res, struct pg_buf *out)
{
	size_t count[PG_APPLY_N_METHODS] = { 0 };

	if (!res->failed_patch) {
		for (size_t i = 0; i < res->n_patches; i++)
			if (res->patches[i].method < PG_APPLY_N_METHODS)
				count[res->patches[i].method]++;
		if (res->n_patches == 1 && res->n_already == 1)
			return pg_buf_adds(out, "no change: the patch is already applied");
		if (res->n_patches && res->n_already == res->n_patches)
			return pg_buf_printf(out, "no change: all %zu patches are already applied",
					     res->n_patches);
		if (pg_buf_printf(out, "applied %zu/%zu patches (exact %zu, offset %zu, 3way %zu",
				  res->n_applied + res->n_already, res->n_patches,
				  count[PG_APPLY_EXACT], count[PG_APPLY_OFFSET],
				  count[PG_APPLY_3WAY]) < 0 ||
		    (res->n_already &&
		     pg_buf_printf(out, ", already applied %zu", res->n_already) < 0))
			return -1;
		return pg_buf_addch(out, ')');
	}
	if (pg_buf_printf(out, "patch %zu/%zu \"%s\": ", res->failed_patch, res->n_patches,
			  res->failed_subject ? res->failed_subject : "") < 0)
		return -1;
	if (res->failed_file && pg_buf_printf(out, "%s", res->failed_file) < 0)
		return -1;
	if (res->failed_file && res->failed_hunk &&
	    pg_buf_printf(out, " hunk #%zu (%s)", res->failed_hunk_index, res->failed_hunk) < 0)
		return -1;
	return pg_buf_printf(out, "%s%s", res->failed_file ? ": " : "",
			     res->reason ? res->reason : "does not apply");
}
