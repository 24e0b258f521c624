/* SPDX-License-Identifier: MIT */
#ifndef CTL_CONFIG_H
#define CTL_CONFIG_H

/*
 * The controller's configuration file (JSON).  Relative paths in it are
 * relative to the file's own directory.  Fields:
 *
 *   db            the SQLite store            (default LOCALSTATEDIR/perfgate/perfgate.db)
 *   data_dir      logs and other files        (default LOCALSTATEDIR/perfgate)
 *   profiles_dir  where profile files live    (default DATADIR/perfgate/profiles)
 *   profiles      which files of profiles_dir to load (default: every *.json)
 *   log_level     "info", or "warn,store=debug" per component (default info)
 */

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"

struct ctl_config {
	char *path;		/* the file read; NULL when built-in defaults */
	char *db;
	char *data_dir;
	char *profiles_dir;
	char **profiles;	/* file names relative to profiles_dir */
	size_t n_profiles;
	char *log_level;
};

/* The default configuration file, SYSCONFDIR/perfgate/controller.json. */
#define CTL_CONFIG_DEFAULT PG_SYSCONFDIR "/perfgate/controller.json"

/* Load `path`.  When `path` is NULL the default file is read if it exists,
 * else the built-in defaults apply.  Unknown fields are errors.  On error
 * *c is left empty and err names the file and the field. */
int ctl_config_load(struct ctl_config *c, const char *path, struct pg_err *err);

/* Replace the store path (the --db option).  Returns 0 or -1. */
int ctl_config_set_db(struct ctl_config *c, const char *db, struct pg_err *err);

void ctl_config_free(struct ctl_config *c);

/* The normalised configuration: every field, defaults filled in, absolute
 * paths.  Caller frees with cJSON_Delete; NULL when out of memory. */
cJSON *ctl_config_to_json(const struct ctl_config *c);

#endif
