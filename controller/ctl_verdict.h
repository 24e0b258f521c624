/* SPDX-License-Identifier: MIT */
#ifndef CTL_CTL_VERDICT_H
#define CTL_CTL_VERDICT_H

/*
 * Verdicts as the controller runs them (verdict_pass.h has the rules): the
 * daemon's pass, and the `verdicts` and `run show` commands.
 */

#include "ctl_config.h"
#include "err.h"
#include "profile.h"
#include "store.h"
#include "verdict_pass.h"

/* One pass with the configuration's mail section; *stats gets its counts
 * (may be NULL).  report as in struct verdict_pass.  Returns 0, or -1 when
 * the store failed (a job that cannot be decided is only counted). */
int ctl_verdict_pass(const struct ctl_config *cfg, struct store *st,
		     const struct profile_set *ps, int64_t run_id, struct pg_buf *report,
		     struct verdict_pass_stats *stats, struct pg_err *err);

/* `verdicts [--run ID]`: one pass, printing each decision and the counts. */
int ctl_cmd_verdicts(const struct ctl_config *cfg, int argc, char **argv);

/* `run show ID`: verdict_run_show(). */
int ctl_cmd_run(const struct ctl_config *cfg, int argc, char **argv);

#endif
