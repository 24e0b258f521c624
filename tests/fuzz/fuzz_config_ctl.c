/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the controller's configuration file
 * (controller/ctl_config.h, with its "ssh" section, controller/ssh_config.h,
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

#include "ctl_config.h"
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
static char *print(const struct ctl_config *c)
{
	cJSON *j = ctl_config_to_json(c);
	const char *wd;
	char *s;

	if (!j)
		abort();
	cJSON_DeleteItemFromObjectCaseSensitive(j, "config_file");
	/* --check-config shows the web directory compiled in as "(built in)",
	 * for a reader; as a file that would be a relative path. */
	wd = cJSON_GetStringValue(pg_json_path(j, "api.web_dir"));
	if (wd && !strcmp(wd, "(built in)"))
		cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(j, "api"), "web_dir");
	fuzz_drop_nulls(j);
	s = pg_json_print(j, false);
	if (!s)
		abort();
	cJSON_Delete(j);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_config c, again;
	struct pg_err err = PG_ERR_INIT;
	char *one, *two;
	int rc = ctl_config_load_text(&c, (const char *)data, size, DIR, &err);

	/* The file may set a log level: keep the run quiet. */
	pg_log_set_levels("error");
	if (rc != 0) {
		if (rc != -1 || err.code == PG_OK || !err.msg[0] || c.db || c.n_sources)
			abort();
		return 0;
	}
	if (!c.db || c.db[0] != '/' || !c.data_dir || c.data_dir[0] != '/' ||
	    !c.profiles_dir || c.profiles_dir[0] != '/')
		abort();
	one = print(&c);
	if (ctl_config_load_text(&again, one, strlen(one), "/elsewhere", &err) != 0) {
		fprintf(stderr, "%s\n%s\n", err.msg, one);
		abort();
	}
	pg_log_set_levels("error");
	two = print(&again);
	if (strcmp(one, two) != 0) {
		fprintf(stderr, "%s\n%s\n", one, two);
		abort();
	}
	free(one);
	free(two);
	ctl_config_free(&c);
	ctl_config_free(&again);
	return 0;
}
