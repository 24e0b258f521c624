/* SPDX-License-Identifier: MIT */
/* The host check: what on this machine changes benchmark numbers. */
#define _XOPEN_SOURCE 700
#include "hostcheck.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fmt.h"
#include "fsutil.h"
#include "proc.h"
#include "timeutil.h"

#define HOSTCHECK_FILE_MAX (1024 * 1024)

/* Copy the first line of text (len bytes) into out, trimmed. */
static void hc_first_line(const char *text, size_t len, char *out, size_t size)
{
	size_t n = 0;

	while (n < len && text[n] != '\n' && text[n] != '\0')
		n++;
	while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t' || text[n - 1] == '\r'))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(out, text, n);
	out[n] = '\0';
}

int hostcheck_parse_loadavg(const char *text, size_t len, double *l1, double *l5, double *l15,
			    struct pg_err *err)
{
	char line[256], *p, *end;
	double v[3];

	hc_first_line(text, len, line, sizeof(line));
	p = line;
	for (int i = 0; i < 3; i++) {
		errno = 0;
		v[i] = strtod(p, &end);
		if (errno || end == p || v[i] < 0 || (*end != ' ' && *end != '\0'))
			return pg_err_set(err, PG_EINVAL, "loadavg: malformed '%.64s'", line);
		p = end;
	}
	*l1 = v[0];
	*l5 = v[1];
	*l15 = v[2];
	return 0;
}

/* The value of "key: N" in meminfo text; 1 found, 0 absent, -1 malformed. */
static int hc_meminfo_value(const char *text, size_t len, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);

		if (n > klen && memcmp(p, key, klen) == 0 && p[klen] == ':') {
			char num[32], *e;
			size_t i = klen + 1, j = 0;
			unsigned long long u;

			while (i < n && p[i] == ' ')
				i++;
			while (i < n && j + 1 < sizeof(num) && p[i] >= '0' && p[i] <= '9')
				num[j++] = p[i++];
			num[j] = '\0';
			if (!j)
				return -1;
			errno = 0;
			u = strtoull(num, &e, 10);
			if (errno || *e)
				return -1;
			*v = u;
			return 1;
		}
		p += n + 1;
	}
	return 0;
}

int hostcheck_parse_hugepages(const char *text, size_t len, uint64_t *total, uint64_t *free_,
			      uint64_t *page_kb, struct pg_err *err)
{
	static const char *const keys[] = { "HugePages_Total", "HugePages_Free", "Hugepagesize" };
	uint64_t *out[] = { total, free_, page_kb };

	for (size_t i = 0; i < 3; i++) {
		*out[i] = 0;
		if (hc_meminfo_value(text, len, keys[i], out[i]) < 0)
			return pg_err_set(err, PG_EINVAL, "meminfo: malformed %s line", keys[i]);
	}
	return 0;
}

int hostcheck_parse_stat(const char *text, size_t len, uint64_t *total, uint64_t *idle,
			 struct pg_err *err)
{
	char line[512], *p, *end;
	uint64_t sum = 0, v[10] = { 0 };
	int n = 0;

	hc_first_line(text, len, line, sizeof(line));
	if (strncmp(line, "cpu ", 4) != 0)
		return pg_err_set(err, PG_EINVAL, "stat: no 'cpu ' line first");
	p = line + 4;
	while (n < 10) {
		unsigned long long u;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		errno = 0;
		u = strtoull(p, &end, 10);
		if (errno || end == p || (*end != ' ' && *end != '\0'))
			return pg_err_set(err, PG_EINVAL, "stat: malformed 'cpu' line");
		v[n++] = u;
		p = end;
	}
	/* user nice system idle iowait irq softirq steal [guest guest_nice]:
	 * guest time is already counted in user and nice. */
	if (n < 4)
		return pg_err_set(err, PG_EINVAL, "stat: 'cpu' line has %d fields", n);
	for (int i = 0; i < n && i < 8; i++)
		sum += v[i];
	*total = sum;
	*idle = v[3] + v[4];
	return 0;
}

double hostcheck_busy_share(uint64_t total0, uint64_t idle0, uint64_t total1, uint64_t idle1)
{
	uint64_t dt, di;
	double s;

	if (total1 <= total0)
		return 0;
	dt = total1 - total0;
	di = idle1 >= idle0 ? idle1 - idle0 : 0;
	if (di > dt)
		di = dt;
	s = (double)(dt - di) / (double)dt;
	return s;
}


/* The first line of an optional file into out; "" when absent. */
static void hc_read_opt(const char *root, const char *rel, char *out, size_t size)
{
	struct pg_buf b = PG_BUF_INIT(4096);
	struct pg_err ignored = PG_ERR_INIT;

	out[0] = '\0';
	if (pg_read_file_under(root, rel, &b, &ignored) == 0)
		hc_first_line(b.data ? b.data : "", b.len, out, size);
	pg_buf_release(&b);
}

/* The governors of cpuN/cpufreq/scaling_governor, merged: a text for
 * people, cut (visibly) when too many differ. */
static void hc_governor(const char *root, char *out, size_t size)
{
	char path[PATH_MAX], seen[HOSTCHECK_TEXT_MAX] = "", gov[64];
	bool mixed = false;
	struct dirent *de;
	DIR *d;

	pg_fmt_cut(out, size, "none");
	if (pg_fmt(path, sizeof(path), "%s/sys/devices/system/cpu", root) < 0 ||
	    !(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		char rel[128];

		if (strncmp(de->d_name, "cpu", 3) != 0 || de->d_name[3] < '0' || de->d_name[3] > '9')
			continue;
		if (pg_fmt(rel, sizeof(rel),
			   "/sys/devices/system/cpu/%.32s/cpufreq/scaling_governor",
			   de->d_name) < 0)
			continue;
		hc_read_opt(root, rel, gov, sizeof(gov));
		if (!gov[0])
			continue;
		if (!seen[0]) {
			/* gov is shorter than seen: never cut */
			pg_fmt_cut(seen, sizeof(seen), "%s", gov);
		} else if (!strstr(seen, gov)) {
			size_t l = strlen(seen);

			pg_fmt_cut(seen + l, sizeof(seen) - l, ",%s", gov);
			mixed = true;
		}
	}
	closedir(d);
	if (seen[0])
		pg_fmt_cut(out, size, "%s%s", mixed ? "mixed: " : "", seen);
}

static void hc_turbo(const char *root, char *out, size_t size)
{
	char v[16];

	hc_read_opt(root, "/sys/devices/system/cpu/intel_pstate/no_turbo", v, sizeof(v));
	/* out is struct hostcheck's turbo[16]: none of the three words is cut. */
	if (v[0]) {
		pg_fmt_cut(out, size, "%s", strcmp(v, "1") == 0 ? "off" : "on");
		return;
	}
	hc_read_opt(root, "/sys/devices/system/cpu/cpufreq/boost", v, sizeof(v));
	if (v[0]) {
		pg_fmt_cut(out, size, "%s", strcmp(v, "1") == 0 ? "on" : "off");
		return;
	}
	pg_fmt_cut(out, size, "unknown");
}

int hostcheck_gather(struct hostcheck *h, const char *root, unsigned int sample_ms,
		     struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(HOSTCHECK_FILE_MAX);
	char cpus[HOSTCHECK_TEXT_MAX];
	int rc = -1;

	memset(h, 0, sizeof(*h));
	h->busy_share = -1;
	if (!root)
		root = "";
	hc_governor(root, h->governor, sizeof(h->governor));
	hc_turbo(root, h->turbo, sizeof(h->turbo));
	hc_read_opt(root, "/sys/devices/system/cpu/smt/control", h->smt, sizeof(h->smt));
	if (!h->smt[0] && pg_fmt(h->smt, sizeof(h->smt), "unknown") < 0) {
		pg_err_set(err, PG_EINVAL, "host check: SMT state too long");
		goto out;
	}
	hc_read_opt(root, "/sys/devices/system/cpu/isolated", h->isolated, sizeof(h->isolated));
	hc_read_opt(root, "/sys/devices/system/cpu/nohz_full", h->nohz_full, sizeof(h->nohz_full));
	if (strcmp(h->nohz_full, "(null)") == 0)
		h->nohz_full[0] = '\0';
	hc_read_opt(root, "/sys/devices/system/cpu/online", cpus, sizeof(cpus));
	h->cpus = 0;
	for (char *p = cpus; *p;) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), z = a;

		if (end == p)
			break;
		if (*end == '-')
			z = strtoul(end + 1, &end, 10);
		if (z >= a)
			h->cpus += (unsigned int)(z - a + 1);
		p = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	if (!h->cpus)
		h->cpus = 1;

	if (pg_read_file_under(root, "/proc/loadavg", &b, err) < 0 ||
	    hostcheck_parse_loadavg(pg_buf_str(&b), b.len, &h->load1, &h->load5, &h->load15,
				    err) < 0)
		goto out_prefix_load;
	if (pg_read_file_under(root, "/proc/meminfo", &b, err) < 0 ||
	    hostcheck_parse_hugepages(pg_buf_str(&b), b.len, &h->hugepages_total,
				      &h->hugepages_free, &h->hugepage_kb, err) < 0)
		goto out_prefix_mem;
	if (sample_ms && hostcheck_sample_busy(root, sample_ms, &h->busy_share, err) < 0)
		goto out;
	if (h->busy_share > HOSTCHECK_BUSY_SHARE) {
		h->busy = true;
		pg_fmt_cut(h->warning, sizeof(h->warning),
			   "host busy: %.0f%% of CPU time outside idle over %u ms before the "
			   "benchmarks (limit %.0f%%); load average %.2f on %u CPUs",
			   h->busy_share * 100, sample_ms, HOSTCHECK_BUSY_SHARE * 100, h->load1,
			   h->cpus);
	} else if (h->busy_share < 0 && h->load1 > HOSTCHECK_BUSY_LOAD_PER_CPU * h->cpus) {
		h->busy = true;
		pg_fmt_cut(h->warning, sizeof(h->warning),
			   "host busy: load average %.2f on %u CPUs (limit %.2f per CPU)",
			   h->load1, h->cpus, HOSTCHECK_BUSY_LOAD_PER_CPU);
	}
	rc = 0;
	goto out;
out_prefix_load:
	pg_err_prefix(err, "host check: %s/proc/loadavg", root);
	goto out;
out_prefix_mem:
	pg_err_prefix(err, "host check: %s/proc/meminfo", root);
out:
	pg_buf_release(&b);
	return rc;
}

int hostcheck_sample_busy(const char *root, unsigned int ms, double *share,
			  struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(HOSTCHECK_FILE_MAX);
	uint64_t t0, i0, t1, i1;
	int rc = -1;

	if (!root)
		root = "";
	if (pg_read_file_under(root, "/proc/stat", &b, err) < 0 ||
	    hostcheck_parse_stat(pg_buf_str(&b), b.len, &t0, &i0, err) < 0)
		goto fail;
	pg_sleep_ms(ms, NULL);
	if (pg_read_file_under(root, "/proc/stat", &b, err) < 0 ||
	    hostcheck_parse_stat(pg_buf_str(&b), b.len, &t1, &i1, err) < 0)
		goto fail;
	*share = hostcheck_busy_share(t0, i0, t1, i1);
	rc = 0;
	goto out;
fail:
	pg_err_prefix(err, "host check: %s/proc/stat", root);
out:
	pg_buf_release(&b);
	return rc;
}

int hostcheck_sampler_proc(void *root, unsigned int ms, double *share, struct pg_err *err)
{
	return hostcheck_sample_busy(root, ms, share, err);
}

int hostcheck_wait_quiet(hostcheck_sampler_fn sample, void *sarg, unsigned int sample_ms,
			 unsigned int max_wait_ms, double limit, bool (*stopped)(void *),
			 void *arg, struct hostcheck_quiet *q, struct pg_err *err)
{
	memset(q, 0, sizeof(*q));
	for (;;) {
		if (sample(sarg, sample_ms, &q->share, err) < 0)
			return -1;
		if (q->samples++)
			q->waited_ms += sample_ms;
		q->quiet = q->share <= limit;
		if (q->quiet || q->waited_ms + sample_ms > max_wait_ms)
			return 0;
		if (stopped && stopped(arg))
			return 1;
	}
}

void hostcheck_compiler(const char *cc, char *out, size_t size)
{
	const char *argv[] = { cc, "--version", NULL };
	struct pg_proc p = PG_PROC_INIT;
	struct pg_err err = PG_ERR_INIT;

	out[0] = '\0';
	p.argv = argv;
	p.tail_max = 4096;
	p.timeout_ms = 10000;
	if (pg_proc_run(&p, &err) == 0 && pg_proc_succeeded(&p))
		hc_first_line(pg_buf_str(&p.tail), p.tail.len, out, size);
	pg_proc_release(&p);
}

cJSON *hostcheck_to_json(const struct hostcheck *h)
{
	cJSON *o = cJSON_CreateObject(), *load, *huge;
	double l[3] = { h->load1, h->load5, h->load15 };

	if (!o)
		return NULL;
	if (!cJSON_AddStringToObject(o, "governor", h->governor) ||
	    !cJSON_AddStringToObject(o, "turbo", h->turbo) ||
	    !cJSON_AddStringToObject(o, "smt", h->smt) ||
	    !cJSON_AddStringToObject(o, "isolated_cpus", h->isolated) ||
	    !cJSON_AddStringToObject(o, "nohz_full", h->nohz_full) ||
	    !(load = cJSON_AddArrayToObject(o, "load")))
		goto fail;
	for (int i = 0; i < 3; i++) {
		cJSON *n = cJSON_CreateNumber(l[i]);

		if (!n || !cJSON_AddItemToArray(load, n)) {
			cJSON_Delete(n);
			goto fail;
		}
	}
	if (h->busy_share >= 0 &&
	    !cJSON_AddNumberToObject(o, "busy_share", (double)(int)(h->busy_share * 1000) / 1000))
		goto fail;
	if (!(huge = cJSON_AddObjectToObject(o, "hugepages")) ||
	    !cJSON_AddNumberToObject(huge, "total", (double)h->hugepages_total) ||
	    !cJSON_AddNumberToObject(huge, "free", (double)h->hugepages_free) ||
	    !cJSON_AddNumberToObject(huge, "page_kb", (double)h->hugepage_kb) ||
	    !cJSON_AddStringToObject(o, "compiler", h->compiler) ||
	    !cJSON_AddBoolToObject(o, "busy", h->busy))
		goto fail;
	if (h->busy && !cJSON_AddStringToObject(o, "warning", h->warning))
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}
