/* SPDX-License-Identifier: MIT */
/* The planner's trees: which tree and branch each context tests on, and
 * the base commit and VERSION of each (see planner.h, "Tree and branch",
 * "Base commit"). */
#include "planner_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "log.h"

static int tree_index(const struct profile_set *ps, const struct profile_tree *t)
{
	return (int)(t - ps->trees);
}

/* Sync the tree once per pass; a failure sticks for the pass. */
int planner_ensure_tree(struct pass *p, const struct profile_tree *t, struct pg_err *err)
{
	struct tree_state *ts = &p->trees[tree_index(p->pl->ps, t)];

	if (ts->status == TREE_UNKNOWN) {
		pg_err_clear(&ts->err);
		if (trees_sync(p->pl->mirror_root, t, p->pl->sync_timeout_ms, &ts->err) < 0) {
			ts->status = TREE_FAILED;
			pg_log_warn(COMP, "%s", ts->err.msg);
		} else {
			ts->status = TREE_OK;
			p->pl->stats.trees_synced++;
		}
	}
	if (ts->status == TREE_FAILED) {
		*err = ts->err;
		return -1;
	}
	return 0;
}

/* The base of the latest run of the series on tree/branch, if any. */
static int previous_base(struct store *st, int64_t series_id, const char *tree,
			 const char *branch, char base[TREES_OID_HEX + 1], struct pg_err *err)
{
	const char *what = "read previous run";
	sqlite3_stmt *stmt = NULL;
	int rc = -1, row;

	base[0] = '\0';
	if (store_prepare(st, &stmt,
			  "SELECT base_commit FROM runs WHERE series_id = ?1 AND tree = ?2"
			  " AND branch = ?3 ORDER BY id DESC LIMIT 1", what, err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(series_id), STORE_TEXT(tree),
					STORE_TEXT(branch)), what, err) < 0)
		goto out;
	row = store_step(stmt, what, err);
	if (row < 0)
		goto out;
	if (row) {
		const char *s = (const char *)sqlite3_column_text(stmt, 0);

		if (s && trees_oid_valid(s) && pg_fmt(base, TREES_OID_HEX + 1, "%s", s) < 0) {
			pg_err_set(err, PG_EINVAL, "%s: base commit '%.48s...' too long", what, s);
			goto out;
		}
	}
	rc = 0;
out:
	sqlite3_finalize(stmt);
	return rc;
}

/* Choose and check the group's base commit and read its version. */
int planner_resolve_group(struct pass *p, const struct series_info *si,
			  const struct recheck *rq, struct group *g, struct pg_err *err)
{
	char mirror[TREES_PATH_MAX];
	bool has = false;

	if (planner_ensure_tree(p, g->tree, err) < 0 ||
	    trees_mirror_path(p->pl->mirror_root, g->tree->name, mirror, sizeof(mirror), err) < 0)
		return -1;
	g->base[0] = '\0';
	if (rq && rq->rebase) {
		if (trees_resolve_branch(mirror, g->branch, g->base, err) < 0)
			goto fail;
		g->base_source = "rebase";
	}
	if (!g->base[0] && rq) {
		if (previous_base(p->pl->st, si->id, g->tree->name, g->branch, g->base, err) < 0)
			goto fail;
		if (g->base[0] && trees_has_commit(mirror, g->base, &has, err) < 0)
			goto fail;
		if (g->base[0] && has)
			g->base_source = "previous-run";
		else
			g->base[0] = '\0';
	}
	if (!g->base[0] && si->base_commit_raw) {
		if (!si->base_commit[0]) {
			planner_note(&g->notes, "base-commit '%.64s' is not a full commit id: tested on the "
				     "tip of %s", si->base_commit_raw, g->branch);
		} else {
			if (trees_has_commit(mirror, si->base_commit, &has, err) < 0)
				goto fail;
			if (has) {
				memcpy(g->base, si->base_commit, sizeof(g->base));
				g->base_source = "base-commit";
			} else {
				planner_note(&g->notes, "base-commit %s is not in tree %s: tested on the tip "
					     "of %s", si->base_commit, g->tree->name, g->branch);
			}
		}
	}
	if (!g->base[0]) {
		if (trees_resolve_branch(mirror, g->branch, g->base, err) < 0)
			goto fail;
		g->base_source = "branch-tip";
	}
	if (planner_group_version(mirror, g, err) < 0)
		goto fail;
	return 0;
fail:
	pg_err_prefix(err, "tree '%s' branch '%s'", g->tree->name, g->branch);
	return -1;
}

int planner_group_version(const char *mirror, struct group *g, struct pg_err *err)
{
	struct pg_err verr = PG_ERR_INIT;

	g->has_version = false;
	if (trees_version(mirror, g->base, g->version, &verr) < 0) {
		if (verr.code != PG_ENOTFOUND && verr.code != PG_EINVAL) {
			*err = verr;
			return -1;
		}
		planner_note(&g->notes, "no usable VERSION at %.12s (%s): version-gated meson options "
			     "not applied", g->base, verr.msg);
	} else if (profile_parse_version(g->version, &g->major, &g->minor) < 0) {
		planner_note(&g->notes, "VERSION '%s' at %.12s is not a DPDK version: version-gated meson "
			     "options not applied", g->version, g->base);
	} else {
		g->has_version = true;
	}
	return 0;
}

static bool branch_of(const struct profile_tree *t, const char *branch)
{
	for (size_t i = 0; i < t->n_branches; i++)
		if (strcmp(t->branches[i], branch) == 0)
			return true;
	return false;
}

int planner_group_contexts(const struct pass *p, const struct series_info *si,
			   const struct recheck *rq, const struct profile_context *const *ctxs,
			   size_t n_ctx, const struct profile_context **slots, struct group *groups,
			   size_t *n_groups, struct pg_err *err)
{
	const struct profile_set *ps = p->pl->ps;
	struct choice {
		const struct profile_tree *tree;	/* NULL: left out */
		const char *branch;
	} *ch = calloc(n_ctx ? n_ctx : 1, sizeof(*ch));
	size_t used = 0;
	int rc = -1;

	*n_groups = 0;
	if (!ch) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_ctx; i++) {
		const char *tname = NULL, *branch = NULL;
		const struct profile_tree *t;
		size_t k;

		profile_context_select_tree(ps, ctxs[i], (const char *const *)si->files.v,
					    si->files.n, (const char *const *)si->tags.v, si->tags.n,
					    &tname, &branch);
		t = tname ? profile_find_tree(ps, tname) : NULL;
		if (!t) {
			pg_err_set(err, PG_EINVAL, "context '%s': no tree selected", ctxs[i]->name);
			goto out;
		}
		if (rq && rq->rebase) {
			if (!branch_of(t, rq->rebase)) {
				pg_log_warn(COMP, "recheck %lld: context %s: '%s' is not a branch of "
					    "tree %s: left out", (long long)rq->id, ctxs[i]->name,
					    rq->rebase, t->name);
				continue;
			}
			branch = rq->rebase;
		}
		ch[i].tree = t;
		ch[i].branch = branch;
		for (k = 0; k < *n_groups; k++)
			if (groups[k].tree == t && strcmp(groups[k].branch, branch) == 0)
				break;
		if (k == *n_groups) {
			groups[k].tree = t;
			groups[k].branch = branch;
			(*n_groups)++;
		}
	}
	/* The contexts of each group, in the profile's order. */
	for (size_t k = 0; k < *n_groups; k++) {
		groups[k].ctx = slots + used;
		groups[k].n_ctx = 0;
		for (size_t i = 0; i < n_ctx; i++)
			if (ch[i].tree == groups[k].tree &&
			    strcmp(ch[i].branch, groups[k].branch) == 0)
				groups[k].ctx[groups[k].n_ctx++] = ctxs[i];
		used += groups[k].n_ctx;
	}
	rc = 0;
out:
	free(ch);
	return rc;
}
