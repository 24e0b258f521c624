/* SPDX-License-Identifier: MIT */
/* Baseline runs: a branch's commit measured by itself (planner.h,
 * "Baselines"; DESIGN.md section 2.9). */
#include "planner_int.h"

#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "log.h"
#include "sched.h"

static bool ctx_tests_tree(const struct profile_context *c, const char *tree)
{
	for (size_t i = 0; i < c->n_trees; i++)
		if (strcmp(c->trees[i], tree) == 0)
			return true;
	return false;
}

static bool ctx_has_mode(const struct profile_context *c, const char *mode)
{
	for (size_t i = 0; i < c->n_build_modes; i++)
		if (strcmp(c->build_modes[i], mode) == 0)
			return true;
	return false;
}

static bool tree_has_branch(const struct profile_tree *t, const char *branch)
{
	for (size_t i = 0; i < t->n_branches; i++)
		if (strcmp(t->branches[i], branch) == 0)
			return true;
	return false;
}

/* Whether a baseline job of context on tree/branch is queued, leased or
 * running. */
static int baseline_waiting(struct store *st, const char *context, const char *tree,
			    const char *branch, bool *waiting, struct pg_err *err)
{
	int64_t n = 0;

	if (store_query_int(st, "look for a waiting baseline",
			    "SELECT count(*) FROM jobs j JOIN runs r ON r.id = j.run_id"
			    " WHERE r.reason = 'baseline' AND r.tree = ?1 AND r.branch = ?2"
			    " AND j.context = ?3 AND j.state IN ('queued', 'leased', 'running')",
			    STORE_ARGS(STORE_TEXT(tree), STORE_TEXT(branch), STORE_TEXT(context)),
			    &n, err) < 0)
		return -1;
	*waiting = n > 0;
	return 0;
}

/* The latest baseline of context on tree/branch that was not cancelled:
 * its commit ("" when none) and when it was planned. */
static int baseline_latest(struct store *st, const char *context, const char *tree,
			   const char *branch, char commit[TREES_OID_HEX + 1], int64_t *at,
			   struct pg_err *err)
{
	const char *what = "read the latest baseline";
	sqlite3_stmt *q = NULL;
	int rc = -1, row;

	commit[0] = '\0';
	*at = 0;
	if (store_prepare(st, &q,
			  "SELECT r.base_commit, r.created_at FROM runs r"
			  " WHERE r.reason = 'baseline' AND r.tree = ?1 AND r.branch = ?2"
			  " AND r.state != 'cancelled' AND EXISTS (SELECT 1 FROM jobs j"
			  "  WHERE j.run_id = r.id AND j.context = ?3)"
			  " ORDER BY r.created_at DESC, r.id DESC LIMIT 1", what, err) < 0 ||
	    store_bind(q, STORE_ARGS(STORE_TEXT(tree), STORE_TEXT(branch), STORE_TEXT(context)),
		       what, err) < 0)
		goto out;
	row = store_step(q, what, err);
	if (row < 0)
		goto out;
	if (row) {
		const char *c = (const char *)sqlite3_column_text(q, 0);

		if (c && trees_oid_valid(c))
			memcpy(commit, c, TREES_OID_HEX + 1);
		*at = sqlite3_column_int64(q, 1);
	}
	rc = 0;
out:
	sqlite3_finalize(q);
	return rc;
}

/* The run and its jobs, in the caller's transaction. */
static int insert_baseline(struct pass *p, struct group *g, unsigned long *jobs,
			   struct pg_err *err)
{
	const struct profile_set *ps = p->pl->ps;
	struct sched_run_new run;
	char *spec = NULL;
	int rc = -1;

	memset(&run, 0, sizeof(run));
	run.reason = JS_REASON_BASELINE;
	run.trigger = g->trigger;
	run.tree = g->tree->name;
	run.branch = g->branch;
	run.base_commit = g->base;
	if (sched_run_add_tx(p->pl->st, &run, p->now, &g->run_id, err) < 0)
		goto out;
	for (size_t c = 0; c < g->n_ctx; c++) {
		const struct profile_context *ctx = g->ctx[c];
		const struct profile_host_class *hc = profile_find_host_class(ps, ctx->host_class);

		if (!hc) {
			pg_err_set(err, PG_EINVAL, "context '%s': unknown host class '%s'", ctx->name,
				   ctx->host_class);
			goto out;
		}
		for (size_t m = 0; m < ctx->n_build_modes; m++) {
			const struct profile_build_mode *bm =
				profile_find_build_mode(ps, ctx->build_modes[m]);
			int64_t job_id = 0;

			if (g->only_mode && strcmp(g->only_mode, ctx->build_modes[m]) != 0)
				continue;
			if (!bm) {
				pg_err_set(err, PG_EINVAL, "context '%s': unknown build mode '%s'",
					   ctx->name, ctx->build_modes[m]);
				goto out;
			}
			if (planner_job_spec(p, NULL, g, JS_REASON_BASELINE, ctx, hc, bm, &spec,
					     err) < 0 ||
			    sched_job_add_tx(p->pl->st, g->run_id, ctx->name, hc->name, bm->name,
					     spec, PLANNER_PRIORITY_BASELINE, p->now, &job_id, err) < 0 ||
			    (g->pin_agent_id &&
			     sched_job_pin_tx(p->pl->st, job_id, g->pin_agent_id, err) < 0))
				goto out;
			free(spec);
			spec = NULL;
			(*jobs)++;
		}
	}
	rc = 0;
out:
	free(spec);
	return rc;
}

/* Plan g in one transaction, leaving out the contexts that have a
 * baseline of this tree and branch waiting by now; *run_id 0 when none is
 * left. */
static int commit_baseline(struct pass *p, struct group *g, int64_t *run_id,
			   struct pg_err *err)
{
	struct store *st = p->pl->st;
	unsigned long jobs = 0;
	size_t keep = 0;
	int rc = -1;

	*run_id = 0;
	if (store_begin(st, err) < 0)
		return -1;
	for (size_t i = 0; i < g->n_ctx; i++) {
		bool waiting = false;

		if (strcmp(g->trigger, "bisect") != 0 &&
		    baseline_waiting(st, g->ctx[i]->name, g->tree->name, g->branch, &waiting,
				     err) < 0)
			goto out;
		if (!waiting)
			g->ctx[keep++] = g->ctx[i];
	}
	g->n_ctx = keep;
	if (!keep) {
		rc = 0;
		goto out;
	}
	if (insert_baseline(p, g, &jobs, err) < 0 || store_commit(st, err) < 0)
		goto out;
	*run_id = g->run_id;
	p->pl->stats.baselines_planned++;
	p->pl->stats.runs_created++;
	p->pl->stats.jobs_created += jobs;
	pg_log_info(COMP, "baseline run %lld: %s %s at %.12s (%s), %zu context%s, %lu job%s",
		    (long long)g->run_id, g->tree->name, g->branch, g->base, g->trigger, keep,
		    keep == 1 ? "" : "s", jobs, jobs == 1 ? "" : "s");
	rc = 0;
out:
	store_rollback(st);
	return rc;
}

/* The tree's mirror, synced once per pass, and the commit to measure:
 * `commit` checked to be in it, or the branch head. */
static int resolve_base(struct pass *p, struct group *g, const char *commit, char *mirror,
			size_t mirror_len, struct pg_err *err)
{
	bool has = false;

	if (planner_ensure_tree(p, g->tree, err) < 0 ||
	    trees_mirror_path(p->pl->mirror_root, g->tree->name, mirror, mirror_len, err) < 0)
		return -1;
	if (commit) {
		if (!trees_oid_valid(commit))
			return pg_err_set(err, PG_EINVAL, "'%.64s' is not a full commit id "
					  "(40 lowercase hex digits)", commit);
		if (trees_has_commit(mirror, commit, &has, err) < 0)
			return -1;
		if (!has)
			return pg_err_set(err, PG_ENOTFOUND, "commit %s is not in tree %s", commit,
					  g->tree->name);
		memcpy(g->base, commit, TREES_OID_HEX + 1);
		g->base_source = "commit";
	} else {
		if (trees_resolve_branch(mirror, g->branch, g->base, err) < 0)
			return -1;
		g->base_source = "branch-tip";
	}
	return 0;
}

int planner_baseline(struct planner *pl, const struct planner_baseline_req *rq,
		     int64_t *run_id, struct pg_err *err)
{
	const struct profile_set *ps = pl->ps;
	const struct profile_context **slots = NULL;
	char mirror[TREES_PATH_MAX];
	struct group g;
	struct pass p;
	int rc = -1;

	*run_id = 0;
	memset(&pl->stats, 0, sizeof(pl->stats));
	memset(&g, 0, sizeof(g));
	if (planner_pass_init(&p, pl, err) < 0)
		goto out;
	if (!rq || !rq->tree || !rq->branch || !rq->trigger) {
		pg_err_set(err, PG_EINVAL, "baseline: tree, branch and trigger are required");
		goto out;
	}
	g.tree = profile_find_tree(ps, rq->tree);
	if (!g.tree) {
		pg_err_set(err, PG_ENOTFOUND, "no tree '%.64s' in the profiles", rq->tree);
		goto out;
	}
	if (!tree_has_branch(g.tree, rq->branch)) {
		pg_err_set(err, PG_ENOTFOUND, "'%.64s' is not a branch of tree %s in the profiles",
			   rq->branch, g.tree->name);
		goto out;
	}
	g.branch = rq->branch;
	g.trigger = rq->trigger;
	g.only_mode = rq->build_mode;
	if (rq->pin_agent) {
		int found = sched_agent_id(pl->st, rq->pin_agent, &g.pin_agent_id, err);

		if (found < 0)
			goto out;
		if (!found) {
			pg_err_set(err, PG_ENOTFOUND, "no agent '%.64s'", rq->pin_agent);
			goto out;
		}
	}
	slots = calloc(ps->n_contexts ? ps->n_contexts : 1, sizeof(*slots));
	if (!slots) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	g.ctx = slots;
	for (size_t i = 0; i < ps->n_contexts; i++) {
		const struct profile_context *c = &ps->contexts[i];

		if (rq->context && strcmp(c->name, rq->context) != 0)
			continue;
		if (rq->build_mode && !ctx_has_mode(c, rq->build_mode)) {
			if (rq->context) {
				pg_err_set(err, PG_ENOTFOUND, "context %s has no build mode '%.64s'",
					   c->name, rq->build_mode);
				goto out;
			}
			continue;
		}
		if (!ctx_tests_tree(c, g.tree->name)) {
			if (rq->context) {
				pg_err_set(err, PG_EINVAL, "context %s does not test tree %s", c->name,
					   g.tree->name);
				goto out;
			}
			continue;
		}
		slots[g.n_ctx++] = c;
	}
	if (!g.n_ctx) {
		if (rq->context)
			pg_err_set(err, PG_ENOTFOUND, "no context '%.64s' in the profiles", rq->context);
		else
			pg_err_set(err, PG_ENOTFOUND, "no context tests tree %s", g.tree->name);
		goto out;
	}
	if (resolve_base(&p, &g, rq->commit, mirror, sizeof(mirror), err) < 0 ||
	    planner_group_version(mirror, &g, err) < 0 ||
	    commit_baseline(&p, &g, run_id, err) < 0)
		goto out;
	rc = 0;
out:
	if (rc && g.tree)
		pg_err_prefix(err, "baseline of %s %s", g.tree->name, rq->branch);
	free(slots);
	planner_pass_release(&p);
	return rc;
}

/* The due contexts of one (tree, branch): plan them at the head. */
static int due_branch(struct pass *p, const struct profile_tree *t, const char *branch,
		      int64_t interval_s, const struct profile_context **slots,
		      struct pg_err *err)
{
	const struct profile_set *ps = p->pl->ps;
	char mirror[TREES_PATH_MAX], latest[TREES_OID_HEX + 1];
	struct group g;
	int64_t at, run_id;
	bool head_moved = false;

	memset(&g, 0, sizeof(g));
	g.tree = t;
	g.branch = branch;
	g.ctx = slots;
	if (resolve_base(p, &g, NULL, mirror, sizeof(mirror), err) < 0)
		return -1;
	for (size_t i = 0; i < ps->n_contexts; i++) {
		const struct profile_context *c = &ps->contexts[i];
		bool waiting;

		if (!ctx_tests_tree(c, t->name))
			continue;
		if (baseline_waiting(p->pl->st, c->name, t->name, branch, &waiting, err) < 0 ||
		    baseline_latest(p->pl->st, c->name, t->name, branch, latest, &at, err) < 0)
			return -1;
		if (waiting)
			continue;
		if (strcmp(latest, g.base) != 0)
			head_moved = true;
		else if (p->now - at < interval_s)
			continue;
		slots[g.n_ctx++] = c;
	}
	if (!g.n_ctx)
		return 0;
	g.trigger = head_moved ? "head" : "interval";
	if (planner_group_version(mirror, &g, err) < 0)
		return -1;
	return commit_baseline(p, &g, &run_id, err);
}

int planner_baselines_due(struct planner *pl, int64_t interval_s, struct pg_err *err)
{
	const struct profile_set *ps = pl->ps;
	const struct profile_context **slots = NULL;
	struct pass p;
	int rc = -1;

	if (planner_pass_init(&p, pl, err) < 0)
		goto out;
	slots = calloc(ps->n_contexts ? ps->n_contexts : 1, sizeof(*slots));
	if (!slots) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t t = 0; t < ps->n_trees; t++) {
		for (size_t b = 0; b < ps->trees[t].n_branches; b++) {
			struct pg_err e = PG_ERR_INIT;

			if (due_branch(&p, &ps->trees[t], ps->trees[t].branches[b], interval_s, slots,
				       &e) == 0)
				continue;
			/* The store failing ends the pass; a tree or branch that
			 * cannot be read is for the next one. */
			if (e.code == PG_EDB) {
				*err = e;
				goto out;
			}
			pg_log_warn(COMP, "baselines of %s %s: %s", ps->trees[t].name,
				    ps->trees[t].branches[b], e.msg);
			pl->stats.errors++;
		}
	}
	rc = 0;
out:
	if (rc)
		pg_err_prefix(err, "baseline pass");
	free(slots);
	planner_pass_release(&p);
	return rc;
}
