/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the profile loader (lib/profile.h), which reads
 * the catalogue an operator writes (and a pull request may change): any
 * bytes must load or fail with an error naming the file, never a
 * sanitizer report; a set that loads must print (profile_set_to_json()),
 * and loading the printout again must give the same printout, as
 * profile.h promises.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "json.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *print(const struct profile_set *ps)
{
	cJSON *j = profile_set_to_json(ps);
	char *s = j ? pg_json_print(j, false) : NULL;

	if (!s)
		abort();
	cJSON_Delete(j);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile_set ps, again;
	struct pg_err err = PG_ERR_INIT;
	char *one, *two;

	if (profile_set_load_text(&ps, "fuzz.json", (const char *)data, size, &err) != 0) {
		if (err.code == PG_OK || strncmp(err.msg, "fuzz.json", 9) != 0)
			abort();	/* errors name the file */
		if (ps.n_files || ps.n_contexts || ps.files)
			abort();	/* empty on failure */
		return 0;
	}
	one = print(&ps);
	if (profile_set_load_text(&again, "again.json", one, strlen(one), &err) != 0)
		abort();	/* the printout loads */
	two = print(&again);
	if (strcmp(one, two) != 0)
		abort();
	free(one);
	free(two);
	profile_set_free(&ps);
	profile_set_free(&again);
	return 0;
}
