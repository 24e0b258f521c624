/* SPDX-License-Identifier: MIT */
#ifndef CTL_SSH_STATE_H
#define CTL_SSH_STATE_H

/*
 * What the SSH dispatcher (ssh_disp.h) last knew of each host it drives:
 * the owner of table ssh_hosts.  The dispatcher writes it as the
 * connection moves; `agent list`, GET /api/v1/agents (each SSH host's
 * "ssh" object), /metrics and the dashboard read it, from any process.
 *
 *   disconnected  not connected; the next try comes after a backoff
 *   connecting    connecting, checking the host key, authenticating,
 *                 checking the agent program, collecting spooled results
 *   idle          connected, asking the controller for a job
 *   running       running job_id (attempt) with run-one
 *   error         the last connection failed (last_error says why); the
 *                 next try comes after a backoff
 */

#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "store.h"

enum ssh_state {
	SSH_STATE_DISCONNECTED,
	SSH_STATE_CONNECTING,
	SSH_STATE_IDLE,
	SSH_STATE_RUNNING,
	SSH_STATE_ERROR,
	SSH_STATE_COUNT
};

const char *ssh_state_name(enum ssh_state s);

/* The host's row exists, for agent agent_id reached at target
 * ("user@host:port"), in state disconnected (a row left by an earlier
 * start keeps its counters and last error).  Returns 0 or -1. */
int ssh_state_init(struct store *st, int64_t agent_id, const char *target, int64_t now,
		   struct pg_err *err);

/* Move to state s; job_id and attempt name the job for SSH_STATE_RUNNING
 * (0 otherwise).  Returns 0 or -1. */
int ssh_state_set(struct store *st, int64_t agent_id, enum ssh_state s, int64_t job_id,
		  int64_t attempt, int64_t now, struct pg_err *err);

/* A connection was made: the host key's fingerprint ("SHA256:...", may
 * be NULL when not known yet), and the agent's version there (may be
 * NULL).  Counts the connection; state connecting.  Returns 0 or -1. */
int ssh_state_connected(struct store *st, int64_t agent_id, const char *host_key,
			const char *agent_version, int64_t now, struct pg_err *err);

/* A connection failed or dropped: state error, the message (control
 * characters replaced) as last_error, host_key recorded when not NULL
 * (a refused key is shown).  Returns 0 or -1. */
int ssh_state_error(struct store *st, int64_t agent_id, const char *msg,
		    const char *host_key, int64_t now, struct pg_err *err);

/* The host's row as {"target", "state", "job", "attempt", "host_key",
 * "agent_version", "last_error", "last_error_at", "connected_at",
 * "connects", "failures", "updated_at"}, or JSON null when it has none.
 * Returns 0 with *out set, or -1. */
int ssh_state_json(struct store *st, int64_t agent_id, cJSON **out, struct pg_err *err);

/* Hosts per state, counts[SSH_STATE_COUNT].  Returns 0 or -1. */
int ssh_state_counts(struct store *st, int64_t counts[SSH_STATE_COUNT], struct pg_err *err);

#endif
