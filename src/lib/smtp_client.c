/* smtp_client.c: one mail over SMTP (smtp_client.h).  A blocking socket
 * with send and receive timeouts (Linux applies the send timeout to
 * connect() too; through TLS a timeout reads as EAGAIN), one reply read at
 * a time: a reply is lines "NNN-text" ending with "NNN text".  TLS
 * (lib/tls.h) from the first byte (implicit, port 465) or after STARTTLS
 * (RFC 3207), then EHLO again, since what the server offers may change. */
#include "lib/smtp_client.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <nettle/base64.h>

#include "lib/clock.h"
#include "lib/strbuf.h"
#include "lib/tls.h"

struct smtp_conn {
	int fd;
	struct tls_conn *tls; /* NULL: plain */
	struct strbuf in;     /* bytes read, not yet consumed */
	char reply[512];      /* the last reply's last line, for errors */
	bool auth_plain, auth_login, offers_starttls;
	long timeout; /* ms, per read or write */
};

/* After EAGAIN: whether to try again.  Plain, EAGAIN is the socket's
 * timeout; through TLS it may also be a record GnuTLS consumed alone (a
 * TLS 1.3 session ticket), so the wait goes on until the timeout. */
static bool again(const struct smtp_conn *c, int64_t since)
{
	return c->tls && errno == EAGAIN && clock_mono_ms() - since < c->timeout;
}

char *smtp_base64(const char *data, size_t n)
{
	char *out = malloc(BASE64_ENCODE_RAW_LENGTH(n) + 1);

	if (!out)
		return NULL;
	base64_encode_raw(out, n, (const uint8_t *)data);
	out[BASE64_ENCODE_RAW_LENGTH(n)] = '\0';
	return out;
}

static int open_socket(const struct smtp_mail *m, long timeout_ms, struct weir_error *err)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL, *ai;
	struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
	char port[16];
	int fd = -1, saved = ECONNREFUSED, rc;

	snprintf(port, sizeof port, "%d", m->port > 0 ? m->port : 25);
	rc = getaddrinfo(m->host, port, &hints, &res);
	if (rc)
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "SMTP %s:%s: cannot resolve: %s",
		                      m->host, port, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		saved = errno == EINPROGRESS ? ETIMEDOUT : errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "SMTP %s:%s: cannot connect: %s",
		                      m->host, port, strerror(saved));
	return fd;
}

static int put(struct smtp_conn *c, const char *data, size_t n, struct weir_error *err)
{
	int64_t since = clock_mono_ms();

	while (n > 0) {
		ssize_t w =
		    c->tls ? tls_conn_send(c->tls, data, n) : send(c->fd, data, n, MSG_NOSIGNAL);
		if (w < 0 && (errno == EINTR || again(c, since)))
			continue;
		if (w <= 0)
			return weir_error_set(err, WEIR_E_UNAVAILABLE, "SMTP: sending: %s",
			                      w < 0 && errno == EAGAIN    ? "timed out"
			                      : c->tls && errno == EPROTO ? tls_conn_error(c->tls)
			                                                  : strerror(errno));
		data += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One reply; its code into *code.  Notes the AUTH mechanisms an EHLO
 * reply offers. */
static int get_reply(struct smtp_conn *c, int *code, struct weir_error *err)
{
	int64_t since = clock_mono_ms();

	for (;;) {
		char *nl = c->in.len ? memchr(c->in.buf, '\n', c->in.len) : NULL;
		if (!nl) {
			char tmp[4096];
			ssize_t r = c->tls ? tls_conn_recv(c->tls, tmp, sizeof tmp)
			                   : recv(c->fd, tmp, sizeof tmp, 0);
			if (r < 0 && (errno == EINTR || again(c, since)))
				continue;
			if (r <= 0)
				return weir_error_set(
				    err, WEIR_E_UNAVAILABLE, "SMTP: reading a reply: %s",
				    r == 0                      ? "the server closed the connection"
				    : errno == EAGAIN           ? "timed out"
				    : c->tls && errno == EPROTO ? tls_conn_error(c->tls)
				                                : strerror(errno));
			if (strbuf_add(&c->in, tmp, (size_t)r) < 0 || c->in.len > 65536)
				return weir_error_set(err, WEIR_E_UNAVAILABLE, "%s",
				                      "SMTP: a reply too long");
			continue;
		}
		size_t len = (size_t)(nl - c->in.buf) + 1;
		size_t l = len;
		while (l > 0 && (c->in.buf[l - 1] == '\n' || c->in.buf[l - 1] == '\r'))
			l--;
		snprintf(c->reply, sizeof c->reply, "%.*s", (int)l, c->in.buf);
		memmove(c->in.buf, c->in.buf + len, c->in.len - len);
		c->in.len -= len;
		c->in.buf[c->in.len] = '\0';
		if (strlen(c->reply) < 3 || c->reply[0] < '1' || c->reply[0] > '5')
			return weir_error_set(err, WEIR_E_UNAVAILABLE,
			                      "SMTP: not a reply: \"%.80s\"", c->reply);
		if (!strncmp(c->reply + 4, "AUTH", 4) || !strncmp(c->reply + 4, "auth", 4)) {
			c->auth_plain = c->auth_plain || strstr(c->reply + 8, "PLAIN");
			c->auth_login = c->auth_login || strstr(c->reply + 8, "LOGIN");
		}
		if (!strncasecmp(c->reply + 4, "STARTTLS", 8))
			c->offers_starttls = true;
		if (c->reply[3] != '-') {
			*code = atoi(c->reply);
			return 0;
		}
	}
}

/* Sends `line` (CRLF added; NULL: nothing) and reads the reply, which must
 * have code `want` (or want2).  `what` names the step in errors, never the
 * line (it may hold a credential). */
static int step(struct smtp_conn *c, const char *line, int want, int want2, const char *what,
                struct weir_error *err)
{
	int code = 0;

	if (line && (put(c, line, strlen(line), err) < 0 || put(c, "\r\n", 2, err) < 0))
		return -1;
	if (get_reply(c, &code, err) < 0)
		return -1;
	if (code != want && code != want2)
		return weir_error_set(err, WEIR_E_UNAVAILABLE,
		                      "SMTP %s: the server answered \"%s\"", what, c->reply);
	return 0;
}

/* TLS on the connection from here on, the handshake done within the
 * timeout (each blocked read or write already waits at most that long). */
static int start_tls(struct smtp_conn *c, const struct smtp_mail *m, long timeout,
                     struct weir_error *err)
{
	struct weir_error e = {0};
	int64_t deadline = clock_mono_ms() + timeout;
	int rc;

	/* what came after STARTTLS's answer in clear is not the server's
	 * (RFC 3207 5: a command injected before TLS) */
	if (c->in.len)
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "%s",
		                      "SMTP: the server sent data before the TLS handshake");
	c->tls = tls_conn_create(c->fd, m->host, m->ca_file, &e);
	if (!c->tls)
		return weir_error_set(err, e.kind, "SMTP %s: %s", m->host, e.msg);
	while ((rc = tls_conn_handshake(c->tls, &e)) == 1)
		if (clock_mono_ms() >= deadline) {
			weir_error_set(&e, WEIR_E_UNAVAILABLE, "%s", "TLS handshake: timed out");
			rc = -1;
			break;
		}
	if (rc < 0)
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "SMTP %s: %s", m->host, e.msg);
	return 0;
}

/* EHLO, and STARTTLS with EHLO again when asked for: what the server
 * offered in clear is forgotten (RFC 3207 4.2). */
static int hello(struct smtp_conn *c, const struct smtp_mail *m, long timeout,
                 struct weir_error *err)
{
	if (step(c, "EHLO weir", 250, 250, "EHLO", err) < 0)
		return -1;
	if (!m->starttls || c->tls)
		return 0;
	if (!c->offers_starttls)
		return weir_error_set(err, WEIR_E_UNAVAILABLE,
		                      "SMTP %s: \"starttls\": true but the server does not offer "
		                      "STARTTLS",
		                      m->host);
	if (step(c, "STARTTLS", 220, 220, "STARTTLS", err) < 0 || start_tls(c, m, timeout, err) < 0)
		return -1;
	c->auth_plain = c->auth_login = c->offers_starttls = false;
	return step(c, "EHLO weir", 250, 250, "EHLO (after STARTTLS)", err);
}

static int authenticate(struct smtp_conn *c, const struct smtp_mail *m, struct weir_error *err)
{
	const char *pw = m->password ? m->password : "";
	int rc = -1;

	if (c->auth_plain) {
		size_t ll = strlen(m->login), pl = strlen(pw);
		char *raw = malloc(ll + pl + 2), *b64 = NULL, *line = NULL;
		if (raw) {
			raw[0] = '\0';
			memcpy(raw + 1, m->login, ll);
			raw[ll + 1] = '\0';
			memcpy(raw + ll + 2, pw, pl);
			b64 = smtp_base64(raw, ll + pl + 2);
			memset(raw, 0, ll + pl + 2);
		}
		if (b64 && asprintf(&line, "AUTH PLAIN %s", b64) >= 0) {
			rc = step(c, line, 235, 235, "AUTH PLAIN", err);
			memset(line, 0, strlen(line));
		} else {
			weir_error_set(err, WEIR_E_INTERNAL, "%s", "out of memory");
		}
		if (b64)
			memset(b64, 0, strlen(b64));
		free(raw);
		free(b64);
		free(line);
		return rc;
	}
	if (!c->auth_login)
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "%s",
		                      "SMTP: a login is set but the server offers no AUTH PLAIN or "
		                      "LOGIN (does it require TLS first?)");
	char *u = smtp_base64(m->login, strlen(m->login));
	char *p = smtp_base64(pw, strlen(pw));
	if (!u || !p)
		weir_error_set(err, WEIR_E_INTERNAL, "%s", "out of memory");
	else if (step(c, "AUTH LOGIN", 334, 334, "AUTH LOGIN", err) == 0 &&
	         step(c, u, 334, 334, "AUTH LOGIN (user)", err) == 0)
		rc = step(c, p, 235, 235, "AUTH LOGIN", err);
	if (p)
		memset(p, 0, strlen(p));
	free(u);
	free(p);
	return rc;
}

/* The message: headers, a blank line, the body with CRLF line ends and
 * lines that start with '.' doubled (RFC 5321 4.5.2), the final ".". */
static int message(struct strbuf *b, const struct smtp_mail *m)
{
	char date[64];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
	strbuf_addf(b, "From: %s\r\nTo: ", m->from);
	for (size_t i = 0; i < m->n_to; i++)
		strbuf_addf(b, "%s%s", i ? ", " : "", m->to[i]);
	strbuf_addf(b,
	            "\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\n"
	            "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n"
	            "\r\n",
	            m->subject ? m->subject : "", date);
	for (const char *s = m->body ? m->body : ""; *s;) {
		size_t n = strcspn(s, "\r\n");
		if (s[0] == '.')
			strbuf_add(b, ".", 1);
		strbuf_add(b, s, n);
		strbuf_add(b, "\r\n", 2);
		s += n;
		if (*s == '\r')
			s++;
		if (*s == '\n')
			s++;
	}
	strbuf_add(b, ".\r\n", 3);
	return b->failed ? -1 : 0;
}

static bool one_line(const char *s)
{
	return !s || !strpbrk(s, "\r\n");
}

int smtp_send(const struct smtp_mail *m, struct weir_error *err)
{
	struct smtp_conn c = {.fd = -1, .in = STRBUF_INIT};
	struct strbuf msg = STRBUF_INIT;
	long timeout = m->timeout_ms > 0 ? m->timeout_ms : 30000;
	c.timeout = timeout;
	char line[600];
	int rc = -1;

	if (!m->host || !*m->host)
		return weir_error_set(err, WEIR_E_INVALID, "%s",
		                      "SMTP: the connection has no host");
	if (!m->from || !*m->from || !m->n_to)
		return weir_error_set(err, WEIR_E_INVALID, "%s",
		                      "SMTP: expected a from address and at least one recipient");
	if (!one_line(m->from) || !one_line(m->subject) || !one_line(m->login))
		return weir_error_set(err, WEIR_E_INVALID, "%s",
		                      "SMTP: from, subject and login must be one line each");
	for (size_t i = 0; i < m->n_to; i++)
		if (!one_line(m->to[i]))
			return weir_error_set(err, WEIR_E_INVALID, "%s",
			                      "SMTP: a recipient must be one line");
	if ((c.fd = open_socket(m, timeout, err)) < 0)
		goto out;
	if ((m->ssl || (!m->starttls && m->port == 465)) && start_tls(&c, m, timeout, err) < 0)
		goto out;
	if (step(&c, NULL, 220, 220, "greeting", err) < 0 || hello(&c, m, timeout, err) < 0)
		goto out;
	if (m->login && *m->login && authenticate(&c, m, err) < 0)
		goto out;
	snprintf(line, sizeof line, "MAIL FROM:<%s>", m->from);
	if (step(&c, line, 250, 250, "MAIL FROM", err) < 0)
		goto out;
	for (size_t i = 0; i < m->n_to; i++) {
		snprintf(line, sizeof line, "RCPT TO:<%s>", m->to[i]);
		if (step(&c, line, 250, 251, "RCPT TO", err) < 0)
			goto out;
	}
	if (step(&c, "DATA", 354, 354, "DATA", err) < 0)
		goto out;
	if (message(&msg, m) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s", "out of memory");
		goto out;
	}
	if (put(&c, msg.buf, msg.len, err) < 0 || step(&c, NULL, 250, 250, "the message", err) < 0)
		goto out;
	rc = 0;
	/* QUIT's answer changes nothing: the message is accepted */
	if (put(&c, "QUIT\r\n", 6, NULL) == 0) {
		int code;
		get_reply(&c, &code, NULL);
	}
out:
	tls_conn_destroy(c.tls);
	if (c.fd >= 0)
		close(c.fd);
	strbuf_release(&c.in);
	strbuf_release(&msg);
	return rc;
}
