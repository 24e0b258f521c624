/* SPDX-License-Identifier: MIT */
/* The `baseline` command: baseline runs asked for by hand, the scheduled
 * pass once, and the list of baseline runs (planner.h, "Baselines"). */
#include "ctl_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "conffile.h"
#include "ctl_out.h"
#include "fsutil.h"
#include "json.h"
#include "timeutil.h"

#define BASELINE_LIST_DEFAULT 50
#define BASELINE_LIST_MAX 10000

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static int usage(void)
{
	fprintf(stderr, "usage: perfgate-controller baseline run TREE BRANCH [--commit C] "
		"[--context NAME]\n"
		"       perfgate-controller baseline due\n"
		"       perfgate-controller baseline list [--json] [--limit N]\n");
	return 2;
}

static int cmd_run(const struct ctl_config *cfg, struct store *st, const struct profile_set *ps,
		   int argc, char **argv, struct pg_err *err)
{
	struct planner_baseline_req rq;
	struct planner pl;
	char *root = NULL;
	int64_t run = 0;
	int rc = -1;

	memset(&rq, 0, sizeof(rq));
	if (argc < 3)
		return usage();
	rq.tree = argv[1];
	rq.branch = argv[2];
	rq.trigger = "manual";
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--commit") == 0 && i + 1 < argc)
			rq.commit = argv[++i];
		else if (strcmp(argv[i], "--context") == 0 && i + 1 < argc)
			rq.context = argv[++i];
		else
			return usage();
	}
	if (ctl_planner_init(cfg, st, ps, NULL, &pl, &root, err) < 0 ||
	    planner_baseline(&pl, &rq, &run, err) < 0)
		goto out;
	if (run)
		printf("baseline run %lld: %s %s, %lu job%s queued\n", (long long)run, rq.tree,
		       rq.branch, pl.stats.jobs_created, pl.stats.jobs_created == 1 ? "" : "s");
	else
		printf("nothing queued: a baseline of %s %s is already waiting for %s\n", rq.tree,
		       rq.branch, rq.context ? rq.context : "every context that tests it");
	rc = 0;
out:
	free(root);
	return rc;
}

static int cmd_due(const struct ctl_config *cfg, struct store *st, const struct profile_set *ps,
		   struct pg_err *err)
{
	struct planner_stats stats;
	unsigned int alerts;

	if (ctl_baseline_pass(cfg, st, ps, NULL, &stats, &alerts, err) < 0)
		return -1;
	printf("baselines=%lu jobs=%lu trees_synced=%lu bisect_runs=%lu located=%lu dismissed=%lu "
	       "alerts=%u errors=%lu\n", stats.baselines_planned, stats.jobs_created,
	       stats.trees_synced, stats.bisect_runs, stats.changes_located,
	       stats.changes_dismissed, alerts, stats.errors);
	return stats.errors ? 1 : 0;
}

/* Baseline runs, newest first: one object per run with its jobs counted
 * by state. */
static int list_runs(struct store *st, int64_t limit, cJSON **out, struct pg_err *err)
{
	static const char what[] = "list baselines";
	sqlite3_stmt *q = NULL;
	cJSON *arr = cJSON_CreateArray();
	int rc = -1, row;

	*out = NULL;
	if (!arr)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	if (store_prepare(st, &q,
			  "SELECT r.id, r.tree, r.branch, r.base_commit, r.trigger, r.state,"
			  " r.created_at, r.finished_at,"
			  " (SELECT count(*) FROM jobs j WHERE j.run_id = r.id),"
			  " (SELECT count(*) FROM jobs j WHERE j.run_id = r.id AND j.state = 'done'),"
			  " (SELECT group_concat(v.context || '=' || v.state, ' ') FROM verdicts v"
			  "  WHERE v.run_id = r.id AND v.job_id IS NULL)"
			  " FROM runs r WHERE r.reason = 'baseline'"
			  " ORDER BY r.created_at DESC, r.id DESC LIMIT ?1", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_INT(limit)), what, err) < 0)
		goto out;
	while ((row = store_step(q, what, err)) > 0) {
		cJSON *o = cJSON_CreateObject();
		const char *verdicts = (const char *)sqlite3_column_text(q, 10);

		if (!o || !cJSON_AddItemToArray(arr, o) ||
		    !cJSON_AddNumberToObject(o, "run", (double)sqlite3_column_int64(q, 0)) ||
		    !cJSON_AddStringToObject(o, "tree", (const char *)sqlite3_column_text(q, 1)) ||
		    !cJSON_AddStringToObject(o, "branch", (const char *)sqlite3_column_text(q, 2)) ||
		    !cJSON_AddStringToObject(o, "commit", (const char *)sqlite3_column_text(q, 3)) ||
		    !cJSON_AddStringToObject(o, "trigger", (const char *)sqlite3_column_text(q, 4)) ||
		    !cJSON_AddStringToObject(o, "state", (const char *)sqlite3_column_text(q, 5)) ||
		    !cJSON_AddNumberToObject(o, "created_at", (double)sqlite3_column_int64(q, 6)) ||
		    !(sqlite3_column_type(q, 7) == SQLITE_NULL
		      ? cJSON_AddNullToObject(o, "finished_at")
		      : cJSON_AddNumberToObject(o, "finished_at", (double)sqlite3_column_int64(q, 7))) ||
		    !cJSON_AddNumberToObject(o, "jobs", (double)sqlite3_column_int64(q, 8)) ||
		    !cJSON_AddNumberToObject(o, "jobs_done", (double)sqlite3_column_int64(q, 9)) ||
		    !cJSON_AddStringToObject(o, "verdicts", verdicts ? verdicts : "")) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
	}
	if (row < 0)
		goto out;
	*out = arr;
	arr = NULL;
	rc = 0;
out:
	sqlite3_finalize(q);
	cJSON_Delete(arr);
	return rc;
}

static int cmd_list(struct store *st, int argc, char **argv, struct pg_err *err)
{
	struct pg_buf text = PG_BUF_INIT(1024 * 1024);
	int64_t limit = BASELINE_LIST_DEFAULT;
	bool json = false;
	cJSON *arr = NULL, *it;
	int rc = -1;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
			limit = strtoll(argv[++i], &end, 10);
			if (*end || limit < 1 || limit > BASELINE_LIST_MAX)
				return usage();
		} else {
			return usage();
		}
	}
	if (list_runs(st, limit, &arr, err) < 0)
		goto out;
	if (json) {
		cJSON *doc = cJSON_CreateObject();

		if (!doc || !cJSON_AddItemToObject(doc, "baselines", arr)) {
			cJSON_Delete(doc);
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
		arr = NULL;
		rc = ctl_out_json(doc) < 0 ? (pg_err_errno(err, "print"), -1) : 0;
		cJSON_Delete(doc);
		goto out;
	}
	if (pg_buf_printf(&text, "%-6s %-16s %-10s %-12s %-8s %-9s %-20s %s\n", "RUN", "TREE",
			  "BRANCH", "COMMIT", "TRIGGER", "STATE", "PLANNED", "JOBS DONE  VERDICTS") < 0)
		goto nomem;
	cJSON_ArrayForEach(it, arr) {
		char when[32];

		if (pg_time_format_utc((int64_t)num(it, "created_at") * 1000, 0, when,
				       sizeof(when)) < 0)
			goto nomem;
		if (pg_buf_printf(&text, "%-6.0f %-16s %-10s %-12.12s %-8s %-9s %-20s %.0f/%.0f  %s\n",
				  num(it, "run"), str(it, "tree"),
				  str(it, "branch"), str(it, "commit"),
				  str(it, "trigger"), str(it, "state"), when,
				  num(it, "jobs_done"), num(it, "jobs"),
				  str(it, "verdicts")) < 0)
			goto nomem;
	}
	if (!cJSON_GetArraySize(arr) && pg_buf_adds(&text, "(no baseline runs)\n") < 0)
		goto nomem;
	if (ctl_out_buf(&text) < 0) {
		pg_err_errno(err, "print");
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "out of memory");
out:
	cJSON_Delete(arr);
	pg_buf_release(&text);
	return rc;
}

int ctl_cmd_baseline(const struct ctl_config *cfg, int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	struct store *st = NULL;
	bool loaded = false;
	int rc = 1;

	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "run") && strcmp(argv[1], "due") && strcmp(argv[1], "list"))
		return usage();
	if (!strcmp(argv[1], "due") && argc != 2)
		return usage();
	if (ctl_open_store_profiles(cfg, &ps, &loaded, &st, &err) < 0)
		goto out;
	if (strcmp(argv[1], "run") == 0)
		rc = cmd_run(cfg, st, &ps, argc - 1, argv + 1, &err);
	else if (strcmp(argv[1], "due") == 0)
		rc = cmd_due(cfg, st, &ps, &err);
	else
		rc = cmd_list(st, argc - 1, argv + 1, &err);
	rc = rc < 0 ? 1 : rc;
out:
	if (rc == 1 && err.code != PG_OK)
		fprintf(stderr, "perfgate-controller: baseline: %s\n", err.msg);
	store_close(st);
	if (loaded)
		profile_set_free(&ps);
	return rc;
}
