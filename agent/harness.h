/* SPDX-License-Identifier: MIT */
#ifndef AGENT_HARNESS_H
#define AGENT_HARNESS_H

/*
 * The mempool_perf subset harness.
 *
 * DPDK's mempool_perf_autotest has no switch to select configurations: on
 * 21.11 to 23.11 trees it runs every configuration for 5 s and takes about
 * an hour.  For per-patch gating the agent rewrites the test program,
 * app/test/test_mempool_perf.c, in the worktree so that it runs exactly a
 * profile's "subset" (lib/profile.h, benchmarks.NAME.subset) for time_s
 * seconds each, identically on the base and the patched side, before
 * building.  Nothing is committed: the change stays in the worktree and is
 * applied again after each checkout (harness_apply_file()).  Mode "full"
 * runs the upstream test unchanged (harness_restore_file() undoes a
 * rewrite left in a worktree).
 *
 * What the rewrite changes, in three marked blocks (nothing else):
 *  - TIME_S becomes time_s;
 *  - do_one_mempool_test() runs only the subset's bulk sizes (n_get_bulk =
 *    n_put_bulk), n_keep values and constant_n values, in upstream's order
 *    (bulk, then keep, then constant_n, each ascending);
 *  - in test_mempool_perf(), only the "without cache" section (cache 0,
 *    the pool created with cache size 0) and the "with cache" section
 *    (cache 512, the pool with RTE_MEMPOOL_CACHE_MAX_SIZE) that the subset
 *    names run, each for the subset's core counts (1 = the main lcore
 *    alone), ascending; the default-ops and user-owned-cache sections are
 *    left out.  When a core count exceeds the lcores EAL has, the test
 *    prints "not enough lcores: the subset needs N" and fails, where
 *    upstream <= 23.11 would silently measure fewer cores under cores=N.
 * The "start performance test ..." header lines are the file's own printf
 * statements, copied, and launch_cores() (which prints the
 * "mempool_autotest cache=... rate_persec=..." lines) is not touched, so
 * the output has upstream's format and the mempool_perf parser's keys
 * (mempool.nocache.* and mempool.cache.*).  The pools are still created as
 * upstream creates them (the default-ops pool too, unused), so that pool
 * sizes and memory layout stay upstream's.
 *
 * Each block keeps the upstream text under "#if 0" (the marker lines say
 * "perfgate-harness"), so the rewrite can be undone exactly
 * (harness_mempool_restore()) and applying a subset to an already
 * rewritten file first restores it: the result depends only on the
 * upstream text and the subset (idempotent; a second application with
 * the same subset changes no byte).
 *
 * Layouts recognised.  The rewrite checks what it edits rather than
 * guessing: TIME_S and MAX_KEEP are each #defined exactly once;
 * do_one_mempool_test(struct rte_mempool *mp, unsigned int cores) is
 * defined exactly once, its tables are exactly a known version's and its
 * body uses nothing but those tables, the globals n_get_bulk, n_put_bulk,
 * n_keep (and use_constant_values) and launch_cores(mp, cores);
 * test_mempool_perf(void) is defined once with section headers (21.11
 * has a second, Windows, stub) and its section block is
 * exactly the four known headers, each followed by the calls for 1, 2 and
 * rte_lcore_count() cores, ending with rte_mempool_list_dump(stdout); and
 * launch_cores()'s result format strings are the known ones.  White space
 * and comments may differ.  Two layouts pass:
 *  - "22.03": bulk {1, 4, CACHE_LINE_BURST, 32}, keep {32, 128, 512},
 *    MAX_KEEP 512, constant_n replay, TIME_S 5 (DPDK 22.03 to 24.07).
 *    Verified on: 22.11.11 (Debian's source, tests/harness/2211.in),
 *    rewritten, built and run with the demo subset and a 32-line subset
 *    (tests/harness/2211.*.run); 23.11's file (REGISTER_PERF_TEST) and a
 *    file of DPDK's main from just before 24.11 (C11 alignas()), both
 *    found in a code search index, both 22.11.11's text but for those
 *    lines (tests/harness/2311.in and 2407.in are 2211.in so edited).
 *    22.03 itself was not seen (it brought this layout, ed579e50c6).
 *  - "21.11": bulk {1, 4, 32}, keep {32, 128}, MAX_KEEP 128, no
 *    constant_n (its result lines have none; the parser counts them as
 *    constant_n 0).  Verified on a 21.11-era file from a public mirror of
 *    DPDK's history (ovsrobot/dpdk 05c2e29f; it also defines a Windows
 *    stub of test_mempool_perf(), which is told apart by its having no
 *    section headers): rewritten and read, not built.
 *    tests/harness/2111.in is 2211.in taken back to that layout.
 * 24.11 and later (keep up to 32768, TIME_S 1, per-core-count tests) and
 * 25.07 and later (random-bulk rows, other headers) are NOT recognised:
 * their sources were not available to verify against, so the rewrite
 * returns 1 and the caller falls back to running the unmodified test and
 * stopping it after stop_after_lines result lines (on 24.11+ the smallest
 * unmodified unit is mempool_perf_autotest_1core, ~20 minutes).
 *
 * Base and patched side.  A series may edit test_mempool_perf.c itself,
 * so one side can be recognised and the other not.  The caller must then
 * use the fallback on BOTH sides (or fail the job), never compare a
 * rewritten side with an unmodified one.  What a series changes outside
 * the three blocks (test_loop(), per_lcore_mempool_test(), launch_cores())
 * is kept and measured.  Order of work in a worktree: check out and apply
 * the series to the upstream file, then harness_apply_file(); undo it
 * (harness_restore_file() or "git checkout -- FILE") before the next
 * checkout or "git apply", which would otherwise meet the rewritten file.
 */

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

#define HARNESS_TEST_PATH "app/test/test_mempool_perf.c"
#define HARNESS_LIST_MAX 16		/* values per list (PROFILE_SUBSET_LIST_MAX) */
#define HARNESS_MAX_SOURCE (1024 * 1024)	/* bytes of test_mempool_perf.c */
/* Seconds a run of the rewritten test needs besides its result lines:
 * EAL start-up, creating and filling the three pools (--no-huge: first
 * touch of 4 KiB pages) and the final pool dump.  Measured 0.5 s for
 * 22.11.11 on a 2-vCPU VM (-l 0-1 --no-huge -m 1024); generous, since it
 * feeds timeouts (hugepage setup on a big host takes longer). */
#define HARNESS_SETUP_S 10
#define HARNESS_MARK "perfgate-harness"

/*
 * A subset (lib/profile.h, benchmarks.NAME.subset).  Every list is sorted
 * ascending, without repeats, and non-empty; cache holds 0 and/or 512.
 */
struct harness_subset {
	unsigned cores[HARNESS_LIST_MAX];
	size_t n_cores;
	unsigned cache[2];
	size_t n_cache;
	unsigned bulk[HARNESS_LIST_MAX];
	size_t n_bulk;
	unsigned keep[HARNESS_LIST_MAX];
	size_t n_keep;
	unsigned constant_n[2];
	size_t n_constant_n;
	unsigned time_s;
};

/* The profile's defaults: {"cores": [1], "cache": [0, 512], "bulk": [32],
 * "keep": [128], "constant_n": [0], "time_s": 1}. */
void harness_subset_default(struct harness_subset *s);

/*
 * Read the job spec's "subset" object (NULL: all defaults; absent members
 * keep their defaults) into s, sorted.  Checks what the profile loader
 * checks: only the six known members; lists of 1..HARNESS_LIST_MAX
 * integers without repeats; cores 1..1024, cache 0 or 512, bulk 1..512,
 * keep 1..32768, constant_n 0 or 1, time_s 1..60; no keep below a bulk;
 * at most PROFILE_MAX_SUBSET configurations.  And what every version of
 * the test needs: each keep a multiple of each bulk (the test fails the
 * run otherwise).  Returns 0, or -1 with PG_EINVAL and err naming the
 * member, e.g. "subset.keep[0]: 100 is not a multiple of bulk 32".
 */
int harness_subset_from_json(const cJSON *subset, struct harness_subset *s,
			     struct pg_err *err);

/* "cores=1,2 cache=0,512 bulk=32 keep=128 constant_n=0 time_s=1" (the
 * form the rewritten file's markers carry).  Returns 0 or -1 (out's cap). */
int harness_subset_describe(const struct harness_subset *s, struct pg_buf *out);

/* How many "mempool_autotest ..." result lines the rewritten test prints:
 * cache values x cores x bulk x keep x constant_n values. */
size_t harness_subset_lines(const struct harness_subset *s);

/* Seconds the rewritten test should take: each line runs for time_s (a
 * little more: the time is checked after each chunk of 65536 objects)
 * plus HARNESS_SETUP_S.  An estimate for timeouts and progress. */
unsigned long harness_subset_estimate_s(const struct harness_subset *s);

/*
 * The result key (lib/profile.h naming) of result line i (0-based, i <
 * harness_subset_lines(s)) in the order the rewritten test prints them,
 * e.g. "mempool.nocache.cores1.keep128.get32.put32.const0", into buf (len
 * bytes).  Returns 0, or -1 when i is out of range or buf too small.
 */
int harness_subset_key(const struct harness_subset *s, size_t i, char *buf, size_t len);

/*
 * Rewrite the text of app/test/test_mempool_perf.c (src, len bytes; need
 * not be NUL-terminated) so that the test runs exactly subset s, as
 * described above; an already rewritten text is restored first.  out
 * gets the whole new text (appended; out->max bounds it).
 *
 * Returns
 *   0  rewritten: out holds the text (byte-identical to src when src was
 *      already rewritten for s);
 *   1  this version's layout is not recognised (an anchor is missing,
 *      appears twice or holds something unexpected): out is untouched and
 *      err says which anchor, for the log.  The caller falls back to the
 *      unmodified test stopped after stop_after_lines result lines;
 *  -1  error, err set: PG_EINVAL when the subset cannot run on this
 *      version (a keep above its MAX_KEEP; constant_n 1 on the 21.11
 *      layout, or with a bulk the test has no compile-time case for:
 *      only 1, 4, 8, 16 and 32 are allowed, 8 or 16 being
 *      CACHE_LINE_BURST, whichever the build has, or the run fails) or
 *      when the harness markers of a rewritten text are damaged;
 *      PG_ETOOBIG when src exceeds HARNESS_MAX_SOURCE or out's cap;
 *      PG_ENOMEM.
 */
int harness_mempool_rewrite(const char *src, size_t len, const struct harness_subset *s,
			    struct pg_buf *out, struct pg_err *err);

/* Whether src (len bytes) carries the harness markers (was rewritten). */
bool harness_mempool_is_applied(const char *src, size_t len);

/*
 * Undo a rewrite: append to out the upstream text (src itself when it
 * carries no markers).  Returns 0, or -1 with err (PG_EINVAL when the
 * markers are damaged: restore the file from git then; PG_ETOOBIG).
 */
int harness_mempool_restore(const char *src, size_t len, struct pg_buf *out,
			    struct pg_err *err);

/*
 * Apply s to SRC_DIR/app/test/test_mempool_perf.c: read it, rewrite it and
 * write it back (atomically, same permissions) only when its content
 * changes, so that an unchanged file keeps its mtime and ninja does not
 * rebuild dpdk-test.
 *
 * Returns 0 with *applied = true when the file now runs the subset
 * (written or already so), 0 with *applied = false when the layout is
 * not recognised (file untouched, err holds the reason for the log: the
 * caller falls back), or -1 with err (the file is missing: PG_ENOTFOUND;
 * the subset cannot run on this version; I/O).
 *
 * The file is read and replaced beneath SRC_DIR (lib/fsbeneath.h): when it,
 * app/test or app is a symbolic link, or it is not a regular file, that is
 * PG_EINVAL ("... is a symbolic link: refused") and nothing is read or
 * written through the link.  The new file gets the old one's permission
 * bits and the owner of app/test (when the agent is root).
 */
int harness_apply_file(const char *src_dir, const struct harness_subset *s, bool *applied,
		       struct pg_err *err);

/*
 * Mode "full": undo a rewrite left in SRC_DIR's test_mempool_perf.c (a
 * worktree whose checkout kept the modified file).  Writes only when the
 * file carries markers; *restored (may be NULL) says whether it did.
 * Returns 0 or -1 with err (missing file, damaged markers, a symbolic
 * link as for harness_apply_file(), I/O).
 */
int harness_restore_file(const char *src_dir, bool *restored, struct pg_err *err);

#endif
