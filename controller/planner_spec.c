/* SPDX-License-Identifier: MIT */
/* The job spec of one job: lib/jobspec.h is its definition. */
#include "planner_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec.h"
#include "log.h"
#include "json.h"
#include "verdict.h"

/* What the agent alone knows, as markers that no profile argument can
 * hold (profiles refuse control characters); see expand_args(). */
#define MARK_FILE_PREFIX "\x01"
#define MARK_BUILD_DIR "\x02"
#define MARK_FRAME_SIZE "\x03"

/* cJSON's Add helpers return NULL when out of memory: fold into bools. */
static bool add_str(cJSON *o, const char *k, const char *v)
{
	return v ? cJSON_AddStringToObject(o, k, v) != NULL : cJSON_AddNullToObject(o, k) != NULL;
}

static bool add_num(cJSON *o, const char *k, double v)
{
	return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static bool add_kv(cJSON *o, const char *k, const struct profile_kv *kv, size_t n)
{
	cJSON *m = cJSON_AddObjectToObject(o, k);

	for (size_t i = 0; m && i < n; i++)
		if (!cJSON_AddStringToObject(m, kv[i].key, kv[i].value))
			return false;
	return m != NULL;
}

static bool add_strs(cJSON *o, const char *k, char *const *v, size_t n)
{
	cJSON *a = cJSON_AddArrayToObject(o, k);

	for (size_t i = 0; a && i < n; i++) {
		cJSON *s = cJSON_CreateString(v[i]);

		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			return false;
		}
	}
	return a != NULL;
}

static bool add_uints(cJSON *o, const char *k, const unsigned *v, size_t n)
{
	cJSON *a = cJSON_AddArrayToObject(o, k);

	for (size_t i = 0; a && i < n; i++) {
		cJSON *x = cJSON_CreateNumber(v[i]);

		if (!x || !cJSON_AddItemToArray(a, x)) {
			cJSON_Delete(x);
			return false;
		}
	}
	return a != NULL;
}

static bool add_notes(cJSON *a, const struct notes *ns)
{
	for (size_t i = 0; i < ns->n; i++) {
		cJSON *s = cJSON_CreateString(ns->text[i]);

		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			return false;
		}
	}
	return true;
}

/*
 * The arguments of b for host class hc, as the agent gets them: every
 * placeholder expanded by profile_benchmark_argv() except {file_prefix}
 * and {build_dir}, which it cannot know.  Those two are expanded to
 * markers (control characters, which no profile argument may hold) and
 * turned back into placeholders here, while literal braces are doubled
 * again, so that the agent's expansion of the result is unambiguous.
 */
static int expand_args(const struct profile_benchmark *b, const struct profile_host_class *hc,
		       cJSON *out, struct pg_err *err)
{
	const struct profile_run_vars vars = {
		.file_prefix = MARK_FILE_PREFIX,
		.build_dir = MARK_BUILD_DIR,
		.frame_size = MARK_FRAME_SIZE,
	};
	struct pg_buf arg = PG_BUF_INIT(64 * 1024);
	char **argv = NULL;
	size_t argc = 0;
	int rc = -1;

	if (profile_benchmark_argv(b, hc, &vars, &argv, &argc, err) < 0)
		goto out;
	for (size_t i = 0; i < argc; i++) {
		cJSON *s;
		int r = 0;

		pg_buf_reset(&arg);
		for (const char *c = argv[i]; *c && r == 0; c++) {
			if (*c == MARK_FILE_PREFIX[0])
				r = pg_buf_adds(&arg, JS_ARG_FILE_PREFIX);
			else if (*c == MARK_BUILD_DIR[0])
				r = pg_buf_adds(&arg, JS_ARG_BUILD_DIR);
			else if (*c == MARK_FRAME_SIZE[0])
				r = pg_buf_adds(&arg, JS_ARG_FRAME_SIZE);
			else if (*c == '{')
				r = pg_buf_adds(&arg, "{{");
			else if (*c == '}')
				r = pg_buf_adds(&arg, "}}");
			else
				r = pg_buf_add(&arg, c, 1);
		}
		s = r == 0 ? cJSON_CreateString(pg_buf_str(&arg)) : NULL;
		if (!s || !cJSON_AddItemToArray(out, s)) {
			cJSON_Delete(s);
			pg_err_set(err, PG_ENOMEM, "benchmark '%s': out of memory", b->name);
			goto out;
		}
	}
	rc = 0;
out:
	profile_argv_free(argv, argc);
	pg_buf_release(&arg);
	return rc;
}

static int add_benchmark(cJSON *arr, const struct profile_benchmark *b,
			 const struct profile_host_class *hc, struct pg_err *err)
{
	cJSON *o = cJSON_CreateObject(), *args;
	const struct profile_mempool_subset *s = &b->subset;

	if (!o || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		goto nomem;
	}
	if (!add_str(o, JS_BENCH_NAME, b->name) || !add_str(o, JS_BENCH_PROGRAM, b->program) ||
	    !(args = cJSON_AddArrayToObject(o, JS_BENCH_ARGS)))
		goto nomem;
	if (expand_args(b, hc, args, err) < 0)
		return -1;
	if (!add_kv(o, JS_BENCH_ENV, b->env, b->n_env) ||
	    !add_str(o, JS_BENCH_STDIN, profile_stdin_name(b->stdin_mode)) ||
	    (b->duration_s && !add_num(o, JS_BENCH_DURATION_S, b->duration_s)) ||
	    !add_str(o, JS_BENCH_PARSER, profile_parser_name(b->parser)) ||
	    !add_strs(o, JS_BENCH_GATE, b->gate, b->n_gate) ||
	    !add_num(o, JS_BENCH_TIMEOUT_S, b->timeout_s) ||
	    (b->stop_after_lines && !add_num(o, JS_BENCH_STOP_AFTER_LINES, b->stop_after_lines)) ||
	    (b->warmup_runs && !add_num(o, JS_BENCH_WARMUP_RUNS, b->warmup_runs)))
		goto nomem;
	if (b->parser == PROFILE_PARSER_MEMPOOL_PERF &&
	    !add_str(o, JS_BENCH_MODE, profile_mode_name(b->mode)))
		goto nomem;
	if (b->has_subset) {
		cJSON *sub = cJSON_AddObjectToObject(o, JS_BENCH_SUBSET);

		if (!sub || !add_uints(sub, JS_SUBSET_CORES, s->cores, s->n_cores) ||
		    !add_uints(sub, JS_SUBSET_CACHE, s->cache, s->n_cache) ||
		    !add_uints(sub, JS_SUBSET_BULK, s->bulk, s->n_bulk) ||
		    !add_uints(sub, JS_SUBSET_KEEP, s->keep, s->n_keep) ||
		    !add_uints(sub, JS_SUBSET_CONSTANT_N, s->constant_n, s->n_constant_n) ||
		    !add_num(sub, JS_SUBSET_TIME_S, s->time_s))
			goto nomem;
	}
	if (b->has_fwd &&
	    !add_uints(o, JS_BENCH_FRAME_SIZES, b->fwd.frame_sizes, b->fwd.n_frame_sizes))
		goto nomem;
	return 0;
nomem:
	return pg_err_set(err, PG_ENOMEM, "benchmark '%s': out of memory", b->name);
}

/* The build mode's options for the version with the host class's over
 * them (lib/profile.h, "Per-class build options"). */
static int add_build(cJSON *spec, const struct group *g, const struct profile_build_mode *bm,
		     const struct profile_host_class *hc, struct pg_err *err)
{
	const struct profile_kv **opts = NULL;
	size_t n = 0;
	cJSON *build, *m;
	int rc = -1;

	/* Without a version, no version-gated option: what every DPDK
	 * release knows. */
	if (profile_build_options(bm, hc, g->has_version ? g->major : 0,
				  g->has_version ? g->minor : 0, &opts, &n, err) < 0)
		return -1;
	if (!(build = cJSON_AddObjectToObject(spec, JS_BUILD)) ||
	    !add_str(build, JS_BUILD_BUILDTYPE, bm->buildtype) ||
	    !(m = cJSON_AddObjectToObject(build, JS_BUILD_MESON_OPTIONS)))
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (!cJSON_AddStringToObject(m, opts[i]->key, opts[i]->value))
			goto nomem;
	if (bm->c_args && !add_str(build, JS_BUILD_C_ARGS, bm->c_args))
		goto nomem;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "build mode '%s': out of memory", bm->name);
out:
	free(opts);
	return rc;
}

/* The class's quiet-host gating and requirements (agent/hostgate.h reads
 * them): max_load with its bound, require with the members set.  false
 * when out of memory. */
static bool add_host_quiet(cJSON *h, const struct profile_host_class *hc)
{
	const struct profile_host_require *rq = &hc->require;
	cJSON *r;

	if (hc->has_max_load &&
	    (!add_num(h, JS_HOST_MAX_LOAD, hc->max_load) ||
	     !add_num(h, JS_HOST_MAX_LOAD_WAIT_S, hc->max_load_wait_s)))
		return false;
	if (!hc->has_require)
		return true;
	return (r = cJSON_AddObjectToObject(h, JS_HOST_REQUIRE)) &&
	       (!rq->governor || add_str(r, JS_REQ_GOVERNOR, rq->governor)) &&
	       (!rq->turbo || add_str(r, JS_REQ_TURBO, rq->turbo)) &&
	       (!rq->smt || add_str(r, JS_REQ_SMT, rq->smt)) &&
	       (!rq->isolated_cpus || cJSON_AddBoolToObject(r, JS_REQ_ISOLATED_CPUS, true)) &&
	       (!rq->nohz_full || cJSON_AddBoolToObject(r, JS_REQ_NOHZ_FULL, true));
}

static int add_host(cJSON *spec, const struct profile_host_class *hc, struct pg_err *err)
{
	cJSON *h = cJSON_AddObjectToObject(spec, JS_HOST);

	if (!h || !add_kv(h, JS_HOST_LABELS, hc->labels, hc->n_labels) ||
	    !add_str(h, JS_HOST_LCORES, hc->lcores) || !add_num(h, JS_HOST_MEMORY_MB, hc->memory_mb) ||
	    !cJSON_AddBoolToObject(h, JS_HOST_HUGEPAGES, hc->hugepages) ||
	    (hc->numa_node >= 0 && !add_num(h, JS_HOST_NUMA_NODE, hc->numa_node)) ||
	    !add_host_quiet(h, hc))
		return pg_err_set(err, PG_ENOMEM, "host class '%s': out of memory", hc->name);
	return 0;
}

/* The class's ports, for the agent's checks (agent/portcheck.h). */
static int add_host_ports(cJSON *spec, const struct profile_host_class *hc,
			  struct pg_err *err)
{
	cJSON *h = cJSON_GetObjectItemCaseSensitive(spec, JS_HOST), *arr;

	if (!hc->n_ports)
		return 0;
	if (!h || !(arr = cJSON_AddArrayToObject(h, JS_HOST_PORTS)))
		goto nomem;
	for (size_t i = 0; i < hc->n_ports; i++) {
		const struct profile_port *pt = &hc->ports[i];
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			goto nomem;
		}
		if ((pt->pci && (!add_str(o, JS_PORT_PCI, pt->pci) ||
				 !add_str(o, JS_PORT_DRIVER, pt->driver))) ||
		    (pt->numa_node >= 0 && !add_num(o, JS_PORT_NUMA_NODE, pt->numa_node)) ||
		    (pt->vdev && !add_str(o, JS_PORT_VDEV, pt->vdev)))
			goto nomem;
	}
	return 0;
nomem:
	return pg_err_set(err, PG_ENOMEM, "host class '%s': out of memory", hc->name);
}

static int add_series(cJSON *spec, const struct pass *p, const struct series_info *si,
		      struct pg_err *err)
{
	char url[URL_MAX];
	cJSON *s, *deps;

	if (planner_url(p, url, sizeof(url), "/api/v1/series/", si->id, "/mbox", err) < 0)
		return -1;
	if (!(s = cJSON_AddObjectToObject(spec, JS_SERIES)) ||
	    !add_num(s, JS_SERIES_ID, (double)si->id) || !add_str(s, JS_SERIES_TITLE, si->title) ||
	    !add_num(s, JS_SERIES_VERSION, (double)si->version) ||
	    !add_num(s, JS_SERIES_PATCHES, (double)si->n_patches) ||
	    !add_str(s, JS_SERIES_MBOX_URL, url) ||
	    !(deps = cJSON_AddArrayToObject(spec, JS_DEPENDS_ON)))
		goto nomem;
	for (size_t i = 0; i < si->n_deps; i++) {
		const struct dep *d = &si->deps[i];
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(deps, o)) {
			cJSON_Delete(o);
			goto nomem;
		}
		if (d->series_id && !d->missing &&
		    planner_url(p, url, sizeof(url), "/api/v1/series/", d->series_id, "/mbox", err) < 0)
			return -1;
		if (!(d->series_id ? add_num(o, JS_DEP_SERIES, (double)d->series_id)
				   : cJSON_AddNullToObject(o, JS_DEP_SERIES) != NULL) ||
		    !add_str(o, JS_DEP_KIND, d->kind) || !add_str(o, JS_DEP_REF, d->ref) ||
		    !cJSON_AddBoolToObject(o, JS_DEP_MISSING, d->missing) ||
		    !add_str(o, JS_DEP_MBOX_URL, d->series_id && !d->missing ? url : NULL))
			goto nomem;
	}
	return 0;
nomem:
	return pg_err_set(err, PG_ENOMEM, "series %lld: out of memory", (long long)si->id);
}

int planner_baseline_repetitions(const struct profile_context *ctx)
{
	int need = verdict_min_runs(true, ctx->alpha);

	if (need < ctx->repetitions)
		need = ctx->repetitions;
	return need < ctx->max_repetitions ? need : ctx->max_repetitions;
}

int planner_job_spec(const struct pass *p, const struct series_info *si,
		     const struct group *g, const char *reason,
		     const struct profile_context *ctx, const struct profile_host_class *hc,
		     const struct profile_build_mode *bm, char **out, struct pg_err *err)
{
	const struct profile_set *ps = p->pl->ps;
	cJSON *spec = cJSON_CreateObject(), *tree, *benches, *notes;
	char *const *bnames;
	size_t nb;
	int rc = -1;

	*out = NULL;
	if (!spec || !add_num(spec, JS_FORMAT, PLANNER_SPEC_FORMAT) ||
	    !add_num(spec, JS_RUN, (double)g->run_id) || !add_str(spec, JS_REASON, reason) ||
	    !add_str(spec, JS_CONTEXT, ctx->name) || !add_str(spec, JS_HOST_CLASS, hc->name) ||
	    !add_str(spec, JS_BUILD_MODE, bm->name) ||
	    !(tree = cJSON_AddObjectToObject(spec, JS_TREE)) ||
	    !add_str(tree, JS_TREE_NAME, g->tree->name) || !add_str(tree, JS_TREE_URL, g->tree->url) ||
	    !add_str(tree, JS_TREE_BRANCH, g->branch) || !add_str(tree, JS_TREE_BASE_COMMIT, g->base) ||
	    !add_str(tree, JS_TREE_BASE_SOURCE, g->base_source) ||
	    !add_str(tree, JS_TREE_VERSION, g->has_version || g->version[0] ? g->version : NULL))
		goto nomem;
	if (si) {
		if (add_series(spec, p, si, err) < 0)
			goto out;
	} else {
		cJSON *b = cJSON_AddObjectToObject(spec, JS_BASELINE);

		if (!b || !add_str(b, JS_BASELINE_TRIGGER, g->trigger) ||
		    !cJSON_AddArrayToObject(spec, JS_DEPENDS_ON))
			goto nomem;
	}
	if (add_build(spec, g, bm, hc, err) < 0 || add_host(spec, hc, err) < 0 ||
	    add_host_ports(spec, hc, err) < 0)
		goto out;
	if (!(benches = cJSON_AddArrayToObject(spec, JS_BENCHMARKS)))
		goto nomem;
	/* A baseline runs the context's baseline_benchmarks when it has some. */
	bnames = !si && ctx->baseline_benchmarks ? ctx->baseline_benchmarks : ctx->benchmarks;
	nb = !si && ctx->baseline_benchmarks ? ctx->n_baseline_benchmarks : ctx->n_benchmarks;
	for (size_t i = 0; i < nb; i++) {
		const struct profile_benchmark *b = profile_find_benchmark(ps, bnames[i]);

		if (!b) {
			pg_err_set(err, PG_EINVAL, "context '%s': unknown benchmark '%s'", ctx->name,
				   bnames[i]);
			goto out;
		}
		if (add_benchmark(benches, b, hc, err) < 0)
			goto out;
	}
	if (!add_num(spec, JS_REPETITIONS,
		     si ? ctx->repetitions : planner_baseline_repetitions(ctx)) ||
	    !add_num(spec, JS_MAX_REPETITIONS, ctx->max_repetitions) ||
	    !add_num(spec, JS_THRESHOLD_PCT, ctx->threshold_pct) ||
	    !add_num(spec, JS_ALPHA, ctx->alpha) ||
	    !add_num(spec, JS_NOISE_LIMIT_PCT, ctx->noise_limit_pct) ||
	    !(notes = cJSON_AddArrayToObject(spec, JS_NOTES)) ||
	    (si && !add_notes(notes, &si->notes)) || !add_notes(notes, &g->notes))
		goto nomem;
	*out = pg_json_print(spec, false);
	if (!*out)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "job spec: out of memory");
out:
	cJSON_Delete(spec);
	return rc;
}
