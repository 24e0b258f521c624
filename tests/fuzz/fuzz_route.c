/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for api_route_match() (controller/api_route.h): any
 * path must be routed without a sanitizer report, and what it accepts as
 * an asset or a page must keep the rules the web directory relies on,
 * checked here the slow, obvious way: an asset is 1 to API_ASSET_DEPTH
 * segments of [A-Za-z0-9_.-], none empty or starting with '.', so no
 * "..", no absolute path, nothing hidden; a page is one of the pages.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_asset(const char *a)
{
	size_t n = strlen(a), seg = 0, segs = 1;

	if (n == 0 || n > API_ASSET_MAX)
		abort();
	for (size_t i = 0; i <= n; i++) {
		char c = a[i];

		if (c == '/' || c == '\0') {
			if (seg == 0)
				abort();
			seg = 0;
			segs += c == '/';
			continue;
		}
		if (seg == 0 && c == '.')
			abort();
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			abort();
		seg++;
	}
	if (segs > API_ASSET_DEPTH)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "HEAD", "POST", "PUT" };
	struct api_route r;
	char *path;
	int status;

	if (size < 1)
		return 0;
	/* The first byte picks the method; the rest is the path, which
	 * libmicrohttpd hands over NUL-terminated. */
	path = malloc(size);
	if (!path)
		return 0;
	memcpy(path, data + 1, size - 1);
	path[size - 1] = '\0';
	status = api_route_match(methods[data[0] % 4], path, &r, NULL);
	if (status != 200 && status != 404 && status != 405)
		abort();
	if (status == 404 && r.ep != API_EP_NONE)
		abort();
	if (status == 200 && r.ep == API_EP_ASSET) {
		if (strncmp(path, "/assets/", 8) || strcmp(path + 8, r.asset))
			abort();
		check_asset(r.asset);
	}
	if (status == 200 && r.ep == API_EP_PAGE && (unsigned int)r.page >= API_PAGE_COUNT)
		abort();
	if (status == 200 && r.ep == API_EP_JOB_LOG && (!r.stage[0] || r.stage[0] == '.'))
		abort();
	free(path);
	return 0;
}
