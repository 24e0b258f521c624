/* SPDX-License-Identifier: MIT */
#ifndef PG_SANITIZE_H
#define PG_SANITIZE_H

/*
 * The one sanitiser for text from outside (mail headers, request paths,
 * agent-supplied strings) on its way to a person: a terminal, a log, a
 * mail, a JSON reader, later the dashboard.  The store keeps text as it
 * was received; call this where text leaves perfgate, not where it enters.
 *
 * What comes out is always valid UTF-8 and holds no character that can
 * move a cursor, clear a screen, start a line or reorder what is shown:
 *
 *   - bytes that are not UTF-8 (stray continuation bytes, overlong forms,
 *     surrogates, code points above U+10FFFF, sequences cut short) become
 *     U+FFFD, one for each maximal ill-formed subpart (as Unicode 3.9
 *     recommends, so "\xe2\x82" is one U+FFFD and "\xc0\xaf" two);
 *   - C0 controls and DEL become "\xHH" (two lower-case hex digits);
 *   - C1 controls U+0080-U+009F, the bidirectional controls (U+061C,
 *     U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and the line and
 *     paragraph separators U+2028, U+2029 (which some viewers break lines
 *     at) become "\uHHHH" (four lower-case hex digits).
 *
 * A backslash in the input stays as it is: the escapes are for reading,
 * not for decoding back (the store has the original), and doubling every
 * backslash would garble the many subjects that quote C ("fix \n in
 * printf").  So "\x1b" in the output is either an escaped ESC or those
 * four characters as sent; both are harmless to show.
 *
 * Valid text without such characters comes out byte for byte.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum pg_san_mode {
	/* One line (log lines, header fields, listings): LF, CR and TAB are
	 * escaped like every other control. */
	PG_SAN_LINE,
	/* A block of text (mail bodies, reports): LF and TAB are kept, and a
	 * CR only right before an LF (a lone CR would let text overwrite
	 * the line it is on). */
	PG_SAN_BLOCK,
};

/* The longest output of one input byte ("\xHH"): callers sizing a buffer
 * for n bytes of input need at most n * PG_SAN_GROWTH bytes. */
#define PG_SAN_GROWTH 4

/*
 * Append the sanitised form of s[0..len) to out (s need not be
 * NUL-terminated and may hold NULs, shown as "\x00").  Returns 0, or -1
 * with errno E2BIG or ENOMEM as pg_buf_add() (out then holds a valid
 * prefix of the output, cut at a character boundary).
 */
int pg_sanitize(struct pg_buf *out, const char *s, size_t len, enum pg_san_mode mode);

/* The sanitised form of the C string s (NULL is taken as "") as a new
 * malloc'd string, or NULL when out of memory. */
char *pg_sanitize_dup(const char *s, enum pg_san_mode mode);

/* True when pg_sanitize() would give s[0..len) back unchanged. */
bool pg_sanitize_is_clean(const char *s, size_t len, enum pg_san_mode mode);

/*
 * The JSON form, for a whole printed JSON document (cJSON's output, which
 * escapes '"', '\' and C0 inside strings but leaves other bytes raw):
 * appends json[0..len) to out with invalid UTF-8 made "\ufffd", and DEL,
 * the C1 controls and the characters above made "\u00HH"/"\uHHHH" escapes,
 * which JSON readers decode to the same text.  Raw C0 bytes other than
 * the white space LF, CR and TAB (never in cJSON's output) become "\u00HH"
 * too.  Only bytes from 0x7f up and C0 are touched, and in cJSON's output
 * those occur only inside strings, so the document keeps its structure.
 * The result is ASCII-compatible valid UTF-8.  Returns as pg_sanitize().
 */
int pg_sanitize_json(struct pg_buf *out, const char *json, size_t len);

/*
 * Decode one UTF-8 character strictly from s[0..len), len > 0.  Returns
 * the bytes it took (1 to 4) and sets *cp to the code point, or to -1 when
 * those bytes are a maximal ill-formed subpart (then 1 to 3 bytes).
 */
size_t pg_utf8_decode(const char *s, size_t len, int32_t *cp);

/* True for the code points pg_sanitize() escapes in mode: C0 (but LF and
 * TAB in PG_SAN_BLOCK), DEL, C1, the bidirectional controls, U+2028 and
 * U+2029.  (A CR before an LF, kept in PG_SAN_BLOCK, is the one case that
 * depends on what follows.) */
bool pg_sanitize_cp_unsafe(int32_t cp, enum pg_san_mode mode);

#endif
