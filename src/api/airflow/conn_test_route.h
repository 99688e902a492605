/* conn_test_route.h: POST /api/v1/connections/test (Airflow's), answered
 * when the test ends, without holding the loop meanwhile.
 *
 * The body is Airflow's Connection (connection_id, conn_type, host, port,
 * login, password, schema, extra), or connection_id alone to test the
 * connection of that id as it resolves (docs/connections.md).  The answer
 * is 200 {"status": true|false, "message": "..."} either way; a bad body
 * is a 400 problem, an id that resolves nowhere a 404.  The request is
 * suspended while the server's op (secrets_api_ops.test_connection) runs
 * the test in libuv's thread pool, and answered from the op's end.
 */
#ifndef WEIR_API_CONN_TEST_ROUTE_H
#define WEIR_API_CONN_TEST_ROUTE_H

#include <jansson.h>
#include <uv.h>

#include "api/http.h"
#include "api/secrets_api.h"

struct conn_tests; /* opaque: the tests in progress */

/* NULL on out of memory. */
struct conn_tests *conn_tests_create(uv_loop_t *loop);
/* Answers every test still in progress 503 (its end, when it comes, is
 * dropped).  NULL is a no-op. */
void conn_tests_destroy(struct conn_tests *t);

/* Answers POST /connections/test whose body (a JSON object of Airflow's
 * Connection fields, borrowed) the caller has read, or suspends it until
 * the test ends.  t NULL: 501. */
void conn_test_route_handle(struct conn_tests *t, const struct secrets_api_ops *ops, void *ctx,
                            struct http_request *req, json_t *body);

#endif
