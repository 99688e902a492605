/* airflow_logs.h: GET /api/v1/dags/{dag_id}/dagRuns/{run_id}/taskInstances/
 * {task_id}/logs/{try_number}: one try's log, as Airflow answers it (JSON
 * fragments {"content","continuation_token"}, or text/plain by the Accept
 * header), plus weir's offset/length/download window for text
 * (api/log_window.h).  The text answer comes from the log streamer
 * (api/log_stream.h), the one weir's job log route uses.
 */
#ifndef WEIR_API_AIRFLOW_LOGS_H
#define WEIR_API_AIRFLOW_LOGS_H

#include "api/dag_api.h"
#include "api/http.h"
#include "api/logs/log_stream.h"

/* seg: the path's values where its segments after /api/v1/ have them
 * (airflow_path_segments(): seg[1] dag_id, seg[3] run_id, seg[5] task_id,
 * seg[7] the try number), ids already checked. */
void airflow_logs_route(const struct dag_api_ops *ops, void *ctx, struct log_stream *logs,
                        struct http_request *req, const char *const *seg);

#endif
