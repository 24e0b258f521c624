/* SPDX-License-Identifier: MIT */
#ifndef CTL_CMD_H
#define CTL_CMD_H

/*
 * The controller's commands.  Each returns the process exit status:
 * 0 success, 1 failure (the reason printed to stderr), 2 usage error.
 */

#include "ctl_config.h"

/* --check-config: load the profiles the configuration names, print
 * {"config": ..., "profiles": ...} normalised to stdout. */
int ctl_cmd_check_config(const struct ctl_config *cfg);

/* Run the command named by argv[0] ("serve" when argc is 0). */
int ctl_cmd_dispatch(const struct ctl_config *cfg, int argc, char **argv);

/* The daemon (serve.c). */
int ctl_serve(const struct ctl_config *cfg);

#endif
