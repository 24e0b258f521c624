/* SPDX-License-Identifier: MIT */
/*
 * The mempool_perf harness on a worktree: rewrite or restore
 * app/test/test_mempool_perf.c in place, writing only when the content
 * changes so that ninja sees an unchanged file as unchanged.
 */
#include "harness.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fmt.h"
#include "fsbeneath.h"

struct test_file {
	const char *root;	/* the slot: every access is beneath it */
	char path[4096];	/* root/HARNESS_TEST_PATH, for messages */
	mode_t mode;
	struct pg_buf text;
};

/* Read the test file beneath the slot: a patch may turn it, or app/test,
 * into a symbolic link, and the agent (root) must not read or replace
 * what such a link points to. */
static int read_test(const char *src_dir, struct test_file *tf, struct pg_err *err)
{
	struct stat st;

	if (pg_fmt(tf->path, sizeof(tf->path), "%s/%s", src_dir, HARNESS_TEST_PATH) < 0)
		return pg_err_set(err, PG_EINVAL, "%s: path too long", src_dir);
	tf->root = src_dir;
	if (pg_read_file_beneath(src_dir, HARNESS_TEST_PATH, &tf->text, &st, err) < 0) {
		if (err && err->code == PG_ENOTFOUND)
			return pg_err_set(err, PG_ENOTFOUND, "%s: no such file (not a DPDK tree "
					  "with mempool_perf_autotest?)", tf->path);
		return -1;
	}
	tf->mode = st.st_mode & 0777;
	return 0;
}

/* Replace the file when new differs from what was read. */
static int write_if_changed(struct test_file *tf, const struct pg_buf *new, bool *wrote,
			    struct pg_err *err)
{
	*wrote = false;
	if (new->len == tf->text.len &&
	    (new->len == 0 || memcmp(new->data, tf->text.data, new->len) == 0))
		return 0;
	if (pg_write_file_beneath_atomic(tf->root, HARNESS_TEST_PATH, new->data ? new->data : "",
					 new->len, tf->mode, err) < 0)
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
