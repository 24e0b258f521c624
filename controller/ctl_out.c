/* SPDX-License-Identifier: MIT */
/* Everything the commands print for a person (see ctl_out.h). */
#include "ctl_out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sanitize.h"

static int out_write(const char *s, size_t n)
{
	if (n && fwrite(s, 1, n, stdout) != n)
		return -1;
	return fflush(stdout) == 0 ? 0 : -1;
}

int ctl_out_text(const char *text, size_t len)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	int rc = -1;

	if (pg_sanitize_is_clean(text, len, PG_SAN_BLOCK)) {
		rc = out_write(text, len);
		goto out;
	}
	if (pg_sanitize(&b, text, len, PG_SAN_BLOCK) < 0)
		goto out;
	rc = out_write(b.data, b.len);
out:
	pg_buf_release(&b);
	return rc;
}

int ctl_out_buf(const struct pg_buf *b)
{
	return ctl_out_text(pg_buf_str(b), b->len);
}

int ctl_out_json(const cJSON *doc)
{
	char *text = pg_json_print_safe(doc, true);
	int rc = -1;

	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	if (out_write(text, strlen(text)) == 0 && out_write("\n", 1) == 0)
		rc = 0;
	free(text);
	return rc;
}

int ctl_out_oneline(cJSON *doc)
{
	return pg_json_sanitize_strings(doc, PG_SAN_LINE);
}
