/* SPDX-License-Identifier: MIT */
/* Build slots: naming, LRU eviction, the index and the size: see slots.h. */
#include "slots.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "buf.h"
#include "fmt.h"
#include "fsutil.h"
#include "json.h"
#include "log.h"
#include "timeutil.h"
#include "vec.h"

#define COMP "slots"
#define SLOTS_INDEX_FORMAT 1
#define SLOTS_HASH_HEX 12

static const char *const slot_sides[] = { "base", "patched" };

static bool digits(const char *s, size_t *n)
{
	*n = strspn(s, "0123456789");
	return *n > 0;
}

int slot_series(const char *branch, char *out, size_t size)
{
	const char *p = branch;
	size_t maj, min;

	if (!branch || !branch[0])
		return -1;
	if (*p == 'v')
		p++;
	/* MAJOR.MINOR, then the end or a '.' (a point release, an rc of it). */
	if (digits(p, &maj) && p[maj] == '.' && digits(p + maj + 1, &min) &&
	    (p[maj + 1 + min] == '\0' || p[maj + 1 + min] == '.'))
		return pg_fmt(out, size, "%.*s", (int)(maj + 1 + min), p) < 0 ? -1 : 0;
	return pg_fmt(out, size, "%s", branch) < 0 ? -1 : 0;
}

/* FNV-1a over a string and its terminating NUL, so that ("ab", "c") and
 * ("a", "bc") differ. */
static uint64_t fnv_add(uint64_t h, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	do {
		h ^= *p;
		h *= 0x100000001b3ULL;
	} while (*p++);
	return h;
}

/* s cut to max bytes with characters outside [A-Za-z0-9._+-] as '_'
 * appended to out; a leading '.' or '-' (which ws_name_ok() refuses) too.
 * Returns 0 or -1 (out's cap or memory). */
static int name_part(struct pg_buf *out, const char *s, size_t max, bool first)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' || c == '-';

		if (first && i == 0 && (c == '.' || c == '-'))
			ok = false;
		if (pg_buf_printf(out, "%c", ok ? c : '_') < 0)
			return -1;
	}
	return 0;
}

static int opt_cmp(const void *a, const void *b)
{
	const cJSON *const *x = a, *const *y = b;

	return strcmp((*x)->string, (*y)->string);
}

int slot_name(const char *tree, const char *branch, const char *build_mode,
	      const cJSON *build, char *out, size_t size, struct pg_err *err)
{
	char series[256];
	const cJSON *opts, *it, *bt, *ca;
	const cJSON **sorted = NULL;
	struct pg_buf name = PG_BUF_INIT(SLOTS_NAME_MAX + 1);
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t n = 0, i = 0;
	int rc = -1;

	if (!tree || !tree[0] || !build_mode || !build_mode[0] ||
	    slot_series(branch, series, sizeof(series)) < 0) {
		pg_err_set(err, PG_EINVAL, "build slot: empty or overlong tree, branch or build mode");
		goto out;
	}
	bt = cJSON_GetObjectItemCaseSensitive(build, "buildtype");
	ca = cJSON_GetObjectItemCaseSensitive(build, "c_args");
	opts = cJSON_GetObjectItemCaseSensitive(build, "meson_options");
	if (!cJSON_IsString(bt) || (ca && !cJSON_IsString(ca)) || (opts && !cJSON_IsObject(opts))) {
		pg_err_set(err, PG_EINVAL, "build slot: the job's build object lacks a buildtype "
			   "or has a value that is not a string");
		goto out;
	}
	cJSON_ArrayForEach(it, opts)
		n++;
	if (!(sorted = calloc(n ? n : 1, sizeof(*sorted)))) {
		pg_err_set(err, PG_ENOMEM, "build slot: out of memory");
		goto out;
	}
	cJSON_ArrayForEach(it, opts) {
		if (!cJSON_IsString(it)) {
			pg_err_set(err, PG_EINVAL, "build slot: meson option '%.64s' is not a string",
				   it->string);
			goto out;
		}
		sorted[i++] = it;
	}
	qsort(sorted, n, sizeof(*sorted), opt_cmp);
	h = fnv_add(h, tree);
	h = fnv_add(h, series);
	h = fnv_add(h, build_mode);
	h = fnv_add(h, bt->valuestring);
	/* "c_args" absent and empty are the same build (build.h gives meson
	 * an empty value either way). */
	h = fnv_add(h, ca ? ca->valuestring : "");
	for (i = 0; i < n; i++) {
		h = fnv_add(h, sorted[i]->string);
		h = fnv_add(h, sorted[i]->valuestring);
	}
	if (name_part(&name, series, SLOTS_SERIES_SHOWN, true) < 0 ||
	    pg_buf_printf(&name, ".") < 0 ||
	    name_part(&name, build_mode, SLOTS_MODE_SHOWN, false) < 0 ||
	    pg_buf_printf(&name, ".%0*llx", SLOTS_HASH_HEX,
			  (unsigned long long)(h & ((1ULL << (4 * SLOTS_HASH_HEX)) - 1))) < 0 ||
	    pg_fmt(out, size, "%s", pg_buf_str(&name)) < 0 || !ws_name_ok(out)) {
		pg_err_set(err, PG_EINVAL, "build slot: no valid name for '%.64s'",
			   pg_buf_str(&name));
		goto out;
	}
	rc = 0;
out:
	free(sorted);
	pg_buf_release(&name);
	return rc;
}

void slot_index_release(struct slot_index *ix)
{
	free(ix->v);
	memset(ix, 0, sizeof(*ix));
}

static int copy_name(char *dst, const cJSON *o, const char *key, struct pg_err *err)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(s) || !ws_name_ok(s->valuestring))
		return pg_err_set(err, PG_EINVAL, "'%s' missing or not a valid name", key);
	memcpy(dst, s->valuestring, strlen(s->valuestring) + 1);
	return 0;
}

int slot_index_parse(const char *text, size_t len, struct slot_index *ix, struct pg_err *err)
{
	cJSON *root = NULL;
	const cJSON *slots, *it;
	int64_t seq = 0, fmt = 0;
	size_t n = 0;
	int rc = -1;

	memset(ix, 0, sizeof(*ix));
	if (len == 0)
		return 0;
	if (pg_json_parse(text, len, &root, err) < 0)
		goto out;
	if (!cJSON_IsObject(root) ||
	    pg_json_get_int(root, "format", true, SLOTS_INDEX_FORMAT, SLOTS_INDEX_FORMAT, &fmt,
			    err) < 0 ||
	    pg_json_get_int(root, "seq", true, 0, INT64_MAX, &seq, err) < 0 ||
	    pg_json_get_array(root, "slots", true, &slots, err) < 0) {
		if (err->code == PG_OK)
			pg_err_set(err, PG_EINVAL, "not an object");
		goto out;
	}
	ix->seq = (uint64_t)seq;
	cJSON_ArrayForEach(it, slots)
		n++;
	if (n > (size_t)SLOTS_MAX_LIMIT * 4) {
		pg_err_set(err, PG_EINVAL, "slots: more than %d", SLOTS_MAX_LIMIT * 4);
		goto out;
	}
	if (!(ix->v = calloc(n ? n : 1, sizeof(*ix->v)))) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(it, slots) {
		struct slot_entry *e = &ix->v[ix->n];
		int64_t last = 0, at = 0;

		if (!cJSON_IsObject(it) || copy_name(e->tree, it, "tree", err) < 0 ||
		    copy_name(e->name, it, "name", err) < 0 ||
		    copy_name(e->dir, it, "dir", err) < 0 ||
		    pg_json_get_int(it, "last_use", true, 0, seq, &last, err) < 0 ||
		    pg_json_get_int(it, "used_at", false, 0, INT64_MAX, &at, err) < 0) {
			if (err->code == PG_OK)
				pg_err_set(err, PG_EINVAL, "not an object");
			pg_err_prefix(err, "slots[%zu]", ix->n);
			goto out;
		}
		e->last_use = (uint64_t)last;
		e->used_at = at;
		ix->n++;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	if (rc < 0) {
		slot_index_release(ix);
		pg_err_prefix(err, "build slot index");
	}
	return rc;
}

cJSON *slot_index_to_json(const struct slot_index *ix)
{
	cJSON *root = cJSON_CreateObject(), *arr, *o;

	if (!root || !cJSON_AddNumberToObject(root, "format", SLOTS_INDEX_FORMAT) ||
	    !cJSON_AddNumberToObject(root, "seq", (double)ix->seq) ||
	    !(arr = cJSON_AddArrayToObject(root, "slots")))
		goto fail;
	for (size_t i = 0; i < ix->n; i++) {
		const struct slot_entry *e = &ix->v[i];

		if (!(o = cJSON_CreateObject()) || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			goto fail;
		}
		if (!cJSON_AddStringToObject(o, "tree", e->tree) ||
		    !cJSON_AddStringToObject(o, "name", e->name) ||
		    !cJSON_AddStringToObject(o, "dir", e->dir) ||
		    !cJSON_AddNumberToObject(o, "last_use", (double)e->last_use) ||
		    !cJSON_AddNumberToObject(o, "used_at", (double)e->used_at))
			goto fail;
	}
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

long slot_lru_victim(const struct slot_index *ix, long in_use)
{
	long best = -1;

	for (size_t i = 0; i < ix->n; i++) {
		if ((long)i == in_use)
			continue;
		if (best < 0 || ix->v[i].last_use < ix->v[best].last_use)
			best = (long)i;
	}
	return best;
}

void slot_use_release(struct slot_use *u)
{
	free(u->evicted);
	u->evicted = NULL;
	u->n_evicted = 0;
}

int slot_plan(struct slot_index *ix, const char *tree, const char *name,
	      const char *legacy_dir, bool legacy_present, int max_slots, int64_t now_s,
	      struct slot_use *u, struct pg_err *err)
{
	struct slot_entry *e = NULL;
	long cur = -1;
	void *p;

	memset(u, 0, sizeof(*u));
	if (!ws_name_ok(tree) || !ws_name_ok(name) || strlen(name) > SLOTS_NAME_MAX ||
	    (legacy_dir && !ws_name_ok(legacy_dir)) || max_slots < 1)
		return pg_err_set(err, PG_EINVAL, "build slot: bad tree, slot name or bound");
	u->max_slots = max_slots;
	for (size_t i = 0; i < ix->n; i++)
		if (strcmp(ix->v[i].tree, tree) == 0 && strcmp(ix->v[i].name, name) == 0)
			cur = (long)i;
	if (cur >= 0) {
		u->state = "reused";
	} else {
		bool taken = false;

		for (size_t i = 0; legacy_dir && i < ix->n; i++)
			if (strcmp(ix->v[i].tree, tree) == 0 && strcmp(ix->v[i].dir, legacy_dir) == 0)
				taken = true;
		if (!(p = pg_realloc_array(ix->v, ix->n + 1, sizeof(*ix->v))))
			return pg_err_set(err, PG_ENOMEM, "build slot: out of memory");
		ix->v = p;
		cur = (long)ix->n++;
		e = &ix->v[cur];
		memset(e, 0, sizeof(*e));
		memcpy(e->tree, tree, strlen(tree) + 1);
		memcpy(e->name, name, strlen(name) + 1);
		if (legacy_dir && legacy_present && !taken) {
			u->state = "adopted";
			memcpy(e->dir, legacy_dir, strlen(legacy_dir) + 1);
		} else {
			u->state = "new";
			memcpy(e->dir, name, strlen(name) + 1);
		}
	}
	e = &ix->v[cur];
	e->last_use = ++ix->seq;
	e->used_at = now_s;
	memcpy(u->name, e->name, sizeof(u->name));
	memcpy(u->dir, e->dir, sizeof(u->dir));
	while (ix->n > (size_t)max_slots) {
		long v = slot_lru_victim(ix, cur);

		if (v < 0)
			break;
		if (!(p = pg_realloc_array(u->evicted, u->n_evicted + 1, sizeof(*u->evicted)))) {
			slot_use_release(u);
			return pg_err_set(err, PG_ENOMEM, "build slot: out of memory");
		}
		u->evicted = p;
		u->evicted[u->n_evicted++] = ix->v[v];
		memmove(&ix->v[v], &ix->v[v + 1], (ix->n - (size_t)v - 1) * sizeof(*ix->v));
		ix->n--;
		if (v < cur)
			cur--;
	}
	u->n_slots = ix->n;
	return 0;
}

/* Remove both sides of an evicted slot: what fails is logged, not fatal
 * (the job's own slot is whole; a leftover only takes disk). */
static void remove_slot(const char *work_dir, const struct slot_entry *e)
{
	for (size_t s = 0; s < sizeof(slot_sides) / sizeof(slot_sides[0]); s++) {
		char path[PATH_MAX];
		struct pg_err err = PG_ERR_INIT;

		if (pg_fmt(path, sizeof(path), "%s/slots/%s/%s-%s", work_dir, e->tree, e->dir,
			   slot_sides[s]) < 0) {
			pg_log_warn(COMP, "evict %s/%s: path too long", e->tree, e->name);
			continue;
		}
		if (build_remove_tree(path, &err) < 0)
			pg_log_warn(COMP, "evict %s/%s: %s", e->tree, e->name, err.msg);
	}
}

/* The index, or an empty one when it is missing; an unreadable one is set
 * aside (index.json.bad) so that one bad write does not stop every job. */
static int load_index(const char *path, struct slot_index *ix, struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(SLOTS_INDEX_MAX);
	struct pg_err perr = PG_ERR_INIT;
	char bad[PATH_MAX];
	int rc = -1;

	memset(ix, 0, sizeof(*ix));
	if (access(path, F_OK) < 0) {
		rc = 0;		/* no index yet: a new work directory, or one from
				 * before slots (its directories are adopted) */
		goto out;
	}
	if (pg_read_file(path, &b, err) < 0)
		goto out;
	if (slot_index_parse(pg_buf_str(&b), b.len, ix, &perr) < 0) {
		if (perr.code == PG_ENOMEM) {
			*err = perr;
			goto out;
		}
		if (pg_fmt(bad, sizeof(bad), "%s.bad", path) < 0 || rename(path, bad) < 0) {
			pg_err_errno(err, "set aside %s (%s)", path, perr.msg);
			goto out;
		}
		pg_log_warn(COMP, "%s: %s: set aside as %s, starting a new index", path, perr.msg,
			    bad);
	}
	rc = 0;
out:
	pg_buf_release(&b);
	return rc;
}

int slot_acquire(const char *work_dir, const char *tree, const char *name,
		 const char *build_mode, int max_slots, struct slot_use *u, struct pg_err *err)
{
	struct slot_index ix = { 0 };
	char path[PATH_MAX], legacy[PATH_MAX];
	struct stat st;
	bool legacy_present = false;
	cJSON *json = NULL;
	char *text = NULL;
	int rc = -1;

	memset(u, 0, sizeof(*u));
	if (pg_fmt(path, sizeof(path), "%s/slots/index.json", work_dir) < 0 ||
	    pg_fmt(legacy, sizeof(legacy), "%s/slots/%s/%s-base", work_dir, tree,
		   build_mode) < 0) {
		pg_err_set(err, PG_EINVAL, "work_dir: path too long");
		goto out;
	}
	if (pg_mkdir_parent(path, 0755, err) < 0 || load_index(path, &ix, err) < 0)
		goto out;
	legacy_present = ws_name_ok(build_mode) && lstat(legacy, &st) == 0 && S_ISDIR(st.st_mode);
	if (slot_plan(&ix, tree, name, ws_name_ok(build_mode) ? build_mode : NULL,
		      legacy_present, max_slots, pg_time_wall_ms() / 1000, u, err) < 0)
		goto out;
	for (size_t i = 0; i < u->n_evicted; i++)
		remove_slot(work_dir, &u->evicted[i]);
	if (!(json = slot_index_to_json(&ix)) || !(text = pg_json_print(json, true))) {
		pg_err_set(err, PG_ENOMEM, "build slot index: out of memory");
		goto out;
	}
	if (pg_write_file_atomic(path, text, strlen(text), 0644, err) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0)
		slot_use_release(u);
	free(text);
	cJSON_Delete(json);
	slot_index_release(&ix);
	return rc;
}

int slot_total_size(const char *work_dir, uint64_t *bytes, bool *complete,
		    struct pg_err *err)
{
	char path[PATH_MAX];

	if (pg_fmt(path, sizeof(path), "%s/slots", work_dir) < 0)
		return pg_err_set(err, PG_EINVAL, "work_dir: path too long");
	return build_tree_size(path, SLOTS_SIZE_BUDGET_MS, bytes, complete, err);
}
