/* SPDX-License-Identifier: MIT */
/*
 * harness-tool: drive the mempool_perf subset harness (agent/harness.h)
 * by hand and from scripts.
 *
 *   harness-tool rewrite FILE SUBSET_JSON
 *       Print the rewritten text of FILE (a test_mempool_perf.c).
 *   harness-tool restore FILE
 *       Print the upstream text of a rewritten FILE.
 *   harness-tool apply SRC_DIR SUBSET_JSON
 *       Rewrite SRC_DIR/app/test/test_mempool_perf.c in place; prints
 *       "applied" or "not recognised: REASON".
 *   harness-tool unapply SRC_DIR
 *       Restore it in place; prints "restored" or "unchanged".
 *   harness-tool plan SUBSET_JSON
 *       Print "lines N", "estimate_s S" and the result keys in print order.
 *
 * SUBSET_JSON is the job spec's "subset" object as text, e.g.
 * '{"cores":[1],"cache":[0,512],"bulk":[32],"keep":[128],"time_s":1}'.
 * Exit status: 0 done, 1 error, 2 usage, 3 layout not recognised (the
 * reason on stderr).
 */
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "fsutil.h"
#include "harness.h"
#include "json.h"

#define EXIT_USAGE 2
#define EXIT_NOT_RECOGNISED 3

static int usage(void)
{
	fprintf(stderr, "usage: harness-tool rewrite FILE SUBSET_JSON\n"
			"       harness-tool restore FILE\n"
			"       harness-tool apply SRC_DIR SUBSET_JSON\n"
			"       harness-tool unapply SRC_DIR\n"
			"       harness-tool plan SUBSET_JSON\n");
	return EXIT_USAGE;
}

static int load_subset(const char *text, struct harness_subset *s, struct pg_err *err)
{
	cJSON *j = NULL;
	int rc;

	if (pg_json_parse(text, strlen(text), &j, err) < 0)
		return -1;
	rc = harness_subset_from_json(j, s, err);
	cJSON_Delete(j);
	return rc;
}

static int write_all(const struct pg_buf *b)
{
	return b->len && fwrite(b->data, 1, b->len, stdout) != b->len ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf in = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE);
	struct pg_buf out = PG_BUF_INIT(2 * HARNESS_MAX_SOURCE);
	struct harness_subset s;
	int rc = 1, r;
	bool done;

	if (argc == 4 && strcmp(argv[1], "rewrite") == 0) {
		if (load_subset(argv[3], &s, &err) < 0 || pg_read_file(argv[2], &in, &err) < 0)
			goto out;
		r = harness_mempool_rewrite(pg_buf_str(&in), in.len, &s, &out, &err);
		if (r > 0) {
			rc = EXIT_NOT_RECOGNISED;
			goto out;
		}
		if (r < 0)
			goto out;
		rc = write_all(&out) < 0 ? 1 : 0;
	} else if (argc == 3 && strcmp(argv[1], "restore") == 0) {
		if (pg_read_file(argv[2], &in, &err) < 0 ||
		    harness_mempool_restore(pg_buf_str(&in), in.len, &out, &err) < 0)
			goto out;
		rc = write_all(&out) < 0 ? 1 : 0;
	} else if (argc == 4 && strcmp(argv[1], "apply") == 0) {
		if (load_subset(argv[3], &s, &err) < 0 ||
		    harness_apply_file(argv[2], &s, &done, &err) < 0)
			goto out;
		if (done)
			printf("applied\n");
		else
			printf("not recognised: %s\n", err.msg);
		rc = done ? 0 : EXIT_NOT_RECOGNISED;
		err.code = PG_OK;
	} else if (argc == 3 && strcmp(argv[1], "unapply") == 0) {
		if (harness_restore_file(argv[2], &done, &err) < 0)
			goto out;
		printf("%s\n", done ? "restored" : "unchanged");
		rc = 0;
	} else if (argc == 3 && strcmp(argv[1], "plan") == 0) {
		char key[128];
		size_t lines;

		if (load_subset(argv[2], &s, &err) < 0)
			goto out;
		lines = harness_subset_lines(&s);
		printf("lines %zu\nestimate_s %lu\n", lines, harness_subset_estimate_s(&s));
		for (size_t i = 0; i < lines; i++) {
			if (harness_subset_key(&s, i, key, sizeof(key)) < 0)
				goto out;
			printf("%s\n", key);
		}
		rc = 0;
	} else {
		rc = usage();
	}
out:
	if ((rc == 1 || rc == EXIT_NOT_RECOGNISED) && err.code != PG_OK)
		fprintf(stderr, "harness-tool: %s\n", err.msg);
	pg_buf_release(&in);
	pg_buf_release(&out);
	return rc;
}
