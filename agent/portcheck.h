/* SPDX-License-Identifier: MIT */
#ifndef AGENT_PORTCHECK_H
#define AGENT_PORTCHECK_H

/*
 * The ports of a host class (lib/profile.h, host_classes.NAME.ports),
 * checked on the agent before a job's benchmarks run, and their facts for
 * the result's fingerprint.  Everything is read from sysfs below a root
 * prefix ("" on a host; a fake tree's directory in the unit tests), nothing is
 * changed: binding a NIC to vfio-pci is the lab's setup (README, "Ports").
 *
 * For a PCI port ADDR, under ROOT/sys/bus/pci/devices/ADDR:
 *   exists                 else "no such PCI device"
 *   driver -> .../NAME     NAME must be the class's driver ("not bound to
 *                          any driver" when the link is missing)
 *   numa_node              must be the class's numa_node when it names one
 *                          (the kernel's -1, "no node", never matches)
 *   vendor, device         facts: "0x8086", "0x159b"
 *   iommu_group -> .../N   fact; with vfio-pci, /dev/vfio/N is the device
 *                          node that the sandbox must let DPDK open
 *   net/IFACE/speed        fact, Mb/s, only while a kernel netdev driver
 *                          holds the port (vfio-pci has no netdev)
 * A firmware version has no generic sysfs file (ethtool -i asks the
 * kernel driver, which a vfio-bound port does not have): not reported.
 */

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define PORTCHECK_TEXT 64

struct portcheck_port {
	char pci[16];			/* "0000:3b:00.0" */
	char driver[PORTCHECK_TEXT];	/* "" when unbound */
	int numa_node;			/* -1 when unknown or none */
	char vendor[16], device[16];	/* "" when unreadable */
	char iommu_group[16];		/* "" when none */
	char iface[PORTCHECK_TEXT];	/* kernel netdev, "" when none */
	long speed_mbps;		/* -1 when unknown (no link, no netdev) */
};

/*
 * Read the facts of PCI device pci below root into *out and check them
 * against the class: driver (required) and numa_node (-1: not checked).
 * Returns 0 when the port is as the class says, 1 when it is not (why, of
 * why_len bytes, says what differs, e.g. "0000:3b:00.0: bound to ice,
 * not vfio-pci"), -1 when pci or root is unusable (why says so).  *out
 * is filled as far as it could be read in every case.
 */
int portcheck_pci(const char *root, const char *pci, const char *driver, int numa_node,
		  struct portcheck_port *out, char *why, size_t why_len);

/* The facts as a JSON object: pci, driver, numa_node, vendor, device,
 * iommu_group, iface, speed_mbps (the unknown ones left out).  NULL when
 * out of memory. */
cJSON *portcheck_to_json(const struct portcheck_port *p);

#endif
