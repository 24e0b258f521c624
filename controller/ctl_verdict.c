/* SPDX-License-Identifier: MIT */
/* The verdict pass as the controller runs it, and its commands. */
#include "ctl_verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "conffile.h"
#include "ctl_out.h"
#include "fsutil.h"
#include "text.h"

int ctl_verdict_pass(const struct ctl_config *cfg, struct store *st,
		     const struct profile_set *ps, int64_t run_id, struct pg_buf *report,
		     struct verdict_pass_stats *stats, struct pg_err *err)
{
	struct verdict_pass vp;
	/* Where the planner keeps the tree mirrors: history in git order. */
	char *trees = pg_config_resolve(cfg->data_dir, "trees");
	int rc;

	if (!trees)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	verdict_pass_init(&vp, st, ps);
	vp.mail = &cfg->mail;
	vp.mirror_root = trees;
	vp.drain_on_drift = cfg->baseline.drain_on_drift;
	vp.run_id = run_id;
	vp.report = report;
	rc = verdict_pass_run(&vp, err);
	if (stats)
		*stats = vp.stats;
	free(trees);
	return rc;
}

/* Open the store (which must exist) and load the profiles. */
static int open_both(const struct ctl_config *cfg, struct store **st, struct profile_set *ps,
		     struct pg_err *err)
{
	*st = NULL;
	memset(ps, 0, sizeof(*ps));
	if (access(cfg->db, F_OK) != 0)
		return pg_err_set(err, PG_ENOTFOUND, "store %s does not exist", cfg->db);
	if (pg_config_load_profiles(cfg->profiles_dir, (const char *const *)cfg->profiles,
				    cfg->n_profiles, ps, err) < 0)
		return -1;
	return store_open(st, cfg->db, err);
}

int ctl_cmd_verdicts(const struct ctl_config *cfg, int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf report = PG_BUF_INIT(16 * 1024 * 1024);
	struct verdict_pass_stats stats;
	struct profile_set ps;
	struct store *st = NULL;
	int64_t run_id = 0;
	int rc = 1;

	if (argc == 3 && !strcmp(argv[1], "--run")) {
		if (pg_parse_id(argv[2], &run_id) < 0)
			goto usage;
	} else if (argc != 1) {
		goto usage;
	}
	if (open_both(cfg, &st, &ps, &err) < 0 ||
	    ctl_verdict_pass(cfg, st, &ps, run_id, &report, &stats, &err) < 0 ||
	    verdict_pass_stats_print(&stats, &report) < 0)
		goto out;
	if (ctl_out_buf(&report) < 0) {
		pg_err_errno(&err, "print");
		goto out;
	}
	rc = stats.errors ? 1 : 0;
out:
	if (rc && err.code != PG_OK)
		fprintf(stderr, "perfgate-controller: verdicts: %s\n", err.msg);
	pg_buf_release(&report);
	store_close(st);
	profile_set_free(&ps);
	return rc;
usage:
	fprintf(stderr, "usage: perfgate-controller verdicts [--run ID]\n");
	return 2;
}

int ctl_cmd_run(const struct ctl_config *cfg, int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf out = PG_BUF_INIT(64 * 1024 * 1024);
	struct profile_set ps;
	struct store *st = NULL;
	int64_t run_id = 0;
	int rc = 1;

	if (argc != 3 || strcmp(argv[1], "show") || pg_parse_id(argv[2], &run_id) < 0) {
		fprintf(stderr, "usage: perfgate-controller run show ID\n");
		return 2;
	}
	if (open_both(cfg, &st, &ps, &err) < 0 || verdict_run_show(st, &ps, run_id, &out, &err) < 0)
		goto out;
	if (ctl_out_buf(&out) < 0) {
		pg_err_errno(&err, "print");
		goto out;
	}
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "perfgate-controller: run show: %s\n", err.msg);
	pg_buf_release(&out);
	store_close(st);
	profile_set_free(&ps);
	return rc;
}
