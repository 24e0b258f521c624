/* SPDX-License-Identifier: MIT */
/* Command dispatch and the small one-shot commands (check-config, db,
 * agent). */
#include "ctl_cmd.h"
#include "ctl_intake.h"
#include "ctl_outbox.h"
#include "ctl_plan.h"
#include "ctl_verdict.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "api.h"
#include "api_auth.h"
#include "api_view.h"
#include "buf.h"
#include "conffile.h"
#include "ctl_out.h"
#include "drift.h"
#include "ssh_disp.h"
#include "fmt.h"
#include "fsutil.h"
#include "json.h"
#include "log.h"
#include "profile.h"
#include "sched.h"
#include "store.h"
#include "timeutil.h"
#include "verdict.h"

int ctl_cmd_check_config(const struct ctl_config *cfg)
{
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	int rc = 0;

	if (pg_config_load_profiles(cfg->profiles_dir, (const char *const *)cfg->profiles,
				    cfg->n_profiles, &ps, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		return 1;
	}
	/* Valid, but worth saying: a context that can never pass. */
	for (size_t i = 0; i < ps.n_contexts; i++) {
		char why[512];

		if (verdict_context_can_pass(&ps.contexts[i], why, sizeof(why)))
			fprintf(stderr, "perfgate-controller: warning: %s\n", why);
	}
	if (pg_config_print(ctl_config_to_json(cfg), &ps, NULL, NULL) < 0) {
		fprintf(stderr, "perfgate-controller: --check-config: out of memory\n");
		rc = 1;
	}
	profile_set_free(&ps);
	return rc;
}

static int ctl_cmd_db(const struct ctl_config *cfg, int argc, char **argv)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf report = PG_BUF_INIT(1024 * 1024);
	struct store *st = NULL;
	int rc = 1;

	if (argc != 2 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "migrate") != 0)) {
		fprintf(stderr, "usage: perfgate-controller [--db FILE] db check|migrate\n");
		return 2;
	}
	/* check inspects what exists; only migrate may create a store. */
	if (strcmp(argv[1], "check") == 0 && access(cfg->db, F_OK) != 0) {
		fprintf(stderr, "perfgate-controller: store %s: %s\n", cfg->db, strerror(errno));
		goto out;
	}
	if (strcmp(argv[1], "migrate") == 0 && pg_mkdir_parent(cfg->db, 0750, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		goto out;
	}
	if (store_open(&st, cfg->db, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		goto out;
	}
	if (strcmp(argv[1], "migrate") == 0) {
		printf("store %s: schema version %d\n", cfg->db, STORE_SCHEMA_VERSION);
		rc = 0;
		goto out;
	}
	rc = store_check(st, &report, &err) < 0 ? 1 : 0;
	if (ctl_out_buf(&report) < 0) {
		fprintf(stderr, "perfgate-controller: store %s: print: %s\n", cfg->db,
			strerror(errno));
		rc = 1;
	}
	if (rc)
		fprintf(stderr, "perfgate-controller: store %s: %s\n", cfg->db, err.msg);
out:
	store_close(st);
	pg_buf_release(&report);
	return rc;
}

/* ------------------------------------------------------------------ */
/* agent add / list / disable / enable                                  */

static void ctl_agent_usage(void)
{
	fprintf(stderr, "usage: perfgate-controller agent add NAME [--labels KEY=VALUE,...]\n"
		"       perfgate-controller agent list [--json]\n"
		"       perfgate-controller agent disable|enable NAME\n"
		"       perfgate-controller agent clear-drift NAME\n");
}

/* Split "k=v,k=v" in place into keys and values (at most max of them).
 * Returns the count, or -1 when an item has no '=' or an empty side. */
static int ctl_agent_labels(char *spec, const char **keys, const char **values, size_t max)
{
	size_t n = 0;
	char *p = spec;

	if (!*spec)
		return 0;
	for (;;) {
		char *comma = strchr(p, ',');
		char *eq;

		if (comma)
			*comma = '\0';
		eq = strchr(p, '=');
		if (!eq || eq == p || !eq[1] || n == max)
			return -1;
		*eq = '\0';
		keys[n] = p;
		values[n] = eq + 1;
		n++;
		if (!comma)
			return (int)n;
		p = comma + 1;
	}
}

/* Open the store (creating it, as `db migrate` would) for a command. */
static int ctl_agent_store(const struct ctl_config *cfg, struct store **st, int create)
{
	struct pg_err err = PG_ERR_INIT;

	if (!create && access(cfg->db, F_OK) != 0) {
		fprintf(stderr, "perfgate-controller: store %s: %s\n", cfg->db, strerror(errno));
		return -1;
	}
	if ((create && pg_mkdir_parent(cfg->db, 0750, &err) < 0) ||
	    store_open(st, cfg->db, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* The token goes to stdout alone, so that a script can capture it. */
static int ctl_agent_add(const struct ctl_config *cfg, const char *name, char *labels_spec)
{
	const char *keys[SCHED_MAX_LABELS], *values[SCHED_MAX_LABELS];
	struct pg_err err = PG_ERR_INIT;
	struct sched_labels labels = { keys, values, 0 };
	char token[API_TOKEN_HEX + 1], hash[API_SHA256_HEX + 1];
	struct store *st = NULL;
	int64_t id = 0;
	int n = 0, rc = 1;

	if (labels_spec) {
		n = ctl_agent_labels(labels_spec, keys, values, SCHED_MAX_LABELS);
		if (n < 0) {
			fprintf(stderr, "perfgate-controller: agent add: --labels wants KEY=VALUE,... "
				"(at most %d)\n", SCHED_MAX_LABELS);
			return 2;
		}
		labels.n = (size_t)n;
	}
	if (ctl_agent_store(cfg, &st, 1) < 0)
		return 1;
	if (api_token_new(token, &err) < 0 ||
	    api_sha256_hex(token, strlen(token), hash, &err) < 0 ||
	    sched_agent_add(st, name, &labels, hash, pg_time_wall_ms() / 1000, &id, &err) < 0) {
		fprintf(stderr, "perfgate-controller: agent add %s: %s\n", name, err.msg);
		goto out;
	}
	printf("%s\n", token);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "perfgate-controller: agent add %s: writing the token: %s\n", name,
			strerror(errno));
		goto out;
	}
	fprintf(stderr, "perfgate-controller: agent %s added (id %lld) with %d label%s; its "
		"token, printed above, is shown only this once: put it in the agent's "
		"token_file\n", name, (long long)id, n, n == 1 ? "" : "s");
	rc = 0;
out:
	OPENSSL_cleanse(token, sizeof(token));
	store_close(st);
	return rc;
}

/* "k=v,k=v" of a labels object.  Returns 0 or -1 (out of memory). */
static int ctl_agent_print_labels(const cJSON *labels, struct pg_buf *b)
{
	const cJSON *l;

	cJSON_ArrayForEach(l, labels)
		if (pg_buf_printf(b, "%s%s=%s", b->len ? "," : "", l->string,
				  cJSON_IsString(l) ? l->valuestring : "?") < 0)
			return -1;
	return 0;
}

/* "  ssh running job 12 attempt 1, host key ..., agent ..., last error ..."
 * under an SSH host's row. */
static int ctl_agent_print_ssh(const cJSON *ssh, struct pg_buf *rows)
{
	const char *err = cJSON_GetStringValue(cJSON_GetObjectItem(ssh, "last_error"));
	const char *key = cJSON_GetStringValue(cJSON_GetObjectItem(ssh, "host_key"));
	const char *ver = cJSON_GetStringValue(cJSON_GetObjectItem(ssh, "agent_version"));
	const cJSON *job = cJSON_GetObjectItem(ssh, "job");

	if (!cJSON_IsObject(ssh))
		return 0;
	if (pg_buf_printf(rows, "  ssh %s %s", cJSON_GetStringValue(cJSON_GetObjectItem(ssh, "target")),
			  cJSON_GetStringValue(cJSON_GetObjectItem(ssh, "state"))) < 0 ||
	    (cJSON_IsNumber(job) &&
	     pg_buf_printf(rows, " job %.0f attempt %.0f", job->valuedouble,
			   cJSON_GetNumberValue(cJSON_GetObjectItem(ssh, "attempt"))) < 0) ||
	    pg_buf_printf(rows, ", host key %s, %s, %.0f connection(s)\n", key ? key : "not seen yet",
			  ver ? ver : "agent not checked yet",
			  cJSON_GetNumberValue(cJSON_GetObjectItem(ssh, "connects"))) < 0 ||
	    (err && pg_buf_printf(rows, "  last error: %s\n", err) < 0))
		return -1;
	return 0;
}

static int ctl_agent_list(const struct ctl_config *cfg, int as_json)
{
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf labels = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct pg_buf rows = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct store *st = NULL;
	struct drift_flag *drift = NULL;
	size_t n_drift = 0;
	bool drained;
	cJSON *arr = NULL;
	const cJSON *a;
	int rc = 1;

	if (ctl_agent_store(cfg, &st, 0) < 0)
		return 1;
	if (api_view_agents(st, pg_time_wall_ms() / 1000, API_ONLINE_WINDOW_S, &arr, &err) < 0) {
		fprintf(stderr, "perfgate-controller: agent list: %s\n", err.msg);
		goto out;
	}
	if (as_json) {
		if (ctl_out_json(arr) < 0)
			goto fail;
		rc = 0;
		goto out;
	}
	if (ctl_out_oneline(arr) < 0 ||
	    pg_buf_printf(&rows, "%-20s %-8s %-21s %-24s %s\n", "NAME", "STATE", "LAST SEEN",
			  "JOB", "LABELS") < 0)
		goto fail;
	cJSON_ArrayForEach(a, arr) {
		const cJSON *seen = cJSON_GetObjectItem(a, "last_seen");
		const cJSON *job = cJSON_GetObjectItem(a, "job");
		char when[PG_TIME_UTC_MAX] = "never", jobtext[64] = "-";

		/* Cells of a table for people: a long one is cut, visibly. */
		if (cJSON_IsNumber(seen) &&
		    pg_time_format_utc((int64_t)seen->valuedouble * 1000, 0, when, sizeof(when)) < 0)
			pg_fmt_cut(when, sizeof(when), "%.0f", seen->valuedouble);
		if (cJSON_IsObject(job))
			pg_fmt_cut(jobtext, sizeof(jobtext), "%.0f %s",
				   cJSON_GetNumberValue(cJSON_GetObjectItem(job, "id")),
				   cJSON_GetStringValue(cJSON_GetObjectItem(job, "state")));
		pg_buf_reset(&labels);
		free(drift);
		drift = NULL;
		if (drift_list(st, cJSON_GetStringValue(cJSON_GetObjectItem(a, "name")), true,
			       &drift, &n_drift, &err) < 0) {
			fprintf(stderr, "perfgate-controller: agent list: %s\n", err.msg);
			goto out;
		}
		drained = false;
		for (size_t i = 0; i < n_drift; i++)
			drained = drained || !strcmp(drift[i].state, "drained");
		if (ctl_agent_print_labels(cJSON_GetObjectItem(a, "labels"), &labels) < 0 ||
		    pg_buf_printf(&rows, "%-20s %-8s %-21s %-24s %s\n",
				  cJSON_GetStringValue(cJSON_GetObjectItem(a, "name")),
				  !cJSON_IsTrue(cJSON_GetObjectItem(a, "enabled")) ? "disabled" :
				  drained ? "drained" :
				  cJSON_IsTrue(cJSON_GetObjectItem(a, "online")) ? "online" : "offline",
				  when, jobtext, labels.len ? pg_buf_str(&labels) : "-") < 0)
			goto fail;
		/* A host driven over SSH: its connection, under it. */
		if (ctl_agent_print_ssh(cJSON_GetObjectItem(a, "ssh"), &rows) < 0)
			goto fail;
		/* Its drift, under it: why, and how to clear it. */
		for (size_t i = 0; i < n_drift; i++)
			if (pg_buf_printf(&rows, "  %s (%s, %s): %s\n", drift[i].state,
					  drift[i].kind, drift[i].build_mode, drift[i].why) < 0)
				goto fail;
	}
	if (ctl_out_buf(&rows) < 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "perfgate-controller: agent list: %s\n", strerror(errno));
out:
	free(drift);
	cJSON_Delete(arr);
	pg_buf_release(&labels);
	pg_buf_release(&rows);
	store_close(st);
	return rc;
}

/* An operator clears a host's drift flags (drift.h): a drained host
 * leases again. */
static int ctl_agent_clear_drift(const struct ctl_config *cfg, const char *name)
{
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;
	int64_t id, n = 0;
	int rc = 1;

	if (ctl_agent_store(cfg, &st, 0) < 0)
		return 1;
	if (sched_agent_id(st, name, &id, &err) < 0 ||
	    drift_clear(st, name, "perfgate-controller agent clear-drift",
			pg_time_wall_ms() / 1000, &n, &err) < 0) {
		if (err.code == PG_ENOTFOUND)
			fprintf(stderr, "perfgate-controller: no agent named '%s'\n", name);
		else
			fprintf(stderr, "perfgate-controller: agent %s: %s\n", name, err.msg);
		goto out;
	}
	fprintf(stderr, "perfgate-controller: agent %s: %lld drift flag%s cleared\n", name,
		(long long)n, n == 1 ? "" : "s");
	rc = 0;
out:
	store_close(st);
	return rc;
}

/* A disabled agent's requests are refused (403); its lease, if it holds
 * one, expires and the job goes to another agent. */
static int ctl_agent_enable(const struct ctl_config *cfg, const char *name, int enable)
{
	struct pg_err err = PG_ERR_INIT;
	struct store *st = NULL;
	int rc = 1;

	if (ctl_agent_store(cfg, &st, 0) < 0)
		return 1;
	if (sched_agent_enable(st, name, enable != 0, &err) < 0) {
		if (err.code == PG_ENOTFOUND)
			fprintf(stderr, "perfgate-controller: no agent named '%s'\n", name);
		else
			fprintf(stderr, "perfgate-controller: agent %s: %s\n", name, err.msg);
		goto out;
	}
	fprintf(stderr, "perfgate-controller: agent %s %s\n", name,
		enable ? "enabled" : "disabled");
	rc = 0;
out:
	store_close(st);
	return rc;
}

static int ctl_cmd_agent(const struct ctl_config *cfg, int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "add") == 0) {
		char *labels = NULL;

		for (int i = 3; i < argc; i++) {
			if (strcmp(argv[i], "--labels") == 0 && i + 1 < argc)
				labels = argv[++i];
			else if (strncmp(argv[i], "--labels=", 9) == 0)
				labels = argv[i] + 9;
			else
				goto usage;
		}
		if (argv[2][0] == '-')
			goto usage;
		return ctl_agent_add(cfg, argv[2], labels);
	}
	if (argc >= 2 && strcmp(argv[1], "list") == 0) {
		if (argc == 2)
			return ctl_agent_list(cfg, 0);
		if (argc == 3 && strcmp(argv[2], "--json") == 0)
			return ctl_agent_list(cfg, 1);
		goto usage;
	}
	if (argc == 3 && argv[2][0] != '-' &&
	    (strcmp(argv[1], "disable") == 0 || strcmp(argv[1], "enable") == 0))
		return ctl_agent_enable(cfg, argv[2], strcmp(argv[1], "enable") == 0);
	if (argc == 3 && argv[2][0] != '-' && strcmp(argv[1], "clear-drift") == 0)
		return ctl_agent_clear_drift(cfg, argv[2]);
usage:
	ctl_agent_usage();
	return 2;
}

int ctl_cmd_dispatch(const struct ctl_config *cfg, int argc, char **argv)
{
	if (argc == 0 || strcmp(argv[0], "serve") == 0) {
		if (argc > 1) {
			fprintf(stderr, "usage: perfgate-controller [options] serve\n");
			return 2;
		}
		return ctl_serve(cfg);
	}
	if (strcmp(argv[0], "db") == 0)
		return ctl_cmd_db(cfg, argc, argv);
	if (strcmp(argv[0], "ingest") == 0)
		return ctl_cmd_ingest(cfg, argc, argv);
	if (strcmp(argv[0], "series") == 0)
		return ctl_cmd_series(cfg, argc, argv);
	if (strcmp(argv[0], "plan") == 0)
		return ctl_cmd_plan(cfg, argc, argv);
	if (strcmp(argv[0], "baseline") == 0)
		return ctl_cmd_baseline(cfg, argc, argv);
	if (strcmp(argv[0], "changes") == 0)
		return ctl_cmd_changes(cfg, argc, argv);
	if (strcmp(argv[0], "agent") == 0)
		return ctl_cmd_agent(cfg, argc, argv);
	if (strcmp(argv[0], "host") == 0) {
		if (argc != 3 || strcmp(argv[1], "check") != 0 || argv[2][0] == '-') {
			fprintf(stderr, "usage: perfgate-controller host check NAME\n");
			return 2;
		}
		return ssh_disp_check(cfg, argv[2]);
	}
	if (strcmp(argv[0], "outbox") == 0)
		return ctl_cmd_outbox(cfg, argc, argv);
	if (strcmp(argv[0], "verdicts") == 0)
		return ctl_cmd_verdicts(cfg, argc, argv);
	if (strcmp(argv[0], "run") == 0)
		return ctl_cmd_run(cfg, argc, argv);
	fprintf(stderr, "perfgate-controller: unknown command '%s' (see --help)\n", argv[0]);
	return 2;
}
