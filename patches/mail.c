/* SPDX-License-Identifier: MIT */
/*
 * pg_mail_parse(): the header section, the decoded common fields, the
 * DMARC rewrite, then the MIME walk and git mailinfo's split of the body
 * (see mail.h).  The pieces live in mail_header.c, mail_mime.c and
 * mail_patch.c; pg_mail_dump() in mail_dump.c.
 */
#include "mail_int.h"

#include <stdlib.h>
#include <string.h>

#include "timeutil.h"
#include "vec.h"

static bool is_wsp(char c)
{
	return c == ' ' || c == '\t';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool streq_ci(const char *a, const char *b)
{
	return pg_mail_eq(a, strlen(a), b);
}

void pg_mail_free(struct pg_mail *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nheaders; i++) {
		free(m->headers[i].name);
		free(m->headers[i].value);
	}
	free(m->headers);
	for (size_t i = 0; i < m->nreferences; i++)
		free(m->references[i]);
	free(m->references);
	for (size_t i = 0; i < m->nfiles; i++)
		free(m->files[i]);
	free(m->files);
	free(m->message_id);
	free(m->in_reply_to);
	free(m->subject);
	free(m->from_name);
	free(m->from_addr);
	free(m->author_name);
	free(m->author_addr);
	free(m->inbody_subject);
	free(m->list_id);
	free(m->body);
	free(m->message);
	free(m->notes);
	free(m->diff);
	memset(m, 0, sizeof(*m));
}

const char *pg_mail_header_nth(const struct pg_mail *m, const char *name,
			       size_t n)
{
	for (size_t i = 0; i < m->nheaders; i++)
		if (streq_ci(m->headers[i].name, name) && n-- == 0)
			return m->headers[i].value;
	return NULL;
}

const char *pg_mail_header(const struct pg_mail *m, const char *name)
{
	return pg_mail_header_nth(m, name, 0);
}

/* ---- parse state ---------------------------------------------------------- */

struct parse {
	struct pg_mail *m;
	const char *s;		/* the mail, CRLF turned into LF */
	size_t len;
	size_t hdr_start;	/* first header line */
	unsigned int hdr_line;	/* its line number in the input, from 1 */
	size_t body;		/* first byte of the body */
	size_t header_alloc;
	struct pg_err *err;
};

static int nomem(struct parse *p, const char *what)
{
	return pg_err_set(p->err, PG_ENOMEM, "mail: out of memory (%s)", what);
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s);
	char *d = malloc(n + 1);

	if (d)
		memcpy(d, s, n + 1);
	return d;
}

/* CRLF -> LF for the whole mail; lone CRs stay. */
static char *normalise(const char *buf, size_t len, size_t *out_len)
{
	char *out = malloc(len + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\r' && i + 1 < len && buf[i + 1] == '\n')
			continue;
		out[o++] = buf[i];
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

/* Skip blank lines and one mbox "From " line before the headers. */
static void skip_envelope(struct parse *p)
{
	size_t pos = 0;
	unsigned int line = 1;

	for (;;) {
		size_t e = pg_mail_eol(p->s, p->len, pos), i = pos;

		while (i < e && (is_wsp(p->s[i]) || p->s[i] == '\r'))
			i++;
		if (i < e || pos >= p->len)
			break;
		pos = e < p->len ? e + 1 : p->len;
		line++;
	}
	if (p->len - pos >= 5 && !memcmp(p->s + pos, "From ", 5)) {
		/* "From :" would be the obsolete syntax of a From: field */
		size_t i = pos + 5;

		while (i < p->len && is_wsp(p->s[i]))
			i++;
		if (i >= p->len || p->s[i] != ':') {
			pos = pg_mail_next_line(p->s, p->len, pos);
			line++;
		}
	}
	p->hdr_start = pos;
	p->hdr_line = line;
}

static int add_header(struct parse *p, const struct pg_mail_field *f)
{
	struct pg_mail *m = p->m;
	struct pg_mail_header *h;

	if (PG_GROW(m->headers, p->header_alloc, m->nheaders + 1) < 0)
		return nomem(p, "headers");
	h = &m->headers[m->nheaders];
	h->name = malloc(f->name_len + 1);
	h->value = pg_mail_unfold(f->value, f->value_len);
	if (!h->name || !h->value) {
		free(h->name);
		free(h->value);
		return nomem(p, "headers");
	}
	memcpy(h->name, f->name, f->name_len);
	h->name[f->name_len] = '\0';
	m->nheaders++;
	return 0;
}

static int read_headers(struct parse *p, size_t max_bytes, size_t max_count)
{
	size_t pos = p->hdr_start;
	unsigned int line = p->hdr_line;
	struct pg_mail_field f;
	int r;

	while ((r = pg_mail_next_field(p->s, p->len, &pos, &f)) > 0) {
		if (pos - p->hdr_start > max_bytes)
			return pg_err_set(p->err, PG_ETOOBIG,
					  "header section larger than %zu bytes", max_bytes);
		if (p->m->nheaders >= max_count)
			return pg_err_set(p->err, PG_ETOOBIG,
					  "more than %zu header fields", max_count);
		if (add_header(p, &f) < 0)
			return -1;
		line += f.lines;
	}
	if (r < 0) {
		/* the field's lines: the first and its continuations */
		size_t e = pg_mail_eol(p->s, p->len, pos);
		bool nul;

		while (e + 1 < p->len && is_wsp(p->s[e + 1]))
			e = pg_mail_eol(p->s, p->len, e + 1);
		nul = memchr(p->s + pos, '\0', e - pos) != NULL;
		if (!p->m->nheaders)
			return pg_err_set(p->err, PG_EINVAL,
					  "no header section (line %u is not a header field)",
					  line);
		return pg_err_set(p->err, PG_EINVAL, "header section is not valid (line %u: %s)",
				  line, nul ? "NUL byte" : "not a header field");
	}
	if (!p->m->nheaders)
		return pg_err_set(p->err, PG_EINVAL, "empty mail");
	p->body = pos;
	return 0;
}

/* ---- the common fields ------------------------------------------------------ */

static int first_msgid(struct parse *p, const char *v, char **out)
{
	struct pg_strvec ids = PG_STRVEC_INIT;
	int rc = 0;

	if (v && pg_mail_msgids(v, &ids) < 0) {
		rc = nomem(p, "msg-id");
		goto out;
	}
	*out = xstrdup(ids.n ? ids.v[0] : "");
	if (!*out)
		rc = nomem(p, "msg-id");
out:
	pg_strvec_clear(&ids);
	return rc;
}

static char *decode_line(const char *v, unsigned int *flags)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	size_t a = 0, e;
	char *out;

	if (pg_mail_decode_header(v, strlen(v), &b, flags) < 0) {
		pg_buf_release(&b);
		return NULL;
	}
	out = pg_buf_detach(&b, &e);
	if (!out)
		return NULL;
	while (a < e && out[a] == ' ')
		a++;
	while (e > a && out[e - 1] == ' ')
		e--;
	memmove(out, out + a, e - a);
	out[e - a] = '\0';
	return out;
}

/* b4's reply test plus the common localised prefixes (see mail.h). */
static bool subject_is_reply(const char *s)
{
	static const char *const words[] = { "re", "aw", "fw", "fwd", "sv", "antw" };
	size_t n = 0;

	while (is_wsp(*s))
		s++;
	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z'))
		n++;
	if (!n || s[n] != ':')
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (pg_mail_eq(s, n, words[i]))
			return true;
	if (n >= 2 && n <= 3) {
		const char *t = s + n + 1;

		while (is_wsp(*t))
			t++;
		return *t == '[';
	}
	return false;
}

static int list_id(struct parse *p)
{
	const char *v = pg_mail_header(p->m, "List-Id");
	const char *lt, *gt;

	if (!v)
		v = "";
	lt = strrchr(v, '<');
	gt = lt ? strchr(lt, '>') : NULL;
	if (lt && gt) {
		p->m->list_id = malloc((size_t)(gt - lt));
		if (p->m->list_id) {
			memcpy(p->m->list_id, lt + 1, (size_t)(gt - lt - 1));
			p->m->list_id[gt - lt - 1] = '\0';
		}
	} else {
		p->m->list_id = xstrdup(v);
	}
	return p->m->list_id ? 0 : nomem(p, "List-Id");
}

/* Is addr the list's own address (List-Post mailto:, or List-Id)? */
static bool is_list_addr(const struct pg_mail *m, const char *addr)
{
	const char *post = pg_mail_header(m, "List-Post");
	size_t alen = strlen(addr);

	if (!alen)
		return false;
	if (post) {
		size_t plen = strlen(post);

		for (size_t i = 0; i + 7 <= plen; i++) {
			const char *q = post + i + 7;
			size_t n;

			if (!pg_mail_eq(post + i, 7, "mailto:"))
				continue;
			n = strcspn(q, ">?, \t");
			if (n == alen && pg_mail_eq(q, n, addr))
				return true;
			break;
		}
	}
	if (m->list_id && *m->list_id) {
		/* "dev.dpdk.org" is the list dev@dpdk.org */
		const char *id = m->list_id, *at = strchr(addr, '@');
		size_t local;

		if (!at || strlen(id) != alen)
			return false;
		local = (size_t)(at - addr);
		if (id[local] != '.')
			return false;
		for (size_t i = 0; i < alen; i++)
			if (i != local && lower(id[i]) != lower(addr[i]))
				return false;
		return true;
	}
	return false;
}

/* Length of name without a trailing " via WORD", or strlen(name). */
static size_t via_cut(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = n; i-- > 0;) {
		if (name[i] == ' ' && i + 5 < n && pg_mail_eq(name + i, 5, " via ")) {
			if (i == 0 || strchr(name + i + 5, ' '))
				return n;
			return i;
		}
	}
	return n;
}

/* Undo the DMARC From: rewrite (the rule is in mail.h). */
static int undo_dmarc(struct parse *p)
{
	struct pg_mail *m = p->m;
	const char *xof = pg_mail_header(m, "X-Original-From");
	const char *rto = pg_mail_header(m, "Reply-To");
	size_t cut = via_cut(m->from_name);
	char *name = NULL, *addr = NULL;
	int rc = 0;

	if (!is_list_addr(m, m->from_addr) && cut == strlen(m->from_name))
		return 0;
	if (xof && pg_mail_mailbox(xof, &name, &addr, &m->flags) < 0)
		return nomem(p, "X-Original-From");
	if ((!addr || !*addr) && rto) {
		free(name);
		free(addr);
		name = addr = NULL;
		if (pg_mail_mailbox(rto, &name, &addr, &m->flags) < 0)
			return nomem(p, "Reply-To");
		if (is_list_addr(m, addr) || !strcmp(addr, m->from_addr)) {
			free(addr);
			addr = NULL;
		}
	}
	if (!addr || !*addr || !strchr(addr, '@'))
		goto out;
	if (!*name) {
		/* "'Name' via group": Google Groups quotes the name */
		const char *n = m->from_name;

		if (cut >= 2 && n[0] == '\'' && n[cut - 1] == '\'') {
			n++;
			cut -= 2;
		}
		free(name);
		name = malloc(cut + 1);
		if (!name) {
			rc = nomem(p, "From");
			goto out;
		}
		memcpy(name, n, cut);
		name[cut] = '\0';
	}
	free(m->from_name);
	free(m->from_addr);
	m->from_name = name;
	m->from_addr = addr;
	name = addr = NULL;
	m->flags |= PG_MAIL_DMARC;
out:
	free(name);
	free(addr);
	return rc;
}

static int common_fields(struct parse *p)
{
	struct pg_mail *m = p->m;
	struct pg_strvec refs = PG_STRVEC_INIT;
	const char *v;
	int rc = -1;

	if (first_msgid(p, pg_mail_header(m, "Message-ID"), &m->message_id) < 0)
		goto out;
	if (!*m->message_id) {
		pg_err_set(p->err, PG_EINVAL, pg_mail_header(m, "Message-ID") ?
			   "Message-ID header is empty" : "no Message-ID header");
		goto out;
	}
	if (first_msgid(p, pg_mail_header(m, "In-Reply-To"), &m->in_reply_to) < 0)
		goto out;
	v = pg_mail_header(m, "References");
	if (v && pg_mail_msgids(v, &refs) < 0) {
		nomem(p, "References");
		goto out;
	}
	m->references = refs.v;
	m->nreferences = refs.n;
	refs.v = NULL;
	refs.n = 0;

	v = pg_mail_header(m, "Subject");
	m->subject = decode_line(v ? v : "", &m->flags);
	if (!m->subject) {
		nomem(p, "Subject");
		goto out;
	}
	m->is_reply = subject_is_reply(m->subject);

	v = pg_mail_header(m, "From");
	if (pg_mail_mailbox(v ? v : "", &m->from_name, &m->from_addr, &m->flags) < 0) {
		nomem(p, "From");
		goto out;
	}
	v = pg_mail_header(m, "Date");
	if (!v || pg_time_parse_rfc2822(v, &m->date_ms) < 0) {
		m->date_ms = 0;
		m->flags |= PG_MAIL_NO_DATE;
	}
	if (list_id(p) < 0 || undo_dmarc(p) < 0)
		goto out;
	rc = 0;
out:
	pg_strvec_clear(&refs);
	return rc;
}

/* ---- body, message, notes, diff ---------------------------------------------- */

/* s[0..n) converted to UTF-8, CR before LF dropped, as a new string. */
static int text_out(struct parse *p, const char *s, size_t n,
		    enum pg_mail_charset cs, char **out, size_t *out_len)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	size_t o = 0;

	if (pg_mail_to_utf8(&b, cs, s, n) < 0 || pg_buf_grow(&b, 0) < 0) {
		pg_buf_release(&b);
		return nomem(p, "body");
	}
	for (size_t i = 0; i < b.len; i++) {
		if (b.data[i] == '\r' && i + 1 < b.len && b.data[i + 1] == '\n')
			continue;
		b.data[o++] = b.data[i];
	}
	b.len = o;
	b.data[o] = '\0';
	*out = pg_buf_detach(&b, out_len);
	return *out ? 0 : nomem(p, "body");
}

static bool blank_line(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_wsp(s[i]) && s[i] != '\r')
			return false;
	return true;
}

/* In-body "From:", "Subject:", "Date:" lines at the top of the message
 * (git mailinfo's check_inbody_header()).  Sets *start after them. */
static int inbody_headers(struct parse *p, const char *s, size_t n, size_t *start)
{
	struct pg_mail *m = p->m;
	size_t pos = *start;

	while (pos < n) {
		size_t e = pg_mail_eol(s, n, pos), len = e - pos;
		const char *l = s + pos;
		char *v;

		if (len >= 5 && pg_mail_eq(l, 5, "from:")) {
			free(m->author_name);
			free(m->author_addr);
			m->author_name = m->author_addr = NULL;
			v = pg_mail_unfold(l + 5, len - 5);
			if (!v || pg_mail_mailbox(v, &m->author_name, &m->author_addr,
						  &m->flags) < 0) {
				free(v);
				return nomem(p, "in-body From");
			}
			free(v);
			m->flags |= PG_MAIL_INBODY_FROM;
		} else if (len >= 8 && pg_mail_eq(l, 8, "subject:")) {
			v = pg_mail_unfold(l + 8, len - 8);
			free(m->inbody_subject);
			m->inbody_subject = v ? decode_line(v, &m->flags) : NULL;
			free(v);
			if (!m->inbody_subject)
				return nomem(p, "in-body Subject");
		} else if (!(len >= 5 && pg_mail_eq(l, 5, "date:"))) {
			break;
		}
		pos = e < n ? e + 1 : n;
	}
	*start = pos;
	return 0;
}

static int message_out(struct parse *p, const char *s, size_t n,
		       enum pg_mail_charset cs)
{
	struct pg_mail *m = p->m;
	size_t a = 0, b = n;

	/* leading blank lines, in-body headers, blank lines again */
	for (int round = 0; round < 2; round++) {
		while (a < n) {
			size_t e = pg_mail_eol(s, n, a);

			if (!blank_line(s + a, e - a))
				break;
			a = e < n ? e + 1 : n;
		}
		if (round == 0 && inbody_headers(p, s, n, &a) < 0)
			return -1;
	}
	while (b > a && (is_wsp(s[b - 1]) || s[b - 1] == '\n' || s[b - 1] == '\r'))
		b--;
	if (text_out(p, s + a, b - a, cs, &m->message, &m->message_len) < 0)
		return -1;
	if (m->message_len) {
		/* a commit message ends in a newline */
		char *t = realloc(m->message, m->message_len + 2);

		if (!t)
			return nomem(p, "message");
		t[m->message_len++] = '\n';
		t[m->message_len] = '\0';
		m->message = t;
	}
	return 0;
}

static int body_parts(struct parse *p)
{
	struct pg_mail *m = p->m;
	struct pg_mail_mime w = { PG_BUF_INIT(0), false, PG_MAIL_CS_UTF8,
				  PG_BUF_INIT(0), 0 };
	struct pg_buf diff = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_strvec files = PG_STRVEC_INIT;
	struct pg_mail_split sp;
	const char *body;
	size_t blen;
	int rc = -1;

	if (pg_mail_mime_walk(&w, p->s + p->body, p->len - p->body,
			      pg_mail_header(m, "Content-Type"),
			      pg_mail_header(m, "Content-Transfer-Encoding"),
			      pg_mail_header(m, "Content-Disposition"), p->err) < 0)
		goto out;
	m->flags |= w.flags;
	body = w.body.data ? w.body.data : "";
	blen = w.body.len;

	pg_mail_split_body(body, blen, &sp);
	/* without a "---" or a diff (a cover letter, a reply) the message
	 * runs to the end, where format-patch put its "-- " signature */
	if (sp.msg_end == blen)
		sp.msg_end = pg_mail_cut_signature(body, blen);
	if (text_out(p, body, blen, w.body_cs, &m->body, &m->body_len) < 0 ||
	    message_out(p, body, sp.msg_end, w.body_cs) < 0)
		goto out;
	if (sp.has_notes) {
		if (text_out(p, body + sp.notes_start, sp.notes_end - sp.notes_start,
			     w.body_cs, &m->notes, &m->notes_len) < 0)
			goto out;
	}
	if ((sp.has_diff && pg_mail_diff_append(&diff, body, blen, sp.diff_start) < 0) ||
	    pg_buf_add(&diff, w.attach.data ? w.attach.data : "", w.attach.len) < 0) {
		nomem(p, "diff");
		goto out;
	}
	if (pg_mail_diff_files(diff.data ? diff.data : "", diff.len, &files) < 0) {
		nomem(p, "files");
		goto out;
	}
	m->files = files.v;
	m->nfiles = files.n;
	files.v = NULL;
	files.n = 0;
	m->diff = pg_buf_detach(&diff, &m->diff_len);
	if (!m->diff) {
		nomem(p, "diff");
		goto out;
	}
	m->has_patch = m->diff_len > 0;
	rc = 0;
out:
	pg_strvec_clear(&files);
	pg_buf_release(&diff);
	pg_buf_release(&w.body);
	pg_buf_release(&w.attach);
	return rc;
}

/* Every string non-NULL after success, as mail.h promises. */
static int fill_empty(struct parse *p)
{
	struct pg_mail *m = p->m;
	char **strs[] = {
		&m->notes, &m->inbody_subject, &m->message, &m->body,
	};

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (!*strs[i] && !(*strs[i] = xstrdup("")))
			return nomem(p, "strings");
	if (!m->author_addr) {
		m->author_name = xstrdup(m->from_name);
		m->author_addr = xstrdup(m->from_addr);
		if (!m->author_name || !m->author_addr)
			return nomem(p, "author");
	}
	return 0;
}

int pg_mail_parse_opts(struct pg_mail *m, const char *buf, size_t len,
		       const struct pg_mail_opts *opts, struct pg_err *err)
{
	struct pg_mail_opts o = PG_MAIL_OPTS_INIT;
	struct parse p;
	char *norm = NULL;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	memset(&p, 0, sizeof(p));
	if (opts)
		o = *opts;
	if (!o.max_size)
		o.max_size = PG_MAIL_MAX_SIZE;
	if (!o.max_header_bytes)
		o.max_header_bytes = PG_MAIL_MAX_HEADER_BYTES;
	if (!o.max_headers)
		o.max_headers = PG_MAIL_MAX_HEADERS;
	if (len > o.max_size) {
		pg_err_set(err, PG_ETOOBIG, "mail larger than %zu bytes (%zu bytes)",
			   o.max_size, len);
		goto out;
	}
	p.m = m;
	p.err = err;
	norm = normalise(buf ? buf : "", len, &p.len);
	if (!norm) {
		nomem(&p, "mail");
		goto out;
	}
	p.s = norm;
	skip_envelope(&p);
	if (p.hdr_start >= p.len) {
		pg_err_set(err, PG_EINVAL, "empty mail");
		goto out;
	}
	if (read_headers(&p, o.max_header_bytes, o.max_headers) < 0 ||
	    common_fields(&p) < 0 || body_parts(&p) < 0 || fill_empty(&p) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0)
		pg_mail_free(m);
	free(norm);
	return rc;
}

int pg_mail_parse(struct pg_mail *m, const char *buf, size_t len,
		  struct pg_err *err)
{
	return pg_mail_parse_opts(m, buf, len, NULL, err);
}
