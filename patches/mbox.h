/* SPDX-License-Identifier: MIT */
#ifndef PG_MBOX_H
#define PG_MBOX_H

/*
 * Splitting an mbox into messages, as `git mailsplit` does.
 *
 * A message starts after a separator line: "From " followed by a tail
 * shaped like a date, "... hh:mm:ss year" (git's is_from_line(), see
 * pg_mbox_is_from_line()).  So the "From here on, ..." that `git
 * format-patch` and Patchwork leave unescaped in a commit message does
 * not split a message in two, while "From <sha> Mon Sep 17 00:00:00 2001",
 * "From mboxrd@z Thu Jan  1 00:00:00 1970" and "From patchwork Mon ..."
 * do.  As in git, any such line splits, blank line before it or not.
 *
 * Leading white space of the file is skipped.  When the first line is
 * not a separator, the file is one bare message, which is handed over
 * whole (git mailsplit does the same).  The separator line itself is not
 * part of a message; the lines up to the next separator are, including
 * the empty line an mbox writer puts before it.  CRLF files work (line
 * ends are kept: pg_mail_parse() reads CRLF).  Pure function over a
 * buffer, linear in its size.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"

enum pg_mbox_format {
	/* mboxo and plain concatenations ("git format-patch --stdout",
	 * Patchwork's mbox downloads): nothing is unescaped */
	PG_MBOX_MBOXO = 0,
	PG_MBOX_PLAIN = PG_MBOX_MBOXO,
	/* mboxrd (public-inbox, "git format-patch --pretty=mboxrd"): one
	 * '>' is removed from each line matching ^>+From  */
	PG_MBOX_MBOXRD,
};

/*
 * Called once per message with msg[0..len) (not NUL-terminated, valid
 * only during the call; it points into the input unless mboxrd
 * unescaping had to change it).  Return 0 to go on, a positive value to
 * stop quietly, -1 to stop with an error.
 */
typedef int (*pg_mbox_fn)(const char *msg, size_t len, void *arg);

/*
 * Split buf[0..len) and call fn for each message in order (also for an
 * empty one between two adjacent separators).
 *
 * Returns the number of messages handed to fn (0 for an empty or
 * all-blank buffer); when fn returned a positive value, the number
 * handed over so far including that one.  Returns -1 when fn returned -1
 * (err is then left as it is when fn already filled it through its arg,
 * else set to PG_ECONFLICT "mbox: stopped by the callback at message N")
 * or on PG_ENOMEM.
 */
ssize_t pg_mbox_split(const char *buf, size_t len, enum pg_mbox_format fmt,
		      pg_mbox_fn fn, void *arg, struct pg_err *err);

/*
 * git mailsplit's is_from_line(): line[0..len) (without its '\n'; a
 * trailing '\r' is fine) starts with "From ", is at least 19 bytes, and
 * its last ':' is preceded by "d:dd" and followed by "dd" and a year
 * greater than 90.
 */
bool pg_mbox_is_from_line(const char *line, size_t len);

#endif
