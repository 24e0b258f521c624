/* SPDX-License-Identifier: MIT */
/*
 * Subject parsing: see subject.h for exactly what is accepted.  Every scan
 * moves forward over the subject (bracket groups are measured once and
 * then tokenised once), so the work is linear in its length.
 */
#include "subject.h"
#include "text.h"

#include <string.h>

/* The longest number accepted in a version or an N/M marker (b4 takes
 * \d{1,4}), and in a Patchwork id (fits a uint64_t with room). */
#define SMALL_DIGITS 4
#define ID_DIGITS 18

/* White space and the other ASCII controls: a decoded subject can still
 * hold a tab or a stray CR, and none of them belongs in a title. */
static bool is_space(unsigned char c)
{
	return (c != '\0' && c <= ' ') || c == 0x7f;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* ASCII-only lowercasing: tolower() depends on the locale, and UTF-8
 * bytes must pass through untouched. */
static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Whether s[0..n) equals the lowercase word w, ignoring ASCII case. */
static bool word_eq(const char *s, size_t n, const char *w)
{
	size_t i;

	if (strlen(w) != n)
		return false;
	for (i = 0; i < n; i++)
		if (lower(s[i]) != w[i])
			return false;
	return true;
}

/* Whether the NUL-terminated s starts with the lowercase word w, ignoring
 * case; a NUL in s simply mismatches, so nothing past it is read. */
static bool starts_ci(const char *s, const char *w)
{
	for (; *w; s++, w++)
		if (lower(*s) != *w)
			return false;
	return true;
}

/* Parse s[0..n) as 1..maxdig decimal digits and nothing else. */
static bool parse_num(const char *s, size_t n, size_t maxdig, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (n == 0 || n > maxdig)
		return false;
	for (i = 0; i < n; i++) {
		if (!is_digit((unsigned char)s[i]))
			return false;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	*v = x;
	return true;
}

/* Count the digits at s (stops at the first non-digit, NUL included). */
static size_t digits_at(const char *s)
{
	size_t n = 0;

	while (is_digit((unsigned char)s[n]))
		n++;
	return n;
}

/* "vN" with N in 1..9999 as the whole of s[0..n). */
static bool parse_vtoken(const char *s, size_t n, unsigned int *v)
{
	uint64_t x;

	if (n < 2 || lower(s[0]) != 'v' || !parse_num(s + 1, n - 1, SMALL_DIGITS, &x) ||
	    x == 0)
		return false;
	*v = (unsigned int)x;
	return true;
}

/*
 * Length of a reply or forward marker at p, 0 if there is none: the word
 * and a colon, or (Patchwork's "[:\s]") the word and white space when a
 * bracket group follows, so that "Re [PATCH] x" is a reply but a title
 * starting with the word "re" is left alone.
 */
static size_t reply_len(const char *p)
{
	static const char *const words[] = { "re", "aw", "fwd", "fw" };
	size_t i, n, sp;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		n = strlen(words[i]);
		if (!starts_ci(p, words[i]))
			continue;
		if (p[n] == ':')
			return n + 1;
		for (sp = 0; is_space((unsigned char)p[n + sp]); sp++)
			;
		if (sp && p[n + sp] == '[')
			return n + sp;
	}
	return 0;
}

/*
 * Length of a test-report marker at p ("|SUCCESS| pw123 "), 0 if none.
 * Fills the report fields of out only when the marker is recognised.
 */
static size_t report_len(const char *p, struct pg_subject *out)
{
	static const struct {
		const char *word;
		enum pg_subject_report status;
	} names[] = {
		{ "success", PG_SUBJECT_REPORT_SUCCESS },
		{ "warning", PG_SUBJECT_REPORT_WARNING },
		{ "failure", PG_SUBJECT_REPORT_FAILURE },
		{ "pending", PG_SUBJECT_REPORT_PENDING },
	};
	enum pg_subject_report status = PG_SUBJECT_REPORT_NONE;
	uint64_t first = 0, last = 0;
	const char *q = NULL, *r;
	size_t i, n;

	if (*p != '|')
		return 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = strlen(names[i].word);
		if (starts_ci(p + 1, names[i].word) && p[1 + n] == '|') {
			status = names[i].status;
			q = p + n + 2;
			break;
		}
	}
	if (!q)
		return 0;
	while (is_space((unsigned char)*q))
		q++;
	/* The id is optional: send-patch-report.sh writes "pw?" when it
	 * could not look it up, and private reports have none at all. */
	if (lower(q[0]) == 'p' && lower(q[1]) == 'w') {
		r = q + 2;
		if (*r == '?') {
			r++;
		} else if (parse_num(r, digits_at(r), ID_DIGITS, &first)) {
			r += digits_at(r);
			last = first;
			if (*r == '-' && parse_num(r + 1, digits_at(r + 1), ID_DIGITS, &last))
				r += 1 + digits_at(r + 1);
			else if (*r == '-')
				r = q;	/* "pw12-x": not an id after all */
		} else {
			r = q;
		}
		if (r != q && (*r == '\0' || is_space((unsigned char)*r))) {
			q = r;
		} else {
			first = 0;
			last = 0;
		}
	}
	out->is_test_report = true;
	out->report = status;
	out->report_pwid = first;
	out->report_pwid_last = last;
	return (size_t)(q - p);
}

/* At p == '[': the length up to and including the ']' that balances it,
 * or 0 when the group is never closed. */
static size_t group_len(const char *p)
{
	size_t depth = 0, i;

	for (i = 0; p[i]; i++) {
		if (p[i] == '[') {
			depth++;
		} else if (p[i] == ']') {
			if (--depth == 0)
				return i + 1;
		}
	}
	return 0;
}

static bool is_sep(unsigned char c)
{
	return is_space(c) || c == ',' || c == ';' || c == '[' || c == ']';
}

/* The next token of [*pp, e); *len is 0 at the end. */
static void next_token(const char **pp, const char *e, const char **tok, size_t *len)
{
	const char *p = *pp;

	while (p < e && is_sep((unsigned char)*p))
		p++;
	*tok = p;
	while (p < e && !is_sep((unsigned char)*p))
		p++;
	*len = (size_t)(p - *tok);
	*pp = p;
}

static bool is_stable(const char *t, size_t n)
{
	return n == 5 && is_digit((unsigned char)t[0]) && is_digit((unsigned char)t[1]) &&
	       t[2] == '.' && is_digit((unsigned char)t[3]) && is_digit((unsigned char)t[4]);
}

static bool has_tag(char (*list)[PG_SUBJECT_TAG_MAX], size_t n, const char *t)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], t))
			return true;
	return false;
}

static void add_tag(struct pg_subject *out, const char *t, size_t n)
{
	char tag[PG_SUBJECT_TAG_MAX];
	size_t i;

	if (n >= sizeof(tag)) {
		out->tags_dropped = true;
		return;
	}
	for (i = 0; i < n; i++)
		tag[i] = lower(t[i]);
	tag[n] = '\0';
	if (!has_tag(out->tags, out->ntags, tag)) {
		if (out->ntags == PG_SUBJECT_TAGS_MAX) {
			out->tags_dropped = true;
			return;
		}
		memcpy(out->tags[out->ntags++], tag, n + 1);
	}
	if (is_stable(tag, n) && !has_tag(out->stable, out->nstable, tag)) {
		if (out->nstable == PG_SUBJECT_STABLE_MAX) {
			out->tags_dropped = true;
			return;
		}
		memcpy(out->stable[out->nstable++], tag, n + 1);
	}
}

static void set_version(struct pg_subject *out, unsigned int v)
{
	if (out->has_version)
		return;
	out->has_version = true;
	out->version = v;
}

/* Take N of M as the counter if it is in range.  Returns false when it is
 * not a credible counter (the caller keeps the text as a tag). */
static bool set_counter(struct pg_subject *out, const char *ns, size_t nlen,
			const char *ms, size_t mlen)
{
	uint64_t n, m;

	if (!parse_num(ns, nlen, SMALL_DIGITS, &n) || !parse_num(ms, mlen, SMALL_DIGITS, &m) ||
	    m == 0 || n > m)
		return false;
	if (!out->has_counter) {
		out->has_counter = true;
		out->number = (unsigned int)n;
		out->total = (unsigned int)m;
	}
	return true;
}

/* Classify one token; returns whether it marks a patch (as opposed to a
 * tag). */
static bool take_token(struct pg_subject *out, const char *t, size_t n)
{
	const char *slash;
	unsigned int v;

	if (word_eq(t, n, "patch")) {
		out->is_patch = true;
		return true;
	}
	if (n > 5 && word_eq(t, 5, "patch") && parse_vtoken(t + 5, n - 5, &v)) {
		out->is_patch = true;
		set_version(out, v);
		return true;
	}
	if (word_eq(t, n, "rfc")) {
		out->is_rfc = true;
		return true;
	}
	if (n > 3 && word_eq(t, 3, "rfc") && parse_vtoken(t + 3, n - 3, &v)) {
		out->is_rfc = true;
		set_version(out, v);
		return true;
	}
	if (word_eq(t, n, "resend")) {
		out->is_resend = true;
		return true;
	}
	if (parse_vtoken(t, n, &v)) {
		set_version(out, v);
		return true;
	}
	slash = memchr(t, '/', n);
	if (slash && set_counter(out, t, (size_t)(slash - t), slash + 1,
				 n - (size_t)(slash - t) - 1)) {
		out->is_patch = true;
		return true;
	}
	add_tag(out, t, n);
	return false;
}

/* The tokens of one bracket group, [s, e).  Returns whether any of them
 * marks a patch. */
static bool take_group(struct pg_subject *out, const char *s, const char *e)
{
	const char *p = s, *q, *t, *t2, *t3;
	size_t n, n2, n3;
	bool marker = false;

	for (;;) {
		next_token(&p, e, &t, &n);
		if (!n)
			break;
		/* Mercurial's "PATCH 1 of 3" spans three tokens. */
		if (is_digit((unsigned char)*t)) {
			q = p;
			next_token(&q, e, &t2, &n2);
			next_token(&q, e, &t3, &n3);
			if (word_eq(t2, n2, "of") && set_counter(out, t, n, t3, n3)) {
				out->is_patch = true;
				marker = true;
				p = q;
				continue;
			}
		}
		if (take_token(out, t, n))
			marker = true;
	}
	return marker;
}

/* Length of a "vN:" marker at p followed by white space or the end, 0 if
 * there is none. */
static size_t colon_version_len(const char *p, unsigned int *v)
{
	size_t n;

	if (lower(*p) != 'v')
		return 0;
	n = digits_at(p + 1);
	if (p[1 + n] != ':' || (p[2 + n] != '\0' && !is_space((unsigned char)p[2 + n])))
		return 0;
	if (!parse_vtoken(p, n + 1, v))
		return 0;
	return n + 2;
}

/* Length of a "(vN)" marker at p, 0 if there is none. */
static size_t paren_version_len(const char *p, unsigned int *v)
{
	size_t n;

	if (p[0] != '(' || lower(p[1]) != 'v')
		return 0;
	n = digits_at(p + 2);
	if (p[2 + n] != ')' || !parse_vtoken(p + 1, n + 1, v))
		return 0;
	return n + 3;
}

/*
 * Copy src to dst[size] with white space collapsed and trimmed, and, when
 * strip_vn, "(vN)" markers dropped and ASCII lowercased (the series key).
 * Returns the length; *truncated tells whether src did not fit.
 */
static size_t normalise(char *dst, size_t size, const char *src, bool strip_vn,
			bool *truncated)
{
	size_t len = 0, n;
	bool space = false;
	unsigned int v;

	*truncated = false;
	while (*src) {
		if (is_space((unsigned char)*src)) {
			space = len > 0;
			src++;
			continue;
		}
		if (strip_vn && (n = paren_version_len(src, &v))) {
			space = len > 0;
			src += n;
			continue;
		}
		if (len + (space ? 2 : 1) > size - 1) {
			*truncated = true;
			break;
		}
		if (space)
			dst[len++] = ' ';
		space = false;
		dst[len++] = strip_vn ? lower(*src) : *src;
		src++;
	}
	if (*truncated) {
		len = pg_utf8_cut(dst, len);
		while (len > 0 && dst[len - 1] == ' ')
			len--;
	}
	dst[len] = '\0';
	return len;
}

int pg_subject_series_key(const char *title, char *out, size_t outlen)
{
	bool truncated;

	if (!title || !out || !outlen)
		return -1;
	return (int)normalise(out, outlen, title, true, &truncated);
}

int pg_subject_parse(const char *subject, struct pg_subject *out)
{
	const char *p, *t;
	bool marker = false, any_group = false, truncated;
	unsigned int v;
	size_t n;

	if (!out)
		return -1;
	memset(out, 0, sizeof(*out));
	out->version = 1;
	if (!subject)
		return -1;

	p = subject;
	for (;;) {
		while (is_space((unsigned char)*p))
			p++;
		if (!marker && (n = reply_len(p)) > 0) {
			out->is_reply = true;
		} else if (!any_group && !out->is_test_report && (n = report_len(p, out)) > 0) {
			/* report_len() filled the report fields */
		} else if (*p == '[' && (n = group_len(p)) > 0) {
			any_group = true;
			if (take_group(out, p + 1, p + n - 1))
				marker = true;
		} else {
			break;
		}
		p += n;
	}

	n = colon_version_len(p, &v);
	if (n) {
		set_version(out, v);
		p += n;
	}

	normalise(out->title, sizeof(out->title), p, false, &truncated);
	out->title_truncated = truncated;

	/* Patchwork's fallback: "(v3)" anywhere in the subject. */
	if (!out->has_version) {
		for (t = out->title; *t; t++) {
			if (paren_version_len(t, &v)) {
				set_version(out, v);
				break;
			}
		}
	}
	normalise(out->key, sizeof(out->key), out->title, true, &truncated);

	if (!out->has_counter && out->is_patch) {
		out->number = 1;
		out->total = 1;
	}
	out->is_cover = out->has_counter && out->number == 0;
	return 0;
}

const char *pg_subject_report_name(enum pg_subject_report r)
{
	switch (r) {
	case PG_SUBJECT_REPORT_SUCCESS:
		return "SUCCESS";
	case PG_SUBJECT_REPORT_WARNING:
		return "WARNING";
	case PG_SUBJECT_REPORT_FAILURE:
		return "FAILURE";
	case PG_SUBJECT_REPORT_PENDING:
		return "PENDING";
	case PG_SUBJECT_REPORT_NONE:
		break;
	}
	return "-";
}

static int add_quoted(struct pg_buf *out, const char *s)
{
	if (pg_buf_addch(out, '"') < 0)
		return -1;
	for (; *s; s++) {
		if ((*s == '"' || *s == '\\') && pg_buf_addch(out, '\\') < 0)
			return -1;
		if (pg_buf_addch(out, *s) < 0)
			return -1;
	}
	return pg_buf_addch(out, '"');
}

static int add_list(struct pg_buf *out, const char *name,
		    const char (*list)[PG_SUBJECT_TAG_MAX], size_t n)
{
	size_t i;

	if (pg_buf_printf(out, " %s=", name) < 0)
		return -1;
	if (!n)
		return pg_buf_addch(out, '-');
	for (i = 0; i < n; i++)
		if (pg_buf_printf(out, "%s%s", i ? "," : "", list[i]) < 0)
			return -1;
	return 0;
}

int pg_subject_dump(const struct pg_subject *s, struct pg_buf *out)
{
	const struct {
		bool on;
		const char *name;
	} flags[] = {
		{ s->is_patch, "patch" },
		{ s->is_rfc, "rfc" },
		{ s->is_resend, "resend" },
		{ s->is_reply, "reply" },
		{ s->is_cover, "cover" },
		{ s->is_test_report, "report" },
		{ s->has_version, "ver" },
		{ s->has_counter, "count" },
		{ s->title_truncated, "trunc" },
		{ s->tags_dropped, "tagdrop" },
	};
	bool first = true;
	size_t i;

	if (pg_buf_printf(out, "v=%u n=%u/%u flags=", s->version, s->number, s->total) < 0)
		return -1;
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (!flags[i].on)
			continue;
		if (pg_buf_printf(out, "%s%s", first ? "" : ",", flags[i].name) < 0)
			return -1;
		first = false;
	}
	if (first && pg_buf_addch(out, '-') < 0)
		return -1;
	if (add_list(out, "tags", s->tags, s->ntags) < 0 ||
	    add_list(out, "stable", s->stable, s->nstable) < 0)
		return -1;
	if (s->report == PG_SUBJECT_REPORT_NONE) {
		if (pg_buf_adds(out, " report=-") < 0)
			return -1;
	} else if (s->report_pwid_last != s->report_pwid) {
		if (pg_buf_printf(out, " report=%s:pw%llu-%llu", pg_subject_report_name(s->report),
				  (unsigned long long)s->report_pwid,
				  (unsigned long long)s->report_pwid_last) < 0)
			return -1;
	} else if (pg_buf_printf(out, " report=%s:pw%llu", pg_subject_report_name(s->report),
				 (unsigned long long)s->report_pwid) < 0) {
		return -1;
	}
	if (pg_buf_adds(out, " title=") < 0 || add_quoted(out, s->title) < 0 ||
	    pg_buf_adds(out, " key=") < 0 || add_quoted(out, s->key) < 0)
		return -1;
	return 0;
}
