/* http_client.c: blocking HTTP requests over libcurl, one handle reused. */
#include "lib/http_client.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

struct http_client {
	CURL *curl;
	char *base_url;
	char *auth_header;
};

struct body_buffer {
	char *data;
	size_t len, cap;
};

static int curl_ready;

struct http_client *http_client_create(const char *base_url, const char *token)
{
	struct http_client *c;

	if (!curl_ready) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		curl_ready = 1;
	}
	c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->curl = curl_easy_init();
	c->base_url = strdup(base_url);
	if (token) {
		size_t n = strlen(token) + 32;
		c->auth_header = malloc(n);
		if (c->auth_header)
			snprintf(c->auth_header, n, "Authorization: Bearer %s", token);
	}
	if (!c->curl || !c->base_url || (token && !c->auth_header)) {
		http_client_destroy(c);
		return NULL;
	}
	size_t bl = strlen(c->base_url);
	while (bl > 0 && c->base_url[bl - 1] == '/')
		c->base_url[--bl] = '\0';
	return c;
}

void http_client_destroy(struct http_client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->base_url);
	free(c->auth_header);
	free(c);
}

static size_t collect_body(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct body_buffer *b = arg;
	size_t n = size * nmemb;
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 4096;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		char *nd = realloc(b->data, ncap);
		if (!nd)
			return 0;
		b->data = nd;
		b->cap = ncap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

static struct curl_slist *prepare(struct http_client *c, const char *method, const char *path,
				  const char *json_body, long timeout_ms)
{
	struct curl_slist *headers = NULL;
	size_t n = strlen(c->base_url) + strlen(path) + 1;
	char *url = malloc(n);

	if (!url)
		return NULL;
	snprintf(url, n, "%s%s", c->base_url, path);
	curl_easy_reset(c->curl);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	free(url); /* curl copies the URL */
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c->curl, CURLOPT_TCP_NODELAY, 1L);
	headers = curl_slist_append(headers, "Accept: application/json");
	/* Keep curl from sending "Expect: 100-continue" and waiting for it. */
	headers = curl_slist_append(headers, "Expect:");
	if (c->auth_header)
		headers = curl_slist_append(headers, c->auth_header);
	if (json_body) {
		headers = curl_slist_append(headers, "Content-Type: application/json");
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, json_body);
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(json_body));
	} else if (!strcmp(method, "POST")) {
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, 0L);
	}
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, headers);
	return headers;
}

int http_client_request(struct http_client *c, const char *method, const char *path,
			const char *json_body, long timeout_ms, struct http_response *resp,
			struct weir_error *err)
{
	struct body_buffer b = {0};
	struct curl_slist *headers;
	CURLcode rc;

	memset(resp, 0, sizeof *resp);
	headers = prepare(c, method, path, json_body, timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, collect_body);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(c->curl);
	curl_slist_free_all(headers);
	if (rc != CURLE_OK) {
		free(b.data);
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "%s %s%s: %s", method, c->base_url, path,
				      curl_easy_strerror(rc));
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &resp->status);
	resp->body = b.data ? b.data : strdup("");
	resp->len = b.len;
	return 0;
}

struct stream_state {
	http_chunk_fn on_chunk;
	void *arg;
};

static size_t pass_chunk(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct stream_state *s = arg;
	size_t n = size * nmemb;
	return s->on_chunk(ptr, n, s->arg) == 0 ? n : 0;
}

int http_client_stream(struct http_client *c, const char *path, http_chunk_fn on_chunk, void *arg,
		       long *status, struct weir_error *err)
{
	struct stream_state s = {on_chunk, arg};
	struct curl_slist *headers;
	CURLcode rc;

	*status = 0;
	headers = prepare(c, "GET", path, NULL, 0);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, pass_chunk);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &s);
	rc = curl_easy_perform(c->curl);
	curl_slist_free_all(headers);
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, status);
	if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR)
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "GET %s%s: %s", c->base_url, path,
				      curl_easy_strerror(rc));
	return 0;
}

void http_response_release(struct http_response *resp)
{
	if (!resp)
		return;
	free(resp->body);
	resp->body = NULL;
	resp->len = 0;
}

const char *http_response_error_text(struct http_response *resp)
{
	static __thread char message[1024];
	json_t *j;

	if (!resp->body)
		return "";
	j = json_loadb(resp->body, resp->len, 0, NULL);
	if (j) {
		const char *e = json_string_value(json_object_get(j, "error"));
		if (e) {
			snprintf(message, sizeof message, "%s", e);
			json_decref(j);
			return message;
		}
		json_decref(j);
	}
	return resp->body;
}

char *http_url_escape(const char *s)
{
	char *esc = curl_easy_escape(NULL, s, 0);
	char *out = esc ? strdup(esc) : NULL;
	curl_free(esc);
	return out;
}
