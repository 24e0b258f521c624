/* SPDX-License-Identifier: MIT */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fmt.h"
#include "fsutil.h"
#include "sanitize.h"

int pg_json_parse(const char *text, size_t len, cJSON **out, struct pg_err *err)
{
	cJSON *root;
	const char *end = NULL;

	*out = NULL;
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		size_t line = 1, col = 1;
		const char *p;

		/* cJSON reports where it stopped only through the end pointer
		 * (its global error pointer is not thread-safe). */
		if (!end || end < text || end > text + len)
			end = text;
		for (p = text; p < end; p++) {
			if (*p == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		if (len == 0)
			return pg_err_set(err, PG_EINVAL, "invalid JSON: empty document");
		return pg_err_set(err, PG_EINVAL, "invalid JSON at line %zu, column %zu", line, col);
	}
	/* Only white space may follow the value: "{...} junk" is a broken
	 * file, not a valid one with a comment. */
	for (const char *p = end; p && p < text + len; p++) {
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
			cJSON_Delete(root);
			return pg_err_set(err, PG_EINVAL,
					  "invalid JSON: unexpected data after the value at offset %zu",
					  (size_t)(p - text));
		}
	}
	*out = root;
	return 0;
}

int pg_json_parse_file(const char *path, size_t max, cJSON **out, struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(max);
	int rc = -1;

	*out = NULL;
	if (pg_read_file(path, &b, err) < 0)
		goto out;
	if (pg_json_parse(pg_buf_str(&b), b.len, out, err) < 0) {
		pg_err_prefix(err, "%s", path);
		goto out;
	}
	rc = 0;
out:
	pg_buf_release(&b);
	return rc;
}

const char *pg_json_type_name(const cJSON *item)
{
	if (!item)
		return "nothing";
	if (cJSON_IsString(item))
		return "a string";
	if (cJSON_IsNumber(item))
		return "a number";
	if (cJSON_IsBool(item))
		return "a boolean";
	if (cJSON_IsNull(item))
		return "null";
	if (cJSON_IsArray(item))
		return "an array";
	if (cJSON_IsObject(item))
		return "an object";
	return "an invalid value";
}

/* Look up key; 1 found, 0 absent and optional, -1 absent and required. */
static int json_lookup(const cJSON *obj, const char *key, bool required,
		       const cJSON **item, struct pg_err *err)
{
	if (!cJSON_IsObject(obj))
		return pg_err_set(err, PG_EINVAL, "field '%s': parent is %s, not an object",
				  key, pg_json_type_name(obj));
	*item = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (*item)
		return 1;
	if (required)
		return pg_err_set(err, PG_EINVAL, "field '%s': missing", key);
	return 0;
}

static int json_wrong_type(const char *key, const char *want, const cJSON *item,
			   struct pg_err *err)
{
	return pg_err_set(err, PG_EINVAL, "field '%s': expected %s, got %s", key, want,
			  pg_json_type_name(item));
}

int pg_json_get_string(const cJSON *obj, const char *key, bool required,
		       const char **out, struct pg_err *err)
{
	const cJSON *item;
	int rc = json_lookup(obj, key, required, &item, err);

	if (rc <= 0)
		return rc;
	if (!cJSON_IsString(item) || !item->valuestring)
		return json_wrong_type(key, "a string", item, err);
	*out = item->valuestring;
	return 1;
}

int pg_json_get_double(const cJSON *obj, const char *key, bool required,
		       double min, double max, double *out, struct pg_err *err)
{
	const cJSON *item;
	int rc = json_lookup(obj, key, required, &item, err);

	if (rc <= 0)
		return rc;
	if (!cJSON_IsNumber(item))
		return json_wrong_type(key, "a number", item, err);
	if (!isfinite(item->valuedouble) || item->valuedouble < min || item->valuedouble > max)
		return pg_err_set(err, PG_EINVAL, "field '%s': %g is out of range [%g, %g]",
				  key, item->valuedouble, min, max);
	*out = item->valuedouble;
	return 1;
}

int pg_json_get_int(const cJSON *obj, const char *key, bool required,
		    int64_t min, int64_t max, int64_t *out, struct pg_err *err)
{
	const cJSON *item;
	double v;
	int rc = json_lookup(obj, key, required, &item, err);

	if (rc <= 0)
		return rc;
	if (!cJSON_IsNumber(item))
		return json_wrong_type(key, "an integer", item, err);
	v = item->valuedouble;
	/* cJSON keeps numbers as doubles; integers beyond 2^53 are not exact. */
	if (!isfinite(v) || v != floor(v) || fabs(v) > 9007199254740992.0)
		return pg_err_set(err, PG_EINVAL, "field '%s': %g is not an integer", key, v);
	if (v < (double)min || v > (double)max)
		return pg_err_set(err, PG_EINVAL,
				  "field '%s': %lld is out of range [%lld, %lld]", key,
				  (long long)v, (long long)min, (long long)max);
	*out = (int64_t)v;
	return 1;
}

int pg_json_get_bool(const cJSON *obj, const char *key, bool required,
		     bool *out, struct pg_err *err)
{
	const cJSON *item;
	int rc = json_lookup(obj, key, required, &item, err);

	if (rc <= 0)
		return rc;
	if (!cJSON_IsBool(item))
		return json_wrong_type(key, "a boolean", item, err);
	*out = cJSON_IsTrue(item);
	return 1;
}

int pg_json_get_object(const cJSON *obj, const char *key, bool required,
		       const cJSON **out, struct pg_err *err)
{
	const cJSON *item;
	int rc = json_lookup(obj, key, required, &item, err);

	if (rc <= 0)
		return rc;
	if (!cJSON_IsObject(item))
		return json_wrong_type(key, "an object", item, err);
	*out = item;
	return 1;
}

int pg_json_get_array(const cJSON *obj, const char *key, bool required,
		      const cJSON **out, struct pg_err *err)
{
	const cJSON *item;
	int rc = json_lookup(obj, key, required, &item, err);

	if (rc <= 0)
		return rc;
	if (!cJSON_IsArray(item))
		return json_wrong_type(key, "an array", item, err);
	*out = item;
	return 1;
}

int pg_json_check_keys(const cJSON *obj, const char *const *allowed, struct pg_err *err)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, obj) {
		const char *const *a;

		for (a = allowed; *a; a++)
			if (item->string && strcmp(item->string, *a) == 0)
				break;
		if (!*a)
			return pg_err_set(err, PG_EINVAL, "field '%s': unknown field",
					  item->string ? item->string : "?");
	}
	return 0;
}

char *pg_json_print(const cJSON *item, bool pretty)
{
	return pretty ? cJSON_Print(item) : cJSON_PrintUnformatted(item);
}

int pg_json_nested_err(struct pg_err *err, const char *parent)
{
	static const char head[] = "field '";
	char rest[PG_ERR_MSG_MAX];

	if (!err)
		return -1;
	if (strncmp(err->msg, head, sizeof(head) - 1) != 0) {
		pg_err_prefix(err, "field '%s'", parent);
		return -1;
	}
	/* The tail of a message of this size: it fits. */
	pg_fmt_cut(rest, sizeof(rest), "%s", err->msg + sizeof(head) - 1);
	return pg_err_set(err, err->code, "field '%s.%s", parent, rest);
}

char *pg_json_print_safe(const cJSON *item, bool pretty)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char *text = pg_json_print(item, pretty);
	size_t len;

	if (!text)
		return NULL;
	len = strlen(text);
	/* Most documents are clean: hand cJSON's text back as it is. */
	if (pg_sanitize_is_clean(text, len, PG_SAN_BLOCK))
		return text;
	if (pg_sanitize_json(&b, text, len) < 0) {
		pg_buf_release(&b);
		free(text);
		return NULL;
	}
	free(text);
	return pg_buf_detach(&b, NULL);
}

/* Replace *s (allocated by cJSON unless is_const) by its sanitised copy
 * when it is not clean.  Returns 1 when replaced, 0 when kept, -1. */
static int sanitize_member(char **s, bool is_const, enum pg_san_mode mode)
{
	char *safe, *copy;
	size_t n;

	if (!*s || pg_sanitize_is_clean(*s, strlen(*s), mode))
		return 0;
	safe = pg_sanitize_dup(*s, mode);
	if (!safe)
		return -1;
	n = strlen(safe) + 1;
	copy = cJSON_malloc(n);
	if (!copy) {
		free(safe);
		return -1;
	}
	memcpy(copy, safe, n);
	free(safe);
	if (!is_const)
		cJSON_free(*s);
	*s = copy;
	return 1;
}

int pg_json_sanitize_strings(cJSON *item, enum pg_san_mode mode)
{
	cJSON *c;
	int r;

	if (!item)
		return 0;
	r = sanitize_member(&item->string, (item->type & cJSON_StringIsConst) != 0, mode);
	if (r < 0)
		return -1;
	if (r > 0)	/* a replaced key is cJSON's to free now */
		item->type &= ~cJSON_StringIsConst;
	if (cJSON_IsString(item) && sanitize_member(&item->valuestring, false, mode) < 0)
		return -1;
	for (c = item->child; c; c = c->next)
		if (pg_json_sanitize_strings(c, mode) < 0)
			return -1;
	return 0;
}

const cJSON *pg_json_path(const cJSON *obj, const char *path)
{
	char part[64];

	while (obj && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(part))
			return NULL;
		memcpy(part, path, n);
		part[n] = '\0';
		obj = cJSON_GetObjectItemCaseSensitive(obj, part);
		path += n + (path[n] == '.');
	}
	return obj;
}
