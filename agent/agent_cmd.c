/* SPDX-License-Identifier: MIT */
/* The agent's modes: --check-config, and the daemon. */
#include "agent_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conffile.h"
#include "json.h"
#include "log.h"
#include "profile.h"

/* {"host_classes": [...], "contexts": [...]} this agent can serve. */
static cJSON *agent_matches_to_json(const struct agent_config *cfg,
				    const struct profile_set *ps)
{
	cJSON *o = cJSON_CreateObject(), *classes, *contexts;

	if (!o)
		return NULL;
	classes = cJSON_AddArrayToObject(o, "host_classes");
	contexts = cJSON_AddArrayToObject(o, "contexts");
	if (!classes || !contexts)
		goto fail;
	for (size_t i = 0; i < ps->n_host_classes; i++) {
		const struct profile_host_class *hc = &ps->host_classes[i];

		if (!profile_host_class_matches(hc, (const char *const *)cfg->label_keys,
						(const char *const *)cfg->label_values,
						cfg->n_labels))
			continue;
		if (!cJSON_AddItemToArray(classes, cJSON_CreateString(hc->name)))
			goto fail;
		for (size_t j = 0; j < ps->n_contexts; j++)
			if (strcmp(ps->contexts[j].host_class, hc->name) == 0 &&
			    !cJSON_AddItemToArray(contexts,
						  cJSON_CreateString(ps->contexts[j].name)))
				goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

int agent_cmd_check_config(const struct agent_config *cfg)
{
	struct pg_err err = PG_ERR_INIT;
	struct profile_set ps;
	cJSON *matches;
	int rc = 0, n_classes;

	if (pg_config_load_profiles(cfg->profiles_dir, (const char *const *)cfg->profiles,
				    cfg->n_profiles, &ps, &err) < 0) {
		fprintf(stderr, "perfgate-agent: %s\n", err.msg);
		return 1;
	}
	matches = agent_matches_to_json(cfg, &ps);
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

int agent_cmd_run(const struct agent_config *cfg)
{
	/* The lease loop comes with the agent protocol; until then say so
	 * plainly rather than idle as if work could arrive. */
	fprintf(stderr, "perfgate-agent: the job loop (leasing from %s) is not built yet; "
		"this version only validates its configuration (--check-config)\n",
		cfg->controller_url);
	return 1;
}
