/* SPDX-License-Identifier: MIT */
/*
 * outbox-tool: queue final checks and report mails the way the verdict
 * pass does (controller/outbox.h), for test scripts.
 *
 *   outbox-tool queue-check CONFIG RUN CONTEXT STATE DESCRIPTION [TARGET_URL|-]
 *                           [--all-patches]
 *       outbox_queue_check_tx() in its own transaction on CONFIG's store;
 *       "-" (or no TARGET_URL) takes the URL of the run's pending check.
 *   outbox-tool queue-mail CONFIG RUN CONTEXT STATE DESCRIPTION [TABLE_FILE]
 *       outbox_queue_mail_tx() with CONFIG's mail section; the table is
 *       read from TABLE_FILE.
 *
 * Both print "queued N" (N rows added).  Exit status: 0 done, 1 error
 * (message on stderr), 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "ctl_config.h"
#include "err.h"
#include "fsutil.h"
#include "outbox.h"
#include "store.h"
#include "timeutil.h"
#include "text.h"

#define EXIT_USAGE 2

static void usage(void)
{
	fprintf(stderr,
		"usage: outbox-tool queue-check CONFIG RUN CONTEXT STATE DESCRIPTION "
		"[TARGET_URL|-] [--all-patches]\n"
		"       outbox-tool queue-mail CONFIG RUN CONTEXT STATE DESCRIPTION [TABLE_FILE]\n");
}

int main(int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf table = PG_BUF_INIT(4u << 20);
	struct ctl_config cfg;
	struct store *st = NULL;
	const char *url = NULL;
	bool mail, all = false, loaded = false;
	unsigned int queued = 0;
	int64_t run;
	int rc = 1;

	if (argc < 7 || (strcmp(argv[1], "queue-check") != 0 && strcmp(argv[1], "queue-mail") != 0) ||
	    pg_parse_id(argv[3], &run) < 0) {
		usage();
		return EXIT_USAGE;
	}
	mail = strcmp(argv[1], "queue-mail") == 0;
	for (int i = 7; i < argc; i++) {
		if (!mail && strcmp(argv[i], "--all-patches") == 0)
			all = true;
		else if (i == 7 && strcmp(argv[i], "-") != 0)
			url = argv[i];
		else if (i != 7) {
			usage();
			return EXIT_USAGE;
		}
	}
	if (ctl_config_load(&cfg, argv[2], &err) < 0)
		goto out;
	loaded = true;
	if (mail && url && pg_read_file(url, &table, &err) < 0)
		goto out;
	if (store_open(&st, cfg.db, &err) < 0 || store_begin(st, &err) < 0)
		goto out;
	if (mail) {
		if (outbox_queue_mail_tx(st, &cfg.mail, run, argv[4], argv[5], argv[6],
					 url ? pg_buf_str(&table) : NULL, NULL, pg_time_wall_ms(),
					 &queued, &err) < 0)
			goto out;
	} else if (outbox_queue_check_tx(st, run, argv[4], argv[5], argv[6], url,
					 all ? PROFILE_POST_ALL_PATCHES : PROFILE_POST_LAST_PATCH,
					 pg_time_wall_ms() / 1000, &queued, &err) < 0) {
		goto out;
	}
	if (store_commit(st, &err) < 0)
		goto out;
	printf("queued %u\n", queued);
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "outbox-tool: %s\n", err.msg);
	store_rollback(st);
	store_close(st);
	pg_buf_release(&table);
	if (loaded)
		ctl_config_free(&cfg);
	return rc;
}
