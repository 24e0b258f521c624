/* SPDX-License-Identifier: MIT */
#ifndef PG_PROFILE_H
#define PG_PROFILE_H

/*
 * Profiles: what to test, where and how (DESIGN.md section 4).
 *
 * A catalogue (`struct profile_set`) is loaded from one or more JSON files
 * whose sections merge.  Each file is an object with these optional members;
 * every section is an object keyed by name (names are [A-Za-z0-9_.-]+, at
 * most PROFILE_NAME_MAX bytes) unless said otherwise:
 *
 *   "trees"         git trees: url, default_branch, branches
 *   "tree_rules"    an ARRAY, first match wins: paths, subject_tags, tree, branch
 *   "default_tree"  a tree name (a string, see "Tree selection" below)
 *   "host_classes"  labels, lcores, memory_mb, hugepages, numa_node, max_load,
 *                   max_load_wait_s, require
 *   "build_modes"   buildtype, meson_options, c_args, meson_options_by_version
 *   "benchmarks"    program, args, env, stdin, duration_s, parser, gate,
 *                   timeout_s, stop_after_lines, mode, subset
 *   "contexts"      host_class, build_modes, benchmarks, trees, default_tree,
 *                   repetitions, max_repetitions, threshold_pct, alpha,
 *                   noise_limit_pct, post_to
 *
 * Every entry (and every tree rule) may also carry a free-text
 * "description", which is kept and printed, so that a profile can say why
 * it chose what it chose (JSON has no comments).  profiles/dpdk.json is the
 * worked example; the fields and their limits are:
 *
 * trees.NAME
 *   url             required; https://, http://, git://, ssh://, file:// or
 *                   an absolute path
 *   default_branch  required
 *   branches        the branches we test; must include default_branch;
 *                   default [default_branch]
 *
 * tree_rules[i]     (at least one of paths / subject_tags must be non-empty)
 *   paths           fnmatch(3) patterns without FNM_PATHNAME, so '*' also
 *                   matches '/': "drivers/net/" followed by '*' matches
 *                   every file below drivers/net.  The criterion holds when
 *                   EVERY file the series touches matches at least one
 *                   pattern (a series that also touches lib/eal is not a
 *                   net-only series).
 *   subject_tags    e.g. ["22.11"]; holds when the series' subject prefix
 *                   carries one of them (compared case-insensitively)
 *   tree, branch    where such a series goes; branch defaults to the tree's
 *                   default_branch and must be one of its branches
 *   A rule matches when all of its non-empty criteria hold.
 *
 * host_classes.NAME
 *   labels          {key: value}, at least one; an agent matches the class
 *                   when it has every one of these labels with that value
 *   lcores          DPDK core list for -l, e.g. "2-5" or "2,4,6,8": numbers
 *                   0..PROFILE_MAX_LCORE and ascending ranges, no repeats,
 *                   at least 2 lcores (the main lcore and a worker)
 *   memory_mb       64..1048576, passed as -m
 *   hugepages       false runs DPDK with --no-huge (a different baseline)
 *   numa_node       optional, >= 0: the node of the lcores and the memory
 *                   (with hugepages, {mem_args} asks EAL for the memory there)
 *   max_load        optional, (0, 1e6]: 1-minute load average above which
 *                   the host counts as busy.  Before each measured run the
 *                   agent polls until the load is at most max_load and the
 *                   other work of the quiet check's window is at most
 *                   HOSTCHECK_QUIET_LIMIT_CPUS (agent/hostgate.h); a host
 *                   that stays busy for max_load_wait_s fails the job as
 *                   infra-error ("host busy: load 3.20 over max_load 1.0
 *                   for 300 s before run 4").  The agent still takes jobs
 *                   while busy (it waits inside the job, where the wait is
 *                   recorded).  The load average counts the agent's own
 *                   work too (the build, the previous run's lcores, which
 *                   weigh in it for about a minute): leave room for them.
 *                   Without max_load nothing waits on the load.
 *   max_load_wait_s optional, 1..86400, default PROFILE_MAX_LOAD_WAIT_S:
 *                   the longest wait before one run; only with max_load
 *   require         optional object, every member optional: facts of the
 *                   agent's host check that the host must show, else the
 *                   job fails as infra-error before anything is built
 *                   ("host does not meet host class intel: governor is
 *                   powersave, the class requires performance"):
 *                   governor       a scaling governor, e.g. "performance"
 *                                  (every CPU's; "none" without cpufreq)
 *                   turbo          "on" or "off"
 *                   smt            "on" or "off" ("off" is met by SMT
 *                                  control off, forceoff, notsupported or
 *                                  notimplemented)
 *                   isolated_cpus  true: every lcore of the class is in
 *                                  /sys/devices/system/cpu/isolated
 *                   nohz_full      true: every lcore is in nohz_full
 *                   false (the default) requires nothing
 *   meson_options   {option: value}, default {}: the class's build
 *                   options, merged over every build mode's (see
 *                   "Per-class build options" below)
 *
 * build_modes.NAME
 *   buildtype       plain, debug, debugoptimized, release or minsize
 *   meson_options   {option: value}, option names [a-z0-9_]+; "buildtype"
 *                   and "c_args" have their own fields; default {}
 *   c_args          optional -Dc_args value (e.g. debug knobs)
 *   meson_options_by_version
 *                   default []; [{"since": "23.11", "options": {...}}, ...]
 *                   with "since" strictly ascending.  For a tree whose
 *                   VERSION is V, meson_options are taken first, then the
 *                   options of every entry with since <= V in order, a
 *                   later value replacing an earlier one: options that DPDK
 *                   only knows from some release on are only passed then
 *                   (see profile_build_mode_options()).
 *
 * benchmarks.NAME
 *   program         required: the DPDK program relative to the build
 *                   directory, e.g. "app/test/dpdk-test", "app/dpdk-testpmd"
 *   args            default []; may use the placeholders {lcores},
 *                   {memory_mb}, {mem_args}, {file_prefix}, {build_dir} and
 *                   {duration_s} ({{ and }} for literal braces); {mem_args}
 *                   must be a whole argument and expands to "--no-huge -m N"
 *                   (hugepages false), "--socket-mem 0,..,0,N" (N at the
 *                   class's numa_node) or else "-m N" (host class);
 *                   {duration_s} needs duration_s
 *   env             {NAME: value}, default {}; values are literal
 *   stdin           "null" (default: </dev/null) or "hold": keep stdin open
 *                   for duration_s seconds and then close it (testpmd without
 *                   --stats-period exits on EOF, printing its final stats)
 *   duration_s      optional, 1..86400, less than timeout_s: how long a
 *                   time-bounded run lasts
 *   parser          required: "mempool_perf" or "testpmd" (keys below)
 *   gate            required, at least one: result keys or fnmatch patterns
 *                   of keys that decide the verdict; each must be able to
 *                   match a key the parser produces (with mode "subset",
 *                   a key that the subset produces)
 *   timeout_s       required, 1..86400: the agent kills a run after this
 *   warmup_runs     optional, 0..10, default 0: runs of this benchmark per
 *                   side at the start of each job's benchmark stage (each
 *                   follow-up round too), logged and discarded: the first
 *                   run after a build or a pause pays for cold page cache,
 *                   hugepage first touch and clock ramp-up, and its pair
 *                   is the noisiest of the round (bench/noise_pairs.sh)
 *   stop_after_lines  optional, mempool_perf mode "full" only: stop the
 *                   unmodified test after this many result lines and keep
 *                   them (the full test runs for up to an hour)
 *   mode            mempool_perf only: "subset" (default) or "full"
 *   subset          mempool_perf mode "subset" only; all members optional:
 *                   {"cores": [1], "cache": [0, 512], "bulk": [32],
 *                    "keep": [128], "constant_n": [0], "time_s": 1}
 *                   cores: core counts (1 = the main lcore alone), each at
 *                   most the lcores of every host class that runs it;
 *                   cache: 0 selects the pool without cache, 512 the pool
 *                   with the default per-lcore cache (the test's only two
 *                   sizes); bulk: n_get_bulk = n_put_bulk values 1..512;
 *                   keep: n_keep values 1..32768, none below a bulk value;
 *                   constant_n: 0 and/or 1; time_s: seconds per
 *                   configuration, 1..60.  At most PROFILE_MAX_SUBSET
 *                   configurations.  DPDK's test has no selection switch,
 *                   so the agent rewrites the test's tables in
 *                   app/test/test_mempool_perf.c identically on the base
 *                   and the patched side before building, which keeps the
 *                   two sides comparable; the user-owned-cache and
 *                   default-ops sections are not run in subset mode.
 *
 * host_classes.NAME.ports   optional, 1..PROFILE_MAX_PORTS, in the
 *                   order DPDK numbers them; all PCI or all virtual:
 *   pci             "0000:3b:00.0" (sysfs's spelling, lower-case hex),
 *                   with driver (required: the kernel driver the agent
 *                   requires, e.g. "vfio-pci") and numa_node (optional)
 *   vdev            a virtual port: EAL's --vdev value, "net_NAME[,k=v]"
 *
 * benchmarks.NAME.fwd   optional, parser testpmd with stdin "hold" only:
 *                   testpmd forwarding over the host class's ports, which
 *                   every context running it must have, with lcores for
 *                   cores_per_port x ports + the main lcore.  Members:
 *                   mode (io, mac, macswap, flowgen, txonly, rxonly;
 *                   default io), frame_sizes (PROFILE_FRAME_MIN..MAX, at
 *                   most PROFILE_MAX_FRAME_SIZES, default [64]: one run
 *                   per size), rxd, txd (32..65536, default 512), queues
 *                   (1..64, default 1), cores_per_port (1..queues,
 *                   default 1).  args then hold EAL options, optionally
 *                   "--" and testpmd options, but nothing the ports or
 *                   fwd set (profile_benchmark_argv() adds those).  The
 *                   result keys carry the frame size: profile_fwd_key().
 *
 * contexts.NAME     NAME is the Patchwork check context: a slug of
 *                   [-a-zA-Z0-9_], at most 255 bytes (Patchwork rejects '/')
 *   host_class      required
 *   build_modes     required, at least one, no repeats
 *   benchmarks      required, at least one, no repeats
 *   baseline_benchmarks  optional, at least one, no repeats: what the
 *                   context's baselines (a branch measured by itself,
 *                   controller/planner.h) run instead of `benchmarks`,
 *                   e.g. a mempool_perf in mode "full" that no patch job
 *                   could afford; default: `benchmarks`
 *   trees           default: every tree of the catalogue (sorted by name)
 *   default_tree    where a series goes when no rule (among the rules whose
 *                   tree is one of the context's trees) matches; must be
 *                   one of its trees.  Default: the default_tree of the
 *                   context's own file if it is one of its trees, else the
 *                   first file-level default_tree (in load order) that is;
 *                   if none is, the context must name one.
 *   repetitions     3..1000, default 6 (the fewest pairs of runs whose
 *                   signed-rank test can reach p < 0.05: controller/verdict.h)
 *   max_repetitions repetitions..10000, default 3 * repetitions
 *   threshold_pct   (0, 100], default 5
 *   alpha           (0, 0.5], default 0.05
 *   noise_limit_pct (0, 100], default 5
 *   post_to         "last_patch" (default) or "all_patches"
 *
 * Per-class build options.  What the hardware decides (the target ISA,
 * -Dplatform on Arm, -Dmax_lcores) belongs to the host class, not to a
 * build mode shared by every class: host_classes.NAME.meson_options (names
 * and checks as for a build mode's meson_options, so not buildtype or
 * c_args) are laid over the build mode's options for the tree's version
 * (profile_build_options()), the class's value winning, for every job of
 * a context on that class.  They apply to every DPDK version; an option
 * only some releases know goes in a build mode's meson_options_by_version.
 * The planner merges them into the job spec's build.meson_options
 * (controller/planner_spec.c): the spec stays everything the agent needs
 * (an agent does not read build modes or know which class a job was
 * planned for beyond its name), the result's fingerprint and the verdict
 * show the options actually built, and an agent builds each effective set
 * of options in a build slot of its own (agent/slots.h), so two classes
 * with different options never share a build directory.
 *
 * Tree selection and "default_tree".  default_tree is a per-file setting,
 * at most one per file, so that files written for different labs (e.g.
 * dpdk.json and demo.json) can be loaded together.  When any context
 * exists, at least one file must set it.  Rules keep their order: files in
 * load order, each file's rules in array order.  profile_select_tree()
 * applies every rule and falls back to the first file-level default_tree;
 * profile_context_select_tree() (what the planner uses) applies only the
 * rules whose tree is one of the context's trees and falls back to the
 * context's default_tree.  The normalised printout keeps the first
 * file-level default_tree and fills in every context's default_tree, so
 * that loading it again selects the same trees.
 *
 * Names are unique per section across the whole catalogue; a name defined
 * twice (in one file or in two) is an error naming both files.  References
 * between sections may cross files.  Object keys may not repeat.
 *
 * Errors.  Every error names the file, the field path and what is wrong:
 *   profiles/x.json: contexts.foo.alpha: 0.7 is out of range (0, 0.5]
 *   profiles/x.json: contexts.foo.host_class: unknown host class 'nvidia'
 *   profiles/x.json: benchmarks.mp.args[3]: unknown placeholder '{cores}'
 *   profiles/x.json: trees.dpdk.colour: unknown field
 *   profiles/x.json: invalid JSON at line 4, column 7
 *
 * Result keys (what the parsers produce and gate patterns match).  Keys are
 * dot-separated; values are numbers; higher is better unless noted (see
 * profile_key_higher_is_better()).
 *
 *   parser "mempool_perf": one key per "mempool_autotest ..." result line,
 *   valued rate_persec (objects per second, all lcores together):
 *     mempool.SECTION.coresC.keepK.getG.putP.constN    fixed-bulk rows
 *     mempool.SECTION.coresC.keepK.maxbulkM             random-bulk rows (25.07+)
 *   SECTION comes from the "start performance test ..." header before the
 *   line: "nocache" (without cache), "cache" (with cache), "usercache"
 *   (with user-owned cache), "default_nocache" / "default_cache" (the
 *   "for <ops>" sections run on the platform's default mempool ops).  C, K,
 *   G, P, N are cores, n_keep, n_get_bulk, n_put_bulk, constant_n (0 when
 *   the line has none, as in 21.11).  When a key repeats within one run
 *   (<= 23.11 with 2 lcores repeats the cores=2 block) the first value is
 *   kept.  Example: mempool.nocache.cores1.keep128.get32.put32.const0.
 *
 *   parser "testpmd", from the final "Accumulated forward statistics" block
 *   and the "CPU cycles/packet" line (--record-core-cycles):
 *     fwd.rx_pps, fwd.tx_pps      accumulated RX / TX packets divided by
 *                                 the forwarding time the agent measured
 *                                 (from "Press enter to exit" to closing
 *                                 stdin, or to the stop signal)
 *     fwd.rx_packets, fwd.tx_packets   totals
 *     fwd.rx_dropped, fwd.tx_dropped   totals; lower is better
 *     fwd.cycles_per_pkt          lower is better (timer ticks on Arm)
 *     portN.rx_pps, portN.tx_pps, portN.rx_bps, portN.tx_bps
 *                                 the last "Throughput" block per port
 *                                 (only with --stats-period)
 *   A benchmark with "fwd" runs once per frame size S and its keys carry
 *   it after their first component: fwd.sizeS.rx_pps,
 *   fwd.sizeS.cycles_per_pkt, portN.sizeS.rx_pps, ...
 */

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

#define PROFILE_MAX_FILE_SIZE (1024 * 1024)	/* bytes per profile file */
#define PROFILE_MAX_ENTRIES 256		/* per section, whole catalogue */
#define PROFILE_MAX_ITEMS 256		/* per list or map (args, labels, ...) */
#define PROFILE_NAME_MAX 64		/* bytes in a name, but contexts */
#define PROFILE_CONTEXT_NAME_MAX 255	/* Patchwork's limit for a context */
#define PROFILE_WARMUP_MAX 10		/* a benchmark's warmup_runs */
#define PROFILE_MAX_LCORE 1023		/* highest lcore id in a core list */
#define PROFILE_MAX_SUBSET 1024		/* mempool configurations per subset */
#define PROFILE_MAX_LOAD_WAIT_S 300	/* default max_load_wait_s: five minutes,
					 * long enough for a build's load to
					 * decay, short enough to free a host
					 * someone else took */
#define PROFILE_MAX_PORTS 16		/* ports per host class */
#define PROFILE_MAX_FRAME_SIZES 8	/* frame sizes per testpmd "fwd" */
#define PROFILE_FRAME_MIN 64		/* frame sizes, bytes with the CRC */
#define PROFILE_FRAME_MAX 1518

struct profile_kv {
	char *key;
	char *value;
};

struct profile_tree {
	char *name;
	const char *file;		/* the file that defined it */
	char *description;		/* NULL when absent */
	char *url;
	char *default_branch;
	char **branches;		/* never empty; has default_branch */
	size_t n_branches;
};

struct profile_tree_rule {
	const char *file;
	char *description;
	char **paths;
	size_t n_paths;
	char **subject_tags;
	size_t n_subject_tags;
	char *tree;
	char *branch;			/* filled in: never NULL */
};

/* host_classes.NAME.require: absent members require nothing. */
struct profile_host_require {
	char *governor;			/* NULL: any */
	char *turbo;			/* "on", "off", or NULL: any */
	char *smt;			/* "on", "off", or NULL: any */
	bool isolated_cpus;		/* every lcore in the isolated set */
	bool nohz_full;			/* every lcore in nohz_full */
};

/* One port of a host class (profile_ports.c): a PCI device or a virtual
 * one, never both; a class's ports are all of one kind. */
struct profile_port {
	char *pci;			/* "DDDD:BB:DD.F", or NULL (virtual) */
	char *driver;			/* PCI: the kernel driver it must be bound to */
	int numa_node;			/* PCI: -1 when not set */
	char *vdev;			/* virtual: EAL --vdev value, or NULL */
};

struct profile_host_class {
	char *name;
	const char *file;
	char *description;
	struct profile_kv *labels;	/* sorted by key, at least one */
	size_t n_labels;
	char *lcores;			/* as written, e.g. "2-5" */
	unsigned *lcore_ids;		/* ascending, distinct, >= 2 of them */
	size_t n_lcores;
	int memory_mb;
	bool hugepages;
	int numa_node;			/* -1 when not set */
	bool has_max_load;
	double max_load;
	int max_load_wait_s;		/* PROFILE_MAX_LOAD_WAIT_S when not set */
	bool has_require;		/* a "require" object was given */
	struct profile_host_require require;
	struct profile_port *ports;	/* in the order written; NULL when none */
	size_t n_ports;
	/* Build options of the class (see "Per-class build options"). */
	struct profile_kv *meson_options;	/* sorted by key; may be empty */
	size_t n_meson_options;
};

struct profile_version_options {
	char *since;			/* as written, e.g. "23.11" */
	unsigned major, minor;
	struct profile_kv *options;	/* sorted by key */
	size_t n_options;
};

struct profile_build_mode {
	char *name;
	const char *file;
	char *description;
	char *buildtype;
	struct profile_kv *meson_options;	/* sorted by key */
	size_t n_meson_options;
	char *c_args;			/* NULL when absent */
	struct profile_version_options *by_version;	/* since ascending */
	size_t n_by_version;
};

enum profile_parser {
	PROFILE_PARSER_MEMPOOL_PERF,
	PROFILE_PARSER_TESTPMD,
};

enum profile_stdin {
	PROFILE_STDIN_NULL,
	PROFILE_STDIN_HOLD,
};

enum profile_mode {
	PROFILE_MODE_SUBSET,
	PROFILE_MODE_FULL,
};

struct profile_mempool_subset {
	unsigned *cores;
	size_t n_cores;
	unsigned *cache;
	size_t n_cache;
	unsigned *bulk;
	size_t n_bulk;
	unsigned *keep;
	size_t n_keep;
	unsigned *constant_n;
	size_t n_constant_n;
	unsigned time_s;
};

enum profile_fwd_mode {
	PROFILE_FWD_IO,
	PROFILE_FWD_MAC,
	PROFILE_FWD_MACSWAP,
	PROFILE_FWD_FLOWGEN,
	PROFILE_FWD_TXONLY,
	PROFILE_FWD_RXONLY,
};

/* A testpmd benchmark on the host class's ports (benchmarks.NAME.fwd). */
struct profile_fwd {
	enum profile_fwd_mode mode;
	unsigned *frame_sizes;		/* ascending, distinct, >= 1 */
	size_t n_frame_sizes;
	int rxd, txd;			/* descriptors per queue */
	int queues;			/* RX and TX queues per port */
	int cores_per_port;		/* forwarding lcores per port */
};

struct profile_benchmark {
	char *name;
	const char *file;
	char *description;
	char *program;
	char **args;
	size_t n_args;
	struct profile_kv *env;		/* sorted by key */
	size_t n_env;
	enum profile_stdin stdin_mode;
	int duration_s;			/* 0 when not set */
	enum profile_parser parser;
	char **gate;
	size_t n_gate;
	int timeout_s;
	int stop_after_lines;		/* 0 when not set */
	int warmup_runs;		/* 0 when not set */
	enum profile_mode mode;		/* meaningful for mempool_perf only */
	bool has_subset;		/* mempool_perf in mode subset */
	struct profile_mempool_subset subset;
	bool has_fwd;			/* testpmd on the host class's ports */
	struct profile_fwd fwd;
};

enum profile_post_to {
	PROFILE_POST_LAST_PATCH,
	PROFILE_POST_ALL_PATCHES,
};

struct profile_context {
	char *name;
	const char *file;
	char *description;
	char *host_class;
	char **build_modes;
	size_t n_build_modes;
	char **benchmarks;
	size_t n_benchmarks;
	char **baseline_benchmarks;	/* NULL when not set: benchmarks */
	size_t n_baseline_benchmarks;
	char **trees;			/* filled in: never empty */
	size_t n_trees;
	char *default_tree;		/* filled in: one of trees */
	int repetitions;
	int max_repetitions;
	double threshold_pct;
	double alpha;
	double noise_limit_pct;
	enum profile_post_to post_to;
};

struct profile_file {
	char *path;			/* as given to the loader */
	char *default_tree;		/* NULL when the file sets none */
};

/*
 * The catalogue.  Sections are sorted by name (lookups bisect); tree rules
 * and files keep their load order.  All strings are owned by the set.
 */
struct profile_set {
	struct profile_file *files;
	size_t n_files;
	struct profile_tree *trees;
	size_t n_trees;
	struct profile_tree_rule *tree_rules;
	size_t n_tree_rules;
	const char *default_tree;	/* first file-level one, or NULL */
	struct profile_host_class *host_classes;
	size_t n_host_classes;
	struct profile_build_mode *build_modes;
	size_t n_build_modes;
	struct profile_benchmark *benchmarks;
	size_t n_benchmarks;
	struct profile_context *contexts;
	size_t n_contexts;
};

/*
 * Load the files paths[0..n) into ps, which need not be initialised, and
 * validate everything, cross references included.  A file is at most
 * PROFILE_MAX_FILE_SIZE bytes.  Returns 0, or -1 with ps empty (safe to
 * free) and err naming the file and the field (PG_EINVAL; PG_EIO when a
 * file cannot be read, PG_ETOOBIG when one is too big, PG_ENOMEM).
 */
int profile_set_load(struct profile_set *ps, const char *const *paths, size_t n,
		     struct pg_err *err);

/*
 * Load one file's content text[0..len), named name in errors, as
 * profile_set_load() loads a file of that name: for tests and fuzzing.
 * Same returns.
 */
int profile_set_load_text(struct profile_set *ps, const char *name, const char *text,
			  size_t len, struct pg_err *err);

/*
 * Load every "*.json" file of dir (not hidden ones), sorted by name with
 * strcmp(), as profile_set_load() does.  An empty directory gives an empty
 * set.  Returns 0 or -1 (err says which directory or file).
 */
int profile_set_load_dir(struct profile_set *ps, const char *dir, struct pg_err *err);

/* Free everything and leave ps empty (reusable).  NULL-safe. */
void profile_set_free(struct profile_set *ps);

/* Lookups by name; NULL when there is no such entry. */
const struct profile_context *profile_find_context(const struct profile_set *ps,
						   const char *name);
const struct profile_host_class *profile_find_host_class(const struct profile_set *ps,
							 const char *name);
const struct profile_build_mode *profile_find_build_mode(const struct profile_set *ps,
							 const char *name);
const struct profile_benchmark *profile_find_benchmark(const struct profile_set *ps,
						       const char *name);
const struct profile_tree *profile_find_tree(const struct profile_set *ps,
					     const char *name);

/*
 * Whether an agent with the labels keys[i]=values[i] (i < n) belongs to the
 * host class: every label of the class must be present with the same value
 * (extra agent labels do not matter).
 */
bool profile_host_class_matches(const struct profile_host_class *hc,
				const char *const *keys, const char *const *values,
				size_t n);

/*
 * Choose the tree and branch for a series that touches the files
 * paths_touched[0..n_paths) and whose subject prefix carries the tags
 * subject_tags[0..n_tags): the first matching rule of the catalogue, else
 * the first file-level default_tree at its default branch.  *tree and
 * *branch point into ps.  Returns 0, or -1 when nothing matched and the
 * catalogue has no default_tree (only possible without contexts).
 */
int profile_select_tree(const struct profile_set *ps,
			const char *const *paths_touched, size_t n_paths,
			const char *const *subject_tags, size_t n_tags,
			const char **tree, const char **branch);

/*
 * The same for one context: only rules whose tree is one of ctx's trees
 * count, and the fallback is ctx->default_tree.  Always succeeds for a
 * context of a loaded set (returns 0).
 */
int profile_context_select_tree(const struct profile_set *ps,
				const struct profile_context *ctx,
				const char *const *paths_touched, size_t n_paths,
				const char *const *subject_tags, size_t n_tags,
				const char **tree, const char **branch);

/* Whether result key `key` gates the verdict of benchmark b (it matches one
 * of b's gate patterns). */
bool profile_gate_matches(const struct profile_benchmark *b, const char *key);

/* Whether a larger value of result key `key` is better (the key naming
 * above): false for "*.cycles_per_pkt" and "*_dropped", true otherwise. */
bool profile_key_higher_is_better(const char *key);

/*
 * Parse the start of a DPDK version, "22.11", "22.11.11" or "24.11.0-rc0"
 * (the VERSION file of a tree), into major and minor.  Returns 0, or -1
 * when s does not start with digits '.' digits.
 */
int profile_parse_version(const char *s, unsigned *major, unsigned *minor);

/*
 * The meson options of build mode bm for a tree of DPDK version
 * major.minor: meson_options, then every meson_options_by_version entry
 * with since <= major.minor, later values replacing earlier ones.  *out is
 * a malloc'd array (free() it) of *n pointers into bm, sorted by key;
 * buildtype and c_args are not in it.  Returns 0 or -1 (PG_ENOMEM).
 */
int profile_build_mode_options(const struct profile_build_mode *bm,
			       unsigned major, unsigned minor,
			       const struct profile_kv ***out, size_t *n,
			       struct pg_err *err);

/*
 * The meson options of a job of build mode bm on host class hc (NULL: no
 * class's options) for a tree of DPDK version major.minor:
 * profile_build_mode_options(), then hc's meson_options, a class's value
 * replacing the build mode's.  Same output as profile_build_mode_options().
 * Returns 0 or -1 (PG_ENOMEM).
 */
int profile_build_options(const struct profile_build_mode *bm,
			  const struct profile_host_class *hc, unsigned major, unsigned minor,
			  const struct profile_kv ***out, size_t *n, struct pg_err *err);

/*
 * Check the placeholders of one benchmark argument (see "args" above).
 * Returns 0; or -1 with msg (msg_len bytes) saying what is wrong, e.g.
 * "unknown placeholder '{cores}'".  Sets *uses_duration (may be NULL) when
 * the argument uses {duration_s}, and leaves it alone otherwise.
 */
int profile_arg_check(const char *arg, bool *uses_duration, char *msg, size_t msg_len);

/* What only the agent knows when it runs a benchmark. */
struct profile_run_vars {
	const char *file_prefix;	/* EAL --file-prefix, unique per run */
	const char *build_dir;		/* absolute build directory */
	const char *frame_size;		/* a "fwd" benchmark's run: --txpkts= */
};

/*
 * Expand b's args for host class hc: {lcores}, {memory_mb}, {mem_args}
 * (as two or three arguments, see "args" above), {duration_s}, {file_prefix}, {build_dir},
 * and {{ / }}.  For a benchmark with "fwd", the port arguments of hc
 * ("-a PCI" per PCI port, "--vdev=VDEV" per virtual one) go before the
 * args' "--" (one is added when there is none) and the forwarding
 * arguments (profile_fwd_args()) after everything; vars->frame_size is
 * then needed.  *argv is a malloc'd, NULL-terminated vector of *argc
 * malloc'd strings, without the program; free it with profile_argv_free().
 * Returns 0 or -1 (PG_ENOMEM, or PG_EINVAL if vars lacks a value that an
 * argument needs).
 */
int profile_benchmark_argv(const struct profile_benchmark *b,
			   const struct profile_host_class *hc,
			   const struct profile_run_vars *vars,
			   char ***argv, size_t *argc, struct pg_err *err);

/*
 * The testpmd arguments of a "fwd" benchmark for a class of n_ports
 * ports, frame size frame_size (as text), in this order:
 * --forward-mode=M --rxq=Q --txq=Q --rxd=N --txd=N --nb-cores=C*P
 * --txpkts=S --record-core-cycles, then --port-topology=loop for a
 * single port, then --tx-first for io, mac and macswap (the first burst
 * is what loops between cabled ports, or through a net_ring port).
 * Each argument is appended to out as a NUL-terminated string; returns 0
 * or -1 (out's cap).
 */
int profile_fwd_args(const struct profile_fwd *f, size_t n_ports, const char *frame_size,
		     struct pg_buf *out);

/*
 * The result key of a "fwd" benchmark's run at frame_size: key with
 * ".sizeN" after its first component, "fwd.rx_pps" -> "fwd.size64.rx_pps",
 * "port0.rx_pps" -> "port0.size64.rx_pps".  Returns 0, or -1 when key has
 * no '.' or out (len bytes) is too small.
 */
int profile_fwd_key(unsigned frame_size, const char *key, char *out, size_t len);

/* "io", "mac", ... as written in profiles. */
const char *profile_fwd_mode_name(enum profile_fwd_mode m);

/* Free a vector from profile_benchmark_argv().  NULL-safe. */
void profile_argv_free(char **argv, size_t argc);

/* Names of enum values as written in profiles ("mempool_perf", "hold",
 * "subset", "last_patch"). */
const char *profile_parser_name(enum profile_parser p);
const char *profile_stdin_name(enum profile_stdin s);
const char *profile_mode_name(enum profile_mode m);
const char *profile_post_to_name(enum profile_post_to p);

/*
 * The normalised catalogue: every default filled in, sections sorted by
 * name, keys in a fixed order, optional fields without a default left out;
 * loading the printout again gives the same printout.  Returns a new cJSON
 * object (cJSON_Delete() it) or NULL when out of memory.
 */
cJSON *profile_set_to_json(const struct profile_set *ps);

#endif
