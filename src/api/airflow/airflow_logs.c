/* airflow_logs.c: the task instance log route, JSON fragments and
 * text/plain (airflow_logs.h). */
#include "api/airflow/airflow_logs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/airflow/airflow_request.h"
#include "api/logs/log_window.h"
#include "api/reply.h"
#include "api/request.h"

#define LOG_FRAGMENT (1u << 20)  /* JSON logs without full_content */
#define LOG_FULL_MAX (16u << 20) /* JSON logs with full_content */
#define TRY_MAX 100000

/* Bytes [0, len) of s as a JSON-safe string: invalid UTF-8 becomes U+FFFD;
 * an incomplete sequence at the very end is left out unless `last` (the
 * next fragment starts with it).  Returns the bytes of s consumed. */
static size_t utf8_clean(const char *s, size_t len, bool last, char **out, size_t *out_len)
{
	char *o = malloc(len * 3 + 1);
	size_t i = 0, k = 0;

	*out = o;
	if (!o)
		return 0;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t need = c < 0x80             ? 1
		              : (c & 0xe0) == 0xc0 ? 2
		              : (c & 0xf0) == 0xe0 ? 3
		              : (c & 0xf8) == 0xf0 ? 4
		                                   : 0;
		bool ok = need > 0 && (need != 2 || c >= 0xc2) && (need != 4 || c <= 0xf4);
		size_t j;

		if (ok && i + need > len && !last) {
			for (j = 1; i + j < len; j++)
				if (((unsigned char)s[i + j] & 0xc0) != 0x80)
					break;
			if (i + j == len)
				break; /* cut mid-character: the rest comes next time */
		}
		for (j = 1; ok && j < need; j++)
			ok = i + j < len && ((unsigned char)s[i + j] & 0xc0) == 0x80;
		if (ok && need == 3) {
			unsigned char c1 = (unsigned char)s[i + 1];
			ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
		}
		if (ok && need == 4) {
			unsigned char c1 = (unsigned char)s[i + 1];
			ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
		}
		if (ok) {
			memcpy(o + k, s + i, need);
			k += need;
			i += need;
		} else {
			memcpy(o + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		}
	}
	o[k] = '\0';
	*out_len = k;
	return i;
}

void airflow_logs_route(const struct dag_api_ops *ops, void *ctx, struct log_stream *logs,
                        struct http_request *req, const char *const *seg)
{
	struct weir_error err = {0};
	const char *fc = http_request_query(req, "full_content");
	const char *token = http_request_query(req, "token");
	bool full = false, ended = false;
	uint64_t offset = 0, size = 0, end;
	char *path = NULL, *tok = NULL, *buf = NULL, *clean = NULL;
	int map_index, fd = -1;
	int64_t try_number;
	struct stat st;
	size_t want, got = 0, used, clean_len = 0;
	struct log_window win;
	bool text = airflow_accept_text(http_request_header(req, "Accept"));
	char msg[200];

	if (api_parse_int(seg[7], 1, TRY_MAX, &try_number) < 0) {
		reply_problemf(req, 400, "try_number \"%.40s\": expected a whole number >= 1",
		               seg[7]);
		return;
	}
	if (fc && strcasecmp(fc, "true") && strcasecmp(fc, "false")) {
		reply_problemf(req, 400, "full_content \"%.40s\": expected true or false", fc);
		return;
	}
	full = fc && !strcasecmp(fc, "true");
	if (log_window_parse(req, &win, msg, sizeof msg) < 0) {
		reply_problem(req, 400, msg);
		return;
	}
	if (!text && (win.has_offset || win.length >= 0 || win.download)) {
		reply_problem(req, 400,
		              "offset, length and download: only with Accept: "
		              "text/plain (JSON answers page with token)");
		return;
	}
	if (win.has_offset && ((token && *token) || full)) {
		reply_problem(req, 400,
		              "offset: expected either offset or token/full_content, "
		              "not both");
		return;
	}
	if (token && *token && airflow_log_token_decode(token, &offset) < 0) {
		reply_problem(req, 400,
		              "token: expected a continuation_token from an earlier "
		              "answer of this route");
		return;
	}
	if (full)
		offset = 0;
	if (!airflow_map_index_query(req, &map_index))
		return;
	if (ops->ti_log_locate(ctx, seg[1], seg[3], seg[5], map_index, (int)try_number, &path,
	                       &ended, &err) < 0) {
		reply_problem_error(req, &err);
		return;
	}
	fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0 && fstat(fd, &st) == 0)
		size = (uint64_t)st.st_size;
	if (offset > size)
		offset = size;
	if (text) {
		uint64_t start, stop;
		char name[4 * AIRFLOW_ID_MAX + 64];

		if (!win.has_offset)
			win.offset = (int64_t)offset; /* the token's (or 0) */
		log_window_resolve(&win, size, &start, &stop);
		if (stop > size)
			stop = size;
		if (map_index >= 0)
			snprintf(name, sizeof name, "%s-%s-%s-%d-%lld.log", seg[1], seg[3], seg[5],
			         map_index, (long long)try_number);
		else
			snprintf(name, sizeof name, "%s-%s-%s-%lld.log", seg[1], seg[3], seg[5],
			         (long long)try_number);
		log_window_headers(req, &win, size, start, ended, name);
		tok = airflow_log_token_encode(stop, ended && stop >= size);
		if (tok)
			http_request_add_header(req, "X-Weir-Continuation-Token", tok);
		/* a file not there yet answers nothing: fd -1 and no path to open */
		struct log_stream_source src = {.fd = fd, .start = start, .end = stop};
		fd = -1;
		if (log_stream_respond(logs, req, &src) < 0)
			reply_problem(req, 500, "out of memory");
		goto out;
	}
	/* JSON: one fragment from the offset, and where the next one starts */
	end = size - offset > (full ? LOG_FULL_MAX : LOG_FRAGMENT)
	          ? offset + (full ? LOG_FULL_MAX : LOG_FRAGMENT)
	          : size;
	want = (size_t)(end - offset);
	buf = malloc(want + 1);
	if (!buf) {
		reply_problem(req, 500, "out of memory");
		goto out;
	}
	while (fd >= 0 && got < want) {
		ssize_t n = pread(fd, buf + got, want - got, (off_t)(offset + got));
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	/* the last fragment of an ended task may end mid-character: send it whole */
	used = utf8_clean(buf, got, ended && offset + got >= size, &clean, &clean_len);
	if (!clean) {
		reply_problem(req, 500, "out of memory");
		goto out;
	}
	offset += used;
	tok = airflow_log_token_encode(offset, ended && offset >= size);
	http_request_respond_json(
	    req, 200,
	    json_pack("{s:s?, s:s%}", "continuation_token", tok, "content", clean, clean_len));
out:
	if (fd >= 0)
		close(fd);
	free(path);
	free(tok);
	free(buf);
	free(clean);
}
