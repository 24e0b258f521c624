/* SPDX-License-Identifier: MIT */
/*
 * perfgate-agent: parse the command line, load the configuration, and
 * hand over to the mode asked for.  Nothing else lives here.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent_cmd.h"
#include "agent_config.h"
#include "log.h"
#include "ws_child.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: perfgate-agent [options]\n"
		"\n"
		"The perfgate agent: runs on a lab host, leases jobs from the controller,\n"
		"builds DPDK base and patched, and runs the benchmarks side by side.\n"
		"\n"
		"options:\n"
		"  -c, --config FILE     configuration file (default %s;\n"
		"                        built-in defaults when that file does not exist)\n"
		"  -n, --check-config    validate the configuration and the profiles, print\n"
		"                        them normalised as JSON with the host classes this\n"
		"                        agent's labels match, and exit (1 when invalid)\n"
		"      --once            lease one job (waiting up to lease_wait_s), run it,\n"
		"                        upload its result and exit: 0 when a job ran, 3 when\n"
		"                        none came, 1 on failure\n"
		"  -l, --log-level SPEC  LEVEL[,component=LEVEL...], levels error|warn|info|debug\n"
		"  -h, --help            this text\n"
		"  -V, --version         print the version\n"
		"\n"
		"The agent runs itself as `perfgate-agent workspace-checkout|workspace-apply ...`\n"
		"in its sandbox to check out and patch a tree (see agent/ws_child.h).\n",
		AGENT_CONFIG_DEFAULT);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'n' },
		{ "once", no_argument, NULL, 'o' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct pg_err err = PG_ERR_INIT;
	struct agent_config cfg;
	const char *config_path = NULL, *log_level = NULL;
	int check_only = 0, once = 0, opt, rc;

	if (ws_child_mode(argc, argv))
		return ws_child_main(argc - 1, argv + 1);
	pg_log_init("perfgate-agent");
	while ((opt = getopt_long(argc, argv, "c:nl:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config_path = optarg;
			break;
		case 'n':
			check_only = 1;
			break;
		case 'o':
			once = 1;
			break;
		case 'l':
			log_level = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("perfgate-agent %s\n", PG_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "perfgate-agent: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (agent_config_load(&cfg, config_path, &err) < 0) {
		fprintf(stderr, "perfgate-agent: %s\n", err.msg);
		return 1;
	}
	if (log_level && pg_log_set_levels(log_level) < 0) {
		fprintf(stderr, "perfgate-agent: --log-level: '%s' is not "
			"LEVEL[,component=LEVEL...]\n", log_level);
		agent_config_free(&cfg);
		return 2;
	}
	rc = check_only ? agent_cmd_check_config(&cfg) : agent_cmd_run(&cfg, once);
	agent_config_free(&cfg);
	return rc;
}
