/* SPDX-License-Identifier: MIT */
#ifndef CTL_SSH_DISP_H
#define CTL_SSH_DISP_H

/*
 * The SSH dispatcher: drives the lab hosts of the configuration's "ssh"
 * section (ssh_config.h), which run no agent daemon, so that the store,
 * the verdicts, the checks and the dashboard cannot tell them from daemon
 * agents.  One thread per host; at most ssh.max_connections connected at
 * once: a host waits for a slot, and an idle host (its lease poll found
 * nothing) gives its connection up while another waits, so that more
 * hosts than slots take turns instead of starving.
 *
 * The host leases through the controller's own API, over loopback, as a
 * daemon agent would: its agent row (transport 'ssh', sched_agent_ssh())
 * gets a token made at each start and kept only in this process's memory.
 * Each connection (ssh_conn.h) goes:
 *
 *   connect     host key checked against the host's known_hosts, public
 *               key authentication; `AGENT --version`, and with install
 *               "copy" this build's perfgate-agent copied over SFTP when
 *               the version differs
 *   register    `AGENT run-one --facts`: its labels (the configuration's
 *               over them) and facts, POST /agents/register
 *   collect     `AGENT run-one --collect`: every result spooled on the
 *               host (a job that ended while the connection was down, or
 *               an infra-error run-one spooled when its connection dropped)
 *               is posted, then acknowledged, so that the host removes it:
 *               exactly once, by the controller's per-attempt digest
 *   lease       POST /lease (a short long-poll; a keepalive between two)
 *   job         `AGENT run-one`, the lease answer as its first stdin line;
 *               its lines (lib/runone.h) become heartbeats (a cancel, 409
 *               or 404 is sent back as a cancel line), log chunks, mbox
 *               fetches and the result, acknowledged once recorded
 *
 * A connection that drops, or stays silent for ssh.io_timeout_s, is a
 * lost lease: run-one sees its stdin close, stops the job (its processes
 * by process group) and spools an infra-error for the attempt, which the
 * next connection's collect delivers, so the job is requeued at once
 * (or, if the host stays away, when its lease expires).  Reconnections
 * back off with full jitter up to ssh.max_backoff_s.  The host's state
 * (ssh_state.h) is kept in the store as it moves.
 */

#include "ctl_config.h"
#include "err.h"

struct ssh_disp;

/*
 * Start a thread per host of cfg->ssh, leasing through the API at api_url
 * (the controller's own, e.g. "http://127.0.0.1:8080").  Refuses to start
 * (-1 with err) when a host's key file is readable by group or others or
 * its name is taken by a daemon agent.  No hosts: *out NULL, 0.  cfg
 * must outlive the dispatcher.
 */
int ssh_disp_start(const struct ctl_config *cfg, const char *api_url, struct ssh_disp **out,
		   struct pg_err *err);

/* Stop every thread (closing its connection: a job running is lost and
 * requeued as above) and free.  NULL is a no-op. */
void ssh_disp_stop(struct ssh_disp *d);

/*
 * `perfgate-controller host check NAME`: connect to the host as the
 * dispatcher would, run `AGENT --version` and `run-one --facts`, and
 * print what was found (host key, agent version, labels, facts' summary)
 * to stdout.  Returns the exit status: 0 all good, 1 otherwise (the
 * reason printed to stderr).
 */
int ssh_disp_check(const struct ctl_config *cfg, const char *name);

#endif
