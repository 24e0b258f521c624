/* SPDX-License-Identifier: MIT */
#ifndef CTL_REPORT_MAIL_H
#define CTL_REPORT_MAIL_H

/*
 * The test-report mail in DPDK's CI format (dpdk-ci's
 * tools/send-patch-report.sh, read back by tools/update-pw.sh on dpdk.org,
 * which turns it into a Patchwork check):
 *
 *   From: perfgate <perfgate@lab.example.org>
 *   To: test-report@dpdk.org
 *   Cc: Morten =?UTF-8?Q?Br=C3=B8rup?= <mb@smartsharesystems.com>
 *   Subject: |FAILURE| pw1234 [PATCH v2] mempool: test performance
 *   Date: Mon, 30 Nov 2026 04:30:00 +0000
 *   Message-ID: <perfgate.r42.perfgate-intel-Performance@lab.example.org>
 *   In-Reply-To: <20220124145953.14281-1-olivier.matz@6wind.com>
 *   References: <20220124145953.14281-1-olivier.matz@6wind.com>
 *   Auto-Submitted: auto-generated
 *   MIME-Version: 1.0
 *   Content-Type: text/plain; charset=UTF-8
 *   Content-Transfer-Encoding: 8bit
 *
 *   Test-Label: perfgate-intel-Performance
 *   Test-Status: FAILURE
 *   http://patches.dpdk.org/patch/1234/
 *
 *   _Performance Testing FAIL_
 *
 *   <the before/after table>
 *
 *   <the commands that reproduce the run>
 *
 * What dpdk.org's bot needs, and so what this module guarantees: the four
 * head lines are the first lines of the body, plain ASCII, never encoded
 * (update-pw.sh greps the archived page's first 9 lines for "Test-Label:",
 * "Test-Status:", "http://...dpdk.org/...patch/N" and "^_(.*)_$").  Its
 * pattern wants "http://": an https:// patch URL is not recognised there
 * (see ctl_config.h, mail.patch_url_template).
 *
 * As send-patch-report.sh does: the subject is "|STATUS| pwID SUBJECT"
 * with the first "[dpdk-dev] " removed from the patch's subject and runs of
 * white space made one space ("pw?" when the Patchwork id is unknown);
 * the label has its runs of white space made "-"; In-Reply-To and
 * References name the patch's Message-ID; the author is copied (Cc) only
 * when the status is not SUCCESS (REPORT_CC_AUTHOR_FAILURE, the default).
 *
 * Text from the patch's mail reaches people here, so it is made safe to
 * show (lib/sanitize.h) but never a reason to lose the report: in the
 * subject and display names, controls other than white space, C1 and
 * bidirectional characters become visible escapes ("\x1b", "\u202e") and
 * invalid UTF-8 U+FFFD; the body is sanitised as a block (LF and TAB
 * kept).  A patch Message-ID that is not one we can write back (control
 * bytes, white space, <>, non-ASCII, over REPORT_MAIL_MSGID_MAX) leaves
 * In-Reply-To and References out: the report is sent, unthreaded.
 *
 * The message: CRLF line ends; header fields folded at white space so that
 * no line is longer than 78 characters unless one word is; a subject or
 * display name with non-ASCII text gets RFC 2047 encoded words (UTF-8,
 * "Q"), only for the words that need it; the body is UTF-8 with
 * Content-Transfer-Encoding 7bit when it is all ASCII, 8bit otherwise,
 * and quoted-printable only when a line is longer than 998 bytes (RFC 5322's
 * limit; the head lines then stay readable unless they hold "=").  8bit
 * assumes the relay takes 8BITMIME, as every current MTA does.
 *
 * Everything here is pure: no I/O, no clock, no globals.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

/* Bounds on the inputs (bytes). */
#define REPORT_MAIL_ADDR_MAX 254	/* an addr-spec (RFC 5321's path limit) */
#define REPORT_MAIL_NAME_MAX 256	/* a display name */
#define REPORT_MAIL_MSGID_MAX 512	/* a Message-ID without <> */
#define REPORT_MAIL_SUBJECT_MAX 2048	/* the patch's subject */
#define REPORT_MAIL_DESC_MAX 200	/* the description: a few words */
#define REPORT_MAIL_LABEL_MAX 255	/* a Patchwork context */
#define REPORT_MAIL_URL_MAX 1024
#define REPORT_MAIL_CC_MAX 32		/* extra Cc addresses */
#define REPORT_MAIL_TEXT_MAX (4u << 20)	/* the table and the reproduce text, each */
/* The most a formatted message can take: both texts quoted-printable
 * (3 bytes a byte, plus soft breaks) and the rest. */
#define REPORT_MAIL_MAX (REPORT_MAIL_TEXT_MAX * 7u + 256u * 1024u)

/* The status words of the report; Patchwork's states success, warning and
 * fail map to them. */
enum report_status {
	REPORT_SUCCESS,
	REPORT_WARNING,
	REPORT_FAILURE,
};

/* When the patch's author is copied (Cc). */
enum report_cc_author {
	REPORT_CC_AUTHOR_FAILURE,	/* WARNING and FAILURE (DPDK's labs) */
	REPORT_CC_AUTHOR_NEVER,
	REPORT_CC_AUTHOR_ALWAYS,
};

/* A mailbox: addr is an addr-spec "local@domain" (dot-atom local part
 * of printable ASCII; quoted local parts are not supported), name a UTF-8
 * display name or NULL/"" for none. */
struct report_mail_addr {
	const char *name;
	const char *addr;
};

/* One report.  Strings are borrowed; NULL and "" mean absent where that is
 * allowed.  Message-IDs are given without the angle brackets. */
struct report_mail {
	struct report_mail_addr from;		/* required */
	struct report_mail_addr to;		/* required; "test-report@dpdk.org" */
	const struct report_mail_addr *cc;	/* always copied; at most REPORT_MAIL_CC_MAX */
	size_t n_cc;
	struct report_mail_addr author;		/* the patch's author; addr NULL: none */
	enum report_cc_author cc_author;
	const char *patch_msgid;		/* In-Reply-To, References; NULL or not a
						 * Message-ID: both left out */
	int64_t patch_id;			/* Patchwork patch id; <= 0: unknown ("pw?") */
	const char *patch_url;			/* the head line; NULL: none (as the
						 * script without a pwid) */
	const char *subject;			/* the patch's subject, decoded UTF-8 */
	const char *label;			/* Test-Label: the context */
	enum report_status status;
	const char *description;		/* required: the "_..._" line; one line
						 * of printable ASCII */
	const char *table;			/* the before/after table, or NULL */
	const char *reproduce;			/* the commands that reproduce, or NULL */
	const char *msgid;			/* required: this mail's Message-ID */
	int64_t date_ms;			/* Date:, ms since the epoch (shown in UTC) */
	bool alert;				/* a lab alert, not a patch's report: the
						 * subject is "[perfgate] " and subject as
						 * given, the body has no Test-Label,
						 * Test-Status or patch URL lines (dpdk.org's
						 * bot must not take it for a check), label
						 * and patch fields are not used */
};

/* "SUCCESS", "WARNING", "FAILURE". */
const char *report_status_name(enum report_status s);

/* Map a Patchwork check state: "success", "warning" or "fail".  Returns 0,
 * or -1 for any other state ("pending" has no report). */
int report_status_from_check(const char *state, enum report_status *out);

/* Parse "failure", "never" or "always".  Returns 0 or -1. */
int report_cc_author_parse(const char *s, enum report_cc_author *out);
const char *report_cc_author_name(enum report_cc_author c);

/*
 * Split a mailbox as written in a configuration: "addr@domain",
 * "Name <addr@domain>" or "\"Name, Jr.\" <addr@domain>" (quotes and
 * backslash escapes removed).  The name is trimmed; the address is checked
 * as report_mail_addr_ok() does.  *name and *addr are malloc'd (*name NULL
 * when there is none).  Returns 0, or -1 with PG_EINVAL (or PG_ENOMEM)
 * naming what is wrong; *name and *addr are NULL then.
 */
int report_mail_parse_mailbox(const char *s, char **name, char **addr, struct pg_err *err);

/* True when addr is an addr-spec this module writes: dot-atom local part,
 * "@", a domain of letters, digits, "-" and "." (or a [literal]), at most
 * REPORT_MAIL_ADDR_MAX bytes. */
bool report_mail_addr_ok(const char *addr);

/* True when s is a msg-id's inside this module writes back (RFC 5322
 * 3.6.4, read liberally as archives hold them): printable ASCII without
 * <, > and white space, 1 to REPORT_MAIL_MSGID_MAX bytes. */
bool report_mail_msgid_ok(const char *s);

/* The domain of an address: what follows its last "@", or NULL. */
const char *report_mail_addr_domain(const char *addr);

/*
 * The deterministic Message-ID of the report of (run_id, context), without
 * <>: "perfgate.r<run_id>.<context>@<domain>", so that a report sent again
 * after a crash is the same mail to every archive and threading reader.
 * context must be a Patchwork context slug ([A-Za-z0-9_-], at most
 * REPORT_MAIL_LABEL_MAX), domain a host name ([A-Za-z0-9-] labels joined
 * by single dots).  Returns the length written, or -1 with PG_EINVAL for a
 * bad argument or when out[outlen] is too small (out is "" then).
 */
int report_mail_msgid(int64_t run_id, const char *context, const char *domain,
		      char *out, size_t outlen, struct pg_err *err);

/*
 * Expand a patch URL template: every "{id}" becomes the decimal patch_id
 * (e.g. "http://patches.dpdk.org/patch/{id}/").  The template must have at
 * least one "{id}"; no other "{" is allowed.  Returns the length written,
 * or -1 with PG_EINVAL (out is "" then when outlen > 0).
 */
int report_mail_patch_url(const char *tmpl, int64_t patch_id, char *out, size_t outlen,
			  struct pg_err *err);

/*
 * The subject line, decoded (UTF-8, not yet RFC 2047-encoded):
 * "|STATUS| pw<id> <subject>" built as send-patch-report.sh builds it (see
 * above).  Appends to out.  Returns 0, or -1 with PG_EINVAL (subject over
 * REPORT_MAIL_SUBJECT_MAX) or PG_ENOMEM/PG_ETOOBIG (out full).
 */
int report_mail_subject(const char *subject, enum report_status status, int64_t patch_id,
			struct pg_buf *out, struct pg_err *err);

/* Whether the author is copied: an author address is given, the policy
 * says so for this status, and it is not already To or an extra Cc
 * (compared without case). */
bool report_mail_cc_author(const struct report_mail *r);

/*
 * The envelope recipients (RCPT TO): To, then each extra Cc, then the
 * author when report_mail_cc_author(); each address once (without case).
 * Stores at most max pointers into r's strings in rcpt[].  Returns the
 * number of recipients (which may exceed max: then only max were stored).
 */
size_t report_mail_rcpts(const struct report_mail *r, const char **rcpt, size_t max);

/*
 * Format the complete RFC 5322 message and append it to out (whose max
 * should be at least REPORT_MAIL_MAX for the largest inputs).  The same
 * inputs give the same bytes.
 *
 * Returns 0, or -1 with err:
 *   PG_EINVAL   an input is missing, malformed or over its bound; the
 *               message names the field ("from: 'x' is not an address",
 *               "description: must be one line of printable ASCII", ...)
 *   PG_ETOOBIG  out is full (nothing useful was appended)
 *   PG_ENOMEM
 * On failure out may hold a partial message: reset it before reuse.
 */
int report_mail_format(const struct report_mail *r, struct pg_buf *out, struct pg_err *err);

/*
 * A report described in JSON (report_mail_json.c), for the golden tests
 * (tests/mail_report/NAME.in) and the test tools.  Every member is
 * optional here; report_mail_format() says what is missing:
 *
 *   {"from": "perfgate <perfgate@lab.example.org>",  (mailboxes as
 *                                          report_mail_parse_mailbox() reads)
 *    "to": "test-report@dpdk.org",         (this is the default)
 *    "cc": ["a@example.org", ...],
 *    "author": "Morten Brørup <mb@smartsharesystems.com>",
 *    "cc_author": "failure",               (or "never", "always"; default failure)
 *    "patch_msgid": "<id@host>",           (the <> are optional)
 *    "patch_id": 1234,
 *    "patch_url": "..." or "patch_url_template": "http://patches.dpdk.org/patch/{id}/",
 *    "subject": "[dpdk-dev] [PATCH] ...", "label": "perfgate-demo-Performance",
 *    "status": "fail",                     (a Patchwork state: success, warning, fail)
 *    "description": "Performance Testing FAIL",
 *    "table": "...", "reproduce": "...",
 *    "msgid": "x@y" or "run_id": 42,       (run_id: report_mail_msgid() of the
 *                                          run, the label and the From domain)
 *    "date": "2026-11-30T04:30:00Z"}       (RFC 3339; default the epoch)
 *
 * in->r points into in's own storage and the parsed JSON.
 */
struct report_mail_input {
	struct report_mail r;
	cJSON *root;
	struct report_mail_addr cc[REPORT_MAIL_CC_MAX];
	char *owned[2 * REPORT_MAIL_CC_MAX + 6];	/* malloc'd names and addresses */
	size_t n_owned;
	char patch_msgid[REPORT_MAIL_MSGID_MAX + 1];
	char msgid[REPORT_MAIL_MSGID_MAX + 1];
	char patch_url[REPORT_MAIL_URL_MAX + 1];
};

/* Parse json[0..len) into *in (which need not be initialised).  Returns 0,
 * or -1 with PG_EINVAL naming the field (in is empty then; freeing it is
 * still safe). */
int report_mail_input_parse(struct report_mail_input *in, const char *json, size_t len,
			    struct pg_err *err);

/* Free what *in owns.  in may be NULL. */
void report_mail_input_free(struct report_mail_input *in);

#endif
