/* SPDX-License-Identifier: MIT */
#ifndef PG_MAIL_INT_H
#define PG_MAIL_INT_H

/*
 * Internals shared by mail.c (orchestration, DMARC), mail_dump.c, mail_header.c
 * (RFC 5322 fields, RFC 2047 words, addresses, msg-ids, charsets),
 * mail_mime.c (RFC 2045/2046) and mail_patch.c (git mailinfo's split).
 * Not for other modules: use mail.h.
 *
 * All text here is after CRLF -> LF normalisation, so a line ends in '\n'
 * (or at the end of the buffer).
 */

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "mail.h"
#include "vec.h"

/* Index of the '\n' ending the line that starts at pos, or len. */
size_t pg_mail_eol(const char *s, size_t len, size_t pos);

/* Start of the line after the one starting at pos (len at the end). */
size_t pg_mail_next_line(const char *s, size_t len, size_t pos);

/* ---- mail_header.c ---------------------------------------------------- */

/* One raw header field: value still folded (holds '\n'). */
struct pg_mail_field {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
	unsigned int lines;	/* physical lines it took */
};

/*
 * Read the header field starting at s[*pos].  Returns 1 with *f filled and
 * *pos after the field (continuation lines included); 0 at the end of the
 * header section (an empty line, consumed, or the end of the buffer); -1
 * when the line is not a header field or holds a NUL byte (*pos kept).
 */
int pg_mail_next_field(const char *s, size_t len, size_t *pos,
		       struct pg_mail_field *f);

/* Unfold and trim a raw value into a new string; NULL on ENOMEM. */
char *pg_mail_unfold(const char *v, size_t len);

/* Case-insensitive compare of s[0..n) with the C string lit. */
bool pg_mail_eq(const char *s, size_t n, const char *lit);

/* Msg-ids of a header value: the <...> tokens (outside comments), or the
 * white-space separated words when there is no '<' at all.  Angle brackets
 * and inner white space removed, empty ids skipped.  0 or -1 (ENOMEM). */
int pg_mail_msgids(const char *v, struct pg_strvec *out);

/* First mailbox of an address list: decoded display name (or the comment
 * of "addr (Name)") and addr-spec.  Both set to new strings, "" when
 * missing.  0 or -1 (ENOMEM). */
int pg_mail_mailbox(const char *v, char **name, char **addr,
		    unsigned int *flags);

enum pg_mail_charset {
	PG_MAIL_CS_UTF8,	/* utf-8 and us-ascii: copied */
	PG_MAIL_CS_LATIN1,
	PG_MAIL_CS_CP1252,
	PG_MAIL_CS_OTHER,	/* copied raw, PG_MAIL_RAW_CHARSET */
};

/* Charset label (an RFC 2231 "*lang" suffix ignored, any case). */
enum pg_mail_charset pg_mail_charset_of(const char *name, size_t len);

/* Append s[0..n) converted from cs to UTF-8.  Same return as pg_buf_add(). */
int pg_mail_to_utf8(struct pg_buf *out, enum pg_mail_charset cs,
		    const char *s, size_t n);

/* ---- mail_mime.c ------------------------------------------------------ */

/* What the MIME walk collects. */
struct pg_mail_mime {
	struct pg_buf body;		/* first text/plain part, transfer-decoded */
	bool have_body;
	enum pg_mail_charset body_cs;
	struct pg_buf attach;		/* diffs of patch attachments */
	unsigned int flags;		/* PG_MAIL_MIME_BROKEN, ... */
};

/* Walk the entity s[0..len) (the body of a mail or part) whose
 * Content-Type, Content-Transfer-Encoding and Content-Disposition values
 * are given (NULL when absent).  0 or -1 with err (ENOMEM). */
int pg_mail_mime_walk(struct pg_mail_mime *w, const char *s, size_t len,
		      const char *ctype, const char *cte, const char *cdisp,
		      struct pg_err *err);

/* Transfer-decoding into out.  Same return as pg_buf_add(). */
int pg_mail_qp_decode(struct pg_buf *out, const char *s, size_t n);
int pg_mail_b64_decode(struct pg_buf *out, const char *s, size_t n);

/* ---- mail_patch.c ----------------------------------------------------- */

/* git mailinfo's split of a body into message, notes and diff.  The
 * message is [0, msg_end); notes are [notes_start, notes_end) when
 * has_notes; the diff starts at diff_start when has_diff. */
struct pg_mail_split {
	size_t msg_end;
	bool has_notes;
	size_t notes_start;
	size_t notes_end;
	bool has_diff;
	size_t diff_start;
};

void pg_mail_split_body(const char *s, size_t n, struct pg_mail_split *sp);

/* Start of the diff in s[0..n) at or after `from`: the first "diff --git "
 * line, else the first "--- " line followed by a "+++ " line.  Returns
 * false when there is none. */
bool pg_mail_find_diff(const char *s, size_t n, size_t from, size_t *start);

/* Length of s[0..n) once a trailing "-- \n<signature>" is cut. */
size_t pg_mail_cut_signature(const char *s, size_t n);

/* Append the diff s[start..n), signature cut, to out, ending in '\n'.
 * Same return as pg_buf_add(). */
int pg_mail_diff_append(struct pg_buf *out, const char *s, size_t n,
			size_t start);

/* The paths touched by a diff, in order, each once.  0 or -1 (ENOMEM). */
int pg_mail_diff_files(const char *s, size_t n, struct pg_strvec *files);

#endif
