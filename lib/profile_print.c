/* SPDX-License-Identifier: MIT */
/*
 * The normalised printout of a catalogue (--check-config and golden tests):
 * defaults filled in, sections sorted by name, keys in a fixed order.  It
 * is itself a valid profile file that loads to the same printout.
 */
#include "profile_int.h"

#include <stdlib.h>

/* The cJSON_Add* helpers return NULL on failure; fold that into -1. */
static int add_str(cJSON *obj, const char *key, const char *s)
{
	return cJSON_AddStringToObject(obj, key, s) ? 0 : -1;
}

static int add_num(cJSON *obj, const char *key, double v)
{
	return cJSON_AddNumberToObject(obj, key, v) ? 0 : -1;
}

static int add_bool(cJSON *obj, const char *key, bool v)
{
	return cJSON_AddBoolToObject(obj, key, v) ? 0 : -1;
}

static int add_opt_str(cJSON *obj, const char *key, const char *s)
{
	return s ? add_str(obj, key, s) : 0;
}

static int add_strv(cJSON *obj, const char *key, char *const *v, size_t n)
{
	cJSON *arr = cJSON_AddArrayToObject(obj, key);

	if (!arr)
		return -1;
	for (size_t i = 0; i < n; i++) {
		cJSON *s = cJSON_CreateString(v[i]);

		if (!s || !cJSON_AddItemToArray(arr, s)) {
			cJSON_Delete(s);
			return -1;
		}
	}
	return 0;
}

static int add_uintv(cJSON *obj, const char *key, const unsigned *v, size_t n)
{
	cJSON *arr = cJSON_AddArrayToObject(obj, key);

	if (!arr)
		return -1;
	for (size_t i = 0; i < n; i++) {
		cJSON *num = cJSON_CreateNumber(v[i]);

		if (!num || !cJSON_AddItemToArray(arr, num)) {
			cJSON_Delete(num);
			return -1;
		}
	}
	return 0;
}

static int add_kv(cJSON *obj, const char *key, const struct profile_kv *kv, size_t n)
{
	cJSON *map = cJSON_AddObjectToObject(obj, key);

	if (!map)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (add_str(map, kv[i].key, kv[i].value) < 0)
			return -1;
	return 0;
}

static int print_tree(cJSON *o, const struct profile_tree *t)
{
	if (add_opt_str(o, "description", t->description) < 0 ||
	    add_str(o, "url", t->url) < 0 ||
	    add_str(o, "default_branch", t->default_branch) < 0 ||
	    add_strv(o, "branches", t->branches, t->n_branches) < 0)
		return -1;
	return 0;
}

static int print_rule(cJSON *o, const struct profile_tree_rule *r)
{
	if (add_opt_str(o, "description", r->description) < 0 ||
	    add_strv(o, "paths", r->paths, r->n_paths) < 0 ||
	    add_strv(o, "subject_tags", r->subject_tags, r->n_subject_tags) < 0 ||
	    add_str(o, "tree", r->tree) < 0 ||
	    add_str(o, "branch", r->branch) < 0)
		return -1;
	return 0;
}

/* max_load_wait_s (with max_load only) and require (only when given,
 * with the members given). */
static int print_host_quiet(cJSON *o, const struct profile_host_class *hc)
{
	const struct profile_host_require *rq = &hc->require;
	cJSON *r;

	if (hc->has_max_load && add_num(o, "max_load_wait_s", hc->max_load_wait_s) < 0)
		return -1;
	if (!hc->has_require)
		return 0;
	if (!(r = cJSON_AddObjectToObject(o, "require")) ||
	    add_opt_str(r, "governor", rq->governor) < 0 ||
	    add_opt_str(r, "turbo", rq->turbo) < 0 ||
	    add_opt_str(r, "smt", rq->smt) < 0 ||
	    (rq->isolated_cpus && add_bool(r, "isolated_cpus", true) < 0) ||
	    (rq->nohz_full && add_bool(r, "nohz_full", true) < 0))
		return -1;
	return 0;
}

static int print_host_class(cJSON *o, const struct profile_host_class *hc)
{
	if (add_opt_str(o, "description", hc->description) < 0 ||
	    add_kv(o, "labels", hc->labels, hc->n_labels) < 0 ||
	    add_str(o, "lcores", hc->lcores) < 0 ||
	    add_num(o, "memory_mb", hc->memory_mb) < 0 ||
	    add_bool(o, "hugepages", hc->hugepages) < 0 ||
	    (hc->numa_node >= 0 && add_num(o, "numa_node", hc->numa_node) < 0) ||
	    (hc->has_max_load && add_num(o, "max_load", hc->max_load) < 0) ||
	    profile_print_ports(o, hc) < 0)
		return -1;
	/* Only when set: catalogues without class options print as before. */
	if (hc->n_meson_options &&
	    add_kv(o, "meson_options", hc->meson_options, hc->n_meson_options) < 0)
		return -1;
	return print_host_quiet(o, hc);
}

static int print_build_mode(cJSON *o, const struct profile_build_mode *bm)
{
	cJSON *arr;

	if (add_opt_str(o, "description", bm->description) < 0 ||
	    add_str(o, "buildtype", bm->buildtype) < 0 ||
	    add_kv(o, "meson_options", bm->meson_options, bm->n_meson_options) < 0 ||
	    add_opt_str(o, "c_args", bm->c_args) < 0)
		return -1;
	arr = cJSON_AddArrayToObject(o, "meson_options_by_version");
	if (!arr)
		return -1;
	for (size_t i = 0; i < bm->n_by_version; i++) {
		cJSON *e = cJSON_CreateObject();

		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			return -1;
		}
		if (add_str(e, "since", bm->by_version[i].since) < 0 ||
		    add_kv(e, "options", bm->by_version[i].options,
			   bm->by_version[i].n_options) < 0)
			return -1;
	}
	return 0;
}

static int print_subset(cJSON *o, const struct profile_mempool_subset *s)
{
	cJSON *sub = cJSON_AddObjectToObject(o, "subset");

	if (!sub ||
	    add_uintv(sub, "cores", s->cores, s->n_cores) < 0 ||
	    add_uintv(sub, "cache", s->cache, s->n_cache) < 0 ||
	    add_uintv(sub, "bulk", s->bulk, s->n_bulk) < 0 ||
	    add_uintv(sub, "keep", s->keep, s->n_keep) < 0 ||
	    add_uintv(sub, "constant_n", s->constant_n, s->n_constant_n) < 0 ||
	    add_num(sub, "time_s", s->time_s) < 0)
		return -1;
	return 0;
}

static int print_benchmark(cJSON *o, const struct profile_benchmark *b)
{
	bool mempool = b->parser == PROFILE_PARSER_MEMPOOL_PERF;

	if (add_opt_str(o, "description", b->description) < 0 ||
	    add_str(o, "program", b->program) < 0 ||
	    add_strv(o, "args", b->args, b->n_args) < 0 ||
	    add_kv(o, "env", b->env, b->n_env) < 0 ||
	    add_str(o, "stdin", profile_stdin_name(b->stdin_mode)) < 0 ||
	    (b->duration_s && add_num(o, "duration_s", b->duration_s) < 0) ||
	    add_str(o, "parser", profile_parser_name(b->parser)) < 0 ||
	    add_strv(o, "gate", b->gate, b->n_gate) < 0 ||
	    add_num(o, "timeout_s", b->timeout_s) < 0 ||
	    (b->stop_after_lines && add_num(o, "stop_after_lines", b->stop_after_lines) < 0) ||
	    (b->warmup_runs && add_num(o, "warmup_runs", b->warmup_runs) < 0) ||
	    (mempool && add_str(o, "mode", profile_mode_name(b->mode)) < 0) ||
	    (b->has_subset && print_subset(o, &b->subset) < 0) ||
	    profile_print_fwd(o, b) < 0)
		return -1;
	return 0;
}

static int print_context(cJSON *o, const struct profile_context *c)
{
	if (add_opt_str(o, "description", c->description) < 0 ||
	    add_str(o, "host_class", c->host_class) < 0 ||
	    add_strv(o, "build_modes", c->build_modes, c->n_build_modes) < 0 ||
	    add_strv(o, "benchmarks", c->benchmarks, c->n_benchmarks) < 0 ||
	    (c->baseline_benchmarks &&
	     add_strv(o, "baseline_benchmarks", c->baseline_benchmarks,
		      c->n_baseline_benchmarks) < 0) ||
	    add_strv(o, "trees", c->trees, c->n_trees) < 0 ||
	    add_str(o, "default_tree", c->default_tree) < 0 ||
	    add_num(o, "repetitions", c->repetitions) < 0 ||
	    add_num(o, "max_repetitions", c->max_repetitions) < 0 ||
	    add_num(o, "threshold_pct", c->threshold_pct) < 0 ||
	    add_num(o, "alpha", c->alpha) < 0 ||
	    add_num(o, "noise_limit_pct", c->noise_limit_pct) < 0 ||
	    add_str(o, "post_to", profile_post_to_name(c->post_to)) < 0)
		return -1;
	return 0;
}

/* One named entry: sec[name] = {...} filled by the section's printer. */
static cJSON *add_entry(cJSON *sec, const char *name)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddItemToObject(sec, name, o)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int print_sections(cJSON *root, const struct profile_set *ps)
{
	cJSON *sec, *o;

	sec = cJSON_AddObjectToObject(root, "trees");
	for (size_t i = 0; sec && i < ps->n_trees; i++)
		if (!(o = add_entry(sec, ps->trees[i].name)) || print_tree(o, &ps->trees[i]) < 0)
			return -1;
	if (!sec || !(sec = cJSON_AddArrayToObject(root, "tree_rules")))
		return -1;
	for (size_t i = 0; i < ps->n_tree_rules; i++) {
		o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(sec, o)) {
			cJSON_Delete(o);
			return -1;
		}
		if (print_rule(o, &ps->tree_rules[i]) < 0)
			return -1;
	}
	if (ps->default_tree && add_str(root, "default_tree", ps->default_tree) < 0)
		return -1;
	sec = cJSON_AddObjectToObject(root, "host_classes");
	for (size_t i = 0; sec && i < ps->n_host_classes; i++)
		if (!(o = add_entry(sec, ps->host_classes[i].name)) ||
		    print_host_class(o, &ps->host_classes[i]) < 0)
			return -1;
	sec = sec ? cJSON_AddObjectToObject(root, "build_modes") : NULL;
	for (size_t i = 0; sec && i < ps->n_build_modes; i++)
		if (!(o = add_entry(sec, ps->build_modes[i].name)) ||
		    print_build_mode(o, &ps->build_modes[i]) < 0)
			return -1;
	sec = sec ? cJSON_AddObjectToObject(root, "benchmarks") : NULL;
	for (size_t i = 0; sec && i < ps->n_benchmarks; i++)
		if (!(o = add_entry(sec, ps->benchmarks[i].name)) ||
		    print_benchmark(o, &ps->benchmarks[i]) < 0)
			return -1;
	sec = sec ? cJSON_AddObjectToObject(root, "contexts") : NULL;
	for (size_t i = 0; sec && i < ps->n_contexts; i++)
		if (!(o = add_entry(sec, ps->contexts[i].name)) ||
		    print_context(o, &ps->contexts[i]) < 0)
			return -1;
	return sec ? 0 : -1;
}

cJSON *profile_set_to_json(const struct profile_set *ps)
{
	cJSON *root = cJSON_CreateObject();

	if (root && print_sections(root, ps) < 0) {
		cJSON_Delete(root);
		root = NULL;
	}
	return root;
}
