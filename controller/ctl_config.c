/* SPDX-License-Identifier: MIT */
#include "ctl_config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conffile.h"
#include "json.h"
#include "log.h"

static const char *const ctl_config_fields[] = {
	"db", "data_dir", "profiles_dir", "profiles", "log_level", NULL
};

void ctl_config_free(struct ctl_config *c)
{
	free(c->path);
	free(c->db);
	free(c->data_dir);
	free(c->profiles_dir);
	pg_config_strings_free(c->profiles, c->n_profiles);
	free(c->log_level);
	memset(c, 0, sizeof(*c));
}

static int ctl_config_defaults(struct ctl_config *c, struct pg_err *err)
{
	c->db = strdup(PG_LOCALSTATEDIR "/perfgate/perfgate.db");
	c->data_dir = strdup(PG_LOCALSTATEDIR "/perfgate");
	c->profiles_dir = strdup(PG_DATADIR "/perfgate/profiles");
	c->log_level = strdup("info");
	if (!c->db || !c->data_dir || !c->profiles_dir || !c->log_level)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	return 0;
}

static int ctl_config_parse(struct ctl_config *c, const cJSON *root, const char *dir,
			    struct pg_err *err)
{
	if (pg_json_check_keys(root, ctl_config_fields, err) < 0 ||
	    pg_config_string(root, "db", 1, dir, &c->db, err) < 0 ||
	    pg_config_string(root, "data_dir", 1, dir, &c->data_dir, err) < 0 ||
	    pg_config_string(root, "profiles_dir", 1, dir, &c->profiles_dir, err) < 0 ||
	    pg_config_strings(root, "profiles", &c->profiles, &c->n_profiles, err) < 0 ||
	    pg_config_string(root, "log_level", 0, dir, &c->log_level, err) < 0)
		return -1;
	for (size_t i = 0; i < c->n_profiles; i++)
		if (strchr(c->profiles[i], '/'))
			return pg_err_set(err, PG_EINVAL,
					  "field 'profiles[%zu]': '%s' must be a file name in profiles_dir",
					  i, c->profiles[i]);
	if (pg_log_set_levels(c->log_level) < 0)
		return pg_err_set(err, PG_EINVAL,
				  "field 'log_level': '%s' is not LEVEL[,component=LEVEL...] "
				  "with levels error, warn, info, debug", c->log_level);
	return 0;
}

int ctl_config_load(struct ctl_config *c, const char *path, struct pg_err *err)
{
	cJSON *root = NULL;
	char *dir = NULL;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (ctl_config_defaults(c, err) < 0)
		goto out;
	if (!path) {
		if (access(CTL_CONFIG_DEFAULT, F_OK) != 0) {
			rc = 0;
			goto out;
		}
		path = CTL_CONFIG_DEFAULT;
	}
	if (pg_config_read(path, &root, &dir, err) < 0)
		goto out;
	c->path = pg_config_absolute(path);
	if (!c->path) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (ctl_config_parse(c, root, dir, err) < 0) {
		pg_err_prefix(err, "%s", path);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		ctl_config_free(c);
	cJSON_Delete(root);
	free(dir);
	return rc;
}

int ctl_config_set_db(struct ctl_config *c, const char *db, struct pg_err *err)
{
	char *abs = pg_config_absolute(db);

	if (!abs)
		return pg_err_set(err, PG_ENOMEM, "--db: out of memory");
	free(c->db);
	c->db = abs;
	return 0;
}

cJSON *ctl_config_to_json(const struct ctl_config *c)
{
	cJSON *o = cJSON_CreateObject(), *arr;

	if (!o)
		return NULL;
	if (!cJSON_AddStringToObject(o, "config_file", c->path ? c->path : "(built-in defaults)") ||
	    !cJSON_AddStringToObject(o, "db", c->db) ||
	    !cJSON_AddStringToObject(o, "data_dir", c->data_dir) ||
	    !cJSON_AddStringToObject(o, "profiles_dir", c->profiles_dir))
		goto fail;
	arr = cJSON_AddArrayToObject(o, "profiles");
	if (!arr)
		goto fail;
	for (size_t i = 0; i < c->n_profiles; i++)
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(c->profiles[i])))
			goto fail;
	if (!cJSON_AddStringToObject(o, "log_level", c->log_level))
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}
