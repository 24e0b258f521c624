/* SPDX-License-Identifier: MIT */
/* Command dispatch and the small one-shot commands (check-config, db). */
#include "ctl_cmd.h"
#include "ctl_intake.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "conffile.h"
#include "fsutil.h"
#include "json.h"
#include "log.h"
#include "profile.h"
#include "store.h"

int ctl_cmd_check_config(const struct ctl_config *cfg)
{
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	int rc = 0;

	if (pg_config_load_profiles(cfg->profiles_dir, (const char *const *)cfg->profiles,
				    cfg->n_profiles, &ps, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		return 1;
	}
	if (pg_config_print(ctl_config_to_json(cfg), &ps, NULL, NULL) < 0) {
		fprintf(stderr, "perfgate-controller: --check-config: out of memory\n");
		rc = 1;
	}
	profile_set_free(&ps);
	return rc;
}

static int ctl_cmd_db(const struct ctl_config *cfg, int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf report = PG_BUF_INIT(1024 * 1024);
	struct store *st = NULL;
	int rc = 1;

	if (argc != 2 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "migrate") != 0)) {
		fprintf(stderr, "usage: perfgate-controller [--db FILE] db check|migrate\n");
		return 2;
	}
	/* check inspects what exists; only migrate may create a store. */
	if (strcmp(argv[1], "check") == 0 && access(cfg->db, F_OK) != 0) {
		fprintf(stderr, "perfgate-controller: store %s: %s\n", cfg->db, strerror(errno));
		goto out;
	}
	if (strcmp(argv[1], "migrate") == 0 && pg_mkdir_parent(cfg->db, 0750, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		goto out;
	}
	if (store_open(&st, cfg->db, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		goto out;
	}
	if (strcmp(argv[1], "migrate") == 0) {
		printf("store %s: schema version %d\n", cfg->db, STORE_SCHEMA_VERSION);
		rc = 0;
		goto out;
	}
	rc = store_check(st, &report, &err) < 0 ? 1 : 0;
	fputs(pg_buf_str(&report), stdout);
	if (rc)
		fprintf(stderr, "perfgate-controller: store %s: %s\n", cfg->db, err.msg);
out:
	store_close(st);
	pg_buf_release(&report);
	return rc;
}

int ctl_cmd_dispatch(const struct ctl_config *cfg, int argc, char **argv)
{
	if (argc == 0 || strcmp(argv[0], "serve") == 0) {
		if (argc > 1) {
			fprintf(stderr, "usage: perfgate-controller [options] serve\n");
			return 2;
		}
		return ctl_serve(cfg);
	}
	if (strcmp(argv[0], "db") == 0)
		return ctl_cmd_db(cfg, argc, argv);
	if (strcmp(argv[0], "ingest") == 0)
		return ctl_cmd_ingest(cfg, argc, argv);
	if (strcmp(argv[0], "series") == 0)
		return ctl_cmd_series(cfg, argc, argv);
	fprintf(stderr, "perfgate-controller: unknown command '%s' (see --help)\n", argv[0]);
	return 2;
}
