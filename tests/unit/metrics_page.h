/* metrics_page.h: reading a sample off a rendered metrics page, for the
 * unit tests of the registry and of the series.  Header only: each test
 * file is a binary of its own; include it after <cmocka.h>. */
#ifndef WEIR_TESTS_METRICS_PAGE_H
#define WEIR_TESTS_METRICS_PAGE_H

#include <stdio.h>
#include <string.h>

/* The value of the sample line that starts with `key` ("name{labels}"). */
static double sample(const char *page, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = page; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ' ') {
			double v = -1;
			sscanf(p + n + 1, "%lf", &v);
			return v;
		}
	fail_msg("no sample %s in the page", key);
	return -1;
}

#endif
