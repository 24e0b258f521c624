/* SPDX-License-Identifier: MIT */
/*
 * pg_workspace: drive the agent's workspace (agent/workspace.h) from test
 * scripts and by hand.
 *
 *   pg_workspace WORK TREE URL COMMIT SLOT [MBOX...]
 *       Make sure the mirror of TREE under WORK has COMMIT (fetching URL
 *       when it does not), check COMMIT out in slot SLOT, then apply each
 *       MBOX in turn (mboxrd, as the controller serves; plain format-patch
 *       output reads the same).  Prints
 *           mirror PATH ms=N
 *           checkout PATH ms=N
 *       then one line per patch as pg_apply does:
 *           MBOX I/N METHOD COMMIT SUBJECT
 *           MBOX I/N failed FILE HUNK DESCRIPTION
 *
 * Exit status: 0 done, 1 a patch failed, 2 usage, 3 error (on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "buf.h"
#include "err.h"
#include "fsutil.h"
#include "log.h"
#include "timeutil.h"
#include "workspace.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_ERROR 3
#define MBOX_MAX (64u << 20)

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int apply_file(const char *src, const char *path)
{
	struct pg_buf mbox = PG_BUF_INIT(MBOX_MAX), line = PG_BUF_INIT(8192);
	struct pg_apply_result res = PG_APPLY_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	int rc, ret = EXIT_ERROR;

	if (pg_read_file(path, &mbox, &err) < 0) {
		fprintf(stderr, "pg_workspace: %s\n", err.msg);
		goto out;
	}
	rc = ws_apply(src, mbox.data ? mbox.data : "", mbox.len, &res, &err);
	for (size_t i = 0; i < res.n_patches; i++) {
		const struct pg_apply_patch *p = &res.patches[i];

		if (p->method != PG_APPLY_NOT_TRIED && p->method != PG_APPLY_FAILED)
			printf("%s %zu/%zu %s %s %s\n", base_name(path), i + 1, res.n_patches,
			       pg_apply_method_name(p->method), p->commit, p->subject);
	}
	if (rc < 0) {
		fprintf(stderr, "pg_workspace: %s\n", err.msg);
		goto out;
	}
	if (rc > 0) {
		if (pg_apply_describe(&res, &line) < 0)
			goto out;
		printf("%s %zu/%zu failed %s %zu %s\n", base_name(path), res.failed_patch,
		       res.n_patches, res.failed_file ? res.failed_file : "-", res.failed_hunk_index,
		       pg_buf_str(&line));
		ret = EXIT_FAILED;
		goto out;
	}
	ret = 0;
out:
	pg_apply_result_release(&res);
	pg_buf_release(&line);
	pg_buf_release(&mbox);
	return ret;
}

int main(int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	char *mirror = NULL, *src = NULL;
	int64_t t0;
	int ret = EXIT_ERROR;

	pg_log_init("pg_workspace");
	pg_log_set_levels("warn");
	if (argc < 6) {
		fprintf(stderr, "usage: pg_workspace WORK TREE URL COMMIT SLOT [MBOX...]\n");
		return EXIT_USAGE;
	}
	t0 = pg_time_mono_ms();
	if (ws_mirror_sync(argv[1], argv[2], argv[3], argv[4], &mirror, &err) < 0) {
		fprintf(stderr, "pg_workspace: %s\n", err.msg);
		goto out;
	}
	printf("mirror %s ms=%lld\n", mirror, (long long)(pg_time_mono_ms() - t0));
	t0 = pg_time_mono_ms();
	if (ws_checkout(argv[1], argv[2], argv[5], mirror, argv[4], &src, &err) < 0) {
		fprintf(stderr, "pg_workspace: %s\n", err.msg);
		goto out;
	}
	printf("checkout %s ms=%lld\n", src, (long long)(pg_time_mono_ms() - t0));
	ret = 0;
	for (int i = 6; i < argc && ret == 0; i++)
		ret = apply_file(src, argv[i]);
out:
	fflush(stdout);
	free(src);
	free(mirror);
	return ret;
}
