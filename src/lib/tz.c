/* tz.c: TZif files read into zones kept for the process, offsets at an
 * instant (transitions, then the footer's POSIX rule), wall-clock times
 * placed on the time line, and the calendar arithmetic (tz.h).
 *
 * TZif (RFC 8536): a version 1 block of 32-bit times, then, from version 2,
 * the same counts again with 64-bit times and a footer "\nTZ-RULE\n".  Only
 * the 64-bit block is read (every file of a current tz database has one).
 */
#include "lib/tz.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fs.h"

#define TZ_MAX_TRANSITIONS 4096
#define TZ_MAX_TYPES 256

/* The footer's rule: std offset, dst offset, and when DST starts and ends
 * (a date form and the local time of day in seconds). */
struct tz_rule_date {
	char form; /* 'J' (1-365, no Feb 29), 'n' (0-365), 'M' (month.week.day) */
	int a, b, c;
	int32_t time_s;
};

struct tz_rule {
	bool present;
	bool has_dst;
	int32_t std_off, dst_off; /* seconds east of UTC */
	struct tz_rule_date start, end;
};

struct tz_zone {
	struct tz_zone *next; /* the process's list */
	char name[TZ_NAME_MAX];
	size_t n_trans;
	int64_t *trans;     /* transition instants, ascending */
	uint8_t *trans_idx; /* the type from each transition on */
	size_t n_types;
	int32_t types[TZ_MAX_TYPES]; /* offsets */
	struct tz_rule rule;
};

static struct tz_zone utc_zone = {.name = "UTC"};
static struct tz_zone *zones;
static pthread_mutex_t zones_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- calendar ------------------------------------------------------------ */

int64_t tz_floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (eras of 400 years). */
int64_t tz_days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = tz_floor_div(y, 400);
	int64_t yoe = y - era * 400;
	int64_t mp = (m + 9) % 12; /* March = 0 */
	int64_t doy = (153 * mp + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void tz_civil_from_days(int64_t days, int64_t *year, int *month, int *day)
{
	int64_t z = days + 719468;
	int64_t era = tz_floor_div(z, 146097);
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*day = (int)(doy - (153 * mp + 2) / 5 + 1);
	*month = (int)(mp < 10 ? mp + 3 : mp - 9);
	*year = yoe + era * 400 + (*month <= 2);
}

static bool leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* ---- the footer's POSIX rule ------------------------------------------- */

/* A zone abbreviation: letters, or <...> quoted. */
static bool rule_name(const char **p)
{
	const char *s = *p;
	if (*s == '<') {
		while (*s && *s != '>')
			s++;
		if (*s != '>')
			return false;
		*p = s + 1;
		return true;
	}
	while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))
		s++;
	if (s - *p < 3)
		return false;
	*p = s;
	return true;
}

/* [+-]hh[:mm[:ss]] as seconds (hours up to 167, RFC 8536's extension). */
static bool rule_hms(const char **p, int32_t *out)
{
	const char *s = *p;
	int sign = 1;
	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	int32_t part[3] = {0, 0, 0};
	for (int i = 0; i < 3; i++) {
		if (i > 0) {
			if (*s != ':')
				break;
			s++;
		}
		if (*s < '0' || *s > '9')
			return false;
		int v = 0;
		while (*s >= '0' && *s <= '9' && v < 1000)
			v = v * 10 + (*s++ - '0');
		part[i] = v;
	}
	if (part[0] > 167 || part[1] > 59 || part[2] > 59)
		return false;
	*out = sign * (part[0] * 3600 + part[1] * 60 + part[2]);
	*p = s;
	return true;
}

static bool rule_int(const char **p, int lo, int hi, int *out)
{
	const char *s = *p;
	int v = 0;
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9' && v <= hi)
		v = v * 10 + (*s++ - '0');
	if (v < lo || v > hi)
		return false;
	*out = v;
	*p = s;
	return true;
}

static bool rule_date(const char **p, struct tz_rule_date *d)
{
	const char *s = *p;
	if (*s == 'M') {
		s++;
		d->form = 'M';
		if (!rule_int(&s, 1, 12, &d->a) || *s++ != '.' || !rule_int(&s, 1, 5, &d->b) ||
		    *s++ != '.' || !rule_int(&s, 0, 6, &d->c))
			return false;
	} else if (*s == 'J') {
		s++;
		d->form = 'J';
		if (!rule_int(&s, 1, 365, &d->a))
			return false;
	} else {
		d->form = 'n';
		if (!rule_int(&s, 0, 365, &d->a))
			return false;
	}
	d->time_s = 7200;
	if (*s == '/') {
		s++;
		if (!rule_hms(&s, &d->time_s))
			return false;
	}
	*p = s;
	return true;
}

/* "std offset [dst [offset] [,start[/time],end[/time]]]"; POSIX offsets are
 * west of UTC. */
static bool rule_parse(const char *text, struct tz_rule *r)
{
	const char *p = text;
	int32_t off;
	memset(r, 0, sizeof *r);
	if (!*p)
		return true; /* empty footer: no rule */
	if (!rule_name(&p) || !rule_hms(&p, &off))
		return false;
	r->std_off = -off;
	r->present = true;
	if (!*p)
		return true;
	if (!rule_name(&p))
		return false;
	r->has_dst = true;
	r->dst_off = r->std_off + 3600;
	if (*p && *p != ',') {
		if (!rule_hms(&p, &off))
			return false;
		r->dst_off = -off;
	}
	if (!*p) { /* no dates: POSIX's default, the US rules of 2007 */
		r->start = (struct tz_rule_date){'M', 3, 2, 0, 7200};
		r->end = (struct tz_rule_date){'M', 11, 1, 0, 7200};
		return true;
	}
	return *p++ == ',' && rule_date(&p, &r->start) && *p++ == ',' && rule_date(&p, &r->end) &&
	       *p == '\0';
}

/* Seconds since the epoch of the rule date's day in `year`, at 00:00 local. */
static int64_t rule_day(const struct tz_rule_date *d, int64_t year)
{
	int64_t jan1 = tz_days_from_civil(year, 1, 1);
	switch (d->form) {
	case 'J': /* 1-365, February 29 never counted */
		return (jan1 + d->a - 1 + (leap(year) && d->a >= 60)) * 86400;
	case 'n':
		return (jan1 + d->a) * 86400;
	default: {
		static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
		int64_t first = tz_days_from_civil(year, d->a, 1);
		int64_t w = (first + 4) % 7; /* 1970-01-01 was a Thursday */
		int wday1 = (int)(w < 0 ? w + 7 : w);
		int day = 1 + (d->c - wday1 + 7) % 7 + 7 * (d->b - 1);
		int dim = mdays[d->a - 1] + (d->a == 2 && leap(year));
		while (day > dim)
			day -= 7;
		return (first + day - 1) * 86400;
	}
	}
}

static int32_t rule_offset_at(const struct tz_rule *r, int64_t t)
{
	if (!r->has_dst)
		return r->std_off;
	int64_t year;
	int month, day;
	tz_civil_from_days(tz_floor_div(t + r->std_off, 86400), &year, &month, &day);
	/* the start is given in standard time, the end in daylight time */
	int64_t start = rule_day(&r->start, year) + r->start.time_s - r->std_off;
	int64_t end = rule_day(&r->end, year) + r->end.time_s - r->dst_off;
	bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
	return dst ? r->dst_off : r->std_off;
}

/* ---- TZif ---------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

struct tzif_counts {
	uint32_t isut, isstd, leap, time, type, chars;
};

static bool tzif_header(const unsigned char *p, size_t len, struct tzif_counts *c)
{
	if (len < 44 || memcmp(p, "TZif", 4) != 0)
		return false;
	c->isut = be32(p + 20);
	c->isstd = be32(p + 24);
	c->leap = be32(p + 28);
	c->time = be32(p + 32);
	c->type = be32(p + 36);
	c->chars = be32(p + 40);
	return c->time <= TZ_MAX_TRANSITIONS && c->type >= 1 && c->type <= TZ_MAX_TYPES &&
	       c->chars <= 4096 && c->leap <= 4096 && c->isut <= TZ_MAX_TYPES &&
	       c->isstd <= TZ_MAX_TYPES;
}

static size_t tzif_block_size(const struct tzif_counts *c, size_t time_size)
{
	return c->time * time_size + c->time + c->type * 6 + c->chars + c->leap * (time_size + 4) +
	       c->isstd + c->isut;
}

/* Fills z from the file's bytes; false when they are not TZif v2+. */
static bool tzif_parse(struct tz_zone *z, const unsigned char *data, size_t len)
{
	struct tzif_counts c;
	if (!tzif_header(data, len, &c) || data[4] < '2')
		return false;
	size_t off = 44 + tzif_block_size(&c, 4);
	if (off > len || !tzif_header(data + off, len - off, &c))
		return false;
	off += 44;
	size_t block = tzif_block_size(&c, 8);
	if (off + block > len)
		return false;
	const unsigned char *p = data + off;
	z->n_trans = c.time;
	z->trans = calloc(c.time ? c.time : 1, sizeof *z->trans);
	z->trans_idx = calloc(c.time ? c.time : 1, 1);
	if (!z->trans || !z->trans_idx)
		return false;
	for (size_t i = 0; i < c.time; i++)
		z->trans[i] = be64(p + 8 * i);
	p += 8 * c.time;
	for (size_t i = 0; i < c.time; i++) {
		if (p[i] >= c.type)
			return false;
		z->trans_idx[i] = p[i];
	}
	p += c.time;
	z->n_types = c.type;
	for (size_t i = 0; i < c.type; i++)
		z->types[i] = (int32_t)be32(p + 6 * i);
	/* the footer: "\n" RULE "\n" after the block */
	const unsigned char *f = data + off + block;
	size_t left = len - off - block;
	if (left >= 2 && f[0] == '\n') {
		const unsigned char *nl = memchr(f + 1, '\n', left - 1);
		char text[128];
		size_t n = nl ? (size_t)(nl - f - 1) : 0;
		if (!nl || n >= sizeof text)
			return false;
		memcpy(text, f + 1, n);
		text[n] = '\0';
		if (!rule_parse(text, &z->rule))
			return false;
	}
	return true;
}

static bool name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n >= TZ_NAME_MAX || name[0] == '/' || name[0] == '.')
		return false;
	for (const char *s = name; *s; s++) {
		char ch = *s;
		bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		          (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '+' ||
		          ch == '/';
		if (!ok || (ch == '/' && (s[1] == '/' || s[1] == '.' || s[1] == '\0')))
			return false;
	}
	return true;
}

static void zone_free(struct tz_zone *z)
{
	if (z) {
		free(z->trans);
		free(z->trans_idx);
		free(z);
	}
}

const struct tz_zone *tz_zone_get(const char *name, struct weir_error *err)
{
	if (!name || !strcmp(name, "UTC") || !strcmp(name, "Etc/UTC"))
		return &utc_zone;
	if (!name_ok(name)) {
		weir_error_set(err, WEIR_E_INVALID,
		               "time zone \"%s\": expected a tz database name such as "
		               "Europe/Amsterdam",
		               name);
		return NULL;
	}
	pthread_mutex_lock(&zones_lock);
	for (struct tz_zone *z = zones; z; z = z->next)
		if (!strcmp(z->name, name)) {
			pthread_mutex_unlock(&zones_lock);
			return z;
		}
	pthread_mutex_unlock(&zones_lock);

	const char *dir = getenv("TZDIR");
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo", name);
	struct weir_error e;
	size_t len = 0;
	unsigned char *data = (unsigned char *)fs_read_file(path, &len, &e);
	if (!data) {
		weir_error_set(err, WEIR_E_INVALID,
		               "time zone \"%s\": unknown (no such zone in the tz database)", name);
		return NULL;
	}
	struct tz_zone *z = calloc(1, sizeof *z);
	bool ok = z && tzif_parse(z, data, len);
	free(data);
	if (!ok) {
		zone_free(z);
		weir_error_set(err, WEIR_E_INVALID, "time zone \"%s\": not a TZif file", name);
		return NULL;
	}
	snprintf(z->name, sizeof z->name, "%s", name);

	pthread_mutex_lock(&zones_lock);
	for (struct tz_zone *o = zones; o; o = o->next)
		if (!strcmp(o->name, name)) { /* another thread read it meanwhile */
			pthread_mutex_unlock(&zones_lock);
			zone_free(z);
			return o;
		}
	z->next = zones;
	zones = z;
	pthread_mutex_unlock(&zones_lock);
	return z;
}

const char *tz_zone_name(const struct tz_zone *z)
{
	return z ? z->name : "UTC";
}

bool tz_zone_is_utc(const struct tz_zone *z)
{
	if (!z || z == &utc_zone)
		return true;
	for (size_t i = 0; i < z->n_types; i++)
		if (z->types[i] != 0)
			return false;
	return !z->rule.present || (z->rule.std_off == 0 && !z->rule.has_dst);
}

int32_t tz_offset_at(const struct tz_zone *z, int64_t t)
{
	if (!z || z == &utc_zone)
		return 0;
	if (z->n_trans == 0 || t < z->trans[0]) {
		if (z->n_trans == 0 && z->rule.present)
			return rule_offset_at(&z->rule, t);
		return z->types[0];
	}
	if (t >= z->trans[z->n_trans - 1] && z->rule.present)
		return rule_offset_at(&z->rule, t);
	size_t lo = 0, hi = z->n_trans; /* the last transition at or before t */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->trans[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	return z->types[z->trans_idx[lo]];
}

int64_t tz_local_to_utc(const struct tz_zone *z, int64_t local_s)
{
	if (tz_zone_is_utc(z))
		return local_s;
	/* the offsets a day either side: no zone changes twice within two days */
	int32_t before = tz_offset_at(z, local_s - 86400);
	int32_t after = tz_offset_at(z, local_s + 86400);
	int64_t a = local_s - before, b = local_s - after;
	bool a_ok = tz_offset_at(z, a) == before, b_ok = tz_offset_at(z, b) == after;
	if (a_ok && b_ok)
		return a > b ? a : b; /* occurs twice: the second one */
	if (a_ok)
		return a;
	if (b_ok)
		return b;
	return a; /* in the gap: the offset before it, so moved forward by the gap */
}
