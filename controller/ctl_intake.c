/* SPDX-License-Identifier: MIT */
/* Intake passes, the `ingest` command and the `series` views. */
#include "ctl_intake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_view.h"
#include "buf.h"
#include "conffile.h"
#include "ctl_out.h"
#include "fmt.h"
#include "fsutil.h"
#include "intake_src.h"
#include "json.h"
#include "log.h"
#include "text.h"
#include "timeutil.h"

#define CTL_MAX_CLI_SOURCES 64

/*
 * Match argv[*i] against the option `name` taking a value, as "--name
 * VALUE" or "--name=VALUE".  Returns 1 and sets *val (NULL when the value
 * is missing), or 0 when argv[*i] is another word.  Subcommands parse by
 * hand: getopt's state belongs to main().
 */
static int ctl_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*val = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != '\0')
		return 0;
	*val = *i + 1 < argc ? argv[++*i] : NULL;
	return 1;
}

int ctl_intake_init(struct intake *in, const struct ctl_config *cfg,
		    const struct profile_set *ps, struct store *st, struct pg_err *err)
{
	const char **ctx = NULL;

	memset(in, 0, sizeof(*in));
	in->st = st;
	in->project = cfg->project;
	in->max_message = (size_t)cfg->intake.max_message_bytes;
	if (ps->n_contexts) {
		ctx = calloc(ps->n_contexts, sizeof(*ctx));
		if (!ctx)
			return pg_err_set(err, PG_ENOMEM, "out of memory");
		for (size_t i = 0; i < ps->n_contexts; i++)
			ctx[i] = ps->contexts[i].name;
	}
	in->contexts = ctx;
	in->n_contexts = ps->n_contexts;
	return 0;
}

void ctl_intake_release(struct intake *in)
{
	free((void *)in->contexts);
	in->contexts = NULL;
	in->n_contexts = 0;
}

/* data_dir/mirrors/NAME, with anything but [A-Za-z0-9_.-] made '_'. */
static char *ctl_mirror_dir(const struct ctl_config *cfg, const char *name)
{
	struct pg_buf b = PG_BUF_INIT(4096);

	if (pg_buf_printf(&b, "%s/mirrors/", cfg->data_dir) < 0)
		goto fail;
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			c = '_';
		if (pg_buf_addch(&b, c) < 0)
			goto fail;
	}
	return pg_buf_detach(&b, NULL);
fail:
	pg_buf_release(&b);
	return NULL;
}

/* Run one source; 0 when it went through, 1 when it failed on its own
 * (logged), -1 when the store failed. */
static int ctl_intake_one(const struct ctl_config *cfg, struct intake *in, int type,
			  const char *name, const char *location, const char *pw_project,
			  int timeout_s, const volatile sig_atomic_t *stop, struct pg_err *err)
{
	struct intake_src src;
	struct pg_err e = PG_ERR_INIT;
	char *mirror = ctl_mirror_dir(cfg, name);
	int rc;

	if (!mirror)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	memset(&src, 0, sizeof(src));
	src.name = name;
	src.location = location;
	src.mirror_dir = mirror;
	src.batch = cfg->intake.batch;
	src.pw_project = pw_project;
	src.since_ms = cfg->intake.since_ms;
	src.timeout_s = timeout_s;
	pg_log_info("intake", "reading %s (%s)", name, location);
	if (type == 0)
		rc = intake_inbox(in, &src, stop, &e);
	else if (type == 1)
		rc = intake_mbox(in, &src, stop, &e);
	else
		rc = intake_patchwork(in, &src, stop, &e);
	free(mirror);
	if (rc == 0)
		return 0;
	if (e.code == PG_EDB) {
		*err = e;
		return -1;
	}
	pg_log_error("intake", "%s", e.msg);
	return 1;
}

int ctl_intake_pass(const struct ctl_config *cfg, struct intake *in,
		    const struct ctl_intake_plan *plan, const volatile sig_atomic_t *stop,
		    int *failed, struct pg_err *err)
{
	char name[4200];
	int rc;

	*failed = 0;
	for (size_t i = 0; i < plan->n_inboxes; i++) {
		char *loc = strstr(plan->inboxes[i], "://") ? strdup(plan->inboxes[i])
							    : pg_config_absolute(plan->inboxes[i]);

		if (!loc)
			return pg_err_set(err, PG_ENOMEM, "out of memory");
		if (pg_fmt(name, sizeof(name), "inbox:%s", loc) < 0) {
			pg_err_set(err, PG_EINVAL, "inbox %.200s...: too long", loc);
			free(loc);
			return -1;
		}
		rc = ctl_intake_one(cfg, in, 0, name, loc, NULL, 0, stop, err);
		free(loc);
		if (rc < 0)
			return -1;
		*failed += rc;
	}
	for (size_t i = 0; i < plan->n_mboxes; i++) {
		char *loc = pg_config_absolute(plan->mboxes[i]);

		if (!loc)
			return pg_err_set(err, PG_ENOMEM, "out of memory");
		if (pg_fmt(name, sizeof(name), "mbox:%s", loc) < 0) {
			pg_err_set(err, PG_EINVAL, "mbox %.200s...: too long", loc);
			free(loc);
			return -1;
		}
		rc = ctl_intake_one(cfg, in, 1, name, loc, NULL, 0, stop, err);
		free(loc);
		if (rc < 0)
			return -1;
		*failed += rc;
	}
	if (plan->n_inboxes == 0 && plan->n_mboxes == 0) {
		for (size_t i = 0; i < cfg->n_sources && !(stop && *stop); i++) {
			const struct ctl_source *s = &cfg->sources[i];

			if (plan->only_source && strcmp(plan->only_source, s->name) != 0)
				continue;
			rc = ctl_intake_one(cfg, in, s->type == CTL_SOURCE_PATCHWORK ? 2 : 0,
					    s->name, s->url, s->pw_project, s->timeout_s, stop, err);
			if (rc < 0)
				return -1;
			*failed += rc;
		}
	}
	if (store_begin(in->st, err) < 0)
		return -1;
	if (intake_mark_stale(in, pg_time_wall_ms() / 1000, cfg->intake.stale_after_s, err) < 0 ||
	    store_commit(in->st, err) < 0) {
		store_rollback(in->st);
		return -1;
	}
	return 0;
}

static int ctl_open(const struct ctl_config *cfg, struct profile_set *ps, struct store **st,
		    struct pg_err *err)
{
	if (pg_config_load_profiles(cfg->profiles_dir, (const char *const *)cfg->profiles,
				    cfg->n_profiles, ps, err) < 0)
		return -1;
	if (pg_mkdir_p(cfg->data_dir, 0750, err) < 0 || pg_mkdir_parent(cfg->db, 0750, err) < 0 ||
	    store_open(st, cfg->db, err) < 0) {
		profile_set_free(ps);
		return -1;
	}
	return 0;
}

int ctl_cmd_ingest(const struct ctl_config *cfg, int argc, char **argv)
{
	const char *inboxes[CTL_MAX_CLI_SOURCES], *mboxes[CTL_MAX_CLI_SOURCES];
	struct ctl_intake_plan plan;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf out = PG_BUF_INIT(64 * 1024);
	struct profile_set ps;
	struct store *st = NULL;
	struct intake in;
	int failed = 0, rc = 1;

	memset(&plan, 0, sizeof(plan));
	plan.inboxes = inboxes;
	plan.mboxes = mboxes;
	for (int i = 1; i < argc; i++) {
		const char *val = NULL;

		if (ctl_opt(argc, argv, &i, "--inbox", &val) > 0) {
			if (!val || plan.n_inboxes == CTL_MAX_CLI_SOURCES)
				goto usage;
			inboxes[plan.n_inboxes++] = val;
		} else if (ctl_opt(argc, argv, &i, "--mbox", &val) > 0) {
			if (!val || plan.n_mboxes == CTL_MAX_CLI_SOURCES)
				goto usage;
			mboxes[plan.n_mboxes++] = val;
		} else if (ctl_opt(argc, argv, &i, "--source", &val) > 0) {
			if (!val)
				goto usage;
			plan.only_source = val;
		} else {
			goto usage;
		}
	}
	if (plan.only_source && !ctl_config_source(cfg, plan.only_source)) {
		fprintf(stderr, "perfgate-controller: no source named '%s' in the configuration\n",
			plan.only_source);
		return 1;
	}
	if (!plan.n_inboxes && !plan.n_mboxes && cfg->n_sources == 0) {
		fprintf(stderr, "perfgate-controller: no sources configured: name one with "
			"--inbox PATH|URL or --mbox FILE\n");
		return 1;
	}
	if (ctl_open(cfg, &ps, &st, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		return 1;
	}
	if (ctl_intake_init(&in, cfg, &ps, st, &err) < 0)
		goto out;
	if (ctl_intake_pass(cfg, &in, &plan, NULL, &failed, &err) < 0)
		goto out;
	if (intake_stats_print(&in.stats, &out) < 0) {
		pg_err_set(&err, PG_ENOMEM, "summary too long");
		goto out;
	}
	if (ctl_out_buf(&out) < 0) {
		pg_err_errno(&err, "print the summary");
		goto out;
	}
	if (failed)
		fprintf(stderr, "perfgate-controller: %d source(s) failed (see the log above)\n",
			failed);
	rc = failed ? 1 : 0;
out:
	if (rc && err.code != PG_OK)
		fprintf(stderr, "perfgate-controller: ingest: %s\n", err.msg);
	ctl_intake_release(&in);
	pg_buf_release(&out);
	store_close(st);
	profile_set_free(&ps);
	return rc;
usage:
	fprintf(stderr, "usage: perfgate-controller ingest [--inbox PATH|URL]... [--mbox FILE]..."
		" [--source NAME]\n");
	return 2;
}

/* ------------------------------------------------------------------ */
/* series list / show                                                  */

/* The JSON comes from api_view.c, which the API's read endpoints share.
 * Text is built whole, then printed through ctl_out. */
static int series_list(struct store *st, const char *state, int as_json)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf out = PG_BUF_INIT(PG_BUF_NOLIMIT);
	const cJSON *o;
	cJSON *arr = NULL;
	int rc = 1;

	struct api_series_filter f = { .state = state };

	if (api_view_series_list(st, &f, -1, 0, &arr, &err) < 0)
		goto out;
	if (as_json) {
		if (ctl_out_json(arr) < 0)
			goto fail;
		rc = 0;
		goto out;
	}
	if (ctl_out_oneline(arr) < 0 ||
	    pg_buf_printf(&out, "%6s  %-11s %3s %7s  %-28s %s\n", "ID", "STATE", "V", "PATCHES",
			  "SUBMITTER", "TITLE") < 0)
		goto fail;
	cJSON_ArrayForEach(o, arr) {
		const char *st_name = cJSON_GetStringValue(cJSON_GetObjectItem(o, "state"));

#define N(k) ((long long)cJSON_GetNumberValue(cJSON_GetObjectItem(o, k)))
#define S(k) cJSON_GetStringValue(cJSON_GetObjectItem(o, k))
		/* %.28s may cut a character: ctl_out shows the piece as U+FFFD. */
		if (pg_buf_printf(&out, "%6lld  %-11s v%-2d %3d/%-3d  %-28.28s %s%s\n", N("id"),
				  cJSON_IsTrue(cJSON_GetObjectItem(o, "stale")) &&
				  strcmp(st_name, "incomplete") == 0 ? "stale" : st_name,
				  (int)N("version"), (int)N("received"), (int)N("total"),
				  S("submitter"),
				  cJSON_IsTrue(cJSON_GetObjectItem(o, "rfc")) ? "[RFC] " : "",
				  S("title")) < 0)
			goto fail;
#undef N
#undef S
	}
	if (ctl_out_buf(&out) < 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	pg_err_errno(&err, "print");
out:
	if (rc)
		fprintf(stderr, "perfgate-controller: series list: %s\n", err.msg);
	pg_buf_release(&out);
	cJSON_Delete(arr);
	return rc;
}

/* Returns 0, or -1 when out of memory. */
static int series_print_text(const cJSON *s, struct pg_buf *out)
{
	const cJSON *item;
	bool bad = false;

#define S(k) (cJSON_GetStringValue(cJSON_GetObjectItem(s, k)) ? \
	      cJSON_GetStringValue(cJSON_GetObjectItem(s, k)) : "-")
#define N(k) (cJSON_IsNumber(cJSON_GetObjectItem(s, k)) ? \
	      (long long)cJSON_GetObjectItem(s, k)->valuedouble : -1LL)
#define P(...) (bad = bad || pg_buf_printf(out, __VA_ARGS__) < 0)
	P("series %lld: %s%s\n", N("id"), cJSON_IsTrue(cJSON_GetObjectItem(s, "rfc")) ?
	  "[RFC] " : "", S("title"));
	P("  state:       %s%s\n", S("state"),
	  cJSON_IsTrue(cJSON_GetObjectItem(s, "stale")) ? " (stale: never completed)" : "");
	P("  version:     v%lld, %lld of %lld patches\n", N("version"), N("received"), N("total"));
	P("  submitter:   %s <%s>\n", S("submitter_name"), S("submitter"));
	P("  date:        %s\n", S("date"));
	P("  tags:        %s\n", *S("tags") ? S("tags") : "-");
	P("  thread:      <%s>\n", S("root_msgid"));
	P("  cover:       %s%s%s\n", cJSON_IsString(cJSON_GetObjectItem(s, "cover_msgid")) ?
	  "<" : "", S("cover_msgid"),
	  cJSON_IsString(cJSON_GetObjectItem(s, "cover_msgid")) ? ">" : "");
	P("  base-commit: %s\n", S("base_commit"));
	if (N("supersedes") >= 0)
		P("  supersedes:  series %lld\n", N("supersedes"));
	if (N("superseded_by") >= 0)
		P("  superseded:  by series %lld\n", N("superseded_by"));
	if (N("patchwork_series") >= 0)
		P("  patchwork:   series %lld\n", N("patchwork_series"));
	cJSON_ArrayForEach(item, cJSON_GetObjectItem(s, "patches")) {
		const cJSON *pw = cJSON_GetObjectItem(item, "patchwork_patch");

		P("  %2d/%lld %s\n", (int)cJSON_GetObjectItem(item, "number")->valuedouble,
		  N("total"), cJSON_GetStringValue(cJSON_GetObjectItem(item, "subject")));
		P("        <%s>%s", cJSON_GetStringValue(cJSON_GetObjectItem(item, "msgid")),
		  cJSON_IsNumber(pw) ? "" : "\n");
		if (cJSON_IsNumber(pw))
			P(" patchwork %lld\n", (long long)pw->valuedouble);
	}
	cJSON_ArrayForEach(item, cJSON_GetObjectItem(s, "depends_on")) {
		const cJSON *dep = cJSON_GetObjectItem(item, "series");

		P("  depends on:  %s %s%s", cJSON_GetStringValue(cJSON_GetObjectItem(item, "kind")),
		  cJSON_GetStringValue(cJSON_GetObjectItem(item, "ref")),
		  cJSON_IsNumber(dep) ? "" : " (not seen yet)\n");
		if (cJSON_IsNumber(dep))
			P(" = series %lld\n", (long long)dep->valuedouble);
	}
	cJSON_ArrayForEach(item, cJSON_GetObjectItem(s, "rechecks"))
		P("  recheck:     %s (%s, by %s, %s)\n",
		  cJSON_GetStringValue(cJSON_GetObjectItem(item, "contexts")),
		  cJSON_GetStringValue(cJSON_GetObjectItem(item, "origin")),
		  cJSON_GetStringValue(cJSON_GetObjectItem(item, "requester")),
		  cJSON_GetStringValue(cJSON_GetObjectItem(item, "state")));
#undef P
#undef S
#undef N
	return bad ? -1 : 0;
}

static int series_show(struct store *st, const char *id_text, int as_json)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf out = PG_BUF_INIT(PG_BUF_NOLIMIT);
	cJSON *o = NULL;
	int64_t id;
	int rc = 1;

	if (pg_parse_id(id_text, &id) < 0) {
		fprintf(stderr, "perfgate-controller: series show: '%s' is not a series id\n",
			id_text);
		return 2;
	}
	if (api_view_series(st, id, NULL, &o, &err) < 0)
		goto out;
	if (as_json ? ctl_out_json(o) < 0
		    : ctl_out_oneline(o) < 0 || series_print_text(o, &out) < 0 ||
		      ctl_out_buf(&out) < 0) {
		pg_err_errno(&err, "print");
		goto out;
	}
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "perfgate-controller: series show: %s\n", err.msg);
	pg_buf_release(&out);
	cJSON_Delete(o);
	return rc;
}

int ctl_cmd_series(const struct ctl_config *cfg, int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;
	const char *state = NULL, *id = NULL;
	int as_json = 0, rc;

	if (argc < 2)
		goto usage;
	for (int i = 2; i < argc; i++) {
		const char *val = NULL;

		if (strcmp(argv[i], "--json") == 0) {
			as_json = 1;
		} else if (ctl_opt(argc, argv, &i, "--state", &val) > 0) {
			if (!val)
				goto usage;
			state = val;
		} else if (argv[i][0] == '-' || id) {
			goto usage;
		} else {
			id = argv[i];
		}
	}
	if (state && strcmp(state, "incomplete") && strcmp(state, "complete") &&
	    strcmp(state, "superseded") && strcmp(state, "stale")) {
		fprintf(stderr, "perfgate-controller: --state: '%s' is not incomplete, complete, "
			"superseded or stale\n", state);
		return 2;
	}
	if (strcmp(argv[1], "list") == 0 ? id != NULL :
	    strcmp(argv[1], "show") == 0 ? id == NULL || state != NULL : 1)
		goto usage;
	if (access(cfg->db, F_OK) != 0) {
		fprintf(stderr, "perfgate-controller: store %s does not exist (run ingest first)\n",
			cfg->db);
		return 1;
	}
	if (store_open(&st, cfg->db, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		return 1;
	}
	if (strcmp(argv[1], "list") == 0)
		rc = series_list(st, state, as_json);
	else
		rc = series_show(st, id, as_json);
	store_close(st);
	return rc;
usage:
	fprintf(stderr, "usage: perfgate-controller series list [--json] [--state STATE]\n"
		"       perfgate-controller series show ID [--json]\n");
	return 2;
}
