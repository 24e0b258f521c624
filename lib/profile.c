/* SPDX-License-Identifier: MIT */
/*
 * Using a loaded catalogue: lookups, tree selection, label matching, gate
 * keys, meson options per DPDK version, benchmark argument expansion, and
 * freeing it (the loader is in profile_load.c).
 */
#include "profile_int.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "fmt.h"
#include "vec.h"

#define ARG_MAX_LEN 65536	/* an expanded argument */

/* Sections are sorted by name and every entry struct starts with its name. */
static int cmp_key_name(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

const struct profile_context *profile_find_context(const struct profile_set *ps,
						   const char *name)
{
	if (!ps->n_contexts)
		return NULL;
	return bsearch(name, ps->contexts, ps->n_contexts, sizeof(*ps->contexts),
		       cmp_key_name);
}

const struct profile_host_class *profile_find_host_class(const struct profile_set *ps,
							 const char *name)
{
	if (!ps->n_host_classes)
		return NULL;
	return bsearch(name, ps->host_classes, ps->n_host_classes,
		       sizeof(*ps->host_classes), cmp_key_name);
}

const struct profile_build_mode *profile_find_build_mode(const struct profile_set *ps,
							 const char *name)
{
	if (!ps->n_build_modes)
		return NULL;
	return bsearch(name, ps->build_modes, ps->n_build_modes, sizeof(*ps->build_modes),
		       cmp_key_name);
}

const struct profile_benchmark *profile_find_benchmark(const struct profile_set *ps,
						       const char *name)
{
	if (!ps->n_benchmarks)
		return NULL;
	return bsearch(name, ps->benchmarks, ps->n_benchmarks, sizeof(*ps->benchmarks),
		       cmp_key_name);
}

const struct profile_tree *profile_find_tree(const struct profile_set *ps, const char *name)
{
	if (!ps->n_trees)
		return NULL;
	return bsearch(name, ps->trees, ps->n_trees, sizeof(*ps->trees), cmp_key_name);
}

bool profile_host_class_matches(const struct profile_host_class *hc,
				const char *const *keys, const char *const *values,
				size_t n)
{
	for (size_t i = 0; i < hc->n_labels; i++) {
		bool found = false;

		for (size_t j = 0; j < n && !found; j++)
			found = strcmp(keys[j], hc->labels[i].key) == 0 &&
				strcmp(values[j], hc->labels[i].value) == 0;
		if (!found)
			return false;
	}
	return true;
}

static bool rule_matches(const struct profile_tree_rule *r,
			 const char *const *paths, size_t n_paths,
			 const char *const *tags, size_t n_tags)
{
	if (r->n_paths) {
		/* Every touched file must be covered (see profile.h). */
		if (n_paths == 0)
			return false;
		for (size_t i = 0; i < n_paths; i++) {
			bool hit = false;

			for (size_t j = 0; j < r->n_paths && !hit; j++)
				hit = fnmatch(r->paths[j], paths[i], 0) == 0;
			if (!hit)
				return false;
		}
	}
	if (r->n_subject_tags) {
		bool hit = false;

		for (size_t i = 0; i < n_tags && !hit; i++)
			for (size_t j = 0; j < r->n_subject_tags && !hit; j++)
				hit = strcasecmp(tags[i], r->subject_tags[j]) == 0;
		if (!hit)
			return false;
	}
	return true;
}

static bool strv_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* Rules in catalogue order; ctx (may be NULL) limits them to its trees. */
static const struct profile_tree_rule *first_rule(const struct profile_set *ps,
						  const struct profile_context *ctx,
						  const char *const *paths, size_t n_paths,
						  const char *const *tags, size_t n_tags)
{
	for (size_t i = 0; i < ps->n_tree_rules; i++) {
		const struct profile_tree_rule *r = &ps->tree_rules[i];

		if (ctx && !strv_has(ctx->trees, ctx->n_trees, r->tree))
			continue;
		if (rule_matches(r, paths, n_paths, tags, n_tags))
			return r;
	}
	return NULL;
}

static int default_branch(const struct profile_set *ps, const char *name,
			  const char **tree, const char **branch)
{
	const struct profile_tree *t = name ? profile_find_tree(ps, name) : NULL;

	if (!t)
		return -1;
	*tree = t->name;
	*branch = t->default_branch;
	return 0;
}

int profile_select_tree(const struct profile_set *ps,
			const char *const *paths_touched, size_t n_paths,
			const char *const *subject_tags, size_t n_tags,
			const char **tree, const char **branch)
{
	const struct profile_tree_rule *r;

	r = first_rule(ps, NULL, paths_touched, n_paths, subject_tags, n_tags);
	if (r) {
		*tree = r->tree;
		*branch = r->branch;
		return 0;
	}
	return default_branch(ps, ps->default_tree, tree, branch);
}

int profile_context_select_tree(const struct profile_set *ps,
				const struct profile_context *ctx,
				const char *const *paths_touched, size_t n_paths,
				const char *const *subject_tags, size_t n_tags,
				const char **tree, const char **branch)
{
	const struct profile_tree_rule *r;

	r = first_rule(ps, ctx, paths_touched, n_paths, subject_tags, n_tags);
	if (r) {
		*tree = r->tree;
		*branch = r->branch;
		return 0;
	}
	return default_branch(ps, ctx->default_tree, tree, branch);
}

bool profile_gate_matches(const struct profile_benchmark *b, const char *key)
{
	for (size_t i = 0; i < b->n_gate; i++)
		if (fnmatch(b->gate[i], key, 0) == 0)
			return true;
	return false;
}

bool profile_key_higher_is_better(const char *key)
{
	const char *last = strrchr(key, '.');
	size_t len;

	last = last ? last + 1 : key;
	len = strlen(last);
	if (strcmp(last, "cycles_per_pkt") == 0)
		return false;
	return !(len >= 8 && strcmp(last + len - 8, "_dropped") == 0);
}

int profile_parse_version(const char *s, unsigned *major, unsigned *minor)
{
	unsigned long v[2] = { 0, 0 };

	for (int i = 0; i < 2; i++) {
		const char *start = s;

		/* Bounded so that no digit string can overflow. */
		while (*s >= '0' && *s <= '9' && v[i] < 100000)
			v[i] = v[i] * 10 + (unsigned long)(*s++ - '0');
		if (s == start || (*s >= '0' && *s <= '9'))
			return -1;
		if (i == 0 && *s++ != '.')
			return -1;
	}
	*major = (unsigned)v[0];
	*minor = (unsigned)v[1];
	return 0;
}

static int cmp_kv_ptr(const void *a, const void *b)
{
	const struct profile_kv *const *x = a, *const *y = b;

	return strcmp((*x)->key, (*y)->key);
}

int profile_build_mode_options(const struct profile_build_mode *bm,
			       unsigned major, unsigned minor,
			       const struct profile_kv ***out, size_t *n,
			       struct pg_err *err)
{
	const struct profile_kv **v;
	size_t total = bm->n_meson_options, used = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < bm->n_by_version; i++)
		total += bm->by_version[i].n_options;
	v = calloc(total ? total : 1, sizeof(*v));
	if (!v)
		return pg_err_set(err, PG_ENOMEM, "build mode '%s': out of memory", bm->name);
	for (size_t i = 0; i < bm->n_meson_options; i++)
		v[used++] = &bm->meson_options[i];
	for (size_t i = 0; i < bm->n_by_version; i++) {
		const struct profile_version_options *e = &bm->by_version[i];

		if (e->major > major || (e->major == major && e->minor > minor))
			break;	/* ascending: the rest are newer still */
		for (size_t j = 0; j < e->n_options; j++) {
			size_t k;

			for (k = 0; k < used; k++)
				if (strcmp(v[k]->key, e->options[j].key) == 0)
					break;
			v[k] = &e->options[j];
			if (k == used)
				used++;
		}
	}
	qsort(v, used, sizeof(*v), cmp_kv_ptr);
	*out = v;
	*n = used;
	return 0;
}

int profile_build_options(const struct profile_build_mode *bm,
			  const struct profile_host_class *hc, unsigned major, unsigned minor,
			  const struct profile_kv ***out, size_t *n, struct pg_err *err)
{
	const struct profile_kv **v;
	size_t used;

	if (profile_build_mode_options(bm, major, minor, out, n, err) < 0)
		return -1;
	if (!hc || !hc->n_meson_options)
		return 0;
	v = pg_realloc_array(*out, *n + hc->n_meson_options, sizeof(*v));
	if (!v) {
		free(*out);
		*out = NULL;
		*n = 0;
		return pg_err_set(err, PG_ENOMEM, "host class '%s': out of memory", hc->name);
	}
	used = *n;
	for (size_t j = 0; j < hc->n_meson_options; j++) {
		size_t k;

		for (k = 0; k < used; k++)
			if (strcmp(v[k]->key, hc->meson_options[j].key) == 0)
				break;
		v[k] = &hc->meson_options[j];
		if (k == used)
			used++;
	}
	qsort(v, used, sizeof(*v), cmp_kv_ptr);
	*out = v;
	*n = used;
	return 0;
}

enum arg_piece { PIECE_TEXT, PIECE_PLACEHOLDER };

static const char *const placeholders[] = {
	"lcores", "memory_mb", "mem_args", "file_prefix", "build_dir", "duration_s", NULL
};

typedef int (*piece_fn)(void *ctx, enum arg_piece kind, const char *s, size_t len);

/*
 * Walk one argument: literal runs ("{{" and "}}" count as one brace) and
 * placeholders.  fn gets each piece; a NULL fn only checks.  Returns 0, or
 * -1 with msg filled.
 */
static int arg_walk(const char *arg, piece_fn fn, void *ctx, bool *uses_duration,
		    char *msg, size_t msg_len)
{
	const char *p = arg;

	while (*p) {
		size_t run = strcspn(p, "{}");
		const char *close;
		size_t i;

		if (run && fn && fn(ctx, PIECE_TEXT, p, run) < 0)
			goto nomem;
		p += run;
		if (!*p)
			break;
		if (p[0] == p[1]) {	/* "{{" or "}}" */
			if (fn && fn(ctx, PIECE_TEXT, p, 1) < 0)
				goto nomem;
			p += 2;
			continue;
		}
		if (*p == '}') {
			pg_fmt_cut(msg, msg_len, "'}' without '{' (write '}}' for a brace)");
			return -1;
		}
		close = strchr(p, '}');
		if (!close) {
			pg_fmt_cut(msg, msg_len, "unterminated placeholder '%.40s'", p);
			return -1;
		}
		for (i = 0; placeholders[i]; i++)
			if (strlen(placeholders[i]) == (size_t)(close - p - 1) &&
			    strncmp(placeholders[i], p + 1, (size_t)(close - p - 1)) == 0)
				break;
		if (!placeholders[i]) {
			pg_fmt_cut(msg, msg_len, "unknown placeholder '%.*s'",
				    (int)(close - p + 1 > 60 ? 60 : close - p + 1), p);
			return -1;
		}
		if (strcmp(placeholders[i], "mem_args") == 0 && strcmp(arg, "{mem_args}") != 0) {
			pg_fmt_cut(msg, msg_len, "{mem_args} must be a whole argument (it expands "
				    "to several)");
			return -1;
		}
		if (strcmp(placeholders[i], "duration_s") == 0 && uses_duration)
			*uses_duration = true;
		if (fn && fn(ctx, PIECE_PLACEHOLDER, placeholders[i], strlen(placeholders[i])) < 0)
			goto nomem;
		p = close + 1;
	}
	return 0;
nomem:
	pg_fmt_cut(msg, msg_len, "out of memory or too long");
	return -1;
}

int profile_arg_check(const char *arg, bool *uses_duration, char *msg, size_t msg_len)
{
	return arg_walk(arg, NULL, NULL, uses_duration, msg, msg_len);
}

struct expand_ctx {
	const struct profile_benchmark *b;
	const struct profile_host_class *hc;
	const struct profile_run_vars *vars;
	struct pg_buf out;
	const char *missing;	/* a run variable that vars lacks */
};

static int expand_piece(void *opaque, enum arg_piece kind, const char *s, size_t len)
{
	struct expand_ctx *x = opaque;
	const char *v = NULL;

	if (kind == PIECE_TEXT)
		return pg_buf_add(&x->out, s, len);
	if (strcmp(s, "lcores") == 0)
		return pg_buf_adds(&x->out, x->hc->lcores);
	if (strcmp(s, "memory_mb") == 0)
		return pg_buf_printf(&x->out, "%d", x->hc->memory_mb);
	if (strcmp(s, "duration_s") == 0)
		return pg_buf_printf(&x->out, "%d", x->b->duration_s);
	if (strcmp(s, "file_prefix") == 0)
		v = x->vars ? x->vars->file_prefix : NULL;
	else if (strcmp(s, "build_dir") == 0)
		v = x->vars ? x->vars->build_dir : NULL;
	if (!v) {
		x->missing = s;
		return -1;
	}
	return pg_buf_adds(&x->out, v);
}

static int argv_push(char ***argv, size_t *argc, size_t *cap, char *s)
{
	if (!s)
		return -1;
	if (PG_GROW(*argv, *cap, *argc + 2) < 0) {
		free(s);
		return -1;
	}
	(*argv)[(*argc)++] = s;
	(*argv)[*argc] = NULL;
	return 0;
}

/*
 * {mem_args}: "--no-huge -m N" without hugepages; with hugepages on a
 * class's numa_node, "--socket-mem" with N at that node and 0 before it,
 * so that EAL takes the memory where the lcores are (-m would take it
 * from any node); else "-m N".  0 or -1 (out of memory).
 */
static int mem_args_push(const struct profile_host_class *hc, char ***argv, size_t *argc,
			 size_t *cap)
{
	struct pg_buf sm = PG_BUF_INIT(ARG_MAX_LEN);
	char mem[32];
	int rc = -1;

	if (pg_fmt(mem, sizeof(mem), "%d", hc->memory_mb) < 0)
		goto out;
	if (hc->hugepages && hc->numa_node >= 0) {
		for (int n = 0; n < hc->numa_node; n++)
			if (pg_buf_printf(&sm, "0,") < 0)
				goto out;
		if (pg_buf_printf(&sm, "%s", mem) < 0 ||
		    argv_push(argv, argc, cap, strdup("--socket-mem")) < 0 ||
		    argv_push(argv, argc, cap, pg_buf_detach(&sm, NULL)) < 0)
			goto out;
		rc = 0;
		goto out;
	}
	if ((!hc->hugepages && argv_push(argv, argc, cap, strdup("--no-huge")) < 0) ||
	    argv_push(argv, argc, cap, strdup("-m")) < 0 ||
	    argv_push(argv, argc, cap, strdup(mem)) < 0)
		goto out;
	rc = 0;
out:
	pg_buf_release(&sm);
	return rc;
}

/* Insert argument s at position at of *argv (NULL-terminated). */
static int argv_insert(char ***argv, size_t *argc, size_t *cap, size_t at, char *s)
{
	if (argv_push(argv, argc, cap, s) < 0)
		return -1;
	memmove(&(*argv)[at + 1], &(*argv)[at], (*argc - 1 - at) * sizeof(**argv));
	(*argv)[at] = s;
	return 0;
}

/*
 * A "fwd" benchmark: the class's ports before the args' "--" (added when
 * missing), the forwarding arguments at the end.  A virtual class also
 * gets --no-pci, so that EAL never probes (and takes) a NIC of the host
 * that the class did not name.  -1 when out of memory.
 */
static int fwd_splice(const struct profile_benchmark *b, const struct profile_host_class *hc,
		      const char *frame_size, char ***argv, size_t *argc, size_t *cap)
{
	struct pg_buf fa = PG_BUF_INIT(ARG_MAX_LEN);
	size_t at = 0;
	int rc = -1;

	while (at < *argc && strcmp((*argv)[at], "--") != 0)
		at++;
	if (at == *argc && argv_push(argv, argc, cap, strdup("--")) < 0)
		goto out;
	for (size_t i = 0; i < hc->n_ports; i++) {
		const struct profile_port *pt = &hc->ports[i];

		if (pt->pci) {
			if (argv_insert(argv, argc, cap, at++, strdup("-a")) < 0 ||
			    argv_insert(argv, argc, cap, at++, strdup(pt->pci)) < 0)
				goto out;
		} else if (pg_buf_printf(&fa, "--vdev=%s", pt->vdev) < 0 ||
			   argv_insert(argv, argc, cap, at++, pg_buf_detach(&fa, NULL)) < 0) {
			goto out;
		}
	}
	if (hc->n_ports && !hc->ports[0].pci &&
	    argv_insert(argv, argc, cap, at++, strdup("--no-pci")) < 0)
		goto out;
	pg_buf_reset(&fa);
	if (profile_fwd_args(&b->fwd, hc->n_ports, frame_size, &fa) < 0)
		goto out;
	for (size_t off = 0; off < fa.len; off += strlen(fa.data + off) + 1)
		if (argv_push(argv, argc, cap, strdup(fa.data + off)) < 0)
			goto out;
	rc = 0;
out:
	pg_buf_release(&fa);
	return rc;
}

int profile_benchmark_argv(const struct profile_benchmark *b,
			   const struct profile_host_class *hc,
			   const struct profile_run_vars *vars,
			   char ***argv, size_t *argc, struct pg_err *err)
{
	struct expand_ctx x = { b, hc, vars, PG_BUF_INIT(ARG_MAX_LEN), NULL };
	char msg[256];
	size_t cap = 0;
	int rc = -1;

	*argc = 0;
	*argv = calloc(1, sizeof(**argv));	/* NULL-terminated even when empty */
	if (!*argv)
		goto nomem;
	cap = 1;
	for (size_t i = 0; i < b->n_args; i++) {
		if (strcmp(b->args[i], "{mem_args}") == 0) {
			if (mem_args_push(hc, argv, argc, &cap) < 0)
				goto nomem;
			continue;
		}
		pg_buf_reset(&x.out);
		if (arg_walk(b->args[i], expand_piece, &x, NULL, msg, sizeof(msg)) < 0) {
			if (x.missing) {
				pg_err_set(err, PG_EINVAL, "benchmark '%s': args[%zu] needs {%s}, "
					   "which the run did not provide", b->name, i, x.missing);
				goto out;
			}
			goto nomem;
		}
		if (argv_push(argv, argc, &cap, pg_buf_detach(&x.out, NULL)) < 0)
			goto nomem;
	}
	if (b->has_fwd) {
		if (!vars || !vars->frame_size) {
			pg_err_set(err, PG_EINVAL, "benchmark '%s': fwd needs a frame size, which "
				   "the run did not provide", b->name);
			goto out;
		}
		if (fwd_splice(b, hc, vars->frame_size, argv, argc, &cap) < 0)
			goto nomem;
	}
	rc = 0;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "benchmark '%s': out of memory expanding its arguments",
		   b->name);
out:
	pg_buf_release(&x.out);
	if (rc) {
		profile_argv_free(*argv, *argc);
		*argv = NULL;
		*argc = 0;
	}
	return rc;
}

void profile_argv_free(char **argv, size_t argc)
{
	for (size_t i = 0; argv && i < argc; i++)
		free(argv[i]);
	free(argv);
}

const char *profile_parser_name(enum profile_parser p)
{
	return p == PROFILE_PARSER_TESTPMD ? "testpmd" : "mempool_perf";
}

const char *profile_stdin_name(enum profile_stdin s)
{
	return s == PROFILE_STDIN_HOLD ? "hold" : "null";
}

const char *profile_mode_name(enum profile_mode m)
{
	return m == PROFILE_MODE_FULL ? "full" : "subset";
}

const char *profile_post_to_name(enum profile_post_to p)
{
	return p == PROFILE_POST_ALL_PATCHES ? "all_patches" : "last_patch";
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void free_kv(struct profile_kv *kv, size_t n)
{
	for (size_t i = 0; kv && i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void profile_set_free(struct profile_set *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->n_trees; i++) {
		struct profile_tree *t = &ps->trees[i];

		free(t->name);
		free(t->description);
		free(t->url);
		free(t->default_branch);
		free_strv(t->branches, t->n_branches);
	}
	free(ps->trees);
	for (size_t i = 0; i < ps->n_tree_rules; i++) {
		struct profile_tree_rule *r = &ps->tree_rules[i];

		free(r->description);
		free_strv(r->paths, r->n_paths);
		free_strv(r->subject_tags, r->n_subject_tags);
		free(r->tree);
		free(r->branch);
	}
	free(ps->tree_rules);
	for (size_t i = 0; i < ps->n_host_classes; i++) {
		struct profile_host_class *hc = &ps->host_classes[i];

		free(hc->name);
		free(hc->description);
		free_kv(hc->labels, hc->n_labels);
		free(hc->lcores);
		free(hc->lcore_ids);
		free(hc->require.governor);
		free(hc->require.turbo);
		free(hc->require.smt);
		profile_free_ports(hc);
		free_kv(hc->meson_options, hc->n_meson_options);
	}
	free(ps->host_classes);
	for (size_t i = 0; i < ps->n_build_modes; i++) {
		struct profile_build_mode *bm = &ps->build_modes[i];

		free(bm->name);
		free(bm->description);
		free(bm->buildtype);
		free_kv(bm->meson_options, bm->n_meson_options);
		free(bm->c_args);
		for (size_t j = 0; bm->by_version && j < bm->n_by_version; j++) {
			free(bm->by_version[j].since);
			free_kv(bm->by_version[j].options, bm->by_version[j].n_options);
		}
		free(bm->by_version);
	}
	free(ps->build_modes);
	for (size_t i = 0; i < ps->n_benchmarks; i++) {
		struct profile_benchmark *b = &ps->benchmarks[i];

		free(b->name);
		free(b->description);
		free(b->program);
		free_strv(b->args, b->n_args);
		free_kv(b->env, b->n_env);
		free_strv(b->gate, b->n_gate);
		free(b->subset.cores);
		free(b->subset.cache);
		free(b->subset.bulk);
		free(b->subset.keep);
		free(b->subset.constant_n);
		free(b->fwd.frame_sizes);
	}
	free(ps->benchmarks);
	for (size_t i = 0; i < ps->n_contexts; i++) {
		struct profile_context *c = &ps->contexts[i];

		free(c->name);
		free(c->description);
		free(c->host_class);
		free_strv(c->build_modes, c->n_build_modes);
		free_strv(c->benchmarks, c->n_benchmarks);
		free_strv(c->baseline_benchmarks, c->n_baseline_benchmarks);
		free_strv(c->trees, c->n_trees);
		free(c->default_tree);
	}
	free(ps->contexts);
	for (size_t i = 0; i < ps->n_files; i++) {
		free(ps->files[i].path);
		free(ps->files[i].default_tree);
	}
	free(ps->files);
	memset(ps, 0, sizeof(*ps));
}
