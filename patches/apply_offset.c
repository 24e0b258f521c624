/* SPDX-License-Identifier: MIT */
/*
 * The offset search after libgit2's exact apply (see apply.h): each hunk
 * is placed at the nearest line where its preimage (context and removed
 * lines) matches byte for byte, the rules of `git apply` without -C.
 *
 * libgit2's parsed hunks carry each line with its newline; a "\ No newline
 * at end of file" marker comes as a line of its own (origin '=', '<' or
 * '>') after the line it concerns, whose newline we then drop.
 */
#include "apply_int.h"
#include "gitutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "vec.h"

/* Largest file the search reads (beyond it the patch fails, naming it). */
#define OFFSET_MAX_FILE (256u << 20)

struct line {
	const char *p;
	size_t len;		/* with the newline when there is one */
};

struct lines {
	struct line *v;
	size_t n, alloc;
};

static int lines_add(struct lines *ls, const char *p, size_t len, struct pg_err *err)
{
	if (PG_GROW(ls->v, ls->alloc, ls->n + 1) < 0)
		return pg_err_set(err, PG_ENOMEM, "offset search: out of memory");
	ls->v[ls->n].p = p;
	ls->v[ls->n].len = len;
	ls->n++;
	return 0;
}

static void lines_free(struct lines *ls)
{
	free(ls->v);
	memset(ls, 0, sizeof(*ls));
}

/* Split data[0..size) into lines, each with its '\n' (the last may lack it). */
static int lines_split(struct lines *ls, const char *data, size_t size, struct pg_err *err)
{
	size_t start = 0;

	while (start < size) {
		const char *nl = memchr(data + start, '\n', size - start);
		size_t end = nl ? (size_t)(nl - data) + 1 : size;

		if (lines_add(ls, data + start, end - start, err) < 0)
			return -1;
		start = end;
	}
	return 0;
}

static void drop_newline(struct lines *ls)
{
	if (ls->n && ls->v[ls->n - 1].len && ls->v[ls->n - 1].p[ls->v[ls->n - 1].len - 1] == '\n')
		ls->v[ls->n - 1].len--;
}

/* One hunk as two line lists, and where git apply insists it matches. */
struct hunk {
	struct lines pre, post;
	size_t trailing;	/* context lines after the last change */
	bool match_beginning, match_end;
};

static void hunk_free(struct hunk *h)
{
	lines_free(&h->pre);
	lines_free(&h->post);
}

static int hunk_load(git_patch *patch, size_t idx, const git_diff_hunk *gh, size_t nlines,
		     struct hunk *h, struct pg_err *err)
{
	int rc;

	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < nlines; i++) {
		const git_diff_line *l;

		rc = git_patch_get_line_in_hunk(&l, patch, idx, i);
		if (rc < 0)
			return pg_git_fail(err, PG_EIO, rc, "offset search: read a hunk line");
		switch (l->origin) {
		case GIT_DIFF_LINE_CONTEXT:
			if (lines_add(&h->pre, l->content, l->content_len, err) < 0 ||
			    lines_add(&h->post, l->content, l->content_len, err) < 0)
				return -1;
			h->trailing++;
			break;
		case GIT_DIFF_LINE_DELETION:
			if (lines_add(&h->pre, l->content, l->content_len, err) < 0)
				return -1;
			h->trailing = 0;
			break;
		case GIT_DIFF_LINE_ADDITION:
			if (lines_add(&h->post, l->content, l->content_len, err) < 0)
				return -1;
			h->trailing = 0;
			break;
		case GIT_DIFF_LINE_CONTEXT_EOFNL:
			drop_newline(&h->pre);
			drop_newline(&h->post);
			break;
		case GIT_DIFF_LINE_DEL_EOFNL:
			drop_newline(&h->pre);
			break;
		case GIT_DIFF_LINE_ADD_EOFNL:
			drop_newline(&h->post);
			break;
		default:
			break;
		}
	}
	/* git apply: a hunk starting at line 0 or 1 is about the top of the
	 * file, one without trailing context about its end. */
	h->match_beginning = gh->old_start <= 1;
	h->match_end = h->trailing == 0;
	return 0;
}

static bool match_at(const struct lines *img, size_t pos, const struct lines *pre)
{
	if (pos + pre->n > img->n)
		return false;
	for (size_t i = 0; i < pre->n; i++) {
		const struct line *a = &img->v[pos + i], *b = &pre->v[i];

		if (a->len != b->len || memcmp(a->p, b->p, a->len) != 0)
			return false;
	}
	return true;
}

/*
 * Where the hunk's preimage matches in img at or after `lo`: the nearest
 * line to `want`, trying want, want+1, want-1, want+2... as far as the
 * file goes.  Returns the line index, or -1.
 */
static long find_pos(const struct lines *img, const struct hunk *h, size_t lo, long want)
{
	long last, back, fwd;

	if (h->pre.n > img->n || lo > img->n - h->pre.n)
		return -1;
	last = (long)(img->n - h->pre.n);
	if (h->match_beginning)
		return lo == 0 && (!h->match_end || last == 0) && match_at(img, 0, &h->pre) ? 0 : -1;
	if (h->match_end)
		return match_at(img, (size_t)last, &h->pre) ? last : -1;
	if (want < (long)lo)
		want = (long)lo;
	if (want > last)
		want = last;
	if (match_at(img, (size_t)want, &h->pre))
		return want;
	for (back = want - 1, fwd = want + 1; back >= (long)lo || fwd <= last; back--, fwd++) {
		if (fwd <= last && match_at(img, (size_t)fwd, &h->pre))
			return fwd;
		if (back >= (long)lo && match_at(img, (size_t)back, &h->pre))
			return back;
	}
	return -1;
}

/*
 * Apply the hunks of patch to data[0..size) into out.  Returns 0 (with
 * *max_shift the largest shift by absolute value), 1 when a hunk matches
 * nowhere (*bad: its 0-based index), -1 on error.
 */
static int apply_hunks(git_patch *patch, const char *data, size_t size, struct pg_buf *out,
		       long *max_shift, size_t *bad, struct pg_err *err)
{
	struct lines img = { NULL, 0, 0 };
	struct hunk h;
	size_t cursor = 0, nhunks = git_patch_num_hunks(patch);
	long carry = 0;	/* the previous hunk's shift: where to look first */
	int rc, ret = -1;

	memset(&h, 0, sizeof(h));
	*max_shift = 0;
	if (lines_split(&img, data, size, err) < 0)
		goto out;
	for (size_t k = 0; k < nhunks; k++) {
		const git_diff_hunk *gh;
		size_t nlines;
		long at, expect;

		hunk_free(&h);
		rc = git_patch_get_hunk(&gh, &nlines, patch, k);
		if (rc < 0) {
			pg_git_fail(err, PG_EIO, rc, "offset search: read hunk %zu", k + 1);
			goto out;
		}
		if (hunk_load(patch, k, gh, nlines, &h, err) < 0)
			goto out;
		/* A hunk with no preimage at all (-U0 insertion): after line
		 * old_start, where it says. */
		expect = h.pre.n == 0 ? gh->old_start : (long)gh->old_start - 1;
		if (expect < 0)
			expect = 0;
		if (h.pre.n == 0)
			at = (size_t)expect >= cursor && (size_t)expect <= img.n ? expect : -1;
		else
			at = find_pos(&img, &h, cursor, expect + carry);
		if (at < 0) {
			*bad = k;
			ret = 1;
			goto out;
		}
		carry = at - expect;
		if (labs(carry) > labs(*max_shift))
			*max_shift = carry;
		for (size_t i = cursor; i < (size_t)at; i++)
			if (pg_buf_add(out, img.v[i].p, img.v[i].len) < 0)
				goto nomem;
		for (size_t i = 0; i < h.post.n; i++)
			if (pg_buf_add(out, h.post.v[i].p, h.post.v[i].len) < 0)
				goto nomem;
		cursor = (size_t)at + h.pre.n;
	}
	for (size_t i = cursor; i < img.n; i++)
		if (pg_buf_add(out, img.v[i].p, img.v[i].len) < 0)
			goto nomem;
	ret = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "offset search: result too big or out of memory");
out:
	hunk_free(&h);
	lines_free(&img);
	return ret;
}

/* The blob at path in tree into *blob (NULL when absent), with its mode. */
static int tree_blob(git_repository *repo, git_tree *tree, const char *path, git_blob **blob,
		     git_filemode_t *mode, struct pg_err *err)
{
	git_tree_entry *e = NULL;
	int rc;

	*blob = NULL;
	rc = git_tree_entry_bypath(&e, tree, path);
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		return 0;
	}
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "look up '%s'", path);
	*mode = git_tree_entry_filemode(e);
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB) {
		git_tree_entry_free(e);
		return 0;	/* a directory or submodule: not a file here */
	}
	rc = git_blob_lookup(blob, repo, git_tree_entry_id(e));
	git_tree_entry_free(e);
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "read '%s'", path);
	return 0;
}

/* What one delta turns into. */
struct delta_out {
	bool remove_old;	/* the old path goes away (rename, delete) */
	bool write_new;		/* the new path gets `id` with `mode` */
	git_oid id;
	git_filemode_t mode;
	long shift;
};

/*
 * Apply delta idx of diff against tree base.  Returns 0 (with *o), 1 with
 * *fail, -1 on error.
 */
static int apply_delta(git_repository *repo, git_tree *base, git_diff *diff, size_t idx,
		       struct delta_out *o, struct apply_fail *fail, struct pg_err *err)
{
	const git_diff_delta *d = git_diff_get_delta(diff, idx);
	git_patch *patch = NULL;
	git_blob *blob = NULL;
	git_filemode_t old_mode = GIT_FILEMODE_BLOB;
	struct pg_buf out = PG_BUF_INIT(OFFSET_MAX_FILE);
	const char *data = "";
	size_t size = 0, bad = 0;
	int rc, ret = -1;

	memset(o, 0, sizeof(*o));
	if (!d) {
		pg_err_set(err, PG_EIO, "offset search: no delta %zu", idx);
		goto out;
	}
	if (d->flags & GIT_DIFF_FLAG_BINARY) {
		ret = apply_fail_set(fail, d->new_file.path, 0, NULL, 0, err,
				     "a binary patch applies only to its exact preimage") < 0 ? -1 : 1;
		goto out;
	}
	if (tree_blob(repo, base, d->status == GIT_DELTA_ADDED ? d->new_file.path :
		      d->old_file.path, &blob, &old_mode, err) < 0)
		goto out;
	if (d->status == GIT_DELTA_ADDED && blob) {
		ret = apply_fail_set(fail, d->new_file.path, 0, NULL, 0, err,
				     "the file to create already exists") < 0 ? -1 : 1;
		goto out;
	}
	if (d->status != GIT_DELTA_ADDED && !blob) {
		ret = apply_fail_set(fail, d->old_file.path, 0, NULL, 0, err,
				     "the file to change does not exist") < 0 ? -1 : 1;
		goto out;
	}
	if (blob) {
		if (git_blob_rawsize(blob) > OFFSET_MAX_FILE) {
			ret = apply_fail_set(fail, d->old_file.path, 0, NULL, 0, err,
					     "file larger than %u bytes", OFFSET_MAX_FILE) < 0 ? -1 : 1;
			goto out;
		}
		data = git_blob_rawcontent(blob);
		size = (size_t)git_blob_rawsize(blob);
	}
	rc = git_patch_from_diff(&patch, diff, idx);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "offset search: patch of '%s'", d->new_file.path);
		goto out;
	}
	rc = apply_hunks(patch, data, size, &out, &o->shift, &bad, err);
	if (rc < 0)
		goto out;
	if (rc > 0) {
		const git_diff_hunk *gh = NULL;
		size_t n;

		if (git_patch_get_hunk(&gh, &n, patch, bad) < 0) {
			git_error_clear();
			gh = NULL;
		}
		ret = apply_fail_set(fail, d->old_file.path ? d->old_file.path : d->new_file.path,
				     bad + 1, gh ? gh->header : NULL, gh ? gh->header_len : 0, err,
				     "its context matches at no line") < 0 ? -1 : 1;
		goto out;
	}
	if (d->status == GIT_DELTA_DELETED) {
		if (out.len) {
			ret = apply_fail_set(fail, d->old_file.path, 0, NULL, 0, err,
					     "the file to delete has lines the patch does not remove")
				< 0 ? -1 : 1;
			goto out;
		}
		o->remove_old = true;
		ret = 0;
		goto out;
	}
	rc = git_blob_create_from_buffer(&o->id, repo, out.data ? out.data : "", out.len);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "offset search: write '%s'", d->new_file.path);
		goto out;
	}
	o->write_new = true;
	o->mode = d->new_file.mode ? (git_filemode_t)d->new_file.mode : old_mode;
	o->remove_old = d->status == GIT_DELTA_RENAMED &&
			strcmp(d->old_file.path, d->new_file.path) != 0;
	ret = 0;
out:
	pg_buf_release(&out);
	git_patch_free(patch);
	git_blob_free(blob);
	return ret;
}

int apply_offset(git_repository *repo, git_tree *base, git_diff *diff, git_oid *out,
		 long *max_shift, struct apply_fail *fail, struct pg_err *err)
{
	size_t n = git_diff_num_deltas(diff), nup = 0;
	git_tree_update *up = calloc(n ? 2 * n : 1, sizeof(*up));
	int rc, ret = -1;

	*max_shift = 0;
	if (!up)
		return pg_err_set(err, PG_ENOMEM, "offset search: out of memory");
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		struct delta_out o;

		rc = apply_delta(repo, base, diff, i, &o, fail, err);
		if (rc != 0) {
			ret = rc;
			goto out;
		}
		if (labs(o.shift) > labs(*max_shift))
			*max_shift = o.shift;
		if (o.remove_old) {
			up[nup].action = GIT_TREE_UPDATE_REMOVE;
			up[nup].path = d->old_file.path;
			nup++;
		}
		if (o.write_new) {
			up[nup].action = GIT_TREE_UPDATE_UPSERT;
			up[nup].id = o.id;
			up[nup].filemode = o.mode;
			up[nup].path = d->new_file.path;
			nup++;
		}
	}
	rc = git_tree_create_updated(out, repo, base, nup, up);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "offset search: write the new tree");
		goto out;
	}
	ret = 0;
out:
	free(up);
	return ret;
}

int apply_offset_first_bad_hunk(git_repository *repo, git_tree *base, git_diff *diff,
				const char *path, size_t *hunk, const char **header,
				size_t *header_len, struct pg_err *err)
{
	size_t n = git_diff_num_deltas(diff);

	*hunk = 0;
	*header = NULL;
	*header_len = 0;
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		struct apply_fail f = { NULL, 0, NULL, NULL, false };
		struct delta_out o;
		int rc;

		if (!d || (strcmp(d->old_file.path, path) != 0 && strcmp(d->new_file.path, path) != 0))
			continue;
		rc = apply_delta(repo, base, diff, i, &o, &f, err);
		if (rc == 1 && f.hunk) {
			git_patch *patch = NULL;
			const git_diff_hunk *gh;
			size_t nl;

			/* The header from the diff itself: it outlives f. */
			if (git_patch_from_diff(&patch, diff, i) == 0 &&
			    git_patch_get_hunk(&gh, &nl, patch, f.hunk - 1) == 0) {
				*hunk = f.hunk;
				*header = gh->header;
				*header_len = gh->header_len;
			}
			git_error_clear();
			git_patch_free(patch);
		}
		apply_fail_clear(&f);
		return rc < 0 ? -1 : 0;
	}
	return 0;
}
