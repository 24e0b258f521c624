/* SPDX-License-Identifier: MIT */
/*
 * What the configuration targets share: a normalised form printed as a
 * file compares equal only with what is not set (null) left out.
 */
#ifndef PG_FUZZ_JSON_H
#define PG_FUZZ_JSON_H

#include <cjson/cJSON.h>

/* Members that are null removed from every object of o, recursively. */
static inline void fuzz_drop_nulls(cJSON *o)
{
	cJSON *m, *next;

	for (m = o->child; m; m = next) {
		next = m->next;
		if (cJSON_IsNull(m) && cJSON_IsObject(o))
			cJSON_Delete(cJSON_DetachItemViaPointer(o, m));
		else if (cJSON_IsObject(m) || cJSON_IsArray(m))
			fuzz_drop_nulls(m);
	}
}

#endif
