/* SPDX-License-Identifier: MIT */
/*
 * What a patch may write (struct pg_apply_limits, see apply.h): binary
 * patches are measured before libgit2 inflates them (it inflates a whole
 * stream into memory and only then compares its length), the applied
 * tree's new blobs before anything is checked out.
 */
#include "apply.h"
#include "apply_int.h"
#include "apply_paths.h"
#include "fmt.h"
#include "gitutil.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <zlib.h>

#define KiB ((uint64_t)1024)
#define MiB ((uint64_t)1024 * 1024)
/* A delta's header: two varints of at most 10 bytes each. */
#define DELTA_HDR_MAX 20

void apply_size_str(char *out, size_t len, uint64_t v)
{
	int n;

	if (v >= MiB)
		n = v % MiB ? pg_fmt(out, len, "%.1f MiB", (double)v / (double)MiB) :
			      pg_fmt(out, len, "%" PRIu64 " MiB", v / MiB);
	else if (v >= KiB)
		n = v % KiB ? pg_fmt(out, len, "%.1f KiB", (double)v / (double)KiB) :
			      pg_fmt(out, len, "%" PRIu64 " KiB", v / KiB);
	else
		n = pg_fmt(out, len, "%" PRIu64 " bytes", v);
	if (n < 0)
		pg_fmt_cut(out, len, "?");	/* too small a buffer: say so, briefly */
}

/* "BEFORE SIZE AFTER (limit LIMIT, KEY)": the reason a limit refuses. */
static int too_big(struct apply_fail *fail, const char *path, const char *before, uint64_t size,
		   const char *after, uint64_t limit, const char *key, struct pg_err *err)
{
	char s[32], l[32];

	apply_size_str(s, sizeof(s), size);
	apply_size_str(l, sizeof(l), limit);
	return apply_fail_set(fail, path, 0, NULL, 0, err, "%s %s%s (limit %s, %s)", before, s,
			      after, l, key) < 0 ? -1 : 1;
}

/*
 * Inflate b's data without keeping it: its length must be the declared
 * inflatedlen, and the first bytes (up to hdr_len) go to hdr.  Stops as
 * soon as the stream exceeds the declared length.  Returns 0, 1 (with
 * *fail) when the stream is corrupt or lies about its length, -1 on error.
 */
static int measure(const git_diff_binary_file *b, const char *path, unsigned char *hdr,
		   size_t hdr_len, size_t *got_hdr, struct apply_fail *fail, struct pg_err *err)
{
	unsigned char chunk[64 * 1024];
	uint64_t total = 0;
	z_stream zs;
	int zrc;

	*got_hdr = 0;
	if (b->datalen > UINT_MAX)
		return apply_fail_set(fail, path, 0, NULL, 0, err,
				      "its binary patch is too big") < 0 ? -1 : 1;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK)
		return pg_err_set(err, PG_ENOMEM, "apply: zlib inflateInit failed");
	zs.next_in = (Bytef *)(uintptr_t)b->data;
	zs.avail_in = (uInt)b->datalen;	/* the mail's size bounds it */
	do {
		size_t n;

		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zrc = inflate(&zs, Z_NO_FLUSH);
		n = sizeof(chunk) - zs.avail_out;
		if (*got_hdr < hdr_len) {
			size_t k = n < hdr_len - *got_hdr ? n : hdr_len - *got_hdr;

			memcpy(hdr + *got_hdr, chunk, k);
			*got_hdr += k;
		}
		total += n;
		if (total > b->inflatedlen)
			break;
	} while (zrc == Z_OK);
	inflateEnd(&zs);
	if (total > b->inflatedlen || (zrc == Z_STREAM_END && total != b->inflatedlen))
		return apply_fail_set(fail, path, 0, NULL, 0, err,
				      "its binary patch does not inflate to the %zu bytes it declares",
				      b->inflatedlen) < 0 ? -1 : 1;
	if (zrc != Z_STREAM_END)
		return apply_fail_set(fail, path, 0, NULL, 0, err,
				      "its binary patch does not inflate (zlib: %s)",
				      zs.msg ? zs.msg : zrc == Z_BUF_ERROR ? "truncated" : "corrupt")
			< 0 ? -1 : 1;
	return 0;
}

/* git's delta header varint (7 bits a byte, least significant first). */
static bool delta_varint(const unsigned char *p, size_t len, size_t *pos, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*pos < len && shift < 64) {
		unsigned char c = p[(*pos)++];

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
		shift += 7;
	}
	return false;
}

struct bin_check {
	const struct pg_apply_limits *lim;
	uint64_t planned;		/* bytes of the new files so far */
	struct apply_fail *fail;
	struct pg_err *err;
	int rc;				/* 1 or -1 once the walk stopped */
};

/* One side of a binary patch (side "new": what the file becomes; "old":
 * the preimage libgit2 rebuilds to check the result).  *size gets the
 * size of the file the side makes. */
static int check_side(struct bin_check *c, const git_diff_binary_file *b, const char *path,
		      bool new_side, uint64_t *size)
{
	const struct pg_apply_limits *lim = c->lim;
	unsigned char hdr[DELTA_HDR_MAX];
	uint64_t base = 0;
	size_t got = 0, pos = 0;
	int rc;

	*size = 0;
	if (b->type == GIT_DIFF_BINARY_NONE || b->datalen == 0)
		return 0;
	if (b->type == GIT_DIFF_BINARY_LITERAL && b->inflatedlen > lim->max_file_bytes)
		return too_big(c->fail, path, new_side ? "writes a" : "has a binary preimage of",
			       b->inflatedlen, new_side ? " file" : "", lim->max_file_bytes,
			       PG_APPLY_KEY_MAX_FILE, c->err);
	if (b->type == GIT_DIFF_BINARY_DELTA && b->inflatedlen > lim->max_file_bytes)
		return too_big(c->fail, path, "carries a binary delta of", b->inflatedlen, "",
			       lim->max_file_bytes, PG_APPLY_KEY_MAX_FILE, c->err);
	rc = measure(b, path, hdr, sizeof(hdr), &got, c->fail, c->err);
	if (rc != 0)
		return rc;
	if (b->type == GIT_DIFF_BINARY_LITERAL) {
		*size = b->inflatedlen;
		return 0;
	}
	if (!delta_varint(hdr, got, &pos, &base) || !delta_varint(hdr, got, &pos, size))
		return apply_fail_set(c->fail, path, 0, NULL, 0, c->err,
				      "its binary delta has no header") < 0 ? -1 : 1;
	if (*size > lim->max_file_bytes)
		return too_big(c->fail, path, new_side ? "writes a" : "has a binary preimage of",
			       *size, new_side ? " file" : "", lim->max_file_bytes,
			       PG_APPLY_KEY_MAX_FILE, c->err);
	return 0;
}

static int on_binary(const git_diff_delta *d, const git_diff_binary *bin, void *payload)
{
	struct bin_check *c = payload;
	const char *path = d->new_file.path ? d->new_file.path : d->old_file.path;
	uint64_t size, ignored;

	c->rc = check_side(c, &bin->new_file, path, true, &size);
	if (c->rc == 0)
		c->rc = check_side(c, &bin->old_file, path, false, &ignored);
	c->planned += size;
	return c->rc ? -1 : 0;
}

/* "writes SIZE, TOTAL with the patches before (limit ...)". */
static int total_too_big(struct apply_fail *fail, uint64_t adds, uint64_t used,
			 uint64_t limit, struct pg_err *err)
{
	char a[32], t[32], l[32];

	apply_size_str(a, sizeof(a), adds);
	apply_size_str(t, sizeof(t), used + adds);
	apply_size_str(l, sizeof(l), limit);
	return apply_fail_set(fail, NULL, 0, NULL, 0, err,
			      "writes %s, %s with the patches before (limit %s, %s)", a, t, l,
			      PG_APPLY_KEY_MAX_TOTAL) < 0 ? -1 : 1;
}

int apply_limits_binary(git_diff *diff, const struct pg_apply_limits *lim,
			const struct pg_apply_usage *used, struct apply_fail *fail,
			struct pg_err *err)
{
	struct bin_check c = { lim, 0, fail, err, 0 };
	int rc = git_diff_foreach(diff, NULL, on_binary, NULL, NULL, &c);

	if (c.rc != 0) {
		git_error_clear();
		return c.rc;
	}
	if (rc < 0)
		return pg_git_fail(err, PG_EIO, rc, "apply: read the binary patches");
	if (used->total_bytes + c.planned > lim->max_total_bytes)
		return total_too_big(fail, c.planned, used->total_bytes, lim->max_total_bytes, err);
	return 0;
}

int apply_limits_result(git_repository *repo, git_tree *head, const git_oid *tree_id,
			const struct pg_apply_limits *lim, const struct pg_apply_usage *used,
			struct pg_apply_usage *adds, struct apply_fail *fail, struct pg_err *err)
{
	git_diff_options o;
	git_diff *diff = NULL;
	git_tree *tree = NULL;
	git_odb *odb = NULL;
	size_t n;
	int rc, ret = -1;

	memset(adds, 0, sizeof(*adds));
	rc = git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	if (rc == 0)
		rc = git_tree_lookup(&tree, repo, tree_id);
	if (rc == 0)
		rc = git_repository_odb(&odb, repo);
	/* The changes as the checkout sees them: ids only, no content read. */
	if (rc == 0)
		rc = git_diff_tree_to_tree(&diff, repo, head, tree, &o);
	if (rc < 0) {
		pg_git_fail(err, PG_EIO, rc, "apply: compare the patched tree with HEAD");
		goto out;
	}
	n = git_diff_num_deltas(diff);
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *why = NULL;
		git_object_t type;
		size_t size = 0;

		if (!d || d->status == GIT_DELTA_DELETED)
			continue;
		/* A merge may carry the change to another path: the rules
		 * hold for what is written, whatever its origin. */
		if (!pg_apply_path_ok(d->new_file.path, strlen(d->new_file.path), &why)) {
			ret = apply_fail_set(fail, d->new_file.path, 0, NULL, 0, err, "%s", why)
				< 0 ? -1 : 1;
			goto out;
		}
		if (d->new_file.mode != GIT_FILEMODE_COMMIT) {
			rc = git_odb_read_header(&size, &type, odb, &d->new_file.id);
			if (rc < 0) {
				pg_git_fail(err, PG_EIO, rc, "apply: size of '%s'", d->new_file.path);
				goto out;
			}
		}
		if (size > lim->max_file_bytes) {
			ret = too_big(fail, d->new_file.path, "writes a", size, " file",
				      lim->max_file_bytes, PG_APPLY_KEY_MAX_FILE, err);
			goto out;
		}
		adds->files++;
		adds->total_bytes += size;
	}
	if (used->files + adds->files > lim->max_files) {
		ret = apply_fail_set(fail, NULL, 0, NULL, 0, err,
				     "creates or modifies %" PRIu64 " files, %" PRIu64
				     " with the patches before (limit %" PRIu64 ", %s)",
				     adds->files, used->files + adds->files, lim->max_files,
				     PG_APPLY_KEY_MAX_FILES) < 0 ? -1 : 1;
		goto out;
	}
	if (used->total_bytes + adds->total_bytes > lim->max_total_bytes) {
		ret = total_too_big(fail, adds->total_bytes, used->total_bytes,
				    lim->max_total_bytes, err);
		goto out;
	}
	ret = 0;
out:
	git_diff_free(diff);
	git_odb_free(odb);
	git_tree_free(tree);
	return ret;
}
