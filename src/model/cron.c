/* cron.c: cron expressions (parsing into bit sets, next/previous fire
 * times), Airflow's data intervals and due runs, and the UTC calendar math
 * they need.
 *
 * The calendar is computed by hand from days since the epoch rather than
 * with timegm()/gmtime_r(): both are fine for UTC, but timegm() is not in
 * C11 or POSIX and the arithmetic is a dozen lines that the tests pin down.
 * Fire times are found by skipping whole months, days and hours that cannot
 * match, so even a rare expression (Feb 29 that is also a Monday) is found
 * in a few thousand steps; the search gives up after CRON_SEARCH_YEARS.
 */
#include "model/cron.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/str.h"

#define MS_MIN 60000LL
#define MS_HOUR 3600000LL
#define MS_DAY 86400000LL

/* Feb 29 skips 1900-style years: 8 years is the longest real gap. */
#define CRON_SEARCH_YEARS 30

/* ---- calendar ---------------------------------------------------------- */

struct civil {
	int64_t year;
	int month, day, hour, minute, second, wday;
};

static void civil_from_ms(int64_t ms, struct civil *c)
{
	int64_t days = tz_floor_div(ms, MS_DAY);
	int64_t rem = ms - days * MS_DAY;
	c->hour = (int)(rem / MS_HOUR);
	c->minute = (int)(rem % MS_HOUR / MS_MIN);
	c->second = (int)(rem % MS_MIN / 1000);
	int64_t w = (days + 4) % 7; /* 1970-01-01 was a Thursday */
	c->wday = (int)(w < 0 ? w + 7 : w);
	tz_civil_from_days(days, &c->year, &c->month, &c->day);
}

int64_t schedule_make_time(int year, int month, int day, int hour, int minute, int second)
{
	return tz_days_from_civil(year, month, day) * MS_DAY + hour * MS_HOUR + minute * MS_MIN +
	       second * 1000LL;
}

static bool leap_year(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	return m == 2 && leap_year(y) ? 29 : dm[m - 1];
}

/* The date's digits by hand (a DAG task's job formats three: snprintf was
 * most of its template's context); a year outside 0..9999 by snprintf. */
static size_t put_date(char *out, const struct civil *c, bool nodash)
{
	char *p = out;
	int y = (int)c->year;

	p = str_put2(p, y / 100);
	p = str_put2(p, y % 100);
	if (!nodash)
		*p++ = '-';
	p = str_put2(p, c->month);
	if (!nodash)
		*p++ = '-';
	p = str_put2(p, c->day);
	return (size_t)(p - out);
}

char *schedule_format_ts(int64_t ms, char *buf, size_t size)
{
	struct civil c;
	char out[32], *p;

	civil_from_ms(ms, &c);
	if (c.year < 0 || c.year > 9999) {
		snprintf(buf, size, "%04lld-%02d-%02dT%02d:%02d:%02d+00:00", (long long)c.year,
		         c.month, c.day, c.hour, c.minute, c.second);
		return buf;
	}
	p = out + put_date(out, &c, false);
	*p++ = 'T';
	p = str_put2(p, c.hour);
	*p++ = ':';
	p = str_put2(p, c.minute);
	*p++ = ':';
	p = str_put2(p, c.second);
	memcpy(p, "+00:00", 6);
	return str_copy_cut(buf, size, out, (size_t)(p - out) + 6);
}

char *schedule_format_ds(int64_t ms, bool nodash, char *buf, size_t size)
{
	struct civil c;
	char out[16];

	civil_from_ms(ms, &c);
	if (c.year < 0 || c.year > 9999) {
		snprintf(buf, size, nodash ? "%04lld%02d%02d" : "%04lld-%02d-%02d",
		         (long long)c.year, c.month, c.day);
		return buf;
	}
	return str_copy_cut(buf, size, out, put_date(out, &c, nodash));
}

/* Reads exactly `n` digits. */
static bool digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return false;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return true;
}

int schedule_parse_time(const char *text, const char *field, int64_t *out_ms,
                        struct weir_error *err)
{
	return schedule_parse_time_in(text, field, NULL, out_ms, err);
}

int schedule_parse_time_in(const char *text, const char *field, const struct tz_zone *zone,
                           int64_t *out_ms, struct weir_error *err)
{
	const char *p = text;
	int y, mo, d, h = 0, mi = 0, s = 0, oh = 0, om = 0, sign = 0;

	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d))
		goto bad;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
			goto bad;
		if (*p == ':') {
			p++;
			if (!digits(&p, 2, &s))
				goto bad;
			if (*p == '.') { /* fractions of a second: dropped */
				p++;
				if (!isdigit((unsigned char)*p))
					goto bad;
				while (isdigit((unsigned char)*p))
					p++;
			}
		}
		if (*p == 'Z') {
			p++;
			zone = NULL;
		} else if (*p == '+' || *p == '-') {
			sign = *p++ == '-' ? -1 : 1;
			zone = NULL;
			if (!digits(&p, 2, &oh))
				goto bad;
			if (*p == ':')
				p++;
			if (!digits(&p, 2, &om))
				goto bad;
		}
	}
	if (*p != '\0')
		goto bad;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 ||
	    mi > 59 || s > 59 || oh > 23 || om > 59)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: \"%s\" is not a date (year from 1970, a real day of "
		                      "the month, hours 0-23)",
		                      field, text);
	*out_ms = schedule_make_time(y, mo, d, h, mi, s) - sign * (oh * MS_HOUR + om * MS_MIN);
	if (zone)
		*out_ms = tz_local_to_utc(zone, *out_ms / 1000) * 1000;
	return 0;
bad:
	return weir_error_set(err, WEIR_E_INVALID,
	                      "%s: expected a date like 2024-01-31, 2024-01-31T06:00:00Z or "
	                      "2024-01-31T06:00:00+02:00, got \"%s\"",
	                      field, text);
}

/* ---- parsing ----------------------------------------------------------- */

struct field_def {
	const char *name;
	int min, max; /* accepted in the text (day-of-week: 0-7) */
	const char *expected;
	const char *const *names; /* names[i] stands for min + i (months) or i (weekdays) */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                          "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const wday_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const struct field_def fields[5] = {
    {"minute", 0, 59, "0-59", NULL},
    {"hour", 0, 23, "0-23", NULL},
    {"day-of-month", 1, 31, "1-31", NULL},
    {"month", 1, 12, "1-12 or jan-dec", month_names},
    {"day-of-week", 0, 7, "0-7 (0 and 7 are Sunday) or sun-sat", wday_names},
};

static int field_fail(const struct field_def *f, const char *text, size_t len, const char *what,
                      struct weir_error *err)
{
	return weir_error_set(err, WEIR_E_INVALID, "%s field \"%.*s\": expected %s", f->name,
	                      (int)len, text, what ? what : f->expected);
}

/* A number or a name at *p; advances. */
static bool read_value(const struct field_def *f, const char **p, const char *end, int *out)
{
	const char *s = *p;
	if (s < end && isdigit((unsigned char)*s)) {
		int v = 0, n = 0;
		while (s < end && isdigit((unsigned char)*s)) {
			if (++n > 3)
				return false;
			v = v * 10 + (*s++ - '0');
		}
		*p = s;
		*out = v;
		return true;
	}
	if (!f->names || end - s < 3)
		return false;
	for (int i = 0; f->names[i]; i++) {
		if (strncasecmp(s, f->names[i], 3) == 0 &&
		    (s + 3 == end || !isalpha((unsigned char)s[3]))) {
			*p = s + 3;
			*out = f->names == month_names ? i + 1 : i;
			return true;
		}
	}
	return false;
}

/* One field ("1-10/2,15") into a bit set. */
static int parse_field(const struct field_def *f, const char *text, size_t len, uint64_t *bits,
                       bool *star, struct weir_error *err)
{
	const char *p = text, *end = text + len;
	*bits = 0;
	*star = len > 0 && text[0] == '*';
	while (p < end) {
		int lo, hi, step = 1;
		bool ranged = false;
		if (*p == '*') {
			p++;
			lo = f->min;
			hi = f->max == 7 ? 6 : f->max;
			ranged = true;
		} else {
			if (!read_value(f, &p, end, &lo))
				return field_fail(f, text, len, NULL, err);
			hi = lo;
			if (p < end && *p == '-') {
				p++;
				if (!read_value(f, &p, end, &hi))
					return field_fail(f, text, len, NULL, err);
				ranged = true;
			}
			if (lo < f->min || lo > f->max || hi < f->min || hi > f->max)
				return field_fail(f, text, len, NULL, err);
			if (lo > hi)
				return field_fail(f, text, len, "a range low-high with low <= high",
				                  err);
		}
		if (p < end && *p == '/') {
			p++;
			const char *s = p;
			step = 0;
			while (p < end && isdigit((unsigned char)*p) && p - s < 3)
				step = step * 10 + (*p++ - '0');
			if (p == s || step < 1 || step > f->max || (p < end && *p != ','))
				return field_fail(f, text, len,
				                  "a step from 1 to the field's maximum", err);
			if (!ranged) /* "5/15": from 5 to the end, Vixie's and croniter's reading */
				hi = f->max == 7 ? 6 : f->max;
		}
		for (int v = lo; v <= hi; v += step)
			*bits |= 1ULL << (f->max == 7 && v == 7 ? 0 : v);
		if (p < end) {
			if (*p != ',' || p + 1 == end)
				return field_fail(f, text, len, NULL, err);
			p++;
		}
	}
	if (*bits == 0)
		return field_fail(f, text, len, NULL, err);
	return 0;
}

static const struct {
	const char *name;
	const char *expr;
} presets[] = {
    {"@hourly", "0 * * * *"},   {"@daily", "0 0 * * *"},
    {"@midnight", "0 0 * * *"}, {"@weekly", "0 0 * * 0"},
    {"@monthly", "0 0 1 * *"},  {"@yearly", "0 0 1 1 *"},
    {"@annually", "0 0 1 1 *"}, {NULL, NULL},
};

static int parse_expr(const char *expr, struct cron *c, struct weir_error *err)
{
	const char *starts[6];
	size_t lens[6];
	int n = 0;
	const char *p = expr;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		const char *s = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (n < 6) {
			starts[n] = s;
			lens[n] = (size_t)(p - s);
		}
		n++;
	}
	if (n != 5)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "\"%s\": expected 5 fields (minute hour day-of-month month "
		                      "day-of-week), @hourly, @daily, @weekly, @monthly, @yearly, "
		                      "@once or none; got %d field%s",
		                      expr, n, n == 1 ? "" : "s");
	uint64_t bits[5];
	bool star[5];
	for (int i = 0; i < 5; i++)
		if (parse_field(&fields[i], starts[i], lens[i], &bits[i], &star[i], err) < 0)
			return -1;
	c->minutes = bits[0];
	c->hours = (uint32_t)bits[1];
	c->mdays = (uint32_t)bits[2];
	c->months = (uint16_t)bits[3];
	c->wdays = (uint8_t)bits[4];
	c->mday_star = star[2];
	c->wday_star = star[4];
	return 0;
}

const char *cron_kind_name(enum cron_kind kind)
{
	switch (kind) {
	case CRON_NONE:
		return "none";
	case CRON_ONCE:
		return "once";
	case CRON_EXPR:
		return "cron";
	case CRON_CONTINUOUS:
		return "continuous";
	case CRON_DELTA:
		return "delta";
	case CRON_EVENTS:
		return "events";
	case CRON_RUNS:
		return "timetable";
	}
	return "none";
}

int cron_parse(const char *text, struct cron *out, struct weir_error *err)
{
	struct cron c;
	memset(&c, 0, sizeof c);
	if (!text)
		text = "";
	size_t len = strlen(text);
	while (len > 0 && isspace((unsigned char)text[len - 1]))
		len--;
	while (len > 0 && isspace((unsigned char)*text)) {
		text++;
		len--;
	}
	if (len >= sizeof c.text)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "expected a cron expression of at most %zu characters",
		                      sizeof c.text - 1);
	memcpy(c.text, text, len);
	c.text[len] = '\0';
	if (len == 0 || !strcasecmp(c.text, "none") || !strcasecmp(c.text, "@none")) {
		c.kind = CRON_NONE;
		snprintf(c.text, sizeof c.text, "none");
		*out = c;
		return 0;
	}
	if (!strcasecmp(c.text, "@once")) {
		c.kind = CRON_ONCE;
		*out = c;
		return 0;
	}
	if (!strcasecmp(c.text, "@continuous")) {
		c.kind = CRON_CONTINUOUS;
		*out = c;
		return 0;
	}
	const char *expr = c.text;
	if (c.text[0] == '@') {
		expr = NULL;
		for (size_t i = 0; presets[i].name; i++)
			if (!strcasecmp(c.text, presets[i].name))
				expr = presets[i].expr;
		if (!expr)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "\"%s\": expected @hourly, @daily, @weekly, @monthly, "
			    "@yearly, @annually, @once, @continuous, none or 5 cron fields",
			    c.text);
	}
	c.kind = CRON_EXPR;
	if (parse_expr(expr, &c, err) < 0)
		return -1;
	c.fixed = __builtin_popcountll(c.minutes) == 1 && __builtin_popcount(c.hours) == 1;
	/* Feb 30 and the like: refuse now rather than never run. */
	if (cron_next(&c, schedule_make_time(2000, 1, 1, 0, 0, 0)) == CRON_NEVER)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "\"%s\": expected an expression that matches some date "
		                      "(this one never fires)",
		                      c.text);
	*out = c;
	return 0;
}

int cron_set_delta(struct cron *out, int32_t months, int64_t ms, const char *text,
                   struct weir_error *err)
{
	if (months < 0 || ms < 0 || (months == 0 && ms == 0))
		return weir_error_set(err, WEIR_E_INVALID, "%s",
		                      "expected a step forward: months, days, hours, minutes or "
		                      "seconds, none negative, one of them positive");
	if (months > CRON_DELTA_MONTHS_MAX || ms > 100 * 366 * MS_DAY)
		return weir_error_set(err, WEIR_E_INVALID, "%s",
		                      "expected a step of at most 100 years");
	memset(out, 0, sizeof *out);
	out->kind = CRON_DELTA;
	out->delta_months = months;
	out->delta_ms = ms;
	snprintf(out->text, sizeof out->text, "%s", text);
	return 0;
}

int cron_set_events(struct cron *out, const int64_t *events, size_t n, bool restrict_to_events,
                    struct weir_error *err)
{
	if (n == 0)
		return weir_error_set(err, WEIR_E_INVALID, "%s",
		                      "expected at least one event time");
	for (size_t i = 1; i < n; i++)
		if (events[i] <= events[i - 1])
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "event %zu is not after event %zu: expected the times "
			    "in order, each once",
			    i, i - 1);
	memset(out, 0, sizeof *out);
	out->kind = CRON_EVENTS;
	out->events = events;
	out->n_events = n;
	out->restrict_to_events = restrict_to_events;
	snprintf(out->text, sizeof out->text, "%zu Events", n);
	return 0;
}

int cron_set_runs(struct cron *out, const struct schedule_run *runs, size_t n, const char *text,
                  struct weir_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (runs[i].end_ms < runs[i].start_ms)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "run %zu: its data interval ends before it starts",
			                      i);
		if (i > 0 && runs[i].start_ms <= runs[i - 1].start_ms)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "run %zu does not start after run %zu: expected the runs "
			    "in order, each once",
			    i, i - 1);
	}
	memset(out, 0, sizeof *out);
	out->kind = CRON_RUNS;
	out->runs = runs;
	out->n_runs = n;
	snprintf(out->text, sizeof out->text, "%s", text);
	return 0;
}

/* The listed run whose start is `logical_ms`, or NULL. */
static const struct schedule_run *listed_run(const struct cron *c, int64_t logical_ms)
{
	for (size_t i = 0; c->kind == CRON_RUNS && i < c->n_runs; i++)
		if (c->runs[i].start_ms == logical_ms)
			return &c->runs[i];
	return NULL;
}

/* t plus `months` calendar months in UTC, the day clamped to the month. */
static int64_t add_months(int64_t t, int64_t months)
{
	int64_t days = tz_floor_div(t, MS_DAY), rest = t - days * MS_DAY, y;
	int m, d;

	tz_civil_from_days(days, &y, &m, &d);
	int64_t k = y * 12 + (m - 1) + months;
	y = tz_floor_div(k, 12);
	m = (int)(k - y * 12) + 1;
	if (d > days_in_month(y, m))
		d = days_in_month(y, m);
	return tz_days_from_civil(y, m, d) * MS_DAY + rest;
}

int64_t cron_delta_add(const struct cron *c, int64_t t_ms, int times)
{
	int sign = times < 0 ? -1 : 1;

	for (int i = 0; i < times * sign; i++)
		t_ms = add_months(t_ms, (int64_t)sign * c->delta_months) + sign * c->delta_ms;
	return t_ms;
}

int cron_set_zone(struct cron *c, const char *name, struct weir_error *err)
{
	const struct tz_zone *z = tz_zone_get(name, err);
	if (!z)
		return -1;
	c->zone = tz_zone_is_utc(z) ? NULL : z;
	return 0;
}

/* ---- fire times -------------------------------------------------------- */

static bool day_matches(const struct cron *c, const struct civil *t)
{
	bool md = c->mdays & (1u << t->day);
	bool wd = c->wdays & (1u << t->wday);
	if (c->mday_star || c->wday_star)
		return md && wd;
	return md || wd;
}

/* The wall-clock grid: fire times of the expression read as if local time
 * were UTC. */
static bool wall_matches(const struct cron *c, int64_t t_ms)
{
	struct civil t;
	if (c->kind != CRON_EXPR || tz_floor_div(t_ms, MS_MIN) * MS_MIN != t_ms)
		return false;
	civil_from_ms(t_ms, &t);
	return (c->months & (1u << t.month)) && day_matches(c, &t) && (c->hours & (1u << t.hour)) &&
	       (c->minutes & (1ULL << t.minute));
}

/* Far enough to never overflow the arithmetic below. */
#define CRON_TIME_LIMIT (schedule_make_time(9999, 12, 31, 23, 59, 0))

static int64_t wall_next(const struct cron *c, int64_t after_ms)
{
	if (c->kind != CRON_EXPR || after_ms >= CRON_TIME_LIMIT || after_ms < -CRON_TIME_LIMIT)
		return CRON_NEVER;
	int64_t t = (tz_floor_div(after_ms, MS_MIN) + 1) * MS_MIN;
	struct civil s;
	civil_from_ms(t, &s);
	int64_t give_up = s.year + CRON_SEARCH_YEARS;
	for (;;) {
		struct civil v;
		civil_from_ms(t, &v);
		if (v.year > give_up)
			return CRON_NEVER;
		if (!(c->months & (1u << v.month))) {
			int ny = (int)v.year + (v.month == 12),
			    nm = v.month == 12 ? 1 : v.month + 1;
			t = schedule_make_time(ny, nm, 1, 0, 0, 0);
		} else if (!day_matches(c, &v)) {
			t = tz_floor_div(t, MS_DAY) * MS_DAY + MS_DAY;
		} else if (!(c->hours & (1u << v.hour))) {
			t = tz_floor_div(t, MS_HOUR) * MS_HOUR + MS_HOUR;
		} else if (!(c->minutes & (1ULL << v.minute))) {
			t += MS_MIN;
		} else {
			return t;
		}
	}
}

static int64_t wall_prev(const struct cron *c, int64_t before_ms)
{
	if (c->kind != CRON_EXPR || before_ms > CRON_TIME_LIMIT || before_ms < -CRON_TIME_LIMIT)
		return CRON_NEVER;
	int64_t t = tz_floor_div(before_ms - 1, MS_MIN) * MS_MIN;
	struct civil s;
	civil_from_ms(t, &s);
	int64_t give_up = s.year - CRON_SEARCH_YEARS;
	for (;;) {
		struct civil v;
		civil_from_ms(t, &v);
		if (v.year < give_up)
			return CRON_NEVER;
		if (!(c->months & (1u << v.month))) {
			t = schedule_make_time((int)v.year, v.month, 1, 0, 0, 0) - MS_MIN;
		} else if (!day_matches(c, &v)) {
			t = tz_floor_div(t, MS_DAY) * MS_DAY - MS_MIN;
		} else if (!(c->hours & (1u << v.hour))) {
			t = tz_floor_div(t, MS_HOUR) * MS_HOUR - MS_MIN;
		} else if (!(c->minutes & (1ULL << v.minute))) {
			t -= MS_MIN;
		} else {
			return t;
		}
	}
}

/* Airflow's CronMixin: the wall-clock time found in the zone; a fixed
 * schedule (one minute and one hour: "0 6 * * *") is then placed on the time
 * line by tz_local_to_utc (the second of two, the gap skipped forward);
 * any other (hourly, "0 6,18 * * *") moves by the wall-clock difference on
 * the time line, so that it keeps its spacing through a change. */
static bool zoned(const struct cron *c)
{
	return c->kind == CRON_EXPR && !tz_zone_is_utc(c->zone);
}

static int64_t local_ms(const struct cron *c, int64_t utc_ms)
{
	int64_t s = tz_floor_div(utc_ms, 1000);
	return utc_ms + (int64_t)tz_offset_at(c->zone, s) * 1000;
}

static int64_t placed(const struct cron *c, int64_t wall_ms)
{
	int64_t s = tz_floor_div(wall_ms, 1000);
	return tz_local_to_utc(c->zone, s) * 1000 + (wall_ms - s * 1000);
}

int64_t cron_next(const struct cron *c, int64_t after_ms)
{
	if (!zoned(c))
		return wall_next(c, after_ms);
	if (after_ms >= CRON_TIME_LIMIT || after_ms < -CRON_TIME_LIMIT)
		return CRON_NEVER;
	int64_t naive = local_ms(c, after_ms);
	int64_t w = wall_next(c, naive);
	if (w == CRON_NEVER || !c->fixed)
		return w == CRON_NEVER ? CRON_NEVER : after_ms + (w - naive);
	int64_t t = placed(c, w);
	/* a placed time is never at or before after_ms (kept strict, as below) */
	while (t != CRON_NEVER && t <= after_ms) {
		w = wall_next(c, w);
		t = w == CRON_NEVER ? CRON_NEVER : placed(c, w);
	}
	return t;
}

int64_t cron_prev(const struct cron *c, int64_t before_ms)
{
	if (!zoned(c))
		return wall_prev(c, before_ms);
	if (before_ms > CRON_TIME_LIMIT || before_ms < -CRON_TIME_LIMIT)
		return CRON_NEVER;
	int64_t naive = local_ms(c, before_ms);
	int64_t w = wall_prev(c, naive);
	if (w == CRON_NEVER || !c->fixed)
		return w == CRON_NEVER ? CRON_NEVER : before_ms - (naive - w);
	int64_t t = placed(c, w);
	/* 02:30 on the spring-forward day is placed at 03:30, so from 03:30 the
	 * wall clock's previous 02:30 lands on before_ms itself, which Airflow
	 * returns; weir keeps "strictly before" and takes the one before it */
	while (t != CRON_NEVER && t >= before_ms) {
		w = wall_prev(c, w);
		t = w == CRON_NEVER ? CRON_NEVER : placed(c, w);
	}
	return t;
}

bool cron_matches(const struct cron *c, int64_t t_ms)
{
	if (!zoned(c))
		return wall_matches(c, t_ms);
	/* Airflow's alignment: t is on the grid when the fire time before the
	 * next one is t itself */
	int64_t next = cron_next(c, t_ms);
	return next != CRON_NEVER && cron_prev(c, next) == t_ms;
}

/* ---- data intervals and due runs --------------------------------------- */

struct schedule_interval schedule_data_interval(const struct cron *c, int64_t logical_ms)
{
	struct schedule_interval iv = {logical_ms, logical_ms};
	if (c->kind == CRON_DELTA) {
		iv.end_ms = cron_delta_add(c, logical_ms, 1);
	} else if (c->kind == CRON_EXPR && c->trigger) {
		iv.end_ms = logical_ms + c->trigger_interval_ms;
	} else if (c->kind == CRON_EXPR) {
		int64_t next = cron_next(c, logical_ms);
		if (next != CRON_NEVER)
			iv.end_ms = next;
	} else if (c->kind == CRON_RUNS) {
		const struct schedule_run *r = listed_run(c, logical_ms);
		if (r)
			iv.end_ms = r->end_ms;
	}
	return iv;
}

int64_t schedule_due_at(const struct cron *c, int64_t logical_ms)
{
	const struct schedule_run *r = listed_run(c, logical_ms);

	return r ? r->after_ms : schedule_data_interval(c, logical_ms).end_ms;
}

struct schedule_interval schedule_manual_interval(const struct cron *c, int64_t logical_ms)
{
	struct schedule_interval iv = schedule_data_interval(c, logical_ms);
	size_t i = 0;

	if (c->kind == CRON_RUNS)
		return (struct schedule_interval){logical_ms, logical_ms};
	if (c->kind != CRON_EVENTS || !c->restrict_to_events || c->n_events == 0)
		return iv;
	while (i + 1 < c->n_events && c->events[i + 1] <= logical_ms)
		i++;
	iv.start_ms = iv.end_ms = c->events[i];
	return iv;
}

struct schedule_interval schedule_manual_interval_ending(const struct cron *c, int64_t logical_ms,
                                                         int64_t before_ms)
{
	struct schedule_interval iv = {logical_ms, logical_ms};

	if (before_ms > 0) {
		iv.start_ms = logical_ms - before_ms;
	} else if (c->kind == CRON_DELTA) {
		iv.start_ms = cron_delta_add(c, logical_ms, -1);
	} else if (c->kind == CRON_EXPR && !c->trigger) {
		int64_t end = cron_matches(c, logical_ms) ? logical_ms : cron_prev(c, logical_ms);
		int64_t start = end == CRON_NEVER ? CRON_NEVER : cron_prev(c, end);
		if (start == CRON_NEVER)
			return schedule_manual_interval(c, logical_ms);
		iv.start_ms = start;
		iv.end_ms = end;
	} else {
		return schedule_manual_interval(c, logical_ms);
	}
	return iv;
}

/* A delta schedule's next logical date (Airflow's
 * DeltaDataIntervalTimetable): start_date, then each previous one plus the
 * step; without catchup at least one step before now rounded down to a
 * multiple of the step (its length in seconds from now), as Airflow's
 * _skip_to_latest. */
static int64_t next_delta(const struct cron *c, int64_t start_ms, int64_t end_ms, bool catchup,
                          int64_t last_ms, int64_t now_ms)
{
	int64_t s = last_ms == CRON_NEVER ? start_ms : cron_delta_add(c, last_ms, 1);

	if (last_ms != CRON_NEVER && s < start_ms)
		s = start_ms;
	if (!catchup && now_ms <= CRON_TIME_LIMIT) { /* (beyond: "the next one", for views) */
		int64_t now_s = tz_floor_div(now_ms, 1000);
		int64_t step_s = (cron_delta_add(c, now_s * 1000, 1) - now_s * 1000) / 1000;
		int64_t rounded = step_s > 0 ? (now_s - (now_s % step_s)) * 1000 : now_ms;
		int64_t latest = cron_delta_add(c, rounded, -1);
		if (latest > s)
			s = latest;
	}
	if (end_ms != CRON_NEVER && s > end_ms)
		return CRON_NEVER;
	return s;
}

/* An events schedule's next logical date: the first event after the
 * latest run's (Airflow's EventsTimetable: start_date, end_date and
 * catchup do not bound it). */
static int64_t next_event(const struct cron *c, int64_t last_ms)
{
	for (size_t i = 0; i < c->n_events; i++)
		if (last_ms == CRON_NEVER || c->events[i] > last_ms)
			return c->events[i];
	return CRON_NEVER;
}

/* A runs schedule's next logical date: the first listed run that starts
 * after the latest run's. */
static int64_t next_listed(const struct cron *c, int64_t last_ms)
{
	for (size_t i = 0; i < c->n_runs; i++)
		if (last_ms == CRON_NEVER || c->runs[i].start_ms > last_ms)
			return c->runs[i].start_ms;
	return CRON_NEVER;
}

/* A trigger schedule's next logical date: its fire time F, less the
 * interval. */
static int64_t next_trigger(const struct cron *c, int64_t start_ms, int64_t end_ms, bool catchup,
                            int64_t last_ms, int64_t now_ms)
{
	int64_t iv = c->trigger_interval_ms;
	int64_t f = cron_matches(c, start_ms) ? start_ms : cron_next(c, start_ms);
	if (last_ms != CRON_NEVER && f != CRON_NEVER && last_ms + iv >= f)
		f = cron_next(c, last_ms + iv);
	if (f != CRON_NEVER && !catchup) {
		int64_t latest = cron_prev(c, now_ms + 1); /* the last fire time that has come */
		if (latest != CRON_NEVER && latest > f)
			f = latest;
	}
	if (f == CRON_NEVER || (end_ms != CRON_NEVER && f > end_ms))
		return CRON_NEVER;
	return f - iv;
}

/* The logical date of the next scheduled run to consider (its interval may
 * not have ended yet), or CRON_NEVER. */
static int64_t next_candidate(const struct cron *c, int64_t start_ms, int64_t end_ms, bool catchup,
                              int64_t last_ms, int64_t now_ms)
{
	if (start_ms == CRON_NEVER)
		return CRON_NEVER;
	if (c->kind == CRON_ONCE) {
		if (last_ms != CRON_NEVER || (end_ms != CRON_NEVER && start_ms > end_ms))
			return CRON_NEVER;
		return start_ms;
	}
	if (c->kind == CRON_DELTA)
		return next_delta(c, start_ms, end_ms, catchup, last_ms, now_ms);
	if (c->kind == CRON_EVENTS)
		return next_event(c, last_ms);
	if (c->kind == CRON_RUNS)
		return next_listed(c, last_ms);
	if (c->kind != CRON_EXPR)
		return CRON_NEVER;
	if (c->trigger)
		return next_trigger(c, start_ms, end_ms, catchup, last_ms, now_ms);
	int64_t s = cron_matches(c, start_ms) ? start_ms : cron_next(c, start_ms);
	if (last_ms != CRON_NEVER && s != CRON_NEVER && last_ms >= s)
		s = cron_next(c, last_ms);
	if (s != CRON_NEVER && !catchup) {
		/* Only the latest interval that has ended: [prev(P), P) with P
		 * the last fire time at or before now. */
		int64_t p = cron_prev(c, now_ms + 1);
		int64_t latest = p == CRON_NEVER ? CRON_NEVER : cron_prev(c, p);
		if (latest != CRON_NEVER && latest > s)
			s = latest;
	}
	if (s == CRON_NEVER || (end_ms != CRON_NEVER && s > end_ms))
		return CRON_NEVER;
	return s;
}

size_t schedule_due_runs(const struct cron *c, int64_t start_ms, int64_t end_ms, bool catchup,
                         int64_t last_ms, int64_t now_ms, int64_t *out, size_t max)
{
	size_t n = 0;
	while (n < max) {
		int64_t s = next_candidate(c, start_ms, end_ms, catchup, last_ms, now_ms);
		if (s == CRON_NEVER)
			break;
		if (schedule_due_at(c, s) > now_ms || (c->kind == CRON_ONCE && s > now_ms))
			break;
		out[n++] = s;
		last_ms = s;
		if (c->kind == CRON_ONCE)
			break;
	}
	return n;
}

int64_t schedule_next_due(const struct cron *c, int64_t start_ms, int64_t end_ms, bool catchup,
                          int64_t last_ms, int64_t now_ms)
{
	int64_t s;

	if (c->kind == CRON_CONTINUOUS) /* a run's end brings the next one */
		return last_ms == CRON_NEVER && start_ms != CRON_NEVER && start_ms > now_ms
		           ? start_ms
		           : CRON_NEVER;
	s = next_candidate(c, start_ms, end_ms, catchup, last_ms, now_ms);
	if (s == CRON_NEVER)
		return CRON_NEVER;
	return schedule_due_at(c, s);
}
