/* duration.h: durations as users write them ("600", "90s", "10m", "1h30m",
 * "2d") and the longest one weir accepts.  A leaf of model/: the field
 * reader and the job spec both use it, so it includes neither.
 */
#ifndef WEIR_MODEL_DURATION_H
#define WEIR_MODEL_DURATION_H

#include <stdint.h>

#include "lib/error.h"

/* The longest timeout, interval or duration anywhere in a spec: a year. */
#define DURATION_MAX_S (366LL * 24 * 3600)

/* `text` -> seconds (parts with units s, m, h, d; a bare number is seconds).
 * 0, or -1 with err naming `field` (nothing stored in *out). */
int duration_parse_s(const char *text, const char *field, int64_t *out, struct weir_error *err);

#endif
