/* SPDX-License-Identifier: MIT */
#ifndef CTL_INTAKE_CMD_H
#define CTL_INTAKE_CMD_H

/*
 * Intake as the controller runs it: one pass over the configured sources
 * (or over archives and mbox files named on the command line), used by the
 * `ingest` command and periodically by the daemon; and the `series`
 * views of what the store holds.
 */

#include <signal.h>
#include <stddef.h>

#include "ctl_config.h"
#include "err.h"
#include "intake.h"
#include "profile.h"
#include "store.h"

/* What one pass reads: the configured sources, or only these. */
struct ctl_intake_plan {
	const char *const *inboxes;	/* paths or URLs given on the command line */
	size_t n_inboxes;
	const char *const *mboxes;	/* mbox files */
	size_t n_mboxes;
	const char *only_source;	/* a configured source's name, or NULL */
};

/* Set up *in for store st with our contexts from ps (which must outlive
 * it).  Returns 0 or -1. */
int ctl_intake_init(struct intake *in, const struct ctl_config *cfg,
		    const struct profile_set *ps, struct store *st, struct pg_err *err);

void ctl_intake_release(struct intake *in);

/*
 * Run one pass: each source in turn, then mark stale series.  A source
 * that fails (network down, archive missing) is logged and counted in
 * *failed, and the others still run.  Returns 0, or -1 when the store
 * failed (nothing else makes sense then).
 */
int ctl_intake_pass(const struct ctl_config *cfg, struct intake *in,
		    const struct ctl_intake_plan *plan, const volatile sig_atomic_t *stop,
		    int *failed, struct pg_err *err);

/* `ingest`, `series list`, `series show ID` (argv[0] is the command). */
int ctl_cmd_ingest(const struct ctl_config *cfg, int argc, char **argv);
int ctl_cmd_series(const struct ctl_config *cfg, int argc, char **argv);

#endif
