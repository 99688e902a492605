/* log_window.h: which bytes of a log file a request asks for, and the
 * headers that tell the client where its answer sits.
 *
 * Both log routes (weir's job task logs in api.c and Airflow's try logs in
 * airflow.c) take the same query parameters, so one log viewer reads both
 * in pieces:
 *   offset=K    from byte K; negative counts from the end (-262144: the
 *               last 256 KiB); past the end means at the end
 *   length=N    at most N bytes (the answer may be shorter at the end)
 *   download=1  adds Content-Disposition: attachment
 * and answers with X-Weir-Log-Size (the file's size at answer time),
 * X-Weir-Log-Offset (where the first byte of the answer sits) and
 * X-Weir-Task-Ended (true|false).
 */
#ifndef WEIR_API_LOG_WINDOW_H
#define WEIR_API_LOG_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/http.h"

#define LOG_WINDOW_MAX_OFFSET (INT64_MAX / 4)

struct log_window {
	bool has_offset; /* offset was given */
	int64_t offset;  /* as given; negative: from the end */
	int64_t length;  /* -1: to the end */
	bool download;
};

/* Reads offset, length and download from the request's query.  0, or -1
 * with `msg` naming the parameter and what was expected. */
int log_window_parse(const struct http_request *req, struct log_window *w, char *msg,
                     size_t msg_size);

/* The answer's first byte and the byte after its last ([*start, *end)) for
 * a file of `size` bytes; *end is UINT64_MAX when the window has no length
 * (to the end, whatever the end is when the bytes are read). */
void log_window_resolve(const struct log_window *w, uint64_t size, uint64_t *start, uint64_t *end);

/* Adds X-Weir-Log-Size, X-Weir-Log-Offset, X-Weir-Task-Ended and, with
 * download, Content-Disposition naming `filename` (characters other than
 * A-Z a-z 0-9 _ . - become _). */
void log_window_headers(struct http_request *req, const struct log_window *w, uint64_t size,
                        uint64_t start, bool ended, const char *filename);

#endif
