/* calls_routes.h: a warm worker's calls (docs/api.md, docs/internals/calls.md):
 *   POST /jobs/{id}/calls          a batch of the calls' records, from the
 *                                  program that sent them to the worker
 *   GET  /jobs/{id}/calls[?after&limit]  the job's calls in order, and how
 *                                  many are in each state
 * Errors in weir's dialect (api/reply.h); a bad record is refused whole
 * (400), naming the record and the field.
 */
#ifndef WEIR_API_CALLS_ROUTES_H
#define WEIR_API_CALLS_ROUTES_H

#include "api/http.h"

struct route_ctx;
struct route_match;

/* The operations of the route table's /jobs/{job_id}/calls row. */
void jobs_calls_get(const struct route_ctx *rc, struct http_request *req,
                    const struct route_match *m);
void jobs_calls_post(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m);

#endif
