/* conn_test.c: testing a connection, by kind (conn_test.h). */
#include "data/conn_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/driver.h"
#include "data/redis.h"
#include "lib/http_client.h"
#include "lib/strbuf.h"
#include "lib/tls.h"

#define TEST_OK "Connection successfully tested"

static int test_sql(const struct connection *c, long timeout_ms, struct strbuf *msg,
                    struct weir_error *err)
{
	struct data_conn *dc = data_open_timed(c, timeout_ms, err);
	int rc;

	if (!dc)
		return -1;
	rc = data_exec(dc, "SELECT 1", err);
	data_close(dc);
	if (rc == 0)
		strbuf_addstr(msg, TEST_OK);
	return rc;
}

static int test_redis(const struct connection *c, long timeout_ms, struct strbuf *msg,
                      struct weir_error *err)
{
	static const char *const ping[] = {"PING"};
	struct redis_client *r = redis_open_timed(c, timeout_ms, err);
	int rc;

	if (!r)
		return -1;
	rc = redis_call(r, 1, ping, NULL, err);
	redis_close(r);
	if (rc == 0)
		strbuf_addstr(msg, TEST_OK);
	return rc;
}

static int test_http(const struct connection *c, long timeout_ms, struct strbuf *msg,
                     struct weir_error *err)
{
	struct strbuf url = STRBUF_INIT;
	struct http_response resp = {0};
	struct http_client *h;
	int rc = -1;

	if (!c->host || !*c->host)
		return weir_error_set(err, WEIR_E_INVALID, "http: the connection has no host");
	if (connection_http_url(c, &url, err) < 0) {
		strbuf_release(&url);
		return -1;
	}
	while (url.len && url.buf[url.len - 1] == '/')
		url.buf[--url.len] = '\0';
	if (!(h = http_client_create(url.buf, NULL)) ||
	    http_client_set_tls(h, &tls_http_ops, connection_ca_file(c)) < 0) {
		http_client_destroy(h);
		strbuf_release(&url);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	if (http_client_request(h, "GET", "/", NULL, timeout_ms, &resp, err) == 0) {
		if (resp.status < 500) {
			strbuf_addf(msg, "%s: GET %s/ answered %ld", TEST_OK, url.buf, resp.status);
			rc = 0;
		} else {
			weir_error_set(err, WEIR_E_UNAVAILABLE, "http: GET %s/ answered %ld",
			               url.buf, resp.status);
		}
	}
	http_response_release(&resp);
	http_client_destroy(h);
	strbuf_release(&url);
	return rc;
}

static int test_fs(const struct connection *c, struct strbuf *msg, struct weir_error *err)
{
	char *path = connection_path(c);
	struct stat st;
	int rc = -1;

	if (!path)
		return weir_error_set(err, WEIR_E_INVALID, "fs: the connection names no path");
	if (stat(path, &st) < 0)
		weir_error_set(err, WEIR_E_NOT_FOUND, "fs: %s: %s", path, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		weir_error_set(err, WEIR_E_INVALID, "fs: %s is not a folder", path);
	else {
		strbuf_addf(msg, "%s: %s is a folder", TEST_OK, path);
		rc = 0;
	}
	free(path);
	return rc;
}

bool data_conn_test(const struct connection *c, long timeout_ms, char **msg)
{
	struct weir_error err = {0};
	struct strbuf out = STRBUF_INIT;
	int rc;

	switch (c->kind) {
	case CONN_POSTGRES:
	case CONN_MYSQL:
	case CONN_CLICKHOUSE:
	case CONN_SQLITE:
		rc = test_sql(c, timeout_ms, &out, &err);
		break;
	case CONN_REDIS:
		rc = test_redis(c, timeout_ms, &out, &err);
		break;
	case CONN_HTTP:
		rc = test_http(c, timeout_ms, &out, &err);
		break;
	case CONN_FS:
		rc = test_fs(c, &out, &err);
		break;
	default:
		rc = weir_error_set(&err, WEIR_E_INVALID, "weir cannot test connections of type %s",
		                    c->type ? c->type : "?");
		break;
	}
	if (rc < 0) {
		strbuf_reset(&out);
		strbuf_addstr(&out, err.msg);
	}
	/* the drivers never put the password in a message; a server might */
	*msg = connection_mask_text(c, out.buf);
	strbuf_release(&out);
	return rc == 0;
}
