/* SPDX-License-Identifier: MIT */
#ifndef PG_SUBJECT_H
#define PG_SUBJECT_H

/*
 * Patch mail subjects: "[PATCH v3 02/10] net/ice: fix foo" into version,
 * patch number, series size, flags, tags and title.
 *
 * The parser follows Patchwork (parser.py: clean_subject, split_prefixes,
 * parse_series_marker, parse_version) and b4 (LoreSubject), as described
 * in shared/reference/patchwork_publicinbox.md section 4.  It is a pure
 * function over a C string: no allocation, no I/O, no globals, one pass
 * with constant look-ahead, and a fixed-size result.  The subject must
 * already be RFC 2047-decoded (UTF-8) and unfolded.
 *
 * What is accepted, in order:
 *
 *  1. Leading prefixes, in any order and repeated, each followed by
 *     optional white space:
 *     - a reply or forward marker "Re:", "Aw:", "Fw:", "Fwd:" (any case),
 *       or the word without a colon when a '[' follows ("Re [PATCH]", as
 *       Patchwork's "^(re|fwd?)[:\s]"): sets is_reply.  Markers after
 *       the first bracket group that says PATCH, RFC, RESEND, vN or N/M
 *       are title text ("[PATCH] Re: foo" is a patch titled "Re: foo").
 *     - a DPDK test-report marker "|SUCCESS|", "|FAILURE|", "|WARNING|" or
 *       "|PENDING|" (any case), before any bracket group, optionally
 *       followed by "pwN", "pwN-M" (a Loongson series range) or "pw?":
 *       sets is_test_report, report and report_pwid (0 for "pw?").  The
 *       rest is parsed as usual, so the reported patch's prefixes show.
 *     - a bracket group "[...]", which ends at the ']' that balances its
 *       '[' (inner brackets are separators, as b4 flattens them).  An
 *       unterminated '[' ends the prefixes; it and the rest are the title.
 *  2. Inside a bracket group, tokens are separated by white space, ',' or
 *     ';' (Patchwork splits on "[,\s]+").  Each token is, case-insensitive:
 *     - "PATCH": is_patch.  "PATCHvN" (b4; Patchwork leaves this at v1):
 *       is_patch and version N.
 *     - "RFC" / "RFCvN": is_rfc (and version N).
 *     - "RESEND": is_resend.
 *     - "vN" with N in 1..9999: the version.  The first one wins (Patchwork
 *       takes the first matching prefix); later ones are dropped.
 *     - "N/M", or "N of M" over three tokens (Mercurial), with N in 0..M and
 *       M in 1..9999 (four digits at most, as b4): number N of total M.
 *       The first one wins.  N = 0 is a cover letter.  A marker out of
 *       range ("3/2", "1/0") is kept as a tag, not trusted as a counter.
 *     - anything else is a tag, lowercased ("dpdk-dev", "net-next",
 *       "21.11", "ext").  A tag of the form NN.NN is also a stable branch
 *       (DPDK sends stable backports as "[PATCH 21.11]").  Duplicates are
 *       kept once.  Patchwork drops the project name "dpdk"; here it is a
 *       tag like any other.
 *  3. A "vN:" marker at the very start of what follows the prefixes
 *     ("v2: net/x: fix"): the version unless one came from the brackets.
 *     It is removed from the title.  (An extension: Patchwork ignores it.)
 *  4. The title is the rest, with runs of white space and ASCII control
 *     characters collapsed to one space and trimmed.  Other bytes (UTF-8)
 *     are copied unchanged.  It is cut to PG_SUBJECT_TITLE_MAX - 1 bytes
 *     on a UTF-8 character boundary (title_truncated is then set).
 *  5. When no version came from the prefixes, "(vN)" anywhere in the title
 *     is the version (Patchwork's fallback); it stays in the title.
 *
 * Results and defaults:
 *  - version is 1 unless given (has_version tells whether it was).
 *  - has_counter tells whether an N/M marker was seen; without one a patch
 *    (is_patch) is number 1 of 1, as Patchwork and b4 infer, and anything
 *    else is 0 of 0.  is_cover is has_counter && number == 0.
 *  - is_patch is PATCH (or PATCHvN) among the prefixes, or an N/M marker.
 *    It is what the subject claims: whether the mail holds a diff is for
 *    the mail parser to say.
 *
 * Deliberate differences from Patchwork, for intake's sake:
 *  - "[EXT] Re: [PATCH] foo" is a reply with tag "ext" and title "foo"
 *    (Patchwork and b4 call it a patch titled "Re: [PATCH] foo"); corporate
 *    gateways and old mailman lists put their tag before the "Re:", and a
 *    reply must never be taken for a new submission.
 *  - "Fwd:"/"Fw:" set is_reply too: a forwarded patch is not a new one.
 *  - Patchwork strips "Re " without a colon before anything; here only
 *    before a bracket group, so that titles starting with the word "re"
 *    survive.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Size of title[] and key[], including the NUL. */
#define PG_SUBJECT_TITLE_MAX 1024
/* Most tags kept, and the size of one (including the NUL): longer tags
 * and tags beyond the count are dropped and tags_dropped is set. */
#define PG_SUBJECT_TAGS_MAX 8
#define PG_SUBJECT_TAG_MAX 32
/* Most stable branch tags kept (each also appears in tags[]). */
#define PG_SUBJECT_STABLE_MAX 4

/* Status of a DPDK test-report mail ("|SUCCESS| pw123 ..."). */
enum pg_subject_report {
	PG_SUBJECT_REPORT_NONE = 0,
	PG_SUBJECT_REPORT_SUCCESS,
	PG_SUBJECT_REPORT_WARNING,
	PG_SUBJECT_REPORT_FAILURE,
	PG_SUBJECT_REPORT_PENDING,
};

struct pg_subject {
	bool is_patch;		/* PATCH prefix or an N/M marker */
	bool is_rfc;
	bool is_resend;
	bool is_reply;		/* Re:, Aw:, Fw:, Fwd: */
	bool is_cover;		/* explicit N/M with N == 0 */
	bool is_test_report;	/* |STATUS| pwN ...: intake ignores it */
	bool has_version;	/* version came from the subject, not the default */
	bool has_counter;	/* number/total came from an N/M marker */
	bool title_truncated;
	bool tags_dropped;	/* a tag was too long or over the count */

	unsigned int version;	/* >= 1 */
	unsigned int number;	/* 0 for a cover letter */
	unsigned int total;

	enum pg_subject_report report;
	uint64_t report_pwid;		/* Patchwork patch id, 0 if not given */
	uint64_t report_pwid_last;	/* last of a "pwN-M" range, else = pwid */

	size_t ntags;
	char tags[PG_SUBJECT_TAGS_MAX][PG_SUBJECT_TAG_MAX];
	size_t nstable;
	char stable[PG_SUBJECT_STABLE_MAX][PG_SUBJECT_TAG_MAX];

	char title[PG_SUBJECT_TITLE_MAX];
	/* Title for matching one version of a series with the next: see
	 * pg_subject_series_key(). */
	char key[PG_SUBJECT_TITLE_MAX];
};

/*
 * Parse subject (NUL-terminated) into *out, which is overwritten entirely.
 * Any input is accepted: text that is not a patch subject gives is_patch
 * false and the whole text as title.  Runs in time linear in the length of
 * the subject with no allocation; safe to call from any thread.
 *
 * Returns 0, or -1 when subject or out is NULL (*out, if given, is then
 * cleared to an empty non-patch subject).
 */
int pg_subject_parse(const char *subject, struct pg_subject *out);

/*
 * Write the series key of title (a parsed title, or any text) into
 * out[outlen]: ASCII letters lowercased, "(vN)" version markers removed,
 * white space collapsed to single spaces and trimmed.  Two versions of one
 * series, "[PATCH v2 1/3] Net/X: fix  foo" and "[PATCH 1/3] net/x: fix foo
 * (v1)", have the same key.  Truncated on a UTF-8 boundary when out is too
 * small.
 *
 * Returns the length written (excluding the NUL), or -1 when title or out
 * is NULL or outlen is 0.
 */
int pg_subject_series_key(const char *title, char *out, size_t outlen);

/* Name of a report status: "SUCCESS", ..., or "-" for none. */
const char *pg_subject_report_name(enum pg_subject_report r);

/*
 * Append a one-line description of s to out (no newline), the format of
 * the golden files tests/subject/cases.ok:
 *
 *   v=3 n=2/10 flags=patch,ver,count tags=dpdk-dev stable=- report=- \
 *     title="net/ice: fix foo" key="net/ice: fix foo"
 *
 * flags lists patch, rfc, resend, reply, cover, report, ver (has_version),
 * count (has_counter), trunc (title_truncated) and tagdrop, or "-";
 * report is "-" or STATUS:pwN[-M]; in the quoted strings '"' and '\' are
 * escaped with '\'.
 *
 * Returns 0, or -1 with errno from pg_buf_add() (E2BIG, ENOMEM).
 */
int pg_subject_dump(const struct pg_subject *s, struct pg_buf *out);

#endif
