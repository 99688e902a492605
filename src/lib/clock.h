/* clock.h: wall-clock and monotonic time, ISO 8601 text, sleeping. */
#ifndef WEIR_LIB_CLOCK_H
#define WEIR_LIB_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds since the Unix epoch (wall clock). */
int64_t clock_now_ms(void);
/* Milliseconds of a monotonic clock (for durations and timers). */
int64_t clock_mono_ms(void);
/* Nanoseconds of the same clock (short durations: a commit, a loop turn). */
int64_t clock_mono_ns(void);
/* "2026-11-30T12:00:00.123Z" into buf (at least 25 bytes); returns buf. */
char *clock_format_iso(int64_t epoch_ms, char *buf, size_t size);
/* Parses what clock_format_iso writes, also without fraction or with a
 * "+00:00" offset, or a plain date "2026-11-30" (midnight UTC). 0 or -1. */
int clock_parse_iso(const char *text, int64_t *epoch_ms);
/* Airflow's form: "2024-01-31T06:00:00+00:00", with microseconds
 * ("...06:00:00.250000+00:00") when the time has a fraction of a second.
 * buf: at least 33 bytes; returns buf. */
char *clock_format_airflow(int64_t epoch_ms, char *buf, size_t size);
/* Sleeps `ms` milliseconds (nothing for ms <= 0), the whole time even when
 * a signal handler runs meanwhile. */
void clock_sleep_ms(int64_t ms);

#endif
