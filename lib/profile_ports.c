/* SPDX-License-Identifier: MIT */
/*
 * Ports: a host class's "ports" and a testpmd benchmark's "fwd" (what it
 * forwards over them), their checks, printout and the arguments built
 * from them.  Kept apart from the rest of the loader so that the port
 * rules live in one place (profile.h documents the fields).
 */
#include "profile_int.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

static const char *const fwd_mode_names[] = {
	"io", "mac", "macswap", "flowgen", "txonly", "rxonly", NULL
};

const char *profile_fwd_mode_name(enum profile_fwd_mode m)
{
	return (size_t)m < sizeof(fwd_mode_names) / sizeof(fwd_mode_names[0]) - 1 ?
	       fwd_mode_names[m] : "io";
}

static bool is_hex(char c)
{
	return profile_is_digit(c) || (c >= 'a' && c <= 'f');
}

/* "DDDD:BB:DD.F" in lower case, as sysfs names the device. */
static bool valid_pci(const char *s)
{
	static const char form[] = "hhhh:hh:hh.h";

	if (strlen(s) != sizeof(form) - 1)
		return false;
	for (size_t i = 0; form[i]; i++)
		if (form[i] == 'h' ? !is_hex(s[i]) : s[i] != form[i])
			return false;
	/* device 0..1f, function 0..7 */
	return s[8] <= '1' && s[11] <= '7';
}

/* A kernel driver name: it is compared with the basename of sysfs's
 * driver link and must not walk anywhere. */
static bool valid_driver(const char *s)
{
	if (!*s || strlen(s) > PROFILE_NAME_MAX)
		return false;
	for (const char *p = s; *p; p++)
		if (!profile_is_alnum(*p) && !strchr("_-", *p))
			return false;
	return true;
}

/* "net_NAME[,k=v...]": what EAL's --vdev takes for a network port.  No
 * blanks or quotes: it is passed as one argument, never to a shell. */
static bool valid_vdev(const char *s)
{
	if (strncmp(s, "net_", 4) != 0 || !profile_is_alnum(s[4]) || strlen(s) > 255)
		return false;
	for (const char *p = s; *p; p++)
		if (!profile_is_alnum(*p) && !strchr("_.,=/:-", *p))
			return false;
	return true;
}

static int load_port(struct profile_loader *ld, const char *path, const cJSON *obj,
		     struct profile_port *pt)
{
	static const char *const keys[] = { "pci", "driver", "numa_node", "vdev", NULL };

	pt->numa_node = -1;
	if (!cJSON_IsObject(obj))
		return profile_fail(ld, path, "expected an object");
	if (profile_check_object(ld, path, obj, keys, "unknown field") < 0 ||
	    profile_get_text(ld, path, obj, "pci", false, PROFILE_VALUE_MAX, &pt->pci) < 0 ||
	    profile_get_text(ld, path, obj, "driver", false, PROFILE_VALUE_MAX, &pt->driver) < 0 ||
	    profile_get_int(ld, path, obj, "numa_node", false, 0, 1023, &pt->numa_node) < 0 ||
	    profile_get_text(ld, path, obj, "vdev", false, PROFILE_VALUE_MAX, &pt->vdev) < 0)
		return -1;
	if (!pt->pci == !pt->vdev)
		return profile_fail(ld, path, "exactly one of \"pci\" and \"vdev\" expected");
	if (pt->vdev) {
		if (!valid_vdev(pt->vdev))
			return profile_fail_at(ld, path, "vdev", "'%s' is not a network vdev "
					       "(net_NAME[,key=value...])", pt->vdev);
		if (pt->driver || pt->numa_node >= 0)
			return profile_fail(ld, path, "\"driver\" and \"numa_node\" are for "
					    "PCI ports only");
		return 0;
	}
	if (!valid_pci(pt->pci))
		return profile_fail_at(ld, path, "pci", "'%s' is not a PCI address of the form "
				       "0000:3b:00.0 (lower-case hex)", pt->pci);
	if (!pt->driver)
		return profile_fail_at(ld, path, "driver", "required for a PCI port (e.g. "
				       "\"vfio-pci\")");
	if (!valid_driver(pt->driver))
		return profile_fail_at(ld, path, "driver", "'%s' is not a driver name",
				       pt->driver);
	return 0;
}

int profile_load_ports(struct profile_loader *ld, const char *path, const cJSON *obj,
		       struct profile_host_class *hc)
{
	char apath[PROFILE_PATH_LEN], ipath[PROFILE_PATH_LEN];
	const cJSON *arr = NULL, *it;
	int rc = profile_get_array(ld, path, obj, "ports", false, &arr);

	if (rc <= 0)
		return rc;
	profile_path_join(apath, path, "ports");
	if (cJSON_GetArraySize(arr) < 1 || cJSON_GetArraySize(arr) > PROFILE_MAX_PORTS)
		return profile_fail(ld, apath, "1 to %d ports expected", PROFILE_MAX_PORTS);
	hc->ports = calloc((size_t)cJSON_GetArraySize(arr), sizeof(*hc->ports));
	if (!hc->ports)
		return profile_oom(ld);
	cJSON_ArrayForEach(it, arr) {
		struct profile_port *pt = &hc->ports[hc->n_ports++];

		profile_path_index(ipath, apath, hc->n_ports - 1);
		if (load_port(ld, ipath, it, pt) < 0)
			return -1;
		if (!pt->pci != !hc->ports[0].pci)
			return profile_fail(ld, ipath, "a class's ports are all PCI or all virtual");
		for (size_t j = 0; j + 1 < hc->n_ports; j++)
			if ((pt->pci && strcmp(pt->pci, hc->ports[j].pci) == 0) ||
			    (pt->vdev && strcspn(pt->vdev, ",") == strcspn(hc->ports[j].vdev, ",") &&
			     strncmp(pt->vdev, hc->ports[j].vdev, strcspn(pt->vdev, ",")) == 0))
				return profile_fail(ld, ipath, "the same port as ports[%zu]", j);
	}
	return 0;
}

int profile_load_fwd(struct profile_loader *ld, const char *path, const cJSON *obj,
		     struct profile_benchmark *b)
{
	static const char *const keys[] = {
		"mode", "frame_sizes", "rxd", "txd", "queues", "cores_per_port", NULL
	};
	struct profile_fwd *f = &b->fwd;
	char fpath[PROFILE_PATH_LEN];
	const cJSON *o = NULL;
	int mode = PROFILE_FWD_IO;
	int rc = profile_get_object(ld, path, obj, "fwd", false, &o);

	if (rc <= 0)
		return rc;
	profile_path_join(fpath, path, "fwd");
	f->rxd = f->txd = 512;
	f->queues = f->cores_per_port = 1;
	f->frame_sizes = malloc(sizeof(*f->frame_sizes));
	if (!f->frame_sizes)
		return profile_oom(ld);
	f->frame_sizes[0] = 64;
	f->n_frame_sizes = 1;
	b->has_fwd = true;
	if (profile_check_object(ld, fpath, o, keys, "unknown field") < 0 ||
	    profile_get_enum(ld, fpath, o, "mode", false, fwd_mode_names, &mode) < 0 ||
	    profile_get_uintlist(ld, fpath, o, "frame_sizes", PROFILE_FRAME_MIN,
				 PROFILE_FRAME_MAX, &f->frame_sizes, &f->n_frame_sizes) < 0 ||
	    profile_get_int(ld, fpath, o, "rxd", false, 32, 65536, &f->rxd) < 0 ||
	    profile_get_int(ld, fpath, o, "txd", false, 32, 65536, &f->txd) < 0 ||
	    profile_get_int(ld, fpath, o, "queues", false, 1, 64, &f->queues) < 0 ||
	    profile_get_int(ld, fpath, o, "cores_per_port", false, 1, 64,
			    &f->cores_per_port) < 0)
		return -1;
	f->mode = (enum profile_fwd_mode)mode;
	if (f->n_frame_sizes > PROFILE_MAX_FRAME_SIZES)
		return profile_fail_at(ld, fpath, "frame_sizes", "at most %d sizes",
				       PROFILE_MAX_FRAME_SIZES);
	/* testpmd gives each forwarding lcore its own streams: more lcores
	 * than a port's queues would sit idle, and say nothing. */
	if (f->cores_per_port > f->queues)
		return profile_fail_at(ld, fpath, "cores_per_port", "%d is more than queues %d",
				       f->cores_per_port, f->queues);
	return 0;
}

/* Arguments that a "fwd" benchmark's args may not carry: the ports come
 * from the host class, the forwarding setup from "fwd". */
static const char *const eal_port_args[] = {
	"--no-pci", "-a", "--allow", "-b", "--block", "-w", "--vdev", "--vdev=*", "-a*", NULL
};
static const char *const fwd_args[] = {
	"--forward-mode=*", "--rxq=*", "--txq=*", "--rxd=*", "--txd=*", "--nb-cores=*",
	"--txpkts=*", "--port-topology=*", "--tx-first", "-i", "--interactive", NULL
};

int profile_check_fwd_args(struct profile_loader *ld, const char *path,
			   const struct profile_benchmark *b)
{
	char apath[PROFILE_PATH_LEN];
	bool after = false;

	if (!b->has_fwd)
		return 0;
	profile_path_join(apath, path, "fwd");
	if (b->parser != PROFILE_PARSER_TESTPMD)
		return profile_fail(ld, apath, "only for parser testpmd");
	if (b->stdin_mode != PROFILE_STDIN_HOLD)
		return profile_fail(ld, apath, "needs stdin \"hold\" (testpmd forwards until "
				    "its stdin closes)");
	profile_path_join(apath, path, "args");
	for (size_t i = 0; i < b->n_args; i++) {
		const char *const *bad = after ? fwd_args : eal_port_args;

		if (strcmp(b->args[i], "--") == 0) {
			if (after)
				return profile_fail_idx(ld, apath, i, "a second \"--\"");
			after = true;
			continue;
		}
		for (size_t k = 0; bad[k]; k++)
			if (fnmatch(bad[k], b->args[i], 0) == 0)
				return profile_fail_idx(ld, apath, i, "'%s': with \"fwd\" this "
							"comes from %s", b->args[i], after ?
							"\"fwd\"" : "the host class's ports");
	}
	return 0;
}

int profile_check_fwd_class(struct profile_loader *ld, const char *path, size_t i,
			    const struct profile_benchmark *b,
			    const struct profile_host_class *hc)
{
	size_t need;

	if (!b->has_fwd)
		return 0;
	if (!hc->n_ports)
		return profile_fail_idx(ld, path, i, "benchmark '%s' forwards over ports "
					"(fwd) but host class '%s' has none", b->name, hc->name);
	/* the main lcore does not forward */
	need = (size_t)b->fwd.cores_per_port * hc->n_ports + 1;
	if (need > hc->n_lcores)
		return profile_fail_idx(ld, path, i, "benchmark '%s' needs %zu lcores "
					"(cores_per_port x %zu ports + the main lcore) but host "
					"class '%s' has %zu", b->name, need, hc->n_ports,
					hc->name, hc->n_lcores);
	return 0;
}

int profile_fwd_key(unsigned frame_size, const char *key, char *out, size_t len)
{
	size_t head = strcspn(key, ".");

	if (!key[head])
		return -1;
	return pg_fmt(out, len, "%.*s.size%u%s", (int)head, key, frame_size, key + head) < 0 ?
	       -1 : 0;
}

bool profile_fwd_gate_can_match(const struct profile_benchmark *b, const char *pattern,
				const char *const *keys, const char *const *port_keys)
{
	char key[128], sized[160];

	for (size_t s = 0; s < b->fwd.n_frame_sizes; s++) {
		for (size_t i = 0; keys[i]; i++)
			if (profile_fwd_key(b->fwd.frame_sizes[s], keys[i], sized,
					    sizeof(sized)) == 0 &&
			    fnmatch(pattern, sized, 0) == 0)
				return true;
		for (unsigned port = 0; port < PROFILE_MAX_PORTS; port++)
			for (size_t i = 0; port_keys[i]; i++)
				if (pg_fmt(key, sizeof(key), "port%u.%s", port, port_keys[i]) >= 0 &&
				    profile_fwd_key(b->fwd.frame_sizes[s], key, sized,
						    sizeof(sized)) == 0 &&
				    fnmatch(pattern, sized, 0) == 0)
					return true;
	}
	return false;
}

static int push(struct pg_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int push(struct pg_buf *out, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = pg_buf_vprintf(out, fmt, ap);
	va_end(ap);
	return rc < 0 ? -1 : pg_buf_add(out, "", 1);
}

int profile_fwd_args(const struct profile_fwd *f, size_t n_ports, const char *frame_size,
		     struct pg_buf *out)
{
	if (push(out, "--forward-mode=%s", profile_fwd_mode_name(f->mode)) < 0 ||
	    push(out, "--rxq=%d", f->queues) < 0 || push(out, "--txq=%d", f->queues) < 0 ||
	    push(out, "--rxd=%d", f->rxd) < 0 || push(out, "--txd=%d", f->txd) < 0 ||
	    push(out, "--nb-cores=%zu", (size_t)f->cores_per_port * n_ports) < 0 ||
	    push(out, "--txpkts=%s", frame_size) < 0 || push(out, "--record-core-cycles") < 0)
		return -1;
	if (n_ports == 1 && push(out, "--port-topology=loop") < 0)
		return -1;
	if ((f->mode == PROFILE_FWD_IO || f->mode == PROFILE_FWD_MAC ||
	     f->mode == PROFILE_FWD_MACSWAP) && push(out, "--tx-first") < 0)
		return -1;
	return 0;
}

int profile_print_ports(cJSON *o, const struct profile_host_class *hc)
{
	cJSON *arr;

	if (!hc->n_ports)
		return 0;
	arr = cJSON_AddArrayToObject(o, "ports");
	if (!arr)
		return -1;
	for (size_t i = 0; i < hc->n_ports; i++) {
		const struct profile_port *pt = &hc->ports[i];
		cJSON *e = cJSON_CreateObject();

		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			return -1;
		}
		if ((pt->pci && (!cJSON_AddStringToObject(e, "pci", pt->pci) ||
				 !cJSON_AddStringToObject(e, "driver", pt->driver))) ||
		    (pt->numa_node >= 0 && !cJSON_AddNumberToObject(e, "numa_node", pt->numa_node)) ||
		    (pt->vdev && !cJSON_AddStringToObject(e, "vdev", pt->vdev)))
			return -1;
	}
	return 0;
}

int profile_print_fwd(cJSON *o, const struct profile_benchmark *b)
{
	const struct profile_fwd *f = &b->fwd;
	cJSON *fo, *arr;

	if (!b->has_fwd)
		return 0;
	if (!(fo = cJSON_AddObjectToObject(o, "fwd")) ||
	    !cJSON_AddStringToObject(fo, "mode", profile_fwd_mode_name(f->mode)) ||
	    !(arr = cJSON_AddArrayToObject(fo, "frame_sizes")))
		return -1;
	for (size_t i = 0; i < f->n_frame_sizes; i++) {
		cJSON *n = cJSON_CreateNumber(f->frame_sizes[i]);

		if (!n || !cJSON_AddItemToArray(arr, n)) {
			cJSON_Delete(n);
			return -1;
		}
	}
	if (!cJSON_AddNumberToObject(fo, "rxd", f->rxd) ||
	    !cJSON_AddNumberToObject(fo, "txd", f->txd) ||
	    !cJSON_AddNumberToObject(fo, "queues", f->queues) ||
	    !cJSON_AddNumberToObject(fo, "cores_per_port", f->cores_per_port))
		return -1;
	return 0;
}

void profile_free_ports(struct profile_host_class *hc)
{
	for (size_t i = 0; hc->ports && i < hc->n_ports; i++) {
		free(hc->ports[i].pci);
		free(hc->ports[i].driver);
		free(hc->ports[i].vdev);
	}
	free(hc->ports);
	hc->ports = NULL;
	hc->n_ports = 0;
}
