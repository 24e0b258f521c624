/* SPDX-License-Identifier: MIT */
#ifndef PG_PROFILE_INT_H
#define PG_PROFILE_INT_H

/*
 * Private to the profile loader (profile_read.c, profile_load.c,
 * profile_bench.c): reading JSON fields with errors in the one form
 * "FILE: PATH: what is wrong", where PATH is the field path such as
 * "contexts.foo.alpha" or "benchmarks.mp.args[3]".
 *
 * The readers wrap the pg_json getters: they return 1 when the field was
 * found and stored, 0 when it is absent and not required (*out untouched,
 * so callers preset defaults) and -1 after setting ld->err.  "parent" is
 * the path of the object that holds the field ("" at the top level).
 */

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "profile.h"

#define PROFILE_PATH_LEN 512		/* a field path in a message */
#define PROFILE_TEXT_MAX 4096		/* an argument, option value, URL, pattern */
#define PROFILE_DESC_MAX 1024		/* a description */
#define PROFILE_VALUE_MAX 255		/* a label value, branch, tag or reference */
#define PROFILE_SUBSET_LIST_MAX 16	/* values per mempool subset list */

struct profile_loader {
	struct profile_set *ps;
	const char *file;		/* named by every message */
	struct pg_err *err;
};

/* Paths for messages: "parent.key" and "parent[i]", cut visibly at
 * PROFILE_PATH_LEN; control characters become '?'. */
void profile_path_join(char *dst, const char *parent, const char *key);
void profile_path_index(char *dst, const char *parent, size_t i);

/* Set ld->err (PG_EINVAL) to "FILE: PATH: message" ("FILE: message" when
 * path is NULL or empty).  All return -1. */
int profile_fail(struct profile_loader *ld, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int profile_fail_at(struct profile_loader *ld, const char *parent, const char *key,
		    const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int profile_fail_idx(struct profile_loader *ld, const char *parent, size_t i,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* PG_ENOMEM naming the file; returns -1. */
int profile_oom(struct profile_loader *ld);

/* "a, b or c" into dst (cut to len) for messages. */
void profile_join_names(char *dst, size_t len, const char *const *names);

/* ASCII classes, whatever the locale. */
bool profile_is_alnum(char c);
bool profile_is_digit(char c);

/* Text without control characters, at most max bytes, and not empty when
 * nonempty.  Returns 0 or -1. */
int profile_check_text(struct profile_loader *ld, const char *path, const char *s,
		       size_t max, bool nonempty);
/* Names: [A-Za-z0-9_.-]+, 1..max bytes. */
bool profile_valid_name(const char *s, size_t max);
int profile_check_name(struct profile_loader *ld, const char *path, const char *name);
/* Branch names: a safe subset of git-check-ref-format(1). */
bool profile_valid_branch(const char *s);
int profile_check_branch(struct profile_loader *ld, const char *path, const char *s);

/* Typed fields (see the top of this file for the return values). */
int profile_get_string(struct profile_loader *ld, const char *parent, const cJSON *obj,
		       const char *key, bool required, const char **out);
/* A string passing profile_check_text(..., max, required), copied. */
int profile_get_text(struct profile_loader *ld, const char *parent, const cJSON *obj,
		     const char *key, bool required, size_t max, char **out);
int profile_get_int(struct profile_loader *ld, const char *parent, const cJSON *obj,
		    const char *key, bool required, int min, int max, int *out);
/* An optional number in the half-open range (lo, hi]. */
int profile_get_number(struct profile_loader *ld, const char *parent, const cJSON *obj,
		       const char *key, double lo, double hi, double *out);
int profile_get_bool(struct profile_loader *ld, const char *parent, const cJSON *obj,
		     const char *key, bool required, bool *out);
int profile_get_object(struct profile_loader *ld, const char *parent, const cJSON *obj,
		       const char *key, bool required, const cJSON **out);
int profile_get_array(struct profile_loader *ld, const char *parent, const cJSON *obj,
		      const char *key, bool required, const cJSON **out);
/* One of names[] (NULL-ended); *out is its index. */
int profile_get_enum(struct profile_loader *ld, const char *parent, const cJSON *obj,
		     const char *key, bool required, const char *const *names, int *out);

/* Refuse repeated keys (cJSON keeps them, lookups would take the first)
 * and objects of more than PROFILE_MAX_ITEMS members.  Returns 0 or -1. */
int profile_check_unique_keys(struct profile_loader *ld, const char *path,
			      const cJSON *obj);
/* Refuse a key not in allowed[] (NULL-ended) with "PATH.key: what", then
 * check_unique_keys.  Returns 0 or -1. */
int profile_check_object(struct profile_loader *ld, const char *path, const cJSON *obj,
			 const char *const *allowed, const char *what);

typedef int (*profile_check_fn)(struct profile_loader *ld, const char *path, const char *s);

/* A list of strings, each passing check(), copied into *out (*n entries,
 * set before the copies so that a failure leaves it freeable). */
int profile_get_strlist(struct profile_loader *ld, const char *parent, const cJSON *obj,
			const char *key, bool required, bool nonempty, bool unique,
			profile_check_fn check, char ***out, size_t *n);
/* A non-empty list of distinct integers in [min, max] replacing the
 * default in *out (freed). */
int profile_get_uintlist(struct profile_loader *ld, const char *parent, const cJSON *obj,
			 const char *key, unsigned min, unsigned max,
			 unsigned **out, size_t *n);

enum profile_kv_kind {
	PROFILE_KV_LABEL,	/* name keys, non-empty values */
	PROFILE_KV_ENV,		/* environment variable names */
	PROFILE_KV_MESON,	/* meson option names, but buildtype and c_args */
};

/* An object of strings, sorted by key into *out. */
int profile_get_kvmap(struct profile_loader *ld, const char *parent, const cJSON *obj,
		      const char *key, bool required, enum profile_kv_kind kind,
		      struct profile_kv **out, size_t *n);

/* realloc arr (n entries of size bytes) to n + 1 with the new one zeroed;
 * NULL when out of memory (arr is then untouched). */
void *profile_grow(void *arr, size_t n, size_t size);

/* Before adding entry `name` to a section array (whose structs start with
 * `char *name` and hold `const char *file` at file_off): refuse a full
 * section and a name defined already, naming the other file. */
int profile_check_new_entry(struct profile_loader *ld, const char *section,
			    const char *path, const char *name, const void *base,
			    size_t n, size_t size, size_t file_off);

/* profile_bench.c: one entry of the "benchmarks" section. */
int profile_load_benchmark(struct profile_loader *ld, const char *path, const char *name,
			   const cJSON *obj);

/* profile_ports.c: a host class's "ports" and a benchmark's "fwd" (each
 * returns as the readers above: 1 read, 0 absent, -1), and their checks. */
int profile_load_ports(struct profile_loader *ld, const char *path, const cJSON *obj,
		       struct profile_host_class *hc);
int profile_load_fwd(struct profile_loader *ld, const char *path, const cJSON *obj,
		     struct profile_benchmark *b);
/* A "fwd" benchmark: parser testpmd, stdin hold, and args without what the
 * ports and "fwd" set.  0 or -1. */
int profile_check_fwd_args(struct profile_loader *ld, const char *path,
			   const struct profile_benchmark *b);
/* A "fwd" benchmark run by a context of class hc (path[i] names it):
 * the class has ports and lcores enough.  0 or -1. */
int profile_check_fwd_class(struct profile_loader *ld, const char *path, size_t i,
			    const struct profile_benchmark *b,
			    const struct profile_host_class *hc);
/* Whether pattern matches a sized key (profile_fwd_key()) of one of b's
 * frame sizes, for keys[] and "portN." port_keys[] (NULL-ended). */
bool profile_fwd_gate_can_match(const struct profile_benchmark *b, const char *pattern,
				const char *const *keys, const char *const *port_keys);
/* The printout's "ports" / "fwd" (nothing when absent).  0 or -1. */
int profile_print_ports(cJSON *o, const struct profile_host_class *hc);
int profile_print_fwd(cJSON *o, const struct profile_benchmark *b);
void profile_free_ports(struct profile_host_class *hc);

#endif
