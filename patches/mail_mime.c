/* SPDX-License-Identifier: MIT */
/*
 * MIME (RFC 2045, 2046, 2231): Content-Type parameters, multipart
 * splitting, quoted-printable and base64.  The walk keeps what patch
 * intake needs (the first text/plain part, the patch attachments) and
 * drops the rest.  Nested multiparts are entered up to PG_MAIL_MAX_DEPTH
 * deep; each level scans its bytes once, so the whole walk is linear.
 */
#include "mail_int.h"
#include "text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The longest media type kept; real ones are under 40 bytes. */
#define TYPE_MAX 64

struct ctype {
	char type[TYPE_MAX];	/* "text/plain", lower case */
	char *boundary;
	char *charset;
	char *name;		/* name= of Content-Type */
	char *filename;		/* filename= of Content-Disposition */
	bool attachment;	/* Content-Disposition: attachment */
};

static void ctype_free(struct ctype *ct)
{
	free(ct->boundary);
	free(ct->charset);
	free(ct->name);
	free(ct->filename);
}

static bool is_wsp(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_tspecial(char c)
{
	return strchr("()<>@,;:\\\"/[]?=", c) != NULL;
}

/* Percent-decoding of an RFC 2231 extended value. */
static int add_pct(struct pg_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		const char *h, *l;

		if (s[i] == '%' && i + 2 < n && s[i + 1] && s[i + 2] &&
		    (h = strchr(hex, lower(s[i + 1]))) &&
		    (l = strchr(hex, lower(s[i + 2])))) {
			if (pg_buf_addch(b, (char)((h - hex) << 4 | (l - hex))) < 0)
				return -1;
			i += 2;
		} else if (pg_buf_addch(b, s[i]) < 0) {
			return -1;
		}
	}
	return 0;
}

/*
 * The value of parameter `want` in a Content-Type or Content-Disposition
 * value ("text/plain; charset=utf-8"), unquoted, with RFC 2231 forms
 * (name*=utf-8''x%20y, name*0=..., name*1*=...) put together in the
 * order they appear.  Sets *out to a new string or leaves it NULL when
 * absent; -1 on ENOMEM.
 */
static int mime_param(const char *v, const char *want, char **out)
{
	struct pg_buf plain = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf ext = PG_BUF_INIT(PG_BUF_NOLIMIT);
	size_t len = strlen(v), wlen = strlen(want), i;
	bool have_plain = false, have_ext = false;
	int rc = -1;

	*out = NULL;
	i = strcspn(v, ";");
	while (i < len) {
		size_t a, a_end, val, val_end;
		bool quoted = false, extended = false, section0 = true;

		while (i < len && (is_wsp(v[i]) || v[i] == ';'))
			i++;
		for (a = i; i < len && v[i] != '=' && v[i] != ';' && !is_wsp(v[i]); i++)
			;
		a_end = i;
		while (i < len && is_wsp(v[i]))
			i++;
		if (i >= len || v[i] != '=')
			continue;
		i++;
		while (i < len && is_wsp(v[i]))
			i++;
		val = i;
		if (i < len && v[i] == '"') {
			quoted = true;
			for (val = ++i; i < len && v[i] != '"'; i++)
				if (v[i] == '\\' && i + 1 < len)
					i++;
			val_end = i;
			if (i < len)
				i++;
		} else {
			while (i < len && v[i] != ';' && !is_wsp(v[i]))
				i++;
			val_end = i;
		}
		if (a_end - a < wlen || !pg_mail_eq(v + a, wlen, want))
			continue;
		if (a_end - a == wlen) {
			/* a plain value: unquote */
			pg_buf_reset(&plain);
			for (size_t k = val; k < val_end; k++) {
				if (quoted && v[k] == '\\' && k + 1 < val_end)
					k++;
				if (pg_buf_addch(&plain, v[k]) < 0)
					goto out;
			}
			have_plain = true;
			continue;
		}
		/* want*  want*N  want*N*: anything else is another name */
		{
			size_t k = a + wlen;

			if (v[k++] != '*')
				continue;
			if (k < a_end && v[k] >= '0' && v[k] <= '9') {
				section0 = v[k] == '0' && (k + 1 == a_end || v[k + 1] == '*');
				while (k < a_end && v[k] >= '0' && v[k] <= '9')
					k++;
				if (k < a_end && v[k] == '*') {
					extended = true;
					k++;
				}
			} else {
				extended = true;
			}
			if (k != a_end)
				continue;
		}
		if (extended && section0) {
			/* charset'language'value: the charset is not
			 * converted (file names and boundaries are ASCII in
			 * practice) */
			const char *q1 = memchr(v + val, '\'', val_end - val);
			const char *q2 = q1 ? memchr(q1 + 1, '\'', (size_t)(v + val_end - q1 - 1)) : NULL;

			if (q2)
				val = (size_t)(q2 + 1 - v);
		}
		if (extended ? add_pct(&ext, v + val, val_end - val) < 0 :
		    pg_buf_add(&ext, v + val, val_end - val) < 0)
			goto out;
		have_ext = true;
	}
	if (have_ext) {
		*out = pg_buf_detach(&ext, NULL);
		if (!*out)
			goto out;
	} else if (have_plain) {
		*out = pg_buf_detach(&plain, NULL);
		if (!*out)
			goto out;
	}
	rc = 0;
out:
	pg_buf_release(&plain);
	pg_buf_release(&ext);
	return rc;
}

/* Parse Content-Type and Content-Disposition.  An absent or unreadable
 * type is dflt (RFC 2045 5.2: text/plain). */
static int ctype_parse(struct ctype *ct, const char *v, const char *disp,
		       const char *dflt)
{
	size_t n = 0;

	memset(ct, 0, sizeof(*ct));
	if (v) {
		const char *p = v;

		while (*p && is_wsp(*p))
			p++;
		while (p[n] && p[n] != ';' && !is_wsp(p[n]) && n + 1 < TYPE_MAX) {
			ct->type[n] = lower(p[n]);
			n++;
		}
		ct->type[n] = '\0';
		/* "type/subtype", both non-empty */
		if (!n || !strchr(ct->type, '/') || ct->type[0] == '/' ||
		    ct->type[n - 1] == '/' || is_tspecial(ct->type[0]))
			n = 0;
	}
	if (!n) {
		size_t l = strlen(dflt);

		memcpy(ct->type, dflt, l + 1);
	}
	if (v) {
		if (mime_param(v, "boundary", &ct->boundary) < 0 ||
		    mime_param(v, "charset", &ct->charset) < 0 ||
		    mime_param(v, "name", &ct->name) < 0)
			return -1;
	}
	if (disp) {
		const char *p = disp;

		while (*p && is_wsp(*p))
			p++;
		ct->attachment = pg_mail_eq(p, strcspn(p, "; \t"), "attachment");
		if (mime_param(disp, "filename", &ct->filename) < 0)
			return -1;
	}
	return 0;
}

static bool ends_with_ci(const char *s, const char *suffix)
{
	size_t n, m;

	if (!s)
		return false;
	n = strlen(s);
	m = strlen(suffix);
	return n >= m && pg_mail_eq(s + n - m, m, suffix);
}

static bool named_patch(const struct ctype *ct)
{
	return ends_with_ci(ct->filename, ".patch") || ends_with_ci(ct->filename, ".diff") ||
	       ends_with_ci(ct->name, ".patch") || ends_with_ci(ct->name, ".diff");
}

static bool is_patch_part(const struct ctype *ct)
{
	if (!strcmp(ct->type, "text/x-patch") || !strcmp(ct->type, "text/x-diff") ||
	    !strcmp(ct->type, "application/x-patch") ||
	    !strcmp(ct->type, "application/x-diff"))
		return true;
	return (!strcmp(ct->type, "text/plain") ||
		!strcmp(ct->type, "application/octet-stream")) && named_patch(ct);
}

/* ---- transfer encodings ------------------------------------------------ */

int pg_mail_qp_decode(struct pg_buf *out, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		const char *eq = memchr(s + i, '=', n - i);
		size_t run = eq ? (size_t)(eq - s) - i : n - i;
		int hi, lo;

		if (run && pg_buf_add(out, s + i, run) < 0)
			return -1;
		i += run;
		if (i >= n)
			break;
		/* s[i] == '=' */
		if (i + 2 < n && (hi = pg_hexval((unsigned char)s[i + 1])) >= 0 &&
		    (lo = pg_hexval((unsigned char)s[i + 2])) >= 0) {
			if (pg_buf_addch(out, (char)(hi << 4 | lo)) < 0)
				return -1;
			i += 3;
			continue;
		}
		/* soft line break "=\n", also with the white space some
		 * mailers leave between the '=' and the end of the line */
		{
			size_t j = i + 1;

			while (j < n && (s[j] == ' ' || s[j] == '\t'))
				j++;
			if (j >= n || s[j] == '\n') {
				i = j < n ? j + 1 : n;
				continue;
			}
		}
		/* a lone '=' is kept, as RFC 2045 6.7 suggests */
		if (pg_buf_addch(out, '=') < 0)
			return -1;
		i++;
	}
	return 0;
}

int pg_mail_b64_decode(struct pg_buf *out, const char *s, size_t n)
{
	uint32_t acc = 0;
	unsigned int bits = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int v;

		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+')
			v = 62;
		else if (c == '/')
			v = 63;
		else if (c == '=') {
			/* padding ends a group; a concatenated encoding may
			 * start again after it */
			acc = 0;
			bits = 0;
			continue;
		} else {
			continue;	/* line breaks and junk (RFC 2045 6.8) */
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (pg_buf_addch(out, (char)((acc >> bits) & 0xff)) < 0)
				return -1;
		}
	}
	return 0;
}

static int decode_cte(struct pg_buf *out, const char *cte, const char *s, size_t n)
{
	if (cte) {
		size_t l;

		while (*cte && is_wsp(*cte))
			cte++;
		l = strcspn(cte, " \t;(");
		if (pg_mail_eq(cte, l, "base64"))
			return pg_mail_b64_decode(out, s, n);
		if (pg_mail_eq(cte, l, "quoted-printable"))
			return pg_mail_qp_decode(out, s, n);
	}
	/* 7bit, 8bit, binary, and unknown ones: as they are */
	return pg_buf_add(out, s, n);
}

/* ---- the walk ------------------------------------------------------------ */

struct walk {
	struct pg_mail_mime *w;
	size_t max;		/* of every buffer: the entity is the bound */
	struct pg_err *err;
};

static int walk_entity(struct walk *k, const char *s, size_t len,
		       const char *ctv, const char *cte, const char *cdisp,
		       const char *dflt, unsigned int depth);

static int oom(struct walk *k)
{
	return pg_err_set(k->err, PG_ENOMEM, "mail: out of memory decoding MIME");
}

static int walk_leaf(struct walk *k, const struct ctype *ct, const char *cte,
		     const char *s, size_t len, unsigned int depth)
{
	struct pg_mail_mime *w = k->w;
	struct pg_buf dec = PG_BUF_INIT(k->max);
	size_t start;
	int rc = -1;

	if (is_patch_part(ct)) {
		if (decode_cte(&dec, cte, s, len) < 0)
			goto nomem;
		/* a whole "git format-patch" file attached is fine too: the
		 * diff starts at its first diff line */
		if (pg_mail_find_diff(dec.data ? dec.data : "", dec.len, 0, &start) &&
		    pg_mail_diff_append(&w->attach, dec.data, dec.len, start) < 0)
			goto nomem;
		rc = 0;
		goto out;
	}
	if (strcmp(ct->type, "text/plain") || w->have_body ||
	    (depth > 0 && ct->attachment)) {
		rc = 0;
		goto out;
	}
	if (decode_cte(&w->body, cte, s, len) < 0)
		goto nomem;
	w->have_body = true;
	w->body_cs = ct->charset ? pg_mail_charset_of(ct->charset, strlen(ct->charset)) :
				   PG_MAIL_CS_UTF8;
	if (w->body_cs == PG_MAIL_CS_OTHER)
		w->flags |= PG_MAIL_RAW_CHARSET;
	rc = 0;
	goto out;
nomem:
	oom(k);
out:
	pg_buf_release(&dec);
	return rc;
}

/* The part s[0..len) of a multipart: its headers, then its body. */
static int walk_part(struct walk *k, const char *s, size_t len,
		     const char *dflt, unsigned int depth)
{
	char *ctv = NULL, *cte = NULL, *cdisp = NULL;
	struct pg_mail_field f;
	size_t pos = 0;
	int r, rc = -1;

	/* Part headers are read leniently: a line that is not a field ends
	 * them and starts the body (a part without the empty line). */
	while ((r = pg_mail_next_field(s, len, &pos, &f)) > 0) {
		char **slot = NULL;

		if (pg_mail_eq(f.name, f.name_len, "content-type"))
			slot = &ctv;
		else if (pg_mail_eq(f.name, f.name_len, "content-transfer-encoding"))
			slot = &cte;
		else if (pg_mail_eq(f.name, f.name_len, "content-disposition"))
			slot = &cdisp;
		if (!slot || *slot)
			continue;
		*slot = pg_mail_unfold(f.value, f.value_len);
		if (!*slot) {
			oom(k);
			goto out;
		}
	}
	rc = walk_entity(k, s + pos, len - pos, ctv, cte, cdisp, dflt, depth);
out:
	free(ctv);
	free(cte);
	free(cdisp);
	return rc;
}

/* Is the line s[0..n) a delimiter "--boundary" or the close delimiter
 * "--boundary--", both with optional trailing white space (RFC 2046 5.1.1)?
 * Returns 1, 2 for the close delimiter, 0 for neither. */
static int delimiter(const char *s, size_t n, const char *b, size_t blen)
{
	size_t i;
	int kind = 1;

	if (n < blen + 2 || s[0] != '-' || s[1] != '-' || memcmp(s + 2, b, blen))
		return 0;
	i = blen + 2;
	if (i + 2 <= n && s[i] == '-' && s[i + 1] == '-') {
		kind = 2;
		i += 2;
	}
	for (; i < n; i++)
		if (!is_wsp(s[i]))
			return 0;
	return kind;
}

static int walk_multipart(struct walk *k, const struct ctype *ct,
			  const char *s, size_t len, unsigned int depth)
{
	const char *dflt = strcmp(ct->type, "multipart/digest") ? "text/plain" :
								 "message/rfc822";
	size_t blen = strlen(ct->boundary), pos = 0, part = 0;
	bool open = false, seen = false;

	while (pos < len) {
		size_t e = pg_mail_eol(s, len, pos);
		int d = delimiter(s + pos, e - pos, ct->boundary, blen);

		if (d) {
			seen = true;
			if (open) {
				/* the line break before a delimiter belongs
				 * to the delimiter */
				size_t end = pos > part ? pos - 1 : part;

				if (walk_part(k, s + part, end - part, dflt, depth + 1) < 0)
					return -1;
			}
			if (d == 2) {
				open = false;
				break;		/* the epilogue is ignored */
			}
			open = true;
			part = e < len ? e + 1 : len;
		}
		pos = e < len ? e + 1 : len;
	}
	if (!seen) {
		/* no part at all: read the content as text rather than lose
		 * a patch in it */
		struct ctype text = { .type = "text/plain" };

		k->w->flags |= PG_MAIL_MIME_BROKEN;
		return walk_leaf(k, &text, NULL, s, len, depth);
	}
	if (open) {
		/* unterminated: the last part runs to the end */
		k->w->flags |= PG_MAIL_MIME_BROKEN;
		return walk_part(k, s + part, len - part, dflt, depth + 1);
	}
	return 0;
}

static int walk_entity(struct walk *k, const char *s, size_t len,
		       const char *ctv, const char *cte, const char *cdisp,
		       const char *dflt, unsigned int depth)
{
	struct ctype ct;
	int rc = -1;

	if (ctype_parse(&ct, ctv, cdisp, dflt) < 0) {
		oom(k);
		goto out;
	}
	if (!strncmp(ct.type, "multipart/", 10)) {
		if (depth >= PG_MAIL_MAX_DEPTH) {
			k->w->flags |= PG_MAIL_MIME_BROKEN;
			rc = 0;
			goto out;
		}
		if (ct.boundary && *ct.boundary) {
			rc = walk_multipart(k, &ct, s, len, depth);
			goto out;
		}
		/* no boundary: nothing to split on, read it as text */
		k->w->flags |= PG_MAIL_MIME_BROKEN;
		memcpy(ct.type, "text/plain", sizeof("text/plain"));
	}
	if (!strncmp(ct.type, "message/", 8)) {
		/* a forwarded mail is not this mail's patch */
		rc = 0;
		goto out;
	}
	rc = walk_leaf(k, &ct, cte, s, len, depth);
out:
	ctype_free(&ct);
	return rc;
}

int pg_mail_mime_walk(struct pg_mail_mime *w, const char *s, size_t len,
		      const char *ctype, const char *cte, const char *cdisp,
		      struct pg_err *err)
{
	/* Decoding never grows data (base64 and quoted-printable shrink
	 * it), so the entity's size bounds every buffer; the +1 lets an
	 * empty entity still produce a terminated buffer. */
	struct walk k = { w, len + 1, err };

	w->body.max = k.max;
	w->attach.max = k.max * 2 + 2;
	return walk_entity(&k, s, len, ctype, cte, cdisp, "text/plain", 0);
}
