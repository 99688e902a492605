/* log_window.c: the offset/length/download parameters of the log routes
 * and their answer headers (log_window.h). */
#include "api/logs/log_window.h"

#include "api/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int log_window_parse(const struct http_request *req, struct log_window *w, char *msg,
                     size_t msg_size)
{
	const char *o = http_request_query(req, "offset");
	const char *l = http_request_query(req, "length");
	const char *d = http_request_query(req, "download");

	memset(w, 0, sizeof *w);
	w->length = -1;
	if (o) {
		if (api_parse_int(o, -LOG_WINDOW_MAX_OFFSET, LOG_WINDOW_MAX_OFFSET, &w->offset) <
		    0) {
			snprintf(msg, msg_size,
			         "offset \"%.40s\": expected a byte offset (negative: from the "
			         "end, -262144 is the last 256 KiB)",
			         o);
			return -1;
		}
		w->has_offset = true;
	}
	if (l && (api_parse_int(l, 0, LOG_WINDOW_MAX_OFFSET, &w->length) < 0)) {
		snprintf(msg, msg_size, "length \"%.40s\": expected a whole number of bytes >= 0",
		         l);
		return -1;
	}
	if (d) {
		if (!strcmp(d, "1") || !strcmp(d, "true")) {
			w->download = true;
		} else if (strcmp(d, "0") && strcmp(d, "false")) {
			snprintf(msg, msg_size, "download \"%.40s\": expected 1, 0, true or false",
			         d);
			return -1;
		}
	}
	return 0;
}

void log_window_resolve(const struct log_window *w, uint64_t size, uint64_t *start, uint64_t *end)
{
	uint64_t s;

	if (w->offset < 0)
		s = (uint64_t)(-w->offset) >= size ? 0 : size - (uint64_t)(-w->offset);
	else
		s = (uint64_t)w->offset > size ? size : (uint64_t)w->offset;
	*start = s;
	*end = w->length < 0 ? UINT64_MAX : s + (uint64_t)w->length;
}

void log_window_headers(struct http_request *req, const struct log_window *w, uint64_t size,
                        uint64_t start, bool ended, const char *filename)
{
	char num[32];

	snprintf(num, sizeof num, "%llu", (unsigned long long)size);
	http_request_add_header(req, "X-Weir-Log-Size", num);
	snprintf(num, sizeof num, "%llu", (unsigned long long)start);
	http_request_add_header(req, "X-Weir-Log-Offset", num);
	http_request_add_header(req, "X-Weir-Task-Ended", ended ? "true" : "false");
	if (w->download && filename) {
		char value[400];
		size_t k = (size_t)snprintf(value, sizeof value, "attachment; filename=\"");
		for (const char *p = filename; *p && k + 3 < sizeof value; p++) {
			char c = *p;
			bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			          (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
			value[k++] = ok ? c : '_';
		}
		value[k++] = '"';
		value[k] = '\0';
		http_request_add_header(req, "Content-Disposition", value);
	}
}
