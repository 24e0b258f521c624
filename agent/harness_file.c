/* SPDX-License-Identifier: MIT */
/*
 * The mempool_perf harness on a worktree: rewrite or restore
 * app/test/test_mempool_perf.c in place, writing only when the content
 * changes so that ninja sees an unchanged file as unchanged.
 */
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"

struct test_file {
	char path[4096];
	mode_t mode;
	struct pg_buf text;
};

static int read_test(const char *src_dir, struct test_file *tf, struct pg_err *err)
{
	struct stat st;
	int n = snprintf(tf->path, sizeof(tf->path), "%s/%s", src_dir, HARNESS_TEST_PATH);

	if (n < 0 || (size_t)n >= sizeof(tf->path))
		return pg_err_set(err, PG_EINVAL, "%s: path too long", src_dir);
	if (stat(tf->path, &st) < 0) {
		if (errno == ENOENT)
			return pg_err_set(err, PG_ENOTFOUND, "%s: no such file (not a DPDK tree "
					  "with mempool_perf_autotest?)", tf->path);
		return pg_err_errno(err, "stat '%s'", tf->path);
	}
	tf->mode = st.st_mode & 07777;
	return pg_read_file(tf->path, &tf->text, err);
}

/* Replace the file when new differs from what was read. */
static int write_if_changed(struct test_file *tf, const struct pg_buf *new, bool *wrote,
			    struct pg_err *err)
{
	*wrote = false;
	if (new->len == tf->text.len &&
	    (new->len == 0 || memcmp(new->data, tf->text.data, new->len) == 0))
		return 0;
	if (pg_write_file_atomic(tf->path, new->data ? new->data : "", new->len, tf->mode,
				 err) < 0)
		return -1;
	*wrote = true;
	return 0;
}

int harness_apply_file(const char *src_dir, const struct harness_subset *s, bool *applied,
		       struct pg_err *err)
{
	struct test_file tf = { .text = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE) };
	struct pg_buf new = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE);
	bool wrote;
	int rc = -1, r;

	*applied = false;
	if (read_test(src_dir, &tf, err) < 0)
		goto out;
	r = harness_mempool_rewrite(pg_buf_str(&tf.text), tf.text.len, s, &new, err);
	if (r < 0)
		goto out;
	if (r > 0) {
		rc = 0;		/* not recognised: the caller falls back */
		goto out;
	}
	if (write_if_changed(&tf, &new, &wrote, err) < 0)
		goto out;
	*applied = true;
	rc = 0;
out:
	if (rc < 0)
		pg_err_prefix(err, "mempool_perf harness");
	pg_buf_release(&tf.text);
	pg_buf_release(&new);
	return rc;
}

int harness_restore_file(const char *src_dir, bool *restored, struct pg_err *err)
{
	struct test_file tf = { .text = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE) };
	struct pg_buf up = PG_BUF_INIT(HARNESS_MAX_SOURCE);
	bool wrote = false;
	int rc = -1;

	if (read_test(src_dir, &tf, err) < 0 ||
	    harness_mempool_restore(pg_buf_str(&tf.text), tf.text.len, &up, err) < 0 ||
	    write_if_changed(&tf, &up, &wrote, err) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0)
		pg_err_prefix(err, "mempool_perf harness");
	if (restored)
		*restored = wrote;
	pg_buf_release(&tf.text);
	pg_buf_release(&up);
	return rc;
}
