/* SPDX-License-Identifier: MIT */
/* Ports against sysfs (portcheck.h). */
#include "portcheck.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "fmt.h"
#include "fsutil.h"

/* The first line of a small sysfs file, trimmed, into out; "" when it
 * cannot be read (a missing fact is not an error). */
static void read_line(const char *root, const char *rel, char *out, size_t len)
{
	struct pg_buf b = PG_BUF_INIT(4096);
	struct pg_err err = PG_ERR_INIT;

	out[0] = '\0';
	if (pg_read_file_under(root, rel, &b, &err) == 0 && b.len) {
		size_t n = strcspn(pg_buf_str(&b), "\n");

		pg_fmt_cut(out, len, "%.*s", (int)n, pg_buf_str(&b));
	}
	pg_buf_release(&b);
}

/* The last component of the symlink root + rel into out; "" when none. */
static void read_link_name(const char *root, const char *rel, char *out, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;
	const char *slash;

	out[0] = '\0';
	if (pg_fmt(path, sizeof(path), "%s%s", root, rel) < 0)
		return;
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	slash = strrchr(target, '/');
	pg_fmt_cut(out, len, "%s", slash ? slash + 1 : target);
}

/* The first entry of directory root + rel (a port's net/ holds its one
 * netdev); "" when none. */
static void first_entry(const char *root, const char *rel, char *out, size_t len)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	out[0] = '\0';
	if (pg_fmt(path, sizeof(path), "%s%s", root, rel) < 0 || !(d = opendir(path)))
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			pg_fmt_cut(out, len, "%s", de->d_name);
			break;
		}
	closedir(d);
}

static bool valid_pci(const char *s)
{
	if (strlen(s) != 12)
		return false;
	for (size_t i = 0; i < 12; i++)
		if (i == 4 || i == 7 ? s[i] != ':' : i == 10 ? s[i] != '.' :
		    !strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

int portcheck_pci(const char *root, const char *pci, const char *driver, int numa_node,
		  struct portcheck_port *out, char *why, size_t why_len)
{
	char dev[PATH_MAX], rel[PATH_MAX], text[PORTCHECK_TEXT], *end;
	long v;

	memset(out, 0, sizeof(*out));
	out->numa_node = -1;
	out->speed_mbps = -1;
	why[0] = '\0';
	/* pci becomes part of a path: only the profile's form passes */
	if (!valid_pci(pci)) {
		pg_fmt_cut(why, why_len, "'%.16s' is not a PCI address", pci);
		return -1;
	}
	pg_fmt_cut(out->pci, sizeof(out->pci), "%s", pci);
	if (pg_fmt(dev, sizeof(dev), "%s/sys/bus/pci/devices/%s", root, pci) < 0) {
		pg_fmt_cut(why, why_len, "%s: sysfs path too long", pci);
		return -1;
	}
	if (access(dev, F_OK) < 0) {
		pg_fmt_cut(why, why_len, "%s: no such PCI device (%s: %s)", pci, dev,
			   strerror(errno));
		return 1;
	}
	if (pg_fmt(rel, sizeof(rel), "/sys/bus/pci/devices/%s/driver", pci) < 0)
		return -1;
	read_link_name(root, rel, out->driver, sizeof(out->driver));
	if (pg_fmt(rel, sizeof(rel), "/sys/bus/pci/devices/%s/numa_node", pci) < 0)
		return -1;
	read_line(root, rel, text, sizeof(text));
	errno = 0;
	v = strtol(text, &end, 10);
	if (text[0] && !*end && !errno && v >= 0 && v <= 1023)
		out->numa_node = (int)v;
	if (pg_fmt(rel, sizeof(rel), "/sys/bus/pci/devices/%s/vendor", pci) < 0)
		return -1;
	read_line(root, rel, out->vendor, sizeof(out->vendor));
	if (pg_fmt(rel, sizeof(rel), "/sys/bus/pci/devices/%s/device", pci) < 0)
		return -1;
	read_line(root, rel, out->device, sizeof(out->device));
	if (pg_fmt(rel, sizeof(rel), "/sys/bus/pci/devices/%s/iommu_group", pci) < 0)
		return -1;
	read_link_name(root, rel, out->iommu_group, sizeof(out->iommu_group));
	if (pg_fmt(rel, sizeof(rel), "/sys/bus/pci/devices/%s/net", pci) < 0)
		return -1;
	first_entry(root, rel, out->iface, sizeof(out->iface));
	if (out->iface[0]) {
		if (pg_fmt(rel, sizeof(rel), "/sys/bus/pci/devices/%s/net/%s/speed", pci,
			   out->iface) < 0)
			return -1;
		read_line(root, rel, text, sizeof(text));
		errno = 0;
		v = strtol(text, &end, 10);
		/* -1 (no link) and unreadable stay unknown */
		if (text[0] && !*end && !errno && v > 0)
			out->speed_mbps = v;
	}
	if (!out->driver[0]) {
		pg_fmt_cut(why, why_len, "%s: not bound to any driver, the class wants %s", pci,
			   driver);
		return 1;
	}
	if (strcmp(out->driver, driver) != 0) {
		pg_fmt_cut(why, why_len, "%s: bound to %s, the class wants %s", pci, out->driver,
			   driver);
		return 1;
	}
	if (numa_node >= 0 && out->numa_node != numa_node) {
		pg_fmt_cut(why, why_len, "%s: on NUMA node %d, the class says %d", pci,
			   out->numa_node, numa_node);
		return 1;
	}
	if (strcmp(driver, "vfio-pci") == 0 && !out->iommu_group[0]) {
		pg_fmt_cut(why, why_len, "%s: bound to vfio-pci but in no IOMMU group (is the "
			   "IOMMU on? intel_iommu=on / amd_iommu=on, or vfio's no-IOMMU mode)", pci);
		return 1;
	}
	return 0;
}

cJSON *portcheck_to_json(const struct portcheck_port *p)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "pci", p->pci) ||
	    (p->driver[0] && !cJSON_AddStringToObject(o, "driver", p->driver)) ||
	    (p->numa_node >= 0 && !cJSON_AddNumberToObject(o, "numa_node", p->numa_node)) ||
	    (p->vendor[0] && !cJSON_AddStringToObject(o, "vendor", p->vendor)) ||
	    (p->device[0] && !cJSON_AddStringToObject(o, "device", p->device)) ||
	    (p->iommu_group[0] && !cJSON_AddStringToObject(o, "iommu_group", p->iommu_group)) ||
	    (p->iface[0] && !cJSON_AddStringToObject(o, "iface", p->iface)) ||
	    (p->speed_mbps > 0 && !cJSON_AddNumberToObject(o, "speed_mbps",
							   (double)p->speed_mbps))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
