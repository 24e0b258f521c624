/* SPDX-License-Identifier: MIT */
/* The `changes` command: change points on the main branches, and one
 * bisection pass by hand (changes.h, planner.h "Bisection"). */
#include "ctl_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "changes.h"
#include "conffile.h"
#include "ctl_out.h"
#include "fsutil.h"
#include "text.h"
#include "timeutil.h"

#define CHANGES_LIST_DEFAULT 50
#define CHANGES_LIST_MAX 10000

static int usage(void)
{
	fprintf(stderr, "usage: perfgate-controller changes list [--json] "
		"[--state suspected|confirmed|dismissed] [--limit N]\n"
		"       perfgate-controller changes show ID [--json]\n"
		"       perfgate-controller changes bisect\n");
	return 2;
}

static int one_line(struct pg_buf *out, const struct change_point *c)
{
	char when[PG_TIME_UTC_MAX];

	if (pg_time_format_utc(c->detected_at * 1000, 0, when, sizeof(when)) < 0)
		return -1;
	return pg_buf_printf(out, "%-5lld %-10s %-12s %-10s %-14s %-16s %-40s %+7.1f%% %.12s..%.12s "
			     "%s%.12s %lld %s\n", (long long)c->id, c->state, c->tree, c->branch,
			     c->host, c->build_mode, c->metric, c->effect, c->before, c->after,
			     *c->located ? "at " : "", *c->located ? c->located : "-",
			     (long long)c->bisect_runs, when);
}

static int show_text(struct pg_buf *out, const struct change_point *c)
{
	return pg_buf_printf(out,
			     "change point %lld: %s\n"
			     "  key:        %s %s on %s, %s %s, build mode %s, context %s\n"
			     "  step:       %+.1f%% (p=%.2g; negative is worse)\n"
			     "  found:      between %s and %s\n"
			     "  range now:  after %s up to %s\n"
			     "  located:    %s\n"
			     "  bisection:  %lld baseline%s%s\n"
			     "  why:        %s\n",
			     (long long)c->id, c->state, c->benchmark, c->metric, c->host, c->tree,
			     c->branch, c->build_mode, *c->context ? c->context : "-", c->effect, c->p,
			     c->first_before, c->first_after, c->before, c->after,
			     *c->located ? c->located : "(not yet)", (long long)c->bisect_runs,
			     c->bisect_runs == 1 ? "" : "s", c->bisect_run_id ? ", one waiting" : "",
			     *c->why ? c->why : "-") < 0 ||
	       (c->bisect_run_id &&
		pg_buf_printf(out, "  run:        %lld (perfgate-controller run show %lld)\n",
			      (long long)c->bisect_run_id, (long long)c->bisect_run_id) < 0) ? -1 : 0;
}

static int cmd_list(struct store *st, int argc, char **argv, struct pg_err *err)
{
	struct pg_buf out = PG_BUF_INIT(4 * 1024 * 1024);
	struct change_point *cps = NULL;
	const char *state = NULL;
	int64_t limit = CHANGES_LIST_DEFAULT;
	bool json = false;
	size_t n = 0;
	int rc = -1;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--state") && i + 1 < argc) {
			state = argv[++i];
			if (strcmp(state, "suspected") && strcmp(state, "confirmed") &&
			    strcmp(state, "dismissed"))
				return usage();
		} else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
			limit = strtoll(argv[++i], &end, 10);
			if (*end || limit < 1 || limit > CHANGES_LIST_MAX)
				return usage();
		} else {
			return usage();
		}
	}
	if (changes_list(st, state, limit, &cps, &n, err) < 0)
		goto out;
	if (json) {
		cJSON *doc = cJSON_CreateObject(), *arr = doc ? cJSON_AddArrayToObject(doc,
									 "change_points") : NULL;

		for (size_t i = 0; arr && i < n; i++)
			if (!cJSON_AddItemToArray(arr, changes_to_json(&cps[i])))
				arr = NULL;
		if (!arr) {
			cJSON_Delete(doc);
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
		rc = ctl_out_json(doc) < 0 ? (pg_err_errno(err, "print"), -1) : 0;
		cJSON_Delete(doc);
		goto out;
	}
	if (pg_buf_printf(&out, "%-5s %-10s %-12s %-10s %-14s %-16s %-40s %8s %-26s %s\n", "ID",
			  "STATE", "TREE", "BRANCH", "HOST", "BUILD MODE", "METRIC", "STEP", "RANGE",
			  "LOCATED BISECT DETECTED") < 0)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (one_line(&out, &cps[i]) < 0)
			goto nomem;
	if (!n && pg_buf_adds(&out, "(no change points)\n") < 0)
		goto nomem;
	if (ctl_out_buf(&out) < 0) {
		pg_err_errno(err, "print");
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "out of memory");
out:
	free(cps);
	pg_buf_release(&out);
	return rc;
}

static int cmd_show(struct store *st, int argc, char **argv, struct pg_err *err)
{
	struct pg_buf out = PG_BUF_INIT(64 * 1024);
	struct change_point c;
	int64_t id;
	int rc = -1, found;

	if ((argc != 2 && argc != 3) || pg_parse_id(argv[1], &id) < 0 ||
	    (argc == 3 && strcmp(argv[2], "--json")))
		return usage();
	found = changes_get(st, id, &c, err);
	if (found < 0)
		goto out;
	if (!found) {
		pg_err_set(err, PG_ENOTFOUND, "no change point %lld", (long long)id);
		goto out;
	}
	if (argc == 3) {
		cJSON *o = changes_to_json(&c);

		rc = !o ? pg_err_set(err, PG_ENOMEM, "out of memory")
			: ctl_out_json(o) < 0 ? (pg_err_errno(err, "print"), -1) : 0;
		cJSON_Delete(o);
		goto out;
	}
	if (show_text(&out, &c) < 0) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (ctl_out_buf(&out) < 0) {
		pg_err_errno(err, "print");
		goto out;
	}
	rc = 0;
out:
	pg_buf_release(&out);
	return rc;
}

static int cmd_bisect(const struct ctl_config *cfg, struct store *st,
		      const struct profile_set *ps, struct pg_err *err)
{
	struct planner pl;
	char *root = NULL;
	unsigned int alerts = 0;
	int rc = -1;

	if (ctl_planner_init(cfg, st, ps, NULL, &pl, &root, err) < 0 ||
	    planner_bisect_pass(&pl, err) < 0 || ctl_alerts_pass(cfg, st, NULL, &alerts, err) < 0)
		goto out;
	printf("bisect_runs=%lu located=%lu dismissed=%lu alerts=%u errors=%lu\n",
	       pl.stats.bisect_runs, pl.stats.changes_located, pl.stats.changes_dismissed, alerts,
	       pl.stats.errors);
	rc = pl.stats.errors ? 1 : 0;
out:
	free(root);
	return rc;
}

int ctl_cmd_changes(const struct ctl_config *cfg, int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	struct store *st = NULL;
	bool loaded = false;
	int rc = 1;

	if (argc < 2 || (strcmp(argv[1], "list") && strcmp(argv[1], "show") &&
			 strcmp(argv[1], "bisect")) ||
	    (!strcmp(argv[1], "bisect") && argc != 2))
		return usage();
	if (ctl_open_store_profiles(cfg, &ps, &loaded, &st, &err) < 0)
		goto out;
	if (!strcmp(argv[1], "list"))
		rc = cmd_list(st, argc - 1, argv + 1, &err);
	else if (!strcmp(argv[1], "show"))
		rc = cmd_show(st, argc - 1, argv + 1, &err);
	else
		rc = cmd_bisect(cfg, st, &ps, &err);
	rc = rc < 0 ? 1 : rc;
out:
	if (rc == 1 && err.code != PG_OK)
		fprintf(stderr, "perfgate-controller: changes: %s\n", err.msg);
	store_close(st);
	if (loaded)
		profile_set_free(&ps);
	return rc;
}
