/* SPDX-License-Identifier: MIT */
#ifndef PG_MAIL_H
#define PG_MAIL_H

/*
 * One e-mail, parsed the way `git mailinfo` reads a patch mail.
 *
 * pg_mail_parse() is a pure function over a buffer: no I/O, no globals,
 * every length bounded, linear in the size of the mail (a 10 MB mail
 * costs a few passes over 10 MB).  The result owns copies of everything,
 * so the input buffer may be freed afterwards.
 *
 *   struct pg_mail m;
 *   struct pg_err err = PG_ERR_INIT;
 *   if (pg_mail_parse(&m, blob, len, &err) < 0)
 *           store_rejected(blob, len, err.msg);    // err.code PG_EINVAL or PG_ETOOBIG
 *   else
 *           use(m.message_id, m.subject, m.diff, m.files, ...);
 *   pg_mail_free(&m);                              // safe in both cases
 *
 * What is decoded:
 *  - Headers (RFC 5322): unfolded, names compared case-insensitively.  CRLF
 *    input is turned into LF first, so a CRLF mail parses identically to
 *    the LF one.  One leading mbox "From " line is skipped (git
 *    format-patch files, old public-inbox imports).
 *  - Subject and display names: RFC 2047 encoded words (B and Q) decoded;
 *    utf-8 and us-ascii are copied, iso-8859-1 and windows-1252 converted
 *    to UTF-8 by hand, any other charset is kept as raw bytes and
 *    PG_MAIL_RAW_CHARSET is set.  White space between two adjacent encoded
 *    words is dropped (RFC 2047 section 6.2); control characters (tabs
 *    from folding, encoded newlines) become spaces.
 *  - MIME (RFC 2045/2046): nested multipart types (preamble and epilogue
 *    ignored), quoted-printable, base64, 7bit, 8bit, binary.  The body is
 *    the first text/plain part that is not an attachment; message/rfc822
 *    parts are not entered.
 *  - Patches, as git mailinfo splits them (see struct pg_mail below), from
 *    the body and from attachments: text/x-patch, text/x-diff,
 *    application/x-patch, application/x-diff, and text/plain or
 *    application/octet-stream whose file name ends in .patch or .diff.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

/* Default bounds (see struct pg_mail_opts). */
#define PG_MAIL_MAX_SIZE	(32u << 20)	/* whole mail */
#define PG_MAIL_MAX_HEADER_BYTES (256u << 10)	/* top-level header section */
#define PG_MAIL_MAX_HEADERS	1000u		/* top-level header fields */
#define PG_MAIL_MAX_DEPTH	16		/* nested multiparts entered */

/* Bits of pg_mail.flags: things worth knowing that are not failures. */
enum pg_mail_flag {
	PG_MAIL_NO_DATE		= 1u << 0, /* Date: absent or malformed; date_ms is 0 */
	PG_MAIL_RAW_CHARSET	= 1u << 1, /* a charset we do not convert: bytes kept raw */
	PG_MAIL_DMARC		= 1u << 2, /* From: was the list's rewrite; see from_name */
	PG_MAIL_MIME_BROKEN	= 1u << 3, /* missing boundary, unterminated multipart,
					    * nesting too deep: read on a best-effort basis */
	PG_MAIL_INBODY_FROM	= 1u << 4, /* author_* come from an in-body From: line */
};

/* One header field: name as written, value unfolded (line breaks of the
 * folding removed, other white space kept), trimmed, not decoded. */
struct pg_mail_header {
	char *name;
	char *value;
};

/*
 * The parse result.  After a successful pg_mail_parse() every char * is
 * non-NULL and NUL-terminated ("" when absent); lengths are authoritative
 * for body, message, notes and diff, which may hold NUL bytes from a
 * broken mail.
 */
struct pg_mail {
	struct pg_mail_header *headers;	/* every field, in order */
	size_t nheaders;

	char *message_id;	/* first msg-id of Message-ID, no <>; never "" */
	char *in_reply_to;	/* first msg-id of In-Reply-To */
	char **references;	/* msg-ids of References, in header order */
	size_t nreferences;
	char *subject;		/* decoded UTF-8, one line, trimmed; "Re:" etc. kept */
	bool is_reply;		/* subject starts with Re:/Aw:/Fw:/Fwd:/Sv:/Antw:
				 * (any case), or with a 2-3 letter word, a colon
				 * and "[" (b4's rule: "AW: [PATCH"), not "[EXT] Re:" */

	/*
	 * The sender, after undoing the DMARC From: rewrite of mailing lists
	 * (Mailman's "Name via dev <dev@dpdk.org>", Google Groups'
	 * "'Name' via group <group@googlegroups.com>").  The rule:
	 *   1. The From: is a rewrite when its address equals the list's own
	 *      address (List-Post's mailto:, or List-Id "<a.b.c>" read as
	 *      "a@b.c"; case-insensitive), or its display name ends in
	 *      " via WORD".
	 *   2. The author is then the first mailbox of X-Original-From, or
	 *      else the first mailbox of Reply-To unless its address is the
	 *      list's or the From: one; with neither, From: is reported
	 *      unchanged and no flag is set.
	 *   3. The name is that mailbox's display name, or when it has none
	 *      the From: name without its " via WORD" tail.
	 * PG_MAIL_DMARC is set when the rewrite was undone.
	 */
	char *from_name;	/* decoded display name ("" when none) */
	char *from_addr;	/* addr-spec, as written */

	/* The patch author: an in-body "From:" line at the top of the body
	 * (git format-patch writes one when the sender is not the author;
	 * PG_MAIL_INBODY_FROM set), else the same as from_name/from_addr. */
	char *author_name;
	char *author_addr;
	char *inbody_subject;	/* an in-body "Subject:" line, "" when none */

	int64_t date_ms;	/* Date: in ms since the epoch; 0 + PG_MAIL_NO_DATE */
	char *list_id;		/* List-Id's id without <> ("dev.dpdk.org"), or
				 * its whole value when it has no <> */
	unsigned int flags;	/* enum pg_mail_flag */

	/* The first text/plain part after transfer decoding, converted to
	 * UTF-8 as for the subject, CR before LF dropped; raw material for
	 * the trailer parser (base-commit: comes after the diff, so it is in
	 * here too).  "" for a mail without a text/plain part. */
	char *body;
	size_t body_len;

	/* git mailinfo's split of the body: the commit message runs up to the
	 * first line that is "---" (plus white space), "--- <file>",
	 * "diff -..." or "Index: ..." (without one, a cover letter or a
	 * reply, to the end less a "-- " signature); in-body
	 * From:/Subject:/Date: lines at its top are taken out, leading and
	 * trailing blank lines trimmed, UTF-8 as for the body.  Ends in a
	 * newline unless empty. */
	char *message;
	size_t message_len;
	/* After a "---" line, up to the diff: version notes and the diffstat,
	 * as written (UTF-8 as for the body). */
	char *notes;
	size_t notes_len;

	/* The diff: from the first "diff --git " line of the body to its end,
	 * then each patch attachment the same way, concatenated; a trailing
	 * "-- \n<version>\n" signature is cut from each.  Transfer-decoded
	 * but not charset-converted (bytes go to git apply as sent).  When
	 * there is no "diff --git" line, the first "--- " line followed by a
	 * "+++ " line starts a plain unified diff instead. */
	char *diff;
	size_t diff_len;
	bool has_patch;		/* diff_len > 0 */

	/* Paths the diff touches, from "diff --git a/X b/Y" (both when they
	 * differ: renames, copies), prefixes a/ b/ dropped, C-quoting undone,
	 * each once, in order of appearance. */
	char **files;
	size_t nfiles;
};

/* Bounds for pg_mail_parse_opts(); a 0 field takes the default. */
struct pg_mail_opts {
	size_t max_size;		/* PG_MAIL_MAX_SIZE */
	size_t max_header_bytes;	/* PG_MAIL_MAX_HEADER_BYTES */
	size_t max_headers;		/* PG_MAIL_MAX_HEADERS */
};

#define PG_MAIL_OPTS_INIT { 0, 0, 0 }

/*
 * Parse buf[0..len) into *m (which need not be initialised; it is
 * overwritten).  buf need not be NUL-terminated.
 *
 * Returns 0, or -1 with *m emptied (pg_mail_free() still safe) and err:
 *  - PG_ETOOBIG "mail larger than N bytes", "header section larger than
 *    N bytes", "more than N header fields";
 *  - PG_EINVAL for a mail that must be stored as rejected: "empty mail",
 *    "no header section (line 1 is not a header field)", "header section
 *    is not valid (line N: ...)" (a line that is neither a field nor a
 *    continuation, or holds a NUL byte), "no Message-ID header";
 *  - PG_ENOMEM.
 * An empty body, a missing or bad Date:, broken MIME are not failures
 * (see the flags).
 */
int pg_mail_parse(struct pg_mail *m, const char *buf, size_t len,
		  struct pg_err *err);

/* pg_mail_parse() with bounds; opts may be NULL for the defaults. */
int pg_mail_parse_opts(struct pg_mail *m, const char *buf, size_t len,
		       const struct pg_mail_opts *opts, struct pg_err *err);

/* Free everything *m owns and zero it.  m may be NULL. */
void pg_mail_free(struct pg_mail *m);

/* The value of the first header field called `name` (case-insensitive),
 * or NULL when there is none. */
const char *pg_mail_header(const struct pg_mail *m, const char *name);

/* The value of the n-th (from 0) field called `name`, or NULL. */
const char *pg_mail_header_nth(const struct pg_mail *m, const char *name,
			       size_t n);

/*
 * Decode RFC 2047 encoded words in an unfolded header value in[0..len)
 * and append the UTF-8 result to out (see the top of this file for the
 * charsets; PG_MAIL_RAW_CHARSET is or-ed into *flags when one is kept
 * raw; flags may be NULL).  Text that only looks like an encoded word
 * is copied as it is.  Control characters become spaces, NUL bytes are
 * dropped; nothing is trimmed.  Returns 0, or -1 when out is full
 * (errno E2BIG) or on ENOMEM, out then as it was on entry.
 */
int pg_mail_decode_header(const char *in, size_t len, struct pg_buf *out,
			  unsigned int *flags);

/*
 * Append a stable text dump of *m to out, one "key: value" per line,
 * values escaped (\\, \n, \r, \t, \xNN for other control bytes) so that
 * every value stays on its line: message_id, in_reply_to, references,
 * subject, is_reply, from_name, from_addr, author_name, author_addr,
 * date (ms and UTC), list_id, flags, body_lines, message_lines,
 * message_first, message_last, notes_lines, has_patch, diff_len,
 * diff_first, files and one "file:" line per path.  For golden tests and
 * `perfgate-controller mail show`.  Returns 0, or -1 when out is full
 * (errno E2BIG) or on ENOMEM.
 */
int pg_mail_dump(const struct pg_mail *m, struct pg_buf *out);

#endif
