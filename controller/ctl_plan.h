/* SPDX-License-Identifier: MIT */
#ifndef CTL_PLAN_H
#define CTL_PLAN_H

/*
 * Planning as the controller runs it: the `plan` command (one pass) and
 * the daemon's pass after each intake.  Tree mirrors live in
 * DATA_DIR/trees; job specs name the controller by `public_url`.
 */

#include <stdbool.h>

#include "ctl_config.h"
#include "err.h"
#include "planner.h"
#include "profile.h"
#include "store.h"

/* The profiles (*loaded once they are: profile_set_free() them) and the
 * store (made when missing) that the planning commands open.  Returns 0
 * or -1. */
int ctl_open_store_profiles(const struct ctl_config *cfg, struct profile_set *ps, bool *loaded,
			    struct store **st, struct pg_err *err);

/* A planner on the store and profiles with the tree mirrors in
 * DATA_DIR/trees (made when missing) and public_url (NULL: api.public_url,
 * else http://127.0.0.1:8080); *root (free() it) is the mirrors' path the
 * planner borrows.  Returns 0 or -1. */
int ctl_planner_init(const struct ctl_config *cfg, struct store *st,
		     const struct profile_set *ps, const char *public_url, struct planner *pl,
		     char **root, struct pg_err *err);

/* Run one planner pass; *stats gets its counts.  public_url: how agents
 * and people reach the controller (job links, check target URLs); NULL
 * for api.public_url, else http://127.0.0.1:8080.  Returns 0, or -1 when
 * the store failed (a series that cannot be planned is only counted). */
int ctl_plan_pass(const struct ctl_config *cfg, struct store *st, const struct profile_set *ps,
		  const char *public_url, struct planner_stats *stats, struct pg_err *err);

/* The scheduled baselines (planner_baselines_due() at the configuration's
 * baseline.interval_s), then the bisection of change points
 * (planner_bisect_pass()), then the alert mails of those located
 * (alerts_pass(); *alerts gets how many were queued), as ctl_plan_pass()
 * runs a pass. */
int ctl_baseline_pass(const struct ctl_config *cfg, struct store *st,
		      const struct profile_set *ps, const char *public_url,
		      struct planner_stats *stats, unsigned int *alerts,
		      struct pg_err *err);

/* `plan`: one pass over the store, printing what it planned. */
int ctl_cmd_plan(const struct ctl_config *cfg, int argc, char **argv);

/* `changes list [--json] [--state S] [--limit N]`, `changes show ID
 * [--json]` and `changes bisect` (one bisection pass) (ctl_changes.c). */
int ctl_cmd_changes(const struct ctl_config *cfg, int argc, char **argv);

/* `baseline run TREE BRANCH [--commit C] [--context NAME]` (one baseline
 * asked for by hand), `baseline due` (the scheduled pass, once) and
 * `baseline list [--json] [--limit N]` (ctl_baseline.c). */
int ctl_cmd_baseline(const struct ctl_config *cfg, int argc, char **argv);

/* alerts_pass() with the trees under DATA_DIR/trees and the configured
 * public URL. */
int ctl_alerts_pass(const struct ctl_config *cfg, struct store *st, const char *public_url,
		    unsigned int *alerts, struct pg_err *err);

#endif
