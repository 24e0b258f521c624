/* SPDX-License-Identifier: MIT */
#ifndef CTL_CTL_OUTBOX_H
#define CTL_CTL_OUTBOX_H

/*
 * The outboxes as the controller runs them (outbox.h has the rules): the
 * daemon's delivery thread, with its own store connection, Patchwork
 * client and SMTP password, making one pass of each outbox every
 * CTL_OUTBOX_TICK_MS; and the `outbox` command.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "ctl_config.h"
#include "err.h"
#include "outbox.h"
#include "smtp.h"

#define CTL_OUTBOX_TICK_MS 1000
/* The most bytes of a Patchwork token file read; the token is its first
 * line. */
#define CTL_OUTBOX_TOKEN_MAX 256

struct ctl_outbox {
	struct store *st;
	struct pg_pw_client *pw;
	char password[SMTP_PASSWORD_MAX + 1];
	struct outbox ob;
	atomic_bool stop;
	pthread_t thread;
	bool started;
};

/*
 * Start the delivery thread when checks or mail are enabled (otherwise
 * nothing runs, and the queued rows wait): open the store, read the
 * Patchwork token (checks.token_file: its first line, printable, without
 * spaces) and the SMTP password, make the client.  pg_http_global_init()
 * must have been called.  Returns 0 (o->started says whether a thread
 * runs), or -1 with err (a token or password file that cannot be read is a
 * start-up error, not a silent outbox).
 */
int ctl_outbox_start(struct ctl_outbox *o, const struct ctl_config *cfg, struct pg_err *err);

/* Stop the thread (it finishes the row in hand: at most one request's
 * timeout) and free everything.  Safe on a zeroed or failed *o. */
void ctl_outbox_stop(struct ctl_outbox *o);

/*
 * `outbox list [--json] [--all]`: the rows not yet delivered and the
 * failed ones (--all: every row), as a table or JSON (outbox_list()).
 * `outbox retry check|mail ID`: queue a failed or cancelled row again,
 * due now.
 */
int ctl_cmd_outbox(const struct ctl_config *cfg, int argc, char **argv);

#endif
