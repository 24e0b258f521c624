/* SPDX-License-Identifier: MIT */
#ifndef PG_APPLY_PATHS_H
#define PG_APPLY_PATHS_H

/*
 * git's rules for a path a patch may name (git's verify_path() with the
 * core.protectNTFS and core.protectHFS defaults), as a pure function over
 * a buffer, so that it can be fuzzed.  pg_apply_mbox() checks every path
 * of every delta with it (and, beyond it, that no path lies beyond a
 * symbolic link: that needs the trees, see apply.h).
 */

#include <stdbool.h>
#include <stddef.h>

/* Longer paths are refused: Linux cannot create them anyway (PATH_MAX),
 * and it bounds the work per path. */
#define PG_APPLY_PATH_MAX 4096

/*
 * Whether path[0..len) is a path git would write: relative, not empty, at
 * most PG_APPLY_PATH_MAX bytes, no byte below 0x20 nor 0x7f (NUL
 * included), and no component that is empty ("a//b", a trailing '/'),
 * ".", "..", or ".git" in any case, nor one that NTFS or HFS+ reads as
 * ".git": ".git" or "git~1" (any case) followed only by dots and spaces
 * up to the end or a ':' or '\\' (".git.", ".git ", "GIT~1", ".git::$INDEX_ALLOCATION"),
 * or ".git" with Unicode code points HFS+ ignores inside it (U+200C..200F,
 * U+202A..202E, U+206A..206F, U+FEFF, as UTF-8).
 *
 * Returns true, or false with *why (when why is not NULL) set to a static
 * string naming the rule, e.g. "path has a '..' component".  path may be
 * NULL only with len 0.
 */
bool pg_apply_path_ok(const char *path, size_t len, const char **why);

#endif
