/* SPDX-License-Identifier: MIT */
#include "conffile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "log.h"
#include "profile.h"

/* Drop "." and "name/.." components of an absolute path in place, so that
 * printed paths read as an operator would write them. */
static void conffile_normalise(char *path)
{
	char *out = path, *p = path;

	while (*p) {
		char *seg;
		size_t len;

		while (*p == '/')
			p++;
		seg = p;
		len = strcspn(seg, "/");
		p += len;
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			while (out > path && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		memmove(out, seg, len);
		out += len;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}

char *pg_config_resolve(const char *base_dir, const char *path)
{
	struct pg_buf b = PG_BUF_INIT(PATH_MAX * 4);
	char *res;

	if (path[0] == '/' || !base_dir || !*base_dir) {
		res = strdup(path);
	} else {
		if (pg_buf_printf(&b, "%s/%s", base_dir, path) < 0) {
			pg_buf_release(&b);
			return NULL;
		}
		res = pg_buf_detach(&b, NULL);
	}
	if (res && res[0] == '/')
		conffile_normalise(res);
	return res;
}

char *pg_config_absolute(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	return pg_config_resolve(cwd, path);
}

int pg_config_read(const char *path, cJSON **root, char **dir, struct pg_err *err)
{
	char *abs = NULL, *slash;
	int rc = -1;

	*root = NULL;
	*dir = NULL;
	abs = pg_config_absolute(path);
	if (!abs)
		return pg_err_errno(err, "config '%s'", path);
	if (pg_json_parse_file(path, PG_CONFIG_MAX, root, err) < 0)
		goto out;
	if (!cJSON_IsObject(*root)) {
		pg_err_set(err, PG_EINVAL, "%s: expected a JSON object at the top", path);
		cJSON_Delete(*root);
		*root = NULL;
		goto out;
	}
	slash = strrchr(abs, '/');
	if (slash == abs)
		slash[1] = '\0';
	else
		*slash = '\0';
	*dir = abs;
	abs = NULL;
	rc = 0;
out:
	free(abs);
	return rc;
}

int pg_config_string(const cJSON *root, const char *key, int is_path,
		     const char *base_dir, char **out, struct pg_err *err)
{
	const char *s = NULL;
	char *copy;
	int rc;

	rc = pg_json_get_string(root, key, 0, &s, err);
	if (rc <= 0)
		return rc;
	if (!*s)
		return pg_err_set(err, PG_EINVAL, "field '%s': must not be empty", key);
	copy = is_path ? pg_config_resolve(base_dir, s) : strdup(s);
	if (!copy)
		return pg_err_set(err, PG_ENOMEM, "field '%s': out of memory", key);
	free(*out);
	*out = copy;
	return 0;
}

void pg_config_strings_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int pg_config_strings(const cJSON *root, const char *key, char ***out, size_t *n,
		      struct pg_err *err)
{
	const cJSON *arr = NULL, *item;
	char **v = NULL;
	size_t count = 0, i = 0;
	int rc;

	*out = NULL;
	*n = 0;
	rc = pg_json_get_array(root, key, 0, &arr, err);
	if (rc <= 0)
		return rc;
	count = (size_t)cJSON_GetArraySize(arr);
	if (count == 0)
		return 0;
	v = calloc(count, sizeof(*v));
	if (!v)
		return pg_err_set(err, PG_ENOMEM, "field '%s': out of memory", key);
	cJSON_ArrayForEach(item, arr) {
		if (!cJSON_IsString(item) || !item->valuestring || !*item->valuestring) {
			pg_err_set(err, PG_EINVAL, "field '%s[%zu]': expected a non-empty string, got %s",
				   key, i, pg_json_type_name(item));
			goto fail;
		}
		v[i] = strdup(item->valuestring);
		if (!v[i]) {
			pg_err_set(err, PG_ENOMEM, "field '%s': out of memory", key);
			goto fail;
		}
		i++;
	}
	*out = v;
	*n = count;
	return 0;
fail:
	pg_config_strings_free(v, count);
	return -1;
}

int pg_config_load_profiles(const char *dir, const char *const *files, size_t n,
			    struct profile_set *ps, struct pg_err *err)
{
	char **paths = NULL;
	int rc = -1;

	memset(ps, 0, sizeof(*ps));
	if (n == 0)
		return profile_set_load_dir(ps, dir, err);
	paths = calloc(n, sizeof(*paths));
	if (!paths)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		paths[i] = pg_config_resolve(dir, files[i]);
		if (!paths[i]) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
	}
	rc = profile_set_load(ps, (const char *const *)paths, n, err);
out:
	pg_config_strings_free(paths, n);
	return rc;
}

int pg_config_load(const char *path, const char *default_path, pg_config_parse_fn parse,
		   void *cfg, char **used, struct pg_err *err)
{
	cJSON *root = NULL;
	char *dir = NULL;
	int rc = -1;

	*used = NULL;
	if (!path) {
		if (access(default_path, F_OK) != 0)
			return 0;
		path = default_path;
	}
	if (pg_config_read(path, &root, &dir, err) < 0)
		goto out;
	*used = pg_config_absolute(path);
	if (!*used) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	if (parse(cfg, root, dir, err) < 0) {
		pg_err_prefix(err, "%s", path);
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	free(dir);
	return rc;
}

int pg_config_load_text(const char *text, size_t len, const char *dir,
			pg_config_parse_fn parse, void *cfg, struct pg_err *err)
{
	cJSON *root = NULL;
	int rc = -1;

	if (len > PG_CONFIG_MAX) {
		pg_err_set(err, PG_ETOOBIG, "config: larger than %d bytes", PG_CONFIG_MAX);
		goto out;
	}
	if (pg_json_parse(text, len, &root, err) < 0)
		goto out;
	if (!cJSON_IsObject(root)) {
		pg_err_set(err, PG_EINVAL, "config: expected a JSON object at the top");
		goto out;
	}
	rc = parse(cfg, root, dir, err);
out:
	cJSON_Delete(root);
	return rc;
}

int pg_config_check_common(char *const *profiles, size_t n, const char *log_level,
			   struct pg_err *err)
{
	for (size_t i = 0; i < n; i++)
		if (strchr(profiles[i], '/'))
			return pg_err_set(err, PG_EINVAL,
					  "field 'profiles[%zu]': '%s' must be a file name in profiles_dir",
					  i, profiles[i]);
	if (pg_log_set_levels(log_level) < 0)
		return pg_err_set(err, PG_EINVAL,
				  "field 'log_level': '%s' is not LEVEL[,component=LEVEL...] "
				  "with levels error, warn, info, debug", log_level);
	return 0;
}

int pg_config_print(cJSON *config, const struct profile_set *ps, const char *extra_key,
		    cJSON *extra)
{
	cJSON *out = cJSON_CreateObject(), *profiles = profile_set_to_json(ps);
	char *text = NULL;
	int rc = -1;

	if (!out || !config || !profiles)
		goto out;
	cJSON_AddItemToObject(out, "config", config);
	config = NULL;
	cJSON_AddItemToObject(out, "profiles", profiles);
	profiles = NULL;
	if (extra_key) {
		if (!extra)
			goto out;
		cJSON_AddItemToObject(out, extra_key, extra);
		extra = NULL;
	}
	text = pg_json_print(out, true);
	if (!text)
		goto out;
	printf("%s\n", text);
	rc = 0;
out:
	free(text);
	cJSON_Delete(out);
	cJSON_Delete(config);
	cJSON_Delete(profiles);
	cJSON_Delete(extra);
	return rc;
}

/* Labels are matched literally against host classes: keep them to the
 * characters the `--labels k=v,...` syntax can carry. */
int pg_config_label_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > PG_LABEL_MAX)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

int pg_config_labels(const cJSON *root, const char *key, char ***keys, char ***values,
		     size_t *n_out, struct pg_err *err)
{
	const cJSON *obj = NULL, *item;
	size_t n, i = 0;
	int rc;

	*keys = NULL;
	*values = NULL;
	*n_out = 0;
	rc = pg_json_get_object(root, key, 0, &obj, err);
	if (rc <= 0)
		return rc;
	n = (size_t)cJSON_GetArraySize(obj);
	if (n > PG_MAX_LABELS)
		return pg_err_set(err, PG_EINVAL, "field '%s': more than %d labels",
				  key, PG_MAX_LABELS);
	if (n == 0)
		return 0;
	*keys = calloc(n, sizeof(char *));
	*values = calloc(n, sizeof(char *));
	if (!*keys || !*values)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	*n_out = n;
	cJSON_ArrayForEach(item, obj) {
		if (!pg_config_label_ok(item->string))
			return pg_err_set(err, PG_EINVAL,
					  "field '%s.%s': label names are letters, digits, '_', '.', '-'",
					  key, item->string);
		if (!cJSON_IsString(item) || !pg_config_label_ok(item->valuestring))
			return pg_err_set(err, PG_EINVAL,
					  "field '%s.%s': expected a string of letters, digits, '_', '.', '-', got %s",
					  key, item->string, cJSON_IsString(item) ? "other characters" :
					  pg_json_type_name(item));
		(*keys)[i] = strdup(item->string);
		(*values)[i] = strdup(item->valuestring);
		if (!(*keys)[i] || !(*values)[i])
			return pg_err_set(err, PG_ENOMEM, "out of memory");
		i++;
	}
	return 0;
}
