/* SPDX-License-Identifier: MIT */
/*
 * The verdict's texts for people: a job's before/after table under a line
 * that names it, and the shell commands that reproduce it by hand.
 */
#include "verdict_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "jobspec.h"
#include "json.h"
#include "log.h"
#include "sanitize.h"

void vp_say(struct pg_buf *lines, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	pg_vfmt_cut(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Lines are a courtesy: a full buffer loses lines, not decisions. */
	(void)pg_buf_printf(lines, "%s\n", line);
}

void vp_tell(struct pg_buf *lines, struct pg_buf *report)
{
	const char *s = pg_buf_str(lines);

	while (*s) {
		const char *e = strchr(s, '\n');
		int len = e ? (int)(e - s) : (int)strlen(s);

		pg_log_info(VP_LOG, "%.*s", len, s);
		s += len + (e != NULL);
	}
	if (report)
		(void)pg_buf_adds(report, pg_buf_str(lines));
	pg_buf_reset(lines);
}

const char *vp_main_branch(const struct profile_set *ps, const char *tree)
{
	const struct profile_tree *t = ps ? profile_find_tree(ps, tree) : NULL;

	return t ? t->default_branch : "main";
}

static int nomem(struct pg_err *err)
{
	return pg_err_set(err, PG_ENOMEM, "verdict text: out of memory or over its limit");
}

int vp_job_table(const struct vp_job *j, struct pg_buf *out, struct pg_err *err)
{
	const char *state = j->out.state == VERDICT_PENDING ? "pending" :
			    verdict_state_name(j->out.state);

	if (pg_buf_printf(out, "%s on %s, %d run%s per side%s: %s: %s\n", j->build_mode,
			  j->in.host, j->repetitions_done, j->repetitions_done == 1 ? "" : "s",
			  j->n_rounds > 1 ? " (with follow-ups)" : "", state, j->out.summary) < 0)
		return nomem(err);
	if (!j->n_keys)
		return pg_buf_adds(out, "(no samples)\n") < 0 ? nomem(err) : 0;
	if (verdict_table_text(out, j->vkeys, j->n_keys, err) < 0)
		return -1;
	/* What this host resolves by itself, from its baselines (A/A): the
	 * yardstick for the table's own MDE. */
	for (size_t i = 0; !j->baseline && i < j->n_keys; i++) {
		const struct hostnoise_key *h = vp_host_noise(j, &j->keys[i]);

		if (!h || !j->vkeys[i].gated || !isfinite(h->mde_pct))
			continue;
		if (pg_buf_printf(out, "host %s, A/A over its last %zu baseline%s (%zu pairs): %s "
				  "spread %.2f%%, MDE %.1f%% at %d runs per side\n", j->in.host,
				  h->n_jobs, h->n_jobs == 1 ? "" : "s", h->n_pairs, j->keys[i].metric,
				  h->sigma_pct, h->mde_pct, h->max_repetitions) < 0)
			return nomem(err);
	}
	return 0;
}

/* ---- reproduce ---------------------------------------------------------- */

/* Characters a shell word may hold unquoted. */
static bool shell_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_./:=,+@%^-", *s)))
			return false;
	return true;
}

/* s as one shell word. */
static int shell_word(struct pg_buf *out, const char *s)
{
	if (shell_safe(s))
		return pg_buf_adds(out, s);
	if (pg_buf_addch(out, '\'') < 0)
		return -1;
	for (; *s; s++)
		if ((*s == '\'' ? pg_buf_adds(out, "'\\''") : pg_buf_addch(out, *s)) < 0)
			return -1;
	return pg_buf_addch(out, '\'');
}

/*
 * A benchmark argument with the agent's two placeholders filled in as a
 * person running it from the directory holding base/ and patched/ would:
 * {file_prefix} a fixed prefix, {build_dir} "$PWD/$side/build" (so the word
 * is double-quoted), and doubled braces undoubled.
 */
static int shell_arg(struct pg_buf *out, const char *arg)
{
	struct pg_buf plain = PG_BUF_INIT(64 * 1024);
	bool dq = strstr(arg, JS_ARG_BUILD_DIR) != NULL;
	int rc = -1;

	if (dq && pg_buf_addch(out, '"') < 0)
		goto out;
	for (const char *p = arg; *p;) {
		struct pg_buf *b = dq ? out : &plain;
		int r;

		if (!strncmp(p, JS_ARG_BUILD_DIR, strlen(JS_ARG_BUILD_DIR))) {
			r = pg_buf_adds(b, "$PWD/$side/build");
			p += strlen(JS_ARG_BUILD_DIR);
		} else if (!strncmp(p, JS_ARG_FILE_PREFIX, strlen(JS_ARG_FILE_PREFIX))) {
			r = pg_buf_adds(b, "perfgate");
			p += strlen(JS_ARG_FILE_PREFIX);
		} else if (!strncmp(p, "{{", 2) || !strncmp(p, "}}", 2)) {
			r = pg_buf_addch(b, *p);
			p += 2;
		} else if (dq && strchr("\\\"$`", *p)) {
			r = pg_buf_addch(b, '\\') < 0 ? -1 : pg_buf_addch(b, *p);
			p++;
		} else {
			r = pg_buf_addch(b, *p);
			p++;
		}
		if (r < 0)
			goto out;
	}
	rc = dq ? pg_buf_addch(out, '"') : shell_word(out, pg_buf_str(&plain));
out:
	pg_buf_release(&plain);
	return rc;
}

static const char *jstr(const cJSON *o, const char *name, const char *fallback)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : fallback;
}

/* meson setup for both sides. */
static int reproduce_build(const cJSON *spec, struct pg_buf *out)
{
	const cJSON *build = cJSON_GetObjectItemCaseSensitive(spec, JS_BUILD), *o;
	const char *c_args = jstr(build, JS_BUILD_C_ARGS, NULL);
	struct pg_buf d = PG_BUF_INIT(64 * 1024);
	int rc = -1;

	if (pg_buf_printf(out, "for side in base patched; do\n\tmeson setup --buildtype=%s",
			  jstr(build, JS_BUILD_BUILDTYPE, "release")) < 0)
		goto out;
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(build, JS_BUILD_MESON_OPTIONS)) {
		pg_buf_reset(&d);
		if (!o->string || pg_buf_printf(&d, "-D%s=%s", o->string,
						cJSON_IsString(o) ? o->valuestring : "") < 0 ||
		    pg_buf_addch(out, ' ') < 0 || shell_word(out, pg_buf_str(&d)) < 0)
			goto out;
	}
	if (c_args) {
		pg_buf_reset(&d);
		if (pg_buf_printf(&d, "-Dc_args=%s", c_args) < 0 || pg_buf_addch(out, ' ') < 0 ||
		    shell_word(out, pg_buf_str(&d)) < 0)
			goto out;
	}
	rc = pg_buf_adds(out, " \"$side/build\" \"$side\" && ninja -C \"$side/build\" || break\n"
			 "done\n");
out:
	pg_buf_release(&d);
	return rc;
}

/* One benchmark: its command line on each side, as many times as the job
 * ran it. */
static int reproduce_bench(const cJSON *b, int runs, struct pg_buf *out)
{
	const cJSON *o, *subset = cJSON_GetObjectItemCaseSensitive(b, JS_BENCH_SUBSET);
	const cJSON *dur = cJSON_GetObjectItemCaseSensitive(b, JS_BENCH_DURATION_S);
	bool hold = !strcmp(jstr(b, JS_BENCH_STDIN, "null"), "hold");
	const char *name = jstr(b, JS_BENCH_NAME, "benchmark");

	if (pg_buf_printf(out, "# %s", name) < 0)
		return -1;
	if (subset) {
		char *s = pg_json_print(subset, false);
		int r = pg_buf_printf(out, ": a subset of mempool_perf_autotest (%s); perfgate "
				      "rewrites app/test/test_mempool_perf.c's tables the same way on "
				      "both sides before building", s ? s : "?");

		free(s);
		if (r < 0)
			return -1;
	}
	if (pg_buf_printf(out, "\nfor run in $(seq %d); do for side in base patched; do\n\t",
			  runs > 0 ? runs : 1) < 0)
		return -1;
	if (hold && pg_buf_printf(out, "sleep %d | ",
				  cJSON_IsNumber(dur) ? dur->valueint : 10) < 0)
		return -1;
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(b, JS_BENCH_ENV)) {
		struct pg_buf kv = PG_BUF_INIT(64 * 1024);
		int r = !o->string || pg_buf_printf(&kv, "%s=%s", o->string,
						    cJSON_IsString(o) ? o->valuestring : "") < 0 ||
			shell_word(out, pg_buf_str(&kv)) < 0 || pg_buf_addch(out, ' ') < 0 ? -1 : 0;

		pg_buf_release(&kv);
		if (r < 0)
			return -1;
	}
	if (pg_buf_adds(out, "\"$side/build/") < 0 ||
	    pg_buf_adds(out, jstr(b, JS_BENCH_PROGRAM, "?")) < 0 || pg_buf_addch(out, '"') < 0)
		return -1;
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(b, JS_BENCH_ARGS))
		if (cJSON_IsString(o) &&
		    (pg_buf_addch(out, ' ') < 0 || shell_arg(out, o->valuestring) < 0))
			return -1;
	return pg_buf_printf(out, "%s\ndone; done\n", hold ? "" : " </dev/null");
}

int vp_job_reproduce(const struct vp_job *j, struct pg_buf *out, struct pg_err *err)
{
	const cJSON *tree = cJSON_GetObjectItemCaseSensitive(j->spec, JS_TREE);
	const cJSON *series = cJSON_GetObjectItemCaseSensitive(j->spec, JS_SERIES);
	const cJSON *b;
	const char *url = jstr(tree, JS_TREE_URL, j->tree);
	const char *mbox = jstr(series, JS_SERIES_MBOX_URL, NULL);

	if (pg_buf_printf(out, "# run %lld, job %lld: %s on %s; %s %s at %s\n",
			  (long long)j->run_id, (long long)j->id, j->build_mode,
			  *j->host ? j->host : "(not run yet)", j->tree, j->branch,
			  j->base_commit) < 0 ||
	    pg_buf_adds(out, "git clone ") < 0 || shell_word(out, url) < 0 ||
	    pg_buf_printf(out, " base\ngit -C base checkout --detach %s\n"
			  "git -C base worktree add --detach ../patched %s\n",
			  j->base_commit, j->base_commit) < 0)
		return nomem(err);
	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(j->spec, JS_DEPENDS_ON)) {
		const char *u = jstr(b, JS_SERIES_MBOX_URL, NULL);

		if (u && (pg_buf_adds(out, "curl -sS ") < 0 || shell_word(out, u) < 0 ||
			  pg_buf_adds(out, " | git -C patched am --patch-format=mboxrd"
				      "   # a prerequisite\n") < 0))
			return nomem(err);
	}
	if (j->baseline && pg_buf_adds(out, "# a baseline: nothing to apply, both sides are the "
					   "same commit (A/A)\n") < 0)
		return nomem(err);
	if (mbox && (pg_buf_adds(out, "curl -sS ") < 0 || shell_word(out, mbox) < 0 ||
		     pg_buf_adds(out, " | git -C patched am --patch-format=mboxrd\n") < 0))
		return nomem(err);
	if (*j->root_msgid) {
		/* A mail's Message-ID: one line, shown escaped if it must be. */
		char *id = pg_sanitize_dup(j->root_msgid, PG_SAN_LINE);
		int r = !id || pg_buf_adds(out, "#   or: (cd patched && b4 shazam ") < 0 ||
			shell_word(out, id) < 0 || pg_buf_adds(out, ")\n") < 0 ? -1 : 0;

		free(id);
		if (r < 0)
			return nomem(err);
	}
	if (reproduce_build(j->spec, out) < 0)
		return nomem(err);
	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(j->spec, JS_BENCHMARKS))
		if (reproduce_bench(b, j->repetitions_done ? j->repetitions_done :
				    j->spec_repetitions, out) < 0)
			return nomem(err);
	return 0;
}
