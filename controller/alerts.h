/* SPDX-License-Identifier: MIT */
#ifndef CTL_ALERTS_H
#define CTL_ALERTS_H

/*
 * Alerts of main-branch regressions (issue 17): a change point that
 * bisection located at one commit (state 'confirmed') with a negative
 * effect is told once by mail to baseline.alert_to (outbox.h,
 * outbox_queue_alert_tx()): the commit, its author and subject, the key,
 * the step's size and p, the host and build mode, the range it was found
 * in and how many baselines located it, and the commands that measure the
 * commit and its parent again.  The dashboard's banner and list and the
 * perfgate_change_points metric read the change points themselves.
 *
 * Exactly once: the pass queues a mail for each such change point that
 * has none (the outbox's UNIQUE change_point_id), each in its own
 * transaction, so a crash between two leaves the rest for the next pass.
 */

#include <stdint.h>

#include "ctl_config.h"
#include "err.h"
#include "store.h"

/*
 * Queue the alert mails due.  mirror_root: the tree mirrors (the commit's
 * author and subject; left out, with a note, when the mirror cannot say);
 * public_url: the dashboard's base URL for the link, or NULL.  Nothing
 * when cfg->baseline.alert_to or mail is not set.  *queued gets the
 * number of mails queued.  Returns 0, or -1 with err (a store error; a
 * change point whose mail cannot be formatted is logged and skipped).
 */
int alerts_pass(const struct ctl_config *cfg, struct store *st, const char *mirror_root,
		const char *public_url, int64_t now_ms, unsigned int *queued,
		struct pg_err *err);

#endif
