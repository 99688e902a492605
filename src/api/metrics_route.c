/* metrics_route.c: GET /metrics (metrics_route.h) and the HTTP counters:
 * one fixed array [route][method][status], zero rows left out of the page.
 */
#include "api/metrics_route.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "api/reply.h"
#include "api/request.h"
#include "api/route_table.h"
#include "lib/log.h"
#include "lib/metrics.h"

static const char *const methods[] = {"GET",   "HEAD",   "POST",    "PUT",
                                      "PATCH", "DELETE", "OPTIONS", "other"};
#define N_METHODS (sizeof methods / sizeof methods[0])
/* the codes the server answers; any other counts as its class ("2xx") */
static const int codes[] = {200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 403, 404,
                            405, 406, 409, 410, 413, 415, 422, 429, 500, 501, 502, 503};
#define N_CODES (sizeof codes / sizeof codes[0])
#define N_CLASSES 5 /* 1xx..5xx */

static uint64_t http_counts[ROUTE_TABLE_MAX][N_METHODS][N_CODES + N_CLASSES];

static size_t method_index(const char *m)
{
	for (size_t i = 0; i + 1 < N_METHODS; i++)
		if (m && !strcasecmp(m, methods[i]))
			return i;
	return N_METHODS - 1;
}

static size_t code_index(int status)
{
	for (size_t i = 0; i < N_CODES; i++)
		if (codes[i] == status)
			return i;
	if (status < 100 || status > 599)
		status = 500;
	return N_CODES + (size_t)(status / 100 - 1);
}

void metrics_route_count(const char *method, int route, int status)
{
	if (route < 0 || route >= ROUTE_TABLE_MAX || (size_t)route >= route_table_count())
		route = ROUTE_TABLE_OTHER;
	http_counts[route][method_index(method)][code_index(status)]++;
}

void metrics_route_reset(void)
{
	memset(http_counts, 0, sizeof http_counts);
}

static void render_http(struct strbuf *out)
{
	size_t routes =
	    route_table_count() < ROUTE_TABLE_MAX ? route_table_count() : ROUTE_TABLE_MAX;

	metrics_render_header(out, "weir_http_requests_total", "counter",
	                      "HTTP requests answered, by method, route template and status code.");
	for (size_t r = 0; r < routes; r++)
		for (size_t m = 0; m < N_METHODS; m++)
			for (size_t c = 0; c < N_CODES + N_CLASSES; c++) {
				uint64_t v = http_counts[r][m][c];
				if (!v)
					continue;
				strbuf_addf(out, "weir_http_requests_total{method=\"%s\",route=\"",
				            methods[m]);
				metrics_render_label_value(out, route_table_template((int)r));
				if (c < N_CODES)
					strbuf_addf(out, "\",code=\"%d\"} %llu\n", codes[c],
					            (unsigned long long)v);
				else
					strbuf_addf(out, "\",code=\"%dxx\"} %llu\n",
					            (int)(c - N_CODES + 1), (unsigned long long)v);
			}
}

void metrics_route_handle(const struct observe_api_ops *ops, void *ctx, const char *version,
                          struct http_request *req)
{
	struct strbuf out = STRBUF_INIT;
	struct weir_error err = {0};
	size_t len;
	char *text;

	if (!request_method_is(req, "GET") && !request_method_is(req, "HEAD")) {
		reply_no_method(req);
		return;
	}
	metrics_render_header(&out, "weir_build_info", "gauge",
	                      "Always 1; the version of the server in its label.");
	strbuf_addf(&out, "weir_build_info{version=\"%s\"} 1\n", version);
	if (ops && ops->gauges && ops->gauges(ctx, &out, &err) < 0)
		log_warn("metrics: the gauges: %s", err.msg); /* the rest still answers */
	metrics_render(&out);
	render_http(&out);
	if (out.failed) {
		strbuf_release(&out);
		reply_status(req, 500, "out of memory");
		return;
	}
	text = strbuf_detach(&out, &len);
	reply_text(req, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
}
