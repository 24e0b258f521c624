/* SPDX-License-Identifier: MIT */
#ifndef PG_JSON_H
#define PG_JSON_H

/*
 * Type-checked access to cJSON values.  Every getter names the field in its
 * error ("field 'alpha': expected a number, got a string"), so that callers
 * only add where the object came from with pg_err_prefix().
 *
 * Getters return 1 when the field was found and stored, 0 when it is absent
 * and not required (*out untouched, so callers preset defaults), and -1 on
 * error (absent but required, wrong type, out of range).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "sanitize.h"

/* Parse len bytes (need not be NUL-terminated).  On error names the line
 * and column where parsing stopped.  Returns 0 or -1. */
int pg_json_parse(const char *text, size_t len, cJSON **out, struct pg_err *err);

/* Read a whole file (at most max bytes, else PG_ETOOBIG) and parse it. */
int pg_json_parse_file(const char *path, size_t max, cJSON **out, struct pg_err *err);

/* A short name of the JSON type, e.g. "a string", "null". */
const char *pg_json_type_name(const cJSON *item);

int pg_json_get_string(const cJSON *obj, const char *key, bool required,
		       const char **out, struct pg_err *err);
int pg_json_get_int(const cJSON *obj, const char *key, bool required,
		    int64_t min, int64_t max, int64_t *out, struct pg_err *err);
int pg_json_get_double(const cJSON *obj, const char *key, bool required,
		       double min, double max, double *out, struct pg_err *err);
int pg_json_get_bool(const cJSON *obj, const char *key, bool required,
		     bool *out, struct pg_err *err);
int pg_json_get_object(const cJSON *obj, const char *key, bool required,
		       const cJSON **out, struct pg_err *err);
int pg_json_get_array(const cJSON *obj, const char *key, bool required,
		      const cJSON **out, struct pg_err *err);

/* Fail naming the first key of obj that is not in allowed[] (NULL-ended),
 * so that a typo in a configuration file is caught, not ignored. */
int pg_json_check_keys(const cJSON *obj, const char *const *allowed, struct pg_err *err);

/* An error about a field of a nested object: "field 'x': ..." becomes
 * "field 'PARENT.x': ...", any other message "field 'PARENT': ...".
 * Returns -1, so that `return pg_json_nested_err(err, "sandbox")` reads
 * naturally. */
int pg_json_nested_err(struct pg_err *err, const char *parent);

/* Print compactly or with indentation; returns malloc'd text or NULL.
 * Strings come out as stored: for perfgate's own records (job specs). */
char *pg_json_print(const cJSON *item, bool pretty);

/* The item at a dotted path of object keys ("host_check.turbo"), or NULL
 * (a key missing, a part longer than 63 bytes, obj NULL). */
const cJSON *pg_json_path(const cJSON *obj, const char *path);

/* pg_json_print() for a document that leaves perfgate (every API answer,
 * every --json listing): passed through pg_sanitize_json(), so that it is
 * valid UTF-8 whatever the strings held and carries no raw C1 or
 * bidirectional control.  Returns malloc'd text or NULL (out of memory). */
char *pg_json_print_safe(const cJSON *item, bool pretty);

/* Make every string value and object key in item, its siblings after it
 * and everything below them pg_sanitize()d in mode, in place: for a JSON
 * view about to be printed as text.  Returns 0, or -1 when out of memory
 * (some strings are replaced then, the tree stays whole). */
int pg_json_sanitize_strings(cJSON *item, enum pg_san_mode mode);

#endif
