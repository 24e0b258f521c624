/* SPDX-License-Identifier: MIT */
/* Planner passes and the `plan` command. */
#include "ctl_plan.h"

#include "alerts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "conffile.h"
#include "ctl_out.h"
#include "fsutil.h"
#include "log.h"
#include "timeutil.h"

/* Where agents reach the controller when the configuration says nothing
 * (the API's default listening address). */
#define CTL_PLAN_DEFAULT_URL "http://127.0.0.1:8080"

int ctl_planner_init(const struct ctl_config *cfg, struct store *st,
		     const struct profile_set *ps, const char *public_url, struct planner *pl,
		     char **root, struct pg_err *err)
{
	*root = pg_config_resolve(cfg->data_dir, "trees");
	if (!*root)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	if (pg_mkdir_p(*root, 0750, err) < 0) {
		free(*root);
		*root = NULL;
		return -1;
	}
	/* A command has no server to ask: the configured public URL (job
	 * links and the checks' target URLs) still applies. */
	if (!public_url)
		public_url = cfg->api.public_url;
	planner_init(pl, st, ps, *root, public_url ? public_url : CTL_PLAN_DEFAULT_URL);
	return 0;
}

int ctl_open_store_profiles(const struct ctl_config *cfg, struct profile_set *ps, bool *loaded,
			    struct store **st, struct pg_err *err)
{
	if (pg_config_load_profiles(cfg->profiles_dir, (const char *const *)cfg->profiles,
				    cfg->n_profiles, ps, err) < 0)
		return -1;
	*loaded = true;
	if (pg_mkdir_p(cfg->data_dir, 0750, err) < 0 || pg_mkdir_parent(cfg->db, 0750, err) < 0 ||
	    store_open(st, cfg->db, err) < 0)
		return -1;
	return 0;
}

int ctl_plan_pass(const struct ctl_config *cfg, struct store *st, const struct profile_set *ps,
		  const char *public_url, struct planner_stats *stats, struct pg_err *err)
{
	struct planner pl;
	char *root;
	int rc;

	if (ctl_planner_init(cfg, st, ps, public_url, &pl, &root, err) < 0)
		return -1;
	rc = planner_run(&pl, err);
	*stats = pl.stats;
	free(root);
	return rc;
}

int ctl_alerts_pass(const struct ctl_config *cfg, struct store *st, const char *public_url,
		    unsigned int *alerts, struct pg_err *err)
{
	char *root = pg_config_resolve(cfg->data_dir, "trees");
	int rc;

	*alerts = 0;
	if (!root)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	rc = alerts_pass(cfg, st, root, public_url ? public_url : cfg->api.public_url,
			 pg_time_wall_ms(), alerts, err);
	free(root);
	return rc;
}

int ctl_baseline_pass(const struct ctl_config *cfg, struct store *st,
		      const struct profile_set *ps, const char *public_url,
		      struct planner_stats *stats, unsigned int *alerts, struct pg_err *err)
{
	struct planner pl;
	char *root;
	int rc;

	*alerts = 0;
	if (ctl_planner_init(cfg, st, ps, public_url, &pl, &root, err) < 0)
		return -1;
	rc = planner_baselines_due(&pl, cfg->baseline.interval_s, err);
	if (rc == 0)
		rc = planner_bisect_pass(&pl, err);
	if (rc == 0)
		rc = ctl_alerts_pass(cfg, st, public_url, alerts, err);
	*stats = pl.stats;
	free(root);
	return rc;
}

int ctl_cmd_plan(const struct ctl_config *cfg, int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf out = PG_BUF_INIT(64 * 1024);
	struct planner_stats stats;
	struct profile_set ps;
	struct store *st = NULL;
	int rc = 1;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: perfgate-controller plan\n");
		return 2;
	}
	if (pg_config_load_profiles(cfg->profiles_dir, (const char *const *)cfg->profiles,
				    cfg->n_profiles, &ps, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		return 1;
	}
	if (pg_mkdir_p(cfg->data_dir, 0750, &err) < 0 || pg_mkdir_parent(cfg->db, 0750, &err) < 0 ||
	    store_open(&st, cfg->db, &err) < 0 ||
	    ctl_plan_pass(cfg, st, &ps, NULL, &stats, &err) < 0 ||
	    planner_stats_print(&stats, &out) < 0)
		goto out;
	if (ctl_out_buf(&out) < 0) {
		pg_err_errno(&err, "print");
		goto out;
	}
	rc = stats.errors ? 1 : 0;
out:
	if (rc && err.code != PG_OK)
		fprintf(stderr, "perfgate-controller: plan: %s\n", err.msg);
	pg_buf_release(&out);
	store_close(st);
	profile_set_free(&ps);
	return rc;
}
