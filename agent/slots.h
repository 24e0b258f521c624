/* SPDX-License-Identifier: MIT */
#ifndef AGENT_SLOTS_H
#define AGENT_SLOTS_H

/*
 * Build slots: which persistent source checkouts and build directories a
 * job uses, how many an agent keeps, and which one goes when a new one is
 * needed.
 *
 * A slot is the pair of directories WORK/slots/TREE/DIR-base and
 * WORK/slots/TREE/DIR-patched (each with src/ and build/ as
 * agent/workspace.h lays them out) for one identity:
 *
 *   (tree, series, build mode, effective build options)
 *
 * where the series is the stable series of a release branch ("22.11" for
 * "22.11", "v22.11.5", "22.11.5") and the branch itself otherwise ("main",
 * "next-net").  The effective options are the job spec's "build" object
 * (buildtype, c_args and the meson options the planner merged for the
 * tree's version and the host class): two classes with different options
 * on one agent never share a build directory, and a job alternating
 * between 22.11 and 24.11 finds each series' objects where it left them.
 * The slot's name, "SERIES.MODE.HASH" (slot_name()), carries a hash of the
 * whole identity: the readable parts are cut to fit ws_name_ok().
 *
 * The agent keeps at most max_build_slots (agent configuration, default
 * SLOTS_MAX_DEFAULT) slots, all trees together.  WORK/slots/index.json
 * (written atomically) lists them with a use counter; when a job needs a
 * slot that is not there and the agent holds max_build_slots already, the
 * least recently used slot other than the job's own is removed (both
 * sides, source and build).  An agent runs one job at a time, so the only
 * slot in use is the one being acquired, which is never a victim.
 *
 * Work directories from before slots named their directories
 * WORK/slots/TREE/MODE-base and MODE-patched.  The first job of a tree and
 * build mode whose slot is not in the index adopts those directories as
 * they are (state "adopted": no move, so the build stamps' source paths
 * stay valid and the build is as warm as it was); later identities of
 * that mode get new slots.
 *
 * A directory under WORK/slots that the index does not list (an index
 * lost or unreadable: it is then set aside as index.json.bad and started
 * afresh) is not removed by eviction; the size report counts it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "workspace.h"

#define SLOTS_MAX_DEFAULT 8		/* max_build_slots when not set */
#define SLOTS_MAX_LIMIT 256		/* the most max_build_slots may say */
#define SLOTS_SERIES_SHOWN 24		/* bytes of the series in a slot name */
#define SLOTS_MODE_SHOWN 40		/* bytes of the build mode in a slot name */
/* The side suffix ("-patched") must still fit a workspace slot name. */
#define SLOTS_NAME_MAX (WS_NAME_MAX - 8)
#define SLOTS_INDEX_MAX (1024 * 1024)	/* bytes of index.json */
#define SLOTS_SIZE_BUDGET_MS 5000	/* what the size report may take */

/*
 * The series of a branch into out: "MAJOR.MINOR" when the branch is a
 * release name, optionally with a leading 'v' and anything after a third
 * '.' ("22.11", "v22.11", "22.11.5", "22.11.5-rc1"); else the branch as
 * it is.  Returns 0, or -1 when branch is empty or out too small.
 */
int slot_series(const char *branch, char *out, size_t size);

/*
 * The slot name of (tree, branch, build_mode, build) into out (at least
 * SLOTS_NAME_MAX + 1 bytes): "SERIES.MODE.HASH" where SERIES and MODE are
 * cut to SLOTS_SERIES_SHOWN and SLOTS_MODE_SHOWN bytes, characters outside
 * [A-Za-z0-9._+-] become '_', and HASH (12 hex digits, FNV-1a) covers
 * tree, series, build mode, buildtype, c_args and every meson option
 * (name and value, in name order).  build is the job spec's "build"
 * object.  Returns 0, or -1 with err (PG_EINVAL: an empty name, a build
 * object without buildtype or with a non-string option).
 */
int slot_name(const char *tree, const char *branch, const char *build_mode,
	      const cJSON *build, char *out, size_t size, struct pg_err *err);

struct slot_entry {
	char tree[WS_NAME_MAX + 1];
	char name[WS_NAME_MAX + 1];	/* slot_name() */
	char dir[WS_NAME_MAX + 1];	/* the directories' prefix: name, or a
					 * legacy build mode name (adopted) */
	uint64_t last_use;		/* the index's counter at its last use */
	int64_t used_at;		/* seconds since the epoch, for people */
};

struct slot_index {
	struct slot_entry *v;
	size_t n;
	uint64_t seq;			/* the last use counter handed out */
};

/* Parse index.json text; an empty index for len 0.  Returns 0, or -1 with
 * err (PG_EINVAL for a malformed index, PG_ENOMEM). */
int slot_index_parse(const char *text, size_t len, struct slot_index *ix,
		     struct pg_err *err);

/* The index as JSON (cJSON_Delete() it); NULL when out of memory. */
cJSON *slot_index_to_json(const struct slot_index *ix);

void slot_index_release(struct slot_index *ix);

/*
 * The least recently used entry other than index in_use (-1: none in use),
 * or -1 when there is no other entry.
 */
long slot_lru_victim(const struct slot_index *ix, long in_use);

/* What slot_plan() decided. */
struct slot_use {
	char name[WS_NAME_MAX + 1];
	char dir[WS_NAME_MAX + 1];
	const char *state;		/* "reused", "new" or "adopted" */
	struct slot_entry *evicted;	/* malloc'd; removed from the index */
	size_t n_evicted;
	size_t n_slots;			/* slots kept after this one was added */
	int max_slots;
};

void slot_use_release(struct slot_use *u);

/*
 * Pure: take slot `name` of `tree` in ix for a job at now_s.  An entry
 * already there is reused; else, when legacy_present and no entry of the
 * tree uses legacy_dir yet, legacy_dir is adopted; else the slot is new
 * (dir = name).  Its last_use becomes ++seq.  Then, while ix holds more
 * than max_slots entries, the least recently used other entry moves from
 * ix to u->evicted.  Returns 0, or -1 with err (PG_ENOMEM, PG_EINVAL: a bad
 * name or max_slots < 1).
 */
int slot_plan(struct slot_index *ix, const char *tree, const char *name,
	      const char *legacy_dir, bool legacy_present, int max_slots, int64_t now_s,
	      struct slot_use *u, struct pg_err *err);

/*
 * slot_plan() on WORK/slots/index.json, with the legacy directories of
 * build_mode (WORK/slots/TREE/MODE-base) adopted when they exist, the
 * evicted slots' directories removed (a failure to remove one is logged
 * and the slot dropped all the same: the job goes on), and the index
 * written back.  Returns 0, or -1 with err (PG_EIO, PG_EINVAL, PG_ENOMEM).
 */
int slot_acquire(const char *work_dir, const char *tree, const char *name,
		 const char *build_mode, int max_slots, struct slot_use *u, struct pg_err *err);

/* The allocated size of WORK/slots (every slot, index and strays), never
 * following a symbolic link, within SLOTS_SIZE_BUDGET_MS: see
 * build_tree_size(). */
int slot_total_size(const char *work_dir, uint64_t *bytes, bool *complete,
		    struct pg_err *err);

#endif
