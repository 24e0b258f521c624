/* SPDX-License-Identifier: MIT */
#ifndef CTL_OUT_H
#define CTL_OUT_H

/*
 * What the commands print to stdout for a person, in one place: text and
 * JSON go out through lib/sanitize.h, so that a subject, a name or a
 * Message-ID from a mail cannot drive the terminal or make the JSON
 * invalid UTF-8.  Views that hold such strings make them one line first
 * (ctl_out_oneline()), so that a newline in a field cannot forge a row.
 */

#include <stddef.h>

#include <cjson/cJSON.h>

#include "buf.h"

/* Write text[0..len) to stdout, pg_sanitize()d as a block (LF and TAB
 * kept).  Returns 0, or -1 when out of memory or stdout failed (errno
 * set). */
int ctl_out_text(const char *text, size_t len);

/* ctl_out_text() of a buffer's contents. */
int ctl_out_buf(const struct pg_buf *b);

/* Write doc to stdout as indented JSON (pg_json_print_safe()) and a
 * newline.  Returns 0 or -1 as ctl_out_text(). */
int ctl_out_json(const cJSON *doc);

/* Make every string (and key) in the view doc one line, in place, before
 * it is formatted as text.  Returns 0, or -1 when out of memory. */
int ctl_out_oneline(cJSON *doc);

#endif
