/* conn_test.h: whether a connection answers (POST /connections/test,
 * `weir connections test`).
 *
 * What a test does, by kind:
 *   postgres, mysql, clickhouse, sqlite  open (log in) and run SELECT 1
 *   redis                                connect, AUTH (when a password is
 *                                        set), SELECT the schema's db, PING
 *   http                                 GET of the base URL: the host (with
 *                                        "http://" before it unless it has a
 *                                        scheme) and the port; any answer
 *                                        below 500 is reachable
 *   fs                                   the path exists and is a folder
 * Any other kind fails: "weir cannot test connections of type X".
 *
 * Connecting, logging in and each answer are bounded by timeout_ms.  The
 * call blocks (sockets, the database's client library): the server runs it
 * off its loop.  The message is the database's own words on failure, and
 * never holds the password (it is masked should a server echo it).
 */
#ifndef WEIR_DATA_CONN_TEST_H
#define WEIR_DATA_CONN_TEST_H

#include <stdbool.h>

#include "model/connection.h"

#define DATA_CONN_TEST_TIMEOUT_MS 10000

/* true when c answered.  *msg (newly allocated; NULL when out of memory)
 * says what happened. */
bool data_conn_test(const struct connection *c, long timeout_ms, char **msg);

#endif
