/* SPDX-License-Identifier: MIT */
#ifndef TESTS_RMTREEFX_H
#define TESTS_RMTREEFX_H

/* Removing a test's scratch tree, depth first, never following a link
 * (FTW_PHYS): the tests plant links to directories outside on purpose. */

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static int fx_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove path and everything below it.  Returns 0 or -1 (errno). */
static inline int fx_rm_tree(const char *path)
{
	return nftw(path, fx_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
