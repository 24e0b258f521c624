/* SPDX-License-Identifier: MIT */
/* The host gate: what a job's host class demands of the host. */
#define _XOPEN_SOURCE 700
#include "hostgate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fmt.h"
#include "fsutil.h"
#include "jobspec.h"
#include "json.h"
#include "profile.h"
#include "timeutil.h"

#define HOSTGATE_FILE_MAX (1024 * 1024)

int hostgate_class_from_spec(const cJSON *job, struct hostgate_class *c, struct pg_err *err)
{
	const cJSON *host = NULL, *req = NULL;
	int64_t mem = 0, node = -1, wait_s = 0;
	int r;

	memset(c, 0, sizeof(*c));
	c->numa_node = -1;
	c->name = "?";
	if (pg_json_get_string(job, JS_HOST_CLASS, false, &c->name, err) < 0 ||
	    pg_json_get_object(job, JS_HOST, false, &host, err) < 0)
		goto fail;
	if (!host)
		return 0;
	if (pg_json_get_string(host, JS_HOST_LCORES, true, &c->lcores, err) < 0 ||
	    pg_json_get_int(host, JS_HOST_MEMORY_MB, true, 1, 1048576, &mem, err) < 0 ||
	    pg_json_get_bool(host, JS_HOST_HUGEPAGES, false, &c->hugepages, err) < 0 ||
	    pg_json_get_int(host, JS_HOST_NUMA_NODE, false, 0, 1023, &node, err) < 0 ||
	    pg_json_get_int(host, JS_HOST_MAX_LOAD_WAIT_S, false, 1, 86400, &wait_s, err) < 0)
		goto fail;
	c->memory_mb = (int)mem;
	c->numa_node = (int)node;
	c->max_load_wait_s = wait_s ? (int)wait_s : PROFILE_MAX_LOAD_WAIT_S;
	r = pg_json_get_double(host, JS_HOST_MAX_LOAD, false, 0, 1e6, &c->max_load, err);
	if (r < 0 || pg_json_get_object(host, JS_HOST_REQUIRE, false, &req, err) < 0)
		goto fail;
	c->has_max_load = r == 1;
	if (req &&
	    (pg_json_get_string(req, JS_REQ_GOVERNOR, false, &c->governor, err) < 0 ||
	     pg_json_get_string(req, JS_REQ_TURBO, false, &c->turbo, err) < 0 ||
	     pg_json_get_string(req, JS_REQ_SMT, false, &c->smt, err) < 0 ||
	     pg_json_get_bool(req, JS_REQ_ISOLATED_CPUS, false, &c->isolated_cpus, err) < 0 ||
	     pg_json_get_bool(req, JS_REQ_NOHZ_FULL, false, &c->nohz_full, err) < 0))
		goto fail;
	return 0;
fail:
	pg_err_prefix(err, "job spec: %s", JS_HOST);
	return -1;
}

int hostgate_cpulist_parse(const char *s, bool *set)
{
	int n = 0;

	memset(set, 0, HOSTGATE_MAX_CPUS * sizeof(*set));
	while (*s == ' ' || *s == '\n')
		s++;
	while (*s && *s != '\n') {
		char *end;
		unsigned long a, z;

		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		a = strtoul(s, &end, 10);
		z = a;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -1;
			z = strtoul(end + 1, &end, 10);
		}
		if (errno || z < a || z >= HOSTGATE_MAX_CPUS)
			return -1;
		for (unsigned long i = a; i <= z; i++) {
			n += !set[i];
			set[i] = true;
		}
		if (*end == ',')
			end++;
		else if (*end && *end != '\n')
			return -1;
		s = end;
	}
	return n;
}

int hostgate_cpus_within(const char *cpus, const char *of)
{
	bool *a = calloc(2 * HOSTGATE_MAX_CPUS, sizeof(*a)), *b;
	int rc = -1;

	if (!a)
		return -1;
	b = a + HOSTGATE_MAX_CPUS;
	if (hostgate_cpulist_parse(cpus, a) < 0 || hostgate_cpulist_parse(of, b) < 0)
		goto out;
	rc = 1;
	for (size_t i = 0; i < HOSTGATE_MAX_CPUS && rc; i++)
		if (a[i] && !b[i])
			rc = 0;
out:
	free(a);
	return rc;
}

/* SMT "off" as a requirement: no sibling can run, whatever the reason. */
static bool hg_smt_is_off(const char *smt)
{
	return strcmp(smt, "off") == 0 || strcmp(smt, "forceoff") == 0 ||
	       strcmp(smt, "notsupported") == 0 || strcmp(smt, "notimplemented") == 0;
}

/* The lcores within a kernel list named `what`: 0, or 1 with msg. */
static int hg_require_within(const struct hostgate_class *c, const char *what,
			     const char *list, char *msg, size_t len)
{
	int r = hostgate_cpus_within(c->lcores, list);

	if (r < 0) {
		pg_fmt_cut(msg, len, "host class %s: lcores '%s' or the host's %s '%s' malformed",
			   c->name, c->lcores, what, list);
		return -1;
	}
	if (r)
		return 0;
	pg_fmt_cut(msg, len, "host does not meet host class %s: %s is '%s', the class requires "
		   "its lcores %s in it", c->name, what, list[0] ? list : "(none)", c->lcores);
	return 1;
}

int hostgate_require_check(const struct hostcheck *h, const struct hostgate_class *c,
			   char *msg, size_t len)
{
	const char *has = NULL, *want = NULL, *fact = NULL;
	int r;

	msg[0] = '\0';
	if (c->governor && strcmp(h->governor, c->governor) != 0) {
		fact = "governor";
		has = h->governor;
		want = c->governor;
	} else if (c->turbo && strcmp(h->turbo, c->turbo) != 0) {
		fact = "turbo";
		has = h->turbo;
		want = c->turbo;
	} else if (c->smt && (strcmp(c->smt, "off") == 0 ? !hg_smt_is_off(h->smt) :
			      strcmp(h->smt, "on") != 0)) {
		fact = "smt";
		has = h->smt;
		want = c->smt;
	}
	if (fact) {
		pg_fmt_cut(msg, len, "host does not meet host class %s: %s is %s, the class "
			   "requires %s", c->name, fact, has, want);
		return 1;
	}
	if (c->isolated_cpus && c->lcores &&
	    (r = hg_require_within(c, "isolated_cpus", h->isolated, msg, len)) != 0)
		return r;
	if (c->nohz_full && c->lcores)
		return hg_require_within(c, "nohz_full", h->nohz_full, msg, len);
	return 0;
}

/* A size as the kernel's pagesize= option writes it ("2M", "1G",
 * "2048k"), in kB; 0 when unreadable. */
static uint64_t hg_size_kb(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	switch (*end) {
	case 'k': case 'K': return v;
	case 'm': case 'M': return v * 1024;
	case 'g': case 'G': return v * 1024 * 1024;
	case '\0': case ',': case ' ': return v / 1024;
	default: return 0;
	}
}

/* Find /dev/hugepages in mounts text: its fstype into type, its
 * pagesize= into *kb (0 when absent).  false when not mounted. */
static bool hg_find_mount(const char *text, char *type, size_t tlen, uint64_t *kb)
{
	const char *p = text;

	*kb = 0;
	while (*p) {
		char dev[256], dir[256], fs[64], opts[512];
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char line[1024];

		if (n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\0';
			if (sscanf(line, "%255s %255s %63s %511s", dev, dir, fs, opts) == 4 &&
			    strcmp(dir, "/dev/hugepages") == 0) {
				const char *ps = strstr(opts, "pagesize=");

				pg_fmt_cut(type, tlen, "%s", fs);
				if (ps)
					*kb = hg_size_kb(ps + 9);
				/* the last mount over the point is the one seen */
			}
		}
		p += n + (eol ? 1 : 0);
	}
	return type[0] != '\0';
}

int hostgate_hugepages_check(const char *root, const struct hostgate_class *c,
			     struct hostgate_huge *hp, char *msg, size_t len)
{
	struct pg_buf b = PG_BUF_INIT(HOSTGATE_FILE_MAX);
	struct pg_err e = PG_ERR_INIT;
	char type[64] = "", rel[256], where[32] = "";
	uint64_t kb = 0, total, fr, need_kb;
	char *end;
	int rc = 1;

	memset(hp, 0, sizeof(*hp));
	hp->node = c->numa_node;
	msg[0] = '\0';
	if (!root)
		root = "";
	if (!c->hugepages)
		return 0;
	need_kb = (uint64_t)c->memory_mb * 1024;
	if (pg_read_file_under(root, "/proc/mounts", &b, &e) < 0) {
		pg_fmt_cut(msg, len, "hugepages: cannot read %s/proc/mounts: %s", root, e.msg);
		goto out;
	}
	if (!hg_find_mount(pg_buf_str(&b), type, sizeof(type), &kb)) {
		pg_fmt_cut(msg, len, "hugepages: /dev/hugepages is not mounted; host class %s needs "
			   "%d MB of hugepages there", c->name, c->memory_mb);
		goto out;
	}
	if (strcmp(type, "hugetlbfs") != 0) {
		pg_fmt_cut(msg, len, "hugepages: /dev/hugepages is %s, not hugetlbfs", type);
		goto out;
	}
	if (!kb) {
		if (pg_read_file_under(root, "/proc/meminfo", &b, &e) < 0 ||
		    hostcheck_parse_hugepages(pg_buf_str(&b), b.len, &total, &fr, &kb, &e) < 0 ||
		    !kb) {
			pg_fmt_cut(msg, len, "hugepages: no default hugepage size in "
				   "%s/proc/meminfo%s%s", root, e.msg[0] ? ": " : "", e.msg);
			goto out;
		}
	}
	hp->page_kb = kb;
	if (c->numa_node >= 0) {
		if (pg_fmt(rel, sizeof(rel), "/sys/devices/system/node/node%d/hugepages/"
			   "hugepages-%llukB/free_hugepages", c->numa_node,
			   (unsigned long long)kb) < 0)
			goto too_long;
		pg_fmt_cut(where, sizeof(where), " on node %d", c->numa_node);
	} else if (pg_fmt(rel, sizeof(rel), "/sys/kernel/mm/hugepages/hugepages-%llukB/"
			  "free_hugepages", (unsigned long long)kb) < 0) {
		goto too_long;
	}
	if (pg_read_file_under(root, rel, &b, &e) < 0) {
		pg_fmt_cut(msg, len, "hugepages: no %llu kB pages%s (%s%s): host class %s needs "
			   "%d MB", (unsigned long long)kb, where, root, rel, c->name,
			   c->memory_mb);
		goto out;
	}
	errno = 0;
	fr = strtoull(pg_buf_str(&b), &end, 10);
	if (errno || end == pg_buf_str(&b)) {
		pg_fmt_cut(msg, len, "hugepages: %s%s: malformed", root, rel);
		goto out;
	}
	hp->free_pages = fr;
	if (fr * kb < need_kb) {
		pg_fmt_cut(msg, len, "hugepages: %llu free page%s of %llu kB%s (%llu MB), host "
			   "class %s needs %d MB", (unsigned long long)fr, fr == 1 ? "" : "s",
			   (unsigned long long)kb, where, (unsigned long long)(fr * kb / 1024),
			   c->name, c->memory_mb);
		goto out;
	}
	rc = 0;
	goto out;
too_long:
	pg_fmt_cut(msg, len, "hugepages: sysfs path too long");
out:
	pg_buf_release(&b);
	return rc;
}

int hostgate_wait_load(const struct hostgate_load_src *src, double max_load, double max_busy,
		       unsigned int poll_ms, int64_t max_wait_ms, struct hostgate_load_wait *w,
		       struct pg_err *err)
{
	int64_t t0 = 0;

	memset(w, 0, sizeof(*w));
	for (;;) {
		int64_t left;

		if (src->read(src->arg, &w->load1, &w->busy, err) < 0)
			return -1;
		/* The first poll is the check itself; waiting starts after. */
		if (!w->polls++)
			t0 = src->now_ms(src->arg);
		w->waited_ms = src->now_ms(src->arg) - t0;
		w->calm = w->load1 <= max_load && w->busy <= max_busy;
		left = max_wait_ms - w->waited_ms;
		if (w->calm || left <= 0)
			return 0;
		if (src->sleep_ms(src->arg, left < poll_ms ? (unsigned int)left : poll_ms))
			return 1;
	}
}

void hostgate_load_reason(const struct hostgate_load_wait *w, double max_load,
			  double max_busy_cpus, unsigned int cpus, unsigned int run, char *msg,
			  size_t len)
{
	if (w->load1 > max_load)
		pg_fmt_cut(msg, len, "host busy: load %.2f over max_load %g for %.0f s before "
			   "run %u", w->load1, max_load, w->waited_ms / 1000.0, run);
	else
		pg_fmt_cut(msg, len, "host busy: %.2f CPU of other work over the limit %.2f for "
			   "%.0f s before run %u (load %.2f within max_load %g)",
			   w->busy * cpus, max_busy_cpus, w->waited_ms / 1000.0, run, w->load1,
			   max_load);
}

static int hg_proc_read(void *arg, double *load1, double *busy, struct pg_err *err)
{
	struct hostgate_proc *p = arg;
	struct pg_buf b = PG_BUF_INIT(4096);
	double l5, l15;
	int rc = -1;

	if (pg_read_file_under(p->root ? p->root : "", "/proc/loadavg", &b, err) < 0 ||
	    hostcheck_parse_loadavg(pg_buf_str(&b), b.len, load1, &l5, &l15, err) < 0) {
		pg_err_prefix(err, "load check: %s/proc/loadavg", p->root ? p->root : "");
		goto out;
	}
	if (hostcheck_sample_busy(p->root, HOSTCHECK_QUIET_SAMPLE_MS, busy, err) < 0)
		goto out;
	rc = 0;
out:
	pg_buf_release(&b);
	return rc;
}

static int64_t hg_proc_now(void *arg)
{
	(void)arg;
	return pg_time_mono_ms();
}

static int hg_proc_sleep(void *arg, unsigned int ms)
{
	struct hostgate_proc *p = arg;

	/* In slices, so that a stopped job does not wait out a poll. */
	while (ms) {
		unsigned int step = ms < 250 ? ms : 250;

		if (p->stopped && p->stopped(p->arg))
			return 1;
		pg_sleep_ms(step, NULL);
		ms -= step;
	}
	return p->stopped && p->stopped(p->arg) ? 1 : 0;
}

void hostgate_proc_src(struct hostgate_proc *p, struct hostgate_load_src *src)
{
	src->read = hg_proc_read;
	src->now_ms = hg_proc_now;
	src->sleep_ms = hg_proc_sleep;
	src->arg = p;
}
