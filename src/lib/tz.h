/* tz.h: time zones from the system's tz database (TZif files), and the
 * proleptic Gregorian calendar they and the cron schedules share.
 *
 * A zone is read once from $TZDIR (default /usr/share/zoneinfo) and kept for
 * the life of the process (a handful of zones, a few KiB each), so a zone
 * pointer is a plain value that a struct cron may copy.  The look-up is
 * thread safe (a mutex around the list); a zone, once read, is immutable.
 * glibc's localtime_r with TZ is not used: TZ is process-global and tzset()
 * is neither reentrant with other zones nor cheap to switch.
 *
 * Offsets after a file's last transition come from its footer (the POSIX TZ
 * rule, "CET-1CEST,M3.5.0,M10.5.0/3"): Debian's slim files end their
 * transitions decades ago and rely on it.  Leap seconds are ignored (the
 * "right/" zones are refused by name only if their files lack a footer).
 */
#ifndef WEIR_LIB_TZ_H
#define WEIR_LIB_TZ_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/error.h"

#define TZ_NAME_MAX 128

struct tz_zone;

/* The zone named `name` ("Europe/Amsterdam", "UTC", "Etc/GMT+5"); "UTC" and
 * "Etc/UTC" need no file.  NULL with err: a name with characters other than
 * letters, digits, '_', '-', '+' and '/' (or a ".." part, a leading '/'),
 * no such file, or a file that is not TZif. */
const struct tz_zone *tz_zone_get(const char *name, struct weir_error *err);

/* The zone's name as given to tz_zone_get ("UTC" for NULL). */
const char *tz_zone_name(const struct tz_zone *z);

/* Whether the zone is UTC (NULL is UTC) or has a constant zero offset. */
bool tz_zone_is_utc(const struct tz_zone *z);

/* The offset east of UTC, in seconds, at `utc_s` (seconds since the epoch). */
int32_t tz_offset_at(const struct tz_zone *z, int64_t utc_s);

/* The instant of a wall-clock time `local_s` (seconds since the epoch read
 * as if local time were UTC), as Airflow's make_aware places it: a time that
 * occurs twice (clocks set back) is its second occurrence; one that does not
 * occur (clocks set forward) is moved forward by the gap (02:30 -> 03:30). */
int64_t tz_local_to_utc(const struct tz_zone *z, int64_t local_s);

/* Calendar (proleptic Gregorian): days since 1970-01-01 of a date, and back. */
int64_t tz_days_from_civil(int64_t year, int month, int day);
void tz_civil_from_days(int64_t days, int64_t *year, int *month, int *day);

/* a / b rounded towards minus infinity (b > 0). */
int64_t tz_floor_div(int64_t a, int64_t b);

#endif
