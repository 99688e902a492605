/* auth_throttle.h: a per-address count of password checks in a fixed
 * window, so that a client guessing passwords is answered 429 without a
 * hash once it has had its share (docs/security.md).
 *
 * Pure: the caller gives the time.  A table of AUTH_THROTTLE_SLOTS
 * addresses; when it is full the address seen least recently gives up its
 * slot (an attacker with many addresses gets a fresh share per address, as
 * it would with any per-address rule).  An attempt counts when it begins,
 * so a burst sent at once is cut at the share too; a success clears its
 * address.
 */
#ifndef WEIR_API_AUTH_THROTTLE_H
#define WEIR_API_AUTH_THROTTLE_H

#include <stdint.h>

#define AUTH_THROTTLE_SLOTS 512
#define AUTH_THROTTLE_DEFAULT_ATTEMPTS 10u
#define AUTH_THROTTLE_DEFAULT_WINDOW_MS 60000

struct auth_throttle; /* opaque */

/* At most `attempts` checks per address in each `window_ms`; 0 in either:
 * its default.  NULL when out of memory. */
struct auth_throttle *auth_throttle_create(unsigned attempts, int64_t window_ms);
void auth_throttle_destroy(struct auth_throttle *t);

/* Milliseconds until `addr` may have a check again: 0, now. */
int64_t auth_throttle_wait_ms(const struct auth_throttle *t, const char *addr, int64_t now_ms);
/* A check for `addr` begins: it counts against the address's share. */
void auth_throttle_note(struct auth_throttle *t, const char *addr, int64_t now_ms);
/* A check for `addr` succeeded: its count starts again. */
void auth_throttle_clear(struct auth_throttle *t, const char *addr);

#endif
