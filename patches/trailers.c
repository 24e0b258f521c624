/* SPDX-License-Identifier: MIT */
/*
 * Trailers of a mail body: see trailers.h for what counts where.  One pass
 * over the lines with a small state machine for the body's regions; hunks
 * are followed by their line counts so that a line inside a diff can never
 * pass for a trailer, whatever it says.
 */
#include "trailers.h"
#include "text.h"
#include "vec.h"

#include <stdlib.h>
#include <string.h>

/* The regions of a body, in the order git format-patch writes them. */
enum region {
	R_MESSAGE,	/* commit message, cover letter, reply */
	R_NOTES,	/* after "---", before the diff */
	R_DIFF,		/* between file headers and hunks */
	R_HUNK,		/* inside a hunk, counting lines */
	R_BINARY,	/* inside a "GIT binary patch" section */
	R_AFTER,	/* after the diff: base-commit and friends */
	R_END,		/* signature or unquoted original: nothing counts */
};

struct line {
	const char *s;
	size_t len;	/* without the LF and a CR before it */
};

struct parser {
	struct pg_trailers *t;
	struct pg_err *err;
	enum region region;
	uint64_t old_left, new_left;	/* lines the current hunk still has */
	bool recheck_continues;		/* last Recheck-request line ended in ',' */
	size_t deps_cap, prereq_cap, people_cap;
};

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_hspace(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* ASCII-only lowercasing, independent of the locale. */
static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool starts(const struct line *l, const char *prefix)
{
	size_t n = strlen(prefix);

	return l->len >= n && !memcmp(l->s, prefix, n);
}

static bool line_is(const struct line *l, const char *text)
{
	return l->len == strlen(text) && !memcmp(l->s, text, l->len);
}

/* Whether s[0..n) starts with the lowercase word w, ignoring ASCII case. */
static bool starts_ci(const char *s, size_t n, const char *w)
{
	size_t i, wl = strlen(w);

	if (n < wl)
		return false;
	for (i = 0; i < wl; i++)
		if (lower(s[i]) != w[i])
			return false;
	return true;
}

/*
 * If l is "<key>:<value>" with key (lowercase) matched in any case from
 * column 0, set *v and *vlen to the value without the white space around
 * it.
 */
static bool key_value(const struct line *l, const char *key, const char **v, size_t *vlen)
{
	size_t n = strlen(key), b, e;

	if (l->len <= n || l->s[n] != ':' || !starts_ci(l->s, l->len, key))
		return false;
	b = n + 1;
	e = l->len;
	while (b < e && is_hspace((unsigned char)l->s[b]))
		b++;
	while (e > b && is_hspace((unsigned char)l->s[e - 1]))
		e--;
	*v = l->s + b;
	*vlen = e - b;
	return true;
}

/* Parse s[0..n) as 1..18 decimal digits and nothing else. */
static bool parse_id(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (n == 0 || n > 18)
		return false;
	for (i = 0; i < n; i++) {
		if (!is_digit((unsigned char)s[i]))
			return false;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	*v = x;
	return true;
}

/*
 * Make room for one more element of size bytes in arr (n used, *cap
 * allocated), at most max in all.  Returns the array to use, or NULL with
 * err set (arr is then unchanged and still owned by the caller).
 */
static void *grow(void *arr, size_t *cap, size_t n, size_t size, size_t max,
		  const char *what, struct pg_err *err)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return arr;
	if (n >= max) {
		pg_err_set(err, PG_ETOOBIG, "more than %zu %s", max, what);
		return NULL;
	}
	ncap = *cap ? *cap * 2 : 4;
	if (ncap > max)
		ncap = max;
	p = pg_realloc_array(arr, ncap, size);
	if (!p) {
		pg_err_set(err, PG_ENOMEM, "out of memory for %zu %s", ncap, what);
		return NULL;
	}
	*cap = ncap;
	return p;
}

/* A Message-ID without its angle brackets: printable ASCII without
 * space, '<' or '>', with an '@', short enough for Patchwork. */
static bool valid_msgid(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= PG_TRAILERS_MSGID_MAX || !memchr(s, '@', n))
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= ' ' || c >= 0x7f || c == '<' || c == '>')
			return false;
	}
	return true;
}

static int add_dep(struct parser *ps, enum pg_dep_kind kind, uint64_t id,
		   const char *msgid, size_t n)
{
	struct pg_trailers *t = ps->t;
	struct pg_dep *d, *deps;
	size_t i;

	for (i = 0; i < t->ndeps; i++) {
		d = &t->deps[i];
		if (d->kind == kind && d->id == id && strlen(d->msgid) == n &&
		    !memcmp(d->msgid, msgid, n))
			return 0;
	}
	deps = grow(t->deps, &ps->deps_cap, t->ndeps, sizeof(*t->deps),
		    PG_TRAILERS_DEPS_MAX, "Depends-on items", ps->err);
	if (!deps)
		return -1;
	t->deps = deps;
	d = &t->deps[t->ndeps++];
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->id = id;
	memcpy(d->msgid, msgid, n);
	d->msgid[n] = '\0';
	return 0;
}

/* The first place of needle in s[0..n), or NULL. */
static const char *find(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	for (i = 0; i + k <= n; i++)
		if (!memcmp(s + i, needle, k))
			return s + i;
	return NULL;
}

/*
 * A Patchwork URL: ".../list/?series=N" (a series), ".../patch/N/" (a
 * legacy patch id) or ".../patch/<msgid>/" (the msgid percent-encoded).
 * Returns 1 when an item was added, 0 when the URL is not understood, -1
 * on error.
 */
static int take_url(struct parser *ps, const char *s, size_t n)
{
	char msgid[PG_TRAILERS_MSGID_MAX];
	const char *p, *seg, *e = s + n;
	size_t i, m = 0;
	uint64_t id;
	int hi, lo;

	p = find(s, n, "series=");
	if (p) {
		p += 7;
		for (i = 0; p + i < e && is_digit((unsigned char)p[i]); i++)
			;
		if (!parse_id(p, i, &id))
			return 0;
		return add_dep(ps, PG_DEP_SERIES, id, "", 0) < 0 ? -1 : 1;
	}
	seg = find(s, n, "/patch/");
	if (!seg)
		return 0;
	seg += 7;
	for (i = 0; seg + i < e && seg[i] != '/' && seg[i] != '?' && seg[i] != '#'; i++)
		;
	if (parse_id(seg, i, &id))
		return add_dep(ps, PG_DEP_PATCH, id, "", 0) < 0 ? -1 : 1;
	for (p = seg; p < seg + i; p++) {
		if (m + 1 >= sizeof(msgid))
			return 0;
		if (*p != '%') {
			msgid[m++] = *p;
			continue;
		}
		if (seg + i - p < 3 || (hi = pg_hexval((unsigned char)p[1])) < 0 ||
		    (lo = pg_hexval((unsigned char)p[2])) < 0)
			return 0;
		msgid[m++] = (char)(hi * 16 + lo);
		p += 2;
	}
	if (!valid_msgid(msgid, m))
		return 0;
	return add_dep(ps, PG_DEP_MSGID, 0, msgid, m) < 0 ? -1 : 1;
}

/* The items of a Depends-on value. */
static int take_depends(struct parser *ps, const char *v, size_t n)
{
	const char *p = v, *e = v + n, *tok, *gt;
	size_t len, taken = 0;
	uint64_t id;
	int r;

	while (p < e) {
		while (p < e && (is_hspace((unsigned char)*p) || *p == ','))
			p++;
		/* DPDK follows the item with its title: ("net/x: fix y"). */
		if (p == e || *p == '(' || *p == '"')
			break;
		if (*p == '<') {
			gt = memchr(p, '>', (size_t)(e - p));
			if (!gt || !valid_msgid(p + 1, (size_t)(gt - p - 1)))
				break;
			if (add_dep(ps, PG_DEP_MSGID, 0, p + 1, (size_t)(gt - p - 1)) < 0)
				return -1;
			taken++;
			p = gt + 1;
			continue;
		}
		tok = p;
		while (p < e && !is_hspace((unsigned char)*p) && *p != ',')
			p++;
		len = (size_t)(p - tok);
		if (starts_ci(tok, len, "series-") && parse_id(tok + 7, len - 7, &id)) {
			r = add_dep(ps, PG_DEP_SERIES, id, "", 0);
		} else if (starts_ci(tok, len, "patch-") && parse_id(tok + 6, len - 6, &id)) {
			r = add_dep(ps, PG_DEP_PATCH, id, "", 0);
		} else if (starts_ci(tok, len, "http://") || starts_ci(tok, len, "https://")) {
			r = take_url(ps, tok, len);
			if (r == 0)
				break;
		} else if (valid_msgid(tok, len)) {
			r = add_dep(ps, PG_DEP_MSGID, 0, tok, len);
		} else {
			break;
		}
		if (r < 0)
			return -1;
		taken++;
	}
	if (!taken)
		ps->t->malformed++;
	return 0;
}

/* The first token of v if it is a 40- or 64-digit hex object name,
 * lowercased into out[PG_TRAILERS_HASH_MAX]. */
static bool take_hash(const char *v, size_t n, char *out)
{
	size_t len = 0, i;

	while (len < n && !is_hspace((unsigned char)v[len]))
		len++;
	if (len != 40 && len != 64)
		return false;
	for (i = 0; i < len; i++) {
		if (pg_hexval((unsigned char)v[i]) < 0)
			return false;
		out[i] = lower(v[i]);
	}
	out[len] = '\0';
	return true;
}

static int take_prereq(struct parser *ps, const char *v, size_t n)
{
	struct pg_trailers *t = ps->t;
	char hash[PG_TRAILERS_HASH_MAX];
	char (*prereq)[PG_TRAILERS_HASH_MAX];
	size_t i;

	if (!take_hash(v, n, hash)) {
		t->malformed++;
		return 0;
	}
	for (i = 0; i < t->nprereq; i++)
		if (!strcmp(t->prereq[i], hash))
			return 0;
	prereq = grow(t->prereq, &ps->prereq_cap, t->nprereq, sizeof(*t->prereq),
		      PG_TRAILERS_PREREQ_MAX, "prerequisite-patch-id lines", ps->err);
	if (!prereq)
		return -1;
	t->prereq = prereq;
	memcpy(t->prereq[t->nprereq++], hash, sizeof(hash));
	return 0;
}

static void take_change_id(struct parser *ps, const char *v, size_t n)
{
	struct pg_trailers *t = ps->t;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (!is_alnum(c) && c != '.' && c != '_' && c != '-')
			break;
	}
	if (i == 0 || i < n || i >= sizeof(t->change_id)) {
		t->malformed++;
		return;
	}
	if (!t->change_id[0]) {
		memcpy(t->change_id, v, i);
		t->change_id[i] = '\0';
	}
}

static bool is_ctx_char(unsigned char c)
{
	return is_alnum(c) || c == '_' || c == '-';
}

static bool is_branch_char(unsigned char c)
{
	return is_ctx_char(c) || c == '.' || c == '/';
}

/*
 * Recheck-request items in s[0..n) (the value of the key, or a
 * continuation line), merged into t->recheck.  Sets recheck_continues when
 * the list ends with ','.
 */
static int take_recheck(struct parser *ps, const char *s, size_t n)
{
	struct pg_recheck *rc = &ps->t->recheck;
	const char *p = s, *e = s + n, *name, *val;
	size_t nlen, vlen, i, taken = 0;
	bool dup;

	while (e > s && is_hspace((unsigned char)e[-1]))
		e--;
	ps->recheck_continues = e > s && e[-1] == ',';
	while (p < e) {
		while (p < e && (is_hspace((unsigned char)*p) || *p == ','))
			p++;
		name = p;
		while (p < e && is_ctx_char((unsigned char)*p))
			p++;
		nlen = (size_t)(p - name);
		if (!nlen)
			break;
		if (p < e && *p == '=') {
			val = ++p;
			while (p < e && is_branch_char((unsigned char)*p))
				p++;
			vlen = (size_t)(p - val);
			/* Other key=value items are UNH's to define; skip them. */
			if (nlen == 6 && starts_ci(name, nlen, "rebase") && vlen &&
			    vlen < sizeof(rc->rebase)) {
				if (!rc->rebase[0]) {
					memcpy(rc->rebase, val, vlen);
					rc->rebase[vlen] = '\0';
				}
				taken++;
			}
		} else if (nlen < PG_TRAILERS_CTX_MAX) {
			dup = false;
			for (i = 0; i < rc->ncontexts && !dup; i++)
				dup = strlen(rc->contexts[i]) == nlen &&
				      !memcmp(rc->contexts[i], name, nlen);
			if (!dup) {
				if (rc->ncontexts == PG_TRAILERS_CONTEXTS_MAX)
					return pg_err_set(ps->err, PG_ETOOBIG,
							  "more than %d Recheck-request contexts",
							  PG_TRAILERS_CONTEXTS_MAX);
				memcpy(rc->contexts[rc->ncontexts], name, nlen);
				rc->contexts[rc->ncontexts++][nlen] = '\0';
			}
			taken++;
		}
		/* The UNH regex stops at the first character that fits
		 * no item; so does this. */
		if (p < e && !is_hspace((unsigned char)*p) && *p != ',') {
			ps->recheck_continues = false;
			break;
		}
	}
	if (!taken)
		ps->t->malformed++;
	return 0;
}

/* Whether l continues a Recheck-request list that ended in ',': it starts
 * with an item, and is not a trailer of its own ("Depends-on: ..."). */
static bool recheck_continuation(const struct line *l)
{
	size_t i = 0;

	if (!l->len || !(is_alnum((unsigned char)l->s[0]) || l->s[0] == '_'))
		return false;
	while (i < l->len && is_ctx_char((unsigned char)l->s[i]))
		i++;
	return i == l->len || l->s[i] != ':';
}

/* Copy a display name, control characters made spaces, surrounding white
 * space and one pair of double quotes dropped, cut on a UTF-8 boundary. */
static void copy_name(char *dst, size_t size, const char *s, size_t n)
{
	size_t len = 0, i;

	while (n && is_hspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && is_hspace((unsigned char)s[n - 1]))
		n--;
	if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
		s++;
		n -= 2;
	}
	for (i = 0; i < n && len + 1 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[len++] = c < ' ' || c == 0x7f ? ' ' : (char)c;
	}
	if (i < n)
		len = pg_utf8_cut(dst, len);
	dst[len] = '\0';
}

static bool valid_email(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= PG_TRAILERS_EMAIL_MAX || !memchr(s, '@', n))
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= ' ' || c == 0x7f || c == '<' || c == '>')
			return false;
	}
	return true;
}

static int take_person(struct parser *ps, enum pg_person_role role, const char *v, size_t n)
{
	struct pg_trailers *t = ps->t;
	const char *lt, *gt, *email = NULL, *name = v;
	size_t elen = 0, nlen = n;
	struct pg_person *pp, *people;

	lt = memchr(v, '<', n);
	if (lt) {
		gt = memchr(lt, '>', n - (size_t)(lt - v));
		if (!gt || !valid_email(lt + 1, (size_t)(gt - lt - 1)))
			goto malformed;
		email = lt + 1;
		elen = (size_t)(gt - lt - 1);
		nlen = (size_t)(lt - v);
	} else if (memchr(v, '@', n)) {
		for (elen = 0; elen < n && !is_hspace((unsigned char)v[elen]); elen++)
			;
		if (!valid_email(v, elen))
			goto malformed;
		email = v;
		nlen = 0;
	} else if (!n) {
		goto malformed;
	}
	people = grow(t->people, &ps->people_cap, t->npeople, sizeof(*t->people),
		      PG_TRAILERS_PEOPLE_MAX, "sign-off and review lines", ps->err);
	if (!people)
		return -1;
	t->people = people;
	pp = &t->people[t->npeople++];
	memset(pp, 0, sizeof(*pp));
	pp->role = role;
	copy_name(pp->name, sizeof(pp->name), name, nlen);
	if (email)
		memcpy(pp->email, email, elen);
	pp->email[elen] = '\0';
	return 0;
malformed:
	t->malformed++;
	return 0;
}

/* A line of the message, the notes or what follows the diff. */
static int text_line(struct parser *ps, const struct line *l, bool next_is_plus)
{
	static const struct {
		const char *key;
		enum pg_person_role role;
	} people[] = {
		{ "signed-off-by", PG_PERSON_SIGNED_OFF },
		{ "acked-by", PG_PERSON_ACKED },
		{ "reviewed-by", PG_PERSON_REVIEWED },
		{ "tested-by", PG_PERSON_TESTED },
	};
	struct pg_trailers *t = ps->t;
	const char *v;
	size_t n, i;

	if (ps->recheck_continues) {
		ps->recheck_continues = false;
		if (recheck_continuation(l))
			return take_recheck(ps, l->s, l->len);
	}
	/* Outlook does not quote the mail it answers, it appends it
	 * under this line: nothing of it is the sender's. */
	if (line_is(l, "-- ") || starts_ci(l->s, l->len, "-----original message-----")) {
		ps->region = R_END;
		return 0;
	}
	if (starts(l, "diff --git ") || (starts(l, "--- ") && next_is_plus)) {
		ps->region = R_DIFF;
		t->has_diff = true;
		return 0;
	}
	if (ps->region == R_MESSAGE && starts(l, "---")) {
		for (i = 3; i < l->len && is_hspace((unsigned char)l->s[i]); i++)
			;
		if (i == l->len) {
			ps->region = R_NOTES;
			return 0;
		}
	}

	/* After the diff too: Patchwork's mbox moves that text in front of
	 * the diff, and a mail must mean the same from either. */
	if (key_value(l, "depends-on", &v, &n))
		return take_depends(ps, v, n);
	if (key_value(l, "base-commit", &v, &n)) {
		char hash[PG_TRAILERS_HASH_MAX];

		if (!take_hash(v, n, hash))
			t->malformed++;
		else if (!t->base_commit[0])
			memcpy(t->base_commit, hash, sizeof(hash));
		return 0;
	}
	if (key_value(l, "prerequisite-patch-id", &v, &n))
		return take_prereq(ps, v, n);
	if (key_value(l, "change-id", &v, &n)) {
		take_change_id(ps, v, n);
		return 0;
	}
	if (key_value(l, "recheck-request", &v, &n))
		return take_recheck(ps, v, n);
	if (ps->region != R_MESSAGE)
		return 0;
	for (i = 0; i < sizeof(people) / sizeof(people[0]); i++)
		if (key_value(l, people[i].key, &v, &n))
			return take_person(ps, people[i].role, v, n);
	return 0;
}

/* "@@ -a[,b] +c[,d] @@": set the hunk's line counts.  Returns false when
 * the header does not parse. */
static bool hunk_header(struct parser *ps, const struct line *l)
{
	const char *p = l->s + 3, *e = l->s + l->len;
	uint64_t counts[2], x;
	int side;
	size_t i;

	for (side = 0; side < 2; side++) {
		if (p >= e || *p != (side ? '+' : '-'))
			return false;
		p++;
		for (i = 0; p + i < e && is_digit((unsigned char)p[i]); i++)
			;
		if (!parse_id(p, i, &x))
			return false;
		p += i;
		counts[side] = 1;
		if (p < e && *p == ',') {
			p++;
			for (i = 0; p + i < e && is_digit((unsigned char)p[i]); i++)
				;
			if (!parse_id(p, i, &counts[side]))
				return false;
			p += i;
		}
		if (p >= e || *p != ' ')
			return false;
		p++;
	}
	if (e - p < 2 || memcmp(p, "@@", 2))
		return false;
	ps->old_left = counts[0];
	ps->new_left = counts[1];
	return true;
}

/* One line of a hunk.  Returns false when the line cannot belong to it
 * (the hunk is then over and the line is read again as a diff header). */
static bool hunk_line(struct parser *ps, const struct line *l)
{
	/* An empty line is a context line whose space a mailer ate; git
	 * apply takes it so too. */
	char c = l->len ? l->s[0] : ' ';

	switch (c) {
	case ' ':
		if (!ps->old_left || !ps->new_left)
			return false;
		ps->old_left--;
		ps->new_left--;
		break;
	case '-':
		if (!ps->old_left)
			return false;
		ps->old_left--;
		break;
	case '+':
		if (!ps->new_left)
			return false;
		ps->new_left--;
		break;
	case '\\':	/* "\ No newline at end of file" */
		break;
	default:
		return false;
	}
	if (!ps->old_left && !ps->new_left)
		ps->region = R_DIFF;
	return true;
}

/* One line of a binary patch: "literal N", "delta N", base85 data whose
 * first character gives its byte count, and the blank line that ends it. */
static bool binary_line(struct parser *ps, const struct line *l)
{
	unsigned char c;
	size_t bytes, i;

	if (!l->len) {
		ps->region = R_DIFF;
		return true;
	}
	if (starts(l, "literal ") || starts(l, "delta "))
		return true;
	c = (unsigned char)l->s[0];
	if (c >= 'A' && c <= 'Z')
		bytes = c - 'A' + 1;
	else if (c >= 'a' && c <= 'z')
		bytes = c - 'a' + 27;
	else
		return false;
	if (l->len != 1 + (bytes + 3) / 4 * 5)
		return false;
	for (i = 1; i < l->len; i++) {
		c = (unsigned char)l->s[i];
		if (!is_alnum(c) && !strchr("!#$%&()*+-;<=>?@^_`{|}~", c))
			return false;
	}
	return true;
}

/* A line between hunks: a file header, a hunk or binary start, a blank
 * line.  Returns false for anything else (the diff is over). */
static bool diff_line(struct parser *ps, const struct line *l)
{
	static const char *const heads[] = {
		"diff --git ", "index ", "old mode ", "new mode ", "deleted file mode ",
		"new file mode ", "similarity index ", "dissimilarity index ",
		"rename from ", "rename to ", "copy from ", "copy to ", "--- ", "+++ ",
		"Binary files ", "\\",
	};
	size_t i;

	if (!l->len)
		return true;
	if (line_is(l, "-- ")) {
		ps->region = R_END;
		return true;
	}
	if (starts(l, "@@ -")) {
		if (!hunk_header(ps, l)) {
			/* Unreadable counts: let the hunk run while lines
			 * look like hunk lines. */
			ps->old_left = UINT64_MAX;
			ps->new_left = UINT64_MAX;
		}
		if (ps->old_left || ps->new_left)
			ps->region = R_HUNK;
		return true;
	}
	if (line_is(l, "GIT binary patch")) {
		ps->region = R_BINARY;
		return true;
	}
	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (starts(l, heads[i]))
			return true;
	return false;
}

static int take_line(struct parser *ps, const struct line *l, bool next_is_plus)
{
	for (;;) {
		switch (ps->region) {
		case R_HUNK:
			if (hunk_line(ps, l))
				return 0;
			ps->region = R_DIFF;
			continue;
		case R_BINARY:
			if (binary_line(ps, l))
				return 0;
			ps->region = R_DIFF;
			continue;
		case R_DIFF:
			if (diff_line(ps, l))
				return 0;
			ps->region = R_AFTER;
			continue;
		case R_MESSAGE:
		case R_NOTES:
		case R_AFTER:
			return text_line(ps, l, next_is_plus);
		case R_END:
			return 0;
		}
		return 0;
	}
}

void pg_trailers_release(struct pg_trailers *t)
{
	if (!t)
		return;
	free(t->deps);
	free(t->prereq);
	free(t->people);
	memset(t, 0, sizeof(*t));
}

int pg_trailers_parse(const char *body, size_t len, struct pg_trailers *out,
		      struct pg_err *err)
{
	struct parser ps;
	struct line l;
	const char *eol, *next;
	size_t pos = 0;
	int ret = -1;

	if (!out)
		return pg_err_set(err, PG_EINVAL, "trailers: no result to fill");
	pg_trailers_release(out);
	if (!body && len) {
		pg_err_set(err, PG_EINVAL, "trailers: no body");
		goto out;
	}
	if (len > PG_TRAILERS_BODY_MAX) {
		pg_err_set(err, PG_ETOOBIG, "trailers: body of %zu bytes is over %u",
			   len, PG_TRAILERS_BODY_MAX);
		goto out;
	}
	memset(&ps, 0, sizeof(ps));
	ps.t = out;
	ps.err = err;
	ps.region = R_MESSAGE;
	while (pos < len && ps.region != R_END) {
		l.s = body + pos;
		eol = memchr(l.s, '\n', len - pos);
		l.len = eol ? (size_t)(eol - l.s) : len - pos;
		pos += l.len + (eol ? 1 : 0);
		if (l.len && l.s[l.len - 1] == '\r')
			l.len--;
		next = body + pos;
		if (take_line(&ps, &l, len - pos >= 4 && !memcmp(next, "+++ ", 4)) < 0)
			goto out;
	}
	ret = 0;
out:
	if (ret < 0)
		pg_trailers_release(out);
	return ret;
}

size_t pg_trailers_recheck_ours(const struct pg_trailers *t, const char *const *our_contexts,
				size_t n, struct pg_recheck *out)
{
	const struct pg_recheck *rc;
	size_t i, j;

	memset(out, 0, sizeof(*out));
	if (!t)
		return 0;
	rc = &t->recheck;
	memcpy(out->rebase, rc->rebase, sizeof(out->rebase));
	for (i = 0; i < rc->ncontexts; i++) {
		for (j = 0; j < n; j++) {
			if (our_contexts[j] && !strcmp(our_contexts[j], rc->contexts[i])) {
				memcpy(out->contexts[out->ncontexts++], rc->contexts[i],
				       sizeof(rc->contexts[i]));
				break;
			}
		}
	}
	return out->ncontexts;
}

const char *pg_dep_kind_name(enum pg_dep_kind kind)
{
	switch (kind) {
	case PG_DEP_SERIES:
		return "series";
	case PG_DEP_PATCH:
		return "patch";
	case PG_DEP_MSGID:
		return "msgid";
	}
	return "?";
}

const char *pg_person_role_name(enum pg_person_role role)
{
	switch (role) {
	case PG_PERSON_SIGNED_OFF:
		return "signed-off-by";
	case PG_PERSON_ACKED:
		return "acked-by";
	case PG_PERSON_REVIEWED:
		return "reviewed-by";
	case PG_PERSON_TESTED:
		return "tested-by";
	}
	return "?";
}

int pg_trailers_dump(const struct pg_trailers *t, struct pg_buf *out)
{
	const struct pg_person *pp;
	const struct pg_dep *d;
	const char *s;
	size_t i;

	if (t->base_commit[0] && pg_buf_printf(out, "base-commit %s\n", t->base_commit) < 0)
		return -1;
	if (t->change_id[0] && pg_buf_printf(out, "change-id %s\n", t->change_id) < 0)
		return -1;
	for (i = 0; i < t->nprereq; i++)
		if (pg_buf_printf(out, "prerequisite-patch-id %s\n", t->prereq[i]) < 0)
			return -1;
	for (i = 0; i < t->ndeps; i++) {
		d = &t->deps[i];
		if (d->kind == PG_DEP_MSGID) {
			if (pg_buf_printf(out, "depends-on msgid %s\n", d->msgid) < 0)
				return -1;
		} else if (pg_buf_printf(out, "depends-on %s %llu\n", pg_dep_kind_name(d->kind),
					 (unsigned long long)d->id) < 0) {
			return -1;
		}
	}
	if (t->recheck.ncontexts || t->recheck.rebase[0]) {
		if (pg_buf_adds(out, "recheck") < 0)
			return -1;
		if (t->recheck.rebase[0] &&
		    pg_buf_printf(out, " rebase=%s", t->recheck.rebase) < 0)
			return -1;
		for (i = 0; i < t->recheck.ncontexts; i++)
			if (pg_buf_printf(out, " %s", t->recheck.contexts[i]) < 0)
				return -1;
		if (pg_buf_addch(out, '\n') < 0)
			return -1;
	}
	for (i = 0; i < t->npeople; i++) {
		pp = &t->people[i];
		if (pg_buf_printf(out, "%s \"", pg_person_role_name(pp->role)) < 0)
			return -1;
		for (s = pp->name; *s; s++) {
			if ((*s == '"' || *s == '\\') && pg_buf_addch(out, '\\') < 0)
				return -1;
			if (pg_buf_addch(out, *s) < 0)
				return -1;
		}
		if (pg_buf_printf(out, "\" <%s>\n", pp->email) < 0)
			return -1;
	}
	if (pg_buf_printf(out, "diff %s\nmalformed %u\n", t->has_diff ? "yes" : "no",
			  t->malformed) < 0)
		return -1;
	return 0;
}
