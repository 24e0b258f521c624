/* SPDX-License-Identifier: MIT */
#ifndef PG_CONFFILE_H
#define PG_CONFFILE_H

/*
 * What both daemons' configuration files share: JSON files of at most
 * PG_CONFIG_MAX bytes, whose relative paths are taken relative to the
 * directory of the file that names them (so a configuration works from any
 * working directory), and command-line option parsing helpers.
 */

#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"

/* The profile catalogue (profile.h): the two calls below take one; the
 * rest of a configuration file has nothing to do with profiles. */
struct profile_set;

#define PG_CONFIG_MAX (1024 * 1024)

/* Read and parse a configuration file.  On success *root is the parsed
 * object (caller frees with cJSON_Delete) and *dir the absolute directory
 * of the file (caller frees).  Errors name the file. */
int pg_config_read(const char *path, cJSON **root, char **dir, struct pg_err *err);

/* Resolve `path` against `base_dir` unless it is absolute.  Returns a
 * malloc'd string, or NULL when out of memory. */
char *pg_config_resolve(const char *base_dir, const char *path);

/* Make an absolute path of a relative one against the current directory,
 * lexically (the file need not exist).  malloc'd, or NULL. */
char *pg_config_absolute(const char *path);

/* Read a configuration string field into a malloc'd copy, resolving it as
 * a path when `is_path`; keeps *out (a default the caller set, malloc'd or
 * NULL) when absent.  Returns 0 or -1 (err names the field). */
int pg_config_string(const cJSON *root, const char *key, int is_path,
		     const char *base_dir, char **out, struct pg_err *err);

/* Read an optional array of non-empty strings into a malloc'd vector of
 * malloc'd copies (*n entries).  Absent: *out NULL, *n 0.  Returns 0/-1. */
int pg_config_strings(const cJSON *root, const char *key, char ***out, size_t *n,
		      struct pg_err *err);

/* Free a vector from pg_config_strings(). */
void pg_config_strings_free(char **v, size_t n);

/*
 * Read an optional object of labels {"vendor": "intel", ...} into parallel
 * malloc'd vectors (*n entries; free each with pg_config_strings_free()).
 * Names and values are 1..PG_LABEL_MAX letters, digits, '_', '.', '-'
 * (labels are matched literally against host classes: the characters the
 * `--labels k=v,...` syntax can carry); at most PG_MAX_LABELS.  Absent:
 * NULL, 0.  Returns 0, or -1 with err naming "field 'KEY.NAME'"; on error
 * the vectors hold what was read so far (free them).
 */
#define PG_MAX_LABELS 64
/* A label name or value, or a host name: 1 if s is 1..PG_LABEL_MAX of
 * [A-Za-z0-9_.-], else 0. */
int pg_config_label_ok(const char *s);
#define PG_LABEL_MAX 128
int pg_config_labels(const cJSON *root, const char *key, char ***keys, char ***values,
		     size_t *n, struct pg_err *err);

/* Parses a configuration's JSON object into the daemon's own struct. */
typedef int (*pg_config_parse_fn)(void *cfg, const cJSON *root, const char *dir,
				  struct pg_err *err);

/*
 * Load a daemon's configuration file: `path`, or when NULL
 * `default_path` if it exists (when it does not, nothing is read: the
 * caller's built-in defaults stand, *used is NULL, and 0 is returned).
 * parse() fills cfg from the file's object; errors are prefixed with the
 * file's name.  *used is the absolute path read (malloc'd).  Returns 0 or
 * -1.
 */
int pg_config_load(const char *path, const char *default_path, pg_config_parse_fn parse,
		   void *cfg, char **used, struct pg_err *err);

/*
 * Parse text[0..len) as the content of a configuration file would be by
 * pg_config_load() (a JSON object of at most PG_CONFIG_MAX bytes, relative
 * paths taken against dir, an absolute directory), without a file: for
 * tests and fuzzing.  Returns 0 or -1.
 */
int pg_config_load_text(const char *text, size_t len, const char *dir,
			pg_config_parse_fn parse, void *cfg, struct pg_err *err);

/* The checks both daemons make on their common fields: profile names are
 * file names in profiles_dir, and log_level parses (and is applied). */
int pg_config_check_common(char *const *profiles, size_t n, const char *log_level,
			   struct pg_err *err);

/*
 * Print {"config": config, "profiles": <ps normalised>[, extra_key:
 * extra]} to stdout, indented: what --check-config shows.  Takes ownership
 * of config and extra (either may be NULL only when out of memory).
 * Returns 0, or -1 when out of memory.
 */
int pg_config_print(cJSON *config, const struct profile_set *ps, const char *extra_key,
		    cJSON *extra);

/* Load the profile catalogue a configuration names: the files `files`
 * (names inside `dir`), or every *.json of `dir` when n is 0.  Returns 0,
 * or -1 with *ps empty and err naming the file and field. */
int pg_config_load_profiles(const char *dir, const char *const *files, size_t n,
			    struct profile_set *ps, struct pg_err *err);

#endif
