/* smtp_client.h: sending one plain-text mail over SMTP (RFC 5321), blocking,
 * for notifications: EHLO, STARTTLS and EHLO again when asked for (RFC
 * 3207), AUTH PLAIN or LOGIN when a login is given (RFC 4954), MAIL FROM,
 * RCPT TO per recipient, DATA with the body's lines dot-stuffed, QUIT.
 *
 * TLS (lib/tls.h: the server's certificate verified against the system's
 * trust store and ca_file, its name against host) is either implicit (ssl,
 * or port 465 without starttls) or STARTTLS.  With starttls the mail fails
 * unless the server offers it, and nothing, the password least of all, is
 * sent before the handshake.  Run it off the event loop (a worker thread): every read and write
 * waits at most `timeout_ms`.  Errors never carry the password.
 */
#ifndef WEIR_LIB_SMTP_CLIENT_H
#define WEIR_LIB_SMTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

struct smtp_mail {
	const char *host;     /* required */
	int port;             /* 0: 25 */
	const char *login;    /* NULL or "": no AUTH */
	const char *password; /* with login */
	bool starttls;        /* STARTTLS after EHLO, required */
	bool ssl;             /* TLS from the first byte (also port 465) */
	const char *ca_file;  /* NULL: the system's trust store only */
	const char *from;     /* the envelope and From: address */
	const char *const *to;
	size_t n_to;
	const char *subject; /* one line */
	const char *body;    /* text; "\n" line ends are sent as CRLF */
	long timeout_ms;     /* per read or write; 0: 30 s */
};

/* Sends it.  0 when the server accepted the message (250 after DATA), -1
 * with err: WEIR_E_INVALID for what the mail or its connection says
 * (no host, a line break in a header, an unreadable ca_file),
 * WEIR_E_UNAVAILABLE for what the server did (refused, timed out, a 4xx/5xx
 * reply, quoted, no STARTTLS offered, a certificate that does not verify). */
int smtp_send(const struct smtp_mail *m, struct weir_error *err);

/* The standard base64 of n bytes; caller frees.  NULL when out of memory. */
char *smtp_base64(const char *data, size_t n);

#endif
