/* SPDX-License-Identifier: MIT */
/*
 * agent/portcheck.c against a fake sysfs tree made in a temporary
 * directory: the links and files the kernel has for a PCI device (driver,
 * numa_node, vendor, device, iommu_group, net/IFACE/speed), laid out as
 * on a host with an E810 whose port .0 is bound to vfio-pci and port .1
 * still to ice.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "portcheck.h"
#include "rmtreefx.h"

static char root[] = "/tmp/pg-portcheck-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void dir(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void link_to(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state)
{
	static const char *const dirs[] = {
		"sys", "sys/bus", "sys/bus/pci", "sys/bus/pci/devices", "sys/bus/pci/drivers",
		"sys/bus/pci/drivers/vfio-pci", "sys/bus/pci/drivers/ice", "sys/kernel",
		"sys/kernel/iommu_groups", "sys/kernel/iommu_groups/42",
		"sys/kernel/iommu_groups/43", "sys/devices", "sys/devices/pci0000:3a",
		"sys/devices/pci0000:3a/0000:3b:00.0", "sys/devices/pci0000:3a/0000:3b:00.1",
		"sys/devices/pci0000:3a/0000:3b:00.1/net",
		"sys/devices/pci0000:3a/0000:3b:00.1/net/ens1f1", "sys/devices/pci0000:3a/0000:3c:00.0",
		NULL
	};
	const char *d0 = "sys/devices/pci0000:3a/0000:3b:00.0";
	const char *d1 = "sys/devices/pci0000:3a/0000:3b:00.1";
	char rel[256];

	(void)state;
	assert_non_null(mkdtemp(root));
	for (size_t i = 0; dirs[i]; i++)
		dir(dirs[i]);
	link_to("../../../devices/pci0000:3a/0000:3b:00.0", "sys/bus/pci/devices/0000:3b:00.0");
	link_to("../../../devices/pci0000:3a/0000:3b:00.1", "sys/bus/pci/devices/0000:3b:00.1");
	link_to("../../../devices/pci0000:3a/0000:3c:00.0", "sys/bus/pci/devices/0000:3c:00.0");
	snprintf(rel, sizeof(rel), "%s/driver", d0);
	link_to("../../../bus/pci/drivers/vfio-pci", rel);
	snprintf(rel, sizeof(rel), "%s/iommu_group", d0);
	link_to("../../../kernel/iommu_groups/42", rel);
	snprintf(rel, sizeof(rel), "%s/numa_node", d0);
	put(rel, "0\n");
	snprintf(rel, sizeof(rel), "%s/vendor", d0);
	put(rel, "0x8086\n");
	snprintf(rel, sizeof(rel), "%s/device", d0);
	put(rel, "0x159b\n");
	snprintf(rel, sizeof(rel), "%s/driver", d1);
	link_to("../../../bus/pci/drivers/ice", rel);
	snprintf(rel, sizeof(rel), "%s/iommu_group", d1);
	link_to("../../../kernel/iommu_groups/43", rel);
	snprintf(rel, sizeof(rel), "%s/numa_node", d1);
	put(rel, "1\n");
	snprintf(rel, sizeof(rel), "%s/net/ens1f1/speed", d1);
	put(rel, "25000\n");
	/* 0000:3c:00.0: bound to vfio-pci, no IOMMU group, node -1 */
	link_to("../../../bus/pci/drivers/vfio-pci", "sys/devices/pci0000:3a/0000:3c:00.0/driver");
	put("sys/devices/pci0000:3a/0000:3c:00.0/numa_node", "-1\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fx_rm_tree(root);
}

static void test_as_the_class_says(void **state)
{
	struct portcheck_port p;
	char why[256];
	cJSON *j;
	char *s;

	(void)state;
	assert_int_equal(portcheck_pci(root, "0000:3b:00.0", "vfio-pci", 0, &p, why, sizeof(why)),
			 0);
	assert_string_equal(why, "");
	assert_string_equal(p.driver, "vfio-pci");
	assert_int_equal(p.numa_node, 0);
	assert_string_equal(p.vendor, "0x8086");
	assert_string_equal(p.device, "0x159b");
	assert_string_equal(p.iommu_group, "42");
	assert_string_equal(p.iface, "");
	assert_int_equal(p.speed_mbps, -1);
	j = portcheck_to_json(&p);
	assert_non_null(j);
	s = cJSON_PrintUnformatted(j);
	assert_string_equal(s, "{\"pci\":\"0000:3b:00.0\",\"driver\":\"vfio-pci\",\"numa_node\":0,"
			    "\"vendor\":\"0x8086\",\"device\":\"0x159b\",\"iommu_group\":\"42\"}");
	free(s);
	cJSON_Delete(j);

	/* a kernel-bound port: its netdev and link speed; numa_node unchecked */
	assert_int_equal(portcheck_pci(root, "0000:3b:00.1", "ice", -1, &p, why, sizeof(why)), 0);
	assert_string_equal(p.iface, "ens1f1");
	assert_int_equal(p.speed_mbps, 25000);
	assert_int_equal(p.numa_node, 1);
}

static void test_not_as_the_class_says(void **state)
{
	struct portcheck_port p;
	char why[256], path[PATH_MAX];

	(void)state;
	assert_int_equal(portcheck_pci(root, "0000:3b:00.1", "vfio-pci", 1, &p, why, sizeof(why)),
			 1);
	assert_string_equal(why, "0000:3b:00.1: bound to ice, the class wants vfio-pci");
	assert_int_equal(portcheck_pci(root, "0000:3b:00.1", "ice", 0, &p, why, sizeof(why)), 1);
	assert_string_equal(why, "0000:3b:00.1: on NUMA node 1, the class says 0");
	assert_int_equal(portcheck_pci(root, "0000:3c:00.0", "vfio-pci", 0, &p, why, sizeof(why)),
			 1);
	assert_string_equal(why, "0000:3c:00.0: on NUMA node -1, the class says 0");
	assert_int_equal(portcheck_pci(root, "0000:3c:00.0", "vfio-pci", -1, &p, why, sizeof(why)),
			 1);
	assert_non_null(strstr(why, "0000:3c:00.0: bound to vfio-pci but in no IOMMU group"));
	assert_int_equal(portcheck_pci(root, "0000:5e:00.0", "vfio-pci", -1, &p, why, sizeof(why)),
			 1);
	assert_non_null(strstr(why, "0000:5e:00.0: no such PCI device ("));
	/* unbound: no driver link */
	snprintf(path, sizeof(path), "%s/sys/devices/pci0000:3a/0000:3b:00.1/driver", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(portcheck_pci(root, "0000:3b:00.1", "ice", -1, &p, why, sizeof(why)), 1);
	assert_string_equal(why, "0000:3b:00.1: not bound to any driver, the class wants ice");
	/* what would walk out of sysfs never becomes a path */
	assert_int_equal(portcheck_pci(root, "../../../etc", "ice", -1, &p, why, sizeof(why)), -1);
	assert_int_equal(portcheck_pci(root, "0000:3B:00.0", "ice", -1, &p, why, sizeof(why)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_the_class_says),
		cmocka_unit_test(test_not_as_the_class_says),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
