/* SPDX-License-Identifier: MIT */
#ifndef CTL_SSH_CONN_H
#define CTL_SSH_CONN_H

/*
 * One SSH connection to a lab host, over libssh, as the dispatcher
 * (ssh_disp.h) and `perfgate-controller host check` use it:
 *
 *   - only the host's own known_hosts file is read (no ~/.ssh/config, no
 *     global file); an unknown key is refused unless the host trusts on
 *     first use, a changed one always; the error names the host, the key
 *     type and its SHA256 fingerprint, and how to trust it;
 *   - public-key authentication with the configured key only (no agent,
 *     no password, no keyboard-interactive);
 *   - connect_timeout_s bounds the connection, key exchange and
 *     authentication; TCP keepalives every keepalive_s;
 *   - a command runs on a channel of its own (ssh_cmd): its stdout read as
 *     lines within a deadline each, its stderr drained into the
 *     controller's log (sanitised, prefixed with the host) with the last
 *     lines kept for error messages, so that a talkative remote program
 *     never stalls on a full window.
 *
 * A struct ssh_conn and its commands are used by one thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "ssh_config.h"

#define SSH_FP_MAX 128
#define SSH_STDERR_TAIL 2048

struct ssh_conn;
struct ssh_cmd;

/* Call once before any thread connects (libssh's own set-up).  Returns 0
 * or -1. */
int ssh_conn_global_init(struct pg_err *err);
void ssh_conn_global_cleanup(void);

/*
 * Connect to h, check its host key and authenticate.  fp (SSH_FP_MAX
 * bytes) gets the host key's "TYPE SHA256:..." as soon as it is known,
 * also when the key is refused ("" when the connection failed before).
 * *trusted_now says whether the key was just added to known_hosts (trust
 * on first use).  Returns 0 with *out set, or -1 with err: PG_ECONFLICT
 * for a refused host key, PG_EINVAL for a refused key file, PG_ETIMEOUT,
 * PG_EIO.
 */
int ssh_conn_open(const struct ssh_host_cfg *h, const struct ssh_cfg *c, struct ssh_conn **out,
		  char *fp, bool *trusted_now, struct pg_err *err);

/* Close and free; NULL is fine. */
void ssh_conn_close(struct ssh_conn *conn);

/* Send an SSH ignore message (keeps NATs and the server's idle timers
 * happy, and finds a dead connection).  Returns 0 or -1. */
int ssh_conn_keepalive(struct ssh_conn *conn, struct pg_err *err);

/*
 * Quote argv for the remote user's shell (SSH runs every command through
 * it): "exec 'a' 'b' ..." with each ' written as '\''.  The exec makes the
 * program the session's process itself, so that its stdin closes with
 * the connection.  Arguments may not hold control characters.  Pure.
 * Returns 0, or -1 with err.
 */
int ssh_quote_argv(const char *const *argv, struct pg_buf *out, struct pg_err *err);

/* Run argv on a new channel.  Returns 0 with *out set, or -1. */
int ssh_cmd_start(struct ssh_conn *conn, const char *const *argv, struct ssh_cmd **out,
		  struct pg_err *err);

/* Write all of data to the command's stdin.  Returns 0 or -1. */
int ssh_cmd_write(struct ssh_cmd *cmd, const void *data, size_t len, struct pg_err *err);

/* Close the command's stdin.  Returns 0 or -1. */
int ssh_cmd_send_eof(struct ssh_cmd *cmd, struct pg_err *err);

/*
 * The next line of the command's stdout into line (without its '\n';
 * bounded by line->max: a longer line fails with PG_ETOOBIG), waiting up
 * to timeout_ms for it.  Returns 1 with a line, 0 at the end of the
 * output (a last line without '\n' is returned first), or -1 with err:
 * PG_ETIMEOUT when nothing complete came in time, PG_EIO when the channel
 * or the connection failed.
 */
int ssh_cmd_read_line(struct ssh_cmd *cmd, struct pg_buf *line, int64_t timeout_ms,
		      struct pg_err *err);

/* Wait (up to timeout_ms) for the command's exit status.  Returns 0 with
 * *status (-1 when the command was killed by a signal or the server sent
 * none), or -1. */
int ssh_cmd_wait(struct ssh_cmd *cmd, int64_t timeout_ms, int *status, struct pg_err *err);

/* The last SSH_STDERR_TAIL bytes of its stderr, sanitised ("" when
 * none). */
const char *ssh_cmd_stderr_tail(struct ssh_cmd *cmd);

/* Close the channel and free; NULL is fine. */
void ssh_cmd_free(struct ssh_cmd *cmd);

/*
 * Copy the local file to remote_path over SFTP: written to a temporary
 * next to it, given mode, then renamed over it, so that a run-one
 * starting meanwhile never sees half a program.  Returns 0 or -1.
 */
int ssh_conn_upload(struct ssh_conn *conn, const char *local, const char *remote_path,
		    int mode, struct pg_err *err);

#endif
