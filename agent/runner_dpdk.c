/* SPDX-License-Identifier: MIT */
/* The DPDK runner: workspace, apply, build, interleaved benchmarks. */
#include "runner_dpdk.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "bench_exec.h"
#include "build.h"
#include "buf.h"
#include "fmt.h"
#include "fsutil.h"
#include "harness.h"
#include "hostcheck.h"
#include "hostgate.h"
#include "jobspec.h"
#include "json.h"
#include "log.h"
#include "portcheck.h"
#include "profile.h"
#include "slots.h"
#include "timeutil.h"
#include "workspace.h"
#include "ws_child.h"

#define RUNNER_MBOX_MAX WS_MBOX_MAX
#define RUNNER_MAX_DEPS 32
#define RUNNER_MAX_BENCH 32
#define RUNNER_LOG_CHUNK (64 * 1024)
#define RUNNER_BUILD_TIMEOUT_S (3 * 60 * 60)
#define RUNNER_SIDES 2
/* A result's detail, and the part of a failed build's log tail in it. */
#define RUNNER_DETAIL_MAX 8192
#define RUNNER_DETAIL_TAIL 4096
#define RUNNER_LOAD_WAITS_MAX 256

static const char *const runner_side_name[RUNNER_SIDES] = { "base", "patched" };
static const char *const runner_hugepage_dev[] = { "/dev/hugepages", NULL };

/* One of host.ports (lib/jobspec.h): pci and driver, or vdev. */
struct spec_port {
	const char *pci, *driver, *vdev;
	int numa_node;		/* -1 when not set */
};

/* The device nodes a run may open: /dev/hugepages, and for vfio-pci
 * ports /dev/vfio/vfio and each port's /dev/vfio/GROUP. */
#define RUNNER_MAX_DEVS (PROFILE_MAX_PORTS + 3)

/* The job spec, as this runner reads it. */
struct dpdk_spec {
	const char *tree, *url, *branch, *base_commit, *version;	/* version may be NULL */
	const char *build_mode;
	const cJSON *build;
	const char *mbox_url;		/* NULL for a baseline */
	/* A baseline (lib/jobspec.h): base_commit alone, one build measured
	 * as both sides, no series to apply. */
	bool baseline;
	const char *baseline_trigger;
	const char *dep_urls[RUNNER_MAX_DEPS];
	size_t n_deps;
	size_t n_missing_deps;
	struct bench_def bench[RUNNER_MAX_BENCH];
	size_t n_bench;
	int repetitions;
	int repetition_base;	/* a follow-up's first repetition number */
	bool hugepages;		/* host.hugepages: /dev/hugepages in the sandbox */
	struct spec_port ports[PROFILE_MAX_PORTS];	/* host.ports */
	size_t n_ports;
};

/* Everything one job holds. */
struct dpdk_job {
	const struct agent_run *run;
	struct dpdk_spec spec;
	char *mirror;
	char *src[RUNNER_SIDES];
	char build_dir[RUNNER_SIDES][PATH_MAX];
	char job_dir[PATH_MAX];
	/* Checkout and apply run in a child behind the sandbox; io_dir
	 * (JOB_DIR/ws) holds what it reads and writes besides the slot. */
	struct ws_child ws;
	struct ws_child_cfg ws_cfg;
	char io_dir[PATH_MAX];
	char self_exe[PATH_MAX];
	uint64_t apply_bytes, apply_files;	/* what the series wrote so far */
	struct pg_apply_result apply;	/* of the last mbox applied */
	const char *apply_what;		/* "series" or "prerequisite series" */
	size_t n_applied;		/* patches applied, all mboxes */
	size_t n_method[PG_APPLY_N_METHODS];	/* patches applied per method */
	bool all_already;		/* every patch of the series (not of its
					 * prerequisites) is already applied */
	struct build_result build[RUNNER_SIDES];
	/* The build slot (agent/slots.h) of both sides, and the size of all
	 * slots after the builds. */
	struct slot_use slot;
	bool slots_sized, slots_size_complete;
	uint64_t slots_bytes;
	struct hostcheck host;
	struct portcheck_port port_facts[PROFILE_MAX_PORTS];	/* spec.ports' PCI ones */
	size_t n_port_facts;
	char dev_store[RUNNER_MAX_DEVS][64];
	const char *dev_paths[RUNNER_MAX_DEVS + 1];	/* NULL-terminated */
	const struct sandbox_cfg *sandbox;	/* this job's, or NULL: unsandboxed */
	bool harness_on;	/* subset harness applied on both sides */
	bool harness_fallback;
	int harness_lines;	/* result lines the fallback stops after */
	cJSON *samples;
	cJSON *warnings;
	struct pg_buf failures;	/* "; "-separated run failures */
	size_t runs_done, runs_total;
	/* The quiet check before each run (hostcheck.h): runs checked, runs
	 * that waited, runs started busy all the same, the time waited, and
	 * the most other work seen at a run's start, in CPUs. */
	unsigned int quiet_runs, quiet_waited, quiet_busy;
	int64_t quiet_wait_ms;
	double quiet_busy_max;
	/* The host gate (hostgate.h): the class's demands, what the hugepage
	 * check found, whether the lcores are isolated / nohz_full (-1: the
	 * host has no such CPUs), and the max_load waits: measured runs
	 * checked, runs that waited, time waited in all and at most, and the
	 * runs that waited ({"run", "ms"}, at most RUNNER_LOAD_WAITS_MAX). */
	struct hostgate_class gate;
	struct hostgate_huge huge;
	bool huge_checked;
	int lcores_isolated, lcores_nohz_full;
	unsigned int load_runs, load_waited;
	int64_t load_wait_ms, load_wait_max_ms;
	cJSON *load_waits;
	/* Wall-clock milliseconds per stage, for the fingerprint's
	 * "timings": what a job costs beyond its builds and benchmarks. */
	int64_t t_start, ms_prepare, ms_fetch, ms_apply, ms_build[RUNNER_SIDES];
	int64_t ms_bench_wall, ms_bench_runs;
};

static void spec_release(struct dpdk_spec *s)
{
	for (size_t i = 0; i < s->n_bench; i++)
		bench_def_release(&s->bench[i]);
	memset(s, 0, sizeof(*s));
}

/* host.ports; the agent checks the PCI ones against sysfs before the
 * benchmarks, so the form is checked here as the profile loader does. */
static int spec_ports(const cJSON *host, struct dpdk_spec *s, struct pg_err *err)
{
	const cJSON *arr = NULL, *it;

	if (pg_json_get_array(host, JS_HOST_PORTS, false, &arr, err) < 0)
		return -1;
	if (!arr)
		return 0;
	if (cJSON_GetArraySize(arr) > PROFILE_MAX_PORTS)
		return pg_err_set(err, PG_EINVAL, "host.ports: more than %d", PROFILE_MAX_PORTS);
	cJSON_ArrayForEach(it, arr) {
		struct spec_port *p = &s->ports[s->n_ports];
		int64_t node = -1;

		p->numa_node = -1;
		if (!cJSON_IsObject(it) ||
		    pg_json_get_string(it, JS_PORT_PCI, false, &p->pci, err) < 0 ||
		    pg_json_get_string(it, JS_PORT_DRIVER, false, &p->driver, err) < 0 ||
		    pg_json_get_string(it, JS_PORT_VDEV, false, &p->vdev, err) < 0 ||
		    pg_json_get_int(it, JS_PORT_NUMA_NODE, false, 0, 1023, &node, err) < 0 ||
		    !p->pci == !p->vdev || (p->pci && !p->driver) ||
		    (p->driver && (!*p->driver || strchr(p->driver, '/'))))
			return pg_err_set(err, PG_EINVAL, "host.ports[%zu]: expected {pci, driver} "
					  "or {vdev}", s->n_ports);
		p->numa_node = (int)node;
		s->n_ports++;
	}
	return 0;
}

static int spec_read(const cJSON *job, struct dpdk_spec *s, struct pg_err *err)
{
	const cJSON *tree, *series = NULL, *deps = NULL, *benches, *it, *bl = NULL;
	const cJSON *host = NULL;
	const char *reason = NULL;
	int64_t reps = 0, rep_base = 0;

	memset(s, 0, sizeof(*s));
	if (pg_json_get_object(job, JS_TREE, true, &tree, err) < 0 ||
	    pg_json_get_string(tree, JS_TREE_NAME, true, &s->tree, err) < 0 ||
	    pg_json_get_string(tree, JS_TREE_URL, true, &s->url, err) < 0 ||
	    pg_json_get_string(tree, JS_TREE_BRANCH, true, &s->branch, err) < 0 ||
	    pg_json_get_string(tree, JS_TREE_BASE_COMMIT, true, &s->base_commit, err) < 0)
		goto fail_tree;
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(tree, JS_TREE_VERSION)))
		s->version = cJSON_GetObjectItemCaseSensitive(tree, JS_TREE_VERSION)->valuestring;
	if (pg_json_get_string(job, JS_REASON, false, &reason, err) < 0)
		goto fail;
	s->baseline = reason && strcmp(reason, JS_REASON_BASELINE) == 0;
	if (s->baseline &&
	    (pg_json_get_object(job, JS_BASELINE, true, &bl, err) < 0 ||
	     pg_json_get_string(bl, JS_BASELINE_TRIGGER, true, &s->baseline_trigger, err) < 0))
		goto fail;
	if (pg_json_get_string(job, JS_BUILD_MODE, true, &s->build_mode, err) < 0 ||
	    pg_json_get_object(job, JS_BUILD, true, &s->build, err) < 0 ||
	    (!s->baseline &&
	     (pg_json_get_object(job, JS_SERIES, true, &series, err) < 0 ||
	      pg_json_get_string(series, JS_SERIES_MBOX_URL, true, &s->mbox_url, err) < 0 ||
	      pg_json_get_array(job, JS_DEPENDS_ON, false, &deps, err) < 0)) ||
	    pg_json_get_array(job, JS_BENCHMARKS, true, &benches, err) < 0 ||
	    pg_json_get_int(job, JS_REPETITIONS, true, 1, 10000, &reps, err) < 0 ||
	    pg_json_get_int(job, JS_REPETITION_BASE, false, 0, 1000000, &rep_base, err) < 0 ||
	    pg_json_get_object(job, JS_HOST, false, &host, err) < 0 ||
	    (host && pg_json_get_bool(host, JS_HOST_HUGEPAGES, false, &s->hugepages, err) < 0))
		goto fail;
	s->repetitions = (int)reps;
	s->repetition_base = (int)rep_base;
	if (host && spec_ports(host, s, err) < 0)
		goto fail;
	if (deps) {
		cJSON_ArrayForEach(it, deps) {
			const cJSON *u = cJSON_GetObjectItemCaseSensitive(it, JS_SERIES_MBOX_URL);
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, JS_DEP_MISSING);

			if (cJSON_IsTrue(m) || !cJSON_IsString(u)) {
				s->n_missing_deps++;
				continue;
			}
			if (s->n_deps == RUNNER_MAX_DEPS) {
				pg_err_set(err, PG_EINVAL, "field 'depends_on': more than %d",
					   RUNNER_MAX_DEPS);
				goto fail;
			}
			s->dep_urls[s->n_deps++] = u->valuestring;
		}
	}
	if (cJSON_GetArraySize(benches) < 1 || cJSON_GetArraySize(benches) > RUNNER_MAX_BENCH) {
		pg_err_set(err, PG_EINVAL, "field 'benchmarks': 1 to %d expected", RUNNER_MAX_BENCH);
		goto fail;
	}
	cJSON_ArrayForEach(it, benches) {
		if (bench_def_from_json(it, &s->bench[s->n_bench], err) < 0) {
			pg_err_prefix(err, "benchmarks[%zu]", s->n_bench);
			goto fail;
		}
		s->n_bench++;
	}
	return 0;
fail_tree:
	pg_err_prefix(err, JS_TREE);
fail:
	pg_err_prefix(err, "job spec");
	spec_release(s);
	return -1;
}

int agent_runner_dpdk_check_spec(const cJSON *spec, struct pg_err *err)
{
	struct dpdk_spec s;
	int rc = -1;

	if (spec_read(spec, &s, err) < 0)
		return -1;
	for (size_t i = 0; i < s.n_bench; i++) {
		struct harness_subset subset;

		if (s.bench[i].subset &&
		    harness_subset_from_json(s.bench[i].subset_json, &subset, err) < 0) {
			pg_err_prefix(err, "job spec: benchmark %s", s.bench[i].name);
			goto out;
		}
	}
	rc = 0;
out:
	spec_release(&s);
	return rc;
}

/* Upload text as the log of stage, in chunks. */
static void job_log(struct dpdk_job *j, const char *stage, const char *text, size_t len)
{
	for (size_t off = 0; off < len; off += RUNNER_LOG_CHUNK) {
		size_t n = len - off < RUNNER_LOG_CHUNK ? len - off : RUNNER_LOG_CHUNK;

		j->run->log(j->run->arg, stage, text + off, n);
	}
}

static void job_logf(struct dpdk_job *j, const char *stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void job_logf(struct dpdk_job *j, const char *stage, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT(16384);
	va_list ap;

	va_start(ap, fmt);
	if (pg_buf_vprintf(&b, fmt, ap) == 0)
		job_log(j, stage, b.data, b.len);
	va_end(ap);
	pg_buf_release(&b);
}

static int job_warn(struct dpdk_job *j, const char *text)
{
	cJSON *s = cJSON_CreateString(text);

	if (!s || !cJSON_AddItemToArray(j->warnings, s)) {
		cJSON_Delete(s);
		return -1;
	}
	pg_log_warn("runner", "job %lld: %s", (long long)j->run->job->id, text);
	return 0;
}

static bool job_stopped(const struct dpdk_job *j)
{
	return j->run->stopped(j->run->arg);
}

static void runner_ws_log(void *arg, const char *text, size_t len)
{
	job_log(arg, "apply", text, len);
}

static bool runner_ws_stopped(void *arg)
{
	return job_stopped(arg);
}

/* The workspace child's settings for this job (j->sandbox decided). */
static int job_ws_init(struct dpdk_job *j, struct pg_err *err)
{
	const struct agent_run *run = j->run;

	if (pg_fmt(j->io_dir, sizeof(j->io_dir), "%s/ws", j->job_dir) < 0)
		return pg_err_set(err, PG_EINVAL, "work_dir: path too long");
	if (run->self_exe) {
		if (pg_fmt(j->self_exe, sizeof(j->self_exe), "%s", run->self_exe) < 0)
			return pg_err_set(err, PG_EINVAL, "the agent's path is too long");
	} else if (ws_child_self_exe(j->self_exe, sizeof(j->self_exe), err) < 0) {
		return -1;
	}
	if (run->apply)
		j->ws_cfg = *run->apply;
	else
		ws_child_cfg_init(&j->ws_cfg);
	j->ws.self_exe = j->self_exe;
	j->ws.sandbox = j->sandbox;
	j->ws.cfg = &j->ws_cfg;
	j->ws.io_dir = j->io_dir;
	j->ws.log = runner_ws_log;
	j->ws.stopped = runner_ws_stopped;
	j->ws.arg = j;
	return 0;
}

/* The build log streamed to the controller as it comes. */
struct build_log_arg {
	struct dpdk_job *j;
	const char *stage;
};

static void runner_build_log(void *arg, const char *text, size_t len)
{
	struct build_log_arg *a = arg;

	job_log(a->j, a->stage, text, len);
}

/* ninja's [N/M] as the stage's progress: a cold build's 2,000-odd steps
 * take minutes, and 0 % until the end says nothing. */
static void runner_build_progress(void *arg, long done, long total)
{
	struct build_log_arg *a = arg;

	if (total > 0 && done >= 0 && done <= total)
		a->j->run->progress(a->j->run->arg, a->stage,
				    (int)((double)done * 100.0 / (double)total));
}

static bool runner_build_stopped(void *arg)
{
	struct build_log_arg *a = arg;

	return job_stopped(a->j);
}

/*
 * Fetch and apply the prerequisites' mboxes, then the series', on the
 * patched side, each in one workspace child (ws_child_apply(): the limits
 * count over all of them).  0 all applied, 1 an apply failure (j->apply
 * says where; j->apply_what which mbox), 2 stopped, -1 (err).
 */
static int job_fetch_apply(struct dpdk_job *j, struct pg_err *err)
{
	const struct dpdk_spec *s = &j->spec;
	int rc = 0;

	for (size_t i = 0; i <= s->n_deps && rc == 0; i++) {
		const char *url = i < s->n_deps ? s->dep_urls[i] : s->mbox_url;
		struct pg_buf mbox = PG_BUF_INIT(RUNNER_MBOX_MAX);
		int64_t t = pg_time_mono_ms();

		j->apply_what = i < s->n_deps ? "prerequisite series" : "series";
		if (j->run->fetch(j->run->arg, url, &mbox, err) < 0) {
			pg_buf_release(&mbox);
			pg_err_prefix(err, "%s mbox", j->apply_what);
			return -1;
		}
		j->ms_fetch += pg_time_mono_ms() - t;
		pg_apply_result_release(&j->apply);
		rc = ws_child_apply(&j->ws, j->src[1], j->mirror, mbox.data ? mbox.data : "",
				    mbox.len, &j->apply_bytes, &j->apply_files, &j->apply, err);
		pg_buf_release(&mbox);
		if (rc < 0)
			pg_err_prefix(err, "%s", j->apply_what);
		for (size_t k = 0; (rc == 0 || rc == 1) && k < j->apply.n_patches; k++) {
			enum pg_apply_method m = j->apply.patches[k].method;

			if (m == PG_APPLY_EXACT || m == PG_APPLY_OFFSET || m == PG_APPLY_3WAY ||
			    m == PG_APPLY_ALREADY)
				j->n_method[m]++;
		}
		if (rc == 0 || rc == 1)
			j->n_applied += j->apply.n_applied;
		if (rc == 0 && i == s->n_deps)
			j->all_already = j->apply.n_patches > 0 &&
					 j->apply.n_already == j->apply.n_patches;
	}
	return rc;
}

/* The worktree slot of a side: "DIR-base", "DIR-patched", DIR the build
 * slot's (job_slot_acquire()). */
static int job_slot(const struct dpdk_job *j, int side, char *out, size_t size,
		    struct pg_err *err)
{
	if (pg_fmt(out, size, "%s-%s", j->slot.dir, runner_side_name[side]) < 0)
		return pg_err_set(err, PG_EINVAL, "build slot '%.64s': name too long",
				  j->slot.dir);
	return 0;
}

/* Take the job's build slot (agent/slots.h), evicting the least recently
 * used one when the agent holds its bound, and say so in the log. */
static int job_slot_acquire(struct dpdk_job *j, struct pg_err *err)
{
	char name[WS_NAME_MAX + 1];
	int max = j->run->max_build_slots > 0 ? j->run->max_build_slots : SLOTS_MAX_DEFAULT;
	struct pg_buf ev = PG_BUF_INIT(4096);
	int rc = -1;

	if (slot_name(j->spec.tree, j->spec.branch, j->spec.build_mode, j->spec.build, name,
		      sizeof(name), err) < 0 ||
	    slot_acquire(j->run->work_dir, j->spec.tree, name, j->spec.build_mode, max, &j->slot,
			 err) < 0)
		goto out;
	for (size_t i = 0; i < j->slot.n_evicted; i++)
		if (pg_buf_printf(&ev, "%s%s/%s", i ? ", " : "", j->slot.evicted[i].tree,
				  j->slot.evicted[i].name) < 0 && errno != E2BIG) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			goto out;
		}
	job_logf(j, "apply", "build slot %s/%s (%s%s%s; %zu of at most %d slots)%s%s\n",
		 j->spec.tree, j->slot.name, j->slot.state,
		 strcmp(j->slot.dir, j->slot.name) ? ", directories " : "",
		 strcmp(j->slot.dir, j->slot.name) ? j->slot.dir : "", j->slot.n_slots, max,
		 ev.len ? "; evicted " : "", pg_buf_str(&ev));
	rc = 0;
out:
	pg_buf_release(&ev);
	return rc;
}

/* The size of every slot after the builds, for the log and the
 * fingerprint: a failure to measure is a note, not a failed job. */
static void job_slot_size(struct dpdk_job *j, const char *stage)
{
	struct pg_err e = PG_ERR_INIT;
	int64_t t = pg_time_mono_ms();

	if (slot_total_size(j->run->work_dir, &j->slots_bytes, &j->slots_size_complete, &e) < 0) {
		job_logf(j, stage, "perfgate: build slots: size unknown: %s\n", e.msg);
		return;
	}
	j->slots_sized = true;
	job_logf(j, stage, "perfgate: build slots: %s%.1f MiB in %s/slots (%lld ms)\n",
		 j->slots_size_complete ? "" : "at least ",
		 (double)j->slots_bytes / (1024.0 * 1024.0), j->run->work_dir,
		 (long long)(pg_time_mono_ms() - t));
}

/* Check out the base commit in a side's worktree (again), in the
 * workspace child.  0, 1 stopped, -1. */
static int job_checkout(struct dpdk_job *j, int side, struct pg_err *err)
{
	char slot[160];
	int rc;

	free(j->src[side]);
	j->src[side] = NULL;
	if (job_slot(j, side, slot, sizeof(slot), err) < 0)
		return -1;
	rc = ws_child_checkout(&j->ws, j->run->work_dir, j->spec.tree, slot, j->mirror,
			       j->spec.base_commit, &j->src[side], err);
	if (rc < 0)
		pg_err_prefix(err, "%s worktree", runner_side_name[side]);
	return rc;
}

/* The sides checked out and built: both, or for a baseline the base
 * alone, whose build then runs as both sides (A/A). */
static int job_built_sides(const struct dpdk_job *j)
{
	return j->spec.baseline ? 1 : RUNNER_SIDES;
}

/* The subset of the first mempool benchmark in mode subset, or NULL. */
static const struct bench_def *job_subset_bench(const struct dpdk_job *j)
{
	for (size_t i = 0; i < j->spec.n_bench; i++)
		if (j->spec.bench[i].subset)
			return &j->spec.bench[i];
	return NULL;
}

/*
 * The harness on both sides or neither: base first (upstream code), then
 * patched (the series may have changed the test).  When the patched side
 * refuses it, the base side goes back to the unmodified test.
 */
static int job_harness(struct dpdk_job *j, struct pg_err *err)
{
	const struct bench_def *b = job_subset_bench(j);
	struct harness_subset subset;
	struct pg_err why = PG_ERR_INIT;
	bool applied[RUNNER_SIDES] = { false, false }, restored;
	char w[512];

	if (!b)
		return 0;
	if (harness_subset_from_json(b->subset_json, &subset, err) < 0)
		return pg_err_prefix(err, "benchmark %s", b->name), -1;
	j->harness_lines = (int)harness_subset_lines(&subset);
	if (j->spec.baseline)
		applied[1] = true;	/* one tree measured as both sides */
	for (int side = 0; side < job_built_sides(j); side++) {
		if (harness_apply_file(j->src[side], &subset, &applied[side], &why) < 0) {
			*err = why;
			return pg_err_prefix(err, "harness on the %s side", runner_side_name[side]), -1;
		}
		if (!applied[side]) {
			pg_fmt_cut(w, sizeof(w), "the mempool harness does not fit the %s side "
				   "(%s): the unmodified test runs on both sides and stops after "
				   "%d result lines", runner_side_name[side], why.msg,
				   b->stop_after_lines ? b->stop_after_lines : j->harness_lines);
			break;
		}
	}
	if (applied[0] && applied[1]) {
		j->harness_on = true;
		return 0;
	}
	j->harness_fallback = true;
	if (applied[0] && harness_restore_file(j->src[0], &restored, err) < 0)
		return pg_err_prefix(err, "harness: restoring the base side"), -1;
	if (job_warn(j, w) < 0)
		return pg_err_set(err, PG_ENOMEM, "out of memory"), -1;
	return 0;
}

/* Build one side; 0 built, 1 the build failed (a recorded outcome), -1. */
static int job_build(struct dpdk_job *j, int side, struct pg_err *err)
{
	const char *stage = side ? "build-patched" : "build-base";
	struct build_log_arg la = { j, stage };
	char ccache[PATH_MAX], shared[PATH_MAX], slot[160], log_path[PATH_MAX];
	const char *targets[RUNNER_MAX_BENCH + 1];
	const char *buildtype = NULL, *c_args = NULL;
	const cJSON *opts = NULL;
	struct build_spec b;
	char *dir = NULL;
	size_t nt = 0;
	int n;

	if (pg_json_get_string(j->spec.build, JS_BUILD_BUILDTYPE, true, &buildtype, err) < 0 ||
	    pg_json_get_object(j->spec.build, JS_BUILD_MESON_OPTIONS, true, &opts, err) < 0 ||
	    pg_json_get_string(j->spec.build, JS_BUILD_C_ARGS, false, &c_args, err) < 0)
		return pg_err_prefix(err, "job spec: build"), -1;
	if (job_slot(j, side, slot, sizeof(slot), err) < 0 ||
	    ws_build_dir(j->run->work_dir, j->spec.tree, slot, &dir, err) < 0)
		return -1;
	n = pg_fmt(j->build_dir[side], sizeof(j->build_dir[side]), "%s", dir);
	free(dir);
	if (n < 0)
		return pg_err_set(err, PG_EINVAL, "work_dir: path too long");
	/* One ccache per build type (debug info and -O levels never hit
	 * across them anyway) and side: a patched build writes only its own
	 * (TYPE-patched), so that nothing compiled from a patch reaches a
	 * base build, and reads the base builds' objects from TYPE-shared,
	 * which base builds fill.  A follow-up round or a second run of a
	 * series that touches a header then hits its own objects instead of
	 * compiling half of DPDK again. */
	if (pg_fmt(ccache, sizeof(ccache), "%s/ccache/%s%s", j->run->work_dir, buildtype,
		   side ? "-patched" : "") < 0 ||
	    pg_fmt(shared, sizeof(shared), "%s/ccache/%s-shared", j->run->work_dir,
		   buildtype) < 0 ||
	    pg_fmt(log_path, sizeof(log_path), "%s/%s.log", j->job_dir, stage) < 0)
		return pg_err_set(err, PG_EINVAL, "work_dir: path too long");
	/* Only what the benchmarks run (ninja targets are paths in the build
	 * directory), once each. */
	for (size_t i = 0; i < j->spec.n_bench; i++) {
		size_t k = 0;

		while (k < nt && strcmp(targets[k], j->spec.bench[i].program) != 0)
			k++;
		if (k == nt)
			targets[nt++] = j->spec.bench[i].program;
	}
	targets[nt] = NULL;
	memset(&b, 0, sizeof(b));
	b.src_dir = j->src[side];
	b.build_dir = j->build_dir[side];
	b.ccache_dir = ccache;
	b.ccache_basedir = j->run->work_dir;
	b.ccache_readonly = false;
	/* ccache's URL takes no odd characters: such a work_dir goes without. */
	if (build_ccache_url_ok(shared)) {
		b.ccache_shared_dir = shared;
		b.ccache_shared_readonly = side == 1;
	}
	b.log_path = log_path;
	b.buildtype = buildtype;
	b.meson_options = opts;
	b.c_args = c_args;
	b.targets = targets;
	b.expect_version = j->spec.version;
	b.timeout_s = RUNNER_BUILD_TIMEOUT_S;
	b.sandbox = j->sandbox;
	b.log = runner_build_log;
	b.stopped = runner_build_stopped;
	b.progress = runner_build_progress;
	b.arg = &la;
	j->run->progress(j->run->arg, stage, 0);
	if (build_dpdk(&b, &j->build[side], err) < 0)
		return pg_err_prefix(err, "%s", stage), -1;
	if (j->build[side].sandbox_failed)
		return pg_err_set(err, PG_EIO, "%s: the sandbox did not start: %s", stage,
				  j->build[side].failed_step ? j->build[side].failed_step : "?"), -1;
	return j->build[side].ok ? 0 : 1;
}

/* Append one run's samples to j->samples. */
static int job_add_samples(struct dpdk_job *j, const struct bench_def *b, int side, int rep,
			   unsigned frame_size, const struct bench_output *o)
{
	for (size_t i = 0; i < o->n; i++) {
		cJSON *s = cJSON_CreateObject();
		char sized[BENCH_KEY_MAX + 16];
		const char *key = o->samples[i].key;

		/* a "fwd" run's keys name its frame size (profile.h) */
		if (frame_size) {
			if (profile_fwd_key(frame_size, key, sized, sizeof(sized)) < 0) {
				cJSON_Delete(s);
				continue;	/* no such key comes from the parser */
			}
			key = sized;
		}
		if (!s || !cJSON_AddItemToArray(j->samples, s) ||
		    !cJSON_AddStringToObject(s, "side", runner_side_name[side]) ||
		    !cJSON_AddStringToObject(s, "benchmark", b->name) ||
		    !cJSON_AddStringToObject(s, "metric", key) ||
		    !cJSON_AddNumberToObject(s, "repetition", rep) ||
		    !cJSON_AddNumberToObject(s, "value", o->samples[i].value) ||
		    !cJSON_AddStringToObject(s, "unit", o->samples[i].unit ? o->samples[i].unit : "") ||
		    !cJSON_AddBoolToObject(s, "higher_is_better",
					   profile_key_higher_is_better(key)))
			return -1;
	}
	return 0;
}

/*
 * The host gate (hostgate.h) before anything is built: the class's
 * requirements against the host check's facts, and its hugepages.  With
 * hugepages_only, the hugepage check alone (again before the benchmarks:
 * a leftover may have taken them meanwhile).  0, or -1 with err saying
 * why the host is refused (an infra-error).
 */
static int job_host_gate(struct dpdk_job *j, bool hugepages_only, struct pg_err *err)
{
	char msg[HOSTGATE_MSG_MAX];

	if (!hugepages_only) {
		if (hostgate_class_from_spec(j->run->job->json, &j->gate, err) < 0)
			return -1;
		if (hostgate_require_check(&j->host, &j->gate, msg, sizeof(msg)) != 0) {
			job_logf(j, "prepare", "%s\n", msg);
			return pg_err_set(err, PG_EINVAL, "%s", msg);
		}
		/* Recorded whether required or not: lcores off the isolated
		 * CPUs explain a noisy host. */
		j->lcores_isolated = j->host.isolated[0] && j->gate.lcores ?
				     hostgate_cpus_within(j->gate.lcores, j->host.isolated) : -1;
		j->lcores_nohz_full = j->host.nohz_full[0] && j->gate.lcores ?
				      hostgate_cpus_within(j->gate.lcores, j->host.nohz_full) : -1;
	}
	if (hostgate_hugepages_check(NULL, &j->gate, &j->huge, msg, sizeof(msg)) != 0) {
		job_logf(j, hugepages_only ? "bench" : "prepare", "%s\n", msg);
		return pg_err_set(err, PG_EINVAL, "%s", msg);
	}
	j->huge_checked = j->gate.hugepages;
	if (j->huge_checked && !hugepages_only)
		job_logf(j, "prepare", "hugepages: %llu free pages of %llu kB%s, %d MB needed\n",
			 (unsigned long long)j->huge.free_pages, (unsigned long long)j->huge.page_kb,
			 j->gate.numa_node >= 0 ? " on the class's node" : "", j->gate.memory_mb);
	return 0;
}

/* The max_load wait before a measured run (hostgate.h): a host that
 * stays busy fails the job.  0, 1 when stopped, -1. */
static int job_wait_load(struct dpdk_job *j, struct pg_err *err)
{
	struct hostgate_proc p = { NULL, runner_ws_stopped, j };
	struct hostgate_load_src src;
	struct hostgate_load_wait w;
	unsigned int cpus = j->host.cpus ? j->host.cpus : 1;
	char msg[HOSTGATE_MSG_MAX];
	int r;

	if (!j->gate.has_max_load)
		return 0;
	j->load_runs++;
	hostgate_proc_src(&p, &src);
	r = hostgate_wait_load(&src, j->gate.max_load, HOSTCHECK_QUIET_LIMIT_CPUS / cpus,
			       HOSTGATE_POLL_MS, (int64_t)j->gate.max_load_wait_s * 1000, &w, err);
	if (r)
		return r;
	j->load_wait_ms += w.waited_ms;
	if (w.waited_ms > j->load_wait_max_ms)
		j->load_wait_max_ms = w.waited_ms;
	if (w.waited_ms) {
		cJSON *o;

		j->load_waited++;
		if (cJSON_GetArraySize(j->load_waits) < RUNNER_LOAD_WAITS_MAX &&
		    (!(o = cJSON_CreateObject()) || !cJSON_AddItemToArray(j->load_waits, o) ||
		     !cJSON_AddNumberToObject(o, "run", j->load_runs) ||
		     !cJSON_AddNumberToObject(o, "ms", (double)w.waited_ms))) {
			cJSON_Delete(o);
			return pg_err_set(err, PG_ENOMEM, "out of memory");
		}
	}
	if (!w.calm) {
		hostgate_load_reason(&w, j->gate.max_load, HOSTCHECK_QUIET_LIMIT_CPUS, cpus,
				     j->load_runs, msg, sizeof(msg));
		job_logf(j, "bench", "== %s\n", msg);
		return pg_err_set(err, PG_EIO, "%s", msg);
	}
	if (w.waited_ms)
		job_logf(j, "bench", "== waited %.1f s for load %.2f within max_load %g\n",
			 w.waited_ms / 1000.0, w.load1, j->gate.max_load);
	return 0;
}

/* The quiet check before a run (hostcheck.h): wait while other work
 * takes more than HOSTCHECK_QUIET_LIMIT_CPUS, within the run's and the
 * job's bounds, and count what was seen.  0, 1 when stopped, -1. */
static int job_wait_quiet(struct dpdk_job *j, struct pg_err *err)
{
	struct hostcheck_quiet q;
	unsigned int cpus = j->host.cpus ? j->host.cpus : 1;
	int64_t left = HOSTCHECK_QUIET_BUDGET_MS - j->quiet_wait_ms;
	unsigned int wait = left <= 0 ? 0 : left < HOSTCHECK_QUIET_WAIT_MS ? (unsigned int)left :
			    HOSTCHECK_QUIET_WAIT_MS;
	double other;
	int r;

	r = hostcheck_wait_quiet(hostcheck_sampler_proc, NULL, HOSTCHECK_QUIET_SAMPLE_MS, wait,
				 HOSTCHECK_QUIET_LIMIT_CPUS / cpus, runner_ws_stopped, j, &q, err);
	if (r < 0) {
		pg_err_prefix(err, "quiet check");
		return -1;
	}
	if (r > 0)
		return 1;
	other = q.share * cpus;
	j->quiet_runs++;
	j->quiet_wait_ms += q.waited_ms;
	if (q.waited_ms)
		j->quiet_waited++;
	if (!q.quiet) {
		j->quiet_busy++;
		if (other > j->quiet_busy_max)
			j->quiet_busy_max = other;
		job_logf(j, "bench", "== host busy: %.2f CPU of other work after waiting %.1f s "
			 "(limit %.2f): measuring anyway\n", other, q.waited_ms / 1000.0,
			 HOSTCHECK_QUIET_LIMIT_CPUS);
	} else if (q.waited_ms) {
		job_logf(j, "bench", "== waited %.1f s for the host to be quiet (%.2f CPU of other "
			 "work now)\n", q.waited_ms / 1000.0, other);
	}
	return 0;
}

/* Run benchmark b on one side for repetition rep, or, when warm > 0, as
 * its warm-up run number warm: logged, its samples and failure
 * discarded (the measured runs decide). */
static int job_bench_size(struct dpdk_job *j, const struct bench_def *b, int side, int rep,
			  int warm, unsigned frame_size, struct pg_err *err)
{
	struct bench_run_result r;
	struct bench_run_spec rs;
	char prefix[64], log_path[PATH_MAX], fs_text[16], size_tag[24];
	struct pg_buf text = PG_BUF_INIT(0);
	int rc = -1, r_q;

	/* EAL's --file-prefix: unique per run, so that a crashed run's
	 * leftovers never meet the next one. */
	if (pg_fmt(fs_text, sizeof(fs_text), "%u", frame_size) < 0 ||
	    pg_fmt(size_tag, sizeof(size_tag), frame_size ? "-size%u" : "", frame_size) < 0 ||
	    pg_fmt(prefix, sizeof(prefix), "pg%lld_%lld_%s%s%d%s", (long long)j->run->job->id,
		   (long long)j->run->job->attempt, side ? "p" : "b", warm ? "w" : "",
		   warm ? warm : rep, size_tag) < 0)
		return pg_err_set(err, PG_EINVAL, "EAL file prefix too long");
	if (pg_fmt(log_path, sizeof(log_path), "%s/bench-%s-%s-%s%d%s.log", j->job_dir, b->name,
		   runner_side_name[side], warm ? "warmup" : "", warm ? warm : rep, size_tag) < 0)
		return pg_err_set(err, PG_EINVAL, "work_dir: path too long");
	memset(&rs, 0, sizeof(rs));
	rs.def = b;
	rs.build_dir = j->build_dir[side];
	rs.file_prefix = prefix;
	rs.log_path = log_path;
	rs.sandbox = j->sandbox;
	rs.dev_paths = j->dev_paths[0] ? j->dev_paths : NULL;
	rs.frame_size = frame_size ? fs_text : NULL;
	rs.stop_after_lines = b->subset && j->harness_fallback ?
			      (b->stop_after_lines ? b->stop_after_lines : j->harness_lines) : 0;
	rs.stopped = j->run->stopped;
	rs.arg = j->run->arg;
	/* (a warm-up is discarded: it need not wait) */
	if (!warm && ((r_q = job_wait_load(j, err)) != 0 || (r_q = job_wait_quiet(j, err)) != 0))
		return r_q;
	if (warm)
		job_logf(j, "bench", "== %s, %s side, warm-up run %d of %d (discarded)\n", b->name,
			 runner_side_name[side], warm, b->warmup_runs);
	else
		job_logf(j, "bench", "== %s, %s side, repetition %d%s%s\n", b->name,
			 runner_side_name[side], rep, frame_size ? ", frame size " : "",
			 frame_size ? fs_text : "");
	if (bench_run_once(&rs, &r, err) < 0)
		goto out;
	if (r.stopped) {
		rc = 1;
		goto out_release;
	}
	if (r.sandbox_failed) {
		pg_err_set(err, PG_EIO, "%s", r.detail);
		goto out_release;
	}
	/* The run's own output, then what perfgate made of it. */
	if (pg_read_file(log_path, &text, err) == 0 && text.len)
		job_log(j, "bench", text.data, text.len > 4 * RUNNER_LOG_CHUNK ? 4 * RUNNER_LOG_CHUNK :
			text.len);
	job_logf(j, "bench", "== %s, %s%.1f s\n", r.detail, r.fwd_seconds > 0 ? "forwarding " : "",
		 r.fwd_seconds > 0 ? r.fwd_seconds : (double)r.duration_ms / 1000.0);
	j->ms_bench_runs += (int64_t)r.duration_ms;
	if (warm) {
		if (!r.ok)
			job_logf(j, "bench", "== the warm-up run failed (the measured runs decide): "
				 "%s\n", r.detail);
		rc = 0;
		goto out_release;
	}
	if (job_add_samples(j, b, side, rep, frame_size, &r.out) < 0) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out_release;
	}
	if (!r.ok && pg_buf_printf(&j->failures, "%s%s side, repetition %d%s%s: %s",
				    j->failures.len ? "; " : "", runner_side_name[side], rep,
				    frame_size ? ", frame size " : "", frame_size ? fs_text : "",
				    r.detail) < 0 && errno != E2BIG) {
		/* Past its bound the first failures say enough: the rest are in
		 * the bench log; only memory running out is an error. */
		pg_buf_err(&j->failures, err, "the runs' failures");
		goto out_release;
	}
	rc = 0;
out_release:
	bench_run_result_release(&r);
out:
	pg_buf_release(&text);
	return rc;
}

/* Run benchmark b once (see job_bench_size()), or, for a testpmd "fwd"
 * benchmark, once per frame size in the profile's order: one testpmd per
 * size, so that each size starts from the same state (mempools, queues)
 * and a failure at one size leaves the others' results. */
static int job_bench_once(struct dpdk_job *j, const struct bench_def *b, int side, int rep,
			  int warm, struct pg_err *err)
{
	if (!b->n_frame_sizes)
		return job_bench_size(j, b, side, rep, warm, 0, err);
	for (size_t i = 0; i < b->n_frame_sizes; i++) {
		int r = job_bench_size(j, b, side, rep, warm, b->frame_sizes[i], err);

		if (r)
			return r;
	}
	return 0;
}

/* Every benchmark, interleaved.  0, 1 when stopped, -1. */
static int job_benchmarks(struct dpdk_job *j, struct pg_err *err)
{
	j->runs_total = (size_t)j->spec.repetitions * j->spec.n_bench * RUNNER_SIDES;
	for (size_t i = 0; i < j->spec.n_bench; i++)
		j->runs_total += (size_t)j->spec.bench[i].warmup_runs * RUNNER_SIDES;
	/* The warm-ups first, each benchmark's on both sides in the first
	 * repetition's order (bench/noise_pairs.sh's scheme b). */
	for (size_t i = 0; i < j->spec.n_bench; i++) {
		for (int w = 1; w <= j->spec.bench[i].warmup_runs; w++) {
			for (int k = 0; k < RUNNER_SIDES; k++) {
				int side = j->spec.repetition_base % 2 ? RUNNER_SIDES - 1 - k : k;
				int r;

				j->run->progress(j->run->arg, "bench",
						 (int)(j->runs_done * 100 / j->runs_total));
				r = job_bench_once(j, &j->spec.bench[i], side, 0, w, err);
				if (r)
					return r;
				j->runs_done++;
			}
		}
	}
	/* A follow-up's repetitions continue the numbering of the rounds
	 * before it, and so does the alternation of which side goes first. */
	for (int rep = j->spec.repetition_base;
	     rep < j->spec.repetition_base + j->spec.repetitions; rep++) {
		for (size_t i = 0; i < j->spec.n_bench; i++) {
			for (int k = 0; k < RUNNER_SIDES; k++) {
				/* base first on even repetitions, patched first on odd */
				int side = rep % 2 ? RUNNER_SIDES - 1 - k : k;
				int r;

				j->run->progress(j->run->arg, "bench",
						 (int)(j->runs_done * 100 / j->runs_total));
				r = job_bench_once(j, &j->spec.bench[i], side, rep, 0, err);
				if (r)
					return r;
				j->runs_done++;
			}
		}
	}
	return 0;
}

/* The fingerprint's "build_slot": the slot, how it was found, what it
 * evicted, and the size of all slots. */
static int job_fingerprint_slot(const struct dpdk_job *j, cJSON *fp)
{
	cJSON *m = cJSON_AddObjectToObject(fp, "build_slot"), *ev;

	if (!m || !cJSON_AddStringToObject(m, "name", j->slot.name) ||
	    !cJSON_AddStringToObject(m, "dir", j->slot.dir) ||
	    !cJSON_AddStringToObject(m, "state", j->slot.state) ||
	    !cJSON_AddNumberToObject(m, "slots", (double)j->slot.n_slots) ||
	    !cJSON_AddNumberToObject(m, "max_slots", j->slot.max_slots) ||
	    !(ev = cJSON_AddArrayToObject(m, "evicted")))
		return -1;
	for (size_t i = 0; i < j->slot.n_evicted; i++) {
		char s[2 * WS_NAME_MAX + 2];
		cJSON *str;

		pg_fmt_cut(s, sizeof(s), "%s/%s", j->slot.evicted[i].tree, j->slot.evicted[i].name);
		if (!(str = cJSON_CreateString(s)) || !cJSON_AddItemToArray(ev, str)) {
			cJSON_Delete(str);
			return -1;
		}
	}
	if (j->slots_sized &&
	    (!cJSON_AddNumberToObject(m, "total_bytes", (double)j->slots_bytes) ||
	     !cJSON_AddBoolToObject(m, "size_complete", j->slots_size_complete)))
		return -1;
	return 0;
}

/* The host gate's part of the fingerprint: "host_gate" {"lcores",
 * "lcores_isolated" / "lcores_nohz_full" (when the host has such CPUs),
 * "hugepages" (when checked)}, and "load_wait" (with max_load).  0 or -1. */
static int job_fingerprint_gate(struct dpdk_job *j, cJSON *fp)
{
	cJSON *g, *m, *o;

	if (!j->gate.lcores)
		return 0;
	if (!(g = cJSON_AddObjectToObject(fp, "host_gate")) ||
	    !cJSON_AddStringToObject(g, "lcores", j->gate.lcores) ||
	    (j->lcores_isolated >= 0 &&
	     !cJSON_AddBoolToObject(g, "lcores_isolated", j->lcores_isolated == 1)) ||
	    (j->lcores_nohz_full >= 0 &&
	     !cJSON_AddBoolToObject(g, "lcores_nohz_full", j->lcores_nohz_full == 1)))
		return -1;
	if (j->huge_checked &&
	    (!(m = cJSON_AddObjectToObject(g, "hugepages")) ||
	     !cJSON_AddNumberToObject(m, "page_kb", (double)j->huge.page_kb) ||
	     !cJSON_AddNumberToObject(m, "free_pages", (double)j->huge.free_pages) ||
	     !cJSON_AddNumberToObject(m, "need_mb", j->gate.memory_mb) ||
	     (j->huge.node >= 0 && !cJSON_AddNumberToObject(m, "node", j->huge.node))))
		return -1;
	if (!j->gate.has_max_load)
		return 0;
	if (!(m = cJSON_AddObjectToObject(fp, "load_wait")) ||
	    !cJSON_AddNumberToObject(m, "max_load", j->gate.max_load) ||
	    !cJSON_AddNumberToObject(m, "max_wait_s", j->gate.max_load_wait_s) ||
	    !cJSON_AddNumberToObject(m, "runs", j->load_runs) ||
	    !cJSON_AddNumberToObject(m, "waited", j->load_waited) ||
	    !cJSON_AddNumberToObject(m, "wait_ms", (double)j->load_wait_ms) ||
	    !cJSON_AddNumberToObject(m, "wait_ms_max", (double)j->load_wait_max_ms) ||
	    !(o = cJSON_Duplicate(j->load_waits, true)))
		return -1;
	if (!cJSON_AddItemToObject(m, "waits", o)) {
		cJSON_Delete(o);
		return -1;
	}
	return 0;
}

/*
 * The class's PCI ports against sysfs (portcheck.h), and the device nodes
 * the runs may open: /dev/hugepages, and with vfio-pci /dev/vfio/vfio and
 * each port's IOMMU group.  0 ports as the class says, 1 not (why says
 * which), -1 (err).
 */
static int job_ports(struct dpdk_job *j, char *why, size_t why_len, struct pg_err *err)
{
	size_t nd = 0;
	bool vfio = false;

	if (j->spec.hugepages)
		j->dev_paths[nd++] = runner_hugepage_dev[0];
	for (size_t i = 0; i < j->spec.n_ports; i++) {
		const struct spec_port *p = &j->spec.ports[i];
		struct portcheck_port *f = &j->port_facts[j->n_port_facts];
		int r;

		if (!p->pci)
			continue;	/* a virtual port lives in the run itself */
		r = portcheck_pci("", p->pci, p->driver, p->numa_node, f, why, why_len);
		if (r < 0)
			return pg_err_set(err, PG_EINVAL, "port check: %s", why), -1;
		j->n_port_facts++;
		if (r > 0)
			return 1;
		if (strcmp(p->driver, "vfio-pci") != 0)
			continue;
		if (!vfio) {
			j->dev_paths[nd++] = "/dev/vfio/vfio";
			vfio = true;
		}
		if (pg_fmt(j->dev_store[nd], sizeof(j->dev_store[nd]), "/dev/vfio/%s",
			   f->iommu_group) < 0)
			return pg_err_set(err, PG_EINVAL, "IOMMU group name too long"), -1;
		/* two ports of one group share the node */
		for (size_t k = 0; k < nd; k++)
			if (strcmp(j->dev_paths[k], j->dev_store[nd]) == 0)
				goto next;
		j->dev_paths[nd] = j->dev_store[nd];
		nd++;
next:;
	}
	j->dev_paths[nd] = NULL;
	return 0;
}

/* The fingerprint: host facts, host check, DPDK, builds, apply. */
static cJSON *job_fingerprint(struct dpdk_job *j)
{
	cJSON *fp = agent_fingerprint_host(j->run->facts, "dpdk"), *o, *builds, *m;

	if (!fp)
		return NULL;
	if (!(o = hostcheck_to_json(&j->host)) || !cJSON_AddItemToObject(fp, "host_check", o)) {
		cJSON_Delete(o);
		goto fail;
	}
	if ((j->build[0].version &&
	     !cJSON_AddStringToObject(fp, "dpdk_version", j->build[0].version)) ||
	    !cJSON_AddStringToObject(fp, "build_mode", j->spec.build_mode) ||
	    !(o = cJSON_Duplicate(j->spec.build, true)) ||
	    !cJSON_AddItemToObject(fp, "build", o) ||
	    !(builds = cJSON_AddObjectToObject(fp, "builds")) ||
	    !cJSON_AddStringToObject(fp, "harness", j->harness_on ? "subset" :
				     j->harness_fallback ? "fallback" : "none") ||
	    !cJSON_AddBoolToObject(fp, "sandbox", j->sandbox != NULL) ||
	    !cJSON_AddBoolToObject(fp, "baseline", j->spec.baseline) ||
	    !(o = cJSON_Duplicate(j->warnings, true)) ||
	    !cJSON_AddItemToObject(fp, "warnings", o))
		goto fail;
	for (int side = 0; side < RUNNER_SIDES; side++) {
		const struct build_result *br = &j->build[side];

		if (!br->duration_ms && !br->ok)
			continue;
		if (!(m = cJSON_AddObjectToObject(builds, runner_side_name[side])) ||
		    !cJSON_AddNumberToObject(m, "duration_ms", (double)br->duration_ms) ||
		    !cJSON_AddNumberToObject(m, "steps", (double)br->steps) ||
		    !cJSON_AddBoolToObject(m, "setup_ran", br->setup_ran))
			goto fail;
	}
	if (j->slot.state && job_fingerprint_slot(j, fp) < 0)
		goto fail;
	if (!(m = cJSON_AddObjectToObject(fp, "timings")) ||
	    !cJSON_AddNumberToObject(m, "total_ms", (double)(pg_time_mono_ms() - j->t_start)) ||
	    !cJSON_AddNumberToObject(m, "prepare_ms", (double)j->ms_prepare) ||
	    !cJSON_AddNumberToObject(m, "fetch_ms", (double)j->ms_fetch) ||
	    !cJSON_AddNumberToObject(m, "apply_ms", (double)j->ms_apply) ||
	    !cJSON_AddNumberToObject(m, "build_base_ms", (double)j->ms_build[0]) ||
	    !cJSON_AddNumberToObject(m, "build_patched_ms", (double)j->ms_build[1]) ||
	    !cJSON_AddNumberToObject(m, "bench_wall_ms", (double)j->ms_bench_wall) ||
	    !cJSON_AddNumberToObject(m, "bench_runs_ms", (double)j->ms_bench_runs))
		goto fail;
	if (j->quiet_runs &&
	    (!(m = cJSON_AddObjectToObject(fp, "quiet_check")) ||
	     !cJSON_AddNumberToObject(m, "limit_cpus", HOSTCHECK_QUIET_LIMIT_CPUS) ||
	     !cJSON_AddNumberToObject(m, "runs", j->quiet_runs) ||
	     !cJSON_AddNumberToObject(m, "waited", j->quiet_waited) ||
	     !cJSON_AddNumberToObject(m, "busy", j->quiet_busy) ||
	     !cJSON_AddNumberToObject(m, "wait_ms", (double)j->quiet_wait_ms) ||
	     !cJSON_AddNumberToObject(m, "busy_cpus_max",
				      (double)(int)(j->quiet_busy_max * 100) / 100)))
		goto fail;
	if (job_fingerprint_gate(j, fp) < 0)
		goto fail;
	if (j->spec.n_ports) {
		cJSON *arr = cJSON_AddArrayToObject(fp, "ports");
		size_t f = 0;

		if (!arr)
			goto fail;
		for (size_t i = 0; i < j->spec.n_ports; i++) {
			const struct spec_port *p = &j->spec.ports[i];

			if (p->pci && f < j->n_port_facts)
				o = portcheck_to_json(&j->port_facts[f++]);
			else if (p->vdev && (o = cJSON_CreateObject()) &&
				 !cJSON_AddStringToObject(o, "vdev", p->vdev)) {
				cJSON_Delete(o);
				o = NULL;
			} else if (p->pci) {
				continue;	/* not checked: the job ended before */
			}
			if (!o || !cJSON_AddItemToArray(arr, o)) {
				cJSON_Delete(o);
				goto fail;
			}
		}
	}
	if (!(m = cJSON_AddObjectToObject(fp, "apply")) ||
	    !cJSON_AddNumberToObject(m, "applied", (double)j->n_applied) ||
	    !cJSON_AddNumberToObject(m, "exact", (double)j->n_method[PG_APPLY_EXACT]) ||
	    !cJSON_AddNumberToObject(m, "offset", (double)j->n_method[PG_APPLY_OFFSET]) ||
	    !cJSON_AddNumberToObject(m, "three_way", (double)j->n_method[PG_APPLY_3WAY]) ||
	    !cJSON_AddNumberToObject(m, "already", (double)j->n_method[PG_APPLY_ALREADY]) ||
	    !cJSON_AddBoolToObject(m, "all_already", j->all_already))
		goto fail;
	return fp;
fail:
	cJSON_Delete(fp);
	return NULL;
}

/* Remove the files an earlier holder of this job directory left (a job
 * id of a controller whose store was made anew): logs are appended to.
 * Directories stay (the workspace child's "ws": its files are replaced
 * before each use). */
static int job_dir_clear(const char *dir, struct pg_err *err)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return pg_err_errno(err, "open %s", dir);
	while ((de = readdir(d))) {
		char path[PATH_MAX];

		if (de->d_name[0] == '.' || de->d_type == DT_DIR)
			continue;
		/* Never skip one: a log left behind would be appended to. */
		if (pg_fmt(path, sizeof(path), "%s/%s", dir, de->d_name) < 0) {
			pg_err_set(err, PG_EINVAL, "remove %s/%s: path too long", dir, de->d_name);
			closedir(d);
			return -1;
		}
		if (unlink(path) < 0 && errno != ENOENT && errno != EISDIR) {
			pg_err_errno(err, "remove %s", path);
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

static void job_release(struct dpdk_job *j)
{
	spec_release(&j->spec);
	free(j->mirror);
	for (int side = 0; side < RUNNER_SIDES; side++) {
		free(j->src[side]);
		build_result_release(&j->build[side]);
	}
	slot_use_release(&j->slot);
	pg_apply_result_release(&j->apply);
	cJSON_Delete(j->samples);
	cJSON_Delete(j->warnings);
	cJSON_Delete(j->load_waits);
	pg_buf_release(&j->failures);
}

/* The end of a failed build's log for the result's detail: its last
 * RUNNER_DETAIL_TAIL bytes from a line's start, so that the detail
 * (RUNNER_DETAIL_MAX) holds it with its first line; the whole log is the
 * stage's. */
static const char *runner_detail_tail(const char *tail)
{
	size_t n;

	if (!tail)
		return "";
	n = strlen(tail);
	if (n > RUNNER_DETAIL_TAIL) {
		const char *nl;

		tail += n - RUNNER_DETAIL_TAIL;
		nl = strchr(tail, '\n');
		if (nl && nl[1])
			tail = nl + 1;
	}
	return tail;
}

int agent_runner_dpdk(const struct agent_run *run, struct agent_result *res,
		      struct pg_err *err)
{
	struct dpdk_job j;
	struct pg_err jerr = PG_ERR_INIT;
	const char *outcome = AGENT_OUTCOME_OK;
	struct pg_buf detail = PG_BUF_INIT(RUNNER_DETAIL_MAX);
	int64_t t;
	int rc = -1, r;

	memset(&j, 0, sizeof(j));
	j.run = run;
	j.t_start = pg_time_mono_ms();
	t = j.t_start;
	pg_buf_init(&j.failures, 8192);
	j.lcores_isolated = j.lcores_nohz_full = -1;
	if (!(j.samples = cJSON_CreateArray()) || !(j.warnings = cJSON_CreateArray()) ||
	    !(j.load_waits = cJSON_CreateArray()))
		goto nomem;
	if (spec_read(run->job->json, &j.spec, &jerr) < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	if (sandbox_for_job(run->sandbox, run->job->json, &j.sandbox, &jerr) < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	if (pg_fmt(j.job_dir, sizeof(j.job_dir), "%s/jobs/%lld-%lld", run->work_dir,
		   (long long)run->job->id, (long long)run->job->attempt) < 0) {
		pg_err_set(&jerr, PG_EINVAL, "work_dir: path too long");
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	if (pg_mkdir_p(j.job_dir, 0755, &jerr) < 0 || job_dir_clear(j.job_dir, &jerr) < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}

	/* prepare */
	run->progress(run->arg, "prepare", 0);
	if (hostcheck_gather(&j.host, NULL, 0, &jerr) < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	hostcheck_compiler("cc", j.host.compiler, sizeof(j.host.compiler));
	job_logf(&j, "prepare", "perfgate-agent %s, DPDK runner on %s: %s, %s; governor %s, "
		 "turbo %s, SMT %s, load %.2f, compiler %s\n", PG_VERSION, run->facts->hostname,
		 run->facts->cpu.model, run->facts->kernel, j.host.governor, j.host.turbo,
		 j.host.smt, j.host.load1, j.host.compiler);
	/* Refuse a host the class cannot use before anything is fetched or
	 * built. */
	if (job_host_gate(&j, false, &jerr) < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	/* The ports as the class says, before hours of building: a port
	 * bound to the wrong driver is the lab's to fix, not the series'. */
	{
		char why[256];

		r = job_ports(&j, why, sizeof(why), &jerr);
		if (r < 0) {
			outcome = AGENT_OUTCOME_INFRA;
			goto result;
		}
		if (r > 0) {
			outcome = AGENT_OUTCOME_INFRA;
			if (pg_buf_printf(&detail, "port check: %s", why) < 0)
				goto nomem;
			job_logf(&j, "prepare", "port check failed: %s\n", why);
			goto result;
		}
		for (size_t i = 0; i < j.n_port_facts; i++)
			job_logf(&j, "prepare", "port %s: driver %s, NUMA node %d, IOMMU group "
				 "%s, link %ld Mb/s\n", j.port_facts[i].pci, j.port_facts[i].driver,
				 j.port_facts[i].numa_node, j.port_facts[i].iommu_group[0] ?
				 j.port_facts[i].iommu_group : "-", j.port_facts[i].speed_mbps);
	}
	{
		struct ws_sync_opts o = { 0, run->stopped, run->arg };

		r = ws_mirror_sync_opts(run->work_dir, j.spec.tree, j.spec.url, j.spec.base_commit,
					&o, &j.mirror, &jerr);
		if (r > 0)
			goto stopped;
		if (r < 0) {
			outcome = AGENT_OUTCOME_INFRA;
			goto result;
		}
	}
	j.ms_prepare = pg_time_mono_ms() - t;
	t = pg_time_mono_ms();	/* apply: checkouts, fetches (counted apart), patches */
	if (job_stopped(&j))
		goto stopped;

	/* fetch and apply */
	run->progress(run->arg, "apply", 0);
	if (j.spec.n_missing_deps) {
		char w[128];

		pg_fmt_cut(w, sizeof(w), "%zu Depends-on prerequisite%s missing: tested without",
			   j.spec.n_missing_deps, j.spec.n_missing_deps == 1 ? "" : "s");
		if (job_warn(&j, w) < 0)
			goto nomem;
	}
	if (job_slot_acquire(&j, &jerr) < 0 || job_ws_init(&j, &jerr) < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	for (int side = 0; side < job_built_sides(&j); side++) {
		r = job_checkout(&j, side, &jerr);
		if (r > 0)
			goto stopped;
		if (r < 0) {
			outcome = AGENT_OUTCOME_INFRA;
			goto result;
		}
	}
	if (j.spec.baseline) {
		job_logf(&j, "apply", "baseline (%s): %s at %.12s measured by itself, one build run "
			 "as both sides (A/A): nothing to apply\n", j.spec.baseline_trigger,
			 j.spec.branch, j.spec.base_commit);
		r = 0;
	} else {
		r = job_fetch_apply(&j, &jerr);
	}
	if (r == 2)
		goto stopped;
	if (r < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	if (r > 0) {
		struct pg_buf why = PG_BUF_INIT(8192);

		outcome = AGENT_OUTCOME_APPLY;
		/* A limit of the whole series names no patch. */
		if ((j.apply.failed_patch ? pg_apply_describe(&j.apply, &why)
					  : pg_buf_printf(&why, "%s", j.apply.reason ? j.apply.reason :
							  "does not apply")) < 0 ||
		    pg_buf_printf(&detail, "%s: %s", j.apply_what, pg_buf_str(&why)) < 0) {
			pg_buf_release(&why);
			goto nomem;
		}
		pg_buf_release(&why);
		job_logf(&j, "apply", "apply failure: %s\n", pg_buf_str(&detail));
		goto result;
	}
	if (!j.spec.baseline)
		job_logf(&j, "apply", "applied %zu patch%s on %s at %.12s: %zu exact, %zu at an "
			 "offset, %zu by three-way merge, %zu already applied\n", j.n_applied,
			 j.n_applied == 1 ? "" : "es", j.spec.branch, j.spec.base_commit,
			 j.n_method[PG_APPLY_EXACT], j.n_method[PG_APPLY_OFFSET],
			 j.n_method[PG_APPLY_3WAY], j.n_method[PG_APPLY_ALREADY]);
	/* git am -3's "No changes -- Patch already applied." for every patch:
	 * both sides would build the same tree, so there is nothing to
	 * measure (a comparison of a tree with itself could only be noise).
	 * The verdict says so (the fingerprint's apply.all_already). */
	if (j.all_already) {
		outcome = AGENT_OUTCOME_OK;
		if (pg_buf_printf(&detail, "every patch of the series is already applied on %s at "
				  "%.12s: nothing to measure", j.spec.branch,
				  j.spec.base_commit) < 0)
			goto nomem;
		job_logf(&j, "apply", "%s\n", pg_buf_str(&detail));
		goto result;
	}
	if (job_harness(&j, &jerr) < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	j.ms_apply = pg_time_mono_ms() - t - j.ms_fetch;
	if (job_stopped(&j))
		goto stopped;

	/* builds */
	for (int side = 0; side < job_built_sides(&j); side++) {
		t = pg_time_mono_ms();
		r = job_build(&j, side, &jerr);
		j.ms_build[side] = pg_time_mono_ms() - t;
		if (job_stopped(&j))
			goto stopped;
		if (r < 0) {
			outcome = AGENT_OUTCOME_INFRA;
			goto result;
		}
		if (r > 0) {
			outcome = side ? AGENT_OUTCOME_PATCHED_BUILD : AGENT_OUTCOME_BASE_BUILD;
			if (pg_buf_printf(&detail, "%s build failed%s%s:\n%s", runner_side_name[side],
					  j.build[side].failed_step ? " in " : "",
					  j.build[side].failed_step ? j.build[side].failed_step : "",
					  runner_detail_tail(j.build[side].tail)) < 0)
				goto nomem;
			goto result;
		}
	}
	job_slot_size(&j, j.spec.baseline ? "build-base" : "build-patched");
	if (j.spec.baseline)
		memcpy(j.build_dir[1], j.build_dir[0], sizeof(j.build_dir[1]));
	if (j.spec.version && j.build[0].version &&
	    strcmp(j.spec.version, j.build[0].version) != 0) {
		char w[160];

		pg_fmt_cut(w, sizeof(w), "the tree's VERSION says %.32s, the job says %.32s",
			   j.build[0].version, j.spec.version);
		if (job_warn(&j, w) < 0)
			goto nomem;
	}

	/* bench */
	run->progress(run->arg, "bench", 0);
	if (hostcheck_gather(&j.host, NULL, HOSTCHECK_SAMPLE_MS_DEFAULT, &jerr) < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	hostcheck_compiler("cc", j.host.compiler, sizeof(j.host.compiler));
	if (j.host.busy && job_warn(&j, j.host.warning) < 0)
		goto nomem;
	if (job_host_gate(&j, true, &jerr) < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	t = pg_time_mono_ms();
	r = job_benchmarks(&j, &jerr);
	j.ms_bench_wall = pg_time_mono_ms() - t;
	if (r > 0)
		goto stopped;
	if (r < 0) {
		outcome = AGENT_OUTCOME_INFRA;
		goto result;
	}
	if (j.quiet_busy) {
		char w[200];

		pg_fmt_cut(w, sizeof(w), "%u of %u benchmark runs started on a busy host (up to "
			   "%.2f CPU of other work, limit %.2f, after waiting %.0f s in all): their "
			   "pairs are noisier", j.quiet_busy, j.quiet_runs, j.quiet_busy_max,
			   HOSTCHECK_QUIET_LIMIT_CPUS, j.quiet_wait_ms / 1000.0);
		if (job_warn(&j, w) < 0)
			goto nomem;
	}
	if (j.failures.len) {
		outcome = AGENT_OUTCOME_BENCH;
		if (pg_buf_printf(&detail, "%s", pg_buf_str(&j.failures)) < 0)
			goto nomem;
	} else if (pg_buf_printf(&detail, "%d repetition%s of %zu benchmark%s, base and patched "
				 "interleaved%s: %d samples", j.spec.repetitions,
				 j.spec.repetitions == 1 ? "" : "s", j.spec.n_bench,
				 j.spec.n_bench == 1 ? "" : "s",
				 j.spec.baseline ? " (a baseline: one build as both sides)" : "",
				 cJSON_GetArraySize(j.samples)) < 0) {
		goto nomem;
	}
	run->progress(run->arg, "bench", 100);

result:
	if (jerr.code != PG_OK && !detail.len && pg_buf_printf(&detail, "%s", jerr.msg) < 0)
		goto nomem;
	/* The warnings too, as far as they fit (the fingerprint has them
	 * all). */
	for (int i = 0; i < cJSON_GetArraySize(j.warnings); i++)
		if (pg_buf_printf(&detail, "%swarning: %s", detail.len ? "; " : "",
				  cJSON_GetArrayItem(j.warnings, i)->valuestring) < 0) {
			if (errno != E2BIG)
				goto nomem;
			break;
		}
	res->fingerprint = job_fingerprint(&j);
	if (!res->fingerprint || agent_result_set(res, outcome, "%s", pg_buf_str(&detail)) < 0)
		goto nomem;
	res->samples = j.samples;
	j.samples = NULL;
	rc = 0;
	goto out;
stopped:
	rc = 1;
	goto out;
nomem:
	pg_err_set(err, PG_ENOMEM, "DPDK runner: out of memory");
out:
	job_release(&j);
	pg_buf_release(&detail);
	return rc;
}
