/* SPDX-License-Identifier: MIT */
#include "agent_config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conffile.h"
#include "json.h"
#include "log.h"


static const char *const agent_config_fields[] = {
	"name", "controller_url", "token_file", "labels", "work_dir", "spool_dir",
	"profiles_dir", "profiles", "log_level", "lease_wait_s", "request_timeout_s",
	"max_backoff_s", "sandbox", "runner", "apply",
	"max_build_slots", NULL
};

void agent_config_free(struct agent_config *c)
{
	free(c->path);
	free(c->name);
	free(c->controller_url);
	free(c->token_file);
	pg_config_strings_free(c->label_keys, c->n_labels);
	pg_config_strings_free(c->label_values, c->n_labels);
	free(c->work_dir);
	free(c->spool_dir);
	free(c->profiles_dir);
	pg_config_strings_free(c->profiles, c->n_profiles);
	free(c->log_level);
	free(c->runner);
	sandbox_cfg_free(&c->sandbox);
	memset(c, 0, sizeof(*c));
}

static int agent_config_defaults(struct agent_config *c, struct pg_err *err)
{
	char host[HOST_NAME_MAX + 1];

	if (gethostname(host, sizeof(host)) < 0)
		return pg_err_errno(err, "gethostname");
	host[sizeof(host) - 1] = '\0';
	c->name = strdup(host);
	c->controller_url = strdup("http://127.0.0.1:8080");
	c->work_dir = strdup(PG_LOCALSTATEDIR "/perfgate-agent/work");
	c->spool_dir = strdup(PG_LOCALSTATEDIR "/perfgate-agent/spool");
	c->profiles_dir = strdup(PG_DATADIR "/perfgate/profiles");
	c->log_level = strdup("info");
	c->runner = strdup(AGENT_RUNNER_DEFAULT);
	c->lease_wait_s = AGENT_LEASE_WAIT_S_DEFAULT;
	c->request_timeout_s = AGENT_REQUEST_TIMEOUT_S_DEFAULT;
	c->max_backoff_s = AGENT_MAX_BACKOFF_S_DEFAULT;
	c->max_build_slots = SLOTS_MAX_DEFAULT;
	if (!c->name || !c->controller_url || !c->work_dir || !c->spool_dir ||
	    !c->profiles_dir || !c->log_level || !c->runner)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	ws_child_cfg_init(&c->apply);
	return sandbox_cfg_init(&c->sandbox, err);
}

static int agent_config_labels(struct agent_config *c, const cJSON *root, struct pg_err *err)
{
	return pg_config_labels(root, "labels", &c->label_keys, &c->label_values, &c->n_labels,
				err);
}

/* An optional integer field in [min, max]; *out keeps its default when
 * the field is absent. */
static int agent_config_int(const cJSON *root, const char *key, int min, int max, int *out,
			    struct pg_err *err)
{
	int64_t v;
	int rc = pg_json_get_int(root, key, false, min, max, &v, err);

	if (rc > 0)
		*out = (int)v;
	return rc < 0 ? -1 : 0;
}

static int agent_config_parse(void *cfg, const cJSON *root, const char *dir,
			      struct pg_err *err)
{
	struct agent_config *c = cfg;
	const cJSON *sandbox = cJSON_GetObjectItemCaseSensitive(root, "sandbox");
	const cJSON *apply = cJSON_GetObjectItemCaseSensitive(root, "apply");

	if (pg_json_check_keys(root, agent_config_fields, err) < 0 ||
	    (sandbox && sandbox_cfg_parse(&c->sandbox, sandbox, err) < 0) ||
	    (apply && ws_child_cfg_parse(&c->apply, apply, err) < 0) ||
	    pg_config_string(root, "name", 0, dir, &c->name, err) < 0 ||
	    pg_config_string(root, "controller_url", 0, dir, &c->controller_url, err) < 0 ||
	    pg_config_string(root, "token_file", 1, dir, &c->token_file, err) < 0 ||
	    agent_config_labels(c, root, err) < 0 ||
	    pg_config_string(root, "work_dir", 1, dir, &c->work_dir, err) < 0 ||
	    pg_config_string(root, "spool_dir", 1, dir, &c->spool_dir, err) < 0 ||
	    pg_config_string(root, "profiles_dir", 1, dir, &c->profiles_dir, err) < 0 ||
	    pg_config_strings(root, "profiles", &c->profiles, &c->n_profiles, err) < 0 ||
	    pg_config_string(root, "log_level", 0, dir, &c->log_level, err) < 0 ||
	    pg_config_string(root, "runner", 0, dir, &c->runner, err) < 0 ||
	    agent_config_int(root, "lease_wait_s", 1, AGENT_LEASE_WAIT_S_MAX,
			     &c->lease_wait_s, err) < 0 ||
	    agent_config_int(root, "request_timeout_s", 1, AGENT_REQUEST_TIMEOUT_S_MAX,
			     &c->request_timeout_s, err) < 0 ||
	    agent_config_int(root, "max_backoff_s", 1, AGENT_MAX_BACKOFF_S_MAX,
			     &c->max_backoff_s, err) < 0 ||
	    agent_config_int(root, "max_build_slots", 1, SLOTS_MAX_LIMIT,
			     &c->max_build_slots, err) < 0)
		return -1;
	if (strncmp(c->controller_url, "http://", 7) != 0 &&
	    strncmp(c->controller_url, "https://", 8) != 0)
		return pg_err_set(err, PG_EINVAL,
				  "field 'controller_url': '%s' is not an http:// or https:// URL",
				  c->controller_url);
	if (strcmp(c->runner, "dpdk") != 0 && strcmp(c->runner, "builtin") != 0)
		return pg_err_set(err, PG_EINVAL,
				  "field 'runner': '%.64s' is not \"dpdk\" or \"builtin\"", c->runner);
	if (!pg_config_label_ok(c->name))
		return pg_err_set(err, PG_EINVAL,
				  "field 'name': '%s' must be letters, digits, '_', '.', '-'", c->name);
	return pg_config_check_common(c->profiles, c->n_profiles, c->log_level, err);
}

int agent_config_load(struct agent_config *c, const char *path, struct pg_err *err)
{
	memset(c, 0, sizeof(*c));
	if (agent_config_defaults(c, err) < 0 ||
	    pg_config_load(path, AGENT_CONFIG_DEFAULT, agent_config_parse, c, &c->path,
			   err) < 0) {
		agent_config_free(c);
		return -1;
	}
	return 0;
}

int agent_config_load_text(struct agent_config *c, const char *text, size_t len,
			   const char *dir, struct pg_err *err)
{
	memset(c, 0, sizeof(*c));
	if (agent_config_defaults(c, err) < 0 ||
	    pg_config_load_text(text, len, dir, agent_config_parse, c, err) < 0) {
		agent_config_free(c);
		return -1;
	}
	return 0;
}

/* Replace *field by a copy of value (when not NULL); -1 out of memory. */
static int agent_config_set(char **field, const char *value)
{
	char *copy;

	if (!value)
		return 0;
	copy = strdup(value);
	if (!copy)
		return -1;
	free(*field);
	*field = copy;
	return 0;
}

int agent_config_override(struct agent_config *c, const char *work_dir,
			  const char *spool_dir, const char *runner, struct pg_err *err)
{
	if (runner && strcmp(runner, "dpdk") != 0 && strcmp(runner, "builtin") != 0)
		return pg_err_set(err, PG_EINVAL, "--runner: '%.64s' is not dpdk or builtin",
				  runner);
	if (agent_config_set(&c->work_dir, work_dir) < 0 ||
	    agent_config_set(&c->spool_dir, spool_dir) < 0 ||
	    agent_config_set(&c->runner, runner) < 0)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	return 0;
}

cJSON *agent_config_to_json(const struct agent_config *c)
{
	cJSON *o = cJSON_CreateObject(), *labels, *arr;

	if (!o)
		return NULL;
	if (!cJSON_AddStringToObject(o, "config_file", c->path ? c->path : "(built-in defaults)") ||
	    !cJSON_AddStringToObject(o, "name", c->name) ||
	    !cJSON_AddStringToObject(o, "controller_url", c->controller_url))
		goto fail;
	if (c->token_file ? !cJSON_AddStringToObject(o, "token_file", c->token_file)
			  : !cJSON_AddNullToObject(o, "token_file"))
		goto fail;
	labels = cJSON_AddObjectToObject(o, "labels");
	if (!labels)
		goto fail;
	for (size_t i = 0; i < c->n_labels; i++)
		if (!cJSON_AddStringToObject(labels, c->label_keys[i], c->label_values[i]))
			goto fail;
	if (!cJSON_AddStringToObject(o, "work_dir", c->work_dir) ||
	    !cJSON_AddStringToObject(o, "spool_dir", c->spool_dir) ||
	    !cJSON_AddStringToObject(o, "profiles_dir", c->profiles_dir))
		goto fail;
	arr = cJSON_AddArrayToObject(o, "profiles");
	if (!arr)
		goto fail;
	for (size_t i = 0; i < c->n_profiles; i++)
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(c->profiles[i])))
			goto fail;
	if (!cJSON_AddStringToObject(o, "log_level", c->log_level) ||
	    !cJSON_AddStringToObject(o, "runner", c->runner) ||
	    !cJSON_AddNumberToObject(o, "lease_wait_s", c->lease_wait_s) ||
	    !cJSON_AddNumberToObject(o, "request_timeout_s", c->request_timeout_s) ||
	    !cJSON_AddNumberToObject(o, "max_backoff_s", c->max_backoff_s) ||
	    !cJSON_AddNumberToObject(o, "max_build_slots", c->max_build_slots) ||
	    !cJSON_AddItemToObject(o, "sandbox", sandbox_cfg_to_json(&c->sandbox)) ||
	    !cJSON_AddItemToObject(o, "apply", ws_child_cfg_to_json(&c->apply)))
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}
