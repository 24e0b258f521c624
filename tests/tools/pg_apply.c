/* SPDX-License-Identifier: MIT */
/*
 * pg_apply: apply mboxes with perfgate's code (patches/apply.h), for the
 * apply corpus scripts and by hand.
 *
 *   pg_apply [-r] [-f FILE_BYTES] [-t TOTAL_BYTES] [-n FILES] REPO MBOX...
 *       Apply each MBOX in turn (prerequisites first, as the agent does)
 *       onto the checked-out HEAD of the non-bare repository REPO; -r reads
 *       the files as mboxrd (what the controller serves), default plain
 *       `git format-patch` output.  -f, -t and -n set the limits of
 *       struct pg_apply_limits (largest file, bytes written, files
 *       written; defaults PG_APPLY_DEFAULT_*), counted across all the
 *       MBOXes as one series.  One line per patch:
 *           MBOX I/N METHOD COMMIT SUBJECT           (applied; METHOD
 *                                                     "already" and COMMIT
 *                                                     "-" when the patch
 *                                                     was already in HEAD)
 *           MBOX I/N failed FILE HUNK DESCRIPTION    (FILE "-" and HUNK 0
 *                                                     when not known; the
 *                                                     description is
 *                                                     pg_apply_describe()'s)
 *       and nothing for the patches after a failure.  It stops at the
 *       first failure.
 *
 * Exit status: 0 all applied, 1 a patch failed (a path git refuses and a
 * limit reached are patch failures too), 2 usage, 3 error (message on
 * stderr).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "apply.h"
#include "buf.h"
#include "err.h"
#include "fsutil.h"
#include "gitutil.h"
#include "inbox.h"
#include "log.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_ERROR 3
#define MBOX_MAX (64u << 20)

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int apply_file(git_repository *repo, const char *path, const struct pg_apply_opts *opts)
{
	struct pg_buf mbox = PG_BUF_INIT(MBOX_MAX), line = PG_BUF_INIT(8192);
	struct pg_apply_result res = PG_APPLY_RESULT_INIT;
	struct pg_err err = PG_ERR_INIT;
	int rc, ret = EXIT_ERROR;

	if (pg_read_file(path, &mbox, &err) < 0) {
		fprintf(stderr, "pg_apply: %s\n", err.msg);
		goto out;
	}
	rc = pg_apply_mbox_opts(repo, mbox.data ? mbox.data : "", mbox.len, opts, &res, &err);
	for (size_t i = 0; i < res.n_patches; i++) {
		const struct pg_apply_patch *p = &res.patches[i];

		if (p->method == PG_APPLY_NOT_TRIED || p->method == PG_APPLY_FAILED)
			continue;
		printf("%s %zu/%zu %s %s %s\n", base_name(path), i + 1, res.n_patches,
		       pg_apply_method_name(p->method), *p->commit ? p->commit : "-", p->subject);
	}
	if (rc < 0) {
		fprintf(stderr, "pg_apply: %s: %s\n", path, err.msg);
		goto out;
	}
	if (rc > 0) {
		if (pg_apply_describe(&res, &line) < 0) {
			fprintf(stderr, "pg_apply: describe the failure: out of memory\n");
			goto out;
		}
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

/* A positive decimal number into *v; false when s is not one. */
static bool parse_u64(const char *s, uint64_t *v)
{
	unsigned long long n;
	char *end;

	if (!s || s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end || n == 0)
		return false;
	*v = n;
	return true;
}

int main(int argc, char **argv)
{
	struct pg_apply_opts opts = PG_APPLY_OPTS_INIT;
	struct pg_apply_usage usage = { 0, 0 };
	struct pg_err err = PG_ERR_INIT;
	git_repository *repo = NULL;
	int i, opt, rc, ret = 0;

	pg_log_init("pg_apply");
	opts.usage = &usage;
	while ((opt = getopt(argc, argv, "rf:t:n:")) != -1) {
		bool ok = true;

		switch (opt) {
		case 'r':
			opts.fmt = PG_MBOX_MBOXRD;
			break;
		case 'f':
			ok = parse_u64(optarg, &opts.limits.max_file_bytes);
			break;
		case 't':
			ok = parse_u64(optarg, &opts.limits.max_total_bytes);
			break;
		case 'n':
			ok = parse_u64(optarg, &opts.limits.max_files);
			break;
		default:
			ok = false;
			break;
		}
		if (!ok)
			argc = 0;	/* to the usage message */
	}
	i = optind;
	if (argc - i < 2) {
		fprintf(stderr, "usage: pg_apply [-r] [-f FILE_BYTES] [-t TOTAL_BYTES] [-n FILES] "
			"REPO MBOX...\n");
		return EXIT_USAGE;
	}
	if (pg_git_global_init(&err) < 0) {
		fprintf(stderr, "pg_apply: %s\n", err.msg);
		return EXIT_ERROR;
	}
	rc = git_repository_open_ext(&repo, argv[i], GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc < 0) {
		const git_error *e = git_error_last();

		fprintf(stderr, "pg_apply: open %s: %s\n", argv[i],
			e && e->message ? e->message : "failed");
		return EXIT_ERROR;
	}
	for (i++; i < argc && ret == 0; i++)
		ret = apply_file(repo, argv[i], &opts);
	git_repository_free(repo);
	fflush(stdout);
	return ret;
}
