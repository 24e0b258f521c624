/* SPDX-License-Identifier: MIT */
/*
 * perfgate-agent: parse the command line, load the configuration, and
 * hand over to the mode asked for.  Nothing else lives here.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_cmd.h"
#include "agent_config.h"
#include "log.h"
#include "runone.h"
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
		"in its sandbox to check out and patch a tree (see agent/ws_child.h).\n"
		"`perfgate-agent run-one --help`: one job for a controller over SSH.\n",
		AGENT_CONFIG_DEFAULT);
}

static void runone_usage(FILE *out)
{
	fprintf(out,
		"usage: perfgate-agent run-one [--facts | --collect] [options]\n"
		"\n"
		"Run one job on a host without an agent daemon, for a controller that drives\n"
		"it over SSH: the job comes as the first line of stdin, and everything else\n"
		"is JSON lines on stdin and stdout (lib/runone.h); logs go to stderr.\n"
		"\n"
		"      --facts           print this host's labels and facts as one line\n"
		"      --collect         hand over the results left in the spool\n"
		"  -c, --config FILE     agent configuration (default %s;\n"
		"                        built-in defaults when that file does not exist)\n"
		"      --work-dir DIR    override the configuration's work_dir\n"
		"      --spool-dir DIR   override the configuration's spool_dir\n"
		"      --runner R        override the configuration's runner (dpdk|builtin)\n"
		"  -l, --log-level SPEC  LEVEL[,component=LEVEL...]\n"
		"\n"
		"exit: 0 done (acknowledged or cancelled), 1 local failure, 2 usage,\n"
		"3 the connection dropped (the job was stopped; --collect gets its result),\n"
		"4 no acknowledgement within %d s (the result stays spooled)\n",
		AGENT_CONFIG_DEFAULT, RUNONE_ACK_WAIT_S);
}

/* `perfgate-agent run-one ...`: argv[0] is "run-one". */
static int runone_main(int argc, char **argv)
{
	enum { OPT_FACTS = 256, OPT_COLLECT, OPT_WORK, OPT_SPOOL, OPT_RUNNER };
	static const struct option longopts[] = {
		{ "facts", no_argument, NULL, OPT_FACTS },
		{ "collect", no_argument, NULL, OPT_COLLECT },
		{ "config", required_argument, NULL, 'c' },
		{ "work-dir", required_argument, NULL, OPT_WORK },
		{ "spool-dir", required_argument, NULL, OPT_SPOOL },
		{ "runner", required_argument, NULL, OPT_RUNNER },
		{ "log-level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pg_err err = PG_ERR_INIT;
	struct agent_config cfg;
	const char *config_path = NULL, *log_level = NULL, *work = NULL, *spool = NULL,
		   *runner = NULL;
	enum agent_runone_mode mode = AGENT_RUNONE_JOB;
	int opt, rc, modes = 0;

	while ((opt = getopt_long(argc, argv, "c:l:h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_FACTS:
			mode = AGENT_RUNONE_FACTS;
			modes++;
			break;
		case OPT_COLLECT:
			mode = AGENT_RUNONE_COLLECT;
			modes++;
			break;
		case 'c':
			config_path = optarg;
			break;
		case OPT_WORK:
			work = optarg;
			break;
		case OPT_SPOOL:
			spool = optarg;
			break;
		case OPT_RUNNER:
			runner = optarg;
			break;
		case 'l':
			log_level = optarg;
			break;
		case 'h':
			runone_usage(stdout);
			return 0;
		default:
			runone_usage(stderr);
			return RUNONE_EXIT_USAGE;
		}
	}
	if (optind < argc || modes > 1) {
		fprintf(stderr, "perfgate-agent run-one: %s\n", modes > 1 ?
			"--facts and --collect exclude each other" : "unexpected argument");
		runone_usage(stderr);
		return RUNONE_EXIT_USAGE;
	}
	if (agent_config_load(&cfg, config_path, &err) < 0) {
		fprintf(stderr, "perfgate-agent: %s\n", err.msg);
		return RUNONE_EXIT_ERROR;
	}
	if (agent_config_override(&cfg, work, spool, runner, &err) < 0) {
		fprintf(stderr, "perfgate-agent run-one: %s\n", err.msg);
		agent_config_free(&cfg);
		return RUNONE_EXIT_USAGE;
	}
	if (log_level && pg_log_set_levels(log_level) < 0) {
		fprintf(stderr, "perfgate-agent: --log-level: '%s' is not "
			"LEVEL[,component=LEVEL...]\n", log_level);
		agent_config_free(&cfg);
		return RUNONE_EXIT_USAGE;
	}
	rc = agent_cmd_runone(&cfg, mode);
	agent_config_free(&cfg);
	return rc;
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
	if (argc > 1 && strcmp(argv[1], "run-one") == 0)
		return runone_main(argc - 1, argv + 1);
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
