/* SPDX-License-Identifier: MIT */
/*
 * The subset of the mempool_perf harness: reading it from the job spec,
 * and what it will print (lines, keys, time).  The rewrite is harness.c.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "jobspec.h"
#include "json.h"
#include "profile.h"

/* The job spec comes from a profile, so the limits are the profile's. */
#define CORES_MAX (PROFILE_MAX_LCORE + 1)
#define BULK_MAX 512
#define KEEP_MAX 32768
#define TIME_S_MAX 60

void harness_subset_default(struct harness_subset *s)
{
	memset(s, 0, sizeof(*s));
	s->cores[0] = 1;
	s->n_cores = 1;
	s->cache[0] = 0;
	s->cache[1] = 512;
	s->n_cache = 2;
	s->bulk[0] = 32;
	s->n_bulk = 1;
	s->keep[0] = 128;
	s->n_keep = 1;
	s->constant_n[0] = 0;
	s->n_constant_n = 1;
	s->time_s = 1;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* One list member: absent leaves *out alone; present replaces it. */
static int get_list(const cJSON *obj, const char *key, unsigned min, unsigned max,
		    size_t cap, unsigned *out, size_t *n, struct pg_err *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key), *item;
	unsigned vals[HARNESS_LIST_MAX];
	size_t i = 0;

	if (!arr)
		return 0;
	if (!cJSON_IsArray(arr))
		return pg_err_set(err, PG_EINVAL, "subset.%s: expected an array, got %s", key,
				  pg_json_type_name(arr));
	if (cJSON_GetArraySize(arr) == 0)
		return pg_err_set(err, PG_EINVAL, "subset.%s: must not be empty", key);
	if ((size_t)cJSON_GetArraySize(arr) > cap)
		return pg_err_set(err, PG_EINVAL, "subset.%s: has more than %zu items", key,
				  cap);
	cJSON_ArrayForEach(item, arr) {
		double v = item->valuedouble;

		if (!cJSON_IsNumber(item))
			return pg_err_set(err, PG_EINVAL, "subset.%s[%zu]: expected an integer, "
					  "got %s", key, i, pg_json_type_name(item));
		/* Range first: only then is the cast below defined. */
		if (!(v >= min && v <= max))
			return pg_err_set(err, PG_EINVAL, "subset.%s[%zu]: %g is out of range "
					  "[%u, %u]", key, i, v, min, max);
		if (v != (double)(unsigned)v)
			return pg_err_set(err, PG_EINVAL, "subset.%s[%zu]: %g is not an integer",
					  key, i, v);
		for (size_t j = 0; j < i; j++)
			if (vals[j] == (unsigned)v)
				return pg_err_set(err, PG_EINVAL, "subset.%s[%zu]: %u is listed "
						  "twice", key, i, (unsigned)v);
		vals[i++] = (unsigned)v;
	}
	qsort(vals, i, sizeof(vals[0]), cmp_unsigned);
	memcpy(out, vals, i * sizeof(vals[0]));
	*n = i;
	return 0;
}

int harness_subset_from_json(const cJSON *subset, struct harness_subset *s,
			     struct pg_err *err)
{
	static const char *const keys[] = {
		JS_SUBSET_CORES, JS_SUBSET_CACHE, JS_SUBSET_BULK, JS_SUBSET_KEEP,
		JS_SUBSET_CONSTANT_N, JS_SUBSET_TIME_S, NULL
	};
	struct harness_subset t;
	int64_t time_s = 1;
	size_t configs;

	harness_subset_default(&t);
	if (subset) {
		if (!cJSON_IsObject(subset))
			return pg_err_set(err, PG_EINVAL, "subset: expected an object, got %s",
					  pg_json_type_name(subset));
		if (pg_json_check_keys(subset, keys, err) < 0) {
			pg_err_prefix(err, "subset");
			return -1;
		}
		if (get_list(subset, JS_SUBSET_CORES, 1, CORES_MAX, HARNESS_LIST_MAX, t.cores, &t.n_cores,
			     err) < 0 ||
		    get_list(subset, JS_SUBSET_CACHE, 0, 512, 2, t.cache, &t.n_cache, err) < 0 ||
		    get_list(subset, JS_SUBSET_BULK, 1, BULK_MAX, HARNESS_LIST_MAX, t.bulk, &t.n_bulk,
			     err) < 0 ||
		    get_list(subset, JS_SUBSET_KEEP, 1, KEEP_MAX, HARNESS_LIST_MAX, t.keep, &t.n_keep,
			     err) < 0 ||
		    get_list(subset, JS_SUBSET_CONSTANT_N, 0, 1, 2, t.constant_n, &t.n_constant_n,
			     err) < 0)
			return -1;
		if (pg_json_get_int(subset, JS_SUBSET_TIME_S, false, 1, TIME_S_MAX, &time_s, err) < 0) {
			pg_err_prefix(err, "subset");
			return -1;
		}
		t.time_s = (unsigned)time_s;
	}
	for (size_t i = 0; i < t.n_cache; i++)
		if (t.cache[i] != 0 && t.cache[i] != 512)
			return pg_err_set(err, PG_EINVAL, "subset.cache: %u is not 0 (the pool "
					  "without cache) or 512 (the pool with cache)", t.cache[i]);
	/* Lists are sorted now, so report values rather than indexes. */
	for (size_t i = 0; i < t.n_keep; i++) {
		for (size_t j = 0; j < t.n_bulk; j++) {
			if (t.keep[i] < t.bulk[j])
				return pg_err_set(err, PG_EINVAL, "subset.keep: %u is less than bulk "
						  "%u (the test skips such configurations)",
						  t.keep[i], t.bulk[j]);
			if (t.keep[i] % t.bulk[j] != 0)
				return pg_err_set(err, PG_EINVAL, "subset.keep: %u is not a multiple "
						  "of bulk %u (the test gets and puts n_keep "
						  "objects in whole bulks)", t.keep[i], t.bulk[j]);
		}
	}
	configs = t.n_cores * t.n_cache * t.n_bulk * t.n_keep * t.n_constant_n;
	if (configs > PROFILE_MAX_SUBSET)
		return pg_err_set(err, PG_EINVAL, "subset: selects %zu configurations; at most %d",
				  configs, PROFILE_MAX_SUBSET);
	*s = t;
	return 0;
}

static int add_list(struct pg_buf *out, const char *name, const unsigned *v, size_t n)
{
	if (pg_buf_printf(out, "%s%s=", out->len ? " " : "", name) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (pg_buf_printf(out, "%s%u", i ? "," : "", v[i]) < 0)
			return -1;
	return 0;
}

int harness_subset_describe(const struct harness_subset *s, struct pg_buf *out)
{
	struct pg_buf b = PG_BUF_INIT(1024);
	int rc = -1;

	if (add_list(&b, "cores", s->cores, s->n_cores) < 0 ||
	    add_list(&b, "cache", s->cache, s->n_cache) < 0 ||
	    add_list(&b, "bulk", s->bulk, s->n_bulk) < 0 ||
	    add_list(&b, "keep", s->keep, s->n_keep) < 0 ||
	    add_list(&b, "constant_n", s->constant_n, s->n_constant_n) < 0 ||
	    pg_buf_printf(&b, " time_s=%u", s->time_s) < 0)
		goto out;
	rc = pg_buf_add(out, b.data, b.len);
out:
	pg_buf_release(&b);
	return rc;
}

size_t harness_subset_lines(const struct harness_subset *s)
{
	return s->n_cache * s->n_cores * s->n_bulk * s->n_keep * s->n_constant_n;
}

unsigned long harness_subset_estimate_s(const struct harness_subset *s)
{
	return (unsigned long)harness_subset_lines(s) * s->time_s + HARNESS_SETUP_S;
}

int harness_subset_key(const struct harness_subset *s, size_t i, char *buf, size_t len)
{
	size_t r = i, c, cache, cores, bulk, keep;

	if (i >= harness_subset_lines(s))
		return -1;
	/* The print order, innermost last: section, cores, bulk, keep, constant_n. */
	c = r % s->n_constant_n;
	r /= s->n_constant_n;
	keep = r % s->n_keep;
	r /= s->n_keep;
	bulk = r % s->n_bulk;
	r /= s->n_bulk;
	cores = r % s->n_cores;
	cache = r / s->n_cores;
	return pg_fmt(buf, len, "mempool.%s.cores%u.keep%u.get%u.put%u.const%u",
		      s->cache[cache] ? "cache" : "nocache", s->cores[cores], s->keep[keep],
		      s->bulk[bulk], s->bulk[bulk], s->constant_n[c]) < 0 ? -1 : 0;
}
