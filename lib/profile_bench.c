/* SPDX-License-Identifier: MIT */
/*
 * The "benchmarks" section: how a DPDK program runs, which parser reads
 * its output, and which of the parser's result keys gate the verdict.
 * Gate patterns are checked against the keys the parser can produce (the
 * naming is in profile.h), so that a typo cannot silently gate nothing.
 */
#include "profile_int.h"

#include <fnmatch.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const char *const parser_names[] = { "mempool_perf", "testpmd", NULL };
static const char *const stdin_names[] = { "null", "hold", NULL };
static const char *const mode_names[] = { "subset", "full", NULL };

/* What the testpmd parser can produce (profile.h), for checking gates. */
static const char *const testpmd_keys[] = {
	"fwd.rx_pps", "fwd.tx_pps", "fwd.rx_packets", "fwd.tx_packets",
	"fwd.rx_dropped", "fwd.tx_dropped", "fwd.cycles_per_pkt", NULL
};
static const char *const testpmd_port_keys[] = {
	"rx_pps", "tx_pps", "rx_bps", "tx_bps", NULL
};

static int check_arg(struct profile_loader *ld, const char *path, const char *s)
{
	return profile_check_text(ld, path, s, PROFILE_TEXT_MAX, false);
}

static int check_gate(struct profile_loader *ld, const char *path, const char *s)
{
	if (profile_check_text(ld, path, s, PROFILE_VALUE_MAX, true) < 0)
		return -1;
	for (const char *p = s; *p; p++)
		if (!profile_is_alnum(*p) && !strchr("_.-*?[]!", *p))
			return profile_fail(ld, path, "'%s' is not a result key or pattern "
					    "of letters, digits and _.-*?[]!", s);
	return 0;
}

static int load_subset(struct profile_loader *ld, const char *path, const cJSON *obj,
		       struct profile_mempool_subset *s)
{
	static const char *const keys[] = {
		"cores", "cache", "bulk", "keep", "constant_n", "time_s", NULL
	};
	static const unsigned def_cache[] = { 0, 512 };
	const cJSON *sub = NULL;
	char spath[PROFILE_PATH_LEN], ipath[PROFILE_PATH_LEN];
	size_t configs;
	int time_s = 1, rc;

	/* The defaults first, so that a partial subset object inherits them. */
	s->cores = calloc(1, sizeof(unsigned));
	s->cache = calloc(2, sizeof(unsigned));
	s->bulk = calloc(1, sizeof(unsigned));
	s->keep = calloc(1, sizeof(unsigned));
	s->constant_n = calloc(1, sizeof(unsigned));
	if (!s->cores || !s->cache || !s->bulk || !s->keep || !s->constant_n)
		return profile_oom(ld);
	s->cores[0] = 1;
	memcpy(s->cache, def_cache, sizeof(def_cache));
	s->bulk[0] = 32;
	s->keep[0] = 128;
	s->constant_n[0] = 0;
	s->n_cores = s->n_bulk = s->n_keep = s->n_constant_n = 1;
	s->n_cache = 2;
	s->time_s = 1;
	rc = profile_get_object(ld, path, obj, "subset", false, &sub);
	if (rc <= 0)
		return rc;
	profile_path_join(spath, path, "subset");
	if (profile_check_object(ld, spath, sub, keys, "unknown field") < 0 ||
	    profile_get_uintlist(ld, spath, sub, "cores", 1, PROFILE_MAX_LCORE + 1, &s->cores,
				 &s->n_cores) < 0 ||
	    profile_get_uintlist(ld, spath, sub, "cache", 0, 512, &s->cache, &s->n_cache) < 0 ||
	    profile_get_uintlist(ld, spath, sub, "bulk", 1, 512, &s->bulk, &s->n_bulk) < 0 ||
	    profile_get_uintlist(ld, spath, sub, "keep", 1, 32768, &s->keep, &s->n_keep) < 0 ||
	    profile_get_uintlist(ld, spath, sub, "constant_n", 0, 1, &s->constant_n,
				 &s->n_constant_n) < 0 ||
	    profile_get_int(ld, spath, sub, "time_s", false, 1, 60, &time_s) < 0)
		return -1;
	s->time_s = (unsigned)time_s;
	profile_path_join(ipath, spath, "cache");
	for (size_t i = 0; i < s->n_cache; i++)
		if (s->cache[i] != 0 && s->cache[i] != 512)
			return profile_fail_idx(ld, ipath, i, "%u is not 0 (the pool without "
						"cache) or 512 (the pool with cache)", s->cache[i]);
	profile_path_join(ipath, spath, "keep");
	for (size_t i = 0; i < s->n_keep; i++) {
		for (size_t j = 0; j < s->n_bulk; j++) {
			if (s->keep[i] >= s->bulk[j])
				continue;
			return profile_fail_idx(ld, ipath, i, "%u is less than bulk %u (the test "
						"skips such configurations)", s->keep[i],
						s->bulk[j]);
		}
	}
	configs = s->n_cores * s->n_cache * s->n_bulk * s->n_keep * s->n_constant_n;
	if (configs > PROFILE_MAX_SUBSET)
		return profile_fail(ld, spath, "selects %zu configurations; at most %d", configs,
				    PROFILE_MAX_SUBSET);
	return 1;
}

/* Whether pattern can match a key that b produces (the naming in profile.h). */
static bool gate_can_match(const struct profile_benchmark *b, const char *pattern)
{
	char key[128];
	const struct profile_mempool_subset *s = &b->subset;
	size_t lit, total;
	int n;

	if (b->has_fwd)
		return profile_fwd_gate_can_match(b, pattern, testpmd_keys, testpmd_port_keys);
	if (b->parser == PROFILE_PARSER_TESTPMD) {
		for (size_t i = 0; testpmd_keys[i]; i++)
			if (fnmatch(pattern, testpmd_keys[i], 0) == 0)
				return true;
		for (unsigned port = 0; port < 32; port++) {
			for (size_t i = 0; testpmd_port_keys[i]; i++) {
				n = snprintf(key, sizeof(key), "port%u.%s", port,
					     testpmd_port_keys[i]);
				if (n > 0 && (size_t)n < sizeof(key) &&
				    fnmatch(pattern, key, 0) == 0)
					return true;
			}
		}
		return false;
	}
	if (b->mode == PROFILE_MODE_FULL) {
		/* Full-run keys depend on the DPDK version: check the prefix. */
		lit = strcspn(pattern, "*?[");
		return strncmp(pattern, "mempool.", lit < 8 ? lit : 8) == 0;
	}
	/* Every configuration of the subset, one index decoded per list. */
	total = s->n_cache * s->n_cores * s->n_keep * s->n_bulk * s->n_constant_n;
	for (size_t i = 0; i < total; i++) {
		size_t r = i;
		unsigned cache = s->cache[r % s->n_cache];
		unsigned cores = s->cores[(r /= s->n_cache) % s->n_cores];
		unsigned keep = s->keep[(r /= s->n_cores) % s->n_keep];
		unsigned bulk = s->bulk[(r /= s->n_keep) % s->n_bulk];
		unsigned cn = s->constant_n[(r / s->n_bulk) % s->n_constant_n];

		n = snprintf(key, sizeof(key), "mempool.%s.cores%u.keep%u.get%u.put%u.const%u",
			     cache ? "cache" : "nocache", cores, keep, bulk, bulk, cn);
		if (n > 0 && (size_t)n < sizeof(key) && fnmatch(pattern, key, 0) == 0)
			return true;
	}
	return false;
}

static int check_benchmark(struct profile_loader *ld, const char *path,
			   const struct profile_benchmark *b, bool has_mode, bool has_subset)
{
	char apath[PROFILE_PATH_LEN], gpath[PROFILE_PATH_LEN], msg[256];
	bool mempool = b->parser == PROFILE_PARSER_MEMPOOL_PERF;

	if (!mempool && has_mode)
		return profile_fail_at(ld, path, "mode", "only the mempool_perf parser has modes");
	if (has_subset && (!mempool || b->mode != PROFILE_MODE_SUBSET))
		return profile_fail_at(ld, path, "subset",
				       "only for parser mempool_perf in mode \"subset\"");
	if (b->stop_after_lines && (!mempool || b->mode != PROFILE_MODE_FULL))
		return profile_fail_at(ld, path, "stop_after_lines", "only for parser mempool_perf "
				       "in mode \"full\" (it stops the unmodified test)");
	if (b->stdin_mode == PROFILE_STDIN_HOLD && !b->duration_s)
		return profile_fail_at(ld, path, "stdin",
				       "\"hold\" needs duration_s (how long to hold it)");
	if (b->duration_s && b->duration_s >= b->timeout_s)
		return profile_fail_at(ld, path, "duration_s", "%d is not less than timeout_s %d",
				       b->duration_s, b->timeout_s);
	profile_path_join(apath, path, "args");
	for (size_t i = 0; i < b->n_args; i++) {
		bool uses_duration = false;

		if (profile_arg_check(b->args[i], &uses_duration, msg, sizeof(msg)) < 0)
			return profile_fail_idx(ld, apath, i, "%s", msg);
		if (uses_duration && !b->duration_s)
			return profile_fail_idx(ld, apath, i,
						"{duration_s} needs the duration_s field");
	}
	profile_path_join(gpath, path, "gate");
	for (size_t i = 0; i < b->n_gate; i++) {
		if (gate_can_match(b, b->gate[i]))
			continue;
		if (b->has_fwd)
			return profile_fail_idx(ld, gpath, i,
						"'%s' matches no key of the testpmd parser at "
						"the frame sizes of fwd (fwd.size%u.rx_pps, "
						"fwd.size%u.cycles_per_pkt, ...)", b->gate[i],
						b->fwd.frame_sizes[0], b->fwd.frame_sizes[0]);
		if (b->parser == PROFILE_PARSER_TESTPMD)
			return profile_fail_idx(ld, gpath, i,
						"'%s' matches no key of the testpmd parser "
						"(fwd.rx_pps, fwd.tx_pps, fwd.cycles_per_pkt, ...)",
						b->gate[i]);
		if (b->mode == PROFILE_MODE_FULL)
			return profile_fail_idx(ld, gpath, i,
						"'%s' matches no key of the mempool_perf "
						"parser (they start with \"mempool.\")",
						b->gate[i]);
		return profile_fail_idx(ld, gpath, i,
					"'%s' matches no key that the subset produces "
					"(e.g. mempool.nocache.cores%u.keep%u.get%u.put%u.const%u)",
					b->gate[i], b->subset.cores[0], b->subset.keep[0],
					b->subset.bulk[0], b->subset.bulk[0],
					b->subset.constant_n[0]);
	}
	return 0;
}

static int check_program(struct profile_loader *ld, const char *path, const char *s)
{
	const char *p = s;

	if (profile_check_text(ld, path, s, PROFILE_VALUE_MAX, true) < 0)
		return -1;
	/* Relative to the build directory and inside it. */
	for (;;) {
		size_t len = strcspn(p, "/");

		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && strncmp(p, "..", 2) == 0))
			goto bad;
		for (size_t i = 0; i < len; i++)
			if (!profile_is_alnum(p[i]) && !strchr("_.-+", p[i]))
				goto bad;
		if (!p[len])
			return 0;
		p += len + 1;
	}
bad:
	return profile_fail(ld, path, "'%s' is not a program path relative to the build "
			    "directory, such as \"app/dpdk-testpmd\"", s);
}

int profile_load_benchmark(struct profile_loader *ld, const char *path, const char *name,
			   const cJSON *obj)
{
	static const char *const keys[] = {
		"description", "program", "args", "env", "stdin", "duration_s", "parser",
		"gate", "timeout_s", "stop_after_lines", "warmup_runs", "mode", "subset", "fwd",
		NULL
	};
	struct profile_set *ps = ld->ps;
	struct profile_benchmark *b;
	char ppath[PROFILE_PATH_LEN];
	const cJSON *sub = NULL;
	int parser = 0, stdin_idx = 0, mode = 0, rc_mode, rc_subset;
	void *p;

	if (profile_check_name(ld, path, name) < 0 ||
	    profile_check_new_entry(ld, "benchmarks", path, name, ps->benchmarks, ps->n_benchmarks,
				    sizeof(*b), offsetof(struct profile_benchmark, file)) < 0)
		return -1;
	p = profile_grow(ps->benchmarks, ps->n_benchmarks, sizeof(*b));
	if (!p)
		return profile_oom(ld);
	ps->benchmarks = p;
	b = &ps->benchmarks[ps->n_benchmarks++];
	b->file = ld->file;
	b->name = strdup(name);
	if (!b->name)
		return profile_oom(ld);
	profile_path_join(ppath, path, "program");
	if (profile_check_object(ld, path, obj, keys, "unknown field") < 0 ||
	    profile_get_text(ld, path, obj, "description", false, PROFILE_DESC_MAX,
			     &b->description) < 0 ||
	    profile_get_text(ld, path, obj, "program", true, PROFILE_VALUE_MAX, &b->program) < 0 ||
	    check_program(ld, ppath, b->program) < 0 ||
	    profile_get_strlist(ld, path, obj, "args", false, false, false, check_arg, &b->args,
				&b->n_args) < 0 ||
	    profile_get_kvmap(ld, path, obj, "env", false, PROFILE_KV_ENV, &b->env,
			      &b->n_env) < 0 ||
	    profile_get_enum(ld, path, obj, "stdin", false, stdin_names, &stdin_idx) < 0 ||
	    profile_get_int(ld, path, obj, "duration_s", false, 1, 86400, &b->duration_s) < 0 ||
	    profile_get_enum(ld, path, obj, "parser", true, parser_names, &parser) < 0 ||
	    profile_get_strlist(ld, path, obj, "gate", true, true, true, check_gate, &b->gate,
				&b->n_gate) < 0 ||
	    profile_get_int(ld, path, obj, "timeout_s", true, 1, 86400, &b->timeout_s) < 0 ||
	    profile_get_int(ld, path, obj, "stop_after_lines", false, 1, 1000000,
			    &b->stop_after_lines) < 0 ||
	    profile_get_int(ld, path, obj, "warmup_runs", false, 0, PROFILE_WARMUP_MAX,
			    &b->warmup_runs) < 0)
		return -1;
	b->stdin_mode = (enum profile_stdin)stdin_idx;
	b->parser = (enum profile_parser)parser;
	rc_mode = profile_get_enum(ld, path, obj, "mode", false, mode_names, &mode);
	if (rc_mode < 0)
		return -1;
	b->mode = (enum profile_mode)mode;
	rc_subset = profile_get_object(ld, path, obj, "subset", false, &sub);
	if (rc_subset < 0)
		return -1;
	if (b->parser == PROFILE_PARSER_MEMPOOL_PERF && b->mode == PROFILE_MODE_SUBSET) {
		if (load_subset(ld, path, obj, &b->subset) < 0)
			return -1;
		b->has_subset = true;
	}
	if (profile_load_fwd(ld, path, obj, b) < 0 || profile_check_fwd_args(ld, path, b) < 0)
		return -1;
	return check_benchmark(ld, path, b, rc_mode == 1, rc_subset == 1);
}
