/* smtp_client.h: sending one plain-text mail over SMTP (RFC 5321), blocking,
 * for notifications: EHLO, AUTH PLAIN or LOGIN when a login is given (RFC
 * 4954), MAIL FROM, RCPT TO per recipient, DATA with the body's lines
 * dot-stuffed, QUIT.
 *
 * weir links no TLS library, so STARTTLS is refused with a clear error
 * rather than sending a password in clear to a server that expects TLS.
 * Run it off the event loop (a worker thread): every read and write waits
 * at most `timeout_ms`.  Errors never carry the password.
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
	bool starttls;        /* refused: no TLS here */
	const char *from;     /* the envelope and From: address */
	const char *const *to;
	size_t n_to;
	const char *subject; /* one line */
	const char *body;    /* text; "\n" line ends are sent as CRLF */
	long timeout_ms;     /* per read or write; 0: 30 s */
};

/* Sends it.  0 when the server accepted the message (250 after DATA), -1
 * with err: WEIR_E_INVALID for what the mail or its connection says
 * (STARTTLS, no host, a line break in a header), WEIR_E_UNAVAILABLE for
 * what the server did (refused, timed out, a 4xx/5xx reply, quoted). */
int smtp_send(const struct smtp_mail *m, struct weir_error *err);

/* The standard base64 of n bytes; caller frees.  NULL when out of memory. */
char *smtp_base64(const char *data, size_t n);

#endif
