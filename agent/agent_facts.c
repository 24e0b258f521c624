/* SPDX-License-Identifier: MIT */
/* Host facts: parsers over /proc and /sys text, and their gathering. */
#include "agent_facts.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "buf.h"
#include "fmt.h"
#include "fsutil.h"

/* The largest /proc or /sys text read: cpuinfo of a 512-CPU host is
 * about 1 MiB. */
#define AGENT_FACTS_FILE_MAX ((size_t)8 * 1024 * 1024)
/* CPU numbers beyond this are not a real CPU list. */
#define AGENT_CPU_MAX 65536

/* Copy value (n bytes) to out, trimmed, with runs of white space squeezed
 * to one space; truncated to fit. */
static void facts_copy_squeezed(char *out, size_t outlen, const char *value, size_t n)
{
	size_t o = 0;
	int space = 0;

	for (size_t i = 0; i < n && o + 1 < outlen; i++) {
		unsigned char c = (unsigned char)value[i];

		if (isspace(c)) {
			space = o > 0;
			continue;
		}
		if (space && o + 2 < outlen)
			out[o++] = ' ';
		space = 0;
		out[o++] = iscntrl(c) ? '?' : (char)c;
	}
	out[o] = '\0';
}

/* x86 vendor_id strings, as the CPUID instruction spells them. */
static const struct {
	const char *id;
	const char *label;
} facts_x86_vendors[] = {
	{ "GenuineIntel", "intel" },
	{ "AuthenticAMD", "amd" },
	{ "HygonGenuine", "hygon" },
	{ "CentaurHauls", "centaur" },
	{ "Shanghai", "zhaoxin" },
};

/* ARM implementer codes (MIDR_EL1 bits 31:24) and the parts that lab
 * hosts run, after Linux's arch/arm64/include/asm/cputype.h. */
struct facts_arm_part {
	unsigned int implementer;
	unsigned int part;
	const char *name;
};

static const struct {
	unsigned int implementer;
	const char *label;
	const char *display;
} facts_arm_vendors[] = {
	{ 0x41, "arm", "ARM" },
	{ 0x42, "broadcom", "Broadcom" },
	{ 0x43, "cavium", "Cavium" },
	{ 0x46, "fujitsu", "Fujitsu" },
	{ 0x48, "hisilicon", "HiSilicon" },
	{ 0x4e, "nvidia", "NVIDIA" },
	/* X-Gene's APM and eMAG's Ampere share the code; DPDK's config/arm
	 * calls it Ampere, as the lab hosts that carry it are. */
	{ 0x50, "ampere", "Ampere" },
	{ 0x51, "qualcomm", "Qualcomm" },
	{ 0x56, "marvell", "Marvell" },
	{ 0x61, "apple", "Apple" },
	{ 0x70, "phytium", "Phytium" },
	{ 0xc0, "ampere", "Ampere" },
};

static const struct facts_arm_part facts_arm_parts[] = {
	{ 0x41, 0xd03, "Cortex-A53" },
	{ 0x41, 0xd04, "Cortex-A35" },
	{ 0x41, 0xd05, "Cortex-A55" },
	{ 0x41, 0xd07, "Cortex-A57" },
	{ 0x41, 0xd08, "Cortex-A72" },
	{ 0x41, 0xd09, "Cortex-A73" },
	{ 0x41, 0xd0a, "Cortex-A75" },
	{ 0x41, 0xd0b, "Cortex-A76" },
	{ 0x41, 0xd0c, "Neoverse-N1" },
	{ 0x41, 0xd0d, "Cortex-A77" },
	{ 0x41, 0xd40, "Neoverse-V1" },
	{ 0x41, 0xd41, "Cortex-A78" },
	{ 0x41, 0xd44, "Cortex-X1" },
	{ 0x41, 0xd46, "Cortex-A510" },
	{ 0x41, 0xd47, "Cortex-A710" },
	{ 0x41, 0xd48, "Cortex-X2" },
	{ 0x41, 0xd49, "Neoverse-N2" },
	{ 0x41, 0xd4a, "Neoverse-E1" },
	{ 0x41, 0xd4f, "Neoverse-V2" },
	{ 0x41, 0xd84, "Neoverse-V3" },
	{ 0x41, 0xd8e, "Neoverse-N3" },
	{ 0x43, 0x0a1, "ThunderX" },
	{ 0x43, 0x0a2, "ThunderX-81xx" },
	{ 0x43, 0x0a3, "ThunderX-83xx" },
	{ 0x43, 0x0af, "ThunderX2" },
	{ 0x43, 0x0b2, "OCTEON-TX2-96xx" },
	{ 0x46, 0x001, "A64FX" },
	{ 0x48, 0xd01, "Kunpeng-920" },
	{ 0x4e, 0x004, "Carmel" },
	{ 0x50, 0x000, "eMAG" },
	{ 0x51, 0x800, "Kryo-2xx" },
	{ 0x51, 0xc00, "Falkor" },
	{ 0x70, 0x662, "FT-2000plus" },
	{ 0x70, 0x663, "S2500" },
	{ 0xc0, 0xac3, "Ampere-1" },
	{ 0xc0, 0xac4, "Ampere-1a" },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A "0x41"-style number; -1 when malformed. */
static long facts_hex(const char *s)
{
	char *end;
	unsigned long v;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !isxdigit((unsigned char)s[2]))
		return -1;
	errno = 0;
	v = strtoul(s + 2, &end, 16);
	if (errno || *end || v > 0xffff)
		return -1;
	return (long)v;
}

/* The vendor label (a short name of a table, which always fits) must be
 * whole; the model is a description for people, cut visibly when long
 * (an unknown implementer and part are copied as written). */
static int facts_arm_describe(struct agent_cpuinfo *out, const char *implementer,
			      const char *part, const char *model_name, struct pg_err *err)
{
	long impl = facts_hex(implementer), pn = part[0] ? facts_hex(part) : -1;
	const char *vendor = "unknown", *display = NULL, *name = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(facts_arm_vendors); i++)
		if ((long)facts_arm_vendors[i].implementer == impl) {
			vendor = facts_arm_vendors[i].label;
			display = facts_arm_vendors[i].display;
		}
	if (pg_fmt(out->vendor, sizeof(out->vendor), "%s", vendor) < 0)
		return pg_err_set(err, PG_EINVAL, "cpuinfo: vendor label '%s' too long", vendor);
	/* MIDR's fields as numbers, for the fingerprint: a class keyed on a
	 * part, a drift explained by one. */
	if (impl >= 0)
		pg_fmt_cut(out->implementer, sizeof(out->implementer), "0x%02lx", impl);
	if (pn >= 0)
		pg_fmt_cut(out->part, sizeof(out->part), "0x%03lx", pn);
	for (size_t i = 0; i < ARRAY_SIZE(facts_arm_parts); i++)
		if ((long)facts_arm_parts[i].implementer == impl &&
		    (long)facts_arm_parts[i].part == pn)
			name = facts_arm_parts[i].name;
	if (display && name)
		pg_fmt_cut(out->model, sizeof(out->model), "%s %s", display, name);
	else if (model_name[0])
		pg_fmt_cut(out->model, sizeof(out->model), "%s", model_name);
	else
		pg_fmt_cut(out->model, sizeof(out->model), "implementer %s part %s", implementer,
			   part[0] ? part : "unknown");
	return 0;
}

int agent_cpuinfo_parse(const char *text, size_t len, struct agent_cpuinfo *out,
			struct pg_err *err)
{
	char vendor_id[AGENT_FACT_MAX] = "", model_name[AGENT_FACT_MAX] = "";
	char implementer[AGENT_FACT_MAX] = "", part[AGENT_FACT_MAX] = "";
	char cpu[AGENT_FACT_MAX] = "";
	const char *p = text, *end = text + len, *vendor = "unknown";

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *colon, *k, *ke;
		char key[64];
		char *dst = NULL;

		if (!eol)
			eol = end;
		colon = memchr(p, ':', (size_t)(eol - p));
		k = p;
		p = eol + 1;
		if (!colon)
			continue;
		ke = colon;
		while (ke > k && isspace((unsigned char)ke[-1]))
			ke--;
		if (ke == k || (size_t)(ke - k) >= sizeof(key))
			continue;
		memcpy(key, k, (size_t)(ke - k));
		key[ke - k] = '\0';
		if (strcmp(key, "processor") == 0) {
			out->processors++;
			continue;
		}
		if (strcmp(key, "vendor_id") == 0)
			dst = vendor_id;
		else if (strcmp(key, "model name") == 0)
			dst = model_name;
		else if (strcmp(key, "microcode") == 0)
			dst = out->microcode;
		else if (strcmp(key, "CPU implementer") == 0)
			dst = implementer;
		else if (strcmp(key, "CPU part") == 0)
			dst = part;
		else if (strcmp(key, "cpu") == 0)
			dst = cpu;
		/* The first CPU's value wins: later blocks repeat it. */
		if (dst && !dst[0])
			facts_copy_squeezed(dst, AGENT_FACT_MAX, colon + 1,
					    (size_t)(eol - colon - 1));
	}
	if (!vendor_id[0] && !implementer[0] && out->processors == 0)
		return pg_err_set(err, PG_EINVAL,
				  "cpuinfo: no 'processor', 'vendor_id' or 'CPU implementer' line");
	if (implementer[0])
		return facts_arm_describe(out, implementer, part, model_name, err);
	for (size_t i = 0; i < ARRAY_SIZE(facts_x86_vendors); i++)
		if (strcmp(vendor_id, facts_x86_vendors[i].id) == 0)
			vendor = facts_x86_vendors[i].label;
	if (pg_fmt(out->vendor, sizeof(out->vendor), "%s", vendor) < 0)
		return pg_err_set(err, PG_EINVAL, "cpuinfo: vendor label '%s' too long", vendor);
	/* Both are AGENT_FACT_MAX bytes, as out->model: never cut. */
	pg_fmt_cut(out->model, sizeof(out->model), "%s", model_name[0] ? model_name : cpu);
	return 0;
}

int agent_meminfo_total_kb(const char *text, size_t len, uint64_t *kb, struct pg_err *err)
{
	static const char key[] = "MemTotal:";
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		uint64_t v = 0;
		size_t digits = 0;

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > sizeof(key) - 1 && memcmp(p, key, sizeof(key) - 1) == 0) {
			const char *q = p + sizeof(key) - 1;

			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			for (; q < eol && isdigit((unsigned char)*q); q++, digits++) {
				if (v > (UINT64_MAX - 9) / 10)
					return pg_err_set(err, PG_EINVAL,
							  "meminfo: MemTotal out of range");
				v = v * 10 + (uint64_t)(*q - '0');
			}
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			if (digits == 0 || (size_t)(eol - q) < 2 || memcmp(q, "kB", 2) != 0)
				return pg_err_set(err, PG_EINVAL,
						  "meminfo: malformed MemTotal line");
			*kb = v;
			return 0;
		}
		p = eol + 1;
	}
	return pg_err_set(err, PG_EINVAL, "meminfo: no MemTotal line");
}

/* One decimal CPU number at *p; -1 when there is none or it is too big. */
static long facts_cpu_number(const char **p, const char *end)
{
	long v = 0;
	const char *q = *p;

	if (q == end || !isdigit((unsigned char)*q))
		return -1;
	for (; q < end && isdigit((unsigned char)*q); q++) {
		v = v * 10 + (*q - '0');
		if (v >= AGENT_CPU_MAX)
			return -1;
	}
	*p = q;
	return v;
}

int agent_cpulist_count(const char *text, size_t len, struct pg_err *err)
{
	const char *p = text, *end = text + len;
	long count = 0;

	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	if (p == end)
		return pg_err_set(err, PG_EINVAL, "CPU list: empty");
	for (;;) {
		long lo = facts_cpu_number(&p, end), hi = lo;

		if (lo < 0)
			goto bad;
		if (p < end && *p == '-') {
			p++;
			hi = facts_cpu_number(&p, end);
			if (hi < lo)
				goto bad;
		}
		count += hi - lo + 1;
		if (count > AGENT_CPU_MAX)
			goto bad;
		if (p == end)
			return (int)count;
		if (*p++ != ',')
			goto bad;
	}
bad:
	return pg_err_set(err, PG_EINVAL, "CPU list: malformed '%.*s'",
			  (int)(len > 64 ? 64 : len), text);
}


/* NUMA nodes: the nodeN directories; 1 when /sys has none (a kernel
 * without NUMA, or a container without /sys). */
static unsigned int facts_numa_nodes(const char *root)
{
	char path[PATH_MAX];
	unsigned int n = 0;
	struct dirent *de;
	DIR *d;

	if (pg_fmt(path, sizeof(path), "%s/sys/devices/system/node", root) < 0)
		return 1;
	d = opendir(path);
	if (!d)
		return 1;
	while ((de = readdir(d)) != NULL) {
		const char *s = de->d_name;

		if (strncmp(s, "node", 4) == 0 && s[4] && strspn(s + 4, "0123456789") == strlen(s + 4))
			n++;
	}
	closedir(d);
	return n ? n : 1;
}

int agent_facts_gather(struct agent_facts *f, const char *root, struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(AGENT_FACTS_FILE_MAX);
	struct pg_err ignored = PG_ERR_INIT;
	struct utsname u;
	int rc = -1, cores;

	memset(f, 0, sizeof(*f));
	if (!root)
		root = "";
	if (uname(&u) < 0) {
		pg_err_errno(err, "uname");
		goto out;
	}
	if (pg_fmt(f->arch, sizeof(f->arch), "%s", u.machine) < 0 ||
	    pg_fmt(f->kernel, sizeof(f->kernel), "%s", u.release) < 0) {
		pg_err_set(err, PG_EINVAL, "uname: machine or release too long");
		goto out;
	}
	if (gethostname(f->hostname, sizeof(f->hostname)) < 0) {
		pg_err_errno(err, "gethostname");
		goto out;
	}
	f->hostname[sizeof(f->hostname) - 1] = '\0';
	if (pg_read_file_under(root, "/proc/cpuinfo", &b, err) < 0 ||
	    agent_cpuinfo_parse(b.data ? b.data : "", b.len, &f->cpu, err) < 0)
		goto out;
	if (pg_read_file_under(root, "/proc/meminfo", &b, err) < 0 ||
	    agent_meminfo_total_kb(b.data ? b.data : "", b.len, &f->memory_kb, err) < 0)
		goto out;
	/* Online CPUs: /sys knows which are online; sysconf() is what a
	 * container without /sys still answers. */
	if (pg_read_file_under(root, "/sys/devices/system/cpu/online", &b, &ignored) == 0 &&
	    (cores = agent_cpulist_count(b.data ? b.data : "", b.len, &ignored)) > 0) {
		f->cores = (unsigned int)cores;
	} else {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		f->cores = n > 0 ? (unsigned int)n : f->cpu.processors;
	}
	f->numa_nodes = facts_numa_nodes(root);
	rc = 0;
out:
	pg_buf_release(&b);
	return rc;
}

cJSON *agent_facts_to_json(const struct agent_facts *f)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (!cJSON_AddStringToObject(o, "hostname", f->hostname) ||
	    !cJSON_AddStringToObject(o, "vendor", f->cpu.vendor) ||
	    !cJSON_AddStringToObject(o, "model", f->cpu.model) ||
	    (f->cpu.microcode[0] &&
	     !cJSON_AddStringToObject(o, "microcode", f->cpu.microcode)) ||
	    (f->cpu.implementer[0] &&
	     !cJSON_AddStringToObject(o, "cpu_implementer", f->cpu.implementer)) ||
	    (f->cpu.part[0] && !cJSON_AddStringToObject(o, "cpu_part", f->cpu.part)) ||
	    !cJSON_AddStringToObject(o, "arch", f->arch) ||
	    !cJSON_AddNumberToObject(o, "cores", f->cores) ||
	    !cJSON_AddNumberToObject(o, "numa_nodes", f->numa_nodes) ||
	    !cJSON_AddStringToObject(o, "kernel", f->kernel) ||
	    !cJSON_AddNumberToObject(o, "memory_kb", (double)f->memory_kb) ||
	    !cJSON_AddStringToObject(o, "agent_version", PG_VERSION)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* A fact usable as a label value: the characters agent_config.c allows. */
static int facts_label_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 128 && strcmp(s, "unknown") != 0 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static int facts_has_key(const char *const *keys, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(keys[i], key) == 0)
			return 1;
	return 0;
}

cJSON *agent_labels_json(const char *const *keys, const char *const *values, size_t n,
			 const struct agent_facts *f)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!cJSON_AddStringToObject(o, keys[i], values[i]))
			goto fail;
	if (f && !facts_has_key(keys, n, "vendor") && facts_label_ok(f->cpu.vendor) &&
	    !cJSON_AddStringToObject(o, "vendor", f->cpu.vendor))
		goto fail;
	if (f && !facts_has_key(keys, n, "arch") && facts_label_ok(f->arch) &&
	    !cJSON_AddStringToObject(o, "arch", f->arch))
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}
