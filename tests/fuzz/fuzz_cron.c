/* fuzz_cron.c: schedule text -> cron_parse, then fire times around a date
 * taken from the input: next and prev must be fire times, strictly after
 * or before, and each other's inverse; due runs must be in order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/cron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t t = 0;
	if (size >= 4) { /* the first 4 bytes pick a time between 1970 and 2106 */
		uint32_t s;
		memcpy(&s, data, 4);
		t = (int64_t)s * 1000;
		data += 4;
		size -= 4;
	}
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct cron c;
	struct weir_error err;
	if (cron_parse(text, &c, &err) == 0) {
		int64_t n = cron_next(&c, t);
		if (n != CRON_NEVER && (n <= t || !cron_matches(&c, n) || cron_prev(&c, n + 1) != n))
			abort();
		int64_t p = cron_prev(&c, t);
		if (p != CRON_NEVER && (p >= t || !cron_matches(&c, p)))
			abort();
		if (p != CRON_NEVER && n != CRON_NEVER && cron_next(&c, p) > n)
			abort();
		int64_t out[4];
		size_t k = schedule_due_runs(&c, t, CRON_NEVER, true, CRON_NEVER, t + 7 * 86400000LL,
					     out, 4);
		for (size_t i = 1; i < k; i++)
			if (out[i] <= out[i - 1])
				abort();
		(void)schedule_next_due(&c, t, CRON_NEVER, false, CRON_NEVER, t + 86400000LL);
	}
	int64_t ms;
	(void)schedule_parse_time(text, "fuzz", &ms, &err);
	free(text);
	return 0;
}
