/* SPDX-License-Identifier: MIT */
/*
 * The patch inside a mail body, split as git mailinfo does (mailinfo.c:
 * patchbreak(), handle_commit_msg()), and the paths a diff touches, read
 * from its "diff --git" headers as git apply does.
 */
#include "mail_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Lines examined from the end of a diff for a signature: "-- ", then a
 * version or a short sign-off.  Anything longer is not a signature. */
#define SIG_LINES 12

static bool starts(const char *l, size_t n, const char *lit)
{
	size_t m = strlen(lit);

	return n >= m && !memcmp(l, lit, m);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* git mailinfo.c patchbreak(): does the commit message end before this
 * line (without its '\n')? */
static bool patchbreak(const char *l, size_t n, bool *separator)
{
	*separator = false;
	if (starts(l, n, "diff -") || starts(l, n, "Index: "))
		return true;
	if (!starts(l, n, "---"))
		return false;
	/* "--- <filename>" starts a patch without a git header */
	if (n > 4 && l[3] == ' ' && !is_space(l[4]))
		return true;
	/* "---" and white space is the manual separator */
	for (size_t i = 3; i < n; i++)
		if (!is_space(l[i]))
			return false;
	*separator = true;
	return true;
}

bool pg_mail_find_diff(const char *s, size_t n, size_t from, size_t *start)
{
	size_t pos = from, plain = SIZE_MAX;

	while (pos < n) {
		size_t e = pg_mail_eol(s, n, pos);
		size_t next = e < n ? e + 1 : n;

		if (starts(s + pos, e - pos, "diff --git ")) {
			*start = pos;
			return true;
		}
		if (plain == SIZE_MAX && starts(s + pos, e - pos, "--- ") &&
		    starts(s + next, n - next, "+++ "))
			plain = pos;
		pos = next;
	}
	if (plain == SIZE_MAX)
		return false;
	*start = plain;
	return true;
}

void pg_mail_split_body(const char *s, size_t n, struct pg_mail_split *sp)
{
	size_t pos = 0;
	bool sep = false;

	memset(sp, 0, sizeof(*sp));
	while (pos < n) {
		size_t e = pg_mail_eol(s, n, pos);

		if (patchbreak(s + pos, e - pos, &sep))
			break;
		pos = e < n ? e + 1 : n;
	}
	sp->msg_end = pos;
	if (pos >= n)
		return;
	if (sep) {
		sp->has_notes = true;
		sp->notes_start = pg_mail_next_line(s, n, pos);
		sp->has_diff = pg_mail_find_diff(s, n, sp->notes_start, &sp->diff_start);
		sp->notes_end = sp->has_diff ? sp->diff_start : n;
	} else {
		sp->has_diff = pg_mail_find_diff(s, n, pos, &sp->diff_start);
	}
}

size_t pg_mail_cut_signature(const char *s, size_t n)
{
	size_t e = n, nonblank = 0;

	for (unsigned int lines = 0; e > 0 && lines < SIG_LINES; lines++) {
		size_t le = e, ls, len;
		char c;

		if (s[le - 1] == '\n')
			le--;
		for (ls = le; ls > 0 && s[ls - 1] != '\n'; ls--)
			;
		len = le - ls;
		if (len && s[ls + len - 1] == '\r')
			len--;
		if (len == 3 && !memcmp(s + ls, "-- ", 3))
			return nonblank ? ls : n;
		if (len) {
			/* a diff line: the "-- " above would be the removal
			 * of a line "- ", not a signature */
			c = s[ls];
			if (c == ' ' || c == '+' || c == '-' || c == '\\' || c == '@' ||
			    starts(s + ls, len, "diff "))
				return n;
			nonblank++;
		}
		e = ls;
	}
	return n;
}

int pg_mail_diff_append(struct pg_buf *out, const char *s, size_t n,
			size_t start)
{
	size_t len = pg_mail_cut_signature(s + start, n - start);

	if (!len)
		return 0;
	if (pg_buf_add(out, s + start, len) < 0)
		return -1;
	if (out->data[out->len - 1] != '\n')
		return pg_buf_addch(out, '\n');
	return 0;
}

/* ---- paths --------------------------------------------------------------- */

/* The set of paths seen, as indices into the vector, so that a path named
 * by several patches (attachments, a re-sent hunk) is listed once without
 * a quadratic search. */
struct pathset {
	size_t *slot;		/* SIZE_MAX: empty */
	size_t cap;		/* power of two */
};

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int pathset_grow(struct pathset *ps, const struct pg_strvec *files)
{
	size_t cap = ps->cap ? ps->cap * 2 : 64, *slot;

	if (cap > SIZE_MAX / sizeof(*slot))
		return -1;
	slot = malloc(cap * sizeof(*slot));
	if (!slot)
		return -1;
	for (size_t i = 0; i < cap; i++)
		slot[i] = SIZE_MAX;
	for (size_t i = 0; i < files->n; i++) {
		size_t h = (size_t)hash(files->v[i], strlen(files->v[i])) & (cap - 1);

		while (slot[h] != SIZE_MAX)
			h = (h + 1) & (cap - 1);
		slot[h] = i;
	}
	free(ps->slot);
	ps->slot = slot;
	ps->cap = cap;
	return 0;
}

static int add_path(struct pathset *ps, struct pg_strvec *files,
		    const char *p, size_t n)
{
	size_t h;

	while (n && (p[n - 1] == '\r' || p[n - 1] == '\t'))
		n--;
	/* no path has a NUL byte: that is a broken mail, not a file */
	if (!n || (n == 9 && !memcmp(p, "/dev/null", 9)) || memchr(p, '\0', n))
		return 0;
	if ((files->n + 1) * 2 > ps->cap && pathset_grow(ps, files) < 0)
		return -1;
	for (h = (size_t)hash(p, n) & (ps->cap - 1); ps->slot[h] != SIZE_MAX;
	     h = (h + 1) & (ps->cap - 1)) {
		const char *f = files->v[ps->slot[h]];

		if (strlen(f) == n && !memcmp(f, p, n))
			return 0;
	}
	if (pg_strvec_pushn(files, p, n) < 0)
		return -1;
	ps->slot[h] = files->n - 1;
	return 0;
}

/* A path as written on a header line: C-quoted ("a/t\303\251st") or
 * plain.  Appends the path to b; *used is how much of s it took. */
static int read_path(struct pg_buf *b, const char *s, size_t n, bool to_space,
		     size_t *used)
{
	size_t i;

	if (!n || s[0] != '"') {
		for (i = 0; i < n && !(to_space && s[i] == ' '); i++)
			;
		*used = i;
		return pg_buf_add(b, s, i);
	}
	for (i = 1; i < n && s[i] != '"'; i++) {
		char c = s[i];

		if (c == '\\' && i + 1 < n) {
			c = s[++i];
			switch (c) {
			case 'a': c = '\a'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'v': c = '\v'; break;
			default:
				if (c >= '0' && c <= '3' && i + 2 < n &&
				    s[i + 1] >= '0' && s[i + 1] <= '7' &&
				    s[i + 2] >= '0' && s[i + 2] <= '7') {
					c = (char)((c - '0') << 6 | (s[i + 1] - '0') << 3 |
						   (s[i + 2] - '0'));
					i += 2;
				}
				break;
			}
		}
		if (pg_buf_addch(b, c) < 0)
			return -1;
	}
	*used = i < n ? i + 1 : n;
	return 0;
}

/* Drop the "a/" (any first component) that git puts before a path. */
static const char *strip_prefix(const char *p, size_t *n)
{
	const char *slash = memchr(p, '/', *n);

	if (!slash)
		return p;
	*n -= (size_t)(slash + 1 - p);
	return slash + 1;
}

struct names {
	struct pg_buf a, b;
	bool have_a, have_b;
	bool bare;	/* from "rename from": no a/ b/ prefix to drop */
};

/*
 * The two names of "diff --git A B".  Unquoted names with spaces are
 * ambiguous on this line; git settles it by taking the split where both
 * sides name the same path, which is the case unless the file was
 * renamed or copied, and then the extended header lines name it.
 */
static int git_line_names(struct names *nm, const char *r, size_t n)
{
	size_t used;

	if (n && r[0] == '"') {
		if (read_path(&nm->a, r, n, true, &used) < 0)
			return -1;
		if (used < n && r[used] == ' ')
			used++;
		nm->have_a = true;
		nm->have_b = true;
		return read_path(&nm->b, r + used, n - used, false, &used);
	}
	{
		const char *q = NULL;

		for (size_t i = 0; i + 1 < n; i++)
			if (r[i] == ' ' && r[i + 1] == '"') {
				q = r + i;
				break;
			}
		if (q) {
			nm->have_a = nm->have_b = true;
			if (pg_buf_add(&nm->a, r, (size_t)(q - r)) < 0)
				return -1;
			return read_path(&nm->b, q + 1, n - (size_t)(q + 1 - r), false, &used);
		}
	}
	if (n % 2 == 1 && r[n / 2] == ' ') {
		size_t la = n / 2, lb = n / 2;
		const char *a = strip_prefix(r, &la);
		const char *b = strip_prefix(r + n / 2 + 1, &lb);

		if (la == lb && !memcmp(a, b, la)) {
			nm->have_a = nm->have_b = true;
			if (pg_buf_add(&nm->a, r, n / 2) < 0 ||
			    pg_buf_add(&nm->b, r + n / 2 + 1, n / 2) < 0)
				return -1;
		}
	}
	return 0;
}

/* Read the extended header lines after "diff --git" at s[pos..]; they
 * name renamed and copied files.  Stops at the first hunk or diff. */
static int ext_names(struct names *nm, const char *s, size_t n, size_t pos)
{
	struct names dash = { PG_BUF_INIT(PG_BUF_NOLIMIT), PG_BUF_INIT(PG_BUF_NOLIMIT),
			      false, false, false };
	bool renamed = false;
	int rc = -1;

	while (pos < n) {
		size_t e = pg_mail_eol(s, n, pos), len = e - pos, used;
		const char *l = s + pos;
		struct pg_buf *dst = NULL;
		size_t skip = 0;

		if (starts(l, len, "@@ ") || starts(l, len, "diff --git "))
			break;
		if (starts(l, len, "rename from ") || starts(l, len, "copy from ")) {
			skip = l[0] == 'r' ? 12 : 10;
			dst = &nm->a;
		} else if (starts(l, len, "rename to ") || starts(l, len, "copy to ")) {
			skip = l[0] == 'r' ? 10 : 8;
			dst = &nm->b;
		}
		if (dst) {
			if (!renamed) {
				pg_buf_reset(&nm->a);
				pg_buf_reset(&nm->b);
				nm->have_a = nm->have_b = true;
				nm->bare = true;
				renamed = true;
			}
			pg_buf_reset(dst);
			if (read_path(dst, l + skip, len - skip, false, &used) < 0)
				goto out;
		} else if (starts(l, len, "--- ") || starts(l, len, "+++ ")) {
			struct pg_buf *d = l[0] == '-' ? &dash.a : &dash.b;

			pg_buf_reset(d);
			if (read_path(d, l + 4, len - 4, false, &used) < 0)
				goto out;
			if (l[0] == '-')
				dash.have_a = true;
			else
				dash.have_b = true;
		}
		pos = e < n ? e + 1 : n;
	}
	if (!renamed && (dash.have_a || dash.have_b)) {
		/* "--- a/x" "+++ b/y": used when the git line was ambiguous */
		if (!nm->have_a && !nm->have_b) {
			struct pg_buf t;

			t = nm->a;
			nm->a = dash.a;
			dash.a = t;
			t = nm->b;
			nm->b = dash.b;
			dash.b = t;
			nm->have_a = dash.have_a;
			nm->have_b = dash.have_b;
		}
	}
	rc = 0;
out:
	pg_buf_release(&dash.a);
	pg_buf_release(&dash.b);
	return rc;
}

static int add_name(struct pathset *ps, struct pg_strvec *files,
		    const struct pg_buf *b, bool bare)
{
	size_t n = b->len;
	const char *p;

	if (!n)
		return 0;
	if (n == 9 && !memcmp(b->data, "/dev/null", 9))
		return 0;
	p = bare ? b->data : strip_prefix(b->data, &n);
	return add_path(ps, files, p, n);
}

int pg_mail_diff_files(const char *s, size_t n, struct pg_strvec *files)
{
	struct pathset ps = { NULL, 0 };
	struct names nm = { PG_BUF_INIT(PG_BUF_NOLIMIT), PG_BUF_INIT(PG_BUF_NOLIMIT),
			    false, false, false };
	size_t pos = 0;
	int rc = -1;

	while (pos < n) {
		size_t e = pg_mail_eol(s, n, pos), len = e - pos;
		size_t next = e < n ? e + 1 : n;

		if (starts(s + pos, len, "diff --git ")) {
			const char *r = s + pos + 11;
			size_t rl = len - 11;

			while (rl && (r[rl - 1] == '\r' || r[rl - 1] == ' '))
				rl--;
			pg_buf_reset(&nm.a);
			pg_buf_reset(&nm.b);
			nm.have_a = nm.have_b = nm.bare = false;
			if (git_line_names(&nm, r, rl) < 0 || ext_names(&nm, s, n, next) < 0)
				goto out;
			if (!nm.have_a && !nm.have_b) {
				/* still ambiguous: split at " b/" as a guess */
				const char *sp = NULL;

				for (size_t i = 0; i + 3 <= rl; i++)
					if (!memcmp(r + i, " b/", 3)) {
						sp = r + i;
						break;
					}
				if (sp && (pg_buf_add(&nm.a, r, (size_t)(sp - r)) < 0 ||
					   pg_buf_add(&nm.b, sp + 1, rl - (size_t)(sp + 1 - r)) < 0))
					goto out;
			}
			if (add_name(&ps, files, &nm.a, nm.bare) < 0 ||
			    add_name(&ps, files, &nm.b, nm.bare) < 0)
				goto out;
		}
		pos = next;
	}
	rc = 0;
out:
	free(ps.slot);
	pg_buf_release(&nm.a);
	pg_buf_release(&nm.b);
	return rc;
}
