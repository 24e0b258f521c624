/* SPDX-License-Identifier: MIT */
/*
 * perfgate-controller: parse the command line, load the configuration, and
 * hand over to the command asked for.  Nothing else lives here.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_cmd.h"
#include "ctl_config.h"
#include "log.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: perfgate-controller [options] [command [args]]\n"
		"\n"
		"The perfgate controller: takes DPDK patch series in, plans performance\n"
		"jobs from profiles, hands them to agents, and reports verdicts.\n"
		"\n"
		"options:\n"
		"  -c, --config FILE     configuration file (default %s;\n"
		"                        built-in defaults when that file does not exist)\n"
		"      --db FILE         the SQLite store (overrides \"db\" in the configuration)\n"
		"  -n, --check-config    validate the configuration and the profiles, print\n"
		"                        them normalised as JSON, and exit (1 when invalid)\n"
		"  -l, --log-level SPEC  LEVEL[,component=LEVEL...], levels error|warn|info|debug\n"
		"  -h, --help            this text\n"
		"  -V, --version         print the version\n"
		"\n"
		"commands:\n"
		"  serve                 run the controller daemon (the default): open and\n"
		"                        migrate the store, load the profiles, read the\n"
		"                        sources every intake.interval_s, expire leases,\n"
		"                        deliver checks and mails when enabled, and serve\n"
		"                        the HTTP API when the configuration has an \"api\"\n"
		"                        section, until SIGTERM/SIGINT\n"
		"  db check              verify the store: integrity, foreign keys, schema\n"
		"                        version, row counts (exit 1 when damaged)\n"
		"  db migrate            create the store or upgrade its schema, then exit\n"
		"  ingest [--inbox PATH|URL]... [--mbox FILE]... [--source NAME]\n"
		"                        read the configured sources once (or only those named)\n"
		"                        and print what was read: messages, patches, series\n"
		"                        complete and incomplete, rejected mails with reasons\n"
		"  series list [--json] [--state incomplete|complete|superseded|stale]\n"
		"  series show ID [--json]\n"

		"                        what the store holds: series, patches, dependencies,\n"
		"                        recheck requests\n"
		"  plan                  turn complete series and recheck requests into runs\n"
		"                        and jobs (one pass), print what was planned\n"
		"  baseline run TREE BRANCH [--commit C] [--context NAME]\n"
		"                        queue a baseline: the branch head (or C) measured by\n"
		"                        itself on every context that tests TREE (or NAME)\n"
		"  baseline due          queue the scheduled baselines now: heads that moved,\n"
		"                        baselines older than baseline.interval_s\n"
		"  baseline list [--json] [--limit N]\n"
		"                        baseline runs, newest first: commit, why, state, jobs\n"
		"  changes list [--json] [--state suspected|confirmed|dismissed] [--limit N]\n"
		"  changes show ID [--json]\n"
		"                        change points on the main branches: key, host, step,\n"
		"                        range, bisection, the commit located\n"
		"  changes bisect        one bisection pass: narrow each open change point,\n"
		"                        queue a baseline inside its range\n"
		"  agent add NAME [--labels KEY=VALUE,...]\n"
		"                        register an agent: its token is printed once on\n"
		"                        stdout (only a hash of it is stored)\n"
		"  agent list [--json]   agents: state, last seen, current job, labels\n"
		"  agent disable|enable NAME\n"
		"                        refuse (403) or accept an agent's requests again\n"
		"  host check NAME       connect to an SSH host of the configuration as the\n"
		"                        dispatcher would: host key, key, agent program, facts\n"
		"  outbox list [--json] [--all]\n"
		"                        Patchwork checks and report mails not yet delivered,\n"
		"                        and those that failed (--all: every one)\n"
		"  outbox retry check|mail ID\n"
		"                        queue a failed or cancelled check or mail again\n"
		"  verdicts [--run ID]   decide the verdicts of finished jobs (one pass): key,\n"
		"                        job and context verdicts, follow-ups for more\n"
		"                        repetitions, final checks and mails, history and\n"
		"                        change points; print what was decided\n"
		"  run show ID           a run's verdicts, before/after tables and the\n"
		"                        commands that reproduce it\n",
		CTL_CONFIG_DEFAULT);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, 'D' },
		{ "check-config", no_argument, NULL, 'n' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct pg_err err = PG_ERR_INIT;
	struct ctl_config cfg;
	const char *config_path = NULL, *db = NULL, *log_level = NULL;
	int check_only = 0, opt, rc;

	pg_log_init("perfgate-controller");
	while ((opt = getopt_long(argc, argv, "+c:nl:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config_path = optarg;
			break;
		case 'D':
			db = optarg;
			break;
		case 'n':
			check_only = 1;
			break;
		case 'l':
			log_level = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("perfgate-controller %s\n", PG_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (ctl_config_load(&cfg, config_path, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		return 1;
	}
	if (db && ctl_config_set_db(&cfg, db, &err) < 0) {
		fprintf(stderr, "perfgate-controller: %s\n", err.msg);
		ctl_config_free(&cfg);
		return 1;
	}
	if (log_level && pg_log_set_levels(log_level) < 0) {
		fprintf(stderr, "perfgate-controller: --log-level: '%s' is not "
			"LEVEL[,component=LEVEL...]\n", log_level);
		ctl_config_free(&cfg);
		return 2;
	}
	if (check_only)
		rc = ctl_cmd_check_config(&cfg);
	else
		rc = ctl_cmd_dispatch(&cfg, argc - optind, argv + optind);
	ctl_config_free(&cfg);
	return rc;
}
