/* Tests of the HTTP client against a real listening socket served by a
 * forked child: Content-Length and chunked bodies, keep-alive reuse, a
 * server that closes, streaming, and a refused connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/http_client.h"
#include "lib/tls.h"

static int listen_fd;
static int port;
static pid_t server_pid;

/* Answers requests on each accepted connection from a fixed script chosen
 * by the request path. */
static void serve(void)
{
	for (;;) {
		int fd = accept(listen_fd, NULL, NULL);
		if (fd < 0)
			_exit(0);
		char req[8192];
		size_t have = 0;
		for (;;) {
			ssize_t r = recv(fd, req + have, sizeof req - have - 1, 0);
			if (r <= 0)
				break;
			have += (size_t)r;
			req[have] = '\0';
			char *end = strstr(req, "\r\n\r\n");
			if (!end)
				continue;
			const char *cl = strstr(req, "Content-Length: ");
			size_t body = cl ? (size_t)atoi(cl + 16) : 0;
			size_t head = (size_t)(end + 4 - req);
			if (have < head + body)
				continue;
			const char *resp;
			char echo[8192];
			if (!strncmp(req, "GET /chunked", 12)) {
				resp = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				       "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
			} else if (!strncmp(req, "GET /close", 10)) {
				resp = "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n"
				       "{\"error\":\"no such thing\"}";
			} else {
				const char *auth = strstr(req, "Authorization: Bearer sekrit") ? "yes" : "no";
				char bodytxt[4096];
				snprintf(bodytxt, sizeof bodytxt, "auth=%s body=%.*s", auth, (int)body,
					 req + head);
				snprintf(echo, sizeof echo,
					 "HTTP/1.1 201 Created\r\nContent-Length: %zu\r\n\r\n%s",
					 strlen(bodytxt), bodytxt);
				resp = echo;
			}
			send(fd, resp, strlen(resp), MSG_NOSIGNAL);
			if (strstr(resp, "Connection: close"))
				break;
			memmove(req, req + head + body, have - head - body);
			have -= head + body;
		}
		close(fd);
	}
}

static int setup(void **state)
{
	(void)state;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(listen_fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(listen_fd, 8) < 0)
		return -1;
	getsockname(listen_fd, (struct sockaddr *)&a, &al);
	port = ntohs(a.sin_port);
	server_pid = fork();
	if (server_pid == 0)
		serve();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	kill(server_pid, SIGKILL);
	waitpid(server_pid, NULL, 0);
	close(listen_fd);
	return 0;
}

static struct http_client *client(const char *token)
{
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
	return http_client_create(url, token);
}

static void test_post_with_body_and_token_reuses_connection(void **state)
{
	(void)state;
	struct http_client *c = client("sekrit");
	struct http_response r;
	assert_int_equal(http_client_request(c, "POST", "/x", "{\"a\":1}", 2000, &r, NULL), 0);
	assert_int_equal(r.status, 201);
	assert_string_equal(r.body, "auth=yes body={\"a\":1}");
	http_response_release(&r);
	/* a second request on the same kept-alive connection */
	assert_int_equal(http_client_request(c, "GET", "/y", NULL, 2000, &r, NULL), 0);
	assert_string_equal(r.body, "auth=yes body=");
	http_response_release(&r);
	http_client_destroy(c);
}

static void test_chunked_body(void **state)
{
	(void)state;
	struct http_client *c = client(NULL);
	struct http_response r;
	assert_int_equal(http_client_request(c, "GET", "/chunked", NULL, 2000, &r, NULL), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "hello world");
	http_response_release(&r);
	http_client_destroy(c);
}

static void test_error_text_and_close_then_reconnect(void **state)
{
	(void)state;
	struct http_client *c = client(NULL);
	struct http_response r;
	assert_int_equal(http_client_request(c, "GET", "/close", NULL, 2000, &r, NULL), 0);
	assert_int_equal(r.status, 404);
	assert_string_equal(http_response_error_text(&r), "no such thing");
	http_response_release(&r);
	assert_int_equal(http_client_request(c, "GET", "/again", NULL, 2000, &r, NULL), 0);
	assert_string_equal(r.body, "auth=no body=");
	http_response_release(&r);
	http_client_destroy(c);
}

static int collect(const char *data, size_t len, void *arg)
{
	size_t n = strlen(arg);
	memcpy((char *)arg + n, data, len);
	((char *)arg)[n + len] = '\0';
	return 0;
}

static void test_stream(void **state)
{
	(void)state;
	struct http_client *c = client(NULL);
	char got[64] = "";
	long status;
	assert_int_equal(http_client_stream(c, "/chunked", collect, got, &status, NULL), 0);
	assert_int_equal(status, 200);
	assert_string_equal(got, "hello world");
	http_client_destroy(c);
}

static void test_refused_and_bad_url(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct http_response r;
	struct http_client *c = http_client_create("http://127.0.0.1:1", NULL);
	assert_int_equal(http_client_request(c, "GET", "/", NULL, 2000, &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_UNAVAILABLE);
	assert_non_null(strstr(err.msg, "cannot connect"));
	http_client_destroy(c);
	/* a handle without a TLS layer (the launcher's) says so */
	c = http_client_create("https://example.invalid", NULL);
	assert_int_equal(http_client_request(c, "GET", "/", NULL, 2000, &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_non_null(strstr(err.msg, "https is not available here"));
	http_client_destroy(c);
}

static void check_endpoint(const char *url, const char *host, const char *want_port,
			   bool https)
{
	struct http_client *c = http_client_create(url, NULL);
	const char *h, *p;
	bool s;

	assert_int_equal(http_client_endpoint(c, &h, &p, &s), 0);
	assert_string_equal(h, host);
	assert_string_equal(p, want_port);
	assert_int_equal(s, https);
	http_client_destroy(c);
}

static void test_https_urls(void **state)
{
	(void)state;
	check_endpoint("https://hooks.slack.com/services/T0/B0/x", "hooks.slack.com", "443", true);
	check_endpoint("https://hooks.example.com", "hooks.example.com", "443", true);
	check_endpoint("https://127.0.0.1:8443/", "127.0.0.1", "8443", true);
	check_endpoint("https://[::1]/x", "::1", "443", true);
	check_endpoint("https://[::1]:9443", "::1", "9443", true);
	check_endpoint("http://example.com/x", "example.com", "80", false);
	check_endpoint("http://127.0.0.1:8270", "127.0.0.1", "8270", false);

	const char *h, *p;
	bool s;
	struct http_client *c = http_client_create("ftp://example.com", NULL);
	assert_int_equal(http_client_endpoint(c, &h, &p, &s), -1);
	http_client_destroy(c);
	c = http_client_create("https://", NULL);
	assert_int_equal(http_client_endpoint(c, &h, &p, &s), -1);
	http_client_destroy(c);
}

/* The TLS layer refuses a CA file it cannot use before any byte is sent;
 * a peer that does not speak TLS fails the handshake, never a plain
 * fallback. */
static void test_tls_refusals(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct http_response r;
	char url[64];

	snprintf(url, sizeof url, "https://127.0.0.1:%d", port);
	struct http_client *c = http_client_create(url, NULL);
	assert_int_equal(http_client_set_tls(c, &tls_http_ops, "relative/ca.pem"), 0);
	assert_int_equal(http_client_request(c, "GET", "/", NULL, 2000, &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_non_null(strstr(err.msg, "absolute path"));
	assert_int_equal(http_client_set_tls(c, &tls_http_ops, "/nonexistent/ca.pem"), 0);
	assert_int_equal(http_client_request(c, "GET", "/", NULL, 2000, &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_non_null(strstr(err.msg, "/nonexistent/ca.pem"));
	/* the test server answers plain HTTP only: the handshake cannot finish */
	assert_int_equal(http_client_set_tls(c, &tls_http_ops, NULL), 0);
	assert_int_equal(http_client_request(c, "GET", "/", NULL, 1000, &r, &err), -1);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(err.msg, "TLS"));
	http_client_destroy(c);
}

static void test_url_escape(void **state)
{
	(void)state;
	char *e = http_url_escape("a b/c?d=é");
	assert_string_equal(e, "a%20b%2Fc%3Fd%3D%C3%A9");
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_post_with_body_and_token_reuses_connection),
		cmocka_unit_test(test_chunked_body),
		cmocka_unit_test(test_error_text_and_close_then_reconnect),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_refused_and_bad_url),
		cmocka_unit_test(test_https_urls),
		cmocka_unit_test(test_tls_refusals),
		cmocka_unit_test(test_url_escape),
	};
	return cmocka_run_group_tests_name("http_client", tests, setup, teardown);
}
