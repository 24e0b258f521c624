/* SPDX-License-Identifier: MIT */
#ifndef CTL_SSH_CONFIG_H
#define CTL_SSH_CONFIG_H

/*
 * The "ssh" section of the controller's configuration: lab hosts that run
 * no agent daemon and are driven over SSH (controller/ssh_disp.h).
 *
 *   "ssh": {
 *     "max_connections": 16     hosts connected at once (1..1024)
 *     "connect_timeout_s": 15   TCP connect, key exchange, authentication
 *     "io_timeout_s": 120       the longest silence on a channel: run-one
 *                               writes a heartbeat line every heartbeat_s,
 *                               so a longer silence is a dead connection
 *                               (during a job at least 3 heartbeat_s)
 *     "keepalive_s": 15         TCP keepalive and an SSH ignore message
 *                               this often on an idle connection
 *     "max_backoff_s": 300      the longest pause between reconnections
 *     "hosts": [{
 *       "name": "arm1"          how the controller knows it (an agent name)
 *       "host": "arm1.lab.example.org", "port": 22, "user": "perfgate"
 *       "key_file": "keys/arm1" the private key (public-key authentication
 *                               only); refused when group or others may
 *                               read it
 *       "known_hosts": "known_hosts"   the host keys trusted, OpenSSH's
 *                               format; an unknown or changed key refuses
 *                               the connection
 *       "trust_on_first_use": false    true: an unknown host's key is
 *                               added to known_hosts at the first
 *                               connection (a changed one still refused)
 *       "labels": {"vendor": "ampere", "arch": "aarch64"}   over the
 *                               labels run-one --facts reports
 *       "agent": "/usr/local/bin/perfgate-agent"   the program on the host
 *       "install": "path"       use "agent" as it is; "copy": copy this
 *                               build's perfgate-agent there over SFTP when
 *                               its version differs
 *       "agent_config": "/etc/perfgate/agent.json"   on the host; optional
 *       "work_dir": "/var/lib/perfgate/work", "spool_dir": "/var/lib/perfgate/spool"
 *                               on the host; optional (the agent
 *                               configuration's otherwise)
 *       "runner": "dpdk"        optional, as the agent configuration's
 *     }]
 *   }
 *
 * Paths on the controller (key_file, known_hosts) are relative to the
 * configuration file; paths on the host must be absolute.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define SSH_MAX_HOSTS 1024
#define SSH_HOST_NAME_MAX 64

struct ssh_host_cfg {
	char *name;
	char *host;
	int64_t port;
	char *user;
	char *key_file;
	char *known_hosts;
	bool tofu;
	char **label_keys;
	char **label_values;
	size_t n_labels;
	char *agent;
	bool install_copy;
	char *agent_config;	/* NULL when not set */
	char *work_dir;		/* NULL when not set */
	char *spool_dir;	/* NULL when not set */
	char *runner;		/* NULL when not set */
};

struct ssh_cfg {
	struct ssh_host_cfg *hosts;
	size_t n_hosts;
	int64_t max_connections;
	int64_t connect_timeout_s;
	int64_t io_timeout_s;
	int64_t keepalive_s;
	int64_t max_backoff_s;
};

#define SSH_MAX_CONNECTIONS 16
#define SSH_CONNECT_TIMEOUT_S 15
#define SSH_IO_TIMEOUT_S 120
#define SSH_KEEPALIVE_S 15
#define SSH_MAX_BACKOFF_S 300

/* Defaults, no hosts. */
void ssh_config_defaults(struct ssh_cfg *c);

/* Parse root's "ssh" section (absent: defaults, no hosts); dir resolves
 * relative paths.  Returns 0, or -1 with err naming the field
 * ("field 'ssh.hosts[1].port': ..."). */
int ssh_config_parse(struct ssh_cfg *c, const cJSON *root, const char *dir,
		     struct pg_err *err);

void ssh_config_free(struct ssh_cfg *c);

/* The host named name, or NULL. */
const struct ssh_host_cfg *ssh_config_host(const struct ssh_cfg *c, const char *name);

/*
 * The private key file may be used: a regular file that neither group nor
 * others may read or write (as OpenSSH demands).  Returns 0, or -1 with
 * err naming the host, the file and its mode.
 */
int ssh_config_key_ok(const struct ssh_host_cfg *h, struct pg_err *err);

/* "user@host:port", into out (size bytes; cut to fit). */
void ssh_config_target(const struct ssh_host_cfg *h, char *out, size_t size);

/* The section as the normalised configuration shows it; NULL when out of
 * memory. */
cJSON *ssh_config_to_json(const struct ssh_cfg *c);

#endif
