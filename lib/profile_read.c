/* SPDX-License-Identifier: MIT */
/*
 * Reading profile JSON with errors in one form, "FILE: PATH: what is
 * wrong" (see profile_int.h).  The pg_json getters do the reading and type
 * checks; here their "field 'KEY': ..." messages get the whole field path.
 */
#include "profile_int.h"

#include <float.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "vec.h"

/* ---- messages ---------------------------------------------------------- */

/* Paths go into messages only, so an absurdly long one is cut, visibly. */
static void path_fix(char *dst, int n)
{
	char *p;

	if (n < 0)
		memcpy(dst, "?", 2);
	else if (n >= PROFILE_PATH_LEN)
		memcpy(dst + PROFILE_PATH_LEN - 4, "...", 4);
	for (p = dst; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

void profile_path_join(char *dst, const char *parent, const char *key)
{
	int n;

	if (!key)
		key = "?";
	if (parent && *parent)
		n = snprintf(dst, PROFILE_PATH_LEN, "%s.%s", parent, key);
	else
		n = snprintf(dst, PROFILE_PATH_LEN, "%s", key);
	path_fix(dst, n);
}

void profile_path_index(char *dst, const char *parent, size_t i)
{
	path_fix(dst, snprintf(dst, PROFILE_PATH_LEN, "%s[%zu]", parent, i));
}

__attribute__((format(printf, 3, 0)))
static int vfail(struct profile_loader *ld, const char *path, const char *fmt, va_list ap)
{
	char msg[PG_ERR_MSG_MAX];
	char *p;

	/* A cut message is still useful; pg_err cuts the same way. */
	if (!pg_vfmt_cut(msg, sizeof(msg), fmt, ap))
		memcpy(msg, "?", 2);
	for (p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (path && *path)
		return pg_err_set(ld->err, PG_EINVAL, "%s: %s: %s", ld->file, path, msg);
	return pg_err_set(ld->err, PG_EINVAL, "%s: %s", ld->file, msg);
}

int profile_fail(struct profile_loader *ld, const char *path, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(ld, path, fmt, ap);
	va_end(ap);
	return rc;
}

int profile_fail_at(struct profile_loader *ld, const char *parent, const char *key,
		    const char *fmt, ...)
{
	char path[PROFILE_PATH_LEN];
	va_list ap;
	int rc;

	profile_path_join(path, parent, key);
	va_start(ap, fmt);
	rc = vfail(ld, path, fmt, ap);
	va_end(ap);
	return rc;
}

int profile_fail_idx(struct profile_loader *ld, const char *parent, size_t i, const char *fmt, ...)
{
	char path[PROFILE_PATH_LEN];
	va_list ap;
	int rc;

	profile_path_index(path, parent, i);
	va_start(ap, fmt);
	rc = vfail(ld, path, fmt, ap);
	va_end(ap);
	return rc;
}

int profile_oom(struct profile_loader *ld)
{
	return pg_err_set(ld->err, PG_ENOMEM, "%s: out of memory", ld->file);
}

/*
 * The pg_json getters say "field 'KEY': what is wrong"; keep what is wrong
 * and put the whole path in front, so that every message has one form.
 */
static int json_fail(struct profile_loader *ld, const char *parent, const char *key,
		     const struct pg_err *e)
{
	char prefix[PROFILE_PATH_LEN + 16];
	const char *what = e->msg;
	int n = snprintf(prefix, sizeof(prefix), "field '%s': ", key);

	if (n > 0 && (size_t)n < sizeof(prefix) && strncmp(what, prefix, (size_t)n) == 0)
		what += n;
	return profile_fail_at(ld, parent, key, "%s", what);
}

/* "a, b or c" for messages. */
void profile_join_names(char *dst, size_t len, const char *const *names)
{
	size_t used = 0;
	int n;

	dst[0] = '\0';
	for (size_t i = 0; names[i]; i++) {
		const char *sep = i == 0 ? "" : names[i + 1] ? ", " : " or ";

		n = snprintf(dst + used, len - used, "%s%s", sep, names[i]);
		if (n < 0 || (size_t)n >= len - used)
			return;	/* cut: only a message */
		used += (size_t)n;
	}
}

/* ---- small checks ------------------------------------------------------ */

bool profile_is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool profile_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

int profile_check_text(struct profile_loader *ld, const char *path, const char *s, size_t max,
		       bool nonempty)
{
	size_t len = strlen(s);

	if (nonempty && len == 0)
		return profile_fail(ld, path, "must not be empty");
	if (len > max)
		return profile_fail(ld, path, "is longer than %zu bytes", max);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return profile_fail(ld, path, "contains a control character");
	return 0;
}

/* Entry names and label keys: [A-Za-z0-9_.-]+. */
bool profile_valid_name(const char *s, size_t max)
{
	size_t len = strlen(s);

	if (len == 0 || len > max)
		return false;
	for (; *s; s++)
		if (!profile_is_alnum(*s) && *s != '_' && *s != '.' && *s != '-')
			return false;
	return true;
}

int profile_check_name(struct profile_loader *ld, const char *path, const char *name)
{
	if (!profile_valid_name(name, PROFILE_NAME_MAX))
		return profile_fail(ld, path,
				    "a name must be 1 to %d letters, digits, '_', '.' or '-'",
				    PROFILE_NAME_MAX);
	return 0;
}

/* A subset of git-check-ref-format(1), enough to refuse typos and options. */
bool profile_valid_branch(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > PROFILE_VALUE_MAX || s[0] == '-' || s[0] == '/' || s[0] == '.' ||
	    s[len - 1] == '/' || s[len - 1] == '.' || strstr(s, "..") || strstr(s, "//") ||
	    (len >= 5 && strcmp(s + len - 5, ".lock") == 0))
		return false;
	for (; *s; s++)
		if (!profile_is_alnum(*s) && !strchr("_.-/+", *s))
			return false;
	return true;
}

int profile_check_branch(struct profile_loader *ld, const char *path, const char *s)
{
	if (!profile_valid_branch(s))
		return profile_fail(ld, path, "'%s' is not a valid branch name", s);
	return 0;
}

/* ---- typed getters: pg_json does the reading, we compose the path ------ */

int profile_get_string(struct profile_loader *ld, const char *parent, const cJSON *obj,
		       const char *key, bool required, const char **out)
{
	struct pg_err e = PG_ERR_INIT;
	int rc = pg_json_get_string(obj, key, false, out, &e);

	if (rc < 0)
		return json_fail(ld, parent, key, &e);
	if (rc == 0 && required)
		return profile_fail_at(ld, parent, key, "required field is missing");
	return rc;
}

/* A string field copied into *out after profile_check_text(). */
int profile_get_text(struct profile_loader *ld, const char *parent, const cJSON *obj,
		     const char *key, bool required, size_t max, char **out)
{
	char path[PROFILE_PATH_LEN];
	const char *s;
	int rc = profile_get_string(ld, parent, obj, key, required, &s);

	if (rc <= 0)
		return rc;
	profile_path_join(path, parent, key);
	if (profile_check_text(ld, path, s, max, required) < 0)
		return -1;
	*out = strdup(s);
	return *out ? 1 : profile_oom(ld);
}

int profile_get_int(struct profile_loader *ld, const char *parent, const cJSON *obj,
		    const char *key, bool required, int min, int max, int *out)
{
	struct pg_err e = PG_ERR_INIT;
	int64_t v;
	int rc = pg_json_get_int(obj, key, false, min, max, &v, &e);

	if (rc < 0)
		return json_fail(ld, parent, key, &e);
	if (rc == 0) {
		if (required)
			return profile_fail_at(ld, parent, key, "required field is missing");
		return 0;
	}
	*out = (int)v;
	return 1;
}

/* An optional number in the half-open range (lo, hi]. */
int profile_get_number(struct profile_loader *ld, const char *parent, const cJSON *obj,
		       const char *key, double lo, double hi, double *out)
{
	struct pg_err e = PG_ERR_INIT;
	double v;
	int rc = pg_json_get_double(obj, key, false, -DBL_MAX, DBL_MAX, &v, &e);

	if (rc < 0)
		return json_fail(ld, parent, key, &e);
	if (rc == 0)
		return 0;
	if (!(v > lo && v <= hi))
		return profile_fail_at(ld, parent, key, "%g is out of range (%g, %g]", v, lo, hi);
	*out = v;
	return 1;
}

int profile_get_bool(struct profile_loader *ld, const char *parent, const cJSON *obj,
		     const char *key, bool required, bool *out)
{
	struct pg_err e = PG_ERR_INIT;
	int rc = pg_json_get_bool(obj, key, false, out, &e);

	if (rc < 0)
		return json_fail(ld, parent, key, &e);
	if (rc == 0 && required)
		return profile_fail_at(ld, parent, key, "required field is missing");
	return rc;
}

int profile_get_object(struct profile_loader *ld, const char *parent, const cJSON *obj,
		       const char *key, bool required, const cJSON **out)
{
	struct pg_err e = PG_ERR_INIT;
	int rc = pg_json_get_object(obj, key, false, out, &e);

	if (rc < 0)
		return json_fail(ld, parent, key, &e);
	if (rc == 0 && required)
		return profile_fail_at(ld, parent, key, "required field is missing");
	return rc;
}

int profile_get_array(struct profile_loader *ld, const char *parent, const cJSON *obj,
		      const char *key, bool required, const cJSON **out)
{
	struct pg_err e = PG_ERR_INIT;
	int rc = pg_json_get_array(obj, key, false, out, &e);

	if (rc < 0)
		return json_fail(ld, parent, key, &e);
	if (rc == 0 && required)
		return profile_fail_at(ld, parent, key, "required field is missing");
	return rc;
}

/* One of names[]; *out is its index. */
int profile_get_enum(struct profile_loader *ld, const char *parent, const cJSON *obj,
		     const char *key, bool required, const char *const *names, int *out)
{
	char list[256];
	const char *s;
	int rc = profile_get_string(ld, parent, obj, key, required, &s);

	if (rc <= 0)
		return rc;
	for (int i = 0; names[i]; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 1;
		}
	}
	profile_join_names(list, sizeof(list), names);
	return profile_fail_at(ld, parent, key, "'%s' is not one of %s", s, list);
}

/*
 * cJSON keeps repeated keys and lookups take the first, so a repeated key
 * would silently lose a value: refuse it.  Objects are bounded first so
 * that the pairwise check stays cheap.
 */
int profile_check_unique_keys(struct profile_loader *ld, const char *path, const cJSON *obj)
{
	const cJSON *a, *b;

	if (cJSON_GetArraySize(obj) > PROFILE_MAX_ITEMS)
		return profile_fail(ld, path, "has more than %d members", PROFILE_MAX_ITEMS);
	cJSON_ArrayForEach(a, obj) {
		for (b = a->next; b; b = b->next)
			if (a->string && b->string && strcmp(a->string, b->string) == 0)
				return profile_fail_at(ld, path, a->string, "given twice");
	}
	return 0;
}

/* Unknown fields are errors, so that a typo is caught and not ignored. */
int profile_check_object(struct profile_loader *ld, const char *path, const cJSON *obj,
			 const char *const *allowed, const char *what)
{
	struct pg_err e = PG_ERR_INIT;
	const cJSON *item;

	if (pg_json_check_keys(obj, allowed, &e) < 0) {
		/* Find the key ourselves: the message wants our path. */
		cJSON_ArrayForEach(item, obj)
			if (!item->string || !in_list(item->string, allowed))
				return profile_fail_at(ld, path, item->string, "%s", what);
		return profile_fail(ld, path, "%s", e.msg);
	}
	return profile_check_unique_keys(ld, path, obj);
}

/*
 * A list of strings, each passing check(); copies into *out (*n entries).
 * Absent: 0 with *out untouched.
 */
int profile_get_strlist(struct profile_loader *ld, const char *parent, const cJSON *obj,
			const char *key, bool required, bool nonempty, bool unique,
			profile_check_fn check, char ***out, size_t *n)
{
	char path[PROFILE_PATH_LEN], ipath[PROFILE_PATH_LEN];
	const cJSON *arr, *item;
	size_t i = 0, count;
	int rc = profile_get_array(ld, parent, obj, key, required, &arr);

	if (rc <= 0)
		return rc;
	profile_path_join(path, parent, key);
	count = (size_t)cJSON_GetArraySize(arr);
	if (count == 0 && nonempty)
		return profile_fail(ld, path, "must not be empty");
	if (count > PROFILE_MAX_ITEMS)
		return profile_fail(ld, path, "has more than %d items", PROFILE_MAX_ITEMS);
	*out = calloc(count ? count : 1, sizeof(**out));
	if (!*out)
		return profile_oom(ld);
	*n = count;
	cJSON_ArrayForEach(item, arr) {
		profile_path_index(ipath, path, i);
		if (!cJSON_IsString(item) || !item->valuestring)
			return profile_fail(ld, ipath, "expected a string, got %s",
					    pg_json_type_name(item));
		if (check(ld, ipath, item->valuestring) < 0)
			return -1;
		for (size_t j = 0; unique && j < i; j++)
			if (strcmp((*out)[j], item->valuestring) == 0)
				return profile_fail(ld, ipath, "'%s' is listed twice",
						    item->valuestring);
		(*out)[i] = strdup(item->valuestring);
		if (!(*out)[i])
			return profile_oom(ld);
		i++;
	}
	return 1;
}

/* A list of distinct integers in [min, max]; absent: 0, *out untouched. */
int profile_get_uintlist(struct profile_loader *ld, const char *parent, const cJSON *obj,
			 const char *key, unsigned min, unsigned max, unsigned **out, size_t *n)
{
	char path[PROFILE_PATH_LEN], ipath[PROFILE_PATH_LEN];
	const cJSON *arr, *item;
	size_t i = 0, count;
	int rc = profile_get_array(ld, parent, obj, key, false, &arr);

	if (rc <= 0)
		return rc;
	profile_path_join(path, parent, key);
	count = (size_t)cJSON_GetArraySize(arr);
	if (count == 0)
		return profile_fail(ld, path, "must not be empty");
	if (count > PROFILE_SUBSET_LIST_MAX)
		return profile_fail(ld, path, "has more than %d items", PROFILE_SUBSET_LIST_MAX);
	free(*out);	/* the default it replaces */
	*n = 0;
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return profile_oom(ld);
	cJSON_ArrayForEach(item, arr) {
		double v = item->valuedouble;

		profile_path_index(ipath, path, i);
		if (!cJSON_IsNumber(item))
			return profile_fail(ld, ipath, "expected an integer, got %s",
					    pg_json_type_name(item));
		/* Range first: only then is the cast below defined. */
		if (!(v >= min && v <= max))
			return profile_fail(ld, ipath, "%g is out of range [%u, %u]", v, min, max);
		if (v != (double)(unsigned)v)
			return profile_fail(ld, ipath, "%g is not an integer", v);
		for (size_t j = 0; j < i; j++)
			if ((*out)[j] == (unsigned)v)
				return profile_fail(ld, ipath, "%u is listed twice", (unsigned)v);
		(*out)[i++] = (unsigned)v;
		*n = i;
	}
	return 1;
}

static int cmp_kv(const void *a, const void *b)
{
	return strcmp(((const struct profile_kv *)a)->key, ((const struct profile_kv *)b)->key);
}

static int check_kv_key(struct profile_loader *ld, const char *path, const char *k,
			enum profile_kv_kind kind)
{
	const char *p = k;

	switch (kind) {
	case PROFILE_KV_LABEL:
		if (!profile_valid_name(k, PROFILE_NAME_MAX))
			return profile_fail(ld, path, "a label name must be 1 to %d letters, "
					    "digits, '_', '.' or '-'", PROFILE_NAME_MAX);
		return 0;
	case PROFILE_KV_ENV:
		if (!*p || profile_is_digit(*p))
			return profile_fail(ld, path, "not an environment variable name");
		for (; *p; p++)
			if (!profile_is_alnum(*p) && *p != '_')
				return profile_fail(ld, path, "not an environment variable name");
		return 0;
	case PROFILE_KV_MESON:
		if (strcmp(k, "buildtype") == 0 || strcmp(k, "c_args") == 0)
			return profile_fail(ld, path, "set %s with the build mode's own field", k);
		if (!*p)
			return profile_fail(ld, path, "not a meson option name");
		for (; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || profile_is_digit(*p) || *p == '_'))
				return profile_fail(ld, path, "a meson option name is lower-case "
						    "letters, digits and '_'");
		return 0;
	}
	return 0;
}

/* An object of strings, sorted by key into *out. */
int profile_get_kvmap(struct profile_loader *ld, const char *parent, const cJSON *obj,
		      const char *key, bool required, enum profile_kv_kind kind,
		      struct profile_kv **out, size_t *n)
{
	char path[PROFILE_PATH_LEN], kpath[PROFILE_PATH_LEN];
	const cJSON *map, *item;
	size_t i = 0, count;
	int rc = profile_get_object(ld, parent, obj, key, required, &map);

	if (rc <= 0)
		return rc;
	profile_path_join(path, parent, key);
	if (profile_check_unique_keys(ld, path, map) < 0)
		return -1;
	count = (size_t)cJSON_GetArraySize(map);
	if (count == 0 && kind == PROFILE_KV_LABEL)
		return profile_fail(ld, path, "needs at least one label");
	*out = calloc(count ? count : 1, sizeof(**out));
	if (!*out)
		return profile_oom(ld);
	*n = count;
	cJSON_ArrayForEach(item, map) {
		const char *v;

		profile_path_join(kpath, path, item->string);
		if (check_kv_key(ld, kpath, item->string, kind) < 0 ||
		    profile_get_string(ld, path, map, item->string, true, &v) < 0 ||
		    profile_check_text(ld, kpath, v,
				       kind == PROFILE_KV_LABEL ? PROFILE_VALUE_MAX
								: PROFILE_TEXT_MAX,
				       kind == PROFILE_KV_LABEL) < 0)
			return -1;
		(*out)[i].key = strdup(item->string);
		(*out)[i].value = strdup(v);
		if (!(*out)[i].key || !(*out)[i].value)
			return profile_oom(ld);
		i++;
	}
	qsort(*out, count, sizeof(**out), cmp_kv);
	return 1;
}

/* ---- entries ----------------------------------------------------------- */

/* Make room for one more zeroed entry (sections stay small). */
void *profile_grow(void *arr, size_t n, size_t size)
{
	char *p = n == SIZE_MAX ? NULL : pg_realloc_array(arr, n + 1, size);

	if (p)
		memset(p + n * size, 0, size);
	return p;
}

/* Every entry struct starts with `char *name`; `file` is at file_off. */
static const char *entry_file(const void *base, size_t i, size_t size, size_t file_off)
{
	const char *f;

	memcpy(&f, (const char *)base + i * size + file_off, sizeof(f));
	return f;
}

int profile_check_new_entry(struct profile_loader *ld, const char *section, const char *path,
			    const char *name, const void *base, size_t n, size_t size,
			    size_t file_off)
{
	if (n >= PROFILE_MAX_ENTRIES)
		return profile_fail(ld, section, "more than %d entries in the catalogue",
				    PROFILE_MAX_ENTRIES);
	for (size_t i = 0; i < n; i++) {
		const char *other = *(char *const *)(const void *)((const char *)base + i * size);
		const char *f = entry_file(base, i, size, file_off);

		if (strcmp(other, name) != 0)
			continue;
		if (f == ld->file)
			return profile_fail(ld, path, "defined twice in this file");
		return profile_fail(ld, path, "already defined in %s", f);
	}
	return 0;
}
