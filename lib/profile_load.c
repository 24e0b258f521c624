/* SPDX-License-Identifier: MIT */
/*
 * Loading and validating profile files (the format is in profile.h).
 *
 * Each file is parsed section by section into the set; names are checked
 * against everything loaded so far, so duplicates across files are caught
 * with both files at hand.  References between sections are resolved only
 * when every file is in, because they may cross files.  Any error frees the
 * whole set: a half-loaded catalogue is never visible.
 */
#include "profile_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "vec.h"

static const char *const section_names[] = {
	"trees", "tree_rules", "default_tree", "host_classes", "build_modes",
	"benchmarks", "contexts", NULL
};

static const char *const buildtypes[] = {
	"plain", "debug", "debugoptimized", "release", "minsize", NULL
};
static const char *const post_to_names[] = { "last_patch", "all_patches", NULL };

static int check_url(struct profile_loader *ld, const char *path, const char *s)
{
	static const char *const schemes[] = {
		"https://", "http://", "git://", "ssh://", "file://", NULL
	};
	const char *rest = NULL;

	if (profile_check_text(ld, path, s, PROFILE_TEXT_MAX, true) < 0)
		return -1;
	for (size_t i = 0; schemes[i] && !rest; i++)
		if (strncmp(s, schemes[i], strlen(schemes[i])) == 0)
			rest = s + strlen(schemes[i]);
	if (!rest && s[0] == '/')
		rest = s + 1;
	if (!rest || !*rest || strpbrk(s, " \t"))
		return profile_fail(ld, path, "'%s' is not a git URL (https://, http://, git://, "
				    "ssh://, file://) or an absolute path", s);
	return 0;
}

static int check_tag(struct profile_loader *ld, const char *path, const char *s)
{
	if (!profile_valid_name(s, PROFILE_VALUE_MAX))
		return profile_fail(ld, path, "'%s' is not a subject tag of letters, digits, "
				    "'_', '.' or '-'", s);
	return 0;
}

static int check_glob(struct profile_loader *ld, const char *path, const char *s)
{
	return profile_check_text(ld, path, s, PROFILE_TEXT_MAX, true);
}

static int check_ref(struct profile_loader *ld, const char *path, const char *s)
{
	return profile_check_text(ld, path, s, PROFILE_VALUE_MAX, true);
}

static int load_tree(struct profile_loader *ld, const char *path, const char *name,
		     const cJSON *obj)
{
	static const char *const keys[] = {
		"description", "url", "default_branch", "branches", NULL
	};
	struct profile_set *ps = ld->ps;
	struct profile_tree *t;
	char upath[PROFILE_PATH_LEN];
	bool found = false;
	void *p;
	int rc;

	profile_path_join(upath, path, "url");
	if (profile_check_name(ld, path, name) < 0 ||
	    profile_check_new_entry(ld, "trees", path, name, ps->trees, ps->n_trees, sizeof(*t),
				    offsetof(struct profile_tree, file)) < 0)
		return -1;
	p = profile_grow(ps->trees, ps->n_trees, sizeof(*t));
	if (!p)
		return profile_oom(ld);
	ps->trees = p;
	t = &ps->trees[ps->n_trees++];
	t->file = ld->file;
	t->name = strdup(name);
	if (!t->name)
		return profile_oom(ld);
	if (profile_check_object(ld, path, obj, keys, "unknown field") < 0 ||
	    profile_get_text(ld, path, obj, "description", false, PROFILE_DESC_MAX,
			     &t->description) < 0 ||
	    profile_get_text(ld, path, obj, "url", true, PROFILE_TEXT_MAX, &t->url) < 0 ||
	    check_url(ld, upath, t->url) < 0 ||
	    profile_get_text(ld, path, obj, "default_branch", true, PROFILE_VALUE_MAX,
			     &t->default_branch) < 0)
		return -1;
	if (!profile_valid_branch(t->default_branch))
		return profile_fail_at(ld, path, "default_branch",
				       "'%s' is not a valid branch name", t->default_branch);
	rc = profile_get_strlist(ld, path, obj, "branches", false, true, true, profile_check_branch,
				 &t->branches, &t->n_branches);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		t->branches = calloc(1, sizeof(*t->branches));
		if (!t->branches)
			return profile_oom(ld);
		t->n_branches = 1;
		t->branches[0] = strdup(t->default_branch);
		if (!t->branches[0])
			return profile_oom(ld);
	}
	for (size_t i = 0; i < t->n_branches; i++)
		found |= strcmp(t->branches[i], t->default_branch) == 0;
	if (!found)
		return profile_fail_at(ld, path, "branches", "must include the default branch '%s'",
				       t->default_branch);
	return 0;
}

static int load_tree_rule(struct profile_loader *ld, const char *path, const cJSON *obj)
{
	static const char *const keys[] = {
		"description", "paths", "subject_tags", "tree", "branch", NULL
	};
	struct profile_set *ps = ld->ps;
	struct profile_tree_rule *r;
	void *p;

	if (ps->n_tree_rules >= PROFILE_MAX_ENTRIES)
		return profile_fail(ld, "tree_rules", "more than %d rules in the catalogue",
				    PROFILE_MAX_ENTRIES);
	if (!cJSON_IsObject(obj))
		return profile_fail(ld, path, "expected an object, got %s", pg_json_type_name(obj));
	p = profile_grow(ps->tree_rules, ps->n_tree_rules, sizeof(*r));
	if (!p)
		return profile_oom(ld);
	ps->tree_rules = p;
	r = &ps->tree_rules[ps->n_tree_rules++];
	r->file = ld->file;
	if (profile_check_object(ld, path, obj, keys, "unknown field") < 0 ||
	    profile_get_text(ld, path, obj, "description", false, PROFILE_DESC_MAX,
			     &r->description) < 0 ||
	    profile_get_strlist(ld, path, obj, "paths", false, false, true, check_glob, &r->paths,
				&r->n_paths) < 0 ||
	    profile_get_strlist(ld, path, obj, "subject_tags", false, false, true, check_tag,
				&r->subject_tags, &r->n_subject_tags) < 0)
		return -1;
	if (r->n_paths == 0 && r->n_subject_tags == 0)
		return profile_fail(ld, path,
				    "needs paths or subject_tags (a rule without either "
				    "would match every series)");
	if (profile_get_text(ld, path, obj, "tree", true, PROFILE_VALUE_MAX, &r->tree) < 0 ||
	    profile_get_text(ld, path, obj, "branch", false, PROFILE_VALUE_MAX, &r->branch) < 0)
		return -1;
	if (r->branch && !profile_valid_branch(r->branch))
		return profile_fail_at(ld, path, "branch", "'%s' is not a valid branch name",
				       r->branch);
	return 0;
}

/* One lcore id at *p: the id, -1 when there is no number, -2 when it is
 * above PROFILE_MAX_LCORE (bounded, so a long digit string cannot overflow). */
static long read_lcore(const char **p)
{
	const char *start = *p;
	long v = 0;

	while (profile_is_digit(**p) && v <= PROFILE_MAX_LCORE)
		v = v * 10 + (*(*p)++ - '0');
	if (*p == start)
		return -1;
	if (profile_is_digit(**p) || v > PROFILE_MAX_LCORE)
		return -2;
	return v;
}

/*
 * A DPDK core list as -l takes it: "2-5", "2,4,6,8", "2-3,6-7".  Repeats
 * are refused (DPDK would silently merge them, hiding a typo).
 */
static int parse_lcores(struct profile_loader *ld, const char *path, const char *s,
			unsigned **ids, size_t *n)
{
	bool seen[PROFILE_MAX_LCORE + 1] = { false };
	const char *p = s;
	size_t count = 0, k = 0;

	for (;;) {
		long lo = read_lcore(&p), hi = lo;

		if (lo >= 0 && *p == '-') {
			p++;
			hi = read_lcore(&p);
		}
		if (lo == -1 || hi == -1)
			goto syntax;
		if (lo == -2 || hi == -2)
			return profile_fail(ld, path, "'%s': lcore ids go up to %d", s,
					    PROFILE_MAX_LCORE);
		if (hi < lo)
			return profile_fail(ld, path, "'%s': range %ld-%ld goes down", s, lo, hi);
		for (long c = lo; c <= hi; c++) {
			if (seen[c])
				return profile_fail(ld, path, "'%s' names lcore %ld twice", s, c);
			seen[c] = true;
			count++;
		}
		if (*p == '\0')
			break;
		if (*p++ != ',')
			goto syntax;
	}
	if (count < 2)
		return profile_fail(ld, path, "'%s' names 1 lcore; at least 2 are needed (the "
				    "main lcore and a worker)", s);
	*ids = calloc(count, sizeof(**ids));
	if (!*ids)
		return profile_oom(ld);
	*n = count;
	for (unsigned c = 0; c <= PROFILE_MAX_LCORE; c++)
		if (seen[c])
			(*ids)[k++] = c;
	return 0;
syntax:
	return profile_fail(ld, path, "'%s' is not a DPDK core list such as \"2-5\" or "
			    "\"2,4,6,8\"", s);
}

/* A host class's meson_options: named and checked as a build mode's
 * (PROFILE_KV_MESON: not buildtype or c_args, which are the build mode's
 * alone). */
static int load_class_build_options(struct profile_loader *ld, const char *path,
				    const cJSON *obj, struct profile_host_class *hc)
{
	return profile_get_kvmap(ld, path, obj, "meson_options", false, PROFILE_KV_MESON,
				 &hc->meson_options, &hc->n_meson_options) < 0 ? -1 : 0;
}

/* max_load_wait_s and require (quiet-host gating, agent/hostgate.h). */
static int load_host_quiet(struct profile_loader *ld, const char *path, const cJSON *obj,
			   struct profile_host_class *hc)
{
	static const char *const keys[] = {
		"governor", "turbo", "smt", "isolated_cpus", "nohz_full", NULL
	};
	static const char *const on_off[] = { "on", "off", NULL };
	struct profile_host_require *rq = &hc->require;
	char rpath[PROFILE_PATH_LEN];
	const cJSON *req;
	int rc, v;

	hc->max_load_wait_s = PROFILE_MAX_LOAD_WAIT_S;
	rc = profile_get_int(ld, path, obj, "max_load_wait_s", false, 1, 86400,
			     &hc->max_load_wait_s);
	if (rc < 0)
		return -1;
	/* A bound of a wait that never happens would mislead. */
	if (rc == 1 && !hc->has_max_load)
		return profile_fail_at(ld, path, "max_load_wait_s", "needs max_load");
	rc = profile_get_object(ld, path, obj, "require", false, &req);
	if (rc <= 0)
		return rc;
	hc->has_require = true;
	profile_path_join(rpath, path, "require");
	if (profile_check_object(ld, rpath, req, keys, "unknown field") < 0 ||
	    profile_get_text(ld, rpath, req, "governor", false, 64, &rq->governor) < 0 ||
	    profile_get_bool(ld, rpath, req, "isolated_cpus", false, &rq->isolated_cpus) < 0 ||
	    profile_get_bool(ld, rpath, req, "nohz_full", false, &rq->nohz_full) < 0)
		return -1;
	if (rq->governor && !profile_valid_name(rq->governor, 64))
		return profile_fail_at(ld, rpath, "governor", "'%s' is not a governor name",
				       rq->governor);
	v = -1;
	if (profile_get_enum(ld, rpath, req, "turbo", false, on_off, &v) < 0)
		return -1;
	if (v >= 0 && !(rq->turbo = strdup(on_off[v])))
		return profile_oom(ld);
	v = -1;
	if (profile_get_enum(ld, rpath, req, "smt", false, on_off, &v) < 0)
		return -1;
	if (v >= 0 && !(rq->smt = strdup(on_off[v])))
		return profile_oom(ld);
	return 0;
}

static int load_host_class(struct profile_loader *ld, const char *path, const char *name,
			   const cJSON *obj)
{
	static const char *const keys[] = {
		"description", "labels", "lcores", "memory_mb", "hugepages", "numa_node",
		"max_load", "max_load_wait_s", "require", "ports",
		"meson_options",	/* load_class_build_options() */
		NULL
	};
	struct profile_set *ps = ld->ps;
	struct profile_host_class *hc;
	char lpath[PROFILE_PATH_LEN];
	int rc;
	void *p;

	if (profile_check_name(ld, path, name) < 0 ||
	    profile_check_new_entry(ld, "host_classes", path, name, ps->host_classes,
				    ps->n_host_classes, sizeof(*hc),
				    offsetof(struct profile_host_class, file)) < 0)
		return -1;
	p = profile_grow(ps->host_classes, ps->n_host_classes, sizeof(*hc));
	if (!p)
		return profile_oom(ld);
	ps->host_classes = p;
	hc = &ps->host_classes[ps->n_host_classes++];
	hc->file = ld->file;
	hc->numa_node = -1;
	hc->name = strdup(name);
	if (!hc->name)
		return profile_oom(ld);
	profile_path_join(lpath, path, "lcores");
	if (profile_check_object(ld, path, obj, keys, "unknown field") < 0 ||
	    profile_get_text(ld, path, obj, "description", false, PROFILE_DESC_MAX,
			     &hc->description) < 0 ||
	    profile_get_kvmap(ld, path, obj, "labels", true, PROFILE_KV_LABEL, &hc->labels,
			      &hc->n_labels) < 0 ||
	    profile_get_text(ld, path, obj, "lcores", true, PROFILE_VALUE_MAX, &hc->lcores) < 0 ||
	    parse_lcores(ld, lpath, hc->lcores, &hc->lcore_ids, &hc->n_lcores) < 0 ||
	    profile_get_int(ld, path, obj, "memory_mb", true, 64, 1048576, &hc->memory_mb) < 0 ||
	    profile_get_bool(ld, path, obj, "hugepages", true, &hc->hugepages) < 0 ||
	    profile_get_int(ld, path, obj, "numa_node", false, 0, 1023, &hc->numa_node) < 0)
		return -1;
	rc = profile_get_number(ld, path, obj, "max_load", 0, 1e6, &hc->max_load);
	if (rc < 0)
		return -1;
	hc->has_max_load = rc == 1;
	if (profile_load_ports(ld, path, obj, hc) < 0 ||
	    load_host_quiet(ld, path, obj, hc) < 0)
		return -1;
	return load_class_build_options(ld, path, obj, hc);
}

/* Exactly digits '.' digits, as DPDK names its releases ("23.11"). */
static bool release_name(const char *s)
{
	size_t major = strspn(s, "0123456789");

	return major > 0 && s[major] == '.' && strspn(s + major + 1, "0123456789") > 0 &&
	       s[major + 1 + strspn(s + major + 1, "0123456789")] == '\0';
}

static int load_by_version(struct profile_loader *ld, const char *path, const cJSON *obj,
			   struct profile_build_mode *bm)
{
	static const char *const keys[] = { "since", "options", NULL };
	char bpath[PROFILE_PATH_LEN], epath[PROFILE_PATH_LEN];
	const cJSON *arr, *item;
	size_t count, i = 0;
	int rc = profile_get_array(ld, path, obj, "meson_options_by_version", false, &arr);

	if (rc <= 0)
		return rc;
	profile_path_join(bpath, path, "meson_options_by_version");
	count = (size_t)cJSON_GetArraySize(arr);
	if (count > PROFILE_MAX_ITEMS)
		return profile_fail(ld, bpath, "has more than %d items", PROFILE_MAX_ITEMS);
	bm->by_version = calloc(count ? count : 1, sizeof(*bm->by_version));
	if (!bm->by_version)
		return profile_oom(ld);
	bm->n_by_version = count;
	cJSON_ArrayForEach(item, arr) {
		struct profile_version_options *v = &bm->by_version[i];
		char spath[PROFILE_PATH_LEN];

		profile_path_index(epath, bpath, i);
		profile_path_join(spath, epath, "since");
		if (!cJSON_IsObject(item))
			return profile_fail(ld, epath, "expected an object, got %s",
					    pg_json_type_name(item));
		if (profile_check_object(ld, epath, item, keys, "unknown field") < 0 ||
		    profile_get_text(ld, epath, item, "since", true, PROFILE_VALUE_MAX,
				     &v->since) < 0)
			return -1;
		if (!release_name(v->since) ||
		    profile_parse_version(v->since, &v->major, &v->minor) < 0)
			return profile_fail(ld, spath,
					    "'%s' is not a DPDK release such as \"23.11\"",
					    v->since);
		if (i > 0 && (v->major < v[-1].major ||
			      (v->major == v[-1].major && v->minor <= v[-1].minor)))
			return profile_fail(ld, spath, "'%s' does not come after '%s' (entries go "
					    "in ascending order)", v->since, v[-1].since);
		if (profile_get_kvmap(ld, epath, item, "options", true, PROFILE_KV_MESON,
				      &v->options, &v->n_options) < 0)
			return -1;
		i++;
	}
	return 1;
}

static int load_build_mode(struct profile_loader *ld, const char *path, const char *name,
			   const cJSON *obj)
{
	static const char *const keys[] = {
		"description", "buildtype", "meson_options", "c_args",
		"meson_options_by_version", NULL
	};
	struct profile_set *ps = ld->ps;
	struct profile_build_mode *bm;
	int bt;
	void *p;

	if (profile_check_name(ld, path, name) < 0 ||
	    profile_check_new_entry(ld, "build_modes", path, name, ps->build_modes,
				    ps->n_build_modes, sizeof(*bm),
				    offsetof(struct profile_build_mode, file)) < 0)
		return -1;
	p = profile_grow(ps->build_modes, ps->n_build_modes, sizeof(*bm));
	if (!p)
		return profile_oom(ld);
	ps->build_modes = p;
	bm = &ps->build_modes[ps->n_build_modes++];
	bm->file = ld->file;
	bm->name = strdup(name);
	if (!bm->name)
		return profile_oom(ld);
	if (profile_check_object(ld, path, obj, keys, "unknown field") < 0 ||
	    profile_get_text(ld, path, obj, "description", false, PROFILE_DESC_MAX,
			     &bm->description) < 0 ||
	    profile_get_enum(ld, path, obj, "buildtype", true, buildtypes, &bt) < 0)
		return -1;
	bm->buildtype = strdup(buildtypes[bt]);
	if (!bm->buildtype)
		return profile_oom(ld);
	if (profile_get_kvmap(ld, path, obj, "meson_options", false, PROFILE_KV_MESON,
			      &bm->meson_options, &bm->n_meson_options) < 0 ||
	    profile_get_text(ld, path, obj, "c_args", false, PROFILE_TEXT_MAX, &bm->c_args) < 0 ||
	    load_by_version(ld, path, obj, bm) < 0)
		return -1;
	return 0;
}

static int check_slug(struct profile_loader *ld, const char *path, const char *name)
{
	size_t len = strlen(name);
	bool ok = len > 0 && len <= PROFILE_CONTEXT_NAME_MAX;

	for (const char *p = name; ok && *p; p++)
		ok = profile_is_alnum(*p) || *p == '-' || *p == '_';
	if (ok)
		return 0;
	if (len > PROFILE_CONTEXT_NAME_MAX)
		return profile_fail(ld, path,
				    "context name is longer than %d bytes (Patchwork's limit)",
				    PROFILE_CONTEXT_NAME_MAX);
	return profile_fail(ld, path,
			    "context name must be a slug of letters, digits, '-' and '_'%s",
			    strchr(name, '/') ? " (Patchwork rejects '/')" : "");
}

static int load_context(struct profile_loader *ld, const char *path, const char *name,
			const cJSON *obj)
{
	static const char *const keys[] = {
		"description", "host_class", "build_modes", "benchmarks", "baseline_benchmarks",
		"trees",
		"default_tree", "repetitions", "max_repetitions", "threshold_pct", "alpha",
		"noise_limit_pct", "post_to", NULL
	};
	struct profile_set *ps = ld->ps;
	struct profile_context *c;
	int post_to = 0, rc;
	void *p;

	if (check_slug(ld, path, name) < 0 ||
	    profile_check_new_entry(ld, "contexts", path, name, ps->contexts, ps->n_contexts,
				    sizeof(*c), offsetof(struct profile_context, file)) < 0)
		return -1;
	p = profile_grow(ps->contexts, ps->n_contexts, sizeof(*c));
	if (!p)
		return profile_oom(ld);
	ps->contexts = p;
	c = &ps->contexts[ps->n_contexts++];
	c->file = ld->file;
	c->repetitions = 6;	/* lib/profile.h */
	c->threshold_pct = 5.0;
	c->alpha = 0.05;
	c->noise_limit_pct = 5.0;
	c->name = strdup(name);
	if (!c->name)
		return profile_oom(ld);
	if (profile_check_object(ld, path, obj, keys, "unknown field") < 0 ||
	    profile_get_text(ld, path, obj, "description", false, PROFILE_DESC_MAX,
			     &c->description) < 0 ||
	    profile_get_text(ld, path, obj, "host_class", true, PROFILE_VALUE_MAX,
			     &c->host_class) < 0 ||
	    profile_get_strlist(ld, path, obj, "build_modes", true, true, true, check_ref,
				&c->build_modes, &c->n_build_modes) < 0 ||
	    profile_get_strlist(ld, path, obj, "benchmarks", true, true, true, check_ref,
				&c->benchmarks, &c->n_benchmarks) < 0 ||
	    profile_get_strlist(ld, path, obj, "baseline_benchmarks", false, true, true, check_ref,
				&c->baseline_benchmarks, &c->n_baseline_benchmarks) < 0 ||
	    profile_get_strlist(ld, path, obj, "trees", false, true, true, check_ref, &c->trees,
				&c->n_trees) < 0 ||
	    profile_get_text(ld, path, obj, "default_tree", false, PROFILE_VALUE_MAX,
			     &c->default_tree) < 0 ||
	    profile_get_int(ld, path, obj, "repetitions", false, 3, 1000, &c->repetitions) < 0)
		return -1;
	c->max_repetitions = 3 * c->repetitions;
	rc = profile_get_int(ld, path, obj, "max_repetitions", false, 1, 10000,
			     &c->max_repetitions);
	if (rc < 0)
		return -1;
	if (c->max_repetitions < c->repetitions)
		return profile_fail_at(ld, path, "max_repetitions",
				       "%d is less than repetitions %d", c->max_repetitions,
				       c->repetitions);
	if (profile_get_number(ld, path, obj, "threshold_pct", 0, 100, &c->threshold_pct) < 0 ||
	    profile_get_number(ld, path, obj, "alpha", 0, 0.5, &c->alpha) < 0 ||
	    profile_get_number(ld, path, obj, "noise_limit_pct", 0, 100, &c->noise_limit_pct) < 0 ||
	    profile_get_enum(ld, path, obj, "post_to", false, post_to_names, &post_to) < 0)
		return -1;
	c->post_to = (enum profile_post_to)post_to;
	return 0;
}

typedef int (*entry_fn)(struct profile_loader *ld, const char *path, const char *name,
			const cJSON *obj);

static int load_section(struct profile_loader *ld, const cJSON *root, const char *section,
			entry_fn fn)
{
	const cJSON *sec, *item;
	char path[PROFILE_PATH_LEN];
	int rc = profile_get_object(ld, "", root, section, false, &sec);

	if (rc <= 0)
		return rc;
	cJSON_ArrayForEach(item, sec) {
		profile_path_join(path, section, item->string);
		if (!cJSON_IsObject(item))
			return profile_fail(ld, path, "expected an object, got %s",
					    pg_json_type_name(item));
		if (fn(ld, path, item->string, item) < 0)
			return -1;
	}
	return 0;
}

static int load_root(struct profile_loader *ld, const cJSON *root, struct profile_file *f)
{
	char list[256], what[320], path[PROFILE_PATH_LEN];
	const cJSON *rules = NULL, *item;
	size_t i = 0;
	int n;

	if (!cJSON_IsObject(root))
		return profile_fail(ld, NULL, "expected an object at the top level, got %s",
				    pg_json_type_name(root));
	profile_join_names(list, sizeof(list), section_names);
	n = snprintf(what, sizeof(what), "unknown section; expected one of %s", list);
	if (n < 0 || (size_t)n >= sizeof(what))
		memcpy(what, "unknown section", sizeof("unknown section"));
	if (profile_check_object(ld, NULL, root, section_names, what) < 0 ||
	    load_section(ld, root, "trees", load_tree) < 0 ||
	    profile_get_array(ld, "", root, "tree_rules", false, &rules) < 0)
		return -1;
	if (rules) {
		cJSON_ArrayForEach(item, rules) {
			profile_path_index(path, "tree_rules", i++);
			if (load_tree_rule(ld, path, item) < 0)
				return -1;
		}
	}
	if (profile_get_text(ld, "", root, "default_tree", false, PROFILE_VALUE_MAX,
			     &f->default_tree) < 0 ||
	    load_section(ld, root, "host_classes", load_host_class) < 0 ||
	    load_section(ld, root, "build_modes", load_build_mode) < 0 ||
	    load_section(ld, root, "benchmarks", profile_load_benchmark) < 0 ||
	    load_section(ld, root, "contexts", load_context) < 0)
		return -1;
	return 0;
}

static int load_text(struct profile_loader *ld, struct profile_file *f, const char *text,
		     size_t len)
{
	cJSON *root = NULL;
	int rc = -1;

	if (len > PROFILE_MAX_FILE_SIZE) {
		pg_err_set(ld->err, PG_ETOOBIG, "%s: larger than %d bytes", f->path,
			   PROFILE_MAX_FILE_SIZE);
		goto out;
	}
	if (pg_json_parse(text, len, &root, ld->err) < 0) {
		pg_err_prefix(ld->err, "%s", f->path);
		goto out;
	}
	rc = load_root(ld, root, f);
out:
	cJSON_Delete(root);
	return rc;
}

static int load_file(struct profile_loader *ld, struct profile_file *f)
{
	struct pg_buf b = PG_BUF_INIT(PROFILE_MAX_FILE_SIZE);
	char chunk[8192];
	ssize_t n;
	int fd, rc = -1;

	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pg_err_errno(ld->err, "%s: cannot open", f->path);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pg_err_errno(ld->err, "%s: cannot read", f->path);
			goto out;
		}
		if (pg_buf_add(&b, chunk, (size_t)n) < 0) {
			if (errno == E2BIG)
				pg_err_set(ld->err, PG_ETOOBIG, "%s: larger than %d bytes",
					   f->path, PROFILE_MAX_FILE_SIZE);
			else
				profile_oom(ld);
			goto out;
		}
	}
	rc = load_text(ld, f, pg_buf_str(&b), b.len);
out:
	close(fd);
	pg_buf_release(&b);
	return rc;
}

/* ---- cross references -------------------------------------------------- */

static int cmp_entry_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool strv_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static int resolve_rules(struct profile_loader *ld)
{
	struct profile_set *ps = ld->ps;
	char path[PROFILE_PATH_LEN];

	for (size_t i = 0; i < ps->n_tree_rules; i++) {
		struct profile_tree_rule *r = &ps->tree_rules[i];
		const struct profile_tree *t = profile_find_tree(ps, r->tree);
		size_t idx = 0;

		/* Messages count rules within their own file. */
		for (size_t j = 0; j < i; j++)
			idx += ps->tree_rules[j].file == r->file;
		ld->file = r->file;
		profile_path_index(path, "tree_rules", idx);
		if (!t)
			return profile_fail_at(ld, path, "tree", "unknown tree '%s'", r->tree);
		if (!r->branch) {
			r->branch = strdup(t->default_branch);
			if (!r->branch)
				return profile_oom(ld);
		}
		if (!strv_has(t->branches, t->n_branches, r->branch))
			return profile_fail_at(ld, path, "branch",
					       "'%s' is not one of the branches of tree '%s'",
					       r->branch, t->name);
	}
	return 0;
}

/* Each benchmark named in field (under path) exists and fits the host
 * class's lcores. */
static int check_context_benchmarks(struct profile_loader *ld, const char *path,
				    const char *field, char *const *names, size_t n,
				    const struct profile_host_class *hc)
{
	char lpath[PROFILE_PATH_LEN];

	profile_path_join(lpath, path, field);
	for (size_t i = 0; i < n; i++) {
		const struct profile_benchmark *b = profile_find_benchmark(ld->ps, names[i]);
		unsigned most = 0;

		if (!b)
			return profile_fail_idx(ld, lpath, i, "unknown benchmark '%s'", names[i]);
		for (size_t j = 0; b->has_subset && j < b->subset.n_cores; j++)
			most = b->subset.cores[j] > most ? b->subset.cores[j] : most;
		if (most > hc->n_lcores)
			return profile_fail_idx(ld, lpath, i,
						"benchmark '%s' runs on up to %u cores "
						"(subset.cores) but host class '%s' has %zu lcores",
						b->name, most, hc->name, hc->n_lcores);
		if (profile_check_fwd_class(ld, lpath, i, b, hc) < 0)
			return -1;
	}
	return 0;
}

static int resolve_context(struct profile_loader *ld, struct profile_context *c)
{
	struct profile_set *ps = ld->ps;
	const struct profile_host_class *hc;
	char path[PROFILE_PATH_LEN], lpath[PROFILE_PATH_LEN];
	const char *def = NULL;

	ld->file = c->file;
	profile_path_join(path, "contexts", c->name);
	hc = profile_find_host_class(ps, c->host_class);
	if (!hc)
		return profile_fail_at(ld, path, "host_class", "unknown host class '%s'",
				       c->host_class);
	profile_path_join(lpath, path, "build_modes");
	for (size_t i = 0; i < c->n_build_modes; i++)
		if (!profile_find_build_mode(ps, c->build_modes[i]))
			return profile_fail_idx(ld, lpath, i, "unknown build mode '%s'",
						c->build_modes[i]);
	if (check_context_benchmarks(ld, path, "benchmarks", c->benchmarks, c->n_benchmarks,
				     hc) < 0 ||
	    check_context_benchmarks(ld, path, "baseline_benchmarks", c->baseline_benchmarks,
				     c->n_baseline_benchmarks, hc) < 0)
		return -1;
	profile_path_join(lpath, path, "trees");
	if (!c->trees) {
		/* Every tree; the printout lists them, so a reload is the same. */
		c->trees = calloc(ps->n_trees ? ps->n_trees : 1, sizeof(*c->trees));
		if (!c->trees)
			return profile_oom(ld);
		for (size_t i = 0; i < ps->n_trees; i++) {
			c->trees[i] = strdup(ps->trees[i].name);
			if (!c->trees[i])
				return profile_oom(ld);
			c->n_trees++;
		}
	}
	for (size_t i = 0; i < c->n_trees; i++)
		if (!profile_find_tree(ps, c->trees[i]))
			return profile_fail_idx(ld, lpath, i, "unknown tree '%s'", c->trees[i]);
	if (c->default_tree) {
		if (!strv_has(c->trees, c->n_trees, c->default_tree))
			return profile_fail_at(ld, path, "default_tree",
					       "'%s' is not one of the context's trees",
					       c->default_tree);
		return 0;
	}
	/* The context's own file first, then the files in load order. */
	for (size_t i = 0; i < ps->n_files && !def; i++)
		if (ps->files[i].path == c->file && ps->files[i].default_tree &&
		    strv_has(c->trees, c->n_trees, ps->files[i].default_tree))
			def = ps->files[i].default_tree;
	for (size_t i = 0; i < ps->n_files && !def; i++)
		if (ps->files[i].default_tree &&
		    strv_has(c->trees, c->n_trees, ps->files[i].default_tree))
			def = ps->files[i].default_tree;
	if (!def)
		return profile_fail_at(ld, path, "default_tree",
				       "none of the context's trees is a file's default_tree; "
				       "name one here");
	c->default_tree = strdup(def);
	return c->default_tree ? 0 : profile_oom(ld);
}

/* Sort a section by name; an empty one may be NULL, which qsort() must not see. */
static void sort_section(void *base, size_t n, size_t size)
{
	if (n)
		qsort(base, n, size, cmp_entry_name);
}

static int resolve(struct profile_loader *ld)
{
	struct profile_set *ps = ld->ps;

	sort_section(ps->trees, ps->n_trees, sizeof(*ps->trees));
	sort_section(ps->host_classes, ps->n_host_classes, sizeof(*ps->host_classes));
	sort_section(ps->build_modes, ps->n_build_modes, sizeof(*ps->build_modes));
	sort_section(ps->benchmarks, ps->n_benchmarks, sizeof(*ps->benchmarks));
	sort_section(ps->contexts, ps->n_contexts, sizeof(*ps->contexts));
	if (resolve_rules(ld) < 0)
		return -1;
	for (size_t i = 0; i < ps->n_files; i++) {
		const char *d = ps->files[i].default_tree;

		ld->file = ps->files[i].path;
		if (d && !profile_find_tree(ps, d))
			return profile_fail(ld, "default_tree", "unknown tree '%s'", d);
		if (d && !ps->default_tree)
			ps->default_tree = d;
	}
	if (ps->n_contexts && !ps->default_tree) {
		ld->file = ps->contexts[0].file;
		return profile_fail(ld, "default_tree",
				    "missing; a file must set it when contexts are defined");
	}
	for (size_t i = 0; i < ps->n_contexts; i++)
		if (resolve_context(ld, &ps->contexts[i]) < 0)
			return -1;
	return 0;
}

/* ---- the public face --------------------------------------------------- */

int profile_set_load(struct profile_set *ps, const char *const *paths, size_t n,
		     struct pg_err *err)
{
	struct profile_loader ld = { ps, "", err };
	int rc = -1;

	memset(ps, 0, sizeof(*ps));
	if (n == 0)
		return 0;
	ps->files = calloc(n, sizeof(*ps->files));
	if (!ps->files) {
		pg_err_set(err, PG_ENOMEM, "load profiles: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		ps->files[i].path = strdup(paths[i]);
		if (!ps->files[i].path) {
			pg_err_set(err, PG_ENOMEM, "load profiles: out of memory");
			goto out;
		}
		ps->n_files++;
		ld.file = ps->files[i].path;
		if (load_file(&ld, &ps->files[i]) < 0)
			goto out;
	}
	if (resolve(&ld) < 0)
		goto out;
	rc = 0;
out:
	if (rc)
		profile_set_free(ps);
	return rc;
}

int profile_set_load_text(struct profile_set *ps, const char *name, const char *text,
			  size_t len, struct pg_err *err)
{
	struct profile_loader ld = { ps, "", err };
	int rc = -1;

	memset(ps, 0, sizeof(*ps));
	ps->files = calloc(1, sizeof(*ps->files));
	if (!ps->files || !(ps->files[0].path = strdup(name))) {
		pg_err_set(err, PG_ENOMEM, "load profiles: out of memory");
		goto out;
	}
	ps->n_files = 1;
	ld.file = ps->files[0].path;
	if (load_text(&ld, &ps->files[0], text, len) < 0 || resolve(&ld) < 0)
		goto out;
	rc = 0;
out:
	if (rc)
		profile_set_free(ps);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int profile_set_load_dir(struct profile_set *ps, const char *dir, struct pg_err *err)
{
	struct pg_buf path = PG_BUF_INIT(4096);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int rc = -1;

	memset(ps, 0, sizeof(*ps));
	d = opendir(dir);
	if (!d)
		return pg_err_errno(err, "%s: cannot open directory", dir);
	for (errno = 0; (de = readdir(d)); errno = 0) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		if (n == PROFILE_MAX_ENTRIES) {
			pg_err_set(err, PG_ETOOBIG, "%s: more than %d profile files", dir,
				   PROFILE_MAX_ENTRIES);
			goto out;
		}
		if (PG_GROW(names, cap, n + 1) < 0)
			goto nomem;
		pg_buf_reset(&path);
		if (pg_buf_printf(&path, "%s%s%s", dir,
				  dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/",
				  de->d_name) < 0)
			goto nomem;
		names[n] = pg_buf_detach(&path, NULL);
		if (!names[n])
			goto nomem;
		n++;
	}
	if (errno) {
		pg_err_errno(err, "%s: cannot read directory", dir);
		goto out;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	rc = profile_set_load(ps, (const char *const *)names, n, err);
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "%s: out of memory", dir);
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	pg_buf_release(&path);
	closedir(d);
	return rc;
}
