/* clock.c: time sources and ISO 8601 formatting (always UTC). */
#include "lib/clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/str.h"

int64_t clock_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clock_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *clock_format_iso(int64_t epoch_ms, char *buf, size_t size)
{
	time_t secs = (time_t)(epoch_ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(epoch_ms % 1000));
	return buf;
}

int clock_parse_iso(const char *text, int64_t *epoch_ms)
{
	struct tm tm;
	int ms = 0, n = 0;
	const char *rest;

	memset(&tm, 0, sizeof tm);
	if (sscanf(text, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3)
		return -1;
	rest = text + n;
	if (*rest == 'T' || *rest == ' ') {
		int m = 0;
		if (sscanf(rest + 1, "%2d:%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &m) != 3)
			return -1;
		rest += 1 + m;
		if (*rest == '.') {
			int digits = 0;
			rest++;
			while (*rest >= '0' && *rest <= '9') {
				if (digits < 3) {
					ms = ms * 10 + (*rest - '0');
					digits++;
				}
				rest++;
			}
			while (digits++ < 3)
				ms *= 10;
		}
		if (*rest == 'Z')
			rest++;
		else if (!strcmp(rest, "+00:00"))
			rest += 6;
	}
	if (*rest)
		return -1;
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*epoch_ms = (int64_t)timegm(&tm) * 1000 + ms;
	return 0;
}

char *clock_format_airflow(int64_t epoch_ms, char *buf, size_t size)
{
	int64_t frac = ((epoch_ms % 1000) + 1000) % 1000;
	time_t secs = (time_t)((epoch_ms - frac) / 1000);
	struct tm tm;
	char out[40], *p = out;
	int year;

	gmtime_r(&secs, &tm);
	year = tm.tm_year + 1900;
	if (year < 0 || year > 9999) {
		char fraction[16] = "";
		if (frac)
			snprintf(fraction, sizeof fraction, ".%03d000", (int)frac);
		snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d%s+00:00", year, tm.tm_mon + 1,
		         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, fraction);
		return buf;
	}
	/* by hand: the API writes several a row (snprintf was 2 % of a TI listing) */
	p = str_put2(p, year / 100);
	p = str_put2(p, year % 100);
	*p++ = '-';
	p = str_put2(p, tm.tm_mon + 1);
	*p++ = '-';
	p = str_put2(p, tm.tm_mday);
	*p++ = 'T';
	p = str_put2(p, tm.tm_hour);
	*p++ = ':';
	p = str_put2(p, tm.tm_min);
	*p++ = ':';
	p = str_put2(p, tm.tm_sec);
	if (frac) {
		*p++ = '.';
		*p++ = (char)('0' + frac / 100);
		p = str_put2(p, (int)(frac % 100));
		memcpy(p, "000", 3);
		p += 3;
	}
	memcpy(p, "+00:00", 7);
	return str_copy_cut(buf, size, out, (size_t)(p - out) + 6);
}

void clock_sleep_ms(int64_t ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
