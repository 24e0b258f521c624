/* SPDX-License-Identifier: MIT */
/* The agent's modes: --check-config, the daemon, and run-one. */
#include "agent_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_daemon.h"
#include "agent_facts.h"
#include "agent_runone.h"
#include "conffile.h"
#include "json.h"
#include "log.h"
#include "profile.h"
#include "runone.h"
#include "sandbox.h"

/* The labels as parallel arrays, as profile_host_class_matches() wants
 * them; the strings stay owned by `labels`. */
struct agent_label_vec {
	const char **keys;
	const char **values;
	size_t n;
};

static int agent_label_vec(const cJSON *labels, struct agent_label_vec *v)
{
	size_t n = (size_t)cJSON_GetArraySize(labels), i = 0;
	const cJSON *item;

	v->n = 0;
	v->keys = calloc(n ? n : 1, sizeof(*v->keys));
	v->values = calloc(n ? n : 1, sizeof(*v->values));
	if (!v->keys || !v->values)
		return -1;
	cJSON_ArrayForEach(item, labels) {
		v->keys[i] = item->string;
		v->values[i] = item->valuestring;
		i++;
	}
	v->n = i;
	return 0;
}

/* {"labels": {...}, "host_classes": [...], "contexts": [...]} this agent
 * can serve with labels.  Takes labels. */
static cJSON *agent_matches_to_json(cJSON *labels, const struct profile_set *ps)
{
	struct agent_label_vec v = { NULL, NULL, 0 };
	cJSON *o = cJSON_CreateObject(), *classes, *contexts;

	if (!o || !labels || agent_label_vec(labels, &v) < 0 ||
	    !cJSON_AddItemToObject(o, "labels", labels)) {
		cJSON_Delete(labels);
		goto fail;
	}
	classes = cJSON_AddArrayToObject(o, "host_classes");
	contexts = cJSON_AddArrayToObject(o, "contexts");
	if (!classes || !contexts)
		goto fail;
	for (size_t i = 0; i < ps->n_host_classes; i++) {
		const struct profile_host_class *hc = &ps->host_classes[i];

		if (!profile_host_class_matches(hc, v.keys, v.values, v.n))
			continue;
		if (!cJSON_AddItemToArray(classes, cJSON_CreateString(hc->name)))
			goto fail;
		for (size_t j = 0; j < ps->n_contexts; j++)
			if (strcmp(ps->contexts[j].host_class, hc->name) == 0 &&
			    !cJSON_AddItemToArray(contexts,
						  cJSON_CreateString(ps->contexts[j].name)))
				goto fail;
	}
	free(v.keys);
	free(v.values);
	return o;
fail:
	free(v.keys);
	free(v.values);
	cJSON_Delete(o);
	return NULL;
}

/* Check the sandbox and say what it is; 0 or -1 (logged). */
static int agent_sandbox_check(struct agent_config *cfg)
{
	struct pg_err err = PG_ERR_INIT;
	char desc[256];

	if (sandbox_check(&cfg->sandbox, &err) < 0) {
		fprintf(stderr, "perfgate-agent: %s\n", err.msg);
		return -1;
	}
	if (!cfg->sandbox.enabled)
		pg_log_warn("sandbox", "disabled: patches from the list run unsandboxed on this host");
	else
		pg_log_info("sandbox", "%s", sandbox_describe(&cfg->sandbox, desc, sizeof(desc)));
	return 0;
}

int agent_cmd_check_config(struct agent_config *cfg)
{
	struct pg_err err = PG_ERR_INIT;
	struct agent_facts facts;
	struct profile_set ps;
	cJSON *matches;
	int rc = 0, n_classes, have_facts = 1;

	if (pg_config_load_profiles(cfg->profiles_dir, (const char *const *)cfg->profiles,
				    cfg->n_profiles, &ps, &err) < 0) {
		fprintf(stderr, "perfgate-agent: %s\n", err.msg);
		return 1;
	}
	if (agent_sandbox_check(cfg) < 0) {
		profile_set_free(&ps);
		return 1;
	}
	/* The facts decide the labels the configuration leaves out; a host
	 * whose /proc cannot be read is checked on its configured labels. */
	if (agent_facts_gather(&facts, NULL, &err) < 0) {
		pg_log_warn("config", "host facts: %s: matching on the configured labels only",
			    err.msg);
		have_facts = 0;
	}
	matches = agent_matches_to_json(agent_labels_json((const char *const *)cfg->label_keys,
							  (const char *const *)cfg->label_values,
							  cfg->n_labels, have_facts ? &facts : NULL),
					&ps);
	n_classes = matches ? cJSON_GetArraySize(cJSON_GetObjectItem(matches, "host_classes")) : 0;
	if (pg_config_print(agent_config_to_json(cfg), &ps, "matches", matches) < 0) {
		fprintf(stderr, "perfgate-agent: --check-config: out of memory\n");
		rc = 1;
	} else if (n_classes == 0) {
		pg_log_warn("config", "labels of agent '%s' match no host class of the profiles: "
			    "it would never get a job", cfg->name);
	}
	profile_set_free(&ps);
	return rc;
}

int agent_cmd_run(struct agent_config *cfg, bool once)
{
	if (agent_sandbox_check(cfg) < 0)
		return 1;
	return agent_daemon_run(cfg, once);
}

int agent_cmd_runone(struct agent_config *cfg, enum agent_runone_mode mode)
{
	switch (mode) {
	case AGENT_RUNONE_FACTS:
		return agent_runone_facts(cfg);
	case AGENT_RUNONE_COLLECT:
		return agent_runone_collect(cfg);
	case AGENT_RUNONE_JOB:
		break;
	}
	if (agent_sandbox_check(cfg) < 0)
		return RUNONE_EXIT_ERROR;
	return agent_runone_job(cfg);
}
