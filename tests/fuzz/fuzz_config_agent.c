/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the agent's configuration file
 * (agent/agent_config.h, with its "sandbox" and "apply" sections,
 * and lib/conffile.h's helpers): any bytes must load or fail with an
 * error, never a sanitizer report; a configuration that loads must print
 * in its normalised form, with every path absolute, and the printout (as
 * a file: print() below) must load again to the same printout.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "agent_config.h"
#include "err.h"
#include "fuzz_json.h"
#include "json.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define DIR "/nonexistent/perfgate-fuzz/etc"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	pg_log_set_levels("error");
	return 0;
}

/* The normalised form as a file: without the name of the file it came
 * from ("config_file"), what is not set left out. */
static char *print(const struct agent_config *c)
{
	cJSON *j = agent_config_to_json(c);
	char *s;

	if (!j)
		abort();
	cJSON_DeleteItemFromObjectCaseSensitive(j, "config_file");
	fuzz_drop_nulls(j);
	s = pg_json_print(j, false);
	if (!s)
		abort();
	cJSON_Delete(j);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_config c, again;
	struct pg_err err = PG_ERR_INIT;
	char *one, *two;
	int rc = agent_config_load_text(&c, (const char *)data, size, DIR, &err);

	/* The file may set a log level: keep the run quiet. */
	pg_log_set_levels("error");
	if (rc != 0) {
		if (rc != -1 || err.code == PG_OK || !err.msg[0] || c.name || c.n_labels)
			abort();
		return 0;
	}
	if (!c.work_dir || c.work_dir[0] != '/' || !c.spool_dir || c.spool_dir[0] != '/' ||
	    !c.profiles_dir || c.profiles_dir[0] != '/' || !c.name || !c.controller_url)
		abort();
	one = print(&c);
	if (agent_config_load_text(&again, one, strlen(one), "/elsewhere", &err) != 0) {
		fprintf(stderr, "%s\n%s\n", err.msg, one);
		abort();
	}
	pg_log_set_levels("error");
	two = print(&again);
	if (strcmp(one, two) != 0)
		abort();
	free(one);
	free(two);
	agent_config_free(&c);
	agent_config_free(&again);
	return 0;
}
