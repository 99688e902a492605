/* duration.c: durations as users write them (duration.h). */
#include "model/duration.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

int duration_parse_s(const char *text, const char *field, int64_t *out, struct weir_error *err)
{
	const char *p = text;
	int64_t total = 0;
	bool any = false;

	while (*p == ' ')
		p++;
	while (*p) {
		if (!isdigit((unsigned char)*p))
			goto bad;
		errno = 0;
		char *end;
		long long v = strtoll(p, &end, 10);
		if (errno || v > DURATION_MAX_S)
			goto bad;
		int64_t mult = 1;
		switch (*end) {
		case 's':
			mult = 1;
			end++;
			break;
		case 'm':
			mult = 60;
			end++;
			break;
		case 'h':
			mult = 3600;
			end++;
			break;
		case 'd':
			mult = 86400;
			end++;
			break;
		case '\0':
			break;
		default:
			goto bad;
		}
		if (*end == '\0' && mult == 1 && any && end[-1] != 's')
			goto bad; /* "1h30": a unit is needed after the first part */
		total += (int64_t)v * mult;
		if (total > DURATION_MAX_S)
			goto bad;
		any = true;
		p = end;
	}
	if (!any)
		goto bad;
	*out = total;
	return 0;
bad:
	return weir_error_set(err, WEIR_E_INVALID,
	                      "%s: expected a duration like 600, 90s, 10m, 1h30m or 2d "
	                      "(at most a year), got \"%s\"",
	                      field, text);
}
