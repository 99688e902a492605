/* redis.h: a Redis client of weir's own: a TCP connection, AUTH with the
 * connection's password (and login, Redis 6's ACL user), SELECT of the
 * database the schema names, and pipelined commands (resp.h).
 *
 * redis_queue() adds a command to the pipeline; it is sent when the
 * pipeline holds about 64 KiB, and its replies are read back before more
 * is sent, so neither side's buffers grow with the row count.
 * redis_sync() sends the rest and reads every reply; the first error reply
 * fails it with Redis's words ("redis: WRONGTYPE ...").
 */
#ifndef WEIR_DATA_REDIS_H
#define WEIR_DATA_REDIS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/connection.h"

struct redis_client;

/* Connects within 10 s; replies are waited for as long as they take. */
struct redis_client *redis_open(const struct connection *c, struct weir_error *err);
/* The same with the connect and every reply bounded by timeout_ms (> 0;
 * 0 is redis_open()): a test of the connection, not a transfer. */
struct redis_client *redis_open_timed(const struct connection *c, long timeout_ms,
                                      struct weir_error *err);
void redis_close(struct redis_client *r);

int redis_queue(struct redis_client *r, size_t argc, const char *const *argv, const size_t *len,
                struct weir_error *err);
int redis_sync(struct redis_client *r, struct weir_error *err);
/* One command, its reply's integer (or 0) into *out (may be NULL). */
int redis_call(struct redis_client *r, size_t argc, const char *const *argv, int64_t *out,
               struct weir_error *err);

#endif
