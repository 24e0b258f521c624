/* SPDX-License-Identifier: MIT */
#ifndef PG_TRAILERS_H
#define PG_TRAILERS_H

/*
 * Trailers of a patch mail body: what intake acts on (Depends-on:,
 * base-commit:, Recheck-request:) and who signed, acked, reviewed and
 * tested (for the dashboard).
 *
 * pg_trailers_parse() is a pure function over a buffer: one pass over the
 * lines, no I/O, no globals; it allocates only the result lists, each with
 * a fixed maximum.  The body is the decoded text of one mail (commit
 * message, notes, diff, git's trailing lines), LF or CRLF.
 *
 * Where each line sits decides whether it counts.  The body is read as
 *
 *   message  the commit message, a cover letter or a reply, up to a line
 *            "---" (only white space after it);
 *   notes    from that line up to the diff (diffstat, changelog);
 *   diff     from a line "diff --git " (or "--- x" directly followed by
 *            "+++ y"): file headers, hunks counted by their "@@ -a,b +c,d
 *            @@" line counts (an empty line in a hunk is context, as for
 *            git apply), "GIT binary patch" sections up to their blank
 *            line.  A hunk that runs out of lines of its kind ends early.
 *   after    from the first line after the hunks that is neither a file
 *            header nor blank: git's "base-commit:" and
 *            "prerequisite-patch-id:" lines live here;
 *   end      from a line exactly "-- " (the signature) or starting
 *            "-----Original Message-----" (any case; Outlook appends the
 *            mail it answers unquoted): nothing there counts.
 *
 * A trailer is a line that starts, in column 0, with its key (any case)
 * and a colon; white space after the colon is optional.  Lines starting
 * with '>' (quoted mail) or white space never match, so a reply quoting
 * somebody's Recheck-request does not trigger a recheck.
 *
 *   Depends-on:      message, notes, after (Patchwork's mbox moves the text
 *                    after the diff in front of it, into the notes: a mail
 *                    means the same from an archive and from Patchwork;
 *                    DPDK asks for it in the message or the notes).  Items
 *                    separated by ',' or white space,
 *                    up to a '(' or '"' (DPDK adds the title in brackets):
 *                    "series-N" and "patch-N" (DPDK), "<msgid>" or a bare
 *                    "local@domain" (printable ASCII, at most 255 bytes),
 *                    and a Patchwork URL ("...?series=N",
 *                    ".../patch/N/", ".../patch/<msgid>/", %XX decoded).
 *                    Duplicates are kept once.
 *   base-commit:     message, notes, after: 40 or 64 hex digits (stored
 *                    lowercase); the first one wins.  Cover letters carry
 *                    it in their message, patches after the diff.
 *   prerequisite-patch-id:  same places and form; collected.
 *   change-id:       same places (b4 writes it in the cover letter): the
 *                    whole value one token of [A-Za-z0-9._-]; the first
 *                    one wins.
 *   Recheck-request: message, notes, after (UNH-IOL's tools/get_reruns.py):
 *                    items separated by ',' and/or white space; an item is
 *                    a context [A-Za-z0-9_-]+ or key=value, of which only
 *                    rebase=<branch> ([A-Za-z0-9_./-]+) is used, the first
 *                    one winning; an item ending in another character
 *                    stops the line there (as the UNH regex does); a
 *                    context or branch too long for its field is skipped.
 *                    A line ending in ',' continues on the next line when
 *                    that starts with a letter, digit or '_' and is not a
 *                    "Key:" line of its own.  All Recheck-request lines of
 *                    a mail are merged, contexts kept once, in order.
 *   Signed-off-by:, Acked-by:, Reviewed-by:, Tested-by:  message only:
 *                    "Name <email>" (text after '>' ignored, one pair of
 *                    quotes around the name dropped), an address alone
 *                    (the first word, with '@') or a bare name.
 *
 * A line with a known key and a value that yields nothing usable (a short
 * hash, an unknown Depends-on form) counts in `malformed` and is
 * otherwise ignored.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

/* Largest body accepted (PG_ETOOBIG beyond). */
#define PG_TRAILERS_BODY_MAX (64u * 1024 * 1024)
/* Most items in each list: more is PG_ETOOBIG, since acting on part of a
 * dependency or recheck list would be wrong, and no real mail comes near. */
#define PG_TRAILERS_DEPS_MAX 64
#define PG_TRAILERS_PREREQ_MAX 64
#define PG_TRAILERS_PEOPLE_MAX 256
#define PG_TRAILERS_CONTEXTS_MAX 32
/* Sizes of the string fields, including the NUL. */
#define PG_TRAILERS_MSGID_MAX 256	/* Patchwork keeps 255 */
#define PG_TRAILERS_HASH_MAX 65		/* SHA-1 40 or SHA-256 64 hex */
#define PG_TRAILERS_ID_MAX 128		/* change-id */
#define PG_TRAILERS_CTX_MAX 64		/* a context or a branch name */
#define PG_TRAILERS_NAME_MAX 128	/* longer names are cut (UTF-8 safe) */
#define PG_TRAILERS_EMAIL_MAX 256	/* longer addresses are malformed */

enum pg_dep_kind {
	PG_DEP_SERIES = 1,	/* Depends-on: series-N */
	PG_DEP_PATCH,		/* Depends-on: patch-N */
	PG_DEP_MSGID,		/* Depends-on: <msgid> */
};

struct pg_dep {
	enum pg_dep_kind kind;
	uint64_t id;				/* series or patch id, else 0 */
	char msgid[PG_TRAILERS_MSGID_MAX];	/* without '<' '>', else "" */
};

enum pg_person_role {
	PG_PERSON_SIGNED_OFF = 1,
	PG_PERSON_ACKED,
	PG_PERSON_REVIEWED,
	PG_PERSON_TESTED,
};

struct pg_person {
	enum pg_person_role role;
	char name[PG_TRAILERS_NAME_MAX];	/* "" when only an address */
	char email[PG_TRAILERS_EMAIL_MAX];	/* "" when only a name */
};

/* A recheck request: the contexts named, in order, and the branch to
 * rebase on first ("" for none). */
struct pg_recheck {
	char rebase[PG_TRAILERS_CTX_MAX];
	size_t ncontexts;
	char contexts[PG_TRAILERS_CONTEXTS_MAX][PG_TRAILERS_CTX_MAX];
};

struct pg_trailers {
	char base_commit[PG_TRAILERS_HASH_MAX];	/* "" when absent */
	char change_id[PG_TRAILERS_ID_MAX];	/* "" when absent */
	bool has_diff;		/* the body holds a diff */
	unsigned int malformed;	/* known keys with unusable values */
	struct pg_recheck recheck;	/* ncontexts 0: no recheck asked */

	size_t ndeps;
	struct pg_dep *deps;
	size_t nprereq;
	char (*prereq)[PG_TRAILERS_HASH_MAX];
	size_t npeople;
	struct pg_person *people;
};

#define PG_TRAILERS_INIT { 0 }

/*
 * Parse body[0..len) (need not be NUL-terminated; NUL bytes are ordinary
 * bytes that no value may contain) into *out.  *out must be initialised
 * (PG_TRAILERS_INIT, or released or filled before); what it held is
 * released first.  Time linear in len.
 *
 * Returns 0, or -1 with *out empty and err set: PG_EINVAL when body is
 * NULL with len > 0 or out is NULL, PG_ETOOBIG when len exceeds
 * PG_TRAILERS_BODY_MAX or a list exceeds its maximum, PG_ENOMEM.
 */
int pg_trailers_parse(const char *body, size_t len, struct pg_trailers *out,
		      struct pg_err *err);

/* Free the lists and reset *t to PG_TRAILERS_INIT.  NULL is a no-op. */
void pg_trailers_release(struct pg_trailers *t);

/*
 * Keep of t's recheck request the contexts that are ours: those equal
 * (byte for byte, case-sensitive, as Patchwork contexts are) to one of
 * our_contexts[0..n).  out gets them in the order requested, and the
 * request's rebase branch.
 *
 * Returns how many contexts are ours: 0 means there is nothing to recheck
 * (no request, or none of its contexts is ours; out->rebase is then
 * still copied).  NULL entries in our_contexts are skipped.
 */
size_t pg_trailers_recheck_ours(const struct pg_trailers *t, const char *const *our_contexts,
				size_t n, struct pg_recheck *out);

/* Names for printing: "series", "patch", "msgid"; "signed-off-by", ... */
const char *pg_dep_kind_name(enum pg_dep_kind kind);
const char *pg_person_role_name(enum pg_person_role role);

/*
 * Append a description of t to out, one item per line, the format of the
 * golden files tests/trailers/NAME.ok:
 *
 *   base-commit 1f0c...
 *   change-id 20240101-foo-1a2b3c
 *   prerequisite-patch-id 9a1b...
 *   depends-on series 12345
 *   depends-on msgid 20240101.1-1-a@example.org
 *   recheck rebase=main iol-unit-amd64-testing iol-compile-amd64-testing
 *   signed-off-by "Ada Lovelace" <ada@example.org>
 *   diff yes
 *   malformed 0
 *
 * Lines for absent items are left out; "diff" and "malformed" are always
 * there.  Returns 0, or -1 with errno from pg_buf_add().
 */
int pg_trailers_dump(const struct pg_trailers *t, struct pg_buf *out);

#endif
